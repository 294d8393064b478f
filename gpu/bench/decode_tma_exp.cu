/*
 * decode_tma_exp.cu - EXPERIMENT, measured and reverted: decoding with
 * TMA copies and wgmma (sm_90a), as decode.cu's variants 7 to 10.
 *
 * The bytes of K and V reach the tensor cores without a register or
 * ldmatrix round trip: a producer warp copies each tile of BC keys of K
 * and V (two 64-column boxes each, 128-byte swizzle) into a ring of
 * STAGES slots with TMA; NWG consumer warpgroups take the tiles in turn
 * and compute S = Q K^T and O += P V with wgmma, FlashAttention's
 * orientation: the query rows (ROWS of them real) padded to wgmma's 64,
 * K as B from shared memory, P from registers, V as B transposed.  Only
 * warp 0 of a consumer holds real rows; each consumer keeps its own
 * (m, l, u), and decode.cu's decode_finish merges them with the empty
 * states of the other warps.
 *
 *   variant 7: BC 128, 3 stages, one consumer
 *   variant 8: BC 64, 6 stages, two consumers
 *   variant 9: BC 128, 3 stages, two consumers.  A race: with an odd
 *              ring and two consumers, a consumer can come to a slot
 *              whose previous tile, the other consumer's, has not landed
 *              yet, and its wait on the parity of its own tile passes on
 *              the phase before.  The timing run ended with a launch
 *              failure at batch 8, Tk = 131072 (which variant, the
 *              asynchronous error did not say); this is the likely one.
 *   variant 10: BC 64, 4 stages, two consumers
 *
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -shared \
 *       -Xcompiler -fPIC -I src -I gpu gpu/bench/decode_tma_exp.cu -o libdx.so
 *   (decode_vs_torch.py with VARIANTS = (0, 2, 6, 7, 8, 9, 10))
 *
 * On the H200 (gpu/bench/DECODE_NOTES.md): correct on every edge shape,
 * and 5 to 15 % slower than variant 6 (mma.sync, loads to registers) at
 * every 8-K/V-head shape; two consumers no faster than one, so the
 * arithmetic was not what held it back.
 */
#define decode_attention decode_attention_base
#include "decode.cu"
#undef decode_attention
#include "wgmma_ptx.cuh"

template <int DT, int ROWS, int BC, int STAGES, int MINB, int NWG>
__global__ void __launch_bounds__(128 * NWG + 32, MINB)
decode_tma_kernel(const __grid_constant__ CUtensorMap tm_k,
    const __grid_constant__ CUtensorMap tm_v, const struct decode_params P)
{
	typedef typename dtype_of<DT>::T T;
	constexpr bool BF16 = DT == DECODE_BF16;
	constexpr int D = DECODE_D;
	constexpr uint32_t QB = 64 * D * 2;
	constexpr uint32_t TB = BC * D * 2;
	constexpr int NS = 4 * NWG + 1;
	constexpr int NC = 128 * NWG;
	extern __shared__ __align__(1024) uint8_t dsm[];
	const uint32_t raw = wgmma_smem_addr(dsm);
	const uint32_t sQ = (raw + 1023) & ~1023u;
	uint8_t *const gQ = dsm + (sQ - raw);
	const uint32_t sK = sQ + QB, sV = sK + STAGES * TB;
	const uint32_t bars = sV + STAGES * TB;
	auto full_k = [&](int s) { return bars + 8u * s; };
	auto full_v = [&](int s) { return bars + 8u * (STAGES + s); };
	auto empty_k = [&](int s) { return bars + 8u * (2 * STAGES + s); };
	auto empty_v = [&](int s) { return bars + 8u * (3 * STAGES + s); };

	const struct decode_block B = decode_block_of(P, ROWS);
	const int tid = threadIdx.x, w = tid >> 5, lane = tid & 31;
	const int g = lane >> 2, t4 = lane & 3;
	const int nt = (B.k1 - B.k0 + BC - 1) / BC;
	const int bh = B.b * P.kv_heads + B.g;
	float o[D / 2], s[BC / 2], m = -INFINITY, l = 0.0f;
	uint32_t pa[BC / 4];

	if (tid == 0) {
		for (int x = 0; x < STAGES; x++) {
			wgmma_bar_init(full_k(x), 1);
			wgmma_bar_init(full_v(x), 1);
			wgmma_bar_init(empty_k(x), 4);
			wgmma_bar_init(empty_v(x), 4);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
		asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	}
	if (w < 4 * NWG) {
		for (int x = tid; x < 64 * 16; x += NC) {
			const int r = x >> 4, ch = x & 15, R = B.row0 + r;
			uint4 val = make_uint4(0, 0, 0, 0);

			if (r < ROWS && R < P.rows) {
				const int pos = R / P.group;
				const int h = B.g * P.group + R % P.group;
				val = *(const uint4 *)((const T *)P.q +
				    (((size_t)B.b * P.heads + h) * P.tq + pos) * D +
				    ch * 8);
			}
			*(uint4 *)(gQ + (ch >> 3) * 64 * 128 + r * 128 +
			    (((ch & 7) ^ (r & 7)) << 4)) = val;
		}
		asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	}
#pragma unroll
	for (int x = 0; x < D / 2; x++)
		o[x] = 0.0f;
	__syncthreads();

	if (w == 4 * NWG) {
		if (lane == 0) {
			wgmma_tma_prefetch(&tm_k);
			wgmma_tma_prefetch(&tm_v);
			for (int j = 0; j < nt; j++) {
				const int st = j % STAGES;
				const uint32_t ph = (j / STAGES) & 1;
				const int key = B.k0 + j * BC;

				wgmma_bar_wait(empty_k(st), ph ^ 1);
				wgmma_bar_expect(full_k(st), TB);
				for (int b = 0; b < 2; b++)
					wgmma_tma_load(sK + st * TB + b * BC * 128,
					    &tm_k, 64 * b, key, bh, full_k(st));
				wgmma_bar_wait(empty_v(st), ph ^ 1);
				wgmma_bar_expect(full_v(st), TB);
				for (int b = 0; b < 2; b++)
					wgmma_tma_load(sV + st * TB + b * BC * 128,
					    &tm_v, 64 * b, key, bh, full_v(st));
			}
		}
		__syncwarp();
	} else {
		const int R = B.row0 + g, c = w >> 2, ww = w & 3;
		const bool row_ok = ww == 0 && g < ROWS && R < P.rows;
		const long last_seen = row_ok ?
		    (long)(R / P.group) + P.tk - P.tq : -1;

		for (int j = c; j < nt; j += NWG) {
			const int st = j % STAGES;
			const uint32_t ph = (j / STAGES) & 1;

			wgmma_bar_wait(full_k(st), ph);
			wgmma_qk<D, 64, BC, BF16>(s, sQ, sK + st * TB);
			wgmma_wait<0>();
			wgmma_hold(s);
			if (lane == 0)
				wgmma_bar_arrive(empty_k(st));
			if (ww == 0) {
				const int kb = B.k0 + j * BC + 2 * t4;
				float mx = -INFINITY;
#pragma unroll
				for (int nb = 0; nb < BC / 8; nb++)
#pragma unroll
					for (int e = 0; e < 2; e++) {
						const int key = kb + 8 * nb + e;
						float x = s[4 * nb + e] * P.qscale;

						if (!row_ok || key >= B.k1 || (P.causal &&
						    (long)key > last_seen))
							x = -INFINITY;
						s[4 * nb + e] = x;
						mx = fmaxf(mx, x);
					}
				mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
				mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
				const float m_new = fmaxf(m, mx);
				const float m_use = m_new == -INFINITY ? 0.0f : m_new;
				const float alpha = wgmma_exp2(m - m_use);
				float sum = 0.0f;
#pragma unroll
				for (int nb = 0; nb < BC / 8; nb++) {
					const float p0 = wgmma_exp2(s[4 * nb] - m_use);
					const float p1 = wgmma_exp2(s[4 * nb + 1] - m_use);

					s[4 * nb] = p0;
					s[4 * nb + 1] = p1;
					s[4 * nb + 2] = s[4 * nb + 3] = 0.0f;
					sum += p0 + p1;
				}
				l = fmaf(alpha, l, sum);
				m = m_new;
#pragma unroll
				for (int db = 0; db < D / 8; db++) {
					o[4 * db] *= alpha;
					o[4 * db + 1] *= alpha;
				}
			} else {
#pragma unroll
				for (int x = 0; x < BC / 2; x++)
					s[x] = 0.0f;
			}
#pragma unroll
			for (int x = 0; x < BC / 4; x++)
				pa[x] = wgmma_pack<BF16>(s[2 * x], s[2 * x + 1]);
			wgmma_bar_wait(full_v(st), ph);
			wgmma_pv<D, BC, BF16>(o, pa, sV + st * TB);
			wgmma_wait<0>();
			wgmma_hold(o);
			if (lane == 0)
				wgmma_bar_arrive(empty_v(st));
		}
	}
	__syncthreads();	/* every tile consumed: the ring is free */

	float (*sm_u)[ROWS][D] = (float (*)[ROWS][D])(gQ + QB);
	float (*sm_m)[ROWS] = (float (*)[ROWS])(gQ + QB + NS * ROWS * D * 4);
	float (*sm_l)[ROWS] = sm_m + NS;

	l += __shfl_xor_sync(0xffffffffu, l, 1);
	l += __shfl_xor_sync(0xffffffffu, l, 2);
	if (w < 4 * NWG && (w & 3) == 0 && g < ROWS) {
		const int c = w >> 2;
		if (t4 == 0) {
			sm_m[c][g] = m * 0.6931471805599453f;
			sm_l[c][g] = l;
		}
#pragma unroll
		for (int db = 0; db < D / 8; db++) {
			sm_u[c][g][8 * db + 2 * t4] = o[4 * db];
			sm_u[c][g][8 * db + 2 * t4 + 1] = o[4 * db + 1];
		}
	}
	for (int x = tid; x < (NS - NWG) * ROWS * D; x += NS * 32)
		(&sm_u[NWG][0][0])[x] = 0.0f;
	if (tid < (NS - NWG) * ROWS) {
		(&sm_m[NWG][0])[tid] = -INFINITY;
		(&sm_l[NWG][0])[tid] = 0.0f;
	}
	__syncthreads();
	decode_finish<DT, ROWS, NS>(P, B, sm_u, sm_m, sm_l);
}

struct tma_variant { int bc, st, minb, nwg; };
static const struct tma_variant tma_variants[] = {
	{ 128, 3, 1, 1 }, { 64, 6, 1, 2 }, { 128, 3, 1, 2 }, { 64, 4, 1, 2 },
};
#define TMA_FIRST 7

template <int DT, int BC, int ST, int MB, int NWG>
static decode_fn
tma_rows(int br)
{
	typedef void (*fn_t)(const CUtensorMap, const CUtensorMap,
	    const struct decode_params);
	fn_t f;
	switch (br) {
	case 1: f = decode_tma_kernel<DT, 1, BC, ST, MB, NWG>; break;
	case 2: f = decode_tma_kernel<DT, 2, BC, ST, MB, NWG>; break;
	case 4: f = decode_tma_kernel<DT, 4, BC, ST, MB, NWG>; break;
	default: f = decode_tma_kernel<DT, 8, BC, ST, MB, NWG>; break;
	}
	return (decode_fn)f;
}

template <int DT>
static decode_fn
tma_pick(int br, int vi)
{
	switch (vi) {
	case 0: return tma_rows<DT, 128, 3, 1, 1>(br);
	case 1: return tma_rows<DT, 64, 6, 1, 2>(br);
	case 2: return tma_rows<DT, 128, 3, 1, 2>(br);
	default: return tma_rows<DT, 64, 4, 1, 2>(br);
	}
}

extern "C" int
decode_attention(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int kv_heads, int tq, int tk, int d,
    int dtype, int causal, float scale, int splits, int variant,
    void *workspace, size_t workspace_bytes, void *stream, char *err,
    size_t errlen)
{
	static int sms;
	static int per_sm[2][4][4];
	struct decode_params P;
	CUtensorMap mk, mv;
	cudaError_t e;
	int rows, br, vi, *occ, smem, dev;
	size_t groups, need;
	decode_fn fn;

	if (variant < TMA_FIRST)
		return decode_attention_base(q, k, v, o, lse, batch, heads,
		    kv_heads, tq, tk, d, dtype, causal, scale, splits, variant,
		    workspace, workspace_bytes, stream, err, errlen);
	vi = variant - TMA_FIRST;
	if (vi >= 4 || d != DECODE_D) {
		snprintf(err, errlen, "decode_x: bad variant or d");
		return -1;
	}
	rows = heads / kv_heads * tq;
	br = decode_block_rows(rows);
	fn = dtype == DECODE_FP16 ? tma_pick<DECODE_FP16>(br, vi) :
	    tma_pick<DECODE_BF16>(br, vi);
	smem = 1024 + 64 * 128 * 2 + tma_variants[vi].st * 2 *
	    tma_variants[vi].bc * 256 + 4 * tma_variants[vi].st * 8;
	occ = &per_sm[dtype][vi][ilog2(br)];
	if (sms == 0) {
		cudaGetDevice(&dev);
		cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	}
	if (*occ == 0) {
		if ((e = cudaFuncSetAttribute(fn,
		    cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) !=
		    cudaSuccess || (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
		    occ, fn, 128 * tma_variants[vi].nwg + 32, smem)) != cudaSuccess) {
			snprintf(err, errlen, "decode_x: %s", cudaGetErrorString(e));
			return -1;
		}
		if (*occ == 0) {
			snprintf(err, errlen, "decode_x: does not fit");
			return -1;
		}
	}
	groups = (size_t)batch * kv_heads * decode_chunks(heads, kv_heads, tq);
	if (splits <= 0)
		splits = decode_pick_splits(batch, heads, kv_heads, tq, tk, sms, *occ);
	if (splits > DECODE_MAX_SPLITS)
		splits = DECODE_MAX_SPLITS;
	memset(&P, 0, sizeof P);
	P.keys = (tk + splits - 1) / splits;
	splits = (tk + P.keys - 1) / P.keys;
	need = decode_workspace_bytes(batch, heads, kv_heads, tq, tk, splits);
	if (splits > 1 && (groups > DECODE_TICKETS || workspace == NULL ||
	    workspace_bytes < need)) {
		snprintf(err, errlen, "decode_x: workspace");
		return -1;
	}
	P.q = q; P.k = k; P.v = v; P.o = o; P.lse = lse;
	P.heads = heads; P.kv_heads = kv_heads; P.tq = tq; P.tk = tk;
	P.group = heads / kv_heads;
	P.rows = rows;
	P.chunks = decode_chunks(heads, kv_heads, tq);
	P.splits = splits;
	P.qscale = (scale > 0.0f ? scale : 1.0f / sqrtf((float)d)) *
	    1.4426950408889634f;
	P.causal = causal;
	if (splits > 1) {
		P.tickets = (unsigned *)workspace;
		P.ws_u = (float *)(P.tickets + DECODE_TICKETS);
		P.ws_ml = P.ws_u + groups * splits * (size_t)br * DECODE_D;
	}
	if (wgmma_encoder(err, errlen) != 0 ||
	    wgmma_tensor_map(&mk, k, dtype == DECODE_BF16, batch * kv_heads, tk,
	    128, tma_variants[vi].bc, err, errlen) != 0 ||
	    wgmma_tensor_map(&mv, v, dtype == DECODE_BF16, batch * kv_heads, tk,
	    128, tma_variants[vi].bc, err, errlen) != 0)
		return -1;
	((void (*)(const CUtensorMap, const CUtensorMap,
	    const struct decode_params))fn)<<<dim3((unsigned)splits,
	    (unsigned)(kv_heads * P.chunks), (unsigned)batch),
	    128 * tma_variants[vi].nwg + 32, smem,
	    (cudaStream_t)stream>>>(mk, mv, P);
	if ((e = cudaGetLastError()) != cudaSuccess) {
		snprintf(err, errlen, "decode_x: launch: %s", cudaGetErrorString(e));
		return -1;
	}
	decode_last = splits;
	return 0;
}
