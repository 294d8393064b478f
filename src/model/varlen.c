/* varlen.c - a packed batch run sequence by sequence (varlen.h). */
#include "config.h"

#include "varlen.h"
#include "gradref.h"
#include "reference.h"
#include "sim.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static int
packed_only(const struct problem *p, char *err, size_t errlen)
{
	if (p->nseq <= 0)
		return util_error(err, errlen, "not a packed batch (no --seqlens)");
	return 0;
}

/* Adds one sequence's counters to the batch's: the peaks are maxima. */
static void
counts_add(struct varlen_counts *c, const struct traffic *t, long tiles)
{
	struct traffic *s = &c->total;

	s->hbm_read += t->hbm_read;
	s->hbm_write += t->hbm_write;
	s->onchip = t->onchip > s->onchip ? t->onchip : s->onchip;
	s->stored = t->stored > s->stored ? t->stored : s->stored;
	s->flops += t->flops;
	s->exps += t->exps;
	s->rescale_exps += t->rescale_exps;
	s->kv_read += t->kv_read;
	s->partials += t->partials;
	c->tiles += tiles;
}

/* Rows of one sequence's heads (heads of n rows, width w, at from) to
 * their places in the packed batch p's array to (heads of p->tq rows,
 * or p->tk when keys): sequence rows from r0. */
static void
scatter_rows(const float *from, float *to, int heads, int total, int r0,
    int n, int w)
{
	int h;

	for (h = 0; h < heads; h++)
		memcpy(to + ((size_t)h * total + r0) * w, from + (size_t)h * n * w,
		    (size_t)n * w * sizeof *to);
}

static int
heads_of(const struct problem *p)
{
	return p->heads > 0 ? p->heads : 1;
}

int
varlen_forward(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, float *o, float *lse,
    struct varlen_counts *counts, long *tiles, char *err, size_t errlen)
{
	return varlen_forward_split(p, t, NULL, NULL, rule, o, lse, counts,
	    tiles, err, errlen);
}

int
varlen_forward_split(const struct problem *p, const struct tiling *t,
    const struct split_plan *sp, const struct combine_rule *cr,
    const struct online_rule *rule, float *o, float *lse,
    struct varlen_counts *counts, long *tiles, char *err, size_t errlen)
{
	const int heads = heads_of(p);
	const int split = sp != NULL && sp->splits > 1;
	struct problem one;
	struct sim *sim = NULL;
	struct combine *comb = NULL;
	struct traffic ct;
	float *ob = NULL, *lb = NULL;
	int b, rc = -1;

	if (packed_only(p, err, errlen) != 0)
		return -1;
	if (counts != NULL)
		memset(counts, 0, sizeof *counts);
	memset(&one, 0, sizeof one);
	for (b = 0; b < p->nseq; b++) {
		const int n = p->cu_q[b + 1] - p->cu_q[b];

		if (problem_seq_all(p, b, &one, err, errlen) != 0)
			goto done;
		ob = util_calloc((size_t)heads * n * p->dv, sizeof *ob, "O", err,
		    errlen);
		lb = util_calloc((size_t)heads * n, sizeof *lb, "lse", err, errlen);
		sim = ob != NULL && lb != NULL ? sim_new_split(&one, t, split ? sp :
		    NULL, rule, err, errlen) : NULL;
		if (sim == NULL || (split && (comb = combine_new(sim, cr, err,
		    errlen)) == NULL))
			goto done;
		if (sim_run(sim, NULL, NULL, ob, lb) != 0 || (comb != NULL &&
		    combine_run(comb, NULL, NULL, ob, lb) != 0)) {
			util_error(err, errlen, "sequence %d: out of memory", b);
			goto done;
		}
		if (o != NULL)
			scatter_rows(ob, o, heads, p->tq, p->cu_q[b], n, p->dv);
		if (lse != NULL)
			scatter_rows(lb, lse, heads, p->tq, p->cu_q[b], n, 1);
		if (counts != NULL)
			counts_add(counts, &sim_traffic(sim)->total,
			    sim_schedule(sim)->nsteps);
		if (counts != NULL && comb != NULL) {
			combine_traffic(comb, &ct);
			counts_add(counts, &ct, 0);
		}
		if (tiles != NULL)
			tiles[b] = sim_schedule(sim)->nsteps;
		combine_free(comb);
		comb = NULL;
		sim_free(sim);
		sim = NULL;
		free(ob);
		free(lb);
		ob = lb = NULL;
		problem_seq_free(&one);
	}
	rc = 0;
done:
	combine_free(comb);
	sim_free(sim);
	free(ob);
	free(lb);
	problem_seq_free(&one);
	return rc;
}

int
varlen_reference(const struct problem *p, double *o, double *lse,
    char *err, size_t errlen)
{
	struct problem head, one;
	int b, h;

	if (packed_only(p, err, errlen) != 0)
		return -1;
	for (h = 0; h < heads_of(p); h++) {
		problem_head(p, h, &head);
		for (b = 0; b < p->nseq; b++) {
			problem_seq(&head, b, &one);
			if (reference_attention(&one, o + problem_packed_row(p, h,
			    p->cu_q[b]) * p->dv, lse + problem_packed_row(p, h,
			    p->cu_q[b]), err, errlen) != 0)
				return -1;
		}
	}
	return 0;
}

/* Sequence one's forward and backward, its gradients into g. */
static int
backward_one(const struct problem *one, const struct tiling *t,
    const struct online_rule *rule, const float *dout, enum backward_bug bug,
    const struct backward_grads *g, struct varlen_counts *counts, char *err,
    size_t errlen)
{
	struct backward_input in;
	struct backward *bw = NULL;
	struct sim *sim;
	float *o, *lse, *m;
	int rc = -1;

	o = util_calloc((size_t)one->tq * one->dv, sizeof *o, "O", err, errlen);
	lse = util_calloc((size_t)one->tq, sizeof *lse, "lse", err, errlen);
	m = util_calloc((size_t)one->tq, sizeof *m, "m", err, errlen);
	sim = o != NULL && lse != NULL && m != NULL ?
	    sim_new(one, t, rule, err, errlen) : NULL;
	if (sim == NULL)
		goto done;
	if (backward_forward(sim, NULL, o, lse, m) != 0) {
		util_error(err, errlen, "the forward: out of memory");
		goto done;
	}
	in.o = o;
	in.lse = lse;
	in.m = m;
	in.dout = dout;
	bw = backward_new(one, t, &in, bug, err, errlen);
	if (bw == NULL)
		goto done;
	if (backward_run(bw, NULL, NULL, g) != 0) {
		util_error(err, errlen, "the backward: out of memory");
		goto done;
	}
	if (backward_check_grads(bw, g, err, errlen) != 0)
		goto done;
	if (counts != NULL)
		counts_add(counts, &backward_traffic(bw)->total,
		    backward_steps(bw));
	rc = 0;
done:
	backward_free(bw);
	sim_free(sim);
	free(o);
	free(lse);
	free(m);
	return rc;
}

int
varlen_backward(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, const float *dout, enum backward_bug bug,
    const struct backward_grads *g, struct varlen_counts *counts, char *err,
    size_t errlen)
{
	struct backward_grads gb;
	struct problem one;
	size_t q0, k0;
	int b;

	if (packed_only(p, err, errlen) != 0)
		return -1;
	if (heads_of(p) > 1)
		return util_error(err, errlen, "--seqlens: the backward of "
		    "grouped heads is not modelled");
	if (g->ds != NULL)
		return util_error(err, errlen, "--seqlens: a packed batch has no "
		    "one dS matrix (each sequence's S is Tq_b x Tk_b)");
	if (counts != NULL)
		memset(counts, 0, sizeof *counts);
	for (b = 0; b < p->nseq; b++) {
		problem_seq(p, b, &one);
		q0 = (size_t)p->cu_q[b];
		k0 = (size_t)p->cu_k[b];
		gb.dq = g->dq != NULL ? g->dq + q0 * p->d : NULL;
		gb.dk = g->dk != NULL ? g->dk + k0 * p->d : NULL;
		gb.dv = g->dv != NULL ? g->dv + k0 * p->dv : NULL;
		gb.ds = NULL;
		if (backward_one(&one, t, rule, dout + q0 * p->dv, bug, &gb,
		    counts, err, errlen) != 0)
			return -1;
	}
	return 0;
}

int
varlen_gradref(const struct problem *p, const float *dout, double *dq,
    double *dk, double *dv, char *err, size_t errlen)
{
	struct problem one;
	size_t q0, k0;
	int b;

	if (packed_only(p, err, errlen) != 0)
		return -1;
	if (heads_of(p) > 1)
		return util_error(err, errlen, "--seqlens: the backward of "
		    "grouped heads is not modelled");
	for (b = 0; b < p->nseq; b++) {
		problem_seq(p, b, &one);
		q0 = (size_t)p->cu_q[b];
		k0 = (size_t)p->cu_k[b];
		if (gradref_gradients(&one, dout + q0 * p->dv, dq + q0 * p->d,
		    dk + k0 * p->d, dv + k0 * p->dv, NULL, err, errlen) != 0)
			return -1;
	}
	return 0;
}
