/* device.cu - is there a GPU to run on, and how much memory has it free?
 * (gpu_available and gpu_memory of gpu.h); and the allocation and timing
 * helpers the kernels' host code shares (cudacheck.h). */
#include "config.h"

#include "cudacheck.h"

#include <stdlib.h>
#include <string.h>

extern "C" {
#include "gpu.h"
}

extern "C" int
gpu_available(char *name, size_t namelen, char *err, size_t errlen)
{
	struct cudaDeviceProp prop;
	cudaError_t e;
	int count = 0;

	if (name != NULL && namelen > 0)
		name[0] = '\0';
	/* No driver, no device, or CUDA_VISIBLE_DEVICES hiding them all:
	 * one answer, with CUDA's own reason beside it. */
	e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "no CUDA device found (%s)",
		    cudaGetErrorString(e));
		return -1;
	}
	if (count == 0) {
		snprintf(err, errlen, "no CUDA device found");
		return -1;
	}
	CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
	if (name != NULL && namelen > 0)
		snprintf(name, namelen, "%s", prop.name);
	return 0;
fail:
	return -1;
}

extern "C" int
gpu_memory(double *free_bytes, double *total_bytes, char *err, size_t errlen)
{
	size_t fr = 0, tot = 0;

	*free_bytes = 0;
	*total_bytes = 0;
	if (gpu_available(NULL, 0, err, errlen) != 0)
		return -1;
	CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
	*free_bytes = (double)fr;
	*total_bytes = (double)tot;
	return 0;
fail:
	return -1;
}

cudaError_t
gpu_dev_alloc(void **p, size_t size, double *bytes)
{
	cudaError_t e;

	*p = NULL;
	if (size == 0)
		return cudaSuccess;
	e = cudaMalloc(p, size);
	if (e == cudaSuccess && bytes != NULL)
		*bytes += (double)size;
	return e;
}

static int
gpu_dev_cmp(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

float
gpu_dev_median_ms(float *times, int runs)
{
	if (runs <= 1)
		return times[0];
	qsort(times + 1, (size_t)runs - 1, sizeof *times, gpu_dev_cmp);
	return times[1 + (runs - 1) / 2];
}
