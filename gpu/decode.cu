/*
 * decode.cu - attention for decoding: a few query rows per head against a
 * long K/V cache.  fp16 or bf16 in, float32 accumulation, d = 128.
 *
 * Decoding reads every key and value once and does 4 d flops per key and
 * query row with them: a few flops a byte, far below what the SMs could
 * do.  Its limit is HBM bandwidth, so the kernel is built to keep as many
 * bytes in flight as the memory system can take, and nothing else:
 *
 * - Grouped heads packed: the H/G query heads sharing a K/V head, and
 *   their Tq rows, are the rows of one block (row (pos, hh) at pos H/G +
 *   hh, FlashAttention's order), so K and V are read once per group, not
 *   once per query head.  (Up to DECODE_MAX_ROWS rows a block.)
 * - Split-KV: one block per (batch, K/V head, row chunk, key range), as
 *   many ranges as fill the SMs (decode_pick_splits): with B G groups
 *   alone, a batch of one would leave most of 132 SMs idle.
 * - One row a block (decode_kernel): no tensor cores and no shared
 *   memory for K and V.  A warp reads 2 U consecutive keys an iteration
 *   (U = 4 for up to 4 rows): half-warp h takes keys base + 2u + h, and
 *   lane c of a half holds dims 8c .. 8c+7 of them, one 16-byte load
 *   each of K and V, all 2 U loads issued before any is used: a warp
 *   streams 2 x 2 U x 256 contiguous bytes.  The lane's q dims sit in
 *   registers (scaled by scale log2(e), so the exponent is one exp2); a
 *   row's dot product is 8 multiply-adds in the lane and a butterfly
 *   across the 16 lanes of the half that leaves each lane one finished
 *   (row, key) score: 15 shuffles for 16 scores instead of 4 each.  The
 *   online softmax then runs per half-warp (max over its keys, alpha =
 *   2^(m - m'), p = 2^(s - m')), and every lane gathers the p of its half
 *   to update its 8 dims of each row.
 * - Packed rows, 2 to 8 a block (decode_mma_kernel): the same loads
 *   straight to registers, the scores and the update on the tensor cores
 *   (mma.sync), because the kernel above pays 4 x 8 multiply-adds a key
 *   and lane per row in float32, and with 4 rows that arithmetic left
 *   too few bytes in flight (at 4 rows the tensor cores were 3 to 24 %
 *   faster on the H200).
 * - Long ranges, one row or packed (decode_ring_kernel, where
 *   decode_takes_ring says so): the tensor cores fed by a cp.async ring
 *   of one iteration ahead, read with ldmatrix; its copies read whole
 *   keys, where the fragment-shaped loads above read 64 bytes of each of
 *   eight keys.  The ranges are then cut to DECODE_RING_RANGE keys.
 * - A head start (the two kernels without the ring): as a block starts,
 *   one thread asks L2 for its first DECODE_HEAD_START iterations of K
 *   and V (cp.async.bulk.prefetch.L2, no register or shared memory
 *   held), so the memory system is full from the first microsecond
 *   instead of after the warps' first round of loads.  It pays where a
 *   block's range is short (about 3 % at batch 1, 8 K/V heads, Tk =
 *   32768 on the H200); asking for more crowds L2 and was slower.
 * - The end of a range: the two halves of a warp, then the warps of the
 *   block, merge their (m, l, u) with merge.h's rule (the simulator's
 *   combine), and the block writes its partial (m, l, u) in float32.  The
 *   last block of a group to finish (an atomic ticket; partials read
 *   through L2) merges the group's partials with the same rule, its
 *   threads each taking a contiguous share left to right and the shares
 *   then merged left to right, and writes O and lse: no second launch.
 *   With one range the block writes O directly.
 *
 * - The cache's layout (decode_attention_kv): contiguous (B, G, Tk, d),
 *   or paged as flash_attn_with_kvcache pages it, a pool (pages,
 *   page_size, G, d) and a block table (B, max_pages); and a cache length
 *   Tk_b per batch entry or one Tk for all.  Every key address comes
 *   from kv_at: the kernels read keys in groups of 8 or 16 from a
 *   multiple of 8 or 16 (a range starts at a multiple of 16:
 *   decode_range_keys), so with pages of a multiple of 16 keys one look-
 *   up of the table serves a group, and the loads stay 16-byte rows of
 *   256 contiguous bytes a key.  Each kernel is built contiguous and
 *   paged (its PG), so the contiguous one carries none of the table's
 *   arithmetic.  A paged block goes without the head start (its keys
 *   are no one run of bytes).  Keys from Tk_b on are
 *   outside every range of entry b: a range with none writes the empty
 *   partial (m = -inf, l = 0) and takes its ticket like any other, so the
 *   last block still merges them all; an entry of no keys gets O = 0,
 *   lse = -inf.  The causal diagonal is at r + Tk_b - Tq.
 *
 * m is kept in base-2 units while the keys stream (one exp2 a score) and
 * turned into natural units (m ln 2) before the merges, which are
 * merge.h's own, in natural units.  A row that has seen only masked
 * keys has m = -inf: its exponent base is taken as 0 so p = 2^-inf = 0
 * and alpha = 0 times an l and u that are still 0.
 *
 * The other ways to feed the loop that were measured against these (4
 * warps a block, a cp.async ring without tensor cores, no head start)
 * live in the repository's dev/cuda/decode/, outside the build.
 */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "decode.h"
#include "model/merge.h"
}

struct decode_params {
	const void *q, *k, *v;
	void *o;
	float *lse;
	int heads, kv_heads, tq, tk;
	int group;		/* H / G */
	int rows;		/* packed rows of a group: group Tq */
	int chunks;		/* row chunks of a group */
	int splits, keys;	/* ranges, keys a range */
	float qscale;		/* scale log2(e) */
	int causal;
	const int *seqlens;	/* (B) keys of each entry's cache, or NULL: tk */
	const int *table;	/* (B, max_pages) pages of the pool, or NULL */
	int page_size, max_pages;
	int key_stride;		/* values from a key to the next (in a page) */
	float *ws_u;		/* (groups, splits, ROWS, d) partial u */
	float *ws_ml;		/* (groups, splits, ROWS, 2) partial m, l */
	unsigned *tickets;	/* (groups) ranges done */
};

template <int DT> struct dtype_of;
template <> struct dtype_of<DECODE_FP16> { typedef __half T; };
template <> struct dtype_of<DECODE_BF16> { typedef __nv_bfloat16 T; };

/* Eight 16-bit values (one 16-byte load) as floats. */
template <int DT>
__device__ __forceinline__ void
unpack8(uint4 raw, float *f)
{
	const uint32_t w[4] = { raw.x, raw.y, raw.z, raw.w };
	int i;

#pragma unroll
	for (i = 0; i < 4; i++) {
		float2 x;
		if (DT == DECODE_FP16)
			x = __half22float2(*reinterpret_cast<const __half2 *>(&w[i]));
		else
			x = __bfloat1622float2(
			    *reinterpret_cast<const __nv_bfloat162 *>(&w[i]));
		f[2 * i] = x.x;
		f[2 * i + 1] = x.y;
	}
}

/* Four floats as four 16-bit values (8 bytes). */
template <int DT>
__device__ __forceinline__ uint2
pack4(const float *f)
{
	uint2 out;
	uint32_t w[2];
	int i;

#pragma unroll
	for (i = 0; i < 2; i++) {
		if (DT == DECODE_FP16) {
			__half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
			w[i] = *reinterpret_cast<uint32_t *>(&h);
		} else {
			__nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
			w[i] = *reinterpret_cast<uint32_t *>(&h);
		}
	}
	out.x = w[0];
	out.y = w[1];
	return out;
}

/* A 16-byte load of data read once: through the read-only path, not
 * kept in L1. */
__device__ __forceinline__ uint4
load_stream(const void *p)
{
	uint4 r;

	asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
	    : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
	return r;
}

/* cp.async: 16 bytes from global to shared memory, without holding a
 * register while in flight.  .ca, not the .cg that skips L1: on the H200
 * .cg asked L2 for every sector twice and streamed 15 % slower (batch 8,
 * 8 K/V heads, Tk = 131072: 3.98 against 4.66 TB/s). */
__device__ __forceinline__ void
copy_async(void *smem, const void *gmem)
{
	const unsigned s = (unsigned)__cvta_generic_to_shared(smem);

	asm volatile("cp.async.ca.shared.global [%0], [%1], 16;"
	    :: "r"(s), "l"(gmem) : "memory");
}

__device__ __forceinline__ void
copy_commit(void)
{
	asm volatile("cp.async.commit_group;" ::: "memory");
}

/* Waits until at most n of this thread's copy groups are in flight. */
template <int N>
__device__ __forceinline__ void
copy_wait(void)
{
	asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}

#define DECODE_HEAD_START 2	/* iterations a block asks of L2 as it starts */

/* The head start: as a block starts, its thread 0 asks L2 for the first
 * DECODE_HEAD_START iterations (of `stride` keys) of its range k0 .. k1
 * of K and of V at kv_off: one bulk prefetch each, holding no register
 * and no shared memory while the bytes come.  sm_90 and on; a no-op
 * before. */
template <bool PG>
__device__ __forceinline__ void
head_start(const struct decode_params &P, const size_t &kv_off,
    const int &k0, const int &k1, const int &stride)
{
#if __CUDA_ARCH__ >= 900
	/* Paged, a key's row lies G d values from the next one's
	 * (flash_attn_with_kvcache's (pages, page_size, G, d)): the first
	 * iterations are no one run of bytes, so a paged cache goes
	 * without the head start. */
	if (threadIdx.x != 0 || PG || k1 <= k0)
		return;
	const int n = min(k1 - k0, DECODE_HEAD_START * stride);
	const size_t off = (kv_off + (size_t)k0 * DECODE_D) * 2;
	const uint32_t bytes = (uint32_t)n * DECODE_D * 2;

	asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
	    :: "l"((const char *)P.k + off), "r"(bytes) : "memory");
	asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
	    :: "l"((const char *)P.v + off), "r"(bytes) : "memory");
#endif
}

#define DECODE_RING_STAGES 2	/* the tensor cores' ring: slots a warp */

__host__ __device__ constexpr int
ilog2(int n)
{
	return n <= 1 ? 0 : 1 + ilog2(n / 2);
}

/* merge.h's rule for (m, l) and n accumulator entries: a = a + b. */
__device__ __forceinline__ void
merge_into(float &m_a, float &l_a, float *u_a, float m_b, float l_b,
    const float *u_b, int n)
{
	struct merge_weights w = merge_weigh(MERGE_MLU, MERGE_BUG_NONE, m_a, l_a,
	    m_b, l_b);
	int i;

	m_a = w.m;
	l_a = w.l;
#pragma unroll
	for (i = 0; i < n; i++)
		u_a[i] = merge_mix(w, u_a[i], u_b[i]);
}

/* Where a block works: its key range, its group's rows, its K and V. */
struct decode_block {
	int split, b, g;	/* key range, batch entry, K/V head */
	int group_id;		/* (batch, K/V head, row chunk), the tickets' index */
	int row0;		/* the chunk's first packed row */
	int k0, k1;		/* the range's keys (k1 <= k0: none) */
	int tk;			/* the keys of entry b's cache: Tk_b */
	size_t kv_off;		/* K/V head g of entry b, in values (paged:
				 * of a pool slot) */
	const int *table;	/* entry b's pages, or NULL: contiguous */
};

__device__ __forceinline__ struct decode_block
decode_block_of(const struct decode_params &P, int rows)
{
	struct decode_block B;
	const int chunk = blockIdx.y % P.chunks;

	B.split = blockIdx.x;
	B.b = blockIdx.z;
	B.g = blockIdx.y / P.chunks;
	B.group_id = (B.b * P.kv_heads + B.g) * P.chunks + chunk;
	B.row0 = chunk * rows;
	B.tk = P.seqlens == NULL ? P.tk : min(max(P.seqlens[B.b], 0), P.tk);
	B.k0 = B.split * P.keys;
	B.k1 = min(B.tk, B.k0 + P.keys);
	if (P.table == NULL) {
		B.table = NULL;
		B.kv_off = ((size_t)B.b * P.kv_heads + B.g) * P.tk * DECODE_D;
	} else {
		B.table = P.table + (size_t)B.b * P.max_pages;
		B.kv_off = (size_t)B.g * DECODE_D;
	}
	return B;
}

/*
 * Where key `key` of block B's K/V head begins, in values from P.k (and
 * P.v): contiguous, row key of head (b, g) of (B, G, Tk, d); paged, slot
 * key % page_size of page table[b][key / page_size] of the pool (pages,
 * page_size, G, d).  Every address of K and V the kernels read comes
 * from here, once for a group of keys: the kernels read keys in groups
 * of 8 or 16 that start at a multiple of 8 or 16 (a range's first key
 * is a multiple of 16 when paged: decode_attention_kv), and page_size is
 * a multiple of 16, so no group crosses a page and its key j lies at
 * kv_at(base) + (j - base) key_stride.  Keys past a range are read as
 * its last key, inside the same group.
 */
template <bool PG>
__device__ __forceinline__ size_t
kv_at(const struct decode_params &P, const struct decode_block &B, int key)
{
	if (!PG)
		return B.kv_off + (size_t)key * DECODE_D;
	return B.kv_off + ((size_t)__ldg(B.table + key / P.page_size) *
	    P.page_size + key % P.page_size) * (size_t)P.key_stride;
}

/* Dims d0 .. d0 + 3 of packed row R's output, its state (m, l, u)
 * finished: O = u / l in the dtype, and lse with the first dims (a row
 * that saw no key: O = 0, lse = -inf). */
template <int DT>
__device__ __forceinline__ void
decode_write_o(const struct decode_params &P, const struct decode_block &B,
    int R, int d0, float mm, float ll, const float *uu)
{
	typedef typename dtype_of<DT>::T T;
	const int pos = R / P.group, h = B.g * P.group + R % P.group;
	const size_t orow = ((size_t)B.b * P.heads + h) * P.tq + pos;
	float of[4];
	int i;

#pragma unroll
	for (i = 0; i < 4; i++)
		of[i] = ll > 0.0f ? uu[i] / ll : 0.0f;
	*(uint2 *)((T *)P.o + orow * DECODE_D + d0) = pack4<DT>(of);
	if (d0 == 0 && P.lse != NULL)
		P.lse[orow] = ll > 0.0f ? mm + logf(ll) : -INFINITY;
}

/*
 * The end of a block, whatever fed it: sm_u, sm_m, sm_l hold each warp's
 * (m, l, u) of the block's ROWS rows (m in natural units).  Thread t
 * merges the NW states of 4 dims of one row, left to right; the block
 * writes O (one range) or its partial, and the last range of the group
 * to finish merges the group's partials.
 */
template <int DT, int ROWS, int NW>
__device__ __forceinline__ void
decode_finish(const struct decode_params &P, const struct decode_block &B,
    float (*sm_u)[ROWS][DECODE_D], float (*sm_m)[ROWS], float (*sm_l)[ROWS])
{
	constexpr int D = DECODE_D;
	const int group_id = B.group_id, split = B.split, row0 = B.row0;
	__shared__ int sm_last;
	int i;

	const size_t part = (size_t)group_id * P.splits + split;
	for (int t = threadIdx.x; t < ROWS * (D / 4); t += NW * 32) {
		const int rr = t / (D / 4), d0 = (t % (D / 4)) * 4;
		float mm = sm_m[0][rr], ll = sm_l[0][rr], uu[4];

#pragma unroll
		for (i = 0; i < 4; i++)
			uu[i] = sm_u[0][rr][d0 + i];
#pragma unroll
		for (int w2 = 1; w2 < NW; w2++)
			merge_into(mm, ll, uu, sm_m[w2][rr], sm_l[w2][rr],
			    &sm_u[w2][rr][d0], 4);
		if (row0 + rr >= P.rows)
			continue;
		if (P.splits == 1) {
			decode_write_o<DT>(P, B, row0 + rr, d0, mm, ll, uu);
		} else {
			*(float4 *)(P.ws_u + (part * ROWS + rr) * D + d0) =
			    make_float4(uu[0], uu[1], uu[2], uu[3]);
			if (d0 == 0)
				*(float2 *)(P.ws_ml + (part * ROWS + rr) * 2) =
				    make_float2(mm, ll);
		}
	}
	if (P.splits == 1)
		return;

	/* The last range of the group to finish merges them all. */
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0)
		sm_last = atomicAdd(&P.tickets[group_id], 1u) == (unsigned)P.splits - 1;
	__syncthreads();
	if (!sm_last)
		return;
	__threadfence();
	{
		/* NW 32 threads for ROWS D / 4 (row, 4 dims) pairs: SUBS
		 * threads a pair each merge a contiguous share of the
		 * partials, left to right, eight loads in flight at a time;
		 * then the shares merge left to right through shared memory.
		 * The order is ltr's with one level of tree on top. */
		constexpr int PAIRS = ROWS * (D / 4);
		constexpr int SUBS = NW * 32 / PAIRS > 1 ? NW * 32 / PAIRS : 1;
		const size_t first = (size_t)group_id * P.splits;

		for (int t = threadIdx.x; t < PAIRS * SUBS; t += NW * 32) {
			const int pair = t % PAIRS, sub = t / PAIRS;
			const int rr = pair / (D / 4), d0 = (pair % (D / 4)) * 4;
			const int s_begin = sub * P.splits / SUBS;
			const int s_end = (sub + 1) * P.splits / SUBS;
			float mm = -INFINITY, ll = 0.0f, uu[4] = { 0.0f, 0.0f, 0.0f, 0.0f };

			for (int s0 = s_begin; s0 < s_end; s0 += 8) {
				float4 pu[8];
				float2 pml[8];
#pragma unroll
				for (i = 0; i < 8; i++)
					if (s0 + i < s_end) {
						const size_t e = (first + s0 + i) * ROWS + rr;
						pu[i] = __ldcg((const float4 *)(P.ws_u + e * D + d0));
						pml[i] = __ldcg((const float2 *)(P.ws_ml + e * 2));
					}
#pragma unroll
				for (i = 0; i < 8; i++)
					if (s0 + i < s_end) {
						const float ub[4] = { pu[i].x, pu[i].y, pu[i].z,
						    pu[i].w };
						merge_into(mm, ll, uu, pml[i].x, pml[i].y, ub, 4);
					}
			}
#pragma unroll
			for (i = 0; i < 4; i++)
				sm_u[sub][rr][d0 + i] = uu[i];
			if (d0 == 0) {
				sm_m[sub][rr] = mm;
				sm_l[sub][rr] = ll;
			}
		}
		__syncthreads();
		for (int t = threadIdx.x; t < PAIRS; t += NW * 32) {
			const int rr = t / (D / 4), d0 = (t % (D / 4)) * 4;
			float mm = sm_m[0][rr], ll = sm_l[0][rr], uu[4];

			if (row0 + rr >= P.rows)
				continue;
#pragma unroll
			for (i = 0; i < 4; i++)
				uu[i] = sm_u[0][rr][d0 + i];
#pragma unroll
			for (int sub = 1; sub < SUBS; sub++)
				merge_into(mm, ll, uu, sm_m[sub][rr], sm_l[sub][rr],
				    &sm_u[sub][rr][d0], 4);
			decode_write_o<DT>(P, B, row0 + rr, d0, mm, ll, uu);
		}
	}
	/* Ready for the next call. */
	if (threadIdx.x == 0)
		P.tickets[group_id] = 0;
}

/*
 * Block (range, group row chunk, batch).  ROWS packed rows, NW warps;
 * U keys per half-warp an iteration, so NV = ROWS U <= 16 scores fill
 * the 16 lanes of a half after the butterfly.  Up to 4 rows, 16 warps
 * an SM must fit (128 registers a thread), for loads in flight.  Built
 * for one row only (decode_pick_kernel): packed rows run faster on the
 * tensor cores, decode_mma_kernel.
 */
template <int DT, int ROWS, int NW, bool PG>
__global__ void __launch_bounds__(NW * 32, ROWS <= 4 ? 16 / NW : 1)
decode_kernel(const struct decode_params P)
{
	const int kstride = PG ? P.key_stride : DECODE_D;
	typedef typename dtype_of<DT>::T T;
	constexpr int D = DECODE_D;
	constexpr int U = ROWS >= 8 ? 2 : 4;
	constexpr int NV = ROWS * U;
	constexpr int A = ilog2(NV);		/* butterfly steps that split */
	constexpr int SH = 4 - A;		/* lane bits below a score's index */
	constexpr int KEYS = 2 * U;		/* a warp's keys an iteration */
	__shared__ float sm_u[NW][ROWS][D];
	__shared__ float sm_m[NW][ROWS], sm_l[NW][ROWS];

	const struct decode_block B = decode_block_of(P, ROWS);
	const int b = B.b, g = B.g, row0 = B.row0, k0 = B.k0, k1 = B.k1;
	const size_t kv_off = B.kv_off;
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	const int half = lane >> 4, c = lane & 15;
	const T *kb = (const T *)P.k + c * 8;
	const T *vb = (const T *)P.v + c * 8;
	float q[ROWS][8], acc[ROWS][8], m[ROWS], l[ROWS];
	int r, i, u;

	/* This lane's 8 dims of each row's query, scaled for exp2.  Rows
	 * past the group's are zero and never written out. */
#pragma unroll
	for (r = 0; r < ROWS; r++) {
		const int R = row0 + r;

		if (R < P.rows) {
			const int pos = R / P.group, h = g * P.group + R % P.group;
			const T *qp = (const T *)P.q +
			    (((size_t)b * P.heads + h) * P.tq + pos) * D + c * 8;
			unpack8<DT>(*(const uint4 *)qp, q[r]);
#pragma unroll
			for (i = 0; i < 8; i++)
				q[r][i] *= P.qscale;
		} else {
#pragma unroll
			for (i = 0; i < 8; i++)
				q[r][i] = 0.0f;
		}
		m[r] = -INFINITY;
		l[r] = 0.0f;
#pragma unroll
		for (i = 0; i < 8; i++)
			acc[r][i] = 0.0f;
	}

	/* The score this lane holds after the butterfly: index idx = r U +
	 * u of the half's NV, and the key and query position it belongs to. */
	const int idx = c >> SH, r_me = idx / U, u_me = idx % U;
	const int R_me = row0 + r_me;
	const long last_seen = R_me < P.rows ?
	    (long)(R_me / P.group) + B.tk - P.tq : -1;

	/*
	 * One iteration: the warp's 2 U keys from base, given this lane's
	 * 16 bytes of each key's K and V row.
	 */
	auto step = [&](int base, const uint4 *kr, const uint4 *vr) {
		float s[NV];

		/* Partial dot products over this lane's 8 dims. */
#pragma unroll
		for (u = 0; u < U; u++) {
			float kf[8];

			unpack8<DT>(kr[u], kf);
#pragma unroll
			for (r = 0; r < ROWS; r++) {
				float dot = 0.0f;
#pragma unroll
				for (i = 0; i < 8; i++)
					dot = fmaf(q[r][i], kf[i], dot);
				s[r * U + u] = dot;
			}
		}
		/* The butterfly: at each step a lane keeps the half of its
		 * scores its lane bit names and adds the partner's sums of
		 * them; once one score is left, plain sums finish it. */
		{
			int n = NV;
#pragma unroll
			for (int mask = 8; mask >= 1; mask >>= 1) {
				if (n > 1) {
					const bool upper = (lane & mask) != 0;
					n /= 2;
#pragma unroll
					for (i = 0; i < NV / 2; i++) {
						if (i < n) {
							float send = upper ? s[i] : s[i + n];
							float keep = upper ? s[i + n] : s[i];
							s[i] = keep + __shfl_xor_sync(0xffffffffu,
							    send, mask);
						}
					}
				} else
					s[0] += __shfl_xor_sync(0xffffffffu, s[0], mask);
			}
		}
		float sv = s[0];
		{
			const int key = base + 2 * u_me + half;
			if (key >= k1 || (P.causal && (long)key > last_seen))
				sv = -INFINITY;
		}
		/* The tile's max of each row: over the lanes of its U keys. */
		float mx = sv;
#pragma unroll
		for (i = 0; i < ilog2(U); i++)
			mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1 << (SH + i)));
		float m_new[ROWS], m_use[ROWS], my_m = 0.0f;
#pragma unroll
		for (r = 0; r < ROWS; r++) {
			const float t = __shfl_sync(0xffffffffu, mx,
			    (half << 4) | ((r * U) << SH));
			m_new[r] = fmaxf(m[r], t);
			m_use[r] = m_new[r] == -INFINITY ? 0.0f : m_new[r];
			if (r == r_me)
				my_m = m_use[r];
		}
		const float p_me = exp2f(sv - my_m);
		float p[ROWS][U];
#pragma unroll
		for (r = 0; r < ROWS; r++)
#pragma unroll
			for (u = 0; u < U; u++)
				p[r][u] = __shfl_sync(0xffffffffu, p_me,
				    (half << 4) | ((r * U + u) << SH));
#pragma unroll
		for (r = 0; r < ROWS; r++) {
			const float alpha = exp2f(m[r] - m_use[r]);
			float sum = 0.0f;
#pragma unroll
			for (u = 0; u < U; u++)
				sum += p[r][u];
			l[r] = fmaf(alpha, l[r], sum);
			m[r] = m_new[r];
#pragma unroll
			for (i = 0; i < 8; i++)
				acc[r][i] *= alpha;
		}
#pragma unroll
		for (u = 0; u < U; u++) {
			float vf[8];

			unpack8<DT>(vr[u], vf);
#pragma unroll
			for (r = 0; r < ROWS; r++)
#pragma unroll
				for (i = 0; i < 8; i++)
					acc[r][i] = fmaf(p[r][u], vf[i], acc[r][i]);
		}
	};

	const int first = k0 + w * KEYS, stride = NW * KEYS;
	const int iters = first < k1 ? (k1 - first + stride - 1) / stride : 0;
	head_start<PG>(P, kv_off, k0, k1, stride);

	/* Every load of an iteration first: 2 U of 16 bytes in flight per
	 * lane.  Keys past the range read its last key again; they are
	 * masked. */
	for (int it = 0; it < iters; it++) {
		const int base = first + it * stride;
		const size_t at = kv_at<PG>(P, B, base);
		uint4 kr[U], vr[U];

#pragma unroll
		for (u = 0; u < U; u++)
			kr[u] = load_stream(kb + at + (size_t)(min(base + 2 * u +
			    half, k1 - 1) - base) * kstride);
#pragma unroll
		for (u = 0; u < U; u++)
			vr[u] = load_stream(vb + at + (size_t)(min(base + 2 * u +
			    half, k1 - 1) - base) * kstride);
		step(base, kr, vr);
	}

	/* Natural units for the merges, then the two halves of the warp. */
#pragma unroll
	for (r = 0; r < ROWS; r++) {
		float u_b[8];

		m[r] = m[r] * 0.6931471805599453f;
		const float m_b = __shfl_xor_sync(0xffffffffu, m[r], 16);
		const float l_b = __shfl_xor_sync(0xffffffffu, l[r], 16);
#pragma unroll
		for (i = 0; i < 8; i++)
			u_b[i] = __shfl_xor_sync(0xffffffffu, acc[r][i], 16);
		merge_into(m[r], l[r], acc[r], m_b, l_b, u_b, 8);
	}
	/* Then the warps, through shared memory: thread t merges the NW
	 * states of 4 dims of one row, left to right. */
	if (half == 0) {
#pragma unroll
		for (r = 0; r < ROWS; r++) {
#pragma unroll
			for (i = 0; i < 8; i++)
				sm_u[w][r][c * 8 + i] = acc[r][i];
			if (c == 0) {
				sm_m[w][r] = m[r];
				sm_l[w][r] = l[r];
			}
		}
	}
	__syncthreads();

	decode_finish<DT, ROWS, NW>(P, B, sm_u, sm_m, sm_l);
}

/* c += a b for one m16n8k16 tile on the tensor cores, float32
 * accumulation (PTX's fragment layouts). */
template <int DT>
__device__ __forceinline__ void
mma16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
    uint32_t b0, uint32_t b1)
{
	if (DT == DECODE_BF16)
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		    "{%0, %1, %2, %3};"
		    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
	else
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		    "{%0, %1, %2, %3};"
		    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* Two floats rounded to the dtype in one register, lo in the low half. */
template <int DT>
__device__ __forceinline__ uint32_t
pack2(float lo, float hi)
{
	if (DT == DECODE_FP16) {
		__half2 h = __floats2half2_rn(lo, hi);
		return *reinterpret_cast<uint32_t *>(&h);
	}
	__nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&h);
}

/* Half `i` (0 to 7) of two 16-byte rows, side by side in one register:
 * x's in the low half, y's in the high. */
__device__ __forceinline__ uint32_t
pair_half(const uint4 &x, const uint4 &y, int i)
{
	const uint32_t wx = i < 2 ? x.x : i < 4 ? x.y : i < 6 ? x.z : x.w;
	const uint32_t wy = i < 2 ? y.x : i < 4 ? y.y : i < 6 ? y.z : y.w;

	return __byte_perm(wx, wy, (i & 1) ? 0x7632 : 0x5410);
}

/*
 * The online softmax of a warp's 16 keys on the tensor cores (for both
 * kernels below): s[n][0..1] are lane (g, t)'s scores of query row g
 * with keys base + 8 n + 2 t and one more, as the S tiles leave them.
 * They are scaled for exp2 and masked (keys past the range, rows past the
 * group, causal); m and l (the lane's share of row g's sum) move on; pb
 * is P^T's fragment, p rounded to the dtype; a0 and a1 are alpha of
 * query rows 2 t and 2 t + 1, the rows of the lane's accumulators.
 * The sizes come by reference, as the kernels' lambdas see them: so
 * both kernels compile to what they did with this code inline.
 */
template <int DT>
__device__ __forceinline__ void
mma_softmax(const struct decode_params &P, float (&s)[2][4], const int &base,
    const int &k1, const int &lt, const bool &row_ok, const long &last_seen,
    float &m, float &l, uint32_t (&pb)[2], float &a0, float &a1)
{
	float mx = -INFINITY, sum = 0.0f;
	int n, j;

#pragma unroll
	for (n = 0; n < 2; n++)
#pragma unroll
		for (j = 0; j < 2; j++) {
			const int key = base + 8 * n + 2 * lt + j;
			float x2 = s[n][j] * P.qscale;

			if (!row_ok || key >= k1 || (P.causal &&
			    (long)key > last_seen))
				x2 = -INFINITY;
			s[n][j] = x2;
			mx = fmaxf(mx, x2);
		}
	mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
	mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
	const float m_new = fmaxf(m, mx);
	const float m_use = m_new == -INFINITY ? 0.0f : m_new;
	const float alpha = exp2f(m - m_use);

#pragma unroll
	for (n = 0; n < 2; n++) {
		const float p0 = exp2f(s[n][0] - m_use);
		const float p1 = exp2f(s[n][1] - m_use);

		sum += p0 + p1;
		pb[n] = pack2<DT>(p0, p1);
	}
	l = fmaf(alpha, l, sum);
	m = m_new;
	a0 = __shfl_sync(0xffffffffu, alpha, 8 * lt);
	a1 = __shfl_sync(0xffffffffu, alpha, 8 * lt + 4);
}

/* An O^T accumulator tile of the tensor cores (both kernels below)
 * rescaled by alpha before the next P V: entries 0 and 2 are query row
 * 2 t, 1 and 3 row 2 t + 1. */
__device__ __forceinline__ void
mma_rescale(float (&c)[4], const float &a0, const float &a1)
{
	c[0] *= a0;
	c[1] *= a1;
	c[2] *= a0;
	c[3] *= a1;
}

/* The end of a warp's keys on the tensor cores (both kernels below): l
 * summed over the four lanes of row lg, m in natural units, both to
 * shared memory for decode_finish. */
template <int ROWS, int NW>
__device__ __forceinline__ void
mma_m_l_out(const float &m, float &l, const int &lg, const int &lt,
    const int &w, float (*sm_m)[ROWS], float (*sm_l)[ROWS])
{
	l += __shfl_xor_sync(0xffffffffu, l, 1);
	l += __shfl_xor_sync(0xffffffffu, l, 2);
	if (lg < ROWS && lt == 0) {
		sm_m[w][lg] = m * 0.6931471805599453f;
		sm_l[w][lg] = l;
	}
}

/*
 * The packed rows on the tensor cores: block (range, group row chunk,
 * batch), ROWS (2 to 8) packed rows, NW warps, 16 keys a warp an
 * iteration.  With 4 packed rows the arithmetic of the lane-per-8-dims
 * kernel above (4 x 8 dot products and 4 x 8 updates a key, in float32,
 * with shuffles to finish the sums) took long enough that too few bytes
 * were in flight; here each 16 keys cost 24 mma.sync and a few dozen
 * instructions more.  An iteration's 16 loads (8 KB a warp) are all
 * issued before any is used, as in the kernel above.  168 registers a
 * thread: 8 warps make one block an SM (4 warps, three), and the one
 * block of 8 warps measured fastest: fewer, longer contiguous streams.
 *
 * Lane (g, t) = (lane / 4, lane % 4), PTX's m16n8k16 layouts:
 * - S = Q K^T, 16 (query rows, 8 of them real, ROWS used) x 8 keys, two
 *   tiles for 16 keys, 8 k-steps over d.  A dot product does not care in
 *   which order its dims are summed, so a k-step's slots are not dims
 *   16 j .. 16 j + 15 but whatever a lane's 16-byte load gives it: lane
 *   t loads chunks (8 dims) 4 jj + t of its key (jj = 0 to 3), and k-step
 *   j = 2 jj + e takes words 2 e and 2 e + 1 of chunk 4 jj + t.  Q is
 *   loaded the same way, once.  Lane (g, t) then holds the scores of
 *   query row g with keys 2t, 2t + 1 (tile 0) and 8 + 2t, 9 + 2t (tile 1).
 * - O^T = V^T P^T, 16 dims x 8 query rows, 8 tiles over d, k over the
 *   16 keys.  P^T's fragment (rows g, keys 2t, 2t + 1, 8 + 2t, 9 + 2t) is
 *   exactly the scores the lane holds: no shuffle.  V^T's fragment wants
 *   two keys of one dim in a register: the lane loads chunks g and g + 8
 *   of keys 2t, 2t + 1, 8 + 2t, 9 + 2t and pairs their halves with a byte
 *   permute; tile i's row r is dim 8 r + i.  The lane's accumulators are
 *   then dims 8 g + i and 64 + 8 g + i (i = 0 to 7) of query rows 2t and
 *   2t + 1.
 * P is rounded to the dtype for the tensor cores (as FlashAttention
 * does; l sums the float32 p).
 */
template <int DT, int ROWS, int NW, bool PG>
__global__ void __launch_bounds__(NW * 32, 12 / NW)
decode_mma_kernel(const struct decode_params P)
{
	const int kstride = PG ? P.key_stride : DECODE_D;
	typedef typename dtype_of<DT>::T T;
	constexpr int D = DECODE_D;
	constexpr int KEYS = 16;		/* a warp's keys an iteration */
	__shared__ float sm_u[NW][ROWS][D];
	__shared__ float sm_m[NW][ROWS], sm_l[NW][ROWS];

	const struct decode_block B = decode_block_of(P, ROWS);
	const int b = B.b, g = B.g, row0 = B.row0, k0 = B.k0, k1 = B.k1;
	const size_t kv_off = B.kv_off;
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	const int lg = lane >> 2, lt = lane & 3;
	const T *kb = (const T *)P.k + lt * 8;
	const T *vb = (const T *)P.v + lg * 8;
	const int R = row0 + lg;
	const bool row_ok = lg < ROWS && R < P.rows;
	const long last_seen = row_ok ? (long)(R / P.group) + B.tk - P.tq : -1;
	uint4 q[4];
	float acc[8][4], m = -INFINITY, l = 0.0f;
	int i, jj;

	/* Query row lg's chunks 4 jj + lt (zero for rows past the group). */
#pragma unroll
	for (jj = 0; jj < 4; jj++)
		q[jj] = make_uint4(0, 0, 0, 0);
	if (row_ok) {
		const int pos = R / P.group, h = g * P.group + R % P.group;
		const T *qp = (const T *)P.q +
		    (((size_t)b * P.heads + h) * P.tq + pos) * D + lt * 8;
#pragma unroll
		for (jj = 0; jj < 4; jj++)
			q[jj] = *(const uint4 *)(qp + jj * 32);
	}
#pragma unroll
	for (i = 0; i < 8; i++)
		acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;

	/* An iteration's bytes: K of keys lg and 8 + lg (chunks 4 jj + lt),
	 * V of keys 2 lt, 2 lt + 1, 8 + 2 lt, 9 + 2 lt (chunks lg, lg + 8).
	 * Keys past the range read its last key again; they are masked. */
	struct kv16 {
		uint4 k[2][4];
		uint4 v[4][2];
	};
	auto load = [&](int base, kv16 &x) {
		const size_t at = kv_at<PG>(P, B, base);
#pragma unroll
		for (int n = 0; n < 2; n++) {
			const T *kr = kb + at + (size_t)(min(base + 8 * n + lg,
			    k1 - 1) - base) * kstride;
#pragma unroll
			for (int j = 0; j < 4; j++)
				x.k[n][j] = load_stream(kr + j * 32);
		}
#pragma unroll
		for (int n = 0; n < 4; n++) {
			const int key = base + (n >> 1) * 8 + 2 * lt + (n & 1);
			const T *vr = vb + at + (size_t)(min(key, k1 - 1) - base) *
			    kstride;
			x.v[n][0] = load_stream(vr);
			x.v[n][1] = load_stream(vr + 64);
		}
	};
	auto step = [&](int base, const kv16 &x) {
		float s[2][4];
		int n, j;

		/* the scores of row lg: s[n][0..1] keys 8 n + 2 lt + (0, 1) */
#pragma unroll
		for (n = 0; n < 2; n++) {
			s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
			for (j = 0; j < 4; j++) {
				mma16816<DT>(s[n], q[j].x, 0u, q[j].y, 0u, x.k[n][j].x,
				    x.k[n][j].y);
				mma16816<DT>(s[n], q[j].z, 0u, q[j].w, 0u, x.k[n][j].z,
				    x.k[n][j].w);
			}
		}
		uint32_t pb[2];
		float a0, a1;

		mma_softmax<DT>(P, s, base, k1, lt, row_ok, last_seen, m, l, pb,
		    a0, a1);
#pragma unroll
		for (i = 0; i < 8; i++) {
			mma_rescale(acc[i], a0, a1);
			mma16816<DT>(acc[i], pair_half(x.v[0][0], x.v[1][0], i),
			    pair_half(x.v[0][1], x.v[1][1], i),
			    pair_half(x.v[2][0], x.v[3][0], i),
			    pair_half(x.v[2][1], x.v[3][1], i), pb[0], pb[1]);
		}
	};

	const int first = k0 + w * KEYS, stride = NW * KEYS;
	const int iters = first < k1 ? (k1 - first + stride - 1) / stride : 0;

	head_start<PG>(P, kv_off, k0, k1, stride);
	for (int it = 0; it < iters; it++) {
		kv16 x;

		load(first + it * stride, x);
		step(first + it * stride, x);
	}

	/* Each warp's state to shared memory for decode_finish. */
	mma_m_l_out<ROWS, NW>(m, l, lg, lt, w, sm_m, sm_l);
#pragma unroll
	for (int r = 0; r < 2; r++) {
		const int row = 2 * lt + r;

		if (row < ROWS)
#pragma unroll
			for (i = 0; i < 8; i++) {
				sm_u[w][row][8 * lg + i] = acc[i][r];
				sm_u[w][row][64 + 8 * lg + i] = acc[i][2 + r];
			}
	}
	__syncthreads();
	decode_finish<DT, ROWS, NW>(P, B, sm_u, sm_m, sm_l);
}

/* One ldmatrix.x4 (.trans: each 8 x 8 matrix transposed): four 8 x 8
 * tiles of 16-bit values, lane l giving the address of row l % 8 of
 * tile l / 8. */
template <bool TRANS>
__device__ __forceinline__ void
ldmatrix4(uint32_t (&x)[4], const void *row)
{
	const unsigned s = (unsigned)__cvta_generic_to_shared(row);

	if (TRANS)
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
		    "{%0, %1, %2, %3}, [%4];"
		    : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3]) : "r"(s));
	else
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
		    "{%0, %1, %2, %3}, [%4];"
		    : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3]) : "r"(s));
}

/*
 * The packed rows on the tensor cores, fed through shared memory as
 * FlashAttention feeds them: the arithmetic of decode_mma_kernel, but
 * each warp keeps a ring of DECODE_RING_STAGES slots (16 keys of K, then
 * of V: 8 KB), filled by cp.async one iteration ahead and read back with
 * ldmatrix.  The copies read whole keys: lane l takes 16-byte chunk l %
 * 16 of key 2 c + l / 16 (c = 0 to 7), two keys' 512 contiguous bytes an
 * instruction, where decode_mma_kernel's loads, shaped as its fragments,
 * take 64 bytes of each of eight keys; and while a slot is computed the
 * next one's bytes are in flight.  A key's 256 bytes lie in its slot
 * with chunk c at c ^ (key % 8), so the eight rows an ldmatrix reads at
 * once fall in eight different bank groups.  The ring (128 KB) holds
 * one block of 8 warps an SM, and sm_u is laid over it at the end.
 *
 * Lane (g, t) = (lane / 4, lane % 4), dims in natural order:
 * - S = Q K^T: k-step j is dims 16 j .. 16 j + 15; one ldmatrix.x4 of K
 *   (keys 0-7 and 8-15, chunks 2 j and 2 j + 1) gives both 8-key tiles'
 *   B fragments (key g, dims 2 t, 2 t + 1 and 8 + 2 t, 9 + 2 t).
 * - O^T = V^T P^T: the same addresses in V with .trans give dim tile i's
 *   A fragment (dims 16 i + g and 16 i + 8 + g, keys 2 t, 2 t + 1 and
 *   8 + 2 t, 9 + 2 t).  The lane's accumulators are dims 16 i + g and
 *   16 i + 8 + g of query rows 2 t and 2 t + 1.
 * P^T's fragment is the lane's scores, as in decode_mma_kernel.
 */
template <int DT, int ROWS, int NW, bool PG>
__global__ void __launch_bounds__(NW * 32, 1)
decode_ring_kernel(const struct decode_params P)
{
	const int kstride = PG ? P.key_stride : DECODE_D;
	typedef typename dtype_of<DT>::T T;
	constexpr int D = DECODE_D;
	constexpr int KEYS = 16;		/* a warp's keys an iteration */
	constexpr int HALF = KEYS * D * 2;	/* bytes of K (or V) in a slot */
	constexpr int STAGES = DECODE_RING_STAGES;
	static_assert(STAGES * 2 * HALF >= ROWS * D * 4,
	    "sm_u is laid over the ring at the end");
	extern __shared__ uint4 ring[];
	__shared__ float sm_m[NW][ROWS], sm_l[NW][ROWS];

	const struct decode_block B = decode_block_of(P, ROWS);
	const int b = B.b, g = B.g, row0 = B.row0, k0 = B.k0, k1 = B.k1;
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	const int lg = lane >> 2, lt = lane & 3;
	char *const slots = (char *)ring + (size_t)w * STAGES * 2 * HALF;
	const int ch = lane & 15;		/* the chunk this lane copies */
	const T *kb = (const T *)P.k + ch * 8;
	const T *vb = (const T *)P.v + ch * 8;
	const int R = row0 + lg;
	const bool row_ok = lg < ROWS && R < P.rows;
	const long last_seen = row_ok ? (long)(R / P.group) + B.tk - P.tq : -1;
	/* where this lane's ldmatrix row lies in a slot's K or V: key
	 * (lane / 16) 8 + lane % 8, chunk 2 j + (lane / 8) % 2 */
	const int mrow = (lane >> 4) * 8 + (lane & 7), mhalf = (lane >> 3) & 1;
	uint32_t qa[8][2];
	float acc[8][4], m = -INFINITY, l = 0.0f;
	int i, j;

	/* Query row lg, k-step j: dims 16 j + 2 lt (+ 1), 16 j + 8 + 2 lt. */
#pragma unroll
	for (j = 0; j < 8; j++)
		qa[j][0] = qa[j][1] = 0u;
	if (row_ok) {
		const int pos = R / P.group, h = g * P.group + R % P.group;
		const uint32_t *qp = (const uint32_t *)((const T *)P.q +
		    (((size_t)b * P.heads + h) * P.tq + pos) * D);
#pragma unroll
		for (j = 0; j < 8; j++) {
			qa[j][0] = qp[8 * j + lt];
			qa[j][1] = qp[8 * j + 4 + lt];
		}
	}
#pragma unroll
	for (i = 0; i < 8; i++)
		acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;

	const int first = k0 + w * KEYS, stride = NW * KEYS;
	const int iters = first < k1 ? (k1 - first + stride - 1) / stride : 0;

	/* Iteration it's copies into its slot (keys past the range read the
	 * last key again; they are masked), and a commit either way so the
	 * wait below counts groups alike. */
	auto fill = [&](int it) {
		if (it < iters) {
			char *s = slots + (it % STAGES) * 2 * HALF;
			const int base = first + it * stride;
			const size_t from = kv_at<PG>(P, B, base);
#pragma unroll
			for (int c = 0; c < 8; c++) {
				const int r = 2 * c + (lane >> 4);
				const size_t key = from + (size_t)(min(base + r, k1 - 1) -
				    base) * kstride;
				const int at = r * D * 2 + ((ch ^ (r & 7)) << 4);

				copy_async(s + at, kb + key);
				copy_async(s + HALF + at, vb + key);
			}
		}
		copy_commit();
	};
	auto step = [&](int base, const char *s) {
		float sc[2][4];
		uint32_t x[4];

		sc[0][0] = sc[0][1] = sc[0][2] = sc[0][3] = 0.0f;
		sc[1][0] = sc[1][1] = sc[1][2] = sc[1][3] = 0.0f;
#pragma unroll
		for (j = 0; j < 8; j++) {
			ldmatrix4<false>(x, s + mrow * D * 2 +
			    (((2 * j + mhalf) ^ (mrow & 7)) << 4));
			mma16816<DT>(sc[0], qa[j][0], 0u, qa[j][1], 0u, x[0], x[1]);
			mma16816<DT>(sc[1], qa[j][0], 0u, qa[j][1], 0u, x[2], x[3]);
		}
		uint32_t pb[2];
		float a0, a1;

		mma_softmax<DT>(P, sc, base, k1, lt, row_ok, last_seen, m, l, pb,
		    a0, a1);
#pragma unroll
		for (i = 0; i < 8; i++) {
			mma_rescale(acc[i], a0, a1);
			ldmatrix4<true>(x, s + HALF + mrow * D * 2 +
			    (((2 * i + mhalf) ^ (mrow & 7)) << 4));
			mma16816<DT>(acc[i], x[0], x[1], x[2], x[3], pb[0], pb[1]);
		}
	};

#pragma unroll
	for (int it = 0; it < STAGES - 1; it++)
		fill(it);
	for (int it = 0; it < iters; it++) {
		/* the slot filled here was read by the whole warp at it - 1 */
		fill(it + STAGES - 1);
		copy_wait<STAGES - 1>();
		__syncwarp();		/* the other lanes' copies, seen */
		step(first + it * stride, slots + (it % STAGES) * 2 * HALF);
		__syncwarp();		/* the slot read before it is refilled */
	}
	copy_wait<0>();

	/* As decode_mma_kernel's end, with sm_u laid over the ring once
	 * every warp is done reading it. */
	float (*sm_u)[ROWS][D] = (float (*)[ROWS][D])ring;

	mma_m_l_out<ROWS, NW>(m, l, lg, lt, w, sm_m, sm_l);
	__syncthreads();
#pragma unroll
	for (int r = 0; r < 2; r++) {
		const int row = 2 * lt + r;

		if (row < ROWS)
#pragma unroll
			for (i = 0; i < 8; i++) {
				sm_u[w][row][16 * i + lg] = acc[i][r];
				sm_u[w][row][16 * i + 8 + lg] = acc[i][2 + r];
			}
	}
	__syncthreads();
	decode_finish<DT, ROWS, NW>(P, B, sm_u, sm_m, sm_l);
}

typedef void (*decode_fn)(const struct decode_params);

#define DECODE_WARPS 8		/* a block's: fewer, longer streams measured fastest */

/* The three kernels decode_attention picks from. */
enum decode_path {
	DECODE_PATH_ROW,	/* one row a block: decode_kernel */
	DECODE_PATH_MMA,	/* packed rows: decode_mma_kernel */
	DECODE_PATH_RING,	/* long ranges: decode_ring_kernel */
	DECODE_PATHS
};

/*
 * The kernel for `br` rows a block and ranges of `keys` keys (0: not
 * known yet).  One row keeps the kernel without tensor cores (1 to 4 %
 * ahead of them at 11 of 12 shapes on the H200); the ring from the
 * range lengths of decode_takes_ring (at batch 8, 8 K/V heads, Tk =
 * 131072 it read 4.50 TB/s in ranges of 16384 keys against 4.38 for
 * the best without it: doc/performance.md).
 */
static enum decode_path
decode_default(int br, int keys)
{
	if (decode_takes_ring(br, keys))
		return DECODE_PATH_RING;
	return br == 1 ? DECODE_PATH_ROW : DECODE_PATH_MMA;
}

/* The instantiation of path for dtype DT, br rows a block, paged (PG)
 * or not: the contiguous kernels are built apart, so that they do not
 * carry the paged address arithmetic. */
template <int DT, bool PG>
static decode_fn
decode_pick_kernel(enum decode_path path, int br)
{
	if (path == DECODE_PATH_ROW)
		return decode_kernel<DT, 1, DECODE_WARPS, PG>;
	if (path == DECODE_PATH_MMA)
		switch (br) {
		case 2: return decode_mma_kernel<DT, 2, DECODE_WARPS, PG>;
		case 4: return decode_mma_kernel<DT, 4, DECODE_WARPS, PG>;
		default: return decode_mma_kernel<DT, 8, DECODE_WARPS, PG>;
		}
	switch (br) {
	case 1: return decode_ring_kernel<DT, 1, DECODE_WARPS, PG>;
	case 2: return decode_ring_kernel<DT, 2, DECODE_WARPS, PG>;
	case 4: return decode_ring_kernel<DT, 4, DECODE_WARPS, PG>;
	default: return decode_ring_kernel<DT, 8, DECODE_WARPS, PG>;
	}
}

/* Bytes of shared memory a block of path takes at launch: the ring's. */
static size_t
decode_ring_bytes(enum decode_path path)
{
	return path == DECODE_PATH_RING ? (size_t)DECODE_RING_STAGES *
	    DECODE_WARPS * 2 * 16 * DECODE_D * 2 : 0;
}

/*
 * What decode_attention asks of a device once: its SMs, and for each
 * kernel the blocks an SM holds (after the ring's shared-memory limit
 * is raised, which is a setting of the device's context).  0: not asked
 * yet.  Devices past DECODE_DEVICES are asked at every call.
 */
#define DECODE_DEVICES 64
struct decode_device {
	int sms;
	int per_sm[2][2][DECODE_PATHS][4];	/* dtype, paged, path, log2 of
						 * the rows */
};
static struct decode_device decode_devices[DECODE_DEVICES];

/* The SMs of device dev, into *sms. */
static int
decode_sms(int dev, int *sms, char *err, size_t errlen)
{
	int *n = dev < DECODE_DEVICES ? &decode_devices[dev].sms : sms;
	cudaError_t e;

	if (dev >= DECODE_DEVICES || *n == 0) {
		if ((e = cudaDeviceGetAttribute(n, cudaDevAttrMultiProcessorCount,
		    dev)) != cudaSuccess) {
			snprintf(err, errlen, "decode: %s", cudaGetErrorString(e));
			return -1;
		}
	}
	*sms = *n;
	return 0;
}

/*
 * Path's kernel for br rows a block in dtype, paged or not, on device
 * dev, the bytes of its ring and the blocks of it an SM holds.
 */
static int
decode_resolve(int dev, int dtype, int paged, int br, enum decode_path path,
    decode_fn *fn, size_t *ring, int *occ, char *err, size_t errlen)
{
	int *n = dev < DECODE_DEVICES ?
	    &decode_devices[dev].per_sm[dtype][paged][path][ilog2(br)] : occ;
	cudaError_t e;

	if (dtype == DECODE_FP16)
		*fn = paged ? decode_pick_kernel<DECODE_FP16, true>(path, br) :
		    decode_pick_kernel<DECODE_FP16, false>(path, br);
	else
		*fn = paged ? decode_pick_kernel<DECODE_BF16, true>(path, br) :
		    decode_pick_kernel<DECODE_BF16, false>(path, br);
	*ring = decode_ring_bytes(path);
	if (dev >= DECODE_DEVICES || *n == 0) {
		if ((*ring > 0 && (e = cudaFuncSetAttribute(*fn,
		    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*ring)) !=
		    cudaSuccess) ||
		    (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, *fn,
		    DECODE_WARPS * 32, *ring)) != cudaSuccess) {
			snprintf(err, errlen, "decode: %s", cudaGetErrorString(e));
			return -1;
		}
		if (*n == 0) {
			snprintf(err, errlen, "decode: the kernel does not fit an SM");
			return -1;
		}
	}
	*occ = *n;
	return 0;
}

extern "C" int
decode_attention_kv(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int kv_heads, int tq, int tk, int d,
    int dtype, int causal, float scale, int splits, const int *cache_seqlens,
    const int *block_table, int page_size, int max_pages, void *workspace,
    size_t workspace_bytes, void *stream, struct decode_result *res,
    char *err, size_t errlen)
{
	struct decode_params P;
	enum decode_path path;
	decode_fn fn;
	cudaError_t e;
	size_t groups, rows_b, need, ring;
	int dev, sms, rows, br, occ, asked;
	const int paged = block_table != NULL;

	if (res != NULL)
		memset(res, 0, sizeof *res);
	if (d != DECODE_D) {
		snprintf(err, errlen, "decode: d must be %d, not %d", DECODE_D, d);
		return -1;
	}
	if (dtype != DECODE_FP16 && dtype != DECODE_BF16) {
		snprintf(err, errlen, "decode: dtype must be 0 (fp16) or 1 (bf16)");
		return -1;
	}
	if (batch < 1 || heads < 1 || kv_heads < 1 || tq < 1 || tk < 1 ||
	    heads % kv_heads != 0 || batch > 65535) {
		snprintf(err, errlen, "decode: bad sizes B=%d H=%d G=%d Tq=%d Tk=%d "
		    "(G must divide H)", batch, heads, kv_heads, tq, tk);
		return -1;
	}
	if (paged && (page_size < DECODE_PAGE_MULTIPLE ||
	    page_size % DECODE_PAGE_MULTIPLE != 0)) {
		snprintf(err, errlen, "decode: page_size must be a positive "
		    "multiple of %d (no group of keys the kernel reads at once "
		    "may cross a page), not %d", DECODE_PAGE_MULTIPLE, page_size);
		return -1;
	}
	if (paged && (max_pages < 1 ||
	    (long)max_pages * page_size < (long)tk)) {
		snprintf(err, errlen, "decode: a block table of %d pages of %d "
		    "keys does not hold Tk=%d keys", max_pages, page_size, tk);
		return -1;
	}
	if (paged && (long)kv_heads * DECODE_D * page_size > 0x7fffffffL) {
		snprintf(err, errlen, "decode: a page of %d keys of %d K/V heads "
		    "is too large", page_size, kv_heads);
		return -1;
	}
	if ((e = cudaGetDevice(&dev)) != cudaSuccess) {
		snprintf(err, errlen, "decode: %s", cudaGetErrorString(e));
		return -1;
	}
	rows = heads / kv_heads * tq;
	br = decode_block_rows(rows);
	path = decode_default(br, 0);
	if (decode_resolve(dev, dtype, paged, br, path, &fn, &ring, &occ, err,
	    errlen) != 0 || decode_sms(dev, &sms, err, errlen) != 0)
		return -1;
	groups = (size_t)batch * kv_heads * decode_chunks(heads, kv_heads, tq);
	asked = splits;
	if (splits <= 0)
		splits = decode_pick_splits(batch, heads, kv_heads, tq, tk, sms, occ);
	if (splits > DECODE_MAX_SPLITS)
		splits = DECODE_MAX_SPLITS;
	memset(&P, 0, sizeof P);
	P.keys = decode_range_keys(tk, splits, paged);
	splits = (tk + P.keys - 1) / P.keys;	/* no empty range */
	/* Ranges this long take the ring, and the ring its own ranges where
	 * the count is the kernel's to pick. */
	if (decode_default(br, P.keys) != path) {
		path = decode_default(br, P.keys);
		if (decode_resolve(dev, dtype, paged, br, path, &fn, &ring, &occ, err,
		    errlen) != 0)
			return -1;
	}
	if (asked <= 0 && groups <= DECODE_TICKETS && path == DECODE_PATH_RING) {
		splits = decode_ring_splits(tk, splits);
		P.keys = decode_range_keys(tk, splits, paged);
		splits = (tk + P.keys - 1) / P.keys;
	}
	rows_b = (size_t)br;
	need = decode_workspace_bytes(batch, heads, kv_heads, tq, tk, splits);
	if (splits > 1 && groups > DECODE_TICKETS) {
		snprintf(err, errlen, "decode: %zu groups of rows are more than a "
		    "split run counts (%d); use splits = 1", groups, DECODE_TICKETS);
		return -1;
	}
	if (splits > 1 && (workspace == NULL || workspace_bytes < need)) {
		snprintf(err, errlen, "decode: %d ranges need %zu bytes of workspace, "
		    "got %zu", splits, need, workspace_bytes);
		return -1;
	}
	P.q = q;
	P.k = k;
	P.v = v;
	P.o = o;
	P.lse = lse;
	P.heads = heads;
	P.kv_heads = kv_heads;
	P.tq = tq;
	P.tk = tk;
	P.group = heads / kv_heads;
	P.rows = rows;
	P.chunks = decode_chunks(heads, kv_heads, tq);
	P.splits = splits;
	P.qscale = (scale > 0.0f ? scale : 1.0f / sqrtf((float)d)) *
	    1.4426950408889634f;
	P.causal = causal;
	P.seqlens = cache_seqlens;
	P.table = block_table;
	P.page_size = paged ? page_size : 0;
	P.max_pages = paged ? max_pages : 0;
	P.key_stride = paged ? kv_heads * DECODE_D : DECODE_D;
	if (splits > 1) {
		P.tickets = (unsigned *)workspace;
		P.ws_u = (float *)(P.tickets + DECODE_TICKETS);
		P.ws_ml = P.ws_u + groups * splits * rows_b * DECODE_D;
	}
	fn<<<dim3((unsigned)splits, (unsigned)(kv_heads * P.chunks),
	    (unsigned)batch), DECODE_WARPS * 32, ring,
	    (cudaStream_t)stream>>>(P);
	if ((e = cudaGetLastError()) != cudaSuccess) {
		snprintf(err, errlen, "decode: launch: %s", cudaGetErrorString(e));
		return -1;
	}
	if (res != NULL) {
		res->splits = splits;
		res->ring = path == DECODE_PATH_RING;
	}
	return 0;
}

extern "C" int
decode_attention(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int kv_heads, int tq, int tk, int d,
    int dtype, int causal, float scale, int splits, void *workspace,
    size_t workspace_bytes, void *stream, struct decode_result *res,
    char *err, size_t errlen)
{
	return decode_attention_kv(q, k, v, o, lse, batch, heads, kv_heads, tq,
	    tk, d, dtype, causal, scale, splits, NULL, NULL, 0, 0, workspace,
	    workspace_bytes, stream, res, err, errlen);
}
