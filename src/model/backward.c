/*
 * backward.c - the backward engine (see backward.h for the phases).
 *
 * tile_grads() computes a tile's S, P, dP and dS from the inputs alone;
 * tile_dq() adds the tile's part to dQ_i, tile_dkdv() to dK_j and dV_j.
 * backward_run() calls the three in step order.  backward_seek() replays
 * row block i's earlier tiles through tile_grads() + tile_dq() and key
 * block j's through tile_grads() + tile_dkdv(), each from its nearest
 * checkpoint, then the target tile through all three.  The same functions
 * over the same numbers in the same order: that is what makes a seek
 * exact.
 *
 * A key block's state is dK_j (Bc, d) followed by dV_j (Bc, dv) in one
 * array; a row block's state is dQ_i (Br, d).
 */
#include "config.h"

#include "backward.h"
#include "ckstore.h"
#include "combine.h"
#include "dtype.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * One kind of block state, for seeking.  work holds block work_b after
 * work_n of its tiles (work_b = -1: nothing yet); ck the checkpoints, kept
 * as replays and runs pass them.
 */
struct blockseek {
	struct ckstore ck;
	float *work;
	int work_b, work_n;
};

/* One tile's numbers, (br, bc) each, and a product before it is added. */
struct tile_bufs {
	float *s, *pm, *pr, *dp, *ds, *dsr;	/* S, P (float32, and in the
						 * dtype), dP, dS (both ways) */
	float *cap;		/* S after the cap, before ALiBi's bias */
	unsigned char *keep;	/* dropout's keep bits, regenerated */
	float *prod;
};

struct backward {
	const struct problem *p;
	struct schedule sched;
	struct traffic_table traffic;
	enum backward_bug bug;
	int br, bc, d, dv;
	float *lse, *m, *dout, *dsum;	/* (Tq) (Tq) (Tq, dv) (Tq) */

	/* The current step's tile (the arrays the view points at), and a
	 * second one for backward_warm's replays beside it. */
	struct tile_bufs tile, side;
	float *dq_old, *dq_new, *dk_old, *dk_new, *dv_old, *dv_new;
	struct backward_view view;

	struct blockseek rowck;	/* dQ_i */
	struct blockseek keyck;	/* dK_j, dV_j */
	float *side_state;	/* backward_warm's block state */
};

static const char *bug_names[] = {
	[BWD_BUG_NONE] = "none",
	[BWD_BUG_NO_D] = "no-d",
	[BWD_BUG_MAX_NOT_LSE] = "max-not-lse",
	[BWD_BUG_NO_SCALE] = "no-scale",
	[BWD_BUG_DQ_OVERWRITE] = "dq-overwrite",
	[BWD_BUG_DROPOUT_OFFSET] = "dropout-offset",
};

static const char *phase_names[] = {
	[BWD_PHASE_LOAD] = "load",
	[BWD_PHASE_SCORES] = "scores",
	[BWD_PHASE_P] = "P",
	[BWD_PHASE_DV] = "dV",
	[BWD_PHASE_DP] = "dP",
	[BWD_PHASE_DS] = "dS",
	[BWD_PHASE_DQ] = "dQ",
	[BWD_PHASE_DK] = "dK",
	[BWD_PHASE_WRITE] = "write",
};

const char *
backward_bug_name(enum backward_bug b)
{
	return bug_names[b];
}

int
backward_bug_parse(const char *name, enum backward_bug *out)
{
	int b;

	for (b = 0; b < BACKWARD_BUGS; b++) {
		if (strcmp(name, bug_names[b]) == 0) {
			*out = (enum backward_bug)b;
			return 0;
		}
	}
	return -1;
}

const char *
backward_phase_name(int phase)
{
	return phase >= 0 && phase < BWD_PHASES ? phase_names[phase] : "?";
}

/* ---- checkpoints ---- */

/* Puts in work the nearest state of block b at or before n tiles: the
 * previous seek's, a checkpoint, or the empty state (zeros). */
static void
ck_reach(struct blockseek *bs, int b, int n)
{
	const float *from;
	int at;

	if (bs->work_b != b || bs->work_n > n) {
		bs->work_b = b;
		bs->work_n = 0;
		memset(bs->work, 0, bs->ck.floats * sizeof(float));
	}
	at = ckstore_find(&bs->ck, b, n, bs->work_n, &from);
	if (at > 0) {
		memcpy(bs->work, from, bs->ck.floats * sizeof(float));
		bs->work_n = at;
	}
}

/* work went one tile further. */
static void
ck_advance(struct blockseek *bs)
{
	bs->work_n++;
	ckstore_save(&bs->ck, bs->work_b, bs->work_n, bs->work, bs->ck.floats);
}

/* ---- one tile ---- */

/* The tile products are where replays spend their time: built for AVX2
 * and for any x86-64 as sim.c's are, the same operations in the same
 * order either way. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BWD_HOT __attribute__((target_clones("avx2", "default")))
#else
#define BWD_HOT
#endif

/* The factor of dQ and dK: scale, or 1 when the bug forgets it. */
static float
grad_scale(const struct backward *b)
{
	return b->bug == BWD_BUG_NO_SCALE ? 1.0f : b->p->scale;
}

/* The offset the backward regenerates dropout's bits with: the
 * forward's, or the next one under the dropout-offset bug. */
static uint32_t
dropout_offset(const struct backward *b)
{
	return b->p->mask.drop_offset +
	    (b->bug == BWD_BUG_DROPOUT_OFFSET ? 1u : 0u);
}

/* S, P, dP and dS of tile t into tb, from the inputs alone. */
BWD_HOT static void
tile_grads(struct backward *b, struct tile_bufs *tb,
    const struct schedule_tile *t)
{
	const struct problem *p = b->p;
	const float *sub = b->bug == BWD_BUG_MAX_NOT_LSE ? b->m : b->lse;
	const struct mask_rule dm = problem_mask(p, 0);
	unsigned char *keep = tb->keep;
	int rows = t->r1 - t->r0, cols = t->c1 - t->c0, r, c, x;
	size_t n = (size_t)rows * cols, e;

	/* S = scale Q_i K_j^T with the score rules, recomputed as the
	 * forward computed it; cap keeps the capped scores for the cap's
	 * backward. */
	sim_tile_scores_capped(p, &b->sched, t, tb->s, tb->cap);

	/* P = exp(S - lse): a row that sees no key (lse = -inf) gets 0, as
	 * online_exp does while m = -inf; a masked entry gets exp(-inf). */
	for (r = 0; r < rows; r++) {
		const float l = sub[t->r0 + r];
		const float *srow = tb->s + (size_t)r * cols;
		float *prow = tb->pm + (size_t)r * cols;

		for (c = 0; c < cols; c++)
			prow[c] = isinf(l) && l < 0 ? 0.0f : expf(srow[c] - l);
	}

	/* dP = dO_i V_j^T: each entry sums over x in order. */
	for (r = 0; r < rows; r++) {
		const float *g = b->dout + (size_t)(t->r0 + r) * b->dv;
		for (c = 0; c < cols; c++) {
			const float *vc = p->v + (size_t)(t->c0 + c) * b->dv;
			float sum = 0.0f;
			for (x = 0; x < b->dv; x++)
				sum += g[x] * vc[x];
			tb->dp[(size_t)r * cols + c] = sum;
		}
	}

	/* dS = P o (dP' - D), from the float32 P, where dropout's dP' = dP
	 * keep / (1 - p) (mask_rule_drop) with the keep bits regenerated
	 * from the seed, as the forward drew them (the dropout-offset bug
	 * draws another mask). */
	for (r = 0; r < rows; r++) {
		const float dr = b->bug == BWD_BUG_NO_D ? 0.0f : b->dsum[t->r0 + r];
		for (c = 0; c < cols; c++) {
			e = (size_t)r * cols + c;
			if (dm.dropout > 0.0f) {
				keep[e] = (unsigned char)mask_rule_keep_at(dm,
				    dropout_offset(b), t->r0 + r, t->c0 + c);
				tb->dp[e] = mask_rule_drop(dm, keep[e], tb->dp[e]);
			}
			tb->ds[e] = b->bug == BWD_BUG_NO_D ? tb->pm[e] * tb->dp[e] :
			    tb->pm[e] * (tb->dp[e] - dr);
			/* Back through the cap to scale Q K^T (mask_rule.h);
			 * ALiBi's bias passes dS through.  Hidden entries
			 * have P = 0, so dS = 0 stays. */
			if (tb->pm[e] != 0.0f)
				tb->ds[e] = mask_rule_dscore(p->mask, tb->ds[e],
				    tb->cap[e]);
		}
	}

	/* P and dS as the products read them: in the storage type; dV's
	 * P is the dropped one, as the forward's P V read it. */
	for (e = 0; e < n; e++) {
		tb->pr[e] = dtype_round(p->dtype, tb->pm[e]);
		if (dm.dropout > 0.0f)
			tb->pr[e] = dtype_round(p->dtype, mask_rule_drop(dm, keep[e],
			    tb->pm[e]));
		tb->dsr[e] = dtype_round(p->dtype, tb->ds[e]);
	}
}

/* dQ_i (rows, d) += scale dS K_j: entry (r, x) sums dS[r][c] K[c][x]
 * over the tile's keys in order.  dq-overwrite stores instead of adds. */
BWD_HOT static void
tile_dq(struct backward *b, struct tile_bufs *tb, const struct schedule_tile *t,
    float *dq)
{
	const int rows = t->r1 - t->r0, cols = t->c1 - t->c0, d = b->d;
	const float f = grad_scale(b);
	size_t n = (size_t)rows * d, e;
	int r, c, x;

	memset(tb->prod, 0, n * sizeof *tb->prod);
	for (r = 0; r < rows; r++) {
		float *acc = tb->prod + (size_t)r * d;
		for (c = 0; c < cols; c++) {
			const float g = tb->dsr[(size_t)r * cols + c];
			const float *kc = b->p->k + (size_t)(t->c0 + c) * d;
			for (x = 0; x < d; x++)
				acc[x] += g * kc[x];
		}
	}
	for (e = 0; e < n; e++)
		dq[e] = b->bug == BWD_BUG_DQ_OVERWRITE ? f * tb->prod[e] :
		    dq[e] + f * tb->prod[e];
}

/* prod (cols, w) = A^T B for A (rows, cols) and B's rows r0 .. (w
 * wide): entry (c, x) sums A[r][c] B[r][x] over the tile's rows in
 * order. */
BWD_HOT static void
tile_transposed_product(float *prod, const float *a, int rows, int cols,
    const float *brows, int w)
{
	int r, c, x;

	memset(prod, 0, (size_t)cols * w * sizeof *prod);
	for (r = 0; r < rows; r++) {
		const float *br = brows + (size_t)r * w;
		for (c = 0; c < cols; c++) {
			const float ar = a[(size_t)r * cols + c];
			float *acc = prod + (size_t)c * w;
			for (x = 0; x < w; x++)
				acc[x] += ar * br[x];
		}
	}
}

/* dV_j (cols, dv) += P^T dO_i and dK_j (cols, d) += scale dS^T Q_i;
 * kv is dK_j followed by dV_j (the key block's state). */
static void
tile_dkdv(struct backward *b, struct tile_bufs *tb,
    const struct schedule_tile *t, float *kv)
{
	const int rows = t->r1 - t->r0, cols = t->c1 - t->c0;
	float *dk = kv, *dv = kv + (size_t)b->bc * b->d;
	const float f = grad_scale(b);
	size_t e;

	tile_transposed_product(tb->prod, tb->pr, rows, cols,
	    b->dout + (size_t)t->r0 * b->dv, b->dv);
	for (e = 0; e < (size_t)cols * b->dv; e++)
		dv[e] = dv[e] + tb->prod[e];
	if (b->d == 0)
		return;
	tile_transposed_product(tb->prod, tb->dsr, rows, cols,
	    b->p->q + (size_t)t->r0 * b->d, b->d);
	for (e = 0; e < (size_t)cols * b->d; e++)
		dk[e] = dk[e] + f * tb->prod[e];
}

/* Tile t in full: its numbers into the view's arrays, its parts added to
 * dQ_i (dq, its rows) and to the key block's state kv. */
static void
tile_apply(struct backward *b, const struct schedule_tile *t, float *dq,
    float *kv)
{
	const int rows = t->r1 - t->r0, cols = t->c1 - t->c0;
	size_t nq = (size_t)rows * b->d, nk = (size_t)cols * b->d;
	size_t nv = (size_t)cols * b->dv;
	float *kvdv = kv + (size_t)b->bc * b->d;

	tile_grads(b, &b->tile, t);
	memcpy(b->dq_old, dq, nq * sizeof *dq);
	memcpy(b->dk_old, kv, nk * sizeof *kv);
	memcpy(b->dv_old, kvdv, nv * sizeof *kv);
	tile_dq(b, &b->tile, t, dq);
	tile_dkdv(b, &b->tile, t, kv);
	memcpy(b->dq_new, dq, nq * sizeof *dq);
	memcpy(b->dk_new, kv, nk * sizeof *kv);
	memcpy(b->dv_new, kvdv, nv * sizeof *kv);
}

/* The counters at the view's step and phase: the phases are traffic.h's
 * backward stages, one for one. */
static void
view_traffic(struct backward *b)
{
	traffic_backward_at(&b->traffic, b->view.step,
	    (enum traffic_bwd_stage)b->view.phase, &b->view.traffic);
}

/* Points the view at step t, phase (clamped to the step's phases). */
static void
view_set(struct backward *b, const struct schedule_tile *t, int phase)
{
	struct backward_view *v = &b->view;

	v->step = t->step;
	v->tile = *t;
	v->rows = t->r1 - t->r0;
	v->cols = t->c1 - t->c0;
	v->last_in_key = t->i == b->sched.iend[t->j] - 1;
	v->nphases = v->last_in_key ? BWD_PHASES : BWD_PHASES - 1;
	if (phase < 0 || phase >= v->nphases)
		phase = v->nphases - 1;
	v->phase = (enum backward_phase)phase;
	v->lse = (b->bug == BWD_BUG_MAX_NOT_LSE ? b->m : b->lse) + t->r0;
	v->dsum = b->dsum + t->r0;
	view_traffic(b);
}

/* ---- the engine ---- */

struct capture {
	float *m;
	backward_progress_fn fn;	/* NULL: no progress asked for */
	void *ctx;
	long base, total;		/* the merges count after the steps */
};

/* Keeps each row's final max: what its row block's last tile leaves, or
 * with split-KV the largest of its ranges' maxima (each range's last
 * tile leaves the range's). */
static int
capture_m(const struct sim_view *v, void *ctx)
{
	struct capture *c = ctx;
	int r;

	if (v->tile.last_in_split)
		for (r = 0; r < v->rows; r++)
			if (v->m_new[r] > c->m[v->tile.r0 + r])
				c->m[v->tile.r0 + r] = v->m_new[r];
	return c->fn != NULL ? c->fn(c->ctx, v->step + 1, c->total) : 0;
}

static int
capture_merge(const struct combine_view *v, void *ctx)
{
	struct capture *c = ctx;

	return c->fn(c->ctx, c->base + v->step + 1, c->total);
}

int
backward_forward(struct sim *sim, struct combine *comb, float *o, float *lse,
    float *m)
{
	return backward_forward_progress(sim, comb, o, lse, m, NULL, NULL);
}

int
backward_forward_progress(struct sim *sim, struct combine *comb, float *o,
    float *lse, float *m, backward_progress_fn fn, void *ctx)
{
	struct capture c = { m, fn, ctx, sim_steps(sim), sim_steps(sim) };
	int r;

	if (comb != NULL)
		c.total += combine_steps(comb);
	for (r = 0; r < problem_rows(sim_problem(sim)); r++)
		m[r] = -INFINITY;	/* rows no tile reaches */
	if ((r = sim_run(sim, capture_m, &c, o, lse)) != 0)
		return r;
	return comb != NULL ? combine_run(comb, fn != NULL ? capture_merge :
	    NULL, &c, o, lse) : 0;
}

/* Both stores of b laid out for budget bytes, half each, and the seeks
 * started afresh; the old ones stay when there is no memory for the new. */
static int
ck_layout(struct backward *b, uint64_t budget, char *err, size_t errlen)
{
	struct ckstore row, key;

	memset(&row, 0, sizeof row);
	memset(&key, 0, sizeof key);
	if (ckstore_layout(&row, b->sched.tr, b->sched.tc, (size_t)b->br * b->d,
	    budget / 2 + 1, err, errlen) != 0 ||
	    ckstore_layout(&key, b->sched.tc, b->sched.tr,
	    (size_t)b->bc * (size_t)(b->d + b->dv), budget / 2 + 1, err,
	    errlen) != 0) {
		ckstore_free(&row);
		ckstore_free(&key);
		return -1;
	}
	ckstore_free(&b->rowck.ck);
	ckstore_free(&b->keyck.ck);
	b->rowck.ck = row;
	b->keyck.ck = key;
	b->rowck.work_b = b->keyck.work_b = -1;
	return 0;
}

int
backward_set_checkpoint_budget(struct backward *b, uint64_t bytes, char *err,
    size_t errlen)
{
	return ck_layout(b, bytes > 0 ? bytes : 1, err, errlen);
}

int
backward_checkpoint_every(const struct backward *b, int key)
{
	return key ? b->keyck.ck.every : b->rowck.ck.every;
}

static int
tile_bufs_alloc(struct tile_bufs *tb, size_t tile, size_t wide, char *err,
    size_t errlen)
{
	float **each[] = { &tb->s, &tb->pm, &tb->pr, &tb->dp, &tb->ds, &tb->dsr,
		&tb->cap };
	size_t k;

	for (k = 0; k < sizeof each / sizeof each[0]; k++)
		if ((*each[k] = util_calloc(tile, sizeof(float), "tile", err,
		    errlen)) == NULL)
			return -1;
	if ((tb->keep = util_calloc(tile, 1, "keep bits", err, errlen)) == NULL)
		return -1;
	tb->prod = util_calloc(wide, sizeof(float), "product", err, errlen);
	return tb->prod != NULL ? 0 : -1;
}

static void
tile_bufs_free(struct tile_bufs *tb)
{
	free(tb->s);
	free(tb->pm);
	free(tb->pr);
	free(tb->dp);
	free(tb->ds);
	free(tb->dsr);
	free(tb->keep);
	free(tb->cap);
	free(tb->prod);
}

void
backward_free(struct backward *b)
{
	if (b == NULL)
		return;
	ckstore_free(&b->rowck.ck);
	ckstore_free(&b->keyck.ck);
	free(b->rowck.work);
	free(b->keyck.work);
	free(b->lse);
	free(b->m);
	free(b->dout);
	free(b->dsum);
	tile_bufs_free(&b->tile);
	tile_bufs_free(&b->side);
	free(b->side_state);
	free(b->dq_old);
	free(b->dq_new);
	free(b->dk_old);
	free(b->dk_new);
	free(b->dv_old);
	free(b->dv_new);
	traffic_free(&b->traffic);
	schedule_free(&b->sched);
	free(b);
}

/* A copy of n floats, or NULL (err set). */
static float *
copy_floats(const float *src, size_t n, const char *what, char *err,
    size_t errlen)
{
	float *dst = util_calloc(n, sizeof *dst, what, err, errlen);

	if (dst != NULL)
		memcpy(dst, src, n * sizeof *dst);
	return dst;
}

struct backward *
backward_new(const struct problem *p, const struct tiling *t,
    const struct backward_input *in, enum backward_bug bug, char *err,
    size_t errlen)
{
	struct tiling kv_outer = { t->br, t->bc, ORDER_FA1 };
	struct backward *b;
	size_t tile, wide, tq, cols;
	int r, x;

	if (in->o == NULL || in->lse == NULL || in->dout == NULL ||
	    (bug == BWD_BUG_MAX_NOT_LSE && in->m == NULL)) {
		util_error(err, errlen, "the backward needs O, lse and dO%s",
		    bug == BWD_BUG_MAX_NOT_LSE ? " and the row max m" : "");
		return NULL;
	}
	b = util_calloc(1, sizeof *b, "backward", err, errlen);
	if (b == NULL)
		return NULL;
	b->p = p;
	b->bug = bug;
	b->d = p->d;
	b->dv = p->dv;
	if (schedule_init(&b->sched, p, &kv_outer, err, errlen) != 0 ||
	    traffic_backward_init(&b->traffic, p, &b->sched, err, errlen) != 0)
		goto fail;
	b->br = b->sched.br;
	b->bc = b->sched.bc;

	tq = (size_t)p->tq;
	if ((b->lse = copy_floats(in->lse, tq, "lse", err, errlen)) == NULL ||
	    (b->dout = copy_floats(in->dout, tq * b->dv, "dO", err, errlen)) == NULL ||
	    (b->dsum = util_calloc(tq, sizeof(float), "D", err, errlen)) == NULL)
		goto fail;
	if (in->m != NULL &&
	    (b->m = copy_floats(in->m, tq, "m", err, errlen)) == NULL)
		goto fail;
	/* D = rowsum(dO o O), summed over x in order, with O as the forward
	 * stores it (in the dtype). */
	for (r = 0; r < p->tq; r++) {
		float sum = 0.0f;
		for (x = 0; x < b->dv; x++)
			sum += b->dout[(size_t)r * b->dv + x] *
			    dtype_round(p->dtype, in->o[(size_t)r * b->dv + x]);
		b->dsum[r] = sum;
	}

	tile = (size_t)b->br * (size_t)b->bc;
	cols = (size_t)b->bc;
	wide = (size_t)(b->d > b->dv ? b->d : b->dv) *
	    (size_t)(b->br > b->bc ? b->br : b->bc);
	if (tile_bufs_alloc(&b->tile, tile, wide, err, errlen) != 0 ||
	    tile_bufs_alloc(&b->side, tile, wide, err, errlen) != 0 ||
	    (b->side_state = util_calloc(cols * (size_t)(b->d + b->dv) +
	    (size_t)b->br * b->d + 1, sizeof(float), "state", err,
	    errlen)) == NULL ||
	    (b->dq_old = util_calloc((size_t)b->br * b->d + 1, sizeof(float), "dQ", err, errlen)) == NULL ||
	    (b->dq_new = util_calloc((size_t)b->br * b->d + 1, sizeof(float), "dQ", err, errlen)) == NULL ||
	    (b->dk_old = util_calloc(cols * b->d + 1, sizeof(float), "dK", err, errlen)) == NULL ||
	    (b->dk_new = util_calloc(cols * b->d + 1, sizeof(float), "dK", err, errlen)) == NULL ||
	    (b->dv_old = util_calloc(cols * b->dv, sizeof(float), "dV", err, errlen)) == NULL ||
	    (b->dv_new = util_calloc(cols * b->dv, sizeof(float), "dV", err, errlen)) == NULL ||
	    (b->rowck.work = util_calloc((size_t)b->br * b->d + 1, sizeof(float), "state", err, errlen)) == NULL ||
	    (b->keyck.work = util_calloc(cols * (size_t)(b->d + b->dv), sizeof(float), "state", err, errlen)) == NULL)
		goto fail;
	if (ck_layout(b, BACKWARD_CHECKPOINT_BUDGET, err, errlen) != 0)
		goto fail;

	b->view.d = b->d;
	b->view.dv = b->dv;
	b->view.s = b->tile.s;
	b->view.p = b->tile.pm;
	b->view.dp = b->tile.dp;
	b->view.ds = b->tile.ds;
	b->view.keep = mask_rule_has(p->mask, MASK_DROPOUT) ? b->tile.keep : NULL;
	b->view.dq_old = b->dq_old;
	b->view.dq_new = b->dq_new;
	b->view.dk_old = b->dk_old;
	b->view.dk_new = b->dk_new;
	b->view.dv_old = b->dv_old;
	b->view.dv_new = b->dv_new;
	backward_seek(b, 0, BWD_PHASE_LOAD);
	return b;

fail:
	backward_free(b);
	return NULL;
}

long
backward_steps(const struct backward *b)
{
	return b->sched.nsteps;
}

const struct problem *
backward_problem(const struct backward *b)
{
	return b->p;
}

const struct schedule *
backward_schedule(const struct backward *b)
{
	return &b->sched;
}

const struct traffic_table *
backward_traffic(const struct backward *b)
{
	return &b->traffic;
}

enum backward_bug
backward_bug(const struct backward *b)
{
	return b->bug;
}

const float *
backward_dsum(const struct backward *b)
{
	return b->dsum;
}

const struct backward_view *
backward_view(const struct backward *b)
{
	return &b->view;
}

int
backward_step_phases(const struct backward *b, long k)
{
	struct schedule_tile t;

	schedule_tile(&b->sched, k, &t);
	return t.i == b->sched.iend[t.j] - 1 ? BWD_PHASES : BWD_PHASES - 1;
}

/* The tile of row block i's n-th visible key block (j = jbegin(i) + n),
 * or of key block j's n-th visible row block. */
static void
row_tile(const struct backward *b, int i, int n, struct schedule_tile *t)
{
	schedule_tile(&b->sched, schedule_step_of(&b->sched, i,
	    b->sched.jbegin[i] + n), t);
}

static void
key_tile(const struct backward *b, int j, int n, struct schedule_tile *t)
{
	schedule_tile(&b->sched, schedule_step_of(&b->sched,
	    b->sched.ibegin[j] + n, j), t);
}

int
backward_seek(struct backward *b, long k, int phase)
{
	struct schedule_tile t, replay;
	int nrow, nkey;

	if (k < 0 || k >= b->sched.nsteps)
		return -1;
	schedule_tile(&b->sched, k, &t);
	/* Before this tile, row block i has had its tiles (i, jbegin(i) ..
	 * j-1) and key block j its tiles (ibegin(j) .. i-1, j). */
	nrow = t.j - b->sched.jbegin[t.i];
	nkey = t.i - b->sched.ibegin[t.j];

	ck_reach(&b->rowck, t.i, nrow);
	while (b->rowck.work_n < nrow) {
		row_tile(b, t.i, b->rowck.work_n, &replay);
		tile_grads(b, &b->tile, &replay);
		tile_dq(b, &b->tile, &replay, b->rowck.work);
		ck_advance(&b->rowck);
	}
	ck_reach(&b->keyck, t.j, nkey);
	while (b->keyck.work_n < nkey) {
		key_tile(b, t.j, b->keyck.work_n, &replay);
		tile_grads(b, &b->tile, &replay);
		tile_dkdv(b, &b->tile, &replay, b->keyck.work);
		ck_advance(&b->keyck);
	}
	/* The target tile last, so the view's arrays hold its numbers. */
	tile_apply(b, &t, b->rowck.work, b->keyck.work);
	ck_advance(&b->rowck);
	ck_advance(&b->keyck);
	view_set(b, &t, phase);
	return 0;
}

int
backward_warm(struct backward *b, int key, int blk, int ntiles)
{
	struct ckstore *cs = key ? &b->keyck.ck : &b->rowck.ck;
	int len = key ? b->sched.iend[blk] - b->sched.ibegin[blk] :
	    b->sched.jend[blk] - b->sched.jbegin[blk];
	struct schedule_tile t;
	const float *from;
	int n;

	if (blk < 0 || blk >= (key ? b->sched.tc : b->sched.tr) || ntiles < 0 ||
	    ntiles > len)
		return -1;
	/* From the nearest checkpoint at or before ntiles, or from 0. */
	memset(b->side_state, 0, cs->floats * sizeof(float));
	n = ckstore_find(cs, blk, ntiles, 0, &from);
	if (n > 0)
		memcpy(b->side_state, from, cs->floats * sizeof(float));
	for (; n < ntiles; n++) {
		if (key)
			key_tile(b, blk, n, &t);
		else
			row_tile(b, blk, n, &t);
		tile_grads(b, &b->side, &t);
		if (key)
			tile_dkdv(b, &b->side, &t, b->side_state);
		else
			tile_dq(b, &b->side, &t, b->side_state);
		ckstore_save(cs, blk, n + 1, b->side_state, cs->floats);
	}
	return 0;
}

int
backward_move_phase(struct backward *b, int delta)
{
	const struct backward_view *v = &b->view;
	int phase = (int)v->phase + delta;

	if (phase < 0)
		return v->step == 0 ? -1 :
		    backward_seek(b, v->step - 1, BWD_PHASE_LAST);
	if (phase >= v->nphases)
		return v->step + 1 >= b->sched.nsteps ? -1 :
		    backward_seek(b, v->step + 1, BWD_PHASE_LOAD);
	b->view.phase = (enum backward_phase)phase;
	view_traffic(b);
	return 0;
}

int
backward_run(struct backward *b, backward_step_fn fn, void *ctx,
    const struct backward_grads *g)
{
	const struct problem *p = b->p;
	struct schedule_tile t;
	float *dq, *kv;
	size_t d = (size_t)b->d, dv = (size_t)b->dv, bc = (size_t)b->bc;
	long k;
	int c, rc = 0;

	/* dQ accumulates across key blocks: the whole (Tq, d) of it, in the
	 * caller's array when there is one.  kv is the key block's state. */
	dq = g != NULL && g->dq != NULL ? g->dq :
	    calloc((size_t)p->tq * d + 1, sizeof *dq);
	kv = calloc(bc * (d + dv), sizeof *kv);
	if (dq == NULL || kv == NULL) {
		rc = -1;
		goto done;
	}
	memset(dq, 0, (size_t)p->tq * d * sizeof *dq);
	if (g != NULL && g->dk != NULL)
		memset(g->dk, 0, (size_t)p->tk * d * sizeof *g->dk);
	if (g != NULL && g->dv != NULL)
		memset(g->dv, 0, (size_t)p->tk * dv * sizeof *g->dv);
	if (g != NULL && g->ds != NULL)		/* skipped tiles: all masked */
		memset(g->ds, 0, (size_t)p->tq * p->tk * sizeof *g->ds);

	for (k = 0; k < b->sched.nsteps; k++) {
		schedule_tile(&b->sched, k, &t);
		if (t.first_in_outer)
			memset(kv, 0, bc * (d + dv) * sizeof *kv);
		tile_apply(b, &t, dq + (size_t)t.r0 * d, kv);
		/* The run passes every checkpoint position: keep them, so
		 * that the first seeks after it are cheap. */
		ckstore_save(&b->rowck.ck, t.i, t.j - b->sched.jbegin[t.i] + 1,
		    dq + (size_t)t.r0 * d,
		    (size_t)(t.r1 - t.r0) * d);
		ckstore_save(&b->keyck.ck, t.j, t.i - b->sched.ibegin[t.j] + 1,
		    kv, bc * (d + dv));
		if (g != NULL && g->ds != NULL)
			for (c = 0; c < t.r1 - t.r0; c++)
				memcpy(g->ds + (size_t)(t.r0 + c) * p->tk + t.c0,
				    b->tile.ds + (size_t)c * (t.c1 - t.c0),
				    (size_t)(t.c1 - t.c0) * sizeof *g->ds);
		if (t.i == b->sched.iend[t.j] - 1) {	/* WRITE dK_j, dV_j */
			if (g != NULL && g->dk != NULL)
				memcpy(g->dk + (size_t)t.c0 * d, kv,
				    (size_t)(t.c1 - t.c0) * d * sizeof *kv);
			if (g != NULL && g->dv != NULL)
				memcpy(g->dv + (size_t)t.c0 * dv, kv + bc * d,
				    (size_t)(t.c1 - t.c0) * dv * sizeof *kv);
		}
		if (fn != NULL) {
			view_set(b, &t, BWD_PHASE_LAST);
			rc = fn(&b->view, ctx);
			if (rc != 0)
				break;
		}
	}
	if (fn == NULL && b->sched.nsteps > 0)
		view_set(b, &t, BWD_PHASE_LAST);
done:
	if (g == NULL || dq != g->dq)
		free(dq);
	free(kv);
	return rc;
}

/* The first entry of x (rows, cols) that is not finite: its index, or
 * -1. */
static long
first_nonfinite(const float *x, size_t n)
{
	size_t e;

	for (e = 0; x != NULL && e < n; e++)
		if (!isfinite(x[e]))
			return (long)e;
	return -1;
}

int
backward_check_grads(const struct backward *b, const struct backward_grads *g,
    char *err, size_t errlen)
{
	const struct problem *p = b->p;
	const struct {
		const char *name;
		const float *x;
		size_t rows, cols;
	} each[] = {
		{ "dQ", g->dq, (size_t)p->tq, (size_t)p->d },
		{ "dK", g->dk, (size_t)p->tk, (size_t)p->d },
		{ "dV", g->dv, (size_t)p->tk, (size_t)p->dv },
		{ "dS", g->ds, (size_t)p->tq, (size_t)p->tk },
	};
	size_t k;
	long e;

	for (k = 0; k < sizeof each / sizeof each[0]; k++) {
		if (each[k].cols == 0 ||
		    (e = first_nonfinite(each[k].x, each[k].rows * each[k].cols)) < 0)
			continue;
		return util_error(err, errlen, "the backward's %s entry (%ld, %ld) "
		    "is %s: a float32 product or sum overflowed (scale the inputs "
		    "or dO down)", each[k].name, e / (long)each[k].cols,
		    e % (long)each[k].cols, isnan(each[k].x[e]) ? "NaN" :
		    each[k].x[e] > 0 ? "inf" : "-inf");
	}
	return 0;
}
