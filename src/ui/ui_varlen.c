/*
 * ui_varlen.c - a packed batch (--seqlens) in the view, the way flash-
 * attention's varlen kernel runs it: each sequence its own tiles, no
 * tile crossing a boundary.  Sequence b is its own problem (problem_seq:
 * a view of the packed Q, K and V, its masks bottom-right in it) with
 * its own sim, and the timeline holds one forward segment per sequence
 * in order:
 *
 *     global step  0 .. F0-1        sequence 0's steps
 *                  F0 .. F0+F1-1    sequence 1's
 *                  ...
 *
 * so n, p, g, Home and End walk the batch as one run, and where global
 * step g lies (timeline_locate) is (sequence, its local step).  The
 * view's other panes read ui->sim and UI_PROBLEM: they show the current
 * sequence as they show an unpacked problem; ui_varlen_follow keeps
 * ui->sim on the segment the reader stands in.  The heatmap shows the
 * packed matrix whole from one summary per diagonal block: the blocks
 * off the diagonal (queries of one sequence, keys of another) are never
 * computed, so nothing summarizes them.  The view model only: no curses.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
ui_varlen_free(struct ui_varlen *vl)
{
	int b;

	if (vl->sims != NULL)
		for (b = 0; b < vl->nseq; b++)
			sim_free(vl->sims[b]);
	if (vl->heat != NULL)
		for (b = 0; b < vl->nseq; b++)
			heatmap_free(&vl->heat[b]);
	free(vl->sims);
	free(vl->heat);
	free(vl->seqs);
	/* The texts outlive a rebuild: the new options may point into them. */
	vl->sims = NULL;
	vl->heat = NULL;
	vl->seqs = NULL;
	vl->nseq = vl->seq = vl->heat_ok = 0;
}

/* The texts go with the view (ui_free), not with a rebuild. */
static void
ui_varlen_free_texts(struct ui_varlen *vl)
{
	int i;

	for (i = 0; i < vl->ntexts; i++)
		free(vl->texts[i]);
	free(vl->texts);
	vl->texts = NULL;
	vl->ntexts = 0;
}

void
ui_varlen_release(struct ui_varlen *vl)
{
	ui_varlen_free(vl);
	ui_varlen_free_texts(vl);
}

int
ui_varlen_build(const struct options *o, const struct problem *p,
    struct ui_varlen *vl, struct fulltimeline *line, char *err,
    size_t errlen)
{
	struct ui_varlen nv;
	char herr[160];
	int b, cells;

	memset(line, 0, sizeof *line);
	memset(&nv, 0, sizeof nv);
	if (o->backward)
		return util_error(err, errlen, "--seqlens with --backward: the "
		    "view steps a packed batch's forward only (`flashstep run "
		    "--backward` takes both)");
	if (o->split.splits > 1)
		return util_error(err, errlen, "--seqlens with --splits: split-KV "
		    "of a packed batch is not modelled (drop --splits)");
	nv.nseq = p->nseq;
	nv.seqs = util_calloc((size_t)p->nseq, sizeof *nv.seqs, "sequences",
	    err, errlen);
	nv.sims = nv.seqs != NULL ? util_calloc((size_t)p->nseq,
	    sizeof *nv.sims, "sims", err, errlen) : NULL;
	nv.heat = nv.sims != NULL ? util_calloc((size_t)p->nseq,
	    sizeof *nv.heat, "heatmaps", err, errlen) : NULL;
	if (nv.heat == NULL)
		goto fail;
	/* The summaries share the one picture: fewer cells each when there
	 * are many sequences (at least 8 per axis). */
	cells = HEATMAP_MAX_CELLS / p->nseq;
	cells = cells < 8 ? 8 : cells;
	nv.heat_ok = 1;
	for (b = 0; b < p->nseq; b++) {
		problem_seq(p, b, &nv.seqs[b]);
		nv.sims[b] = sim_new(&nv.seqs[b], &o->tiling, &o->rule, err,
		    errlen);
		if (nv.sims[b] == NULL) {
			char why[400];

			snprintf(why, sizeof why, "%s", err);
			util_error(err, errlen, "sequence %d: %s", b, why);
			goto fail;
		}
		if (heatmap_init(&nv.heat[b], &nv.seqs[b], cells, herr,
		    sizeof herr) != 0)
			nv.heat_ok = 0;		/* the pane says (no heatmap) */
	}
	if ((line->tl = timeline_new(err, errlen)) == NULL)
		goto fail;
	for (b = 0; b < p->nseq; b++)
		if (timeline_add(line->tl, &timeline_forward, nv.sims[b], err,
		    errlen) != 0)
			goto fail;
	nv.texts = vl->texts;		/* kept across rebuilds */
	nv.ntexts = vl->ntexts;
	*vl = nv;
	return 0;
fail:
	fulltimeline_close(line);
	ui_varlen_free(&nv);
	return -1;
}

int
ui_varlen_follow(struct ui *ui)
{
	struct timeline_pos pos;
	int was = ui->vl.seq;

	if (ui->vl.nseq == 0)
		return 0;
	timeline_position(ui->line.tl, &pos);
	ui->vl.seq = pos.seg;
	ui->sim = ui->vl.sims[pos.seg];
	return pos.seg != was;
}

/* The b with cu[b] <= x < cu[b + 1] (cu ascending), or -1. */
static int
ui_varlen_find(const int *cu, int n, int x)
{
	int lo = 0, hi = n - 1, mid;

	if (n <= 0 || x < cu[0] || x >= cu[n])
		return -1;
	while (lo < hi) {
		mid = (lo + hi + 1) / 2;
		if (cu[mid] <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int
ui_varlen_seq_of_row(const struct ui *ui, int r)
{
	const struct problem *p = UI_BUILT(ui);

	return ui_varlen_find(p->cu_q, p->nseq, r);
}

int
ui_varlen_seq_of_key(const struct ui *ui, int c)
{
	const struct problem *p = UI_BUILT(ui);

	return ui_varlen_find(p->cu_k, p->nseq, c);
}

int
ui_varlen_heat_complete(const struct ui *ui)
{
	int b;

	if (!ui->vl.heat_ok)
		return 1;
	for (b = 0; b < ui->vl.nseq; b++)
		if (!heatmap_complete(&ui->vl.heat[b]))
			return 0;
	return 1;
}

/* The current sequence's block first: it is the one the reader sees
 * being computed. */
int
ui_varlen_heat_compute(struct ui *ui, double deadline)
{
	struct ui_varlen *vl = &ui->vl;
	int b, k;

	if (!vl->heat_ok)
		return 1;
	for (k = 0; k < vl->nseq; k++) {
		b = (vl->seq + k) % vl->nseq;
		while (!heatmap_complete(&vl->heat[b])) {
			heatmap_compute(&vl->heat[b], &vl->seqs[b], deadline);
			if (deadline > 0 && util_now() >= deadline)
				return ui_varlen_heat_complete(ui);
		}
	}
	return 1;
}

float
ui_varlen_heat_max(const struct ui *ui, int causal, int r0, int r1, int c0,
    int c1)
{
	const struct problem *p = UI_BUILT(ui);
	const struct problem *one;
	float best = -INFINITY, m;
	int b, any = 0, known, lr0, lr1, lc0, lc1;
	long lo, hi;

	for (b = 0; b < p->nseq; b++) {
		lr0 = (r0 > p->cu_q[b] ? r0 : p->cu_q[b]) - p->cu_q[b];
		lr1 = (r1 < p->cu_q[b + 1] ? r1 : p->cu_q[b + 1]) - p->cu_q[b];
		lc0 = (c0 > p->cu_k[b] ? c0 : p->cu_k[b]) - p->cu_k[b];
		lc1 = (c1 < p->cu_k[b + 1] ? c1 : p->cu_k[b + 1]) - p->cu_k[b];
		if (lr0 >= lr1 || lc0 >= lc1)
			continue;	/* the range misses block b */
		any = 1;
		one = &ui->vl.seqs[b];
		/* the keys these rows see, within the sequence */
		mask_rule_keys(problem_mask(one, 0), lr0, lr1 - 1, one->tq,
		    one->tk, &lo, &hi);
		if (lo > hi || hi < lc0 || lo > lc1 - 1)
			continue;	/* the mask hides this part */
		m = heatmap_max(&ui->vl.heat[b], causal, lr0, lr1, lc0, lc1,
		    &known);
		if (!known)
			return NAN;
		if (m > best)
			best = m;
	}
	return any ? best : INFINITY;
}

void
ui_varlen_heat_range(const struct ui *ui, int causal, float *lo, float *hi)
{
	const struct heatmap *h;
	float a, z;
	int b;

	*lo = INFINITY;
	*hi = -INFINITY;
	for (b = 0; b < ui->vl.nseq; b++) {
		h = &ui->vl.heat[b];
		a = causal ? h->lo_causal : h->lo_all;
		z = causal ? h->hi_causal : h->hi_all;
		if (a < *lo)
			*lo = a;
		if (z > *hi)
			*hi = z;
	}
}

int
ui_varlen_jump(struct ui *ui, int delta)
{
	int to = ui->vl.seq + delta;

	if (ui->vl.nseq == 0) {
		ui_message(ui, UI_ROLE_MESSAGE, "s S: the next / previous sequence "
		    "of a packed batch (--seqlens, or seqlens in the e form)");
		return -1;
	}
	if (to < 0 || to >= ui->vl.nseq) {
		ui_message(ui, UI_ROLE_MESSAGE, "sequence %d is the %s of %d",
		    ui->vl.seq + 1, delta > 0 ? "last" : "first", ui->vl.nseq);
		return -1;
	}
	if (ui_goto(ui, timeline_first(ui->line.tl, to)) != 0)
		return -1;
	ui_message(ui, UI_ROLE_MESSAGE, "sequence %d of %d: its first tile",
	    to + 1, ui->vl.nseq);
	return 0;
}

void
ui_varlen_describe(const struct ui *ui, char *buf, size_t len)
{
	const struct problem *p = UI_BUILT(ui);
	int b = ui->vl.seq;

	if (ui->vl.nseq == 0) {
		buf[0] = '\0';
		return;
	}
	/* Sequences and rows as people count them, from 1 and 0: the
	 * heatmap's row labels are the packed rows. */
	snprintf(buf, len, "seq %d of %d (Tq %d, Tk %d, packed rows %d-%d)",
	    b + 1, p->nseq, p->cu_q[b + 1] - p->cu_q[b],
	    p->cu_k[b + 1] - p->cu_k[b], p->cu_q[b], p->cu_q[b + 1] - 1);
}

const char *
ui_varlen_keep_text(struct ui *ui, const char *s)
{
	struct ui_varlen *vl = &ui->vl;
	char **t, *c;

	c = strdup(s);
	if (c == NULL)
		return NULL;
	t = realloc(vl->texts, ((size_t)vl->ntexts + 1) * sizeof *t);
	if (t == NULL) {
		free(c);
		return NULL;
	}
	vl->texts = t;
	vl->texts[vl->ntexts++] = c;
	return c;
}
