/*
 * ui_dropout.c - dropout in the view: which entries of the current tile
 * the generator drops (a mark beside their P, which the softmax's row
 * sum still counts while P V reads 0), and the seed they come from in
 * the tile's title.  The bits are mask_rule_keep's, regenerated here as
 * the simulator and the backward regenerate them.
 */
#include "config.h"

#include "ui_int.h"

#include <stdio.h>

int
ui_dropout_dropped(const struct ui *ui, const struct sim_view *v, int row,
    int c)
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct schedule *sc = sim_schedule(ui->sim);
	int out;

	if (!mask_rule_has(p->mask, MASK_DROPOUT))
		return 0;
	out = schedule_row_out(sc, v->tile.r0 + row);
	return !mask_rule_keep(problem_mask(p, out / p->tq),
	    schedule_row_pos(sc, v->tile.r0 + row), v->tile.c0 + c);
}

int
ui_dropout_title(const struct ui *ui, struct ui_grid *g, int x, int y, int w)
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct mask_rule m = p->mask;

	if (!mask_rule_has(m, MASK_DROPOUT) || w <= 0)
		return 0;
	return ui_grid_printf(g, x, y, w, UI_ROLE_LABEL, "  dropout %g seed "
	    "%llu x: dropped", (double)m.dropout, (unsigned long long)m.seed_lo |
	    (unsigned long long)m.seed_hi << 32);
}
