/*
 * kernel.h - the GPU kernels as one table (gpu/kernel.c): each entry is a
 * name, a line that says what the kernel is, what it takes, and the
 * functions that run it, as tmux describes a mode.  Commands find a
 * kernel by name (--kernel NAME), list the table (gpu --list-kernels),
 * and hand an entry to gpu_run() (gpu.h) or gpucheck (gpucheck.h); a
 * problem the kernel cannot take is refused from the entry, by
 * gpu_kernel_check(), with one message.
 *
 * Adding a kernel: its .cu file (a launch, and a trace if it has one:
 * kernels.h says what they get), its entry in kernel.c, its line in
 * gpu/local.mk, its tests, and its paragraph under `gpu` in
 * doc/flashstep.1 (check_gpu_table fails until the page names it).
 * bench --gpu, --list-kernels and the help take it from the entry.
 * doc/design.md walks through it.
 */
#ifndef FLASHSTEP_KERNEL_H
#define FLASHSTEP_KERNEL_H

#include <stddef.h>

#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

struct gpu_job;
struct gpu_bwd_job;
struct gpu_split_job;
struct combine_rule;
struct split_plan;

/* How a kernel's numbers relate to the simulator's: gpucheck derives
 * its tolerance from this (gpucheck.c says why). */
enum gpu_arith {
	/* The simulator's operations in its order, float32, no fused
	 * multiply-adds: m is the same bits, alpha within a few units in
	 * the last place (only expf differs), and gpucheck holds it to it. */
	GPU_ARITH_SIM_ORDER,
	/* S on the tensor cores, p = 2^x on the special-function unit: the
	 * tolerance widens by delta. */
	GPU_ARITH_TENSOR_CORES,
	/* Its own order (trees, no tiles): no step to compare. */
	GPU_ARITH_OWN,
};

/* What a kernel can do besides its dtypes, orders, conventions, bugs. */
/* What a kernel without an FP8 path says of --dtype fp8 (a kernel takes
 * it by BIT(DTYPE_FP8) in its dtypes, at the one head width fp8_d);
 * %s is its name. */
#define GPU_NO_FP8_KERNEL "kernel %s does not take --dtype fp8 (wgmma " \
	"does, at d = 128; the simulator emulates it: flashstep run, view, " \
	"trace, bench --fp8)"
/* What a kernel without GPU_CAP_PAGED says of a paged cache (model/
 * paged.h): said before any device is probed (gpucmd) and by
 * gpu_kernel_check. */
#define GPU_NO_PAGED_KERNEL "kernel %s does not take --page-size (it takes " \
	"K and V contiguous: a paged cache runs on the simulator; flashstep " \
	"gpu --list-kernels)"

#define GPU_CAP_SCORES		0x1	/* a scores problem (S given, no Q, K) */
#define GPU_CAP_CAUSAL		0x2	/* the causal mask */
#define GPU_CAP_ANY_SCALE	0x4	/* a scale <= 0 (else it must be > 0) */
#define GPU_CAP_ANY_TILING	0x8	/* any Br x Bc (else its own: tiling) */
#define GPU_CAP_NO_TILES	0x10	/* no tiles at all: Br, Bc are unused */
#define GPU_CAP_TRACE		0x20	/* a trace of every step (trace()) */
#define GPU_CAP_HEADS		0x40	/* a problem of H query heads on G K/V
					 * heads as one (problem.h; else the
					 * commands run its heads apart) */
#define GPU_CAP_OWN_SPLITS	0x80	/* cuts its keys into ranges of its own
					 * choosing, merged in the kernel */
#define GPU_CAP_WINDOW		0x100	/* a sliding window (--window L,R),
					 * skipping the tiles it hides */
#define GPU_CAP_SOFTCAP		0x200	/* --softcap C */
#define GPU_CAP_ALIBI		0x400	/* --alibi, --alibi-slopes */
#define GPU_CAP_MASK_BUGS	0x800	/* --mask-bug (mask_rule.h's table) */
#define GPU_CAP_DROPOUT		0x1000	/* --dropout (mask_rule.h's keep bits) */
#define GPU_CAP_PAGED		0x2000	/* --page-size: K and V through a page
					 * table, page sizes multiples of
					 * GPU_PAGE_MULTIPLE */
#define GPU_CAP_VARLEN		0x4000	/* a packed batch (--seqlens, problem.h's
					 * nseq, cu_q, cu_k): tiles never mix
					 * sequences */
#define GPU_PAGE_MULTIPLE	16	/* decode.h's DECODE_PAGE_MULTIPLE */
/* What a kernel with GPU_CAP_PAGED says of another page size (gpucmd
 * before any device is probed, and gpu_kernel_check); %s is its name,
 * %d the page size. */
#define GPU_PAGE_SIZE_REFUSED "kernel %s does not take --page-size %d: it " \
	"takes pages of a multiple of 16 keys (16, 64, 256 ...), so that no " \
	"group of keys it reads at once crosses a page"
/* The whole of mask_rule.h's table (the causal mask is its own cap). */
#define GPU_CAP_MASKS	(GPU_CAP_WINDOW | GPU_CAP_SOFTCAP | GPU_CAP_ALIBI | \
	GPU_CAP_MASK_BUGS | GPU_CAP_DROPOUT)

/*
 * What bench --gpu does with a kernel (struct gpu_kernel's bench): its
 * default lists, the help that names them, and its special rows come
 * from these, so a new kernel needs no line in cmd_bench_gpu.c.
 */
#define GPU_BENCH_DEFAULT	0x1	/* timed when --kernels is not given
					 * (--backward: if it has one) */
#define GPU_BENCH_FA1		0x2	/* a second row, "fa1", in the fa1 loop
					 * order (one kernel of the table) */
#define GPU_BENCH_DECODE	0x4	/* the kernel --decode times (one
					 * kernel of the table) */

/*
 * A kernel's backward pass (FlashAttention 2's Algorithm 2, on the
 * simulator's backward schedule: src/model/backward.h), a part of its
 * entry: the backward's gradients come from the same kernel's O and lse
 * and are stepped with the same tiles, so it is the kernel's, not a
 * kernel of its own (doc/design.md says more).  gpu_backward_run() runs
 * it, gpucheck_bwd.h holds it against the simulator's backward.
 */
struct gpu_backward {
	unsigned dtypes;	/* enum dtype */
	unsigned bugs;		/* enum backward_bug */
	unsigned caps;		/* GPU_CAP_SCORES, GPU_CAP_CAUSAL, the
				 * masks, GPU_CAP_TRACE; GPU_CAP_NO_TILES:
				 * no tiles at all (its dQ is one sum an
				 * entry, --dq atomic and ordered alike) */
	/*
	 * Per enum dtype: a gradient entry, after any step, is within rtol
	 * times the sum of its terms' magnitudes of the simulator's (the
	 * kernel's .cu file derives it).
	 */
	double rtol[3];
	/* Its own tiles (Br query rows, Bc keys), whatever the forward's
	 * tiling; 0, 0: the forward's tiling, as asked.  The simulator's
	 * backward steps on gpu_backward_tiling()'s, so a trace numbers the
	 * kernel's steps. */
	int br, bc;
	/* The run (kernels.h): the gradients, their time, and with
	 * GPU_BWD_TRACE dK, dV (and an ordered dQ) after every step.  0, or
	 * -1 with err.  NULL in a build without CUDA. */
	int (*launch)(const struct gpu_bwd_job *job, char *err, size_t errlen);
	/* Device bytes a run of n problems like p needs (NULL: small enough
	 * not to ask): gpu_backward_run refuses what would not fit. */
	double (*device_bytes)(const struct problem *p, int n);
};

/*
 * A kernel's split-KV run (FlashAttention 2's split-KV, flash-decoding:
 * the simulator's split schedule, src/model/schedule.h, and its combine,
 * src/model/combine.h), a part of its entry: the same kernel's tile
 * step, run per (row block, key range) from an empty state to a
 * partial, then a combine kernel that merges the partials by merge.h's
 * rule along the combine's plan.  It takes what the entry takes (dtypes,
 * orders, conventions, bug modes; its arith's promise holds for every
 * partial), and what is its own below.  gpu_split_run() runs it,
 * gpucheck_split.h holds it against the simulator's partials, merges
 * and O (doc/design.md says why it is not an entry of its own).
 */
struct gpu_split {
	unsigned merge_bugs;	/* enum merge_bug */
	unsigned caps;		/* GPU_CAP_HEADS: grouped heads, packed or not */
	/* The run (kernels.h): partials, merges, O, lse, times.  0, or -1
	 * with err.  NULL in a build without CUDA. */
	int (*launch)(const struct gpu_split_job *job, char *err,
	    size_t errlen);
};

struct gpu_kernel {
	const char *name;	/* --kernel NAME */
	const char *summary;	/* one line */

	/* What it takes.  Masks of 1 << the enum value. */
	unsigned dtypes;	/* enum dtype */
	unsigned orders;	/* enum schedule_order */
	unsigned conventions;	/* enum online_convention */
	unsigned bugs;		/* enum online_bug */
	const int *dims;	/* the d = dv it takes, ending in 0; NULL: any */
	int max_tq;		/* query rows a head it takes at most (0: any) */
	int fp8_d;		/* with DTYPE_FP8 in dtypes: the one d = dv
				 * its FP8 path takes */
	unsigned caps;		/* GPU_CAP_... */
	enum gpu_arith arith;
	unsigned bench;		/* GPU_BENCH_... */
	int bench_repeat;	/* bench --gpu times it at most this often
				 * (0: as many as --repeat asks) */
	int cc;			/* 0: any GPU; else the one compute
				 * capability (times 10) its machine code is
				 * for, architecture-specific (90: sm_90a,
				 * H100 and H200): gpu_run refuses another
				 * device, and a build whose nvcc cannot
				 * target it has no functions for it */

	/*
	 * With its own tilings (no GPU_CAP_ANY_TILING): its tiling for head width d in t
	 * (order fa2), Br = Bc = 0 its default; or -1 with the tilings it
	 * has in err.  tilings() writes them ("128x64 (default), 64x64").
	 */
	int (*tiling)(int d, int br, int bc, struct tiling *t, char *err,
	    size_t errlen);
	void (*tilings)(int d, char *buf, size_t len);

	/*
	 * The runs (kernels.h): launch() times the kernel (job->repeat runs
	 * after a warm-up) and fills O, lse, the time and the device bytes;
	 * trace() (with GPU_CAP_TRACE) runs it once more with its
	 * trace on and lays m_new, alpha, l_new (and the accumulator) on the
	 * simulator's step numbers.  Both return 0, or -1 with err.  NULL in
	 * a build without CUDA (gpu_run says so before it would call them),
	 * or without code for the kernel's cc (gpu_kernel_check says so).
	 */
	int (*launch)(const struct gpu_job *job, char *err, size_t errlen);
	int (*trace)(const struct gpu_job *job, char *err, size_t errlen);

	/* Device bytes a launch of n problems like p needs (NULL: small
	 * enough not to ask); bench --gpu skips what would not fit. */
	double (*device_bytes)(const struct problem *p, int n);

	const struct gpu_backward *backward;	/* NULL: forward only */
	const struct gpu_split *split;		/* NULL: no split-KV run */
};

/* The table, in the order --list-kernels and bench --gpu use; ends with
 * NULL. */
extern const struct gpu_kernel *const gpu_kernels[];

/* The entry named name, or NULL. */
const struct gpu_kernel *gpu_kernel_find(const char *name);

/* "naive, teaching, fast, wgmma, decode": the names, for messages. */
const char *gpu_kernel_names(void);

/*
 * A packed batch (--seqlens) on kernel k: 0 when its caps take one, else
 * -1 with the one refusal that names the kernels that do.  part is "" or
 * " backward" (no backward takes one).  Said before any device is probed
 * (gpucmd) and by gpu_kernel_check and gpu_backward_check.
 */
int gpu_varlen_check(const struct gpu_kernel *k, const char *part, char *err,
    size_t errlen);

/*
 * Can kernel k run problem p with tiling t and rule rule (flags: gpu.h's
 * GPU_TRACE asks for the trace)?  0, or -1 with the one message that
 * names what it does not take and what it does (or that this build has
 * no code for it).  Needs no GPU.
 */
int gpu_kernel_check(const struct gpu_kernel *k, const struct problem *p,
    const struct tiling *t, const struct online_rule *rule, unsigned flags,
    char *err, size_t errlen);

/*
 * Can kernel k's backward take problem p with bug (enum backward_bug)?
 * 0, or -1 with the one message: it has none (naming the kernels that
 * have one), or what it does not take and what it does.  Needs no GPU.
 */
int gpu_backward_check(const struct gpu_kernel *k, const struct problem *p,
    int bug, char *err, size_t errlen);

/*
 * The tiles kernel k's backward runs, key blocks outside (order fa1),
 * for a forward with tiling t: its own (struct gpu_backward's br, bc),
 * or t's.  k must have a backward.
 */
void gpu_backward_tiling(const struct gpu_kernel *k, const struct tiling *t,
    struct tiling *bt);

/*
 * Can kernel k's split-KV run take problem p (grouped heads and all)
 * with tiling t, rule rule, split plan sp (sp->splits >= 2) and combine
 * rule cr?  0, or -1 with the one message: it has none (naming the
 * kernels that have one), or what it does not take and what it does.
 * Needs no GPU.
 */
int gpu_split_check(const struct gpu_kernel *k, const struct problem *p,
    const struct tiling *t, const struct online_rule *rule,
    const struct split_plan *sp, const struct combine_rule *cr, char *err,
    size_t errlen);

/*
 * The tiling kernel k runs for head width d: with its own tilings, the
 * one Br x Bc names (Br = Bc = 0: its default), in t with order fa2;
 * otherwise t is left as given.  0, or -1 with its tilings in err.
 */
int gpu_kernel_tiling(const struct gpu_kernel *k, int d, int br, int bc,
    struct tiling *t, char *err, size_t errlen);

/*
 * What k takes, in words, for --list-kernels: one "label: words" line
 * per call, what = 0, 1, ... until it returns -1.
 */
int gpu_kernel_describe(const struct gpu_kernel *k, int what, char *buf,
    size_t len);

#endif
