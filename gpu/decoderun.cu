/*
 * decoderun.cu - the decoding kernel (gpu/decode.cu) as the table's
 * decode entry: decode_launch() takes gpu_run's job (kernels.h), n batch
 * entries of H query heads on G K/V heads, into the kernel's layout
 * (Q (B, H, Tq, d), K and V (B, G, Tk, d), 16 bits: a problem's arrays
 * are already head after head), times it through timing.h, and gives O
 * and lse back in float32.  decode.cu itself stays a plain entry point
 * (decode.h) that gpu/bench/decode_vs_torch.py drives through ctypes;
 * the kernel picks its own key ranges, and the result says how many.
 *
 * Timed from HBM.  A decode call reads K and V once, so when they are
 * smaller than DECODERUN_L2_DEFEAT (four times the H200's 60 MB L2) runs
 * back to back would find them in L2 and time the cache.  The timed runs
 * then cycle through copies of K and V (up to DECODERUN_COPIES, together
 * past DECODERUN_L2_DEFEAT), as decode_vs_torch.py does; every copy holds
 * the same values, so every run gives the same O.  The copies, like the
 * staging buffer of the upload, are helper memory, not the kernel's.
 * Batch entries that share their arrays (bench --gpu's) are uploaded
 * once and copied on the device.
 *
 * A paged problem (--page-size: the problem's paged_cache, model/
 * paged.h) runs paged: its logical K and V are uploaded as above into
 * helper memory, then scattered on the device into the kernel's pool
 * (pages, page_size, G, d), entry b's pages at b pool + its table's
 * physical pages, and the block table (B, pages) says so.  The copies
 * the timed runs cycle through are then copies of the pool.
 *
 * A packed batch (--seqlens-q, --seqlens-k: problem.h's nseq, cu_q,
 * cu_k) runs as the kernel's cache lengths, flash_attn_with_kvcache's
 * cache_seqlens: sequence b is batch entry b, its Tk_b keys at the start
 * of a cache as long as the longest sequence's (zero past Tk_b, which
 * the kernel never reads), its queries entry b's rows.  The kernel takes
 * one query count for every entry, as flash_attn_with_kvcache does, so
 * the sequences must have the same Tq_b (decoderun_packed says so).
 * Grouped heads come packed head after head (problem.h) and are gathered
 * into the kernel's layout on the host.
 *
 * decode_host (kernels.h) is the tests' way in to decode_attention_kv
 * with a cache length per entry and a pool and table of their own.
 */
#include "config.h"

#include "cudacheck.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "decode.h"
#include "kernels.h"
#include "model/dtype.h"
#include "timing.h"
}
#include "to16.h"

#define DECODERUN_L2_DEFEAT ((size_t)256 << 20)
#define DECODERUN_COPIES 16

/* One timed run: the next copy of K and V. */
struct decoderun_timed {
	const struct problem *p;
	int batch, heads, kv_heads;
	const uint16_t *q;
	const uint16_t *kv;	/* K, then V: nkv values each (paged: pools) */
	const uint16_t *more;	/* copy c > 0 of both at more + 2 (c-1) nkv */
	size_t nkv;		/* 16-bit values of K (and of V), all batches */
	const int *table;	/* the device block table, or NULL: contiguous */
	int page_size, max_pages;
	int tq, tk;		/* rows a head and keys an entry (packed: the
				 * longest sequence's) */
	const int *seqlens;	/* the device cache lengths, or NULL: Tk each */
	uint16_t *o;
	float *lse;
	void *ws;
	size_t ws_bytes;
	int splits;		/* 0: the kernel's own choice */
	unsigned ncopy, next;
	struct decode_result ran;	/* the last call's */
};

static int
decoderun_heads(const struct problem *p)
{
	return p->heads > 0 ? p->heads : 1;
}

static int
decoderun_kv_heads(const struct problem *p)
{
	return p->kv_heads > 0 ? p->kv_heads : 1;
}

static int
decoderun_enqueue(void *ctx, char *err, size_t errlen)
{
	struct decoderun_timed *r = (struct decoderun_timed *)ctx;
	const struct problem *p = r->p;
	const unsigned c = r->next++ % r->ncopy;
	const uint16_t *k = c == 0 ? r->kv : r->more + 2 * r->nkv * (c - 1);

	return decode_attention_kv(r->q, k, k + r->nkv, r->o, r->lse, r->batch,
	    r->heads, r->kv_heads, r->tq, r->tk, p->d, p->dtype == DTYPE_BF16 ?
	    DECODE_BF16 : DECODE_FP16, p->causal, p->scale, r->splits,
	    r->seqlens, r->table, r->page_size, r->max_pages, r->ws, r->ws_bytes,
	    NULL, &r->ran, err, errlen);
}

/* Copies of K and V the timed runs cycle through (1: no copy). */
static unsigned
decoderun_copies(size_t kv_bytes)
{
	size_t c;

	if (kv_bytes == 0 || kv_bytes >= DECODERUN_L2_DEFEAT)
		return 1;
	c = (DECODERUN_L2_DEFEAT + kv_bytes - 1) / kv_bytes;
	return (unsigned)(c < DECODERUN_COPIES ? c : DECODERUN_COPIES);
}

/*
 * Contiguous K (or V) (B, G, Tk, d) into the pool (pages, page_size, G,
 * d) through the block table (B, max_pages): one thread a 16-byte chunk.
 */
__global__ void
decoderun_scatter(const uint4 *from, uint4 *pool, const int *table,
    int kv_heads, int tk, int page_size, int max_pages, size_t chunks)
{
	const int per_key = DECODE_D * 2 / 16;
	size_t i;

	for (i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < chunks;
	    i += (size_t)gridDim.x * blockDim.x) {
		const size_t row = i / per_key;	/* (b, g, key) */
		const int key = (int)(row % tk), g = (int)(row / tk % kv_heads);
		const size_t b = row / tk / kv_heads;
		const size_t slot = (size_t)table[b * max_pages + key / page_size] *
		    page_size + key % page_size;

		pool[(slot * kv_heads + g) * per_key + i % per_key] = from[i];
	}
}

static cudaError_t
decoderun_scatter_kv(const uint16_t *from, uint16_t *pool, const int *table,
    int batch, int kv_heads, int tk, int page_size, int max_pages)
{
	const size_t chunks = (size_t)batch * kv_heads * tk * (DECODE_D * 2 / 16);
	const size_t blocks = (chunks + 255) / 256;

	decoderun_scatter<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256>>>(
	    (const uint4 *)from, (uint4 *)pool, table, kv_heads, tk, page_size,
	    max_pages, chunks);
	return cudaGetLastError();
}

/*
 * One array of every batch entry (count floats each, at src(b)) into
 * 16 bits at dst, entry after entry, through the staging buffer; an entry
 * whose array an earlier one shares is copied on the device.
 */
static int
decoderun_upload(const struct gpu_job *job, const float *(*src)(
    const struct problem *), size_t count, int bf16, float *stage,
    uint16_t *dst, char *err, size_t errlen)
{
	int b, a;

	for (b = 0; b < job->n; b++) {
		for (a = 0; a < b && src(&job->ps[a]) != src(&job->ps[b]); a++)
			;
		if (a < b) {
			CUDA_CHECK(cudaMemcpy(dst + b * count, dst + a * count,
			    count * sizeof *dst, cudaMemcpyDeviceToDevice));
			continue;
		}
		CUDA_CHECK(cudaMemcpy(stage, src(&job->ps[b]), count *
		    sizeof(float), cudaMemcpyHostToDevice));
		CUDA_CHECK(to16(stage, dst + b * count, count, bf16));
	}
	return 0;
fail:
	return -1;
}

static const float *
decoderun_q(const struct problem *p)
{
	return p->q;
}

static const float *
decoderun_k(const struct problem *p)
{
	return p->k;
}

static const float *
decoderun_v(const struct problem *p)
{
	return p->v;
}

/* The shape a packed batch runs in: entries, rows each and the longest
 * cache (0, or -1 with err when its sequences' Tq_b differ). */
static int
decoderun_packed(const struct problem *p, int *batch, int *tq, int *tk,
    char *err, size_t errlen)
{
	int b;

	*batch = p->nseq;
	*tq = p->cu_q[1] - p->cu_q[0];
	*tk = 0;
	for (b = 0; b < p->nseq; b++) {
		const int lq = p->cu_q[b + 1] - p->cu_q[b];
		const int lk = p->cu_k[b + 1] - p->cu_k[b];

		if (lq != *tq) {
			snprintf(err, errlen, "decode: sequence %d has %d query "
			    "rows and sequence 0 has %d: the kernel takes a cache "
			    "length per sequence (--seqlens-k) but one query count "
			    "for all (--seqlens-q's lengths equal)", b, lq, *tq);
			return -1;
		}
		*tk = lk > *tk ? lk : *tk;
	}
	return 0;
}

/* Device bytes of the packed run (decoderun_varlen): Q, the padded K
 * and V, O, lse, the cache lengths, the workspace; the staging buffer
 * and O in float32; the copies of K and V. */
static double
decoderun_packed_bytes(const struct problem *p)
{
	char err[256];
	int batch, tq, tk;

	if (decoderun_packed(p, &batch, &tq, &tk, err, sizeof err) != 0)
		return 0.0;
	const size_t nq = (size_t)batch * decoderun_heads(p) * tq * p->d;
	const size_t nk = (size_t)batch * decoderun_kv_heads(p) * tk * p->d;
	const size_t kv = 2 * nk * sizeof(uint16_t);

	return (double)(2 * nq) * sizeof(uint16_t) + (double)kv +
	    (double)nq / p->d * sizeof(float) + (double)batch * sizeof(int) +
	    (double)decode_workspace_bytes(batch, decoderun_heads(p),
	    decoderun_kv_heads(p), tq, tk, 0) +
	    (double)(nq > nk ? nq : nk) * sizeof(float) +
	    (double)nq * sizeof(float) +
	    (double)(decoderun_copies(kv) - 1) * kv;
}

extern "C" double
decode_device_bytes(const struct problem *p, int n)
{
	const size_t nq = (size_t)decoderun_heads(p) * p->tq * p->d;
	const size_t nk = (size_t)decoderun_kv_heads(p) * p->tk * p->d;
	const size_t pool = p->paged.page_size > 0 ? (size_t)decoderun_kv_heads(
	    p) * paged_slots(&p->paged) * p->d : 0;
	const size_t kv = 2 * (pool > 0 ? pool : nk) * n * sizeof(uint16_t);

	if (p->nseq > 0)
		return decoderun_packed_bytes(p);
	/* Q, K, V (paged: the pools, the table and the logical K and V they
	 * are scattered from), O, lse, the workspace; the staging buffer, O
	 * in float32 and the copies of K and V. */
	return (double)(2 * nq * n) * sizeof(uint16_t) + (double)kv +
	    (pool > 0 ? (double)(2 * nk * n) * sizeof(uint16_t) +
	    (double)n * p->paged.pages * sizeof(int) : 0.0) +
	    (double)nq / p->d * n * sizeof(float) +
	    (double)decode_workspace_bytes(n, decoderun_heads(p),
	    decoderun_kv_heads(p), p->tq, p->tk, 0) +
	    (double)(nq > nk ? nq : nk) * sizeof(float) +
	    (double)nq * n * sizeof(float) +
	    (double)(decoderun_copies(kv) - 1) * kv;
}

/*
 * Entry b's pages as the kernel's block table row b: its table's
 * physical pages moved to its own stretch of the pools, b pool on.
 * Every entry is paged alike (one page size, pool and count of pages).
 */
static int
decoderun_table(const struct gpu_job *job, int *table, char *err,
    size_t errlen)
{
	const struct paged_cache *pc0 = &job->ps[0].paged;
	int b, i;

	for (b = 0; b < job->n; b++) {
		const struct paged_cache *pc = &job->ps[b].paged;

		if (pc->page_size != pc0->page_size || pc->pool != pc0->pool ||
		    pc->pages != pc0->pages) {
			snprintf(err, errlen, "decode: batch entry %d is paged "
			    "otherwise than entry 0 (page size, pool or pages)", b);
			return -1;
		}
		for (i = 0; i < pc->pages; i++)
			table[(size_t)b * pc->pages + i] = b * pc->pool + pc->table[i];
	}
	return 0;
}

/*
 * Copies of K and V the timed runs cycle through, after the first at
 * r->kv (2 r->nkv values), the timed runs, and O (nq floats) and lse
 * (rows) back in float32 into host arrays o and lse, in the kernel's
 * order: the end every run of decode_launch shares.
 */
static int
decoderun_time(const struct gpu_job *job, struct decoderun_timed *r,
    struct gpu_mem *mem, size_t nq, size_t rows, int bf16, float *o,
    float *lse, char *err, size_t errlen)
{
	uint16_t *more;
	float *of;
	size_t c;

	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&more, (r->ncopy - 1) * 2 *
	    r->nkv * sizeof *more, GPU_MEM_HELPER));
	for (c = 0; c + 1 < r->ncopy; c++)
		CUDA_CHECK(cudaMemcpy(more + c * 2 * r->nkv, r->kv, 2 * r->nkv *
		    sizeof *more, cudaMemcpyDeviceToDevice));
	r->more = more;
	if (timing_median_ms(decoderun_enqueue, r, job->repeat, &job->res->ms,
	    err, errlen) != 0)
		return -1;
	job->res->splits = r->ran.splits;
	CUDA_CHECK(gpu_mem_floats(mem, &of, nq, GPU_MEM_HELPER));
	CUDA_CHECK(from16(r->o, of, nq, bf16));
	CUDA_CHECK(cudaMemcpy(o, of, nq * sizeof(float),
	    cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(lse, r->lse, rows * sizeof(float),
	    cudaMemcpyDeviceToHost));
	job->res->device_bytes = mem->bytes;
	return 0;
fail:
	return -1;
}

/*
 * A packed batch (the header says how it runs), one problem of H query
 * heads on G K/V heads, each head packed (problem.h): its rows gathered
 * into the kernel's (B, H, Tq, d) and (B, G, Tk, d) on the host, O and
 * lse scattered back.
 */
static int
decoderun_varlen(const struct gpu_job *job, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const int bf16 = p->dtype == DTYPE_BF16;
	struct gpu_mem mem = GPU_MEM_INIT;
	struct decoderun_timed run;
	float *host = NULL, *lse_k = NULL, *stage;
	int *lens = NULL, *dlens;
	uint16_t *q, *kv;
	size_t nq, nk, rows, big;
	int b, h, half;

	memset(&run, 0, sizeof run);
	if (job->n != 1) {
		snprintf(err, errlen, "decode: a packed batch runs as one "
		    "problem, not %d", job->n);
		return -1;
	}
	if (decoderun_packed(p, &run.batch, &run.tq, &run.tk, err, errlen) != 0)
		return -1;
	run.p = p;
	run.heads = decoderun_heads(p);
	run.kv_heads = decoderun_kv_heads(p);
	rows = (size_t)run.batch * run.heads * run.tq;
	nq = rows * p->d;
	nk = (size_t)run.batch * run.kv_heads * run.tk * p->d;
	big = nq > nk ? nq : nk;
	run.nkv = nk;
	run.ncopy = decoderun_copies(2 * nk * sizeof(uint16_t));
	run.splits = job->splits;
	run.ws_bytes = decode_workspace_bytes(run.batch, run.heads, run.kv_heads,
	    run.tq, run.tk, run.splits);
	host = (float *)calloc(big, sizeof *host);
	lse_k = (float *)malloc(rows * sizeof *lse_k);
	lens = (int *)malloc((size_t)run.batch * sizeof *lens);
	if (host == NULL || lse_k == NULL || lens == NULL) {
		snprintf(err, errlen, "decode: out of memory for the padded "
		    "cache");
		goto fail;
	}
	for (b = 0; b < run.batch; b++)
		lens[b] = p->cu_k[b + 1] - p->cu_k[b];
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&q, nq * sizeof *q,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&kv, 2 * nk * sizeof *kv,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&run.o, nq * sizeof *run.o,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &run.lse, rows, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&dlens, (size_t)run.batch *
	    sizeof *dlens, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, &run.ws, run.ws_bytes, GPU_MEM_KERNEL));
	CUDA_CHECK(cudaMemset(run.ws, 0, run.ws_bytes));
	CUDA_CHECK(gpu_mem_floats(&mem, &stage, big, GPU_MEM_HELPER));
	CUDA_CHECK(cudaMemcpy(dlens, lens, (size_t)run.batch * sizeof *dlens,
	    cudaMemcpyHostToDevice));
	/* Q: entry b, head h is sequence b's rows of packed head h. */
	for (b = 0; b < run.batch; b++)
		for (h = 0; h < run.heads; h++)
			memcpy(host + ((size_t)b * run.heads + h) * run.tq * p->d,
			    p->q + problem_packed_row(p, h, p->cu_q[b]) * p->d,
			    (size_t)run.tq * p->d * sizeof *host);
	CUDA_CHECK(cudaMemcpy(stage, host, nq * sizeof(float),
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(to16(stage, q, nq, bf16));
	/* K, then V: sequence b's keys at the start of entry b's cache. */
	for (half = 0; half < 2; half++) {
		const float *src = half == 0 ? p->k : p->v;

		memset(host, 0, nk * sizeof *host);
		for (b = 0; b < run.batch; b++)
			for (h = 0; h < run.kv_heads; h++)
				memcpy(host + ((size_t)b * run.kv_heads + h) * run.tk *
				    p->d, src + ((size_t)h * p->tk + p->cu_k[b]) * p->d,
				    (size_t)lens[b] * p->d * sizeof *host);
		CUDA_CHECK(cudaMemcpy(stage, host, nk * sizeof(float),
		    cudaMemcpyHostToDevice));
		CUDA_CHECK(to16(stage, kv + half * nk, nk, bf16));
	}
	run.q = q;
	run.kv = kv;
	run.seqlens = dlens;
	/* O and lse come back in the kernel's order, then go to the packed
	 * one. */
	if (decoderun_time(job, &run, &mem, nq, rows, bf16, host, lse_k, err,
	    errlen) != 0)
		goto fail;
	for (b = 0; b < run.batch; b++)
		for (h = 0; h < run.heads; h++) {
			const size_t from = ((size_t)b * run.heads + h) * run.tq;
			const size_t to = problem_packed_row(p, h, p->cu_q[b]);

			memcpy(job->res->o + to * p->d, host + from * p->d,
			    (size_t)run.tq * p->d * sizeof *host);
			memcpy(job->res->lse + to, lse_k + from, (size_t)run.tq *
			    sizeof *lse_k);
		}
	free(lse_k);
	free(host);
	free(lens);
	gpu_mem_free(&mem);
	return 0;
fail:
	free(lse_k);
	free(host);
	free(lens);
	gpu_mem_free(&mem);
	return -1;
}

extern "C" int
decode_launch(const struct gpu_job *job, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const int bf16 = p->dtype == DTYPE_BF16;
	const int paged = p->paged.page_size > 0;
	const size_t n = (size_t)job->n, rows = (size_t)decoderun_heads(p) *
	    p->tq, nq = rows * p->d;
	const size_t nk = (size_t)decoderun_kv_heads(p) * p->tk * p->d;
	struct gpu_mem mem = GPU_MEM_INIT;
	struct decoderun_timed run;
	uint16_t *q, *kv, *o, *logical;
	float *stage;
	int *table = NULL, *dtable;

	if (p->nseq > 0)
		return decoderun_varlen(job, err, errlen);
	memset(&run, 0, sizeof run);
	run.p = p;
	run.tq = p->tq;
	run.tk = p->tk;
	run.batch = job->n;
	run.heads = decoderun_heads(p);
	run.kv_heads = decoderun_kv_heads(p);
	run.nkv = paged ? (size_t)run.kv_heads * paged_slots(&p->paged) * p->d *
	    n : nk * n;
	run.ncopy = decoderun_copies(2 * run.nkv * sizeof(uint16_t));
	run.splits = job->splits;
	run.ws_bytes = decode_workspace_bytes(job->n, run.heads, run.kv_heads,
	    p->tq, p->tk, run.splits);
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&q, nq * n * sizeof *q,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&kv, 2 * run.nkv * sizeof *kv,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&o, nq * n * sizeof *o,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &run.lse, rows * n, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, &run.ws, run.ws_bytes, GPU_MEM_KERNEL));
	CUDA_CHECK(cudaMemset(run.ws, 0, run.ws_bytes));
	CUDA_CHECK(gpu_mem_floats(&mem, &stage, nq > nk ? nq : nk,
	    GPU_MEM_HELPER));
	logical = kv;
	if (paged) {
		const size_t entries = n * p->paged.pages;

		if ((table = (int *)malloc(entries * sizeof *table)) == NULL) {
			snprintf(err, errlen, "decode: out of memory for the block "
			    "table");
			goto fail;
		}
		if (decoderun_table(job, table, err, errlen) != 0)
			goto fail;
		CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&dtable, entries *
		    sizeof *dtable, GPU_MEM_KERNEL));
		CUDA_CHECK(cudaMemcpy(dtable, table, entries * sizeof *dtable,
		    cudaMemcpyHostToDevice));
		CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&logical, 2 * nk * n *
		    sizeof *logical, GPU_MEM_HELPER));
		CUDA_CHECK(cudaMemset(kv, 0, 2 * run.nkv * sizeof *kv));
		run.table = dtable;
		run.page_size = p->paged.page_size;
		run.max_pages = p->paged.pages;
	}
	if (decoderun_upload(job, decoderun_q, nq, bf16, stage, q, err,
	    errlen) != 0 || decoderun_upload(job, decoderun_k, nk, bf16, stage,
	    logical, err, errlen) != 0 || decoderun_upload(job, decoderun_v, nk,
	    bf16, stage, logical + nk * n, err, errlen) != 0)
		goto fail;
	if (paged) {
		CUDA_CHECK(decoderun_scatter_kv(logical, kv, run.table, job->n,
		    run.kv_heads, p->tk, run.page_size, run.max_pages));
		CUDA_CHECK(decoderun_scatter_kv(logical + nk * n, kv + run.nkv,
		    run.table, job->n, run.kv_heads, p->tk, run.page_size,
		    run.max_pages));
	}
	run.kv = kv;
	run.q = q;
	run.o = o;
	if (decoderun_time(job, &run, &mem, nq * n, rows * n, bf16,
	    job->res->o, job->res->lse, err, errlen) != 0)
		goto fail;
	free(table);
	gpu_mem_free(&mem);
	return 0;
fail:
	free(table);
	gpu_mem_free(&mem);
	return -1;
}

extern "C" int
decode_host(const struct decode_host_call *c, float *o, float *lse,
    struct decode_result *res, char *err, size_t errlen)
{
	const int bf16 = c->dtype == DECODE_BF16;
	const size_t nq = (size_t)c->batch * c->heads * c->tq * DECODE_D;
	const size_t nkv = c->table != NULL ? (size_t)c->pages * c->page_size *
	    c->kv_heads * DECODE_D : (size_t)c->batch * c->kv_heads * c->tk *
	    DECODE_D;
	const size_t rows = nq / DECODE_D;
	const size_t ws_bytes = decode_workspace_bytes(c->batch, c->heads,
	    c->kv_heads, c->tq, c->tk, c->splits);
	struct gpu_mem mem = GPU_MEM_INIT;
	uint16_t *q, *k, *v, *o16;
	float *stage, *dlse, *of;
	int *seqlens = NULL, *table = NULL;
	void *ws;

	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&q, nq * sizeof *q,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&k, nkv * sizeof *k,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&v, nkv * sizeof *v,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&o16, nq * sizeof *o16,
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &dlse, rows, GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_alloc(&mem, &ws, ws_bytes, GPU_MEM_KERNEL));
	CUDA_CHECK(cudaMemset(ws, 0, ws_bytes));
	CUDA_CHECK(gpu_mem_floats(&mem, &stage, nq > nkv ? nq : nkv,
	    GPU_MEM_HELPER));
	CUDA_CHECK(cudaMemcpy(stage, c->q, nq * sizeof(float),
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(to16(stage, q, nq, bf16));
	CUDA_CHECK(cudaMemcpy(stage, c->k, nkv * sizeof(float),
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(to16(stage, k, nkv, bf16));
	CUDA_CHECK(cudaMemcpy(stage, c->v, nkv * sizeof(float),
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(to16(stage, v, nkv, bf16));
	if (c->seqlens != NULL) {
		CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&seqlens, c->batch *
		    sizeof *seqlens, GPU_MEM_KERNEL));
		CUDA_CHECK(cudaMemcpy(seqlens, c->seqlens, c->batch *
		    sizeof *seqlens, cudaMemcpyHostToDevice));
	}
	if (c->table != NULL) {
		const size_t entries = (size_t)c->batch * c->max_pages;

		CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&table, entries *
		    sizeof *table, GPU_MEM_KERNEL));
		CUDA_CHECK(cudaMemcpy(table, c->table, entries * sizeof *table,
		    cudaMemcpyHostToDevice));
	}
	if (decode_attention_kv(q, k, v, o16, dlse, c->batch, c->heads,
	    c->kv_heads, c->tq, c->tk, DECODE_D, c->dtype, c->causal, c->scale,
	    c->splits, seqlens, table, c->page_size, c->max_pages, ws, ws_bytes,
	    NULL, res, err, errlen) != 0)
		goto fail;
	CUDA_CHECK(cudaDeviceSynchronize());
	CUDA_CHECK(gpu_mem_floats(&mem, &of, nq, GPU_MEM_HELPER));
	CUDA_CHECK(from16(o16, of, nq, bf16));
	CUDA_CHECK(cudaMemcpy(o, of, nq * sizeof(float), cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(lse, dlse, rows * sizeof(float),
	    cudaMemcpyDeviceToHost));
	gpu_mem_free(&mem);
	return 0;
fail:
	gpu_mem_free(&mem);
	return -1;
}
