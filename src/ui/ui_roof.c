/*
 * ui_roof.c - R in the view: the H200's roofline (ui_roofline.c's
 * figure) over the whole view until q or Esc, with the view's problem
 * placed on it.
 *
 * The simulator times nothing, so the problem's points stand on the
 * roof itself: how fast its counts would let it go at best.  Two of
 * them, as roofline.h counts bytes: h at the HBM intensity (each tensor
 * once), t at the tiles' (every row block reads K and V again), so that
 * a student sees what Br does to where a kernel stands against the
 * ridge.
 */
#include "config.h"

#include "ui_int.h"
#include "ui_roofline.h"

#include <stdio.h>
#include <string.h>

/* The problem shown as roofline.h's shape: one head, its forward. */
static int
ui_roof_count(const struct ui *ui, struct roofline_shape *s,
    struct roofline_count *c, char *err, size_t errlen)
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct schedule *sc = sim_schedule(ui->sim);

	memset(s, 0, sizeof *s);
	s->pass = ROOFLINE_TILED;
	s->batch = s->heads = s->kv_heads = 1;
	s->tq = p->tq;
	s->tk = p->tk;
	s->d = p->scores_mode ? p->dv : p->d;
	s->dtype = p->dtype;
	s->br = sc->br;
	s->bc = sc->bc;
	return roofline_count(s, c, err, errlen);
}

int
ui_roof_open(struct ui *ui)
{
	ui->roof = 1;
	return UI_HANDLED;
}

int
ui_roof_key(struct ui *ui, const struct ui_key *k)
{
	if (k->code == 'q' || k->code == UI_KEY_ESC || k->code == 'R')
		ui->roof = 0;
	return UI_HANDLED;	/* the view's keys wait */
}

void
ui_roof_draw(const struct ui *ui, struct ui_grid *g)
{
	const struct roofline_machine *m = &roofline_h200;
	struct ui_rect r = g->clip, below;
	struct ui_roofline_point pt[2];
	struct roofline_shape s;
	struct roofline_count c;
	char err[160], text[600];
	double in, tin, peak;

	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	below.x = r.x;
	below.y = r.y + UI_ROOFLINE_H;
	below.w = r.w;
	below.h = r.h - UI_ROOFLINE_H;
	if (ui_roof_count(ui, &s, &c, err, sizeof err) != 0 ||
	    c.hbm_bytes == 0 || c.tile_bytes == 0) {
		ui_roofline_draw(g, r.x, r.y, m, NULL, 0);
		ui_grid_wrap(g, below, UI_ROLE_ERROR, err);
		return;
	}
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
	ui_roofline_draw(g, r.x, r.y, m, pt, 2);
	snprintf(text, sizeof text, "This head (Tq=%d Tk=%d d=%d Br=%d Bc=%d "
	    "%s) on the %s, at the %s roof (the simulator times nothing): h "
	    "each tensor once, I = %.3g FLOPs a byte, %s-bound, at most %.3g "
	    "TFLOP/s; t the tiles' reads, I = %.3g, at most %.3g.  q returns.",
	    s.tq, s.tk, s.d, s.br, s.bc, dtype_name(s.dtype), m->name,
	    s.dtype == DTYPE_FP32 ? "fp32" : "tensor", in,
	    roofline_compute_bound(peak, m->hbm, in) ? "compute" : "bandwidth",
	    pt[0].flops / 1e12, tin, pt[1].flops / 1e12);
	ui_grid_wrap(g, below, UI_ROLE_LABEL, text);
}
