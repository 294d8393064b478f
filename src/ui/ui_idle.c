/*
 * ui_idle.c - the view's background work, done in slices between keys:
 * the heatmap summary of S (drawn as it fills in), then warming the sim's
 * checkpoints so that later jumps replay few tiles; and play's ticks.
 */
#include "config.h"

#include "ui_int.h"

/*
 * Replays row blocks ahead of the reader so the sim keeps checkpoints all
 * along them: a later jump then replays a few tiles, not up to Tc.  The
 * replays leave the view alone (sim_block_state).  Returns 1 when all
 * row blocks are warm.
 */
static int
ui_idle_warm(struct ui *ui, double deadline)
{
	const struct schedule *s = sim_schedule(ui->sim);
	int every = sim_checkpoint_every(ui->sim), moved = 0, jend, j;

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
			sim_block_state(ui->sim, ui->warm_i, j + 1, NULL, NULL, NULL);
			moved = 1;
		}
		if (j >= jend - 1) {
			ui->warm_i++;
			ui->warm_j = 0;
		} else
			ui->warm_j = j;
	}
	return ui->warm_done;
}

int
ui_idle(struct ui *ui, double deadline, int *wait_ms)
{
	double now;
	int flags = 0;

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
	} else if (!ui->warm_done && !ui_idle_warm(ui, deadline))
		*wait_ms = 0;
	return flags | ui_play_tick(ui, wait_ms);
}
