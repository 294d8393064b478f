/*
 * check_timeline.c - one problem from the first forward step to the last
 * backward step and back: global step numbers, seeks anywhere, phase
 * moves across the boundary, and a segment added between the two.
 */
#include "config.h"

#include "testutil.h"
#include "model/backward.h"
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
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE };
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
	ck_assert(backward_forward(f->sim, f->o, f->lse, f->m) == 0);
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

/* ---- a third engine, as split-KV's combine will be ---- */

struct toy {
	long step;
	int phase;
};

static long toy_steps(const void *e) { (void)e; return 3; }
static int toy_phases(const void *e, long k) { (void)e; return k == 2 ? 1 : 2; }
static const char *toy_phase_name(int p) { return p == 0 ? "merge" : "scale"; }
static long toy_step(const void *e) { return ((const struct toy *)e)->step; }
static int toy_phase(const void *e) { return ((const struct toy *)e)->phase; }
static const void *toy_view(const void *e) { return e; }

static int
toy_seek(void *e, long k, int phase)
{
	struct toy *t = e;
	int n;

	if (k < 0 || k >= 3)
		return -1;
	n = toy_phases(e, k);
	t->step = k;
	t->phase = phase < 0 || phase >= n ? n - 1 : phase;
	return 0;
}

static int
toy_move_phase(void *e, int delta)
{
	struct toy *t = e;
	int phase = t->phase + delta;

	if (phase >= 0 && phase < toy_phases(e, t->step)) {
		t->phase = phase;
		return 0;
	}
	return toy_seek(e, t->step + delta, delta > 0 ? 0 : -1);
}

static const struct timeline_segment toy_segment = {
	.name = "combine",
	.kind = TIMELINE_FORWARD,	/* any: no test reads its view by kind */
	.steps = toy_steps,
	.phases = toy_phases,
	.phase_name = toy_phase_name,
	.seek = toy_seek,
	.move_phase = toy_move_phase,
	.step = toy_step,
	.phase = toy_phase,
	.view = toy_view,
};

/* forward, combine, backward: built in that order, nothing else to
 * change; numbers run on through the middle segment, walks cross it. */
START_TEST(test_segment_between)
{
	struct fixture f;
	struct timeline *tl;
	struct timeline_pos pos;
	struct toy toy = { 0, 0 };
	char err[256];
	long F, moves = 0;

	fixture_open(&f);
	F = sim_steps(f.sim);
	tl = timeline_new(err, sizeof err);
	ck_assert(timeline_add(tl, &timeline_forward, f.sim, err, sizeof err) == 0);
	ck_assert(timeline_add(tl, &toy_segment, &toy, err, sizeof err) == 0);
	ck_assert(timeline_add(tl, &timeline_backward, f.bwd, err, sizeof err) == 0);
	ck_assert_int_eq(timeline_first(tl, 1), F);
	ck_assert_int_eq(timeline_first(tl, 2), F + 3);
	ck_assert_int_eq(timeline_find(tl, TIMELINE_BACKWARD), 2);
	ck_assert_int_eq(timeline_seek(tl, F + 1, 1), 0);
	ck_assert(toy.step == 1 && toy.phase == 1);
	timeline_position(tl, &pos);
	ck_assert(pos.seg == 1 && pos.global == F + 1);
	/* three moves: (2, 0), then the backward's (0, 0) */
	ck_assert(timeline_move_phase(tl, 1) == 0);
	ck_assert(timeline_move_phase(tl, 1) == 0);
	timeline_position(tl, &pos);
	ck_assert(pos.seg == 2 && pos.global == F + 3 && pos.phase == 0);
	ck_assert(timeline_move_phase(tl, -1) == 0);
	timeline_position(tl, &pos);
	ck_assert(pos.seg == 1 && pos.step == 2 && pos.phase == 0);
	ck_assert_int_eq(timeline_seek(tl, 0, 0), 0);
	while (timeline_move_phase(tl, 1) == 0)
		moves++;
	ck_assert_int_eq(moves, all_phases(tl) - 1);
	timeline_free(tl);
	fixture_close(&f);
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
	tcase_add_test(tc, test_segment_between);
	suite_add_tcase(s, tc);
	return s;
}
