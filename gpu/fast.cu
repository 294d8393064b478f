/*
 * fast.cu - FlashAttention-2 forward on the tensor cores: fp16 or bf16
 * in, float32 accumulation, mma.sync m16n8k16 (sm_80 and later; built for
 * sm_90 here).  The teaching kernel shows the algorithm; this one shows
 * the same tiling at the speed real models get.
 *
 * Letters: Q (Tq, d), K and V (Tk, d) per (batch, head); Br query rows
 * per block, Bc keys per tile, Tc = ceil(Tk / Bc) key tiles.  The grid is
 * (Tr, heads, batch): one block per (row block i, head, batch), so the
 * loop order is FA2's (for each i, for each j; state stays on chip).
 *
 * The data path of one block
 * --------------------------
 * global -> shared.  cp.async copies 16 bytes a thread straight into
 * shared memory (no register round trip), all threads side by side along
 * a row, so a warp reads 512 contiguous bytes.  Q_i (Br x d) is loaded
 * once; K_j and V_j (Bc x d) each have two buffers: while the warps work
 * on tile j, tile j + 1 is in flight into the other buffer.  K_j and V_j
 * are separate commit groups so S = Q K_j^T can start before V_j lands:
 *
 *   wait K_j; barrier; issue K_j+1, V_j+1 | S = Q K_j^T; softmax |
 *   wait V_j; barrier | O += P V_j
 *
 * The barrier after "wait K_j" also says that every warp has finished
 * tile j - 1, whose buffers the loads of tile j + 1 then overwrite.  Rows
 * past Tq or Tk are zero-filled (cp.async with source size 0): a zero V
 * row times a zero P adds nothing, where garbage could be NaN.
 *
 * Shared layout: each tile is row-major, d halves a row (128 or 256
 * bytes), cut in 16-byte chunks; chunk ch of row r is stored at chunk
 * ch ^ (r & 7).  ldmatrix reads eight rows' same chunk at once; without
 * the XOR those eight 16-byte pieces would sit in the same four banks
 * (a row is a multiple of 128 bytes), with it they cover all 32.
 *
 * shared -> registers.  ldmatrix.x4 gives each thread one 32-bit piece
 * (two halves) of four 8x8 matrices, exactly the operand layout of
 * mma.m16n8k16 (g = lane / 4, t = lane % 4):
 *   A (16x16, row-major)   a0 (g, 2t..2t+1)   a1 (g+8, 2t..)
 *                          a2 (g, 2t+8..)     a3 (g+8, 2t+8..)
 *   B (16x8, "col")        b0 (k 2t..2t+1, n g)   b1 (k 2t+8.., n g)
 *   C, D (16x8, float)     c0 c1 (g, 2t..2t+1)    c2 c3 (g+8, 2t..)
 * For S = Q K^T, A is Q (rows = queries) and B is K^T: K is stored
 * (key, d), a key's d values are contiguous, which is B's "column", so a
 * plain ldmatrix of key rows gives b0/b1.  For O += P V, B is V (key, d)
 * with k = key: its columns are strided, so ldmatrix.trans transposes
 * the 8x8 pieces on the way.
 *
 * registers -> tensor cores, and back.  Each warp owns 16 * MT query
 * rows of the block (MT = 1 or 2 m16 tiles) and all Bc keys: the FA2
 * split, so a row's max and sum live inside one warp, in the four
 * threads of a quad (shuffle xor 1 and 2), and no warp ever waits for
 * another's partial result.  The S accumulator (C layout) of two
 * neighbouring n8 blocks is, once rounded to 16 bits, already the A
 * operand of P V (a0 = c0c1 of block 2k, a1 = c2c3 of 2k, a2 = c0c1 of
 * 2k+1, a3 = c2c3 of 2k+1): P never touches shared memory.
 *
 * Online softmax in base 2: p = 2^(s * scale*log2(e) - m * scale*log2(e))
 * = exp(scale (s - m)), one FFMA and one MUFU.EX2 per score.  m is the raw
 * row max; l is summed from the float32 p (P V uses p rounded to 16 bits,
 * as the simulator's --dtype emulation does); each thread keeps a partial
 * l over its columns, and the quad adds them once at the end.  A row that
 * has seen only masked keys has m = -inf: its exponent base is taken as 0
 * so p = 2^-inf = 0 and alpha = 0 times an l and O that are still 0.
 *
 * Epilogue: O / l rounded to 16 bits goes through the warp's own rows of
 * the Q tile in shared memory (same swizzle), and leaves as 16-byte
 * coalesced stores; lse = m * scale + log l (natural log).
 *
 * Why these choices (timings: doc/performance.md)
 * ------------------
 * - mma.sync, not wgmma: it runs on every chip since sm_80 and keeps the
 *   data path visible; wgmma (sm_90a) is the next step, not this one.
 * - 4 warps, Br = 128, so MT = 2 (FA2's own choice): a K or V fragment
 *   read from shared memory feeds two m16 tiles, halving shared-memory
 *   traffic per MMA; Q is then re-read from shared memory each tile
 *   (registers are full with O and S: 254 of 255 used at d = 128).
 *   MT = 1, each warp 16 rows with Q in registers (8 warps, or Br = 64),
 *   was up to 20 % slower at T >= 4096 (the 8-warp build: dev/cuda/fast/).
 * - Bc = 64 at d = 64, Bc = 32 at d = 128: S (MT Bc / 8 x 4 floats) and O
 *   (MT d / 8 x 4) must share the registers; at d = 128 Bc = 64 spills a
 *   little and was no faster, Bc = 128 at d = 64 spills and was 5 to 8 %
 *   slower.
 * - Two barriers a tile, cp.async one tile ahead.  A software-pipelined
 *   loop (S of tile j + 1 issued with tile j's softmax) was tried: ptxas
 *   still issues the MMAs in one run before the softmax, the second S
 *   costs registers (spills at d = 128), and it was 3 to 14 % slower.
 * - Causal and windows (tc_mask.cuh): key tiles outside the keys the
 *   block's rows see are never loaded; only tiles that cross an edge of
 *   the band (or the ragged end of K) pay for the per-entry mask.  A cap
 *   or ALiBi bends every tile's scores before the max.  Blocks start
 *   from the last row block (the one with the most tiles under the
 *   causal mask) so the long ones do not trail.
 *
 * The trace (fast_attention_trace): every tiling is also built with
 * TRACE = true, which after each tile's O += P V writes each row's m,
 * alpha, l (the quad's partial sums added) and optionally its O row to
 * device arrays indexed (batch, head, i, j, row), so `flashstep compare
 * --kernel fast` can lay them against the simulator's steps.  It is a
 * separate instantiation: the timed kernels (TRACE = false) compile to
 * the same code as without it.
 */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fast.h"
#include "fast_mma.cuh"
#include "tc_args.h"
#include "tc_mask.cuh"

/*
 * The recording build (FAST_RECORD, gpu/fast_record.cu): lane 0 of each
 * warp writes its steps as events (fast_record.h).  In the timed build
 * every FAST_REC macro is empty and fast_params has no field for it, so
 * its code is the code without them.
 */
#ifdef FAST_RECORD
#include "fast_record.h"
#include "model/pipeline.h"	/* enum pipeline_kind: the events' kinds */
/* A stamp named t: the cycle counter and the global timer, now. */
#define FAST_REC_AT(t) const long long t##_c = clock64(),		\
	t##_g = fast_rec_gtime()
/* An event from stamp t to now, written by recorder rec. */
#define FAST_REC(rec, t, kind, j, stage, round)				\
	fast_rec_put(rec, kind, j, stage, round, t##_c, t##_g)
#define FAST_REC_NOW(rec, kind, j, stage, round) do {			\
	FAST_REC_AT(now_);						\
	FAST_REC(rec, now_, kind, j, stage, round);			\
} while (0)
/* The recorder of this warp (lane 0 writes; the others have none). */
#define FAST_REC_DECL(name, p, warp, lane)				\
	struct fast_rec name = fast_rec_for(p, warp, lane)
#define FAST_REC_END(rec) fast_rec_end(rec)
#else
#define FAST_REC_AT(t) ((void)0)
#define FAST_REC(rec, t, kind, j, stage, round) ((void)0)
#define FAST_REC_NOW(rec, kind, j, stage, round) ((void)0)
#define FAST_REC_DECL(name, p, warp, lane) ((void)0)
#define FAST_REC_END(rec) ((void)0)
#endif
/* The recording build's planted fault (tests/gpu_record_planted.sh):
 * the loads of tile j + 1 issued before the barrier that says every
 * warp is done with tile j - 1, whose buffers they overwrite. */
#if defined(FAST_RECORD) && defined(FAST_PLANT_EARLY_REFILL)
#define FAST_EARLY_REFILL 1
#else
#define FAST_EARLY_REFILL 0
#endif

struct fast_params {
	const uint16_t *q, *k, *v;
	uint16_t *o;
	float *lse;
	int tq, tk;
	struct tc_rule rule;	/* the window, the cap, ALiBi (tc_mask.cuh) */
	float scale;		/* the exponent's, natural units: for lse */
	float scale_log2;	/* scale * log2(e): exponents in base 2 */
	/* TRACE builds: (batch, head, i, j, row) arrays (fast.h); acc may
	 * be NULL.  tc is Tc, the number of key tiles. */
	float *tr_m, *tr_alpha, *tr_l, *tr_acc;
	int tc;
	int no_rescale;		/* TRACE builds: bug no-rescale (fast.h) */
#ifdef FAST_RECORD
	struct wgmma_rec_event *rec;	/* [block][warp][rec_cap] */
	int *rec_n;			/* [block][warp] */
	int *rec_sm;			/* [block] */
	int rec_blocks, rec_cap;	/* blocks 0 .. rec_blocks-1 record */
#endif
};

#ifdef FAST_RECORD
/* Where one warp of one block writes its events (ev NULL: nowhere); n
 * counts in a register and is stored once, at the end, so a stamp costs
 * one store and no load. */
struct fast_rec {
	struct wgmma_rec_event *ev;
	int *nout;
	int n, cap;
};

static __device__ __forceinline__ long long
fast_rec_gtime(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return (long long)t;
}

/* Blocks in launch order: x fastest, then the head, then the batch. */
static __device__ __forceinline__ struct fast_rec
fast_rec_for(const struct fast_params &p, int warp, int lane)
{
	struct fast_rec r = { NULL, NULL, 0, 0 };
	const int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y *
	    blockIdx.z);

	if (lane == 0 && p.rec != NULL && b < p.rec_blocks) {
		const size_t at = (size_t)b * (blockDim.x / 32) + warp;
		r.ev = p.rec + at * p.rec_cap;
		r.nout = p.rec_n + at;
		r.cap = p.rec_cap;
		if (warp == 0) {
			unsigned sm;
			asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
			p.rec_sm[b] = (int)sm;
		}
	}
	return r;
}

static __device__ __forceinline__ void
fast_rec_put(struct fast_rec &r, int kind, int j, int stage, int round,
    long long c0, long long g0)
{
	const long long c1 = clock64(), g1 = fast_rec_gtime();

	if (r.ev == NULL)
		return;
	if (r.n < r.cap) {
		struct wgmma_rec_event e = { kind, j, stage, round, c0, c1, g0,
		    g1 };
		r.ev[r.n] = e;
	}
	r.n++;
}

static __device__ __forceinline__ void
fast_rec_end(const struct fast_rec &r)
{
	if (r.ev != NULL)
		*r.nout = r.n;
}
#endif

/* Per-lane constants of the ldmatrix addresses (see fast_lane_init). */
struct fast_lane {
	uint32_t q_off;		/* shared address of this lane's Q row */
	uint32_t k_off;		/* byte offset of its K row in a K tile */
	uint32_t v_off;		/* byte offset of its V row in a V tile */
	int q_ch, k_ch, v_ch;	/* its chunk within a chunk pair */
	int x7;			/* lane & 7: the swizzle of every row used */
};

/*
 * Lanes 8m..8m+7 name the rows of matrix m of an ldmatrix.x4.  Every row
 * used below is a multiple of 8 plus (lane & 7), so the swizzle is always
 * chunk ^ (lane & 7):
 *   Q (A):          row wrow + 16 mt + (lane & 15),  chunk 2 kk + lane / 16
 *   K (B):          row 16 nb2 + (lane & 7) + 8 (lane / 16),
 *                                        chunk 2 kk + (lane / 8) % 2
 *   V (B, .trans):  row 16 kk + (lane & 7) + 8 ((lane / 8) % 2),
 *                                        chunk 2 nd2 + lane / 16
 */
template <int D>
static __device__ __forceinline__ struct fast_lane
fast_lane_init(uint32_t sQ, int wrow, int lane)
{
	struct fast_lane L;

	L.q_off = sQ + (wrow + (lane & 15)) * D * 2;
	L.k_off = ((lane & 7) + ((lane >> 4) << 3)) * D * 2;
	L.v_off = ((lane & 7) + (((lane >> 3) & 1) << 3)) * D * 2;
	L.q_ch = lane >> 4;
	L.k_ch = (lane >> 3) & 1;
	L.v_ch = lane >> 4;
	L.x7 = lane & 7;
	return L;
}

/* s = Q K^T for this warp's rows and the Bc keys of the K tile at kb. */
template <int D, int BC, int MT, bool QREG, bool BF16>
static __device__ __forceinline__ void
fast_qk(float (&s)[MT][BC / 8][4], const uint32_t (&qf)[QREG ? D / 16 : 1][4],
    const struct fast_lane &L, uint32_t kb)
{
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int nb = 0; nb < BC / 8; nb++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				s[mt][nb][e] = 0.f;
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		uint32_t a[MT][4];
		if constexpr (QREG) {
#pragma unroll
			for (int e = 0; e < 4; e++)
				a[0][e] = qf[kk][e];
		} else {
#pragma unroll
			for (int mt = 0; mt < MT; mt++)
				fast_ldsm_x4(L.q_off + mt * 16 * D * 2 +
				    (((2 * kk + L.q_ch) ^ L.x7) << 4), a[mt]);
		}
#pragma unroll
		for (int nb2 = 0; nb2 < BC / 16; nb2++) {
			uint32_t b[4];
			fast_ldsm_x4(kb + nb2 * 16 * D * 2 + L.k_off +
			    (((2 * kk + L.k_ch) ^ L.x7) << 4), b);
#pragma unroll
			for (int mt = 0; mt < MT; mt++) {
				fast_mma<BF16>(s[mt][2 * nb2], a[mt], b[0],
				    b[1]);
				fast_mma<BF16>(s[mt][2 * nb2 + 1], a[mt], b[2],
				    b[3]);
			}
		}
	}
}

/*
 * The rules on the warp's scores of tile j (tc_mask.cuh): with VIS,
 * -inf where key c is past Tk or hidden from row r; the cap and ALiBi's
 * bias (slope in u's units) on the rest.  r0 is the warp's first row.
 */
template <int BC, int MT, bool VIS>
static __device__ __forceinline__ void
fast_rules(float (&s)[MT][BC / 8][4], const struct tc_rule &rule,
    float slope, int j, int r0, int lane, int tq, int tk)
{
	const int g = lane >> 2, t4 = lane & 3;
	int lo[MT][2], hi[MT][2];

#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int h = 0; h < 2; h++)
			if (VIS)
				tc_rule_row(rule, r0 + mt * 16 + g + 8 * h, tq,
				    tk, &lo[mt][h], &hi[mt][h]);
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int nb = 0; nb < BC / 8; nb++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int r = r0 + mt * 16 + g + 8 * (e >> 1);
				const int c = j * BC + 8 * nb + 2 * t4 +
				    (e & 1);
				s[mt][nb][e] = tc_rule_score<VIS>(rule,
				    s[mt][nb][e], slope, r, c, tq, tk,
				    lo[mt][e >> 1], hi[mt][e >> 1]);
			}
}

/*
 * Online softmax of one row (h = 0: row g of an m16 tile, h = 1: row
 * g + 8) over one tile: its scores in s become p = exp(scale (s - m_new)),
 * and m, l and the row's o move on.  The exponent base ms = m_new scale
 * log2(e) is 0 while the row has seen only masked keys, so p = 2^-inf = 0
 * and alpha = 0 times an l and o that are still 0: never NaN.  Returns
 * alpha.  no_rescale (TRACE builds only: bug no-rescale) leaves l and
 * o unscaled while alpha is still returned true.
 */
template <int D, int BC, bool TRACE>
static __device__ __forceinline__ float
fast_softmax_row(float (&s)[BC / 8][4], int h, float &m, float &l,
    float (&o)[D / 8][4], float scale_log2, int no_rescale)
{
	float mx = m;

#pragma unroll
	for (int nb = 0; nb < BC / 8; nb++)
		mx = fmaxf(mx, fmaxf(s[nb][2 * h], s[nb][2 * h + 1]));
	/* The four threads of a quad hold the row together. */
	mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
	mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
	const float ms = mx == -INFINITY ? 0.f : mx * scale_log2;
	const float alpha = fast_exp2(m * scale_log2 - ms);
	const float keep = TRACE && no_rescale ? 1.f : alpha;
	m = mx;
	l *= keep;
#pragma unroll
	for (int db = 0; db < D / 8; db++) {
		o[db][2 * h] *= keep;
		o[db][2 * h + 1] *= keep;
	}
#pragma unroll
	for (int nb = 0; nb < BC / 8; nb++)
#pragma unroll
		for (int e = 2 * h; e < 2 * h + 2; e++) {
			const float pv = fast_exp2(fmaf(s[nb][e], scale_log2,
			    -ms));
			s[nb][e] = pv;
			l += pv;
		}
	return alpha;
}

/*
 * The softmax of every row of the warp's tile; al gets each row's alpha
 * (read only by the trace: unused, it costs nothing).
 */
template <int D, int BC, int MT, bool TRACE>
static __device__ __forceinline__ void
fast_softmax(float (&s)[MT][BC / 8][4], float (&m)[MT][2], float (&l)[MT][2],
    float (&o)[MT][D / 8][4], float (&al)[MT][2], float scale_log2,
    int no_rescale)
{
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int h = 0; h < 2; h++)
			al[mt][h] = fast_softmax_row<D, BC, TRACE>(s[mt], h,
			    m[mt][h], l[mt][h], o[mt], scale_log2, no_rescale);
}

/* o += P V for the V tile at vb, P = s rounded to 16 bits in registers. */
template <int D, int BC, int MT, bool BF16>
static __device__ __forceinline__ void
fast_pv(float (&o)[MT][D / 8][4], const float (&s)[MT][BC / 8][4],
    const struct fast_lane &L, uint32_t vb)
{
#pragma unroll
	for (int kk = 0; kk < BC / 16; kk++) {
		uint32_t a[MT][4];
#pragma unroll
		for (int mt = 0; mt < MT; mt++) {
			a[mt][0] = fast_pack<BF16>(s[mt][2 * kk][0],
			    s[mt][2 * kk][1]);
			a[mt][1] = fast_pack<BF16>(s[mt][2 * kk][2],
			    s[mt][2 * kk][3]);
			a[mt][2] = fast_pack<BF16>(s[mt][2 * kk + 1][0],
			    s[mt][2 * kk + 1][1]);
			a[mt][3] = fast_pack<BF16>(s[mt][2 * kk + 1][2],
			    s[mt][2 * kk + 1][3]);
		}
#pragma unroll
		for (int nd2 = 0; nd2 < D / 16; nd2++) {
			uint32_t b[4];
			fast_ldsm_x4_trans(vb + kk * 16 * D * 2 + L.v_off +
			    (((2 * nd2 + L.v_ch) ^ L.x7) << 4), b);
#pragma unroll
			for (int mt = 0; mt < MT; mt++) {
				fast_mma<BF16>(o[mt][2 * nd2], a[mt], b[0],
				    b[1]);
				fast_mma<BF16>(o[mt][2 * nd2 + 1], a[mt], b[2],
				    b[3]);
			}
		}
	}
}

/*
 * TRACE builds: the state of this warp's rows after tile j of row block i
 * (fast.h's struct fast_trace).  l is each thread's partial sum over its
 * columns: the quad adds them, as the epilogue does.  Rows past Tq are
 * not written.
 */
template <int D, int BR, int MT>
static __device__ void
fast_trace_tile(const struct fast_params &p, const float (&o)[MT][D / 8][4],
    const float (&m)[MT][2], const float (&l)[MT][2], const float (&al)[MT][2],
    size_t bh, int i, int j, int wrow, int lane)
{
	const int g = lane >> 2, t4 = lane & 3;

#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float lt = l[mt][h];
			lt += __shfl_xor_sync(0xffffffffu, lt, 1);
			lt += __shfl_xor_sync(0xffffffffu, lt, 2);
			const int rl = wrow + mt * 16 + g + 8 * h;
			if (i * BR + rl >= p.tq)
				continue;
			const size_t at = ((bh * gridDim.x + i) * p.tc + j) *
			    BR + rl;
			if (t4 == 0) {
				p.tr_m[at] = m[mt][h];
				p.tr_alpha[at] = al[mt][h];
				p.tr_l[at] = lt;
			}
			if (p.tr_acc == NULL)
				continue;
#pragma unroll
			for (int db = 0; db < D / 8; db++) {
				float *a = p.tr_acc + at * D + db * 8 + 2 * t4;
				a[0] = o[mt][db][2 * h];
				a[1] = o[mt][db][2 * h + 1];
			}
		}
}

/*
 * One block: query rows [i Br, i Br + Br) of one (batch, head), i counted
 * from the last row block.  D head width, BR x BC tiles, WARPS warps of
 * MT = BR / (16 WARPS) m16 tiles each, QREG: Q fragments in registers,
 * MINB: blocks per multiprocessor asked of the compiler, TRACE: write the
 * trace after every tile.
 */
template <int D, int BR, int BC, int WARPS, bool QREG, int MINB,
    bool BF16, bool TRACE>
__global__ void __launch_bounds__(WARPS * 32, MINB)
fast_fwd_kernel(const struct fast_params p)
{
	constexpr int THREADS = WARPS * 32;
	constexpr int MT = BR / (16 * WARPS);	/* m16 tiles per warp */
	constexpr uint32_t TILEB = BC * D * 2;	/* bytes of a K or V tile */
	static_assert(MT >= 1 && BR == 16 * WARPS * MT,
	    "Br must be 16 * warps * MT");
	static_assert(BC % 16 == 0 && D % 16 == 0,
	    "Bc and d must be multiples of 16");
	static_assert(!QREG || MT == 1,
	    "Q in registers only with one m tile a warp");

	extern __shared__ __align__(128) uint8_t fast_smem[];
	const uint32_t sQ = fast_smem_addr(fast_smem);
	const uint32_t sK = sQ + BR * D * 2;	/* two K buffers */
	const uint32_t sV = sK + 2 * TILEB;	/* two V buffers */

	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int row0 = (gridDim.x - 1 - blockIdx.x) * BR;
	const size_t bh = (size_t)blockIdx.z * gridDim.y + blockIdx.y;
	const uint16_t *qg = p.q + bh * p.tq * D;
	const uint16_t *kg = p.k + bh * p.tk * D;
	const uint16_t *vg = p.v + bh * p.tk * D;
	const int wrow = warp * 16 * MT;	/* its first row in Q_i */
	const struct fast_lane L = fast_lane_init<D>(sQ, wrow, lane);

	/* The key tiles [j0, j0 + nt) this row block sees (tc_mask.cuh):
	 * a causal mask or a window skips the rest, never loaded. */
	int j0, j1;
	tc_rule_tiles(p.rule, row0, BR, p.tq, p.tk, BC, &j0, &j1);
	const int nt = j1 - j0;
	const float slope = tc_rule_slope(p.rule, blockIdx.y);
	const int wfirst = row0 + wrow, wlast = wfirst + 16 * MT - 1;

	float o[MT][D / 8][4];
	float m[MT][2], l[MT][2], al[MT][2];
	float s[MT][BC / 8][4];
#pragma unroll
	for (int mt = 0; mt < MT; mt++) {
#pragma unroll
		for (int db = 0; db < D / 8; db++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				o[mt][db][e] = 0.f;
		m[mt][0] = m[mt][1] = -INFINITY;
		l[mt][0] = l[mt][1] = 0.f;
	}

	FAST_REC_DECL(rec, p, warp, lane);
	/* Commit groups, oldest first: {Q, K0} {V0}, then per tile. */
	FAST_REC_AT(cq);
	fast_load_tile<BR, D, THREADS>(sQ, qg, row0, p.tq, tid);
	FAST_REC(rec, cq, PIPELINE_COPY_Q, -1, 0, 0);
	FAST_REC_AT(ck);
	if (nt > 0)
		fast_load_tile<BC, D, THREADS>(sK, kg, j0 * BC, p.tk, tid);
	fast_cp_commit();
	if (nt > 0)
		FAST_REC(rec, ck, PIPELINE_COPY_K, 0, 0, 0);
	FAST_REC_AT(cv);
	if (nt > 0)
		fast_load_tile<BC, D, THREADS>(sV, vg, j0 * BC, p.tk, tid);
	fast_cp_commit();
	if (nt > 0)
		FAST_REC(rec, cv, PIPELINE_COPY_V, 0, 0, 0);

	uint32_t qf[QREG ? D / 16 : 1][4];
	if constexpr (QREG) {
		fast_cp_wait<1>();
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < D / 16; kk++)
			fast_ldsm_x4(L.q_off +
			    (((2 * kk + L.q_ch) ^ L.x7) << 4), qf[kk]);
	}

	/*
	 * FA2's order, two barriers a tile:
	 *   wait K_j; barrier; issue K_j+1, V_j+1 | S = Q K_j^T; softmax |
	 *   wait V_j; barrier | O += P V_j
	 */
	for (int j = 0; j < nt; j++) {
		const uint32_t cur = (j & 1) * TILEB;
		const uint32_t nxt = ((j + 1) & 1) * TILEB;

		/* The loads of tile j + 1 into the buffers of tile j - 1. */
#define FAST_REFILL() do {						\
		FAST_REC_AT(rk);					\
		if (j + 1 < nt)						\
			fast_load_tile<BC, D, THREADS>(sK + nxt, kg,	\
			    (j0 + j + 1) * BC, p.tk, tid);		\
		fast_cp_commit();					\
		if (j + 1 < nt)						\
			FAST_REC(rec, rk, PIPELINE_COPY_K, j + 1,	\
			    (j + 1) & 1, (j + 1) >> 1);			\
		FAST_REC_AT(rv);					\
		if (j + 1 < nt)						\
			fast_load_tile<BC, D, THREADS>(sV + nxt, vg,	\
			    (j0 + j + 1) * BC, p.tk, tid);		\
		fast_cp_commit();					\
		if (j + 1 < nt)						\
			FAST_REC(rec, rv, PIPELINE_COPY_V, j + 1,	\
			    (j + 1) & 1, (j + 1) >> 1);			\
} while (0)
		FAST_REC_AT(wk);
		fast_cp_wait<1>();	/* K_j is here, V_j may not be */
		FAST_REC(rec, wk, PIPELINE_WAIT_FULL_K, j, j & 1, j >> 1);
		if (FAST_EARLY_REFILL)
			FAST_REFILL();
		if (j > 0) {
			FAST_REC_NOW(rec, PIPELINE_RELEASE_K, j - 1,
			    (j - 1) & 1, (j - 1) >> 1);
			FAST_REC_NOW(rec, PIPELINE_RELEASE_V, j - 1,
			    (j - 1) & 1, (j - 1) >> 1);
		}
		FAST_REC_AT(bk);
		__syncthreads();
		FAST_REC(rec, bk, PIPELINE_BARRIER, j, -1, 0);
		if (!FAST_EARLY_REFILL)
			FAST_REFILL();
#undef FAST_REFILL

		FAST_REC_AT(qk);
		fast_qk<D, BC, MT, QREG, BF16>(s, qf, L, sK + cur);
		FAST_REC(rec, qk, PIPELINE_ISSUE_QK, j, j & 1, j >> 1);
		FAST_REC_AT(sx);
		if (tc_rule_partial(p.rule, j0 + j, BC, wfirst, wlast, p.tq,
		    p.tk))
			fast_rules<BC, MT, true>(s, p.rule, slope, j0 + j,
			    wfirst, lane, p.tq, p.tk);
		else if (p.rule.bends)
			fast_rules<BC, MT, false>(s, p.rule, slope, j0 + j,
			    wfirst, lane, p.tq, p.tk);
		fast_softmax<D, BC, MT, TRACE>(s, m, l, o, al, p.scale_log2,
		    p.no_rescale);
		FAST_REC(rec, sx, PIPELINE_SOFTMAX, j, -1, 0);

		FAST_REC_AT(wv);
		fast_cp_wait<2>();		/* V_j is here */
		FAST_REC(rec, wv, PIPELINE_WAIT_FULL_V, j, j & 1, j >> 1);
		FAST_REC_AT(bv);
		__syncthreads();
		FAST_REC(rec, bv, PIPELINE_BARRIER, j, -1, 0);
		FAST_REC_AT(pv);
		fast_pv<D, BC, MT, BF16>(o, s, L, sV + cur);
		FAST_REC(rec, pv, PIPELINE_ISSUE_PV, j, j & 1, j >> 1);
		if constexpr (TRACE)
			fast_trace_tile<D, BR, MT>(p, o, m, l, al, bh,
			    row0 / BR, j0 + j, wrow, lane);
	}

	/*
	 * Epilogue.  Every copy into Q's tile must have landed (when nt = 0 no
	 * wait ran yet) before a warp reuses its rows of it for O.
	 */
	FAST_REC_AT(we);
	fast_cp_wait<0>();
	__syncthreads();
	FAST_REC(rec, we, PIPELINE_BARRIER, -1, -1, 0);
	FAST_REC_AT(ep);
	const int g = lane >> 2, t4 = lane & 3;
	const size_t orow = bh * p.tq + row0;
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float lt = l[mt][h];
			lt += __shfl_xor_sync(0xffffffffu, lt, 1);
			lt += __shfl_xor_sync(0xffffffffu, lt, 2);
			const float inv = lt > 0.f ? 1.f / lt : 0.f;
			const int rl = wrow + mt * 16 + g + 8 * h;
#pragma unroll
			for (int db = 0; db < D / 8; db++) {
				const uint32_t v = fast_pack<BF16>(
				    o[mt][db][2 * h] * inv,
				    o[mt][db][2 * h + 1] * inv);
				*(uint32_t *)(fast_smem + fast_swz<D>(rl, db) +
				    4 * t4) = v;
			}
			if (t4 == 0 && row0 + rl < p.tq)
				p.lse[orow + rl] = lt > 0.f ?
				    m[mt][h] * p.scale + logf(lt) : -INFINITY;
		}
	__syncwarp();
	constexpr int CPR = D / 8;
#pragma unroll
	for (int it = 0; it < 16 * MT * CPR / 32; it++) {
		const int c = it * 32 + lane;
		const int rl = wrow + c / CPR, ch = c % CPR;
		if (row0 + rl < p.tq)
			*(uint4 *)(p.o + (orow + rl) * D + ch * 8) =
			    *(const uint4 *)(fast_smem + fast_swz<D>(rl, ch));
	}
	FAST_REC(rec, ep, PIPELINE_EPILOGUE, -1, -1, 0);
	FAST_REC_END(rec);
}

typedef cudaError_t (*fast_launcher)(const struct fast_params *, int, int,
    cudaStream_t, const char **);

template <int D, int BR, int BC, int WARPS, bool QREG, int MINB,
    bool BF16, bool TRACE>
static cudaError_t
fast_launch(const struct fast_params *p, int batch, int heads,
    cudaStream_t stream, const char **call)
{
	void (*kern)(const struct fast_params) =
	    fast_fwd_kernel<D, BR, BC, WARPS, QREG, MINB, BF16, TRACE>;
	const int smem = (BR + 4 * BC) * D * 2;	/* Q, 2 K, 2 V tiles */
	dim3 grid((p->tq + BR - 1) / BR, heads, batch);
	cudaError_t e;

	*call = "cudaFuncSetAttribute";
	e = cudaFuncSetAttribute(kern,
	    cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
	if (e != cudaSuccess)
		return e;
	*call = "fast_fwd_kernel launch";
	kern<<<grid, WARPS * 32, smem, stream>>>(*p);
	return cudaGetLastError();
}

struct fast_variant {
	struct fast_config cfg;
	fast_launcher launch[2][2];	/* [traced][enum fast_dtype] */
};

#define FAST_VARIANT(D, BR, BC, W, QR, MB) { { D, BR, BC, W, QR }, {	\
	{ fast_launch<D, BR, BC, W, QR, MB, false, false>,		\
	  fast_launch<D, BR, BC, W, QR, MB, true, false> },		\
	{ fast_launch<D, BR, BC, W, QR, MB, false, true>,		\
	  fast_launch<D, BR, BC, W, QR, MB, true, true> } } }

/*
 * The variants a user can pick, per d the default first, then each other
 * Br x Bc (tcrun.cu runs a tiling as the first variant with those
 * tiles).  The defaults were the fastest on the H200
 * (doc/performance.md); FA2's tilings and Q in registers at 64 x 64 stay
 * for other chips.  dev/cuda/fast/ builds this file with its own
 * FAST_VARIANTS, the variants measured against these.
 */
#ifndef FAST_VARIANTS
#define FAST_VARIANTS							\
	FAST_VARIANT(64, 128, 64, 4, false, 1),		/* default */	\
	FAST_VARIANT(64, 128, 128, 4, false, 1),	/* FA2's */	\
	FAST_VARIANT(64, 64, 64, 4, true, 2),				\
	FAST_VARIANT(128, 128, 32, 4, false, 1),	/* default */	\
	FAST_VARIANT(128, 128, 64, 4, false, 1),	/* FA2's */
#endif
static const struct fast_variant fast_variants[] = { FAST_VARIANTS };
#define FAST_NVARIANTS ((int)(sizeof fast_variants / sizeof fast_variants[0]))

/* The default for each d: i-th variant of that d (measured fastest). */
#define FAST_DEFAULT_D64 0
#define FAST_DEFAULT_D128 0

static const struct fast_variant *
fast_find(int d, int i)
{
	int n = 0;

	if (i < 0)
		i = d == 64 ? FAST_DEFAULT_D64 : FAST_DEFAULT_D128;
	for (int v = 0; v < FAST_NVARIANTS; v++) {
		if (fast_variants[v].cfg.d != d)
			continue;
		if (n++ == i)
			return &fast_variants[v];
	}
	return NULL;
}

#ifndef FAST_RECORD
extern "C" int
fast_attention_variant(int d, int i, struct fast_config *out)
{
	const struct fast_variant *v = fast_find(d, i);

	if (v == NULL)
		return -1;
	*out = v->cfg;
	return 0;
}

extern "C" int
fast_attention_fwd(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int tq, int tk, int d, int dtype,
    int causal, float scale, int variant, void *stream, char *err,
    size_t errlen)
{
	return fast_attention_trace(q, k, v, o, lse, batch, heads, tq, tk, d,
	    dtype, causal, scale, variant, NULL, stream, err, errlen);
}

extern "C" int
fast_attention_trace(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int tq, int tk, int d, int dtype,
    int causal, float scale, int variant, const struct fast_trace *tr,
    void *stream, char *err, size_t errlen)
{
	const struct tc_mask mask = tc_mask_causal(causal);

	return fast_attention_masked(q, k, v, o, lse, batch, heads, tq, tk, d,
	    dtype, &mask, scale, variant, tr, stream, err, errlen);
}

extern "C" int
fast_attention_masked(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int tq, int tk, int d, int dtype,
    const struct tc_mask *mask, float scale, int variant,
    const struct fast_trace *tr, void *stream, char *err, size_t errlen)
{
	const struct fast_variant *fv;
	struct fast_params p;
	const char *call = "";
	cudaError_t e;

	if (tc_args_check("fast_attention_fwd", q, k, v, o, lse, batch, heads,
	    tq, tk, dtype, 0, NULL, err, errlen) != 0)
		return -1;
	if ((fv = fast_find(d, variant)) == NULL)
		return tc_args_no_variant("fast_attention_fwd", variant, d, err,
		    errlen);
	if (tc_args_trace("fast_attention_trace", tr, err, errlen) != 0)
		return -1;
	if (tc_rule_make("fast_attention_fwd", mask, tc_args_scale(scale, d),
	    &p.rule, &p.scale, err, errlen) != 0)
		return -1;

	p.q = (const uint16_t *)q;
	p.k = (const uint16_t *)k;
	p.v = (const uint16_t *)v;
	p.o = (uint16_t *)o;
	p.lse = lse;
	p.tq = tq;
	p.tk = tk;
	p.scale_log2 = p.scale * 1.4426950408889634f;
	p.tr_m = tr != NULL ? tr->m : NULL;
	p.tr_alpha = tr != NULL ? tr->alpha : NULL;
	p.tr_l = tr != NULL ? tr->l : NULL;
	p.tr_acc = tr != NULL ? tr->acc : NULL;
	p.tc = (tk + fv->cfg.bc - 1) / fv->cfg.bc;
	p.no_rescale = tr != NULL && tr->no_rescale;

	e = fv->launch[tr != NULL][dtype](&p, batch, heads,
	    (cudaStream_t)stream, &call);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "%s failed at %s:%d: %s", call, __FILE__,
		    __LINE__, cudaGetErrorString(e));
		return -1;
	}
	return 0;
}
#endif /* !FAST_RECORD: fast_record.cu has the recording's entry points */
