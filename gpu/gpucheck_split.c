/*
 * gpucheck_split.c - a kernel's split-KV run against the simulator's
 * partials, merges and result (gpucheck_split.h).
 *
 * Why the tolerance is what gpucheck_split.h says.  The partials: each
 * range runs the kernel's tile step from an empty state over its own
 * tiles, so gpucheck.c's argument holds range by range (over shorter
 * sums): in the simulator's order m is the same bits, l and lse are
 * within GPUCHECK_RTOL, u and o within rtol_acc with an absolute part
 * of rtol_acc max|V| (times l for u, whose terms add up to l max|V| at
 * most).
 *
 * The merges run merge.h's very lines on both sides (float32, no fused
 * multiply-adds: teach_split.cu is built with -fmad=false, combine.c
 * with -ffp-contract=off) on operands that may already differ by the
 * partials' differences.  What one merge adds to them, in units of
 * 2^-24:
 *   mlu   m = max(m_a, m_b) of the same bits: the same bits.  A weight
 *         e^(m_s - m) is one expf of the same float on both sides: 3
 *         units apart (CUDA's within 2 of the true value, glibc's within
 *         1).  l = w_a l_a + w_b l_b adds two terms of one sign, so it
 *         is relatively no further off than its worst term, plus the
 *         weight's 3 units and up to one unit for each of its three
 *         roundings (which may go to neighbouring floats when the
 *         operands differ): 6.  u is made of the same terms, of either
 *         sign; measured against w_a |u_a| + w_b |u_b| <= l max|V|, as
 *         its absolute part does, it grows the same way.
 *   olse  The merged lse is m + log(e^(a - m) + e^(b - m)) with m one of
 *         the two lse, which may differ already: two expf, a sum, a logf
 *         and the sum with m, whose rounding is at |lse|'s scale, add a
 *         few units of max(1, |lse|) to its absolute difference; a weight
 *         e^(lse_s - lse) is then relatively off by as much as its
 *         exponent is absolutely: a few units of max(1, L), L the largest
 *         |lse| of a partial.
 * GPUCHECK_MERGE_UNITS = 8 units a merge leaves a margin over each.  A
 * value passes through at most D merges, D the depth of the plan (N for
 * ltr and reverse, which start from the empty state; about log2 N + 1
 * for tree), so the merges, O and lse get e = D 8 2^-24 on top of the
 * partials' rule, times max(1, L) in the olse form.  For ltr over 64
 * ranges that is 3e-5, under GPUCHECK_RTOL; it widens the rule only
 * where many merges or large scores make the rounding larger.  A fault
 * is far outside: a range that leaves out its rescale ends with l and u
 * off by the factor e^(m_old - m_new) it forgot, a merge that drops an
 * operand loses that partial's whole share of l and O, and each bug mode
 * runs on both sides.
 */
#include "config.h"

#include "gpucheck.h"
#include "gpucheck_split.h"
#include "model/combine.h"
#include "model/sim.h"
#include "model/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
gpucheck_split_report_free(struct gpucheck_split_report *rep)
{
	free(rep->range);
	free(rep->merge);
	rep->range = NULL;
	rep->merge = NULL;
}

int
gpucheck_split_depth(const struct combine *comb)
{
	const struct combine_merge *plan = combine_plan(comb);
	const int merges = combine_merges(comb);
	int *depth, n, da, db, slots = 0, best = 0;

	for (n = 0; n < merges; n++)
		slots = plan[n].dst + 1 > slots ? plan[n].dst + 1 : slots;
	depth = calloc((size_t)slots, sizeof *depth);
	if (depth == NULL)
		return merges;	/* no plan is deeper than its merges */
	for (n = 0; n < merges; n++) {
		da = plan[n].a.source == COMBINE_SLOT ? depth[plan[n].a.index] : 0;
		db = plan[n].b.source == COMBINE_SLOT ? depth[plan[n].b.index] : 0;
		depth[plan[n].dst] = 1 + (da > db ? da : db);
		best = depth[plan[n].dst] > best ? depth[plan[n].dst] : best;
	}
	free(depth);
	return best;
}

/* The simulator's merges, (rows, merges) as the kernel lays them. */
struct gpucheck_split_sim {
	int merges;
	float *m, *l;
};

static int
gpucheck_split_record(const struct combine_view *v, void *ctx)
{
	struct gpucheck_split_sim *s = ctx;
	size_t at;
	int r;

	for (r = 0; r < v->rows; r++) {
		at = (size_t)(v->r0 + r) * s->merges + (size_t)v->merge;
		s->m[at] = v->m[r];
		s->l[at] = v->l[r];
	}
	return 0;
}

/* One value of a kind: its largest difference, and its excess into *e;
 * counts a failure.  A NaN agrees with a NaN alone (gpucheck_split.h). */
static void
gpucheck_split_note(double got, double ref, double atol, double rtol,
    double *maxdiff, double *e, long *failures)
{
	double x;

	if (isnan(got) && isnan(ref))
		return;
	if (!gpucheck_agree(got, ref, atol, rtol, maxdiff, &x))
		(*failures)++;
	if (!(x <= *e))
		*e = x;
}

/* Range s of row R, entry e = R N + s, against the simulator's. */
static void
gpucheck_split_partial(struct gpucheck_split_report *rep,
    const struct gpu_split_result *g, const struct sim_partials *pt,
    int normalized, int exact, size_t e)
{
	struct gpucheck_split_range *rg = &rep->range[e % (size_t)pt->splits];
	const float *want = normalized ? pt->o : pt->u;
	const double atol_u = rep->rtol_acc * rep->vmax *
	    (normalized ? 1.0 : fabs((double)pt->l[e]));
	const double atol_o = rep->rtol_acc * rep->vmax;
	size_t x, dv = (size_t)pt->dv;

	if (rep->order_promised)
		rep->m_inexact += memcmp(&g->m[e], &pt->m[e], sizeof(float)) != 0;
	if (exact)
		for (x = 0; x < dv; x++) {
			rep->u_compared += 2;
			rep->u_inexact += (memcmp(&g->acc[e * dv + x],
			    &want[e * dv + x], sizeof(float)) != 0) +
			    (memcmp(&g->o[e * dv + x], &pt->o[e * dv + x],
			    sizeof(float)) != 0);
		}
	gpucheck_split_note(g->m[e], pt->m[e], rep->rtol, rep->rtol, &rg->m,
	    &rg->excess, &rep->part_failures);
	gpucheck_split_note(g->l[e], pt->l[e], rep->rtol, rep->rtol, &rg->l,
	    &rg->excess, &rep->part_failures);
	gpucheck_split_note(g->lse[e], pt->lse[e], rep->rtol, rep->rtol,
	    &rg->lse, &rg->excess, &rep->part_failures);
	for (x = 0; x < dv; x++) {
		gpucheck_split_note(g->acc[e * dv + x], want[e * dv + x], atol_u,
		    rep->rtol_acc, &rg->acc, &rg->excess, &rep->part_failures);
		gpucheck_split_note(g->o[e * dv + x], pt->o[e * dv + x], atol_o,
		    rep->rtol_acc, &rg->o, &rg->excess, &rep->part_failures);
	}
}

/* The rule's numbers: the partials' from gpucheck's, the merges' e. */
static void
gpucheck_split_tol(const struct gpu_kernel *k, const struct problem *p,
    const struct combine *comb, const struct sim_partials *pt,
    struct gpucheck_split_report *rep)
{
	struct gpucheck_tol tol;
	size_t e, n = (size_t)pt->rows * pt->splits;
	double grow;

	gpucheck_tolerance(k, p, &tol);
	rep->rtol = tol.rtol;
	rep->rtol_acc = tol.rtol_acc;
	rep->vmax = tol.vmax;
	for (e = 0; e < n; e++)
		if (isfinite(pt->lse[e]))
			rep->lse_max = fmax(rep->lse_max, fabs(pt->lse[e]));
	rep->depth = gpucheck_split_depth(comb);
	grow = rep->depth * GPUCHECK_MERGE_UNITS * 0x1p-24;
	if (combine_form(comb) == MERGE_OLSE)
		grow *= fmax(1.0, rep->lse_max);
	rep->rtol_merge = tol.rtol + grow;
	rep->rtol_out = tol.rtol_acc + grow;
}

/* The kernel's run: of sim and comb, or under a test fault of a sim
 * and combine of the same problem and plans with the fault's bugs. */
static int
gpucheck_split_gpu(const struct gpu_kernel *k, const struct sim *sim,
    const struct combine *comb, const struct gpucheck_fault *fault,
    struct gpu_split_result *g, char *err, size_t errlen)
{
	const struct schedule *sc = sim_schedule(sim);
	const struct tiling t = { sc->br, sc->bc, sc->order };
	const struct split_plan sp = { sc->splits, sc->partials, sc->pack };
	struct online_rule rule = *sim_rule(sim);
	struct combine_rule cr = *combine_rule(comb);
	struct sim *fsim;
	struct combine *fcomb = NULL;
	int rc = -1;

	if (fault == NULL)
		return gpu_split_run(k, sim, comb, 0, 0, g, err, errlen);
	rule.bug = (enum online_bug)fault->bug;
	cr.bug = (enum merge_bug)fault->merge_bug;
	fsim = sim_new_split(sim_problem(sim), &t, &sp, &rule, err, errlen);
	if (fsim != NULL && (fcomb = combine_new(fsim, &cr, err, errlen)) != NULL)
		rc = gpu_split_run(k, fsim, fcomb, 0, 0, g, err, errlen);
	combine_free(fcomb);
	sim_free(fsim);
	return rc;
}

int
gpucheck_split_run(const struct gpu_kernel *k, struct sim *sim,
    struct combine *comb, const struct gpucheck_fault *fault,
    struct gpucheck_split_report *rep, char *err, size_t errlen)
{
	const struct problem *p = sim_problem(sim);
	const struct sim_partials *pt;
	struct gpucheck_split_sim ss;
	struct gpu_split_result g;
	float *o = NULL, *lse = NULL;
	size_t rows, e, x, n, dv = (size_t)p->dv;
	int normalized = sim_rule(sim)->convention == CONV_NORMALIZED;
	int mlu = combine_form(comb) == MERGE_MLU, exact, rc = -1;

	if (k == NULL)
		k = gpu_kernel_find("teaching");
	memset(rep, 0, sizeof *rep);
	memset(&ss, 0, sizeof ss);
	if (gpucheck_split_gpu(k, sim, comb, fault, &g, err, errlen) != 0)
		return -1;
	rows = (size_t)g.rows;
	ss.merges = g.merges;
	ss.m = util_calloc(rows * g.merges, sizeof(float), "merges", err,
	    errlen);
	ss.l = util_calloc(rows * g.merges, sizeof(float), "merges", err,
	    errlen);
	o = util_calloc(rows * dv, sizeof *o, "O", err, errlen);
	lse = util_calloc(rows, sizeof *lse, "lse", err, errlen);
	rep->range = util_calloc((size_t)g.splits, sizeof *rep->range,
	    "split report", err, errlen);
	rep->merge = util_calloc((size_t)g.merges, sizeof *rep->merge,
	    "split report", err, errlen);
	if (ss.m == NULL || ss.l == NULL || o == NULL || lse == NULL ||
	    rep->range == NULL || rep->merge == NULL)
		goto out;
	if (sim_run(sim, NULL, NULL, NULL, NULL) != 0) {
		util_error(err, errlen, "simulator: out of memory");
		goto out;
	}
	combine_run(comb, gpucheck_split_record, &ss, o, lse);
	pt = sim_partials(sim);

	rep->splits = g.splits;
	rep->merges = g.merges;
	rep->order_promised = k->arith == GPU_ARITH_SIM_ORDER;
	rep->ms_ranges = g.ms_ranges;
	rep->ms_combine = g.ms_combine;
	rep->device_bytes = g.device_bytes;
	snprintf(rep->device, sizeof rep->device, "%s", g.device);
	gpucheck_split_tol(k, p, comb, pt, rep);

	/* Every row of every range. */
	exact = rep->order_promised && gpucheck_exact_p(p);
	n = rows * (size_t)g.splits;
	for (e = 0; e < n; e++)
		gpucheck_split_partial(rep, &g, pt, normalized, exact, e);
	/* Every merge of every row. */
	for (e = 0; e < rows * (size_t)g.merges; e++) {
		struct gpucheck_split_merge *mg = &rep->merge[e % g.merges];

		if (rep->order_promised && mlu)
			rep->m_inexact += memcmp(&g.merge_m[e], &ss.m[e],
			    sizeof(float)) != 0;
		gpucheck_split_note(g.merge_m[e], ss.m[e], rep->rtol_merge,
		    rep->rtol_merge, &mg->m, &mg->excess, &rep->merge_failures);
		gpucheck_split_note(g.merge_l[e], ss.l[e], rep->rtol_merge,
		    rep->rtol_merge, &mg->l, &mg->excess, &rep->merge_failures);
	}
	/* The result. */
	for (x = 0; x < rows * dv; x++)
		gpucheck_split_note(g.out[x], o[x], rep->rtol_out * rep->vmax,
		    rep->rtol_out, &rep->max_o, &rep->out_excess,
		    &rep->out_failures);
	for (x = 0; x < rows; x++)
		gpucheck_split_note(g.out_lse[x], lse[x], rep->rtol_merge,
		    rep->rtol_merge, &rep->max_lse, &rep->out_excess,
		    &rep->out_failures);

	rep->worst_range = rep->worst_merge = -1;
	for (e = 0; e < (size_t)g.splits; e++) {
		if (rep->worst_range < 0 ||
		    !(rep->range[e].excess <= rep->part_excess)) {
			rep->part_excess = rep->range[e].excess;
			rep->worst_range = (int)e;
		}
		rep->part_m = fmax(rep->part_m, rep->range[e].m);
		rep->part_l = fmax(rep->part_l, rep->range[e].l);
		rep->part_lse = fmax(rep->part_lse, rep->range[e].lse);
		rep->part_acc = fmax(rep->part_acc, rep->range[e].acc);
		rep->part_o = fmax(rep->part_o, rep->range[e].o);
	}
	for (e = 0; e < (size_t)g.merges; e++) {
		if (rep->worst_merge < 0 ||
		    !(rep->merge[e].excess <= rep->merge_excess)) {
			rep->merge_excess = rep->merge[e].excess;
			rep->worst_merge = (int)e;
		}
		rep->merge_m = fmax(rep->merge_m, rep->merge[e].m);
		rep->merge_l = fmax(rep->merge_l, rep->merge[e].l);
	}
	rep->order_kept = rep->m_inexact == 0 && rep->u_inexact == 0;
	rep->pass = rep->part_failures == 0 && rep->merge_failures == 0 &&
	    rep->out_failures == 0 && rep->order_kept;
	rc = 0;
out:
	if (rc != 0)
		gpucheck_split_report_free(rep);
	gpu_split_result_free(&g);
	free(ss.m);
	free(ss.l);
	free(o);
	free(lse);
	return rc;
}
