/*
 * mask_rule.h - the masks and score modifiers, one table: what each does
 * to visibility or to a score, which tiles it lets the schedule skip,
 * and its backward.  Read by the simulator (problem.h, schedule.c,
 * sim.c, backward.c), the double reference (reference.c, gradref.c,
 * which write their own double-precision arithmetic from the same
 * definitions), the teaching kernels (gpu/teach_step.cuh,
 * gpu/teach_bwd.cu, gpu/teach_split.cu) and the tensor-core forwards'
 * window and tile range (gpu/tc_mask.cuh), so each rule is written once,
 * as online_rule.h's bug table is.  A new mask is one row of MASK_TABLE
 * and its case in the functions below.
 *
 * Positions.  Query position r (a row within its head) and key c; the
 * diagonal of row r is key r + Tk - Tq (bottom-right aligned, as
 * FlashAttention 2.1 and later align it: the last query's diagonal is
 * the last key, also when Tq != Tk).
 *
 * The score a row's softmax sees, in this order (FlashAttention 2's: its
 * kernel caps the scaled product and adds the ALiBi bias after the cap,
 * unscaled; flash_api sets scale_softmax to C and divides the slope by
 * it, so that C tanh(scale q.k / C) + bias is what the exponential gets):
 *
 *   x = scale q.k              (a scores problem: x = S, scale 1)
 *   s = C tanh(x / C)          softcap, when C > 0
 *   s = s - slope |r + Tk - Tq - c|   ALiBi, when the head's slope != 0
 *   s = -inf where the window hides key c from row r
 *
 * and the row max is taken on that s (after the cap).
 *
 * The window (left, right), FlashAttention's window_size: -1 is
 * unbounded on that side; row r sees key c when
 *   c >= r + Tk - Tq - left   (left >= 0)   and
 *   c <= r + Tk - Tq + right  (right >= 0).
 * (-1, -1) is no mask, (-1, 0) the causal mask.  A row may see no key
 * at all (Tq > Tk under causal, or a band that falls outside [0, Tk)):
 * such a row outputs 0 and lse = -inf, the same rule as causal's.
 *
 * Dropout (a MASK_DROPS entry) acts on P, not on s: after the row's
 * exponentials, entry (r, c) of head h is kept when Philox4x32-10
 * (philox.h) of the counter (c / 4, r, h, offset) under the key (the
 * seed's two halves) gives, in word c % 4, a number >= p 2^32; a kept
 * entry's P is multiplied by 1 / (1 - p), a dropped one's is 0, and
 * that P feeds P V.  The row sum l sums the undropped P (FlashAttention
 * 2's softmax_rescale_o sums before its apply_dropout), so the softmax
 * is the undropped one and only P V sees the mask.  The bits are a pure
 * function of (seed, offset, h, r, c): the backward regenerates them
 * instead of storing them.  FlashAttention 2 zeroes the dropped entries
 * and multiplies O by 1 / (1 - p) once (normalize_softmax_lse's
 * rp_dropout); scaling each kept P instead is the same number, and
 * lets split-KV's partials and their combine stay as they are.
 *
 * Plain C that C++ and CUDA read too (MASK_RULE_FN).  The cap's tanh is
 * written here in +, -, *, / alone (mask_rule_tanh) instead of the C
 * library's tanhf or CUDA's: with -fmad=false both sides then compute
 * it with the same roundings, so the teaching kernels keep their
 * bit-for-bit agreement with the simulator in the max and the scores.
 */
#ifndef FLASHSTEP_MASK_RULE_H
#define FLASHSTEP_MASK_RULE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "philox.h"

#ifdef __CUDACC__
#define MASK_RULE_FN __host__ __device__ static inline
#else
#define MASK_RULE_FN static inline
#endif

/* What an entry does. */
#define MASK_HIDES 0	/* visibility: a hidden entry is -inf, P = 0 */
#define MASK_BENDS 1	/* a score modifier: s -> f(s), before the max */
#define MASK_DROPS 2	/* acts on P after the softmax: P -> P keep / (1 - p) */

/*
 * The entries, one X(...) each (enum mask_entry is made from it):
 *
 *   id, name, kind, the options that set it, what it does, the tiles it
 *   skips, its backward
 *
 * A tile is skipped only when every one of its entries is hidden.
 */
#define MASK_TABLE(X)							\
	X(MASK_CAUSAL, "causal", MASK_HIDES, "--causal (= --window -1,0)",\
	    "hides key c > r + Tk - Tq: the window (-1, 0)",		\
	    "every tile wholly right of the diagonal",			\
	    "none: a hidden entry has P = 0, so dS = 0 there")		\
	X(MASK_WINDOW, "window", MASK_HIDES, "--window L,R",		\
	    "hides key c < r + Tk - Tq - L (L >= 0) and "		\
	    "c > r + Tk - Tq + R (R >= 0)",				\
	    "every tile wholly outside the band, on both sides: the "	\
	    "visible tiles grow as T, not T^2",				\
	    "none: a hidden entry has P = 0, so dS = 0 there")		\
	X(MASK_SOFTCAP, "softcap", MASK_BENDS, "--softcap C",		\
	    "s -> C tanh(s / C) on the scaled score, before the max",	\
	    "none (it bends scores, hides none)",			\
	    "dS before the cap = dS (1 - (s_capped / C)^2)")		\
	X(MASK_ALIBI, "alibi", MASK_BENDS,				\
	    "--alibi SLOPE or --alibi-slopes a,b,... (one per head)",	\
	    "s -> s - slope |r + Tk - Tq - c|, added after the cap",	\
	    "none (it bends scores, hides none)",			\
	    "unchanged: the bias is a constant, dS passes through")	\
	X(MASK_DROPOUT, "dropout", MASK_DROPS,				\
	    "--dropout P --dropout-seed N [--dropout-offset K]",	\
	    "P -> P keep / (1 - p) in P V, keep from Philox4x32-10 of "	\
	    "(seed, offset, head, row, key); l sums the undropped P",	\
	    "none (every tile still runs: dropout hides no tile)",	\
	    "the same keep regenerated from the seed: dV from the "	\
	    "dropped P, dP' = dP keep / (1 - p), dS = P (dP' - D)")

enum mask_entry {
#define MASK_ENTRY_ID(id, name, kind, opt, does, skips, bwd) id,
	MASK_TABLE(MASK_ENTRY_ID)
#undef MASK_ENTRY_ID
};

enum {
#define MASK_ENTRY_ONE(id, name, kind, opt, does, skips, bwd) + 1
	MASK_ENTRIES = 0 MASK_TABLE(MASK_ENTRY_ONE)
#undef MASK_ENTRY_ONE
};

/*
 * The mistakes that are common in these rules, one X(...) each (the
 * --mask-bug words; enum mask_bug is made from it):
 *
 *   id, the word, the entry it needs (-1: none), what it breaks
 */
#define MASK_BUG_TABLE(X)						\
	X(MASK_BUG_NONE, "none", -1, "the rules as written")		\
	X(MASK_BUG_MAX_BEFORE_CAP, "softcap-after-max", MASK_SOFTCAP,	\
	    "max of uncapped s: exp(cap(s) - m) may underflow")		\
	X(MASK_BUG_WINDOW_EDGE, "window-off-by-one", MASK_WINDOW,	\
	    "misses key r+Tk-Tq-L (its left edge)")

enum mask_bug {
#define MASK_BUG_ID(id, name, needs, breaks) id,
	MASK_BUG_TABLE(MASK_BUG_ID)
#undef MASK_BUG_ID
};

enum {
#define MASK_BUG_ONE(id, name, needs, breaks) + 1
	MASK_BUGS = 0 MASK_BUG_TABLE(MASK_BUG_ONE)
#undef MASK_BUG_ONE
};

#define MASK_UNBOUNDED (-1)

/* One head's rules.  A zero-filled rule is no rule at all: every key
 * visible, scores as they are (so a problem built by hand, memset to
 * 0, hides nothing it did not ask to hide). */
struct mask_rule {
	int window;		/* 1: left and right apply; 0: no window */
	int left, right;	/* the window; MASK_UNBOUNDED on a side */
	float softcap;		/* C > 0, or 0: no cap */
	float slope;		/* this head's ALiBi slope, or 0: no bias */
	float dropout;		/* p in [0, 1), or 0: no dropout */
	float drop_scale;	/* 1 / (1 - p) in float32 (1 without dropout) */
	uint32_t drop_threshold;	/* kept when the word >= this: p 2^32 */
	uint32_t seed_lo, seed_hi;	/* the generator's key */
	uint32_t drop_offset;	/* the counter's fourth word (FA's offset) */
	uint32_t drop_head;	/* the counter's third: the query head */
};

/* No mask: every key visible, scores as they are. */
MASK_RULE_FN struct mask_rule
mask_rule_none(void)
{
	struct mask_rule m;

	m.window = 0;
	m.left = m.right = MASK_UNBOUNDED;
	m.softcap = 0.0f;
	m.slope = 0.0f;
	m.dropout = 0.0f;
	m.drop_scale = 1.0f;
	m.drop_threshold = 0;
	m.seed_lo = m.seed_hi = 0;
	m.drop_offset = 0;
	m.drop_head = 0;
	return m;
}

/* The window (left, right) on m (-1 on a side: unbounded). */
MASK_RULE_FN struct mask_rule
mask_rule_window(struct mask_rule m, int left, int right)
{
	m.window = 1;
	m.left = left;
	m.right = right;
	return m;
}

/* Is entry e on in m? */
MASK_RULE_FN int
mask_rule_has(struct mask_rule m, int e)
{
	switch (e) {
	case MASK_CAUSAL:
		return m.window && m.left < 0 && m.right == 0;
	case MASK_WINDOW:
		return m.window && !(m.left < 0 && m.right < 0) &&
		    !(m.left < 0 && m.right == 0);
	case MASK_SOFTCAP:
		return m.softcap > 0.0f;
	case MASK_ALIBI:
		return m.slope != 0.0f;
	case MASK_DROPOUT:
		return m.dropout > 0.0f;
	}
	return 0;
}

/* Does anything hide entries (causal or a window)? */
MASK_RULE_FN int
mask_rule_hides(struct mask_rule m)
{
	return m.window && (m.left >= 0 || m.right >= 0);
}

/* The diagonal of query position r: its key under the causal mask. */
MASK_RULE_FN long
mask_rule_diag(long r, int tq, int tk)
{
	return r + (long)tk - tq;
}

/* Does query position r see key c (0 <= c < Tk)?  bug may leave the
 * window's left edge out (MASK_BUG_WINDOW_EDGE). */
MASK_RULE_FN int
mask_rule_visible_bug(struct mask_rule m, int bug, long r, long c, int tq,
    int tk)
{
	long diag = mask_rule_diag(r, tq, tk);
	long lo = m.left < 0 ? c : diag - m.left +
	    (bug == MASK_BUG_WINDOW_EDGE ? 1 : 0);

	if (!m.window)
		return 1;
	return c >= lo && (m.right < 0 || c <= diag + m.right);
}

MASK_RULE_FN int
mask_rule_visible(struct mask_rule m, long r, long c, int tq, int tk)
{
	return mask_rule_visible_bug(m, MASK_BUG_NONE, r, c, tq, tk);
}

/*
 * The keys rows r_first .. r_last (positions, r_first <= r_last, the
 * rows of one tile) see between them: [*lo, *hi], empty when *lo > *hi.
 * Each row's keys are an interval that moves one key right per row, so
 * their union is one interval too: from the first row's left edge to
 * the last row's right edge.  The schedule skips the tiles outside it.
 */
MASK_RULE_FN void
mask_rule_keys(struct mask_rule m, long r_first, long r_last, int tq, int tk,
    long *lo, long *hi)
{
	long a = !m.window || m.left < 0 ? 0 :
	    mask_rule_diag(r_first, tq, tk) - m.left;
	long b = !m.window || m.right < 0 ? (long)tk - 1 :
	    mask_rule_diag(r_last, tq, tk) + m.right;

	*lo = a < 0 ? 0 : a;
	*hi = b > (long)tk - 1 ? (long)tk - 1 : b;
}

/*
 * The inverse of mask_rule_keys: the query positions [*lo, *hi] that see
 * at least one of keys c_first .. c_last (0 <= c_first <= c_last < Tk,
 * the keys of one tile), empty when *lo > *hi.  Row r's keys reach from
 * r + Tk - Tq - left to r + Tk - Tq + right (each side clipped to [0,
 * Tk), which cannot empty a row that meets the tile), so it meets the
 * tile when its left edge is at most c_last and its right edge at least
 * c_first: one interval of rows.  A row block sees a key block exactly
 * when one of its rows is in it, so these are the row blocks the
 * schedule's ibegin and iend give a key block (tests/check_mask).
 */
MASK_RULE_FN void
mask_rule_rows(struct mask_rule m, long c_first, long c_last, int tq, int tk,
    long *lo, long *hi)
{
	long a = !m.window || m.right < 0 ? 0 :
	    c_first - m.right - ((long)tk - tq);
	long b = !m.window || m.left < 0 ? (long)tq - 1 :
	    c_last + m.left - ((long)tk - tq);

	*lo = a < 0 ? 0 : a;
	*hi = b > (long)tq - 1 ? (long)tq - 1 : b;
}

/* 2^n for -126 <= n <= 127, exactly. */
MASK_RULE_FN float
mask_rule_pow2(int n)
{
	uint32_t u = (uint32_t)(n + 127) << 23;
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/*
 * e^x for 0 <= x <= 20 in +, -, * alone: x = n ln 2 + t with |t| <=
 * ln 2 / 2 (ln 2 in two parts, the first exact times any n here), e^t
 * by its series to t^8 (the rest below 2^-27 of it), times 2^n.  Within
 * a few units of 2^-24 of e^x.
 */
MASK_RULE_FN float
mask_rule_exp(float x)
{
	const float ln2_hi = 0.693145751953125f;	/* 12 bits */
	const float ln2_lo = 1.428606765330187e-06f;
	int n = (int)(x * 1.44269504f + 0.5f);
	float t = (x - (float)n * ln2_hi) - (float)n * ln2_lo;
	float e = 1.0f + t * (1.0f + t * (0.5f + t * (1.0f / 6.0f +
	    t * (1.0f / 24.0f + t * (1.0f / 120.0f + t * (1.0f / 720.0f +
	    t * (1.0f / 5040.0f + t * (1.0f / 40320.0f))))))));

	return e * mask_rule_pow2(n);
}

/*
 * tanh y in +, -, *, / alone, the same bits on the host and the device:
 * for |y| < 0.55 its odd series to y^21 (the rest below 2^-29 of it);
 * above, 1 - 2 / (e^{2|y|} + 1), where the subtraction keeps every bit
 * (tanh >= 1/2 there); past 9 it is 1 in float32.  Within 4 units of
 * 2^-24 (tests/check_mask).
 */
MASK_RULE_FN float
mask_rule_tanh(float y)
{
	float a = y < 0.0f ? -y : y, t, y2;

	if (a != a)
		return y;		/* NaN */
	if (a < 0.55f) {
		y2 = a * a;
		t = a * (1.0f + y2 * (-1.0f / 3.0f + y2 * (2.0f / 15.0f +
		    y2 * (-17.0f / 315.0f + y2 * (62.0f / 2835.0f +
		    y2 * (-1382.0f / 155925.0f + y2 * (21844.0f / 6081075.0f +
		    y2 * (-929569.0f / 638512875.0f +
		    y2 * (6404582.0f / 10854718875.0f +
		    y2 * (-443861162.0f / 1856156927625.0f +
		    y2 * (18888466084.0f / 194896477400625.0f)))))))))));
	} else if (a >= 9.0f)
		t = 1.0f;
	else
		t = 1.0f - 2.0f / (mask_rule_exp(2.0f * a) + 1.0f);
	return y < 0.0f ? -t : t;
}

/* softcap: C tanh(x / C), or x when there is no cap. */
MASK_RULE_FN float
mask_rule_cap(struct mask_rule m, float x)
{
	if (!(m.softcap > 0.0f) || x == -INFINITY)
		return x;
	return m.softcap * mask_rule_tanh(x / m.softcap);
}

/* ALiBi's bias of (r, c): -slope |r + Tk - Tq - c|, or 0. */
MASK_RULE_FN float
mask_rule_bias(struct mask_rule m, long r, long c, int tq, int tk)
{
	long dist = mask_rule_diag(r, tq, tk) - c;

	if (m.slope == 0.0f)
		return 0.0f;
	return -m.slope * (float)(dist < 0 ? -dist : dist);
}

/* The score the softmax sees from the scaled product x of a visible
 * (r, c): capped, then biased.  (Visibility is the caller's.) */
MASK_RULE_FN float
mask_rule_score(struct mask_rule m, float x, long r, long c, int tq, int tk)
{
	return mask_rule_cap(m, x) + mask_rule_bias(m, r, c, tq, tk);
}

/*
 * The backward through the modifiers: from dS (the gradient of the
 * score the softmax saw) to the gradient of the scaled product x.  ALiBi
 * adds a constant: it passes dS through.  The cap's derivative is
 * 1 - tanh^2 = 1 - (capped / C)^2, capped = C tanh(x / C) without the
 * bias (the backward recomputes it).
 */
MASK_RULE_FN float
mask_rule_dscore(struct mask_rule m, float ds, float capped)
{
	float t;

	if (!(m.softcap > 0.0f))
		return ds;
	t = capped / m.softcap;
	return ds * (1.0f - t * t);
}

/*
 * Turns dropout on in m: probability p (0 < p < 1, the caller's check),
 * the generator's key seed and the counter's offset word.  The
 * threshold is p 2^32 rounded down (below 2^32 for p < 1), so a word
 * drawn uniformly is dropped with probability within 2^-32 of p.
 */
MASK_RULE_FN void
mask_rule_set_dropout(struct mask_rule *m, double p, uint64_t seed,
    uint32_t offset)
{
	m->dropout = (float)p;
	m->drop_scale = (float)(1.0 / (1.0 - p));
	m->drop_threshold = (uint32_t)(p * 4294967296.0);
	m->seed_lo = (uint32_t)seed;
	m->seed_hi = (uint32_t)(seed >> 32);
	m->drop_offset = offset;
}

/*
 * Is entry (r, c) of m's head kept by dropout, with the counter's
 * offset word offset?  (The forward and a correct backward pass
 * m.drop_offset; the dropout-offset bug another.)  Always kept without
 * dropout.
 */
MASK_RULE_FN int
mask_rule_keep_at(struct mask_rule m, uint32_t offset, long r, long c)
{
	struct philox4 ctr, out;

	if (!(m.dropout > 0.0f))
		return 1;
	ctr.v[0] = (uint32_t)((unsigned long)c >> 2);
	ctr.v[1] = (uint32_t)r;
	ctr.v[2] = m.drop_head;
	ctr.v[3] = offset;
	out = philox4x32_10(ctr, m.seed_lo, m.seed_hi);
	return out.v[c & 3] >= m.drop_threshold;
}

MASK_RULE_FN int
mask_rule_keep(struct mask_rule m, long r, long c)
{
	return mask_rule_keep_at(m, m.drop_offset, r, c);
}

/* What P V reads of an entry with softmax weight pv: pv / (1 - p) when
 * kept, 0 when dropped (pv itself without dropout). */
MASK_RULE_FN float
mask_rule_drop(struct mask_rule m, int keep, float pv)
{
	if (!(m.dropout > 0.0f))
		return pv;
	return keep ? pv * m.drop_scale : 0.0f;
}

#endif
