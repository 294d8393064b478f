/*
 * online_rule.h - what each bug mode does to the update, as one table
 * that the simulator (online.c) and the teaching kernel (gpu/teach.cu)
 * both read, so a new bug mode is added here once.
 *
 * The correct update (online.h) gives alpha to both l and the
 * accumulator, and the normalized convention's old part is alpha l o.
 * A bug mode turns one of those off:
 *
 *   scale_l    l'  = alpha l + sum p        (off: l + sum p)
 *   scale_acc  u'  = alpha u + p V, o' gets alpha   (off: no alpha)
 *   keep_l     normalized: o' = (alpha l o + p V) / l'   (off: alpha o)
 *   normalized_only   the mode has a meaning only under the normalized
 *              convention (online_rule_valid refuses it otherwise)
 *
 * Plain C that C++ and CUDA read too: ONLINE_RULE_FN makes the lookup
 * callable from host and device code (a function-scope table is legal in
 * a __host__ __device__ function; a namespace-scope one is not readable
 * from the device).  The rows are in enum online_bug's order.
 */
#ifndef FLASHSTEP_ONLINE_RULE_H
#define FLASHSTEP_ONLINE_RULE_H

#include "online.h"

#ifdef __CUDACC__
#define ONLINE_RULE_FN __host__ __device__ static inline
#else
#define ONLINE_RULE_FN static inline
#endif

struct online_bug_flags {
	unsigned char scale_l;
	unsigned char scale_acc;
	unsigned char keep_l;
	unsigned char normalized_only;
};

ONLINE_RULE_FN struct online_bug_flags
online_bug_flags(int bug)
{
	static const struct online_bug_flags table[ONLINE_BUGS] = {
		/* scale_l scale_acc keep_l normalized_only */
		{ 1, 1, 1, 0 },		/* BUG_NONE */
		{ 0, 1, 1, 0 },		/* BUG_NUMERATOR_ONLY */
		{ 1, 0, 1, 0 },		/* BUG_DENOMINATOR_ONLY */
		{ 0, 0, 1, 0 },		/* BUG_NO_RESCALE */
		{ 1, 1, 0, 1 },		/* BUG_FORGET_OLD_DENOMINATOR */
	};

	return table[bug];
}

#endif
