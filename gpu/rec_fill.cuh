/*
 * rec_fill.cuh - the inputs of the recording builds (wgmma_record.cu,
 * fast_record.cu): fp16 values in [-1, 1) from a hash of (seed, index).
 * A recording needs plausible scores, not the simulator's inputs.
 */
#ifndef FLASHSTEP_REC_FILL_CUH
#define FLASHSTEP_REC_FILL_CUH

#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

static __global__ void
rec_fill(uint16_t *x, size_t n, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
		h ^= h >> 31;
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
		const float u = (float)(h >> 40) / (float)(1ull << 24);
		const __half v = __float2half_rn(2.f * u - 1.f);
		memcpy(&x[i], &v, 2);
	}
}

#endif
