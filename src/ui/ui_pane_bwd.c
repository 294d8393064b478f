/*
 * ui_pane_bwd.c - the backward's tables.  The tile: S = scale Q_i K_j^T
 * recomputed at the scores phase, P = exp(S - lse) from P, dP = dO_i
 * V_j^T from dP, dS = P o (dP - D) from dS, with each row's lse or D
 * beside.  The query rows: lse and D (read from HBM) and dQ_i, which
 * lives in HBM: read, added to and written back on every tile.  The key
 * block: dK_j and dV_j, on chip for the whole inner loop and written to
 * HBM once, at the key block's last tile.  A value shows from the phase
 * that computes it; those this step changed are highlighted.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define UI_BWD_NW 7
#define UI_BWD_CW (UI_BWD_NW + 1)

static void
ui_pane_bwd_rows_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	(void)h;
	*minh = 3;
	*wanth = 2 + (ui->line.bwd != NULL ? ui_bwd_view(ui)->rows : 1);
	*wantw = w;
}

static void
ui_pane_bwd_keys_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	(void)h;
	*minh = 3;
	*wanth = 2 + (ui->line.bwd != NULL ? ui_bwd_view(ui)->cols : 1);
	*wantw = w;
}

/* The focus marker and label of a row (or key) at y. */
static void
ui_pane_bwd_label(struct ui *ui, struct ui_grid *g, int x, int y, int lw,
    int focused, const char *prefix, int n)
{
	ui_grid_text(g, x, y, 1, UI_ROLE_FOCUS, focused ? ui->gl->focus : " ");
	ui_grid_printf(g, x + 1, y, lw - 1, focused ? UI_ROLE_FOCUS :
	    UI_ROLE_LABEL, "%s%*d", prefix, lw - 1 - (int)strlen(prefix), n);
}

/* ---- the tile ---- */

/* Which matrix the tile shows at a phase, its name into buf. */
static const float *
ui_pane_bwd_matrix(const struct ui *ui, const struct backward_view *v,
    char *buf, size_t len)
{
	const struct ui_glyphs *gl = ui->gl;

	if (v->phase >= BWD_PHASE_DS) {
		snprintf(buf, len, "dS = P%s(dP-D)", gl->circ);
		return v->ds;
	}
	if (v->phase >= BWD_PHASE_DP) {
		snprintf(buf, len, "dP = dO_iV_j%s", gl->transp);
		return v->dp;
	}
	if (v->phase >= BWD_PHASE_P) {
		snprintf(buf, len, "P = e^(S-lse)");
		return v->p;
	}
	if (UI_PROBLEM(ui)->scores_mode)
		snprintf(buf, len, "S (given)");
	else
		snprintf(buf, len, "S = scale%sQ_iK_j%s again", gl->dot, gl->transp);
	return v->s;
}

/* The keys the tile shows in w columns: from *first, *ncols of them, *cut
 * when some do not fit (the focused key always does). */
static void
ui_pane_bwd_tile_cols(const struct ui *ui, int w, int *first, int *ncols,
    int *cut)
{
	const struct backward_view *v = ui_bwd_view(ui);
	int lw = ui_digits(v->tile.r1 - 1) + 1;

	*ncols = (w - lw - UI_BWD_CW - 2) / UI_BWD_CW;
	*cut = *ncols < v->cols;
	if (*cut)
		(*ncols)--;
	if (*ncols < 1)
		*ncols = 1;
	*first = ui_pane_tile_window(0, ui->focus_key, v->cols, *ncols);
}

static void
ui_pane_bwd_tile_load(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct backward_view *v = ui_bwd_view(ui);
	const struct problem *p = UI_PROBLEM(ui);
	const struct ui_glyphs *gl = ui->gl;
	struct traffic one;
	char b[32];

	traffic_backward_step_through(backward_traffic(ui->line.bwd), &v->tile,
	    TRAFFIC_BWD_LOAD, &one);
	if (p->scores_mode)
		ui_grid_printf(g, r.x, r.y + 1, r.w, UI_ROLE_NORMAL, "S tile, dO_i "
		    "%d%s%d, lse_i, D_i%s into on-chip memory", v->rows, gl->times,
		    p->dv, v->tile.first_in_outer ? ", V_j" : "");
	else
		ui_grid_printf(g, r.x, r.y + 1, r.w, UI_ROLE_NORMAL, "Q_i %d%s%d, "
		    "dO_i %d%s%d, lse_i, D_i%s into on-chip memory", v->rows,
		    gl->times, p->d, v->rows, gl->times, p->dv,
		    v->tile.first_in_outer ? ", K_j, V_j" : "");
	ui_grid_printf(g, r.x, r.y + 2, r.w, UI_ROLE_NORMAL, "read from HBM this "
	    "step: %s%s", util_bytes((double)one.hbm_read, b, sizeof b),
	    v->tile.first_in_outer ? " (key block j starts: dK_j = dV_j = 0 "
	    "on chip)" : " (K_j, V_j stay on chip)");
	ui_grid_text(g, r.x, r.y + 3, r.w, UI_ROLE_DIM, "no P was stored: S and "
	    "P are recomputed from Q, K and lse (.)");
}

static void
ui_pane_bwd_tile_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct backward_view *v = ui_bwd_view(ui);
	const struct ui_glyphs *gl = ui->gl;
	int lw = ui_digits(v->tile.r1 - 1) + 1, ncols, row, c, x, y, n, cut;
	int use_d = v->phase >= BWD_PHASE_DP, first;
	char b[32], name[48];
	const float *m = ui_pane_bwd_matrix(ui, v, name, sizeof name), *side;
	float s;

	n = ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "tile (%d,%d) %s",
	    v->tile.i, v->tile.j, v->phase == BWD_PHASE_LOAD ? "load" : name);
	ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_LABEL, "  rows %d-%d "
	    "keys %d-%d", v->tile.r0, v->tile.r1 - 1, v->tile.c0, v->tile.c1 - 1);
	if (v->phase == BWD_PHASE_LOAD) {
		ui_pane_bwd_tile_load(ui, g, r);
		return;
	}
	/* Keys that fit beside the row labels and the lse / D column. */
	ui_pane_bwd_tile_cols(ui, r.w, &first, &ncols, &cut);
	ui->tile_first = ui_pane_tile_window(ui->tile_first, ui->focus, v->rows,
	    r.h - 2);
	side = use_d ? v->dsum : v->lse;
	y = r.y + 1;
	x = r.x + lw;
	for (c = first; c < first + ncols && c < v->cols; c++, x += UI_BWD_CW)
		ui_grid_printf(g, x, y, UI_BWD_CW, c == ui->focus_key ?
		    UI_ROLE_FOCUS : UI_ROLE_LABEL, "%*s%d",
		    UI_BWD_CW - ui_digits(v->tile.c0 + c) - 1, "k", v->tile.c0 + c);
	if (cut)
		x += ui_grid_printf(g, x + 1, y, -1, UI_ROLE_LABEL, "%s",
		    gl->ellipsis) + 1;
	ui_grid_text(g, x + 1, y, 1, UI_ROLE_LABEL, gl->vline);
	ui_grid_right(g, x + 2, y, UI_BWD_NW, UI_ROLE_LABEL, use_d ? "D" : "lse");
	for (row = ui->tile_first; row < v->rows && y + 1 < r.y + r.h; row++) {
		y++;
		ui_pane_bwd_label(ui, g, r.x, y, lw, row == ui->focus, "",
		    v->tile.r0 + row);
		x = r.x + lw;
		for (c = first; c < first + ncols && c < v->cols; c++,
		    x += UI_BWD_CW) {
			s = v->s[(size_t)row * v->cols + c];
			/* Masked: S = -inf, so P = dS = 0. */
			if (isinf(s) && s < 0) {
				ui_grid_right(g, x, y, UI_BWD_CW, UI_ROLE_MASKED,
				    m == v->s ? gl->ninf : "0");
				continue;
			}
			ui_grid_right(g, x, y, UI_BWD_CW, row == ui->focus &&
			    c == ui->focus_key ? UI_ROLE_FOCUS : UI_ROLE_NORMAL,
			    ui_num(ui, m[(size_t)row * v->cols + c], UI_BWD_NW, b,
			    sizeof b));
		}
		if (cut)
			x += ui_grid_printf(g, x + 1, y, -1, UI_ROLE_DIM, "%s",
			    gl->ellipsis) + 1;
		ui_grid_text(g, x + 1, y, 1, UI_ROLE_LABEL, gl->vline);
		ui_grid_right(g, x + 2, y, UI_BWD_NW, UI_ROLE_NORMAL,
		    ui_num(ui, side[row], UI_BWD_NW, b, sizeof b));
	}
	ui_pane_cut_mark(ui, g, r, ui->tile_first, v->rows - row,
	    v->cols - (first + ncols < v->cols ? first + ncols : v->cols) +
	    first);
}

/* A click on a row focuses it, on a key's column that key. */
static int
ui_pane_bwd_tile_key(struct ui *ui, const struct ui_key *k, struct ui_rect r)
{
	const struct backward_view *v = ui_bwd_view(ui);
	int row = ui->tile_first + k->y - (r.y + 2);
	int lw = ui_digits(v->tile.r1 - 1) + 1, ncols, first, cut, c;

	ui_pane_bwd_tile_cols(ui, r.w, &first, &ncols, &cut);
	c = k->x >= r.x + lw ? first + (k->x - r.x - lw) / UI_BWD_CW : -1;
	if (k->y >= r.y + 2 && row < v->rows)
		ui_set_focus(ui, row);
	if (c >= 0 && c < v->cols && c < first + ncols) {
		ui->focus_key = c;
		ui_clamp_focus(ui);
	}
	return UI_HANDLED;
}

/* ---- the query rows: lse, D, dQ_i ---- */

static void
ui_pane_bwd_rows_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct backward_view *v = ui_bwd_view(ui);
	const struct ui_glyphs *gl = ui->gl;
	int has = v->phase >= BWD_PHASE_DQ, lw = ui_digits(v->tile.r1 - 1) + 1;
	int aw = ui_grid_width(gl->arrow) + 2, ne, e, x, y, row;
	const float *dq = has ? v->dq_new : v->dq_old;
	char b[32];

	if (v->d == 0) {
		ui_grid_text(g, r.x, r.y, r.w, UI_ROLE_TITLE, "query rows: lse, D "
		    "from HBM (the gradient is dS, to HBM at dS)");
	} else
		ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "query rows: dQ_i "
		    "in HBM: read, add, write back%s", v->tile.last_in_row && has ?
		    " (complete)" : "");
	y = r.y + 1;
	x = r.x + lw + 1;
	ui_grid_right(g, x, y, UI_BWD_NW, UI_ROLE_LABEL, "lse");
	ui_grid_right(g, x + UI_BWD_CW, y, UI_BWD_NW, UI_ROLE_LABEL, "D");
	x += 2 * UI_BWD_CW + 1;
	ne = v->d > 0 ? (r.x + r.w - x - aw - UI_BWD_CW) / UI_BWD_CW : 0;
	if (ne > v->d)
		ne = v->d;
	if (ne < 0)
		ne = 0;
	if (v->d > 0) {
		ui_grid_right(g, x, y, UI_BWD_NW, UI_ROLE_LABEL, "dQ[0]");
		ui_grid_text(g, x + UI_BWD_CW, y, -1, UI_ROLE_LABEL, gl->arrow);
		for (e = 0; e < ne; e++) {
			snprintf(b, sizeof b, "dQ%s[%d]", has ? gl->prime : "", e);
			ui_grid_right(g, x + UI_BWD_NW + aw + e * UI_BWD_CW, y,
			    UI_BWD_NW + 1, UI_ROLE_LABEL, b);
		}
	}
	ui->state_first = ui_pane_tile_window(ui->state_first, ui->focus, v->rows,
	    r.h - 2);
	for (row = ui->state_first; row < v->rows && y + 1 < r.y + r.h; row++) {
		y++;
		ui_pane_bwd_label(ui, g, r.x, y, lw, row == ui->focus, "",
		    v->tile.r0 + row);
		x = r.x + lw + 1;
		ui_state_num(ui, g, x, y, UI_BWD_NW, 1, v->lse[row], 0);
		ui_state_num(ui, g, x + UI_BWD_CW, y, UI_BWD_NW, 1, v->dsum[row], 0);
		if (v->d == 0)
			continue;
		x += 2 * UI_BWD_CW + 1;
		ui_state_num(ui, g, x, y, UI_BWD_NW, 1, v->dq_old[(size_t)row * v->d],
		    0);
		ui_grid_text(g, x + UI_BWD_CW, y, -1, UI_ROLE_LABEL, gl->arrow);
		for (e = 0; e < ne; e++) {
			size_t at = (size_t)row * v->d + e;
			ui_state_num(ui, g, x + UI_BWD_NW + aw + e * UI_BWD_CW + 1, y,
			    UI_BWD_NW, has, dq[at], v->dq_new[at] != v->dq_old[at]);
		}
	}
	ui_pane_cut_mark(ui, g, r, ui->state_first, v->rows - row,
	    v->d > ne ? v->d - ne : 0);
}

static int
ui_pane_bwd_rows_key(struct ui *ui, const struct ui_key *k, struct ui_rect r)
{
	int row = ui->state_first + k->y - (r.y + 2);

	if (k->y >= r.y + 2 && row < ui_bwd_view(ui)->rows)
		ui_set_focus(ui, row);
	return UI_HANDLED;
}

/* ---- the key block: dK_j, dV_j ---- */

static void
ui_pane_bwd_keys_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct backward_view *v = ui_bwd_view(ui);
	const struct ui_glyphs *gl = ui->gl;
	int has_v = v->phase >= BWD_PHASE_DV, has_k = v->phase >= BWD_PHASE_DK;
	int lw = ui_digits(v->tile.c1 - 1) + 2, nv, nk, e, x, y, c;
	char b[32];

	ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "key block %d: %s on "
	    "chip; %s", v->tile.j, v->d > 0 ? "dK_j, dV_j" : "dV_j",
	    v->phase == BWD_PHASE_WRITE ?
	    "to HBM now, once" : v->last_in_key ? "to HBM after this tile" :
	    "to HBM after its last tile");
	/* dV entries first (they come first), then dK's, as many as fit. */
	nv = (r.w - lw - 1) / UI_BWD_CW;
	nk = v->d > 0 ? nv / 2 : 0;
	nv -= nk;
	if (nv > v->dv)
		nv = v->dv;
	if (nk > v->d)
		nk = v->d;
	y = r.y + 1;
	x = r.x + lw + 1;
	for (e = 0; e < nv; e++, x += UI_BWD_CW) {
		snprintf(b, sizeof b, "dV%s[%d]", has_v ? gl->prime : "", e);
		ui_grid_right(g, x, y, UI_BWD_CW, UI_ROLE_LABEL, b);
	}
	for (e = 0; e < nk; e++, x += UI_BWD_CW) {
		snprintf(b, sizeof b, "dK%s[%d]", has_k ? gl->prime : "", e);
		ui_grid_right(g, x, y, UI_BWD_CW, UI_ROLE_LABEL, b);
	}
	ui->keys_first = ui_pane_tile_window(ui->keys_first, ui->focus_key,
	    v->cols, r.h - 2);
	for (c = ui->keys_first; c < v->cols && y + 1 < r.y + r.h; c++) {
		y++;
		ui_pane_bwd_label(ui, g, r.x, y, lw, c == ui->focus_key, "k",
		    v->tile.c0 + c);
		x = r.x + lw + 1;
		for (e = 0; e < nv; e++, x += UI_BWD_CW) {
			size_t at = (size_t)c * v->dv + e;
			ui_state_num(ui, g, x + 1, y, UI_BWD_NW, 1, has_v ?
			    v->dv_new[at] : v->dv_old[at], has_v &&
			    v->dv_new[at] != v->dv_old[at]);
		}
		for (e = 0; e < nk; e++, x += UI_BWD_CW) {
			size_t at = (size_t)c * v->d + e;
			ui_state_num(ui, g, x + 1, y, UI_BWD_NW, 1, has_k ?
			    v->dk_new[at] : v->dk_old[at], has_k &&
			    v->dk_new[at] != v->dk_old[at]);
		}
	}
	ui_pane_cut_mark(ui, g, r, ui->keys_first, v->cols - c,
	    (v->dv - nv) + (v->d - nk));
}

static int
ui_pane_bwd_keys_key(struct ui *ui, const struct ui_key *k, struct ui_rect r)
{
	int c = ui->keys_first + k->y - (r.y + 2);

	if (k->y >= r.y + 2 && c < ui_bwd_view(ui)->cols) {
		ui->focus_key = c;
		ui_clamp_focus(ui);
	}
	return UI_HANDLED;
}

const struct ui_pane ui_pane_bwd_tile = {
	.name = "backward tile",
	.size = ui_pane_bwd_rows_size,
	.draw = ui_pane_bwd_tile_draw,
	.handle_key = ui_pane_bwd_tile_key,
};

const struct ui_pane ui_pane_bwd_rows = {
	.name = "query rows",
	.size = ui_pane_bwd_rows_size,
	.draw = ui_pane_bwd_rows_draw,
	.handle_key = ui_pane_bwd_rows_key,
};

const struct ui_pane ui_pane_bwd_keys = {
	.name = "key block",
	.size = ui_pane_bwd_keys_size,
	.draw = ui_pane_bwd_keys_draw,
	.handle_key = ui_pane_bwd_keys_key,
};
