/*
 * pipeline_fit.h - the pipeline model (pipeline.h) fed with a
 * recording: its durations taken from a recorded event list, and the
 * figures a recording and the model are compared by.
 *
 * What a recording shows and the model takes from it (medians, so that
 * one slow stamp does not move them):
 * Means where the model adds durations up (a sum's estimate is the sum
 * of the means), medians where it makes its own holds:
 *   softmax, rescale, epilogue   their spans' means (a softmax on a tile
 *              that needs the mask gives the mask's extra), and since two
 *              consumers' softmaxes recorded at once take no longer than
 *              one alone, they run unshared (compute_lanes = consumers);
 *   issue_qk, issue_pv  the issue spans' means, whole;
 *   stamp      the pause between one step's end and the next step's
 *              begin on one role, by the kind of the step before (the
 *              mean; after a wait the median, as a hold can hide there): the
 *              recording thread writing its event and the unstamped work
 *              there (the release's arrive, the pack of P); the gap after
 *              a turn wait is left out (the turn's hold shows there,
 *              pipeline.h);
 *   poll       the lower quartile of the waits on an mbarrier: what a
 *              wait costs when its phase has already completed;
 *   prologue   the producer's first step's begin;
 *   copy_latency  Q's landing (the first consumer's wait for it ending)
 *              less the copy's issue and its bytes at the nominal link.
 * What it cannot show stays nominal: the tensor core's time for a wgmma
 * (the recording thread sees only the issue and the wait, which the
 * GEMM has always finished by), the L2 link's bandwidth.
 */
#ifndef FLASHSTEP_PIPELINE_FIT_H
#define FLASHSTEP_PIPELINE_FIT_H

#include <stddef.h>

#include "model/pipeline.h"

#define PIPELINE_FIT_MAX_BLOCKS 1024

/* What a run of blocks took, from its events (the model's or a
 * recording's; the producer's and the consumers' rows only). */
struct pipeline_figures {
	int ncta;
	/* block b: its first step's begin to its last step's end */
	double block[PIPELINE_FIT_MAX_BLOCKS];
	/* its steady key tile: a consumer's softmax of tile 1 to that of
	 * its last tile, over the tiles between, the median over the
	 * consumers; NAN for a block of fewer than 3 tiles */
	double tile[PIPELINE_FIT_MAX_BLOCKS];
	double block_median, tile_median;	/* over the blocks (NAN: none) */
	int ntile;		/* blocks with a steady tile */
	/* the share of the consumers' softmax time during which another
	 * consumer of the block was in its softmax too (0..1) */
	double softmax_overlap;
};

/* The figures of ev; 0, or -1 with err set (a block number out of
 * range, out of memory). */
int pipeline_figures(const struct pipeline_event *ev, size_t nev,
    int consumers, struct pipeline_figures *fig, char *err, size_t errlen);

/*
 * The durations of a recording of cfg into costs (the rest nominal, as
 * above).  Returns 0, or -1 with err naming what the recording lacks
 * (no softmax, no issue, ...).
 */
int pipeline_fit_costs(const struct pipeline_event *ev, size_t nev,
    const struct pipeline_config *cfg, struct pipeline_costs *costs,
    char *err, size_t errlen);

/* The what-if variants of a configuration. */
enum pipeline_variant {
	PIPELINE_AS_IS,
	PIPELINE_ONE_STAGE,
	PIPELINE_MORE_STAGE,	/* one stage more */
	PIPELINE_NO_PINGPONG,
	PIPELINE_NO_OVERLAP,	/* nor ping-pong, as the kernel */
	PIPELINE_NVARIANTS
};

/* Variant v of cfg into out; its name ("no ping-pong"). */
void pipeline_variant(int v, const struct pipeline_config *cfg,
    struct pipeline_config *out);
const char *pipeline_variant_name(int v);

/* The model of cfg with costs (ncta blocks), straight to its figures;
 * 0, or -1 with err set. */
int pipeline_fit_model(const struct pipeline_config *cfg,
    const struct pipeline_costs *costs, int ncta,
    struct pipeline_figures *fig, char *err, size_t errlen);

/*
 * The margins the fed model keeps against every shipped recording, block
 * by block (model / recording within [1 / margin, margin]); measured on
 * the four first H200 recordings, the worst were 1.053 for a block and
 * 1.193 for a steady key tile (d = 128 under ping-pong: the model's turns
 * hold the consumers less than the recording's did), rounded up to leave
 * room for the spread between runs (doc/performance.md).
 */
#define PIPELINE_FIT_MARGIN_BLOCK 1.10
#define PIPELINE_FIT_MARGIN_TILE 1.25

/* Is model within margin of recorded (both positive)? */
int pipeline_fit_within(double model, double recorded, double margin);

#endif
