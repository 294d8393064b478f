/*
 * cudacheck.h - every CUDA call in the .cu files goes through CUDA_CHECK;
 * and the one device-memory counter their host code shares.
 *
 * A failure writes "<call> failed at <file>:<line>: <CUDA error string>"
 * into the function's err buffer (err and errlen must be in scope) and
 * jumps to its cleanup label `fail`.  Kernel launches report nothing by
 * themselves: CUDA_CHECK(cudaGetLastError()) after each launch catches a
 * bad configuration, and the checked synchronisation that follows (an
 * event, a copy) catches a fault while the kernel ran.
 *
 * The host functions of the .cu files are written in C style (every
 * variable declared at the top) because C++ forbids a goto that jumps
 * over an initialisation.
 */
#ifndef FLASHSTEP_CUDACHECK_H
#define FLASHSTEP_CUDACHECK_H

#include <stddef.h>
#include <stdio.h>

#include <cuda_runtime.h>

#define CUDA_CHECK(call) do {						\
	cudaError_t cuda_check_e_ = (call);				\
	if (cuda_check_e_ != cudaSuccess) {				\
		snprintf(err, errlen, "%s failed at %s:%d: %s", #call,	\
		    __FILE__, __LINE__, cudaGetErrorString(cuda_check_e_)); \
		goto fail;						\
	}								\
} while (0)

/*
 * A run's device memory (device.cu): every cudaMalloc of a kernel's host
 * code goes through gpu_mem_alloc, which counts what the kernel itself
 * holds into bytes (res->device_bytes: the same count for every kernel)
 * and keeps the pointer, so one gpu_mem_free() is the whole cleanup.
 * Start from GPU_MEM_INIT.
 */
#define GPU_MEM_MAX 32
struct gpu_mem {
	void *ptr[GPU_MEM_MAX];
	int n;
	double bytes;
};
#define GPU_MEM_INIT { { NULL }, 0, 0.0 }

/* What an allocation is for: the kernel's own memory, counted, or a
 * helper's (format conversions, the trace), not counted. */
enum gpu_mem_use { GPU_MEM_KERNEL, GPU_MEM_HELPER };

/* size bytes into *p (size 0: NULL and success). */
cudaError_t gpu_mem_alloc(struct gpu_mem *m, void **p, size_t size,
    enum gpu_mem_use use);

/* The same for n floats. */
static inline cudaError_t
gpu_mem_floats(struct gpu_mem *m, float **p, size_t n, enum gpu_mem_use use)
{
	return gpu_mem_alloc(m, (void **)p, n * sizeof(float), use);
}

/* Frees everything m holds; reports nothing (the first error is the one
 * that matters). */
void gpu_mem_free(struct gpu_mem *m);

#endif
