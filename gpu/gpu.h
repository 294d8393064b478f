/*
 * gpu.h - the only door to the GPU half: a plain C header.
 *
 * Built with CUDA (gpu/*.cu) or as a stub (gpu/gpu_stub.c) that answers
 * every call with "built without CUDA support".  Nothing here starts
 * CUDA until a function is called, so check can fork before the first
 * call.  Every function returns 0, or -1 with one line in err:
 *   "built without CUDA support"       (the stub)
 *   "no CUDA device found"             (a CUDA build on a machine without
 *                                       a usable GPU or driver)
 *   "<call> failed at <file>:<line>: <CUDA error string>"
 */
#ifndef FLASHSTEP_GPU_H
#define FLASHSTEP_GPU_H

#include <stddef.h>

#include "online.h"
#include "problem.h"
#include "schedule.h"

/* 1 when this build has CUDA kernels, 0 for the stub. */
int gpu_built(void);

/* 0 when a CUDA device can be used now; its name goes to name (may be
 * NULL).  -1 with the reason otherwise. */
int gpu_available(char *name, size_t namelen, char *err, size_t errlen);

/*
 * For the view's G key: the teaching kernel's m_new, alpha and l_new for
 * the rows of step k (r1 - r0 values each, in the simulator's step
 * numbering).  The first call for a problem runs the kernel with its
 * trace on; later calls with the same p, t and rule reuse that trace.
 * gpu_forget() drops it (call it when the problem changes in place).
 */
int gpu_step_values(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, long k, float *m_new, float *alpha,
    float *l_new, char *err, size_t errlen);
void gpu_forget(void);

#endif
