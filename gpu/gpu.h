/*
 * gpu.h - the only door to the GPU half: a plain C header.
 *
 * The kernels are a table (kernel.h): teaching (gpu/teach.cu, the
 * simulator's tiled loop in float32 and in its order, every convention
 * and bug mode, a trace of every step; its backward, gpu/teach_bwd.cu,
 * and its split-KV run, gpu/teach_split.cu), naive (gpu/naive.cu, S and
 * P in device memory: the baseline), fast (gpu/fast.cu, FlashAttention-2
 * on the tensor cores), wgmma (gpu/wgmma.cu, FlashAttention-3's design
 * for Hopper) and decode (gpu/decode.cu, a few query rows against a long
 * K/V cache).  gpu_run() runs any entry; gpucheck.h holds one against
 * the simulator.
 *
 * The C side (gpu.c, kernel.c) builds with or without CUDA; without it
 * gpu_available() (gpu_stub.c) answers GPU_NOT_BUILT and nothing runs.
 * Nothing here starts CUDA until a function that needs the device is
 * called, so check can fork before the first call.  Functions return 0,
 * or -1 with one line in err.
 *
 * Several heads or a batch are n problems of one shape (same Tq, Tk, d,
 * dv, scale, mask, dtype, kind, heads) given as an array: one launch
 * covers them all, one thread block per (tile row, problem).  A problem
 * of H query heads on G K/V heads (problem.h) is one problem only for a
 * kernel with GPU_CAP_HEADS; the others take its heads as problems of
 * their own (problem_head).
 */
#ifndef FLASHSTEP_GPU_H
#define FLASHSTEP_GPU_H

#include <stddef.h>

#include "kernel.h"
#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

/* 1 when this build has CUDA kernels, 0 for the stub. */
int gpu_built(void);

/* Can a kernel run here?  The commands exit with a status of their own
 * for each answer but the first (flashstep(1), EXIT STATUS). */
enum gpu_status {
	GPU_READY,
	GPU_NOT_BUILT,		/* built without CUDA support */
	GPU_NO_DRIVER,		/* no CUDA driver installed (no libcuda) */
	GPU_BAD_DRIVER,		/* a driver too old for this build, or one
				 * that cannot start */
	GPU_NO_DEVICE,		/* a driver but no device, or
				 * CUDA_VISIBLE_DEVICES hides them all */
};

/*
 * GPU_READY with the first device's name in name (may be NULL), or why
 * not, in one line in err: "built without CUDA support", "no CUDA
 * driver: ...", "the CUDA driver is too old: ...", "no CUDA device
 * found".  err may be NULL.
 */
enum gpu_status gpu_available(char *name, size_t namelen, char *err,
    size_t errlen);

/* The first device's compute capability times 10 (90: H100, H200) in
 * *cc, and its name in name (may be NULL): 0, or -1 with err (no device,
 * as gpu_available says). */
int gpu_compute_capability(int *cc, char *name, size_t namelen, char *err,
    size_t errlen);

/*
 * Can this device run kernel k, once gpu_available() found one?  0, or
 * -1 with one line when k's code is for another compute capability
 * (kernel.h's cc): "kernel wgmma runs only on compute capability 9.0
 * (sm_90a: H100, H200); this GPU, NVIDIA A100-SXM4-80GB, is 8.0".
 */
int gpu_kernel_on_device(const struct gpu_kernel *k, char *err,
    size_t errlen);

/*
 * The rule of every GPU test (check_gpu*, gpu.test, the lessons' compare
 * gpu): when no kernel could run, the test is skipped only when the
 * hardware is missing (no CUDA in the build, no driver installed, no
 * device) and FLASHSTEP_REQUIRE_GPU is not set (to anything but "" or
 * "0"); otherwise it fails.  1: skip, 0: fail.
 */
int gpu_may_skip(enum gpu_status why);
int gpu_required(void);

/* Flags of gpu_run. */
#define GPU_TRACE	0x1	/* record m_new, alpha, l_new per row per step */
#define GPU_TRACE_ACC	0x2	/* and the accumulator row (u, or o) */

/*
 * What a run gives back; every array is malloc'd and belongs to the
 * result (gpu_result_free).  Trace arrays are laid out by the simulator's
 * step numbers: entry (b, step, row) of problem b, step k (0 <= k <
 * nsteps, schedule.h's numbering) and row r of that step's tile (r <
 * r1 - r0) is at gpu_trace_at(res, b, k, r); for the accumulator multiply
 * that by dv and add the column.  Rows past a ragged tile's end are NaN.
 */
struct gpu_result {
	int n;			/* problems */
	int tq, dv;		/* tq: rows of O a problem, H Tq */
	float *o;		/* (n, tq, dv) */
	float *lse;		/* (n, tq) */
	long nsteps;		/* steps of one problem */
	int br;			/* trace rows per step: the schedule's Br */
	float *m_new, *alpha, *l_new;	/* (n, nsteps, br), NULL untraced */
	float *acc;		/* (n, nsteps, br, dv), NULL untraced */
	double ms;		/* kernel time (timing.h: median of the runs) */
	double device_bytes;	/* device memory the timed kernel held */
	int splits;		/* key ranges of a kernel that picks its own
				 * (GPU_CAP_OWN_SPLITS); else 0 */
	char device[64];	/* the GPU's name */
};

static inline size_t
gpu_trace_at(const struct gpu_result *res, int b, long step, int row)
{
	return ((size_t)b * (size_t)res->nsteps + (size_t)step) *
	    (size_t)res->br + (size_t)row;
}

/*
 * Runs n problems of one shape through kernel k with tiling t (the
 * simulator's Br, Bc and loop order: for a kernel with its own tilings,
 * one of gpu_kernel_tiling's) and update rule rule.  What k cannot take
 * is refused first (gpu_kernel_check), then a missing GPU (gpu_available)
 * or one its code is not for (gpu_kernel_on_device).
 * O and lse come from the timed runs: repeat > 0 times that many after
 * one warm-up and keeps the median, repeat <= 0 runs once.  flags
 * GPU_TRACE... add one run with the trace on.  On error res is empty.
 */
int gpu_run(const struct gpu_kernel *k, const struct problem *ps, int n,
    const struct tiling *t, const struct online_rule *rule, unsigned flags,
    int repeat, struct gpu_result *res, char *err, size_t errlen);

/* gpu_run with `ranges` key ranges asked of a kernel that picks its own
 * (GPU_CAP_OWN_SPLITS) instead of its choice, so a test can reach counts
 * and empty ranges the device's size would not pick (0: its own; the
 * kernel cuts more than it takes to its most).  A kernel without its own
 * ranges refuses ranges > 0, as it does a negative count. */
int gpu_run_ranges(const struct gpu_kernel *k, const struct problem *ps,
    int n, const struct tiling *t, const struct online_rule *rule,
    unsigned flags, int ranges, int repeat, struct gpu_result *res,
    char *err, size_t errlen);

void gpu_result_free(struct gpu_result *res);

/* max |r's O - ref's O| / max |ref's O| over their first n values (the
 * largest difference itself where ref's O is all zero): how bench --gpu
 * and the ladder hold one kernel's O against another's. */
double gpu_result_diff(const struct gpu_result *r,
    const struct gpu_result *ref, size_t n);

/*
 * How bench --gpu and the ladder time a kernel: n problems of one shape,
 * no trace, update rule unnormalized, bug none; a kernel with its own
 * tilings runs its default for d (written into t, whose order the
 * others keep); at most k->bench_repeat timed runs when it caps them.
 * Checks what k takes and whether it fits first.  0 with res filled, or
 * -1 with why (res empty).
 */
int gpu_time(const struct gpu_kernel *k, const struct problem *ps, int n,
    struct tiling *t, int repeat, struct gpu_result *res, char *why,
    size_t len);

/* ---- the backward pass ---- */

/* How a backward gets dQ (teach_bwd.h says more). */
enum gpu_dq_mode {
	GPU_DQ_ATOMIC,		/* FlashAttention 2's: every key block adds
				 * its part with atomicAdd; the order, and
				 * dQ's last bits, change from run to run */
	GPU_DQ_ORDERED,		/* each part in a slot of its own, summed in
				 * the order of j as the simulator adds them:
				 * the same bits every run, dQ after every
				 * step */
};

/* Flags of gpu_backward_run. */
#define GPU_BWD_TRACE	0x1	/* dK, dV (and an ordered dQ) per step */

/* What the backward takes from the forward, and dO: n problems' arrays
 * one after another. */
struct gpu_bwd_inputs {
	const float *o;		/* (n, Tq, dv) the forward's O */
	const float *lse;	/* (n, Tq) */
	const float *m;		/* (n, Tq) the row max: only --grad-bug
				 * max-not-lse reads it (else may be NULL) */
	const float *dout;	/* (n, Tq, dv) dO, rounded to the dtype */
};

/*
 * A backward's results; every array is malloc'd and belongs to it
 * (gpu_grads_free).  The trace is laid out by the simulator's backward
 * steps (backward.h: key blocks outside): entry (b, k, row) of problem
 * b, step k and row r of the step's tile (its keys for dK, dV, its query
 * rows for dQ) at ((b nsteps + k) bc + r) d for dK, with dv for dV and
 * br for dQ.  Rows past a ragged tile's end are NaN.
 */
struct gpu_grads {
	int n, tq, tk, d, dv;
	float *grad_q, *grad_k;	/* dQ (n, Tq, d), dK (n, Tk, d) */
	float *grad_v;		/* dV (n, Tk, dv) */
	float *grad_s;		/* dS (n, Tq, Tk): a scores problem's */
	long nsteps;		/* backward steps of one problem */
	int br, bc;		/* the schedule's, cut to Tq and Tk */
	float *trace_dk, *trace_dv;	/* with GPU_BWD_TRACE, else NULL */
	float *trace_dq;	/* with GPU_BWD_TRACE and GPU_DQ_ORDERED */
	double ms;		/* kernel time, median of the timed runs */
	double device_bytes;	/* device memory the backward held (0: its
				 * entry does not count it) */
	char device[64];
};

/*
 * Runs kernel k's backward over n problems of one shape with tiling t
 * (Br, Bc; the backward's loop order is its own), the forward's results
 * and dO in in, backward bug bug (enum backward_bug), dQ by dq.  Refused
 * first (gpu_backward_check), then a missing GPU.  repeat > 0 times that
 * many runs after the first; flags as above.  A backward whose entry
 * says what device memory it needs (struct gpu_backward's device_bytes)
 * is refused when that is not free, as gpu_time refuses a forward.  On
 * error g is empty.
 */
int gpu_backward_run(const struct gpu_kernel *k, const struct problem *ps,
    int n, const struct tiling *t, const struct gpu_bwd_inputs *in, int bug,
    enum gpu_dq_mode dq, unsigned flags, int repeat, struct gpu_grads *g,
    char *err, size_t errlen);

void gpu_grads_free(struct gpu_grads *g);

/* "atomic", "ordered"; and back (0, or -1 for another word). */
const char *gpu_dq_mode_name(enum gpu_dq_mode m);
int gpu_dq_mode_parse(const char *name, enum gpu_dq_mode *out);

/* ---- split-KV ---- */

struct sim;
struct combine;

/*
 * What a split-KV run gives back; every array is malloc'd and belongs to
 * it (gpu_split_result_free).  Rows are the schedule's (rows = H Tq;
 * schedule_row_out gives a row's place in O), laid out as sim_partials
 * and the combine lay theirs, so each entry has a simulator value.
 */
struct gpu_split_result {
	int rows, splits, dv, merges;
	float *m, *l, *lse;	/* (rows, N): row R's range s at R N + s */
	float *acc, *o;		/* (rows, N, dv): the range's state (u, or o
				 * under the normalized convention), o = u / l */
	float *merge_m, *merge_l;	/* (rows, merges): merge n of row R at
				 * R merges + n (olse: the lse, and l = 1) */
	float *out, *out_lse;	/* O (H Tq, dv) and lse (H Tq), head after head */
	double ms_ranges, ms_combine;	/* kernel times (timing.h: medians) */
	double device_bytes;
	char device[64];
};

/*
 * Runs kernel k's split-KV run on what split sim sim and its combine
 * comb describe (problem, tiling, split plan, update rule; merge order,
 * form, bug), which it only reads: neither needs to have run.  Refused
 * first (gpu_split_check), then a missing GPU.  repeat > 0 times that
 * many runs of each kernel after a warm-up; flags must be 0 (none are
 * defined).
 * On error res is empty.
 */
int gpu_split_run(const struct gpu_kernel *k, const struct sim *sim,
    const struct combine *comb, unsigned flags, int repeat,
    struct gpu_split_result *res, char *err, size_t errlen);

void gpu_split_result_free(struct gpu_split_result *res);

/* The kernel ladder (ladder.c): one shape through naive, teaching, fast
 * and wgmma, each rung what the one below lacks. */
#define GPU_LADDER_RUNGS 4

struct gpu_ladder_rung {
	const struct gpu_kernel *kernel;
	const char *change;	/* what it changes over the rung below */
	int ran;		/* 0: skipped, and why says why */
	char why[256];
	struct tiling tiling;	/* the tiling it ran (none for naive) */
	double ms;		/* kernel time (timing.h: median of the runs) */
	double tflops;		/* 4 n Tq Tk d, halved for causal, per second */
	double device_bytes;	/* device memory the kernel held */
	double o_diff;		/* max |O - O_first| / max |O_first|, O_first
				 * the lowest rung that ran's (0 for it) */
	int below;		/* the rung below that ran, or -1 */
	double speedup;		/* its time / this time (0: below is -1) */
};

/*
 * Times every rung on n problems of one shape, as gpu_time does (the
 * teaching kernel with tiling any, the tensor-core kernels with their
 * default), repeat runs after a warm-up.  A rung its kernel cannot take,
 * that would not fit, or whose device is not there (wgmma off Hopper) is
 * skipped with why; 0 then, with the rungs filled.  -1 with err only
 * when no GPU at all (gpu_available's reason).
 */
int gpu_ladder(const struct problem *ps, int n, const struct tiling *any,
    int repeat, struct gpu_ladder_rung rungs[GPU_LADDER_RUNGS], char *err,
    size_t errlen);

/*
 * The backward's ladder (ladder.c), the same rungs for the backward pass
 * (FLOPs 2.5 times the forward's): naive (standard attention's backward,
 * P, dP and dS whole in device memory), teaching
 * (dQ atomic), fast (mma.sync, dQ atomic), and fast with dQ ordered, the
 * deterministic mode, whose speed-up under 1 is its cost.  Each rung's
 * backward runs on its own forward's O and lse and on dout (n Tq dv,
 * problem after problem); o_diff is then the largest of dQ's, dK's and
 * dV's max |g - g_first| / max |g_first|, and device_bytes the
 * backward's (0 where its entry does not count it: the teaching one).
 * 0, or -1 with err only when no GPU at all.
 */
#define GPU_LADDER_BWD_RUNGS 4

int gpu_ladder_backward(const struct problem *ps, int n, const float *dout,
    const struct tiling *any, int repeat,
    struct gpu_ladder_rung rungs[GPU_LADDER_BWD_RUNGS], char *err,
    size_t errlen);

/* A backward rung's name as its tables print it ("fast", "fast ordered"). */
const char *gpu_ladder_backward_name(int rung);

/* A rung's cells as the ladder's tables print them: its tiling ("64x64",
 * "-" for a kernel without tiles) and its speed-up over the rung below
 * ("2.02x", "-" for the lowest that ran). */
void gpu_ladder_cells(const struct gpu_ladder_rung *r, char *tiles,
    size_t tiles_len, char *speed, size_t speed_len);

/* Free and total device memory now, in bytes. */
int gpu_memory(double *free_bytes, double *total_bytes, char *err,
    size_t errlen);

/* Would need bytes fit in free device memory, with a margin?  0, or -1
 * with why ("needs 65.0 GiB of device memory, 40.1 GiB free of 139.8
 * GiB", or gpu_memory's error). */
int gpu_fits(double need, char *why, size_t len);

#endif
