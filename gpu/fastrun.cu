/*
 * fastrun.cu - a gpu_job through the fast kernel (gpu/fast.cu): device
 * memory, the float32 <-> fp16/bf16 conversions, timing, and the debug
 * trace laid out by the simulator's step numbers.
 *
 * The problems hold float32 arrays whose values are already rounded to
 * the job's dtype (problem_build does that), so converting them on the
 * device is exact: each problem's Q, K and V go through one float32
 * staging buffer into the packed 16-bit tensors (n, T, d) the kernel
 * reads, problem b at head b of a batch of one.
 *
 * The timed runs use the kernel as benchmarked (fast_attention_fwd); O
 * and lse come from them.  With GPU_TRACE the same tiling's trace build
 * runs once more (fast_attention_trace), and its per-tile arrays
 * (n, Tr, Tc, Br) are laid against the schedule: fa2 step first[i] + j
 * for the j < jend[i] the kernel visits.  Its m is in units of q.k and
 * becomes scale m here; its alpha is 0 where the simulator says 1 (a row
 * that has seen nothing yet).  With GPU_TEST_NO_RESCALE O and lse come
 * from the faulty trace run instead, so the fault shows in them too.
 */
#include "config.h"

#include "cudacheck.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fast.h"

extern "C" {
#include "model/dtype.h"
#include "gpu.h"
#include "kernels.h"
}

#define FASTRUN_THREADS 256

/* n float32 values that fp16/bf16 hold exactly, into 16-bit storage. */
__global__ static void
fastrun_to16(const float *x, uint16_t *y, size_t n, int bf16)
{
	size_t i;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x)
		y[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x[i])) :
		    __half_as_ushort(__float2half_rn(x[i]));
}

/* And back: n 16-bit values as float32. */
__global__ static void
fastrun_from16(const uint16_t *x, float *y, size_t n, int bf16)
{
	size_t i;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x)
		y[i] = bf16 ? __bfloat162float(__ushort_as_bfloat16(x[i])) :
		    __half2float(__ushort_as_half(x[i]));
}

static unsigned
fastrun_blocks(size_t n)
{
	size_t b = (n + FASTRUN_THREADS - 1) / FASTRUN_THREADS;

	return (unsigned)(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

/*
 * The kernel's trace (n, tr, tc, br) on the host, in the simulator's
 * numbering (n, nsteps, job->br); entries the schedule has no row for
 * stay NaN.  kbr, ktc: the kernel's Br and Tc.
 */
static void
fastrun_lay_trace(const struct gpu_job *job, const float *hm,
    const float *ha, const float *hl, const float *hacc, int kbr, int ktr,
    int ktc)
{
	size_t src, dst, b;
	long step;
	int i, j, r, rows;
	float m;

	for (b = 0; b < (size_t)job->n; b++)
		for (i = 0; i < ktr; i++) {
			rows = job->tq - i * kbr < kbr ? job->tq - i * kbr : kbr;
			for (j = 0; j < job->jend[i]; j++) {
				step = job->first[i] + j;
				for (r = 0; r < rows; r++) {
					src = ((b * ktr + i) * ktc + j) * kbr + r;
					dst = (b * job->nsteps + step) * job->br + r;
					m = hm[src];
					job->m_new[dst] = m * job->scale;
					job->alpha[dst] = isinf(m) && m < 0 ?
					    1.0f : ha[src];
					job->l_new[dst] = hl[src];
					if (job->acc != NULL)
						memcpy(job->acc + dst * job->dv,
						    hacc + src * job->d,
						    (size_t)job->dv * sizeof(float));
				}
			}
		}
}

extern "C" int
gpu_fast_launch(struct gpu_job *job, char *err, size_t errlen)
{
	struct fast_config cfg;
	struct fast_trace tr;
	float *stage = NULL, *lse = NULL, *lse_t = NULL, *of = NULL;
	float *times = NULL;
	float *hm = NULL, *ha = NULL, *hl = NULL, *hacc = NULL;
	uint16_t *q = NULL, *k = NULL, *v = NULL, *o = NULL, *o_t = NULL;
	cudaEvent_t *ev = NULL;
	size_t nq, nk, no, ntrace = 0, b, i;
	int bf16 = job->dtype == DTYPE_BF16, ktr = 0, ktc = 0, runs = 0, run;
	int rc = -1;
	const size_t h = sizeof(uint16_t);

	memset(&tr, 0, sizeof tr);
	job->bytes = 0;
	if (fast_attention_variant(job->d, job->variant, &cfg) != 0) {
		snprintf(err, errlen, "the fast kernel has no variant %d at d = %d",
		    job->variant, job->d);
		goto fail;
	}
	nq = (size_t)job->tq * job->d;
	nk = (size_t)job->tk * job->d;
	no = nq * job->n;

	/* The kernel's own memory: Q, K, V, O in 16 bits, lse in float32. */
	CUDA_CHECK(gpu_dev_alloc((void **)&q, no * h, &job->bytes));
	CUDA_CHECK(gpu_dev_alloc((void **)&k, nk * job->n * h, &job->bytes));
	CUDA_CHECK(gpu_dev_alloc((void **)&v, nk * job->n * h, &job->bytes));
	CUDA_CHECK(gpu_dev_alloc((void **)&o, no * h, &job->bytes));
	CUDA_CHECK(gpu_dev_alloc((void **)&lse, (size_t)job->tq * job->n *
	    sizeof(float), &job->bytes));
	/* Conversions only, not counted. */
	CUDA_CHECK(gpu_dev_alloc((void **)&stage, (nq > nk ? nq : nk) *
	    sizeof(float), NULL));
	for (b = 0; b < (size_t)job->n; b++) {
		CUDA_CHECK(cudaMemcpy(stage, job->q[b], nq * sizeof(float),
		    cudaMemcpyHostToDevice));
		fastrun_to16<<<fastrun_blocks(nq), FASTRUN_THREADS>>>(stage,
		    q + b * nq, nq, bf16);
		CUDA_CHECK(cudaGetLastError());
		CUDA_CHECK(cudaMemcpy(stage, job->k[b], nk * sizeof(float),
		    cudaMemcpyHostToDevice));
		fastrun_to16<<<fastrun_blocks(nk), FASTRUN_THREADS>>>(stage,
		    k + b * nk, nk, bf16);
		CUDA_CHECK(cudaGetLastError());
		CUDA_CHECK(cudaMemcpy(stage, job->v[b], nk * sizeof(float),
		    cudaMemcpyHostToDevice));
		fastrun_to16<<<fastrun_blocks(nk), FASTRUN_THREADS>>>(stage,
		    v + b * nk, nk, bf16);
		CUDA_CHECK(cudaGetLastError());
	}
	/* Poisoned: an output the kernel never wrote cannot pass. */
	CUDA_CHECK(cudaMemset(o, 0xff, no * h));
	CUDA_CHECK(cudaMemset(lse, 0xff, (size_t)job->tq * job->n *
	    sizeof(float)));

	/*
	 * The timed runs: one warm-up, then repeat, median kept.  Run r lies
	 * between events r and r + 1, all queued back to back with no wait,
	 * so the GPU is still busy with run r - 1 when the host launches run
	 * r: a timed run's time is the kernel's, not the launch's (a 0.3 ms
	 * kernel would otherwise carry a few microseconds of host calls).
	 */
	runs = job->repeat > 0 ? job->repeat + 1 : 1;
	times = (float *)calloc((size_t)runs, sizeof *times);
	ev = (cudaEvent_t *)calloc((size_t)runs + 1, sizeof *ev);
	if (times == NULL || ev == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (run = 0; run <= runs; run++)
		CUDA_CHECK(cudaEventCreate(&ev[run]));
	CUDA_CHECK(cudaEventRecord(ev[0]));
	for (run = 0; run < runs; run++) {
		if (fast_attention_fwd(q, k, v, o, lse, 1, job->n, job->tq,
		    job->tk, job->d, bf16 ? FAST_BF16 : FAST_FP16, job->causal,
		    job->scale, job->variant, NULL, err, errlen) != 0)
			goto fail;
		CUDA_CHECK(cudaEventRecord(ev[run + 1]));
	}
	CUDA_CHECK(cudaEventSynchronize(ev[runs]));
	for (run = 0; run < runs; run++)
		CUDA_CHECK(cudaEventElapsedTime(&times[run], ev[run],
		    ev[run + 1]));
	job->ms = gpu_dev_median_ms(times, runs);

	if (job->flags & GPU_TRACE) {
		ktr = (job->tq + cfg.br - 1) / cfg.br;
		ktc = (job->tk + cfg.bc - 1) / cfg.bc;
		ntrace = (size_t)job->n * ktr * ktc * cfg.br;
		CUDA_CHECK(gpu_dev_alloc((void **)&tr.m, ntrace * sizeof(float),
		    NULL));
		CUDA_CHECK(gpu_dev_alloc((void **)&tr.alpha, ntrace *
		    sizeof(float), NULL));
		CUDA_CHECK(gpu_dev_alloc((void **)&tr.l, ntrace * sizeof(float),
		    NULL));
		CUDA_CHECK(cudaMemset(tr.m, 0xff, ntrace * sizeof(float)));
		CUDA_CHECK(cudaMemset(tr.alpha, 0xff, ntrace * sizeof(float)));
		CUDA_CHECK(cudaMemset(tr.l, 0xff, ntrace * sizeof(float)));
		if (job->flags & GPU_TRACE_ACC) {
			CUDA_CHECK(gpu_dev_alloc((void **)&tr.acc, ntrace *
			    job->d * sizeof(float), NULL));
			CUDA_CHECK(cudaMemset(tr.acc, 0xff, ntrace * job->d *
			    sizeof(float)));
		}
		/* The trace run's own O and lse, kept only under the fault. */
		CUDA_CHECK(gpu_dev_alloc((void **)&o_t, no * h, NULL));
		CUDA_CHECK(gpu_dev_alloc((void **)&lse_t, (size_t)job->tq *
		    job->n * sizeof(float), NULL));
		CUDA_CHECK(cudaMemset(o_t, 0xff, no * h));
		CUDA_CHECK(cudaMemset(lse_t, 0xff, (size_t)job->tq * job->n *
		    sizeof(float)));
		tr.test_no_rescale = (job->flags & GPU_TEST_NO_RESCALE) != 0;
		if (fast_attention_trace(q, k, v, o_t, lse_t, 1, job->n,
		    job->tq, job->tk, job->d, bf16 ? FAST_BF16 : FAST_FP16,
		    job->causal, job->scale, job->variant, &tr, NULL, err,
		    errlen) != 0)
			goto fail;
		CUDA_CHECK(cudaDeviceSynchronize());
		if (tr.test_no_rescale) {
			CUDA_CHECK(cudaMemcpy(o, o_t, no * h,
			    cudaMemcpyDeviceToDevice));
			CUDA_CHECK(cudaMemcpy(lse, lse_t, (size_t)job->tq *
			    job->n * sizeof(float), cudaMemcpyDeviceToDevice));
		}
		hm = (float *)malloc(ntrace * sizeof(float));
		ha = (float *)malloc(ntrace * sizeof(float));
		hl = (float *)malloc(ntrace * sizeof(float));
		if (tr.acc != NULL)
			hacc = (float *)malloc(ntrace * job->d * sizeof(float));
		if (hm == NULL || ha == NULL || hl == NULL ||
		    (tr.acc != NULL && hacc == NULL)) {
			snprintf(err, errlen, "out of memory for the GPU trace");
			goto fail;
		}
		CUDA_CHECK(cudaMemcpy(hm, tr.m, ntrace * sizeof(float),
		    cudaMemcpyDeviceToHost));
		CUDA_CHECK(cudaMemcpy(ha, tr.alpha, ntrace * sizeof(float),
		    cudaMemcpyDeviceToHost));
		CUDA_CHECK(cudaMemcpy(hl, tr.l, ntrace * sizeof(float),
		    cudaMemcpyDeviceToHost));
		if (hacc != NULL)
			CUDA_CHECK(cudaMemcpy(hacc, tr.acc, ntrace * job->d *
			    sizeof(float), cudaMemcpyDeviceToHost));
		/* Rows the schedule has no entry for stay NaN, as teach's. */
		i = (size_t)job->n * job->nsteps * job->br;
		memset(job->m_new, 0xff, i * sizeof(float));
		memset(job->alpha, 0xff, i * sizeof(float));
		memset(job->l_new, 0xff, i * sizeof(float));
		if (job->acc != NULL)
			memset(job->acc, 0xff, i * job->dv * sizeof(float));
		fastrun_lay_trace(job, hm, ha, hl, hacc, cfg.br, ktr, ktc);
	}

	/* O back in float32 (exact). */
	CUDA_CHECK(gpu_dev_alloc((void **)&of, no * sizeof(float), NULL));
	fastrun_from16<<<fastrun_blocks(no), FASTRUN_THREADS>>>(o, of, no,
	    bf16);
	CUDA_CHECK(cudaGetLastError());
	if (job->o != NULL)
		CUDA_CHECK(cudaMemcpy(job->o, of, no * sizeof(float),
		    cudaMemcpyDeviceToHost));
	if (job->lse != NULL)
		CUDA_CHECK(cudaMemcpy(job->lse, lse, (size_t)job->tq * job->n *
		    sizeof(float), cudaMemcpyDeviceToHost));
	rc = 0;
fail:
	for (run = 0; ev != NULL && run <= runs; run++)
		if (ev[run] != NULL)
			cudaEventDestroy(ev[run]);
	free(ev);
	cudaFree(q);
	cudaFree(k);
	cudaFree(v);
	cudaFree(o);
	cudaFree(o_t);
	cudaFree(lse);
	cudaFree(lse_t);
	cudaFree(stage);
	cudaFree(of);
	cudaFree(tr.m);
	cudaFree(tr.alpha);
	cudaFree(tr.l);
	cudaFree(tr.acc);
	free(times);
	free(hm);
	free(ha);
	free(hl);
	free(hacc);
	return rc;
}
