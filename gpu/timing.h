/*
 * timing.h - how every kernel is timed (gpu/timing.cu): the same for the
 * teaching, naive and fast kernels, `bench --gpu` and gpu/bench/.
 *
 * One warm-up run (module load, first touch of the memory), then the
 * timed runs, all queued back to back on the default stream with a CUDA
 * event between two runs and no wait: while the host launches run r the
 * GPU is still busy with run r - 1, so every timed run costs what the
 * kernel costs and none carries the host's launch overhead (a kernel of
 * several launches, like the teaching kernel's fa1 order, gets the same
 * treatment as one of a single launch).  The time is the median of the
 * timed runs (the mean of the two middle ones for an even count).
 *
 * Plain C with no project headers, so the standalone benchmark builds
 * with it: nvcc ... gpu/timing.cu gpu/bench/bench_fast.cu.
 */
#ifndef FLASHSTEP_TIMING_H
#define FLASHSTEP_TIMING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Queues one run on the default stream and returns without waiting: 0,
 * or -1 with err set. */
typedef int (*timing_run_fn)(void *ctx, char *err, size_t errlen);

/*
 * Runs run(ctx) 1 + repeat times (repeat <= 0: once, and that run's time
 * is the answer), waits for the last, and gives the median time in ms.
 * Returns 0, or -1 with err set (run's error, or a CUDA call's).
 */
int timing_median_ms(timing_run_fn run, void *ctx, int repeat, double *ms,
    char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
