/*
 * check_gpu.c - the teaching kernel against the simulator, step by step:
 * random problems of every kind agree in m, alpha, l, the numerator, O
 * and lse; several heads agree each with its own simulator; the bug modes
 * agree; the kernel keeps the simulator's order of operations (m the same
 * bits, alpha within 3 units, the numerator and O the same bits where
 * every p is exact, and in fp32 every difference a small fraction of the
 * tolerance); and a kernel with its rescale left out is caught, so the
 * check is shown able to fail; packed batches (--seqlens) agree sequence
 * by sequence.  tests/gpu_planted.sh breaks the order in
 * the tile step (gpu/teach_step.cuh) on purpose and expects this
 * program to fail.
 *
 * CUDA is never started in this process before check forks a test: the
 * probe (gpuprobe.c) runs in a child of its own.  Without a kernel to
 * run the program fails, or skips (77) only where gpu_may_skip() allows.
 */
#include "config.h"

#include "testutil.h"
#include "model/compare.h"
#include "gpu/gpu.h"
#include "gpuprobe.h"
#include "gpu/gpucheck.h"
#include "model/backward.h"
#include "model/merge.h"
#include "model/reference.h"
#include "model/sim.h"
#include "model/varlen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * In fp32 the teaching kernel differs from the simulator only where
 * CUDA's expf and logf differ from glibc's: 3 units of 2^-23 at most per
 * exponential, then carried through sums whose roundings now and then go
 * the other way, half a unit each, of either sign: about 3 + sqrt(600) / 2
 * = 15 units (1.8e-6 relative, 0.018 of the tolerance's 1e-4) in the
 * largest problem here (Tk = 600).  The worst measured on an H200 is
 * 0.0038 of the tolerance (doc/performance.md).  0.05 leaves three times
 * the estimate and thirteen times the measurement; a change in the order
 * of operations that the order checks would miss still has to stay under
 * it.
 */
#define TEACH_FP32_EXCESS 0.05

static const struct gpu_kernel *
teaching(void)
{
	return gpu_kernel_find("teaching");
}

/* Runs the teaching kernel (gpu_run) or fails the test. */
static void
teach_run(const struct problem *ps, int n, const struct tiling *t,
    const struct online_rule *rule, unsigned flags, struct gpu_result *res)
{
	char err[512];

	ck_assert_msg(gpu_run(teaching(), ps, n, t, rule, flags, 0, res, err,
	    sizeof err) == 0, "%s", err);
}

/* Fails the test with the case and the report's figures: the tolerance,
 * and the promise of the simulator's order. */
static void
check_agree(const struct gpucheck_report *rep, const char *what)
{
	ck_assert_msg(rep->failures == 0, "%s: %ld values differ, first at "
	    "step %ld; largest |gpu - sim|: m %g alpha %g l %g acc %g O %g "
	    "lse %g", what, rep->failures, rep->first_failure, rep->max_m,
	    rep->max_alpha, rep->max_l, rep->max_acc, rep->max_o, rep->max_lse);
	ck_assert_msg(rep->acc_compared, "%s: numerator not compared", what);
	ck_assert_msg(rep->order_promised, "%s: no order promised", what);
	ck_assert_msg(rep->m_inexact == 0, "%s: %ld m values are not the "
	    "simulator's bits (the order of the score sum changed)", what,
	    rep->m_inexact);
	ck_assert_msg(rep->alpha_units <= GPUCHECK_ALPHA_UNITS, "%s: alpha "
	    "off by %g units of 2^-23 |alpha|, more than expf's %g", what,
	    rep->alpha_units, GPUCHECK_ALPHA_UNITS);
	ck_assert_msg(rep->u_inexact == 0, "%s: %ld of %ld numerator and O "
	    "values are not the simulator's bits where every p is exact (the "
	    "order of P V's sum changed)", what, rep->u_inexact,
	    rep->u_compared);
	ck_assert_msg(rep->pass, "%s: not passed", what);
}

/* And in fp32, every difference a small fraction of the tolerance. */
static void
check_agree_fp32(const struct gpucheck_report *rep, const char *what)
{
	check_agree(rep, what);
	ck_assert_msg(rep->worst_excess <= TEACH_FP32_EXCESS, "%s: a value at "
	    "%g of the tolerance, over %g: more than expf and logf explain",
	    what, rep->worst_excess, TEACH_FP32_EXCESS);
}

/* The largest |o - ref| over what the rule allows O (gpucheck.h),
 * against the double reference. */
static double
excess_vs_reference(const struct problem *p, const float *o)
{
	struct gpucheck_tol tol;
	double *ref, *ref_lse, worst = 0, allowed;
	char err[256];
	size_t i, n = (size_t)p->tq * p->dv;

	gpucheck_tolerance(teaching(), p, &tol);
	ref = malloc(n * sizeof *ref);
	ref_lse = malloc((size_t)p->tq * sizeof *ref_lse);
	ck_assert(ref != NULL && ref_lse != NULL);
	ck_assert_msg(reference_attention(p, ref, ref_lse, err,
	    sizeof err) == 0, "%s", err);
	for (i = 0; i < n; i++) {
		allowed = gpucheck_atol_acc(&tol, 1.0) + tol.rtol_acc *
		    fabs(ref[i]);
		worst = fmax(worst, fabs((double)o[i] - ref[i]) / allowed);
	}
	free(ref);
	free(ref_lse);
	return worst;
}

/*
 * Packed batches (--seqlens): ragged lengths (a length 1, lengths not
 * multiples of the tiles, Tq_b != Tk_b, causal rows that see no key), no
 * mask, causal and a window, fp32, fp16 and bf16, both orders, two
 * problems in one run: each sequence agrees with its own simulator step
 * by step (the batch's steps numbered on from one sequence to the next),
 * the order promise kept; O and lse, at the sequences' offsets, within
 * the rule of varlen_reference; the rescale left out is caught.
 */
START_TEST(test_varlen)
{
	static const char *const lq[] = { "1,23,9,40", "33,2,17" };
	static const char *const lk[] = { "1,30,9,13", "33,5,1" };
	static const struct gpucheck_fault no_rescale = { BUG_NO_RESCALE,
	    MERGE_BUG_NONE, BWD_BUG_NONE };
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report reps[2];
	struct gpucheck_tol tol;
	struct problem_spec spec;
	struct problem ps[2];
	struct gpu_result res;
	struct tiling t = { 8, 8, ORDER_FA2 };
	double *ref, *ref_lse, worst, allowed;
	char err[512], what[160];
	int c, m, x, b, r;
	size_t no, i;

	opts.kernel = teaching();
	for (c = 0; c < 2; c++)
	for (m = 0; m < 3; m++)
	for (x = 0; x < 6; x++) {
		const enum dtype dt = x % 3 == 0 ? DTYPE_FP32 : x % 3 == 1 ?
		    DTYPE_FP16 : DTYPE_BF16;

		problem_spec_init(&spec);
		spec.seqlens_q = lq[c];
		spec.seqlens_k = lk[c];
		spec.d = spec.dv = 16;
		spec.causal = m == 1;
		if (m == 2) {
			spec.window_set = 1;
			spec.window_left = 5;
			spec.window_right = 2;
		}
		spec.input = INPUTS_NORMAL;
		spec.dtype = dt;
		t.order = x < 3 ? ORDER_FA2 : ORDER_FA1;
		t.br = 8;
		t.bc = 4 + 2 * c;
		spec.br = t.br;
		spec.bc = t.bc;
		snprintf(what, sizeof what, "--seqlens-q %s --seqlens-k %s %s %s "
		    "%s", lq[c], lk[c], m == 0 ? "(no mask)" : m == 1 ? "causal" :
		    "window 5,2", dtype_name(dt), schedule_order_name(t.order));
		for (b = 0; b < 2; b++) {
			spec.seed = 40 + (uint64_t)b;
			ck_assert_msg(problem_build(&spec, &ps[b], err,
			    sizeof err) == 0, "%s", err);
		}
		ck_assert_msg(gpucheck_run_many(ps, 2, &t, &rule, &opts, reps,
		    err, sizeof err) == 0, "%s: %s", what, err);
		for (b = 0; b < 2; b++) {
			if (dt == DTYPE_FP32)
				check_agree_fp32(&reps[b], what);
			else
				check_agree(&reps[b], what);
			ck_assert_int_gt(reps[b].steps, 0);
			gpucheck_report_free(&reps[b]);
		}
		teach_run(ps, 2, &t, &rule, 0, &res);
		no = (size_t)ps[0].tq * ps[0].dv;
		ref = malloc(no * sizeof *ref);
		ref_lse = malloc((size_t)ps[0].tq * sizeof *ref_lse);
		ck_assert(ref != NULL && ref_lse != NULL);
		for (b = 0; b < 2; b++) {
			ck_assert_msg(varlen_reference(&ps[b], ref, ref_lse, err,
			    sizeof err) == 0, "%s", err);
			gpucheck_tolerance(teaching(), &ps[b], &tol);
			worst = 0;
			for (i = 0; i < no; i++) {
				allowed = gpucheck_atol_acc(&tol, 1.0) +
				    tol.rtol_acc * fabs(ref[i]);
				ck_assert_msg(isfinite(res.o[b * no + i]), "%s: O "
				    "not written", what);
				worst = fmax(worst, fabs(res.o[b * no + i] - ref[i]) /
				    allowed);
			}
			for (r = 0; r < ps[0].tq; r++) {
				const float g = res.lse[(size_t)b * ps[0].tq + r];

				if (isinf(ref_lse[r]))
					ck_assert_msg(g == ref_lse[r], "%s: row %d sees "
					    "no key, lse %g", what, r, (double)g);
				else
					worst = fmax(worst, fabs(g - ref_lse[r]) /
					    (tol.rtol * (1.0 + fabs(ref_lse[r]))));
			}
			ck_assert_msg(worst <= 1.0, "%s problem %d: at %g of the "
			    "tolerance of varlen_reference", what, b, worst);
		}
		free(ref);
		free(ref_lse);
		gpu_result_free(&res);
		if (c == 0 && m == 0 && x == 0) {
			opts.fault = &no_rescale;
			ck_assert_msg(gpucheck_run_many(ps, 1, &t, &rule, &opts,
			    reps, err, sizeof err) == 0, "%s", err);
			ck_assert_msg(!reps[0].pass, "%s: the fault went unnoticed",
			    what);
			ck_assert_int_ge(reps[0].first_failure, 0);
			gpucheck_report_free(&reps[0]);
			opts.fault = NULL;
		}
		problem_free(&ps[0]);
		problem_free(&ps[1]);
	}
}
END_TEST

/* 120 random fp32 problems: ragged tiles, Tq != Tk, causal, scores with
 * masked entries and rows, both orders, both conventions. */
START_TEST(test_random_fp32)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct gpucheck_report rep;
	char err[512];
	int n, fa1 = 0, normalized = 0, causal = 0, scores = 0, ragged = 0;
	double worst_m = 0, worst_excess = 0;

	inputs_rng_seed(&rng, 4004);
	for (n = 0; n < 120; n++) {
		tu_random_case(&rng, 70, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    DTYPE_FP32, &c);
		ck_assert_msg(gpucheck_run(&c.p, &c.t, &c.rule, &rep, err,
		    sizeof err) == 0, "case %d (%s): %s", n, c.what, err);
		check_agree_fp32(&rep, c.what);
		ck_assert_int_gt(rep.steps, 0);
		fa1 += c.t.order == ORDER_FA1;
		normalized += c.rule.convention == CONV_NORMALIZED;
		causal += c.p.causal;
		scores += c.p.scores_mode;
		ragged += c.p.tq % c.t.br != 0 || c.p.tk % c.t.bc != 0;
		worst_m = fmax(worst_m, rep.max_m);
		worst_excess = fmax(worst_excess, rep.worst_excess);
		gpucheck_report_free(&rep);
		tu_case_free(&c);
	}
	/* The draw really covered what the comment above claims. */
	ck_assert_int_ge(fa1, 20);
	ck_assert_int_ge(normalized, 20);
	ck_assert_int_ge(causal, 20);
	ck_assert_int_ge(scores, 10);
	ck_assert_int_ge(ragged, 20);
	printf("random fp32: 120 cases agree; largest |dm| %g, worst value at "
	    "%.3g of the tolerance\n", worst_m, worst_excess);
}
END_TEST

/* fp16 and bf16: P is rounded before P V on both sides. */
START_TEST(test_random_narrow)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct gpucheck_report rep;
	char err[512];
	int n;

	inputs_rng_seed(&rng, 99);
	for (n = 0; n < 40; n++) {
		tu_random_case(&rng, 64, TU_CAUSAL, n % 2 ? DTYPE_BF16 : DTYPE_FP16,
		    &c);
		ck_assert_msg(gpucheck_run(&c.p, &c.t, &c.rule, &rep, err,
		    sizeof err) == 0, "case %d (%s): %s", n, c.what, err);
		check_agree(&rep, c.what);
		gpucheck_report_free(&rep);
		tu_case_free(&c);
	}
}
END_TEST

/* Heads and batch: B*H problems of one shape in one launch, each held to
 * its own simulator; their inputs (and so outputs) differ. */
START_TEST(test_heads)
{
	struct inputs_rng rng;
	struct problem_spec spec;
	struct problem ps[6];
	struct gpucheck_report reps[6];
	struct gpu_result res;
	struct tiling t;
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512], what[160];
	int trial, b;
	size_t no;

	inputs_rng_seed(&rng, 31);
	for (trial = 0; trial < 8; trial++) {
		problem_spec_init(&spec);
		spec.tq = 1 + (int)(inputs_rng_next(&rng) % 60);
		spec.tk = 1 + (int)(inputs_rng_next(&rng) % 60);
		spec.d = 1 + (int)(inputs_rng_next(&rng) % 20);
		spec.dv = 1 + (int)(inputs_rng_next(&rng) % 20);
		spec.causal = trial % 2;
		spec.input = INPUTS_NORMAL;
		t.br = 1 + (int)(inputs_rng_next(&rng) % 24);
		t.bc = 1 + (int)(inputs_rng_next(&rng) % 24);
		t.order = trial % 4 < 2 ? ORDER_FA2 : ORDER_FA1;
		rule.convention = trial % 3 ? CONV_UNNORMALIZED : CONV_NORMALIZED;
		rule.bug = BUG_NONE;
		spec.bc = t.bc;
		for (b = 0; b < 6; b++) {
			spec.seed = 100 + (uint64_t)b;
			ck_assert_msg(problem_build(&spec, &ps[b], err, sizeof err) == 0,
			    "%s", err);
		}
		snprintf(what, sizeof what, "heads trial %d: Tq=%d Tk=%d d=%d dv=%d "
		    "Br=%d Bc=%d %s %s%s", trial, spec.tq, spec.tk, spec.d, spec.dv,
		    t.br, t.bc, schedule_order_name(t.order),
		    online_convention_name(rule.convention),
		    spec.causal ? " causal" : "");
		ck_assert_msg(gpucheck_run_many(ps, 6, &t, &rule, NULL, reps, err,
		    sizeof err) == 0, "%s: %s", what, err);
		for (b = 0; b < 6; b++)
			check_agree_fp32(&reps[b], what);

		/* Problem 1's output is not problem 0's. */
		teach_run(ps, 6, &t, &rule, 0, &res);
		no = (size_t)spec.tq * spec.dv;
		ck_assert_msg(memcmp(res.o, res.o + no, no * sizeof *res.o) != 0,
		    "%s: heads 0 and 1 gave the same output", what);
		gpu_result_free(&res);
		for (b = 0; b < 6; b++) {
			gpucheck_report_free(&reps[b]);
			problem_free(&ps[b]);
		}
	}
}
END_TEST

/*
 * A random problem under mask_rule.h's rules: a window of any sides
 * (often with a left edge), softcap, ALiBi with a slope of the head's
 * own (seed), each on or off; ragged tiles, Tq != Tk, both orders and
 * conventions; and, when bug is set, the mask bug the rules allow.
 */
static void
masked_case(struct inputs_rng *rng, enum dtype dtype, double slope, int bug,
    struct problem *p, struct tiling *t, struct online_rule *rule,
    char *what, size_t len)
{
	struct problem_spec spec;
	char err[256];

	problem_spec_init(&spec);
	spec.tq = 1 + (int)(inputs_rng_next(rng) % 70);
	spec.tk = 1 + (int)(inputs_rng_next(rng) % 70);
	spec.d = 1 + (int)(inputs_rng_next(rng) % 20);
	spec.dv = 1 + (int)(inputs_rng_next(rng) % 20);
	spec.dtype = dtype;
	spec.input = INPUTS_NORMAL;
	spec.seed = inputs_rng_next(rng);
	spec.window_set = 1;
	spec.window_left = (int)(inputs_rng_next(rng) % 30) - 1;
	spec.window_right = (int)(inputs_rng_next(rng) % 30) - 1;
	if (inputs_rng_next(rng) % 2) {
		spec.softcap_set = 1;
		spec.softcap = 0.5 + (double)(inputs_rng_next(rng) % 50) / 10.0;
	}
	if (slope > 0) {
		spec.alibi_set = 1;
		spec.alibi = slope;
	}
	t->br = 1 + (int)(inputs_rng_next(rng) % 24);
	t->bc = 1 + (int)(inputs_rng_next(rng) % 24);
	t->order = inputs_rng_next(rng) % 2 ? ORDER_FA1 : ORDER_FA2;
	spec.bc = t->bc;
	rule->convention = inputs_rng_next(rng) % 2 ? CONV_NORMALIZED :
	    CONV_UNNORMALIZED;
	rule->bug = BUG_NONE;
	rule->mask_bug = MASK_BUG_NONE;
	if (bug && spec.softcap_set && inputs_rng_next(rng) % 2)
		rule->mask_bug = MASK_BUG_MAX_BEFORE_CAP;
	else if (bug && spec.window_left >= 0)
		rule->mask_bug = MASK_BUG_WINDOW_EDGE;
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
	snprintf(what, len, "Tq=%d Tk=%d d=%d dv=%d Br=%d Bc=%d %s %s window "
	    "(%d, %d) softcap %g alibi %g %s mask-bug %s", p->tq, p->tk, p->d,
	    p->dv, t->br, t->bc, schedule_order_name(t->order),
	    online_convention_name(rule->convention), p->mask.left,
	    p->mask.right, (double)p->mask.softcap, slope, dtype_name(dtype),
	    rule->mask_bug == MASK_BUG_NONE ? "none" :
	    rule->mask_bug == MASK_BUG_MAX_BEFORE_CAP ? "softcap-after-max" :
	    "window-off-by-one");
}

/*
 * The rules of mask_rule.h on the teaching kernel, step by step against
 * the simulator: 100 fp32 problems (windows, softcap, ALiBi; each mask
 * bug mode too, which the kernel runs as the simulator does) in the
 * simulator's order (m the same bits: the cap's tanh is mask_rule_tanh,
 * the same roundings on both sides), 30 in fp16 and bf16; and heads of
 * one launch, each with its own ALiBi slope, each held to its own
 * simulator.
 */
START_TEST(test_masks)
{
	struct inputs_rng rng;
	struct problem p, ps[4];
	struct tiling t;
	struct online_rule rule;
	struct gpucheck_report rep, reps[4];
	char err[512], what[256];
	int n, b, bugs = 0, windows = 0, caps = 0;

	inputs_rng_seed(&rng, 2828);
	for (n = 0; n < 130; n++) {
		masked_case(&rng, n < 100 ? DTYPE_FP32 : n % 2 ? DTYPE_FP16 :
		    DTYPE_BF16, n % 3 ? 0.05 * (n % 7 + 1) : 0.0, n % 4 == 0, &p, &t,
		    &rule, what, sizeof what);
		ck_assert_msg(gpucheck_run(&p, &t, &rule, &rep, err,
		    sizeof err) == 0, "case %d (%s): %s", n, what, err);
		if (n < 100)
			check_agree_fp32(&rep, what);
		else
			check_agree(&rep, what);
		bugs += rule.mask_bug != MASK_BUG_NONE;
		windows += p.mask.left >= 0;
		caps += p.mask.softcap > 0;
		gpucheck_report_free(&rep);
		problem_free(&p);
	}
	ck_assert_int_ge(bugs, 10);
	ck_assert_int_ge(windows, 60);
	ck_assert_int_ge(caps, 40);

	for (n = 0; n < 4; n++) {
		for (b = 0; b < 4; b++) {
			/* the same draw for every head (one shape), each with
			 * its own slope */
			inputs_rng_seed(&rng, 2900 + (uint64_t)n);
			masked_case(&rng, DTYPE_FP32, 0.5 / (1 << b), 0, &ps[b], &t,
			    &rule, what, sizeof what);
		}
		ck_assert_msg(gpucheck_run_many(ps, 4, &t, &rule, NULL, reps, err,
		    sizeof err) == 0, "%s: %s", what, err);
		for (b = 0; b < 4; b++) {
			check_agree_fp32(&reps[b], what);
			gpucheck_report_free(&reps[b]);
			problem_free(&ps[b]);
		}
	}
}
END_TEST

/*
 * Dropout on the teaching kernel, step by step against the simulator:
 * the keep bits are mask_rule_keep's on both sides (Philox4x32-10 in
 * integers: the same bits), so 60 fp32 problems (with windows, softcap
 * and ALiBi as masked_case draws them, p from 0.1 to 0.8, any seed and
 * offset) agree as the unmasked ones do, 20 in fp16 and bf16 within
 * their tolerance; and 3 heads of one launch, each drawing its own bits
 * (head0 + b), each held to its own simulator.
 */
START_TEST(test_dropout)
{
	struct inputs_rng rng;
	struct problem p, ps[3];
	struct tiling t;
	struct online_rule rule;
	struct gpucheck_report rep, reps[3];
	char err[512], what[320];
	int n, b;

	inputs_rng_seed(&rng, 2626);
	for (n = 0; n < 80; n++) {
		masked_case(&rng, n < 60 ? DTYPE_FP32 : n % 2 ? DTYPE_FP16 :
		    DTYPE_BF16, n % 3 ? 0.1 : 0.0, 0, &p, &t, &rule, what,
		    sizeof what);
		mask_rule_set_dropout(&p.mask, 0.1 * (double)(1 + n % 8),
		    inputs_rng_next(&rng), (uint32_t)(n % 5));
		snprintf(what + strlen(what), sizeof what - strlen(what),
		    " dropout %g", (double)p.mask.dropout);
		ck_assert_msg(gpucheck_run(&p, &t, &rule, &rep, err,
		    sizeof err) == 0, "case %d (%s): %s", n, what, err);
		if (n < 60)
			check_agree_fp32(&rep, what);
		else
			check_agree(&rep, what);
		gpucheck_report_free(&rep);
		problem_free(&p);
	}
	for (n = 0; n < 3; n++) {
		for (b = 0; b < 3; b++) {
			inputs_rng_seed(&rng, 2700 + (uint64_t)n);
			masked_case(&rng, DTYPE_FP32, 0.0, 0, &ps[b], &t, &rule, what,
			    sizeof what);
			mask_rule_set_dropout(&ps[b].mask, 0.3, 77, 2);
			ps[b].head0 = b;
		}
		ck_assert_msg(gpucheck_run_many(ps, 3, &t, &rule, NULL, reps, err,
		    sizeof err) == 0, "%s: %s", what, err);
		for (b = 0; b < 3; b++) {
			check_agree_fp32(&reps[b], what);
			gpucheck_report_free(&reps[b]);
			problem_free(&ps[b]);
		}
	}
}
END_TEST

/* A ramp problem: the running max rises tile after tile, so every
 * rescale factor alpha < 1 and leaving one out shows. */
static void
ramp_problem(int tq, int tk, int d, struct problem *p)
{
	struct problem_spec spec;
	char err[256];

	problem_spec_init(&spec);
	spec.tq = tq;
	spec.tk = tk;
	spec.d = d;
	spec.input = INPUTS_RAMP;
	spec.bc = 8;
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
}

/* The injected fault: the kernel leaves the rescale out (it runs bug
 * no-rescale, the simulator none); the comparison must say so, at a
 * step, by far more than the tolerance. */
START_TEST(test_fault_caught)
{
	static const struct gpucheck_fault no_rescale = { BUG_NO_RESCALE,
	    MERGE_BUG_NONE, BWD_BUG_NONE };
	struct gpucheck_opts fault = { 0, NULL, &no_rescale };
	struct gpucheck_report rep;
	struct problem p;
	struct tiling t = { 8, 8, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512];
	int order, conv;

	ramp_problem(48, 48, 16, &p);
	for (order = 0; order < 2; order++) {
		for (conv = 0; conv < 2; conv++) {
			t.order = (enum schedule_order)order;
			rule.convention = (enum online_convention)conv;
			/* The control: without the fault they agree. */
			ck_assert_int_eq(gpucheck_run(&p, &t, &rule, &rep, err,
			    sizeof err), 0);
			check_agree_fp32(&rep, "ramp without fault");
			gpucheck_report_free(&rep);

			ck_assert_int_eq(gpucheck_run_many(&p, 1, &t, &rule, &fault,
			    &rep, err, sizeof err), 0);
			ck_assert_msg(!rep.pass, "%s %s: the fault went unnoticed",
			    schedule_order_name(t.order),
			    online_convention_name(rule.convention));
			ck_assert_int_gt(rep.failures, 0);
			ck_assert_int_ge(rep.first_failure, 0);
			ck_assert_msg(rep.max_l > 1e-2, "l moved only %g", rep.max_l);
			ck_assert_msg(rep.worst_excess > 100, "only %g of the tolerance",
			    rep.worst_excess);
			/* alpha itself is traced true: the fault is in its use. */
			ck_assert_msg(rep.max_alpha <= GPUCHECK_RTOL * 2, "alpha %g",
			    rep.max_alpha);
			gpucheck_report_free(&rep);
		}
	}
	problem_free(&p);
}
END_TEST

/* The bug modes run on the GPU as in the simulator, and do damage: the
 * bug-free output is within the rule of the double reference, every
 * bug's output far outside it. */
START_TEST(test_bug_modes)
{
	struct gpucheck_report rep;
	struct gpu_result res;
	struct problem p;
	struct tiling t = { 8, 8, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512], what[96];
	double excess;
	int conv, bug, order;

	ramp_problem(48, 48, 16, &p);
	for (order = 0; order < 2; order++)
	for (conv = 0; conv < 2; conv++)
	for (bug = 0; bug < ONLINE_BUGS; bug++) {
		t.order = (enum schedule_order)order;
		rule.convention = (enum online_convention)conv;
		rule.bug = (enum online_bug)bug;
		if (!online_rule_valid(&rule))
			continue;
		snprintf(what, sizeof what, "%s %s bug %s",
		    schedule_order_name(t.order), online_convention_name(conv),
		    online_bug_name(rule.bug));
		ck_assert_msg(gpucheck_run(&p, &t, &rule, &rep, err, sizeof err) == 0,
		    "%s: %s", what, err);
		check_agree_fp32(&rep, what);
		gpucheck_report_free(&rep);
		teach_run(&p, 1, &t, &rule, 0, &res);
		excess = excess_vs_reference(&p, res.o);
		if (rule.bug == BUG_NONE)
			ck_assert_msg(excess <= 1.0, "%s: O at %g of the tolerance "
			    "from the reference", what, excess);
		else
			ck_assert_msg(excess > 100.0, "%s: the bug did no harm (O "
			    "at %g of the tolerance)", what, excess);
		gpu_result_free(&res);
	}
	problem_free(&p);
}
END_TEST

/* The seed's example: S = [1 2 1001 1002], V = [2 -1 4 8], Bc = 2. */
START_TEST(test_seed_example)
{
	static const float s[4] = { 1, 2, 1001, 1002 }, v[4] = { 2, -1, 4, 8 };
	double want = (4.0 * exp(-1.0) + 8.0) / (exp(-1.0) + 1.0);
	struct tiling t = { 1, 2, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpu_result res;
	struct problem p;
	int k;

	tu_scores_problem(s, 1, 4, v, 1, &p);
	for (k = 0; k < 4; k++) {
		t.order = k % 2 ? ORDER_FA1 : ORDER_FA2;
		rule.convention = k / 2 ? CONV_NORMALIZED : CONV_UNNORMALIZED;
		teach_run(&p, 1, &t, &rule, GPU_TRACE, &res);
		ck_assert_double_eq_tol(res.o[0], want, 1e-5 * want);
		ck_assert_double_eq_tol(res.lse[0], 1002.0 + log(1.0 + exp(-1.0)),
		    1e-3);
		/* Two steps: m goes 2, then 1002, and alpha = exp(-1000) = 0. */
		ck_assert_int_eq(res.nsteps, 2);
		ck_assert_float_eq(res.m_new[0], 2.0f);
		ck_assert_float_eq(res.alpha[0], 0.0f);
		ck_assert_float_eq(res.m_new[1], 1002.0f);
		ck_assert_float_eq(res.alpha[1], 0.0f);
		gpu_result_free(&res);
	}
	problem_free(&p);
}
END_TEST

/* Causal with Tq > Tk: the first rows see no key; O = 0, lse = -inf. */
START_TEST(test_rows_without_keys)
{
	struct problem_spec spec;
	struct problem p;
	struct gpu_result res;
	struct gpucheck_report rep;
	struct tiling t = { 4, 2, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512];
	int k, r, x;

	problem_spec_init(&spec);
	spec.tq = 20;
	spec.tk = 5;
	spec.d = 3;
	spec.causal = 1;
	spec.input = INPUTS_NORMAL;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	for (k = 0; k < 4; k++) {
		t.order = k % 2 ? ORDER_FA1 : ORDER_FA2;
		rule.convention = k / 2 ? CONV_NORMALIZED : CONV_UNNORMALIZED;
		ck_assert_int_eq(gpucheck_run(&p, &t, &rule, &rep, err, sizeof err), 0);
		check_agree_fp32(&rep, "causal Tq=20 Tk=5");
		gpucheck_report_free(&rep);
		teach_run(&p, 1, &t, &rule, 0, &res);
		/* Row r sees keys c <= r - 15: rows 0 .. 14 see none. */
		for (r = 0; r < 15; r++) {
			ck_assert(isinf(res.lse[r]) && res.lse[r] < 0);
			for (x = 0; x < p.dv; x++)
				ck_assert_float_eq(res.o[r * p.dv + x], 0.0f);
		}
		ck_assert(isfinite(res.lse[15]));
		gpu_result_free(&res);
	}
	problem_free(&p);
}
END_TEST

/* Larger tiles: over 48 KiB of shared memory per block (Br = Bc = 128,
 * d = 64 take about 200 KB), and a ragged d = 64 problem. */
START_TEST(test_large_tiles)
{
	struct problem_spec spec;
	struct problem p;
	struct gpucheck_report rep;
	struct tiling t;
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512];
	int order;

	problem_spec_init(&spec);
	spec.tq = 300;
	spec.tk = 517;
	spec.d = spec.dv = 64;
	spec.causal = 1;
	spec.input = INPUTS_SPIKE;
	spec.bc = 128;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	for (order = 0; order < 2; order++) {
		t.br = 128;
		t.bc = 128;
		t.order = (enum schedule_order)order;
		ck_assert_msg(gpucheck_run(&p, &t, &rule, &rep, err, sizeof err) == 0,
		    "%s", err);
		check_agree_fp32(&rep, "Tq=300 Tk=517 d=64 Br=Bc=128");
		gpucheck_report_free(&rep);
		t.br = 48;
		t.bc = 40;
		ck_assert_msg(gpucheck_run(&p, &t, &rule, &rep, err, sizeof err) == 0,
		    "%s", err);
		check_agree_fp32(&rep, "Tq=300 Tk=517 d=64 Br=48 Bc=40");
		gpucheck_report_free(&rep);
	}
	problem_free(&p);
}
END_TEST

/* Tiles beyond shared memory: refused, naming what they need. */
START_TEST(test_tiles_too_large)
{
	struct problem_spec spec;
	struct problem p;
	struct gpu_result res;
	struct tiling t = { 2048, 2048, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512];

	problem_spec_init(&spec);
	spec.tq = spec.tk = 2048;
	spec.d = 64;
	spec.input = INPUTS_NORMAL;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	err[0] = '\0';
	ck_assert_int_eq(gpu_run(teaching(), &p, 1, &t, &rule, 0, 0, &res, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "shared memory") != NULL &&
	    strstr(err, "Br=2048") != NULL, "message: %s", err);
	ck_assert(res.o == NULL);
	problem_free(&p);
}
END_TEST

/*
 * The view's G key: a gpucheck_trace gives the simulator's step values,
 * m bit for bit and the rest within the rule; a second trace of a problem
 * rebuilt with other inputs gives the new problem's values, not a cached
 * copy of the old ones.
 */
START_TEST(test_trace_object)
{
	struct gpucheck_trace *tr;
	struct problem p;
	struct sim *sim;
	const struct sim_view *v;
	struct tiling t = { 5, 7, ORDER_FA1 };
	struct online_rule rule = { CONV_NORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem_spec spec;
	float m[8], a[8], l[8], first_m;
	char err[512];
	long k;
	int r, pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass == 0)
			ramp_problem(23, 30, 4, &p);
		else {
			/* Same shape, other inputs. */
			problem_spec_init(&spec);
			spec.tq = 23;
			spec.tk = 30;
			spec.d = 4;
			spec.input = INPUTS_NORMAL;
			spec.bc = 8;
			ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err),
			    0);
		}
		sim = sim_new(&p, &t, &rule, err, sizeof err);
		ck_assert_msg(sim != NULL, "%s", err);
		tr = gpucheck_trace_new(teaching(), &p, &t, &rule, err,
		    sizeof err);
		ck_assert_msg(tr != NULL, "%s", err);
		for (k = sim_steps(sim) - 1; k >= 0; k--) {
			ck_assert_int_eq(sim_seek(sim, k, SIM_PHASE_LAST), 0);
			v = sim_view(sim);
			ck_assert_msg(gpucheck_trace_step(tr, k, m, a, l, err,
			    sizeof err) == 0, "step %ld: %s", k, err);
			for (r = 0; r < v->rows; r++) {
				ck_assert_msg(memcmp(&m[r], &v->m_new[r],
				    sizeof m[r]) == 0, "step %ld row %d: m %g, "
				    "sim %g", k, r, m[r], v->m_new[r]);
				ck_assert(gpucheck_trace_agrees(tr, a[r],
				    v->alpha[r]));
				ck_assert(gpucheck_trace_agrees(tr, l[r],
				    v->l_new[r]));
			}
		}
		ck_assert_int_eq(gpucheck_trace_step(tr, 0, m, a, l, err,
		    sizeof err), 0);
		if (pass == 0)
			first_m = m[0];
		else
			ck_assert_msg(m[0] != first_m, "the new problem's trace "
			    "gave the old m %g", m[0]);
		ck_assert_int_eq(gpucheck_trace_step(tr, sim_steps(sim), m, a, l,
		    err, sizeof err), -1);
		ck_assert_msg(strstr(err, "out of range") != NULL, "%s", err);
		/* The rule is the one compare uses: a value 1e-3 off is out. */
		ck_assert(!gpucheck_trace_agrees(tr, 1.001, 1.0));
		gpucheck_trace_free(tr);
		sim_free(sim);
		problem_free(&p);
	}
}
END_TEST

/*
 * The order of operations, where it shows most.  A scores problem whose
 * row maxima jump by 10 to 80 from tile to tile: every alpha after the
 * first tile is exp(x) with x in [-80, -10], where expf on both sides
 * stays within 3 units of 2^-23 and __expf (an error of about 2 + 1.2 |x|
 * units: its argument x log2(e) is rounded first) goes beyond for most.
 * And Q K^T at d = 64, where summing the products in another order, or
 * fusing them into FMAs, moves S and so m by a unit now and then.  Both
 * loop orders, both conventions.
 */
/*
 * A causal scores problem (Tq = 24, Tk = 64) whose row r is one value
 * level(r) on every key, V of N(0, 1) (dv = 8): every p is exp(0) = 1
 * or exp(-inf) = 0 and every alpha 0 or 1, exactly, on both sides
 * (gpucheck_exact_p), so the numerator is a sum of V's entries, 16 a
 * tile, in the order of the keys: the order the check holds to the bits.
 */
static void
exact_p_problem(struct problem *p)
{
	enum { TQ = 24, TK = 64, DV = 8 };
	struct problem_spec spec;
	struct inputs_rng rng;
	float *s, *v;
	char err[256];
	int r, c;

	s = malloc((size_t)TQ * TK * sizeof *s);
	v = malloc((size_t)TK * DV * sizeof *v);
	ck_assert(s != NULL && v != NULL);
	inputs_rng_seed(&rng, 2024);
	for (r = 0; r < TQ; r++)
		for (c = 0; c < TK; c++)
			s[(size_t)r * TK + c] = (float)(r % 5) - 2.0f;
	for (c = 0; c < TK * DV; c++)
		v[c] = (float)inputs_rng_normal(&rng);
	problem_spec_init(&spec);
	spec.s.data = s;
	spec.s.rows = TQ;
	spec.s.cols = TK;
	spec.v.data = v;
	spec.v.rows = TK;
	spec.v.cols = DV;
	spec.causal = 1;
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
	ck_assert(gpucheck_exact_p(p));
	free(s);
	free(v);
}

START_TEST(test_order_promise)
{
	enum { TQ = 8, TK = 512, BC = 16 };
	struct inputs_rng rng;
	struct gpucheck_report rep;
	struct problem_spec spec;
	struct problem p;
	struct tiling t;
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	float *s, *v;
	double level;
	char err[512], what[96];
	int r, j, c, top, k, qk;

	s = malloc((size_t)TQ * TK * sizeof *s);
	v = malloc((size_t)TK * 4 * sizeof *v);
	ck_assert(s != NULL && v != NULL);
	inputs_rng_seed(&rng, 1010);
	for (r = 0; r < TQ; r++) {
		level = 0;
		for (j = 0; j < TK / BC; j++) {
			level += 10.0 + 70.0 * inputs_rng_uniform(&rng);
			top = (int)(inputs_rng_next(&rng) % BC);
			for (c = 0; c < BC; c++) {
				s[(size_t)r * TK + j * BC + c] = (float)(c == top ?
				    level : level - 30.0 * inputs_rng_uniform(&rng));
			}
		}
	}
	for (c = 0; c < TK * 4; c++)
		v[c] = (float)inputs_rng_normal(&rng);
	tu_scores_problem(s, TQ, TK, v, 4, &p);
	free(s);
	free(v);
	for (qk = 0; qk < 3; qk++) {
		if (qk == 2) {
			problem_free(&p);
			exact_p_problem(&p);
		} else if (qk) {
			problem_free(&p);
			problem_spec_init(&spec);
			spec.tq = 64;
			spec.tk = 256;
			spec.d = spec.dv = 64;
			spec.input = INPUTS_NORMAL;
			spec.bc = 32;
			ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err),
			    0);
		}
		for (k = 0; k < 4; k++) {
			t.br = qk == 1 ? 32 : qk == 2 ? 8 : TQ;
			t.bc = qk == 1 ? 32 : BC;
			t.order = k % 2 ? ORDER_FA1 : ORDER_FA2;
			rule.convention = k / 2 ? CONV_NORMALIZED : CONV_UNNORMALIZED;
			snprintf(what, sizeof what, "%s, %s %s", qk == 2 ?
			    "causal scores, one value a row" : qk ? "Q K^T d=64" :
			    "scores with jumps of 10 to 80",
			    schedule_order_name(t.order),
			    online_convention_name(rule.convention));
			ck_assert_msg(gpucheck_run(&p, &t, &rule, &rep, err,
			    sizeof err) == 0, "%s: %s", what, err);
			check_agree_fp32(&rep, what);
			/* Only where every p is exact is u held to the bits. */
			ck_assert_msg(qk == 2 ? rep.u_compared > 0 :
			    rep.u_compared == 0, "%s: %ld values held to the bits",
			    what, rep.u_compared);
			printf("order: %s: m the same bits, alpha within %.2g "
			    "units, %ld numerator and O values the same bits, worst "
			    "value at %.3g of the tolerance\n", what, rep.alpha_units,
			    rep.u_compared, rep.worst_excess);
			gpucheck_report_free(&rep);
		}
	}
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("gpu");
	TCase *tc = tcase_create("teaching kernel");

	gpuprobe_require_device();
	/* Each test starts CUDA afresh in its own forked process. */
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_random_fp32);
	tcase_add_test(tc, test_random_narrow);
	tcase_add_test(tc, test_masks);
	tcase_add_test(tc, test_dropout);
	tcase_add_test(tc, test_heads);
	tcase_add_test(tc, test_fault_caught);
	tcase_add_test(tc, test_bug_modes);
	tcase_add_test(tc, test_seed_example);
	tcase_add_test(tc, test_rows_without_keys);
	tcase_add_test(tc, test_large_tiles);
	tcase_add_test(tc, test_tiles_too_large);
	tcase_add_test(tc, test_trace_object);
	tcase_add_test(tc, test_order_promise);
	tcase_add_test(tc, test_varlen);
	suite_add_tcase(s, tc);
	return s;
}
