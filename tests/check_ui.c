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
#include "ui/ui_keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	for (y = 0; y < 16; y++) {
		span(&g, ui->heat_geom.x0, ui->heat_geom.y0 + y * ui->heat_geom.sy,
		    16, buf, sizeof buf);
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
	press(ui, 'm');
	press(ui, 'o');
	ck_assert_int_eq(sim_schedule(ui_sim(ui))->order, ORDER_FA2);
	v = sim_view(ui_sim(ui));
	ck_assert_int_eq(v->tile.i, 1);
	ck_assert_int_eq(v->tile.j, 1);
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
	press(ui, UI_KEY_UP);		/* wraps to input */
	while (ui->form.value[UI_FORM_FIELDS - 1][0] != '\0')
		press(ui, UI_KEY_BACKSPACE);
	type(ui, "files");
	press(ui, UI_KEY_ENTER);
	ck_assert(ui->form.open);
	ck_assert_msg(strstr(ui->form.error, "'files' needs") != NULL, "'%s'",
	    ui->form.error);
	while (ui->form.value[UI_FORM_FIELDS - 1][0] != '\0')
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
	static const float sc[4] = { 1, 2, 1001, 1002 }, v[4] = { 2, -1, 4, 8 };
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };

	options_init(&o);
	o.spec.s.data = sc;
	o.spec.s.rows = 1;
	o.spec.s.cols = 4;
	o.spec.v.data = v;
	o.spec.v.rows = 4;
	o.spec.v.cols = 1;
	o.tiling.br = 1;
	o.tiling.bc = 2;
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

	draw(ui, &g, 80, 24);
	/* Entry (9, 14): tile (2, 3). */
	k.x = ui->heat_geom.x0 + 14 * ui->heat_geom.sx;
	k.y = ui->heat_geom.y0 + 9 * ui->heat_geom.sy;
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
		    "%ld, not %ld", ui_phase_name(ph), shown_flops(&g), want[ph]);
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
	static const float sc[4] = { 1, 2, 1001, 1002 }, v[4] = { 2, -1, 4, 8 };
	struct options o;
	struct ui *ui;
	struct ui_grid g = { 0 };

	options_init(&o);
	o.spec.s.data = sc;
	o.spec.s.rows = 1;
	o.spec.s.cols = 4;
	o.spec.v.data = v;
	o.spec.v.rows = 4;
	o.spec.v.cols = 1;
	o.tiling.br = 1;
	o.tiling.bc = 2;
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

/* Every key of the table is in the help screen and in the manual page. */
START_TEST(test_help_and_doc_list_every_key)
{
	struct ui *ui = new_view(NULL, &utf8_style);
	struct ui_grid g = { 0 };
	const struct ui_keydef *d;
	const char *top = getenv("top_srcdir");
	char path[1024], *doc, word[32];
	const char *p, *e;
	FILE *f;
	long n;

	press(ui, '?');
	draw(ui, &g, 100, 40);
	snprintf(path, sizeof path, "%s/doc/flashstep.1", top ? top : ".");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	doc = calloc(1, 1 << 16);
	n = (long)fread(doc, 1, (1 << 16) - 1, f);
	fclose(f);
	ck_assert_int_gt(n, 100);
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
			ck_assert_msg(strstr(doc, word) != NULL, "doc lacks key '%s'",
			    word);
		}
	}
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
	tcase_add_test(tc, test_heatmap_exact);
	tcase_add_test(tc, test_rebuild_keeps_position);
	tcase_add_test(tc, test_bug_cycle);
	tcase_add_test(tc, test_form);
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
	tcase_add_test(tc, test_random_keys);
	suite_add_tcase(s, tc);
	return s;
}
