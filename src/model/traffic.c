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

void
traffic_step(const struct traffic_table *t, const struct schedule_tile *tile,
    struct traffic *out)
{
	uint64_t R = (uint64_t)(tile->r1 - tile->r0);
	uint64_t C = (uint64_t)(tile->c1 - tile->c0);
	uint64_t d = (uint64_t)t->d, dv = (uint64_t)t->dv, e = (uint64_t)t->esize;
	uint64_t state = R * (dv + 2) * 4;	/* acc, m, l in float32 */
	uint64_t q_i = R * d * e, kv_j = C * (d + dv) * e;

	memset(out, 0, sizeof *out);
	if (t->scores_mode) {
		/* The S tile replaces Q_i and K_j; V_j is still needed. */
		q_i = 0;
		kv_j = C * dv * e;
		out->hbm_read += R * C * e;
	}
	if (t->sched->order == ORDER_FA2) {
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
		if (!tile->last_in_split)
			out->hbm_write += state;
		/* Between key blocks every row block's state waits in HBM. */
		out->stored = (uint64_t)t->sched->rows * (dv + 2) * 4;
	}
	if (tile->last_in_split && t->sched->splits > 1) {
		/* a range's partial, in float32, for the combine */
		out->partials = R * traffic_partial_bytes(t->sched->partials, t->dv);
		out->hbm_write += out->partials;
	} else if (tile->last_in_split)
		out->hbm_write += R * dv * e + R * 4;	/* O_i and lse_i */
	out->onchip = q_i + C * (d + dv) * e + R * C * 4 + state;
	out->flops = 2 * R * C * (d + dv);
	out->exps = R * C;
	out->rescale_exps = R;
}

int
traffic_init(struct traffic_table *t, const struct problem *p,
    const struct schedule *s, char *err, size_t errlen)
{
	struct schedule_tile tile;
	struct traffic one;
	long k;
	int o;

	memset(t, 0, sizeof *t);
	t->sched = s;
	t->d = p->d;
	t->dv = p->dv;
	t->esize = dtype_size(p->dtype);
	t->scores_mode = p->scores_mode;
	t->before = util_calloc((size_t)s->nouter + 1, sizeof *t->before,
	    "traffic", err, errlen);
	if (t->before == NULL)
		return -1;
	for (o = 0; o < s->nouter; o++) {
		t->before[o] = t->total;
		for (k = s->first[o]; k < s->first[o + 1]; k++) {
			schedule_tile(s, k, &tile);
			traffic_step(t, &tile, &one);
			add(&t->total, &one);
		}
	}
	t->before[s->nouter] = t->total;
	return 0;
}

void
traffic_free(struct traffic_table *t)
{
	free(t->before);
	memset(t, 0, sizeof *t);
}

void
traffic_upto(const struct traffic_table *t, long k, struct traffic *out)
{
	struct schedule_tile tile;
	struct traffic one = { 0 };
	long x;
	int o;

	memset(out, 0, sizeof *out);
	if (k < 0)
		return;
	/* Whole outer blocks from the table, then this block's steps. */
	schedule_tile(t->sched, k, &tile);
	o = t->sched->order == ORDER_FA2 ? tile.i : tile.j;
	*out = t->before[o];
	for (x = t->sched->first[o]; x <= k; x++) {
		schedule_tile(t->sched, x, &tile);
		traffic_step(t, &tile, &one);
		add(out, &one);
	}
	/* On-chip bytes are those of step k itself, not a running peak. */
	out->onchip = one.onchip;
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
