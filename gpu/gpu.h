/*
 * gpu.h - the only door to the GPU half: a plain C header.
 *
 * Built with CUDA (gpu/gpu.c over the .cu files) or as a stub (gpu/gpu_stub.c)
 * that answers every call with "built without CUDA support".  Nothing
 * here starts CUDA until a function is called, so check can fork before
 * the first call.  Every function returns 0, or -1 with one line in err:
 *   "built without CUDA support"       (the stub)
 *   "no CUDA device found (...)"       (a CUDA build on a machine without
 *                                       a usable GPU or driver)
 *   "<call> failed at <file>:<line>: <CUDA error string>"
 *
 * Three kernels run a problem:
 *   teaching  gpu/teach.cu: the simulator's tiled loop in float32, in the
 *             same order of operations, for both loop orders, both
 *             conventions and every bug mode, with a trace of every step.
 *   naive     gpu/naive.cu: standard attention that writes S and P (Tq, Tk)
 *             to device memory; the baseline of `bench --gpu`.
 *   fast      gpu/fast.cu: FlashAttention-2's forward on the tensor cores
 *             (fp16 or bf16 in, float32 accumulation, d = 64 or 128), fa2
 *             order, unnormalized, a few fixed tilings; a debug build of
 *             the same tiling traces m, alpha, l (and O) per step.
 *
 * Several heads or a batch are n problems of one shape (same Tq, Tk, d,
 * dv, scale, mask, dtype, kind) given as an array: one launch covers them
 * all, one thread block per (tile row, problem).
 */
#ifndef FLASHSTEP_GPU_H
#define FLASHSTEP_GPU_H

#include <stddef.h>

#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

/* 1 when this build has CUDA kernels, 0 for the stub. */
int gpu_built(void);

/* 0 when a CUDA device can be used now; its name goes to name (may be
 * NULL).  -1 with the reason otherwise. */
int gpu_available(char *name, size_t namelen, char *err, size_t errlen);

/* Flags of gpu_teach. */
#define GPU_TRACE	0x1	/* record m_new, alpha, l_new per row per step */
#define GPU_TRACE_ACC	0x2	/* and the accumulator row (u, or o) */
/* Test only: the kernel leaves out the rescale (as bug no-rescale does)
 * while tracing the true alpha, so a comparison against a correct
 * simulator must fail.  It exists to show that the check can fail. */
#define GPU_TEST_NO_RESCALE 0x100

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
	int tq, dv;
	float *o;		/* (n, Tq, dv) */
	float *lse;		/* (n, Tq) */
	long nsteps;		/* steps of one problem */
	int br;			/* trace rows per step: the schedule's Br */
	float *m_new, *alpha, *l_new;	/* (n, nsteps, br), NULL untraced */
	float *acc;		/* (n, nsteps, br, dv), NULL untraced */
	double ms;		/* kernel time (median of the timed runs) */
	double device_bytes;	/* device memory the run allocated */
	char device[64];	/* the GPU's name */
};

static inline size_t
gpu_trace_at(const struct gpu_result *res, int b, long step, int row)
{
	return ((size_t)b * (size_t)res->nsteps + (size_t)step) *
	    (size_t)res->br + (size_t)row;
}

/*
 * Runs n problems of one shape through the teaching kernel with tiling t
 * (the simulator's Br, Bc and loop order) and update rule (convention
 * and bug).  flags: GPU_TRACE... .  repeat > 0 times that many runs after
 * one warm-up and keeps the median; repeat <= 0 runs once.  On error res
 * is empty.  A tiling whose tiles do not fit in shared memory is refused
 * with the bytes it needs and the GPU's limit.
 */
int gpu_teach(const struct problem *ps, int n, const struct tiling *t,
    const struct online_rule *rule, unsigned flags, int repeat,
    struct gpu_result *res, char *err, size_t errlen);

/* The naive baseline on the same n problems (fp32, bug none): O, lse,
 * time and bytes in res; no trace. */
int gpu_naive(const struct problem *ps, int n, int repeat,
    struct gpu_result *res, char *err, size_t errlen);

/*
 * The fast kernel's tiling for head width d (64 or 128): Br = Bc = 0 asks
 * for its default (the fastest measured), otherwise the tiling with that
 * Br and Bc.  Fills t (order fa2) and returns 0, or -1 with the tilings
 * it has in err.  The simulator replays the same schedule with t.
 */
int gpu_fast_tiling(int d, int br, int bc, struct tiling *t, char *err,
    size_t errlen);

/*
 * Runs n problems of one shape through the fast kernel with tiling t
 * (one of gpu_fast_tiling's).  The problems must give Q, K, V (not
 * scores) in fp16 or bf16 with d = dv = 64 or 128 and a positive scale.
 * O (rounded to the dtype, held in float32) and lse come from the timed
 * kernel; flags GPU_TRACE (m_new, alpha, l_new) and GPU_TRACE_ACC (the
 * unnormalized accumulator) run the debug build once more and lay its
 * trace out as gpu_teach's; GPU_TEST_NO_RESCALE makes that build leave
 * the rescale out, and O and lse then come from it.  repeat as gpu_teach.
 * device_bytes counts the kernel's own memory: Q, K, V, O in 16 bits and
 * lse in float32.
 */
int gpu_fast(const struct problem *ps, int n, const struct tiling *t,
    unsigned flags, int repeat, struct gpu_result *res, char *err,
    size_t errlen);

/* Free and total device memory now, in bytes. */
int gpu_memory(double *free_bytes, double *total_bytes, char *err,
    size_t errlen);

void gpu_result_free(struct gpu_result *res);

/*
 * For the view's G key: the teaching kernel's m_new, alpha and l_new for
 * the rows of step k (r1 - r0 values each, in the simulator's step
 * numbering).  The first call for a problem runs the kernel with its
 * trace on; later calls with the same p, t and rule reuse that trace.
 * gpu_forget() drops it (call it when the problem changes in place).
 */
int gpu_step_values(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, long k, float *m_new, float *alpha,
    float *l_new, char *err, size_t errlen);
void gpu_forget(void);

#endif
