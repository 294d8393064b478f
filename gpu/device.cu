/* device.cu - is there a GPU to run on, what is it, and how much memory
 * has it free?  (gpu_built, gpu_available, gpu_compute_capability and
 * gpu_memory of gpu.h); and the device memory counter of the kernels'
 * host code (cudacheck.h).  gpu_stub.c answers the same questions in a
 * build without CUDA. */
#include "config.h"

#include "cudacheck.h"

#include <stdlib.h>
#include <string.h>

extern "C" {
#include "gpu.h"
#include "model/util.h"
}

extern "C" int
gpu_built(void)
{
	return 1;
}

/* "13.0" from CUDA's 13000. */
static void
device_version(int v, char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
}

/*
 * Why cudaGetDeviceCount said e.  A host without any driver gets the
 * same cudaErrorInsufficientDriver as one with a driver too old for
 * this runtime: the driver's version, 0 when libcuda is missing, tells
 * them apart.
 */
static enum gpu_status
device_why(cudaError_t e, char *err, size_t errlen)
{
	char have[16], need[16];
	const char *hidden;
	int drv = 0, rt = 0;

	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);
	device_version(drv, have, sizeof have);
	device_version(rt, need, sizeof need);
	if (e == cudaErrorNoDevice) {
		hidden = getenv("CUDA_VISIBLE_DEVICES");
		if (hidden != NULL)
			util_error(err, errlen, "no CUDA device found "
			    "(CUDA_VISIBLE_DEVICES is '%s')", hidden);
		else
			util_error(err, errlen, "no CUDA device found");
		return GPU_NO_DEVICE;
	}
	if (e == cudaErrorInsufficientDriver && drv == 0) {
		util_error(err, errlen, "no CUDA driver: libcuda is not "
		    "installed (this build needs a driver for CUDA %s or newer)",
		    need);
		return GPU_NO_DRIVER;
	}
	if (e == cudaErrorInsufficientDriver)
		util_error(err, errlen, "the CUDA driver is too old: it runs "
		    "CUDA %s, this build needs %s or newer", have, need);
	else
		util_error(err, errlen, "the CUDA driver cannot be used: %s "
		    "(driver for CUDA %s, runtime %s)", cudaGetErrorString(e),
		    have, need);
	return GPU_BAD_DRIVER;
}

extern "C" enum gpu_status
gpu_available(char *name, size_t namelen, char *err, size_t errlen)
{
	struct cudaDeviceProp prop;
	cudaError_t e;
	int count = 0;
	char scratch[8];

	if (err == NULL) {
		err = scratch;
		errlen = sizeof scratch;
	}
	if (name != NULL && namelen > 0)
		name[0] = '\0';
	e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess)
		return device_why(e, err, errlen);
	if (count == 0)
		return device_why(cudaErrorNoDevice, err, errlen);
	e = cudaGetDeviceProperties(&prop, 0);
	if (e != cudaSuccess)
		return device_why(e, err, errlen);
	if (name != NULL && namelen > 0)
		snprintf(name, namelen, "%s", prop.name);
	return GPU_READY;
}

extern "C" int
gpu_compute_capability(int *cc, char *name, size_t namelen, char *err,
    size_t errlen)
{
	struct cudaDeviceProp prop;

	*cc = 0;
	if (gpu_available(name, namelen, err, errlen) != GPU_READY)
		return -1;
	CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
	*cc = prop.major * 10 + prop.minor;
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
	if (gpu_available(NULL, 0, err, errlen) != GPU_READY)
		return -1;
	CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
	*free_bytes = (double)fr;
	*total_bytes = (double)tot;
	return 0;
fail:
	return -1;
}

cudaError_t
gpu_mem_alloc(struct gpu_mem *m, void **p, size_t size, enum gpu_mem_use use)
{
	cudaError_t e;

	*p = NULL;
	if (size == 0)
		return cudaSuccess;
	/* More buffers than any kernel here takes: a programming error. */
	if (m->n == GPU_MEM_MAX)
		return cudaErrorMemoryAllocation;
	e = cudaMalloc(p, size);
	if (e != cudaSuccess)
		return e;
	m->ptr[m->n++] = *p;
	if (use == GPU_MEM_KERNEL)
		m->bytes += (double)size;
	return cudaSuccess;
}

void
gpu_mem_free(struct gpu_mem *m)
{
	while (m->n > 0)
		cudaFree(m->ptr[--m->n]);
}
