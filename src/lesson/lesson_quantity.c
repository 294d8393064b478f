/*
 * lesson_quantity.c - the table of what a lesson can read (see
 * lesson_quantity.h).  Quantities that read one field the same way share
 * a generic reader and say which field; the few that need a rule of
 * their own (the conventions of u and o, the fast kernel's base-2
 * arithmetic, the error against the reference) have their own reader.
 */
#include "config.h"

#include "lesson_quantity.h"
#include "model/traffic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fast kernel's exponent factor: scale log2(e), rounded to float as
 * the kernel rounds it. */
#define LOG2E_F 1.4426950408889634f
#define LN2 0.69314718055994531

int
lesson_quantity_max(const struct lesson_run *run)
{
	const struct problem *p = &run->setup.problem;

	return (p->dv > p->tk ? p->dv : p->tk) + 4;
}

/* ---- the focus row ---- */

static int
focus_row(struct lesson_run *run, struct lesson_row *row, char *err,
    size_t errlen)
{
	if (lesson_run_row(run, run->focus, row) != 0)
		return util_error(err, errlen, "row %d cannot be read", run->focus);
	return 0;
}

static int
final_arrays(struct lesson_run *run, const float **o, const float **lse,
    char *err, size_t errlen)
{
	if (lesson_run_final(run, &run->lesson->cmds[run->pc - 1], o, lse) != 0)
		return util_error(err, errlen, "%s", run->err);
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

/* A float of struct lesson_row: m and l always; alpha from the row's
 * rescale phase; lse once the row is finalized (or final). */
static int
read_row(struct lesson_run *run, const struct lesson_quantity *q, int final,
    double *out, int max, int *n, char *err, size_t errlen)
{
	struct lesson_row row;
	const float *o, *lse;

	(void)max;
	if (final) {
		if (final_arrays(run, &o, &lse, err, errlen) != 0)
			return -1;
		out[0] = lse[run->focus];
		*n = 1;
		return 0;
	}
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	if (q->from == SIM_PHASE_RESCALE && !row.has_alpha)
		return util_error(err, errlen, "%s is known from phase rescale of a "
		    "step that holds the row", q->name);
	if (q->from == SIM_PHASE_FINALIZE && !row.has_out)
		return util_error(err, errlen, "%s is known after the row's finalize "
		    "phase", q->name);
	out[0] = *(const float *)((const char *)&row + q->field[0]);
	*n = 1;
	return 0;
}

static int
read_u(struct lesson_run *run, const struct lesson_quantity *q, int final,
    double *out, int max, int *n, char *err, size_t errlen)
{
	struct lesson_row row;

	(void)q;
	(void)final;
	if (run->opts.rule.convention != CONV_UNNORMALIZED)
		return util_error(err, errlen, "the normalized convention keeps o, "
		    "not u");
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	return copy_row(row.acc, run->setup.problem.dv, out, max, n);
}

/* The output row: finalized, final, or the running o of the normalized
 * convention.  Shared by o and error. */
static int
output_row(struct lesson_run *run, int final, struct lesson_row *row,
    const float **o, char *err, size_t errlen)
{
	const float *fo, *flse;

	if (final) {
		if (final_arrays(run, &fo, &flse, err, errlen) != 0)
			return -1;
		*o = fo + (size_t)run->focus * run->setup.problem.dv;
		return 0;
	}
	if (focus_row(run, row, err, errlen) != 0)
		return -1;
	if (row->has_out) {
		*o = row->o;
		return 0;
	}
	if (run->opts.rule.convention == CONV_NORMALIZED && row->from_step >= 0) {
		*o = row->acc;
		return 0;
	}
	return util_error(err, errlen, "the unnormalized convention keeps u; o "
	    "is known after the row's finalize phase");
}

static int
read_o(struct lesson_run *run, const struct lesson_quantity *q, int final,
    double *out, int max, int *n, char *err, size_t errlen)
{
	struct lesson_row row;
	const float *o;

	(void)q;
	if (output_row(run, final, &row, &o, err, errlen) != 0)
		return -1;
	return copy_row(o, run->setup.problem.dv, out, max, n);
}

/* The largest |o - reference| over the row's entries. */
static int
read_error(struct lesson_run *run, const struct lesson_quantity *q, int final,
    double *out, int max, int *n, char *err, size_t errlen)
{
	struct lesson_row row;
	const float *o;
	const double *ref;
	int dv = run->setup.problem.dv, x;
	double worst = 0;

	(void)q;
	(void)max;
	if (!final && focus_row(run, &row, err, errlen) == 0 && !row.has_out)
		return util_error(err, errlen, "error is known after the row's "
		    "finalize phase");
	if (output_row(run, final, &row, &o, err, errlen) != 0)
		return -1;
	if (lesson_run_reference(run, &run->lesson->cmds[run->pc - 1], &ref) != 0)
		return util_error(err, errlen, "%s", run->err);
	ref += (size_t)run->focus * dv;
	for (x = 0; x < dv; x++)
		if (fabs(o[x] - ref[x]) > worst || isnan(o[x]))
			worst = isnan(o[x]) ? NAN : fabs(o[x] - ref[x]);
	out[0] = worst;
	*n = 1;
	return 0;
}

/* ---- the focus row in the current tile ---- */

static int
tile_row(struct lesson_run *run, int from, const char *what,
    struct lesson_row *row, char *err, size_t errlen)
{
	if (focus_row(run, row, err, errlen) != 0)
		return -1;
	if (!row->in_tile)
		return util_error(err, errlen, "%s belongs to the current tile, "
		    "which does not hold row %d", what, run->focus);
	if (run->phase < from)
		return util_error(err, errlen, "%s is known from phase %s", what,
		    lesson_parser_phase_name(from));
	return 0;
}

/* A pointer member of struct sim_view: one float per tile row, or
 * (vector) a row of cols floats. */
static int
read_tile(struct lesson_run *run, const struct lesson_quantity *q, int final,
    double *out, int max, int *n, char *err, size_t errlen)
{
	const struct sim_view *v;
	struct lesson_row row;
	const float *x;

	(void)final;
	if (tile_row(run, q->from, q->name, &row, err, errlen) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	x = *(const float *const *)((const char *)v + q->field[0]);
	if (!q->vector) {
		out[0] = x[row.index];
		*n = 1;
		return 0;
	}
	return copy_row(x + (size_t)row.index * v->cols, v->cols, out, max, n);
}

/* ---- the fast kernel's arithmetic ----
 *
 * A fast kernel keeps m on the raw scores q.k (not scaled), and forms
 * every weight as p = 2^(s_raw c - m_raw c) with c = scale log2(e): one
 * fused multiply-add and one exp2 per score.  While a row has seen only
 * masked keys its m_raw is -inf, and FlashAttention-2 takes 0 as the
 * exponent base then, so alpha = 2^(-inf) = 0.  These readers recompute
 * the row that way beside the simulator's exp(s - m). */

static float
scale_log2e(const struct problem *p)
{
	return p->scale * LOG2E_F;
}

/* The raw score of row r and key c: q.k summed over d in order (as the
 * simulator sums before it scales), or the given score; -inf masked. */
static float
raw_score(const struct problem *p, int r, int c)
{
	float acc = 0;
	int x;

	if (!problem_visible(p, r, c))
		return -INFINITY;
	if (p->scores_mode)
		return p->s[(size_t)r * p->tk + c];
	for (x = 0; x < p->d; x++)
		acc += p->q[(size_t)r * p->d + x] * p->kt[(size_t)x * p->tk + c];
	return acc;
}

/* The max of row r's raw scores over keys [0, upto). */
static float
raw_max(const struct problem *p, int r, int upto)
{
	float m = -INFINITY, s;
	int c;

	for (c = 0; c < upto; c++) {
		s = raw_score(p, r, c);
		m = s > m ? s : m;
	}
	return m;
}

/* The keys the focus row has seen at the current position: the row's
 * tiles come in key order in both loop orders. */
static int
keys_seen(struct lesson_run *run, const struct lesson_row *row)
{
	const struct schedule *s = sim_schedule(run->setup.sim);
	struct schedule_tile t;

	if (row->from_step < 0)
		return 0;
	schedule_tile(s, row->from_step, &t);
	if (row->in_tile && run->phase < SIM_PHASE_MAX)
		return t.c0;
	return t.c1;
}

/* The exponent base 2^ms of a row whose raw max is m: ms = m c, or 0
 * while m = -inf (FlashAttention-2's rule). */
static float
exp_base(float m, float c)
{
	return isinf(m) && m < 0 ? 0.0f : m * c;
}

static int
read_raw_max(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	struct lesson_row row;

	(void)q;
	(void)final;
	(void)max;
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	out[0] = raw_max(&run->setup.problem, run->focus, keys_seen(run, &row));
	*n = 1;
	return 0;
}

static int
read_raw_scores(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	const struct sim_view *v;
	struct lesson_row row;
	int c;

	(void)final;
	if (tile_row(run, SIM_PHASE_SCORES, q->name, &row, err, errlen) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	for (c = 0; c < v->cols && c < max; c++)
		out[c] = raw_score(&run->setup.problem, run->focus, v->tile.c0 + c);
	*n = c;
	return 0;
}

static int
read_exp2(struct lesson_run *run, const struct lesson_quantity *q, int final,
    double *out, int max, int *n, char *err, size_t errlen)
{
	const struct problem *p = &run->setup.problem;
	const struct sim_view *v;
	struct lesson_row row;
	float c = scale_log2e(p), ms;
	int k;

	(void)final;
	if (tile_row(run, SIM_PHASE_EXP, q->name, &row, err, errlen) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	ms = exp_base(raw_max(p, run->focus, v->tile.c1), c);
	for (k = 0; k < v->cols && k < max; k++)
		out[k] = exp2f(fmaf(raw_score(p, run->focus, v->tile.c0 + k), c,
		    -ms));
	*n = k;
	return 0;
}

/* alpha two ways: FlashAttention-2's 2^(m_old c - ms), or exp(m_old -
 * m_new) as written, without the guard (NaN when both are -inf). */
static int
read_alpha_other(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	const struct problem *p = &run->setup.problem;
	const struct sim_view *v;
	struct lesson_row row;
	float c = scale_log2e(p), m_old, m_new;

	(void)final;
	(void)max;
	if (tile_row(run, SIM_PHASE_RESCALE, q->name, &row, err, errlen) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	if (q->from == SIM_PHASE_MAX) {
		m_old = v->m_old[row.index];
		m_new = v->m_new[row.index];
		out[0] = expf(m_old - m_new);
	} else {
		m_old = raw_max(p, run->focus, v->tile.c0);
		m_new = raw_max(p, run->focus, v->tile.c1);
		out[0] = exp2f(fmaf(m_old, c, -exp_base(m_new, c)));
	}
	*n = 1;
	return 0;
}

/* lse from the base-2 state: (m_raw c) ln 2 + ln l; +inf for a row with
 * l = 0, as FlashAttention-2 stores it for its backward pass. */
static int
read_lse_exp2(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	const struct problem *p = &run->setup.problem;
	struct lesson_row row;
	float m;

	(void)final;
	(void)max;
	if (focus_row(run, &row, err, errlen) != 0)
		return -1;
	if (!row.has_out)
		return util_error(err, errlen, "%s is known after the row's finalize "
		    "phase", q->name);
	m = raw_max(p, run->focus, keys_seen(run, &row));
	out[0] = row.l > 0 ? (double)(m * scale_log2e(p)) * LN2 + logf(row.l) :
	    INFINITY;
	*n = 1;
	return 0;
}

static int
read_scale(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	(void)final;
	(void)max;
	(void)err;
	(void)errlen;
	out[0] = q->from ? scale_log2e(&run->setup.problem) :
	    run->setup.problem.scale;
	*n = 1;
	return 0;
}

/* ---- the run ---- */

static int
read_step(struct lesson_run *run, const struct lesson_quantity *q, int final,
    double *out, int max, int *n, char *err, size_t errlen)
{
	(void)q;
	(void)final;
	(void)max;
	(void)err;
	(void)errlen;
	out[0] = (double)run->step;
	*n = 1;
	return 0;
}

static int
read_phase(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	(void)q;
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
read_tile_ij(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	const struct sim_view *v = lesson_run_view(run);

	(void)q;
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
read_steps(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	const struct schedule *s = sim_schedule(run->setup.sim);

	(void)final;
	(void)max;
	(void)err;
	(void)errlen;
	/* steps, or (from = 1) the tiles the mask skips */
	out[0] = q->from ? (double)((long)s->tr * s->tc - s->nsteps) :
	    (double)s->nsteps;
	*n = 1;
	return 0;
}

/* The tiles the focus row's row block visits, or (from = 1) the visited
 * tiles that the mask cuts: those with a masked entry, computed entry by
 * entry.  Under the bottom-right causal mask a tile's top-right corner
 * is its most hidden entry. */
static int
read_tiles(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	const struct schedule *s = sim_schedule(run->setup.sim);
	const struct problem *p = &run->setup.problem;
	long cut = 0;
	int i, j, c1;

	(void)final;
	(void)max;
	(void)err;
	(void)errlen;
	if (!q->from) {
		out[0] = s->jend[run->focus / s->br];
		*n = 1;
		return 0;
	}
	for (i = 0; i < s->tr; i++)
		for (j = 0; j < s->jend[i]; j++) {
			c1 = (j + 1) * s->bc < s->tk ? (j + 1) * s->bc : s->tk;
			cut += !problem_visible(p, i * s->br, c1 - 1);
		}
	out[0] = (double)cut;
	*n = 1;
	return 0;
}

/* A sum of fields of struct traffic: through the current step (zero
 * before the first), or (from = 1) standard attention's. */
static int
read_counter(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	const struct sim_view *v = lesson_run_view(run);
	struct traffic t;
	uint64_t sum = 0;
	int i;

	(void)final;
	(void)max;
	(void)err;
	(void)errlen;
	if (q->from)
		traffic_standard(&run->setup.problem, &t);
	else if (v != NULL)
		t = v->traffic;
	else
		memset(&t, 0, sizeof t);
	for (i = 0; i < q->nfield; i++)
		sum += *(const uint64_t *)((const char *)&t + q->field[i]);
	out[0] = (double)sum;
	*n = 1;
	return 0;
}

#define ROW(f)		.read = read_row, .field = { offsetof(struct lesson_row, f) }
#define TILE(f, ph)	.read = read_tile, .field = { offsetof(struct sim_view, f) }, \
			.from = ph
#define COUNT(f)	.kind = LESSON_Q_COUNT, .read = read_counter, \
			.field = { offsetof(struct traffic, f) }, .nfield = 1
#define COUNT2(f, g)	.kind = LESSON_Q_COUNT, .read = read_counter, \
			.field = { offsetof(struct traffic, f), \
			offsetof(struct traffic, g) }, .nfield = 2

static const struct lesson_quantity quantities[] = {
	{ .name = "m", ROW(m),
	  .help = "the running max of the focus row" },
	{ .name = "l", ROW(l),
	  .help = "the running denominator" },
	{ .name = "alpha", ROW(alpha), .from = SIM_PHASE_RESCALE,
	  .help = "the rescale factor exp(m_old - m_new) of the row's last step" },
	{ .name = "u", .vector = 1, .read = read_u,
	  .help = "the running numerator (unnormalized convention)" },
	{ .name = "o", .vector = 1, .final = 1, .read = read_o,
	  .help = "the output row (finalized), or the running o (normalized)" },
	{ .name = "lse", ROW(lse), .from = SIM_PHASE_FINALIZE, .final = 1,
	  .help = "the log-sum-exp m + log l (finalized)" },
	{ .name = "error", .final = 1, .read = read_error,
	  .help = "the largest |o - reference| of the row, against attention "
	  "computed in double precision" },
	{ .name = "rowmax", TILE(rowmax, SIM_PHASE_MAX),
	  .help = "the max of the row's scores in the current tile" },
	{ .name = "rowsum", TILE(rowsum, SIM_PHASE_EXP),
	  .help = "the sum of the row's P in the current tile" },
	{ .name = "s", .vector = 1, TILE(s, SIM_PHASE_SCORES),
	  .help = "the row's scores in the current tile" },
	{ .name = "p", .vector = 1, TILE(p, SIM_PHASE_EXP),
	  .help = "the row's exp(S - m_new) in the current tile" },
	{ .name = "scale", .read = read_scale,
	  .help = "the scale of the scores (1/sqrt(d) unless set)" },
	{ .name = "scale-log2e", .read = read_scale, .from = 1,
	  .help = "scale log2(e) in float32: the fast kernel's exponent factor" },
	{ .name = "s-raw", .vector = 1, .read = read_raw_scores,
	  .help = "the row's raw scores q.k in the current tile, before scale" },
	{ .name = "m-raw", .read = read_raw_max,
	  .help = "the running max of the raw scores, as a fast kernel keeps it" },
	{ .name = "p-exp2", .vector = 1, .read = read_exp2,
	  .help = "the row's weights as 2^(s_raw c - m_raw c), c = scale log2(e)" },
	{ .name = "alpha-exp2", .read = read_alpha_other,
	  .from = SIM_PHASE_RESCALE,
	  .help = "alpha as FlashAttention-2 forms it: 0 for a row that has seen "
	  "only masked keys" },
	{ .name = "alpha-naive", .read = read_alpha_other, .from = SIM_PHASE_MAX,
	  .help = "exp(m_old - m_new) with no rule for m_new = -inf (NaN there)" },
	{ .name = "lse-exp2", .read = read_lse_exp2,
	  .help = "lse from the base-2 state, (m_raw c) ln 2 + ln l; +inf when "
	  "l = 0, as FlashAttention-2 stores it" },
	{ .name = "step", .kind = LESSON_Q_COUNT, .read = read_step,
	  .help = "the current step (-1 before the first)" },
	{ .name = "phase", .kind = LESSON_Q_PHASE, .read = read_phase,
	  .help = "the current phase" },
	{ .name = "tile", .kind = LESSON_Q_TILE, .read = read_tile_ij,
	  .help = "the current tile: I J" },
	{ .name = "steps", .kind = LESSON_Q_COUNT, .read = read_steps,
	  .help = "the number of steps" },
	{ .name = "skipped", .kind = LESSON_Q_COUNT, .read = read_steps, .from = 1,
	  .help = "tiles the mask skips" },
	{ .name = "row-tiles", .kind = LESSON_Q_COUNT, .read = read_tiles,
	  .help = "tiles the focus row's row block visits: its share of the work" },
	{ .name = "cut-tiles", .kind = LESSON_Q_COUNT, .read = read_tiles,
	  .from = 1, .help = "visited tiles the mask cuts: masked entry by entry" },
	{ .name = "hbm-read", COUNT(hbm_read),
	  .help = "bytes read from HBM through this step" },
	{ .name = "hbm-write", COUNT(hbm_write),
	  .help = "bytes written to HBM through this step" },
	{ .name = "hbm", COUNT2(hbm_read, hbm_write),
	  .help = "bytes read and written" },
	{ .name = "flops", COUNT(flops),
	  .help = "matmul FLOPs through this step" },
	{ .name = "exps", COUNT(exps),
	  .help = "exponentials of scores through this step" },
	{ .name = "rescale-exps", COUNT(rescale_exps),
	  .help = "exponentials of rescale factors" },
	{ .name = "stored", COUNT(stored),
	  .help = "bytes of intermediates kept in HBM (peak)" },
	{ .name = "onchip", COUNT(onchip),
	  .help = "bytes on chip during this step" },
	{ .name = "standard-hbm", COUNT2(hbm_read, hbm_write), .from = 1,
	  .help = "HBM bytes of standard attention on this problem" },
	{ .name = "standard-flops", COUNT(flops), .from = 1,
	  .help = "matmul FLOPs of standard attention" },
	{ .name = "standard-stored", COUNT(stored), .from = 1,
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
