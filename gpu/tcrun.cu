/*
 * tcrun.cu - the tensor-core kernels' entries in the table (kernel.c):
 * fast (gpu/fast.cu, mma.sync) and wgmma (gpu/wgmma.cu, Hopper's
 * asynchronous warpgroup MMA), both driven through this one file: their
 * tilings, and a gpu_job through the kernel: device memory, the float32
 * <-> fp16/bf16 conversions, timing, and the debug trace laid out by the
 * simulator's step numbers.  The two kernels share one contract (fast.h,
 * wgmma.h: the layouts, the dtypes, the mask, struct fast_trace), so a
 * kernel here is four functions in a struct tcrun_kernel.
 *
 * The problems hold float32 arrays whose values are already rounded to
 * the job's dtype (problem_build does that), so converting them on the
 * device is exact: each problem's Q, K and V go through one float32
 * staging buffer into the packed 16-bit tensors (n, T, d) the kernel
 * reads, problem b at head b of a batch of one.  FP8 (wgmma's build)
 * takes the model's own codes and scales instead (tcrun_upload_fp8), V
 * laid out as the kernel reads it by wgmma_fp8_v_layout.
 *
 * A tiling is a variant of the kernel's own (a Br x Bc it was compiled
 * for; each kernel ships one variant a tiling, the others measured are
 * in dev/cuda/): the default when its tiles are the ones asked for, else
 * the first variant with them.  The timed runs (launch) use the kernel
 * as benchmarked; O and lse come from them.  The trace is the same
 * variant's trace build run once, whose per-tile arrays (n, Tr, Tc, Br)
 * are laid against the schedule: fa2 step schedule_step_of(i, j) for
 * the jbegin[i] <= j < jend[i] the kernel visits (tc_mask.cuh skips the
 * same tiles).  Its m is in units of q.k (of tanh under a cap) and
 * becomes scale m (C m) here; its alpha is 0 where the simulator says 1
 * (a row that has seen nothing yet).
 *
 * Bug no-rescale (the rule's, online_rule.h: neither l nor the
 * accumulator gets alpha) lives in the trace build alone, so the timed
 * code stays the code benchmarked: under it O and lse come from a trace
 * run (the one the trace asks for, or one launch() makes when none is
 * asked), and the time is still the timed kernel's.
 *
 * wgmma is compiled for sm_90a alone (gpu/local.mk), and only when
 * configure found an nvcc that can (HAVE_SM90A); without it the wgmma
 * entry has no functions and kernel.c says why.
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
#include "wgmma.h"

extern "C" {
#include "kernels.h"
#include "model/dtype.h"
#include "model/util.h"
#include "timing.h"
}
#include "to16.h"


/* The fast.h / wgmma.h general entry points, which share one
 * signature: the timed kernel with tr NULL, else its trace build. */
typedef int (*tcrun_fwd_fn)(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    int dtype, const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen);

/* wgmma.h's packed-batch entry (wgmma_attention_varlen). */
typedef int (*tcrun_varlen_fn)(const void *q, const void *k, const void *v,
    void *o, float *lse, int nseq, int heads, const int *cu_q,
    const int *cu_k, int total_q, int total_k, int max_tq, int max_tk,
    int d, int dtype, const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen);

/* wgmma.h's FP8 entry (wgmma_attention_fp8). */
typedef int (*tcrun_fp8_fn)(const void *q, const void *k, const void *vt,
    const float *q_scale, const float *k_scale, const float *v_scale,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen);

/* A tensor-core kernel as this file drives it. */
struct tcrun_kernel {
	const char *name;
	/* Variant i's Br and Bc at head width d (i = -1: the default): 0,
	 * or -1 past the last. */
	int (*tiles)(int d, int i, int *br, int *bc);
	tcrun_fwd_fn fwd;
	tcrun_varlen_fn varlen;	/* a packed batch in one launch, or NULL */
	tcrun_fp8_fn fp8;	/* FP8 codes and scales, or NULL */
};

static int
tcrun_fast_tiles(int d, int i, int *br, int *bc)
{
	struct fast_config cfg;

	if (fast_attention_variant(d, i, &cfg) != 0)
		return -1;
	*br = cfg.br;
	*bc = cfg.bc;
	return 0;
}

static const struct tcrun_kernel tcrun_fast = {
	.name = "fast",
	.tiles = tcrun_fast_tiles,
	.fwd = fast_attention_masked,
	.varlen = NULL,
	.fp8 = NULL,
};

#ifdef HAVE_SM90A
static int
tcrun_wgmma_tiles(int d, int i, int *br, int *bc)
{
	struct wgmma_config cfg;

	if (wgmma_attention_variant(d, i, &cfg) != 0)
		return -1;
	*br = cfg.br;
	*bc = cfg.bc;
	return 0;
}

static const struct tcrun_kernel tcrun_wgmma = {
	.name = "wgmma",
	.tiles = tcrun_wgmma_tiles,
	.fwd = wgmma_attention_masked,
	.varlen = wgmma_attention_varlen,
	.fp8 = wgmma_attention_fp8,
};
#endif

/* ---- the tilings ---- */

/*
 * The variant that runs tiles Br x Bc at head width d: the default when
 * those are its tiles (Br = Bc = 0 asks for it), else the first variant
 * with them; -2 for none.
 */
static int
tcrun_variant(const struct tcrun_kernel *tk, int d, int br, int bc)
{
	int i, dbr, dbc, vbr, vbc;

	if (tk->tiles(d, -1, &dbr, &dbc) != 0)
		return -2;
	if ((br == 0 && bc == 0) || (br == dbr && bc == dbc))
		return -1;
	for (i = 0; tk->tiles(d, i, &vbr, &vbc) == 0; i++)
		if (vbr == br && vbc == bc)
			return i;
	return -2;
}

/* Is variant i's Br x Bc the default's, or that of a variant before it? */
static int
tcrun_tiles_seen(const struct tcrun_kernel *tk, int d, int i)
{
	int k, br = 0, bc = 0, pbr = 0, pbc = 0;

	tk->tiles(d, i, &br, &bc);
	for (k = -1; k < i; k++) {
		tk->tiles(d, k, &pbr, &pbc);
		if (pbr == br && pbc == bc)
			return 1;
	}
	return 0;
}

/* "128x64 (default), 128x128, 64x64": the default first, then every
 * other Br x Bc the variants have, once each. */
static void
tcrun_tilings(const struct tcrun_kernel *tk, int d, char *buf, size_t len)
{
	int i, br, bc;
	size_t at;

	buf[0] = '\0';
	if (tk->tiles(d, -1, &br, &bc) != 0)
		return;
	at = (size_t)snprintf(buf, len, "%dx%d (default)", br, bc);
	for (i = 0; tk->tiles(d, i, &br, &bc) == 0 && at < len; i++)
		if (!tcrun_tiles_seen(tk, d, i))
			at += (size_t)snprintf(buf + at, len - at, ", %dx%d", br,
			    bc);
}

static int
tcrun_tiling(const struct tcrun_kernel *tk, int d, int br, int bc,
    struct tiling *t, char *err, size_t errlen)
{
	char list[128];
	int v;

	memset(t, 0, sizeof *t);
	v = tcrun_variant(tk, d, br, bc);
	if (v == -2) {
		tcrun_tilings(tk, d, list, sizeof list);
		if (list[0] == '\0')
			return util_error(err, errlen, "kernel %s has no "
			    "tiling at d = %d (it takes d = 64 or 128)", tk->name,
			    d);
		return util_error(err, errlen, "kernel %s has no Br = %d, "
		    "Bc = %d tiling at d = %d (it has Br x Bc = %s)", tk->name,
		    br, bc, d, list);
	}
	tk->tiles(d, v, &t->br, &t->bc);
	t->order = ORDER_FA2;
	return 0;
}

/* ---- the runs ---- */

/* The inputs in 16 bits, packed problem after problem, and what the
 * kernel is called with: mask holds the problem's window, cap and (on
 * the device, a slope a problem) ALiBi slopes.  FP8: q and k hold the
 * codes (bytes), v V^T in the kernel's layout (wgmma.h), with the
 * scales qs (a row), ks and vs (a key tile). */
struct tcrun_in {
	uint16_t *q, *k, *v;
	int bf16, fp8, variant;
	float *qs, *ks, *vs;
	struct tc_mask mask;
	int *cu_q, *cu_k;	/* a packed batch's offsets on the device */
	int max_tq, max_tk;	/* and its longest sequence */
};

/* The problems' rules as the kernels take them (fast.h's struct
 * tc_mask), the slopes uploaded as use says: one a problem, since each
 * problem is a head here. */
static int
tcrun_mask(const struct gpu_job *job, struct gpu_mem *mem,
    enum gpu_mem_use use, struct tc_mask *out, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const struct mask_rule m = problem_mask(p, 0);
	float *slopes;
	int b;

	*out = tc_mask_causal(0);
	if (m.window) {
		out->left = m.left;
		out->right = m.right;
	}
	out->softcap = m.softcap;
	if (p->alibi == NULL)
		return 0;
	CUDA_CHECK(gpu_mem_floats(mem, &slopes, (size_t)job->n, use));
	for (b = 0; b < job->n; b++)
		CUDA_CHECK(cudaMemcpy(slopes + b, job->ps[b].alibi,
		    sizeof(float), cudaMemcpyHostToDevice));
	out->alibi = slopes;
	return 0;
fail:
	return -1;
}

/*
 * FP8: every problem's codes as the model quantized them (p->fp8, whose
 * rows are all heads': a problem is head head0 on K/V head kv_head0 of
 * its entry), V through a staging buffer into V^T, and the scales laid
 * as wgmma.h says.  A key tile must lie in one scale block of K and of
 * V: block scales of a tile's keys (the default) or coarser.
 */
#ifdef HAVE_SM90A
static int
tcrun_upload_fp8(const struct tcrun_kernel *tk, const struct gpu_job *job,
    struct gpu_mem *mem, enum gpu_mem_use use, struct tcrun_in *in,
    char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const size_t nq = (size_t)p->tq * p->d, nk = (size_t)p->tk * p->d;
	const size_t n = (size_t)job->n;
	float *qs = NULL, *ks = NULL, *vs = NULL;
	uint8_t *v8;
	int br, bc, tc, rc = -1;
	size_t b, r, j;

	if (tk->fp8 == NULL || tk->tiles(p->d, in->variant, &br, &bc) != 0) {
		snprintf(err, errlen, "kernel %s takes no --dtype fp8", tk->name);
		return -1;
	}
	/* (d is the entry's fp8_d: gpu_kernel_check refused any other) */
	tc = (p->tk + bc - 1) / bc;
	qs = (float *)malloc(n * p->tq * sizeof *qs);
	ks = (float *)malloc(n * tc * sizeof *ks);
	vs = (float *)malloc(n * tc * sizeof *vs);
	if (qs == NULL || ks == NULL || vs == NULL) {
		snprintf(err, errlen, "out of memory for FP8's scales");
		goto fail;
	}
	for (b = 0; b < n; b++) {
		const struct problem *pb = &job->ps[b];
		const struct fp8_data *f = pb->fp8;
		const int q0 = pb->head0 * p->tq, k0 = pb->kv_head0 * p->tk;

		for (r = 0; r < (size_t)p->tq; r++)
			qs[b * p->tq + r] = f->q.scale[fp8_block_of(&f->q,
			    q0 + (int)r)];
		for (j = 0; j < (size_t)tc; j++) {
			const int c0 = k0 + (int)j * bc;
			const int c1 = k0 + ((int)(j + 1) * bc < p->tk ?
			    (int)(j + 1) * bc : p->tk) - 1;

			if (fp8_block_of(&f->k, c0) != fp8_block_of(&f->k, c1) ||
			    fp8_block_of(&f->v, c0) != fp8_block_of(&f->v, c1)) {
				snprintf(err, errlen, "kernel %s takes one K and "
				    "one V scale a tile of %d keys: --fp8-block "
				    "%d splits one (give 0, a tile, or a multiple "
				    "of %d)", tk->name, bc, f->k.block, bc);
				goto fail;
			}
			ks[b * tc + j] = f->k.scale[fp8_block_of(&f->k, c0)];
			vs[b * tc + j] = f->v.scale[fp8_block_of(&f->v, c0)];
		}
	}
	in->fp8 = 1;
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->q, nq * n, use));
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->k, nk * n, use));
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->v,
	    wgmma_fp8_vt_bytes((int)n, p->tk, p->d), use));
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&v8, nk * n, GPU_MEM_HELPER));
	CUDA_CHECK(gpu_mem_floats(mem, &in->qs, n * p->tq, use));
	CUDA_CHECK(gpu_mem_floats(mem, &in->ks, n * tc, use));
	CUDA_CHECK(gpu_mem_floats(mem, &in->vs, n * tc, use));
	for (b = 0; b < n; b++) {
		const struct problem *pb = &job->ps[b];
		const struct fp8_data *f = pb->fp8;

		CUDA_CHECK(cudaMemcpy((uint8_t *)in->q + b * nq, f->q.code +
		    (size_t)pb->head0 * nq, nq, cudaMemcpyHostToDevice));
		CUDA_CHECK(cudaMemcpy((uint8_t *)in->k + b * nk, f->k.code +
		    (size_t)pb->kv_head0 * nk, nk, cudaMemcpyHostToDevice));
		CUDA_CHECK(cudaMemcpy(v8 + b * nk, f->v.code +
		    (size_t)pb->kv_head0 * nk, nk, cudaMemcpyHostToDevice));
	}
	CUDA_CHECK(cudaMemcpy(in->qs, qs, n * p->tq * sizeof *qs,
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(in->ks, ks, n * tc * sizeof *ks,
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(in->vs, vs, n * tc * sizeof *vs,
	    cudaMemcpyHostToDevice));
	if (wgmma_fp8_v_layout(v8, in->v, (int)n, p->tk, p->d, NULL, err,
	    errlen) != 0)
		goto fail;
	rc = 0;
fail:
	free(qs);
	free(ks);
	free(vs);
	return rc;
}
#else
/* Without sm_90a there is no wgmma kernel, so no FP8 kernel either. */
static int
tcrun_upload_fp8(const struct tcrun_kernel *tk, const struct gpu_job *job,
    struct gpu_mem *mem, enum gpu_mem_use use, struct tcrun_in *in,
    char *err, size_t errlen)
{
	(void)job;
	(void)mem;
	(void)use;
	(void)in;
	snprintf(err, errlen, "kernel %s takes no --dtype fp8", tk->name);
	return -1;
}
#endif

/*
 * Every problem's Q, K and V through one float32 staging buffer into
 * 16-bit device tensors (n, T, d), problem b at head b of a batch of
 * one; counted as use says (the staging buffer never is).
 */
static int
tcrun_upload(const struct tcrun_kernel *tk, const struct gpu_job *job,
    struct gpu_mem *mem, enum gpu_mem_use use, struct tcrun_in *in,
    char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const size_t nq = (size_t)p->tq * p->d, nk = (size_t)p->tk * p->d;
	const size_t h = sizeof(uint16_t);
	float *stage;
	size_t b;

	in->bf16 = p->dtype == DTYPE_BF16;
	in->variant = tcrun_variant(tk, p->d, job->tiling->br,
	    job->tiling->bc);
	if (in->variant == -2) {
		snprintf(err, errlen, "kernel %s has no Br = %d, Bc = %d "
		    "tiling at d = %d", tk->name, job->tiling->br,
		    job->tiling->bc, p->d);
		goto fail;
	}
	if (p->dtype == DTYPE_FP8) {
		if (tcrun_upload_fp8(tk, job, mem, use, in, err, errlen) != 0)
			goto fail;
		return tcrun_mask(job, mem, use, &in->mask, err, errlen);
	}
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->q, nq * job->n * h, use));
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->k, nk * job->n * h, use));
	CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->v, nk * job->n * h, use));
	CUDA_CHECK(gpu_mem_floats(mem, &stage, nq > nk ? nq : nk,
	    GPU_MEM_HELPER));
	for (b = 0; b < (size_t)job->n; b++) {
		CUDA_CHECK(cudaMemcpy(stage, job->ps[b].q, nq * sizeof(float),
		    cudaMemcpyHostToDevice));
		CUDA_CHECK(to16(stage, in->q + b * nq, nq, in->bf16));
		CUDA_CHECK(cudaMemcpy(stage, job->ps[b].k, nk * sizeof(float),
		    cudaMemcpyHostToDevice));
		CUDA_CHECK(to16(stage, in->k + b * nk, nk, in->bf16));
		CUDA_CHECK(cudaMemcpy(stage, job->ps[b].v, nk * sizeof(float),
		    cudaMemcpyHostToDevice));
		CUDA_CHECK(to16(stage, in->v + b * nk, nk, in->bf16));
	}
	if (job->nseq > 0) {
		const size_t cu = ((size_t)job->nseq + 1) * sizeof(int);

		CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->cu_q, cu, use));
		CUDA_CHECK(gpu_mem_alloc(mem, (void **)&in->cu_k, cu, use));
		CUDA_CHECK(cudaMemcpy(in->cu_q, p->cu_q, cu,
		    cudaMemcpyHostToDevice));
		CUDA_CHECK(cudaMemcpy(in->cu_k, p->cu_k, cu,
		    cudaMemcpyHostToDevice));
		in->max_tq = in->max_tk = 0;
		for (b = 0; b < (size_t)job->nseq; b++) {
			const int lq = p->cu_q[b + 1] - p->cu_q[b];
			const int lk = p->cu_k[b + 1] - p->cu_k[b];

			in->max_tq = lq > in->max_tq ? lq : in->max_tq;
			in->max_tk = lk > in->max_tk ? lk : in->max_tk;
		}
	}
	return tcrun_mask(job, mem, use, &in->mask, err, errlen);
fail:
	return -1;
}

/*
 * One call of the kernel on the uploaded inputs: the job's n problems as
 * heads of a batch of one, or of a packed batch (its sequences in one
 * launch); tr NULL is the timed kernel.
 */
static int
tcrun_call(const struct tcrun_kernel *tk, const struct gpu_job *job,
    const struct tcrun_in *in, void *o, float *lse,
    const struct fast_trace *tr, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const int dtype = in->bf16 ? FAST_BF16 : FAST_FP16;

	if (in->fp8)
		return tk->fp8(in->q, in->k, in->v, in->qs, in->ks, in->vs, o,
		    lse, 1, job->n, p->tq, p->tk, p->d, &in->mask, p->scale,
		    in->variant, tr, NULL, err, errlen);
	if (job->nseq > 0) {
		if (tk->varlen == NULL) {
			snprintf(err, errlen, "kernel %s takes no packed batch",
			    tk->name);
			return -1;
		}
		return tk->varlen(in->q, in->k, in->v, o, lse, job->nseq,
		    job->n, in->cu_q, in->cu_k, p->tq, p->tk, in->max_tq,
		    in->max_tk, p->d, dtype, &in->mask, p->scale, in->variant,
		    tr, NULL, err, errlen);
	}
	return tk->fwd(in->q, in->k, in->v, o, lse, 1, job->n, p->tq, p->tk,
	    p->d, dtype, &in->mask, p->scale, in->variant, tr, NULL, err,
	    errlen);
}

/* O (16 bits on the device) into res->o as float32 (exact), and lse. */
static int
tcrun_outputs(const struct gpu_job *job, struct gpu_mem *mem,
    const uint16_t *o, const float *lse, int bf16, char *err, size_t errlen)
{
	const size_t no = (size_t)job->ps[0].tq * job->ps[0].d * job->n;
	float *of;

	CUDA_CHECK(gpu_mem_floats(mem, &of, no, GPU_MEM_HELPER));
	CUDA_CHECK(from16(o, of, no, bf16));
	CUDA_CHECK(cudaMemcpy(job->res->o, of, no * sizeof(float),
	    cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(job->res->lse, lse, (size_t)job->ps[0].tq *
	    job->n * sizeof(float), cudaMemcpyDeviceToHost));
	return 0;
fail:
	return -1;
}

/* Does the job's rule need the trace build's O and lse? */
static int
tcrun_bugged(const struct gpu_job *job)
{
	return job->rule->bug == BUG_NO_RESCALE;
}

static int tcrun_trace(const struct tcrun_kernel *tk,
    const struct gpu_job *job, int lay, char *err, size_t errlen);

/* One timed run (timing.h). */
struct tcrun_timed {
	const struct tcrun_kernel *tk;
	const struct gpu_job *job;
	const struct tcrun_in *in;
	uint16_t *o;
	float *lse;
};

static int
tcrun_enqueue(void *ctx, char *err, size_t errlen)
{
	const struct tcrun_timed *r = (const struct tcrun_timed *)ctx;

	return tcrun_call(r->tk, r->job, r->in, r->o, r->lse, NULL, err,
	    errlen);
}

static int
tcrun_launch(const struct tcrun_kernel *tk, const struct gpu_job *job,
    char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const size_t no = (size_t)p->tq * p->d * job->n;
	struct gpu_mem mem = GPU_MEM_INIT;
	struct tcrun_in in;
	struct tcrun_timed run;
	int rc = -1;

	memset(&in, 0, sizeof in);
	memset(&run, 0, sizeof run);
	/* The kernel's own memory: Q, K, V, O in 16 bits, lse in float32. */
	if (tcrun_upload(tk, job, &mem, GPU_MEM_KERNEL, &in, err, errlen) != 0)
		goto fail;
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&run.o, no * sizeof(uint16_t),
	    GPU_MEM_KERNEL));
	CUDA_CHECK(gpu_mem_floats(&mem, &run.lse, (size_t)p->tq * job->n,
	    GPU_MEM_KERNEL));
	/* Poisoned: an output the kernel never wrote cannot pass. */
	CUDA_CHECK(cudaMemset(run.o, 0xff, no * sizeof(uint16_t)));
	CUDA_CHECK(cudaMemset(run.lse, 0xff, (size_t)p->tq * job->n *
	    sizeof(float)));
	run.tk = tk;
	run.job = job;
	run.in = &in;
	if (timing_median_ms(tcrun_enqueue, &run, job->repeat, &job->res->ms,
	    err, errlen) != 0)
		goto fail;
	job->res->device_bytes = mem.bytes;
	if (tcrun_outputs(job, &mem, run.o, run.lse, in.bf16, err, errlen) != 0)
		goto fail;
	/* Under the bug the result is the trace build's: here, unless the
	 * trace that follows (GPU_TRACE) writes it. */
	if (tcrun_bugged(job) && !(job->flags & GPU_TRACE) &&
	    tcrun_trace(tk, job, 0, err, errlen) != 0)
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
tcrun_lay_trace(const struct gpu_job *job, const float *hm, const float *ha,
    const float *hl, const float *hacc, int kbr, int ktr, int ktc)
{
	const struct problem *p = &job->ps[0];
	const int nseq = job->nseq > 0 ? job->nseq : 1;
	const struct schedule *sc;
	struct gpu_result *res = job->res;
	/* m is in the exponent's units: q.k's, or tanh's under a cap */
	const float unit = p->mask.softcap > 0.0f ? p->mask.softcap :
	    p->scale;
	size_t src, dst, b, item;
	long step;
	int s, i, j, r, rows, tq, str;
	float m;

	/* Sequence s's tiles in its own schedule, its steps from step0[s]
	 * on; a packed batch's item is (s, head b), a dense one's head b. */
	for (s = 0; s < nseq; s++)
	for (b = 0; b < (size_t)job->n; b++) {
		sc = job->nseq > 0 ? &job->seqs[s] : job->sched;
		tq = job->nseq > 0 ? p->cu_q[s + 1] - p->cu_q[s] : p->tq;
		str = (tq + kbr - 1) / kbr;
		item = (size_t)s * job->n + b;
		for (i = 0; i < str; i++) {
			rows = tq - i * kbr < kbr ? tq - i * kbr : kbr;
			for (j = sc->jbegin[i]; j < sc->jend[i]; j++) {
				step = schedule_step_of(sc, i, j) +
				    (job->nseq > 0 ? job->step0[s] : 0);
				for (r = 0; r < rows; r++) {
					src = ((item * ktr + i) * ktc + j) * kbr + r;
					dst = gpu_trace_at(res, (int)b, step, r);
					m = hm[src];
					res->m_new[dst] = m * unit;
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
}

/*
 * The trace run's arrays (tr, on the device) to the host and laid on the
 * simulator's steps (tcrun_lay_trace).  0, or -1 with err.
 */
static int
tcrun_fetch_trace(const struct gpu_job *job, const struct fast_trace *tr,
    size_t ntrace, int kbr, int ktr, int ktc, char *err, size_t errlen)
{
	const int d = job->ps[0].d;
	float *hm, *ha, *hl, *hacc = NULL;
	int rc = -1;

	hm = (float *)malloc(ntrace * sizeof(float));
	ha = (float *)malloc(ntrace * sizeof(float));
	hl = (float *)malloc(ntrace * sizeof(float));
	if (tr->acc != NULL)
		hacc = (float *)malloc(ntrace * d * sizeof(float));
	if (hm == NULL || ha == NULL || hl == NULL ||
	    (tr->acc != NULL && hacc == NULL)) {
		snprintf(err, errlen, "out of memory for the GPU trace");
		goto fail;
	}
	CUDA_CHECK(cudaMemcpy(hm, tr->m, ntrace * sizeof(float),
	    cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(ha, tr->alpha, ntrace * sizeof(float),
	    cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(hl, tr->l, ntrace * sizeof(float),
	    cudaMemcpyDeviceToHost));
	if (hacc != NULL)
		CUDA_CHECK(cudaMemcpy(hacc, tr->acc, ntrace * d *
		    sizeof(float), cudaMemcpyDeviceToHost));
	tcrun_lay_trace(job, hm, ha, hl, hacc, kbr, ktr, ktc);
	rc = 0;
fail:
	free(hm);
	free(ha);
	free(hl);
	free(hacc);
	return rc;
}

/*
 * The trace build run once: with lay, its trace laid on the simulator's
 * steps (into job->res's trace arrays, which gpu.c allocated); under the
 * rule's bug its O and lse become the result.  0, or -1 with err.
 */
static int
tcrun_trace(const struct tcrun_kernel *tk, const struct gpu_job *job,
    int lay, char *err, size_t errlen)
{
	const struct problem *p = &job->ps[0];
	const size_t no = (size_t)p->tq * p->d * job->n;
	struct gpu_mem mem = GPU_MEM_INIT;
	struct tcrun_in in;
	struct fast_trace tr;
	float *lse_t;
	uint16_t *o_t;
	size_t ntrace;
	int kbr, kbc, ktr, ktc, rc = -1;

	memset(&in, 0, sizeof in);
	memset(&tr, 0, sizeof tr);
	if (tcrun_upload(tk, job, &mem, GPU_MEM_HELPER, &in, err, errlen) != 0)
		goto fail;
	tk->tiles(p->d, in.variant, &kbr, &kbc);
	/* a packed batch's trace: (sequence, head, i, j, row), with the
	 * longest sequence's Tr and Tc (wgmma.h) */
	ktr = ((job->nseq > 0 ? in.max_tq : p->tq) + kbr - 1) / kbr;
	ktc = ((job->nseq > 0 ? in.max_tk : p->tk) + kbc - 1) / kbc;
	ntrace = (size_t)job->n * (job->nseq > 0 ? job->nseq : 1) * ktr *
	    ktc * kbr;
	/* m, alpha and l even when not laid: the trace build writes them. */
	CUDA_CHECK(gpu_mem_floats(&mem, &tr.m, ntrace, GPU_MEM_HELPER));
	CUDA_CHECK(gpu_mem_floats(&mem, &tr.alpha, ntrace, GPU_MEM_HELPER));
	CUDA_CHECK(gpu_mem_floats(&mem, &tr.l, ntrace, GPU_MEM_HELPER));
	CUDA_CHECK(cudaMemset(tr.m, 0xff, ntrace * sizeof(float)));
	CUDA_CHECK(cudaMemset(tr.alpha, 0xff, ntrace * sizeof(float)));
	CUDA_CHECK(cudaMemset(tr.l, 0xff, ntrace * sizeof(float)));
	if (lay && job->res->acc != NULL) {
		CUDA_CHECK(gpu_mem_floats(&mem, &tr.acc, ntrace * p->d,
		    GPU_MEM_HELPER));
		CUDA_CHECK(cudaMemset(tr.acc, 0xff, ntrace * p->d *
		    sizeof(float)));
	}
	/* The trace run's own O and lse, kept only under the bug. */
	CUDA_CHECK(gpu_mem_alloc(&mem, (void **)&o_t, no * sizeof(uint16_t),
	    GPU_MEM_HELPER));
	CUDA_CHECK(gpu_mem_floats(&mem, &lse_t, (size_t)p->tq * job->n,
	    GPU_MEM_HELPER));
	CUDA_CHECK(cudaMemset(o_t, 0xff, no * sizeof(uint16_t)));
	CUDA_CHECK(cudaMemset(lse_t, 0xff, (size_t)p->tq * job->n *
	    sizeof(float)));
	tr.no_rescale = tcrun_bugged(job);
	if (tcrun_call(tk, job, &in, o_t, lse_t, &tr, err, errlen) != 0)
		goto fail;
	CUDA_CHECK(cudaDeviceSynchronize());
	if (tr.no_rescale && tcrun_outputs(job, &mem, o_t, lse_t, in.bf16, err,
	    errlen) != 0)
		goto fail;
	if (lay && tcrun_fetch_trace(job, &tr, ntrace, kbr, ktr, ktc, err,
	    errlen) != 0)
		goto fail;
	rc = 0;
fail:
	gpu_mem_free(&mem);
	return rc;
}

/* ---- the entries' functions (kernel.c) ---- */

#define TCRUN_ENTRY(NAME, KERNEL)					\
extern "C" int								\
tcrun_##NAME##_launch(const struct gpu_job *job, char *err,		\
    size_t errlen)							\
{									\
	return tcrun_launch(&KERNEL, job, err, errlen);			\
}									\
extern "C" int								\
tcrun_##NAME##_trace(const struct gpu_job *job, char *err,		\
    size_t errlen)							\
{									\
	return tcrun_trace(&KERNEL, job, 1, err, errlen);		\
}									\
extern "C" int								\
tcrun_##NAME##_tiling(int d, int br, int bc, struct tiling *t,		\
    char *err, size_t errlen)						\
{									\
	return tcrun_tiling(&KERNEL, d, br, bc, t, err, errlen);	\
}									\
extern "C" void								\
tcrun_##NAME##_tilings(int d, char *buf, size_t len)			\
{									\
	tcrun_tilings(&KERNEL, d, buf, len);				\
}

TCRUN_ENTRY(fast, tcrun_fast)
#ifdef HAVE_SM90A
TCRUN_ENTRY(wgmma, tcrun_wgmma)
#endif
