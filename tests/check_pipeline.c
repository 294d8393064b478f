/*
 * check_pipeline.c - the wgmma pipeline model: its schedules keep the
 * kernel's dependencies, the dependency check catches broken event
 * lists, the what-if answers go the way the kernel's design says, and
 * the Chrome trace reads back.  tests/planted_pipeline.sh plants a fault
 * in the model or the check for each claim and shows these tests fail.
 */
#include "config.h"

#include "testutil.h"
#include "app/pipeline_json.h"
#include "model/pipeline.h"
#include "model/pipeline_fit.h"
#include "ui/ui_pipeline.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The model's run of one configuration (d, Tq = Tk = t, causal), with
 * the changes asked for; ck_asserts that it ran. */
static void
run_model(struct pipeline_run *run, int d, int t, int causal, int stages,
    int pingpong, int overlap, int ctas)
{
	struct pipeline_config c;
	struct pipeline_costs k;
	char err[256];

	ck_assert_int_eq(pipeline_config_default(&c, d, t, t, causal, err,
	    sizeof err), 0);
	if (stages > 0)
		c.stages = stages;
	c.pingpong = pingpong;
	c.overlap = overlap;
	c.ctas = ctas;
	pipeline_costs_nominal(&c, &k);
	ck_assert_msg(pipeline_model(&c, &k, run, err, sizeof err) == 0,
	    "model d = %d T = %d: %s", d, t, err);
}

static size_t
count(const struct pipeline_run *r, int cta, int role, int kind)
{
	size_t x, n = 0;

	for (x = 0; x < r->nev; x++)
		if (r->ev[x].cta == cta && (role < 0 || r->ev[x].role == role) &&
		    r->ev[x].kind == kind)
			n++;
	return n;
}

/*
 * Every schedule the model makes keeps the dependencies, over both
 * head widths, masks, 1 to 4 stages and the three schedules; and it
 * does every copy, GEMM and turn the kernel does, no more.
 */
START_TEST(test_dependencies_hold)
{
	static const int ds[] = { 64, 128 }, ts[] = { 200, 1024 };
	int di, ti, causal, st, sched, cta, c;
	char why[256];

	for (di = 0; di < 2; di++)
	for (ti = 0; ti < 2; ti++)
	for (causal = 0; causal < 2; causal++)
	for (st = 1; st <= 4; st++)
	for (sched = 0; sched < 3; sched++) {
		/* 0: ping-pong and overlap, 1: overlap, 2: neither */
		const int pp = sched == 0, ov = sched < 2;
		struct pipeline_run r;
		int bad;

		run_model(&r, ds[di], ts[ti], causal, st, pp, ov, 3);
		bad = pipeline_check(r.ev, r.nev, r.cfg.consumers, pp, why,
		    sizeof why);
		ck_assert_msg(bad == 0, "d %d T %d causal %d stages %d sched "
		    "%d: %d broken: %s", ds[di], ts[ti], causal, st, sched, bad,
		    why);
		for (cta = 0; cta < r.ncta; cta++) {
			const size_t nt = (size_t)r.cta_nt[cta];

			ck_assert_uint_eq(count(&r, cta, PIPELINE_PRODUCER,
			    PIPELINE_COPY_K), nt);
			ck_assert_uint_eq(count(&r, cta, PIPELINE_PRODUCER,
			    PIPELINE_COPY_V), nt);
			ck_assert_uint_eq(count(&r, cta, PIPELINE_TENSOR,
			    PIPELINE_GEMM_QK), nt * r.cfg.consumers);
			ck_assert_uint_eq(count(&r, cta, PIPELINE_TENSOR,
			    PIPELINE_GEMM_PV), nt * r.cfg.consumers);
			ck_assert_uint_eq(count(&r, cta, -1,
			    PIPELINE_RELEASE_K), nt * r.cfg.consumers);
			for (c = 0; c < r.cfg.consumers; c++)
				/* Tc + 1 turns a work item, and consumer 0
				 * takes back the last pass */
				ck_assert_uint_eq(count(&r, cta,
				    PIPELINE_CONSUMER + c, PIPELINE_WAIT_TURN),
				    pp ? nt + 1 + (c == 0) : 0);
			ck_assert(r.cta_end[cta] > 0);
		}
		pipeline_run_free(&r);
	}
}
END_TEST

/* The first event of a kind (and round, if >= 0) in r, or NULL. */
static struct pipeline_event *
find(struct pipeline_run *r, int kind, int round)
{
	size_t x;

	for (x = 0; x < r->nev; x++)
		if (r->ev[x].kind == kind && (round < 0 ||
		    r->ev[x].round == round))
			return &r->ev[x];
	return NULL;
}

/*
 * The check is shown failing on each kind of broken list: a read before
 * the copy landed, a stage refilled before its release (the recording's
 * planted fault), a release missing, a turn taken before it was passed
 * or never passed; and passing the turns as the recordings stamp them
 * (the wait's own clock before the pass, the next step after it).
 */
START_TEST(test_check_catches)
{
	struct pipeline_run r;
	struct pipeline_event *e, *land;
	char why[256];
	size_t x;

	run_model(&r, 128, 1024, 0, 2, 1, 1, 1);
	ck_assert_int_eq(pipeline_check(r.ev, r.nev, 2, 1, why, sizeof why), 0);

	/* a consumer's wait on K ends before K landed */
	land = find(&r, PIPELINE_COPY_K, 1);
	for (x = 0; x < r.nev; x++)
		if (r.ev[x].kind == PIPELINE_WAIT_FULL_K &&
		    r.ev[x].stage == land->stage && r.ev[x].round == 1)
			break;
	ck_assert(x < r.nev);
	e = &r.ev[x];
	{
		const double keep = e->end;

		e->end = land->end - 1;
		ck_assert_int_gt(pipeline_check(r.ev, r.nev, 2, 1, why,
		    sizeof why), 0);
		ck_assert_ptr_nonnull(strstr(why, "before the copy landed"));
		e->end = keep;
	}

	/* stage reused before release: round 1's copy begins before the
	 * last release of round 0 */
	e = find(&r, PIPELINE_COPY_V, 1);
	ck_assert_ptr_nonnull(e);
	{
		const double keep = e->begin;
		struct pipeline_event *rel = NULL;

		for (x = 0; x < r.nev; x++)
			if (r.ev[x].kind == PIPELINE_RELEASE_V &&
			    r.ev[x].stage == e->stage && r.ev[x].round == 0 &&
			    (rel == NULL || r.ev[x].end > rel->end))
				rel = &r.ev[x];
		ck_assert_ptr_nonnull(rel);
		e->begin = rel->end - 1;
		ck_assert_int_gt(pipeline_check(r.ev, r.nev, 2, 1, why,
		    sizeof why), 0);
		ck_assert_ptr_nonnull(strstr(why, "before its last release"));
		e->begin = keep;
	}

	/* a release that came before its read was done: the wait for P V
	 * of round 0 ends after round 1's copy began */
	e = find(&r, PIPELINE_COPY_V, 1);
	for (x = 0; x < r.nev; x++)
		if (r.ev[x].kind == PIPELINE_WAIT_PV &&
		    r.ev[x].stage == e->stage && r.ev[x].round == 0)
			break;
	ck_assert(x < r.nev);
	{
		const double keep = r.ev[x].end;

		r.ev[x].end = e->begin + 1;
		ck_assert_int_gt(pipeline_check(r.ev, r.nev, 2, 1, why,
		    sizeof why), 0);
		ck_assert_ptr_nonnull(strstr(why, "before the GEMM reading"));
		r.ev[x].end = keep;
	}

	/* a release that never happened */
	e = find(&r, PIPELINE_RELEASE_K, 0);
	e->kind = PIPELINE_SOFTMAX;
	ck_assert_int_gt(pipeline_check(r.ev, r.nev, 2, 1, why, sizeof why), 0);
	ck_assert_ptr_nonnull(strstr(why, "of 2 consumers released"));
	e->kind = PIPELINE_RELEASE_K;

	/* the turns: consumer 1's turn 1 is its wait for turn 1 and the
	 * issue of S_1 after it; consumer 0 passed it after issuing P_0 V_0 */
	{
		struct pipeline_event *w = NULL, *iq = NULL, *pass = NULL;
		double keep_w, keep_b, keep_e;

		for (x = 0; x < r.nev; x++) {
			struct pipeline_event *f = &r.ev[x];

			if (f->cta != 0 || f->j != 1)
				continue;
			if (f->kind == PIPELINE_WAIT_TURN && f->wg == 1)
				w = f;
			if (f->kind == PIPELINE_ISSUE_QK && f->wg == 1)
				iq = f;
			if (f->kind == PIPELINE_PASS_TURN && f->wg == 0)
				pass = f;
		}
		ck_assert(w != NULL && iq != NULL && pass != NULL);
		ck_assert(iq->begin >= pass->begin);
		keep_w = w->end;
		keep_b = iq->begin;
		keep_e = iq->end;
		/* as the recordings stamp it: the wait's clock reads before
		 * the pass, the next step after it; no fault */
		w->end = pass->begin - 100;
		if (w->begin > w->end)
			w->begin = w->end;
		ck_assert_msg(pipeline_check(r.ev, r.nev, 2, 1, why, sizeof why)
		    == 0, "%s", why);
		/* consumer 1 issuing S_1 before consumer 0 passed the turn */
		iq->begin = pass->begin - 50;
		iq->end = pass->begin - 10;
		ck_assert_int_gt(pipeline_check(r.ev, r.nev, 2, 1, why,
		    sizeof why), 0);
		ck_assert_msg(strstr(why, "consumer 1 took turn 1 at") != NULL &&
		    strstr(why, "before consumer 0 passed it") != NULL, "%s",
		    why);
		/* ... which is no fault when there is no ping-pong to keep */
		ck_assert_int_eq(pipeline_check(r.ev, r.nev, 2, 0, why,
		    sizeof why), 0);
		w->end = keep_w;
		iq->begin = keep_b;
		iq->end = keep_e;
		/* a pass that never happened */
		pass->kind = PIPELINE_SOFTMAX;
		ck_assert_int_gt(pipeline_check(r.ev, r.nev, 2, 1, why,
		    sizeof why), 0);
		ck_assert_msg(strstr(why, "before consumer 0 passed") != NULL ||
		    strstr(why, "with no pass to it") != NULL, "%s", why);
		pass->kind = PIPELINE_PASS_TURN;
		ck_assert_int_eq(pipeline_check(r.ev, r.nev, 2, 1, why,
		    sizeof why), 0);
	}
	pipeline_run_free(&r);
}
END_TEST

static double
span_of(int d, int t, int causal, int stages, int pp, int ov)
{
	struct pipeline_run r;
	double s;

	run_model(&r, d, t, causal, stages, pp, ov, 2);
	s = pipeline_span(&r);
	pipeline_run_free(&r);
	return s;
}

/*
 * What if, at two sizes: one stage is slower than the kernel's; no
 * ping-pong is slower than ping-pong; no overlap is slower than the
 * overlap, with and without ping-pong.  (How much slower is printed by
 * `flashstep pipeline --model`; the model's ping-pong gain is small,
 * doc/design.md says why.)
 */
START_TEST(test_what_if)
{
	static const struct { int d, t, causal; } sz[] = {
		{ 128, 1024, 0 }, { 64, 2048, 1 },
	};
	int x;

	for (x = 0; x < 2; x++) {
		const int d = sz[x].d, t = sz[x].t, cs = sz[x].causal;
		const int st = d == 128 ? 2 : 4;
		const double base = span_of(d, t, cs, st, 1, 1);
		const double one = span_of(d, t, cs, 1, 1, 1);
		const double nopp = span_of(d, t, cs, st, 0, 1);
		const double noov = span_of(d, t, cs, st, 0, 0);

		ck_assert_msg(one > 1.1 * base, "d %d: one stage %.0f, %d "
		    "stages %.0f", d, one, st, base);
		ck_assert_msg(nopp > base, "d %d: no ping-pong %.0f, ping-pong "
		    "%.0f", d, nopp, base);
		ck_assert_msg(noov > 1.02 * nopp && noov > 1.02 * base,
		    "d %d: no overlap %.0f, overlap %.0f (ping-pong %.0f)", d,
		    noov, nopp, base);
	}
}
END_TEST

/*
 * The Chrome trace: python's json module (when there is a python3)
 * takes it, and pipeline_json_read gives back every event exactly.
 */
START_TEST(test_json_round_trip)
{
	struct pipeline_run r;
	struct pipeline_json_meta m, back;
	struct pipeline_event *ev;
	char dir[] = "/tmp/check_pipeline.XXXXXX", path[64], cmd[160];
	char err[256], *text;
	size_t nev, len, x, nx = 0;
	int rc;

	run_model(&r, 64, 500, 1, 0, 1, 1, 2);
	memset(&m, 0, sizeof m);
	snprintf(m.source, sizeof m.source, "a \"test\"\\ run");
	m.cfg = r.cfg;
	m.clock_ghz = 1.83;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/run.json", dir);
	ck_assert_int_eq(pipeline_json_write(path, r.ev, r.nev, &m, err,
	    sizeof err), 0);
	/* the X events counted in the text: one per event */
	ck_assert_int_eq(pipeline_json_format(r.ev, r.nev, &m, &text, &len,
	    err, sizeof err), 0);
	for (char *p = text; (p = strstr(p, "\"ph\": \"X\"")) != NULL; p++)
		nx++;
	ck_assert_uint_eq(nx, r.nev);
	free(text);
	if (system("python3 -c 1 >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof cmd, "python3 -m json.tool %s >/dev/null",
		    path);
		ck_assert_msg(system(cmd) == 0, "json.tool refused %s", path);
	}
	ck_assert_msg(pipeline_json_read(path, &ev, &nev, &back, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(nev, r.nev);
	ck_assert_int_eq(back.cfg.d, 64);
	ck_assert_int_eq(back.cfg.consumers, 3);
	ck_assert_int_eq(back.cfg.causal, 1);
	ck_assert_str_eq(back.source, "a ?test?? run");
	for (x = 0; x < nev; x++) {
		ck_assert_int_eq(ev[x].kind, r.ev[x].kind);
		ck_assert_int_eq(ev[x].role, r.ev[x].role);
		ck_assert_int_eq(ev[x].cta, r.ev[x].cta);
		ck_assert_int_eq(ev[x].stage, r.ev[x].stage);
		ck_assert_int_eq(ev[x].round, r.ev[x].round);
		ck_assert_int_eq(ev[x].j, r.ev[x].j);
		ck_assert_double_eq_tol(ev[x].begin, r.ev[x].begin, 1e-5);
		ck_assert_double_eq_tol(ev[x].end, r.ev[x].end, 1e-5);
	}
	ck_assert_int_eq(pipeline_check(ev, nev, 3, 1, err, sizeof err), 0);
	free(ev);

	/* a file cut short is refused, naming it */
	rc = truncate(path, 3000);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(pipeline_json_read(path, &ev, &nev, &back, err,
	    sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, path));
	unlink(path);
	rmdir(dir);
	pipeline_run_free(&r);
}
END_TEST

/* One shipped recording, read whole. */
struct rec {
	char name[128];
	struct pipeline_json_meta m;
	struct pipeline_event *ev;
	size_t nev;
};

/* The wgmma kernel's recordings (wgmma-NAME.json) of doc/recordings
 * under $top_srcdir (at most max), sorted by name; how many. */
static int
read_recordings(struct rec *r, int max)
{
	const char *top = getenv("top_srcdir");
	char dir[1024], path[1280], err[512];
	struct dirent *de;
	DIR *d;
	int n = 0, a, b;

	snprintf(dir, sizeof dir, "%s/doc/recordings", top != NULL ? top : ".");
	d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((de = readdir(d)) != NULL && n < max) {
		const size_t len = strlen(de->d_name);

		/* the wgmma kernel's, which the model is of */
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 ||
		    strncmp(de->d_name, "wgmma-", 6) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		snprintf(r[n].name, sizeof r[n].name, "%s", de->d_name);
		ck_assert_msg(pipeline_json_read(path, &r[n].ev, &r[n].nev,
		    &r[n].m, err, sizeof err) == 0, "%s", err);
		n++;
	}
	closedir(d);
	for (a = 0; a < n; a++)	/* by name: the failures read the same */
		for (b = a + 1; b < n; b++)
			if (strcmp(r[b].name, r[a].name) < 0) {
				struct rec t = r[a];
				r[a] = r[b];
				r[b] = t;
			}
	return n;
}

/* The model of cfg with costs k, as many blocks as want has, against
 * want's figures: how many blocks and tiles fall outside the margins;
 * the worst ratios into *wb and *wt (max of model/rec and rec/model). */
static int
fed_outside(const struct pipeline_config *cfg, const struct pipeline_costs *k,
    const struct pipeline_figures *want, double *wb, double *wt)
{
	struct pipeline_config c = *cfg;
	struct pipeline_figures got;
	struct pipeline_run run;
	char err[256];
	int b, out = 0;

	c.ctas = want->ncta;
	ck_assert_msg(pipeline_model(&c, k, &run, err, sizeof err) == 0, "%s",
	    err);
	ck_assert_int_eq(pipeline_figures(run.ev, run.nev, c.consumers, &got,
	    err, sizeof err), 0);
	ck_assert_int_eq(got.ncta, want->ncta);
	*wb = *wt = 1;
	for (b = 0; b < want->ncta; b++) {
		const double rb = got.block[b] / want->block[b];

		*wb = fmax(*wb, fmax(rb, 1 / rb));
		out += !pipeline_fit_within(got.block[b], want->block[b],
		    PIPELINE_FIT_MARGIN_BLOCK);
		if (!isnan(want->tile[b])) {
			const double rt = got.tile[b] / want->tile[b];

			ck_assert(!isnan(got.tile[b]));
			*wt = fmax(*wt, fmax(rt, 1 / rt));
			out += !pipeline_fit_within(got.tile[b], want->tile[b],
			    PIPELINE_FIT_MARGIN_TILE);
		}
	}
	pipeline_run_free(&run);
	return out;
}

/*
 * The model fed with each shipped recording's durations keeps the
 * margins (pipeline_fit.h), block by block and steady key tile by key
 * tile; with the nominal durations instead it does not (the margins say
 * something); and the what-if: the durations of the ping-pong
 * recording at d = 128 run without ping-pong keep the margins against
 * the recording made without it.
 */
START_TEST(test_fit_recordings)
{
	struct rec r[16];
	struct pipeline_costs k, nominal;
	struct pipeline_figures want;
	char err[256];
	double wb, wt;
	int n, x, y, nopp = -1, pp = -1, out;

	n = read_recordings(r, 16);
	ck_assert_int_ge(n, 4);
	for (x = 0; x < n; x++) {
		const struct pipeline_config *c = &r[x].m.cfg;

		ck_assert_int_eq(pipeline_figures(r[x].ev, r[x].nev,
		    c->consumers, &want, err, sizeof err), 0);
		ck_assert_int_gt(want.ntile, 0);
		ck_assert_msg(pipeline_fit_costs(r[x].ev, r[x].nev, c, &k, err,
		    sizeof err) == 0, "%s: %s", r[x].name, err);
		out = fed_outside(c, &k, &want, &wb, &wt);
		ck_assert_msg(out == 0, "%s: %d figures outside the margins "
		    "(worst: a block %.3fx, a key tile %.3fx)", r[x].name, out,
		    wb, wt);
		pipeline_costs_nominal(c, &nominal);
		ck_assert_msg(fed_outside(c, &nominal, &want, &wb, &wt) > 0,
		    "%s: the nominal durations keep the margins too", r[x].name);
		if (c->d == 128 && !c->causal && c->consumers == 2) {
			if (c->pingpong)
				pp = x;
			else
				nopp = x;
		}
	}
	ck_assert(pp >= 0 && nopp >= 0);
	ck_assert_int_eq(pipeline_figures(r[nopp].ev, r[nopp].nev, 2, &want, err,
	    sizeof err), 0);
	ck_assert_int_eq(pipeline_fit_costs(r[pp].ev, r[pp].nev, &r[pp].m.cfg,
	    &k, err, sizeof err), 0);
	{
		struct pipeline_config c = r[pp].m.cfg;

		ck_assert_int_eq(c.tq, r[nopp].m.cfg.tq);
		c.pingpong = 0;
		out = fed_outside(&c, &k, &want, &wb, &wt);
		ck_assert_msg(out == 0, "what-if no ping-pong: %d outside "
		    "(worst %.3fx, %.3fx)", out, wb, wt);
	}
	for (y = 0; y < n; y++)
		free(r[y].ev);
}
END_TEST

/*
 * The turns of the shipped ping-pong recordings hold where the next
 * step begins; held to the turn waits' own end stamps instead (each
 * next step moved back to its wait's end) they break the order: the
 * finding doc/recordings/README.md describes.
 */
START_TEST(test_recorded_turns)
{
	struct rec r[16];
	char why[256];
	size_t a, b;
	int n, x, npp = 0;

	n = read_recordings(r, 16);
	for (x = 0; x < n; x++) {
		const struct pipeline_config *c = &r[x].m.cfg;
		const int pp = c->pingpong && c->overlap;

		ck_assert_msg(pipeline_check(r[x].ev, r[x].nev, c->consumers, pp,
		    why, sizeof why) == 0, "%s: %s", r[x].name, why);
		if (!pp)
			continue;
		npp++;
		for (a = 0; a < r[x].nev; a++) {
			const struct pipeline_event *w = &r[x].ev[a];
			struct pipeline_event *next = NULL;

			if (w->kind != PIPELINE_WAIT_TURN)
				continue;
			for (b = 0; b < r[x].nev; b++) {
				struct pipeline_event *e = &r[x].ev[b];

				if (b != a && e->cta == w->cta &&
				    e->role == w->role && e->begin >= w->end &&
				    (next == NULL || e->begin < next->begin))
					next = e;
			}
			if (next != NULL)
				next->begin = w->end;
		}
		ck_assert_msg(pipeline_check(r[x].ev, r[x].nev, c->consumers, 1,
		    why, sizeof why) > 0, "%s: the wait stamps keep the turns",
		    r[x].name);
		ck_assert_msg(strstr(why, "took turn") != NULL, "%s: %s",
		    r[x].name, why);
	}
	ck_assert_int_ge(npp, 3);
	for (x = 0; x < n; x++)
		free(r[x].ev);
}
END_TEST

/* The screen of 80 x 24 as text: does some row hold want? */
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

/*
 * The viewer on the model's run: a row per role, the ring, the cursor's
 * event in words; n and p step and come back, b goes to the next block,
 * the ring follows the cursor's time, q quits.
 */
START_TEST(test_viewer)
{
	struct pipeline_run r;
	struct pipeline_json_meta m;
	struct ui_pipeline v;
	struct ui_grid g;
	char err[256];
	size_t x, first_softmax = 0;

	run_model(&r, 128, 512, 0, 0, 1, 1, 2);
	memset(&m, 0, sizeof m);
	snprintf(m.source, sizeof m.source, "the test's model");
	m.cfg = r.cfg;
	memset(&g, 0, sizeof g);
	ck_assert_int_eq(ui_grid_resize(&g, 80, 24, err, sizeof err), 0);
	ui_pipeline_init(&v, r.ev, r.nev, &m);
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "the test's model"));
	ck_assert(screen_has(&g, "producer"));
	ck_assert(screen_has(&g, "consumer 1"));
	ck_assert(screen_has(&g, "tensor core"));
	ck_assert(screen_has(&g, "copy engine"));
	ck_assert(screen_has(&g, "block 1 of 2, row block 3"));
	ck_assert(screen_has(&g, "event 1 of "));
	/* at the first event the producer has issued every first copy */
	ck_assert(screen_has(&g, "[0 K filling j0, V filling j0]"));

	ck_assert_int_ne(ui_pipeline_key(&v, 'n') & UI_REDRAW, 0);
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "event 2 of "));
	ck_assert_int_ne(ui_pipeline_key(&v, 'p'), 0);
	ck_assert_uint_eq(v.cur, 0);
	ck_assert_int_ne(ui_pipeline_key(&v, 'p'), 0);	/* stays first */
	ck_assert_uint_eq(v.cur, 0);

	/* at the first softmax, K_0 is in stage 0, read by one consumer */
	for (x = 0; x < r.nev; x++)
		if (r.ev[x].cta == 0 && r.ev[x].kind == PIPELINE_SOFTMAX) {
			first_softmax = x;
			break;
		}
	while (v.cur < first_softmax)
		ui_pipeline_key(&v, 'n');
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "softmax, tile (3,0), stage 0, round 0"));
	ck_assert(screen_has(&g, "the algorithm: m_new = max(m, rowmax S)"));
	ck_assert(screen_has(&g, "[0 K full j0 1/2"));

	ui_pipeline_key(&v, 'b');
	ui_pipeline_draw(&v, &g);
	ck_assert(screen_has(&g, "block 2 of 2, row block 2"));
	ck_assert_int_eq(ui_pipeline_key(&v, '+') & UI_REDRAW, UI_REDRAW);
	ck_assert(v.zoom > 0);
	ui_pipeline_draw(&v, &g);
	ck_assert_int_eq(ui_pipeline_key(&v, '?'), 0);
	ck_assert_int_eq(ui_pipeline_key(&v, 'q'), UI_QUIT);
	/* a screen too small to hold anything still draws */
	ck_assert_int_eq(ui_grid_resize(&g, 10, 3, err, sizeof err), 0);
	ui_pipeline_draw(&v, &g);
	ui_grid_free(&g);
	pipeline_run_free(&r);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("pipeline");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_dependencies_hold);
	tcase_add_test(tc, test_check_catches);
	tcase_add_test(tc, test_what_if);
	tcase_add_test(tc, test_json_round_trip);
	tcase_add_test(tc, test_viewer);
	tcase_add_test(tc, test_fit_recordings);
	tcase_add_test(tc, test_recorded_turns);
	suite_add_tcase(s, tc);
	return s;
}
