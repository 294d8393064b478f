/*
 * lesson_run.c - the lesson runner's core (see lesson_run.h): the
 * problem built from the script, the position, and the focus row's
 * state wherever its tile is.  What expect reads is lesson_quantity.c.
 */
#include "config.h"

#include "lesson_run.h"
#include "model/gradref.h"
#include "model/reference.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
lesson_format(double x, char *buf, size_t len)
{
	if (isnan(x))
		snprintf(buf, len, "nan");
	else if (isinf(x))
		snprintf(buf, len, "%sinf", x < 0 ? "-" : "");
	else
		snprintf(buf, len, "%.7g", x);
	return buf;
}

/* ---- building and tearing down ---- */

static void
teardown(struct lesson_run *run)
{
	int i;

	fulltimeline_close(&run->bwd);
	if (run->built)
		setup_close(&run->setup);
	sim_free(run->probe);
	backward_free(run->bprobe);
	free(run->final_o);
	free(run->final_lse);
	free(run->grads.dq);
	free(run->grads.dk);
	free(run->grads.dv);
	free(run->grads.ds);
	free(run->unsplit_o);
	free(run->unsplit_lse);
	free(run->zeros);
	free(run->ref_o);
	for (i = 0; i < 4; i++) {
		free(run->ref_grad[i]);
		run->ref_grad[i] = NULL;
	}
	run->probe = NULL;
	run->bprobe = NULL;
	memset(&run->grads, 0, sizeof run->grads);
	run->final_o = run->final_lse = run->zeros = NULL;
	run->unsplit_o = run->unsplit_lse = NULL;
	run->ref_o = NULL;
	run->built = 0;
}

static void
start(struct lesson_run *run)
{
	options_init(&run->opts);
	run->ngiven = 0;
	run->pc = 0;
	run->begun = run->ended = 0;
	run->npauses = run->nasked = 0;
	run->dirty = 1;
	run->problem_line = 0;
	run->step = -1;
	run->phase = 0;
	run->show = NULL;
	run->focus = 0;
	run->focus_key = 0;
	run->failures = 0;
	run->failure[0] = '\0';
	run->err[0] = '\0';
	if (run->lesson->nlabels > 0)
		memset(run->marks, 0, (size_t)run->lesson->nlabels * sizeof *run->marks);
	if (run->lesson->nkept > 0)
		memset(run->kept, 0, (size_t)run->lesson->nkept * sizeof *run->kept);
	if (run->lesson->nquestions > 0)
		memset(run->confirmed, 0, (size_t)run->lesson->nquestions);
}

struct lesson_run *
lesson_run_new(const struct lesson *l, const struct lesson_sink *sink,
    void *ctx, int flags)
{
	struct lesson_run *run = calloc(1, sizeof *run);

	if (run == NULL)
		return NULL;
	run->lesson = l;
	run->sink = sink;
	run->ctx = ctx;
	run->flags = flags;
	run->marks = calloc((size_t)l->nlabels + 1, sizeof *run->marks);
	run->kept = calloc((size_t)l->nkept + 1, sizeof *run->kept);
	run->confirmed = calloc((size_t)l->nquestions + 1, 1);
	run->given = calloc((size_t)l->ncmds + 1, sizeof *run->given);
	if (run->marks == NULL || run->kept == NULL || run->confirmed == NULL ||
	    run->given == NULL) {
		lesson_run_free(run);
		return NULL;
	}
	start(run);
	return run;
}

void
lesson_run_free(struct lesson_run *run)
{
	if (run == NULL)
		return;
	teardown(run);
	free(run->marks);
	free(run->kept);
	free(run->confirmed);
	free(run->given);
	free(run);
}

void
lesson_run_reset(struct lesson_run *run)
{
	teardown(run);
	start(run);
}

int
lesson_run_error(struct lesson_run *run, const struct lesson_cmd *c,
    const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(run->err, sizeof run->err, "%s:%d: ", run->lesson->path,
	    c->line);
	if (n < 0 || (size_t)n >= sizeof run->err)
		return LESSON_ERROR;
	va_start(ap, fmt);
	vsnprintf(run->err + n, sizeof run->err - (size_t)n, fmt, ap);
	va_end(ap);
	return LESSON_ERROR;
}

static int
vfail(struct lesson_run *run, int line, const char *fmt, va_list ap)
{
	char msg[512];
	int n;

	n = snprintf(msg, sizeof msg, "%s:%d: ", run->lesson->path, line);
	if (n > 0 && (size_t)n < sizeof msg)
		vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	if (run->failures++ == 0)
		snprintf(run->failure, sizeof run->failure, "%s", msg);
	if (run->sink != NULL && run->sink->failed != NULL)
		run->sink->failed(run->ctx, run, msg);
	return (run->flags & LESSON_RUN_STOP) ? LESSON_FAILED : LESSON_NEXT;
}

int
lesson_run_fail(struct lesson_run *run, const struct lesson_cmd *c,
    const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(run, c->line, fmt, ap);
	va_end(ap);
	return rc;
}

int
lesson_run_fail_at(struct lesson_run *run, int line, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(run, line, fmt, ap);
	va_end(ap);
	return rc;
}

/* The option groups a script's problem directives come from. */
#define LESSON_GROUPS (OPT_PROBLEM | OPT_BACKWARD | OPT_SPLIT)

/* Where an inline matrix goes. */
static struct problem_source *
source_of(struct options *o, const char *name)
{
	if (strcmp(name, "q") == 0)
		return &o->spec.q;
	if (strcmp(name, "k") == 0)
		return &o->spec.k;
	if (strcmp(name, "v") == 0)
		return &o->spec.v;
	if (strcmp(name, "scores") == 0)
		return &o->spec.s;
	return &o->spec.dout;	/* grad-output */
}

/*
 * The options in force, parsed as `flashstep run` parses its command
 * line (so that options that depend on each other are checked the same
 * way), then the inline matrices, which no command line holds.
 */
static int
parse_given(struct lesson_run *run, char *msg, size_t len)
{
	const struct lesson_cmd *g;
	struct problem_source *src;
	char **argv, (*flags)[48];
	int argc = 1, i, rc;

	argv = calloc(2 * (size_t)run->ngiven + 2, sizeof *argv);
	flags = calloc((size_t)run->ngiven + 1, sizeof *flags);
	if (argv == NULL || flags == NULL) {
		free(argv);
		free(flags);
		return util_error(msg, len, "out of memory");
	}
	argv[0] = "lesson";
	for (i = 0; i < run->ngiven; i++) {
		g = run->given[i];
		if (g->matrix != NULL)
			continue;
		snprintf(flags[i], sizeof flags[i], "--%s", g->option->name);
		argv[argc++] = flags[i];
		if (g->option->metavar != NULL)
			argv[argc++] = g->path != NULL ? g->path : g->argv[0];
	}
	options_init(&run->opts);
	rc = options_parse(argc, argv, 1, LESSON_GROUPS, NULL, NULL, &run->opts,
	    msg, len);
	options_free(&run->opts);
	free(argv);
	free(flags);
	for (i = 0; rc == 0 && i < run->ngiven; i++) {
		g = run->given[i];
		if (g->matrix == NULL)
			continue;
		src = source_of(&run->opts, g->option->name);
		if (src == &run->opts.spec.dout && !run->opts.backward)
			return util_error(msg, len, "grad-output needs backward");
		src->path = NULL;
		src->data = g->matrix;
		src->rows = g->rows;
		src->cols = g->cols;
	}
	return rc;
}

int
lesson_run_ready(struct lesson_run *run, const struct lesson_cmd *c)
{
	const struct problem *p;
	char msg[400];
	int line, wide;

	if (run->built && !run->dirty)
		return 0;
	teardown(run);
	line = run->problem_line > 0 ? run->problem_line : c->line;
	if (parse_given(run, msg, sizeof msg) != 0 ||
	    setup_open(&run->opts, &run->setup, msg, sizeof msg) != 0) {
		lesson_parser_unflag(msg);
		snprintf(run->err, sizeof run->err, "%s:%d: the problem cannot be "
		    "built: %s", run->lesson->path, line, msg);
		return LESSON_ERROR;
	}
	run->built = 1;
	run->dirty = 0;
	run->generation++;
	run->step = -1;
	run->phase = 0;
	/* The timeline: the forward, the combine of a split run, the
	 * backward; the forward (and combine) run first when a later
	 * segment needs what they give. */
	if (fulltimeline_build_progress(&run->opts, &run->setup.problem,
	    run->setup.sim, &run->bwd, run->progress, msg, sizeof msg) != 0) {
		lesson_parser_unflag(msg);
		snprintf(run->err, sizeof run->err, "%s:%d: the problem cannot be "
		    "built: %s", run->lesson->path, line, msg);
		teardown(run);
		return LESSON_ERROR;
	}
	p = &run->setup.problem;
	wide = p->dv > p->d ? p->dv : p->d;
	run->zeros = calloc((size_t)wide + 1, sizeof *run->zeros);
	if (run->zeros == NULL)
		return lesson_run_error(run, c, "out of memory");
	if (run->focus >= lesson_run_rows(run))
		return lesson_run_error(run, c, "focus row %d does not exist in this "
		    "problem (it has %d rows)", run->focus, lesson_run_rows(run));
	if (run->focus_key >= p->tk)
		return lesson_run_error(run, c, "focus key %d does not exist in this "
		    "problem (it has %d keys)", run->focus_key, p->tk);
	if (run->sink != NULL && run->sink->problem != NULL)
		run->sink->problem(run->ctx, run);
	return 0;
}

/* "0 to 25: the forward 0-9, the backward 10-25" */
static void
describe_steps(const struct lesson_run *run, char *buf, size_t len)
{
	const struct timeline_segment *seg;
	long first, n = timeline_steps(run->bwd.tl);
	size_t used;
	int s;

	used = (size_t)snprintf(buf, len, "0 to %ld", n - 1);
	for (s = 0; timeline_segments(run->bwd.tl) > 1 &&
	    s < timeline_segments(run->bwd.tl) && used < len; s++) {
		seg = timeline_segment(run->bwd.tl, s);
		first = timeline_first(run->bwd.tl, s);
		used += (size_t)snprintf(buf + used, len - used, "%s the %s %ld-%ld",
		    s == 0 ? ":" : ",", seg->name, first, first +
		    seg->steps(timeline_engine(run->bwd.tl, s)) - 1);
	}
}

int
lesson_run_seek(struct lesson_run *run, const struct lesson_cmd *c, long step,
    int phase)
{
	struct timeline_pos pos;
	long n = timeline_steps(run->bwd.tl);
	char steps[160];

	if (step == -1) {
		run->step = -1;
		run->phase = 0;
		return 0;
	}
	if (step < 0 || step >= n || timeline_seek(run->bwd.tl, step, phase) != 0) {
		describe_steps(run, steps, sizeof steps);
		return lesson_run_error(run, c, "step %ld does not exist: the problem "
		    "has %ld steps (%s)", step, n, steps);
	}
	timeline_position(run->bwd.tl, &pos);
	run->step = step;
	run->phase = pos.phase;
	return 0;
}

void
lesson_run_resync(struct lesson_run *run)
{
	if (run->built && run->step >= 0)
		timeline_seek(run->bwd.tl, run->step, run->phase);
}

int
lesson_run_phase_local(struct lesson_run *run, const struct lesson_cmd *c,
    long step, int id, int *local)
{
	const struct timeline_segment *seg;
	struct timeline_pos pos;
	const char *name = lesson_parser_phase_name(id), *x;
	char list[160];
	size_t used = 0;
	int p;

	*local = -1;
	if (id < 0 || timeline_locate(run->bwd.tl, step, &pos) != 0)
		return 0;
	seg = timeline_segment(run->bwd.tl, pos.seg);
	for (p = 0; strcmp(x = seg->phase_name(p), "?") != 0; p++) {
		if (strcmp(x, name) == 0) {
			*local = p;
			return 0;
		}
		if (used < sizeof list)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
			    p ? ", " : "", x);
	}
	return lesson_run_error(run, c, "step %ld is a step of the %s, which has "
	    "no phase %s (its phases: %s)", step, seg->name, name, list);
}

int
lesson_run_final(struct lesson_run *run, const struct lesson_cmd *c,
    const float **o, const float **lse)
{
	const struct problem *p = &run->setup.problem;
	size_t rows = (size_t)problem_rows(p);
	char msg[256];

	if (run->bwd.o != NULL) {	/* run already: the forward's (merged) */
		*o = run->bwd.o;
		*lse = run->bwd.lse;
		return 0;
	}
	if (run->final_o == NULL) {
		if (run->probe == NULL) {
			run->probe = sim_new_split(p, &run->opts.tiling,
			    &run->opts.split, &run->opts.rule, msg, sizeof msg);
			if (run->probe == NULL)
				return lesson_run_error(run, c, "%s", msg);
		}
		run->final_o = calloc(rows * (size_t)p->dv, sizeof *run->final_o);
		run->final_lse = calloc(rows, sizeof *run->final_lse);
		if (run->final_o == NULL || run->final_lse == NULL ||
		    sim_run(run->probe, NULL, NULL, run->final_o, run->final_lse) != 0) {
			free(run->final_o);
			free(run->final_lse);
			run->final_o = run->final_lse = NULL;
			return lesson_run_error(run, c, "out of memory");
		}
	}
	*o = run->final_o;
	*lse = run->final_lse;
	return 0;
}

int
lesson_run_reference(struct lesson_run *run, const struct lesson_cmd *c,
    const double **o)
{
	const struct problem *p = &run->setup.problem;
	struct problem one, exact;
	size_t rows = (size_t)problem_rows(p);
	double *lse;
	char msg[256];
	int h, bad = 0;

	/* fp8's reference is of the inputs as given (fp8.h). */
	fp8_exact(p, &exact);

	if (run->ref_o == NULL) {
		run->ref_o = calloc(rows * (size_t)p->dv, sizeof *run->ref_o);
		lse = calloc(rows, sizeof *lse);
		for (h = 0; h < problem_rows(p) / p->tq && !bad &&
		    run->ref_o != NULL && lse != NULL; h++) {
			problem_head(&exact, h, &one);
			bad = reference_attention(&one, run->ref_o + (size_t)h * p->tq *
			    p->dv, lse + (size_t)h * p->tq, msg, sizeof msg) != 0;
		}
		if (run->ref_o == NULL || lse == NULL || bad) {
			free(run->ref_o);
			free(lse);
			run->ref_o = NULL;
			return lesson_run_error(run, c, "the reference: out of memory");
		}
		free(lse);
	}
	*o = run->ref_o;
	return 0;
}

/* The backward over the same inputs as the lesson's, to read what the
 * lesson's does not stand at; NULL when out of memory. */
static struct backward *
bwd_probe(struct lesson_run *run)
{
	struct backward_input in;
	char msg[256];

	if (run->bprobe == NULL) {
		in.o = run->bwd.o;
		in.lse = run->bwd.lse;
		in.m = run->bwd.m;
		in.dout = run->bwd.dout;
		run->bprobe = backward_new(&run->setup.problem, &run->opts.tiling,
		    &in, run->opts.grad_bug, msg, sizeof msg);
	}
	return run->bprobe;
}

/* The gradients after the whole backward, computed once. */
static int
final_grads(struct lesson_run *run)
{
	const struct problem *p = &run->setup.problem;
	struct backward_grads *g = &run->grads;

	if (g->dq != NULL)
		return 0;
	g->dq = calloc((size_t)p->tq * p->d + 1, sizeof *g->dq);
	g->dk = calloc((size_t)p->tk * p->d + 1, sizeof *g->dk);
	g->dv = calloc((size_t)p->tk * p->dv + 1, sizeof *g->dv);
	g->ds = calloc((size_t)p->tq * p->tk + 1, sizeof *g->ds);
	if (g->dq == NULL || g->dk == NULL || g->dv == NULL || g->ds == NULL ||
	    bwd_probe(run) == NULL || backward_run(run->bprobe, NULL, NULL, g) != 0) {
		free(g->dq);
		free(g->dk);
		free(g->dv);
		free(g->ds);
		memset(g, 0, sizeof *g);
		return -1;
	}
	return 0;
}

int
lesson_run_reference_grads(struct lesson_run *run, const struct lesson_cmd *c,
    double *const **ref)
{
	const struct problem *p = &run->setup.problem;
	char msg[256];
	int i;

	if (run->bwd.bwd == NULL)
		return lesson_run_error(run, c, "the problem has no backward pass");
	if (run->ref_grad[0] == NULL) {
		run->ref_grad[0] = calloc((size_t)p->tq * p->d + 1, sizeof(double));
		run->ref_grad[1] = calloc((size_t)p->tk * p->d + 1, sizeof(double));
		run->ref_grad[2] = calloc((size_t)p->tk * p->dv + 1, sizeof(double));
		run->ref_grad[3] = calloc((size_t)p->tq * p->tk + 1, sizeof(double));
		if (run->ref_grad[0] == NULL || run->ref_grad[1] == NULL ||
		    run->ref_grad[2] == NULL || run->ref_grad[3] == NULL ||
		    gradref_gradients(p, run->bwd.dout, run->ref_grad[0],
		    run->ref_grad[1], run->ref_grad[2], run->ref_grad[3], msg,
		    sizeof msg) != 0) {
			for (i = 0; i < 4; i++) {
				free(run->ref_grad[i]);
				run->ref_grad[i] = NULL;
			}
			return lesson_run_error(run, c, "the reference gradients: out "
			    "of memory");
		}
	}
	*ref = run->ref_grad;
	return 0;
}

int
lesson_run_unsplit(struct lesson_run *run, const struct lesson_cmd *c,
    const float **o, const float **lse)
{
	const struct problem *p = &run->setup.problem;
	struct split_plan one = run->opts.split;
	size_t rows = (size_t)problem_rows(p);
	struct sim *sim;
	char msg[256];

	if (run->unsplit_o == NULL) {
		one.splits = 1;
		sim = sim_new_split(p, &run->opts.tiling, &one, &run->opts.rule, msg,
		    sizeof msg);
		if (sim == NULL)
			return lesson_run_error(run, c, "%s", msg);
		run->unsplit_o = calloc(rows * (size_t)p->dv, sizeof(float));
		run->unsplit_lse = calloc(rows, sizeof(float));
		if (run->unsplit_o == NULL || run->unsplit_lse == NULL ||
		    sim_run(sim, NULL, NULL, run->unsplit_o, run->unsplit_lse) != 0) {
			free(run->unsplit_o);
			free(run->unsplit_lse);
			run->unsplit_o = run->unsplit_lse = NULL;
			sim_free(sim);
			return lesson_run_error(run, c, "out of memory");
		}
		sim_free(sim);
	}
	*o = run->unsplit_o;
	*lse = run->unsplit_lse;
	return 0;
}

/* Every `number` question asked must have had its answer computed. */
static int
unconfirmed(struct lesson_run *run)
{
	const struct lesson_question *q;
	int i, rc = LESSON_NEXT;

	for (i = 0; i < run->nasked && rc == LESSON_NEXT; i++) {
		q = &run->lesson->questions[i];
		if (q->numeric && !run->confirmed[i])
			rc = lesson_run_fail_at(run, q->line, "the answer of Q%d (%s) "
			    "is never computed: no expect or {...} after the question "
			    "gives it", i + 1, q->number_text);
	}
	return rc;
}

/* ---- the lesson, directive by directive ---- */

int
lesson_run_next(struct lesson_run *run)
{
	const struct lesson_cmd *c;
	int rc;

	if (!run->begun) {
		run->begun = 1;
		if (run->sink != NULL && run->sink->begin != NULL)
			run->sink->begin(run->ctx, run);
	}
	while (run->pc < run->lesson->ncmds) {
		c = &run->lesson->cmds[run->pc++];
		if (c->dir->exec == NULL)
			continue;
		/* a new problem: the frame is the view again */
		if (c->dir->flags & LESSON_PROBLEM)
			run->show = NULL;
		rc = c->dir->exec(run, c);
		if (rc != LESSON_NEXT)
			return rc;
	}
	if (!run->ended) {
		run->ended = 1;
		if (unconfirmed(run) != LESSON_NEXT)
			return LESSON_FAILED;
		if (run->sink != NULL && run->sink->end != NULL)
			run->sink->end(run->ctx, run);
	}
	return LESSON_END;
}

int
lesson_run_all(struct lesson_run *run)
{
	int rc;

	while ((rc = lesson_run_next(run)) == LESSON_PAUSED)
		;
	return rc;
}

int
lesson_run_last_slide(const struct lesson_run *run, int rc)
{
	return rc == LESSON_END || (rc == LESSON_PAUSED &&
	    run->pc == run->lesson->ncmds);
}

int
lesson_run_rehearse(const struct lesson *l,
    const struct fulltimeline_progress *progress, int *slides, char *err,
    size_t errlen)
{
	struct lesson_run *run;
	int rc, n = 0;

	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_DRY);
	if (run == NULL)
		return util_error(err, errlen, "%s: out of memory", l->path);
	run->progress = progress;
	do {
		rc = lesson_run_next(run);
		n++;
	} while (rc == LESSON_PAUSED && !lesson_run_last_slide(run, rc));
	if (rc == LESSON_ERROR)
		util_error(err, errlen, "%s", run->err);
	lesson_run_free(run);
	*slides = n;
	return rc == LESSON_ERROR ? -1 : 0;
}

/* ---- where the run stands ---- */

const struct timeline_segment *
lesson_run_segment(const struct lesson_run *run)
{
	struct timeline_pos pos;

	if (!run->built)
		return NULL;
	if (run->step < 0)
		return timeline_segment(run->bwd.tl, 0);
	timeline_position(run->bwd.tl, &pos);
	return timeline_segment(run->bwd.tl, pos.seg);
}

enum timeline_kind
lesson_run_kind(const struct lesson_run *run)
{
	const struct timeline_segment *seg = lesson_run_segment(run);

	return seg != NULL ? seg->kind : TIMELINE_FORWARD;
}

long
lesson_run_local_step(const struct lesson_run *run)
{
	struct timeline_pos pos;

	if (!run->built || run->step < 0)
		return -1;
	timeline_position(run->bwd.tl, &pos);
	return pos.step;
}

long
lesson_run_first(const struct lesson_run *run, enum timeline_kind k)
{
	int s;

	if (!run->built || (s = timeline_find(run->bwd.tl, k)) < 0)
		return -1;
	return timeline_first(run->bwd.tl, s);
}

const char *
lesson_run_phase_name(const struct lesson_run *run)
{
	const struct timeline_segment *seg = lesson_run_segment(run);

	return seg != NULL ? seg->phase_name(run->phase) : "?";
}

int
lesson_run_phase_id(const struct lesson_run *run)
{
	return lesson_parser_phase(lesson_run_phase_name(run));
}

const struct sim_view *
lesson_run_view(const struct lesson_run *run)
{
	if (!run->built || run->step < 0 ||
	    lesson_run_kind(run) != TIMELINE_FORWARD)
		return NULL;
	return sim_view(run->setup.sim);
}

const struct backward_view *
lesson_run_backward_view(const struct lesson_run *run)
{
	if (!run->built || run->step < 0 ||
	    lesson_run_kind(run) != TIMELINE_BACKWARD)
		return NULL;
	return backward_view(run->bwd.bwd);
}

const struct combine_view *
lesson_run_combine_view(const struct lesson_run *run)
{
	if (!run->built || run->step < 0 ||
	    lesson_run_kind(run) != TIMELINE_COMBINE)
		return NULL;
	return combine_view(run->bwd.comb);
}

int
lesson_run_rows(const struct lesson_run *run)
{
	return run->built ? problem_rows(&run->setup.problem) : 0;
}

int
lesson_run_out_row(const struct lesson_run *run, int r)
{
	return schedule_row_out(sim_schedule(run->setup.sim), r);
}

void
lesson_run_describe(const struct lesson_run *run, FILE *f)
{
	const struct combine_rule *cr;
	long first;

	setup_describe(f, run->setup.sim);
	if (run->bwd.bwd != NULL)
		fulltimeline_describe(f, &run->bwd);
	if (run->bwd.comb != NULL) {
		cr = combine_rule(run->bwd.comb);
		first = lesson_run_first(run, TIMELINE_COMBINE);
		fprintf(f, "combine:  order=%s, %d merges a row block, %ld steps "
		    "(steps %ld-%ld); merge bug=%s\n", combine_order_name(cr->order),
		    combine_merges(run->bwd.comb), combine_steps(run->bwd.comb), first,
		    first + combine_steps(run->bwd.comb) - 1, combine_bug_name(cr->bug));
	}
}

/* ---- a row's state ---- */

/* The row block that holds row r of the schedule's order. */
static int
block_of(const struct schedule *s, int r)
{
	return (r / s->seglen) * s->tr_seg + (r % s->seglen) / s->br;
}

int
lesson_run_block(const struct lesson_run *run, int r)
{
	return block_of(sim_schedule(run->setup.sim), r);
}

/* The last step at or before `before` (exclusive) that visited row block
 * i, or -1.  A row block's steps come in the order of j in both loop
 * orders, so the first one found from the right is the latest. */
static long
last_visit(const struct schedule *s, int i, long before)
{
	long k;
	int j;

	for (j = s->jend[i] - 1; j >= s->jbegin[i]; j--) {
		k = schedule_step_of(s, i, j);
		if (k >= 0 && k < before)
			return k;
	}
	return -1;
}

static void
row_initial(struct lesson_run *run, struct lesson_row *out)
{
	out->from_step = -1;
	out->m = -INFINITY;
	out->l = 0;
	out->acc = run->zeros;
}

int
lesson_run_row(struct lesson_run *run, int r, struct lesson_row *out)
{
	const struct schedule *s;
	const struct sim_view *v;
	char msg[256];
	long k, now;
	int x, ph;

	memset(out, 0, sizeof *out);
	out->row = r;
	if (!run->built || r < 0 || r >= lesson_run_rows(run))
		return -1;
	if (run->step < 0) {
		row_initial(run, out);
		return 0;
	}
	s = sim_schedule(run->setup.sim);
	v = lesson_run_view(run);
	/* Past the forward, a row is as the forward left it. */
	now = v != NULL ? v->step : sim_steps(run->setup.sim);
	ph = run->phase;
	if (v != NULL && r >= v->tile.r0 && r < v->tile.r1) {
		out->in_tile = 1;
		out->index = r - v->tile.r0;
	} else {
		/* Another tile holds it: read its last one on the probe. */
		k = last_visit(s, block_of(s, r), now);
		if (k < 0) {
			row_initial(run, out);
			return 0;
		}
		if (run->probe == NULL) {
			run->probe = sim_new_split(&run->setup.problem,
			    &run->opts.tiling, &run->opts.split, &run->opts.rule, msg,
			    sizeof msg);
			if (run->probe == NULL)
				return -1;
		}
		sim_seek(run->probe, k, SIM_PHASE_LAST);
		v = sim_view(run->probe);
		ph = (int)v->phase;
	}
	x = r - v->tile.r0;
	out->from_step = v->step;
	out->m = ph >= SIM_PHASE_MAX ? v->m_new[x] : v->m_old[x];
	out->has_alpha = ph >= SIM_PHASE_RESCALE;
	out->alpha = v->alpha[x];
	out->l = ph >= SIM_PHASE_UPDATE ? v->l_new[x] : v->l_old[x];
	out->acc = (ph >= SIM_PHASE_UPDATE ? v->acc_new : v->acc_old) +
	    (size_t)x * v->dv;
	out->has_out = ph == SIM_PHASE_FINALIZE;
	out->o = v->o + (size_t)x * v->dv;
	out->lse = v->lse[x];
	return 0;
}

/* ---- the backward's gradients ---- */

/* The gradient row `at` of kind in the arrays g (after the backward). */
static const float *
grad_row(const struct problem *p, const struct backward_grads *g,
    enum lesson_grad_kind kind, int at)
{
	switch (kind) {
	case LESSON_DQ:
		return g->dq + (size_t)at * p->d;
	case LESSON_DK:
		return g->dk + (size_t)at * p->d;
	default:
		return g->dv + (size_t)at * p->dv;
	}
}

/* dQ_r: the tile that holds row r now, or the last one that did. */
static int
grad_dq(struct lesson_run *run, const struct backward_view *v, int at,
    struct lesson_grad *out)
{
	const struct schedule *s = backward_schedule(run->bwd.bwd);
	const struct backward_view *pv;
	long k;

	if (at >= v->tile.r0 && at < v->tile.r1) {
		out->in_tile = 1;
		out->index = at - v->tile.r0;
		if (v->phase >= BWD_PHASE_DQ) {
			out->x = v->dq_new + (size_t)out->index * v->d;
			out->from_step = v->step;
			out->done = v->tile.last_in_row;
			return 0;
		}
		out->x = v->dq_old + (size_t)out->index * v->d;
		out->from_step = last_visit(s, block_of(s, at), v->step);
		return 0;
	}
	k = last_visit(s, block_of(s, at), v->step);
	if (k < 0)
		return 0;
	if (bwd_probe(run) == NULL || backward_seek(run->bprobe, k,
	    BWD_PHASE_LAST) != 0)
		return -1;
	pv = backward_view(run->bprobe);
	out->x = pv->dq_new + (size_t)(at - pv->tile.r0) * pv->d;
	out->from_step = k;
	out->done = pv->tile.last_in_row;
	return 0;
}

/* dK_c or dV_c: key blocks go one after the other, so one before the
 * current is finished and one after it has not begun. */
static int
grad_key(struct lesson_run *run, const struct backward_view *v,
    enum lesson_grad_kind kind, int at, struct lesson_grad *out)
{
	const struct problem *p = &run->setup.problem;
	const struct schedule *s = backward_schedule(run->bwd.bwd);
	int j = at / s->bc, from = kind == LESSON_DK ? BWD_PHASE_DK : BWD_PHASE_DV;
	int width = kind == LESSON_DK ? v->d : v->dv;

	if (j > v->tile.j)
		return 0;
	if (j < v->tile.j) {
		if (final_grads(run) != 0)
			return -1;
		out->x = grad_row(p, &run->grads, kind, at);
		out->from_step = s->first[j + 1] > s->first[j] ?
		    s->first[j + 1] - 1 : -1;
		out->done = 1;
		return 0;
	}
	out->in_tile = 1;
	out->index = at - v->tile.c0;
	if ((int)v->phase >= from) {
		out->x = (kind == LESSON_DK ? v->dk_new : v->dv_new) +
		    (size_t)out->index * width;
		out->from_step = v->step;
		out->done = v->last_in_key;
	} else {
		out->x = (kind == LESSON_DK ? v->dk_old : v->dv_old) +
		    (size_t)out->index * width;
		out->from_step = v->tile.first_in_outer ? -1 : v->step - 1;
	}
	return 0;
}

int
lesson_run_grad(struct lesson_run *run, enum lesson_grad_kind kind, int at,
    int final, struct lesson_grad *out)
{
	const struct problem *p = &run->setup.problem;
	const struct backward_view *v;

	memset(out, 0, sizeof *out);
	out->from_step = -1;
	if (!run->built || run->bwd.bwd == NULL || at < 0 ||
	    at >= (kind == LESSON_DQ ? p->tq : p->tk))
		return -1;
	out->n = kind == LESSON_DV ? p->dv : p->d;
	out->x = run->zeros;
	if (final) {
		if (final_grads(run) != 0)
			return -1;
		out->x = grad_row(p, &run->grads, kind, at);
		out->from_step = backward_steps(run->bwd.bwd) - 1;
		out->done = 1;
		return 0;
	}
	v = lesson_run_backward_view(run);
	if (v == NULL)
		return 0;	/* the backward has not begun: every sum is 0 */
	return kind == LESSON_DQ ? grad_dq(run, v, at, out) :
	    grad_key(run, v, kind, at, out);
}
