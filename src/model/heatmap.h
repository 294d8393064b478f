/*
 * heatmap.h - a pooled summary of the whole score matrix, for pictures.
 *
 * The view draws S = scale Q K^T (Tq, Tk) as a heatmap beside the tile
 * the simulator is on.  At Tq = Tk = 8192, d = 64 forming S costs about
 * 4 GFLOP, far too slow for a frame, so S is summarized once per problem
 * into cells of gy rows by gx keys, each holding the max of its entries.
 * A picture of any coarser size is then exact by taking the max of cells
 * (max of maxes), and a picture of the unpooled matrix (gy = gx = 1) is S
 * itself, bit for bit the numbers the simulator computes.
 *
 * Both masks are summarized in one pass, so turning the causal mask on
 * or off needs no new summary: max_all ignores the mask, max_causal keeps
 * only the keys a row sees (key c <= r + Tk - Tq, aligned bottom-right).
 * A cell with no visible entry holds -inf.  In a scores problem, -inf
 * entries of S are masked in both.
 *
 * The work is split into bands of gy rows, so a caller can spread it over
 * idle time (heatmap_compute with a deadline) and draw what is done.
 */
#ifndef FLASHSTEP_HEATMAP_H
#define FLASHSTEP_HEATMAP_H

#include <stddef.h>

#include "problem.h"

/* Cells per axis at most: the summary stays under 2 MiB. */
#define HEATMAP_MAX_CELLS 512

struct heatmap {
	int tq, tk;
	int gy, gx;		/* rows and keys per cell */
	int ny, nx;		/* cells: ceil(Tq / gy) by ceil(Tk / gx) */
	float *max_all;		/* (ny, nx): max of S over the cell, no mask */
	float *max_causal;	/* (ny, nx): max over the causally visible keys */
	int bands_done;		/* cell rows computed so far, 0 .. ny */
	/* Range of the finite entries computed so far, per mask. */
	float lo_all, hi_all, lo_causal, hi_causal;
	float *scratch;		/* one band of S for a chunk of keys */
};

/*
 * Lays out the summary of p (nothing is computed yet).  max_cells caps
 * the cells per axis (0: HEATMAP_MAX_CELLS).  Returns 0, or -1 with err
 * set when out of memory (h is then empty).
 */
int heatmap_init(struct heatmap *h, const struct problem *p, int max_cells,
    char *err, size_t errlen);
void heatmap_free(struct heatmap *h);

/*
 * Computes bands of cells until all are done or util_now() passes
 * deadline (a deadline <= 0 means: finish).  At least one band is done
 * per call.  p must be the problem given to heatmap_init.  Returns 1 when
 * the summary is complete, 0 when bands remain.
 */
int heatmap_compute(struct heatmap *h, const struct problem *p, double deadline);

/* Is the summary complete? */
int heatmap_complete(const struct heatmap *h);

/*
 * Max over the cells covering rows [r0, r1) and keys [c0, c1) under the
 * mask (causal or not), or -inf when no entry there is visible; *known is
 * set to 0 when a band in the range is not computed yet.  The range is
 * widened to whole cells.
 */
float heatmap_max(const struct heatmap *h, int causal, int r0, int r1, int c0,
    int c1, int *known);

/* Could the summary of problem a serve for problem b?  Same shapes, scale
 * and the same Q and K (or S): the mask does not matter. */
int heatmap_same_scores(const struct problem *a, const struct problem *b);

#endif
