/*
 * wgmma.cu - FlashAttention forward for Hopper (sm_90a): wgmma, TMA,
 * mbarriers and warp specialization.  fp16 or bf16 in, float32
 * accumulation.  fast.cu is the same algorithm with sm_80's tools
 * (mma.sync, ldmatrix, cp.async, every warp doing everything); this file
 * is what changes when the chip gives you an asynchronous tensor core and
 * an asynchronous copy engine, and it is built only for sm_90a.
 *
 * Letters as in fast.cu: Q (Tq, d), K and V (Tk, d) per (batch, head);
 * Br query rows per block, Bc keys per tile, Tr = ceil(Tq / Br) row
 * blocks, Tc = ceil(Tk / Bc) key tiles; one work item per (row block i,
 * head, batch), FA2's loop order (for each i, for each j), one block per
 * work item.  The defaults: Br = 128, Bc = 128 at d = 128; Br = 192,
 * Bc = 128 at d = 64.
 *
 * Who does what: a block is 1 + C warpgroups (WG: 4 warps, 128 threads)
 * ----------------------------------------------------------------------
 * (FA3's roles, one function each: wgmma_producer; the consumers' main
 * loop, wgmma_consumer_overlap, with the softmax of wgmma_score_tile;
 * wgmma_epilogue.  wgmma_fwd_kernel only sets up and dispatches.)
 *   WG 0, the producer: one thread issues every copy.  TMA
 *     (cp.async.bulk.tensor) copies a whole 2-D box of a tensor into
 *     shared memory from one instruction, zero-fills what lies past the
 *     tensor's edge, and signals an mbarrier when the bytes have landed.
 *     Q_i once a work item; then K_j and V_j into a ring of STAGES
 *     slots.
 *   WG 1 .. C, the consumers (C = 2 at d = 128, 3 at d = 64): each owns
 *     64 query rows of the block (wgmma's M is 64 per warpgroup, so
 *     Br = 64 C) and all Bc keys of a tile, FA2's split, so a row's max
 *     and sum stay inside one warp.
 * The producer needs a handful of registers and the consumers all they
 * can get (O and S accumulators, P): setmaxnreg moves them.  C = 2: 168
 * a thread at launch (65536 / 384, rounded to 8) -> 24 for the producer,
 * 240 for each consumer (128 * 24 + 256 * 240 = 64512 <= 65536); C = 3:
 * 128 -> 24 and 160 (128 * 24 + 384 * 160 = 64512).
 *
 * The ring: mbarriers, full and empty
 * -----------------------------------
 * An mbarrier is a 64-bit counter in shared memory with a phase bit: a
 * phase completes when the expected arrivals have come AND the expected
 * bytes (expect_tx) have landed; then the phase bit flips.  A waiter asks
 * "has the phase with parity P completed?" (try_wait.parity), so a slot
 * used for the n-th time is waited on with parity n & 1.
 *
 * enum wgmma_barrier names them, one of each role per slot s:
 *   WGMMA_FULL_K, _FULL_V  1 arrival (the producer's arrive.expect_tx,
 *                          which also announces Bc*d*2 bytes) + the TMA's
 *                          bytes.  Consumers wait on it before reading.
 *   WGMMA_EMPTY_K, _EMPTY_V  4 C arrivals: lane 0 of each consumer warp,
 *                          once its wgmma reading the slot has completed.
 *                          The producer waits on it before overwriting.
 *   WGMMA_FULL_Q, _EMPTY_Q Q_i, and its release after the epilogue (which
 *                          stages O in Q's slot).
 * struct wgmma_pipe counts a ring's uses and gives each its slot and
 * parity.
 * A fresh barrier is in phase 0, so the producer's first wait on an empty
 * slot asks for parity 1, "the phase before", and passes at once.  K and V
 * have separate barriers so that S = Q K_j^T can start before V_j lands.
 *
 * The pipeline, one consumer (FA3's intra-warpgroup overlap)
 * ---------------------------------------------------------
 * wgmma is asynchronous: a warpgroup issues it, goes on with other
 * instructions, and waits (wgmma.wait_group) only when it needs the
 * result.  So the S of the next tile is issued before this tile's
 * softmax, and the P V of this tile runs under the next softmax:
 *
 *   issue S_0; wait; softmax_0 -> P_0, alpha_0
 *   for j = 1 .. Tc-1:
 *     issue S_j = Q K_j^T                                  (group 1)
 *     O *= alpha_{j-1}                      <- runs under S_j
 *     issue O += P_{j-1} V_{j-1}                           (group 2)
 *     wait for S_j (wait_group 1: P V may still run)
 *     softmax_j -> m, l, alpha_j, P_j       <- overlaps P_{j-1} V_{j-1}
 *     wait for P V (wait_group 0)
 *   O *= alpha_last; issue O += P_last V_last; wait
 * (FA3's order, SCHED 2; SCHED 1 rescales O right after the wait
 * instead, and SCHED 0, wgmma_consumer_plain, does S, softmax, P V one
 * after the other: dev/cuda/wgmma/ builds and times those.)
 * P_{j-1} is read from registers by the second wgmma while softmax_j
 * writes P_j into the S registers: S (Bc/2 floats), P (Bc/4 words) and O
 * (d/2 floats) are all live, 160 registers at d = 128.
 *
 * Two consumers taking turns (FA3's ping-pong)
 * --------------------------------------------
 * The tensor core of a multiprocessor is one unit, the exp unit (MUFU)
 * another, and the exp is not cheap: a score costs 4 d flops of the two
 * products at 4096 flops a clock, and one exp at 16 a clock, so at
 * d = 128 the exps alone take half as long as the products.
 * Named barriers make the two consumers alternate: a consumer takes its
 * turn (bar.sync on its own barrier), issues its GEMMs, hands the turn
 * over (bar.arrive on the other's barrier) and does its softmax while the
 * other's GEMMs run:
 *
 *   tensor core  |S1 PV0 (WG1)|S1 PV0 (WG2)|S2 PV1 (WG1)|S2 PV1 (WG2)|..
 *   WG1          |issue|  softmax_1 wait   |issue| softmax_2  ...
 *   WG2          | wait turn  |issue|  softmax_1 wait   |issue| ...
 *   producer     K2 (after both released K0) .. V1 .. K3 ..
 *
 * Every consumer issues the same number of turns (Tc + 1 a work item),
 * the last consumer gives WG 1 the first turn, and WG 1 takes back the
 * last pass at the end, so no named barrier is left half-arrived when
 * the block exits.  With C = 3 the turn goes round: 1, 2, 3, 1, ...
 *
 * Shared memory: the 128-byte swizzle that TMA and wgmma agree on
 * --------------------------------------------------------------
 * A tile (rows, d) is stored as d / 64 boxes of (rows, 64): one box row
 * is 64 halves = 128 bytes, the widest row TMA's 128-byte swizzle takes.
 * In a box, 16-byte chunk c of row r lives at chunk c ^ (r & 7): eight
 * consecutive rows (1024 bytes) use all 32 banks for any one chunk.  TMA
 * writes that pattern (CU_TENSOR_MAP_SWIZZLE_128B) and wgmma reads it
 * (descriptor swizzle mode 1), both as a function of the address bits
 * [4:6] ^ [7:9], so every tile starts on a 1024-byte boundary.
 *
 * wgmma reads its shared operands through a 64-bit descriptor: start
 * address >> 4 (bits 0-13), LBO >> 4 (16-29), SBO >> 4 (32-45), swizzle
 * mode (62-63; 1 = 128 B).  In units of "core matrices" (8 rows of 16
 * bytes):
 *   K-major (the reduction dimension is contiguous): Q as A and K as B
 *     of S = Q K^T (both store d contiguously).  SBO = 1024, the step
 *     between 8-row groups; LBO unused.  The k-th 16-wide slice of d is
 *     box k / 4, plus 32 (k % 4) bytes: the swizzle is applied after.
 *   MN-major (N contiguous, "transposed B", imm-trans-b = 1): V as B of
 *     O = P V, whose reduction dimension (keys) is V's rows.  SBO = 1024
 *     (8 keys to the next 8), LBO = Bc * 128, from one box of 64 d
 *     columns to the next.  The k-th 16 keys start 16 * 128 bytes on.
 * So neither K nor V is ever transposed or touched by a thread.
 *
 * Registers: the wgmma fragments (per warp w of the warpgroup, lane =
 * 4 g + t; the mma.sync m16n8 layouts, stacked)
 * ------------------------------------------------------------------
 *   accumulator (64 x N, float): element 4 nb + e of a thread is row
 *     16 w + g + 8 (e / 2), column 8 nb + 2 t + (e % 2).
 *   A from registers (64 x 16, 16-bit, 4 words): word 0 row g cols 2t,
 *     2t+1; word 1 row g+8; word 2 row g cols 2t+8..; word 3 row g+8.
 * So S's accumulator, rounded pairwise to 16 bits in order, IS the A
 * operand of P V: word i of P = (s[2i], s[2i+1]).  P never touches
 * shared memory (FA3's "RS" product), and a row lives in the 4 threads of
 * a quad: its max and sum are two shuffles (xor 1, 2).
 *
 * Online softmax in base 2 as in fast.cu: p = 2^(s scale log2(e) - m
 * scale log2(e)); m is the raw row max (units of q.k), l the sum of the
 * float32 p (each thread a partial sum over its columns, added across the
 * quad at the end), P V uses p rounded to 16 bits.  A row that has seen
 * only masked keys has m = -inf; its exponent base is taken as 0, so
 * p = 0 and alpha = 0 times an l and O that are still 0.
 *
 * Ragged shapes, the causal mask and windows.  The tensor maps are 3-D
 * (d, T, B*H): a box that runs past Tq or Tk is zero-filled by TMA inside
 * its own head, never read from the next one.  Keys c >= Tk and keys a
 * row's mask hides (tc_mask.cuh: causal, or a window's two edges) get
 * s = -inf in the tiles that cross an edge; key tiles outside the keys a
 * block's rows see are never loaded, and blocks start from the last row
 * block (the one with the most tiles under the causal mask).  A cap or
 * ALiBi bends every tile's scores before the max.  Rows past Tq are
 * computed on zeros and not written.
 *
 * A packed batch (flash-attention's varlen: wgmma_attention_varlen) is
 * the same kernel built with VARLEN = true, one launch over the whole
 * batch.  A work item is (row block i, head h, sequence b), i over the
 * longest sequence's row blocks; the item reads its sequence's offsets
 * cu_q[b], cu_k[b] and lengths Tq_b, Tk_b from the device arrays, and
 * every rule above runs on Tq_b and Tk_b: the tile range and the
 * causal or window alignment (tc_mask.cuh), the ragged edge.  A row
 * block past Tr_b has no tiles and does nothing.  The maps are (d,
 * sum T_b, H), so TMA zero-fills only past the whole tensor: a box at a
 * sequence's end holds the next sequence's rows.  Its keys are hidden as
 * keys past Tk_b (tc_rule_partial sees the tile cross Tk_b, so every
 * entry is looked at), and its query rows are computed but never stored
 * (O and lse are stored row by row, each row only below Tq_b; a box
 * store would write over rows the next sequence's block stores, a race).
 * The dense build reads Tq, Tk and its coordinates from the parameters
 * as before (wgmma_tq and the like), so its code is the dense kernel's.
 *
 * FP8 (wgmma_attention_fp8: DT = FAST_FP8, d = 128, dense), FA3's third
 * technique.  Q, K and V arrive as e4m3 codes with block scales
 * (wgmma.h), so a tile row is 128 bytes: one 128-byte box at d = 128,
 * and the k-step of both products is 32 codes, the same 32 bytes a step
 * that 16 halves are, so the descriptors' arithmetic is unchanged.
 * What changes:
 *   - FP8 wgmma takes no transpose: both operands K-major.  S = Q K^T
 *     is so already; for O = P V the V slot must hold V^T (d rows of
 *     keys), which a small kernel makes before (wgmma_fp8_v_layout)
 *     where FA3 transposes in its producer warps.
 *   - P must be e4m3 in FP8's A-fragment layout, which gives a thread
 *     other key columns than S's accumulator left it.  Instead of
 *     trading bytes between threads, V^T's keys are stored in the order
 *     P already has (wgmma_fp8_key_at): P is packed in place, four
 *     codes a word, by the hardware's conversion (round to nearest
 *     even, saturating: fp8_rule.h's rule).
 *   - The scales cost no operation an entry: a tile's S is q_scale (a
 *     row) times k_scale (the tile) times the codes' product, folded
 *     into the exponent's multiplier (wgmma_softmax's SCALED); V's scale
 *     differs from tile to tile, so O is kept in units of the last V
 *     tile's scale and alpha takes the ratio when the next tile's P V is
 *     added (wgmma_vratio); the epilogue multiplies by the last.  A cap
 *     or ALiBi bends true scores, so under one S is descaled first.
 *   - Q's slot keeps its 16-bit size (O is staged in it as fp16); K's
 *     and V's slots are half as large.
 * Hopper's FP8 tensor cores add a product's terms in fewer bits than
 * float32 (gpu/gpucheck.h, gpucheck_fp8_delta), which the tests' bounds
 * take in.
 *
 * Epilogue: O / l rounded to 16 bits goes through the warp's own rows of
 * Q's tile in shared memory (same swizzle, so the 4-byte writes are free
 * of bank conflicts) and leaves as coalesced 16-byte stores; lse = m scale
 * + log l.
 *
 * Why these choices (the figures: doc/performance.md; how each was
 * measured, and what was tried and dropped: dev/cuda/wgmma/NOTES.md)
 * ------------------
 * - The overlap with FA3's rescale order and the ping-pong: the fastest
 *   schedule measured on the H200 (the plain loop is dev/cuda/wgmma/).
 * - Bc = 128: a tile's two products are long enough to hide the other
 *   warpgroup's softmax; at d = 128 S (64), P (32) and O (64) fit under
 *   240 registers without spills.  Bc = 176 (FA3's) was no faster.
 * - d = 64 takes three consumers (Br = 192): a score's exp costs as much
 *   MUFU time as its products take on the tensor core, so a third
 *   softmax has to hide; faster at long T, slower at T = 1024 causal.
 * - Two stages at d = 128 (Q 32 KB + 2 x (K 32 KB + V 32 KB) = 160 KB),
 *   four at d = 64: one block a multiprocessor either way (the register
 *   file is full); a third stage at d = 128 was no faster.
 * - One block per work item: the persistent grid (dev/cuda/wgmma/) was
 *   no faster without the mask and slower under it; a window with a left
 *   edge, whose items are a few tiles each, runs it (wgmma_pick).
 * - The limit, by ncu: the tensor pipe busy about 70 % of the time, the
 *   exp pipe the busiest by instructions; what is left is the softmax not
 *   always hidden behind the other consumer's products and each block's
 *   prologue and epilogue.
 *
 * The trace (wgmma_attention_trace): every variant is also built with
 * TRACE = true, which writes each row's m, alpha and l after each tile's
 * softmax, and its O row once that tile's P V has completed, to device
 * arrays indexed (batch, head, i, j, row) in fast.h's layout, so the
 * simulator's steps can be laid against them as for the fast kernel.  The
 * timed kernels (TRACE = false) contain none of it.
 */
#include <cuda.h>		/* CUtensorMap and its enums: types only */
#include <cudaTypedefs.h>	/* PFN_cuTensorMapEncodeTiled */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cudacheck.h"
#include "fast_mma.cuh"
#include "tc_args.h"
#include "tc_mask.cuh"
#include "wgmma.h"

/*
 * The recording build (WGMMA_RECORD, gpu/wgmma_record.cu): one thread of
 * each role writes its steps as events (wgmma_record.h).  In the timed
 * build every WGMMA_REC macro is empty and wgmma_params has no field for
 * it, so its code is the code without them.
 */
#ifdef WGMMA_RECORD
#include "wgmma_record.h"
#include "model/pipeline.h"	/* enum pipeline_kind: the events' kinds */
/* A stamp named t: the cycle counter and the global timer, now. */
#define WGMMA_REC_AT(t) const long long t##_c = clock64(),		\
	t##_g = wgmma_rec_gtime()
/* An event from stamp t to now, written by recorder rec. */
#define WGMMA_REC(rec, t, kind, j, stage, round)			\
	wgmma_rec_put(rec, kind, j, stage, round, t##_c, t##_g)
#define WGMMA_REC_NOW(rec, kind, j, stage, round) do {			\
	WGMMA_REC_AT(now_);						\
	WGMMA_REC(rec, now_, kind, j, stage, round);			\
} while (0)
/* The recorder of a role (0 producer, 1 + c consumer c; -1 none). */
#define WGMMA_REC_DECL(name, p, role, nroles)				\
	const struct wgmma_rec name = wgmma_rec_for(p, role, nroles)
#define WGMMA_REC_WHO(p, role, nroles) , wgmma_rec_for(p, role, nroles)
#else
#define WGMMA_REC_AT(t) ((void)0)
#define WGMMA_REC(rec, t, kind, j, stage, round) ((void)0)
#define WGMMA_REC_NOW(rec, kind, j, stage, round) ((void)0)
#define WGMMA_REC_DECL(name, p, role, nroles) ((void)0)
#define WGMMA_REC_WHO(p, role, nroles)
#endif
/* The recording build's planted fault (tests/gpu_record_planted.sh):
 * V's slot released when its P V is issued instead of done. */
#if defined(WGMMA_RECORD) && defined(WGMMA_PLANT_EARLY_RELEASE)
#define WGMMA_EARLY_RELEASE 1
#else
#define WGMMA_EARLY_RELEASE 0
#endif

struct wgmma_params {
	uint16_t *o;
	float *lse;
	int tq, tk;		/* VARLEN builds: the totals, sum Tq_b, sum Tk_b */
	int tr;			/* Tr = ceil(Tq / Br) row blocks a head
				 * (VARLEN: of the longest sequence) */
	int ntiles;		/* work items: Tr * heads * batch (VARLEN:
				 * Tr * heads * nseq) */
	int heads;		/* H: a work item's head is bh % H */
	struct tc_rule rule;	/* the window, the cap, ALiBi (tc_mask.cuh) */
	float scale;		/* the exponent's, natural units: for lse */
	float scale_log2;	/* scale * log2(e): exponents in base 2 */
	/* TRACE builds: (batch, head, i, j, row) arrays (fast.h); acc may
	 * be NULL.  tc is Tc, the number of key tiles. */
	float *tr_m, *tr_alpha, *tr_l, *tr_acc;
	int tc;
	int no_rescale;		/* TRACE builds: bug no-rescale (fast.h) */
	/* VARLEN builds: the nseq + 1 row offsets (cu_seqlens) on the
	 * device (last, so the dense kernel's fields keep their places) */
	const int *cu_q, *cu_k;
	/* FP8 builds: the scales that turn codes into values, q_scale one a
	 * row of Q (bh Tq + row), k_scale and v_scale one a key tile of K
	 * and of V (bh Tc + j): S = q_scale k_scale (codes' product), and
	 * P V_j is scaled by v_scale (wgmma_vratio) */
	const float *q_scale, *k_scale, *v_scale;
#ifdef WGMMA_RECORD
	struct wgmma_rec_event *rec;	/* [block][role][rec_cap] */
	int *rec_n;			/* [block][role] */
	int rec_blocks, rec_cap;	/* blocks 0 .. rec_blocks-1 record */
#endif
};

#ifdef WGMMA_RECORD
/* Where one role of one block writes its events; ev NULL: nowhere. */
struct wgmma_rec {
	struct wgmma_rec_event *ev;
	int *n;
	int cap;
};

static __device__ __forceinline__ long long
wgmma_rec_gtime(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return (long long)t;
}

static __device__ __forceinline__ struct wgmma_rec
wgmma_rec_for(const struct wgmma_params &p, int role, int nroles)
{
	struct wgmma_rec r = { NULL, NULL, 0 };

	if (role >= 0 && p.rec != NULL && (int)blockIdx.x < p.rec_blocks) {
		const size_t at = (size_t)blockIdx.x * nroles + role;
		r.ev = p.rec + at * p.rec_cap;
		r.n = p.rec_n + at;
		r.cap = p.rec_cap;
	}
	return r;
}

/* One thread writes a recorder, so its count needs no atomics. */
static __device__ __forceinline__ void
wgmma_rec_put(const struct wgmma_rec &r, int kind, int j, int stage,
    int round, long long c0, long long g0)
{
	const long long c1 = clock64(), g1 = wgmma_rec_gtime();
	int n;

	if (r.ev == NULL)
		return;
	n = *r.n;
	if (n < r.cap) {
		struct wgmma_rec_event e = { kind, j, stage, round, c0, c1, g0,
		    g1 };
		r.ev[n] = e;
	}
	*r.n = n + 1;
}
#endif

/* ---------------------------------------------------------------------
 * PTX wrappers: mbarriers, TMA, named barriers, register reallocation.
 * Shared addresses are 32-bit (the shared window), as the PTX wants.
 */
static __device__ __forceinline__ uint32_t
wgmma_smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void
wgmma_bar_init(uint32_t bar, uint32_t count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n"
	    :: "r"(bar), "r"(count) : "memory");
}

/* One arrival that also announces bytes the TMA will deliver. */
static __device__ __forceinline__ void
wgmma_bar_expect(uint32_t bar, uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
	    :: "r"(bar), "r"(bytes) : "memory");
}

static __device__ __forceinline__ void
wgmma_bar_arrive(uint32_t bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n"
	    :: "r"(bar) : "memory");
}

/* Until the phase of parity `parity` has completed. */
static __device__ __forceinline__ void
wgmma_bar_wait(uint32_t bar, uint32_t parity)
{
	uint32_t done;

	do {
		asm volatile("{\n"
		    ".reg .pred p;\n"
		    "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
		    "selp.u32 %0, 1, 0, p;\n"
		    "}\n"
		    : "=r"(done) : "r"(bar), "r"(parity) : "memory");
	} while (!done);
}

/* Box (c0, c1, c2) of the tensor map into shared dst; bytes to bar. */
static __device__ __forceinline__ void
wgmma_tma_load(uint32_t dst, const CUtensorMap *map, int c0, int c1, int c2,
    uint32_t bar)
{
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile"
	    ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
	    :: "r"(dst), "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2),
	       "r"(bar) : "memory");
}

static __device__ __forceinline__ void
wgmma_tma_prefetch(const CUtensorMap *map)
{
	asm volatile("prefetch.tensormap [%0];\n"
	    :: "l"((uint64_t)map) : "memory");
}

/* Named barrier id with 256 threads: the ping-pong between consumers. */
static __device__ __forceinline__ void
wgmma_turn_wait(int id)
{
	asm volatile("bar.sync %0, 256;\n" :: "r"(id) : "memory");
}

static __device__ __forceinline__ void
wgmma_turn_pass(int id)
{
	asm volatile("bar.arrive %0, 256;\n" :: "r"(id) : "memory");
}

template <int N>
static __device__ __forceinline__ void
wgmma_regs_dec(void)
{
	asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(N));
}

template <int N>
static __device__ __forceinline__ void
wgmma_regs_inc(void)
{
	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(N));
}

/* ---------------------------------------------------------------------
 * wgmma.  fence before a warpgroup's first wgmma after its registers
 * were written; commit closes a group; wait_group N returns when at most
 * N groups are still running.  The compiler does not know that the
 * accumulators change behind its back until the wait: wgmma_hold (an
 * empty asm that "rewrites" each register) after the wait pins every
 * later read of them below it.
 */
static __device__ __forceinline__ void
wgmma_fence(void)
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void
wgmma_commit(void)
{
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N>
static __device__ __forceinline__ void
wgmma_wait(void)
{
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N)
	    : "memory");
}

template <int N>
static __device__ __forceinline__ void
wgmma_hold(float (&r)[N])
{
#pragma unroll
	for (int i = 0; i < N; i++)
		asm volatile("" : "+f"(r[i]) :: "memory");
}

/* Shared-memory operand descriptor, 128-byte swizzle (see the header). */
static __device__ __forceinline__ uint64_t
wgmma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
	return (uint64_t)((addr & 0x3ffff) >> 4) |
	    (uint64_t)((lbo >> 4) & 0x3fff) << 16 |
	    (uint64_t)((sbo >> 4) & 0x3fff) << 32 | 1ull << 62;
}

/*
 * The instructions themselves, m64nNk16 (16-bit inputs) or m64nNk32
 * (FP8 e4m3) with float32 accumulators d (N / 2 a thread).  SS: A and B
 * from shared memory (S = Q K^T, both K-major); RS: A from 4 registers,
 * B from shared memory (O += P V): MN-major for 16 bits (imm-trans-b =
 * 1), K-major for FP8, which takes no transpose (so V^T is what its
 * slots hold, wgmma_fp8_v_layout).  acc = 0 overwrites d (scale-d false)
 * instead of adding.
 */
#define WGMMA_D32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "	\
	"%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, "	\
	"%25, %26, %27, %28, %29, %30, %31}"
#define WGMMA_D64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "	\
	"%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, "	\
	"%25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "	\
	"%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, "	\
	"%51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define WGMMA_O8(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]),	\
	"+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]),	\
	"+f"(d[i + 7])
#define WGMMA_O32(d) WGMMA_O8(d, 0), WGMMA_O8(d, 8), WGMMA_O8(d, 16),	\
	WGMMA_O8(d, 24)
#define WGMMA_O64(d) WGMMA_O32(d), WGMMA_O8(d, 32), WGMMA_O8(d, 40),	\
	WGMMA_O8(d, 48), WGMMA_O8(d, 56)
/* N, type, the accumulator list, then operand numbers of A, B, acc. */
#define WGMMA_SS(N, T, DL, A, B, C) "{\n.reg .pred p;\n"		\
	"setp.ne.b32 p, %" C ", 0;\n"					\
	"wgmma.mma_async.sync.aligned.m64n" N "k16.f32." T "." T " "	\
	DL ", %" A ", %" B ", p, 1, 1, 0, 0;\n}\n"
/* A's four words, then B, transposed (MN-major, imm-trans-b = 1). */
#define WGMMA_RS(N, T, DL, A0, A1, A2, A3, B, C) "{\n.reg .pred p;\n"	\
	"setp.ne.b32 p, %" C ", 0;\n"					\
	"wgmma.mma_async.sync.aligned.m64n" N "k16.f32." T "." T " "	\
	DL ", {%" A0 ", %" A1 ", %" A2 ", %" A3 "}, %" B ", p, 1, 1, 1;\n}\n"
/* The FP8 forms: k32, and no transpose arguments (both K-major). */
#define WGMMA_SS8(N, DL, A, B, C) "{\n.reg .pred p;\n"			\
	"setp.ne.b32 p, %" C ", 0;\n"					\
	"wgmma.mma_async.sync.aligned.m64n" N "k32.f32.e4m3.e4m3 "	\
	DL ", %" A ", %" B ", p, 1, 1;\n}\n"
#define WGMMA_RS8(N, DL, A0, A1, A2, A3, B, C) "{\n.reg .pred p;\n"	\
	"setp.ne.b32 p, %" C ", 0;\n"					\
	"wgmma.mma_async.sync.aligned.m64n" N "k32.f32.e4m3.e4m3 "	\
	DL ", {%" A0 ", %" A1 ", %" A2 ", %" A3 "}, %" B ", p, 1, 1;\n}\n"

/* Bytes of one element of dtype DT (enum fast_dtype). */
template <int DT>
struct wgmma_elem {
	static constexpr int bytes = DT == FAST_FP8 ? 1 : 2;
};

template <int N, int DT>
static __device__ __forceinline__ void
wgmma_ss(float (&d)[N / 2], uint64_t a, uint64_t b, int acc)
{
	static_assert(N == 64 || N == 128, "wgmma_ss: N is 64 or 128");
	static_assert(DT != FAST_FP8 || N == 128, "wgmma_ss: FP8 is N = 128");
	if constexpr (DT == FAST_FP8)
		asm volatile(WGMMA_SS8("128", WGMMA_D64, "64", "65", "66")
		    : WGMMA_O64(d) : "l"(a), "l"(b), "r"(acc));
	else if constexpr (N == 64 && DT == FAST_FP16)
		asm volatile(WGMMA_SS("64", "f16", WGMMA_D32, "32", "33", "34")
		    : WGMMA_O32(d) : "l"(a), "l"(b), "r"(acc));
	else if constexpr (N == 64)
		asm volatile(WGMMA_SS("64", "bf16", WGMMA_D32, "32", "33", "34")
		    : WGMMA_O32(d) : "l"(a), "l"(b), "r"(acc));
	else if constexpr (DT == FAST_FP16)
		asm volatile(WGMMA_SS("128", "f16", WGMMA_D64, "64", "65", "66")
		    : WGMMA_O64(d) : "l"(a), "l"(b), "r"(acc));
	else
		asm volatile(WGMMA_SS("128", "bf16", WGMMA_D64, "64", "65",
		    "66") : WGMMA_O64(d) : "l"(a), "l"(b), "r"(acc));
}

template <int N, int DT>
static __device__ __forceinline__ void
wgmma_rs(float (&d)[N / 2], uint32_t a0, uint32_t a1, uint32_t a2,
    uint32_t a3, uint64_t b)
{
	static_assert(N == 64 || N == 128, "wgmma_rs: N is 64 or 128");
	static_assert(DT != FAST_FP8 || N == 128, "wgmma_rs: FP8 is N = 128");
	if constexpr (DT == FAST_FP8)
		asm volatile(WGMMA_RS8("128", WGMMA_D64, "64", "65", "66",
		    "67", "68", "69") : WGMMA_O64(d)
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(1));
	else if constexpr (N == 64 && DT == FAST_FP16)
		asm volatile(WGMMA_RS("64", "f16", WGMMA_D32, "32", "33", "34",
		    "35", "36", "37") : WGMMA_O32(d)
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(1));
	else if constexpr (N == 64)
		asm volatile(WGMMA_RS("64", "bf16", WGMMA_D32, "32", "33", "34",
		    "35", "36", "37") : WGMMA_O32(d)
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(1));
	else if constexpr (DT == FAST_FP16)
		asm volatile(WGMMA_RS("128", "f16", WGMMA_D64, "64", "65", "66",
		    "67", "68", "69") : WGMMA_O64(d)
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(1));
	else
		asm volatile(WGMMA_RS("128", "bf16", WGMMA_D64, "64", "65",
		    "66", "67", "68", "69") : WGMMA_O64(d)
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(1));
}

/*
 * S = Q K^T for this warpgroup's 64 rows: q is the address of its first
 * row in Q's tile (BR rows a box), k the K tile's slot.  One group.  A
 * k-step is 32 bytes of d either way: 16 halves or 32 FP8 codes.
 */
template <int D, int BR, int BC, int DT>
static __device__ __forceinline__ void
wgmma_qk(float (&s)[BC / 2], uint32_t q, uint32_t k)
{
	wgmma_fence();
#pragma unroll
	for (int kk = 0; kk < D * wgmma_elem<DT>::bytes / 32; kk++) {
		const uint32_t in = (kk % 4) * 32;	/* bytes into the row */
		wgmma_ss<BC, DT>(s,
		    wgmma_desc(q + (kk / 4) * BR * 128 + in, 16, 1024),
		    wgmma_desc(k + (kk / 4) * BC * 128 + in, 16, 1024), kk > 0);
	}
	wgmma_commit();
}

/*
 * O += P V, P in registers, v the V slot.  16 bits: word i of P is
 * (s[2i], s[2i+1]), V MN-major.  FP8: four words a k-step of 32 keys
 * (wgmma_topack), the slot holds V^T (D rows of BC key bytes, K-major
 * as K is for S), its keys in wgmma_fp8_key_at's order.
 */
template <int D, int BC, int DT>
static __device__ __forceinline__ void
wgmma_pv(float (&o)[D / 2], const uint32_t (&pa)[BC / 4], uint32_t v)
{
	wgmma_fence();
	if constexpr (DT == FAST_FP8) {
#pragma unroll
		for (int kk = 0; kk < BC / 32; kk++)
			wgmma_rs<D, DT>(o, pa[4 * kk], pa[4 * kk + 1],
			    pa[4 * kk + 2], pa[4 * kk + 3],
			    wgmma_desc(v + (kk / 4) * D * 128 + (kk % 4) * 32,
			    16, 1024));
	} else {
#pragma unroll
		for (int kk = 0; kk < BC / 16; kk++)
			wgmma_rs<D, DT>(o, pa[4 * kk], pa[4 * kk + 1],
			    pa[4 * kk + 2], pa[4 * kk + 3],
			    wgmma_desc(v + kk * 16 * 128, BC * 128, 1024));
	}
	wgmma_commit();
}

/* ---------------------------------------------------------------------
 * The softmax side, all in registers.
 */

/* 16-bit packing and 2^x: gpu/fast_mma.cuh's, as the mma.sync kernels
 * use them. */

/*
 * The rules on the scores this thread holds (tc_mask.cuh): with VIS,
 * -inf where key c is past Tk or hidden from row r; the cap and ALiBi's
 * bias (slope in u's units) on the rest.  c0 is the thread's first
 * column (j Bc + 2 t), r0 its first row (of two, r0 and r0 + 8).
 */
template <int BC, bool VIS>
static __device__ __forceinline__ void
wgmma_rules(float (&s)[BC / 2], const struct tc_rule &rule, float slope,
    int c0, int r0, int tq, int tk)
{
	int lo[2], hi[2];

#pragma unroll
	for (int h = 0; h < 2; h++)
		if (VIS)
			tc_rule_row(rule, r0 + 8 * h, tq, tk, &lo[h], &hi[h]);
#pragma unroll
	for (int nb = 0; nb < BC / 8; nb++)
#pragma unroll
		for (int e = 0; e < 4; e++) {
			const int c = c0 + 8 * nb + (e & 1);
			const int r = r0 + 8 * (e >> 1);
			s[4 * nb + e] = tc_rule_score<VIS>(rule, s[4 * nb + e],
			    slope, r, c, tq, tk, lo[e >> 1], hi[e >> 1]);
		}
}

/*
 * Online softmax of the thread's two rows (h = 0, 1) over one tile: s
 * becomes p = exp(scale (s - m_new)), m and l move on, al gets alpha.
 * O is rescaled by the caller (it may still be in flight).  no_rescale
 * (TRACE builds only: bug no-rescale) leaves l unscaled, and
 * wgmma_rescale leaves O so.  SCALED (FP8): s holds products of codes,
 * row h's scores are fac[h] s (fac > 0), and m stays in score units: the
 * row max is taken on s and scaled once, and fac joins the exponent's
 * multiplier, so the descale costs no operation an entry.
 */
template <int BC, bool TRACE, bool SCALED>
static __device__ __forceinline__ void
wgmma_softmax(float (&s)[BC / 2], float (&m)[2], float (&l)[2],
    float (&al)[2], float scale_log2, int no_rescale, const float (&fac)[2])
{
#pragma unroll
	for (int h = 0; h < 2; h++) {
		float mx = SCALED ? -INFINITY : m[h], sum = 0.f;

#pragma unroll
		for (int nb = 0; nb < BC / 8; nb++)
			mx = fmaxf(mx, fmaxf(s[4 * nb + 2 * h],
			    s[4 * nb + 2 * h + 1]));
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
		if constexpr (SCALED)
			mx = fmaxf(m[h], mx * fac[h]);
		const float sl = SCALED ? scale_log2 * fac[h] : scale_log2;
		const float ms = mx == -INFINITY ? 0.f : mx * scale_log2;
		al[h] = fast_exp2(m[h] * scale_log2 - ms);
		m[h] = mx;
#pragma unroll
		for (int nb = 0; nb < BC / 8; nb++)
#pragma unroll
			for (int e = 2 * h; e < 2 * h + 2; e++) {
				const float pv = fast_exp2(fmaf(s[4 * nb + e],
				    sl, -ms));
				s[4 * nb + e] = pv;
				sum += pv;
			}
		l[h] = (TRACE && no_rescale ? l[h] : l[h] * al[h]) + sum;
	}
}

/* O *= alpha before the next P V; vr is FP8's ratio of V scales
 * (wgmma_vratio; 1 otherwise), which bug no-rescale keeps. */
template <int D, bool TRACE>
static __device__ __forceinline__ void
wgmma_rescale(float (&o)[D / 2], const float (&al)[2], int no_rescale,
    float vr)
{
	const float a0 = (TRACE && no_rescale ? 1.f : al[0]) * vr;
	const float a1 = (TRACE && no_rescale ? 1.f : al[1]) * vr;

#pragma unroll
	for (int db = 0; db < D / 8; db++) {
		o[4 * db] *= a0;
		o[4 * db + 1] *= a0;
		o[4 * db + 2] *= a1;
		o[4 * db + 3] *= a1;
	}
}

/*
 * FP8: which key of a 32-key step lies at position x of V^T's slot
 * (wgmma_topack's order).  FP8's A fragment gives thread t of a quad
 * positions 4t .. 4t+3 (word 0, row g) and 16 + 4t .. 19 + 4t (word 2)
 * of the k-step, while S's accumulator left it keys 2t, 2t+1, 8+2t, 9+2t,
 * 16+2t, 17+2t, 24+2t, 25+2t.  Rather than trade bytes between threads,
 * V^T's keys are stored in the order P already has: key 16 h + 8 b +
 * 2 t + e sits at position 16 h + 4 t + 2 b + e, a permutation within
 * each 32 keys that P V sums over all the same.
 */
__host__ __device__ static inline int
wgmma_fp8_key_at(int x)
{
	const int h = (x >> 4) & 1, t = (x >> 2) & 3, b = (x >> 1) & 1;

	return (x & ~31) | 16 * h | 8 * b | 2 * t | (x & 1);
}

/* Four floats as four e4m3 codes, the first in the low byte, by PTX's
 * cvt.rn.satfinite.e4m3x2.f32 (round to nearest even, saturating):
 * fp8_rule.h's rule. */
static __device__ __forceinline__ uint32_t
wgmma_pack_fp8(float x0, float x1, float x2, float x3)
{
	const uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(x0, x1),
	    __NV_SATFINITE, __NV_E4M3);
	const uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(x2, x3),
	    __NV_SATFINITE, __NV_E4M3);

	return lo | hi << 16;
}

/* P for P V from p in S's registers: 16 bits, word i = (s[2i], s[2i+1]);
 * FP8, k-step kk's words from accumulator blocks 4 kk .. 4 kk + 3 (rows g
 * and g + 8, in wgmma_fp8_key_at's order). */
template <int BC, int DT>
static __device__ __forceinline__ void
wgmma_topack(uint32_t (&pa)[BC / 4], const float (&s)[BC / 2])
{
	if constexpr (DT == FAST_FP8) {
#pragma unroll
		for (int kk = 0; kk < BC / 32; kk++) {
			const float *x = s + 16 * kk;

			pa[4 * kk] = wgmma_pack_fp8(x[0], x[1], x[4], x[5]);
			pa[4 * kk + 1] = wgmma_pack_fp8(x[2], x[3], x[6], x[7]);
			pa[4 * kk + 2] = wgmma_pack_fp8(x[8], x[9], x[12],
			    x[13]);
			pa[4 * kk + 3] = wgmma_pack_fp8(x[10], x[11], x[14],
			    x[15]);
		}
	} else {
#pragma unroll
		for (int i = 0; i < BC / 4; i++)
			pa[i] = fast_pack<DT == FAST_BF16>(s[2 * i],
			    s[2 * i + 1]);
	}
}

/*
 * TRACE builds: m, alpha and l of the thread's rows after tile j (l
 * summed over the quad, as the epilogue does).  rb is the row's index in
 * the block (h = 0), row0 the block's first row.  Rows past Tq (tq:
 * the item's sequence's) are not written.
 */
template <int BR>
static __device__ void
wgmma_trace_ml(const struct wgmma_params &p, const float (&m)[2],
    const float (&al)[2], const float (&l)[2], size_t bh, int i, int j,
    int rb, int row0, int tq, int lane)
{
#pragma unroll
	for (int h = 0; h < 2; h++) {
		float lt = l[h];
		lt += __shfl_xor_sync(0xffffffffu, lt, 1);
		lt += __shfl_xor_sync(0xffffffffu, lt, 2);
		const int r = rb + 8 * h;
		if (row0 + r >= tq || (lane & 3) != 0)
			continue;
		const size_t at = ((bh * p.tr + i) * p.tc + j) * BR + r;
		p.tr_m[at] = m[h];
		p.tr_alpha[at] = al[h];
		p.tr_l[at] = lt;
	}
}

/* TRACE builds: the O rows once tile j's P V has completed, times
 * unit (FP8: the V scale O is kept in; 1 otherwise). */
template <int D, int BR>
static __device__ void
wgmma_trace_acc(const struct wgmma_params &p, const float (&o)[D / 2],
    float unit, size_t bh, int i, int j, int rb, int row0, int tq,
    int lane)
{
	if (p.tr_acc == NULL)
		return;
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const int r = rb + 8 * h;
		if (row0 + r >= tq)
			continue;
		const size_t at = ((bh * p.tr + i) * p.tc + j) * BR + r;
#pragma unroll
		for (int db = 0; db < D / 8; db++) {
			float *a = p.tr_acc + at * D + db * 8 + 2 * (lane & 3);
			a[0] = o[4 * db + 2 * h] * unit;
			a[1] = o[4 * db + 2 * h + 1] * unit;
		}
	}
}

/* Registers a thread keeps after setmaxnreg: producer, consumer. */
template <int NWG>
struct wgmma_regs {
	static constexpr int producer = 24;
	static constexpr int consumer = NWG == 2 ? 240 : 160;
};

/* Dynamic shared memory of one block: QBUF Q tiles, the ring, the
 * barriers, and 1024 bytes to align the tiles to the swizzle's period. */
static constexpr int
wgmma_smem_bytes(int d, int br, int bc, int stages, int qbuf, int es)
{
	return qbuf * br * d * 2 + stages * 2 * bc * d * es +
	    (2 * qbuf + 4 * stages) * 8 + 1024;
}

/*
 * The block's mbarriers by role (the header's "The ring"), laid out
 * after the tiles in this order, one per slot: QBUF of each Q role,
 * STAGES of each K and V role.
 */
enum wgmma_barrier {
	WGMMA_FULL_Q,	/* Q_i has landed: the producer's expect_tx + bytes */
	WGMMA_EMPTY_Q,	/* Q's slot is free: every consumer warp's epilogue */
	WGMMA_FULL_K,	/* K_j has landed */
	WGMMA_EMPTY_K,	/* every consumer warp's S = Q K_j^T has completed */
	WGMMA_FULL_V,	/* V_j has landed */
	WGMMA_EMPTY_V,	/* every consumer warp's P V_j has completed */
};

/* Named barriers (bar.sync ids; 0 is __syncthreads): consumer c's turn
 * at the tensor core is WGMMA_TURN + c. */
enum wgmma_named_barrier {
	WGMMA_TURN = 1,
};

/*
 * Where a block's tiles and barriers lie in shared memory: QBUF Q tiles
 * (BR x D), then STAGES K tiles and STAGES V tiles (BC x D), each tile
 * on a 1024-byte boundary (the swizzle's period), then the barriers.
 */
template <int D, int BR, int BC, int STAGES, int QBUF, int ES>
struct wgmma_shared {
	/* bytes of a Q slot: 16-bit O is staged in it (wgmma_epilogue),
	 * so an FP8 slot holds Q's BR D codes in its first half */
	static constexpr uint32_t QB = BR * D * 2;
	static constexpr uint32_t QIN = BR * D * ES;	/* of Q's tile */
	static constexpr uint32_t TB = BC * D * ES;	/* of a K or V tile */
	uint32_t q, k, v, bars;		/* shared addresses */
	uint8_t *gq;			/* q as a generic pointer */

	__device__ __forceinline__ uint32_t
	bar(enum wgmma_barrier b, int s) const
	{
		const int base = b == WGMMA_FULL_Q ? 0 :
		    b == WGMMA_EMPTY_Q ? QBUF :
		    b == WGMMA_FULL_K ? 2 * QBUF :
		    b == WGMMA_EMPTY_K ? 2 * QBUF + STAGES :
		    b == WGMMA_FULL_V ? 2 * QBUF + 2 * STAGES :
		    2 * QBUF + 3 * STAGES;
		return bars + 8u * (base + s);
	}
};

/*
 * A position in a ring of SLOTS slots, counted in uses: the n-th use is
 * slot n % SLOTS, its (n / SLOTS)-th time round, so its full barrier is
 * waited on with parity (n / SLOTS) & 1 and its empty barrier, by the
 * producer, with the parity before (a fresh barrier passes that at
 * once).  The producer and the consumers count the same uses in the
 * same order, so they agree on every slot and phase.
 */
template <int SLOTS>
struct wgmma_pipe {
	uint32_t n;

	__device__ __forceinline__ int stage() const { return n % SLOTS; }
	__device__ __forceinline__ uint32_t
	phase() const { return (n / SLOTS) & 1; }
	/* The position j uses on. */
	__device__ __forceinline__ wgmma_pipe
	at(int j) const { return { n + j }; }
	__device__ __forceinline__ void advance(int uses = 1) { n += uses; }
};

/*
 * A work item t: a row block of one head.  i counts from the last row
 * block, so that under the causal mask the longest come first; bh is
 * its (batch, head); it visits the nt key tiles from j0 (tc_mask.cuh:
 * a causal mask or a window skips the others).  Row blocks of one head
 * are neighbours in t, so the blocks running at once share K and V in
 * L2.
 */
struct wgmma_item {
	int i, row0, bh, j0, nt;
	int hc;			/* the tensor maps' third coordinate */
	int q0, k0;		/* rows of Q and keys before its sequence */
	int tq, tk;		/* its sequence's Tq and Tk */
};

/*
 * VARLEN: t counts (row block, head, sequence b), bh = b H + h, the row
 * blocks of the longest sequence (p.tr); the maps are (d, sum T_b, H),
 * so a sequence is rows q0 = cu_q[b] .. of head h, and a row block past
 * its Tr_b is an item of no tiles (tc_rule_tiles: no rows below Tq_b).
 */
template <int BR, int BC, bool VARLEN>
static __device__ __forceinline__ struct wgmma_item
wgmma_tile(const struct wgmma_params &p, int t)
{
	struct wgmma_item it;

	it.i = p.tr - 1 - t % p.tr;
	it.bh = t / p.tr;
	it.row0 = it.i * BR;
	int j1;
	if constexpr (VARLEN) {
		const int b = it.bh / p.heads;

		it.hc = it.bh % p.heads;
		it.q0 = p.cu_q[b];
		it.k0 = p.cu_k[b];
		it.tq = p.cu_q[b + 1] - it.q0;
		it.tk = p.cu_k[b + 1] - it.k0;
		tc_rule_tiles(p.rule, it.row0, BR, it.tq, it.tk, BC, &it.j0,
		    &j1);
	} else {
		/* the dense item leaves the new fields unset: every read of
		 * them goes through wgmma_tq and the like, so the dense
		 * kernel's code is what it was before packed batches */
		tc_rule_tiles(p.rule, it.row0, BR, p.tq, p.tk, BC, &it.j0,
		    &j1);
	}
	it.nt = j1 - it.j0;
	return it;
}

/* The item's sequence's Tq and Tk, its maps' third coordinate and its
 * first row of Q and of K (the dense kernel's: p's, bh and 0). */
template <bool VARLEN>
static __device__ __forceinline__ int
wgmma_tq(const struct wgmma_params &p, const struct wgmma_item &it)
{
	if constexpr (VARLEN)
		return it.tq;
	else
		return p.tq;
}

template <bool VARLEN>
static __device__ __forceinline__ int
wgmma_tk(const struct wgmma_params &p, const struct wgmma_item &it)
{
	if constexpr (VARLEN)
		return it.tk;
	else
		return p.tk;
}

template <bool VARLEN>
static __device__ __forceinline__ int
wgmma_hc(const struct wgmma_item &it)
{
	if constexpr (VARLEN)
		return it.hc;
	else
		return it.bh;
}

template <bool VARLEN>
static __device__ __forceinline__ int
wgmma_q0(const struct wgmma_item &it)
{
	if constexpr (VARLEN)
		return it.q0;
	else
		return 0;
}

template <bool VARLEN>
static __device__ __forceinline__ int
wgmma_k0(const struct wgmma_item &it)
{
	if constexpr (VARLEN)
		return it.k0;
	else
		return 0;
}

/*
 * The producer: one thread issues every copy, the work items' Q tiles
 * into their QBUF slots and their K and V tiles into the ring, in the
 * order the consumers use them.  FP8's V is V^T (wgmma_fp8_v_layout):
 * a tile is BC / 128 boxes of (D rows, 128 keys).
 */
template <int D, int BR, int BC, int STAGES, int QBUF, int DT, bool VARLEN>
static __device__ __forceinline__ void
wgmma_producer(const struct wgmma_params &p, const CUtensorMap *tm_q,
    const CUtensorMap *tm_k, const CUtensorMap *tm_v,
    const wgmma_shared<D, BR, BC, STAGES, QBUF, wgmma_elem<DT>::bytes> &sm)
{
	constexpr int ES = wgmma_elem<DT>::bytes;
	constexpr int NBOX = D * ES / 128;	/* 128-byte boxes a row */
	constexpr int BOXW = 128 / ES;		/* a box's width, elements */
	typedef wgmma_shared<D, BR, BC, STAGES, QBUF, ES> smem;
	constexpr uint32_t QB = smem::QB, QIN = smem::QIN, TB = smem::TB;
	wgmma_pipe<QBUF> qp = { 0 };
	wgmma_pipe<STAGES> kv = { 0 };
	WGMMA_REC_DECL(rec, p, 0, 1 + BR / 64);

	wgmma_tma_prefetch(tm_q);
	wgmma_tma_prefetch(tm_k);
	wgmma_tma_prefetch(tm_v);
	for (int t = blockIdx.x; t < p.ntiles; t += gridDim.x) {
		const struct wgmma_item it = wgmma_tile<BR, BC, VARLEN>(p, t);

		if (it.nt == 0)
			continue;
		const int qs = qp.stage();
		WGMMA_REC_AT(eq);
		wgmma_bar_wait(sm.bar(WGMMA_EMPTY_Q, qs), qp.phase() ^ 1);
		WGMMA_REC(rec, eq, PIPELINE_WAIT_EMPTY_Q, -1, qs, qp.n / QBUF);
		WGMMA_REC_AT(cq);
		qp.advance();
		wgmma_bar_expect(sm.bar(WGMMA_FULL_Q, qs), QIN);
		for (int b = 0; b < NBOX; b++)
			wgmma_tma_load(sm.q + qs * QB + b * BR * 128, tm_q,
			    BOXW * b, wgmma_q0<VARLEN>(it) + it.row0,
			    wgmma_hc<VARLEN>(it), sm.bar(WGMMA_FULL_Q, qs));
		WGMMA_REC(rec, cq, PIPELINE_COPY_Q, -1, qs, (qp.n - 1) / QBUF);
		for (int j = 0; j < it.nt; j++, kv.advance()) {
			const int s = kv.stage();
			const uint32_t ph = kv.phase();

			WGMMA_REC_AT(ek);
			wgmma_bar_wait(sm.bar(WGMMA_EMPTY_K, s), ph ^ 1);
			WGMMA_REC(rec, ek, PIPELINE_WAIT_EMPTY_K, j, s,
			    kv.n / STAGES);
			WGMMA_REC_AT(ck);
			wgmma_bar_expect(sm.bar(WGMMA_FULL_K, s), TB);
			for (int b = 0; b < NBOX; b++)
				wgmma_tma_load(sm.k + s * TB + b * BC * 128,
				    tm_k, BOXW * b, wgmma_k0<VARLEN>(it) +
				    (it.j0 + j) * BC, wgmma_hc<VARLEN>(it),
				    sm.bar(WGMMA_FULL_K, s));
			WGMMA_REC(rec, ck, PIPELINE_COPY_K, j, s, kv.n / STAGES);
			WGMMA_REC_AT(ev);
			wgmma_bar_wait(sm.bar(WGMMA_EMPTY_V, s), ph ^ 1);
			WGMMA_REC(rec, ev, PIPELINE_WAIT_EMPTY_V, j, s,
			    kv.n / STAGES);
			WGMMA_REC_AT(cv);
			wgmma_bar_expect(sm.bar(WGMMA_FULL_V, s), TB);
			if constexpr (DT == FAST_FP8)
				for (int b = 0; b < BC / 128; b++)
					wgmma_tma_load(sm.v + s * TB +
					    b * D * 128, tm_v, (it.j0 + j) * BC +
					    128 * b, 0, it.bh,
					    sm.bar(WGMMA_FULL_V, s));
			else
				for (int b = 0; b < NBOX; b++)
					wgmma_tma_load(sm.v + s * TB +
					    b * BC * 128, tm_v, BOXW * b,
					    wgmma_k0<VARLEN>(it) +
					    (it.j0 + j) * BC,
					    wgmma_hc<VARLEN>(it),
					    sm.bar(WGMMA_FULL_V, s));
			WGMMA_REC(rec, cv, PIPELINE_COPY_V, j, s, kv.n / STAGES);
		}
	}
}

/* Who a consumer thread is: warpgroup c, warp ww in it, lane = 4 g + t4;
 * rb its first row (of two, rb and rb + 8) in the block. */
struct wgmma_who {
	int c, lane, ww, g, t4, rb;
#ifdef WGMMA_RECORD
	struct wgmma_rec rec;	/* this thread's recorder (lane 0 of warp 0) */
#endif
};

/*
 * A consumer thread's registers for its two rows: O's accumulator, S
 * (then p in float32), P packed to 16 bits (FP8: 8) for P V, and the
 * online softmax's m, l and alpha.  FP8 builds also keep the rows' Q
 * scales (fq) and the scale of the V tile whose P V was added last
 * (vs): O holds O / vs (wgmma_vratio).
 */
template <int D, int BC>
struct wgmma_frag {
	float o[D / 2], s[BC / 2], m[2], l[2], al[2];
	uint32_t pa[BC / 4];
	float fq[2], vs;
};

/*
 * FP8: the factor O's rescale takes before P V of key tile kj adds
 * v_scale[kj] (codes' product) to it.  O is kept in units of the last
 * V tile's scale, so O = vs_prev O' becomes, with alpha, alpha vs_prev O'
 * + vs_kj P V'_kj = vs_kj (alpha (vs_prev / vs_kj) O' + P V'_kj): alpha
 * times the ratio, and no multiply an entry of P V.  1 for 16 bits.
 */
template <int DT, int D, int BC>
static __device__ __forceinline__ float
wgmma_vratio(const struct wgmma_params &p, const struct wgmma_item &it,
    wgmma_frag<D, BC> &f, int kj)
{
	if constexpr (DT == FAST_FP8) {
		const float vs = p.v_scale[(size_t)it.bh * p.tc + kj];
		const float r = f.vs / vs;

		f.vs = vs;
		return r;
	} else
		return 1.f;
}

/*
 * S of the item's tile j (key tile it.j0 + j) is in f.s: release K_j's
 * slot, the rules, softmax, and trace m, alpha and l.  The steps every
 * schedule takes between the S and the P V of a tile.
 */
template <int BR, int BC, int DT, bool TRACE, bool VARLEN, int D>
static __device__ __forceinline__ void
wgmma_score_tile(const struct wgmma_params &p, const struct wgmma_item &it,
    const struct wgmma_who &w, wgmma_frag<D, BC> &f, uint32_t empty_k,
    int j)
{
	const int kj = it.j0 + j;
	const int first = it.row0 + 64 * w.c;	/* this consumer's rows */
	float fac[2] = { 1.f, 1.f };

	if (w.lane == 0)
		wgmma_bar_arrive(empty_k);
	if constexpr (DT == FAST_FP8) {
		/* the scores' scales; a cap or ALiBi bends the scores
		 * themselves, so under one they are descaled first */
		const float ks = p.k_scale[(size_t)it.bh * p.tc + kj];

		fac[0] = f.fq[0] * ks;
		fac[1] = f.fq[1] * ks;
		if (p.rule.bends) {
#pragma unroll
			for (int x = 0; x < BC / 2; x++)
				f.s[x] *= fac[(x >> 1) & 1];
			fac[0] = fac[1] = 1.f;
		}
	}
	/* (VARLEN: keys past Tk_b are the next sequence's, which TMA read
	 * as it would any rows: hidden here as past Tk) */
	if (tc_rule_partial(p.rule, kj, BC, first, first + 63,
	    wgmma_tq<VARLEN>(p, it), wgmma_tk<VARLEN>(p, it)))
		wgmma_rules<BC, true>(f.s, p.rule, tc_rule_slope(p.rule,
		    it.bh % p.heads), kj * BC + 2 * w.t4, it.row0 + w.rb,
		    wgmma_tq<VARLEN>(p, it), wgmma_tk<VARLEN>(p, it));
	else if (p.rule.bends)
		wgmma_rules<BC, false>(f.s, p.rule, tc_rule_slope(p.rule,
		    it.bh % p.heads), kj * BC + 2 * w.t4, it.row0 + w.rb,
		    wgmma_tq<VARLEN>(p, it), wgmma_tk<VARLEN>(p, it));
	wgmma_softmax<BC, TRACE, DT == FAST_FP8>(f.s, f.m, f.l, f.al,
	    p.scale_log2, p.no_rescale, fac);
	if constexpr (TRACE)
		wgmma_trace_ml<BR>(p, f.m, f.al, f.l, it.bh, it.i, kj, w.rb,
		    it.row0, wgmma_tq<VARLEN>(p, it), w.lane);
}

/*
 * The consumer's main loop over one work item's nt tiles, overlapped
 * (SCHED 1 or 2): the next tile's S is issued before this softmax, and
 * P V runs under the next softmax (the header's pipeline).  SCHED 2
 * rescales O between the issues of S and P V (FA3's order, off the path
 * to the next turn), SCHED 1 once P V is done.  PINGPONG: the GEMMs are
 * issued in this warpgroup's turn (named barrier me), handed to next.
 */
template <int D, int BR, int BC, int STAGES, int QBUF, bool PINGPONG,
    int SCHED, int DT, bool TRACE, bool VARLEN>
static __device__ __forceinline__ void
wgmma_consumer_overlap(const struct wgmma_params &p,
    const wgmma_shared<D, BR, BC, STAGES, QBUF, wgmma_elem<DT>::bytes> &sm,
    const struct wgmma_item &it, const struct wgmma_who &w,
    wgmma_pipe<STAGES> kv, uint32_t qa, int me, int next,
    wgmma_frag<D, BC> &f)
{
	constexpr uint32_t TB = wgmma_shared<D, BR, BC, STAGES, QBUF, wgmma_elem<DT>::bytes>::TB;
	const int nt = it.nt;

	/* Tile 0: S alone. */
	WGMMA_REC_AT(fk0);
	wgmma_bar_wait(sm.bar(WGMMA_FULL_K, kv.at(0).stage()),
	    kv.at(0).phase());
	WGMMA_REC(w.rec, fk0, PIPELINE_WAIT_FULL_K, 0, kv.at(0).stage(),
	    kv.at(0).n / STAGES);
	if (PINGPONG) {
		WGMMA_REC_AT(tw0);
		wgmma_turn_wait(me);
		WGMMA_REC(w.rec, tw0, PIPELINE_WAIT_TURN, 0, -1, 0);
	}
	WGMMA_REC_AT(iq0);
	wgmma_qk<D, BR, BC, DT>(f.s, qa, sm.k + kv.at(0).stage() * TB);
	WGMMA_REC(w.rec, iq0, PIPELINE_ISSUE_QK, 0, kv.at(0).stage(),
	    kv.at(0).n / STAGES);
	if (PINGPONG) {
		wgmma_turn_pass(next);
		WGMMA_REC_NOW(w.rec, PIPELINE_PASS_TURN, 0, -1, 0);
	}
	WGMMA_REC_AT(wq0);
	wgmma_wait<0>();
	wgmma_hold(f.s);
	WGMMA_REC(w.rec, wq0, PIPELINE_WAIT_QK, 0, kv.at(0).stage(),
	    kv.at(0).n / STAGES);
	/* (the release is the first thing wgmma_score_tile does: stamped
	 * before it, never after) */
	WGMMA_REC_NOW(w.rec, PIPELINE_RELEASE_K, 0, kv.at(0).stage(),
	    kv.at(0).n / STAGES);
	WGMMA_REC_AT(sm0);
	wgmma_score_tile<BR, BC, DT, TRACE, VARLEN>(p, it, w, f,
	    sm.bar(WGMMA_EMPTY_K, kv.at(0).stage()), 0);
	WGMMA_REC(w.rec, sm0, PIPELINE_SOFTMAX, 0, kv.at(0).stage(),
	    kv.at(0).n / STAGES);
	wgmma_topack<BC, DT>(f.pa, f.s);

	for (int j = 1; j < nt; j++) {
		const int sk = kv.at(j).stage(), sv = kv.at(j - 1).stage();

		WGMMA_REC_AT(fk);
		wgmma_bar_wait(sm.bar(WGMMA_FULL_K, sk), kv.at(j).phase());
		WGMMA_REC(w.rec, fk, PIPELINE_WAIT_FULL_K, j, sk,
		    kv.at(j).n / STAGES);
		if (PINGPONG) {
			WGMMA_REC_AT(tw);
			wgmma_turn_wait(me);
			WGMMA_REC(w.rec, tw, PIPELINE_WAIT_TURN, j, -1, 0);
		}
		WGMMA_REC_AT(iq);
		wgmma_qk<D, BR, BC, DT>(f.s, qa, sm.k + sk * TB);
		WGMMA_REC(w.rec, iq, PIPELINE_ISSUE_QK, j, sk,
		    kv.at(j).n / STAGES);
		if constexpr (SCHED == 2) {	/* by alpha_{j-1} */
			WGMMA_REC_AT(rs);
			wgmma_rescale<D, TRACE>(f.o, f.al, p.no_rescale,
			    wgmma_vratio<DT>(p, it, f, it.j0 + j - 1));
			WGMMA_REC(w.rec, rs, PIPELINE_RESCALE, j - 1, sv,
			    kv.at(j - 1).n / STAGES);
		}
		WGMMA_REC_AT(fv);
		wgmma_bar_wait(sm.bar(WGMMA_FULL_V, sv), kv.at(j - 1).phase());
		WGMMA_REC(w.rec, fv, PIPELINE_WAIT_FULL_V, j - 1, sv,
		    kv.at(j - 1).n / STAGES);
		WGMMA_REC_AT(ip);
		wgmma_pv<D, BC, DT>(f.o, f.pa, sm.v + sv * TB);
		WGMMA_REC(w.rec, ip, PIPELINE_ISSUE_PV, j - 1, sv,
		    kv.at(j - 1).n / STAGES);
#if WGMMA_EARLY_RELEASE
		/* A recording build's planted fault: V's slot released when
		 * P V is issued, not done, so the producer refills it under
		 * the running wgmma (the dependency check must say so). */
		WGMMA_REC_NOW(w.rec, PIPELINE_RELEASE_V, j - 1, sv,
		    kv.at(j - 1).n / STAGES);
		if (w.lane == 0)
			wgmma_bar_arrive(sm.bar(WGMMA_EMPTY_V, sv));
#endif
		if (PINGPONG) {
			wgmma_turn_pass(next);
			WGMMA_REC_NOW(w.rec, PIPELINE_PASS_TURN, j, -1, 0);
		}

		WGMMA_REC_AT(wq);
		wgmma_wait<1>();	/* S_j is here, P V may run */
		wgmma_hold(f.s);
		WGMMA_REC(w.rec, wq, PIPELINE_WAIT_QK, j, sk,
		    kv.at(j).n / STAGES);
		WGMMA_REC_NOW(w.rec, PIPELINE_RELEASE_K, j, sk,
		    kv.at(j).n / STAGES);
		WGMMA_REC_AT(sx);
		wgmma_score_tile<BR, BC, DT, TRACE, VARLEN>(p, it, w, f,
		    sm.bar(WGMMA_EMPTY_K, sk), j);
		WGMMA_REC(w.rec, sx, PIPELINE_SOFTMAX, j, sk,
		    kv.at(j).n / STAGES);

		WGMMA_REC_AT(wp);
		wgmma_wait<0>();	/* P_{j-1} V_{j-1} is in O */
		wgmma_hold(f.o);
		wgmma_hold(f.s);	/* and P_j is packed only now */
		WGMMA_REC(w.rec, wp, PIPELINE_WAIT_PV, j - 1, sv,
		    kv.at(j - 1).n / STAGES);
#if !WGMMA_EARLY_RELEASE
		WGMMA_REC_NOW(w.rec, PIPELINE_RELEASE_V, j - 1, sv,
		    kv.at(j - 1).n / STAGES);
		if (w.lane == 0)
			wgmma_bar_arrive(sm.bar(WGMMA_EMPTY_V, sv));
#endif
		if constexpr (TRACE)
			wgmma_trace_acc<D, BR>(p, f.o, f.vs, it.bh, it.i,
			    it.j0 + j - 1, w.rb, it.row0,
			    wgmma_tq<VARLEN>(p, it), w.lane);
		if constexpr (SCHED == 1)	/* by alpha_j */
			wgmma_rescale<D, TRACE>(f.o, f.al, p.no_rescale,
			    wgmma_vratio<DT>(p, it, f, it.j0 + j));
		wgmma_topack<BC, DT>(f.pa, f.s);
	}

	/* The last P V alone. */
	const int sv = kv.at(nt - 1).stage();
	const int rv = kv.at(nt - 1).n / STAGES;
	(void)rv;	/* the recording's, as the stamps below */
	WGMMA_REC_AT(fvl);
	wgmma_bar_wait(sm.bar(WGMMA_FULL_V, sv), kv.at(nt - 1).phase());
	WGMMA_REC(w.rec, fvl, PIPELINE_WAIT_FULL_V, nt - 1, sv, rv);
	if (PINGPONG) {
		WGMMA_REC_AT(twl);
		wgmma_turn_wait(me);
		WGMMA_REC(w.rec, twl, PIPELINE_WAIT_TURN, nt, -1, 0);
	}
	if constexpr (SCHED == 2) {
		WGMMA_REC_AT(rsl);
		wgmma_rescale<D, TRACE>(f.o, f.al, p.no_rescale,
		    wgmma_vratio<DT>(p, it, f, it.j0 + nt - 1));
		WGMMA_REC(w.rec, rsl, PIPELINE_RESCALE, nt - 1, sv, rv);
	}
	WGMMA_REC_AT(ipl);
	wgmma_pv<D, BC, DT>(f.o, f.pa, sm.v + sv * TB);
	WGMMA_REC(w.rec, ipl, PIPELINE_ISSUE_PV, nt - 1, sv, rv);
	if (PINGPONG) {
		wgmma_turn_pass(next);
		WGMMA_REC_NOW(w.rec, PIPELINE_PASS_TURN, nt, -1, 0);
	}
	WGMMA_REC_AT(wpl);
	wgmma_wait<0>();
	wgmma_hold(f.o);
	WGMMA_REC(w.rec, wpl, PIPELINE_WAIT_PV, nt - 1, sv, rv);
	WGMMA_REC_NOW(w.rec, PIPELINE_RELEASE_V, nt - 1, sv, rv);
	if (w.lane == 0)
		wgmma_bar_arrive(sm.bar(WGMMA_EMPTY_V, sv));
	if constexpr (TRACE)
		wgmma_trace_acc<D, BR>(p, f.o, f.vs, it.bh, it.i,
		    it.j0 + nt - 1, w.rb, it.row0, wgmma_tq<VARLEN>(p, it),
		    w.lane);
}

/* The consumer's main loop without overlap (SCHED 0): S, softmax, P V,
 * one after the other, tile after tile. */
template <int D, int BR, int BC, int STAGES, int QBUF, int DT, bool TRACE,
    bool VARLEN>
static __device__ __forceinline__ void
wgmma_consumer_plain(const struct wgmma_params &p,
    const wgmma_shared<D, BR, BC, STAGES, QBUF, wgmma_elem<DT>::bytes> &sm,
    const struct wgmma_item &it, const struct wgmma_who &w,
    wgmma_pipe<STAGES> kv, uint32_t qa, wgmma_frag<D, BC> &f)
{
	constexpr uint32_t TB = wgmma_shared<D, BR, BC, STAGES, QBUF, wgmma_elem<DT>::bytes>::TB;

	for (int j = 0; j < it.nt; j++) {
		const int st = kv.at(j).stage();
		const uint32_t ph = kv.at(j).phase();

		wgmma_bar_wait(sm.bar(WGMMA_FULL_K, st), ph);
		wgmma_qk<D, BR, BC, DT>(f.s, qa, sm.k + st * TB);
		wgmma_wait<0>();
		wgmma_hold(f.s);
		wgmma_score_tile<BR, BC, DT, TRACE, VARLEN>(p, it, w, f,
		    sm.bar(WGMMA_EMPTY_K, st), j);
		wgmma_rescale<D, TRACE>(f.o, f.al, p.no_rescale,
		    wgmma_vratio<DT>(p, it, f, it.j0 + j));
		wgmma_topack<BC, DT>(f.pa, f.s);

		wgmma_bar_wait(sm.bar(WGMMA_FULL_V, st), ph);
		wgmma_pv<D, BC, DT>(f.o, f.pa, sm.v + st * TB);
		wgmma_wait<0>();
		wgmma_hold(f.o);
		if (w.lane == 0)
			wgmma_bar_arrive(sm.bar(WGMMA_EMPTY_V, st));
		if constexpr (TRACE)
			wgmma_trace_acc<D, BR>(p, f.o, f.vs, it.bh, it.i,
			    it.j0 + j, w.rb, it.row0,
			    wgmma_tq<VARLEN>(p, it), w.lane);
	}
}

/* Rows of a work item that see no key: O = 0, lse = -inf. */
template <int D, bool VARLEN>
static __device__ __forceinline__ void
wgmma_epilogue_empty(const struct wgmma_params &p,
    const struct wgmma_item &it, const struct wgmma_who &w, size_t orow)
{
	constexpr int CPR = D / 8;		/* 16-byte chunks a row */

	for (int x0 = 0; x0 < 16 * CPR / 32; x0++) {
		const int x = x0 * 32 + w.lane;
		const int r = 64 * w.c + 16 * w.ww + x / CPR;
		if (it.row0 + r < wgmma_tq<VARLEN>(p, it))
			*(uint4 *)(p.o + (orow + r) * D + (x % CPR) * 8) =
			    make_uint4(0, 0, 0, 0);
	}
	for (int h = 0; h < 2; h++)
		if (w.t4 == 0 && it.row0 + w.rb + 8 * h <
		    wgmma_tq<VARLEN>(p, it))
			p.lse[orow + w.rb + 8 * h] = -INFINITY;
}

/*
 * The epilogue of one work item: lse = m scale + log l, and O / l
 * rounded to 16 bits through this warp's own rows of Q's tile gq (its
 * reads of them are complete: its last wgmma was waited for) out to
 * global memory in coalesced 16-byte stores; then Q's slot goes back to
 * the producer (empty_q).
 */
template <int D, int BR, int BC, int DT, bool VARLEN>
static __device__ __forceinline__ void
wgmma_epilogue(const struct wgmma_params &p, const struct wgmma_item &it,
    const struct wgmma_who &w, size_t orow, uint8_t *gq, uint32_t empty_q,
    wgmma_frag<D, BC> &f)
{
	constexpr int CPR = D / 8;		/* 16-byte chunks a row */
	float inv[2];

#pragma unroll
	for (int h = 0; h < 2; h++) {
		float lt = f.l[h];
		lt += __shfl_xor_sync(0xffffffffu, lt, 1);
		lt += __shfl_xor_sync(0xffffffffu, lt, 2);
		/* (FP8: O is in units of the last V tile's scale) */
		inv[h] = lt > 0.f ? (DT == FAST_FP8 ? f.vs : 1.f) / lt : 0.f;
		const int r = w.rb + 8 * h;
		if (w.t4 == 0 && it.row0 + r < wgmma_tq<VARLEN>(p, it))
			p.lse[orow + r] = lt > 0.f ?
			    f.m[h] * p.scale + logf(lt) : -INFINITY;
	}
#pragma unroll
	for (int db = 0; db < D / 8; db++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int r = w.rb + 8 * h;	/* r & 7 == g */
			*(uint32_t *)(gq + (db / 8) * BR * 128 + r * 128 +
			    (((db % 8) ^ w.g) << 4) + 4 * w.t4) =
			    fast_pack<DT == FAST_BF16>(f.o[4 * db + 2 * h] *
			    inv[h], f.o[4 * db + 2 * h + 1] * inv[h]);
		}
	__syncwarp();
#pragma unroll
	for (int x0 = 0; x0 < 16 * CPR / 32; x0++) {
		const int x = x0 * 32 + w.lane;
		const int r = 64 * w.c + 16 * w.ww + x / CPR, ch = x % CPR;
		/* Rows from Tq (VARLEN: Tq_b) on are another row block's or
		 * another sequence's, written by another block: never
		 * stored (the row is this item's only below it). */
		if (it.row0 + r < wgmma_tq<VARLEN>(p, it))
			*(uint4 *)(p.o + (orow + r) * D + ch * 8) =
			    *(const uint4 *)(gq + (ch / 8) * BR * 128 +
			    r * 128 + (((ch % 8) ^ (r & 7)) << 4));
	}
	/* The slot goes back to the producer, whose next TMA (the async
	 * proxy) writes where these plain stores were. */
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	__syncwarp();
	if (w.lane == 0)
		wgmma_bar_arrive(empty_q);
}

/*
 * The kernel.  A block takes work items t = blockIdx.x, + gridDim.x, ...:
 * with one block per item (the default grid) that is one row block, as
 * in fast.cu; with one block per multiprocessor (a persistent build) the
 * producer loads the next item's Q (QBUF = 2 slots) and first K, V tiles
 * while the consumers still work on this one.  D head width, BC keys a
 * tile, STAGES slots in the ring, NWG consumer warpgroups (Br = 64 NWG),
 * PINGPONG: consumers take turns at the tensor core, SCHED: 0
 * wgmma_consumer_plain, 1 and 2 wgmma_consumer_overlap.  TRACE: write
 * the trace.  VARLEN: a packed batch (wgmma_tile); false is the dense
 * kernel, whose code these changes leave as it was.
 */
template <int D, int BC, int STAGES, int NWG, bool PINGPONG, int SCHED,
    int QBUF, int DT, bool TRACE, bool VARLEN>
__global__ void __launch_bounds__((NWG + 1) * 128, 1)
wgmma_fwd_kernel(const __grid_constant__ CUtensorMap tm_q,
    const __grid_constant__ CUtensorMap tm_k,
    const __grid_constant__ CUtensorMap tm_v, const struct wgmma_params p)
{
	constexpr int BR = 64 * NWG;
	static_assert(D == 64 || D == 128, "d is 64 or 128");
	static_assert(BC == 64 || BC == 128, "Bc is 64 or 128");
	static_assert(!PINGPONG || SCHED > 0, "ping-pong needs the overlap");
	static_assert(NWG >= 2 || !PINGPONG, "ping-pong needs two consumers");
	static_assert(QBUF == 1 || QBUF == 2, "one or two Q slots");
	static_assert(DT != FAST_FP8 || (D == 128 && BC == 128 && !VARLEN),
	    "FP8 is built for d = 128, Bc = 128, dense batches");

	extern __shared__ __align__(1024) uint8_t wgmma_smem[];
	const uint32_t raw = wgmma_smem_addr(wgmma_smem);
	wgmma_shared<D, BR, BC, STAGES, QBUF, wgmma_elem<DT>::bytes> sm;
	sm.q = (raw + 1023) & ~1023u;
	sm.gq = wgmma_smem + (sm.q - raw);
	sm.k = sm.q + QBUF * sm.QB;
	sm.v = sm.k + STAGES * sm.TB;
	sm.bars = sm.v + STAGES * sm.TB;

	const int tid = threadIdx.x, wg = tid / 128;

	if (tid == 0) {
		for (int s = 0; s < QBUF; s++) {
			wgmma_bar_init(sm.bar(WGMMA_FULL_Q, s), 1);
			wgmma_bar_init(sm.bar(WGMMA_EMPTY_Q, s), 4 * NWG);
		}
		for (int s = 0; s < STAGES; s++) {
			wgmma_bar_init(sm.bar(WGMMA_FULL_K, s), 1);
			wgmma_bar_init(sm.bar(WGMMA_FULL_V, s), 1);
			wgmma_bar_init(sm.bar(WGMMA_EMPTY_K, s), 4 * NWG);
			wgmma_bar_init(sm.bar(WGMMA_EMPTY_V, s), 4 * NWG);
		}
		/* Make the initialised barriers visible to the TMA unit. */
		asm volatile("fence.mbarrier_init.release.cluster;\n"
		    ::: "memory");
		asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	}
	__syncthreads();

	if (wg == 0) {
		wgmma_regs_dec<wgmma_regs<NWG>::producer>();
		if (tid == 0)
			wgmma_producer<D, BR, BC, STAGES, QBUF, DT, VARLEN>(p,
			    &tm_q, &tm_k, &tm_v, sm);
		return;
	}

	/* A consumer: 64 rows of each work item, every tile. */
	wgmma_regs_inc<wgmma_regs<NWG>::consumer>();
	const int c = wg - 1;
	const int lane = tid & 31, ww = (tid >> 5) & 3;
	const int g = lane >> 2, t4 = lane & 3;
	const struct wgmma_who w = { c, lane, ww, g, t4, 64 * c + 16 * ww + g
	    WGMMA_REC_WHO(p, tid % 128 == 0 ? 1 + c : -1, 1 + NWG) };
	const int me = WGMMA_TURN + c, next = WGMMA_TURN + (c + 1) % NWG;
	wgmma_frag<D, BC> f;
	wgmma_pipe<QBUF> qp = { 0 };
	wgmma_pipe<STAGES> kv = { 0 };

	if (PINGPONG && c == NWG - 1) {
		wgmma_turn_pass(WGMMA_TURN);	/* consumer 0 goes first */
		WGMMA_REC_NOW(w.rec, PIPELINE_PASS_TURN, -1, -1, 0);
	}
	for (int t = blockIdx.x; t < p.ntiles; t += gridDim.x) {
		const struct wgmma_item it = wgmma_tile<BR, BC, VARLEN>(p, t);
		const size_t orow = (size_t)wgmma_hc<VARLEN>(it) * p.tq +
		    wgmma_q0<VARLEN>(it) + it.row0;

		if (it.nt == 0) {
			wgmma_epilogue_empty<D, VARLEN>(p, it, w, orow);
			continue;
		}
		const int qs = qp.stage();
		const uint32_t qa = sm.q + qs * sm.QB + 64 * c * 128;  /* its rows */
		uint8_t *const gq = sm.gq + qs * sm.QB;

#pragma unroll
		for (int x = 0; x < D / 2; x++)
			f.o[x] = 0.f;
		f.m[0] = f.m[1] = -INFINITY;
		f.l[0] = f.l[1] = 0.f;
		if constexpr (DT == FAST_FP8) {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int r = it.row0 + w.rb + 8 * h;

				f.fq[h] = r < p.tq ? p.q_scale[(size_t)it.bh *
				    p.tq + r] : 1.f;
			}
			f.vs = p.v_scale[(size_t)it.bh * p.tc + it.j0];
		} else
			f.vs = 1.f;	/* (the trace's unit: values) */
		WGMMA_REC_AT(fq);
		wgmma_bar_wait(sm.bar(WGMMA_FULL_Q, qs), qp.phase());
		WGMMA_REC(w.rec, fq, PIPELINE_WAIT_FULL_Q, -1, qs, qp.n / QBUF);
		if constexpr (SCHED > 0)
			wgmma_consumer_overlap<D, BR, BC, STAGES, QBUF, PINGPONG,
			    SCHED, DT, TRACE, VARLEN>(p, sm, it, w, kv, qa, me,
			    next, f);
		else
			wgmma_consumer_plain<D, BR, BC, STAGES, QBUF, DT,
			    TRACE, VARLEN>(p, sm, it, w, kv, qa, f);
		kv.advance(it.nt);
		WGMMA_REC_AT(ep);
		wgmma_epilogue<D, BR, BC, DT, VARLEN>(p, it, w, orow, gq,
		    sm.bar(WGMMA_EMPTY_Q, qs), f);
		WGMMA_REC(w.rec, ep, PIPELINE_EPILOGUE, -1, qs, qp.n / QBUF);
		WGMMA_REC_NOW(w.rec, PIPELINE_RELEASE_Q, -1, qs, qp.n / QBUF);
		qp.advance();
	}
	if (PINGPONG && c == 0) {
		WGMMA_REC_AT(twb);
		wgmma_turn_wait(me);	/* take back the last pass */
		WGMMA_REC(w.rec, twb, PIPELINE_WAIT_TURN, -1, -1, 0);
	}
}

/* ---------------------------------------------------------------------
 * Host side: tensor maps, the variant table, the entry points.
 */

/*
 * cuTensorMapEncodeTiled is a driver function; the runtime hands out its
 * address, so nothing links -lcuda.  Looked up once.
 */
static PFN_cuTensorMapEncodeTiled_v12000 wgmma_encode_fn;

static int
wgmma_encoder(char *err, size_t errlen)
{
	cudaDriverEntryPointQueryResult qr;
	void *fn = NULL;

	if (wgmma_encode_fn != NULL)
		return 0;
	CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled",
	    &fn, 12000, cudaEnableDefault, &qr));
	if (qr != cudaDriverEntryPointSuccess || fn == NULL) {
		snprintf(err, errlen, "wgmma: the driver has no "
		    "cuTensorMapEncodeTiled (query result %d)", (int)qr);
		return -1;
	}
	wgmma_encode_fn = (PFN_cuTensorMapEncodeTiled_v12000)fn;
	return 0;
fail:
	return -1;
}

/*
 * The map of one (B H, rows, cols) tensor of dtype (enum fast_dtype;
 * FP8's codes as bytes) in boxes of (box_rows, 128 bytes): three
 * dimensions, innermost first, so that a box never crosses from one head
 * into the next (rows past `rows` read as zeros).  cols is d, or for
 * FP8's V^T the padded keys.
 */
static int
wgmma_tensor_map(CUtensorMap *map, const void *ptr, int dtype, int bh,
    int rows, int cols, int box_rows, char *err, size_t errlen)
{
	const int es = dtype == FAST_FP8 ? 1 : 2;
	const cuuint64_t dims[3] = { (cuuint64_t)cols, (cuuint64_t)rows,
	    (cuuint64_t)bh };
	const cuuint64_t strides[2] = { (cuuint64_t)cols * es,
	    (cuuint64_t)rows * cols * es };
	const cuuint32_t box[3] = { (cuuint32_t)(128 / es),
	    (cuuint32_t)box_rows, 1 };
	const cuuint32_t one[3] = { 1, 1, 1 };
	CUresult r;

	r = wgmma_encode_fn(map, dtype == FAST_FP8 ?
	    CU_TENSOR_MAP_DATA_TYPE_UINT8 : dtype == FAST_BF16 ?
	    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
	    3, (void *)ptr, dims, strides, box, one,
	    CU_TENSOR_MAP_INTERLEAVE_NONE,
	    CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
	    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS) {
		snprintf(err, errlen, "cuTensorMapEncodeTiled failed at %s:%d: "
		    "CUresult %d", __FILE__, __LINE__, (int)r);
		return -1;
	}
	return 0;
}

typedef cudaError_t (*wgmma_launcher)(const CUtensorMap *, const CUtensorMap *,
    const CUtensorMap *, const struct wgmma_params *, int, cudaStream_t,
    const char **);

/* grid blocks, each taking work items blockIdx.x, + grid, ... */
template <int D, int BC, int STAGES, int NWG, bool PP, int OV, int QBUF,
    int DT, bool TRACE, bool VARLEN>
static cudaError_t
wgmma_launch(const CUtensorMap *q, const CUtensorMap *k, const CUtensorMap *v,
    const struct wgmma_params *p, int grid, cudaStream_t stream,
    const char **call)
{
	void (*kern)(const CUtensorMap, const CUtensorMap, const CUtensorMap,
	    const struct wgmma_params) =
	    wgmma_fwd_kernel<D, BC, STAGES, NWG, PP, OV, QBUF, DT, TRACE,
	    VARLEN>;
	const int smem = wgmma_smem_bytes(D, 64 * NWG, BC, STAGES, QBUF,
	    wgmma_elem<DT>::bytes);
	cudaError_t e;

	*call = "cudaFuncSetAttribute";
	e = cudaFuncSetAttribute(kern,
	    cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
	if (e != cudaSuccess)
		return e;
	*call = "wgmma_fwd_kernel launch";
	kern<<<grid, (NWG + 1) * 128, smem, stream>>>(*q, *k, *v, *p);
	return cudaGetLastError();
}

struct wgmma_variant {
	struct wgmma_config cfg;
	wgmma_launcher launch[2][2][2];	/* [varlen][traced][fp16, bf16] */
	wgmma_launcher fp8[2];		/* [traced]: d = 128 only, or NULL */
};

/* The FP8 build of a variant, where there is one (wgmma_fwd_kernel's
 * static_assert says which). */
template <int D, int BC, int ST, int NWG, bool PP, int OV, int QBUF,
    bool TRACE>
static constexpr wgmma_launcher
wgmma_fp8_launcher(void)
{
	if constexpr (D == 128 && BC == 128)
		return wgmma_launch<D, BC, ST, NWG, PP, OV, QBUF, FAST_FP8,
		    TRACE, false>;
	else
		return nullptr;
}

#define WGMMA_LAUNCHERS(D, BC, ST, NWG, PP, OV, PE, VL) {		\
	{ wgmma_launch<D, BC, ST, NWG, PP, OV, 1 + PE, FAST_FP16, false, VL>, \
	  wgmma_launch<D, BC, ST, NWG, PP, OV, 1 + PE, FAST_BF16, false, VL> }, \
	{ wgmma_launch<D, BC, ST, NWG, PP, OV, 1 + PE, FAST_FP16, true, VL>, \
	  wgmma_launch<D, BC, ST, NWG, PP, OV, 1 + PE, FAST_BF16, true, VL> } }
#define WGMMA_VARIANT(D, BC, ST, NWG, PP, OV, PE) {			\
	{ D, 64 * NWG, BC, ST, NWG, PP, OV, PE }, {			\
	WGMMA_LAUNCHERS(D, BC, ST, NWG, PP, OV, PE, false),		\
	WGMMA_LAUNCHERS(D, BC, ST, NWG, PP, OV, PE, true) }, {		\
	wgmma_fp8_launcher<D, BC, ST, NWG, PP, OV, 1 + PE, false>(),	\
	wgmma_fp8_launcher<D, BC, ST, NWG, PP, OV, 1 + PE, true>() } }

/*
 * The variants a user can pick, per d the default first: tcrun.cu runs a
 * Br x Bc as the first variant with those tiles, so only one variant a
 * tiling can ever run.  At d = 64 three consumers (Br = 192) by default:
 * the exp costs as much as the products there, so a third softmax has
 * to hide; two (Br = 128) are the other tiling.  At d = 128 two consumers
 * in ping-pong, FA3's rescale order: the fastest measured on the H200
 * (doc/performance.md).  The schedules measured against them (the plain
 * loop, the other rescale order, the persistent grid) are
 * dev/cuda/wgmma/, which builds this file with its own WGMMA_VARIANTS.
 */
#ifndef WGMMA_VARIANTS
#define WGMMA_VARIANTS							\
	WGMMA_VARIANT(64, 128, 4, 3, true, 2, 0),	/* Br = 192 */	\
	WGMMA_VARIANT(64, 128, 4, 2, true, 2, 0),			\
	WGMMA_VARIANT(128, 128, 2, 2, true, 2, 0),			\
	/* the defaults' persistent twins, which a window's band runs */\
	WGMMA_VARIANT(64, 128, 4, 3, true, 2, 1),			\
	WGMMA_VARIANT(128, 128, 2, 2, true, 2, 1),
#endif
static const struct wgmma_variant wgmma_variants[] = { WGMMA_VARIANTS };
#define WGMMA_NVARIANTS \
	((int)(sizeof wgmma_variants / sizeof wgmma_variants[0]))

/* The default for each d: the i-th variant of that d. */
#define WGMMA_DEFAULT_D64 0
#define WGMMA_DEFAULT_D128 0

static const struct wgmma_variant *
wgmma_find(int d, int i)
{
	int n = 0;

	if (i < 0)
		i = d == 64 ? WGMMA_DEFAULT_D64 : WGMMA_DEFAULT_D128;
	for (int x = 0; x < WGMMA_NVARIANTS; x++) {
		if (wgmma_variants[x].cfg.d != d)
			continue;
		if (n++ == i)
			return &wgmma_variants[x];
	}
	return NULL;
}

/* The recording build has its own entry point (below) and none of these:
 * the timed kernels' entry points are the timed build's alone. */
#ifndef WGMMA_RECORD

/*
 * The variant a call runs: variant i of d (wgmma_find), except that the
 * default (i < 0) under a window with a left edge runs its persistent
 * twin where there is one (the same tiles and schedule, one block a
 * multiprocessor, the next item's Q and first K and V loaded while this
 * one ends): a band's items are a few tiles each, all about as long, so
 * a block's start and epilogue, paid once an item, are what the
 * persistent grid hides.
 */
static const struct wgmma_variant *
wgmma_pick(int d, int i, const struct tc_mask *mask)
{
	const struct wgmma_variant *v = wgmma_find(d, i);

	if (v == NULL || i >= 0 || mask == NULL || mask->left < 0 ||
	    v->cfg.persistent)
		return v;
	for (int x = 0; x < WGMMA_NVARIANTS; x++) {
		const struct wgmma_config *c = &wgmma_variants[x].cfg;

		if (c->persistent && c->d == d && c->br == v->cfg.br &&
		    c->bc == v->cfg.bc && c->stages == v->cfg.stages &&
		    c->pingpong == v->cfg.pingpong &&
		    c->overlap == v->cfg.overlap)
			return &wgmma_variants[x];
	}
	return v;
}

extern "C" int
wgmma_attention_variant(int d, int i, struct wgmma_config *out)
{
	const struct wgmma_variant *v = wgmma_find(d, i);

	if (v == NULL)
		return -1;
	*out = v->cfg;
	return 0;
}

extern "C" int
wgmma_attention_fwd(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int tq, int tk, int d, int dtype,
    int causal, float scale, void *stream, char *err, size_t errlen)
{
	return wgmma_attention_trace(q, k, v, o, lse, batch, heads, tq, tk, d,
	    dtype, causal, scale, -1, NULL, stream, err, errlen);
}

extern "C" int
wgmma_attention_fwd_variant(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    int dtype, int causal, float scale, int variant, void *stream,
    char *err, size_t errlen)
{
	return wgmma_attention_trace(q, k, v, o, lse, batch, heads, tq, tk, d,
	    dtype, causal, scale, variant, NULL, stream, err, errlen);
}

extern "C" int
wgmma_attention_trace(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int tq, int tk, int d, int dtype,
    int causal, float scale, int variant, const struct fast_trace *tr,
    void *stream, char *err, size_t errlen)
{
	const struct tc_mask mask = tc_mask_causal(causal);

	return wgmma_attention_masked(q, k, v, o, lse, batch, heads, tq, tk,
	    d, dtype, &mask, scale, variant, tr, stream, err, errlen);
}

/* FP8's scales on the device (wgmma_params says how they are laid). */
struct wgmma_fp8_scales {
	const float *q, *k, *v;
};

/*
 * One launch: the dense call (cu_q = NULL: batch * heads heads of Tq x
 * Tk) or a packed batch (cu_q, cu_k on the device: nseq sequences of
 * heads heads, tq and tk the totals, max_tq and max_tk the longest).
 * f8 non-NULL: FP8 codes (dtype FAST_FP8, dense), v is V^T laid out by
 * wgmma_fp8_v_layout.
 */
static int
wgmma_run(const void *q, const void *k, const void *v, void *o, float *lse,
    int batch, int heads, int tq, int tk, const int *cu_q, const int *cu_k,
    int max_tq, int max_tk, int d, int dtype, const struct tc_mask *mask,
    float scale, int variant, const struct fast_trace *tr,
    const struct wgmma_fp8_scales *f8, void *stream, char *err,
    size_t errlen)
{
	const struct wgmma_variant *wv;
	struct wgmma_params p;
	CUtensorMap mq, mk, mv;
	const char *call = "";
	const int varlen = cu_q != NULL;
	cudaError_t e;
	int bh, grid, dev, sms, maps;
	wgmma_launcher launch;

	memset(&p, 0, sizeof p);
	/* (FP8's dtype is its entry's, which checked it) */
	if (tc_args_check("wgmma_attention_fwd", q, k, v, o, lse, batch,
	    heads, tq, tk, f8 != NULL ? FAST_FP16 : dtype, 16,
	    "TMA and 16-byte stores", err, errlen) != 0)
		return -1;
	if ((wv = wgmma_pick(d, variant, mask)) == NULL)
		return tc_args_no_variant("wgmma_attention_fwd", variant, d, err,
		    errlen);
	launch = f8 != NULL ? wv->fp8[tr != NULL] :
	    wv->launch[varlen][tr != NULL][dtype];
	if (launch == NULL) {
		snprintf(err, errlen, "wgmma_attention_fp8: variant %d (Br = %d,"
		    " Bc = %d, d = %d) has no FP8 build (d = 128 alone)",
		    variant, wv->cfg.br, wv->cfg.bc, d);
		return -1;
	}
	if (tc_args_trace("wgmma_attention_trace", tr, err, errlen) != 0)
		return -1;
	if (tc_rule_make("wgmma_attention_fwd", mask, tc_args_scale(scale, d),
	    &p.rule, &p.scale, err, errlen) != 0)
		return -1;

	/* A packed batch's maps are (d, sum T_b, H): one head holds every
	 * sequence, end to end. */
	bh = batch * heads;
	maps = varlen ? heads : bh;
	if (wgmma_encoder(err, errlen) != 0 ||
	    wgmma_tensor_map(&mq, q, dtype, maps, tq, d, wv->cfg.br, err,
	    errlen) != 0 ||
	    wgmma_tensor_map(&mk, k, dtype, maps, tk, d, wv->cfg.bc, err,
	    errlen) != 0)
		return -1;
	/* FP8's V^T: (B H, d, the keys padded), a box d rows of 128 keys */
	if (f8 != NULL ? wgmma_tensor_map(&mv, v, dtype, maps, d,
	    WGMMA_FP8_KEYS(tk), d, err, errlen) != 0 :
	    wgmma_tensor_map(&mv, v, dtype, maps, tk, d, wv->cfg.bc, err,
	    errlen) != 0)
		return -1;
	if (f8 != NULL) {
		p.q_scale = f8->q;
		p.k_scale = f8->k;
		p.v_scale = f8->v;
	}

	p.o = (uint16_t *)o;
	p.lse = lse;
	p.tq = tq;
	p.tk = tk;
	p.heads = heads;
	p.cu_q = cu_q;
	p.cu_k = cu_k;
	p.scale_log2 = p.scale * 1.4426950408889634f;
	p.tr_m = tr != NULL ? tr->m : NULL;
	p.tr_alpha = tr != NULL ? tr->alpha : NULL;
	p.tr_l = tr != NULL ? tr->l : NULL;
	p.tr_acc = tr != NULL ? tr->acc : NULL;
	p.tc = ((varlen ? max_tk : tk) + wv->cfg.bc - 1) / wv->cfg.bc;
	p.tr = ((varlen ? max_tq : tq) + wv->cfg.br - 1) / wv->cfg.br;
	p.no_rescale = tr != NULL && tr->no_rescale;
	if ((long)p.tr * bh > 0x7fffffffL) {
		snprintf(err, errlen, "wgmma_attention_fwd: %ld row blocks "
		    "are too many for one grid", (long)p.tr * bh);
		return -1;
	}
	p.ntiles = p.tr * bh;

	/* One block per work item; a persistent variant, one block per
	 * multiprocessor (not under a mask without a left edge, causal's,
	 * whose items differ in length: there the hardware's dynamic
	 * scheduling balances better). */
	grid = p.ntiles;
	if (wv->cfg.persistent && (!p.rule.m.window || p.rule.m.left >= 0)) {
		CUDA_CHECK(cudaGetDevice(&dev));
		CUDA_CHECK(cudaDeviceGetAttribute(&sms,
		    cudaDevAttrMultiProcessorCount, dev));
		grid = p.ntiles < sms ? p.ntiles : sms;
	}
	e = launch(&mq, &mk, &mv, &p, grid, (cudaStream_t)stream, &call);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "%s failed at %s:%d: %s", call, __FILE__,
		    __LINE__, cudaGetErrorString(e));
		return -1;
	}
	return 0;
fail:
	return -1;
}

extern "C" int
wgmma_attention_masked(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    int dtype, const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen)
{
	return wgmma_run(q, k, v, o, lse, batch, heads, tq, tk, NULL, NULL, 0,
	    0, d, dtype, mask, scale, variant, tr, NULL, stream, err, errlen);
}

extern "C" int
wgmma_attention_varlen(const void *q, const void *k, const void *v,
    void *o, float *lse, int nseq, int heads, const int *cu_q,
    const int *cu_k, int total_q, int total_k, int max_tq, int max_tk,
    int d, int dtype, const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen)
{
	if (cu_q == NULL || cu_k == NULL) {
		snprintf(err, errlen, "wgmma_attention_varlen: cu_seqlens_q "
		    "and cu_seqlens_k must both be given");
		return -1;
	}
	if (max_tq < 1 || max_tk < 1 || max_tq > total_q || max_tk > total_k) {
		snprintf(err, errlen, "wgmma_attention_varlen: the longest "
		    "sequence (%d queries, %d keys) must be from 1 to the totals "
		    "(%d, %d)", max_tq, max_tk, total_q, total_k);
		return -1;
	}
	return wgmma_run(q, k, v, o, lse, nseq, heads, total_q, total_k, cu_q,
	    cu_k, max_tq, max_tk, d, dtype, mask, scale, variant, tr, NULL,
	    stream, err, errlen);
}

/*
 * FP8's V in the kernel's layout: V^T, one row of padded keys a column
 * of V, the keys of each 32 in wgmma_fp8_key_at's order and zeros past Tk.
 * A block moves 64 keys x 64 columns through shared memory, so both the
 * reads (rows of V) and the writes (rows of V^T) are coalesced 4-byte
 * words.
 */
__global__ void
wgmma_fp8_v_kernel(const uint8_t *v, uint8_t *vt, int tk, int d)
{
	__shared__ uint8_t t[64][64 + 4];
	const int tkp = WGMMA_FP8_KEYS(tk);
	const size_t bh = blockIdx.z;
	const int k0 = blockIdx.x * 64, c0 = blockIdx.y * 64;

	for (int x = threadIdx.x; x < 64 * 16; x += blockDim.x) {
		const int r = x / 16, w = x % 16;	/* key, word */
		uint32_t u = 0;

		if (k0 + r < tk)
			u = *(const uint32_t *)(v + (bh * tk + k0 + r) * d +
			    c0 + 4 * w);
		memcpy(&t[r][4 * w], &u, 4);
	}
	__syncthreads();
	for (int x = threadIdx.x; x < 64 * 16; x += blockDim.x) {
		const int c = x / 16, w = x % 16;	/* column, word */
		uint8_t b[4];

		/* position 4 w + i of the row holds key wgmma_fp8_key_at's */
		for (int i = 0; i < 4; i++)
			b[i] = t[wgmma_fp8_key_at(4 * w + i)][c];
		memcpy(vt + (bh * d + c0 + c) * tkp + k0 + 4 * w, b, 4);
	}
}

extern "C" size_t
wgmma_fp8_vt_bytes(int bh, int tk, int d)
{
	return (size_t)bh * d * WGMMA_FP8_KEYS(tk);
}

extern "C" int
wgmma_fp8_v_layout(const void *v, void *vt, int bh, int tk, int d,
    void *stream, char *err, size_t errlen)
{
	const dim3 grid((unsigned)(WGMMA_FP8_KEYS(tk) / 64), (unsigned)(d / 64),
	    (unsigned)bh);

	if (v == NULL || vt == NULL || bh < 1 || bh > 65535 || tk < 1 ||
	    d != 128 || ((uintptr_t)v | (uintptr_t)vt) % 16 != 0) {
		snprintf(err, errlen, "wgmma_fp8_v_layout: V and V^T must be "
		    "16-byte aligned, B H in 1..65535, Tk >= 1, d = 128");
		return -1;
	}
	wgmma_fp8_v_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>(
	    (const uint8_t *)v, (uint8_t *)vt, tk, d);
	CUDA_CHECK(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int
wgmma_attention_fp8(const void *q, const void *k, const void *vt,
    const float *q_scale, const float *k_scale, const float *v_scale,
    void *o, float *lse, int batch, int heads, int tq, int tk, int d,
    const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen)
{
	const struct wgmma_fp8_scales f8 = { q_scale, k_scale, v_scale };

	if (q_scale == NULL || k_scale == NULL || v_scale == NULL) {
		snprintf(err, errlen, "wgmma_attention_fp8: the Q, K and V "
		    "scales must all be given");
		return -1;
	}
	if (d != 128) {
		snprintf(err, errlen, "wgmma_attention_fp8: d = %d; the FP8 "
		    "build takes d = 128", d);
		return -1;
	}
	return wgmma_run(q, k, vt, o, lse, batch, heads, tq, tk, NULL, NULL, 0,
	    0, d, FAST_FP8, mask, scale, variant, tr, &f8, stream, err,
	    errlen);
}
#else /* WGMMA_RECORD */

#include "rec_fill.cuh"

/* Events a role can write for a work item of tc key tiles: at most 12 a
 * tile (a consumer's wait, turn, issue, rescale, wait, issue, pass,
 * wait, release, softmax, wait, release) and a few around them. */
static int
wgmma_rec_cap(int tc)
{
	return 12 * (tc + 1) + 16;
}

extern "C" int
wgmma_record(int d, int variant, int batch, int heads, int tq, int tk,
    int causal, int blocks, int reps, uint64_t seed,
    struct wgmma_rec_run *out, char *err, size_t errlen)
{
	const struct wgmma_variant *wv;
	struct wgmma_params p;
	CUtensorMap mq, mk, mv;
	uint16_t *q = NULL, *k = NULL, *v = NULL, *o = NULL;
	float *lse = NULL;
	struct wgmma_rec_event *rec = NULL;
	int *rec_n = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	const char *call = "";
	cudaError_t e;
	size_t nq, nk, nroles, slots;
	int bh, grid, cap, r, rc;
	float ms;

	memset(out, 0, sizeof *out);
	(void)cudaGetLastError();	/* nobody's error but ours from here */
	if ((wv = wgmma_find(d, variant)) == NULL)
		return tc_args_no_variant("wgmma_record", variant, d, err,
		    errlen);
	if (batch < 1 || heads < 1 || tq < 1 || tk < 1 || blocks < 1 ||
	    reps < 0) {
		snprintf(err, errlen, "wgmma_record: batch, heads, Tq, Tk and "
		    "the blocks must be at least 1");
		return -1;
	}
	bh = batch * heads;
	nq = (size_t)bh * tq * d;
	nk = (size_t)bh * tk * d;
	CUDA_CHECK(cudaMalloc(&q, nq * 2));
	CUDA_CHECK(cudaMalloc(&o, nq * 2));
	CUDA_CHECK(cudaMalloc(&k, nk * 2));
	CUDA_CHECK(cudaMalloc(&v, nk * 2));
	CUDA_CHECK(cudaMalloc(&lse, (size_t)bh * tq * sizeof *lse));
	rec_fill<<<256, 256>>>(q, nq, seed);
	rec_fill<<<256, 256>>>(k, nk, seed + 1);
	rec_fill<<<256, 256>>>(v, nk, seed + 2);
	CUDA_CHECK(cudaGetLastError());
	if (wgmma_encoder(err, errlen) != 0 ||
	    wgmma_tensor_map(&mq, q, FAST_FP16, bh, tq, d, wv->cfg.br, err,
	    errlen) != 0 ||
	    wgmma_tensor_map(&mk, k, FAST_FP16, bh, tk, d, wv->cfg.bc, err,
	    errlen) != 0 ||
	    wgmma_tensor_map(&mv, v, FAST_FP16, bh, tk, d, wv->cfg.bc, err,
	    errlen) != 0)
		goto fail;

	memset(&p, 0, sizeof p);
	p.o = o;
	p.lse = lse;
	p.tq = tq;
	p.tk = tk;
	p.heads = heads;
	{
		const struct tc_mask mask = tc_mask_causal(causal);

		if (tc_rule_make("wgmma_record", &mask, tc_args_scale(0.f, d),
		    &p.rule, &p.scale, err, errlen) != 0)
			goto fail;
	}
	p.scale_log2 = p.scale * 1.4426950408889634f;
	p.tc = (tk + wv->cfg.bc - 1) / wv->cfg.bc;
	p.tr = (tq + wv->cfg.br - 1) / wv->cfg.br;
	p.ntiles = p.tr * bh;
	grid = p.ntiles;
	cap = wgmma_rec_cap(p.tc);
	nroles = 1 + (size_t)wv->cfg.consumers;
	if (blocks > grid)
		blocks = grid;
	/* room for every block: the timing below records them all */
	slots = (size_t)(reps > 0 ? grid : blocks) * nroles;
	CUDA_CHECK(cudaMalloc(&rec, slots * cap * sizeof *rec));
	CUDA_CHECK(cudaMalloc(&rec_n, slots * sizeof *rec_n));
	CUDA_CHECK(cudaMemset(rec_n, 0, slots * sizeof *rec_n));
	p.rec = rec;
	p.rec_n = rec_n;
	p.rec_blocks = blocks;
	p.rec_cap = cap;
	e = wv->launch[0][0][FAST_FP16](&mq, &mk, &mv, &p, grid, 0, &call);
	if (e != cudaSuccess)
		goto launch_fail;
	CUDA_CHECK(cudaDeviceSynchronize());

	out->consumers = wv->cfg.consumers;
	out->stages = wv->cfg.stages;
	out->br = wv->cfg.br;
	out->bc = wv->cfg.bc;
	out->pingpong = wv->cfg.pingpong;
	out->blocks = blocks;
	out->cap = cap;
	out->ev = (struct wgmma_rec_event *)malloc((size_t)blocks * nroles *
	    cap * sizeof *out->ev);
	out->n = (int *)malloc((size_t)blocks * nroles * sizeof *out->n);
	if (out->ev == NULL || out->n == NULL) {
		snprintf(err, errlen, "wgmma_record: out of memory");
		goto fail;
	}
	CUDA_CHECK(cudaMemcpy(out->ev, rec, (size_t)blocks * nroles * cap *
	    sizeof *rec, cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(out->n, rec_n, (size_t)blocks * nroles *
	    sizeof *rec_n, cudaMemcpyDeviceToHost));

	out->timed_ms = out->record_ms = -1;
	if (reps > 0) {
		/* the same shape, every block recording, against the timed
		 * build's default variant (only variant 0 exists there) */
		p.rec_blocks = grid;
		CUDA_CHECK(cudaEventCreate(&e0));
		CUDA_CHECK(cudaEventCreate(&e1));
		for (int pass = 0; pass < 2; pass++) {
			for (r = -1; r < reps; r++) {
				if (r == 0)
					CUDA_CHECK(cudaEventRecord(e0));
				if (pass == 1) {
					CUDA_CHECK(cudaMemsetAsync(rec_n, 0,
					    slots * sizeof *rec_n));
					e = wv->launch[0][0][FAST_FP16](&mq, &mk,
					    &mv, &p, grid, 0, &call);
					if (e != cudaSuccess)
						goto launch_fail;
				} else if (variant > 0)
					break;
				else if (wgmma_attention_fwd_variant(q, k, v,
				    o, lse, batch, heads, tq, tk, d, FAST_FP16,
				    causal, 0.f, variant, NULL, err,
				    errlen) != 0)
					goto fail;
			}
			if (pass == 0 && variant > 0)
				continue;
			CUDA_CHECK(cudaEventRecord(e1));
			CUDA_CHECK(cudaEventSynchronize(e1));
			CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
			if (pass == 0)
				out->timed_ms = ms / reps;
			else
				out->record_ms = ms / reps;
		}
	}
	rc = 0;
	goto done;
launch_fail:
	snprintf(err, errlen, "%s failed at %s:%d: %s", call, __FILE__,
	    __LINE__, cudaGetErrorString(e));
fail:
	rc = -1;
done:
	/* (destroying a NULL event is an error that the next call's
	 * cudaGetLastError would report) */
	if (e0 != NULL)
		cudaEventDestroy(e0);
	if (e1 != NULL)
		cudaEventDestroy(e1);
	cudaFree(q);
	cudaFree(k);
	cudaFree(v);
	cudaFree(o);
	cudaFree(lse);
	cudaFree(rec);
	cudaFree(rec_n);
	if (rc != 0) {
		free(out->ev);
		free(out->n);
		memset(out, 0, sizeof *out);
	}
	return rc;
}
#endif /* WGMMA_RECORD */
