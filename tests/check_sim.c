/*
 * check_sim.c - the tiled engine against the double reference, its bug
 * modes, its edge cases, and seeking.
 */
#include "config.h"

#include "testutil.h"
#include "model/reference.h"
#include "model/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_seed_example)
{
	static const float s[4] = { 1, 2, 1001, 1002 }, v[4] = { 2, -1, 4, 8 };
	struct tiling t = { 1, 2, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	double want = (4.0 * exp(-1.0) + 8.0) / (exp(-1.0) + 1.0);
	struct problem p;
	float *o, *lse;
	int conv;

	tu_scores_problem(s, 1, 4, v, 1, &p);
	for (conv = 0; conv < 2; conv++) {
		rule.convention = (enum online_convention)conv;
		tu_run(&p, &t, &rule, &o, &lse);
		ck_assert_double_eq_tol(o[0], want, 1e-5 * want);
		ck_assert_double_eq_tol(lse[0], 1002.0 + log(1.0 + exp(-1.0)), 1e-3);
		free(o);
		free(lse);
	}
	problem_free(&p);
}
END_TEST

/*
 * 240 random problems of every shape, fp32: O within relative error
 * 1e-5, and lse within the float32 bound tu_lse_check derives (a
 * finalize that took a stale max, or lost a rescale of l, moves lse far
 * beyond it).  The bound must not be vacuous: the worst row comes within
 * a factor 1000 of it.
 */
START_TEST(test_random_fp32)
{
	struct inputs_rng rng;
	struct tu_case c;
	float *o, *lse;
	double err, ratio, worst = 0.0;
	char msg[256];
	int n;

	inputs_rng_seed(&rng, 2026);
	for (n = 0; n < 240; n++) {
		tu_random_case(&rng, 70, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    DTYPE_FP32, &c);
		tu_run(&c.p, &c.t, &c.rule, &o, &lse);
		err = tu_rel_error(&c.p, o);
		ck_assert_msg(err < 1e-5, "case %d (%s): relative error %g", n,
		    c.what, err);
		ck_assert_msg(tu_lse_check(&c.p, lse, &ratio, msg, sizeof msg) == 0,
		    "case %d (%s): %s", n, c.what, msg);
		worst = fmax(worst, ratio);
		free(o);
		free(lse);
		tu_case_free(&c);
	}
	ck_assert_msg(worst > 1e-3, "lse's worst error only %g of its bound",
	    worst);
}
END_TEST

/*
 * fp16 and bf16 round P before P V: with |P| <= 1 the output moves by at
 * most about unit roundoff (2^-11, 2^-8) times max |V|.  The bounds below
 * are 4 times that; and the rounding must show (the error is not fp32's).
 * lse, from the float32 row sums, stays within float32's bound.
 */
START_TEST(test_random_narrow)
{
	struct inputs_rng rng;
	struct tu_case c;
	float *o, *lse;
	double err, worst[2] = { 0, 0 };
	const double bound[2] = { 4 * 0x1p-11, 4 * 0x1p-8 };
	char msg[256];
	int n, k;

	inputs_rng_seed(&rng, 7);
	for (k = 0; k < 2; k++) {
		for (n = 0; n < 60; n++) {
			tu_random_case(&rng, 64, TU_CAUSAL,
			    k == 0 ? DTYPE_FP16 : DTYPE_BF16, &c);
			tu_run(&c.p, &c.t, &c.rule, &o, &lse);
			err = tu_rel_error(&c.p, o);
			ck_assert_msg(err < bound[k], "case %d (%s): relative error "
			    "%g over %g", n, c.what, err, bound[k]);
			/* l sums P in float32, before P is rounded for P V:
			 * lse keeps float32's bound in every dtype. */
			ck_assert_msg(tu_lse_check(&c.p, lse, NULL, msg,
			    sizeof msg) == 0, "case %d (%s): %s", n, c.what, msg);
			worst[k] = err > worst[k] ? err : worst[k];
			free(o);
			free(lse);
			tu_case_free(&c);
		}
	}
	ck_assert_msg(worst[0] > 1e-5, "fp16 rounding left no trace (%g)", worst[0]);
	ck_assert_msg(worst[1] > worst[0], "bf16 (%g) not coarser than fp16 (%g)",
	    worst[1], worst[0]);
}
END_TEST

/* A ramp makes every tile raise the max: each bug must break the output. */
START_TEST(test_bugs_break_rising_max)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 8, 8, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	float *o, *lse;
	char err[256];
	double e;
	int b;

	problem_spec_init(&spec);
	spec.tq = spec.tk = 48;
	spec.d = 16;
	spec.input = INPUTS_RAMP;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	for (b = 0; b < ONLINE_BUGS; b++) {
		rule.bug = (enum online_bug)b;
		rule.convention = b == BUG_FORGET_OLD_DENOMINATOR ?
		    CONV_NORMALIZED : CONV_UNNORMALIZED;
		tu_run(&p, &t, &rule, &o, &lse);
		e = tu_rel_error(&p, o);
		if (b == BUG_NONE)
			ck_assert_msg(e < 1e-5, "no bug: error %g", e);
		else
			ck_assert_msg(e > 1e-2, "bug %s hid: error %g",
			    online_bug_name(rule.bug), e);
		free(o);
		free(lse);
	}
	problem_free(&p);
}
END_TEST

/*
 * When the first tile already holds every row's max, later tiles have
 * alpha = 1 and the three rescale bugs change nothing: the bug hides.
 * forget-old-denominator is not about rescaling and still shows.
 */
START_TEST(test_bugs_hide_when_max_never_rises)
{
	enum { TQ = 6, TK = 12, DV = 3 };
	float s[TQ * TK], v[TK * DV];
	struct problem p;
	struct tiling t = { 2, 4, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	float *o, *lse;
	double e;
	int r, c, b;

	for (r = 0; r < TQ; r++)
		for (c = 0; c < TK; c++)
			s[r * TK + c] = (c == r % 4 ? 3.0f : 0.0f) - 0.1f * (float)c;
	for (c = 0; c < TK * DV; c++)
		v[c] = (float)((c * 7) % 5) - 2.0f;
	tu_scores_problem(s, TQ, TK, v, DV, &p);
	for (b = 1; b < ONLINE_BUGS; b++) {
		rule.bug = (enum online_bug)b;
		rule.convention = b == BUG_FORGET_OLD_DENOMINATOR ?
		    CONV_NORMALIZED : CONV_UNNORMALIZED;
		tu_run(&p, &t, &rule, &o, &lse);
		e = tu_rel_error(&p, o);
		if (b == BUG_FORGET_OLD_DENOMINATOR)
			ck_assert_msg(e > 1e-2, "forget-old-denominator hid: %g", e);
		else
			ck_assert_msg(e < 1e-6, "bug %s showed (%g) though the max "
			    "never rose", online_bug_name(rule.bug), e);
		free(o);
		free(lse);
	}
	problem_free(&p);
}
END_TEST

static int
no_nan_step(const struct sim_view *v, void *ctx)
{
	int r, c;

	(void)ctx;
	for (r = 0; r < v->rows; r++) {
		ck_assert(!isnan(v->m_new[r]) && !isnan(v->alpha[r]));
		ck_assert(!isnan(v->l_new[r]) && !isnan(v->l_old[r]));
		for (c = 0; c < v->cols; c++)
			ck_assert(!isnan(v->s[r * v->cols + c]) &&
			    !isnan(v->p[r * v->cols + c]));
		for (c = 0; c < v->dv; c++)
			ck_assert(!isnan(v->acc_new[r * v->dv + c]));
	}
	return 0;
}

/* Causal with Tq > Tk: the first Tq - Tk rows see no key at all. */
START_TEST(test_fully_masked_rows)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 3, 2, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct sim *sim;
	float o[20 * 4], lse[20];
	char err[256];
	int r, x, order, conv;

	problem_spec_init(&spec);
	spec.tq = 20;
	spec.tk = 7;
	spec.causal = 1;
	spec.input = INPUTS_NORMAL;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	for (order = 0; order < 2; order++) {
		for (conv = 0; conv < 2; conv++) {
			t.order = (enum schedule_order)order;
			rule.convention = (enum online_convention)conv;
			sim = sim_new(&p, &t, &rule, err, sizeof err);
			ck_assert(sim != NULL);
			ck_assert_int_eq(sim_run(sim, no_nan_step, NULL, o, lse), 0);
			for (r = 0; r < 20; r++) {
				if (r < 13) {
					ck_assert(isinf(lse[r]) && lse[r] < 0);
					for (x = 0; x < 4; x++)
						ck_assert_float_eq(o[r * 4 + x], 0.0f);
				} else
					ck_assert(isfinite(lse[r]));
			}
			ck_assert(tu_rel_error(&p, o) < 1e-5);
			sim_free(sim);
		}
	}
	problem_free(&p);
}
END_TEST

/* A scores problem whose row 1 is all -inf, inside a row block. */
START_TEST(test_masked_row_in_scores)
{
	float s[3 * 4] = { 1, 2, 3, 4, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
	    0, -INFINITY, 5, -INFINITY };
	float v[4 * 2] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct problem p;
	struct tiling t = { 3, 2, ORDER_FA1 };
	struct online_rule rule = { CONV_NORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct sim *sim;
	float o[6], lse[3];
	char err[256];

	tu_scores_problem(s, 3, 4, v, 2, &p);
	sim = sim_new(&p, &t, &rule, err, sizeof err);
	ck_assert(sim != NULL);
	ck_assert_int_eq(sim_run(sim, no_nan_step, NULL, o, lse), 0);
	ck_assert_float_eq(o[2], 0.0f);
	ck_assert_float_eq(o[3], 0.0f);
	ck_assert(isinf(lse[1]) && lse[1] < 0);
	ck_assert(tu_rel_error(&p, o) < 1e-6);
	sim_free(sim);
	problem_free(&p);
}
END_TEST

/* One step's numbers, copied out of a view. */
struct record {
	struct schedule_tile tile;
	float *buf;
	size_t n;
};

struct recording {
	struct record *steps;
	long n;
};

static size_t
view_floats(const struct sim_view *v)
{
	return (size_t)v->rows * (v->cols * 2 + 7 + v->dv * 2);
}

static void
view_copy(const struct sim_view *v, float *b)
{
	size_t rc = (size_t)v->rows * v->cols, rd = (size_t)v->rows * v->dv;

	memcpy(b, v->s, rc * 4), b += rc;
	memcpy(b, v->p, rc * 4), b += rc;
	memcpy(b, v->m_old, v->rows * 4), b += v->rows;
	memcpy(b, v->m_new, v->rows * 4), b += v->rows;
	memcpy(b, v->alpha, v->rows * 4), b += v->rows;
	memcpy(b, v->l_old, v->rows * 4), b += v->rows;
	memcpy(b, v->l_new, v->rows * 4), b += v->rows;
	memcpy(b, v->rowmax, v->rows * 4), b += v->rows;
	memcpy(b, v->rowsum, v->rows * 4), b += v->rows;
	memcpy(b, v->acc_old, rd * 4), b += rd;
	memcpy(b, v->acc_new, rd * 4);
}

static int
record_step(const struct sim_view *v, void *ctx)
{
	struct recording *rec = ctx;
	struct record *r = &rec->steps[v->step];

	ck_assert_int_eq(v->step, rec->n);
	r->tile = v->tile;
	r->n = view_floats(v);
	r->buf = malloc(r->n * sizeof(float));
	ck_assert(r->buf != NULL);
	view_copy(v, r->buf);
	rec->n++;
	return 0;
}

/* Seeks to random steps and phases, from random places, and checks the
 * view is bit for bit what stepping from the start recorded. */
static void
check_seeks(struct tu_case *c, struct inputs_rng *rng, int seeks,
    uint64_t budget)
{
	struct recording rec;
	struct sim *sim;
	const struct sim_view *v;
	float *buf;
	char err[256];
	long k, n, i;
	int phase;

	sim = sim_new(&c->p, &c->t, &c->rule, err, sizeof err);
	ck_assert_msg(sim != NULL, "%s", err);
	ck_assert(sim_set_checkpoint_budget(sim, budget, err, sizeof err) == 0);
	n = sim_steps(sim);
	rec.steps = calloc((size_t)n, sizeof *rec.steps);
	rec.n = 0;
	ck_assert(sim_run(sim, record_step, &rec, NULL, NULL) == 0);
	ck_assert_int_eq(rec.n, n);

	for (i = 0; i < seeks; i++) {
		/* Mostly random jumps; sometimes a step or a phase away. */
		k = (long)(inputs_rng_next(rng) % (uint64_t)n);
		phase = (int)(inputs_rng_next(rng) % SIM_PHASES);
		if (i % 5 == 4 && sim_move_phase(sim, (i % 2) ? 1 : -1) == 0) {
			v = sim_view(sim);
			k = v->step;
			phase = (int)v->phase;
		} else
			ck_assert_int_eq(sim_seek(sim, k, phase), 0);
		v = sim_view(sim);
		ck_assert_int_eq(v->step, k);
		if (phase < v->nphases)
			ck_assert_int_eq((int)v->phase, phase);
		else
			ck_assert_int_eq((int)v->phase, v->nphases - 1);
		ck_assert_int_eq(v->tile.i, rec.steps[k].tile.i);
		ck_assert_int_eq(v->tile.j, rec.steps[k].tile.j);
		ck_assert_uint_eq(view_floats(v), rec.steps[k].n);
		buf = malloc(rec.steps[k].n * sizeof *buf);
		view_copy(v, buf);
		ck_assert_msg(memcmp(buf, rec.steps[k].buf, rec.steps[k].n * 4) == 0,
		    "%s: seek to step %ld differs from stepping", c->what, k);
		free(buf);
	}
	ck_assert_int_eq(sim_seek(sim, n, 0), -1);
	ck_assert_int_eq(sim_seek(sim, -1, 0), -1);
	for (k = 0; k < n; k++)
		free(rec.steps[k].buf);
	free(rec.steps);
	sim_free(sim);
}

START_TEST(test_seek_exact)
{
	struct inputs_rng rng;
	struct tu_case c;
	int n;

	inputs_rng_seed(&rng, 99);
	for (n = 0; n < 60; n++) {
		tu_random_case(&rng, 40, TU_SCORES | TU_CAUSAL, DTYPE_FP32, &c);
		check_seeks(&c, &rng, 60, SIM_CHECKPOINT_BUDGET);
		tu_case_free(&c);
	}
}
END_TEST

/* The same with checkpoints every few tiles (a tiny budget). */
START_TEST(test_seek_sparse_checkpoints)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct sim *sim;
	char err[256];
	int n;

	inputs_rng_seed(&rng, 5);
	for (n = 0; n < 20; n++) {
		tu_random_case(&rng, 60, TU_CAUSAL, DTYPE_FP16, &c);
		c.t.br = 3;
		c.t.bc = 2;
		sim = sim_new(&c.p, &c.t, &c.rule, err, sizeof err);
		ck_assert(sim != NULL);
		ck_assert_int_eq(sim_checkpoint_every(sim), 1);
		ck_assert(sim_set_checkpoint_budget(sim, 4096, err, sizeof err) == 0);
		if ((long)c.p.tq * ((c.p.tk + 1) / 2) * (c.p.dv + 2) * 4 > 4096)
			ck_assert_int_gt(sim_checkpoint_every(sim), 1);
		sim_free(sim);
		check_seeks(&c, &rng, 80, 4096);
		tu_case_free(&c);
	}
}
END_TEST

/*
 * sim_block_state against seeking, for every row block and tile count,
 * from a random position with dense or sparse checkpoints: bit for bit
 * the state seeking shows, and the view (position, numbers, counters)
 * as it was before.
 */
START_TEST(test_block_state)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct sim *sim, *probe;
	const struct sim_view *v, *pv;
	struct traffic before_traffic;
	float *before, *after, *m, *l, *acc;
	char err[256];
	long k, step;
	int n, i, nt, phase, rows, r;

	inputs_rng_seed(&rng, 11);
	for (n = 0; n < 40; n++) {
		tu_random_case(&rng, 40, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    n % 2 ? DTYPE_FP16 : DTYPE_FP32, &c);
		sim = sim_new(&c.p, &c.t, &c.rule, err, sizeof err);
		probe = sim_new(&c.p, &c.t, &c.rule, err, sizeof err);
		ck_assert(sim != NULL && probe != NULL);
		if (n % 3 == 0)
			ck_assert(sim_set_checkpoint_budget(sim, 600, err,
			    sizeof err) == 0);
		v = sim_view(sim);
		pv = sim_view(probe);
		k = (long)(inputs_rng_next(&rng) % (uint64_t)sim_steps(sim));
		phase = (int)(inputs_rng_next(&rng) % SIM_PHASES);
		ck_assert_int_eq(sim_seek(sim, k, phase), 0);
		step = v->step;
		phase = (int)v->phase;
		before_traffic = v->traffic;
		before = malloc(view_floats(v) * sizeof *before);
		after = malloc(view_floats(v) * sizeof *after);
		m = malloc((size_t)c.t.br * sizeof *m);
		l = malloc((size_t)c.t.br * sizeof *l);
		acc = malloc((size_t)c.t.br * c.p.dv * sizeof *acc);
		ck_assert(before && after && m && l && acc);
		view_copy(v, before);
		for (i = 0; i < sim_schedule(sim)->tr; i++) {
			rows = i * c.t.br + c.t.br <= c.p.tq ? c.t.br :
			    c.p.tq - i * c.t.br;
			/* Backwards and forwards, so both the cursor and the
			 * checkpoints are what a call starts from. */
			for (nt = sim_schedule(sim)->jend[i]; nt >= 0; nt -= 1 + (nt % 2)) {
				ck_assert_int_eq(sim_block_state(sim, i, nt, m, l, acc), 0);
				if (nt == 0) {
					for (r = 0; r < rows; r++)
						ck_assert(isinf(m[r]) && m[r] < 0 && l[r] == 0);
					continue;
				}
				sim_seek(probe, schedule_step_of(sim_schedule(sim), i,
				    nt - 1), SIM_PHASE_LAST);
				ck_assert_int_eq(pv->rows, rows);
				ck_assert_msg(memcmp(m, pv->m_new, rows * 4) == 0 &&
				    memcmp(l, pv->l_new, rows * 4) == 0 &&
				    memcmp(acc, pv->acc_new, (size_t)rows * c.p.dv * 4) == 0,
				    "%s: block %d after %d tiles differs from seeking",
				    c.what, i, nt);
			}
		}
		ck_assert_int_eq(sim_block_state(sim, -1, 0, m, l, acc), -1);
		ck_assert_int_eq(sim_block_state(sim, sim_schedule(sim)->tr, 0, m,
		    l, acc), -1);
		ck_assert_int_eq(sim_block_state(sim, 0, sim_schedule(sim)->jend[0] +
		    1, m, l, acc), -1);
		/* The view is as it was. */
		ck_assert_int_eq(v->step, step);
		ck_assert_int_eq((int)v->phase, phase);
		view_copy(v, after);
		ck_assert_msg(memcmp(before, after, view_floats(v) * 4) == 0,
		    "%s: sim_block_state changed the view", c.what);
		ck_assert(memcmp(&before_traffic, &v->traffic, sizeof v->traffic) == 0);
		free(before);
		free(after);
		free(m);
		free(l);
		free(acc);
		sim_free(sim);
		sim_free(probe);
		tu_case_free(&c);
	}
}
END_TEST

/*
 * The counters count what has been done at the current phase, by the
 * rules in traffic.h written out again here: walking every phase of
 * every step, nothing is multiplied at LOAD, Q K^T's FLOPs arrive at
 * SCORES, P V's at UPDATE, O and lse are written at FINALIZE; at each
 * step's last phase the counts equal the sum of whole steps (the trace's
 * figures), and at the end the table's total.
 */
START_TEST(test_counters_per_phase)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct sim *sim;
	const struct sim_view *v;
	const struct traffic *tot;
	struct traffic prev, whole, one;
	struct schedule_tile t;
	uint64_t R, C, d, dv, e;
	char err[256];
	int n;

	inputs_rng_seed(&rng, 12);
	for (n = 0; n < 60; n++) {
		tu_random_case(&rng, 40, TU_SCORES | TU_CAUSAL, n % 2 ? DTYPE_BF16 :
		    DTYPE_FP32, &c);
		if (n % 4 == 0) {
			/* fa1 under the mask with short row blocks: several of
			 * them end at one key block, a run inside it. */
			c.p.causal = 1;
			c.t.order = ORDER_FA1;
			c.t.br = 1 + n % 3;
			c.t.bc = 3 + n % 7;
		}
		sim = sim_new(&c.p, &c.t, &c.rule, err, sizeof err);
		ck_assert(sim != NULL);
		v = sim_view(sim);
		memset(&whole, 0, sizeof whole);
		d = c.p.scores_mode ? 0 : (uint64_t)c.p.d;
		dv = (uint64_t)c.p.dv;
		e = (uint64_t)dtype_size(c.p.dtype);
		ck_assert_int_eq(sim_seek(sim, 0, SIM_PHASE_LOAD), 0);
		prev = whole;
		for (;;) {
			t = v->tile;
			R = (uint64_t)v->rows;
			C = (uint64_t)v->cols;
			switch (v->phase) {
			case SIM_PHASE_LOAD:
				ck_assert_uint_eq(v->traffic.flops, whole.flops);
				ck_assert_uint_eq(v->traffic.exps, whole.exps);
				ck_assert_uint_eq(v->traffic.hbm_write, whole.hbm_write);
				ck_assert_uint_gt(v->traffic.hbm_read, whole.hbm_read);
				break;
			case SIM_PHASE_SCORES:
				ck_assert_uint_eq(v->traffic.flops - prev.flops,
				    2 * R * C * d);
				break;
			case SIM_PHASE_RESCALE:
				ck_assert_uint_eq(v->traffic.rescale_exps -
				    prev.rescale_exps, R);
				break;
			case SIM_PHASE_EXP:
				ck_assert_uint_eq(v->traffic.exps - prev.exps, R * C);
				break;
			case SIM_PHASE_UPDATE:
				ck_assert_uint_eq(v->traffic.flops - prev.flops,
				    2 * R * C * dv);
				break;
			case SIM_PHASE_FINALIZE:
				ck_assert_uint_eq(v->traffic.hbm_write - prev.hbm_write,
				    R * dv * e + 4 * R);
				break;
			default:
				break;
			}
			if (v->phase != SIM_PHASE_LOAD)
				ck_assert_uint_eq(v->traffic.hbm_read, prev.hbm_read);
			if ((int)v->phase == v->nphases - 1) {
				traffic_step(sim_traffic(sim), &t, &one);
				whole.hbm_read += one.hbm_read;
				whole.hbm_write += one.hbm_write;
				whole.flops += one.flops;
				whole.exps += one.exps;
				ck_assert_uint_eq(v->traffic.hbm_read, whole.hbm_read);
				ck_assert_uint_eq(v->traffic.hbm_write, whole.hbm_write);
				ck_assert_uint_eq(v->traffic.flops, whole.flops);
				ck_assert_uint_eq(v->traffic.exps, whole.exps);
			}
			prev = v->traffic;
			if (sim_move_phase(sim, 1) != 0)
				break;
		}
		tot = &sim_traffic(sim)->total;
		ck_assert_msg(whole.hbm_read == tot->hbm_read &&
		    whole.hbm_write == tot->hbm_write && whole.flops == tot->flops &&
		    whole.exps == tot->exps, "%s: total differs from the steps' sum",
		    c.what);
		sim_free(sim);
		tu_case_free(&c);
	}
}
END_TEST

START_TEST(test_phase_moves)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 4, 4, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct sim *sim;
	const struct sim_view *v;
	char err[256];
	long moves = 0;

	problem_spec_init(&spec);
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	sim = sim_new(&p, &t, &rule, err, sizeof err);
	v = sim_view(sim);
	ck_assert_int_eq(v->step, 0);
	ck_assert_int_eq(v->phase, SIM_PHASE_LOAD);
	ck_assert_int_eq(sim_move_phase(sim, -1), -1);
	while (sim_move_phase(sim, 1) == 0)
		moves++;
	/* 16 steps of 6 phases, 4 of them with a finalize, minus the start. */
	ck_assert_int_eq(moves, 16 * 6 + 4 - 1);
	ck_assert_int_eq(v->step, 15);
	ck_assert_int_eq(v->phase, SIM_PHASE_FINALIZE);
	ck_assert_int_eq(sim_seek(sim, 2, SIM_PHASE_FINALIZE), 0);
	ck_assert_int_eq(v->phase, SIM_PHASE_UPDATE);	/* step 2 has none */
	ck_assert_int_eq(sim_move_phase(sim, 1), 0);
	ck_assert_int_eq(v->step, 3);
	ck_assert_int_eq(v->phase, SIM_PHASE_LOAD);
	sim_free(sim);
	problem_free(&p);
}
END_TEST

START_TEST(test_rejects_bad_rule)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 4, 4, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_FORGET_OLD_DENOMINATOR, MASK_BUG_NONE };
	char err[256];

	problem_spec_init(&spec);
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	ck_assert(sim_new(&p, &t, &rule, err, sizeof err) == NULL);
	ck_assert(strstr(err, "normalized") != NULL);
	t.br = 0;
	rule.bug = BUG_NONE;
	ck_assert(sim_new(&p, &t, &rule, err, sizeof err) == NULL);
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_seed_example);
	tcase_add_test(tc, test_random_fp32);
	tcase_add_test(tc, test_random_narrow);
	tcase_add_test(tc, test_bugs_break_rising_max);
	tcase_add_test(tc, test_bugs_hide_when_max_never_rises);
	tcase_add_test(tc, test_fully_masked_rows);
	tcase_add_test(tc, test_masked_row_in_scores);
	tcase_add_test(tc, test_seek_exact);
	tcase_add_test(tc, test_seek_sparse_checkpoints);
	tcase_add_test(tc, test_block_state);
	tcase_add_test(tc, test_counters_per_phase);
	tcase_add_test(tc, test_phase_moves);
	tcase_add_test(tc, test_rejects_bad_rule);
	suite_add_tcase(s, tc);
	return s;
}
