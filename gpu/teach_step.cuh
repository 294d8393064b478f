/*
 * teach_step.cuh - the teaching kernels' one tile step: FlashAttention's
 * update of a row block's state by one tile (i, j), in float32, as the
 * simulator's tile_scores() and tile_apply() (src/model/sim.c) do it,
 * phase by phase, with the same letters (Tq, Tk, d, dv, Br, Bc; m, l,
 * alpha, acc) and the same order in every sum: each score sums q[x] k[x]
 * over x = 0 .. d-1 and then scales (teach_step_score, which the
 * backward's scores use too), each row sum and each entry of P V runs
 * over the tile's keys in order.  The masks and score modifiers are
 * mask_rule.h's (the window, the cap, ALiBi's bias, the mask bug modes)
 * and the rounding of P is tile_rule.h's: the simulator's own lines.
 *
 * Device code only, included by teach.cu (the forward: one block per row
 * block, or per key block and row block in fa1 order), teach_split.cu
 * (split-KV: one block per row block and key range) and teach_bwd.cu
 * (the score alone).  Every file that includes it is built with
 * -fmad=false (gpu/local.mk), as the simulator is with
 * -ffp-contract=off, so a value differs from the simulator's only where
 * CUDA's expf and logf differ from the C library's.
 *
 * Shared memory of one block, in floats (teach_smem_floats):
 *   Q_i   Br x d         K_j   Bc x (d + 1)      V_j   Bc x dv
 *   S, P  Br x (Bc + 1)  acc   Br x dv           m, l, m_new, alpha,
 *                                                rowsum, l_new: 6 x Br
 * K_j's and S's rows are padded by one float.  In the scores phase the 32
 * threads of a warp read 32 different keys at the same x, and in the row
 * phases 32 different rows at the same key: a row stride of d + 1 (Bc + 1)
 * puts them in 32 different banks, where a stride of 64 would put them all
 * in one and make the warp wait 32 times.
 */
#ifndef FLASHSTEP_TEACH_STEP_CUH
#define FLASHSTEP_TEACH_STEP_CUH

#include <math.h>

extern "C" {
#include "model/online.h"
#include "model/mask_rule.h"
#include "model/online_rule.h"
#include "model/tile_rule.h"
}

/* What every step of a run reads: the shape, the tiles and the rule. */
struct teach_step_params {
	int tq, tk, d, dv, br, bc;	/* d = 0 in a scores problem */
	float scale;
	struct mask_rule mask;	/* the window and the cap (slope 0: the
				 * slopes are teach_rows') */
	int mask_bug;		/* mask_rule.h's MASK_BUG_... */
	int scores, dtype, convention, bug;
};

/* One block's shared memory, carved into the arrays of the picture. */
struct teach_tile {
	float *q, *k, *v, *s, *acc;
	float *m, *l, *m_new, *alpha, *rowsum, *l_new;
};

/* Where the block's rows are: row r (0 <= r < rows) is row r0 + r of the
 * run's order; its row of S is s_rows[r0 + r] (or r0 + r itself when
 * s_rows is NULL) of S (.., Tk), its query position pos[r0 + r] (or
 * r0 + r), which the mask reads.  Its ALiBi slope is slopes[h] for the
 * query head h = (its row of S) / Tq (slopes NULL: no ALiBi). */
struct teach_rows {
	const float *s;
	const int *s_rows, *pos;
	int r0, rows;
	const float *slopes;
	unsigned head0;		/* dropout's head of the rows' first head: row
				 * `row` draws for head0 + (its row of S) / Tq */
};

/* Where a traced step writes its rows' m_new, alpha, l_new (row r at
 * [r]) and accumulator (row r at [r dv]); NULL: not traced. */
struct teach_trace_rows {
	float *m, *alpha, *l, *acc;
};

__host__ __device__ static inline size_t
teach_smem_floats(int br, int bc, int d, int dv)
{
	return (size_t)br * d + (size_t)bc * (d + 1) + (size_t)bc * dv +
	    (size_t)br * (bc + 1) + (size_t)br * dv + 6 * (size_t)br;
}

__device__ static inline struct teach_tile
teach_tile_carve(const struct teach_step_params &P, float *base)
{
	struct teach_tile T;

	T.q = base;
	T.k = T.q + (size_t)P.br * P.d;
	T.v = T.k + (size_t)P.bc * (P.d + 1);
	T.s = T.v + (size_t)P.bc * P.dv;
	T.acc = T.s + (size_t)P.br * (P.bc + 1);
	T.m = T.acc + (size_t)P.br * P.dv;
	T.l = T.m + P.br;
	T.m_new = T.l + P.br;
	T.alpha = T.m_new + P.br;
	T.rowsum = T.alpha + P.br;
	T.l_new = T.rowsum + P.br;
	return T;
}

/* The block's state starts empty: m = -inf, l = 0, acc = 0. */
__device__ static inline void
teach_tile_empty(const struct teach_step_params &P, const struct teach_tile &T,
    int rows)
{
	int e;

	for (e = threadIdx.x; e < rows; e += blockDim.x) {
		T.m[e] = -INFINITY;
		T.l[e] = 0.0f;
	}
	for (e = threadIdx.x; e < rows * P.dv; e += blockDim.x)
		T.acc[e] = 0.0f;
}

/* One score: q . k summed over x = 0 .. d-1 in order, then scaled (the
 * simulator's tile_scores(); the backward's phase 2). */
__device__ static inline float
teach_step_score(const float *q, const float *k, int d, float scale)
{
	float s = 0.0f;
	int x;

	for (x = 0; x < d; x++)
		s += q[x] * k[x];
	return s * scale;
}

/* The rules of run row `row` (mask_rule.h): the window and the cap of
 * the run, the slope of its head. */
__device__ static inline struct mask_rule
teach_step_mask(const struct teach_step_params &P, const struct teach_rows &R,
    int row)
{
	struct mask_rule m = P.mask;
	const int head = (R.s_rows != NULL ? R.s_rows[row] : row) / P.tq;

	if (R.slopes != NULL)
		m.slope = R.slopes[head];
	m.drop_head = R.head0 + (unsigned)head;
	return m;
}

/* Row r's scaled product x with key c of the tile (the score before the
 * rules): read from S, or summed from Q_i and K_j in shared memory. */
__device__ static inline float
teach_step_product(const struct teach_step_params &P, const struct teach_tile &T,
    const struct teach_rows &R, int r, int c, int c0)
{
	const int row = R.r0 + r;

	if (P.scores)
		return R.s[(size_t)(R.s_rows != NULL ? R.s_rows[row] : row) *
		    P.tk + c0 + c];
	return teach_step_score(&T.q[r * P.d], &T.k[c * (P.d + 1)], P.d, P.scale);
}

/* online_update()'s two factors: which of l and acc get alpha.  The bug
 * modes (online_rule.h's table, the simulator's) leave one or both at 1. */
__device__ static inline float
teach_step_factor_l(const struct teach_step_params &P, float alpha)
{
	return online_bug_flags(P.bug).scale_l ? alpha : 1.0f;
}

__device__ static inline float
teach_step_factor_acc(const struct teach_step_params &P, float alpha)
{
	return online_bug_flags(P.bug).scale_acc ? alpha : 1.0f;
}

/*
 * One step: tile (i, j) applied to the block's state m, l, acc, which is
 * in shared memory (and Q_i too, unless a scores problem) when this is
 * called.  k and v are the block's K (Tk, d) and V (Tk, dv); R says
 * where its rows are; tr where the trace goes.  The phases are sim.h's:
 * load, scores, max, rescale, exp, update.
 */
__device__ static inline void
teach_step(const struct teach_step_params &P, const struct teach_tile &T,
    const struct teach_rows &R, const float *k_all, const float *v_all, int j,
    const struct teach_trace_rows &tr)
{
	const int rows = R.rows;
	const int c0 = j * P.bc, cols = min(P.bc, P.tk - c0);
	const int dk = P.d + 1;		/* K_j's padded row stride */
	const int ds = P.bc + 1;	/* S's padded row stride */
	const int tid = threadIdx.x, nt = blockDim.x;
	const float *k = k_all + (size_t)c0 * P.d;
	const float *v = v_all + (size_t)c0 * P.dv;
	int e, r, c, x;

	/* Phase 1, load: K_j and V_j (a scores problem reads its S tile in
	 * the next phase instead of computing it). */
	if (!P.scores)
		for (e = tid; e < cols * P.d; e += nt)
			T.k[(e / P.d) * dk + e % P.d] = k[e];
	for (e = tid; e < cols * P.dv; e += nt)
		T.v[e] = v[e];
	__syncthreads();

	/* Phase 2, scores: S = scale Q_i K_j^T, capped and biased by the
	 * row's rules (mask_rule_score, as the simulator's tile_scores);
	 * hidden entries -inf. */
	for (e = tid; e < rows * cols; e += nt) {
		const int row = R.r0 + e / cols;
		const long pos = R.pos != NULL ? R.pos[row] : row;
		const struct mask_rule m = teach_step_mask(P, R, row);
		float s;

		r = e / cols;
		c = e % cols;
		s = teach_step_product(P, T, R, r, c, c0);
		if (!mask_rule_visible_bug(m, P.mask_bug, pos, c0 + c, P.tq, P.tk))
			s = -INFINITY;
		else
			s = mask_rule_score(m, s, pos, c0 + c, P.tq, P.tk);
		T.s[r * ds + c] = s;
	}
	__syncthreads();

	/* Phases 3 and 4, max and rescale, one thread per row:
	 * m_new = max(m, rowmax S), alpha = exp(m - m_new), and alpha = 1
	 * while m_new = -inf (nothing seen yet: exp(-inf + inf) is NaN). */
	for (r = tid; r < rows; r += nt) {
		float rowmax = -INFINITY, m_new;

		for (c = 0; c < cols; c++) {
			float s = T.s[r * ds + c];

			/* softcap-after-max: the max of the products before
			 * the cap (recomputed: the same bits as phase 2's) */
			if (P.mask_bug == MASK_BUG_MAX_BEFORE_CAP)
				s = s == -INFINITY ? s :
				    teach_step_product(P, T, R, r, c, c0);
			rowmax = s > rowmax ? s : rowmax;
		}
		m_new = T.m[r] > rowmax ? T.m[r] : rowmax;
		T.m_new[r] = m_new;
		T.alpha[r] = m_new == -INFINITY ? 1.0f : expf(T.m[r] - m_new);
	}
	__syncthreads();

	/* Phase 5, exp: P = exp(S - m_new) in place of S; 0 while m_new =
	 * -inf, and exp(-inf) = 0 for a masked entry. */
	for (e = tid; e < rows * cols; e += nt) {
		float m_new;

		r = e / cols;
		c = e % cols;
		m_new = T.m_new[r];
		T.s[r * ds + c] = m_new == -INFINITY ? 0.0f :
		    expf(T.s[r * ds + c] - m_new);
	}
	__syncthreads();

	/* Phase 6, update, first half, one thread per row: the row sum of P
	 * in float32 and l_new = alpha l + rowsum; only then P is rounded
	 * to the storage type for P V, as a tensor-core kernel does. */
	for (r = tid; r < rows; r += nt) {
		float rowsum = 0.0f;

		for (c = 0; c < cols; c++)
			rowsum += T.s[r * ds + c];
		T.rowsum[r] = rowsum;
		T.l_new[r] = teach_step_factor_l(P, T.alpha[r]) * T.l[r] + rowsum;
		/* dropout (mask_rule.h): P V reads P keep / (1 - p), the keep
		 * bits the simulator's (mask_rule_keep of the row's head,
		 * position and key); l above summed the undropped P */
		if (P.mask.dropout > 0.0f) {
			const int row = R.r0 + r;
			const long pos = R.pos != NULL ? R.pos[row] : row;
			const struct mask_rule m = teach_step_mask(P, R, row);

			for (c = 0; c < cols; c++)
				T.s[r * ds + c] = mask_rule_drop(m,
				    mask_rule_keep(m, pos, c0 + c), T.s[r * ds + c]);
		}
		for (c = 0; c < cols; c++)
			T.s[r * ds + c] = tile_rule_round(P.dtype, T.s[r * ds + c]);
	}
	__syncthreads();

	/* Phase 6, second half, one thread per (row, column): pv = P V_j
	 * summed over the keys in order, then the accumulator.
	 *   unnormalized: u' = alpha u + pv
	 *   normalized:   o' = (alpha l o + pv) / l'  (forget-old-denominator
	 *                 drops the l), and 0 while l' = 0 */
	for (e = tid; e < rows * P.dv; e += nt) {
		float pv = 0.0f, acc, aa, keep;

		r = e / P.dv;
		x = e % P.dv;
		for (c = 0; c < cols; c++)
			pv += T.s[r * ds + c] * T.v[c * P.dv + x];
		aa = teach_step_factor_acc(P, T.alpha[r]);
		acc = T.acc[r * P.dv + x];
		if (P.convention == CONV_UNNORMALIZED)
			acc = aa * acc + pv;
		else {
			keep = online_bug_flags(P.bug).keep_l ? aa * T.l[r] : aa;
			acc = T.l_new[r] > 0.0f ? (keep * acc + pv) / T.l_new[r] : 0.0f;
		}
		T.acc[r * P.dv + x] = acc;
		if (tr.acc != NULL)
			tr.acc[(size_t)r * P.dv + x] = acc;
	}
	__syncthreads();

	/* The step is done: the new state becomes the state, and the trace
	 * gets this step's m_new, alpha, l_new. */
	for (r = tid; r < rows; r += nt) {
		if (tr.m != NULL) {
			tr.m[r] = T.m_new[r];
			tr.alpha[r] = T.alpha[r];
			tr.l[r] = T.l_new[r];
		}
		T.m[r] = T.m_new[r];
		T.l[r] = T.l_new[r];
	}
	__syncthreads();
}

/* The finalize of one row's state (online_finalize): an entry of O is
 * u / l (or o itself), lse = m + log l; a row that saw no key gives
 * O = 0 and lse = -inf. */
__device__ static inline float
teach_step_final_o(const struct teach_step_params &P, float acc, float l)
{
	return l > 0.0f ? (P.convention == CONV_UNNORMALIZED ? acc / l : acc) :
	    0.0f;
}

__device__ static inline float
teach_step_final_lse(float m, float l)
{
	return l > 0.0f ? m + logf(l) : -INFINITY;
}

#endif
