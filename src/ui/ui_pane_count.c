/*
 * ui_pane_count.c - the counters: HBM bytes moved so far against what
 * standard attention moves (it writes S and P to HBM and reads them
 * back), on-chip bytes of this step, and FLOPs, which stay the same as
 * standard attention's: tiling changes the traffic, not the quadratic
 * arithmetic.
 */
#include "config.h"

#include "ui_int.h"

#include <stdio.h>

static void
ui_pane_count_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	(void)ui;
	(void)h;
	*minh = 2;
	*wanth = 4;
	*wantw = w;
}

/* A count as "1234", "12.3k", "4.29G". */
static const char *
ui_pane_count_si(double x, char *buf, size_t len)
{
	static const char *unit[] = { "", "k", "M", "G", "T", "P" };
	int u = 0;

	if (x < 10000.0) {
		snprintf(buf, len, "%.0f", x);
		return buf;
	}
	while (x >= 1000.0 && u < 5) {
		x /= 1000.0;
		u++;
	}
	snprintf(buf, len, "%.3g%s", x, unit[u]);
	return buf;
}

static void
ui_pane_count_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct traffic *t = &v->traffic, *all = &sim_traffic(ui->sim)->total;
	const struct traffic *std = &ui->standard;
	const struct problem *p = UI_PROBLEM(ui);
	char a[32], b[32], c[32], d[32];
	int y = r.y;

	ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "HBM %s so far, %s in "
	    "all; standard: %s",
	    util_bytes((double)(t->hbm_read + t->hbm_write), a, sizeof a),
	    util_bytes((double)(all->hbm_read + all->hbm_write), b, sizeof b),
	    util_bytes((double)(std->hbm_read + std->hbm_write), c, sizeof c));
	ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "FLOPs %s of %s; "
	    "standard: %s, the same (quadratic)",
	    ui_pane_count_si((double)t->flops, a, sizeof a),
	    ui_pane_count_si((double)all->flops, b, sizeof b),
	    ui_pane_count_si((double)std->flops, c, sizeof c));
	if (y < r.y + r.h)
		ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "on chip now %s; "
		    "kept in HBM: %s, standard %s (S, P)",
		    util_bytes((double)t->onchip, a, sizeof a),
		    util_bytes((double)all->stored, b, sizeof b),
		    util_bytes((double)std->stored, d, sizeof d));
	if (y < r.y + r.h)
		ui_grid_printf(g, r.x, y, r.w, UI_ROLE_LABEL, "Tq=%d Tk=%d d=%d dv=%d "
		    "Br=%d Bc=%d %s, %s", p->tq, p->tk, p->d, p->dv,
		    sim_schedule(ui->sim)->br, sim_schedule(ui->sim)->bc,
		    dtype_name(p->dtype), p->source);
}

const struct ui_pane ui_pane_count = {
	.name = "counters",
	.size = ui_pane_count_size,
	.draw = ui_pane_count_draw,
};
