/*
 * lesson_machine.h - quantities of the machine rather than of the
 * algorithm, for lessons about the hardware (20-machine): the H200's
 * roofline at the problem's intensity (model/roofline.h), and the wgmma
 * pipeline model's time for a block of the problem's head, as modelled
 * and with one stage, one more, no ping-pong or no overlap
 * (model/pipeline.h; the same figures `flashstep pipeline --model`
 * prints for that shape), and the H200 recordings' figures beside the
 * model fed with their durations (`flashstep pipeline --what-if`).
 * Readers for lesson_quantity.c's table.
 */
#ifndef FLASHSTEP_LESSON_MACHINE_H
#define FLASHSTEP_LESSON_MACHINE_H

#include "lesson_quantity.h"

/* from: 0 the tensor ridge (FLOPs a byte), 1 the tensor peak (TFLOP/s),
 * 2 HBM bandwidth (TB/s), 3 the whole forward's intensity (FLOPs a
 * byte), 4 the tensor roof at that intensity (TFLOP/s). */
int lesson_machine_roof(struct lesson_read *rq);

/* Clocks of the pipeline model's slowest block; from: 0 as the kernel
 * is built, 1 one stage, 2 one more stage, 3 no ping-pong, 4 no overlap
 * (nor ping-pong).  d must be 64 or 128. */
int lesson_machine_pipeline(struct lesson_read *rq);

/*
 * From the shipped H200 recording of the problem's head (d, Tq, Tk, the
 * mask; doc/recordings): the recorded figures, and the model fed with
 * its durations (model/pipeline_fit.h), in clocks (medians over the
 * blocks), or per cent.  from: one of these.
 */
enum lesson_rec_from {
	LESSON_REC_TILE,	/* a steady key tile, recorded */
	LESSON_REC_BLOCK,	/* a block, recorded */
	LESSON_REC_TILE_NOPP,	/* the same, the no-ping-pong recording */
	LESSON_REC_BLOCK_NOPP,
	LESSON_REC_OVERLAP,	/* % of softmax time beside another's */
	LESSON_REC_OVERLAP_NOPP,
	LESSON_REC_SOFTMAX,	/* a softmax's mean span */
	LESSON_FIT_TILE,	/* the fed model's key tile */
	LESSON_FIT_BLOCK,	/* its block */
	LESSON_FIT_TILE_NOPP,	/* its key tile without ping-pong */
	LESSON_FIT_TILE_1STAGE,	/* with one stage */
	LESSON_FIT_TILE_NOOV,	/* without overlap (nor ping-pong) */
};
int lesson_machine_recording(struct lesson_read *rq);

#endif
