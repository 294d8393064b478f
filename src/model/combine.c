/*
 * combine.c - merging a split run's partials (see combine.h).
 *
 * Every merge goes through merge_apply(), which reads its two operands
 * (the empty state, a partial from the sim's store, or a slot), merges
 * them with merge.h's rule into the destination slot, and leaves the
 * step's numbers in the view's arrays.  combine_run() and combine_seek()
 * both walk a row block's plan with it, so they give the same bits.
 *
 *   position (work_i, work_n): the slots hold row block work_i after its
 *   first work_n merges (work_i = -1: nothing yet).  A seek to merge n of
 *   block i continues from there when work_i = i and work_n <= n, and
 *   otherwise starts the block again from empty slots.
 */
#include "config.h"

#include "combine.h"
#include "reference.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct combine {
	const struct sim *sim;
	const struct schedule *sched;
	const struct sim_partials *pt;
	struct combine_rule rule;
	enum merge_form form;
	int br, dv, esize;

	struct combine_merge *plan;
	int nops, nslots;
	long nsteps;

	/* slot s holds m, l (br each) then u (br x dv), in one array */
	float *slots;
	int work_i, work_n;

	/* the current merge: what the view points at */
	float *m_a, *l_a, *m_b, *l_b, *m, *l, *w_a, *w_b;
	float *u_a, *u_b, *o, *lse;
	struct combine_view view;
};

static const char *order_names[] = {
	[COMBINE_LTR] = "ltr",
	[COMBINE_TREE] = "tree",
	[COMBINE_REVERSE] = "reverse",
};

static const char *form_names[] = {
	[MERGE_MLU] = "mlu",
	[MERGE_OLSE] = "olse",
};

static const char *bug_names[] = {
	[MERGE_BUG_NONE] = "none",
	[MERGE_BUG_NO_RESCALE_ONE] = "no-rescale-one",
	[MERGE_BUG_UNWEIGHTED] = "unweighted",
	[MERGE_BUG_LAST_MAX] = "last-max",
};

static const char *phase_names[COMBINE_PHASES] = {
	[COMBINE_PHASE_LOAD] = "load",
	[COMBINE_PHASE_MAX] = "max",
	[COMBINE_PHASE_WEIGHTS] = "weights",
	[COMBINE_PHASE_UPDATE] = "update",
	[COMBINE_PHASE_FINALIZE] = "finalize",
};

const char *
combine_phase_name(int phase)
{
	return phase >= 0 && phase < COMBINE_PHASES ? phase_names[phase] : "?";
}

/* The index of name in names[0 .. n), or -1. */
static int
name_find(const char *const *names, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

const char *
combine_order_name(enum combine_order o)
{
	return order_names[o];
}

int
combine_order_parse(const char *name, enum combine_order *out)
{
	int i = name_find(order_names, 3, name);

	if (i < 0)
		return -1;
	*out = (enum combine_order)i;
	return 0;
}

const char *
combine_form_name(enum merge_form f)
{
	return form_names[f];
}

int
combine_form_parse(const char *name, enum merge_form *out)
{
	int i = name_find(form_names, 2, name);

	if (i < 0)
		return -1;
	*out = (enum merge_form)i;
	return 0;
}

const char *
combine_bug_name(enum merge_bug b)
{
	return bug_names[b];
}

int
combine_bug_parse(const char *name, enum merge_bug *out)
{
	int i = name_find(bug_names, MERGE_BUGS, name);

	if (i < 0)
		return -1;
	*out = (enum merge_bug)i;
	return 0;
}

/* The merges of one row block for n partials; returns how many, and the
 * slots they need in *nslots.  ops has room for n merges. */
static int
plan_build(enum combine_order order, int n, struct combine_merge *ops,
    int *nslots)
{
	struct combine_operand *cur, *next, *swap;
	int k, len, next_len, nops = 0;

	if (order != COMBINE_TREE) {
		for (k = 0; k < n; k++) {
			ops[k].dst = 0;
			ops[k].a.source = k == 0 ? COMBINE_EMPTY : COMBINE_SLOT;
			ops[k].a.index = 0;
			ops[k].b.source = COMBINE_PARTIAL;
			ops[k].b.index = order == COMBINE_LTR ? k : n - 1 - k;
		}
		*nslots = 1;
		return n;
	}
	/* A tree, level by level: pairs of neighbours, the odd one out
	 * carried up. */
	cur = calloc((size_t)n, sizeof *cur);
	next = calloc((size_t)n, sizeof *next);
	if (cur == NULL || next == NULL) {
		free(cur);
		free(next);
		return -1;
	}
	for (k = 0; k < n; k++) {
		cur[k].source = COMBINE_PARTIAL;
		cur[k].index = k;
	}
	for (len = n; len > 1; len = next_len) {
		next_len = 0;
		for (k = 0; k + 1 < len; k += 2) {
			ops[nops].dst = nops;
			ops[nops].a = cur[k];
			ops[nops].b = cur[k + 1];
			next[next_len].source = COMBINE_SLOT;
			next[next_len++].index = nops++;
		}
		if (len % 2 != 0)
			next[next_len++] = cur[len - 1];
		swap = cur;
		cur = next;
		next = swap;
	}
	free(cur);
	free(next);
	*nslots = nops;
	return nops;
}

static float *
slot_m(const struct combine *c, int s)
{
	return c->slots + (size_t)s * (size_t)c->br * (size_t)(c->dv + 2);
}

static void
slots_clear(struct combine *c)
{
	int s, r;

	for (s = 0; s < c->nslots; s++) {
		float *m = slot_m(c, s);
		for (r = 0; r < c->br; r++)
			m[r] = -INFINITY;
		memset(m + c->br, 0, (size_t)c->br * (c->dv + 1) * sizeof *m);
	}
}

/* Operand x of rows [r0, r0 + rows) into m, l (rows) and u (rows, dv),
 * in the combine's form: a partial (m, l, u), or (lse, 1, o) for olse. */
static void
operand_load(const struct combine *c, struct combine_operand x, int r0,
    int rows, float *m, float *l, float *u)
{
	const struct sim_partials *pt = c->pt;
	size_t dv = (size_t)c->dv, e;
	const float *sm;
	int r;

	for (r = 0; r < rows; r++) {
		float *ur = u + (size_t)r * dv;

		switch (x.source) {
		case COMBINE_EMPTY:
			m[r] = -INFINITY;
			l[r] = 0.0f;
			memset(ur, 0, dv * sizeof *ur);
			break;
		case COMBINE_PARTIAL:
			e = (size_t)(r0 + r) * pt->splits + (size_t)x.index;
			if (c->form == MERGE_MLU) {
				m[r] = pt->m[e];
				l[r] = pt->l[e];
				memcpy(ur, pt->u + e * dv, dv * sizeof *ur);
			} else {
				m[r] = pt->lse[e];
				l[r] = pt->lse[e] == -INFINITY ? 0.0f : 1.0f;
				memcpy(ur, pt->o + e * dv, dv * sizeof *ur);
			}
			break;
		case COMBINE_SLOT:
			sm = slot_m(c, x.index);
			m[r] = sm[r];
			l[r] = sm[c->br + r];
			memcpy(ur, sm + 2 * (size_t)c->br + (size_t)r * dv,
			    dv * sizeof *ur);
			break;
		}
	}
}

/* Merge n of row block i, from the slots as they are after merges
 * 0 .. n-1: the one place where a merge is computed. */
static void
merge_apply(struct combine *c, int i, int n)
{
	const struct combine_merge *op = &c->plan[n];
	float *dst = slot_m(c, op->dst), *du = dst + 2 * (size_t)c->br;
	size_t dv = (size_t)c->dv;
	int r0, r1, rows, r, x;

	schedule_rows(c->sched, i, &r0, &r1);
	rows = r1 - r0;
	operand_load(c, op->a, r0, rows, c->m_a, c->l_a, c->u_a);
	operand_load(c, op->b, r0, rows, c->m_b, c->l_b, c->u_b);
	for (r = 0; r < rows; r++) {
		struct merge_weights w = merge_weigh(c->form, c->rule.bug,
		    c->m_a[r], c->l_a[r], c->m_b[r], c->l_b[r]);
		const float *ua = c->u_a + (size_t)r * dv, *ub = c->u_b + (size_t)r * dv;

		c->m[r] = dst[r] = w.m;
		c->l[r] = dst[c->br + r] = w.l;
		c->w_a[r] = w.w_a;
		c->w_b[r] = w.w_b;
		for (x = 0; x < c->dv; x++)
			du[(size_t)r * dv + x] = merge_mix(w, ua[x], ub[x]);
	}
	if (n == c->nops - 1)
		for (r = 0; r < rows; r++)
			online_finalize(c->form == MERGE_MLU ? CONV_UNNORMALIZED :
			    CONV_NORMALIZED, dst[r], dst[c->br + r],
			    du + (size_t)r * dv, c->dv, c->o + (size_t)r * dv,
			    &c->lse[r]);
}

/* HBM bytes of every block before row block i, of its merges 0 .. n-1
 * and of merge n through phase: the operands are read at LOAD, O and lse
 * written at FINALIZE. */
static void
merge_traffic(const struct combine *c, int i, int n, int phase,
    struct traffic *out)
{
	uint64_t pb = traffic_partial_bytes(c->form, c->dv);
	uint64_t ob = (uint64_t)c->dv * (uint64_t)c->esize + 4;
	int r0, r1, k, reads = 0;

	memset(out, 0, sizeof *out);
	schedule_rows(c->sched, i, &r0, &r1);
	for (k = 0; k <= n; k++)
		reads += (c->plan[k].a.source == COMBINE_PARTIAL) +
		    (c->plan[k].b.source == COMBINE_PARTIAL);
	/* every earlier block read all N partials and wrote O */
	out->hbm_read = (uint64_t)r0 * (uint64_t)c->pt->splits * pb +
	    (uint64_t)(r1 - r0) * (uint64_t)reads * pb;
	out->hbm_write = (uint64_t)r0 * ob + (n == c->nops - 1 &&
	    phase >= COMBINE_PHASE_FINALIZE ? (uint64_t)(r1 - r0) * ob : 0);
	out->partials = out->hbm_read;
}

static void
view_set(struct combine *c, int i, int n, int phase)
{
	struct combine_view *v = &c->view;

	v->step = (long)i * c->nops + n;
	v->block = i;
	schedule_rows(c->sched, i, &v->r0, &v->r1);
	v->rows = v->r1 - v->r0;
	v->merge = n;
	v->op = c->plan[n];
	v->last = n == c->nops - 1;
	v->u = slot_m(c, v->op.dst) + 2 * (size_t)c->br;
	v->nphases = v->last ? COMBINE_PHASES : COMBINE_PHASES - 1;
	if (phase < 0 || phase >= v->nphases)
		phase = v->nphases - 1;
	v->phase = (enum combine_phase)phase;
	merge_traffic(c, i, n, phase, &v->traffic);
}

void
combine_free(struct combine *c)
{
	if (c == NULL)
		return;
	free(c->plan);
	free(c->slots);
	free(c->m_a);
	free(c->l_a);
	free(c->m_b);
	free(c->l_b);
	free(c->m);
	free(c->l);
	free(c->w_a);
	free(c->w_b);
	free(c->u_a);
	free(c->u_b);
	free(c->o);
	free(c->lse);
	free(c);
}

struct combine *
combine_new(const struct sim *sim, const struct combine_rule *rule, char *err,
    size_t errlen)
{
	const struct sim_partials *pt = sim_partials(sim);
	struct combine *c;
	size_t br, acc;

	if (pt->splits < 2) {
		util_error(err, errlen, "nothing to combine: the run has no "
		    "splits (use --splits 2 or more)");
		return NULL;
	}
	if (!merge_bug_valid(pt->form, rule->bug)) {
		util_error(err, errlen, "merge bug '%s' sums normalized outputs: "
		    "it needs --partials olse", combine_bug_name(rule->bug));
		return NULL;
	}
	c = util_calloc(1, sizeof *c, "combine", err, errlen);
	if (c == NULL)
		return NULL;
	c->sim = sim;
	c->sched = sim_schedule(sim);
	c->pt = pt;
	c->rule = *rule;
	c->form = pt->form;
	c->br = c->sched->br;
	c->dv = pt->dv;
	c->esize = dtype_out_size(sim_problem(sim)->dtype);	/* O's */
	c->work_i = -1;
	br = (size_t)c->br;
	acc = br * (size_t)c->dv;
	c->plan = util_calloc((size_t)pt->splits, sizeof *c->plan, "merge plan",
	    err, errlen);
	if (c->plan == NULL)
		goto fail;
	c->nops = plan_build(rule->order, pt->splits, c->plan, &c->nslots);
	if (c->nops < 0) {
		util_error(err, errlen, "merge plan: out of memory");
		goto fail;
	}
	c->nsteps = (long)c->sched->tr * c->nops;
	if ((c->slots = util_calloc((size_t)c->nslots * br, (size_t)(c->dv + 2) *
	    sizeof(float), "merge slots", err, errlen)) == NULL ||
	    (c->m_a = util_calloc(br, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->l_a = util_calloc(br, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->m_b = util_calloc(br, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->l_b = util_calloc(br, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->m = util_calloc(br, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->l = util_calloc(br, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->w_a = util_calloc(br, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->w_b = util_calloc(br, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->lse = util_calloc(br, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->u_a = util_calloc(acc, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->u_b = util_calloc(acc, sizeof(float), "merge", err, errlen)) == NULL ||
	    (c->o = util_calloc(acc, sizeof(float), "merge", err, errlen)) == NULL)
		goto fail;

	c->view.dv = c->dv;
	c->view.m_a = c->m_a;
	c->view.l_a = c->l_a;
	c->view.m_b = c->m_b;
	c->view.l_b = c->l_b;
	c->view.m = c->m;
	c->view.l = c->l;
	c->view.w_a = c->w_a;
	c->view.w_b = c->w_b;
	c->view.u_a = c->u_a;
	c->view.u_b = c->u_b;
	c->view.o = c->o;
	c->view.lse = c->lse;
	if (c->nsteps > 0)
		combine_seek(c, 0, COMBINE_PHASE_LOAD);
	return c;

fail:
	combine_free(c);
	return NULL;
}

long
combine_steps(const struct combine *c)
{
	return c->nsteps;
}

int
combine_merges(const struct combine *c)
{
	return c->nops;
}

const struct combine_merge *
combine_plan(const struct combine *c)
{
	return c->plan;
}

const struct combine_rule *
combine_rule(const struct combine *c)
{
	return &c->rule;
}

enum merge_form
combine_form(const struct combine *c)
{
	return c->form;
}

const struct combine_view *
combine_view(const struct combine *c)
{
	return &c->view;
}

int
combine_step_phases(const struct combine *c, long k)
{
	return k % c->nops == c->nops - 1 ? COMBINE_PHASES : COMBINE_PHASES - 1;
}

int
combine_seek(struct combine *c, long k, int phase)
{
	int i, n;

	if (k < 0 || k >= c->nsteps)
		return -1;
	i = (int)(k / c->nops);
	n = (int)(k % c->nops);
	/* The view's arrays hold the numbers of the merge applied last,
	 * work_n - 1: walk on to n when it is not past n, else start the
	 * block again. */
	if (c->work_i != i || c->work_n > n + 1) {
		c->work_i = i;
		c->work_n = 0;
		slots_clear(c);
	}
	for (; c->work_n <= n; c->work_n++)
		merge_apply(c, i, c->work_n);
	view_set(c, i, n, phase);
	return 0;
}

int
combine_move_phase(struct combine *c, int delta)
{
	const struct combine_view *v = &c->view;
	int phase = (int)v->phase + delta;

	if (phase < 0)
		return v->step == 0 ? -1 :
		    combine_seek(c, v->step - 1, COMBINE_PHASE_LAST);
	if (phase >= v->nphases)
		return v->step + 1 >= c->nsteps ? -1 :
		    combine_seek(c, v->step + 1, COMBINE_PHASE_LOAD);
	c->view.phase = (enum combine_phase)phase;
	merge_traffic(c, v->block, v->merge, phase, &c->view.traffic);
	return 0;
}

int
combine_run(struct combine *c, combine_step_fn fn, void *ctx, float *o,
    float *lse)
{
	size_t dv = (size_t)c->dv;
	long k;
	int rc = 0, r, out;

	/* The partials may be new since the last seek: start afresh. */
	c->work_i = -1;
	for (k = 0; k < c->nsteps; k++) {
		combine_seek(c, k, COMBINE_PHASE_LAST);
		if (c->view.last)
			for (r = 0; r < c->view.rows; r++) {
				out = schedule_row_out(c->sched, c->view.r0 + r);
				if (o != NULL)
					memcpy(o + (size_t)out * dv,
					    c->o + (size_t)r * dv, dv * sizeof *o);
				if (lse != NULL)
					lse[out] = c->lse[r];
			}
		if (fn != NULL && (rc = fn(&c->view, ctx)) != 0)
			break;
	}
	return rc;
}

void
combine_traffic(const struct combine *c, struct traffic *out)
{
	if (c->nsteps == 0) {
		memset(out, 0, sizeof *out);
		return;
	}
	merge_traffic(c, c->sched->tr - 1, c->nops - 1, COMBINE_PHASE_FINALIZE,
	    out);
}

/*
 * How far float32 rounding lets a split run's O lie from the unsplit
 * run's on the same problem, with the correct rules (no bug modes).
 *
 * Both runs compute each score bit for bit alike (the same dot product
 * in the same order), so scores drop out; they differ in the max each
 * exponent is taken against, in the order of the sums, and in the
 * merges.  With u = 2^-24 and, for a row, R = the range of its visible
 * scores (at most 104: past that e^-R is 0 in float32), a key's share of
 * u and of l meets on its way: the exponent's argument s - m (relative
 * error up to R u in p) and expf (2 u); the tile's row sum and P V over
 * at most Bc keys (Bc u); per later tile of its run, alpha (2 u, and R u
 * over the whole run as the max rises by at most R), a product and a sum
 * (and the normalized convention's division): 6 u a tile.  Over the T
 * tiles of the unsplit row block that is
 *
 *   eta_1 = u (Bc + 6 T + 2 R + 4) + u_P
 *
 * where u_P is the unit roundoff of P rounded to fp16 or bf16 before
 * P V (2^-11, 2^-8; 0 in fp32): P differs between the runs, so its
 * rounding does too.  A split run has T_r <= ceil(T / N) tiles a range,
 * then its partial goes through D merges (N for ltr and reverse, the
 * tree's depth ceil(log2 N) for tree), each an exp of an argument below
 * R + log N, a product and a sum, and in olse a log and a division:
 * 10 u + 2 R u a merge,
 *
 *   eta_N = u (Bc + 6 T_r + 2 R + 4 + D (10 + 2 R)) + u_P.
 *
 * A ratio of sums whose terms are off by at most eta, O = u / l, is off
 * by at most (2 eta + u) max |V|; the two runs differ by at most both:
 *
 *   |O_N - O_1| <= (2 eta_N + 2 eta_1 + 2 u) max |V|
 *   |lse_N - lse_1| <= eta_N + eta_1 + 2 u (|m| + log Tk + 1)
 *
 * (m the row's max score).  The bound is a worst case; real differences
 * are far smaller (errors of either sign cancel), but they are not 0:
 * the same numbers summed in another order round differently.
 */
void
combine_bound(const struct combine *c, struct combine_bounds *out)
{
	const struct problem *p = sim_problem(c->sim);
	const struct schedule *s = c->sched;
	const double u = 0x1p-24;
	const double u_p = p->dtype == DTYPE_FP8 ? 0x1p-4 :
	    p->dtype == DTYPE_FP16 ? 0x1p-11 :
	    p->dtype == DTYPE_BF16 ? 0x1p-8 : 0.0;
	int i, r, r0, r1, x, col, g, depth = 0, n = c->pt->splits;
	double vmax, *vmax_kv;

	memset(out, 0, sizeof *out);
	vmax_kv = calloc((size_t)s->kv_heads, sizeof *vmax_kv);
	if (vmax_kv == NULL) {
		out->o = out->lse = INFINITY;
		return;
	}
	for (g = 0; g < s->kv_heads; g++)
		for (x = 0; x < p->tk * p->dv; x++) {
			vmax = fabs((double)p->v[(size_t)g * p->tk * p->dv + (size_t)x]);
			if (vmax > vmax_kv[g])
				vmax_kv[g] = vmax;
		}
	if (c->rule.order == COMBINE_TREE)
		while ((1 << depth) < n)
			depth++;
	else
		depth = n;

	for (i = 0; i < s->tr; i++) {
		int t1 = s->jend[i] - s->jbegin[i], tn = (t1 + n - 1) / n;

		schedule_rows(s, i, &r0, &r1);
		for (r = r0; r < r1; r++) {
			int pos = schedule_row_pos(s, r);
			size_t qrow = (size_t)schedule_row_out(s, r);
			double lo = INFINITY, hi = -INFINITY, range, e1, en, sc;

			for (col = 0; col < p->tk; col++) {
				if (!problem_visible(p, pos, col))
					continue;
				if (p->scores_mode)
					sc = p->s[qrow * p->tk + (size_t)col];
				else {
					const float *q = p->q + qrow * p->d;
					const float *k = p->k + ((size_t)schedule_kv_head(s, i) *
					    p->tk + (size_t)col) * p->d;
					sc = 0.0;
					for (x = 0; x < p->d; x++)
						sc += (double)q[x] * k[x];
					sc *= p->scale;
				}
				/* the score the softmax sees: capped and biased */
				sc = reference_score_head(p, (int)(qrow / (size_t)p->tq),
				    pos, col, sc);
				if (sc == -INFINITY)
					continue;
				lo = sc < lo ? sc : lo;
				hi = sc > hi ? sc : hi;
			}
			if (hi == -INFINITY)
				continue;	/* sees no key: O = 0 both ways */
			range = hi - lo < 104.0 ? hi - lo : 104.0;
			e1 = u * (s->bc + 6.0 * t1 + 2.0 * range + 4.0) + u_p;
			en = u * (s->bc + 6.0 * tn + 2.0 * range + 4.0 +
			    depth * (10.0 + 2.0 * range)) + u_p;
			vmax = (2.0 * en + 2.0 * e1 + 2.0 * u) *
			    vmax_kv[schedule_kv_head(s, i)];
			if (vmax > out->o)
				out->o = vmax;
			vmax = en + e1 + 2.0 * u * (fabs(hi) + log((double)p->tk) + 1.0);
			if (vmax > out->lse)
				out->lse = vmax;
		}
	}
	free(vmax_kv);
}
