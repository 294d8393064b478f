/*
 * ui_roofline.h - the roofline as a figure drawn into a cell grid:
 * arithmetic intensity (FLOPs a byte of HBM) across, FLOP/s up, both
 * log; the machine's compute roofs (tensor, fp32) and its bandwidth
 * roof, the ridge points marked, and each point a letter.
 *
 * Pure C over struct ui_grid, as the rest of src/ui: `flashstep bench
 * --roofline` prints the grid as text, the view shows it over its
 * panes (R), and tests read it.  Only ASCII is drawn, so the text is the
 * same in any locale.
 */
#ifndef FLASHSTEP_UI_ROOFLINE_H
#define FLASHSTEP_UI_ROOFLINE_H

#include "model/roofline.h"
#include "ui/ui.h"

/* The figure's size in cells: the plot and its labels, legend above. */
#define UI_ROOFLINE_W 66
#define UI_ROOFLINE_H 20

/* The plot's own columns and rows, and the decades it spans: intensity
 * 10^-1 .. 10^4 FLOPs a byte, 10^11 .. 10^15 FLOP/s. */
#define UI_ROOFLINE_PLOT_W 60
#define UI_ROOFLINE_PLOT_H 15
/* Where the plot's first column and top row lie within the figure. */
#define UI_ROOFLINE_PLOT_X 6
#define UI_ROOFLINE_PLOT_Y 2

struct ui_roofline_point {
	double intensity;	/* FLOPs a byte */
	double flops;		/* FLOP/s achieved (or the roof's, where no
				 * speed is measured) */
	char letter;
	int under;		/* drawn before the others: where two meet,
				 * the other's letter shows */
};

/* Draws the figure with its top left corner at (x, y) of g, m's roofs
 * and the n points (those off the plot are left out). */
void ui_roofline_draw(struct ui_grid *g, int x, int y,
    const struct roofline_machine *m, const struct ui_roofline_point *pt,
    int n);

/* The same with a plot of rows rows (clamped to UI_ROOFLINE_PLOT_MIN_H
 * .. UI_ROOFLINE_PLOT_H), for a screen that cannot spare the whole
 * height: the figure is rows + UI_ROOFLINE_H - UI_ROOFLINE_PLOT_H tall. */
#define UI_ROOFLINE_PLOT_MIN_H 8
void ui_roofline_draw_rows(struct ui_grid *g, int x, int y, int rows,
    const struct roofline_machine *m, const struct ui_roofline_point *pt,
    int n);

/*
 * The problem's head on the H200's roofline, into r of g (R in the view,
 * `show roofline` in a lesson): the figure, as tall as r allows, and
 * under it what its points are, wrapped into the rows left.  The
 * simulator times nothing, so the points stand on the roof itself: h at
 * the HBM intensity (each tensor once), t at the tiles' (each row block
 * reads K and V again), for one head's forward with tiles br x bc.
 * Returns the rows used.
 */
struct problem;
int ui_roofline_problem(struct ui_grid *g, struct ui_rect r,
    const struct problem *p, int br, int bc);

#endif
