/*
 * wgmma_ptx.cuh - the Hopper (sm_90a) instructions the wgmma kernels
 * share, as inline PTX: mbarriers, TMA copies, named barriers, register
 * reallocation, the wgmma instructions with their shared-memory
 * descriptors, and on the host the tensor maps TMA reads through.
 *
 * wgmma.cu's opening comment explains the layouts these assume: tiles of
 * 64-column boxes in the 128-byte swizzle, the descriptors' LBO and SBO,
 * the accumulator and A-operand fragments.  Included by wgmma.cu and
 * decode_tma.cu, both built for sm_90a alone.
 */
#ifndef FLASHSTEP_WGMMA_PTX_CUH
#define FLASHSTEP_WGMMA_PTX_CUH

#include <cuda.h>		/* CUtensorMap and its enums: types only */
#include <cudaTypedefs.h>	/* PFN_cuTensorMapEncodeTiled */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cudacheck.h"

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
 * Registers to 16 bits, and the exponential.
 */

/* Two floats rounded to nearest into one register, lo in the low half. */
template <bool BF16>
static __device__ __forceinline__ uint32_t
wgmma_pack(float lo, float hi)
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
wgmma_exp2(float x)
{
	float y;

	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

/* ---------------------------------------------------------------------
 * Host side: the tensor maps.
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

#endif /* FLASHSTEP_WGMMA_PTX_CUH */
