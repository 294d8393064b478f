/*
 * wgmma.h - the Hopper FlashAttention forward kernel (gpu/wgmma.cu):
 * wgmma for both products, TMA loads into an mbarrier-guarded ring, a
 * producer warpgroup and two consumer warpgroups taking turns.  fp16 or
 * bf16 in, float32 accumulation.  Needs an sm_90a device (H100, H200);
 * elsewhere every call fails with the launch error in err.
 *
 * The same contract as fast.h, so the two are interchangeable:
 *   Q  (B, H, Tq, d)   K, V  (B, H, Tk, d)   O  (B, H, Tq, d)   of dtype
 *   lse (B, H, Tq) float32:  lse = log sum_c exp(scale * q.k_c)
 * row-major and contiguous on the device, each tensor 16-byte aligned
 * (TMA reads them).  d is 64 or 128; dtype is enum fast_dtype (0 fp16,
 * 1 bf16).  causal aligns the mask bottom-right: query r sees key c when
 * c <= r + Tk - Tq; a row that sees no key gets O = 0, lse = -inf.
 */
#ifndef FLASHSTEP_WGMMA_H
#define FLASHSTEP_WGMMA_H

#include <stddef.h>

#include "fast.h"	/* enum fast_dtype, struct fast_trace */

#ifdef __cplusplus
extern "C" {
#endif

/* One compiled tiling and schedule of the kernel. */
struct wgmma_config {
	int d;		/* head width this variant is built for */
	int br;		/* query rows per block (Br) = 64 * consumers */
	int bc;		/* keys per tile (Bc) */
	int stages;	/* K and V tiles in flight (ring depth) */
	int consumers;	/* consumer warpgroups, 64 query rows each */
	int pingpong;	/* consumers take turns at the tensor cores */
	int overlap;	/* 0: S, softmax, P V in turn; 1: the next tile's
			 * S issued before this softmax, O rescaled after
			 * P V; 2: the same, O rescaled before P V is
			 * issued (FA3's order) */
	int persistent;	/* one block per multiprocessor looping over row
			 * blocks, Q double-buffered (causal: one block per
			 * row block all the same) */
};

/*
 * Variant i (0, 1, ...) for head width d: fills out and returns 0, or -1
 * past the last one.  i = -1 gives the default, the fastest measured.
 * Variants differ in schedule and some in tiling: the simulator replays
 * a variant's own Br and Bc (--br, --bc).
 */
int wgmma_attention_variant(int d, int i, struct wgmma_config *out);

/*
 * O and lse for every (batch, head), with the default variant.  scale <= 0
 * means 1/sqrt(d).  stream is a cudaStream_t (NULL: the default stream);
 * the call is asynchronous.  Returns 0, or -1 with one line in err (bad
 * shape, dtype or alignment, no driver entry point for TMA, a CUDA error
 * at launch); nothing is launched then.
 */
int wgmma_attention_fwd(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    int dtype, int causal, float scale, void *stream, char *err,
    size_t errlen);

/* The same with variant i of wgmma_attention_variant (-1: default). */
int wgmma_attention_fwd_variant(const void *q, const void *k,
    const void *v, void *o, float *lse, int batch, int heads, int tq,
    int tk, int d, int dtype, int causal, float scale, int variant,
    void *stream, char *err, size_t errlen);

/*
 * The debug trace, in fast.h's layout and units exactly (struct
 * fast_trace): entry (b, h, i, j, r) at (((b heads + h) Tr + i) Tc + j) Br
 * + r, with the variant's Br and Bc (wgmma_attention_variant; the default
 * is 128 x 128 at both d), Tr = ceil(Tq / Br), Tc = ceil(Tk / Bc); m unscaled (units
 * of q.k), alpha = exp(scale (m_old - m)) and 0 while m = -inf, l the sum
 * of the float32 p, acc the unnormalized O row after the tile (or NULL).
 * Tiles a causal mask skips and rows past Tq are left as they were.  It
 * runs a separate build of variant i (-1: default) with the trace writes
 * in it (the timed kernels are not touched); tr->no_rescale runs bug
 * no-rescale (l and O not rescaled, as fast.h says).  tr = NULL is
 * wgmma_attention_fwd_variant.
 */
int wgmma_attention_trace(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    int dtype, int causal, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen);

/* The general entry: wgmma_attention_trace under mask's rules (fast.h's
 * struct tc_mask; NULL: none), in fast_attention_masked's units. */
int wgmma_attention_masked(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    int dtype, const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen);

/*
 * A packed batch (flash-attention's varlen) in one launch: nseq
 * sequences of heads heads, sequence b the rows cu_q[b] .. cu_q[b+1]-1
 * of Q and cu_k[b] .. cu_k[b+1]-1 of K and V in every head:
 *   Q  (H, total_q, d)   K, V  (H, total_k, d)   O  (H, total_q, d)
 *   lse (H, total_q)
 * head-major as the dense call's (B, H, T, d) with B = 1.  cu_q and cu_k
 * are nseq + 1 ints on the device (cu[0] = 0, cu[nseq] = the total, never
 * decreasing); max_tq and max_tk the longest sequence's lengths (they
 * size the grid).  The mask aligns bottom-right within each sequence (its
 * own Tq_b, Tk_b) and no tile mixes two.  The trace (tr, or NULL) is laid
 * as wgmma_attention_trace's with (b, h) the item (b heads + h), Tr and
 * Tc those of max_tq and max_tk.  Otherwise as wgmma_attention_masked.
 */
int wgmma_attention_varlen(const void *q, const void *k, const void *v,
    void *o, float *lse, int nseq, int heads, const int *cu_q,
    const int *cu_k, int total_q, int total_k, int max_tq, int max_tk,
    int d, int dtype, const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen);

/*
 * FP8 (e4m3), FlashAttention 3's low-precision path, at d = 128: Q, K and
 * V as e4m3 codes (bytes, fp8_rule.h's format) with float32 scales that
 * turn them into values, as block quantization stores them (model/fp8.h):
 *   q_scale  (B, H, Tq)   one a row (a block's scale, repeated)
 *   k_scale, v_scale  (B, H, Tc)   one a key tile of WGMMA_FP8_BC keys
 * so score (r, c) = q_scale[r] k_scale[c / Bc] (q codes . k codes) and
 * V tile j is v_scale[j] times its codes: blocks of K and V rows must
 * not split a tile (a tile's keys, FA3's, or a multiple).  K and V have
 * the B H heads Q has (grouped heads are run as copies).  V goes in as
 * V^T, which wgmma_fp8_v_layout makes from V (B, H, Tk, d): FP8 wgmma
 * reads its B operand K-major only (FlashAttention 3 transposes V inside
 * its kernel; here it is a kernel of its own, timed apart).  V^T is
 * (B, H, d, WGMMA_FP8_KEYS(Tk)) bytes, wgmma_fp8_vt_bytes of them, zero
 * past Tk, and within each 32 keys in the order P leaves the S
 * registers (wgmma.cu, wgmma_fp8_key_at): not a plain transpose, so make
 * it with wgmma_fp8_v_layout, never by hand.  P is rounded to e4m3 for
 * P V, O is written in fp16, lse in float32; the rest as
 * wgmma_attention_masked (mask, scale, variant, tr: the trace's acc in
 * values, not codes).
 */
#define WGMMA_FP8_BC 128
#define WGMMA_FP8_KEYS(tk) (((tk) + WGMMA_FP8_BC - 1) / WGMMA_FP8_BC * \
	WGMMA_FP8_BC)

/* Bytes of V^T for B H heads of Tk keys. */
size_t wgmma_fp8_vt_bytes(int bh, int tk, int d);

/* V (bh, Tk, d) codes -> V^T (bh, d, WGMMA_FP8_KEYS(Tk)), asynchronous
 * on stream.  0, or -1 with err (d must be 128, both 16-byte aligned). */
int wgmma_fp8_v_layout(const void *v, void *vt, int bh, int tk, int d,
    void *stream, char *err, size_t errlen);

int wgmma_attention_fp8(const void *q, const void *k, const void *vt,
    const float *q_scale, const float *k_scale, const float *v_scale,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
