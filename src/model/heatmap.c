/* heatmap.c - the pooled summary of S for the view (see heatmap.h). */
#include "config.h"

#include "heatmap.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Keys per chunk: a band of gy rows by this many keys, and the matching
 * rows of K^T (d by this many), stay in cache while the band reuses them. */
#define HEATMAP_CHUNK 512

static int
heatmap_ceil_div(int a, int b)
{
	return (a + b - 1) / b;
}

int
heatmap_init(struct heatmap *h, const struct problem *p, int max_cells,
    char *err, size_t errlen)
{
	size_t n;
	int chunk;

	memset(h, 0, sizeof *h);
	if (max_cells <= 0)
		max_cells = HEATMAP_MAX_CELLS;
	h->tq = p->tq;
	h->tk = p->tk;
	h->gy = heatmap_ceil_div(p->tq, max_cells);
	h->gx = heatmap_ceil_div(p->tk, max_cells);
	h->ny = heatmap_ceil_div(p->tq, h->gy);
	h->nx = heatmap_ceil_div(p->tk, h->gx);
	h->lo_all = h->lo_causal = INFINITY;
	h->hi_all = h->hi_causal = -INFINITY;
	n = (size_t)h->ny * (size_t)h->nx;
	chunk = heatmap_ceil_div(HEATMAP_CHUNK, h->gx) * h->gx;
	if ((h->max_all = util_calloc(n, sizeof(float), "heatmap", err,
	    errlen)) == NULL ||
	    (h->max_causal = util_calloc(n, sizeof(float), "heatmap", err,
	    errlen)) == NULL ||
	    (h->scratch = util_calloc((size_t)chunk, sizeof(float), "heatmap",
	    err, errlen)) == NULL) {
		heatmap_free(h);
		return -1;
	}
	return 0;
}

void
heatmap_free(struct heatmap *h)
{
	free(h->max_all);
	free(h->max_causal);
	free(h->scratch);
	memset(h, 0, sizeof *h);
}

int
heatmap_complete(const struct heatmap *h)
{
	return h->bands_done >= h->ny;
}

/*
 * One row of S over keys [c0, c1) into s, in the simulator's order: each
 * entry sums q[x] k[x] over x = 0 .. d-1, then scales, so the unpooled
 * summary equals the simulator's S bit for bit.
 */
static void
heatmap_score_row(const struct problem *p, int r, int c0, int c1, float *s)
{
	const float *qr;
	int c, x, n = c1 - c0;

	if (p->scores_mode) {
		memcpy(s, p->s + (size_t)r * p->tk + c0, (size_t)n * sizeof *s);
		return;
	}
	qr = p->q + (size_t)r * p->d;
	memset(s, 0, (size_t)n * sizeof *s);
	for (x = 0; x < p->d; x++) {
		const float qx = qr[x];
		const float *kx = p->kt + (size_t)x * p->tk + c0;
		for (c = 0; c < n; c++)
			s[c] += qx * kx[c];
	}
	for (c = 0; c < n; c++)
		s[c] *= p->scale;
}

static float
heatmap_row_max(const float *s, int n)
{
	float m = -INFINITY;
	int c;

	for (c = 0; c < n; c++)
		m = s[c] > m ? s[c] : m;
	return m;
}

/* Cell row b: rows [b gy, (b+1) gy) against every key. */
static void
heatmap_band(struct heatmap *h, const struct problem *p, int b)
{
	float *all = h->max_all + (size_t)b * h->nx;
	float *cau = h->max_causal + (size_t)b * h->nx;
	int r0 = b * h->gy, r1 = r0 + h->gy < h->tq ? r0 + h->gy : h->tq;
	int chunk = heatmap_ceil_div(HEATMAP_CHUNK, h->gx) * h->gx;
	int r, c0, c1, cc, cell, last, n;
	float m;

	for (cell = 0; cell < h->nx; cell++)
		all[cell] = cau[cell] = -INFINITY;
	for (c0 = 0; c0 < h->tk; c0 += chunk) {
		c1 = c0 + chunk < h->tk ? c0 + chunk : h->tk;
		for (r = r0; r < r1; r++) {
			heatmap_score_row(p, r, c0, c1, h->scratch);
			/* The last key row r sees under the causal mask. */
			last = r + h->tk - h->tq;
			for (cc = c0; cc < c1; cc += h->gx) {
				cell = cc / h->gx;
				n = cc + h->gx < c1 ? h->gx : c1 - cc;
				m = heatmap_row_max(h->scratch + (cc - c0), n);
				all[cell] = m > all[cell] ? m : all[cell];
				if (last < cc)
					continue;
				if (last < cc + n - 1)
					n = last - cc + 1;
				m = heatmap_row_max(h->scratch + (cc - c0), n);
				cau[cell] = m > cau[cell] ? m : cau[cell];
			}
		}
	}
	for (cell = 0; cell < h->nx; cell++) {
		if (isfinite(all[cell])) {
			h->lo_all = all[cell] < h->lo_all ? all[cell] : h->lo_all;
			h->hi_all = all[cell] > h->hi_all ? all[cell] : h->hi_all;
		}
		if (isfinite(cau[cell])) {
			h->lo_causal = cau[cell] < h->lo_causal ? cau[cell] : h->lo_causal;
			h->hi_causal = cau[cell] > h->hi_causal ? cau[cell] : h->hi_causal;
		}
	}
}

int
heatmap_compute(struct heatmap *h, const struct problem *p, double deadline)
{
	while (h->bands_done < h->ny) {
		heatmap_band(h, p, h->bands_done);
		h->bands_done++;
		if (deadline > 0 && util_now() >= deadline)
			break;
	}
	return heatmap_complete(h);
}

float
heatmap_max(const struct heatmap *h, int causal, int r0, int r1, int c0,
    int c1, int *known)
{
	const float *cells = causal ? h->max_causal : h->max_all;
	int a0 = r0 / h->gy, a1 = heatmap_ceil_div(r1, h->gy);
	int b0 = c0 / h->gx, b1 = heatmap_ceil_div(c1, h->gx);
	float m = -INFINITY, x;
	int a, b;

	*known = a1 <= h->bands_done;
	if (a1 > h->bands_done)
		a1 = h->bands_done;
	for (a = a0; a < a1; a++)
		for (b = b0; b < b1; b++) {
			x = cells[(size_t)a * h->nx + b];
			m = x > m ? x : m;
		}
	return m;
}

int
heatmap_same_scores(const struct problem *a, const struct problem *b)
{
	size_t n;

	if (a->tq != b->tq || a->tk != b->tk || a->d != b->d ||
	    a->scale != b->scale || a->scores_mode != b->scores_mode)
		return 0;
	if (a->scores_mode) {
		n = (size_t)a->tq * a->tk;
		return memcmp(a->s, b->s, n * sizeof(float)) == 0;
	}
	return memcmp(a->q, b->q, (size_t)a->tq * a->d * sizeof(float)) == 0 &&
	    memcmp(a->k, b->k, (size_t)a->tk * a->d * sizeof(float)) == 0;
}
