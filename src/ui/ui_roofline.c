/*
 * ui_roofline.c - the roofline figure (ui_roofline.h): roofs, ridges,
 * axes and points placed on log-log axes in a cell grid.
 */
#include "config.h"

#include "ui_roofline.h"

#include "model/problem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define X0 (-1.0)	/* log10 of the intensities at the plot's edges */
#define X1 4.0
#define Y0 11.0		/* log10 of the FLOP/s at its bottom and top */
#define Y1 15.0

/* The plot's column of an intensity and row of a FLOP/s (0 at the top);
 * -1 off the plot. */
static int
roof_col(double intensity)
{
	long x;

	if (!(intensity > 0))
		return -1;
	x = lround((log10(intensity) - X0) / (X1 - X0) *
	    (UI_ROOFLINE_PLOT_W - 1));
	return x < 0 || x >= UI_ROOFLINE_PLOT_W ? -1 : (int)x;
}

static int
roof_row(double flops, int ph)
{
	long y;

	if (!(flops > 0))
		return -1;
	y = lround((log10(flops) - Y0) / (Y1 - Y0) * (ph - 1));
	return y < 0 || y >= ph ? -1 : (int)(ph - 1 - y);
}

/* The plot's cells; h of its rows are used (a short figure has fewer). */
struct roof_plot {
	char c[UI_ROOFLINE_PLOT_H][UI_ROOFLINE_PLOT_W];
	int h;
};

static void
roof_put(struct roof_plot *p, double intensity, double flops, char ch,
    int over)
{
	int x = roof_col(intensity), y = roof_row(flops, p->h);

	if (x >= 0 && y >= 0 && (over || p->c[y][x] == ' '))
		p->c[y][x] = ch;
}

/* One roof: / left of its ridge (bandwidth), ch right of it (compute),
 * sampled four times a column so that the slope has no gaps. */
static void
roof_line(struct roof_plot *p, const struct roofline_machine *m, double peak,
    char ch)
{
	double in, ridge = roofline_ridge(peak, m->hbm);
	int i, n = UI_ROOFLINE_PLOT_W * 4;

	for (i = 0; i < n; i++) {
		in = pow(10, X0 + (X1 - X0) * i / (n - 1.0));
		roof_put(p, in, roofline_roof(peak, m->hbm, in), in < ridge ?
		    '/' : ch, 0);
	}
}

/* A ridge: ':' from the axis up to just under the roofs' knee. */
static void
roof_ridge(struct roof_plot *p, const struct roofline_machine *m, double peak)
{
	int x = roof_col(roofline_ridge(peak, m->hbm)), y;
	int top = roof_row(peak, p->h);

	if (x < 0)
		return;
	for (y = p->h - 1; y > top && y >= 0; y--)
		if (p->c[y][x] == ' ')
			p->c[y][x] = ':';
}

void
ui_roofline_draw(struct ui_grid *g, int x, int y,
    const struct roofline_machine *m, const struct ui_roofline_point *pt,
    int n)
{
	ui_roofline_draw_rows(g, x, y, UI_ROOFLINE_PLOT_H, m, pt, n);
}

void
ui_roofline_draw_rows(struct ui_grid *g, int x, int y, int rows,
    const struct roofline_machine *m, const struct ui_roofline_point *pt,
    int n)
{
	static const char *const decades[] = { "0.1", "1", "10", "100",
	    "1000", "10^4" };
	struct roof_plot p;
	char line[UI_ROOFLINE_W + 1];
	int i, j, pass, at;

	memset(p.c, ' ', sizeof p.c);
	p.h = rows < UI_ROOFLINE_PLOT_MIN_H ? UI_ROOFLINE_PLOT_MIN_H :
	    rows > UI_ROOFLINE_PLOT_H ? UI_ROOFLINE_PLOT_H : rows;
	roof_line(&p, m, m->tensor, '=');
	roof_line(&p, m, m->fp32, '-');
	roof_ridge(&p, m, m->tensor);
	roof_ridge(&p, m, m->fp32);
	for (pass = 1; pass >= 0; pass--)
		for (i = 0; i < n; i++)
			if ((pt[i].under != 0) == pass)
				roof_put(&p, pt[i].intensity, pt[i].flops,
				    pt[i].letter, 1);
	ui_grid_printf(g, x, y, UI_ROOFLINE_W, UI_ROLE_LABEL, "FLOP/s against "
	    "FLOPs per HBM byte, both log: = the tensor roof,");
	ui_grid_printf(g, x, y + 1, UI_ROOFLINE_W, UI_ROLE_LABEL, "- fp32's, "
	    "/ bandwidth's, : the ridges (%.0f, %.0f), a letter a point",
	    roofline_ridge(m->tensor, m->hbm), roofline_ridge(m->fp32, m->hbm));
	for (j = 0; j < p.h; j++) {
		/* the top, 10T and the bottom: wherever the rows put them */
		const char *lab = j == 0 ? "1000T" : j == roof_row(1e13, p.h) ?
		    "  10T" : j == p.h - 1 ? " 0.1T" : "     ";

		ui_grid_printf(g, x, y + UI_ROOFLINE_PLOT_Y + j, 6, UI_ROLE_LABEL,
		    "%s|", lab);
		memcpy(line, p.c[j], UI_ROOFLINE_PLOT_W);
		line[UI_ROOFLINE_PLOT_W] = '\0';
		ui_grid_text(g, x + UI_ROOFLINE_PLOT_X, y + UI_ROOFLINE_PLOT_Y + j,
		    UI_ROOFLINE_PLOT_W, UI_ROLE_NORMAL, line);
	}
	j = y + UI_ROOFLINE_PLOT_Y + p.h;
	memset(line, '-', UI_ROOFLINE_PLOT_W + 1);
	line[0] = '+';
	line[UI_ROOFLINE_PLOT_W + 1] = '\0';
	ui_grid_text(g, x + UI_ROOFLINE_PLOT_X - 1, j, -1, UI_ROLE_LABEL, line);
	/* A decade every (PLOT_W - 1) / 5 columns, each label from its
	 * tick, the last ending on it. */
	for (i = 0; i < 6; i++) {
		at = UI_ROOFLINE_PLOT_X + (int)lround(i *
		    (UI_ROOFLINE_PLOT_W - 1) / (X1 - X0));
		if (i == 5)
			at -= (int)strlen(decades[i]) - 1;
		ui_grid_text(g, x + at, j + 1, -1, UI_ROLE_LABEL, decades[i]);
	}
	ui_grid_text(g, x + UI_ROOFLINE_PLOT_X + UI_ROOFLINE_PLOT_W / 2 - 9,
	    j + 2, -1, UI_ROLE_LABEL, "FLOPs per HBM byte");
}

/* The problem as roofline.h's shape: one head, its forward. */
static int
roof_count(const struct problem *p, int br, int bc, struct roofline_shape *s,
    struct roofline_count *c, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	s->pass = ROOFLINE_TILED;
	s->batch = s->heads = s->kv_heads = 1;
	s->tq = p->tq;
	s->tk = p->tk;
	s->d = p->scores_mode ? p->dv : p->d;
	s->dtype = p->dtype;
	s->br = br;
	s->bc = bc;
	return roofline_count(s, c, err, errlen);
}

int
ui_roofline_problem(struct ui_grid *g, struct ui_rect r,
    const struct problem *p, int br, int bc)
{
	const struct roofline_machine *m = &roofline_h200;
	const int frame = UI_ROOFLINE_H - UI_ROOFLINE_PLOT_H;
	struct ui_roofline_point pt[2];
	struct roofline_shape s;
	struct roofline_count c;
	struct ui_rect below;
	char text[600];
	double in, tin, peak;
	int rows, lines, ok;

	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	text[0] = '\0';
	ok = roof_count(p, br, bc, &s, &c, text, sizeof text) == 0 &&
	    c.hbm_bytes != 0 && c.tile_bytes != 0;
	if (ok) {
		/* fp32 on the CUDA cores' FMA, the 16- and 8-bit types on the
		 * tensor cores (whose dense fp16 peak the H200's entry holds). */
		peak = s.dtype == DTYPE_FP32 ? m->fp32 : m->tensor;
		in = (double)c.flops / (double)c.hbm_bytes;
		tin = (double)c.flops / (double)c.tile_bytes;
		pt[0].intensity = in;
		pt[0].flops = roofline_roof(peak, m->hbm, in);
		pt[0].letter = 'h';
		pt[0].under = 0;
		pt[1].intensity = tin;
		pt[1].flops = roofline_roof(peak, m->hbm, tin);
		pt[1].letter = 't';
		pt[1].under = 1;
		snprintf(text, sizeof text, "This head (Tq=%d Tk=%d d=%d Br=%d "
		    "Bc=%d %s) on the %s, at the %s roof (the simulator times "
		    "nothing): h each tensor once, I = %.3g FLOPs a byte, "
		    "%s-bound, at most %.3g TFLOP/s; t the tiles' reads, I = "
		    "%.3g, at most %.3g.", s.tq, s.tk, s.d, s.br, s.bc,
		    dtype_name(s.dtype), m->name, s.dtype == DTYPE_FP32 ?
		    "fp32" : "tensor", in, roofline_compute_bound(peak, m->hbm,
		    in) ? "compute" : "bandwidth", pt[0].flops / 1e12, tin,
		    pt[1].flops / 1e12);
	}
	/* The whole plot when the rows allow it and the words under it; a
	 * shorter plot before leaving the words out. */
	lines = ui_grid_wrap(g, (struct ui_rect){ r.x, r.y, r.w, 0 },
	    UI_ROLE_LABEL, text);
	rows = r.h - frame - lines;
	if (rows < UI_ROOFLINE_PLOT_MIN_H) {
		lines = 0;
		rows = r.h - frame;
	}
	if (rows > UI_ROOFLINE_PLOT_H)
		rows = UI_ROOFLINE_PLOT_H;
	if (rows < UI_ROOFLINE_PLOT_MIN_H)
		rows = UI_ROOFLINE_PLOT_MIN_H;
	ui_roofline_draw_rows(g, r.x, r.y, rows, m, ok ? pt : NULL, ok ? 2 : 0);
	below = (struct ui_rect){ r.x, r.y + frame + rows, r.w, lines };
	if (lines > 0)
		ui_grid_wrap(g, below, ok ? UI_ROLE_LABEL : UI_ROLE_ERROR, text);
	return frame + rows + lines;
}
