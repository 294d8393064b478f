/*
 * tc_args.h - the argument checks the two tensor-core kernels share
 * (gpu/fast.cu and gpu/wgmma.cu: one contract, fast.h and wgmma.h), host
 * side.  A header of static functions, so each .cu file has its own copy
 * and neither links against the other.
 */
#ifndef FLASHSTEP_TC_ARGS_H
#define FLASHSTEP_TC_ARGS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fast.h"	/* enum fast_dtype, struct fast_trace */

/*
 * The tensors, shape and dtype of a call of fwd (the entry's name, first
 * in every message): 0, or -1 with one line in err.  align > 0: Q, K, V
 * and O must be aligned to align bytes (why: the reason, in the message).
 * The head width is the variant table's to check.
 */
static inline int
tc_args_check(const char *fwd, const void *q, const void *k, const void *v,
    const void *o, const float *lse, int batch, int heads, int tq, int tk,
    int dtype, unsigned align, const char *why, char *err, size_t errlen)
{
	if (q == NULL || k == NULL || v == NULL || o == NULL || lse == NULL) {
		snprintf(err, errlen, "%s: a tensor pointer is NULL", fwd);
		return -1;
	}
	if (align > 0 && ((uintptr_t)q | (uintptr_t)k | (uintptr_t)v |
	    (uintptr_t)o) % align != 0) {
		snprintf(err, errlen, "%s: Q, K, V and O must be %u-byte "
		    "aligned (%s)", fwd, align, why);
		return -1;
	}
	if (batch < 1 || batch > 65535 || heads < 1 || heads > 65535) {
		snprintf(err, errlen, "%s: batch %d or heads %d not in "
		    "1..65535", fwd, batch, heads);
		return -1;
	}
	if (tq < 1 || tk < 1) {
		snprintf(err, errlen, "%s: Tq %d and Tk %d must be at least 1",
		    fwd, tq, tk);
		return -1;
	}
	if (dtype != FAST_FP16 && dtype != FAST_BF16) {
		snprintf(err, errlen, "%s: dtype %d is neither fp16 (0) nor "
		    "bf16 (1)", fwd, dtype);
		return -1;
	}
	return 0;
}

/* No variant for d: the message of both entries. */
static inline int
tc_args_no_variant(const char *fwd, int variant, int d, char *err,
    size_t errlen)
{
	snprintf(err, errlen, "%s: no variant %d for d = %d (d must be 64 or "
	    "128)", fwd, variant, d);
	return -1;
}

/* A trace (trace, the entry's name) needs m, alpha and l; tr = NULL is
 * no trace.  0, or -1 with one line in err. */
static inline int
tc_args_trace(const char *trace, const struct fast_trace *tr, char *err,
    size_t errlen)
{
	if (tr != NULL && (tr->m == NULL || tr->alpha == NULL ||
	    tr->l == NULL)) {
		snprintf(err, errlen, "%s: the trace's m, alpha and l must all "
		    "be given", trace);
		return -1;
	}
	return 0;
}

/* The scale a call means: scale <= 0 (or NaN) is 1/sqrt(d). */
static inline float
tc_args_scale(float scale, int d)
{
	return scale > 0.f ? scale : 1.f / sqrtf((float)d);
}

#endif
