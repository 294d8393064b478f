/*
 * gpucheck.h - the simulator and a GPU kernel, side by side.
 *
 * Runs the same problem through sim_run() and through any kernel of the
 * table that has a trace (kernel.h), lays the kernel's per-step m, alpha,
 * l (and numerator) against the simulator's step numbers, and reports the
 * largest differences per step and in O and lse.  Used by `flashstep
 * compare`, the lessons' `compare gpu`, the view's G key (gpucheck_trace)
 * and the GPU tests.
 *
 * The closeness rule, the one every comparison of the GPU half uses
 * (gpucheck.c says why these numbers): a GPU value g agrees with the
 * simulator's value s when
 *     |g - s| <= atol + rtol |s|
 *   m, alpha, l, lse:  rtol = atol = GPUCHECK_RTOL + 2 delta
 *   u, o and O:        rtol = rtol_acc + 2 delta, atol = rtol max|V|,
 *                      times l_new for u (whose size is l max|V|)
 *   rtol_acc = GPUCHECK_RTOL in fp32, and the storage type's unit
 *   roundoff times 2 in fp16 (2^-10) and bf16 (2^-7).
 *   delta = 0 for a kernel in the simulator's order (GPU_ARITH_SIM_ORDER);
 *   for tensor-core arithmetic the largest relative difference one
 *   p = exp(s - m) can have: (9d/8 + 8) 2^-24 S1 + 2^-20, where
 *   S1 = scale max_r |q_r| max_c |k_c| bounds every sum_x |q_x k_x| scale.
 * Two infinities of the same sign agree (m = -inf, lse = -inf); a NaN
 * never does.
 *
 * A kernel in the simulator's order promises more, and is held to it:
 * m the same bits at every step (S summed in the same order without
 * fused multiply-adds), and alpha within GPUCHECK_ALPHA_UNITS units of
 * 2^-23 |alpha| (one expf each: CUDA's within 2 units, glibc's within 1).
 * And on a problem whose every p and alpha is exact (gpucheck_exact_p:
 * 0 or 1 on both sides), the numerator u (or o) the same bits at every
 * step, and O too: what is left is sums, products and quotients in the
 * same order, each rounded once on both sides, so the order of P V's sum
 * shows in u's last bits.
 */
#ifndef FLASHSTEP_GPUCHECK_H
#define FLASHSTEP_GPUCHECK_H

#include <math.h>
#include <stddef.h>

#include "gpu.h"
#include "model/dtype.h"
#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

#define GPUCHECK_RTOL 1e-4
#define GPUCHECK_ALPHA_UNITS 3.0

/* The numerator is compared only while its trace stays under this. */
#define GPUCHECK_ACC_TRACE_MAX ((size_t)256 << 20)

/* The rule's numbers for one kernel and problem (see above). */
struct gpucheck_tol {
	double rtol;		/* and atol: m, alpha, l, lse */
	double rtol_acc;	/* the numerator and O */
	double vmax;		/* max |V| */
	double delta;		/* the arithmetic's term (0: simulator's order) */
};

/* rtol_acc before delta: twice the unit roundoff of P's storage type
 * (e4m3's 3 mantissa bits: 2^-3). */
static inline double
gpucheck_rtol_acc(int dtype)
{
	return dtype == DTYPE_FP16 ? 0x1p-10 : dtype == DTYPE_BF16 ? 0x1p-7 :
	    dtype == DTYPE_FP8 ? 0x1p-3 : GPUCHECK_RTOL;
}

/* FP8's products of codes are exact, but Hopper's FP8 tensor cores add
 * them in fewer bits than float32: about 14 kept, DeepSeek-V3's report
 * says (section 3.3.2, measured on the H800), and on the H200 outlier
 * inputs (whose products differ most in size) moved lse up to 1.2 times
 * a 2^-14 bound, so it takes 2^-13: an S entry within 2^-13 of the sum
 * of its terms' magnitudes, scale included at most S1.  The simulator's
 * dequantized operands and the kernel's two scales round 4 times more. */
static inline double
gpucheck_fp8_delta(double s1)
{
	return 0x1p-13 * s1 + 4.0 * 0x1p-24 * s1;
}

/* delta of tensor-core arithmetic at head width d, S1 as above. */
static inline double
gpucheck_tensor_delta(int d, double s1)
{
	return (9.0 * d / 8.0 + 8.0) * 0x1p-24 * s1 + 0x1p-20;
}

static inline void
gpucheck_tol_set(struct gpucheck_tol *tol, int dtype, double delta,
    double vmax)
{
	tol->delta = delta;
	tol->vmax = vmax;
	tol->rtol = GPUCHECK_RTOL + 2.0 * delta;
	tol->rtol_acc = gpucheck_rtol_acc(dtype) + 2.0 * delta;
}

/* The atol of the numerator (scale = l_new for u, 1 for o) and of O
 * (scale 1). */
static inline double
gpucheck_atol_acc(const struct gpucheck_tol *tol, double scale)
{
	return tol->rtol_acc * tol->vmax * scale;
}

/* The rule for kernel k on problem p: delta from k's arithmetic. */
void gpucheck_tolerance(const struct gpu_kernel *k, const struct problem *p,
    struct gpucheck_tol *tol);

/* Does g agree with s: m, alpha, l or lse? */
int gpucheck_close(const struct gpucheck_tol *tol, double g, double s);

/*
 * Does got agree with ref, |got - ref| <= atol + rtol |ref| (two
 * infinities of the same sign agree, a NaN never does)?  Records
 * |got - ref| in *maxdiff when it is larger (infinity for a NaN, or an
 * infinity against a finite value) and how many times the allowed
 * difference it is in *excess (0 for the same infinity; over 1 when it
 * does not agree).
 */
int gpucheck_agree(double got, double ref, double atol, double rtol,
    double *maxdiff, double *excess);

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
	int pass;		/* 1: within tolerance, and the order promise
				 * kept when the kernel makes it */
	double kernel_ms;
	char device[64];

	double rtol_acc;	/* u, o and O (see above) */
	double delta;		/* the arithmetic's term (0: simulator's order) */
	double worst_excess;	/* largest |gpu - sim| / allowed, anywhere */
	long failures;		/* values beyond the tolerance */
	long first_failure;	/* first step with one (-1: none, or O/lse only) */
	int acc_compared;	/* 0 when the numerator trace was too large */

	/* The order promise (GPU_ARITH_SIM_ORDER kernels; else 0 and 1). */
	int order_promised;
	long m_inexact;		/* m values not the simulator's bits */
	double alpha_units;	/* largest |gpu - sim| of alpha in units of
				 * 2^-23 max(|gpu|, |sim|) */
	long u_compared;	/* numerator and O values held to the bits (on
				 * a gpucheck_exact_p problem; else 0) */
	long u_inexact;		/* ... that are not the simulator's bits */
	int order_kept;		/* m_inexact == 0, alpha_units <= the bound,
				 * u_inexact == 0 */

	struct gpucheck_step *step;	/* steps entries, when asked for */
};

/*
 * Test only: the kernel runs these bug modes in place of the ones the
 * simulator it is held against runs, so the comparison must fail: how
 * the tests show each check able to fail with no fault compiled into a
 * kernel.  Every other caller passes NULL.
 */
struct gpucheck_fault {
	int bug;		/* enum online_bug: the forward, split ranges */
	int merge_bug;		/* enum merge_bug: the split combine */
	int grad_bug;		/* enum backward_bug: the backward */
};

/* What gpucheck_run_many is asked to do beyond the plain comparison. */
struct gpucheck_opts {
	int per_step;		/* fill rep->step (free with gpucheck_report_free) */
	const struct gpu_kernel *kernel;	/* NULL: teaching */
	const struct gpucheck_fault *fault;	/* NULL but in tests */
};

/*
 * Is every p = exp(s - m_new) and every alpha of p exactly 0 or 1, in
 * any tiling and split?  So when p is a scores problem each of whose
 * rows has one finite value on every key it sees (the mask's, or -inf
 * in S): m_new is that value once a key is seen, so s - m_new is 0 or
 * -inf, and exp(0) = 1, exp(-inf) = 0 on both sides.
 */
int gpucheck_exact_p(const struct problem *p);

/*
 * Returns 0 when both ran (rep->pass says whether they agree), or -1
 * when the kernel could not run (err says why: what it does not take,
 * "built without CUDA support", "no CUDA device found", ...;
 * gpu_available() tells the kinds apart).
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

/*
 * The view's G key: a kernel's trace of one problem, owned by the
 * caller, who drops it when the problem, tiling or rule change.  It
 * keeps what it needs (the trace, the schedule, the rule's numbers), so
 * it never looks at the problem again.  NULL with err when the kernel
 * could not run.
 */
struct gpucheck_trace;
struct gpucheck_trace *gpucheck_trace_new(const struct gpu_kernel *k,
    const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, char *err, size_t errlen);
void gpucheck_trace_free(struct gpucheck_trace *tr);

/* The kernel's m_new, alpha and l_new for the rows of step k (r1 - r0
 * values each, the simulator's step numbering).  0, or -1 with err. */
int gpucheck_trace_step(const struct gpucheck_trace *tr, long k,
    float *m_new, float *alpha, float *l_new, char *err, size_t errlen);

/* Does the kernel's m, alpha or l value g agree with the simulator's s
 * (the rule above)? */
int gpucheck_trace_agrees(const struct gpucheck_trace *tr, double g,
    double s);

#endif
