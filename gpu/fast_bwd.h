/*
 * fast_bwd.h - FlashAttention 2's backward on the tensor cores
 * (gpu/fast_bwd.cu): fp16 or bf16 in, float32 sums, mma.sync.  A plain C
 * entry point with device pointers, as fast.h's forward, so the table's
 * glue, the tests and Python (ctypes) can all call it.
 *
 * Shapes (row-major, contiguous, on the device), G = heads / kv_heads:
 *   Q, O, dO  (B, H, Tq, d)      K, V  (B, Hkv, Tk, d)   of dtype
 *   lse       (B, H, Tq) float32, the forward's (fast.h): natural log
 *   dQ (B, H, Tq, d)  dK, dV (B, Hkv, Tk, d): of dtype, or float32 with
 *   FAST_BWD_F32_OUT.  Query head h reads K/V head h / G; dK and dV of a
 *   K/V head are summed over its G query heads.
 * d is 64 or 128.  causal aligns the mask bottom-right (tile_rule.h):
 * query r sees key c when c <= r + Tk - Tq; a row that sees no key (lse
 * = -inf) adds nothing and gets dQ = 0.  fast_attention_bwd_masked
 * takes what the forward's fast_attention_masked takes besides: a
 * sliding window, a softcap and ALiBi (below).
 *
 * dQ, two ways:
 *   atomic   (default) FlashAttention 2's: each key block's thread
 *            block adds its part into a float32 dQ in device memory with
 *            atomicAdd; the order of the adds, and dQ's last bits, change
 *            from run to run.
 *   ordered  (FAST_BWD_ORDERED) the same adds, but key block j adds its
 *            part of dQ_i only after the key blocks before it that see
 *            row block i have: dQ = 0 + part_0 + part_1 + ..., the
 *            simulator's order, the same bits every run; a counter per
 *            (batch, head, row block) orders them.
 */
#ifndef FLASHSTEP_FAST_BWD_H
#define FLASHSTEP_FAST_BWD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAST_BWD_ORDERED	0x1	/* deterministic dQ (above) */
#define FAST_BWD_F32_OUT	0x2	/* dQ, dK, dV in float32 */
#define FAST_BWD_NO_SCALE	0x4	/* bug no-scale: dQ, dK lose scale */
#define FAST_BWD_NO_D		0x8	/* bug no-d: dS = P o dP */
#define FAST_BWD_BC64		0x10	/* 64 keys a block (4 warps), not
					 * the default's 128 (8 warps) */

/* The tiles of the default run (and of its trace build): query rows a
 * step, keys a block (one warp per 16).  The kernel table's entry
 * (kernel.c) steps the simulator's backward on them. */
#define FAST_BWD_TILE_BR	64
#define FAST_BWD_TILE_BC	128

/* One compiled tiling: key rows per block (one warp per 16 keys) and
 * query rows per inner step. */
struct fast_bwd_config {
	int d, bc, br, warps;
};

/* The tiling run for head width d (0, or -1 for a d it has none for). */
int fast_bwd_config(int d, struct fast_bwd_config *out);

/* Bytes of device workspace a call needs (D, lse in base 2, the float32
 * dQ, the ordered dQ's counters), 256-byte aligned. */
size_t fast_bwd_workspace_bytes(int batch, int heads, int tq, int d);

/*
 * dQ, dK, dV for every (batch, head).  scale <= 0 means 1/sqrt(d).
 * work: fast_bwd_workspace_bytes of device memory.  stream is a
 * cudaStream_t (NULL: the default); the call is asynchronous.  Returns
 * 0, or -1 with one line in err (bad shape, dtype, heads not a multiple
 * of kv_heads, a CUDA error at launch); nothing is written then.
 */
int fast_attention_bwd(const void *q, const void *k, const void *v,
    const void *o, const void *dout, const float *lse, void *dq, void *dk,
    void *dv, void *work, int batch, int heads, int kv_heads, int tq,
    int tk, int d, int dtype, int causal, float scale, int flags,
    void *stream, char *err, size_t errlen);

/*
 * The same under the rules of mask (fast.h's struct tc_mask, as
 * fast_attention_masked takes them; NULL: none): a window (left, right),
 * a softcap C, ALiBi's slopes (heads, on the device).  O and lse must be
 * the forward's under the same mask (lse natural-log, m C + log l under
 * a cap: tc_mask.cuh's units); P is recomputed from the same bent score
 * u, and dS goes back through the cap, times 1 - tanh^2(scale q.k / C),
 * before dQ = scale dS K and dK = scale dS^T Q; ALiBi's bias passes dS
 * through.  The row blocks each key block visits are the simulator's
 * (tc_mask.cuh's tc_rule_row_blocks).  fast_attention_bwd is the causal
 * mask, or none, through it.
 */
struct tc_mask;
int fast_attention_bwd_masked(const void *q, const void *k, const void *v,
    const void *o, const void *dout, const float *lse, void *dq, void *dk,
    void *dv, void *work, int batch, int heads, int kv_heads, int tq,
    int tk, int d, int dtype, const struct tc_mask *mask, float scale,
    int flags, void *stream, char *err, size_t errlen);

/*
 * The same from host arrays of float32 (values the dtype holds: they
 * are rounded to it on the way in; O is rounded as the forward would
 * have stored it), gradients back in float32 host arrays: the table's
 * glue and the tests use it.  repeat timed runs after the first; *ms
 * gets their median (CUDA events).  0, or -1 with err.
 */
struct fast_bwd_host {
	int batch, heads, kv_heads, tq, tk, d, dtype, causal;
	/* Or the rules (NULL: causal's), its alibi (heads) on the host. */
	const struct tc_mask *mask;
	float scale;
	int flags;			/* FAST_BWD_ORDERED, _NO_SCALE, _NO_D */
	const float *q, *k, *v, *o, *dout, *lse;
	float *dq, *dk, *dv;		/* results */
	int repeat;
	double ms;			/* set */
	double device_bytes;		/* set */
	/*
	 * Or NULL: the trace build, run once after the timed runs (heads =
	 * kv_heads; the gradients stay the timed runs'), writes dK, dV and,
	 * with the ordered dQ, dQ after every step, numbered and cut as the
	 * simulator's backward on the default tiles (fast_bwd_trace_steps
	 * steps a (batch, head); per step FAST_BWD_TILE_BC keys, clamped
	 * to Tk, of dK and dV, FAST_BWD_TILE_BR rows, clamped to Tq, of
	 * dQ; d floats a row).  Entries it has no step for are left as
	 * they were.
	 */
	float *trace_dk, *trace_dv, *trace_dq;
};

/* The trace build's steps a (batch, head): the simulator's backward's
 * under the causal mask or none, or under mask's window; -1 for a bad
 * mask. */
long fast_bwd_trace_steps(int tq, int tk, int causal);
long fast_bwd_trace_steps_masked(int tq, int tk, const struct tc_mask *mask);

int fast_bwd_run_host(struct fast_bwd_host *job, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
