/*
 * cmd_bench_gpu.c - `flashstep bench --gpu`: every kernel of the table
 * (or those --kernels names) on B*H problems of one shape, for each
 * dtype, d, T and mask asked for: the median kernel time (timing.h, the
 * same for every kernel), TFLOP/s, the device memory the kernel held,
 * and its O against the first kernel's; --save writes the inputs and the
 * last kernel's O and lse as .npy.  --ladder times the kernel ladder
 * (gpu_ladder: naive, teaching, fast, wgmma) on one shape, each rung with
 * its speed-up over the one below and why, and with --backward the
 * backward's (gpu_ladder_backward); --backward times each kernel
 * with a backward pass, forward and backward, on every shape; --decode
 * times the decode kernel on decoding shapes, with its HBM bandwidth.
 */
#include "config.h"

#include "cmd.h"
#include "gpucmd.h"
#include "model/backward.h"
#include "app/npyout.h"
#include "model/npy.h"
#include "model/reference.h"
#include "model/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Input sets per benchmark shape, repeated over the heads. */
#define BENCH_GPU_INPUTS 4

/* The --kernels row that is not a kernel of the table: the kernel with
 * GPU_BENCH_FA1 (kernel.h) in the fa1 loop order. */
#define BENCH_GPU_FA1 "fa1"

struct bench_gpu_args {
	struct gpucmd_args common;	/* first: the shared setters' ctx */
	int cpu, gpu;
	int ladder, backward, decode;	/* --ladder, --backward, --decode */
	long tokens;			/* B*T */
	long br, bc;			/* tiles of the kernels that take any */
	const char *sizes, *dims, *dtypes, *masks, *kernels, *save;
};

/* One benchmark shape and its problems. */
struct bench_gpu_shape {
	enum dtype dtype;
	int d, t, causal, batch, heads, n;
	struct problem inputs[BENCH_GPU_INPUTS];
	float *douts[BENCH_GPU_INPUTS];	/* --backward: each input set's dO */
	int ninputs;
	struct problem *ps;	/* n shallow copies of the inputs */
	double flops;
};

/* ---- the lists of --sizes, --dims, --dtypes, --masks, --kernels ---- */

/*
 * A comma-separated list whose every item is one of the words in allowed
 * (a NULL-terminated list), or any number when allowed is NULL.
 */
static int
bench_gpu_check_list(const char *name, const char *v,
    const char *const *allowed, char *err, size_t errlen)
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

/* The next item of a checked list. */
static const char *
bench_gpu_list_next(const char *c, char *item, size_t len)
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
bench_gpu_list_has(const char *list, const char *word)
{
	char item[32];
	const char *c = list;

	while (*c != '\0') {
		c = bench_gpu_list_next(c, item, sizeof item);
		if (strcmp(item, word) == 0)
			return 1;
	}
	return 0;
}

/*
 * "naive,teaching,fast,wgmma": the names of the kernels whose bench
 * flags (kernel.h) have one of flags, and with bwd only those with a
 * backward pass, joined by sep.  The default lists and the help come
 * from it, so they follow the table.
 */
static void
bench_gpu_names(unsigned flags, int bwd, const char *sep, char *buf,
    size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; gpu_kernels[i] != NULL && at < len; i++)
		if ((gpu_kernels[i]->bench & flags) && (!bwd ||
		    gpu_kernels[i]->backward != NULL))
			at += (size_t)snprintf(buf + at, len - at, "%s%s",
			    at > 0 ? sep : "", gpu_kernels[i]->name);
}

/* The kernel with flag (GPU_BENCH_FA1, GPU_BENCH_DECODE), or NULL. */
static const struct gpu_kernel *
bench_gpu_flagged(unsigned flag)
{
	int i;

	for (i = 0; gpu_kernels[i] != NULL; i++)
		if (gpu_kernels[i]->bench & flag)
			return gpu_kernels[i];
	return NULL;
}

/* The help's words that name kernels, from the table (bench_gpu_help). */
static char bench_gpu_help_backward[256], bench_gpu_help_decode[256],
    bench_gpu_help_kernels[256], bench_gpu_help_repeat[160],
    bench_gpu_usage[4096];

static const char *const bench_gpu_dim_words[] = { "64", "128", NULL };
static const char *const bench_gpu_dtype_words[] = { "fp32", "fp16", "bf16",
    NULL };
static const char *const bench_gpu_mask_words[] = { "none", "causal", NULL };

static int
set_dims(void *ctx, const char *v, char *err, size_t errlen)
{
	((struct bench_gpu_args *)ctx)->dims = v;
	return bench_gpu_check_list("dims", v, bench_gpu_dim_words, err, errlen);
}

static int
set_dtypes(void *ctx, const char *v, char *err, size_t errlen)
{
	((struct bench_gpu_args *)ctx)->dtypes = v;
	return bench_gpu_check_list("dtypes", v, bench_gpu_dtype_words, err,
	    errlen);
}

static int
set_masks(void *ctx, const char *v, char *err, size_t errlen)
{
	((struct bench_gpu_args *)ctx)->masks = v;
	return bench_gpu_check_list("masks", v, bench_gpu_mask_words, err,
	    errlen);
}

/* The kernels of the table, and fa1. */
static int
set_kernels(void *ctx, const char *v, char *err, size_t errlen)
{
	const char *words[32];
	int i;

	for (i = 0; gpu_kernels[i] != NULL && i < 30; i++)
		words[i] = gpu_kernels[i]->name;
	words[i++] = BENCH_GPU_FA1;
	words[i] = NULL;
	((struct bench_gpu_args *)ctx)->kernels = v;
	return bench_gpu_check_list("kernels", v, words, err, errlen);
}

static int
set_sizes(void *ctx, const char *v, char *err, size_t errlen)
{
	const char *c;
	char item[32];
	long t;

	((struct bench_gpu_args *)ctx)->sizes = v;
	if (bench_gpu_check_list("sizes", v, NULL, err, errlen) != 0)
		return -1;
	/* The range too, here: a size no table takes is a usage error,
	 * said before the device is looked for (exit 2, not 4). */
	for (c = v; *c != '\0';) {
		c = bench_gpu_list_next(c, item, sizeof item);
		if (options_int("sizes", item, 1, 1000000, &t, err, errlen) != 0)
			return util_error(err, errlen, "--sizes: %s is not from 1 "
			    "to 1000000", item);
	}
	return 0;
}

static int
set_save(void *ctx, const char *v, char *err, size_t errlen)
{
	struct stat st;

	if (*v == '\0')
		return util_error(err, errlen, "--save needs a directory");
	/* The folder is checked now, before the device and the timing
	 * runs; each file in it is checked as it is written (outfile.h). */
	if (stat(v, &st) != 0)
		return util_error(err, errlen, "--save %s: %s", v, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return util_error(err, errlen, "--save %s: not a directory", v);
	if (access(v, W_OK | X_OK) != 0)
		return util_error(err, errlen, "--save %s: %s", v, strerror(errno));
	((struct bench_gpu_args *)ctx)->save = v;
	return 0;
}

static int
set_gpu(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct bench_gpu_args *)ctx)->gpu, v, err,
	    errlen);
}

static int
set_cpu(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct bench_gpu_args *)ctx)->cpu, v, err,
	    errlen);
}

static int
set_ladder(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct bench_gpu_args *)ctx)->ladder, v, err,
	    errlen);
}

static int
set_decode(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct bench_gpu_args *)ctx)->decode, v,
	    err, errlen);
}

static int
set_backward(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct bench_gpu_args *)ctx)->backward, v,
	    err, errlen);
}

#define BENCH_GPU_LONG_SETTER(fn, field, name, min, max)		\
static int								\
fn(void *ctx, const char *v, char *err, size_t errlen)			\
{									\
	return options_int(name, v, min, max,				\
	    &((struct bench_gpu_args *)ctx)->field, err, errlen);	\
}
BENCH_GPU_LONG_SETTER(set_tokens, tokens, "tokens", 1, 1L << 30)
BENCH_GPU_LONG_SETTER(set_br, br, "br", 1, 4096)
BENCH_GPU_LONG_SETTER(set_bc, bc, "bc", 1, 4096)

static const struct options_entry bench_gpu_entries[] = {
	{ "gpu", NULL, "the GPU benchmark", set_gpu },
	{ "cpu", NULL, "(the CPU benchmark: flashstep bench --cpu)", set_cpu },
	{ "ladder", NULL, "the kernel ladder on one shape (default fp16, "
	    "d = 64, T = 4096, no mask): naive, teaching, fast, wgmma, each "
	    "rung's speed-up and why", set_ladder },
	{ "backward", NULL, bench_gpu_help_backward, set_backward },
	{ "decode", NULL, bench_gpu_help_decode, set_decode },
	{ "sizes", "LIST", "T = Tq = Tk values (default 1024,4096,16384)",
	    set_sizes },
	{ "tokens", "N", "B*T: B = N / T batch entries, at least 1 (default "
	    "32768)", set_tokens },
	{ "heads", "H", "heads per batch entry (default 16; --decode: query "
	    "heads, default 32)", gpucmd_set_heads },
	{ "dims", "LIST", "head widths d = dv, of 64,128 (default 64,128)",
	    set_dims },
	{ "dtypes", "LIST", "of fp16,bf16,fp32 (default fp16,bf16; a kernel "
	    "skips the ones it does not take)", set_dtypes },
	{ "masks", "LIST", "of none,causal (default none,causal)", set_masks },
	{ "kernels", "LIST", bench_gpu_help_kernels, set_kernels },
	{ "repeat", "N", bench_gpu_help_repeat, gpucmd_set_repeat },
	{ "br", "N", "query rows per tile of the kernels that take any tiling "
	    "(default 64)", set_br },
	{ "bc", "N", "keys per tile of the kernels that take any tiling "
	    "(default 64)", set_bc },
	{ "save", "DIR", "write each shape's Q, K, V and the last kernel's O "
	    "and lse as .npy into DIR (large: B*H*T*d floats each)", set_save },
	{ NULL, NULL, NULL, NULL },
};

/* The usage, its kernel names from the table (bench_gpu_help). */
static const char bench_gpu_usage_fmt[] =
    "usage: flashstep bench --gpu [options]\n"
    "\n"
    "Times kernels of the table (gpu --list-kernels says what each is),\n"
    "by default %s,\n"
    "those that take any tiling in Br x Bc tiles, fa2, the others in\n"
    "their default tiling, on B*H problems of one shape; by default\n"
    "B*T = 32768, H = 16, T = Tq =\n"
    "Tk in 1024, 4096, 16384, d in 64, 128, fp16 and bf16, without and\n"
    "with the causal mask.  Each row:\n"
    "the median kernel time (CUDA events, runs back to back after a\n"
    "warm-up, the same for every kernel), TFLOP/s (4 B H T T d, halved for\n"
    "causal), the device memory the kernel held, and max |O - O_ref| /\n"
    "max |O_ref| with O_ref the first kernel's that ran on the shape.\n"
    "Inputs are normal, rounded to the dtype; 4 input sets are repeated\n"
    "over the B*H heads (each head has its own device memory).  A kernel\n"
    "is skipped, with the reason, on a shape it does not take or where it\n"
    "would not fit in free device memory (the naive baseline's S and P).\n"
    "One fp32 head: --tokens 1 --heads 1 --dims 64 --dtypes fp32\n"
    "--masks none --kernels %s.\n"
    "\n"
    "--ladder times the kernels in the order they were written on one\n"
    "shape (one value each of --sizes, --dims, --dtypes, --masks; by\n"
    "default fp16, d = 64, T = 4096, no mask), each row with its speed-up\n"
    "over the rung below that ran and what that rung changes.\n"
    "--ladder --backward does so for the backward pass: naive (P, dP and\n"
    "dS through HBM), teaching, fast with dQ atomic, and fast with dQ\n"
    "ordered (its speed-up under 1 is the deterministic dQ's cost), each\n"
    "rung's gradients against the lowest rung's that ran.\n"
    "--backward times, for each shape, the forward and the backward pass\n"
    "of each kernel of --kernels that has\n"
    "one (by default %s, Br x Bc, dQ atomic as FlashAttention 2):\n"
    "the backward's FLOPs are 2.5 times the forward's (five products per\n"
    "tile against two), so a kernel as good backward as forward takes\n"
    "2.5 times as long.\n"
    "\n"
    "--decode times the %s kernel on the decoding shapes: one query\n"
    "row a head, batch 1 and 8, H = 32 query heads (--heads) on H and on 8\n"
    "K/V heads, Tk in --sizes (default 4096, 32768, 131072), d = 128,\n"
    "--dtypes (default fp16, bf16).  Each row: the median time, the key\n"
    "ranges the kernel chose, the bytes of K and V it reads (2 B G Tk d\n"
    "2), the bandwidth that makes, against the H200's HBM peak of 4.8 TB/s\n"
    "(decoding reads every key and value once and does a few flops a\n"
    "byte: bandwidth is its limit), and O against the double reference.\n"
    "K and V smaller than 256 MB are copied and the runs cycle through the\n"
    "copies, so they come from HBM, not from the 60 MB L2.\n"
    "Exits 3 when built without CUDA, 4 without a usable CUDA driver, 5\n"
    "without a CUDA device.\n"
    "\n";

/* The help's kernel names, from the table's bench flags. */
static void
bench_gpu_help(void)
{
	const struct gpu_kernel *fa1 = bench_gpu_flagged(GPU_BENCH_FA1);
	const struct gpu_kernel *dec = bench_gpu_flagged(GPU_BENCH_DECODE);
	char def[128], bwd[128], capped[128], one[128];
	size_t at = 0;
	int i;

	bench_gpu_names(GPU_BENCH_DEFAULT, 0, ",", def, sizeof def);
	bench_gpu_names(GPU_BENCH_DEFAULT, 1, ",", bwd, sizeof bwd);
	snprintf(bench_gpu_help_backward, sizeof bench_gpu_help_backward,
	    "the forward and backward pass of each kernel with one (default "
	    "%s), dQ atomic", bwd);
	snprintf(bench_gpu_help_decode, sizeof bench_gpu_help_decode,
	    "the %s kernel on decoding shapes: one query row a head, batch 1 "
	    "and 8, H query heads on H and 8 K/V heads, Tk of --sizes (default "
	    "4096,32768,131072), d = 128: time and HBM bandwidth",
	    dec != NULL ? dec->name : "(no decode)");
	snprintf(bench_gpu_help_kernels, sizeof bench_gpu_help_kernels,
	    "of the kernels (gpu --list-kernels) and %s (default %s; %s: the %s "
	    "kernel in the fa1 order)", BENCH_GPU_FA1, def, BENCH_GPU_FA1,
	    fa1 != NULL ? fa1->name : "(none)");
	capped[0] = '\0';
	for (i = 0; gpu_kernels[i] != NULL && at < sizeof capped; i++)
		if (gpu_kernels[i]->bench_repeat > 0)
			at += (size_t)snprintf(capped + at, sizeof capped - at,
			    "%s%s %d", at > 0 ? ", " : "", gpu_kernels[i]->name,
			    gpu_kernels[i]->bench_repeat);
	snprintf(bench_gpu_help_repeat, sizeof bench_gpu_help_repeat,
	    "timed runs after a warm-up (default 20%s%s)", at > 0 ?
	    "; at most: " : "", capped);
	bench_gpu_names(GPU_BENCH_DEFAULT, 0, ", ", def, sizeof def);
	bench_gpu_names(GPU_BENCH_DEFAULT, 1, ", ", bwd, sizeof bwd);
	snprintf(one, sizeof one, "%s%s%s", fa1 != NULL ? fa1->name : "",
	    fa1 != NULL ? "," : "", BENCH_GPU_FA1);
	snprintf(bench_gpu_usage, sizeof bench_gpu_usage, bench_gpu_usage_fmt,
	    def, one, bwd, dec != NULL ? dec->name : "(no decode)");
}

/* ---- the shapes ---- */

static void
bench_gpu_free(struct bench_gpu_shape *bs)
{
	int i;

	for (i = 0; i < bs->ninputs; i++) {
		problem_free(&bs->inputs[i]);
		free(bs->douts[i]);
		bs->douts[i] = NULL;
	}
	free(bs->ps);
	bs->ps = NULL;
	bs->ninputs = 0;
}

/* The inputs of one (dtype, d, T): problem b shares input set b % 4;
 * with douts, each set's dO too. */
static int
bench_gpu_build(struct bench_gpu_shape *bs, long tokens, long heads,
    int douts, char *err, size_t errlen)
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
	for (i = 0; i < BENCH_GPU_INPUTS && i < bs->n; i++) {
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
		if (douts && problem_grad_output(&spec, &bs->inputs[i],
		    &bs->douts[i], err, errlen) != 0)
			return -1;
	}
	bs->ps = util_calloc((size_t)bs->n, sizeof *bs->ps, "problems", err,
	    errlen);
	return bs->ps != NULL ? 0 : -1;
}

/* The shallow copies for one mask. */
static void
bench_gpu_mask(struct bench_gpu_shape *bs, int causal)
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

/* ---- the rows ---- */

/* The row's leading columns: the shape. */
static void
bench_gpu_shape_cols(const struct bench_gpu_shape *bs)
{
	char bh[32];

	snprintf(bh, sizeof bh, "%d x %d", bs->batch, bs->heads);
	printf("%-5s %4d %6d %9s %-6s ", dtype_name(bs->dtype), bs->d, bs->t,
	    bh, bs->causal ? "causal" : "none");
}

/* One row; ref NULL marks the reference itself. */
static void
bench_gpu_row(const struct bench_gpu_shape *bs, const char *label,
    const struct gpu_result *r, const struct gpu_result *ref)
{
	char b1[32], diff[32];

	if (ref == NULL)
		snprintf(diff, sizeof diff, "ref");
	else
		snprintf(diff, sizeof diff, "%.2g", gpu_result_diff(r, ref,
		    (size_t)bs->n * bs->t * bs->d));
	bench_gpu_shape_cols(bs);
	printf("%-9s %10.3f %9.1f %12s %10s\n", label, r->ms,
	    bs->flops / (r->ms * 1e-3) / 1e12,
	    util_bytes(r->device_bytes, b1, sizeof b1), diff);
	fflush(stdout);
}

static void
bench_gpu_skip(const struct bench_gpu_shape *bs, const char *label,
    const char *why)
{
	bench_gpu_shape_cols(bs);
	printf("%-9s skipped: %s\n", label, why);
	fflush(stdout);
}

/* --save: dir/<dtype>_d<d>_T<T>_<mask>_<name>.npy, each whole. */
static int
bench_gpu_save(const struct bench_gpu_shape *bs, const char *dir,
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

/*
 * Kernel k (in the given order) on one shape: a row, or a skipped row
 * with the reason.  0 when it ran (res filled), -1 when skipped.
 */
static int
bench_gpu_kernel(const struct bench_gpu_shape *bs,
    const struct bench_gpu_args *a, const struct gpu_kernel *k,
    enum schedule_order order, const char *label,
    const struct gpu_result *ref, struct gpu_result *res)
{
	struct tiling t = { (int)a->br, (int)a->bc, order };
	char why[512];

	if (gpu_time(k, bs->ps, bs->n, &t, (int)a->common.repeat, res, why,
	    sizeof why) != 0) {
		bench_gpu_skip(bs, label, why);
		return -1;
	}
	bench_gpu_row(bs, label, res, ref);
	return 0;
}

/* A row of the table: a kernel in a loop order, under a label. */
struct bench_gpu_rowdef {
	const struct gpu_kernel *k;
	enum schedule_order order;
	const char *label;
};

/* The rows --kernels asks for, in the table's order, fa1 after teaching;
 * returns how many. */
static int
bench_gpu_rows(const char *kernels, struct bench_gpu_rowdef *rows, int max)
{
	const struct gpu_kernel *k;
	int i, n = 0;

	for (i = 0; gpu_kernels[i] != NULL && n + 2 <= max; i++) {
		k = gpu_kernels[i];
		if (bench_gpu_list_has(kernels, k->name)) {
			rows[n].k = k;
			rows[n].order = ORDER_FA2;
			rows[n++].label = k->name;
		}
		if ((k->bench & GPU_BENCH_FA1) &&
		    bench_gpu_list_has(kernels, BENCH_GPU_FA1)) {
			rows[n].k = k;
			rows[n].order = ORDER_FA1;
			rows[n++].label = BENCH_GPU_FA1;
		}
	}
	return n;
}

/* Every row asked for on one shape; the first that runs is the others'
 * reference, the last the one --save writes. */
static int
bench_gpu_one(struct bench_gpu_shape *bs, const struct bench_gpu_args *a,
    char *err, size_t errlen)
{
	struct bench_gpu_rowdef rows[16];
	struct gpu_result ref, last, cur;
	int r, n, have_ref = 0, have_last = 0, rc = 0;

	memset(&ref, 0, sizeof ref);
	memset(&last, 0, sizeof last);
	n = bench_gpu_rows(a->kernels, rows, 16);
	for (r = 0; r < n; r++) {
		if (bench_gpu_kernel(bs, a, rows[r].k, rows[r].order,
		    rows[r].label, have_ref ? &ref : NULL, &cur) != 0)
			continue;
		if (!have_ref) {
			ref = cur;
			have_ref = 1;
		} else {
			gpu_result_free(&last);
			last = cur;
			have_last = 1;
		}
	}
	if (a->save != NULL && bench_gpu_save(bs, a->save, have_last ? &last :
	    have_ref ? &ref : NULL, err, errlen) != 0)
		rc = -1;
	gpu_result_free(&ref);
	gpu_result_free(&last);
	return rc;
}

/* The row of one kernel's forward and backward. */
static void
bench_gpu_bwd_row(const struct bench_gpu_shape *bs, const char *label,
    double fwd_ms, double bwd_ms)
{
	bench_gpu_shape_cols(bs);
	printf("%-9s %10.3f %9.2f %10.3f %9.2f %8.2f\n", label, fwd_ms,
	    bs->flops / (fwd_ms * 1e-3) / 1e12, bwd_ms,
	    2.5 * bs->flops / (bwd_ms * 1e-3) / 1e12, bwd_ms / fwd_ms);
	fflush(stdout);
}

/*
 * --backward on one shape: each kernel of --kernels with a backward pass,
 * its forward timed, then its backward (dQ atomic) timed on that
 * forward's O and lse and the input sets' dO.
 */
static int
bench_gpu_bwd_one(const struct bench_gpu_shape *bs,
    const struct bench_gpu_args *a, char *err, size_t errlen)
{
	const size_t per = (size_t)bs->t * bs->d;
	const struct gpu_kernel *k;
	struct gpu_bwd_inputs in;
	struct gpu_result fwd;
	struct gpu_grads g;
	struct tiling t;
	float *dout;
	char why[512];
	int i, b, repeat;

	dout = util_calloc((size_t)bs->n * per, sizeof *dout, "dO", err, errlen);
	if (dout == NULL)
		return -1;
	for (b = 0; b < bs->n; b++)
		memcpy(dout + b * per, bs->douts[b % bs->ninputs],
		    per * sizeof *dout);
	for (i = 0; gpu_kernels[i] != NULL; i++) {
		k = gpu_kernels[i];
		if (k->backward == NULL || !bench_gpu_list_has(a->kernels,
		    k->name))
			continue;
		t.br = (int)a->br;
		t.bc = (int)a->bc;
		t.order = ORDER_FA2;
		repeat = (int)a->common.repeat;
		if (k->bench_repeat > 0 && repeat > k->bench_repeat)
			repeat = k->bench_repeat;
		if (gpu_backward_check(k, &bs->ps[0], BWD_BUG_NONE, why,
		    sizeof why) != 0 || gpu_time(k, bs->ps, bs->n, &t, repeat,
		    &fwd, why, sizeof why) != 0) {
			bench_gpu_skip(bs, k->name, why);
			continue;
		}
		in.o = fwd.o;
		in.lse = fwd.lse;
		in.m = NULL;
		in.dout = dout;
		if (gpu_backward_run(k, bs->ps, bs->n, &t, &in, BWD_BUG_NONE,
		    GPU_DQ_ATOMIC, 0, repeat, &g, why, sizeof why) != 0)
			bench_gpu_skip(bs, k->name, why);
		else
			bench_gpu_bwd_row(bs, k->name, fwd.ms, g.ms);
		gpu_grads_free(&g);
		gpu_result_free(&fwd);
	}
	free(dout);
	return 0;
}

/* Every size and mask at one dtype and d (in bs). */
static int
bench_gpu_sizes(struct bench_gpu_shape *bs, const struct bench_gpu_args *a,
    char *err, size_t errlen)
{
	const char *ct, *cm;
	char item[32];

	for (ct = a->sizes; *ct != '\0';) {
		ct = bench_gpu_list_next(ct, item, sizeof item);
		bs->t = atoi(item);
		if (bs->t < 1 || bs->t > 1000000)
			return util_error(err, errlen, "--sizes: %s is not from 1 "
			    "to 1000000", item);
		if (bench_gpu_build(bs, a->tokens, a->common.heads, a->backward,
		    err, errlen) != 0)
			return -1;
		for (cm = a->masks; *cm != '\0';) {
			cm = bench_gpu_list_next(cm, item, sizeof item);
			bench_gpu_mask(bs, strcmp(item, "causal") == 0);
			if ((a->backward ? bench_gpu_bwd_one(bs, a, err, errlen) :
			    bench_gpu_one(bs, a, err, errlen)) != 0)
				return -1;
		}
		bench_gpu_free(bs);
	}
	return 0;
}

/* "naive, teaching": the kernels timed fewer times than --repeat asks. */
static void
bench_gpu_capped(long repeat, char *buf, size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; gpu_kernels[i] != NULL && at < len; i++)
		if (gpu_kernels[i]->bench_repeat > 0 &&
		    gpu_kernels[i]->bench_repeat < repeat)
			at += (size_t)snprintf(buf + at, len - at, "%s%s %d",
			    at > 0 ? ", " : "", gpu_kernels[i]->name,
			    gpu_kernels[i]->bench_repeat);
}

/* A list that must name one item for --ladder. */
static int
bench_gpu_one_item(const char *name, const char *list, char *err,
    size_t errlen)
{
	if (strchr(list, ',') != NULL)
		return util_error(err, errlen, "--ladder times one shape: --%s "
		    "takes one value, not '%s'", name, list);
	return 0;
}

/* --ladder: the rungs on the one shape the lists name (one item each:
 * bench_gpu_one_item). */
static int
bench_gpu_ladder(struct bench_gpu_shape *bs, const struct bench_gpu_args *a,
    const char *dev, char *err, size_t errlen)
{
	struct gpu_ladder_rung rungs[GPU_LADDER_RUNGS];
	const struct gpu_ladder_rung *r;
	const struct tiling any = { (int)a->br, (int)a->bc, ORDER_FA2 };
	char b1[32], tiles[32], speed[32], capped[128];
	int i;

	dtype_parse(a->dtypes, &bs->dtype);
	bs->d = atoi(a->dims);
	bs->t = atoi(a->sizes);
	if (bs->t < 1 || bs->t > 1000000)
		return util_error(err, errlen, "--sizes: %s is not from 1 to "
		    "1000000", a->sizes);
	if (bench_gpu_build(bs, a->tokens, a->common.heads, 0, err,
	    errlen) != 0)
		return -1;
	bench_gpu_mask(bs, strcmp(a->masks, "causal") == 0);
	if (gpu_ladder(bs->ps, bs->n, &any, (int)a->common.repeat, rungs, err,
	    errlen) != 0)
		return -1;
	printf("The kernel ladder: one shape, the kernels in the order they "
	    "were written.\n");
	printf("GPU: %s; %s, d = %d, T = Tq = Tk = %d, B x H = %d x %d, %s; "
	    "normal inputs\n", dev, dtype_name(bs->dtype), bs->d, bs->t,
	    bs->batch, bs->heads, bs->causal ? "causal" : "no mask");
	bench_gpu_capped(a->common.repeat, capped, sizeof capped);
	printf("kernel time only (CUDA events, back to back), median of %ld "
	    "runs after a warm-up%s%s%s;\nTFLOP/s counts 4 B H T T d%s; "
	    "speed-up: the time of the rung below that ran over this one's;\n"
	    "O vs ref: max |O - O_ref| / max |O_ref|, O_ref the lowest rung's "
	    "that ran\n", a->common.repeat, capped[0] != '\0' ? " (" : "",
	    capped, capped[0] != '\0' ? " at most)" : "",
	    bs->causal ? ", halved for causal" : "");
	printf("%-9s %-8s %10s %9s %11s %9s %9s  %s\n", "rung", "tiles",
	    "time (ms)", "TFLOP/s", "device mem", "speed-up", "O vs ref",
	    "what it changes");
	for (i = 0; i < GPU_LADDER_RUNGS; i++) {
		r = &rungs[i];
		if (!r->ran) {
			printf("%-9s skipped: %s\n", r->kernel->name, r->why);
			printf("%-9s %s\n", "", r->change);
			continue;
		}
		gpu_ladder_cells(r, tiles, sizeof tiles, speed, sizeof speed);
		printf("%-9s %-8s %10.3f %9.2f %11s %9s %9.2g  %s\n",
		    r->kernel->name, tiles, r->ms, r->tflops,
		    util_bytes(r->device_bytes, b1, sizeof b1), speed, r->o_diff,
		    r->change);
	}
	for (i = GPU_LADDER_RUNGS - 1; i > 0 && !rungs[i].ran; i--)
		;
	if (i > 0 && rungs[0].ran)
		printf("top rung (%s) against the bottom (%s): %.0fx\n",
		    rungs[i].kernel->name, rungs[0].kernel->name,
		    rungs[0].ms / rungs[i].ms);
	return 0;
}

/*
 * --ladder --backward: the backward's rungs (gpu_ladder_backward) on the
 * one shape the lists name, each on its own forward's O and lse and the
 * input sets' dO, as --backward times them.
 */
static int
bench_gpu_ladder_bwd(struct bench_gpu_shape *bs,
    const struct bench_gpu_args *a, const char *dev, char *err,
    size_t errlen)
{
	struct gpu_ladder_rung rungs[GPU_LADDER_BWD_RUNGS];
	const struct gpu_ladder_rung *r;
	const struct tiling any = { (int)a->br, (int)a->bc, ORDER_FA2 };
	char b1[32], tiles[32], speed[32], capped[128];
	size_t per;
	float *dout;
	int i, b, rc;

	dtype_parse(a->dtypes, &bs->dtype);
	bs->d = atoi(a->dims);
	bs->t = atoi(a->sizes);
	if (bs->t < 1 || bs->t > 1000000)
		return util_error(err, errlen, "--sizes: %s is not from 1 to "
		    "1000000", a->sizes);
	if (bench_gpu_build(bs, a->tokens, a->common.heads, 1, err,
	    errlen) != 0)
		return -1;
	bench_gpu_mask(bs, strcmp(a->masks, "causal") == 0);
	per = (size_t)bs->t * bs->d;
	dout = util_calloc((size_t)bs->n * per, sizeof *dout, "dO", err, errlen);
	if (dout == NULL)
		return -1;
	for (b = 0; b < bs->n; b++)
		memcpy(dout + b * per, bs->douts[b % bs->ninputs],
		    per * sizeof *dout);
	rc = gpu_ladder_backward(bs->ps, bs->n, dout, &any,
	    (int)a->common.repeat, rungs, err, errlen);
	free(dout);
	if (rc != 0)
		return -1;
	printf("The backward's ladder: one shape, the backward kernels in the "
	    "order they were written.\n");
	printf("GPU: %s; %s, d = %d, T = Tq = Tk = %d, B x H = %d x %d, %s; "
	    "normal inputs and dO\n", dev, dtype_name(bs->dtype), bs->d, bs->t,
	    bs->batch, bs->heads, bs->causal ? "causal" : "no mask");
	bench_gpu_capped(a->common.repeat, capped, sizeof capped);
	printf("backward kernel time only (CUDA events, each run alone), "
	    "median of %ld runs after the first%s%s%s,\non the rung's own "
	    "forward's O and lse; TFLOP/s counts 10 B H T T d (2.5 times the "
	    "forward's)%s;\nspeed-up: the time of the rung below that ran over "
	    "this one's (under 1: slower);\ngrads vs ref: the largest of max "
	    "|g - g_ref| / max |g_ref| over dQ, dK, dV,\ng_ref the lowest "
	    "rung's that ran; device mem: what the backward held (-: not "
	    "counted)\n",
	    a->common.repeat, capped[0] != '\0' ? " (" : "", capped,
	    capped[0] != '\0' ? " at most)" : "",
	    bs->causal ? ", halved for causal" : "");
	printf("%-13s %-8s %10s %9s %11s %9s %9s  %s\n", "rung", "tiles",
	    "time (ms)", "TFLOP/s", "device mem", "speed-up", "grads",
	    "what it changes");
	for (i = 0; i < GPU_LADDER_BWD_RUNGS; i++) {
		r = &rungs[i];
		if (!r->ran) {
			printf("%-13s skipped: %s\n", gpu_ladder_backward_name(i),
			    r->why);
			printf("%-13s %s\n", "", r->change);
			continue;
		}
		gpu_ladder_cells(r, tiles, sizeof tiles, speed, sizeof speed);
		printf("%-13s %-8s %10.3f %9.2f %11s %9s %9.2g  %s\n",
		    gpu_ladder_backward_name(i), tiles, r->ms, r->tflops,
		    r->device_bytes > 0 ? util_bytes(r->device_bytes, b1,
		    sizeof b1) : "-", speed, r->o_diff, r->change);
	}
	if (rungs[2].ran && rungs[3].ran && rungs[3].speedup > 0)
		printf("the deterministic dQ (ordered) costs %.2fx the atomic "
		    "one's time\n", 1 / rungs[3].speedup);
	return 0;
}

/* ---- --decode ---- */

/* The decoding shapes besides Tk and the dtype. */
static const int bench_gpu_decode_batches[] = { 1, 8 };
#define BENCH_GPU_DECODE_KV 8	/* the grouped K/V heads, beside H of them */
#define BENCH_GPU_HBM_PEAK 4.8e12	/* the H200's HBM3e, bytes a second */

/* The double reference of every head of p (O (H, 1, d), head after head). */
static double *
bench_gpu_decode_ref(const struct problem *p, char *err, size_t errlen)
{
	const size_t no = (size_t)p->tq * p->dv;
	struct problem one;
	double *ref, *lse;
	int h;

	ref = util_calloc(no * p->heads, sizeof *ref, "reference", err, errlen);
	lse = util_calloc((size_t)p->tq, sizeof *lse, "reference", err, errlen);
	for (h = 0; ref != NULL && lse != NULL && h < p->heads; h++) {
		problem_head(p, h, &one);
		if (reference_attention(&one, ref + h * no, lse, err, errlen) != 0)
			break;
	}
	free(lse);
	if (ref != NULL && (lse == NULL || h < p->heads)) {
		free(ref);
		ref = NULL;
	}
	return ref;
}

/* max |O - ref| / max |ref| over every batch entry (all share p's inputs). */
static double
bench_gpu_decode_err(const struct gpu_result *r, const double *ref, size_t n)
{
	double diff = 0, rmax = 0;
	size_t i;
	int b;

	for (i = 0; i < n; i++)
		rmax = fmax(rmax, fabs(ref[i]));
	for (b = 0; b < r->n; b++)
		for (i = 0; i < n; i++)
			diff = fmax(diff, fabs((double)r->o[b * n + i] - ref[i]));
	return rmax > 0 ? diff / rmax : diff;
}

/* One (dtype, G, Tk): its problem, then a row per batch size. */
static int
bench_gpu_decode_shape(const struct bench_gpu_args *a, enum dtype dt, int g,
    int tk, char *err, size_t errlen)
{
	const struct gpu_kernel *k = bench_gpu_flagged(GPU_BENCH_DECODE);
	struct problem_spec spec;
	struct problem p, ps[8];
	struct gpu_result res;
	struct tiling t = { 64, 64, ORDER_FA2 };
	double *ref, bytes;
	char why[512], mb[32];
	int i, b, bi;

	problem_spec_init(&spec);
	spec.tq = 1;
	spec.tk = tk;
	spec.d = spec.dv = 128;
	spec.heads = (int)a->common.heads;
	spec.kv_heads = g;
	/* uniform: drawn many times faster than normal, and the time of a
	 * decode does not depend on the values */
	spec.input = INPUTS_UNIFORM;
	spec.dtype = dt;
	spec.seed = 1;
	if (problem_build(&spec, &p, err, errlen) != 0)
		return -1;
	ref = bench_gpu_decode_ref(&p, err, errlen);
	if (ref == NULL) {
		problem_free(&p);
		return -1;
	}
	for (bi = 0; bi < 2; bi++) {
		b = bench_gpu_decode_batches[bi];
		for (i = 0; i < b; i++)
			ps[i] = p;
		bytes = 2.0 * b * g * (double)tk * 128 * 2;
		snprintf(mb, sizeof mb, "%.0f", bytes / 1e6);
		printf("%-5s %2d %3d %3d %7d ", dtype_name(dt), b, spec.heads, g, tk);
		if (gpu_time(k, ps, b, &t, (int)a->common.repeat, &res, why,
		    sizeof why) != 0) {
			printf("skipped: %s\n", why);
			continue;
		}
		printf("%10.4f %6d %9s %7.2f %6.0f%% %9.2g\n", res.ms, res.splits, mb,
		    bytes / (res.ms * 1e-3) / 1e12,
		    100.0 * bytes / (res.ms * 1e-3) / BENCH_GPU_HBM_PEAK,
		    bench_gpu_decode_err(&res, ref, (size_t)spec.heads * 128));
		fflush(stdout);
		gpu_result_free(&res);
	}
	free(ref);
	problem_free(&p);
	return 0;
}

/* --decode: every dtype, G in H and 8, Tk in --sizes. */
static int
bench_gpu_decode(const struct bench_gpu_args *a, const char *dev, char *err,
    size_t errlen)
{
	const int kv[2] = { (int)a->common.heads, BENCH_GPU_DECODE_KV };
	const char *cd, *ct;
	char item[32];
	enum dtype dt;
	int g, tk;

	printf("GPU: %s; the decode kernel on decoding shapes: one query row a "
	    "head, d = 128, inputs uniform in [-1, 1);\n", dev);
	printf("median of %ld runs back to back after a warm-up (timing.h), K "
	    "and V from HBM (copies cycled below 256 MB);\n", a->common.repeat);
	printf("K+V: the bytes of K and V read, 2 B G Tk d 2; TB/s: those bytes "
	    "a second, %% against the H200's HBM peak of 4.8 TB/s;\n");
	printf("ranges: the key ranges the kernel chose; O err: max |O - O_ref| "
	    "/ max |O_ref|, O_ref in double\n");
	printf("%-5s %2s %3s %3s %7s %10s %6s %9s %7s %7s %9s\n", "dtype", "B",
	    "H", "G", "Tk", "time (ms)", "ranges", "K+V (MB)", "TB/s", "of 4.8",
	    "O err");
	for (cd = a->dtypes; *cd != '\0';) {
		cd = bench_gpu_list_next(cd, item, sizeof item);
		dtype_parse(item, &dt);
		for (g = 0; g < 2; g++) {
			if (g == 1 && (kv[1] >= kv[0] || kv[0] % kv[1] != 0))
				continue;
			for (ct = a->sizes; *ct != '\0';) {
				ct = bench_gpu_list_next(ct, item, sizeof item);
				tk = atoi(item);
				if (tk < 1 || tk > 1000000)
					return util_error(err, errlen, "--sizes: %s is not "
					    "from 1 to 1000000", item);
				if (bench_gpu_decode_shape(a, dt, kv[g], tk, err,
				    errlen) != 0)
					return -1;
			}
		}
	}
	return 0;
}

int
cmd_bench_gpu(int argc, char **argv)
{
	struct bench_gpu_shape bs;
	struct bench_gpu_args a;
	struct options o;
	const char *cd, *cdim;
	char err[512], dev[64], item[32], capped[128], kernels[256];
	int rc, i;

	memset(&bs, 0, sizeof bs);
	memset(&a, 0, sizeof a);
	gpucmd_args_init(&a.common, 20);
	a.common.heads = 16;
	a.tokens = 32768;
	a.br = 64;
	a.bc = 64;
	bench_gpu_help();
	rc = cmd_parse("bench --gpu", bench_gpu_usage, argc, argv, 0,
	    bench_gpu_entries, &a, &o);
	if (rc >= 0)
		goto done;
	if (a.cpu) {
		fprintf(stderr, "flashstep bench: choose --cpu or --gpu, not both\n");
		rc = CMD_USAGE;
		goto done;
	}
	if (a.decode && (a.ladder || a.backward || a.kernels != NULL ||
	    a.save != NULL || a.dims != NULL || a.masks != NULL ||
	    options_given(&o, "tokens") || options_given(&o, "br") ||
	    options_given(&o, "bc"))) {
		snprintf(err, sizeof err, "--decode times its own shapes (one "
		    "query row, d = 128, no mask, batch 1 and 8): it takes "
		    "--sizes (Tk), --dtypes, --heads and --repeat only");
		goto fail;
	}
	if (a.ladder && (a.kernels != NULL || a.save != NULL)) {
		snprintf(err, sizeof err, "--ladder's rungs are its own: it does "
		    "not go with %s", a.kernels != NULL ? "--kernels" : "--save");
		goto fail;
	}
	if (a.backward && a.save != NULL) {
		snprintf(err, sizeof err, "--save goes with the forward's table, "
		    "not --backward");
		goto fail;
	}
	/* The defaults: the table's shapes, the ladder's one, or the
	 * decoding shapes. */
	if (a.decode && a.sizes == NULL)
		a.sizes = "4096,32768,131072";
	if (a.decode && !options_given(&o, "heads"))
		a.common.heads = 32;
	if (a.sizes == NULL)
		a.sizes = a.ladder ? "4096" : "1024,4096,16384";
	if (a.dims == NULL)
		a.dims = a.ladder ? "64" : "64,128";
	if (a.dtypes == NULL)
		a.dtypes = a.ladder ? "fp16" : "fp16,bf16";
	if (a.masks == NULL)
		a.masks = a.ladder ? "none" : "none,causal";
	if (a.kernels == NULL) {
		bench_gpu_names(GPU_BENCH_DEFAULT, a.backward, ",", kernels,
		    sizeof kernels);
		a.kernels = kernels;
	}
	for (i = 0; a.backward && gpu_kernels[i] != NULL; i++)
		if (gpu_kernels[i]->backward != NULL &&
		    bench_gpu_list_has(a.kernels, gpu_kernels[i]->name))
			break;
	if (a.backward && gpu_kernels[i] == NULL) {
		snprintf(err, sizeof err, "--backward: no kernel of '%s' has a "
		    "backward pass (flashstep gpu --list-kernels)", a.kernels);
		goto fail;
	}
	if (a.ladder && (bench_gpu_one_item("sizes", a.sizes, err,
	    sizeof err) != 0 || bench_gpu_one_item("dims", a.dims, err,
	    sizeof err) != 0 || bench_gpu_one_item("dtypes", a.dtypes, err,
	    sizeof err) != 0 || bench_gpu_one_item("masks", a.masks, err,
	    sizeof err) != 0))
		goto fail;
	rc = gpucmd_device("bench --gpu", dev, sizeof dev);
	if (rc != CMD_OK)
		goto done;
	if (a.ladder || a.decode) {
		if ((a.ladder && a.backward ? bench_gpu_ladder_bwd(&bs, &a, dev,
		    err, sizeof err) : a.ladder ? bench_gpu_ladder(&bs, &a, dev,
		    err, sizeof err) :
		    bench_gpu_decode(&a, dev, err, sizeof err)) != 0)
			goto fail;
		rc = CMD_OK;
		goto done;
	}

	bench_gpu_capped(a.common.repeat, capped, sizeof capped);
	printf("GPU: %s; normal inputs; B = %ld / T (at least 1), H = %ld; "
	    "Br = %ld, Bc = %ld, fa2 for the kernels that take any tiling;\n",
	    dev, a.tokens, a.common.heads, a.br, a.bc);
	printf("kernel time only (CUDA events, back to back), median of %ld "
	    "runs after a warm-up%s%s%s;\n", a.common.repeat,
	    capped[0] != '\0' ? " (" : "", capped,
	    capped[0] != '\0' ? " at most)" : "");
	if (a.backward) {
		printf("forward TFLOP/s counts 4 B H T T d, backward 10 B H T T d "
		    "(2.5 times), both halved for causal;\nthe backward runs on "
		    "the forward's O and lse with dQ atomic (each run timed "
		    "alone, the median after the first)\n");
		printf("%-5s %4s %6s %9s %-6s %-9s %10s %9s %10s %9s %8s\n",
		    "dtype", "d", "T", "B x H", "mask", "kernel", "fwd (ms)",
		    "TFLOP/s", "bwd (ms)", "TFLOP/s", "bwd/fwd");
	} else {
		printf("TFLOP/s counts 4 B H T T d, halved for causal; O vs ref: "
		    "max |O - O_ref| / max |O_ref|\n");
		printf("%-5s %4s %6s %9s %-6s %-9s %10s %9s %12s %10s\n", "dtype",
		    "d", "T", "B x H", "mask", "kernel", "time (ms)", "TFLOP/s",
		    "device mem", "O vs ref");
	}
	for (cd = a.dtypes; *cd != '\0';) {
		cd = bench_gpu_list_next(cd, item, sizeof item);
		dtype_parse(item, &bs.dtype);
		for (cdim = a.dims; *cdim != '\0';) {
			cdim = bench_gpu_list_next(cdim, item, sizeof item);
			bs.d = atoi(item);
			if (bench_gpu_sizes(&bs, &a, err, sizeof err) != 0)
				goto fail;
		}
	}
	rc = CMD_OK;
	goto done;
fail:
	fprintf(stderr, "flashstep bench --gpu: %s\n", err);
	rc = CMD_USAGE;
done:
	bench_gpu_free(&bs);
	options_free(&o);
	return rc;
}
