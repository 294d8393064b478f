/*
 * varlen.h - a packed batch (problem.h's nseq, cu_q, cu_k: flash-
 * attention's varlen) run sequence by sequence.
 *
 * Each sequence b is its own problem (problem_seq): its own schedule,
 * with a ragged last tile where Tq_b or Tk_b is not a multiple of Br or
 * Bc, its masks aligned bottom-right within it.  No tile holds rows or
 * keys of two sequences, so the packed batch does exactly the work of
 * its sequences run alone: its counters are their sums, its outputs
 * theirs, bit for bit, written at the sequence's offsets.
 */
#ifndef FLASHSTEP_VARLEN_H
#define FLASHSTEP_VARLEN_H

#include <stddef.h>

#include "backward.h"
#include "combine.h"
#include "online.h"
#include "problem.h"
#include "schedule.h"
#include "traffic.h"

/* What running the sequences cost, summed over them (the peaks onchip
 * and stored: the largest sequence's). */
struct varlen_counts {
	struct traffic total;
	long tiles;		/* tiles visited, over all sequences */
};

/*
 * The simulator's forward of packed batch p (nseq > 0) with tiling t
 * and rule: O (sum Tq_b, dv) and lse (sum Tq_b) at the sequences'
 * offsets (either may be NULL), *counts (may be NULL) summed; tiles
 * (nseq entries, may be NULL) gets each sequence's tile count.  Returns
 * 0, or -1 with err set.
 */
int varlen_forward(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, float *o, float *lse,
    struct varlen_counts *counts, long *tiles, char *err, size_t errlen);

/*
 * varlen_forward with split-KV: each sequence's row blocks cut into
 * sp->splits key ranges (schedule.h; NULL or splits < 2: none), their
 * partials merged by rule cr (combine.h), O and lse the combines'; the
 * counters add each combine's traffic to its forward's.
 */
int varlen_forward_split(const struct problem *p, const struct tiling *t,
    const struct split_plan *sp, const struct combine_rule *cr,
    const struct online_rule *rule, float *o, float *lse,
    struct varlen_counts *counts, long *tiles, char *err, size_t errlen);

/* The double reference of every sequence of p: o (sum Tq_b, dv), lse
 * (sum Tq_b).  Returns 0, or -1 with err set. */
int varlen_reference(const struct problem *p, double *o, double *lse,
    char *err, size_t errlen);

/*
 * The forward and the simulator's backward of every sequence of p, with
 * dO (sum Tq_b, dv) packed as O: g's dq (sum Tq_b, d), dk (sum Tk_b, d)
 * and dv (sum Tk_b, dv) at the sequences' offsets (g->ds must be NULL:
 * a packed batch's S is no one matrix).  *counts (may be NULL) sums the
 * backward's counters.  Returns 0, or -1 with err set.
 */
int varlen_backward(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, const float *dout, enum backward_bug bug,
    const struct backward_grads *g, struct varlen_counts *counts, char *err,
    size_t errlen);

/* The double gradients of every sequence of p (gradref.h), packed as
 * varlen_backward's.  Returns 0, or -1 with err set. */
int varlen_gradref(const struct problem *p, const float *dout, double *dq,
    double *dk, double *dv, char *err, size_t errlen);

#endif
