/*
 * ui.h - the step-through view as a library: what `flashstep view` is
 * made of, for other commands (the lesson runner) to reuse.
 *
 * Three layers, as in tmux:
 *
 *   sim (model/sim.h) ->  struct ui: a view model that turns the sim's
 *                         state into pane contents, drawn into a grid of
 *                         cells (struct ui_grid).  Pure C: no curses, so
 *                         tests read the panes as text.
 *                    -->  ui_term_*: the only code that calls curses; it
 *                         copies a grid to the terminal and reads keys.
 *
 * A caller that shows the simulator beside its own pane (a lesson's
 * narration) does this:
 *
 *   struct ui_style st;
 *   struct ui *ui;
 *   if (ui_term_open(&st, err, sizeof err) != 0) ...  // restores the
 *           // terminal on exit, error, SIGINT and SIGTERM from now on
 *   ui = ui_new(&options, &st, err, sizeof err);
 *   struct ui_hooks h = { .frame = my_frame, .key = my_key, .ctx = me };
 *   rc = ui_loop(ui, &h, err, sizeof err);
 *   ui_free(ui);
 *   ui_term_close();
 *
 * where my_frame() splits the screen, writes its narration into the grid
 * with ui_grid_text / ui_grid_wrap and calls ui_draw(ui, g, rect) for the
 * simulator's part; my_key() sees every key first and returns 0 to let
 * the view handle it.  Between keys it may move the simulator with
 * ui_seek or sim_seek(ui_sim(ui), ...) and set the focused row with
 * ui_set_focus: the view reads the sim's position on every frame.
 *
 * This interface is stable: other branches build on it.
 */
#ifndef FLASHSTEP_UI_H
#define FLASHSTEP_UI_H

#include <stddef.h>
#include <stdint.h>

#include "app/options.h"
#include "model/sim.h"
#include "model/util.h"

/* ---- keys ------------------------------------------------------------ */

/* Printable keys are their ASCII code; the others are these. */
enum ui_keycode {
	UI_KEY_TAB = '\t',
	UI_KEY_ENTER = '\n',
	UI_KEY_ESC = 27,
	UI_KEY_BACKSPACE = 127,
	UI_KEY_UP = 0x1000,
	UI_KEY_DOWN,
	UI_KEY_LEFT,
	UI_KEY_RIGHT,
	UI_KEY_HOME,
	UI_KEY_END,
	UI_KEY_PGUP,
	UI_KEY_PGDN,
	UI_KEY_BTAB,		/* shift-Tab */
	UI_KEY_RESIZE,		/* the terminal changed size */
	UI_KEY_MOUSE,		/* a click at (x, y), screen cells */
};

struct ui_key {
	int code;		/* ASCII or enum ui_keycode */
	int x, y;		/* UI_KEY_MOUSE: where the button went down */
};

/* What a key handler did; ORed together.  0: not handled. */
#define UI_HANDLED	0x1	/* the key was used */
#define UI_REDRAW	0x2	/* the screen must be drawn again */
#define UI_QUIT		0x4	/* leave the loop */

/* ---- the cell grid ---------------------------------------------------- */

/*
 * Colours are named by role, not by colour: the terminal layer maps each
 * role to a colour pair, or to bold/reverse/underline/dim in the
 * monochrome scheme (NO_COLOR, or a terminal without colours).
 */
enum ui_role {
	UI_ROLE_NORMAL,
	UI_ROLE_TITLE,		/* a pane's title */
	UI_ROLE_BAR,		/* the header bar and the key bar */
	UI_ROLE_KEY,		/* a key's name in the key bar and help */
	UI_ROLE_LABEL,		/* headings, axis labels, symbols */
	UI_ROLE_DIM,		/* not computed yet at this phase */
	UI_ROLE_VALUE_CHANGED,	/* a value this step changed */
	UI_ROLE_ROW_MAX,	/* the max of a row of the tile */
	UI_ROLE_MASKED,		/* a masked entry */
	UI_ROLE_FOCUS,		/* the focused row */
	UI_ROLE_PHASE,		/* the current phase's equation */
	UI_ROLE_TILE_CURRENT,	/* the current tile */
	UI_ROLE_TILE_DONE,	/* tiles already visited */
	UI_ROLE_TILE_SKIPPED,	/* tiles the mask skips */
	UI_ROLE_MESSAGE,	/* the status line */
	UI_ROLE_ERROR,		/* an error in the status line or a form */
	UI_ROLE_GPU,		/* the GPU's values */
	UI_ROLE_INPUT,		/* a form's or prompt's input field */
	UI_ROLE_HEAT0,		/* heatmap levels, low to high */
	UI_ROLE_HEAT1,
	UI_ROLE_HEAT2,
	UI_ROLE_HEAT3,
	UI_ROLE_HEAT4,
	UI_ROLES
};
#define UI_HEAT_LEVELS 5

/* Modifiers over a role, for heatmap cells: the same heat level drawn
 * as the current tile, or as a tile not visited yet. */
#define UI_MOD_CURRENT	0x1
#define UI_MOD_PENDING	0x2

struct ui_cell {
	uint32_t ch;		/* a Unicode code point, one column wide */
	unsigned char role;	/* enum ui_role */
	unsigned char mods;	/* UI_MOD_* */
};

struct ui_rect {
	int x, y, w, h;
};

struct ui_grid {
	int w, h;
	struct ui_cell *cells;	/* h rows of w */
	struct ui_rect clip;	/* writes outside it are dropped */
};

/* Sizes g to w x h, blank, with no clip.  Returns 0, or -1 with err set
 * (g unchanged).  Start from a zeroed struct ui_grid. */
int ui_grid_resize(struct ui_grid *g, int w, int h, char *err, size_t errlen);
void ui_grid_free(struct ui_grid *g);

/* Limits every later write to r (within g); ui_grid_unclip lifts it. */
void ui_grid_clip(struct ui_grid *g, struct ui_rect r);
void ui_grid_unclip(struct ui_grid *g);

/* Blanks the part of r inside the clip. */
void ui_grid_clear(struct ui_grid *g, struct ui_rect r, int role);

/*
 * Writes UTF-8 text at (x, y), at most maxw cells (maxw < 0: to the right
 * edge), clipped; bytes that are not valid UTF-8 show as '?' and
 * control characters as spaces.  Returns the cells the text took
 * (written or clipped), so callers can place what follows.
 */
int ui_grid_text(struct ui_grid *g, int x, int y, int maxw, int role,
    const char *utf8);
int ui_grid_printf(struct ui_grid *g, int x, int y, int maxw, int role,
    const char *fmt, ...) UTIL_PRINTF(6, 7);

/* Word-wraps a paragraph into r ('\n' breaks a line).  Returns the lines
 * it needed, which may be more than r.h (the rest is not drawn). */
int ui_grid_wrap(struct ui_grid *g, struct ui_rect r, int role,
    const char *utf8);

/* Row y as UTF-8 text, trailing blanks removed (for tests).  Returns buf. */
char *ui_grid_line(const struct ui_grid *g, int y, char *buf, size_t len);

/* ---- style ----------------------------------------------------------- */

struct ui_style {
	int unicode;		/* a UTF-8 locale: box and shade characters */
	int color;		/* colours: the terminal has them, no NO_COLOR */
};

/* From the environment only: unicode when nl_langinfo(CODESET) is UTF-8
 * (after setlocale), color unless NO_COLOR is set.  ui_term_open also
 * asks the terminal. */
void ui_style_detect(struct ui_style *st);

/* s (UTF-8) for a terminal without UTF-8, in a malloc'd string (NULL
 * when out of memory): each character the panes draw by the panes' own
 * ASCII spelling (\u03b1 "alpha", \u2113 "l", \u2218 " (*) ", \u2026 "...",
 * \u2192 "->"), a few of prose's as the panes would spell them
 * (\u2264 "<=", a combining tilde "~"), any other "?". */
char *ui_style_ascii(const char *s);

/* ---- the view model ---------------------------------------------------- */

struct ui;

/*
 * A view over the problem and tiling that o describes: builds the problem,
 * its sim and its timeline (as `flashstep run` would: the combine with
 * --splits, the backward with --backward, model/fulltimeline.h) and stands at
 * step 0.  The
 * strings and inline data o's spec points to are borrowed: keep them
 * alive as long as the ui.  Returns NULL with err set (the problem's or
 * the sim's one-line message).  With the terminal open (ui_term_open
 * first), a build that takes long (the forward run to its end for the
 * backward or the combine) draws its progress and reads keys; q stops
 * it: then NULL with err empty (the reader quit; after a signal,
 * ui_term_signal says which).
 */
struct ui *ui_new(const struct options *o, const struct ui_style *st,
    char *err, size_t errlen);
void ui_free(struct ui *ui);

/* What the view refuses in o, checked by ui_new and ui_configure too:
 * gradient files (it writes none) and several heads (it shows one).
 * Returns 0, or -1 with err set. */
int ui_options_check(const struct options *o, char *err, size_t errlen);

/* The current sim, the timeline's forward (in a packed batch, --seqlens,
 * the sim of the sequence the reader stands in).  Valid until the view
 * rebuilds it (ui_configure, or the keys c, b, O, o, m, e) or moves into
 * another sequence: read it again after each key. */
struct sim *ui_sim(struct ui *ui);

/*
 * Rebuilds the problem and sim from o, keeping the position: the same
 * tile (i, j) and phase if it still exists, else the nearest step.
 * Returns 0, or -1 with err set and nothing changed, or 1 with err set
 * and nothing changed when q (or a signal) stopped a long build, which
 * shows its progress as ui_new's does.
 */
int ui_configure(struct ui *ui, const struct options *o, char *err,
    size_t errlen);

/* What ui_configure's progress screen says q does (a string that lives
 * as long as the ui; NULL: the view's own words). */
void ui_set_busy_keys(struct ui *ui, const char *keys);

/*
 * The view's progress screen for a long build of the caller's own (a
 * lesson's timeline), keys saying what q does: ui_busy_step is a
 * fulltimeline_progress function over it (model/fulltimeline.h), which
 * draws after a quarter second of quiet and returns 1 once q, Esc or a
 * signal came; ui_busy_stopped says whether one did.  Needs the terminal
 * open.  ui_busy_new returns NULL when out of memory.
 */
struct ui_busy;
struct ui_busy *ui_busy_new(const struct ui_style *st, const char *keys);
int ui_busy_step(void *ctx, const char *what, long done, long total);
int ui_busy_stopped(const struct ui_busy *b);
void ui_busy_free(struct ui_busy *b);

/* Goes to step k of the timeline and phase (timeline_seek's rules; the
 * forward's steps come first, so forward step k is step k).  Returns 0
 * or -1. */
int ui_seek(struct ui *ui, long k, int phase);

/* For a caller that stands before the first step (a lesson's first
 * slide), where the view can only show step 0's first phase: the
 * header says that no step has run yet, until the view moves (its keys,
 * ui_seek).  ui_is_before says whether it still does. */
void ui_set_before(struct ui *ui);
int ui_is_before(const struct ui *ui);

/* The focused row, as an index into the current tile's rows (clamped to
 * the tile when it changes).  The equations show this row's numbers. */
void ui_set_focus(struct ui *ui, int row);
int ui_focus(const struct ui *ui);

/* Stops play and closes the help screen, the edit form and the go-to
 * prompt: what a caller's next scene (a lesson's next slide) must not
 * inherit from the keys pressed during this one. */
void ui_settle(struct ui *ui);

/* A one-line message for the status line (role UI_ROLE_MESSAGE or
 * UI_ROLE_ERROR); it stays until the next key. */
void ui_message(struct ui *ui, int role, const char *fmt, ...)
    UTIL_PRINTF(3, 4);

/*
 * Draws every simulator pane into r: header, score heatmap, tile,
 * running state, equations, counters, the focused row's history (when
 * there is room), status line and key bar (and the help screen or edit
 * form when open).  Below ui_min_size it draws
 * "terminal too small (need WxH)" instead.  Remembers where the panes
 * went, so mouse clicks can be mapped.
 */
void ui_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r);
void ui_min_size(const struct ui *ui, int *w, int *h);

/* Parts of the view a caller may leave out of ui_draw, to make room for
 * its own (a lesson's key bar, or a narrow pane without the heatmap). */
#define UI_HIDE_HEADER	0x1
#define UI_HIDE_STATUS	0x2
#define UI_HIDE_KEYBAR	0x4
#define UI_HIDE_HEATMAP	0x8
void ui_set_hidden(struct ui *ui, unsigned parts);

/* The widest the heatmap may be drawn, in cells (0: as wide as it
 * wants), so that on a wide screen the other panes grow too. */
void ui_set_heat_max(struct ui *ui, int cols);

/* Writes "terminal too small (need WxH)" centred in r, wrapped or
 * shortened to fit any r (down to 1x1; nothing when r is empty). */
void ui_draw_too_small(struct ui_grid *g, struct ui_rect r, int w, int h);

/* The view's own keys (the list is in the help screen, `?`; steps are
 * numbered from 1 in all the view shows and reads).  Returns UI_* flags. */
int ui_handle_key(struct ui *ui, const struct ui_key *k);

/*
 * Background work: the heatmap summary, play, and warming the sim's
 * checkpoints so that later jumps replay few tiles (sim_block_state:
 * the view does not move).  Does some until util_now() passes deadline (a deadline
 * <= 0: the heatmap whole, or once it is done, all the checkpoints).
 * Returns UI_REDRAW when the picture changed.  *wait_ms is set to how
 * long the loop may sleep before the next call (0: call again at once,
 * -1: no work until a key).
 */
int ui_idle(struct ui *ui, double deadline, int *wait_ms);

/* ---- the terminal ------------------------------------------------------ */

/*
 * Takes the terminal: stdin and stdout must be terminals (otherwise -1
 * with err saying so).  Sets the locale, starts curses, and from now on
 * restores the terminal on exit(), on SIGINT and SIGTERM.  st gets the
 * style to draw with (see ui_style_detect; colour also needs a terminal
 * with colours).  Returns 0, or -1 with err set.
 */
int ui_term_open(struct ui_style *st, char *err, size_t errlen);

/* Gives the terminal back (safe to call twice, or without open). */
void ui_term_close(void);

/* The screen size in cells. */
void ui_term_size(int *w, int *h);

/*
 * Waits up to timeout_ms (-1: forever) for a key.  Returns 1 with *k set,
 * 0 on timeout, or -1 when SIGINT or SIGTERM arrived (ui_term_signal says
 * which).
 */
int ui_term_key(int timeout_ms, struct ui_key *k);

/* Copies g to the screen (the grid must be the screen's size). */
void ui_term_present(const struct ui_grid *g);

/* SIGINT or SIGTERM when one arrived since ui_term_open, else 0.  After
 * ui_term_close a caller may re-raise it to exit as the signal asks. */
int ui_term_signal(void);

/* ---- the loop ---------------------------------------------------------- */

struct ui_hooks {
	/* Draws one frame into g (the whole screen): split it and call
	 * ui_draw for the simulator's part.  NULL: the simulator fills it. */
	void (*frame)(struct ui *ui, struct ui_grid *g, void *ctx);
	/* Sees each key before the view; returns UI_* flags, 0 to let the
	 * view handle the key.  NULL: the view gets every key. */
	int (*key)(struct ui *ui, const struct ui_key *k, void *ctx);
	void *ctx;
	/* Called on every turn of the loop (NULL: none), for a caller's own
	 * timers: returns UI_REDRAW or UI_QUIT flags, and may lower *wait_ms
	 * (-1: wait for a key) to be called again that soon. */
	int (*idle)(struct ui *ui, int *wait_ms, void *ctx);
};

/*
 * Draws, reads keys and redraws (on keys, resizes, play and background
 * work) until a handler returns UI_QUIT.  Needs ui_term_open.  Returns 0
 * on quit, the signal number when SIGINT or SIGTERM stopped it, or -1
 * with err set.
 */
int ui_loop(struct ui *ui, const struct ui_hooks *hooks, char *err,
    size_t errlen);

#endif
