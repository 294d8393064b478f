/*
 * ui_pane_bwd_eq.c - the backward's equations, live, for the focused row
 * r and key c of the tile (entry [0] of each gradient), each on the
 * phase that computes it and saying where its result lives:
 *
 *   s  = scale q_r.k_c                 (scores: recomputed)
 *   p  = e^(s - lse_r)                 (P: no row max, no row sum)
 *   dV_c += sum_r p dO_r               (dV: on chip)
 *   dp = dO_r.v_c                      (dP)
 *   ds = p (dp - D_r)                  (dS: D = rowsum(dO o O))
 *   dQ_r += scale sum_c ds K_c         (dQ: HBM, read-modify-write)
 *   dK_c += scale sum_r ds Q_r         (dK: on chip)
 *   dK_j, dV_j -> HBM                  (write: the key block's last tile)
 *
 * A sum over the tile is not kept by the engine; the lines show it as
 * what the accumulator gained (new - old).  Under a gradient bug the
 * lines show the broken rule and the correct backward's numbers beside.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>

static void
ui_pane_bwd_eq_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	(void)ui;
	(void)h;
	/* Five lines: the backward's stack fits 80x24 under a lesson's
	 * narration (the pane drops the lines that matter least). */
	*minh = 5;
	*wanth = 11;
	*wantw = w;
}

/* Where the current phase's result lives, and why. */
static void
ui_pane_bwd_eq_where(struct ui *ui, const struct backward_view *v, int digits,
    char *buf, size_t len)
{
	char n1[32];

	switch (v->phase) {
	case BWD_PHASE_LOAD:
	case BWD_PHASE_SCORES:
	case BWD_PHASE_P:
		snprintf(buf, len, "no P was stored: S and P are recomputed from "
		    "Q, K and the forward's lse");
		break;
	case BWD_PHASE_DV:
	case BWD_PHASE_DP:
		snprintf(buf, len, "dV_j stays on chip until key block %d ends",
		    v->tile.j);
		break;
	case BWD_PHASE_DS:
		snprintf(buf, len, "D = rowsum(dO%sO) = %s: the row sum dS needs, "
		    "from O alone", ui->gl->circ, ui_num_prec(ui,
		    v->dsum[ui->focus], UI_EQ_NW, digits, n1, sizeof n1));
		break;
	case BWD_PHASE_DQ:
		snprintf(buf, len, v->d > 0 ? "dQ_i lives in HBM: read, added to "
		    "and written back on every tile" : "a scores problem's "
		    "gradient is dS: its tile went to HBM");
		break;
	default:
		snprintf(buf, len, "dK_j and dV_j: on chip, to HBM once, after key "
		    "block %d's last tile%s", v->tile.j,
		    v->phase == BWD_PHASE_WRITE ? " (now)" : "");
		break;
	}
}

static int
ui_pane_bwd_eq_lines(struct ui *ui, int width, int digits,
    struct ui_eq_line *ln)
{
	const struct backward_view *v = ui_bwd_view(ui);
	const struct backward_view *ok;
	enum backward_bug bug = ui->opts.grad_bug;
	const struct ui_glyphs *gl = ui->gl;
	const char *P = gl->prime, *D = gl->dot, *S = gl->sum;
	const int r = ui->focus, c = ui->focus_key;
	const size_t rc = (size_t)r * v->cols + c;
	float s = v->s[rc], p = v->p[rc], dp = v->dp[rc], ds = v->ds[rc];
	float lse = v->lse[r], dsum = v->dsum[r];
	float dv0 = v->dv_old[(size_t)c * v->dv], dv1 = v->dv_new[(size_t)c * v->dv];
	int n = 0, masked = isinf(s) && s < 0, grads = v->d > 0;
	char n1[32], n2[32], n3[32], n4[32];

#define NUM(b, x) ui_num_prec(ui, (x), UI_EQ_NW, digits, (b), sizeof (b))
#define FAC(b, x) ui_eq_factor(ui, (x), digits, (b), sizeof (b))
#define ADD(b, x) ui_eq_term(ui, (x), digits, (b), sizeof (b))
	(void)width;
	ln[n].phase = BWD_PHASE_SCORES;
	ln[n].keep = 4;
	snprintf(ln[n].formula, sizeof ln[n].formula, UI_PROBLEM(ui)->scores_mode ?
	    "s  = S (given)" : "s  = scale%sq%sk", D, D);
	if (masked)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s  (masked: p = "
		    "ds = 0)", gl->ninf);
	else
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s", NUM(n1, s));

	ln[n].phase = BWD_PHASE_P;
	ln[n].keep = 8;
	snprintf(ln[n].formula, sizeof ln[n].formula, "p  = e^(s - %s)",
	    bug == BWD_BUG_MAX_NOT_LSE ? "m" : "lse");
	if (isinf(lse) && lse < 0)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= 0  (the row sees no "
		    "key: lse = %s)", gl->ninf);
	else
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= e^(%s - %s) = %s%s",
		    NUM(n1, s), NUM(n2, lse), NUM(n3, p), bug == BWD_BUG_MAX_NOT_LSE ?
		    "  (bug: the row max, not lse)" : "");

	ln[n].phase = BWD_PHASE_DV;
	ln[n].keep = 7;
	snprintf(ln[n].formula, sizeof ln[n].formula, "dV%s = dV + %s p dO",
	    P, S);
	snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s %s = %s",
	    NUM(n1, dv0), ADD(n2, dv1 - dv0), NUM(n3, dv1));

	ln[n].phase = BWD_PHASE_DP;
	ln[n].keep = 6;
	snprintf(ln[n].formula, sizeof ln[n].formula, "dp = dO%sv", D);
	snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s", NUM(n1, dp));

	ln[n].phase = BWD_PHASE_DS;
	ln[n].keep = 9;
	if (bug == BWD_BUG_NO_D) {
		snprintf(ln[n].formula, sizeof ln[n].formula, "ds = p%sdp", D);
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s%s = %s  (bug: "
		    "D left out)", NUM(n1, p), D, FAC(n2, dp), NUM(n3, ds));
	} else {
		snprintf(ln[n].formula, sizeof ln[n].formula, "ds = p (dp - D)");
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s(%s %s) = %s",
		    NUM(n1, p), D, NUM(n2, dp), ADD(n3, -dsum), NUM(n4, ds));
	}

	if (grads) {
		float q0 = v->dq_old[(size_t)r * v->d], q1 = v->dq_new[(size_t)r * v->d];
		float k0 = v->dk_old[(size_t)c * v->d], k1 = v->dk_new[(size_t)c * v->d];

		ln[n].phase = BWD_PHASE_DQ;
		ln[n].keep = 9;
		if (bug == BWD_BUG_DQ_OVERWRITE) {
			snprintf(ln[n].formula, sizeof ln[n].formula, "dQ%s = scale %s "
			    "ds K", P, S);
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s  (bug: "
			    "written, not added to %s)", NUM(n1, q1), NUM(n2, q0));
		} else {
			snprintf(ln[n].formula, sizeof ln[n].formula, "dQ%s = dQ + "
			    "%s%s ds K", P, bug == BWD_BUG_NO_SCALE ? "" : "scale ", S);
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s %s = %s",
			    NUM(n1, q0), ADD(n2, q1 - q0), NUM(n3, q1));
		}
		ln[n].phase = BWD_PHASE_DK;
		ln[n].keep = 8;
		snprintf(ln[n].formula, sizeof ln[n].formula, "dK%s = dK + %s%s ds "
		    "Q", P, bug == BWD_BUG_NO_SCALE ? "" : "scale ", S);
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s %s = %s",
		    NUM(n1, k0), ADD(n2, k1 - k0), NUM(n3, k1));
	}

	ln[n].phase = BWD_PHASE_WRITE;
	ln[n].keep = v->last_in_key ? 7 : 1;
	ln[n].later = !v->last_in_key;
	snprintf(ln[n].formula, sizeof ln[n].formula, "%s %s HBM",
	    grads ? "dK_j, dV_j" : "dV_j", gl->arrow);
	if (v->last_in_key)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "once, at key block "
		    "%d's last tile", v->tile.j);
	else
		snprintf(ln[n++].subst, sizeof ln[0].subst, "after key block %d's "
		    "last tile (row block %d)", v->tile.j,
		    backward_schedule(ui->line.bwd)->tr - 1);

	/* What the bug did, beside the correct backward; or where this
	 * phase's result lives. */
	ln[n].phase = -1;
	ln[n].keep = 3;
	if (bug != BWD_BUG_NONE && v->phase >= BWD_PHASE_P &&
	    (ok = ui_correct_bwd(ui)) != NULL) {
		char *at = ln[n].subst;
		size_t left = sizeof ln[0].subst;
		int w;

		/* Only what the phase shown has computed: the panes show "?"
		 * for the rest, and so does this line, by leaving it out. */
		ln[n].keep = 9;
		w = snprintf(at, left, "correct backward: p = %s",
		    NUM(n1, ok->p[rc]));
#define MORE(cond, ...) \
		if ((cond) && w > 0 && (size_t)w < left) { \
			at += w; \
			left -= (size_t)w; \
			w = snprintf(at, left, __VA_ARGS__); \
		}
		MORE(!grads && v->phase >= BWD_PHASE_DV, ", dV%s[0] = %s", P,
		    NUM(n3, ok->dv_new[(size_t)c * v->dv]))
		MORE(v->phase >= BWD_PHASE_DS, ", ds = %s", NUM(n2, ok->ds[rc]))
		MORE(grads && v->phase >= BWD_PHASE_DQ, ", dQ%s[0] = %s", P,
		    NUM(n3, ok->dq_new[(size_t)r * v->d]))
		MORE(grads && v->phase >= BWD_PHASE_DK, ", dK%s[0] = %s", P,
		    NUM(n4, ok->dk_new[(size_t)c * v->d]))
#undef MORE
		n++;
	} else
		ui_pane_bwd_eq_where(ui, v, digits, ln[n++].subst,
		    sizeof ln[0].subst);
	return n;
#undef NUM
#undef FAC
#undef ADD
}

static void
ui_pane_bwd_eq_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct backward_view *v = ui_bwd_view(ui);
	char title[120];

	snprintf(title, sizeof title, "the gradients at row %d, key %d, entry "
	    "[0] (Tab rows, [ ] keys)", v->tile.r0 + ui->focus,
	    v->tile.c0 + ui->focus_key);
	ui_eq_draw(ui, g, r, title, (int)v->phase, ui_pane_bwd_eq_lines);
}

const struct ui_pane ui_pane_bwd_eq = {
	.name = "backward equations",
	.size = ui_pane_bwd_eq_size,
	.draw = ui_pane_bwd_eq_draw,
};
