/* gpu_stub.c - the GPU API in a build without CUDA: it says so. */
#include "config.h"

#include "gpu.h"
#include "util.h"

static const char no_cuda[] = "built without CUDA support";

int
gpu_built(void)
{
	return 0;
}

int
gpu_available(char *name, size_t namelen, char *err, size_t errlen)
{
	(void)name;
	(void)namelen;
	return util_error(err, errlen, "%s", no_cuda);
}

int
gpu_step_values(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, long k, float *m_new, float *alpha,
    float *l_new, char *err, size_t errlen)
{
	(void)p;
	(void)t;
	(void)rule;
	(void)k;
	(void)m_new;
	(void)alpha;
	(void)l_new;
	return util_error(err, errlen, "%s", no_cuda);
}

void
gpu_forget(void)
{
}
