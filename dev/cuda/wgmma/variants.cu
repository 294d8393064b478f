/*
 * variants.cu - the Hopper kernel (gpu/wgmma.cu) with every schedule it
 * was measured in, for the lab: gpu/wgmma.cu itself, built with this
 * table in place of the product's (which holds only the variants a user
 * can pick).  Per d, the indices of dev/cuda/wgmma/NOTES.md:
 *   0  the default (as in the product)
 *   1  d = 64: two consumers (Br = 128, the product's other tiling);
 *      d = 128: the overlap with O rescaled after P V (SCHED 1)
 *   2  the plain loop: S, softmax, P V in turn, no ping-pong (SCHED 0)
 *   3  the default's schedule on a persistent grid, Q double-buffered
 * Build: see README in this folder.
 */
/* WGMMA_VARIANT(D, BC, STAGES, CONSUMERS, PINGPONG, SCHED, PERSISTENT) */
#define WGMMA_VARIANTS							\
	WGMMA_VARIANT(64, 128, 4, 3, true, 2, 0),	/* Br = 192 */	\
	WGMMA_VARIANT(64, 128, 4, 2, true, 2, 0),			\
	WGMMA_VARIANT(64, 128, 4, 2, false, 0, 0),			\
	WGMMA_VARIANT(64, 128, 4, 3, true, 2, 1),			\
	WGMMA_VARIANT(128, 128, 2, 2, true, 2, 0),			\
	WGMMA_VARIANT(128, 128, 2, 2, true, 1, 0),			\
	WGMMA_VARIANT(128, 128, 2, 2, false, 0, 0),			\
	WGMMA_VARIANT(128, 128, 2, 2, true, 2, 1),
#include "../../../gpu/wgmma.cu"
