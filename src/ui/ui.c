/*
 * ui.c - the view model's state: the problem and sim it shows (and, under
 * a bug mode, the correct run beside it), where the reader is (step,
 * phase, focused row), the moves, and rebuilds that keep that place.  It
 * reads the model and never recomputes attention; it calls nothing
 * above it (keys, form, drawing); no curses.
 */
#include "config.h"

#include "ui_int.h"


#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The correct run for the current problem under a bug mode (none
 * without a bug, or without memory for it: then nothing stands beside
 * the wrong values). */
static void
ui_correct_reset(struct ui *ui)
{
	struct online_rule ok = ui->opts.rule;
	char err[160];

	sim_free(ui->correct);
	ui->correct = NULL;
	if (ok.bug == BUG_NONE)
		return;
	ok.bug = BUG_NONE;
	ui->correct = sim_new(UI_PROBLEM(ui), &ui->opts.tiling, &ok, err,
	    sizeof err);
}

const struct sim_view *
ui_correct(struct ui *ui)
{
	long k = sim_view(ui->sim)->step;

	if (ui->correct == NULL)
		return NULL;
	if (sim_view(ui->correct)->step != k &&
	    sim_seek(ui->correct, k, SIM_PHASE_LAST) != 0)
		return NULL;
	return sim_view(ui->correct);
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
	ui->play.speed = 1;
	ui->play.until = -1;
	ui->want_phase = SIM_PHASE_LAST;
	if (problem_build(&o->spec, &ui->probs[0], err, errlen) != 0)
		goto fail;
	ui->sim = sim_new(&ui->probs[0], &o->tiling, &o->rule, err, errlen);
	if (ui->sim == NULL)
		goto fail;
	traffic_standard(UI_PROBLEM(ui), &ui->standard);
	ui_heat_reset(ui);
	ui_correct_reset(ui);
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
	sim_free(ui->correct);
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
	gpucheck_trace_free(ui->gpu_trace);
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

	/* The correct run borrows the old problem too: it goes first. */
	sim_free(ui->correct);
	ui->correct = NULL;
	sim_free(ui->sim);
	problem_free(UI_PROBLEM(ui));
	ui->sim = ns;
	ui->gen++;
	ui->cur = next;
	ui_copy_options(ui, o);
	traffic_standard(np, &ui->standard);
	ui_correct_reset(ui);
	if (!keep_heat)
		ui_heat_reset(ui);
	ui->warm_i = ui->warm_j = ui->warm_done = 0;
	/* The GPU's trace belongs to the old problem. */
	gpucheck_trace_free(ui->gpu_trace);
	ui->gpu_trace = NULL;
	ui->gpu_step = -1;
	ui_clamp_focus(ui);
	if (ui->gpu)
		ui_gpu_refresh(ui);
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
	ui_play_stop(ui, NULL);
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
	if (ui->gpu_trace == NULL)
		ui->gpu_trace = gpucheck_trace_new(gpu_kernel_find("teaching"),
		    UI_PROBLEM(ui), &ui->opts.tiling, &ui->opts.rule, err,
		    sizeof err);
	if (ui->gpu_trace == NULL || gpucheck_trace_step(ui->gpu_trace,
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
