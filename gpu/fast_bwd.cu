/*
 * fast_bwd.cu - FlashAttention 2's backward (its Algorithm 2) on the
 * tensor cores: fp16 or bf16 in, float32 sums, mma.sync m16n8k16.  The
 * teaching backward (teach_bwd.cu) shows the algorithm in float32, the
 * simulator's order; this one runs it as FlashAttention 2's CUDA code
 * does.  The interface is fast_bwd.h; the primitives (cp.async,
 * ldmatrix, mma, the swizzle) are fast_mma.cuh's, shared with the
 * forward (fast.cu), whose opening comment explains the fragment
 * layouts used here.
 *
 * Three launches:
 *   fast_bwd_dsum   D = rowsum(dO o O) in float32, one warp per row (O as
 *                   the forward stored it, in 16 bits); with the atomic
 *                   dQ it also zeroes the float32 dQ it will add into
 *   fast_bwd_kernel one block per (key block j, K/V head, batch): K_j
 *                   and V_j (Bc x d) in shared memory for the whole
 *                   column; dK_j and dV_j in registers; the inner loop
 *                   runs over the group's query heads and, for each, the
 *                   row blocks i that see key block j (tc_rule_row_blocks:
 *                   under causal or a window the simulator's ibegin, iend)
 *   fast_bwd_dq     the float32 dQ (already scaled) to the dtype; not
 *                   run when the caller asked for float32 out, where the
 *                   accumulator is dQ itself
 *
 * One step (i, j) in the per-warp layout (fast_bwd_kernel: the 4-warp
 * tiling's, FAST_BWD_BC64; the 8-warp tiling's default is
 * FlashAttention 2's layout, fast_bwd_kernel_p, further down), warp w
 * owning keys [16 w, 16 w + 16) of the block:
 *   S^T = K_w Q_i^T            (16 x Br)   A: K rows, B: Q rows
 *   P^T = exp(scale S^T - lse) (registers; masked entries 0; a row past
 *                               Tq or seeing no key has lse taken as
 *                               +inf, so its p is 2^-inf = 0, never NaN)
 *   dV_w += P^T dO_i           (16 x d)    A: P^T packed to 16 bits in
 *                                          registers, B: dO (ldmatrix.trans)
 *   dP^T = V_w dO_i^T          (16 x Br)   A: V rows, B: dO rows
 *   dS^T = P^T o (dP^T - D)    float32 P, rounded to 16 bits after, as
 *                              the simulator's --dtype emulation rounds
 *                              P before P^T dO and dS before its products
 *   dK_w += dS^T Q_i           (16 x d)    B: Q (ldmatrix.trans)
 *   dS^T -> shared memory; barrier; dQ_i += dS K_j (Br x d, split over the
 *   warps by query rows), added with atomicAdd into float32 dQ
 * The scale multiplies dK once at the end and each dQ part before its
 * add.  The warps share nothing but dS: each owns its keys' rows of
 * S^T, dP^T, dK and dV, so the only cross-warp step is dQ, whose sum
 * runs over all the block's keys.
 *
 * The rules (tc_mask.cuh, as the forward takes them): a window skips
 * the row blocks that see none of key block j (tc_rule_row_blocks) and
 * hides entries only in tiles tc_rule_partial names (by the band of
 * tc_rule_band); a cap or ALiBi recomputes S^T as the forward bent it,
 * u = tanh(scale S / C) less the bias, p = exp(scale_eff u - lse) with
 * the forward's lse, and under a cap multiplies dS^T by 1 - t^2 (the
 * chain rule through C tanh(x / C)) before it is rounded, stored and
 * multiplied into dK and dQ, as the simulator's backward
 * (mask_rule_dscore) does; ALiBi's bias passes dS through.  All of it
 * is the kernels' RULES template argument: the plain and causal kernels
 * are the code they were.
 *
 * Loads: Q_i and dO_i (Br x d) have two buffers each, filled by cp.async
 * one step ahead; lse_i (in base 2) and D_i ride along in plain loads.
 * Two barriers a step: the first says the step's tiles are in and that
 * every warp has finished the previous step (whose Q, dO and dS buffers
 * the next loads and this step's dS overwrite), the second that dS is
 * complete before any warp reads it for dQ.
 *
 * The ordered dQ (FAST_BWD_ORDERED) keeps the same step, but before a
 * block adds its part of dQ_i it waits until the counter of (batch,
 * head, i) says every key block before it has added its part, then adds
 * with plain loads and stores (through L2) and bumps the counter: dQ = 0
 * + part_0 + part_1 + ... in the order of j, the simulator's, the same
 * bits every run.  Block j waits only on blocks j' < j that see row
 * block i (under a window the first of them need not be 0:
 * fast_bwd_dq_turn), which were scheduled no later than it (lower
 * index of the same grid row), so the wait always ends.  What it costs
 * is measured in bench (bwd_vs_torch.py --dq ordered) and stated in
 * doc/performance.md.
 *
 * Why these tiles: Bc = 128 keys (8 warps) and Br = 64 query rows at
 * both d, FlashAttention 2's own choice for d = 128 on sm80.  Each thread
 * holds dK and dV (2 x 64 floats at d = 128), S^T and dP^T (2 x 32), and
 * later dQ's part (32): about what 255 registers allow (ptxas spills 24
 * to 28 bytes at d = 128).  Shared memory is K, V (2 x 32 KB at d = 128),
 * Q and dO twice (64 KB), dS (16 KB) and in FlashAttention 2's layout P
 * (16 KB): one block of 8 warps a multiprocessor.
 * Against Bc = 64 with 4 warps (two blocks a multiprocessor, the same
 * warps; FAST_BWD_BC64), measured on the H200 at T >= 4096: 2 to 14 %
 * faster (dev/logs/fast_bwd/), since each Q_i, dO_i load and each dQ_i add
 * serves twice the keys.
 *
 * What set the pace, with the tiles and products FlashAttention 2's own:
 * instructions.  ncu on the H200 (fp16, d = 128, T = 4096) counted 3.31
 * billion warp instructions in this kernel as it stood (in a variant
 * that issued dP^T's product right after S^T's, 2 to 4 % faster)
 * against 2.13 billion in FlashAttention 2's for the same 671 million
 * MMAs; with two warps a scheduler every instruction's latency shows,
 * and the cycles followed the count.  The difference was integer work: a division a step for
 * (head, row block), a test of every entry in tiles no edge crosses, a
 * bounds test and a 64-bit address for every dQ add (an atomic that
 * returns its old value), and every ldmatrix's swizzled address made
 * afresh.  So the 8-warp loop counts its steps, keeps one copy of the
 * entry loop for tiles an edge crosses and one without tests, loads and
 * adds whole row blocks without a test a row (fast_bwd_load_whole,
 * each_pair), adds dQ by red (fast_bwd_red2: nothing comes back), and
 * gives each operand stream four addresses a step, the rest immediates
 * (fast_bwd_swz): 2.39 billion instructions, and 0.91 to 0.96 of
 * FlashAttention 2's speed where it ran at 0.75 to 0.81
 * (doc/performance.md has the runs).
 */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

#include "fast.h"
#include "fast_bwd.h"
#include "fast_mma.cuh"
#include "tc_args.h"
#include "tc_mask.cuh"
#include "timing.h"
#include "to16.h"
extern "C" {
#include "kernels.h"
#include "model/backward.h"
#include "model/dtype.h"
#include "model/tile_rule.h"
}

#define FAST_BWD_LOG2E 1.4426950408889634f

/* Variants measured on the H200 (doc/performance.md, "the tensor-core
 * backward"; dev/cuda/fastbwd/build.sh builds each), 0 or 1:
 *   FAST_BWD_CP_SIDE  lse (in base 2, by the D pass) and D come in by
 *                     cp.async with Q and dO, not by plain loads after
 *                     the step's first barrier
 *   FAST_BWD_DQ_V4    dQ's adds four floats at a time (a lane pair
 *                     trades halves by a shuffle), not two */
#ifndef FAST_BWD_CP_SIDE
#define FAST_BWD_CP_SIDE 0
#endif
#ifndef FAST_BWD_DQ_V4
#define FAST_BWD_DQ_V4 0
#endif
/*   FAST_BWD_SMEM_P   FlashAttention 2's warp layout (fast_bwd_kernel_p:
 *                     P^T and dS^T through shared memory) for the 8-warp
 *                     tiling, lse and D by cp.async (1, the default);
 *                     0: the layout of fast_bwd_kernel, as FAST_BWD_BC64's
 *                     4 warps run */
#ifndef FAST_BWD_SMEM_P
#define FAST_BWD_SMEM_P 1
#endif

struct fast_bwd_params {
	const uint16_t *q, *k, *v, *o, *dout;
	const float *lse;
	float *dsum;		/* (B, H, Tq) D */
	float *lse2;		/* (B, H, Tq) lse log2(e), +inf for -inf */
	float *dq_acc;		/* (B, H, Tq, d) float32 dQ, scaled */
	void *dk, *dv;		/* (B, Hkv, Tk, d), dtype or float32 */
	int *locks;		/* ordered: (B, H, Tr) parts added so far */
	int heads, kv_heads, group, tq, tk, tr;
	int ordered, f32_out, no_d;
	int causal;		/* the rule is the causal mask alone (what
				 * the kernels without RULES read) */
	struct tc_rule rule;	/* the window, the cap, ALiBi (tc_mask.cuh) */
	int dlo, dhi;		/* the window's band of c - r (tc_rule_band),
				 * set once on the host: constants, not
				 * registers, in the kernel */
	float scale_log2;	/* the exponent's scale (scale, or C under a
				 * cap) * log2(e): u to base-2 exponents */
	float grad_scale;	/* scale, or 1 under bug no-scale: dS (after
				 * the cap's backward) to dQ and dK */
	/* The trace build's (kernel TRACE, one query head a K/V head): dK,
	 * dV and (ordered) dQ after every step, (B H, nsteps, tr_bc or
	 * tr_br, d), as the simulator's backward numbers its steps and cuts
	 * its tiles (Br, Bc clamped to Tq, Tk); tr_dq NULL with the atomic
	 * dQ, whose partial sums have no simulator value. */
	float *tr_dk, *tr_dv, *tr_dq;
	long nsteps;
	int tr_br, tr_bc;
};

/*
 * The first row block of br rows that sees keys from c0 on under the
 * causal mask or none: 0, or, causal, the block of the first row whose
 * last key (tile_rule_last_key) reaches c0; the last row sees the last
 * key, so the blocks run to Tr.  tc_rule_row_blocks' answer for those
 * two rules (mask_rule_rows with right = 0: from row c0 - (Tk - Tq)),
 * in the arithmetic the plain kernels were measured with.
 */
static __device__ __forceinline__ int
fast_bwd_ibegin(int c0, int br, int tq, int tk, int causal)
{
	const long first = tile_rule_last_key(0, tq, tk);

	return causal && first < c0 ? (int)((c0 - first) / br) : 0;
}

/* The row blocks [*i0, *i1) that see key block j: tc_rule_row_blocks,
 * or without RULES fast_bwd_ibegin's. */
template <bool RULES, int BR, int BC>
static __device__ __forceinline__ void
fast_bwd_rows(const struct fast_bwd_params &p, int j, int *i0, int *i1)
{
	if constexpr (RULES)
		tc_rule_row_blocks(p.rule, j, BC, BR, p.tq, p.tk, i0, i1);
	else {
		*i0 = fast_bwd_ibegin(j * BC, BR, p.tq, p.tk, p.causal);
		*i1 = *i0 < p.tr ? p.tr : *i0;
	}
}

/*
 * The ordered dQ's turn of key block j at row block i: how many key
 * blocks before j add to dQ_i, the count block j waits for.  Under the
 * causal mask or none every block from 0 does (j); under a window the
 * first may be later, and waiting for j there would wait for blocks that
 * never come.  The row blocks a key block sees (fast_bwd_rows, the
 * schedule's own) move on with j at both ends, a band's, so those before
 * j that see i are a run up to j: its start is the first block whose
 * rows reach past i, found by bisection.
 */
template <bool RULES, int BR, int BC>
static __device__ __forceinline__ int
fast_bwd_dq_turn(const struct fast_bwd_params &p, int i, int j)
{
	int lo = 0, hi = j;

	if constexpr (RULES)
		while (lo < hi) {
			const int mid = (lo + hi) / 2;
			int i0, i1;

			fast_bwd_rows<RULES, BR, BC>(p, mid, &i0, &i1);
			if (i1 > i)
				hi = mid;
			else
				lo = mid + 1;
		}
	return j - lo;
}

/*
 * Spin until the counter at lock reaches turn.  A count that never comes
 * (a schedule that skips a block the turn counts) would hold the GPU for
 * good, and every program beside it; after 2^28 polls (at least 17 s at
 * 64 ns or more each, far past any real wait) the launch fails instead.
 */
static __device__ __forceinline__ void
fast_bwd_wait_turn(int *lock, int turn)
{
	for (unsigned n = 0; atomicAdd(lock, 0) != turn; n++) {
		if (n >> 28)
			__trap();
		__nanosleep(64);
	}
	__threadfence();
}

/* The simulator's number of the first step of key block j of bc keys
 * (backward.h: key blocks outside, the row blocks that see each inside,
 * tc_rule_row_blocks: the schedule's ibegin, iend): the steps of key
 * blocks 0 .. j-1.  Under a window a key block may have none. */
static __host__ __device__ long
fast_bwd_first_step(const struct tc_rule &rule, int j, int br, int bc,
    int tq, int tk)
{
	long n = 0;

	for (int jj = 0; jj < j; jj++) {
		int i0, i1;
		tc_rule_row_blocks(rule, jj, bc, br, tq, tk, &i0, &i1);
		n += i1 - i0;
	}
	return n;
}

/*
 * Does the tile of rows r0.. and key block j need each entry looked at?
 * RULES: tc_rule_partial; else the causal mask's or Tk's edge alone.
 */
template <bool RULES, int BR, int BC>
static __device__ __forceinline__ bool
fast_bwd_partial(const struct fast_bwd_params &p, int j, int r0)
{
	const int c0 = j * BC;

	if constexpr (RULES)
		return tc_rule_partial(p.rule, j, BC, r0, r0 + BR - 1, p.tq,
		    p.tk);
	return c0 + BC > p.tk || (p.causal && c0 + BC - 1 >
	    tile_rule_last_key(r0, p.tq, p.tk));
}

/*
 * P of entry (row r, key c) from its product s = q.k, and under a cap
 * its (1 - t^2) into *dcap (1 without one): u = s, or t = tanh(s scale
 * / C) under a cap, less ALiBi's bias (slope in u's units), then p =
 * 2^(u scale_eff log2(e) - lse log2(e)), 0 where hidden (vis: the tile
 * is partial; c past Tk or c - r outside the window's band [p.dlo,
 * p.dhi], tc_rule_band) or where the row sees no key (lse2 = +inf).
 * RULES (a window other than causal, a cap or ALiBi) is a template
 * argument: the plain and causal kernels compile to the FFMA, the
 * causal test and the ex2 alone, as before the rules came in.
 */
template <bool RULES>
static __device__ __forceinline__ float
fast_bwd_p(const struct fast_bwd_params &p, float s, float lse2, float slope,
    bool vis, int r, int c, float *dcap)
{
	float u = s;

	if constexpr (RULES) {
		u = tc_rule_cap(p.rule, s);
		*dcap = p.rule.cap_in > 0.f ? 1.f - u * u : 1.f;
		u = tc_rule_bias(u, slope, r, c, p.tq, p.tk);
	}
	float x = fmaf(u, p.scale_log2, -lse2);
	if constexpr (RULES) {
		if (vis && (c >= p.tk || c - r < p.dlo || c - r > p.dhi))
			x = -INFINITY;
	} else if (vis && (c >= p.tk || !tile_rule_visible(p.causal, r, c,
	    p.tq, p.tk)))
		x = -INFINITY;
	return fast_exp2(x);
}

/* Rows of Tq per block of the D pass: one warp each. */
#define FAST_BWD_DSUM_WARPS 8

/* D = rowsum(dO o O) for each (batch, head, row), one warp a row, the
 * lanes' partial sums added by shuffles; rows are (B H Tq) in order. */
template <int D, bool BF16>
__global__ void __launch_bounds__(FAST_BWD_DSUM_WARPS * 32)
fast_bwd_dsum(const struct fast_bwd_params p, size_t rows)
{
	constexpr int PER = D / 32;	/* values a lane: 2 or 4 */
	const size_t row = (size_t)blockIdx.x * FAST_BWD_DSUM_WARPS +
	    threadIdx.x / 32;
	const int lane = threadIdx.x & 31;

	if (row >= rows)
		return;
	const uint16_t *o = p.o + row * D + lane * PER;
	const uint16_t *g = p.dout + row * D + lane * PER;
	float sum = 0.f;
#pragma unroll
	for (int x = 0; x < PER; x++) {
		float ov, gv;
		if constexpr (BF16) {
			ov = __bfloat162float(__ushort_as_bfloat16(o[x]));
			gv = __bfloat162float(__ushort_as_bfloat16(g[x]));
		} else {
			ov = __half2float(__ushort_as_half(o[x]));
			gv = __half2float(__ushort_as_half(g[x]));
		}
		sum = fmaf(gv, ov, sum);
	}
#pragma unroll
	for (int s = 16; s > 0; s >>= 1)
		sum += __shfl_xor_sync(0xffffffffu, sum, s);
	if (lane == 0) {
		const float l = p.lse[row];

		p.dsum[row] = p.no_d ? 0.f : sum;
		/* A row that sees no key: p = 2^-inf = 0. */
		p.lse2[row] = l == -INFINITY ? INFINITY : l * FAST_BWD_LOG2E;
	}
}

#if FAST_BWD_DQ_V4
/* Four floats added at at (16-byte aligned): one vector atomic on
 * sm_90, four before it. */
static __device__ __forceinline__ void
fast_bwd_add4(float *at, float4 v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	atomicAdd((float4 *)at, v);
#else
	atomicAdd(at, v.x);
	atomicAdd(at + 1, v.y);
	atomicAdd(at + 2, v.z);
	atomicAdd(at + 3, v.w);
#endif
}
#endif

/* x, y added to at[0], at[1]: one vector reduction on sm_90 (red: no
 * value comes back, so nothing waits on it), two before it. */
static __device__ __forceinline__ void
fast_bwd_red2(float *at, float x, float y)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::
	    "l"(at), "f"(x), "f"(y) : "memory");
#else
	atomicAdd(at, x);
	atomicAdd(at + 1, y);
#endif
}

/* The float32 dQ into the dtype. */
template <bool BF16>
__global__ void
fast_bwd_dq(const float *acc, uint16_t *dq, size_t n)
{
	for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
	    e += (size_t)gridDim.x * blockDim.x) {
		if constexpr (BF16)
			dq[e] = __bfloat16_as_ushort(__float2bfloat16_rn(acc[e]));
		else
			dq[e] = __half_as_ushort(__float2half_rn(acc[e]));
	}
}

/*
 * fast_swz's offset of chunk 2 pair + x (x is 0 or 1) of row r, written
 * so that the compiler sees which part of it a k step changes.  The
 * swizzle flips only the chunk's low three bits, by r's (the lane's:
 * the callers' row bases are multiples of 8), so pairs 4 apart are 128
 * bytes apart, an immediate of the load, and the rest is the lane's
 * (x ^ r) & 7 flipped by a constant: each operand stream needs four
 * addresses a step, not one computed afresh for every load.
 */
template <int W>
static __device__ __forceinline__ uint32_t
fast_bwd_swz(int r, int pair, int x)
{
	return (uint32_t)(r * W * 2 + ((pair >> 2) << 7) +
	    (((2 * (pair & 3)) ^ ((x ^ r) & 7)) << 4));
}

/* A (16 x 16) operand of rows [row0, row0 + 16) of a swizzled tile W
 * halves wide, k chunk pair kk: ldmatrix.x4, rows lane & 15, chunk 2 kk
 * + lane / 16 (fast.cu's Q pattern). */
template <int W>
static __device__ __forceinline__ void
fast_bwd_lda(uint32_t tile, int row0, int kk, int lane, uint32_t (&a)[4])
{
	const int r = row0 + (lane & 15);
	fast_ldsm_x4(tile + fast_bwd_swz<W>(r, kk, lane >> 4), a);
}

/* B operands of two n8 blocks (rows n0 .. n0 + 15 of a tile stored n x
 * k, k contiguous: fast.cu's K pattern): b[0], b[1] for rows n0..n0+7,
 * b[2], b[3] for n0+8..n0+15, k chunk pair kk. */
template <int W>
static __device__ __forceinline__ void
fast_bwd_ldb(uint32_t tile, int n0, int kk, int lane, uint32_t (&b)[4])
{
	const int r = n0 + (lane & 7) + ((lane >> 4) << 3);
	fast_ldsm_x4(tile + fast_bwd_swz<W>(r, kk, (lane >> 3) & 1), b);
}

/* B operands of two n8 blocks from a tile stored k x n, n contiguous
 * (fast.cu's V pattern, ldmatrix.trans): k rows k0 .. k0 + 15, n chunks
 * 2 nd2, 2 nd2 + 1. */
template <int W>
static __device__ __forceinline__ void
fast_bwd_ldbt(uint32_t tile, int k0, int nd2, int lane, uint32_t (&b)[4])
{
	const int r = k0 + (lane & 7) + (((lane >> 3) & 1) << 3);
	fast_ldsm_x4_trans(tile + fast_bwd_swz<W>(r, nd2, lane >> 4), b);
}

/* A (16 x 16) operand from a tile stored k x m, m contiguous (dS stored
 * as dS^T): ldmatrix.trans, k rows k0 + (lane & 7) + 8 (lane / 16), m
 * chunk m0 / 8 + (lane / 8) % 2. */
template <int W>
static __device__ __forceinline__ void
fast_bwd_ldat(uint32_t tile, int m0, int k0, int lane, uint32_t (&a)[4])
{
	const int r = k0 + (lane & 7) + ((lane >> 4) << 3);
	fast_ldsm_x4_trans(tile + fast_bwd_swz<W>(r, m0 / 16, (lane >> 3) & 1),
	    a);
}

/* acc (16 x N) += A (16 x K, rows of a tile) B^T-pattern (N rows of a
 * tile, K contiguous): the S^T and dP^T products. */
template <int K, int N, bool BF16>
static __device__ __forceinline__ void
fast_bwd_abt(float (&acc)[N / 8][4], uint32_t ta, int arow, uint32_t tb,
    int lane)
{
#pragma unroll
	for (int nb = 0; nb < N / 8; nb++)
#pragma unroll
		for (int e = 0; e < 4; e++)
			acc[nb][e] = 0.f;
#pragma unroll
	for (int kk = 0; kk < K / 16; kk++) {
		uint32_t a[4];
		fast_bwd_lda<K>(ta, arow, kk, lane, a);
#pragma unroll
		for (int nb2 = 0; nb2 < N / 16; nb2++) {
			uint32_t b[4];
			fast_bwd_ldb<K>(tb, 16 * nb2, kk, lane, b);
			fast_mma<BF16>(acc[2 * nb2], a, b[0], b[1]);
			fast_mma<BF16>(acc[2 * nb2 + 1], a, b[2], b[3]);
		}
	}
}

/* acc (16 x D) += X (16 x BR, float32 in C layout, packed here to 16
 * bits) times the tile tb (BR x D, rows = k): dV += P^T dO, dK += dS^T Q. */
template <int BR, int D, bool BF16>
static __device__ __forceinline__ void
fast_bwd_xb(float (&acc)[D / 8][4], const uint32_t (&x)[BR / 16][4],
    uint32_t tb, int lane)
{
#pragma unroll
	for (int kk = 0; kk < BR / 16; kk++)
#pragma unroll
		for (int nd2 = 0; nd2 < D / 16; nd2++) {
			uint32_t b[4];
			fast_bwd_ldbt<D>(tb, 16 * kk, nd2, lane, b);
			fast_mma<BF16>(acc[2 * nd2], x[kk], b[0], b[1]);
			fast_mma<BF16>(acc[2 * nd2 + 1], x[kk], b[2], b[3]);
		}
}

/* C-layout floats (16 x BR) as A operands, rounded to 16 bits. */
template <int BR, bool BF16>
static __device__ __forceinline__ void
fast_bwd_pack_a(const float (&s)[BR / 8][4], uint32_t (&a)[BR / 16][4])
{
#pragma unroll
	for (int kk = 0; kk < BR / 16; kk++) {
		a[kk][0] = fast_pack<BF16>(s[2 * kk][0], s[2 * kk][1]);
		a[kk][1] = fast_pack<BF16>(s[2 * kk][2], s[2 * kk][3]);
		a[kk][2] = fast_pack<BF16>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
		a[kk][3] = fast_pack<BF16>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
	}
}

/* One (dK or dV) accumulator of the warp's 16 keys out to HBM, rows at
 * or past Tk left alone; f32 or the dtype. */
template <int D, bool BF16>
static __device__ __forceinline__ void
fast_bwd_store_kv(void *out, bool f32, size_t base, int key0, int tk,
    const float (&acc)[D / 8][4], float f, int lane)
{
	const int g = lane >> 2, t4 = lane & 3;

#pragma unroll
	for (int h = 0; h < 2; h++) {
		const int key = key0 + g + 8 * h;
		if (key >= tk)
			continue;
		const size_t row = (base + key) * D;
#pragma unroll
		for (int db = 0; db < D / 8; db++) {
			const float a = acc[db][2 * h] * f;
			const float b = acc[db][2 * h + 1] * f;
			const size_t at = row + db * 8 + 2 * t4;
			if (f32)
				*(float2 *)((float *)out + at) = make_float2(a, b);
			else
				*(uint32_t *)((uint16_t *)out + at) =
				    fast_pack<BF16>(a, b);
		}
	}
}

/* One warp's 16 rows of a dK or dV accumulator (times f) into the
 * trace at step step: rows at or past Tk left alone. */
template <int D>
static __device__ __forceinline__ void
fast_bwd_trace_kv(float *tr, const struct fast_bwd_params &p, size_t prob,
    long step, int krow0, int key0, const float (&acc)[D / 8][4], float f,
    int lane)
{
	const int g = lane >> 2, t4 = lane & 3;

#pragma unroll
	for (int h = 0; h < 2; h++) {
		const int kr = krow0 + g + 8 * h;
		if (key0 + g + 8 * h >= p.tk)
			continue;
		float *row = tr + ((prob * p.nsteps + step) * p.tr_bc + kr) * D;
#pragma unroll
		for (int db = 0; db < D / 8; db++)
			*(float2 *)(row + db * 8 + 2 * t4) = make_float2(
			    acc[db][2 * h] * f, acc[db][2 * h + 1] * f);
	}
}

/*
 * Block (j, K/V head, batch).  Key block j = blockIdx.x: under the
 * bottom-right causal mask the first key blocks see the most row blocks,
 * so the long columns start first; and the ordered dQ's block j waits
 * only on blocks of lower index, scheduled before it.  D head width,
 * BR query rows a step, WARPS warps of 16 keys each (Bc = 16 WARPS).
 */
template <int D, int BR, int WARPS, bool BF16, bool TRACE, bool RULES>
__global__ void __launch_bounds__(WARPS * 32, 1)
fast_bwd_kernel(const struct fast_bwd_params p)
{
	constexpr int BC = 16 * WARPS;
	constexpr int THREADS = WARPS * 32;
	constexpr uint32_t QB = BR * D * 2;	/* bytes of a Q or dO tile */
	static_assert(BR % (16 * WARPS) == 0 || (16 * WARPS) % BR == 0,
	    "dQ's rows split over the warps");
	static_assert(D % 16 == 0 && BR % 16 == 0, "whole mma tiles");

	extern __shared__ __align__(128) uint8_t fast_bwd_shm[];
	const uint32_t sK = fast_smem_addr(fast_bwd_shm);
	const uint32_t sV = sK + BC * D * 2;
	const uint32_t sQ = sV + BC * D * 2;	/* two buffers */
	const uint32_t sO = sQ + 2 * QB;	/* dO, two buffers */
	const uint32_t sS = sO + 2 * QB;	/* dS^T, BC x BR */
	float *sL = (float *)(fast_bwd_shm + (2 * BC * D + 4 * BR * D +
	    BC * BR) * 2);			/* lse in base 2, two buffers */
	float *sD = sL + 2 * BR;		/* D, two buffers */

	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int g = lane >> 2, t4 = lane & 3;
	const int j = blockIdx.x;
	const int hk = blockIdx.y, b = blockIdx.z;
	const int c0 = j * BC;
	const int kw = warp * 16;		/* the warp's first key */
	const size_t kvbase = ((size_t)b * p.kv_heads + hk) * p.tk;

	/* The row blocks [ibegin, iend) that see key block j (the
	 * simulator's: tc_rule_row_blocks), none under a window that
	 * hides the block from every row. */
	int ibegin, iend;
	fast_bwd_rows<RULES, BR, BC>(p, j, &ibegin, &iend);
	const int ni = iend - ibegin;
	/* The trace's step of (i, j) is first + i - ibegin. */
	long first = 0;
	if constexpr (TRACE)
		first = fast_bwd_first_step(p.rule, j, BR, BC, p.tq, p.tk);
	const int nsteps = ni * p.group;

	float dk[D / 8][4], dv[D / 8][4];
#pragma unroll
	for (int db = 0; db < D / 8; db++)
#pragma unroll
		for (int e = 0; e < 4; e++)
			dk[db][e] = dv[db][e] = 0.f;

	/* Step it's (query head, row block) and its rows' side data into
	 * buffer buf. */
#define FAST_BWD_STEP(it, h, i) do {					\
		(h) = hk * p.group + (it) / ni;				\
		(i) = ibegin + (it) % ni;				\
	} while (0)
	auto issue = [&](int it) {
		int h, i;
		FAST_BWD_STEP(it, h, i);
		const int buf = it & 1;
		const size_t qrow = ((size_t)b * p.heads + h) * p.tq;
		const int r0 = i * BR;
		fast_load_tile<BR, D, THREADS>(sQ + buf * QB, p.q + qrow * D,
		    r0, p.tq, tid);
		fast_load_tile<BR, D, THREADS>(sO + buf * QB, p.dout + qrow * D,
		    r0, p.tq, tid);
#if FAST_BWD_CP_SIDE
		/* Rows past Tq get 0s: their Q and dO rows are 0, so their
		 * p = 1 meets dO = 0 and dS = 1 (0 - 0). */
		for (int r = tid; r < 2 * BR; r += THREADS) {
			const int rr = r % BR;
			const bool in = r0 + rr < p.tq;
			const size_t at = qrow + (in ? r0 + rr : 0);
			if (r < BR)
				fast_cp_async4(fast_smem_addr(&sL[buf * BR + rr]),
				    p.lse2 + at, in ? 4 : 0);
			else
				fast_cp_async4(fast_smem_addr(&sD[buf * BR + rr]),
				    p.dsum + at, in ? 4 : 0);
		}
#else
		for (int r = tid; r < BR; r += THREADS) {
			float l = INFINITY, dd = 0.f;
			if (r0 + r < p.tq) {
				l = p.lse[qrow + r0 + r];
				/* A row that sees no key: p = 0. */
				l = l == -INFINITY ? INFINITY : l * FAST_BWD_LOG2E;
				dd = p.dsum[qrow + r0 + r];
			}
			sL[buf * BR + r] = l;
			sD[buf * BR + r] = dd;
		}
#endif
	};

	/* K_j, V_j once, with the first step's tiles. */
	fast_load_tile<BC, D, THREADS>(sK, p.k + kvbase * D, c0, p.tk, tid);
	fast_load_tile<BC, D, THREADS>(sV, p.v + kvbase * D, c0, p.tk, tid);
	if (nsteps > 0)
		issue(0);
	fast_cp_commit();

	for (int it = 0; it < nsteps; it++) {
		int h, i;
		FAST_BWD_STEP(it, h, i);
		const int buf = it & 1;
		const int r0 = i * BR;
		const uint32_t q = sQ + buf * QB, o = sO + buf * QB;

		fast_cp_wait<0>();
		__syncthreads();
		if (it + 1 < nsteps)
			issue(it + 1);
		fast_cp_commit();

		/* S^T = K_w Q_i^T, masked and bent, into P^T. */
		float s[BR / 8][4], dcap[BR / 8][4];
		fast_bwd_abt<D, BR, BF16>(s, sK, kw, q, lane);
		const bool vis = fast_bwd_partial<RULES, BR, BC>(p, j, r0);
		const float slope = RULES ? tc_rule_slope(p.rule, h) : 0.f;
#pragma unroll
		for (int nb = 0; nb < BR / 8; nb++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int c = c0 + kw + g + 8 * (e >> 1);
				const int r = r0 + 8 * nb + 2 * t4 + (e & 1);
				s[nb][e] = fast_bwd_p<RULES>(p, s[nb][e],
				    sL[buf * BR + 8 * nb + 2 * t4 + (e & 1)],
				    slope, vis, r, c, &dcap[nb][e]);
			}

		/* dV_w += P^T dO_i, P^T in 16 bits. */
		{
			uint32_t pa[BR / 16][4];
			fast_bwd_pack_a<BR, BF16>(s, pa);
			fast_bwd_xb<BR, D, BF16>(dv, pa, o, lane);
		}

		/* dP^T = V_w dO_i^T; dS^T = P^T o (dP^T - D), in place. */
		{
			float dp[BR / 8][4];
			fast_bwd_abt<D, BR, BF16>(dp, sV, kw, o, lane);
#pragma unroll
			for (int nb = 0; nb < BR / 8; nb++)
#pragma unroll
				for (int e = 0; e < 4; e++) {
					s[nb][e] *= dp[nb][e] - sD[buf * BR +
					    8 * nb + 2 * t4 + (e & 1)];
					/* back through the cap (1 without) */
					if constexpr (RULES)
						s[nb][e] *= dcap[nb][e];
				}
		}

		/* dS^T to shared memory (rows = the warp's keys), and dK_w +=
		 * dS^T Q_i. */
		{
			uint32_t da[BR / 16][4];
			fast_bwd_pack_a<BR, BF16>(s, da);
#pragma unroll
			for (int kk = 0; kk < BR / 16; kk++)
#pragma unroll
				for (int e = 0; e < 4; e++) {
					/* a0: (g, 2t) a1: (g+8, 2t) a2: (g, 2t+8)
					 * a3: (g+8, 2t+8), in query block kk. */
					const int kr = kw + g + 8 * (e & 1);
					const int qc = 16 * kk + 8 * (e >> 1) +
					    2 * t4;
					*(uint32_t *)(fast_bwd_shm + (sS - sK) +
					    fast_swz<BR>(kr, qc / 8) +
					    (qc % 8) * 2) = da[kk][e];
				}
			fast_bwd_xb<BR, D, BF16>(dk, da, q, lane);
		}
		if constexpr (TRACE) {
			/* dK_j (scaled, as the simulator adds it) and dV_j after
			 * the step. */
			const size_t prob = (size_t)b * p.heads + h;
			fast_bwd_trace_kv<D>(p.tr_dk, p, prob, first + i - ibegin,
			    kw, c0 + kw, dk, p.grad_scale, lane);
			fast_bwd_trace_kv<D>(p.tr_dv, p, prob, first + i - ibegin,
			    kw, c0 + kw, dv, 1.f, lane);
		}
		__syncthreads();

		/* dQ_i += scale dS K_j: warp w takes query rows [qw, qw + 16
		 * QT) of the Br, every key of the block, every d. */
		{
			constexpr int QT = BR / 16 >= WARPS ? BR / 16 / WARPS : 1;
			constexpr int DW = BR / 16 >= WARPS ? 1 : WARPS / (BR / 16);
			constexpr int DN = D / DW;	/* d columns a warp */
			const int qw = (warp / DW) * 16 * QT;
			const int dw = (warp % DW) * DN;
			float a[QT][DN / 8][4];
#pragma unroll
			for (int mt = 0; mt < QT; mt++)
#pragma unroll
				for (int nb = 0; nb < DN / 8; nb++)
#pragma unroll
					for (int e = 0; e < 4; e++)
						a[mt][nb][e] = 0.f;
#pragma unroll
			for (int kk = 0; kk < BC / 16; kk++) {
				uint32_t af[QT][4];
#pragma unroll
				for (int mt = 0; mt < QT; mt++)
					fast_bwd_ldat<BR>(sS, qw + 16 * mt,
					    16 * kk, lane, af[mt]);
#pragma unroll
				for (int nd2 = 0; nd2 < DN / 16; nd2++) {
					uint32_t bf[4];
					fast_bwd_ldbt<D>(sK, 16 * kk,
					    dw / 16 + nd2, lane, bf);
#pragma unroll
					for (int mt = 0; mt < QT; mt++) {
						fast_mma<BF16>(a[mt][2 * nd2],
						    af[mt], bf[0], bf[1]);
						fast_mma<BF16>(a[mt][2 * nd2 + 1],
						    af[mt], bf[2], bf[3]);
					}
				}
			}
			const size_t qrow = ((size_t)b * p.heads + h) * p.tq;
			int *lock = p.locks + ((size_t)b * p.heads + h) * p.tr + i;
			const int turn = p.ordered ?
			    fast_bwd_dq_turn<RULES, BR, BC>(p, i, j) : 0;
			if (p.ordered) {
				/* the key blocks before j that see i */
				if (tid == 0)
					fast_bwd_wait_turn(lock, turn);
				__syncthreads();
			}
#if FAST_BWD_DQ_V4
			if (!p.ordered) {
				/* Lane pairs (t4, t4 ^ 1) trade halves: the even
				 * lane adds row g's four floats, the odd row g + 8's. */
				const bool odd = t4 & 1;
#pragma unroll
				for (int mt = 0; mt < QT; mt++) {
					const int r = r0 + qw + 16 * mt + g +
					    (odd ? 8 : 0);
#pragma unroll
					for (int nb = 0; nb < DN / 8; nb++) {
						const float s0 = odd ? a[mt][nb][0] :
						    a[mt][nb][2];
						const float s1 = odd ? a[mt][nb][1] :
						    a[mt][nb][3];
						const float g0 = __shfl_xor_sync(
						    0xffffffffu, s0, 1);
						const float g1 = __shfl_xor_sync(
						    0xffffffffu, s1, 1);
						const float4 v = odd ? make_float4(g0,
						    g1, a[mt][nb][2], a[mt][nb][3]) :
						    make_float4(a[mt][nb][0],
						    a[mt][nb][1], g0, g1);
						if (r < p.tq)
							fast_bwd_add4(p.dq_acc +
							    (qrow + r) * D + dw +
							    nb * 8 + 4 * (t4 >> 1),
							    make_float4(v.x *
							    p.grad_scale, v.y *
							    p.grad_scale, v.z *
							    p.grad_scale, v.w *
							    p.grad_scale));
					}
				}
			} else
#endif
#pragma unroll
			for (int mt = 0; mt < QT; mt++)
#pragma unroll
				for (int hh = 0; hh < 2; hh++) {
					const int r = r0 + qw + 16 * mt + g + 8 * hh;
					if (r >= p.tq)
						continue;
					float *row = p.dq_acc + (qrow + r) * D +
					    dw + 2 * t4;
#pragma unroll
					for (int nb = 0; nb < DN / 8; nb++) {
						const float x = a[mt][nb][2 * hh] *
						    p.grad_scale;
						const float y = a[mt][nb][2 * hh + 1] *
						    p.grad_scale;
						float *at = row + nb * 8;
						if (p.ordered) {
							const float2 old = __ldcg(
							    (const float2 *)at);
							const float2 sum = make_float2(
							    old.x + x, old.y + y);
							__stcg((float2 *)at, sum);
							if constexpr (TRACE)
								if (p.tr_dq != NULL)
									*(float2 *)(p.tr_dq +
									    ((((size_t)b *
									    p.heads + h) *
									    p.nsteps + first +
									    i - ibegin) *
									    p.tr_br + r - r0) *
									    D + dw + nb * 8 +
									    2 * t4) = sum;
						} else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
							atomicAdd((float2 *)at,
							    make_float2(x, y));
#else
							atomicAdd(at, x);
							atomicAdd(at + 1, y);
#endif
						}
					}
				}
			if (p.ordered) {
				__threadfence();
				__syncthreads();
				if (tid == 0)
					atomicExch(lock, turn + 1);
			}
		}
	}
#undef FAST_BWD_STEP
	fast_cp_wait<0>();	/* nsteps = 0: K and V still in flight */

	/* dK (scaled) and dV out, once. */
	fast_bwd_store_kv<D, BF16>(p.dk, p.f32_out, kvbase, c0 + kw, p.tk, dk,
	    p.grad_scale, lane);
	fast_bwd_store_kv<D, BF16>(p.dv, p.f32_out, kvbase, c0 + kw, p.tk, dv,
	    1.f, lane);
}

/*
 * fast_load_tile for a tile whose ROWS rows all lie below the matrix's
 * end (every row block but a ragged last one): a thread's chunks are
 * one column chunk of rows r, r + THREADS / CPR, ..., so one address
 * each side and constant steps, with no test a row.
 */
template <int ROWS, int D, int THREADS>
static __device__ __forceinline__ void
fast_bwd_load_whole(uint32_t tile, const uint16_t *g, int row0, int tid)
{
	constexpr int CPR = D / 8;		/* 16-byte chunks a row */
	constexpr int STEP = THREADS / CPR;	/* rows a pass */
	static_assert(STEP % 8 == 0 && ROWS % STEP == 0, "whole passes of "
	    "whole swizzle periods");
	const int r = tid / CPR, ch = tid % CPR;
	const uint16_t *src = g + (size_t)(row0 + r) * D + ch * 8;
	const uint32_t dst = tile + fast_swz<D>(r, ch);

#pragma unroll
	for (int it = 0; it < ROWS / STEP; it++)
		fast_cp_async16(dst + it * STEP * D * 2, src + it * STEP * D, 16);
}

/*
 * FAST_BWD_SMEM_P: FlashAttention 2's own warp layout for the same
 * tiles (8 warps, Bc = 128, Br = 64), which reads less shared memory a
 * step.  S^T and dP^T are cut 4 (keys) x 2 (queries): warp w owns keys
 * [32 (w % 4), + 32) and queries [32 (w / 4), + 32) of them; P^T and
 * dS^T go to shared memory (16 bits), and after a barrier dV, dK are cut
 * 4 (keys) x 2 (d): warp w accumulates keys [32 (w % 4), + 32) and d
 * columns [D/2 (w / 4), + D/2), and dQ 2 (queries) x 4 (d).  A warp then
 * reads 32 + 32 rows for each of S^T, dP^T and dQ's product (against 16
 * + 64 in the per-warp layout) and 32 + 64 for dV and dK (P^T, dS^T out
 * of shared memory instead of registers).  Measured on the H200 at
 * d = 128, T >= 4096: 1.11 to 1.12x the per-warp layout's TFLOP/s before
 * this layout (doc/performance.md has the run).  The step's order, its barriers,
 * the ordered dQ and the trace are the per-warp kernel's; the second
 * barrier now also covers P^T.
 */
template <int K, int MT, int N, bool BF16>
static __device__ __forceinline__ void
fast_bwd_abt2(float (&acc)[MT][N / 8][4], uint32_t ta, int arow,
    uint32_t tb, int brow, int lane)
{
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int nb = 0; nb < N / 8; nb++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[mt][nb][e] = 0.f;
#pragma unroll
	for (int kk = 0; kk < K / 16; kk++) {
		uint32_t a[MT][4];
#pragma unroll
		for (int mt = 0; mt < MT; mt++)
			fast_bwd_lda<K>(ta, arow + 16 * mt, kk, lane, a[mt]);
#pragma unroll
		for (int nb2 = 0; nb2 < N / 16; nb2++) {
			uint32_t b[4];
			fast_bwd_ldb<K>(tb, brow + 16 * nb2, kk, lane, b);
#pragma unroll
			for (int mt = 0; mt < MT; mt++) {
				fast_mma<BF16>(acc[mt][2 * nb2], a[mt], b[0], b[1]);
				fast_mma<BF16>(acc[mt][2 * nb2 + 1], a[mt], b[2],
				    b[3]);
			}
		}
	}
}

/* acc (32 x DN) += A (32 x BR rows arow.. of the tile ta, BR wide) times
 * tb (BR x D, rows = k) columns [dn0, dn0 + DN): dV += P^T dO and dK +=
 * dS^T Q out of shared memory. */
template <int BR, int D, int DN, bool BF16>
static __device__ __forceinline__ void
fast_bwd_sb(float (&acc)[2][DN / 8][4], uint32_t ta, int arow, uint32_t tb,
    int dn0, int lane)
{
#pragma unroll
	for (int kk = 0; kk < BR / 16; kk++) {
		uint32_t a[2][4];
#pragma unroll
		for (int mt = 0; mt < 2; mt++)
			fast_bwd_lda<BR>(ta, arow + 16 * mt, kk, lane, a[mt]);
#pragma unroll
		for (int nd2 = 0; nd2 < DN / 16; nd2++) {
			uint32_t b[4];
			fast_bwd_ldbt<D>(tb, 16 * kk, dn0 / 16 + nd2, lane, b);
#pragma unroll
			for (int mt = 0; mt < 2; mt++) {
				fast_mma<BF16>(acc[mt][2 * nd2], a[mt], b[0], b[1]);
				fast_mma<BF16>(acc[mt][2 * nd2 + 1], a[mt], b[2],
				    b[3]);
			}
		}
	}
}

/* A 32 x 32 C-layout tile (keys x queries) into a BC x BR 16-bit tile,
 * rows krow0.., columns q0..: P^T or dS^T. */
template <int BR, bool BF16>
static __device__ __forceinline__ void
fast_bwd_put(uint8_t *shm, uint32_t off, int krow0, int q0,
    const float (&x)[2][4][4], int lane)
{
	const int g = lane >> 2, t4 = lane & 3;

#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int nb = 0; nb < 4; nb++)
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int kr = krow0 + 16 * mt + g + 8 * h;
				const int qc = q0 + 8 * nb + 2 * t4;
				*(uint32_t *)(shm + off + fast_swz<BR>(kr, qc / 8) +
				    (qc % 8) * 2) = fast_pack<BF16>(x[mt][nb][2 * h],
				    x[mt][nb][2 * h + 1]);
			}
}

/* A warp's 32 x DN accumulator (times f) out: into dK or dV, or into the
 * trace at step step (tr != NULL); rows at or past Tk left alone. */
template <int D, int DN, bool BF16>
static __device__ __forceinline__ void
fast_bwd_out2(void *out, bool f32, size_t base, int key0, int tk, int dn0,
    const float (&acc)[2][DN / 8][4], float f, int lane)
{
	const int g = lane >> 2, t4 = lane & 3;

#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int key = key0 + 16 * mt + g + 8 * h;
			if (key >= tk)
				continue;
			const size_t row = (base + key) * D;
#pragma unroll
			for (int db = 0; db < DN / 8; db++) {
				const float a = acc[mt][db][2 * h] * f;
				const float b = acc[mt][db][2 * h + 1] * f;
				const size_t at = row + dn0 + db * 8 + 2 * t4;
				if (f32)
					*(float2 *)((float *)out + at) =
					    make_float2(a, b);
				else
					*(uint32_t *)((uint16_t *)out + at) =
					    fast_pack<BF16>(a, b);
			}
		}
}

template <int D, int BR, int WARPS, bool BF16, bool TRACE, bool RULES>
__global__ void __launch_bounds__(WARPS * 32, 1)
fast_bwd_kernel_p(const struct fast_bwd_params p)
{
	constexpr int BC = 16 * WARPS;
	constexpr int THREADS = WARPS * 32;
	constexpr uint32_t QB = BR * D * 2;	/* bytes of a Q or dO tile */
	constexpr int DN = D / 2;		/* dK, dV columns a warp */
	constexpr int DQ = D / 4;		/* dQ columns a warp */
	static_assert(WARPS == 8 && BR == 64, "the 4 x 2 layout: 8 warps, "
	    "Br = 64, Bc = 128");

	extern __shared__ __align__(128) uint8_t fast_bwd_shm[];
	const uint32_t sK = fast_smem_addr(fast_bwd_shm);
	const uint32_t sV = sK + BC * D * 2;
	const uint32_t sQ = sV + BC * D * 2;	/* two buffers */
	const uint32_t sO = sQ + 2 * QB;	/* dO, two buffers */
	const uint32_t sS = sO + 2 * QB;	/* dS^T, BC x BR */
	const uint32_t sP = sS + BC * BR * 2;	/* P^T, BC x BR */
	float *sL = (float *)(fast_bwd_shm + (2 * BC * D + 4 * BR * D +
	    2 * BC * BR) * 2);			/* lse in base 2, two buffers */
	float *sD = sL + 2 * BR;		/* D, two buffers */

	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int g = lane >> 2, t4 = lane & 3;
	const int j = blockIdx.x;
	const int hk = blockIdx.y, b = blockIdx.z;
	const int c0 = j * BC;
	const int kw = (warp & 3) * 32;		/* the warp's first key */
	const int qw = (warp >> 2) * 32;	/* ... query of S^T, dP^T */
	const int dn0 = (warp >> 2) * DN;	/* ... d column of dK, dV */
	const int q3 = (warp & 1) * 32;		/* ... query of dQ */
	const int d3 = (warp >> 1) * DQ;	/* ... d column of dQ */
	const size_t kvbase = ((size_t)b * p.kv_heads + hk) * p.tk;

	int ibegin, iend;
	fast_bwd_rows<RULES, BR, BC>(p, j, &ibegin, &iend);
	const int ni = iend - ibegin;
	const int nsteps = ni * p.group;
	long first = 0;
	if constexpr (TRACE)
		first = fast_bwd_first_step(p.rule, j, BR, BC, p.tq, p.tk);

	float dk[2][DN / 8][4], dv[2][DN / 8][4];
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int db = 0; db < DN / 8; db++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				dk[mt][db][e] = dv[mt][db][e] = 0.f;

	/* Q_i, dO_i, lse_i and D_i of query head h into buffer buf. */
	auto issue = [&](int h, int i, int buf) {
		const size_t qrow = ((size_t)b * p.heads + h) * p.tq;
		const int r0 = i * BR;
		if (r0 + BR <= p.tq) {
			fast_bwd_load_whole<BR, D, THREADS>(sQ + buf * QB,
			    p.q + qrow * D, r0, tid);
			fast_bwd_load_whole<BR, D, THREADS>(sO + buf * QB,
			    p.dout + qrow * D, r0, tid);
		} else {
			fast_load_tile<BR, D, THREADS>(sQ + buf * QB,
			    p.q + qrow * D, r0, p.tq, tid);
			fast_load_tile<BR, D, THREADS>(sO + buf * QB,
			    p.dout + qrow * D, r0, p.tq, tid);
		}
		for (int r = tid; r < 2 * BR; r += THREADS) {
			const int rr = r % BR;
			const bool in = r0 + rr < p.tq;
			const size_t at = qrow + (in ? r0 + rr : 0);
			if (r < BR)
				fast_cp_async4(fast_smem_addr(&sL[buf * BR + rr]),
				    p.lse2 + at, in ? 4 : 0);
			else
				fast_cp_async4(fast_smem_addr(&sD[buf * BR + rr]),
				    p.dsum + at, in ? 4 : 0);
		}
	};

	fast_load_tile<BC, D, THREADS>(sK, p.k + kvbase * D, c0, p.tk, tid);
	fast_load_tile<BC, D, THREADS>(sV, p.v + kvbase * D, c0, p.tk, tid);
	/* The step's query head h and row block i: i runs over [ibegin,
	 * iend) for each of the group's heads in turn, counted as the loop
	 * goes (a division a step cost more than the rest of its integer
	 * work). */
	int h = hk * p.group, i = ibegin;
	if (nsteps > 0)
		issue(h, i, 0);
	fast_cp_commit();

	for (int it = 0; it < nsteps; it++) {
		const int buf = it & 1;
		const int r0 = i * BR;
		const uint32_t q = sQ + buf * QB, o = sO + buf * QB;
		const int h_next = i + 1 < iend ? h : h + 1;
		const int i_next = i + 1 < iend ? i + 1 : ibegin;

		fast_cp_wait<0>();
		__syncthreads();
		if (it + 1 < nsteps)
			issue(h_next, i_next, buf ^ 1);
		fast_cp_commit();

		/* S^T (32 keys x 32 queries), masked and bent, into P^T. */
		float s[2][4][4], dcap[2][4][4];
		fast_bwd_abt2<D, 2, 32, BF16>(s, sK, kw, q, qw, lane);
		const float slope = RULES ? tc_rule_slope(p.rule, h) : 0.f;
		/* One copy of the loop for the tiles that cross an edge, one
		 * with no test an entry for the rest. */
		auto bend = [&](auto partial) {
#pragma unroll
			for (int mt = 0; mt < 2; mt++)
#pragma unroll
				for (int nb = 0; nb < 4; nb++)
#pragma unroll
					for (int e = 0; e < 4; e++) {
						const int c = c0 + kw + 16 * mt + g +
						    8 * (e >> 1);
						const int rr = qw + 8 * nb + 2 * t4 +
						    (e & 1);
						s[mt][nb][e] = fast_bwd_p<RULES>(p,
						    s[mt][nb][e], sL[buf * BR + rr],
						    slope, decltype(partial)::value,
						    r0 + rr, c, &dcap[mt][nb][e]);
					}
		};
		if (fast_bwd_partial<RULES, BR, BC>(p, j, r0))
			bend(std::true_type());
		else
			bend(std::false_type());
		fast_bwd_put<BR, BF16>(fast_bwd_shm, sP - sK, kw, qw, s, lane);

		/* dP^T = V dO^T; dS^T = P^T o (dP^T - D). */
		{
			float dp[2][4][4];
			fast_bwd_abt2<D, 2, 32, BF16>(dp, sV, kw, o, qw, lane);
#pragma unroll
			for (int mt = 0; mt < 2; mt++)
#pragma unroll
				for (int nb = 0; nb < 4; nb++)
#pragma unroll
					for (int e = 0; e < 4; e++) {
						s[mt][nb][e] *= dp[mt][nb][e] -
						    sD[buf * BR + qw + 8 * nb +
						    2 * t4 + (e & 1)];
						/* back through the cap */
						if constexpr (RULES)
							s[mt][nb][e] *=
							    dcap[mt][nb][e];
					}
		}
		fast_bwd_put<BR, BF16>(fast_bwd_shm, sS - sK, kw, qw, s, lane);
		__syncthreads();

		/* dV += P^T dO_i, dK += dS^T Q_i: 32 keys x D/2 a warp. */
		fast_bwd_sb<BR, D, DN, BF16>(dv, sP, kw, o, dn0, lane);
		fast_bwd_sb<BR, D, DN, BF16>(dk, sS, kw, q, dn0, lane);
		if constexpr (TRACE) {
			const size_t at = ((size_t)b * p.heads + h) * p.nsteps +
			    first + i - ibegin;
			/* The trace's rows are the block's keys. */
			fast_bwd_out2<D, DN, BF16>(p.tr_dk, true,
			    at * p.tr_bc - c0, c0 + kw, p.tk, dn0, dk,
			    p.grad_scale, lane);
			fast_bwd_out2<D, DN, BF16>(p.tr_dv, true,
			    at * p.tr_bc - c0, c0 + kw, p.tk, dn0, dv, 1.f,
			    lane);
		}

		/* dQ_i += scale dS K_j: 32 queries x D/4 a warp. */
		{
			float a[2][DQ / 8][4];
#pragma unroll
			for (int mt = 0; mt < 2; mt++)
#pragma unroll
				for (int nb = 0; nb < DQ / 8; nb++)
#pragma unroll
					for (int e = 0; e < 4; e++)
						a[mt][nb][e] = 0.f;
#pragma unroll
			for (int kk = 0; kk < BC / 16; kk++) {
				uint32_t af[2][4];
#pragma unroll
				for (int mt = 0; mt < 2; mt++)
					fast_bwd_ldat<BR>(sS, q3 + 16 * mt, 16 * kk,
					    lane, af[mt]);
#pragma unroll
				for (int nd2 = 0; nd2 < DQ / 16; nd2++) {
					uint32_t bf[4];
					fast_bwd_ldbt<D>(sK, 16 * kk, d3 / 16 + nd2,
					    lane, bf);
#pragma unroll
					for (int mt = 0; mt < 2; mt++) {
						fast_mma<BF16>(a[mt][2 * nd2], af[mt],
						    bf[0], bf[1]);
						fast_mma<BF16>(a[mt][2 * nd2 + 1],
						    af[mt], bf[2], bf[3]);
					}
				}
			}
			const size_t qrow = ((size_t)b * p.heads + h) * p.tq;
			int *lock = p.locks + ((size_t)b * p.heads + h) * p.tr + i;
			const int turn = p.ordered ?
			    fast_bwd_dq_turn<RULES, BR, BC>(p, i, j) : 0;
			if (p.ordered) {
				if (tid == 0)
					fast_bwd_wait_turn(lock, turn);
				__syncthreads();
			}
			/* fn(r, c, at, x, y) for each of the thread's pairs of
			 * dQ entries (row r, columns c and c + 1 at at, the
			 * part's x and y); rows past Tq left out, with a test
			 * a row only where whole does not say there are none. */
			auto each_pair = [&](auto whole, auto fn) {
#pragma unroll
				for (int mt = 0; mt < 2; mt++)
#pragma unroll
					for (int hh = 0; hh < 2; hh++) {
						const int r = r0 + q3 + 16 * mt + g +
						    8 * hh;
						if (!decltype(whole)::value && r >= p.tq)
							continue;
						const int c = d3 + 2 * t4;
						float *row = p.dq_acc + (qrow + r) * D + c;
#pragma unroll
						for (int nb = 0; nb < DQ / 8; nb++)
							fn(r, c + nb * 8, row + nb * 8,
							    a[mt][nb][2 * hh] * p.grad_scale,
							    a[mt][nb][2 * hh + 1] *
							    p.grad_scale);
					}
			};
			const auto add = [](int, int, float *at, float x,
			    float y) {
				fast_bwd_red2(at, x, y);
			};
#if FAST_BWD_DQ_V4
			if (!p.ordered) {
				/* Lane pairs trade halves (fast_bwd_kernel's). */
				const bool odd = t4 & 1;
#pragma unroll
				for (int mt = 0; mt < 2; mt++) {
					const int r = r0 + q3 + 16 * mt + g +
					    (odd ? 8 : 0);
#pragma unroll
					for (int nb = 0; nb < DQ / 8; nb++) {
						const float g0 = __shfl_xor_sync(
						    0xffffffffu, odd ? a[mt][nb][0] :
						    a[mt][nb][2], 1);
						const float g1 = __shfl_xor_sync(
						    0xffffffffu, odd ? a[mt][nb][1] :
						    a[mt][nb][3], 1);
						const float f = p.grad_scale;
						const float4 v = odd ? make_float4(
						    g0 * f, g1 * f, a[mt][nb][2] * f,
						    a[mt][nb][3] * f) : make_float4(
						    a[mt][nb][0] * f, a[mt][nb][1] * f,
						    g0 * f, g1 * f);
						if (r < p.tq)
							fast_bwd_add4(p.dq_acc +
							    (qrow + r) * D + d3 +
							    nb * 8 + 4 * (t4 >> 1), v);
					}
				}
			} else
#endif
			if (!p.ordered) {
				if (r0 + BR <= p.tq)
					each_pair(std::true_type(), add);
				else
					each_pair(std::false_type(), add);
			} else
				each_pair(std::false_type(), [&](int r, int c,
				    float *at, float x, float y) {
					const float2 old = __ldcg((const float2 *)at);
					const float2 sum = make_float2(old.x + x,
					    old.y + y);
					__stcg((float2 *)at, sum);
					if constexpr (TRACE)
						if (p.tr_dq != NULL)
							*(float2 *)(p.tr_dq +
							    ((((size_t)b * p.heads +
							    h) * p.nsteps + first + i -
							    ibegin) * p.tr_br + r - r0) *
							    D + c) = sum;
				});
			if (p.ordered) {
				__threadfence();
				__syncthreads();
				if (tid == 0)
					atomicExch(lock, turn + 1);
			}
		}
		h = h_next;
		i = i_next;
	}
	fast_cp_wait<0>();

	fast_bwd_out2<D, DN, BF16>(p.dk, p.f32_out, kvbase, c0 + kw, p.tk, dn0,
	    dk, p.grad_scale, lane);
	fast_bwd_out2<D, DN, BF16>(p.dv, p.f32_out, kvbase, c0 + kw, p.tk, dn0,
	    dv, 1.f, lane);
}

/* The tiling, both d: Br, and Bc = 16 warps (fast_bwd.h's). */
#define FAST_BWD_BR FAST_BWD_TILE_BR
#define FAST_BWD_WARPS (FAST_BWD_TILE_BC / 16)

static size_t
fast_bwd_smem(int d, int br, int warps)
{
	const int bc = 16 * warps;

	return (size_t)(2 * bc * d + 4 * br * d + bc * br) * 2 +
	    4 * (size_t)br * sizeof(float);
}

extern "C" int
fast_bwd_config(int d, struct fast_bwd_config *out)
{
	if (d != 64 && d != 128)
		return -1;
	out->d = d;
	out->br = FAST_BWD_BR;
	out->warps = FAST_BWD_WARPS;
	out->bc = 16 * FAST_BWD_WARPS;
	return 0;
}

static size_t
fast_bwd_align(size_t n)
{
	return (n + 255) & ~(size_t)255;
}

extern "C" size_t
fast_bwd_workspace_bytes(int batch, int heads, int tq, int d)
{
	const size_t rows = (size_t)batch * heads * tq;
	const size_t tr = ((size_t)tq + FAST_BWD_BR - 1) / FAST_BWD_BR;

	return 2 * fast_bwd_align(rows * sizeof(float)) +
	    fast_bwd_align(rows * d * sizeof(float)) +
	    fast_bwd_align((size_t)batch * heads * tr * sizeof(int));
}

template <int D, bool BF16, int WARPS, bool TRACE, bool RULES>
static cudaError_t
fast_bwd_launch_all(const struct fast_bwd_params *pp, int batch, void *dq,
    cudaStream_t st, const char **call)
{
	const struct fast_bwd_params &p = *pp;
	const size_t rows = (size_t)batch * p.heads * p.tq;
	const size_t nq = rows * D;
	constexpr bool smem_p = FAST_BWD_SMEM_P && WARPS == 8;
	const int smem = (int)fast_bwd_smem(D, FAST_BWD_BR, WARPS) +
	    (smem_p ? 16 * WARPS * FAST_BWD_BR * 2 : 0);
	void (*kern)(const struct fast_bwd_params) = smem_p ?
	    fast_bwd_kernel_p<D, FAST_BWD_BR, 8, BF16, TRACE, RULES> :
	    fast_bwd_kernel<D, FAST_BWD_BR, WARPS, BF16, TRACE, RULES>;
	const int bc = 16 * WARPS;
	cudaError_t e;

	*call = "cudaMemsetAsync";
	if ((e = cudaMemsetAsync(p.dq_acc, 0, nq * sizeof(float), st)) !=
	    cudaSuccess)
		return e;
	if (p.ordered && (e = cudaMemsetAsync(p.locks, 0, (size_t)batch *
	    p.heads * p.tr * sizeof(int), st)) != cudaSuccess)
		return e;
	*call = "fast_bwd_dsum launch";
	fast_bwd_dsum<D, BF16><<<(unsigned)((rows + FAST_BWD_DSUM_WARPS - 1) /
	    FAST_BWD_DSUM_WARPS), FAST_BWD_DSUM_WARPS * 32, 0, st>>>(p, rows);
	if ((e = cudaGetLastError()) != cudaSuccess)
		return e;
	*call = "cudaFuncSetAttribute";
	if ((e = cudaFuncSetAttribute(kern,
	    cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) != cudaSuccess)
		return e;
	*call = "fast_bwd_kernel launch";
	kern<<<dim3((unsigned)((p.tk + bc - 1) / bc), (unsigned)p.kv_heads,
	    (unsigned)batch), WARPS * 32, smem, st>>>(p);
	if ((e = cudaGetLastError()) != cudaSuccess)
		return e;
	if (!p.f32_out) {
		*call = "fast_bwd_dq launch";
		size_t blocks = (nq + 255) / 256;
		fast_bwd_dq<BF16><<<(unsigned)(blocks < 8192 ? blocks : 8192),
		    256, 0, st>>>(p.dq_acc, (uint16_t *)dq, nq);
		e = cudaGetLastError();
	}
	return e;
}

/* The trace build's arrays on the device (struct fast_bwd_params). */
struct fast_bwd_trace {
	float *dk, *dv, *dq;
	long nsteps;
	int br, bc;
};

/* fast_attention_bwd_masked, or with tr its trace build (the default
 * tiles, one query head a K/V head). */
static int
fast_bwd_call(const void *q, const void *k, const void *v,
    const void *o, const void *dout, const float *lse, void *dq, void *dk,
    void *dv, void *work, int batch, int heads, int kv_heads, int tq,
    int tk, int d, int dtype, const struct tc_mask *mask, float scale,
    int flags, void *stream, const struct fast_bwd_trace *tr, char *err,
    size_t errlen)
{
	struct fast_bwd_params p;
	const char *call = "";
	cudaError_t e;
	size_t rows;
	float scale_eff;

	if (tc_args_check("fast_attention_bwd", q, k, v, o, lse, batch, heads,
	    tq, tk, dtype, 16, "16-byte copies", err, errlen) != 0)
		return -1;
	if (dout == NULL || dq == NULL || dk == NULL || dv == NULL ||
	    work == NULL) {
		snprintf(err, errlen, "fast_attention_bwd: dO, dQ, dK, dV or "
		    "the workspace is NULL");
		return -1;
	}
	if (d != 64 && d != 128)
		return tc_args_no_variant("fast_attention_bwd", 0, d, err,
		    errlen);
	if (kv_heads < 1 || heads % kv_heads != 0) {
		snprintf(err, errlen, "fast_attention_bwd: %d query heads are "
		    "not a whole number of groups of %d K/V heads", heads,
		    kv_heads);
		return -1;
	}
	scale = tc_args_scale(scale, d);
	rows = (size_t)batch * heads * tq;

	memset(&p, 0, sizeof p);
	if (tc_rule_make("fast_attention_bwd", mask, scale, &p.rule,
	    &scale_eff, err, errlen) != 0)
		return -1;
	tc_rule_band(p.rule, tq, tk, &p.dlo, &p.dhi);
	p.causal = mask_rule_has(p.rule.m, MASK_CAUSAL);
	p.q = (const uint16_t *)q;
	p.k = (const uint16_t *)k;
	p.v = (const uint16_t *)v;
	p.o = (const uint16_t *)o;
	p.dout = (const uint16_t *)dout;
	p.lse = lse;
	p.dsum = (float *)work;
	p.lse2 = (float *)((uint8_t *)work + fast_bwd_align(rows *
	    sizeof(float)));
	p.dq_acc = (float *)((uint8_t *)p.lse2 + fast_bwd_align(rows *
	    sizeof(float)));
	p.locks = (int *)((uint8_t *)p.dq_acc + fast_bwd_align(rows * d *
	    sizeof(float)));
	p.f32_out = (flags & FAST_BWD_F32_OUT) != 0;
	if (p.f32_out)
		p.dq_acc = (float *)dq;	/* the sum is dQ itself */
	p.dk = dk;
	p.dv = dv;
	p.heads = heads;
	p.kv_heads = kv_heads;
	p.group = heads / kv_heads;
	p.tq = tq;
	p.tk = tk;
	p.tr = (tq + FAST_BWD_BR - 1) / FAST_BWD_BR;
	p.ordered = (flags & FAST_BWD_ORDERED) != 0;
	p.no_d = (flags & FAST_BWD_NO_D) != 0;
	/* The forward's units (tc_mask.cuh): the exponent's scale is C
	 * under a cap, and dS, after the cap's backward, is the gradient
	 * of scale q.k, so dQ and dK still take scale. */
	p.scale_log2 = scale_eff * FAST_BWD_LOG2E;
	p.grad_scale = flags & FAST_BWD_NO_SCALE ? 1.f : scale;
	if (tr != NULL) {
		if (heads != kv_heads || (flags & FAST_BWD_BC64)) {
			snprintf(err, errlen, "fast_attention_bwd: the trace "
			    "build takes one query head a K/V head and the "
			    "default tiles");
			return -1;
		}
		p.tr_dk = tr->dk;
		p.tr_dv = tr->dv;
		p.tr_dq = p.ordered ? tr->dq : NULL;
		p.nsteps = tr->nsteps;
		p.tr_br = tr->br;
		p.tr_bc = tr->bc;
	}

	cudaStream_t st = (cudaStream_t)stream;
	const bool narrow = (flags & FAST_BWD_BC64) != 0;
	/* The rules' kernels (RULES) for anything but the causal mask or
	 * none; the trace build's always: without a cap or ALiBi the bend
	 * is u = s and a factor 1, the band the causal mask's, the same
	 * bits. */
	const bool rules = p.rule.bends || (mask_rule_hides(p.rule.m) &&
	    !p.causal);
#define FAST_BWD_PICK(D, BF)						\
	(tr != NULL ? fast_bwd_launch_all<D, BF, FAST_BWD_WARPS, true, true>(	\
	    &p, batch, dq, st, &call) :					\
	    narrow ? (rules ? fast_bwd_launch_all<D, BF, 4, false, true>(&p,	\
	    batch, dq, st, &call) : fast_bwd_launch_all<D, BF, 4, false,	\
	    false>(&p, batch, dq, st, &call)) :				\
	    rules ? fast_bwd_launch_all<D, BF, FAST_BWD_WARPS, false, true>(&p,	\
	    batch, dq, st, &call) : fast_bwd_launch_all<D, BF,		\
	    FAST_BWD_WARPS, false, false>(&p, batch, dq, st, &call))
	if (d == 64)
		e = dtype == FAST_BF16 ? FAST_BWD_PICK(64, true) :
		    FAST_BWD_PICK(64, false);
	else
		e = dtype == FAST_BF16 ? FAST_BWD_PICK(128, true) :
		    FAST_BWD_PICK(128, false);
#undef FAST_BWD_PICK
	if (e != cudaSuccess) {
		snprintf(err, errlen, "%s failed at %s:%d: %s", call, __FILE__,
		    __LINE__, cudaGetErrorString(e));
		return -1;
	}
	return 0;
}

extern "C" int
fast_attention_bwd_masked(const void *q, const void *k, const void *v,
    const void *o, const void *dout, const float *lse, void *dq, void *dk,
    void *dv, void *work, int batch, int heads, int kv_heads, int tq,
    int tk, int d, int dtype, const struct tc_mask *mask, float scale,
    int flags, void *stream, char *err, size_t errlen)
{
	return fast_bwd_call(q, k, v, o, dout, lse, dq, dk, dv, work, batch,
	    heads, kv_heads, tq, tk, d, dtype, mask, scale, flags, stream,
	    NULL, err, errlen);
}

extern "C" int
fast_attention_bwd(const void *q, const void *k, const void *v,
    const void *o, const void *dout, const float *lse, void *dq, void *dk,
    void *dv, void *work, int batch, int heads, int kv_heads, int tq,
    int tk, int d, int dtype, int causal, float scale, int flags,
    void *stream, char *err, size_t errlen)
{
	const struct tc_mask mask = tc_mask_causal(causal);

	return fast_attention_bwd_masked(q, k, v, o, dout, lse, dq, dk, dv,
	    work, batch, heads, kv_heads, tq, tk, d, dtype, &mask, scale,
	    flags, stream, err, errlen);
}

/* ---- host arrays in and out: the table's glue and the tests ---- */

struct fast_bwd_run {
	const struct fast_bwd_host *job;
	const void *q, *k, *v, *o, *dout;
	const float *lse;
	float *dq, *dk, *dv;
	void *work;
	struct tc_mask mask;		/* the job's, its slopes on the device */
	const struct fast_bwd_trace *tr;	/* the trace run's, or NULL */
};

static int
fast_bwd_enqueue(void *ctx, char *err, size_t errlen)
{
	const struct fast_bwd_run *r = (const struct fast_bwd_run *)ctx;
	const struct fast_bwd_host *j = r->job;

	return fast_bwd_call(r->q, r->k, r->v, r->o, r->dout, r->lse,
	    r->dq, r->dk, r->dv, r->work, j->batch, j->heads, j->kv_heads,
	    j->tq, j->tk, j->d, j->dtype, &r->mask, j->scale,
	    j->flags | FAST_BWD_F32_OUT, NULL, r->tr, err, errlen);
}

#define FAST_BWD_MAX_ALLOC 16

extern "C" long
fast_bwd_trace_steps_masked(int tq, int tk, const struct tc_mask *mask)
{
	struct tc_rule rule;
	float scale_eff;
	char err[160];

	if (tc_rule_make("fast_bwd_trace_steps", mask, 1.f, &rule,
	    &scale_eff, err, sizeof err) != 0)
		return -1;
	return fast_bwd_first_step(rule, (tk + FAST_BWD_TILE_BC - 1) /
	    FAST_BWD_TILE_BC, FAST_BWD_BR, FAST_BWD_TILE_BC, tq, tk);
}

extern "C" long
fast_bwd_trace_steps(int tq, int tk, int causal)
{
	const struct tc_mask mask = tc_mask_causal(causal);

	return fast_bwd_trace_steps_masked(tq, tk, &mask);
}

extern "C" int
fast_bwd_run_host(struct fast_bwd_host *job, char *err, size_t errlen)
{
	void *mem[FAST_BWD_MAX_ALLOC] = { NULL };
	int nmem = 0, rc = -1;
	const int bf16 = job->dtype == FAST_BF16;
	const size_t nq = (size_t)job->batch * job->heads * job->tq * job->d;
	const size_t nk = (size_t)job->batch * job->kv_heads * job->tk * job->d;
	const size_t rows = (size_t)job->batch * job->heads * job->tq;
	struct fast_bwd_run run;
	float *stage = NULL;
	uint16_t *h16[5] = { NULL };
	const float *src[5] = { job->q, job->k, job->v, job->o, job->dout };
	const size_t cnt[5] = { nq, nk, nk, nq, nq };
	size_t work;
	double bytes = 0;
	int x;

	memset(&run, 0, sizeof run);
	if (job->batch < 1 || job->heads < 1 || job->kv_heads < 1 ||
	    job->tq < 1 || job->tk < 1) {
		snprintf(err, errlen, "fast_bwd_run_host: bad sizes (B=%d H=%d "
		    "Hkv=%d Tq=%d Tk=%d)", job->batch, job->heads,
		    job->kv_heads, job->tq, job->tk);
		return -1;
	}
	work = fast_bwd_workspace_bytes(job->batch, job->heads, job->tq,
	    job->d);
#define FAST_BWD_ALLOC(ptr, size) do {					\
		CUDA_CHECK_BWD(cudaMalloc((void **)&(ptr), (size)));	\
		mem[nmem++] = (void *)(ptr);				\
		bytes += (double)(size);				\
	} while (0)
#define CUDA_CHECK_BWD(call) do {					\
		cudaError_t e_ = (call);				\
		if (e_ != cudaSuccess) {				\
			snprintf(err, errlen, "%s failed at %s:%d: %s",	\
			    #call, __FILE__, __LINE__,			\
			    cudaGetErrorString(e_));			\
			goto fail;					\
		}							\
	} while (0)
	FAST_BWD_ALLOC(stage, (nq > nk ? nq : nk) * sizeof(float));
	for (x = 0; x < 5; x++) {
		FAST_BWD_ALLOC(h16[x], cnt[x] * sizeof(uint16_t));
		CUDA_CHECK_BWD(cudaMemcpy(stage, src[x], cnt[x] * sizeof(float),
		    cudaMemcpyHostToDevice));
		CUDA_CHECK_BWD(to16(stage, h16[x], cnt[x], bf16));
	}
	FAST_BWD_ALLOC(run.lse, rows * sizeof(float));
	CUDA_CHECK_BWD(cudaMemcpy((void *)run.lse, job->lse, rows *
	    sizeof(float), cudaMemcpyHostToDevice));
	FAST_BWD_ALLOC(run.dq, nq * sizeof(float));
	FAST_BWD_ALLOC(run.dk, nk * sizeof(float));
	FAST_BWD_ALLOC(run.dv, nk * sizeof(float));
	FAST_BWD_ALLOC(run.work, work);
	/* The staging buffer is the helper's, not the kernel's. */
	bytes -= (double)(nq > nk ? nq : nk) * sizeof(float);
	run.job = job;
	run.q = h16[0];
	run.k = h16[1];
	run.v = h16[2];
	run.o = h16[3];
	run.dout = h16[4];
	run.mask = job->mask != NULL ? *job->mask :
	    tc_mask_causal(job->causal);
	if (job->mask != NULL && job->mask->alibi != NULL) {
		float *slopes;

		FAST_BWD_ALLOC(slopes, (size_t)job->heads * sizeof(float));
		CUDA_CHECK_BWD(cudaMemcpy(slopes, job->mask->alibi,
		    (size_t)job->heads * sizeof(float),
		    cudaMemcpyHostToDevice));
		run.mask.alibi = slopes;
	}
	if (timing_median_ms(fast_bwd_enqueue, &run, job->repeat, &job->ms,
	    err, errlen) != 0)
		goto fail;
	CUDA_CHECK_BWD(cudaMemcpy(job->dq, run.dq, nq * sizeof(float),
	    cudaMemcpyDeviceToHost));
	CUDA_CHECK_BWD(cudaMemcpy(job->dk, run.dk, nk * sizeof(float),
	    cudaMemcpyDeviceToHost));
	CUDA_CHECK_BWD(cudaMemcpy(job->dv, run.dv, nk * sizeof(float),
	    cudaMemcpyDeviceToHost));
	job->device_bytes = bytes;
	if (job->trace_dk != NULL) {
		struct fast_bwd_trace tr;
		const size_t heads = (size_t)job->batch * job->heads;
		size_t nt[3];
		float *dt[3] = { NULL, NULL, NULL };
		float *ht[3] = { job->trace_dk, job->trace_dv, job->trace_dq };

		tr.nsteps = fast_bwd_trace_steps_masked(job->tq, job->tk,
		    &run.mask);
		tr.br = job->tq < FAST_BWD_BR ? job->tq : FAST_BWD_BR;
		tr.bc = job->tk < FAST_BWD_TILE_BC ? job->tk : FAST_BWD_TILE_BC;
		nt[0] = nt[1] = heads * tr.nsteps * tr.bc * job->d;
		nt[2] = heads * tr.nsteps * tr.br * job->d;
		/* The host's arrays in, so an entry with no step stays. */
		for (x = 0; x < 3; x++) {
			if (ht[x] == NULL)
				continue;
			FAST_BWD_ALLOC(dt[x], nt[x] * sizeof(float));
			CUDA_CHECK_BWD(cudaMemcpy(dt[x], ht[x], nt[x] *
			    sizeof(float), cudaMemcpyHostToDevice));
		}
		tr.dk = dt[0];
		tr.dv = dt[1];
		tr.dq = dt[2];
		run.tr = &tr;
		if (fast_bwd_enqueue(&run, err, errlen) != 0)
			goto fail;
		CUDA_CHECK_BWD(cudaDeviceSynchronize());
		for (x = 0; x < 3; x++)
			if (ht[x] != NULL)
				CUDA_CHECK_BWD(cudaMemcpy(ht[x], dt[x], nt[x] *
				    sizeof(float), cudaMemcpyDeviceToHost));
	}
	rc = 0;
fail:
	while (nmem-- > 0)
		cudaFree(mem[nmem]);
	return rc;
#undef FAST_BWD_ALLOC
#undef CUDA_CHECK_BWD
}

/*
 * The kernel table's entry (kernel.c: the fast kernel's backward): n
 * problems as n heads of one batch, each its own K/V head, gradients in
 * float32 into the result's host arrays.  The backward bugs it takes
 * (no-d, no-scale) are flags of the timed kernel.  With GPU_BWD_TRACE the
 * trace build fills the trace, on the steps of the simulator's backward
 * on the entry's tiles (gpubwd.c laid them out: checked here).
 */
extern "C" int
fast_bwd_launch(const struct gpu_bwd_job *job, char *err, size_t errlen)
{
	struct fast_bwd_host h;
	/* The problems' rules (problem_mask: causal is the window (-1,
	 * 0)), the slopes one a problem, on the host: run_host uploads. */
	struct tc_mask mask = tc_mask_causal(0);

	if (job->mask.window) {
		mask.left = job->mask.left;
		mask.right = job->mask.right;
	}
	mask.softcap = job->mask.softcap;
	mask.alibi = job->slopes;
	if (job->dv != job->d) {
		snprintf(err, errlen, "fast_bwd: dv %d must be d %d", job->dv,
		    job->d);
		return -1;
	}
	memset(&h, 0, sizeof h);
	h.batch = 1;
	h.heads = h.kv_heads = job->n;
	h.tq = job->tq;
	h.tk = job->tk;
	h.d = job->d;
	h.dtype = job->dtype == DTYPE_BF16 ? FAST_BF16 : FAST_FP16;
	h.causal = job->causal;
	h.mask = &mask;
	h.scale = job->scale;
	h.flags = (job->dq == GPU_DQ_ORDERED ? FAST_BWD_ORDERED : 0) |
	    (job->bug == BWD_BUG_NO_SCALE ? FAST_BWD_NO_SCALE : 0) |
	    (job->bug == BWD_BUG_NO_D ? FAST_BWD_NO_D : 0);
	h.q = job->q;
	h.k = job->k;
	h.v = job->v;
	h.o = job->in.o;
	h.dout = job->in.dout;
	h.lse = job->in.lse;
	h.dq = job->g->grad_q;
	h.dk = job->g->grad_k;
	h.dv = job->g->grad_v;
	h.repeat = job->repeat;
	if (job->flags & GPU_BWD_TRACE) {
		const long steps = fast_bwd_trace_steps_masked(job->tq,
		    job->tk, &mask);
		const int br = job->tq < FAST_BWD_BR ? job->tq : FAST_BWD_BR;
		const int bc = job->tk < FAST_BWD_TILE_BC ? job->tk :
		    FAST_BWD_TILE_BC;

		if (steps != job->g->nsteps || br != job->g->br ||
		    bc != job->g->bc) {
			snprintf(err, errlen, "fast_bwd: the trace's %ld steps "
			    "of %d x %d tiles are not the simulator's %ld of "
			    "%d x %d", steps, br, bc, job->g->nsteps,
			    job->g->br, job->g->bc);
			return -1;
		}
		h.trace_dk = job->g->trace_dk;
		h.trace_dv = job->g->trace_dv;
		h.trace_dq = job->g->trace_dq;
	}
	if (fast_bwd_run_host(&h, err, errlen) != 0)
		return -1;
	job->g->ms = h.ms;
	job->g->device_bytes = h.device_bytes;
	return 0;
}
