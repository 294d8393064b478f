/*
 * ui_int.h - what the files of the view share and nobody else sees: the
 * view's state (struct ui) and what reads or moves it, the pane table,
 * the glyphs and the number formats.  The modes above the state have
 * headers of their own: ui_keys.h (the key table, help, the g prompt)
 * and ui_form.h (the e form).
 *
 * Direction of calls and includes (never upwards):
 *
 *   ui_loop.c -> ui_input.c -> ui_keys.c -> ui_form.c, ui_play.c
 *             -> ui_draw.c  -> ui_layout.c -> ui_pane_*.c
 *                              (the help, the form and the g prompt are
 *                              drawn by ui_keys.c and ui_form.c)
 *             -> ui_idle.c  -> ui_play.c
 *   all of them -> ui.c (state, moves, rebuilds), ui_format.c,
 *                  ui_style.c, ui_grid.c
 *   ui_term.c: the only file that includes curses.
 */
#ifndef FLASHSTEP_UI_INT_H
#define FLASHSTEP_UI_INT_H

#include "ui.h"

#include "gpu/gpucheck.h"

#include "app/fulltimeline.h"
#include "model/heatmap.h"
#include "model/mask.h"
#include "model/traffic.h"

/* Characters that differ between UTF-8 and ASCII terminals. */
struct ui_glyphs {
	const char *arrow;	/* "→" */
	const char *up, *down;	/* "↑", "↓": rows a window leaves out */
	const char *alpha;	/* "α" */
	const char *ell;	/* "ℓ" */
	const char *sum;	/* "Σ" */
	const char *dot;	/* "·": multiplication between numbers */
	const char *imul;	/* "": between letters ("*" in ASCII) */
	const char *prime;	/* "′" */
	const char *transp;	/* "ᵀ" */
	const char *times;	/* "×" */
	const char *circ;	/* "∘": the entrywise product */
	const char *ninf;	/* "-∞" */
	const char *ellipsis;	/* "…" */
	const char *vline;	/* "│" */
	const char *hline;	/* "─" */
	const char *corner[4];	/* "┌", "┐", "└", "┘" */
	const char *focus;	/* "▶": the focused row */
	const char *colmark;	/* "▼": the current tile's keys */
	const char *heat[UI_HEAT_LEVELS];	/* low to high */
	const char *masked;	/* a masked entry of a visited tile */
	const char *skipped;	/* a tile the mask skips */
	const char *unknown;	/* a heatmap cell not computed yet */
	const char *never;	/* a packed batch's rows and keys of two
				 * sequences: no tile ever computes them */
};

const struct ui_glyphs *ui_glyphs(int unicode);

/*
 * A pane: a table of functions with designated initializers, as in tmux.
 * size() gives the pane's minimum and wanted height for a width (for the
 * heatmap, its wanted width for a height); draw() fills its rectangle;
 * handle_key() sees mouse clicks inside it (NULL: none); shown() says
 * whether the pane is in its stack for this problem (NULL: always).
 *
 * A pane that keeps something between frames (a cache, where it last
 * drew) owns it, as a tmux mode owns its data: its state struct lives in
 * its own .c file, init() makes it (NULL: out of memory) and free()
 * drops it.  struct ui holds only the pointer, made the first time the
 * pane asks ui_pane_data for it and freed with the view.  A pane without
 * state leaves both NULL.  So a new pane is its own file (listed in
 * local.mk) and a row of the layout's table (ui_layout.c), nothing here
 * nor in ui.c.
 */
struct ui_pane {
	const char *name;
	void *(*init)(struct ui *ui);
	void (*free)(void *data);
	int (*shown)(const struct ui *ui);
	void (*size)(const struct ui *ui, int w, int h, int *minh, int *wanth,
	    int *wantw);
	void (*draw)(struct ui *ui, struct ui_grid *g, struct ui_rect r);
	int (*handle_key)(struct ui *ui, const struct ui_key *k,
	    struct ui_rect r);
};

/* Where each pane went in the last frame (for mouse clicks): a pane
 * added to the layout in a place no pane had gets a slot here.  A segment's panes take the
 * forward's slots by place: TILE the tile (the combine: its partials),
 * STATE the rows' state (the backward: its query rows), KEYS the
 * backward's key block, EQ its equations. */
enum ui_slot {
	UI_SLOT_HEADER,
	UI_SLOT_HEAT,
	UI_SLOT_TILE,
	UI_SLOT_STATE,
	UI_SLOT_KEYS,
	UI_SLOT_EQ,
	UI_SLOT_COUNT,
	UI_SLOT_HISTORY,
	UI_SLOT_PAGES,		/* the paged cache (--page-size) */
	UI_SLOT_STATUS,
	UI_SLOT_KEYBAR,
	UI_SLOTS
};

/* The heatmap's mapping from screen cells to matrix entries. */
struct ui_heat_geom {
	int x0, y0;		/* screen cell of entry (0, 0) */
	int fy, fx;		/* rows / keys per screen cell (pooling) */
	int sx;			/* screen columns per cell (1, 2 ... when roomy) */
	int sy;			/* screen lines per cell (1, more when roomy) */
	int ny, nx;		/* screen cells used */
};

/* What one pane owns: the pointer its init gave (struct ui_pane). */
#define UI_PANE_OWN_MAX 16
struct ui_pane_own {
	const struct ui_pane *pane;
	void *data;
};

/* The edit form ('e'): fields as text, validated on Enter. */
#define UI_FORM_FIELDS 15
struct ui_form {
	int open;
	int field;		/* the field being edited */
	char value[UI_FORM_FIELDS][40];
	char error[200];	/* the last validation error, or "" */
};

/* The `g` prompt. */
struct ui_prompt {
	int open;
	char text[32];
};

/* Play: r plays on, u plays until something happens to one row. */
struct ui_play {
	int on;			/* advancing on its own */
	int speed;		/* steps per second = 2^speed */
	double next_tick;	/* when it advances next */
	long until;		/* u: the step it stops at (-1: r, no stop) */
	int until_phase;	/* ... the phase it shows there */
	int until_focus;	/* ... the row it follows, within the tile */
	long until_gen;		/* ... for this sim (ui->gen) */
	char why[200];		/* ... and what happens there, for the message */
};

/*
 * A packed batch (--seqlens), as flash-attention's varlen kernel runs
 * it: each sequence its own problem (a view of the packed one), its own
 * sim and its own forward segment of the timeline, in order, so global
 * step g is sequence b's local step g - timeline_first(b).  ui->sim is
 * sims[seq], the sequence the reader stands in (ui_varlen.c).  nseq 0:
 * not packed, and the rest is empty.
 */
struct ui_varlen {
	int nseq;
	int seq;		/* the sequence shown: the timeline's segment */
	struct problem *seqs;	/* nseq views of the packed problem */
	struct sim **sims;	/* nseq, owned */
	struct heatmap *heat;	/* nseq summaries, one per diagonal block */
	int heat_ok;		/* all of them laid out */
	long heat_gen;		/* counts new layouts of them */
	char **texts;		/* --seqlens strings the e form made: the
				 * options point into them, so they live as
				 * long as the view */
	int ntexts;
};

struct ui {
	struct options opts;	/* the sim's options (args not kept) */
	const struct ui_glyphs *gl;
	/* The sim borrows its problem, so a rebuild makes the new problem in
	 * the other slot and frees the old one only once the new sim works. */
	struct problem probs[2];
	int cur;		/* probs[cur] is the sim's problem */
	struct sim *sim;
	/* The timeline over the sim, and its other engines: the combine
	 * with --splits, the backward with --backward (fulltimeline.h). */
	struct fulltimeline line;
	struct traffic standard;	/* standard attention, whole run */
	struct traffic standard_bwd;	/* ... and its backward */

	struct heatmap heat;	/* pooled S: computed in ui_idle */
	int heat_ok;		/* heat is laid out for this problem */
	long heat_gen;		/* counts new layouts of heat */
	double heat_drawn;	/* when a frame last showed its progress */

	/* Warming checkpoints in idle time: row block warm_i is replayed
	 * up to tile warm_j so far; then the backward's key blocks and row
	 * blocks, warm_bwd of them so far and warm_bwd_n tiles of the next. */
	int warm_i, warm_j, warm_done, warm_bwd, warm_bwd_n;

	/* Under a bug mode, the same problem with the correct rule: its
	 * numbers stand beside the wrong ones.  NULL without a bug. */
	struct sim *correct;		/* the forward's update */
	struct combine *correct_comb;	/* the merge */
	struct backward *correct_bwd;	/* the backward */

	int focus;		/* focused row, within the tile (the combine:
				 * within the row block) */
	int focus_key;		/* focused key, within the backward's tile */
	/* Phase that n/p keep, per kind of segment (-1: the last). */
	int want_phase[TIMELINE_KINDS];
	struct ui_pipe *pipe;	/* W: the pipeline model in its viewer over
				 * the view (ui_pipe.c); NULL: closed */
	struct ui_fp8 *fp8;	/* 8: fp8's quantization over the view
				 * (ui_fp8.c); NULL: closed */
	int roof;		/* R: the roofline over the view (ui_roof.c) */
	int help;		/* the help screen is open */
	int help_first;		/* its first line shown (it scrolls) */
	int help_lines;		/* its lines, as last drawn */
	int help_page;		/* ... and how many of them showed */
	struct ui_form form;
	struct ui_prompt prompt;
	struct ui_play play;
	/* The last frame did not show the view (too small, or the caller
	 * drew something else): its keys wait, except q. */
	int unseen;

	int gpu;		/* G: the GPU's values beside ours */
	long gpu_step;		/* step of gpu_* (-1: none) */
	const char *busy_keys;	/* what q does in ui_configure's long build
				 * (NULL: it keeps the view as it was) */
	/* ui_set_before: the view stands at step 0's first phase for a
	 * caller that is before the first step; the header says so while
	 * the position is still that one. */
	int before;
	long before_global;
	int before_phase;
	float *gpu_m, *gpu_alpha, *gpu_l;	/* Br values each */
	struct gpucheck_trace *gpu_trace;	/* the kernel's run of this
						 * problem (NULL: none yet) */

	long gen;		/* counts rebuilds of the sim */
	int mask_width;		/* m: the last window's left edge seen (0:
				 * none yet, a quarter of Tk then) */

	char msg[240];		/* the status line */
	int msg_role;

	unsigned hidden;	/* UI_HIDE_* (the caller's) */
	/* The reader's layout, for a projector: z zooms one pane of the
	 * segment's stack over the whole view (zoom: its index + 1 in the
	 * stack, 0 none), h hides the heatmap so the stack takes its
	 * width. */
	int zoom;
	int heat_off;
	int heat_max;		/* the heatmap's widest (0: as wide as it wants) */
	/* The layout of the last frame. */
	struct ui_rect slot[UI_SLOTS];
	const struct ui_pane *slot_pane[UI_SLOTS];
	/* The row windows of the slots whose panes scroll (the first row
	 * shown): they are the slot's, not one pane's, so the rows shown
	 * stay put when a step crosses from the forward's tile to the
	 * combine's partials or the backward's tile. */
	int tile_first;		/* UI_SLOT_TILE */
	int state_first;	/* UI_SLOT_STATE */
	int keys_first;		/* UI_SLOT_KEYS */

	struct ui_varlen vl;	/* --seqlens: the packed batch */

	/* Every pane's own state (ui_pane_data), in the order asked for. */
	struct ui_pane_own pane_own[UI_PANE_OWN_MAX];
	int npane_own;
};

/* The sim's problem (in a packed batch, the current sequence's), and
 * the problem as built (the packed batch whole). */
#define UI_PROBLEM(ui) ((ui)->vl.nseq > 0 ? &(ui)->vl.seqs[(ui)->vl.seq] : \
	&(ui)->probs[(ui)->cur])
#define UI_BUILT(ui) (&(ui)->probs[(ui)->cur])

/* ---- ui_pipe.c: W, the pipeline model of the problem's head ----------- */

/* Opens it (or says in the status line why not); UI_HANDLED. */
int ui_pipe_open(struct ui *ui);
/* Its keys while open (q or Esc closes it); UI_HANDLED. */
int ui_pipe_key(struct ui *ui, const struct ui_key *k);
void ui_pipe_draw(const struct ui *ui, struct ui_grid *g);
void ui_pipe_close(struct ui *ui);

/* ---- ui_fp8.c: 8, how --dtype fp8 stored Q, K and V -------------------- */

/* Opens it on the focused row of Q (or says why not); UI_HANDLED. */
int ui_fp8_open(struct ui *ui);
/* Its keys while open (q or Esc closes it); UI_HANDLED. */
int ui_fp8_key(struct ui *ui, const struct ui_key *k);
void ui_fp8_draw(const struct ui *ui, struct ui_grid *g);
void ui_fp8_close(struct ui *ui);

/* ---- ui_roof.c: R, the H200's roofline with the problem on it -------- */

int ui_roof_open(struct ui *ui);
/* Its keys while open (q, Esc or R closes it); UI_HANDLED. */
int ui_roof_key(struct ui *ui, const struct ui_key *k);
void ui_roof_draw(const struct ui *ui, struct ui_grid *g);

/* ---- ui_varlen.c: a packed batch (--seqlens) -------------------------- */

/* Its sequences' sims, summaries and timeline (one forward segment a
 * sequence) for options o over packed problem p (borrowed), into *vl
 * and *line.  Refuses what the view does not step packed (--backward,
 * --splits) by name.  Returns 0, or -1 with err set and nothing built. */
int ui_varlen_build(const struct options *o, const struct problem *p,
    struct ui_varlen *vl, struct fulltimeline *line, char *err,
    size_t errlen);
/* Frees the sequences (a rebuild); _release the texts too (the view
 * is going). */
void ui_varlen_free(struct ui_varlen *vl);
void ui_varlen_release(struct ui_varlen *vl);
/* After a move: ui->sim and vl.seq follow the timeline's segment.
 * Returns 1 when the sequence changed (the caller resets what belongs
 * to one sequence), else 0. */
int ui_varlen_follow(struct ui *ui);
/* The sequence holding packed row r (keys: key c), or -1. */
int ui_varlen_seq_of_row(const struct ui *ui, int r);
int ui_varlen_seq_of_key(const struct ui *ui, int c);
/* Computes the summaries until deadline (<= 0: all).  Returns 1 when
 * all are complete. */
int ui_varlen_heat_compute(struct ui *ui, double deadline);
int ui_varlen_heat_complete(const struct ui *ui);
/* The max over packed rows [r0, r1) and keys [c0, c1) of the diagonal
 * blocks they cover (heatmap_max's rules within each sequence, its mask
 * bottom-right in it), -inf when the masks hide all of it, NaN while a
 * summary is not computed, and +inf when the range covers no diagonal
 * block: rows and keys of different sequences, never computed. */
float ui_varlen_heat_max(const struct ui *ui, int causal, int r0, int r1,
    int c0, int c1);
/* The finite range of the summaries (per mask). */
void ui_varlen_heat_range(const struct ui *ui, int causal, float *lo,
    float *hi);
/* s / S: the next (delta 1) or previous (-1) sequence's first step.
 * 0, or -1 with a message when there is none (or not packed). */
int ui_varlen_jump(struct ui *ui, int delta);
/* "seq 2 of 3 (Tq 17, Tk 17, packed rows 5-21)" into buf, or "" when
 * not packed. */
void ui_varlen_describe(const struct ui *ui, char *buf, size_t len);
/* A string that lives as long as the view (the e form's --seqlens
 * text): NULL when out of memory. */
const char *ui_varlen_keep_text(struct ui *ui, const char *s);

/* ---- ui_style.c: the locale's glyphs ---------------------------------- */

const struct ui_glyphs *ui_glyphs(int unicode);

/* ---- ui_format.c: numbers ---------------------------------------------- */

/* A number in at most width columns: %.*g with fewer digits as needed
 * (5 significant digits at most in 7 columns, one more a column wider,
 * up to 7),
 * and -inf / inf / nan spelt with the glyphs.  Returns buf. */
const char *ui_num(const struct ui *ui, float x, int width, char *buf,
    size_t len);
/* The same with at most digits significant digits. */
const char *ui_num_prec(const struct ui *ui, float x, int width, int digits,
    char *buf, size_t len);

/* A pane at least this wide (a large terminal, a zoomed pane) widens
 * its number columns to the room, for more digits. */
#define UI_WIDE_W 100

/* Decimal digits of n >= 0: the width of a row or column label. */
int ui_digits(int n);

/* ---- ui_grid.c: more of the cell grid ---------------------------------- */

/* Display columns of a UTF-8 string. */
int ui_grid_width(const char *utf8);

/* Writes text in at most w columns at (x, y); a text that is wider is
 * cut at a word break where one keeps most of it, and ends in the
 * ellipsis.  Returns the cells used. */
int ui_grid_fit(struct ui_grid *g, int x, int y, int w, int role,
    const char *utf8, const char *ellipsis);

/* Writes text right-aligned in w columns at (x, y).  Returns w. */
int ui_grid_right(struct ui_grid *g, int x, int y, int w, int role,
    const char *utf8);

/* Draws a frame around r (on its edge cells) and blanks its inside. */
void ui_grid_box(struct ui_grid *g, struct ui_rect r, int role,
    const struct ui_glyphs *gl);

/* Sets the modifiers (UI_MOD_*) of one cell, inside the clip only. */
void ui_grid_mods(struct ui_grid *g, int x, int y, int mods);

/* Copies h rows of src from row sy, all its columns, to (x, y) of dst
 * (clipped). */
void ui_grid_blit(struct ui_grid *dst, int x, int y, const struct ui_grid *src,
    int sy, int h);

/* ---- ui.c: the state and what moves it ---------------------------------- */

/* The state of pane p (struct ui_pane's init), made the first time it is
 * asked for; NULL when init fails (out of memory: asked again next
 * time) or the pane has none. */
void *ui_pane_data(struct ui *ui, const struct ui_pane *p);

/* Where the reader is on the timeline, and the kind of its segment. */
void ui_position(const struct ui *ui, struct timeline_pos *pos);
enum timeline_kind ui_kind(const struct ui *ui);

/* The current segment's view (call only when ui_kind says it is that
 * kind), and its rows (the focus moves among them). */
const struct combine_view *ui_comb_view(const struct ui *ui);
const struct backward_view *ui_bwd_view(const struct ui *ui);
int ui_rows(const struct ui *ui);

/* Goes to step k of the timeline at the phase n/p keep for its kind of
 * segment.  0, or -1 when k is out of range. */
int ui_goto(struct ui *ui, long k);

/* Moves by steps (delta) or phases, for keys and play, across the
 * segments.  0 or -1 at an end (position unchanged). */
int ui_step(struct ui *ui, long delta);
int ui_phase(struct ui *ui, int delta);

/* Keeps focus inside the current tile (and the key focus inside the
 * backward's tile). */
void ui_clamp_focus(struct ui *ui);

/* Rebuild helpers for the keys c, b, o, m and O (the merge order); m
 * cycles none, causal, the window (W, 0), the window (W, W). */
int ui_cycle_convention(struct ui *ui);
int ui_cycle_bug(struct ui *ui);
int ui_toggle_order(struct ui *ui);
int ui_toggle_mask(struct ui *ui);
int ui_cycle_merge_order(struct ui *ui);

/* Under a bug mode: the correct rule's view at the current step (its
 * tile and rows are the view's), else NULL: of the forward's update,
 * of the merge, of the backward. */
const struct sim_view *ui_correct(struct ui *ui);
const struct combine_view *ui_correct_comb(struct ui *ui);
const struct backward_view *ui_correct_bwd(struct ui *ui);

/* G: fetch the GPU's values of the current step (or say why not). */
void ui_gpu_toggle(struct ui *ui);
void ui_gpu_refresh(struct ui *ui);

/* ---- ui_play.c: r and u ------------------------------------------------ */

/* r: plays on from here, or pauses. */
void ui_play_toggle(struct ui *ui);
/* u: plays until something happens to the focused row (its max rises,
 * so alpha < 1; its row block finishes, and the mask skips the rest of
 * it), or says that nothing more does. */
void ui_play_until(struct ui *ui);
/* Stops playing (a message says why when why is not NULL). */
void ui_play_stop(struct ui *ui, const char *why);
/* Advances when a tick is due.  Returns UI_REDRAW when it moved, and
 * lowers *wait_ms to the next tick. */
int ui_play_tick(struct ui *ui, int *wait_ms);

/* ---- ui_layout.c, ui_pane_*.c ------------------------------------------ */

/* Lays the panes out in r and draws them. */
void ui_layout_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r);
/* The panes of the current segment's stack, and the name of pane i. */
int ui_layout_panes(const struct ui *ui);
const char *ui_layout_pane_name(const struct ui *ui, int i);
void ui_layout_min(const struct ui *ui, int *w, int *h);

/* Where the heatmap pane last put the matrix (for clicks and tests;
 * all zero before it drew). */
const struct ui_heat_geom *ui_pane_heat_last(struct ui *ui);

/* The first of n rows to show out of rows so that focus is among them,
 * moving as little as possible from first (ui_pane_tile.c). */
int ui_pane_tile_window(int first, int focus, int rows, int n);

/* Marks what a pane leaves out, at the right end of its title line
 * (r.y): "+A↑" rows above the window, "+B↓" rows (or lines) below or
 * left out, "+C→" columns (keys, entries) not shown; a title that runs
 * into the mark ends in an ellipsis.  Nothing when all three are 0.
 * Returns the mark's width; with g NULL it only measures. */
/* Dropout in the tile pane (ui_dropout.c): is entry (row, c) of the
 * view's tile dropped; and the rate and seed after the title at (x, y),
 * w columns at most (returns the columns written, 0 without dropout). */
int ui_dropout_dropped(const struct ui *ui, const struct sim_view *v, int row,
    int c);
int ui_dropout_title(const struct ui *ui, struct ui_grid *g, int x, int y,
    int w);

int ui_pane_cut_mark(struct ui *ui, struct ui_grid *g, struct ui_rect r,
    int above, int below, int right);

/*
 * The live equations (ui_pane_eq.c), shared by the segments' equation
 * panes: each builds its lines for the focused row, and ui_eq_draw lays
 * them out below a title, the current phase's line marked, earlier
 * phases plain, later ones dim and without numbers (or, with `later`
 * set, their words dim: "after the row's last tile"), the lines that
 * matter least dropped when the pane is short.
 */
#define UI_EQ_LINES 12
#define UI_EQ_NW 6
struct ui_eq_line {
	int phase;		/* the phase that computes it (-1: a note) */
	int keep;		/* priority when the pane is short: higher stays */
	int fitted;		/* its numbers were fitted to the width already */
	int later;		/* its phase does not come in this step: the
				 * words show, dim */
	char formula[96];
	char subst[240];
};
/* Fills ln (UI_EQ_LINES) with numbers of at most digits significant
 * digits, fitting vectors into width columns; returns the count. */
typedef int (*ui_eq_lines_fn)(struct ui *ui, int width, int digits,
    struct ui_eq_line *ln);
void ui_eq_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r,
    const char *title, int phase, ui_eq_lines_fn lines);
/* A factor in a product (a negative one in parentheses); a term added
 * ("+ x", "- |x|"). */
const char *ui_eq_factor(const struct ui *ui, float x, int digits, char *buf,
    size_t len);
const char *ui_eq_term(const struct ui *ui, float x, int digits, char *buf,
    size_t len);

/* A state pane's number: right-aligned in w columns, "?" (dim) while the
 * phase that computes it is still ahead, highlighted when changed. */
int ui_state_num(struct ui *ui, struct ui_grid *g, int x, int y, int w,
    int shown, float val, int changed);

/* ---- ui_busy.c: a long build's progress, q read meanwhile ------------- */

struct ui_busy {
	const struct ui_glyphs *gl;
	const char *keys;	/* what q does, in words */
	double started, drawn;	/* util_now() of the start, the last frame */
	int stopped;		/* q, Esc or a signal stopped the build */
	struct ui_grid g;
};
void ui_busy_begin(struct ui_busy *b, const struct ui_glyphs *gl,
    const char *keys);
void ui_busy_end(struct ui_busy *b);
/* A fulltimeline_progress function over a struct ui_busy (needs the
 * terminal open): draws a frame a few times a second, after a quarter
 * second of quiet, and returns 1 once q, Esc or a signal came. */
int ui_busy_step(void *ctx, const char *what, long done, long total);
/* The frame itself, into the whole of g. */
void ui_busy_draw(struct ui_grid *g, const struct ui_glyphs *gl,
    const char *what, long done, long total, double secs, const char *keys);

/* ---- ui_term.c --------------------------------------------------------- */

/* For the benchmark: a terminal that writes to /dev/null. */
int ui_term_open_null(int w, int h, struct ui_style *st, char *err,
    size_t errlen);
/* A real terminal is open (not the benchmark's): frames can be shown
 * and keys read. */
int ui_term_is_open(void);

#endif
