/*
 * sim.c - the tiled replay engine (see sim.h for the states and moves).
 *
 * Every tile goes through tile_apply(), which takes a row block's state
 * (m, l, acc for the tile's rows) and updates it in place, leaving the
 * step's numbers in the view's arrays.  sim_run() calls it in step order
 * over the state of all rows; sim_seek() calls it over one row block's
 * state, replayed from a checkpoint.  One function for both is what makes
 * seeking exact.
 */
#include "config.h"

#include "sim.h"
#include "util.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Checkpoints of all row blocks together stay under this many bytes. */
static uint64_t sim_checkpoint_budget = (uint64_t)64 << 20;

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
	 * nothing yet).  ck[i * ck_per_row + n / ck_every - 1] holds row block
	 * i after n tiles, for n a multiple of ck_every, once a replay passed
	 * there (NULL before).
	 */
	float *work;
	int work_i, work_n;
	int ck_every, ck_per_row;
	float **ck;
};

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

/* S = scale Q_i K_j^T (or the given scores), masked entries -inf.  Each
 * entry sums q[x] k[x] over x = 0 .. d-1 in order, then scales. */
SIM_HOT static void
tile_scores(struct sim *sim, const struct schedule_tile *t)
{
	const struct problem *p = sim->p;
	int rows = t->r1 - t->r0, cols = t->c1 - t->c0, r, c, x;

	for (r = 0; r < rows; r++) {
		float *srow = sim->s + (size_t)r * cols;
		int row = t->r0 + r;

		if (p->scores_mode)
			memcpy(srow, p->s + (size_t)row * p->tk + t->c0,
			    (size_t)cols * sizeof *srow);
		else {
			const float *qr = p->q + (size_t)row * p->d;
			memset(srow, 0, (size_t)cols * sizeof *srow);
			/* x outermost keeps each sum in order and lets the
			 * compiler vectorize across the keys. */
			for (x = 0; x < p->d; x++) {
				const float qx = qr[x];
				const float *kx = p->kt + (size_t)x * p->tk + t->c0;
				for (c = 0; c < cols; c++)
					srow[c] += qx * kx[c];
			}
			for (c = 0; c < cols; c++)
				srow[c] *= p->scale;
		}
		for (c = 0; c < cols; c++)
			if (!problem_visible(p, row, t->c0 + c))
				srow[c] = -INFINITY;
	}
}

/* pv = P V_j with P as rounded for the product; each entry sums over
 * the tile's keys in order. */
SIM_HOT static void
tile_pv(struct sim *sim, const struct schedule_tile *t)
{
	const struct problem *p = sim->p;
	int rows = t->r1 - t->r0, cols = t->c1 - t->c0, dv = sim->dv, r, c, x;

	memset(sim->pv, 0, (size_t)rows * dv * sizeof *sim->pv);
	for (r = 0; r < rows; r++) {
		float *pvr = sim->pv + (size_t)r * dv;
		for (c = 0; c < cols; c++) {
			const float pc = sim->pr[(size_t)r * cols + c];
			const float *vc = p->v + (size_t)(t->c0 + c) * dv;
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

	tile_scores(sim, t);
	for (r = 0; r < rows; r++) {
		const float *srow = sim->s + (size_t)r * cols;
		float *prow = sim->pm + (size_t)r * cols;
		float sum = 0.0f;

		sim->rowmax[r] = online_max(-INFINITY, srow, cols);
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
	tile_pv(sim, t);

	for (r = 0; r < rows; r++) {
		float *a = acc + (size_t)r * dv;
		l[r] = online_update(&sim->rule, sim->alpha[r], l[r], sim->rowsum[r],
		    a, sim->pv + (size_t)r * dv, dv, a);
		m[r] = sim->m_new[r];
		if (t->last_in_row)
			online_finalize(sim->rule.convention, m[r], l[r], a, dv,
			    sim->o + (size_t)r * dv, &sim->lse[r]);
	}
	memcpy(sim->l_new, l, (size_t)rows * sizeof *l);
	memcpy(sim->acc_new, acc, accn * sizeof *acc);
}

/* Points the view at step t, phase (clamped to the step's phases). */
static void
view_set(struct sim *sim, const struct schedule_tile *t, int phase)
{
	struct sim_view *v = &sim->view;

	v->step = t->step;
	v->tile = *t;
	v->rows = t->r1 - t->r0;
	v->cols = t->c1 - t->c0;
	v->nphases = t->last_in_row ? SIM_PHASES : SIM_PHASES - 1;
	if (phase < 0 || phase >= v->nphases)
		phase = v->nphases - 1;
	v->phase = (enum sim_phase)phase;
	traffic_upto(&sim->traffic, t->step, &v->traffic);
}

void
sim_free(struct sim *sim)
{
	int n;

	if (sim == NULL)
		return;
	if (sim->ck != NULL) {
		n = sim->sched.tr * sim->ck_per_row;
		while (n-- > 0)
			free(sim->ck[n]);
		free(sim->ck);
	}
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
	traffic_free(&sim->traffic);
	schedule_free(&sim->sched);
	free(sim);
}

struct sim *
sim_new(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, char *err, size_t errlen)
{
	struct sim *sim;
	size_t tile, acc, rows;
	uint64_t all;

	if (!online_rule_valid(rule)) {
		util_error(err, errlen, "bug '%s' belongs to the normalized "
		    "convention (use --convention normalized)",
		    online_bug_name(rule->bug));
		return NULL;
	}
	sim = util_calloc(1, sizeof *sim, "sim", err, errlen);
	if (sim == NULL)
		return NULL;
	sim->p = p;
	sim->rule = *rule;
	sim->dv = p->dv;
	sim->work_i = -1;
	if (schedule_init(&sim->sched, p, t, err, errlen) != 0 ||
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
	    err, errlen)) == NULL)
		goto fail;

	/* Checkpoint every tile when that fits the budget, else sparser. */
	all = (uint64_t)p->tq * (uint64_t)sim->sched.tc * (uint64_t)(sim->dv + 2) * 4;
	all = (all + sim_checkpoint_budget - 1) / sim_checkpoint_budget;
	sim->ck_every = all < 1 ? 1 : all > (uint64_t)sim->sched.tc ?
	    sim->sched.tc + 1 : (int)all;
	sim->ck_per_row = sim->sched.tc / sim->ck_every;
	sim->ck = util_calloc((size_t)sim->sched.tr * (size_t)sim->ck_per_row + 1,
	    sizeof *sim->ck, "checkpoints", err, errlen);
	if (sim->ck == NULL)
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

void
sim_set_checkpoint_budget(uint64_t bytes)
{
	sim_checkpoint_budget = bytes > 0 ? bytes : 1;
}

uint64_t
sim_get_checkpoint_budget(void)
{
	return sim_checkpoint_budget;
}

int
sim_checkpoint_every(const struct sim *sim)
{
	return sim->ck_every;
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

/* The checkpoint slot for row block i after n tiles (n % ck_every == 0,
 * n > 0), or NULL when n is past the last slot. */
static float **
ck_slot(struct sim *sim, int i, int n)
{
	int q = n / sim->ck_every;

	assert(n > 0 && n % sim->ck_every == 0);
	if (q > sim->ck_per_row)
		return NULL;
	return &sim->ck[(size_t)i * sim->ck_per_row + (size_t)(q - 1)];
}

/* Keeps work (row block work_i after work_n tiles) as a checkpoint if
 * work_n is a checkpoint position not yet stored.  Without memory for
 * it, seeking just stays slower. */
static void
ck_save(struct sim *sim)
{
	float **slot;

	if (sim->work_n == 0 || sim->work_n % sim->ck_every != 0)
		return;
	slot = ck_slot(sim, sim->work_i, sim->work_n);
	if (slot == NULL || *slot != NULL)
		return;
	*slot = malloc(block_floats(sim) * sizeof(float));
	if (*slot != NULL)
		memcpy(*slot, sim->work, block_floats(sim) * sizeof(float));
}

/* Applies tile (i, n) to work: row block i goes from n to n + 1 tiles. */
static void
work_apply(struct sim *sim, const struct schedule_tile *t)
{
	float *m = sim->work, *l = m + sim->br, *acc = l + sim->br;

	tile_apply(sim, t, m, l, acc);
	sim->work_n++;
	ck_save(sim);
}

int
sim_seek(struct sim *sim, long k, int phase)
{
	struct schedule_tile t, replay;
	float **slot;
	int i, n, q;

	if (k < 0 || k >= sim->sched.nsteps)
		return -1;
	schedule_tile(&sim->sched, k, &t);
	i = t.i;

	/* Start from the nearest state at or before tile j: the previous
	 * seek's, a checkpoint, or the empty state. */
	if (sim->work_i != i || sim->work_n > t.j) {
		sim->work_i = i;
		sim->work_n = 0;
		block_init(sim, sim->work);
	}
	for (q = t.j / sim->ck_every; q > 0 && q * sim->ck_every > sim->work_n; q--) {
		slot = ck_slot(sim, i, q * sim->ck_every);
		if (slot != NULL && *slot != NULL) {
			memcpy(sim->work, *slot, block_floats(sim) * sizeof(float));
			sim->work_n = q * sim->ck_every;
			break;
		}
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
	return 0;
}

int
sim_run(struct sim *sim, sim_step_fn fn, void *ctx, float *o, float *lse)
{
	const struct problem *p = sim->p;
	struct schedule_tile t;
	float *m, *l, *acc;
	size_t dv = (size_t)sim->dv;
	long k;
	int r, rc = 0;

	/* A row's accumulator lives in its row of O until the row block's
	 * last tile replaces it with the output: one (Tq, dv) array, not two. */
	m = malloc((size_t)p->tq * sizeof *m);
	l = calloc((size_t)p->tq, sizeof *l);
	acc = o != NULL ? o : malloc((size_t)p->tq * dv * sizeof *acc);
	if (m == NULL || l == NULL || acc == NULL) {
		rc = -1;
		goto done;
	}
	for (r = 0; r < p->tq; r++)
		m[r] = -INFINITY;
	/* Rows no tile reaches (a causal mask with Tq > Tk) output 0. */
	memset(acc, 0, (size_t)p->tq * dv * sizeof *acc);
	if (lse != NULL)
		for (r = 0; r < p->tq; r++)
			lse[r] = -INFINITY;

	for (k = 0; k < sim->sched.nsteps; k++) {
		schedule_tile(&sim->sched, k, &t);
		tile_apply(sim, &t, m + t.r0, l + t.r0, acc + (size_t)t.r0 * dv);
		if (t.last_in_row) {
			if (o != NULL)
				memcpy(o + (size_t)t.r0 * dv, sim->o,
				    (size_t)(t.r1 - t.r0) * dv * sizeof *o);
			if (lse != NULL)
				memcpy(lse + t.r0, sim->lse,
				    (size_t)(t.r1 - t.r0) * sizeof *lse);
		}
		if (fn != NULL) {
			view_set(sim, &t, SIM_PHASE_LAST);
			rc = fn(&sim->view, ctx);
			if (rc != 0)
				break;
		}
	}
	if (fn == NULL)
		view_set(sim, &t, SIM_PHASE_LAST);
done:
	free(m);
	free(l);
	if (acc != o)
		free(acc);
	return rc;
}
