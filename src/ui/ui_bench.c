/*
 * ui_bench.c - `flashstep view --bench-keys N`: replays N keys without a
 * terminal and times each key and the frame it draws, through the same
 * code as the real view (ui_handle_key, ui_draw, ui_term_present into a
 * curses screen whose output goes to /dev/null).
 *
 * The keys are a fixed mix, the same on every run: next and previous
 * step, next and previous phase, Tab, and `g` jumps to random steps
 * (typed as g, digits, Enter; the Enter is the jump).  First comes the
 * background work the view does while the first frame is read (the
 * heatmap summary, then warming checkpoints), timed apart: it is once per
 * problem.  With cold set it is skipped: jumps then replay up to Tc
 * tiles, and the heatmap shows "?".
 */
#include "config.h"

#include "ui_int.h"
#include "ui_bench.h"

#include "model/inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU seconds of this thread: unlike wall time, not stretched when other
 * processes share the cores. */
static double
ui_bench_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
ui_bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, 90th percentile and max of n times (sorted in place). */
static void
ui_bench_stats(double *t, long n, struct ui_bench_stat *s)
{
	memset(s, 0, sizeof *s);
	s->n = n;
	if (n == 0)
		return;
	qsort(t, (size_t)n, sizeof *t, ui_bench_cmp);
	s->median_ms = 1000.0 * t[n / 2];
	s->p90_ms = 1000.0 * t[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
	s->max_ms = 1000.0 * t[n - 1];
}

const char *ui_bench_class_names[UI_BENCH_CLASSES] = {
	[UI_BENCH_STEP] = "n/p step",
	[UI_BENCH_PHASE] = "./, phase",
	[UI_BENCH_FOCUS] = "Tab row",
	[UI_BENCH_PROMPT] = "g, digits",
	[UI_BENCH_JUMP] = "g jump",
};

int
ui_bench(const struct options *o, long n, int w, int h, int cold,
    struct ui_bench_result *res, char *err, size_t errlen)
{
	struct ui_style st;
	struct ui *ui = NULL;
	struct ui_grid g = { 0 };
	struct inputs_rng rng;
	struct ui_key k;
	double *all = NULL, *by[UI_BENCH_CLASSES] = { NULL }, *cpu = NULL;
	double t0, c0, t;
	long count[UI_BENCH_CLASSES] = { 0 }, i, nsteps;
	char digits[32];
	int cls, r, pending = 0, c, rc = -1, dummy;
	size_t at = 0;

	memset(res, 0, sizeof *res);
	if (ui_term_open_null(w, h, &st, res->note, sizeof res->note) == 0)
		res->curses = 1;
	else
		ui_style_detect(&st);
	ui = ui_new(o, &st, err, errlen);
	if (ui == NULL)
		goto done;
	if (ui_grid_resize(&g, w, h, err, errlen) != 0)
		goto done;
	all = util_calloc((size_t)n, sizeof *all, "timings", err, errlen);
	cpu = util_calloc((size_t)n, sizeof *cpu, "timings", err, errlen);
	for (c = 0; c < UI_BENCH_CLASSES; c++)
		by[c] = util_calloc((size_t)n, sizeof *by[c], "timings", err, errlen);
	if (all == NULL || cpu == NULL)
		goto done;
	for (c = 0; c < UI_BENCH_CLASSES; c++)
		if (by[c] == NULL)
			goto done;

	t0 = util_now();
	/* What the view does while the reader looks at the first frame:
	 * the heatmap, then checkpoints (a deadline of 0: all of it). */
	if (!cold) {
		ui_idle(ui, 0.0, &dummy);
		res->heat_s = util_now() - t0;
		t0 = util_now();
		do	/* the forward's, then the backward's */
			ui_idle(ui, 0.0, &dummy);
		while (dummy == 0);
		res->warm_s = util_now() - t0;
	}
	res->steps = timeline_steps(ui->line.tl);
	nsteps = res->steps;
	ui_draw(ui, &g, (struct ui_rect){ 0, 0, w, h });
	if (res->curses)
		ui_term_present(&g);

	inputs_rng_seed(&rng, 20260101);
	for (i = 0; i < n; i++) {
		memset(&k, 0, sizeof k);
		if (pending) {
			/* Typing a jump: its digits, then Enter. */
			if (digits[at] != '\0') {
				k.code = digits[at++];
				cls = UI_BENCH_PROMPT;
			} else {
				k.code = UI_KEY_ENTER;
				cls = UI_BENCH_JUMP;
				pending = 0;
			}
		} else {
			r = (int)(inputs_rng_next(&rng) % 100);
			if (r < 35) {
				k.code = 'n';
				cls = UI_BENCH_STEP;
			} else if (r < 50) {
				k.code = 'p';
				cls = UI_BENCH_STEP;
			} else if (r < 62) {
				k.code = '.';
				cls = UI_BENCH_PHASE;
			} else if (r < 72) {
				k.code = ',';
				cls = UI_BENCH_PHASE;
			} else if (r < 82) {
				k.code = UI_KEY_TAB;
				cls = UI_BENCH_FOCUS;
			} else {
				k.code = 'g';
				cls = UI_BENCH_PROMPT;
				/* Steps are typed from 1. */
				snprintf(digits, sizeof digits, "%ld",
				    (long)(inputs_rng_next(&rng) % (uint64_t)nsteps) + 1);
				at = 0;
				pending = 1;
			}
		}
		t0 = util_now();
		c0 = ui_bench_cpu();
		ui_handle_key(ui, &k);
		ui_draw(ui, &g, (struct ui_rect){ 0, 0, w, h });
		if (res->curses)
			ui_term_present(&g);
		t = util_now() - t0;
		cpu[i] = ui_bench_cpu() - c0;
		all[i] = t;
		by[cls][count[cls]++] = t;
	}
	ui_bench_stats(all, n, &res->all);
	ui_bench_stats(cpu, n, &res->cpu);
	for (c = 0; c < UI_BENCH_CLASSES; c++)
		ui_bench_stats(by[c], count[c], &res->by[c]);
	rc = 0;
done:
	if (res->curses)
		ui_term_close();
	free(all);
	free(cpu);
	for (c = 0; c < UI_BENCH_CLASSES; c++)
		free(by[c]);
	ui_grid_free(&g);
	ui_free(ui);
	return rc;
}
