/*
 * cmd_compare.c - `flashstep compare`: a kernel of the table and the
 * simulator on the same inputs, step by step (gpu/gpucheck.c), with the
 * largest differences per step and in O and lse; exit 1 when they do not
 * agree.  `--heads H --batch B` hold each of B*H problems against its
 * own simulator; --test-fault shows the comparison failing.
 */
#include "config.h"

#include "cmd.h"
#include "gpu/gpucheck.h"
#include "gpucmd.h"
#include "model/setup.h"
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
	int fault;			/* --test-fault no-rescale */
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

static int
set_fault(void *ctx, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "no-rescale") != 0)
		return util_error(err, errlen, "--test-fault must be no-rescale, "
		    "not '%s'", v);
	((struct compare_args *)ctx)->fault = 1;
	return 0;
}

static const struct options_entry compare_entries[] = {
	{ "kernel", "NAME", "the kernel to compare (default teaching; a kernel "
	    "with a trace, see gpu --list-kernels)", gpucmd_set_kernel },
	{ "heads", "H", "H heads per batch entry (default 1)",
	    gpucmd_set_heads },
	{ "batch", "B", "B batch entries (default 1)", gpucmd_set_batch },
	{ "steps", NULL, "list every step (default: the worst ones)", set_steps },
	{ "worst", "N", "steps listed per problem without --steps (default 5)",
	    set_worst },
	{ "test-fault", "no-rescale", "run the kernel with its rescale left "
	    "out, to see the comparison fail", set_fault },
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
    "at every step, alpha within 3 units of 2^-23 |alpha|.\n"
    "\n"
    "--kernel fast compares the tensor-core kernel (--dtype fp16|bf16,\n"
    "--d 64|128, fa2, unnormalized): the simulator replays its tiling (its\n"
    "default for d, or the one --br and --bc name), and a debug build of the\n"
    "kernel traces m (kept unscaled in the kernel: times scale here), alpha,\n"
    "l and the numerator after every tile; O and lse are the timed kernel's.\n"
    "Its sums and exponentials are not the simulator's, so every tolerance\n"
    "above grows by 2 delta, delta = (9d/8 + 8) 2^-24 S1 + 2^-20 with\n"
    "S1 = scale max|q_r| max|k_c| (gpu/gpucheck.c says why).\n"
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

static void
compare_print_step(const struct schedule *s,
    const struct gpucheck_report *rep, long k)
{
	struct schedule_tile t;
	const struct gpucheck_step *st = &rep->step[k];

	schedule_tile(s, k, &t);
	printf("  step %6ld  tile (%d, %d)  m %-9.3g alpha %-9.3g l %-9.3g ", k,
	    t.i, t.j, st->m, st->alpha, st->l);
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
		    "within %.2g units of 2^-23 |alpha| (at most %g)\n",
		    rep->alpha_units, GPUCHECK_ALPHA_UNITS);
	else
		printf("  ORDER BROKEN: %ld m values not the simulator's bits, "
		    "alpha off by %.3g units of 2^-23 |alpha| (at most %g): the "
		    "kernel does not do the simulator's operations in its "
		    "order\n", rep->m_inexact, rep->alpha_units,
		    GPUCHECK_ALPHA_UNITS);
}

/* One problem's lines: the summary, then the steps asked for. */
static int
compare_print_report(const struct schedule *s,
    const struct gpucheck_report *rep, int b, int n, uint64_t seed,
    const struct compare_args *a)
{
	struct compare_ranked *rk;
	long k, show;

	if (n > 1)
		printf("problem %d (seed %llu): ", b, (unsigned long long)seed);
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
	if (a->steps) {
		for (k = 0; k < rep->steps; k++)
			compare_print_step(s, rep, k);
		return 0;
	}
	show = a->worst < rep->steps ? a->worst : rep->steps;
	if (show == 0)
		return 0;
	rk = malloc((size_t)rep->steps * sizeof *rk);
	if (rk == NULL)
		return -1;
	for (k = 0; k < rep->steps; k++) {
		rk[k].excess = isnan(rep->step[k].excess) ? INFINITY :
		    rep->step[k].excess;
		rk[k].step = k;
	}
	qsort(rk, (size_t)rep->steps, sizeof *rk, compare_ranked_cmp);
	printf("  the %ld worst step%s:\n", show, show == 1 ? "" : "s");
	for (k = 0; k < show; k++)
		compare_print_step(s, rep, rk[k].step);
	free(rk);
	return 0;
}

int
cmd_compare(int argc, char **argv)
{
	struct compare_args a;
	struct gpucheck_opts copts;
	struct gpucheck_report *reps = NULL;
	struct options o;
	struct problem *ps = NULL;
	struct sim *sim = NULL;
	char err[512], dev[64];
	int rc, n = 0, b, failed = 0;

	memset(&a, 0, sizeof a);
	gpucmd_args_init(&a.common, 3);
	a.worst = 5;
	rc = gpucmd_parse("compare", compare_usage, argc, argv, OPT_PROBLEM,
	    compare_entries, &a, &o);
	if (rc >= 0)
		goto done;
	rc = gpucmd_device("compare", dev, sizeof dev);
	if (rc != CMD_OK)
		goto done;
	memset(&copts, 0, sizeof copts);
	copts.per_step = 1;
	copts.kernel = a.common.kernel;
	if (a.fault)
		copts.gpu_flags |= GPU_TEST_NO_RESCALE;
	if (gpucmd_setup(&o, &a.common, &ps, &n, err, sizeof err) != 0)
		goto fail;
	sim = sim_new(&ps[0], &o.tiling, &o.rule, err, sizeof err);
	if (sim == NULL)
		goto fail;
	reps = util_calloc((size_t)n, sizeof *reps, "reports", err, sizeof err);
	if (reps == NULL)
		goto fail;
	if (gpucheck_run_many(ps, n, &o.tiling, &o.rule, &copts, reps, err,
	    sizeof err) != 0)
		goto fail;

	setup_describe(stdout, sim);
	gpucmd_print_heads(&o, &a.common, n);
	printf("device:   %s; %s kernel %.3f ms%s\n", reps[0].device,
	    a.common.kernel->name, reps[0].kernel_ms,
	    a.fault ? "; TEST FAULT: rescale left out" : "");
	printf("tolerance: |gpu - sim| <= atol + rtol |sim|, rtol = atol = %.3g "
	    "for m, alpha, l, lse; rtol = %.3g for acc and O, with atol = rtol "
	    "max|V| (times l for u)\n", reps[0].rtol, reps[0].rtol_acc);
	if (reps[0].delta > 0)
		printf("           (problem 0: 2 delta = %.3g for the tensor "
		    "cores' sums and exp2, see --help)\n", 2.0 * reps[0].delta);
	for (b = 0; b < n; b++) {
		if (compare_print_report(sim_schedule(sim), &reps[b], b, n,
		    o.spec.seed + (uint64_t)b, &a) != 0) {
			snprintf(err, sizeof err, "out of memory");
			goto fail;
		}
		failed += !reps[b].pass;
	}
	if (failed == 0) {
		if (n > 1)
			printf("result: all %d problems agree with their simulators "
			    "within the tolerance\n", n);
		else
			printf("result: the kernel agrees with the simulator within "
			    "the tolerance at every step and in O and lse\n");
		rc = CMD_OK;
	} else {
		printf("result: %d of %d problem%s DIFFER from the simulator\n",
		    failed, n, n == 1 ? "" : "s");
		rc = CMD_FAILED;
	}
	goto done;
fail:
	fprintf(stderr, "flashstep compare: %s\n", err);
	rc = CMD_USAGE;
done:
	if (reps != NULL)
		for (b = 0; b < n; b++)
			gpucheck_report_free(&reps[b]);
	free(reps);
	sim_free(sim);
	gpucmd_free_problems(ps, n);
	options_free(&o);
	return rc;
}
