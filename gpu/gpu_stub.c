/* gpu_stub.c - device.cu in a build without CUDA: it says so.  The rest
 * of the GPU half's C side (gpu.c, kernel.c, gpucheck.c) is the same in
 * both builds, and stops at gpu_available() before it would run a
 * kernel. */
#include "config.h"

#include "gpu.h"
#include "model/util.h"

#include <stdio.h>

int
gpu_built(void)
{
	return 0;
}

enum gpu_status
gpu_available(char *name, size_t namelen, char *err, size_t errlen)
{
	if (name != NULL && namelen > 0)
		name[0] = '\0';
	if (err != NULL)
		util_error(err, errlen, "built without CUDA support");
	return GPU_NOT_BUILT;
}

int
gpu_memory(double *free_bytes, double *total_bytes, char *err, size_t errlen)
{
	*free_bytes = 0;
	*total_bytes = 0;
	gpu_available(NULL, 0, err, errlen);
	return -1;
}

int
gpu_compute_capability(int *cc, char *name, size_t namelen, char *err,
    size_t errlen)
{
	*cc = 0;
	gpu_available(name, namelen, err, errlen);
	return -1;
}
