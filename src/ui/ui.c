/*
 * ui.c - the view model's state: the problem and sim it shows (and, under
 * a bug mode, the correct run beside it), where the reader is (step,
 * phase, focused row), the moves, and rebuilds that keep that place.  It
 * reads the model and never recomputes attention; it calls nothing
 * above it (keys, form, drawing); no curses.
 */
#include "config.h"

#include "ui_int.h"

#include <assert.h>
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
	ui->heat_gen++;		/* what the pane pooled from it is stale */
	if (ui->vl.nseq > 0) {
		ui->heat_ok = 0;	/* one summary per sequence: ui->vl */
		return;
	}
	ui->heat_ok = heatmap_init(&ui->heat, UI_PROBLEM(ui), 0, err,
	    sizeof err) == 0;
	if (!ui->heat_ok)
		ui_message(ui, UI_ROLE_ERROR, "heatmap: %s", err);
}

/* The correct runs for the current problem under bug modes, one per
 * segment whose rule has a bug (none without memory for it: then nothing
 * stands beside the wrong values). */
static void
ui_correct_reset(struct ui *ui)
{
	struct online_rule ok = ui->opts.rule;
	struct combine_rule merge = ui->opts.combine;
	struct backward_input in;
	char err[160];

	sim_free(ui->correct);
	combine_free(ui->correct_comb);
	backward_free(ui->correct_bwd);
	ui->correct = NULL;
	ui->correct_comb = NULL;
	ui->correct_bwd = NULL;
	if (ok.bug != BUG_NONE || ok.mask_bug != MASK_BUG_NONE) {
		ok.bug = BUG_NONE;
		ok.mask_bug = MASK_BUG_NONE;
		ui->correct = sim_new_split(UI_PROBLEM(ui), &ui->opts.tiling,
		    &ui->opts.split, &ok, err, sizeof err);
	}
	if (ui->line.comb != NULL && merge.bug != MERGE_BUG_NONE) {
		merge.bug = MERGE_BUG_NONE;
		ui->correct_comb = combine_new(ui->sim, &merge, err, sizeof err);
	}
	if (ui->line.bwd != NULL && ui->opts.grad_bug != BWD_BUG_NONE) {
		in.o = ui->line.o;
		in.lse = ui->line.lse;
		in.m = ui->line.m;
		in.dout = ui->line.dout;
		ui->correct_bwd = backward_new(UI_PROBLEM(ui), &ui->opts.tiling, &in,
		    BWD_BUG_NONE, err, sizeof err);
	}
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

const struct combine_view *
ui_correct_comb(struct ui *ui)
{
	long k;

	if (ui->correct_comb == NULL)
		return NULL;
	k = combine_view(ui->line.comb)->step;
	if (combine_view(ui->correct_comb)->step != k &&
	    combine_seek(ui->correct_comb, k, COMBINE_PHASE_LAST) != 0)
		return NULL;
	return combine_view(ui->correct_comb);
}

const struct backward_view *
ui_correct_bwd(struct ui *ui)
{
	long k;

	if (ui->correct_bwd == NULL)
		return NULL;
	k = backward_view(ui->line.bwd)->step;
	if (backward_view(ui->correct_bwd)->step != k &&
	    backward_seek(ui->correct_bwd, k, BWD_PHASE_LAST) != 0)
		return NULL;
	return backward_view(ui->correct_bwd);
}

static void
ui_copy_options(struct ui *ui, const struct options *o)
{
	ui->opts = *o;
	ui->opts.args = NULL;
	ui->opts.nargs = 0;
	ui->opts.given = NULL;
	ui->opts.ngiven = 0;
}

int
ui_options_check(const struct options *o, char *err, size_t errlen)
{
	static const char *const files[] = {
		"grad-q", "grad-k", "grad-v", "grad-scores",
	};
	size_t i;

	for (i = 0; i < sizeof files / sizeof files[0]; i++)
		if (options_given(o, files[i]))
			return util_error(err, errlen, "--%s writes a file; the view "
			    "writes none (use run or trace)", files[i]);
	if (o->spec.heads > 1)
		return util_error(err, errlen, "the view shows one head: drop "
		    "--heads (run and trace take grouped heads)");
	return 0;
}

/*
 * The problem (into *p), its sim and its timeline from o.  With the
 * terminal open, a build that takes long (the forward run to its end for
 * the backward or the combine) shows its progress and stops on q: keys
 * says what q does then.  Returns 0, or -1 with err set and nothing
 * built; *stopped says whether q (or a signal) stopped it.
 */
static int
ui_build(const struct options *o, const struct ui_glyphs *gl,
    const char *keys, struct problem *p, struct sim **sim,
    struct fulltimeline *line, struct ui_varlen *vl, int *stopped, char *err,
    size_t errlen)
{
	struct ui_busy busy;
	struct fulltimeline_progress pr = { ui_busy_step, &busy };
	int r;

	*stopped = 0;
	if (ui_options_check(o, err, errlen) != 0 ||
	    problem_build(&o->spec, p, err, errlen) != 0)
		return -1;
	if (p->nseq > 0) {
		/* a packed batch: a sim per sequence (ui_varlen.c) */
		if (ui_varlen_build(o, p, vl, line, err, errlen) == 0) {
			*sim = vl->sims[0];
			return 0;
		}
		problem_free(p);
		return -1;
	}
	*sim = sim_new_split(p, &o->tiling, &o->split, &o->rule, err, errlen);
	if (*sim != NULL) {
		ui_busy_begin(&busy, gl, keys);
		r = fulltimeline_build_progress(o, p, *sim, line,
		    ui_term_is_open() ? &pr : NULL, err, errlen);
		*stopped = busy.stopped;
		ui_busy_end(&busy);
		if (r == 0)
			return 0;
	}
	sim_free(*sim);
	*sim = NULL;
	problem_free(p);
	return -1;
}

/* What the current problem is measured against. */
static void
ui_standards(struct ui *ui)
{
	traffic_standard(UI_PROBLEM(ui), &ui->standard);
	traffic_standard_backward(UI_PROBLEM(ui), &ui->standard_bwd);
}

struct ui *
ui_new(const struct options *o, const struct ui_style *st, char *err,
    size_t errlen)
{
	struct ui *ui;
	int k, stopped;

	ui = util_calloc(1, sizeof *ui, "view", err, errlen);
	if (ui == NULL)
		return NULL;
	ui_copy_options(ui, o);
	ui->gl = ui_glyphs(st->unicode);
	ui->gpu_step = -1;
	ui->play.speed = 1;
	ui->play.until = -1;
	for (k = 0; k < TIMELINE_KINDS; k++)
		ui->want_phase[k] = -1;
	if (ui_build(o, ui->gl, "q quits", &ui->probs[0], &ui->sim, &ui->line,
	    &ui->vl, &stopped, err, errlen) != 0) {
		if (stopped && errlen > 0)
			err[0] = '\0';		/* not an error: the reader quit */
		goto fail;
	}
	ui_standards(ui);
	ui_heat_reset(ui);
	ui_correct_reset(ui);
	/* The first frame shows step 0 whole: every number of the step. */
	timeline_seek(ui->line.tl, 0, -1);
	ui_varlen_follow(ui);
	return ui;
fail:
	ui_free(ui);
	return NULL;
}

void
ui_free(struct ui *ui)
{
	int i;

	if (ui == NULL)
		return;
	fulltimeline_close(&ui->line);
	if (ui->vl.nseq == 0)
		sim_free(ui->sim);	/* a packed batch's are ui->vl's */
	ui_varlen_release(&ui->vl);
	sim_free(ui->correct);
	combine_free(ui->correct_comb);
	backward_free(ui->correct_bwd);
	problem_free(&ui->probs[0]);
	problem_free(&ui->probs[1]);
	heatmap_free(&ui->heat);
	for (i = ui->npane_own - 1; i >= 0; i--)
		ui->pane_own[i].pane->free(ui->pane_own[i].data);
	free(ui->gpu_m);
	free(ui->gpu_alpha);
	free(ui->gpu_l);
	gpucheck_trace_free(ui->gpu_trace);
	ui_pipe_close(ui);
	ui_fp8_close(ui);
	free(ui);
}

void *
ui_pane_data(struct ui *ui, const struct ui_pane *p)
{
	struct ui_pane_own *own;
	int i;

	if (p->init == NULL)
		return NULL;
	for (i = 0; i < ui->npane_own; i++)
		if (ui->pane_own[i].pane == p)
			return ui->pane_own[i].data;
	/* More panes with state than room: raise UI_PANE_OWN_MAX. */
	assert(ui->npane_own < UI_PANE_OWN_MAX && p->free != NULL);
	if (ui->npane_own == UI_PANE_OWN_MAX)
		return NULL;
	own = &ui->pane_own[ui->npane_own];
	own->data = p->init(ui);
	if (own->data == NULL)
		return NULL;
	own->pane = p;
	ui->npane_own++;
	return own->data;
}

struct sim *
ui_sim(struct ui *ui)
{
	return ui->sim;
}

void
ui_position(const struct ui *ui, struct timeline_pos *pos)
{
	timeline_position(ui->line.tl, pos);
}

enum timeline_kind
ui_kind(const struct ui *ui)
{
	struct timeline_pos pos;

	timeline_position(ui->line.tl, &pos);
	return timeline_segment(ui->line.tl, pos.seg)->kind;
}

const struct combine_view *
ui_comb_view(const struct ui *ui)
{
	return combine_view(ui->line.comb);
}

const struct backward_view *
ui_bwd_view(const struct ui *ui)
{
	return backward_view(ui->line.bwd);
}

int
ui_rows(const struct ui *ui)
{
	switch (ui_kind(ui)) {
	case TIMELINE_COMBINE:
		return ui_comb_view(ui)->rows;
	case TIMELINE_BACKWARD:
		return ui_bwd_view(ui)->rows;
	default:
		return sim_view(ui->sim)->rows;
	}
}

/*
 * Where tile (i, j) lands in a new schedule: the same tile when it still
 * exists; else, in the same row block, the last tile the mask keeps;
 * else the same step number, clamped.
 */
static long
ui_nearest_step(const struct schedule *s, int i, int j, long step)
{
	long k;

	i = i < s->tr ? i : s->tr - 1;
	j = j < s->tc ? j : s->tc - 1;
	k = schedule_step_of(s, i, j);
	if (k < 0 && s->jend[i] > 0)
		k = schedule_step_of(s, i, s->jend[i] - 1);
	if (k < 0)
		k = step < s->nsteps ? step : s->nsteps - 1;
	return k;
}

/*
 * The old position (segment kind, tile or merge, phase) in the new
 * timeline: the same place in a segment of the same kind, or else the
 * end of the last segment before where it was.
 */
static void
ui_keep_position(const struct fulltimeline *old, struct sim *osim,
    struct fulltimeline *line, struct sim *nsim, const struct ui_varlen *nvl)
{
	struct timeline_pos pos;
	enum timeline_kind kind;
	const struct sim_view *fv;
	const struct backward_view *bv;
	const struct combine_view *cv;
	int seg, i, n;
	long k;

	timeline_position(old->tl, &pos);
	kind = timeline_segment(old->tl, pos.seg)->kind;
	seg = timeline_find(line->tl, kind);
	/* A packed batch: the same sequence (or its last), its own sim. */
	if (kind == TIMELINE_FORWARD && nvl->nseq > 0) {
		seg = pos.seg < nvl->nseq ? pos.seg : nvl->nseq - 1;
		nsim = nvl->sims[seg];
	}
	if (seg < 0) {
		for (seg = timeline_segments(line->tl) - 1; seg > 0 &&
		    timeline_segment(line->tl, seg)->kind > kind; seg--)
			;
		timeline_seek(line->tl, timeline_first(line->tl, seg) +
		    timeline_segment(line->tl, seg)->steps(
		    timeline_engine(line->tl, seg)) - 1, -1);
		return;
	}
	switch (kind) {
	case TIMELINE_COMBINE:
		cv = combine_view(old->comb);
		n = combine_merges(line->comb);
		i = cv->block < sim_schedule(nsim)->tr ? cv->block :
		    sim_schedule(nsim)->tr - 1;
		k = (long)i * n + (cv->merge < n ? cv->merge : n - 1);
		break;
	case TIMELINE_BACKWARD:
		bv = backward_view(old->bwd);
		k = ui_nearest_step(backward_schedule(line->bwd), bv->tile.i,
		    bv->tile.j, bv->step);
		break;
	default:
		fv = sim_view(osim);
		k = ui_nearest_step(sim_schedule(nsim), fv->tile.i, fv->tile.j,
		    fv->step);
		break;
	}
	/* A step without the old phase (finalize, write) shows its last. */
	timeline_seek(line->tl, timeline_first(line->tl, seg) + k, pos.phase);
}

int
ui_configure(struct ui *ui, const struct options *o, char *err, size_t errlen)
{
	int next = 1 - ui->cur, keep_heat, stopped;
	struct problem *np = &ui->probs[next];
	struct fulltimeline line;
	struct ui_varlen nvl;
	struct sim *ns;

	problem_free(np);
	memset(&nvl, 0, sizeof nvl);
	nvl.texts = ui->vl.texts;	/* the options may point into them */
	nvl.ntexts = ui->vl.ntexts;
	if (ui_build(o, ui->gl, ui->busy_keys != NULL ? ui->busy_keys :
	    "q stops this and keeps the view as it was", np, &ns, &line,
	    &nvl, &stopped, err, errlen) != 0) {
		if (stopped) {
			util_error(err, errlen, "stopped (q): the view shows the "
			    "problem it had");
			return 1;
		}
		return -1;
	}
	ui_keep_position(&ui->line, ui->sim, &line, ns, &nvl);
	keep_heat = ui->heat_ok && np->nseq == 0 &&
	    heatmap_same_scores(UI_PROBLEM(ui), np);

	/* The correct runs borrow the old problem too: they go first. */
	sim_free(ui->correct);
	combine_free(ui->correct_comb);
	backward_free(ui->correct_bwd);
	ui->correct = NULL;
	ui->correct_comb = NULL;
	ui->correct_bwd = NULL;
	fulltimeline_close(&ui->line);
	if (ui->vl.nseq == 0)
		sim_free(ui->sim);
	ui_varlen_free(&ui->vl);
	problem_free(UI_BUILT(ui));
	ui->sim = ns;
	ui->line = line;
	ui->vl = nvl;
	ui_varlen_follow(ui);
	ui->gen++;
	ui->cur = next;
	ui_copy_options(ui, o);
	ui_standards(ui);
	ui_correct_reset(ui);
	if (!keep_heat)
		ui_heat_reset(ui);
	ui->warm_i = ui->warm_j = ui->warm_done = 0;
	ui->warm_bwd = ui->warm_bwd_n = 0;
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
ui_set_busy_keys(struct ui *ui, const char *keys)
{
	ui->busy_keys = keys;
}

void
ui_clamp_focus(struct ui *ui)
{
	int rows = ui_rows(ui), keys;

	if (ui->focus >= rows)
		ui->focus = rows - 1;
	if (ui->focus < 0)
		ui->focus = 0;
	keys = ui_kind(ui) == TIMELINE_BACKWARD ? ui_bwd_view(ui)->cols : 1;
	if (ui->focus_key >= keys)
		ui->focus_key = keys - 1;
	if (ui->focus_key < 0)
		ui->focus_key = 0;
}

/* After a move: the focus in range, the GPU's values for a forward step. */
static void
ui_moved(struct ui *ui)
{
	if (ui_varlen_follow(ui)) {
		/* Into another sequence of a packed batch: what belongs to
		 * one sequence's problem and sim goes with it. */
		ui_standards(ui);
		ui_correct_reset(ui);
		ui->warm_i = ui->warm_j = ui->warm_done = 0;
		gpucheck_trace_free(ui->gpu_trace);
		ui->gpu_trace = NULL;
		ui->gpu_step = -1;
	}
	ui_clamp_focus(ui);
	if (ui->gpu && ui_kind(ui) == TIMELINE_FORWARD)
		ui_gpu_refresh(ui);
}

int
ui_seek(struct ui *ui, long k, int phase)
{
	if (timeline_seek(ui->line.tl, k, phase) != 0)
		return -1;
	ui->before = 0;
	ui_moved(ui);
	return 0;
}

void
ui_set_before(struct ui *ui)
{
	struct timeline_pos pos;

	ui_position(ui, &pos);
	ui->before = 1;
	ui->before_global = pos.global;
	ui->before_phase = pos.phase;
}

int
ui_is_before(const struct ui *ui)
{
	struct timeline_pos pos;

	if (!ui->before)
		return 0;
	ui_position(ui, &pos);
	return pos.global == ui->before_global && pos.phase == ui->before_phase;
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
	ui_pipe_close(ui);
	ui_fp8_close(ui);
	ui->roof = 0;
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
ui_goto(struct ui *ui, long k)
{
	struct timeline_pos to;

	if (timeline_locate(ui->line.tl, k, &to) != 0)
		return -1;
	return ui_seek(ui, k, ui->want_phase[timeline_segment(ui->line.tl,
	    to.seg)->kind]);
}

int
ui_step(struct ui *ui, long delta)
{
	struct timeline_pos pos;
	long k, n = timeline_steps(ui->line.tl);

	ui_position(ui, &pos);
	k = pos.global + delta;
	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	if (k == pos.global)
		return -1;
	return ui_goto(ui, k);
}

int
ui_phase(struct ui *ui, int delta)
{
	struct timeline_pos pos;

	if (timeline_move_phase(ui->line.tl, delta) != 0)
		return -1;
	ui_position(ui, &pos);
	ui->want_phase[ui_kind(ui)] = pos.phase;
	ui_moved(ui);
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
	int needs;

	o.rule.convention = o.rule.convention == CONV_UNNORMALIZED ?
	    CONV_NORMALIZED : CONV_UNNORMALIZED;
	o.convention_set = 1;
	if (!online_rule_valid(&o.rule)) {
		/* The bug belongs to the other convention (its row's needs). */
		needs = online_bug_mode(o.rule.bug)->needs;
		snprintf(what, sizeof what, "convention %s: bug set to none "
		    "(%s needs %s)", online_convention_name(o.rule.convention),
		    online_bug_name(o.rule.bug),
		    online_convention_name((enum online_convention)needs));
		o.rule.bug = BUG_NONE;
	} else
		snprintf(what, sizeof what, "convention %s: the accumulator "
		    "holds %s", online_convention_name(o.rule.convention),
		    o.rule.convention == CONV_UNNORMALIZED ? "u = sum p V" :
		    "o = u / l");
	return ui_reconfigure(ui, &o, what);
}

/*
 * b in the forward: the next bug of the online update, then the mask
 * bugs the problem's rules can show (mask_bug_check: softcap-after-max
 * needs a cap, window-off-by-one a window's left edge), then none again.
 * One bug at a time, so what differs from the correct run beside it is
 * that bug's doing.
 */
static int
ui_cycle_update_bug(struct ui *ui)
{
	struct options o = ui->opts;
	struct mask_rule m = problem_mask(UI_PROBLEM(ui), 0);
	char what[200], err[200];
	int b;

	if (o.rule.mask_bug == MASK_BUG_NONE && o.rule.bug + 1 < ONLINE_BUGS)
		o.rule.bug = (enum online_bug)((int)o.rule.bug + 1);
	else {
		o.rule.bug = BUG_NONE;
		for (b = (int)o.rule.mask_bug + 1; b < MASK_BUGS; b++)
			if (mask_bug_check((enum mask_bug)b, m, err, sizeof err) == 0)
				break;
		o.rule.mask_bug = b < MASK_BUGS ? (enum mask_bug)b : MASK_BUG_NONE;
	}
	if (o.rule.mask_bug != MASK_BUG_NONE)
		snprintf(what, sizeof what, "mask bug %s: %s",
		    mask_bug_name(o.rule.mask_bug), mask_bug_breaks(o.rule.mask_bug));
	else if (!online_rule_valid(&o.rule)) {
		o.rule.convention = (enum online_convention)
		    online_bug_mode(o.rule.bug)->needs;
		o.convention_set = 1;
		snprintf(what, sizeof what, "bug %s needs the %s convention: "
		    "switched to it", online_bug_name(o.rule.bug),
		    online_convention_name(o.rule.convention));
	} else
		snprintf(what, sizeof what, "bug %s%s", online_bug_name(o.rule.bug),
		    o.rule.bug == BUG_NONE ? ": the correct update" : "");
	return ui_reconfigure(ui, &o, what);
}

/* b in the combine: the next merge bug the partials' form has. */
static int
ui_cycle_merge_bug(struct ui *ui)
{
	struct options o = ui->opts;
	char what[200];

	do
		o.combine.bug = (enum merge_bug)(((int)o.combine.bug + 1) %
		    MERGE_BUGS);
	while (!merge_bug_valid(o.split.partials, o.combine.bug));
	snprintf(what, sizeof what, "merge bug %s%s",
	    combine_bug_name(o.combine.bug), o.combine.bug == MERGE_BUG_NONE ?
	    ": the correct merge" : "");
	return ui_reconfigure(ui, &o, what);
}

/* b in the backward: the next gradient bug. */
static int
ui_cycle_grad_bug(struct ui *ui)
{
	struct options o = ui->opts;
	char what[200];

	o.grad_bug = (enum backward_bug)(((int)o.grad_bug + 1) % BACKWARD_BUGS);
	snprintf(what, sizeof what, "gradient bug %s%s",
	    backward_bug_name(o.grad_bug), o.grad_bug == BWD_BUG_NONE ?
	    ": the correct backward" : "");
	return ui_reconfigure(ui, &o, what);
}

int
ui_cycle_bug(struct ui *ui)
{
	switch (ui_kind(ui)) {
	case TIMELINE_COMBINE:
		return ui_cycle_merge_bug(ui);
	case TIMELINE_BACKWARD:
		return ui_cycle_grad_bug(ui);
	default:
		return ui_cycle_update_bug(ui);
	}
}

int
ui_cycle_merge_order(struct ui *ui)
{
	static const char *const how[] = {
		[COMBINE_LTR] = "left to right, from the empty state",
		[COMBINE_TREE] = "pairs, then pairs of pairs",
		[COMBINE_REVERSE] = "right to left, from the empty state",
	};
	struct options o = ui->opts;
	char what[200];

	if (ui->line.comb == NULL) {
		ui_message(ui, UI_ROLE_MESSAGE, "merge order: nothing to merge "
		    "without splits (--splits 2 or more, or the e form)");
		return -1;
	}
	o.combine.order = (enum combine_order)(((int)o.combine.order + 1) % 3);
	if (ui_reconfigure(ui, &o, "") != 0)
		return -1;
	snprintf(what, sizeof what, "merge order %s: %s (%d merges a row "
	    "block)", combine_order_name(o.combine.order), how[o.combine.order],
	    combine_merges(ui->line.comb));
	ui_message(ui, UI_ROLE_MESSAGE, "%s", what);
	return 0;
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

/*
 * m: the masks that hide, in turn: none, causal, the sliding window
 * (W, 0) (W keys back and the diagonal), the window (W, W) (W on each
 * side), none.  W is the last window's left edge the view saw (the
 * command line's or the e form's), else a quarter of Tk.  The softcap
 * and ALiBi bend scores rather than hide them: they stay as they are
 * (the e form sets them).  A mask bug the new mask cannot show is
 * dropped, said so.
 */
int
ui_toggle_mask(struct ui *ui)
{
	const struct problem *p = UI_PROBLEM(ui);
	struct options o = ui->opts;
	struct mask_rule m = problem_mask(p, 0);
	char what[240], err[200];
	int w;

	if (m.left > 0)
		ui->mask_width = m.left;
	w = ui->mask_width > 0 ? ui->mask_width : p->tk / 4 > 0 ? p->tk / 4 : 1;
	o.spec.causal = 0;
	o.spec.window_set = 1;
	if (mask_rule_has(m, MASK_CAUSAL)) {
		o.spec.window_left = w;
		o.spec.window_right = 0;
	} else if (m.left >= 0 && m.right == 0) {
		o.spec.window_left = w;
		o.spec.window_right = w;
	} else if (mask_rule_hides(m)) {
		o.spec.window_set = 0;
	} else {
		o.spec.window_left = MASK_UNBOUNDED;
		o.spec.window_right = 0;
	}
	m = o.spec.window_set ? mask_rule_window(m, o.spec.window_left,
	    o.spec.window_right) : mask_rule_none();
	if (!o.spec.window_set)
		snprintf(what, sizeof what, "mask off: every query sees every key");
	else if (mask_rule_has(m, MASK_CAUSAL))
		snprintf(what, sizeof what, "causal mask on: query r sees key c "
		    "when c <= r + Tk - Tq");
	else
		snprintf(what, sizeof what, "window (%d, %d): query r sees keys "
		    "r + Tk - Tq - %d .. r + Tk - Tq + %d; tiles outside the band "
		    "are skipped", m.left, m.right, m.left, m.right);
	if (mask_bug_check(o.rule.mask_bug, m, err, sizeof err) != 0) {
		snprintf(what + strlen(what), sizeof what - strlen(what),
		    " (mask bug %s dropped)", mask_bug_name(o.rule.mask_bug));
		o.rule.mask_bug = MASK_BUG_NONE;
	}
	return ui_reconfigure(ui, &o, what);
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
	if (!ui->gpu && ui_kind(ui) != TIMELINE_FORWARD) {
		ui_message(ui, UI_ROLE_MESSAGE, "G: the GPU's values are the "
		    "forward's (its running state); go back to a forward step");
		return;
	}
	if (!ui->gpu && ui->line.comb != NULL) {
		ui_message(ui, UI_ROLE_MESSAGE, "G: the teaching kernel runs "
		    "unsplit here; `flashstep compare --splits N` checks the split "
		    "kernel");
		return;
	}
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
