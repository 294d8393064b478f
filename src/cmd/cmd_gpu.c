/*
 * cmd_gpu.c - the GPU commands:
 *   flashstep gpu            the problem through the teaching kernel (or
 *                            --kernel fast): O, its error against the
 *                            double reference, time
 *   flashstep compare        kernel and simulator step by step (gpucheck)
 *   flashstep bench --gpu    naive baseline, teaching and fast kernels on
 *                            the shapes
 *
 * `--heads H --batch B` make B*H problems of one shape, problem b*H + h
 * drawing its inputs from seed + b*H + h, run in one launch; compare
 * holds each against its own simulator.  `--kernel fast` runs the tensor-
 * core kernel with its own tiling (--br/--bc choose among its tilings),
 * and the simulator replays that tiling.  Without a GPU (or without CUDA
 * in the build) every command says so and exits 2.
 */
#include "config.h"

#include "cmd.h"
#include "model/compare.h"
#include "gpu/gpu.h"
#include "gpu/gpucheck.h"
#include "model/npy.h"
#include "model/reference.h"
#include "model/setup.h"
#include "model/util.h"

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
	int fast;		/* --kernel fast */
	long tokens;		/* bench: B*T */
	const char *dims, *dtypes, *masks, *kernels, *save;
};

/* Every field at its default; repeat as the command's. */
static void
gpu_args_init(struct gpu_args *a, long repeat)
{
	memset(a, 0, sizeof *a);
	a->heads = 1;
	a->batch = 1;
	a->repeat = repeat;
	a->worst = 5;
	a->sizes = "1024,4096,16384";
	a->br = 64;
	a->bc = 64;
	a->tokens = 32768;
	a->dims = "64,128";
	a->dtypes = "fp16,bf16";
	a->masks = "none,causal";
	a->kernels = "naive,teaching,fast";
}

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
GPU_LONG_SETTER(set_tokens, tokens, "tokens", 1, 1L << 30)

static int
set_kernel(void *ctx, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "teaching") != 0 && strcmp(v, "fast") != 0)
		return util_error(err, errlen, "--kernel must be teaching or "
		    "fast, not '%s'", v);
	((struct gpu_args *)ctx)->fast = strcmp(v, "fast") == 0;
	return 0;
}

/*
 * A comma-separated list whose every item is one of the words in allowed
 * (a NULL-terminated list), or any number when allowed is NULL.
 */
static int
gpu_check_list(const char *name, const char *v, const char *const *allowed,
    char *err, size_t errlen)
{
	const char *c = v, *end;
	size_t len;
	int k, ok;

	if (*v == '\0')
		return util_error(err, errlen, "--%s must not be empty", name);
	for (;;) {
		end = strchr(c, ',');
		len = end != NULL ? (size_t)(end - c) : strlen(c);
		ok = len > 0;
		if (allowed == NULL)
			for (k = 0; k < (int)len; k++)
				ok = ok && c[k] >= '0' && c[k] <= '9';
		else {
			for (ok = 0, k = 0; allowed[k] != NULL && !ok; k++)
				ok = strlen(allowed[k]) == len &&
				    strncmp(allowed[k], c, len) == 0;
		}
		if (!ok)
			return util_error(err, errlen, "--%s: '%.*s' in '%s' is "
			    "not %s", name, (int)len, c, v, allowed == NULL ?
			    "a number" : "one of those --help lists");
		if (end == NULL)
			return 0;
		c = end + 1;
	}
}

static const char *const gpu_dim_words[] = { "64", "128", NULL };
static const char *const gpu_dtype_words[] = { "fp32", "fp16", "bf16", NULL };
static const char *const gpu_mask_words[] = { "none", "causal", NULL };
static const char *const gpu_kernel_words[] = { "naive", "teaching", "fa1",
    "fast", NULL };

static int
set_dims(void *ctx, const char *v, char *err, size_t errlen)
{
	((struct gpu_args *)ctx)->dims = v;
	return gpu_check_list("dims", v, gpu_dim_words, err, errlen);
}

static int
set_dtypes(void *ctx, const char *v, char *err, size_t errlen)
{
	((struct gpu_args *)ctx)->dtypes = v;
	return gpu_check_list("dtypes", v, gpu_dtype_words, err, errlen);
}

static int
set_masks(void *ctx, const char *v, char *err, size_t errlen)
{
	((struct gpu_args *)ctx)->masks = v;
	return gpu_check_list("masks", v, gpu_mask_words, err, errlen);
}

static int
set_kernels(void *ctx, const char *v, char *err, size_t errlen)
{
	((struct gpu_args *)ctx)->kernels = v;
	return gpu_check_list("kernels", v, gpu_kernel_words, err, errlen);
}

static int
set_save(void *ctx, const char *v, char *err, size_t errlen)
{
	if (*v == '\0')
		return util_error(err, errlen, "--save needs a directory");
	((struct gpu_args *)ctx)->save = v;
	return 0;
}

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
	return gpu_check_list("sizes", v, NULL, err, errlen);
}

static const struct options_entry gpu_entries[] = {
	{ "kernel", "teaching|fast", "the kernel to run (default teaching); "
	    "fast takes its own tiling", set_kernel },
	{ "heads", "H", "H heads per batch entry (default 1)", set_heads },
	{ "batch", "B", "B batch entries (default 1): B*H problems, "
	    "seeds seed .. seed+B*H-1", set_batch },
	{ "repeat", "N", "timed runs after a warm-up (default 3)", set_repeat },
	{ NULL, NULL, NULL, NULL },
};

static const struct options_entry compare_entries[] = {
	{ "kernel", "teaching|fast", "the kernel to compare (default "
	    "teaching); fast takes its own tiling", set_kernel },
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
	{ "sizes", "LIST", "T = Tq = Tk values (default 1024,4096,16384)",
	    set_sizes },
	{ "tokens", "N", "B*T: B = N / T batch entries, at least 1 (default "
	    "32768)", set_tokens },
	{ "heads", "H", "heads per batch entry (default 16)", set_heads },
	{ "dims", "LIST", "head widths d = dv, of 64,128 (default 64,128)",
	    set_dims },
	{ "dtypes", "LIST", "of fp16,bf16,fp32 (default fp16,bf16; the fast "
	    "kernel skips fp32)", set_dtypes },
	{ "masks", "LIST", "of none,causal (default none,causal)", set_masks },
	{ "kernels", "LIST", "of naive,teaching,fa1,fast (default naive,"
	    "teaching,fast; fa1: the teaching kernel in the fa1 order)",
	    set_kernels },
	{ "repeat", "N", "timed runs of the fast kernel after a warm-up "
	    "(default 20); the others get at most 3", set_repeat },
	{ "br", "N", "query rows per tile of the teaching kernel (default 64)",
	    set_br },
	{ "bc", "N", "keys per tile of the teaching kernel (default 64)", set_bc },
	{ "save", "DIR", "write each shape's Q, K, V, O and lse as .npy into "
	    "DIR (large: B*H*T*d floats each)", set_save },
	{ NULL, NULL, NULL, NULL },
};

static const char gpu_usage[] =
    "usage: flashstep gpu [options]\n"
    "\n"
    "Runs the problem through the teaching kernel on the GPU (float32, the\n"
    "simulator's tiles, loop order and update rule) and prints the output,\n"
    "its error against naive attention in double precision, and the kernel\n"
    "time.  --kernel fast runs the tensor-core kernel instead (--dtype\n"
    "fp16|bf16, --d 64|128, its own Br x Bc).  Exits 2 when there is no GPU.\n"
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
    "\n"
    "--kernel fast compares the tensor-core kernel (--dtype fp16|bf16,\n"
    "--d 64|128, fa2, unnormalized): the simulator replays its tiling (its\n"
    "default for d, or the one --br and --bc name), and a debug build of the\n"
    "kernel traces m (kept unscaled in the kernel: times scale here), alpha,\n"
    "l and the numerator after every tile; O and lse are the timed kernel's.\n"
    "Its sums and exponentials are not the simulator's, so every tolerance\n"
    "above grows by 2 delta, delta = (9d/8 + 8) 2^-24 S1 + 2^-20 with\n"
    "S1 = scale max|q_r| max|k_c| (src/gpucheck.c says why).\n"
    "\n";

static const char bench_gpu_usage[] =
    "usage: flashstep bench --gpu [options]\n"
    "\n"
    "Times the naive baseline (S and P in device memory, float32), the\n"
    "teaching kernel (float32, Br x Bc tiles, fa2) and the fast kernel\n"
    "(tensor cores, its default tiling) on B*H problems of one shape; by\n"
    "default the table of issue 6: B*T = 32768, H = 16, T = Tq = Tk in\n"
    "1024, 4096, 16384, d in 64, 128, fp16 and bf16, without and with the\n"
    "causal mask.  Each row: the median kernel time, TFLOP/s (4 B H T T d,\n"
    "halved for causal), the device memory the run allocated, and\n"
    "max |O - O_ref| / max |O_ref| with O_ref the naive kernel's (the\n"
    "teaching kernel's where naive is skipped).  Inputs are normal, rounded\n"
    "to the dtype; 4 input sets are repeated over the B*H heads (each head\n"
    "has its own device memory).  The naive baseline is skipped, with the\n"
    "reason, where S and P do not fit in free device memory.\n"
    "Issue 4's table: --tokens 1 --heads 1 --dims 64 --dtypes fp32\n"
    "--masks none --kernels naive,teaching,fa1.\n"
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

/* Was --name given on the command line (as --name V or --name=V)? */
static int
gpu_arg_given(int argc, char **argv, const char *name)
{
	size_t len = strlen(name);
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], "--", 2) == 0 &&
		    strncmp(argv[i] + 2, name, len) == 0 &&
		    (argv[i][2 + len] == '\0' || argv[i][2 + len] == '='))
			return 1;
	}
	return 0;
}

/*
 * --kernel fast: the kernel's own tiling for head width d, its default or
 * the one --br and --bc name, in o->tiling (the order stays the user's,
 * so fa1 is refused by name).  Called before the problems are built when
 * --d is given (a spike lands by Bc) and again after, with the d read
 * from the files.
 */
static int
gpu_fast_pick(int argc, char **argv, int d, struct options *o, char *err,
    size_t errlen)
{
	struct tiling t;
	int given = gpu_arg_given(argc, argv, "br") ||
	    gpu_arg_given(argc, argv, "bc");

	if (gpu_fast_tiling(d, given ? o->tiling.br : 0,
	    given ? o->tiling.bc : 0, &t, err, errlen) != 0)
		return -1;
	o->tiling.br = t.br;
	o->tiling.bc = t.bc;
	o->spec.bc = t.bc;
	return 0;
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

int
cmd_gpu(int argc, char **argv)
{
	struct gpu_args a;
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
	gpu_args_init(&a, 3);
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
	if (a.fast && o.spec.d > 0 && gpu_fast_pick(argc, argv, o.spec.d, &o,
	    err, sizeof err) != 0)
		goto fail;
	if (gpu_problems(&o, &a, &ps, &n, err, sizeof err) != 0)
		goto fail;
	if (a.fast && gpu_fast_pick(argc, argv, ps[0].d, &o, err,
	    sizeof err) != 0)
		goto fail;
	/* The simulator refuses what the kernel would (tiles, rules), and
	 * describes the problem in the words every command uses. */
	sim = sim_new(&ps[0], &o.tiling, &o.rule, err, sizeof err);
	if (sim == NULL)
		goto fail;
	if (a.fast && (o.rule.convention != CONV_UNNORMALIZED ||
	    o.rule.bug != BUG_NONE)) {
		snprintf(err, sizeof err, "the fast kernel keeps the "
		    "unnormalized accumulator and has no bug modes");
		goto fail;
	}
	if (a.fast ? gpu_fast(ps, n, &o.tiling, 0, (int)a.repeat, &res, err,
	    sizeof err) != 0 : gpu_teach(ps, n, &o.tiling, &o.rule, 0,
	    (int)a.repeat, &res, err, sizeof err) != 0)
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
	setup_print_matrix(n > 1 ? "output O of problem 0" : "output O", res.o,
	    ps[0].tq, ps[0].dv);
	printf("error of O against the double reference%s: max abs %.3g, "
	    "max rel %.3g (relative to max |O|); lse max abs %.3g\n",
	    n > 1 ? " (worst problem)" : "", worst_abs, worst_rel, worst_lse);
	printf("kernel time: %.3f ms (%s kernel, %s, median of %ld runs "
	    "after a warm-up); device memory %s\n", res.ms,
	    a.fast ? "fast" : "teaching", schedule_order_name(o.tiling.order),
	    a.repeat, util_bytes(res.device_bytes, b1, sizeof b1));
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
	struct gpu_args a;
	struct gpucheck_opts copts = { 0, 1, GPUCHECK_TEACHING };
	struct gpucheck_report *reps = NULL;
	struct options o;
	struct problem *ps = NULL;
	struct sim *sim = NULL;
	char err[512], dev[64];
	int rc, n = 0, b, failed = 0;

	gpu_args_init(&a, 3);
	rc = gpu_parse("compare", compare_usage, argc, argv, OPT_PROBLEM,
	    compare_entries, &a, &o);
	if (rc >= 0)
		goto done;
	rc = CMD_USAGE;
	if (gpu_device("compare", dev, sizeof dev) != 0)
		goto done;
	if (a.fault != NULL)
		copts.gpu_flags |= GPU_TEST_NO_RESCALE;
	if (a.fast) {
		copts.kernel = GPUCHECK_FAST;
		if (o.spec.d > 0 && gpu_fast_pick(argc, argv, o.spec.d, &o, err,
		    sizeof err) != 0)
			goto fail;
	}
	if (gpu_problems(&o, &a, &ps, &n, err, sizeof err) != 0)
		goto fail;
	if (a.fast && gpu_fast_pick(argc, argv, ps[0].d, &o, err,
	    sizeof err) != 0)
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
	printf("device:   %s; %s kernel %.3f ms%s\n", reps[0].device,
	    a.fast ? "fast" : "teaching", reps[0].kernel_ms,
	    a.fault ? "; TEST FAULT: rescale left out" : "");
	printf("tolerance: |gpu - sim| <= atol + rtol |sim|, rtol = atol = %.3g "
	    "for m, alpha, l, lse; rtol = %.3g for acc and O, with atol = rtol "
	    "max|V| (times l for u)\n", reps[0].rtol, reps[0].rtol_acc);
	if (a.fast)
		printf("           (problem 0: 2 delta = %.3g for the tensor "
		    "cores' sums and exp2, see --help)\n", 2.0 * reps[0].delta);
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

/* Input sets per benchmark shape, repeated over the heads. */
#define GPU_BENCH_INPUTS 4

/* The slow kernels' timed runs at most (naive, teaching). */
#define GPU_BENCH_SLOW_REPEAT 3

/* One benchmark shape and its problems. */
struct gpu_bench {
	enum dtype dtype;
	int d, t, causal, batch, heads, n;
	struct problem inputs[GPU_BENCH_INPUTS];
	int ninputs;
	struct problem *ps;	/* n shallow copies of the inputs */
	double flops;
};

/* The next item of a comma-separated list (checked by gpu_check_list). */
static const char *
gpu_list_next(const char *c, char *item, size_t len)
{
	size_t k = 0;

	while (*c != '\0' && *c != ',') {
		if (k + 1 < len)
			item[k++] = *c;
		c++;
	}
	item[k] = '\0';
	return *c == ',' ? c + 1 : c;
}

/* Is word an item of the list? */
static int
gpu_list_has(const char *list, const char *word)
{
	char item[32];
	const char *c = list;

	while (*c != '\0') {
		c = gpu_list_next(c, item, sizeof item);
		if (strcmp(item, word) == 0)
			return 1;
	}
	return 0;
}

static void
gpu_bench_free(struct gpu_bench *bs)
{
	int i;

	for (i = 0; i < bs->ninputs; i++)
		problem_free(&bs->inputs[i]);
	free(bs->ps);
	bs->ps = NULL;
	bs->ninputs = 0;
}

/* The inputs of one (dtype, d, T): problem b shares input set b % 4. */
static int
gpu_bench_build(struct gpu_bench *bs, long tokens, long heads, char *err,
    size_t errlen)
{
	struct problem_spec spec;
	long batch = tokens / bs->t > 0 ? tokens / bs->t : 1;
	int i;

	if (batch * heads > 65535)
		return util_error(err, errlen, "%ld batch entries times %ld "
		    "heads is more than one launch takes (65535)", batch, heads);
	bs->batch = (int)batch;
	bs->heads = (int)heads;
	bs->n = (int)(batch * heads);
	bs->ninputs = 0;
	for (i = 0; i < GPU_BENCH_INPUTS && i < bs->n; i++) {
		problem_spec_init(&spec);
		spec.tq = spec.tk = bs->t;
		spec.d = spec.dv = bs->d;
		spec.input = INPUTS_NORMAL;
		spec.dtype = bs->dtype;
		spec.seed = 1 + (uint64_t)i;
		spec.bc = 64;
		if (problem_build(&spec, &bs->inputs[i], err, errlen) != 0)
			return -1;
		bs->ninputs++;
	}
	bs->ps = util_calloc((size_t)bs->n, sizeof *bs->ps, "problems", err,
	    errlen);
	return bs->ps != NULL ? 0 : -1;
}

/* The shallow copies for one mask. */
static void
gpu_bench_mask(struct gpu_bench *bs, int causal)
{
	int b;

	bs->causal = causal;
	for (b = 0; b < bs->n; b++) {
		bs->ps[b] = bs->inputs[b % bs->ninputs];
		bs->ps[b].causal = causal;
	}
	bs->flops = 4.0 * bs->n * (double)bs->t * bs->t * bs->d /
	    (causal ? 2.0 : 1.0);
}

/* max |o - ref| / max |ref| over n values. */
static double
gpu_bench_diff(const float *o, const float *ref, size_t n)
{
	double diff = 0, rmax = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		diff = fmax(diff, fabs((double)o[i] - ref[i]));
		rmax = fmax(rmax, fabs((double)ref[i]));
	}
	return rmax > 0 ? diff / rmax : diff;
}

/* The row's leading columns: the shape. */
static void
gpu_bench_shape(const struct gpu_bench *bs)
{
	char bh[32];

	snprintf(bh, sizeof bh, "%d x %d", bs->batch, bs->heads);
	printf("%-5s %4d %6d %9s %-6s ", dtype_name(bs->dtype), bs->d, bs->t,
	    bh, bs->causal ? "causal" : "none");
}

/* One row; ref NULL marks the reference itself. */
static void
gpu_bench_row(const struct gpu_bench *bs, const char *kernel,
    const struct gpu_result *r, const struct gpu_result *ref)
{
	char b1[32], diff[32];

	if (ref == NULL)
		snprintf(diff, sizeof diff, "ref");
	else
		snprintf(diff, sizeof diff, "%.2g", gpu_bench_diff(r->o, ref->o,
		    (size_t)bs->n * bs->t * bs->d));
	gpu_bench_shape(bs);
	printf("%-9s %10.3f %9.1f %12s %10s\n", kernel, r->ms,
	    bs->flops / (r->ms * 1e-3) / 1e12,
	    util_bytes(r->device_bytes, b1, sizeof b1), diff);
	fflush(stdout);
}

static void
gpu_bench_skip(const struct gpu_bench *bs, const char *kernel,
    const char *why)
{
	gpu_bench_shape(bs);
	printf("%-9s skipped: %s\n", kernel, why);
	fflush(stdout);
}

/*
 * Does the naive baseline fit?  It allocates Q, K^T, V, S, P, O and three
 * rows of float32 per problem; S and P are T x T each.  0 when it fits,
 * else the reason in why.
 */
static int
gpu_bench_naive_fits(const struct gpu_bench *bs, char *why, size_t len)
{
	double need, fr, tot, t = bs->t, margin = 512.0 * 1024 * 1024;
	char b1[32], b2[32], b3[32], err[256];

	need = 4.0 * bs->n * (3.0 * t * bs->d + 2.0 * t * t + t * bs->d +
	    3.0 * t);
	if (gpu_memory(&fr, &tot, err, sizeof err) != 0) {
		snprintf(why, len, "%s", err);
		return -1;
	}
	if (need + margin <= fr)
		return 0;
	snprintf(why, len, "needs %s of device memory (S and P: 2 x %d x %d^2 "
	    "floats), %s free of %s", util_bytes(need, b1, sizeof b1), bs->n,
	    bs->t, util_bytes(fr, b2, sizeof b2), util_bytes(tot, b3,
	    sizeof b3));
	return -1;
}

/* --save: dir/<dtype>_d<d>_T<T>_<mask>_<name>.npy, each whole. */
static int
gpu_bench_save(const struct gpu_bench *bs, const char *dir,
    const struct gpu_result *out, char *err, size_t errlen)
{
	static const char *const names[3] = { "q", "k", "v" };
	char path[4096];
	float *buf;
	size_t per = (size_t)bs->t * bs->d;
	long shape[2];
	int which, b, rc = -1;

	shape[0] = (long)bs->n * bs->t;
	shape[1] = bs->d;
	buf = util_calloc((size_t)bs->n * per, sizeof *buf, "--save buffer",
	    err, errlen);
	if (buf == NULL)
		return -1;
	for (which = 0; which < 3; which++) {
		for (b = 0; b < bs->n; b++)
			memcpy(buf + b * per, which == 0 ? bs->ps[b].q :
			    which == 1 ? bs->ps[b].k : bs->ps[b].v,
			    per * sizeof *buf);
		snprintf(path, sizeof path, "%s/%s_d%d_T%d_%s_%s.npy", dir,
		    dtype_name(bs->dtype), bs->d, bs->t, bs->causal ? "causal" :
		    "none", names[which]);
		if (npy_write(path, buf, 2, shape, err, errlen) != 0)
			goto out;
	}
	if (out != NULL) {
		snprintf(path, sizeof path, "%s/%s_d%d_T%d_%s_o.npy", dir,
		    dtype_name(bs->dtype), bs->d, bs->t, bs->causal ? "causal" :
		    "none");
		if (npy_write(path, out->o, 2, shape, err, errlen) != 0)
			goto out;
		snprintf(path, sizeof path, "%s/%s_d%d_T%d_%s_lse.npy", dir,
		    dtype_name(bs->dtype), bs->d, bs->t, bs->causal ? "causal" :
		    "none");
		if (npy_write(path, out->lse, 1, shape, err, errlen) != 0)
			goto out;
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/* Every kernel asked for on one shape. */
static int
gpu_bench_one(struct gpu_bench *bs, const struct gpu_args *a, char *err,
    size_t errlen)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE };
	struct gpu_result rn, rt, r1, rf;
	const struct gpu_result *ref = NULL, *out = NULL;
	struct tiling t;
	char why[512];
	int slow = a->repeat < GPU_BENCH_SLOW_REPEAT ? (int)a->repeat :
	    GPU_BENCH_SLOW_REPEAT, rc = -1;

	memset(&rn, 0, sizeof rn);
	memset(&rt, 0, sizeof rt);
	memset(&r1, 0, sizeof r1);
	memset(&rf, 0, sizeof rf);
	if (gpu_list_has(a->kernels, "naive")) {
		if (gpu_bench_naive_fits(bs, why, sizeof why) != 0)
			gpu_bench_skip(bs, "naive", why);
		else if (gpu_naive(bs->ps, bs->n, slow, &rn, why,
		    sizeof why) != 0)
			gpu_bench_skip(bs, "naive", why);
		else {
			gpu_bench_row(bs, "naive", &rn, NULL);
			ref = &rn;
		}
	}
	t.br = (int)a->br;
	t.bc = (int)a->bc;
	t.order = ORDER_FA2;
	if (gpu_list_has(a->kernels, "teaching")) {
		if (gpu_teach(bs->ps, bs->n, &t, &rule, 0, slow, &rt, why,
		    sizeof why) != 0)
			gpu_bench_skip(bs, "teaching", why);
		else {
			gpu_bench_row(bs, "teaching", &rt, ref);
			if (ref == NULL)
				ref = &rt;
			out = &rt;
		}
	}
	t.order = ORDER_FA1;
	if (gpu_list_has(a->kernels, "fa1")) {
		if (gpu_teach(bs->ps, bs->n, &t, &rule, 0, slow, &r1, why,
		    sizeof why) != 0)
			gpu_bench_skip(bs, "fa1", why);
		else {
			gpu_bench_row(bs, "fa1", &r1, ref);
			if (ref == NULL)
				ref = &r1;
		}
	}
	if (gpu_list_has(a->kernels, "fast")) {
		if (bs->dtype == DTYPE_FP32)
			gpu_bench_skip(bs, "fast", "the fast kernel takes "
			    "fp16 or bf16");
		else if (gpu_fast_tiling(bs->d, 0, 0, &t, why,
		    sizeof why) != 0 || gpu_fast(bs->ps, bs->n, &t, 0,
		    (int)a->repeat, &rf, why, sizeof why) != 0)
			gpu_bench_skip(bs, "fast", why);
		else {
			gpu_bench_row(bs, "fast", &rf, ref);
			out = &rf;
		}
	}
	if (out == NULL && ref != NULL)
		out = ref;
	if (a->save != NULL && gpu_bench_save(bs, a->save, out, err,
	    errlen) != 0)
		goto done;
	rc = 0;
done:
	gpu_result_free(&rn);
	gpu_result_free(&rt);
	gpu_result_free(&r1);
	gpu_result_free(&rf);
	return rc;
}

/* Every size and mask at one dtype and d (in bs). */
static int
gpu_bench_sizes(struct gpu_bench *bs, const struct gpu_args *a, char *err,
    size_t errlen)
{
	const char *ct, *cm;
	char item[32];

	for (ct = a->sizes; *ct != '\0';) {
		ct = gpu_list_next(ct, item, sizeof item);
		bs->t = atoi(item);
		if (bs->t < 1 || bs->t > 1000000)
			return util_error(err, errlen, "--sizes: %s is not from 1 to "
			    "1000000", item);
		if (gpu_bench_build(bs, a->tokens, a->heads, err, errlen) != 0)
			return -1;
		for (cm = a->masks; *cm != '\0';) {
			cm = gpu_list_next(cm, item, sizeof item);
			gpu_bench_mask(bs, strcmp(item, "causal") == 0);
			if (gpu_bench_one(bs, a, err, errlen) != 0)
				return -1;
		}
		gpu_bench_free(bs);
	}
	return 0;
}

int
cmd_bench_gpu(int argc, char **argv)
{
	struct gpu_bench bs;
	struct options o;
	struct gpu_args a;
	const char *cd, *cdim;
	char err[512], dev[64], item[32];
	int rc;

	memset(&bs, 0, sizeof bs);
	gpu_args_init(&a, 20);
	a.heads = 16;
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

	printf("GPU: %s; normal inputs; B = %ld / T (at least 1), H = %ld; "
	    "teaching kernel Br = %ld, Bc = %ld, fa2;\n", dev, a.tokens,
	    a.heads, a.br, a.bc);
	printf("kernel time only (CUDA events), median of %ld runs (fast) or "
	    "%ld (naive, teaching) after a warm-up;\n", a.repeat,
	    a.repeat < GPU_BENCH_SLOW_REPEAT ? a.repeat :
	    (long)GPU_BENCH_SLOW_REPEAT);
	printf("TFLOP/s counts 4 B H T T d, halved for causal; O vs ref: "
	    "max |O - O_ref| / max |O_ref|\n");
	printf("%-5s %4s %6s %9s %-6s %-9s %10s %9s %12s %10s\n", "dtype", "d",
	    "T", "B x H", "mask", "kernel", "time (ms)", "TFLOP/s",
	    "device mem", "O vs ref");
	for (cd = a.dtypes; *cd != '\0';) {
		cd = gpu_list_next(cd, item, sizeof item);
		dtype_parse(item, &bs.dtype);
		for (cdim = a.dims; *cdim != '\0';) {
			cdim = gpu_list_next(cdim, item, sizeof item);
			bs.d = atoi(item);
			if (gpu_bench_sizes(&bs, &a, err, sizeof err) != 0)
				goto fail;
		}
	}
	rc = CMD_OK;
	goto done;
fail:
	fprintf(stderr, "flashstep bench --gpu: %s\n", err);
	rc = CMD_USAGE;
done:
	gpu_bench_free(&bs);
	options_free(&o);
	return rc;
}
