/*
 * pipeline_fit.c - durations from a recording, and the figures a
 * recording and the model are compared by (pipeline_fit.h).
 */
#include "config.h"

#include "model/pipeline_fit.h"
#include "model/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int
pipeline_fit_within(double model, double recorded, double margin)
{
	return model > 0 && recorded > 0 && model / recorded <= margin &&
	    recorded / model <= margin;
}

static int
fit_dcmp(const void *pa, const void *pb)
{
	const double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

/* The q-quantile (0.5: the median) of x[0..n), sorted in place; NAN
 * for none. */
static double
fit_quantile(double *x, size_t n, double q)
{
	size_t at;

	if (n == 0)
		return NAN;
	qsort(x, n, sizeof *x, fit_dcmp);
	if (q == 0.5 && n % 2 == 0)
		return (x[n / 2 - 1] + x[n / 2]) / 2;
	at = (size_t)(q * (double)(n - 1) + 0.5);
	return x[at < n ? at : n - 1];
}

static double
fit_mean(const double *x, size_t n)
{
	double sum = 0;
	size_t a;

	for (a = 0; a < n; a++)
		sum += x[a];
	return n > 0 ? sum / (double)n : NAN;
}

/* A wait's kind: its holds the model makes itself. */
static int
fit_is_wait(int kind)
{
	switch (kind) {
	case PIPELINE_WAIT_FULL_Q: case PIPELINE_WAIT_FULL_K:
	case PIPELINE_WAIT_FULL_V: case PIPELINE_WAIT_EMPTY_Q:
	case PIPELINE_WAIT_EMPTY_K: case PIPELINE_WAIT_EMPTY_V:
	case PIPELINE_WAIT_TURN: case PIPELINE_WAIT_QK: case PIPELINE_WAIT_PV:
		return 1;
	default:
		return 0;
	}
}

static int
fit_is_step(const struct pipeline_event *e, int consumers)
{
	return e->role == PIPELINE_PRODUCER || (e->role >= PIPELINE_CONSUMER &&
	    e->role < PIPELINE_CONSUMER + consumers);
}

/* pipeline_figures' softmax_overlap (with three consumers the overlaps
 * with the two others are added, at most the softmax's own span). */
static double
fit_softmax_overlap(const struct pipeline_event *ev, size_t nev,
    int consumers)
{
	double all = 0, over = 0;
	size_t a, b;

	for (a = 0; a < nev; a++) {
		const struct pipeline_event *e = &ev[a];
		double o = 0;

		if (e->kind != PIPELINE_SOFTMAX || !fit_is_step(e, consumers))
			continue;
		for (b = 0; b < nev; b++) {
			const struct pipeline_event *f = &ev[b];

			if (f->kind == PIPELINE_SOFTMAX && f->cta == e->cta &&
			    f->role != e->role)
				o += fmax(0, fmin(e->end, f->end) -
				    fmax(e->begin, f->begin));
		}
		all += e->end - e->begin;
		over += fmin(o, e->end - e->begin);
	}
	return all > 0 ? over / all : 0;
}

int
pipeline_figures(const struct pipeline_event *ev, size_t nev, int consumers,
    struct pipeline_figures *fig, char *err, size_t errlen)
{
	double lo[PIPELINE_MAX_CONSUMERS], hi[PIPELINE_MAX_CONSUMERS];
	double per[PIPELINE_MAX_CONSUMERS], *col;
	int jlo[PIPELINE_MAX_CONSUMERS], jhi[PIPELINE_MAX_CONSUMERS];
	size_t x;
	int b, c, n;

	memset(fig, 0, sizeof *fig);
	if (consumers < 1 || consumers > PIPELINE_MAX_CONSUMERS)
		return util_error(err, errlen, "the figures take 1 to %d "
		    "consumers, not %d", PIPELINE_MAX_CONSUMERS, consumers);
	for (x = 0; x < nev; x++) {
		if (ev[x].cta < 0 || ev[x].cta >= PIPELINE_FIT_MAX_BLOCKS)
			return util_error(err, errlen, "block %d: the figures "
			    "take blocks 0 to %d", ev[x].cta,
			    PIPELINE_FIT_MAX_BLOCKS - 1);
		if (ev[x].cta + 1 > fig->ncta)
			fig->ncta = ev[x].cta + 1;
	}
	for (b = 0; b < fig->ncta; b++) {
		double first = INFINITY, last = -INFINITY;

		for (c = 0; c < consumers; c++) {
			jlo[c] = jhi[c] = -1;
			lo[c] = hi[c] = NAN;
		}
		for (x = 0; x < nev; x++) {
			const struct pipeline_event *e = &ev[x];

			if (e->cta != b || !fit_is_step(e, consumers))
				continue;
			first = fmin(first, e->begin);
			last = fmax(last, e->end);
			/* the first steady tile is 1, the last the highest */
			if (e->kind != PIPELINE_SOFTMAX || e->role ==
			    PIPELINE_PRODUCER || e->j < 1)
				continue;
			c = e->role - PIPELINE_CONSUMER;
			if (e->j == 1) {
				jlo[c] = 1;
				lo[c] = e->begin;
			}
			if (e->j > jhi[c]) {
				jhi[c] = e->j;
				hi[c] = e->begin;
			}
		}
		fig->block[b] = last > first ? last - first : 0;
		for (c = n = 0; c < consumers; c++)
			if (jlo[c] == 1 && jhi[c] >= 2)
				per[n++] = (hi[c] - lo[c]) / (jhi[c] - 1);
		fig->tile[b] = fit_quantile(per, (size_t)n, 0.5);
	}
	fig->softmax_overlap = fit_softmax_overlap(ev, nev, consumers);
	col = malloc(((size_t)fig->ncta + 1) * sizeof *col);
	if (col == NULL)
		return util_error(err, errlen, "out of memory (the figures)");
	for (b = 0; b < fig->ncta; b++)
		col[b] = fig->block[b];
	fig->block_median = fit_quantile(col, (size_t)fig->ncta, 0.5);
	for (b = n = 0; b < fig->ncta; b++)
		if (!isnan(fig->tile[b]))
			col[n++] = fig->tile[b];
	fig->ntile = n;
	fig->tile_median = fit_quantile(col, (size_t)n, 0.5);
	free(col);

	return 0;
}

/* The spans of the events of kind (masked: -1 either, 0 tiles without
 * the mask, 1 with), into x; how many. */
static size_t
fit_spans(const struct pipeline_event *ev, size_t nev,
    const struct pipeline_config *cfg, int kind, int masked, double *x)
{
	size_t a, n = 0;

	for (a = 0; a < nev; a++) {
		const struct pipeline_event *e = &ev[a];

		if (e->kind != kind || !fit_is_step(e, cfg->consumers))
			continue;
		if (masked >= 0 && (e->j < 0 || pipeline_tile_masked(cfg, e->i,
		    e->wg, e->j) != masked))
			continue;
		x[n++] = e->end - e->begin;
	}
	return n;
}

int
pipeline_fit_costs(const struct pipeline_event *ev, size_t nev,
    const struct pipeline_config *cfg, struct pipeline_costs *k, char *err,
    size_t errlen)
{
	static const int waits[] = { PIPELINE_WAIT_FULL_Q, PIPELINE_WAIT_FULL_K,
	    PIPELINE_WAIT_FULL_V, PIPELINE_WAIT_EMPTY_Q, PIPELINE_WAIT_EMPTY_K,
	    PIPELINE_WAIT_EMPTY_V };
	const struct pipeline_event **row = NULL;
	double *x = NULL, v, land[PIPELINE_FIT_MAX_BLOCKS];
	double qcopy[PIPELINE_FIT_MAX_BLOCKS], first[PIPELINE_FIT_MAX_BLOCKS];
	double start[PIPELINE_FIT_MAX_BLOCKS];
	size_t n, a, w, nrow = 0;
	int b, ncta = 0, rc = -1;

	pipeline_costs_nominal(cfg, k);
	x = malloc((nev + 1) * sizeof *x);
	row = malloc((nev + 1) * sizeof *row);
	if (x == NULL || row == NULL) {
		util_error(err, errlen, "out of memory (the durations)");
		goto done;
	}
#define FIT(field, kind, masked, what) do {				\
	n = fit_spans(ev, nev, cfg, (kind), (masked), x);		\
	if (n == 0) {							\
		util_error(err, errlen, "the recording has no %s", what); \
		goto done;						\
	}								\
	k->field = fit_mean(x, n);					\
} while (0)
	FIT(softmax, PIPELINE_SOFTMAX, 0, "softmax of a tile without the mask");
	FIT(rescale, PIPELINE_RESCALE, -1, "rescale");
	FIT(epilogue, PIPELINE_EPILOGUE, -1, "epilogue");
	FIT(issue_qk, PIPELINE_ISSUE_QK, -1, "issue of S = Q K^T");
	FIT(issue_pv, PIPELINE_ISSUE_PV, -1, "issue of P V");
#undef FIT
	n = fit_spans(ev, nev, cfg, PIPELINE_SOFTMAX, 1, x);
	k->mask = n > 0 ? fmax(0, fit_mean(x, n) - k->softmax) : 0;
	/* the waits on mbarriers, all kinds together */
	for (w = n = 0; w < sizeof waits / sizeof waits[0]; w++)
		n += fit_spans(ev, nev, cfg, waits[w], -1, x + n);
	if (n == 0) {
		util_error(err, errlen, "the recording has no wait on a barrier");
		goto done;
	}
	k->poll = fit_quantile(x, n, 0.25);
	/* the pauses between a row's steps */
	for (a = 0; a < nev; a++)
		if (fit_is_step(&ev[a], cfg->consumers))
			row[nrow++] = &ev[a];
	qsort(row, nrow, sizeof *row, pipeline_event_row_cmp);
	for (a = n = 0; a + 1 < nrow; a++)
		if (row[a + 1]->cta == row[a]->cta &&
		    row[a + 1]->role == row[a]->role &&
		    row[a]->kind != PIPELINE_WAIT_TURN)
			x[n++] = fmax(0, row[a + 1]->begin - row[a]->end);
	v = n > 0 ? fit_quantile(x, n, 0.5) : 0;
	for (w = 0; w < PIPELINE_NKINDS; w++) {
		for (a = n = 0; a + 1 < nrow; a++)
			if (row[a]->kind == (int)w &&
			    row[a + 1]->cta == row[a]->cta &&
			    row[a + 1]->role == row[a]->role &&
			    row[a]->kind != PIPELINE_WAIT_TURN)
				x[n++] = fmax(0, row[a + 1]->begin - row[a]->end);
		/* a kind never followed by a step: the pauses' median */
		k->stamp[w] = n == 0 ? v : fit_is_wait((int)w) ?
		    fit_quantile(x, n, 0.5) : fit_mean(x, n);
	}
	/* per block (its clocks placed against the others': from its
	 * first step): the producer's first step, Q's issue and landing */
	for (b = 0; b < PIPELINE_FIT_MAX_BLOCKS; b++)
		first[b] = qcopy[b] = land[b] = start[b] = NAN;
	for (a = 0; a < nev; a++) {
		const struct pipeline_event *e = &ev[a];

		if (e->cta < 0 || e->cta >= PIPELINE_FIT_MAX_BLOCKS)
			continue;
		if (e->cta + 1 > ncta)
			ncta = e->cta + 1;
		if (fit_is_step(e, cfg->consumers) && !(e->begin >= start[e->cta]))
			start[e->cta] = e->begin;
		if (e->role == PIPELINE_PRODUCER && !(e->begin >= first[e->cta]))
			first[e->cta] = e->begin;
		if (e->role == PIPELINE_PRODUCER && e->kind == PIPELINE_COPY_Q &&
		    e->round == 0)
			qcopy[e->cta] = e->begin;
		if (e->kind == PIPELINE_WAIT_FULL_Q && e->round == 0 &&
		    !(e->end >= land[e->cta]))
			land[e->cta] = e->end;
	}
	for (b = n = 0; b < ncta; b++)
		if (!isnan(first[b]))
			x[n++] = first[b] - start[b];
	k->prologue = n > 0 ? fit_quantile(x, n, 0.5) : 0;
	for (b = n = 0; b < ncta; b++)
		if (!isnan(qcopy[b]) && !isnan(land[b]))
			x[n++] = land[b] - qcopy[b];
	if (n > 0) {
		v = fit_quantile(x, n, 0.5) - 2.0 * cfg->br * cfg->d /
		    k->copy_bytes_per_clk;
		k->copy_latency = fmax(0, v);
	}
	k->compute_lanes = cfg->consumers;
	rc = 0;
done:
	free(x);
	free(row);
	return rc;
}

static const char *const fit_variant_names[PIPELINE_NVARIANTS] = {
	[PIPELINE_AS_IS] = "as recorded",
	[PIPELINE_ONE_STAGE] = "one stage",
	[PIPELINE_MORE_STAGE] = "one more stage",
	[PIPELINE_NO_PINGPONG] = "no ping-pong",
	[PIPELINE_NO_OVERLAP] = "no overlap (nor ping-pong)",
};

const char *
pipeline_variant_name(int v)
{
	return v >= 0 && v < PIPELINE_NVARIANTS ? fit_variant_names[v] : "?";
}

void
pipeline_variant(int v, const struct pipeline_config *cfg,
    struct pipeline_config *c)
{
	*c = *cfg;
	switch (v) {
	case PIPELINE_ONE_STAGE:
		c->stages = 1;
		break;
	case PIPELINE_MORE_STAGE:
		c->stages = cfg->stages + 1;
		break;
	case PIPELINE_NO_PINGPONG:
		c->pingpong = 0;
		break;
	case PIPELINE_NO_OVERLAP:
		c->pingpong = c->overlap = 0;
		break;
	}
	c->pingpong = c->pingpong && c->overlap;
}

int
pipeline_fit_model(const struct pipeline_config *cfg,
    const struct pipeline_costs *k, int ncta, struct pipeline_figures *fig,
    char *err, size_t errlen)
{
	struct pipeline_config c = *cfg;
	struct pipeline_run run;
	int rc;

	c.ctas = ncta;
	if (pipeline_model(&c, k, &run, err, errlen) != 0)
		return -1;
	rc = pipeline_figures(run.ev, run.nev, c.consumers, fig, err, errlen);
	pipeline_run_free(&run);
	return rc;
}
