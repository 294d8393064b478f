/*
 * fast_mma.cuh - the mma.sync primitives the tensor-core kernels on
 * mma.sync share (gpu/fast.cu, the forward, and gpu/fast_bwd.cu, the
 * backward): cp.async copies into swizzled shared tiles, ldmatrix,
 * mma.m16n8k16 with float32 accumulation, packing to 16 bits, 2^x.
 * fast.cu's opening comment explains the layouts they serve.  Static
 * functions: each .cu file that includes it has its own copy.
 */
#ifndef FLASHSTEP_FAST_MMA_CUH
#define FLASHSTEP_FAST_MMA_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <string.h>

static __device__ __forceinline__ uint32_t
fast_smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16 bytes global -> shared; bytes = 0 writes 16 zero bytes instead. */
static __device__ __forceinline__ void
fast_cp_async16(uint32_t dst, const void *src, int bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
	    :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}

/* 4 bytes global -> shared; bytes = 0 writes 4 zero bytes instead. */
static __device__ __forceinline__ void
fast_cp_async4(uint32_t dst, const void *src, int bytes)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
	    :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}

static __device__ __forceinline__ void
fast_cp_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Wait until at most N of this thread's newest groups are in flight. */
template <int N>
static __device__ __forceinline__ void
fast_cp_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

static __device__ __forceinline__ void
fast_ldsm_x4(uint32_t addr, uint32_t (&r)[4])
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
	    "{%0, %1, %2, %3}, [%4];\n"
	    : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

static __device__ __forceinline__ void
fast_ldsm_x4_trans(uint32_t addr, uint32_t (&r)[4])
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
	    "{%0, %1, %2, %3}, [%4];\n"
	    : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

/* c += a b for one m16n8k16 tile, float32 accumulation. */
template <bool BF16>
static __device__ __forceinline__ void
fast_mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
	if constexpr (BF16)
		asm volatile("mma.sync.aligned.m16n8k16.row.col"
		    ".f32.bf16.bf16.f32 "
		    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		    "{%0, %1, %2, %3};\n"
		    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),
		      "r"(b0), "r"(b1));
	else
		asm volatile("mma.sync.aligned.m16n8k16.row.col"
		    ".f32.f16.f16.f32 "
		    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		    "{%0, %1, %2, %3};\n"
		    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),
		      "r"(b0), "r"(b1));
}

/* Two floats rounded to nearest into one register, lo in the low half. */
template <bool BF16>
static __device__ __forceinline__ uint32_t
fast_pack(float lo, float hi)
{
	uint32_t u;

	if constexpr (BF16) {
		__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
		memcpy(&u, &v, 4);
	} else {
		__half2 v = __floats2half2_rn(lo, hi);
		memcpy(&u, &v, 4);
	}
	return u;
}

/* 2^x on the special-function unit; 2^-inf = 0. */
static __device__ __forceinline__ float
fast_exp2(float x)
{
	float y;

	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

/* Byte offset of 16-byte chunk ch of row r in a swizzled tile d wide. */
template <int D>
static __device__ __forceinline__ uint32_t
fast_swz(int r, int ch)
{
	return (uint32_t)(r * D * 2 + ((ch ^ (r & 7)) << 4));
}

/*
 * Rows [row0, row0 + ROWS) of an (n, D) matrix g into the swizzled tile
 * at shared address tile; rows at or past n become zeros.
 */
template <int ROWS, int D, int THREADS>
static __device__ __forceinline__ void
fast_load_tile(uint32_t tile, const uint16_t *g, int row0, int n, int tid)
{
	constexpr int CPR = D / 8;	/* 16-byte chunks per row */
	static_assert((ROWS * CPR) % THREADS == 0,
	    "a tile must be a whole number of passes");

#pragma unroll
	for (int it = 0; it < ROWS * CPR / THREADS; it++) {
		const int c = it * THREADS + tid;
		const int r = c / CPR, ch = c % CPR;
		const int gr = row0 + r;
		const bool in = gr < n;
		const uint16_t *src = g + (size_t)(in ? gr : 0) * D + ch * 8;

		fast_cp_async16(tile + fast_swz<D>(r, ch), src, in ? 16 : 0);
	}
}

#endif
