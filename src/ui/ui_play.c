/*
 * ui_play.c - the view advancing on its own, across the timeline's
 * segments: r plays on at 2^speed steps a second; u plays until
 * something happens to the focused row.  In the forward that is found
 * ahead of time from the row block's states (sim_block_state, which
 * leaves the view where it is):
 *
 *   - its max rises over a max it had in its key range, so alpha =
 *     e^(m - m') < 1 and the update rescales l and u (stops at the max
 *     phase);
 *   - its row block's last tile: the row finishes, O = u / l, and the
 *     mask skips its remaining tiles, if any (stops at the finalize
 *     phase; with split-KV each key range's last tile ends a partial).
 *
 * In the combine: its row block's last merge, where O = u / l (stops at
 * finalize).  In the backward: the next tile of its row block, whose dQ
 * part is added to the row's dQ in HBM (stops at the dQ phase), the last
 * of them completing dQ.
 *
 *   stopped --r--> playing on    --r / last step--> stopped
 *   stopped --u--> playing until --r / arrived--> stopped
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Steps per second while playing: 2^speed. */
static double
ui_play_rate(const struct ui *ui)
{
	return ldexp(1.0, ui->play.speed);
}

void
ui_play_stop(struct ui *ui, const char *why)
{
	ui->play.on = 0;
	ui->play.until = -1;
	if (why != NULL)
		ui_message(ui, UI_ROLE_MESSAGE, "%s", why);
}

void
ui_play_toggle(struct ui *ui)
{
	struct timeline_pos pos;
	int kind;

	if (ui->play.on) {
		ui_play_stop(ui, "paused");
		return;
	}
	/* Play shows whole steps, each at its last phase, whatever phase
	 * . and , left n and p at: a step played at its load phase would
	 * show only "?".  From the start when nothing is left to play. */
	for (kind = 0; kind < TIMELINE_KINDS; kind++)
		ui->want_phase[kind] = -1;
	ui_position(ui, &pos);
	if (pos.global + 1 >= timeline_steps(ui->line.tl))
		ui_goto(ui, 0);
	ui->play.on = 1;
	ui->play.until = -1;
	ui->play.next_tick = util_now();
	ui_message(ui, UI_ROLE_MESSAGE, "playing at %d steps/s (+ and - change "
	    "the speed, r pauses)", 1 << ui->play.speed);
}

/*
 * The next place after the reader's where something happens to row x of
 * the current tile: its step, with *phase and the words set, or -1 when
 * nothing more does (or without memory).
 */
static long
ui_play_find(struct ui *ui, int x, int *phase, char *why, size_t len)
{
	const struct sim_view *v = sim_view(ui->sim);
	const struct schedule *s = sim_schedule(ui->sim);
	const struct ui_glyphs *gl = ui->gl;
	int i = v->tile.i, j, jend = s->jend[i], row = v->tile.r0 + x, n, ph;
	float *m = malloc((size_t)s->br * sizeof *m), before, after;
	char a[32], b[32], c[32], tile_b[32];
	long k, found = -1;

	if (m == NULL || sim_block_state(ui->sim, i, v->tile.j, m, NULL,
	    NULL) != 0)
		goto done;
	snprintf(tile_b, sizeof tile_b, "(%d,%d)", i, s->tc - 1);
	before = m[x];
	for (j = v->tile.j; j < jend && found < 0; j++, before = after) {
		if (sim_block_state(ui->sim, i, j + 1, m, NULL, NULL) != 0)
			goto done;
		after = m[x];
		/* A new key range starts from nothing: no rise to see. */
		if (j > s->jbegin[i] && schedule_split_of(s, i, j) !=
		    schedule_split_of(s, i, j - 1))
			before = -INFINITY;
		k = schedule_step_of(s, i, j);
		/* The rise at the max phase, the finish at finalize: the
		 * first of them after the reader's place. */
		ph = k > v->step ? SIM_PHASE_LOAD : (int)v->phase + 1;
		if (ph <= SIM_PHASE_MAX && isfinite(before) && after > before)
			ph = SIM_PHASE_MAX;
		else if (ph <= SIM_PHASE_FINALIZE && j == jend - 1)
			ph = SIM_PHASE_FINALIZE;
		else
			continue;
		found = k;
		*phase = ph;
		/* One status line: short enough for 80 columns. */
		if (ph == SIM_PHASE_MAX)
			n = snprintf(why, len, "u: row %d's max rises at tile (%d,%d): "
			    "%s %s %s, so %s = %s < 1", row, i, j,
			    ui_num(ui, before, 6, a, sizeof a), gl->arrow,
			    ui_num(ui, after, 6, b, sizeof b), gl->alpha,
			    ui_num(ui, online_alpha(before, after), 6, c, sizeof c));
		else
			n = snprintf(why, len, "u: row %d finishes at tile (%d,%d), "
			    "its last", row, i, j);
		if (ph == SIM_PHASE_FINALIZE && jend < s->tc && n > 0 &&
		    (size_t)n < len)
			snprintf(why + n, len - (size_t)n, "; the mask skips "
			    "(%d,%d)%s%s", i, jend, jend + 1 < s->tc ? "-" : "",
			    jend + 1 < s->tc ? tile_b : "");
	}
done:
	free(m);
	return found;
}

/* In the combine: the focused row's block finalizes at its last merge. */
static long
ui_play_find_combine(struct ui *ui, int x, int *phase, char *why, size_t len)
{
	const struct combine_view *v = ui_comb_view(ui);
	long k = (long)v->block * combine_merges(ui->line.comb) +
	    combine_merges(ui->line.comb) - 1;

	if (v->step == k && v->phase >= COMBINE_PHASE_FINALIZE)
		return -1;
	*phase = COMBINE_PHASE_FINALIZE;
	snprintf(why, len, "u: row %d's partials are all merged at merge %d of "
	    "row block %d: O = u / l", v->r0 + x, combine_merges(ui->line.comb),
	    v->block);
	return k;
}

/* In the backward: the next tile of the focused row's row block adds
 * its part to dQ (the last completes it). */
static long
ui_play_find_backward(struct ui *ui, int x, int *phase, char *why, size_t len)
{
	const struct backward_view *v = ui_bwd_view(ui);
	const struct schedule *s = backward_schedule(ui->line.bwd);
	int i = v->tile.i, j = v->tile.j;
	long k;

	if (v->phase >= BWD_PHASE_DQ)
		j++;
	if (j >= s->jend[i])
		return -1;
	k = schedule_step_of(s, i, j);
	*phase = BWD_PHASE_DQ;
	if (j == s->jend[i] - 1)
		snprintf(why, len, "u: row %d's last dQ part, at tile (%d,%d): "
		    "its dQ is complete", v->tile.r0 + x, i, j);
	else
		snprintf(why, len, "u: row %d's next dQ part, at tile (%d,%d) "
		    "(key block %d: dQ read, added to, written back)",
		    v->tile.r0 + x, i, j, j);
	return k;
}

void
ui_play_until(struct ui *ui)
{
	struct timeline_pos pos;
	enum timeline_kind kind = ui_kind(ui);
	int phase = 0, row;
	long k;

	ui_position(ui, &pos);
	row = ui->focus;
	switch (kind) {
	case TIMELINE_COMBINE:
		row += ui_comb_view(ui)->r0;
		k = ui_play_find_combine(ui, ui->focus, &phase, ui->play.why,
		    sizeof ui->play.why);
		break;
	case TIMELINE_BACKWARD:
		row += ui_bwd_view(ui)->tile.r0;
		k = ui_play_find_backward(ui, ui->focus, &phase, ui->play.why,
		    sizeof ui->play.why);
		break;
	default:
		row += sim_view(ui->sim)->tile.r0;
		k = ui_play_find(ui, ui->focus, &phase, ui->play.why,
		    sizeof ui->play.why);
		break;
	}
	if (k < 0) {
		ui_play_stop(ui, NULL);
		ui_message(ui, UI_ROLE_MESSAGE, "u: nothing more happens to row %d "
		    "in the %s: it has finished", row,
		    timeline_segment(ui->line.tl, pos.seg)->name);
		return;
	}
	ui->play.on = 1;
	ui->play.until = timeline_first(ui->line.tl, pos.seg) + k;
	ui->play.until_phase = phase;
	ui->play.until_focus = ui->focus;
	ui->play.until_gen = ui->gen;
	ui->play.next_tick = util_now();
	ui_message(ui, UI_ROLE_MESSAGE, "playing until something happens to row "
	    "%d (r pauses)", row);
}

/* u's play arrives: the event's step and phase, the row focused. */
static void
ui_play_arrive(struct ui *ui)
{
	char why[sizeof ui->play.why];

	snprintf(why, sizeof why, "%s", ui->play.why);
	ui_seek(ui, ui->play.until, ui->play.until_phase);
	ui->want_phase[ui_kind(ui)] = ui->play.until_phase;
	ui_set_focus(ui, ui->play.until_focus);
	ui_play_stop(ui, why);
}

int
ui_play_tick(struct ui *ui, int *wait_ms)
{
	struct timeline_pos pos;
	double now, rate, period;
	long n, step;
	int flags = 0;

	if (!ui->play.on)
		return 0;
	now = util_now();
	rate = ui_play_rate(ui);
	/* At most 30 frames a second; faster rates take several steps. */
	period = rate > 30.0 ? 1.0 / 30.0 : 1.0 / rate;
	if (now >= ui->play.next_tick) {
		n = rate > 30.0 ? (long)(rate / 30.0) : 1;
		ui_position(ui, &pos);
		step = pos.global;
		if (ui->play.until >= 0 && (step > ui->play.until ||
		    ui->play.until_gen != ui->gen)) {
			/* Moved past it by hand, or a rebuild (c, b, o, m, e)
			 * made a new schedule: u's stop is not ahead any more. */
			ui_play_stop(ui, "paused");
			return UI_REDRAW;
		}
		if (ui->play.until >= 0 && step + n >= ui->play.until) {
			ui_play_arrive(ui);
			return UI_REDRAW;
		}
		if (ui_step(ui, n) != 0) {
			ui_play_stop(ui, "played to the last step");
			return UI_REDRAW;
		}
		flags = UI_REDRAW;
		ui->play.next_tick = ui->play.next_tick + period > now ?
		    ui->play.next_tick + period : now + period;
	}
	n = (long)((ui->play.next_tick - now) * 1000.0) + 1;
	if (*wait_ms < 0 || n < *wait_ms)
		*wait_ms = (int)n;
	return flags;
}
