/*
 * lesson_tty.c - the interactive lesson runner: the narration pane on the
 * left (or on top of a narrow screen), the simulator's own panes (src/ui:
 * heatmap, tile, state, equations, counters) beside it.
 *
 * The lesson logic is lesson_slides.c; this file draws a slide, maps
 * keys, and keeps the view where the lesson stands.  The view keeps its
 * own timeline (forward, combine, backward); at every slide change it is
 * settled (play stopped, help and forms closed) and rebuilt from the
 * lesson's options, whatever the view's keys changed during the slide,
 * then brought to the lesson's position and focus row.  A problem the
 * view does not show (several heads) gets the lesson's own frame beside
 * the narration instead.
 */
#include "config.h"

#include "lesson_notes.h"
#include "lesson_show.h"
#include "lesson_slides.h"
#include "lesson_tty.h"
#include "lesson_view.h"
#include "ui/ui.h"
#include "ui/ui_keys.h"		/* the view's key table, for the help */

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The narration pane: at least this wide beside the view, about this
 * share of a wide screen, and never so wide that the view gets fewer
 * columns than it needs to show every line whole (its key bar, its
 * counters beside the heatmap).  Narrower screens stack the two. */
#define TTY_NARRATION_MIN 34
#define TTY_NARRATION_SHARE 0.38
#define TTY_VIEW_WANT 96
/* On a wide screen the heatmap takes at most this share of the view,
 * so that the tile, state, equations and counters grow too. */
#define TTY_HEAT_SHARE 0.34
/* Stacked above the view on a narrow screen: this share of the lines,
 * and at least this many. */
#define TTY_STACKED_SHARE 0.3
#define TTY_NARRATION_LINES 6
/* What q does on a long build's progress screen, the lesson's and the
 * view's alike. */
#define TTY_BUSY_KEYS "q ends the lesson"

/* What the narration pane's input line reads. */
enum tty_prompt {
	TTY_NO_PROMPT,
	TTY_JUMP,		/* j: a slide number */
	TTY_ANSWER,		/* =: a number question's answer */
};

struct tty {
	struct lesson_slides slides;
	struct ui *ui;
	struct lesson_notes *notes;
	int scroll;		/* narration lines scrolled off the top */
	int max_scroll;
	int body;		/* narration lines the pane shows */
	const struct lesson_item *follow;	/* scroll to show its end */
	int failed;		/* a slide could not be reached: quit */
	char message[400];	/* one line under the narration, until a key */
	enum tty_prompt prompt;
	char input[24];
	char why[160];		/* the view refuses the problem: why */
	int frame;		/* and the lesson's frame shows it instead */
	int unicode;		/* the terminal shows "…"; else "..." */
	/* The clock the notes show: when the lesson and the slide began,
	 * how long the slide before took, the last whole second ticked. */
	double t0, slide_t0, prev_s;
	int clock_slide;	/* the slide slide_t0 belongs to */
	long ticked;
	char gone[400];		/* why the notes stopped, for after the screen */
	/* The screen as last drawn, and the narration's title bar on it:
	 * a busy mark goes there while a slide change computes. */
	struct ui_grid *grid;
	struct ui_rect bar;
	int help;		/* ? is open: the lesson's keys, then the view's */
	int help_first, help_lines, help_page;
	/* A long build of the lesson's own timeline shows the view's
	 * progress screen (made at its first call, gone after the slide
	 * change); q there ends the lesson, as q does anywhere in it. */
	struct ui_style st;
	struct fulltimeline_progress progress;
	struct ui_busy *busy;
	int stopped;		/* q (or a signal) stopped a build */
};

/*
 * Lines [from, ls->n) of ls spelt in ASCII for a terminal without UTF-8,
 * as the view's panes spell the same characters (ui_style_ascii: one
 * table for both), for lines cut rather than wrapped (a table, the
 * frame).  Nothing with UTF-8.
 */
static void
ascii_lines(const struct tty *t, struct lesson_lines *ls, int from)
{
	char *a;
	int i;

	for (i = from; !t->unicode && i < ls->n; i++) {
		if ((a = ui_style_ascii(ls->line[i])) == NULL) {
			ls->oom = 1;
			return;
		}
		free(ls->line[i]);
		ls->line[i] = a;
	}
}

/* Prose to wrap, spelt in ASCII first without UTF-8 (so that it wraps
 * at the width it is shown at): a malloc'd copy, or NULL to use s. */
static char *
spelt(const struct tty *t, const char *s)
{
	return t->unicode || s == NULL ? NULL : ui_style_ascii(s);
}

/* A question asked or revealed, its text and choices spelt as spelt()
 * does (into q's copy *c, to free with unspell). */
static const struct lesson_question *
spell_question(const struct tty *t, const struct lesson_question *q,
    struct lesson_question *c)
{
	char *x;
	int i;

	if (t->unicode)
		return q;
	*c = *q;
	c->choices = calloc((size_t)q->nchoices + 1, sizeof *c->choices);
	if (c->choices == NULL)
		return q;
	for (i = 0; i < q->nchoices; i++)
		c->choices[i] = (x = spelt(t, q->choices[i])) != NULL ? x :
		    strdup(q->choices[i]);
	c->text = spelt(t, q->text);
	c->explanation = spelt(t, q->explanation);
	return c;
}

static void
unspell(const struct lesson_question *q, struct lesson_question *c)
{
	int i;

	if (q == c || c->choices == NULL)
		return;
	for (i = 0; i < c->nchoices; i++)
		free(c->choices[i]);
	free(c->choices);
	free(c->text);
	free(c->explanation);
}

/* s as the terminal can show it, into buf: itself with UTF-8, else in
 * ASCII (ascii_lines). */
static const char *
shown_text(const struct tty *t, const char *s, char *buf, size_t len)
{
	char *a;

	if (t->unicode || (a = ui_style_ascii(s)) == NULL)
		return s;
	snprintf(buf, len, "%s", a);
	free(a);
	return buf;
}

/* The lesson's builds' progress function (fulltimeline_progress). */
static int
progress(void *ctx, const char *what, long done, long total)
{
	struct tty *t = ctx;

	if (t->busy == NULL && (t->busy = ui_busy_new(&t->st, TTY_BUSY_KEYS)) == NULL)
		return 0;	/* no memory for the screen: build on unseen */
	if (ui_busy_step(t->busy, what, done, total) != 0)
		t->stopped = 1;
	return t->stopped;
}

/* After a slide change's builds: the next change times its own. */
static void
progress_done(struct tty *t)
{
	ui_busy_free(t->busy);
	t->busy = NULL;
}

/* The first row of the step the lesson stands at: of its tile, or of
 * the row block its merge merges. */
static int
step_first_row(const struct lesson_run *run)
{
	const struct backward_view *bv = lesson_run_backward_view(run);
	const struct combine_view *cv = lesson_run_combine_view(run);
	const struct sim_view *v = lesson_run_view(run);

	if (bv != NULL)
		return bv->tile.r0;
	if (cv != NULL)
		return cv->r0;
	return v != NULL ? v->tile.r0 : 0;
}

/* Brings the view to the lesson's problem, position and focus row, and
 * undoes whatever the view's keys changed during the slide.  The view
 * steps the whole timeline, forward, combine and backward, numbered as
 * the lesson numbers it.  A problem the view refuses (several heads: it
 * shows one) is shown as the lesson's own frame instead (t->why). */
static int
sync_view(struct tty *t, char *err, size_t errlen)
{
	struct lesson_run *run = t->slides.run;
	char why[400];
	int x;

	ui_settle(t->ui);
	t->why[0] = '\0';
	t->frame = 1;
	/* Never the problem of the slide before, nor the built-in example:
	 * with no problem built (or none since a change) the pane says so. */
	switch (lesson_view_source(run, why, sizeof why)) {
	case LESSON_VIEW_NONE:
		t->frame = 0;
		snprintf(t->why, sizeof t->why, "no problem yet: the view shows "
		    "none");
		return 0;
	case LESSON_VIEW_STALE:
		t->frame = 0;
		snprintf(t->why, sizeof t->why, "the problem changes on this "
		    "slide: the view shows it from the next");
		return 0;
	case LESSON_VIEW_FRAME:
		snprintf(t->why, sizeof t->why, "the view shows one head, this "
		    "problem has %d", run->setup.problem.heads);
		return 0;
	default:
		break;
	}
	if (run->opts.spec.heads > 1) {
		snprintf(t->why, sizeof t->why, "the view shows one head, this "
		    "problem has %d", run->opts.spec.heads);
		return 0;
	}
	if (ui_options_check(&run->opts, t->why, sizeof t->why) != 0)
		return 0;
	switch (ui_configure(t->ui, &run->opts, err, errlen)) {
	case 0:
		break;
	case 1:
		t->stopped = 1;		/* q: the lesson ends, not an error */
		return -1;
	default:
		return -1;
	}
	/* The view has no "before the first step": it shows step 0 from its
	 * first phase, its header saying that no step has run yet. */
	if (ui_seek(t->ui, run->step < 0 ? 0 : run->step, run->step < 0 ? 0 :
	    run->phase) != 0)
		return util_error(err, errlen, "the view has no step %ld",
		    run->step);
	if (run->step < 0)
		ui_set_before(t->ui);	/* its header says no step has run */
	x = run->focus - step_first_row(run);
	if (x >= 0)
		ui_set_focus(t->ui, x);
	return 0;
}

/* s in at most width columns: whole, or cut after a word with "…"
 * ("..." without Unicode) rather than in the middle of one. */
static const char *
fit(const struct tty *t, const char *s, int width, char *buf, size_t len)
{
	const char *ell = t->unicode ? "\xe2\x80\xa6" : "...";
	int ew = t->unicode ? 1 : 3, cols = 0, room;
	const char *p, *cut = NULL;

	for (p = s; *p != '\0'; p++)
		cols += (*p & 0xc0) != 0x80;
	if (cols <= width || width <= ew) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	room = width - ew;
	for (p = s, cols = 0; *p != '\0'; p++) {
		if ((*p & 0xc0) != 0x80 && ++cols > room)
			break;
		if (*p == ' ')
			cut = p;
	}
	/* no blank in reach (one long word): cut where the room ends */
	if (cut == NULL || cut == s)
		cut = p;
	while (cut > s && (cut[-1] == ' ' || cut[-1] == ',' || cut[-1] == ':' ||
	    cut[-1] == ';'))
		cut--;
	snprintf(buf, len, "%.*s%s", (int)(cut - s), s, ell);
	return buf;
}

/* The lesson's own frame (as --plain prints it) where the view cannot
 * show the problem, under a line that says why. */
static void
draw_frame(struct tty *t, struct ui_grid *g, struct ui_rect r)
{
	struct lesson_lines ls = { 0 };
	char line[256], shown[256];
	int i;

	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	ui_grid_clear(g, (struct ui_rect){ r.x, r.y, r.w, 1 }, UI_ROLE_BAR);
	snprintf(line, sizeof line, "%s%s", t->why, t->frame ? "; the lesson's "
	    "frame instead" : "");
	ui_grid_text(g, r.x + 1, r.y, r.w - 2, UI_ROLE_BAR, fit(t, line, r.w - 2,
	    shown, sizeof shown));
	if (!t->frame)
		return;
	lesson_view_state(t->slides.run, &ls);
	ascii_lines(t, &ls, 0);
	for (i = 0; i < ls.n && i + 2 < r.h; i++)
		ui_grid_text(g, r.x + 1, r.y + 2 + i, r.w - 2, UI_ROLE_NORMAL,
		    ls.line[i]);
	lesson_lines_free(&ls);
}

/* The notes stopped (their reader went away, the disk is full): said
 * once on the status line, and again on stderr after the screen. */
static void
notes_stopped(struct tty *t, const char *why)
{
	snprintf(t->gone, sizeof t->gone, "%s", why);
	snprintf(t->message, sizeof t->message, "%s", why);
}

/* The slide's notes, to the presenter's terminal or file, with the next
 * slide's heading and the time. */
static int
send_notes(struct tty *t, char *err, size_t errlen)
{
	const struct lesson_slides *s = &t->slides;
	struct lesson_notes_page pg = { 0 };
	const char *notes[64];
	char *spelt[66];
	char next[160], why[400];
	double now = util_now();
	int i, n = 0, rc, ascii;

	if (t->notes == NULL)
		return 0;
	for (i = 0; i < s->nitems && n < 64; i++)
		if (s->items[i].kind == LESSON_ITEM_NOTE)
			notes[n++] = s->items[i].text;
	pg.title = s->lesson->title;
	pg.slide = s->index;
	pg.slides = s->count;
	if (!s->at_end && lesson_slides_heading(s->lesson, s->index + 1, 64, next,
	    sizeof next) == 0)
		pg.next = next;
	else if (!s->at_end)
		pg.next = "(a slide with no narration)";
	/* Notes on a terminal are spelt as the projected screen is: in
	 * ASCII without UTF-8 (a file keeps its UTF-8, as --plain does). */
	ascii = !t->unicode && lesson_notes_terminal(t->notes);
	memset(spelt, 0, sizeof spelt);
	if (ascii) {
		for (i = 0; i < n; i++)
			if ((spelt[i] = ui_style_ascii(notes[i])) != NULL)
				notes[i] = spelt[i];
		if ((spelt[64] = ui_style_ascii(pg.title)) != NULL)
			pg.title = spelt[64];
		if (pg.next != NULL && (spelt[65] = ui_style_ascii(pg.next)) != NULL)
			pg.next = spelt[65];
	}
	pg.notes = notes;
	pg.n = n;
	pg.lesson_s = now - t->t0;
	pg.slide_s = now - t->slide_t0;
	pg.prev_s = t->prev_s;
	t->ticked = (long)pg.lesson_s;
	rc = lesson_notes_show(t->notes, &pg, why, sizeof why);
	for (i = 0; i < 66; i++)
		free(spelt[i]);
	if (rc < 0)
		return util_error(err, errlen, "%s", why);
	if (rc == 1)
		notes_stopped(t, why);
	return 0;
}

/* The loop's timer: a terminal's notes clock, once a second. */
static int
idle(struct ui *ui, int *wait_ms, void *ctx)
{
	struct tty *t = ctx;
	double now = util_now(), since = now - t->t0;
	char why[400];
	int ms;

	(void)ui;
	if (t->notes == NULL || lesson_notes_stopped(t->notes))
		return 0;
	if ((long)since > t->ticked) {
		t->ticked = (long)since;
		if (lesson_notes_tick(t->notes, since, now - t->slide_t0, why,
		    sizeof why) == 1) {
			notes_stopped(t, why);
			return UI_REDRAW;
		}
	}
	ms = (int)((t->ticked + 1 - since) * 1000.0) + 1;
	if (*wait_ms < 0 || *wait_ms > ms)
		*wait_ms = ms;
	return 0;
}

/* Keys that arrived while a slide change computed were pressed at a
 * screen that did not answer: they are dropped, not replayed as one
 * slide each.  q still quits. */
static int
drain(void)
{
	struct ui_key k;
	int quit = 0;

	while (ui_term_key(0, &k) == 1)
		if (k.code == 'q')
			quit = 1;
	return quit;
}

/* The busy mark, drawn at once over the last frame, before a slide
 * change that may take a while (a long problem replayed). */
static void
busy(struct tty *t)
{
	const char *mark = t->unicode ? " working\xe2\x80\xa6 " : " working... ";
	int w = (int)strlen(mark) - (t->unicode ? 2 : 0);

	if (t->grid == NULL || t->bar.w < w + 2)
		return;
	ui_grid_text(t->grid, t->bar.x + t->bar.w - w - 1, t->bar.y, w,
	    UI_ROLE_MESSAGE, mark);
	ui_term_present(t->grid);
}

/* After the slide changed: a fresh pane, the view back, the notes out. */
static int
arrived(struct tty *t)
{
	char err[512];
	double now = util_now();
	int quit;

	if (t->slides.index != t->clock_slide) {
		t->clock_slide = t->slides.index;
		t->prev_s = now - t->slide_t0;
		t->slide_t0 = now;
	}
	t->scroll = 0;
	t->follow = NULL;
	t->prompt = TTY_NO_PROMPT;
	progress_done(t);
	if (sync_view(t, err, sizeof err) != 0 ||
	    send_notes(t, err, sizeof err) != 0) {
		if (t->stopped)
			return UI_HANDLED | UI_QUIT;
		snprintf(t->slides.err, sizeof t->slides.err, "%s", err);
		t->failed = 1;
		return UI_HANDLED | UI_QUIT;
	}
	/* after all the change's work, the view's rebuild too */
	quit = t->grid != NULL && drain();
	return UI_HANDLED | UI_REDRAW | (quit ? UI_QUIT : 0);
}

static int
item_role(const struct lesson_item *it)
{
	switch (it->kind) {
	case LESSON_ITEM_QUESTION:
		return UI_ROLE_PHASE;
	case LESSON_ITEM_FAILED:
		return UI_ROLE_ERROR;
	case LESSON_ITEM_COMPARE:
	case LESSON_ITEM_TABLE:
		return UI_ROLE_GPU;
	default:
		return UI_ROLE_NORMAL;
	}
}

/* A table's lines as they are: a line wider than the pane is cut where
 * the pane ends rather than wrapped into the next. */
static void
table_lines(struct lesson_lines *ls, const char *text)
{
	const char *p, *nl;

	for (p = text; ; p = nl + 1) {
		nl = strchr(p, '\n');
		lesson_lines_add(ls, "%.*s", nl != NULL ? (int)(nl - p) :
		    (int)strlen(p), p);
		if (nl == NULL)
			return;
	}
}

/* The slide's narration as lines of at most width, with their roles;
 * *follow_end is the last line of t->follow (or -1). */
static int *
narration(struct tty *t, int width, struct lesson_lines *ls, int *follow_end)
{
	const struct lesson_slides *s = &t->slides;
	const struct lesson_item *it;
	const struct lesson_question *q;
	struct lesson_question copy;
	char *text;
	int i, from, *roles = NULL, *grown;

	*follow_end = -1;
	for (i = 0; i < s->nitems; i++) {
		it = &s->items[i];
		if (it->kind == LESSON_ITEM_NOTE || it->kind == LESSON_ITEM_PROBLEM)
			continue;	/* notes: never on the projected screen;
					 * the problem: the view names it */
		from = ls->n;
		if (from > 0)
			lesson_lines_add(ls, "%s", "");	/* between items */
		text = spelt(t, it->text);
		switch (it->kind) {
		case LESSON_ITEM_QUESTION:
			memset(&copy, 0, sizeof copy);
			q = spell_question(t, it->q, &copy);
			lesson_view_question(q, text != NULL ? text : it->text,
			    it->number, width, ls);
			if (it->revealed)
				lesson_view_reveal(q, width, ls);
			else if (it->q->numeric)
				lesson_lines_add(ls, "    (= to type your answer; Space "
				    "shows it)");
			else
				lesson_lines_add(ls, "    (Space shows the answer)");
			unspell(it->q, &copy);
			break;
		case LESSON_ITEM_FAILED:
			lesson_lines_wrap(ls, text != NULL ? text : it->text, width,
			    "!! ", "   ");
			break;
		case LESSON_ITEM_TABLE:
			table_lines(ls, it->text);
			break;
		default:
			lesson_lines_wrap(ls, text != NULL ? text : it->text, width,
			    "", "");
			break;
		}
		free(text);
		ascii_lines(t, ls, from);	/* what spelt() left */
		if (it == t->follow)
			*follow_end = ls->n - 1;
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

static const char *
key_help(struct tty *t)
{
	struct lesson_slides *s = &t->slides;

	if (t->prompt != TTY_NO_PROMPT)
		return "Enter takes it  Esc cancels";
	if (t->scroll < t->max_scroll)
		return "Space/PgDn more  Left back  j slide  q quit";
	if (lesson_slides_hidden(s) != NULL)
		return "Space answer  Left back  j slide  q quit";
	if (s->at_end)
		return "Left back  j slide  q quit";
	return "Space next  Left back  j slide  q quit";
}

static void
draw_narration(struct tty *t, struct ui_grid *g, struct ui_rect r)
{
	const struct lesson_slides *s = &t->slides;
	struct lesson_lines text = { 0 };
	char where[160], shown[600], spelt[600];
	int *roles, i, y, n, follow_end;

	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	ui_grid_clear(g, (struct ui_rect){ r.x, r.y, r.w, 1 }, UI_ROLE_BAR);
	if (s->run->built && s->run->step < 0)
		snprintf(where, sizeof where, "slide %d of %d, before the first "
		    "step", s->index, s->count);
	else if (s->run->built && lesson_run_kind(s->run) != TIMELINE_FORWARD)
		snprintf(where, sizeof where, "slide %d of %d, %s step %ld, %s",
		    s->index, s->count, lesson_run_segment(s->run)->name,
		    lesson_run_local_step(s->run) + 1,
		    lesson_run_phase_name(s->run));
	else
		snprintf(where, sizeof where, "slide %d of %d", s->index, s->count);
	n = (int)strlen(where);
	ui_grid_text(g, r.x + 1, r.y, r.w - n - 4, UI_ROLE_BAR, fit(t,
	    shown_text(t, s->lesson->title, spelt, sizeof spelt), r.w - n - 4,
	    shown, sizeof shown));
	ui_grid_text(g, r.x + r.w - n - 1, r.y, n, UI_ROLE_BAR, where);
	t->grid = g;
	t->bar = (struct ui_rect){ r.x, r.y, r.w, 1 };

	/* Lines 1 .. h-3 for the narration, then the message and the keys. */
	t->body = r.h - 3;
	roles = narration(t, r.w - 2, &text, &follow_end);
	t->max_scroll = text.n > t->body ? text.n - t->body : 0;
	if (follow_end >= 0 && follow_end >= t->scroll + t->body)
		t->scroll = follow_end - t->body + 1;
	t->follow = NULL;
	if (t->scroll > t->max_scroll)
		t->scroll = t->max_scroll;
	for (i = t->scroll, y = r.y + 1; i < text.n && y < r.y + 1 + t->body;
	    i++, y++)
		ui_grid_text(g, r.x + 1, y, r.w - 2, roles != NULL ? roles[i] :
		    UI_ROLE_NORMAL, text.line[i]);
	if (t->max_scroll > 0)
		ui_grid_printf(g, r.x + r.w - 12, r.y + r.h - 2, 11, UI_ROLE_DIM,
		    "%s", t->scroll < t->max_scroll ? "[more v]" : "[end ^]");
	if (t->prompt != TTY_NO_PROMPT) {
		n = ui_grid_printf(g, r.x + 1, r.y + r.h - 2, r.w - 2, UI_ROLE_LABEL,
		    "%s", t->prompt == TTY_JUMP ? "go to slide: " : "your answer: ");
		ui_grid_printf(g, r.x + 1 + n, r.y + r.h - 2, r.w - 2 - n,
		    UI_ROLE_INPUT, "%s_", t->input);
	} else if (t->message[0] != '\0')
		ui_grid_text(g, r.x + 1, r.y + r.h - 2, r.w - 14, UI_ROLE_MESSAGE,
		    fit(t, shown_text(t, t->message, spelt, sizeof spelt), r.w - 14,
		    shown, sizeof shown));
	ui_grid_clear(g, (struct ui_rect){ r.x, r.y + r.h - 1, r.w, 1 },
	    UI_ROLE_BAR);
	ui_grid_text(g, r.x + 1, r.y + r.h - 1, r.w - 2, UI_ROLE_BAR,
	    fit(t, key_help(t), r.w - 2, shown, sizeof shown));
	free(roles);
	lesson_lines_free(&text);
}

/* The keys the lesson takes before the view sees them (key()). */
static const int tty_lesson_codes[] = {
	'q', ' ', UI_KEY_ENTER, UI_KEY_RIGHT, UI_KEY_LEFT, UI_KEY_PGUP,
	UI_KEY_PGDN, 'a', '=', 'j', '?', 0,
};

static const struct {
	const char *keys, *help;
} tty_lesson_keys[] = {
	{ "Space", "read on: the rest of the narration, then the next hidden "
	    "answer, then the next slide" },
	{ "Right Enter", "the next hidden answer, then the next slide" },
	{ "Left", "the slide before" },
	{ "PgUp PgDn", "scroll the narration a page" },
	{ "a", "show the next hidden answer" },
	{ "=", "type the answer of a number question" },
	{ "j", "go to a slide by its number" },
	{ "?", "this help (Up, Down, PgUp, PgDn scroll it; any other key "
	    "closes it)" },
	{ "q", "quit the lesson" },
};

static int
lesson_takes(int code)
{
	int i;

	for (i = 0; tty_lesson_codes[i] != 0; i++)
		if (tty_lesson_codes[i] == code)
			return 1;
	return 0;
}

/* A key's name as the help shows it. */
static const char *
code_name(int code, char *buf, size_t len)
{
	static const struct { int code; const char *name; } names[] = {
		{ ' ', "Space" }, { UI_KEY_TAB, "Tab" }, { UI_KEY_BTAB, "S-Tab" },
		{ UI_KEY_ENTER, "Enter" }, { UI_KEY_ESC, "Esc" },
		{ UI_KEY_UP, "Up" }, { UI_KEY_DOWN, "Down" },
		{ UI_KEY_LEFT, "Left" }, { UI_KEY_RIGHT, "Right" },
		{ UI_KEY_HOME, "Home" }, { UI_KEY_END, "End" },
		{ UI_KEY_PGUP, "PgUp" }, { UI_KEY_PGDN, "PgDn" },
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].code == code)
			return names[i].name;
	snprintf(buf, len, "%c", code > 32 && code < 127 ? code : '?');
	return buf;
}

/* The help: the lesson's keys, then those of the view's (its own table,
 * so the two cannot disagree) that the lesson leaves to it. */
static void
help_lines(const struct tty *t, int width, struct lesson_lines *ls)
{
	const struct ui_keydef *d;
	char keys[64], first[80], one[8], help[600];
	size_t used;
	int c, i;

	lesson_lines_add(ls, "The lesson's keys");
	for (i = 0; i < (int)(sizeof tty_lesson_keys / sizeof tty_lesson_keys[0]);
	    i++) {
		snprintf(first, sizeof first, "  %-13s ", tty_lesson_keys[i].keys);
		lesson_lines_wrap(ls, tty_lesson_keys[i].help, width, first,
		    "                ");
	}
	lesson_lines_add(ls, "%s", "");
	if (t->why[0] != '\0') {
		lesson_lines_wrap(ls, "The view is not shown for this problem, so "
		    "its keys do nothing here.", width, "", "");
		return;
	}
	lesson_lines_wrap(ls, "The view's keys that still work (they look around "
	    "until the next slide, which puts the view back)", width, "", "");
	for (d = ui_keydefs; d->keys != NULL; d++) {
		used = 0;
		keys[0] = '\0';
		for (c = 0; c < 6 && d->codes[c] != 0; c++)
			if (!lesson_takes(d->codes[c]) && used < sizeof keys)
				used += (size_t)snprintf(keys + used, sizeof keys - used,
				    "%s%s", used ? " " : "", code_name(d->codes[c], one,
				    sizeof one));
		if (used == 0)
			continue;	/* every key of it is the lesson's */
		snprintf(first, sizeof first, "  %-13s ", keys);
		lesson_lines_wrap(ls, ui_keys_help_of(d, help, sizeof help), width,
		    first, "                ");
	}
}

/* The help over the whole screen, scrolled to help_first. */
static void
draw_help(struct tty *t, struct ui_grid *g)
{
	struct lesson_lines ls = { 0 };
	struct ui_rect all = { 0, 0, g->w, g->h };
	char shown[160];
	int i, y, rows = g->h - 2;

	ui_grid_clear(g, all, UI_ROLE_NORMAL);
	ui_grid_clear(g, (struct ui_rect){ 0, 0, g->w, 1 }, UI_ROLE_BAR);
	ui_grid_text(g, 1, 0, g->w - 2, UI_ROLE_BAR, fit(t, "Help: the keys of "
	    "the lesson, and of the view beside it", g->w - 2, shown,
	    sizeof shown));
	help_lines(t, g->w - 2, &ls);
	t->help_lines = ls.n;
	t->help_page = rows > 1 ? rows - 1 : 1;
	if (t->help_first > ls.n - rows)
		t->help_first = ls.n - rows;
	if (t->help_first < 0)
		t->help_first = 0;
	for (i = t->help_first, y = 1; i < ls.n && y < g->h - 1; i++, y++)
		ui_grid_text(g, 1, y, g->w - 2, i == 0 || (i > 0 && ls.line[i][0] !=
		    ' ' && ls.line[i][0] != '\0') ? UI_ROLE_LABEL : UI_ROLE_NORMAL,
		    ls.line[i]);
	ui_grid_clear(g, (struct ui_rect){ 0, g->h - 1, g->w, 1 }, UI_ROLE_BAR);
	snprintf(shown, sizeof shown, "%s any other key closes the help",
	    ls.n > rows ? "Up/Down/PgUp/PgDn scroll," : "");
	ui_grid_text(g, 1, g->h - 1, g->w - 2, UI_ROLE_BAR, shown);
	lesson_lines_free(&ls);
}

static int
help_key(struct tty *t, const struct ui_key *k)
{
	switch (k->code) {
	case UI_KEY_DOWN:
		t->help_first++;
		break;
	case UI_KEY_UP:
		t->help_first--;
		break;
	case UI_KEY_PGDN:
		t->help_first += t->help_page;
		break;
	case UI_KEY_PGUP:
		t->help_first -= t->help_page;
		break;
	case UI_KEY_RESIZE:
		break;
	default:
		t->help = 0;	/* the key that closes it does nothing else */
		break;
	}
	if (t->help_first < 0)
		t->help_first = 0;
	return UI_HANDLED | UI_REDRAW;
}

/* The lines the narration pane needs to show the whole slide at width. */
static int
needed(struct tty *t, int width)
{
	struct lesson_lines text = { 0 };
	int *roles, follow_end, n;

	roles = narration(t, width, &text, &follow_end);
	n = text.n + 3;
	free(roles);
	lesson_lines_free(&text);
	return n;
}

/*
 * A slide that shows a figure (`show`, lesson_show.h): the figure where
 * the view would be, drawn by the view's own code.  Beside the narration
 * when the figure's columns fit there, else under it, the narration
 * given what the slide needs (and at least TTY_NARRATION_LINES) and the
 * figure the rest, up to all it wants.  Returns 0 when the screen is
 * too small for both (the view's own message then says so).
 */
static int
figure(struct tty *t, struct ui_grid *g)
{
	struct lesson_run *run = t->slides.run;
	int want = lesson_show_want(run), nw, nh;

	nw = g->w - LESSON_SHOW_WIDTH - 1;
	if (nw >= TTY_NARRATION_MIN && g->h >= TTY_NARRATION_LINES) {
		draw_narration(t, g, (struct ui_rect){ 0, 0, nw, g->h });
		lesson_show_draw(run, g, (struct ui_rect){ nw + 1, 0,
		    g->w - nw - 1, g->h }, t->unicode);
		return 1;
	}
	if (g->w < 40 || g->h < 2 * TTY_NARRATION_LINES)
		return 0;
	nh = needed(t, g->w - 2);
	if (nh < TTY_NARRATION_LINES)
		nh = TTY_NARRATION_LINES;
	if (nh > g->h - want)
		nh = g->h - want;
	if (nh < TTY_NARRATION_LINES)
		nh = TTY_NARRATION_LINES;
	draw_narration(t, g, (struct ui_rect){ 0, 0, g->w, nh });
	lesson_show_draw(run, g, (struct ui_rect){ 0, nh, g->w, g->h - nh },
	    t->unicode);
	return 1;
}

/* Splits the screen: narration beside the view when both fit, else above
 * it (without the view's key bar), else a message that the terminal is
 * too small. */
static void
frame(struct ui *ui, struct ui_grid *g, void *ctx)
{
	struct tty *t = ctx;
	struct ui_rect all = { 0, 0, g->w, g->h };
	int mw, mh, nw, nh;

	if (t->help && g->w >= 20 && g->h >= 4) {
		t->grid = NULL;	/* no narration bar to mark busy on */
		draw_help(t, g);
		return;
	}
	if (lesson_show_active(t->slides.run) && figure(t, g))
		return;
	ui_set_hidden(ui, 0);
	ui_min_size(ui, &mw, &mh);
	nw = (int)(g->w * TTY_NARRATION_SHARE);
	if (nw > g->w - TTY_VIEW_WANT - 1)
		nw = g->w - TTY_VIEW_WANT - 1;
	if (t->why[0] != '\0' && nw >= TTY_NARRATION_MIN && g->h >= mh) {
		draw_narration(t, g, (struct ui_rect){ 0, 0, nw, g->h });
		draw_frame(t, g, (struct ui_rect){ nw + 1, 0, g->w - nw - 1, g->h });
		return;
	}
	if (nw >= TTY_NARRATION_MIN && g->h >= mh) {
		ui_set_heat_max(ui, (int)((g->w - nw - 1) * TTY_HEAT_SHARE));
		draw_narration(t, g, (struct ui_rect){ 0, 0, nw, g->h });
		ui_draw(ui, g, (struct ui_rect){ nw + 1, 0, g->w - nw - 1, g->h });
		return;
	}
	ui_set_heat_max(ui, (int)(g->w * TTY_HEAT_SHARE));
	ui_set_hidden(ui, UI_HIDE_KEYBAR);
	ui_min_size(ui, &mw, &mh);
	/* A share of the height for the narration, more when the slide's
	 * text needs it and the view can spare it; the rest to the view. */
	nh = (int)(g->h * TTY_STACKED_SHARE);
	if (nh < needed(t, g->w - 2))
		nh = needed(t, g->w - 2);
	if (nh < TTY_NARRATION_LINES)
		nh = TTY_NARRATION_LINES;
	if (nh > g->h - mh)
		nh = g->h - mh;
	if (g->w >= mw && nh >= TTY_NARRATION_LINES) {
		draw_narration(t, g, (struct ui_rect){ 0, 0, g->w, nh });
		/* stacked too, a problem the panes cannot show gets the frame:
		 * never the problem before it, nor the built-in example */
		if (t->why[0] != '\0')
			draw_frame(t, g, (struct ui_rect){ 0, nh, g->w, g->h - nh });
		else
			ui_draw(ui, g, (struct ui_rect){ 0, nh, g->w, g->h - nh });
		return;
	}
	/* Keys are not taken while the lesson cannot be seen (key()). */
	t->body = 0;
	t->grid = NULL;
	ui_draw_too_small(g, all, mw, mh + TTY_NARRATION_LINES);
}

/* The page PgDn and Space turn: what the pane shows, less one line
 * kept for context. */
static int
page(const struct tty *t)
{
	return t->body > 2 ? t->body - 1 : 1;
}

static void
jump(struct tty *t)
{
	char *end;
	long n = strtol(t->input, &end, 10);

	if (t->input[0] == '\0' || *end != '\0' || n < 1 ||
	    n > t->slides.count) {
		snprintf(t->message, sizeof t->message, "no slide '%s': the slides "
		    "are 1 to %d", t->input, t->slides.count);
		return;
	}
	if (lesson_slides_go(&t->slides, (int)n) != 0 && !t->stopped)
		t->failed = 1;
}

static void
check_answer(struct tty *t)
{
	struct lesson_item *it = lesson_slides_hidden(&t->slides);
	char *end;
	double x = strtod(t->input, &end);

	if (it == NULL || !it->q->numeric)
		return;
	if (t->input[0] == '\0' || *end != '\0' || !isfinite(x)) {
		snprintf(t->message, sizeof t->message, "'%s' is not a number",
		    t->input);
		return;
	}
	if (fabs(x - it->q->number) <= it->q->tol) {
		snprintf(t->message, sizeof t->message, "%s: right.", t->input);
		it->revealed = 1;
		t->follow = it;
	} else
		snprintf(t->message, sizeof t->message, "%s: not yet. = tries again, "
		    "Space shows the answer.", t->input);
}

static int
prompt_key(struct tty *t, const struct ui_key *k)
{
	size_t n = strlen(t->input);
	enum tty_prompt p = t->prompt;

	switch (k->code) {
	case UI_KEY_ESC:
		t->prompt = TTY_NO_PROMPT;
		break;
	case UI_KEY_ENTER:
		t->prompt = TTY_NO_PROMPT;
		if (p == TTY_JUMP) {
			busy(t);
			jump(t);
			return t->failed || t->stopped ? UI_HANDLED | UI_QUIT :
			    arrived(t);
		}
		check_answer(t);
		break;
	case UI_KEY_BACKSPACE:
		if (n > 0)
			t->input[n - 1] = '\0';
		break;
	default:
		if (k->code < 0x80 && strchr(p == TTY_JUMP ? "0123456789" :
		    "0123456789.-+eE", k->code) != NULL && k->code != 0 &&
		    n + 1 < sizeof t->input) {
			t->input[n] = (char)k->code;
			t->input[n + 1] = '\0';
		}
		break;
	}
	return UI_HANDLED | UI_REDRAW;
}

static int
key(struct ui *ui, const struct ui_key *k, void *ctx)
{
	struct tty *t = ctx;
	struct lesson_slides *s = &t->slides;
	struct lesson_item *hidden;
	int rc;

	(void)ui;
	if (k->code == UI_KEY_RESIZE)
		return 0;
	/* Nothing of the lesson is on the screen: no key may change it
	 * unseen, and none goes to the view either. */
	if (t->body <= 0)
		return k->code == 'q' ? UI_HANDLED | UI_QUIT : UI_HANDLED;
	if (t->help)
		return help_key(t, k);
	if (t->prompt != TTY_NO_PROMPT)
		return prompt_key(t, k);
	t->message[0] = '\0';
	switch (k->code) {
	case 'q':
		return UI_HANDLED | UI_QUIT;
	case ' ':
		if (t->scroll < t->max_scroll) {
			t->scroll += page(t);
			return UI_HANDLED | UI_REDRAW;
		}
		/* FALLTHROUGH */
	case UI_KEY_ENTER:
	case UI_KEY_RIGHT:
		/* One answer at a time, each on its own key, then the slide. */
		hidden = lesson_slides_hidden(s);
		if (hidden != NULL) {
			hidden->revealed = 1;
			t->follow = hidden;
			return UI_HANDLED | UI_REDRAW;
		}
		if (!s->at_end)
			busy(t);
		rc = lesson_slides_forward(s);
		if (rc == 1) {
			snprintf(t->message, sizeof t->message, "The end of the lesson: "
			    "q quits, Left goes back.");
			return UI_HANDLED | UI_REDRAW;
		}
		break;
	case UI_KEY_LEFT:
		if (s->index > 1)
			busy(t);
		rc = lesson_slides_back(s);
		if (rc == 1) {
			snprintf(t->message, sizeof t->message, "This is the first "
			    "slide.");
			return UI_HANDLED | UI_REDRAW;
		}
		break;
	case 'a':
		hidden = lesson_slides_hidden(s);
		if (hidden == NULL)
			snprintf(t->message, sizeof t->message, "No hidden answer on "
			    "this slide.");
		else {
			hidden->revealed = 1;
			t->follow = hidden;
		}
		return UI_HANDLED | UI_REDRAW;
	case '=':
		hidden = lesson_slides_hidden(s);
		if (hidden == NULL || !hidden->q->numeric) {
			snprintf(t->message, sizeof t->message, "No number to answer "
			    "on this slide.");
			return UI_HANDLED | UI_REDRAW;
		}
		t->prompt = TTY_ANSWER;
		t->input[0] = '\0';
		t->follow = hidden;
		return UI_HANDLED | UI_REDRAW;
	case 'j':
		t->prompt = TTY_JUMP;
		t->input[0] = '\0';
		return UI_HANDLED | UI_REDRAW;
	case '?':
		t->help = 1;
		t->help_first = 0;
		return UI_HANDLED | UI_REDRAW;
	case UI_KEY_PGUP:
		t->scroll = t->scroll > page(t) ? t->scroll - page(t) : 0;
		return UI_HANDLED | UI_REDRAW;
	case UI_KEY_PGDN:
		t->scroll = t->scroll + page(t) < t->max_scroll ?
		    t->scroll + page(t) : t->max_scroll;
		return UI_HANDLED | UI_REDRAW;
	default:
		/* the view's key, unless the view is not shown */
		return t->why[0] != '\0' ? UI_HANDLED : 0;
	}
	if (rc < 0) {
		t->failed = !t->stopped;	/* q in a build: just the end */
		return UI_HANDLED | UI_QUIT;
	}
	return arrived(t);
}

int
lesson_tty_run(const struct lesson *l, const char *notes_to, int *sig,
    char *warn, size_t warnlen, char *err, size_t errlen)
{
	struct ui_hooks hooks = { .frame = frame, .key = key, .idle = idle };
	struct sigaction ign, old_pipe;
	struct options defaults;
	struct tty t;
	int rc = -1, r, open = 0;

	*sig = 0;
	if (warnlen > 0)
		warn[0] = '\0';
	memset(&t, 0, sizeof t);
	/* A notes FIFO whose reader went away is a failed write (EPIPE),
	 * which stops the notes; the lesson goes on. */
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	t.t0 = t.slide_t0 = util_now();
	t.prev_s = -1;
	if (notes_to != NULL) {
		t.notes = lesson_notes_open(notes_to, err, errlen);
		if (t.notes == NULL)
			goto done;
	}
	/* The terminal first: the first slide's problem may take long to
	 * build, and its progress (and q) need the screen. */
	ui_style_detect(&t.st);
	if (ui_term_open(&t.st, err, errlen) != 0)
		goto done;
	open = 1;
	t.unicode = t.st.unicode;
	t.progress = (struct fulltimeline_progress){ progress, &t };
	if (lesson_slides_open_progress(&t.slides, l, &t.progress, err,
	    errlen) != 0)
		goto closed;
	t.clock_slide = t.slides.index;
	/* The view starts on the built-in example (quick); sync_view then
	 * brings it to the lesson's first problem, through the progress
	 * screen, when the view can show it. */
	options_init(&defaults);
	t.ui = ui_new(&defaults, &t.st, err, errlen);
	if (t.ui == NULL)
		goto closed;
	ui_set_busy_keys(t.ui, TTY_BUSY_KEYS);
	progress_done(&t);
	if (sync_view(&t, err, errlen) != 0 || send_notes(&t, err, errlen) != 0)
		goto closed;
	hooks.ctx = &t;
	t.body = 1;
	r = ui_loop(t.ui, &hooks, err, errlen);
	ui_term_close();
	open = 0;
	if (r < 0)
		goto done;
	if (t.failed) {
		util_error(err, errlen, "%s", t.slides.err);
		goto done;
	}
	*sig = r;
	rc = 0;
closed:
	if (open) {
		ui_term_close();
		if (t.stopped)
			rc = 0;		/* q while the first slide built */
	}
	/* q (or a signal) stopped a build: the end of the lesson, not an
	 * error; a signal is then the lesson's to die of. */
	if (t.stopped && *sig == 0)
		*sig = ui_term_signal();
done:
	if (t.gone[0] != '\0' && warnlen > 0)
		snprintf(warn, warnlen, "%s", t.gone);
	progress_done(&t);
	ui_free(t.ui);
	if (t.slides.lesson != NULL)
		lesson_slides_close(&t.slides);
	lesson_notes_close(t.notes);
	sigaction(SIGPIPE, &old_pipe, NULL);
	return rc;
}
