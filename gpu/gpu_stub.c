/* gpu_stub.c - the GPU API in a build without CUDA: it says so. */
#include "config.h"

#include "gpu.h"
#include "model/util.h"

#include <stdlib.h>
#include <string.h>

static const char no_cuda[] = "built without CUDA support";

int
gpu_built(void)
{
	return 0;
}

int
gpu_available(char *name, size_t namelen, char *err, size_t errlen)
{
	if (name != NULL && namelen > 0)
		name[0] = '\0';
	return util_error(err, errlen, "%s", no_cuda);
}

int
gpu_teach(const struct problem *ps, int n, const struct tiling *t,
    const struct online_rule *rule, unsigned flags, int repeat,
    struct gpu_result *res, char *err, size_t errlen)
{
	(void)ps;
	(void)n;
	(void)t;
	(void)rule;
	(void)flags;
	(void)repeat;
	memset(res, 0, sizeof *res);
	return util_error(err, errlen, "%s", no_cuda);
}

int
gpu_naive(const struct problem *ps, int n, int repeat, struct gpu_result *res,
    char *err, size_t errlen)
{
	(void)ps;
	(void)n;
	(void)repeat;
	memset(res, 0, sizeof *res);
	return util_error(err, errlen, "%s", no_cuda);
}

int
gpu_fast_tiling(int d, int br, int bc, struct tiling *t, char *err,
    size_t errlen)
{
	(void)d;
	(void)br;
	(void)bc;
	memset(t, 0, sizeof *t);
	return util_error(err, errlen, "%s", no_cuda);
}

int
gpu_fast(const struct problem *ps, int n, const struct tiling *t,
    unsigned flags, int repeat, struct gpu_result *res, char *err,
    size_t errlen)
{
	(void)ps;
	(void)n;
	(void)t;
	(void)flags;
	(void)repeat;
	memset(res, 0, sizeof *res);
	return util_error(err, errlen, "%s", no_cuda);
}

int
gpu_memory(double *free_bytes, double *total_bytes, char *err, size_t errlen)
{
	*free_bytes = 0;
	*total_bytes = 0;
	return util_error(err, errlen, "%s", no_cuda);
}

void
gpu_result_free(struct gpu_result *res)
{
	free(res->o);
	free(res->lse);
	free(res->m_new);
	free(res->alpha);
	free(res->l_new);
	free(res->acc);
	memset(res, 0, sizeof *res);
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
