/*
 * ui_pane_history.c - the focused row's running max m and denominator l
 * after each tile of its row block, up to the current one: the running
 * max rising tile after tile, the way the seed tells it.  A value of m
 * that rose is highlighted; tiles still ahead show as dots.  Shown only
 * when the terminal has lines to spare.  The states come from
 * sim_block_state, which replays beside the view: drawing never moves
 * the simulator.
 */
#include "config.h"

#include "ui_int.h"

#include <stdio.h>
#include <stdlib.h>

#define UI_HISTORY_NW 7

static void
ui_pane_history_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	(void)ui;
	(void)h;
	*minh = 0;
	*wanth = 4;
	*wantw = w;
}

/* Drops the cache of states (a new sim, block or size). */
static void
ui_pane_history_forget(struct ui *ui)
{
	free(ui->hist_m);
	free(ui->hist_l);
	free(ui->hist_ok);
	ui->hist_m = ui->hist_l = NULL;
	ui->hist_ok = NULL;
}

/*
 * m and l of every row of the current row block after each of its tiles
 * j0 .. j1: *m and *l point at (Tc, Br) arrays, entry [j * Br + row].
 * Kept while the sim and the row block stay.  Returns 0, or -1 without
 * memory.
 */
static int
ui_pane_history_states(struct ui *ui, int j0, int j1, const float **m,
    const float **l)
{
	const struct schedule *s = sim_schedule(ui->sim);
	int i = sim_view(ui->sim)->tile.i, j;
	size_t n = (size_t)s->tc * (size_t)s->br;

	if (ui->hist_m == NULL || ui->hist_gen != ui->gen ||
	    ui->hist_tc != s->tc || ui->hist_br != s->br || ui->hist_i != i) {
		ui_pane_history_forget(ui);
		ui->hist_m = malloc(n * sizeof *ui->hist_m);
		ui->hist_l = malloc(n * sizeof *ui->hist_l);
		ui->hist_ok = calloc((size_t)s->tc, 1);
		ui->hist_gen = ui->gen;
		ui->hist_tc = s->tc;
		ui->hist_br = s->br;
		ui->hist_i = i;
		if (ui->hist_m == NULL || ui->hist_l == NULL ||
		    ui->hist_ok == NULL) {
			ui_pane_history_forget(ui);
			return -1;
		}
	}
	for (j = j0 < 0 ? 0 : j0; j <= j1 && j < s->jend[i]; j++) {
		if (ui->hist_ok[j])
			continue;
		if (sim_block_state(ui->sim, i, j + 1, ui->hist_m +
		    (size_t)j * s->br, ui->hist_l + (size_t)j * s->br, NULL) != 0)
			return -1;
		ui->hist_ok[j] = 1;
	}
	*m = ui->hist_m;
	*l = ui->hist_l;
	return 0;
}

static void
ui_pane_history_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct schedule *s = sim_schedule(ui->sim);
	const struct ui_glyphs *gl = ui->gl;
	int jend = s->jend[v->tile.i], cur = v->tile.j, row = ui->focus;
	int lw = ui_grid_width(gl->ell) + 3, k, j0, j1, j, x, role;
	const float *m, *l;
	float mj;
	char b[32];

	if (r.h < 3)
		return;
	k = (r.w - lw) / (UI_HISTORY_NW + 1);
	if (k < 1)
		return;
	/* The current tile and as many before it as fit; after it, dots
	 * for the tiles to come while there is room. */
	j0 = cur - k + 1 > 0 ? cur - k + 1 : 0;
	j1 = j0 + k - 1 < jend - 1 ? j0 + k - 1 : jend - 1;
	if (ui_pane_history_states(ui, j0 > 0 ? j0 - 1 : 0, cur, &m, &l) != 0) {
		ui_grid_text(g, r.x, r.y, r.w, UI_ROLE_ERROR, "history: out of memory");
		return;
	}
	ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "row %d after each tile "
	    "of its row block: m rises, %s adds up%s", v->tile.r0 + row, gl->ell,
	    s->splits > 1 ? " (each key range from nothing)" : "");
	ui_grid_text(g, r.x + 1, r.y + 1, lw, UI_ROLE_LABEL, "j");
	ui_grid_text(g, r.x + 1, r.y + 2, lw, UI_ROLE_LABEL, "m");
	if (r.h > 3)
		ui_grid_text(g, r.x + 1, r.y + 3, lw, UI_ROLE_LABEL, gl->ell);
	for (j = j0; j <= j1; j++) {
		x = r.x + lw + (j - j0) * (UI_HISTORY_NW + 1);
		snprintf(b, sizeof b, "%d", j);
		ui_grid_right(g, x, r.y + 1, UI_HISTORY_NW, j == cur ?
		    UI_ROLE_TILE_CURRENT : UI_ROLE_LABEL, b);
		if (j > cur) {
			ui_grid_right(g, x, r.y + 2, UI_HISTORY_NW, UI_ROLE_DIM,
			    gl->heat[0]);
			if (r.h > 3)
				ui_grid_right(g, x, r.y + 3, UI_HISTORY_NW, UI_ROLE_DIM,
				    gl->heat[0]);
			continue;
		}
		/* The current tile's values appear with their phases. */
		mj = m[(size_t)j * s->br + row];
		if (j == cur && v->phase < SIM_PHASE_MAX)
			ui_grid_right(g, x, r.y + 2, UI_HISTORY_NW, UI_ROLE_DIM, "?");
		else {
			role = j > 0 && mj > m[(size_t)(j - 1) * s->br + row] &&
			    schedule_split_of(s, v->tile.i, j) ==
			    schedule_split_of(s, v->tile.i, j - 1) ?
			    UI_ROLE_VALUE_CHANGED : UI_ROLE_NORMAL;
			ui_grid_right(g, x, r.y + 2, UI_HISTORY_NW, role,
			    ui_num(ui, mj, UI_HISTORY_NW, b, sizeof b));
		}
		if (r.h <= 3)
			continue;
		if (j == cur && v->phase < SIM_PHASE_UPDATE)
			ui_grid_right(g, x, r.y + 3, UI_HISTORY_NW, UI_ROLE_DIM, "?");
		else
			ui_grid_right(g, x, r.y + 3, UI_HISTORY_NW, UI_ROLE_NORMAL,
			    ui_num(ui, l[(size_t)j * s->br + row], UI_HISTORY_NW, b,
			    sizeof b));
	}
}

const struct ui_pane ui_pane_history = {
	.name = "history",
	.size = ui_pane_history_size,
	.draw = ui_pane_history_draw,
};
