/*
 * wgmma_record.cu - the recording build of the wgmma kernel: wgmma.cu
 * with WGMMA_RECORD, so that one thread of each role writes its steps
 * as events (wgmma_record.h).  Its own object and its own kernels: the
 * timed kernel (wgmma.o) is never the recording one.  The variants:
 * each d's default, and at d = 128 the same without ping-pong (the
 * measured side of the model's what-if).
 */
#define WGMMA_RECORD 1
#define WGMMA_VARIANTS							\
	WGMMA_VARIANT(64, 128, 4, 3, true, 2, 0),	/* Br = 192 */	\
	WGMMA_VARIANT(128, 128, 2, 2, true, 2, 0),			\
	WGMMA_VARIANT(128, 128, 2, 2, false, 2, 0),
#include "wgmma.cu"
