/*
 * lesson_tty.c - the interactive lesson runner: the narration pane on the
 * left, the simulator's own panes (src/ui: heatmap, tile, state,
 * equations, counters) on the right.
 *
 * The lesson logic is lesson_slides.c; this file draws a slide and maps
 * keys.  The view keeps its own sim; after every slide change it is
 * brought to the lesson's problem (ui_configure, when the script built a
 * new one), position (ui_seek) and focus row.  Keys the lesson does not
 * take go to the view, so a student can look around (phases, rows,
 * conventions) and the next slide brings the view back to the script.
 */
#include "config.h"

#include "lesson_tty.h"
#include "lesson_slides.h"
#include "lesson_view.h"
#include "ui/ui.h"

#include <stdlib.h>
#include <string.h>

/* The narration pane: at least this wide beside the view, and about
 * this share of a wide screen. */
#define TTY_NARRATION_MIN 34
#define TTY_NARRATION_SHARE 0.38
/* Stacked above the view on a narrow screen: at least this many lines. */
#define TTY_NARRATION_LINES 7

struct tty {
	struct lesson_slides slides;
	struct ui *ui;
	int generation;		/* the lesson's problem the view shows */
	int scroll;		/* narration lines scrolled off the top */
	int max_scroll;
	int failed;		/* a slide could not be reached: quit */
	char message[200];	/* one line under the narration, until a key */
};

/* Brings the view to the lesson's problem, position and focus row. */
static int
sync_view(struct tty *t, char *err, size_t errlen)
{
	struct lesson_run *run = t->slides.run;
	const struct sim_view *v;

	if (!run->built || run->dirty)
		return 0;	/* nothing built yet, or not since a change */
	if (run->generation != t->generation) {
		if (ui_configure(t->ui, &run->opts, err, errlen) != 0)
			return -1;
		t->generation = run->generation;
	}
	/* The view has no "before the first step": it shows step 0 from its
	 * first phase, and the narration's header says where the lesson is. */
	if (run->step < 0)
		ui_seek(t->ui, 0, SIM_PHASE_LOAD);
	else
		ui_seek(t->ui, run->step, run->phase);
	v = sim_view(ui_sim(t->ui));
	if (run->focus >= v->tile.r0 && run->focus < v->tile.r1)
		ui_set_focus(t->ui, run->focus - v->tile.r0);
	return 0;
}

static int
item_role(const struct lesson_item *it)
{
	switch (it->kind) {
	case LESSON_ITEM_NOTE:
		return UI_ROLE_LABEL;
	case LESSON_ITEM_QUESTION:
		return UI_ROLE_PHASE;
	case LESSON_ITEM_PROBLEM:
		return UI_ROLE_DIM;
	case LESSON_ITEM_FAILED:
		return UI_ROLE_ERROR;
	case LESSON_ITEM_COMPARE:
		return UI_ROLE_GPU;
	default:
		return UI_ROLE_NORMAL;
	}
}

/* The problem's description: lines of `flashstep run`, each wrapped. */
static void
problem_lines(const char *text, int width, struct lesson_lines *ls)
{
	const char *p = text, *nl;
	char line[512];

	while (*p != '\0') {
		nl = strchr(p, '\n');
		snprintf(line, sizeof line, "%.*s", nl != NULL ? (int)(nl - p) :
		    (int)strlen(p), p);
		lesson_lines_wrap(ls, line, width, "", "          ");
		p = nl != NULL ? nl + 1 : p + strlen(p);
	}
}

/* The slide's narration as lines of at most width, with their roles. */
static int *
narration(struct tty *t, int width, struct lesson_lines *ls)
{
	const struct lesson_slides *s = &t->slides;
	const struct lesson_item *it;
	int i, from, *roles = NULL, *grown;

	for (i = 0; i < s->nitems; i++) {
		it = &s->items[i];
		from = ls->n;
		switch (it->kind) {
		case LESSON_ITEM_NOTE:
			lesson_lines_wrap(ls, it->text, width, "note: ", "      ");
			break;
		case LESSON_ITEM_QUESTION:
			lesson_view_question(it->q, it->number, it->revealed, width, ls);
			if (!it->revealed)
				lesson_lines_add(ls, "    (a: the answer)");
			break;
		case LESSON_ITEM_PROBLEM:
			problem_lines(it->text, width, ls);
			break;
		case LESSON_ITEM_FAILED:
			lesson_lines_wrap(ls, it->text, width, "!! ", "   ");
			break;
		default:
			lesson_lines_wrap(ls, it->text, width, "", "");
			break;
		}
		lesson_lines_add(ls, "%s", "");
		grown = realloc(roles, (size_t)(ls->n + 1) * sizeof *grown);
		if (grown == NULL) {
			ls->oom = 1;
			return roles;
		}
		roles = grown;
		while (from < ls->n)
			roles[from++] = item_role(it);
	}
	return roles;
}

static void
draw_narration(struct tty *t, struct ui_grid *g, struct ui_rect r)
{
	const struct lesson_slides *s = &t->slides;
	struct lesson_lines text = { 0 };
	const char *keys;
	char where[160];
	int *roles, i, y, body;

	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	ui_grid_clear(g, (struct ui_rect){ r.x, r.y, r.w, 1 }, UI_ROLE_BAR);
	ui_grid_printf(g, r.x + 1, r.y, r.w - 2, UI_ROLE_BAR, "%s",
	    s->lesson->title);
	if (s->run->built && s->run->step < 0)
		snprintf(where, sizeof where, "slide %d%s: before the first step",
		    s->index, s->at_end ? " (the last)" : "");
	else
		snprintf(where, sizeof where, "slide %d%s", s->index,
		    s->at_end ? " (the last)" : "");
	ui_grid_text(g, r.x + 1, r.y + 1, r.w - 2, UI_ROLE_TITLE, where);

	/* Lines 2 .. h-3 for the narration, then the message and the keys. */
	body = r.h - 5;
	roles = narration(t, r.w - 2, &text);
	t->max_scroll = text.n > body ? text.n - body : 0;
	if (t->scroll > t->max_scroll)
		t->scroll = t->max_scroll;
	for (i = t->scroll, y = r.y + 3; i < text.n && y < r.y + 3 + body; i++, y++)
		ui_grid_text(g, r.x + 1, y, r.w - 2, roles != NULL ? roles[i] :
		    UI_ROLE_NORMAL, text.line[i]);
	/* More text than lines: say so on the header's line, at the right. */
	if (t->max_scroll > 0)
		ui_grid_text(g, r.x + r.w - 14, r.y + 1, 13, UI_ROLE_DIM,
		    t->scroll < t->max_scroll ? "[PgDn: more]" : "[PgUp: back]");
	if (t->message[0] != '\0')
		ui_grid_text(g, r.x + 1, r.y + r.h - 2, r.w - 2, UI_ROLE_MESSAGE,
		    t->message);
	ui_grid_clear(g, (struct ui_rect){ r.x, r.y + r.h - 1, r.w, 1 },
	    UI_ROLE_BAR);
	keys = lesson_slides_hidden(s) ? "space/a answer  Left back  q quit" :
	    s->at_end ? "Left back  PgUp/PgDn  q quit" :
	    "space/Right next  Left back  q quit";
	ui_grid_text(g, r.x + 1, r.y + r.h - 1, r.w - 2, UI_ROLE_BAR, keys);
	free(roles);
	lesson_lines_free(&text);
}

/* Splits the screen: narration beside the view when both fit, else above
 * it, else a message that the terminal is too small. */
static void
frame(struct ui *ui, struct ui_grid *g, void *ctx)
{
	struct tty *t = ctx;
	struct ui_rect all = { 0, 0, g->w, g->h };
	int mw, mh, nw, nh;

	ui_min_size(ui, &mw, &mh);
	nw = (int)(g->w * TTY_NARRATION_SHARE);
	if (nw < TTY_NARRATION_MIN)
		nw = TTY_NARRATION_MIN;
	if (g->w - nw - 1 < mw)
		nw = g->w - mw - 1;
	if (nw >= TTY_NARRATION_MIN && g->h >= mh) {
		draw_narration(t, g, (struct ui_rect){ 0, 0, nw, g->h });
		ui_draw(ui, g, (struct ui_rect){ nw + 1, 0, g->w - nw - 1, g->h });
		return;
	}
	nh = g->h - mh;
	if (g->w >= mw && nh >= TTY_NARRATION_LINES) {
		if (nh > g->h / 2)
			nh = g->h / 2 > TTY_NARRATION_LINES ? g->h / 2 :
			    TTY_NARRATION_LINES;
		draw_narration(t, g, (struct ui_rect){ 0, 0, g->w, nh });
		ui_draw(ui, g, (struct ui_rect){ 0, nh, g->w, g->h - nh });
		return;
	}
	ui_draw_too_small(g, all, mw + TTY_NARRATION_MIN + 1, mh);
}

static int
key(struct ui *ui, const struct ui_key *k, void *ctx)
{
	struct tty *t = ctx;
	struct lesson_slides *s = &t->slides;
	char err[512];
	int rc;

	(void)ui;
	t->message[0] = '\0';
	switch (k->code) {
	case 'q':
		return UI_HANDLED | UI_QUIT;
	case ' ':
	case UI_KEY_ENTER:
	case UI_KEY_RIGHT:
		/* A slide's answers come before the next slide. */
		if (lesson_slides_reveal(s) > 0)
			return UI_HANDLED | UI_REDRAW;
		rc = lesson_slides_forward(s);
		if (rc == 1)
			snprintf(t->message, sizeof t->message, "The end of the lesson: "
			    "q quits, Left goes back.");
		break;
	case UI_KEY_LEFT:
		rc = lesson_slides_back(s);
		if (rc == 1)
			snprintf(t->message, sizeof t->message, "This is the first "
			    "slide.");
		break;
	case 'a':
		if (lesson_slides_reveal(s) == 0)
			snprintf(t->message, sizeof t->message, "No question on this "
			    "slide.");
		return UI_HANDLED | UI_REDRAW;
	case UI_KEY_PGUP:
		t->scroll = t->scroll > 5 ? t->scroll - 5 : 0;
		return UI_HANDLED | UI_REDRAW;
	case UI_KEY_PGDN:
		t->scroll = t->scroll + 5 < t->max_scroll ? t->scroll + 5 :
		    t->max_scroll;
		return UI_HANDLED | UI_REDRAW;
	default:
		return 0;	/* the view's key */
	}
	if (rc < 0) {
		t->failed = 1;
		return UI_HANDLED | UI_QUIT;
	}
	t->scroll = 0;
	if (sync_view(t, err, sizeof err) != 0) {
		snprintf(t->slides.err, sizeof t->slides.err, "%s", err);
		t->failed = 1;
		return UI_HANDLED | UI_QUIT;
	}
	return UI_HANDLED | UI_REDRAW;
}

int
lesson_tty_run(const struct lesson *l, int presenter, int *sig, char *err,
    size_t errlen)
{
	struct ui_hooks hooks = { .frame = frame, .key = key };
	struct ui_style st;
	struct options defaults;
	struct tty t;
	int rc = -1, r;

	*sig = 0;
	memset(&t, 0, sizeof t);
	if (lesson_slides_open(&t.slides, l, presenter, err, errlen) != 0)
		return -1;
	/* The view starts on the lesson's first problem (or run's default
	 * problem, before a script builds one). */
	ui_style_detect(&st);
	options_init(&defaults);
	t.ui = ui_new(t.slides.run->built ? &t.slides.run->opts : &defaults, &st,
	    err, errlen);
	if (t.ui == NULL)
		goto done;
	t.generation = t.slides.run->generation;
	if (sync_view(&t, err, errlen) != 0)
		goto done;
	if (ui_term_open(&st, err, errlen) != 0)
		goto done;
	hooks.ctx = &t;
	r = ui_loop(t.ui, &hooks, err, errlen);
	ui_term_close();
	if (r < 0)
		goto done;
	if (t.failed) {
		util_error(err, errlen, "%s", t.slides.err);
		goto done;
	}
	*sig = r;
	rc = 0;
done:
	ui_free(t.ui);
	lesson_slides_close(&t.slides);
	return rc;
}
