/* cmd_run_varlen.c - `flashstep run --seqlens` (cmd_run_varlen.h). */
#include "config.h"

#include "cmd_run_varlen.h"
#include "app/setup.h"
#include "model/compare.h"
#include "model/memory.h"
#include "model/util.h"
#include "model/varlen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a packed run does not do, refused by name before any work. */
static int
refuse(const struct options *o, char *err, size_t errlen)
{
	static const char *const unwritten[] = {
		"grad-q", "grad-k", "grad-v", "grad-scores",
	};
	size_t i;

	if (o->split.splits > 1 && o->backward)
		return util_error(err, errlen, "--seqlens: the backward of a "
		    "split-KV (--splits) run of a packed batch is not modelled");
	for (i = 0; i < sizeof unwritten / sizeof unwritten[0]; i++)
		if (options_given(o, unwritten[i]))
			return util_error(err, errlen, "--seqlens: --%s is not "
			    "written for a packed batch", unwritten[i]);
	return 0;
}

/* The error of rows [r0, r1) of got (width w) against ref. */
static double
rows_error(const float *got, const double *ref, int r0, int r1, int w)
{
	struct compare_result c;

	compare_arrays(got + (size_t)r0 * w, ref + (size_t)r0 * w,
	    (long)(r1 - r0) * w, 0, 0, &c);
	return c.max_abs;
}

/* The error of sequence b's rows of O (or lse: w = 1) in every query
 * head of packed batch p: the largest of rows_error's. */
static double
seq_error(const struct problem *p, const float *got, const double *ref,
    int b, int w)
{
	double worst = 0, e;
	int h;

	for (h = 0; h < (p->heads > 0 ? p->heads : 1); h++) {
		e = rows_error(got, ref, (int)problem_packed_row(p, h,
		    p->cu_q[b]), (int)problem_packed_row(p, h, p->cu_q[b + 1]), w);
		worst = e > worst ? e : worst;
	}
	return worst;
}

static void
print_counts(const char *what, const struct varlen_counts *c)
{
	printf("\n  %s, summed over the sequences:\n", what);
	printf("    tiles %ld, matmul FLOPs %llu, exp of scores %llu, HBM read "
	    "%llu B, written %llu B\n", c->tiles,
	    (unsigned long long)c->total.flops,
	    (unsigned long long)c->total.exps,
	    (unsigned long long)c->total.hbm_read,
	    (unsigned long long)c->total.hbm_write);
}

/* The backward of every sequence, each one's gradient errors. */
static int
run_varlen_backward(const struct options *o, const struct problem *p,
    char *err, size_t errlen)
{
	struct backward_grads g = { NULL, NULL, NULL, NULL };
	struct varlen_counts vc;
	double *rq = NULL, *rk = NULL, *rv = NULL;
	float *dout = NULL;
	int b, rc = -1;

	if (problem_grad_output(&o->spec, p, &dout, err, errlen) != 0)
		return -1;
	g.dq = util_calloc((size_t)p->tq * p->d, sizeof *g.dq, "dQ", err, errlen);
	g.dk = util_calloc((size_t)p->tk * p->d, sizeof *g.dk, "dK", err, errlen);
	g.dv = util_calloc((size_t)p->tk * p->dv, sizeof *g.dv, "dV", err, errlen);
	rq = util_calloc((size_t)p->tq * p->d, sizeof *rq, "dQ", err, errlen);
	rk = util_calloc((size_t)p->tk * p->d, sizeof *rk, "dK", err, errlen);
	rv = util_calloc((size_t)p->tk * p->dv, sizeof *rv, "dV", err, errlen);
	if (g.dq == NULL || g.dk == NULL || g.dv == NULL || rq == NULL ||
	    rk == NULL || rv == NULL)
		goto done;
	if (varlen_backward(p, &o->tiling, &o->rule, dout, o->grad_bug, &g, &vc,
	    err, errlen) != 0 ||
	    varlen_gradref(p, dout, rq, rk, rv, err, errlen) != 0)
		goto done;
	printf("\nbackward, max abs error against the double gradients:\n");
	printf("  %4s %11s %11s %11s\n", "seq", "dQ", "dK", "dV");
	for (b = 0; b < p->nseq; b++)
		printf("  %4d %11.3g %11.3g %11.3g\n", b,
		    rows_error(g.dq, rq, p->cu_q[b], p->cu_q[b + 1], p->d),
		    rows_error(g.dk, rk, p->cu_k[b], p->cu_k[b + 1], p->d),
		    rows_error(g.dv, rv, p->cu_k[b], p->cu_k[b + 1], p->dv));
	print_counts("backward counters", &vc);
	rc = 0;
done:
	free(dout);
	free(g.dq);
	free(g.dk);
	free(g.dv);
	free(rq);
	free(rk);
	free(rv);
	return rc;
}

int
run_varlen(const struct options *o, char *err, size_t errlen)
{
	struct problem_spec spec = o->spec;
	struct varlen_counts vc;
	struct problem p;
	float *out = NULL, *lse = NULL;
	double *ref = NULL, *ref_lse = NULL;
	long *tiles = NULL;
	size_t rows;
	int b, rc = -1;

	if (refuse(o, err, errlen) != 0 ||
	    setup_check_outputs(o, err, errlen) != 0)
		return -1;
	setup_memory_spec(o, &spec);
	if (problem_build(&spec, &p, err, errlen) != 0)
		return -1;
	rows = (size_t)problem_rows(&p);
	out = util_calloc(rows * p.dv, sizeof *out, "O", err, errlen);
	lse = util_calloc(rows, sizeof *lse, "lse", err, errlen);
	ref = util_calloc(rows * p.dv, sizeof *ref, "reference", err, errlen);
	ref_lse = util_calloc(rows, sizeof *ref_lse, "reference", err, errlen);
	tiles = util_calloc((size_t)p.nseq, sizeof *tiles, "tiles", err, errlen);
	if (out == NULL || lse == NULL || ref == NULL || ref_lse == NULL ||
	    tiles == NULL)
		goto done;
	if (varlen_forward_split(&p, &o->tiling, &o->split, &o->combine,
	    &o->rule, out, lse, &vc, tiles, err, errlen) != 0 ||
	    varlen_reference(&p, ref, ref_lse, err, errlen) != 0)
		goto done;

	printf("problem:  a packed batch of %d sequences, Tq=%d Tk=%d in all, "
	    "d=%d dv=%d scale=%.6g causal=%s dtype=%s (%s)\n", p.nseq, p.tq,
	    p.tk, p.d, p.dv, (double)p.scale, p.causal ? "yes" : "no",
	    dtype_name(p.dtype), p.source);
	if (p.heads > 1)
		printf("heads:    H=%d query heads on G=%d K/V heads, each packed "
		    "alike, head after head\n", p.heads, p.kv_heads);
	if (p.paged.page_size > 0)
		printf("paged:    pages of %d keys, %d in one pool, sequence b "
		    "reading ceil(Tk_b/%d) of them through its own table\n",
		    p.paged.page_size, p.paged.pool, p.paged.page_size);
	printf("schedule: Br=%d Bc=%d, order %s, each sequence its own tiles "
	    "(none crosses a boundary)\n", o->tiling.br, o->tiling.bc,
	    schedule_order_name(o->tiling.order));
	if (o->split.splits > 1)
		printf("split-KV: each sequence's row blocks in %d key ranges, "
		    "their partials (%s) merged %s within the sequence\n",
		    o->split.splits, combine_form_name(o->split.partials),
		    combine_order_name(o->combine.order));
	printf("\nforward, max abs error against the double reference:\n");
	printf("  %4s %8s %8s %6s %11s %11s\n", "seq", "Tq_b", "Tk_b", "tiles",
	    "O", "lse");
	for (b = 0; b < p.nseq; b++)
		printf("  %4d %8d %8d %6ld %11.3g %11.3g\n", b, p.cu_q[b + 1] -
		    p.cu_q[b], p.cu_k[b + 1] - p.cu_k[b], tiles[b],
		    seq_error(&p, out, ref, b, p.dv), seq_error(&p, lse, ref_lse,
		    b, 1));
	print_counts("forward counters", &vc);
	if (o->backward && run_varlen_backward(o, &p, err, errlen) != 0)
		goto done;
	if (setup_write_outputs(o, &p, out, lse, err, errlen) != 0)
		goto done;
	rc = 0;
done:
	free(out);
	free(lse);
	free(ref);
	free(ref_lse);
	free(tiles);
	problem_free(&p);
	return rc;
}
