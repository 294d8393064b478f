/*
 * ui_int.h - what the files of the view share and nobody else sees: the
 * UI state, the pane table, the glyphs, the key table.
 *
 * Direction of calls (never upwards):
 *   ui_loop.c  ->  ui_keys.c, ui_form.c  ->  ui.c (state, rebuilds)
 *              ->  ui_layout.c -> ui_pane_*.c  ->  ui_grid.c
 *              ->  ui_term.c (the only file that includes curses)
 */
#ifndef FLASHSTEP_UI_INT_H
#define FLASHSTEP_UI_INT_H

#include "ui.h"

#include "model/heatmap.h"
#include "model/traffic.h"

/* Characters that differ between UTF-8 and ASCII terminals. */
struct ui_glyphs {
	const char *arrow;	/* "→" */
	const char *alpha;	/* "α" */
	const char *ell;	/* "ℓ" */
	const char *sum;	/* "Σ" */
	const char *dot;	/* "·": multiplication between numbers */
	const char *imul;	/* "": between letters ("*" in ASCII) */
	const char *prime;	/* "′" */
	const char *transp;	/* "ᵀ" */
	const char *times;	/* "×" */
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
};

const struct ui_glyphs *ui_glyphs(int unicode);

/*
 * A pane: a table of functions with designated initializers, as in tmux.
 * size() gives the pane's minimum and wanted height for a width (for the
 * heatmap, its wanted width for a height); draw() fills its rectangle;
 * handle_key() sees mouse clicks inside it (NULL: none).
 */
struct ui_pane {
	const char *name;
	void (*size)(const struct ui *ui, int w, int h, int *minh, int *wanth,
	    int *wantw);
	void (*draw)(struct ui *ui, struct ui_grid *g, struct ui_rect r);
	int (*handle_key)(struct ui *ui, const struct ui_key *k,
	    struct ui_rect r);
};

extern const struct ui_pane ui_pane_header;
extern const struct ui_pane ui_pane_heat;
extern const struct ui_pane ui_pane_tile;
extern const struct ui_pane ui_pane_state;
extern const struct ui_pane ui_pane_eq;
extern const struct ui_pane ui_pane_count;
extern const struct ui_pane ui_pane_history;
extern const struct ui_pane ui_pane_status;
extern const struct ui_pane ui_pane_keybar;

/* Where each pane went in the last frame (for mouse clicks). */
enum ui_slot {
	UI_SLOT_HEADER,
	UI_SLOT_HEAT,
	UI_SLOT_TILE,
	UI_SLOT_STATE,
	UI_SLOT_EQ,
	UI_SLOT_COUNT,
	UI_SLOT_HISTORY,
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

/* The edit form ('e'): fields as text, validated on Enter. */
#define UI_FORM_FIELDS 8
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

struct ui {
	struct options opts;	/* the sim's options (args not kept) */
	struct ui_style style;
	const struct ui_glyphs *gl;
	/* The sim borrows its problem, so a rebuild makes the new problem in
	 * the other slot and frees the old one only once the new sim works. */
	struct problem probs[2];
	int cur;		/* probs[cur] is the sim's problem */
	struct sim *sim;
	struct traffic standard;	/* standard attention, whole run */

	struct heatmap heat;	/* pooled S: computed in ui_idle */
	int heat_ok;		/* heat is laid out for this problem */
	double heat_drawn;	/* when a frame last showed its progress */
	/* The heatmap as last drawn, one value per screen cell: pooling
	 * reads many summary cells per screen cell, so it is done again
	 * only when the pooling, the mask or the summary changes. */
	float *pool;
	int pool_ny, pool_nx, pool_fy, pool_fx, pool_causal, pool_bands;

	/* Warming checkpoints in idle time: row block warm_i is replayed
	 * up to tile warm_j so far. */
	int warm_i, warm_j, warm_done;

	int focus;		/* focused row, within the tile */
	int want_phase;		/* phase that n/p keep (SIM_PHASE_LAST: the last) */
	int help;		/* the help screen is open */
	struct ui_form form;
	struct ui_prompt prompt;

	int gpu;		/* G: the GPU's values beside ours */
	long gpu_step;		/* step of gpu_* (-1: none) */
	float *gpu_m, *gpu_alpha, *gpu_l;	/* Br values each */

	int playing;		/* r: advancing on its own */
	int speed;		/* steps per second = 2^speed */
	double next_tick;	/* when play advances next */

	/*
	 * The running state of row block hist_i after each of its tiles:
	 * hist_m and hist_l hold (Tc, Br) values, hist_ok says which tiles
	 * are known.  Kept while the sim (gen) and the row block stay.
	 */
	long gen;		/* counts rebuilds of the sim */
	long hist_gen;
	int hist_i, hist_tc, hist_br;
	float *hist_m, *hist_l;
	unsigned char *hist_ok;

	char msg[240];		/* the status line */
	int msg_role;

	unsigned hidden;	/* UI_HIDE_* */
	int heat_max;		/* the heatmap's widest (0: as wide as it wants) */
	struct ui_rect slot[UI_SLOTS];
	struct ui_heat_geom heat_geom;
	int state_first;	/* tile row shown first in the state pane */
	int tile_first;		/* tile row shown first in the tile pane */
};

/* The sim's problem. */
#define UI_PROBLEM(ui) (&(ui)->probs[(ui)->cur])

/* The phase names, "load" .. "finalize". */
const char *ui_phase_name(int phase);

/* A number in at most width columns: %.*g with fewer digits as needed,
 * and -inf / inf / nan spelt with the glyphs.  Returns buf. */
const char *ui_num(const struct ui *ui, float x, int width, char *buf,
    size_t len);
/* The same with at most digits significant digits. */
const char *ui_num_prec(const struct ui *ui, float x, int width, int digits,
    char *buf, size_t len);

/* Decimal digits of n >= 0: the width of a row or column label. */
int ui_digits(int n);

/* Display columns of a UTF-8 string (ui_grid.c). */
int ui_grid_width(const char *utf8);

/* Writes text right-aligned in w columns at (x, y).  Returns w. */
int ui_grid_right(struct ui_grid *g, int x, int y, int w, int role,
    const char *utf8);

/* The first of n rows to show out of rows so that focus is among them,
 * moving as little as possible from first (ui_pane_tile.c). */
int ui_pane_tile_window(int first, int focus, int rows, int n);

/* Draws a frame around r (on its edge cells) and blanks its inside. */
void ui_grid_box(struct ui_grid *g, struct ui_rect r, int role,
    const struct ui_glyphs *gl);

/* Sets the modifiers (UI_MOD_*) of one cell, inside the clip only. */
void ui_grid_mods(struct ui_grid *g, int x, int y, int mods);

/* Moves by steps (delta) or phases, for keys and play.  0 or -1 at an
 * end (position unchanged). */
int ui_step(struct ui *ui, long delta);
int ui_phase(struct ui *ui, int delta);

/* Keeps focus inside the current tile. */
void ui_clamp_focus(struct ui *ui);

/*
 * m and l of every row of the current row block after each of its tiles
 * j0 .. j1 (the tiles up to the current one): *m and *l point at (Tc, Br)
 * arrays, entry [j * Br + row].  Tiles not yet known are replayed by
 * seeking the sim, which is then put back where it was.  Returns 0, or
 * -1 without memory.
 */
int ui_history(struct ui *ui, int j0, int j1, const float **m,
    const float **l);

/* Rebuild helpers for the keys c, b, o, m. */
int ui_cycle_convention(struct ui *ui);
int ui_cycle_bug(struct ui *ui);
int ui_toggle_order(struct ui *ui);
int ui_toggle_mask(struct ui *ui);

/* G: fetch the GPU's values of the current step (or say why not). */
void ui_gpu_toggle(struct ui *ui);
void ui_gpu_refresh(struct ui *ui);

/* The key table, for dispatch and for the help screen. */
struct ui_keydef {
	const char *keys;	/* as shown: "space n Right" */
	const char *help;
	int (*fn)(struct ui *ui, const struct ui_key *k);
	int codes[6];		/* key codes that trigger it, 0-ended */
};
extern const struct ui_keydef ui_keydefs[];

int ui_keys_dispatch(struct ui *ui, const struct ui_key *k);
void ui_keys_draw_help(struct ui *ui, struct ui_grid *g, struct ui_rect r);
void ui_keys_draw_prompt(struct ui *ui, struct ui_grid *g, struct ui_rect r);
int ui_keys_prompt_key(struct ui *ui, const struct ui_key *k);

/* The form: open with the current values, keys, drawing. */
void ui_form_open(struct ui *ui);
int ui_form_key(struct ui *ui, const struct ui_key *k);
void ui_form_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r);
/* Validates and applies the form's values (as Enter does).  Returns 0,
 * or -1 with form.error set. */
int ui_form_apply(struct ui *ui);

/* Lays the panes out in r and draws them. */
void ui_layout_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r);
void ui_layout_min(const struct ui *ui, int *w, int *h);

/* For the benchmark: a terminal that writes to /dev/null. */
int ui_term_open_null(int w, int h, struct ui_style *st, char *err,
    size_t errlen);

#endif
