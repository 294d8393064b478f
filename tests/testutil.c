/* testutil.c - helpers the check suites share (see testutil.h). */
#include "config.h"

#include "testutil.h"
#include "model/combine.h"
#include "model/compare.h"
#include "model/reference.h"
#include "model/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
draw(struct inputs_rng *rng, int lo, int hi)
{
	return lo + (int)(inputs_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

void
tu_scores_problem(const float *s, int tq, int tk, const float *v, int dv,
    struct problem *p)
{
	struct problem_spec spec;
	char err[256];

	problem_spec_init(&spec);
	spec.s.data = s;
	spec.s.rows = tq;
	spec.s.cols = tk;
	spec.v.data = v;
	spec.v.rows = tk;
	spec.v.cols = dv;
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
}

void
tu_random_case(struct inputs_rng *rng, int maxt, unsigned kinds,
    enum dtype dtype, struct tu_case *c)
{
	struct problem_spec spec;
	float *s = NULL, *v = NULL;
	char err[256];
	int scores = (kinds & TU_SCORES) && draw(rng, 0, 3) == 0;
	int r, x, tq, tk;

	memset(c, 0, sizeof *c);
	problem_spec_init(&spec);
	spec.tq = tq = draw(rng, 1, maxt);
	spec.tk = tk = draw(rng, 1, maxt);
	spec.d = draw(rng, 1, 24);
	spec.dv = draw(rng, 1, 24);
	spec.causal = (kinds & TU_CAUSAL) && draw(rng, 0, 1);
	spec.input = (enum inputs_kind)draw(rng, 0, 3);
	spec.seed = inputs_rng_next(rng);
	spec.dtype = dtype;
	c->t.br = draw(rng, 1, maxt / 2 + 8);
	c->t.bc = draw(rng, 1, maxt / 2 + 8);
	spec.bc = c->t.bc;
	c->t.order = draw(rng, 0, 1) ? ORDER_FA1 : ORDER_FA2;
	c->rule.convention = draw(rng, 0, 1) ? CONV_NORMALIZED : CONV_UNNORMALIZED;
	c->rule.bug = BUG_NONE;

	if (scores) {
		/* Scores spread widely (the seed's example has a gap of 1000),
		 * some masked entries, and now and then a fully masked row. */
		s = malloc((size_t)tq * tk * sizeof *s);
		v = malloc((size_t)tk * spec.dv * sizeof *v);
		ck_assert(s != NULL && v != NULL);
		for (r = 0; r < tq * tk; r++)
			s[r] = (float)(inputs_rng_normal(rng) * 4.0);
		for (r = 0; r < tk * spec.dv; r++)
			v[r] = (float)inputs_rng_normal(rng);
		if (kinds & TU_MASKED_ROWS) {
			for (r = 0; r < tq * tk; r++)
				if (draw(rng, 0, 4) == 0)
					s[r] = -INFINITY;
			if (draw(rng, 0, 1)) {
				r = draw(rng, 0, tq - 1);
				for (x = 0; x < tk; x++)
					s[(size_t)r * tk + x] = -INFINITY;
			}
		}
		spec.s.data = s;
		spec.s.rows = tq;
		spec.s.cols = tk;
		spec.v.data = v;
		spec.v.rows = tk;
		spec.v.cols = spec.dv;
		spec.tq = spec.tk = spec.d = spec.dv = 0;
	}
	ck_assert_msg(problem_build(&spec, &c->p, err, sizeof err) == 0, "%s", err);
	free(s);
	free(v);
	snprintf(c->what, sizeof c->what, "%s Tq=%d Tk=%d d=%d dv=%d Br=%d Bc=%d "
	    "%s %s%s %s", scores ? "scores" : inputs_kind_name(spec.input),
	    c->p.tq, c->p.tk, c->p.d, c->p.dv, c->t.br, c->t.bc,
	    schedule_order_name(c->t.order),
	    online_convention_name(c->rule.convention),
	    c->p.causal ? " causal" : "", dtype_name(dtype));
}

void
tu_case_free(struct tu_case *c)
{
	problem_free(&c->p);
}

void
tu_run(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, float **o, float **lse)
{
	struct sim *sim;
	char err[256];

	sim = sim_new(p, t, rule, err, sizeof err);
	ck_assert_msg(sim != NULL, "%s", err);
	*o = malloc((size_t)p->tq * p->dv * sizeof **o);
	*lse = malloc((size_t)p->tq * sizeof **lse);
	ck_assert(*o != NULL && *lse != NULL);
	ck_assert_int_eq(sim_run(sim, NULL, NULL, *o, *lse), 0);
	sim_free(sim);
}

void
tu_run_split(const struct problem *p, const struct tiling *t, int splits,
    int pack_gqa, const struct online_rule *rule, float *o, float *lse)
{
	struct split_plan sp;
	struct combine_rule cr = { COMBINE_LTR, MERGE_BUG_NONE };
	struct combine *comb;
	struct sim *sim;
	char err[256];

	memset(&sp, 0, sizeof sp);
	sp.splits = splits;
	sp.pack_gqa = pack_gqa;
	sim = sim_new_split(p, t, &sp, rule, err, sizeof err);
	ck_assert_msg(sim != NULL, "%s", err);
	ck_assert_int_eq(sim_run(sim, NULL, NULL, o, lse), 0);
	if (splits > 1) {
		comb = combine_new(sim, &cr, err, sizeof err);
		ck_assert_msg(comb != NULL, "%s", err);
		ck_assert_int_eq(combine_run(comb, NULL, NULL, o, lse), 0);
		combine_free(comb);
	}
	sim_free(sim);
}

double
tu_forward_error(const struct problem *p, const float *o, const float *lse,
    double *lse_err)
{
	struct problem one;
	double *ref, *rl, worst = 0.0, big = 1.0;
	char err[256];
	int h, r, x;

	ref = malloc((size_t)p->tq * p->dv * sizeof *ref);
	rl = malloc((size_t)p->tq * sizeof *rl);
	ck_assert(ref != NULL && rl != NULL);
	*lse_err = 0.0;
	for (h = 0; h < p->heads; h++) {
		problem_head(p, h, &one);
		ck_assert_int_eq(reference_attention(&one, ref, rl, err, sizeof err),
		    0);
		for (r = 0; r < p->tq; r++) {
			size_t row = (size_t)h * p->tq + r;

			ck_assert_msg(isinf(rl[r]) == isinf(lse[row]), "head %d row %d: "
			    "lse %g, the reference's %g", h, r, (double)lse[row], rl[r]);
			if (!isinf(rl[r]))
				*lse_err = fmax(*lse_err, fabs(lse[row] - rl[r]) /
				    fmax(1.0, fabs(rl[r])));
			for (x = 0; x < p->dv; x++) {
				ck_assert(isfinite(o[row * p->dv + x]));
				worst = fmax(worst, fabs(o[row * p->dv + x] -
				    ref[(size_t)r * p->dv + x]));
				big = fmax(big, fabs(ref[(size_t)r * p->dv + x]));
			}
		}
	}
	free(ref);
	free(rl);
	return worst / big;
}

double
tu_reference_loss(const struct problem *p, const float *dout)
{
	double *o, *lse, sum = 0.0;
	char err[256];
	int e;

	o = malloc((size_t)p->tq * p->dv * sizeof *o);
	lse = malloc((size_t)p->tq * sizeof *lse);
	ck_assert(o != NULL && lse != NULL);
	ck_assert_int_eq(reference_attention(p, o, lse, err, sizeof err), 0);
	for (e = 0; e < p->tq * p->dv; e++)
		sum += (double)dout[e] * o[e];
	free(o);
	free(lse);
	return sum;
}

double
tu_fd_error(struct problem *p, const float *dout, const double *g,
    double *big)
{
	const double h = 0x1p-9;
	float *x = p->scores_mode ? p->s : p->q, keep;
	int n = p->scores_mode ? p->tq * p->tk : p->tq * p->d, e;
	double num, worst = 0.0, most = 1e-30;

	for (e = 0; e < n; e++) {
		keep = x[e];
		x[e] = (float)(keep + h);
		num = tu_reference_loss(p, dout);
		x[e] = (float)(keep - h);
		num -= tu_reference_loss(p, dout);
		x[e] = keep;
		num /= 2 * h;
		worst = fmax(worst, fabs(num - g[e]));
		most = fmax(most, fabs(g[e]));
	}
	if (big != NULL)
		*big = most;
	return worst;
}

void
tu_spec_scores(struct problem_spec *spec, uint64_t seed, double scale,
    float **s, float **v)
{
	struct inputs_rng rng;
	int e, ns = spec->heads * spec->tq * spec->tk;
	int nv = spec->kv_heads * spec->tk * spec->dv;

	inputs_rng_seed(&rng, seed);
	*s = malloc((size_t)ns * sizeof **s);
	*v = malloc((size_t)nv * sizeof **v);
	ck_assert(*s != NULL && *v != NULL);
	for (e = 0; e < ns; e++)
		(*s)[e] = (float)(inputs_rng_normal(&rng) * scale);
	for (e = 0; e < nv; e++)
		(*v)[e] = (float)inputs_rng_normal(&rng);
	spec->s.data = *s;
	spec->s.rows = spec->heads * spec->tq;
	spec->s.cols = spec->tk;
	spec->v.data = *v;
	spec->v.rows = spec->kv_heads * spec->tk;
	spec->v.cols = spec->dv;
	spec->tq = spec->tk = spec->d = spec->dv = 0;
}

double
tu_rel_error(const struct problem *p, const float *o)
{
	struct compare_result res;
	double *ref, *lse;
	char err[256];

	ref = malloc((size_t)p->tq * p->dv * sizeof *ref);
	lse = malloc((size_t)p->tq * sizeof *lse);
	ck_assert(ref != NULL && lse != NULL);
	ck_assert_int_eq(reference_attention(p, ref, lse, err, sizeof err), 0);
	compare_arrays(o, ref, (long)p->tq * p->dv, 0, 0, &res);
	free(ref);
	free(lse);
	return res.max_rel;
}

/*
 * How far float32 may move lse = m + log l from the double reference's
 * (u = 2^-24), to first order, each rounding counted once with the
 * same sign:
 *  - S: a score sums d products in order, then scales: |s^ - s| <= e_r
 *    = (d + 1) u scale max_c sum_x |q_x k_x| over row r's keys (0 for a
 *    scores problem, whose S is given).  lse is a soft maximum of S
 *    (d lse / d s_c = p_c, summing to 1), so it moves by e_r at most;
 *    the max m itself cancels (P and l are taken about the same m).
 *  - l: each p = expf(s - m) is off by one unit of expf plus the
 *    rounding of s - m, which moves p by u |s - m| p <= u / e: with
 *    l >= 1 (the max's own term is 1), at most 2 u of l per key; the
 *    sums add one u of l per key (Tk) and each tile's alpha l + rowsum
 *    three more (alpha's expf, the product, the add: 3 Tc <= 3 Tk).
 *    log l then carries l's relative error, plus one unit of logf
 *    (|log l| <= log Tk <= Tk, so within the Tk terms).
 *  - m + log l: one rounding, u |lse|.
 * Together atol_r = e_r + (6 Tk + 4) u and rtol = u; the test allows
 * twice both (the stale max the test guards against moves lse by the
 * jump of m, orders of magnitude more).  A row the reference says sees
 * no key must be -inf exactly (compare_close: equal infinities pass).
 */
int
tu_lse_check(const struct problem *p, const float *lse, double *worst,
    char *msg, size_t msglen)
{
	const double u = 0x1p-24;
	double *ref, *o, es, dot, atol, rtol = 2 * u, ratio;
	char err[256];
	int r, c, x, bad = 0;

	ref = malloc((size_t)p->tq * sizeof *ref);
	o = malloc(((size_t)p->tq * p->dv + 1) * sizeof *o);
	ck_assert(ref != NULL && o != NULL);
	ck_assert_int_eq(reference_attention(p, o, ref, err, sizeof err), 0);
	if (worst != NULL)
		*worst = 0.0;
	for (r = 0; r < p->tq; r++) {
		es = 0.0;
		for (c = 0; c < p->tk && !p->scores_mode; c++) {
			dot = 0.0;
			for (x = 0; x < p->d; x++)
				dot += fabs((double)p->q[(size_t)r * p->d + x] *
				    (double)p->k[(size_t)c * p->d + x]);
			es = fmax(es, (p->d + 1) * u * p->scale * dot);
		}
		atol = 2 * (es + (6.0 * p->tk + 4) * u);
		if (!compare_close(lse[r], ref[r], atol, rtol)) {
			if (!bad)
				snprintf(msg, msglen, "lse[%d] = %.9g, reference %.9g: "
				    "off by %g, bound %g", r, (double)lse[r], ref[r],
				    fabs((double)lse[r] - ref[r]),
				    atol + rtol * fabs(ref[r]));
			bad = 1;
		}
		if (worst != NULL && isfinite(ref[r]) && isfinite(lse[r])) {
			ratio = fabs((double)lse[r] - ref[r]) /
			    (atol + rtol * fabs(ref[r]));
			*worst = fmax(*worst, ratio);
		}
	}
	free(ref);
	free(o);
	return bad;
}
