/*
 * ui_pane_split.c - the combine's tables (split-KV).  The partials: for
 * each row of the row block being merged, every key range's partial
 * side by side, (m, l, u[0]) or (lse, o[0]) as the forward left them,
 * an empty one (a range the mask hides, or no keys) shown as such; the
 * ranges the current merge reads are marked, those merged already dim.
 * The merge: its two operands' maxima, the merged max, the weights, l
 * and u[0] per row (O and lse once the block's last merge finalizes),
 * each from the phase that computes it.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define UI_SPLIT_NW 6
#define UI_SPLIT_CW (UI_SPLIT_NW + 1)

extern const struct ui_pane ui_pane_parts;	/* at the end */

/* The partials pane's own: its window over the key ranges (the rows'
 * window is the slot's, ui->tile_first). */
struct ui_pane_parts_data {
	int first;		/* key range shown first */
};

static void *
ui_pane_parts_init(struct ui *ui)
{
	(void)ui;
	return calloc(1, sizeof(struct ui_pane_parts_data));
}

static void
ui_pane_parts_free(void *data)
{
	free(data);
}

static void
ui_pane_split_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	(void)h;
	*minh = 4;
	*wanth = 3 + (ui->line.comb != NULL ? ui_comb_view(ui)->rows : 1);
	*wantw = w;
}

/* The focus marker and row label of row `row` of the block at y. */
static void
ui_pane_split_label(struct ui *ui, struct ui_grid *g, int x, int y, int lw,
    int row, int r0)
{
	ui_grid_text(g, x, y, 1, UI_ROLE_FOCUS, row == ui->focus ?
	    ui->gl->focus : " ");
	ui_grid_printf(g, x + 1, y, lw - 1, row == ui->focus ? UI_ROLE_FOCUS :
	    UI_ROLE_LABEL, "%*d", lw - 1, r0 + row);
}

/* How partial s stands at merge n of the plan: read by it (2), merged
 * by an earlier merge (1), still ahead (0). */
static int
ui_pane_parts_state(const struct combine *c, int n, int s)
{
	const struct combine_merge *plan = combine_plan(c);
	int k;

	for (k = 0; k <= n; k++)
		if ((plan[k].a.source == COMBINE_PARTIAL && plan[k].a.index == s) ||
		    (plan[k].b.source == COMBINE_PARTIAL && plan[k].b.index == s))
			return k == n ? 2 : 1;
	return 0;
}

static void
ui_pane_parts_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct combine_view *v = ui_comb_view(ui);
	const struct sim_partials *pt = sim_partials(ui->sim);
	const struct schedule *sc = sim_schedule(ui->sim);
	const struct ui_glyphs *gl = ui->gl;
	struct ui_pane_parts_data *ps = ui_pane_data(ui, &ui_pane_parts);
	int olse = pt->form == MERGE_OLSE, nv = olse ? 2 : 3;
	int gw = nv * UI_SPLIT_CW + 1, lw = ui_digits(v->r1 - 1) + 1;
	int ngroups, first, focus_s, s, x, y, row, j0, j1, st, role;
	char b[48];

	if (ps == NULL) {
		ui_grid_text(g, r.x, r.y, r.w, UI_ROLE_ERROR, "partials: out of "
		    "memory");
		return;
	}
	if (olse)
		ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "partials of row "
		    "block %d, one per key range: (o, lse)", v->block);
	else
		ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "partials of row "
		    "block %d, one per key range: (m, %s, u)", v->block, gl->ell);
	/* The ranges that fit, from one that shows the partial the merge
	 * reads now. */
	ngroups = (r.w - lw - 1) / gw;
	if (ngroups < 1)
		ngroups = 1;
	focus_s = v->op.b.source == COMBINE_PARTIAL ? v->op.b.index :
	    v->op.a.source == COMBINE_PARTIAL ? v->op.a.index : 0;
	first = ui_pane_tile_window(ps->first, focus_s, pt->splits, ngroups);
	ps->first = first;
	for (s = first; s < pt->splits && s < first + ngroups; s++) {
		x = r.x + lw + 1 + (s - first) * gw;
		st = ui_pane_parts_state(ui->line.comb, v->merge, s);
		role = st == 2 ? UI_ROLE_TILE_CURRENT : st == 1 ? UI_ROLE_DIM :
		    UI_ROLE_LABEL;
		schedule_split_range(sc, v->block, s, &j0, &j1);
		if (j0 == j1)
			snprintf(b, sizeof b, "P%d no keys", s);
		else
			snprintf(b, sizeof b, "P%d keys %d-%d", s, j0 * sc->bc,
			    (j1 * sc->bc < sc->tk ? j1 * sc->bc : sc->tk) - 1);
		ui_grid_text(g, x, r.y + 1, gw - 1, role, b);
		ui_grid_right(g, x, r.y + 2, UI_SPLIT_NW, UI_ROLE_LABEL,
		    olse ? "lse" : "m");
		ui_grid_right(g, x + UI_SPLIT_CW, r.y + 2, UI_SPLIT_NW,
		    UI_ROLE_LABEL, olse ? "o[0]" : gl->ell);
		if (!olse)
			ui_grid_right(g, x + 2 * UI_SPLIT_CW, r.y + 2, UI_SPLIT_NW,
			    UI_ROLE_LABEL, "u[0]");
		ui_grid_text(g, x + gw - 1, r.y + 1, 1, UI_ROLE_DIM, gl->vline);
		ui_grid_text(g, x + gw - 1, r.y + 2, 1, UI_ROLE_DIM, gl->vline);
	}
	if (first + ngroups < pt->splits)
		ui_grid_text(g, r.x + r.w - 1, r.y + 1, 1, UI_ROLE_DIM, gl->ellipsis);

	ui->tile_first = ui_pane_tile_window(ui->tile_first, ui->focus, v->rows,
	    r.h - 3);
	y = r.y + 2;
	for (row = ui->tile_first; row < v->rows && y + 1 < r.y + r.h; row++) {
		size_t e0 = (size_t)(v->r0 + row) * pt->splits;

		y++;
		ui_pane_split_label(ui, g, r.x, y, lw, row, v->r0);
		for (s = first; s < pt->splits && s < first + ngroups; s++) {
			size_t e = e0 + (size_t)s;
			float m = olse ? pt->lse[e] : pt->m[e];

			x = r.x + lw + 1 + (s - first) * gw;
			st = ui_pane_parts_state(ui->line.comb, v->merge, s);
			role = st == 2 ? UI_ROLE_VALUE_CHANGED : st == 1 ?
			    UI_ROLE_DIM : UI_ROLE_NORMAL;
			if (m == -INFINITY) {
				/* merges as nothing: weight 0 */
				ui_grid_text(g, x + 1, y, gw - 2, UI_ROLE_MASKED,
				    "empty");
			} else {
				ui_grid_right(g, x, y, UI_SPLIT_NW, role,
				    ui_num(ui, m, UI_SPLIT_NW, b, sizeof b));
				ui_grid_right(g, x + UI_SPLIT_CW, y, UI_SPLIT_NW, role,
				    ui_num(ui, olse ? pt->o[e * pt->dv] : pt->l[e],
				    UI_SPLIT_NW, b, sizeof b));
				if (!olse)
					ui_grid_right(g, x + 2 * UI_SPLIT_CW, y,
					    UI_SPLIT_NW, role, ui_num(ui, pt->u[e * pt->dv],
					    UI_SPLIT_NW, b, sizeof b));
			}
			ui_grid_text(g, x + gw - 1, y, 1, UI_ROLE_DIM, gl->vline);
		}
	}
	ui_pane_cut_mark(ui, g, r, ui->tile_first, v->rows - row,
	    pt->splits - (first + ngroups < pt->splits ? first + ngroups :
	    pt->splits) + first);
}

/* An operand in words: "empty", "P2", "s0". */
static const char *
ui_pane_split_operand(struct combine_operand x, char *buf, size_t len)
{
	if (x.source == COMBINE_EMPTY)
		snprintf(buf, len, "empty");
	else
		snprintf(buf, len, "%s%d", x.source == COMBINE_PARTIAL ? "P" : "s",
		    x.index);
	return buf;
}

static void
ui_pane_merge_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct combine_view *v = ui_comb_view(ui);
	const struct ui_glyphs *gl = ui->gl;
	int olse = combine_form(ui->line.comb) == MERGE_OLSE;
	int has_m = v->phase >= COMBINE_PHASE_MAX;
	int has_w = v->phase >= COMBINE_PHASE_WEIGHTS;
	int has_u = v->phase >= COMBINE_PHASE_UPDATE;
	int fin = v->phase >= COMBINE_PHASE_FINALIZE;
	int lw = ui_digits(v->r1 - 1) + 1, aw = ui_grid_width(gl->arrow) + 2;
	int x, y, row, c;
	char a[16], b[16];
	const char *cols[7];
	int ncols = 0;

	ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "merge %d of %d: s%d = "
	    "%s + %s%s", v->merge + 1, combine_merges(ui->line.comb), v->op.dst,
	    ui_pane_split_operand(v->op.a, a, sizeof a),
	    ui_pane_split_operand(v->op.b, b, sizeof b), fin ?
	    "  (finalized: O, lse)" : v->last ? "" : "  (s: on chip)");
	/* Columns: a's and b's max | merged max | weights | l | u[0] (or
	 * O[0] and lse once finalized) */
	cols[ncols++] = olse ? "lse_a" : "m_a";
	cols[ncols++] = olse ? "lse_b" : "m_b";
	cols[ncols++] = olse ? "lse" : "m";
	cols[ncols++] = "w_a";
	cols[ncols++] = "w_b";
	if (fin) {
		cols[ncols++] = "O[0]";
		cols[ncols++] = "lse";
	} else {
		if (!olse)
			cols[ncols++] = gl->ell;
		cols[ncols++] = olse ? "o[0]" : "u[0]";
	}
	y = r.y + 1;
	for (x = r.x + lw + 1, c = 0; c < ncols; c++) {
		ui_grid_right(g, x, y, UI_SPLIT_NW, UI_ROLE_LABEL, cols[c]);
		x += UI_SPLIT_CW + (c == 1 ? aw : 0);
		if (c == 1)
			ui_grid_text(g, x - aw + 1, y, -1, UI_ROLE_LABEL, gl->arrow);
	}
	ui->state_first = ui_pane_tile_window(ui->state_first, ui->focus, v->rows,
	    r.h - 2);
	for (row = ui->state_first; row < v->rows && y + 1 < r.y + r.h; row++) {
		size_t at = (size_t)row * v->dv;

		y++;
		ui_pane_split_label(ui, g, r.x, y, lw, row, v->r0);
		x = r.x + lw + 1;
		ui_state_num(ui, g, x, y, UI_SPLIT_NW, 1, v->m_a[row], 0);
		x += UI_SPLIT_CW;
		ui_state_num(ui, g, x, y, UI_SPLIT_NW, 1, v->m_b[row], 0);
		x += UI_SPLIT_CW;
		ui_grid_text(g, x + 1, y, -1, UI_ROLE_LABEL, gl->arrow);
		x += aw;
		/* olse: the merged lse comes with the weights */
		ui_state_num(ui, g, x, y, UI_SPLIT_NW, olse ? has_w : has_m,
		    v->m[row], 1);
		x += UI_SPLIT_CW;
		ui_state_num(ui, g, x, y, UI_SPLIT_NW, has_w, v->w_a[row],
		    v->w_a[row] != 1.0f);
		x += UI_SPLIT_CW;
		ui_state_num(ui, g, x, y, UI_SPLIT_NW, has_w, v->w_b[row],
		    v->w_b[row] != 1.0f);
		x += UI_SPLIT_CW;
		if (fin) {
			ui_state_num(ui, g, x, y, UI_SPLIT_NW, 1, v->o[at], 1);
			ui_state_num(ui, g, x + UI_SPLIT_CW, y, UI_SPLIT_NW, 1,
			    v->lse[row], 1);
			continue;
		}
		if (!olse) {
			ui_state_num(ui, g, x, y, UI_SPLIT_NW, has_u, v->l[row], 1);
			x += UI_SPLIT_CW;
		}
		ui_state_num(ui, g, x, y, UI_SPLIT_NW, has_u, v->u[at], 1);
	}
	ui_pane_cut_mark(ui, g, r, ui->state_first, v->rows - row, 0);
}

/* A click on a row focuses it. */
static int
ui_pane_split_key(struct ui *ui, const struct ui_key *k, struct ui_rect r,
    int first, int top)
{
	int row = first + k->y - (r.y + top);

	if (k->y >= r.y + top && row < ui_comb_view(ui)->rows)
		ui_set_focus(ui, row);
	return UI_HANDLED;
}

static int
ui_pane_parts_key(struct ui *ui, const struct ui_key *k, struct ui_rect r)
{
	return ui_pane_split_key(ui, k, r, ui->tile_first, 3);
}

static int
ui_pane_merge_key(struct ui *ui, const struct ui_key *k, struct ui_rect r)
{
	return ui_pane_split_key(ui, k, r, ui->state_first, 2);
}

const struct ui_pane ui_pane_parts = {
	.name = "partials",
	.init = ui_pane_parts_init,
	.free = ui_pane_parts_free,
	.size = ui_pane_split_size,
	.draw = ui_pane_parts_draw,
	.handle_key = ui_pane_parts_key,
};

const struct ui_pane ui_pane_merge = {
	.name = "merge",
	.size = ui_pane_split_size,
	.draw = ui_pane_merge_draw,
	.handle_key = ui_pane_merge_key,
};
