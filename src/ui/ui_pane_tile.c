/*
 * ui_pane_tile.c - the current tile's numbers: S = scale Q_i K_j^T from
 * the scores phase, P = exp(S - m') from the exp phase, masked entries
 * shown as such, each row's max marked, and beside them the row max (or
 * the row sum of P).  Rows and keys beyond the pane are windowed: the
 * focused row always shows.  Under a softcap or ALiBi, S is the score
 * the softmax sees, C tanh(x / C) + bias; the focused row has the
 * scaled product x before the cap (line "x") and the ALiBi bias of each
 * entry (line "+b", -slope |r + Tk - Tq - c|, computed from the
 * positions as the kernel does) beneath it while S shows.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

extern const struct ui_pane ui_pane_tile;	/* at the end */

/* The scaled products x of the tile shown (before the cap and the
 * bias), recomputed when the step changes. */
struct ui_pane_tile_data {
	float *x;
	size_t n;
	long step, gen;
};

static void *
ui_pane_tile_init(struct ui *ui)
{
	struct ui_pane_tile_data *d = calloc(1, sizeof *d);

	(void)ui;
	if (d != NULL)
		d->step = -1;
	return d;
}

static void
ui_pane_tile_free(void *data)
{
	struct ui_pane_tile_data *d = data;

	free(d->x);
	free(d);
}

/* Does the problem bend its scores (softcap or ALiBi)? */
static int
ui_pane_tile_bends(const struct problem *p)
{
	return mask_rule_has(p->mask, MASK_SOFTCAP) || p->alibi != NULL;
}

/*
 * x = scale Q_i K_j^T of the current tile, hidden entries -inf: the
 * simulator's own tile scores of the problem without its cap and
 * slopes (the same sums in the same order), or NULL without memory.
 */
static const float *
ui_pane_tile_raw(struct ui *ui)
{
	struct ui_pane_tile_data *d = ui_pane_data(ui, &ui_pane_tile);
	const struct sim_view *v = sim_view(ui->sim);
	struct problem raw = *UI_PROBLEM(ui);
	size_t n = (size_t)v->rows * v->cols;
	float *x;

	if (d == NULL)
		return NULL;
	if (d->x != NULL && d->step == v->step && d->gen == ui->gen &&
	    d->n == n)
		return d->x;
	x = realloc(d->x, (n > 0 ? n : 1) * sizeof *x);
	if (x == NULL)
		return NULL;
	d->x = x;
	raw.mask.softcap = 0.0f;
	raw.alibi = NULL;
	sim_tile_scores(&raw, sim_schedule(ui->sim), &v->tile, x);
	d->n = n;
	d->step = v->step;
	d->gen = ui->gen;
	return x;
}

/* The ALiBi bias of the tile's row `row` (within the tile) and key c
 * (within it): the row's head's slope times its distance from the
 * diagonal. */
static float
ui_pane_tile_bias(const struct ui *ui, int row, int c)
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct schedule *s = sim_schedule(ui->sim);
	const struct sim_view *v = sim_view(ui->sim);
	int out = schedule_row_out(s, v->tile.r0 + row);

	/* + 0 spells the diagonal's -0 as 0. */
	return mask_rule_bias(problem_mask(p, out / p->tq),
	    schedule_row_pos(s, v->tile.r0 + row), v->tile.c0 + c, p->tq,
	    p->tk) + 0.0f;
}

/* Columns of one number, and of one entry with its leading space. */
#define UI_TILE_NW 7
#define UI_TILE_CW (UI_TILE_NW + 1)

static void
ui_pane_tile_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	const struct problem *p = UI_PROBLEM(ui);

	(void)h;
	*minh = 3;
	*wanth = 2 + sim_view(ui->sim)->rows;
	if (ui_pane_tile_bends(p))
		*wanth += mask_rule_has(p->mask, MASK_SOFTCAP) +
		    (p->alibi != NULL);
	*wantw = w;
}

int
ui_pane_tile_window(int first, int focus, int rows, int n)
{
	if (n >= rows)
		return 0;
	if (focus < first)
		first = focus;
	if (focus >= first + n)
		first = focus - n + 1;
	if (first > rows - n)
		first = rows - n;
	return first < 0 ? 0 : first;
}

int
ui_pane_cut_mark(struct ui *ui, struct ui_grid *g, struct ui_rect r,
    int above, int below, int right)
{
	const struct ui_glyphs *gl = ui->gl;
	char b[64];
	int n = 0, w, x, ew, i, cut = 0;
	uint32_t ch;

	b[0] = '\0';
	if (above > 0)
		n += snprintf(b + n, sizeof b - (size_t)n, " +%d%s", above, gl->up);
	if (below > 0 && n < (int)sizeof b)
		n += snprintf(b + n, sizeof b - (size_t)n, " +%d%s", below,
		    gl->down);
	if (right > 0 && n < (int)sizeof b)
		n += snprintf(b + n, sizeof b - (size_t)n, " +%d%s", right,
		    gl->arrow);
	if (n == 0 || r.h < 1)
		return 0;
	w = ui_grid_width(b);
	if (w > r.w)
		w = r.w;
	if (g == NULL)
		return w;
	x = r.x + r.w - w;
	/* A title that reaches the mark is cut: say so where it stops. */
	ew = ui_grid_width(gl->ellipsis);
	for (i = x - 1; i < r.x + r.w && r.y >= 0 && r.y < g->h; i++)
		if (i >= r.x && i < g->w) {
			ch = g->cells[(size_t)r.y * g->w + i].ch;
			cut |= ch != ' ' && ch != 0;
		}
	if (cut && x - ew >= r.x)
		ui_grid_text(g, x - ew, r.y, ew, UI_ROLE_DIM, gl->ellipsis);
	ui_grid_clear(g, (struct ui_rect){ x, r.y, w, 1 }, UI_ROLE_NORMAL);
	ui_grid_text(g, x, r.y, w, UI_ROLE_LABEL, b);
	return w;
}

static void
ui_pane_tile_load(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct problem *p = UI_PROBLEM(ui);
	const struct ui_glyphs *gl = ui->gl;
	struct traffic one;
	char b[32];

	traffic_step(sim_traffic(ui->sim), &v->tile, &one);
	if (p->scores_mode)
		ui_grid_printf(g, r.x, r.y + 1, r.w, UI_ROLE_NORMAL, "S tile %d%s%d "
		    "and V_j %d%s%d into on-chip memory", v->rows, gl->times,
		    v->cols, v->cols, gl->times, p->dv);
	else
		ui_grid_printf(g, r.x, r.y + 1, r.w, UI_ROLE_NORMAL, "Q_i %d%s%d, "
		    "K_j %d%s%d, V_j %d%s%d into on-chip memory", v->rows,
		    gl->times, p->d, v->cols, gl->times, p->d, v->cols, gl->times,
		    p->dv);
	ui_grid_printf(g, r.x, r.y + 2, r.w, UI_ROLE_NORMAL, "read from HBM "
	    "this step: %s%s", util_bytes((double)one.hbm_read, b, sizeof b),
	    sim_schedule(ui->sim)->order == ORDER_FA2 && !v->tile.first_in_row ?
	    " (Q_i stays on chip)" : "");
	ui_grid_text(g, r.x, r.y + 3, r.w, UI_ROLE_DIM,
	    "S = scale Q_i K_j^T comes in the next phase (.)");
}

/*
 * Beneath the focused row (line y): its x before the cap, with the max
 * of x (what the softcap-after-max bug takes) in the max column, and
 * the ALiBi bias of each entry.  Returns the last line written.
 */
static int
ui_pane_tile_under(struct ui *ui, struct ui_grid *g, struct ui_rect r, int y,
    int lw, int nw, int ncols, int cut, const float *raw)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct problem *p = UI_PROBLEM(ui);
	const float *xr = raw + (size_t)ui->focus * v->cols;
	float mx = -INFINITY;
	char b[32];
	int c, x;

	if (mask_rule_has(p->mask, MASK_SOFTCAP) && y + 1 < r.y + r.h) {
		y++;
		ui_grid_right(g, r.x, y, lw - 1, UI_ROLE_DIM, "x");
		for (c = 0, x = r.x + lw; c < ncols && c < v->cols; c++,
		    x += nw + 1)
			if (!(isinf(xr[c]) && xr[c] < 0))
				ui_grid_right(g, x, y, nw + 1, UI_ROLE_DIM,
				    ui_num(ui, xr[c], nw, b, sizeof b));
		for (c = 0; c < v->cols; c++)
			mx = xr[c] > mx ? xr[c] : mx;
		if (cut)
			x += 2;
		ui_grid_text(g, x + 1, y, 1, UI_ROLE_LABEL, ui->gl->vline);
		ui_grid_right(g, x + 2, y, nw, UI_ROLE_DIM,
		    ui_num(ui, mx, nw, b, sizeof b));
	}
	if (p->alibi != NULL && y + 1 < r.y + r.h) {
		y++;
		ui_grid_right(g, r.x, y, lw - 1, UI_ROLE_DIM, lw > 2 ? "+b" : "b");
		for (c = 0, x = r.x + lw; c < ncols && c < v->cols; c++,
		    x += nw + 1)
			if (!(isinf(xr[c]) && xr[c] < 0))
				ui_grid_right(g, x, y, nw + 1, UI_ROLE_DIM,
				    ui_num(ui, ui_pane_tile_bias(ui, ui->focus, c),
				    nw, b, sizeof b));
		if (cut)
			x += 2;
		ui_grid_text(g, x + 1, y, 1, UI_ROLE_LABEL, ui->gl->vline);
	}
	return y;
}

static void
ui_pane_tile_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct ui_glyphs *gl = ui->gl;
	int showp = v->phase >= SIM_PHASE_EXP, showmax = v->phase >= SIM_PHASE_MAX;
	int lw = ui_digits(v->tile.r1 - 1) + 1, ncols, nrows, row, c;
	int x, y, role, n, cut, nw, extra;
	const struct problem *p = UI_PROBLEM(ui);
	const float *m = showp ? v->p : v->s, *raw;
	float s, val;
	char b[32];

	n = ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "tile (%d,%d) ",
	    v->tile.i, v->tile.j);
	if (v->phase == SIM_PHASE_LOAD)
		n += ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_TITLE,
		    "load");
	else if (showp)
		n += ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_TITLE,
		    "P = e^(S-m%s)", gl->prime);
	else if (ui_pane_tile_bends(UI_PROBLEM(ui)))
		n += ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_TITLE,
		    "S = %s%s", mask_rule_has(UI_PROBLEM(ui)->mask, MASK_SOFTCAP) ?
		    "C tanh(x/C)" : "x", UI_PROBLEM(ui)->alibi != NULL ? " + b" : "");
	else if (UI_PROBLEM(ui)->scores_mode)
		n += ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_TITLE,
		    "S (given)");
	else
		n += ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_TITLE,
		    "S = scale%sQ_iK_j%s", gl->dot, gl->transp);
	n += ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_LABEL, "  rows "
	    "%d-%d keys %d-%d", v->tile.r0, v->tile.r1 - 1, v->tile.c0,
	    v->tile.c1 - 1);
	ui_dropout_title(ui, g, r.x + n, r.y, r.w - n);
	if (v->phase == SIM_PHASE_LOAD) {
		ui_pane_tile_load(ui, g, r);
		return;
	}

	/* Wider numbers, more digits, on a large terminal or a zoomed pane
	 * (UI_WIDE_W columns or more) when every key fits wider; at 80
	 * columns the tile keeps the state's five digits. */
	nw = r.w < UI_WIDE_W ? UI_TILE_NW : (r.w - lw - 3) / (v->cols + 1) - 1;
	nw = nw < UI_TILE_NW ? UI_TILE_NW : nw > 11 ? 11 : nw;
	/* Keys that fit beside the row labels and the max / sum column. */
	ncols = (r.w - lw - (nw + 1) - 2) / (nw + 1);
	cut = ncols < v->cols;
	if (cut)
		ncols--;
	if (ncols < 1)
		ncols = 1;
	/* The focused row's x and bias lines, while S shows. */
	extra = showp || !ui_pane_tile_bends(p) ? 0 :
	    mask_rule_has(p->mask, MASK_SOFTCAP) + (p->alibi != NULL);
	raw = extra > 0 ? ui_pane_tile_raw(ui) : NULL;
	if (raw == NULL)
		extra = 0;
	nrows = r.h - 2 - extra;
	if (nrows < 1) {
		nrows = r.h - 2;
		extra = 0;
	}
	ui->tile_first = ui_pane_tile_window(ui->tile_first, ui->focus, v->rows,
	    nrows);

	y = r.y + 1;
	x = r.x + lw;
	for (c = 0; c < ncols && c < v->cols; c++, x += (nw + 1))
		ui_grid_printf(g, x, y, (nw + 1), UI_ROLE_LABEL, "%*s%d",
		    (nw + 1) - ui_digits(v->tile.c0 + c) - 1, "k",
		    v->tile.c0 + c);
	if (cut)
		x += ui_grid_printf(g, x + 1, y, -1, UI_ROLE_LABEL, "%s",
		    gl->ellipsis) + 1;
	ui_grid_text(g, x + 1, y, 1, UI_ROLE_LABEL, gl->vline);
	snprintf(b, sizeof b, "%sp", gl->sum);
	ui_grid_right(g, x + 2, y, nw, UI_ROLE_LABEL, showp ? b : "max");

	for (row = ui->tile_first; row < v->rows && y + 1 < r.y + r.h; row++) {
		y++;
		role = row == ui->focus ? UI_ROLE_FOCUS : UI_ROLE_LABEL;
		ui_grid_text(g, r.x, y, 1, UI_ROLE_FOCUS,
		    row == ui->focus ? gl->focus : " ");
		ui_grid_printf(g, r.x + 1, y, lw - 1, role, "%*d", lw - 1,
		    v->tile.r0 + row);
		x = r.x + lw;
		for (c = 0; c < ncols && c < v->cols; c++, x += (nw + 1)) {
			s = v->s[(size_t)row * v->cols + c];
			val = m[(size_t)row * v->cols + c];
			/* Masked: S = -inf, so P = 0. */
			if (isinf(s) && s < 0) {
				ui_grid_right(g, x, y, (nw + 1), UI_ROLE_MASKED,
				    showp ? "0" : gl->ninf);
				continue;
			}
			role = showmax && s == v->rowmax[row] ? UI_ROLE_ROW_MAX :
			    UI_ROLE_NORMAL;
			ui_grid_right(g, x, y, (nw + 1), role,
			    ui_num(ui, val, nw, b, sizeof b));
			/* dropped by dropout, marked just before its P: P V
			 * reads 0 here, the row sum still counts it */
			if (showp && ui_dropout_dropped(ui, v, row, c))
				ui_grid_text(g, x + nw - ui_grid_width(b), y, 1,
				    UI_ROLE_MASKED, "x");
		}
		if (cut)
			x += ui_grid_printf(g, x + 1, y, -1, UI_ROLE_DIM, "%s",
			    gl->ellipsis) + 1;
		ui_grid_text(g, x + 1, y, 1, UI_ROLE_LABEL, gl->vline);
		if (showp)
			ui_grid_right(g, x + 2, y, nw, UI_ROLE_NORMAL,
			    ui_num(ui, v->rowsum[row], nw, b, sizeof b));
		else if (showmax)
			ui_grid_right(g, x + 2, y, nw, UI_ROLE_ROW_MAX,
			    ui_num(ui, v->rowmax[row], nw, b, sizeof b));
		else
			ui_grid_right(g, x + 2, y, nw, UI_ROLE_DIM, "?");
		if (row == ui->focus && extra > 0)
			y = ui_pane_tile_under(ui, g, r, y, lw, nw, ncols, cut, raw);
	}
	ui_pane_cut_mark(ui, g, r, ui->tile_first, v->rows - row,
	    v->cols > ncols ? v->cols - ncols : 0);
}

/* A click on a row focuses it (the focused row's x and bias lines
 * count as the focused row). */
static int
ui_pane_tile_key(struct ui *ui, const struct ui_key *k, struct ui_rect r)
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct sim_view *v = sim_view(ui->sim);
	int row = ui->tile_first + k->y - (r.y + 2);
	int extra = v->phase >= SIM_PHASE_EXP || v->phase == SIM_PHASE_LOAD ?
	    0 : mask_rule_has(p->mask, MASK_SOFTCAP) + (p->alibi != NULL);

	if (row > ui->focus && extra > 0)
		row = row - extra > ui->focus ? row - extra : ui->focus;

	if (k->y >= r.y + 2 && row < sim_view(ui->sim)->rows)
		ui_set_focus(ui, row);
	return UI_HANDLED;
}

const struct ui_pane ui_pane_tile = {
	.name = "tile",
	.init = ui_pane_tile_init,
	.free = ui_pane_tile_free,
	.size = ui_pane_tile_size,
	.draw = ui_pane_tile_draw,
	.handle_key = ui_pane_tile_key,
};
