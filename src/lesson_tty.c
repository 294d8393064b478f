/*
 * lesson_tty.c - the interactive lesson runner on plain ncurses: the
 * narration pane on the left, a compact state pane (lesson_view.h) on
 * the right, a title bar and a key bar.
 *
 * All the lesson logic is in lesson_slides.c; this file only draws a
 * slide and maps keys to slides_forward / back / reveal.  When the
 * simulator's own panes (src/ui) can be drawn into a rectangle, the
 * state pane is the one part to replace.
 */
#include "config.h"

#include "lesson_tty.h"
#include "lesson_slides.h"
#include "lesson_view.h"

#include <curses.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

/* Colour pairs by role. */
enum {
	ROLE_BAR = 1,
	ROLE_NOTE,
	ROLE_FAILED,
	ROLE_QUESTION,
	ROLE_DIM,
};

struct tty {
	struct lesson_slides slides;
	int color;
	int scroll;		/* narration lines scrolled off the top */
	int max_scroll;
	char message[160];	/* one line above the key bar, until a key */
};

static int
role_attr(const struct tty *t, int role)
{
	if (!t->color) {
		switch (role) {
		case ROLE_BAR:
			return A_REVERSE;
		case ROLE_FAILED:
		case ROLE_QUESTION:
			return A_BOLD;
		case ROLE_NOTE:
			return A_UNDERLINE;
		case ROLE_DIM:
			return A_DIM;
		default:
			return A_NORMAL;
		}
	}
	return COLOR_PAIR(role) | (role == ROLE_QUESTION || role == ROLE_FAILED ?
	    A_BOLD : 0);
}

/* The narration of the slide as lines, each with its role. */
static void
narration(struct tty *t, int width, struct lesson_lines *ls, int **roles)
{
	const struct lesson_slides *s = &t->slides;
	const struct lesson_item *it;
	int i, from, role, *grown;

	*roles = NULL;
	for (i = 0; i < s->nitems; i++) {
		it = &s->items[i];
		from = ls->n;
		switch (it->kind) {
		case LESSON_ITEM_SAY:
			lesson_lines_wrap(ls, it->text, width, "", "");
			role = 0;
			break;
		case LESSON_ITEM_NOTE:
			lesson_lines_wrap(ls, it->text, width, "note: ", "      ");
			role = ROLE_NOTE;
			break;
		case LESSON_ITEM_QUESTION:
			lesson_view_question(it->q, it->number, it->revealed, width, ls);
			if (!it->revealed)
				lesson_lines_add(ls, "    (a shows the answer)");
			role = ROLE_QUESTION;
			break;
		case LESSON_ITEM_PROBLEM:
			lesson_lines_wrap(ls, it->text, width, "", "          ");
			role = ROLE_DIM;
			break;
		case LESSON_ITEM_FAILED:
			lesson_lines_wrap(ls, it->text, width, "!! ", "   ");
			role = ROLE_FAILED;
			break;
		default:
			lesson_lines_wrap(ls, it->text, width, "", "  ");
			role = 0;
			break;
		}
		lesson_lines_add(ls, "%s", "");
		grown = realloc(*roles, (size_t)(ls->n + 1) * sizeof *grown);
		if (grown == NULL) {
			ls->oom = 1;
			return;
		}
		*roles = grown;
		while (from < ls->n)
			(*roles)[from++] = role;
	}
}

/*
 * Draws a line of the state pane at (y, x): a line wider than the pane
 * goes on below, indented, cut at a blank so numbers stay whole and the
 * blanks that align columns stay.  Returns the lines it took (at most
 * maxh).
 */
static int
draw_cut(int y, int x, int width, int maxh, const char *text)
{
	const char *p = text, *cut;
	int used = 0, indent = 0, room;

	while (*p != '\0' && used < maxh) {
		room = width - indent;
		if (room < 10)
			room = 10;
		if ((int)strlen(p) <= room) {
			mvprintw(y + used++, x + indent, "%s", p);
			break;
		}
		for (cut = p + room; cut > p && *cut != ' '; cut--)
			;
		if (cut == p)
			cut = p + room;
		mvprintw(y + used++, x + indent, "%.*s", (int)(cut - p), p);
		for (p = cut; *p == ' '; p++)
			;
		indent = 8;
	}
	return used > 0 ? used : 1;
}

static void
draw(struct tty *t)
{
	struct lesson_slides *s = &t->slides;
	struct lesson_lines text = { 0 }, state = { 0 };
	int w, h, nw, sx, sy, sh, ny, nh, i, y, *roles = NULL;
	const char *keys;

	getmaxyx(stdscr, h, w);
	erase();
	/* Side by side when there is room for both, else state below. */
	/* The state pane wants 80 columns; the narration at least 40. */
	if (w >= 100) {
		nw = w - 82 > w / 2 ? w - 82 : w / 2;
		sx = nw + 2;
		sy = 1;
		sh = h - 3;
		nh = h - 3;
	} else {
		nw = w - 2;
		sx = 1;
		sh = (h - 3) / 2;
		nh = h - 3 - sh;
		sy = 1 + nh;
	}
	ny = 1;

	attrset(role_attr(t, ROLE_BAR));
	mvhline(0, 0, ' ', w);
	mvprintw(0, 1, "%.*s", w - 24 > 0 ? w - 24 : 0, s->lesson->title);
	mvprintw(0, w - 22 > 0 ? w - 22 : 0, "%20s", "");
	mvprintw(0, w - 22 > 0 ? w - 22 : 0, "slide %d%s", s->index,
	    s->at_end ? " (the end)" : "");
	attrset(A_NORMAL);

	narration(t, nw - 1, &text, &roles);
	t->max_scroll = text.n > nh ? text.n - nh : 0;
	if (t->scroll > t->max_scroll)
		t->scroll = t->max_scroll;
	for (i = t->scroll, y = ny; i < text.n && y < ny + nh; i++, y++) {
		attrset(roles != NULL ? role_attr(t, roles[i]) : (int)A_NORMAL);
		mvprintw(y, 1, "%.*s", nw - 1, text.line[i]);
	}
	attrset(A_NORMAL);
	if (t->max_scroll > 0)
		mvprintw(ny + nh - 1, nw - 10 > 0 ? nw - 10 : 0, "%s",
		    t->scroll < t->max_scroll ? "[more: Dn]" : "[Up: top] ");

	lesson_view_state(s->run, &state);
	if (w >= 100)
		mvvline(1, nw + 1, ACS_VLINE, h - 3);
	else
		mvhline(sy - 1, 0, ACS_HLINE, w);
	for (i = 0, y = sy; i < state.n && y < sy + sh; i++)
		y += draw_cut(y, sx, w - sx - 1, sy + sh - y, state.line[i]);

	if (t->message[0] != '\0')
		mvprintw(h - 2, 1, "%.*s", w - 2, t->message);
	attrset(role_attr(t, ROLE_BAR));
	mvhline(h - 1, 0, ' ', w);
	keys = lesson_slides_hidden(s) ? "space: answer  a: answer  Left: back  "
	    "Up/Down: scroll  q: quit" : s->at_end ? "Left: back  Up/Down: scroll  "
	    "q: quit" : "space/Right: next  Left: back  Up/Down: scroll  q: quit";
	mvprintw(h - 1, 1, "%.*s", w - 2, keys);
	attrset(A_NORMAL);
	refresh();
	free(roles);
	lesson_lines_free(&text);
	lesson_lines_free(&state);
}

/* Returns 1 to quit, 0 to go on, -1 on an error (t->slides.err). */
static int
key(struct tty *t, int ch)
{
	struct lesson_slides *s = &t->slides;
	int rc = 0;

	t->message[0] = '\0';
	switch (ch) {
	case 'q':
	case 'Q':
		return 1;
	case ' ':
	case '\n':
	case KEY_ENTER:
	case KEY_RIGHT:
	case 'n':
		/* A question's answer comes before the next slide. */
		if (lesson_slides_reveal(s) > 0)
			break;
		rc = lesson_slides_forward(s);
		if (rc == 1)
			snprintf(t->message, sizeof t->message, "This is the end of "
			    "the lesson: q quits, Left goes back.");
		t->scroll = 0;
		break;
	case KEY_LEFT:
	case KEY_BACKSPACE:
	case 'p':
		rc = lesson_slides_back(s);
		if (rc == 1)
			snprintf(t->message, sizeof t->message, "This is the first "
			    "slide.");
		t->scroll = 0;
		break;
	case 'a':
		if (lesson_slides_reveal(s) == 0)
			snprintf(t->message, sizeof t->message, "No question on this "
			    "slide.");
		break;
	case KEY_UP:
		if (t->scroll > 0)
			t->scroll--;
		break;
	case KEY_DOWN:
		if (t->scroll < t->max_scroll)
			t->scroll++;
		break;
	default:
		break;
	}
	return rc < 0 ? -1 : 0;
}

int
lesson_tty_run(const struct lesson *l, int presenter, char *err, size_t errlen)
{
	struct tty t;
	int rc = 0, ch, errs = 0;

	memset(&t, 0, sizeof t);
	if (lesson_slides_open(&t.slides, l, presenter, err, errlen) != 0)
		return -1;
	setlocale(LC_ALL, "");
	if (initscr() == NULL) {
		lesson_slides_close(&t.slides);
		return util_error(err, errlen, "cannot start the terminal (is TERM "
		    "set?)");
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	t.color = has_colors() && getenv("NO_COLOR") == NULL;
	if (t.color) {
		start_color();
		use_default_colors();
		init_pair(ROLE_BAR, COLOR_BLACK, COLOR_CYAN);
		init_pair(ROLE_NOTE, COLOR_MAGENTA, -1);
		init_pair(ROLE_FAILED, COLOR_RED, -1);
		init_pair(ROLE_QUESTION, COLOR_YELLOW, -1);
		init_pair(ROLE_DIM, COLOR_BLUE, -1);
	}
	for (;;) {
		draw(&t);
		ch = getch();
		/* ERR again and again: the terminal has gone away. */
		if (ch == ERR) {
			if (++errs == 100)
				break;
			continue;
		}
		errs = 0;
		rc = key(&t, ch);
		if (rc != 0)
			break;
	}
	endwin();
	if (rc < 0)
		util_error(err, errlen, "%s", t.slides.err);
	lesson_slides_close(&t.slides);
	return rc < 0 ? -1 : 0;
}
