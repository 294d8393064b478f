/*
 * ui_roofline.c - the roofline figure (ui_roofline.h): roofs, ridges,
 * axes and points placed on log-log axes in a cell grid.
 */
#include "config.h"

#include "ui_roofline.h"

#include <math.h>
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
roof_row(double flops)
{
	long y;

	if (!(flops > 0))
		return -1;
	y = lround((log10(flops) - Y0) / (Y1 - Y0) * (UI_ROOFLINE_PLOT_H - 1));
	return y < 0 || y >= UI_ROOFLINE_PLOT_H ? -1 :
	    (int)(UI_ROOFLINE_PLOT_H - 1 - y);
}

struct roof_plot {
	char c[UI_ROOFLINE_PLOT_H][UI_ROOFLINE_PLOT_W];
};

static void
roof_put(struct roof_plot *p, double intensity, double flops, char ch,
    int over)
{
	int x = roof_col(intensity), y = roof_row(flops);

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
	int top = roof_row(peak);

	if (x < 0)
		return;
	for (y = UI_ROOFLINE_PLOT_H - 1; y > top && y >= 0; y--)
		if (p->c[y][x] == ' ')
			p->c[y][x] = ':';
}

void
ui_roofline_draw(struct ui_grid *g, int x, int y,
    const struct roofline_machine *m, const struct ui_roofline_point *pt,
    int n)
{
	static const char *const decades[] = { "0.1", "1", "10", "100",
	    "1000", "10^4" };
	struct roof_plot p;
	char line[UI_ROOFLINE_W + 1];
	int i, j, pass, at;

	memset(p.c, ' ', sizeof p.c);
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
	for (j = 0; j < UI_ROOFLINE_PLOT_H; j++) {
		/* PLOT_H - 1 rows over four decades: a label every 3.5. */
		const char *lab = j == 0 ? "1000T" : j == 7 ? "  10T" :
		    j == UI_ROOFLINE_PLOT_H - 1 ? " 0.1T" : "     ";

		ui_grid_printf(g, x, y + UI_ROOFLINE_PLOT_Y + j, 6, UI_ROLE_LABEL,
		    "%s|", lab);
		memcpy(line, p.c[j], UI_ROOFLINE_PLOT_W);
		line[UI_ROOFLINE_PLOT_W] = '\0';
		ui_grid_text(g, x + UI_ROOFLINE_PLOT_X, y + UI_ROOFLINE_PLOT_Y + j,
		    UI_ROOFLINE_PLOT_W, UI_ROLE_NORMAL, line);
	}
	j = y + UI_ROOFLINE_PLOT_Y + UI_ROOFLINE_PLOT_H;
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
