/*
 * fast_record.h - the recording build of the mma.sync kernel
 * (gpu/fast_record.cu: fast.cu compiled with FAST_RECORD, its own
 * object, so the timed kernel, fast.o, is never the recording one).
 *
 * The kernel has no producer: every warp issues its share of each
 * cp.async copy, waits for its own copies (cp.async.wait_group) and then
 * for the other warps (__syncthreads).  So a recording has one row per
 * warp: lane 0 of each warp writes an event as the warp passes each step
 * (the events are the wgmma recording's, wgmma_record.h, with the kinds
 * of model/pipeline.h):
 *   COPY_Q, COPY_K, COPY_V   the warp's cp.async issue of a tile
 *   WAIT_FULL_K, WAIT_FULL_V its cp.async.wait_group: its copies landed
 *   RELEASE_K, RELEASE_V     an instant just before the barrier that
 *                            ends the tile's reads (that barrier is the
 *                            release: after it the buffers are refilled)
 *   BARRIER                  __syncthreads, begun to passed
 *   ISSUE_QK, SOFTMAX, ISSUE_PV   S = Q K_j^T (ldmatrix and mma.sync),
 *                            the mask, softmax and rescale, O += P V_j
 *   EPILOGUE                 O / l and lse out to global memory
 * The stage is the buffer (j % 2), the round the buffer's use (j / 2).
 * What the recording cannot see: the tensor core's own spans (an
 * mma.sync span is the warp's issue of it; the next use of its result
 * waits for it), and the other lanes (lane 0 stamps for its warp).
 */
#ifndef FLASHSTEP_FAST_RECORD_H
#define FLASHSTEP_FAST_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "wgmma_record.h"	/* struct wgmma_rec_event: the same events */

#ifdef __cplusplus
extern "C" {
#endif

/* One run of the recording build, and what it measured. */
struct fast_rec_run {
	int d, br, bc, warps;	/* of the variant that ran (d's default) */
	int blocks;		/* recorded blocks (the first of the grid) */
	int tr;			/* row blocks of a head: block b is row
				 * block tr - 1 - b (one head recorded) */
	int cap;		/* events a warp has room for */
	struct wgmma_rec_event *ev;	/* [block][warp][cap] */
	int *n;			/* [block][warp]: events written (more
				 * than cap: some were lost) */
	int *sm;		/* [block]: the multiprocessor it ran on */
	double timed_ms, record_ms;	/* one launch of each, same shape */
};

/*
 * Runs d's default tiling (64 or 128) on (batch, heads, tq, tk, d) fp16
 * inputs drawn from seed, recording the first `blocks` blocks of the
 * grid into out (malloc'd: fast_record_free); then, when reps > 0, times
 * reps launches of the timed kernel (fast.o) and of the recording one,
 * every block recording, and gives each one's mean.  Returns 0, or -1
 * with err set.
 */
int fast_record(int d, int batch, int heads, int tq, int tk, int causal,
    int blocks, int reps, uint64_t seed, struct fast_rec_run *out,
    char *err, size_t errlen);

void fast_record_free(struct fast_rec_run *run);

#ifdef __cplusplus
}
#endif

#endif
