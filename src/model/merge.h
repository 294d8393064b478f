/*
 * merge.h - the rule that merges two partial softmax states: the seed's
 * rescale, seen as an associative merge.  Header only and plain C, so
 * that the simulator's combine (combine.c) and the CUDA combine kernels
 * (gpu/teach_split.cu, gpu/decode.cu) run the very same lines.
 *
 * A partial is one query row's state over one key range (split-KV):
 *
 *   mlu   (m, l, u): m the max score, l = sum e^(s - m), u = sum e^(s - m) v
 *   olse  (o, lse):  o = u / l, lse = m + log l, the pair FlashAttention
 *                    stores; as a state it is (m = lse, l = 1, u = o)
 *
 * Two partials a and b merge into one:
 *
 *   mlu   m = max(m_a, m_b)   w_a = e^(m_a - m)   w_b = e^(m_b - m)
 *         l = w_a l_a + w_b l_b                  u = w_a u_a + w_b u_b
 *   olse  m = max(lse_a, lse_b)   lse = m + log(e^(lse_a - m) + e^(lse_b - m))
 *         w_a = e^(lse_a - lse)   w_b = e^(lse_b - lse)   o = w_a o_a + w_b o_b
 *
 * which is exactly the online update of a tile (online.h), with a whole
 * partial in place of the tile.  An empty side (m or lse = -inf: the mask
 * hid its whole range, or the range has no keys) gets weight 0, and two
 * empty sides give the empty state (m = -inf, l = 0, u = 0): never NaN.
 * Real-number merges are associative and commutative; float32 merges are
 * commutative bit for bit (a sum of two products does not care which is
 * first) but not associative: a different merge order rounds differently.
 *
 * The bug modes break the rule on purpose:
 *   no-rescale-one  b's factor is left at 1.  It hides where that factor
 *                   is 1 anyway: in mlu when b holds the larger max, in
 *                   olse when a is empty.
 *   unweighted      o = o_a + o_b: normalized outputs summed without their
 *                   weights (olse only).  It hides where all but one
 *                   partial are empty.
 *   last-max        m = m_b, b's max instead of the larger one.  The merge
 *                   is still exact in real numbers (any m is a valid
 *                   reference point), so it hides while e^(m_a - m_b)
 *                   stays finite; it breaks when a partial's max is more
 *                   than ~88 above the one after it (e^89 overflows
 *                   float32), or when the last partial is empty.
 */
#ifndef FLASHSTEP_MERGE_H
#define FLASHSTEP_MERGE_H

#include <math.h>

#if defined(__CUDACC__)
#define MERGE_FN __host__ __device__ static inline
#else
#define MERGE_FN static inline
#endif

enum merge_form {
	MERGE_MLU,		/* (m, l, u): the running state itself */
	MERGE_OLSE,		/* (o, lse): normalized, as FlashAttention stores */
};

enum merge_bug {
	MERGE_BUG_NONE,
	MERGE_BUG_NO_RESCALE_ONE,	/* b's factor forgotten */
	MERGE_BUG_UNWEIGHTED,		/* o = o_a + o_b (olse only) */
	MERGE_BUG_LAST_MAX,		/* m = m_b, not max(m_a, m_b) */
};
#define MERGE_BUGS 4

/* One merge's numbers for one row.  m is the merged max (mlu) or the
 * merged lse (olse); l the merged sum (mlu; olse: 1, or 0 when both
 * sides are empty); each accumulator entry becomes w_a u_a + w_b u_b. */
struct merge_weights {
	float m, l, w_a, w_b;
};

/* e^(m_s - m) for a side whose max is m_s: 0 for an empty side. */
MERGE_FN float
merge_factor(float m_s, float m)
{
	return m_s == -INFINITY ? 0.0f : expf(m_s - m);
}

/*
 * The weights of merging b into a, for one row: (m_a, l_a) and (m_b,
 * l_b) in mlu; (lse_a, -) and (lse_b, -) in olse (l is not read).  The
 * caller then forms u = w_a u_a + w_b u_b entry by entry (merge_mix).
 */
MERGE_FN struct merge_weights
merge_weigh(enum merge_form form, enum merge_bug bug, float m_a, float l_a,
    float m_b, float l_b)
{
	struct merge_weights w;
	float m = bug == MERGE_BUG_LAST_MAX ? m_b : m_a > m_b ? m_a : m_b;

	if (form == MERGE_MLU) {
		w.m = m;
		w.w_a = merge_factor(m_a, m);
		w.w_b = bug == MERGE_BUG_NO_RESCALE_ONE ? 1.0f :
		    merge_factor(m_b, m);
		w.l = w.w_a * l_a + w.w_b * l_b;
		return w;
	}
	/* olse: the sum of the two exponentials about m gives the merged
	 * lse; each side's weight is then its share, e^(lse_s - lse). */
	if (m == -INFINITY) {
		w.m = -INFINITY;
		w.l = 0.0f;
		w.w_a = w.w_b = 0.0f;
		return w;
	}
	w.m = m + logf(merge_factor(m_a, m) + merge_factor(m_b, m));
	w.l = 1.0f;
	w.w_a = merge_factor(m_a, w.m);
	w.w_b = merge_factor(m_b, w.m);
	if (bug == MERGE_BUG_UNWEIGHTED)
		w.w_a = w.w_b = 1.0f;
	else if (bug == MERGE_BUG_NO_RESCALE_ONE)
		w.w_b = 1.0f;
	return w;
}

/* One accumulator entry of the merge. */
MERGE_FN float
merge_mix(struct merge_weights w, float u_a, float u_b)
{
	return w.w_a * u_a + w.w_b * u_b;
}

/* Is this bug meaningful in this form?  unweighted sums normalized
 * outputs, which only the olse form has. */
MERGE_FN int
merge_bug_valid(enum merge_form form, enum merge_bug bug)
{
	return bug != MERGE_BUG_UNWEIGHTED || form == MERGE_OLSE;
}

#endif
