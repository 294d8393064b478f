/*
 * check_gpu_bwd.c - the teaching kernel's backward pass (gpu/teach_bwd.cu,
 * through the kernel table and gpu_backward_run) against the simulator's
 * backward (src/model/backward.c), through gpucheck_bwd.
 *
 * Which dQ, and why.  The kernel gets dQ two ways, and they are checked
 * differently because they promise different things:
 *   ordered  each key block's part of dQ_i goes to a slot of its own and
 *            a second kernel adds them in the order of j, as the
 *            simulator does: every partial sum exists, in the
 *            simulator's order, so dK_j, dV_j and dQ_i are held to the
 *            simulator's after EVERY backward step (the trace), and the
 *            run gives the same bits twice;
 *   atomic   FlashAttention 2's: the key blocks add their parts into dQ
 *            with atomicAdd in whatever order they finish, so no partial
 *            dQ has a simulator value and the last bits change from run
 *            to run: only the FINAL dQ, dK and dV are held to the
 *            simulator's (within the same bound: the other order costs a
 *            few more roundings of the same magnitudes).
 * The bound (gpucheck_bwd.h): rtol times the sum of the magnitudes of
 * the terms an entry has added so far, rtol from teach_bwd.cu (1e-4 in
 * fp32, 2^-10 in fp16, 2^-7 in bf16).  Random problems cover causal,
 * ragged tiles, Tq != Tk, dv != d, scores problems, rows that see no
 * key, all three dtypes and several heads; every backward bug mode runs
 * on both sides; the injected fault (the kernel alone runs bug no-scale)
 * must be caught at a step (ordered) and at the end (atomic).
 * tests/gpu_planted.sh changes the score, the mask and the rounding the
 * forward shares (gpu/teach_step.cuh, tile_rule.h's use) and expects
 * this program to fail.
 *
 * The naive kernel's backward (gpu/naive_bwd.cu: standard attention's
 * backward, P and dS whole in device memory, no tiles, no trace) is held
 * to the same simulator with the same rtol, at the end only: random
 * problems as above, both --dq modes (which must give it the same bits),
 * several heads of one launch with rows that see no key, and its device
 * memory figure against what it held.  gpu_planted.sh's "naive ..."
 * plants (D left out, the last row dropped, the causal mask one key
 * wide) must make this program fail.
 *
 * Without a device that can run the kernel the program fails, or skips
 * (77) only where the hardware is missing and FLASHSTEP_REQUIRE_GPU is
 * not set (gpuprobe.c).
 */
#include "config.h"

#include "testutil.h"
#include "gpu/gpu.h"
#include "gpu/gpucheck_bwd.h"
#include "gpuprobe.h"
#include "model/backward.h"
#include "model/dtype.h"
#include "model/merge.h"
#include "model/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BWD_MAX_HEADS 3

static const struct online_rule rule_plain = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };

static const struct gpu_kernel *
teaching(void)
{
	return gpu_kernel_find("teaching");
}

static const struct gpu_kernel *
naive(void)
{
	return gpu_kernel_find("naive");
}

/* n dO arrays (Tq, dv) one after another, N(0, 1) rounded to the dtype. */
static float *
bwd_douts(const struct problem *p, int n, uint64_t seed)
{
	struct inputs_rng rng;
	size_t i, all = (size_t)n * p->tq * p->dv;
	float *x = malloc(all * sizeof *x);

	ck_assert(x != NULL);
	inputs_rng_seed(&rng, seed);
	for (i = 0; i < all; i++)
		x[i] = dtype_round(p->dtype, (float)inputs_rng_normal(&rng));
	return x;
}

/* gpucheck_bwd of n problems; asserts they ran, returns how many agree. */
static int
bwd_check(const struct problem *ps, int n, const struct tiling *t,
    const struct gpucheck_bwd_opts *o, const float *dout,
    struct gpucheck_bwd_report *reps, const char *what)
{
	char err[512];
	int b, agree = 0;

	ck_assert_msg(gpucheck_bwd_run_many(ps, n, t, &rule_plain, dout, o, reps,
	    err, sizeof err) == 0, "%s: %s", what, err);
	for (b = 0; b < n; b++)
		agree += reps[b].pass;
	return agree;
}

/* The simulator's forward of p: O, lse and the row max, malloc'd into
 * in (free them with bwd_forward_free). */
static void
bwd_forward(const struct problem *p, const struct tiling *t,
    struct gpu_bwd_inputs *in, const float *dout)
{
	float *o = malloc((size_t)p->tq * p->dv * sizeof *o);
	float *lse = malloc((size_t)p->tq * sizeof *lse);
	float *m = malloc((size_t)p->tq * sizeof *m);
	char err[256];
	struct sim *sim = sim_new(p, t, &rule_plain, err, sizeof err);

	ck_assert_msg(sim != NULL, "%s", err);
	ck_assert(o != NULL && lse != NULL && m != NULL);
	ck_assert_int_eq(backward_forward(sim, NULL, o, lse, m), 0);
	sim_free(sim);
	in->o = o;
	in->lse = lse;
	in->m = m;
	in->dout = dout;
}

static void
bwd_forward_free(struct gpu_bwd_inputs *in)
{
	free((void *)in->o);
	free((void *)in->lse);
	free((void *)in->m);
}

static void
bwd_reports_free(struct gpucheck_bwd_report *reps, int n)
{
	int b;

	for (b = 0; b < n; b++)
		gpucheck_bwd_report_free(&reps[b]);
}

/*
 * 48 random problems (tests/testutil.c: Tq, Tk up to 90, d, dv up to 24
 * and often unequal, ragged Br and Bc, causal and scores problems, rows
 * with every key masked), the dtypes in turn, each compared with the
 * ordered dQ after every step and with the atomic dQ at the end.
 */
START_TEST(test_bwd_random)
{
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report rep;
	struct inputs_rng rng;
	struct tu_case c;
	float *dout;
	double worst = 0;
	int n, mode, causal = 0, scores = 0, ragged = 0, dvne = 0;
	char what[256];

	memset(&o, 0, sizeof o);
	o.kernel = teaching();
	inputs_rng_seed(&rng, 1313);
	for (n = 0; n < 48; n++) {
		tu_random_case(&rng, 90, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    (enum dtype)(n % 3), &c);
		dout = bwd_douts(&c.p, 1, 7000 + (uint64_t)n);
		for (mode = 0; mode < 2; mode++) {
			o.dq = mode ? GPU_DQ_ATOMIC : GPU_DQ_ORDERED;
			snprintf(what, sizeof what, "case %d (%s), dQ %s", n, c.what,
			    gpu_dq_mode_name(o.dq));
			ck_assert_msg(bwd_check(&c.p, 1, &c.t, &o, dout, &rep,
			    what) == 1, "%s: %ld values differ, first at step %ld, "
			    "worst %g of the tolerance (dK %g dV %g dQ %g; final dQ "
			    "%g dK %g dV %g dS %g)", what, rep.failures,
			    rep.first_failure, rep.worst_excess, rep.step_dk,
			    rep.step_dv, rep.step_dq, rep.max_dq, rep.max_dk,
			    rep.max_dv, rep.max_ds);
			ck_assert_int_eq(rep.steps_compared, (o.dq == GPU_DQ_ORDERED));
			ck_assert_int_gt(rep.steps, 0);
			worst = fmax(worst, rep.worst_excess);
			gpucheck_bwd_report_free(&rep);
		}
		causal += c.p.causal;
		scores += c.p.scores_mode;
		ragged += c.p.tq % c.t.br != 0 || c.p.tk % c.t.bc != 0;
		dvne += !c.p.scores_mode && c.p.d != c.p.dv;
		free(dout);
		tu_case_free(&c);
	}
	/* The draw covered what the comment says. */
	ck_assert_int_ge(causal, 8);
	ck_assert_int_ge(scores, 4);
	ck_assert_int_ge(ragged, 24);
	ck_assert_int_ge(dvne, 8);
	printf("backward: 48 random problems agree, ordered dQ after every "
	    "step and atomic at the end; worst value at %.3g of the "
	    "tolerance\n", worst);
}
END_TEST

/*
 * mask_rule.h's rules through the teaching backward: 36 random problems
 * with a window of any sides, softcap (its backward, 1 - (s_capped /
 * C)^2, recomputed from the same capped score on both sides) and ALiBi
 * (a slope a head, three heads of one launch), the dtypes in turn, each
 * against its own simulator after every step (ordered dQ) and at the
 * end (atomic).
 */
START_TEST(test_bwd_masks)
{
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report reps[3];
	struct inputs_rng rng;
	struct problem_spec spec;
	struct problem ps[3];
	struct tiling t;
	char err[256], what[256];
	float *dout;
	int n, b, mode, windows = 0;

	memset(&o, 0, sizeof o);
	o.kernel = teaching();
	inputs_rng_seed(&rng, 2828);
	for (n = 0; n < 12; n++) {
		problem_spec_init(&spec);
		spec.tq = 1 + (int)(inputs_rng_next(&rng) % 70);
		spec.tk = 1 + (int)(inputs_rng_next(&rng) % 70);
		spec.d = 1 + (int)(inputs_rng_next(&rng) % 20);
		spec.dv = 1 + (int)(inputs_rng_next(&rng) % 20);
		spec.dtype = (enum dtype)(n % 3);
		spec.input = INPUTS_NORMAL;
		spec.window_set = 1;
		spec.window_left = (int)(inputs_rng_next(&rng) % 30) - 1;
		spec.window_right = (int)(inputs_rng_next(&rng) % 30) - 1;
		spec.softcap_set = n % 2 == 0;
		spec.softcap = 0.5 + (double)(inputs_rng_next(&rng) % 50) / 10.0;
		t.br = 1 + (int)(inputs_rng_next(&rng) % 24);
		t.bc = 1 + (int)(inputs_rng_next(&rng) % 24);
		t.order = ORDER_FA1;
		spec.bc = t.bc;
		for (b = 0; b < 3; b++) {
			spec.seed = 40 + (uint64_t)b;
			/* every third problem without ALiBi */
			spec.alibi_set = n % 3 != 0;
			spec.alibi = 0.5 / (1 << b);
			ck_assert_msg(problem_build(&spec, &ps[b], err, sizeof err) ==
			    0, "%s", err);
		}
		snprintf(what, sizeof what, "masks case %d: Tq=%d Tk=%d d=%d dv=%d "
		    "Br=%d Bc=%d window (%d, %d) softcap %g alibi %s %s", n,
		    spec.tq, spec.tk, spec.d, spec.dv, t.br, t.bc,
		    spec.window_left, spec.window_right, spec.softcap_set ?
		    spec.softcap : 0.0, spec.alibi_set ? "0.5/2^h" : "none",
		    dtype_name(spec.dtype));
		dout = bwd_douts(&ps[0], 3, 9100 + (uint64_t)n);
		for (mode = 0; mode < 2; mode++) {
			o.dq = mode ? GPU_DQ_ATOMIC : GPU_DQ_ORDERED;
			ck_assert_msg(bwd_check(ps, 3, &t, &o, dout, reps, what) == 3,
			    "%s, dQ %s: head 0 %ld values differ (worst %g of the "
			    "tolerance)", what, gpu_dq_mode_name(o.dq),
			    reps[0].failures, reps[0].worst_excess);
			bwd_reports_free(reps, 3);
		}
		windows += spec.window_left >= 0;
		free(dout);
		for (b = 0; b < 3; b++)
			problem_free(&ps[b]);
	}
	ck_assert_int_ge(windows, 6);
}
END_TEST

/*
 * Dropout through the teaching backward: the keep bits regenerated from
 * the seed on the device as the simulator regenerates them (dV from the
 * dropped P, dP' = dP keep / (1 - p)); 9 random problems, 3 heads of a
 * launch each drawing its own bits, the dtypes in turn, against the
 * simulator after every step (ordered dQ) and at the end (atomic).  The
 * dropout-offset bug reaches the kernel: its gradients are not the
 * right ones.
 */
START_TEST(test_bwd_dropout)
{
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report reps[3];
	struct inputs_rng rng;
	struct problem_spec spec;
	struct problem ps[3];
	struct tiling t;
	struct gpu_bwd_inputs in;
	struct gpu_grads right, wrong;
	char err[256], what[256];
	float *dout;
	int n, b, mode;

	memset(&o, 0, sizeof o);
	o.kernel = teaching();
	inputs_rng_seed(&rng, 2627);
	for (n = 0; n < 9; n++) {
		problem_spec_init(&spec);
		spec.tq = 1 + (int)(inputs_rng_next(&rng) % 70);
		spec.tk = 1 + (int)(inputs_rng_next(&rng) % 70);
		spec.d = 1 + (int)(inputs_rng_next(&rng) % 20);
		spec.dv = 1 + (int)(inputs_rng_next(&rng) % 20);
		spec.dtype = (enum dtype)(n % 3);
		spec.input = INPUTS_NORMAL;
		spec.causal = n % 2;
		spec.dropout_set = 1;
		spec.dropout = 0.1 + 0.1 * (double)(n % 7);
		spec.dropout_seed = inputs_rng_next(&rng);
		spec.dropout_offset = (uint64_t)n;
		t.br = 1 + (int)(inputs_rng_next(&rng) % 24);
		t.bc = 1 + (int)(inputs_rng_next(&rng) % 24);
		t.order = ORDER_FA1;
		spec.bc = t.bc;
		for (b = 0; b < 3; b++) {
			spec.seed = 60 + (uint64_t)b;
			ck_assert_msg(problem_build(&spec, &ps[b], err, sizeof err) ==
			    0, "%s", err);
			ps[b].head0 = b;	/* heads of one problem */
		}
		snprintf(what, sizeof what, "dropout case %d: Tq=%d Tk=%d d=%d "
		    "dv=%d Br=%d Bc=%d causal %d dropout %g %s", n, spec.tq, spec.tk,
		    spec.d, spec.dv, t.br, t.bc, spec.causal, spec.dropout,
		    dtype_name(spec.dtype));
		dout = bwd_douts(&ps[0], 3, 9200 + (uint64_t)n);
		for (mode = 0; mode < 2; mode++) {
			o.dq = mode ? GPU_DQ_ATOMIC : GPU_DQ_ORDERED;
			ck_assert_msg(bwd_check(ps, 3, &t, &o, dout, reps, what) == 3,
			    "%s, dQ %s: head 0 %ld values differ (worst %g of the "
			    "tolerance)", what, gpu_dq_mode_name(o.dq),
			    reps[0].failures, reps[0].worst_excess);
			bwd_reports_free(reps, 3);
		}
		free(dout);
		if (n == 0) {
			/* the bug changes the gradients of a one-head launch */
			dout = bwd_douts(&ps[0], 1, 9300);
			bwd_forward(&ps[0], &t, &in, dout);
			ck_assert_msg(gpu_backward_run(teaching(), &ps[0], 1, &t, &in,
			    BWD_BUG_NONE, GPU_DQ_ORDERED, 0, 0, &right, err,
			    sizeof err) == 0, "%s", err);
			ck_assert_msg(gpu_backward_run(teaching(), &ps[0], 1, &t, &in,
			    BWD_BUG_DROPOUT_OFFSET, GPU_DQ_ORDERED, 0, 0, &wrong, err,
			    sizeof err) == 0, "%s", err);
			ck_assert(memcmp(right.grad_v, wrong.grad_v, (size_t)spec.tk *
			    spec.dv * sizeof(float)) != 0);
			gpu_grads_free(&right);
			gpu_grads_free(&wrong);
			bwd_forward_free(&in);
			free(dout);
		}
		for (b = 0; b < 3; b++)
			problem_free(&ps[b]);
	}
}
END_TEST

/*
 * Several heads in one launch, causal with Tq > Tk (the first rows see
 * no key: their dQ must be exactly 0), each head against its own
 * simulator; a larger problem (many tiles, the atomic dQ's adds racing)
 * in both modes; and the ordered dQ the same bits on a second run.
 */
START_TEST(test_bwd_heads)
{
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report reps[BWD_MAX_HEADS];
	struct problem_spec spec;
	struct problem ps[BWD_MAX_HEADS];
	struct gpu_bwd_inputs in;
	struct gpu_grads g1, g2;
	struct tiling t = { 16, 24, ORDER_FA2 };
	float *dout, *o_fwd, *lse, *m;
	char err[512];
	int b, r, x, dt;

	memset(&o, 0, sizeof o);
	o.kernel = teaching();
	for (dt = 0; dt < 3; dt++) {
		problem_spec_init(&spec);
		spec.tq = 150;
		spec.tk = 70;
		spec.d = 32;
		spec.dv = 40;
		spec.causal = 1;
		spec.input = INPUTS_NORMAL;
		spec.dtype = (enum dtype)dt;
		for (b = 0; b < BWD_MAX_HEADS; b++) {
			spec.seed = 50 + (uint64_t)b;
			ck_assert_msg(problem_build(&spec, &ps[b], err, sizeof err) ==
			    0, "%s", err);
		}
		dout = bwd_douts(&ps[0], BWD_MAX_HEADS, 99);
		for (o.dq = GPU_DQ_ATOMIC; o.dq <= GPU_DQ_ORDERED; o.dq++) {
			ck_assert_int_eq(bwd_check(ps, BWD_MAX_HEADS, &t, &o, dout,
			    reps, "heads"), BWD_MAX_HEADS);
			bwd_reports_free(reps, BWD_MAX_HEADS);
		}

		/* The rows that see no key (r < Tq - Tk = 80): dQ exactly 0,
		 * nothing NaN; and the ordered dQ the same bits twice. */
		o_fwd = calloc((size_t)BWD_MAX_HEADS * 150 * 40, sizeof *o_fwd);
		lse = calloc((size_t)BWD_MAX_HEADS * 150, sizeof *lse);
		m = calloc((size_t)BWD_MAX_HEADS * 150, sizeof *m);
		ck_assert(o_fwd != NULL && lse != NULL && m != NULL);
		for (b = 0; b < BWD_MAX_HEADS; b++) {
			float *ob, *lb;
			tu_run(&ps[b], &t, &rule_plain, &ob, &lb);
			memcpy(o_fwd + (size_t)b * 150 * 40, ob, 150 * 40 *
			    sizeof *ob);
			memcpy(lse + (size_t)b * 150, lb, 150 * sizeof *lb);
			free(ob);
			free(lb);
		}
		in.o = o_fwd;
		in.lse = lse;
		in.m = m;
		in.dout = dout;
		ck_assert_msg(gpu_backward_run(teaching(), ps, BWD_MAX_HEADS, &t,
		    &in, BWD_BUG_NONE, GPU_DQ_ORDERED, 0, 0, &g1, err,
		    sizeof err) == 0, "%s", err);
		ck_assert_msg(gpu_backward_run(teaching(), ps, BWD_MAX_HEADS, &t,
		    &in, BWD_BUG_NONE, GPU_DQ_ORDERED, 0, 2, &g2, err,
		    sizeof err) == 0, "%s", err);
		ck_assert(g2.ms > 0);
		ck_assert(memcmp(g1.grad_q, g2.grad_q, (size_t)BWD_MAX_HEADS * 150 *
		    32 * sizeof(float)) == 0);
		for (b = 0; b < BWD_MAX_HEADS; b++)
			for (r = 0; r < 150; r++)
				for (x = 0; x < 32; x++) {
					const float q = g1.grad_q[((size_t)b * 150 + r) *
					    32 + x];
					ck_assert_msg(isfinite(q) && (r >= 80 || q == 0.0f),
					    "head %d dQ[%d][%d] = %g", b, r, x, (double)q);
				}
		ck_assert_msg(memcmp(g1.grad_q, g1.grad_q + 150 * 32, 150 * 32 *
		    sizeof(float)) != 0, "heads 0 and 1 gave the same dQ");
		gpu_grads_free(&g1);
		gpu_grads_free(&g2);
		free(o_fwd);
		free(lse);
		free(m);
		free(dout);
		for (b = 0; b < BWD_MAX_HEADS; b++)
			problem_free(&ps[b]);
	}
}
END_TEST

/*
 * Every backward bug mode, the same on both sides, agrees step by step
 * (ordered dQ: dq-overwrite needs it, the atomic one being a race); on a
 * problem where each matters, the kernel's gradients under the bug
 * differ from its correct ones (so the bug reached the kernel).
 */
START_TEST(test_bwd_bugs)
{
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report rep;
	struct problem_spec spec;
	struct problem p;
	struct gpu_bwd_inputs in;
	struct gpu_grads right, wrong;
	struct tiling t = { 16, 16, ORDER_FA2 };
	float *dout;
	char err[512], what[64];
	int bug, differ;

	problem_spec_init(&spec);
	spec.tq = 64;
	spec.tk = 80;
	spec.d = spec.dv = 16;
	spec.input = INPUTS_NORMAL;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	dout = bwd_douts(&p, 1, 5);
	memset(&o, 0, sizeof o);
	o.kernel = teaching();
	o.dq = GPU_DQ_ORDERED;
	for (bug = 0; bug < BACKWARD_BUGS; bug++) {
		o.bug = bug;
		snprintf(what, sizeof what, "bug %s",
		    backward_bug_name((enum backward_bug)bug));
		ck_assert_msg(bwd_check(&p, 1, &t, &o, dout, &rep, what) == 1,
		    "%s: %ld values differ, first at step %ld", what,
		    rep.failures, rep.first_failure);
		gpucheck_bwd_report_free(&rep);
	}
	/* Each bug reaches the kernel: its gradients are not the right ones. */
	bwd_forward(&p, &t, &in, dout);
	ck_assert_msg(gpu_backward_run(teaching(), &p, 1, &t, &in, BWD_BUG_NONE,
	    GPU_DQ_ORDERED, 0, 0, &right, err, sizeof err) == 0, "%s", err);
	for (bug = 1; bug < BACKWARD_BUGS; bug++) {
		/* no dropout here, so dropout-offset changes nothing:
		 * test_bwd_dropout shows it */
		if (bug == BWD_BUG_DROPOUT_OFFSET)
			continue;
		ck_assert_msg(gpu_backward_run(teaching(), &p, 1, &t, &in, bug,
		    GPU_DQ_ORDERED, 0, 0, &wrong, err, sizeof err) == 0, "%s", err);
		differ = memcmp(right.grad_q, wrong.grad_q, 64 * 16 *
		    sizeof(float)) != 0 || memcmp(right.grad_k, wrong.grad_k, 80 *
		    16 * sizeof(float)) != 0 || memcmp(right.grad_v, wrong.grad_v,
		    80 * 16 * sizeof(float)) != 0;
		ck_assert_msg(differ, "bug %s changed no gradient",
		    backward_bug_name((enum backward_bug)bug));
		gpu_grads_free(&wrong);
	}
	gpu_grads_free(&right);
	bwd_forward_free(&in);
	/* dq-overwrite with the atomic dQ: refused, with the reason. */
	o.dq = GPU_DQ_ATOMIC;
	o.bug = BWD_BUG_DQ_OVERWRITE;
	ck_assert_int_eq(gpucheck_bwd_run_many(&p, 1, &t, &rule_plain, dout, &o,
	    &rep, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "ordered dQ") != NULL, "%s", err);
	free(dout);
	problem_free(&p);
}
END_TEST

/*
 * The injected fault (the kernel runs --grad-bug no-scale, the simulator
 * none: dK and dQ lose their factor scale, dV is untouched): caught at
 * a step with the ordered dQ, in the final dK with the atomic one, by
 * far more than the tolerance; without it the same problem agrees.
 */
START_TEST(test_bwd_fault_caught)
{
	static const struct gpucheck_fault no_scale = { BUG_NONE,
	    MERGE_BUG_NONE, BWD_BUG_NO_SCALE };
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report rep;
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 32, 32, ORDER_FA2 };
	float *dout;
	char err[512];

	problem_spec_init(&spec);
	spec.tq = 100;
	spec.tk = 130;
	spec.d = spec.dv = 32;
	spec.causal = 1;
	spec.input = INPUTS_NORMAL;
	spec.dtype = DTYPE_FP16;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	dout = bwd_douts(&p, 1, 11);
	memset(&o, 0, sizeof o);
	o.kernel = teaching();
	for (o.dq = GPU_DQ_ATOMIC; o.dq <= GPU_DQ_ORDERED; o.dq++) {
		o.fault = NULL;
		ck_assert_int_eq(bwd_check(&p, 1, &t, &o, dout, &rep, "control"),
		    1);
		gpucheck_bwd_report_free(&rep);
		o.fault = &no_scale;
		ck_assert_int_eq(bwd_check(&p, 1, &t, &o, dout, &rep, "fault"), 0);
		ck_assert_int_gt(rep.failures, 0);
		ck_assert_msg(rep.worst_excess > 100, "only %g of the tolerance",
		    rep.worst_excess);
		if (o.dq == GPU_DQ_ORDERED) {
			/* At the first step, and in dK alone. */
			ck_assert_int_eq(rep.first_failure, 0);
			ck_assert_msg(rep.step_dk > 100 * rep.step_dv, "dK %g dV %g",
			    rep.step_dk, rep.step_dv);
		} else
			ck_assert_int_eq(rep.first_failure, -1);
		ck_assert(rep.max_dk > 0);
		gpucheck_bwd_report_free(&rep);
	}
	free(dout);
	problem_free(&p);
}
END_TEST

/*
 * Every p exact: key c is 8 e_c plus a little noise, and query r is 20
 * times key r mod 16 plus noise, so each row has one key whose score
 * (about 320) is its lse, and every other key lies more than 104 below
 * it, where both expf give 0.  p is then 0 or 1 on both sides, and the
 * gradients must be the simulator's bits (gpucheck_bwd.c): a score summed
 * in another order gives p = exp(+-1 unit) != 1 and moves dV.
 */
START_TEST(test_bwd_exact_p)
{
	enum { TQ = 48, TK = 16, D = 16, DV = 8 };
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report rep;
	struct problem_spec spec;
	struct problem p;
	struct inputs_rng rng;
	struct tiling t = { 16, 8, ORDER_FA2 };
	float q[TQ * D], k[TK * D], v[TK * DV], *dout;
	char err[512];
	int r, x;

	inputs_rng_seed(&rng, 4242);
	for (r = 0; r < TK; r++)
		for (x = 0; x < D; x++)
			k[r * D + x] = (float)((r == x ? 8.0 : 0.0) +
			    0.25 * inputs_rng_normal(&rng));
	for (r = 0; r < TQ; r++)
		for (x = 0; x < D; x++)
			q[r * D + x] = 20.0f * k[(r % TK) * D + x] +
			    (float)(0.25 * inputs_rng_normal(&rng));
	for (x = 0; x < TK * DV; x++)
		v[x] = (float)inputs_rng_normal(&rng);
	problem_spec_init(&spec);
	spec.q.data = q;
	spec.q.rows = TQ;
	spec.q.cols = D;
	spec.k.data = k;
	spec.k.rows = TK;
	spec.k.cols = D;
	spec.v.data = v;
	spec.v.rows = TK;
	spec.v.cols = DV;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	dout = bwd_douts(&p, 1, 5);
	memset(&o, 0, sizeof o);
	o.kernel = teaching();
	for (o.dq = GPU_DQ_ATOMIC; o.dq <= GPU_DQ_ORDERED; o.dq++) {
		ck_assert_int_eq(bwd_check(&p, 1, &t, &o, dout, &rep, "exact p"),
		    1);
		ck_assert_msg(rep.p_exact, "dq %s: a p is neither 0 nor 1",
		    gpu_dq_mode_name(o.dq));
		ck_assert_msg(rep.bits_compared > 0 && rep.bits_inexact == 0,
		    "dq %s: %ld of %ld gradient values not the simulator's bits "
		    "(the score's order changed?)", gpu_dq_mode_name(o.dq),
		    rep.bits_inexact, rep.bits_compared);
		printf("exact p: dq %s: %ld gradient values the same bits\n",
		    gpu_dq_mode_name(o.dq), rep.bits_compared);
		gpucheck_bwd_report_free(&rep);
	}
	free(dout);
	problem_free(&p);
}
END_TEST

/* What has no backward, or cannot feed one, is refused by name. */
START_TEST(test_bwd_refusals)
{
	struct problem_spec spec;
	struct problem p;
	struct gpu_bwd_inputs in;
	struct gpu_grads g;
	struct tiling t = { 16, 16, ORDER_FA2 };
	float *zeros;
	char err[512];

	problem_spec_init(&spec);
	spec.tq = spec.tk = 32;
	spec.d = spec.dv = 64;
	spec.dtype = DTYPE_FP16;
	spec.input = INPUTS_NORMAL;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	zeros = calloc(32 * 64, sizeof *zeros);
	ck_assert(zeros != NULL);
	in.o = zeros;
	in.lse = zeros;
	in.m = NULL;
	in.dout = zeros;
	ck_assert_int_eq(gpu_backward_run(gpu_kernel_find("decode"), &p, 1, &t,
	    &in, BWD_BUG_NONE, GPU_DQ_ATOMIC, 0, 0, &g, err, sizeof err), -1);
	ck_assert_str_eq(err, "kernel decode has no backward pass (kernels with "
	    "one: naive, teaching, fast)");
	ck_assert(g.grad_q == NULL);
	/* The naive backward has no bug modes and no trace. */
	ck_assert_int_eq(gpu_backward_run(naive(), &p, 1, &t, &in,
	    BWD_BUG_NO_SCALE, GPU_DQ_ATOMIC, 0, 0, &g, err, sizeof err), -1);
	ck_assert_str_eq(err, "kernel naive does not take --grad-bug no-scale "
	    "(it takes none; flashstep gpu --list-kernels)");
	ck_assert_int_eq(gpu_backward_run(naive(), &p, 1, &t, &in,
	    BWD_BUG_NONE, GPU_DQ_ORDERED, GPU_BWD_TRACE, 0, &g, err, sizeof err),
	    -1);
	ck_assert_msg(strstr(err, "kernel naive's backward keeps no trace") ==
	    err, "%s", err);
	ck_assert(g.grad_q == NULL);
	ck_assert_int_eq(gpu_backward_run(teaching(), &p, 1, &t, &in,
	    BWD_BUG_MAX_NOT_LSE, GPU_DQ_ATOMIC, 0, 0, &g, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "the row max for max-not-lse") != NULL, "%s",
	    err);
	free(zeros);
	problem_free(&p);
}
END_TEST

/*
 * The naive backward against the simulator's: 48 random problems (as
 * test_bwd_random: causal, scores problems, rows with every key masked,
 * Tq != Tk, dv != d, the dtypes in turn), each with --dq ordered and
 * atomic, the final gradients (and a scores problem's dS) within rtol
 * of the magnitudes; it keeps no trace, so no step is compared.
 */
START_TEST(test_bwd_naive_random)
{
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report rep;
	struct inputs_rng rng;
	struct tu_case c;
	float *dout;
	double worst = 0;
	int n, mode, causal = 0, scores = 0, ragged = 0, half = 0;
	char what[256];

	memset(&o, 0, sizeof o);
	o.kernel = naive();
	inputs_rng_seed(&rng, 2626);
	for (n = 0; n < 48; n++) {
		tu_random_case(&rng, 90, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    (enum dtype)(n % 3), &c);
		dout = bwd_douts(&c.p, 1, 8000 + (uint64_t)n);
		for (mode = 0; mode < 2; mode++) {
			o.dq = mode ? GPU_DQ_ATOMIC : GPU_DQ_ORDERED;
			snprintf(what, sizeof what, "naive: case %d (%s), dQ %s", n,
			    c.what, gpu_dq_mode_name(o.dq));
			ck_assert_msg(bwd_check(&c.p, 1, &c.t, &o, dout, &rep,
			    what) == 1, "%s: %ld values differ, worst %g of the "
			    "tolerance (final dQ %g dK %g dV %g dS %g)", what,
			    rep.failures, rep.worst_excess, rep.max_dq, rep.max_dk,
			    rep.max_dv, rep.max_ds);
			ck_assert_int_eq(rep.steps_compared, 0);
			ck_assert_int_eq(rep.bits_compared, 0);
			worst = fmax(worst, rep.worst_excess);
			gpucheck_bwd_report_free(&rep);
		}
		causal += c.p.causal;
		scores += c.p.scores_mode;
		ragged += c.p.tq != c.p.tk;
		half += c.p.dtype != DTYPE_FP32;
		free(dout);
		tu_case_free(&c);
	}
	ck_assert_int_ge(causal, 8);
	ck_assert_int_ge(scores, 4);
	ck_assert_int_ge(ragged, 24);
	ck_assert_int_eq(half, 32);
	printf("naive backward: 48 random problems agree at the end; worst "
	    "value at %.3g of the tolerance\n", worst);
}
END_TEST

/*
 * Three heads of one naive launch, Tq = 150 against Tk = 70 keys,
 * causal (rows r < 80 see no key), d = 32, dv = 40, each dtype: every
 * head agrees with its simulator; straight from gpu_backward_run, dQ of
 * the rows that see no key is exactly 0 and nothing is NaN, --dq atomic
 * and ordered give the same bits (one sum an entry, no atomics), the
 * heads differ, and the device memory held is the entry's figure.
 */
START_TEST(test_bwd_naive_heads)
{
	enum { H = BWD_MAX_HEADS, TQ = 150, TK = 70, D = 32, DV = 40 };
	const struct gpu_kernel *k = naive();
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report reps[H];
	struct problem_spec spec;
	struct problem ps[H];
	struct gpu_bwd_inputs in;
	struct gpu_grads g1, g2;
	struct tiling t = { 16, 24, ORDER_FA2 };
	float *dout, *o_fwd, *lse;
	char err[512];
	int b, r, x, dt;

	memset(&o, 0, sizeof o);
	o.kernel = k;
	for (dt = 0; dt < 3; dt++) {
		problem_spec_init(&spec);
		spec.tq = TQ;
		spec.tk = TK;
		spec.d = D;
		spec.dv = DV;
		spec.causal = 1;
		spec.input = INPUTS_NORMAL;
		spec.dtype = (enum dtype)dt;
		for (b = 0; b < H; b++) {
			spec.seed = 70 + (uint64_t)b;
			ck_assert_msg(problem_build(&spec, &ps[b], err, sizeof err) ==
			    0, "%s", err);
		}
		dout = bwd_douts(&ps[0], H, 123);
		for (o.dq = GPU_DQ_ATOMIC; o.dq <= GPU_DQ_ORDERED; o.dq++) {
			ck_assert_int_eq(bwd_check(ps, H, &t, &o, dout, reps,
			    "naive heads"), H);
			bwd_reports_free(reps, H);
		}

		o_fwd = calloc((size_t)H * TQ * DV, sizeof *o_fwd);
		lse = calloc((size_t)H * TQ, sizeof *lse);
		ck_assert(o_fwd != NULL && lse != NULL);
		for (b = 0; b < H; b++) {
			float *ob, *lb;
			tu_run(&ps[b], &t, &rule_plain, &ob, &lb);
			memcpy(o_fwd + (size_t)b * TQ * DV, ob, TQ * DV * sizeof *ob);
			memcpy(lse + (size_t)b * TQ, lb, TQ * sizeof *lb);
			free(ob);
			free(lb);
		}
		in.o = o_fwd;
		in.lse = lse;
		in.m = NULL;
		in.dout = dout;
		ck_assert_msg(gpu_backward_run(k, ps, H, &t, &in, BWD_BUG_NONE,
		    GPU_DQ_ATOMIC, 0, 0, &g1, err, sizeof err) == 0, "%s", err);
		ck_assert_msg(gpu_backward_run(k, ps, H, &t, &in, BWD_BUG_NONE,
		    GPU_DQ_ORDERED, 0, 2, &g2, err, sizeof err) == 0, "%s", err);
		ck_assert(g2.ms > 0);
		ck_assert(memcmp(g1.grad_q, g2.grad_q, (size_t)H * TQ * D *
		    sizeof(float)) == 0);
		ck_assert(memcmp(g1.grad_k, g2.grad_k, (size_t)H * TK * D *
		    sizeof(float)) == 0);
		ck_assert(memcmp(g1.grad_v, g2.grad_v, (size_t)H * TK * DV *
		    sizeof(float)) == 0);
		for (b = 0; b < H; b++)
			for (r = 0; r < TQ; r++)
				for (x = 0; x < D; x++) {
					const float q = g1.grad_q[((size_t)b * TQ + r) *
					    D + x];
					ck_assert_msg(isfinite(q) && (r >= TQ - TK ||
					    q == 0.0f), "head %d dQ[%d][%d] = %g", b, r, x,
					    (double)q);
				}
		ck_assert_msg(memcmp(g1.grad_k, g1.grad_k + TK * D, TK * D *
		    sizeof(float)) != 0, "heads 0 and 1 gave the same dK");
		/* What it held: Q, K, V, O, dO, lse, D, P, dS, the gradients. */
		ck_assert(k->backward->device_bytes != NULL);
		ck_assert_msg(g1.device_bytes == k->backward->device_bytes(&ps[0],
		    H) && g1.device_bytes == 4.0 * H * (2.0 * TQ * D + 2.0 * TK * D +
		    2.0 * TK * DV + 2.0 * TQ * DV + 2.0 * TQ + 2.0 * TQ * TK),
		    "held %g bytes, the entry says %g", g1.device_bytes,
		    k->backward->device_bytes(&ps[0], H));
		gpu_grads_free(&g1);
		gpu_grads_free(&g2);
		free(o_fwd);
		free(lse);
		free(dout);
		for (b = 0; b < H; b++)
			problem_free(&ps[b]);
	}
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("gpu_bwd");
	TCase *tc = tcase_create("teaching backward");

	gpuprobe_require_device();
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_bwd_refusals);
	tcase_add_test(tc, test_bwd_random);
	tcase_add_test(tc, test_bwd_heads);
	tcase_add_test(tc, test_bwd_masks);
	tcase_add_test(tc, test_bwd_dropout);
	tcase_add_test(tc, test_bwd_bugs);
	tcase_add_test(tc, test_bwd_fault_caught);
	tcase_add_test(tc, test_bwd_exact_p);
	tcase_add_test(tc, test_bwd_naive_random);
	tcase_add_test(tc, test_bwd_naive_heads);
	suite_add_tcase(s, tc);
	return s;
}
