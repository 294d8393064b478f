/*
 * gpubwd.c - gpu_backward_run(), the front end of every kernel's backward
 * pass (gpu.h), as gpu.c is the forward's: checks the problems against
 * the kernel's backward, lays out the simulator's backward schedule
 * (key blocks outside) for the trace's shape, packs the problems' inputs
 * one after another and owns the result's host arrays, then calls the
 * backward's launch.  Plain C, the same in a build without CUDA (where
 * gpu_available() stops it first).
 */
#include "config.h"

#include "gpu.h"
#include "kernels.h"
#include "model/backward.h"
#include "model/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const gpubwd_dq_names[] = {
	[GPU_DQ_ATOMIC] = "atomic",
	[GPU_DQ_ORDERED] = "ordered",
};

const char *
gpu_dq_mode_name(enum gpu_dq_mode m)
{
	return gpubwd_dq_names[m];
}

int
gpu_dq_mode_parse(const char *name, enum gpu_dq_mode *out)
{
	int m;

	for (m = 0; m < 2; m++)
		if (strcmp(name, gpubwd_dq_names[m]) == 0) {
			*out = (enum gpu_dq_mode)m;
			return 0;
		}
	return -1;
}

void
gpu_grads_free(struct gpu_grads *g)
{
	free(g->grad_q);
	free(g->grad_k);
	free(g->grad_v);
	free(g->grad_s);
	free(g->trace_dk);
	free(g->trace_dv);
	free(g->trace_dq);
	memset(g, 0, sizeof *g);
}

/* The inputs a problem has, by what they are. */
enum gpubwd_input { GPUBWD_Q, GPUBWD_K, GPUBWD_V, GPUBWD_S };

static const float *
gpubwd_input(const struct problem *p, enum gpubwd_input which)
{
	return which == GPUBWD_Q ? p->q : which == GPUBWD_K ? p->k :
	    which == GPUBWD_V ? p->v : p->s;
}

/* One input of every problem (each count floats), one after another,
 * malloc'd into *out; none (NULL) when count is 0. */
static int
gpubwd_pack(const struct problem *ps, int n, enum gpubwd_input which,
    size_t count, float **out, char *err, size_t errlen)
{
	int b;

	*out = NULL;
	if (count == 0)
		return 0;
	if (count > (size_t)-1 / sizeof(float) / (size_t)n)
		return util_error(err, errlen, "the backward's inputs: size "
		    "overflows memory");
	*out = util_calloc((size_t)n * count, sizeof **out, "the backward's "
	    "inputs", err, errlen);
	if (*out == NULL)
		return -1;
	for (b = 0; b < n; b++)
		memcpy(*out + (size_t)b * count, gpubwd_input(&ps[b], which),
		    count * sizeof **out);
	return 0;
}

/* *x: count floats, NaN-filled when nan, else zeroed; none when 0. */
static int
gpubwd_array(float **x, size_t count, int nan, char *err, size_t errlen)
{
	*x = NULL;
	if (count == 0)
		return 0;
	*x = nan ? gpu_nan_floats(count, err, errlen) : util_calloc(count,
	    sizeof **x, "gradients", err, errlen);
	return *x != NULL ? 0 : -1;
}

/* The result's arrays, by the schedule's steps and tiles. */
static int
gpubwd_result(struct gpu_grads *g, const struct problem *p, int n,
    const struct schedule *s, enum gpu_dq_mode dq, unsigned flags,
    char *err, size_t errlen)
{
	const size_t nn = (size_t)n, steps = nn * (size_t)s->nsteps;

	g->n = n;
	g->tq = p->tq;
	g->tk = p->tk;
	g->d = p->scores_mode ? 0 : p->d;
	g->dv = p->dv;
	g->nsteps = s->nsteps;
	g->br = s->br;
	g->bc = s->bc;
	if (gpubwd_array(&g->grad_q, nn * p->tq * g->d, 0, err, errlen) != 0 ||
	    gpubwd_array(&g->grad_k, nn * p->tk * g->d, 0, err, errlen) != 0 ||
	    gpubwd_array(&g->grad_v, nn * p->tk * p->dv, 0, err, errlen) != 0 ||
	    (p->scores_mode && gpubwd_array(&g->grad_s, nn * p->tq * p->tk, 0, err,
	    errlen) != 0))
		return -1;
	if (!(flags & GPU_BWD_TRACE))
		return 0;
	if ((double)steps * (s->bc + s->br) * (g->d + p->dv) * sizeof(float) >
	    (double)SIZE_MAX / 2)
		return util_error(err, errlen, "the backward's trace: size "
		    "overflows memory");
	if (gpubwd_array(&g->trace_dk, steps * s->bc * g->d, 1, err,
	    errlen) != 0 || gpubwd_array(&g->trace_dv, steps * s->bc * p->dv, 1,
	    err, errlen) != 0)
		return -1;
	if (dq == GPU_DQ_ORDERED)
		return gpubwd_array(&g->trace_dq, steps * s->br * g->d, 1, err,
		    errlen);
	return 0;
}

int
gpu_backward_run(const struct gpu_kernel *k, const struct problem *ps,
    int n, const struct tiling *t, const struct gpu_bwd_inputs *in, int bug,
    enum gpu_dq_mode dq, unsigned flags, int repeat, struct gpu_grads *g,
    char *err, size_t errlen)
{
	const struct problem *p = &ps[0];
	struct tiling bt;
	struct schedule sched;
	struct gpu_bwd_job job;
	float *q = NULL, *kk = NULL, *v = NULL, *s = NULL, *slopes = NULL;
	const size_t d = p->scores_mode ? 0 : (size_t)p->d;
	int rc = -1, b;

	memset(g, 0, sizeof *g);
	memset(&sched, 0, sizeof sched);
	if (gpu_problems_alike(ps, n, err, errlen) != 0 ||
	    gpu_backward_check(k, p, bug, err, errlen) != 0)
		return -1;
	if (in->o == NULL || in->lse == NULL || in->dout == NULL ||
	    (bug == BWD_BUG_MAX_NOT_LSE && in->m == NULL))
		return util_error(err, errlen, "the backward needs the forward's "
		    "O and lse and dO (and the row max for max-not-lse)");
	if ((flags & GPU_BWD_TRACE) && !(k->backward->caps & GPU_CAP_TRACE))
		return util_error(err, errlen, "kernel %s's backward keeps no "
		    "trace of its steps (--kernel teaching's and fast's do)", k->name);
	if (gpu_available(g->device, sizeof g->device, err, errlen) !=
	    GPU_READY || gpu_kernel_on_device(k, err, errlen) != 0)
		return -1;
	/* A backward that keeps (Tq, Tk) arrays says what it needs. */
	if (k->backward->device_bytes != NULL &&
	    gpu_fits(k->backward->device_bytes(p, n), err, errlen) != 0)
		return -1;
	/* The backward's own loop order: key blocks outside (backward.h),
	 * on its own tiles where it has them. */
	gpu_backward_tiling(k, t, &bt);
	if (schedule_init(&sched, p, &bt, err, errlen) != 0)
		return -1;
	if (gpubwd_result(g, p, n, &sched, dq, flags, err, errlen) != 0 ||
	    gpubwd_pack(ps, n, GPUBWD_Q, (size_t)p->tq * d, &q, err,
	    errlen) != 0 ||
	    gpubwd_pack(ps, n, GPUBWD_K, (size_t)p->tk * d, &kk, err,
	    errlen) != 0 ||
	    gpubwd_pack(ps, n, GPUBWD_V, (size_t)p->tk * p->dv, &v, err,
	    errlen) != 0 ||
	    gpubwd_pack(ps, n, GPUBWD_S, p->scores_mode ? (size_t)p->tq *
	    p->tk : 0, &s, err, errlen) != 0)
		goto out;

	memset(&job, 0, sizeof job);
	job.n = n;
	job.tq = p->tq;
	job.tk = p->tk;
	job.d = (int)d;
	job.dv = p->dv;
	job.scale = p->scale;
	job.causal = p->causal;
	job.mask = problem_mask(p, 0);
	/* each problem's ALiBi slope (a head a problem) */
	if (p->alibi != NULL) {
		slopes = util_calloc((size_t)n, sizeof *slopes, "ALiBi slopes", err,
		    errlen);
		if (slopes == NULL)
			goto out;
		for (b = 0; b < n; b++)
			slopes[b] = ps[b].alibi[0];
	}
	job.slopes = slopes;
	job.dtype = p->dtype;
	job.bug = bug;
	job.q = q;
	job.k = kk;
	job.v = v;
	job.s = s;
	job.in = *in;
	job.br = bt.br;
	job.bc = bt.bc;
	job.dq = dq;
	job.flags = flags;
	job.repeat = repeat;
	job.g = g;
	rc = k->backward->launch(&job, err, errlen);
out:
	if (rc != 0)
		gpu_grads_free(g);
	free(q);
	free(kk);
	free(slopes);
	free(v);
	free(s);
	schedule_free(&sched);
	return rc;
}
