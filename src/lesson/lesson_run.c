/*
 * lesson_run.c - the lesson runner's core (see lesson_run.h): the
 * problem built from the script, the position, and the focus row's
 * state wherever its tile is.  What expect reads is lesson_quantity.c.
 */
#include "config.h"

#include "lesson_run.h"
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
	if (run->built)
		setup_close(&run->setup);
	sim_free(run->probe);
	free(run->final_o);
	free(run->final_lse);
	free(run->zeros);
	free(run->ref_o);
	run->probe = NULL;
	run->final_o = run->final_lse = run->zeros = NULL;
	run->ref_o = NULL;
	run->built = 0;
}

static void
start(struct lesson_run *run)
{
	options_init(&run->opts);
	run->pc = 0;
	run->begun = run->ended = 0;
	run->npauses = run->nasked = 0;
	run->dirty = 1;
	run->problem_line = 0;
	run->step = -1;
	run->phase = 0;
	run->focus = 0;
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
	if (run->marks == NULL || run->kept == NULL || run->confirmed == NULL) {
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

int
lesson_run_ready(struct lesson_run *run, const struct lesson_cmd *c)
{
	char msg[400];
	int line;

	if (run->built && !run->dirty)
		return 0;
	teardown(run);
	if (setup_open(&run->opts, &run->setup, msg, sizeof msg) != 0) {
		lesson_parser_unflag(msg);
		line = run->problem_line > 0 ? run->problem_line : c->line;
		snprintf(run->err, sizeof run->err, "%s:%d: the problem cannot be "
		    "built: %s", run->lesson->path, line, msg);
		return LESSON_ERROR;
	}
	run->built = 1;
	run->dirty = 0;
	run->generation++;
	run->step = -1;
	run->phase = 0;
	run->zeros = calloc((size_t)run->setup.problem.dv, sizeof *run->zeros);
	if (run->zeros == NULL)
		return lesson_run_error(run, c, "out of memory");
	if (run->focus >= run->setup.problem.tq)
		return lesson_run_error(run, c, "focus row %d does not exist in this "
		    "problem (it has %d rows)", run->focus, run->setup.problem.tq);
	if (run->sink != NULL && run->sink->problem != NULL)
		run->sink->problem(run->ctx, run);
	return 0;
}

int
lesson_run_seek(struct lesson_run *run, const struct lesson_cmd *c, long step,
    int phase)
{
	long n = sim_steps(run->setup.sim);

	if (step == -1) {
		run->step = -1;
		run->phase = 0;
		return 0;
	}
	if (step < 0 || step >= n)
		return lesson_run_error(run, c, "step %ld does not exist: the problem "
		    "has %ld steps (0 to %ld)", step, n, n - 1);
	sim_seek(run->setup.sim, step, phase);
	run->step = step;
	run->phase = (int)sim_view(run->setup.sim)->phase;
	return 0;
}

int
lesson_run_final(struct lesson_run *run, const struct lesson_cmd *c,
    const float **o, const float **lse)
{
	const struct problem *p = &run->setup.problem;
	char msg[256];

	if (run->final_o == NULL) {
		if (run->probe == NULL) {
			run->probe = sim_new(p, &run->opts.tiling, &run->opts.rule, msg,
			    sizeof msg);
			if (run->probe == NULL)
				return lesson_run_error(run, c, "%s", msg);
		}
		run->final_o = calloc((size_t)p->tq * p->dv, sizeof *run->final_o);
		run->final_lse = calloc((size_t)p->tq, sizeof *run->final_lse);
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
	double *lse;
	char msg[256];

	if (run->ref_o == NULL) {
		run->ref_o = calloc((size_t)p->tq * p->dv, sizeof *run->ref_o);
		lse = calloc((size_t)p->tq, sizeof *lse);
		if (run->ref_o == NULL || lse == NULL ||
		    reference_attention(p, run->ref_o, lse, msg, sizeof msg) != 0) {
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
lesson_run_rehearse(const struct lesson *l, int *slides, char *err,
    size_t errlen)
{
	struct lesson_run *run;
	int rc, n = 0;

	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_DRY);
	if (run == NULL)
		return util_error(err, errlen, "%s: out of memory", l->path);
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

const struct sim_view *
lesson_run_view(const struct lesson_run *run)
{
	if (!run->built || run->step < 0)
		return NULL;
	return sim_view(run->setup.sim);
}

/* ---- a row's state ---- */

/* The last step at or before `before` (exclusive) that visited row block
 * i, or -1.  A row block's steps come in the order of j in both loop
 * orders, so the first one found from the right is the latest. */
static long
last_visit(const struct schedule *s, int i, long before)
{
	long k;
	int j;

	for (j = s->jend[i] - 1; j >= 0; j--) {
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
	long k;
	int x, ph;

	memset(out, 0, sizeof *out);
	out->row = r;
	if (!run->built || r < 0 || r >= run->setup.problem.tq)
		return -1;
	if (run->step < 0) {
		row_initial(run, out);
		return 0;
	}
	s = sim_schedule(run->setup.sim);
	v = sim_view(run->setup.sim);
	ph = run->phase;
	if (r >= v->tile.r0 && r < v->tile.r1) {
		out->in_tile = 1;
		out->index = r - v->tile.r0;
	} else {
		/* Another tile holds it: read its last one on the probe. */
		k = last_visit(s, r / s->br, run->step);
		if (k < 0) {
			row_initial(run, out);
			return 0;
		}
		if (run->probe == NULL) {
			run->probe = sim_new(&run->setup.problem, &run->opts.tiling,
			    &run->opts.rule, msg, sizeof msg);
			if (run->probe == NULL)
				return -1;
		}
		sim_seek(run->probe, k, SIM_PHASE_LAST);
		v = sim_view(run->probe);
		ph = (int)v->phase;
	}
	x = r - v->tile.r0;
	out->from_step = v->step;
	out->started = ph >= SIM_PHASE_MAX || !isinf(v->m_old[x]) || v->l_old[x] > 0;
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
