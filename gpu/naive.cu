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
 * are 32 neighbouring floats.  fp32 only, no bug modes, no trace.
 */
#include "config.h"

#include "cudacheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "kernels.h"
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

extern "C" int
gpu_naive_launch(struct gpu_job *job, char *err, size_t errlen)
{
	float *q = NULL, *kt = NULL, *v = NULL, *given = NULL, *S = NULL, *P = NULL;
	float *mrow = NULL, *lrow = NULL, *o = NULL, *lse = NULL, *times = NULL;
	cudaEvent_t ev0 = NULL, ev1 = NULL;
	size_t nq, nk, nv, ns, rows, b, blocks;
	int runs, run, rc = -1;

	job->bytes = 0;
	nq = (size_t)job->tq * job->d;
	nk = (size_t)job->tk * job->d;
	nv = (size_t)job->tk * job->dv;
	ns = (size_t)job->tq * job->tk;
	rows = (size_t)job->tq * job->n;
	CUDA_CHECK(gpu_dev_floats(&q, nq * job->n, &job->bytes));
	CUDA_CHECK(gpu_dev_floats(&kt, nk * job->n, &job->bytes));
	CUDA_CHECK(gpu_dev_floats(&v, nv * job->n, &job->bytes));
	if (job->scores)
		CUDA_CHECK(gpu_dev_floats(&given, ns * job->n, &job->bytes));
	CUDA_CHECK(gpu_dev_floats(&S, ns * job->n, &job->bytes));
	CUDA_CHECK(gpu_dev_floats(&P, ns * job->n, &job->bytes));
	CUDA_CHECK(gpu_dev_floats(&mrow, rows, &job->bytes));
	CUDA_CHECK(gpu_dev_floats(&lrow, rows, &job->bytes));
	CUDA_CHECK(gpu_dev_floats(&o, rows * job->dv, &job->bytes));
	CUDA_CHECK(gpu_dev_floats(&lse, rows, &job->bytes));
	for (b = 0; b < (size_t)job->n; b++) {
		if (job->scores)
			CUDA_CHECK(cudaMemcpy(given + b * ns, job->s[b], ns *
			    sizeof(float), cudaMemcpyHostToDevice));
		else {
			CUDA_CHECK(cudaMemcpy(q + b * nq, job->q[b], nq * sizeof(float),
			    cudaMemcpyHostToDevice));
			CUDA_CHECK(cudaMemcpy(kt + b * nk, job->kt[b], nk * sizeof(float),
			    cudaMemcpyHostToDevice));
		}
		CUDA_CHECK(cudaMemcpy(v + b * nv, job->v[b], nv * sizeof(float),
		    cudaMemcpyHostToDevice));
	}
	if (rows > 0x7fffffff) {
		snprintf(err, errlen, "%zu rows are more than one launch takes", rows);
		goto fail;
	}
	CUDA_CHECK(cudaEventCreate(&ev0));
	CUDA_CHECK(cudaEventCreate(&ev1));
	runs = job->repeat > 0 ? job->repeat + 1 : 1;
	times = (float *)calloc((size_t)runs, sizeof *times);
	if (times == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (run = 0; run < runs; run++) {
		CUDA_CHECK(cudaEventRecord(ev0));
		blocks = (ns * job->n + NAIVE_THREADS - 1) / NAIVE_THREADS;
		naive_scores<<<(unsigned)blocks, NAIVE_THREADS>>>(q, kt, given, S,
		    job->n, job->tq, job->tk, job->d, job->scale, job->causal,
		    job->scores);
		CUDA_CHECK(cudaGetLastError());
		naive_softmax<<<(unsigned)rows, NAIVE_THREADS>>>(S, P, mrow, lrow,
		    job->tk);
		CUDA_CHECK(cudaGetLastError());
		blocks = (rows * job->dv + NAIVE_THREADS - 1) / NAIVE_THREADS;
		naive_pv<<<(unsigned)blocks, NAIVE_THREADS>>>(P, v, mrow, lrow, o,
		    lse, job->n, job->tq, job->tk, job->dv);
		CUDA_CHECK(cudaGetLastError());
		CUDA_CHECK(cudaEventRecord(ev1));
		CUDA_CHECK(cudaEventSynchronize(ev1));
		CUDA_CHECK(cudaEventElapsedTime(&times[run], ev0, ev1));
	}
	job->ms = gpu_dev_median_ms(times, runs);
	if (job->o != NULL)
		CUDA_CHECK(cudaMemcpy(job->o, o, rows * job->dv * sizeof(float),
		    cudaMemcpyDeviceToHost));
	if (job->lse != NULL)
		CUDA_CHECK(cudaMemcpy(job->lse, lse, rows * sizeof(float),
		    cudaMemcpyDeviceToHost));
	rc = 0;
fail:
	if (ev0 != NULL)
		cudaEventDestroy(ev0);
	if (ev1 != NULL)
		cudaEventDestroy(ev1);
	cudaFree(q);
	cudaFree(kt);
	cudaFree(v);
	cudaFree(given);
	cudaFree(S);
	cudaFree(P);
	cudaFree(mrow);
	cudaFree(lrow);
	cudaFree(o);
	cudaFree(lse);
	free(times);
	return rc;
}
