/*
 * ui_term.c - the terminal: the only file of flashstep that calls curses.
 *
 * It copies a struct ui_grid to the screen, mapping each role to a
 * colour pair, or to bold / reverse / underline / dim in the monochrome
 * scheme (NO_COLOR set, or a terminal without colours); it reads keys
 * and mouse clicks as struct ui_key; and it gives the terminal back on
 * every way out: ui_term_close, exit() (atexit), SIGINT, SIGTERM, SIGHUP
 * (the terminal went away) and SIGQUIT (the handler only records the
 * signal; ui_term_key returns -1 and the loop unwinds through
 * ui_term_close).
 *
 *   closed --ui_term_open / ui_term_open_null--> open --ui_term_close--> closed
 */
#include "config.h"

#ifdef HAVE_NCURSESW
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>

#include "ui_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

static SCREEN *ui_term_screen;
static FILE *ui_term_null_out, *ui_term_null_in;
static int ui_term_active;
static int ui_term_handlers;	/* our signal handlers are in place */
static int ui_term_exit_hook;
static int ui_term_unicode;
static volatile sig_atomic_t ui_term_caught;

/* The signals after which the terminal is given back before dying: any
 * of them left to its default would leave it raw, keys unechoed. */
static const int ui_term_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define UI_TERM_NSIGNALS (int)(sizeof ui_term_signals / sizeof ui_term_signals[0])
static struct sigaction ui_term_old[UI_TERM_NSIGNALS];
static int ui_term_took[UI_TERM_NSIGNALS];

/* What each role looks like: attributes, and a colour pair (0: none). */
static attr_t ui_term_attr[UI_ROLES];
static short ui_term_pair[UI_ROLES];

/* The monochrome scheme: attributes only.  Heat levels are told apart by
 * their shade characters. */
static const attr_t ui_term_mono[UI_ROLES] = {
	[UI_ROLE_TITLE] = A_BOLD,
	[UI_ROLE_BAR] = A_REVERSE,
	[UI_ROLE_KEY] = A_REVERSE | A_BOLD,
	[UI_ROLE_DIM] = A_DIM,
	[UI_ROLE_VALUE_CHANGED] = A_BOLD | A_UNDERLINE,
	[UI_ROLE_ROW_MAX] = A_UNDERLINE,
	[UI_ROLE_MASKED] = A_DIM,
	[UI_ROLE_FOCUS] = A_BOLD,
	[UI_ROLE_PHASE] = A_BOLD,
	[UI_ROLE_TILE_CURRENT] = A_BOLD,
	[UI_ROLE_TILE_SKIPPED] = A_DIM,
	[UI_ROLE_MESSAGE] = A_BOLD,
	[UI_ROLE_ERROR] = A_BOLD | A_REVERSE,
	[UI_ROLE_GPU] = A_UNDERLINE,
	[UI_ROLE_INPUT] = A_UNDERLINE,
};

/* The colour scheme: foreground, background (-1: the terminal's) and
 * attributes per role. */
static const struct {
	short fg, bg;
	attr_t attr;
} ui_term_colour[UI_ROLES] = {
	[UI_ROLE_NORMAL] = { -1, -1, 0 },
	[UI_ROLE_TITLE] = { COLOR_CYAN, -1, A_BOLD },
	[UI_ROLE_BAR] = { COLOR_BLACK, COLOR_CYAN, 0 },
	[UI_ROLE_KEY] = { COLOR_BLACK, COLOR_CYAN, A_BOLD },
	[UI_ROLE_LABEL] = { COLOR_CYAN, -1, 0 },
	[UI_ROLE_DIM] = { -1, -1, A_DIM },
	[UI_ROLE_VALUE_CHANGED] = { COLOR_YELLOW, -1, A_BOLD },
	[UI_ROLE_ROW_MAX] = { COLOR_MAGENTA, -1, A_BOLD },
	[UI_ROLE_MASKED] = { -1, -1, A_DIM },
	[UI_ROLE_FOCUS] = { COLOR_GREEN, -1, A_BOLD },
	[UI_ROLE_PHASE] = { COLOR_GREEN, -1, A_BOLD },
	[UI_ROLE_TILE_CURRENT] = { COLOR_YELLOW, -1, A_BOLD },
	[UI_ROLE_TILE_DONE] = { -1, -1, 0 },
	[UI_ROLE_TILE_SKIPPED] = { -1, -1, A_DIM },
	[UI_ROLE_MESSAGE] = { COLOR_GREEN, -1, 0 },
	[UI_ROLE_ERROR] = { COLOR_WHITE, COLOR_RED, A_BOLD },
	[UI_ROLE_GPU] = { COLOR_MAGENTA, -1, 0 },
	[UI_ROLE_INPUT] = { COLOR_BLACK, COLOR_WHITE, 0 },
	[UI_ROLE_HEAT0] = { COLOR_BLUE, -1, 0 },
	[UI_ROLE_HEAT1] = { COLOR_CYAN, -1, 0 },
	[UI_ROLE_HEAT2] = { COLOR_GREEN, -1, 0 },
	[UI_ROLE_HEAT3] = { COLOR_YELLOW, -1, 0 },
	[UI_ROLE_HEAT4] = { COLOR_RED, -1, A_BOLD },
};

/* With 256 colours the heat levels get a smoother ramp. */
static const short ui_term_heat256[UI_HEAT_LEVELS] = { 24, 37, 71, 178, 196 };

static void
ui_term_on_signal(int sig)
{
	ui_term_caught = sig;
}

static void
ui_term_scheme(struct ui_style *st)
{
	short fg, bg, defbg = COLOR_BLACK, deffg = COLOR_WHITE;
	int r;

	st->color = st->color && has_colors();
	memset(ui_term_pair, 0, sizeof ui_term_pair);
	if (!st->color) {
		memcpy(ui_term_attr, ui_term_mono, sizeof ui_term_attr);
		return;
	}
	start_color();
	if (use_default_colors() == OK)
		defbg = deffg = -1;
	for (r = 0; r < UI_ROLES; r++) {
		fg = ui_term_colour[r].fg;
		bg = ui_term_colour[r].bg;
		if (r >= UI_ROLE_HEAT0 && COLORS >= 256)
			fg = ui_term_heat256[r - UI_ROLE_HEAT0];
		if (fg < 0)
			fg = deffg;
		if (bg < 0)
			bg = defbg;
		ui_term_attr[r] = ui_term_colour[r].attr;
		if (r + 1 < COLOR_PAIRS && init_pair((short)(r + 1), fg, bg) == OK)
			ui_term_pair[r] = (short)(r + 1);
	}
}

/* Settings shared by the real and the null terminal. */
static void
ui_term_setup(struct ui_style *st)
{
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);	/* Esc alone should not wait a second */
	ui_term_scheme(st);
	ui_term_unicode = st->unicode;
	ui_term_active = 1;
}

/* Can the terminal just opened move the cursor to a row and column
 * (terminfo's cup)?  The view draws nothing without it. */
static int
ui_term_addressable(void)
{
	char *cup = tigetstr("cup");

	return cup != NULL && cup != (char *)-1;
}

static void
ui_term_exit(void)
{
	ui_term_close();
}

/*
 * curses takes the screen's size from LINES and COLUMNS when they are
 * set; past a short's range (32767) newterm fails, which would read as
 * a bad TERM.  Such a value is named instead.  0, or -1 with err.
 */
static int
ui_term_check_size_env(char *err, size_t errlen)
{
	static const char *const names[] = { "LINES", "COLUMNS" };
	const char *v;
	char *end;
	long x;
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if ((v = getenv(names[i])) == NULL || *v == '\0')
			continue;
		errno = 0;
		x = strtol(v, &end, 10);
		if (*end == '\0' && (x > 32767 || errno == ERANGE))
			return util_error(err, errlen, "%s=%s: curses takes a "
			    "terminal size up to 32767 (unset %s to use the "
			    "terminal's own)", names[i], v, names[i]);
	}
	return 0;
}

int
ui_term_open(struct ui_style *st, char *err, size_t errlen)
{
	struct sigaction sa;
	const char *term = getenv("TERM");
	int i;

	if (ui_term_active)
		return util_error(err, errlen, "the terminal is already open");
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return util_error(err, errlen, "the view needs a terminal on stdin "
		    "and stdout (for text output use `flashstep trace`)");
	if (ui_term_check_size_env(err, errlen) != 0)
		return -1;
	ui_style_detect(st);
	ui_term_screen = newterm(NULL, stdout, stdin);
	if (ui_term_screen != NULL && !ui_term_addressable()) {
		/* dumb and its kin: curses would start and draw nothing
		 * usable, so it is refused like a type curses does not know. */
		endwin();
		delscreen(ui_term_screen);
		ui_term_screen = NULL;
	}
	if (ui_term_screen == NULL)
		return util_error(err, errlen, "cannot use the terminal type '%s' "
		    "(set TERM, e.g. TERM=xterm)", term != NULL ? term : "");
	set_term(ui_term_screen);
	ui_term_setup(st);
	mousemask(BUTTON1_PRESSED, NULL);
	mouseinterval(0);

	/* After newterm: ncurses installs its own handlers there, ours
	 * replace them so the loop can unwind and clean up. */
	ui_term_caught = 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = ui_term_on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < UI_TERM_NSIGNALS; i++) {
		/* One the user chose to ignore (nohup) stays ignored. */
		ui_term_took[i] = sigaction(ui_term_signals[i], NULL,
		    &ui_term_old[i]) == 0 && ui_term_old[i].sa_handler != SIG_IGN &&
		    sigaction(ui_term_signals[i], &sa, NULL) == 0;
	}
	ui_term_handlers = 1;
	if (!ui_term_exit_hook) {
		atexit(ui_term_exit);
		ui_term_exit_hook = 1;
	}
	return 0;
}

int
ui_term_open_null(int w, int h, struct ui_style *st, char *err, size_t errlen)
{
	const char *types[] = { getenv("TERM"), "xterm-256color", "xterm",
	    "vt100" };
	size_t i;

	if (ui_term_active)
		return util_error(err, errlen, "the terminal is already open");
	ui_style_detect(st);
	ui_term_null_out = fopen("/dev/null", "w");
	ui_term_null_in = fopen("/dev/null", "r");
	if (ui_term_null_out == NULL || ui_term_null_in == NULL) {
		util_error(err, errlen, "/dev/null: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < sizeof types / sizeof types[0]; i++) {
		if (types[i] == NULL || *types[i] == '\0' ||
		    strcmp(types[i], "dumb") == 0)
			continue;
		ui_term_screen = newterm(types[i], ui_term_null_out,
		    ui_term_null_in);
		if (ui_term_screen != NULL)
			break;
	}
	if (ui_term_screen == NULL) {
		util_error(err, errlen, "no usable terminal description "
		    "(tried $TERM, xterm-256color, xterm, vt100)");
		goto fail;
	}
	set_term(ui_term_screen);
	resizeterm(h, w);
	ui_term_setup(st);
	return 0;
fail:
	if (ui_term_null_out != NULL)
		fclose(ui_term_null_out);
	if (ui_term_null_in != NULL)
		fclose(ui_term_null_in);
	ui_term_null_out = ui_term_null_in = NULL;
	return -1;
}

void
ui_term_close(void)
{
	int i;

	if (!ui_term_active)
		return;
	ui_term_active = 0;
	mousemask(0, NULL);
	curs_set(1);
	endwin();
	delscreen(ui_term_screen);
	ui_term_screen = NULL;
	if (ui_term_handlers) {
		for (i = 0; i < UI_TERM_NSIGNALS; i++)
			if (ui_term_took[i])
				sigaction(ui_term_signals[i], &ui_term_old[i], NULL);
		ui_term_handlers = 0;
	}
	if (ui_term_null_out != NULL)
		fclose(ui_term_null_out);
	if (ui_term_null_in != NULL)
		fclose(ui_term_null_in);
	ui_term_null_out = ui_term_null_in = NULL;
	fflush(stdout);
}

int
ui_term_signal(void)
{
	return (int)ui_term_caught;
}

void
ui_term_size(int *w, int *h)
{
	*w = getmaxx(stdscr);
	*h = getmaxy(stdscr);
}

int
ui_term_is_open(void)
{
	return ui_term_active && ui_term_null_out == NULL;
}

/* One run of cells of the same look, written at (x, y). */
static void
ui_term_run(const struct ui_cell *c, int n, int x, int y)
{
	attr_t a = ui_term_attr[c->role];
	int i;

	if (c->mods & UI_MOD_CURRENT)
		a |= A_REVERSE | A_BOLD;
	if (c->mods & UI_MOD_PENDING)
		a |= A_DIM;
	attr_set(a, ui_term_pair[c->role], NULL);
#ifdef HAVE_NCURSESW
	{
		wchar_t buf[512];

		for (i = 0; i < n && i < 511; i++)
			buf[i] = ui_term_unicode || c[i].ch < 0x80 ?
			    (wchar_t)c[i].ch : L'?';
		buf[i] = L'\0';
		mvaddnwstr(y, x, buf, i);
	}
#else
	{
		char buf[512];

		for (i = 0; i < n && i < 511; i++)
			buf[i] = c[i].ch < 0x80 ? (char)c[i].ch : '?';
		buf[i] = '\0';
		mvaddnstr(y, x, buf, i);
	}
#endif
}

void
ui_term_present(const struct ui_grid *g)
{
	const struct ui_cell *row, *start;
	int x, y, w = getmaxx(stdscr), h = getmaxy(stdscr), x0;

	if (w > g->w)
		w = g->w;
	if (h > g->h)
		h = g->h;
	for (y = 0; y < h; y++) {
		row = g->cells + (size_t)y * g->w;
		for (x0 = 0; x0 < w; x0 = x) {
			start = row + x0;
			for (x = x0 + 1; x < w && x - x0 < 511 &&
			    row[x].role == start->role && row[x].mods == start->mods;
			    x++)
				;
			ui_term_run(start, x - x0, x0, y);
		}
	}
	attr_set(A_NORMAL, 0, NULL);
	wnoutrefresh(stdscr);
	doupdate();
}

/* Curses' key codes as ours. */
static int
ui_term_map(int code)
{
	switch (code) {
	case KEY_UP:
		return UI_KEY_UP;
	case KEY_DOWN:
		return UI_KEY_DOWN;
	case KEY_LEFT:
		return UI_KEY_LEFT;
	case KEY_RIGHT:
		return UI_KEY_RIGHT;
	case KEY_HOME:
	case KEY_A1:
		return UI_KEY_HOME;
	case KEY_END:
	case KEY_C1:
		return UI_KEY_END;
	case KEY_PPAGE:
		return UI_KEY_PGUP;
	case KEY_NPAGE:
		return UI_KEY_PGDN;
	case KEY_BTAB:
		return UI_KEY_BTAB;
	case KEY_RESIZE:
		return UI_KEY_RESIZE;
	case KEY_BACKSPACE:
		return UI_KEY_BACKSPACE;
	case KEY_ENTER:
		return UI_KEY_ENTER;
	case KEY_MOUSE:
		return UI_KEY_MOUSE;
	default:
		return 0;
	}
}

/* Plain characters as ours: Enter, Backspace and Esc in one spelling. */
static int
ui_term_char(int c)
{
	switch (c) {
	case '\r':
	case '\n':
		return UI_KEY_ENTER;
	case 8:
	case 127:
		return UI_KEY_BACKSPACE;
	default:
		return c;
	}
}

int
ui_term_key(int timeout_ms, struct ui_key *k)
{
	double end = util_now() + timeout_ms / 1000.0;
	int left, r, code;
	MEVENT ev;
#ifdef HAVE_NCURSESW
	wint_t wc;
#endif

	memset(k, 0, sizeof *k);
	for (;;) {
		if (ui_term_caught)
			return -1;
		/* Short waits, so a signal is seen even with no key. */
		left = timeout_ms < 0 ? 100 : (int)((end - util_now()) * 1000.0);
		if (left > 100)
			left = 100;
		if (left < 0)
			left = 0;
		timeout(left);
#ifdef HAVE_NCURSESW
		r = get_wch(&wc);
		code = (int)wc;
#else
		code = getch();
		r = code == ERR ? ERR : code >= KEY_MIN ? KEY_CODE_YES : OK;
#endif
		if (r == ERR) {
			if (ui_term_caught)
				return -1;
			if (timeout_ms >= 0 && util_now() >= end)
				return 0;
			continue;
		}
		if (r == KEY_CODE_YES) {
			k->code = ui_term_map(code);
			if (k->code == 0)
				continue;
			if (k->code == UI_KEY_MOUSE) {
				if (getmouse(&ev) != OK || !(ev.bstate & BUTTON1_PRESSED))
					continue;
				k->x = ev.x;
				k->y = ev.y;
			}
			return 1;
		}
		k->code = ui_term_char(code);
		return 1;
	}
}
