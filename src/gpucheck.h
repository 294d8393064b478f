/*
 * gpucheck.h - the simulator and the teaching kernel, side by side.
 *
 * Runs the same problem through sim_run() and through the GPU kernel with
 * its trace on, lays the kernel's per-step m, alpha, l (and numerator)
 * against the simulator's step numbers, and reports the largest
 * differences per step and in O and lse.  Used by `flashstep compare`,
 * by the lessons' `compare gpu`, and by the GPU tests.
 */
#ifndef FLASHSTEP_GPUCHECK_H
#define FLASHSTEP_GPUCHECK_H

#include <stddef.h>

#include "online.h"
#include "problem.h"
#include "schedule.h"

struct gpucheck_report {
	long steps;
	long worst_step;	/* the step with the largest difference */
	double max_m, max_alpha, max_l, max_acc;	/* over all steps */
	double max_o, max_lse;	/* final output */
	double atol, rtol;	/* the tolerance applied */
	int pass;		/* 1 when everything is within tolerance */
	double kernel_ms;
	char device[64];
};

/*
 * Returns 0 when both ran (rep->pass says whether they agree), or -1 when
 * the GPU could not run (err says why: "built without CUDA support", "no
 * CUDA device found", ...).
 */
int gpucheck_run(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, struct gpucheck_report *rep, char *err,
    size_t errlen);

#endif
