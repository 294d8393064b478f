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

int
varlen_forward(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, float *o, float *lse,
    struct varlen_counts *counts, long *tiles, char *err, size_t errlen)
{
	struct problem one;
	struct sim *sim;
	int b;

	if (packed_only(p, err, errlen) != 0)
		return -1;
	if (counts != NULL)
		memset(counts, 0, sizeof *counts);
	for (b = 0; b < p->nseq; b++) {
		problem_seq(p, b, &one);
		sim = sim_new(&one, t, rule, err, errlen);
		if (sim == NULL)
			return -1;
		if (sim_run(sim, NULL, NULL, o != NULL ? o + (size_t)p->cu_q[b] *
		    p->dv : NULL, lse != NULL ? lse + p->cu_q[b] : NULL) != 0) {
			sim_free(sim);
			return util_error(err, errlen, "sequence %d: out of memory",
			    b);
		}
		if (counts != NULL)
			counts_add(counts, &sim_traffic(sim)->total,
			    sim_schedule(sim)->nsteps);
		if (tiles != NULL)
			tiles[b] = sim_schedule(sim)->nsteps;
		sim_free(sim);
	}
	return 0;
}

int
varlen_reference(const struct problem *p, double *o, double *lse,
    char *err, size_t errlen)
{
	struct problem one;
	int b;

	if (packed_only(p, err, errlen) != 0)
		return -1;
	for (b = 0; b < p->nseq; b++) {
		problem_seq(p, b, &one);
		if (reference_attention(&one, o + (size_t)p->cu_q[b] * p->dv,
		    lse + p->cu_q[b], err, errlen) != 0)
			return -1;
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
