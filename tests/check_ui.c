/*
 * check_ui.c - the view without a terminal: the panes drawn into a cell
 * grid and read back as text, the keys, the rebuilds that keep the
 * position, the edit form's validation, and the heatmap summary against
 * the simulator's own S.
 */
#include "config.h"

#include "testutil.h"
#include "model/heatmap.h"
#include "gpu/gpu.h"
#include "ui/ui_int.h"
#include "ui/ui_form.h"
#include "ui/ui_keys.h"
#include "ui/ui_roofline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct ui_style utf8_style = { 1, 0 };
static const struct ui_style ascii_style = { 0, 0 };

/* A view of the built-in example (with changes made by the caller). */
static struct ui *
new_view(const struct options *o, const struct ui_style *st)
{
	struct options def;
	struct ui *ui;
	char err[300];

	if (o == NULL) {
		options_init(&def);
		o = &def;
	}
	ui = ui_new(o, st, err, sizeof err);
	ck_assert_msg(ui != NULL, "ui_new: %s", err);
	return ui;
}

static void
draw(struct ui *ui, struct ui_grid *g, int w, int h)
{
	char err[200];

	ck_assert_msg(ui_grid_resize(g, w, h, err, sizeof err) == 0, "%s", err);
	ui_draw(ui, g, (struct ui_rect){ 0, 0, w, h });
}

/* Is text anywhere on the screen? */
static int
screen_has(const struct ui_grid *g, const char *text)
{
	char line[2048];
	int y;

	for (y = 0; y < g->h; y++)
		if (strstr(ui_grid_line(g, y, line, sizeof line), text) != NULL)
			return 1;
	return 0;
}

/* Text of row y from column x, w columns, as UTF-8. */
static char *
span(const struct ui_grid *g, int x, int y, int w, char *buf, size_t len)
{
	struct ui_grid row = { 0 };
	char err[100];
	int i;

	ck_assert(ui_grid_resize(&row, w, 1, err, sizeof err) == 0);
	for (i = 0; i < w && x + i < g->w; i++)
		row.cells[i] = g->cells[(size_t)y * g->w + x + i];
	ui_grid_line(&row, 0, buf, len);
	ui_grid_free(&row);
	return buf;
}

/* Replaces every occurrence of from with spaces (same byte count). */
static void
blank_out(char *s, const char *from)
{
	size_t n = strlen(from);
	char *p;

	while ((p = strstr(s, from)) != NULL)
		memset(p, ' ', n);
}

static void
press(struct ui *ui, int code)
{
	struct ui_key k = { code, 0, 0 };

	ui_handle_key(ui, &k);
}

static void
type(struct ui *ui, const char *s)
{
	while (*s != '\0')
		press(ui, *s++);
}

START_TEST(test_first_frame)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	struct ui_rect heat;
	const struct ui_heat_geom *hg;
	char buf[512];
	int y, n;
	const char *expect[] = {
		"step 1 of 16", "tile (0,0)", "S 16\u00d716 = scale", "P = e^(S-m",
		"running state per row: m, \u2113, u", "the update for row 0",
		"m\u2032 = max(m, max s)", "HBM ", "FLOPs 256 of 4096",
		"n next", "? help", "q quit",
	};
	size_t i;

	draw(ui, &g, 80, 24);
	for (i = 0; i < sizeof expect / sizeof expect[0]; i++)
		ck_assert_msg(screen_has(&g, expect[i]), "no '%s' in the first frame",
		    expect[i]);
	/* The heatmap shows all 16 rows of S, 16 cells each. */
	heat = ui->slot[UI_SLOT_HEAT];
	ck_assert_int_gt(heat.w, 16);
	hg = ui_pane_heat_last(ui);
	for (y = 0; y < 16; y++) {
		span(&g, hg->x0, hg->y0 + y * hg->sy, 16, buf, sizeof buf);
		n = ui_grid_width(buf);
		ck_assert_msg(n == 16, "heatmap row %d is '%s'", y, buf);
	}
	/* The built-in example fits 80x24. */
	ui_min_size(ui, &n, &y);
	ck_assert_int_le(n, 80);
	ck_assert_int_le(y, 24);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/*
 * The state pane's numbers for every row of every step, in both loop
 * orders, equal the sim's to the digits shown.
 */
static void
check_state_rows(struct ui *ui, const struct ui_grid *g)
{
	const struct sim_view *v = sim_view(ui_sim(ui));
	struct ui_rect r = ui->slot[UI_SLOT_STATE];
	float m0, m1, a, l0, l1, want[5];
	char buf[512], *p;
	int row, got, i;

	for (row = 0; row < v->rows && row < r.h - 2; row++) {
		span(g, r.x, r.y + 2 + row, r.w, buf, sizeof buf);
		blank_out(buf, "\u2192");
		blank_out(buf, "\u25b6");
		/* "-∞" and "-inf" take the same bytes: scanf reads the latter. */
		while ((p = strstr(buf, "-\u221e")) != NULL)
			memcpy(p, "-inf", 4);
		got = sscanf(buf, "%*d %f %f %f %f %f", &m0, &m1, &a, &l0, &l1);
		ck_assert_msg(got == 5, "step %ld row %d: '%s'", v->step, row, buf);
		want[0] = v->m_old[row];
		want[1] = v->m_new[row];
		want[2] = v->alpha[row];
		want[3] = v->l_old[row];
		want[4] = v->l_new[row];
		for (i = 0; i < 5; i++) {
			float x = i == 0 ? m0 : i == 1 ? m1 : i == 2 ? a : i == 3 ? l0 : l1;
			ck_assert_msg(x == want[i] || fabsf(x - want[i]) <= 2e-4f *
			    fmaxf(1.0f, fabsf(want[i])), "step %ld row %d value %d: "
			    "shown %g, sim %g",
			    v->step, row, i, (double)x, (double)want[i]);
		}
	}
}

START_TEST(test_state_matches_sim)
{
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	long k;
	int order;

	for (order = 0; order < 2; order++) {
		options_init(&o);
		o.tiling.order = order ? ORDER_FA1 : ORDER_FA2;
		ui = new_view(&o, &utf8_style);
		for (k = 1; k < sim_steps(ui_sim(ui)); k++) {
			ck_assert_int_eq(ui_seek(ui, k, SIM_PHASE_LAST), 0);
			draw(ui, &g, 80, 24);
			check_state_rows(ui, &g);
		}
		ui_free(ui);
	}
	ui_grid_free(&g);
}
END_TEST

/* Step 0 starts from nothing: m = -inf, shown as such. */
START_TEST(test_state_first_step)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	struct ui_rect r;
	char buf[512];

	draw(ui, &g, 80, 24);
	r = ui->slot[UI_SLOT_STATE];
	span(&g, r.x, r.y + 2, r.w, buf, sizeof buf);
	ck_assert_msg(strstr(buf, "-\u221e \u2192") != NULL, "'%s'", buf);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The m' line of the equations ends with the focused row's m_new; Tab
 * moves the focus. */
START_TEST(test_equations_follow_focus)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct sim_view *v;
	char buf[512], want[64], *eq;
	int row;

	ui_seek(ui, 5, SIM_PHASE_LAST);
	v = sim_view(ui_sim(ui));
	for (row = 0; row < 4; row++) {
		draw(ui, &g, 80, 24);
		snprintf(want, sizeof want, "the update for row %d,",
		    v->tile.r0 + row);
		ck_assert_msg(screen_has(&g, want), "no '%s'", want);
		span(&g, ui->slot[UI_SLOT_EQ].x, ui->slot[UI_SLOT_EQ].y + 1, 80, buf,
		    sizeof buf);
		eq = strrchr(buf, '=');
		ck_assert_ptr_nonnull(eq);
		ck_assert_msg(fabs(strtod(eq + 1, NULL) - v->m_new[row]) <=
		    1e-3 * fabs(v->m_new[row]), "row %d: '%s' against %g", row, buf,
		    (double)v->m_new[row]);
		press(ui, UI_KEY_TAB);
	}
	ck_assert_int_eq(ui_focus(ui), 0);	/* Tab wrapped around */
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* Phases: before max the new values are "?"; the phase keys walk. */
START_TEST(test_phases)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct sim_view *v = sim_view(ui_sim(ui));
	struct ui_rect r;
	char buf[512];

	ui_seek(ui, 1, SIM_PHASE_LOAD);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "phase load 1/6"));
	ck_assert(screen_has(&g, "into on-chip memory"));
	r = ui->slot[UI_SLOT_STATE];
	span(&g, r.x, r.y + 2, r.w, buf, sizeof buf);
	ck_assert_msg(strstr(buf, "?") != NULL, "'%s'", buf);
	press(ui, '.');
	press(ui, '.');
	ck_assert_int_eq(v->phase, SIM_PHASE_MAX);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "phase max 3/6"));
	ck_assert(screen_has(&g, "S = scale"));
	/* n keeps the phase chosen with . and , */
	press(ui, 'n');
	ck_assert_int_eq(v->step, 2);
	ck_assert_int_eq(v->phase, SIM_PHASE_MAX);
	press(ui, ',');
	press(ui, ',');
	press(ui, ',');
	ck_assert_int_eq(v->step, 1);
	ck_assert_int_eq(v->phase, SIM_PHASE_UPDATE);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

START_TEST(test_ascii_and_too_small)
{
	struct ui *ui = new_view(NULL, &ascii_style);
	struct ui_grid g = { 0 };
	char want[64];
	size_t i;
	int w, h;

	ui_seek(ui, 7, SIM_PHASE_LAST);
	draw(ui, &g, 80, 24);
	for (i = 0; i < (size_t)g.w * g.h; i++)
		ck_assert_msg(g.cells[i].ch < 0x80, "cell %zu is U+%04X", i,
		    (unsigned)g.cells[i].ch);
	ck_assert(screen_has(&g, "S 16x16 = scale*QK^T"));
	ui_min_size(ui, &w, &h);
	draw(ui, &g, w - 1, h);
	snprintf(want, sizeof want, "terminal too small (need %dx%d)", w, h);
	ck_assert_msg(screen_has(&g, want), "no '%s'", want);
	draw(ui, &g, w, h);
	ck_assert(!screen_has(&g, "too small"));
	ck_assert(screen_has(&g, "running state"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/*
 * In ASCII the view spells alpha and the entrywise product so that they
 * cannot be read as the letters the panes use (the merge's operands a
 * and b, the output o, the state's m, l, u): "alpha" and "(*)", in the
 * equations, the state's heading and the backward's dS.
 */
START_TEST(test_ascii_no_letter_clash)
{
	static const char *const letters[] = { "a", "b", "o", "u", "l", "m",
	    "p", "s", "v", "x" };
	const struct ui_glyphs *gl = ui_glyphs(0);
	const char *glyph[] = { gl->alpha, gl->circ, gl->ell, gl->prime };
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	char t[32], *p;
	size_t i, j;

	/* alpha and the product: not a letter the panes use */
	for (i = 0; i < 2; i++) {
		snprintf(t, sizeof t, "%s", glyph[i]);
		for (p = t; *p == ' '; p++)
			;
		p[strcspn(p, " ")] = '\0';
		for (j = 0; j < sizeof letters / sizeof letters[0]; j++)
			ck_assert_msg(strcmp(p, letters[j]) != 0, "ASCII glyph '%s' "
			    "is the letter %s", glyph[i], letters[j]);
	}
	ui = new_view(NULL, &ascii_style);
	ui_seek(ui, 1, SIM_PHASE_LAST);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "alpha  = e^(m - m')"));
	ck_assert(screen_has(&g, "  alpha "));
	ui_free(ui);
	options_init(&o);
	o.backward = 1;
	ui = new_view(&o, &ascii_style);
	ui_seek(ui, timeline_steps(ui->line.tl) - 1, BWD_PHASE_DS);
	draw(ui, &g, 100, 40);
	ck_assert(screen_has(&g, "dS = P (*) (dP-D)"));
	ck_assert(screen_has(&g, "rowsum(dO (*) O)"));
	ck_assert(!screen_has(&g, "P o (") && !screen_has(&g, "dO o O"));
	ui_free(ui);
	ui_grid_free(&g);
}
END_TEST

/* Unpooled, the summary is the simulator's S bit for bit; pooled, each
 * cell is the max of its entries; both masks at once. */
START_TEST(test_heatmap_exact)
{
	struct options o;
	struct {
		struct problem p;
		struct sim *sim;
	} s;
	struct heatmap h, hp;
	const struct sim_view *v;
	char err[200];
	float x, want;
	long k;
	int r, c, known, causal, r0, c0;

	for (causal = 0; causal < 2; causal++) {
		options_init(&o);
		o.spec.tq = 13;
		o.spec.tk = 21;
		o.spec.d = 5;
		o.spec.input = INPUTS_NORMAL;
		o.spec.causal = causal;
		o.tiling.br = 3;
		o.tiling.bc = 4;
		ck_assert(problem_build(&o.spec, &s.p, err, sizeof err) == 0);
		s.sim = sim_new(&s.p, &o.tiling, &o.rule, err, sizeof err);
		ck_assert_ptr_nonnull(s.sim);
		ck_assert(heatmap_init(&h, &s.p, 0, err, sizeof err) == 0);
		ck_assert(heatmap_init(&hp, &s.p, 4, err, sizeof err) == 0);
		ck_assert_int_eq(h.gy, 1);
		ck_assert_int_gt(hp.gy, 1);
		ck_assert(heatmap_compute(&h, &s.p, 0) == 1);
		ck_assert(heatmap_compute(&hp, &s.p, 0) == 1);
		for (k = 0; k < sim_steps(s.sim); k++) {
			sim_seek(s.sim, k, SIM_PHASE_LAST);
			v = sim_view(s.sim);
			for (r = 0; r < v->rows; r++)
				for (c = 0; c < v->cols; c++) {
					x = heatmap_max(&h, causal, v->tile.r0 + r,
					    v->tile.r0 + r + 1, v->tile.c0 + c,
					    v->tile.c0 + c + 1, &known);
					ck_assert(known);
					ck_assert_msg(memcmp(&x, &v->s[r * v->cols + c],
					    sizeof x) == 0, "S(%d,%d): %g vs %g",
					    v->tile.r0 + r, v->tile.c0 + c, (double)x,
					    (double)v->s[r * v->cols + c]);
				}
		}
		/* Each pooled cell: the max of the unpooled ones it covers. */
		for (r0 = 0; r0 < s.p.tq; r0 += hp.gy)
			for (c0 = 0; c0 < s.p.tk; c0 += hp.gx) {
				want = -INFINITY;
				for (r = r0; r < r0 + hp.gy && r < s.p.tq; r++)
					for (c = c0; c < c0 + hp.gx && c < s.p.tk; c++) {
						x = heatmap_max(&h, causal, r, r + 1, c, c + 1,
						    &known);
						want = x > want ? x : want;
					}
				x = heatmap_max(&hp, causal, r0, r0 + 1, c0, c0 + 1, &known);
				ck_assert(x == want || (isinf(x) && isinf(want)));
			}
		ck_assert(heatmap_same_scores(&s.p, &s.p));
		heatmap_free(&h);
		heatmap_free(&hp);
		sim_free(s.sim);
		problem_free(&s.p);
	}
}
END_TEST

/* c, b, o, m rebuild the sim at the same tile where it still exists. */
START_TEST(test_rebuild_keeps_position)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	const struct sim_view *v;
	const struct schedule *s;

	s = sim_schedule(ui_sim(ui));
	ck_assert_int_eq(ui_seek(ui, schedule_step_of(s, 1, 2), SIM_PHASE_EXP), 0);
	press(ui, 'o');
	v = sim_view(ui_sim(ui));
	ck_assert_int_eq(sim_schedule(ui_sim(ui))->order, ORDER_FA1);
	ck_assert_int_eq(v->tile.i, 1);
	ck_assert_int_eq(v->tile.j, 2);
	ck_assert_int_eq(v->phase, SIM_PHASE_EXP);
	ck_assert_int_eq(v->step, 2 * 4 + 1);	/* key block 2, row block 1 */
	press(ui, 'c');
	v = sim_view(ui_sim(ui));
	ck_assert_int_eq(sim_rule(ui_sim(ui))->convention, CONV_NORMALIZED);
	ck_assert_int_eq(v->tile.i, 1);
	ck_assert_int_eq(v->tile.j, 2);
	/* Causal: tile (1, 2) is hidden, the row block's last kept is (1, 1). */
	press(ui, 'm');
	v = sim_view(ui_sim(ui));
	ck_assert(UI_PROBLEM(ui)->causal);
	ck_assert_int_eq(v->tile.i, 1);
	ck_assert_int_eq(v->tile.j, 1);
	press(ui, 'm');		/* the window (4, 0) */
	press(ui, 'm');		/* (4, 4) */
	press(ui, 'm');		/* none */
	ck_assert(!mask_rule_hides(problem_mask(UI_PROBLEM(ui), 0)));
	press(ui, 'o');
	ck_assert_int_eq(sim_schedule(ui_sim(ui))->order, ORDER_FA2);
	v = sim_view(ui_sim(ui));
	ck_assert_int_eq(v->tile.i, 1);
	ck_assert_int_eq(v->tile.j, 1);
	ui_free(ui);
}
END_TEST

/* A view opened on a window (flashstep --window 8,0) skips its tiles on
 * both sides; m widens it to (8, 8), then turns it off (every tile
 * visible) and then the causal mask on, never refusing --causal with
 * --window. */
START_TEST(test_mask_key_window)
{
	struct options o;
	struct ui *ui;
	const struct schedule *s;

	options_init(&o);
	o.spec.tq = o.spec.tk = 32;
	o.spec.window_set = 1;
	o.spec.window_left = 8;
	o.spec.window_right = 0;
	ui = new_view(&o, &utf8_style);
	s = sim_schedule(ui_sim(ui));
	ck_assert(schedule_skipped(s, 7, 0) && !schedule_skipped(s, 7, 5) &&
	    schedule_skipped(s, 2, 3) && !schedule_skipped(s, 2, 2));
	ck_assert_int_eq(s->jbegin[7], 5);
	press(ui, 'm');
	s = sim_schedule(ui_sim(ui));
	ck_assert(schedule_skipped(s, 7, 0) && !schedule_skipped(s, 2, 3) &&
	    schedule_skipped(s, 2, 5));
	press(ui, 'm');
	s = sim_schedule(ui_sim(ui));
	ck_assert(!UI_PROBLEM(ui)->causal && !schedule_skipped(s, 7, 0) &&
	    s->nsteps == (long)s->tr * s->tc);
	press(ui, 'm');
	ck_assert(UI_PROBLEM(ui)->causal);
	ui_free(ui);
}
END_TEST

/* b cycles the bugs; forget-old-denominator brings the normalized
 * convention with it, and c away from it drops the bug. */
START_TEST(test_bug_cycle)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	static const enum online_bug order[] = { BUG_NUMERATOR_ONLY,
	    BUG_DENOMINATOR_ONLY, BUG_NO_RESCALE, BUG_FORGET_OLD_DENOMINATOR,
	    BUG_NONE };
	struct ui_grid g = { 0 };
	size_t i;

	for (i = 0; i < sizeof order / sizeof order[0]; i++) {
		press(ui, 'b');
		ck_assert_int_eq(sim_rule(ui_sim(ui))->bug, order[i]);
		if (order[i] == BUG_FORGET_OLD_DENOMINATOR) {
			ck_assert_int_eq(sim_rule(ui_sim(ui))->convention,
			    CONV_NORMALIZED);
			ck_assert_msg(strstr(ui->msg, "normalized") != NULL, "'%s'",
			    ui->msg);
			draw(ui, &g, 80, 24);
			ck_assert(screen_has(&g, "bug forget-old-denominator"));
			press(ui, 'c');
			ck_assert_int_eq(sim_rule(ui_sim(ui))->bug, BUG_NONE);
			ck_assert_int_eq(sim_rule(ui_sim(ui))->convention,
			    CONV_UNNORMALIZED);
			press(ui, 'c');
			press(ui, 'b');
			press(ui, 'b');
			press(ui, 'b');
			press(ui, 'b');
		}
	}
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/*
 * b walks the whole bug table (online_rule.h) in its order, each row's
 * name in the message and the header, a row that needs a convention
 * switching to it; b's help names every row.  The view names no mode
 * itself, so a new row passes this with no change to src/ui.
 */
START_TEST(test_bug_table_in_view)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	const struct online_bug_mode *m;
	const struct ui_keydef *d;
	struct ui_grid g = { 0 };
	char help[600], word[80];
	int i, want;

	for (d = ui_keydefs; d->keys != NULL && strcmp(d->keys, "b") != 0; d++)
		;
	ck_assert_ptr_nonnull(d->keys);
	ui_keys_help_of(d, help, sizeof help);
	for (i = 1; i <= ONLINE_BUGS; i++) {
		want = i % ONLINE_BUGS;
		m = online_bug_mode((enum online_bug)want);
		ck_assert_msg(strstr(help, m->name) != NULL, "b's help '%s' lacks "
		    "%s", help, m->name);
		press(ui, 'b');
		ck_assert_int_eq((int)sim_rule(ui_sim(ui))->bug, want);
		ck_assert_msg(strstr(ui->msg, m->name) != NULL, "'%s'", ui->msg);
		if (m->needs != ONLINE_ANY_CONVENTION)
			ck_assert_int_eq((int)sim_rule(ui_sim(ui))->convention,
			    m->needs);
		draw(ui, &g, 100, 30);
		snprintf(word, sizeof word, "bug %s", m->name);
		ck_assert_msg(want == BUG_NONE || screen_has(&g, word), "no '%s'",
		    word);
	}
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* Options for the seed's scalar example (S = 1 2 1001 1002, V = 2 -1 4
 * 8, tiles of 1 x 2), the problem whose max rises from 2 to 1002. */
static void
seed_options(struct options *o)
{
	static const float sc[4] = { 1, 2, 1001, 1002 }, v[4] = { 2, -1, 4, 8 };

	options_init(o);
	o->spec.s.data = sc;
	o->spec.s.rows = 1;
	o->spec.s.cols = 4;
	o->spec.v.data = v;
	o->spec.v.rows = 4;
	o->spec.v.cols = 1;
	o->tiling.br = 1;
	o->tiling.bc = 2;
}

/*
 * The equations show what the table says the bug does: for every row and
 * each convention it has, at the update of a tile where the max rose, a
 * "not rescaled" or "no l" note exactly where its flags turn a factor
 * off.
 */

START_TEST(test_eq_follows_bug_table)
{
	const struct online_bug_mode *m;
	struct online_bug_flags f;
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	int b, c, unnorm;

	for (b = 0; b < ONLINE_BUGS; b++)
		for (c = 0; c < ONLINE_CONVENTIONS; c++) {
			m = online_bug_mode((enum online_bug)b);
			if (m->needs != ONLINE_ANY_CONVENTION && m->needs != c)
				continue;
			f = m->flags;
			unnorm = c == CONV_UNNORMALIZED;
			seed_options(&o);
			o.rule.bug = (enum online_bug)b;
			o.rule.convention = (enum online_convention)c;
			o.convention_set = 1;
			ui = new_view(&o, &utf8_style);
			ck_assert_int_eq(ui_seek(ui, 1, SIM_PHASE_UPDATE), 0);
			draw(ui, &g, 100, 40);
			ck_assert_msg(screen_has(&g, "(bug: \u2113 not rescaled)") ==
			    !f.scale_l, "%s %d: l's note", m->name, c);
			ck_assert_msg(screen_has(&g, "(bug: u not rescaled)") ==
			    (unnorm && !f.scale_acc), "%s %d: u's note", m->name, c);
			ck_assert_msg(screen_has(&g, "(bug: o not rescaled)") ==
			    (!unnorm && f.keep_l && !f.scale_acc), "%s %d: o's note",
			    m->name, c);
			ck_assert_msg(screen_has(&g, "(bug: no \u2113)") ==
			    (!unnorm && !f.keep_l), "%s %d: old l's note", m->name, c);
			ui_free(ui);
		}
	ui_grid_free(&g);
}
END_TEST

/* A pane with state, counting its hooks' calls; its init fails while
 * fake_fail is set. */
static int fake_inits, fake_frees, fake_fail;

static void *
fake_init(struct ui *ui)
{
	(void)ui;
	if (fake_fail)
		return NULL;
	fake_inits++;
	return calloc(1, 16);
}

static void
fake_free(void *data)
{
	fake_frees++;
	free(data);
}

static const struct ui_pane fake_pane = {
	.name = "fake",
	.init = fake_init,
	.free = fake_free,
};

/* A pane's state is made once, on first asking (again after a failed
 * init), kept across rebuilds and freed once with the view; a pane
 * without hooks has none. */
START_TEST(test_pane_state)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	static const struct ui_pane stateless = { .name = "stateless" };
	struct ui_grid g = { 0 };
	void *first;

	fake_inits = fake_frees = 0;
	fake_fail = 1;
	ck_assert_ptr_null(ui_pane_data(ui, &fake_pane));
	fake_fail = 0;
	first = ui_pane_data(ui, &fake_pane);
	ck_assert_ptr_nonnull(first);
	ck_assert_int_eq(fake_inits, 1);
	draw(ui, &g, 100, 40);
	press(ui, 'o');		/* a rebuild */
	ck_assert_ptr_eq(ui_pane_data(ui, &fake_pane), first);
	ck_assert_int_eq(fake_inits, 1);
	ck_assert_ptr_null(ui_pane_data(ui, &stateless));
	ck_assert_int_eq(fake_frees, 0);
	ui_free(ui);
	ck_assert_int_eq(fake_frees, 1);
	ui_grid_free(&g);
}
END_TEST

/* The form: bad values are refused with the command line's message and
 * change nothing; good ones rebuild. */
START_TEST(test_form)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };

	press(ui, 'e');
	ck_assert(ui->form.open);
	press(ui, UI_KEY_BACKSPACE);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "0");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_str_eq(ui->form.error, "--tq must be a positive integer, not '0'");
	ck_assert_int_eq(sim_steps(ui_sim(ui)), 16);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "--tq must be a positive integer, not '0'"));

	press(ui, UI_KEY_BACKSPACE);
	type(ui, "8");
	press(ui, UI_KEY_UP);		/* wraps to the last field */
	while (ui->form.field > UI_FORM_INPUT)
		press(ui, UI_KEY_UP);	/* up to the input */
	ck_assert_int_eq(ui->form.field, UI_FORM_INPUT);
	while (ui->form.value[UI_FORM_INPUT][0] != '\0')
		press(ui, UI_KEY_BACKSPACE);
	type(ui, "files");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_msg(strstr(ui->form.error, "'files' needs") != NULL, "'%s'",
	    ui->form.error);
	while (ui->form.value[UI_FORM_INPUT][0] != '\0')
		press(ui, UI_KEY_BACKSPACE);
	type(ui, "spike");
	press(ui, UI_KEY_ENTER);
	ck_assert(!ui->form.open);
	ck_assert_int_eq(UI_PROBLEM(ui)->tq, 8);
	ck_assert_int_eq(sim_steps(ui_sim(ui)), 2 * 4);
	ck_assert_str_eq(UI_PROBLEM(ui)->source, "spike, seed 1");

	/* Esc leaves everything as it was. */
	press(ui, 'e');
	type(ui, "99");
	press(ui, UI_KEY_ESC);
	ck_assert(!ui->form.open);
	ck_assert_int_eq(UI_PROBLEM(ui)->tq, 8);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

START_TEST(test_goto_prompt_and_gpu)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	const struct sim_view *v;
	char err[100];

	/* Steps are typed as shown, from 1. */
	type(ui, "g13");
	press(ui, UI_KEY_ENTER);
	ck_assert_int_eq(sim_view(ui_sim(ui))->step, 12);
	type(ui, "g1,2");
	press(ui, UI_KEY_ENTER);
	v = sim_view(ui_sim(ui));
	ck_assert_int_eq(v->tile.i, 1);
	ck_assert_int_eq(v->tile.j, 2);
	type(ui, "g99");
	press(ui, UI_KEY_ENTER);
	ck_assert_str_eq(ui->msg, "go to: step 99 is not in 1-16");
	type(ui, "g0");
	press(ui, UI_KEY_ENTER);
	ck_assert_str_eq(ui->msg, "go to: step 0 is not in 1-16");
	press(ui, UI_KEY_END);
	ck_assert_int_eq(sim_view(ui_sim(ui))->step, 15);
	press(ui, UI_KEY_HOME);
	ck_assert_int_eq(sim_view(ui_sim(ui))->step, 0);

	press(ui, 'G');
	if (gpu_available(NULL, 0, err, sizeof err) != 0) {
		ck_assert_int_eq(ui->gpu, 0);
		ck_assert_msg(strstr(ui->msg, err) != NULL, "'%s' lacks '%s'",
		    ui->msg, err);
	}
	ui_free(ui);
}
END_TEST

/* The history pane: m after each earlier tile of the row block equals
 * the sim's at those steps, and drawing it leaves the sim where it was. */
START_TEST(test_history)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct sim_view *v = sim_view(ui_sim(ui));
	float want[4], before[4], s_before[16];
	struct traffic t_before;
	char buf[512], text[64];
	struct ui_rect r;
	int j;

	for (j = 0; j < 4; j++) {
		ui_seek(ui, 4 + j, SIM_PHASE_LAST);	/* row block 1 */
		want[j] = v->m_new[2];
	}
	ui_seek(ui, 7, SIM_PHASE_MAX);
	ui_set_focus(ui, 2);
	memcpy(before, v->m_new, sizeof before);
	memcpy(s_before, v->s, sizeof s_before);
	t_before = v->traffic;
	draw(ui, &g, 120, 44);
	r = ui->slot[UI_SLOT_HISTORY];
	ck_assert_int_ge(r.h, 3);
	/* Drawing it left the view alone: position, numbers, counters. */
	ck_assert_int_eq(v->step, 7);
	ck_assert_int_eq(v->phase, SIM_PHASE_MAX);
	ck_assert(memcmp(before, v->m_new, sizeof before) == 0);
	ck_assert(memcmp(s_before, v->s, sizeof s_before) == 0);
	ck_assert(memcmp(&t_before, &v->traffic, sizeof t_before) == 0);
	ck_assert(screen_has(&g, "row 6 after each tile"));
	span(&g, r.x, r.y + 2, r.w, buf, sizeof buf);
	for (j = 0; j < 4; j++) {
		ui_num(ui, want[j], 7, text, sizeof text);
		ck_assert_msg(strstr(buf, text) != NULL, "history '%s' lacks %s",
		    buf, text);
	}
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The seed's scalar example as a scores problem: the view shows the max
 * jumping to 1002, alpha = e^(2 - 1002) = 0 and O = 6.92423. */
START_TEST(test_seed_example)
{
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };

	seed_options(&o);
	ui = new_view(&o, &utf8_style);
	press(ui, 'n');
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "S 1\u00d74 given"));
	ck_assert(screen_has(&g, "= max(2, 1002) = 1002"));
	ck_assert(screen_has(&g, "= e^(2 - 1002) = 0"));
	ck_assert(screen_has(&g, "6.9242"));
	ck_assert(screen_has(&g, "phase finalize 7/7"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* A click on the heatmap goes to the tile under it; on a row of the
 * state pane, focuses it. */
START_TEST(test_mouse)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct sim_view *v = sim_view(ui_sim(ui));
	struct ui_key k = { UI_KEY_MOUSE, 0, 0 };
	const struct ui_heat_geom *hg;

	draw(ui, &g, 80, 24);
	/* Entry (9, 14): tile (2, 3). */
	hg = ui_pane_heat_last(ui);
	k.x = hg->x0 + 14 * hg->sx;
	k.y = hg->y0 + 9 * hg->sy;
	ui_handle_key(ui, &k);
	ck_assert_int_eq(v->tile.i, 2);
	ck_assert_int_eq(v->tile.j, 3);
	draw(ui, &g, 80, 24);
	k.x = ui->slot[UI_SLOT_STATE].x + 3;
	k.y = ui->slot[UI_SLOT_STATE].y + 2 + 2;
	ui_handle_key(ui, &k);
	ck_assert_int_eq(ui_focus(ui), 2);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "the update for row 10,"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The FLOPs the counters pane shows ("FLOPs N of M"). */
static long
shown_flops(const struct ui_grid *g)
{
	char line[2048], *at;
	int y;

	for (y = 0; y < g->h; y++) {
		at = strstr(ui_grid_line(g, y, line, sizeof line), "FLOPs ");
		if (at != NULL)
			return strtol(at + 6, NULL, 10);
	}
	ck_abort_msg("no FLOPs on the screen");
	return -1;
}

/*
 * The counters count what has been done at the phase shown: at step 1,
 * phase load, nothing is multiplied yet and only Q_0, K_0, V_0 are read
 * (3 x 4 x 4 x 4 B); Q K^T's 2 R C d FLOPs come at scores, P V's at
 * update.  At each step's last phase the screen shows what the trace
 * writes for the step (the view sim_run gives its callback).
 */
static int
record_flops(const struct sim_view *v, void *ctx)
{
	((uint64_t *)ctx)[v->step] = v->traffic.flops;
	return 0;
}

START_TEST(test_counters_per_phase)
{
	static const long want[6] = { 0, 128, 128, 128, 128, 256 };
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct sim_view *v = sim_view(ui_sim(ui));
	uint64_t trace[16];
	struct sim *probe;
	char err[200];
	long k;
	int ph;

	probe = sim_new(UI_PROBLEM(ui), &ui->opts.tiling, &ui->opts.rule, err,
	    sizeof err);
	ck_assert(probe != NULL && sim_steps(probe) == 16);
	ck_assert(sim_run(probe, record_flops, trace, NULL, NULL) == 0);
	sim_free(probe);

	ui_seek(ui, 0, SIM_PHASE_LOAD);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "phase load 1/6"));
	ck_assert(screen_has(&g, "FLOPs 0 of 4096"));
	ck_assert(screen_has(&g, "HBM so far 192 B of"));
	for (ph = 0; ph < 6; ph++) {
		draw(ui, &g, 80, 24);
		ck_assert_int_eq((int)v->phase, ph);
		ck_assert_msg(shown_flops(&g) == want[ph], "step 1 phase %s: FLOPs "
		    "%ld, not %ld", timeline_forward.phase_name(ph), shown_flops(&g), want[ph]);
		press(ui, '.');
	}
	/* Every step: at load the FLOPs of the steps before, at the last
	 * phase the trace's. */
	for (k = 1; k < 16; k++) {
		ui_seek(ui, k, SIM_PHASE_LOAD);
		draw(ui, &g, 80, 24);
		ck_assert_int_eq(shown_flops(&g), (long)trace[k - 1]);
		ui_seek(ui, k, SIM_PHASE_LAST);
		draw(ui, &g, 80, 24);
		ck_assert_int_eq(shown_flops(&g), (long)trace[k]);
	}
	ck_assert(screen_has(&g, "FLOPs 4096 of 4096"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The number right after text on the screen or, with last set, after
 * the last '=' of the line that holds it. */
static double
number_after(const struct ui_grid *g, const char *text, int last)
{
	char line[2048], *p;
	int y;

	for (y = 0; y < g->h; y++) {
		p = strstr(ui_grid_line(g, y, line, sizeof line), text);
		if (p != NULL)
			return strtod(last ? strrchr(line, '=') + 1 :
			    p + strlen(text), NULL);
	}
	ck_abort_msg("no '%s' on the screen", text);
	return 0;
}

/* The seed's example under numerator-only: the view's O is 3.462, and
 * the correct run's 6.924 stands beside it with the error. */
START_TEST(test_bug_shows_correct)
{
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };

	seed_options(&o);
	o.rule.bug = BUG_NUMERATOR_ONLY;
	ui = new_view(&o, &utf8_style);
	press(ui, 'n');
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "phase finalize 7/7"));
	/* The numbers have 3 or 4 digits, as the lines fit. */
	ck_assert_double_eq_tol(number_after(&g, "O  = u/\u2113", 1), 3.462,
	    0.01);
	ck_assert_double_eq_tol(number_after(&g, "correct run: O[0] = ", 0),
	    6.924, 0.01);
	ck_assert_double_eq_tol(number_after(&g, "O is off by ", 0), 3.462,
	    0.01);
	/* Before the row finishes: the correct l' and u' beside. */
	press(ui, ',');
	draw(ui, &g, 80, 24);
	ck_assert_double_eq_tol(number_after(&g, "correct run: \u2113\u2032 = ",
	    0), 1.368, 0.01);
	ck_assert_double_eq_tol(number_after(&g, "u\u2032[0] = ", 0), 9.472,
	    0.01);
	/* Without the bug, no correct run is shown: it is this one. */
	press(ui, 'b');
	press(ui, 'b');
	press(ui, 'b');
	press(ui, 'b');
	ck_assert_int_eq(sim_rule(ui_sim(ui))->bug, BUG_NONE);
	draw(ui, &g, 80, 24);
	ck_assert(!screen_has(&g, "correct run"));
	ck_assert_ptr_null(ui_correct(ui));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The rescale phase shows alpha l and alpha u as numbers. */
START_TEST(test_rescale_products)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct sim_view *v = sim_view(ui_sim(ui));
	char want[64], num[32];

	ui_seek(ui, 1, SIM_PHASE_RESCALE);
	draw(ui, &g, 80, 24);
	ui_num_prec(ui, v->alpha[0] * v->l_old[0], 6, 4, num, sizeof num);
	snprintf(want, sizeof want, "\u03b1\u2113");
	ck_assert(screen_has(&g, want));
	snprintf(want, sizeof want, "= %s", num);
	ck_assert_msg(screen_has(&g, want), "no '%s'", want);
	ui_num_prec(ui, v->alpha[0] * v->acc_old[0], 6, 4, num, sizeof num);
	snprintf(want, sizeof want, "= %s", num);
	ck_assert_msg(screen_has(&g, want), "no '%s'", want);
	ck_assert(screen_has(&g, "\u03b1u"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* Plays u to its stop at full speed (real time: play is timed). */
static void
play_out(struct ui *ui)
{
	double end = util_now() + 20.0;
	int wait;

	ui->play.speed = 10;
	while (ui->play.on && util_now() < end)
		ui_idle(ui, util_now() + 0.001, &wait);
	ck_assert_msg(!ui->play.on, "u still playing after 20 s");
}

/* The first step after `from` where row `row`'s max rises over a max it
 * had, from stepping a separate sim as the trace does. */
static long
first_rise(const struct problem *p, const struct options *o, long from,
    int row)
{
	const struct sim_view *v;
	struct sim *sim;
	char err[200];
	long k;

	sim = sim_new(p, &o->tiling, &o->rule, err, sizeof err);
	ck_assert(sim != NULL);
	v = sim_view(sim);
	for (k = from + 1; k < sim_steps(sim); k++) {
		sim_seek(sim, k, SIM_PHASE_LAST);
		if (row >= v->tile.r0 && row < v->tile.r1 &&
		    isfinite(v->m_old[row - v->tile.r0]) &&
		    v->m_new[row - v->tile.r0] > v->m_old[row - v->tile.r0])
			break;
	}
	sim_free(sim);
	return k;
}

START_TEST(test_play_until)
{
	struct options o;
	struct ui *ui;
	const struct sim_view *v;
	long want;
	int i;

	/* fa1 order: the steps of row block 1 are not consecutive. */
	options_init(&o);
	o.tiling.order = ORDER_FA1;
	ui = new_view(&o, &utf8_style);
	v = sim_view(ui_sim(ui));
	ui_seek(ui, 1, SIM_PHASE_LAST);		/* tile (1,0) */
	ui_set_focus(ui, 2);			/* row 6 */
	for (i = 0; i < 3; i++) {
		want = first_rise(UI_PROBLEM(ui), &ui->opts, v->step, 6);
		press(ui, 'u');
		play_out(ui);
		ck_assert_int_eq(v->step, want);
		ck_assert_int_eq(v->phase, SIM_PHASE_MAX);
		ck_assert_int_eq(v->tile.r0 + ui_focus(ui), 6);
		ck_assert_msg(strstr(ui->msg, "u: row 6's max rises at tile") !=
		    NULL, "'%s'", ui->msg);
	}
	/* Tile (1,3) is the last: the row finishes there, then nothing
	 * more happens to it. */
	ck_assert_int_eq(v->tile.j, 3);
	press(ui, 'u');
	play_out(ui);
	ck_assert_int_eq(v->tile.j, 3);
	ck_assert_int_eq(v->phase, SIM_PHASE_FINALIZE);
	ck_assert_msg(strstr(ui->msg, "u: row 6 finishes at tile (1,3), its "
	    "last") != NULL, "'%s'", ui->msg);
	press(ui, 'u');
	ck_assert(!ui->play.on);
	ck_assert_msg(strstr(ui->msg, "nothing more happens to row 6") != NULL,
	    "'%s'", ui->msg);
	ui_free(ui);

	/* Causal: row block 1 ends at tile (1,1); the mask skips the rest. */
	options_init(&o);
	o.spec.causal = 1;
	ui = new_view(&o, &utf8_style);
	v = sim_view(ui_sim(ui));
	ui_seek(ui, 1, SIM_PHASE_LOAD);		/* tile (1,0) */
	press(ui, 'u');
	play_out(ui);
	ck_assert_int_eq(v->tile.i, 1);
	ck_assert_int_eq(v->tile.j, 1);
	ck_assert_int_eq(v->phase, SIM_PHASE_MAX);
	press(ui, 'u');
	play_out(ui);
	ck_assert_int_eq(v->tile.j, 1);
	ck_assert_int_eq(v->phase, SIM_PHASE_FINALIZE);
	ck_assert_msg(strstr(ui->msg, "u: row 4 finishes at tile (1,1), its "
	    "last; the mask skips (1,2)-(1,3)") != NULL, "'%s'", ui->msg);
	ui_free(ui);
}
END_TEST

/* Behind "terminal too small" keys wait (q still quits); once the view
 * shows again they work. */
START_TEST(test_keys_wait_while_too_small)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	struct ui_key q = { 'q', 0, 0 };
	int w, h;

	ui_min_size(ui, &w, &h);
	draw(ui, &g, w, h - 1);
	ck_assert(screen_has(&g, "terminal too small"));
	press(ui, 'n');
	press(ui, 'e');
	press(ui, UI_KEY_END);
	ck_assert_int_eq(sim_view(ui_sim(ui))->step, 0);
	ck_assert(!ui->form.open);
	ck_assert(ui_handle_key(ui, &q) & UI_QUIT);
	draw(ui, &g, w, h);
	press(ui, 'n');
	ck_assert_int_eq(sim_view(ui_sim(ui))->step, 1);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The note fits any size: whole from 10x5 (wrapped), shortened below,
 * never outside its rectangle, nothing at all in an empty one. */
START_TEST(test_too_small_fits)
{
	struct ui_grid g = { 0 };
	char err[100], line[256], all[512];
	int w, h, x, y;

	for (w = 1; w <= 40; w++)
		for (h = 1; h <= 8; h++) {
			ck_assert(ui_grid_resize(&g, w + 2, h + 2, err,
			    sizeof err) == 0);
			ui_draw_too_small(&g, (struct ui_rect){ 1, 1, w, h }, 73, 17);
			all[0] = '\0';
			for (y = 0; y < h + 2; y++)
				for (x = 0; x < w + 2; x++)
					if ((x == 0 || y == 0 || x == w + 1 ||
					    y == h + 1) && g.cells[y * g.w + x].ch != ' ')
						ck_abort_msg("%dx%d: drawn outside", w, h);
			for (y = 1; y <= h; y++) {
				ui_grid_line(&g, y, line, sizeof line);
				for (x = 0; line[x] == ' '; x++)
					;
				if (line[x] != '\0')
					snprintf(all + strlen(all), sizeof all - strlen(all),
					    "%s%s", all[0] ? " " : "", line + x);
			}
			if (w >= 10 && h >= 5)
				ck_assert_msg(strcmp(all, "terminal too small (need "
				    "73x17)") == 0, "%dx%d: '%s'", w, h, all);
			else
				ck_assert_msg(all[0] != '\0', "%dx%d: nothing", w, h);
		}
	ck_assert(ui_grid_resize(&g, 1, 1, err, sizeof err) == 0);
	ui_draw_too_small(&g, (struct ui_rect){ 0, 0, 1, 1 }, 73, 17);
	ck_assert_str_eq(ui_grid_line(&g, 0, line, sizeof line), "!");
	ui_draw_too_small(&g, (struct ui_rect){ 0, 0, 0, 0 }, 73, 17);
	ui_grid_free(&g);
}
END_TEST

/* At 80x24 the help does not fit: it scrolls, and every key is on one
 * of its pages; a key that does not scroll closes it. */
START_TEST(test_help_scrolls)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct ui_keydef *d;
	char word[32];
	int found, pages;

	press(ui, '?');
	draw(ui, &g, 80, 24);
	ck_assert_int_gt(ui->help_lines, ui->help_page);
	ck_assert(screen_has(&g, "lines 1-"));
	ck_assert(!screen_has(&g, "Esc closes this screen"));
	for (d = ui_keydefs; d->keys != NULL; d++) {
		snprintf(word, sizeof word, "%.20s", d->help);
		ui->help_first = 0;
		draw(ui, &g, 80, 24);
		for (found = 0, pages = 0; pages < 10; pages++) {
			if (screen_has(&g, d->keys) && screen_has(&g, word)) {
				found = 1;
				break;
			}
			press(ui, UI_KEY_PGDN);
			draw(ui, &g, 80, 24);
		}
		ck_assert_msg(found, "help never shows '%s'", d->keys);
	}
	press(ui, UI_KEY_END);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "Esc closes this screen"));
	press(ui, UI_KEY_UP);
	press(ui, UI_KEY_HOME);
	ck_assert(ui->help);
	ck_assert_int_eq(ui->help_first, 0);
	press(ui, 'x');
	ck_assert(!ui->help);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/*
 * The keys the manual page documents in VIEW's Keys section: each
 * entry's tag (the .B line after a .TP) split at ", ", roff's \- read
 * as '-': ".B space, n, Right" documents three keys.  Fills keys (max
 * of them, each a string) and returns how many.
 */
static int
doc_view_keys(const char *doc, char keys[][32], int max)
{
	const char *at = strstr(doc, "\n.SS Keys\n"), *end, *nl, *p, *e;
	char tag[256];
	size_t t;
	int n = 0;

	ck_assert_msg(at != NULL, "flashstep.1 has no Keys section");
	at++;
	end = strstr(at + 1, "\n.S");	/* the next .SS or .SH */
	ck_assert_ptr_nonnull(end);
	for (; at < end && (nl = strchr(at, '\n')) != NULL; at = nl + 1) {
		if (strncmp(at, ".TP", 3) != 0 || strncmp(nl + 1, ".B ", 3) != 0)
			continue;
		for (p = nl + 4, t = 0; *p != '\n' && *p != '\0' &&
		    t + 1 < sizeof tag; p++)
			if (*p == '\\' && p[1] == '-')
				tag[t++] = '-', p++;
			else if (*p != '"')
				tag[t++] = *p;
		tag[t] = '\0';
		/* ", " parts keys: ".B ," is the key ',' itself. */
		for (p = tag; *p != '\0' && n < max; n++) {
			e = strstr(p, ", ");
			t = e != NULL ? (size_t)(e - p) : strlen(p);
			snprintf(keys[n], sizeof keys[n], "%.*s", (int)t, p);
			p += e != NULL ? t + 2 : t;
		}
		nl = strchr(nl + 1, '\n');
		ck_assert_ptr_nonnull(nl);
	}
	return n;
}

/* Every key of the table is in the help screen, and each key the help
 * names is a key entry of the manual page's Keys section (not just a
 * word somewhere in the page: "q" or "Up" would always be). */
START_TEST(test_help_and_doc_list_every_key)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct ui_keydef *d;
	const char *top = getenv("top_srcdir");
	char path[1024], *doc, word[32], keys[100][32];
	const char *p, *e;
	FILE *f;
	long n;
	int nkeys, i, found;

	press(ui, '?');
	draw(ui, &g, 100, 44);	/* the whole help, unscrolled */
	snprintf(path, sizeof path, "%s/doc/flashstep.1", top ? top : ".");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	/* the whole page, however long it grows */
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 100);
	rewind(f);
	doc = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq((long)fread(doc, 1, (size_t)n, f), n);
	fclose(f);
	nkeys = doc_view_keys(doc, keys, 100);
	ck_assert_int_gt(nkeys, 20);
	for (d = ui_keydefs; d->keys != NULL; d++) {
		ck_assert_msg(screen_has(&g, d->keys), "help lacks '%s'", d->keys);
		/* Long texts wrap: their first words are on one line. */
		snprintf(word, sizeof word, "%.20s", d->help);
		ck_assert_msg(screen_has(&g, word), "help lacks '%s'", d->help);
		for (p = d->keys; *p != '\0'; p = *e ? e + 1 : e) {
			e = strchr(p, ' ');
			if (e == NULL)
				e = p + strlen(p);
			snprintf(word, sizeof word, "%.*s", (int)(e - p), p);
			for (i = 0, found = 0; i < nkeys && !found; i++)
				found = strcmp(keys[i], word) == 0;
			ck_assert_msg(found, "flashstep.1's Keys section has no entry "
			    "for the key '%s' (help: '%s')", word, d->keys);
		}
	}
	/* The help's last line names Esc, the one key outside the table. */
	press(ui, UI_KEY_END);
	draw(ui, &g, 100, 44);
	ck_assert(screen_has(&g, "Esc closes this screen"));
	for (i = 0, found = 0; i < nkeys && !found; i++)
		found = strcmp(keys[i], "Esc") == 0;
	ck_assert_msg(found, "flashstep.1's Keys section has no entry for Esc");
	press(ui, 'x');
	ck_assert(!ui->help);
	free(doc);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The API's promises to other commands: drawing stays inside the given
 * rectangle, hidden parts make room. */
START_TEST(test_draw_in_rect)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	struct ui_rect r = { 30, 3, 60, 20 };
	char err[100];
	int x, y, w, h;

	ck_assert(ui_grid_resize(&g, 100, 30, err, sizeof err) == 0);
	ui_set_hidden(ui, UI_HIDE_HEATMAP | UI_HIDE_KEYBAR);
	ui_min_size(ui, &w, &h);
	ck_assert_int_le(w, 60);
	ui_draw(ui, &g, r);
	for (y = 0; y < g.h; y++)
		for (x = 0; x < g.w; x++)
			if (x < r.x || x >= r.x + r.w || y < r.y || y >= r.y + r.h)
				ck_assert_msg(g.cells[y * g.w + x].ch == ' ',
				    "drawn outside at (%d,%d)", x, y);
	ck_assert(screen_has(&g, "running state"));
	ck_assert(!screen_has(&g, "q quit"));
	ck_assert(!screen_has(&g, "S 16"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The number before glyph in a pane's title line ("+3↓": 3), 0 when the
 * title has no such mark. */
static int
cut_count(const struct ui_grid *g, struct ui_rect r, const char *glyph)
{
	char buf[1024], *p, *q;

	span(g, r.x, r.y, r.w, buf, sizeof buf);
	for (p = buf; (p = strchr(p, '+')) != NULL; p++) {
		long n = strtol(p + 1, &q, 10);

		if (q > p + 1 && strncmp(q, glyph, strlen(glyph)) == 0)
			return (int)n;
	}
	return 0;
}

/* Lines of a pane from its line y0 down that show a row (not blank). */
static int
rows_shown(const struct ui_grid *g, struct ui_rect r, int y0)
{
	char buf[1024];
	int y, n = 0;

	for (y = r.y + y0; y < r.y + r.h; y++)
		n += span(g, r.x, y, r.w, buf, sizeof buf)[0] != '\0';
	return n;
}

/* Times text occurs in line y of a pane. */
static int
count_in_line(const struct ui_grid *g, struct ui_rect r, int y,
    const char *text)
{
	char buf[1024], *p;
	int n = 0;

	span(g, r.x, r.y + y, r.w, buf, sizeof buf);
	for (p = buf; (p = strstr(p, text)) != NULL; p += strlen(text))
		n++;
	return n;
}

/*
 * At 80x24 the backward's panes cannot show every row, key and entry of
 * a 4x4 tile with d = 4: each says on its title line how many it left
 * out ("+N↓" rows, "+N→" entries), and the shown and the counted add up
 * to the tile's.  Also in ASCII ("+Nv", "+N->").
 */
START_TEST(test_cuts_marked)
{
	static const struct ui_style *const styles[] = { &utf8_style,
	    &ascii_style };
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	const struct backward_view *v;
	struct ui_rect r;
	const char *down, *right;
	size_t s;

	for (s = 0; s < 2; s++) {
		options_init(&o);
		o.backward = 1;
		ui = new_view(&o, styles[s]);
		down = s == 0 ? "\u2193" : "v";
		right = s == 0 ? "\u2192" : "->";
		press(ui, UI_KEY_END);
		ck_assert_int_eq(ui_kind(ui), TIMELINE_BACKWARD);
		draw(ui, &g, 80, 24);
		v = ui_bwd_view(ui);
		ck_assert_int_eq(v->rows, 4);
		ck_assert_int_eq(v->cols, 4);
		/* the tile: rows below its heading */
		r = ui->slot[UI_SLOT_TILE];
		ck_assert_msg(rows_shown(&g, r, 2) < v->rows, "the tile shows "
		    "every row at 80x24: nothing to mark");
		ck_assert_int_eq(rows_shown(&g, r, 2) + cut_count(&g, r, down),
		    v->rows);
		/* the query rows, and dQ's entries */
		r = ui->slot[UI_SLOT_STATE];
		ck_assert_int_eq(rows_shown(&g, r, 2) + cut_count(&g, r, down),
		    v->rows);
		ck_assert_int_eq(count_in_line(&g, r, 1, "[") - 1 +
		    cut_count(&g, r, right), v->d);
		/* the key block: keys, and dV's and dK's entries */
		r = ui->slot[UI_SLOT_KEYS];
		ck_assert_int_eq(rows_shown(&g, r, 2) + cut_count(&g, r, down),
		    v->cols);
		ck_assert_int_eq(count_in_line(&g, r, 1, "[") +
		    cut_count(&g, r, right), v->d + v->dv);
		ui_free(ui);
	}
	/* the history of a row block of 32 tiles: the tiles shown and the
	 * ones counted make the row block's */
	options_init(&o);
	o.spec.tk = 128;
	ui = new_view(&o, &utf8_style);
	ck_assert_int_eq(ui_seek(ui, 20, -1), 0);
	draw(ui, &g, 100, 40);
	r = ui->slot[UI_SLOT_HISTORY];
	ck_assert_int_gt(r.h, 3);
	{
		char line[1024], *p, *save = NULL;
		int shown = 0;

		span(&g, r.x, r.y + 1, r.w, line, sizeof line);
		for (p = strtok_r(line, " ", &save); p != NULL;
		    p = strtok_r(NULL, " ", &save))
			shown++;
		shown--;	/* the "j" label */
		ck_assert_int_lt(shown, sim_schedule(ui_sim(ui))->tc);
		ck_assert_int_eq(shown + cut_count(&g, r, "\u2192"),
		    sim_schedule(ui_sim(ui))->tc);
	}
	ui_free(ui);
	ui_grid_free(&g);
}
END_TEST

static struct ui *split_view(int backward, int splits, enum merge_form form);

/* The backward after split-KV, the largest stack, fits 80x24 with a
 * lesson's narration above it: the runner hides the key bar and keeps
 * 6 lines (TTY_NARRATION_LINES in lesson_tty.c) for the narration. */
START_TEST(test_fits_under_narration)
{
	struct ui *ui = split_view(1, 2, MERGE_MLU);
	int w, h;

	ui_set_hidden(ui, UI_HIDE_KEYBAR);
	ui_min_size(ui, &w, &h);
	ck_assert_int_le(w, 80);
	ck_assert_int_le(h + 6, 24);
	ui_free(ui);
}
END_TEST

/* A status line longer than the screen is cut at a word break and ends
 * in an ellipsis, in UTF-8 and ASCII; one that fits is whole. */
START_TEST(test_status_cut_at_word)
{
	static const char msg[] = "merge order tree: pairs, then pairs of "
	    "pairs, then the pairs of those pairs (3 merges a row block) and "
	    "more words";
	struct ui *ui;
	struct ui_grid g = { 0 };
	struct ui_rect r;
	char line[1024];
	size_t n;
	int s;

	for (s = 0; s < 2; s++) {
		const char *ell = s == 0 ? "\u2026" : "...";

		ui = new_view(NULL, s == 0 ? &utf8_style : &ascii_style);
		ui_message(ui, UI_ROLE_MESSAGE, "%s", msg);
		draw(ui, &g, 80, 24);
		r = ui->slot[UI_SLOT_STATUS];
		span(&g, r.x, r.y, r.w, line, sizeof line);
		n = strlen(line);
		ck_assert_msg(n > strlen(ell) && strcmp(line + n - strlen(ell),
		    ell) == 0, "no ellipsis: '%s'", line);
		n -= strlen(ell);
		line[n] = '\0';
		ck_assert_msg(strncmp(msg, line, n) == 0 && msg[n] == ' ',
		    "not cut at a word break: '%s'", line);
		ui_message(ui, UI_ROLE_MESSAGE, "short");
		draw(ui, &g, 80, 24);
		ck_assert_str_eq(span(&g, r.x, r.y, r.w, line, sizeof line),
		    "short");
		ui_free(ui);
	}
	ui_grid_free(&g);
}
END_TEST

/* A progress callback that records what it saw and stops at stop_at. */
struct progress_log {
	long calls, last_done, last_total, stop_at;
	int backwards;		/* done went down */
	char what[200];
};

static int
progress_record(void *ctx, const char *what, long done, long total)
{
	struct progress_log *l = ctx;

	if (total > 0) {
		if (done < l->last_done)
			l->backwards = 1;
		l->last_done = done;
		l->last_total = total;
	}
	l->calls++;
	snprintf(l->what, sizeof l->what, "%s", what);
	return l->stop_at > 0 && done >= l->stop_at;
}

/*
 * The timeline's build reports its progress: every forward step and
 * merge, done rising to the total (the forward's steps and the
 * combine's), and the timeline it builds is the one built without; a
 * callback that says stop stops it (-1, "stopped", nothing built).
 */
START_TEST(test_build_progress)
{
	struct options o;
	struct problem p;
	struct sim *sim;
	struct fulltimeline a, b;
	struct fulltimeline_progress pr;
	struct progress_log log;
	char err[300];
	size_t i, n;
	int splits;

	for (splits = 1; splits <= 3; splits += 2) {
		options_init(&o);
		o.spec.tq = 11;
		o.spec.tk = 9;
		o.spec.d = 3;
		o.tiling.br = 3;
		o.tiling.bc = 2;
		o.backward = 1;
		o.split.splits = splits;
		ck_assert_msg(problem_build(&o.spec, &p, err, sizeof err) == 0, "%s",
		    err);
		sim = sim_new_split(&p, &o.tiling, &o.split, &o.rule, err, sizeof err);
		ck_assert_msg(sim != NULL, "%s", err);
		ck_assert(fulltimeline_build(&o, &p, sim, &a, err, sizeof err) == 0);
		memset(&log, 0, sizeof log);
		pr.fn = progress_record;
		pr.ctx = &log;
		ck_assert_msg(fulltimeline_build_progress(&o, &p, sim, &b, &pr, err,
		    sizeof err) == 0, "%s", err);
		ck_assert_int_eq(log.last_total, sim_steps(sim) +
		    (b.comb != NULL ? combine_steps(b.comb) : 0));
		ck_assert_int_eq(log.last_done, log.last_total);
		ck_assert(!log.backwards);
		ck_assert_int_ge(log.calls, log.last_total);
		n = (size_t)p.tq * (size_t)p.dv;
		for (i = 0; i < n; i++)
			ck_assert(a.o[i] == b.o[i]);
		ck_assert_int_eq(timeline_steps(a.tl), timeline_steps(b.tl));
		fulltimeline_close(&b);
		/* stopped half way */
		memset(&log, 0, sizeof log);
		log.stop_at = sim_steps(sim) / 2;
		ck_assert_int_eq(fulltimeline_build_progress(&o, &p, sim, &b, &pr,
		    err, sizeof err), -1);
		ck_assert_msg(strstr(err, "stopped") != NULL, "%s", err);
		ck_assert_int_eq(log.last_done, log.stop_at);
		ck_assert_ptr_null(b.tl);
		fulltimeline_close(&a);
		sim_free(sim);
		problem_free(&p);
	}
}
END_TEST

/* The busy frame: what is being built, a bar and the percentage, the
 * step count and q's meaning, in 80x24 and down to 20x8. */
START_TEST(test_busy_frame)
{
	struct ui_grid g = { 0 };
	char err[100];

	ck_assert(ui_grid_resize(&g, 80, 24, err, sizeof err) == 0);
	ui_busy_draw(&g, ui_glyphs(1), "the forward, run to its end", 37, 100,
	    12.0, "q quits");
	ck_assert(screen_has(&g, "building the timeline"));
	ck_assert(screen_has(&g, "the forward, run to its end"));
	ck_assert(screen_has(&g, " 37%"));
	ck_assert(screen_has(&g, "step 37 of 100, 12 s so far, about 20 s more"));
	ck_assert(screen_has(&g, "q quits"));
	ck_assert(ui_grid_resize(&g, 20, 8, err, sizeof err) == 0);
	ui_busy_draw(&g, ui_glyphs(0), "the forward, run to its end", 37, 100,
	    12.0, "q quits");
	ck_assert(screen_has(&g, "q quits"));
	ck_assert(screen_has(&g, "37%"));
	ui_grid_free(&g);
}
END_TEST

/*
 * A projector's layout: z zooms one pane of the stack over the whole
 * view (the heatmap hidden), the next on each press, then every pane
 * again; h hides the heatmap, so the stack starts at the left edge.
 * On a large screen the tables use the room: more digits than at 80x24.
 */
START_TEST(test_zoom_hide_and_room)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	struct ui_rect r;
	int i, n, w0, h0, w, h;
	char buf[64];

	ui_seek(ui, 1, SIM_PHASE_LAST);
	ui_min_size(ui, &w0, &h0);
	n = ui_layout_panes(ui);
	ck_assert_int_ge(n, 4);
	for (i = 1; i <= n; i++) {
		press(ui, 'z');
		ck_assert_int_eq(ui->zoom, i);
		draw(ui, &g, 120, 40);
		ck_assert_int_eq(ui->slot[UI_SLOT_HEAT].w, 0);
		snprintf(buf, sizeof buf, "zoom: the %s pane",
		    ui_layout_pane_name(ui, i - 1));
		ck_assert_msg(screen_has(&g, buf), "no '%s'", buf);
		ui_min_size(ui, &w, &h);
		ck_assert_int_lt(w, w0);
		ck_assert_int_le(h, h0);
	}
	/* the tile zoomed takes the whole width and the lines between the
	 * header and the status line */
	ui->zoom = 1;
	draw(ui, &g, 120, 40);
	r = ui->slot[UI_SLOT_TILE];
	ck_assert_int_eq(r.x, 0);
	ck_assert_int_eq(r.w, 120);
	ck_assert_int_eq(r.h, 40 - 3);
	ck_assert_int_eq(ui->slot[UI_SLOT_STATE].w, 0);
	ui->zoom = n;
	press(ui, 'z');
	ck_assert_int_eq(ui->zoom, 0);
	draw(ui, &g, 120, 40);
	ck_assert_int_gt(ui->slot[UI_SLOT_HEAT].w, 0);
	ck_assert_int_gt(ui->slot[UI_SLOT_STATE].w, 0);
	/* h */
	press(ui, 'h');
	draw(ui, &g, 120, 40);
	ck_assert_int_eq(ui->slot[UI_SLOT_HEAT].w, 0);
	ck_assert_int_eq(ui->slot[UI_SLOT_TILE].x, 0);
	ck_assert(screen_has(&g, "heatmap hidden"));
	press(ui, 'h');
	draw(ui, &g, 120, 40);
	ck_assert_int_gt(ui->slot[UI_SLOT_HEAT].w, 0);
	/* the room of a large screen: the state's m' with more digits */
	ui_num_prec(ui, sim_view(ui_sim(ui))->m_new[0], 20, 7, buf, sizeof buf);
	draw(ui, &g, 80, 24);
	ck_assert_msg(!screen_has(&g, buf), "'%s' at 80x24", buf);
	draw(ui, &g, 240, 67);
	ck_assert_msg(screen_has(&g, buf), "no '%s' at 240x67", buf);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* W: the pipeline model of the problem's head in the viewer, over the
 * view until q; refused, with the reason, where the model has no
 * kernel (d = 4). */
START_TEST(test_pipeline_key)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	struct options o;

	press(ui, 'W');
	ck_assert_ptr_null(ui->pipe);
	ck_assert_msg(strstr(ui->msg, "W: ") != NULL && strstr(ui->msg, "d") !=
	    NULL, "msg: %s", ui->msg);
	ui_free(ui);

	options_init(&o);
	o.spec.tq = o.spec.tk = 300;
	o.spec.d = o.spec.dv = 128;
	o.spec.causal = 1;
	ui = new_view(&o, &utf8_style);
	press(ui, 'W');
	ck_assert_ptr_nonnull(ui->pipe);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "pipeline: model of this head, Tq 300, Tk 300, causal"));
	ck_assert(screen_has(&g, "2 consumers, 2 stages"));
	ck_assert(screen_has(&g, "event 1 of"));
	/* The viewer's keys while it is open: n is its next event, not
	 * the view's next step. */
	press(ui, 'n');
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "event 2 of"));
	ck_assert(!(ui_handle_key(ui, &(struct ui_key){ 'q', 0, 0 }) & UI_QUIT));
	ck_assert_ptr_null(ui->pipe);
	draw(ui, &g, 80, 24);
	ck_assert(!screen_has(&g, "pipeline: model"));
	ck_assert(screen_has(&g, "step 1 of"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* 8: --dtype fp8's quantization over the view until q: the focused row
 * of Q with its codes and scale, the tensor's scales, what the rotation
 * did to the outlier; t goes on to K and V; it fits 80x24 (no line runs
 * past the screen's edge unmarked: every line ends inside it); refused
 * with the reason on a problem that is not fp8. */
START_TEST(test_fp8_key)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	struct options o;
	const struct fp8_tensor *q;
	char want[80], line[400], num[32];
	int y, row;

	press(ui, '8');
	ck_assert_ptr_null(ui->fp8);
	ck_assert_msg(strstr(ui->msg, "8: the problem is fp32, not fp8") !=
	    NULL, "msg: %s", ui->msg);
	ui_free(ui);

	options_init(&o);
	o.spec.tq = o.spec.tk = 64;
	o.spec.d = o.spec.dv = 16;
	o.tiling.br = o.tiling.bc = o.spec.br = o.spec.bc = 16;
	o.spec.dtype = DTYPE_FP8;
	o.spec.fp8.hadamard = 1;
	o.spec.input = INPUTS_OUTLIERS;
	o.spec.seed = 2;
	ui = new_view(&o, &utf8_style);
	press(ui, UI_KEY_TAB);		/* the view's row 1 */
	press(ui, '8');
	ck_assert_ptr_nonnull(ui->fp8);
	draw(ui, &g, 80, 24);
	q = &UI_PROBLEM(ui)->fp8->q;
	row = 1;
	snprintf(want, sizeof want, "fp8 e4m3: Q row 1 of 64, block 0 (rows "
	    "0-15), scale %s", ui_num(ui, q->scale[0], 9, num, sizeof num));
	ck_assert_msg(screen_has(&g, want), "no '%s'", want);
	ck_assert(screen_has(&g, "Q's 4 scales:"));
	ck_assert(screen_has(&g, "the rotation: Q's largest |entry|, "));
	/* Entry 0 of row 1: its code in hex, its stored value. */
	snprintf(want, sizeof want, "0x%02x", q->code[(size_t)row * q->cols]);
	ck_assert_msg(screen_has(&g, want), "no code %s", want);
	ck_assert(screen_has(&g, "entries 0-14 of 16 (Left, Right)"));
	for (y = 0; y < 24; y++)
		ck_assert_msg(ui_grid_width(ui_grid_line(&g, y, line,
		    sizeof line)) <= 80, "line %d: %s", y, line);
	press(ui, UI_KEY_RIGHT);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "entries 15-15 of 16"));
	/* n is the screen's next row, not the view's next step. */
	press(ui, 'n');
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "Q row 2 of 64"));
	press(ui, 't');
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "fp8 e4m3: K row 2 of 64"));
	press(ui, 't');
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "V's largest |entry| is "));
	ck_assert(screen_has(&g, "rotated (only Q and K are)"));
	ck_assert(!(ui_handle_key(ui, &(struct ui_key){ 'q', 0, 0 }) & UI_QUIT));
	ck_assert_ptr_null(ui->fp8);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "step 1 of"));
	ck_assert(!screen_has(&g, "fp8 e4m3:"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The roofline figure: the roofs where log-log axes put them, the
 * ridges marked, a prefill shape right of the tensor ridge and a
 * decode shape left of it, equal decades equally wide, in 80 x 24. */
/* Where ch is in the plot (not its labels): grid cells. */
static int
roof_find(const struct ui_grid *g, char ch, int *x, int *y)
{
	int i, j;

	for (j = UI_ROOFLINE_PLOT_Y; j < UI_ROOFLINE_PLOT_Y + UI_ROOFLINE_PLOT_H;
	    j++)
		for (i = UI_ROOFLINE_PLOT_X; i < UI_ROOFLINE_PLOT_X +
		    UI_ROOFLINE_PLOT_W; i++)
			if (g->cells[(size_t)j * g->w + i].ch == (uint32_t)ch) {
				*x = i;
				*y = j;
				return 1;
			}
	return 0;
}

static uint32_t
roof_at(const struct ui_grid *g, int x, int y)
{
	return g->cells[(size_t)(UI_ROOFLINE_PLOT_Y + y) * g->w +
	    UI_ROOFLINE_PLOT_X + x].ch;
}

START_TEST(test_roofline_figure)
{
	const struct roofline_machine *m = &roofline_h200;
	struct roofline_shape pre = { ROOFLINE_TILED, 8, 16, 16, 4096, 4096, 64,
	    DTYPE_FP16, 128, 64, 0 };
	struct roofline_shape dec = { ROOFLINE_TILED, 64, 32, 8, 1, 8192, 128,
	    DTYPE_FP16, 4, 128, 1 };
	struct roofline_count c;
	struct ui_roofline_point pt[5];
	struct ui_grid g = { 0 };
	char err[200], line[400];
	int i, x, y, ridge, ridge32, n, xs[3];
	double in;

	ck_assert_int_le(UI_ROOFLINE_W, 80);
	ck_assert_int_le(UI_ROOFLINE_H, 24);
	ck_assert(roofline_count(&pre, &c, err, sizeof err) == 0);
	in = (double)c.flops / (double)c.hbm_bytes;
	pt[0] = (struct ui_roofline_point){ in, 0.5 * roofline_roof(m->tensor,
	    m->hbm, in), 'P', 0 };
	ck_assert(roofline_count(&dec, &c, err, sizeof err) == 0);
	in = (double)c.flops / (double)c.hbm_bytes;
	pt[1] = (struct ui_roofline_point){ in, 0.5 * roofline_roof(m->tensor,
	    m->hbm, in), 'D', 0 };
	/* Three decades of intensity at one speed, under every roof. */
	for (i = 0; i < 3; i++)
		pt[2 + i] = (struct ui_roofline_point){ pow(10, i), 2e11,
		    (char)('a' + i), 0 };
	ck_assert(ui_grid_resize(&g, 80, 24, err, sizeof err) == 0);
	ui_roofline_draw(&g, 0, 0, m, pt, 5);
	for (y = 0; y < 24; y++)
		ck_assert_msg(ui_grid_width(ui_grid_line(&g, y, line,
		    sizeof line)) <= UI_ROOFLINE_W, "line %d: %s", y, line);
	ck_assert(strstr(ui_grid_line(&g, 1, line, sizeof line),
	    ": the ridges (206, 14)") != NULL);
	/* The ridges: on the axis, a ':' at 10^-1 .. 10^4 on a log scale
	 * of PLOT_W columns, the tensor's at 989 / 4.8 FLOPs a byte. */
	ridge = (int)lround((log10(989.0 / 4.8) + 1) / 5 *
	    (UI_ROOFLINE_PLOT_W - 1));
	ridge32 = (int)lround((log10(67.0 / 4.8) + 1) / 5 *
	    (UI_ROOFLINE_PLOT_W - 1));
	for (x = n = 0; x < UI_ROOFLINE_PLOT_W; x++)
		if (roof_at(&g, x, UI_ROOFLINE_PLOT_H - 1) == ':')
			n++;
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(roof_at(&g, ridge, UI_ROOFLINE_PLOT_H - 1), ':');
	ck_assert_int_eq(roof_at(&g, ridge32, UI_ROOFLINE_PLOT_H - 1), ':');
	/* The tensor roof, 989 T on the top row (10^15 over four decades):
	 * flat right of its ridge, and nowhere left of it (the knee's own
	 * column may be either). */
	for (x = 0; x < UI_ROOFLINE_PLOT_W; x++)
		if (x > ridge)
			ck_assert_msg(roof_at(&g, x, 0) == '=', "column %d", x);
		else if (x < ridge)
			ck_assert_msg(roof_at(&g, x, 0) != '=', "column %d", x);
	/* fp32's, 67 T: row round((log10(67e12) - 11) / 4 * 14) = 10 up. */
	ck_assert_int_eq(roof_at(&g, UI_ROOFLINE_PLOT_W - 1,
	    UI_ROOFLINE_PLOT_H - 1 - 10), '-');
	/* Bandwidth's at 1 FLOP a byte: 4.8 T, row round(5.88) = 6 up. */
	ck_assert_int_eq(roof_at(&g, (int)lround(1.0 / 5 *
	    (UI_ROOFLINE_PLOT_W - 1)), UI_ROOFLINE_PLOT_H - 1 - 6), '/');
	/* Prefill is bound by compute, decode by bandwidth. */
	ck_assert(roof_find(&g, 'P', &x, &y));
	ck_assert_int_gt(x - UI_ROOFLINE_PLOT_X, ridge);
	ck_assert(roof_find(&g, 'D', &x, &y));
	ck_assert_int_lt(x - UI_ROOFLINE_PLOT_X, ridge32);
	/* Log: each decade PLOT_W / 5 columns wide. */
	for (i = 0; i < 3; i++) {
		ck_assert_msg(roof_find(&g, (char)('a' + i), &xs[i], &y),
		    "10^%d FLOPs a byte is not drawn", i);
		ck_assert_int_eq(y, UI_ROOFLINE_PLOT_Y + UI_ROOFLINE_PLOT_H - 1 - 1);
	}
	ck_assert_int_ge(xs[1] - xs[0], 11);
	ck_assert_int_le(xs[1] - xs[0], 12);
	ck_assert_int_ge(xs[2] - xs[1], 11);
	ck_assert_int_le(xs[2] - xs[1], 12);
	ui_grid_free(&g);
}
END_TEST

/* R: the roofline over the view, the head's two points on it, q back. */
START_TEST(test_roof_key)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	char line[400];
	int y, x;

	press(ui, 'R');
	ck_assert(ui->roof);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "FLOP/s against FLOPs per HBM byte"));
	ck_assert(screen_has(&g, "This head (Tq="));
	ck_assert(screen_has(&g, "q returns."));
	ck_assert(roof_find(&g, 'h', &x, &y));
	ck_assert_int_lt(y, UI_ROOFLINE_PLOT_Y + UI_ROOFLINE_PLOT_H);
	for (y = 0; y < 24; y++)
		ck_assert_msg(ui_grid_width(ui_grid_line(&g, y, line,
		    sizeof line)) <= 80, "line %d: %s", y, line);
	/* n waits: it is not the view's next step. */
	press(ui, 'n');
	ck_assert(ui->roof);
	ck_assert(!(ui_handle_key(ui, &(struct ui_key){ 'q', 0, 0 }) & UI_QUIT));
	ck_assert(!ui->roof);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "step 1 of"));
	ck_assert(!screen_has(&g, "FLOP/s against"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

START_TEST(test_grid_text)
{
	struct ui_grid g = { 0 };
	char err[100], buf[200];
	int n;

	ck_assert(ui_grid_resize(&g, 10, 3, err, sizeof err) == 0);
	/* Malformed UTF-8 shows as '?', control characters as spaces. */
	n = ui_grid_text(&g, 0, 0, -1, UI_ROLE_NORMAL, "a\xff\xc3(b\tc\xe2\x86\x92");
	ck_assert_int_eq(n, 8);
	ck_assert_str_eq(ui_grid_line(&g, 0, buf, sizeof buf), "a?" "?(b c\u2192");
	ui_grid_clip(&g, (struct ui_rect){ 2, 1, 3, 1 });
	ui_grid_text(&g, 0, 1, -1, UI_ROLE_NORMAL, "0123456789");
	ui_grid_text(&g, 0, 2, -1, UI_ROLE_NORMAL, "0123456789");
	ck_assert_str_eq(ui_grid_line(&g, 1, buf, sizeof buf), "  234");
	ck_assert_str_eq(ui_grid_line(&g, 2, buf, sizeof buf), "");
	ui_grid_unclip(&g);
	ui_grid_clear(&g, (struct ui_rect){ 0, 0, 10, 3 }, UI_ROLE_NORMAL);
	n = ui_grid_wrap(&g, (struct ui_rect){ 0, 1, 6, 2 }, UI_ROLE_NORMAL,
	    "ab cd efgh ij");
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(ui_grid_line(&g, 1, buf, sizeof buf), "ab cd");
	ck_assert_str_eq(ui_grid_line(&g, 2, buf, sizeof buf), "efgh");
	ui_grid_free(&g);
}
END_TEST

/* Thousands of random keys, clicks and sizes (fixed seed): no crash, no
 * sanitizer report, and the position always valid. */
START_TEST(test_random_keys)
{
	static const int keys[] = { ' ', 'n', 'p', '.', ',', 'g', 'r', '+', '-',
	    'c', 'b', 'o', 'm', 'e', 'G', '?', 'q', 'x', '0', '1', '7', ',', 'u',
	    UI_KEY_TAB, UI_KEY_BTAB, UI_KEY_UP, UI_KEY_DOWN, UI_KEY_LEFT,
	    UI_KEY_RIGHT, UI_KEY_HOME, UI_KEY_END, UI_KEY_ENTER, UI_KEY_ESC,
	    UI_KEY_BACKSPACE, UI_KEY_PGUP, UI_KEY_MOUSE, UI_KEY_RESIZE };
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	struct inputs_rng rng;
	struct ui_key k;
	int i, w = 80, h = 24, wait;

	inputs_rng_seed(&rng, 7);
	for (i = 0; i < 4000; i++) {
		k.code = keys[inputs_rng_next(&rng) % (sizeof keys / sizeof keys[0])];
		k.x = (int)(inputs_rng_next(&rng) % 100);
		k.y = (int)(inputs_rng_next(&rng) % 30);
		if (k.code == UI_KEY_RESIZE) {
			w = 40 + (int)(inputs_rng_next(&rng) % 100);
			h = 10 + (int)(inputs_rng_next(&rng) % 40);
		}
		ui_handle_key(ui, &k);
		ui_idle(ui, util_now() + 0.001, &wait);
		draw(ui, &g, w, h);
		ck_assert_int_ge(sim_view(ui_sim(ui))->step, 0);
		ck_assert_int_lt(sim_view(ui_sim(ui))->step, sim_steps(ui_sim(ui)));
		ck_assert_int_lt(ui_focus(ui), sim_view(ui_sim(ui))->rows);
	}
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* ---- the timeline: the combine and the backward in the view ---- */

/* A view of a problem with a causal mask, Tq > Tk (rows that see no
 * key), ragged tiles, and what the caller turns on. */
static struct ui *
split_view(int backward, int splits, enum merge_form form)
{
	struct options o;

	options_init(&o);
	o.spec.tq = 11;
	o.spec.tk = 9;
	o.spec.d = 3;
	o.spec.dv = 2;
	o.spec.causal = 1;
	o.spec.input = INPUTS_NORMAL;
	o.tiling.br = 3;
	o.tiling.bc = 2;
	o.backward = backward;
	o.split.splits = splits;
	o.split.partials = form;
	return new_view(&o, &utf8_style);
}

/* The words of line y of a pane (y from the pane's top), the marker and
 * arrow glyphs and separators blanked, "-∞" spelt "-inf"; returns how
 * many (at most max). */
static int
pane_words(const struct ui_grid *g, struct ui_rect r, int y, char word[][40],
    int max)
{
	char buf[1024], *p, *save = NULL;
	int n = 0;

	span(g, r.x, r.y + y, r.w, buf, sizeof buf);
	blank_out(buf, "\u2192");
	blank_out(buf, "\u25b6");
	blank_out(buf, "\u2502");
	while ((p = strstr(buf, "-\u221e")) != NULL)
		memcpy(p, "-inf", 4);
	for (p = strtok_r(buf, " ", &save); p != NULL && n < max;
	    p = strtok_r(NULL, " ", &save))
		snprintf(word[n++], sizeof word[0], "%s", p);
	return n;
}

/* A number as the panes print it in width columns. */
static const char *
shown(const struct ui *ui, float x, int width, char *buf)
{
	ui_num(ui, x, width, buf, 40);
	while (strstr(buf, "-\u221e") != NULL)
		snprintf(buf, 40, "-inf");
	return buf;
}

/* Words a and b are the same number as printed. */
#define ck_assert_shown(ui, word, x, width, what) do { \
	char want_[40]; \
	shown((ui), (x), (width), want_); \
	ck_assert_msg(strcmp((word), want_) == 0, "%s: shown '%s', engine %s " \
	    "(%.9g)", (what), (word), want_, (double)(x)); \
} while (0)

/* The backward's panes at the current position against its view: the
 * tile's matrix for the phase and its lse or D column, the query rows'
 * lse, D and dQ, the key block's dV and dK (the entries that fit). */
static void
check_backward_panes(struct ui *ui, const struct ui_grid *g)
{
	const struct backward_view *v = ui_bwd_view(ui);
	struct ui_rect rt = ui->slot[UI_SLOT_TILE], rr = ui->slot[UI_SLOT_STATE];
	struct ui_rect rk = ui->slot[UI_SLOT_KEYS];
	const float *m = v->phase >= BWD_PHASE_DS ? v->ds :
	    v->phase >= BWD_PHASE_DP ? v->dp : v->phase >= BWD_PHASE_P ? v->p : v->s;
	const float *side = v->phase >= BWD_PHASE_DP ? v->dsum : v->lse;
	char w[40][40], head[40][40], what[80];
	int n, nh, row, c, e, ncol;

	/* the tile: "k0 k1 ... D", then rows */
	if (v->phase > BWD_PHASE_LOAD) {
		nh = pane_words(g, rt, 1, head, 40);
		ncol = nh - 1;		/* the last is lse or D */
		ck_assert_str_eq(head[ncol], v->phase >= BWD_PHASE_DP ? "D" : "lse");
		for (row = ui->tile_first; row < v->rows && row - ui->tile_first <
		    rt.h - 2; row++) {
			n = pane_words(g, rt, 2 + row - ui->tile_first, w, 40);
			ck_assert_int_eq(n, ncol + 2);
			ck_assert_int_eq(atoi(w[0]), v->tile.r0 + row);
			for (c = 0; c < ncol; c++) {
				int key = atoi(head[c] + 1) - v->tile.c0;
				float x = m[(size_t)row * v->cols + key];
				snprintf(what, sizeof what, "step %ld phase %d tile row %d "
				    "key %d", v->step, v->phase, row, key);
				if (isinf(v->s[(size_t)row * v->cols + key]))
					ck_assert_str_eq(w[1 + c], m == v->s ? "-inf" : "0");
				else
					ck_assert_shown(ui, w[1 + c], x, 7, what);
			}
			ck_assert_shown(ui, w[n - 1], side[row], 7, "lse or D");
		}
	}
	/* the query rows: label, lse, D, dQ[0], then dQ' entries */
	nh = pane_words(g, rr, 1, head, 40);
	for (row = ui->state_first; row < v->rows && row - ui->state_first <
	    rr.h - 2; row++) {
		n = pane_words(g, rr, 2 + row - ui->state_first, w, 40);
		ck_assert_int_eq(atoi(w[0]), v->tile.r0 + row);
		ck_assert_shown(ui, w[1], v->lse[row], 7, "lse");
		ck_assert_shown(ui, w[2], v->dsum[row], 7, "D");
		if (v->d == 0)
			continue;
		ck_assert_shown(ui, w[3], v->dq_old[(size_t)row * v->d], 7, "dQ");
		ck_assert_int_eq(n, nh + 1);
		for (e = 0; e + 4 < n; e++) {
			snprintf(what, sizeof what, "step %ld phase %d dQ[%d][%d]",
			    v->step, v->phase, row, e);
			if (v->phase < BWD_PHASE_DQ)
				ck_assert_str_eq(w[4 + e], "?");
			else
				ck_assert_shown(ui, w[4 + e], v->dq_new[(size_t)row * v->d +
				    e], 7, what);
		}
	}
	/* the key block: label, dV entries, dK entries */
	nh = pane_words(g, rk, 1, head, 40);
	for (c = ui->keys_first; c < v->cols && c - ui->keys_first < rk.h - 2;
	    c++) {
		n = pane_words(g, rk, 2 + c - ui->keys_first, w, 40);
		ck_assert_int_eq(n, nh + 1);
		snprintf(what, sizeof what, "k%d", v->tile.c0 + c);
		ck_assert_str_eq(w[0], what);
		for (e = 0; e < nh; e++) {
			int dv = strncmp(head[e], "dV", 2) == 0;
			int x = atoi(strchr(head[e], '[') + 1);
			const float *arr = dv ? (v->phase >= BWD_PHASE_DV ? v->dv_new :
			    v->dv_old) : (v->phase >= BWD_PHASE_DK ? v->dk_new :
			    v->dk_old);
			snprintf(what, sizeof what, "step %ld phase %d %.12s of key %d",
			    v->step, v->phase, head[e], c);
			ck_assert_shown(ui, w[1 + e], arr[(size_t)c * (dv ? v->dv :
			    v->d) + x], 7, what);
		}
	}
}

/* The equation line holding text ends in x, as the equations print it
 * (4 significant digits, or 3 when a line is short of room). */
static void
eq_shows(const struct ui *ui, const struct ui_grid *g, const char *text,
    float x)
{
	char line[2048], a[40], b[40], got[40];
	const char *eq;
	int y;

	struct ui_rect r = ui->slot[UI_SLOT_EQ];
	char next[1024];

	for (y = r.y; y < r.y + r.h; y++)
		if (strstr(span(g, r.x, y, r.w, line, sizeof line), text) != NULL)
			break;
	ck_assert_msg(y < r.y + r.h, "no '%s' in the equations", text);
	/* A line too long goes on below, from its last " = ". */
	if (y + 1 < r.y + r.h) {
		span(g, r.x, y + 1, r.w, next, sizeof next);
		if (next[strspn(next, " ")] == '=')
			snprintf(line, sizeof line, "%s", next);
	}
	eq = strrchr(line, '=');
	ck_assert(eq != NULL && sscanf(eq + 1, "%39s", got) == 1);
	ui_num_prec(ui, x, UI_EQ_NW, 4, a, sizeof a);
	ui_num_prec(ui, x, UI_EQ_NW, 3, b, sizeof b);
	ck_assert_msg(strcmp(got, a) == 0 || strcmp(got, b) == 0, "'%s' ends in "
	    "'%s', the engine's %s", text, got, a);
}

/* The FLOPs after "FLOPs " on the screen (exact below 10000). */
static long
screen_flops(const struct ui_grid *g)
{
	char line[2048], *at;
	int y;

	for (y = 0; y < g->h; y++)
		if ((at = strstr(ui_grid_line(g, y, line, sizeof line), "FLOPs ")))
			return strtol(at + 6, NULL, 10);
	return -1;
}

static int
record_bwd_flops(const struct backward_view *v, void *ctx)
{
	((uint64_t *)ctx)[v->step] = v->traffic.flops;
	return 0;
}

/*
 * Every backward step at every phase: the header names the segment and
 * counts from 1, the panes show the engine's numbers, the equations'
 * dQ line ends in the focused row's new dQ, and the counters are the
 * trace's at each step's last phase (backward_run's view) and the step
 * before's at its load.
 */
START_TEST(test_backward_panes)
{
	struct ui *ui = split_view(1, 0, MERGE_MLU);
	struct ui_grid g = { 0 };
	const struct backward_view *v;
	struct timeline_pos pos;
	struct backward *probe;
	struct backward_input in;
	uint64_t *trace;
	char want[80], err[200];
	long k, F, B;
	int ph;

	F = sim_steps(ui_sim(ui));
	B = backward_steps(ui->line.bwd);
	ck_assert_int_eq(timeline_steps(ui->line.tl), F + B);
	trace = calloc((size_t)B, sizeof *trace);
	in.o = ui->line.o;
	in.lse = ui->line.lse;
	in.m = ui->line.m;
	in.dout = ui->line.dout;
	probe = backward_new(UI_PROBLEM(ui), &ui->opts.tiling, &in, BWD_BUG_NONE,
	    err, sizeof err);
	ck_assert(probe != NULL && trace != NULL);
	ck_assert(backward_run(probe, record_bwd_flops, trace, NULL) == 0);
	backward_free(probe);

	for (k = 0; k < B; k++) {
		for (ph = 0; ph < BWD_PHASES; ph++) {
			ck_assert_int_eq(ui_seek(ui, F + k, ph), 0);
			ui_set_focus(ui, (int)(k % 3));
			ui->focus_key = (int)(k % 2);
			ui_clamp_focus(ui);
			draw(ui, &g, 100, 40);
			v = ui_bwd_view(ui);
			ui_position(ui, &pos);
			ck_assert_int_eq(ui_kind(ui), TIMELINE_BACKWARD);
			ck_assert_int_eq(pos.global, F + k);
			snprintf(want, sizeof want, "backward step %ld of %ld", k + 1, B);
			ck_assert_msg(screen_has(&g, want), "no '%s'", want);
			snprintf(want, sizeof want, "phase %s %d/%d",
			    backward_phase_name(v->phase), v->phase + 1, v->nphases);
			ck_assert_msg(screen_has(&g, want), "no '%s'", want);
			check_backward_panes(ui, &g);
			if (v->phase >= BWD_PHASE_DQ && v->d > 0)
				eq_shows(ui, &g, "dQ\u2032 = dQ + scale",
				    v->dq_new[(size_t)ui_focus(ui) * v->d]);
			if (v->phase >= BWD_PHASE_DV)
				eq_shows(ui, &g, "dV\u2032 = dV +",
				    v->dv_new[(size_t)ui->focus_key * v->dv]);
			if ((int)v->phase == v->nphases - 1)
				ck_assert_int_eq(screen_flops(&g), (long)trace[k]);
			if (v->phase == BWD_PHASE_LOAD)
				ck_assert_int_eq(screen_flops(&g), k > 0 ?
				    (long)trace[k - 1] : 0);
			if ((int)v->phase == v->nphases - 1)
				break;
		}
	}
	free(trace);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/*
 * The combine's panes at every merge and phase, in both forms, with
 * empty partials (causal, Tq > Tk, 4 ranges of at most 5 key blocks):
 * each range's partial as the forward left it (or "empty"), the merge's
 * operands, max, weights, l and u[0] (O and lse once finalized), and the
 * equations' u (or o) line ending in the merged u[0].
 */
static void
check_combine_panes(struct ui *ui, const struct ui_grid *g)
{
	const struct combine_view *v = ui_comb_view(ui);
	const struct sim_partials *pt = sim_partials(ui_sim(ui));
	struct ui_rect rp = ui->slot[UI_SLOT_TILE], rm = ui->slot[UI_SLOT_STATE];
	int olse = pt->form == MERGE_OLSE, nv = olse ? 2 : 3, fin, empties = 0;
	char w[40][40], head[40][40], what[80];
	int n, nh, row, at, k, s0, ns;
	float want[8];

	/* partials: "P0 keys 0-1 | P1 ..." then a line per row */
	nh = pane_words(g, rp, 1, head, 40);
	ck_assert_int_gt(nh, 0);
	s0 = atoi(head[0] + 1);
	for (ns = 0, k = 0; k < nh; k++)
		ns += head[k][0] == 'P';
	for (row = ui->tile_first; row < v->rows && row - ui->tile_first <
	    rp.h - 3; row++) {
		n = pane_words(g, rp, 3 + row - ui->tile_first, w, 40);
		ck_assert_int_eq(atoi(w[0]), v->r0 + row);
		for (at = 1, k = s0; k < s0 + ns; k++) {
			size_t e = (size_t)(v->r0 + row) * pt->splits + (size_t)k;
			snprintf(what, sizeof what, "merge %ld row %d partial %d",
			    v->step, row, k);
			if ((olse ? pt->lse[e] : pt->m[e]) == -INFINITY) {
				ck_assert_msg(strcmp(w[at], "empty") == 0, "%s: '%s'",
				    what, w[at]);
				at++;
				empties++;
				continue;
			}
			ck_assert_shown(ui, w[at], olse ? pt->lse[e] : pt->m[e], 6, what);
			ck_assert_shown(ui, w[at + 1], olse ? pt->o[e * pt->dv] :
			    pt->l[e], 6, what);
			if (!olse)
				ck_assert_shown(ui, w[at + 2], pt->u[e * pt->dv], 6, what);
			at += nv;
		}
		ck_assert_int_eq(at, n);
	}
	/* the merge: m_a m_b m w_a w_b (l) u[0], or ... O[0] lse */
	fin = v->phase >= COMBINE_PHASE_FINALIZE;
	for (row = ui->state_first; row < v->rows && row - ui->state_first <
	    rm.h - 2; row++) {
		size_t a = (size_t)row * v->dv;

		n = pane_words(g, rm, 2 + row - ui->state_first, w, 40);
		k = 0;
		want[k++] = v->m_a[row];
		want[k++] = v->m_b[row];
		want[k++] = v->m[row];
		want[k++] = v->w_a[row];
		want[k++] = v->w_b[row];
		if (fin) {
			want[k++] = v->o[a];
			want[k++] = v->lse[row];
		} else {
			if (!olse)
				want[k++] = v->l[row];
			want[k++] = v->u[a];
		}
		ck_assert_int_eq(n, k + 1);
		for (at = 0; at < k; at++) {
			int later = (at == 2 && v->phase < (olse ?
			    COMBINE_PHASE_WEIGHTS : COMBINE_PHASE_MAX)) ||
			    ((at == 3 || at == 4) && v->phase < COMBINE_PHASE_WEIGHTS) ||
			    (at >= 5 && !fin && v->phase < COMBINE_PHASE_UPDATE);
			snprintf(what, sizeof what, "merge %ld phase %d row %d column "
			    "%d", v->step, v->phase, row, at);
			if (later)
				ck_assert_str_eq(w[1 + at], "?");
			else
				ck_assert_shown(ui, w[1 + at], want[at], 6, what);
		}
	}
	if (v->phase >= COMBINE_PHASE_UPDATE)
		eq_shows(ui, g, olse ? "o  = w_a o_a" : "u  = w_a u_a",
		    v->u[(size_t)ui_focus(ui) * v->dv]);
	(void)empties;
}

START_TEST(test_combine_panes)
{
	struct ui *ui;
	struct ui_grid g = { 0 };
	const struct combine_view *v;
	struct timeline_pos pos;
	char want[80];
	long k, F, C;
	int ph, form, empty = 0;

	for (form = 0; form < 2; form++) {
		ui = split_view(1, 4, (enum merge_form)form);
		F = sim_steps(ui_sim(ui));
		C = combine_steps(ui->line.comb);
		ck_assert_int_eq(timeline_segments(ui->line.tl), 3);
		for (k = 0; k < C; k++)
			for (ph = 0; ph < COMBINE_PHASES; ph++) {
				ck_assert_int_eq(ui_seek(ui, F + k, ph), 0);
				ui_set_focus(ui, (int)(k % 3));
				draw(ui, &g, 100, 40);
				v = ui_comb_view(ui);
				ui_position(ui, &pos);
				ck_assert_int_eq(ui_kind(ui), TIMELINE_COMBINE);
				snprintf(want, sizeof want, "combine step %ld of %ld", k + 1,
				    C);
				ck_assert_msg(screen_has(&g, want), "no '%s'", want);
				check_combine_panes(ui, &g);
				empty += screen_has(&g, "empty");
				if ((int)v->phase == v->nphases - 1)
					break;
			}
		ui_free(ui);
	}
	ck_assert_int_gt(empty, 0);	/* some partials were empty */
	ui_grid_free(&g);
}
END_TEST

/*
 * O: the merge order key rebuilds the combine in the next order (ltr,
 * tree, reverse): the plan changes (3 merges a row block from the empty
 * state, then 2 pairwise), the pane says so, and the merged O stays
 * within the combine's rounding bound of the unsplit run's.
 */
START_TEST(test_merge_order_key)
{
	struct ui *ui = split_view(0, 3, MERGE_MLU);
	struct ui_grid g = { 0 };
	struct combine_bounds cb;
	struct sim *one;
	struct timeline_pos pos;
	float *o1, *lse1, *on, *lsen;
	size_t rows = 11, dv = 2, e;
	int order;
	char err[200];

	o1 = malloc(rows * dv * sizeof *o1);
	lse1 = malloc(rows * sizeof *lse1);
	on = malloc(rows * dv * sizeof *on);
	lsen = malloc(rows * sizeof *lsen);
	ck_assert(o1 && lse1 && on && lsen);
	one = sim_new(UI_PROBLEM(ui), &ui->opts.tiling, &ui->opts.rule, err,
	    sizeof err);
	ck_assert(one != NULL && sim_run(one, NULL, NULL, o1, lse1) == 0);
	sim_free(one);
	/* stand in the combine, at the first block's second merge */
	type(ui, "gc2");
	press(ui, UI_KEY_ENTER);
	ck_assert_int_eq(ui_kind(ui), TIMELINE_COMBINE);
	for (order = 0; order < 4; order++) {
		ck_assert_int_eq(ui->opts.combine.order, order % 3);
		ck_assert_int_eq(combine_merges(ui->line.comb), order % 3 ==
		    COMBINE_TREE ? 2 : 3);
		draw(ui, &g, 100, 40);
		ck_assert(screen_has(&g, combine_order_name((enum combine_order)
		    (order % 3))));
		ck_assert(screen_has(&g, order % 3 == COMBINE_TREE ?
		    "merge 2 of 2: s1 = s0 + P2" : order % 3 == COMBINE_LTR ?
		    "merge 2 of 3: s0 = s0 + P1" : "merge 2 of 3: s0 = s0 + P1"));
		/* still in the combine, where it was */
		ui_position(ui, &pos);
		ck_assert_int_eq(ui_kind(ui), TIMELINE_COMBINE);
		ck_assert_int_eq(pos.step, 1);
		combine_run(ui->line.comb, NULL, NULL, on, lsen);
		combine_bound(ui->line.comb, &cb);
		for (e = 0; e < rows * dv; e++)
			ck_assert_msg(fabsf(on[e] - o1[e]) <= cb.o, "order %s: O[%zu] "
			    "%g against unsplit %g, bound %g", combine_order_name(
			    ui->opts.combine.order), e, (double)on[e], (double)o1[e],
			    cb.o);
		for (e = 0; e < rows; e++)
			ck_assert(lsen[e] == lse1[e] || fabsf(lsen[e] - lse1[e]) <=
			    cb.lse);
		ck_assert_int_eq(ui_seek(ui, pos.global, -1), 0);
		press(ui, 'O');
		ck_assert_msg(strstr(ui->msg, "merge order") != NULL, "'%s'", ui->msg);
	}
	free(o1);
	free(lse1);
	free(on);
	free(lsen);
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The first line where two texts differ, copied into la and lb. */
static void
first_difference(const char *a, const char *b, char *la, char *lb, size_t len)
{
	size_t na, nb;

	la[0] = lb[0] = '\0';
	while (*a != '\0' || *b != '\0') {
		na = strcspn(a, "\n");
		nb = strcspn(b, "\n");
		if (na != nb || memcmp(a, b, na) != 0) {
			snprintf(la, len, "%.*s", (int)na, a);
			snprintf(lb, len, "%.*s", (int)nb, b);
			return;
		}
		a += na + (a[na] != '\0');
		b += nb + (b[nb] != '\0');
	}
}

/* The panes' text at the current position, for comparing two views. */
static void
screen_text(struct ui *ui, struct ui_grid *g, char *out, size_t len)
{
	char line[1024];
	size_t used = 0;
	int y;

	draw(ui, g, 100, 40);
	for (y = 0; y < g->h && used < len; y++)
		used += (size_t)snprintf(out + used, len - used, "%s\n",
		    ui_grid_line(g, y, line, sizeof line));
}

/*
 * From the first forward step to the last backward step with '.', and
 * back with ',': every place walked to is the place a seek there shows
 * (the same screen, character for character, in a second view that only
 * seeks), the boundaries crossed both ways; n and p cross them too.
 */
START_TEST(test_walk_equals_seek)
{
	struct ui *walk = split_view(1, 2, MERGE_OLSE);
	struct ui *seek = split_view(1, 2, MERGE_OLSE);
	struct ui_grid g = { 0 };
	struct timeline_pos pos, prev;
	char *a = malloc(1 << 16), *b = malloc(1 << 16), la[256], lb[256];
	long moves = 0, total = 0, n;
	int dir, seg_changes;

	ck_assert(a != NULL && b != NULL);
	ck_assert_int_eq(timeline_segments(walk->line.tl), 3);
	ui_seek(walk, 0, 0);
	for (dir = 1; dir >= -1; dir -= 2) {
		seg_changes = 0;
		ui_position(walk, &prev);
		do {
			ui_position(walk, &pos);
			seg_changes += pos.seg != prev.seg;
			prev = pos;
			ck_assert_int_eq(ui_seek(seek, pos.global, pos.phase), 0);
			screen_text(walk, &g, a, 1 << 16);
			screen_text(seek, &g, b, 1 << 16);
			first_difference(a, b, la, lb, sizeof la);
			ck_assert_msg(strcmp(a, b) == 0, "at step %ld phase %d the "
			    "walk shows '%s', the seek '%s'", pos.global, pos.phase,
			    la, lb);
			total++;
		} while (ui_phase(walk, dir) == 0 && ++moves);
		ck_assert_int_eq(seg_changes, 2);
	}
	ui_position(walk, &pos);
	ck_assert(pos.global == 0 && pos.phase == 0);
	/* n and p step across the segments, keeping each kind's phase */
	n = timeline_steps(walk->line.tl);
	for (moves = 0; ui_step(walk, 1) == 0; moves++)
		;
	ck_assert_int_eq(moves, n - 1);
	ui_position(walk, &pos);
	ck_assert_int_eq(pos.global, n - 1);
	ck_assert_int_eq(ui_kind(walk), TIMELINE_BACKWARD);
	for (moves = 0; ui_step(walk, -1) == 0; moves++)
		;
	ck_assert_int_eq(moves, n - 1);
	(void)total;
	free(a);
	free(b);
	ui_grid_free(&g);
	ui_free(walk);
	ui_free(seek);
}
END_TEST

/* g: a global step, a segment's step (f, c, b) and a tile of the
 * segment shown; Home and End are the timeline's ends. */
START_TEST(test_goto_segments)
{
	struct ui *ui = split_view(1, 2, MERGE_MLU);
	struct timeline_pos pos;
	long F = sim_steps(ui_sim(ui)), C = combine_steps(ui->line.comb);

	type(ui, "gb 2");
	press(ui, UI_KEY_ENTER);
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, F + C + 1);
	ck_assert_int_eq(ui_kind(ui), TIMELINE_BACKWARD);
	type(ui, "g2,1");
	press(ui, UI_KEY_ENTER);
	ck_assert_int_eq(ui_bwd_view(ui)->tile.i, 2);
	ck_assert_int_eq(ui_bwd_view(ui)->tile.j, 1);
	type(ui, "gc3");
	press(ui, UI_KEY_ENTER);
	ui_position(ui, &pos);
	ck_assert(ui_kind(ui) == TIMELINE_COMBINE && pos.step == 2);
	type(ui, "g1,0");
	press(ui, UI_KEY_ENTER);
	ck_assert_int_eq(ui_comb_view(ui)->block, 1);
	ck_assert_int_eq(ui_comb_view(ui)->merge, 0);
	type(ui, "gf99");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(strstr(ui->msg, "not a step of the forward") != NULL, "'%s'",
	    ui->msg);
	type(ui, "g5");
	press(ui, UI_KEY_ENTER);
	ui_position(ui, &pos);
	ck_assert(pos.global == 4 && ui_kind(ui) == TIMELINE_FORWARD);
	press(ui, UI_KEY_END);
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, timeline_steps(ui->line.tl) - 1);
	press(ui, UI_KEY_HOME);
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, 0);
	ui_free(ui);
	/* without a combine, c names nothing */
	ui = split_view(1, 0, MERGE_MLU);
	type(ui, "gc1");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(strstr(ui->msg, "no segment 'c'") != NULL, "'%s'", ui->msg);
	ui_free(ui);
}
END_TEST

/*
 * b in the combine and the backward cycles their own bugs, and the
 * equations show the correct rule's numbers beside the wrong ones, as the
 * forward's bug modes do: a merge that forgets to rescale b, and a
 * backward that leaves D out.
 */
START_TEST(test_bugs_beside_correct)
{
	struct ui *ui = split_view(1, 3, MERGE_MLU);
	struct ui_grid g = { 0 };
	const struct combine_view *v, *ok = NULL;
	const struct backward_view *bv, *bok;
	long F = sim_steps(ui_sim(ui)), C = combine_steps(ui->line.comb);
	char want[80], num[40];
	int r;

	/* the combine: the last merge of block 1, finalized */
	ck_assert_int_eq(ui_seek(ui, F + 5, -1), 0);
	press(ui, 'b');
	ck_assert_int_eq(ui->opts.combine.bug, MERGE_BUG_NO_RESCALE_ONE);
	ck_assert_int_eq(ui->opts.rule.bug, BUG_NONE);
	ck_assert_int_eq(ui_kind(ui), TIMELINE_COMBINE);
	v = ui_comb_view(ui);
	ck_assert(v->last && v->phase == COMBINE_PHASE_FINALIZE);
	for (r = 0; r < v->rows; r++) {
		ui_set_focus(ui, r);
		draw(ui, &g, 100, 40);
		ok = ui_correct_comb(ui);
		ck_assert_ptr_nonnull(ok);
		ck_assert(screen_has(&g, "merge bug no-rescale-one"));
		ck_assert(screen_has(&g, "(bug: b not rescaled)"));
		ui_num_prec(ui, ok->o[(size_t)r * v->dv], UI_EQ_NW, 4, num, sizeof num);
		snprintf(want, sizeof want, "correct merge: O[0] = %s", num);
		ck_assert_msg(screen_has(&g, want) || screen_has(&g, "correct merge: "
		    "O[0] = "), "no '%s'", want);
	}
	/* the bug shows: O differs from the correct merge's somewhere */
	ck_assert(fabsf(v->o[0] - ok->o[0]) > 1e-3f ||
	    fabsf(v->o[2] - ok->o[2]) > 1e-3f || fabsf(v->o[4] - ok->o[4]) > 1e-3f);

	/* the backward: no-d */
	ck_assert_int_eq(ui_seek(ui, F + C + 2, BWD_PHASE_DS), 0);
	press(ui, 'b');
	ck_assert_int_eq(ui->opts.grad_bug, BWD_BUG_NO_D);
	ck_assert_int_eq(ui->opts.combine.bug, MERGE_BUG_NO_RESCALE_ONE);
	bv = ui_bwd_view(ui);
	ck_assert(bv->phase == BWD_PHASE_DS);
	draw(ui, &g, 100, 40);
	bok = ui_correct_bwd(ui);
	ck_assert_ptr_nonnull(bok);
	ck_assert(screen_has(&g, "(bug: D left out)"));
	ck_assert(screen_has(&g, "grad bug no-d"));
	ui_num_prec(ui, bok->ds[(size_t)ui_focus(ui) * bv->cols + ui->focus_key],
	    UI_EQ_NW, 4, num, sizeof num);
	snprintf(want, sizeof want, "ds = %s", num);
	ui_num_prec(ui, bok->ds[(size_t)ui_focus(ui) * bv->cols + ui->focus_key],
	    UI_EQ_NW, 3, num, sizeof num);
	ck_assert_msg(screen_has(&g, want) || (snprintf(want, sizeof want,
	    "ds = %s", num), screen_has(&g, want)), "no correct '%s'", want);
	/* cycling on: back to none, nothing beside */
	while (ui->opts.grad_bug != BWD_BUG_NONE)
		press(ui, 'b');
	draw(ui, &g, 100, 40);
	ck_assert(!screen_has(&g, "correct backward:"));
	ck_assert_ptr_null(ui_correct_bwd(ui));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The line of the screen that holds text ("" when none), into buf. */
static const char *
screen_line_with(const struct ui_grid *g, const char *text, char *buf,
    size_t len)
{
	int y;

	for (y = 0; y < g->h; y++)
		if (strstr(ui_grid_line(g, y, buf, len), text) != NULL)
			return buf;
	buf[0] = '\0';
	return buf;
}

/* End lands on the last phase of the last step, and r plays whole
 * steps, whatever phase , left n and p at (there, every value showed as
 * "?"); p then steps back whole steps too. */
START_TEST(test_end_and_play_show_whole_steps)
{
	struct options o;
	struct ui *ui;
	struct timeline_pos pos;
	long n;
	int i, wait;

	options_init(&o);
	o.backward = 1;
	ui = new_view(&o, &utf8_style);
	n = timeline_steps(ui->line.tl);
	/* the backward's phase moved to load, and a step back there */
	ck_assert_int_eq(ui_seek(ui, n - 3, -1), 0);
	for (i = 0; i < 20; i++) {
		ui_position(ui, &pos);
		if (pos.phase == 0)
			break;
		press(ui, ',');
	}
	ck_assert_int_eq(pos.phase, 0);
	press(ui, 'n');
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, n - 2);
	ck_assert_int_eq(pos.phase, 0);
	press(ui, UI_KEY_END);
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, n - 1);
	ck_assert_int_eq(ui_bwd_view(ui)->phase, BWD_PHASE_WRITE);
	press(ui, 'p');
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, n - 2);
	ck_assert_int_eq(pos.phase, ui_bwd_view(ui)->nphases - 1);

	/* r from a step's load phase */
	press(ui, UI_KEY_HOME);
	for (i = 0; i < 20; i++)
		press(ui, ',');
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.phase, 0);
	press(ui, 'r');
	ck_assert(ui->play.on);
	ui->play.next_tick = 0;
	ui_play_tick(ui, &wait);
	ui_position(ui, &pos);
	ck_assert_int_ge(pos.global, 1);
	ck_assert_int_eq(pos.phase, sim_view(ui_sim(ui))->phase);
	ck_assert_int_ge(sim_view(ui_sim(ui))->phase, SIM_PHASE_UPDATE);
	ui_free(ui);
}
END_TEST

/* Under a gradient bug the correct backward's line holds only what the
 * phase shown has computed: p from the P phase, ds from dS, dQ from dQ,
 * dK from dK. */
START_TEST(test_correct_line_follows_phase)
{
	static const struct {
		int phase;
		const char *has[4], *not[4];
	} at[] = {
		{ BWD_PHASE_P, { "p = " }, { "ds =", "dQ", "dK" } },
		{ BWD_PHASE_DS, { "p = ", "ds = " }, { "dQ", "dK" } },
		{ BWD_PHASE_DQ, { "ds = ", "dQ\u2032[0]" }, { "dK" } },
		{ BWD_PHASE_DK, { "ds = ", "dQ\u2032[0]", "dK\u2032[0]" }, { NULL } },
	};
	struct ui *ui = split_view(1, 0, MERGE_MLU);
	struct ui_grid g = { 0 };
	long F = sim_steps(ui_sim(ui));
	char line[1024];
	size_t a, i;

	ck_assert_int_eq(ui_seek(ui, F + 2, BWD_PHASE_DS), 0);
	press(ui, 'b');
	ck_assert_int_ne(ui->opts.grad_bug, BWD_BUG_NONE);
	for (a = 0; a < sizeof at / sizeof at[0]; a++) {
		ck_assert_int_eq(ui_seek(ui, F + 2, at[a].phase), 0);
		draw(ui, &g, 120, 40);
		screen_line_with(&g, "correct backward:", line, sizeof line);
		ck_assert_msg(line[0] != '\0', "phase %d: no correct line",
		    at[a].phase);
		for (i = 0; i < 4 && at[a].has[i] != NULL; i++)
			ck_assert_msg(strstr(strstr(line, "correct backward:"),
			    at[a].has[i]) != NULL, "phase %d: no '%s' in '%s'",
			    at[a].phase, at[a].has[i], line);
		for (i = 0; i < 4 && at[a].not[i] != NULL; i++)
			ck_assert_msg(strstr(strstr(line, "correct backward:"),
			    at[a].not[i]) == NULL, "phase %d: '%s' ahead of its "
			    "phase in '%s'", at[a].phase, at[a].not[i], line);
	}
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* The e form turns the backward and the splits on and off; bad values
 * are refused with one line. */
START_TEST(test_form_timeline)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	int i;

	ck_assert_int_eq(timeline_segments(ui->line.tl), 1);
	press(ui, 'e');
	for (i = 0; i < UI_FORM_BACKWARD; i++)
		press(ui, UI_KEY_TAB);
	while (ui->form.value[UI_FORM_BACKWARD][0] != '\0')
		press(ui, UI_KEY_BACKSPACE);
	type(ui, "yes");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_str_eq(ui->form.error, "bwd: on or off, not 'yes'");
	while (ui->form.value[UI_FORM_BACKWARD][0] != '\0')
		press(ui, UI_KEY_BACKSPACE);
	type(ui, "on");
	press(ui, UI_KEY_TAB);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "3");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	ck_assert_int_eq(timeline_segments(ui->line.tl), 3);
	ck_assert(ui->opts.backward && ui->opts.split.splits == 3);
	ck_assert_msg(strstr(ui->msg, "problem rebuilt: ") != NULL, "%s", ui->msg);
	press(ui, 'e');
	for (i = 0; i < UI_FORM_SPLITS; i++)
		press(ui, UI_KEY_TAB);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "0");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_msg(strstr(ui->form.error, "--splits must be") != NULL, "%s",
	    ui->form.error);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "1");
	press(ui, UI_KEY_ENTER);
	ck_assert(!ui->form.open);
	ck_assert_int_eq(timeline_segments(ui->line.tl), 2);
	ui_free(ui);
}
END_TEST

/* Random keys over the whole timeline: no crash, the position valid. */
START_TEST(test_random_keys_timeline)
{
	static const int keys[] = { ' ', 'n', 'p', '.', ',', 'g', 'r', 'u', 'b',
	    'O', 'o', 'm', 'c', '[', ']', 'e', '?', 'x', '0', '3', 'c', 'b', 'f',
	    UI_KEY_TAB, UI_KEY_UP, UI_KEY_DOWN, UI_KEY_HOME, UI_KEY_END,
	    UI_KEY_ENTER, UI_KEY_ESC, UI_KEY_MOUSE, UI_KEY_RESIZE };
	struct ui *ui = split_view(1, 3, MERGE_OLSE);
	struct ui_grid g = { 0 };
	struct inputs_rng rng;
	struct timeline_pos pos;
	struct ui_key k;
	int i, w = 100, h = 40, wait;

	inputs_rng_seed(&rng, 11);
	for (i = 0; i < 3000; i++) {
		k.code = keys[inputs_rng_next(&rng) % (sizeof keys / sizeof keys[0])];
		k.x = (int)(inputs_rng_next(&rng) % 120);
		k.y = (int)(inputs_rng_next(&rng) % 45);
		if (k.code == UI_KEY_RESIZE) {
			w = 60 + (int)(inputs_rng_next(&rng) % 80);
			h = 20 + (int)(inputs_rng_next(&rng) % 30);
		}
		ui_handle_key(ui, &k);
		ui_idle(ui, util_now() + 0.001, &wait);
		draw(ui, &g, w, h);
		ui_position(ui, &pos);
		ck_assert_int_ge(pos.global, 0);
		ck_assert_int_lt(pos.global, timeline_steps(ui->line.tl));
		ck_assert_int_lt(ui_focus(ui), ui_rows(ui));
	}
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* ---- masks and score rules in the view ---- */

/* A view of a generated problem with the window (left, right). */
static struct ui *
window_view(int t, int tile, int left, int right)
{
	struct options o;

	options_init(&o);
	o.spec.tq = o.spec.tk = t;
	o.spec.input = INPUTS_NORMAL;
	o.spec.window_set = 1;
	o.spec.window_left = left;
	o.spec.window_right = right;
	o.tiling.br = o.tiling.bc = tile;
	return new_view(&o, &utf8_style);
}

/* Computes the whole heatmap summary (idle time does it in the view). */
static void
heat_finish(struct ui *ui)
{
	int wait;

	while (!heatmap_complete(&ui->heat))
		ui_idle(ui, util_now() + 0.01, &wait);
}

/*
 * Every screen cell of the heatmap against a count over what it covers:
 * hatched (skipped) when the schedule skips every tile under it, blank
 * (masked) when it runs one but the mask hides every entry under it,
 * else a heat level.  Counts the cells of each kind into kinds.
 */
static void
heat_cells_check(struct ui *ui, const struct ui_grid *g, int kinds[3])
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct schedule *s = sim_schedule(ui_sim(ui));
	const struct ui_heat_geom *hg = ui_pane_heat_last(ui);
	int a, b, r, c, i, j, run, seen, role;

	kinds[0] = kinds[1] = kinds[2] = 0;
	ck_assert_int_gt(hg->ny, 0);
	for (a = 0; a < hg->ny; a++)
		for (b = 0; b < hg->nx; b++) {
			run = seen = 0;
			for (r = a * hg->fy; r < (a + 1) * hg->fy && r < p->tq; r++)
				for (c = b * hg->fx; c < (b + 1) * hg->fx &&
				    c < p->tk; c++) {
					i = r / s->br;
					j = c / s->bc;
					run |= !schedule_skipped(s, i, j);
					seen |= problem_visible(p, r, c);
				}
			role = g->cells[(size_t)(hg->y0 + a * hg->sy) * g->w +
			    hg->x0 + b * hg->sx].role;
			if (!run) {
				ck_assert_msg(role == UI_ROLE_TILE_SKIPPED, "cell (%d,%d) "
				    "covers skipped tiles only, role %d", a, b, role);
				kinds[0]++;
			} else if (!seen) {
				ck_assert_msg(role == UI_ROLE_MASKED, "cell (%d,%d) "
				    "has no visible entry, role %d", a, b, role);
				kinds[1]++;
			} else {
				ck_assert_msg(role >= UI_ROLE_HEAT0 && role <
				    UI_ROLE_HEAT0 + UI_HEAT_LEVELS, "cell (%d,%d) has a "
				    "visible entry, role %d", a, b, role);
				kinds[2]++;
			}
		}
}

/* The window's band on the heatmap: skipped tiles on both sides of the
 * diagonal hatched, hidden entries of the tiles it runs blank, every
 * cell against the schedule and the mask, unpooled and pooled. */
START_TEST(test_mask_heat_window)
{
	struct ui *ui = window_view(16, 4, 3, 0);
	struct ui_grid g = { 0 };
	const struct ui_heat_geom *hg;
	int kinds[3];

	draw(ui, &g, 100, 30);
	heat_finish(ui);
	draw(ui, &g, 100, 30);
	hg = ui_pane_heat_last(ui);
	ck_assert_int_eq(hg->fy, 1);
	ck_assert_int_eq(hg->fx, 1);
	heat_cells_check(ui, &g, kinds);
	/* 7 of the 16 tiles run: 9 skipped, 3 of them left of the band. */
	ck_assert_int_eq(sim_steps(ui_sim(ui)), 7);
	ck_assert_int_eq(kinds[0], 9 * 16);
	ck_assert_int_gt(kinds[1], 0);
	ck_assert(screen_has(&g, "band: row r sees keys r-3..r"));
	ck_assert(screen_has(&g, "window (3, 0)"));
	ui_free(ui);

	/* Both sides, pooled at 80x24. */
	ui = window_view(64, 4, 5, 2);
	draw(ui, &g, 80, 24);
	heat_finish(ui);
	draw(ui, &g, 80, 24);
	hg = ui_pane_heat_last(ui);
	ck_assert(hg->fy > 1 || hg->fx > 1);
	heat_cells_check(ui, &g, kinds);
	ck_assert_int_gt(kinds[0], 0);
	ck_assert_int_gt(kinds[2], 0);
	ui_free(ui);
	ui_grid_free(&g);
}
END_TEST

/* m cycles the masks that hide: none, causal, (W, 0), (W, W), none;
 * W is the last window's left edge, else Tk / 4. */
START_TEST(test_mask_cycle)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct problem *p;

	press(ui, 'm');
	ck_assert(UI_PROBLEM(ui)->causal);
	press(ui, 'm');
	p = UI_PROBLEM(ui);
	ck_assert_int_eq(problem_mask(p, 0).left, 4);
	ck_assert_int_eq(problem_mask(p, 0).right, 0);
	ck_assert_msg(strstr(ui->msg, "window (4, 0)") != NULL, "%s", ui->msg);
	/* Row block i sees keys 4i - 4 .. 4i + 3: two tiles, one for i = 0. */
	ck_assert_int_eq(sim_steps(ui_sim(ui)), 7);
	/* The counters say what the window does to the arithmetic. */
	draw(ui, &g, 160, 40);
	ck_assert(screen_has(&g, "FLOPs grow as T (the window)"));
	press(ui, 'm');
	p = UI_PROBLEM(ui);
	ck_assert_int_eq(problem_mask(p, 0).left, 4);
	ck_assert_int_eq(problem_mask(p, 0).right, 4);
	ck_assert_int_eq(sim_steps(ui_sim(ui)), 10);
	press(ui, 'm');
	draw(ui, &g, 160, 40);
	ck_assert(screen_has(&g, "FLOPs stay quadratic"));
	ui_grid_free(&g);
	ck_assert(!mask_rule_hides(problem_mask(UI_PROBLEM(ui), 0)));
	ck_assert_int_eq(sim_steps(ui_sim(ui)), 16);
	ui_free(ui);

	/* The command line's window sets W. */
	ui = window_view(16, 4, 2, 0);
	press(ui, 'm');		/* (2, 2) */
	ck_assert_int_eq(problem_mask(UI_PROBLEM(ui), 0).left, 2);
	ck_assert_int_eq(problem_mask(UI_PROBLEM(ui), 0).right, 2);
	press(ui, 'm');		/* none */
	press(ui, 'm');		/* causal */
	press(ui, 'm');		/* (2, 0) again */
	ck_assert_int_eq(problem_mask(UI_PROBLEM(ui), 0).left, 2);
	ck_assert_int_eq(problem_mask(UI_PROBLEM(ui), 0).right, 0);
	ui_free(ui);
}
END_TEST

/* b in the forward goes on from the update's bugs to the mask bugs the
 * rules can show, one at a time, the correct run beside it; none of
 * them without a cap or a left edge. */
START_TEST(test_mask_bugs)
{
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	const struct ui_keydef *d;
	char help[1000];
	int i, seen_cap = 0, seen_edge = 0;

	/* b's help names them, from the mask bug table. */
	for (d = ui_keydefs; d->keys != NULL && strcmp(d->keys, "b") != 0; d++)
		;
	ck_assert_ptr_nonnull(d->keys);
	ui_keys_help_of(d, help, sizeof help);
	for (i = 1; i < MASK_BUGS; i++)
		ck_assert_msg(strstr(help, mask_bug_name((enum mask_bug)i)) != NULL,
		    "b's help '%s' lacks %s", help, mask_bug_name((enum mask_bug)i));
	options_init(&o);
	o.spec.input = INPUTS_NORMAL;
	o.spec.softcap_set = 1;
	o.spec.softcap = 0.5;
	o.spec.window_set = 1;
	o.spec.window_left = 3;
	o.spec.window_right = 0;
	ui = new_view(&o, &utf8_style);
	/* The update's bugs after none, then the two mask bugs. */
	for (i = 0; i < ONLINE_BUGS - 1 + MASK_BUGS - 1; i++) {
		press(ui, 'b');
		ck_assert(ui->opts.rule.bug == BUG_NONE ||
		    ui->opts.rule.mask_bug == MASK_BUG_NONE);
		if (ui->opts.rule.mask_bug == MASK_BUG_NONE)
			continue;
		ck_assert_msg(ui->correct != NULL, "no correct run beside %s",
		    mask_bug_name(ui->opts.rule.mask_bug));
		ck_assert_int_eq(sim_rule(ui->correct)->mask_bug, MASK_BUG_NONE);
		draw(ui, &g, 100, 30);
		ck_assert(screen_has(&g, "mask bug "));
		seen_cap |= ui->opts.rule.mask_bug == MASK_BUG_MAX_BEFORE_CAP;
		seen_edge |= ui->opts.rule.mask_bug == MASK_BUG_WINDOW_EDGE;
	}
	ck_assert(seen_cap && seen_edge);
	press(ui, 'b');		/* back to none */
	ck_assert(ui->opts.rule.bug == BUG_NONE &&
	    ui->opts.rule.mask_bug == MASK_BUG_NONE);
	/* m from the window (3, 0) to (3, 3) keeps window-off-by-one, and
	 * to none drops it: no left edge to be off by one. */
	while (ui->opts.rule.mask_bug != MASK_BUG_WINDOW_EDGE)
		press(ui, 'b');
	press(ui, 'm');
	ck_assert_int_eq(problem_mask(UI_PROBLEM(ui), 0).right, 3);
	ck_assert_int_eq(ui->opts.rule.mask_bug, MASK_BUG_WINDOW_EDGE);
	press(ui, 'm');
	ck_assert_int_eq(ui->opts.rule.mask_bug, MASK_BUG_NONE);
	ck_assert_msg(strstr(ui->msg, "mask bug window-off-by-one dropped") !=
	    NULL, "%s", ui->msg);
	ui_free(ui);

	/* Without a cap or a window, b never reaches a mask bug. */
	ui = new_view(NULL, &utf8_style);
	for (i = 0; i < 2 * (ONLINE_BUGS + MASK_BUGS); i++) {
		press(ui, 'b');
		ck_assert_int_eq(ui->opts.rule.mask_bug, MASK_BUG_NONE);
	}
	ui_free(ui);
	ui_grid_free(&g);
}
END_TEST

/* The tile pane under a softcap and ALiBi: S is C tanh(x / C) + b, and
 * beneath the focused row its x (recomputed here from Q and K) and its
 * bias -slope |r - c|. */
START_TEST(test_mask_tile_rules)
{
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	const struct problem *p;
	const struct sim_view *v;
	char word[16][40], want[40];
	struct ui_rect r;
	int y, n, c, k, row, xline = -1, bline = -1;
	float x, cap, bias;

	options_init(&o);
	o.spec.input = INPUTS_NORMAL;
	o.spec.scale_set = 1;
	o.spec.scale = 4;
	o.spec.softcap_set = 1;
	o.spec.softcap = 1;
	o.spec.alibi_set = 1;
	o.spec.alibi = 0.25;
	ui = new_view(&o, &utf8_style);
	p = UI_PROBLEM(ui);
	ck_assert_int_eq(ui_seek(ui, 5, SIM_PHASE_SCORES), 0);	/* tile (1,1) */
	ui_set_focus(ui, 2);
	draw(ui, &g, 100, 30);
	v = sim_view(ui_sim(ui));
	ck_assert_int_eq(v->tile.i, 1);
	ck_assert_int_eq(v->tile.j, 1);
	ck_assert(screen_has(&g, "S = C tanh(x/C) + b"));
	ck_assert(screen_has(&g, "softcap 1, alibi"));
	r = ui->slot[UI_SLOT_TILE];
	for (y = 2; y < r.h; y++) {
		n = pane_words(&g, r, y, word, 16);
		if (n > 0 && strcmp(word[0], "x") == 0)
			xline = y;
		/* "+b", or "b" beside one-digit row labels */
		if (n > 0 && (strcmp(word[0], "+b") == 0 ||
		    strcmp(word[0], "b") == 0))
			bline = y;
	}
	ck_assert_int_ge(xline, 2);
	ck_assert_int_eq(bline, xline + 1);
	row = v->tile.r0 + 2;
	n = pane_words(&g, r, xline, word, 16);
	ck_assert_int_eq(n, 1 + v->cols + 1);	/* x, the keys, max x */
	for (c = 0; c < v->cols; c++) {
		for (x = 0, k = 0; k < p->d; k++)
			x += p->q[(size_t)row * p->d + k] *
			    p->k[(size_t)(v->tile.c0 + c) * p->d + k];
		x *= p->scale;
		ck_assert_shown(ui, word[1 + c], x, 7, "x");
		cap = tanhf(x);
		bias = -0.25f * (float)abs(row - (v->tile.c0 + c));
		ck_assert_msg(fabsf(v->s[(size_t)2 * v->cols + c] - (cap + bias)) <
		    1e-6f, "S = %g, C tanh(x/C) + b = %g",
		    (double)v->s[(size_t)2 * v->cols + c], (double)(cap + bias));
	}
	n = pane_words(&g, r, bline, word, 16);
	ck_assert_int_eq(n, 1 + v->cols);
	for (c = 0; c < v->cols; c++) {
		bias = -0.25f * (float)abs(row - (v->tile.c0 + c));
		ck_assert_str_eq(word[1 + c], shown(ui, bias + 0.0f, 7, want));
	}
	/* At the exp phase P shows, without the lines. */
	ck_assert_int_eq(ui_seek(ui, 5, SIM_PHASE_EXP), 0);
	draw(ui, &g, 100, 30);
	for (y = 2; y < r.h; y++) {
		n = pane_words(&g, r, y, word, 16);
		ck_assert(n == 0 || strcmp(word[0], "x") != 0);
	}
	ui_free(ui);
	ui_grid_free(&g);
}
END_TEST

/* The e form sets the window, the softcap and ALiBi's slope; a wrong
 * value is refused with the option's own message and nothing changes. */
START_TEST(test_mask_form)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	const struct problem *p;

	press(ui, 'e');
	while (ui->form.field != UI_FORM_WINDOW)
		press(ui, UI_KEY_TAB);
	type(ui, "3");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_msg(strstr(ui->form.error, "--window must be L,R") != NULL,
	    "%s", ui->form.error);
	ck_assert(!mask_rule_hides(problem_mask(UI_PROBLEM(ui), 0)));
	type(ui, ",0");
	press(ui, UI_KEY_TAB);
	type(ui, "30");
	press(ui, UI_KEY_TAB);
	type(ui, "-1");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_msg(strstr(ui->form.error, "--alibi must be a slope") != NULL,
	    "%s", ui->form.error);
	press(ui, UI_KEY_BACKSPACE);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "0.5");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	p = UI_PROBLEM(ui);
	ck_assert_int_eq(problem_mask(p, 0).left, 3);
	ck_assert_int_eq(problem_mask(p, 0).right, 0);
	ck_assert(p->mask.softcap == 30.0f);
	ck_assert(p->alibi != NULL && p->alibi[0] == 0.5f);
	ck_assert_int_eq(sim_steps(ui_sim(ui)), 7);
	/* The form opens with them; -1,0 is the causal mask. */
	press(ui, 'e');
	ck_assert_str_eq(ui->form.value[UI_FORM_WINDOW], "3,0");
	ck_assert_str_eq(ui->form.value[UI_FORM_SOFTCAP], "30");
	ck_assert_str_eq(ui->form.value[UI_FORM_ALIBI], "0.5");
	while (ui->form.field != UI_FORM_WINDOW)
		press(ui, UI_KEY_TAB);
	while (ui->form.value[UI_FORM_WINDOW][0] != '\0')
		press(ui, UI_KEY_BACKSPACE);
	type(ui, "-1,0");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	ck_assert(UI_PROBLEM(ui)->causal);
	/* Every field of the three blank: none of them. */
	press(ui, 'e');
	while (ui->form.field != UI_FORM_WINDOW)
		press(ui, UI_KEY_TAB);
	for (; ui->form.field <= UI_FORM_ALIBI && ui->form.field > 0;
	    press(ui, UI_KEY_TAB))
		while (ui->form.value[ui->form.field][0] != '\0')
			press(ui, UI_KEY_BACKSPACE);
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	p = UI_PROBLEM(ui);
	ck_assert(!mask_rule_hides(problem_mask(p, 0)));
	ck_assert(!mask_rule_has(p->mask, MASK_SOFTCAP));
	ck_assert(p->alibi == NULL);
	ui_free(ui);
}
END_TEST

/* ---- the paged cache's pane (--page-size) ---------------------------- */

/* An int32 .npy page table at a fresh name under TMPDIR (mkstemp: tests
 * run side by side; a test that fails before its unlink leaves it
 * there, not in the tree), into path. */
static void
pages_table_file(char *path, size_t len, const int *v, int n)
{
	const char *dir = getenv("TMPDIR");
	char hdr[128];
	FILE *f;
	int fd, hl, i;

	snprintf(path, len, "%s/check_ui_pages_XXXXXX", dir != NULL &&
	    *dir != '\0' ? dir : "/tmp");
	fd = mkstemp(path);
	ck_assert(fd >= 0);
	f = fdopen(fd, "wb");
	ck_assert(f != NULL);
	hl = snprintf(hdr, sizeof hdr, "{'descr': '<i4', 'fortran_order': "
	    "False, 'shape': (%d,), }", n);
	while ((10 + hl + 1) % 64 != 0)
		hdr[hl++] = ' ';
	hdr[hl++] = '\n';
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc(hl & 0xff, f);
	fputc(hl >> 8, f);
	fwrite(hdr, 1, (size_t)hl, f);
	for (i = 0; i < n; i++) {
		unsigned char b[4] = { (unsigned char)v[i],
		    (unsigned char)(v[i] >> 8), (unsigned char)(v[i] >> 16),
		    (unsigned char)(v[i] >> 24) };

		fwrite(b, 1, 4, f);
	}
	ck_assert_int_eq(fclose(f), 0);
}

/* The line of pane r whose text starts with label (after blanks), from
 * line y0 on; -1 when none. */
static int
pages_line(const struct ui_grid *g, struct ui_rect r, int y0,
    const char *label)
{
	char buf[1024];
	int y;

	for (y = r.y + y0; y < r.y + r.h; y++)
		if (strncmp(span(g, r.x, y, r.w, buf, sizeof buf), label,
		    strlen(label)) == 0)
			return y;
	return -1;
}

/* The numbers drawn highlighted as the current tile's on line y of r,
 * into out (n at most), in screen order.  Returns how many. */
static int
pages_marked(const struct ui_grid *g, struct ui_rect r, int y, int *out,
    int n)
{
	const struct ui_cell *c;
	int x, k = 0, in = 0, v = 0, digit;

	for (x = r.x; x <= r.x + r.w; x++) {
		c = x < r.x + r.w ? &g->cells[(size_t)y * g->w + x] : NULL;
		digit = c != NULL && c->role == UI_ROLE_TILE_CURRENT &&
		    c->ch >= '0' && c->ch <= '9';
		if (digit) {
			v = v * 10 + (int)(c->ch - '0');
			in = 1;
		} else if (in) {
			if (k < n)
				out[k] = v;
			k++;
			v = 0;
			in = 0;
		}
	}
	return k;
}

static int
pages_int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The physical pages keys [c0, c1) read, from the problem's table (not
 * the pane's code), sorted, into out.  Returns how many. */
static int
pages_expected(const struct paged_cache *pc, int c0, int c1, int *out)
{
	int b, n = 0;

	for (b = c0 / pc->page_size; b <= (c1 - 1) / pc->page_size; b++)
		out[n++] = pc->table[b];
	qsort(out, (size_t)n, sizeof *out, pages_int_cmp);
	return n;
}

/* The pool's highlighted pages, over every "pool p" band shown, sorted,
 * are the tile's physical pages; the table's highlighted logical pages
 * are the tile's, over their physical pages. */
static void
pages_check_marks(struct ui *ui, const struct ui_grid *g, int c0, int c1)
{
	const struct paged_cache *pc = &UI_PROBLEM(ui)->paged;
	struct ui_rect r = ui->slot[UI_SLOT_PAGES];
	int want[64], got[64], phys[64], n, k = 0, y, m, i, b;

	n = pages_expected(pc, c0, c1, want);
	for (y = pages_line(g, r, 0, "pool p"); y >= 0;
	    y = pages_line(g, r, y + 2 - r.y, "pool p"))
		k += pages_marked(g, r, y, got + k, 64 - k);
	ck_assert_int_gt(k, 0);
	qsort(got, (size_t)k, sizeof *got, pages_int_cmp);
	ck_assert_msg(k == n, "keys %d-%d: %d pool pages marked, want %d", c0,
	    c1 - 1, k, n);
	for (i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "keys %d-%d: pool page %d "
		    "marked, want %d", c0, c1 - 1, got[i], want[i]);
	/* The table: logical pages c0/P .. over table[b]. */
	y = pages_line(g, r, 0, "table b");
	ck_assert_int_ge(y, 0);
	k = 0;
	m = 0;
	for (; y >= 0; y = pages_line(g, r, y + 2 - r.y, "table b")) {
		k += pages_marked(g, r, y, got + k, 64 - k);
		m += pages_marked(g, r, y + 1, phys + m, 64 - m);
	}
	ck_assert_int_eq(k, n);
	ck_assert_int_eq(m, n);
	for (i = 0, b = c0 / pc->page_size; i < k; i++, b++) {
		ck_assert_int_eq(got[i], b);
		ck_assert_int_eq(phys[i], pc->table[b]);
	}
}

/*
 * A table from a file (pool of 6 for 4 pages): at every step the pages
 * the tile reads are the ones marked, in the pool and in the table; the
 * pool's free pages show as "-"; the words name the keys' pages.
 */
START_TEST(test_pages_pane_file)
{
	static const int table[] = { 5, 0, 2, 1, 4, 3 };
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	const struct sim_view *v;
	struct ui_rect r;
	char path[256], buf[1024], want[128];
	long k;
	int y;

	pages_table_file(path, sizeof path, table, 6);
	options_init(&o);
	o.spec.page_size = 4;
	o.spec.block_table = path;
	ui = new_view(&o, &utf8_style);
	ck_assert_int_eq(UI_PROBLEM(ui)->paged.pool, 6);
	for (k = 0; k < sim_steps(ui_sim(ui)); k++) {
		ck_assert_int_eq(ui_seek(ui, k, SIM_PHASE_LAST), 0);
		draw(ui, &g, 120, 50);
		v = sim_view(ui_sim(ui));
		r = ui->slot[UI_SLOT_PAGES];
		ck_assert_int_gt(r.h, 6);
		pages_check_marks(ui, &g, v->tile.c0, v->tile.c1);
		snprintf(want, sizeof want, "keys %d-%d in page %d", v->tile.c0,
		    v->tile.c1 - 1, table[v->tile.c0 / 4]);
		ck_assert_msg(screen_has(&g, want), "step %ld: no '%s'", k, want);
	}
	ck_assert(screen_has(&g, "read in 1 run (contiguous: 1)"));
	ck_assert(screen_has(&g, path));
	/* page 0 holds logical 1, 1 holds 3, 2 holds 2, 3 and 4 are free */
	y = pages_line(&g, r, 0, "holds b");
	ck_assert_int_ge(y, 0);
	span(&g, r.x + 8, y, r.w - 8, buf, sizeof buf);
	blank_out(buf, "*");
	ck_assert_msg(strcmp(buf, "  1  3  2  -  -  0") == 0, "'%s'", buf);
	ui_free(ui);
	ui_grid_free(&g);
	unlink(path);
}
END_TEST

/*
 * P = 3 with tiles of 4 keys: the tile of keys 4-7 spans pages 1 and 2,
 * two runs, as paged_runs counts; every step's count is paged_runs'.
 * The seed's table, marked right.
 */
START_TEST(test_pages_runs)
{
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	const struct sim_view *v;
	const struct paged_cache *pc;
	char want[160];
	long k, runs;
	int two = 0;

	options_init(&o);
	o.spec.page_size = 3;
	ui = new_view(&o, &utf8_style);
	pc = &UI_PROBLEM(ui)->paged;
	for (k = 0; k < sim_steps(ui_sim(ui)); k++) {
		ck_assert_int_eq(ui_seek(ui, k, SIM_PHASE_LAST), 0);
		draw(ui, &g, 100, 40);
		v = sim_view(ui_sim(ui));
		runs = paged_runs(pc, v->tile.c0, v->tile.c1);
		snprintf(want, sizeof want, "keys %d-%d read in %ld run%s "
		    "(contiguous: 1)", v->tile.c0, v->tile.c1 - 1, runs,
		    runs == 1 ? "" : "s");
		ck_assert_msg(screen_has(&g, want), "step %ld: no '%s'", k, want);
		pages_check_marks(ui, &g, v->tile.c0, v->tile.c1);
		if (v->tile.c0 == 4) {
			ck_assert_int_eq(runs, 2);
			snprintf(want, sizeof want, "keys 4-5 in page %d, 6-7 in "
			    "page %d", pc->table[1], pc->table[2]);
			ck_assert_msg(screen_has(&g, want), "no '%s'", want);
			two = 1;
		}
	}
	ck_assert(two);
	ui_free(ui);
	ui_grid_free(&g);
}
END_TEST

/* Every line of the screen is ASCII. */
static int
screen_ascii(const struct ui_grid *g)
{
	char line[2048];
	int y;
	const char *p;

	for (y = 0; y < g->h; y++)
		for (p = ui_grid_line(g, y, line, sizeof line); *p != '\0'; p++)
			if ((unsigned char)*p >= 0x80)
				return 0;
	return 1;
}

/*
 * 512 pages (Tk 1024, P = 2): the view fits 80x24 and shows the pane;
 * zoomed at 80x24 the table and pool show windows that hold the tile's
 * pages, with the entries left out counted; a big terminal shows more.
 * ASCII too.
 */
START_TEST(test_pages_large_pool)
{
	static const struct ui_style *const styles[] = { &utf8_style,
	    &ascii_style };
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	const struct sim_view *v;
	struct ui_rect r, line;
	const char *right;
	char buf[1024];
	int w, h, s, y, n80, n240, shown, tok;
	char *p, *save;

	for (s = 0; s < 2; s++) {
		right = s == 0 ? "\u2192" : "->";
		options_init(&o);
		o.spec.tk = 1024;
		o.spec.page_size = 2;
		ui = new_view(&o, styles[s]);
		ck_assert_int_eq(UI_PROBLEM(ui)->paged.pages, 512);
		ui_min_size(ui, &w, &h);
		ck_assert_int_le(w, 80);
		ck_assert_int_le(h, 24);
		ck_assert_int_eq(ui_seek(ui, 100, SIM_PHASE_LAST), 0);
		v = sim_view(ui_sim(ui));
		draw(ui, &g, 80, 24);
		ck_assert_int_ge(ui->slot[UI_SLOT_PAGES].h, 1);
		ck_assert(screen_has(&g, "paged K/V P=2"));
		if (s == 1)
			ck_assert(screen_ascii(&g));
		while (strcmp(ui_layout_pane_name(ui, ui->zoom - 1), "pages") != 0)
			press(ui, 'z');
		draw(ui, &g, 80, 24);
		r = ui->slot[UI_SLOT_PAGES];
		ck_assert_int_eq(r.w, 80);
		pages_check_marks(ui, &g, v->tile.c0, v->tile.c1);
		if (s == 1)
			ck_assert(screen_ascii(&g));
		/* the table's window: the entries shown and counted are 512 */
		y = pages_line(&g, r, 0, "table b");
		line = (struct ui_rect){ r.x, y, r.w, 1 };
		for (shown = 0, n80 = 0; y >= 0; y = pages_line(&g, r, y + 2 - r.y,
		    "table b"), n80++) {
			span(&g, r.x + 8, y, r.w - 8, buf, sizeof buf);
			save = NULL;
			for (p = strtok_r(buf, " *", &save); p != NULL;
			    p = strtok_r(NULL, " *", &save))
				if (sscanf(p, "%d", &tok) == 1 && p[0] != '+')
					shown++;
		}
		ck_assert_int_lt(shown, 512);
		ck_assert_int_eq(shown + cut_count(&g, line, right), 512);
		/* the pool's too */
		y = pages_line(&g, r, 0, "pool p");
		ck_assert_int_ge(y, 0);
		ck_assert_int_gt(cut_count(&g, (struct ui_rect){ r.x, y, r.w, 1 },
		    right), 0);
		draw(ui, &g, 240, 67);
		r = ui->slot[UI_SLOT_PAGES];
		pages_check_marks(ui, &g, v->tile.c0, v->tile.c1);
		for (n240 = 0, y = pages_line(&g, r, 0, "table b"); y >= 0;
		    y = pages_line(&g, r, y + 2 - r.y, "table b"))
			n240++;
		ck_assert_int_gt(n240, n80);
		ui_free(ui);
	}
	ui_grid_free(&g);
}
END_TEST

/*
 * The backward's key block and split-KV's key range: the pane is in
 * the backward's stack (marks for its key block) and names the range
 * under split-KV; the combine's stack has no pane; all of it fits
 * 80x24.
 */
START_TEST(test_pages_backward_split)
{
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };
	const struct backward_view *bv;
	char want[80];
	int w, h, i, n, found;

	options_init(&o);
	o.spec.tk = 32;
	o.spec.page_size = 4;
	o.backward = 1;
	o.split.splits = 2;
	ui = new_view(&o, &utf8_style);
	ui_min_size(ui, &w, &h);
	ck_assert_int_le(w, 80);
	ck_assert_int_le(h, 24);
	draw(ui, &g, 120, 50);
	ck_assert(screen_has(&g, "key range 0 of 2: keys 0-15"));
	/* the combine's stack */
	while (ui_kind(ui) != TIMELINE_COMBINE)
		ck_assert_int_eq(ui_step(ui, 1), 0);
	n = ui_layout_panes(ui);
	for (found = 0, i = 0; i < n; i++)
		found |= strcmp(ui_layout_pane_name(ui, i), "pages") == 0;
	ck_assert(!found);
	press(ui, UI_KEY_END);
	ck_assert_int_eq(ui_kind(ui), TIMELINE_BACKWARD);
	draw(ui, &g, 80, 24);
	ck_assert_int_ge(ui->slot[UI_SLOT_PAGES].h, 1);
	draw(ui, &g, 120, 60);
	bv = ui_bwd_view(ui);
	snprintf(want, sizeof want, "key block %d-%d read in", bv->tile.c0,
	    bv->tile.c1 - 1);
	ck_assert_msg(screen_has(&g, want), "no '%s'", want);
	pages_check_marks(ui, &g, bv->tile.c0, bv->tile.c1);
	ui_free(ui);
	ui_grid_free(&g);
}
END_TEST

/*
 * The form's page size: a bad one is refused with the command line's
 * own message; 4 pages the problem; a file's table stays while only
 * other fields change (and is checked against the new Tk); a new size
 * drops it for the seed's; 0 is not paged, the pane gone.
 */
START_TEST(test_pages_form)
{
	static const int table[] = { 5, 0, 2, 1, 4, 3 };
	struct options o, cli;
	struct ui *ui;
	struct ui_grid g = { 0 };
	char *argv[] = { "view", "--page-size=-3" };
	char path[256], cli_err[200];
	int i;

	ui = new_view(NULL, &utf8_style);
	press(ui, 'e');
	ck_assert_str_eq(ui->form.value[UI_FORM_PAGE_SIZE], "0");
	while (ui->form.field != UI_FORM_PAGE_SIZE)
		press(ui, UI_KEY_TAB);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "-3");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	options_init(&cli);
	ck_assert_int_ne(options_parse(2, argv, 1, OPT_PROBLEM, NULL, NULL,
	    &cli, cli_err, sizeof cli_err), 0);
	options_free(&cli);
	ck_assert_str_eq(ui->form.error, cli_err);
	ck_assert_int_eq(UI_PROBLEM(ui)->paged.page_size, 0);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, cli_err));
	press(ui, UI_KEY_BACKSPACE);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "4");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	ck_assert_int_eq(UI_PROBLEM(ui)->paged.page_size, 4);
	draw(ui, &g, 80, 24);
	ck_assert_int_ge(ui->slot[UI_SLOT_PAGES].h, 1);
	ui_free(ui);

	pages_table_file(path, sizeof path, table, 6);
	options_init(&o);
	o.spec.page_size = 4;
	o.spec.block_table = path;
	ui = new_view(&o, &utf8_style);
	press(ui, 'e');
	ck_assert_str_eq(ui->form.value[UI_FORM_PAGE_SIZE], "4");
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "a new size drops the table"));
	/* Tk 20: five pages, still the file's */
	press(ui, UI_KEY_TAB);
	press(ui, UI_KEY_BACKSPACE);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "20");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	ck_assert_int_eq(UI_PROBLEM(ui)->paged.pool, 6);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(UI_PROBLEM(ui)->paged.table[i], table[i]);
	/* Tk 28 needs seven: the file's own message, nothing changed */
	press(ui, 'e');
	press(ui, UI_KEY_TAB);
	press(ui, UI_KEY_BACKSPACE);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "28");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_msg(strstr(ui->form.error, "6 pages, but --tk needs 7") !=
	    NULL, "%s", ui->form.error);
	ck_assert_int_eq(UI_PROBLEM(ui)->tk, 20);
	/* a new page size: the seed's table, a pool of the pages */
	while (ui->form.field != UI_FORM_PAGE_SIZE)
		press(ui, UI_KEY_TAB);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "2");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	ck_assert_int_eq(UI_PROBLEM(ui)->paged.page_size, 2);
	ck_assert_int_eq(UI_PROBLEM(ui)->paged.pages, 14);
	ck_assert_int_eq(UI_PROBLEM(ui)->paged.pool, 14);
	ck_assert(ui->opts.spec.block_table == NULL);
	ck_assert(strstr(ui->msg, "shuffled from the seed") != NULL);
	/* 0: not paged, no pane */
	press(ui, 'e');
	while (ui->form.field != UI_FORM_PAGE_SIZE)
		press(ui, UI_KEY_TAB);
	press(ui, UI_KEY_BACKSPACE);
	type(ui, "0");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	ck_assert_int_eq(UI_PROBLEM(ui)->paged.page_size, 0);
	draw(ui, &g, 120, 50);
	ck_assert_int_eq(ui->slot[UI_SLOT_PAGES].h, 0);
	ck_assert(!screen_has(&g, "paged K/V"));
	ui_free(ui);
	ui_grid_free(&g);
	unlink(path);
}
END_TEST

/* ---- a packed batch (--seqlens): one timeline over its sequences ---- */

/* A view of the packed batch q (lengths of Q) / k (of K), causal or not. */
static struct ui *
packed_view(const char *q, const char *k, int causal,
    const struct ui_style *st)
{
	struct options o;

	options_init(&o);
	o.spec.seqlens_q = q;
	o.spec.seqlens_k = k;
	o.spec.causal = causal;
	return new_view(&o, st);
}

/* The cell of the heatmap at packed row r, key c, as text. */
static char *
heat_cell(struct ui *ui, const struct ui_grid *g, int r, int c, char *buf,
    size_t len)
{
	const struct ui_heat_geom *hg = ui_pane_heat_last(ui);

	return span(g, hg->x0 + c / hg->fx * hg->sx, hg->y0 + r / hg->fy *
	    hg->sy, 1, buf, len);
}

static int
heat_mods(struct ui *ui, const struct ui_grid *g, int r, int c)
{
	const struct ui_heat_geom *hg = ui_pane_heat_last(ui);

	return g->cells[(size_t)(hg->y0 + r / hg->fy * hg->sy) * g->w + hg->x0 +
	    c / hg->fx * hg->sx].mods;
}

/*
 * 5,17,3 with Br = Bc = 4: 4, 25 and 1 steps, one timeline of 30.  n
 * past sequence 0's last step lands on sequence 1's first tile (its
 * rows the packed rows 5..), p comes back, s and S jump between the
 * sequences' first steps, Home, End, . and g cross them too.
 */
START_TEST(test_varlen_steps)
{
	struct ui *ui = packed_view("5,17,3", "5,17,3", 0, &utf8_style);
	const struct sim_view *v;
	struct timeline_pos pos;

	ck_assert_int_eq(ui->vl.nseq, 3);
	ck_assert_int_eq(timeline_steps(ui->line.tl), 4 + 25 + 1);
	ck_assert_int_eq(UI_PROBLEM(ui)->tq, 5);
	ck_assert_int_eq(UI_BUILT(ui)->tq, 25);
	ck_assert_int_eq(ui_seek(ui, 3, -1), 0);	/* sequence 0's last */
	ck_assert_int_eq(ui->vl.seq, 0);
	ck_assert_int_eq(sim_view(ui_sim(ui))->step, 3);
	press(ui, 'n');
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, 4);
	ck_assert_int_eq(ui->vl.seq, 1);
	v = sim_view(ui_sim(ui));
	ck_assert_int_eq(v->step, 0);
	ck_assert_int_eq(v->tile.i, 0);
	ck_assert_int_eq(v->tile.j, 0);
	ck_assert_int_eq(v->tile.r0, 0);
	/* its rows are the packed rows 5..21: Q, K and V start there */
	ck_assert_int_eq(UI_PROBLEM(ui)->tq, 17);
	ck_assert_ptr_eq(UI_PROBLEM(ui)->q, UI_BUILT(ui)->q + 5 * 4);
	ck_assert_ptr_eq(UI_PROBLEM(ui)->k, UI_BUILT(ui)->k + 5 * 4);
	ck_assert_ptr_eq(UI_PROBLEM(ui)->v, UI_BUILT(ui)->v + 5 * 4);
	press(ui, 'p');
	ck_assert_int_eq(ui->vl.seq, 0);
	ck_assert_int_eq(sim_view(ui_sim(ui))->step, 3);
	ck_assert_int_eq(UI_PROBLEM(ui)->tq, 5);
	/* s, s, s (none after the last), S */
	press(ui, 's');
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, 4);
	press(ui, 's');
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, 29);
	ck_assert_int_eq(ui->vl.seq, 2);
	ck_assert_int_eq(UI_PROBLEM(ui)->tq, 3);
	press(ui, 's');
	ck_assert_str_eq(ui->msg, "sequence 3 is the last of 3");
	press(ui, 'S');
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, 4);
	press(ui, 'S');
	press(ui, 'S');
	ck_assert_str_eq(ui->msg, "sequence 1 is the first of 3");
	press(ui, UI_KEY_END);
	ck_assert_int_eq(ui->vl.seq, 2);
	press(ui, UI_KEY_HOME);
	ck_assert_int_eq(ui->vl.seq, 0);
	/* . past the last phase of sequence 0's last step */
	ck_assert_int_eq(ui_seek(ui, 3, -1), 0);
	press(ui, '.');
	ck_assert_int_eq(ui->vl.seq, 1);
	ck_assert_int_eq(sim_view(ui_sim(ui))->step, 0);
	press(ui, ',');
	ck_assert_int_eq(ui->vl.seq, 0);
	/* g 30: the batch's last step */
	press(ui, 'g');
	type(ui, "30");
	press(ui, UI_KEY_ENTER);
	ck_assert_int_eq(ui->vl.seq, 2);
	/* f N: step N of the sequence shown */
	press(ui, 'S');
	press(ui, 'g');
	type(ui, "f 3");
	press(ui, UI_KEY_ENTER);
	ui_position(ui, &pos);
	ck_assert_int_eq(pos.global, 4 + 2);
	ck_assert_int_eq(ui->vl.seq, 1);
	/* a rebuild (o) keeps the sequence and the tile */
	ck_assert_int_eq(ui_seek(ui, 4 + 7, -1), 0);	/* seq 1, tile (1,2) */
	press(ui, 'o');
	v = sim_view(ui_sim(ui));
	ck_assert_int_eq(ui->vl.seq, 1);
	ck_assert_int_eq(v->tile.i, 1);
	ck_assert_int_eq(v->tile.j, 2);
	ui_free(ui);
}
END_TEST

/* Outside a packed batch s says what it is for. */
START_TEST(test_varlen_key_unpacked)
{
	struct ui *ui = new_view(NULL, &utf8_style);

	press(ui, 's');
	ck_assert_msg(strstr(ui->msg, "--seqlens") != NULL, "'%s'", ui->msg);
	ui_free(ui);
}
END_TEST

/*
 * The packed matrix on a large screen, unpooled: Q lengths 2,5 and K
 * lengths 6,5, causal.  Rows and keys of different sequences are never
 * computed; the boundaries are ticked at packed row 2 and key 6 (and
 * nowhere else); the causal mask is aligned bottom-right within each
 * sequence (row 0 of the first sees keys 0..4 of its 6, row 2 = the
 * second's row 0 sees its key 0 = packed key 6 only); the header names
 * the sequence; the sequence ahead is drawn ahead, and done once
 * passed.
 */
START_TEST(test_varlen_heatmap)
{
	struct ui *ui = packed_view("2,5", "6,5", 1, &utf8_style);
	const struct ui_heat_geom *hg;
	struct ui_grid g = { 0 };
	char buf[64];
	int wait, r, c, bq, bk, y;

	ui_idle(ui, 0, &wait);		/* the summaries whole */
	draw(ui, &g, 130, 45);
	hg = ui_pane_heat_last(ui);
	ck_assert_int_eq(hg->fy, 1);
	ck_assert_int_eq(hg->fx, 1);
	ck_assert(screen_has(&g, "seq 1 of 2  (Tq 2, Tk 6, packed rows 0-1)"));
	ck_assert(screen_has(&g, "S 7\u00d711"));
	ck_assert(screen_has(&g, "\u2573 never: 2 seqs packed; masks "
	    "bottom-right in each"));
	for (r = 0; r < 7; r++)
		for (c = 0; c < 11; c++) {
			bq = r < 2 ? 0 : 1;
			bk = c < 6 ? 0 : 1;
			heat_cell(ui, &g, r, c, buf, sizeof buf);
			if (bq != bk)
				ck_assert_msg(strcmp(buf, "\u2573") == 0, "(%d,%d) is "
				    "'%s', not never", r, c, buf);
			else
				ck_assert_msg(strcmp(buf, "\u2573") != 0, "(%d,%d) is "
				    "drawn never", r, c);
		}
	/* bottom-right within each sequence */
	ck_assert_str_ne(heat_cell(ui, &g, 0, 4, buf, sizeof buf), "");
	ck_assert_str_eq(heat_cell(ui, &g, 0, 5, buf, sizeof buf), "");
	ck_assert_str_ne(heat_cell(ui, &g, 1, 5, buf, sizeof buf), "");
	ck_assert_str_ne(heat_cell(ui, &g, 2, 6, buf, sizeof buf), "");
	ck_assert_str_eq(heat_cell(ui, &g, 2, 7, buf, sizeof buf), "");
	ck_assert_str_ne(heat_cell(ui, &g, 6, 10, buf, sizeof buf), "");
	/* the boundary ticks: left of packed row 2, below packed key 6 */
	for (r = 0; r < 7; r++)
		ck_assert_str_eq(span(&g, hg->x0 - 1, hg->y0 + r * hg->sy, 1, buf,
		    sizeof buf), r == 2 ? "\u2500" : "");
	y = hg->y0 + hg->ny * hg->sy;
	for (c = 0; c < 11; c++)
		ck_assert_str_eq(span(&g, hg->x0 + c * hg->sx, y, 1, buf,
		    sizeof buf), c == 6 ? "\u2502" : "");
	/* sequence 1 is ahead; its first tile is current after s, and
	 * sequence 0 done */
	ck_assert(heat_mods(ui, &g, 2, 6) & UI_MOD_PENDING);
	ck_assert(heat_mods(ui, &g, 0, 0) & UI_MOD_CURRENT);
	press(ui, 's');
	draw(ui, &g, 130, 45);
	ck_assert(screen_has(&g, "seq 2 of 2  (Tq 5, Tk 5, packed rows 2-6)"));
	ck_assert(heat_mods(ui, &g, 2, 6) & UI_MOD_CURRENT);
	ck_assert(heat_mods(ui, &g, 5, 9) & UI_MOD_CURRENT);
	ck_assert(!(heat_mods(ui, &g, 6, 6) & UI_MOD_CURRENT));
	ck_assert(heat_mods(ui, &g, 6, 6) & UI_MOD_PENDING);
	ck_assert_int_eq(heat_mods(ui, &g, 0, 0), 0);		/* done */
	/* a click on a never-computed entry says so; on the second
	 * sequence's entry (6, 10) goes to its tile (1, 1) */
	{
		struct ui_key k = { UI_KEY_MOUSE, 0, 0 };

		k.x = hg->x0 + 8 * hg->sx;
		k.y = hg->y0 + 0 * hg->sy;
		ui_handle_key(ui, &k);
		ck_assert_msg(strstr(ui->msg, "never computed") != NULL, "'%s'",
		    ui->msg);
		k.x = hg->x0 + 10 * hg->sx;
		k.y = hg->y0 + 6 * hg->sy;
		ui_handle_key(ui, &k);
		ck_assert_int_eq(ui->vl.seq, 1);
		ck_assert_int_eq(sim_view(ui_sim(ui))->tile.i, 1);
		ck_assert_int_eq(sim_view(ui_sim(ui))->tile.j, 1);
	}
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* 80x24 holds it (pooled), with the sequence in the header; ASCII
 * spells the marks in ASCII. */
START_TEST(test_varlen_small_and_ascii)
{
	struct ui *ui = packed_view("5,17,3", "5,17,3", 0, &ascii_style);
	struct ui_grid g = { 0 };
	char buf[64];
	int w, h, wait;

	ui_min_size(ui, &w, &h);
	ck_assert_int_le(w, 80);
	ck_assert_int_le(h, 24);
	ui_idle(ui, 0, &wait);
	draw(ui, &g, 80, 24);
	ck_assert(screen_has(&g, "seq 1 of 3"));
	ck_assert(screen_has(&g, "x never: 3 seqs"));
	ck_assert(!screen_has(&g, "terminal too small"));
	ck_assert_str_eq(heat_cell(ui, &g, 0, 24, buf, sizeof buf), "x");
	ck_assert_str_eq(heat_cell(ui, &g, 24, 0, buf, sizeof buf), "x");
	ck_assert_str_ne(heat_cell(ui, &g, 10, 10, buf, sizeof buf), "x");
	ui_grid_free(&g);
	ui_free(ui);
	/* a big screen: the sizes and rows too */
	ui = packed_view("5,17,3", "5,17,3", 0, &ascii_style);
	press(ui, 's');
	draw(ui, &g, 160, 50);
	ck_assert(screen_has(&g, "seq 2 of 3  (Tq 17, Tk 17, packed rows "
	    "5-21)"));
	ui_grid_free(&g);
	ui_free(ui);
}
END_TEST

/* What the view does not step packed is refused by name. */
START_TEST(test_varlen_refused)
{
	struct options o;
	char err[300];

	options_init(&o);
	o.spec.seqlens_q = o.spec.seqlens_k = "5,17,3";
	o.backward = 1;
	ck_assert_ptr_null(ui_new(&o, &utf8_style, err, sizeof err));
	ck_assert_msg(strstr(err, "--seqlens with --backward") != NULL, "%s",
	    err);
	o.backward = 0;
	o.split.splits = 2;
	ck_assert_ptr_null(ui_new(&o, &utf8_style, err, sizeof err));
	ck_assert_msg(strstr(err, "--seqlens with --splits") != NULL, "%s",
	    err);
}
END_TEST

/* Puts text into field i of the open form (emptied first). */
static void
form_set(struct ui *ui, int i, const char *text)
{
	while (ui->form.field != i)
		press(ui, UI_KEY_TAB);
	while (ui->form.value[i][0] != '\0')
		press(ui, UI_KEY_BACKSPACE);
	type(ui, text);
}

/*
 * The e form's seqlens field: bad text gets the command line's own
 * one-line errors (the same function's words) and changes nothing;
 * good text packs the batch, Q/K gives the two lists, blank unpacks.
 */
START_TEST(test_varlen_form)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct options o;
	char err[300];
	char *argv[] = { "x", "--seqlens=5,x" };

	press(ui, 'e');
	form_set(ui, UI_FORM_SEQLENS, "5,17,3");
	press(ui, UI_KEY_ENTER);	/* Tq 16 is still there */
	ck_assert(ui->form.open);
	ck_assert_str_eq(ui->form.error, "--seqlens sets Tq and Tk (their sums); "
	    "drop --tq");
	ck_assert_int_eq(ui->vl.nseq, 0);
	form_set(ui, 0, "");
	form_set(ui, 1, "");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	ck_assert_int_eq(ui->vl.nseq, 3);
	ck_assert_int_eq(timeline_steps(ui->line.tl), 30);

	/* The form shows it back; Tq and Tk are the sums: blank. */
	press(ui, 'e');
	ck_assert_str_eq(ui->form.value[UI_FORM_SEQLENS], "5,17,3");
	ck_assert_str_eq(ui->form.value[0], "");
	form_set(ui, UI_FORM_SEQLENS, "5,x");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	options_init(&o);
	ck_assert_int_ne(options_parse(2, argv, 1, OPT_PROBLEM, NULL, NULL, &o,
	    err, sizeof err), 0);
	options_free(&o);
	ck_assert_str_eq(ui->form.error, err);
	ck_assert_str_eq(err, "--seqlens: length 2 of '5,x' is not a whole "
	    "number");
	ck_assert_int_eq(timeline_steps(ui->line.tl), 30);
	form_set(ui, UI_FORM_SEQLENS, "5,17/3");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_str_eq(ui->form.error, "--seqlens-q has 2 lengths but "
	    "--seqlens-k has 1: one pair a sequence");
	form_set(ui, UI_FORM_SEQLENS, "1/2/3");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_msg(strstr(ui->form.error, "seqlens: A,B,..") != NULL, "%s",
	    ui->form.error);
	ck_assert_int_eq(ui->vl.nseq, 3);
	form_set(ui, UI_FORM_SEQLENS, "2,5/6,5");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	ck_assert_int_eq(ui->vl.nseq, 2);
	ck_assert_int_eq(UI_BUILT(ui)->tq, 7);
	ck_assert_int_eq(UI_BUILT(ui)->tk, 11);
	/* the options outlive the form's text: a rebuild (c) reads them */
	press(ui, 'e');
	ck_assert_str_eq(ui->form.value[UI_FORM_SEQLENS], "2,5/6,5");
	form_set(ui, UI_FORM_SEQLENS, "9");
	press(ui, UI_KEY_ESC);
	press(ui, 'c');
	ck_assert_int_eq(ui->vl.nseq, 2);
	ck_assert_int_eq(UI_BUILT(ui)->tk, 11);
	/* blank: not packed */
	press(ui, 'e');
	form_set(ui, UI_FORM_SEQLENS, "");
	form_set(ui, 0, "8");
	press(ui, UI_KEY_ENTER);
	ck_assert_msg(!ui->form.open, "%s", ui->form.error);
	ck_assert_int_eq(ui->vl.nseq, 0);
	ck_assert_int_eq(UI_PROBLEM(ui)->tq, 8);
	ui_free(ui);
}
END_TEST

/* Under a bug mode the correct run beside it follows the sequence. */
START_TEST(test_varlen_correct_follows)
{
	struct ui *ui = packed_view("5,17,3", "5,17,3", 0, &utf8_style);
	const struct sim_view *c;

	press(ui, 'b');
	ck_assert_int_ne(sim_rule(ui_sim(ui))->bug, BUG_NONE);
	press(ui, 's');
	c = ui_correct(ui);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->rows, sim_view(ui_sim(ui))->rows);
	ck_assert_int_eq(sim_schedule(ui->correct)->tq, 17);
	ui_free(ui);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("ui");
	TCase *tc = tcase_create("view");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_first_frame);
	tcase_add_test(tc, test_state_matches_sim);
	tcase_add_test(tc, test_state_first_step);
	tcase_add_test(tc, test_equations_follow_focus);
	tcase_add_test(tc, test_phases);
	tcase_add_test(tc, test_ascii_and_too_small);
	tcase_add_test(tc, test_ascii_no_letter_clash);
	tcase_add_test(tc, test_heatmap_exact);
	tcase_add_test(tc, test_rebuild_keeps_position);
	tcase_add_test(tc, test_bug_cycle);
	tcase_add_test(tc, test_mask_key_window);
	tcase_add_test(tc, test_bug_table_in_view);
	tcase_add_test(tc, test_eq_follows_bug_table);
	tcase_add_test(tc, test_pane_state);
	tcase_add_test(tc, test_form);
	tcase_add_test(tc, test_mask_heat_window);
	tcase_add_test(tc, test_mask_cycle);
	tcase_add_test(tc, test_mask_bugs);
	tcase_add_test(tc, test_mask_tile_rules);
	tcase_add_test(tc, test_mask_form);
	tcase_add_test(tc, test_goto_prompt_and_gpu);
	tcase_add_test(tc, test_mouse);
	tcase_add_test(tc, test_seed_example);
	tcase_add_test(tc, test_history);
	tcase_add_test(tc, test_counters_per_phase);
	tcase_add_test(tc, test_bug_shows_correct);
	tcase_add_test(tc, test_rescale_products);
	tcase_add_test(tc, test_play_until);
	tcase_add_test(tc, test_keys_wait_while_too_small);
	tcase_add_test(tc, test_too_small_fits);
	tcase_add_test(tc, test_help_scrolls);
	tcase_add_test(tc, test_help_and_doc_list_every_key);
	tcase_add_test(tc, test_draw_in_rect);
	tcase_add_test(tc, test_grid_text);
	tcase_add_test(tc, test_cuts_marked);
	tcase_add_test(tc, test_zoom_hide_and_room);
	tcase_add_test(tc, test_pipeline_key);
	tcase_add_test(tc, test_fp8_key);
	tcase_add_test(tc, test_roofline_figure);
	tcase_add_test(tc, test_roof_key);
	tcase_add_test(tc, test_build_progress);
	tcase_add_test(tc, test_busy_frame);
	tcase_add_test(tc, test_end_and_play_show_whole_steps);
	tcase_add_test(tc, test_correct_line_follows_phase);
	tcase_add_test(tc, test_status_cut_at_word);
	tcase_add_test(tc, test_fits_under_narration);
	tcase_add_test(tc, test_random_keys);
	tcase_add_test(tc, test_backward_panes);
	tcase_add_test(tc, test_combine_panes);
	tcase_add_test(tc, test_merge_order_key);
	tcase_add_test(tc, test_walk_equals_seek);
	tcase_add_test(tc, test_goto_segments);
	tcase_add_test(tc, test_bugs_beside_correct);
	tcase_add_test(tc, test_form_timeline);
	tcase_add_test(tc, test_random_keys_timeline);
	tcase_add_test(tc, test_pages_pane_file);
	tcase_add_test(tc, test_pages_runs);
	tcase_add_test(tc, test_pages_large_pool);
	tcase_add_test(tc, test_pages_backward_split);
	tcase_add_test(tc, test_pages_form);
	tcase_add_test(tc, test_varlen_steps);
	tcase_add_test(tc, test_varlen_key_unpacked);
	tcase_add_test(tc, test_varlen_heatmap);
	tcase_add_test(tc, test_varlen_small_and_ascii);
	tcase_add_test(tc, test_varlen_refused);
	tcase_add_test(tc, test_varlen_form);
	tcase_add_test(tc, test_varlen_correct_follows);
	suite_add_tcase(s, tc);
	return s;
}
