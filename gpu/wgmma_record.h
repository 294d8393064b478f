/*
 * wgmma_record.h - the recording build of the wgmma kernel
 * (gpu/wgmma_record.cu: wgmma.cu compiled with WGMMA_RECORD, its own
 * object, so the timed kernel is never the recording one).
 *
 * In a recording block, one thread of each role writes an event as it
 * passes each step of the pipeline: thread 0 (the producer) and lane 0
 * of warp 0 of each consumer warpgroup.  An event is a span of that
 * thread's steps: the kind (model/pipeline.h's enum pipeline_kind), the
 * key tile j, the ring's stage and round, and the multiprocessor's
 * cycle counter (clock64) and the global timer (%globaltimer, in ns) at
 * its beginning and end.  What the recording cannot see: a TMA copy's
 * landing (COPY events are the issue, begin to end) and the tensor
 * core's own spans (ISSUE and WAIT spans are the warpgroup's view of
 * them); a release is stamped just before its arrive (the first warp's;
 * the other three arrive on their own time).
 */
#ifndef FLASHSTEP_WGMMA_RECORD_H
#define FLASHSTEP_WGMMA_RECORD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* (The mma.sync kernel's recording writes the same events:
 * fast_record.h.) */
struct wgmma_rec_event {
	int32_t kind, j, stage, round;
	int64_t c0, c1;		/* clock64 at the begin and the end */
	int64_t g0, g1;		/* %globaltimer (ns) at the begin and the end */
};

/* One run of the recording build, and what it measured. */
struct wgmma_rec_run {
	int consumers, stages, br, bc;	/* of the variant that ran */
	int pingpong;
	int blocks;		/* recorded blocks (the first of the grid) */
	int cap;		/* events a role has room for */
	struct wgmma_rec_event *ev;	/* [block][1 + consumers][cap] */
	int *n;			/* [block][1 + consumers]: events written
				 * (more than cap: some were lost) */
	double timed_ms, record_ms;	/* one launch of each, same shape */
};

/*
 * Runs variant `variant` (0: d's default; 1 at d = 128: no ping-pong)
 * on (batch, heads, tq, tk, d) fp16 inputs drawn from seed, recording
 * the first `blocks` blocks of the grid into out (malloc'd: free
 * out->ev and out->n); then, when reps > 0, times reps launches of the
 * timed kernel (wgmma.o) and of the recording one, every block
 * recording, and gives each one's mean.  Returns 0, or -1 with err set.
 */
int wgmma_record(int d, int variant, int batch, int heads, int tq, int tk,
    int causal, int blocks, int reps, uint64_t seed,
    struct wgmma_rec_run *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
