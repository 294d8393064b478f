/*
 * gpucheck_split.h - a kernel's split-KV run and the simulator's, side by
 * side (gpucheck.h is the unsplit forward's).
 *
 * The simulator runs the split problem (sim_run: every range's partial)
 * and its combine (combine_run: every merge); the kernel's split run
 * (gpu_split_run) runs the same ranges and the same merges.  Compared:
 *   the partials  m, l, lse, the state (u, or o under the normalized
 *                 convention) and o, of every row of every range
 *   the merges    m and l after every merge of every row (olse: the
 *                 merged lse, and l = 1)
 *   the result    O and lse
 *
 * The rule (gpucheck_split.c says why): a value g agrees with the
 * simulator's s when |g - s| <= atol + rtol |s|, with
 *   partials  gpucheck.h's rule for the kernel (delta = 0 in the
 *             simulator's order): m, l, lse rtol = atol = GPUCHECK_RTOL;
 *             u and o rtol_acc, atol rtol_acc max|V| (times l for u)
 *   merges    m, l: rtol = atol = GPUCHECK_RTOL + e
 *   result    lse as the merges; O rtol_acc + e, atol that times max|V|
 *   e = D GPUCHECK_MERGE_UNITS 2^-24, times max(1, L) in the olse form:
 *   D the depth of the merge plan (the most merges a value passes
 *   through: N for ltr and reverse, about log2 N + 1 for tree), L the
 *   largest |lse| of a partial.
 * Two infinities of the same sign agree, and a NaN agrees with a NaN
 * alone: the last-max merge bug makes them on both sides (a last
 * partial that is empty leaves m = -inf, so e^(m_a - m) overflows).
 * And a kernel in the simulator's order keeps its promise: every
 * partial's m, and in the mlu form every merge's m, the simulator's
 * bits; on a problem whose every p and alpha is exact
 * (gpucheck_exact_p), every partial's state and o too (gpucheck.h).
 */
#ifndef FLASHSTEP_GPUCHECK_SPLIT_H
#define FLASHSTEP_GPUCHECK_SPLIT_H

#include <stddef.h>

#include "gpu.h"
#include "gpucheck.h"

/* Units of 2^-24 a merge may add (gpucheck_split.c). */
#define GPUCHECK_MERGE_UNITS 8.0

/* One range, or one merge: its largest |gpu - sim| over the rows. */
struct gpucheck_split_range {
	double m, l, lse, acc, o;
	double excess;		/* largest |gpu - sim| / allowed: > 1 fails */
};

struct gpucheck_split_merge {
	double m, l;
	double excess;
};

struct gpucheck_split_report {
	int splits, merges;	/* per row block */
	int depth;		/* D above */
	double rtol, rtol_acc;	/* the partials' */
	double rtol_merge, rtol_out;	/* m, l, lse of merges; O */
	double vmax, lse_max;	/* max|V|, L above */

	/* largest |gpu - sim| of each kind */
	double part_m, part_l, part_lse, part_acc, part_o;
	double merge_m, merge_l;
	double max_o, max_lse;

	/* largest |gpu - sim| / allowed of each kind, and failures */
	double part_excess, merge_excess, out_excess;
	long part_failures, merge_failures, out_failures;
	int worst_range, worst_merge;

	/* The order promise (GPU_ARITH_SIM_ORDER kernels; else 0 and 1). */
	int order_promised;
	long m_inexact;		/* m values not the simulator's bits */
	long u_compared;	/* partials' u and o held to the bits */
	long u_inexact;		/* ... that are not the simulator's bits */
	int order_kept;

	int pass;
	double ms_ranges, ms_combine;
	double device_bytes;
	char device[64];

	struct gpucheck_split_range *range;	/* splits entries */
	struct gpucheck_split_merge *merge;	/* merges entries */
};

/*
 * Runs kernel k (NULL: teaching) on split sim sim with combine comb, and
 * the simulator's run and combine (sim_run, combine_run, with their
 * outputs), and compares.  fault: NULL, but in tests (gpucheck.h: the
 * kernel's ranges run fault->bug, its combine fault->merge_bug).
 * Returns 0 when both ran (rep->pass says whether they agree), or -1
 * when the kernel could not run (err says why).
 */
int gpucheck_split_run(const struct gpu_kernel *k, struct sim *sim,
    struct combine *comb, const struct gpucheck_fault *fault,
    struct gpucheck_split_report *rep, char *err, size_t errlen);

/* D above: the most merges any value of comb's plan passes through. */
int gpucheck_split_depth(const struct combine *comb);

/* Frees the per-range and per-merge arrays; the rest stays readable. */
void gpucheck_split_report_free(struct gpucheck_split_report *rep);

#endif
