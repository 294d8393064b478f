/* check_traffic.c - byte and FLOP counts, computed by hand. */
#include "config.h"

#include "testutil.h"
#include "model/traffic.h"

#include <stdlib.h>
#include <string.h>

/*
 * Tq = Tk = 8, d = dv = 4, Br = Bc = 4, fp32: Tr = Tc = 2, four steps.
 * A Q or K or V tile is 4 x 4 x 4 B = 64 B; a row block's state (acc, m,
 * l) is 4 x (4 + 2) x 4 B = 96 B; O_i and lse_i are 64 + 16 = 80 B.
 *
 * fa2: (0,0) Q0 K0 V0 = 192, (0,1) K1 V1 = 128 + write 80,
 *      (1,0) 192, (1,1) 128 + write 80: read 640, write 160.
 * fa1: (j0,i0) K0 V0 Q0 = 192, write state 96; (j0,i1) Q1 = 64, write 96;
 *      (j1,i0) K1 V1 Q0 + state = 288, write 80; (j1,i1) Q1 + state = 160,
 *      write 80: read 704, write 352.
 * standard: read Q, K = 256, S = 256, P = 256, V = 128 (896); write S,
 *      P = 512, O = 128 (640).  FLOPs 2 x 8 x 8 x (4 + 4) = 1024 for all.
 */
START_TEST(test_by_hand)
{
	struct problem_spec spec;
	struct problem p;
	struct schedule s;
	struct traffic_table tt;
	struct traffic t, std;
	struct tiling til = { 4, 4, ORDER_FA2 };
	char err[256];

	problem_spec_init(&spec);
	spec.tq = spec.tk = 8;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);

	ck_assert_int_eq(schedule_init(&s, &p, &til, err, sizeof err), 0);
	ck_assert_int_eq(traffic_init(&tt, &p, &s, err, sizeof err), 0);
	ck_assert_uint_eq(tt.total.hbm_read, 640);
	ck_assert_uint_eq(tt.total.hbm_write, 160);
	ck_assert_uint_eq(tt.total.flops, 1024);
	ck_assert_uint_eq(tt.total.exps, 64);
	ck_assert_uint_eq(tt.total.rescale_exps, 16);
	ck_assert_uint_eq(tt.total.stored, 0);
	traffic_upto(&tt, 1, &t);
	ck_assert_uint_eq(t.hbm_read, 320);
	ck_assert_uint_eq(t.hbm_write, 80);
	/* on chip during a step: Q, K, V tiles, S tile, state */
	ck_assert_uint_eq(t.onchip, 64 * 3 + 64 + 96);
	traffic_upto(&tt, 2, &t);
	ck_assert_uint_eq(t.hbm_read, 512);
	traffic_free(&tt);
	schedule_free(&s);

	til.order = ORDER_FA1;
	ck_assert_int_eq(schedule_init(&s, &p, &til, err, sizeof err), 0);
	ck_assert_int_eq(traffic_init(&tt, &p, &s, err, sizeof err), 0);
	ck_assert_uint_eq(tt.total.hbm_read, 704);
	ck_assert_uint_eq(tt.total.hbm_write, 352);
	ck_assert_uint_eq(tt.total.flops, 1024);
	ck_assert_uint_eq(tt.total.stored, 8 * 6 * 4);
	traffic_upto(&tt, 2, &t);
	ck_assert_uint_eq(t.hbm_read, 192 + 64 + 288);
	ck_assert_uint_eq(t.hbm_write, 96 + 96 + 80);
	traffic_upto(&tt, -1, &t);
	ck_assert_uint_eq(t.hbm_read, 0);
	traffic_free(&tt);
	schedule_free(&s);

	traffic_standard(&p, &std);
	ck_assert_uint_eq(std.hbm_read, 896);
	ck_assert_uint_eq(std.hbm_write, 640);
	ck_assert_uint_eq(std.flops, 1024);
	ck_assert_uint_eq(std.exps, 64);
	ck_assert_uint_eq(std.stored, 512);
	problem_free(&p);
}
END_TEST

/* fp16 halves the input and output bytes; causal skips tiles. */
START_TEST(test_fp16_causal)
{
	struct problem_spec spec;
	struct problem p;
	struct schedule s;
	struct traffic_table tt;
	struct tiling til = { 4, 4, ORDER_FA2 };
	char err[256];

	problem_spec_init(&spec);
	spec.tq = spec.tk = 8;
	spec.dtype = DTYPE_FP16;
	spec.causal = 1;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	ck_assert_int_eq(schedule_init(&s, &p, &til, err, sizeof err), 0);
	ck_assert_int_eq(s.nsteps, 3);
	ck_assert_int_eq(traffic_init(&tt, &p, &s, err, sizeof err), 0);
	/* (0,0) Q0 K0 V0 = 96, write O0 = 32 + lse 16; (1,0) Q1 K0 V0 = 96;
	 * (1,1) K1 V1 = 64, write 48. */
	ck_assert_uint_eq(tt.total.hbm_read, 96 + 96 + 64);
	ck_assert_uint_eq(tt.total.hbm_write, 48 + 48);
	ck_assert_uint_eq(tt.total.flops, 3 * 2 * 16 * 8);
	traffic_free(&tt);
	schedule_free(&s);
	problem_free(&p);
}
END_TEST

/*
 * The table's totals, counted a few steps an outer block (traffic.c's
 * cuts), equal every step counted one by one, in both loop orders, with
 * masks, ragged tiles, grouped heads packed or not, and splits.  fa1
 * with several heads runs its key loop per head: a cut taken from the
 * wrong head reads past ibegin and miscounts.
 */
START_TEST(test_totals_step_by_step)
{
	struct problem_spec spec;
	struct problem p;
	struct schedule s;
	struct traffic_table tt;
	struct traffic one, sum;
	struct schedule_tile tile;
	struct split_plan sp;
	struct tiling til;
	char err[256];
	int n;
	long k;

	srand(7);
	for (n = 0; n < 200; n++) {
		int g = 1 + rand() % 3;

		problem_spec_init(&spec);
		spec.tq = 1 + rand() % 23;
		spec.tk = 1 + rand() % 23;
		spec.d = 1 + rand() % 4;
		spec.causal = rand() % 2;
		spec.kv_heads = g;
		spec.heads = g * (1 + rand() % 3);
		ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
		til.br = 1 + rand() % 6;
		til.bc = 1 + rand() % 6;
		til.order = rand() % 2 ? ORDER_FA1 : ORDER_FA2;
		memset(&sp, 0, sizeof sp);
		sp.pack_gqa = rand() % 2;
		sp.splits = 1 + rand() % 3;
		ck_assert_msg(schedule_init_split(&s, &p, &til, &sp, err,
		    sizeof err) == 0, "%s", err);
		ck_assert_int_eq(traffic_init(&tt, &p, &s, err, sizeof err), 0);
		memset(&sum, 0, sizeof sum);
		for (k = 0; k < s.nsteps; k++) {
			schedule_tile(&s, k, &tile);
			traffic_step(&tt, &tile, &one);
			sum.hbm_read += one.hbm_read;
			sum.hbm_write += one.hbm_write;
			sum.flops += one.flops;
			sum.exps += one.exps;
		}
		ck_assert_msg(sum.hbm_read == tt.total.hbm_read &&
		    sum.hbm_write == tt.total.hbm_write &&
		    sum.flops == tt.total.flops && sum.exps == tt.total.exps,
		    "H=%d G=%d Tq=%d Tk=%d %dx%d %s causal=%d pack=%d splits=%d: "
		    "read %llu vs %llu, write %llu vs %llu", spec.heads, g,
		    spec.tq, spec.tk, til.br, til.bc,
		    schedule_order_name(til.order), spec.causal, sp.pack_gqa,
		    sp.splits, (unsigned long long)sum.hbm_read,
		    (unsigned long long)tt.total.hbm_read,
		    (unsigned long long)sum.hbm_write,
		    (unsigned long long)tt.total.hbm_write);
		traffic_free(&tt);
		schedule_free(&s);
		problem_free(&p);
	}
}
END_TEST

/* The counters at step k, stage, as a table with no cursor counts them:
 * from the outer block's first step (the walk traffic_at did before it
 * kept a cursor). */
static void
at_from_scratch(struct traffic_table *fresh, long k, int stage, int bwd,
    struct traffic *out)
{
	fresh->cursor->outer = -1;
	if (bwd)
		traffic_backward_at(fresh, k, (enum traffic_bwd_stage)stage, out);
	else
		traffic_at(fresh, k, (enum traffic_stage)stage, out);
}

/*
 * traffic_at keeps a cursor so that stepping costs one step, not a walk
 * from the outer block's start.  Whatever order the steps and stages are
 * asked in (forward through every stage, a jump back, a jump ahead into
 * another block, the same step twice), every counter equals the walk's
 * bit for bit, on the forward's tables (both orders, heads, packing,
 * splits, masks) and the backward's; and through the last stage it
 * equals the sum of every step from 0 counted alone.
 */
START_TEST(test_cursor_equals_walk)
{
	struct problem_spec spec;
	struct problem p;
	struct schedule s;
	struct traffic_table tt, fresh;
	struct traffic got, want, one, sum;
	struct schedule_tile tile;
	struct split_plan sp;
	struct tiling til;
	char err[256];
	int n, bwd, stage, nstages;
	long k, q;

	srand(11);
	for (n = 0; n < 120; n++) {
		int g = 1 + rand() % 3;

		bwd = n % 3 == 0;
		problem_spec_init(&spec);
		spec.tq = 1 + rand() % 19;
		spec.tk = 1 + rand() % 19;
		spec.d = 1 + rand() % 4;
		spec.causal = rand() % 2;
		spec.kv_heads = bwd ? 1 : g;
		spec.heads = bwd ? 1 : g * (1 + rand() % 3);
		ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
		til.br = 1 + rand() % 5;
		til.bc = 1 + rand() % 5;
		til.order = bwd || rand() % 2 ? ORDER_FA1 : ORDER_FA2;
		memset(&sp, 0, sizeof sp);
		if (!bwd) {
			sp.pack_gqa = rand() % 2;
			sp.splits = 1 + rand() % 3;
		}
		ck_assert_msg(schedule_init_split(&s, &p, &til, &sp, err,
		    sizeof err) == 0, "%s", err);
		if (bwd) {
			ck_assert_int_eq(traffic_backward_init(&tt, &p, &s, err,
			    sizeof err), 0);
			ck_assert_int_eq(traffic_backward_init(&fresh, &p, &s, err,
			    sizeof err), 0);
			traffic_backward_dpass(&p, &sum);
		} else {
			ck_assert_int_eq(traffic_init(&tt, &p, &s, err, sizeof err), 0);
			ck_assert_int_eq(traffic_init(&fresh, &p, &s, err, sizeof err),
			    0);
			memset(&sum, 0, sizeof sum);
		}
		nstages = bwd ? TRAFFIC_BWD_WRITE + 1 : TRAFFIC_FINALIZE + 1;
		for (k = 0; k < s.nsteps; k++) {
			schedule_tile(&s, k, &tile);
			if (bwd)
				traffic_backward_step(&tt, &tile, &one);
			else
				traffic_step(&tt, &tile, &one);
			for (stage = 0; stage < nstages; stage++) {
				if (bwd)
					traffic_backward_at(&tt, k,
					    (enum traffic_bwd_stage)stage, &got);
				else
					traffic_at(&tt, k, (enum traffic_stage)stage,
					    &got);
				at_from_scratch(&fresh, k, stage, bwd, &want);
				ck_assert_msg(memcmp(&got, &want, sizeof got) == 0,
				    "%s step %ld stage %d: the cursor's counts differ "
				    "from the walk's (read %llu vs %llu)", bwd ?
				    "backward" : "forward", k, stage,
				    (unsigned long long)got.hbm_read,
				    (unsigned long long)want.hbm_read);
			}
			/* through the last stage: every step from 0, alone */
			sum.hbm_read += one.hbm_read;
			sum.hbm_write += one.hbm_write;
			sum.flops += one.flops;
			sum.exps += one.exps;
			sum.rescale_exps += one.rescale_exps;
			sum.kv_read += one.kv_read;
			sum.partials += one.partials;
			ck_assert(got.hbm_read == sum.hbm_read &&
			    got.hbm_write == sum.hbm_write && got.flops == sum.flops &&
			    got.exps == sum.exps &&
			    got.rescale_exps == sum.rescale_exps &&
			    got.kv_read == sum.kv_read && got.partials == sum.partials &&
			    got.onchip == one.onchip);
			/* now and then a jump: back, or ahead, then on from k */
			if (rand() % 4 == 0) {
				q = rand() % s.nsteps;
				stage = rand() % nstages;
				if (bwd)
					traffic_backward_at(&tt, q,
					    (enum traffic_bwd_stage)stage, &got);
				else
					traffic_at(&tt, q, (enum traffic_stage)stage, &got);
				at_from_scratch(&fresh, q, stage, bwd, &want);
				ck_assert_msg(memcmp(&got, &want, sizeof got) == 0,
				    "a jump to step %ld stage %d: counts differ", q,
				    stage);
			}
		}
		traffic_free(&fresh);
		traffic_free(&tt);
		schedule_free(&s);
		problem_free(&p);
	}
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("traffic");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_by_hand);
	tcase_add_test(tc, test_fp16_causal);
	tcase_add_test(tc, test_totals_step_by_step);
	tcase_add_test(tc, test_cursor_equals_walk);
	suite_add_tcase(s, tc);
	return s;
}
