/*
 * pipeline_warps.h - the dependencies of a kernel without a producer,
 * the mma.sync kernel (gpu/fast.cu), held against its recorded events.
 *
 * There every warp copies its share of each tile (cp.async), waits for
 * its own copies, and a barrier (__syncthreads) then says that every
 * warp's share landed, and, for the buffers of the tile before, that
 * every warp is done reading them.  So the events' roles are warps
 * (0 .. warps - 1), the stage is one of the two K/V buffers and the
 * round its use (gpu/fast_record.h lists the events).
 */
#ifndef FLASHSTEP_PIPELINE_WARPS_H
#define FLASHSTEP_PIPELINE_WARPS_H

#include <stddef.h>

#include "model/pipeline.h"

/*
 * Checks, per block, for K and V (the Q tile is loaded once and waited
 * for with K_0):
 *   - a stage is read only after its copy landed: a warp's S = Q K^T
 *     (or P V) of a stage's round begins no earlier than every warp's
 *     wait for its share of that round's copy ended (and every warp
 *     issued a share);
 *   - a warp releases a stage only after its own read of it ended;
 *   - a stage is refilled only after every warp released it: a copy of
 *     round r begins no earlier than every warp's release of round r - 1.
 * An event of a role outside 0 .. warps - 1 is itself a violation.
 * Returns the number of violations (0: all hold); the first is described
 * in why.
 */
int pipeline_check_warps(const struct pipeline_event *ev, size_t nev,
    int warps, char *why, size_t whylen);

/*
 * Sorts a recording's events by block, then by when they began (then by
 * warp), so that stepping through them goes through the block's time
 * across its warps; a recording is written warp by warp.
 */
void pipeline_warps_sort(struct pipeline_event *ev, size_t nev);

#endif
