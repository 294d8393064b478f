/*
 * ui_pane_eq.c - the seed's update equations, live: each phase's formula
 * with the focused row's numbers put in,
 *
 *   m' = max(m, max s)     a = e^(m - m')     a l, a u (what rescaling
 *   p = e^(s - m')         l' = a l + sum p   makes of the old state)
 *   u' = a u + p V         (o' = (a l o + p V) / l')
 *
 * the current phase's line marked, later phases shown as formulas only.
 * Under a bug mode the lines show the broken rule the sim really runs,
 * and the last line the correct run's numbers beside them (and, once
 * the row finishes, how far off its O is).  pV is not kept by the sim;
 * the line shows it as u' - a u (or o' l' - a l o), which is what the
 * update added.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Columns of the formulas (at most). */
#define UI_EQ_FW 20

static void
ui_pane_eq_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	(void)ui;
	(void)h;
	*minh = 6;
	*wanth = 9;
	*wantw = w;
}

/* n values as "[a b c ...]" in width columns. */
static void
ui_eq_vector(const struct ui *ui, const float *x, int n, int width,
    char *out, size_t len)
{
	char b[32];
	size_t used;
	int i;

	snprintf(out, len, "[");
	for (i = 0; i < n; i++) {
		ui_num(ui, x[i], UI_EQ_NW, b, sizeof b);
		used = strlen(out);
		/* Leave room for " ...]" when more follow. */
		if (ui_grid_width(out) + (int)strlen(b) + (i + 1 < n ? 6 : 2) >
		    width) {
			snprintf(out + used, len - used, "%s%s]", i > 0 ? " " : "",
			    ui->gl->ellipsis);
			return;
		}
		snprintf(out + used, len - used, "%s%s", i > 0 ? " " : "", b);
	}
	used = strlen(out);
	snprintf(out + used, len - used, "]");
}

const char *
ui_eq_factor(const struct ui *ui, float x, int digits, char *buf,
    size_t len)
{
	char b[32];

	ui_num_prec(ui, x, UI_EQ_NW, digits, b, sizeof b);
	snprintf(buf, len, x < 0 ? "(%s)" : "%s", b);
	return buf;
}

/* A term added: "+ x" or "- |x|", which reads better than "+ -x". */
const char *
ui_eq_term(const struct ui *ui, float x, int digits, char *buf,
    size_t len)
{
	char b[32];

	ui_num_prec(ui, fabsf(x), UI_EQ_NW, digits, b, sizeof b);
	snprintf(buf, len, "%s %s", x < 0 ? "-" : "+", b);
	return buf;
}

/* Fills the lines for the focused row of the view, numbers with at
 * most digits significant digits; returns how many. */
static int
ui_pane_eq_lines(struct ui *ui, int width, int digits, struct ui_eq_line *ln)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct online_rule *rule = sim_rule(ui->sim);
	const struct schedule *sc = sim_schedule(ui->sim);
	const struct ui_glyphs *gl = ui->gl;
	const char *P = gl->prime, *D = gl->dot, *L = gl->ell, *A = gl->alpha;
	const char *M = gl->imul;
	const int row = ui->focus;
	float m0 = v->m_old[row], m1 = v->m_new[row], a = v->alpha[row];
	float l0 = v->l_old[row], l1 = v->l_new[row], sum = v->rowsum[row];
	float u0 = v->acc_old[(size_t)row * v->dv];
	float u1 = v->acc_new[(size_t)row * v->dv];
	/* The lines show what the sim runs: the bug's row of the table
	 * (online_rule.h) says which of l, the accumulator and l_old o get
	 * alpha, as online_update reads it. */
	const struct online_bug_flags f = online_bug_mode(rule->bug)->flags;
	int lscaled = f.scale_l, uscaled = f.scale_acc;
	float aa = uscaled ? a : 1.0f, keep, pv, worst, diff;
	const struct sim_view *ok;
	char n1[32], n2[32], n3[32], n4[32], n5[32], vec[160], pvs[40];
	const char *split;
	int n = 0, e, j0, j1, unseen = isinf(m1) && m1 < 0;

#define NUM(b, x) ui_num_prec(ui, (x), UI_EQ_NW, digits, (b), sizeof (b))
#define FAC(b, x) ui_eq_factor(ui, (x), digits, (b), sizeof (b))
#define ADD(b, x) ui_eq_term(ui, (x), digits, (b), sizeof (b))
	ln[n].phase = SIM_PHASE_SCORES;
	ln[n].keep = 2;
	if (mask_rule_has(UI_PROBLEM(ui)->mask, MASK_SOFTCAP) ||
	    UI_PROBLEM(ui)->alibi != NULL)
		/* x = scale q.k (or the given S), bent before the max. */
		snprintf(ln[n].formula, sizeof ln[n].formula, "s  = %s%s",
		    mask_rule_has(UI_PROBLEM(ui)->mask, MASK_SOFTCAP) ?
		    "C tanh(x/C)" : "x", UI_PROBLEM(ui)->alibi != NULL ? " + b" : "");
	else if (UI_PROBLEM(ui)->scores_mode)
		snprintf(ln[n].formula, sizeof ln[n].formula, "s  = S (given)");
	else
		snprintf(ln[n].formula, sizeof ln[n].formula, "s  = scale%sqK_j%s",
		    D, gl->transp);
	ui_eq_vector(ui, v->s + (size_t)row * v->cols, v->cols, width - 2,
	    vec, sizeof vec);
	ln[n].fitted = 1;
	snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s", vec);

	ln[n].phase = SIM_PHASE_MAX;
	ln[n].keep = 9;
	snprintf(ln[n].formula, sizeof ln[n].formula, "m%s = max(m, max %s)", P,
	    sim_rule(ui->sim)->mask_bug == MASK_BUG_MAX_BEFORE_CAP ? "x" : "s");
	snprintf(ln[n++].subst, sizeof ln[0].subst, "= max(%s, %s) = %s%s",
	    NUM(n1, m0), NUM(n2, v->rowmax[row]), NUM(n3, m1),
	    sim_rule(ui->sim)->mask_bug == MASK_BUG_MAX_BEFORE_CAP ?
	    "  (bug: x before the cap)" : "");

	ln[n].phase = SIM_PHASE_RESCALE;
	ln[n].keep = 9;
	snprintf(ln[n].formula, sizeof ln[n].formula, "%s  = e^(m - m%s)", A, P);
	if (unseen)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= 1 (m%s = %s: no key "
		    "seen yet, nothing to rescale)", P, gl->ninf);
	else
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= e^(%s - %s) = %s",
		    NUM(n1, m0), NUM(n2, m1), NUM(n3, a));

	/* At the rescale: what it makes of the old state, before anything
	 * is added (the update lines show these products after it). */
	if (v->phase == SIM_PHASE_RESCALE) {
		ln[n].phase = SIM_PHASE_RESCALE;
		ln[n].keep = 2;
		snprintf(ln[n].formula, sizeof ln[n].formula, "%s%s%s", A, M, L);
		if (lscaled)
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s%s = %s",
			    NUM(n1, a), D, NUM(n2, l0), NUM(n3, a * l0));
		else
			snprintf(ln[n++].subst, sizeof ln[0].subst, "not formed: %s kept "
			    "as %s (bug)", L, NUM(n1, l0));
		ln[n].phase = SIM_PHASE_RESCALE;
		ln[n].keep = 2;
		if (rule->convention == CONV_UNNORMALIZED) {
			snprintf(ln[n].formula, sizeof ln[n].formula, "%s%su", A, M);
			if (uscaled)
				snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s%s = %s",
				    NUM(n1, a), D, FAC(n2, u0), NUM(n3, a * u0));
			else
				snprintf(ln[n++].subst, sizeof ln[0].subst, "not formed: u "
				    "kept as %s (bug)", NUM(n1, u0));
		} else if (!f.keep_l) {
			snprintf(ln[n].formula, sizeof ln[n].formula, "%s%so", A, M);
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s%s = %s  (bug: "
			    "no %s)", NUM(n1, a), D, FAC(n2, u0), NUM(n3, a * u0), L);
		} else {
			snprintf(ln[n].formula, sizeof ln[n].formula, "%s%s%s%so", A, M, L,
			    M);
			if (uscaled)
				snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s%s%s%s = "
				    "%s", NUM(n1, a), D, NUM(n2, l0), D, FAC(n3, u0),
				    NUM(n4, a * l0 * u0));
			else
				snprintf(ln[n++].subst, sizeof ln[0].subst, "not formed: "
				    "%so kept as %s (bug)", L, NUM(n1, l0 * u0));
		}
	}

	ln[n].phase = SIM_PHASE_EXP;
	ln[n].keep = 8;
	snprintf(ln[n].formula, sizeof ln[n].formula, "p  = e^(s - m%s)", P);
	snprintf(n5, sizeof n5, "  %sp = %s", gl->sum, NUM(n1, sum));
	ui_eq_vector(ui, v->p + (size_t)row * v->cols, v->cols,
	    width - 2 - ui_grid_width(n5), vec, sizeof vec);
	ln[n].fitted = 1;
	snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s", vec, n5);

	ln[n].phase = SIM_PHASE_UPDATE;
	ln[n].keep = 9;
	if (lscaled) {
		snprintf(ln[n].formula, sizeof ln[n].formula, "%s%s = %s%s%s + %sp",
		    L, P, A, M, L, gl->sum);
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s%s + %s = %s",
		    NUM(n1, a), D, NUM(n2, l0), NUM(n3, sum), NUM(n4, l1));
	} else {
		snprintf(ln[n].formula, sizeof ln[n].formula, "%s%s = %s + %sp", L,
		    P, L, gl->sum);
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s + %s = %s  (bug: "
		    "%s not rescaled)", NUM(n1, l0), NUM(n2, sum), NUM(n3, l1), L);
	}

	ln[n].phase = SIM_PHASE_UPDATE;
	ln[n].keep = 9;
	if (rule->convention == CONV_UNNORMALIZED) {
		pv = u1 - aa * u0;
		if (uscaled) {
			snprintf(ln[n].formula, sizeof ln[n].formula,
			    "u%s = %s%su + pV", P, A, M);
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s%s %s "
			    "= %s", NUM(n1, a), D, FAC(n2, u0), ADD(pvs, pv),
			    NUM(n4, u1));
		} else {
			snprintf(ln[n].formula, sizeof ln[n].formula, "u%s = u + pV", P);
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s %s = %s"
			    "  (bug: u not rescaled)", NUM(n1, u0), ADD(pvs, pv),
			    NUM(n3, u1));
		}
	} else {
		keep = f.keep_l ? aa * l0 : aa;
		pv = u1 * l1 - keep * u0;
		if (!f.keep_l) {
			snprintf(ln[n].formula, sizeof ln[n].formula,
			    "o%s = (%s%so + pV)/%s%s", P, A, M, L, P);
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= (%s%s%s %s)"
			    "/%s = %s (bug: no %s)", NUM(n1, a), D, FAC(n2, u0),
			    ADD(pvs, pv), NUM(n4, l1), NUM(n3, u1), L);
		} else if (uscaled) {
			snprintf(ln[n].formula, sizeof ln[n].formula,
			    "o%s = (%s%s%s%so + pV)/%s%s", P, A, M, L, M, L, P);
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= (%s%s%s%s%s "
			    "%s)/%s = %s", NUM(n1, a), D, NUM(n2, l0), D,
			    FAC(n3, u0), ADD(pvs, pv), NUM(n4, l1), NUM(vec, u1));
		} else {
			snprintf(ln[n].formula, sizeof ln[n].formula,
			    "o%s = (%s%so + pV)/%s%s", P, L, M, L, P);
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= (%s%s%s %s)"
			    "/%s = %s  (bug: o not rescaled)", NUM(n1, l0), D,
			    FAC(n2, u0), ADD(pvs, pv), NUM(n4, l1), NUM(n3, u1));
		}
	}

	ln[n].phase = SIM_PHASE_FINALIZE;
	ln[n].keep = v->nphases == SIM_PHASES ? 7 : 1;
	ln[n].later = v->nphases < SIM_PHASES;
	/* With split-KV each key range ends in a partial (o, lse). */
	split = sc->splits > 1 ? "o_s" : "O ";
	if (rule->convention == CONV_UNNORMALIZED)
		snprintf(ln[n].formula, sizeof ln[n].formula, "%s = u/%s", split, L);
	else
		snprintf(ln[n].formula, sizeof ln[n].formula, "%s = o", split);
	if (v->nphases < SIM_PHASES && sc->splits > 1) {
		schedule_split_range(sc, v->tile.i, v->tile.split, &j0, &j1);
		snprintf(ln[n++].subst, sizeof ln[0].subst, "after key range %d's "
		    "last tile (j = %d): its partial", v->tile.split, j1 - 1);
	} else if (v->nphases < SIM_PHASES)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "after the row's last "
		    "tile (j = %d)", sc->jend[v->tile.i] - 1);
	else if (rule->convention == CONV_UNNORMALIZED)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s/%s = %s  (lse "
		    "%s)", NUM(n1, u1), NUM(n2, l1),
		    NUM(n3, v->o[(size_t)row * v->dv]), NUM(n4, v->lse[row]));
	else
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s  (lse %s)",
		    NUM(n1, v->o[(size_t)row * v->dv]), NUM(n2, v->lse[row]));

	/* The seed's point, once the step has reached the rescale: it
	 * matters more than the s line, which the tile pane shows too. */
	ln[n].phase = -1;
	ln[n].keep = 3;
	if (rule->bug != BUG_NONE && v->phase >= SIM_PHASE_UPDATE &&
	    (ok = ui_correct(ui)) != NULL) {
		/* What the bug did: the correct run's numbers beside these. */
		ln[n].keep = 9;
		if (v->phase >= SIM_PHASE_FINALIZE) {
			for (e = 0, worst = 0.0f; e < v->dv; e++) {
				diff = fabsf(v->o[(size_t)row * v->dv + e] -
				    ok->o[(size_t)row * v->dv + e]);
				if (!(diff <= worst))
					worst = diff;
			}
			snprintf(ln[n++].subst, sizeof ln[0].subst, "correct run: O[0] "
			    "= %s; this row's O is off by %s", NUM(n1,
			    ok->o[(size_t)row * v->dv]), NUM(n2, worst));
		} else
			snprintf(ln[n++].subst, sizeof ln[0].subst, "correct run: "
			    "%s%s = %s, %s%s[0] = %s", L, P, NUM(n1, ok->l_new[row]),
			    rule->convention == CONV_UNNORMALIZED ? "u" : "o", P,
			    NUM(n2, ok->acc_new[(size_t)row * v->dv]));
	} else if (v->phase < SIM_PHASE_RESCALE)
		;
	else if (rule->bug != BUG_NONE)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "bug %s: O goes wrong "
		    "once m rises", online_bug_name(rule->bug));
	else if (!unseen && isfinite(m0) && m1 > m0)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "m rose, so %s and %s "
		    "are both scaled by %s = %s", L,
		    rule->convention == CONV_UNNORMALIZED ? "u" : "o", A,
		    NUM(n3, a));
	else if (!unseen && isfinite(m0))
		snprintf(ln[n++].subst, sizeof ln[0].subst, "m did not rise: %s = 1, "
		    "%s and u carry over unchanged", A, L);
	return n;
#undef NUM
#undef ADD
#undef FAC
}

/* A substitution in r; on two rows it breaks before its last " = " that
 * leaves a first part that fits, so the result stays whole. */
static void
ui_pane_eq_subst(struct ui_grid *g, struct ui_rect r, int role,
    const char *text)
{
	char first[240];
	const char *at, *cut = NULL;

	if (r.h < 2 || ui_grid_width(text) <= r.w) {
		ui_grid_text(g, r.x, r.y, r.w, role, text);
		return;
	}
	for (at = strstr(text + 1, " = "); at != NULL; at = strstr(at + 1, " = ")) {
		if ((size_t)(at - text) >= sizeof first)
			break;
		memcpy(first, text, (size_t)(at - text));
		first[at - text] = '\0';
		if (ui_grid_width(first) > r.w)
			break;
		cut = at;
	}
	if (cut == NULL) {
		ui_grid_wrap(g, r, role, text);
		return;
	}
	memcpy(first, text, (size_t)(cut - text));
	first[cut - text] = '\0';
	ui_grid_text(g, r.x, r.y, r.w, role, first);
	ui_grid_text(g, r.x + 2, r.y + 1, r.w - 2, role, cut + 1);
}

void
ui_eq_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r,
    const char *title, int cur, ui_eq_lines_fn lines)
{
	struct ui_eq_line ln[UI_EQ_LINES];
	int n, i, low, y, role, show[UI_EQ_LINES];
	int rows[UI_EQ_LINES], subst[UI_EQ_LINES];
	int digits, wide, fw, avail, total;

	/* Four significant digits, or three when a line would not fit. */
	for (digits = 4; ; digits--) {
		memset(ln, 0, sizeof ln);
		n = lines(ui, r.w - UI_EQ_FW - 2, digits, ln);
		for (fw = 0, i = 0; i < n; i++)
			if (ui_grid_width(ln[i].formula) + 1 > fw)
				fw = ui_grid_width(ln[i].formula) + 1;
		avail = r.w - 2 - fw;
		for (wide = 0, i = 0; i < n; i++)
			if (!ln[i].fitted && ui_grid_width(ln[i].subst) >
			    (ln[i].phase < 0 ? r.w - 2 : avail))
				wide = 1;
		if (!wide || digits == 3)
			break;
	}
	/* A line that is still too wide wraps onto a second row.  Phases
	 * ahead show the formula alone (no numbers yet), except a line
	 * whose phase does not come in this step, which says when. */
	for (total = 0, i = 0; i < n; i++) {
		show[i] = 1;
		subst[i] = ln[i].phase <= cur || ln[i].later;
		rows[i] = subst[i] && ui_grid_width(ln[i].subst) > (ln[i].phase < 0 ?
		    r.w - 2 : avail) ? 2 : 1;
		total += rows[i];
	}
	/* Too short: drop the lines that matter least first. */
	while (total > r.h - 1) {
		for (low = -1, i = 0; i < n; i++)
			if (show[i] && ln[i].phase != cur &&
			    (low < 0 || ln[i].keep < ln[low].keep))
				low = i;
		if (low < 0)
			break;
		show[low] = 0;
		total -= rows[low];
	}
	for (low = 0, i = 0; i < n; i++)
		low += !show[i];
	/* The lines left out are counted on the title line. */
	ui_grid_fit(g, r.x, r.y, r.w - ui_pane_cut_mark(ui, NULL, r, 0, low, 0),
	    UI_ROLE_TITLE, title, ui->gl->ellipsis);
	ui_pane_cut_mark(ui, g, r, 0, low, 0);
	y = r.y + 1;
	for (i = 0; i < n && y < r.y + r.h; i++) {
		if (!show[i])
			continue;
		if (ln[i].phase < 0) {
			ui_grid_wrap(g, (struct ui_rect){ r.x + 2, y, r.w - 2,
			    rows[i] }, UI_ROLE_VALUE_CHANGED, ln[i].subst);
			y += rows[i];
			continue;
		}
		if (ln[i].phase == cur && !ln[i].later)
			ui_grid_text(g, r.x, y, 1, UI_ROLE_PHASE, ui->gl->focus);
		role = ln[i].later ? UI_ROLE_DIM : ln[i].phase == cur ?
		    UI_ROLE_PHASE : ln[i].phase < cur ? UI_ROLE_LABEL : UI_ROLE_DIM;
		ui_grid_text(g, r.x + 2, y, fw, role, ln[i].formula);
		if (subst[i])
			ui_pane_eq_subst(g, (struct ui_rect){ r.x + 2 + fw, y, avail,
			    rows[i] }, role == UI_ROLE_LABEL ? UI_ROLE_NORMAL : role,
			    ln[i].subst);
		y += rows[i];
	}
}

static void
ui_pane_eq_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct sim_view *v = sim_view(ui->sim);
	char title[120];

	snprintf(title, sizeof title, "the update for row %d, entry [0] of %s "
	    "(Tab: next row)", v->tile.r0 + ui->focus,
	    sim_rule(ui->sim)->convention == CONV_UNNORMALIZED ? "u" : "o");
	ui_eq_draw(ui, g, r, title, (int)v->phase, ui_pane_eq_lines);
}

const struct ui_pane ui_pane_eq = {
	.name = "equations",
	.size = ui_pane_eq_size,
	.draw = ui_pane_eq_draw,
};
