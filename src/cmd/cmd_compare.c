/*
 * cmd_compare.c - `flashstep compare`: a kernel of the table and the
 * simulator on the same inputs, step by step (gpu/gpucheck.c), with the
 * largest differences per step and in O and lse; exit 1 when they do not
 * agree.  `--backward` does the same for the backward pass
 * (gpu/gpucheck_bwd.c): dK, dV and an ordered dQ after every backward
 * step, or the final gradients with an atomic dQ.  `--splits N` does it
 * for the split-KV run (gpu/gpucheck_split.c): every partial, every
 * merge, then O and lse.  `--heads H --batch B` hold each of B*H heads
 * (or, split, each batch entry of H heads) against its own simulator.
 * (The tests show each comparison failing: tests/check_gpu*.c.)
 */
#include "config.h"

#include "cmd.h"
#include "gpu/gpucheck.h"
#include "gpu/gpucheck_bwd.h"
#include "gpu/gpucheck_split.h"
#include "gpucmd.h"
#include "model/backward.h"
#include "model/combine.h"
#include "app/setup.h"
#include "model/sim.h"
#include "model/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct compare_args {
	struct gpucmd_args common;	/* first: the shared setters' ctx */
	long worst;			/* --worst N */
	int steps;			/* --steps */
};

static int
set_worst(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_int("worst", v, 0, LONG_MAX,
	    &((struct compare_args *)ctx)->worst, err, errlen);
}

static int
set_steps(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct compare_args *)ctx)->steps, v, err,
	    errlen);
}

static const struct options_entry compare_entries[] = {
	{ "kernel", "NAME", "the kernel to compare (default teaching; a kernel "
	    "with a trace, see gpu --list-kernels)", gpucmd_set_kernel },
	{ "batch", "B", "B batch entries (default 1), entry b drawn from "
	    "seed + b", gpucmd_set_batch },
	{ "steps", NULL, "list every step (default: the worst ones)", set_steps },
	{ "worst", "N", "steps listed per problem without --steps (default 5)",
	    set_worst },
	{ "dq", "MODE", "with --backward: how the kernel gets dQ, ordered "
	    "(default: compared after every step) or atomic (FlashAttention "
	    "2's: compared at the end)", gpucmd_set_dq },
	{ NULL, NULL, NULL, NULL },
};

static const char compare_usage[] =
    "usage: flashstep compare [options]\n"
    "\n"
    "Runs the simulator and a GPU kernel (default teaching) on the same\n"
    "inputs and prints, per step, the largest difference in m, alpha, l and\n"
    "the numerator (u, or o when normalized), and at the end in O and lse.\n"
    "Exits 1 when a value differs by more than the tolerance:\n"
    "  m, alpha, l, lse:  |gpu - sim| <= 1e-4 + 1e-4 |sim|\n"
    "  u, o, O:           |gpu - sim| <= 1e-4 (|sim| + max|V|), times l for u\n"
    "                     (2^-10 for fp16, 2^-7 for bf16 instead of 1e-4)\n"
    "The teaching kernel adds in the simulator's order without fused\n"
    "multiply-adds; the two differ only where CUDA's expf and logf differ\n"
    "from the C library's (a few units in the last place), carried through\n"
    "the sums.  It promises that order and is held to it: m the same bits\n"
    "at every step, alpha within 3 units of 2^-23 |alpha|, and where every\n"
    "p is exactly 0 or 1 (S given, one value a row) the numerator and O\n"
    "the same bits.\n"
    "\n"
    "--kernel fast compares the tensor-core kernel (--dtype fp16|bf16,\n"
    "--d 64|128, fa2, unnormalized): the simulator replays its tiling (its\n"
    "default for d, or the one --br and --bc name), and a debug build of the\n"
    "kernel traces m (kept unscaled in the kernel: times scale here), alpha,\n"
    "l and the numerator after every tile; O and lse are the timed kernel's.\n"
    "Its sums and exponentials are not the simulator's, so every tolerance\n"
    "above grows by 2 delta, delta = (9d/8 + 8) 2^-24 S1 + 2^-20 with\n"
    "S1 = scale max|q_r| max|k_c| (gpu/gpucheck.c says why).  --kernel\n"
    "wgmma (Hopper GPUs only) is compared the same way.\n"
    "\n"
    "--splits N compares the kernel's split-KV run (the teaching kernel's)\n"
    "with the simulator's: every row of every key range's partial (m, l,\n"
    "lse, the state u or o, and o), every merge of the combine (m and l;\n"
    "--merge-order, --partials, --merge-bug on both sides), then O and\n"
    "lse.  The partials are held to the rule above; each merge may add 8\n"
    "units of 2^-24 (times max(1, max|lse|) with --partials olse), so\n"
    "merges, O and lse get D times that more, D the most merges a value\n"
    "passes through (N for ltr and reverse, about log2 N for tree).  Each\n"
    "batch entry (--batch) runs whole, its H query heads on G K/V heads\n"
    "(--heads, --kv-heads, --pack-gqa).\n"
    "\n"
    "--backward compares the kernel's backward pass with the simulator's,\n"
    "both given the simulator's O, lse and the same dO (--grad-output, or\n"
    "drawn from the seed), and --grad-bug on both sides.  With --dq ordered\n"
    "(the default) dK and dV of the step's key block and dQ of its query\n"
    "rows after every backward step, then the final gradients; with --dq\n"
    "atomic the final gradients only (the key blocks add their dQ parts in\n"
    "whatever order they finish).  A gradient entry agrees when\n"
    "  |gpu - sim| <= rtol x (the sum of the magnitudes of its terms so far)\n"
    "rtol = 1e-4 (2^-10 for fp16, 2^-7 for bf16: P and dS are rounded),\n"
    "widened for --kernel fast by its tensor cores' delta; fast's backward\n"
    "steps on its own 64 x 128 tiles whatever the forward's tiling.\n"
    "Exits 3 when built without CUDA, 4 without a usable CUDA driver, 5\n"
    "without a CUDA device.\n"
    "\n";

/* A step and how far over its tolerance it went, for sorting. */
struct compare_ranked {
	double excess;
	long step;
};

static int
compare_ranked_cmp(const void *x, const void *y)
{
	const struct compare_ranked *a = x, *b = y;

	if (a->excess != b->excess)
		return a->excess < b->excess ? 1 : -1;
	return (a->step > b->step) - (a->step < b->step);
}

/*
 * Every step (or range, or merge: noun) with --steps, else the --worst
 * N by excess(ctx, k), each by print(ctx, k).  0, or -1 when out of
 * memory.
 */
static int
compare_print_steps(long steps, const char *noun,
    double (*excess)(const void *ctx, long k),
    void (*print)(const void *ctx, long k), const void *ctx,
    const struct compare_args *a)
{
	struct compare_ranked *rk;
	long k, show;

	if (a->steps) {
		for (k = 0; k < steps; k++)
			print(ctx, k);
		return 0;
	}
	show = a->worst < steps ? a->worst : steps;
	if (show == 0)
		return 0;
	rk = malloc((size_t)steps * sizeof *rk);
	if (rk == NULL)
		return -1;
	for (k = 0; k < steps; k++) {
		rk[k].excess = excess(ctx, k);
		if (isnan(rk[k].excess))
			rk[k].excess = INFINITY;
		rk[k].step = k;
	}
	qsort(rk, (size_t)steps, sizeof *rk, compare_ranked_cmp);
	printf("  the %ld worst %s%s:\n", show, noun, show == 1 ? "" : "s");
	for (k = 0; k < show; k++)
		print(ctx, rk[k].step);
	free(rk);
	return 0;
}

/* A forward step's line, and its excess. */
struct compare_fwd_ctx {
	const struct schedule *s;
	const struct gpucmd_packed *pk;	/* a packed batch's (s NULL), or NULL */
	const struct gpucheck_report *rep;
};

static double
compare_fwd_excess(const void *ctx, long k)
{
	return ((const struct compare_fwd_ctx *)ctx)->rep->step[k].excess;
}

static void
compare_fwd_step(const void *ctx, long k)
{
	const struct compare_fwd_ctx *c = ctx;
	const struct gpucheck_report *rep = c->rep;
	const struct gpucheck_step *st = &rep->step[k];
	struct schedule_tile t;
	long local;
	int seq;

	if (c->pk != NULL) {
		seq = gpucmd_packed_seq(c->pk, k, &local);
		schedule_tile(sim_schedule(c->pk->sims[seq]), local, &t);
		printf("  step %6ld  seq %d tile (%d, %d)  m %-9.3g alpha %-9.3g "
		    "l %-9.3g ", k, seq, t.i, t.j, st->m, st->alpha, st->l);
	} else {
		schedule_tile(c->s, k, &t);
		printf("  step %6ld  tile (%d, %d)  m %-9.3g alpha %-9.3g "
		    "l %-9.3g ", k, t.i, t.j, st->m, st->alpha, st->l);
	}
	if (rep->acc_compared)
		printf("acc %-9.3g ", st->acc);
	printf("%8.3g of tol%s\n", st->excess, st->excess > 1 ? "  DIFFERS" : "");
}

/* The order promise's line, for a kernel that makes it. */
static void
compare_print_order(const struct gpucheck_report *rep)
{
	if (!rep->order_promised)
		return;
	if (rep->order_kept)
		printf("  order kept: m the same bits at every step, alpha "
		    "within %.2g units of 2^-23 |alpha| (at most %g)%s\n",
		    rep->alpha_units, GPUCHECK_ALPHA_UNITS, rep->u_compared > 0 ?
		    "; every p 0 or 1: the numerator and O the same bits" : "");
	else
		printf("  ORDER BROKEN: %ld m values not the simulator's bits, "
		    "alpha off by %.3g units of 2^-23 |alpha| (at most %g), %ld "
		    "of %ld numerator and O values held to the bits differ: the "
		    "kernel does not do the simulator's operations in its "
		    "order\n", rep->m_inexact, rep->alpha_units,
		    GPUCHECK_ALPHA_UNITS, rep->u_inexact, rep->u_compared);
}

/* One problem's lines: the summary, then the steps asked for. */
static int
compare_print_report(const struct schedule *s, const struct gpucmd_packed *pk,
    const struct gpucheck_report *rep, const char *label,
    const struct compare_args *a)
{
	struct compare_fwd_ctx ctx;

	if (label != NULL)
		printf("%s: ", label);
	printf("%ld steps; largest |gpu - sim|: m %.3g, alpha %.3g, l %.3g, ",
	    rep->steps, rep->max_m, rep->max_alpha, rep->max_l);
	if (rep->acc_compared)
		printf("acc %.3g; ", rep->max_acc);
	else
		printf("acc not compared (trace too large); ");
	printf("O %.3g, lse %.3g\n", rep->max_o, rep->max_lse);
	if (rep->failures == 0)
		printf("  %s: worst step %ld at %.3g of the tolerance\n",
		    rep->pass ? "agree" : "DIFFER (order)", rep->worst_step,
		    rep->worst_excess);
	else
		printf("  DIFFER: %ld values beyond the tolerance, first at step %ld; "
		    "worst step %ld at %.3g of the tolerance\n", rep->failures,
		    rep->first_failure, rep->worst_step, rep->worst_excess);
	compare_print_order(rep);
	ctx.s = s;
	ctx.pk = pk;
	ctx.rep = rep;
	return compare_print_steps(rep->steps, "step", compare_fwd_excess,
	    compare_fwd_step, &ctx, a);
}

/* The verdict's line: CMD_OK when none of n problems failed. */
static int
compare_verdict(int failed, int n, const char *where)
{
	if (failed == 0) {
		if (n > 1)
			printf("result: all %d problems agree with their simulators "
			    "within the tolerance\n", n);
		else
			printf("result: the kernel agrees with the simulator within "
			    "the tolerance %s\n", where);
		return CMD_OK;
	}
	printf("result: %d of %d problem%s DIFFER from the simulator\n",
	    failed, n, n == 1 ? "" : "s");
	return CMD_FAILED;
}

/* The forward: CMD_OK, CMD_FAILED, or -1 with err. */
static int
compare_forward(const struct options *o, const struct compare_args *a,
    const struct gpucmd_set *set, const struct sim *sim,
    const struct gpucmd_packed *pk, char *err, size_t errlen)
{
	const struct problem *ps = set->ps;
	const int n = set->n;
	struct gpucheck_opts copts;
	struct gpucheck_report *reps;
	char label[96];
	int b, failed = 0, rc = -1;

	memset(&copts, 0, sizeof copts);
	copts.per_step = 1;
	copts.kernel = a->common.kernel;
	reps = util_calloc((size_t)n, sizeof *reps, "reports", err, errlen);
	if (reps == NULL)
		return -1;
	if (gpucheck_run_many(ps, n, &o->tiling, &o->rule, &copts, reps, err,
	    errlen) != 0) {
		free(reps);
		return -1;
	}
	if (pk->nseq > 0)
		gpucmd_packed_describe(stdout, pk);
	else
		setup_describe(stdout, sim);
	gpucmd_print_set(o, set);
	printf("device:   %s; %s kernel %.3f ms\n", reps[0].device,
	    a->common.kernel->name, reps[0].kernel_ms);
	printf("tolerance: |gpu - sim| <= atol + rtol |sim|, rtol = atol = %.3g "
	    "for m, alpha, l, lse; rtol = %.3g for acc and O, with atol = rtol "
	    "max|V| (times l for u)\n", reps[0].rtol, reps[0].rtol_acc);
	if (reps[0].delta > 0)
		printf("           (problem 0: 2 delta = %.3g for the tensor "
		    "cores' sums and exp2, see --help)\n", 2.0 * reps[0].delta);
	for (b = 0; b < n; b++) {
		gpucmd_label(o, set, b, label, sizeof label);
		if (compare_print_report(pk->nseq > 0 ? NULL :
		    sim_schedule(sim), pk->nseq > 0 ? pk : NULL, &reps[b], n > 1 ?
		    label : NULL, a) != 0) {
			util_error(err, errlen, "out of memory");
			goto out;
		}
		failed += !reps[b].pass;
	}
	rc = compare_verdict(failed, n, "at every step and in O and lse");
out:
	for (b = 0; b < n; b++)
		gpucheck_report_free(&reps[b]);
	free(reps);
	return rc;
}

/* A backward step's line, and its excess. */
struct compare_bwd_ctx {
	const struct schedule *s;	/* the backward's: key blocks outside */
	const struct gpucheck_bwd_report *rep;
};

static double
compare_bwd_excess(const void *ctx, long k)
{
	return ((const struct compare_bwd_ctx *)ctx)->rep->step[k].excess;
}

static void
compare_bwd_step(const void *ctx, long k)
{
	const struct compare_bwd_ctx *c = ctx;
	const struct gpucheck_bwd_step *st = &c->rep->step[k];
	struct schedule_tile t;

	schedule_tile(c->s, k, &t);
	printf("  step %6ld  tile (%d, %d)  dK %-9.3g dV %-9.3g dQ %-9.3g "
	    "%8.3g of tol%s\n", k, t.i, t.j, st->dk, st->dv, st->dq, st->excess,
	    st->excess > 1 ? "  DIFFERS" : "");
}

/* One problem's lines of the backward. */
static int
compare_print_bwd(const struct schedule *s,
    const struct gpucheck_bwd_report *rep, const char *label, int scores,
    const struct compare_args *a)
{
	struct compare_bwd_ctx ctx;

	if (label != NULL)
		printf("%s: ", label);
	if (rep->steps_compared)
		printf("%ld steps; largest |gpu - sim| after a step: dK %.3g, "
		    "dV %.3g, dQ %.3g; at the end: ", rep->steps, rep->step_dk,
		    rep->step_dv, rep->step_dq);
	else
		printf("%ld steps, compared at the end only (%s): ", rep->steps,
		    a->common.dq == GPU_DQ_ATOMIC ? "dQ atomic" :
		    a->common.kernel->backward->caps & GPU_CAP_TRACE ?
		    "trace too large" : "its backward keeps no trace");
	printf("dQ %.3g, dK %.3g, dV %.3g", rep->max_dq, rep->max_dk,
	    rep->max_dv);
	if (scores)
		printf(", dS %.3g", rep->max_ds);
	printf("\n");
	if (rep->failures == 0 && rep->worst_step >= 0)
		printf("  agree: worst step %ld at %.3g of the tolerance\n",
		    rep->worst_step, rep->worst_excess);
	else if (rep->failures == 0)
		printf("  agree: worst value in the final gradients at %.3g of "
		    "the tolerance\n", rep->worst_excess);
	else if (rep->first_failure >= 0)
		printf("  DIFFER: %ld values beyond the tolerance, first at step "
		    "%ld; worst at %.3g of the tolerance\n", rep->failures,
		    rep->first_failure, rep->worst_excess);
	else
		printf("  DIFFER: %ld values of the final gradients beyond the "
		    "tolerance; worst at %.3g of it\n", rep->failures,
		    rep->worst_excess);
	if (rep->bits_inexact > 0)
		printf("  ORDER BROKEN: every p is 0 or 1, yet %ld of %ld gradient "
		    "values are not the simulator's bits\n", rep->bits_inexact,
		    rep->bits_compared);
	if (rep->step == NULL)
		return 0;
	ctx.s = s;
	ctx.rep = rep;
	return compare_print_steps(rep->steps, "step", compare_bwd_excess,
	    compare_bwd_step, &ctx, a);
}

/* The backward: CMD_OK, CMD_FAILED, or -1 with err. */
static int
compare_backward(const struct options *o, const struct compare_args *a,
    const struct gpucmd_set *set, const struct sim *sim, char *err,
    size_t errlen)
{
	const struct problem *ps = set->ps;
	const int n = set->n;
	char label[96];
	struct tiling bt;
	struct gpucheck_bwd_opts bo;
	struct gpucheck_bwd_report *reps;
	struct schedule bs;
	float *dout = NULL;
	int b, failed = 0, rc = -1;

	memset(&bs, 0, sizeof bs);
	memset(&bo, 0, sizeof bo);
	bo.kernel = a->common.kernel;
	bo.dq = a->common.dq;
	bo.bug = o->grad_bug;
	bo.per_step = 1;
	gpu_backward_tiling(a->common.kernel, &o->tiling, &bt);
	reps = util_calloc((size_t)n, sizeof *reps, "reports", err, errlen);
	if (reps == NULL || schedule_init(&bs, &ps[0], &bt, err, errlen) != 0 ||
	    gpucmd_grad_outputs(o, ps, n, &dout, err, errlen) != 0)
		goto fail;
	if (gpucheck_bwd_run_many(ps, n, &o->tiling, &o->rule, dout, &bo, reps,
	    err, errlen) != 0)
		goto fail;
	setup_describe(stdout, sim);
	gpucmd_print_set(o, set);
	printf("backward: key blocks outside, query blocks inside: Tc=%d x "
	    "Tr=%d tiles, %ld steps; bug=%s; dQ %s; dO %s\n", bs.tc, bs.tr,
	    bs.nsteps, backward_bug_name(o->grad_bug),
	    gpu_dq_mode_name(a->common.dq), o->spec.dout.path != NULL ?
	    o->spec.dout.path : "N(0,1) from the seed");
	printf("device:   %s; %s kernel's backward %.3f ms\n", reps[0].device,
	    a->common.kernel->name, reps[0].kernel_ms);
	printf("tolerance: |gpu - sim| <= %.3g x the sum of the magnitudes of "
	    "the terms added so far, %s\n", reps[0].rtol,
	    reps[0].steps_compared ? "after every step and at the end" :
	    a->common.dq == GPU_DQ_ORDERED ? "at the end" :
	    "at the end (an atomic dQ adds in no fixed order)");
	for (b = 0; b < n; b++) {
		gpucmd_label(o, set, b, label, sizeof label);
		if (compare_print_bwd(&bs, &reps[b], n > 1 ? label : NULL,
		    ps[0].scores_mode, a) != 0) {
			util_error(err, errlen, "out of memory");
			goto fail;
		}
		failed += !reps[b].pass;
	}
	rc = compare_verdict(failed, n, reps[0].steps_compared ?
	    "after every backward step and in the gradients" :
	    "in the gradients");
fail:
	if (reps != NULL)
		for (b = 0; b < n; b++)
			gpucheck_bwd_report_free(&reps[b]);
	free(reps);
	free(dout);
	schedule_free(&bs);
	return rc;
}

/* A range's or a merge's line, and its excess. */
struct compare_split_ctx {
	const struct gpucheck_split_report *rep;
	const struct combine_merge *plan;
};

static double
compare_range_excess(const void *ctx, long k)
{
	return ((const struct compare_split_ctx *)ctx)->rep->range[k].excess;
}

static void
compare_range_line(const void *ctx, long k)
{
	const struct gpucheck_split_range *r =
	    &((const struct compare_split_ctx *)ctx)->rep->range[k];

	printf("  range %4ld  m %-9.3g l %-9.3g lse %-9.3g acc %-9.3g o %-9.3g "
	    "%8.3g of tol%s\n", k, r->m, r->l, r->lse, r->acc, r->o, r->excess,
	    r->excess > 1 ? "  DIFFERS" : "");
}

static double
compare_merge_excess(const void *ctx, long k)
{
	return ((const struct compare_split_ctx *)ctx)->rep->merge[k].excess;
}

/* "empty", "P3", "slot 1". */
static void
compare_operand(const struct combine_operand *x, char *buf, size_t len)
{
	if (x->source == COMBINE_EMPTY)
		snprintf(buf, len, "empty");
	else if (x->source == COMBINE_PARTIAL)
		snprintf(buf, len, "P%d", x->index);
	else
		snprintf(buf, len, "slot %d", x->index);
}

static void
compare_merge_line(const void *ctx, long k)
{
	const struct compare_split_ctx *c = ctx;
	const struct gpucheck_split_merge *m = &c->rep->merge[k];
	const struct combine_merge *op = &c->plan[k];
	char x[24], y[24], what[64];

	compare_operand(&op->a, x, sizeof x);
	compare_operand(&op->b, y, sizeof y);
	snprintf(what, sizeof what, "slot %d = %s + %s", op->dst, x, y);
	printf("  merge %4ld  %-24s m %-9.3g l %-9.3g %8.3g of tol%s\n", k, what,
	    m->m, m->l, m->excess, m->excess > 1 ? "  DIFFERS" : "");
}

/* "agree: worst ..." or "DIFFER: ...", of one kind. */
static void
compare_split_verdict(long failures, const char *noun, int worst,
    double excess)
{
	if (failures == 0)
		printf("  agree: worst %s %d at %.3g of the tolerance\n", noun,
		    worst, excess);
	else
		printf("  DIFFER: %ld values beyond the tolerance; worst %s %d at "
		    "%.3g of it\n", failures, noun, worst, excess);
}

/* One batch entry's lines of a split comparison. */
static int
compare_print_split(const struct gpucheck_split_report *rep,
    const struct combine *comb, const char *label,
    const struct compare_args *a)
{
	struct compare_split_ctx ctx;

	ctx.rep = rep;
	ctx.plan = combine_plan(comb);
	if (label != NULL)
		printf("%s:\n", label);
	printf("partials, every row of every range: largest |gpu - sim|: m %.3g, "
	    "l %.3g, lse %.3g, acc %.3g, o %.3g\n", rep->part_m, rep->part_l,
	    rep->part_lse, rep->part_acc, rep->part_o);
	compare_split_verdict(rep->part_failures, "range", rep->worst_range,
	    rep->part_excess);
	if (compare_print_steps(rep->splits, "range", compare_range_excess,
	    compare_range_line, &ctx, a) != 0)
		return -1;
	printf("merges, every row: largest |gpu - sim|: m %.3g, l %.3g\n",
	    rep->merge_m, rep->merge_l);
	compare_split_verdict(rep->merge_failures, "merge", rep->worst_merge,
	    rep->merge_excess);
	if (compare_print_steps(rep->merges, "merge", compare_merge_excess,
	    compare_merge_line, &ctx, a) != 0)
		return -1;
	printf("output: largest |gpu - sim|: O %.3g, lse %.3g: %s at %.3g of the "
	    "tolerance\n", rep->max_o, rep->max_lse, rep->out_failures == 0 ?
	    "agree" : "DIFFER", rep->out_excess);
	if (rep->order_promised && rep->order_kept)
		printf("  order kept: m the same bits in every partial%s%s\n",
		    combine_form(comb) == MERGE_MLU ? " and every merge" : "",
		    rep->u_compared > 0 ? "; every p 0 or 1: the partials' u and "
		    "o the same bits" : "");
	else if (rep->order_promised)
		printf("  ORDER BROKEN: %ld m values not the simulator's bits, %ld "
		    "of %ld partial values held to the bits differ: the kernel "
		    "does not do the simulator's operations in its order\n",
		    rep->m_inexact, rep->u_inexact, rep->u_compared);
	return 0;
}

/* The split-KV run: CMD_OK, CMD_FAILED, or -1 with err. */
static int
compare_split(const struct options *o, const struct compare_args *a,
    const struct gpucmd_set *set, struct sim *sim, char *err, size_t errlen)
{
	struct gpucheck_split_report rep;
	struct combine *comb = NULL;
	struct sim *one = NULL;
	char label[96];
	int b, failed = 0;

	for (b = 0; b < set->batch; b++) {
		one = b == 0 ? sim : sim_new_split(&set->entries[b], &o->tiling,
		    &o->split, &o->rule, err, errlen);
		if (one == NULL ||
		    (comb = combine_new(one, &o->combine, err, errlen)) == NULL ||
		    gpucheck_split_run(a->common.kernel, one, comb, NULL, &rep, err,
		    errlen) != 0)
			goto fail;
		if (b == 0) {
			setup_describe(stdout, sim);
			gpucmd_print_set(o, set);
			printf("combine:  merged %s, %d merges a row block, depth %d%s"
			    "%s\n", combine_order_name(o->combine.order), rep.merges,
			    rep.depth, o->combine.bug != MERGE_BUG_NONE ?
			    ", merge bug " : "", o->combine.bug != MERGE_BUG_NONE ?
			    combine_bug_name(o->combine.bug) : "");
			printf("device:   %s; %s kernel's split-KV run: ranges %.3f ms "
			    "+ combine %.3f ms\n", rep.device, a->common.kernel->name,
			    rep.ms_ranges, rep.ms_combine);
			printf("tolerance: |gpu - sim| <= atol + rtol |sim|; partials: "
			    "rtol = atol = %.3g for m, l, lse, rtol = %.3g for acc and o "
			    "with atol = rtol max|V| (times l for u);\n", rep.rtol,
			    rep.rtol_acc);
			printf("           merges and result: + %d x %g x 2^-24%s: "
			    "rtol = atol = %.3g for m, l, lse, rtol = %.3g for O\n",
			    rep.depth, GPUCHECK_MERGE_UNITS,
			    combine_form(comb) == MERGE_OLSE ? " x max(1, max|lse|)" :
			    "", rep.rtol_merge, rep.rtol_out);
		}
		gpucmd_label(o, set, b, label, sizeof label);
		if (compare_print_split(&rep, comb, set->batch > 1 ? label : NULL,
		    a) != 0) {
			util_error(err, errlen, "out of memory");
			gpucheck_split_report_free(&rep);
			goto fail;
		}
		failed += !rep.pass;
		gpucheck_split_report_free(&rep);
		combine_free(comb);
		comb = NULL;
		if (one != sim)
			sim_free(one);
	}
	return compare_verdict(failed, set->batch, "in every partial, every "
	    "merge and in O and lse");
fail:
	combine_free(comb);
	if (one != sim)
		sim_free(one);
	return -1;
}

int
cmd_compare(int argc, char **argv)
{
	struct compare_args a;
	struct options o;
	struct gpucmd_set set;
	struct gpucmd_packed pk;
	struct sim *sim = NULL;
	char err[512], dev[64];
	int rc, split;

	memset(&a, 0, sizeof a);
	memset(&set, 0, sizeof set);
	memset(&pk, 0, sizeof pk);
	gpucmd_args_init(&a.common, 3);
	a.common.dq = GPU_DQ_ORDERED;
	a.worst = 5;
	rc = cmd_parse("compare", compare_usage, argc, argv,
	    OPT_PROBLEM | OPT_BACKWARD | OPT_SPLIT, compare_entries, &a, &o);
	if (rc >= 0)
		goto done;
	split = o.split.splits > 1;
	/* The inputs first, the device after them: a bad command line is a
	 * usage error (2) on any machine. */
	if (gpucmd_setup(&o, &a.common, &set, err, sizeof err) != 0 ||
	    gpucmd_backward_args(&o, &a.common, set.ps, set.n, 0, err,
	    sizeof err) != 0)
		goto fail;
	/* A packed batch runs each sequence on its own simulator (the
	 * forward alone: the backward refused it above). */
	if (gpucmd_sims_new(&o, &set.entries[0], &pk, &sim, err,
	    sizeof err) != 0)
		goto fail;
	rc = gpucmd_device("compare", dev, sizeof dev);
	if (rc != CMD_OK)
		goto done;
	rc = split ? compare_split(&o, &a, &set, sim, err, sizeof err) :
	    o.backward ? compare_backward(&o, &a, &set, sim, err, sizeof err) :
	    compare_forward(&o, &a, &set, sim, &pk, err, sizeof err);
	if (rc >= 0)
		goto done;
fail:
	fprintf(stderr, "flashstep compare: %s\n", err);
	rc = CMD_USAGE;
done:
	sim_free(sim);
	gpucmd_packed_free(&pk);
	gpucmd_set_free(&set);
	options_free(&o);
	return rc;
}
