/*
 * kernels.h - what the C side of the GPU half (gpu.c) hands the CUDA side
 * (teach.cu, naive.cu, fastrun.cu, device.cu): plain C types, host arrays
 * in, host arrays out.  The .cu files own every CUDA call: device memory,
 * copies, launches, events.  Only gpu.c and the .cu files include this.
 */
#ifndef FLASHSTEP_KERNELS_H
#define FLASHSTEP_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One run of n problems of one shape.  Inputs of problem b: q[b] (Tq, d),
 * k[b] (Tk, d), kt[b] (d, Tk), v[b] (Tk, dv), or s[b] (Tq, Tk) in a scores
 * problem (d = 0).  The schedule's arrays are the simulator's own
 * (schedule.h), so the kernel visits the same tiles and numbers the same
 * steps.  Outputs are host arrays the caller allocated (NULL: not wanted).
 */
struct gpu_job {
	int n, tq, tk, d, dv;
	float scale;
	int causal, scores, dtype;	/* dtype: enum dtype, for P before P V */
	const float *const *q, *const *k, *const *kt, *const *v, *const *s;

	/* tiling (teaching kernel only) */
	int br, bc, tr, tc, order;	/* order: enum schedule_order */
	const int *jend;		/* (tr) row block i sees key blocks [0, jend) */
	const int *ibegin;		/* (tc) key block j is seen by [ibegin, tr) */
	const long *first;		/* (nouter + 1) first step of each outer block */
	long nsteps;
	int convention, bug;		/* enum online_convention, online_bug */
	unsigned flags;			/* GPU_TRACE, GPU_TRACE_ACC, GPU_TEST_NO_RESCALE */
	int repeat;
	int variant;			/* fast kernel: fast_attention_variant's i */

	/* results */
	float *o, *lse;			/* (n, tq, dv), (n, tq) */
	float *m_new, *alpha, *l_new;	/* (n, nsteps, br) when traced */
	float *acc;			/* (n, nsteps, br, dv) when traced */
	double ms, bytes;
};

int gpu_teach_launch(struct gpu_job *job, char *err, size_t errlen);
int gpu_naive_launch(struct gpu_job *job, char *err, size_t errlen);

/* The fast kernel (gpu/fastrun.cu over gpu/fast.cu): fp16 or bf16 inputs
 * (the host arrays hold values already rounded to job->dtype), d = dv,
 * fa2 order; the trace laid out by the simulator's steps as teach's. */
int gpu_fast_launch(struct gpu_job *job, char *err, size_t errlen);

/* Bytes of shared memory one block of the teaching kernel needs. */
size_t gpu_teach_smem_bytes(int br, int bc, int d, int dv);

#ifdef __cplusplus
}
#endif

#endif
