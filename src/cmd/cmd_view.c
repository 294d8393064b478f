/*
 * cmd_view.c - `flashstep view` (and `flashstep` alone): the step-through
 * view in the terminal, or with --bench-keys N its timing without one.
 */
#include "config.h"

#include "cmd.h"
#include "app/setup.h"
#include "model/memory.h"
#include "ui/ui.h"
#include "ui/ui_bench.h"
#include "model/util.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char view_usage[] =
    "usage: flashstep [view] [options]\n"
    "\n"
    "Steps through FlashAttention tile by tile in the terminal: the score\n"
    "matrix as a heatmap, the current tile, each row's m, l and u before\n"
    "and after the step, the update equations with the numbers put in, and\n"
    "the HBM bytes and FLOPs against standard attention.  With --splits N\n"
    "the forward's key ranges end in partials, and a combine merges them;\n"
    "with --backward the backward pass follows: one timeline, from the\n"
    "first forward step to the last backward step.  With --seqlens a packed\n"
    "batch's sequences follow one another, each its own tiles (s and S\n"
    "jump between them).  Press ? in the view for every key.  Without\n"
    "options it opens the built-in example\n"
    "(Tq = Tk = 16, d = 4, Br = Bc = 4, ramp inputs).\n"
    "\n";

struct view_args {
	long bench_keys;
	int bench_w, bench_h;
	int bench_cold;
};

static int
view_set_bench(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_int("bench-keys", v, 1, 100000000,
	    &((struct view_args *)ctx)->bench_keys, err, errlen);
}

static int
view_set_size(void *ctx, const char *v, char *err, size_t errlen)
{
	struct view_args *a = ctx;
	int w, h, n = 0;

	if (sscanf(v, "%dx%d%n", &w, &h, &n) != 2 || v[n] != '\0' || w < 1 ||
	    h < 1 || w > 1000 || h > 1000)
		return util_error(err, errlen, "--bench-size must be WxH, like "
		    "80x24, not '%s'", v);
	a->bench_w = w;
	a->bench_h = h;
	return 0;
}

static int
view_set_cold(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct view_args *)ctx)->bench_cold, v, err,
	    errlen);
}

static const struct options_entry view_entries[] = {
	{ "bench-keys", "N", "replay N keys without a terminal and time each "
	    "key and frame", view_set_bench },
	{ "bench-size", "WxH", "screen size for --bench-keys (default 80x24)",
	    view_set_size },
	{ "bench-cold", NULL, "--bench-keys without the background work first",
	    view_set_cold },
	{ NULL, NULL, NULL, NULL },
};

/* The problem, the backward and split-KV; no output files. */
#define VIEW_GROUPS (OPT_PROBLEM | OPT_BACKWARD | OPT_SPLIT)

static int
view_bench(const struct options *o, const struct view_args *a)
{
	struct ui_bench_result res;
	char err[512];
	int c;

	if (ui_bench(o, a->bench_keys, a->bench_w, a->bench_h, a->bench_cold,
	    &res, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep view: %s\n", err);
		return CMD_USAGE;
	}
	printf("view benchmark: %ld keys on a %dx%d screen, %ld steps, frames "
	    "drawn %s\n", a->bench_keys, a->bench_w, a->bench_h, res.steps,
	    res.curses ? "through curses to /dev/null" : "into the cell grid only");
	if (!res.curses)
		printf("  (no curses screen: %s)\n", res.note);
	if (a->bench_cold)
		printf("cold: no background work first (no heatmap, no warm "
		    "checkpoints)\n");
	else
		printf("background work, once per problem: heatmap %.3f s, "
		    "checkpoints %.3f s\n", res.heat_s, res.warm_s);
	printf("%-12s %8s %10s %10s %10s  (wall time per key and frame)\n",
	    "keys", "count", "median ms", "p90 ms", "max ms");
	printf("%-12s %8ld %10.3f %10.3f %10.3f\n", "all", res.all.n,
	    res.all.median_ms, res.all.p90_ms, res.all.max_ms);
	for (c = 0; c < UI_BENCH_CLASSES; c++)
		printf("%-12s %8ld %10.3f %10.3f %10.3f\n", ui_bench_class_names[c],
		    res.by[c].n, res.by[c].median_ms, res.by[c].p90_ms,
		    res.by[c].max_ms);
	printf("%-12s %8ld %10.3f %10.3f %10.3f  (CPU time: without the waits "
	    "for a shared core)\n", "all, CPU", res.cpu.n, res.cpu.median_ms,
	    res.cpu.p90_ms, res.cpu.max_ms);
	return CMD_OK;
}

int
cmd_view(int argc, char **argv)
{
	struct view_args a = { 0, 80, 24, 0 };
	struct ui_style st;
	struct options o;
	struct ui *ui = NULL;
	char err[512];
	int rc, r;

	rc = cmd_parse("view", view_usage, argc, argv, VIEW_GROUPS, view_entries,
	    &a, &o);
	if (rc >= 0)
		goto done;
	rc = CMD_USAGE;
	if (ui_options_check(&o, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep view: %s\n", err);
		goto done;
	}
	/* What the view holds besides the inputs (its own screen arrays are
	 * small): the sim, its checkpoints and the heatmap's picture. */
	o.spec.memory_parts = MEMORY_SIM | MEMORY_CHECKPOINTS | MEMORY_HEATMAP;
	setup_memory_spec(&o, &o.spec);	/* and what --splits, --backward add */
	if (a.bench_keys > 0) {
		rc = view_bench(&o, &a);
		goto done;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "flashstep view: needs a terminal on stdin and "
		    "stdout; for text output use `flashstep trace`\n");
		goto done;
	}
	/* The terminal first, so that a long build (the forward run for the
	 * backward or the combine) shows its progress and answers q; the
	 * problem's errors are printed once the terminal is given back. */
	ui_style_detect(&st);
	if (ui_term_open(&st, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep view: %s\n", err);
		goto done;
	}
	ui = ui_new(&o, &st, err, sizeof err);
	if (ui == NULL) {
		ui_term_close();
		if ((r = ui_term_signal()) != 0) {
			options_free(&o);
			signal(r, SIG_DFL);
			raise(r);
			return 128 + r;
		}
		if (err[0] == '\0')
			rc = CMD_OK;	/* q while it was building */
		else
			fprintf(stderr, "flashstep view: %s\n", err);
		goto done;
	}
	r = ui_loop(ui, NULL, err, sizeof err);
	ui_term_close();
	if (r < 0) {
		fprintf(stderr, "flashstep view: %s\n", err);
		goto done;
	}
	if (r > 0) {
		/* SIGINT, SIGTERM, SIGHUP or SIGQUIT: the terminal is back; die
		 * of it. */
		ui_free(ui);
		options_free(&o);
		signal(r, SIG_DFL);
		raise(r);
		return 128 + r;
	}
	rc = CMD_OK;
done:
	ui_free(ui);
	options_free(&o);
	return rc;
}
