/*
 * ui_keys.c - the view's keys: one table that both dispatches them and
 * writes the help screen, so the two cannot disagree; the help screen's
 * scrolling; and the `g` prompt.  Steps are numbered from 1 here, as
 * everywhere the view shows them.
 */
#include "config.h"

#include "ui_keys.h"
#include "ui_form.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
ui_keys_next(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	if (ui_step(ui, 1) != 0)
		ui_message(ui, UI_ROLE_MESSAGE, "this is the last step");
	return UI_HANDLED;
}

static int
ui_keys_prev(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	if (ui_step(ui, -1) != 0)
		ui_message(ui, UI_ROLE_MESSAGE, "this is the first step");
	return UI_HANDLED;
}

static int
ui_keys_phase(struct ui *ui, const struct ui_key *k)
{
	int delta = k->code == '.' ? 1 : -1;

	if (ui_phase(ui, delta) != 0)
		ui_message(ui, UI_ROLE_MESSAGE, "this is the %s phase",
		    delta > 0 ? "last" : "first");
	return UI_HANDLED;
}

static int
ui_keys_goto(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui->prompt.open = 1;
	ui->prompt.text[0] = '\0';
	return UI_HANDLED;
}

/* Home and End: the timeline's first and last steps (the first
 * forward step, the last step of the last segment).  End shows the end:
 * the last step whole, at its last phase, whatever phase . and , left
 * n and p at (they step whole steps again from there). */
static int
ui_keys_ends(struct ui *ui, const struct ui_key *k)
{
	int kind;

	if (k->code == UI_KEY_HOME) {
		ui_goto(ui, 0);
		return UI_HANDLED;
	}
	for (kind = 0; kind < TIMELINE_KINDS; kind++)
		ui->want_phase[kind] = -1;
	ui_seek(ui, timeline_steps(ui->line.tl) - 1, -1);
	return UI_HANDLED;
}

/* s and S: a packed batch's next / previous sequence (ui_varlen.c). */
static int
ui_keys_seq(struct ui *ui, const struct ui_key *k)
{
	ui_varlen_jump(ui, k->code == 's' ? 1 : -1);
	return UI_HANDLED;
}

static int
ui_keys_play(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui_play_toggle(ui);
	return UI_HANDLED;
}

static int
ui_keys_until(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui_play_until(ui);
	return UI_HANDLED;
}

static int
ui_keys_speed(struct ui *ui, const struct ui_key *k)
{
	if (k->code == '+' && ui->play.speed < 10)
		ui->play.speed++;
	else if (k->code == '-' && ui->play.speed > 0)
		ui->play.speed--;
	ui_message(ui, UI_ROLE_MESSAGE, "speed %d steps/s%s", 1 << ui->play.speed,
	    ui->play.on ? "" : " (r plays)");
	return UI_HANDLED;
}

static int
ui_keys_focus(struct ui *ui, const struct ui_key *k)
{
	int rows = ui_rows(ui);
	int delta = k->code == UI_KEY_TAB || k->code == UI_KEY_DOWN ? 1 : -1;

	/* Tab wraps around the tile's rows; the arrows stop at its edges. */
	if (k->code == UI_KEY_TAB || k->code == UI_KEY_BTAB)
		ui->focus = (ui->focus + delta + rows) % rows;
	else
		ui->focus += delta;
	ui_clamp_focus(ui);
	return UI_HANDLED;
}

/* [ and ]: the backward's focused key, within its tile. */
static int
ui_keys_key_focus(struct ui *ui, const struct ui_key *k)
{
	if (ui_kind(ui) != TIMELINE_BACKWARD) {
		ui_message(ui, UI_ROLE_MESSAGE, "[ ]: a key of the backward's tile "
		    "(its dK, dV and equations); Tab moves among rows");
		return UI_HANDLED;
	}
	ui->focus_key += k->code == ']' ? 1 : -1;
	ui_clamp_focus(ui);
	return UI_HANDLED;
}

static int
ui_keys_merge_order(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui_cycle_merge_order(ui);
	return UI_HANDLED;
}

static int
ui_keys_convention(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui_cycle_convention(ui);
	return UI_HANDLED;
}

static int
ui_keys_bug(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui_cycle_bug(ui);
	return UI_HANDLED;
}

static int
ui_keys_order(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui_toggle_order(ui);
	return UI_HANDLED;
}

static int
ui_keys_mask(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui_toggle_mask(ui);
	return UI_HANDLED;
}

static int
ui_keys_edit(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui_form_open(ui);
	return UI_HANDLED;
}

static int
ui_keys_gpu(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui_gpu_toggle(ui);
	return UI_HANDLED;
}

/* W: the pipeline viewer on the model of this problem's head. */
static int
ui_keys_pipe(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	return ui_pipe_open(ui);
}

/* 8: how --dtype fp8 stored Q, K and V. */
static int
ui_keys_fp8(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	return ui_fp8_open(ui);
}

/* R: the H200's roofline with this problem on it. */
static int
ui_keys_roof(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	return ui_roof_open(ui);
}

/* z: one pane of the segment's stack over the whole view, the next on
 * each press, then all of them again (a projector's big picture). */
static int
ui_keys_zoom(struct ui *ui, const struct ui_key *k)
{
	int n = ui_layout_panes(ui);

	(void)k;
	ui->zoom = ui->zoom >= n ? 0 : ui->zoom + 1;
	if (ui->zoom == 0)
		ui_message(ui, UI_ROLE_MESSAGE, "zoom off: every pane");
	else
		ui_message(ui, UI_ROLE_MESSAGE, "zoom: the %s pane, %d of %d (z: "
		    "the next, then every pane again)",
		    ui_layout_pane_name(ui, ui->zoom - 1), ui->zoom, n);
	return UI_HANDLED;
}

/* h: the heatmap hidden, so the tables take its width. */
static int
ui_keys_heat(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui->heat_off = !ui->heat_off;
	ui_message(ui, UI_ROLE_MESSAGE, "%s", ui->heat_off ? "heatmap hidden: "
	    "the tables take its width (h shows it again)" : "heatmap shown");
	return UI_HANDLED;
}

static int
ui_keys_help(struct ui *ui, const struct ui_key *k)
{
	(void)k;
	ui->help = 1;
	ui->help_first = 0;
	return UI_HANDLED;
}

static int
ui_keys_quit(struct ui *ui, const struct ui_key *k)
{
	(void)ui;
	(void)k;
	return UI_HANDLED | UI_QUIT;
}

const struct ui_keydef ui_keydefs[] = {
	{ "space n Right", "next step (the same phase), on across the "
	    "segments: forward, combine, backward", ui_keys_next,
	    { ' ', 'n', UI_KEY_RIGHT } },
	{ "p Left", "previous step", ui_keys_prev, { 'p', UI_KEY_LEFT } },
	{ ". ,", "next / previous phase, on across the segments: forward load "
	    "scores max rescale exp update finalize; combine load max weights "
	    "update finalize; backward load scores P dV dP dS dQ dK write",
	    ui_keys_phase, { '.', ',' } },
	{ "g", "go to a step: 1 to the last of the timeline, f N, c N or b N "
	    "for step N of the forward, combine or backward, or a tile i,j of "
	    "the segment shown", ui_keys_goto, { 'g' } },
	{ "Home End", "first / last step of the timeline", ui_keys_ends,
	    { UI_KEY_HOME, UI_KEY_END } },
	{ "s S", "a packed batch (--seqlens): the next / previous sequence's "
	    "first step", ui_keys_seq, { 's', 'S' } },
	{ "r", "play / pause", ui_keys_play, { 'r' } },
	{ "u", "play until something happens to the focused row: its max "
	    "rises (so alpha < 1), or it finishes and the mask skips the rest; "
	    "in the combine its last merge; in the backward its next dQ part",
	    ui_keys_until, { 'u' } },
	{ "+ -", "play faster / slower (1 to 1024 steps/s)", ui_keys_speed,
	    { '+', '-' } },
	{ "Tab S-Tab Down Up", "focus the next / previous row of the tile",
	    ui_keys_focus, { UI_KEY_TAB, UI_KEY_BTAB, UI_KEY_DOWN, UI_KEY_UP } },
	{ "[ ]", "focus the previous / next key of the backward's tile",
	    ui_keys_key_focus, { '[', ']' } },
	{ "c", "convention: unnormalized u / normalized o", ui_keys_convention,
	    { 'c' } },
	{ "b", "bug mode of the segment shown:", ui_keys_bug, { 'b' } },
	{ "O", "merge order of the combine: ltr / tree / reverse",
	    ui_keys_merge_order, { 'O' } },
	{ "o", "loop order: fa2 / fa1", ui_keys_order, { 'o' } },
	{ "m", "mask: none, causal, the window (W, 0), the window (W, W), none "
	    "(W: the last window's left edge, else Tk/4); softcap and ALiBi "
	    "stay (e sets them)", ui_keys_mask, { 'm' } },
	{ "e", "edit the problem: sizes, tiles, seed, input, backward, splits, "
	    "window, softcap, ALiBi, page size",
	    ui_keys_edit, { 'e' } },
	{ "G", "the GPU kernel's m', alpha, l' beside the simulator's",
	    ui_keys_gpu, { 'G' } },
	{ "W", "the wgmma kernel's pipeline, modelled on this problem's head "
	    "(d 64 or 128), in the pipeline viewer; q returns", ui_keys_pipe,
	    { 'W' } },
	{ "8", "--dtype fp8: Q, K and V as stored, row by row (codes, scales, "
	    "errors, the rotation's effect on the outlier); q returns",
	    ui_keys_fp8, { '8' } },
	{ "R", "the H200's roofline with this problem's head on it; q returns",
	    ui_keys_roof,
	    { 'R' } },
	{ "z", "zoom: one pane of the stack over the whole view, the next on "
	    "each press, then every pane again", ui_keys_zoom, { 'z' } },
	{ "h", "hide / show the heatmap: the tables take its width",
	    ui_keys_heat, { 'h' } },
	{ "?", "this help (arrows, PgUp, PgDn, Space scroll it)", ui_keys_help,
	    { '?' } },
	{ "q", "quit", ui_keys_quit, { 'q' } },
	{ NULL, NULL, NULL, { 0 } },
};

int
ui_keys_dispatch(struct ui *ui, const struct ui_key *k)
{
	const struct ui_keydef *d;
	int c;

	for (d = ui_keydefs; d->keys != NULL; d++)
		for (c = 0; c < 6 && d->codes[c] != 0; c++)
			if (d->codes[c] == k->code)
				return d->fn(ui, k);
	return 0;
}

/* The names of the bug tables b cycles through, for options_words. */
static const char *
ui_keys_bug_word(int i)
{
	return online_bug_name((enum online_bug)i);
}

/* The mask bugs after none: b shows each where the rules allow it. */
static const char *
ui_keys_mask_bug_word(int i)
{
	return mask_bug_name((enum mask_bug)(i + 1));
}

static const char *
ui_keys_merge_bug_word(int i)
{
	return combine_bug_name((enum merge_bug)i);
}

static const char *
ui_keys_grad_bug_word(int i)
{
	return backward_bug_name((enum backward_bug)i);
}

/* b's help goes on with the modes it cycles through, from their tables
 * (online_rule.h's for the forward), so a new mode shows here with
 * nothing written in this file. */
static void
ui_keys_bug_more(char *buf, size_t len)
{
	char fwd[200], mask[200], merge[200], grad[200];

	snprintf(buf, len, " the forward's (%s, then the mask's: %s, where "
	    "the rules have a cap or a window's left edge), the merge's (%s), "
	    "the backward's (%s)", options_words(fwd, sizeof fwd,
	    ui_keys_bug_word, ONLINE_BUGS, " ", NULL), options_words(mask,
	    sizeof mask, ui_keys_mask_bug_word, MASK_BUGS - 1, " ", NULL),
	    options_words(merge, sizeof merge,
	    ui_keys_merge_bug_word, MERGE_BUGS, " ", NULL), options_words(grad,
	    sizeof grad, ui_keys_grad_bug_word, BACKWARD_BUGS, " ", NULL));
}

/* The keys whose help goes on with text made from a table. */
static const struct {
	int (*fn)(struct ui *ui, const struct ui_key *k);
	void (*more)(char *buf, size_t len);
} ui_keys_generated[] = {
	{ ui_keys_bug, ui_keys_bug_more },
};

const char *
ui_keys_help_of(const struct ui_keydef *d, char *buf, size_t len)
{
	size_t i, n;

	snprintf(buf, len, "%s", d->help);
	for (i = 0; i < sizeof ui_keys_generated / sizeof ui_keys_generated[0];
	    i++)
		if (ui_keys_generated[i].fn == d->fn) {
			n = strlen(buf);
			ui_keys_generated[i].more(buf + n, len - n);
		}
	return buf;
}

/* Lines of the help screen after the key table. */
static const char *ui_keys_more[] = {
	"mouse: click a tile in the heatmap to go to it, a row to focus it",
	"heatmap: the current tile is reversed, tiles not visited yet dim,",
	"  skipped tiles hatched; shades rise with the score (pooled: max)",
	"steps count from 1; tiles (i,j), rows and keys from 0, as in the trace",
	"--backward and --splits N (or the e form) add the backward and the",
	"  combine to the timeline; the header names the segment shown",
	"Esc closes this screen, the form and the prompt",
};

/* The help text, w columns wide, from the top of g.  Returns its lines. */
static int
ui_keys_help_text(struct ui_grid *g, int w)
{
	const struct ui_keydef *d;
	int y = 0, kw = 18;
	char help[1000];
	size_t i;

	for (d = ui_keydefs; d->keys != NULL; d++) {
		ui_grid_text(g, 2, y, kw, UI_ROLE_KEY, d->keys);
		/* Long lines wrap under their text, not under the keys. */
		y += ui_grid_wrap(g, (struct ui_rect){ 2 + kw, y, w - 3 - kw,
		    g->h - y }, UI_ROLE_NORMAL, ui_keys_help_of(d, help,
		    sizeof help));
	}
	for (i = 0; i < sizeof ui_keys_more / sizeof ui_keys_more[0]; i++, y++)
		ui_grid_text(g, 2, y, w - 3, UI_ROLE_LABEL, ui_keys_more[i]);
	return y;
}

void
ui_keys_draw_help(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	struct ui_rect box = { r.x, r.y + 1, r.w, r.h - 1 };
	struct ui_grid text = { 0 };
	char err[100];
	int rows, max;

	ui_grid_clear(g, box, UI_ROLE_NORMAL);
	if (ui_grid_resize(&text, box.w, 200, err, sizeof err) != 0) {
		ui_grid_text(g, box.x + 1, box.y, box.w - 2, UI_ROLE_ERROR, err);
		return;
	}
	ui->help_lines = ui_keys_help_text(&text, box.w);
	rows = box.h - 1;
	if (ui->help_lines > rows)
		rows--;		/* the last line says how to scroll */
	ui->help_page = rows > 1 ? rows : 1;
	max = ui->help_lines > rows ? ui->help_lines - rows : 0;
	if (ui->help_first > max)
		ui->help_first = max;
	if (ui->help_first < 0)
		ui->help_first = 0;
	ui_grid_text(g, box.x + 1, box.y, box.w - 2, UI_ROLE_TITLE,
	    "flashstep view: every key (a key that does not scroll closes "
	    "this screen)");
	ui_grid_blit(g, box.x, box.y + 1, &text, ui->help_first, rows);
	if (ui->help_lines > rows)
		ui_grid_printf(g, box.x + 2, box.y + box.h - 1, box.w - 3,
		    UI_ROLE_DIM, "lines %d-%d of %d: Down PgDn Space scroll on, Up "
		    "PgUp back", ui->help_first + 1, ui->help_first + rows,
		    ui->help_lines);
	ui_grid_free(&text);
}

int
ui_keys_help_key(struct ui *ui, const struct ui_key *k)
{
	int scrolls = ui->help_lines > ui->help_page;

	switch (scrolls ? k->code : 0) {
	case UI_KEY_DOWN:
		ui->help_first++;
		break;
	case UI_KEY_UP:
		ui->help_first--;
		break;
	case UI_KEY_PGDN:
	case ' ':
		ui->help_first += ui->help_page;
		break;
	case UI_KEY_PGUP:
		ui->help_first -= ui->help_page;
		break;
	case UI_KEY_HOME:
		ui->help_first = 0;
		break;
	case UI_KEY_END:
		ui->help_first = ui->help_lines;	/* drawing clamps it */
		break;
	default:
		ui->help = 0;
		break;
	}
	if (ui->help_first < 0)
		ui->help_first = 0;
	return UI_HANDLED;
}

void
ui_keys_draw_prompt(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	int n;

	if (ui->vl.nseq > 0)
		n = ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_LABEL, "go to step "
		    "(1-%ld, or f N of this sequence) or tile i,j: ",
		    timeline_steps(ui->line.tl));
	else if (timeline_segments(ui->line.tl) > 1)
		n = ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_LABEL, "go to step "
		    "(1-%ld, or f/c/b N) or tile i,j: ", timeline_steps(ui->line.tl));
	else
		n = ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_LABEL, "go to step "
		    "(1-%ld) or tile i,j: ", timeline_steps(ui->line.tl));
	n += ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_INPUT, "%s_",
	    ui->prompt.text);
	ui_grid_text(g, r.x + n + 2, r.y, r.w - n - 2, UI_ROLE_DIM,
	    "(Enter goes, Esc cancels)");
}

/* "f 3": step 3 of the segment named by its first letter.  Returns 0
 * with *g the global step, 1 when text names no segment, -1 (message
 * set) when it names one wrongly. */
static int
ui_keys_prompt_segment(struct ui *ui, const char *text, long *g)
{
	const struct timeline_segment *seg;
	const char *at = text;
	char *end;
	long k, n;
	int s;

	while (*at == ' ')
		at++;
	for (s = 0; s < timeline_segments(ui->line.tl); s++)
		if (timeline_segment(ui->line.tl, s)->name[0] == *at)
			break;
	if (*at < 'a' || *at > 'z')
		return 1;
	/* A packed batch's forward segments are its sequences: f N is a
	 * step of the one shown. */
	if (ui->vl.nseq > 0 && s < timeline_segments(ui->line.tl))
		s = ui->vl.seq;
	if (s == timeline_segments(ui->line.tl)) {
		ui_message(ui, UI_ROLE_ERROR, "go to: no segment '%c' here (f "
		    "forward%s%s)", *at, ui->line.comb != NULL ? ", c combine" : "",
		    ui->line.bwd != NULL ? ", b backward" : "");
		return -1;
	}
	seg = timeline_segment(ui->line.tl, s);
	n = seg->steps(timeline_engine(ui->line.tl, s));
	errno = 0;
	k = strtol(at + 1, &end, 10);
	while (*end == ' ')
		end++;
	if (end == at + 1 || *end != '\0' || errno != 0 || k < 1 || k > n) {
		ui_message(ui, UI_ROLE_ERROR, "go to: '%s' is not a step of the %s "
		    "(1-%ld)", text, seg->name, n);
		return -1;
	}
	*g = timeline_first(ui->line.tl, s) + k - 1;
	return 0;
}

/* The step of tile (a, b) in the segment shown (the combine: row block
 * a's merge b), or -1 with the message set. */
static long
ui_keys_prompt_tile(struct ui *ui, long a, long b)
{
	struct timeline_pos pos;
	const struct schedule *s;
	long k;

	ui_position(ui, &pos);
	if (ui_kind(ui) == TIMELINE_COMBINE) {
		int n = combine_merges(ui->line.comb);

		if (a < 0 || a >= sim_schedule(ui->sim)->tr || b < 0 || b >= n) {
			ui_message(ui, UI_ROLE_ERROR, "go to: the combine has row "
			    "blocks 0-%d of %d merges (0-%d)",
			    sim_schedule(ui->sim)->tr - 1, n, n - 1);
			return -1;
		}
		return timeline_first(ui->line.tl, pos.seg) + a * n + b;
	}
	s = ui_kind(ui) == TIMELINE_BACKWARD ? backward_schedule(ui->line.bwd) :
	    sim_schedule(ui->sim);
	if (a < 0 || a >= s->tr || b < 0 || b >= s->tc) {
		ui_message(ui, UI_ROLE_ERROR, "go to: tile (%ld,%ld) is outside "
		    "the %dx%d tiles", a, b, s->tr, s->tc);
		return -1;
	}
	k = schedule_step_of(s, (int)a, (int)b);
	if (k < 0) {
		char what[80];

		ui_message(ui, UI_ROLE_ERROR, "go to: tile (%ld,%ld) is skipped "
		    "by the mask (%s)", a, b, mask_describe(problem_mask(UI_PROBLEM(ui), 0),
		    0, what, sizeof what));
		return -1;
	}
	return timeline_first(ui->line.tl, pos.seg) + k;
}

/* Parses "k", "f k" (c, b) or "i,j" (spaces allowed) and goes there. */
static void
ui_keys_prompt_go(struct ui *ui)
{
	char *end, *comma = strchr(ui->prompt.text, ',');
	long a, b = 0, k, n = timeline_steps(ui->line.tl);
	int rc;

	rc = ui_keys_prompt_segment(ui, ui->prompt.text, &k);
	if (rc < 0)
		return;
	if (rc > 0) {
		errno = 0;
		a = strtol(ui->prompt.text, &end, 10);
		if (comma != NULL && end == comma)
			b = strtol(comma + 1, &end, 10);
		while (*end == ' ')
			end++;
		if (end == ui->prompt.text || *end != '\0' || errno != 0 ||
		    (comma != NULL && end == comma + 1)) {
			ui_message(ui, UI_ROLE_ERROR, "go to: '%s' is not a step "
			    "number or a tile i,j", ui->prompt.text);
			return;
		}
		if (comma != NULL)
			k = ui_keys_prompt_tile(ui, a, b);
		else if (a < 1 || a > n) {
			ui_message(ui, UI_ROLE_ERROR, "go to: step %ld is not in "
			    "1-%ld", a, n);
			return;
		} else
			k = a - 1;
		if (k < 0)
			return;
	}
	ui_goto(ui, k);
}

int
ui_keys_prompt_key(struct ui *ui, const struct ui_key *k)
{
	size_t n = strlen(ui->prompt.text);

	switch (k->code) {
	case UI_KEY_ESC:
		ui->prompt.open = 0;
		break;
	case UI_KEY_ENTER:
		ui->prompt.open = 0;
		if (n > 0)
			ui_keys_prompt_go(ui);
		break;
	case UI_KEY_BACKSPACE:
		if (n > 0)
			ui->prompt.text[n - 1] = '\0';
		break;
	default:
		if (((k->code >= '0' && k->code <= '9') || k->code == ',' ||
		    k->code == ' ' || k->code == 'f' || k->code == 'c' ||
		    k->code == 'b') && n + 1 < sizeof ui->prompt.text) {
			ui->prompt.text[n] = (char)k->code;
			ui->prompt.text[n + 1] = '\0';
		}
		break;
	}
	return UI_HANDLED;
}
