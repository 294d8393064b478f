/*
 * gpu.c - gpu_run(), the one front end of every kernel (gpu.h): checks
 * the problems against the kernel's entry, lays out the simulator's
 * schedule, owns the host arrays of a result, and calls the entry's
 * launch and trace.  Plain C, the same in a build without CUDA (where
 * gpu_available() stops it before a kernel would be called); every CUDA
 * call is in the kernels' .cu files.
 */
#include "config.h"

#include "gpu.h"
#include "kernels.h"
#include "model/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
gpu_required(void)
{
	const char *v = getenv("FLASHSTEP_REQUIRE_GPU");

	return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

int
gpu_may_skip(enum gpu_status why)
{
	if (gpu_required())
		return 0;
	return why == GPU_NOT_BUILT || why == GPU_NO_DRIVER ||
	    why == GPU_NO_DEVICE;
}

int
gpu_kernel_on_device(const struct gpu_kernel *k, char *err, size_t errlen)
{
	char name[64];
	int cc;

	if (k->cc == 0)
		return 0;
	if (gpu_compute_capability(&cc, name, sizeof name, err, errlen) != 0)
		return -1;
	if (cc == k->cc)
		return 0;
	return util_error(err, errlen, "kernel %s runs only on compute "
	    "capability %d.%d (sm_%da%s); this GPU, %s, is %d.%d", k->name,
	    k->cc / 10, k->cc % 10, k->cc, k->cc == 90 ? ": H100, H200" : "",
	    name, cc / 10, cc % 10);
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

double
gpu_result_diff(const struct gpu_result *r, const struct gpu_result *ref,
    size_t n)
{
	double diff = 0, rmax = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		diff = fmax(diff, fabs((double)r->o[i] - ref->o[i]));
		rmax = fmax(rmax, fabs((double)ref->o[i]));
	}
	return rmax > 0 ? diff / rmax : diff;
}

/* Heads and batch share one launch, so they must share one shape, and
 * one launch's grid takes 65535 of them at most. */
int
gpu_problems_alike(const struct problem *ps, int n, char *err, size_t errlen)
{
	const struct problem *a = &ps[0], *b;
	int i;

	if (n < 1 || n > 65535)
		return util_error(err, errlen, "%d problems: one launch takes 1 "
		    "to 65535 (heads times batch)", n);
	for (i = 1; i < n; i++) {
		b = &ps[i];
		if (b->tq != a->tq || b->tk != a->tk || b->d != a->d ||
		    b->dv != a->dv || b->scale != a->scale ||
		    b->causal != a->causal || b->dtype != a->dtype ||
		    b->mask.window != a->mask.window ||
		    b->mask.left != a->mask.left ||
		    b->mask.right != a->mask.right ||
		    b->mask.softcap != a->mask.softcap ||
		    (b->alibi == NULL) != (a->alibi == NULL) ||
		    b->scores_mode != a->scores_mode ||
		    problem_rows(b) != problem_rows(a) ||
		    b->kv_heads != a->kv_heads || b->nseq != a->nseq ||
		    (a->nseq > 0 && (memcmp(b->cu_q, a->cu_q, ((size_t)a->nseq +
		    1) * sizeof *a->cu_q) != 0 || memcmp(b->cu_k, a->cu_k,
		    ((size_t)a->nseq + 1) * sizeof *a->cu_k) != 0)))
			return util_error(err, errlen, "problem %d differs from "
			    "problem 0 in shape, heads, scale, mask, dtype, kind "
			    "or sequence lengths (heads and batch share one "
			    "shape)", i);
		/* Dropout: one p, seed and offset, and the keep bits of
		 * problem i drawn for head head0 + i (the teaching kernels
		 * count a launch's problems as heads from problem 0's). */
		if (b->mask.dropout != a->mask.dropout ||
		    b->mask.seed_lo != a->mask.seed_lo ||
		    b->mask.seed_hi != a->mask.seed_hi ||
		    b->mask.drop_offset != a->mask.drop_offset)
			return util_error(err, errlen, "problem %d differs from "
			    "problem 0 in dropout's p, seed or offset", i);
		if (mask_rule_has(a->mask, MASK_DROPOUT) &&
		    b->head0 != a->head0 + i)
			return util_error(err, errlen, "problem %d is head %d, not "
			    "%d: with --dropout one launch runs consecutive heads "
			    "(their keep bits are drawn per head)", i, b->head0,
			    a->head0 + i);
	}
	return 0;
}

/* NaN (all bits set) floats, so an entry nobody wrote cannot pass for
 * a value. */
float *
gpu_nan_floats(size_t n, char *err, size_t errlen)
{
	float *x = util_calloc(n, sizeof *x, "GPU trace", err, errlen);

	if (x != NULL)
		memset(x, 0xff, n * sizeof *x);
	return x;
}

/* The trace arrays flags ask for, laid out by the schedule's steps. */
static int
gpu_result_trace(struct gpu_result *res, int n, int dv, unsigned flags,
    char *err, size_t errlen)
{
	size_t trace = (size_t)n * (size_t)res->nsteps * (size_t)res->br;

	if ((res->m_new = gpu_nan_floats(trace, err, errlen)) == NULL ||
	    (res->alpha = gpu_nan_floats(trace, err, errlen)) == NULL ||
	    (res->l_new = gpu_nan_floats(trace, err, errlen)) == NULL)
		return -1;
	if (!(flags & GPU_TRACE_ACC))
		return 0;
	if (trace > (size_t)-1 / sizeof(float) / (size_t)dv)
		return util_error(err, errlen, "GPU trace: size overflows memory");
	res->acc = gpu_nan_floats(trace * (size_t)dv, err, errlen);
	return res->acc != NULL ? 0 : -1;
}

int
gpu_run(const struct gpu_kernel *k, const struct problem *ps, int n,
    const struct tiling *t, const struct online_rule *rule, unsigned flags,
    int repeat, struct gpu_result *res, char *err, size_t errlen)
{
	return gpu_run_ranges(k, ps, n, t, rule, flags, 0, repeat, res, err,
	    errlen);
}

/* The schedules of packed batch p's sequences (problem_seq) in seqs
 * (p->nseq, allocated), the number of each one's first step in step0,
 * their steps' sum in *nsteps and the largest Br in *br. */
static int
gpu_seq_schedules(const struct problem *p, const struct tiling *t,
    struct schedule **seqs, long **step0, long *nsteps, int *br, char *err,
    size_t errlen)
{
	struct problem one;
	int b;

	*nsteps = 0;
	*br = 0;
	*seqs = util_calloc((size_t)p->nseq, sizeof **seqs, "schedules", err,
	    errlen);
	*step0 = util_calloc((size_t)p->nseq, sizeof **step0, "schedules", err,
	    errlen);
	if (*seqs == NULL || *step0 == NULL)
		return -1;
	for (b = 0; b < p->nseq; b++) {
		problem_seq(p, b, &one);
		if (schedule_init(&(*seqs)[b], &one, t, err, errlen) != 0)
			return -1;
		(*step0)[b] = *nsteps;
		*nsteps += (*seqs)[b].nsteps;
		*br = (*seqs)[b].br > *br ? (*seqs)[b].br : *br;
	}
	return 0;
}

static void
gpu_seq_free(struct schedule *seqs, long *step0, int nseq)
{
	int b;

	for (b = 0; seqs != NULL && b < nseq; b++)
		schedule_free(&seqs[b]);
	free(seqs);
	free(step0);
}

int
gpu_run_ranges(const struct gpu_kernel *k, const struct problem *ps, int n,
    const struct tiling *t, const struct online_rule *rule, unsigned flags,
    int ranges, int repeat, struct gpu_result *res, char *err, size_t errlen)
{
	struct schedule sched, *seqs = NULL;
	struct gpu_job job;
	long *step0 = NULL, nsteps;
	int rc = -1, br;

	memset(res, 0, sizeof *res);
	memset(&sched, 0, sizeof sched);
	if (ranges < 0)
		return util_error(err, errlen, "%d key ranges asked of kernel %s "
		    "(0: its own choice, or 1 or more)", ranges, k->name);
	if (ranges > 0 && !(k->caps & GPU_CAP_OWN_SPLITS))
		return util_error(err, errlen, "kernel %s cannot be asked for %d "
		    "key ranges: only a kernel that picks its own takes a count",
		    k->name, ranges);
	if (flags & GPU_TRACE_ACC)
		flags |= GPU_TRACE;
	if (gpu_problems_alike(ps, n, err, errlen) != 0 ||
	    gpu_kernel_check(k, &ps[0], t, rule, flags, err, errlen) != 0)
		return -1;
	if (gpu_available(res->device, sizeof res->device, err, errlen) !=
	    GPU_READY || gpu_kernel_on_device(k, err, errlen) != 0)
		return -1;
	if (ps[0].nseq > 0) {
		/* A packed batch is its sequences' schedules, steps numbered
		 * on from one to the next (kernels.h's struct gpu_job). */
		if (ranges > 0) {
			util_error(err, errlen, "--seqlens: kernel %s picks no key "
			    "ranges of a packed batch", k->name);
			goto out;
		}
		if (gpu_seq_schedules(&ps[0], t, &seqs, &step0, &nsteps, &br,
		    err, errlen) != 0)
			goto out;
	} else {
		if (schedule_init(&sched, &ps[0], t, err, errlen) != 0)
			return -1;
		nsteps = sched.nsteps;
		br = sched.br;
	}

	res->n = n;
	res->tq = problem_rows(&ps[0]);
	res->dv = ps[0].dv;
	res->nsteps = nsteps;
	res->br = br;
	res->o = util_calloc((size_t)n * res->tq * ps[0].dv, sizeof *res->o,
	    "GPU output", err, errlen);
	res->lse = util_calloc((size_t)n * res->tq, sizeof *res->lse,
	    "GPU output", err, errlen);
	if (res->o == NULL || res->lse == NULL)
		goto out;

	memset(&job, 0, sizeof job);
	job.ps = ps;
	job.n = n;
	job.tiling = t;
	job.sched = ps[0].nseq > 0 ? NULL : &sched;
	job.nseq = ps[0].nseq;
	job.seqs = seqs;
	job.step0 = step0;
	job.rule = rule;
	job.flags = flags;
	job.splits = ranges;
	job.repeat = repeat;
	job.res = res;
	if (k->launch(&job, err, errlen) != 0)
		goto out;
	if (flags & GPU_TRACE) {
		if (gpu_result_trace(res, n, ps[0].dv, flags, err, errlen) != 0 ||
		    k->trace(&job, err, errlen) != 0)
			goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		gpu_result_free(res);
	schedule_free(&sched);
	gpu_seq_free(seqs, step0, ps[0].nseq);
	return rc;
}

int
gpu_fits(double need, char *why, size_t len)
{
	double fr, tot, margin = 512.0 * 1024 * 1024;
	char b1[32], b2[32], b3[32];

	if (gpu_memory(&fr, &tot, why, len) != 0)
		return -1;
	if (need + margin <= fr)
		return 0;
	return util_error(why, len, "needs %s of device memory, %s free of %s",
	    util_bytes(need, b1, sizeof b1), util_bytes(fr, b2, sizeof b2),
	    util_bytes(tot, b3, sizeof b3));
}

int
gpu_time(const struct gpu_kernel *k, const struct problem *ps, int n,
    struct tiling *t, int repeat, struct gpu_result *res, char *why,
    size_t len)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };

	memset(res, 0, sizeof *res);
	if (k->bench_repeat > 0 && repeat > k->bench_repeat)
		repeat = k->bench_repeat;
	if (gpu_kernel_tiling(k, ps[0].d, 0, 0, t, why, len) != 0 ||
	    gpu_kernel_check(k, &ps[0], t, &rule, 0, why, len) != 0 ||
	    (k->device_bytes != NULL &&
	    gpu_fits(k->device_bytes(&ps[0], n), why, len) != 0))
		return -1;
	return gpu_run(k, ps, n, t, &rule, 0, repeat, res, why, len);
}
