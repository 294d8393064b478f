/*
 * ui_draw.c - one frame of the view: the panes (ui_layout.c), with the
 * help screen or the edit form over them when open, or, below the
 * minimum size, a note saying what size is needed.
 */
#include "config.h"

#include "ui_int.h"
#include "ui_form.h"
#include "ui_keys.h"

#include <stdio.h>
#include <string.h>

void
ui_min_size(const struct ui *ui, int *w, int *h)
{
	ui_layout_min(ui, w, h);
}

/*
 * Breaks text (ASCII) into lines of at most w columns at its spaces:
 * fills line[] and returns how many, or -1 when a word is wider than w or
 * more than maxlines are needed.
 */
static int
ui_draw_lines(const char *text, int w, int maxlines, char line[][64])
{
	const char *word = text, *end;
	int n = 0, col = 0, len;

	while (*word != '\0') {
		while (*word == ' ')
			word++;
		for (end = word; *end != '\0' && *end != ' '; end++)
			;
		len = (int)(end - word);
		if (len == 0)
			break;
		if (len > w || len > 63)
			return -1;
		if (n > 0 && col + 1 + len <= w) {
			line[n - 1][col] = ' ';
			memcpy(line[n - 1] + col + 1, word, (size_t)len);
			col += 1 + len;
			line[n - 1][col] = '\0';
		} else {
			if (n == maxlines)
				return -1;
			memcpy(line[n], word, (size_t)len);
			line[n][len] = '\0';
			col = len;
			n++;
		}
		word = end;
	}
	return n;
}

void
ui_draw_too_small(struct ui_grid *g, struct ui_rect r, int w, int h)
{
	/* The longest that fits: whole when it can wrap onto a few lines,
	 * then shorter, down to one cell. */
	static const char *const forms[] = {
		"terminal too small (need %dx%d)", "too small: need %dx%d",
		"need %dx%d", "%dx%d", "small", "!",
	};
	char text[64], line[8][64];
	size_t f;
	int n = -1, i, maxl = r.h < 8 ? r.h : 8;

	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	for (f = 0; f < sizeof forms / sizeof forms[0] && n < 0; f++) {
		snprintf(text, sizeof text, forms[f], w, h);
		n = ui_draw_lines(text, r.w, maxl, line);
	}
	for (i = 0; i < n; i++)
		ui_grid_text(g, r.x + (r.w - (int)strlen(line[i])) / 2,
		    r.y + (r.h - n) / 2 + i, r.w, UI_ROLE_ERROR, line[i]);
}

void
ui_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	struct ui_rect outer = g->clip;
	int w, h;

	ui_clamp_focus(ui);
	ui_layout_min(ui, &w, &h);
	memset(ui->slot, 0, sizeof ui->slot);
	memset(ui->slot_pane, 0, sizeof ui->slot_pane);
	ui_grid_clip(g, r);
	/* Keys wait while the view is hidden: nothing should change
	 * unseen. */
	ui->unseen = r.w < w || r.h < h;
	if (ui->unseen)
		ui_draw_too_small(g, r, w, h);
	else if (ui->pipe != NULL)
		ui_pipe_draw(ui, g);
	else if (ui->fp8 != NULL)
		ui_fp8_draw(ui, g);
	else if (ui->roof)
		ui_roof_draw(ui, g);
	else {
		ui_layout_draw(ui, g, r);
		if (ui->help)
			ui_keys_draw_help(ui, g, r);
		if (ui->form.open)
			ui_form_draw(ui, g, r);
	}
	g->clip = outer;
}
