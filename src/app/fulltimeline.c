/* fulltimeline.c - dO, the forward's results, the backward, its files. */
#include "config.h"

#include "fulltimeline.h"
#include "model/npy.h"
#include "npyout.h"
#include "outfile.h"
#include "model/util.h"

#include <stdlib.h>
#include <string.h>

/* The gradient files of o, with their option names. */
struct gradfile {
	const char *option, *path;
};

static void
gradfiles(const struct options *o, struct gradfile f[4])
{
	f[0] = (struct gradfile){ "--grad-q", o->grad_q };
	f[1] = (struct gradfile){ "--grad-k", o->grad_k };
	f[2] = (struct gradfile){ "--grad-v", o->grad_v };
	f[3] = (struct gradfile){ "--grad-scores", o->grad_s };
}

/* The forward's run, as progress: what it is for, in words. */
struct forward_progress {
	const struct fulltimeline_progress *pr;
	const char *what;
};

static int
forward_progress(void *ctx, long done, long total)
{
	const struct forward_progress *f = ctx;

	return f->pr->fn(f->pr->ctx, f->what, done, total) != 0;
}

int
fulltimeline_build(const struct options *o, const struct problem *p,
    struct sim *sim, struct fulltimeline *b, char *err, size_t errlen)
{
	return fulltimeline_build_progress(o, p, sim, b, NULL, err, errlen);
}

int
fulltimeline_build_progress(const struct options *o, const struct problem *p,
    struct sim *sim, struct fulltimeline *b,
    const struct fulltimeline_progress *pr, char *err, size_t errlen)
{
	struct backward_input in;
	struct forward_progress fp;
	size_t rows = (size_t)problem_rows(p);
	int r;

	memset(b, 0, sizeof *b);
	if (o->backward && rows != (size_t)p->tq)
		return util_error(err, errlen, "--backward runs one head: the "
		    "backward of grouped heads is not modelled (drop --heads)");
	if (sim_schedule(sim)->splits > 1 &&
	    (b->comb = combine_new(sim, &o->combine, err, errlen)) == NULL)
		goto fail;
	/* The combine merges what the forward left, and the backward
	 * starts from O and lse: both need the forward run first. */
	if (b->comb != NULL || o->backward) {
		b->o = util_calloc(rows * (size_t)p->dv, sizeof(float), "O", err,
		    errlen);
		b->lse = util_calloc(rows, sizeof(float), "lse", err, errlen);
		b->m = util_calloc(rows, sizeof(float), "m", err, errlen);
		if (b->o == NULL || b->lse == NULL || b->m == NULL)
			goto fail;
		fp.pr = pr;
		fp.what = o->backward ? b->comb != NULL ? "the forward and its "
		    "combine, run to their ends: the backward starts from their O "
		    "and lse" : "the forward, run to its end: the backward starts "
		    "from its O and lse" : "the forward, run to its end: the "
		    "combine merges the partials it leaves";
		r = backward_forward_progress(sim, b->comb, b->o, b->lse, b->m,
		    pr != NULL ? forward_progress : NULL, &fp);
		if (r > 0) {
			util_error(err, errlen, "stopped while building the "
			    "timeline (running %s)", fp.what);
			goto fail;
		}
		if (r != 0) {
			util_error(err, errlen, "the forward pass: out of memory");
			goto fail;
		}
	}
	if (o->backward) {
		if (problem_grad_output(&o->spec, p, &b->dout, err, errlen) != 0)
			goto fail;
		b->dout_source = o->spec.dout.path != NULL ? o->spec.dout.path :
		    o->spec.dout.data != NULL ? "given inline" :
		    "N(0,1) from the seed";
		in.o = b->o;
		in.lse = b->lse;
		in.m = b->m;
		in.dout = b->dout;
		if (pr != NULL && pr->fn(pr->ctx, "the backward: its schedule, "
		    "D for every row and its counters", 0, 0) != 0) {
			util_error(err, errlen, "stopped while building the "
			    "timeline (the backward)");
			goto fail;
		}
		b->bwd = backward_new(p, &o->tiling, &in, o->grad_bug, err, errlen);
		if (b->bwd == NULL)
			goto fail;
	}
	if ((b->tl = timeline_new(err, errlen)) == NULL ||
	    timeline_add(b->tl, &timeline_forward, sim, err, errlen) != 0 ||
	    (b->comb != NULL &&
	    timeline_add(b->tl, &timeline_combine, b->comb, err, errlen) != 0) ||
	    (b->bwd != NULL &&
	    timeline_add(b->tl, &timeline_backward, b->bwd, err, errlen) != 0))
		goto fail;
	return 0;
fail:
	fulltimeline_close(b);
	return -1;
}

int
fulltimeline_open(const struct options *o, struct setup *s, struct fulltimeline *b,
    char *err, size_t errlen)
{
	const struct problem *p = &s->problem;
	struct gradfile f[4];
	int i;

	memset(b, 0, sizeof *b);
	gradfiles(o, f);
	for (i = 0; i < 4; i++) {
		if (f[i].path == NULL)
			continue;
		if (i < 2 && p->scores_mode)
			return util_error(err, errlen, "%s: a scores problem has "
			    "no Q or K; its gradient is dS (--grad-scores)",
			    f[i].option);
	}
	/* The paths themselves were checked by setup_open. */
	return fulltimeline_build(o, p, s->sim, b, err, errlen);
}

void
fulltimeline_close(struct fulltimeline *b)
{
	timeline_free(b->tl);
	backward_free(b->bwd);
	combine_free(b->comb);
	free(b->dout);
	free(b->o);
	free(b->lse);
	free(b->m);
	memset(b, 0, sizeof *b);
}

void
fulltimeline_describe(FILE *f, const struct fulltimeline *b)
{
	const struct schedule *s = backward_schedule(b->bwd);
	long first = timeline_first(b->tl, timeline_find(b->tl, TIMELINE_BACKWARD));

	fprintf(f, "backward: key blocks outside, query blocks inside: Tc=%d x "
	    "Tr=%d tiles, %ld steps (timeline steps %ld-%ld); bug=%s; dO %s\n",
	    s->tc, s->tr, s->nsteps, first, first + s->nsteps - 1,
	    backward_bug_name(backward_bug(b->bwd)), b->dout_source);
}

/* The gradient files, all or none (outfile.h): one result, one commit. */
int
fulltimeline_write(const struct options *o, const struct problem *p,
    const struct backward_grads *g, char *err, size_t errlen)
{
	struct gradfile f[4];
	struct outfile_set set;
	const float *data[4] = { g->dq, g->dk, g->dv, g->ds };
	long shape[4][2] = {
		{ p->tq, p->d }, { p->tk, p->d }, { p->tk, p->dv }, { p->tq, p->tk },
	};
	int slot[4], i, any = 0;

	gradfiles(o, f);
	outfile_init(&set);
	for (i = 0; i < 4; i++) {
		slot[i] = -1;
		if (f[i].path == NULL || data[i] == NULL)
			continue;
		if ((slot[i] = outfile_add(&set, f[i].path, err, errlen)) < 0)
			goto fail;
		any = 1;
	}
	if (!any) {
		outfile_abort(&set);
		return 0;
	}
	if (outfile_begin(&set, err, errlen) != 0)
		return -1;
	for (i = 0; i < 4; i++)
		if (slot[i] >= 0 && npy_write_to(&set, slot[i], data[i], 2,
		    shape[i], err, errlen) != 0)
			goto fail;
	return outfile_commit(&set, err, errlen);
fail:
	outfile_abort(&set);
	return -1;
}
