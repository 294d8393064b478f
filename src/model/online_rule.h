/*
 * online_rule.h - the update rule's data: the two conventions and the
 * table of bug modes, which the simulator (online.c), the options, the
 * view and the teaching kernel (gpu/teach.cu) all read, so a new bug mode
 * is one row of ONLINE_BUG_TABLE and nothing else.
 *
 * The correct update (online.h) gives alpha to both l and the
 * accumulator, and the normalized convention's old part is alpha l o.
 * A bug mode turns one of those off:
 *
 *   scale_l    l'  = alpha l + sum p        (off: l + sum p)
 *   scale_acc  u'  = alpha u + p V, o' gets alpha   (off: no alpha)
 *   keep_l     normalized: o' = (alpha l o + p V) / l'   (off: alpha o)
 *
 * and a mode may need one convention (online_rule_valid refuses it under
 * the other; the options and the view switch to it).
 *
 * Plain C that C++ and CUDA read too: ONLINE_RULE_FN makes the lookup
 * callable from host and device code (a function-scope table is legal in
 * a __host__ __device__ function; a namespace-scope one is not readable
 * from the device).  The strings reach only host code (online.c); the
 * device's table holds the flags alone.
 */
#ifndef FLASHSTEP_ONLINE_RULE_H
#define FLASHSTEP_ONLINE_RULE_H

#ifdef __CUDACC__
#define ONLINE_RULE_FN __host__ __device__ static inline
#else
#define ONLINE_RULE_FN static inline
#endif

enum online_convention {
	CONV_UNNORMALIZED,	/* keep u = sum p V (FlashAttention-2) */
	CONV_NORMALIZED,	/* keep o = u / l (FlashAttention-1) */
};
#define ONLINE_CONVENTIONS 2

/* A bug mode's "needs" column when either convention has it. */
#define ONLINE_ANY_CONVENTION (-1)

/*
 * The bug modes, in enum online_bug's order (the enum is made from this
 * table), one X(...) each:
 *
 *   id, the --bug word, the convention it needs, scale_l, scale_acc,
 *   keep_l, what it breaks (a line for --help and the view)
 */
#define ONLINE_BUG_TABLE(X)						\
	X(BUG_NONE, "none", ONLINE_ANY_CONVENTION, 1, 1, 1,		\
	    "the correct update")				\
	X(BUG_NUMERATOR_ONLY, "numerator-only", ONLINE_ANY_CONVENTION,	\
	    0, 1, 1, "l not rescaled: l' = l + sum p")		\
	X(BUG_DENOMINATOR_ONLY, "denominator-only",			\
	    ONLINE_ANY_CONVENTION, 1, 0, 1,				\
	    "the accumulator not rescaled: u' = u + p V")		\
	X(BUG_NO_RESCALE, "no-rescale", ONLINE_ANY_CONVENTION, 0, 0, 1,	\
	    "neither l nor the accumulator rescaled")		\
	X(BUG_FORGET_OLD_DENOMINATOR, "forget-old-denominator",	\
	    CONV_NORMALIZED, 1, 1, 0,					\
	    "the old l forgotten: o' = (alpha o + p V) / l'")

enum online_bug {
#define ONLINE_BUG_ID(id, name, needs, sl, sa, kl, breaks) id,
	ONLINE_BUG_TABLE(ONLINE_BUG_ID)
#undef ONLINE_BUG_ID
};

/* The number of rows (not a member of enum online_bug, so a switch over
 * the modes need not name it). */
enum {
#define ONLINE_BUG_ONE(id, name, needs, sl, sa, kl, breaks) + 1
	ONLINE_BUGS = 0 ONLINE_BUG_TABLE(ONLINE_BUG_ONE)
#undef ONLINE_BUG_ONE
};

struct online_bug_flags {
	unsigned char scale_l;
	unsigned char scale_acc;
	unsigned char keep_l;
	unsigned char normalized_only;	/* needs is CONV_NORMALIZED */
};

ONLINE_RULE_FN struct online_bug_flags
online_bug_flags(int bug)
{
	static const struct online_bug_flags table[ONLINE_BUGS] = {
#define ONLINE_BUG_FLAGS(id, name, needs, sl, sa, kl, breaks)		\
		{ sl, sa, kl, (needs) == CONV_NORMALIZED },
		ONLINE_BUG_TABLE(ONLINE_BUG_FLAGS)
#undef ONLINE_BUG_FLAGS
	};

	return table[bug];
}

#endif
