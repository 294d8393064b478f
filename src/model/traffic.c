/* traffic.c - HBM bytes, on-chip bytes, FLOPs and exps (see traffic.h). */
#include "config.h"

#include "traffic.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static void
add(struct traffic *acc, const struct traffic *x)
{
	acc->hbm_read += x->hbm_read;
	acc->hbm_write += x->hbm_write;
	acc->flops += x->flops;
	acc->exps += x->exps;
	acc->rescale_exps += x->rescale_exps;
	acc->kv_read += x->kv_read;
	acc->partials += x->partials;
	if (x->onchip > acc->onchip)
		acc->onchip = x->onchip;
	if (x->stored > acc->stored)
		acc->stored = x->stored;
}

/* Adds n steps alike: sums n times, peaks once. */
static void
add_n(struct traffic *acc, const struct traffic *x, uint64_t n)
{
	struct traffic many = *x;

	many.hbm_read *= n;
	many.hbm_write *= n;
	many.flops *= n;
	many.exps *= n;
	many.rescale_exps *= n;
	many.kv_read *= n;
	many.partials *= n;
	add(acc, &many);
}

/* One step, through stage. */
static void
traffic_step_through(const struct traffic_table *t,
    const struct schedule_tile *tile, enum traffic_stage stage,
    struct traffic *out)
{
	uint64_t R = (uint64_t)(tile->r1 - tile->r0);
	uint64_t C = (uint64_t)(tile->c1 - tile->c0);
	uint64_t d = (uint64_t)t->d, dv = (uint64_t)t->dv, e = (uint64_t)t->esize;
	uint64_t state = R * (dv + 2) * 4;	/* acc, m, l in float32 */
	uint64_t q_i = R * d * e, kv_j = C * (d + dv) * e;
	int fa2 = t->sched->order == ORDER_FA2;

	memset(out, 0, sizeof *out);
	if (t->scores_mode) {
		/* The S tile replaces Q_i and K_j; V_j is still needed. */
		q_i = 0;
		kv_j = C * dv * e;
		out->hbm_read += R * C * e;
	}
	if (fa2) {
		if (tile->first_in_split)
			out->hbm_read += q_i;
		out->hbm_read += kv_j;
		out->kv_read = kv_j;
	} else {
		if (tile->first_in_outer) {
			out->hbm_read += kv_j;
			out->kv_read = kv_j;
		}
		out->hbm_read += q_i;
		if (!tile->first_in_split)
			out->hbm_read += state;
	}
	out->onchip = q_i + C * (d + dv) * e + state;
	if (stage < TRAFFIC_SCORES)
		return;
	out->flops = 2 * R * C * d;
	out->onchip += R * C * 4;
	if (stage < TRAFFIC_RESCALE)
		return;
	out->rescale_exps = R;
	if (stage < TRAFFIC_EXP)
		return;
	out->exps = R * C;
	if (stage < TRAFFIC_UPDATE)
		return;
	out->flops += 2 * R * C * dv;
	if (!fa2) {
		if (!tile->last_in_split)
			out->hbm_write += state;
		/* Between key blocks every row block's state waits in HBM. */
		out->stored = (uint64_t)t->sched->rows * (dv + 2) * 4;
	}
	if (stage < TRAFFIC_FINALIZE)
		return;
	if (tile->last_in_split && t->sched->splits > 1) {
		/* a range's partial, in float32, for the combine */
		out->partials = R * traffic_partial_bytes(t->sched->partials, t->dv);
		out->hbm_write += out->partials;
	} else if (tile->last_in_split)
		out->hbm_write += R * dv * (uint64_t)t->oesize + R * 4;	/* O_i, lse_i */
}

void
traffic_step(const struct traffic_table *t, const struct schedule_tile *tile,
    struct traffic *out)
{
	traffic_step_through(t, tile, TRAFFIC_FINALIZE, out);
}

/* The first row block i in [lo, hi) with edge[i] > j (hi when none): a
 * binary search, as jend and jbegin never decrease with i over the row
 * blocks of a segment that see a key block. */
static int
first_above(const int *edge, int lo, int hi, int j)
{
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (edge[mid] > j)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Steps first .. first+n-1, summed into acc.  Consecutive steps count
 * alike except where a flag or a ragged edge changes: the first and
 * second step (first_in_outer, first_in_row, first_in_split), the last
 * (a ragged tile, last_in_split), and `extra`, `extra2` (other cuts, or
 * -1).
 * Between cuts one step stands for all, so counting costs a few steps,
 * not a walk over them (268 million at Tq = 65536 and 4 x 4 tiles:
 * seconds).
 */
static void
add_run(const struct traffic_table *t, long first, long n, long extra,
    long extra2, struct traffic *acc)
{
	long cut[6] = { 0, 1, n - 1, extra >= 0 ? extra : n,
	    extra2 >= 0 ? extra2 : n, n }, c, x;
	struct schedule_tile tile;
	struct traffic one;

	if (n <= 0)
		return;
	/* Sort the few cuts (insertion), then count each run once. */
	for (c = 1; c < 6; c++)
		for (x = c; x > 0 && cut[x - 1] > cut[x]; x--) {
			long tmp = cut[x];
			cut[x] = cut[x - 1];
			cut[x - 1] = tmp;
		}
	for (c = 0; c + 1 < 6; c++) {
		if (cut[c] >= n || cut[c + 1] <= cut[c])
			continue;
		schedule_tile(t->sched, first + cut[c], &tile);
		traffic_step(t, &tile, &one);
		add_n(acc, &one, (uint64_t)(cut[c + 1] - cut[c]));
	}
}

/*
 * Outer block o's steps, summed into acc, as runs that count alike.
 * fa2: row block o; with split-KV each key range is a run of its own
 * (its first tile reads Q_i, its last writes a partial).  fa1: key block
 * j = o % Tc of segment (head) o / Tc, over row blocks ibegin[j] ..
 * iend[j] - 1; its steps change where last_in_row stops (at the row
 * blocks whose jend is j + 1, an interval at the start, as jend never
 * decreases within a segment) and where first_in_row starts (the row
 * blocks whose jbegin is j, an interval at the end: a window's).  fa1
 * with split-KV changes at each row block's own range edges: walked
 * step by step.
 */
static void
add_outer(const struct traffic_table *t, int o, struct traffic *acc)
{
	const struct schedule *s = t->sched;
	long first = s->first[o], n = s->first[o + 1] - first, k;
	int sp, j0, j1;

	if (s->order == ORDER_FA2) {
		if (s->splits <= 1) {
			add_run(t, first, n, -1, -1, acc);
			return;
		}
		for (sp = 0; sp < s->splits; sp++) {
			schedule_split_range(s, o, sp, &j0, &j1);
			add_run(t, first + (j0 - s->jbegin[o]), j1 - j0, -1, -1, acc);
		}
	} else if (s->splits <= 1) {
		int j = o % s->tc, base = (o / s->tc) * s->tr_seg;
		int lo = base + s->ibegin[j], hi = base + s->iend[j];

		add_run(t, first, n, first_above(s->jend, lo, hi, j + 1) - lo,
		    first_above(s->jbegin, lo, hi, j - 1) - lo, acc);
	} else
		for (k = 0; k < n; k++)
			add_run(t, first + k, 1, -1, -1, acc);
}

/* An empty table over schedule s of problem p: the forward's, or the
 * backward's; 0, or -1 with err set. */
static int
table_new(struct traffic_table *t, const struct problem *p,
    const struct schedule *s, int backward, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	t->sched = s;
	t->d = p->d;
	t->dv = p->dv;
	t->esize = dtype_size(p->dtype);
	t->oesize = dtype_out_size(p->dtype);
	t->scores_mode = p->scores_mode;
	t->backward = backward;
	t->before = util_calloc((size_t)s->nouter + 1, sizeof *t->before,
	    "traffic", err, errlen);
	t->cursor = util_calloc(1, sizeof *t->cursor, "traffic", err, errlen);
	if (t->before == NULL || t->cursor == NULL) {
		traffic_free(t);
		return -1;
	}
	t->cursor->outer = -1;
	return 0;
}

int
traffic_init(struct traffic_table *t, const struct problem *p,
    const struct schedule *s, char *err, size_t errlen)
{
	int o;

	if (table_new(t, p, s, 0, err, errlen) != 0)
		return -1;
	for (o = 0; o < s->nouter; o++) {
		t->before[o] = t->total;
		add_outer(t, o, &t->total);
	}
	t->before[s->nouter] = t->total;
	return 0;
}

void
traffic_free(struct traffic_table *t)
{
	free(t->before);
	free(t->cursor);
	memset(t, 0, sizeof *t);
}

/* Step tile of table t through stage (a traffic_stage, or for the
 * backward's table a traffic_bwd_stage). */
static void
step_through(const struct traffic_table *t, const struct schedule_tile *tile,
    int stage, struct traffic *out)
{
	if (t->backward)
		traffic_backward_step_through(t, tile,
		    (enum traffic_bwd_stage)stage, out);
	else
		traffic_step_through(t, tile, (enum traffic_stage)stage, out);
}

/* Steps 0 .. k-1 whole and step k through stage. */
static void
table_at(const struct traffic_table *t, long k, int stage, struct traffic *out)
{
	struct schedule_tile tile;
	struct traffic one;
	const int whole = t->backward ? TRAFFIC_BWD_WRITE : TRAFFIC_FINALIZE;
	long x;
	int o;

	/* Whole outer blocks from the table, then this block's steps: from
	 * the cursor when it stopped earlier in this block.  The same steps
	 * are added either way, and the sums and peaks do not depend on
	 * where the walk starts. */
	schedule_tile(t->sched, k, &tile);
	/* fa1: key block j of the tile's segment (head), not of the first
	 * (from there the walk came out right, but crossed every head
	 * before) */
	o = t->sched->order == ORDER_FA2 ? tile.i :
	    (tile.i / t->sched->tr_seg) * t->sched->tc + tile.j;
	if (t->cursor != NULL && t->cursor->outer == o && t->cursor->step <= k) {
		*out = t->cursor->sum;
		x = t->cursor->step;
	} else {
		*out = t->before[o];
		x = t->sched->first[o];
	}
	for (; x < k; x++) {
		schedule_tile(t->sched, x, &tile);
		step_through(t, &tile, whole, &one);
		add(out, &one);
	}
	if (t->cursor != NULL) {
		t->cursor->outer = o;
		t->cursor->step = k;
		t->cursor->sum = *out;
	}
	schedule_tile(t->sched, k, &tile);
	step_through(t, &tile, stage, &one);
	add(out, &one);
	/* On-chip bytes are those of step k itself, not a running peak. */
	out->onchip = one.onchip;
}

void
traffic_at(const struct traffic_table *t, long k, enum traffic_stage stage,
    struct traffic *out)
{
	table_at(t, k, t->backward ? TRAFFIC_BWD_WRITE : (int)stage, out);
}

void
traffic_backward_at(const struct traffic_table *t, long k,
    enum traffic_bwd_stage stage, struct traffic *out)
{
	table_at(t, k, (int)stage, out);
}

void
traffic_upto(const struct traffic_table *t, long k, struct traffic *out)
{
	memset(out, 0, sizeof *out);
	if (k >= 0)
		traffic_at(t, k, TRAFFIC_FINALIZE, out);
}

void
traffic_standard(const struct problem *p, struct traffic *out)
{
	uint64_t heads = (uint64_t)(p->heads > 0 ? p->heads : 1);
	uint64_t tq = (uint64_t)p->tq, tk = (uint64_t)p->tk;
	uint64_t d = (uint64_t)p->d, dv = (uint64_t)p->dv;
	uint64_t e = (uint64_t)dtype_size(p->dtype), tt = tq * tk;

	/* One head's bytes, then times the heads. */
	memset(out, 0, sizeof *out);
	if (p->scores_mode) {
		/* read S, write P, read P and V, write O */
		out->hbm_read = tt * e + tt * e + tk * dv * e;
		out->hbm_write = tt * e + tq * dv * e;
		out->kv_read = tk * dv * e;
	} else {
		/* read Q, K, write S, read S, write P, read P and V, write O */
		out->hbm_read = (tq + tk) * d * e + tt * e + tt * e + tk * dv * e;
		out->hbm_write = tt * e + tt * e + tq * dv * e;
		out->kv_read = tk * (d + dv) * e;
	}
	out->stored = 2 * tt * e;	/* S and P, whole */
	out->flops = 2 * tt * (d + dv);
	out->exps = tt;
	out->hbm_read *= heads;
	out->hbm_write *= heads;
	out->kv_read *= heads;
	out->stored *= heads;
	out->flops *= heads;
	out->exps *= heads;
}

uint64_t
traffic_partial_bytes(enum merge_form form, int dv)
{
	return (uint64_t)(form == MERGE_MLU ? dv + 2 : dv + 1) * 4;
}

void
traffic_parallel(const struct schedule *s, int sms, struct traffic_parallel *out)
{
	int i, sp, j0, j1;

	memset(out, 0, sizeof *out);
	out->sms = sms > 0 ? sms : 1;
	for (i = 0; i < s->tr; i++)
		for (sp = 0; sp < s->splits; sp++) {
			schedule_split_range(s, i, sp, &j0, &j1);
			if (j1 <= j0)
				continue;
			out->runs++;
			if (j1 - j0 > out->longest)
				out->longest = j1 - j0;
		}
	out->waves = (out->runs + out->sms - 1) / out->sms;
	out->span = (s->nsteps + out->sms - 1) / out->sms;
	if (out->longest > out->span)
		out->span = out->longest;
}

/* ---- the backward pass (see traffic.h) ---- */

void
traffic_backward_dpass(const struct problem *p, struct traffic *out)
{
	uint64_t tq = (uint64_t)p->tq, dv = (uint64_t)p->dv;

	memset(out, 0, sizeof *out);
	out->hbm_read = 2 * tq * dv * (uint64_t)dtype_size(p->dtype);	/* O, dO */
	out->hbm_write = tq * 4;					/* D */
}

void
traffic_backward_step_through(const struct traffic_table *t,
    const struct schedule_tile *tile, enum traffic_bwd_stage stage,
    struct traffic *out)
{
	uint64_t R = (uint64_t)(tile->r1 - tile->r0);
	uint64_t C = (uint64_t)(tile->c1 - tile->c0);
	uint64_t d = (uint64_t)t->d, dv = (uint64_t)t->dv, e = (uint64_t)t->esize;
	uint64_t tq = (uint64_t)t->sched->tq;
	uint64_t q_i = R * d * e, kv_j = C * (d + dv) * e;
	uint64_t dq_i = R * d * 4;	/* the float32 accumulator */

	memset(out, 0, sizeof *out);
	/* LOAD: K_j, V_j once a key block, with dK_j = dV_j = 0 beside
	 * them; Q_i, dO_i, lse_i, D_i (a scores problem: the S tile). */
	if (tile->first_in_outer)
		out->hbm_read += kv_j;
	out->hbm_read += q_i + R * dv * e + R * 8;
	if (t->scores_mode)
		out->hbm_read += R * C * e;
	out->onchip = kv_j + C * (d + dv) * 4 + R * (d + dv) * e + R * 8;
	out->stored = tq * 8 + tq * d * 4;		/* lse, D, dQ */
	if (stage < TRAFFIC_BWD_SCORES)
		return;
	out->flops = 2 * R * C * d;			/* S = Q_i K_j^T */
	out->onchip += R * C * 4;			/* S, then P */
	if (stage < TRAFFIC_BWD_P)
		return;
	out->exps = R * C;				/* P = exp(S - lse) */
	if (stage < TRAFFIC_BWD_DV)
		return;
	out->flops += 2 * R * C * dv;			/* dV_j += P^T dO_i */
	if (stage < TRAFFIC_BWD_DP)
		return;
	out->flops += 2 * R * C * dv;			/* dP = dO_i V_j^T */
	out->onchip += R * C * 4;			/* dP, then dS */
	if (stage < TRAFFIC_BWD_DS)
		return;
	if (t->scores_mode)
		out->hbm_write += R * C * e;		/* the dS tile */
	if (stage < TRAFFIC_BWD_DQ)
		return;
	if (!t->scores_mode) {
		/* dQ_i += scale dS K_j: read, add, write back */
		if (!tile->first_in_row)
			out->hbm_read += dq_i;
		out->hbm_write += dq_i;
		out->flops += 2 * R * C * d;
		out->onchip += dq_i;
	}
	if (stage < TRAFFIC_BWD_DK)
		return;
	out->flops += 2 * R * C * d;			/* dK_j += scale dS^T Q_i */
	if (stage < TRAFFIC_BWD_WRITE)
		return;
	if (tile->i == t->sched->iend[tile->j] - 1)	/* dK_j, dV_j, once */
		out->hbm_write += kv_j;
}

void
traffic_backward_step(const struct traffic_table *t,
    const struct schedule_tile *tile, struct traffic *out)
{
	traffic_backward_step_through(t, tile, TRAFFIC_BWD_WRITE, out);
}

int
traffic_backward_init(struct traffic_table *t, const struct problem *p,
    const struct schedule *s, char *err, size_t errlen)
{
	struct schedule_tile tile;
	struct traffic one;
	long k;
	int o;

	if (table_new(t, p, s, 1, err, errlen) != 0)
		return -1;
	/* The D pass comes before every step. */
	traffic_backward_dpass(p, &t->total);
	for (o = 0; o < s->nouter; o++) {
		t->before[o] = t->total;
		for (k = s->first[o]; k < s->first[o + 1]; k++) {
			schedule_tile(s, k, &tile);
			traffic_backward_step(t, &tile, &one);
			add(&t->total, &one);
		}
	}
	t->before[s->nouter] = t->total;
	return 0;
}

void
traffic_standard_backward(const struct problem *p, struct traffic *out)
{
	uint64_t tq = (uint64_t)p->tq, tk = (uint64_t)p->tk;
	uint64_t d = (uint64_t)p->d, dv = (uint64_t)p->dv;
	uint64_t e = (uint64_t)dtype_size(p->dtype), tt = tq * tk;

	memset(out, 0, sizeof *out);
	/* dV = P^T dO; dP = dO V^T; dS from P and dP */
	out->hbm_read = (tt + tq * dv) + (tq * dv + tk * dv) + 2 * tt;
	out->hbm_write = tk * dv + tt + tt;
	out->flops = 2 * tt * (2 * dv);
	if (!p->scores_mode) {
		/* dQ = dS K; dK = dS^T Q */
		out->hbm_read += (tt + tk * d) + (tt + tq * d);
		out->hbm_write += tq * d + tk * d;
		out->flops += 2 * tt * (2 * d);
	}
	out->hbm_read *= e;
	out->hbm_write *= e;
	out->stored = 3 * tt * e;	/* P, dP, dS */
}
