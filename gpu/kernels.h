/*
 * kernels.h - what gpu_run() (gpu.c) hands a kernel's launch() and
 * trace() (kernel.h): plain C types, host arrays in, host arrays out.
 * Each kernel's .cu file owns every CUDA call of its own (device memory
 * through cudacheck.h's counter, copies, launches, timing.h's timing)
 * and keeps its own parameters (tiles, variants) to itself.  Only gpu.c
 * and the .cu files include this.
 */
#ifndef FLASHSTEP_KERNELS_H
#define FLASHSTEP_KERNELS_H

#include "gpu.h"
#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

/*
 * One run of n problems of one shape, already checked against the
 * kernel's entry.  Problem b's inputs are ps[b]'s arrays (q (Tq, d),
 * k (Tk, d), kt (d, Tk), v (Tk, dv), or s (Tq, Tk) in a scores problem);
 * ps[0] gives the shape.  tiling is the tiling asked for (for a kernel
 * with its own tilings, one of them); sched is the simulator's schedule
 * for it, so a tiled kernel visits the same tiles and a trace numbers
 * the same steps (its Br and Bc are cut to Tq and Tk: a kernel picking
 * its own variant reads tiling, not sched).
 *
 * launch() writes res->o, res->lse (allocated, n Tq dv and n Tq floats),
 * res->ms and res->device_bytes.  trace() writes res->m_new, alpha,
 * l_new (allocated when flags has GPU_TRACE, NaN-filled) and res->acc
 * (when GPU_TRACE_ACC), laid out by gpu_trace_at(); with
 * GPU_TEST_NO_RESCALE it leaves the rescale out and writes its own O and
 * lse over the timed ones.
 */
struct gpu_job {
	const struct problem *ps;
	int n;
	const struct tiling *tiling;
	const struct schedule *sched;
	const struct online_rule *rule;
	unsigned flags;			/* GPU_TRACE_ACC, GPU_TEST_NO_RESCALE */
	int repeat;			/* timed runs after the warm-up */
	struct gpu_result *res;
};

#endif
