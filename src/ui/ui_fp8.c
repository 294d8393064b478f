/*
 * ui_fp8.c - 8 in the view: how --dtype fp8 stored Q, K and V, over the
 * whole view until q or Esc.
 *
 * One row of one tensor at a time: each entry as given, as rotated (Q
 * and K under --hadamard), its e4m3 code and value, the block's scale,
 * the value the simulator computes with (code x scale) and its error;
 * above them the tensor's scales, below them the tensor's error and
 * what the rotation did to its largest entry, the outlier.  It reads
 * the problem's fp8 data (model/fp8.h) and nothing else.
 */
#include "config.h"

#include "ui_fp8.h"
#include "ui_int.h"
#include "model/fp8_rule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct fp8_tensor *
ui_fp8_of(const struct fp8_data *f, const struct ui_fp8 *s)
{
	return s->tensor == 0 ? &f->q : s->tensor == 1 ? &f->k : &f->v;
}

static const struct fp8_tensor *
ui_fp8_tensor(const struct ui *ui)
{
	return ui_fp8_of(UI_PROBLEM(ui)->fp8, ui->fp8);
}

void
ui_fp8_close(struct ui *ui)
{
	free(ui->fp8);
	ui->fp8 = NULL;
}

int
ui_fp8_open(struct ui *ui)
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct sim_view *v;

	ui_fp8_close(ui);
	if (p->fp8 == NULL) {
		ui_message(ui, UI_ROLE_MESSAGE, "8: the problem is %s, not fp8 "
		    "(run the view with --dtype fp8 to see its quantization)",
		    dtype_name(p->dtype));
		return UI_HANDLED;
	}
	if ((ui->fp8 = calloc(1, sizeof *ui->fp8)) == NULL) {
		ui_message(ui, UI_ROLE_MESSAGE, "8: out of memory");
		return UI_HANDLED;
	}
	ui->fp8->keys = 1;
	/* Q's row that the view focuses, in the forward. */
	if (ui_kind(ui) == TIMELINE_FORWARD) {
		v = sim_view(ui->sim);
		ui->fp8->row = v->tile.r0 + ui->focus;
		if (ui->fp8->row >= p->fp8->q.rows)
			ui->fp8->row = 0;
	}
	return UI_HANDLED;
}

int
ui_fp8_key(struct ui *ui, const struct ui_key *k)
{
	struct ui_fp8 *s = ui->fp8;
	const struct fp8_tensor *t = ui_fp8_tensor(ui);
	int step = s->shown > 0 ? s->shown : 1;

	switch (k->code) {
	case 'q':
	case UI_KEY_ESC:
		ui_fp8_close(ui);
		return UI_HANDLED;
	case 't':
		s->tensor = (s->tensor + 1) % 3;
		t = ui_fp8_tensor(ui);
		s->first = 0;
		if (s->row >= t->rows)
			s->row = t->rows - 1;
		return UI_HANDLED;
	case UI_KEY_TAB:
	case UI_KEY_DOWN:
	case 'n':
		s->row = (s->row + 1) % t->rows;
		return UI_HANDLED;
	case UI_KEY_BTAB:
	case UI_KEY_UP:
	case 'p':
		s->row = (s->row + t->rows - 1) % t->rows;
		return UI_HANDLED;
	case UI_KEY_RIGHT:
		if (s->first + step < t->cols)
			s->first += step;
		return UI_HANDLED;
	case UI_KEY_LEFT:
		s->first = s->first > step ? s->first - step : 0;
		return UI_HANDLED;
	default:
		return UI_HANDLED;	/* the view's keys wait */
	}
}

/* The largest |entry| as given, where, and its row's largest as
 * quantized. */
static void
ui_fp8_outlier(const struct fp8_tensor *t, int *row, int *col, float *given,
    float *after)
{
	size_t i, n = (size_t)t->rows * t->cols;
	int c;

	*row = *col = 0;
	*given = *after = 0.0f;
	for (i = 0; i < n; i++)
		if (fabsf(t->exact[i]) > *given) {
			*given = fabsf(t->exact[i]);
			*row = (int)(i / (size_t)t->cols);
			*col = (int)(i % (size_t)t->cols);
		}
	for (c = 0; c < t->cols; c++)
		if (fabsf(t->before[(size_t)*row * t->cols + c]) > *after)
			*after = fabsf(t->before[(size_t)*row * t->cols + c]);
}

void
ui_fp8_figure(struct ui_grid *g, struct ui_rect r, const struct fp8_data *f,
    struct ui_fp8 *s, int unicode)
{
	/* the numbers are written as the panes write them: ui_num reads
	 * nothing of the view but its glyphs */
	const struct ui_glyphs *gl = ui_glyphs(unicode);
	const struct ui shim = { .gl = gl }, *ui = &shim;
	const struct fp8_tensor *t;
	struct fp8_stats st;
	char line[400], a[32], b[32], c2[32], d2[32], e2[32];
	int blk, b0, b1, y, x, n, at, orow, ocol;
	int foot, top = 4, cut;
	float given, after, sc;

	if (s->tensor < 0 || s->tensor > 2)
		s->tensor = 0;
	t = ui_fp8_of(f, s);
	if (s->row < 0 || s->row >= t->rows)
		s->row = 0;
	blk = fp8_block_of(t, s->row);
	sc = t->scale[blk];
	foot = s->keys ? 5 : 4;

	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	if (t->whole) {
		b0 = 0;
		b1 = t->rows - 1;
	} else {
		b0 = (s->row / t->head_rows) * t->head_rows +
		    ((s->row % t->head_rows) / t->block) * t->block;
		b1 = b0 + t->block - 1;
		if (b1 >= (s->row / t->head_rows + 1) * t->head_rows)
			b1 = (s->row / t->head_rows + 1) * t->head_rows - 1;
	}
	ui_grid_clear(g, (struct ui_rect){ r.x, r.y, r.w, 1 }, UI_ROLE_BAR);
	snprintf(line, sizeof line, " fp8 e4m3: %s row %d of %d, block %d (rows "
	    "%d-%d), scale %s = amax / 448", t->name, s->row, t->rows, blk, b0,
	    b1, ui_num(ui, sc, 9, a, sizeof a));
	ui_grid_fit(g, r.x, r.y, r.w, UI_ROLE_BAR, line, gl->ellipsis);

	/* The tensor's scales, this row's marked. */
	at = snprintf(line, sizeof line, "%s's %d scale%s%s:", t->name,
	    t->nblocks, t->nblocks == 1 ? "" : "s", t->whole ?
	    " (--fp8-bug whole-tensor: one)" : "");
	x = r.x + ui_grid_text(g, r.x, r.y + 1, r.w, UI_ROLE_LABEL, line);
	(void)at;
	for (n = 0; n < t->nblocks && x < r.x + r.w - 1; n++) {
		ui_num(ui, t->scale[n], 8, a, sizeof a);
		x += ui_grid_text(g, x, r.y + 1, r.x + r.w - x, n == blk ?
		    UI_ROLE_FOCUS : UI_ROLE_NORMAL, " ");
		x += ui_grid_text(g, x, r.y + 1, r.x + r.w - x, n == blk ?
		    UI_ROLE_FOCUS : UI_ROLE_NORMAL, a);
	}

	snprintf(line, sizeof line, "%4s %10s %10s %5s %7s %10s %10s", "x",
	    "as given", t->rotated ? "rotated" : "", "code", "e4m3", "x scale",
	    "error");
	ui_grid_text(g, r.x, r.y + 3, r.w, UI_ROLE_LABEL, line);
	n = r.h - top - foot;
	if (n < 1)
		n = 1;
	if (s->first >= t->cols)
		s->first = 0;
	s->shown = 0;
	for (y = 0; y < n && s->first + y < t->cols; y++) {
		int col = s->first + y;
		size_t i = (size_t)s->row * t->cols + col;
		unsigned char code = t->code[i];
		float stored = fp8_value(t, s->row, col);
		float err = stored - t->before[i];
		int tiny = (code & 0x7f) != 0 && ((code >> 3) & 15) == 0;

		snprintf(line, sizeof line, "%4d %10s %10s  0x%02x %7s %10s %10s%s",
		    col, ui_num(ui, t->exact[i], 9, a, sizeof a),
		    t->rotated ? ui_num(ui, t->before[i], 9, b, sizeof b) : "",
		    code, ui_num(ui, fp8_rule_decode(code), 7, c2, sizeof c2),
		    ui_num(ui, stored, 9, d2, sizeof d2),
		    ui_num(ui, err, 9, e2, sizeof e2), (code & 0x7f) == 0 &&
		    t->before[i] != 0.0f ? " to 0" : tiny ? " subn" : "");
		ui_grid_text(g, r.x, r.y + top + y, r.w, (code & 0x7f) == 0x7e ?
		    UI_ROLE_ROW_MAX : UI_ROLE_NORMAL, line);
		s->shown++;
	}
	cut = t->cols - s->first - s->shown;
	if (s->first > 0 || cut > 0) {
		snprintf(line, sizeof line, "entries %d-%d of %d (Left, Right)",
		    s->first, s->first + s->shown - 1, t->cols);
		ui_grid_right(g, r.x, r.y + 2, r.w, UI_ROLE_DIM, line);
	}

	/* The tensor's error, the rotation and the outlier. */
	y = r.y + r.h - foot;
	fp8_stats(t, &st);
	snprintf(line, sizeof line, "%s: rms error %s (of the entries %s), max "
	    "%s; %ld to 0, %ld subnormal", t->name,
	    ui_num_prec(ui, (float)st.rms_err, 9, 4, a, sizeof a),
	    ui_num_prec(ui, (float)st.rms, 9, 4, b, sizeof b),
	    ui_num_prec(ui, (float)st.max_err, 9, 4, c2, sizeof c2), st.zeros,
	    st.subnormal);
	ui_grid_fit(g, r.x, y, r.w, UI_ROLE_NORMAL, line, gl->ellipsis);
	ui_fp8_outlier(t, &orow, &ocol, &given, &after);
	if (t->rotated)
		snprintf(line, sizeof line, "the rotation: %s's largest |entry|, %s "
		    "(row %d, x %d), leaves its row at most %s: the block's scale "
		    "is %s, not %s / 448 = %s", t->name,
		    ui_num_prec(ui, given, 9, 4, a, sizeof a), orow, ocol,
		    ui_num_prec(ui, after, 9, 4, b, sizeof b),
		    ui_num_prec(ui, t->scale[fp8_block_of(t, orow)], 9, 4, c2,
		    sizeof c2), ui_num_prec(ui, given, 9, 4, d2, sizeof d2),
		    ui_num_prec(ui, given / FP8_RULE_MAX, 9, 4, e2, sizeof e2));
	else
		snprintf(line, sizeof line, "%s's largest |entry| is %s (row %d, x "
		    "%d), its block's scale %s: %s", t->name,
		    ui_num_prec(ui, given, 9, 4, a, sizeof a), orow, ocol,
		    ui_num_prec(ui, t->scale[fp8_block_of(t, orow)], 9, 4, b,
		    sizeof b), f->spec.hadamard ? (t == &f->v ? "V is not "
		    "rotated (only Q and K are)" : "K is not rotated "
		    "(--fp8-bug rotate-q-only): Q K^T is wrong") :
		    "--hadamard would rotate Q and K");
	ui_grid_wrap(g, (struct ui_rect){ r.x, y + 1, r.w, 2 }, UI_ROLE_NORMAL,
	    line);
	ui_grid_fit(g, r.x, y + 3, r.w, UI_ROLE_DIM, "P: e4m3 with no scale "
	    "before P V (P <= 1); S and the sums stay float32",
	    gl->ellipsis);
	if (!s->keys)
		return;
	ui_grid_clear(g, (struct ui_rect){ r.x, y + 4, r.w, 1 }, UI_ROLE_BAR);
	ui_grid_fit(g, r.x, y + 4, r.w, UI_ROLE_BAR, " Tab Up Down: row  Left "
	    "Right: entries  t: Q, K, V  q: the view", gl->ellipsis);
}

void
ui_fp8_draw(const struct ui *ui, struct ui_grid *g)
{
	ui_fp8_figure(g, g->clip, UI_PROBLEM(ui)->fp8, ui->fp8,
	    ui->gl == ui_glyphs(1));
}
