/*
 * ui_pane_state.c - the running state of the tile's rows, before and
 * after this step: m_old -> m_new, alpha, l_old -> l_new and the first
 * entries of u (or o under the normalized convention; O once the row
 * block finalizes).  A value shows from the phase that computes it; the
 * ones this step changed are highlighted.  With G on, the GPU's m_new,
 * alpha and l_new follow.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>

#define UI_STATE_NW 7

static void
ui_pane_state_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	(void)h;
	*minh = 3;
	*wanth = 2 + sim_view(ui->sim)->rows;
	*wantw = w;
}

int
ui_state_num(struct ui *ui, struct ui_grid *g, int x, int y, int w, int shown,
    float val, int changed)
{
	char b[32];

	if (!shown)
		return ui_grid_right(g, x, y, w, UI_ROLE_DIM, "?");
	return ui_grid_right(g, x, y, w, changed ? UI_ROLE_VALUE_CHANGED :
	    UI_ROLE_NORMAL, ui_num(ui, val, w, b, sizeof b));
}

/* One number right-aligned in nw columns. */
static int
ui_pane_state_num(struct ui *ui, struct ui_grid *g, int nw, int x, int y,
    int shown, float val, int changed)
{
	return ui_state_num(ui, g, x, y, nw, shown, val, changed);
}

/* Same value, or both NaN or infinite alike. */
static int
ui_pane_state_same(float a, float b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* Does the GPU's value differ from ours beyond the tolerance compare
 * uses (gpu/gpucheck.h)? */
static int
ui_pane_state_differs(const struct ui *ui, float gpu, float sim)
{
	if (ui_pane_state_same(gpu, sim))
		return 0;
	return !gpucheck_trace_agrees(ui->gpu_trace, gpu, sim);
}

static void
ui_pane_state_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct ui_glyphs *gl = ui->gl;
	int normalized = sim_rule(ui->sim)->convention == CONV_NORMALIZED;
	int fin = v->phase >= SIM_PHASE_FINALIZE;
	int has_m = v->phase >= SIM_PHASE_MAX, has_a = v->phase >= SIM_PHASE_RESCALE;
	int has_l = v->phase >= SIM_PHASE_UPDATE;
	int gpu = ui->gpu && ui->gpu_step == v->step;
	int lw = ui_digits(v->tile.r1 - 1) + 1;
	int aw = ui_grid_width(gl->arrow) + 2, x, y, row, e, ne, nrows, role;
	int split = sim_schedule(ui->sim)->splits > 1;
	const char *acc = fin ? (split ? "o" : "O") : normalized ? "o" : "u";
	const float *av;
	char b[48], range[48] = "";
	/* Wider numbers, more digits, when the pane has the room (a large
	 * terminal, a zoomed pane): every column at up to 11 columns. */
	int nw = r.w < UI_WIDE_W ? UI_STATE_NW : (r.w - lw - 2 * aw - 6 -
	    (gpu ? 3 : 0)) / (5 + v->dv + (gpu ? 3 : 0)) - 1;

	nw = nw < UI_STATE_NW ? UI_STATE_NW : nw > 11 ? 11 : nw;

	/* With split-KV the state is the key range's, and its end a partial. */
	if (split)
		snprintf(range, sizeof range, " of key range %d", v->tile.split);
	ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "running state per row%s: "
	    "m, %s, %s%s%s", range, gl->ell, normalized ? "o = u/" : "u",
	    normalized ? gl->ell : "", !fin ? "" : split ?
	    "  (its partial: o, lse)" : "  (finalized: O)");

	/* Columns: row | m -> m' | alpha | l -> l' | acc entries | gpu */
	y = r.y + 1;
	x = r.x + lw + 1;
	ui_grid_right(g, x, y, nw, UI_ROLE_LABEL, "m");
	ui_grid_printf(g, x + nw + 1, y, -1, UI_ROLE_LABEL, "%s",
	    gl->arrow);
	snprintf(b, sizeof b, "m%s", gl->prime);
	ui_grid_right(g, x + nw + aw, y, nw, UI_ROLE_LABEL, b);
	x += 2 * nw + aw + 1;
	ui_grid_right(g, x, y, nw, UI_ROLE_LABEL, gl->alpha);
	x += nw + 1;
	ui_grid_right(g, x, y, nw, UI_ROLE_LABEL, gl->ell);
	ui_grid_printf(g, x + nw + 1, y, -1, UI_ROLE_LABEL, "%s",
	    gl->arrow);
	snprintf(b, sizeof b, "%s%s", gl->ell, gl->prime);
	ui_grid_right(g, x + nw + aw, y, nw, UI_ROLE_LABEL, b);
	x += 2 * nw + aw + 1;
	/* The GPU's three numbers take the place of accumulator entries. */
	ne = (r.x + r.w - x - (gpu ? 3 * (nw + 1) + 4 : 0)) /
	    (nw + 1);
	if (ne > v->dv)
		ne = v->dv;
	if (ne < 0)
		ne = 0;
	for (e = 0; e < ne; e++) {
		snprintf(b, sizeof b, "%s%s[%d]", acc, !fin && has_l ? gl->prime :
		    "", e);
		ui_grid_right(g, x + e * (nw + 1), y, nw + 1,
		    UI_ROLE_LABEL, b);
	}
	if (gpu) {
		x += ne * (nw + 1) + 2;
		ui_grid_text(g, x, y, -1, UI_ROLE_GPU, "gpu:");
		snprintf(b, sizeof b, "m%s", gl->prime);
		ui_grid_right(g, x + 2, y, nw + 1, UI_ROLE_GPU, b);
		ui_grid_right(g, x + 2 + nw + 1, y, nw + 1,
		    UI_ROLE_GPU, gl->alpha);
		snprintf(b, sizeof b, "%s%s", gl->ell, gl->prime);
		ui_grid_right(g, x + 2 + 2 * (nw + 1), y, nw + 1,
		    UI_ROLE_GPU, b);
	}

	nrows = r.h - 2;
	ui->state_first = ui_pane_tile_window(ui->state_first, ui->focus,
	    v->rows, nrows);
	for (row = ui->state_first; row < v->rows && y + 1 < r.y + r.h; row++) {
		y++;
		role = row == ui->focus ? UI_ROLE_FOCUS : UI_ROLE_LABEL;
		ui_grid_text(g, r.x, y, 1, UI_ROLE_FOCUS,
		    row == ui->focus ? gl->focus : " ");
		ui_grid_printf(g, r.x + 1, y, lw - 1, role, "%*d", lw - 1,
		    v->tile.r0 + row);
		x = r.x + lw + 1;
		ui_pane_state_num(ui, g, nw, x, y, 1, v->m_old[row], 0);
		ui_grid_text(g, x + nw + 1, y, -1, UI_ROLE_LABEL,
		    gl->arrow);
		ui_pane_state_num(ui, g, nw, x + nw + aw, y, has_m,
		    v->m_new[row], !ui_pane_state_same(v->m_new[row], v->m_old[row]));
		x += 2 * nw + aw + 1;
		ui_pane_state_num(ui, g, nw, x, y, has_a, v->alpha[row],
		    v->alpha[row] != 1.0f);
		x += nw + 1;
		ui_pane_state_num(ui, g, nw, x, y, 1, v->l_old[row], 0);
		ui_grid_text(g, x + nw + 1, y, -1, UI_ROLE_LABEL,
		    gl->arrow);
		ui_pane_state_num(ui, g, nw, x + nw + aw, y, has_l,
		    v->l_new[row], !ui_pane_state_same(v->l_new[row], v->l_old[row]));
		x += 2 * nw + aw + 1;
		/* Before the update the accumulator shown is the old one. */
		av = fin ? v->o : has_l ? v->acc_new : v->acc_old;
		for (e = 0; e < ne; e++) {
			size_t at = (size_t)row * v->dv + e;
			ui_pane_state_num(ui, g, nw, x + e * (nw + 1) + 1, y, 1,
			    av[at], has_l && !fin &&
			    !ui_pane_state_same(v->acc_new[at], v->acc_old[at]));
		}
		if (gpu) {
			x += ne * (nw + 1) + 4;
			ui_grid_right(g, x, y, nw + 1,
			    ui_pane_state_differs(ui, ui->gpu_m[row], v->m_new[row]) ?
			    UI_ROLE_ERROR : UI_ROLE_GPU,
			    ui_num(ui, ui->gpu_m[row], nw, b, sizeof b));
			ui_grid_right(g, x + nw + 1, y, nw + 1,
			    ui_pane_state_differs(ui, ui->gpu_alpha[row], v->alpha[row]) ?
			    UI_ROLE_ERROR : UI_ROLE_GPU,
			    ui_num(ui, ui->gpu_alpha[row], nw, b, sizeof b));
			ui_grid_right(g, x + 2 * (nw + 1), y, nw + 1,
			    ui_pane_state_differs(ui, ui->gpu_l[row], v->l_new[row]) ?
			    UI_ROLE_ERROR : UI_ROLE_GPU,
			    ui_num(ui, ui->gpu_l[row], nw, b, sizeof b));
		}
	}
	ui_pane_cut_mark(ui, g, r, ui->state_first, v->rows - row, v->dv - ne);
}

static int
ui_pane_state_key(struct ui *ui, const struct ui_key *k, struct ui_rect r)
{
	int row = ui->state_first + k->y - (r.y + 2);

	if (k->y >= r.y + 2 && row < sim_view(ui->sim)->rows)
		ui_set_focus(ui, row);
	return UI_HANDLED;
}

const struct ui_pane ui_pane_state = {
	.name = "state",
	.size = ui_pane_state_size,
	.draw = ui_pane_state_draw,
	.handle_key = ui_pane_state_key,
};
