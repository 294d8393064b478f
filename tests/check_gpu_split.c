/*
 * check_gpu_split.c - the teaching kernel's split-KV run
 * (gpu/teach_split.cu, through the kernel table's gpu_split_run) against
 * the simulator's split run and combine, through gpucheck_split: every
 * row of every range's partial, every merge, then O and lse, within the
 * rule gpucheck_split.h derives, and m the simulator's bits.
 *
 * Random problems cover every merge order and both partial forms, both
 * conventions and loop orders, all three dtypes, causal, Tq > Tk, ragged
 * tiles, ranges the mask hides or that get no key block (empty partials),
 * grouped heads packed and not, scores problems with masked rows; the
 * update rule's and the merge's bug modes run on both sides and agree
 * (and change the result, so agreeing is not trivial); each test fault
 * is caught where it belongs: a range left without its rescale in the
 * partials, a dropped merge operand in the merges and O only.
 *
 * Without a device that can run the kernel the program fails, or skips
 * (77) only where the hardware is missing and FLASHSTEP_REQUIRE_GPU is
 * not set (gpuprobe.c).
 */
#include "config.h"

#include "testutil.h"
#include "gpu/gpu.h"
#include "gpu/gpucheck_split.h"
#include "gpuprobe.h"
#include "model/backward.h"
#include "model/combine.h"
#include "model/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * In fp32 every difference stays a small fraction of the rule: the
 * partials as in check_gpu.c (expf and logf, 3 units, carried through
 * sums of at most 80 terms), the merges a few units each.  0.05 of the
 * tolerance leaves the margin check_gpu.c leaves.
 */
#define SPLIT_FP32_EXCESS 0.05

/* One split case: the problem, its split sim and combine. */
struct split_case {
	struct problem p;
	struct tiling t;
	struct split_plan sp;
	struct online_rule rule;
	struct combine_rule cr;
	struct sim *sim;
	struct combine *comb;
	char what[200];
};

static int
draw(struct inputs_rng *rng, int lo, int hi)
{
	return lo + (int)(inputs_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

/* The sim and combine of a case whose problem and plans are set. */
static void
split_case_open(struct split_case *c)
{
	char err[512];

	c->sim = sim_new_split(&c->p, &c->t, &c->sp, &c->rule, err, sizeof err);
	ck_assert_msg(c->sim != NULL, "%s: %s", c->what, err);
	c->comb = combine_new(c->sim, &c->cr, err, sizeof err);
	ck_assert_msg(c->comb != NULL, "%s: %s", c->what, err);
}

static void
split_case_close(struct split_case *c)
{
	combine_free(c->comb);
	sim_free(c->sim);
	problem_free(&c->p);
	memset(c, 0, sizeof *c);
}

/* A case from a spec and the rest of its settings. */
static void
split_case_build(struct split_case *c, const struct problem_spec *spec,
    int br, int bc, int splits, enum merge_form form, int pack,
    enum combine_order order)
{
	char err[512];

	ck_assert_msg(problem_build(spec, &c->p, err, sizeof err) == 0, "%s",
	    err);
	c->t.br = br;
	c->t.bc = bc;
	c->sp.splits = splits;
	c->sp.partials = form;
	c->sp.pack_gqa = pack;
	c->cr.order = order;
	snprintf(c->what, sizeof c->what, "Tq=%d Tk=%d d=%d dv=%d H=%d G=%d%s "
	    "%s Br=%d Bc=%d %s N=%d %s %s %s %s bug %s merge-bug %s",
	    c->p.tq, c->p.tk, c->p.d, c->p.dv, c->p.heads, c->p.kv_heads,
	    pack ? " packed" : "", c->p.causal ? "causal" : "full", br, bc,
	    schedule_order_name(c->t.order), splits, combine_form_name(form),
	    combine_order_name(order), dtype_name(c->p.dtype),
	    online_convention_name(c->rule.convention),
	    online_bug_name(c->rule.bug), combine_bug_name(c->cr.bug));
	split_case_open(c);
}

/* gpucheck_split of a case (fault: NULL, or the kernel's bugs); asserts
 * it ran. */
static void
split_case_check(struct split_case *c, const struct gpucheck_fault *fault,
    struct gpucheck_split_report *rep)
{
	char err[512];

	ck_assert_msg(gpucheck_split_run(gpu_kernel_find("teaching"), c->sim,
	    c->comb, fault, rep, err, sizeof err) == 0, "%s: %s", c->what, err);
}

/* Fails the test with the case and the report's figures. */
static void
split_case_agree(const struct gpucheck_split_report *rep, const char *what)
{
	ck_assert_msg(rep->part_failures == 0, "%s: %ld partial values differ, "
	    "worst range %d at %g of the tolerance (m %g l %g lse %g acc %g o "
	    "%g)", what, rep->part_failures, rep->worst_range, rep->part_excess,
	    rep->part_m, rep->part_l, rep->part_lse, rep->part_acc, rep->part_o);
	ck_assert_msg(rep->merge_failures == 0, "%s: %ld merge values differ, "
	    "worst merge %d at %g of the tolerance (m %g l %g)", what,
	    rep->merge_failures, rep->worst_merge, rep->merge_excess,
	    rep->merge_m, rep->merge_l);
	ck_assert_msg(rep->out_failures == 0, "%s: O or lse differ (O %g, lse "
	    "%g, %g of the tolerance)", what, rep->max_o, rep->max_lse,
	    rep->out_excess);
	ck_assert_msg(rep->order_promised && rep->order_kept, "%s: %ld m values, "
	    "%ld of %ld partials' u and o where every p is exact, are not the "
	    "simulator's bits", what, rep->m_inexact, rep->u_inexact,
	    rep->u_compared);
	ck_assert_msg(rep->pass, "%s: not passed", what);
}

/* Does any range of the sim's last run end empty (m = -inf)? */
static int
has_empty_partial(const struct sim *sim)
{
	const struct sim_partials *pt = sim_partials(sim);
	size_t e, n = (size_t)pt->rows * pt->splits;

	for (e = 0; e < n; e++)
		if (pt->m[e] == -INFINITY)
			return 1;
	return 0;
}

/*
 * 90 random problems, every order and form many times over; in fp32
 * every value a small fraction of the tolerance.
 */
START_TEST(test_random)
{
	static const enum dtype dtypes[3] = { DTYPE_FP32, DTYPE_FP16,
	    DTYPE_BF16 };
	static const int group_heads[][2] = { { 1, 1 }, { 2, 2 }, { 4, 2 },
	    { 6, 3 }, { 8, 2 }, { 4, 1 } };
	struct inputs_rng rng;
	struct problem_spec spec;
	struct split_case c;
	struct gpucheck_split_report rep;
	int n, k, br, splits, form, pack, seen[3][2], empty = 0, causal = 0;
	int packed = 0, grouped = 0;
	double worst = 0;

	memset(seen, 0, sizeof seen);
	inputs_rng_seed(&rng, 1414);
	for (n = 0; n < 90; n++) {
		memset(&c, 0, sizeof c);
		problem_spec_init(&spec);
		k = draw(&rng, 0, 5);
		spec.heads = group_heads[k][0];
		spec.kv_heads = group_heads[k][1];
		spec.tq = draw(&rng, 1, n % 3 == 0 ? 4 : 40);
		spec.tk = draw(&rng, 1, 80);
		spec.d = draw(&rng, 1, 24);
		spec.dv = draw(&rng, 1, 24);
		spec.causal = draw(&rng, 0, 1);
		spec.input = (enum inputs_kind)draw(&rng, 0, 3);
		spec.seed = inputs_rng_next(&rng);
		spec.dtype = dtypes[n % 3];
		spec.bc = draw(&rng, 1, 24);
		/* fa1 with one head only, as the device runs so far drew it.
		 * What kept several heads out (the model's traffic table read
		 * past ibegin[] for fa1 with several heads) is mended in
		 * traffic.c and tested by check_traffic; widening this draw
		 * changes every problem after it, so it waits for a run on a
		 * device. */
		c.t.order = spec.heads == 1 && draw(&rng, 0, 1) ? ORDER_FA1 :
		    ORDER_FA2;
		c.rule.convention = draw(&rng, 0, 1) ? CONV_NORMALIZED :
		    CONV_UNNORMALIZED;
		br = draw(&rng, 1, 24);
		splits = draw(&rng, 2, 9);
		form = draw(&rng, 0, 1);
		pack = spec.heads > 1 && draw(&rng, 0, 1);
		split_case_build(&c, &spec, br, spec.bc, splits,
		    (enum merge_form)form, pack, (enum combine_order)(n % 3));
		split_case_check(&c, NULL, &rep);
		split_case_agree(&rep, c.what);
		if (spec.dtype == DTYPE_FP32) {
			worst = fmax(worst, fmax(rep.part_excess,
			    fmax(rep.merge_excess, rep.out_excess)));
			ck_assert_msg(rep.part_excess <= SPLIT_FP32_EXCESS &&
			    rep.merge_excess <= SPLIT_FP32_EXCESS &&
			    rep.out_excess <= SPLIT_FP32_EXCESS, "%s: a value at "
			    "%g of the tolerance: more than expf and logf explain",
			    c.what, fmax(rep.part_excess, fmax(rep.merge_excess,
			    rep.out_excess)));
		}
		seen[c.cr.order][c.sp.partials]++;
		empty += has_empty_partial(c.sim);
		causal += spec.causal;
		packed += c.sp.pack_gqa;
		grouped += spec.kv_heads < spec.heads;
		gpucheck_split_report_free(&rep);
		split_case_close(&c);
	}
	for (n = 0; n < 3; n++)
		for (k = 0; k < 2; k++)
			ck_assert_msg(seen[n][k] >= 5, "order %d form %d drawn %d "
			    "times", n, k, seen[n][k]);
	ck_assert_msg(empty >= 10 && causal >= 20 && packed >= 10 &&
	    grouped >= 20, "coverage: %d with empty partials, %d causal, %d "
	    "packed, %d grouped", empty, causal, packed, grouped);
	printf("split random: 90 problems agree; in fp32 the worst value at "
	    "%.3g of the tolerance; %d with empty partials\n", worst, empty);
}
END_TEST

/*
 * mask_rule.h's rules through split-KV and grouped heads: 30 problems
 * with a window of any sides (its ranges cut from the row block's first
 * visible key block, jbegin), softcap, and ALiBi with one slope per query
 * head (a packed row block mixes heads: each row takes its own), each
 * range's partial, each merge and O against the simulator's.
 */
START_TEST(test_masks)
{
	static const int group_heads[][2] = { { 1, 1 }, { 2, 2 }, { 4, 2 },
	    { 4, 1 } };
	struct inputs_rng rng;
	struct problem_spec spec;
	struct split_case c;
	struct gpucheck_split_report rep;
	char slopes[128];
	int n, k, h, at, windows = 0, packed = 0;

	inputs_rng_seed(&rng, 2830);
	for (n = 0; n < 30; n++) {
		memset(&c, 0, sizeof c);
		problem_spec_init(&spec);
		k = draw(&rng, 0, 3);
		spec.heads = group_heads[k][0];
		spec.kv_heads = group_heads[k][1];
		spec.tq = draw(&rng, 1, 40);
		spec.tk = draw(&rng, 1, 80);
		spec.d = draw(&rng, 1, 24);
		spec.dv = draw(&rng, 1, 24);
		spec.window_set = 1;
		spec.window_left = draw(&rng, -1, 30);
		spec.window_right = draw(&rng, -1, 30);
		spec.softcap_set = draw(&rng, 0, 1);
		spec.softcap = 0.5 + draw(&rng, 0, 50) / 10.0;
		for (h = 0, at = 0; h < spec.heads; h++)
			at += snprintf(slopes + at, sizeof slopes - (size_t)at, "%s%g",
			    h ? "," : "", 0.5 / (1 << h));
		spec.alibi_slopes = draw(&rng, 0, 2) ? slopes : NULL;
		spec.input = INPUTS_NORMAL;
		spec.seed = inputs_rng_next(&rng);
		spec.dtype = n % 3 == 0 ? DTYPE_FP16 : DTYPE_FP32;
		spec.bc = draw(&rng, 1, 24);
		c.t.order = ORDER_FA2;
		c.rule.convention = draw(&rng, 0, 1) ? CONV_NORMALIZED :
		    CONV_UNNORMALIZED;
		split_case_build(&c, &spec, draw(&rng, 1, 24), spec.bc,
		    draw(&rng, 2, 6), (enum merge_form)draw(&rng, 0, 1),
		    spec.heads > 1 && draw(&rng, 0, 1),
		    (enum combine_order)(n % 3));
		split_case_check(&c, NULL, &rep);
		split_case_agree(&rep, c.what);
		windows += spec.window_left >= 0;
		packed += c.sp.pack_gqa;
		gpucheck_split_report_free(&rep);
		split_case_close(&c);
	}
	ck_assert_msg(windows >= 15 && packed >= 5, "coverage: %d windows, %d "
	    "packed", windows, packed);
}
END_TEST

/*
 * Dropout through split-KV and grouped heads: 15 problems, each range's
 * partial, each merge and O against the simulator's.  A packed row
 * block mixes query heads, and each row draws its own head's keep bits
 * (head0 + its row of S / Tq), as the simulator's rows do.
 */
START_TEST(test_dropout)
{
	static const int group_heads[][2] = { { 1, 1 }, { 2, 2 }, { 4, 2 },
	    { 4, 1 } };
	struct inputs_rng rng;
	struct problem_spec spec;
	struct split_case c;
	struct gpucheck_split_report rep;
	int n, k, packed = 0;

	inputs_rng_seed(&rng, 2831);
	for (n = 0; n < 15; n++) {
		memset(&c, 0, sizeof c);
		problem_spec_init(&spec);
		k = draw(&rng, 0, 3);
		spec.heads = group_heads[k][0];
		spec.kv_heads = group_heads[k][1];
		spec.tq = draw(&rng, 1, 40);
		spec.tk = draw(&rng, 1, 80);
		spec.d = draw(&rng, 1, 24);
		spec.dv = draw(&rng, 1, 24);
		spec.causal = draw(&rng, 0, 1);
		spec.dropout_set = 1;
		spec.dropout = 0.1 * draw(&rng, 1, 8);
		spec.dropout_seed = inputs_rng_next(&rng);
		spec.dropout_offset = (uint64_t)draw(&rng, 0, 9);
		spec.input = INPUTS_NORMAL;
		spec.seed = inputs_rng_next(&rng);
		spec.dtype = n % 3 == 0 ? DTYPE_FP16 : DTYPE_FP32;
		spec.bc = draw(&rng, 1, 24);
		c.t.order = ORDER_FA2;
		c.rule.convention = draw(&rng, 0, 1) ? CONV_NORMALIZED :
		    CONV_UNNORMALIZED;
		split_case_build(&c, &spec, draw(&rng, 1, 24), spec.bc,
		    draw(&rng, 2, 6), (enum merge_form)draw(&rng, 0, 1),
		    spec.heads > 1 && draw(&rng, 0, 1),
		    (enum combine_order)(n % 3));
		split_case_check(&c, NULL, &rep);
		split_case_agree(&rep, c.what);
		packed += c.sp.pack_gqa;
		gpucheck_split_report_free(&rep);
		split_case_close(&c);
	}
	ck_assert_msg(packed >= 2, "coverage: %d packed", packed);
}
END_TEST

/* Rows that see no key and ranges that get no key block: the empty
 * partial merges as nothing, O = 0 and lse = -inf on both sides. */
START_TEST(test_empty_partials)
{
	static const enum combine_order orders[3] = { COMBINE_LTR,
	    COMBINE_TREE, COMBINE_REVERSE };
	struct problem_spec spec;
	struct split_case c;
	struct gpucheck_split_report rep;
	struct gpu_split_result g;
	char err[512];
	int o, f, r;

	for (o = 0; o < 3; o++)
		for (f = 0; f < 2; f++) {
			memset(&c, 0, sizeof c);
			problem_spec_init(&spec);
			spec.tq = 20;
			spec.tk = 9;
			spec.d = spec.dv = 8;
			spec.causal = 1;
			spec.input = INPUTS_NORMAL;
			spec.bc = 2;
			/* 5 key blocks in 7 ranges: two get none; rows 0 .. 10
			 * see no key at all. */
			split_case_build(&c, &spec, 4, 2, 7, (enum merge_form)f, 0,
			    orders[o]);
			split_case_check(&c, NULL, &rep);
			split_case_agree(&rep, c.what);
			ck_assert(has_empty_partial(c.sim));
			gpucheck_split_report_free(&rep);
			ck_assert_msg(gpu_split_run(gpu_kernel_find("teaching"),
			    c.sim, c.comb, 0, 0, &g, err, sizeof err) == 0, "%s",
			    err);
			for (r = 0; r < 11; r++) {
				ck_assert_msg(g.out_lse[r] == -INFINITY, "row %d: lse "
				    "%g", r, g.out_lse[r]);
				ck_assert(g.out[r * 8] == 0.0f &&
				    g.out[r * 8 + 7] == 0.0f);
			}
			for (r = 11; r < 20; r++)
				ck_assert(isfinite(g.out_lse[r]));
			gpu_split_result_free(&g);
			split_case_close(&c);
		}
}
END_TEST

/* A scores problem with masked entries and a fully masked row. */
START_TEST(test_scores)
{
	static const float v[6] = { 2, -1, 4, 8, 0.5f, -3 };
	float s[4 * 6];
	struct split_case c;
	struct gpucheck_split_report rep;
	int i;

	for (i = 0; i < 24; i++)
		s[i] = (float)((i * 37) % 11) * 90.0f - 400.0f;
	s[3] = s[9] = -INFINITY;
	for (i = 12; i < 18; i++)
		s[i] = -INFINITY;
	for (i = 0; i < 2; i++) {
		memset(&c, 0, sizeof c);
		tu_scores_problem(s, 4, 6, v, 1, &c.p);
		c.t.br = 3;
		c.t.bc = 1;
		c.sp.splits = 4;
		c.sp.partials = (enum merge_form)i;
		c.cr.order = i ? COMBINE_TREE : COMBINE_LTR;
		snprintf(c.what, sizeof c.what, "scores, %s",
		    combine_form_name(c.sp.partials));
		split_case_open(&c);
		split_case_check(&c, NULL, &rep);
		split_case_agree(&rep, c.what);
		gpucheck_split_report_free(&rep);
		split_case_close(&c);
	}
}
END_TEST

/* O of a case run by the kernel, malloc'd. */
static float *
split_output(struct split_case *c)
{
	struct gpu_split_result g;
	char err[512];
	size_t n;
	float *o;

	ck_assert_msg(gpu_split_run(gpu_kernel_find("teaching"), c->sim,
	    c->comb, 0, 0, &g, err, sizeof err) == 0, "%s", err);
	n = (size_t)g.rows * g.dv;
	o = malloc(n * sizeof *o);
	ck_assert(o != NULL);
	memcpy(o, g.out, n * sizeof *o);
	gpu_split_result_free(&g);
	return o;
}

/* The bug modes run on both sides and agree, and each changes O, so the
 * agreement is about the bug and not past it. */
START_TEST(test_bug_modes)
{
	/* last-max is exact in real numbers while every e^(m_a - m_b) is
	 * finite: it shows where the last partial is empty (9 ranges of 8
	 * key blocks), as NaN on both sides. */
	static const struct {
		enum merge_bug bug;
		enum merge_form form;
		enum combine_order order;
		int splits;
	} merges[] = {
		{ MERGE_BUG_NO_RESCALE_ONE, MERGE_MLU, COMBINE_REVERSE, 4 },
		{ MERGE_BUG_NO_RESCALE_ONE, MERGE_OLSE, COMBINE_TREE, 4 },
		{ MERGE_BUG_UNWEIGHTED, MERGE_OLSE, COMBINE_LTR, 4 },
		{ MERGE_BUG_LAST_MAX, MERGE_MLU, COMBINE_LTR, 9 },
	};
	struct problem_spec spec;
	struct split_case c;
	struct gpucheck_split_report rep;
	float *right, *wrong;
	int i, x, differs;

	problem_spec_init(&spec);
	spec.tq = 16;
	spec.tk = 64;
	spec.d = spec.dv = 8;
	spec.input = INPUTS_NORMAL;
	spec.bc = 8;
	for (i = 0; i < (int)(sizeof merges / sizeof merges[0]); i++) {
		memset(&c, 0, sizeof c);
		split_case_build(&c, &spec, 8, 8, merges[i].splits, merges[i].form,
		    0, merges[i].order);
		right = split_output(&c);
		split_case_close(&c);
		memset(&c, 0, sizeof c);
		c.cr.bug = merges[i].bug;
		split_case_build(&c, &spec, 8, 8, merges[i].splits, merges[i].form,
		    0, merges[i].order);
		split_case_check(&c, NULL, &rep);
		split_case_agree(&rep, c.what);
		wrong = split_output(&c);
		for (x = 0, differs = 0; x < 16 * 8; x++)
			differs += !(fabsf(wrong[x] - right[x]) <= 1e-3f *
			    (1.0f + fabsf(right[x])));
		ck_assert_msg(differs > 0, "%s: the bug changed nothing", c.what);
		free(right);
		free(wrong);
		gpucheck_split_report_free(&rep);
		split_case_close(&c);
	}
	/* The update rule's bug modes, in the ranges. */
	for (i = BUG_NUMERATOR_ONLY; i < ONLINE_BUGS; i++) {
		memset(&c, 0, sizeof c);
		c.rule.bug = (enum online_bug)i;
		c.rule.convention = i == BUG_FORGET_OLD_DENOMINATOR ?
		    CONV_NORMALIZED : CONV_UNNORMALIZED;
		split_case_build(&c, &spec, 8, 8, 3, MERGE_MLU, 0, COMBINE_TREE);
		split_case_check(&c, NULL, &rep);
		split_case_agree(&rep, c.what);
		gpucheck_split_report_free(&rep);
		split_case_close(&c);
	}
}
END_TEST

/*
 * Grouped heads: decoding shapes (one and three rows a head, 8 query
 * heads on 2 K/V heads, MQA), packed and not, agree; without a mask a
 * packed run gives the unpacked run's O bit for bit (each row runs the
 * same tiles with the same operations, only grouped otherwise).
 */
START_TEST(test_grouped_heads)
{
	static const int shapes[][4] = {	/* Tq, Tk, H, G */
		{ 1, 300, 8, 2 }, { 3, 90, 6, 3 }, { 2, 128, 4, 1 },
		{ 1, 4096, 32, 8 },
	};
	struct problem_spec spec;
	struct split_case c;
	struct gpucheck_split_report rep;
	float *o[2];
	size_t x, rows;
	int i, pack, causal;

	for (i = 0; i < (int)(sizeof shapes / sizeof shapes[0]); i++)
		for (causal = 0; causal < 2; causal++) {
			for (pack = 0; pack < 2; pack++) {
				memset(&c, 0, sizeof c);
				problem_spec_init(&spec);
				spec.tq = shapes[i][0];
				spec.tk = shapes[i][1];
				spec.heads = shapes[i][2];
				spec.kv_heads = shapes[i][3];
				spec.d = spec.dv = i == 3 ? 128 : 32;
				spec.causal = causal;
				spec.input = INPUTS_NORMAL;
				spec.dtype = i == 3 ? DTYPE_FP16 : DTYPE_FP32;
				spec.bc = i == 3 ? 64 : 16;
				split_case_build(&c, &spec, 16, spec.bc, i == 3 ? 16 : 5,
				    (enum merge_form)pack, pack,
				    (enum combine_order)(i % 3));
				split_case_check(&c, NULL, &rep);
				split_case_agree(&rep, c.what);
				gpucheck_split_report_free(&rep);
				/* the same partial form both times, for the bits */
				combine_free(c.comb);
				sim_free(c.sim);
				c.sp.partials = MERGE_MLU;
				split_case_open(&c);
				o[pack] = split_output(&c);
				rows = (size_t)problem_rows(&c.p);
				split_case_close(&c);
			}
			if (!causal)
				for (x = 0; x < rows * (i == 3 ? 128 : 32); x++)
					ck_assert_msg(memcmp(&o[0][x], &o[1][x],
					    sizeof(float)) == 0, "shape %d: packed O "
					    "differs from unpacked at %zu", i, x);
			free(o[0]);
			free(o[1]);
		}
}
END_TEST

/*
 * Every p exact (gpucheck_exact_p: a causal scores problem whose row r is
 * one value on every key, V of N(0, 1)): each range's u is a sum of V's
 * entries in the order of the keys, so every partial's u and o must be
 * the simulator's bits; each form and order, ranges of several tiles.
 */
START_TEST(test_exact_p)
{
	enum { TQ = 20, TK = 96, DV = 8 };
	struct inputs_rng rng;
	struct split_case c;
	struct gpucheck_split_report rep;
	float *s, *v;
	int r, x, o, f;

	s = malloc((size_t)TQ * TK * sizeof *s);
	v = malloc((size_t)TK * DV * sizeof *v);
	ck_assert(s != NULL && v != NULL);
	inputs_rng_seed(&rng, 77);
	for (r = 0; r < TQ * TK; r++)
		s[r] = (float)(r / TK % 3) * 0.5f;
	for (x = 0; x < TK * DV; x++)
		v[x] = (float)inputs_rng_normal(&rng);
	for (o = 0; o < 3; o++)
		for (f = 0; f < 2; f++) {
			struct problem_spec spec;
			char err[256];

			memset(&c, 0, sizeof c);
			problem_spec_init(&spec);
			spec.s.data = s;
			spec.s.rows = TQ;
			spec.s.cols = TK;
			spec.v.data = v;
			spec.v.rows = TK;
			spec.v.cols = DV;
			spec.causal = 1;
			ck_assert_msg(problem_build(&spec, &c.p, err, sizeof err) == 0,
			    "%s", err);
			c.t.br = 4;
			c.t.bc = 8;
			c.sp.splits = 3;
			c.sp.partials = (enum merge_form)f;
			c.rule.convention = f ? CONV_NORMALIZED : CONV_UNNORMALIZED;
			c.cr.order = (enum combine_order)o;
			snprintf(c.what, sizeof c.what, "exact p, %s, %s",
			    combine_form_name(c.sp.partials),
			    combine_order_name(c.cr.order));
			split_case_open(&c);
			split_case_check(&c, NULL, &rep);
			split_case_agree(&rep, c.what);
			ck_assert_msg(rep.u_compared > 0, "%s: nothing held to the "
			    "bits", c.what);
			printf("exact p: %s: %ld partial values the same bits\n",
			    c.what, rep.u_compared);
			gpucheck_split_report_free(&rep);
			split_case_close(&c);
		}
	free(s);
	free(v);
}
END_TEST

/*
 * The test faults, the kernel running other bugs than the simulator: a
 * range without its rescale (bug no-rescale) is caught in the partials
 * (where a range has two tiles or more); a merge that forgets b's factor
 * (merge bug no-rescale-one) in O, and in the merges' m and l in the mlu
 * form (the olse form's merged lse and l do not read that factor), with
 * the partials still agreeing.  Every order and form.
 */
START_TEST(test_faults_caught)
{
	static const struct gpucheck_fault no_rescale = { BUG_NO_RESCALE,
	    MERGE_BUG_NONE, BWD_BUG_NONE };
	static const struct gpucheck_fault merge_one = { BUG_NONE,
	    MERGE_BUG_NO_RESCALE_ONE, BWD_BUG_NONE };
	struct problem_spec spec;
	struct split_case c;
	struct gpucheck_split_report rep;
	double rescale;
	int o, f;

	problem_spec_init(&spec);
	spec.tq = 24;
	spec.tk = 96;
	spec.d = spec.dv = 16;
	spec.heads = 4;
	spec.kv_heads = 2;
	spec.input = INPUTS_NORMAL;
	spec.bc = 8;
	for (o = 0; o < 3; o++)
		for (f = 0; f < 2; f++) {
			memset(&c, 0, sizeof c);
			split_case_build(&c, &spec, 8, 8, 3, (enum merge_form)f, f,
			    (enum combine_order)o);
			split_case_check(&c, &no_rescale, &rep);
			ck_assert_msg(rep.part_failures > 0 && !rep.pass, "%s: the "
			    "missing rescale was not caught in the partials",
			    c.what);
			rescale = rep.part_excess;
			gpucheck_split_report_free(&rep);
			split_case_check(&c, &merge_one, &rep);
			ck_assert_msg(rep.part_failures == 0, "%s: a merge fault "
			    "showed in the partials", c.what);
			ck_assert_msg((f != MERGE_MLU || rep.merge_failures > 0) &&
			    rep.out_failures > 0 && !rep.pass, "%s: the merge fault "
			    "was not caught in the merges and O", c.what);
			printf("faults: %s: rescale left out at %.3g, b's merge "
			    "factor forgotten at %.3g of the tolerance\n", c.what,
			    rescale, fmax(rep.merge_excess, rep.out_excess));
			gpucheck_split_report_free(&rep);
			split_case_close(&c);
		}
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("gpu_split");
	TCase *tc = tcase_create("split-KV teaching kernel");

	gpuprobe_require_device();
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_random);
	tcase_add_test(tc, test_empty_partials);
	tcase_add_test(tc, test_masks);
	tcase_add_test(tc, test_dropout);
	tcase_add_test(tc, test_scores);
	tcase_add_test(tc, test_bug_modes);
	tcase_add_test(tc, test_grouped_heads);
	tcase_add_test(tc, test_exact_p);
	tcase_add_test(tc, test_faults_caught);
	suite_add_tcase(s, tc);
	return s;
}
