/*
 * ui_fp8.h - the fp8 pane as a figure: how --dtype fp8 stored one row
 * of Q, K or V (its entries as given and rotated, codes, scales, the
 * values computed with, their errors; the tensor's error and what the
 * rotation did to its outlier), drawn into a rectangle of a cell grid.
 * The view shows it over its panes (8, ui_fp8.c); a lesson's `show fp8`
 * draws the same figure into its frame.
 */
#ifndef FLASHSTEP_UI_FP8_H
#define FLASHSTEP_UI_FP8_H

#include "model/fp8.h"
#include "ui/ui.h"

/* Which row the figure shows. */
struct ui_fp8 {
	int tensor;		/* 0 Q, 1 K, 2 V */
	int row;		/* the row shown, over all heads */
	int first;		/* its first entry shown */
	int shown;		/* entries the last frame showed (set by the
				 * drawing, for the keys that page) */
	int keys;		/* the key bar: the view's keys for it */
};

/* Draws f's figure for s into r of g, with unicode's glyphs (else
 * ASCII); a row or entry past the tensor's is brought within it. */
void ui_fp8_figure(struct ui_grid *g, struct ui_rect r,
    const struct fp8_data *f, struct ui_fp8 *s, int unicode);

#endif
