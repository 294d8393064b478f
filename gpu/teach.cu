/*
 * teach.cu - the teaching kernel: FlashAttention's tiled loop in float32.
 *
 * Read it beside src/model/sim.c.  tile_step() below is the simulator's
 * tile_scores() and tile_apply(), phase by phase, with the same letters
 * (Tq, Tk, d, dv, Br, Bc; m, l, alpha, acc) and the same order in every
 * sum: each score sums q[x] k[x] over x = 0 .. d-1 and then scales, each
 * row sum and each entry of P V runs over the tile's keys in order.  The
 * file is built with -fmad=false (no fused multiply-adds), as the
 * simulator is with -ffp-contract=off, so a value can differ from the
 * simulator's only where CUDA's expf and logf differ from the C
 * library's.  gpu/gpucheck.c says how much that is.
 *
 * version 1 (the only one): clarity over speed.  One block of
 * TEACH_THREADS threads per (query tile i, problem b); each phase is a
 * loop of the block's threads over the tile's entries, rows, or (row,
 * column) pairs, and a barrier ends each phase.
 *
 *   fa2  teach_fa2: one launch.  The block loops over the key tiles j =
 *        0 .. jend(i)-1 of its row block; Q_i, m, l and acc stay in shared
 *        memory the whole time, and O_i and lse_i are written once.
 *   fa1  teach_fa1: one launch per key block j; the host runs the outer
 *        loop.  Each block brings its row block's m, l and accumulator
 *        back from global memory, applies tile (i, j), and writes them out
 *        again: the accumulator lives in its rows of O, as in the
 *        FlashAttention paper's Algorithm 1.  The launch boundary is the
 *        grid-wide barrier this order needs (step (i, j) must see what
 *        step (i, j-1) wrote) without cooperative launches, and it makes
 *        the round trip through global memory literal.
 *
 * Shared memory of one block, in floats (teach_smem_floats):
 *   Q_i   Br x d         K_j   Bc x (d + 1)      V_j   Bc x dv
 *   S, P  Br x (Bc + 1)  acc   Br x dv           m, l, m_new, alpha,
 *                                                rowsum, l_new: 6 x Br
 * K_j's and S's rows are padded by one float.  In the scores phase the 32
 * threads of a warp read 32 different keys at the same x, and in the row
 * phases 32 different rows at the same key: a row stride of d + 1 (Bc + 1)
 * puts them in 32 different banks, where a stride of 64 would put them all
 * in one and make the warp wait 32 times.
 *
 * Trace (GPU_TRACE): after each step the block writes m_new, alpha and
 * l_new of the tile's rows to entry (b, step, r) of three device arrays,
 * step in the simulator's numbering (schedule.h: fa2 step = first[i] + j,
 * fa1 step = first[j] + i - ibegin[j]); GPU_TRACE_ACC adds the
 * accumulator rows.  The host lays them against sim_run's steps.
 */
#include "config.h"

#include "cudacheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" {
#include "kernels.h"
#include "model/dtype.h"
#include "model/online.h"
#include "model/online_rule.h"
#include "model/schedule.h"
#include "timing.h"
}

#define TEACH_THREADS 256

/* Everything a block reads: passed by value to every launch. */
struct teach_params {
	const float *q, *k, *v, *s;	/* (n, Tq, d) (n, Tk, d) (n, Tk, dv) (n, Tq, Tk) */
	float *o, *lse;			/* (n, Tq, dv) (n, Tq); fa1 keeps acc in o */
	float *m, *l;			/* fa1: m and l between launches, (n, Tq) */
	float *tr_m, *tr_alpha, *tr_l, *tr_acc;	/* the trace, or NULL */
	const int *jend, *ibegin;
	const long *first;
	long nsteps;
	int tq, tk, d, dv, br, bc;
	float scale;
	int causal, scores, dtype, convention, bug, no_rescale;
	int j;				/* fa1: this launch's key block */
};

/* One block's shared memory, carved into the arrays of the picture above. */
struct teach_tile {
	float *q, *k, *v, *s, *acc;
	float *m, *l, *m_new, *alpha, *rowsum, *l_new;
};

__host__ __device__ static size_t
teach_smem_floats(int br, int bc, int d, int dv)
{
	return (size_t)br * d + (size_t)bc * (d + 1) + (size_t)bc * dv +
	    (size_t)br * (bc + 1) + (size_t)br * dv + 6 * (size_t)br;
}

__device__ static struct teach_tile
tile_carve(const struct teach_params &P, float *base)
{
	struct teach_tile T;

	T.q = base;
	T.k = T.q + (size_t)P.br * P.d;
	T.v = T.k + (size_t)P.bc * (P.d + 1);
	T.s = T.v + (size_t)P.bc * P.dv;
	T.acc = T.s + (size_t)P.br * (P.bc + 1);
	T.m = T.acc + (size_t)P.br * P.dv;
	T.l = T.m + P.br;
	T.m_new = T.l + P.br;
	T.alpha = T.m_new + P.br;
	T.rowsum = T.alpha + P.br;
	T.l_new = T.rowsum + P.br;
	return T;
}

/* problem_visible(): query r sees key c unless the bottom-right causal
 * mask hides it (c > r + Tk - Tq). */
__device__ static bool
visible(const struct teach_params &P, int r, int c)
{
	return !P.causal || (long)c <= (long)r + P.tk - P.tq;
}

/* dtype_round(): P as the narrow type would store it, back in float32. */
__device__ static float
round_p(int dtype, float x)
{
	if (dtype == DTYPE_FP16)
		return __half2float(__float2half_rn(x));
	if (dtype == DTYPE_BF16)
		return __bfloat162float(__float2bfloat16_rn(x));
	return x;
}

/* online_update()'s two factors: which of l and acc get alpha.  The bug
 * modes (online_rule.h's table, the simulator's) and the test-only fault
 * leave one or both at 1. */
__device__ static float
factor_l(const struct teach_params &P, float alpha)
{
	return !P.no_rescale && online_bug_flags(P.bug).scale_l ? alpha : 1.0f;
}

__device__ static float
factor_acc(const struct teach_params &P, float alpha)
{
	return !P.no_rescale && online_bug_flags(P.bug).scale_acc ? alpha :
	    1.0f;
}

/* Trace slot of row r of step `step` of problem b (gpu_trace_at). */
__device__ static size_t
trace_at(const struct teach_params &P, int b, long step, int r)
{
	return ((size_t)b * (size_t)P.nsteps + (size_t)step) * (size_t)P.br +
	    (size_t)r;
}

/* Q_i (rows, d) into shared memory. */
__device__ static void
load_q(const struct teach_params &P, const struct teach_tile &T, int b, int i)
{
	const int r0 = i * P.br, rows = min(P.br, P.tq - r0);
	const float *q = P.q + ((size_t)b * P.tq + r0) * P.d;
	int e;

	if (P.scores)
		return;
	for (e = threadIdx.x; e < rows * P.d; e += blockDim.x)
		T.q[e] = q[e];
}

/*
 * One step: tile (i, j) applied to row block i's state m, l, acc, which
 * is in shared memory (and Q_i too) when this is called.  The phases are
 * sim.h's: load, scores, max, rescale, exp, update.
 */
__device__ static void
tile_step(const struct teach_params &P, const struct teach_tile &T, int b,
    int i, int j, long step)
{
	const int r0 = i * P.br, rows = min(P.br, P.tq - r0);
	const int c0 = j * P.bc, cols = min(P.bc, P.tk - c0);
	const int dk = P.d + 1;		/* K_j's padded row stride */
	const int ds = P.bc + 1;	/* S's padded row stride */
	const int tid = threadIdx.x, nt = blockDim.x;
	const float *k = P.k + ((size_t)b * P.tk + c0) * P.d;
	const float *v = P.v + ((size_t)b * P.tk + c0) * P.dv;
	int e, r, c, x;

	/* Phase 1, load: K_j and V_j (a scores problem reads its S tile in
	 * the next phase instead of computing it). */
	if (!P.scores)
		for (e = tid; e < cols * P.d; e += nt)
			T.k[(e / P.d) * dk + e % P.d] = k[e];
	for (e = tid; e < cols * P.dv; e += nt)
		T.v[e] = v[e];
	__syncthreads();

	/* Phase 2, scores: S = scale Q_i K_j^T, each sum over x in order and
	 * then scaled, as tile_scores() does; masked entries -inf. */
	for (e = tid; e < rows * cols; e += nt) {
		float s;

		r = e / cols;
		c = e % cols;
		if (P.scores)
			s = P.s[((size_t)b * P.tq + r0 + r) * P.tk + c0 + c];
		else {
			s = 0.0f;
			for (x = 0; x < P.d; x++)
				s += T.q[r * P.d + x] * T.k[c * dk + x];
			s *= P.scale;
		}
		if (!visible(P, r0 + r, c0 + c))
			s = -INFINITY;
		T.s[r * ds + c] = s;
	}
	__syncthreads();

	/* Phases 3 and 4, max and rescale, one thread per row:
	 * m_new = max(m, rowmax S), alpha = exp(m - m_new), and alpha = 1
	 * while m_new = -inf (nothing seen yet: exp(-inf + inf) is NaN). */
	for (r = tid; r < rows; r += nt) {
		float rowmax = -INFINITY, m_new;

		for (c = 0; c < cols; c++) {
			float s = T.s[r * ds + c];
			rowmax = s > rowmax ? s : rowmax;
		}
		m_new = T.m[r] > rowmax ? T.m[r] : rowmax;
		T.m_new[r] = m_new;
		T.alpha[r] = m_new == -INFINITY ? 1.0f : expf(T.m[r] - m_new);
	}
	__syncthreads();

	/* Phase 5, exp: P = exp(S - m_new) in place of S; 0 while m_new =
	 * -inf, and exp(-inf) = 0 for a masked entry. */
	for (e = tid; e < rows * cols; e += nt) {
		float m_new;

		r = e / cols;
		c = e % cols;
		m_new = T.m_new[r];
		T.s[r * ds + c] = m_new == -INFINITY ? 0.0f :
		    expf(T.s[r * ds + c] - m_new);
	}
	__syncthreads();

	/* Phase 6, update, first half, one thread per row: the row sum of P
	 * in float32 and l_new = alpha l + rowsum; only then P is rounded
	 * to the storage type for P V, as a tensor-core kernel does. */
	for (r = tid; r < rows; r += nt) {
		float rowsum = 0.0f;

		for (c = 0; c < cols; c++)
			rowsum += T.s[r * ds + c];
		T.rowsum[r] = rowsum;
		T.l_new[r] = factor_l(P, T.alpha[r]) * T.l[r] + rowsum;
		if (P.dtype != DTYPE_FP32)
			for (c = 0; c < cols; c++)
				T.s[r * ds + c] = round_p(P.dtype, T.s[r * ds + c]);
	}
	__syncthreads();

	/* Phase 6, second half, one thread per (row, column): pv = P V_j
	 * summed over the keys in order, then the accumulator.
	 *   unnormalized: u' = alpha u + pv
	 *   normalized:   o' = (alpha l o + pv) / l'  (forget-old-denominator
	 *                 drops the l), and 0 while l' = 0 */
	for (e = tid; e < rows * P.dv; e += nt) {
		float pv = 0.0f, acc, aa, keep;

		r = e / P.dv;
		x = e % P.dv;
		for (c = 0; c < cols; c++)
			pv += T.s[r * ds + c] * T.v[c * P.dv + x];
		aa = factor_acc(P, T.alpha[r]);
		acc = T.acc[r * P.dv + x];
		if (P.convention == CONV_UNNORMALIZED)
			acc = aa * acc + pv;
		else {
			keep = online_bug_flags(P.bug).keep_l ? aa * T.l[r] : aa;
			acc = T.l_new[r] > 0.0f ? (keep * acc + pv) / T.l_new[r] : 0.0f;
		}
		T.acc[r * P.dv + x] = acc;
		if (P.tr_acc != NULL)
			P.tr_acc[trace_at(P, b, step, r) * P.dv + x] = acc;
	}
	__syncthreads();

	/* The step is done: the new state becomes the state, and the trace
	 * gets this step's m_new, alpha, l_new. */
	for (r = tid; r < rows; r += nt) {
		if (P.tr_m != NULL) {
			P.tr_m[trace_at(P, b, step, r)] = T.m_new[r];
			P.tr_alpha[trace_at(P, b, step, r)] = T.alpha[r];
			P.tr_l[trace_at(P, b, step, r)] = T.l_new[r];
		}
		T.m[r] = T.m_new[r];
		T.l[r] = T.l_new[r];
	}
	__syncthreads();
}

/* Finalize, after the row block's last tile: O = u / l (or o itself),
 * lse = m + log l; a row that saw no key gives O = 0 and lse = -inf. */
__device__ static void
tile_finalize(const struct teach_params &P, const struct teach_tile &T, int b,
    int i)
{
	const int r0 = i * P.br, rows = min(P.br, P.tq - r0);
	float *o = P.o + ((size_t)b * P.tq + r0) * P.dv;
	float *lse = P.lse + (size_t)b * P.tq + r0;
	int e, r;

	for (e = threadIdx.x; e < rows * P.dv; e += blockDim.x) {
		float l = T.l[e / P.dv];
		o[e] = l > 0.0f ? (P.convention == CONV_UNNORMALIZED ?
		    T.acc[e] / l : T.acc[e]) : 0.0f;
	}
	for (r = threadIdx.x; r < rows; r += blockDim.x)
		lse[r] = T.l[r] > 0.0f ? T.m[r] + logf(T.l[r]) : -INFINITY;
}

/* fa2: block (i, b) runs row block i of problem b over all its key tiles. */
__global__ static void __launch_bounds__(TEACH_THREADS)
teach_fa2(struct teach_params P)
{
	extern __shared__ float smem[];
	const struct teach_tile T = tile_carve(P, smem);
	const int i = blockIdx.x, b = blockIdx.y;
	const int rows = min(P.br, P.tq - i * P.br);
	int e, j;

	/* The row block's state starts empty: m = -inf, l = 0, acc = 0. */
	for (e = threadIdx.x; e < rows; e += blockDim.x) {
		T.m[e] = -INFINITY;
		T.l[e] = 0.0f;
	}
	for (e = threadIdx.x; e < rows * P.dv; e += blockDim.x)
		T.acc[e] = 0.0f;
	/* Q_i is read once and stays on chip for every key tile. */
	load_q(P, T, b, i);
	__syncthreads();
	for (j = 0; j < P.jend[i]; j++)
		tile_step(P, T, b, i, j, P.first[i] + j);
	tile_finalize(P, T, b, i);
}

/* fa1, before the first key block: every row's state in global memory
 * is empty, and a row no tile reaches keeps O = 0 and lse = -inf. */
__global__ static void
teach_fa1_init(struct teach_params P, int n)
{
	size_t e, rows = (size_t)n * P.tq;

	for (e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < rows * P.dv;
	    e += (size_t)gridDim.x * blockDim.x) {
		P.o[e] = 0.0f;
		if (e < rows) {
			P.m[e] = -INFINITY;
			P.l[e] = 0.0f;
			P.lse[e] = -INFINITY;
		}
	}
}

/* fa1: key block P.j; block (x, b) runs row block i = ibegin[j] + x. */
__global__ static void __launch_bounds__(TEACH_THREADS)
teach_fa1(struct teach_params P)
{
	extern __shared__ float smem[];
	const struct teach_tile T = tile_carve(P, smem);
	const int j = P.j, i = P.ibegin[j] + blockIdx.x, b = blockIdx.y;
	const int r0 = i * P.br, rows = min(P.br, P.tq - r0);
	float *acc = P.o + ((size_t)b * P.tq + r0) * P.dv;
	float *m = P.m + (size_t)b * P.tq + r0, *l = P.l + (size_t)b * P.tq + r0;
	int e;

	/* Phase 1, load, fa1's extra part: the row block's m, l and
	 * accumulator come back from global memory. */
	for (e = threadIdx.x; e < rows; e += blockDim.x) {
		T.m[e] = m[e];
		T.l[e] = l[e];
	}
	for (e = threadIdx.x; e < rows * P.dv; e += blockDim.x)
		T.acc[e] = acc[e];
	load_q(P, T, b, i);
	__syncthreads();
	tile_step(P, T, b, i, j, P.first[j] + (i - P.ibegin[j]));
	if (j == P.jend[i] - 1) {
		tile_finalize(P, T, b, i);
		return;
	}
	/* ... and go back out for the next key block's launch. */
	for (e = threadIdx.x; e < rows; e += blockDim.x) {
		m[e] = T.m[e];
		l[e] = T.l[e];
	}
	for (e = threadIdx.x; e < rows * P.dv; e += blockDim.x)
		acc[e] = T.acc[e];
}

/* One run's launches, queued without waiting (timing.h). */
struct teach_run {
	struct teach_params P;
	const struct gpu_job *job;
	size_t smem;
};

static int
teach_enqueue(void *ctx, char *err, size_t errlen)
{
	struct teach_run *run = (struct teach_run *)ctx;
	const struct schedule *sc = run->job->sched;
	struct teach_params P = run->P;
	dim3 grid;
	int jb;

	if (sc->order == ORDER_FA2) {
		grid = dim3((unsigned)sc->tr, (unsigned)run->job->n);
		teach_fa2<<<grid, TEACH_THREADS, run->smem>>>(P);
		CUDA_CHECK(cudaGetLastError());
		return 0;
	}
	teach_fa1_init<<<1024, 256>>>(P, run->job->n);
	CUDA_CHECK(cudaGetLastError());
	for (jb = 0; jb < sc->tc; jb++) {
		if (sc->tr - sc->ibegin[jb] <= 0)
			continue;
		P.j = jb;
		grid = dim3((unsigned)(sc->tr - sc->ibegin[jb]),
		    (unsigned)run->job->n);
		teach_fa1<<<grid, TEACH_THREADS, run->smem>>>(P);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
fail:
	return -1;
}

/*
 * Both of the teaching kernel's entry points: traced = 0 is launch()
 * (the timed runs, O and lse), traced = 1 is trace() (one run with the
 * trace on, and the test fault when asked).  The kernel is the same.
 */
static int
teach_go(const struct gpu_job *job, int traced, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const struct schedule *sc = job->sched;
	struct gpu_result *res = job->res;
	struct gpu_mem mem = GPU_MEM_INIT;
	struct teach_run run;
	struct teach_params &P = run.P;
	float *q, *k, *v, *s, *o, *lse, *m, *l;
	float *tm = NULL, *ta = NULL, *tl = NULL, *tacc = NULL;
	int *jend, *ibegin;
	long *first;
	size_t nq, nk, nv, ns, no, trace, b;
	int dev, optin, nouter, n = job->n, rc = -1;

	memset(&run, 0, sizeof run);
	run.job = job;
	run.smem = teach_smem_floats(sc->br, sc->bc, p->d, p->dv) *
	    sizeof(float);
	CUDA_CHECK(cudaGetDevice(&dev));
	CUDA_CHECK(cudaDeviceGetAttribute(&optin,
	    cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
	if (run.smem > (size_t)optin) {
		snprintf(err, errlen, "tiles of Br=%d by Bc=%d with d=%d, dv=%d "
		    "need %zu bytes of shared memory per block; this GPU allows "
		    "%d (use smaller --br or --bc)", sc->br, sc->bc, p->d, p->dv,
		    run.smem, optin);
		goto fail;
	}

	/* Inputs, packed problem after problem. */
	nq = (size_t)p->tq * p->d;
	nk = (size_t)p->tk * p->d;
	nv = (size_t)p->tk * p->dv;
	ns = p->scores_mode ? (size_t)p->tq * p->tk : 0;
	no = (size_t)p->tq * p->dv * n;
	CUDA_CHECK(gpu_mem_floats(&mem, &q, nq * n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &k, nk * n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &v, nv * n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &s, ns * n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &o, no, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &lse, (size_t)p->tq * n,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &m, sc->order == ORDER_FA1 ?
	    (size_t)p->tq * n : 0, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &l, sc->order == ORDER_FA1 ?
	    (size_t)p->tq * n : 0, GPU_MEM_KERNEL));
	for (b = 0; b < (size_t)n; b++) {
		if (p->scores_mode)
			CUDA_CHECK(cudaMemcpy(s + b * ns, job->ps[b].s, ns *
			    sizeof(float), cudaMemcpyHostToDevice));
		else {
			CUDA_CHECK(cudaMemcpy(q + b * nq, job->ps[b].q, nq *
			    sizeof(float), cudaMemcpyHostToDevice));
			CUDA_CHECK(cudaMemcpy(k + b * nk, job->ps[b].k, nk *
			    sizeof(float), cudaMemcpyHostToDevice));
		}
		CUDA_CHECK(cudaMemcpy(v + b * nv, job->ps[b].v, nv *
		    sizeof(float), cudaMemcpyHostToDevice));
	}

	/* The simulator's schedule, so both visit the same tiles. */
	nouter = sc->order == ORDER_FA2 ? sc->tr : sc->tc;
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&jend, (size_t)sc->tr *
	    sizeof *jend, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&ibegin, (size_t)sc->tc *
	    sizeof *ibegin, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&first, ((size_t)nouter + 1) *
	    sizeof *first, GPU_MEM_KERNEL));
	CUDA_CHECK(cudaMemcpy(jend, sc->jend, (size_t)sc->tr * sizeof *jend,
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(ibegin, sc->ibegin, (size_t)sc->tc *
	    sizeof *ibegin, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(first, sc->first, ((size_t)nouter + 1) *
	    sizeof *first, cudaMemcpyHostToDevice));

	/* The trace (not the kernel's own memory) and the outputs start as
	 * NaN (all bits set), so an entry the kernel failed to write cannot
	 * pass for a value. */
	trace = (size_t)n * (size_t)sc->nsteps * (size_t)sc->br;
	if (traced) {
		CUDA_CHECK(gpu_mem_floats(&mem, &tm, trace, GPU_MEM_HELPER));
		CUDA_CHECK(gpu_mem_floats(&mem, &ta, trace, GPU_MEM_HELPER));
		CUDA_CHECK(gpu_mem_floats(&mem, &tl, trace, GPU_MEM_HELPER));
		CUDA_CHECK(cudaMemset(tm, 0xff, trace * sizeof(float)));
		CUDA_CHECK(cudaMemset(ta, 0xff, trace * sizeof(float)));
		CUDA_CHECK(cudaMemset(tl, 0xff, trace * sizeof(float)));
		if (res->acc != NULL) {
			CUDA_CHECK(gpu_mem_floats(&mem, &tacc, trace * p->dv,
			    GPU_MEM_HELPER));
			CUDA_CHECK(cudaMemset(tacc, 0xff, trace * p->dv *
			    sizeof(float)));
		}
	}
	CUDA_CHECK(cudaMemset(o, 0xff, no * sizeof(float)));
	CUDA_CHECK(cudaMemset(lse, 0xff, (size_t)p->tq * n * sizeof(float)));

	P.q = q;
	P.k = k;
	P.v = v;
	P.s = s;
	P.o = o;
	P.lse = lse;
	P.m = m;
	P.l = l;
	P.tr_m = tm;
	P.tr_alpha = ta;
	P.tr_l = tl;
	P.tr_acc = tacc;
	P.jend = jend;
	P.ibegin = ibegin;
	P.first = first;
	P.nsteps = sc->nsteps;
	P.tq = p->tq;
	P.tk = p->tk;
	P.d = p->d;
	P.dv = p->dv;
	P.br = sc->br;
	P.bc = sc->bc;
	P.scale = p->scale;
	P.causal = p->causal;
	P.scores = p->scores_mode;
	P.dtype = p->dtype;
	P.convention = job->rule->convention;
	P.bug = job->rule->bug;
	P.no_rescale = traced && (job->flags & GPU_TEST_NO_RESCALE) != 0;

	/* Over 48 KiB of dynamic shared memory must be asked for. */
	CUDA_CHECK(cudaFuncSetAttribute(teach_fa2,
	    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)run.smem));
	CUDA_CHECK(cudaFuncSetAttribute(teach_fa1,
	    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)run.smem));

	if (!traced) {
		if (timing_median_ms(teach_enqueue, &run, job->repeat, &res->ms,
		    err, errlen) != 0)
			goto fail;
		res->device_bytes = mem.bytes;
	} else {
		if (teach_enqueue(&run, err, errlen) != 0)
			goto fail;
		CUDA_CHECK(cudaDeviceSynchronize());
		CUDA_CHECK(cudaMemcpy(res->m_new, tm, trace * sizeof(float),
		    cudaMemcpyDeviceToHost));
		CUDA_CHECK(cudaMemcpy(res->alpha, ta, trace * sizeof(float),
		    cudaMemcpyDeviceToHost));
		CUDA_CHECK(cudaMemcpy(res->l_new, tl, trace * sizeof(float),
		    cudaMemcpyDeviceToHost));
		if (tacc != NULL)
			CUDA_CHECK(cudaMemcpy(res->acc, tacc, trace * p->dv *
			    sizeof(float), cudaMemcpyDeviceToHost));
	}
	/* The timed O and lse; the trace run's replace them only under the
	 * test fault, which they must show. */
	if (!traced || P.no_rescale) {
		CUDA_CHECK(cudaMemcpy(res->o, o, no * sizeof(float),
		    cudaMemcpyDeviceToHost));
		CUDA_CHECK(cudaMemcpy(res->lse, lse, (size_t)p->tq * n *
		    sizeof(float), cudaMemcpyDeviceToHost));
	}
	rc = 0;
fail:
	gpu_mem_free(&mem);
	return rc;
}

extern "C" int
teach_launch(const struct gpu_job *job, char *err, size_t errlen)
{
	return teach_go(job, 0, err, errlen);
}

extern "C" int
teach_trace(const struct gpu_job *job, char *err, size_t errlen)
{
	return teach_go(job, 1, err, errlen);
}
