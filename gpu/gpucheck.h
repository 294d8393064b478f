/*
 * gpucheck.h - the simulator and a GPU kernel, side by side.
 *
 * Runs the same problem through sim_run() and through the teaching
 * kernel or the fast kernel with its trace on, lays the kernel's per-step
 * m, alpha, l (and numerator) against the simulator's step numbers, and
 * reports the largest differences per step and in O and lse.  Used by
 * `flashstep compare`, by the lessons' `compare gpu`, and by the GPU
 * tests.
 *
 * The tolerance (gpucheck.c says why these numbers): a GPU value g
 * agrees with the simulator's value s when
 *     |g - s| <= atol + rtol |s|
 *   m, alpha, l, lse:  rtol = atol = GPUCHECK_RTOL (+ 2 delta)
 *   u, o and O:        rtol = rtol_acc (+ 2 delta), atol = rtol * max|V|,
 *                      times l_new for u (whose size is l max|V|)
 *   rtol_acc = GPUCHECK_RTOL in fp32, and the storage type's unit
 *   roundoff times 2 in fp16 (2^-10) and bf16 (2^-7).
 *   delta = 0 for the teaching kernel; for the fast kernel the largest
 *   relative difference one p = exp(s - m) can have between the tensor
 *   cores and the simulator: (9d/8 + 8) 2^-24 S1 + 2^-20, where
 *   S1 = scale max_r |q_r| max_c |k_c| bounds every sum_x |q_x k_x| scale.
 * Two infinities of the same sign agree (m = -inf, lse = -inf); a NaN
 * never does.
 */
#ifndef FLASHSTEP_GPUCHECK_H
#define FLASHSTEP_GPUCHECK_H

#include <stddef.h>

#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

#define GPUCHECK_RTOL 1e-4

/* The numerator is compared only while its trace stays under this. */
#define GPUCHECK_ACC_TRACE_MAX ((size_t)256 << 20)

/* One step: the largest |gpu - sim| over its rows. */
struct gpucheck_step {
	double m, alpha, l, acc;
	double excess;		/* largest |gpu - sim| / allowed: > 1 fails */
};

struct gpucheck_report {
	long steps;
	long worst_step;	/* the step with the largest difference */
	double max_m, max_alpha, max_l, max_acc;	/* over all steps */
	double max_o, max_lse;	/* final output */
	double atol, rtol;	/* the tolerance applied to m, alpha, l, lse */
	int pass;		/* 1 when everything is within tolerance */
	double kernel_ms;
	char device[64];

	double rtol_acc;	/* u, o and O (see above) */
	double delta;		/* the fast kernel's term (0: teaching) */
	double worst_excess;	/* largest |gpu - sim| / allowed, anywhere */
	long failures;		/* values beyond the tolerance */
	long first_failure;	/* first step with one (-1: none, or O/lse only) */
	int acc_compared;	/* 0 when the numerator trace was too large */
	struct gpucheck_step *step;	/* steps entries, when asked for */
};

enum gpucheck_kernel {
	GPUCHECK_TEACHING,	/* gpu_teach: any tiling, order, rule */
	GPUCHECK_FAST,		/* gpu_fast: its tilings, fa2 */
};

/* What gpucheck_run_many is asked to do beyond the plain comparison. */
struct gpucheck_opts {
	unsigned gpu_flags;	/* more kernel flags: GPU_TEST_NO_RESCALE */
	int per_step;		/* fill rep->step (free with gpucheck_report_free) */
	enum gpucheck_kernel kernel;
};

/*
 * Returns 0 when both ran (rep->pass says whether they agree), or -1
 * when the GPU could not run (err says why: "built without CUDA support",
 * "no CUDA device found", ...).
 */
int gpucheck_run(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, struct gpucheck_report *rep, char *err,
    size_t errlen);

/*
 * The same for n problems of one shape (heads and batch) in one launch:
 * reps[b] is problem b's report, against its own simulator.  opts may
 * be NULL.  Returns 0 or -1 as gpucheck_run.
 */
int gpucheck_run_many(const struct problem *ps, int n, const struct tiling *t,
    const struct online_rule *rule, const struct gpucheck_opts *opts,
    struct gpucheck_report *reps, char *err, size_t errlen);

/* Frees rep->step; the rest of the report stays readable. */
void gpucheck_report_free(struct gpucheck_report *rep);

#endif
