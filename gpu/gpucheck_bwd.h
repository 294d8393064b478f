/*
 * gpucheck_bwd.h - the simulator's backward pass and a kernel's, side by
 * side (gpucheck.h is the forward's).
 *
 * Each problem runs through the simulator's forward for O, lse and the
 * row max, then through the simulator's backward (backward_run) and the
 * kernel's (gpu_backward_run) with the same O, lse and dO, so what is
 * compared is the backward alone.  What is compared depends on how the
 * kernel gets dQ:
 *   ordered  dK_j, dV_j and dQ_i after every step (the kernel's trace,
 *            laid on the simulator's backward step numbers), then the
 *            final gradients: dQ is summed in the simulator's order, so
 *            every partial sum has a simulator value to meet;
 *   atomic   the final dQ, dK and dV only: the key blocks add their dQ
 *            parts in whatever order they finish, so no partial dQ has
 *            a simulator value, and dQ's last bits change from run to
 *            run (FlashAttention 2's way).
 * A scores problem's dS (its gradient) is compared at the end either way.
 *
 * The rule (the kernel's entry gives rtol, derived in its .cu file): a
 * gradient entry g agrees with the simulator's s when
 *     |g - s| <= rtol * m
 * where m is the sum of the magnitudes of the terms s has added so far,
 * taken from the simulator's own tiles step by step (|P| |dO| for dV,
 * |scale| |dS| |Q| for dK, |scale| |dS| |K| for dQ, |dS| for dS): what
 * rounding errors scale with, and what a bug mode's terms really are;
 * plus FLT_MIN (gpucheck_bwd.c says why), so an entry with no terms must
 * be 0 on both sides.  A NaN never agrees.
 */
#ifndef FLASHSTEP_GPUCHECK_BWD_H
#define FLASHSTEP_GPUCHECK_BWD_H

#include <stddef.h>

#include "gpu.h"
#include "gpucheck.h"
#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

/* What gpucheck_bwd_run_many is asked to do. */
struct gpucheck_bwd_opts {
	const struct gpu_kernel *kernel;	/* NULL: teaching */
	enum gpu_dq_mode dq;
	int bug;			/* enum backward_bug, on both sides */
	const struct gpucheck_fault *fault;	/* NULL but in tests: the
					 * kernel runs fault->grad_bug */
	int per_step;			/* fill rep->step (ordered) */
};

/* One step: the largest |gpu - sim| over its rows. */
struct gpucheck_bwd_step {
	double dk, dv, dq;
	double excess;		/* largest |gpu - sim| / allowed: > 1 fails */
};

struct gpucheck_bwd_report {
	long steps;
	int steps_compared;	/* 1: every step (ordered); 0: the final
				 * gradients only (atomic, or a trace over
				 * GPUCHECK_ACC_TRACE_MAX) */
	double rtol;		/* |gpu - sim| <= rtol * magnitude */
	double step_dk, step_dv, step_dq;	/* largest over the steps */
	double max_dq, max_dk, max_dv, max_ds;	/* the final gradients */
	double worst_excess;	/* largest |gpu - sim| / allowed, anywhere */
	long worst_step;	/* its step, -1 for the final gradients */
	long failures;		/* values beyond the tolerance */
	long first_failure;	/* first step with one (-1: none, or final) */
	/* A kernel in the simulator's order, where every p is 0 or 1: the
	 * gradients the simulator's bits (gpucheck_bwd.c says why). */
	int p_exact;		/* every p of every step was 0 or 1 */
	long bits_compared;	/* values held to the bits */
	long bits_inexact;	/* ... that are not the simulator's bits */
	int pass;		/* no failure, bits_inexact == 0 */
	double kernel_ms;
	char device[64];
	struct gpucheck_bwd_step *step;	/* steps entries, when asked for */
};

/*
 * n problems of one shape (heads and batch) with tiling t (Br, Bc),
 * forward rule rule and upstream gradients dout ((n, Tq, dv), rounded
 * to the dtype): reps[b] is problem b's report.  Returns 0 when both ran
 * (reps[b].pass says whether they agree), or -1 when the kernel's
 * backward could not run (err says why).
 */
int gpucheck_bwd_run_many(const struct problem *ps, int n,
    const struct tiling *t, const struct online_rule *rule,
    const float *dout, const struct gpucheck_bwd_opts *opts,
    struct gpucheck_bwd_report *reps, char *err, size_t errlen);

/* Frees rep->step; the rest of the report stays readable. */
void gpucheck_bwd_report_free(struct gpucheck_bwd_report *rep);

#endif
