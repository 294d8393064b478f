/*
 * fast.h - the fast FlashAttention-2 forward kernel (gpu/fast.cu): fp16 or
 * bf16 in, float32 accumulation on tensor cores.  A plain C entry point,
 * so the C host code, the standalone benchmark and Python (ctypes) can
 * all call it with device pointers.
 *
 * Shapes (row-major, contiguous, all on the device):
 *   Q  (B, H, Tq, d)   K, V  (B, H, Tk, d)   O  (B, H, Tq, d)   of dtype
 *   lse (B, H, Tq) float32:  lse = log sum_c exp(scale * q.k_c)
 * d is 64 or 128.  causal aligns the mask bottom-right: query r sees key c
 * when c <= r + Tk - Tq; a row that sees no key gets O = 0, lse = -inf.
 */
#ifndef FLASHSTEP_FAST_H
#define FLASHSTEP_FAST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fast_dtype {
	FAST_FP16 = 0,
	FAST_BF16 = 1,
	FAST_FP8 = 2,	/* e4m3 codes with scales: wgmma_attention_fp8 alone */
};

/* One compiled tiling of the kernel. */
struct fast_config {
	int d;		/* head width this variant is built for */
	int br;		/* query rows per block (Br) */
	int bc;		/* keys per tile (Bc) */
	int warps;	/* warps per block; each owns br / warps query rows */
	int q_in_regs;	/* Q fragments held in registers, not re-read */
};

/*
 * Variant i (0, 1, ...) for head width d: fills out and returns 0, or -1
 * past the last one.  i = -1 gives the default, the fastest measured.
 */
int fast_attention_variant(int d, int i, struct fast_config *out);

/*
 * O and lse for every (batch, head).  scale <= 0 means 1/sqrt(d).
 * variant as in fast_attention_variant (-1: default).  stream is a
 * cudaStream_t (NULL: the default stream); the call is asynchronous.
 * Returns 0, or -1 with one line in err (bad shape, bad dtype, a CUDA
 * error at launch); nothing is written then.
 */
int fast_attention_fwd(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    int dtype, int causal, float scale, int variant, void *stream,
    char *err, size_t errlen);

/*
 * What a row may see and what its scores become, mask_rule.h's rules as
 * flash-attention's interface names them (window_size, softcap,
 * alibi_slopes):
 *   left, right  the window: query r sees key c when r + Tk - Tq - left
 *                <= c <= r + Tk - Tq + right, -1 unbounded on that side;
 *                (-1, 0) is the causal mask, (-1, -1) none.  Key tiles
 *                wholly outside are never loaded.
 *   softcap      C > 0: the scaled score x becomes C tanh(x / C), before
 *                the max; 0: no cap
 *   alibi        (heads) float32 slopes on the device, one per head (the
 *                same for every batch entry), or NULL: the score gets
 *                -slope |r + Tk - Tq - c| after the cap
 * A row that sees no key gets O = 0, lse = -inf.
 */
struct tc_mask {
	int left, right;
	float softcap;
	const float *alibi;
};

/* The causal mask, or none. */
static inline struct tc_mask
tc_mask_causal(int causal)
{
	struct tc_mask m = { -1, causal ? 0 : -1, 0.f, NULL };

	return m;
}

/*
 * The debug trace: the state of every row after every tile it visits,
 * from a separate build of the same tiling (the timed kernel is not
 * touched).  Device arrays of float32, entry (b, h, i, j, r) at
 *   (((b heads + h) Tr + i) Tc + j) Br + r
 * for row block i (Tr = ceil(Tq / Br)), key tile j (Tc = ceil(Tk / Bc))
 * and row r of the block; acc has d values per entry.  Entries of tiles
 * a causal mask skips, and of rows past Tq, are left as they were.
 *   m      the row max after the tile, in units of q.k: UNSCALED (the
 *          kernel works in base 2 with scale log2(e) folded into each
 *          exponent), so scale * m is the simulator's m_new
 *   alpha  exp(scale (m_old - m)) = 2^(scale log2(e) (m_old - m)); 0
 *          while m = -inf (the simulator says 1: both leave l = 0)
 *   l      the row sum after the tile, from the float32 p
 *   acc    the unnormalized accumulator row (O before dividing by l), in
 *          float32, or NULL for none
 */
struct fast_trace {
	float *m, *alpha, *l, *acc;
	/* Bug no-rescale (BUG_NO_RESCALE, src/model/online_rule.h): l and
	 * the accumulator keep their old values, l' = l + sum p and u' = u +
	 * p V, as the simulator's rule with that bug does; alpha is still
	 * traced true, and the run's O and lse carry the bug.  0: correct. */
	int no_rescale;
};

/* fast_attention_fwd with the trace written to tr (NULL: no trace, the
 * timed kernel). */
int fast_attention_trace(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    int dtype, int causal, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen);

/* The general entry: fast_attention_trace under mask's rules (NULL:
 * none).  Under a cap C the trace's m is tanh's, in units of 1 / C: C m
 * is the simulator's m_new (without one, scale m is). */
int fast_attention_masked(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    int dtype, const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
