/*
 * kernel.c - the table of GPU kernels (kernel.h), and what follows from
 * an entry alone: finding it by name, refusing what it cannot take, its
 * tiling, and its description for --list-kernels.
 *
 * A new kernel is a new entry here (after declaring the functions its .cu
 * file defines), its .cu file in gpu/local.mk, its tests, and its words
 * in doc/flashstep.1 (kernel.h).
 */
#include "config.h"

#include "gpu.h"
#include "fast_bwd.h"
#include "teach_bwd.h"
#include "model/backward.h"
#include "model/combine.h"
#include "model/dtype.h"
#include "model/util.h"

#include <stdio.h>
#include <string.h>

/* In a build without CUDA the entries have no functions to call:
 * gpu_run() stops at gpu_available() before it would use one. */
#ifdef HAVE_CUDA
#define GPU_CUDA(fn) fn
#else
#define GPU_CUDA(fn) NULL
#endif
/* The same for code built for sm_90a alone, which needs an nvcc that
 * can target it (configure's HAVE_SM90A). */
#if defined(HAVE_CUDA) && defined(HAVE_SM90A)
#define GPU_SM90A(fn) fn
#else
#define GPU_SM90A(fn) NULL
#endif

#define BIT(x) (1u << (x))
#define ALL_DTYPES (BIT(DTYPE_FP32) | BIT(DTYPE_FP16) | BIT(DTYPE_BF16))
#define ALL_ORDERS (BIT(ORDER_FA2) | BIT(ORDER_FA1))
#define ALL_CONVENTIONS (BIT(CONV_UNNORMALIZED) | BIT(CONV_NORMALIZED))
#define ALL_BUGS ((1u << ONLINE_BUGS) - 1)
#define ALL_MERGE_BUGS ((1u << MERGE_BUGS) - 1)

/* Each kernel's functions, defined in its .cu file (kernels.h says what
 * a launch and a trace get). */
int naive_launch(const struct gpu_job *job, char *err, size_t errlen);
double naive_device_bytes(const struct problem *p, int n);
int naive_bwd_launch(const struct gpu_bwd_job *job, char *err,
    size_t errlen);
double naive_bwd_device_bytes(const struct problem *p, int n);
int teach_launch(const struct gpu_job *job, char *err, size_t errlen);
int teach_trace(const struct gpu_job *job, char *err, size_t errlen);
int teach_bwd_launch(const struct gpu_bwd_job *job, char *err,
    size_t errlen);
int fast_bwd_launch(const struct gpu_bwd_job *job, char *err,
    size_t errlen);
int teach_split_launch(const struct gpu_split_job *job, char *err,
    size_t errlen);
int decode_launch(const struct gpu_job *job, char *err, size_t errlen);
double decode_device_bytes(const struct problem *p, int n);
int tcrun_fast_launch(const struct gpu_job *job, char *err, size_t errlen);
int tcrun_fast_trace(const struct gpu_job *job, char *err, size_t errlen);
int tcrun_fast_tiling(int d, int br, int bc, struct tiling *t, char *err,
    size_t errlen);
void tcrun_fast_tilings(int d, char *buf, size_t len);
int tcrun_wgmma_launch(const struct gpu_job *job, char *err, size_t errlen);
int tcrun_wgmma_trace(const struct gpu_job *job, char *err, size_t errlen);
int tcrun_wgmma_tiling(int d, int br, int bc, struct tiling *t, char *err,
    size_t errlen);
void tcrun_wgmma_tilings(int d, char *buf, size_t len);

/* The naive kernel's backward (gpu/naive_bwd.cu): standard attention's
 * backward as autograd runs it, P, dP and dS (Tq x Tk) whole in device
 * memory, one thread per entry, float32 with P and dS read in the dtype.
 * Its sums over x are the simulator's bits and its sums over rows and
 * keys another order of the same terms, so the teaching backward's
 * bounds hold (naive_bwd.cu says why).  No bug modes, no trace. */
static const struct gpu_backward gpu_backward_naive = {
	.dtypes = ALL_DTYPES,
	.bugs = BIT(BWD_BUG_NONE),
	.caps = GPU_CAP_SCORES | GPU_CAP_CAUSAL | GPU_CAP_NO_TILES,
	.rtol = {
		[DTYPE_FP32] = TEACH_BWD_RTOL,
		[DTYPE_FP16] = TEACH_BWD_RTOL_FP16,
		[DTYPE_BF16] = TEACH_BWD_RTOL_BF16,
	},
	.launch = GPU_CUDA(naive_bwd_launch),
	.device_bytes = GPU_CUDA(naive_bwd_device_bytes),
};

static const struct gpu_kernel gpu_kernel_naive = {
	.name = "naive",
	.summary = "standard attention: S and P (Tq x Tk) in device memory, "
	    "float32 arithmetic; the baseline of bench --gpu",
	.dtypes = ALL_DTYPES,
	.orders = ALL_ORDERS,
	.conventions = ALL_CONVENTIONS,
	.bugs = BIT(BUG_NONE),
	.dims = NULL,
	.caps = GPU_CAP_SCORES | GPU_CAP_CAUSAL | GPU_CAP_ANY_SCALE |
	    GPU_CAP_NO_TILES,
	.arith = GPU_ARITH_OWN,
	.bench = GPU_BENCH_DEFAULT,
	.bench_repeat = 3,
	.launch = GPU_CUDA(naive_launch),
	.device_bytes = GPU_CUDA(naive_device_bytes),
	.backward = &gpu_backward_naive,
};

/* The teaching kernel's backward (gpu/teach_bwd.cu): the simulator's
 * backward in its order, every backward bug mode. */
static const struct gpu_backward gpu_backward_teaching = {
	.dtypes = ALL_DTYPES,
	.bugs = (1u << BACKWARD_BUGS) - 1,
	.caps = GPU_CAP_SCORES | GPU_CAP_CAUSAL | GPU_CAP_TRACE |
	    GPU_CAP_WINDOW | GPU_CAP_SOFTCAP | GPU_CAP_ALIBI | GPU_CAP_DROPOUT,
	.rtol = {
		[DTYPE_FP32] = TEACH_BWD_RTOL,
		[DTYPE_FP16] = TEACH_BWD_RTOL_FP16,
		[DTYPE_BF16] = TEACH_BWD_RTOL_BF16,
	},
	.launch = GPU_CUDA(teach_bwd_launch),
};

/* The teaching kernel's split-KV run (gpu/teach_split.cu): its tile step
 * per (row block, key range), every merge order, form and bug mode. */
static const struct gpu_split gpu_split_teaching = {
	.merge_bugs = ALL_MERGE_BUGS,
	.caps = GPU_CAP_HEADS,
	.launch = GPU_CUDA(teach_split_launch),
};

static const struct gpu_kernel gpu_kernel_teaching = {
	.name = "teaching",
	.summary = "the simulator's tiled loop in float32, in its order of "
	    "operations, every step traced",
	.dtypes = ALL_DTYPES,
	.orders = ALL_ORDERS,
	.conventions = ALL_CONVENTIONS,
	.bugs = ALL_BUGS,
	.dims = NULL,
	.caps = GPU_CAP_SCORES | GPU_CAP_CAUSAL | GPU_CAP_ANY_SCALE |
	    GPU_CAP_ANY_TILING | GPU_CAP_TRACE | GPU_CAP_MASKS |
	    GPU_CAP_VARLEN,
	.arith = GPU_ARITH_SIM_ORDER,
	.bench = GPU_BENCH_DEFAULT | GPU_BENCH_FA1,
	.bench_repeat = 3,
	.launch = GPU_CUDA(teach_launch),
	.trace = GPU_CUDA(teach_trace),
	.backward = &gpu_backward_teaching,
	.split = &gpu_split_teaching,
};

/* The head widths the tensor-core kernels are compiled for. */
static const int gpu_tc_dims[] = { 64, 128, 0 };
/* Their bug modes: no-rescale lives in the trace build (fast.h's
 * struct fast_trace), which then gives O and lse (tcrun.cu). */
#define GPU_TC_BUGS (BIT(BUG_NONE) | BIT(BUG_NO_RESCALE))
/* The rules of mask_rule.h their forwards take (gpu/tc_mask.cuh): not
 * dropout, and no mask bug modes. */
#define GPU_TC_MASKS (GPU_CAP_WINDOW | GPU_CAP_SOFTCAP | GPU_CAP_ALIBI)

/* The fast kernel's backward (gpu/fast_bwd.cu): FlashAttention 2's
 * backward on the tensor cores, its own tiles (64 query rows, 128 keys:
 * fast_bwd.h's FAST_BWD_TILE_BR, _BC, whatever the forward's tiling);
 * the rules its forward takes (GPU_TC_MASKS: a window, the cap, ALiBi),
 * on the simulator's row blocks of each key block; the bugs no-d and
 * no-scale are flags of the timed kernel; its trace build lays dK, dV
 * and the ordered dQ on the simulator's steps.  rtol is two units of the
 * dtype, the rounding of P and dS (as the teaching backward's);
 * gpucheck_bwd.c widens it by the tensor cores' delta (gpucheck.h), the
 * cap's and ALiBi's, and adds the slack of dP, D and the cap's factor
 * (it says why). */
static const struct gpu_backward gpu_backward_fast = {
	.dtypes = BIT(DTYPE_FP16) | BIT(DTYPE_BF16),
	.bugs = BIT(BWD_BUG_NONE) | BIT(BWD_BUG_NO_D) | BIT(BWD_BUG_NO_SCALE),
	.caps = GPU_CAP_CAUSAL | GPU_CAP_TRACE | GPU_TC_MASKS,
	.rtol = {
		[DTYPE_FP32] = 0,
		[DTYPE_FP16] = TEACH_BWD_RTOL_FP16,
		[DTYPE_BF16] = TEACH_BWD_RTOL_BF16,
	},
	.br = FAST_BWD_TILE_BR,
	.bc = FAST_BWD_TILE_BC,
	.launch = GPU_CUDA(fast_bwd_launch),
};

static const struct gpu_kernel gpu_kernel_fast = {
	.name = "fast",
	.summary = "FlashAttention-2's forward on the tensor cores (mma.sync), "
	    "float32 accumulation, its own tilings",
	.dtypes = BIT(DTYPE_FP16) | BIT(DTYPE_BF16),
	.orders = BIT(ORDER_FA2),
	.conventions = BIT(CONV_UNNORMALIZED),
	.bugs = GPU_TC_BUGS,
	.dims = gpu_tc_dims,
	.caps = GPU_CAP_CAUSAL | GPU_CAP_TRACE | GPU_TC_MASKS,
	.arith = GPU_ARITH_TENSOR_CORES,
	.bench = GPU_BENCH_DEFAULT,
	.bench_repeat = 0,
	.tiling = GPU_CUDA(tcrun_fast_tiling),
	.tilings = GPU_CUDA(tcrun_fast_tilings),
	.launch = GPU_CUDA(tcrun_fast_launch),
	.trace = GPU_CUDA(tcrun_fast_trace),
	.backward = &gpu_backward_fast,
};

static const struct gpu_kernel gpu_kernel_wgmma = {
	.name = "wgmma",
	.summary = "FlashAttention-3's forward for Hopper (sm_90a): wgmma, "
	    "TMA loads, a producer warpgroup and two consumers taking turns",
	.dtypes = BIT(DTYPE_FP16) | BIT(DTYPE_BF16) | BIT(DTYPE_FP8),
	.orders = BIT(ORDER_FA2),
	.conventions = BIT(CONV_UNNORMALIZED),
	.bugs = GPU_TC_BUGS,
	.dims = gpu_tc_dims,
	.fp8_d = 128,
	.caps = GPU_CAP_CAUSAL | GPU_CAP_TRACE | GPU_TC_MASKS | GPU_CAP_VARLEN,
	.arith = GPU_ARITH_TENSOR_CORES,
	.bench = GPU_BENCH_DEFAULT,
	.bench_repeat = 0,
	.cc = 90,
	.tiling = GPU_SM90A(tcrun_wgmma_tiling),
	.tilings = GPU_SM90A(tcrun_wgmma_tilings),
	.launch = GPU_SM90A(tcrun_wgmma_launch),
	.trace = GPU_SM90A(tcrun_wgmma_trace),
};

/* The head width the decoding kernel is built for (gpu/decode.h). */
static const int gpu_decode_dims[] = { 128, 0 };

static const struct gpu_kernel gpu_kernel_decode = {
	.name = "decode",
	.summary = "decoding: a few query rows against a long K/V cache, a "
	    "group's heads packed, split-KV of its own choosing, HBM-bound",
	.dtypes = BIT(DTYPE_FP16) | BIT(DTYPE_BF16),
	.orders = ALL_ORDERS,
	.conventions = ALL_CONVENTIONS,
	.bugs = BIT(BUG_NONE),
	.dims = gpu_decode_dims,
	.max_tq = 64,
	.caps = GPU_CAP_CAUSAL | GPU_CAP_NO_TILES | GPU_CAP_HEADS |
	    GPU_CAP_OWN_SPLITS | GPU_CAP_PAGED | GPU_CAP_VARLEN,
	.arith = GPU_ARITH_OWN,
	.bench = GPU_BENCH_DECODE,
	.bench_repeat = 0,
	.launch = GPU_CUDA(decode_launch),
	.device_bytes = GPU_CUDA(decode_device_bytes),
};

const struct gpu_kernel *const gpu_kernels[] = {
	&gpu_kernel_naive,
	&gpu_kernel_teaching,
	&gpu_kernel_fast,
	&gpu_kernel_wgmma,
	&gpu_kernel_decode,
	NULL,
};

const struct gpu_kernel *
gpu_kernel_find(const char *name)
{
	int i;

	for (i = 0; gpu_kernels[i] != NULL; i++)
		if (strcmp(gpu_kernels[i]->name, name) == 0)
			return gpu_kernels[i];
	return NULL;
}

/* What gpu_names asks of a kernel besides its caps. */
enum gpu_part { GPU_PART_ANY, GPU_PART_BACKWARD, GPU_PART_SPLIT };

/* "teaching, fast": the names of the kernels with all of caps, and a
 * backward pass or a split-KV run too when part asks for one. */
static void
gpu_names(unsigned caps, enum gpu_part part, char *buf, size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; gpu_kernels[i] != NULL && at < len; i++)
		if ((gpu_kernels[i]->caps & caps) == caps &&
		    (part != GPU_PART_BACKWARD ||
		    gpu_kernels[i]->backward != NULL) &&
		    (part != GPU_PART_SPLIT || gpu_kernels[i]->split != NULL))
			at += (size_t)snprintf(buf + at, len - at, "%s%s",
			    at > 0 ? ", " : "", gpu_kernels[i]->name);
}

const char *
gpu_kernel_names(void)
{
	static char names[256];

	if (names[0] == '\0')
		gpu_names(0, GPU_PART_ANY, names, sizeof names);
	return names;
}

int
gpu_varlen_check(const struct gpu_kernel *k, const char *part, char *err,
    size_t errlen)
{
	char takes[256];
	int backward = part[0] != '\0';

	if (!backward && (k->caps & GPU_CAP_VARLEN))
		return 0;
	if (backward)
		takes[0] = '\0';
	else
		gpu_names(GPU_CAP_VARLEN, GPU_PART_ANY, takes, sizeof takes);
	return util_error(err, errlen, "kernel %s does not take --seqlens%s "
	    "(a packed batch; kernels that do: %s); the simulator runs any "
	    "(flashstep run)", k->name, part, takes[0] != '\0' ? takes :
	    "none");
}

/*
 * Why this build cannot run k, or 0 when it has k's code: without CUDA
 * at all, or without code for k's one architecture.
 */
static int
gpu_kernel_absent(const struct gpu_kernel *k, char *err, size_t errlen)
{
	if (k->launch != NULL)
		return 0;
	if (!gpu_built())
		return util_error(err, errlen, "built without CUDA support");
	return util_error(err, errlen, "kernel %s is not in this build: its "
	    "code is for sm_%da alone, which this build's nvcc could not "
	    "target (configure with CUDA 12 or newer)", k->name, k->cc);
}

/* ---- words for the entries' masks ---- */

static const char *
gpu_dtype_word(int i)
{
	return dtype_name((enum dtype)i);
}

static const char *
gpu_order_word(int i)
{
	return schedule_order_name((enum schedule_order)i);
}

static const char *
gpu_convention_word(int i)
{
	return online_convention_name((enum online_convention)i);
}

static const char *
gpu_bug_word(int i)
{
	return online_bug_name((enum online_bug)i);
}

/* "fp16, bf16": the names of the bits of mask below n. */
static void
gpu_mask_words(unsigned mask, int n, const char *(*word)(int), char *buf,
    size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && at < len; i++)
		if (mask & BIT(i))
			at += (size_t)snprintf(buf + at, len - at, "%s%s",
			    at > 0 ? ", " : "", word(i));
}

/* "d = dv = 64, 128", or "any d and dv". */
static void
gpu_dims_words(const struct gpu_kernel *k, char *buf, size_t len)
{
	size_t at;
	int i;

	if (k->dims == NULL) {
		snprintf(buf, len, "any d and dv");
		return;
	}
	at = (size_t)snprintf(buf, len, "d = dv =");
	for (i = 0; k->dims[i] != 0 && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s %d",
		    i > 0 ? "," : "", k->dims[i]);
}

/* Its tilings at every d it takes: "d = 64: 128x64 (default), 64x64". */
static void
gpu_tilings_words(const struct gpu_kernel *k, char *buf, size_t len)
{
	char one[160];
	size_t at = 0;
	int i;

	if (k->caps & GPU_CAP_NO_TILES) {
		snprintf(buf, len, "none (Br and Bc are not used)");
		return;
	}
	if (k->caps & GPU_CAP_ANY_TILING) {
		snprintf(buf, len, "any Br x Bc (--br, --bc)");
		return;
	}
	if (k->tilings == NULL || k->dims == NULL) {
		gpu_kernel_absent(k, one, sizeof one);
		snprintf(buf, len, "its own (not known: %s)", one);
		return;
	}
	buf[0] = '\0';
	for (i = 0; k->dims[i] != 0 && at < len; i++) {
		k->tilings(k->dims[i], one, sizeof one);
		at += (size_t)snprintf(buf + at, len - at, "%sd = %d: %s",
		    i > 0 ? "; " : "", k->dims[i], one);
	}
}

/* Does k take head width d (and dv = d)? */
static int
gpu_kernel_takes_d(const struct gpu_kernel *k, int d)
{
	int i;

	if (k->dims == NULL)
		return 1;
	for (i = 0; k->dims[i] != 0; i++)
		if (d == k->dims[i])
			return 1;
	return 0;
}

/* The one message of every refusal. */
static int
gpu_refuse(const struct gpu_kernel *k, char *err, size_t errlen,
    const char *what, const char *takes)
{
	return util_error(err, errlen, "kernel %s does not take %s (it takes "
	    "%s; flashstep gpu --list-kernels)", k->name, what, takes);
}

/* H and G of a problem (a hand-made one may leave them 0: one head). */
static int
gpu_heads(const struct problem *p)
{
	return p->heads > 0 ? p->heads : 1;
}

static int
gpu_kv_heads(const struct problem *p)
{
	return p->kv_heads > 0 ? p->kv_heads : 1;
}

/* Query rows a head of p's longest sequence (a packed batch's Tq_b;
 * else Tq). */
static int
gpu_longest_tq(const struct problem *p)
{
	int b, most = 0;

	if (p->nseq <= 0)
		return p->tq;
	for (b = 0; b < p->nseq; b++)
		if (p->cu_q[b + 1] - p->cu_q[b] > most)
			most = p->cu_q[b + 1] - p->cu_q[b];
	return most;
}

/*
 * The masks and score modifiers (mask_rule.h) a kernel's caps take: one
 * refusal naming the option for each it does not.  part is "" or
 * " backward".
 */
static int
gpu_mask_takes(const struct gpu_kernel *k, unsigned caps,
    const struct problem *p, const struct online_rule *rule, const char *part,
    char *err, size_t errlen)
{
	static const struct {
		unsigned cap;
		const char *option;
	} need[] = {
		{ GPU_CAP_WINDOW, "--window" },
		{ GPU_CAP_SOFTCAP, "--softcap" },
		{ GPU_CAP_ALIBI, "--alibi/--alibi-slopes" },
		{ GPU_CAP_MASK_BUGS, "--mask-bug" },
		{ GPU_CAP_DROPOUT, "--dropout" },
	};
	const int on[] = {
		mask_rule_has(problem_mask(p, 0), MASK_WINDOW),
		mask_rule_has(p->mask, MASK_SOFTCAP),
		p->alibi != NULL,
		rule != NULL && rule->mask_bug != MASK_BUG_NONE,
		mask_rule_has(p->mask, MASK_DROPOUT),
	};
	char what[96], takes[160];
	size_t i, at;

	for (i = 0; i < sizeof need / sizeof need[0]; i++) {
		if (!on[i] || (caps & need[i].cap))
			continue;
		/* what it does take: "the causal mask, --window, ..." */
		at = (size_t)snprintf(takes, sizeof takes, "%s", caps &
		    GPU_CAP_CAUSAL ? "the causal mask" : "no mask");
		for (size_t t = 0; t < sizeof need / sizeof need[0]; t++)
			if ((caps & need[t].cap) && at < sizeof takes)
				at += (size_t)snprintf(takes + at, sizeof takes -
				    at, ", %s", need[t].option);
		snprintf(what, sizeof what, "%s%s", need[i].option, part);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	return 0;
}

/*
 * What gpu_kernel_check checks, with caps in place of the entry's own:
 * the split-KV run adds its caps to the entry's.
 */
static int
gpu_takes(const struct gpu_kernel *k, unsigned caps, const struct problem *p,
    const struct tiling *t, const struct online_rule *rule, unsigned flags,
    char *err, size_t errlen)
{
	char what[96], takes[256];
	struct tiling own;

	/* Before any device is probed. */
	if (p->nseq > 0 && gpu_varlen_check(k, "", err, errlen) != 0)
		return -1;
	/* A packed batch's pages come from one pool through a table a
	 * sequence (problem.h's seq_page0), which no kernel's glue lays. */
	if (p->nseq > 0 && p->paged.page_size > 0)
		return util_error(err, errlen, "kernel %s does not take "
		    "--page-size with --seqlens: a packed batch's pages run on "
		    "the simulator (flashstep run)", k->name);
	/* A packed batch's keep bits count heads per sequence (problem.h's
	 * seq_heads), which no kernel's generator does. */
	if (p->nseq > 0 && mask_rule_has(p->mask, MASK_DROPOUT))
		return util_error(err, errlen, "kernel %s does not take --dropout "
		    "with --seqlens: a packed batch counts dropout's heads per "
		    "sequence, which only the simulator draws (flashstep run)",
		    k->name);
	/* A paged cache (paged.h) only where the kernel reads K and V
	 * through the table, in pages no group of its keys crosses. */
	if (p->paged.page_size > 0 && !(caps & GPU_CAP_PAGED))
		return util_error(err, errlen, GPU_NO_PAGED_KERNEL, k->name);
	if (p->paged.page_size % GPU_PAGE_MULTIPLE != 0)
		return util_error(err, errlen, GPU_PAGE_SIZE_REFUSED, k->name,
		    p->paged.page_size);
	if (gpu_built() && gpu_kernel_absent(k, err, errlen) != 0)
		return -1;
	if (p->scores_mode && !(caps & GPU_CAP_SCORES))
		return gpu_refuse(k, err, errlen, "a scores problem",
		    "Q, K and V: it computes S itself");
	if (p->dtype == DTYPE_FP8 && !(k->dtypes & BIT(DTYPE_FP8)))
		return util_error(err, errlen, GPU_NO_FP8_KERNEL, k->name);
	if (p->dtype == DTYPE_FP8 && !p->scores_mode && p->d != k->fp8_d) {
		snprintf(what, sizeof what, "--dtype fp8 at d = %d", p->d);
		snprintf(takes, sizeof takes, "fp8 at d = %d alone", k->fp8_d);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if (!(k->dtypes & BIT(p->dtype))) {
		snprintf(what, sizeof what, "--dtype %s", dtype_name(p->dtype));
		gpu_mask_words(k->dtypes, 3, gpu_dtype_word, takes, sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if (!p->scores_mode && k->dims != NULL &&
	    (p->d != p->dv || !gpu_kernel_takes_d(k, p->d))) {
		snprintf(what, sizeof what, "d = %d, dv = %d", p->d, p->dv);
		gpu_dims_words(k, takes, sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if (k->max_tq > 0 && gpu_longest_tq(p) > k->max_tq) {
		snprintf(what, sizeof what, p->nseq > 0 ? "a sequence of %d query "
		    "rows" : "--tq %d", gpu_longest_tq(p));
		snprintf(takes, sizeof takes, "at most %d query rows a head",
		    k->max_tq);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if (gpu_heads(p) > 1 && !(caps & GPU_CAP_HEADS)) {
		snprintf(what, sizeof what, "%d query heads on %d K/V heads as "
		    "one problem", gpu_heads(p), gpu_kv_heads(p));
		return gpu_refuse(k, err, errlen, what, "one head a problem: "
		    "the commands run the heads apart");
	}
	if (p->causal && !(caps & GPU_CAP_CAUSAL))
		return gpu_refuse(k, err, errlen, "--causal", "no mask");
	if (gpu_mask_takes(k, caps, p, rule, "", err, errlen) != 0)
		return -1;
	if (!(p->scale > 0.0f) && !(caps & GPU_CAP_ANY_SCALE)) {
		snprintf(what, sizeof what, "--scale %g", (double)p->scale);
		return gpu_refuse(k, err, errlen, what, "a positive scale");
	}
	if (!(k->orders & BIT(t->order))) {
		snprintf(what, sizeof what, "--order %s",
		    schedule_order_name(t->order));
		gpu_mask_words(k->orders, 2, gpu_order_word, takes, sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if (!(k->conventions & BIT(rule->convention))) {
		snprintf(what, sizeof what, "--convention %s",
		    online_convention_name(rule->convention));
		gpu_mask_words(k->conventions, 2, gpu_convention_word, takes,
		    sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if (!(k->bugs & BIT(rule->bug))) {
		snprintf(what, sizeof what, "--bug %s",
		    online_bug_name(rule->bug));
		gpu_mask_words(k->bugs, ONLINE_BUGS, gpu_bug_word, takes,
		    sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if ((flags & GPU_TRACE) && !(caps & GPU_CAP_TRACE)) {
		gpu_names(GPU_CAP_TRACE, GPU_PART_ANY, takes, sizeof takes);
		return util_error(err, errlen, "kernel %s has no trace of its "
		    "steps, which compare and the view's G key need (kernels "
		    "with one: %s)", k->name, takes);
	}
	if (!(caps & (GPU_CAP_ANY_TILING | GPU_CAP_NO_TILES)))
		return gpu_kernel_tiling(k, p->d, t->br, t->bc, &own, err, errlen);
	return 0;
}

int
gpu_kernel_check(const struct gpu_kernel *k, const struct problem *p,
    const struct tiling *t, const struct online_rule *rule, unsigned flags,
    char *err, size_t errlen)
{
	return gpu_takes(k, k->caps, p, t, rule, flags, err, errlen);
}

static const char *
gpu_merge_bug_word(int i)
{
	return combine_bug_name((enum merge_bug)i);
}

int
gpu_split_check(const struct gpu_kernel *k, const struct problem *p,
    const struct tiling *t, const struct online_rule *rule,
    const struct split_plan *sp, const struct combine_rule *cr, char *err,
    size_t errlen)
{
	const struct gpu_split *s = k->split;
	char what[96], takes[256];

	if (s == NULL) {
		gpu_names(0, GPU_PART_SPLIT, takes, sizeof takes);
		if (k->caps & GPU_CAP_OWN_SPLITS)
			return util_error(err, errlen, "kernel %s cuts its keys "
			    "into ranges of its own choosing; --splits asks for a "
			    "split-KV run on the simulator's schedule (kernels "
			    "with one: %s)", k->name, takes);
		return util_error(err, errlen, "kernel %s has no split-KV run "
		    "(kernels with one: %s)", k->name, takes);
	}
	if (sp->splits < 2)
		return util_error(err, errlen, "a split-KV run takes --splits 2 "
		    "or more, not %d", sp->splits);
	/* A packed batch's forward may be the kernel's; its split run is
	 * not modelled (the simulator's split schedule refuses it too). */
	if (p->nseq > 0)
		return util_error(err, errlen, "--seqlens: split-KV (--splits) "
		    "of a packed batch is not modelled");
	if (gpu_takes(k, k->caps | s->caps, p, t, rule, 0, err, errlen) != 0)
		return -1;
	if (cr->bug < 0 || cr->bug >= MERGE_BUGS || !(s->merge_bugs &
	    BIT(cr->bug))) {
		snprintf(what, sizeof what, "--merge-bug %s", cr->bug >= 0 &&
		    cr->bug < MERGE_BUGS ? combine_bug_name(cr->bug) : "?");
		gpu_mask_words(s->merge_bugs, MERGE_BUGS, gpu_merge_bug_word,
		    takes, sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	return 0;
}

static const char *
gpu_bwd_bug_word(int i)
{
	return backward_bug_name((enum backward_bug)i);
}

void
gpu_backward_tiling(const struct gpu_kernel *k, const struct tiling *t,
    struct tiling *bt)
{
	const struct gpu_backward *b = k->backward;

	bt->br = b->br > 0 ? b->br : t->br;
	bt->bc = b->bc > 0 ? b->bc : t->bc;
	bt->order = ORDER_FA1;
}

int
gpu_backward_check(const struct gpu_kernel *k, const struct problem *p,
    int bug, char *err, size_t errlen)
{
	const struct gpu_backward *b = k->backward;
	char what[96], takes[256];

	if (p->nseq > 0)
		return gpu_varlen_check(k, " backward", err, errlen);
	if (b == NULL) {
		gpu_names(0, GPU_PART_BACKWARD, takes, sizeof takes);
		return util_error(err, errlen, "kernel %s has no backward pass "
		    "(kernels with one: %s)", k->name, takes);
	}
	if (p->paged.page_size > 0)
		return gpu_refuse(k, err, errlen, "--page-size backward", "K and "
		    "V contiguous: a paged cache runs on the simulator");
	if (p->scores_mode && !(b->caps & GPU_CAP_SCORES))
		return gpu_refuse(k, err, errlen, "a scores problem backward",
		    "Q, K and V");
	if (!(b->dtypes & BIT(p->dtype))) {
		snprintf(what, sizeof what, "--dtype %s backward",
		    dtype_name(p->dtype));
		gpu_mask_words(b->dtypes, 3, gpu_dtype_word, takes, sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if (p->causal && !(b->caps & GPU_CAP_CAUSAL))
		return gpu_refuse(k, err, errlen, "--causal backward", "no mask");
	if (gpu_mask_takes(k, b->caps, p, NULL, " backward", err, errlen) != 0)
		return -1;
	if (!p->scores_mode && k->dims != NULL &&
	    (p->d != p->dv || !gpu_kernel_takes_d(k, p->d))) {
		snprintf(what, sizeof what, "d = %d, dv = %d backward", p->d,
		    p->dv);
		gpu_dims_words(k, takes, sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if (bug < 0 || bug >= BACKWARD_BUGS || !(b->bugs & BIT(bug))) {
		snprintf(what, sizeof what, "--grad-bug %s", bug >= 0 &&
		    bug < BACKWARD_BUGS ? backward_bug_name((enum backward_bug)bug) :
		    "?");
		gpu_mask_words(b->bugs, BACKWARD_BUGS, gpu_bwd_bug_word, takes,
		    sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	return 0;
}

int
gpu_kernel_tiling(const struct gpu_kernel *k, int d, int br, int bc,
    struct tiling *t, char *err, size_t errlen)
{
	char what[32], takes[128];

	if (k->caps & (GPU_CAP_ANY_TILING | GPU_CAP_NO_TILES))
		return 0;
	if (k->dims != NULL && !gpu_kernel_takes_d(k, d)) {
		snprintf(what, sizeof what, "d = %d", d);
		gpu_dims_words(k, takes, sizeof takes);
		return gpu_refuse(k, err, errlen, what, takes);
	}
	if (k->tiling == NULL)
		return gpu_kernel_absent(k, err, errlen);
	return k->tiling(d, br, bc, t, err, errlen);
}

/* ---- --list-kernels ---- */

static void
gpu_describe_dtypes(const struct gpu_kernel *k, char *buf, size_t len)
{
	size_t at;

	/* fp8, where there is one, at its one d */
	gpu_mask_words(k->dtypes, DTYPE_FP8 + 1, gpu_dtype_word, buf, len);
	at = strlen(buf);
	if ((k->dtypes & BIT(DTYPE_FP8)) && at < len)
		snprintf(buf + at, len - at, " (fp8 at d = %d)", k->fp8_d);
}

static void
gpu_describe_orders(const struct gpu_kernel *k, char *buf, size_t len)
{
	if (k->caps & GPU_CAP_NO_TILES)
		snprintf(buf, len, "any (no tiles)");
	else
		gpu_mask_words(k->orders, 2, gpu_order_word, buf, len);
}

static void
gpu_describe_conventions(const struct gpu_kernel *k, char *buf, size_t len)
{
	gpu_mask_words(k->conventions, 2, gpu_convention_word, buf, len);
}

static void
gpu_describe_bugs(const struct gpu_kernel *k, char *buf, size_t len)
{
	gpu_mask_words(k->bugs, ONLINE_BUGS, gpu_bug_word, buf, len);
}

static void
gpu_describe_inputs(const struct gpu_kernel *k, char *buf, size_t len)
{
	char rows[48] = "";

	if (k->max_tq > 0)
		snprintf(rows, sizeof rows, "; at most %d query rows a head",
		    k->max_tq);
	snprintf(buf, len, "Q, K, V%s%s%s; %s%s; %s%s; %s",
	    k->caps & GPU_CAP_SCORES ? " or scores S, V" : "",
	    k->caps & GPU_CAP_VARLEN ? ", a packed batch (--seqlens)" : "",
	    k->caps & GPU_CAP_PAGED ? ", a paged K/V cache (--page-size)" : "",
	    k->caps & GPU_CAP_CAUSAL ? "causal or not" : "no mask",
	    (k->caps & GPU_CAP_MASKS) == GPU_CAP_MASKS ? ", windows, softcap, "
	    "ALiBi, dropout and the mask bugs" : (k->caps & GPU_TC_MASKS) ==
	    GPU_TC_MASKS ? ", windows (skipping the tiles they hide), softcap "
	    "and ALiBi" : "",
	    k->caps & GPU_CAP_ANY_SCALE ? "any scale" : "a positive scale", rows,
	    k->caps & GPU_CAP_HEADS ? "H query heads on G K/V heads as one "
	    "problem, each group's rows packed" : "heads one at a time");
}

static void
gpu_describe_trace(const struct gpu_kernel *k, char *buf, size_t len)
{
	snprintf(buf, len, "%s", k->caps & GPU_CAP_TRACE ? "m, alpha, l and "
	    "the numerator at every step (compare, the view's G key)" :
	    "none (compare and the view's G key do not take it)");
}

static void
gpu_describe_arith(const struct gpu_kernel *k, char *buf, size_t len)
{
	static const char *const words[] = {
		[GPU_ARITH_SIM_ORDER] = "the simulator's operations in its "
		    "order: m the same bits, alpha within 3 float32 units",
		[GPU_ARITH_TENSOR_CORES] = "tensor-core sums and exp2: the "
		    "tolerance grows by 2 delta (compare --help)",
		[GPU_ARITH_OWN] = "its own order (no steps to compare)",
	};

	snprintf(buf, len, "%s", words[k->arith]);
}

static void
gpu_describe_devices(const struct gpu_kernel *k, char *buf, size_t len)
{
	if (k->cc == 0)
		snprintf(buf, len, "any this build runs on");
	else
		snprintf(buf, len, "compute capability %d.%d only (sm_%da "
		    "machine code%s)", k->cc / 10, k->cc % 10, k->cc,
		    k->cc == 90 ? ": H100, H200" : "");
}

static void
gpu_describe_backward(const struct gpu_kernel *k, char *buf, size_t len)
{
	const struct gpu_backward *b = k->backward;
	char dtypes[64], bugs[256], tiles[48] = "";

	if (b == NULL) {
		snprintf(buf, len, "none");
		return;
	}
	if (b->br > 0)
		snprintf(tiles, sizeof tiles, "; its own tiles %dx%d", b->br,
		    b->bc);
	gpu_mask_words(b->dtypes, 3, gpu_dtype_word, dtypes, sizeof dtypes);
	gpu_mask_words(b->bugs, BACKWARD_BUGS, gpu_bwd_bug_word, bugs,
	    sizeof bugs);
	snprintf(buf, len, "%s; %s%s%s%s; bug modes %s; %s%s%s (--backward)",
	    dtypes, b->caps & GPU_CAP_CAUSAL ?
	    "causal or not" : "no mask", b->caps & GPU_CAP_WINDOW ?
	    ", windows, softcap, ALiBi" : "", b->caps & GPU_CAP_DROPOUT ?
	    ", dropout" : "", b->caps & GPU_CAP_SCORES ? "; scores problems" :
	    "", bugs, b->caps & GPU_CAP_NO_TILES ? "no tiles: P, dP and dS "
	    "(Tq x Tk) whole in device memory, dQ one sum an entry (--dq "
	    "atomic and ordered alike)" : "dQ atomic or ordered", tiles,
	    b->caps & GPU_CAP_TRACE ? "" : "; final gradients, no step trace");
}

static void
gpu_describe_split(const struct gpu_kernel *k, char *buf, size_t len)
{
	char bugs[128];

	if (k->split != NULL) {
		gpu_mask_words(k->split->merge_bugs, MERGE_BUGS,
		    gpu_merge_bug_word, bugs, sizeof bugs);
		snprintf(buf, len, "the simulator's (--splits N): a block per (row "
		    "block, key range), partials mlu or olse, merged ltr, tree or "
		    "reverse; merge bug modes %s%s", bugs, k->split->caps &
		    GPU_CAP_HEADS ? "; grouped heads, packed or not" : "");
	} else if (k->caps & GPU_CAP_OWN_SPLITS)
		snprintf(buf, len, "its own: key ranges enough to fill the GPU, "
		    "merged in the kernel (not --splits)");
	else
		snprintf(buf, len, "none");
}

/* One line of --list-kernels each, in this order. */
static const struct {
	const char *label;
	void (*words)(const struct gpu_kernel *k, char *buf, size_t len);
} gpu_describers[] = {
	{ "devices", gpu_describe_devices },
	{ "dtypes", gpu_describe_dtypes },
	{ "head sizes", gpu_dims_words },
	{ "inputs", gpu_describe_inputs },
	{ "tilings", gpu_tilings_words },
	{ "loop orders", gpu_describe_orders },
	{ "conventions", gpu_describe_conventions },
	{ "bug modes", gpu_describe_bugs },
	{ "trace", gpu_describe_trace },
	{ "arithmetic", gpu_describe_arith },
	{ "backward", gpu_describe_backward },
	{ "split-KV", gpu_describe_split },
};

int
gpu_kernel_describe(const struct gpu_kernel *k, int what, char *buf,
    size_t len)
{
	char words[384];

	if (what < 0 || what >= (int)(sizeof gpu_describers /
	    sizeof gpu_describers[0]))
		return -1;
	gpu_describers[what].words(k, words, sizeof words);
	snprintf(buf, len, "%-12s %s", gpu_describers[what].label, words);
	return 0;
}
