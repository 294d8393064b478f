/*
 * ui_idle.c - the view's background work, done in slices between keys:
 * the heatmap summary of S (drawn as it fills in), then warming the sim's
 * checkpoints so that later jumps replay few tiles, then the backward's;
 * and play's ticks.
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

/*
 * The backward's checkpoints, warmed alike, key block after key block
 * (dK_j, dV_j) and then row block after row block (dQ_i), a few
 * checkpoints' worth at a time; backward_warm leaves the view alone.
 * Returns 1 when every block is warm.
 */
static int
ui_idle_warm_backward(struct ui *ui, double deadline)
{
	struct backward *b = ui->line.bwd;
	const struct schedule *s;
	int key, blk, len, every, n, moved = 0;

	if (b == NULL)
		return 1;
	s = backward_schedule(b);
	while (ui->warm_bwd < s->tc + s->tr && (!moved || deadline <= 0 ||
	    util_now() < deadline)) {
		key = ui->warm_bwd < s->tc;
		blk = key ? ui->warm_bwd : ui->warm_bwd - s->tc;
		len = key ? s->iend[blk] - s->ibegin[blk] :
		    s->jend[blk] - s->jbegin[blk];
		every = backward_checkpoint_every(b, key);
		n = ui->warm_bwd_n + 4 * every;
		n = n < len ? n : len;
		/* every > len: this kind keeps no checkpoints (a scores
		 * problem's dQ, or blocks too short to need them) */
		if (every <= len && n > 0 && backward_warm(b, key, blk, n) == 0)
			moved = 1;
		if (n >= len || every > len) {
			ui->warm_bwd++;
			ui->warm_bwd_n = 0;
		} else
			ui->warm_bwd_n = n;
	}
	return ui->warm_bwd >= s->tc + s->tr;
}

int
ui_idle(struct ui *ui, double deadline, int *wait_ms)
{
	double now;
	int flags = 0;

	*wait_ms = -1;
	if (ui->vl.nseq > 0 && !ui_varlen_heat_complete(ui)) {
		/* a packed batch: a summary per sequence (ui_varlen.c) */
		now = util_now();
		if (ui_varlen_heat_compute(ui, deadline) ||
		    now - ui->heat_drawn > 0.1) {
			flags |= UI_REDRAW;
			ui->heat_drawn = now;
		}
		if (!ui_varlen_heat_complete(ui))
			*wait_ms = 0;
	} else if (ui->heat_ok && !heatmap_complete(&ui->heat)) {
		heatmap_compute(&ui->heat, UI_PROBLEM(ui), deadline);
		/* Progress is drawn a few times a second, not every slice. */
		now = util_now();
		if (heatmap_complete(&ui->heat) || now - ui->heat_drawn > 0.1) {
			flags |= UI_REDRAW;
			ui->heat_drawn = now;
		}
		if (!heatmap_complete(&ui->heat))
			*wait_ms = 0;
	} else if (!ui->warm_done) {
		/* the backward's next, when there is one */
		if (!ui_idle_warm(ui, deadline) || ui->line.bwd != NULL)
			*wait_ms = 0;
	} else if (!ui_idle_warm_backward(ui, deadline))
		*wait_ms = 0;
	return flags | ui_play_tick(ui, wait_ms);
}
