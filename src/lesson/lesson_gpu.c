/*
 * lesson_gpu.c - `compare gpu`: the problem through the CUDA teaching
 * kernel, its m, alpha, l and accumulator laid on the simulator's steps
 * (gpu/gpucheck.h).  Without a GPU it says why it was skipped and the
 * lesson goes on.
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_run.h"
#include "gpu/gpu.h"
#include "model/util.h"

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

const struct lesson_directive lesson_gpu_directives[] = {
	{ .name = "compare", .usage = "compare gpu", .parse = compare_parse,
	  .exec = compare_exec },
	{ .name = NULL },
};
