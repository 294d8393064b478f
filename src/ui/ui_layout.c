/*
 * ui_layout.c - where the panes go.  Header on top, status line and key
 * bar at the bottom; between them the score heatmap on the left, as wide
 * as it wants, and on the right the current segment's stack: for the
 * forward the tile, running state, the paged cache (with --page-size),
 * equations, counters and (when lines are left) the focused row's
 * history; for the combine the partials,
 * the merge, its equations and counters; for the backward the tile, the
 * query rows, the key block, the paged cache, equations and counters.  Each pane of the
 * stack gets its minimum height; the rest goes first to the tables (the
 * panes with a line per row) in turn, then to the equations, counters
 * and history, up to what each wants: a larger terminal shows more rows,
 * more columns and more of u.
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

/* The panes, each defined in its ui_pane_*.c with its state (ui_int.h's
 * struct ui_pane): the layout is the only reader of these names. */
extern const struct ui_pane ui_pane_header;
extern const struct ui_pane ui_pane_heat;
extern const struct ui_pane ui_pane_count;
extern const struct ui_pane ui_pane_status;
extern const struct ui_pane ui_pane_keybar;
/* the forward's */
extern const struct ui_pane ui_pane_tile;
extern const struct ui_pane ui_pane_state;
extern const struct ui_pane ui_pane_eq;
extern const struct ui_pane ui_pane_history;
/* the combine's (split-KV) */
extern const struct ui_pane ui_pane_parts;
extern const struct ui_pane ui_pane_merge;
extern const struct ui_pane ui_pane_merge_eq;
/* the backward's */
extern const struct ui_pane ui_pane_bwd_tile;
extern const struct ui_pane ui_pane_bwd_rows;
extern const struct ui_pane ui_pane_bwd_keys;
extern const struct ui_pane ui_pane_bwd_eq;
/* the paged cache's, in the forward's and backward's stacks */
extern const struct ui_pane ui_pane_pages;

/* The right-hand stacks, top to bottom, per kind of segment: a new pane
 * is its file (src/ui/local.mk lists it), its name above and a row here;
 * a slot in ui_int.h only when it takes a place no pane had.  Tables
 * come first.  A pane whose shown() says no for this problem is left
 * out of its stack (the pages pane without --page-size). */
struct ui_layout_entry {
	const struct ui_pane *pane;
	enum ui_slot slot;
	int table;		/* a line per row: grows with the others */
};
#define UI_LAYOUT_MAX 8		/* rows a stack may have; room for more */

static const struct ui_layout_entry ui_layout_stacks[TIMELINE_KINDS]
    [UI_LAYOUT_MAX] = {
	[TIMELINE_FORWARD] = {
		{ &ui_pane_tile, UI_SLOT_TILE, 1 },
		{ &ui_pane_state, UI_SLOT_STATE, 1 },
		{ &ui_pane_pages, UI_SLOT_PAGES, 0 },
		{ &ui_pane_eq, UI_SLOT_EQ, 0 },
		{ &ui_pane_count, UI_SLOT_COUNT, 0 },
		{ &ui_pane_history, UI_SLOT_HISTORY, 0 },
	},
	[TIMELINE_COMBINE] = {
		{ &ui_pane_parts, UI_SLOT_TILE, 1 },
		{ &ui_pane_merge, UI_SLOT_STATE, 1 },
		{ &ui_pane_merge_eq, UI_SLOT_EQ, 0 },
		{ &ui_pane_count, UI_SLOT_COUNT, 0 },
	},
	[TIMELINE_BACKWARD] = {
		{ &ui_pane_bwd_tile, UI_SLOT_TILE, 1 },
		{ &ui_pane_bwd_rows, UI_SLOT_STATE, 1 },
		{ &ui_pane_bwd_keys, UI_SLOT_KEYS, 1 },
		{ &ui_pane_pages, UI_SLOT_PAGES, 0 },
		{ &ui_pane_bwd_eq, UI_SLOT_EQ, 0 },
		{ &ui_pane_count, UI_SLOT_COUNT, 0 },
	},
};

/* The stack of kind k for this problem (the panes it shows) into st;
 * returns its length. */
static int
ui_layout_stack(const struct ui *ui, enum timeline_kind k,
    struct ui_layout_entry *st)
{
	const struct ui_layout_entry *all = ui_layout_stacks[k];
	int i, n = 0;

	for (i = 0; i < UI_LAYOUT_MAX && all[i].pane != NULL; i++)
		if (all[i].pane->shown == NULL || all[i].pane->shown(ui))
			st[n++] = all[i];
	return n;
}

int
ui_layout_panes(const struct ui *ui)
{
	struct ui_layout_entry st[UI_LAYOUT_MAX];

	return ui_layout_stack(ui, ui_kind(ui), st);
}

const char *
ui_layout_pane_name(const struct ui *ui, int i)
{
	struct ui_layout_entry st[UI_LAYOUT_MAX];
	int n = ui_layout_stack(ui, ui_kind(ui), st);

	return i >= 0 && i < n ? st[i].pane->name : "";
}

/* The heatmap is drawn: the caller has not hidden it, nor the reader
 * (h), and no pane is zoomed. */
static int
ui_layout_heat_shown(const struct ui *ui)
{
	return !(ui->hidden & UI_HIDE_HEATMAP) && !ui->heat_off && ui->zoom == 0;
}

/* The largest of the stacks the timeline has: a step from one segment
 * to the next never needs a larger terminal.  A zoomed pane needs only
 * its own minimum. */
void
ui_layout_min(const struct ui *ui, int *w, int *h)
{
	struct ui_layout_entry st[UI_LAYOUT_MAX];
	int minh, wanth, wantw, sum, most = 0, s, i, n;

	for (s = 0; s < timeline_segments(ui->line.tl); s++) {
		n = ui_layout_stack(ui, timeline_segment(ui->line.tl, s)->kind, st);
		for (sum = 0, i = 0; i < n; i++) {
			if (ui->zoom > 0 && i != (ui->zoom - 1) % n)
				continue;
			st[i].pane->size(ui, UI_LAYOUT_RIGHT_MIN_W, 0, &minh, &wanth,
			    &wantw);
			sum += minh;
		}
		most = sum > most ? sum : most;
	}
	*w = UI_LAYOUT_RIGHT_MIN_W;
	if (ui_layout_heat_shown(ui))
		*w += UI_LAYOUT_HEAT_MIN_W + 1;
	*h = most + !(ui->hidden & UI_HIDE_HEADER) +
	    !(ui->hidden & UI_HIDE_STATUS) + !(ui->hidden & UI_HIDE_KEYBAR);
}

/* Grows the tables (the first ntab panes) a line each in turn towards
 * their wanted heights, at most to cap each, while lines are *left. */
static void
ui_layout_share(int *h, const int *wanth, int ntab, int cap, int *left)
{
	int i, grew = 1;

	while (*left > 0 && grew)
		for (grew = 0, i = 0; i < ntab && *left > 0; i++)
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
	struct ui_layout_entry st[UI_LAYOUT_MAX];
	int minh[UI_LAYOUT_MAX], wanth[UI_LAYOUT_MAX], h[UI_LAYOUT_MAX];
	int wantw, maxw, left, more, y, n, ntab, i;

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
	if (ui_layout_heat_shown(ui)) {
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
	n = ui_layout_stack(ui, ui_kind(ui), st);
	if (ui->zoom > 0) {
		/* One pane over the whole view: every row and key it has
		 * room for, the equations whole. */
		i = (ui->zoom - 1) % n;
		ui_layout_pane(ui, g, st[i].pane, st[i].slot, right);
		return;
	}
	left = right.h;
	for (ntab = 0, i = 0; i < n; i++) {
		st[i].pane->size(ui, right.w, right.h, &minh[i], &wanth[i], &wantw);
		h[i] = minh[i];
		left -= minh[i];
		ntab += st[i].table;
	}
	/* The tables grow a line at a time in turn, so all show the same
	 * rows: first up to a few rows, then the equations and counters
	 * get what they want, then the tables the rest. */
	ui_layout_share(h, wanth, ntab, UI_LAYOUT_FEW, &left);
	for (i = ntab; i < n && left > 0; i++) {
		more = wanth[i] - h[i];
		if (more > left)
			more = left;
		if (more > 0) {
			h[i] += more;
			left -= more;
		}
	}
	ui_layout_share(h, wanth, ntab, INT_MAX, &left);
	y = right.y;
	for (i = 0; i < n; i++) {
		ui_layout_pane(ui, g, st[i].pane, st[i].slot,
		    (struct ui_rect){ right.x, y, right.w, h[i] });
		y += h[i];
	}
	if (left > 0)
		ui_grid_clear(g, (struct ui_rect){ right.x, y, right.w, left },
		    UI_ROLE_NORMAL);
}
