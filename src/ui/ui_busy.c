/*
 * ui_busy.c - what the view shows while it builds a timeline that takes
 * long: the forward run to its end before the backward or the combine
 * can start (fulltimeline_build_progress), minutes at 8192 x 8192.  The
 * build calls ui_busy_step after every step; a few times a second it
 * draws the progress and reads the keys, so the screen is never blank
 * and q is answered while the build runs (and keys typed meanwhile are
 * read, not echoed).  Below ui.c, beside ui_loop.c: it calls only the
 * grid and the terminal.
 *
 *   ui_busy_begin --> ui_busy_step ... (q, Esc, a signal: stopped) -->
 *   ui_busy_end
 */
#include "config.h"

#include "ui_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A build shorter than this shows nothing (no flash of a busy screen on
 * small problems); then a frame every UI_BUSY_FRAME_S. */
#define UI_BUSY_QUIET_S 0.25
#define UI_BUSY_FRAME_S 0.1

void
ui_busy_begin(struct ui_busy *b, const struct ui_glyphs *gl, const char *keys)
{
	memset(b, 0, sizeof *b);
	b->gl = gl;
	b->keys = keys;
	b->started = util_now();
	b->drawn = b->started - UI_BUSY_FRAME_S + UI_BUSY_QUIET_S;
}

void
ui_busy_end(struct ui_busy *b)
{
	ui_grid_free(&b->g);
}

void
ui_busy_draw(struct ui_grid *g, const struct ui_glyphs *gl, const char *what,
    long done, long total, double secs, const char *keys)
{
	char line[400];
	int w = g->w > 64 ? 60 : g->w - 4, x, y, n, i, bar, gap, need;

	ui_grid_unclip(g);
	ui_grid_clear(g, g->clip, UI_ROLE_NORMAL);
	if (w < 8)
		w = g->w;
	x = (g->w - w) / 2;
	/* Title, what (at most 3 lines), bar, count, keys; a blank line
	 * between the parts when there is room.  A rect of no lines
	 * measures. */
	n = ui_grid_wrap(g, (struct ui_rect){ x, 0, w, 0 }, UI_ROLE_NORMAL, what);
	n = n < 3 ? n : 3;
	need = 1 + n + 2 + (total > 0);
	gap = need + 2 <= g->h;
	y = (g->h - need - 2 * gap) / 2;
	if (y < 0)
		y = 0;
	ui_grid_fit(g, x, y++, w, UI_ROLE_TITLE, "flashstep: building the "
	    "timeline", gl->ellipsis);
	ui_grid_wrap(g, (struct ui_rect){ x, y, w, n }, UI_ROLE_NORMAL, what);
	y += n + gap;
	if (total > 0) {
		bar = w - 6;
		n = (int)((double)bar * (double)done / (double)total);
		for (i = 0; i < bar; i++)
			ui_grid_text(g, x + i, y, 1, i < n ? UI_ROLE_TILE_DONE :
			    UI_ROLE_DIM, i < n ? gl->heat[UI_HEAT_LEVELS - 1] :
			    gl->heat[0]);
		ui_grid_printf(g, x + bar + 1, y++, 5, UI_ROLE_MESSAGE, "%3d%%",
		    (int)(100.0 * (double)done / (double)total));
		snprintf(line, sizeof line, "step %ld of %ld, %.0f s so far", done,
		    total, secs);
		if (done > 0 && secs >= 1.0)
			snprintf(line + strlen(line), sizeof line - strlen(line),
			    ", about %.0f s more",
			    secs * (double)(total - done) / (double)done);
	} else
		snprintf(line, sizeof line, "%.0f s so far", secs);
	ui_grid_fit(g, x, y++, w, UI_ROLE_NORMAL, line, gl->ellipsis);
	ui_grid_fit(g, x, y + gap, w, UI_ROLE_KEY, keys, gl->ellipsis);
}

int
ui_busy_step(void *ctx, const char *what, long done, long total)
{
	struct ui_busy *b = ctx;
	struct ui_key k;
	char err[160];
	double now = util_now();
	int w, h, r;

	if (b->stopped)
		return 1;
	/* The time is read on every step: a few tens of nanoseconds against
	 * a tile's work. */
	if (now - b->drawn < UI_BUSY_FRAME_S)
		return 0;
	b->drawn = now;
	ui_term_size(&w, &h);
	if (w > 0 && h > 0 && ui_grid_resize(&b->g, w, h, err, sizeof err) == 0) {
		ui_busy_draw(&b->g, b->gl, what, done, total, now - b->started,
		    b->keys);
		ui_term_present(&b->g);
	}
	while ((r = ui_term_key(0, &k)) == 1)
		if (k.code == 'q' || k.code == 'Q' || k.code == UI_KEY_ESC)
			b->stopped = 1;
	if (r < 0)
		b->stopped = 1;		/* SIGINT or SIGTERM: ui_term_signal */
	return b->stopped;
}

struct ui_busy *
ui_busy_new(const struct ui_style *st, const char *keys)
{
	struct ui_busy *b = malloc(sizeof *b);

	if (b != NULL)
		ui_busy_begin(b, ui_glyphs(st->unicode), keys);
	return b;
}

int
ui_busy_stopped(const struct ui_busy *b)
{
	return b != NULL && b->stopped;
}

void
ui_busy_free(struct ui_busy *b)
{
	if (b == NULL)
		return;
	ui_busy_end(b);
	free(b);
}
