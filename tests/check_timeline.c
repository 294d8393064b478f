/*
 * check_timeline.c - one problem from the first forward step to the last
 * backward step and back: global step numbers, seeks anywhere, phase
 * moves across the boundaries, and split-KV's combine between the two.
 */
#include "config.h"

#include "testutil.h"
#include "model/backward.h"
#include "app/fulltimeline.h"
#include "model/combine.h"
#include "model/sim.h"
#include "model/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A causal problem with Tq > Tk (rows that see no key), its forward,
 * its backward and the timeline over both. */
struct fixture {
	struct problem p;
	struct sim *sim;
	struct backward *bwd;
	struct timeline *tl;
	float *o, *lse, *m, *dout;
};

static void
fixture_open(struct fixture *f)
{
	struct problem_spec spec;
	struct tiling t = { 3, 2, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct backward_input in;
	char err[256];

	problem_spec_init(&spec);
	spec.tq = 11;
	spec.tk = 7;
	spec.d = 3;
	spec.dv = 2;
	spec.causal = 1;
	spec.input = INPUTS_NORMAL;
	ck_assert(problem_build(&spec, &f->p, err, sizeof err) == 0);
	f->sim = sim_new(&f->p, &t, &rule, err, sizeof err);
	f->o = malloc(11 * 2 * sizeof(float));
	f->lse = malloc(11 * sizeof(float));
	f->m = malloc(11 * sizeof(float));
	ck_assert(f->sim && f->o && f->lse && f->m);
	ck_assert(backward_forward(f->sim, NULL, f->o, f->lse, f->m) == 0);
	ck_assert(problem_grad_output(&spec, &f->p, &f->dout, err, sizeof err) == 0);
	in.o = f->o;
	in.lse = f->lse;
	in.m = f->m;
	in.dout = f->dout;
	f->bwd = backward_new(&f->p, &t, &in, BWD_BUG_NONE, err, sizeof err);
	ck_assert_msg(f->bwd != NULL, "%s", err);
	f->tl = timeline_new(err, sizeof err);
	ck_assert(f->tl != NULL);
	ck_assert(timeline_add(f->tl, &timeline_forward, f->sim, err, sizeof err) == 0);
	ck_assert(timeline_add(f->tl, &timeline_backward, f->bwd, err, sizeof err) == 0);
}

static void
fixture_close(struct fixture *f)
{
	timeline_free(f->tl);
	backward_free(f->bwd);
	sim_free(f->sim);
	free(f->o);
	free(f->lse);
	free(f->m);
	free(f->dout);
	problem_free(&f->p);
}

/* Phases of every step of every segment, summed. */
static long
all_phases(const struct timeline *tl)
{
	const struct timeline_segment *seg;
	long total = 0, k;
	int s;

	for (s = 0; s < timeline_segments(tl); s++) {
		seg = timeline_segment(tl, s);
		for (k = 0; k < seg->steps(timeline_engine(tl, s)); k++)
			total += seg->phases(timeline_engine(tl, s), k);
	}
	return total;
}

START_TEST(test_numbering)
{
	struct fixture f;
	struct timeline_pos pos;
	long F, B;

	fixture_open(&f);
	F = sim_steps(f.sim);
	B = backward_steps(f.bwd);
	ck_assert_int_gt(F, 1);
	ck_assert_int_eq(B, F);		/* the same visible tiles, both ways */
	ck_assert_int_eq(timeline_segments(f.tl), 2);
	ck_assert_int_eq(timeline_steps(f.tl), F + B);
	ck_assert_int_eq(timeline_first(f.tl, 0), 0);
	ck_assert_int_eq(timeline_first(f.tl, 1), F);
	ck_assert_int_eq(timeline_find(f.tl, TIMELINE_BACKWARD), 1);
	ck_assert_int_eq(timeline_find(f.tl, TIMELINE_FORWARD), 0);
	ck_assert(timeline_locate(f.tl, F - 1, &pos) == 0);
	ck_assert(pos.seg == 0 && pos.step == F - 1);
	ck_assert(timeline_locate(f.tl, F, &pos) == 0);
	ck_assert(pos.seg == 1 && pos.step == 0 && pos.global == F);
	ck_assert_int_eq(timeline_locate(f.tl, F + B, &pos), -1);
	ck_assert_int_eq(timeline_locate(f.tl, -1, &pos), -1);
	/* It starts at the first forward step, whatever the engines did. */
	timeline_position(f.tl, &pos);
	ck_assert(pos.seg == 0 && pos.global == 0 && pos.phase == 0);
	ck_assert_str_eq(timeline_segment(f.tl, 1)->phase_name(BWD_PHASE_DQ), "dQ");
	ck_assert_str_eq(timeline_segment(f.tl, 0)->phase_name(SIM_PHASE_MAX), "max");
	fixture_close(&f);
}
END_TEST

/* Every global step, in a scrambled order: the view is that engine's,
 * at that engine's step, at the phase asked for. */
START_TEST(test_seek_everywhere)
{
	struct fixture f;
	struct timeline_pos pos;
	long n, g, k, F;
	int phase;

	fixture_open(&f);
	F = sim_steps(f.sim);
	n = timeline_steps(f.tl);
	ck_assert(n % 7 != 0);
	for (k = 0; k < n; k++) {
		g = (k * 7 + 3) % n;	/* every step once: 7 is prime to n */
		phase = (int)(k % 3);
		ck_assert_int_eq(timeline_seek(f.tl, g, phase), 0);
		timeline_position(f.tl, &pos);
		ck_assert_int_eq(pos.global, g);
		ck_assert_int_eq(pos.phase, phase);
		if (g < F) {
			const struct sim_view *v = timeline_view(f.tl);
			ck_assert(v == sim_view(f.sim) && v->step == g);
		} else {
			const struct backward_view *v = timeline_view(f.tl);
			ck_assert(v == backward_view(f.bwd) && v->step == g - F);
		}
	}
	ck_assert_int_eq(timeline_seek(f.tl, n, 0), -1);
	timeline_position(f.tl, &pos);
	ck_assert_int_eq(pos.global, g);	/* unchanged */
	fixture_close(&f);
}
END_TEST

/* From the first phase to the last, one phase at a time, and back. */
START_TEST(test_walk_across)
{
	struct fixture f;
	struct timeline_pos pos;
	long moves = 0, F;

	fixture_open(&f);
	F = sim_steps(f.sim);
	while (timeline_move_phase(f.tl, 1) == 0)
		moves++;
	ck_assert_int_eq(moves, all_phases(f.tl) - 1);
	timeline_position(f.tl, &pos);
	ck_assert(pos.seg == 1 && pos.global == timeline_steps(f.tl) - 1);
	ck_assert_int_eq(pos.phase, BWD_PHASE_WRITE);
	moves = 0;
	while (timeline_move_phase(f.tl, -1) == 0)
		moves++;
	ck_assert_int_eq(moves, all_phases(f.tl) - 1);
	timeline_position(f.tl, &pos);
	ck_assert(pos.seg == 0 && pos.global == 0 && pos.phase == 0);

	/* The boundary: the forward's last step ends in finalize; one more
	 * phase is the backward's first load; one back is finalize again. */
	ck_assert_int_eq(timeline_seek(f.tl, F - 1, -1), 0);
	timeline_position(f.tl, &pos);
	ck_assert_int_eq(pos.phase, SIM_PHASE_FINALIZE);
	ck_assert_int_eq(timeline_move_phase(f.tl, 1), 0);
	timeline_position(f.tl, &pos);
	ck_assert(pos.seg == 1 && pos.step == 0 && pos.global == F &&
	    pos.phase == BWD_PHASE_LOAD);
	ck_assert_int_eq(timeline_move_phase(f.tl, -1), 0);
	timeline_position(f.tl, &pos);
	ck_assert(pos.seg == 0 && pos.step == F - 1 &&
	    pos.phase == SIM_PHASE_FINALIZE);
	fixture_close(&f);
}
END_TEST

/* ---- the combine between them (split-KV) ---- */

/* A split problem's timeline as fulltimeline_build makes it: forward,
 * combine (3 ranges, tree order: two levels of merges), and the backward
 * when asked for. */
struct split_fixture {
	struct problem p;
	struct sim *sim;
	struct fulltimeline b;
};

static void
split_open(struct split_fixture *f, int backward, enum combine_order order)
{
	struct options o;
	char err[256];

	options_init(&o);
	o.spec.tq = 11;
	o.spec.tk = 13;
	o.spec.d = 3;
	o.spec.dv = 2;
	o.spec.causal = 1;
	o.spec.input = INPUTS_NORMAL;
	o.tiling.br = 3;
	o.tiling.bc = 2;
	o.split.splits = 3;
	o.combine.order = order;
	o.backward = backward;
	ck_assert(problem_build(&o.spec, &f->p, err, sizeof err) == 0);
	f->sim = sim_new_split(&f->p, &o.tiling, &o.split, &o.rule, err,
	    sizeof err);
	ck_assert_msg(f->sim != NULL, "%s", err);
	ck_assert_msg(fulltimeline_build(&o, &f->p, f->sim, &f->b, err,
	    sizeof err) == 0, "%s", err);
}

static void
split_close(struct split_fixture *f)
{
	fulltimeline_close(&f->b);
	sim_free(f->sim);
	problem_free(&f->p);
}

/* The combine view's numbers, as a flat copy (what the view shows). */
static size_t
combine_copy(const struct combine_view *v, float *out)
{
	size_t n = 0, rows = (size_t)v->rows, acc = rows * (size_t)v->dv;
	const float *part[] = { v->m_a, v->l_a, v->m_b, v->l_b, v->m, v->l,
	    v->w_a, v->w_b };
	size_t k;

	for (k = 0; k < sizeof part / sizeof part[0]; k++, n += rows)
		memcpy(out + n, part[k], rows * sizeof *out);
	memcpy(out + n, v->u_a, acc * sizeof *out), n += acc;
	memcpy(out + n, v->u_b, acc * sizeof *out), n += acc;
	memcpy(out + n, v->u, acc * sizeof *out), n += acc;
	if (v->last) {
		memcpy(out + n, v->o, acc * sizeof *out), n += acc;
		memcpy(out + n, v->lse, rows * sizeof *out), n += rows;
	}
	return n;
}

START_TEST(test_combine_segment)
{
	struct split_fixture f;
	struct timeline *tl;
	struct timeline_pos pos;
	long F, C, B, g;

	split_open(&f, 1, COMBINE_TREE);
	tl = f.b.tl;
	F = sim_steps(f.sim);
	C = combine_steps(f.b.comb);
	B = backward_steps(f.b.bwd);
	ck_assert_int_eq(timeline_segments(tl), 3);
	ck_assert_int_eq(timeline_find(tl, TIMELINE_COMBINE), 1);
	ck_assert_int_eq(timeline_find(tl, TIMELINE_BACKWARD), 2);
	ck_assert_str_eq(timeline_segment(tl, 1)->name, "combine");
	/* a merge a step: Tr row blocks of N - 1 tree merges */
	ck_assert_int_eq(combine_merges(f.b.comb), 2);
	ck_assert_int_eq(C, (long)sim_schedule(f.sim)->tr * 2);
	ck_assert_int_eq(timeline_first(tl, 1), F);
	ck_assert_int_eq(timeline_first(tl, 2), F + C);
	ck_assert_int_eq(timeline_steps(tl), F + C + B);
	ck_assert_str_eq(timeline_segment(tl, 1)->phase_name(COMBINE_PHASE_WEIGHTS),
	    "weights");
	/* a block's last merge finalizes: 5 phases, else 4 */
	ck_assert_int_eq(timeline_segment(tl, 1)->phases(f.b.comb, 0), 4);
	ck_assert_int_eq(timeline_segment(tl, 1)->phases(f.b.comb, 1), 5);

	/* every combine step by seeking: the combine's own view */
	for (g = F; g < F + C; g++) {
		ck_assert_int_eq(timeline_seek(tl, g, -1), 0);
		timeline_position(tl, &pos);
		ck_assert(pos.seg == 1 && pos.step == g - F && pos.global == g);
		ck_assert(timeline_view(tl) == combine_view(f.b.comb));
		ck_assert_int_eq(combine_view(f.b.comb)->step, g - F);
		ck_assert_int_eq(pos.phase, combine_view(f.b.comb)->nphases - 1);
	}
	/* out of range: unchanged */
	ck_assert_int_eq(timeline_seek(tl, F + C + B, 0), -1);
	timeline_position(tl, &pos);
	ck_assert_int_eq(pos.global, F + C - 1);

	/* the boundaries, both ways: forward's last finalize, the combine's
	 * first load; the combine's last finalize, the backward's load */
	ck_assert_int_eq(timeline_seek(tl, F - 1, -1), 0);
	ck_assert_int_eq(timeline_move_phase(tl, 1), 0);
	timeline_position(tl, &pos);
	ck_assert(pos.seg == 1 && pos.step == 0 && pos.phase == COMBINE_PHASE_LOAD);
	ck_assert_int_eq(timeline_move_phase(tl, -1), 0);
	timeline_position(tl, &pos);
	ck_assert(pos.seg == 0 && pos.step == F - 1 &&
	    pos.phase == SIM_PHASE_FINALIZE);
	ck_assert_int_eq(timeline_seek(tl, F + C - 1, -1), 0);
	timeline_position(tl, &pos);
	ck_assert_int_eq(pos.phase, COMBINE_PHASE_FINALIZE);
	ck_assert_int_eq(timeline_move_phase(tl, 1), 0);
	timeline_position(tl, &pos);
	ck_assert(pos.seg == 2 && pos.step == 0 && pos.phase == BWD_PHASE_LOAD);
	ck_assert_int_eq(timeline_move_phase(tl, -1), 0);
	timeline_position(tl, &pos);
	ck_assert(pos.seg == 1 && pos.step == C - 1 &&
	    pos.phase == COMBINE_PHASE_FINALIZE);
	split_close(&f);
}
END_TEST

/*
 * Walking the whole timeline a phase at a time, forwards and back, visits
 * every (step, phase) once, and at each the combine's numbers are those
 * a seek there shows, bit for bit, in every merge order; without
 * --backward the combine is the last segment.
 */
START_TEST(test_combine_walk_equals_seek)
{
	struct split_fixture f, probe;
	struct timeline_pos pos;
	const struct combine_view *v;
	float walked[512], sought[512];
	size_t nw, ns;
	long moves, visits;
	int order, backward, dir;

	for (order = 0; order < 3; order++) {
		backward = order != 1;
		split_open(&f, backward, (enum combine_order)order);
		split_open(&probe, 0, (enum combine_order)order);
		ck_assert_int_eq(timeline_segments(f.b.tl), backward ? 3 : 2);
		ck_assert_int_eq(timeline_segments(probe.b.tl), 2);
		for (dir = 1; dir >= -1; dir -= 2) {
			moves = visits = 0;
			do {
				timeline_position(f.b.tl, &pos);
				if (pos.seg != 1)
					continue;
				visits++;
				v = combine_view(f.b.comb);
				nw = combine_copy(v, walked);
				/* the same place sought in another timeline */
				ck_assert_int_eq(timeline_seek(probe.b.tl, pos.global,
				    pos.phase), 0);
				ns = combine_copy(combine_view(probe.b.comb), sought);
				ck_assert_uint_eq(nw, ns);
				ck_assert_msg(memcmp(walked, sought, nw * sizeof *walked)
				    == 0, "order %s: merge %ld phase %d walked differs "
				    "from sought", combine_order_name(
				    (enum combine_order)order), pos.step, pos.phase);
				ck_assert_int_eq((int)v->phase, pos.phase);
				ck_assert(memcmp(&v->traffic, &combine_view(probe.b.comb)
				    ->traffic, sizeof v->traffic) == 0);
			} while (timeline_move_phase(f.b.tl, dir) == 0 && ++moves);
			ck_assert_int_eq(moves, all_phases(f.b.tl) - 1);
			ck_assert_int_gt(visits, combine_steps(f.b.comb) * 4 - 1);
		}
		split_close(&probe);
		split_close(&f);
	}
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("timeline");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_numbering);
	tcase_add_test(tc, test_seek_everywhere);
	tcase_add_test(tc, test_walk_across);
	tcase_add_test(tc, test_combine_segment);
	tcase_add_test(tc, test_combine_walk_equals_seek);
	suite_add_tcase(s, tc);
	return s;
}
