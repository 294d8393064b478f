/*
 * ui_pane_bars.c - the one-line panes: the header (where we are and with
 * which rule), the status line (messages, the `g` prompt, hints) and the
 * key bar.
 */
#include "config.h"

#include "ui_int.h"
#include "ui_keys.h"

#include <stdio.h>
#include <string.h>

static void
ui_pane_bars_none(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	(void)ui;
	(void)h;
	*minh = *wanth = 1;
	*wantw = w;
}

/* The header's parts in the order shown, each with a priority: the
 * lowest go first when the line is too narrow. */
#define UI_BARS_PARTS 8

static void
ui_pane_bars_header(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct online_rule *rule = sim_rule(ui->sim);
	const struct schedule *s = sim_schedule(ui->sim);
	static const int prio[UI_BARS_PARTS] = { 0, 7, 6, 5, 2, 3, 4, 1 };
	char part[UI_BARS_PARTS][80];
	int show[UI_BARS_PARTS], i, w, low, x;

	snprintf(part[0], sizeof part[0], "flashstep");
	/* Steps as people count them: the first is step 1. */
	snprintf(part[1], sizeof part[1], "step %ld of %ld", v->step + 1,
	    sim_steps(ui->sim));
	snprintf(part[2], sizeof part[2], "tile (%d,%d)", v->tile.i, v->tile.j);
	snprintf(part[3], sizeof part[3], "phase %s %d/%d",
	    ui_phase_name((int)v->phase), (int)v->phase + 1, v->nphases);
	snprintf(part[4], sizeof part[4], "%s", schedule_order_name(s->order));
	snprintf(part[5], sizeof part[5], "%s",
	    online_convention_name(rule->convention));
	if (rule->bug == BUG_NONE)
		snprintf(part[6], sizeof part[6], "%s", UI_PROBLEM(ui)->causal ?
		    "causal" : "");
	else
		snprintf(part[6], sizeof part[6], "bug %s%s",
		    online_bug_name(rule->bug), UI_PROBLEM(ui)->causal ?
		    "  causal" : "");
	part[7][0] = '\0';
	if (ui->play.on)
		snprintf(part[7], sizeof part[7], "%s %d/s%s", ui->gl->focus,
		    1 << ui->play.speed, ui->play.until >= 0 ? " until" : "");
	for (i = 0; i < UI_BARS_PARTS; i++)
		show[i] = part[i][0] != '\0';
	for (;;) {
		for (w = 0, i = 0; i < UI_BARS_PARTS; i++)
			if (show[i])
				w += ui_grid_width(part[i]) + 2;
		if (w <= r.w)
			break;
		for (low = -1, i = 0; i < UI_BARS_PARTS; i++)
			if (show[i] && (low < 0 || prio[i] < prio[low]))
				low = i;
		if (low < 0 || prio[low] >= 5)
			break;
		show[low] = 0;
	}
	ui_grid_clear(g, r, UI_ROLE_BAR);
	for (x = r.x + 1, i = 0; i < UI_BARS_PARTS; i++)
		if (show[i])
			x += ui_grid_text(g, x, r.y, -1, i == 0 ? UI_ROLE_KEY :
			    UI_ROLE_BAR, part[i]) + 2;
}

static void
ui_pane_bars_status(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	if (ui->prompt.open) {
		ui_keys_draw_prompt(ui, g, r);
		return;
	}
	if (ui->msg[0] != '\0') {
		ui_grid_text(g, r.x, r.y, r.w, ui->msg_role, ui->msg);
		return;
	}
	/* A large problem's heatmap takes seconds: say so on every frame,
	 * whatever room the heatmap pane has. */
	if (ui->heat_ok && !heatmap_complete(&ui->heat)) {
		ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_MESSAGE, "computing S for "
		    "the heatmap: %d%% %s keys work meanwhile, q quits",
		    100 * ui->heat.bands_done / ui->heat.ny, ui->gl->dot);
		return;
	}
	ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_DIM, "Tab: next row %s . and , "
	    "walk the phases %s click a tile %s ? every key", ui->gl->dot,
	    ui->gl->dot, ui->gl->dot);
}

/* The key bar's entries, most useful first; ? and q always fit. */
static const struct {
	const char *key, *what;
} ui_pane_bars_keys[] = {
	{ "n", "next" }, { "p", "prev" }, { ".,", "phase" }, { "g", "go" },
	{ "r", "play" }, { "c", "conv" }, { "b", "bug" },
	{ "o", "order" }, { "m", "mask" }, { "e", "edit" }, { "G", "gpu" },
};

static void
ui_pane_bars_keybar(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	size_t i;
	int x = r.x + 1, need, end = r.x + r.w - 15;

	(void)ui;
	ui_grid_clear(g, r, UI_ROLE_BAR);
	for (i = 0; i < sizeof ui_pane_bars_keys / sizeof ui_pane_bars_keys[0];
	    i++) {
		need = (int)(strlen(ui_pane_bars_keys[i].key) +
		    strlen(ui_pane_bars_keys[i].what)) + 2;
		if (x + need > end)
			break;
		x += ui_grid_text(g, x, r.y, -1, UI_ROLE_KEY,
		    ui_pane_bars_keys[i].key);
		x += ui_grid_printf(g, x, r.y, -1, UI_ROLE_BAR, " %s ",
		    ui_pane_bars_keys[i].what);
	}
	x = end + 1;
	x += ui_grid_text(g, x, r.y, -1, UI_ROLE_KEY, "?");
	x += ui_grid_text(g, x, r.y, -1, UI_ROLE_BAR, " help ");
	x += ui_grid_text(g, x, r.y, -1, UI_ROLE_KEY, "q");
	ui_grid_text(g, x, r.y, -1, UI_ROLE_BAR, " quit");
}

const struct ui_pane ui_pane_header = {
	.name = "header",
	.size = ui_pane_bars_none,
	.draw = ui_pane_bars_header,
};

const struct ui_pane ui_pane_status = {
	.name = "status",
	.size = ui_pane_bars_none,
	.draw = ui_pane_bars_status,
};

const struct ui_pane ui_pane_keybar = {
	.name = "keys",
	.size = ui_pane_bars_none,
	.draw = ui_pane_bars_keybar,
};
