/* gpu_stub.c - the GPU API in a build without CUDA: it says so. */
#include "config.h"

#include "gpu.h"

int
gpu_built(void)
{
	return 0;
}
