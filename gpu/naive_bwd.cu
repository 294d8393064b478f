/*
 * naive_bwd.cu - standard attention's backward on the GPU, the naive
 * kernel's backward (kernel.c's gpu_backward_naive) and the bottom rung of
 * the backward's ladder (ladder.c).
 *
 * The backward as autograd runs it for softmax(scale Q K^T) V: every
 * intermediate a whole (Tq, Tk) float32 array in device memory, one
 * thread per output entry, one kernel per operation:
 *
 *   naive_bwd_probs  P = exp(S - lse), S = scale Q K^T recomputed (or the
 *                    scores problem's S), masked entries 0
 *   naive_bwd_dsum   D = rowsum(dO o O), O as the forward stores it (in
 *                    the dtype)
 *   naive_bwd_dv     dV = P^T dO
 *   naive_bwd_dp     dP = dO V^T, into G
 *   naive_bwd_ds     dS = P o (dP - D), G overwritten in place: a scores
 *                    problem's gradient
 *   naive_bwd_dq     dQ = scale dS K
 *   naive_bwd_dk     dK = scale dS^T Q
 *
 * Autograd keeps the forward's P; here the forward's arrays are gone
 * when the backward runs (the job brings O and lse), so the first kernel
 * rebuilds P whole from Q, K and lse, the cost of one more product.
 * Device memory then holds P and G, two (Tq, Tk) arrays per problem, as
 * the forward holds S and P: O(Tq Tk), against the tiled backwards'
 * O(Tq d).  No tiles, no atomics: each entry of dQ is one thread's sum
 * over every key, so --dq atomic and ordered give the same bits, and
 * there is no step trace.  Float32 arithmetic; P and dS are rounded to
 * the dtype where the products read them, as a framework that stores
 * them in fp16 or bf16 reads them (the simulator's rule, backward.c).
 * No bug modes.
 *
 * Why the teaching backward's tolerance holds (TEACH_BWD_RTOL, _FP16,
 * _BF16: kernel.c's entry).  Built with -fmad=false (gpu/local.mk), so
 * every sum over x (S, dP, D) is the simulator's operations in its order
 * and the same bits: S sums q[x] k[x] over x and then scales, as
 * teach_step_score and the simulator do.  P then differs by the two
 * expf's, about 3 units in the last place, and dS by the same relative
 * amount.  Each gradient entry is a sum of such terms, here over every
 * row (or key) at once where the simulator sums tile by tile and adds
 * to an accumulator: another order of the same terms, whose roundings
 * stay within (3 + n) units of the sum of the terms' magnitudes and
 * grow like sqrt(n) in practice, the bound teach_bwd.cu derives for its
 * atomic dQ.  With P and dS rounded to 16 bits, a value one unit off can
 * round to its neighbour: one unit of the dtype of one term, which the
 * fp16 and bf16 bounds (two units) cover.
 */
#include "config.h"

#include "cudacheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "kernels.h"
#include "timing.h"
#include "model/tile_rule.h"
}

#define NAIVE_BWD_THREADS 256

/* What one run reads and writes: device arrays and the shape.  Problem
 * b's arrays follow problem b - 1's. */
struct naive_bwd_run {
	const float *q, *k, *v, *s;	/* (n, Tq, d) (n, Tk, d) (n, Tk, dv) (n, Tq, Tk) */
	const float *o, *dout, *lse;	/* (n, Tq, dv) x2, (n, Tq) */
	float *P, *G, *D;		/* (n, Tq, Tk) x2, (n, Tq) */
	float *gq, *gk, *gv;		/* dQ (n, Tq, d), dK (n, Tk, d), dV (n, Tk, dv) */
	int n, tq, tk, d, dv, causal, scores, dtype;
	float scale;
};

/* P[b][r][c] = exp(S - lse[b][r]); 0 where the causal mask hides key c
 * (bottom right: c > r + Tk - Tq) or where the row sees no key (lse =
 * -inf, where exp(-inf + inf) would be NaN). */
__global__ static void
naive_bwd_probs(struct naive_bwd_run R)
{
	const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const size_t per = (size_t)R.tq * R.tk;
	size_t b, row;
	int r, c, x;
	float s, l;

	if (e >= per * R.n)
		return;
	b = e / per;
	r = (int)(e % per / R.tk);
	c = (int)(e % R.tk);
	row = b * R.tq + r;
	l = R.lse[row];
	if ((R.causal && (long)c > (long)r + R.tk - R.tq) || l == -INFINITY) {
		R.P[e] = 0.0f;
		return;
	}
	if (R.scores)
		s = R.s[e];
	else {
		const float *qr = R.q + row * R.d;
		const float *kc = R.k + (b * R.tk + c) * R.d;

		s = 0.0f;
		for (x = 0; x < R.d; x++)
			s += qr[x] * kc[x];
		s *= R.scale;
	}
	R.P[e] = expf(s - l);
}

/* D[row] = sum over x of dO o O, in order; one thread per query row. */
__global__ static void
naive_bwd_dsum(struct naive_bwd_run R)
{
	const size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	float sum = 0.0f;
	int x;

	if (row >= (size_t)R.n * R.tq)
		return;
	for (x = 0; x < R.dv; x++)
		sum += R.dout[row * R.dv + x] *
		    tile_rule_round(R.dtype, R.o[row * R.dv + x]);
	R.D[row] = sum;
}

/* dV[b][c][x] = sum over the query rows r of P[b][r][c] dO[b][r][x],
 * with P in the dtype. */
__global__ static void
naive_bwd_dv(struct naive_bwd_run R)
{
	const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const size_t per = (size_t)R.tk * R.dv;
	size_t b;
	int r, c, x;
	float sum = 0.0f;

	if (e >= per * R.n)
		return;
	b = e / per;
	c = (int)(e % per / R.dv);
	x = (int)(e % R.dv);
	for (r = 0; r < R.tq; r++)
		sum += tile_rule_round(R.dtype, R.P[(b * R.tq + r) * R.tk + c]) *
		    R.dout[(b * R.tq + r) * R.dv + x];
	R.gv[e] = sum;
}

/* G[b][r][c] = dP = sum over x of dO[b][r][x] V[b][c][x], in order. */
__global__ static void
naive_bwd_dp(struct naive_bwd_run R)
{
	const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const size_t per = (size_t)R.tq * R.tk;
	size_t b;
	const float *g, *vc;
	float sum = 0.0f;
	int r, c, x;

	if (e >= per * R.n)
		return;
	b = e / per;
	r = (int)(e % per / R.tk);
	c = (int)(e % R.tk);
	g = R.dout + (b * R.tq + r) * R.dv;
	vc = R.v + (b * R.tk + c) * R.dv;
	for (x = 0; x < R.dv; x++)
		sum += g[x] * vc[x];
	R.G[e] = sum;
}

/* G = dS = P o (dP - D), in place, from the float32 P: softmax's
 * backward, elementwise.  A hidden entry has P = 0, so dS = 0. */
__global__ static void
naive_bwd_ds(struct naive_bwd_run R)
{
	const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (e >= (size_t)R.n * R.tq * R.tk)
		return;
	R.G[e] = R.P[e] * (R.G[e] - R.D[e / R.tk]);
}

/* dQ[b][r][x] = scale (sum over the keys c of dS[b][r][c] K[b][c][x]),
 * with dS in the dtype. */
__global__ static void
naive_bwd_dq(struct naive_bwd_run R)
{
	const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const size_t per = (size_t)R.tq * R.d;
	size_t b;
	const float *gr;
	float sum = 0.0f;
	int r, c, x;

	if (e >= per * R.n)
		return;
	b = e / per;
	r = (int)(e % per / R.d);
	x = (int)(e % R.d);
	gr = R.G + (b * R.tq + r) * R.tk;
	for (c = 0; c < R.tk; c++)
		sum += tile_rule_round(R.dtype, gr[c]) *
		    R.k[(b * R.tk + c) * R.d + x];
	R.gq[e] = R.scale * sum;
}

/* dK[b][c][x] = scale (sum over the query rows r of dS[b][r][c]
 * Q[b][r][x]), with dS in the dtype. */
__global__ static void
naive_bwd_dk(struct naive_bwd_run R)
{
	const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const size_t per = (size_t)R.tk * R.d;
	size_t b;
	float sum = 0.0f;
	int r, c, x;

	if (e >= per * R.n)
		return;
	b = e / per;
	c = (int)(e % per / R.d);
	x = (int)(e % R.d);
	for (r = 0; r < R.tq; r++)
		sum += tile_rule_round(R.dtype, R.G[(b * R.tq + r) * R.tk + c]) *
		    R.q[(b * R.tq + r) * R.d + x];
	R.gk[e] = R.scale * sum;
}

/* Blocks of NAIVE_BWD_THREADS for count threads (count > 0). */
static unsigned
naive_bwd_blocks(size_t count)
{
	return (unsigned)((count + NAIVE_BWD_THREADS - 1) / NAIVE_BWD_THREADS);
}

/* One run's launches, in the order above, queued without waiting
 * (timing.h).  Every entry of every output is written, so runs repeat
 * without clearing anything. */
static int
naive_bwd_enqueue(void *ctx, char *err, size_t errlen)
{
	const struct naive_bwd_run *r = (const struct naive_bwd_run *)ctx;
	const size_t n = (size_t)r->n;
	const size_t ns = n * r->tq * r->tk, rows = n * r->tq;
	const size_t nv = n * r->tk * r->dv;
	const size_t nq = n * r->tq * r->d, nk = n * r->tk * r->d;

	if (ns > 0) {
		naive_bwd_probs<<<naive_bwd_blocks(ns), NAIVE_BWD_THREADS>>>(*r);
		CUDA_CHECK(cudaGetLastError());
	}
	if (rows > 0) {
		naive_bwd_dsum<<<naive_bwd_blocks(rows), NAIVE_BWD_THREADS>>>(*r);
		CUDA_CHECK(cudaGetLastError());
	}
	if (nv > 0) {
		naive_bwd_dv<<<naive_bwd_blocks(nv), NAIVE_BWD_THREADS>>>(*r);
		CUDA_CHECK(cudaGetLastError());
	}
	if (ns > 0) {
		naive_bwd_dp<<<naive_bwd_blocks(ns), NAIVE_BWD_THREADS>>>(*r);
		CUDA_CHECK(cudaGetLastError());
		naive_bwd_ds<<<naive_bwd_blocks(ns), NAIVE_BWD_THREADS>>>(*r);
		CUDA_CHECK(cudaGetLastError());
	}
	/* A scores problem (d = 0) has no Q or K: dS is its gradient. */
	if (nq > 0) {
		naive_bwd_dq<<<naive_bwd_blocks(nq), NAIVE_BWD_THREADS>>>(*r);
		CUDA_CHECK(cudaGetLastError());
	}
	if (nk > 0) {
		naive_bwd_dk<<<naive_bwd_blocks(nk), NAIVE_BWD_THREADS>>>(*r);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
fail:
	return -1;
}

/* Floats of one problem's device arrays: the inputs (Q, K, V or S, V),
 * O, dO, lse, D, P and G, and the gradients. */
static double
naive_bwd_floats(int scores, double tq, double tk, double d, double dv)
{
	if (scores)
		d = 0;
	return tq * d + tk * d + tk * dv + (scores ? tq * tk : 0.0) +
	    2.0 * tq * dv + 2.0 * tq + 2.0 * tq * tk + tq * d + tk * d + tk * dv;
}

/* Device bytes n problems like p need (struct gpu_backward's
 * device_bytes): what naive_bwd_launch allocates. */
extern "C" double
naive_bwd_device_bytes(const struct problem *p, int n)
{
	return 4.0 * n * naive_bwd_floats(p->scores_mode, p->tq, p->tk, p->d,
	    p->dv);
}

/* A device copy of count host floats (none when count is 0). */
static cudaError_t
naive_bwd_upload(struct gpu_mem *mem, const float **dst, const float *src,
    size_t count)
{
	float *x;
	cudaError_t e;

	*dst = NULL;
	if (count == 0 || src == NULL)
		return cudaSuccess;
	e = gpu_mem_floats(mem, &x, count, GPU_MEM_KERNEL);
	if (e != cudaSuccess)
		return e;
	*dst = x;
	return cudaMemcpy(x, src, count * sizeof(float), cudaMemcpyHostToDevice);
}

/* A host copy of count device floats (none when count is 0). */
static cudaError_t
naive_bwd_download(float *dst, const float *src, size_t count)
{
	if (count == 0 || dst == NULL)
		return cudaSuccess;
	return cudaMemcpy(dst, src, count * sizeof(float),
	    cudaMemcpyDeviceToHost);
}

/*
 * The kernel table's entry (kernel.c: the naive kernel's backward): the
 * job's host arrays up, the run timed (timing.h), the gradients down
 * into job->g, and the device memory it held.
 */
extern "C" int
naive_bwd_launch(const struct gpu_bwd_job *job, char *err, size_t errlen)
{
	struct gpu_grads *g = job->g;
	struct gpu_mem mem = GPU_MEM_INIT;
	struct naive_bwd_run r;
	size_t n, nq, nk, nv, ns, no, rows, biggest;
	int rc = -1;

	memset(&r, 0, sizeof r);
	r.n = job->n;
	r.tq = job->tq;
	r.tk = job->tk;
	r.d = job->d;
	r.dv = job->dv;
	r.causal = job->causal;
	r.scores = job->s != NULL;	/* packed for a scores problem alone */
	r.dtype = job->dtype;
	r.scale = job->scale;
	n = (size_t)job->n;
	nq = n * job->tq * job->d;
	nk = n * job->tk * job->d;
	nv = n * job->tk * job->dv;
	ns = n * job->tq * job->tk;
	no = n * job->tq * job->dv;
	rows = n * job->tq;
	/* One thread an entry: the largest launch must fit in a grid. */
	biggest = ns > nv ? ns : nv;
	biggest = biggest > nq ? biggest : nq;
	biggest = biggest > nk ? biggest : nk;
	if (biggest / NAIVE_BWD_THREADS >= 0x7fffffff) {
		snprintf(err, errlen, "naive backward: %zu entries are more than "
		    "one launch takes", biggest);
		goto fail;
	}
	CUDA_CHECK(naive_bwd_upload(&mem, &r.q, job->q, nq));
	CUDA_CHECK(naive_bwd_upload(&mem, &r.k, job->k, nk));
	CUDA_CHECK(naive_bwd_upload(&mem, &r.v, job->v, nv));
	CUDA_CHECK(naive_bwd_upload(&mem, &r.s, r.scores ? job->s : NULL, ns));
	CUDA_CHECK(naive_bwd_upload(&mem, &r.o, job->in.o, no));
	CUDA_CHECK(naive_bwd_upload(&mem, &r.dout, job->in.dout, no));
	CUDA_CHECK(naive_bwd_upload(&mem, &r.lse, job->in.lse, rows));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.D, rows, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.P, ns, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.G, ns, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.gq, nq, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.gk, nk, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &r.gv, nv, GPU_MEM_KERNEL));
	if (timing_median_ms(naive_bwd_enqueue, &r, job->repeat, &g->ms, err,
	    errlen) != 0)
		goto fail;
	CUDA_CHECK(naive_bwd_download(g->grad_q, r.gq, nq));
	CUDA_CHECK(naive_bwd_download(g->grad_k, r.gk, nk));
	CUDA_CHECK(naive_bwd_download(g->grad_v, r.gv, nv));
	if (r.scores)
		CUDA_CHECK(naive_bwd_download(g->grad_s, r.G, ns));
	g->device_bytes = mem.bytes;
	rc = 0;
fail:
	gpu_mem_free(&mem);
	return rc;
}
