/*
 * to16.h - float32 to fp16 or bf16 storage and back, on the device: the
 * runners that hand a kernel 16-bit tensors (tcrun.cu, decoderun.cu) use
 * it on values the dtype holds exactly (the problem's inputs are already
 * rounded to it), so nothing is rounded twice.  Static functions: each
 * .cu file that includes it has its own copy.
 */
#ifndef FLASHSTEP_TO16_H
#define FLASHSTEP_TO16_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define TO16_THREADS 256

__global__ static void
to16_kernel(const float *x, uint16_t *y, size_t n, int bf16)
{
	size_t i;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x)
		y[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x[i])) :
		    __half_as_ushort(__float2half_rn(x[i]));
}

__global__ static void
from16_kernel(const uint16_t *x, float *y, size_t n, int bf16)
{
	size_t i;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x)
		y[i] = bf16 ? __bfloat162float(__ushort_as_bfloat16(x[i])) :
		    __half2float(__ushort_as_half(x[i]));
}

static unsigned
to16_blocks(size_t n)
{
	size_t b = (n + TO16_THREADS - 1) / TO16_THREADS;

	return (unsigned)(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

/* n floats at x (device) into 16 bits at y (device), queued. */
static inline cudaError_t
to16(const float *x, uint16_t *y, size_t n, int bf16)
{
	to16_kernel<<<to16_blocks(n), TO16_THREADS>>>(x, y, n, bf16);
	return cudaGetLastError();
}

/* And back. */
static inline cudaError_t
from16(const uint16_t *x, float *y, size_t n, int bf16)
{
	from16_kernel<<<to16_blocks(n), TO16_THREADS>>>(x, y, n, bf16);
	return cudaGetLastError();
}

#endif
