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

extern const struct ui_pane ui_pane_history;	/* at the end */

/*
 * The running state of row block i after each of its tiles: m and l
 * hold (Tc, Br) values, ok says which tiles are known.  Kept while the
 * sim (ui->gen) and the row block stay.
 */
struct ui_pane_history_data {
	long gen;
	int i, tc, br;
	float *m, *l;
	unsigned char *ok;
};

static void *
ui_pane_history_init(struct ui *ui)
{
	(void)ui;
	return calloc(1, sizeof(struct ui_pane_history_data));
}

/* Drops the cache of states (a new sim, block or size). */
static void
ui_pane_history_forget(struct ui_pane_history_data *hs)
{
	free(hs->m);
	free(hs->l);
	free(hs->ok);
	hs->m = hs->l = NULL;
	hs->ok = NULL;
}

static void
ui_pane_history_free(void *data)
{
	ui_pane_history_forget(data);
	free(data);
}

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

/*
 * m and l of every row of the current row block after each of its tiles
 * j0 .. j1: *m and *l point at (Tc, Br) arrays, entry [j * Br + row].
 * Kept while the sim and the row block stay.  Returns 0, or -1 without
 * memory.
 */
static int
ui_pane_history_datas(struct ui *ui, int j0, int j1, const float **m,
    const float **l)
{
	struct ui_pane_history_data *hs = ui_pane_data(ui, &ui_pane_history);
	const struct schedule *s = sim_schedule(ui->sim);
	int i = sim_view(ui->sim)->tile.i, j;
	size_t n = (size_t)s->tc * (size_t)s->br;

	if (hs == NULL)
		return -1;
	if (hs->m == NULL || hs->gen != ui->gen || hs->tc != s->tc ||
	    hs->br != s->br || hs->i != i) {
		ui_pane_history_forget(hs);
		hs->m = malloc(n * sizeof *hs->m);
		hs->l = malloc(n * sizeof *hs->l);
		hs->ok = calloc((size_t)s->tc, 1);
		hs->gen = ui->gen;
		hs->tc = s->tc;
		hs->br = s->br;
		hs->i = i;
		if (hs->m == NULL || hs->l == NULL || hs->ok == NULL) {
			ui_pane_history_forget(hs);
			return -1;
		}
	}
	for (j = j0 < 0 ? 0 : j0; j <= j1 && j < s->jend[i]; j++) {
		if (hs->ok[j])
			continue;
		if (sim_block_state(ui->sim, i, j + 1, hs->m + (size_t)j * s->br,
		    hs->l + (size_t)j * s->br, NULL) != 0)
			return -1;
		hs->ok[j] = 1;
	}
	*m = hs->m;
	*l = hs->l;
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
	if (ui_pane_history_datas(ui, j0 > 0 ? j0 - 1 : 0, cur, &m, &l) != 0) {
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
	/* The tiles before and after the window, and l's line when the
	 * pane has no room for it. */
	ui_pane_cut_mark(ui, g, r, 0, r.h > 3 ? 0 : 1, j0 + (jend - 1 - j1));
}

const struct ui_pane ui_pane_history = {
	.name = "history",
	.init = ui_pane_history_init,
	.free = ui_pane_history_free,
	.size = ui_pane_history_size,
	.draw = ui_pane_history_draw,
};
