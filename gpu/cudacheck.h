/*
 * cudacheck.h - every CUDA call in the .cu files goes through CUDA_CHECK;
 * and the two host helpers the .cu files share.
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

/* cudaMalloc that counts the bytes it took into *bytes (when bytes is
 * not NULL); size 0 gives a NULL *p and success.  (device.cu) */
cudaError_t gpu_dev_alloc(void **p, size_t size, double *bytes);

/* The same for n floats. */
static inline cudaError_t
gpu_dev_floats(float **p, size_t n, double *bytes)
{
	return gpu_dev_alloc((void **)p, n * sizeof(float), bytes);
}

/* The time a kernel takes: the median of runs event timings, leaving out
 * the first (module load, first touch) when there are more.  Sorts
 * times.  (device.cu) */
float gpu_dev_median_ms(float *times, int runs);

#endif
