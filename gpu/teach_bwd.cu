/*
 * teach_bwd.cu - the teaching backward kernel: FlashAttention 2's
 * backward pass (its Algorithm 2) in float32, on the simulator's
 * schedule.  The interface and the trace are in teach_bwd.h.
 *
 * Read it beside src/model/backward.c.  bwd_tile() below is the
 * simulator's tile_grads(), tile_dq() and tile_dkdv(), phase by phase,
 * with the same letters and the same order in every sum: S sums over x
 * and then scales, dV over the tile's rows, dP over x, dQ over the tile's
 * keys, dK over the tile's rows, each from 0 and then added to its
 * accumulator (acc + scale * sum).  Built with -fmad=false, as the
 * simulator is with -ffp-contract=off, so S, dP and D are the same bits
 * on both sides.
 *
 * Clarity over speed.
 *   bwd_dsum      D = rowsum(dO o O), one thread per query row, O rounded
 *                 to the dtype as a kernel that stored it would have it
 *   bwd_kv        one block of BWD_THREADS threads per (key block j,
 *                 problem b): K_j, V_j and the accumulators dK_j, dV_j
 *                 stay in shared memory while the block walks row blocks
 *                 i = ibegin(j) .. iend(j)-1; dK_j and dV_j are written
 *                 once.
 *                 Each phase is a loop of the block's threads over the
 *                 tile's entries, and a barrier ends it.
 *   bwd_dq_sum    ORDERED only: dQ_i = the key blocks' parts summed in
 *                 the order of j (the trace gets each partial sum).
 *
 * Shared memory of one block, in floats (teach_bwd_smem_bytes):
 *   K_j  Bc x (d + 1)    V_j  Bc x (dv + 1)   dK_j Bc x d    dV_j Bc x dv
 *   Q_i  Br x d          dO_i Br x dv         lse_i, D_i  2 x Br
 *   P    Br x (Bc + 1)   dS   Br x (Bc + 1)   (dP, then dS rounded)
 * Rows of K_j, V_j, P and dS are padded by one float: in the phases over
 * (row, key) pairs the 32 threads of a warp read 32 keys at one x, and a
 * stride of d + 1 puts them in 32 banks where 64 would put them in one.
 *
 * Why teach_bwd.h's tolerance.  With S, dP and D the same bits on both
 * sides, P = exp(S - lse) differs by the two expf's: CUDA's is within 2
 * units in the last place (ulp), glibc's within 1, so about 3 ulp (3.6e-7
 * relative).  dS = P (dP - D) carries that relative difference; every
 * gradient entry is then a sum, in the same order on both sides, of terms
 * that differ by 3 ulp of their own size, re-rounded at each add: the
 * difference stays below (3 + n) ulp of the sum of the terms' magnitudes
 * for n terms, and grows like sqrt(n) in practice, about 128 ulp (8e-6)
 * at 16384 terms.  TEACH_BWD_RTOL = 1e-4 leaves a margin over that and is
 * still far below what a fault does (a row left out of dK moves it by a
 * whole term; a missing scale by 1/scale).  ATOMIC's dQ adds the key
 * blocks' parts in another order: up to Tc more re-roundings of partial
 * sums, 256 ulp (1.5e-5) of the magnitudes at Tc = 256, inside the same
 * bound.  With P and dS rounded to fp16 or bf16 before their products, a
 * p that differs by one ulp can round to the neighbouring 16-bit value:
 * one unit of that type (2^-11, 2^-8) of one term, hence twice that
 * (TEACH_BWD_RTOL_FP16, _BF16) for the sums.
 */
#include "teach_bwd.h"
#include "cudacheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "kernels.h"
#include "model/backward.h"
#include "model/dtype.h"
}
#include "teach_step.cuh"

#define BWD_THREADS 256

/* Everything a block reads: passed by value to every launch. */
struct bwd_params {
	const float *q, *k, *v, *s;	/* (n, Tq, d) (n, Tk, d) (n, Tk, dv) (n, Tq, Tk) */
	const float *o, *dout, *lse, *m;	/* (n, Tq, dv) x2, (n, Tq) x2 */
	float *dsum;			/* (n, Tq) D */
	float *gq, *gk, *gv, *gs;	/* dQ, dK, dV; dS for scores problems */
	float *part;			/* ORDERED: (n, Tc, Tq, d) dQ parts */
	float *tr_dk, *tr_dv, *tr_dq;	/* the trace, or NULL */
	const int *jbegin, *jend;	/* (Tr) */
	const int *ibegin, *iend;	/* (Tc) */
	const long *first;		/* (Tc + 1) first step of each key block */
	const float *slopes;		/* (n) each problem's ALiBi slope, or NULL */
	long nsteps;
	int n, tq, tk, d, dv, br, bc, tr, tc;
	float scale;
	struct mask_rule mask;		/* the window and the cap (mask_rule.h) */
	int scores, dtype, bug, dq_mode;
};

/* One block's shared memory, carved as in the picture above. */
struct bwd_tile {
	float *k, *v, *dk, *dv, *q, *dout, *sub, *dsum, *p, *ds;
};

__host__ __device__ static size_t
bwd_smem_floats(int br, int bc, int d, int dv)
{
	return (size_t)bc * (d + 1) + (size_t)bc * (dv + 1) + (size_t)bc * d +
	    (size_t)bc * dv + (size_t)br * d + (size_t)br * dv + 2 * (size_t)br +
	    2 * (size_t)br * (bc + 1);
}

extern "C" size_t
teach_bwd_smem_bytes(int br, int bc, int d, int dv)
{
	return bwd_smem_floats(br, bc, d, dv) * sizeof(float);
}

__device__ static struct bwd_tile
bwd_carve(const struct bwd_params &P, float *base)
{
	struct bwd_tile T;

	T.k = base;
	T.v = T.k + (size_t)P.bc * (P.d + 1);
	T.dk = T.v + (size_t)P.bc * (P.dv + 1);
	T.dv = T.dk + (size_t)P.bc * P.d;
	T.q = T.dv + (size_t)P.bc * P.dv;
	T.dout = T.q + (size_t)P.br * P.d;
	T.sub = T.dout + (size_t)P.br * P.dv;
	T.dsum = T.sub + P.br;
	T.p = T.dsum + P.br;
	T.ds = T.p + (size_t)P.br * (P.bc + 1);
	return T;
}

/* The factor of dQ and dK: scale, or 1 under the bug no-scale. */
__device__ static float
grad_scale(const struct bwd_params &P)
{
	return P.bug == BWD_BUG_NO_SCALE ? 1.0f : P.scale;
}

/* The D pass: D = sum over x of dO o O, in order. */
__global__ static void
bwd_dsum(struct bwd_params P)
{
	size_t row, rows = (size_t)P.n * P.tq;
	int x;

	for (row = (size_t)blockIdx.x * blockDim.x + threadIdx.x; row < rows;
	    row += (size_t)gridDim.x * blockDim.x) {
		float sum = 0.0f;
		for (x = 0; x < P.dv; x++)
			sum += P.dout[row * P.dv + x] *
			    tile_rule_round(P.dtype, P.o[row * P.dv + x]);
		P.dsum[row] = sum;
	}
}

/* Row r's scaled product with key c of the tile (before the rules):
 * the forward's teach_step_score, or S itself. */
__device__ static float
bwd_product(const struct bwd_params &P, const struct bwd_tile &T, size_t row0,
    int r, int c, int c0)
{
	if (P.scores)
		return P.s[(row0 + r) * P.tk + c0 + c];
	return teach_step_score(&T.q[r * P.d], &T.k[c * (P.d + 1)], P.d, P.scale);
}

/*
 * One step: tile (i, j) of problem b, added to the key block's dK_j and
 * dV_j in shared memory and to dQ_i in global memory.  The phases are
 * backward.h's: load, scores, P, dV, dP and dS, dQ and dK.
 */
/* Dropout's keep bit of (r, c), regenerated from the seed with the
 * forward's offset (the dropout-offset bug: the next one); 1 without
 * dropout. */
__device__ static inline int
bwd_keep(const struct bwd_params &P, struct mask_rule m, long r, long c)
{
	return mask_rule_keep_at(m, m.drop_offset +
	    (P.bug == BWD_BUG_DROPOUT_OFFSET ? 1u : 0u), r, c);
}

__device__ static void
bwd_tile(const struct bwd_params &P, const struct bwd_tile &T, int b, int i,
    int j, long step)
{
	const int r0 = i * P.br, rows = min(P.br, P.tq - r0);
	const int c0 = j * P.bc, cols = min(P.bc, P.tk - c0);
	const int dk = P.d + 1, dvp = P.dv + 1, ds = P.bc + 1;
	const int tid = threadIdx.x, nt = blockDim.x;
	const size_t row0 = (size_t)b * P.tq + r0;
	const float f = grad_scale(P);
	const float *sub = P.bug == BWD_BUG_MAX_NOT_LSE ? P.m : P.lse;
	struct mask_rule m = P.mask;
	int e, r, c, x;

	if (P.slopes != NULL)
		m.slope = P.slopes[b];
	m.drop_head += (unsigned)b;	/* problem b is head head0 + b */
	/* Phase 1, load: Q_i, dO_i, lse_i (or m) and D_i. */
	if (!P.scores)
		for (e = tid; e < rows * P.d; e += nt)
			T.q[e] = P.q[row0 * P.d + e];
	for (e = tid; e < rows * P.dv; e += nt)
		T.dout[e] = P.dout[row0 * P.dv + e];
	for (r = tid; r < rows; r += nt) {
		T.sub[r] = sub[row0 + r];
		T.dsum[r] = P.dsum[row0 + r];
	}
	__syncthreads();

	/* Phase 2, scores: S = scale Q_i K_j^T, the forward's score
	 * (teach_step.cuh) and rules (mask_rule.h: the window, the cap,
	 * ALiBi's bias); hidden entries -inf. */
	for (e = tid; e < rows * cols; e += nt) {
		r = e / cols;
		c = e % cols;
		T.p[r * ds + c] = mask_rule_visible(m, r0 + r, c0 + c, P.tq, P.tk) ?
		    mask_rule_score(m, bwd_product(P, T, row0, r, c, c0), r0 + r,
		    c0 + c, P.tq, P.tk) : -INFINITY;
	}
	__syncthreads();

	/* Phase 3, P = exp(S - lse); 0 for a row that sees no key (lse =
	 * -inf, where exp(-inf + inf) would be NaN). */
	for (e = tid; e < rows * cols; e += nt) {
		float l;

		r = e / cols;
		c = e % cols;
		l = T.sub[r];
		T.p[r * ds + c] = l == -INFINITY ? 0.0f : expf(T.p[r * ds + c] - l);
	}
	__syncthreads();

	/* Phase 4, dV_j += P^T dO_i, with P as the product reads it (in the
	 * dtype): entry (c, x) sums over the tile's rows in order. */
	for (e = tid; e < cols * P.dv; e += nt) {
		float t = 0.0f;

		c = e / P.dv;
		x = e % P.dv;
		for (r = 0; r < rows; r++)
			t += tile_rule_round(P.dtype, mask_rule_drop(m,
			    bwd_keep(P, m, r0 + r, c0 + c), T.p[r * ds + c])) *
			    T.dout[r * P.dv + x];
		T.dv[e] = T.dv[e] + t;
	}
	__syncthreads();

	/* Phases 5 and 6, dP = dO_i V_j^T (over x in order) and dS = P o
	 * (dP - D) from the float32 P, kept rounded to the dtype for the
	 * products; a scores problem's dS is its gradient, out to HBM. */
	for (e = tid; e < rows * cols; e += nt) {
		float dp = 0.0f, g;

		r = e / cols;
		c = e % cols;
		for (x = 0; x < P.dv; x++)
			dp += T.dout[r * P.dv + x] * T.v[c * dvp + x];
		/* dropout: dP' = dP keep / (1 - p), the forward's bits
		 * regenerated (bwd_keep) */
		dp = mask_rule_drop(m, bwd_keep(P, m, r0 + r, c0 + c), dp);
		g = P.bug == BWD_BUG_NO_D ? T.p[r * ds + c] * dp :
		    T.p[r * ds + c] * (dp - T.dsum[r]);
		/* back through the cap (its capped score recomputed, the
		 * same bits as phase 2's); ALiBi's bias passes dS through,
		 * and a hidden entry (P = 0) keeps dS = 0 */
		if (T.p[r * ds + c] != 0.0f)
			g = mask_rule_dscore(m, g, mask_rule_cap(m,
			    bwd_product(P, T, row0, r, c, c0)));
		if (P.gs != NULL)
			P.gs[(row0 + r) * P.tk + c0 + c] = g;
		T.ds[r * ds + c] = tile_rule_round(P.dtype, g);
	}
	__syncthreads();

	/* Phase 7, dQ_i += scale dS K_j: entry (r, x) sums over the keys in
	 * order.  ATOMIC adds into dQ in global memory (FlashAttention 2);
	 * ORDERED writes the part to its own slot for bwd_dq_sum. */
	for (e = tid; e < rows * P.d; e += nt) {
		float t = 0.0f, part;
		size_t at;

		r = e / P.d;
		x = e % P.d;
		for (c = 0; c < cols; c++)
			t += T.ds[r * ds + c] * T.k[c * dk + x];
		part = f * t;
		at = (row0 + r) * P.d + x;
		if (P.dq_mode == TEACH_BWD_DQ_ORDERED)
			P.part[(((size_t)b * P.tc + j) * P.tq + r0 + r) * P.d + x] = part;
		else if (P.bug == BWD_BUG_DQ_OVERWRITE)
			P.gq[at] = part;
		else
			atomicAdd(&P.gq[at], part);
	}

	/* Phase 8, dK_j += scale dS^T Q_i: entry (c, x) sums over the rows
	 * in order. */
	for (e = tid; e < cols * P.d; e += nt) {
		float t = 0.0f;

		c = e / P.d;
		x = e % P.d;
		for (r = 0; r < rows; r++)
			t += T.ds[r * ds + c] * T.q[r * P.d + x];
		T.dk[e] = T.dk[e] + f * t;
	}
	__syncthreads();

	/* The step is done: its dK_j and dV_j into the trace (a scores
	 * problem has no dK: d = 0, and tr_dk is NULL). */
	if (P.tr_dv != NULL) {
		for (e = tid; e < cols * P.d; e += nt)
			P.tr_dk[((size_t)b * P.nsteps + step) * P.bc * P.d + e] = T.dk[e];
		for (e = tid; e < cols * P.dv; e += nt)
			P.tr_dv[((size_t)b * P.nsteps + step) * P.bc * P.dv + e] = T.dv[e];
	}
}

/* Block (j, b): key block j of problem b over its row blocks. */
__global__ static void __launch_bounds__(BWD_THREADS)
bwd_kv(struct bwd_params P)
{
	extern __shared__ float smem[];
	const struct bwd_tile T = bwd_carve(P, smem);
	const int j = blockIdx.x, b = blockIdx.y;
	const int c0 = j * P.bc, cols = min(P.bc, P.tk - c0);
	const size_t key0 = (size_t)b * P.tk + c0;
	int e, i;

	/* K_j and V_j come in once; dK_j = dV_j = 0. */
	if (!P.scores)
		for (e = threadIdx.x; e < cols * P.d; e += blockDim.x)
			T.k[(e / P.d) * (P.d + 1) + e % P.d] = P.k[key0 * P.d + e];
	for (e = threadIdx.x; e < cols * P.dv; e += blockDim.x)
		T.v[(e / P.dv) * (P.dv + 1) + e % P.dv] = P.v[key0 * P.dv + e];
	for (e = threadIdx.x; e < cols * P.d; e += blockDim.x)
		T.dk[e] = 0.0f;
	for (e = threadIdx.x; e < cols * P.dv; e += blockDim.x)
		T.dv[e] = 0.0f;
	__syncthreads();
	for (i = P.ibegin[j]; i < P.iend[j]; i++)
		bwd_tile(P, T, b, i, j, P.first[j] + (i - P.ibegin[j]));
	/* ... and go out once, after the key block's last tile. */
	for (e = threadIdx.x; e < cols * P.d; e += blockDim.x)
		P.gk[key0 * P.d + e] = T.dk[e];
	for (e = threadIdx.x; e < cols * P.dv; e += blockDim.x)
		P.gv[key0 * P.dv + e] = T.dv[e];
}

/* ORDERED: dQ = 0 + part_0 + part_1 + ... in the order of j, as the
 * simulator adds them (dq-overwrite keeps the last part alone); the
 * trace gets dQ_i after each of its steps. */
__global__ static void
bwd_dq_sum(struct bwd_params P)
{
	size_t e, all = (size_t)P.n * P.tq * P.d;

	for (e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < all;
	    e += (size_t)gridDim.x * blockDim.x) {
		const int x = (int)(e % P.d), row = (int)(e / P.d % P.tq);
		const int b = (int)(e / P.d / P.tq), i = row / P.br;
		float acc = 0.0f, part;
		long step;
		int j;

		for (j = P.jbegin[i]; j < P.jend[i]; j++) {
			part = P.part[(((size_t)b * P.tc + j) * P.tq + row) * P.d + x];
			acc = P.bug == BWD_BUG_DQ_OVERWRITE ? part : acc + part;
			if (P.tr_dq != NULL) {
				step = P.first[j] + (i - P.ibegin[j]);
				P.tr_dq[(((size_t)b * P.nsteps + step) * P.br +
				    (row - i * P.br)) * P.d + x] = acc;
			}
		}
		P.gq[e] = acc;
	}
}

/*
 * The simulator's schedule for key blocks outside (schedule.c, fa1
 * order, one head): Br, Bc clamped to the problem; row block i sees key
 * blocks [jbegin(i), jend(i)) (the keys its rows see between them,
 * mask_rule_keys, as schedule.c reads them), key block j is seen by row
 * blocks [ibegin(j), iend(j)), and key block j's steps start at
 * first[j].  Host arrays, malloc'd.
 */
struct bwd_schedule {
	int br, bc, tr, tc;
	int *jbegin, *jend, *ibegin, *iend;
	long *first;
};

static void
bwd_schedule_free(struct bwd_schedule *s)
{
	free(s->jbegin);
	free(s->jend);
	free(s->ibegin);
	free(s->iend);
	free(s->first);
	memset(s, 0, sizeof *s);
}

static int
bwd_schedule_init(struct bwd_schedule *s, int tq, int tk, int br, int bc,
    struct mask_rule m)
{
	long lo, hi;
	int i, j, a, nb, ne;

	memset(s, 0, sizeof *s);
	if (tq <= 0 || tk <= 0 || br <= 0 || bc <= 0)
		return -1;
	s->br = br < tq ? br : tq;
	s->bc = bc < tk ? bc : tk;
	s->tr = (tq + s->br - 1) / s->br;
	s->tc = (tk + s->bc - 1) / s->bc;
	s->jbegin = (int *)calloc((size_t)s->tr, sizeof *s->jbegin);
	s->jend = (int *)calloc((size_t)s->tr, sizeof *s->jend);
	s->ibegin = (int *)calloc((size_t)s->tc, sizeof *s->ibegin);
	s->iend = (int *)calloc((size_t)s->tc, sizeof *s->iend);
	s->first = (long *)calloc((size_t)s->tc + 1, sizeof *s->first);
	if (s->jbegin == NULL || s->jend == NULL || s->ibegin == NULL ||
	    s->iend == NULL || s->first == NULL) {
		bwd_schedule_free(s);
		return -1;
	}
	for (i = 0; i < s->tr; i++) {
		mask_rule_keys(m, (long)i * s->br, (long)((i + 1) * s->br < tq ?
		    (i + 1) * s->br : tq) - 1, tq, tk, &lo, &hi);
		if (lo <= hi) {
			s->jbegin[i] = (int)(lo / s->bc);
			s->jend[i] = (int)(hi / s->bc + 1);
		}
	}
	/* the blocks that see a key are consecutive, and over them both
	 * edges never decrease: one sweep each (schedule.c) */
	for (nb = 0; nb < s->tr && s->jend[nb] == 0; nb++)
		;
	for (ne = nb; ne < s->tr && s->jend[ne] > 0; ne++)
		;
	for (i = nb, a = nb, j = 0; j < s->tc; j++) {
		while (i < ne && s->jend[i] <= j)
			i++;
		if (a < i)
			a = i;
		while (a < ne && s->jbegin[a] <= j)
			a++;
		s->ibegin[j] = i;
		s->iend[j] = a;
		s->first[j + 1] = s->first[j] + (a - i);
	}
	return 0;
}

extern "C" long
teach_bwd_steps(int tq, int tk, int br, int bc, struct mask_rule m)
{
	struct bwd_schedule s;
	long n;

	if (bwd_schedule_init(&s, tq, tk, br, bc, m) != 0)
		return -1;
	n = s.first[s.tc];
	bwd_schedule_free(&s);
	return n;
}

extern "C" long
teach_bwd_step(int tq, int tk, int br, int bc, struct mask_rule m, int i,
    int j)
{
	struct bwd_schedule s;
	long k = -1;

	if (bwd_schedule_init(&s, tq, tk, br, bc, m) != 0)
		return -1;
	if (i >= 0 && i < s.tr && j >= 0 && j < s.tc && i >= s.ibegin[j] &&
	    i < s.iend[j])
		k = s.first[j] + (i - s.ibegin[j]);
	bwd_schedule_free(&s);
	return k;
}

/* The median of n times (sorts them); the first run is left out when
 * there are more (module load, first touch). */
static double
bwd_median_ms(float *t, int n)
{
	int a, b;
	float x;

	if (n > 1) {
		t++;
		n--;
	}
	for (a = 1; a < n; a++)
		for (b = a; b > 0 && t[b - 1] > t[b]; b--) {
			x = t[b];
			t[b] = t[b - 1];
			t[b - 1] = x;
		}
	return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* A device copy of n floats from host (none when src is NULL or n = 0). */
static cudaError_t
bwd_upload(float **dst, const float *src, size_t n)
{
	cudaError_t e;

	*dst = NULL;
	if (src == NULL || n == 0)
		return cudaSuccess;
	e = cudaMalloc((void **)dst, n * sizeof(float));
	if (e != cudaSuccess)
		return e;
	return cudaMemcpy(*dst, src, n * sizeof(float), cudaMemcpyHostToDevice);
}

/* Device floats, all bits set (NaN) so an unwritten entry shows. */
static cudaError_t
bwd_nans(float **dst, size_t n)
{
	cudaError_t e;

	*dst = NULL;
	if (n == 0)
		return cudaSuccess;
	e = cudaMalloc((void **)dst, n * sizeof(float));
	if (e != cudaSuccess)
		return e;
	return cudaMemset(*dst, 0xff, n * sizeof(float));
}

/* Host copy of a device array when both are there. */
static cudaError_t
bwd_download(float *dst, const float *src, size_t n)
{
	if (dst == NULL || src == NULL || n == 0)
		return cudaSuccess;
	return cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost);
}

extern "C" int
teach_bwd(struct teach_bwd_job *job, char *err, size_t errlen)
{
	struct bwd_schedule sch;
	struct bwd_params P;
	float *q = NULL, *k = NULL, *v = NULL, *s = NULL, *o = NULL, *g = NULL;
	float *lse = NULL, *m = NULL, *dsum = NULL, *dq = NULL, *dk = NULL;
	float *dv = NULL, *ds = NULL, *part = NULL, *tdk = NULL, *tdv = NULL;
	float *tdq = NULL, *times = NULL;
	int *jend = NULL, *ibegin = NULL, *jbegin = NULL, *iend = NULL;
	float *slopes = NULL;
	long *first = NULL;
	cudaEvent_t ev0 = NULL, ev1 = NULL;
	size_t n, nq, nk, nv, ns, rows, smem, trace;
	int dev, optin, runs, run, scores, rc = -1;

	memset(&sch, 0, sizeof sch);
	n = (size_t)job->n;
	scores = job->d == 0;
	if (job->n <= 0 || job->n > 65535 || job->d < 0 || job->dv <= 0 ||
	    bwd_schedule_init(&sch, job->tq, job->tk, job->br, job->bc,
	    job->mask) != 0) {
		snprintf(err, errlen, "teach_bwd: bad sizes (n=%d Tq=%d Tk=%d d=%d "
		    "dv=%d Br=%d Bc=%d)", job->n, job->tq, job->tk, job->d, job->dv,
		    job->br, job->bc);
		return -1;
	}
	if ((scores ? job->s == NULL : job->q == NULL || job->k == NULL) ||
	    job->v == NULL || job->o == NULL || job->lse == NULL ||
	    job->dout == NULL || (job->bug == BWD_BUG_MAX_NOT_LSE && job->m == NULL)) {
		snprintf(err, errlen, "teach_bwd: an input is missing (Q, K or S, "
		    "V, O, lse, dO; m for max-not-lse)");
		goto fail;
	}
	job->nsteps = sch.first[sch.tc];
	smem = teach_bwd_smem_bytes(sch.br, sch.bc, job->d, job->dv);
	CUDA_CHECK(cudaGetDevice(&dev));
	CUDA_CHECK(cudaDeviceGetAttribute(&optin,
	    cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
	if (smem > (size_t)optin) {
		snprintf(err, errlen, "tiles of Br=%d by Bc=%d with d=%d, dv=%d need "
		    "%zu bytes of shared memory per block; this GPU allows %d (use "
		    "smaller tiles)", sch.br, sch.bc, job->d, job->dv, smem, optin);
		goto fail;
	}

	rows = n * (size_t)job->tq;
	nq = rows * (size_t)job->d;
	nk = n * (size_t)job->tk * (size_t)job->d;
	nv = n * (size_t)job->tk * (size_t)job->dv;
	ns = scores ? rows * (size_t)job->tk : 0;
	trace = n * (size_t)job->nsteps;
	CUDA_CHECK(bwd_upload(&q, job->q, nq));
	CUDA_CHECK(bwd_upload(&k, job->k, nk));
	CUDA_CHECK(bwd_upload(&v, job->v, nv));
	CUDA_CHECK(bwd_upload(&s, job->s, ns));
	CUDA_CHECK(bwd_upload(&o, job->o, rows * job->dv));
	CUDA_CHECK(bwd_upload(&g, job->dout, rows * job->dv));
	CUDA_CHECK(bwd_upload(&lse, job->lse, rows));
	CUDA_CHECK(bwd_upload(&m, job->m, rows));
	CUDA_CHECK(bwd_nans(&dsum, rows));
	CUDA_CHECK(bwd_nans(&dq, nq));
	CUDA_CHECK(bwd_nans(&dk, nk));
	CUDA_CHECK(bwd_nans(&dv, nv));
	CUDA_CHECK(bwd_nans(&ds, ns));	/* skipped tiles: all masked, 0 */
	if (ns > 0)
		CUDA_CHECK(cudaMemset(ds, 0, ns * sizeof(float)));
	if (job->dq_mode == TEACH_BWD_DQ_ORDERED)
		CUDA_CHECK(bwd_nans(&part, n * sch.tc * (size_t)job->tq * job->d));
	if (job->trace_dk != NULL || job->trace_dv != NULL) {
		CUDA_CHECK(bwd_nans(&tdk, trace * sch.bc * job->d));
		CUDA_CHECK(bwd_nans(&tdv, trace * sch.bc * job->dv));
	}
	if (job->trace_dq != NULL)
		CUDA_CHECK(bwd_nans(&tdq, trace * sch.br * job->d));
	CUDA_CHECK(cudaMalloc((void **)&jbegin, (size_t)sch.tr * sizeof *jbegin));
	CUDA_CHECK(cudaMalloc((void **)&iend, (size_t)sch.tc * sizeof *iend));
	CUDA_CHECK(cudaMemcpy(jbegin, sch.jbegin, (size_t)sch.tr * sizeof *jbegin,
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(iend, sch.iend, (size_t)sch.tc * sizeof *iend,
	    cudaMemcpyHostToDevice));
	if (job->slopes != NULL)
		CUDA_CHECK(bwd_upload(&slopes, job->slopes, n));
	CUDA_CHECK(cudaMalloc((void **)&jend, (size_t)sch.tr * sizeof *jend));
	CUDA_CHECK(cudaMalloc((void **)&ibegin, (size_t)sch.tc * sizeof *ibegin));
	CUDA_CHECK(cudaMalloc((void **)&first, ((size_t)sch.tc + 1) * sizeof *first));
	CUDA_CHECK(cudaMemcpy(jend, sch.jend, (size_t)sch.tr * sizeof *jend,
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(ibegin, sch.ibegin, (size_t)sch.tc * sizeof *ibegin,
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(first, sch.first, ((size_t)sch.tc + 1) *
	    sizeof *first, cudaMemcpyHostToDevice));

	memset(&P, 0, sizeof P);
	P.q = q;
	P.k = k;
	P.v = v;
	P.s = s;
	P.o = o;
	P.dout = g;
	P.lse = lse;
	P.m = m;
	P.dsum = dsum;
	P.gq = dq;
	P.gk = dk;
	P.gv = dv;
	P.gs = ds;
	P.part = part;
	P.tr_dk = tdk;
	P.tr_dv = tdv;
	P.tr_dq = tdq;
	P.jbegin = jbegin;
	P.jend = jend;
	P.ibegin = ibegin;
	P.iend = iend;
	P.first = first;
	P.slopes = slopes;
	P.nsteps = job->nsteps;
	P.n = job->n;
	P.tq = job->tq;
	P.tk = job->tk;
	P.d = job->d;
	P.dv = job->dv;
	P.br = sch.br;
	P.bc = sch.bc;
	P.tr = sch.tr;
	P.tc = sch.tc;
	P.scale = job->scale;
	P.mask = job->mask;
	P.mask.slope = 0.0f;
	P.scores = scores;
	P.dtype = job->dtype;
	P.bug = job->bug;
	P.dq_mode = job->dq_mode;

	CUDA_CHECK(cudaFuncSetAttribute(bwd_kv,
	    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	CUDA_CHECK(cudaEventCreate(&ev0));
	CUDA_CHECK(cudaEventCreate(&ev1));
	runs = job->repeat > 0 ? job->repeat + 1 : 1;
	times = (float *)calloc((size_t)runs, sizeof *times);
	if (times == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (run = 0; run < runs; run++) {
		/* ATOMIC adds into dQ: it starts at 0 on every run. */
		if (job->dq_mode != TEACH_BWD_DQ_ORDERED && nq > 0)
			CUDA_CHECK(cudaMemset(dq, 0, nq * sizeof(float)));
		CUDA_CHECK(cudaEventRecord(ev0));
		bwd_dsum<<<(unsigned)((rows + 255) / 256 < 1024 ?
		    (rows + 255) / 256 : 1024), 256>>>(P);
		CUDA_CHECK(cudaGetLastError());
		bwd_kv<<<dim3((unsigned)sch.tc, (unsigned)n), BWD_THREADS, smem>>>(P);
		CUDA_CHECK(cudaGetLastError());
		if (job->dq_mode == TEACH_BWD_DQ_ORDERED && nq > 0) {
			bwd_dq_sum<<<1024, 256>>>(P);
			CUDA_CHECK(cudaGetLastError());
		}
		CUDA_CHECK(cudaEventRecord(ev1));
		CUDA_CHECK(cudaEventSynchronize(ev1));
		CUDA_CHECK(cudaEventElapsedTime(&times[run], ev0, ev1));
	}
	job->ms = bwd_median_ms(times, runs);

	CUDA_CHECK(bwd_download(job->grad_q, dq, nq));
	CUDA_CHECK(bwd_download(job->grad_k, dk, nk));
	CUDA_CHECK(bwd_download(job->grad_v, dv, nv));
	CUDA_CHECK(bwd_download(job->grad_s, ds, ns));
	CUDA_CHECK(bwd_download(job->dsum, dsum, rows));
	CUDA_CHECK(bwd_download(job->trace_dk, tdk, trace * sch.bc * job->d));
	CUDA_CHECK(bwd_download(job->trace_dv, tdv, trace * sch.bc * job->dv));
	CUDA_CHECK(bwd_download(job->trace_dq, tdq, trace * sch.br * job->d));
	rc = 0;
fail:
	/* Cleanup reports nothing: the first error is the one that matters. */
	if (ev0 != NULL)
		cudaEventDestroy(ev0);
	if (ev1 != NULL)
		cudaEventDestroy(ev1);
	cudaFree(q);
	cudaFree(k);
	cudaFree(v);
	cudaFree(s);
	cudaFree(o);
	cudaFree(g);
	cudaFree(lse);
	cudaFree(m);
	cudaFree(dsum);
	cudaFree(dq);
	cudaFree(dk);
	cudaFree(dv);
	cudaFree(ds);
	cudaFree(part);
	cudaFree(tdk);
	cudaFree(tdv);
	cudaFree(tdq);
	cudaFree(jend);
	cudaFree(ibegin);
	cudaFree(jbegin);
	cudaFree(iend);
	cudaFree(slopes);
	cudaFree(first);
	free(times);
	bwd_schedule_free(&sch);
	return rc;
}

/*
 * The kernel table's entry (kernel.c: the teaching kernel's backward): a
 * gpu_bwd_job (kernels.h) as this kernel's own job, the result's host
 * arrays as its outputs.
 */
extern "C" int
teach_bwd_launch(const struct gpu_bwd_job *job, char *err, size_t errlen)
{
	struct gpu_grads *g = job->g;
	struct teach_bwd_job t;

	memset(&t, 0, sizeof t);
	t.n = job->n;
	t.tq = job->tq;
	t.tk = job->tk;
	t.d = job->d;
	t.dv = job->dv;
	t.scale = job->scale;
	t.mask = job->mask;
	t.slopes = job->slopes;
	t.dtype = job->dtype;
	t.bug = job->bug;
	t.q = job->q;
	t.k = job->k;
	t.v = job->v;
	t.s = job->s;
	t.o = job->in.o;
	t.lse = job->in.lse;
	t.dout = job->in.dout;
	t.m = job->in.m;
	t.br = job->br;
	t.bc = job->bc;
	t.dq_mode = job->dq == GPU_DQ_ORDERED ? TEACH_BWD_DQ_ORDERED :
	    TEACH_BWD_DQ_ATOMIC;
	t.repeat = job->repeat;
	t.grad_q = g->grad_q;
	t.grad_k = g->grad_k;
	t.grad_v = g->grad_v;
	t.grad_s = g->grad_s;
	t.trace_dk = g->trace_dk;
	t.trace_dv = g->trace_dv;
	t.trace_dq = g->trace_dq;
	if (teach_bwd(&t, err, errlen) != 0)
		return -1;
	if (t.nsteps != g->nsteps) {
		snprintf(err, errlen, "teach_bwd: %ld steps where the "
		    "simulator's backward has %ld", t.nsteps, g->nsteps);
		return -1;
	}
	g->ms = t.ms;
	return 0;
}
