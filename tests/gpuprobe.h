/*
 * gpuprobe.h - the GPU suites' rule for a machine where no kernel can
 * run: probe for a device in a forked child (so CUDA never starts in the
 * process that check forks its tests from), and then, by gpu_may_skip()
 * (gpu/gpu.h), skip (exit 77) only when the hardware is missing and
 * FLASHSTEP_REQUIRE_GPU is not set, or fail (exit 1) otherwise.  Either
 * way it prints why, in one line.
 */
#ifndef FLASHSTEP_GPUPROBE_H
#define FLASHSTEP_GPUPROBE_H

#include "gpu/gpu.h"

/* Returns when a device can be used; exits 77 (skip) or 1 otherwise. */
void gpuprobe_require_device(void);

/*
 * The same, and kernel k must be able to run on it: a kernel whose code
 * is for one architecture (kernel.h's cc, wgmma: sm_90a) on a device of
 * another, or one this build has no code for, is hardware (or a
 * compiler) that is missing: skip, or fail under FLASHSTEP_REQUIRE_GPU.
 */
void gpuprobe_require_kernel(const struct gpu_kernel *k);

#endif
