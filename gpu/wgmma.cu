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
 * The instructions themselves, m64nNk16 with float32 accumulators d
 * (N / 2 a thread).  SS: A and B from shared memory (S = Q K^T, both
 * K-major); RS: A from 4 registers, B from shared memory MN-major
 * (O += P V).  acc = 0 overwrites d (scale-d false) instead of adding.
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

template <int N, bool BF16>
static __device__ __forceinline__ void
wgmma_ss(float (&d)[N / 2], uint64_t a, uint64_t b, int acc)
{
	static_assert(N == 64 || N == 128, "wgmma_ss: N is 64 or 128");
	if constexpr (N == 64 && !BF16)
		asm volatile(WGMMA_SS("64", "f16", WGMMA_D32, "32", "33", "34")
		    : WGMMA_O32(d) : "l"(a), "l"(b), "r"(acc));
	else if constexpr (N == 64)
		asm volatile(WGMMA_SS("64", "bf16", WGMMA_D32, "32", "33", "34")
		    : WGMMA_O32(d) : "l"(a), "l"(b), "r"(acc));
	else if constexpr (!BF16)
		asm volatile(WGMMA_SS("128", "f16", WGMMA_D64, "64", "65", "66")
		    : WGMMA_O64(d) : "l"(a), "l"(b), "r"(acc));
	else
		asm volatile(WGMMA_SS("128", "bf16", WGMMA_D64, "64", "65",
		    "66") : WGMMA_O64(d) : "l"(a), "l"(b), "r"(acc));
}

template <int N, bool BF16>
static __device__ __forceinline__ void
wgmma_rs(float (&d)[N / 2], uint32_t a0, uint32_t a1, uint32_t a2,
    uint32_t a3, uint64_t b)
{
	static_assert(N == 64 || N == 128, "wgmma_rs: N is 64 or 128");
	if constexpr (N == 64 && !BF16)
		asm volatile(WGMMA_RS("64", "f16", WGMMA_D32, "32", "33", "34",
		    "35", "36", "37") : WGMMA_O32(d)
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(1));
	else if constexpr (N == 64)
		asm volatile(WGMMA_RS("64", "bf16", WGMMA_D32, "32", "33", "34",
		    "35", "36", "37") : WGMMA_O32(d)
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(1));
	else if constexpr (!BF16)
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
 * row in Q's tile (BR rows a box), k the K tile's slot.  One group.
 */
template <int D, int BR, int BC, bool BF16>
static __device__ __forceinline__ void
wgmma_qk(float (&s)[BC / 2], uint32_t q, uint32_t k)
{
	wgmma_fence();
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		const uint32_t in = (kk % 4) * 32;	/* bytes into the row */
		wgmma_ss<BC, BF16>(s,
		    wgmma_desc(q + (kk / 4) * BR * 128 + in, 16, 1024),
		    wgmma_desc(k + (kk / 4) * BC * 128 + in, 16, 1024), kk > 0);
	}
	wgmma_commit();
}

/* O += P V, P in registers (word i = s[2i], s[2i+1]), v the V slot. */
template <int D, int BC, bool BF16>
static __device__ __forceinline__ void
wgmma_pv(float (&o)[D / 2], const uint32_t (&pa)[BC / 4], uint32_t v)
{
	wgmma_fence();
#pragma unroll
	for (int kk = 0; kk < BC / 16; kk++)
		wgmma_rs<D, BF16>(o, pa[4 * kk], pa[4 * kk + 1],
		    pa[4 * kk + 2], pa[4 * kk + 3],
		    wgmma_desc(v + kk * 16 * 128, BC * 128, 1024));
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
 * wgmma_rescale leaves O so.
 */
template <int BC, bool TRACE>
static __device__ __forceinline__ void
wgmma_softmax(float (&s)[BC / 2], float (&m)[2], float (&l)[2],
    float (&al)[2], float scale_log2, int no_rescale)
{
#pragma unroll
	for (int h = 0; h < 2; h++) {
		float mx = m[h], sum = 0.f;

#pragma unroll
		for (int nb = 0; nb < BC / 8; nb++)
			mx = fmaxf(mx, fmaxf(s[4 * nb + 2 * h],
			    s[4 * nb + 2 * h + 1]));
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
		const float ms = mx == -INFINITY ? 0.f : mx * scale_log2;
		al[h] = fast_exp2(m[h] * scale_log2 - ms);
		m[h] = mx;
#pragma unroll
		for (int nb = 0; nb < BC / 8; nb++)
#pragma unroll
			for (int e = 2 * h; e < 2 * h + 2; e++) {
				const float pv = fast_exp2(fmaf(s[4 * nb + e],
				    scale_log2, -ms));
				s[4 * nb + e] = pv;
				sum += pv;
			}
		l[h] = (TRACE && no_rescale ? l[h] : l[h] * al[h]) + sum;
	}
}

template <int D, bool TRACE>
static __device__ __forceinline__ void
wgmma_rescale(float (&o)[D / 2], const float (&al)[2], int no_rescale)
{
	if (TRACE && no_rescale)
		return;
#pragma unroll
	for (int db = 0; db < D / 8; db++) {
		o[4 * db] *= al[0];
		o[4 * db + 1] *= al[0];
		o[4 * db + 2] *= al[1];
		o[4 * db + 3] *= al[1];
	}
}

template <int BC, bool BF16>
static __device__ __forceinline__ void
wgmma_topack(uint32_t (&pa)[BC / 4], const float (&s)[BC / 2])
{
#pragma unroll
	for (int i = 0; i < BC / 4; i++)
		pa[i] = fast_pack<BF16>(s[2 * i], s[2 * i + 1]);
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

/* TRACE builds: the O rows once tile j's P V has completed. */
template <int D, int BR>
static __device__ void
wgmma_trace_acc(const struct wgmma_params &p, const float (&o)[D / 2],
    size_t bh, int i, int j, int rb, int row0, int tq, int lane)
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
			a[0] = o[4 * db + 2 * h];
			a[1] = o[4 * db + 2 * h + 1];
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
wgmma_smem_bytes(int d, int br, int bc, int stages, int qbuf)
{
	return qbuf * br * d * 2 + stages * 2 * bc * d * 2 +
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
template <int D, int BR, int BC, int STAGES, int QBUF>
struct wgmma_shared {
	static constexpr uint32_t QB = BR * D * 2;	/* bytes of Q's tile */
	static constexpr uint32_t TB = BC * D * 2;	/* of a K or V tile */
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
 * order the consumers use them.
 */
template <int D, int BR, int BC, int STAGES, int QBUF, bool VARLEN>
static __device__ __forceinline__ void
wgmma_producer(const struct wgmma_params &p, const CUtensorMap *tm_q,
    const CUtensorMap *tm_k, const CUtensorMap *tm_v,
    const wgmma_shared<D, BR, BC, STAGES, QBUF> &sm)
{
	constexpr int NBOX = D / 64;		/* 128-byte boxes a row */
	typedef wgmma_shared<D, BR, BC, STAGES, QBUF> smem;
	constexpr uint32_t QB = smem::QB, TB = smem::TB;
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
		wgmma_bar_expect(sm.bar(WGMMA_FULL_Q, qs), QB);
		for (int b = 0; b < NBOX; b++)
			wgmma_tma_load(sm.q + qs * QB + b * BR * 128, tm_q,
			    64 * b, wgmma_q0<VARLEN>(it) + it.row0,
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
				    tm_k, 64 * b, wgmma_k0<VARLEN>(it) +
				    (it.j0 + j) * BC, wgmma_hc<VARLEN>(it),
				    sm.bar(WGMMA_FULL_K, s));
			WGMMA_REC(rec, ck, PIPELINE_COPY_K, j, s, kv.n / STAGES);
			WGMMA_REC_AT(ev);
			wgmma_bar_wait(sm.bar(WGMMA_EMPTY_V, s), ph ^ 1);
			WGMMA_REC(rec, ev, PIPELINE_WAIT_EMPTY_V, j, s,
			    kv.n / STAGES);
			WGMMA_REC_AT(cv);
			wgmma_bar_expect(sm.bar(WGMMA_FULL_V, s), TB);
			for (int b = 0; b < NBOX; b++)
				wgmma_tma_load(sm.v + s * TB + b * BC * 128,
				    tm_v, 64 * b, wgmma_k0<VARLEN>(it) +
				    (it.j0 + j) * BC, wgmma_hc<VARLEN>(it),
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
 * (then p in float32), P packed to 16 bits for P V, and the online
 * softmax's m, l and alpha.
 */
template <int D, int BC>
struct wgmma_frag {
	float o[D / 2], s[BC / 2], m[2], l[2], al[2];
	uint32_t pa[BC / 4];
};

/*
 * S of the item's tile j (key tile it.j0 + j) is in f.s: release K_j's
 * slot, the rules, softmax, and trace m, alpha and l.  The steps every
 * schedule takes between the S and the P V of a tile.
 */
template <int BR, int BC, bool TRACE, bool VARLEN, int D>
static __device__ __forceinline__ void
wgmma_score_tile(const struct wgmma_params &p, const struct wgmma_item &it,
    const struct wgmma_who &w, wgmma_frag<D, BC> &f, uint32_t empty_k,
    int j)
{
	const int kj = it.j0 + j;
	const int first = it.row0 + 64 * w.c;	/* this consumer's rows */

	if (w.lane == 0)
		wgmma_bar_arrive(empty_k);
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
	wgmma_softmax<BC, TRACE>(f.s, f.m, f.l, f.al, p.scale_log2,
	    p.no_rescale);
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
    int SCHED, bool BF16, bool TRACE, bool VARLEN>
static __device__ __forceinline__ void
wgmma_consumer_overlap(const struct wgmma_params &p,
    const wgmma_shared<D, BR, BC, STAGES, QBUF> &sm,
    const struct wgmma_item &it, const struct wgmma_who &w,
    wgmma_pipe<STAGES> kv, uint32_t qa, int me, int next,
    wgmma_frag<D, BC> &f)
{
	constexpr uint32_t TB = wgmma_shared<D, BR, BC, STAGES, QBUF>::TB;
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
	wgmma_qk<D, BR, BC, BF16>(f.s, qa, sm.k + kv.at(0).stage() * TB);
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
	wgmma_score_tile<BR, BC, TRACE, VARLEN>(p, it, w, f,
	    sm.bar(WGMMA_EMPTY_K, kv.at(0).stage()), 0);
	WGMMA_REC(w.rec, sm0, PIPELINE_SOFTMAX, 0, kv.at(0).stage(),
	    kv.at(0).n / STAGES);
	wgmma_topack<BC, BF16>(f.pa, f.s);

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
		wgmma_qk<D, BR, BC, BF16>(f.s, qa, sm.k + sk * TB);
		WGMMA_REC(w.rec, iq, PIPELINE_ISSUE_QK, j, sk,
		    kv.at(j).n / STAGES);
		if constexpr (SCHED == 2) {	/* by alpha_{j-1} */
			WGMMA_REC_AT(rs);
			wgmma_rescale<D, TRACE>(f.o, f.al, p.no_rescale);
			WGMMA_REC(w.rec, rs, PIPELINE_RESCALE, j - 1, sv,
			    kv.at(j - 1).n / STAGES);
		}
		WGMMA_REC_AT(fv);
		wgmma_bar_wait(sm.bar(WGMMA_FULL_V, sv), kv.at(j - 1).phase());
		WGMMA_REC(w.rec, fv, PIPELINE_WAIT_FULL_V, j - 1, sv,
		    kv.at(j - 1).n / STAGES);
		WGMMA_REC_AT(ip);
		wgmma_pv<D, BC, BF16>(f.o, f.pa, sm.v + sv * TB);
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
		wgmma_score_tile<BR, BC, TRACE, VARLEN>(p, it, w, f,
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
			wgmma_trace_acc<D, BR>(p, f.o, it.bh, it.i,
			    it.j0 + j - 1, w.rb, it.row0,
			    wgmma_tq<VARLEN>(p, it), w.lane);
		if constexpr (SCHED == 1)	/* by alpha_j */
			wgmma_rescale<D, TRACE>(f.o, f.al, p.no_rescale);
		wgmma_topack<BC, BF16>(f.pa, f.s);
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
		wgmma_rescale<D, TRACE>(f.o, f.al, p.no_rescale);
		WGMMA_REC(w.rec, rsl, PIPELINE_RESCALE, nt - 1, sv, rv);
	}
	WGMMA_REC_AT(ipl);
	wgmma_pv<D, BC, BF16>(f.o, f.pa, sm.v + sv * TB);
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
		wgmma_trace_acc<D, BR>(p, f.o, it.bh, it.i, it.j0 + nt - 1,
		    w.rb, it.row0,
			    wgmma_tq<VARLEN>(p, it), w.lane);
}

/* The consumer's main loop without overlap (SCHED 0): S, softmax, P V,
 * one after the other, tile after tile. */
template <int D, int BR, int BC, int STAGES, int QBUF, bool BF16, bool TRACE,
    bool VARLEN>
static __device__ __forceinline__ void
wgmma_consumer_plain(const struct wgmma_params &p,
    const wgmma_shared<D, BR, BC, STAGES, QBUF> &sm,
    const struct wgmma_item &it, const struct wgmma_who &w,
    wgmma_pipe<STAGES> kv, uint32_t qa, wgmma_frag<D, BC> &f)
{
	constexpr uint32_t TB = wgmma_shared<D, BR, BC, STAGES, QBUF>::TB;

	for (int j = 0; j < it.nt; j++) {
		const int st = kv.at(j).stage();
		const uint32_t ph = kv.at(j).phase();

		wgmma_bar_wait(sm.bar(WGMMA_FULL_K, st), ph);
		wgmma_qk<D, BR, BC, BF16>(f.s, qa, sm.k + st * TB);
		wgmma_wait<0>();
		wgmma_hold(f.s);
		wgmma_score_tile<BR, BC, TRACE, VARLEN>(p, it, w, f,
		    sm.bar(WGMMA_EMPTY_K, st), j);
		wgmma_rescale<D, TRACE>(f.o, f.al, p.no_rescale);
		wgmma_topack<BC, BF16>(f.pa, f.s);

		wgmma_bar_wait(sm.bar(WGMMA_FULL_V, st), ph);
		wgmma_pv<D, BC, BF16>(f.o, f.pa, sm.v + st * TB);
		wgmma_wait<0>();
		wgmma_hold(f.o);
		if (w.lane == 0)
			wgmma_bar_arrive(sm.bar(WGMMA_EMPTY_V, st));
		if constexpr (TRACE)
			wgmma_trace_acc<D, BR>(p, f.o, it.bh, it.i,
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
template <int D, int BR, int BC, bool BF16, bool VARLEN>
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
		inv[h] = lt > 0.f ? 1.f / lt : 0.f;
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
			    fast_pack<BF16>(f.o[4 * db + 2 * h] * inv[h],
			    f.o[4 * db + 2 * h + 1] * inv[h]);
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
    int QBUF, bool BF16, bool TRACE, bool VARLEN>
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

	extern __shared__ __align__(1024) uint8_t wgmma_smem[];
	const uint32_t raw = wgmma_smem_addr(wgmma_smem);
	wgmma_shared<D, BR, BC, STAGES, QBUF> sm;
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
			wgmma_producer<D, BR, BC, STAGES, QBUF, VARLEN>(p, &tm_q,
			    &tm_k, &tm_v, sm);
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
		WGMMA_REC_AT(fq);
		wgmma_bar_wait(sm.bar(WGMMA_FULL_Q, qs), qp.phase());
		WGMMA_REC(w.rec, fq, PIPELINE_WAIT_FULL_Q, -1, qs, qp.n / QBUF);
		if constexpr (SCHED > 0)
			wgmma_consumer_overlap<D, BR, BC, STAGES, QBUF, PINGPONG,
			    SCHED, BF16, TRACE, VARLEN>(p, sm, it, w, kv, qa, me,
			    next, f);
		else
			wgmma_consumer_plain<D, BR, BC, STAGES, QBUF, BF16,
			    TRACE, VARLEN>(p, sm, it, w, kv, qa, f);
		kv.advance(it.nt);
		WGMMA_REC_AT(ep);
		wgmma_epilogue<D, BR, BC, BF16, VARLEN>(p, it, w, orow, gq,
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
 * The map of one (B H, rows, d) tensor in boxes of (box_rows, 64): three
 * dimensions, innermost first, so that a box never crosses from one head
 * into the next (rows past `rows` read as zeros).
 */
static int
wgmma_tensor_map(CUtensorMap *map, const void *ptr, int bf16, int bh,
    int rows, int d, int box_rows, char *err, size_t errlen)
{
	const cuuint64_t dims[3] = { (cuuint64_t)d, (cuuint64_t)rows,
	    (cuuint64_t)bh };
	const cuuint64_t strides[2] = { (cuuint64_t)d * 2,
	    (cuuint64_t)rows * d * 2 };
	const cuuint32_t box[3] = { 64, (cuuint32_t)box_rows, 1 };
	const cuuint32_t one[3] = { 1, 1, 1 };
	CUresult r;

	r = wgmma_encode_fn(map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 :
	    CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, (void *)ptr, dims, strides,
	    box, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
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
    bool BF16, bool TRACE, bool VARLEN>
static cudaError_t
wgmma_launch(const CUtensorMap *q, const CUtensorMap *k, const CUtensorMap *v,
    const struct wgmma_params *p, int grid, cudaStream_t stream,
    const char **call)
{
	void (*kern)(const CUtensorMap, const CUtensorMap, const CUtensorMap,
	    const struct wgmma_params) =
	    wgmma_fwd_kernel<D, BC, STAGES, NWG, PP, OV, QBUF, BF16, TRACE,
	    VARLEN>;
	const int smem = wgmma_smem_bytes(D, 64 * NWG, BC, STAGES, QBUF);
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
	wgmma_launcher launch[2][2][2];	/* [varlen][traced][enum fast_dtype] */
};

#define WGMMA_LAUNCHERS(D, BC, ST, NWG, PP, OV, PE, VL) {		\
	{ wgmma_launch<D, BC, ST, NWG, PP, OV, 1 + PE, false, false, VL>, \
	  wgmma_launch<D, BC, ST, NWG, PP, OV, 1 + PE, true, false, VL> }, \
	{ wgmma_launch<D, BC, ST, NWG, PP, OV, 1 + PE, false, true, VL>, \
	  wgmma_launch<D, BC, ST, NWG, PP, OV, 1 + PE, true, true, VL> } }
#define WGMMA_VARIANT(D, BC, ST, NWG, PP, OV, PE) {			\
	{ D, 64 * NWG, BC, ST, NWG, PP, OV, PE }, {			\
	WGMMA_LAUNCHERS(D, BC, ST, NWG, PP, OV, PE, false),		\
	WGMMA_LAUNCHERS(D, BC, ST, NWG, PP, OV, PE, true) } }

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

/*
 * One launch: the dense call (cu_q = NULL: batch * heads heads of Tq x
 * Tk) or a packed batch (cu_q, cu_k on the device: nseq sequences of
 * heads heads, tq and tk the totals, max_tq and max_tk the longest).
 */
static int
wgmma_run(const void *q, const void *k, const void *v, void *o, float *lse,
    int batch, int heads, int tq, int tk, const int *cu_q, const int *cu_k,
    int max_tq, int max_tk, int d, int dtype, const struct tc_mask *mask,
    float scale, int variant, const struct fast_trace *tr, void *stream,
    char *err, size_t errlen)
{
	const struct wgmma_variant *wv;
	struct wgmma_params p;
	CUtensorMap mq, mk, mv;
	const char *call = "";
	const int varlen = cu_q != NULL;
	cudaError_t e;
	int bh, grid, dev, sms, maps;

	memset(&p, 0, sizeof p);
	if (tc_args_check("wgmma_attention_fwd", q, k, v, o, lse, batch,
	    heads, tq, tk, dtype, 16, "TMA and 16-byte stores", err,
	    errlen) != 0)
		return -1;
	if ((wv = wgmma_pick(d, variant, mask)) == NULL)
		return tc_args_no_variant("wgmma_attention_fwd", variant, d, err,
		    errlen);
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
	    wgmma_tensor_map(&mq, q, dtype == FAST_BF16, maps, tq, d,
	    wv->cfg.br, err, errlen) != 0 ||
	    wgmma_tensor_map(&mk, k, dtype == FAST_BF16, maps, tk, d,
	    wv->cfg.bc, err, errlen) != 0 ||
	    wgmma_tensor_map(&mv, v, dtype == FAST_BF16, maps, tk, d,
	    wv->cfg.bc, err, errlen) != 0)
		return -1;

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
	e = wv->launch[varlen][tr != NULL][dtype](&mq, &mk, &mv, &p, grid,
	    (cudaStream_t)stream, &call);
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
	    0, d, dtype, mask, scale, variant, tr, stream, err, errlen);
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
	    cu_k, max_tq, max_tk, d, dtype, mask, scale, variant, tr, stream,
	    err, errlen);
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
	    wgmma_tensor_map(&mq, q, 0, bh, tq, d, wv->cfg.br, err,
	    errlen) != 0 ||
	    wgmma_tensor_map(&mk, k, 0, bh, tk, d, wv->cfg.bc, err,
	    errlen) != 0 ||
	    wgmma_tensor_map(&mv, v, 0, bh, tk, d, wv->cfg.bc, err,
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
