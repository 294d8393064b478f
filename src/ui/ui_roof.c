/*
 * ui_roof.c - R in the view: the H200's roofline (ui_roofline.c's
 * figure) over the whole view until q or Esc, with the view's problem
 * placed on it.
 *
 * The figure and its points are ui_roofline_problem's (ui_roofline.h),
 * which a lesson's `show roofline` draws too: h at the HBM intensity, t
 * at the tiles', so that a student sees what Br does to where a kernel
 * stands against the ridge.
 */
#include "config.h"

#include "ui_int.h"
#include "ui_roofline.h"

int
ui_roof_open(struct ui *ui)
{
	ui->roof = 1;
	return UI_HANDLED;
}

int
ui_roof_key(struct ui *ui, const struct ui_key *k)
{
	if (k->code == 'q' || k->code == UI_KEY_ESC || k->code == 'R')
		ui->roof = 0;
	return UI_HANDLED;	/* the view's keys wait */
}

void
ui_roof_draw(const struct ui *ui, struct ui_grid *g)
{
	struct ui_rect r = g->clip;
	int used;

	/* the figure and its words, then how to leave it */
	r.h--;
	used = ui_roofline_problem(g, r, UI_PROBLEM(ui),
	    sim_schedule(ui->sim)->br, sim_schedule(ui->sim)->bc);
	ui_grid_text(g, r.x, r.y + used, r.w, UI_ROLE_LABEL, "q returns.");
}
