/*
 * check_dropout.c - dropout (mask_rule.h's MASK_DROPOUT) through the
 * model: Philox4x32-10 against Random123's published known answers, the
 * keep bits' definition, rate and purity, the forward against the double
 * reference (with windows, the cap, heads, splits), the softmax's
 * denominator left undropped, the estimator's mean, the backward against
 * the double gradients, those against finite differences, and the
 * damage of the mask regenerated with another offset.
 */
#include "config.h"

#include "testutil.h"
#include "model/backward.h"
#include "model/gradref.h"
#include "model/mask.h"
#include "model/philox.h"
#include "model/reference.h"
#include "model/schedule.h"
#include "model/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the generator ---- */

/* Random123's kat_vectors for philox4x32 10 (counter, key, result). */
START_TEST(test_philox_known_answers)
{
	static const uint32_t kat[3][10] = {
		{ 0, 0, 0, 0, 0, 0,
		  0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
		{ 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
		  0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
		{ 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822,
		  0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
	};
	struct philox4 c, r;
	int k, w;

	for (k = 0; k < 3; k++) {
		for (w = 0; w < 4; w++)
			c.v[w] = kat[k][w];
		r = philox4x32_10(c, kat[k][4], kat[k][5]);
		for (w = 0; w < 4; w++)
			ck_assert_msg(r.v[w] == kat[k][6 + w], "vector %d word %d: "
			    "%08x, published %08x", k, w, r.v[w], kat[k][6 + w]);
		/* seven rounds are another function: the count matters */
		r = philox4x32_r(7, c, kat[k][4], kat[k][5]);
		ck_assert(r.v[0] != kat[k][6]);
	}
}
END_TEST

/* The table's row, and the keep bit as its definition says: word c % 4
 * of Philox4x32-10 of (c / 4, r, head, offset) under the seed's halves,
 * kept when >= p 2^32. */
START_TEST(test_keep_definition)
{
	const struct mask_entry_row *row = mask_entry_row(MASK_DROPOUT);
	struct mask_rule m = mask_rule_none();
	struct philox4 c, out;
	const uint64_t seed = 0x123456789abcdefull;
	int r, k;

	ck_assert_str_eq(row->name, "dropout");
	ck_assert_int_eq(row->kind, MASK_DROPS);
	ck_assert(!mask_rule_has(m, MASK_DROPOUT));
	ck_assert(mask_rule_keep(m, 3, 5));
	ck_assert(mask_rule_drop(m, 0, 0.25f) == 0.25f);
	mask_rule_set_dropout(&m, 0.3, seed, 17);
	m.drop_head = 2;
	ck_assert(mask_rule_has(m, MASK_DROPOUT));
	ck_assert_uint_eq(m.drop_threshold, (uint32_t)(0.3 * 4294967296.0));
	for (r = 0; r < 9; r++)
		for (k = 0; k < 13; k++) {
			c.v[0] = (uint32_t)(k / 4);
			c.v[1] = (uint32_t)r;
			c.v[2] = 2;
			c.v[3] = 17;
			out = philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
			ck_assert_int_eq(mask_rule_keep(m, r, k),
			    out.v[k % 4] >= m.drop_threshold);
			ck_assert(mask_rule_drop(m, 1, 0.7f) == 0.7f * m.drop_scale);
			ck_assert(mask_rule_drop(m, 0, 0.7f) == 0.0f);
		}
}
END_TEST

/* Over 4 heads of 128 x 128 entries: the kept fraction within 4 standard
 * deviations of 1 - p; the same call gives the same bit; another offset,
 * head or seed draws an independent mask (agreement p^2 + (1-p)^2). */
START_TEST(test_keep_rate_and_independence)
{
	static const double ps[] = { 0.1, 0.5, 0.9 };
	struct mask_rule m = mask_rule_none(), o;
	int k, h, r, c, v;

	for (k = 0; k < 3; k++) {
		const double p = ps[k], n = 4.0 * 128 * 128;
		double kept = 0, same[3] = { 0, 0, 0 }, agree, sd;

		mask_rule_set_dropout(&m, p, 99, 5);
		for (h = 0; h < 4; h++)
			for (r = 0; r < 128; r++)
				for (c = 0; c < 128; c++) {
					m.drop_head = (uint32_t)h;
					v = mask_rule_keep(m, r, c);
					ck_assert_int_eq(v, mask_rule_keep(m, r, c));
					kept += v;
					same[0] += v == mask_rule_keep_at(m, 6, r, c);
					o = m;
					o.drop_head = (uint32_t)h + 4;
					same[1] += v == mask_rule_keep(o, r, c);
					o = m;
					o.seed_lo ^= 1;
					same[2] += v == mask_rule_keep(o, r, c);
				}
		sd = sqrt(n * p * (1 - p));
		ck_assert_msg(fabs(kept - n * (1 - p)) < 4 * sd, "p %g: kept %g of %g",
		    p, kept, n);
		agree = p * p + (1 - p) * (1 - p);
		for (v = 0; v < 3; v++)
			ck_assert_msg(fabs(same[v] - n * agree) < 4 * sqrt(n * agree *
			    (1 - agree)), "p %g, change %d: %g of %g bits agree", p, v,
			    same[v], n);
	}
}
END_TEST

/* ---- problems ---- */

struct shape {
	int tq, tk, br, bc, left, right;
	double softcap, p;
	enum schedule_order order;
	int heads, kv_heads, splits, pack, scores;
	uint64_t seed;
	unsigned offset;
};

static void
build(const struct shape *sh, uint64_t seed, struct problem *p)
{
	struct problem_spec spec;
	char err[256];
	float *s = NULL, *v = NULL;

	problem_spec_init(&spec);
	spec.tq = sh->tq;
	spec.tk = sh->tk;
	spec.d = 5;
	spec.dv = 3;
	spec.input = INPUTS_NORMAL;
	spec.seed = seed;
	spec.bc = sh->bc;
	spec.heads = sh->heads > 0 ? sh->heads : 1;
	spec.kv_heads = sh->kv_heads > 0 ? sh->kv_heads : spec.heads;
	if (sh->left != -1 || sh->right != -1) {
		spec.window_set = 1;
		spec.window_left = sh->left;
		spec.window_right = sh->right;
	}
	if (sh->softcap > 0) {
		spec.softcap_set = 1;
		spec.softcap = sh->softcap;
	}
	spec.dropout_set = 1;
	spec.dropout = sh->p;
	spec.dropout_seed = sh->seed;
	spec.dropout_offset = sh->offset;
	if (sh->scores)
		tu_spec_scores(&spec, seed, 3.0, &s, &v);
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
	free(s);
	free(v);
}

static void
describe(const struct shape *sh, char *buf, size_t len)
{
	snprintf(buf, len, "Tq=%d Tk=%d Br=%d Bc=%d window (%d, %d) softcap %g "
	    "dropout %g seed %llu offset %u %s H=%d G=%d splits %d%s%s", sh->tq,
	    sh->tk, sh->br, sh->bc, sh->left, sh->right, sh->softcap, sh->p,
	    (unsigned long long)sh->seed, sh->offset,
	    schedule_order_name(sh->order), sh->heads, sh->kv_heads, sh->splits,
	    sh->pack ? " packed" : "", sh->scores ? " scores" : "");
}

static void
random_shape(struct inputs_rng *rng, struct shape *sh)
{
	static const double ps[] = { 0.05, 0.2, 0.5, 0.8 };

	memset(sh, 0, sizeof *sh);
	sh->tq = 1 + (int)(inputs_rng_next(rng) % 40);
	sh->tk = 1 + (int)(inputs_rng_next(rng) % 40);
	sh->br = 1 + (int)(inputs_rng_next(rng) % 9);
	sh->bc = 1 + (int)(inputs_rng_next(rng) % 9);
	sh->left = inputs_rng_next(rng) % 3 == 0 ?
	    (int)(inputs_rng_next(rng) % 12) : -1;
	sh->right = inputs_rng_next(rng) % 3 == 0 ?
	    (int)(inputs_rng_next(rng) % 12) - 1 : -1;
	sh->softcap = inputs_rng_next(rng) % 3 == 0 ? 2.0 : 0.0;
	sh->p = ps[inputs_rng_next(rng) % 4];
	sh->seed = inputs_rng_next(rng);
	sh->offset = (unsigned)(inputs_rng_next(rng) % 5);
	sh->order = inputs_rng_next(rng) % 2 ? ORDER_FA1 : ORDER_FA2;
	sh->kv_heads = 1 + (int)(inputs_rng_next(rng) % 2);
	sh->heads = sh->kv_heads * (1 + (int)(inputs_rng_next(rng) % 2));
	sh->splits = inputs_rng_next(rng) % 3 == 0 ? 2 + (int)(inputs_rng_next(rng)
	    % 3) : 1;
	sh->pack = sh->heads > sh->kv_heads && inputs_rng_next(rng) % 2;
	sh->scores = inputs_rng_next(rng) % 5 == 0;
}

/* The sim (and the combine for splits): O and lse of every head. */
static void
run_forward(const struct problem *p, const struct shape *sh, float *o,
    float *lse)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct tiling t = { sh->br, sh->bc, sh->order };

	tu_run_split(p, &t, sh->splits, sh->pack, &rule, o, lse);
}

/* ---- the forward ---- */

/* 300 random problems with dropout and the other rules, heads, packing,
 * splits: O within 2e-5 of the double reference, lse within 1e-5. */
START_TEST(test_forward_random)
{
	struct inputs_rng rng;
	struct shape sh;
	struct problem p;
	float *o, *lse;
	double e, le;
	char what[256];
	int n;

	inputs_rng_seed(&rng, 3141);
	for (n = 0; n < 300; n++) {
		random_shape(&rng, &sh);
		build(&sh, (uint64_t)n + 1, &p);
		describe(&sh, what, sizeof what);
		o = malloc((size_t)problem_rows(&p) * p.dv * sizeof *o);
		lse = malloc((size_t)problem_rows(&p) * sizeof *lse);
		ck_assert(o != NULL && lse != NULL);
		run_forward(&p, &sh, o, lse);
		e = tu_forward_error(&p, o, lse, &le);
		ck_assert_msg(e <= 2e-5, "%s: O off by %g", what, e);
		ck_assert_msg(le <= 1e-5, "%s: lse off by %g", what, le);
		free(o);
		free(lse);
		problem_free(&p);
	}
}
END_TEST

/*
 * The softmax's denominator is the undropped one: lse with dropout is
 * lse without it, bit for bit, while O moves; dropout skips no tile
 * (the schedule's steps are the same); a dropped entry moves nothing
 * (O is the undropped O with those P zeroed and the rest scaled, which
 * the reference computes its own way).
 */
START_TEST(test_denominator_and_tiles)
{
	struct shape sh = { 24, 30, 4, 6, 7, 2, 0, 0.4, ORDER_FA2, 2, 1, 1, 0, 0,
		5, 0 };
	struct tiling t = { 4, 6, ORDER_FA2 };
	struct problem p, q;
	struct schedule a, b;
	float o1[2 * 24 * 3], l1[48], o2[2 * 24 * 3], l2[48];
	char err[256];
	int e, moved = 0;

	build(&sh, 3, &p);
	run_forward(&p, &sh, o1, l1);
	sh.p = 0.0;
	build(&sh, 3, &q);
	ck_assert(!mask_rule_has(q.mask, MASK_DROPOUT));
	run_forward(&q, &sh, o2, l2);
	for (e = 0; e < 48; e++)
		ck_assert_msg(memcmp(&l1[e], &l2[e], sizeof l1[e]) == 0, "row %d: "
		    "lse %.9g with dropout, %.9g without", e, (double)l1[e],
		    (double)l2[e]);
	for (e = 0; e < 2 * 24 * 3; e++)
		moved += fabsf(o1[e] - o2[e]) > 1e-3f;
	ck_assert_int_gt(moved, 2 * 24 * 3 / 2);
	ck_assert_int_eq(schedule_init(&a, &p, &t, err, sizeof err), 0);
	ck_assert_int_eq(schedule_init(&b, &q, &t, err, sizeof err), 0);
	ck_assert_int_eq(a.nsteps, b.nsteps);
	schedule_free(&a);
	schedule_free(&b);
	problem_free(&p);
	problem_free(&q);
}
END_TEST

/*
 * The 1 / (1 - p) scaling makes dropout's O an unbiased estimate of the
 * undropped O: averaged over 2000 seeds, the double reference's O with
 * p = 0.5 is within 0.03 of the undropped O (max |O| about 1); without
 * the scaling the mean would sit at half of it.
 */
START_TEST(test_unbiased)
{
	struct shape sh = { 4, 16, 4, 4, -1, -1, 0, 0.5, ORDER_FA2, 1, 1, 1, 0, 0,
		0, 0 };
	struct problem p;
	double o[4 * 3], lse[4], plain[4 * 3], mean[4 * 3] = { 0 }, worst = 0;
	char err[256];
	int s, e;

	build(&sh, 8, &p);
	p.mask.dropout = 0.0f;
	ck_assert_int_eq(reference_attention(&p, plain, lse, err, sizeof err), 0);
	p.mask.dropout = 0.5f;
	for (s = 0; s < 2000; s++) {
		p.mask.seed_lo = (uint32_t)s;
		ck_assert_int_eq(reference_attention(&p, o, lse, err, sizeof err), 0);
		for (e = 0; e < 12; e++)
			mean[e] += o[e] / 2000;
	}
	for (e = 0; e < 12; e++)
		worst = fmax(worst, fabs(mean[e] - plain[e]));
	ck_assert_msg(worst < 0.03, "the mean over seeds is %g off the "
	    "undropped O", worst);
	problem_free(&p);
}
END_TEST

/* ---- the gradients ---- */

/* The tiled backward of a one-head problem against gradref; returns the
 * worst of dQ, dK, dV (dS, dV in a scores problem) relative to each's
 * largest sum of |terms| (gradref_magnitudes: what rounding scales with;
 * a gradient that cancels to 0, as dK's with one key, is judged by its
 * terms, not by its rounding noise over 0). */
static double
backward_error(const struct problem *p, const struct shape *sh,
    enum backward_bug bug)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct tiling t = { sh->br, sh->bc, ORDER_FA1 };
	struct backward_input in;
	struct backward_grads g;
	struct backward *b;
	struct problem_spec spec;
	struct sim *sim;
	float *o, *lse, *m, *dout, *got[4];
	double *ref[4], *mag[4], worst, big, all = 0.0;
	size_t n[4], e;
	char err[256];
	int k;

	problem_spec_init(&spec);
	spec.seed = 77;
	ck_assert(problem_grad_output(&spec, p, &dout, err, sizeof err) == 0);
	o = malloc((size_t)p->tq * p->dv * sizeof *o);
	lse = malloc((size_t)p->tq * sizeof *lse);
	m = malloc((size_t)p->tq * sizeof *m);
	ck_assert(o != NULL && lse != NULL && m != NULL);
	sim = sim_new(p, &t, &rule, err, sizeof err);
	ck_assert_msg(sim != NULL, "%s", err);
	ck_assert_int_eq(backward_forward(sim, NULL, o, lse, m), 0);
	in.o = o;
	in.lse = lse;
	in.m = m;
	in.dout = dout;
	b = backward_new(p, &t, &in, bug, err, sizeof err);
	ck_assert_msg(b != NULL, "%s", err);
	n[0] = (size_t)p->tq * (p->d > 0 ? p->d : 1);
	n[1] = (size_t)p->tk * (p->d > 0 ? p->d : 1);
	n[2] = (size_t)p->tk * p->dv;
	n[3] = (size_t)p->tq * p->tk;
	for (k = 0; k < 4; k++) {
		got[k] = calloc(n[k], sizeof *got[k]);
		ref[k] = calloc(n[k], sizeof *ref[k]);
		mag[k] = calloc(n[k], sizeof *mag[k]);
		ck_assert(got[k] != NULL && ref[k] != NULL && mag[k] != NULL);
	}
	g.dq = p->scores_mode ? NULL : got[0];
	g.dk = p->scores_mode ? NULL : got[1];
	g.dv = got[2];
	g.ds = got[3];
	ck_assert_int_eq(backward_run(b, NULL, NULL, &g), 0);
	ck_assert(gradref_gradients(p, dout, ref[0], ref[1], ref[2], ref[3], err,
	    sizeof err) == 0);
	ck_assert(gradref_magnitudes(p, dout, mag[0], mag[1], mag[2], mag[3], err,
	    sizeof err) == 0);
	for (k = p->scores_mode ? 2 : 0; k < 4; k++) {
		worst = 0.0;
		big = 1e-30;
		for (e = 0; e < n[k]; e++) {
			ck_assert(isfinite(got[k][e]));
			worst = fmax(worst, fabs(got[k][e] - ref[k][e]));
			big = fmax(big, mag[k][e]);
		}
		all = fmax(all, worst / big);
	}
	for (k = 0; k < 4; k++) {
		free(got[k]);
		free(ref[k]);
		free(mag[k]);
	}
	backward_free(b);
	sim_free(sim);
	free(o);
	free(lse);
	free(m);
	free(dout);
	return all;
}

/* 150 random one-head problems with dropout (and windows, the cap, a
 * head index other than 0): the tiled backward within 1e-4 of gradref. */
START_TEST(test_backward_random)
{
	struct inputs_rng rng;
	struct shape sh;
	struct problem p, one;
	char what[256];
	double e;
	int n;

	inputs_rng_seed(&rng, 2718);
	for (n = 0; n < 150; n++) {
		random_shape(&rng, &sh);
		sh.splits = 1;
		sh.pack = 0;
		build(&sh, (uint64_t)n + 3, &p);
		describe(&sh, what, sizeof what);
		/* the last head: its own bits (head0 = H - 1) */
		problem_head(&p, p.heads - 1, &one);
		e = backward_error(&one, &sh, BWD_BUG_NONE);
		ck_assert_msg(e <= 1e-4, "%s: gradients off by %g", what, e);
		problem_free(&p);
	}
}
END_TEST

/* The worst |gradref - central difference| of the loss over Q (or S),
 * gradref run with the offset goff (the forward's drop_offset: right). */
static double
fd_error(struct problem *p, const float *dout, uint32_t goff, double *big)
{
	const uint32_t off = p->mask.drop_offset;
	double *g, worst;
	char err[256];
	int n = p->scores_mode ? p->tq * p->tk : p->tq * p->d;

	g = calloc((size_t)n, sizeof *g);
	ck_assert(g != NULL);
	p->mask.drop_offset = goff;
	ck_assert(gradref_gradients(p, dout, p->scores_mode ? NULL : g, NULL, NULL,
	    p->scores_mode ? g : NULL, err, sizeof err) == 0);
	p->mask.drop_offset = off;
	worst = tu_fd_error(p, dout, g, big);
	free(g);
	return worst;
}

/*
 * gradref with dropout against central differences of the double
 * forward's loss sum(dO o O) (the mask is fixed by the seed, so the loss
 * is smooth in Q): within 1e-5.  The same gradients from a mask drawn
 * with another offset (what a backward that regenerates wrongly
 * computes) fail the same check.
 */
START_TEST(test_gradref_finite_differences)
{
	static const struct shape shapes[] = {
		{ 6, 9, 2, 2, -1, -1, 0.0, 0.3, ORDER_FA1, 1, 1, 1, 0, 0, 11, 0 },
		{ 7, 5, 2, 2, -1, 0, 1.5, 0.5, ORDER_FA1, 1, 1, 1, 0, 0, 12, 3 },
		{ 6, 6, 2, 2, 2, 2, 0.0, 0.2, ORDER_FA1, 1, 1, 1, 0, 1, 13, 1 },
	};
	struct problem_spec spec;
	struct problem p;
	float *dout;
	double worst, big;
	char err[256];
	int k;

	for (k = 0; k < (int)(sizeof shapes / sizeof shapes[0]); k++) {
		build(&shapes[k], 21, &p);
		problem_spec_init(&spec);
		spec.seed = 4;
		ck_assert(problem_grad_output(&spec, &p, &dout, err, sizeof err) == 0);
		worst = fd_error(&p, dout, p.mask.drop_offset, &big);
		ck_assert_msg(worst <= 1e-5 * fmax(1.0, big), "shape %d: gradref "
		    "off the finite differences by %g (max %g)", k, worst, big);
		worst = fd_error(&p, dout, p.mask.drop_offset + 1, &big);
		ck_assert_msg(worst > 1e-2 * fmax(1.0, big), "shape %d: gradients "
		    "from another mask passed (%g)", k, worst);
		free(dout);
		problem_free(&p);
	}
}
END_TEST

/*
 * The dropout-offset bug: the backward regenerates the mask with the
 * offset + 1, so dV and dP see other entries than the forward's P V
 * did: the gradients move far from gradref (over 5% of their largest).
 * Without dropout it changes nothing: the gradients are the correct
 * backward's, bit for bit (through gradref's error: the same number).
 */
START_TEST(test_offset_bug_damage)
{
	struct shape sh = { 16, 20, 4, 4, -1, -1, 0.0, 0.3, ORDER_FA1, 1, 1, 1, 0,
		0, 42, 7 };
	struct problem p;
	double right, wrong;

	ck_assert_str_eq(backward_bug_name(BWD_BUG_DROPOUT_OFFSET),
	    "dropout-offset");
	build(&sh, 5, &p);
	right = backward_error(&p, &sh, BWD_BUG_NONE);
	wrong = backward_error(&p, &sh, BWD_BUG_DROPOUT_OFFSET);
	ck_assert_msg(right <= 1e-5, "the correct backward is off by %g", right);
	ck_assert_msg(wrong > 0.05, "dropout-offset only off by %g", wrong);
	problem_free(&p);
	sh.p = 0.0;
	build(&sh, 5, &p);
	right = backward_error(&p, &sh, BWD_BUG_NONE);
	wrong = backward_error(&p, &sh, BWD_BUG_DROPOUT_OFFSET);
	ck_assert(right == wrong);
	problem_free(&p);
}
END_TEST

/* ---- refusals ---- */

START_TEST(test_refusals)
{
	static const double bad[] = { 1.0, -0.1, 1.5, 0.99999999999 };
	struct problem_spec spec;
	struct problem p;
	char err[256];
	size_t k;

	for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		problem_spec_init(&spec);
		spec.dropout_set = 1;
		spec.dropout = bad[k];
		ck_assert(problem_build(&spec, &p, err, sizeof err) == -1);
		ck_assert_msg(strstr(err, "--dropout") != NULL, "%s", err);
	}
	problem_spec_init(&spec);
	spec.dropout_set = 1;
	spec.dropout = NAN;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == -1);
	problem_spec_init(&spec);
	spec.dropout_set = 1;
	spec.dropout = 0.1;
	spec.dropout_offset = 1ull << 32;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == -1);
	ck_assert(strstr(err, "--dropout-offset") != NULL);
	/* 0 is no dropout */
	spec.dropout = 0.0;
	spec.dropout_offset = 0;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	ck_assert(!mask_rule_has(p.mask, MASK_DROPOUT));
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("dropout");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_philox_known_answers);
	tcase_add_test(tc, test_keep_definition);
	tcase_add_test(tc, test_keep_rate_and_independence);
	tcase_add_test(tc, test_forward_random);
	tcase_add_test(tc, test_denominator_and_tiles);
	tcase_add_test(tc, test_unbiased);
	tcase_add_test(tc, test_backward_random);
	tcase_add_test(tc, test_gradref_finite_differences);
	tcase_add_test(tc, test_offset_bug_damage);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	return s;
}
