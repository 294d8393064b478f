/*
 * ui_layout.c - where the panes go.  Header on top, status line and key
 * bar at the bottom; between them the score heatmap on the left, as wide
 * as it wants, and on the right a stack of tile, running state,
 * equations, counters and (when lines are left) the focused row's
 * history.  Each pane of the stack gets its minimum
 * height; the rest goes first to the tile and the state in turn, then
 * to the equations, counters and history, up to what each wants: a larger
 * terminal shows more rows, more columns and more of u.
 */
#include "config.h"

#include "ui_int.h"

#include <limits.h>

/* Narrowest heatmap and right-hand stack that still read well. */
#define UI_LAYOUT_HEAT_MIN_W 14
#define UI_LAYOUT_RIGHT_MIN_W 58
/* Lines the tile and state panes get before the equations grow: a title,
 * a heading and six rows. */
#define UI_LAYOUT_FEW 8

/* The right-hand stack, top to bottom: a new pane is a row here (and a
 * slot in ui_int.h). */
static const struct {
	const struct ui_pane *pane;
	enum ui_slot slot;
} ui_layout_stack[] = {
	{ &ui_pane_tile, UI_SLOT_TILE },
	{ &ui_pane_state, UI_SLOT_STATE },
	{ &ui_pane_eq, UI_SLOT_EQ },
	{ &ui_pane_count, UI_SLOT_COUNT },
	{ &ui_pane_history, UI_SLOT_HISTORY },
};
#define UI_LAYOUT_STACK (sizeof ui_layout_stack / sizeof ui_layout_stack[0])

void
ui_layout_min(const struct ui *ui, int *w, int *h)
{
	int minh, wanth, wantw, sum = 0;
	size_t i;

	for (i = 0; i < UI_LAYOUT_STACK; i++) {
		ui_layout_stack[i].pane->size(ui, UI_LAYOUT_RIGHT_MIN_W, 0, &minh,
		    &wanth, &wantw);
		sum += minh;
	}
	*w = UI_LAYOUT_RIGHT_MIN_W;
	if (!(ui->hidden & UI_HIDE_HEATMAP))
		*w += UI_LAYOUT_HEAT_MIN_W + 1;
	*h = sum + !(ui->hidden & UI_HIDE_HEADER) +
	    !(ui->hidden & UI_HIDE_STATUS) + !(ui->hidden & UI_HIDE_KEYBAR);
}

/* Grows h[0] and h[1] in turn towards their wanted heights, at most to
 * cap each, while lines are *left. */
static void
ui_layout_share(int *h, const int *wanth, int cap, int *left)
{
	int i, grew = 1;

	while (*left > 0 && grew)
		for (grew = 0, i = 0; i < 2 && *left > 0; i++)
			if (h[i] < wanth[i] && h[i] < cap) {
				h[i]++;
				(*left)--;
				grew = 1;
			}
}

static void
ui_layout_pane(struct ui *ui, struct ui_grid *g, const struct ui_pane *p,
    enum ui_slot slot, struct ui_rect r)
{
	struct ui_rect outer = g->clip;

	ui->slot[slot] = r;
	ui->slot_pane[slot] = p;
	ui_grid_clip(g, r);
	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	if (r.w > 0 && r.h > 0)
		p->draw(ui, g, r);
	g->clip = outer;
}

void
ui_layout_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	struct ui_rect mid = r, right;
	int minh[UI_LAYOUT_STACK], wanth[UI_LAYOUT_STACK], h[UI_LAYOUT_STACK];
	int wantw, maxw, left, more, y;
	size_t i;

	if (!(ui->hidden & UI_HIDE_HEADER)) {
		ui_layout_pane(ui, g, &ui_pane_header, UI_SLOT_HEADER,
		    (struct ui_rect){ r.x, r.y, r.w, 1 });
		mid.y++;
		mid.h--;
	}
	if (!(ui->hidden & UI_HIDE_KEYBAR)) {
		ui_layout_pane(ui, g, &ui_pane_keybar, UI_SLOT_KEYBAR,
		    (struct ui_rect){ r.x, mid.y + mid.h - 1, r.w, 1 });
		mid.h--;
	}
	if (!(ui->hidden & UI_HIDE_STATUS)) {
		ui_layout_pane(ui, g, &ui_pane_status, UI_SLOT_STATUS,
		    (struct ui_rect){ r.x, mid.y + mid.h - 1, r.w, 1 });
		mid.h--;
	}

	right = mid;
	if (!(ui->hidden & UI_HIDE_HEATMAP)) {
		maxw = mid.w - UI_LAYOUT_RIGHT_MIN_W - 1;
		if (ui->heat_max > 0 && maxw > ui->heat_max)
			maxw = ui->heat_max;
		ui_pane_heat.size(ui, maxw, mid.h, &more, &more, &wantw);
		if (wantw > maxw)
			wantw = maxw;
		if (wantw < UI_LAYOUT_HEAT_MIN_W)
			wantw = UI_LAYOUT_HEAT_MIN_W;
		ui_layout_pane(ui, g, &ui_pane_heat, UI_SLOT_HEAT,
		    (struct ui_rect){ mid.x, mid.y, wantw, mid.h });
		for (y = mid.y; y < mid.y + mid.h; y++)
			ui_grid_text(g, mid.x + wantw, y, 1, UI_ROLE_DIM,
			    ui->gl->vline);
		right.x += wantw + 1;
		right.w -= wantw + 1;
	}
	left = right.h;
	for (i = 0; i < UI_LAYOUT_STACK; i++) {
		ui_layout_stack[i].pane->size(ui, right.w, right.h, &minh[i],
		    &wanth[i], &wantw);
		h[i] = minh[i];
		left -= minh[i];
	}
	/* The tile and the state (0 and 1 of the stack) grow a line at a
	 * time in turn, so both show the same rows: first up to a few rows,
	 * then the equations and counters get what they want, then the
	 * tile and state the rest. */
	ui_layout_share(h, wanth, UI_LAYOUT_FEW, &left);
	for (i = 2; i < UI_LAYOUT_STACK && left > 0; i++) {
		more = wanth[i] - h[i];
		if (more > left)
			more = left;
		if (more > 0) {
			h[i] += more;
			left -= more;
		}
	}
	ui_layout_share(h, wanth, INT_MAX, &left);
	y = right.y;
	for (i = 0; i < UI_LAYOUT_STACK; i++) {
		ui_layout_pane(ui, g, ui_layout_stack[i].pane,
		    ui_layout_stack[i].slot,
		    (struct ui_rect){ right.x, y, right.w, h[i] });
		y += h[i];
	}
	if (left > 0)
		ui_grid_clear(g, (struct ui_rect){ right.x, y, right.w, left },
		    UI_ROLE_NORMAL);
}
