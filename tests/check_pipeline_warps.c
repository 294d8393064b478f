/*
 * check_pipeline_warps.c - the mma.sync kernel's recorded pipeline: the
 * check of its own rules (model/pipeline_warps.h) passes a schedule
 * that keeps them and catches each way of breaking them, the Chrome
 * trace of a warp recording reads back with its kernel and
 * multiprocessors, and the viewer draws one row per warp.
 */
#include "config.h"

#include "testutil.h"
#include "app/pipeline_json.h"
#include "model/pipeline.h"
#include "model/pipeline_warps.h"
#include "ui/ui_pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W 4		/* warps */
#define NT 5		/* key tiles a block */
#define CTAS 2
#define CAP (CTAS * W * (11 * NT + 8))

struct sched {
	struct pipeline_event ev[CAP];
	size_t n;
	double t[W];		/* each warp's clock */
	double land_k[NT][W], land_v[NT][W];
};

static void
put(struct sched *s, int cta, int w, int kind, int j, int stage, int round,
    double begin, double end)
{
	struct pipeline_event *e = &s->ev[s->n++];

	ck_assert_uint_le(s->n, CAP);
	e->cta = cta;
	e->role = w;
	e->kind = kind;
	e->wg = w;
	e->i = CTAS - 1 - cta;
	e->j = j;
	e->stage = stage;
	e->round = round;
	e->begin = begin;
	e->end = end;
}

/* A span of d clocks of warp w from its clock on. */
static void
step(struct sched *s, int cta, int w, int kind, int j, int stage, int round,
    double d)
{
	put(s, cta, w, kind, j, stage, round, s->t[w], s->t[w] + d);
	s->t[w] += d;
}

/* __syncthreads: every warp leaves when the last one came. */
static void
barrier(struct sched *s, int cta, int j)
{
	double last = 0;
	int w;

	for (w = 0; w < W; w++)
		if (s->t[w] > last)
			last = s->t[w];
	for (w = 0; w < W; w++) {
		put(s, cta, w, PIPELINE_BARRIER, j, -1, 0, s->t[w], last + 4);
		s->t[w] = last + 4;
	}
}

/* The copies of tile j by every warp (they land 300 clocks later). */
static void
copy(struct sched *s, int cta, int j)
{
	int w;

	for (w = 0; w < W; w++) {
		step(s, cta, w, PIPELINE_COPY_K, j, j & 1, j >> 1, 10);
		s->land_k[j][w] = s->t[w] + 300;
		step(s, cta, w, PIPELINE_COPY_V, j, j & 1, j >> 1, 10);
		s->land_v[j][w] = s->t[w] + 300;
	}
}

static void
wait_for(struct sched *s, int cta, int w, int kind, int j, double land)
{
	const double end = land > s->t[w] ? land : s->t[w];

	put(s, cta, w, kind, j, j & 1, j >> 1, s->t[w], end);
	s->t[w] = end;
}

/*
 * The kernel's order (gpu/fast.cu) for CTAS blocks, warps a little
 * apart in speed; early: the loads of tile j + 1 before the release and
 * the barrier (the recording build's planted fault).
 */
static void
schedule(struct sched *s, int early)
{
	int cta, j, w;

	memset(s, 0, sizeof *s);
	for (cta = 0; cta < CTAS; cta++) {
		for (w = 0; w < W; w++) {
			s->t[w] = 5000.0 * cta + 3 * w;
			step(s, cta, w, PIPELINE_COPY_Q, -1, 0, 0, 10);
		}
		copy(s, cta, 0);
		for (j = 0; j < NT; j++) {
			for (w = 0; w < W; w++)
				wait_for(s, cta, w, PIPELINE_WAIT_FULL_K, j,
				    s->land_k[j][w]);
			if (early && j + 1 < NT)
				copy(s, cta, j + 1);
			for (w = 0; w < W && j > 0; w++) {
				step(s, cta, w, PIPELINE_RELEASE_K, j - 1,
				    (j - 1) & 1, (j - 1) >> 1, 0);
				step(s, cta, w, PIPELINE_RELEASE_V, j - 1,
				    (j - 1) & 1, (j - 1) >> 1, 0);
			}
			barrier(s, cta, j);
			if (!early && j + 1 < NT)
				copy(s, cta, j + 1);
			for (w = 0; w < W; w++) {
				step(s, cta, w, PIPELINE_ISSUE_QK, j, j & 1,
				    j >> 1, 100 + 7 * w);
				step(s, cta, w, PIPELINE_SOFTMAX, j, -1, 0, 150);
				wait_for(s, cta, w, PIPELINE_WAIT_FULL_V, j,
				    s->land_v[j][w]);
			}
			barrier(s, cta, j);
			for (w = 0; w < W; w++)
				step(s, cta, w, PIPELINE_ISSUE_PV, j, j & 1,
				    j >> 1, 120 + 5 * w);
		}
		barrier(s, cta, -1);
		for (w = 0; w < W; w++)
			step(s, cta, w, PIPELINE_EPILOGUE, -1, -1, 0, 200);
	}
}

static struct pipeline_event *
find(struct sched *s, int cta, int w, int kind, int round)
{
	size_t x;

	for (x = 0; x < s->n; x++)
		if (s->ev[x].cta == cta && s->ev[x].role == w &&
		    s->ev[x].kind == kind && s->ev[x].round == round)
			return &s->ev[x];
	return NULL;
}

/* The kernel's order keeps every rule; the planted one breaks the
 * refill rule, by every warp in every block. */
START_TEST(test_rules_hold)
{
	static struct sched s;
	char why[256];
	int bad;

	schedule(&s, 0);
	ck_assert_msg(pipeline_check_warps(s.ev, s.n, W, why, sizeof why) == 0,
	    "%s", why);
	schedule(&s, 1);
	bad = pipeline_check_warps(s.ev, s.n, W, why, sizeof why);
	ck_assert_int_gt(bad, 0);
	ck_assert_msg(strstr(why, "refilled K stage 0 (round 1)") != NULL &&
	    strstr(why, "before warp 0 released it") != NULL, "%s", why);
}
END_TEST

/* Each rule, broken once on the kernel's order, is caught by name. */
START_TEST(test_check_catches)
{
	static struct sched s;
	struct pipeline_event *e, *l;
	char why[256];
	double keep;

	schedule(&s, 0);

	/* warp 2 reads K of round 1 before warp 3's share landed */
	e = find(&s, 1, 2, PIPELINE_ISSUE_QK, 1);
	l = find(&s, 1, 3, PIPELINE_WAIT_FULL_K, 1);
	ck_assert(e != NULL && l != NULL && e->stage == l->stage);
	keep = l->end;
	l->end = e->begin + 1;
	ck_assert_int_gt(pipeline_check_warps(s.ev, s.n, W, why, sizeof why),
	    0);
	ck_assert_msg(strstr(why, "before warp 3's copy landed") != NULL, "%s",
	    why);
	l->end = keep;

	/* warp 1 never waited for its share of V in round 0 */
	l = find(&s, 0, 1, PIPELINE_WAIT_FULL_V, 0);
	l->kind = PIPELINE_SOFTMAX;
	ck_assert_int_gt(pipeline_check_warps(s.ev, s.n, W, why, sizeof why),
	    0);
	ck_assert_msg(strstr(why, "warp 1 never waited") != NULL, "%s", why);
	l->kind = PIPELINE_WAIT_FULL_V;

	/* warp 0 releases V of round 0 before its P V is done */
	e = find(&s, 0, 0, PIPELINE_RELEASE_V, 0);
	l = find(&s, 0, 0, PIPELINE_ISSUE_PV, 0);
	keep = e->end;
	e->begin = e->end = l->end - 1;
	ck_assert_int_gt(pipeline_check_warps(s.ev, s.n, W, why, sizeof why),
	    0);
	ck_assert_msg(strstr(why, "before its read ended") != NULL, "%s", why);
	e->begin = e->end = keep;

	/* warp 3 refills V of stage 0 before warp 1 released round 0 */
	e = find(&s, 0, 3, PIPELINE_COPY_V, 1);
	l = find(&s, 0, 1, PIPELINE_RELEASE_V, 0);
	keep = e->begin;
	e->begin = l->end - 1;
	ck_assert_int_gt(pipeline_check_warps(s.ev, s.n, W, why, sizeof why),
	    0);
	ck_assert_msg(strstr(why, "before warp 1 released it") != NULL, "%s",
	    why);
	e->begin = keep;

	/* a release that never happened */
	l = find(&s, 1, 2, PIPELINE_RELEASE_K, 1);
	l->kind = PIPELINE_EPILOGUE;
	ck_assert_int_gt(pipeline_check_warps(s.ev, s.n, W, why, sizeof why),
	    0);
	ck_assert_msg(strstr(why, "before warp 2 released round 1") != NULL,
	    "%s", why);
	l->kind = PIPELINE_RELEASE_K;

	/* a role that is no warp */
	s.ev[3].role = W;
	ck_assert_int_gt(pipeline_check_warps(s.ev, s.n, W, why, sizeof why),
	    0);
	ck_assert_msg(strstr(why, "not a warp") != NULL, "%s", why);
	s.ev[3].role = s.ev[3].wg;
	ck_assert_int_eq(pipeline_check_warps(s.ev, s.n, W, why, sizeof why),
	    0);
}
END_TEST

static void
meta_for(struct pipeline_json_meta *m)
{
	memset(m, 0, sizeof *m);
	snprintf(m->source, sizeof m->source, "the test's warps");
	snprintf(m->kernel, sizeof m->kernel, "fast");
	m->cfg.d = 128;
	m->cfg.br = 128;
	m->cfg.bc = 32;
	m->cfg.consumers = W;
	m->cfg.stages = 2;
	m->cfg.tq = m->cfg.tk = 256;
	m->cfg.ctas = CTAS;
	m->clock_ghz = 1.98;
	m->have_sm = 1;
	m->sm[0] = 17;
	m->sm[1] = 3;
}

/* The trace of a warp recording: threads named by warp, the kernel and
 * the multiprocessors read back, and the warps' check applies. */
START_TEST(test_json_round_trip)
{
	static struct sched s;
	struct pipeline_json_meta m, back;
	struct pipeline_event *ev;
	char dir[] = "/tmp/check_pipeline_warps.XXXXXX", path[64], err[256];
	char *text;
	size_t nev, len, x;

	schedule(&s, 0);
	meta_for(&m);
	ck_assert_int_eq(pipeline_json_format(s.ev, s.n, &m, &text, &len, err,
	    sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(text, "\"kernel\": \"fast\""));
	ck_assert_ptr_nonnull(strstr(text, "\"name\": \"warp 3\""));
	ck_assert_ptr_null(strstr(text, "\"name\": \"producer\""));
	ck_assert_ptr_nonnull(strstr(text, "block 0 (row block 1, SM 17)"));
	free(text);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/run.json", dir);
	ck_assert_int_eq(pipeline_json_write(path, s.ev, s.n, &m, err,
	    sizeof err), 0);
	ck_assert_msg(pipeline_json_read(path, &ev, &nev, &back, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(nev, s.n);
	ck_assert_str_eq(back.kernel, "fast");
	ck_assert(pipeline_json_warps(&back));
	ck_assert_int_eq(back.have_sm, 1);
	ck_assert_int_eq(back.sm[0], 17);
	ck_assert_int_eq(back.sm[1], 3);
	ck_assert_int_eq(back.cfg.consumers, W);
	for (x = 0; x < nev; x++) {
		ck_assert_int_eq(ev[x].kind, s.ev[x].kind);
		ck_assert_int_eq(ev[x].role, s.ev[x].role);
		ck_assert_double_eq_tol(ev[x].begin, s.ev[x].begin, 1e-5);
	}
	ck_assert_int_eq(pipeline_check_warps(ev, nev, W, err, sizeof err), 0);
	free(ev);
	unlink(path);

	/* a kernel this build does not know is refused by line */
	m.kernel[0] = 'x';
	ck_assert_int_eq(pipeline_json_write(path, s.ev, s.n, &m, err,
	    sizeof err), 0);
	ck_assert_int_eq(pipeline_json_read(path, &ev, &nev, &back, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "kernel this flashstep does not know") !=
	    NULL, "%s", err);
	unlink(path);
	rmdir(dir);
}
END_TEST

static int
screen_has(const struct ui_grid *g, const char *want)
{
	char line[256];
	int y;

	for (y = 0; y < g->h; y++)
		if (strstr(ui_grid_line(g, y, line, sizeof line), want) != NULL)
			return 1;
	return 0;
}

/* The cursor forward to the first event of warp w of this kind. */
static void
step_to(struct ui_pipeline *v, int w, int kind, int j)
{
	while (v->cur + 1 < v->nev && !(v->ev[v->cur].role == w &&
	    v->ev[v->cur].kind == kind && v->ev[v->cur].j == j))
		ui_pipeline_key(v, 'n');
	ck_assert_int_eq(v->ev[v->cur].kind, kind);
}

/* The viewer on a warp recording: a row per warp and none for the
 * wgmma kernel's roles, the multiprocessor, the barrier's legend; the
 * events in time order across the warps; a buffer filling until every
 * warp's share landed. */
START_TEST(test_viewer)
{
	static struct sched s;
	struct pipeline_json_meta m;
	struct ui_pipeline v;
	struct ui_grid g;
	char err[256];

	schedule(&s, 0);
	pipeline_warps_sort(s.ev, s.n);
	meta_for(&m);
	memset(&g, 0, sizeof g);
	ck_assert_int_eq(ui_grid_resize(&g, 80, 24, err, sizeof err), 0);
	ui_pipeline_init(&v, s.ev, s.n, &m);
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "mma.sync: d = 128, Br = 128, Bc = 32, 4 warps"));
	ck_assert(screen_has(&g, "warp 0"));
	ck_assert(screen_has(&g, "warp 3"));
	ck_assert(!screen_has(&g, "producer"));
	ck_assert(!screen_has(&g, "consumer"));
	ck_assert(screen_has(&g, "block 1 of 2, row block 1, SM 17"));
	ck_assert(screen_has(&g, "# barrier"));
	ck_assert(screen_has(&g, "event 1 of "));
	ck_assert(screen_has(&g, "warp 0, copy Q"));
	ui_pipeline_key(&v, 'n');	/* sorted: warp 1 began next */
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "event 2 of "));
	ck_assert(screen_has(&g, "warp 1, copy Q"));
	ui_pipeline_key(&v, 'p');
	ui_pipeline_key(&v, 'N');
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "warp 0, copy K, tile (1,0), stage 0"));
	/* K_0 and V_0 issued by every warp, landed for none yet */
	step_to(&v, 0, PIPELINE_COPY_V, 0);
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "[0 K filling j0, V filling j0]"));
	/* after the barrier every share of K_0 landed, none released */
	step_to(&v, 0, PIPELINE_ISSUE_QK, 0);
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "[0 K full j0 0/4, V filling j0]"));
	/* the warps leave the barrier together: warp 1's S is next */
	ui_pipeline_key(&v, 'n');
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "warp 1, issue QK, tile (1,0)"));
	ui_pipeline_key(&v, 'b');
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "block 2 of 2, row block 0, SM 3"));
	ui_grid_free(&g);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("pipeline_warps");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_rules_hold);
	tcase_add_test(tc, test_check_catches);
	tcase_add_test(tc, test_json_round_trip);
	tcase_add_test(tc, test_viewer);
	suite_add_tcase(s, tc);
	return s;
}
