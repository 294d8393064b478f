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

enum online_convention {
	CONV_UNNORMALIZED,	/* keep u = sum p V (FlashAttention-2) */
	CONV_NORMALIZED,	/* keep o = u / l (FlashAttention-1) */
};

enum online_bug {
	BUG_NONE,
	BUG_NUMERATOR_ONLY,	/* rescale the accumulator, not l */
	BUG_DENOMINATOR_ONLY,	/* rescale l, not the accumulator */
	BUG_NO_RESCALE,		/* rescale neither */
	BUG_FORGET_OLD_DENOMINATOR, /* normalized: o' = (a o + p V) / l' */
};
#define ONLINE_BUGS 5

struct online_rule {
	enum online_convention convention;
	enum online_bug bug;
};

const char *online_convention_name(enum online_convention c);
int online_convention_parse(const char *name, enum online_convention *out);
const char *online_bug_name(enum online_bug b);
int online_bug_parse(const char *name, enum online_bug *out);

/* Is this bug meaningful under this convention?  forget-old-denominator
 * exists only for the normalized update. */
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
