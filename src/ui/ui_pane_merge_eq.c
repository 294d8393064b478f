/*
 * ui_pane_merge_eq.c - the combine's equations, live: one merge of two
 * partial states for the focused row, the seed's rescale with a whole
 * partial in place of a tile (merge.h),
 *
 *   mlu   m = max(m_a, m_b)   w_s = e^(m_s - m)   l = w_a l_a + w_b l_b
 *         u = w_a u_a + w_b u_b                   O = u / l, lse = m + log l
 *   olse  m = max(lse_a, lse_b)   lse = m + log(e^(lse_a - m) + e^(lse_b - m))
 *         w_s = e^(lse_s - lse)   o = w_a o_a + w_b o_b
 *
 * with the numbers put in, an empty side shown getting weight 0, and
 * under a merge bug the broken line the combine really runs and the
 * correct merge's numbers beside it.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void
ui_pane_merge_eq_size(const struct ui *ui, int w, int h, int *minh,
    int *wanth, int *wantw)
{
	(void)ui;
	(void)h;
	*minh = 6;
	*wanth = 9;
	*wantw = w;
}

/* The weight line of side s ("a" or "b"). */
static void
ui_pane_merge_eq_weight(struct ui *ui, struct ui_eq_line *ln, const char *s,
    int olse, float ms, float m, float w, int forgot, int digits)
{
	char n1[32], n2[32], n3[32];

#define NUM(b, x) ui_num_prec(ui, (x), UI_EQ_NW, digits, (b), sizeof (b))
	ln->phase = COMBINE_PHASE_WEIGHTS;
	ln->keep = 8;
	snprintf(ln->formula, sizeof ln->formula, "w_%s = e^(%s_%s - %s)", s,
	    olse ? "lse" : "m", s, olse ? "lse" : "m");
	if (forgot)
		snprintf(ln->subst, sizeof ln->subst, "= %s  (bug: %s not "
		    "rescaled)", NUM(n1, w), s);
	else if (ms == -INFINITY)
		snprintf(ln->subst, sizeof ln->subst, "= 0  (%s is empty: it "
		    "merges as nothing)", s);
	else
		snprintf(ln->subst, sizeof ln->subst, "= e^(%s - %s) = %s",
		    NUM(n1, ms), NUM(n2, m), NUM(n3, w));
#undef NUM
}

static int
ui_pane_merge_eq_lines(struct ui *ui, int width, int digits,
    struct ui_eq_line *ln)
{
	const struct combine_view *v = ui_comb_view(ui);
	const struct combine_view *ok;
	enum merge_bug bug = ui->opts.combine.bug;
	const struct ui_glyphs *gl = ui->gl;
	const char *L = gl->ell, *D = gl->dot;
	int olse = combine_form(ui->line.comb) == MERGE_OLSE;
	int row = ui->focus, n = 0;
	size_t at = (size_t)row * v->dv;
	float ma = v->m_a[row], mb = v->m_b[row], m = v->m[row];
	float mx = ma > mb ? ma : mb, wa = v->w_a[row], wb = v->w_b[row];
	float diff, worst;
	char n1[32], n2[32], n3[32], n4[32], n5[32], n6[32];
	int e;

#define NUM(b, x) ui_num_prec(ui, (x), UI_EQ_NW, digits, (b), sizeof (b))
#define FAC(b, x) ui_eq_factor(ui, (x), digits, (b), sizeof (b))
#define ADD(b, x) ui_eq_term(ui, (x), digits, (b), sizeof (b))
	(void)width;
	ln[n].phase = COMBINE_PHASE_LOAD;
	ln[n].keep = 2;
	snprintf(ln[n].formula, sizeof ln[n].formula, "a, b");
	if (olse)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= (lse %s, o[0] %s), "
		    "(lse %s, o[0] %s)", NUM(n1, ma), NUM(n2, v->u_a[at]),
		    NUM(n3, mb), NUM(n4, v->u_b[at]));
	else
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= (%s, %s, %s), (%s, "
		    "%s, %s)", NUM(n1, ma), NUM(n2, v->l_a[row]),
		    NUM(n3, v->u_a[at]), NUM(n4, mb), NUM(n5, v->l_b[row]),
		    NUM(n6, v->u_b[at]));

	ln[n].phase = COMBINE_PHASE_MAX;
	ln[n].keep = 9;
	if (bug == MERGE_BUG_LAST_MAX) {
		snprintf(ln[n].formula, sizeof ln[n].formula, "m  = %s_b",
		    olse ? "lse" : "m");
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s  (bug: b's max, "
		    "not the larger)", NUM(n1, mb));
	} else {
		snprintf(ln[n].formula, sizeof ln[n].formula, "m  = max(%s_a, %s_b)",
		    olse ? "lse" : "m", olse ? "lse" : "m");
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= max(%s, %s) = %s",
		    NUM(n1, ma), NUM(n2, mb), NUM(n3, olse ? mx : m));
	}

	if (olse) {
		/* the merged lse about the max, then each side's share */
		float base = bug == MERGE_BUG_LAST_MAX ? mb : mx;

		ln[n].phase = COMBINE_PHASE_WEIGHTS;
		ln[n].keep = 9;
		snprintf(ln[n].formula, sizeof ln[n].formula, "lse = m + log %s",
		    gl->sum);
		if (m == -INFINITY)
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s: both sides "
			    "empty", gl->ninf);
		else
			snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s + log(%s + "
			    "%s) = %s", NUM(n1, base), NUM(n2, ma == -INFINITY ? 0.0f :
			    expf(ma - base)), NUM(n3, mb == -INFINITY ? 0.0f :
			    expf(mb - base)), NUM(n4, m));
	}
	ui_pane_merge_eq_weight(ui, &ln[n++], "a", olse, ma, m, wa,
	    bug == MERGE_BUG_UNWEIGHTED, digits);
	ui_pane_merge_eq_weight(ui, &ln[n++], "b", olse, mb, m, wb,
	    bug == MERGE_BUG_UNWEIGHTED || bug == MERGE_BUG_NO_RESCALE_ONE,
	    digits);

	if (!olse) {
		ln[n].phase = COMBINE_PHASE_UPDATE;
		ln[n].keep = 9;
		snprintf(ln[n].formula, sizeof ln[n].formula, "%s  = w_a%s_a + "
		    "w_b%s_b", L, L, L);
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s%s + %s%s%s = %s",
		    NUM(n1, wa), D, NUM(n2, v->l_a[row]), NUM(n3, wb), D,
		    NUM(n4, v->l_b[row]), NUM(n5, v->l[row]));
	}
	ln[n].phase = COMBINE_PHASE_UPDATE;
	ln[n].keep = 9;
	snprintf(ln[n].formula, sizeof ln[n].formula, "%s  = w_a %s_a + w_b %s_b",
	    olse ? "o" : "u", olse ? "o" : "u", olse ? "o" : "u");
	snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s%s%s %s%s%s = %s",
	    NUM(n1, wa), D, FAC(n2, v->u_a[at]), ADD(n3, wb), D,
	    FAC(n4, v->u_b[at]), NUM(n5, v->u[at]));
	if (bug == MERGE_BUG_UNWEIGHTED)
		snprintf(ln[n - 1].subst + strlen(ln[n - 1].subst),
		    sizeof ln[0].subst - strlen(ln[n - 1].subst), "  (bug: no "
		    "weights)");

	ln[n].phase = COMBINE_PHASE_FINALIZE;
	ln[n].keep = v->last ? 7 : 1;
	ln[n].later = !v->last;
	snprintf(ln[n].formula, sizeof ln[n].formula, olse ? "O  = o" :
	    "O  = u/%s", L);
	if (!v->last)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "after the row block's "
		    "last merge (%d of %d)", combine_merges(ui->line.comb),
		    combine_merges(ui->line.comb));
	else if (olse)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s  (lse %s)",
		    NUM(n1, v->o[at]), NUM(n2, v->lse[row]));
	else
		snprintf(ln[n++].subst, sizeof ln[0].subst, "= %s/%s = %s  (lse = "
		    "m + log %s = %s)", NUM(n1, v->u[at]), NUM(n2, v->l[row]),
		    NUM(n3, v->o[at]), L, NUM(n4, v->lse[row]));

	/* What the merge bug did, beside the correct merge; or the point. */
	ln[n].phase = -1;
	ln[n].keep = 3;
	if (bug != MERGE_BUG_NONE && v->phase >= COMBINE_PHASE_UPDATE &&
	    (ok = ui_correct_comb(ui)) != NULL) {
		ln[n].keep = 9;
		if (v->phase >= COMBINE_PHASE_FINALIZE) {
			for (e = 0, worst = 0.0f; e < v->dv; e++) {
				diff = fabsf(v->o[at + e] - ok->o[at + e]);
				if (!(diff <= worst))
					worst = diff;
			}
			snprintf(ln[n++].subst, sizeof ln[0].subst, "correct merge: "
			    "O[0] = %s; this row's O is off by %s", NUM(n1, ok->o[at]),
			    NUM(n2, worst));
		} else
			snprintf(ln[n++].subst, sizeof ln[0].subst, "correct merge: m "
			    "= %s, w_b = %s, %s[0] = %s", NUM(n1, ok->m[row]),
			    NUM(n2, ok->w_b[row]), olse ? "o" : "u", NUM(n3, ok->u[at]));
	} else if (bug != MERGE_BUG_NONE && v->phase >= COMBINE_PHASE_WEIGHTS)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "merge bug %s: the "
		    "merged O goes wrong", combine_bug_name(bug));
	else if (v->phase >= COMBINE_PHASE_WEIGHTS && ma != -INFINITY &&
	    mb != -INFINITY)
		snprintf(ln[n++].subst, sizeof ln[0].subst, "the online update's "
		    "rescale: each side scaled by e^(its max - the max)");
	return n;
#undef NUM
#undef FAC
#undef ADD
}

static void
ui_pane_merge_eq_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct combine_view *v = ui_comb_view(ui);
	char title[120];

	snprintf(title, sizeof title, "the merge for row %d, entry [0] of %s "
	    "(Tab: next row)", v->r0 + ui->focus,
	    combine_form(ui->line.comb) == MERGE_OLSE ? "o" : "u");
	ui_eq_draw(ui, g, r, title, (int)v->phase, ui_pane_merge_eq_lines);
}

const struct ui_pane ui_pane_merge_eq = {
	.name = "merge equations",
	.size = ui_pane_merge_eq_size,
	.draw = ui_pane_merge_eq_draw,
};
