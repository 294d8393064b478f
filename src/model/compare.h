/*
 * compare.h - the one closeness check every comparison uses.
 *
 * An entry passes when |got - ref| <= atol + rtol |ref| (two infinities of
 * the same sign are equal; a NaN never passes).  The result also carries
 * the largest absolute difference and the norm-wise relative error
 * max |got - ref| / max |ref|, the root mean square error, and the first few failing indices so a
 * message can name them.
 */
#ifndef FLASHSTEP_COMPARE_H
#define FLASHSTEP_COMPARE_H

#define COMPARE_FIRST 5

struct compare_result {
	double max_abs;		/* max |got - ref| over finite pairs */
	double max_rel;		/* max_abs / max |ref| */
	double rmse;		/* sqrt(mean (got - ref)^2) over the entries, as
				 * FlashAttention 3 reports its error (inf when
				 * a pair is NaN or inf against finite) */
	long worst;		/* index of max_abs (-1: none) */
	long failures;		/* entries beyond atol + rtol |ref| */
	long first[COMPARE_FIRST];	/* the first failing indices */
};

/* Compares n entries; returns 0 when all pass, 1 otherwise. */
int compare_arrays(const float *got, const double *ref, long n, double atol,
    double rtol, struct compare_result *out);

/* Does one pair pass? */
int compare_close(double got, double ref, double atol, double rtol);

#endif
