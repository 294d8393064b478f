/*
 * check_backward.c - the backward pass against the double-precision
 * gradients (themselves checked against finite differences), its bug
 * modes and where each hides, rows that see no key, seeking, and its
 * counters.
 */
#include "config.h"

#include "testutil.h"
#include "model/backward.h"
#include "app/fulltimeline.h"
#include "model/compare.h"
#include "model/gradref.h"
#include "app/options.h"
#include "model/reference.h"
#include "model/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A problem's forward, dO and backward. */
struct bw {
	struct sim *sim;
	float *o, *lse, *m, *dout;
	struct backward *b;
};

/* dO from problem_grad_output (seeded), or the given one. */
static void
bw_open(struct bw *w, const struct problem *p, const struct tiling *t,
    enum backward_bug bug, const float *dout, uint64_t seed)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem_spec spec;
	struct backward_input in;
	char err[256];

	memset(w, 0, sizeof *w);
	w->sim = sim_new(p, t, &rule, err, sizeof err);
	ck_assert_msg(w->sim != NULL, "%s", err);
	w->o = malloc((size_t)p->tq * p->dv * sizeof *w->o);
	w->lse = malloc((size_t)p->tq * sizeof *w->lse);
	w->m = malloc((size_t)p->tq * sizeof *w->m);
	ck_assert(w->o != NULL && w->lse != NULL && w->m != NULL);
	ck_assert_int_eq(backward_forward(w->sim, NULL, w->o, w->lse, w->m), 0);
	problem_spec_init(&spec);
	spec.seed = seed;
	if (dout != NULL) {
		spec.dout.data = dout;
		spec.dout.rows = p->tq;
		spec.dout.cols = p->dv;
	}
	ck_assert_msg(problem_grad_output(&spec, p, &w->dout, err, sizeof err) == 0,
	    "%s", err);
	in.o = w->o;
	in.lse = w->lse;
	in.m = w->m;
	in.dout = w->dout;
	w->b = backward_new(p, t, &in, bug, err, sizeof err);
	ck_assert_msg(w->b != NULL, "%s", err);
}

static void
bw_close(struct bw *w)
{
	backward_free(w->b);
	sim_free(w->sim);
	free(w->o);
	free(w->lse);
	free(w->m);
	free(w->dout);
}

/* Gradients, malloc'd (free with grads_free). */
static void
grads_alloc(const struct problem *p, struct backward_grads *g)
{
	g->dq = malloc(((size_t)p->tq * p->d + 1) * sizeof(float));
	g->dk = malloc(((size_t)p->tk * p->d + 1) * sizeof(float));
	g->dv = malloc((size_t)p->tk * p->dv * sizeof(float));
	g->ds = malloc((size_t)p->tq * p->tk * sizeof(float));
	ck_assert(g->dq && g->dk && g->dv && g->ds);
}

static void
grads_free(struct backward_grads *g)
{
	free(g->dq);
	free(g->dk);
	free(g->dv);
	free(g->ds);
}

static void
bw_run(struct bw *w, struct backward_grads *g)
{
	grads_alloc(backward_problem(w->b), g);
	ck_assert_int_eq(backward_run(w->b, NULL, NULL, g), 0);
}

/* The four gradients of a problem as one list, for loops. */
enum { GQ, GK, GV, GS, NGRAD };
static const char *grad_names[NGRAD] = { "dQ", "dK", "dV", "dS" };

static long
grad_size(const struct problem *p, int k)
{
	switch (k) {
	case GQ:
		return p->scores_mode ? 0 : (long)p->tq * p->d;
	case GK:
		return p->scores_mode ? 0 : (long)p->tk * p->d;
	case GV:
		return (long)p->tk * p->dv;
	default:
		return (long)p->tq * p->tk;
	}
}

static const float *
grad_of(const struct backward_grads *g, int k)
{
	const float *x[NGRAD] = { g->dq, g->dk, g->dv, g->ds };
	return x[k];
}

/*
 * Each gradient's error as a multiple of the rounding scale: max |got -
 * ref| / max mag, mag the sums over |terms| (gradref_magnitudes).  An
 * entry whose terms are all 0 (a row that sees no key) must be exactly
 * 0: out[k] = infinity otherwise.
 */
static void
grad_errors(const struct problem *p, const float *dout,
    const struct backward_grads *g, double out[NGRAD])
{
	double *ref[NGRAD], *mag[NGRAD], emax, mmax;
	char err[256];
	long n, e;
	int k;

	for (k = 0; k < NGRAD; k++) {
		n = grad_size(p, k) + 1;
		ref[k] = malloc((size_t)n * sizeof(double));
		mag[k] = malloc((size_t)n * sizeof(double));
		ck_assert(ref[k] != NULL && mag[k] != NULL);
	}
	ck_assert(gradref_gradients(p, dout, ref[GQ], ref[GK], ref[GV], ref[GS],
	    err, sizeof err) == 0);
	ck_assert(gradref_magnitudes(p, dout, mag[GQ], mag[GK], mag[GV], mag[GS],
	    err, sizeof err) == 0);
	for (k = 0; k < NGRAD; k++) {
		const float *got = grad_of(g, k);
		emax = mmax = 0.0;
		for (e = 0; e < grad_size(p, k); e++) {
			ck_assert_msg(isfinite(got[e]), "%s[%ld] is %g", grad_names[k],
			    e, (double)got[e]);
			if (mag[k][e] == 0.0 && got[e] != 0.0)
				emax = INFINITY;
			emax = fmax(emax, fabs(got[e] - ref[k][e]));
			mmax = fmax(mmax, mag[k][e]);
		}
		out[k] = mmax > 0.0 ? emax / mmax : emax;
		free(ref[k]);
		free(mag[k]);
	}
}

/*
 * What float32 rounding can do, relative to the terms' magnitudes (u =
 * 2^-24).  A score sums d products, so S is off by (d + 1) u S1 at most,
 * S1 = scale max_r,c sum_x |q k| (or the scores' own rounding: none);
 * lse = m + log l by |lse| u plus l's relative error, up to (Tk + 2) u;
 * P = exp(S - lse) then carries their sum as a relative error, plus one
 * u for expf.  Every gradient entry is a sum over at most Tq (dK, dV) or
 * Tk (dQ) terms, added in tiles and then into its accumulator: (Tq + Tk
 * + 2) u more; dP and D sum dv terms each.  Together
 *   gamma = u ((d + 1) S1 + max |lse| + 2 (Tq + Tk) + dv + 8).
 * The worst cases add every error with one sign; measured errors lie far
 * below (the test prints nothing, but a planted fault shows how far).
 */
static double
fp32_gamma(const struct problem *p, const float *lse)
{
	double s1 = 0.0, lmax = 0.0, rowmax, kmax = 0.0, acc;
	int r, c, x;

	for (c = 0; c < p->tk && !p->scores_mode; c++)
		for (x = 0; x < p->d; x++)
			kmax = fmax(kmax, fabs(p->k[(size_t)c * p->d + x]));
	for (r = 0; r < p->tq; r++) {
		if (isfinite(lse[r]))
			lmax = fmax(lmax, fabs(lse[r]));
		if (p->scores_mode)
			continue;
		/* sum_x |q_x| max|k| >= sum_x |q_x k_x| for every key */
		rowmax = 0.0;
		for (x = 0; x < p->d; x++)
			rowmax += fabs(p->q[(size_t)r * p->d + x]) * kmax;
		acc = rowmax * p->scale;
		s1 = fmax(s1, acc);
	}
	return 0x1p-24 * ((p->d + 1) * s1 + lmax + 2.0 * (p->tq + p->tk) +
	    p->dv + 8);
}

/* Random problems of every shape in fp32: within gamma, every gradient. */
START_TEST(test_random_fp32)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct backward_grads g;
	struct bw w;
	double e[NGRAD], gamma, worst = 0.0;
	int n, k;

	inputs_rng_seed(&rng, 2027);
	for (n = 0; n < 160; n++) {
		tu_random_case(&rng, 48, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    DTYPE_FP32, &c);
		bw_open(&w, &c.p, &c.t, BWD_BUG_NONE, NULL, (uint64_t)n);
		bw_run(&w, &g);
		grad_errors(&c.p, w.dout, &g, e);
		gamma = fp32_gamma(&c.p, w.lse);
		for (k = 0; k < NGRAD; k++) {
			ck_assert_msg(e[k] <= gamma, "case %d (%s): %s error %g of "
			    "the terms' magnitude, over gamma %g", n, c.what,
			    grad_names[k], e[k], gamma);
			worst = fmax(worst, e[k] / gamma);
		}
		grads_free(&g);
		bw_close(&w);
		tu_case_free(&c);
	}
	/* The bound is an honest one, not a loose one: the worst case comes
	 * within a factor 100 of it (0.088 of it when this was written). */
	ck_assert_msg(worst > 1e-2, "worst error only %g of gamma", worst);
}
END_TEST

/*
 * fp16 and bf16 round dO and O (in D) where a kernel stores them, and P
 * and dS before their products: each a relative error of one unit u_t
 * (2^-11, 2^-8) in a term, so every gradient moves by at most about 2 u_t
 * of its terms' magnitudes, on top of float32's gamma; the bound is
 * 4 u_t + gamma.  And the rounding must show (bf16 coarser than fp16).
 */
START_TEST(test_random_narrow)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct backward_grads g;
	struct bw w;
	const double unit[2] = { 0x1p-11, 0x1p-8 };
	double e[NGRAD], bound, worst[2] = { 0, 0 };
	int n, k, t;

	inputs_rng_seed(&rng, 8);
	for (t = 0; t < 2; t++) {
		for (n = 0; n < 50; n++) {
			tu_random_case(&rng, 48, TU_SCORES | TU_CAUSAL,
			    t == 0 ? DTYPE_FP16 : DTYPE_BF16, &c);
			bw_open(&w, &c.p, &c.t, BWD_BUG_NONE, NULL, (uint64_t)n);
			bw_run(&w, &g);
			grad_errors(&c.p, w.dout, &g, e);
			bound = 4 * unit[t] + fp32_gamma(&c.p, w.lse);
			for (k = 0; k < NGRAD; k++) {
				ck_assert_msg(e[k] <= bound, "case %d (%s): %s error "
				    "%g over %g", n, c.what, grad_names[k], e[k], bound);
				worst[t] = fmax(worst[t], e[k]);
			}
			grads_free(&g);
			bw_close(&w);
			tu_case_free(&c);
		}
	}
	ck_assert_msg(worst[0] > 1e-5, "fp16 rounding left no trace (%g)", worst[0]);
	ck_assert_msg(worst[1] > worst[0], "bf16 (%g) not coarser than fp16 (%g)",
	    worst[1], worst[0]);
}
END_TEST

/* ---- the precision rule, entry by entry ---- */

/* What rule_step checks against, and the first entry that broke it. */
struct rule_ctx {
	const struct problem *p;
	const float *o, *dout;	/* the forward's O, and dO */
	struct sim *fwd;	/* the forward, to compare S with */
	long checked, p_rounds, ds_differs;
	char bad[256];		/* empty while the rule holds */
};

/* Records the first broken entry: what, where, got and wanted. */
static void
rule_bad(struct rule_ctx *rc, const struct backward_view *v, const char *what,
    long e, float got, float want)
{
	if (rc->bad[0] == '\0')
		snprintf(rc->bad, sizeof rc->bad, "step %ld tile (%d, %d): %s[%ld] "
		    "is %.9g, the rule gives %.9g", v->step, v->tile.i, v->tile.j,
		    what, e, (double)got, (double)want);
}

/*
 * One step against the rule of backward.h and doc/algorithm.md 11.5,
 * bit for bit (every build has -ffp-contract=off, so these plain float
 * expressions round as the engine's do): S is the forward's S; D sums
 * dO o O with O rounded as the forward stores it; P = exp(S - lse) in
 * float32, not rounded; dS = P o (dP - D) from that float32 P; the
 * products read P and dS rounded to the dtype, each product summed from
 * 0 in order and then added to its accumulator:
 *   dV_j += P16^T dO   dQ_i += scale (dS16 K_j)   dK_j += scale (dS16^T Q_i)
 * Counts the entries where the rounding of P shows (p_rounds) and where
 * a dS from the rounded P would differ (ds_differs).
 */
static int
rule_step(const struct backward_view *v, void *ctx)
{
	struct rule_ctx *rc = ctx;
	const struct problem *p = rc->p;
	const struct sim_view *fv = sim_view(rc->fwd);
	const enum dtype t = p->dtype;
	const int rows = v->rows, cols = v->cols, d = v->d, dv = v->dv;
	const int r0 = v->tile.r0, c0 = v->tile.c0;
	float want, sum, p16;
	long e;
	int r, c, x;

	ck_assert_int_eq(sim_seek(rc->fwd, schedule_step_of(sim_schedule(rc->fwd),
	    v->tile.i, v->tile.j), SIM_PHASE_LAST), 0);
	ck_assert(fv->rows == rows && fv->cols == cols);
	for (e = 0; e < (long)rows * cols; e++)
		if (memcmp(&v->s[e], &fv->s[e], sizeof(float)) != 0)
			rule_bad(rc, v, "S (against the forward's)", e, v->s[e],
			    fv->s[e]);
	for (r = 0; r < rows; r++) {
		sum = 0.0f;
		for (x = 0; x < dv; x++)
			sum += rc->dout[(size_t)(r0 + r) * dv + x] *
			    dtype_round(t, rc->o[(size_t)(r0 + r) * dv + x]);
		if (v->dsum[r] != sum)
			rule_bad(rc, v, "D", r, v->dsum[r], sum);
	}
	for (r = 0; r < rows; r++)
		for (c = 0; c < cols; c++) {
			e = (long)r * cols + c;
			want = isinf(v->lse[r]) && v->lse[r] < 0 ? 0.0f :
			    expf(v->s[e] - v->lse[r]);
			if (v->p[e] != want)
				rule_bad(rc, v, "P", e, v->p[e], want);
			want = v->p[e] * (v->dp[e] - v->dsum[r]);
			if (v->ds[e] != want)
				rule_bad(rc, v, "dS", e, v->ds[e], want);
			p16 = dtype_round(t, v->p[e]);
			rc->p_rounds += p16 != v->p[e];
			rc->ds_differs += p16 * (v->dp[e] - v->dsum[r]) != v->ds[e];
			rc->checked++;
		}
	for (c = 0; c < cols; c++)
		for (x = 0; x < dv; x++) {
			sum = 0.0f;
			for (r = 0; r < rows; r++)
				sum += dtype_round(t, v->p[(size_t)r * cols + c]) *
				    rc->dout[(size_t)(r0 + r) * dv + x];
			e = (long)c * dv + x;
			if (v->dv_new[e] != v->dv_old[e] + sum)
				rule_bad(rc, v, "dV", e, v->dv_new[e],
				    v->dv_old[e] + sum);
		}
	for (r = 0; r < rows && d > 0; r++)
		for (x = 0; x < d; x++) {
			sum = 0.0f;
			for (c = 0; c < cols; c++)
				sum += dtype_round(t, v->ds[(size_t)r * cols + c]) *
				    p->k[(size_t)(c0 + c) * d + x];
			e = (long)r * d + x;
			if (v->dq_new[e] != v->dq_old[e] + p->scale * sum)
				rule_bad(rc, v, "dQ", e, v->dq_new[e],
				    v->dq_old[e] + p->scale * sum);
		}
	for (c = 0; c < cols && d > 0; c++)
		for (x = 0; x < d; x++) {
			sum = 0.0f;
			for (r = 0; r < rows; r++)
				sum += dtype_round(t, v->ds[(size_t)r * cols + c]) *
				    p->q[(size_t)(r0 + r) * d + x];
			e = (long)c * d + x;
			if (v->dk_new[e] != v->dk_old[e] + p->scale * sum)
				rule_bad(rc, v, "dK", e, v->dk_new[e],
				    v->dk_old[e] + p->scale * sum);
		}
	return 0;
}

/*
 * The rule holds at every step of random fp16 and bf16 problems (and
 * fp32, where every rounding is the identity), and the cases exercise
 * it: the rounding of P shows, and a dS computed from the rounded P
 * would differ, in every narrow case with a key to see.  The gradient
 * bounds above cannot tell: a dS from the 16-bit P stays within them.
 */
START_TEST(test_precision_rule)
{
	static const enum dtype types[3] = { DTYPE_FP16, DTYPE_BF16, DTYPE_FP32 };
	struct inputs_rng rng;
	struct tu_case c;
	struct rule_ctx rc;
	struct bw w;
	long e;
	int n, k, narrow;

	inputs_rng_seed(&rng, 2028);
	for (k = 0; k < 3; k++) {
		for (n = 0; n < 30; n++) {
			tu_random_case(&rng, 40, TU_SCORES | TU_CAUSAL |
			    TU_MASKED_ROWS, types[k], &c);
			bw_open(&w, &c.p, &c.t, BWD_BUG_NONE, NULL, (uint64_t)n);
			memset(&rc, 0, sizeof rc);
			rc.p = &c.p;
			rc.o = w.o;
			rc.dout = w.dout;
			rc.fwd = w.sim;
			for (e = 0; e < (long)c.p.tq * c.p.dv; e++)
				ck_assert_msg(dtype_round(c.p.dtype, w.dout[e]) ==
				    w.dout[e], "case %d (%s): dO[%ld] is not in "
				    "the dtype", n, c.what, e);
			ck_assert_int_eq(backward_run(w.b, rule_step, &rc, NULL), 0);
			ck_assert_msg(rc.bad[0] == '\0', "case %d (%s): %s", n,
			    c.what, rc.bad);
			narrow = types[k] != DTYPE_FP32;
			if (narrow && rc.checked > 0 && rc.p_rounds > 0)
				ck_assert_msg(rc.ds_differs > 0, "case %d (%s): no "
				    "dS entry tells float32 P from 16-bit P", n,
				    c.what);
			if (!narrow)
				ck_assert_int_eq(rc.p_rounds, 0);
			bw_close(&w);
			tu_case_free(&c);
		}
	}
}
END_TEST

/* ---- finite differences: the reference's gradients are the forward's ---- */

/* L = sum(dO o O) of attention in double over double inputs (x is Q, K,
 * V or S, whichever is being perturbed, in place of the problem's). */
static double
fd_loss(const struct problem *p, const double *q, const double *k,
    const double *v, const double *s, const float *dout)
{
	double loss = 0.0, m, l, o, *row = malloc((size_t)p->tk * sizeof *row);
	int r, c, x;

	ck_assert(row != NULL);
	for (r = 0; r < p->tq; r++) {
		m = -INFINITY;
		for (c = 0; c < p->tk; c++) {
			double dot = 0.0;
			if (p->scores_mode)
				dot = s[(size_t)r * p->tk + c];
			else {
				for (x = 0; x < p->d; x++)
					dot += q[(size_t)r * p->d + x] * k[(size_t)c * p->d + x];
				dot *= p->scale;
			}
			row[c] = problem_visible(p, r, c) ? dot : -INFINITY;
			m = fmax(m, row[c]);
		}
		if (isinf(m))
			continue;
		l = 0.0;
		for (c = 0; c < p->tk; c++)
			l += exp(row[c] - m);
		for (x = 0; x < p->dv; x++) {
			o = 0.0;
			for (c = 0; c < p->tk; c++)
				o += exp(row[c] - m) / l * v[(size_t)c * p->dv + x];
			loss += dout[(size_t)r * p->dv + x] * o;
		}
	}
	free(row);
	return loss;
}

static double *
to_double(const float *x, long n)
{
	double *y = calloc((size_t)(n > 0 ? n : 1), sizeof *y);
	long i;

	ck_assert(y != NULL);
	for (i = 0; i < n; i++)
		y[i] = x[i];
	return y;
}

/* Central differences on every entry of input `which` (Q, K, V, S)
 * against ref: how many disagree beyond 1e-7 + 1e-6 |ref|. */
static int
fd_check(const struct problem *p, const float *dout, double *in[4], int which,
    const double *ref, const char *what)
{
	const double h = 1e-5;
	const long n[4] = { (long)p->tq * p->d, (long)p->tk * p->d,
	    (long)p->tk * p->dv, (long)p->tq * p->tk };
	double keep, up, down, fd;
	long e;
	int bad = 0;

	for (e = 0; e < n[which]; e++) {
		keep = in[which][e];
		if (isinf(keep))
			continue;	/* a masked score has no gradient */
		in[which][e] = keep + h;
		up = fd_loss(p, in[0], in[1], in[2], in[3], dout);
		in[which][e] = keep - h;
		down = fd_loss(p, in[0], in[1], in[2], in[3], dout);
		in[which][e] = keep;
		fd = (up - down) / (2 * h);
		if (fabs(fd - ref[e]) > 1e-7 + 1e-6 * fabs(ref[e])) {
			if (bad++ == 0)
				fprintf(stderr, "%s: d%c[%ld]: finite difference "
				    "%.10g, reference %.10g\n", what, "QKVS"[which],
				    e, fd, ref[e]);
		}
	}
	return bad;
}

/* Random problems, small enough to difference every entry, until
 * causal ones, Tq != Tk and dv != d and a scores one (with masked
 * entries) have come up, 12 at least.  (The reference does not tile:
 * ragged tiles are the engine's business, checked against it above.)
 * Then the check catches a planted fault: one entry of the reference's
 * dV with its sign flipped. */
START_TEST(test_finite_differences)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct problem_spec spec;
	double *in[4], *ref[4];
	float *dout;
	char err[256];
	int n, k, causal = 0, scores = 0, shapes = 0;

	inputs_rng_seed(&rng, 31);
	for (n = 0; n < 12 || !(causal && scores && shapes); n++) {
		ck_assert(n < 100);
		tu_random_case(&rng, 9, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    DTYPE_FP32, &c);
		causal += c.p.causal;
		scores += c.p.scores_mode;
		shapes += c.p.tq != c.p.tk && c.p.dv != c.p.d;
		problem_spec_init(&spec);
		spec.seed = (uint64_t)n;
		ck_assert(problem_grad_output(&spec, &c.p, &dout, err, sizeof err) == 0);
		in[0] = to_double(c.p.q, c.p.scores_mode ? 0 : (long)c.p.tq * c.p.d);
		in[1] = to_double(c.p.k, c.p.scores_mode ? 0 : (long)c.p.tk * c.p.d);
		in[2] = to_double(c.p.v, (long)c.p.tk * c.p.dv);
		in[3] = to_double(c.p.s, c.p.scores_mode ? (long)c.p.tq * c.p.tk : 0);
		for (k = 0; k < 4; k++) {
			ref[k] = calloc((size_t)(c.p.tq + c.p.tk) * (c.p.tk + c.p.d +
			    c.p.dv) + 1, sizeof(double));
			ck_assert(ref[k] != NULL);
		}
		ck_assert(gradref_gradients(&c.p, dout, ref[0], ref[1], ref[2], ref[3],
		    err, sizeof err) == 0);
		for (k = c.p.scores_mode ? 2 : 0; k < (c.p.scores_mode ? 4 : 3); k++)
			ck_assert_msg(fd_check(&c.p, dout, in, k, ref[k], c.what) == 0,
			    "%s: d%c differs from the finite differences", c.what,
			    "QKVS"[k]);
		if (n == 0) {
			ref[2][1] = -ref[2][1] + 1e-3;
			ck_assert_int_eq(fd_check(&c.p, dout, in, 2, ref[2], "the "
			    "planted fault (expected)"), 1);
		}
		for (k = 0; k < 4; k++) {
			free(in[k]);
			free(ref[k]);
		}
		free(dout);
		tu_case_free(&c);
	}
}
END_TEST

/* ---- bug modes ---- */

/* max |a - b| / max |b| over n entries. */
static double
rel_diff(const float *a, const float *b, long n)
{
	double d = 0.0, m = 0.0;
	long i;

	for (i = 0; i < n; i++) {
		d = fmax(d, fabs((double)a[i] - b[i]));
		m = fmax(m, fabs(b[i]));
	}
	return m > 0.0 ? d / m : d;
}

/* Each bug against no bug on the same problem: which gradients change by
 * more than min_change, and which stay bit for bit the same. */
static void
bug_effect(const struct problem *p, const struct tiling *t,
    enum backward_bug bug, const float *dout, double change[NGRAD],
    int same[NGRAD])
{
	struct backward_grads good, bad;
	struct bw w;
	int k;

	bw_open(&w, p, t, BWD_BUG_NONE, dout, 3);
	bw_run(&w, &good);
	bw_close(&w);
	bw_open(&w, p, t, bug, dout, 3);
	bw_run(&w, &bad);
	bw_close(&w);
	for (k = 0; k < NGRAD; k++) {
		long n = grad_size(p, k);
		change[k] = rel_diff(grad_of(&bad, k), grad_of(&good, k), n);
		same[k] = memcmp(grad_of(&bad, k), grad_of(&good, k),
		    (size_t)n * sizeof(float)) == 0;
	}
	grads_free(&good);
	grads_free(&bad);
}

static void
normal_problem(int tq, int tk, int d, int dv, struct problem *p)
{
	struct problem_spec spec;
	char err[256];

	problem_spec_init(&spec);
	spec.tq = tq;
	spec.tk = tk;
	spec.d = d;
	spec.dv = dv;
	spec.input = INPUTS_NORMAL;
	ck_assert(problem_build(&spec, p, err, sizeof err) == 0);
}

/*
 * Where each bug matters: a problem with several key blocks, scale 1/4,
 * rows that see many keys.  Each changes the gradients it touches by
 * far more than rounding, and leaves the others bit for bit alone:
 *   no-d          dQ, dK (dS); dV untouched (it never reads dS)
 *   max-not-lse   all of them (P is l times too large)
 *   no-scale      dQ, dK by 1/scale; dV untouched
 *   dq-overwrite  dQ only
 */
START_TEST(test_bugs_show)
{
	static const struct {
		enum backward_bug bug;
		int changes[NGRAD];
	} want[] = {
		{ BWD_BUG_NO_D, { 1, 1, 0, 1 } },
		{ BWD_BUG_MAX_NOT_LSE, { 1, 1, 1, 1 } },
		{ BWD_BUG_NO_SCALE, { 1, 1, 0, 0 } },
		{ BWD_BUG_DQ_OVERWRITE, { 1, 0, 0, 0 } },
	};
	struct problem p;
	struct tiling t = { 8, 8, ORDER_FA2 };
	double change[NGRAD];
	int same[NGRAD], b, k;

	normal_problem(48, 40, 16, 12, &p);
	for (b = 0; b < 4; b++) {
		bug_effect(&p, &t, want[b].bug, NULL, change, same);
		for (k = 0; k < NGRAD; k++) {
			if (want[b].changes[k])
				ck_assert_msg(change[k] > 0.1, "%s: %s moved only %g",
				    backward_bug_name(want[b].bug), grad_names[k],
				    change[k]);
			else
				ck_assert_msg(same[k], "%s changed %s (%g)",
				    backward_bug_name(want[b].bug), grad_names[k],
				    change[k]);
		}
	}
	/* no-scale is off by exactly 1/scale = 4 (so the error is 3). */
	bug_effect(&p, &t, BWD_BUG_NO_SCALE, NULL, change, same);
	ck_assert_double_eq_tol(change[GQ], 3.0, 1e-5);
	problem_free(&p);
}
END_TEST

/* no-d hides when D = 0: a dO whose rows are O's turned by 90 degrees
 * (dv = 2: dO_r = (O_r1, -O_r0), so dO_r . O_r = 0 exactly in float). */
START_TEST(test_no_d_hides_when_do_orthogonal_to_o)
{
	struct problem p;
	struct tiling t = { 4, 4, ORDER_FA2 };
	struct bw w;
	struct backward_grads g;
	double change[NGRAD];
	float *dout, dq0[16 * 6] = { 0 };
	int same[NGRAD], r;

	normal_problem(16, 20, 6, 2, &p);
	bw_open(&w, &p, &t, BWD_BUG_NONE, NULL, 1);
	dout = malloc((size_t)p.tq * 2 * sizeof *dout);
	ck_assert(dout != NULL);
	for (r = 0; r < p.tq; r++) {
		dout[2 * r] = w.o[2 * r + 1];
		dout[2 * r + 1] = -w.o[2 * r];
	}
	bw_close(&w);
	bw_open(&w, &p, &t, BWD_BUG_NONE, dout, 1);
	for (r = 0; r < p.tq; r++)
		ck_assert_float_eq(backward_dsum(w.b)[r], 0.0f);
	/* and dQ is still a gradient worth checking, not 0 */
	bw_run(&w, &g);
	ck_assert(rel_diff(g.dq, dq0, (long)p.tq * p.d) > 0.0);
	grads_free(&g);
	bw_close(&w);
	bug_effect(&p, &t, BWD_BUG_NO_D, dout, change, same);
	ck_assert(same[GQ] && same[GK] && same[GV]);
	free(dout);
	problem_free(&p);
}
END_TEST

/* max-not-lse hides when every row's softmax is one-hot: with one score
 * 30 above the rest, l = 1 exactly in float32, so lse = m. */
START_TEST(test_max_not_lse_hides_when_one_key_dominates)
{
	enum { TQ = 8, TK = 12, DV = 3 };
	float s[TQ * TK], v[TK * DV];
	struct problem p;
	struct tiling t = { 4, 4, ORDER_FA2 };
	double change[NGRAD];
	int same[NGRAD], r, c;

	for (r = 0; r < TQ; r++)
		for (c = 0; c < TK; c++)
			s[r * TK + c] = (c == (r * 5) % TK ? 30.0f : 0.0f) +
			    0.1f * (float)((r + c) % 7);
	for (c = 0; c < TK * DV; c++)
		v[c] = (float)((c * 7) % 5) - 2.0f;
	tu_scores_problem(s, TQ, TK, v, DV, &p);
	bug_effect(&p, &t, BWD_BUG_MAX_NOT_LSE, NULL, change, same);
	ck_assert(same[GV] && same[GS]);
	problem_free(&p);

	/* The same problem with a gap of 2: the bug shows. */
	for (r = 0; r < TQ; r++)
		s[r * TK + (r * 5) % TK] -= 28.0f;
	tu_scores_problem(s, TQ, TK, v, DV, &p);
	bug_effect(&p, &t, BWD_BUG_MAX_NOT_LSE, NULL, change, same);
	ck_assert_msg(change[GV] > 0.1 && change[GS] > 0.1, "gap 2: dV %g dS %g",
	    change[GV], change[GS]);
	problem_free(&p);
}
END_TEST

/* no-scale hides when scale = 1; dq-overwrite with one key block. */
START_TEST(test_scale_and_overwrite_hide)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 8, 8, ORDER_FA2 };
	double change[NGRAD];
	char err[256];
	int same[NGRAD];

	problem_spec_init(&spec);
	spec.tq = 24;
	spec.tk = 30;
	spec.d = 5;
	spec.input = INPUTS_NORMAL;
	spec.scale = 1.0;
	spec.scale_set = 1;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	bug_effect(&p, &t, BWD_BUG_NO_SCALE, NULL, change, same);
	ck_assert(same[GQ] && same[GK] && same[GV]);
	bug_effect(&p, &t, BWD_BUG_DQ_OVERWRITE, NULL, change, same);
	ck_assert_msg(!same[GQ] && change[GQ] > 0.1, "Tc = 4: %g", change[GQ]);
	t.bc = 30;	/* Tc = 1: each row block has one tile, nothing to add to */
	bug_effect(&p, &t, BWD_BUG_DQ_OVERWRITE, NULL, change, same);
	ck_assert(same[GQ] && same[GK] && same[GV]);
	problem_free(&p);
}
END_TEST

/* ---- rows that see no key ---- */

static int
no_nan_step(const struct backward_view *v, void *ctx)
{
	int n = v->rows * v->cols, e;

	(void)ctx;
	for (e = 0; e < n; e++)
		ck_assert(!isnan(v->p[e]) && !isnan(v->dp[e]) && !isnan(v->ds[e]));
	for (e = 0; e < v->rows * v->d; e++)
		ck_assert(isfinite(v->dq_new[e]));
	for (e = 0; e < v->cols * v->d; e++)
		ck_assert(isfinite(v->dk_new[e]));
	for (e = 0; e < v->cols * v->dv; e++)
		ck_assert(isfinite(v->dv_new[e]));
	return 0;
}

/* Causal with Tq > Tk: the first Tq - Tk rows see no key, and row block
 * 0 (rows 0-2) is never visited at all; rows 3..12 share tiles with rows
 * that see keys. */
START_TEST(test_empty_rows_causal)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 3, 2, ORDER_FA2 };
	struct backward_grads g;
	struct bw w;
	double e[NGRAD];
	char err[256];
	int r, x;

	problem_spec_init(&spec);
	spec.tq = 20;
	spec.tk = 7;
	spec.causal = 1;
	spec.input = INPUTS_NORMAL;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	bw_open(&w, &p, &t, BWD_BUG_NONE, NULL, 4);
	grads_alloc(&p, &g);
	ck_assert_int_eq(backward_run(w.b, no_nan_step, NULL, &g), 0);
	for (r = 0; r < 13; r++) {
		ck_assert(isinf(w.lse[r]) && w.lse[r] < 0);
		ck_assert_float_eq(backward_dsum(w.b)[r], 0.0f);
		for (x = 0; x < p.d; x++)
			ck_assert_float_eq(g.dq[r * p.d + x], 0.0f);
	}
	grad_errors(&p, w.dout, &g, e);
	for (x = 0; x < NGRAD; x++)
		ck_assert(e[x] <= fp32_gamma(&p, w.lse));
	grads_free(&g);
	bw_close(&w);
	problem_free(&p);
}
END_TEST

/* A scores problem whose row 1 is all -inf, inside a row block, under
 * every bug: no NaN, and its dS row is 0. */
START_TEST(test_empty_row_in_scores)
{
	float s[3 * 4] = { 1, 2, 3, 4, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
	    0, -INFINITY, 5, -INFINITY };
	float v[4 * 2] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct problem p;
	struct tiling t = { 3, 2, ORDER_FA2 };
	struct backward_grads g;
	struct bw w;
	int b, c;

	tu_scores_problem(s, 3, 4, v, 2, &p);
	for (b = 0; b < BACKWARD_BUGS; b++) {
		bw_open(&w, &p, &t, (enum backward_bug)b, NULL, 2);
		grads_alloc(&p, &g);
		ck_assert_int_eq(backward_run(w.b, no_nan_step, NULL, &g), 0);
		for (c = 0; c < 4; c++) {
			ck_assert_float_eq(g.ds[4 + c], 0.0f);
			ck_assert(!isnan(g.ds[c]) && !isnan(g.ds[8 + c]));
		}
		/* masked entries have no gradient either */
		ck_assert_float_eq(g.ds[9], 0.0f);
		grads_free(&g);
		bw_close(&w);
	}
	problem_free(&p);
}
END_TEST

/* ---- seeking ---- */

/* One step's numbers, copied out of a view. */
struct record {
	struct schedule_tile tile;
	float *buf;
	size_t n;
};

struct recording {
	struct record *steps;
	long n;
};

static size_t
view_floats(const struct backward_view *v)
{
	return (size_t)v->rows * (4 * v->cols + 2 + 2 * v->d) +
	    (size_t)v->cols * 2 * (v->d + v->dv);
}

static void
view_copy(const struct backward_view *v, float *b)
{
	size_t rc = (size_t)v->rows * v->cols, rq = (size_t)v->rows * v->d;
	size_t ck = (size_t)v->cols * v->d, cv = (size_t)v->cols * v->dv;

	memcpy(b, v->s, rc * 4), b += rc;
	memcpy(b, v->p, rc * 4), b += rc;
	memcpy(b, v->dp, rc * 4), b += rc;
	memcpy(b, v->ds, rc * 4), b += rc;
	memcpy(b, v->lse, v->rows * 4), b += v->rows;
	memcpy(b, v->dsum, v->rows * 4), b += v->rows;
	memcpy(b, v->dq_old, rq * 4), b += rq;
	memcpy(b, v->dq_new, rq * 4), b += rq;
	memcpy(b, v->dk_old, ck * 4), b += ck;
	memcpy(b, v->dk_new, ck * 4), b += ck;
	memcpy(b, v->dv_old, cv * 4), b += cv;
	memcpy(b, v->dv_new, cv * 4);
}

static int
record_step(const struct backward_view *v, void *ctx)
{
	struct recording *rec = ctx;
	struct record *r = &rec->steps[v->step];

	ck_assert_int_eq(v->step, rec->n);
	r->tile = v->tile;
	r->n = view_floats(v);
	r->buf = malloc(r->n * sizeof(float));
	ck_assert(r->buf != NULL);
	view_copy(v, r->buf);
	rec->n++;
	return 0;
}

/* backward_warm on a random block leaves the view as it was, bit for bit
 * (its position, numbers and counters). */
static void
check_warm(struct backward *b, struct inputs_rng *rng)
{
	const struct schedule *s = backward_schedule(b);
	const struct backward_view *v = backward_view(b);
	size_t n = view_floats(v);
	float *before = malloc(n * sizeof *before), *after = malloc(n * sizeof *after);
	struct backward_view keep = *v;
	int key = (int)(inputs_rng_next(rng) % 2), blk, len;

	ck_assert(before != NULL && after != NULL);
	view_copy(v, before);
	blk = (int)(inputs_rng_next(rng) % (uint64_t)(key ? s->tc : s->tr));
	len = key ? s->tr - s->ibegin[blk] : s->jend[blk];
	ck_assert_int_eq(backward_warm(b, key, blk, (int)(inputs_rng_next(rng) %
	    (uint64_t)(len + 1))), 0);
	ck_assert_int_eq(backward_warm(b, key, blk, len + 1), -1);
	view_copy(v, after);
	ck_assert(memcmp(before, after, n * sizeof *before) == 0);
	ck_assert(memcmp(&keep, v, sizeof keep) == 0);
	free(before);
	free(after);
}

/* Seeks to random steps and phases, from random places, and checks the
 * view is bit for bit what stepping from the start recorded.  The run
 * fills checkpoints; a second backward, never run, seeks from nothing. */
static void
check_seeks(struct tu_case *c, enum backward_bug bug, struct inputs_rng *rng,
    int seeks, uint64_t budget)
{
	struct recording rec;
	struct bw w, fresh;
	struct backward *b;
	const struct backward_view *v;
	float *buf;
	long k, n, i;
	int phase, which;
	char err[200];

	bw_open(&w, &c->p, &c->t, bug, NULL, 9);
	bw_open(&fresh, &c->p, &c->t, bug, NULL, 9);
	if (budget > 0) {
		ck_assert(backward_set_checkpoint_budget(w.b, budget, err,
		    sizeof err) == 0);
		ck_assert(backward_set_checkpoint_budget(fresh.b, budget, err,
		    sizeof err) == 0);
	}
	n = backward_steps(w.b);
	rec.steps = calloc((size_t)n, sizeof *rec.steps);
	rec.n = 0;
	ck_assert(backward_run(w.b, record_step, &rec, NULL) == 0);
	ck_assert_int_eq(rec.n, n);

	for (i = 0; i < seeks; i++) {
		which = (int)(inputs_rng_next(rng) % 2);
		b = which ? fresh.b : w.b;
		if (i % 3 == 1)
			check_warm(b, rng);
		k = (long)(inputs_rng_next(rng) % (uint64_t)n);
		phase = (int)(inputs_rng_next(rng) % BWD_PHASES);
		if (i % 5 == 4 && backward_move_phase(b, (i % 2) ? 1 : -1) == 0) {
			v = backward_view(b);
			k = v->step;
			phase = (int)v->phase;
		} else
			ck_assert_int_eq(backward_seek(b, k, phase), 0);
		v = backward_view(b);
		ck_assert_int_eq(v->step, k);
		ck_assert_int_eq((int)v->phase, phase < v->nphases ? phase :
		    v->nphases - 1);
		ck_assert_int_eq(v->nphases, backward_step_phases(b, k));
		ck_assert_int_eq(v->tile.i, rec.steps[k].tile.i);
		ck_assert_int_eq(v->tile.j, rec.steps[k].tile.j);
		ck_assert_uint_eq(view_floats(v), rec.steps[k].n);
		buf = malloc(rec.steps[k].n * sizeof *buf);
		view_copy(v, buf);
		ck_assert_msg(memcmp(buf, rec.steps[k].buf, rec.steps[k].n * 4) == 0,
		    "%s bug %s: seek to step %ld differs from stepping", c->what,
		    backward_bug_name(bug), k);
		free(buf);
	}
	ck_assert_int_eq(backward_seek(w.b, n, 0), -1);
	ck_assert_int_eq(backward_seek(w.b, -1, 0), -1);
	for (k = 0; k < n; k++)
		free(rec.steps[k].buf);
	free(rec.steps);
	bw_close(&w);
	bw_close(&fresh);
}

START_TEST(test_seek_exact)
{
	struct inputs_rng rng;
	struct tu_case c;
	int n;

	inputs_rng_seed(&rng, 77);
	for (n = 0; n < 50; n++) {
		tu_random_case(&rng, 40, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    n % 3 == 0 ? DTYPE_BF16 : DTYPE_FP32, &c);
		check_seeks(&c, (enum backward_bug)(n % BACKWARD_BUGS), &rng, 60, 0);
		tu_case_free(&c);
	}
}
END_TEST

/* The same with checkpoints every few tiles (a tiny budget), set on
 * each backward alone: another backward keeps every tile's. */
START_TEST(test_seek_sparse_checkpoints)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct bw w, other;
	char err[200];
	int n;

	inputs_rng_seed(&rng, 6);
	for (n = 0; n < 20; n++) {
		tu_random_case(&rng, 60, TU_CAUSAL, DTYPE_FP16, &c);
		c.t.br = 3;
		c.t.bc = 2;
		if (n == 0) {
			bw_open(&w, &c.p, &c.t, BWD_BUG_NONE, NULL, 1);
			bw_open(&other, &c.p, &c.t, BWD_BUG_NONE, NULL, 1);
			ck_assert_int_eq(backward_checkpoint_every(w.b, 1) +
			    backward_checkpoint_every(w.b, 0), 2);
			ck_assert(backward_set_checkpoint_budget(w.b, 2048, err,
			    sizeof err) == 0);
			ck_assert_int_gt(backward_checkpoint_every(w.b, 1) +
			    backward_checkpoint_every(w.b, 0), 2);
			ck_assert_int_eq(backward_checkpoint_every(other.b, 1) +
			    backward_checkpoint_every(other.b, 0), 2);
			bw_close(&other);
			bw_close(&w);
		}
		check_seeks(&c, (enum backward_bug)(n % BACKWARD_BUGS), &rng, 80,
		    2048);
		tu_case_free(&c);
	}
}
END_TEST

START_TEST(test_phase_moves)
{
	struct problem p;
	struct tiling t = { 4, 4, ORDER_FA2 };
	struct bw w;
	const struct backward_view *v;
	long moves = 0;

	normal_problem(16, 16, 4, 4, &p);
	bw_open(&w, &p, &t, BWD_BUG_NONE, NULL, 1);
	v = backward_view(w.b);
	ck_assert_int_eq(v->step, 0);
	ck_assert_int_eq(v->phase, BWD_PHASE_LOAD);
	ck_assert_int_eq(backward_move_phase(w.b, -1), -1);
	while (backward_move_phase(w.b, 1) == 0)
		moves++;
	/* 16 steps of 8 phases, 4 of them (the key blocks' last) with a
	 * write, minus the start. */
	ck_assert_int_eq(moves, 16 * 8 + 4 - 1);
	ck_assert_int_eq(v->step, 15);
	ck_assert_int_eq(v->phase, BWD_PHASE_WRITE);
	/* Key blocks outside: step 1 is tile (1, 0), step 4 tile (0, 1). */
	ck_assert_int_eq(backward_seek(w.b, 1, BWD_PHASE_WRITE), 0);
	ck_assert(v->tile.i == 1 && v->tile.j == 0);
	ck_assert_int_eq(v->phase, BWD_PHASE_DK);	/* step 1 has none */
	ck_assert_int_eq(backward_seek(w.b, 4, 0), 0);
	ck_assert(v->tile.i == 0 && v->tile.j == 1 && v->tile.first_in_outer);
	ck_assert_str_eq(backward_phase_name(BWD_PHASE_DS), "dS");
	bw_close(&w);
	problem_free(&p);
}
END_TEST

/* ---- counters ---- */

/* Forward and backward totals of one problem. */
static void
totals(const struct problem *p, const struct tiling *t, struct traffic *fwd,
    struct traffic *bwd)
{
	struct bw w;

	bw_open(&w, p, t, BWD_BUG_NONE, NULL, 1);
	*fwd = sim_traffic(w.sim)->total;
	*bwd = backward_traffic(w.b)->total;
	bw_close(&w);
}

/* Five products against two: exactly 2.5 times the forward's FLOPs when
 * dv = d, causal or not, ragged or not; (3d + 2dv) / (d + dv) else. */
START_TEST(test_flops_ratio)
{
	static const int shapes[][7] = {	/* tq tk d dv br bc causal */
		{ 64, 64, 16, 16, 16, 16, 0 }, { 100, 70, 8, 8, 7, 9, 1 },
		{ 33, 129, 12, 12, 8, 32, 1 }, { 40, 40, 16, 4, 8, 8, 0 },
		{ 25, 31, 6, 20, 4, 5, 1 },
	};
	struct problem_spec spec;
	struct problem p;
	struct tiling t;
	struct traffic fwd, bwd;
	char err[256];
	double want;
	size_t n;

	for (n = 0; n < sizeof shapes / sizeof shapes[0]; n++) {
		problem_spec_init(&spec);
		spec.tq = shapes[n][0];
		spec.tk = shapes[n][1];
		spec.d = shapes[n][2];
		spec.dv = shapes[n][3];
		spec.causal = shapes[n][6];
		ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
		t.br = shapes[n][4];
		t.bc = shapes[n][5];
		t.order = ORDER_FA2;
		totals(&p, &t, &fwd, &bwd);
		want = (3.0 * p.d + 2.0 * p.dv) / (p.d + p.dv);
		ck_assert_double_eq_tol((double)bwd.flops / (double)fwd.flops, want,
		    1e-12);
		if (p.d == p.dv)
			ck_assert(bwd.flops * 2 == fwd.flops * 5);
		/* P is recomputed: one exp per entry the forward had. */
		ck_assert_uint_eq(bwd.exps, fwd.exps);
		problem_free(&p);
	}
}
END_TEST

/*
 * HBM against standard attention's backward, which reads the T x T
 * matrix P its forward stored, at T = 256 and T = 1024 (d = 64, 64 x 64
 * tiles): the tiled backward moves fewer bytes at both sizes; what it
 * keeps in HBM grows like T (lse, D, dQ: 4 times for 4 times T), the
 * standard's P, dP and dS like T^2 (16 times).  Its own traffic is
 * still quadratic: every tile re-reads Q_i, dO_i and dQ_i, Tc = T / Bc
 * times in all, so wider key blocks (Bc = 128) move fewer bytes.
 */
START_TEST(test_hbm_against_standard)
{
	struct problem p;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct traffic fwd, bwd[2], std[2], wide;
	int n, T;

	for (n = 0; n < 2; n++) {
		T = n == 0 ? 256 : 1024;
		normal_problem(T, T, 64, 64, &p);
		totals(&p, &t, &fwd, &bwd[n]);
		traffic_standard_backward(&p, &std[n]);
		ck_assert_uint_lt(bwd[n].hbm_read + bwd[n].hbm_write,
		    std[n].hbm_read + std[n].hbm_write);
		ck_assert_uint_eq(std[n].stored, 3ull * T * T * 4);
		ck_assert_uint_eq(bwd[n].stored, (uint64_t)T * 8 + (uint64_t)T * 64 * 4);
		ck_assert_uint_eq(std[n].exps, 0);
		/* 4 products in the standard backward, 5 in the tiled one */
		ck_assert(std[n].flops * 5 == bwd[n].flops * 4);
		if (n == 1) {
			t.bc = 128;
			totals(&p, &t, &fwd, &wide);
			ck_assert_uint_lt(wide.hbm_read + wide.hbm_write,
			    bwd[n].hbm_read + bwd[n].hbm_write);
		}
		problem_free(&p);
	}
	ck_assert_uint_eq(bwd[1].stored, 4 * bwd[0].stored);
	ck_assert_uint_eq(std[1].stored, 16 * std[0].stored);
}
END_TEST

/* The per-step counts add up to the totals, and say what backward.h
 * says: K_j, V_j read once per key block, dK_j and dV_j written once,
 * dQ_i read back on every tile but a row block's first. */
START_TEST(test_step_counts)
{
	struct problem p;
	struct tiling t = { 5, 3, ORDER_FA2 };
	struct bw w;
	const struct schedule *s;
	struct traffic sum, one, dpass;
	struct schedule_tile tile;
	uint64_t e = 4, kv_writes = 0, dq_reads = 0;
	long k;

	normal_problem(23, 17, 6, 5, &p);
	p.causal = 1;
	bw_open(&w, &p, &t, BWD_BUG_NONE, NULL, 1);
	s = backward_schedule(w.b);
	traffic_backward_dpass(&p, &dpass);
	memset(&sum, 0, sizeof sum);
	for (k = 0; k < s->nsteps; k++) {
		schedule_tile(s, k, &tile);
		traffic_backward_step(backward_traffic(w.b), &tile, &one);
		sum.hbm_read += one.hbm_read;
		sum.hbm_write += one.hbm_write;
		sum.flops += one.flops;
		if (tile.i == s->tr - 1)
			kv_writes += (uint64_t)(tile.c1 - tile.c0) * (6 + 5) * e;
		if (tile.j > 0)
			dq_reads += (uint64_t)(tile.r1 - tile.r0) * 6 * 4;
	}
	ck_assert_uint_eq(sum.hbm_read + dpass.hbm_read,
	    backward_traffic(w.b)->total.hbm_read);
	ck_assert_uint_eq(sum.hbm_write + dpass.hbm_write,
	    backward_traffic(w.b)->total.hbm_write);
	ck_assert_uint_eq(kv_writes, (uint64_t)p.tk * (6 + 5) * e);
	ck_assert_uint_gt(dq_reads, 0);
	ck_assert_uint_eq(dpass.hbm_read, 2ull * 23 * 5 * e);
	/* the view carries steps 0 .. k and the D pass */
	ck_assert_int_eq(backward_seek(w.b, s->nsteps - 1, BWD_PHASE_LAST), 0);
	ck_assert_uint_eq(backward_view(w.b)->traffic.hbm_read,
	    backward_traffic(w.b)->total.hbm_read);
	bw_close(&w);
	problem_free(&p);
}
END_TEST

/*
 * The counters per phase: each phase adds what traffic.h says it does,
 * and the last phase of a step is the whole step (what trace writes):
 * S at scores, P's exps, dV and dP, dQ's read-modify-write at dQ (no
 * read on a row block's first tile), dK, and dK_j, dV_j written at the
 * key block's last tile only.
 */
START_TEST(test_phase_counts)
{
	struct problem p;
	struct tiling t = { 5, 3, ORDER_FA2 };
	struct bw w;
	const struct schedule *s;
	const struct traffic_table *tt;
	struct schedule_tile tile;
	struct traffic prev, at[BWD_PHASES], whole;
	uint64_t R, C, d = 6, dv = 5, e = 4;
	long k;
	int ph;

	normal_problem(23, 17, 6, 5, &p);
	p.causal = 1;
	bw_open(&w, &p, &t, BWD_BUG_NONE, NULL, 1);
	s = backward_schedule(w.b);
	tt = backward_traffic(w.b);
	traffic_backward_dpass(&p, &prev);
	for (k = 0; k < s->nsteps; k++) {
		schedule_tile(s, k, &tile);
		R = (uint64_t)(tile.r1 - tile.r0);
		C = (uint64_t)(tile.c1 - tile.c0);
		for (ph = 0; ph < BWD_PHASES; ph++)
			traffic_backward_at(tt, k, (enum traffic_bwd_stage)ph, &at[ph]);
		traffic_upto(tt, k, &whole);
		ck_assert_uint_eq(at[BWD_PHASE_WRITE].hbm_read, whole.hbm_read);
		ck_assert_uint_eq(at[BWD_PHASE_WRITE].hbm_write, whole.hbm_write);
		ck_assert_uint_eq(at[BWD_PHASE_WRITE].flops, whole.flops);
		ck_assert_uint_eq(at[BWD_PHASE_WRITE].exps, whole.exps);
		/* load: reads only */
		ck_assert_uint_eq(at[0].hbm_write, prev.hbm_write);
		ck_assert_uint_eq(at[0].flops, prev.flops);
		ck_assert_uint_eq(at[0].hbm_read - prev.hbm_read,
		    (tile.first_in_outer ? C * (d + dv) * e : 0) + R * d * e +
		    R * dv * e + R * 8);
		ck_assert_uint_eq(at[BWD_PHASE_SCORES].flops - at[0].flops, 2 * R * C * d);
		ck_assert_uint_eq(at[BWD_PHASE_P].exps - at[0].exps, R * C);
		ck_assert_uint_eq(at[BWD_PHASE_DV].flops - at[BWD_PHASE_P].flops,
		    2 * R * C * dv);
		ck_assert_uint_eq(at[BWD_PHASE_DP].flops - at[BWD_PHASE_DV].flops,
		    2 * R * C * dv);
		ck_assert_uint_eq(at[BWD_PHASE_DS].hbm_write, prev.hbm_write);
		/* dQ_i: read back (not on its first tile), added to, written */
		ck_assert_uint_eq(at[BWD_PHASE_DQ].hbm_read - at[BWD_PHASE_DS].hbm_read,
		    tile.first_in_row ? 0 : R * d * 4);
		ck_assert_uint_eq(at[BWD_PHASE_DQ].hbm_write - prev.hbm_write,
		    R * d * 4);
		ck_assert_uint_eq(at[BWD_PHASE_DK].flops - at[BWD_PHASE_DQ].flops,
		    2 * R * C * d);
		ck_assert_uint_eq(at[BWD_PHASE_WRITE].hbm_write -
		    at[BWD_PHASE_DK].hbm_write, tile.i == s->tr - 1 ?
		    C * (d + dv) * e : 0);
		/* the view at each phase carries the same */
		for (ph = 0; ph < backward_step_phases(w.b, k); ph++) {
			ck_assert_int_eq(backward_seek(w.b, k, ph), 0);
			ck_assert(memcmp(&backward_view(w.b)->traffic, &at[ph],
			    sizeof at[ph]) == 0);
		}
		prev = whole;
	}
	bw_close(&w);
	problem_free(&p);
}
END_TEST

/*
 * A split forward's backward (--splits, fulltimeline_build): it starts from
 * the O and lse the combine merged, which lie within combine_bound (eps_o,
 * eps_l) of the unsplit run's.  Its gradients then lie within what
 * moving O by eps_o and lse by eps_l moves them, plus both runs' own
 * rounding (gamma of the terms' magnitude each, test_random_fp32).  In
 * real numbers, with P = exp(S - lse), dP and D the unsplit problem's:
 *
 *   |dP'| = P (e^eps_l - 1)      |dD| = eps_o sum_x |dO_x|
 *   |d dS| <= |dP'| |dP - D| + (P + |dP'|) |dD|
 *   |d dV_c| <= sum_r |dP'_rc| |dO_r|
 *   |d dQ_r| <= scale sum_c |d dS_rc| |K_c|,  |d dK_c| <= scale sum_r |d dS_rc| |Q_r|
 *
 * Every order and both forms, causal and masked rows.  A merge bug moves
 * O far past eps_o: the same check must then fail.
 */

/* The largest |a - b| over n entries, and whether it is within bound. */
static double
max_diff(const float *a, const float *b, long n)
{
	double worst = 0.0;
	long e;

	for (e = 0; e < n; e++)
		worst = fmax(worst, fabs((double)a[e] - (double)b[e]));
	return worst;
}

/* The bounds on each gradient's move (max over entries) for a problem
 * whose O moves by eps_o and lse by eps_l. */
static void
split_moves(const struct problem *p, const float *dout, double eps_o,
    double eps_l, double move[NGRAD])
{
	double *o = malloc((size_t)p->tq * p->dv * sizeof *o);
	double *lse = malloc((size_t)p->tq * sizeof *lse);
	double *dds = calloc((size_t)p->tq * p->tk, sizeof *dds);
	double *dq = calloc((size_t)p->tq * p->d + 1, sizeof *dq);
	double *dk = calloc((size_t)p->tk * p->d + 1, sizeof *dk);
	double *dv = calloc((size_t)p->tk * p->dv, sizeof *dv);
	double sc, pr, dpr, dd, dsum, dabs, grow = expm1(eps_l);
	char err[200];
	int r, c, x;

	ck_assert(o && lse && dds && dq && dk && dv);
	ck_assert(reference_attention(p, o, lse, err, sizeof err) == 0);
	memset(move, 0, NGRAD * sizeof *move);
	for (r = 0; r < p->tq; r++) {
		if (!isfinite(lse[r]))
			continue;	/* sees no key: 0 both ways */
		dsum = dabs = 0.0;
		for (x = 0; x < p->dv; x++) {
			dsum += (double)dout[(size_t)r * p->dv + x] * o[(size_t)r * p->dv + x];
			dabs += fabs((double)dout[(size_t)r * p->dv + x]);
		}
		dd = eps_o * dabs;
		for (c = 0; c < p->tk; c++) {
			if (!problem_visible(p, r, c))
				continue;
			if (p->scores_mode)
				sc = p->s[(size_t)r * p->tk + c];
			else
				for (sc = 0.0, x = 0; x < p->d; x++)
					sc += (double)p->q[(size_t)r * p->d + x] *
					    p->k[(size_t)c * p->d + x];
			if (!p->scores_mode)
				sc *= p->scale;
			if (sc == -INFINITY)
				continue;
			pr = exp(sc - lse[r]);
			for (dpr = 0.0, x = 0; x < p->dv; x++)
				dpr += (double)dout[(size_t)r * p->dv + x] *
				    p->v[(size_t)c * p->dv + x];
			dds[(size_t)r * p->tk + c] = pr * grow * fabs(dpr - dsum) +
			    (pr + pr * grow) * dd;
			for (x = 0; x < p->dv; x++)
				dv[(size_t)c * p->dv + x] += pr * grow *
				    fabs((double)dout[(size_t)r * p->dv + x]);
			for (x = 0; x < p->d; x++) {
				dq[(size_t)r * p->d + x] += p->scale *
				    dds[(size_t)r * p->tk + c] *
				    fabs((double)p->k[(size_t)c * p->d + x]);
				dk[(size_t)c * p->d + x] += p->scale *
				    dds[(size_t)r * p->tk + c] *
				    fabs((double)p->q[(size_t)r * p->d + x]);
			}
		}
	}
	for (x = 0; x < p->tq * p->d; x++)
		move[GQ] = fmax(move[GQ], dq[x]);
	for (x = 0; x < p->tk * p->d; x++)
		move[GK] = fmax(move[GK], dk[x]);
	for (x = 0; x < p->tk * p->dv; x++)
		move[GV] = fmax(move[GV], dv[x]);
	for (x = 0; x < p->tq * p->tk; x++)
		move[GS] = fmax(move[GS], dds[x]);
	free(o);
	free(lse);
	free(dds);
	free(dq);
	free(dk);
	free(dv);
}

/* The largest magnitude of each gradient's terms (gradref_magnitudes). */
static void
grad_magnitudes(const struct problem *p, const float *dout, double mag[NGRAD])
{
	double *m[NGRAD];
	char err[200];
	long e;
	int k;

	for (k = 0; k < NGRAD; k++) {
		m[k] = malloc((size_t)(grad_size(p, k) + 1) * sizeof(double));
		ck_assert(m[k] != NULL);
	}
	ck_assert(gradref_magnitudes(p, dout, m[GQ], m[GK], m[GV], m[GS], err,
	    sizeof err) == 0);
	for (k = 0; k < NGRAD; k++) {
		mag[k] = 0.0;
		for (e = 0; e < grad_size(p, k); e++)
			mag[k] = fmax(mag[k], m[k][e]);
		free(m[k]);
	}
}

/* A split forward's backward: its gradients, dO, the lse it started
 * from, and the combine's bounds. */
struct split_run {
	struct backward_grads g;
	float *dout, *lse;
	struct combine_bounds cb;
};

/* p's backward after a forward split into n ranges (n = 1: unsplit),
 * built by fulltimeline_build as the commands and the view build it. */
static void
split_run_open(const struct problem *p, const struct tiling *t, int n,
    enum merge_form form, const struct combine_rule *rule,
    struct split_run *run)
{
	struct online_rule fwd = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct split_plan plan = { n, form, 0 };
	struct options o;
	struct fulltimeline b;
	struct sim *sim;
	size_t bytes = (size_t)p->tq * sizeof(float);
	char err[256];

	memset(run, 0, sizeof *run);
	options_init(&o);
	o.backward = 1;
	o.tiling = *t;
	o.combine = *rule;
	o.spec.seed = 5;
	sim = sim_new_split(p, t, &plan, &fwd, err, sizeof err);
	ck_assert_msg(sim != NULL, "%s", err);
	ck_assert_msg(fulltimeline_build(&o, p, sim, &b, err, sizeof err) == 0, "%s",
	    err);
	ck_assert((b.comb != NULL) == (n > 1));
	ck_assert_int_eq(timeline_segments(b.tl), n > 1 ? 3 : 2);
	grads_alloc(p, &run->g);
	ck_assert(backward_run(b.bwd, NULL, NULL, &run->g) == 0);
	if (n > 1)
		combine_bound(b.comb, &run->cb);
	run->dout = malloc(bytes * (size_t)p->dv);
	run->lse = malloc(bytes);
	ck_assert(run->dout != NULL && run->lse != NULL);
	memcpy(run->dout, b.dout, bytes * (size_t)p->dv);
	memcpy(run->lse, b.lse, bytes);
	fulltimeline_close(&b);
	sim_free(sim);
}

static void
split_run_close(struct split_run *run)
{
	grads_free(&run->g);
	free(run->dout);
	free(run->lse);
}

/* The split run's gradients against the unsplit run's: the worst
 * difference over its bound, over the gradients. */
static double
split_ratio(const struct tu_case *c, int n, enum merge_form form,
    const struct combine_rule *rule)
{
	struct split_run one, split;
	double move[NGRAD], mag[NGRAD], gamma, worst = 0.0, diff;
	int k;

	split_run_open(&c->p, &c->t, 1, form, rule, &one);
	split_run_open(&c->p, &c->t, n, form, rule, &split);
	ck_assert(memcmp(one.dout, split.dout,
	    (size_t)c->p.tq * c->p.dv * sizeof(float)) == 0);
	split_moves(&c->p, one.dout, split.cb.o, split.cb.lse, move);
	grad_magnitudes(&c->p, one.dout, mag);
	gamma = fp32_gamma(&c->p, one.lse);
	for (k = 0; k < NGRAD; k++) {
		diff = max_diff(grad_of(&split.g, k), grad_of(&one.g, k),
		    grad_size(&c->p, k));
		ck_assert(isfinite(diff));
		worst = fmax(worst, diff / (move[k] + 2.0 * gamma * mag[k] + 1e-30));
	}
	split_run_close(&one);
	split_run_close(&split);
	return worst;
}

START_TEST(test_split_forward)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct combine_rule rule = { COMBINE_LTR, MERGE_BUG_NONE };
	double r, worst = 0.0;
	int n, splits;

	inputs_rng_seed(&rng, 41);
	for (n = 0; n < 36; n++) {
		tu_random_case(&rng, 40, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    DTYPE_FP32, &c);
		splits = 2 + n % 4;
		rule.order = (enum combine_order)(n % 3);
		r = split_ratio(&c, splits, (enum merge_form)(n / 3 % 2), &rule);
		ck_assert_msg(r <= 1.0, "case %d (%s), %d splits, %s: gradients "
		    "%g of the bound", n, c.what, splits,
		    combine_order_name(rule.order), r);
		worst = fmax(worst, r);
		tu_case_free(&c);
	}
	/* The split runs did move the gradients: not the same bits. */
	ck_assert_msg(worst > 0.0, "no split changed any gradient");

	/* A merge bug: O is wrong, and so are the gradients. */
	rule.order = COMBINE_LTR;
	rule.bug = MERGE_BUG_NO_RESCALE_ONE;
	normal_problem(24, 40, 8, 8, &c.p);
	c.t.br = 4;
	c.t.bc = 4;
	c.t.order = ORDER_FA2;
	r = split_ratio(&c, 3, MERGE_MLU, &rule);
	ck_assert_msg(r > 10.0, "merge bug no-rescale-one: only %g of the bound", r);
	problem_free(&c.p);
}
END_TEST

/* ---- dO and the options ---- */

/*
 * The backward's float32 range.  A dO whose column adds up past FLT_MAX
 * is refused (dV sums it with P <= 1), and one whose row times a row of
 * V overflows (dP); just inside both, it passes.  Q tiny against K near
 * FLT_MAX passes the forward's checks, but dQ = scale dS K overflows
 * in float32: backward_check_grads names the entry, and passes finite
 * gradients.
 */
START_TEST(test_float32_range)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 4, 4, ORDER_FA1 };
	struct backward_grads g;
	struct bw w;
	float dout[16 * 4], q[1], k[16], v[16], *a;
	char err[256];
	int e;

	problem_spec_init(&spec);
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	for (e = 0; e < 64; e++)
		dout[e] = 3e38f;
	spec.dout.data = dout;
	spec.dout.rows = 16;
	spec.dout.cols = 4;
	ck_assert(problem_grad_output(&spec, &p, &a, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "column 0 adds up to") &&
	    strstr(err, "dV could overflow"), "%s", err);
	for (e = 0; e < 64; e++)
		dout[e] = 3e38f / 17;	/* a column of 16 fits */
	ck_assert_msg(problem_grad_output(&spec, &p, &a, err, sizeof err) == 0,
	    "%s", err);
	free(a);
	problem_free(&p);

	/* dP: one row of dO against a V of large rows */
	problem_spec_init(&spec);
	spec.tq = 1;
	spec.tk = 4;
	spec.d = 2;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	for (e = 0; e < 8; e++)
		p.v[e] = 1e20f;
	dout[0] = dout[1] = 1e19f;
	spec.dout.data = dout;
	spec.dout.rows = 1;
	spec.dout.cols = 2;
	ck_assert(problem_grad_output(&spec, &p, &a, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "dP could overflow"), "%s", err);
	problem_free(&p);

	/* dQ's sum overflows where the forward was exact */
	problem_spec_init(&spec);
	q[0] = 2e-38f;
	for (e = 0; e < 16; e++) {
		k[e] = e % 2 ? -3e38f : 3e38f;
		v[e] = (float)e;
	}
	spec.q.data = q;
	spec.q.rows = spec.q.cols = 1;
	spec.k.data = k;
	spec.k.rows = 16;
	spec.k.cols = 1;
	spec.v.data = v;
	spec.v.rows = 16;
	spec.v.cols = 1;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	bw_open(&w, &p, &t, BWD_BUG_NONE, NULL, 1);
	bw_run(&w, &g);
	ck_assert(!isfinite(g.dq[0]));
	ck_assert_int_eq(backward_check_grads(w.b, &g, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "dQ entry (0, 0) is "), "%s", err);
	/* the same gradients, dQ left out: the rest are finite */
	free(g.dq);
	g.dq = NULL;
	ck_assert_msg(backward_check_grads(w.b, &g, err, sizeof err) == 0, "%s",
	    err);
	grads_free(&g);
	bw_close(&w);
	problem_free(&p);
}
END_TEST

START_TEST(test_grad_output)
{
	struct problem_spec spec;
	struct problem p;
	float *a, *b, bad[3] = { 1, 2, 3 }, nan3[8];
	char err[256];
	int e, differ = 0;

	problem_spec_init(&spec);
	spec.tq = 4;
	spec.dv = 2;
	spec.d = 3;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	ck_assert(problem_grad_output(&spec, &p, &a, err, sizeof err) == 0);
	ck_assert(problem_grad_output(&spec, &p, &b, err, sizeof err) == 0);
	ck_assert(memcmp(a, b, 8 * sizeof *a) == 0);	/* seeded */
	free(b);
	spec.seed = 2;
	ck_assert(problem_grad_output(&spec, &p, &b, err, sizeof err) == 0);
	for (e = 0; e < 8; e++)
		differ += a[e] != b[e];
	ck_assert_int_gt(differ, 6);
	free(a);
	free(b);

	spec.dout.data = bad;
	spec.dout.rows = 1;
	spec.dout.cols = 3;
	ck_assert(problem_grad_output(&spec, &p, &a, err, sizeof err) == -1);
	ck_assert(a == NULL);
	ck_assert_msg(strstr(err, "1 x 3") && strstr(err, "4 x 2"), "%s", err);
	for (e = 0; e < 8; e++)
		nan3[e] = e == 5 ? NAN : 1.0f;
	spec.dout.data = nan3;
	spec.dout.rows = 4;
	spec.dout.cols = 2;
	ck_assert(problem_grad_output(&spec, &p, &a, err, sizeof err) == -1);
	ck_assert_msg(strstr(err, "NaN") != NULL, "%s", err);
	problem_free(&p);
}
END_TEST

START_TEST(test_options)
{
	struct options o;
	char err[256];
	char *ok[] = { "run", "--backward", "--grad-bug", "dq-overwrite",
	    "--grad-q", "dq.npy" };
	char *lonely[] = { "run", "--grad-v", "dv.npy" };
	char *badbug[] = { "run", "--backward", "--grad-bug", "no-D" };

	options_init(&o);
	ck_assert(options_parse(6, ok, 1, OPT_PROBLEM | OPT_BACKWARD, NULL, NULL,
	    &o, err, sizeof err) == 0);
	ck_assert(o.backward && o.grad_bug == BWD_BUG_DQ_OVERWRITE);
	ck_assert_str_eq(o.grad_q, "dq.npy");
	options_free(&o);
	options_init(&o);
	ck_assert(options_parse(3, lonely, 1, OPT_PROBLEM | OPT_BACKWARD, NULL,
	    NULL, &o, err, sizeof err) == -1);
	ck_assert_str_eq(err, "--grad-v needs --backward");
	options_free(&o);
	options_init(&o);
	ck_assert(options_parse(4, badbug, 1, OPT_PROBLEM | OPT_BACKWARD, NULL,
	    NULL, &o, err, sizeof err) == -1);
	ck_assert(strstr(err, "--grad-bug must be") != NULL);
	options_free(&o);
	/* commands without the group do not know the options */
	options_init(&o);
	ck_assert(options_parse(6, ok, 1, OPT_PROBLEM, NULL, NULL, &o, err,
	    sizeof err) == -1);
	options_free(&o);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("backward");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_random_fp32);
	tcase_add_test(tc, test_random_narrow);
	tcase_add_test(tc, test_precision_rule);
	tcase_add_test(tc, test_finite_differences);
	tcase_add_test(tc, test_bugs_show);
	tcase_add_test(tc, test_no_d_hides_when_do_orthogonal_to_o);
	tcase_add_test(tc, test_max_not_lse_hides_when_one_key_dominates);
	tcase_add_test(tc, test_scale_and_overwrite_hide);
	tcase_add_test(tc, test_empty_rows_causal);
	tcase_add_test(tc, test_empty_row_in_scores);
	tcase_add_test(tc, test_seek_exact);
	tcase_add_test(tc, test_seek_sparse_checkpoints);
	tcase_add_test(tc, test_phase_moves);
	tcase_add_test(tc, test_flops_ratio);
	tcase_add_test(tc, test_hbm_against_standard);
	tcase_add_test(tc, test_step_counts);
	tcase_add_test(tc, test_phase_counts);
	tcase_add_test(tc, test_split_forward);
	tcase_add_test(tc, test_grad_output);
	tcase_add_test(tc, test_float32_range);
	tcase_add_test(tc, test_options);
	suite_add_tcase(s, tc);
	return s;
}
