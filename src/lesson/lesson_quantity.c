/*
 * lesson_quantity.c - the table of what a lesson can read (see
 * lesson_quantity.h).  Quantities that read one field the same way share
 * a generic reader and say which field; the few that need a rule of
 * their own (the conventions of u and o, the fast kernel's base-2
 * arithmetic, the errors against the references, the gradients) have
 * their own reader.  Each entry gives its reader per segment: a
 * quantity of the forward (s, p) has another reader in the backward,
 * where the tile is the backward's, and m, l, u the merged state's in
 * the combine.
 */
#include "config.h"

#include "lesson_quantity.h"
#include "lesson_machine.h"
#include "model/compare.h"
#include "model/paged.h"
#include "model/traffic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fast kernel's exponent factor: scale log2(e), rounded to float as
 * the kernel rounds it. */
#define LOG2E_F 1.4426950408889634f
#define LN2 0.69314718055994531

static const char *const segment_names[TIMELINE_KINDS] = {
	[TIMELINE_FORWARD] = "forward",
	[TIMELINE_BACKWARD] = "backward",
	[TIMELINE_COMBINE] = "combine",
};

int
lesson_quantity_max(const struct lesson_run *run)
{
	const struct problem *p = &run->setup.problem;
	int n = p->dv > p->tk ? p->dv : p->tk, splits;

	n = p->d > n ? p->d : n;
	if (run->built && (splits = sim_schedule(run->setup.sim)->splits) > 1)
		n = splits * p->dv > n ? splits * p->dv : n;
	return n + 4;
}

/* The read's values: len floats of x (as many as fit), or one. */
static int
copy_row(struct lesson_read *rq, const float *x, int len)
{
	int i;

	for (i = 0; i < len && i < rq->max; i++)
		rq->out[i] = x[i];
	rq->n = i;
	return 0;
}

static int
one(struct lesson_read *rq, double x)
{
	rq->out[0] = x;
	rq->n = 1;
	return 0;
}

/* ---- the focus row ---- */

static int
focus_row(struct lesson_read *rq, struct lesson_row *row)
{
	struct lesson_run *run = rq->run;

	if (lesson_run_row(run, run->focus, row) != 0)
		return util_error(rq->err, rq->errlen, "row %d cannot be read",
		    run->focus);
	return 0;
}

static int
final_arrays(struct lesson_read *rq, const float **o, const float **lse)
{
	struct lesson_run *run = rq->run;

	if (lesson_run_final(run, &run->lesson->cmds[run->pc - 1], o, lse) != 0)
		return util_error(rq->err, rq->errlen, "%s", run->err);
	return 0;
}

/* Does the run stand past the forward (in the combine or the backward)? */
static int
past_forward(const struct lesson_run *run)
{
	return run->step >= 0 && lesson_run_kind(run) != TIMELINE_FORWARD;
}

/* A split run's forward leaves each row one state per key range: past
 * it a row's m, l and u are not one number but the partials'. */
static int
split_past_forward(struct lesson_read *rq)
{
	const struct lesson_run *run = rq->run;
	const char *name = rq->q->name;

	if (run->bwd.comb == NULL || lesson_run_kind(run) != TIMELINE_BACKWARD ||
	    run->step < 0)
		return 0;
	return util_error(rq->err, rq->errlen, "a split run's forward leaves a "
	    "row one %s per key range: read partial-%s (partial-o for u)", name,
	    strcmp(name, "alpha") == 0 ? "m" : name);
}

/* A float of struct lesson_row: m and l always; alpha from the row's
 * rescale phase; lse once the row is finalized (or final). */
static int
read_row(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	struct lesson_row row;
	const float *o, *lse;

	/* Past the forward a row's lse is the run's (a split run's merged). */
	if (rq->final ||
	    (rq->rd->from == SIM_PHASE_FINALIZE && past_forward(run))) {
		if (final_arrays(rq, &o, &lse) != 0)
			return -1;
		return one(rq, lse[lesson_run_out_row(run, run->focus)]);
	}
	if (split_past_forward(rq) != 0)
		return -1;
	if (focus_row(rq, &row) != 0)
		return -1;
	if (rq->rd->from == SIM_PHASE_RESCALE && !row.has_alpha)
		return util_error(rq->err, rq->errlen, "%s is known from phase "
		    "rescale of a step that holds the row", rq->q->name);
	if (rq->rd->from == SIM_PHASE_FINALIZE && !row.has_out)
		return util_error(rq->err, rq->errlen, "%s is known after the "
		    "row's finalize phase", rq->q->name);
	return one(rq, *(const float *)((const char *)&row + rq->rd->field[0]));
}

static int
read_u(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	struct lesson_row row;

	if (run->opts.rule.convention != CONV_UNNORMALIZED)
		return util_error(rq->err, rq->errlen, "the normalized convention "
		    "keeps o, not u");
	if (split_past_forward(rq) != 0)
		return -1;
	if (focus_row(rq, &row) != 0)
		return -1;
	return copy_row(rq, row.acc, run->setup.problem.dv);
}

/* The merged output of the focus row in the combine: its block's last
 * merge finalizes it; an earlier block's rows are done. */
static int
merged_output(struct lesson_read *rq, const float **o)
{
	struct lesson_run *run = rq->run;
	const struct combine_view *v = lesson_run_combine_view(run);
	const float *fo, *flse;
	int r = run->focus, block = lesson_run_block(run, r);

	if (r >= v->r0 && r < v->r1) {
		if (v->phase != COMBINE_PHASE_FINALIZE)
			return util_error(rq->err, rq->errlen, "the merged o is "
			    "known after the row block's last merge (phase "
			    "finalize)");
		*o = v->o + (size_t)(r - v->r0) * v->dv;
		return 0;
	}
	if (block > v->block)
		return util_error(rq->err, rq->errlen, "row %d's block is merged "
		    "later", r);
	if (final_arrays(rq, &fo, &flse) != 0)
		return -1;
	*o = fo + (size_t)lesson_run_out_row(run, r) * run->setup.problem.dv;
	return 0;
}

/* The output row: finalized, final, merged, or the running o of the
 * normalized convention.  Shared by o and error. */
static int
output_row(struct lesson_read *rq, const float **o)
{
	struct lesson_run *run = rq->run;
	struct lesson_row row;
	const float *fo, *flse;

	if (lesson_run_kind(run) == TIMELINE_COMBINE && run->step >= 0 &&
	    !rq->final)
		return merged_output(rq, o);
	/* After the whole run, or in the backward: the run's output. */
	if (rq->final || past_forward(run)) {
		if (final_arrays(rq, &fo, &flse) != 0)
			return -1;
		*o = fo + (size_t)lesson_run_out_row(run, run->focus) *
		    run->setup.problem.dv;
		return 0;
	}
	if (focus_row(rq, &row) != 0)
		return -1;
	if (row.has_out) {
		*o = row.o;
		return 0;
	}
	if (run->opts.rule.convention == CONV_NORMALIZED && row.from_step >= 0) {
		*o = row.acc;
		return 0;
	}
	return util_error(rq->err, rq->errlen, "the unnormalized convention "
	    "keeps u; o is known after the row's finalize phase");
}

static int
read_o(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const float *o;

	if (output_row(rq, &o) != 0)
		return -1;
	return copy_row(rq, o, run->setup.problem.dv);
}

/* The largest |x - ref| over n entries (NaN when an x is NaN). */
static double
worst(const float *x, const double *ref, int len)
{
	double w = 0;
	int i;

	for (i = 0; i < len; i++)
		if (isnan(x[i]))
			return NAN;
		else if (fabs(x[i] - ref[i]) > w)
			w = fabs(x[i] - ref[i]);
	return w;
}

/* The largest |o - reference| over the row's entries. */
static int
read_error(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const float *o;
	const double *ref;
	int dv = run->setup.problem.dv;

	if (output_row(rq, &o) != 0) {
		/* the same message, of error */
		if (strstr(rq->err, "o is known") != NULL ||
		    strstr(rq->err, "merged o is known") != NULL)
			return util_error(rq->err, rq->errlen, "error is known after "
			    "the row's finalize phase");
		return -1;
	}
	if (lesson_run_reference(run, &run->lesson->cmds[run->pc - 1], &ref) != 0)
		return util_error(rq->err, rq->errlen, "%s", run->err);
	return one(rq, worst(o, ref +
	    (size_t)lesson_run_out_row(run, run->focus) * dv, dv));
}

/* The root mean square of O - reference over the whole output, as
 * FlashAttention 3 reports its error; known after the whole run. */
static int
read_rmse(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct problem *p = &run->setup.problem;
	struct compare_result res;
	const float *o, *lse;
	const double *ref;

	if (final_arrays(rq, &o, &lse) != 0)
		return -1;
	if (lesson_run_reference(run, &run->lesson->cmds[run->pc - 1], &ref) != 0)
		return util_error(rq->err, rq->errlen, "%s", run->err);
	compare_arrays(o, ref, (long)problem_rows(p) * p->dv, 0, 0, &res);
	return one(rq, res.rmse);
}

/* Q's quantization (--dtype fp8): field 0 the largest |Q| as given,
 * 1 the largest |entry| quantized (rotated, under --hadamard), 2 the
 * scales Q has, 3 Q's root mean square quantization error. */
static int
read_fp8_q(struct lesson_read *rq)
{
	const struct fp8_data *f = rq->run->setup.problem.fp8;
	struct fp8_stats st;
	size_t i, n;
	double amax = 0;

	if (f == NULL)
		return util_error(rq->err, rq->errlen, "%s is known with dtype "
		    "fp8", rq->q->name);
	fp8_stats(&f->q, &st);
	n = (size_t)f->q.rows * f->q.cols;
	for (i = 0; i < n; i++)
		if (fabs(f->q.exact[i]) > amax)
			amax = fabs(f->q.exact[i]);
	switch (rq->rd->from) {
	case 0:
		return one(rq, amax);
	case 1:
		return one(rq, st.amax);
	case 2:
		return one(rq, f->q.nblocks);
	default:
		return one(rq, st.rms_err);
	}
}

/* ---- the focus row in the current tile ---- */

static int
tile_row(struct lesson_read *rq, int from, struct lesson_row *row)
{
	const char *what = rq->q->name;

	if (focus_row(rq, row) != 0)
		return -1;
	if (!row->in_tile)
		return util_error(rq->err, rq->errlen, "%s belongs to the current "
		    "tile, which does not hold row %d", what, rq->run->focus);
	if (rq->run->phase < from)
		return util_error(rq->err, rq->errlen, "%s is known from phase %s",
		    what, lesson_parser_phase_name(from));
	return 0;
}

/* A pointer member of struct sim_view: one float per tile row, or
 * (vector) a row of cols floats. */
static int
read_tile(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct sim_view *v;
	struct lesson_row row;
	const float *x;

	if (tile_row(rq, rq->rd->from, &row) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	x = *(const float *const *)((const char *)v + rq->rd->field[0]);
	if (!rq->q->vector)
		return one(rq, x[row.index]);
	return copy_row(rq, x + (size_t)row.index * v->cols, v->cols);
}

/* ---- the backward's tile ---- */

/* The focus row's index in the backward's tile, from phase `from`. */
static int
btile_row(struct lesson_read *rq, const struct backward_view **v, int *x)
{
	const char *what = rq->q->name;
	int focus = rq->run->focus, from = rq->rd->from;

	*v = lesson_run_backward_view(rq->run);
	if (*v == NULL)
		return util_error(rq->err, rq->errlen, "%s belongs to a backward "
		    "step; the lesson stands before the first", what);
	if (focus < (*v)->tile.r0 || focus >= (*v)->tile.r1)
		return util_error(rq->err, rq->errlen, "%s belongs to the current "
		    "tile, which does not hold row %d", what, focus);
	if ((int)(*v)->phase < from)
		return util_error(rq->err, rq->errlen, "%s is known from phase %s "
		    "of a backward step", what, backward_phase_name(from));
	*x = focus - (*v)->tile.r0;
	return 0;
}

/* A (rows, cols) pointer member of struct backward_view: the focus
 * row's cols floats. */
static int
read_btile(struct lesson_read *rq)
{
	const struct backward_view *v;
	const float *x;
	int r = 0;

	if (btile_row(rq, &v, &r) != 0)
		return -1;
	x = *(const float *const *)((const char *)v + rq->rd->field[0]);
	return copy_row(rq, x + (size_t)r * v->cols, v->cols);
}

/* Over the focus row of the backward's tile: the max of S (nfield 0),
 * the sum of P (1), or the sum of P o dP (2), in double. */
static int
read_btile_sum(struct lesson_read *rq)
{
	const struct backward_view *v;
	const float *s, *p, *dp;
	double acc;
	int r = 0, c;

	if (btile_row(rq, &v, &r) != 0)
		return -1;
	s = v->s + (size_t)r * v->cols;
	p = v->p + (size_t)r * v->cols;
	dp = v->dp + (size_t)r * v->cols;
	acc = rq->rd->nfield == 0 ? -INFINITY : 0;
	for (c = 0; c < v->cols; c++)
		if (rq->rd->nfield == 0)
			acc = s[c] > acc ? s[c] : acc;
		else
			acc += rq->rd->nfield == 1 ? p[c] : (double)p[c] * dp[c];
	return one(rq, acc);
}

static int
need_backward(struct lesson_read *rq)
{
	if (rq->run->bwd.bwd == NULL)
		return util_error(rq->err, rq->errlen, "the problem has no "
		    "backward pass (give it backward)");
	return 0;
}

/* D = rowsum(dO o O) of the focus row, from the backward's start. */
static int
read_dsum(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;

	if (need_backward(rq) != 0)
		return -1;
	if (!rq->final && lesson_run_backward_view(run) == NULL)
		return util_error(rq->err, rq->errlen, "D is computed when the "
		    "backward begins");
	return one(rq, backward_dsum(run->bwd.bwd)[run->focus]);
}

/* ---- the gradients ---- */

static int
grad_of(struct lesson_read *rq, struct lesson_grad *g, int *at)
{
	struct lesson_run *run = rq->run;
	int from = rq->rd->from;

	if (need_backward(rq) != 0)
		return -1;
	*at = from == LESSON_DQ ? run->focus : run->focus_key;
	if (lesson_run_grad(run, (enum lesson_grad_kind)from, *at, rq->final,
	    g) != 0)
		return util_error(rq->err, rq->errlen, "%s %d has no gradient here",
		    from == LESSON_DQ ? "row" : "key", *at);
	return 0;
}

/* dQ of the focus row, dK or dV of the focus key (rd->from says which),
 * as far as the backward has summed them. */
static int
read_grad(struct lesson_read *rq)
{
	struct lesson_grad g;
	int at;

	if (grad_of(rq, &g, &at) != 0)
		return -1;
	return copy_row(rq, g.x, g.n);
}

/* The Euclidean norm of the same row, in double. */
static int
read_grad_norm(struct lesson_read *rq)
{
	struct lesson_grad g;
	double sum = 0;
	int at, i;

	if (grad_of(rq, &g, &at) != 0)
		return -1;
	for (i = 0; i < g.n; i++)
		sum += (double)g.x[i] * g.x[i];
	return one(rq, sqrt(sum));
}

/* The largest |gradient - reference| over the row, once it is whole. */
static int
read_grad_error(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	double *const *ref;
	struct lesson_grad g;
	int at;

	if (grad_of(rq, &g, &at) != 0)
		return -1;
	if (!g.done)
		return util_error(rq->err, rq->errlen, "%s is known once every "
		    "tile that adds to %s %d is done", rq->q->name,
		    rq->rd->from == LESSON_DQ ? "row" : "key", at);
	if (lesson_run_reference_grads(run, &run->lesson->cmds[run->pc - 1],
	    &ref) != 0)
		return util_error(rq->err, rq->errlen, "%s", run->err);
	return one(rq, worst(g.x, ref[rq->rd->from] + (size_t)at * g.n, g.n));
}

/* ---- the combine ---- */

/* The focus row's index in the current merge, from phase `from`. */
static int
merge_row(struct lesson_read *rq, const struct combine_view **v, int *x)
{
	const char *what = rq->q->name;
	int focus = rq->run->focus, from = rq->rd->from;

	*v = lesson_run_combine_view(rq->run);
	if (*v == NULL)
		return util_error(rq->err, rq->errlen, "%s belongs to a merge; the "
		    "lesson stands before the first", what);
	if (focus < (*v)->r0 || focus >= (*v)->r1)
		return util_error(rq->err, rq->errlen, "%s belongs to the current "
		    "merge, whose row block (rows %d-%d) does not hold row %d",
		    what, (*v)->r0, (*v)->r1 - 1, focus);
	if ((int)(*v)->phase < from)
		return util_error(rq->err, rq->errlen, "%s is known from phase %s "
		    "of a merge", what, timeline_combine.phase_name(from));
	*x = focus - (*v)->r0;
	return 0;
}

/* A pointer member of struct combine_view: one float per row, or
 * (vector) dv floats per row. */
static int
read_merge(struct lesson_read *rq)
{
	const struct combine_view *v;
	const float *x;
	int r = 0;

	if (merge_row(rq, &v, &r) != 0)
		return -1;
	x = *(const float *const *)((const char *)v + rq->rd->field[0]);
	if (!rq->q->vector)
		return one(rq, x[r]);
	return copy_row(rq, x + (size_t)r * v->dv, v->dv);
}

static int
need_split(struct lesson_read *rq)
{
	if (rq->run->bwd.comb == NULL)
		return util_error(rq->err, rq->errlen, "the problem is not split "
		    "(give it splits 2 or more)");
	return 0;
}

/* The focus row's partials, one per key range: m, l, lse (from 0, 1,
 * 2), or u, o (3, 4: dv values a range, range after range). */
static int
read_partial(struct lesson_read *rq)
{
	const struct sim_partials *pt;
	size_t e;
	int s, x, k = 0, from = rq->rd->from;

	if (need_split(rq) != 0)
		return -1;
	pt = sim_partials(rq->run->setup.sim);
	for (s = 0; s < pt->splits; s++) {
		e = (size_t)rq->run->focus * pt->splits + (size_t)s;
		if (from < 3 && k < rq->max)
			rq->out[k++] = (from == 0 ? pt->m : from == 1 ? pt->l :
			    pt->lse)[e];
		for (x = 0; from >= 3 && x < pt->dv && k < rq->max; x++)
			rq->out[k++] = (from == 3 ? pt->u : pt->o)[e * pt->dv + x];
	}
	rq->n = k;
	return 0;
}

/* The largest difference between the split run's merged O (or lse) and
 * the unsplit run's, over every row; or (nfield 1) the bound float32
 * rounding allows it (combine_bound). */
static int
read_split_diff(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct lesson_cmd *c = &run->lesson->cmds[run->pc - 1];
	struct combine_bounds b;
	const float *o, *lse, *uo, *ulse, *x, *y;
	size_t len, i;
	double w = 0;

	if (need_split(rq) != 0)
		return -1;
	if (rq->rd->nfield == 1) {
		combine_bound(run->bwd.comb, &b);
		return one(rq, rq->rd->from ? b.lse : b.o);
	}
	if (final_arrays(rq, &o, &lse) != 0)
		return -1;
	if (lesson_run_unsplit(run, c, &uo, &ulse) != 0)
		return util_error(rq->err, rq->errlen, "%s", run->err);
	len = (size_t)lesson_run_rows(run) * (rq->rd->from ? 1 : (size_t)
	    run->setup.problem.dv);
	x = rq->rd->from ? lse : o;
	y = rq->rd->from ? ulse : uo;
	for (i = 0; i < len && !isnan(w); i++)
		if (x[i] != y[i])	/* two equal infinities differ by 0 */
			w = isnan(x[i] - y[i]) ? NAN : fmax(w, fabs(x[i] - y[i]));
	return one(rq, w);
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
read_raw_max(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	struct lesson_row row;

	if (focus_row(rq, &row) != 0)
		return -1;
	return one(rq, raw_max(&run->setup.problem, run->focus,
	    keys_seen(run, &row)));
}

static int
read_raw_scores(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct sim_view *v;
	struct lesson_row row;
	int c;

	if (tile_row(rq, SIM_PHASE_SCORES, &row) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	for (c = 0; c < v->cols && c < rq->max; c++)
		rq->out[c] = raw_score(&run->setup.problem, run->focus, v->tile.c0 + c);
	rq->n = c;
	return 0;
}

/*
 * The score rules' quantities of the focus row r (H Tq rows, head after
 * head) and key c, from mask_rule.h as the simulator applies them: the
 * scaled product x before a softcap or ALiBi bends it (-inf where
 * hidden; the simulator's sum in order, then the scale), ALiBi's bias
 * (computed from the positions), and the cap's derivative 1 - (C tanh(x
 * / C) / C)^2, the factor the backward multiplies dS by (1 without a
 * cap, 0 where hidden).
 */
enum { RULE_SCALED, RULE_BIAS, RULE_CAP_SLOPE };

static float
rule_value(const struct problem *p, int r, int c, int what)
{
	int h = r / p->tq, pos = r % p->tq;
	struct mask_rule m = problem_mask(p, h);
	float acc = 0, t;
	int x;

	if (what == RULE_BIAS)
		return mask_rule_bias(m, pos, c, p->tq, p->tk);
	if (!mask_rule_visible(m, pos, c, p->tq, p->tk))
		return what == RULE_SCALED ? -INFINITY : 0.0f;
	if (p->scores_mode)
		acc = p->s[(size_t)r * p->tk + c];
	else {
		for (x = 0; x < p->d; x++)
			acc += p->q[(size_t)r * p->d + x] *
			    p->kt[((size_t)(h / (p->heads / p->kv_heads)) * p->d + x) *
			    p->tk + c];
		acc *= p->scale;
	}
	if (what == RULE_SCALED || !mask_rule_has(m, MASK_SOFTCAP))
		return what == RULE_SCALED ? acc : 1.0f;
	t = mask_rule_cap(m, acc) / m.softcap;
	return 1.0f - t * t;
}

static int
read_rule(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct sim_view *v;
	struct lesson_row row;
	int c;

	if (tile_row(rq, SIM_PHASE_SCORES, &row) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	for (c = 0; c < v->cols && c < rq->max; c++)
		rq->out[c] = rule_value(&run->setup.problem, run->focus,
		    v->tile.c0 + c, rq->rd->from);
	rq->n = c;
	return 0;
}

/* How many keys the focus row sees under the problem's mask (its
 * head's window; the rules as written, not a mask bug's). */
static int
read_keys_seen(struct lesson_read *rq)
{
	const struct problem *p = &rq->run->setup.problem;
	struct lesson_row row;
	int r = rq->run->focus, c, n = 0;

	if (focus_row(rq, &row) != 0)
		return -1;
	for (c = 0; c < p->tk; c++)
		n += mask_rule_visible(problem_mask(p, r / p->tq), r % p->tq, c,
		    p->tq, p->tk);
	return one(rq, (double)n);
}

static int
read_exp2(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct problem *p = &run->setup.problem;
	const struct sim_view *v;
	struct lesson_row row;
	float c = scale_log2e(p), ms;
	int k;

	if (tile_row(rq, SIM_PHASE_EXP, &row) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	ms = exp_base(raw_max(p, run->focus, v->tile.c1), c);
	for (k = 0; k < v->cols && k < rq->max; k++)
		rq->out[k] = exp2f(fmaf(raw_score(p, run->focus, v->tile.c0 + k), c,
		    -ms));
	rq->n = k;
	return 0;
}

/* alpha two ways: FlashAttention-2's 2^(m_old c - ms), or exp(m_old -
 * m_new) as written, without the guard (NaN when both are -inf). */
static int
read_alpha_other(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct problem *p = &run->setup.problem;
	const struct sim_view *v;
	struct lesson_row row;
	float c = scale_log2e(p), m_old, m_new;

	if (tile_row(rq, SIM_PHASE_RESCALE, &row) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	if (rq->rd->from == SIM_PHASE_MAX) {
		m_old = v->m_old[row.index];
		m_new = v->m_new[row.index];
		return one(rq, expf(m_old - m_new));
	}
	m_old = raw_max(p, run->focus, v->tile.c0);
	m_new = raw_max(p, run->focus, v->tile.c1);
	return one(rq, exp2f(fmaf(m_old, c, -exp_base(m_new, c))));
}

/* lse from the base-2 state: (m_raw c) ln 2 + ln l; +inf for a row with
 * l = 0, as FlashAttention-2 stores it for its backward pass. */
static int
read_lse_exp2(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct problem *p = &run->setup.problem;
	struct lesson_row row;
	float m;

	if (focus_row(rq, &row) != 0)
		return -1;
	if (!row.has_out)
		return util_error(rq->err, rq->errlen, "%s is known after the "
		    "row's finalize phase", rq->q->name);
	m = raw_max(p, run->focus, keys_seen(run, &row));
	return one(rq, row.l > 0 ? (double)(m * scale_log2e(p)) * LN2 +
	    logf(row.l) : INFINITY);
}

static int
read_scale(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;

	return one(rq, rq->rd->from ? scale_log2e(&run->setup.problem) :
	    run->setup.problem.scale);
}

/* ---- the run ---- */

static int
read_step(struct lesson_read *rq)
{
	return one(rq, (double)rq->run->step);
}

static int
read_phase(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;

	if (run->step < 0)
		return util_error(rq->err, rq->errlen, "before the first step "
		    "there is no phase");
	return one(rq, lesson_run_phase_id(run));
}

static int
read_tile_ij(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct sim_view *v = lesson_run_view(run);
	const struct backward_view *b = lesson_run_backward_view(run);

	if (v == NULL && b == NULL)
		return util_error(rq->err, rq->errlen, "before the first step "
		    "there is no tile");
	rq->out[0] = v != NULL ? v->tile.i : b->tile.i;
	rq->out[1] = v != NULL ? v->tile.j : b->tile.j;
	rq->n = 2;
	return 0;
}

/* How many: steps of the whole run (from 0), tiles the mask skips (1),
 * steps of the forward (2), of the combine (3), of the backward (4),
 * merges a row block (5), the current merge in its row block (6). */
static int
read_count(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct schedule *s = sim_schedule(run->setup.sim);
	const struct combine_view *v;

	switch (rq->rd->from) {
	case 0:
		return one(rq, (double)timeline_steps(run->bwd.tl));
	case 1:
		return one(rq, (double)((long)s->tr * s->tc - s->nsteps));
	case 2:
		return one(rq, (double)s->nsteps);
	case 4:
		if (need_backward(rq) != 0)
			return -1;
		return one(rq, (double)backward_steps(run->bwd.bwd));
	default:
		if (need_split(rq) != 0)
			return -1;
		if (rq->rd->from == 3)
			return one(rq, (double)combine_steps(run->bwd.comb));
		if (rq->rd->from == 5)
			return one(rq, (double)combine_merges(run->bwd.comb));
		if ((v = lesson_run_combine_view(run)) == NULL)
			return util_error(rq->err, rq->errlen, "merge: the lesson "
			    "stands before the first merge");
		return one(rq, (double)v->merge);
	}
}

/* The tiles the focus row's row block visits, or (from = 1) the visited
 * tiles that the mask cuts: those with a masked entry, computed entry by
 * entry.  Under the bottom-right causal mask a tile's top-right corner
 * is its most hidden entry. */
static int
read_tiles(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct schedule *s = sim_schedule(run->setup.sim);
	const struct problem *p = &run->setup.problem;
	long cut = 0;
	int i, j, c1, r0, r1, f = run->focus;

	if (!rq->rd->from)
		return one(rq, s->jend[lesson_run_block(run, f)] -
		    s->jbegin[lesson_run_block(run, f)]);
	/* A visible tile the mask cuts hides its top-right entry (past the
	 * band's right edge) or its bottom-left one (before its left edge). */
	for (i = 0; i < s->tr; i++)
		for (j = s->jbegin[i]; j < s->jend[i]; j++) {
			schedule_rows(s, i, &r0, &r1);
			c1 = (j + 1) * s->bc < s->tk ? (j + 1) * s->bc : s->tk;
			cut += !problem_visible(p, schedule_row_pos(s, r0), c1 - 1) ||
			    !problem_visible(p, schedule_row_pos(s, r1 - 1), j * s->bc);
		}
	return one(rq, (double)cut);
}

/* ---- dropout (mask_rule.h) ---- */

/* The focus row's keep bits over the current tile's keys (1 kept, 0
 * dropped; all 1 without dropout), regenerated from the seed as the
 * simulator and the backward draw them. */
static int
read_keep(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct problem *p = &run->setup.problem;
	const struct backward_view *bv;
	struct lesson_row row;
	struct mask_rule m;
	int c0, c1, c, out, x;

	if (lesson_run_kind(run) == TIMELINE_BACKWARD) {
		if (btile_row(rq, &bv, &x) != 0)
			return -1;
		c0 = bv->tile.c0;
		c1 = bv->tile.c1;
		out = run->focus;
	} else {
		if (tile_row(rq, SIM_PHASE_LOAD, &row) != 0)
			return -1;
		c0 = sim_view(run->setup.sim)->tile.c0;
		c1 = sim_view(run->setup.sim)->tile.c1;
		out = lesson_run_out_row(run, run->focus);
	}
	m = problem_mask(p, out / p->tq);
	for (c = c0; c < c1 && c - c0 < rq->max; c++)
		rq->out[c - c0] = (float)mask_rule_keep(m, out % p->tq, c);
	rq->n = c - c0;
	return 0;
}

/* The bytes a stored keep mask would take, one byte an entry (as a
 * framework's boolean mask): H Tq Tk, what FlashAttention regenerates
 * from a seed and an offset instead (from = 1: those, 16 bytes). */
static int
read_dropout_bytes(struct lesson_read *rq)
{
	const struct problem *p = &rq->run->setup.problem;

	if (rq->rd->from)
		return one(rq, 16.0);
	return one(rq, (double)problem_rows(p) * (double)p->tk);
}

/* The visible entries dropout drops, over every head. */
static int
read_dropped(struct lesson_read *rq)
{
	const struct problem *p = &rq->run->setup.problem;
	long n = 0;
	int h, r, c;

	for (h = 0; h < (p->heads > 0 ? p->heads : 1); h++) {
		struct mask_rule m = problem_mask(p, h);

		for (r = 0; r < p->tq; r++)
			for (c = 0; c < p->tk; c++)
				n += mask_rule_visible(m, r, c, p->tq, p->tk) &&
				    !mask_rule_keep(m, r, c);
	}
	return one(rq, (double)n);
}

/* ---- the paged KV cache (paged.h) ---- */

/* The problem's page table, or an error naming page-size: the pages,
 * their slack and the physical pages of a tile exist only when K and V
 * are paged. */
static int
paged_cache(struct lesson_read *rq, const struct paged_cache **pc)
{
	*pc = &rq->run->setup.problem.paged;
	if ((*pc)->page_size > 0)
		return 0;
	return util_error(rq->err, rq->errlen, "%s: K and V are not paged "
	    "(page-size N makes them)", rq->q->name);
}

/* The keys [c0, c1) of the current tile, forward's or backward's. */
static int
current_keys(struct lesson_read *rq, int *c0, int *c1)
{
	const struct sim_view *v = lesson_run_view(rq->run);
	const struct backward_view *b = lesson_run_backward_view(rq->run);

	if (v == NULL && b == NULL)
		return util_error(rq->err, rq->errlen, "%s: before the first step "
		    "there is no tile", rq->q->name);
	*c0 = v != NULL ? v->tile.c0 : b->tile.c0;
	*c1 = v != NULL ? v->tile.c1 : b->tile.c1;
	return 0;
}

/* The logical pages Tk keys take (from 0), and the slots of the last
 * one that no key fills (1): a sequence's whole waste, under a page. */
static int
read_pages(struct lesson_read *rq)
{
	const struct paged_cache *pc;
	int tk = rq->run->setup.problem.tk;

	if (paged_cache(rq, &pc) != 0)
		return -1;
	if (rq->rd->from == 0)
		return one(rq, (double)pc->pages);
	return one(rq, (double)((long)pc->pages * pc->page_size - tk));
}

/* The physical pages the current tile's keys lie in, in key order: one
 * contiguous run of the pool each. */
static int
read_tile_pages(struct lesson_read *rq)
{
	const struct paged_cache *pc;
	int c0, c1, b, n = 0;

	if (paged_cache(rq, &pc) != 0 || current_keys(rq, &c0, &c1) != 0)
		return -1;
	for (b = c0 / pc->page_size; b <= (c1 - 1) / pc->page_size &&
	    n < rq->max; b++)
		rq->out[n++] = pc->table[b];
	rq->n = n;
	return 0;
}

/* The runs the current tile's K/V read takes (paged_runs: 1 when not
 * paged). */
static int
read_tile_runs(struct lesson_read *rq)
{
	int c0, c1;

	if (current_keys(rq, &c0, &c1) != 0)
		return -1;
	return one(rq, (double)paged_runs(&rq->run->setup.problem.paged, c0,
	    c1));
}

/* Over the forward's tiles (paged_count): the runs its K/V reads take
 * (from 0; a tile each when not paged), the tiles that span two pages
 * or more (1). */
static int
read_paged_reads(struct lesson_read *rq)
{
	struct paged_reads r;

	paged_count(&rq->run->setup.problem.paged,
	    sim_schedule(rq->run->setup.sim), &r);
	return one(rq, (double)(rq->rd->from == 0 ? r.runs : r.spanning));
}

/* A sum of fields of struct t. */
static int
sum_fields(struct lesson_read *rq, const struct traffic *t)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < rq->rd->nfield; i++)
		sum += *(const uint64_t *)((const char *)t + rq->rd->field[i]);
	return one(rq, (double)sum);
}

/* The forward's counters: through the current step (zero before the
 * first, all of them past the forward), or (from = 1) standard
 * attention's. */
static int
read_counter(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct sim_view *v = lesson_run_view(run);
	struct traffic t;

	memset(&t, 0, sizeof t);
	if (rq->rd->from)
		traffic_standard(&run->setup.problem, &t);
	else if (v != NULL)
		t = v->traffic;
	else if (run->step >= 0)
		traffic_upto(sim_traffic(run->setup.sim),
		    sim_steps(run->setup.sim) - 1, &t);
	return sum_fields(rq, &t);
}

/* The backward's counters through the current step (the D pass and the
 * steps so far; zero before the backward), or (from = 1) standard
 * attention's backward. */
static int
read_bwd_counter(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct backward_view *v = lesson_run_backward_view(run);
	struct traffic t;

	memset(&t, 0, sizeof t);
	if (rq->rd->from)
		traffic_standard_backward(&run->setup.problem, &t);
	else if (need_backward(rq) != 0)
		return -1;
	else if (v != NULL)
		t = v->traffic;
	return sum_fields(rq, &t);
}

/* The combine's counters through the current merge (zero before it). */
static int
read_comb_counter(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	const struct combine_view *v = lesson_run_combine_view(run);
	struct traffic t;

	if (need_split(rq) != 0)
		return -1;
	memset(&t, 0, sizeof t);
	if (v != NULL)
		t = v->traffic;
	return sum_fields(rq, &t);
}

/* What the schedule gives a GPU of LESSON_SMS SMs to run at once
 * (traffic_parallel): runs (from 0), waves (1), the percent of SMs busy
 * in them (2), the longest run in tiles (3), the span (4), the SMs (5). */
static int
read_parallel(struct lesson_read *rq)
{
	struct lesson_run *run = rq->run;
	struct traffic_parallel par;

	traffic_parallel(sim_schedule(run->setup.sim), LESSON_SMS, &par);
	switch (rq->rd->from) {
	case 0:
		return one(rq, (double)par.runs);
	case 1:
		return one(rq, (double)par.waves);
	case 2:
		return one(rq, par.waves > 0 ? 100.0 * (double)par.runs /
		    ((double)par.waves * par.sms) : 0.0);
	case 3:
		return one(rq, (double)par.longest);
	case 4:
		return one(rq, (double)par.span);
	default:
		return one(rq, (double)par.sms);
	}
}

/* Readers for the segments: every one, the forward and the backward
 * (where a row is as the forward left it), or one. */
#define R(...)		{ .read = __VA_ARGS__ }
#define ALL(...)	.at = { [TIMELINE_FORWARD] = R(__VA_ARGS__), \
			[TIMELINE_BACKWARD] = R(__VA_ARGS__), \
			[TIMELINE_COMBINE] = R(__VA_ARGS__) }
#define FWD(...)	.at[TIMELINE_FORWARD] = R(__VA_ARGS__)
#define BWD(...)	.at[TIMELINE_BACKWARD] = R(__VA_ARGS__)
#define COMB(...)	.at[TIMELINE_COMBINE] = R(__VA_ARGS__)

#define ROW(f)		read_row, .field = { offsetof(struct lesson_row, f) }
#define TILE(f, ph)	read_tile, .field = { offsetof(struct sim_view, f) }, \
			.from = ph
#define BTILE(f, ph)	read_btile, .field = { offsetof(struct backward_view, f) }, \
			.from = ph
#define MERGE(f, ph)	read_merge, .field = { offsetof(struct combine_view, f) }, \
			.from = ph
#define TRAFFIC(f)	offsetof(struct traffic, f)
#define COUNT(fn, f, std)	.kind = LESSON_Q_COUNT, ALL(fn, .field = \
			{ TRAFFIC(f) }, .nfield = 1, .from = std)
#define COUNT2(fn, f, g, std)	.kind = LESSON_Q_COUNT, ALL(fn, .field = \
			{ TRAFFIC(f), TRAFFIC(g) }, .nfield = 2, .from = std)
#define HOW_MANY(what)	.kind = LESSON_Q_COUNT, ALL(read_count, .from = what)

static const struct lesson_quantity quantities[] = {
	/* the focus row's running state */
	{ .name = "m", FWD(ROW(m)), BWD(ROW(m)),
	  COMB(MERGE(m, COMBINE_PHASE_MAX)),
	  .help = "the running max of the focus row (merged, in the combine)" },
	{ .name = "l", FWD(ROW(l)), BWD(ROW(l)),
	  COMB(MERGE(l, COMBINE_PHASE_UPDATE)),
	  .help = "the running denominator (merged, in the combine)" },
	{ .name = "alpha", FWD(ROW(alpha), .from = SIM_PHASE_RESCALE),
	  BWD(ROW(alpha), .from = SIM_PHASE_RESCALE),
	  .help = "the rescale factor exp(m_old - m_new) of the row's last step" },
	{ .name = "u", .vector = 1, FWD(read_u), BWD(read_u),
	  COMB(MERGE(u, COMBINE_PHASE_UPDATE)),
	  .help = "the running numerator (unnormalized convention; merged, in "
	  "the combine)" },
	{ .name = "o", .vector = 1, .final = 1, ALL(read_o),
	  .help = "the output row (finalized, or merged), or the running o "
	  "(normalized)" },
	{ .name = "lse", .final = 1,
	  FWD(ROW(lse), .from = SIM_PHASE_FINALIZE),
	  BWD(ROW(lse), .from = SIM_PHASE_FINALIZE),
	  COMB(MERGE(lse, COMBINE_PHASE_FINALIZE)),
	  .help = "the log-sum-exp m + log l (finalized, or merged)" },
	{ .name = "error", .final = 1, ALL(read_error),
	  .help = "the largest |o - reference| of the row, against attention "
	  "computed in double precision" },
	{ .name = "rmse", .final = 1, ALL(read_rmse),
	  .help = "the root mean square of O - reference over the whole "
	  "output, after the run (fp8: the reference of the unquantized "
	  "inputs)" },
	/* --dtype fp8's quantization of Q */
	{ .name = "q-amax", ALL(read_fp8_q, .from = 0),
	  .help = "fp8: the largest |entry| of Q as given" },
	{ .name = "q-amax-quantized", ALL(read_fp8_q, .from = 1),
	  .help = "fp8: the largest |entry| of Q as quantized (after the "
	  "rotation, with --hadamard)" },
	{ .name = "q-scales", .kind = LESSON_Q_COUNT, ALL(read_fp8_q, .from = 2),
	  .help = "fp8: how many scales Q has (one a block)" },
	{ .name = "q-quant-rms", ALL(read_fp8_q, .from = 3),
	  .help = "fp8: the root mean square of Q's quantization error" },
	/* the focus row in the current tile */
	{ .name = "rowmax", FWD(TILE(rowmax, SIM_PHASE_MAX)),
	  BWD(read_btile_sum, .nfield = 0, .from = BWD_PHASE_SCORES),
	  .help = "the max of the row's scores in the current tile" },
	{ .name = "rowsum", FWD(TILE(rowsum, SIM_PHASE_EXP)),
	  BWD(read_btile_sum, .nfield = 1, .from = BWD_PHASE_P),
	  .help = "the sum of the row's P in the current tile" },
	{ .name = "s", .vector = 1, FWD(TILE(s, SIM_PHASE_SCORES)),
	  BWD(BTILE(s, BWD_PHASE_SCORES)),
	  .help = "the row's scores in the current tile" },
	{ .name = "p", .vector = 1, FWD(TILE(p, SIM_PHASE_EXP)),
	  BWD(BTILE(p, BWD_PHASE_P)),
	  .help = "the row's exp(S - m_new) in the current tile; in the "
	  "backward exp(S - lse)" },
	/* the fast kernel's arithmetic */
	{ .name = "scale", ALL(read_scale),
	  .help = "the scale of the scores (1/sqrt(d) unless set)" },
	{ .name = "scale-log2e", ALL(read_scale, .from = 1),
	  .help = "scale log2(e) in float32: the fast kernel's exponent factor" },
	{ .name = "s-raw", .vector = 1, FWD(read_raw_scores),
	  .help = "the row's raw scores q.k in the current tile, before scale" },
	/* the score rules (mask_rule.h) */
	{ .name = "s-scaled", .vector = 1, FWD(read_rule, .from = RULE_SCALED),
	  .help = "the row's x = scale q.k in the current tile, before a softcap "
	  "or ALiBi bends it (-inf where hidden)" },
	{ .name = "keys-seen", .kind = LESSON_Q_COUNT, ALL(read_keys_seen),
	  .help = "how many keys the focus row sees under the mask (causal "
	  "or a window), of Tk" },
	{ .name = "alibi-bias", .vector = 1, FWD(read_rule, .from = RULE_BIAS),
	  .help = "ALiBi's bias -slope |r + Tk - Tq - c| of the row's keys in "
	  "the current tile (0 without ALiBi)" },
	{ .name = "cap-slope", .vector = 1, FWD(read_rule,
	  .from = RULE_CAP_SLOPE),
	  .help = "the softcap's derivative 1 - tanh^2(x / C) at the row's "
	  "keys in the current tile: the factor on dS (1 without a cap)" },
	{ .name = "m-raw", FWD(read_raw_max), BWD(read_raw_max),
	  .help = "the running max of the raw scores, as a fast kernel keeps it" },
	{ .name = "p-exp2", .vector = 1, FWD(read_exp2),
	  .help = "the row's weights as 2^(s_raw c - m_raw c), c = scale log2(e)" },
	{ .name = "alpha-exp2", FWD(read_alpha_other, .from = SIM_PHASE_RESCALE),
	  .help = "alpha as FlashAttention-2 forms it: 0 for a row that has seen "
	  "only masked keys" },
	{ .name = "alpha-naive", FWD(read_alpha_other, .from = SIM_PHASE_MAX),
	  .help = "exp(m_old - m_new) with no rule for m_new = -inf (NaN there)" },
	{ .name = "lse-exp2", FWD(read_lse_exp2), BWD(read_lse_exp2),
	  .help = "lse from the base-2 state, (m_raw c) ln 2 + ln l; +inf when "
	  "l = 0, as FlashAttention-2 stores it" },
	/* the backward */
	{ .name = "D", .final = 1, BWD(read_dsum),
	  .help = "D = rowsum(dO o O) of the focus row, from the backward's "
	  "start" },
	{ .name = "dP", .vector = 1, BWD(BTILE(dp, BWD_PHASE_DP)),
	  .help = "the row's dP = dO V^T in the current backward tile" },
	{ .name = "dS", .vector = 1, BWD(BTILE(ds, BWD_PHASE_DS)),
	  .help = "the row's dS = P o (dP - D) in the current backward tile" },
	{ .name = "pdp-sum", BWD(read_btile_sum, .nfield = 2,
	  .from = BWD_PHASE_DP),
	  .help = "the sum of the row's P o dP in the current backward tile" },
	{ .name = "dQ", .vector = 1, .final = 1, ALL(read_grad,
	  .from = LESSON_DQ),
	  .help = "the focus row's dQ as far as the backward has summed it" },
	{ .name = "dK", .vector = 1, .final = 1, ALL(read_grad,
	  .from = LESSON_DK),
	  .help = "the focus key's dK as far as the backward has summed it" },
	{ .name = "dV", .vector = 1, .final = 1, ALL(read_grad,
	  .from = LESSON_DV),
	  .help = "the focus key's dV as far as the backward has summed it" },
	{ .name = "dQ-norm", .final = 1, ALL(read_grad_norm, .from = LESSON_DQ),
	  .help = "the Euclidean norm of the focus row's dQ so far" },
	{ .name = "dK-norm", .final = 1, ALL(read_grad_norm, .from = LESSON_DK),
	  .help = "the Euclidean norm of the focus key's dK so far" },
	{ .name = "dV-norm", .final = 1, ALL(read_grad_norm, .from = LESSON_DV),
	  .help = "the Euclidean norm of the focus key's dV so far" },
	{ .name = "dQ-error", .final = 1, ALL(read_grad_error,
	  .from = LESSON_DQ),
	  .help = "the largest |dQ - reference| of the focus row, once whole" },
	{ .name = "dK-error", .final = 1, ALL(read_grad_error,
	  .from = LESSON_DK),
	  .help = "the largest |dK - reference| of the focus key, once whole" },
	{ .name = "dV-error", .final = 1, ALL(read_grad_error,
	  .from = LESSON_DV),
	  .help = "the largest |dV - reference| of the focus key, once whole" },
	/* the combine */
	{ .name = "m-a", COMB(MERGE(m_a, COMBINE_PHASE_LOAD)),
	  .help = "the merge's first operand's max (its lse for (o, lse))" },
	{ .name = "l-a", COMB(MERGE(l_a, COMBINE_PHASE_LOAD)),
	  .help = "the first operand's denominator (1 for (o, lse))" },
	{ .name = "u-a", .vector = 1, COMB(MERGE(u_a, COMBINE_PHASE_LOAD)),
	  .help = "the first operand's numerator (its o for (o, lse))" },
	{ .name = "m-b", COMB(MERGE(m_b, COMBINE_PHASE_LOAD)),
	  .help = "the second operand's max (its lse for (o, lse))" },
	{ .name = "l-b", COMB(MERGE(l_b, COMBINE_PHASE_LOAD)),
	  .help = "the second operand's denominator (1 for (o, lse))" },
	{ .name = "u-b", .vector = 1, COMB(MERGE(u_b, COMBINE_PHASE_LOAD)),
	  .help = "the second operand's numerator (its o for (o, lse))" },
	{ .name = "w-a", COMB(MERGE(w_a, COMBINE_PHASE_WEIGHTS)),
	  .help = "the first operand's merge weight, e^(m_a - m)" },
	{ .name = "w-b", COMB(MERGE(w_b, COMBINE_PHASE_WEIGHTS)),
	  .help = "the second operand's merge weight, e^(m_b - m)" },
	{ .name = "partial-m", .vector = 1, .final = 1, COMB(read_partial),
	  BWD(read_partial),
	  .help = "the focus row's partial max, one per key range" },
	{ .name = "partial-l", .vector = 1, .final = 1, COMB(read_partial,
	  .from = 1), BWD(read_partial, .from = 1), .help = "the focus row's partial denominators" },
	{ .name = "partial-lse", .vector = 1, .final = 1, COMB(read_partial,
	  .from = 2), BWD(read_partial, .from = 2), .help = "the focus row's partial lse, m + log l" },
	{ .name = "partial-u", .vector = 1, .final = 1, COMB(read_partial,
	  .from = 3), BWD(read_partial, .from = 3), .help = "the partial numerators, dv values a range" },
	{ .name = "partial-o", .vector = 1, .final = 1, COMB(read_partial,
	  .from = 4), BWD(read_partial, .from = 4), .help = "the partial outputs u / l, dv values a range" },
	{ .name = "split-diff", ALL(read_split_diff),
	  .help = "the largest |O split - O unsplit| over every row" },
	{ .name = "split-lse-diff", ALL(read_split_diff, .from = 1),
	  .help = "the largest |lse split - lse unsplit| over every row" },
	{ .name = "split-bound", ALL(read_split_diff, .nfield = 1),
	  .help = "how far float32 rounding may move O by splitting" },
	{ .name = "split-lse-bound", ALL(read_split_diff, .nfield = 1,
	  .from = 1), .help = "the same bound for lse" },
	/* the run */
	{ .name = "step", .kind = LESSON_Q_COUNT, ALL(read_step),
	  .help = "the current step (-1 before the first)" },
	{ .name = "phase", .kind = LESSON_Q_PHASE, ALL(read_phase),
	  .help = "the current phase" },
	{ .name = "tile", .kind = LESSON_Q_TILE, FWD(read_tile_ij),
	  BWD(read_tile_ij), .help = "the current tile: I J" },
	{ .name = "steps", HOW_MANY(0),
	  .help = "the number of steps of the whole run" },
	{ .name = "keep-bits", .vector = 1, ALL(read_keep),
	  .help = "dropout's keep bits of the focus row in the current tile "
	  "(1 kept, 0 dropped)" },
	{ .name = "dropped", .kind = LESSON_Q_COUNT, ALL(read_dropped),
	  .help = "visible entries dropout drops, every head" },
	{ .name = "dropout-mask-bytes", .kind = LESSON_Q_COUNT,
	  ALL(read_dropout_bytes),
	  .help = "bytes a stored dropout mask takes, a byte an entry" },
	{ .name = "dropout-state-bytes", .kind = LESSON_Q_COUNT,
	  ALL(read_dropout_bytes, .from = 1),
	  .help = "bytes FlashAttention keeps instead: the seed and offset" },
	/* the paged KV cache */
	{ .name = "pages", .kind = LESSON_Q_COUNT, ALL(read_pages),
	  .help = "paged: the pages the keys take, ceil(Tk / page size)" },
	{ .name = "page-slack", .kind = LESSON_Q_COUNT, ALL(read_pages,
	  .from = 1), .help = "paged: slots of the last page no key fills" },
	{ .name = "tile-pages", .vector = 1, FWD(read_tile_pages),
	  BWD(read_tile_pages),
	  .help = "paged: the physical pages the current tile's keys lie in" },
	{ .name = "tile-runs", .kind = LESSON_Q_COUNT, FWD(read_tile_runs),
	  BWD(read_tile_runs), .help = "contiguous runs the current tile's K/V "
	  "read takes: a page each (1 when not paged)" },
	{ .name = "page-runs", .kind = LESSON_Q_COUNT, ALL(read_paged_reads),
	  .help = "contiguous runs the forward's K/V reads take, over its tiles" },
	{ .name = "spanning-tiles", .kind = LESSON_Q_COUNT,
	  ALL(read_paged_reads, .from = 1),
	  .help = "the forward's tiles whose keys span two pages or more" },
	{ .name = "skipped", HOW_MANY(1),
	  .help = "tiles the mask skips" },
	{ .name = "forward-steps", HOW_MANY(2),
	  .help = "the forward's steps" },
	{ .name = "combine-steps", HOW_MANY(3),
	  .help = "the combine's steps: merges of every row block" },
	{ .name = "backward-steps", HOW_MANY(4),
	  .help = "the backward's steps" },
	{ .name = "merges", HOW_MANY(5),
	  .help = "the merges of one row block" },
	{ .name = "merge", .kind = LESSON_Q_COUNT, COMB(read_count, .from = 6),
	  .help = "the current merge within its row block, from 0" },
	{ .name = "row-tiles", .kind = LESSON_Q_COUNT, ALL(read_tiles),
	  .help = "tiles the focus row's row block visits: its share of the work" },
	{ .name = "cut-tiles", .kind = LESSON_Q_COUNT, ALL(read_tiles, .from = 1),
	  .help = "visited tiles the mask cuts: masked entry by entry" },
	/* the forward's counters */
	{ .name = "hbm-read", COUNT(read_counter, hbm_read, 0),
	  .help = "bytes the forward read from HBM through this step" },
	{ .name = "hbm-write", COUNT(read_counter, hbm_write, 0),
	  .help = "bytes written to HBM through this step" },
	{ .name = "hbm", COUNT2(read_counter, hbm_read, hbm_write, 0),
	  .help = "bytes read and written" },
	{ .name = "flops", COUNT(read_counter, flops, 0),
	  .help = "matmul FLOPs through this step" },
	{ .name = "exps", COUNT(read_counter, exps, 0),
	  .help = "exponentials of scores through this step" },
	{ .name = "rescale-exps", COUNT(read_counter, rescale_exps, 0),
	  .help = "exponentials of rescale factors" },
	{ .name = "stored", COUNT(read_counter, stored, 0),
	  .help = "bytes of intermediates kept in HBM (peak)" },
	{ .name = "onchip", COUNT(read_counter, onchip, 0),
	  .help = "bytes on chip during this step" },
	{ .name = "kv-read", COUNT(read_counter, kv_read, 0),
	  .help = "bytes of K and V read (part of hbm-read)" },
	{ .name = "partials", COUNT(read_counter, partials, 0),
	  .help = "bytes of split partials written (part of hbm-write)" },
	{ .name = "standard-hbm", COUNT2(read_counter, hbm_read, hbm_write, 1),
	  .help = "HBM bytes of standard attention on this problem" },
	{ .name = "standard-flops", COUNT(read_counter, flops, 1),
	  .help = "matmul FLOPs of standard attention" },
	{ .name = "standard-stored", COUNT(read_counter, stored, 1),
	  .help = "bytes standard attention keeps in HBM (S and P)" },
	{ .name = "standard-kv-read", COUNT(read_counter, kv_read, 1),
	  .help = "bytes of K and V standard attention reads" },
	/* the combine's and the backward's counters */
	{ .name = "combine-hbm-read", COUNT(read_comb_counter, hbm_read, 0),
	  .help = "bytes the combine read (partials) through this merge" },
	{ .name = "combine-hbm-write", COUNT(read_comb_counter, hbm_write, 0),
	  .help = "bytes the combine wrote (O and lse) through this merge" },
	{ .name = "combine-hbm", COUNT2(read_comb_counter, hbm_read, hbm_write,
	  0), .help = "bytes the combine read and wrote" },
	{ .name = "bwd-hbm-read", COUNT(read_bwd_counter, hbm_read, 0),
	  .help = "bytes the backward read from HBM through this step" },
	{ .name = "bwd-hbm-write", COUNT(read_bwd_counter, hbm_write, 0),
	  .help = "bytes the backward wrote through this step" },
	{ .name = "bwd-hbm", COUNT2(read_bwd_counter, hbm_read, hbm_write, 0),
	  .help = "bytes the backward read and wrote" },
	{ .name = "bwd-flops", COUNT(read_bwd_counter, flops, 0),
	  .help = "the backward's matmul FLOPs through this step" },
	{ .name = "bwd-exps", COUNT(read_bwd_counter, exps, 0),
	  .help = "the backward's exponentials (P recomputed)" },
	{ .name = "bwd-stored", COUNT(read_bwd_counter, stored, 0),
	  .help = "bytes the backward keeps in HBM (lse, D, the float32 dQ)" },
	{ .name = "bwd-onchip", COUNT(read_bwd_counter, onchip, 0),
	  .help = "bytes on chip during this backward step" },
	{ .name = "standard-bwd-hbm", COUNT2(read_bwd_counter, hbm_read,
	  hbm_write, 1), .help = "HBM bytes of standard attention's backward" },
	{ .name = "standard-bwd-flops", COUNT(read_bwd_counter, flops, 1),
	  .help = "matmul FLOPs of standard attention's backward" },
	{ .name = "standard-bwd-stored", COUNT(read_bwd_counter, stored, 1),
	  .help = "bytes standard attention's backward keeps (P, dP, dS)" },
	/* what a GPU gets to run at once */
	{ .name = "runs", .kind = LESSON_Q_COUNT, ALL(read_parallel),
	  .help = "independent runs (row blocks, or row blocks and ranges)" },
	{ .name = "waves", .kind = LESSON_Q_COUNT, ALL(read_parallel, .from = 1),
	  .help = "waves of runs on the SMs assumed" },
	{ .name = "busy", ALL(read_parallel, .from = 2),
	  .help = "percent of the SMs busy in those waves" },
	{ .name = "longest", .kind = LESSON_Q_COUNT, ALL(read_parallel,
	  .from = 3), .help = "tiles of the longest run" },
	{ .name = "span", .kind = LESSON_Q_COUNT, ALL(read_parallel, .from = 4),
	  .help = "tile steps at least, one tile a step per SM" },
	{ .name = "sms", .kind = LESSON_Q_COUNT, ALL(read_parallel, .from = 5),
	  .help = "the SMs assumed: 132, an H100 or H200 SXM" },
	/* the machine (lesson_machine.c) */
	{ .name = "ridge", ALL(lesson_machine_roof),
	  .help = "the H200's ridge point: tensor peak / HBM bandwidth" },
	{ .name = "peak-tflops", ALL(lesson_machine_roof, .from = 1),
	  .help = "the H200's dense fp16/bf16 tensor-core peak, TFLOP/s" },
	{ .name = "hbm-tbs", ALL(lesson_machine_roof, .from = 2),
	  .help = "the H200's HBM3e bandwidth, TB/s" },
	{ .name = "intensity", ALL(lesson_machine_roof, .from = 3),
	  .help = "the whole forward's FLOPs per HBM byte" },
	{ .name = "roof", ALL(lesson_machine_roof, .from = 4),
	  .help = "the H200's roof at that intensity, TFLOP/s" },
	{ .name = "pipe-clocks", ALL(lesson_machine_pipeline),
	  .help = "the wgmma pipeline model's block, clocks (d 64 or 128)" },
	{ .name = "pipe-clocks-1stage", ALL(lesson_machine_pipeline, .from = 1),
	  .help = "the same with one stage" },
	{ .name = "pipe-clocks-more", ALL(lesson_machine_pipeline, .from = 2),
	  .help = "the same with one more stage" },
	{ .name = "pipe-clocks-nopp", ALL(lesson_machine_pipeline, .from = 3),
	  .help = "the same without ping-pong" },
	{ .name = "pipe-clocks-noov", ALL(lesson_machine_pipeline, .from = 4),
	  .help = "the same without overlap (nor ping-pong)" },
	/* the H200 recordings (lesson_machine.c) */
#define REC(n, f, h) { .name = n, ALL(lesson_machine_recording, .from = f), \
	  .help = h }
	REC("rec-tile", LESSON_REC_TILE, "the H200 recording of this head: "
	    "clocks a steady key tile"),
	REC("rec-block", LESSON_REC_BLOCK, "the recording: clocks a block"),
	REC("rec-tile-nopp", LESSON_REC_TILE_NOPP, "the recording without "
	    "ping-pong: clocks a key tile"),
	REC("rec-block-nopp", LESSON_REC_BLOCK_NOPP, "the recording without "
	    "ping-pong: clocks a block"),
	REC("rec-overlap", LESSON_REC_OVERLAP, "the recording: % of softmax "
	    "time while another consumer's softmax ran"),
	REC("rec-overlap-nopp", LESSON_REC_OVERLAP_NOPP, "the same without "
	    "ping-pong"),
	REC("rec-softmax", LESSON_REC_SOFTMAX, "the recording: clocks a "
	    "softmax takes"),
	REC("fit-tile", LESSON_FIT_TILE, "the model fed with the recording's "
	    "durations: clocks a key tile"),
	REC("fit-block", LESSON_FIT_BLOCK, "the fed model: clocks a block"),
	REC("fit-tile-nopp", LESSON_FIT_TILE_NOPP, "the fed model without "
	    "ping-pong: clocks a key tile"),
	REC("fit-tile-1stage", LESSON_FIT_TILE_1STAGE, "the fed model with "
	    "one stage: clocks a key tile"),
	REC("fit-tile-noov", LESSON_FIT_TILE_NOOV, "the fed model without "
	    "overlap: clocks a key tile"),
#undef REC
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

int
lesson_quantity_read(struct lesson_run *run, const struct lesson_quantity *q,
    int final, double *out, int max, int *n, char *err, size_t errlen)
{
	enum timeline_kind kind = lesson_run_kind(run), k;
	struct lesson_read rq = { .run = run, .q = q, .final = final,
	    .out = out, .max = max, .err = err, .errlen = errlen };
	char where[64];
	size_t used = 0;

	/* After the whole run a value is the same from any segment. */
	for (k = 0; final && q->at[kind].read == NULL && k < TIMELINE_KINDS; k++)
		if (q->at[k].read != NULL)
			kind = k;
	if (q->at[kind].read != NULL) {
		rq.rd = &q->at[kind];
		if (rq.rd->read(&rq) != 0)
			return -1;
		*n = rq.n;
		return 0;
	}
	for (k = 0; k < TIMELINE_KINDS; k++)
		if (q->at[k].read != NULL)
			used += (size_t)snprintf(where + used, sizeof where - used,
			    "%s%s", used ? " and the " : "the ", segment_names[k]);
	return util_error(err, errlen, "%s is known in %s; the lesson stands in "
	    "the %s", q->name, where, segment_names[lesson_run_kind(run)]);
}

int
lesson_quantity_of_row(const struct lesson_quantity *q)
{
	lesson_read_fn f = q->at[TIMELINE_FORWARD].read;

	return f == read_row || f == read_u || f == read_o || f == read_tile;
}
