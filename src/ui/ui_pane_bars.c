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
#define UI_BARS_PARTS 12
enum { BAR_NAME, BAR_SEQ, BAR_SEQINFO, BAR_STEP, BAR_WHERE, BAR_PHASE,
    BAR_GLOBAL, BAR_ORDER, BAR_RULE, BAR_MASK, BAR_BUG, BAR_PLAY };

/*
 * The masks and score rules in force, for the header: nothing without
 * any, else "causal", "window (8, 0)", "softcap 30", "alibi", joined.
 */
static void
ui_bars_mask(const struct ui *ui, char *buf, size_t len)
{
	const struct problem *p = UI_PROBLEM(ui);

	buf[0] = '\0';
	if (mask_rule_hides(problem_mask(p, 0)) || problem_beyond_causal(p))
		mask_describe(problem_mask(p, 0), p->alibi != NULL, buf, len);
}

/* The parts that say where in its segment the reader is and by which
 * rule it runs. */
static void
ui_pane_bars_segment(struct ui *ui, char part[][80], size_t len)
{
	struct timeline_pos pos;
	const struct timeline_segment *seg;
	long n;

	ui_bars_mask(ui, part[BAR_MASK], len);

	ui_position(ui, &pos);
	seg = timeline_segment(ui->line.tl, pos.seg);
	n = seg->steps(timeline_engine(ui->line.tl, pos.seg));
	/* Steps as people count them: the first is step 1.  The segment
	 * is named when there are several. */
	snprintf(part[BAR_STEP], len, "%s%sstep %ld of %ld",
	    timeline_segments(ui->line.tl) > 1 && ui->vl.nseq == 0 ? seg->name :
	    "", timeline_segments(ui->line.tl) > 1 && ui->vl.nseq == 0 ? " " : "",
	    pos.step + 1, n);
	/* A packed batch: which sequence ("seq 2 of 3"), then its sizes and
	 * rows, which go first when the line is narrow. */
	if (ui->vl.nseq > 0) {
		char d[80], *paren;

		ui_varlen_describe(ui, d, sizeof d);
		paren = strchr(d, '(');
		snprintf(part[BAR_SEQINFO], len, "%s", paren != NULL ? paren : "");
		if (paren != NULL)
			paren[-1] = '\0';
		snprintf(part[BAR_SEQ], len, "%s", d);
	}
	snprintf(part[BAR_PHASE], len, "phase %s %d/%d",
	    seg->phase_name(pos.phase), pos.phase + 1,
	    seg->phases(timeline_engine(ui->line.tl, pos.seg), pos.step));
	if (timeline_segments(ui->line.tl) > 1)
		snprintf(part[BAR_GLOBAL], len, "(%ld of %ld)", pos.global + 1,
		    timeline_steps(ui->line.tl));
	/* Before the first step (a lesson's): said so, not "step 1 ...
	 * phase load" as if step 1 had begun. */
	if (ui_is_before(ui)) {
		snprintf(part[BAR_STEP], len, "before step 1 of %ld", n);
		snprintf(part[BAR_PHASE], len, "no step run yet");
		part[BAR_GLOBAL][0] = '\0';
	}
	switch (seg->kind) {
	case TIMELINE_COMBINE: {
		const struct combine_view *v = ui_comb_view(ui);

		snprintf(part[BAR_WHERE], len, "row block %d, merge %d of %d",
		    v->block, v->merge + 1, combine_merges(ui->line.comb));
		snprintf(part[BAR_ORDER], len, "%s",
		    combine_order_name(ui->opts.combine.order));
		snprintf(part[BAR_RULE], len, "%s",
		    combine_form_name(combine_form(ui->line.comb)));
		if (ui->opts.combine.bug != MERGE_BUG_NONE)
			snprintf(part[BAR_BUG], len, "merge bug %s",
			    combine_bug_name(ui->opts.combine.bug));
		break;
	}
	case TIMELINE_BACKWARD: {
		const struct backward_view *v = ui_bwd_view(ui);

		snprintf(part[BAR_WHERE], len, "tile (%d,%d)", v->tile.i,
		    v->tile.j);
		snprintf(part[BAR_ORDER], len, "keys outer");
		if (ui->opts.grad_bug != BWD_BUG_NONE)
			snprintf(part[BAR_BUG], len, "grad bug %s",
			    backward_bug_name(ui->opts.grad_bug));
		break;
	}
	default: {
		const struct sim_view *v = sim_view(ui->sim);
		const struct online_rule *rule = sim_rule(ui->sim);

		snprintf(part[BAR_WHERE], len, "tile (%d,%d)", v->tile.i, v->tile.j);
		snprintf(part[BAR_ORDER], len, "%s",
		    schedule_order_name(sim_schedule(ui->sim)->order));
		snprintf(part[BAR_RULE], len, "%s",
		    online_convention_name(rule->convention));
		if (rule->bug != BUG_NONE)
			snprintf(part[BAR_BUG], len, "bug %s",
			    online_bug_name(rule->bug));
		else if (rule->mask_bug != MASK_BUG_NONE)
			snprintf(part[BAR_BUG], len, "mask bug %s",
			    mask_bug_name(rule->mask_bug));
		break;
	}
	}
}

static void
ui_pane_bars_header(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	static const int prio[UI_BARS_PARTS] = {
		[BAR_NAME] = 0, [BAR_SEQ] = 7, [BAR_SEQINFO] = 3,
		[BAR_STEP] = 7, [BAR_WHERE] = 6, [BAR_PHASE] = 5,
		[BAR_GLOBAL] = 1, [BAR_ORDER] = 2, [BAR_RULE] = 3, [BAR_MASK] = 4,
		[BAR_BUG] = 4, [BAR_PLAY] = 1,
	};
	char part[UI_BARS_PARTS][80];
	int show[UI_BARS_PARTS], i, w, low, x;

	memset(part, 0, sizeof part);
	snprintf(part[BAR_NAME], sizeof part[0], "flashstep");
	ui_pane_bars_segment(ui, part, sizeof part[0]);
	if (ui->play.on)
		snprintf(part[BAR_PLAY], sizeof part[0], "%s %d/s%s", ui->gl->focus,
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
	char b[300];

	if (ui->prompt.open) {
		ui_keys_draw_prompt(ui, g, r);
		return;
	}
	if (ui->msg[0] != '\0') {
		ui_grid_fit(g, r.x, r.y, r.w, ui->msg_role, ui->msg,
		    ui->gl->ellipsis);
		return;
	}
	/* A large problem's heatmap takes seconds: say so on every frame,
	 * whatever room the heatmap pane has. */
	if (ui->heat_ok && !heatmap_complete(&ui->heat)) {
		snprintf(b, sizeof b, "computing S for the heatmap: %d%% %s keys "
		    "work meanwhile, q quits",
		    100 * ui->heat.bands_done / ui->heat.ny, ui->gl->dot);
		ui_grid_fit(g, r.x, r.y, r.w, UI_ROLE_MESSAGE, b, ui->gl->ellipsis);
		return;
	}
	snprintf(b, sizeof b, "Tab: next row %s . and , walk the phases %s "
	    "click a tile %s ? every key", ui->gl->dot, ui->gl->dot, ui->gl->dot);
	ui_grid_fit(g, r.x, r.y, r.w, UI_ROLE_DIM, b, ui->gl->ellipsis);
}

/* The key bar's entries, most useful first; ? and q always fit.  The
 * merge order only where there is a combine. */
static const struct {
	const char *key, *what;
	int split;
} ui_pane_bars_keys[] = {
	{ "n", "next", 0 }, { "p", "prev", 0 }, { ".,", "phase", 0 },
	{ "g", "go", 0 }, { "r", "play", 0 }, { "c", "conv", 0 },
	{ "b", "bug", 0 }, { "O", "merge", 1 }, { "o", "order", 0 },
	{ "m", "mask", 0 }, { "e", "edit", 0 }, { "G", "gpu", 0 },
};

static void
ui_pane_bars_keybar(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	size_t i;
	int x = r.x + 1, need, end = r.x + r.w - 15;

	ui_grid_clear(g, r, UI_ROLE_BAR);
	for (i = 0; i < sizeof ui_pane_bars_keys / sizeof ui_pane_bars_keys[0];
	    i++) {
		if (ui_pane_bars_keys[i].split && ui->line.comb == NULL)
			continue;
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
