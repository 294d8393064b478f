/*
 * ui_play.c - the view advancing on its own: r plays on at 2^speed steps
 * a second; u plays until something happens to the focused row, found
 * ahead of time from the row block's states (sim_block_state, which
 * leaves the view where it is):
 *
 *   - its max rises over a max it had, so alpha = e^(m - m') < 1 and the
 *     update rescales l and u (stops at the max phase);
 *   - its row block's last tile: the row finishes, O = u / l, and the
 *     mask skips its remaining tiles, if any (stops at the finalize
 *     phase).
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
	if (ui->play.on) {
		ui_play_stop(ui, "paused");
		return;
	}
	/* Play from the start when there is nothing left to play. */
	if (sim_view(ui->sim)->step + 1 >= sim_steps(ui->sim))
		ui_seek(ui, 0, ui->want_phase);
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

void
ui_play_until(struct ui *ui)
{
	const struct sim_view *v = sim_view(ui->sim);
	int phase = 0;
	long k;

	k = ui_play_find(ui, ui->focus, &phase, ui->play.why,
	    sizeof ui->play.why);
	if (k < 0) {
		ui_play_stop(ui, NULL);
		ui_message(ui, UI_ROLE_MESSAGE, "u: nothing more happens to row %d: "
		    "it has finished", v->tile.r0 + ui->focus);
		return;
	}
	ui->play.on = 1;
	ui->play.until = k;
	ui->play.until_phase = phase;
	ui->play.until_focus = ui->focus;
	ui->play.until_gen = ui->gen;
	ui->play.next_tick = util_now();
	ui_message(ui, UI_ROLE_MESSAGE, "playing until something happens to row "
	    "%d (r pauses)", v->tile.r0 + ui->focus);
}

/* u's play arrives: the event's step and phase, the row focused. */
static void
ui_play_arrive(struct ui *ui)
{
	char why[sizeof ui->play.why];

	snprintf(why, sizeof why, "%s", ui->play.why);
	ui_seek(ui, ui->play.until, ui->play.until_phase);
	ui->want_phase = ui->play.until_phase;
	ui_set_focus(ui, ui->play.until_focus);
	ui_play_stop(ui, why);
}

int
ui_play_tick(struct ui *ui, int *wait_ms)
{
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
		step = sim_view(ui->sim)->step;
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
