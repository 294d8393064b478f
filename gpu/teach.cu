/*
 * teach.cu - the teaching kernel: FlashAttention's tiled loop in float32.
 *
 * Read it beside src/model/sim.c.  The tile step itself, and why its
 * values can differ from the simulator's only where CUDA's expf and logf
 * differ from the C library's, is teach_step.cuh's, which the split-KV
 * run (teach_split.cu) shares; gpu/gpucheck.c says how much that is.
 *
 * Clarity over speed: one block of TEACH_THREADS threads per (query tile
 * i, problem b); each phase is a loop of the block's threads over the
 * tile's entries, rows, or (row, column) pairs, and a barrier ends each
 * phase.
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

extern "C" {
#include "kernels.h"
#include "model/problem.h"
#include "model/schedule.h"
#include "timing.h"
}
#include "teach_step.cuh"

#define TEACH_THREADS 256

/* Everything a block reads: passed by value to every launch. */
struct teach_params {
	struct teach_step_params st;	/* shape, tiles, rule */
	const float *q, *k, *v, *s;	/* (n, Tq, d) (n, Tk, d) (n, Tk, dv) (n, Tq, Tk) */
	float *o, *lse;			/* (n, Tq, dv) (n, Tq); fa1 keeps acc in o */
	float *m, *l;			/* fa1: m and l between launches, (n, Tq) */
	float *tr_m, *tr_alpha, *tr_l, *tr_acc;	/* the trace, or NULL */
	const float *slopes;		/* (n) each problem's ALiBi slope, or NULL */
	const int *jbegin, *jend, *ibegin;
	const long *first;
	long nsteps;
	int j;				/* fa1: this launch's key block */
};

/* Trace slot of row r of step `step` of problem b (gpu_trace_at). */
__device__ static size_t
trace_at(const struct teach_params &P, int b, long step, int r)
{
	return ((size_t)b * (size_t)P.nsteps + (size_t)step) * (size_t)P.st.br +
	    (size_t)r;
}

/* Q_i (rows, d) into shared memory. */
__device__ static void
load_q(const struct teach_params &P, const struct teach_tile &T, int b, int i)
{
	const int r0 = i * P.st.br, rows = min(P.st.br, P.st.tq - r0);
	const float *q = P.q + ((size_t)b * P.st.tq + r0) * P.st.d;
	int e;

	if (P.st.scores)
		return;
	for (e = threadIdx.x; e < rows * P.st.d; e += blockDim.x)
		T.q[e] = q[e];
}

/* Step (i, j) of problem b, numbered `step`: teach_step() on the rows of
 * row block i, K_j and V_j of problem b. */
__device__ static void
tile_step(const struct teach_params &P, const struct teach_tile &T, int b,
    int i, int j, long step)
{
	const struct teach_step_params &st = P.st;
	struct teach_rows R;
	struct teach_trace_rows tr;
	size_t at;

	R.s = st.scores ? P.s + (size_t)b * st.tq * st.tk : NULL;
	R.s_rows = NULL;
	R.pos = NULL;
	R.r0 = i * st.br;
	R.rows = min(st.br, st.tq - R.r0);
	R.slopes = P.slopes != NULL ? P.slopes + b : NULL;
	R.head0 = st.mask.drop_head + (unsigned)b;	/* gpu_problems_alike */
	tr.m = tr.alpha = tr.l = tr.acc = NULL;
	if (P.tr_m != NULL) {
		at = trace_at(P, b, step, 0);
		tr.m = P.tr_m + at;
		tr.alpha = P.tr_alpha + at;
		tr.l = P.tr_l + at;
		if (P.tr_acc != NULL)
			tr.acc = P.tr_acc + at * st.dv;
	}
	teach_step(st, T, R, P.k + (size_t)b * st.tk * st.d,
	    P.v + (size_t)b * st.tk * st.dv, j, tr);
}

/* Finalize, after the row block's last tile: O = u / l (or o itself),
 * lse = m + log l; a row that saw no key gives O = 0 and lse = -inf. */
__device__ static void
tile_finalize(const struct teach_params &P, const struct teach_tile &T, int b,
    int i)
{
	const int r0 = i * P.st.br, rows = min(P.st.br, P.st.tq - r0);
	float *o = P.o + ((size_t)b * P.st.tq + r0) * P.st.dv;
	float *lse = P.lse + (size_t)b * P.st.tq + r0;
	int e, r;

	for (e = threadIdx.x; e < rows * P.st.dv; e += blockDim.x)
		o[e] = teach_step_final_o(P.st, T.acc[e], T.l[e / P.st.dv]);
	for (r = threadIdx.x; r < rows; r += blockDim.x)
		lse[r] = teach_step_final_lse(T.m[r], T.l[r]);
}

/* fa2: block (i, b) runs row block i of problem b over all its key tiles. */
__global__ static void __launch_bounds__(TEACH_THREADS)
teach_fa2(struct teach_params P)
{
	extern __shared__ float smem[];
	const struct teach_tile T = teach_tile_carve(P.st, smem);
	const int i = blockIdx.x, b = blockIdx.y;
	int j;

	teach_tile_empty(P.st, T, min(P.st.br, P.st.tq - i * P.st.br));
	/* Q_i is read once and stays on chip for every key tile. */
	load_q(P, T, b, i);
	__syncthreads();
	for (j = P.jbegin[i]; j < P.jend[i]; j++)
		tile_step(P, T, b, i, j, P.first[i] + (j - P.jbegin[i]));
	tile_finalize(P, T, b, i);
}

/* fa1, before the first key block: every row's state in global memory
 * is empty, and a row no tile reaches keeps O = 0 and lse = -inf. */
__global__ static void
teach_fa1_init(struct teach_params P, int n)
{
	size_t e, rows = (size_t)n * P.st.tq;

	for (e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < rows * P.st.dv;
	    e += (size_t)gridDim.x * blockDim.x) {
		P.o[e] = 0.0f;
		if (e < rows) {
			P.m[e] = -INFINITY;
			P.l[e] = 0.0f;
			P.lse[e] = -INFINITY;
		}
	}
}

/* fa1: key block P.j; block (x, b) runs row block i = ibegin[j] + x, x
 * below iend[j] - ibegin[j] (the launch's grid). */
__global__ static void __launch_bounds__(TEACH_THREADS)
teach_fa1(struct teach_params P)
{
	extern __shared__ float smem[];
	const struct teach_tile T = teach_tile_carve(P.st, smem);
	const int j = P.j, i = P.ibegin[j] + blockIdx.x, b = blockIdx.y;
	const int r0 = i * P.st.br, rows = min(P.st.br, P.st.tq - r0);
	const int dv = P.st.dv;
	float *acc = P.o + ((size_t)b * P.st.tq + r0) * dv;
	float *m = P.m + (size_t)b * P.st.tq + r0;
	float *l = P.l + (size_t)b * P.st.tq + r0;
	int e;

	/* Phase 1, load, fa1's extra part: the row block's m, l and
	 * accumulator come back from global memory. */
	for (e = threadIdx.x; e < rows; e += blockDim.x) {
		T.m[e] = m[e];
		T.l[e] = l[e];
	}
	for (e = threadIdx.x; e < rows * dv; e += blockDim.x)
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
	for (e = threadIdx.x; e < rows * dv; e += blockDim.x)
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
		if (sc->iend[jb] - sc->ibegin[jb] <= 0)
			continue;
		P.j = jb;
		grid = dim3((unsigned)(sc->iend[jb] - sc->ibegin[jb]),
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
 * trace on).  The kernel is the same.
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
	int *jbegin, *jend, *ibegin;
	float *slopes = NULL;
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
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&jbegin, (size_t)sc->tr *
	    sizeof *jbegin, GPU_MEM_KERNEL));
	CUDA_CHECK(cudaMemcpy(jbegin, sc->jbegin, (size_t)sc->tr *
	    sizeof *jbegin, cudaMemcpyHostToDevice));
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
	P.jbegin = jbegin;
	P.jend = jend;
	P.ibegin = ibegin;
	P.first = first;
	/* Each problem's ALiBi slope (the commands run a head a problem). */
	if (p->alibi != NULL) {
		CUDA_CHECK(gpu_mem_floats(&mem, &slopes, (size_t)n, GPU_MEM_KERNEL));
		for (b = 0; b < (size_t)n; b++)
			CUDA_CHECK(cudaMemcpy(slopes + b, job->ps[b].alibi,
			    sizeof(float), cudaMemcpyHostToDevice));
	}
	P.slopes = slopes;
	P.nsteps = sc->nsteps;
	P.st.tq = p->tq;
	P.st.tk = p->tk;
	P.st.d = p->d;
	P.st.dv = p->dv;
	P.st.br = sc->br;
	P.st.bc = sc->bc;
	P.st.scale = p->scale;
	P.st.mask = problem_mask(p, 0);
	P.st.mask.slope = 0.0f;
	P.st.mask_bug = job->rule->mask_bug;
	P.st.scores = p->scores_mode;
	P.st.dtype = p->dtype;
	P.st.convention = job->rule->convention;
	P.st.bug = job->rule->bug;

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
	/* O and lse are the timed runs'. */
	if (!traced) {
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

/*
 * A packed batch (job->nseq > 0): the sequences one after another, each
 * a run of teach_go on its own problems (problem_seq of each of the n)
 * and schedule, its O, lse and trace copied to the sequence's rows and
 * steps of res.  A host loop, not one grid over all sequences' row
 * blocks: this kernel is the simulator's order made literal, and
 * varlen.h runs a packed batch as exactly this, sequence by sequence,
 * each its own schedule (fa1 too, whose launch per key block would
 * otherwise have to line up sequences of different Tc).  The time is the
 * sum of the sequences' medians.  (The wgmma kernel runs a packed batch
 * in one launch: wgmma.h.)
 */
static int
teach_packed(const struct gpu_job *job, int traced, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	struct gpu_result *res = job->res, sub;
	struct gpu_job one;
	struct problem *seqs;
	size_t at, from, rows;
	long k;
	int s, b, r, tq, n = job->n, rc = -1;

	seqs = (struct problem *)calloc((size_t)n, sizeof *seqs);
	if (seqs == NULL) {
		snprintf(err, errlen, "out of memory for a packed batch");
		return -1;
	}
	if (!traced) {
		res->ms = 0.0;
		res->device_bytes = 0.0;
	}
	for (s = 0; s < job->nseq; s++) {
		const struct schedule *sc = &job->seqs[s];

		for (b = 0; b < n; b++)
			problem_seq(&job->ps[b], s, &seqs[b]);
		tq = seqs[0].tq;
		one = *job;
		one.ps = seqs;
		one.sched = sc;
		one.nseq = 0;
		one.seqs = NULL;
		one.step0 = NULL;
		memset(&sub, 0, sizeof sub);
		sub.n = n;
		sub.tq = tq;
		sub.dv = p->dv;
		sub.nsteps = sc->nsteps;
		sub.br = sc->br;
		rows = (size_t)n * sc->nsteps * sc->br;
		sub.o = (float *)calloc((size_t)n * tq * p->dv, sizeof(float));
		sub.lse = (float *)calloc((size_t)n * tq, sizeof(float));
		if (traced) {
			sub.m_new = (float *)calloc(rows + 1, sizeof(float));
			sub.alpha = (float *)calloc(rows + 1, sizeof(float));
			sub.l_new = (float *)calloc(rows + 1, sizeof(float));
			if (res->acc != NULL)
				sub.acc = (float *)calloc(rows * p->dv + 1,
				    sizeof(float));
		}
		one.res = &sub;
		if (sub.o == NULL || sub.lse == NULL || (traced &&
		    (sub.m_new == NULL || sub.alpha == NULL || sub.l_new == NULL ||
		    (res->acc != NULL && sub.acc == NULL)))) {
			snprintf(err, errlen, "out of memory for sequence %d", s);
			gpu_result_free(&sub);
			goto out;
		}
		if (teach_go(&one, traced, err, errlen) != 0) {
			gpu_result_free(&sub);
			goto out;
		}
		for (b = 0; b < n; b++) {
			if (!traced) {
				memcpy(res->o + ((size_t)b * p->tq + p->cu_q[s]) *
				    p->dv, sub.o + (size_t)b * tq * p->dv,
				    (size_t)tq * p->dv * sizeof(float));
				memcpy(res->lse + (size_t)b * p->tq + p->cu_q[s],
				    sub.lse + (size_t)b * tq, (size_t)tq *
				    sizeof(float));
				continue;
			}
			for (k = 0; k < sc->nsteps; k++)
				for (r = 0; r < sc->br; r++) {
					at = gpu_trace_at(res, b, job->step0[s] + k,
					    r);
					from = gpu_trace_at(&sub, b, k, r);
					res->m_new[at] = sub.m_new[from];
					res->alpha[at] = sub.alpha[from];
					res->l_new[at] = sub.l_new[from];
					if (sub.acc != NULL)
						memcpy(res->acc + at * p->dv,
						    sub.acc + from * p->dv,
						    (size_t)p->dv * sizeof(float));
				}
		}
		if (!traced) {
			res->ms += sub.ms;
			if (sub.device_bytes > res->device_bytes)
				res->device_bytes = sub.device_bytes;
		}
		gpu_result_free(&sub);
	}
	rc = 0;
out:
	free(seqs);
	return rc;
}

extern "C" int
teach_launch(const struct gpu_job *job, char *err, size_t errlen)
{
	if (job->nseq > 0)
		return teach_packed(job, 0, err, errlen);
	return teach_go(job, 0, err, errlen);
}

extern "C" int
teach_trace(const struct gpu_job *job, char *err, size_t errlen)
{
	if (job->nseq > 0)
		return teach_packed(job, 1, err, errlen);
	return teach_go(job, 1, err, errlen);
}
