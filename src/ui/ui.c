/*
 * ui.c - the view model's state: the problem and sim it shows, where the
 * reader is (step, phase, focused row), rebuilds that keep that place,
 * the modes (help, form, prompt, play, GPU) and the background work.
 * It reads the model and never recomputes attention; no curses.
 *
 * States of the key handling (ui_handle_key):
 *
 *   normal --e--> form --Enter (valid) / Esc--> normal
 *   normal --?--> help --any key--> normal
 *   normal --g--> prompt --Enter / Esc--> normal
 */
#include "config.h"

#include "ui_int.h"

#include "gpu/gpu.h"

#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct ui_glyphs ui_glyphs_utf8 = {
	.arrow = "\u2192", .alpha = "\u03b1", .ell = "\u2113",
	.sum = "\u03a3", .dot = "\u00b7", .imul = "", .prime = "\u2032",
	.transp = "\u1d40", .times = "\u00d7", .ninf = "-\u221e",
	.ellipsis = "\u2026", .vline = "\u2502", .hline = "\u2500",
	.corner = { "\u250c", "\u2510", "\u2514", "\u2518" },
	.focus = "\u25b6", .colmark = "\u25bc",
	.heat = { "\u00b7", "\u2591", "\u2592", "\u2593", "\u2588" },
	.masked = " ", .skipped = "\u2571", .unknown = "?",
};

static const struct ui_glyphs ui_glyphs_ascii = {
	.arrow = "->", .alpha = "a", .ell = "l", .sum = "sum ", .dot = "*",
	.imul = "*", .prime = "'", .transp = "^T", .times = "x",
	.ninf = "-inf", .ellipsis = "...", .vline = "|", .hline = "-",
	.corner = { "+", "+", "+", "+" }, .focus = ">", .colmark = "v",
	.heat = { ".", ":", "+", "#", "@" },
	.masked = " ", .skipped = "/", .unknown = "?",
};

const struct ui_glyphs *
ui_glyphs(int unicode)
{
	return unicode ? &ui_glyphs_utf8 : &ui_glyphs_ascii;
}

static const char *ui_phase_names[SIM_PHASES] = {
	[SIM_PHASE_LOAD] = "load",
	[SIM_PHASE_SCORES] = "scores",
	[SIM_PHASE_MAX] = "max",
	[SIM_PHASE_RESCALE] = "rescale",
	[SIM_PHASE_EXP] = "exp",
	[SIM_PHASE_UPDATE] = "update",
	[SIM_PHASE_FINALIZE] = "finalize",
};

const char *
ui_phase_name(int phase)
{
	return phase >= 0 && phase < SIM_PHASES ? ui_phase_names[phase] : "?";
}

const char *
ui_num(const struct ui *ui, float x, int width, char *buf, size_t len)
{
	return ui_num_prec(ui, x, width, 5, buf, len);
}

int
ui_digits(int n)
{
	int d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

const char *
ui_num_prec(const struct ui *ui, float x, int width, int digits, char *buf,
    size_t len)
{
	char whole[64];
	int prec;

	if (isnan(x))
		snprintf(buf, len, "nan");
	else if (isinf(x))
		snprintf(buf, len, "%s", x < 0 ? ui->gl->ninf : "inf");
	else {
		/* digits significant digits, fewer until it fits. */
		for (prec = digits; prec >= 1; prec--) {
			snprintf(buf, len, "%.*g", prec, (double)x);
			if ((int)strlen(buf) <= width)
				break;
		}
		/* A whole part that fits is never cut to an exponent: 1002,
		 * not 1e+03 (the seed's scores). */
		if (strchr(buf, 'e') != NULL && fabs((double)x) >= 1.0 &&
		    snprintf(whole, sizeof whole, "%.0f", (double)x) <= width)
			snprintf(buf, len, "%s", whole);
	}
	return buf;
}

void
ui_style_detect(struct ui_style *st)
{
	const char *nc = getenv("NO_COLOR");
	const char *cs;

	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	st->unicode = cs != NULL && (strcasecmp(cs, "UTF-8") == 0 ||
	    strcasecmp(cs, "utf8") == 0);
	/* no-color.org: present and not empty. */
	st->color = nc == NULL || *nc == '\0';
}

/* A fresh heatmap layout for the current problem (computed in ui_idle). */
static void
ui_heat_reset(struct ui *ui)
{
	char err[160];

	heatmap_free(&ui->heat);
	ui->pool_bands = -1;	/* the pooled picture is stale */
	ui->heat_ok = heatmap_init(&ui->heat, UI_PROBLEM(ui), 0, err,
	    sizeof err) == 0;
	if (!ui->heat_ok)
		ui_message(ui, UI_ROLE_ERROR, "heatmap: %s", err);
}

static void
ui_copy_options(struct ui *ui, const struct options *o)
{
	ui->opts = *o;
	ui->opts.args = NULL;
	ui->opts.nargs = 0;
}

struct ui *
ui_new(const struct options *o, const struct ui_style *st, char *err,
    size_t errlen)
{
	struct ui *ui;

	ui = util_calloc(1, sizeof *ui, "view", err, errlen);
	if (ui == NULL)
		return NULL;
	ui_copy_options(ui, o);
	ui->style = *st;
	ui->gl = ui_glyphs(st->unicode);
	ui->gpu_step = -1;
	ui->speed = 1;
	ui->want_phase = SIM_PHASE_LAST;
	if (problem_build(&o->spec, &ui->probs[0], err, errlen) != 0)
		goto fail;
	ui->sim = sim_new(&ui->probs[0], &o->tiling, &o->rule, err, errlen);
	if (ui->sim == NULL)
		goto fail;
	traffic_standard(UI_PROBLEM(ui), &ui->standard);
	ui_heat_reset(ui);
	/* The first frame shows step 0 whole: every number of the step. */
	sim_seek(ui->sim, 0, SIM_PHASE_LAST);
	return ui;
fail:
	ui_free(ui);
	return NULL;
}

void
ui_free(struct ui *ui)
{
	if (ui == NULL)
		return;
	sim_free(ui->sim);
	problem_free(&ui->probs[0]);
	problem_free(&ui->probs[1]);
	heatmap_free(&ui->heat);
	free(ui->pool);
	free(ui->hist_m);
	free(ui->hist_l);
	free(ui->hist_ok);
	free(ui->gpu_m);
	free(ui->gpu_alpha);
	free(ui->gpu_l);
	free(ui);
}

struct sim *
ui_sim(struct ui *ui)
{
	return ui->sim;
}

const struct options *
ui_options(const struct ui *ui)
{
	return &ui->opts;
}

/*
 * Where the old position lands in a new schedule: the same tile (i, j)
 * when it still exists; else, in the same row block, the last tile the
 * mask keeps; else the same step number, clamped.
 */
static long
ui_nearest_step(const struct schedule *s, const struct sim_view *old)
{
	int i = old->tile.i < s->tr ? old->tile.i : s->tr - 1;
	int j = old->tile.j < s->tc ? old->tile.j : s->tc - 1;
	long k = schedule_step_of(s, i, j);

	if (k < 0 && s->jend[i] > 0)
		k = schedule_step_of(s, i, s->jend[i] - 1);
	if (k < 0)
		k = old->step < s->nsteps ? old->step : s->nsteps - 1;
	return k;
}

int
ui_configure(struct ui *ui, const struct options *o, char *err, size_t errlen)
{
	const struct sim_view *v = sim_view(ui->sim);
	int next = 1 - ui->cur, phase = (int)v->phase, keep_heat;
	struct problem *np = &ui->probs[next];
	struct sim *ns;
	long k;

	problem_free(np);
	if (problem_build(&o->spec, np, err, errlen) != 0)
		return -1;
	ns = sim_new(np, &o->tiling, &o->rule, err, errlen);
	if (ns == NULL) {
		problem_free(np);
		return -1;
	}
	k = ui_nearest_step(sim_schedule(ns), v);
	/* A step that does not finalize clamps FINALIZE to its last phase. */
	sim_seek(ns, k, phase);
	keep_heat = ui->heat_ok && heatmap_same_scores(UI_PROBLEM(ui), np);

	sim_free(ui->sim);
	problem_free(UI_PROBLEM(ui));
	ui->sim = ns;
	ui->gen++;
	ui->cur = next;
	ui_copy_options(ui, o);
	traffic_standard(np, &ui->standard);
	if (!keep_heat)
		ui_heat_reset(ui);
	ui->warm_i = ui->warm_j = ui->warm_done = 0;
	/* The GPU's trace belongs to the old problem. */
	gpu_forget();
	ui->gpu_step = -1;
	ui_clamp_focus(ui);
	if (ui->gpu)
		ui_gpu_refresh(ui);
	return 0;
}

int
ui_history(struct ui *ui, int j0, int j1, const float **m, const float **l)
{
	const struct schedule *s = sim_schedule(ui->sim);
	const struct sim_view *v = sim_view(ui->sim);
	long back = v->step;
	int phase = (int)v->phase, i = v->tile.i, j, moved = 0;
	size_t n = (size_t)s->tc * (size_t)s->br;

	if (ui->hist_m == NULL || ui->hist_gen != ui->gen ||
	    ui->hist_tc != s->tc || ui->hist_br != s->br) {
		free(ui->hist_m);
		free(ui->hist_l);
		free(ui->hist_ok);
		ui->hist_m = malloc(n * sizeof *ui->hist_m);
		ui->hist_l = malloc(n * sizeof *ui->hist_l);
		ui->hist_ok = calloc((size_t)s->tc, 1);
		ui->hist_gen = ui->gen;
		ui->hist_tc = s->tc;
		ui->hist_br = s->br;
		ui->hist_i = i;
		if (ui->hist_m == NULL || ui->hist_l == NULL || ui->hist_ok == NULL) {
			free(ui->hist_m);
			free(ui->hist_l);
			free(ui->hist_ok);
			ui->hist_m = ui->hist_l = NULL;
			ui->hist_ok = NULL;
			return -1;
		}
	}
	if (ui->hist_i != i) {
		memset(ui->hist_ok, 0, (size_t)s->tc);
		ui->hist_i = i;
	}
	/* The current tile is in the view already: no seek. */
	memcpy(ui->hist_m + (size_t)v->tile.j * s->br, v->m_new,
	    (size_t)v->rows * sizeof *v->m_new);
	memcpy(ui->hist_l + (size_t)v->tile.j * s->br, v->l_new,
	    (size_t)v->rows * sizeof *v->l_new);
	ui->hist_ok[v->tile.j] = 1;
	/* The others in increasing j: each seek then replays one tile. */
	for (j = j0 < 0 ? 0 : j0; j <= j1 && j < s->jend[i]; j++) {
		if (ui->hist_ok[j])
			continue;
		sim_seek(ui->sim, schedule_step_of(s, i, j), SIM_PHASE_LOAD);
		moved = 1;
		memcpy(ui->hist_m + (size_t)j * s->br, v->m_new,
		    (size_t)v->rows * sizeof *v->m_new);
		memcpy(ui->hist_l + (size_t)j * s->br, v->l_new,
		    (size_t)v->rows * sizeof *v->l_new);
		ui->hist_ok[j] = 1;
	}
	if (moved)
		sim_seek(ui->sim, back, phase);
	*m = ui->hist_m;
	*l = ui->hist_l;
	return 0;
}

void
ui_clamp_focus(struct ui *ui)
{
	const struct sim_view *v = sim_view(ui->sim);

	if (ui->focus >= v->rows)
		ui->focus = v->rows - 1;
	if (ui->focus < 0)
		ui->focus = 0;
}

int
ui_seek(struct ui *ui, long k, int phase)
{
	if (sim_seek(ui->sim, k, phase) != 0)
		return -1;
	ui_clamp_focus(ui);
	if (ui->gpu)
		ui_gpu_refresh(ui);
	return 0;
}

void
ui_set_focus(struct ui *ui, int row)
{
	ui->focus = row;
	ui_clamp_focus(ui);
}

int
ui_focus(const struct ui *ui)
{
	return ui->focus;
}

void
ui_settle(struct ui *ui)
{
	ui->playing = 0;
	ui->help = 0;
	ui->form.open = 0;
	ui->prompt.open = 0;
}

void
ui_message(struct ui *ui, int role, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ui->msg, sizeof ui->msg, fmt, ap);
	va_end(ap);
	ui->msg_role = role;
}

int
ui_step(struct ui *ui, long delta)
{
	const struct sim_view *v = sim_view(ui->sim);
	long k = v->step + delta, n = sim_steps(ui->sim);

	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	if (k == v->step)
		return -1;
	return ui_seek(ui, k, ui->want_phase);
}

int
ui_phase(struct ui *ui, int delta)
{
	if (sim_move_phase(ui->sim, delta) != 0)
		return -1;
	ui->want_phase = (int)sim_view(ui->sim)->phase;
	ui_clamp_focus(ui);
	if (ui->gpu)
		ui_gpu_refresh(ui);
	return 0;
}

/* Rebuilds with o, saying what changed (or why it could not). */
static int
ui_reconfigure(struct ui *ui, const struct options *o, const char *what)
{
	char err[300];

	if (ui_configure(ui, o, err, sizeof err) != 0) {
		ui_message(ui, UI_ROLE_ERROR, "%s", err);
		return -1;
	}
	ui_message(ui, UI_ROLE_MESSAGE, "%s", what);
	return 0;
}

int
ui_cycle_convention(struct ui *ui)
{
	struct options o = ui->opts;
	char what[200];

	o.rule.convention = o.rule.convention == CONV_UNNORMALIZED ?
	    CONV_NORMALIZED : CONV_UNNORMALIZED;
	o.convention_set = 1;
	if (!online_rule_valid(&o.rule)) {
		/* forget-old-denominator exists only for normalized o. */
		o.rule.bug = BUG_NONE;
		snprintf(what, sizeof what, "convention %s: bug set to none "
		    "(forget-old-denominator needs normalized)",
		    online_convention_name(o.rule.convention));
	} else
		snprintf(what, sizeof what, "convention %s: the accumulator "
		    "holds %s", online_convention_name(o.rule.convention),
		    o.rule.convention == CONV_UNNORMALIZED ? "u = sum p V" :
		    "o = u / l");
	return ui_reconfigure(ui, &o, what);
}

int
ui_cycle_bug(struct ui *ui)
{
	struct options o = ui->opts;
	char what[200];

	o.rule.bug = (enum online_bug)(((int)o.rule.bug + 1) % ONLINE_BUGS);
	if (!online_rule_valid(&o.rule)) {
		o.rule.convention = CONV_NORMALIZED;
		o.convention_set = 1;
		snprintf(what, sizeof what, "bug %s needs the normalized "
		    "convention: switched to it", online_bug_name(o.rule.bug));
	} else
		snprintf(what, sizeof what, "bug %s%s", online_bug_name(o.rule.bug),
		    o.rule.bug == BUG_NONE ? ": the correct update" : "");
	return ui_reconfigure(ui, &o, what);
}

int
ui_toggle_order(struct ui *ui)
{
	struct options o = ui->opts;
	char what[120];

	o.tiling.order = o.tiling.order == ORDER_FA2 ? ORDER_FA1 : ORDER_FA2;
	snprintf(what, sizeof what, "loop order %s: %s",
	    schedule_order_name(o.tiling.order), o.tiling.order == ORDER_FA2 ?
	    "for each query block, for each key block" :
	    "for each key block, for each query block");
	return ui_reconfigure(ui, &o, what);
}

int
ui_toggle_mask(struct ui *ui)
{
	struct options o = ui->opts;

	o.spec.causal = !o.spec.causal;
	return ui_reconfigure(ui, &o, o.spec.causal ?
	    "causal mask on: query r sees key c when c <= r + Tk - Tq" :
	    "mask off: every query sees every key");
}

/* Arrays for Br values of the GPU's m, alpha and l. */
static int
ui_gpu_arrays(struct ui *ui)
{
	size_t n = (size_t)sim_schedule(ui->sim)->br;
	float *m = realloc(ui->gpu_m, n * sizeof *m);

	if (m != NULL)
		ui->gpu_m = m;
	m = realloc(ui->gpu_alpha, n * sizeof *m);
	if (m != NULL)
		ui->gpu_alpha = m;
	m = realloc(ui->gpu_l, n * sizeof *m);
	if (m != NULL)
		ui->gpu_l = m;
	return ui->gpu_m != NULL && ui->gpu_alpha != NULL && ui->gpu_l != NULL ?
	    0 : -1;
}

void
ui_gpu_refresh(struct ui *ui)
{
	const struct sim_view *v = sim_view(ui->sim);
	char err[240];

	if (v->step == ui->gpu_step)
		return;
	if (ui_gpu_arrays(ui) != 0) {
		ui_message(ui, UI_ROLE_ERROR, "G: out of memory");
		ui->gpu = 0;
		return;
	}
	if (gpu_step_values(UI_PROBLEM(ui), &ui->opts.tiling, &ui->opts.rule,
	    v->step, ui->gpu_m, ui->gpu_alpha, ui->gpu_l, err,
	    sizeof err) != 0) {
		ui_message(ui, UI_ROLE_ERROR, "G: %s", err);
		ui->gpu = 0;
		ui->gpu_step = -1;
		return;
	}
	ui->gpu_step = v->step;
}

void
ui_gpu_toggle(struct ui *ui)
{
	if (ui->gpu) {
		ui->gpu = 0;
		ui_message(ui, UI_ROLE_MESSAGE, "GPU values hidden");
		return;
	}
	ui->gpu = 1;
	ui->gpu_step = -1;
	ui_gpu_refresh(ui);
	if (ui->gpu)
		ui_message(ui, UI_ROLE_MESSAGE, "G: the teaching kernel's m', "
		    "alpha, l' for this step, beside the simulator's");
}

void
ui_set_hidden(struct ui *ui, unsigned parts)
{
	ui->hidden = parts;
}

void
ui_set_heat_max(struct ui *ui, int cols)
{
	ui->heat_max = cols;
}

void
ui_min_size(const struct ui *ui, int *w, int *h)
{
	ui_layout_min(ui, w, h);
}

void
ui_draw_too_small(struct ui_grid *g, struct ui_rect r, int w, int h)
{
	char text[64];
	int n;

	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	n = snprintf(text, sizeof text, "terminal too small (need %dx%d)", w, h);
	ui_grid_text(g, r.x + (r.w > n ? (r.w - n) / 2 : 0), r.y + r.h / 2, r.w,
	    UI_ROLE_ERROR, text);
}

void
ui_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	int w, h;

	struct ui_rect outer = g->clip;

	ui_clamp_focus(ui);
	ui_layout_min(ui, &w, &h);
	memset(ui->slot, 0, sizeof ui->slot);
	ui_grid_clip(g, r);
	if (r.w < w || r.h < h)
		ui_draw_too_small(g, r, w, h);
	else {
		ui_layout_draw(ui, g, r);
		if (ui->help)
			ui_keys_draw_help(ui, g, r);
		if (ui->form.open)
			ui_form_draw(ui, g, r);
	}
	g->clip = outer;
}

/* Which pane a click landed in, and let it handle the click. */
static int
ui_click(struct ui *ui, const struct ui_key *k)
{
	static const struct ui_pane *panes[UI_SLOTS] = {
		[UI_SLOT_HEAT] = &ui_pane_heat,
		[UI_SLOT_TILE] = &ui_pane_tile,
		[UI_SLOT_STATE] = &ui_pane_state,
	};
	struct ui_rect r;
	int s;

	for (s = 0; s < UI_SLOTS; s++) {
		r = ui->slot[s];
		if (panes[s] == NULL || panes[s]->handle_key == NULL ||
		    k->x < r.x || k->x >= r.x + r.w || k->y < r.y ||
		    k->y >= r.y + r.h)
			continue;
		return panes[s]->handle_key(ui, k, r);
	}
	return UI_HANDLED;
}

int
ui_handle_key(struct ui *ui, const struct ui_key *k)
{
	int flags;

	if (k->code == UI_KEY_RESIZE)
		return UI_HANDLED | UI_REDRAW;
	/* A message stays until the next key. */
	ui->msg[0] = '\0';
	if (ui->form.open)
		flags = ui_form_key(ui, k);
	else if (ui->help) {
		ui->help = 0;
		flags = UI_HANDLED | UI_REDRAW;
	} else if (ui->prompt.open)
		flags = ui_keys_prompt_key(ui, k);
	else if (k->code == UI_KEY_MOUSE)
		flags = ui_click(ui, k) | UI_REDRAW;
	else
		flags = ui_keys_dispatch(ui, k);
	return flags | UI_REDRAW;
}

/*
 * Replays row blocks ahead of the reader so the sim keeps checkpoints all
 * along them: a later jump then replays a few tiles, not up to Tc.  The
 * sim goes back to where it was (seeking is exact).  Returns 1 when all
 * row blocks are warm.
 */
static int
ui_warm(struct ui *ui, double deadline)
{
	const struct schedule *s = sim_schedule(ui->sim);
	const struct sim_view *v = sim_view(ui->sim);
	long back = v->step;
	int phase = (int)v->phase, every = sim_checkpoint_every(ui->sim);
	int moved = 0, jend, j;

	/* With few tiles per row block a cold replay is short anyway. */
	if (s->tc <= 2 * every)
		ui->warm_done = 1;
	while (!ui->warm_done && (!moved || deadline <= 0 ||
	    util_now() < deadline)) {
		if (ui->warm_i >= s->tr) {
			ui->warm_done = 1;
			break;
		}
		jend = s->jend[ui->warm_i];
		/* A few checkpoints' worth at a time keeps each slice short. */
		j = ui->warm_j + 4 * every;
		if (j > jend - 1)
			j = jend - 1;
		if (j >= 0) {
			sim_seek(ui->sim, schedule_step_of(s, ui->warm_i, j),
			    SIM_PHASE_LOAD);
			moved = 1;
		}
		if (j >= jend - 1) {
			ui->warm_i++;
			ui->warm_j = 0;
		} else
			ui->warm_j = j;
	}
	if (moved)
		sim_seek(ui->sim, back, phase);
	return ui->warm_done;
}

/* Steps per second while playing: 2^speed. */
static double
ui_play_rate(const struct ui *ui)
{
	return ldexp(1.0, ui->speed);
}

int
ui_idle(struct ui *ui, double deadline, int *wait_ms)
{
	double now, rate, period;
	int flags = 0;
	long n;

	*wait_ms = -1;
	if (ui->heat_ok && !heatmap_complete(&ui->heat)) {
		heatmap_compute(&ui->heat, UI_PROBLEM(ui), deadline);
		/* Progress is drawn a few times a second, not every slice. */
		now = util_now();
		if (heatmap_complete(&ui->heat) || now - ui->heat_drawn > 0.1) {
			flags |= UI_REDRAW;
			ui->heat_drawn = now;
		}
		if (!heatmap_complete(&ui->heat))
			*wait_ms = 0;
	} else if (!ui->warm_done && !ui_warm(ui, deadline))
		*wait_ms = 0;
	if (!ui->playing)
		return flags;
	now = util_now();
	rate = ui_play_rate(ui);
	/* At most 30 frames a second; faster rates take several steps. */
	period = rate > 30.0 ? 1.0 / 30.0 : 1.0 / rate;
	if (now >= ui->next_tick) {
		n = rate > 30.0 ? (long)(rate / 30.0) : 1;
		if (ui_step(ui, n) != 0) {
			ui->playing = 0;
			ui_message(ui, UI_ROLE_MESSAGE, "played to the last step");
			return flags | UI_REDRAW;
		}
		flags |= UI_REDRAW;
		ui->next_tick = ui->next_tick + period > now ?
		    ui->next_tick + period : now + period;
	}
	n = (long)((ui->next_tick - now) * 1000.0) + 1;
	if (*wait_ms < 0 || n < *wait_ms)
		*wait_ms = (int)n;
	return flags;
}
