/*
 * online.h - the per-row online-softmax update: the seed's formulas.
 *
 * For one query row keep the running max m, the denominator l and an
 * accumulator acc.  For a new block of scores s (n of them) with values
 * V (n, dv):
 *
 *   m' = max(m, max s)                   (phase max)
 *   a  = exp(m - m')                     (phase rescale)
 *   p  = exp(s - m')                     (phase exp)
 *   l' = a l + sum p                     (phase update)
 *   unnormalized:  u' = a u + p V          finalize: O = u / l
 *   normalized:    o' = (a l o + p V) / l'  finalize: O = o
 *   and in both:   lse = m + log l
 *
 * Both l and the accumulator must be rescaled by a: "rescaling only one
 * changes the result".  The bug modes break exactly that rule on purpose.
 *
 * Edge rules, the same on the CPU and the GPU: while m' = -inf (nothing
 * seen yet, or every key so far masked) a = 1 and p = 0, never NaN; a row
 * that ends with l = 0 outputs 0 and lse = -inf.
 */
#ifndef FLASHSTEP_ONLINE_H
#define FLASHSTEP_ONLINE_H

/* The conventions and the bug modes' table. */
#include "online_rule.h"
#include "mask_rule.h"

struct online_rule {
	enum online_convention convention;
	enum online_bug bug;
	enum mask_bug mask_bug;	/* a mistake in the mask or score rules
				 * (mask_rule.h's MASK_BUG_TABLE) */
};

const char *online_convention_name(enum online_convention c);
int online_convention_parse(const char *name, enum online_convention *out);

/* One bug mode, as its row of ONLINE_BUG_TABLE (online_rule.h) says. */
struct online_bug_mode {
	enum online_bug bug;
	const char *name;	/* the --bug word */
	const char *breaks;	/* what it breaks, one line */
	int needs;		/* the convention it needs (an enum
				 * online_convention), or ONLINE_ANY_CONVENTION */
	struct online_bug_flags flags;
};

/* The row of bug b (0 .. ONLINE_BUGS - 1: asserted). */
const struct online_bug_mode *online_bug_mode(enum online_bug b);
const char *online_bug_name(enum online_bug b);
/* 0 with *out set, or -1 (*out untouched) for a word no row has. */
int online_bug_parse(const char *name, enum online_bug *out);

/* Is this bug meaningful under this convention?  A mode whose row needs
 * one convention (forget-old-denominator: the normalized) is not under
 * the other. */
int online_rule_valid(const struct online_rule *r);

/* m' = max(m_old, max of s[0..n)); -inf entries are masked scores. */
float online_max(float m_old, const float *s, int n);

/* a = exp(m_old - m_new), and 1 while m_new = -inf. */
float online_alpha(float m_old, float m_new);

/* p[c] = exp(s[c] - m_new), and 0 while m_new = -inf or s[c] = -inf. */
void online_exp(const float *s, int n, float m_new, float *p);

/*
 * Phase update for one row: from a, l_old, the row sum of p and pv = p V
 * (dv values), gives l_new and acc_new (dv values).  acc_old and acc_new
 * may be the same array.  Returns l_new.
 */
float online_update(const struct online_rule *r, float alpha, float l_old,
    float rowsum, const float *acc_old, const float *pv, int dv,
    float *acc_new);

/* Finalize one row: O (dv values) and the log-sum-exp. */
void online_finalize(enum online_convention c, float m, float l,
    const float *acc, int dv, float *o, float *lse);

#endif
