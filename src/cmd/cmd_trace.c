/* cmd_trace.c - `flashstep trace`: every step as text, CSV or JSONL. */
#include "config.h"

#include "cmd.h"
#include "app/fulltimeline.h"
#include "model/memory.h"
#include "app/setup.h"
#include "app/trace.h"
#include "model/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char trace_usage[] =
    "usage: flashstep trace [--format text|csv|jsonl] [--with-tiles]\n"
    "                       [--with-acc] [options]\n"
    "\n"
    "Prints every step of the simulator: the tile, and for each of its rows\n"
    "m_old, m_new, alpha, l_old and l_new; then the output O and lse.  JSONL\n"
    "is the interface for scripts (see flashstep(1)); CSV has one line per\n"
    "row of each step and no output section (use --output).\n"
    "\n"
    "With --backward it prints the backward pass's steps instead: for each,\n"
    "the tile, lse and D of its rows and the norms of the dQ, dK and dV rows\n"
    "it changed (CSV: a line per query row and one per key); then dQ, dK\n"
    "and dV.\n"
    "\n"
    "With --splits the steps run key range by key range, then the merges\n"
    "of the partials follow (text and JSONL; CSV has the steps only).\n"
    "\n"
    "With --seqlens a packed batch runs sequence after sequence, each its\n"
    "own steps, and every record names its sequence (seq).\n"
    "\n";

#define TRACE_GROUPS (OPT_PROBLEM | OPT_OUTFILES | OPT_BACKWARD | OPT_SPLIT)

struct trace_args {
	const char *format;
	int with_tiles, with_acc;
};

static int
set_format(void *ctx, const char *v, char *err, size_t errlen)
{
	if (trace_format_find(v) == NULL)
		return util_error(err, errlen, "--format must be text, csv or "
		    "jsonl, not '%s'", v);
	((struct trace_args *)ctx)->format = v;
	return 0;
}

static int
set_tiles(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct trace_args *)ctx)->with_tiles, v, err, errlen);
}

static int
set_acc(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct trace_args *)ctx)->with_acc, v, err, errlen);
}

static const struct options_entry trace_entries[] = {
	{ "format", "FMT", "text|csv|jsonl (default text)", set_format },
	{ "with-tiles", NULL, "add each tile's S and P (and dP, dS)", set_tiles },
	{ "with-acc", NULL, "add the accumulator rows (u, or o; dQ, dK, dV)",
	    set_acc },
	{ NULL, NULL, NULL, NULL },
};

/*
 * trace --backward: the forward runs inside fulltimeline_open (its O and lse
 * go to out and lse, for --output and --lse), then every backward step
 * is written, then the gradients, then the gradient files.
 */
static int
trace_backward(const struct options *o, struct setup *s, struct trace *t,
    float *out, float *lse, char *err, size_t errlen)
{
	const struct problem *p = &s->problem;
	struct backward_grads g = { 0 };
	struct fulltimeline b;
	int rc = -1;

	if (fulltimeline_open(o, s, &b, err, errlen) != 0)
		return -1;
	memcpy(out, b.o, (size_t)p->tq * p->dv * sizeof *out);
	memcpy(lse, b.lse, (size_t)p->tq * sizeof *lse);
	g.dq = util_calloc((size_t)p->tq * p->d + 1, sizeof(float), "dQ", err, errlen);
	g.dk = util_calloc((size_t)p->tk * p->d + 1, sizeof(float), "dK", err, errlen);
	g.dv = util_calloc((size_t)p->tk * p->dv, sizeof(float), "dV", err, errlen);
	if (g.dq == NULL || g.dk == NULL || g.dv == NULL)
		goto done;
	if ((p->scores_mode || o->grad_s != NULL) && (g.ds = util_calloc(
	    (size_t)p->tq * p->tk, sizeof(float), "dS", err, errlen)) == NULL)
		goto done;

	t->bwd = b.bwd;
	t->bwd_first = timeline_first(b.tl, timeline_find(b.tl, TIMELINE_BACKWARD));
	t->grad_output = b.dout_source;
	t->format->backward_begin(t, out, lse);
	if (backward_run(b.bwd, trace_backward_step, t, &g) != 0) {
		util_error(err, errlen, "%s", ferror(t->f) ?
		    "writing the trace failed" : "out of memory");
		goto done;
	}
	t->format->backward_end(t, &g);
	if (fflush(t->f) != 0 || ferror(t->f)) {
		util_error(err, errlen, "writing the trace failed");
		goto done;
	}
	if (backward_check_grads(b.bwd, &g, err, errlen) != 0)
		goto done;
	rc = fulltimeline_write(o, p, &g, err, errlen);
done:
	free(g.dq);
	free(g.dk);
	free(g.dv);
	free(g.ds);
	fulltimeline_close(&b);
	return rc;
}

/* The stdout error of a failed run, once (main() then finds it clean). */
static void
trace_failure(char *err, size_t errlen)
{
	if (ferror(stdout)) {
		snprintf(err, errlen, "writing standard output failed: %s",
		    strerror(errno));
		fflush(stdout);
		clearerr(stdout);
	} else
		snprintf(err, errlen, "out of memory");
}

/* A packed batch (--seqlens): each sequence a sim of its own (and, split,
 * a combine), traced in turn; O and lse packed as Q for --output and
 * --lse. */
static int
trace_varlen(const struct options *o, struct trace *t, char *err,
    size_t errlen)
{
	struct problem_spec spec = o->spec;
	struct problem p, one;
	struct sim *sim = NULL;
	struct combine *comb = NULL;
	float *out = NULL, *lse = NULL, *ob = NULL, *lb = NULL;
	int b, h, rc = -1;

	memset(&one, 0, sizeof one);
	if (o->backward)
		return util_error(err, errlen, "--seqlens: trace --backward of a "
		    "packed batch is not modelled (flashstep run --backward "
		    "runs it)");
	if (setup_check_outputs(o, err, errlen) != 0)
		return -1;
	setup_memory_spec(o, &spec);
	if (problem_build(&spec, &p, err, errlen) != 0)
		return -1;
	out = util_calloc((size_t)problem_rows(&p) * p.dv, sizeof *out, "O",
	    err, errlen);
	lse = util_calloc((size_t)problem_rows(&p), sizeof *lse, "lse", err,
	    errlen);
	ob = util_calloc((size_t)problem_rows(&p) * p.dv, sizeof *ob, "O", err,
	    errlen);
	lb = util_calloc((size_t)problem_rows(&p), sizeof *lb, "lse", err,
	    errlen);
	if (out == NULL || lse == NULL || ob == NULL || lb == NULL)
		goto done;
	t->batch = &p;
	for (b = 0; b < p.nseq; b++) {
		if (problem_seq_all(&p, b, &one, err, errlen) != 0)
			goto done;
		sim = sim_new_split(&one, &o->tiling, &o->split, &o->rule, err,
		    errlen);
		if (sim == NULL || (o->split.splits > 1 && (comb =
		    combine_new(sim, &o->combine, err, errlen)) == NULL))
			goto done;
		t->sim = sim;
		t->combine = comb;
		t->seq = b;
		t->format->begin(t);
		if (sim_run(sim, trace_step, t, ob, lb) != 0 || (comb != NULL &&
		    combine_run(comb, trace_merge, t, ob, lb) != 0)) {
			trace_failure(err, errlen);
			goto done;
		}
		t->format->end(t, ob, lb);
		/* Each head's rows of the sequence to their packed places. */
		for (h = 0; h < (p.heads > 0 ? p.heads : 1); h++) {
			memcpy(out + problem_packed_row(&p, h, p.cu_q[b]) * p.dv, ob +
			    (size_t)h * one.tq * p.dv, (size_t)one.tq * p.dv *
			    sizeof *out);
			memcpy(lse + problem_packed_row(&p, h, p.cu_q[b]), lb +
			    (size_t)h * one.tq, (size_t)one.tq * sizeof *lse);
		}
		t->combine = NULL;
		combine_free(comb);
		comb = NULL;
		sim_free(sim);
		sim = NULL;
		problem_seq_free(&one);
	}
	if (setup_write_outputs(o, &p, out, lse, err, errlen) != 0)
		goto done;
	rc = 0;
done:
	t->sim = NULL;
	t->combine = NULL;
	t->batch = NULL;
	combine_free(comb);
	sim_free(sim);
	problem_seq_free(&one);
	free(out);
	free(lse);
	free(ob);
	free(lb);
	problem_free(&p);
	return rc;
}

int
cmd_trace(int argc, char **argv)
{
	struct trace_args a = { "text", 0, 0 };
	struct options o;
	struct setup s;
	struct trace t;
	struct combine *comb = NULL;
	const struct problem *p;
	float *out = NULL, *lse = NULL;
	char err[512];
	int rc = CMD_USAGE;

	rc = cmd_parse("trace", trace_usage, argc, argv, TRACE_GROUPS,
	    trace_entries, &a, &o);
	if (rc >= 0) {
		options_free(&o);
		return rc;
	}
	o.spec.memory_parts = MEMORY_SIM | MEMORY_RUN;
	if (o.spec.seqlens_q != NULL || o.spec.seqlens_k != NULL) {
		memset(&t, 0, sizeof t);
		t.f = stdout;
		t.format = trace_format_find(a.format);
		t.with_tiles = a.with_tiles;
		t.with_acc = a.with_acc;
		rc = trace_varlen(&o, &t, err, sizeof err) == 0 ? CMD_OK :
		    CMD_USAGE;
		if (rc != CMD_OK)
			fprintf(stderr, "flashstep trace: %s\n", err);
		options_free(&o);
		return rc;
	}
	if (setup_open(&o, &s, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep trace: %s\n", err);
		options_free(&o);
		return CMD_USAGE;
	}
	p = &s.problem;
	if (sim_schedule(s.sim)->splits > 1 &&
	    (comb = combine_new(s.sim, &o.combine, err, sizeof err)) == NULL)
		goto fail;
	out = util_calloc((size_t)problem_rows(p) * p->dv, sizeof *out, "O", err,
	    sizeof err);
	lse = util_calloc((size_t)problem_rows(p), sizeof *lse, "lse", err,
	    sizeof err);
	if (out == NULL || lse == NULL)
		goto fail;

	memset(&t, 0, sizeof t);
	t.f = stdout;
	t.format = trace_format_find(a.format);
	t.sim = s.sim;
	t.combine = comb;
	t.with_tiles = a.with_tiles;
	t.with_acc = a.with_acc;
	if (o.backward) {
		if (trace_backward(&o, &s, &t, out, lse, err, sizeof err) != 0)
			goto fail;
	} else {
		t.format->begin(&t);
		if (sim_run(s.sim, trace_step, &t, out, lse) != 0 ||
		    (comb != NULL &&
		    combine_run(comb, trace_merge, &t, out, lse) != 0)) {
			/* trace_step stops at the first write that failed: errno
			 * is still its reason.  Reported here, once: main() then
			 * finds stdout clean. */
			trace_failure(err, sizeof err);
			goto fail;
		}
		/* A trace that stdout lost is reported by main(), after this. */
		t.format->end(&t, out, lse);
	}
	if (setup_write_outputs(&o, p, out, lse, err, sizeof err) != 0)
		goto fail;
	rc = CMD_OK;
	goto done;
fail:
	fprintf(stderr, "flashstep trace: %s\n", err);
	rc = CMD_USAGE;
done:
	free(out);
	free(lse);
	combine_free(comb);
	setup_close(&s);
	options_free(&o);
	return rc;
}
