/*
 * tma_loads_exp.cu - EXPERIMENT, kept in history only: how fast TMA
 * streams a decode call's K and V with no arithmetic, in three box
 * shapes, beside decode_attention's variant 6 (loads and arithmetic) in
 * the same program.  Timing only: the consumer warp waits for each slot
 * and releases it.
 *
 *   mode 0  two 64-column boxes a tile, 128-byte swizzle (what a wgmma
 *           kernel reads)
 *   mode 1  one box of whole 256-byte rows, no swizzle
 *   mode 2  a 5-D box that lays 8 keys x 16 bytes together (wgmma's
 *           unswizzled core matrices), no swizzle
 *
 * One producer thread, one consumer warp, 6 slots each of K and V, 64
 * keys a slot, one block an SM, the same blocks (groups x ranges) as
 * variant 6.  Three rounds of 20 calls between events, each round
 * starting one contender further on; the median.
 *
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I src \
 *       -I gpu gpu/bench/tma_loads_exp.cu gpu/decode.cu -o tma_loads
 *
 * On the H200 (gpu/bench/DECODE_NOTES.md, "The session at 74c77d1").
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include "decode.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static __device__ __forceinline__ uint32_t saddr(const void *p)
{ return (uint32_t)__cvta_generic_to_shared(p); }

static __device__ __forceinline__ void bar_init(uint32_t b, uint32_t n)
{ asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(n) : "memory"); }
static __device__ __forceinline__ void bar_expect(uint32_t b, uint32_t n)
{ asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(n) : "memory"); }
static __device__ __forceinline__ void bar_arrive(uint32_t b)
{ asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory"); }
static __device__ __forceinline__ void bar_wait(uint32_t b, uint32_t ph)
{
	uint32_t done;
	do {
		asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
		    "selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(b), "r"(ph) : "memory");
	} while (!done);
}
static __device__ __forceinline__ void tma3(uint32_t dst, const CUtensorMap *m, int c0, int c1, int c2, uint32_t b)
{
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
	    " [%0], [%1, {%2, %3, %4}], [%5];" :: "r"(dst), "l"((uint64_t)m), "r"(c0), "r"(c1), "r"(c2), "r"(b) : "memory");
}
static __device__ __forceinline__ void tma5(uint32_t dst, const CUtensorMap *m, int c0, int c1, int c2, int c3, int c4, uint32_t b)
{
	asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
	    " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" :: "r"(dst), "l"((uint64_t)m), "r"(c0), "r"(c1), "r"(c2),
	    "r"(c3), "r"(c4), "r"(b) : "memory");
}

/* MODE 0: two 64-column boxes a tile, 128-byte swizzle.  1: one box of
 * whole 256-byte rows, no swizzle.  2: a 5-D box, keys in core-matrix
 * order (8 keys x 16 bytes contiguous), no swizzle.  A block: ranges of
 * `keys` keys, BC a tile, ST slots; one producer thread, one consumer
 * warp that waits and releases. */
template <int MODE, int BC, int ST>
__global__ void __launch_bounds__(64, 1)
stream_kernel(const __grid_constant__ CUtensorMap mk, const __grid_constant__ CUtensorMap mv,
    int keys, int tk, unsigned *sink)
{
	constexpr uint32_t TB = BC * 256;
	extern __shared__ __align__(1024) uint8_t sm[];
	const uint32_t raw = saddr(sm), s0 = (raw + 1023) & ~1023u;
	const uint32_t bars = s0 + 2 * ST * TB;
	const int bh = blockIdx.y, k0 = blockIdx.x * keys;
	const int k1 = min(tk, k0 + keys), nt = (k1 - k0 + BC - 1) / BC;
	const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;

	if (threadIdx.x == 0) {
		for (int s = 0; s < 2 * ST; s++) {
			bar_init(bars + 8 * s, 1);		/* full */
			bar_init(bars + 8 * (2 * ST + s), 1);	/* empty */
		}
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	__syncthreads();
	if (w == 0) {
		if (lane == 0)
			for (int j = 0; j < nt; j++) {
				const int st = j % ST, key = k0 + j * BC;
				const uint32_t ph = (j / ST) & 1;
				for (int kv = 0; kv < 2; kv++) {
					const CUtensorMap *m = kv ? &mv : &mk;
					const int s = 2 * st + kv;
					const uint32_t dst = s0 + s * TB, full = bars + 8 * s;
					bar_wait(bars + 8 * (2 * ST + s), ph ^ 1);
					bar_expect(full, TB);
					if (MODE == 0) {
						tma3(dst, m, 0, key, bh, full);
						tma3(dst + BC * 128, m, 64, key, bh, full);
					} else if (MODE == 1) {
						tma3(dst, m, 0, key, bh, full);
					} else {
						tma5(dst, m, 0, 0, 0, key / 8, bh, full);
					}
				}
			}
	} else {
		unsigned x = 0;
		for (int j = 0; j < nt; j++) {
			const int st = j % ST;
			const uint32_t ph = (j / ST) & 1;
			for (int kv = 0; kv < 2; kv++) {
				const int s = 2 * st + kv;
				bar_wait(bars + 8 * s, ph);
				x ^= *(volatile unsigned *)(sm + (s0 - raw) + s * TB + lane * 4);
				__syncwarp();
				if (lane == 0)
					bar_arrive(bars + 8 * (2 * ST + s));
			}
		}
		if (x == 0x12345678u)
			sink[0] = x;
	}
}

static PFN_cuTensorMapEncodeTiled_v12000 enc;

static void map(CUtensorMap *m, void *p, int mode, int bh, int tk, int bc)
{
	CUresult r;
	if (mode == 0 || mode == 1) {
		cuuint64_t dims[3] = { 128, (cuuint64_t)tk, (cuuint64_t)bh };
		cuuint64_t str[2] = { 256, (cuuint64_t)tk * 256 };
		cuuint32_t box[3] = { mode == 0 ? 64u : 128u, (cuuint32_t)bc, 1 };
		cuuint32_t one[3] = { 1, 1, 1 };
		r = enc(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, p, dims, str, box, one,
		    CU_TENSOR_MAP_INTERLEAVE_NONE, mode == 0 ? CU_TENSOR_MAP_SWIZZLE_128B :
		    CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
		    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	} else {
		/* (8 dims, 8 keys, 16 chunks, key groups, bh) */
		cuuint64_t dims[5] = { 8, 8, 16, (cuuint64_t)tk / 8, (cuuint64_t)bh };
		cuuint64_t str[4] = { 256, 16, 2048, (cuuint64_t)tk * 256 };
		cuuint32_t box[5] = { 8, 8, 16, (cuuint32_t)bc / 8, 1 };
		cuuint32_t one[5] = { 1, 1, 1, 1, 1 };
		r = enc(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 5, p, dims, str, box, one,
		    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
		    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	}
	if (r != CUDA_SUCCESS) {
		printf("mode %d: cuTensorMapEncodeTiled failed, CUresult %d\n", mode, (int)r);
		m->opaque[0] = 0xdead;
	}
}

template <int MODE, int BC, int ST>
static void launch(void *k, void *v, int bh, int tk, int splits, unsigned *sink, cudaStream_t s)
{
	static bool set;
	const int smem = 1024 + 2 * ST * BC * 256 + 4 * ST * 8;
	CUtensorMap mk, mv;
	map(&mk, k, MODE, bh, tk, BC);
	map(&mv, v, MODE, bh, tk, BC);
	if (!set) {
		CK(cudaFuncSetAttribute(stream_kernel<MODE, BC, ST>,
		    cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
		set = true;
	}
	const int keys = (tk + splits - 1) / splits;
	stream_kernel<MODE, BC, ST><<<dim3(splits, bh), 64, smem, s>>>(mk, mv, keys, tk, sink);
}

int main(void)
{
	cudaDriverEntryPointQueryResult qr;
	void *fn;
	CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &qr));
	enc = (PFN_cuTensorMapEncodeTiled_v12000)fn;
	struct { int b, g, tk; } shapes[] = { { 8, 8, 131072 }, { 1, 8, 32768 }, { 8, 8, 32768 } };
	const char *names[] = { "v6 (decode_attention)", "TMA half rows, swizzled",
	    "TMA whole rows", "TMA 5-D, core-matrix order" };
	unsigned *sink;
	CK(cudaMalloc(&sink, 4));
	for (auto &sh : shapes) {
		const int bh = sh.b * sh.g, heads = 32;
		const size_t bytes = (size_t)bh * sh.tk * 256;	/* K or V */
		const int copies = (int)std::max<size_t>(1, std::min<size_t>(8, (256u << 20) / (2 * bytes) + 1));
		std::vector<void *> K(copies), V(copies);
		for (int c = 0; c < copies; c++) {
			CK(cudaMalloc(&K[c], bytes));
			CK(cudaMalloc(&V[c], bytes));
			CK(cudaMemset(K[c], 0x11, bytes));
			CK(cudaMemset(V[c], 0x11, bytes));
		}
		void *q, *o, *ws;
		float *lse;
		CK(cudaMalloc(&q, (size_t)sh.b * heads * 256));
		CK(cudaMalloc(&o, (size_t)sh.b * heads * 256));
		CK(cudaMalloc(&lse, (size_t)sh.b * heads * 4));
		CK(cudaMemset(q, 0, (size_t)sh.b * heads * 256));
		size_t wsb = decode_workspace_bytes(sh.b, heads, sh.g, 1, sh.tk, 0);
		CK(cudaMalloc(&ws, wsb));
		CK(cudaMemset(ws, 0, wsb));
		char err[256];
		const int R = 3, N = 20;
		std::vector<float> t[4];
		int splits = 0;
		cudaEvent_t ev[N + 1];
		for (int i = 0; i <= N; i++)
			CK(cudaEventCreate(&ev[i]));
		for (int r = 0; r < R; r++)
			for (int vv = 0; vv < 4; vv++) {
				const int var = (vv + r) % 4;
				auto call = [&](int i) {
					void *k = K[i % copies], *v = V[i % copies];
					if (var == 0) {
						if (decode_attention(q, k, v, o, lse, sh.b, heads, sh.g, 1, sh.tk, 128, 0, 0,
						    0.0f, 0, 6, ws, wsb, 0, err, sizeof err) != 0) {
							printf("decode: %s\n", err);
							exit(1);
						}
						splits = decode_last_splits();
					} else if (var == 1)
						launch<0, 64, 6>(k, v, bh, sh.tk, splits, sink, 0);
					else if (var == 2)
						launch<1, 64, 6>(k, v, bh, sh.tk, splits, sink, 0);
					else
						launch<2, 64, 6>(k, v, bh, sh.tk, splits, sink, 0);
				};
				if (var != 0 && splits == 0)
					call(0), cudaDeviceSynchronize(), call(0);	/* v6 sets splits */
				for (int i = 0; i < 3; i++)
					call(i);
				CK(cudaDeviceSynchronize());
				for (int i = 0; i < N; i++) {
					CK(cudaEventRecord(ev[i]));
					call(i);
				}
				CK(cudaEventRecord(ev[N]));
				CK(cudaEventSynchronize(ev[N]));
				CK(cudaGetLastError());
				for (int i = 0; i < N; i++) {
					float ms;
					CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
					t[var].push_back(ms);
				}
			}
		printf("B%d G%d Tk%d (%d ranges a group, %d copies):\n", sh.b, sh.g, sh.tk, splits, copies);
		for (int var = 0; var < 4; var++) {
			std::sort(t[var].begin(), t[var].end());
			const float ms = t[var][t[var].size() / 2];
			printf("  %-28s %8.4f ms  %.3f TB/s\n", names[var], ms, 2.0 * bytes / (ms * 1e-3) / 1e12);
		}
		for (int c = 0; c < copies; c++)
			cudaFree(K[c]), cudaFree(V[c]);
		cudaFree(q), cudaFree(o), cudaFree(lse), cudaFree(ws);
	}
	return 0;
}
