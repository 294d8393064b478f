/*
 * gpucheck_bwd.c - a kernel's backward laid against backward_run's steps
 * (gpucheck_bwd.h).
 *
 * Why the rule is rtol times the terms' magnitudes.  The teaching
 * backward (gpu/teach_bwd.cu, which derives its rtol) does the
 * simulator's operations in the simulator's order without fused
 * multiply-adds, so S, dP and D are the same bits on both sides and a
 * difference enters only through expf in P (a few units in the last
 * place of each p, so of each term): a sum of such terms, re-rounded at
 * every add, then differs by a few units of the sum of the terms'
 * magnitudes, not of the sum itself, which may cancel to near 0.  The
 * magnitudes are summed here from the simulator's own tiles as it steps
 * (its P, which under bug max-not-lse is the unnormalized one; its dS;
 * the factor scale, or 1 under bug no-scale), so each partial sum after
 * each step has its own bound, and so does the final gradient.  An
 * atomic dQ adds the key blocks' parts in another order: more
 * re-roundings of partial sums, still a few units of the same
 * magnitudes.  A fault moves an entry by a whole term (a row left out of
 * dK) or by a factor (a scale forgotten): thousands of times the bound.
 *
 * The bound cannot see the order of the score sum (S moved by a unit
 * moves p by as little as expf does).  Where no p carries an expf
 * difference it can be held to the bits: when every p of every step so
 * far is exactly 0 or 1 on the simulator's side (each row's lse its one
 * seen key's score, every other key masked or more than 104 below it,
 * where both expf give 0), everything else is the same operations on
 * the same floats in the same order, so dK, dV, the ordered dQ and dS
 * must be the simulator's bits; a score summed in another order gives a
 * p of exp(+-1 unit of S) != 1 and moves them.
 *
 * A tensor-core backward (gpu/fast_bwd.cu, arith GPU_ARITH_TENSOR_CORES)
 * does not keep the simulator's order, and its differences come from
 * more places, each bounded as the forward's are (gpucheck.c):
 *   - p.  S on the tensor cores and p = 2^(s scale log2(e) - lse
 *     log2(e)) by an FFMA and ex2.approx: the forward's delta
 *     (gpucheck_tensor_delta, S1 = scale max|q| max|k|), plus the
 *     rounding of lse log2(e), a few units of |lse| <= S1 + ln Tk: so
 *     every term of dV, and dS relative to itself, move by delta_b =
 *     delta + 4 u (S1 + ln Tk), u = 2^-24.  rtol grows by 2 delta_b.
 *   - dS = P (dP - D) is a difference: dP on the tensor cores is within
 *     (9 dv / 8 + 2) u |dO_r| max|V_c| of the simulator's in-order sum,
 *     and D (a warp's tree of FMAs) within (dv + 2) u |dO_r| |O_r|:
 *     an absolute error E_r that |dS| need not cover where dP and D
 *     nearly cancel.  Each term of dQ and dK then carries P E_r |K| or
 *     P E_r |Q| besides its relative error: the magnitudes add
 *     P E_r / rtol to |dS| (gpucheck_bwd_magnitudes), so the bound
 *     grows by exactly that absolute term.
 *   - the rounding of P and dS to 16 bits: a value that moves by the
 *     above may round to the neighbouring 16-bit value, one unit of the
 *     dtype: the entry's rtol (two units) covers it, as for the
 *     teaching backward.
 *   - the rules (gpu/tc_mask.cuh), as the forward's (gpucheck.c): P
 *     is recomputed from the bent score, so each p moves by what the
 *     forward's does besides, 16 u C under a cap C (the two tanh, 8
 *     and 4 units of C, and the argument's rounding) and 6 u max|b|
 *     under ALiBi's bias b (at most |slope| (Tq + Tk)): both add to
 *     delta_b.  The cap's backward multiplies dS by 1 - t^2, t =
 *     tanh(scale q.k / C), which moves by 2 |t| dt absolutely: dt is
 *     the two tanh's 12 u and the argument's couple of units, so 32 u
 *     with a margin.  Relative to 1 - t^2 that is unbounded where t
 *     nears 1, so it is an absolute slack instead: the magnitudes add
 *     32 u |P (dP - D)| / rtol to |dS| (dS before the cap's backward,
 *     from the simulator's own P, dP and D).  ALiBi's backward passes
 *     dS through and adds nothing.
 * Each step's partial sums carry the same kinds of difference, over
 * the terms added so far, so the same widened bound holds after every
 * step: the fast kernel's trace build (its ordered dQ) is compared step
 * by step, never to the bits.  Its steps are the simulator's when the
 * simulator steps on the kernel's own tiles (gpu_backward_tiling: its
 * entry's Br x Bc, whatever the forward's tiling), which
 * gpucheck_bwd_run_many hands backward_new.
 */
#include "config.h"

#include "gpucheck.h"
#include "gpucheck_bwd.h"
#include "model/backward.h"
#include "model/sim.h"
#include "model/util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One problem's walk through the simulator's backward steps. */
struct gpucheck_bwd_walk {
	const struct problem *p;
	const float *dout;		/* its dO (Tq, dv) */
	const struct gpu_grads *g;
	int b;				/* its index in the GPU run */
	double f;			/* |the factor of dQ and dK| */
	double rtol;
	double *mag_dq, *mag_dk, *mag_dv;	/* running magnitudes */
	int steps;			/* compare every step */
	int exact;			/* every p so far 0 or 1: hold the bits */
	const double *ds_slack;		/* (Tq) E_r / rtol, or NULL (above) */
	double cap_slack;		/* 32 u / rtol under a cap (above), or 0 */
	struct gpucheck_bwd_report *rep;
};

/* got against ref bit for bit, n values, while w->exact. */
static void
gpucheck_bwd_bits(struct gpucheck_bwd_walk *w, const float *got,
    const float *ref, size_t n)
{
	size_t i;

	if (!w->exact)
		return;
	for (i = 0; i < n; i++) {
		w->rep->bits_compared++;
		w->rep->bits_inexact += memcmp(&got[i], &ref[i], sizeof(float)) != 0;
	}
}

/*
 * One value against the bound rtol * magnitude: records |got - ref| in
 * *maxdiff and returns how many times the bound it is (> 1 fails; a NaN
 * never agrees).  The bound has a floor of FLT_MIN: an exp on the edge
 * of underflow may give a p of 1e-45 on one side and 0 on the other, a
 * term the magnitudes (0 then) do not see.
 */
static double
gpucheck_bwd_note(struct gpucheck_bwd_report *rep, double got, double ref,
    double bound, double *maxdiff)
{
	const double allowed = bound + FLT_MIN;
	double diff = fabs(got - ref);

	if (isnan(diff)) {
		rep->failures++;
		*maxdiff = INFINITY;
		return INFINITY;
	}
	*maxdiff = fmax(*maxdiff, diff);
	if (!(diff <= allowed))
		rep->failures++;
	return diff / allowed;
}

/* |dS| of entry (r, c) of the step's tile, with a tensor-core kernel's
 * slack for dP and D (above). */
static double
gpucheck_bwd_ds_mag(const struct gpucheck_bwd_walk *w,
    const struct backward_view *v, int r, int c)
{
	const size_t e = (size_t)r * v->cols + c;
	double m = fabs(v->ds[e]);

	if (w->ds_slack != NULL)
		m += fabs(v->p[e]) * w->ds_slack[v->tile.r0 + r];
	if (w->cap_slack > 0)
		m += fabs((double)v->p[e] * ((double)v->dp[e] - v->dsum[r])) *
		    w->cap_slack;
	return m;
}

/* The step's terms' magnitudes into the running sums. */
static void
gpucheck_bwd_magnitudes(struct gpucheck_bwd_walk *w,
    const struct backward_view *v)
{
	const struct problem *p = w->p;
	const int r0 = v->tile.r0, c0 = v->tile.c0;
	const int rows = v->rows, cols = v->cols, d = v->d, dv = v->dv;
	double sum;
	int r, c, x;

	for (c = 0; c < cols; c++)
		for (x = 0; x < dv; x++) {
			for (sum = 0, r = 0; r < rows; r++)
				sum += fabs(v->p[(size_t)r * cols + c]) *
				    fabs(w->dout[(size_t)(r0 + r) * dv + x]);
			w->mag_dv[(size_t)(c0 + c) * dv + x] += sum;
		}
	for (c = 0; c < cols; c++)
		for (x = 0; x < d; x++) {
			for (sum = 0, r = 0; r < rows; r++)
				sum += gpucheck_bwd_ds_mag(w, v, r, c) *
				    fabs(p->q[(size_t)(r0 + r) * d + x]);
			w->mag_dk[(size_t)(c0 + c) * d + x] += w->f * sum;
		}
	for (r = 0; r < rows; r++)
		for (x = 0; x < d; x++) {
			for (sum = 0, c = 0; c < cols; c++)
				sum += gpucheck_bwd_ds_mag(w, v, r, c) *
				    fabs(p->k[(size_t)(c0 + c) * d + x]);
			w->mag_dq[(size_t)(r0 + r) * d + x] += w->f * sum;
		}
}

/* backward_run's callback: step v against the kernel's trace. */
static int
gpucheck_bwd_step_fn(const struct backward_view *v, void *ctx)
{
	struct gpucheck_bwd_walk *w = ctx;
	struct gpucheck_bwd_report *rep = w->rep;
	const struct gpu_grads *g = w->g;
	const int r0 = v->tile.r0, c0 = v->tile.c0, d = v->d, dv = v->dv;
	const size_t at = (size_t)w->b * g->nsteps + (size_t)v->step;
	struct gpucheck_bwd_step st;
	long before = rep->failures;
	int r, x;

	gpucheck_bwd_magnitudes(w, v);
	for (x = 0; x < v->rows * v->cols; x++)
		if (v->p[x] != 0.0f && v->p[x] != 1.0f)
			w->exact = 0;
	if (!w->steps)
		return 0;
	memset(&st, 0, sizeof st);
	for (r = 0; r < v->cols; r++) {
		for (x = 0; x < d; x++)
			st.excess = fmax(st.excess, gpucheck_bwd_note(rep,
			    g->trace_dk[(at * g->bc + r) * d + x],
			    v->dk_new[(size_t)r * d + x], w->rtol *
			    w->mag_dk[(size_t)(c0 + r) * d + x], &st.dk));
		for (x = 0; x < dv; x++)
			st.excess = fmax(st.excess, gpucheck_bwd_note(rep,
			    g->trace_dv[(at * g->bc + r) * dv + x],
			    v->dv_new[(size_t)r * dv + x], w->rtol *
			    w->mag_dv[(size_t)(c0 + r) * dv + x], &st.dv));
	}
	for (r = 0; r < v->rows; r++)
		for (x = 0; x < d; x++)
			st.excess = fmax(st.excess, gpucheck_bwd_note(rep,
			    g->trace_dq[(at * g->br + r) * d + x],
			    v->dq_new[(size_t)r * d + x], w->rtol *
			    w->mag_dq[(size_t)(r0 + r) * d + x], &st.dq));
	for (r = 0; r < v->cols; r++) {
		gpucheck_bwd_bits(w, &g->trace_dk[(at * g->bc + r) * d],
		    &v->dk_new[(size_t)r * d], (size_t)d);
		gpucheck_bwd_bits(w, &g->trace_dv[(at * g->bc + r) * dv],
		    &v->dv_new[(size_t)r * dv], (size_t)dv);
	}
	for (r = 0; r < v->rows; r++)
		gpucheck_bwd_bits(w, &g->trace_dq[(at * g->br + r) * d],
		    &v->dq_new[(size_t)r * d], (size_t)d);
	if (rep->failures > before && rep->first_failure < 0)
		rep->first_failure = v->step;
	if (!(st.excess <= rep->worst_excess)) {
		rep->worst_excess = st.excess;
		rep->worst_step = v->step;
	}
	rep->step_dk = fmax(rep->step_dk, st.dk);
	rep->step_dv = fmax(rep->step_dv, st.dv);
	rep->step_dq = fmax(rep->step_dq, st.dq);
	if (rep->step != NULL)
		rep->step[v->step] = st;
	return 0;
}

/* n final values of the kernel against the simulator's, mag[i] each
 * (NULL: the simulator's own |value|, dS's terms' size). */
static void
gpucheck_bwd_final(struct gpucheck_bwd_walk *w, const float *got,
    const float *ref, const double *mag, size_t n, double *maxdiff)
{
	struct gpucheck_bwd_report *rep = w->rep;
	double e, worst = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		e = gpucheck_bwd_note(rep, got[i], ref[i], w->rtol *
		    (mag != NULL ? mag[i] : fabs(ref[i])), maxdiff);
		worst = fmax(worst, e);
	}
	if (!(worst <= rep->worst_excess)) {
		rep->worst_excess = worst;
		rep->worst_step = -1;
	}
}

/* The simulator's forward of each problem: O, lse and m one after
 * another, for both backwards. */
static int
gpucheck_bwd_forwards(const struct problem *ps, int n, const struct tiling *t,
    const struct online_rule *rule, float *o, float *lse, float *m,
    char *err, size_t errlen)
{
	const size_t no = (size_t)ps[0].tq * ps[0].dv, nl = (size_t)ps[0].tq;
	struct sim *sim;
	int b, rc;

	for (b = 0; b < n; b++) {
		if ((sim = sim_new(&ps[b], t, rule, err, errlen)) == NULL)
			return -1;
		rc = backward_forward(sim, NULL, o + b * no, lse + b * nl, m + b * nl);
		sim_free(sim);
		if (rc != 0)
			return util_error(err, errlen, "the forward pass: out of "
			    "memory");
	}
	return 0;
}

/* Problem b's backward on the simulator against the kernel's. */
/* The norm of n floats. */
static double
gpucheck_bwd_norm(const float *x, int n)
{
	double sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += (double)x[i] * x[i];
	return sqrt(sum);
}

/* The largest norm of a row of x (rows, cols). */
static double
gpucheck_bwd_max_norm(const float *x, int rows, int cols)
{
	double best = 0;
	int r;

	for (r = 0; r < rows; r++)
		best = fmax(best, gpucheck_bwd_norm(x + (size_t)r * cols, cols));
	return best;
}

/*
 * A tensor-core kernel's widening (above): rtol + 2 delta_b into *rtol,
 * E_r / rtol per row into slack (Tq doubles), and the cap's 32 u / rtol
 * into *cap_slack (0 without a cap).
 */
static void
gpucheck_bwd_tensor(const struct problem *p, const float *o,
    const float *dout, double *rtol, double *slack, double *cap_slack)
{
	const double u = 0x1p-24;
	const double s1 = fabs((double)p->scale) *
	    gpucheck_bwd_max_norm(p->q, p->tq, p->d) *
	    gpucheck_bwd_max_norm(p->k, p->tk, p->d);
	const double vmax = gpucheck_bwd_max_norm(p->v, p->tk, p->dv);
	double delta = gpucheck_tensor_delta(p->d, s1) +
	    4 * u * (s1 + log((double)p->tk));
	int r;

	/* the rules' (above); a problem here is one head, its slope the
	 * first */
	if (p->mask.softcap > 0.0f)
		delta += 16 * u * p->mask.softcap;
	if (p->alibi != NULL)
		delta += 6 * u * fabs((double)p->alibi[0]) *
		    ((double)p->tq + p->tk);
	*rtol += 2 * delta;
	*cap_slack = p->mask.softcap > 0.0f ? 32 * u / *rtol : 0;
	for (r = 0; r < p->tq; r++) {
		const double g = gpucheck_bwd_norm(dout + (size_t)r * p->dv,
		    p->dv);
		const double on = gpucheck_bwd_norm(o + (size_t)r * p->dv,
		    p->dv);
		slack[r] = u * ((9.0 * p->dv / 8 + 2) * g * vmax +
		    (p->dv + 2) * g * on) / *rtol;
	}
}

static int
gpucheck_bwd_one(const struct problem *p, int b, const struct tiling *t,
    const struct gpu_bwd_inputs *in, const struct gpucheck_bwd_opts *opts,
    const struct gpu_grads *g, double rtol, int promised, int tensor,
    struct gpucheck_bwd_report *rep, char *err, size_t errlen)
{
	const size_t no = (size_t)p->tq * p->dv, nl = (size_t)p->tq;
	const size_t d = p->scores_mode ? 0 : (size_t)p->d;
	const size_t nq = (size_t)p->tq * d, nk = (size_t)p->tk * d;
	const size_t nv = (size_t)p->tk * p->dv, ns = (size_t)p->tq * p->tk;
	struct backward_input bin;
	struct backward_grads sg;
	struct gpucheck_bwd_walk w;
	struct backward *bwd;
	double *slack = NULL;
	int rc = -1;

	memset(&sg, 0, sizeof sg);
	memset(&w, 0, sizeof w);
	bin.o = in->o + b * no;
	bin.lse = in->lse + b * nl;
	bin.m = in->m + b * nl;
	bin.dout = in->dout + b * no;
	if (tensor) {
		slack = util_calloc((size_t)p->tq, sizeof *slack, "slack", err,
		    errlen);
		if (slack == NULL)
			return -1;
		gpucheck_bwd_tensor(p, bin.o, bin.dout, &rtol, slack,
		    &w.cap_slack);
	}
	bwd = backward_new(p, t, &bin, (enum backward_bug)opts->bug, err,
	    errlen);
	if (bwd == NULL) {
		free(slack);
		return -1;
	}
	rep->steps = backward_steps(bwd);
	rep->steps_compared = g->trace_dv != NULL &&
	    opts->dq == GPU_DQ_ORDERED;
	rep->rtol = rtol;
	rep->worst_step = -1;
	rep->first_failure = -1;
	rep->kernel_ms = g->ms;
	snprintf(rep->device, sizeof rep->device, "%s", g->device);
	if (opts->per_step && rep->steps_compared &&
	    (rep->step = util_calloc((size_t)rep->steps, sizeof *rep->step,
	    "per-step report", err, errlen)) == NULL)
		goto out;
	sg.dq = util_calloc(nq, sizeof(float), "dQ", err, errlen);
	sg.dk = util_calloc(nk, sizeof(float), "dK", err, errlen);
	sg.dv = util_calloc(nv, sizeof(float), "dV", err, errlen);
	w.mag_dq = util_calloc(nq, sizeof(double), "dQ", err, errlen);
	w.mag_dk = util_calloc(nk, sizeof(double), "dK", err, errlen);
	w.mag_dv = util_calloc(nv, sizeof(double), "dV", err, errlen);
	if (sg.dq == NULL || sg.dk == NULL || sg.dv == NULL ||
	    w.mag_dq == NULL || w.mag_dk == NULL || w.mag_dv == NULL ||
	    (p->scores_mode && (sg.ds = util_calloc(ns, sizeof(float), "dS",
	    err, errlen)) == NULL))
		goto out;

	w.p = p;
	w.dout = bin.dout;
	w.g = g;
	w.b = b;
	w.f = opts->bug == BWD_BUG_NO_SCALE ? 1.0 : fabs((double)p->scale);
	w.rtol = rtol;
	w.steps = rep->steps_compared;
	w.exact = promised;
	w.ds_slack = slack;
	w.rep = rep;
	if (backward_run(bwd, gpucheck_bwd_step_fn, &w, &sg) != 0) {
		util_error(err, errlen, "the simulator's backward: out of memory");
		goto out;
	}
	gpucheck_bwd_final(&w, g->grad_q + b * nq, sg.dq, w.mag_dq, nq,
	    &rep->max_dq);
	gpucheck_bwd_final(&w, g->grad_k + b * nk, sg.dk, w.mag_dk, nk,
	    &rep->max_dk);
	gpucheck_bwd_final(&w, g->grad_v + b * nv, sg.dv, w.mag_dv, nv,
	    &rep->max_dv);
	if (p->scores_mode)
		gpucheck_bwd_final(&w, g->grad_s + b * ns, sg.ds, NULL, ns,
		    &rep->max_ds);
	/* ATOMIC adds dQ's parts in another order: not its bits. */
	if (opts->dq == GPU_DQ_ORDERED)
		gpucheck_bwd_bits(&w, g->grad_q + b * nq, sg.dq, nq);
	gpucheck_bwd_bits(&w, g->grad_k + b * nk, sg.dk, nk);
	gpucheck_bwd_bits(&w, g->grad_v + b * nv, sg.dv, nv);
	if (p->scores_mode)
		gpucheck_bwd_bits(&w, g->grad_s + b * ns, sg.ds, ns);
	rep->p_exact = w.exact;
	rep->pass = rep->failures == 0 && rep->bits_inexact == 0;
	rc = 0;
out:
	if (rc != 0)
		gpucheck_bwd_report_free(rep);
	free(sg.dq);
	free(sg.dk);
	free(sg.dv);
	free(sg.ds);
	free(w.mag_dq);
	free(w.mag_dk);
	free(w.mag_dv);
	free(slack);
	backward_free(bwd);
	return rc;
}

int
gpucheck_bwd_run_many(const struct problem *ps, int n,
    const struct tiling *t, const struct online_rule *rule,
    const float *dout, const struct gpucheck_bwd_opts *opts,
    struct gpucheck_bwd_report *reps, char *err, size_t errlen)
{
	const struct gpu_kernel *k = opts->kernel != NULL ? opts->kernel :
	    gpu_kernel_find("teaching");
	const struct problem *p = &ps[0];
	struct tiling bt;
	struct gpu_bwd_inputs in;
	struct gpu_grads g;
	struct schedule sched;
	float *o = NULL, *lse = NULL, *m = NULL;
	const int gpu_bug = opts->fault != NULL ? opts->fault->grad_bug :
	    opts->bug;
	unsigned flags = 0;
	double trace;
	int b, rc = -1;

	memset(reps, 0, (size_t)n * sizeof *reps);
	memset(&g, 0, sizeof g);
	if (n < 1)
		return util_error(err, errlen, "no problem to compare");
	if (opts->dq == GPU_DQ_ATOMIC && opts->bug == BWD_BUG_DQ_OVERWRITE)
		return util_error(err, errlen, "--grad-bug dq-overwrite with an "
		    "atomic dQ keeps whichever key block stores last, a race "
		    "the simulator has no order for: compare it with the "
		    "ordered dQ");
	if (gpu_backward_check(k, p, opts->bug, err, errlen) != 0)
		return -1;
	gpu_backward_tiling(k, t, &bt);
	/* The ordered dQ's trace, while it stays reasonable, from a backward
	 * that keeps one. */
	if (opts->dq == GPU_DQ_ORDERED && (k->backward->caps & GPU_CAP_TRACE)) {
		if (schedule_init(&sched, p, &bt, err, errlen) != 0)
			return -1;
		trace = (double)n * sched.nsteps * ((double)sched.bc * (p->d +
		    p->dv) + (double)sched.br * p->d) * sizeof(float);
		schedule_free(&sched);
		if (trace <= (double)GPUCHECK_ACC_TRACE_MAX)
			flags |= GPU_BWD_TRACE;
	}
	o = util_calloc((size_t)n * p->tq * p->dv, sizeof *o, "O", err, errlen);
	lse = util_calloc((size_t)n * p->tq, sizeof *lse, "lse", err, errlen);
	m = util_calloc((size_t)n * p->tq, sizeof *m, "m", err, errlen);
	if (o == NULL || lse == NULL || m == NULL ||
	    gpucheck_bwd_forwards(ps, n, t, rule, o, lse, m, err, errlen) != 0)
		goto out;
	in.o = o;
	in.lse = lse;
	in.m = m;
	in.dout = dout;
	if (gpu_backward_run(k, ps, n, t, &in, gpu_bug, opts->dq, flags, 0,
	    &g, err, errlen) != 0)
		goto out;
	for (b = 0; b < n; b++)
		if (gpucheck_bwd_one(&ps[b], b, &bt, &in, opts, &g,
		    k->backward->rtol[p->dtype], k->arith == GPU_ARITH_SIM_ORDER,
		    k->arith == GPU_ARITH_TENSOR_CORES && !p->scores_mode,
		    &reps[b], err, errlen) != 0) {
			while (b-- > 0)
				gpucheck_bwd_report_free(&reps[b]);
			goto out;
		}
	rc = 0;
out:
	gpu_grads_free(&g);
	free(o);
	free(lse);
	free(m);
	return rc;
}

void
gpucheck_bwd_report_free(struct gpucheck_bwd_report *rep)
{
	free(rep->step);
	rep->step = NULL;
}
