/*
 * ui_pane_count.c - the counters of the segment shown.  The forward: HBM
 * bytes moved so far against what standard attention moves (it writes S
 * and P to HBM and reads them back), on-chip bytes of this step, and
 * FLOPs, which stay the same as standard attention's: tiling changes the
 * traffic, not the quadratic arithmetic.  The combine: the partials read
 * back so far, what the split forward wrote of them, O and lse written.
 * The backward: its HBM bytes and FLOPs so far against standard
 * attention's backward (which reads the P its forward stored), what each
 * keeps in HBM, and the FLOPs against the forward's.  Each counts what
 * has been done at the phase shown.
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

/* The counters' number format: "1234", "12.3k", "4.29G". */
static const char *
ui_count_si(double x, char *buf, size_t len)
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

/* The last line: the problem, and its masks and score rules. */
static void
ui_pane_count_problem(struct ui *ui, struct ui_grid *g, int x, int y, int w)
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct schedule *s = sim_schedule(ui->sim);
	char split[40] = "", mask[100] = "", rules[80];

	if (s->splits > 1)
		snprintf(split, sizeof split, " splits=%d", s->splits);
	if (mask_rule_hides(problem_mask(p, 0)) || problem_beyond_causal(p))
		snprintf(mask, sizeof mask, "; %s", mask_describe(problem_mask(p, 0),
		    p->alibi != NULL, rules, sizeof rules));
	if (p->scores_mode)
		ui_grid_printf(g, x, y, w, UI_ROLE_LABEL, "Tq=%d Tk=%d dv=%d "
		    "Br=%d Bc=%d%s %s, %s%s", p->tq, p->tk, p->dv, s->br, s->bc,
		    split, dtype_name(p->dtype), p->source, mask);
	else
		ui_grid_printf(g, x, y, w, UI_ROLE_LABEL, "Tq=%d Tk=%d d=%d dv=%d "
		    "Br=%d Bc=%d%s %s, %s%s", p->tq, p->tk, p->d, p->dv, s->br,
		    s->bc, split, dtype_name(p->dtype), p->source, mask);
}

static void
ui_pane_count_forward(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct traffic *t = &v->traffic, *all = &sim_traffic(ui->sim)->total;
	const struct traffic *std = &ui->standard;
	char a[32], b[32], c[32], d[32];
	int y = r.y;

	/* Two lines hold the counters at 80 columns: HBM so far against
	 * standard attention, FLOPs, on-chip bytes. */
	ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "HBM so far %s of %s; "
	    "standard %s",
	    util_bytes((double)(t->hbm_read + t->hbm_write), a, sizeof a),
	    util_bytes((double)(all->hbm_read + all->hbm_write), b, sizeof b),
	    util_bytes((double)(std->hbm_read + std->hbm_write), c, sizeof c));
	ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "FLOPs %s of %s (%s "
	    "standard); on chip now %s",
	    ui_count_si((double)t->flops, a, sizeof a),
	    ui_count_si((double)all->flops, b, sizeof b),
	    all->flops == std->flops ? "=" : "<",
	    util_bytes((double)t->onchip, c, sizeof c));
	if (y < r.y + r.h && sim_schedule(ui->sim)->splits > 1)
		ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "partials written "
		    "so far %s of %s (float32, for the combine)",
		    util_bytes((double)t->partials, b, sizeof b),
		    util_bytes((double)all->partials, d, sizeof d));
	else if (y < r.y + r.h)
		/* Tiling saves traffic, not arithmetic: only a window with a
		 * left edge bounds each row's keys, so its FLOPs grow as T. */
		ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "kept in HBM: %s, "
		    "standard %s (S, P); FLOPs %s",
		    util_bytes((double)all->stored, b, sizeof b),
		    util_bytes((double)std->stored, d, sizeof d),
		    mask_rule_has(problem_mask(UI_PROBLEM(ui), 0), MASK_WINDOW) &&
		    problem_mask(UI_PROBLEM(ui), 0).left >= 0 ?
		    "grow as T (the window)" : "stay quadratic");
	if (y < r.y + r.h)
		ui_pane_count_problem(ui, g, r.x, y, r.w);
}

static void
ui_pane_count_combine(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct combine_view *v = ui_comb_view(ui);
	const struct traffic *fwd = &sim_traffic(ui->sim)->total;
	struct traffic all;
	char a[32], b[32], c[32];
	int y = r.y;

	combine_traffic(ui->line.comb, &all);
	ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "partials read back "
	    "so far %s of %s",
	    util_bytes((double)v->traffic.hbm_read, a, sizeof a),
	    util_bytes((double)all.hbm_read, b, sizeof b));
	ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "O and lse written %s "
	    "of %s; merges on chip, no matmul",
	    util_bytes((double)v->traffic.hbm_write, a, sizeof a),
	    util_bytes((double)all.hbm_write, b, sizeof b));
	if (y < r.y + r.h)
		ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "the forward wrote "
		    "them (%s); HBM of both: %s",
		    util_bytes((double)fwd->partials, a, sizeof a),
		    util_bytes((double)(fwd->hbm_read + fwd->hbm_write +
		    all.hbm_read + all.hbm_write), c, sizeof c));
	if (y < r.y + r.h)
		ui_pane_count_problem(ui, g, r.x, y, r.w);
}

static void
ui_pane_count_backward(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct backward_view *v = ui_bwd_view(ui);
	const struct traffic *t = &v->traffic;
	const struct traffic *all = &backward_traffic(ui->line.bwd)->total;
	const struct traffic *std = &ui->standard_bwd;
	uint64_t fwd = sim_traffic(ui->sim)->total.flops;
	char a[32], b[32], c[32];
	int y = r.y;

	ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "backward HBM so far "
	    "%s of %s; standard %s",
	    util_bytes((double)(t->hbm_read + t->hbm_write), a, sizeof a),
	    util_bytes((double)(all->hbm_read + all->hbm_write), b, sizeof b),
	    util_bytes((double)(std->hbm_read + std->hbm_write), c, sizeof c));
	ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "FLOPs %s of %s "
	    "(standard %s; %.3gx the forward's)",
	    ui_count_si((double)t->flops, a, sizeof a),
	    ui_count_si((double)all->flops, b, sizeof b),
	    ui_count_si((double)std->flops, c, sizeof c),
	    fwd > 0 ? (double)all->flops / (double)fwd : 0.0);
	if (y < r.y + r.h)
		ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_NORMAL, "on chip %s; kept "
		    "in HBM %s, standard %s (P, dP, dS)",
		    util_bytes((double)t->onchip, a, sizeof a),
		    util_bytes((double)all->stored, b, sizeof b),
		    util_bytes((double)std->stored, c, sizeof c));
	if (y < r.y + r.h)
		ui_pane_count_problem(ui, g, r.x, y, r.w);
}

static void
ui_pane_count_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	switch (ui_kind(ui)) {
	case TIMELINE_COMBINE:
		ui_pane_count_combine(ui, g, r);
		break;
	case TIMELINE_BACKWARD:
		ui_pane_count_backward(ui, g, r);
		break;
	default:
		ui_pane_count_forward(ui, g, r);
		break;
	}
}

const struct ui_pane ui_pane_count = {
	.name = "counters",
	.size = ui_pane_count_size,
	.draw = ui_pane_count_draw,
};
