/*
 * teach_split.cu - the teaching kernel with split-KV, and its combine.
 *
 * Read it beside gpu/teach.cu and src/model/sim.c.  Each range runs
 * teach_step.cuh's tile step, the very one teach.cu runs (the same order
 * in every sum, no fused multiply-adds: built with -fmad=false), so a
 * partial can differ from the simulator's only where CUDA's expf and
 * logf differ from the C library's.  What split-KV changes:
 *
 *   teach_split_ranges  one block of TEACH_SPLIT_THREADS threads per
 *       (row block i, key range s): grid (Tr, N).  The block starts from
 *       the empty state (m = -inf, l = 0, acc = 0) at its range's first
 *       key block j0, runs tiles j0 .. j1-1, and writes its partial: the
 *       state (m, l, acc) and its finalize (o = u / l, lse = m + log l),
 *       to entry R N + s of each row R, as sim_partials lays them out.
 *       An empty range (j0 = j1) writes the empty partial.  Rows go
 *       through the schedule's maps: row R reads Q row row_out[R] and is
 *       masked as position row_pos[R]; the block reads K_j, V_j of its
 *       K/V head (grouped heads, packed or not).
 *   teach_split_combine  one thread per (row, column x of O): it walks
 *       the combine's plan, merge by merge, with merge.h's merge_weigh()
 *       and merge_mix() (the very lines combine.c runs), keeping its
 *       slots in a scratch array of its own; column 0's thread records
 *       each merge's m and l.  The row's last merge finalizes as
 *       combine.c does: O = u / l, lse = m + log l (olse: O = o).
 *
 * It is the teaching entry's split-KV run (kernel.h's struct gpu_split):
 * teach_split_launch() gets the job gpusplit.c lays out from the
 * simulator's split schedule and the combine's plan (kernels.h), counts
 * its device memory through cudacheck.h and times each kernel through
 * timing.h.  Clarity over speed, as teach.cu.
 */
#include "config.h"

#include "cudacheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "kernels.h"
}
#include "teach_step.cuh"
#include "timing.h"

#define TEACH_SPLIT_THREADS 256

struct split_params {
	struct teach_step_params st;	/* shape, tiles, rule; d = 0 in a
					 * scores problem */
	const float *q, *k, *v, *s;
	int splits;
	const int *block_rows, *block_kv, *range, *row_out, *row_pos;
	const float *slopes;		/* (H) ALiBi's slope per query head, or NULL */
	float *pm, *pl, *plse, *pacc, *po;	/* the partials */
};

/* Block (i, s): range s of row block i, from empty to its partial. */
__global__ static void __launch_bounds__(TEACH_SPLIT_THREADS)
teach_split_ranges(struct split_params P)
{
	extern __shared__ float smem[];
	const struct teach_step_params &st = P.st;
	const struct teach_tile T = teach_tile_carve(st, smem);
	const int i = blockIdx.x, sp = blockIdx.y, N = P.splits;
	const int r0 = P.block_rows[i], rows = P.block_rows[i + 1] - r0;
	const int j0 = P.range[(i * N + sp) * 2], j1 = P.range[(i * N + sp) * 2 + 1];
	const int kv = P.block_kv[i];
	const struct teach_rows R = { P.s, P.row_out, P.row_pos, r0, rows,
		P.slopes, st.mask.drop_head };
	const struct teach_trace_rows untraced = { NULL, NULL, NULL, NULL };
	int e, r, j;

	/* The range's state starts empty, at its own first key block; rows
	 * read Q through the schedule's map. */
	teach_tile_empty(st, T, rows);
	if (!st.scores)
		for (e = threadIdx.x; e < rows * st.d; e += blockDim.x)
			T.q[e] = P.q[(size_t)P.row_out[r0 + e / st.d] * st.d +
			    e % st.d];
	__syncthreads();
	for (j = j0; j < j1; j++)
		teach_step(st, T, R, P.k + (size_t)kv * st.tk * st.d,
		    P.v + (size_t)kv * st.tk * st.dv, j, untraced);

	/* The partial: the state itself, and its finalize (online_finalize:
	 * a row that saw none of the range's keys gives o = 0, lse = -inf). */
	for (e = threadIdx.x; e < rows * st.dv; e += blockDim.x) {
		size_t at = ((size_t)(r0 + e / st.dv) * N + sp) * st.dv +
		    e % st.dv;

		P.pacc[at] = T.acc[e];
		P.po[at] = teach_step_final_o(st, T.acc[e], T.l[e / st.dv]);
	}
	for (r = threadIdx.x; r < rows; r += blockDim.x) {
		size_t at = (size_t)(r0 + r) * N + sp;

		P.pm[at] = T.m[r];
		P.pl[at] = T.l[r];
		P.plse[at] = teach_step_final_lse(T.m[r], T.l[r]);
	}
}

struct combine_params {
	int rows, splits, dv, merges, slots, convention;
	enum merge_form form;
	enum merge_bug bug;
	const struct combine_merge *plan;
	const int *row_out;
	const float *pm, *pl, *plse, *pacc, *po;
	float *scratch;			/* (rows dv, slots, 3) */
	float *merge_m, *merge_l;	/* (rows, merges) */
	float *o, *lse;
};

/* Operand x of a merge for row r, column c: (m, l, u) in the form. */
__device__ static void
combine_operand(const struct combine_params &C, const float *slot,
    struct combine_operand x, int r, int c, float *m, float *l, float *u)
{
	size_t e = (size_t)r * C.splits + x.index;
	float acc;

	if (x.source == COMBINE_EMPTY) {
		*m = -INFINITY;
		*l = 0.0f;
		*u = 0.0f;
	} else if (x.source == COMBINE_SLOT) {
		*m = slot[x.index * 3];
		*l = slot[x.index * 3 + 1];
		*u = slot[x.index * 3 + 2];
	} else if (C.form == MERGE_MLU) {
		/* the state's u: acc itself, or o l under the normalized
		 * convention (as sim.c's partials_keep) */
		acc = C.pacc[e * C.dv + c];
		*m = C.pm[e];
		*l = C.pl[e];
		*u = C.convention == CONV_UNNORMALIZED ? acc : acc * C.pl[e];
	} else {
		*m = C.plse[e];
		*l = C.plse[e] == -INFINITY ? 0.0f : 1.0f;
		*u = C.po[e * C.dv + c];
	}
}

/* Thread (r, c) merges row r's partials, column c, along the plan. */
__global__ static void
teach_split_combine(struct combine_params C)
{
	const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const int r = (int)(t / C.dv), c = (int)(t % C.dv);
	float *slot = C.scratch + t * (size_t)C.slots * 3;
	float ma, la, ua, mb, lb, ub;
	int n, s;

	if (r >= C.rows)
		return;
	for (s = 0; s < C.slots; s++) {
		slot[s * 3] = -INFINITY;
		slot[s * 3 + 1] = 0.0f;
		slot[s * 3 + 2] = 0.0f;
	}
	for (n = 0; n < C.merges; n++) {
		const struct combine_merge op = C.plan[n];
		struct merge_weights w;
		float *dst = slot + op.dst * 3;

		combine_operand(C, slot, op.a, r, c, &ma, &la, &ua);
		combine_operand(C, slot, op.b, r, c, &mb, &lb, &ub);
		w = merge_weigh(C.form, C.bug, ma, la, mb, lb);
		dst[0] = w.m;
		dst[1] = w.l;
		dst[2] = merge_mix(w, ua, ub);
		if (c == 0 && C.merge_m != NULL) {
			C.merge_m[(size_t)r * C.merges + n] = w.m;
			C.merge_l[(size_t)r * C.merges + n] = w.l;
		}
		if (n == C.merges - 1) {
			/* online_finalize, in the form's convention */
			int out = C.row_out[r];
			float l = dst[1];

			C.o[(size_t)out * C.dv + c] = l > 0.0f ? (C.form == MERGE_MLU ?
			    dst[2] / l : dst[2]) : 0.0f;
			if (c == 0)
				C.lse[out] = l > 0.0f ? dst[0] + logf(l) : -INFINITY;
		}
	}
}

/* n values (ints, floats, plan entries) into new device memory, counted
 * as the kernel's. */
template <typename T>
static cudaError_t
split_upload(struct gpu_mem *mem, T **dst, const T *src, size_t n)
{
	cudaError_t e;

	*dst = NULL;
	if (n == 0 || src == NULL)
		return cudaSuccess;
	e = gpu_mem_alloc(mem, (void **)dst, n * sizeof(T), GPU_MEM_KERNEL);
	if (e != cudaSuccess)
		return e;
	return cudaMemcpy(*dst, src, n * sizeof(T), cudaMemcpyHostToDevice);
}

/* n floats of device memory, all bits set (NaN) where no kernel writes. */
static cudaError_t
split_floats(struct gpu_mem *mem, float **dst, size_t n)
{
	cudaError_t e = gpu_mem_floats(mem, dst, n, GPU_MEM_KERNEL);

	if (e != cudaSuccess || n == 0)
		return e;
	return cudaMemset(*dst, 0xff, n * sizeof(float));
}

/* One timed launch of either kernel (timing.h). */
struct split_timed {
	unsigned tr, splits;
	size_t smem, threads;
	struct split_params P;
	struct combine_params C;
};

static int
split_enqueue_ranges(void *ctx, char *err, size_t errlen)
{
	const struct split_timed *r = (const struct split_timed *)ctx;

	teach_split_ranges<<<dim3(r->tr, r->splits), TEACH_SPLIT_THREADS,
	    r->smem>>>(r->P);
	CUDA_CHECK(cudaGetLastError());
	return 0;
fail:
	return -1;
}

static int
split_enqueue_combine(void *ctx, char *err, size_t errlen)
{
	const struct split_timed *r = (const struct split_timed *)ctx;

	teach_split_combine<<<(unsigned)((r->threads + 127) / 128), 128>>>(r->C);
	CUDA_CHECK(cudaGetLastError());
	return 0;
fail:
	return -1;
}

/* A device array of n floats into the result's host array. */
static cudaError_t
split_download(float *dst, const float *src, size_t n)
{
	if (n == 0)
		return cudaSuccess;
	return cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost);
}

extern "C" int
teach_split_launch(const struct gpu_split_job *job, char *err, size_t errlen)
{
	const struct problem *p = job->p;
	const struct schedule *sc = job->sched;
	struct gpu_split_result *res = job->res;
	struct gpu_mem mem = GPU_MEM_INIT;
	struct split_timed run;
	struct split_params *P = &run.P;
	struct combine_params *C = &run.C;
	const int heads = p->heads > 0 ? p->heads : 1;
	const int kv_heads = p->kv_heads > 0 ? p->kv_heads : 1;
	const size_t rows = (size_t)sc->rows, nparts = rows * sc->splits;
	const size_t nout = (size_t)heads * p->tq, dv = (size_t)p->dv;
	const int d = p->scores_mode ? 0 : p->d;
	float *q = NULL, *k = NULL, *v = NULL, *s = NULL, *scratch = NULL;
	float *slopes = NULL;
	float *pm, *pl, *plse, *pacc, *po, *mm, *ml, *o, *lse;
	int *block_rows, *block_kv, *range, *row_out, *row_pos;
	struct combine_merge *plan;
	int dev, optin;

	memset(&run, 0, sizeof run);
	run.smem = teach_smem_floats(sc->br, sc->bc, d, p->dv) * sizeof(float);
	CUDA_CHECK(cudaGetDevice(&dev));
	CUDA_CHECK(cudaDeviceGetAttribute(&optin,
	    cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
	if (run.smem > (size_t)optin) {
		snprintf(err, errlen, "tiles of Br=%d by Bc=%d with d=%d, dv=%d "
		    "need %zu bytes of shared memory per block; this GPU allows "
		    "%d", sc->br, sc->bc, d, p->dv, run.smem, optin);
		goto fail;
	}
	if (sc->splits > 65535 || sc->tr > 2147483647 / 2 || job->merges < 1 ||
	    job->slots < 1) {
		snprintf(err, errlen, "a split run of %d ranges, %d row blocks, %d "
		    "merges, %d slots is more than one launch takes", sc->splits,
		    sc->tr, job->merges, job->slots);
		goto fail;
	}

	if (p->scores_mode)
		CUDA_CHECK(split_upload(&mem, &s, (const float *)p->s,
		    nout * p->tk));
	else {
		CUDA_CHECK(split_upload(&mem, &q, (const float *)p->q,
		    nout * d));
		CUDA_CHECK(split_upload(&mem, &k, (const float *)p->k,
		    (size_t)kv_heads * p->tk * d));
	}
	CUDA_CHECK(split_upload(&mem, &v, (const float *)p->v,
	    (size_t)kv_heads * p->tk * dv));
	CUDA_CHECK(split_upload(&mem, &block_rows, job->block_rows,
	    (size_t)sc->tr + 1));
	CUDA_CHECK(split_upload(&mem, &block_kv, job->block_kv, (size_t)sc->tr));
	CUDA_CHECK(split_upload(&mem, &range, job->range, (size_t)sc->tr *
	    sc->splits * 2));
	CUDA_CHECK(split_upload(&mem, &row_out, job->row_out, rows));
	CUDA_CHECK(split_upload(&mem, &row_pos, job->row_pos, rows));
	CUDA_CHECK(split_upload(&mem, &plan, job->plan, (size_t)job->merges));
	CUDA_CHECK(split_floats(&mem, &pm, nparts));
	CUDA_CHECK(split_floats(&mem, &pl, nparts));
	CUDA_CHECK(split_floats(&mem, &plse, nparts));
	CUDA_CHECK(split_floats(&mem, &pacc, nparts * dv));
	CUDA_CHECK(split_floats(&mem, &po, nparts * dv));
	CUDA_CHECK(split_floats(&mem, &mm, rows * job->merges));
	CUDA_CHECK(split_floats(&mem, &ml, rows * job->merges));
	CUDA_CHECK(split_floats(&mem, &o, nout * dv));
	CUDA_CHECK(split_floats(&mem, &lse, nout));
	run.threads = rows * dv;
	CUDA_CHECK(gpu_mem_floats(&mem, &scratch, run.threads * job->slots * 3,
	    GPU_MEM_KERNEL));

	P->q = q;
	P->k = k;
	P->v = v;
	P->s = s;
	P->st.tq = p->tq;
	P->st.tk = p->tk;
	P->st.d = d;
	P->st.dv = p->dv;
	P->st.br = sc->br;
	P->st.bc = sc->bc;
	P->st.scale = p->scale;
	P->st.mask = problem_mask(p, 0);
	P->st.mask.slope = 0.0f;
	P->st.mask_bug = job->rule->mask_bug;
	P->st.scores = p->scores_mode;
	/* one ALiBi slope per query head: the row's head is its row of S
	 * (row_out) over Tq */
	if (p->alibi != NULL)
		CUDA_CHECK(split_upload(&mem, &slopes, (const float *)p->alibi,
		    (size_t)p->heads));
	P->slopes = slopes;
	P->st.dtype = p->dtype;
	P->st.convention = job->rule->convention;
	P->st.bug = job->rule->bug;
	P->splits = sc->splits;
	P->block_rows = block_rows;
	P->block_kv = block_kv;
	P->range = range;
	P->row_out = row_out;
	P->row_pos = row_pos;
	P->pm = pm;
	P->pl = pl;
	P->plse = plse;
	P->pacc = pacc;
	P->po = po;

	C->rows = sc->rows;
	C->splits = sc->splits;
	C->dv = p->dv;
	C->merges = job->merges;
	C->slots = job->slots;
	C->convention = job->rule->convention;
	C->form = job->form;
	C->bug = job->merge_bug;
	C->plan = plan;
	C->row_out = row_out;
	C->pm = pm;
	C->pl = pl;
	C->plse = plse;
	C->pacc = pacc;
	C->po = po;
	C->scratch = scratch;
	C->merge_m = mm;
	C->merge_l = ml;
	C->o = o;
	C->lse = lse;

	run.tr = (unsigned)sc->tr;
	run.splits = (unsigned)sc->splits;
	CUDA_CHECK(cudaFuncSetAttribute(teach_split_ranges,
	    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)run.smem));
	/* The ranges, then the combine on their partials, each timed. */
	if (timing_median_ms(split_enqueue_ranges, &run, job->repeat,
	    &res->ms_ranges, err, errlen) != 0 ||
	    timing_median_ms(split_enqueue_combine, &run, job->repeat,
	    &res->ms_combine, err, errlen) != 0)
		goto fail;

	CUDA_CHECK(split_download(res->m, pm, nparts));
	CUDA_CHECK(split_download(res->l, pl, nparts));
	CUDA_CHECK(split_download(res->lse, plse, nparts));
	CUDA_CHECK(split_download(res->acc, pacc, nparts * dv));
	CUDA_CHECK(split_download(res->o, po, nparts * dv));
	CUDA_CHECK(split_download(res->merge_m, mm, rows * job->merges));
	CUDA_CHECK(split_download(res->merge_l, ml, rows * job->merges));
	CUDA_CHECK(split_download(res->out, o, nout * dv));
	CUDA_CHECK(split_download(res->out_lse, lse, nout));
	res->device_bytes = mem.bytes;
	gpu_mem_free(&mem);
	return 0;
fail:
	gpu_mem_free(&mem);
	return -1;
}
