/*
 * gpuprobe.h - the GPU suites' skip rule: probe for a device in a forked
 * child (so CUDA never starts in the process that check forks its tests
 * from) and exit 77 only when that child finds none, or in a build
 * without CUDA.
 */
#ifndef FLASHSTEP_GPUPROBE_H
#define FLASHSTEP_GPUPROBE_H

/* Returns when a device can be used; exits 77 (skip) or 1 otherwise. */
void gpuprobe_require_device(void);

#endif
