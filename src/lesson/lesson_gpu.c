/*
 * lesson_gpu.c - `compare gpu`: the problem through the CUDA teaching
 * kernel, its m, alpha, l and accumulator laid on the simulator's steps
 * (gpu/gpucheck.h); `ladder`: the problem's heads through the kernel
 * ladder (gpu_ladder: naive, teaching, fast, wgmma), timed on this
 * machine, each rung's output held against the lowest rung's.  Without
 * a GPU each says why it was skipped and the lesson goes on, unless a
 * GPU must run (FLASHSTEP_REQUIRE_GPU); it then shows what was recorded
 * on the H200 instead (h200-figures.txt, beside the lessons: rows of
 * doc/performance.md's tables, labelled with the machine and the
 * commit), so that a student without a GPU still sees the figures the
 * narration speaks of.  The live run, where a GPU is, always wins.
 * `ladder backward` does the same for the backward (gpu_ladder_backward:
 * teaching, fast with dQ atomic and ordered), and without a GPU says what
 * the H200's recorded rows of the tensor-core backward against torch
 * give: its TFLOP/s, its ratio to torch's flash and cuDNN backward, and
 * what the ordered dQ costs, computed here from the rows.
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_run.h"
#include "gpu/gpu.h"
#include "model/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The recorded figures' file, found in the lesson's folder. */
#define LESSON_GPU_RECORDED "h200-figures.txt"

/* What h200-figures.txt holds (see its head for the format). */
struct lesson_gpu_recorded {
	char machine[128];
	char ladder_commit[32], ladder_shape[160];
	char compare_commit[32];
	struct gpu_ladder_rung rungs[GPU_LADDER_RUNGS];
	char change[GPU_LADDER_RUNGS][160];
	int nrungs;
	int ncompare, nfault;		/* compare rows: agreeing, planted faults */
	double worst;			/* the largest "of tol" of the agreeing */
	char worst_problem[160];
	double fault_of_tol;		/* a planted fault's "of tol" */
	/* backward-row: the tensor-core backward beside torch, TFLOP/s */
	char backward_commit[32], backward_shape[160];
	int nbwd;
	double bwd_tf[2];		/* ours: min, max */
	double bwd_flash[2], bwd_cudnn[2];	/* ours / theirs: min, max */
	double bwd_ord[2][2];		/* [causal] ours / ordered: min, max */
};

/* Widens the range r (min, max) by x; first says r is empty. */
static void
lesson_gpu_range(double r[2], double x, int first)
{
	if (first || x < r[0])
		r[0] = x;
	if (first || x > r[1])
		r[1] = x;
}

/* The directive's recorded figures' path: the lesson's folder and the
 * file's name (the file itself is read only when a GPU is missing). */
static int
lesson_gpu_path(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	c->path = malloc(strlen(ps->folder) + sizeof LESSON_GPU_RECORDED);
	if (c->path == NULL)
		return util_error(err, errlen, "out of memory");
	sprintf(c->path, "%s%s", ps->folder, LESSON_GPU_RECORDED);
	return 0;
}

static void
lesson_gpu_copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

/* A number cell ("194.687", "2.12x"); -1 on anything else. */
static int
lesson_gpu_number(const char *cell, double *x)
{
	char *end;

	errno = 0;
	*x = strtod(cell, &end);
	if (end == cell || errno != 0)
		return -1;
	return *end == '\0' || strcmp(end, "x") == 0 ? 0 : -1;
}

/* Reads the recorded figures; on failure why says what is wrong, with the
 * path and the line. */
static int
lesson_gpu_read_recorded(const char *path, struct lesson_gpu_recorded *r,
    char *why, size_t len)
{
	char line[1024], *cell[12];
	FILE *f;
	int n, lineno = 0, bad = 0, i;
	double x;

	memset(r, 0, sizeof *r);
	if (path == NULL || (f = fopen(path, "r")) == NULL) {
		snprintf(why, len, "%s: %s", path ? path : LESSON_GPU_RECORDED,
		    strerror(errno));
		return -1;
	}
	while (!bad && fgets(line, sizeof line, f) != NULL) {
		lineno++;
		if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
			continue;
		n = util_table_cells(line, cell, 12);
		if (n < 2)
			bad = 1;
		else if (strcmp(cell[0], "machine") == 0)
			lesson_gpu_copy(r->machine, sizeof r->machine, cell[1]);
		else if (strcmp(cell[0], "ladder-commit") == 0)
			lesson_gpu_copy(r->ladder_commit, sizeof r->ladder_commit,
			    cell[1]);
		else if (strcmp(cell[0], "ladder-shape") == 0)
			lesson_gpu_copy(r->ladder_shape, sizeof r->ladder_shape,
			    cell[1]);
		else if (strcmp(cell[0], "compare-commit") == 0)
			lesson_gpu_copy(r->compare_commit, sizeof r->compare_commit,
			    cell[1]);
		else if (strcmp(cell[0], "backward-commit") == 0)
			lesson_gpu_copy(r->backward_commit,
			    sizeof r->backward_commit, cell[1]);
		else if (strcmp(cell[0], "backward-shape") == 0)
			lesson_gpu_copy(r->backward_shape, sizeof r->backward_shape,
			    cell[1]);
		else if (strcmp(cell[0], "backward-row") == 0 && n == 10) {
			/* dtype | T | mask | ours | ordered | flash | cuDNN | ... */
			double ours, ord, flash, cudnn;
			int causal = strcmp(cell[3], "causal") == 0;

			if (lesson_gpu_number(cell[4], &ours) != 0 ||
			    lesson_gpu_number(cell[5], &ord) != 0 ||
			    lesson_gpu_number(cell[6], &flash) != 0 ||
			    lesson_gpu_number(cell[7], &cudnn) != 0 || !(ord > 0) ||
			    !(flash > 0) || !(cudnn > 0)) {
				bad = 1;
				continue;
			}
			lesson_gpu_range(r->bwd_tf, ours, r->nbwd == 0);
			lesson_gpu_range(r->bwd_flash, ours / flash, r->nbwd == 0);
			lesson_gpu_range(r->bwd_cudnn, ours / cudnn, r->nbwd == 0);
			/* Each mask's first row starts its range (0 until then). */
			if (!(r->bwd_ord[causal][0] > 0))
				r->bwd_ord[causal][0] = r->bwd_ord[causal][1] = ours / ord;
			lesson_gpu_range(r->bwd_ord[causal], ours / ord, 0);
			r->nbwd++;
		}
		else if (strcmp(cell[0], "ladder-change") == 0 && n == 3) {
			for (i = 0; i < r->nrungs; i++)
				if (strcmp(r->rungs[i].kernel->name, cell[1]) == 0)
					lesson_gpu_copy(r->change[i], sizeof r->change[i],
					    cell[2]);
		} else if (strcmp(cell[0], "ladder-row") == 0 && n == 9) {
			/* rung | tiles | ms | TFLOP/s | memory | speed-up | O | ... */
			struct gpu_ladder_rung *g = &r->rungs[r->nrungs];

			if (r->nrungs == GPU_LADDER_RUNGS ||
			    (g->kernel = gpu_kernel_find(cell[1])) == NULL ||
			    lesson_gpu_number(cell[3], &g->ms) != 0 ||
			    lesson_gpu_number(cell[4], &g->tflops) != 0 ||
			    lesson_gpu_number(cell[7], &g->o_diff) != 0) {
				bad = 1;
				continue;
			}
			g->ran = 1;
			if (sscanf(cell[2], "%dx%d", &g->tiling.br, &g->tiling.bc) != 2)
				g->tiling.br = g->tiling.bc = 0;
			g->below = r->nrungs - 1;
			if (g->below >= 0 && lesson_gpu_number(cell[6], &g->speedup) != 0)
				bad = 1;
			g->change = r->change[r->nrungs];
			r->nrungs++;
		} else if (strcmp(cell[0], "compare-row") == 0 && n == 9) {
			/* problem | steps | m | alpha | l | numerator | O | of tol */
			if (strstr(cell[8], "exit 1") != NULL) {
				r->nfault++;
				r->fault_of_tol = strtod(cell[8], NULL);
			} else if (lesson_gpu_number(cell[8], &x) != 0)
				bad = 1;
			else {
				if (r->ncompare == 0 || x > r->worst) {
					r->worst = x;
					lesson_gpu_copy(r->worst_problem,
					    sizeof r->worst_problem, cell[1]);
				}
				r->ncompare++;
			}
		} else
			bad = 1;
	}
	fclose(f);
	if (bad) {
		snprintf(why, len, "%s:%d: not a line of recorded figures", path,
		    lineno);
		return -1;
	}
	if (r->machine[0] == '\0' || r->nrungs == 0 || r->ncompare == 0 ||
	    r->ladder_commit[0] == '\0' || r->compare_commit[0] == '\0') {
		snprintf(why, len, "%s: no machine, commit, ladder or compare rows",
		    path);
		return -1;
	}
	return 0;
}

static int
compare_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	if (c->argc != 1 || strcmp(c->argv[0], "gpu") != 0)
		return util_error(err, errlen, "compare takes 'gpu' (compare gpu)");
	return lesson_gpu_path(ps, c, err, errlen);
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
		if (run->sink != NULL && run->sink->compare != NULL) {
			struct lesson_gpu_recorded *r = malloc(sizeof *r);
			char text[1024], bad[512];

			if (r == NULL)
				return lesson_run_error(run, c, "out of memory");
			if (lesson_gpu_read_recorded(c->path, r, bad, sizeof bad) != 0)
				snprintf(text, sizeof text, "%s (and no recorded figures: "
				    "%s)", why, bad);
			else
				snprintf(text, sizeof text, "%s. Recorded on an %s at "
				    "commit %s: flashstep compare on %d problems, every one "
				    "agrees with the simulator, the worst value at %g of "
				    "the tolerance (%s)%s", why, r->machine,
				    r->compare_commit, r->ncompare, r->worst,
				    r->worst_problem, r->nfault > 0 ? "; a fault planted "
				    "in the kernel alone was caught" : "");
			free(r);
			run->sink->compare(run->ctx, run, NULL, text);
		}
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
	if (c->argc > 1 || (c->argc == 1 && strcmp(c->argv[0], "backward") != 0))
		return util_error(err, errlen, "ladder takes nothing after it "
		    "but 'backward', not '%s'", strcmp(c->argv[0],
		    "backward") == 0 ? c->argv[1] : c->argv[0]);
	return lesson_gpu_path(ps, c, err, errlen);
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

/* How far a backward rung's gradients may lie from the lowest rung's,
 * relative to max |g|: 32 units of the type's rounding (2^-6 for fp16),
 * since P and dS are rounded to it before their products. */
static double
ladder_bwd_bound(enum dtype t)
{
	return 4 * ladder_bound(t);
}

/* Without a GPU: what the recorded backward rows give, into text. */
static void
ladder_bwd_recorded(const char *why, const char *path, char *text,
    size_t len)
{
	struct lesson_gpu_recorded *r = malloc(sizeof *r);
	char bad[512];

	if (r == NULL)
		snprintf(text, len, "%s", why);
	else if (lesson_gpu_read_recorded(path, r, bad, sizeof bad) != 0)
		snprintf(text, len, "%s (and no recorded figures: %s)", why, bad);
	else if (r->nbwd == 0 || r->backward_commit[0] == '\0' ||
	    !(r->bwd_ord[0][0] > 0) || !(r->bwd_ord[1][0] > 0))
		snprintf(text, len, "%s (and no recorded backward rows, masked "
		    "and not)", why);
	else
		snprintf(text, len, "%s; recorded on an %s at commit %s, %s: the "
		    "fast backward at %.1f to %.1f TFLOP/s, %.2f to %.2f of "
		    "torch's flash backward and %.2f to %.2f of cuDNN's; dQ "
		    "ordered takes %.2f to %.2f times the atomic time without a "
		    "mask, %.2f to %.2f with the causal one", why, r->machine,
		    r->backward_commit, r->backward_shape, r->bwd_tf[0],
		    r->bwd_tf[1], r->bwd_flash[0], r->bwd_flash[1],
		    r->bwd_cudnn[0], r->bwd_cudnn[1], r->bwd_ord[0][0],
		    r->bwd_ord[0][1], r->bwd_ord[1][0], r->bwd_ord[1][1]);
	free(r);
}

/* The view lays out GPU_LADDER_RUNGS rows: the backward's are as many. */
_Static_assert(GPU_LADDER_BWD_RUNGS == GPU_LADDER_RUNGS,
    "the lesson's ladder table shows GPU_LADDER_RUNGS rungs");

/* ladder backward: the backward's rungs on the problem's heads, dO drawn
 * as the lesson's backward draws it. */
static int
ladder_bwd_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	struct gpu_ladder_rung rungs[GPU_LADDER_BWD_RUNGS];
	const struct problem *p;
	struct problem *heads;
	float *dout = NULL;
	char why[256], device[96] = "", text[1024];
	double bound;
	int h, n, i, rc;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	if (run->flags & LESSON_RUN_DRY)
		return LESSON_NEXT;
	p = &run->setup.problem;
	n = problem_rows(p) / p->tq;
	if (problem_grad_output(&run->opts.spec, p, &dout, why,
	    sizeof why) != 0)
		return lesson_run_error(run, c, "%s", why);
	heads = calloc((size_t)n, sizeof *heads);
	if (heads == NULL) {
		free(dout);
		return lesson_run_error(run, c, "out of memory");
	}
	for (h = 0; h < n; h++)
		problem_head(p, h, &heads[h]);
	rc = gpu_ladder_backward(heads, n, dout, &run->opts.tiling,
	    LADDER_REPEAT, rungs, why, sizeof why);
	free(heads);
	free(dout);
	if (rc != 0) {
		if (!gpu_may_skip(gpu_available(NULL, 0, NULL, 0)))
			return lesson_run_fail(run, c, "expected the backward's "
			    "ladder to run got: %s", why);
		ladder_bwd_recorded(why, c->path, text, sizeof text);
		if (run->sink != NULL && run->sink->ladder != NULL)
			run->sink->ladder(run->ctx, run, NULL, NULL, text);
		return LESSON_NEXT;
	}
	/* The table's O column holds the gradients here: the device's name
	 * says so. */
	gpu_available(device, 64, NULL, 0);
	snprintf(device + strlen(device), sizeof device - strlen(device),
	    ", the backward; O: dQ, dK, dV");
	if (run->sink != NULL && run->sink->ladder != NULL)
		run->sink->ladder(run->ctx, run, rungs, device, NULL);
	bound = ladder_bwd_bound(p->dtype);
	for (i = 0; i < GPU_LADDER_BWD_RUNGS; i++)
		if (rungs[i].ran && !(rungs[i].o_diff <= bound))
			return lesson_run_fail(run, c, "expected every backward "
			    "rung's gradients within %.3g of the lowest rung's "
			    "(relative to max |g|) got %.3g from %s", bound,
			    rungs[i].o_diff, gpu_ladder_backward_name(i));
	return LESSON_NEXT;
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

	if (c->argc == 1)
		return ladder_bwd_exec(run, c);
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
		if (run->sink != NULL && run->sink->ladder != NULL) {
			struct lesson_gpu_recorded *r = malloc(sizeof *r);
			char text[1024], bad[512], device[512];

			if (r == NULL)
				return lesson_run_error(run, c, "out of memory");
			if (lesson_gpu_read_recorded(c->path, r, bad, sizeof bad) != 0) {
				snprintf(text, sizeof text, "%s (and no recorded figures: "
				    "%s)", why, bad);
				run->sink->ladder(run->ctx, run, NULL, NULL, text);
			} else if (r->nrungs != GPU_LADDER_RUNGS) {
				snprintf(text, sizeof text, "%s (and the recorded ladder "
				    "has %d rungs of %d)", why, r->nrungs, GPU_LADDER_RUNGS);
				run->sink->ladder(run->ctx, run, NULL, NULL, text);
			} else {
				snprintf(text, sizeof text, "%s; below, the ladder as "
				    "recorded on an %s at commit %s, for %s, not this "
				    "lesson's shape", why, r->machine, r->ladder_commit,
				    r->ladder_shape);
				run->sink->ladder(run->ctx, run, NULL, NULL, text);
				snprintf(device, sizeof device, "an H200 (recorded at %s)",
				    r->ladder_commit);
				run->sink->ladder(run->ctx, run, r->rungs, device, NULL);
			}
			free(r);
		}
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
	{ .name = "ladder", .usage = "ladder [backward]", .parse = ladder_parse,
	  .exec = ladder_exec },
	{ .name = NULL },
};
