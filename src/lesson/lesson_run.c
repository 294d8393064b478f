/*
 * lesson_run.c - the lesson runner's core (see lesson_run.h): the
 * problem built from the script, the position, the focus row's state
 * wherever its tile is, and expect's quantities.
 */
#include "config.h"

#include "lesson_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *phase_names[SIM_PHASES] = {
	"load", "scores", "max", "rescale", "exp", "update", "finalize",
};

const char *
lesson_phase_name(int phase)
{
	return phase >= 0 && phase < SIM_PHASES ? phase_names[phase] : "?";
}

int
lesson_phase_parse(const char *name)
{
	int i;

	for (i = 0; i < SIM_PHASES; i++)
		if (strcmp(name, phase_names[i]) == 0)
			return i;
	return -1;
}

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
	run->probe = NULL;
	run->final_o = run->final_lse = run->zeros = NULL;
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
	if (run->marks == NULL) {
		free(run);
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

int
lesson_run_fail(struct lesson_run *run, const struct lesson_cmd *c,
    const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof msg, "%s:%d: ", run->lesson->path, c->line);
	if (n > 0 && (size_t)n < sizeof msg) {
		va_start(ap, fmt);
		vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
		va_end(ap);
	}
	if (run->failures++ == 0)
		snprintf(run->failure, sizeof run->failure, "%s", msg);
	if (run->sink != NULL && run->sink->failed != NULL)
		run->sink->failed(run->ctx, run, msg);
	return (run->flags & LESSON_RUN_STOP) ? LESSON_FAILED : LESSON_NEXT;
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
		lesson_unflag(msg);
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

/* ---- expect's quantities ---- */

static int
focus_row(struct lesson_run *run, struct lesson_row *row, char *err,
    size_t errlen)
{
	if (lesson_run_row(run, run->focus, row) != 0)
		return util_error(err, errlen, "row %d cannot be read", run->focus);
	return 0;
}

static int
q_m(struct lesson_run *run, int final, double *out, int max, int *n, char *err,
    size_t errlen)
{
	struct lesson_row row;

	(void)final;
	(void)max;
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	out[0] = row.m;
	*n = 1;
	return 0;
}

static int
q_l(struct lesson_run *run, int final, double *out, int max, int *n, char *err,
    size_t errlen)
{
	struct lesson_row row;

	(void)final;
	(void)max;
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	out[0] = row.l;
	*n = 1;
	return 0;
}

static int
q_alpha(struct lesson_run *run, int final, double *out, int max, int *n,
    char *err, size_t errlen)
{
	struct lesson_row row;

	(void)final;
	(void)max;
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	if (!row.has_alpha)
		return util_error(err, errlen, "alpha is known from phase rescale "
		    "of a step that holds the row");
	out[0] = row.alpha;
	*n = 1;
	return 0;
}

static int
copy_row(const float *x, int dv, double *out, int max, int *n)
{
	int i;

	for (i = 0; i < dv && i < max; i++)
		out[i] = x[i];
	*n = i;
	return 0;
}

static int
q_u(struct lesson_run *run, int final, double *out, int max, int *n, char *err,
    size_t errlen)
{
	struct lesson_row row;

	(void)final;
	if (run->opts.rule.convention != CONV_UNNORMALIZED)
		return util_error(err, errlen, "the normalized convention keeps o, "
		    "not u");
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	return copy_row(row.acc, run->setup.problem.dv, out, max, n);
}

static int
q_o(struct lesson_run *run, int final, double *out, int max, int *n, char *err,
    size_t errlen)
{
	struct lesson_row row;
	const float *o, *lse;
	int dv = run->setup.problem.dv;

	if (final) {
		if (lesson_run_final(run, &run->lesson->cmds[run->pc - 1], &o, &lse) != 0)
			return util_error(err, errlen, "%s", run->err);
		return copy_row(o + (size_t)run->focus * dv, dv, out, max, n);
	}
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	if (row.has_out)
		return copy_row(row.o, dv, out, max, n);
	if (run->opts.rule.convention == CONV_NORMALIZED && row.from_step >= 0)
		return copy_row(row.acc, dv, out, max, n);
	return util_error(err, errlen, "the unnormalized convention keeps u; o "
	    "is known after the row's finalize phase");
}

static int
q_lse(struct lesson_run *run, int final, double *out, int max, int *n,
    char *err, size_t errlen)
{
	struct lesson_row row;
	const float *o, *lse;

	(void)max;
	if (final) {
		if (lesson_run_final(run, &run->lesson->cmds[run->pc - 1], &o, &lse) != 0)
			return util_error(err, errlen, "%s", run->err);
		out[0] = lse[run->focus];
		*n = 1;
		return 0;
	}
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	if (!row.has_out)
		return util_error(err, errlen, "lse is known after the row's "
		    "finalize phase");
	out[0] = row.lse;
	*n = 1;
	return 0;
}

/* The focus row in the current tile after phase `from`. */
static int
tile_row(struct lesson_run *run, int from, const char *what, struct lesson_row *row,
    char *err, size_t errlen)
{
	if (focus_row(run, row, err, errlen) != 0)
		return -1;
	if (!row->in_tile)
		return util_error(err, errlen, "%s belongs to the current tile, "
		    "which does not hold row %d", what, run->focus);
	if (run->phase < from)
		return util_error(err, errlen, "%s is known from phase %s", what,
		    lesson_phase_name(from));
	return 0;
}

static int
q_rowmax(struct lesson_run *run, int final, double *out, int max, int *n,
    char *err, size_t errlen)
{
	struct lesson_row row;

	(void)final;
	(void)max;
	if (tile_row(run, SIM_PHASE_MAX, "rowmax", &row, err, errlen) != 0)
		return -1;
	out[0] = sim_view(run->setup.sim)->rowmax[row.index];
	*n = 1;
	return 0;
}

static int
q_rowsum(struct lesson_run *run, int final, double *out, int max, int *n,
    char *err, size_t errlen)
{
	struct lesson_row row;

	(void)final;
	(void)max;
	if (tile_row(run, SIM_PHASE_EXP, "rowsum", &row, err, errlen) != 0)
		return -1;
	out[0] = sim_view(run->setup.sim)->rowsum[row.index];
	*n = 1;
	return 0;
}

static int
q_s(struct lesson_run *run, int final, double *out, int max, int *n, char *err,
    size_t errlen)
{
	const struct sim_view *v;
	struct lesson_row row;

	(void)final;
	if (tile_row(run, SIM_PHASE_SCORES, "s", &row, err, errlen) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	return copy_row(v->s + (size_t)row.index * v->cols, v->cols, out, max, n);
}

static int
q_p(struct lesson_run *run, int final, double *out, int max, int *n, char *err,
    size_t errlen)
{
	const struct sim_view *v;
	struct lesson_row row;

	(void)final;
	if (tile_row(run, SIM_PHASE_EXP, "p", &row, err, errlen) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	return copy_row(v->p + (size_t)row.index * v->cols, v->cols, out, max, n);
}

static int
q_step(struct lesson_run *run, int final, double *out, int max, int *n,
    char *err, size_t errlen)
{
	(void)final;
	(void)max;
	(void)err;
	(void)errlen;
	out[0] = (double)run->step;
	*n = 1;
	return 0;
}

static int
q_phase(struct lesson_run *run, int final, double *out, int max, int *n,
    char *err, size_t errlen)
{
	(void)final;
	(void)max;
	if (run->step < 0)
		return util_error(err, errlen, "before the first step there is no "
		    "phase");
	out[0] = run->phase;
	*n = 1;
	return 0;
}

static int
q_tile(struct lesson_run *run, int final, double *out, int max, int *n,
    char *err, size_t errlen)
{
	const struct sim_view *v = lesson_run_view(run);

	(void)final;
	(void)max;
	if (v == NULL)
		return util_error(err, errlen, "before the first step there is no "
		    "tile");
	out[0] = v->tile.i;
	out[1] = v->tile.j;
	*n = 2;
	return 0;
}

static int
q_steps(struct lesson_run *run, int final, double *out, int max, int *n,
    char *err, size_t errlen)
{
	(void)final;
	(void)max;
	(void)err;
	(void)errlen;
	out[0] = (double)sim_steps(run->setup.sim);
	*n = 1;
	return 0;
}

static int
q_skipped(struct lesson_run *run, int final, double *out, int max, int *n,
    char *err, size_t errlen)
{
	const struct schedule *s = sim_schedule(run->setup.sim);

	(void)final;
	(void)max;
	(void)err;
	(void)errlen;
	out[0] = (double)((long)s->tr * s->tc - s->nsteps);
	*n = 1;
	return 0;
}

/* The counters through the current step (zero before the first). */
static void
counters(struct lesson_run *run, struct traffic *t)
{
	const struct sim_view *v = lesson_run_view(run);

	if (v == NULL)
		memset(t, 0, sizeof *t);
	else
		*t = v->traffic;
}

#define COUNTER(fn, expr)						\
static int								\
fn(struct lesson_run *run, int final, double *out, int max, int *n,	\
    char *err, size_t errlen)						\
{									\
	struct traffic t;						\
									\
	(void)final;							\
	(void)max;							\
	(void)err;							\
	(void)errlen;							\
	counters(run, &t);						\
	out[0] = (double)(expr);					\
	*n = 1;								\
	return 0;							\
}
COUNTER(q_hbm_read, t.hbm_read)
COUNTER(q_hbm_write, t.hbm_write)
COUNTER(q_hbm, t.hbm_read + t.hbm_write)
COUNTER(q_flops, t.flops)
COUNTER(q_exps, t.exps)
COUNTER(q_rescale_exps, t.rescale_exps)
COUNTER(q_stored, t.stored)
COUNTER(q_onchip, t.onchip)

/* Standard attention on the same problem: the yardstick. */
#define STANDARD(fn, expr)						\
static int								\
fn(struct lesson_run *run, int final, double *out, int max, int *n,	\
    char *err, size_t errlen)						\
{									\
	struct traffic t;						\
									\
	(void)final;							\
	(void)max;							\
	(void)err;							\
	(void)errlen;							\
	traffic_standard(&run->setup.problem, &t);			\
	out[0] = (double)(expr);					\
	*n = 1;								\
	return 0;							\
}
STANDARD(q_std_hbm, t.hbm_read + t.hbm_write)
STANDARD(q_std_flops, t.flops)
STANDARD(q_std_stored, t.stored)

static const struct lesson_quantity quantities[] = {
	{ .name = "m", .kind = LESSON_Q_REAL, .read = q_m,
	  .help = "the running max of the focus row" },
	{ .name = "l", .kind = LESSON_Q_REAL, .read = q_l,
	  .help = "the running denominator" },
	{ .name = "alpha", .kind = LESSON_Q_REAL, .read = q_alpha,
	  .help = "the rescale factor exp(m_old - m_new) of the row's last step" },
	{ .name = "u", .kind = LESSON_Q_REAL, .vector = 1, .read = q_u,
	  .help = "the running numerator (unnormalized convention)" },
	{ .name = "o", .kind = LESSON_Q_REAL, .vector = 1, .final = 1, .read = q_o,
	  .help = "the output row (finalized), or the running o (normalized)" },
	{ .name = "lse", .kind = LESSON_Q_REAL, .final = 1, .read = q_lse,
	  .help = "the log-sum-exp m + log l (finalized)" },
	{ .name = "rowmax", .kind = LESSON_Q_REAL, .read = q_rowmax,
	  .help = "the max of the row's scores in the current tile" },
	{ .name = "rowsum", .kind = LESSON_Q_REAL, .read = q_rowsum,
	  .help = "the sum of the row's P in the current tile" },
	{ .name = "s", .kind = LESSON_Q_REAL, .vector = 1, .read = q_s,
	  .help = "the row's scores in the current tile" },
	{ .name = "p", .kind = LESSON_Q_REAL, .vector = 1, .read = q_p,
	  .help = "the row's exp(S - m_new) in the current tile" },
	{ .name = "step", .kind = LESSON_Q_COUNT, .read = q_step,
	  .help = "the current step (-1 before the first)" },
	{ .name = "phase", .kind = LESSON_Q_PHASE, .read = q_phase,
	  .help = "the current phase" },
	{ .name = "tile", .kind = LESSON_Q_TILE, .read = q_tile,
	  .help = "the current tile: I J" },
	{ .name = "steps", .kind = LESSON_Q_COUNT, .read = q_steps,
	  .help = "the number of steps" },
	{ .name = "skipped", .kind = LESSON_Q_COUNT, .read = q_skipped,
	  .help = "tiles the mask skips" },
	{ .name = "hbm-read", .kind = LESSON_Q_COUNT, .read = q_hbm_read,
	  .help = "bytes read from HBM through this step" },
	{ .name = "hbm-write", .kind = LESSON_Q_COUNT, .read = q_hbm_write,
	  .help = "bytes written to HBM through this step" },
	{ .name = "hbm", .kind = LESSON_Q_COUNT, .read = q_hbm,
	  .help = "bytes read and written" },
	{ .name = "flops", .kind = LESSON_Q_COUNT, .read = q_flops,
	  .help = "matmul FLOPs through this step" },
	{ .name = "exps", .kind = LESSON_Q_COUNT, .read = q_exps,
	  .help = "exponentials of scores through this step" },
	{ .name = "rescale-exps", .kind = LESSON_Q_COUNT, .read = q_rescale_exps,
	  .help = "exponentials of rescale factors" },
	{ .name = "stored", .kind = LESSON_Q_COUNT, .read = q_stored,
	  .help = "bytes of intermediates kept in HBM (peak)" },
	{ .name = "onchip", .kind = LESSON_Q_COUNT, .read = q_onchip,
	  .help = "bytes on chip during this step" },
	{ .name = "standard-hbm", .kind = LESSON_Q_COUNT, .read = q_std_hbm,
	  .help = "HBM bytes of standard attention on this problem" },
	{ .name = "standard-flops", .kind = LESSON_Q_COUNT, .read = q_std_flops,
	  .help = "matmul FLOPs of standard attention" },
	{ .name = "standard-stored", .kind = LESSON_Q_COUNT, .read = q_std_stored,
	  .help = "bytes standard attention keeps in HBM (S and P)" },
	{ .name = NULL },
};

const struct lesson_quantity *
lesson_quantities(void)
{
	return quantities;
}

const struct lesson_quantity *
lesson_quantity_find(const char *name)
{
	const struct lesson_quantity *q;

	for (q = quantities; q->name != NULL; q++)
		if (strcmp(q->name, name) == 0)
			return q;
	return NULL;
}
