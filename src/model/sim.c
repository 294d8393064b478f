/*
 * sim.c - the tiled replay engine (see sim.h for the states and moves).
 *
 * Every tile goes through tile_apply(), which takes a row block's state
 * (m, l, acc for the tile's rows) and updates it in place, leaving the
 * step's numbers in the view's arrays.  sim_run() calls it in step order
 * over the state of all rows; sim_seek() calls it over one row block's
 * state, replayed from a checkpoint.  One function for both is what makes
 * seeking exact.
 *
 * Split-KV changes only where a state starts and ends: at a range's first
 * tile (schedule_tile.first_in_split) and its last, where the finalize
 * gives the range's partial (o, lse); sim_run keeps every range's partial
 * in a store (partials_*) for the combine.  Grouped heads change only
 * which rows of Q and which K/V head a tile reads (schedule_row_*).
 */
#include "config.h"

#include "sim.h"
#include "ckstore.h"
#include "mask.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Arrays tile_apply writes per step (side_swap lists them). */
#define SIM_STEP_ARRAYS 15

struct sim {
	const struct problem *p;
	struct schedule sched;
	struct traffic_table traffic;
	struct online_rule rule;
	int br, bc, dv;

	/* The current step: the arrays the view points at. */
	float *s, *pm, *pr, *pv;	/* (br, bc) and (br, dv) scratch */
	float *rowmax, *rowsum;
	float *m_old, *m_new, *alpha, *l_old, *l_new;
	float *acc_old, *acc_new, *o, *lse;
	struct sim_view view;

	/*
	 * Seeking.  A block state is m[br], l[br], acc[br * dv] in one array.
	 * work holds row block work_i after work_n of its tiles (work_i = -1:
	 * nothing yet); ck the row blocks' checkpoints, kept as replays pass
	 * them.
	 */
	float *work;
	int work_i, work_n;
	int work_s;		/* the key range work_i's state belongs to */
	struct ckstore ck;

	/*
	 * sim_block_state replays into side (row block side_i after side_n
	 * tiles), with tile_apply's per-step arrays swapped for side_arrays,
	 * so the view's numbers and position stay as they are.  Allocated
	 * on first use.
	 */
	float *side;
	int side_i, side_n;
	float *side_arrays[SIM_STEP_ARRAYS];

	struct sim_partials partials;	/* splits > 1: what sim_run leaves */
};

/*
 * Exchanges the per-step arrays tile_apply writes (the view points at
 * them) with side_arrays, allocating those the first time: a new
 * per-step array joins this list, so that side replays get one too.
 * Returns 0, or -1 without memory (nothing exchanged).
 */
static int
side_swap(struct sim *sim)
{
	size_t tile = (size_t)sim->br * (size_t)sim->bc;
	size_t acc = (size_t)sim->br * (size_t)sim->dv, rows = (size_t)sim->br;
	float **const a[SIM_STEP_ARRAYS] = {
		&sim->s, &sim->pm, &sim->pr, &sim->pv, &sim->rowmax,
		&sim->rowsum, &sim->m_old, &sim->m_new, &sim->alpha, &sim->l_old,
		&sim->l_new, &sim->acc_old, &sim->acc_new, &sim->o, &sim->lse,
	};
	const size_t n[SIM_STEP_ARRAYS] = {
		tile, tile, tile, acc, rows,
		rows, rows, rows, rows, rows,
		rows, acc, acc, acc, rows,
	};
	float *tmp;
	int x;

	for (x = 0; x < SIM_STEP_ARRAYS; x++)
		if (sim->side_arrays[x] == NULL &&
		    (sim->side_arrays[x] = calloc(n[x], sizeof(float))) == NULL)
			return -1;
	for (x = 0; x < SIM_STEP_ARRAYS; x++) {
		tmp = *a[x];
		*a[x] = sim->side_arrays[x];
		sim->side_arrays[x] = tmp;
	}
	return 0;
}

static size_t
block_floats(const struct sim *sim)
{
	return (size_t)sim->br * (size_t)(sim->dv + 2);
}

static void
block_init(const struct sim *sim, float *b)
{
	int r;

	for (r = 0; r < sim->br; r++)
		b[r] = -INFINITY;
	memset(b + sim->br, 0, (size_t)sim->br * (sim->dv + 1) * sizeof *b);
}

/*
 * The two matrix products are where replays spend their time.  Built
 * twice, for AVX2 and for any x86-64, and chosen when the program starts:
 * wider vectors across independent entries, the same operations in the
 * same order for each entry (no fused multiply-adds), so the same bits.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SIM_HOT __attribute__((target_clones("avx2", "default")))
#else
#define SIM_HOT
#endif

/*
 * A paged problem's row of q.K_j^T: the same sums in the same order as
 * the contiguous loop's, each key read from its pool slot through the
 * page table (paged.h), so the same bits.
 */
static void
paged_dots(const struct problem *p, const struct schedule_tile *t,
    const float *qr, float *srow)
{
	const struct paged_cache *pc = &p->paged;
	size_t slots = paged_slots(pc);
	const float *kt = pc->kt + (size_t)t->kv_head * slots * p->d;
	int cols = t->c1 - t->c0, c, x;

	for (x = 0; x < p->d; x++) {
		const float qx = qr[x];
		const float *kx = kt + (size_t)x * slots;
		for (c = 0; c < cols; c++)
			srow[c] += qx * kx[paged_slot(pc, t->c0 + c)];
	}
}

/*
 * The one place a tile's S is computed (sim.h): the backward's
 * recomputed S is the forward's, bit for bit.  x = scale q.k summed in
 * order, then the score rules of the row's head (mask_rule.h): the cap,
 * the ALiBi bias, the window.  capped (when not NULL) gets the capped
 * score before the bias (what the cap's backward reads), raw (when not
 * NULL) x before the cap (what the softcap-after-max bug takes the max
 * of); both -inf where hidden.  bug may move the window's edge.
 */
SIM_HOT static void
tile_scores(const struct problem *p, const struct schedule *sc,
    const struct schedule_tile *t, int bug, float *s, float *capped,
    float *raw)
{
	int rows = t->r1 - t->r0, cols = t->c1 - t->c0, r, c, x;

	/* A scores problem has no K^T (kt is NULL): no offset into it. */
	const float *kt = p->scores_mode ? NULL :
	    p->kt + (size_t)t->kv_head * p->tk * p->d;

	for (r = 0; r < rows; r++) {
		float *srow = s + (size_t)r * cols;
		int row = schedule_row_pos(sc, t->r0 + r);
		size_t qrow = (size_t)schedule_row_out(sc, t->r0 + r);
		struct mask_rule m = problem_mask(p, (int)(qrow / (size_t)p->tq));

		if (p->scores_mode)
			memcpy(srow, p->s + qrow * p->tk + t->c0,
			    (size_t)cols * sizeof *srow);
		else {
			const float *qr = p->q + qrow * p->d;
			memset(srow, 0, (size_t)cols * sizeof *srow);
			/* x outermost keeps each sum in order and lets the
			 * compiler vectorize across the keys. */
			if (p->paged.page_size > 0)
				paged_dots(p, t, qr, srow);
			else
				for (x = 0; x < p->d; x++) {
					const float qx = qr[x];
					const float *kx = kt + (size_t)x * p->tk + t->c0;
					for (c = 0; c < cols; c++)
						srow[c] += qx * kx[c];
				}
			for (c = 0; c < cols; c++)
				srow[c] *= p->scale;
		}
		for (c = 0; c < cols; c++) {
			long key = t->c0 + c;
			int seen = mask_rule_visible_bug(m, bug, row, key, p->tq,
			    p->tk);
			float cap;

			if (raw != NULL)
				raw[(size_t)r * cols + c] = seen ? srow[c] :
				    -INFINITY;
			cap = seen ? mask_rule_cap(m, srow[c]) : -INFINITY;
			if (capped != NULL)
				capped[(size_t)r * cols + c] = cap;
			srow[c] = seen ? cap + mask_rule_bias(m, row, key, p->tq,
			    p->tk) : -INFINITY;
		}
	}
}

void
sim_tile_scores(const struct problem *p, const struct schedule *sc,
    const struct schedule_tile *t, float *s)
{
	tile_scores(p, sc, t, MASK_BUG_NONE, s, NULL, NULL);
}

void
sim_tile_scores_capped(const struct problem *p, const struct schedule *sc,
    const struct schedule_tile *t, float *s, float *capped)
{
	tile_scores(p, sc, t, MASK_BUG_NONE, s, capped, NULL);
}

/*
 * Dropout on the tile's P as P V reads it (mask_rule.h): pr = P / (1 - p)
 * in the storage type where the row's head keeps the entry, 0 where it
 * drops it.  pm (float32, what l summed) stays undropped.
 */
static void
tile_dropout(const struct problem *p, const struct schedule *sc,
    const struct schedule_tile *t, const float *pm, float *pr)
{
	int rows = t->r1 - t->r0, cols = t->c1 - t->c0, r, c;

	for (r = 0; r < rows; r++) {
		long row = schedule_row_pos(sc, t->r0 + r);
		size_t qrow = (size_t)schedule_row_out(sc, t->r0 + r);
		struct mask_rule m = problem_mask(p, (int)(qrow / (size_t)p->tq));

		for (c = 0; c < cols; c++) {
			size_t e = (size_t)r * cols + c;
			pr[e] = dtype_round(p->dtype, mask_rule_drop(m,
			    mask_rule_keep(m, row, t->c0 + c), pm[e]));
		}
	}
}

/* pv = P V_j with P as rounded for the product; each entry sums over
 * the tile's keys in order. */
SIM_HOT static void
tile_pv(struct sim *sim, const struct schedule_tile *t)
{
	const struct problem *p = sim->p;
	int rows = t->r1 - t->r0, cols = t->c1 - t->c0, dv = sim->dv, r, c, x;
	const struct paged_cache *cache = &p->paged;
	/* Paged: V_j's rows from their pool slots (paged.h). */
	const float *v = cache->page_size > 0 ?
	    cache->v + (size_t)t->kv_head * paged_slots(cache) * dv :
	    p->v + (size_t)t->kv_head * p->tk * dv;

	memset(sim->pv, 0, (size_t)rows * dv * sizeof *sim->pv);
	for (r = 0; r < rows; r++) {
		float *pvr = sim->pv + (size_t)r * dv;
		for (c = 0; c < cols; c++) {
			const float pc = sim->pr[(size_t)r * cols + c];
			const float *vc = v + (size_t)paged_slot(cache, t->c0 + c) * dv;
			for (x = 0; x < dv; x++)
				pvr[x] += pc * vc[x];
		}
	}
}

/*
 * Applies tile t to a row block's state m, l, acc (the tile's rows) in
 * place, recording the step's numbers in the view arrays.
 */
static void
tile_apply(struct sim *sim, const struct schedule_tile *t, float *m, float *l,
    float *acc)
{
	const struct problem *p = sim->p;
	int rows = t->r1 - t->r0, cols = t->c1 - t->c0, dv = sim->dv, r, c;
	size_t accn = (size_t)rows * dv;

	memcpy(sim->m_old, m, (size_t)rows * sizeof *m);
	memcpy(sim->l_old, l, (size_t)rows * sizeof *l);
	memcpy(sim->acc_old, acc, accn * sizeof *acc);

	/* The softcap-after-max bug takes the max of the scores before
	 * the cap (in pm, which the exponentials overwrite next). */
	tile_scores(sim->p, &sim->sched, t, sim->rule.mask_bug, sim->s, NULL,
	    sim->rule.mask_bug == MASK_BUG_MAX_BEFORE_CAP ? sim->pm : NULL);
	for (r = 0; r < rows; r++) {
		const float *srow = sim->s + (size_t)r * cols;
		float *prow = sim->pm + (size_t)r * cols;
		float sum = 0.0f;

		sim->rowmax[r] = online_max(-INFINITY,
		    sim->rule.mask_bug == MASK_BUG_MAX_BEFORE_CAP ? prow : srow, cols);
		sim->m_new[r] = m[r] > sim->rowmax[r] ? m[r] : sim->rowmax[r];
		sim->alpha[r] = online_alpha(m[r], sim->m_new[r]);
		online_exp(srow, cols, sim->m_new[r], prow);
		for (c = 0; c < cols; c++)
			sum += prow[c];
		sim->rowsum[r] = sum;
	}

	/* P V with P in the storage type; the row sums above used P in
	 * float32, as a tensor-core kernel's do. */
	if (p->dtype != DTYPE_FP32) {
		for (c = 0; c < rows * cols; c++)
			sim->pr[c] = dtype_round(p->dtype, sim->pm[c]);
	} else
		memcpy(sim->pr, sim->pm, (size_t)rows * cols * sizeof *sim->pr);
	if (mask_rule_has(p->mask, MASK_DROPOUT))
		tile_dropout(p, &sim->sched, t, sim->pm, sim->pr);
	tile_pv(sim, t);

	for (r = 0; r < rows; r++) {
		float *a = acc + (size_t)r * dv;
		l[r] = online_update(&sim->rule, sim->alpha[r], l[r], sim->rowsum[r],
		    a, sim->pv + (size_t)r * dv, dv, a);
		m[r] = sim->m_new[r];
		if (t->last_in_split)
			online_finalize(sim->rule.convention, m[r], l[r], a, dv,
			    sim->o + (size_t)r * dv, &sim->lse[r]);
	}
	memcpy(sim->l_new, l, (size_t)rows * sizeof *l);
	memcpy(sim->acc_new, acc, accn * sizeof *acc);
}

/* What each phase has done, as traffic counts it (traffic.h). */
static const enum traffic_stage phase_stage[SIM_PHASES] = {
	[SIM_PHASE_LOAD] = TRAFFIC_LOAD,
	[SIM_PHASE_SCORES] = TRAFFIC_SCORES,
	[SIM_PHASE_MAX] = TRAFFIC_SCORES,
	[SIM_PHASE_RESCALE] = TRAFFIC_RESCALE,
	[SIM_PHASE_EXP] = TRAFFIC_EXP,
	[SIM_PHASE_UPDATE] = TRAFFIC_UPDATE,
	[SIM_PHASE_FINALIZE] = TRAFFIC_FINALIZE,
};

/* Points the view at step t, phase (clamped to the step's phases). */
static void
view_set(struct sim *sim, const struct schedule_tile *t, int phase)
{
	struct sim_view *v = &sim->view;

	v->step = t->step;
	v->tile = *t;
	v->rows = t->r1 - t->r0;
	v->cols = t->c1 - t->c0;
	v->nphases = t->last_in_split ? SIM_PHASES : SIM_PHASES - 1;
	if (phase < 0 || phase >= v->nphases)
		phase = v->nphases - 1;
	v->phase = (enum sim_phase)phase;
	traffic_at(&sim->traffic, t->step, phase_stage[phase], &v->traffic);
}

/* ---- the partials of a split run ---- */

static void
partials_free(struct sim_partials *pt)
{
	free(pt->m);
	free(pt->l);
	free(pt->lse);
	free(pt->u);
	free(pt->o);
	memset(pt, 0, sizeof *pt);
}

/* A store for every (row, range) of a split sim; nothing without splits. */
static int
partials_alloc(struct sim *sim, char *err, size_t errlen)
{
	struct sim_partials *pt = &sim->partials;
	size_t n = (size_t)sim->sched.rows * (size_t)sim->sched.splits;

	pt->rows = sim->sched.rows;
	pt->splits = sim->sched.splits;
	pt->dv = sim->dv;
	pt->form = sim->sched.partials;
	if (pt->splits < 2)
		return 0;
	if ((pt->m = util_calloc(n, sizeof(float), "partials", err, errlen)) == NULL ||
	    (pt->l = util_calloc(n, sizeof(float), "partials", err, errlen)) == NULL ||
	    (pt->lse = util_calloc(n, sizeof(float), "partials", err, errlen)) == NULL ||
	    (pt->u = util_calloc(n, (size_t)sim->dv * sizeof(float), "partials",
	    err, errlen)) == NULL ||
	    (pt->o = util_calloc(n, (size_t)sim->dv * sizeof(float), "partials",
	    err, errlen)) == NULL)
		return -1;
	return 0;
}

/* Every range starts out empty: a range no tile visits stays so. */
static void
partials_clear(struct sim_partials *pt)
{
	size_t e, n = (size_t)pt->rows * (size_t)pt->splits;

	for (e = 0; e < n; e++) {
		pt->m[e] = -INFINITY;
		pt->lse[e] = -INFINITY;
	}
	memset(pt->l, 0, n * sizeof *pt->l);
	memset(pt->u, 0, n * (size_t)pt->dv * sizeof *pt->u);
	memset(pt->o, 0, n * (size_t)pt->dv * sizeof *pt->o);
}

/* Keeps the partial that tile t (a range's last) just finalized: the
 * state (m, l, u) and the pair (o, lse) in the view's arrays.  Under the
 * normalized convention the state holds o, and u = o l. */
static void
partials_keep(struct sim *sim, const struct schedule_tile *t, const float *m,
    const float *l, const float *acc)
{
	struct sim_partials *pt = &sim->partials;
	int r, x, dv = sim->dv, rows = t->r1 - t->r0;

	for (r = 0; r < rows; r++) {
		size_t e = (size_t)(t->r0 + r) * pt->splits + (size_t)t->split;
		const float *a = acc + (size_t)r * dv;

		pt->m[e] = m[r];
		pt->l[e] = l[r];
		pt->lse[e] = sim->lse[r];
		for (x = 0; x < dv; x++)
			pt->u[e * dv + x] = sim->rule.convention == CONV_UNNORMALIZED ?
			    a[x] : a[x] * l[r];
		memcpy(pt->o + e * dv, sim->o + (size_t)r * dv, (size_t)dv * sizeof(float));
	}
}

const struct sim_partials *
sim_partials(const struct sim *sim)
{
	return &sim->partials;
}

void
sim_free(struct sim *sim)
{
	int n;

	if (sim == NULL)
		return;
	ckstore_free(&sim->ck);
	free(sim->s);
	free(sim->pm);
	free(sim->pr);
	free(sim->pv);
	free(sim->rowmax);
	free(sim->rowsum);
	free(sim->m_old);
	free(sim->m_new);
	free(sim->alpha);
	free(sim->l_old);
	free(sim->l_new);
	free(sim->acc_old);
	free(sim->acc_new);
	free(sim->o);
	free(sim->lse);
	free(sim->work);
	free(sim->side);
	for (n = 0; n < SIM_STEP_ARRAYS; n++)
		free(sim->side_arrays[n]);
	partials_free(&sim->partials);
	traffic_free(&sim->traffic);
	schedule_free(&sim->sched);
	free(sim);
}

struct sim *
sim_new(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, char *err, size_t errlen)
{
	return sim_new_split(p, t, NULL, rule, err, errlen);
}

struct sim *
sim_new_split(const struct problem *p, const struct tiling *t,
    const struct split_plan *sp, const struct online_rule *rule, char *err,
    size_t errlen)
{
	struct sim *sim;
	size_t tile, acc, rows;

	if (!online_rule_valid(rule)) {
		util_error(err, errlen, "bug '%s' belongs to the normalized "
		    "convention (use --convention normalized)",
		    online_bug_name(rule->bug));
		return NULL;
	}
	if (mask_bug_check(rule->mask_bug, problem_mask(p, 0), err, errlen) != 0)
		return NULL;
	sim = util_calloc(1, sizeof *sim, "sim", err, errlen);
	if (sim == NULL)
		return NULL;
	sim->p = p;
	sim->rule = *rule;
	sim->dv = p->dv;
	sim->work_i = -1;
	sim->side_i = -1;
	if (schedule_init_split(&sim->sched, p, t, sp, err, errlen) != 0 ||
	    traffic_init(&sim->traffic, p, &sim->sched, err, errlen) != 0)
		goto fail;
	sim->br = sim->sched.br;
	sim->bc = sim->sched.bc;

	rows = (size_t)sim->br;
	tile = rows * (size_t)sim->bc;
	acc = rows * (size_t)sim->dv;
	if ((sim->s = util_calloc(tile, sizeof(float), "S tile", err, errlen)) == NULL ||
	    (sim->pm = util_calloc(tile, sizeof(float), "P tile", err, errlen)) == NULL ||
	    (sim->pr = util_calloc(tile, sizeof(float), "P tile", err, errlen)) == NULL ||
	    (sim->pv = util_calloc(acc, sizeof(float), "PV", err, errlen)) == NULL ||
	    (sim->rowmax = util_calloc(rows, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->rowsum = util_calloc(rows, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->m_old = util_calloc(rows, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->m_new = util_calloc(rows, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->alpha = util_calloc(rows, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->l_old = util_calloc(rows, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->l_new = util_calloc(rows, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->lse = util_calloc(rows, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->acc_old = util_calloc(acc, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->acc_new = util_calloc(acc, sizeof(float), "state", err, errlen)) == NULL ||
	    (sim->o = util_calloc(acc, sizeof(float), "output", err, errlen)) == NULL ||
	    (sim->work = util_calloc(block_floats(sim), sizeof(float), "state",
	    err, errlen)) == NULL ||
	    partials_alloc(sim, err, errlen) != 0)
		goto fail;

	if (sim_set_checkpoint_budget(sim, SIM_CHECKPOINT_BUDGET, err,
	    errlen) != 0)
		goto fail;

	sim->view.dv = sim->dv;
	sim->view.s = sim->s;
	sim->view.p = sim->pm;
	sim->view.rowmax = sim->rowmax;
	sim->view.rowsum = sim->rowsum;
	sim->view.m_old = sim->m_old;
	sim->view.m_new = sim->m_new;
	sim->view.alpha = sim->alpha;
	sim->view.l_old = sim->l_old;
	sim->view.l_new = sim->l_new;
	sim->view.acc_old = sim->acc_old;
	sim->view.acc_new = sim->acc_new;
	sim->view.o = sim->o;
	sim->view.lse = sim->lse;
	sim_seek(sim, 0, SIM_PHASE_LOAD);
	return sim;

fail:
	sim_free(sim);
	return NULL;
}

int
sim_set_checkpoint_budget(struct sim *sim, uint64_t bytes, char *err,
    size_t errlen)
{
	return ckstore_layout(&sim->ck, sim->sched.tr, sim->sched.tc,
	    block_floats(sim), bytes, err, errlen);
}

int
sim_checkpoint_every(const struct sim *sim)
{
	return sim->ck.every;
}

long
sim_steps(const struct sim *sim)
{
	return sim->sched.nsteps;
}

const struct schedule *
sim_schedule(const struct sim *sim)
{
	return &sim->sched;
}

const struct problem *
sim_problem(const struct sim *sim)
{
	return sim->p;
}

const struct online_rule *
sim_rule(const struct sim *sim)
{
	return &sim->rule;
}

const struct traffic_table *
sim_traffic(const struct sim *sim)
{
	return &sim->traffic;
}

const struct sim_view *
sim_view(const struct sim *sim)
{
	return &sim->view;
}

/* Applies tile (i, n) to work: row block i goes from n to n + 1 tiles. */
static void
work_apply(struct sim *sim, const struct schedule_tile *t)
{
	float *m = sim->work, *l = m + sim->br, *acc = l + sim->br;

	tile_apply(sim, t, m, l, acc);
	sim->work_n++;
	ckstore_save(&sim->ck, sim->work_i, sim->work_n, sim->work,
	    block_floats(sim));
}

int
sim_seek(struct sim *sim, long k, int phase)
{
	struct schedule_tile t, replay;
	const float *from;
	int i, n, j0, j1;

	if (k < 0 || k >= sim->sched.nsteps)
		return -1;
	schedule_tile(&sim->sched, k, &t);
	i = t.i;

	/* Start from the nearest state at or before tile j of its key range
	 * (which starts at j0; the whole row block without splits): the
	 * previous seek's, a checkpoint, or the empty state.  A checkpoint
	 * after n tiles holds the state of the range of tile n - 1, so one
	 * at n > j0 belongs to this range. */
	schedule_split_range(&sim->sched, i, t.split, &j0, &j1);
	if (sim->work_i != i || sim->work_s != t.split || sim->work_n > t.j) {
		sim->work_i = i;
		sim->work_s = t.split;
		sim->work_n = j0;
		block_init(sim, sim->work);
	}
	n = ckstore_find(&sim->ck, i, t.j, sim->work_n, &from);
	if (n > 0) {
		memcpy(sim->work, from, block_floats(sim) * sizeof(float));
		sim->work_n = n;
	}
	for (n = sim->work_n; n < t.j; n++) {
		schedule_tile(&sim->sched, schedule_step_of(&sim->sched, i, n), &replay);
		work_apply(sim, &replay);
	}
	/* The target tile last, so the view's arrays hold its numbers. */
	work_apply(sim, &t);
	view_set(sim, &t, phase);
	return 0;
}

int
sim_block_state(struct sim *sim, int i, int ntiles, float *m, float *l,
    float *acc)
{
	size_t nb = block_floats(sim) * sizeof(float);
	struct schedule_tile t;
	const float *from;
	float *sm, *sl, *sacc;
	int rows, n, r0, r1, split = 0, j0 = 0, j1;

	if (i < 0 || i >= sim->sched.tr || ntiles < 0 ||
	    ntiles > sim->sched.jend[i])
		return -1;
	/* Before the row block's first visible tile (a window's left edge
	 * skips tiles jbegin of them) the state is empty. */
	if (ntiles < sim->sched.jbegin[i])
		ntiles = sim->sched.jbegin[i];
	j0 = sim->sched.jbegin[i];
	/* With splits, the state of the range of tile ntiles - 1, which
	 * started empty at its first tile j0. */
	if (ntiles > j0) {
		split = schedule_split_of(&sim->sched, i, ntiles - 1);
		schedule_split_range(&sim->sched, i, split, &j0, &j1);
	}
	if (sim->side == NULL && (sim->side = malloc(nb)) == NULL)
		return -1;
	sm = sim->side;
	sl = sm + sim->br;
	sacc = sl + sim->br;
	/* Start from the nearest state at or before ntiles tiles: the last
	 * call's, the seek's, a checkpoint, or the empty state. */
	if (sim->side_i != i || sim->side_n > ntiles || sim->side_n < j0) {
		sim->side_i = i;
		sim->side_n = j0;
		block_init(sim, sim->side);
	}
	if (sim->work_i == i && sim->work_s == split && sim->work_n <= ntiles &&
	    sim->work_n > sim->side_n) {
		memcpy(sim->side, sim->work, nb);
		sim->side_n = sim->work_n;
	}
	n = ckstore_find(&sim->ck, i, ntiles, sim->side_n, &from);
	if (n > 0) {
		memcpy(sim->side, from, nb);
		sim->side_n = n;
	}
	if (sim->side_n < ntiles) {
		/* tile_apply writes the step's numbers: into side arrays. */
		if (side_swap(sim) != 0)
			return -1;
		for (; sim->side_n < ntiles; sim->side_n++) {
			schedule_tile(&sim->sched, schedule_step_of(&sim->sched, i,
			    sim->side_n), &t);
			tile_apply(sim, &t, sm, sl, sacc);
			ckstore_save(&sim->ck, i, sim->side_n + 1, sim->side,
			    block_floats(sim));
		}
		side_swap(sim);
	}
	schedule_rows(&sim->sched, i, &r0, &r1);
	rows = r1 - r0;
	if (m != NULL)
		memcpy(m, sm, (size_t)rows * sizeof *m);
	if (l != NULL)
		memcpy(l, sl, (size_t)rows * sizeof *l);
	if (acc != NULL)
		memcpy(acc, sacc, (size_t)rows * (size_t)sim->dv * sizeof *acc);
	return 0;
}

int
sim_move_phase(struct sim *sim, int delta)
{
	const struct sim_view *v = &sim->view;
	int phase = (int)v->phase + delta;

	if (phase < 0)
		return v->step == 0 ? -1 : sim_seek(sim, v->step - 1, SIM_PHASE_LAST);
	if (phase >= v->nphases)
		return v->step + 1 >= sim->sched.nsteps ? -1 :
		    sim_seek(sim, v->step + 1, SIM_PHASE_LOAD);
	sim->view.phase = (enum sim_phase)phase;
	traffic_at(&sim->traffic, v->step, phase_stage[phase], &sim->view.traffic);
	return 0;
}

/* A new key range of tile t's rows starts from the empty state. */
static void
state_clear(struct sim *sim, const struct schedule_tile *t, float *m, float *l,
    float *acc)
{
	int r;

	for (r = t->r0; r < t->r1; r++)
		m[r] = -INFINITY;
	memset(l + t->r0, 0, (size_t)(t->r1 - t->r0) * sizeof *l);
	memset(acc + (size_t)t->r0 * sim->dv, 0,
	    (size_t)(t->r1 - t->r0) * sim->dv * sizeof *acc);
}

/* Writes the finalized rows of tile t into O and lse, each at its row
 * of the head-after-head layout. */
static void
run_output(struct sim *sim, const struct schedule_tile *t, float *o, float *lse)
{
	size_t dv = (size_t)sim->dv;
	int r, out;

	for (r = 0; r < t->r1 - t->r0; r++) {
		out = schedule_row_out(&sim->sched, t->r0 + r);
		if (o != NULL)
			memcpy(o + (size_t)out * dv, sim->o + (size_t)r * dv,
			    dv * sizeof *o);
		if (lse != NULL)
			lse[out] = sim->lse[r];
	}
}

int
sim_run(struct sim *sim, sim_step_fn fn, void *ctx, float *o, float *lse)
{
	const struct schedule *sc = &sim->sched;
	struct schedule_tile t;
	float *m, *l, *acc;
	size_t dv = (size_t)sim->dv, rows = (size_t)sc->rows;
	long k;
	int r, rc = 0, split = sc->splits > 1;

	/* With splits the outputs are the combine's: o and lse stay as
	 * they are, and the partials fill the store instead. */
	if (split) {
		o = lse = NULL;
		partials_clear(&sim->partials);
	}
	/* A row's accumulator lives in its row of O until the row block's
	 * last tile replaces it with the output: one (rows, dv) array, not
	 * two (when rows are in O's order). */
	m = malloc(rows * sizeof *m);
	l = calloc(rows, sizeof *l);
	acc = o != NULL && !sc->pack ? o : malloc(rows * dv * sizeof *acc);
	if (m == NULL || l == NULL || acc == NULL) {
		rc = -1;
		goto done;
	}
	for (r = 0; r < (int)rows; r++)
		m[r] = -INFINITY;
	/* Rows no tile reaches (a causal mask with Tq > Tk) output 0. */
	memset(acc, 0, rows * dv * sizeof *acc);
	if (o != NULL && acc != o)
		memset(o, 0, rows * dv * sizeof *o);
	if (lse != NULL)
		for (r = 0; r < (int)rows; r++)
			lse[r] = -INFINITY;

	for (k = 0; k < sc->nsteps; k++) {
		schedule_tile(sc, k, &t);
		if (split && t.first_in_split && t.split > 0)
			state_clear(sim, &t, m, l, acc);
		tile_apply(sim, &t, m + t.r0, l + t.r0, acc + (size_t)t.r0 * dv);
		if (t.last_in_split) {
			if (split)
				partials_keep(sim, &t, m + t.r0, l + t.r0,
				    acc + (size_t)t.r0 * dv);
			else
				run_output(sim, &t, o, lse);
		}
		if (fn != NULL) {
			view_set(sim, &t, SIM_PHASE_LAST);
			rc = fn(&sim->view, ctx);
			if (rc != 0)
				break;
		}
	}
	if (fn == NULL && sc->nsteps > 0)
		view_set(sim, &t, SIM_PHASE_LAST);
done:
	free(m);
	free(l);
	if (acc != o)
		free(acc);
	return rc;
}
