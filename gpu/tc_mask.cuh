/*
 * tc_mask.cuh - mask_rule.h's window, softcap and ALiBi as the two
 * tensor-core forward kernels (gpu/fast.cu, gpu/wgmma.cu) and the
 * tensor-core backward (gpu/fast_bwd.cu) apply them: which key tiles a
 * row block visits (and, for the backward, which row blocks a key block
 * visits), which of those need each entry looked at, and the score an
 * entry becomes.  Visibility and the tile
 * range are mask_rule.h's own functions (mask_rule_visible,
 * mask_rule_keys), so the kernels skip exactly the tiles the
 * simulator's schedule skips; only the arithmetic of the bend is the
 * kernels' (the units below).
 *
 * Units.  The kernels hold a score as the raw product q.k and fold the
 * scale into the exponent, p = 2^(u e - m e) with e = scale log2(e), so
 * that the scale costs nothing a tile.  A bend keeps that: with a cap
 * C, u becomes tanh(scale q.k / C) and the exponent's scale C
 * (FlashAttention 2 does the same: its softcap path sets the softmax
 * scale to C); ALiBi's bias -slope |r + Tk - Tq - c| is added in those
 * units, divided by the exponent's scale.  So a kernel's m is in units
 * of u and its lse is m times the exponent's scale plus log l.
 *
 * tanh is 1 - 2 / (e^{2y} + 1) on the special-function unit (one
 * ex2.approx, one fast division: tc_tanh), not the simulator's
 * mask_rule_tanh (written for bit-equal teaching kernels, some thirty
 * instructions) nor CUDA's tanhf: a score's error is what the softmax
 * feels, and this one is within 2^-21 of tanh absolutely (the
 * subtraction near 0 loses relative, not absolute, precision), so the
 * tensor-core kernels' tolerance (gpucheck.c) grows by 16 units of C
 * for both tanh.  (On the H200, tanhf halved the mma.sync kernel's
 * rate under a cap and cut the wgmma kernel's to a third:
 * doc/performance.md.)
 *
 * Visibility is decided per row before a tile's entries are looked at:
 * each row's keys are one interval (mask_rule_keys of that row alone),
 * so an entry is two comparisons, not the rule's branches.
 */
#ifndef FLASHSTEP_TC_MASK_CUH
#define FLASHSTEP_TC_MASK_CUH

#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "fast.h"		/* struct tc_mask */
#include "fast_mma.cuh"		/* fast_exp2 */
#include "model/mask_rule.h"

/* A call's rules as the kernels read them. */
struct tc_rule {
	struct mask_rule m;	/* the window (m.window, m.left, m.right) */
	float cap_in;		/* scale / C: u = tanh(q.k cap_in); 0: no cap */
	float bias_unit;	/* 1 / the exponent's scale: a slope into u's
				 * units */
	const float *slopes;	/* (heads) ALiBi's slopes, natural units, on
				 * the device; NULL: none */
	int bends;		/* a cap or ALiBi: every tile's scores bend */
};

/*
 * The rules of mask (NULL: none) at scale: fills r, and *scale_eff with
 * the exponent's scale in natural units (scale, or C under a cap).  0,
 * or -1 with one line in err naming fwd and the field at fault.
 */
static inline int
tc_rule_make(const char *fwd, const struct tc_mask *mask, float scale,
    struct tc_rule *r, float *scale_eff, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->m = mask_rule_none();
	*scale_eff = scale;
	if (mask == NULL)
		return 0;
	if (mask->left < -1 || mask->right < -1) {
		snprintf(err, errlen, "%s: window (%d, %d): each side is a key "
		    "count >= 0, or -1 for unbounded", fwd, mask->left,
		    mask->right);
		return -1;
	}
	if (!(mask->softcap >= 0.f) || isinf(mask->softcap)) {
		snprintf(err, errlen, "%s: softcap %g is not a finite number "
		    ">= 0 (0: no cap)", fwd, (double)mask->softcap);
		return -1;
	}
	if (mask->left >= 0 || mask->right >= 0)
		r->m = mask_rule_window(r->m, mask->left, mask->right);
	if (mask->softcap > 0.f) {
		r->cap_in = scale / mask->softcap;
		*scale_eff = mask->softcap;
	}
	r->slopes = mask->alibi;
	r->bias_unit = 1.f / *scale_eff;
	r->bends = r->cap_in > 0.f || r->slopes != NULL;
	return 0;
}

#ifdef __CUDACC__
/*
 * The key tiles [*j0, *j1) of Bc keys that rows row0 .. row0 + br - 1
 * (those below Tq) see between them: the simulator's schedule's jbegin
 * and jend for that row block (schedule.c).  Empty: *j0 = *j1 = 0.
 */
static __device__ __forceinline__ void
tc_rule_tiles(const struct tc_rule &r, int row0, int br, int tq, int tk,
    int bc, int *j0, int *j1)
{
	const int last = min(row0 + br, tq) - 1;
	long lo, hi;

	*j0 = *j1 = 0;
	if (last < row0)
		return;
	mask_rule_keys(r.m, row0, last, tq, tk, &lo, &hi);
	if (lo > hi)
		return;
	*j0 = (int)(lo / bc);
	*j1 = (int)(hi / bc + 1);
}

/*
 * The inverse, for a backward's key-outer loop: the row blocks [*i0, *i1)
 * of br rows that see a key of tile j of bc keys (mask_rule_rows of its
 * keys, the last clamped to Tk): the simulator's schedule's ibegin and
 * iend for key block j, so its steps are the schedule's (check_mask
 * holds the rows to a count over mask_rule_visible, and the blocks to
 * the schedule's).  Empty: *i0 = *i1 = 0.  Host and device: the host
 * counts the trace's steps with it.
 */
static __host__ __device__ __forceinline__ void
tc_rule_row_blocks(const struct tc_rule &r, int j, int bc, int br, int tq,
    int tk, int *i0, int *i1)
{
	const long c0 = (long)j * bc;
	const long c1 = c0 + bc < tk ? c0 + bc - 1 : (long)tk - 1;
	long lo, hi;

	*i0 = *i1 = 0;
	if (c0 > c1)
		return;
	mask_rule_rows(r.m, c0, c1, tq, tk, &lo, &hi);
	if (lo > hi)
		return;
	*i0 = (int)(lo / br);
	*i1 = (int)(hi / br + 1);
}

/*
 * The window as a band of key minus row: row r sees key c (0 <= c < Tk)
 * when *dlo <= c - r <= *dhi, mask_rule_visible's two edges (r + Tk -
 * Tq - left, r + Tk - Tq + right) less the row, which they move with;
 * INT_MIN, INT_MAX where a side is unbounded or there is no window.  A
 * kernel that looks at entries one by one (the backward's) then pays a
 * subtraction and two comparisons an entry, as the causal mask alone
 * did, and holds two integers, not a row's interval for each of its rows.
 */
static __host__ __device__ __forceinline__ void
tc_rule_band(const struct tc_rule &r, int tq, int tk, int *dlo, int *dhi)
{
	const long diag0 = mask_rule_diag(0, tq, tk);
	const long lo = diag0 - r.m.left, hi = diag0 + r.m.right;

	*dlo = !r.m.window || r.m.left < 0 || lo < INT_MIN ? INT_MIN : (int)lo;
	*dhi = !r.m.window || r.m.right < 0 || hi > INT_MAX ? INT_MAX : (int)hi;
}

/* Does tile j hide an entry from one of rows first .. last: past Tk or
 * outside the window?  (Else every entry is visible to every row.) */
static __device__ __forceinline__ bool
tc_rule_partial(const struct tc_rule &r, int j, int bc, int first, int last,
    int tq, int tk)
{
	const long c0 = (long)j * bc, c1 = c0 + bc - 1;

	if (c1 >= tk)
		return true;
	if (!r.m.window)
		return false;
	return (r.m.left >= 0 && c0 < mask_rule_diag(last, tq, tk) -
	    r.m.left) || (r.m.right >= 0 && c1 > mask_rule_diag(first, tq,
	    tk) + r.m.right);
}

/* Head h's ALiBi slope in u's units (0: none). */
static __device__ __forceinline__ float
tc_rule_slope(const struct tc_rule &r, int h)
{
	return r.slopes != NULL ? r.slopes[h] * r.bias_unit : 0.f;
}

/* The keys [*lo, *hi] row `row` sees (mask_rule_keys of the row alone:
 * the window clipped to [0, Tk)); none when *lo > *hi. */
static __device__ __forceinline__ void
tc_rule_row(const struct tc_rule &r, int row, int tq, int tk, int *lo,
    int *hi)
{
	long a, b;

	mask_rule_keys(r.m, row, row, tq, tk, &a, &b);
	*lo = (int)a;
	*hi = (int)b;
}

/* tanh y within 2^-21 absolutely (the header says why this form). */
static __device__ __forceinline__ float
tc_tanh(float y)
{
	/* |y| > 9: tanh is 1 in float32; the clamp keeps e^{2y} finite */
	const float e = fast_exp2(fminf(fmaxf(y, -9.f), 9.f) *
	    2.8853900817779268f);

	return 1.f - __fdividef(2.f, e + 1.f);
}

/* The cap of product s: tanh(s scale / C) = the capped score / C (u's
 * units), or s without a cap.  The backward's (1 - t^2) reads it. */
static __device__ __forceinline__ float
tc_rule_cap(const struct tc_rule &r, float s)
{
	return r.cap_in > 0.f ? tc_tanh(s * r.cap_in) : s;
}

/* u with ALiBi's bias of (row, key c) added, slope in u's units. */
static __device__ __forceinline__ float
tc_rule_bias(float u, float slope, int row, int c, int tq, int tk)
{
	if (slope != 0.f) {
		const int dist = row + tk - tq - c;

		u -= slope * (float)(dist < 0 ? -dist : dist);
	}
	return u;
}

/*
 * The score entry (row, key c) of product s becomes: -inf when VIS and
 * c is outside the row's keys [lo, hi] (tc_rule_row), else s bent by
 * the cap and ALiBi's bias (slope from tc_rule_slope), in u's units.
 */
template <bool VIS>
static __device__ __forceinline__ float
tc_rule_score(const struct tc_rule &r, float s, float slope, int row, int c,
    int tq, int tk, int lo, int hi)
{
	if (VIS && (c < lo || c > hi))
		return -INFINITY;
	return tc_rule_bias(tc_rule_cap(r, s), slope, row, c, tq, tk);
}
#endif

#endif
