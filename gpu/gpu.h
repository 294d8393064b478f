/*
 * gpu.h - the only door to the GPU half: a plain C header.
 * (Placeholder: the API lands with the teaching kernel.)
 */
#ifndef FLASHSTEP_GPU_H
#define FLASHSTEP_GPU_H

/* 1 when this build has CUDA kernels, 0 for the stub. */
int gpu_built(void);

#endif
