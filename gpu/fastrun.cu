/*
 * fastrun.cu - the fast kernel's entry in the table (kernel.c): its
 * tilings, and a gpu_job through gpu/fast.cu: device memory, the float32
 * <-> fp16/bf16 conversions, timing, and the debug trace laid out by the
 * simulator's step numbers.
 *
 * The problems hold float32 arrays whose values are already rounded to
 * the job's dtype (problem_build does that), so converting them on the
 * device is exact: each problem's Q, K and V go through one float32
 * staging buffer into the packed 16-bit tensors (n, T, d) the kernel
 * reads, problem b at head b of a batch of one.
 *
 * The timed runs (launch) use the kernel as benchmarked
 * (fast_attention_fwd); O and lse come from them.  The trace is the same
 * tiling's trace build run once (fast_attention_trace), whose per-tile arrays
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
#include "kernels.h"
#include "model/dtype.h"
#include "model/util.h"
#include "timing.h"
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


/* ---- its tilings ---- */

/*
 * The variant index for d with tiles Br x Bc (the first of them: 128 x 64
 * at d = 128 exists with 4 and 8 warps), -1 for the default (Br = Bc =
 * 0), or -2 for none.
 */
static int
fastrun_variant(int d, int br, int bc)
{
	struct fast_config cfg;
	int i;

	if (br == 0 && bc == 0)
		return fast_attention_variant(d, -1, &cfg) == 0 ? -1 : -2;
	for (i = 0; fast_attention_variant(d, i, &cfg) == 0; i++)
		if (cfg.br == br && cfg.bc == bc)
			return i;
	return -2;
}

/* "128x64 (default), 128x128, 64x64": the tilings for d. */
extern "C" void
fastrun_tilings(int d, char *buf, size_t len)
{
	struct fast_config cfg, def, prev;
	size_t at = 0;
	int i, k, dup;

	buf[0] = '\0';
	if (fast_attention_variant(d, -1, &def) != 0)
		return;
	for (i = 0; fast_attention_variant(d, i, &cfg) == 0 && at < len; i++) {
		for (dup = 0, k = 0; k < i && !dup; k++) {
			fast_attention_variant(d, k, &prev);
			dup = prev.br == cfg.br && prev.bc == cfg.bc;
		}
		if (dup)
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%dx%d%s",
		    at > 0 ? ", " : "", cfg.br, cfg.bc,
		    cfg.br == def.br && cfg.bc == def.bc ? " (default)" : "");
	}
}

extern "C" int
fastrun_tiling(int d, int br, int bc, struct tiling *t, char *err,
    size_t errlen)
{
	struct fast_config cfg;
	char list[128];
	int v;

	memset(t, 0, sizeof *t);
	v = fastrun_variant(d, br, bc);
	if (v == -2) {
		fastrun_tilings(d, list, sizeof list);
		if (list[0] == '\0')
			return util_error(err, errlen, "kernel fast has no "
			    "tiling at d = %d (it takes d = 64 or 128)", d);
		return util_error(err, errlen, "kernel fast has no Br = %d, "
		    "Bc = %d tiling at d = %d (it has Br x Bc = %s)", br, bc, d,
		    list);
	}
	fast_attention_variant(d, v, &cfg);
	t->br = cfg.br;
	t->bc = cfg.bc;
	t->order = ORDER_FA2;
	return 0;
}

/* ---- the runs ---- */

/* The inputs in 16 bits, packed problem after problem, and what the
 * kernel is called with. */
struct fastrun_in {
	uint16_t *q, *k, *v;
	int bf16, variant;
};

/*
 * Every problem's Q, K and V through one float32 staging buffer into
 * 16-bit device tensors (n, T, d), problem b at head b of a batch of
 * one; counted as use says (the staging buffer never is).
 */
static int
fastrun_upload(const struct gpu_job *job, struct gpu_mem *mem,
    enum gpu_mem_use use, struct fastrun_in *in, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const size_t nq = (size_t)p->tq * p->d, nk = (size_t)p->tk * p->d;
	const size_t h = sizeof(uint16_t);
	float *stage;
	size_t b;

	in->bf16 = p->dtype == DTYPE_BF16;
	in->variant = fastrun_variant(p->d, job->tiling->br, job->tiling->bc);
	if (in->variant == -2) {
		snprintf(err, errlen, "kernel fast has no Br = %d, Bc = %d "
		    "tiling at d = %d", job->tiling->br, job->tiling->bc, p->d);
		goto fail;
	}
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->q, nq * job->n * h, use));
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->k, nk * job->n * h, use));
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->v, nk * job->n * h, use));
	CUDA_CHECK(gpu_mem_floats(mem, &stage, nq > nk ? nq : nk,
	    GPU_MEM_HELPER));
	for (b = 0; b < (size_t)job->n; b++) {
		CUDA_CHECK(cudaMemcpy(stage, job->ps[b].q, nq * sizeof(float),
		    cudaMemcpyHostToDevice));
		fastrun_to16<<<fastrun_blocks(nq), FASTRUN_THREADS>>>(stage,
		    in->q + b * nq, nq, in->bf16);
		CUDA_CHECK(cudaGetLastError());
		CUDA_CHECK(cudaMemcpy(stage, job->ps[b].k, nk * sizeof(float),
		    cudaMemcpyHostToDevice));
		fastrun_to16<<<fastrun_blocks(nk), FASTRUN_THREADS>>>(stage,
		    in->k + b * nk, nk, in->bf16);
		CUDA_CHECK(cudaGetLastError());
		CUDA_CHECK(cudaMemcpy(stage, job->ps[b].v, nk * sizeof(float),
		    cudaMemcpyHostToDevice));
		fastrun_to16<<<fastrun_blocks(nk), FASTRUN_THREADS>>>(stage,
		    in->v + b * nk, nk, in->bf16);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
fail:
	return -1;
}

/* O (16 bits on the device) into res->o as float32 (exact), and lse. */
static int
fastrun_outputs(const struct gpu_job *job, struct gpu_mem *mem,
    const uint16_t *o, const float *lse, int bf16, char *err, size_t errlen)
{
	const size_t no = (size_t)job->ps[0].tq * job->ps[0].d * job->n;
	float *of;

	CUDA_CHECK(gpu_mem_floats(mem, &of, no, GPU_MEM_HELPER));
	fastrun_from16<<<fastrun_blocks(no), FASTRUN_THREADS>>>(o, of, no,
	    bf16);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaMemcpy(job->res->o, of, no * sizeof(float),
	    cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(job->res->lse, lse, (size_t)job->ps[0].tq *
	    job->n * sizeof(float), cudaMemcpyDeviceToHost));
	return 0;
fail:
	return -1;
}

/* One timed run (timing.h). */
struct fastrun_timed {
	const struct gpu_job *job;
	const struct fastrun_in *in;
	uint16_t *o;
	float *lse;
};

static int
fastrun_enqueue(void *ctx, char *err, size_t errlen)
{
	const struct fastrun_timed *r = (const struct fastrun_timed *)ctx;
	const struct problem *p = &r->job->ps[0];

	return fast_attention_fwd(r->in->q, r->in->k, r->in->v, r->o, r->lse,
	    1, r->job->n, p->tq, p->tk, p->d, r->in->bf16 ? FAST_BF16 :
	    FAST_FP16, p->causal, p->scale, r->in->variant, NULL, err, errlen);
}

extern "C" int
fastrun_launch(const struct gpu_job *job, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const size_t no = (size_t)p->tq * p->d * job->n;
	struct gpu_mem mem = GPU_MEM_INIT;
	struct fastrun_in in;
	struct fastrun_timed run;
	int rc = -1;

	memset(&in, 0, sizeof in);
	memset(&run, 0, sizeof run);
	/* The kernel's own memory: Q, K, V, O in 16 bits, lse in float32. */
	if (fastrun_upload(job, &mem, GPU_MEM_KERNEL, &in, err, errlen) != 0)
		goto fail;
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&run.o, no * sizeof(uint16_t),
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &run.lse, (size_t)p->tq * job->n,
	    GPU_MEM_KERNEL));
	/* Poisoned: an output the kernel never wrote cannot pass. */
	CUDA_CHECK(cudaMemset(run.o, 0xff, no * sizeof(uint16_t)));
	CUDA_CHECK(cudaMemset(run.lse, 0xff, (size_t)p->tq * job->n *
	    sizeof(float)));
	run.job = job;
	run.in = &in;
	if (timing_median_ms(fastrun_enqueue, &run, job->repeat, &job->res->ms,
	    err, errlen) != 0)
		goto fail;
	job->res->device_bytes = mem.bytes;
	if (fastrun_outputs(job, &mem, run.o, run.lse, in.bf16, err,
	    errlen) != 0)
		goto fail;
	rc = 0;
fail:
	gpu_mem_free(&mem);
	return rc;
}

/*
 * The kernel's trace (n, ktr, ktc, kbr) on the host, in the simulator's
 * numbering (gpu_trace_at); entries the schedule has no row for stay
 * NaN.  kbr, ktc: the kernel's Br and Tc.
 */
static void
fastrun_lay_trace(const struct gpu_job *job, const float *hm,
    const float *ha, const float *hl, const float *hacc, int kbr, int ktr,
    int ktc)
{
	const struct problem *p = &job->ps[0];
	const struct schedule *sc = job->sched;
	struct gpu_result *res = job->res;
	size_t src, dst, b;
	long step;
	int i, j, r, rows;
	float m;

	for (b = 0; b < (size_t)job->n; b++)
		for (i = 0; i < ktr; i++) {
			rows = p->tq - i * kbr < kbr ? p->tq - i * kbr : kbr;
			for (j = 0; j < sc->jend[i]; j++) {
				step = sc->first[i] + j;
				for (r = 0; r < rows; r++) {
					src = ((b * ktr + i) * ktc + j) * kbr + r;
					dst = gpu_trace_at(res, (int)b, step, r);
					m = hm[src];
					res->m_new[dst] = m * p->scale;
					res->alpha[dst] = isinf(m) && m < 0 ?
					    1.0f : ha[src];
					res->l_new[dst] = hl[src];
					if (res->acc != NULL)
						memcpy(res->acc + dst * p->dv,
						    hacc + src * p->d,
						    (size_t)p->dv * sizeof(float));
				}
			}
		}
}

extern "C" int
fastrun_trace(const struct gpu_job *job, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const size_t no = (size_t)p->tq * p->d * job->n;
	struct gpu_mem mem = GPU_MEM_INIT;
	struct fastrun_in in;
	struct fast_config cfg;
	struct fast_trace tr;
	float *hm = NULL, *ha = NULL, *hl = NULL, *hacc = NULL, *lse_t;
	uint16_t *o_t;
	size_t ntrace;
	int ktr, ktc, rc = -1;

	memset(&in, 0, sizeof in);
	memset(&tr, 0, sizeof tr);
	if (fastrun_upload(job, &mem, GPU_MEM_HELPER, &in, err, errlen) != 0)
		goto fail;
	fast_attention_variant(p->d, in.variant, &cfg);
	ktr = (p->tq + cfg.br - 1) / cfg.br;
	ktc = (p->tk + cfg.bc - 1) / cfg.bc;
	ntrace = (size_t)job->n * ktr * ktc * cfg.br;
	CUDA_CHECK(gpu_mem_floats(&mem, &tr.m, ntrace, GPU_MEM_HELPER));
	CUDA_CHECK(gpu_mem_floats(&mem, &tr.alpha, ntrace, GPU_MEM_HELPER));
	CUDA_CHECK(gpu_mem_floats(&mem, &tr.l, ntrace, GPU_MEM_HELPER));
	CUDA_CHECK(cudaMemset(tr.m, 0xff, ntrace * sizeof(float)));
	CUDA_CHECK(cudaMemset(tr.alpha, 0xff, ntrace * sizeof(float)));
	CUDA_CHECK(cudaMemset(tr.l, 0xff, ntrace * sizeof(float)));
	if (job->res->acc != NULL) {
		CUDA_CHECK(gpu_mem_floats(&mem, &tr.acc, ntrace * p->d,
		    GPU_MEM_HELPER));
		CUDA_CHECK(cudaMemset(tr.acc, 0xff, ntrace * p->d *
		    sizeof(float)));
	}
	/* The trace run's own O and lse, kept only under the fault. */
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&o_t, no * sizeof(uint16_t),
	    GPU_MEM_HELPER));
	CUDA_CHECK(gpu_mem_floats(&mem, &lse_t, (size_t)p->tq * job->n,
	    GPU_MEM_HELPER));
	CUDA_CHECK(cudaMemset(o_t, 0xff, no * sizeof(uint16_t)));
	CUDA_CHECK(cudaMemset(lse_t, 0xff, (size_t)p->tq * job->n *
	    sizeof(float)));
	tr.test_no_rescale = (job->flags & GPU_TEST_NO_RESCALE) != 0;
	if (fast_attention_trace(in.q, in.k, in.v, o_t, lse_t, 1, job->n,
	    p->tq, p->tk, p->d, in.bf16 ? FAST_BF16 : FAST_FP16, p->causal,
	    p->scale, in.variant, &tr, NULL, err, errlen) != 0)
		goto fail;
	CUDA_CHECK(cudaDeviceSynchronize());

	hm = (float *)malloc(ntrace * sizeof(float));
	ha = (float *)malloc(ntrace * sizeof(float));
	hl = (float *)malloc(ntrace * sizeof(float));
	if (tr.acc != NULL)
		hacc = (float *)malloc(ntrace * p->d * sizeof(float));
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
		CUDA_CHECK(cudaMemcpy(hacc, tr.acc, ntrace * p->d *
		    sizeof(float), cudaMemcpyDeviceToHost));
	fastrun_lay_trace(job, hm, ha, hl, hacc, cfg.br, ktr, ktc);
	if (tr.test_no_rescale && fastrun_outputs(job, &mem, o_t, lse_t,
	    in.bf16, err, errlen) != 0)
		goto fail;
	rc = 0;
fail:
	gpu_mem_free(&mem);
	free(hm);
	free(ha);
	free(hl);
	free(hacc);
	return rc;
}
