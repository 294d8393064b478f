/*
 * ui_bench.h - timing the view without a terminal (`flashstep view
 * --bench-keys N`): per key and frame, median, 90th percentile and max.
 */
#ifndef FLASHSTEP_UI_BENCH_H
#define FLASHSTEP_UI_BENCH_H

#include "app/options.h"

enum ui_bench_class {
	UI_BENCH_STEP,
	UI_BENCH_PHASE,
	UI_BENCH_FOCUS,
	UI_BENCH_PROMPT,
	UI_BENCH_JUMP,
	UI_BENCH_CLASSES
};
extern const char *ui_bench_class_names[UI_BENCH_CLASSES];

struct ui_bench_stat {
	long n;
	double median_ms, p90_ms, max_ms;
};

struct ui_bench_result {
	int curses;		/* frames went through curses (to /dev/null) */
	char note[200];		/* why not, when curses is 0 */
	double heat_s;		/* the heatmap summary, once per problem */
	double warm_s;		/* warming checkpoints, once per problem */
	long steps;
	struct ui_bench_stat all, by[UI_BENCH_CLASSES];	/* wall time */
	struct ui_bench_stat cpu;	/* all keys, this thread's CPU time */
};

/* Replays n keys on the problem of o in a w x h screen, after the
 * background work unless cold.  Returns 0, or -1 with err set (the
 * problem's message, or no memory). */
int ui_bench(const struct options *o, long n, int w, int h, int cold,
    struct ui_bench_result *res, char *err, size_t errlen);

#endif
