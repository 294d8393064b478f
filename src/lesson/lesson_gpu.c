/*
 * lesson_gpu.c - `compare gpu`: the problem through the CUDA teaching
 * kernel, its m, alpha, l and accumulator laid on the simulator's steps
 * (gpu/gpucheck.h); `ladder`: the problem's heads through the kernel
 * ladder (gpu_ladder: naive, teaching, fast, wgmma), timed on this
 * machine, each rung's output held against the lowest rung's.  Without
 * a GPU each says why it was skipped and the lesson goes on, unless a
 * GPU must run (FLASHSTEP_REQUIRE_GPU).
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_run.h"
#include "gpu/gpu.h"
#include "model/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
compare_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	if (c->argc != 1 || strcmp(c->argv[0], "gpu") != 0)
		return util_error(err, errlen, "compare takes 'gpu' (compare gpu)");
	return 0;
}

static int
compare_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	struct gpucheck_report rep;
	char why[256];

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	if (run->flags & LESSON_RUN_DRY)
		return LESSON_NEXT;
	if (gpucheck_run(&run->setup.problem, &run->opts.tiling, &run->opts.rule,
	    &rep, why, sizeof why) != 0) {
		/* No GPU here is not the lesson's fault: it says so and goes on;
		 * unless one must run (FLASHSTEP_REQUIRE_GPU) or a GPU is there
		 * and the kernel failed (gpu/gpu.h: gpu_may_skip). */
		if (!gpu_may_skip(gpu_available(NULL, 0, NULL, 0)))
			return lesson_run_fail(run, c, "expected the kernel to run "
			    "got: %s", why);
		if (run->sink != NULL && run->sink->compare != NULL)
			run->sink->compare(run->ctx, run, NULL, why);
		return LESSON_NEXT;
	}
	if (run->sink != NULL && run->sink->compare != NULL)
		run->sink->compare(run->ctx, run, &rep, NULL);
	if (!rep.pass)
		return lesson_run_fail(run, c, "expected the kernel to agree with the "
		    "simulator (tol %g, rtol %g) got differences m %g, alpha %g, l %g, "
		    "acc %g, O %g, lse %g (worst at step %ld)", rep.atol, rep.rtol,
		    rep.max_m, rep.max_alpha, rep.max_l, rep.max_acc, rep.max_o,
		    rep.max_lse, rep.worst_step);
	return LESSON_NEXT;
}

static int
ladder_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	return lesson_parser_no_words(c, err, errlen);
}

/* Timed runs of each rung after its warm-up. */
#define LADDER_REPEAT 10

/* How far a rung's O may lie from the lowest rung's, relative to max |O|:
 * eight units of the type the tensor cores take P and V in (2^-11 for
 * fp16, 2^-8 for bf16), or of float32 when every rung that ran is. */
static double
ladder_bound(enum dtype t)
{
	return 8 * (t == DTYPE_FP16 ? ldexp(1, -11) : t == DTYPE_BF16 ?
	    ldexp(1, -8) : ldexp(1, -23));
}

static int
ladder_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	struct gpu_ladder_rung rungs[GPU_LADDER_RUNGS];
	const struct problem *p;
	struct problem *heads;
	char why[256], device[64] = "";
	double bound;
	int h, n, i, rc;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	if (run->flags & LESSON_RUN_DRY)
		return LESSON_NEXT;
	p = &run->setup.problem;
	n = problem_rows(p) / p->tq;
	heads = calloc((size_t)n, sizeof *heads);
	if (heads == NULL)
		return lesson_run_error(run, c, "out of memory");
	for (h = 0; h < n; h++)
		problem_head(p, h, &heads[h]);
	rc = gpu_ladder(heads, n, &run->opts.tiling, LADDER_REPEAT, rungs, why,
	    sizeof why);
	free(heads);
	if (rc != 0) {
		if (!gpu_may_skip(gpu_available(NULL, 0, NULL, 0)))
			return lesson_run_fail(run, c, "expected the ladder to run "
			    "got: %s", why);
		if (run->sink != NULL && run->sink->ladder != NULL)
			run->sink->ladder(run->ctx, run, NULL, NULL, why);
		return LESSON_NEXT;
	}
	gpu_available(device, sizeof device, NULL, 0);
	if (run->sink != NULL && run->sink->ladder != NULL)
		run->sink->ladder(run->ctx, run, rungs, device, NULL);
	bound = ladder_bound(p->dtype);
	for (i = 0; i < GPU_LADDER_RUNGS; i++)
		if (rungs[i].ran && !(rungs[i].o_diff <= bound))
			return lesson_run_fail(run, c, "expected every rung's O within "
			    "%.3g of the lowest rung's (relative to max |O|) got %.3g "
			    "from %s", bound, rungs[i].o_diff, rungs[i].kernel->name);
	return LESSON_NEXT;
}

const struct lesson_directive lesson_gpu_directives[] = {
	{ .name = "compare", .usage = "compare gpu", .parse = compare_parse,
	  .exec = compare_exec },
	{ .name = "ladder", .usage = "ladder", .parse = ladder_parse,
	  .exec = ladder_exec },
	{ .name = NULL },
};
