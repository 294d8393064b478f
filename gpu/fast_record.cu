/*
 * fast_record.cu - the recording build of the mma.sync kernel: fast.cu
 * with FAST_RECORD, so that lane 0 of each warp writes its steps as
 * events (fast_record.h).  Its own object and its own kernels: the timed
 * kernel (fast.o) is never the recording one.  The variants: each d's
 * default, the tiling the timed build runs by default.
 */
#define FAST_RECORD 1
#define FAST_VARIANTS							\
	FAST_VARIANT(64, 128, 64, 4, false, 1),				\
	FAST_VARIANT(128, 128, 32, 4, false, 1),
#include "fast.cu"
