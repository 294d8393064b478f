/*
 * cmd_gpu.c - the GPU commands:
 *   flashstep gpu            the problem through the teaching kernel: O,
 *                            its error against the double reference, time
 *   flashstep compare        kernel and simulator step by step (gpucheck)
 *   flashstep bench --gpu    teaching kernel against the naive baseline
 *
 * `--heads H --batch B` make B*H problems of one shape, problem b*H + h
 * drawing its inputs from seed + b*H + h, run in one launch; compare
 * holds each against its own simulator.  Without a GPU (or without CUDA
 * in the build) every command says so and exits 2.
 */
#include "config.h"

#include "cmd.h"
#include "compare.h"
#include "gpu.h"
#include "gpucheck.h"
#include "reference.h"
#include "setup.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options of the GPU commands beyond the shared ones. */
struct gpu_args {
	long heads, batch, repeat, worst;
	int steps, cpu, gpu;
	const char *fault, *sizes;
	long br, bc;
};

#define GPU_LONG_SETTER(fn, field, name, min, max)			\
static int								\
fn(void *ctx, const char *v, char *err, size_t errlen)			\
{									\
	return options_int(name, v, min, max,				\
	    &((struct gpu_args *)ctx)->field, err, errlen);		\
}
GPU_LONG_SETTER(set_heads, heads, "heads", 1, 65535)
GPU_LONG_SETTER(set_batch, batch, "batch", 1, 65535)
GPU_LONG_SETTER(set_repeat, repeat, "repeat", 1, 100)
GPU_LONG_SETTER(set_worst, worst, "worst", 0, LONG_MAX)
GPU_LONG_SETTER(set_br, br, "br", 1, 4096)
GPU_LONG_SETTER(set_bc, bc, "bc", 1, 4096)

static int
set_steps(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct gpu_args *)ctx)->steps, v, err, errlen);
}

static int
set_cpu(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct gpu_args *)ctx)->cpu, v, err, errlen);
}

static int
set_gpu(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct gpu_args *)ctx)->gpu, v, err, errlen);
}

static int
set_fault(void *ctx, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "no-rescale") != 0)
		return util_error(err, errlen, "--test-fault must be no-rescale, "
		    "not '%s'", v);
	((struct gpu_args *)ctx)->fault = v;
	return 0;
}

static int
set_sizes(void *ctx, const char *v, char *err, size_t errlen)
{
	const char *c;

	for (c = v; *c != '\0'; c++)
		if ((*c < '0' || *c > '9') && *c != ',')
			return util_error(err, errlen, "--sizes must be a list like "
			    "1024,4096, not '%s'", v);
	((struct gpu_args *)ctx)->sizes = v;
	return 0;
}

static const struct options_entry gpu_entries[] = {
	{ "heads", "H", "H heads per batch entry (default 1)", set_heads },
	{ "batch", "B", "B batch entries (default 1): B*H problems, "
	    "seeds seed .. seed+B*H-1", set_batch },
	{ "repeat", "N", "timed runs after a warm-up (default 3)", set_repeat },
	{ NULL, NULL, NULL, NULL },
};

static const struct options_entry compare_entries[] = {
	{ "heads", "H", "H heads per batch entry (default 1)", set_heads },
	{ "batch", "B", "B batch entries (default 1)", set_batch },
	{ "steps", NULL, "list every step (default: the worst ones)", set_steps },
	{ "worst", "N", "steps listed per problem without --steps (default 5)",
	    set_worst },
	{ "test-fault", "no-rescale", "run the kernel with its rescale left "
	    "out, to see the comparison fail", set_fault },
	{ NULL, NULL, NULL, NULL },
};

static const struct options_entry bench_entries[] = {
	{ "gpu", NULL, "the GPU benchmark", set_gpu },
	{ "cpu", NULL, "(the CPU benchmark: flashstep bench --cpu)", set_cpu },
	{ "sizes", "LIST", "Tq = Tk values (default 1024,4096,16384)", set_sizes },
	{ "repeat", "N", "timed runs of each kernel after a warm-up (default 10)",
	    set_repeat },
	{ "br", "N", "query rows per tile of the teaching kernel (default 64)",
	    set_br },
	{ "bc", "N", "keys per tile of the teaching kernel (default 64)", set_bc },
	{ NULL, NULL, NULL, NULL },
};

static const char gpu_usage[] =
    "usage: flashstep gpu [options]\n"
    "\n"
    "Runs the problem through the teaching kernel on the GPU (float32, the\n"
    "simulator's tiles, loop order and update rule) and prints the output,\n"
    "its error against naive attention in double precision, and the kernel\n"
    "time.  Exits 2 when there is no GPU.\n"
    "\n";

static const char compare_usage[] =
    "usage: flashstep compare [options]\n"
    "\n"
    "Runs the simulator and the teaching kernel on the same inputs and\n"
    "prints, per step, the largest difference in m, alpha, l and the\n"
    "numerator (u, or o when normalized), and at the end in O and lse.\n"
    "Exits 1 when a value differs by more than the tolerance:\n"
    "  m, alpha, l, lse:  |gpu - sim| <= 1e-4 + 1e-4 |sim|\n"
    "  u, o, O:           |gpu - sim| <= 1e-4 (|sim| + max|V|), times l for u\n"
    "                     (2^-10 for fp16, 2^-7 for bf16 instead of 1e-4)\n"
    "Both sides add in the same order without fused multiply-adds; they\n"
    "differ only where CUDA's expf and logf differ from the C library's\n"
    "(a few units in the last place), carried through the sums.\n"
    "\n";

static const char bench_gpu_usage[] =
    "usage: flashstep bench --gpu [options]\n"
    "\n"
    "At Tq = Tk = each of SIZES (d = dv = 64, fp32, normal inputs, no mask)\n"
    "times the teaching kernel in both loop orders against naive attention\n"
    "that writes S and P (Tq x Tk) to device memory, and prints the median\n"
    "time, the arithmetic rate (4 Tq Tk d FLOPs) and the device memory each\n"
    "allocated.\n"
    "\n";

/* Parses a command's options; 0 to go on, or the exit status. */
static int
gpu_parse(const char *name, const char *usage, int argc, char **argv,
    unsigned groups, const struct options_entry *entries, struct gpu_args *a,
    struct options *o)
{
	char err[512];

	options_init(o);
	if (options_parse(argc, argv, 1, groups, entries, a, o, err,
	    sizeof err) != 0) {
		fprintf(stderr, "flashstep %s: %s\n", name, err);
		return CMD_USAGE;
	}
	if (o->help) {
		fputs(usage, stdout);
		options_usage(stdout, groups, entries);
		return CMD_OK;
	}
	if (o->nargs > 0) {
		fprintf(stderr, "flashstep %s: unexpected argument '%s'\n", name,
		    o->args[0]);
		return CMD_USAGE;
	}
	return -1;
}

/* The device, or the reason there is none (exit 2). */
static int
gpu_device(const char *name, char *dev, size_t devlen)
{
	char err[512];

	if (gpu_available(dev, devlen, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep %s: %s\n", name, err);
		return -1;
	}
	return 0;
}

static void
gpu_free_problems(struct problem *ps, int n)
{
	int b;

	if (ps == NULL)
		return;
	for (b = 0; b < n; b++)
		problem_free(&ps[b]);
	free(ps);
}

/* B*H problems: problem b*H + h draws its inputs from seed + b*H + h. */
static int
gpu_problems(const struct options *o, const struct gpu_args *a,
    struct problem **out, int *nout, char *err, size_t errlen)
{
	const struct problem_spec *spec = &o->spec;
	struct problem_spec one;
	struct problem *ps;
	long n = a->heads * a->batch;
	int b;

	*out = NULL;
	*nout = 0;
	if (n > 65535)
		return util_error(err, errlen, "--heads %ld times --batch %ld is "
		    "%ld problems; one launch takes 65535 at most", a->heads,
		    a->batch, n);
	if (n > 1 && (spec->q.path != NULL || spec->s.path != NULL ||
	    spec->q.data != NULL || spec->s.data != NULL))
		return util_error(err, errlen, "--heads and --batch draw each "
		    "problem's inputs from its own seed; they do not go with "
		    "input files");
	ps = util_calloc((size_t)n, sizeof *ps, "problems", err, errlen);
	if (ps == NULL)
		return -1;
	for (b = 0; b < n; b++) {
		one = *spec;
		one.seed = spec->seed + (uint64_t)b;
		if (problem_build(&one, &ps[b], err, errlen) != 0) {
			gpu_free_problems(ps, b);
			return -1;
		}
	}
	*out = ps;
	*nout = (int)n;
	return 0;
}

static void
gpu_print_matrix(const char *name, const float *x, int rows, int cols)
{
	int r, c, rmax = rows < 4 ? rows : 4, cmax = cols < 6 ? cols : 6;

	printf("%s (%d x %d)%s:\n", name, rows, cols,
	    rows > rmax || cols > cmax ? ", first rows and columns" : "");
	for (r = 0; r < rmax; r++) {
		printf("  [%4d]", r);
		for (c = 0; c < cmax; c++)
			printf(" %11.6g", (double)x[(size_t)r * cols + c]);
		printf("%s\n", cols > cmax ? " ..." : "");
	}
}

int
cmd_gpu(int argc, char **argv)
{
	struct gpu_args a = { 1, 1, 3, 5, 0, 0, 0, NULL, NULL, 64, 64 };
	struct options o;
	struct problem *ps = NULL;
	struct sim *sim = NULL;
	struct gpu_result res;
	struct compare_result co, cl;
	double *ref = NULL, *ref_lse = NULL, worst_rel = 0, worst_abs = 0,
	    worst_lse = 0;
	char err[512], dev[64], b1[32];
	int rc, n = 0, b;
	size_t no;

	memset(&res, 0, sizeof res);
	rc = gpu_parse("gpu", gpu_usage, argc, argv, OPT_PROBLEM | OPT_OUTFILES,
	    gpu_entries, &a, &o);
	if (rc >= 0)
		goto done;
	rc = CMD_USAGE;
	if (gpu_device("gpu", dev, sizeof dev) != 0)
		goto done;
	if (a.heads * a.batch > 1 && (o.output != NULL || o.lse != NULL)) {
		snprintf(err, sizeof err, "--output and --lse take one problem, "
		    "not %ld", a.heads * a.batch);
		goto fail;
	}
	if (gpu_problems(&o, &a, &ps, &n, err, sizeof err) != 0)
		goto fail;
	/* The simulator refuses what the kernel would (tiles, rules), and
	 * describes the problem in the words every command uses. */
	sim = sim_new(&ps[0], &o.tiling, &o.rule, err, sizeof err);
	if (sim == NULL)
		goto fail;
	if (gpu_teach(ps, n, &o.tiling, &o.rule, 0, (int)a.repeat, &res, err,
	    sizeof err) != 0)
		goto fail;

	no = (size_t)ps[0].tq * ps[0].dv;
	ref = util_calloc(no, sizeof *ref, "reference", err, sizeof err);
	ref_lse = util_calloc((size_t)ps[0].tq, sizeof *ref_lse, "reference", err,
	    sizeof err);
	if (ref == NULL || ref_lse == NULL)
		goto fail;
	for (b = 0; b < n; b++) {
		if (reference_attention(&ps[b], ref, ref_lse, err, sizeof err) != 0)
			goto fail;
		compare_arrays(res.o + b * no, ref, (long)no, 0, 0, &co);
		compare_arrays(res.lse + (size_t)b * ps[0].tq, ref_lse, ps[0].tq, 0,
		    0, &cl);
		worst_rel = fmax(worst_rel, co.max_rel);
		worst_abs = fmax(worst_abs, co.max_abs);
		worst_lse = fmax(worst_lse, cl.max_abs);
	}

	setup_describe(stdout, sim);
	if (n > 1)
		printf("heads:    %ld x batch %ld = %d problems, seeds %llu .. %llu\n",
		    a.heads, a.batch, n, (unsigned long long)o.spec.seed,
		    (unsigned long long)(o.spec.seed + (uint64_t)n - 1));
	printf("device:   %s\n", res.device);
	gpu_print_matrix(n > 1 ? "output O of problem 0" : "output O", res.o,
	    ps[0].tq, ps[0].dv);
	printf("error of O against the double reference%s: max abs %.3g, "
	    "max rel %.3g (relative to max |O|); lse max abs %.3g\n",
	    n > 1 ? " (worst problem)" : "", worst_abs, worst_rel, worst_lse);
	printf("kernel time: %.3f ms (teaching kernel, %s, median of %ld runs "
	    "after a warm-up); device memory %s\n", res.ms,
	    schedule_order_name(o.tiling.order), a.repeat,
	    util_bytes(res.device_bytes, b1, sizeof b1));
	if (setup_write_outputs(&o, &ps[0], res.o, res.lse, err, sizeof err) != 0)
		goto fail;
	rc = CMD_OK;
	goto done;
fail:
	fprintf(stderr, "flashstep gpu: %s\n", err);
	rc = CMD_USAGE;
done:
	free(ref);
	free(ref_lse);
	gpu_result_free(&res);
	sim_free(sim);
	gpu_free_problems(ps, n);
	options_free(&o);
	return rc;
}

/* A step and how far over its tolerance it went, for sorting. */
struct gpu_ranked {
	double excess;
	long step;
};

static int
gpu_ranked_cmp(const void *x, const void *y)
{
	const struct gpu_ranked *a = x, *b = y;

	if (a->excess != b->excess)
		return a->excess < b->excess ? 1 : -1;
	return (a->step > b->step) - (a->step < b->step);
}

static void
gpu_print_step(const struct schedule *s, const struct gpucheck_report *rep,
    long k)
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

/* One problem's lines: the summary, then the steps asked for. */
static int
gpu_print_report(const struct schedule *s, const struct gpucheck_report *rep,
    int b, int n, uint64_t seed, const struct gpu_args *a)
{
	struct gpu_ranked *rk;
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
	if (rep->pass)
		printf("  agree: worst step %ld at %.3g of the tolerance\n",
		    rep->worst_step, rep->worst_excess);
	else
		printf("  DIFFER: %ld values beyond the tolerance, first at step %ld; "
		    "worst step %ld at %.3g of the tolerance\n", rep->failures,
		    rep->first_failure, rep->worst_step, rep->worst_excess);
	if (a->steps) {
		for (k = 0; k < rep->steps; k++)
			gpu_print_step(s, rep, k);
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
	qsort(rk, (size_t)rep->steps, sizeof *rk, gpu_ranked_cmp);
	printf("  the %ld worst step%s:\n", show, show == 1 ? "" : "s");
	for (k = 0; k < show; k++)
		gpu_print_step(s, rep, rk[k].step);
	free(rk);
	return 0;
}

int
cmd_compare(int argc, char **argv)
{
	struct gpu_args a = { 1, 1, 3, 5, 0, 0, 0, NULL, NULL, 64, 64 };
	struct gpucheck_opts copts = { 0, 1 };
	struct gpucheck_report *reps = NULL;
	struct options o;
	struct problem *ps = NULL;
	struct sim *sim = NULL;
	char err[512], dev[64];
	int rc, n = 0, b, failed = 0;

	rc = gpu_parse("compare", compare_usage, argc, argv, OPT_PROBLEM,
	    compare_entries, &a, &o);
	if (rc >= 0)
		goto done;
	rc = CMD_USAGE;
	if (gpu_device("compare", dev, sizeof dev) != 0)
		goto done;
	if (a.fault != NULL)
		copts.gpu_flags |= GPU_TEST_NO_RESCALE;
	if (gpu_problems(&o, &a, &ps, &n, err, sizeof err) != 0)
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
	if (n > 1)
		printf("heads:    %ld x batch %ld = %d problems, seeds %llu .. %llu\n",
		    a.heads, a.batch, n, (unsigned long long)o.spec.seed,
		    (unsigned long long)(o.spec.seed + (uint64_t)n - 1));
	printf("device:   %s; teaching kernel %.3f ms%s\n", reps[0].device,
	    reps[0].kernel_ms, a.fault ? "; TEST FAULT: rescale left out" : "");
	printf("tolerance: |gpu - sim| <= atol + rtol |sim|, rtol = atol = %.3g "
	    "for m, alpha, l, lse; rtol = %.3g for acc and O, with atol = rtol "
	    "max|V| (times l for u)\n", reps[0].rtol, reps[0].rtol_acc);
	for (b = 0; b < n; b++) {
		if (gpu_print_report(sim_schedule(sim), &reps[b], b, n,
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
	gpu_free_problems(ps, n);
	options_free(&o);
	return rc;
}

/* One benchmark row. */
static void
gpu_bench_row(long t, const char *kernel, const struct gpu_result *r,
    const struct gpu_result *base, double flops)
{
	double diff = 0, omax = 0;
	size_t i, n = (size_t)r->tq * r->dv;
	char b1[32];

	for (i = 0; i < n; i++) {
		diff = fmax(diff, fabs((double)r->o[i] - base->o[i]));
		omax = fmax(omax, fabs((double)base->o[i]));
	}
	printf("  %6ld  %-24s %10.3f %10.1f %14s %12.2g\n", t, kernel, r->ms,
	    flops / (r->ms * 1e-3) / 1e9, util_bytes(r->device_bytes, b1, sizeof b1),
	    omax > 0 ? diff / omax : diff);
}

int
cmd_bench_gpu(int argc, char **argv)
{
	struct gpu_args a = { 1, 1, 10, 5, 0, 0, 0, NULL, "1024,4096,16384", 64, 64 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE };
	struct tiling tiling;
	struct problem_spec spec;
	struct problem p;
	struct gpu_result r2, r1, rn;
	struct options o;
	const char *c;
	char err[512], dev[64], *end;
	double flops;
	long t;
	int rc;

	memset(&p, 0, sizeof p);
	memset(&r1, 0, sizeof r1);
	memset(&r2, 0, sizeof r2);
	memset(&rn, 0, sizeof rn);
	rc = gpu_parse("bench --gpu", bench_gpu_usage, argc, argv, 0,
	    bench_entries, &a, &o);
	if (rc >= 0)
		goto done;
	rc = CMD_USAGE;
	if (a.cpu) {
		fprintf(stderr, "flashstep bench: choose --cpu or --gpu, not both\n");
		goto done;
	}
	if (gpu_device("bench --gpu", dev, sizeof dev) != 0)
		goto done;

	printf("GPU: %s; d = dv = 64, fp32, normal inputs, no mask; teaching "
	    "kernel Br = %ld, Bc = %ld;\nmedian of %ld runs after a warm-up, "
	    "kernel time only (CUDA events); GFLOP/s counts 4 Tq Tk d\n",
	    dev, a.br, a.bc, a.repeat);
	printf("  %6s  %-24s %10s %10s %14s %12s\n", "Tq=Tk", "kernel", "time (ms)",
	    "GFLOP/s", "device memory", "O vs fa2");
	for (c = a.sizes; *c != '\0'; c = *end == ',' ? end + 1 : end) {
		errno = 0;
		t = strtol(c, &end, 10);
		if (end == c || errno != 0 || t < 1 || t > 1000000) {
			snprintf(err, sizeof err, "--sizes: '%s' is not a list of sizes "
			    "from 1 to 1000000", a.sizes);
			goto fail;
		}
		problem_spec_init(&spec);
		spec.tq = spec.tk = (int)t;
		spec.d = spec.dv = 64;
		spec.input = INPUTS_NORMAL;
		spec.bc = (int)a.bc;
		if (problem_build(&spec, &p, err, sizeof err) != 0)
			goto fail;
		tiling.br = (int)a.br;
		tiling.bc = (int)a.bc;
		tiling.order = ORDER_FA2;
		if (gpu_teach(&p, 1, &tiling, &rule, 0, (int)a.repeat, &r2, err,
		    sizeof err) != 0)
			goto fail;
		tiling.order = ORDER_FA1;
		if (gpu_teach(&p, 1, &tiling, &rule, 0, (int)a.repeat, &r1, err,
		    sizeof err) != 0)
			goto fail;
		flops = 4.0 * (double)t * (double)t * 64.0;
		gpu_bench_row(t, "teaching, fa2", &r2, &r2, flops);
		gpu_bench_row(t, "teaching, fa1", &r1, &r2, flops);
		if (gpu_naive(&p, 1, (int)a.repeat, &rn, err, sizeof err) != 0)
			printf("  %6ld  %-24s %s\n", t, "naive (S, P in memory)", err);
		else
			gpu_bench_row(t, "naive (S, P in memory)", &rn, &r2, flops);
		fflush(stdout);
		gpu_result_free(&r2);
		gpu_result_free(&r1);
		gpu_result_free(&rn);
		problem_free(&p);
	}
	rc = CMD_OK;
	goto done;
fail:
	fprintf(stderr, "flashstep bench --gpu: %s\n", err);
	rc = CMD_USAGE;
done:
	gpu_result_free(&r2);
	gpu_result_free(&r1);
	gpu_result_free(&rn);
	problem_free(&p);
	options_free(&o);
	return rc;
}
