/*
 * naive.cu - standard attention on the GPU, the baseline of `bench --gpu`.
 *
 * The FlashAttention paper's Algorithm 0: the whole score matrix goes to
 * device memory and comes back.  Three kernels per problem batch:
 *
 *   naive_scores   S = scale Q K^T (Tq, Tk), masked entries -inf
 *   naive_softmax  per row: m = max S, P = exp(S - m) (Tq, Tk), l = sum P
 *   naive_pv       O = P V / l, lse = m + log l
 *
 * S and P are separate (Tq, Tk) float32 arrays, as a framework that runs
 * the three operations one after the other holds them: at Tq = Tk = 16384
 * that is 2 GiB per head, against the teaching kernel's O(Tq d).  One
 * thread per output entry, K read transposed (d, Tk) so a warp's 32 keys
 * are 32 neighbouring floats.  Float32 arithmetic on inputs of any dtype
 * (P is not rounded), no bug modes, no trace.
 */
#include "config.h"

#include "cudacheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "kernels.h"
#include "timing.h"
}

#define NAIVE_THREADS 256

/* S[b][r][c] over all n problems, one thread per entry. */
__global__ static void
naive_scores(const float *q, const float *kt, const float *given, float *S,
    int n, int tq, int tk, int d, float scale, int causal, int scores)
{
	size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t per = (size_t)tq * tk, b;
	int r, c, x;
	float s;

	if (e >= per * n)
		return;
	b = e / per;
	r = (int)(e % per / tk);
	c = (int)(e % tk);
	if (scores)
		s = given[e];
	else {
		const float *qr = q + (b * tq + r) * d, *kc = kt + b * d * tk + c;
		s = 0.0f;
		for (x = 0; x < d; x++)
			s += qr[x] * kc[(size_t)x * tk];
		s *= scale;
	}
	if (causal && (long)c > (long)r + tk - tq)
		s = -INFINITY;
	S[e] = s;
}

/* One block per row of S (all problems' rows in turn): the max and the
 * sum by tree reductions in shared memory, P written beside S. */
__global__ static void
naive_softmax(const float *S, float *P, float *mrow, float *lrow, int tk)
{
	__shared__ float red[NAIVE_THREADS];
	const float *srow = S + (size_t)blockIdx.x * tk;
	float *prow = P + (size_t)blockIdx.x * tk;
	float m = -INFINITY, l = 0.0f;
	int c, h;

	for (c = threadIdx.x; c < tk; c += blockDim.x)
		m = fmaxf(m, srow[c]);
	red[threadIdx.x] = m;
	__syncthreads();
	for (h = blockDim.x / 2; h > 0; h /= 2) {
		if ((int)threadIdx.x < h)
			red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + h]);
		__syncthreads();
	}
	m = red[0];
	__syncthreads();
	/* A row with every key masked has m = -inf: P = 0, not NaN. */
	for (c = threadIdx.x; c < tk; c += blockDim.x) {
		float p = m == -INFINITY ? 0.0f : expf(srow[c] - m);
		prow[c] = p;
		l += p;
	}
	red[threadIdx.x] = l;
	__syncthreads();
	for (h = blockDim.x / 2; h > 0; h /= 2) {
		if ((int)threadIdx.x < h)
			red[threadIdx.x] += red[threadIdx.x + h];
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		mrow[blockIdx.x] = m;
		lrow[blockIdx.x] = red[0];
	}
}

/* O[row][x] = sum_c P[row][c] V[c][x] / l[row]; one thread per entry. */
__global__ static void
naive_pv(const float *P, const float *v, const float *mrow, const float *lrow,
    float *o, float *lse, int n, int tq, int tk, int dv)
{
	size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t row = e / dv, b;
	const float *prow, *vb;
	float acc = 0.0f, l;
	int x = (int)(e % dv), c;

	if (e >= (size_t)n * tq * dv)
		return;
	b = row / tq;
	prow = P + row * tk;
	vb = v + b * tk * dv;
	for (c = 0; c < tk; c++)
		acc += prow[c] * vb[(size_t)c * dv + x];
	l = lrow[row];
	o[e] = l > 0.0f ? acc / l : 0.0f;
	if (x == 0)
		lse[row] = l > 0.0f ? mrow[row] + logf(l) : -INFINITY;
}

/* What one run reads and writes: device arrays and the shape. */
struct naive_run {
	const float *q, *kt, *given, *v;
	float *S, *P, *mrow, *lrow, *o, *lse;
	int n, tq, tk, d, dv, causal, scores;
	float scale;
};

/* One run's three launches, queued without waiting (timing.h). */
static int
naive_enqueue(void *ctx, char *err, size_t errlen)
{
	const struct naive_run *r = (const struct naive_run *)ctx;
	size_t ns = (size_t)r->tq * r->tk * r->n, rows = (size_t)r->tq * r->n;
	size_t blocks = (ns + NAIVE_THREADS - 1) / NAIVE_THREADS;

	naive_scores<<<(unsigned)blocks, NAIVE_THREADS>>>(r->q, r->kt,
	    r->given, r->S, r->n, r->tq, r->tk, r->d, r->scale, r->causal,
	    r->scores);
	CUDA_CHECK(cudaGetLastError());
	naive_softmax<<<(unsigned)rows, NAIVE_THREADS>>>(r->S, r->P, r->mrow,
	    r->lrow, r->tk);
	CUDA_CHECK(cudaGetLastError());
	blocks = (rows * r->dv + NAIVE_THREADS - 1) / NAIVE_THREADS;
	naive_pv<<<(unsigned)blocks, NAIVE_THREADS>>>(r->P, r->v, r->mrow,
	    r->lrow, r->o, r->lse, r->n, r->tq, r->tk, r->dv);
	CUDA_CHECK(cudaGetLastError());
	return 0;
fail:
	return -1;
}

/* Q, K^T, V (or S, V), S, P, O and three floats a row, per problem. */
extern "C" double
naive_device_bytes(const struct problem *p, int n)
{
	double t = p->tq, k = p->tk;

	return 4.0 * n * (t * p->d + k * p->d + k * p->dv +
	    (p->scores_mode ? t * k : 0.0) + 2.0 * t * k + t * p->dv + 3.0 * t);
}

extern "C" int
naive_launch(const struct gpu_job *job, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	struct gpu_mem mem = GPU_MEM_INIT;
	struct naive_run r;
	float *q, *kt, *v, *given;
	size_t nq, nk, nv, ns, rows, b;
	int rc = -1;

	memset(&r, 0, sizeof r);
	r.n = job->n;
	r.tq = p->tq;
	r.tk = p->tk;
	r.d = p->d;
	r.dv = p->dv;
	r.causal = p->causal;
	r.scores = p->scores_mode;
	r.scale = p->scale;
	nq = (size_t)p->tq * p->d;
	nk = (size_t)p->tk * p->d;
	nv = (size_t)p->tk * p->dv;
	ns = (size_t)p->tq * p->tk;
	rows = (size_t)p->tq * job->n;
	if (rows > 0x7fffffff) {
		snprintf(err, errlen, "%zu rows are more than one launch takes",
		    rows);
		goto fail;
	}
	CUDA_CHECK(gpu_mem_floats(&mem, &q, nq * job->n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &kt, nk * job->n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &v, nv * job->n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &given, p->scores_mode ? ns * job->n :
	    0, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.S, ns * job->n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.P, ns * job->n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.mrow, rows, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.lrow, rows, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.o, rows * p->dv, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.lse, rows, GPU_MEM_KERNEL));
	for (b = 0; b < (size_t)job->n; b++) {
		if (p->scores_mode)
			CUDA_CHECK(cudaMemcpy(given + b * ns, job->ps[b].s, ns *
			    sizeof(float), cudaMemcpyHostToDevice));
		else {
			CUDA_CHECK(cudaMemcpy(q + b * nq, job->ps[b].q, nq *
			    sizeof(float), cudaMemcpyHostToDevice));
			CUDA_CHECK(cudaMemcpy(kt + b * nk, job->ps[b].kt, nk *
			    sizeof(float), cudaMemcpyHostToDevice));
		}
		CUDA_CHECK(cudaMemcpy(v + b * nv, job->ps[b].v, nv *
		    sizeof(float), cudaMemcpyHostToDevice));
	}
	r.q = q;
	r.kt = kt;
	r.v = v;
	r.given = given;
	if (timing_median_ms(naive_enqueue, &r, job->repeat, &job->res->ms, err,
	    errlen) != 0)
		goto fail;
	job->res->device_bytes = mem.bytes;
	CUDA_CHECK(cudaMemcpy(job->res->o, r.o, rows * p->dv * sizeof(float),
	    cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(job->res->lse, r.lse, rows * sizeof(float),
	    cudaMemcpyDeviceToHost));
	rc = 0;
fail:
	gpu_mem_free(&mem);
	return rc;
}
