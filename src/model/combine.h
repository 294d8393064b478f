/*
 * combine.h - the combine: merging a split run's partials into O.
 *
 * A split forward (sim_new_split, N = splits > 1) leaves every row N
 * partial states, one per key range (sim_partials).  The combine merges
 * them with the rule of merge.h, row block by row block (the forward's
 * row blocks), one merge a step, in the order the user picks:
 *
 *   ltr      s = empty; s = s + P0; s = s + P1; ... s + P(N-1)   N merges
 *   reverse  the same from P(N-1) down to P0                      N merges
 *   tree     P0 + P1, P2 + P3, ... then those pairwise, ...      N - 1 merges
 *            (an odd one out waits for the next level)
 *
 * ("+" is the merge.)  The two lists start from the empty state, as the
 * forward's state does and as FlashAttention's combine starts from zero
 * sums; merging into the empty state copies a partial exactly.  So ltr
 * and tree associate alike up to N = 3 and give the same bits there, and
 * reverse gives ltr's bits at N = 2 (a merge of two is commutative bit
 * for bit); other N may differ in the last bits, never by more than
 * rounding.
 *
 * A step is one merge of one row block, in phases:
 *
 *   LOAD      the partial operand(s) from HBM (a running state is on chip)
 *   MAX       m = max(m_a, m_b)  (olse: of the two lse)
 *   WEIGHTS   w_a, w_b (olse: and the merged lse)
 *   UPDATE    l = w_a l_a + w_b l_b,  u = w_a u_a + w_b u_b
 *   FINALIZE  on the row block's last merge: O = u / l, lse = m + log l
 *             (the olse form already is (o, lse))
 *
 * Steps are numbered block after block: step k is merge k mod M of row
 * block k / M, M = combine_merges().  Every merge's numbers are computed
 * on arrival and the phase is a cursor over them, as in sim.h; a seek
 * replays at most one row block's merges (from the previous position
 * when it is earlier in the same block), through the one function that
 * combine_run uses, so seeking gives the bits that running gives.
 *
 * Traffic: each partial operand is read from HBM once, R traffic_partial
 * _bytes; the finalize writes O in the problem's dtype and lse in
 * float32.  Intermediate states stay on chip.
 */
#ifndef FLASHSTEP_COMBINE_H
#define FLASHSTEP_COMBINE_H

#include <stddef.h>

#include "merge.h"
#include "sim.h"
#include "traffic.h"

enum combine_order {
	COMBINE_LTR,
	COMBINE_TREE,
	COMBINE_REVERSE,
};

struct combine_rule {
	enum combine_order order;
	enum merge_bug bug;
};

enum combine_phase {
	COMBINE_PHASE_LOAD,
	COMBINE_PHASE_MAX,
	COMBINE_PHASE_WEIGHTS,
	COMBINE_PHASE_UPDATE,
	COMBINE_PHASE_FINALIZE,
};
#define COMBINE_PHASES 5
#define COMBINE_PHASE_LAST (-1)

/* An operand of a merge: the empty state, partial `index`, or the state
 * in slot `index` (an earlier merge's result, on chip). */
enum combine_source {
	COMBINE_EMPTY,
	COMBINE_PARTIAL,
	COMBINE_SLOT,
};

struct combine_operand {
	enum combine_source source;
	int index;
};

/* One merge of the plan: slot dst = a + b. */
struct combine_merge {
	int dst;
	struct combine_operand a, b;
};

struct combine_view {
	long step;
	enum combine_phase phase;	/* phases 0 .. phase are done */
	int nphases;		/* 4, or 5 on a row block's last merge */
	int block;		/* the forward's row block i */
	int r0, r1, rows, dv;	/* its rows, in the schedule's order */
	int merge;		/* index in the plan, 0 .. combine_merges()-1 */
	struct combine_merge op;
	int last;		/* the block's last merge: it finalizes */
	/* rows; in the olse form m is the lse and l is 1 (0: empty) */
	const float *m_a, *l_a, *m_b, *l_b;
	const float *m, *l, *w_a, *w_b;
	const float *u_a, *u_b, *u;	/* (rows, dv); olse: o */
	const float *o, *lse;	/* (rows, dv) and rows, when finalized */
	struct traffic traffic;	/* HBM bytes of merges 0 .. step-1, and of
				 * step through phase */
};

struct combine;

/* Called by combine_run after each merge; non-zero stops the run. */
typedef int (*combine_step_fn)(const struct combine_view *v, void *ctx);

/* "load", "max", "weights", "update", "finalize". */
const char *combine_phase_name(int phase);
const char *combine_order_name(enum combine_order o);
int combine_order_parse(const char *name, enum combine_order *out);
const char *combine_form_name(enum merge_form f);
int combine_form_parse(const char *name, enum merge_form *out);
const char *combine_bug_name(enum merge_bug b);
int combine_bug_parse(const char *name, enum merge_bug *out);

/*
 * A combine over the partials of a split sim, which it borrows (run
 * sim_run before combine_run or combine_seek; keep the sim alive).
 * Returns NULL with err set when the sim has no splits, the bug does not
 * exist in the sim's partial form (unweighted needs olse), or no memory.
 * The new combine stands at step 0, phase LOAD.  Seeks remember where
 * they were: after a new sim_run, call combine_run (which starts afresh)
 * before seeking again.
 */
struct combine *combine_new(const struct sim *sim,
    const struct combine_rule *rule, char *err, size_t errlen);
void combine_free(struct combine *c);

long combine_steps(const struct combine *c);
int combine_merges(const struct combine *c);
const struct combine_merge *combine_plan(const struct combine *c);
const struct combine_rule *combine_rule(const struct combine *c);
enum merge_form combine_form(const struct combine *c);
const struct combine_view *combine_view(const struct combine *c);

/* The phases of step k: 5 on a row block's last merge, else 4. */
int combine_step_phases(const struct combine *c, long k);

/* Goes to merge step k and phase (or COMBINE_PHASE_LAST).  Returns 0, or
 * -1 when k is out of range (the position is then unchanged). */
int combine_seek(struct combine *c, long k, int phase);

/* One phase forwards (+1) or back (-1), across steps; -1 at either end. */
int combine_move_phase(struct combine *c, int delta);

/*
 * Runs every merge in order, calling fn (if not NULL) after each, and
 * writes O (H Tq, dv) and lse (H Tq), head after head, when not NULL.
 * Returns 0, or fn's non-zero value.  Leaves the combine at its last step.
 */
int combine_run(struct combine *c, combine_step_fn fn, void *ctx, float *o,
    float *lse);

/* HBM bytes of the whole combine: partials read, O and lse written. */
void combine_traffic(const struct combine *c, struct traffic *out);

/*
 * How far a split run's O and lse may lie from the unsplit run's on the
 * same problem and tiling, by float32 rounding alone (correct rules, no
 * bug modes): the largest entry-wise difference allowed, over all rows.
 * The derivation is in combine.c.  Not 0: the same terms summed in
 * another order round differently.
 */
struct combine_bounds {
	double o, lse;
};
void combine_bound(const struct combine *c, struct combine_bounds *out);

#endif
