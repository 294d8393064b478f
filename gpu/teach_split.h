/*
 * teach_split.h - the teaching kernel with split-KV (gpu/teach_split.cu):
 * a plain C entry point, host arrays in and out.
 *
 * It runs the simulator's split schedule (sim_new_split) in float32: one
 * thread block per (row block i, key range s), each range from an empty
 * state, in the teaching kernel's order of operations; every range ends
 * in a partial (m, l, acc) and its finalize (o, lse).  Then a combine
 * kernel merges each row's partials with merge.h's rule, following the
 * combine's plan (combine_plan) merge by merge.
 *
 * The caller lays the schedule out from the simulator's own (schedule.h),
 * so the kernel visits the same tiles with the same ranges and rows:
 *   rows        all rows, H Tq, in the schedule's order
 *   block_rows  (tr + 1): row block i holds rows [block_rows[i],
 *               block_rows[i + 1])  (schedule_rows)
 *   block_kv    (tr): the K/V head of row block i  (schedule_kv_head)
 *   range       (tr, splits, 2): key blocks [j0, j1) of range s of row
 *               block i  (schedule_split_range)
 *   row_out     (rows): the row of Q, O and lse  (schedule_row_out)
 *   row_pos     (rows): the query position, for the mask (schedule_row_pos)
 * Inputs head after head: Q (H Tq, d), K (G Tk, d), V (G Tk, dv), or a
 * scores problem's S (H Tq, Tk) with d = 0, already rounded to dtype.
 *
 * Outputs (caller's host arrays, NULL: not wanted):
 *   part_m, part_l, part_lse  (rows, splits)      entry R splits + s, as
 *   part_acc, part_o          (rows, splits, dv)  sim_partials lays them:
 *                             acc is u, or o under the normalized
 *                             convention (the range's state itself)
 *   merge_m, merge_l          (rows, merges): each merge's m and l
 *   o, lse                    (H Tq, dv), (H Tq): the combine's result
 */
#ifndef FLASHSTEP_TEACH_SPLIT_H
#define FLASHSTEP_TEACH_SPLIT_H

#include <stddef.h>

#include "model/combine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Test-only faults, each to be caught by a comparison with the
 * simulator: the split kernel leaves out the rescale of l and acc (the
 * partials go wrong, where a range has two tiles or more), or the
 * combine drops the last merge's incoming operand (only the merged
 * result goes wrong). */
#define TEACH_SPLIT_FAULT_RESCALE	0x1
#define TEACH_SPLIT_FAULT_MERGE		0x2

struct teach_split_job {
	/* the problem */
	int heads, kv_heads, tq, tk, d, dv;
	float scale;
	int causal, scores, dtype;	/* dtype: enum dtype */
	const float *q, *k, *v, *s;

	/* the schedule, from the simulator's */
	int rows, br, bc, tr, splits;
	const int *block_rows, *block_kv, *range, *row_out, *row_pos;
	int convention, bug;		/* enum online_convention, online_bug */

	/* the combine */
	enum merge_form form;
	enum merge_bug merge_bug;
	const struct combine_merge *plan;
	int merges, slots;		/* plan entries, slots they use */

	unsigned faults;		/* TEACH_SPLIT_FAULT_* */

	/* results */
	float *part_m, *part_l, *part_lse, *part_acc, *part_o;
	float *merge_m, *merge_l;
	float *o, *lse;
	double ms_split, ms_combine;	/* kernel times */
};

/* Runs both kernels.  Returns 0, or -1 with one line in err (a CUDA
 * error, tiles too large for shared memory). */
int teach_split_run(struct teach_split_job *job, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
