/*
 * bench.cuh - what the standalone drivers (bench_fast.cu, bench_wgmma.cu)
 * share: the CUDA check, a shape, the random inputs made on the device,
 * and the one comparison.  Static functions: each driver that includes
 * it has its own copy.
 */
#ifndef FLASHSTEP_BENCH_CUH
#define FLASHSTEP_BENCH_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(call) do {							\
	cudaError_t ck_e = (call);					\
	if (ck_e != cudaSuccess) {					\
		fprintf(stderr, "%s failed at %s:%d: %s\n", #call,	\
		    __FILE__, __LINE__, cudaGetErrorString(ck_e));	\
		exit(1);						\
	}								\
} while (0)

struct shape {
	int b, h, tq, tk, d, causal;
};

/*
 * A normal random number for element i of stream seed, rounded to fp16
 * or bf16: splitmix64 of (seed, i), then Box-Muller.  Made on the device,
 * so the large shapes fill in milliseconds.
 */
static __device__ uint64_t
bench_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static __global__ void
bench_fill_kernel(uint16_t *x, size_t n, uint64_t seed, int bf16)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		uint64_t a = bench_mix(seed * 0x9e3779b97f4a7c15ull + 2 * i);
		uint64_t b = bench_mix(seed * 0x9e3779b97f4a7c15ull + 2 * i +
		    1);
		double u0 = ((a >> 11) + 0.5) / 9007199254740992.0;
		double u1 = ((b >> 11) + 0.5) / 9007199254740992.0;
		float r = (float)(sqrt(-2.0 * log(u0)) *
		    cos(6.283185307179586 * u1));
		x[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(r)) :
		    __half_as_ushort(__float2half_rn(r));
	}
}

/* A 16-bit value back to float. */
static float
bench_from16(int bf16, uint16_t u)
{
	if (bf16) {
		__nv_bfloat16_raw b;
		b.x = u;
		return __bfloat162float(__nv_bfloat16(b));
	}
	__half_raw h;
	h.x = u;
	return __half2float(__half(h));
}

/*
 * The one comparison: |got - want| <= atol + rtol |want| (and equal
 * infinities).  Prints the first few mismatches; returns bad plus one
 * for a mismatch.
 */
static long
bench_compare(const char *what, double got, double want, double atol,
    double rtol, const char *where, long bad)
{
	int ok;

	if (isinf(want))
		ok = got == want;
	else
		ok = fabs(got - want) <= atol + rtol * fabs(want);
	if (!ok && bad < 5)
		fprintf(stderr, "  mismatch %s %s: got %.6g want %.6g\n", what,
		    where, got, want);
	return bad + !ok;
}

#endif
