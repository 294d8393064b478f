/*
 * gpu.c - the GPU API of gpu.h in a CUDA build, on the C side: checks the
 * problems, lays out the simulator's schedule for the kernel, owns the
 * host arrays of a result, finds the fast kernel's tilings, and keeps the
 * view's trace (gpu_step_values).  Every CUDA call is in the .cu files
 * behind kernels.h and fast.h.
 */
#include "config.h"

#include "fast.h"
#include "gpu.h"
#include "kernels.h"
#include "model/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
gpu_built(void)
{
	return 1;
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

/* Heads and batch share one launch, so they must share one shape. */
static int
gpu_check_problems(const struct problem *ps, int n, char *err, size_t errlen)
{
	const struct problem *a = &ps[0], *b;
	int i;

	if (n < 1)
		return util_error(err, errlen, "no problem to run");
	for (i = 1; i < n; i++) {
		b = &ps[i];
		if (b->tq != a->tq || b->tk != a->tk || b->d != a->d ||
		    b->dv != a->dv || b->scale != a->scale ||
		    b->causal != a->causal || b->dtype != a->dtype ||
		    b->scores_mode != a->scores_mode)
			return util_error(err, errlen, "problem %d differs from "
			    "problem 0 in shape, scale, mask, dtype or kind (heads "
			    "and batch share one shape)", i);
	}
	return 0;
}

/* The job's inputs: one pointer per problem into each problem's arrays. */
static int
gpu_job_inputs(struct gpu_job *job, const struct problem *ps, int n,
    const float ***ptrs, char *err, size_t errlen)
{
	const float **p;
	int b;

	p = util_calloc((size_t)n * 5, sizeof *p, "problem list", err, errlen);
	if (p == NULL)
		return -1;
	for (b = 0; b < n; b++) {
		p[b] = ps[b].q;
		p[n + b] = ps[b].k;
		p[2 * n + b] = ps[b].kt;
		p[3 * n + b] = ps[b].v;
		p[4 * n + b] = ps[b].s;
	}
	job->q = p;
	job->k = p + n;
	job->kt = p + 2 * n;
	job->v = p + 3 * n;
	job->s = p + 4 * n;
	job->n = n;
	job->tq = ps[0].tq;
	job->tk = ps[0].tk;
	job->d = ps[0].d;
	job->dv = ps[0].dv;
	job->scale = ps[0].scale;
	job->causal = ps[0].causal;
	job->scores = ps[0].scores_mode;
	job->dtype = ps[0].dtype;
	*ptrs = p;
	return 0;
}

/* O and lse for n problems. */
static int
gpu_result_outputs(struct gpu_result *res, const struct problem *p, int n,
    char *err, size_t errlen)
{
	res->n = n;
	res->tq = p->tq;
	res->dv = p->dv;
	res->o = util_calloc((size_t)n * p->tq * p->dv, sizeof *res->o, "GPU output",
	    err, errlen);
	res->lse = util_calloc((size_t)n * p->tq, sizeof *res->lse, "GPU output",
	    err, errlen);
	return res->o != NULL && res->lse != NULL ? 0 : -1;
}

/* The trace arrays flags ask for, laid out by the schedule's steps. */
static int
gpu_result_trace(struct gpu_result *res, const struct schedule *sched, int n,
    int dv, unsigned flags, char *err, size_t errlen)
{
	size_t trace = (size_t)n * (size_t)sched->nsteps * (size_t)sched->br;

	res->nsteps = sched->nsteps;
	res->br = sched->br;
	if (flags & GPU_TRACE) {
		res->m_new = util_calloc(trace, sizeof(float), "GPU trace", err, errlen);
		res->alpha = util_calloc(trace, sizeof(float), "GPU trace", err, errlen);
		res->l_new = util_calloc(trace, sizeof(float), "GPU trace", err, errlen);
		if (res->m_new == NULL || res->alpha == NULL || res->l_new == NULL)
			return -1;
	}
	if (flags & GPU_TRACE_ACC) {
		if (trace > (size_t)-1 / sizeof(float) / (size_t)dv)
			return util_error(err, errlen, "GPU trace: size overflows "
			    "memory");
		res->acc = util_calloc(trace * (size_t)dv, sizeof(float),
		    "GPU trace", err, errlen);
		if (res->acc == NULL)
			return -1;
	}
	return 0;
}

/* Where the kernel writes: the result's output and trace arrays. */
static void
gpu_job_outputs(struct gpu_job *job, struct gpu_result *res)
{
	job->o = res->o;
	job->lse = res->lse;
	job->m_new = res->m_new;
	job->alpha = res->alpha;
	job->l_new = res->l_new;
	job->acc = res->acc;
}

/* The simulator's schedule, for the kernel to visit the same tiles. */
static void
gpu_job_schedule(struct gpu_job *job, const struct schedule *sched)
{
	job->br = sched->br;
	job->bc = sched->bc;
	job->tr = sched->tr;
	job->tc = sched->tc;
	job->order = sched->order;
	job->jend = sched->jend;
	job->ibegin = sched->ibegin;
	job->first = sched->first;
	job->nsteps = sched->nsteps;
}

int
gpu_teach(const struct problem *ps, int n, const struct tiling *t,
    const struct online_rule *rule, unsigned flags, int repeat,
    struct gpu_result *res, char *err, size_t errlen)
{
	struct schedule sched;
	struct gpu_job job;
	const float **ptrs = NULL;
	int rc = -1;

	memset(res, 0, sizeof *res);
	memset(&sched, 0, sizeof sched);
	memset(&job, 0, sizeof job);
	if (gpu_check_problems(ps, n, err, errlen) != 0)
		return -1;
	if (!online_rule_valid(rule))
		return util_error(err, errlen, "bug '%s' belongs to the normalized "
		    "convention (use --convention normalized)",
		    online_bug_name(rule->bug));
	if (gpu_available(res->device, sizeof res->device, err, errlen) != 0)
		return -1;
	if (schedule_init(&sched, &ps[0], t, err, errlen) != 0)
		goto fail;
	if (gpu_job_inputs(&job, ps, n, &ptrs, err, errlen) != 0 ||
	    gpu_result_outputs(res, &ps[0], n, err, errlen) != 0)
		goto fail;

	if (flags & GPU_TRACE_ACC)
		flags |= GPU_TRACE;
	if (gpu_result_trace(res, &sched, n, ps[0].dv, flags, err, errlen) != 0)
		goto fail;
	gpu_job_schedule(&job, &sched);
	job.convention = rule->convention;
	job.bug = rule->bug;
	job.flags = flags;
	job.repeat = repeat;
	gpu_job_outputs(&job, res);
	if (gpu_teach_launch(&job, err, errlen) != 0)
		goto fail;
	res->ms = job.ms;
	res->device_bytes = job.bytes;
	rc = 0;
fail:
	if (rc != 0)
		gpu_result_free(res);
	free(ptrs);
	schedule_free(&sched);
	return rc;
}

int
gpu_naive(const struct problem *ps, int n, int repeat, struct gpu_result *res,
    char *err, size_t errlen)
{
	struct gpu_job job;
	const float **ptrs = NULL;
	int rc = -1;

	memset(res, 0, sizeof *res);
	memset(&job, 0, sizeof job);
	if (gpu_check_problems(ps, n, err, errlen) != 0)
		return -1;
	if (gpu_available(res->device, sizeof res->device, err, errlen) != 0)
		return -1;
	if (gpu_job_inputs(&job, ps, n, &ptrs, err, errlen) != 0 ||
	    gpu_result_outputs(res, &ps[0], n, err, errlen) != 0)
		goto fail;
	job.repeat = repeat;
	job.o = res->o;
	job.lse = res->lse;
	if (gpu_naive_launch(&job, err, errlen) != 0)
		goto fail;
	res->ms = job.ms;
	res->device_bytes = job.bytes;
	rc = 0;
fail:
	if (rc != 0)
		gpu_result_free(res);
	free(ptrs);
	return rc;
}

/*
 * The fast kernel's variant index for d with tiles Br x Bc (the first of
 * them: 128 x 64 at d = 128 exists with 4 and 8 warps), or -1.  Br = Bc
 * = 0: the default.
 */
static int
gpu_fast_variant(int d, int br, int bc)
{
	struct fast_config cfg;
	int i;

	if (br == 0 && bc == 0)
		return fast_attention_variant(d, -1, &cfg) == 0 ? -1 : -2;
	for (i = 0; fast_attention_variant(d, i, &cfg) == 0; i++)
		if (cfg.br == br && cfg.bc == bc)
			return i;
	return -2;
}

/* "128x64 (default), 128x128, 64x64": the tilings for d, for messages. */
static void
gpu_fast_list(int d, char *buf, size_t len)
{
	struct fast_config cfg, def, prev;
	size_t at = 0;
	int i, k, dup;

	buf[0] = '\0';
	if (fast_attention_variant(d, -1, &def) != 0)
		return;
	for (i = 0; fast_attention_variant(d, i, &cfg) == 0 && at < len; i++) {
		for (dup = 0, k = 0; k < i && !dup; k++) {
			fast_attention_variant(d, k, &prev);
			dup = prev.br == cfg.br && prev.bc == cfg.bc;
		}
		if (dup)
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%dx%d%s",
		    at > 0 ? ", " : "", cfg.br, cfg.bc,
		    cfg.br == def.br && cfg.bc == def.bc ? " (default)" : "");
	}
}

int
gpu_fast_tiling(int d, int br, int bc, struct tiling *t, char *err,
    size_t errlen)
{
	struct fast_config cfg;
	char list[128];
	int v;

	memset(t, 0, sizeof *t);
	if (d != 64 && d != 128)
		return util_error(err, errlen, "the fast kernel takes d = 64 or "
		    "128, not d = %d", d);
	v = gpu_fast_variant(d, br, bc);
	if (v == -2) {
		gpu_fast_list(d, list, sizeof list);
		return util_error(err, errlen, "the fast kernel has no Br = %d, "
		    "Bc = %d tiling at d = %d; it has Br x Bc = %s", br, bc, d,
		    list);
	}
	fast_attention_variant(d, v, &cfg);
	t->br = cfg.br;
	t->bc = cfg.bc;
	t->order = ORDER_FA2;
	return 0;
}

/* What the fast kernel takes, checked before CUDA starts. */
static int
gpu_fast_check(const struct problem *p, const struct tiling *t,
    unsigned flags, int *variant, char *err, size_t errlen)
{
	struct tiling any;

	if (p->scores_mode)
		return util_error(err, errlen, "the fast kernel computes S from Q "
		    "and K; it does not take scores");
	if (p->dtype != DTYPE_FP16 && p->dtype != DTYPE_BF16)
		return util_error(err, errlen, "the fast kernel takes fp16 or bf16 "
		    "inputs (--dtype fp16|bf16), not %s", dtype_name(p->dtype));
	if (p->d != p->dv || (p->d != 64 && p->d != 128))
		return util_error(err, errlen, "the fast kernel takes d = dv = 64 "
		    "or 128, not d = %d, dv = %d", p->d, p->dv);
	if (!(p->scale > 0.0f))
		return util_error(err, errlen, "the fast kernel needs a positive "
		    "scale, not %g", (double)p->scale);
	if (t->order != ORDER_FA2)
		return util_error(err, errlen, "the fast kernel runs the fa2 loop "
		    "order only (--order fa2)");
	if (t->br <= 0 || t->bc <= 0)
		return util_error(err, errlen, "tile sizes must be positive "
		    "(Br=%d, Bc=%d)", t->br, t->bc);
	*variant = gpu_fast_variant(p->d, t->br, t->bc);
	if (*variant == -2)
		return gpu_fast_tiling(p->d, t->br, t->bc, &any, err, errlen);
	if ((flags & GPU_TEST_NO_RESCALE) && !(flags & GPU_TRACE))
		return util_error(err, errlen, "the fast kernel's test fault lives "
		    "in its trace build: ask for the trace too");
	return 0;
}

int
gpu_fast(const struct problem *ps, int n, const struct tiling *t,
    unsigned flags, int repeat, struct gpu_result *res, char *err,
    size_t errlen)
{
	struct schedule sched;
	struct gpu_job job;
	const float **ptrs = NULL;
	int variant = -1, rc = -1;

	memset(res, 0, sizeof *res);
	memset(&sched, 0, sizeof sched);
	memset(&job, 0, sizeof job);
	if (flags & GPU_TRACE_ACC)
		flags |= GPU_TRACE;
	if (gpu_check_problems(ps, n, err, errlen) != 0 ||
	    gpu_fast_check(&ps[0], t, flags, &variant, err, errlen) != 0)
		return -1;
	if (gpu_available(res->device, sizeof res->device, err, errlen) != 0)
		return -1;
	if (schedule_init(&sched, &ps[0], t, err, errlen) != 0)
		goto fail;
	if (gpu_job_inputs(&job, ps, n, &ptrs, err, errlen) != 0 ||
	    gpu_result_outputs(res, &ps[0], n, err, errlen) != 0)
		goto fail;

	if (gpu_result_trace(res, &sched, n, ps[0].dv, flags, err, errlen) != 0)
		goto fail;
	gpu_job_schedule(&job, &sched);
	job.convention = CONV_UNNORMALIZED;
	job.bug = BUG_NONE;
	job.flags = flags;
	job.repeat = repeat;
	job.variant = variant;
	gpu_job_outputs(&job, res);
	if (gpu_fast_launch(&job, err, errlen) != 0)
		goto fail;
	res->ms = job.ms;
	res->device_bytes = job.bytes;
	rc = 0;
fail:
	if (rc != 0)
		gpu_result_free(res);
	free(ptrs);
	schedule_free(&sched);
	return rc;
}

/*
 * The view's trace: one problem's run with GPU_TRACE, kept until the
 * problem, tiling or rule changes (or gpu_forget).  The key holds the
 * problem's address and the addresses of its arrays, so a problem freed
 * and rebuilt at the same address with new inputs is still noticed.
 */
static struct {
	int valid;
	const struct problem *p;
	struct problem shape;	/* a shallow copy: sizes and array addresses */
	struct tiling t;
	struct online_rule rule;
	struct gpu_result res;
} gpu_cache;

static int
gpu_cache_hit(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule)
{
	const struct problem *c = &gpu_cache.shape;

	return gpu_cache.valid && gpu_cache.p == p && c->tq == p->tq &&
	    c->tk == p->tk && c->d == p->d && c->dv == p->dv &&
	    c->scale == p->scale && c->causal == p->causal &&
	    c->dtype == p->dtype && c->scores_mode == p->scores_mode &&
	    c->q == p->q && c->k == p->k && c->v == p->v && c->s == p->s &&
	    gpu_cache.t.br == t->br && gpu_cache.t.bc == t->bc &&
	    gpu_cache.t.order == t->order &&
	    gpu_cache.rule.convention == rule->convention &&
	    gpu_cache.rule.bug == rule->bug;
}

void
gpu_forget(void)
{
	if (gpu_cache.valid)
		gpu_result_free(&gpu_cache.res);
	memset(&gpu_cache, 0, sizeof gpu_cache);
}

int
gpu_step_values(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, long k, float *m_new, float *alpha,
    float *l_new, char *err, size_t errlen)
{
	struct schedule sched;
	struct schedule_tile tile;
	size_t at;
	int rows;

	if (!gpu_cache_hit(p, t, rule)) {
		gpu_forget();
		if (gpu_teach(p, 1, t, rule, GPU_TRACE, 0, &gpu_cache.res, err,
		    errlen) != 0)
			return -1;
		gpu_cache.valid = 1;
		gpu_cache.p = p;
		gpu_cache.shape = *p;
		gpu_cache.t = *t;
		gpu_cache.rule = *rule;
	}
	if (k < 0 || k >= gpu_cache.res.nsteps)
		return util_error(err, errlen, "step %ld is out of range (0 .. %ld)",
		    k, gpu_cache.res.nsteps - 1);
	/* The step's rows: the same schedule the kernel ran. */
	if (schedule_init(&sched, p, t, err, errlen) != 0)
		return -1;
	schedule_tile(&sched, k, &tile);
	schedule_free(&sched);
	rows = tile.r1 - tile.r0;
	at = gpu_trace_at(&gpu_cache.res, 0, k, 0);
	memcpy(m_new, gpu_cache.res.m_new + at, (size_t)rows * sizeof *m_new);
	memcpy(alpha, gpu_cache.res.alpha + at, (size_t)rows * sizeof *alpha);
	memcpy(l_new, gpu_cache.res.l_new + at, (size_t)rows * sizeof *l_new);
	return 0;
}
