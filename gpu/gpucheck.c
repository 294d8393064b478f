/*
 * gpucheck.c - a GPU kernel's trace laid against sim_run's steps.
 *
 * Why the tolerance is what gpucheck.h says.  The kernel (gpu/teach.cu)
 * does the simulator's operations in the simulator's order: each score
 * sums q[x] k[x] over x in order and then scales, the row max, the row
 * sum and every entry of P V run over the keys in order, and the update
 * and finalize formulas are online.c's.  Neither side fuses multiply-adds
 * (gcc -ffp-contract=off, nvcc -fmad=false) and both round every float32
 * operation to nearest, division included.  So S and m are the same bits
 * on both sides, and a difference enters only through expf (in alpha and
 * in every entry of P) and logf (in lse): CUDA's expf is within 2 units
 * in the last place (ulp), glibc's within 1, so one p may differ by about
 * 3 ulp (3.6e-7 relative).  Those differences then ride through sums of
 * up to Tk terms in the same order; being of either sign they grow like
 * sqrt(Tk) ulp, about 128 ulp (8e-6) at Tk = 16384.  (Measured on an
 * H200: m identical at every step, everything else within 4e-7 relative
 * up to Tk = 4096; doc/performance.md.)  GPUCHECK_RTOL = 1e-4 leaves a
 * margin of ten over the estimate, and is still a hundred times smaller
 * than what the faults this check exists for do: a rescale left out
 * moves l and u by a factor exp(m_old - m_new), a mask off by one key or
 * a wrong convention by 1e-2 or more.
 *
 * With P rounded to fp16 or bf16 before P V, an expf that differs by one
 * ulp can now and then round p to the neighbouring narrow value: one
 * unit of the narrow type's roundoff (2^-11, 2^-8) times p |v|.  The
 * numerator and O are then held to twice that; l is not, since the row
 * sum uses P before rounding.
 *
 * Values near 0 need an absolute part: u sums p v of both signs, so its
 * error scales with sum p |v| <= l max|V| rather than with |u|; o and O
 * with max|V|.
 *
 * The same argument gives the teaching kernel's promise, checked as such
 * (order_kept): m is the same bits at every step, and alpha is one expf
 * of the same float on each side: CUDA's within 2 units in the last place
 * of the correctly rounded value, glibc's within 1, so at most 3 units
 * apart, and a unit is at most 2^-23 of the value:
 * |g - s| <= 3 2^-23 max(|g|, |s|) (GPUCHECK_ALPHA_UNITS).  The first
 * fails when the order of the score sum changes (reversed, or fused into
 * FMAs: S and so m move by a unit now and then), the second when expf
 * becomes __expf (its argument x log2(e) is rounded first: an error of
 * about 2 + 1.2 |x| units, over 3 for most |x| > 10).  Neither sees the
 * order of P V's sum: its terms carry expf's differences, and a sum in
 * another order moves by roundings of the same size (a few units of the
 * sum of |p v|, growing like sqrt(Bc)), so no bound on u tells the two
 * apart.  Where no p carries an expf difference they come apart: on a
 * gpucheck_exact_p problem every p and alpha is 0 or 1 on both sides, u
 * is sums and products of the same floats in the same order, each
 * rounded once, and o and O quotients of them (division correctly
 * rounded on both: nvcc's default -prec-div=true), so u, o and O must be
 * the simulator's bits, and a reversed sum over 16 keys of N(0, 1)
 * values moves some of them by a unit.
 * tests/gpu_planted.sh plants such changes and expects check_gpu to fail.
 *
 * A tensor-core kernel (gpu/fast.cu) does the same algorithm with the same
 * tiles but not the same operations, so its differences are larger and
 * come from three places:
 *   - S on the tensor cores.  The 16-bit products are exact in float32,
 *     but the sums run in another order, each mma adding its 16 products
 *     into the accumulator with one truncation rather than one rounding
 *     per add.  With u = 2^-24 the simulator's in-order sum is within
 *     d u sum_x |q_x k_x| of the truth, the d / 16 chained mmas within
 *     about 2 u per mma of the same sum: together (9d/8 + 2) u S1, where
 *     S1 = scale max_r |q_r| max_c |k_c| >= scale sum_x |q_x k_x| for
 *     every score (Cauchy-Schwarz).  The max m moves by as much.
 *   - The exponent: p = 2^(s scale log2(e) - m scale log2(e)) by one
 *     FFMA and ex2.approx (2 ulp) against expf(s - m) on rounded s and
 *     m: a few more u of |s - m| <= 2 S1, so 6 u S1 + 2^-20 covers them.
 *   So one p differs by at most delta = (9d/8 + 8) u S1 + 2^-20
 *   relative; l and alpha (two such terms) by 2 delta relative, lse by
 *   2 delta absolute.  For N(0, 1) inputs at d = 128 S1 is about 17 and
 *   delta about 1.6e-4; the values measured lie far below (the bound
 *   adds every error with one sign).
 *   - P and O in 16 bits.  P is rounded before P V as the simulator's
 *     --dtype emulation does (a flip as above), and O leaves the kernel
 *     rounded to the dtype: half a unit, under rtol_acc |O|.  FP8: P in
 *     e4m3, whose flips are 2^-3 of p, and S summed in about 14 bits
 *     (gpucheck_fp8_delta), O in fp16.
 *   - The rules (gpu/tc_mask.cuh).  A cap C tanh(x / C) moves no error
 *     up (its slope is at most 1), but the two tanh differ: the
 *     kernels' within 2^-21 (8 units) of C, mask_rule_tanh within 4,
 *     and the kernel's argument q.k (scale / C) rounds once more: 16 u
 *     C with a margin.  ALiBi's bias b
 *     (at most max slope (Tq + Tk)) is a product and a sum rounded on
 *     each side, in the kernel divided by the exponent's scale too, and
 *     it widens |s - m| in the exponent: 6 u max|b|.  Both add to delta.
 * Such a kernel is held to rtol = atol = GPUCHECK_RTOL + 2 delta for
 * m, alpha, l and lse, and to rtol_acc + 2 delta for the numerator and
 * O.  Those stay far below what a fault does (a rescale left out, a
 * mask off by one key at small Tk), and a test shows one caught.
 */
#include "config.h"

#include "gpucheck.h"
#include "model/compare.h"
#include "model/sim.h"
#include "model/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One problem's walk through the simulator's steps. */
struct gpucheck_walk {
	const struct gpu_result *g;
	int b;			/* the problem's index in the GPU run */
	int dv, normalized;
	int exact;		/* gpucheck_exact_p: u held to the bits */
	struct gpucheck_tol tol;
	struct gpucheck_report *rep;
};

/* The largest norm of a row of x (rows, cols). */
static double
gpucheck_max_norm(const float *x, int rows, int cols)
{
	double best = 0, sum;
	int r, c;

	for (r = 0; r < rows; r++) {
		sum = 0;
		for (c = 0; c < cols; c++)
			sum += (double)x[(size_t)r * cols + c] *
			    x[(size_t)r * cols + c];
		best = fmax(best, sum);
	}
	return sqrt(best);
}

void
gpucheck_tolerance(const struct gpu_kernel *k, const struct problem *p,
    struct gpucheck_tol *tol)
{
	const int heads = p->heads > 0 ? p->heads : 1;
	const int kv_heads = p->kv_heads > 0 ? p->kv_heads : 1;
	double vmax = 0, s1, delta = 0, bias = 0;
	size_t i, n = (size_t)kv_heads * p->tk * p->dv;

	for (i = 0; i < n; i++)
		vmax = fmax(vmax, fabs(p->v[i]));
	if (k->arith == GPU_ARITH_TENSOR_CORES && !p->scores_mode) {
		s1 = fabs((double)p->scale) * gpucheck_max_norm(p->q,
		    heads * p->tq, p->d) * gpucheck_max_norm(p->k,
		    kv_heads * p->tk, p->d);
		delta = gpucheck_tensor_delta(p->d, s1);
		if (p->dtype == DTYPE_FP8)
			delta += gpucheck_fp8_delta(s1);
		if (p->mask.softcap > 0.0f)
			delta += 16.0 * 0x1p-24 * p->mask.softcap;
		for (i = 0; p->alibi != NULL && i < (size_t)heads; i++)
			bias = fmax(bias, fabs(p->alibi[i]) *
			    ((double)p->tq + p->tk));
		delta += 6.0 * 0x1p-24 * bias;
	}
	gpucheck_tol_set(tol, p->dtype, delta, vmax);
}

int
gpucheck_exact_p(const struct problem *p)
{
	const int rows = problem_rows(p);
	const float *s;
	float level;
	int r, c, seen;

	/* ALiBi's bias makes a row's scores differ however S is given */
	if (!p->scores_mode || p->alibi != NULL)
		return 0;
	for (r = 0; r < rows; r++) {
		s = p->s + (size_t)r * p->tk;
		level = 0.0f;
		seen = 0;
		for (c = 0; c < p->tk; c++) {
			if (!problem_visible(p, r % p->tq, c) || s[c] == -INFINITY)
				continue;
			if (!isfinite(s[c]) || (seen && s[c] != level))
				return 0;
			level = s[c];
			seen = 1;
		}
	}
	return 1;
}

/* Is g the same float as s, bit for bit? */
static int
gpucheck_same_bits(float g, float s)
{
	return memcmp(&g, &s, sizeof g) == 0;
}

int
gpucheck_close(const struct gpucheck_tol *tol, double g, double s)
{
	return compare_close(g, s, tol->rtol, tol->rtol);
}

/* |g - s| of an alpha in units of 2^-23 max(|g|, |s|) (2^-149 at least:
 * the spacing of float32's subnormals). */
static double
gpucheck_alpha_units(float g, float s)
{
	double unit = fmax(ldexp(fmax(fabs(g), fabs(s)), -23), 0x1p-149);

	if (g == s)
		return 0.0;
	if (isnan(g) || isnan(s))
		return INFINITY;
	return fabs((double)g - s) / unit;
}

int
gpucheck_agree(double got, double ref, double atol, double rtol,
    double *maxdiff, double *excess)
{
	double diff, allowed;

	if (compare_close(got, ref, atol, rtol)) {
		*excess = 0.0;
		if (isinf(got) || isinf(ref))
			return 1;	/* the same infinity */
		diff = fabs(got - ref);
		allowed = atol + rtol * fabs(ref);
		if (diff > *maxdiff)
			*maxdiff = diff;
		if (allowed > 0.0)
			*excess = diff / allowed;
		return 1;
	}
	diff = isnan(got) || isnan(ref) || isinf(got) || isinf(ref) ?
	    INFINITY : fabs(got - ref);
	if (!(diff <= *maxdiff))
		*maxdiff = diff;
	allowed = atol + rtol * fabs(ref);
	*excess = isfinite(diff) && allowed > 0.0 ? diff / allowed : INFINITY;
	return 0;
}

/* One value into the report (gpucheck_agree): its excess. */
static double
gpucheck_note(struct gpucheck_report *rep, double got, double ref, double atol,
    double rtol, double *maxdiff)
{
	double e;

	if (!gpucheck_agree(got, ref, atol, rtol, maxdiff, &e))
		rep->failures++;
	return e;
}

/* sim_run's callback: step v of the simulator against the trace. */
static int
gpucheck_step_fn(const struct sim_view *v, void *ctx)
{
	struct gpucheck_walk *w = ctx;
	struct gpucheck_report *rep = w->rep;
	struct gpucheck_step st;
	const struct gpu_result *g = w->g;
	double atol, e;
	long before = rep->failures;
	size_t at;
	int r, x;

	memset(&st, 0, sizeof st);
	for (r = 0; r < v->rows; r++) {
		at = gpu_trace_at(g, w->b, v->step, r);
		if (rep->order_promised) {
			rep->m_inexact += memcmp(&g->m_new[at], &v->m_new[r],
			    sizeof(float)) != 0;
			rep->alpha_units = fmax(rep->alpha_units,
			    gpucheck_alpha_units(g->alpha[at], v->alpha[r]));
		}
		e = gpucheck_note(rep, g->m_new[at], v->m_new[r], rep->atol,
		    rep->rtol, &st.m);
		st.excess = fmax(st.excess, e);
		e = gpucheck_note(rep, g->alpha[at], v->alpha[r], rep->atol,
		    rep->rtol, &st.alpha);
		st.excess = fmax(st.excess, e);
		e = gpucheck_note(rep, g->l_new[at], v->l_new[r], rep->atol,
		    rep->rtol, &st.l);
		st.excess = fmax(st.excess, e);
		if (g->acc == NULL)
			continue;
		atol = gpucheck_atol_acc(&w->tol, w->normalized ? 1.0 :
		    v->l_new[r]);
		for (x = 0; x < w->dv; x++) {
			e = gpucheck_note(rep, g->acc[at * w->dv + x],
			    v->acc_new[(size_t)r * w->dv + x], atol, rep->rtol_acc,
			    &st.acc);
			st.excess = fmax(st.excess, e);
			if (w->exact) {
				rep->u_compared++;
				rep->u_inexact += !gpucheck_same_bits(
				    g->acc[at * w->dv + x],
				    v->acc_new[(size_t)r * w->dv + x]);
			}
		}
	}
	if (rep->failures > before && rep->first_failure < 0)
		rep->first_failure = v->step;
	if (!(st.excess <= rep->worst_excess) || rep->worst_step < 0) {
		rep->worst_excess = st.excess;
		rep->worst_step = v->step;
	}
	rep->max_m = fmax(rep->max_m, st.m);
	rep->max_alpha = fmax(rep->max_alpha, st.alpha);
	rep->max_l = fmax(rep->max_l, st.l);
	rep->max_acc = fmax(rep->max_acc, st.acc);
	if (rep->step != NULL)
		rep->step[v->step] = st;
	return 0;
}

/* Problem b of the GPU run against its own simulator. */
static int
gpucheck_one(const struct problem *p, int b, const struct tiling *t,
    const struct online_rule *rule, const struct gpu_result *g, int per_step,
    const struct gpu_kernel *k, struct gpucheck_report *rep, char *err,
    size_t errlen)
{
	struct gpucheck_walk w;
	struct sim *sim;
	float *o = NULL, *lse = NULL;
	const float *go, *glse;
	double e, worst_out = 0.0;
	size_t n, i;
	int rc = -1;

	sim = sim_new(p, t, rule, err, errlen);
	if (sim == NULL)
		return -1;
	memset(&w, 0, sizeof w);
	gpucheck_tolerance(k, p, &w.tol);
	rep->steps = sim_steps(sim);
	rep->worst_step = -1;
	rep->first_failure = -1;
	rep->delta = w.tol.delta;
	rep->rtol = w.tol.rtol;
	rep->atol = w.tol.rtol;
	rep->rtol_acc = w.tol.rtol_acc;
	rep->acc_compared = g->acc != NULL;
	rep->order_promised = k->arith == GPU_ARITH_SIM_ORDER;
	w.exact = rep->order_promised && gpucheck_exact_p(p);
	rep->kernel_ms = g->ms;
	snprintf(rep->device, sizeof rep->device, "%s", g->device);
	if (per_step) {
		rep->step = util_calloc((size_t)rep->steps, sizeof *rep->step,
		    "per-step report", err, errlen);
		if (rep->step == NULL)
			goto out;
	}

	w.g = g;
	w.b = b;
	w.dv = p->dv;
	w.normalized = rule->convention == CONV_NORMALIZED;
	w.rep = rep;

	o = util_calloc((size_t)p->tq * p->dv, sizeof *o, "O", err, errlen);
	lse = util_calloc((size_t)p->tq, sizeof *lse, "lse", err, errlen);
	if (o == NULL || lse == NULL)
		goto out;
	if (sim_run(sim, gpucheck_step_fn, &w, o, lse) != 0) {
		util_error(err, errlen, "simulator: out of memory");
		goto out;
	}

	/* The outputs. */
	go = g->o + (size_t)b * p->tq * p->dv;
	glse = g->lse + (size_t)b * p->tq;
	n = (size_t)p->tq * p->dv;
	for (i = 0; i < n; i++) {
		e = gpucheck_note(rep, go[i], o[i], gpucheck_atol_acc(&w.tol, 1.0),
		    rep->rtol_acc, &rep->max_o);
		worst_out = fmax(worst_out, e);
		if (w.exact) {
			rep->u_compared++;
			rep->u_inexact += !gpucheck_same_bits(go[i], o[i]);
		}
	}
	for (i = 0; i < (size_t)p->tq; i++) {
		e = gpucheck_note(rep, glse[i], lse[i], rep->atol, rep->rtol,
		    &rep->max_lse);
		worst_out = fmax(worst_out, e);
	}
	if (!(worst_out <= rep->worst_excess))
		rep->worst_excess = worst_out;
	rep->order_kept = !rep->order_promised || (rep->m_inexact == 0 &&
	    rep->alpha_units <= GPUCHECK_ALPHA_UNITS && rep->u_inexact == 0);
	rep->pass = rep->failures == 0 && rep->order_kept;
	rc = 0;
out:
	if (rc != 0)
		gpucheck_report_free(rep);
	free(o);
	free(lse);
	sim_free(sim);
	return rc;
}

/* One sequence's report (of steps from step0 on) into the batch's. */
static void
gpucheck_merge(struct gpucheck_report *rep, struct gpucheck_report *one,
    long step0, int first)
{
	if (one->worst_step >= 0 && (rep->worst_step < 0 ||
	    !(one->worst_excess <= rep->worst_excess)))
		rep->worst_step = step0 + one->worst_step;
	if (first || !(one->worst_excess <= rep->worst_excess))
		rep->worst_excess = one->worst_excess;
	if (rep->first_failure < 0 && one->first_failure >= 0)
		rep->first_failure = step0 + one->first_failure;
	rep->max_m = fmax(rep->max_m, one->max_m);
	rep->max_alpha = fmax(rep->max_alpha, one->max_alpha);
	rep->max_l = fmax(rep->max_l, one->max_l);
	rep->max_acc = fmax(rep->max_acc, one->max_acc);
	rep->max_o = fmax(rep->max_o, one->max_o);
	rep->max_lse = fmax(rep->max_lse, one->max_lse);
	rep->atol = fmax(rep->atol, one->atol);
	rep->rtol = fmax(rep->rtol, one->rtol);
	rep->rtol_acc = fmax(rep->rtol_acc, one->rtol_acc);
	rep->delta = fmax(rep->delta, one->delta);
	rep->failures += one->failures;
	rep->m_inexact += one->m_inexact;
	rep->alpha_units = fmax(rep->alpha_units, one->alpha_units);
	rep->u_compared += one->u_compared;
	rep->u_inexact += one->u_inexact;
	rep->order_promised = one->order_promised;
	rep->order_kept = (first || rep->order_kept) && one->order_kept;
	rep->pass = (first || rep->pass) && one->pass;
	rep->acc_compared = one->acc_compared;
	rep->kernel_ms = one->kernel_ms;
	memcpy(rep->device, one->device, sizeof rep->device);
	if (rep->step != NULL && one->step != NULL)
		memcpy(rep->step + step0, one->step, (size_t)one->steps *
		    sizeof *rep->step);
	gpucheck_report_free(one);
}

/*
 * Problem b of a packed batch's GPU run, sequence by sequence: each
 * against its own simulator (problem_seq) through a view of g shifted to
 * the sequence's rows of O and lse and its steps, which run on from one
 * sequence to the next (gpu_run's numbering, the timeline's).
 */
static int
gpucheck_packed(const struct problem *p, int b, const struct tiling *t,
    const struct online_rule *rule, const struct gpu_result *g, int per_step,
    const struct gpu_kernel *k, struct gpucheck_report *rep, char *err,
    size_t errlen)
{
	struct gpucheck_report one;
	struct gpu_result view;
	struct problem seq;
	size_t at;
	long step0 = 0, steps;
	int s;

	memset(rep, 0, sizeof *rep);
	rep->steps = g->nsteps;
	rep->worst_step = -1;
	rep->first_failure = -1;
	if (per_step) {
		rep->step = util_calloc((size_t)rep->steps, sizeof *rep->step,
		    "per-step report", err, errlen);
		if (rep->step == NULL)
			return -1;
	}
	for (s = 0; s < p->nseq; s++) {
		problem_seq(p, s, &seq);
		view = *g;
		view.o = g->o + ((size_t)b * p->tq + p->cu_q[s]) * p->dv;
		view.lse = g->lse + (size_t)b * p->tq + p->cu_q[s];
		at = gpu_trace_at(g, b, step0, 0);
		view.m_new = g->m_new + at;
		view.alpha = g->alpha + at;
		view.l_new = g->l_new + at;
		view.acc = g->acc != NULL ? g->acc + at * p->dv : NULL;
		memset(&one, 0, sizeof one);
		if (gpucheck_one(&seq, 0, t, rule, &view, per_step, k, &one, err,
		    errlen) != 0) {
			gpucheck_report_free(rep);
			return -1;
		}
		/* its steps, as gpu_run counted them: the next one's first */
		steps = one.steps;
		gpucheck_merge(rep, &one, step0, s == 0);
		step0 += steps;
	}
	return 0;
}

int
gpucheck_run_many(const struct problem *ps, int n, const struct tiling *t,
    const struct online_rule *rule, const struct gpucheck_opts *opts,
    struct gpucheck_report *reps, char *err, size_t errlen)
{
	const struct gpu_kernel *k = opts != NULL && opts->kernel != NULL ?
	    opts->kernel : gpu_kernel_find("teaching");
	const struct gpucheck_fault *fault = opts != NULL ? opts->fault : NULL;
	struct online_rule gpu_rule = *rule;
	struct gpu_result g;
	unsigned flags = GPU_TRACE;
	size_t tiles;
	int b, br, bc;

	memset(reps, 0, (size_t)n * sizeof *reps);
	if (n < 1)
		return util_error(err, errlen, "no problem to compare");
	/* The numerator's trace takes Br dv floats per step and problem:
	 * keep it while that stays reasonable.  (Bad tiles are the
	 * kernel's to refuse.) */
	if (t->br > 0 && t->bc > 0) {
		br = t->br < ps[0].tq ? t->br : ps[0].tq;
		bc = t->bc < ps[0].tk ? t->bc : ps[0].tk;
		tiles = (size_t)((ps[0].tq + br - 1) / br) *
		    (size_t)((ps[0].tk + bc - 1) / bc);
		if ((double)n * tiles * br * ps[0].dv * sizeof(float) <=
		    (double)GPUCHECK_ACC_TRACE_MAX)
			flags |= GPU_TRACE_ACC;
	}
	if (fault != NULL)
		gpu_rule.bug = (enum online_bug)fault->bug;
	if (gpu_run(k, ps, n, t, &gpu_rule, flags, 0, &g, err, errlen) != 0)
		return -1;
	for (b = 0; b < n; b++) {
		if ((ps[b].nseq > 0 ? gpucheck_packed : gpucheck_one)(&ps[b], b,
		    t, rule, &g, opts != NULL && opts->per_step, k, &reps[b],
		    err, errlen) != 0) {
			while (b-- > 0)
				gpucheck_report_free(&reps[b]);
			gpu_result_free(&g);
			return -1;
		}
	}
	gpu_result_free(&g);
	return 0;
}

int
gpucheck_run(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, struct gpucheck_report *rep, char *err,
    size_t errlen)
{
	return gpucheck_run_many(p, 1, t, rule, NULL, rep, err, errlen);
}

void
gpucheck_report_free(struct gpucheck_report *rep)
{
	free(rep->step);
	rep->step = NULL;
}

/* ---- the view's G key ---- */

struct gpucheck_trace {
	struct gpu_result res;	/* the kernel's trace */
	struct schedule sched;	/* which rows each step has */
	struct gpucheck_tol tol;
};

struct gpucheck_trace *
gpucheck_trace_new(const struct gpu_kernel *k, const struct problem *p,
    const struct tiling *t, const struct online_rule *rule, char *err,
    size_t errlen)
{
	struct gpucheck_trace *tr;

	tr = util_calloc(1, sizeof *tr, "GPU trace", err, errlen);
	if (tr == NULL)
		return NULL;
	if (gpu_run(k, p, 1, t, rule, GPU_TRACE, 0, &tr->res, err,
	    errlen) != 0 || schedule_init(&tr->sched, p, t, err, errlen) != 0) {
		gpucheck_trace_free(tr);
		return NULL;
	}
	gpucheck_tolerance(k, p, &tr->tol);
	return tr;
}

void
gpucheck_trace_free(struct gpucheck_trace *tr)
{
	if (tr == NULL)
		return;
	gpu_result_free(&tr->res);
	schedule_free(&tr->sched);
	free(tr);
}

int
gpucheck_trace_step(const struct gpucheck_trace *tr, long k, float *m_new,
    float *alpha, float *l_new, char *err, size_t errlen)
{
	struct schedule_tile tile;
	size_t at, rows;

	if (k < 0 || k >= tr->res.nsteps)
		return util_error(err, errlen, "step %ld is out of range (0 .. "
		    "%ld)", k, tr->res.nsteps - 1);
	schedule_tile(&tr->sched, k, &tile);
	rows = (size_t)(tile.r1 - tile.r0);
	at = gpu_trace_at(&tr->res, 0, k, 0);
	memcpy(m_new, tr->res.m_new + at, rows * sizeof *m_new);
	memcpy(alpha, tr->res.alpha + at, rows * sizeof *alpha);
	memcpy(l_new, tr->res.l_new + at, rows * sizeof *l_new);
	return 0;
}

int
gpucheck_trace_agrees(const struct gpucheck_trace *tr, double g, double s)
{
	return gpucheck_close(&tr->tol, g, s);
}
