/*
 * gpucmd.h - what the GPU commands (cmd_gpu.c, cmd_compare.c,
 * cmd_bench_gpu.c) share: the options they have in common, the device
 * check and its exit status, and B*H problems drawn from one spec.
 */
#ifndef FLASHSTEP_GPUCMD_H
#define FLASHSTEP_GPUCMD_H

#include <stddef.h>

#include "gpu/gpu.h"
#include "model/options.h"

/*
 * The options every GPU command has.  A command's own argument struct
 * starts with one of these, so the setters below take that struct's
 * pointer as their ctx.
 */
struct gpucmd_args {
	const struct gpu_kernel *kernel;	/* --kernel (default teaching) */
	long heads, batch;	/* --heads, --batch */
	long repeat;		/* --repeat: timed runs after a warm-up */
	enum gpu_dq_mode dq;	/* --dq, with --backward */
	int dq_set;		/* --dq was given */
};

void gpucmd_args_init(struct gpucmd_args *a, long repeat);

/* Setters of the shared options, for the commands' option tables. */
int gpucmd_set_kernel(void *ctx, const char *v, char *err, size_t errlen);
int gpucmd_set_heads(void *ctx, const char *v, char *err, size_t errlen);
int gpucmd_set_batch(void *ctx, const char *v, char *err, size_t errlen);
int gpucmd_set_repeat(void *ctx, const char *v, char *err, size_t errlen);
int gpucmd_set_dq(void *ctx, const char *v, char *err, size_t errlen);

/*
 * Parses a command's options (usage and --help printed from the same
 * tables); -1 to go on, or the exit status to return now.
 */
int gpucmd_parse(const char *name, const char *usage, int argc, char **argv,
    unsigned groups, const struct options_entry *entries, void *ctx,
    struct options *o);

/*
 * The device's name in dev and 0, or the reason there is none printed in
 * one line as "flashstep NAME: ..." and the exit status that goes with
 * it (3 built without CUDA, 4 no usable driver, 5 no device).
 */
int gpucmd_device(const char *name, char *dev, size_t devlen);

/*
 * A kernel with its own tilings: its tiling for head width d (its
 * default, or the one --br and --bc name) into o->tiling and o->spec.bc,
 * where spike inputs land; the order stays the user's, so a kernel
 * that lacks it refuses it by name.  Other kernels: nothing to do.
 */
int gpucmd_tiling(const struct gpu_kernel *k, int d, struct options *o,
    char *err, size_t errlen);

/* B*H problems: problem b*H + h draws its inputs from seed + b*H + h. */
int gpucmd_problems(const struct options *o, const struct gpucmd_args *a,
    struct problem **out, int *nout, char *err, size_t errlen);
void gpucmd_free_problems(struct problem *ps, int n);

/*
 * For --backward: --dq only with it, the gradient files only where the
 * command writes them (files: 1) and for one problem, the kernel's
 * backward able to take the problem.  0, or -1 with err.
 */
int gpucmd_backward_args(const struct options *o, const struct gpucmd_args *a,
    const struct problem *ps, int n, int files, char *err, size_t errlen);

/* dO of each of n problems, one after another in *out (malloc'd): the
 * --grad-output file for every one, or N(0, 1) from problem b's seed. */
int gpucmd_grad_outputs(const struct options *o, const struct problem *ps,
    int n, float **out, char *err, size_t errlen);

/* The problem, with the kernel's tiling picked before (when --d is
 * given) and after it is built (d read from the files). */
int gpucmd_setup(struct options *o, const struct gpucmd_args *a,
    struct problem **out, int *nout, char *err, size_t errlen);

/* "heads:    H x batch B = N problems, seeds S .. S+N-1" when n > 1. */
void gpucmd_print_heads(const struct options *o, const struct gpucmd_args *a,
    int n);

#endif
