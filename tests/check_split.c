/*
 * check_split.c - split-KV and grouped heads: the ranges of the schedule,
 * the partials, the combine in every order and both forms against the
 * unsplit run within the bound rounding allows, empty partials, the merge
 * bugs where they break and where they hide, seeking the combine, and
 * grouped heads packed and unpacked.
 */
#include "config.h"

#include "testutil.h"
#include "model/combine.h"
#include "app/options.h"
#include "model/reference.h"
#include "model/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
draw(struct inputs_rng *rng, int lo, int hi)
{
	return lo + (int)(inputs_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

/* One finished run: O and lse head after head, and the bound. */
struct run {
	float *o, *lse;
	struct combine_bounds bound;
	long merges;
};

static void
run_free(struct run *r)
{
	free(r->o);
	free(r->lse);
	memset(r, 0, sizeof *r);
}

/* Runs p split by sp and merged by cr (sp->splits < 2: unsplit). */
static void
run_split(const struct problem *p, const struct tiling *t,
    const struct split_plan *sp, const struct online_rule *rule,
    const struct combine_rule *cr, struct run *out)
{
	struct sim *sim;
	struct combine *c = NULL;
	size_t rows = (size_t)problem_rows(p);
	char err[256];

	memset(out, 0, sizeof *out);
	sim = sim_new_split(p, t, sp, rule, err, sizeof err);
	ck_assert_msg(sim != NULL, "%s", err);
	out->o = malloc(rows * (size_t)p->dv * sizeof *out->o);
	out->lse = malloc(rows * sizeof *out->lse);
	ck_assert(out->o != NULL && out->lse != NULL);
	/* NaN everywhere first: a row nobody writes cannot pass. */
	memset(out->o, 0xff, rows * (size_t)p->dv * sizeof *out->o);
	memset(out->lse, 0xff, rows * sizeof *out->lse);
	ck_assert_int_eq(sim_run(sim, NULL, NULL, out->o, out->lse), 0);
	if (sp != NULL && sp->splits > 1) {
		c = combine_new(sim, cr, err, sizeof err);
		ck_assert_msg(c != NULL, "%s", err);
		ck_assert_int_eq(combine_run(c, NULL, NULL, out->o, out->lse), 0);
		combine_bound(c, &out->bound);
		out->merges = combine_steps(c);
		combine_free(c);
	}
	sim_free(sim);
}

/* max |a - b| over n entries; infinity when either is not finite and
 * they are not the same infinity. */
static double
max_diff(const float *a, const float *b, size_t n)
{
	double worst = 0.0, d;
	size_t i;

	for (i = 0; i < n; i++) {
		if (a[i] == b[i])
			continue;
		if (!isfinite(a[i]) || !isfinite(b[i]))
			return INFINITY;
		d = fabs((double)a[i] - (double)b[i]);
		worst = d > worst ? d : worst;
	}
	return worst;
}

static int
all_finite(const float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (isnan(x[i]) || x[i] == INFINITY)
			return 0;
	return 1;
}

/* The ranges partition each row block's visible key blocks into N runs
 * of nearly equal length, longer first, empty last; each step's flags
 * agree; the tiles are the unsplit schedule's, in the same order. */
START_TEST(test_ranges)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct schedule s1, sn;
	struct split_plan sp = { 0 };
	struct schedule_tile a, b;
	char err[256];
	int n, i, k, j0, j1, prev, len, first_len;
	long step;

	inputs_rng_seed(&rng, 14);
	for (n = 0; n < 200; n++) {
		tu_random_case(&rng, 40, TU_CAUSAL, DTYPE_FP32, &c);
		sp.splits = draw(&rng, 1, 12);
		ck_assert_int_eq(schedule_init(&s1, &c.p, &c.t, err, sizeof err), 0);
		ck_assert_int_eq(schedule_init_split(&sn, &c.p, &c.t, &sp, err,
		    sizeof err), 0);
		ck_assert_int_eq(s1.nsteps, sn.nsteps);
		for (i = 0; i < sn.tr; i++) {
			prev = 0;
			first_len = -1;
			for (k = 0; k < sn.splits; k++) {
				schedule_split_range(&sn, i, k, &j0, &j1);
				len = j1 - j0;
				ck_assert_int_eq(j0, prev);
				ck_assert_int_ge(len, 0);
				if (first_len < 0)
					first_len = len;
				ck_assert(len == first_len || len == first_len - 1);
				if (sn.jend[i] < sn.splits)
					ck_assert_int_eq(len, k < sn.jend[i]);
				for (j0 = prev; j0 < j1; j0++)
					ck_assert_int_eq(schedule_split_of(&sn, i, j0), k);
				prev = j1;
			}
			ck_assert_int_eq(prev, sn.jend[i]);
		}
		for (step = 0; step < sn.nsteps; step++) {
			schedule_tile(&s1, step, &a);
			schedule_tile(&sn, step, &b);
			ck_assert(a.i == b.i && a.j == b.j && a.r0 == b.r0 &&
			    a.c1 == b.c1);
			ck_assert_int_eq(a.split, 0);
			ck_assert_int_eq(a.first_in_split, a.first_in_row);
			ck_assert_int_eq(a.last_in_split, a.last_in_row);
			schedule_split_range(&sn, b.i, b.split, &j0, &j1);
			ck_assert(b.j >= j0 && b.j < j1);
			ck_assert_int_eq(b.first_in_split, b.j == j0);
			ck_assert_int_eq(b.last_in_split, b.j == j1 - 1);
		}
		schedule_free(&s1);
		schedule_free(&sn);
		tu_case_free(&c);
	}
}
END_TEST

/*
 * 300 random problems (scores with masked entries and rows, causal
 * masks, ragged tiles, both loop orders and conventions, fp32 and fp16),
 * every merge order and both partial forms, N from 2 to Tc + 3: the
 * split O and lse stay within combine_bound of the unsplit run's, and
 * never NaN.  They are not always the same bits: a different summation
 * order rounds differently, and the test insists that it showed.
 */
START_TEST(test_split_matches_unsplit)
{
	struct inputs_rng rng;
	struct tu_case c;
	struct split_plan sp = { 0 };
	struct combine_rule cr = { COMBINE_LTR, MERGE_BUG_NONE };
	struct run one, split;
	double d_o, d_l, differed = 0.0, slack = 0.0;
	size_t rows;
	int n;

	inputs_rng_seed(&rng, 2026);
	for (n = 0; n < 300; n++) {
		tu_random_case(&rng, 48, TU_SCORES | TU_CAUSAL | TU_MASKED_ROWS,
		    n % 3 == 2 ? DTYPE_FP16 : DTYPE_FP32, &c);
		sp.splits = draw(&rng, 2, (c.p.tk + c.t.bc - 1) / c.t.bc + 3);
		sp.partials = (enum merge_form)draw(&rng, 0, 1);
		cr.order = (enum combine_order)draw(&rng, 0, 2);
		run_split(&c.p, &c.t, NULL, &c.rule, &cr, &one);
		run_split(&c.p, &c.t, &sp, &c.rule, &cr, &split);
		rows = (size_t)problem_rows(&c.p);
		ck_assert_msg(all_finite(split.o, rows * c.p.dv), "case %d (%s): "
		    "NaN in O", n, c.what);
		d_o = max_diff(split.o, one.o, rows * c.p.dv);
		d_l = max_diff(split.lse, one.lse, rows);
		ck_assert_msg(d_o <= split.bound.o, "case %d (%s, N=%d %s %s): O "
		    "differs by %g, bound %g", n, c.what, sp.splits,
		    combine_form_name(sp.partials), combine_order_name(cr.order),
		    d_o, split.bound.o);
		ck_assert_msg(d_l <= split.bound.lse, "case %d (%s, N=%d %s %s): "
		    "lse differs by %g, bound %g", n, c.what, sp.splits,
		    combine_form_name(sp.partials), combine_order_name(cr.order),
		    d_l, split.bound.lse);
		if (d_o > differed)
			differed = d_o;
		if (split.bound.o > 0 && d_o / split.bound.o > slack)
			slack = d_o / split.bound.o;
		run_free(&one);
		run_free(&split);
		tu_case_free(&c);
	}
	ck_assert_msg(differed > 0.0, "every split run gave the unsplit bits");
	/* The bound is a worst case, but not a vacuous one. */
	ck_assert_msg(slack > 1e-4, "differences never reached 1e-4 of the "
	    "bound (%g)", slack);
}
END_TEST

/* A problem of one row block, dense enough that every range matters:
 * Tq = 8, Tk = 64, Br = 8, Bc = 4, normal inputs. */
static void
dense_problem(struct problem *p, struct tiling *t, uint64_t seed, int causal)
{
	struct problem_spec spec;
	char err[256];

	problem_spec_init(&spec);
	spec.tq = 8;
	spec.tk = 64;
	spec.d = 8;
	spec.input = INPUTS_NORMAL;
	spec.seed = seed;
	spec.causal = causal;
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
	t->br = 8;
	t->bc = 4;
	t->order = ORDER_FA2;
}

/*
 * The three orders agree within their bounds; tree and ltr associate
 * alike for N <= 3 and give the same bits, reverse and ltr for N = 2
 * (a merge of two is commutative bit for bit); from N = 4 a different
 * grouping shows in the last bits somewhere.
 */
START_TEST(test_orders)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem p;
	struct tiling t;
	struct split_plan sp = { 0 };
	struct combine_rule cr = { COMBINE_LTR, MERGE_BUG_NONE };
	struct run r[3];
	double d, seen_differ = 0.0;
	uint64_t seed;
	int n, form, o;

	for (seed = 1; seed <= 6; seed++) {
		dense_problem(&p, &t, seed, 0);
		for (form = 0; form < 2; form++)
			for (n = 2; n <= 16; n++) {
				sp.splits = n;
				sp.partials = (enum merge_form)form;
				for (o = 0; o < 3; o++) {
					cr.order = (enum combine_order)o;
					run_split(&p, &t, &sp, &rule, &cr, &r[o]);
				}
				ck_assert_int_eq(r[COMBINE_LTR].merges, n);
				ck_assert_int_eq(r[COMBINE_TREE].merges, n - 1);
				for (o = 1; o < 3; o++) {
					d = max_diff(r[o].o, r[0].o, 8 * 8);
					ck_assert_msg(d <= r[o].bound.o + r[0].bound.o,
					    "%s vs ltr, N=%d: %g", combine_order_name(
					    (enum combine_order)o), n, d);
				}
				if (n <= 3) {
					ck_assert_msg(memcmp(r[0].o, r[COMBINE_TREE].o,
					    8 * 8 * sizeof(float)) == 0, "tree and ltr "
					    "differ at N=%d", n);
					ck_assert(memcmp(r[0].lse, r[COMBINE_TREE].lse,
					    8 * sizeof(float)) == 0);
				}
				if (n == 2)
					ck_assert_msg(memcmp(r[0].o, r[COMBINE_REVERSE].o,
					    8 * 8 * sizeof(float)) == 0,
					    "reverse and ltr differ at N=2");
				if (n >= 4) {
					d = max_diff(r[0].o, r[COMBINE_TREE].o, 64) +
					    max_diff(r[0].o, r[COMBINE_REVERSE].o, 64);
					seen_differ = d > seen_differ ? d : seen_differ;
				}
				for (o = 0; o < 3; o++)
					run_free(&r[o]);
			}
		problem_free(&p);
	}
	ck_assert_msg(seen_differ > 0.0, "no merge order ever changed a bit");
}
END_TEST

/* The partials themselves: each range's (m, l, u) is what running the
 * range's keys alone gives, and (o, lse) its finalize. */
START_TEST(test_partials_are_ranges)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem p, part;
	struct problem_spec spec;
	struct tiling t;
	struct split_plan sp = { 3, MERGE_MLU, 0 };
	const struct sim_partials *pt;
	struct sim *sim;
	double *ref, *ref_lse;
	char err[256];
	int k, j0, j1, r, x;
	float *s, *v;

	dense_problem(&p, &t, 5, 0);
	sim = sim_new_split(&p, &t, &sp, &rule, err, sizeof err);
	ck_assert_int_eq(sim_run(sim, NULL, NULL, NULL, NULL), 0);
	pt = sim_partials(sim);
	ck_assert_int_eq(pt->splits, 3);
	/* Range k as its own scores problem: S restricted to its keys. */
	s = malloc(8 * 64 * sizeof *s);
	v = malloc(64 * 8 * sizeof *v);
	ref = malloc(8 * 8 * sizeof *ref);
	ref_lse = malloc(8 * sizeof *ref_lse);
	for (k = 0; k < 3; k++) {
		schedule_split_range(sim_schedule(sim), 0, k, &j0, &j1);
		problem_spec_init(&spec);
		for (r = 0; r < 8; r++)
			for (x = 0; x < (j1 - j0) * 4; x++) {
				double dot = 0;
				int y, c = j0 * 4 + x;
				for (y = 0; y < p.d; y++)
					dot += (double)p.q[r * p.d + y] * p.k[c * p.d + y];
				s[r * (j1 - j0) * 4 + x] = (float)(dot * p.scale);
			}
		memcpy(v, p.v + (size_t)j0 * 4 * p.dv, (size_t)(j1 - j0) * 4 *
		    p.dv * sizeof *v);
		spec.s.data = s;
		spec.s.rows = 8;
		spec.s.cols = (j1 - j0) * 4;
		spec.v.data = v;
		spec.v.rows = (j1 - j0) * 4;
		spec.v.cols = p.dv;
		ck_assert_msg(problem_build(&spec, &part, err, sizeof err) == 0,
		    "%s", err);
		ck_assert_int_eq(reference_attention(&part, ref, ref_lse, err,
		    sizeof err), 0);
		for (r = 0; r < 8; r++) {
			size_t e = (size_t)r * 3 + k;
			ck_assert_double_eq_tol(pt->lse[e], ref_lse[r], 1e-5);
			ck_assert_double_eq_tol(pt->m[e] + log(pt->l[e]),
			    ref_lse[r], 1e-5);
			for (x = 0; x < p.dv; x++) {
				ck_assert_double_eq_tol(pt->o[e * p.dv + x],
				    ref[r * p.dv + x], 1e-5);
				ck_assert_double_eq_tol(pt->u[e * p.dv + x] / pt->l[e],
				    ref[r * p.dv + x], 1e-5);
			}
		}
		problem_free(&part);
	}
	free(s);
	free(v);
	free(ref);
	free(ref_lse);
	sim_free(sim);
	problem_free(&p);
}
END_TEST

/*
 * Empty partials: a causal mask with Tq > Tk (rows that see no key, row
 * blocks with no tile), more ranges than key blocks, and rows that see
 * none of a visited range's keys.  Empty ranges stay (m, l, u) = (-inf,
 * 0, 0) and (o, lse) = (0, -inf); they merge as nothing in every order
 * and form: O matches the unsplit run, rows that see nothing give O = 0
 * and lse = -inf, and no NaN appears.
 */
START_TEST(test_empty_partials)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 3, 2, ORDER_FA2 };
	struct split_plan sp = { 0 };
	struct combine_rule cr = { COMBINE_LTR, MERGE_BUG_NONE };
	const struct sim_partials *pt;
	struct sim *sim;
	struct run one, split;
	char err[256];
	int form, o, n, r, k, j0, j1, empty = 0, row_empty = 0;

	problem_spec_init(&spec);
	spec.tq = 12;
	spec.tk = 7;		/* rows 0 .. 4 see no key */
	spec.causal = 1;
	spec.input = INPUTS_NORMAL;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	run_split(&p, &t, NULL, &rule, &cr, &one);
	for (n = 2; n <= 7; n++)
		for (form = 0; form < 2; form++)
			for (o = 0; o < 3; o++) {
				sp.splits = n;
				sp.partials = (enum merge_form)form;
				cr.order = (enum combine_order)o;
				run_split(&p, &t, &sp, &rule, &cr, &split);
				ck_assert(all_finite(split.o, 12 * 4));
				ck_assert(max_diff(split.o, one.o, 12 * 4) <= split.bound.o);
				ck_assert(max_diff(split.lse, one.lse, 12) <= split.bound.lse);
				for (r = 0; r < 5; r++) {
					ck_assert(split.lse[r] == -INFINITY);
					ck_assert(split.o[r * 4] == 0.0f);
				}
				run_free(&split);
			}

	/* The store: what is empty, and why. */
	sp.splits = 4;
	sp.partials = MERGE_MLU;
	sim = sim_new_split(&p, &t, &sp, &rule, err, sizeof err);
	ck_assert_int_eq(sim_run(sim, NULL, NULL, NULL, NULL), 0);
	pt = sim_partials(sim);
	for (r = 0; r < 12; r++)
		for (k = 0; k < 4; k++) {
			size_t e = (size_t)r * 4 + k;
			int sees = 0, c;

			schedule_split_range(sim_schedule(sim), r / 3, k, &j0, &j1);
			for (c = j0 * 2; c < j1 * 2 && c < 7; c++)
				sees |= problem_visible(&p, r, c);
			if (sees) {
				ck_assert(pt->m[e] > -INFINITY && pt->l[e] >= 1.0f);
				continue;
			}
			empty += j1 == j0;
			row_empty += j1 > j0;
			ck_assert(pt->m[e] == -INFINITY && pt->l[e] == 0.0f);
			ck_assert(pt->lse[e] == -INFINITY && pt->o[e * 4] == 0.0f &&
			    pt->u[e * 4] == 0.0f);
		}
	/* Both kinds occurred: ranges with no tile, and rows a visited
	 * range's keys are all hidden from. */
	ck_assert_int_gt(empty, 0);
	ck_assert_int_gt(row_empty, 0);
	sim_free(sim);
	run_free(&one);
	problem_free(&p);
}
END_TEST

/* A scores problem of one row block (rows x 12 keys, Bc = 4: three key
 * blocks, so three ranges with --splits 3) with V of ones and a ramp. */
static void
scores_problem(const float *s, int rows, struct problem *p, struct tiling *t)
{
	float v[12 * 2];
	int c;

	for (c = 0; c < 12; c++) {
		v[c * 2] = 1.0f;
		v[c * 2 + 1] = (float)c;
	}
	tu_scores_problem(s, rows, 12, v, 2, p);
	t->br = rows;
	t->bc = 4;
	t->order = ORDER_FA2;
}

/* The error of a merge bug against the correct merge, same order. */
static double
bug_error(const struct problem *p, const struct tiling *t, enum merge_form form,
    enum combine_order order, enum merge_bug bug)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct split_plan sp = { 3, MERGE_MLU, 0 };
	struct combine_rule good = { COMBINE_LTR, MERGE_BUG_NONE }, bad;
	struct run r0, r1;
	double d;

	sp.partials = form;
	good.order = order;
	bad = good;
	bad.bug = bug;
	run_split(p, t, &sp, &rule, &good, &r0);
	run_split(p, t, &sp, &rule, &bad, &r1);
	d = max_diff(r1.o, r0.o, (size_t)problem_rows(p) * p->dv);
	run_free(&r0);
	run_free(&r1);
	return d;
}

/*
 * Each merge bug breaks where it matters and hides where it should:
 *   no-rescale-one: the scores rise across the keys, so left to right
 *     (and in the tree (P0 + P1) + P2) the incoming partial always holds
 *     the larger max and its factor is 1 anyway (same bits); reversed,
 *     its factor is below 1 and the output moves.  In olse it hides only
 *     against an empty running state.
 *   unweighted: with two ranges in play O doubles and more; a row whose
 *     keys all lie in one range gives the same bits.
 *   last-max: with moderate gaps only rounding moves; a partial whose max
 *     is 100 above the last one's overflows e^(m_a - m_b).
 */
START_TEST(test_merge_bugs)
{
	/* row 0 rises across the ranges; row 1 sees keys of range 0 only */
	static const float rising[2 * 12] = {
		0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5,
		1, 2, 3, 2, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
		-INFINITY, -INFINITY, -INFINITY, -INFINITY,
	};
	/* a cliff of 100 between range 0 and the later ones */
	static const float cliff[12] = {
		100, 99, 98, 97, 0, 1, 0, 1, 0, 1, 0, 1,
	};
	struct problem p;
	struct tiling t;
	double e;
	float row1[12];

	scores_problem(rising, 1, &p, &t);
	ck_assert(bug_error(&p, &t, MERGE_MLU, COMBINE_LTR,
	    MERGE_BUG_NO_RESCALE_ONE) == 0.0);
	e = bug_error(&p, &t, MERGE_MLU, COMBINE_REVERSE, MERGE_BUG_NO_RESCALE_ONE);
	ck_assert_msg(e > 0.5, "no-rescale-one hid in reverse: %g", e);
	/* (P0 + P1) + P2: the incoming side holds the larger max each time */
	ck_assert(bug_error(&p, &t, MERGE_MLU, COMBINE_TREE,
	    MERGE_BUG_NO_RESCALE_ONE) == 0.0);
	e = bug_error(&p, &t, MERGE_OLSE, COMBINE_LTR, MERGE_BUG_NO_RESCALE_ONE);
	ck_assert_msg(e > 0.1, "no-rescale-one hid in olse: %g", e);
	e = bug_error(&p, &t, MERGE_OLSE, COMBINE_LTR, MERGE_BUG_UNWEIGHTED);
	ck_assert_msg(e > 0.5, "unweighted hid: %g", e);
	e = bug_error(&p, &t, MERGE_MLU, COMBINE_REVERSE, MERGE_BUG_LAST_MAX);
	ck_assert_msg(e < 1e-5, "last-max showed with small gaps: %g", e);
	e = bug_error(&p, &t, MERGE_OLSE, COMBINE_TREE, MERGE_BUG_LAST_MAX);
	ck_assert_msg(e < 1e-5, "last-max showed with small gaps: %g", e);
	problem_free(&p);

	/* A row whose keys all lie in range 0: the other partials are
	 * empty, and the three bugs have nothing to break. */
	memcpy(row1, rising + 12, sizeof row1);
	scores_problem(row1, 1, &p, &t);
	ck_assert(bug_error(&p, &t, MERGE_OLSE, COMBINE_LTR,
	    MERGE_BUG_UNWEIGHTED) == 0.0);
	ck_assert(bug_error(&p, &t, MERGE_OLSE, COMBINE_REVERSE,
	    MERGE_BUG_NO_RESCALE_ONE) == 0.0);
	/* ... but last-max is fooled by the last partial being empty */
	e = bug_error(&p, &t, MERGE_MLU, COMBINE_LTR, MERGE_BUG_LAST_MAX);
	ck_assert_msg(e > 0.5, "last-max hid behind an empty last partial: %g", e);
	problem_free(&p);

	scores_problem(cliff, 1, &p, &t);
	e = bug_error(&p, &t, MERGE_MLU, COMBINE_LTR, MERGE_BUG_LAST_MAX);
	ck_assert_msg(e > 0.5, "last-max hid across a cliff of 100: %g", e);
	e = bug_error(&p, &t, MERGE_OLSE, COMBINE_LTR, MERGE_BUG_LAST_MAX);
	ck_assert_msg(e > 0.5, "last-max (olse) hid across a cliff: %g", e);
	/* reversed, the big max comes last: the bug hides again */
	e = bug_error(&p, &t, MERGE_MLU, COMBINE_REVERSE, MERGE_BUG_LAST_MAX);
	ck_assert_msg(e < 1e-5, "last-max showed with the max last: %g", e);
	problem_free(&p);
}
END_TEST

/* unweighted needs normalized partials; a run without splits has
 * nothing to combine. */
START_TEST(test_combine_refuses)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem p;
	struct tiling t;
	struct split_plan sp = { 3, MERGE_MLU, 0 };
	struct combine_rule cr = { COMBINE_LTR, MERGE_BUG_UNWEIGHTED };
	struct sim *sim;
	char err[256];

	dense_problem(&p, &t, 1, 0);
	sim = sim_new_split(&p, &t, &sp, &rule, err, sizeof err);
	ck_assert(combine_new(sim, &cr, err, sizeof err) == NULL);
	ck_assert_msg(strstr(err, "olse") != NULL, "%s", err);
	sim_free(sim);
	sp.splits = 1;
	cr.bug = MERGE_BUG_NONE;
	sim = sim_new_split(&p, &t, &sp, &rule, err, sizeof err);
	ck_assert(combine_new(sim, &cr, err, sizeof err) == NULL);
	ck_assert_msg(strstr(err, "nothing to combine") != NULL, "%s", err);
	sim_free(sim);
	problem_free(&p);
}
END_TEST

/* What a merge's view shows, copied. */
struct merge_record {
	int block, merge, nphases;
	float *buf;
	size_t n;
};

static size_t
merge_floats(const struct combine_view *v)
{
	return (size_t)v->rows * (8 + 3 * (size_t)v->dv +
	    (v->last ? (size_t)v->dv + 1 : 0));
}

static void
merge_copy(const struct combine_view *v, float *buf)
{
	const float *rows8[8] = { v->m_a, v->l_a, v->m_b, v->l_b, v->m, v->l,
	    v->w_a, v->w_b };
	size_t dv = (size_t)v->dv, r = (size_t)v->rows;
	int k;

	for (k = 0; k < 8; k++, buf += r)
		memcpy(buf, rows8[k], r * sizeof *buf);
	memcpy(buf, v->u_a, r * dv * sizeof *buf);
	memcpy(buf + r * dv, v->u_b, r * dv * sizeof *buf);
	memcpy(buf + 2 * r * dv, v->u, r * dv * sizeof *buf);
	if (v->last) {
		memcpy(buf + 3 * r * dv, v->o, r * dv * sizeof *buf);
		memcpy(buf + 4 * r * dv, v->lse, r * sizeof *buf);
	}
}

static int
merge_record_fn(const struct combine_view *v, void *ctx)
{
	struct merge_record *rec = (struct merge_record *)ctx + v->step;

	rec->block = v->block;
	rec->merge = v->merge;
	rec->nphases = v->nphases;
	rec->n = merge_floats(v);
	rec->buf = malloc(rec->n * sizeof *rec->buf);
	merge_copy(v, rec->buf);
	return 0;
}

/* Seeking the combine to random merges and phases, forwards and back,
 * gives the bits running it gave; phase moves cross merges. */
START_TEST(test_combine_seek)
{
	static const struct online_rule rule = { CONV_NORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct inputs_rng rng;
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 3, 4, ORDER_FA1 };
	struct split_plan sp = { 5, MERGE_OLSE, 0 };
	struct combine_rule cr = { COMBINE_TREE, MERGE_BUG_NONE };
	struct merge_record *rec;
	const struct combine_view *v;
	struct combine *c;
	struct sim *sim;
	char err[256];
	float *buf;
	long k, n;
	int i, o, phase;

	problem_spec_init(&spec);
	spec.tq = 10;
	spec.tk = 37;
	spec.causal = 1;
	spec.input = INPUTS_SPIKE;
	spec.bc = 4;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	inputs_rng_seed(&rng, 3);
	for (o = 0; o < 3; o++) {
		cr.order = (enum combine_order)o;
		sp.partials = (enum merge_form)(o % 2);
		sim = sim_new_split(&p, &t, &sp, &rule, err, sizeof err);
		ck_assert_int_eq(sim_run(sim, NULL, NULL, NULL, NULL), 0);
		c = combine_new(sim, &cr, err, sizeof err);
		n = combine_steps(c);
		ck_assert_int_eq(n, 4L * (o == COMBINE_TREE ? 4 : 5));
		rec = calloc((size_t)n, sizeof *rec);
		ck_assert_int_eq(combine_run(c, merge_record_fn, rec, NULL, NULL), 0);
		for (i = 0; i < 400; i++) {
			k = (long)draw(&rng, 0, (int)n - 1);
			phase = draw(&rng, -1, COMBINE_PHASES - 1);
			ck_assert_int_eq(combine_seek(c, k, phase), 0);
			v = combine_view(c);
			ck_assert_int_eq(v->step, k);
			ck_assert_int_eq(v->block, rec[k].block);
			ck_assert_int_eq(v->merge, rec[k].merge);
			ck_assert_int_eq(v->nphases, rec[k].nphases);
			ck_assert_int_eq((int)v->phase, phase < 0 ||
			    phase >= v->nphases ? v->nphases - 1 : phase);
			buf = malloc(rec[k].n * sizeof *buf);
			merge_copy(v, buf);
			ck_assert_msg(memcmp(buf, rec[k].buf, rec[k].n *
			    sizeof *buf) == 0, "merge %ld differs after a seek", k);
			free(buf);
		}
		/* every phase forwards from the start, then back again */
		ck_assert_int_eq(combine_seek(c, 0, COMBINE_PHASE_LOAD), 0);
		for (i = 0; combine_move_phase(c, +1) == 0; i++)
			;
		ck_assert_int_eq(i, (int)(n * (COMBINE_PHASES - 1) + 4 - 1));
		ck_assert_int_eq(combine_view(c)->step, n - 1);
		for (i = 0; combine_move_phase(c, -1) == 0; i++)
			;
		ck_assert_int_eq(combine_view(c)->step, 0);
		ck_assert_int_eq(combine_seek(c, n, 0), -1);
		ck_assert_int_eq(combine_seek(c, -1, 0), -1);
		for (k = 0; k < n; k++)
			free(rec[k].buf);
		free(rec);
		combine_free(c);
		sim_free(sim);
	}
	problem_free(&p);
}
END_TEST

/* The forward's seek with splits: every step's view equals sim_run's
 * (the range's state restarts, checkpoints or not). */
static int
record_l_new(const struct sim_view *v, void *ctx)
{
	float *l_new = ctx;

	memcpy(l_new + v->step * 64, v->l_new, (size_t)v->rows * sizeof(float));
	return 0;
}

START_TEST(test_forward_seek)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct inputs_rng rng;
	struct problem p;
	struct tiling t;
	struct split_plan sp = { 3, MERGE_MLU, 0 };
	struct sim *sim;
	char err[256];
	float *l_new;
	long k, n;
	int i;

	inputs_rng_seed(&rng, 9);
	dense_problem(&p, &t, 2, 1);
	sim = sim_new_split(&p, &t, &sp, &rule, err, sizeof err);
	/* sparse checkpoints: one every few tiles, across range starts */
	ck_assert(sim_set_checkpoint_budget(sim, 600, err, sizeof err) == 0);
	ck_assert_int_gt(sim_checkpoint_every(sim), 1);
	n = sim_steps(sim);
	l_new = calloc((size_t)n * 64, sizeof *l_new);
	ck_assert_int_eq(sim_run(sim, record_l_new, l_new, NULL, NULL), 0);
	for (i = 0; i < 300; i++) {
		k = draw(&rng, 0, (int)n - 1);
		ck_assert_int_eq(sim_seek(sim, k, SIM_PHASE_LAST), 0);
		ck_assert_msg(memcmp(sim_view(sim)->l_new, l_new + k * 64,
		    (size_t)sim_view(sim)->rows * sizeof(float)) == 0,
		    "step %ld differs after a seek", k);
		ck_assert_int_eq(sim_view(sim)->nphases,
		    sim_view(sim)->tile.last_in_split ? SIM_PHASES : SIM_PHASES - 1);
	}
	free(l_new);
	sim_free(sim);
	problem_free(&p);
}
END_TEST

static void
heads_problem(int heads, int kv_heads, int tq, int causal, struct problem *p)
{
	struct problem_spec spec;
	char err[256];

	problem_spec_init(&spec);
	spec.tq = tq;
	spec.tk = 40;
	spec.d = 6;
	spec.heads = heads;
	spec.kv_heads = kv_heads;
	spec.causal = causal;
	spec.input = INPUTS_NORMAL;
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
}

/*
 * Grouped heads.  Each head of a grouped problem gives the bits of its
 * own single-head problem (problem_head), and the double reference's
 * answer; packing a group's rows gives the same O (the same bits without
 * a mask; with a causal mask the ranges of a packed block may be cut
 * elsewhere, within the split bound) and reads K and V once per group
 * instead of once per query head when a block holds the group's rows.
 */
START_TEST(test_grouped_heads)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	static const int shapes[][3] = {	/* H, G, Tq */
		{ 4, 2, 1 }, { 8, 1, 1 }, { 6, 3, 3 }, { 4, 4, 2 }, { 8, 2, 5 },
	};
	struct combine_rule cr = { COMBINE_TREE, MERGE_BUG_NONE };
	struct split_plan plain = { 0 }, packed = { 0 };
	struct tiling t = { 8, 8, ORDER_FA2 };
	struct schedule s1, s2;
	struct traffic_table t1, t2;
	struct problem p, one;
	struct run a, b, solo;
	double *ref, *ref_lse;
	char err[256];
	size_t n, x;
	int k, h, causal, split, group;

	for (k = 0; k < (int)(sizeof shapes / sizeof shapes[0]); k++)
		for (causal = 0; causal < 2; causal++)
			for (split = 1; split <= 3; split += 2) {
				heads_problem(shapes[k][0], shapes[k][1], shapes[k][2],
				    causal, &p);
				group = shapes[k][0] / shapes[k][1];
				plain.splits = packed.splits = split;
				packed.pack_gqa = 1;
				run_split(&p, &t, &plain, &rule, &cr, &a);
				run_split(&p, &t, &packed, &rule, &cr, &b);
				n = (size_t)problem_rows(&p) * p.dv;
				if (!causal || split == 1)
					ck_assert_msg(memcmp(a.o, b.o, n * 4) == 0,
					    "packed O differs (H=%d G=%d Tq=%d)",
					    shapes[k][0], shapes[k][1], shapes[k][2]);
				else
					ck_assert(max_diff(a.o, b.o, n) <=
					    a.bound.o + b.bound.o);
				/* head by head against the single-head problem */
				ref = malloc(n * sizeof *ref);
				ref_lse = malloc((size_t)p.tq * sizeof *ref_lse);
				for (h = 0; h < p.heads; h++) {
					problem_head(&p, h, &one);
					run_split(&one, &t, &plain, &rule, &cr, &solo);
					ck_assert(memcmp(solo.o, a.o + (size_t)h * p.tq *
					    p.dv, (size_t)p.tq * p.dv * 4) == 0);
					ck_assert_int_eq(reference_attention(&one, ref,
					    ref_lse, err, sizeof err), 0);
					for (x = 0; x < (size_t)p.tq * p.dv; x++)
						ck_assert_double_eq_tol(b.o[(size_t)h *
						    p.tq * p.dv + x], ref[x], 1e-5);
					run_free(&solo);
				}
				free(ref);
				free(ref_lse);
				/* K and V bytes */
				ck_assert(schedule_init_split(&s1, &p, &t, &plain, err,
				    sizeof err) == 0);
				ck_assert(schedule_init_split(&s2, &p, &t, &packed, err,
				    sizeof err) == 0);
				ck_assert(traffic_init(&t1, &p, &s1, err, sizeof err) == 0);
				ck_assert(traffic_init(&t2, &p, &s2, err, sizeof err) == 0);
				if (!causal && group * p.tq <= t.br)
					ck_assert_msg(t1.total.kv_read == (uint64_t)group *
					    t2.total.kv_read, "packing saved %llu of %llu",
					    (unsigned long long)t2.total.kv_read,
					    (unsigned long long)t1.total.kv_read);
				ck_assert(t2.total.kv_read <= t1.total.kv_read);
				if (group > 1 && group * p.tq <= t.br)
					ck_assert(t2.total.kv_read < t1.total.kv_read);
				traffic_free(&t1);
				traffic_free(&t2);
				schedule_free(&s1);
				schedule_free(&s2);
				run_free(&a);
				run_free(&b);
				problem_free(&p);
			}
}
END_TEST

/*
 * The head layout, by brute force: in both loop orders, packed or not,
 * causal or not, every visible (query row, key) pair of every head is
 * in exactly one step's tile, each tile's rows share one K/V head (the
 * right one for each row's query head), and the step numbers are
 * schedule_step_of's.
 */
/* One layout of check_heads_schedule: see there. */
static void
check_layout(int heads, int kv_heads, int tq, int tk, int causal,
    const struct tiling *t, const struct split_plan *sp)
{
	struct problem_spec spec;
	struct problem p;
	struct schedule s;
	struct schedule_tile tile;
	char err[256], *seen;
	int r, c, row, group = heads / kv_heads;
	long step;

	problem_spec_init(&spec);
	spec.heads = heads;
	spec.kv_heads = kv_heads;
	spec.tq = tq;
	spec.tk = tk;
	spec.causal = causal;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	ck_assert(schedule_init_split(&s, &p, t, sp, err, sizeof err) == 0);
	ck_assert_int_eq(s.rows, problem_rows(&p));
	seen = calloc((size_t)s.rows * tk, 1);
	for (step = 0; step < s.nsteps; step++) {
		schedule_tile(&s, step, &tile);
		ck_assert_int_eq(schedule_step_of(&s, tile.i, tile.j), step);
		for (r = tile.r0; r < tile.r1; r++) {
			row = schedule_row_out(&s, r);
			ck_assert_int_eq(schedule_row_pos(&s, r), row % tq);
			ck_assert_int_eq(tile.kv_head, row / tq / group);
			for (c = tile.c0; c < tile.c1; c++)
				if (problem_visible(&p, row % tq, c))
					seen[(size_t)row * tk + c]++;
		}
	}
	for (row = 0; row < s.rows; row++)
		for (c = 0; c < tk; c++)
			ck_assert_int_eq(seen[(size_t)row * tk + c],
			    problem_visible(&p, row % tq, c));
	free(seen);
	schedule_free(&s);
	problem_free(&p);
}

/*
 * The head layout, by brute force: in both loop orders, packed or not,
 * causal or not, every visible (query row, key) pair of every head is
 * in exactly one step's tile, each tile's rows belong to query heads of
 * the tile's K/V head, and the step numbers are schedule_step_of's.
 */
START_TEST(test_heads_schedule)
{
	static const int shapes[][4] = {	/* H, G, Tq, Tk */
		{ 4, 2, 3, 11 }, { 6, 1, 2, 5 }, { 3, 3, 5, 4 }, { 8, 2, 1, 9 },
	};
	struct tiling t = { 1, 2, ORDER_FA2 };
	struct split_plan sp = { 2, MERGE_MLU, 0 };
	int k, order, causal;

	for (k = 0; k < 4; k++)
		for (order = 0; order < 2; order++)
			for (causal = 0; causal < 2; causal++)
				for (sp.pack_gqa = 0; sp.pack_gqa < 2; sp.pack_gqa++)
					for (t.br = 1; t.br <= 7; t.br += 3) {
						t.order = order ? ORDER_FA1 : ORDER_FA2;
						check_layout(shapes[k][0], shapes[k][1],
						    shapes[k][2], shapes[k][3], causal, &t, &sp);
					}
}
END_TEST

/* The counters of a split run: each visited range writes its rows'
 * partials; the combine reads all N of every row and writes O once;
 * the runs to spread are the non-empty (row block, range) pairs. */
START_TEST(test_split_traffic)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 4, 4, ORDER_FA2 };
	struct split_plan sp = { 3, MERGE_OLSE, 0 };
	struct combine_rule cr = { COMBINE_LTR, MERGE_BUG_NONE };
	struct traffic fwd, comb;
	struct traffic_parallel par;
	struct sim *sim;
	struct combine *c;
	char err[256];
	uint64_t want = 0, pb = traffic_partial_bytes(MERGE_OLSE, 4);
	int i, k, j0, j1, r0, r1;
	long runs = 0;

	problem_spec_init(&spec);
	spec.tq = 16;
	spec.tk = 20;
	spec.causal = 1;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	sim = sim_new_split(&p, &t, &sp, &rule, err, sizeof err);
	ck_assert_int_eq(sim_run(sim, NULL, NULL, NULL, NULL), 0);
	c = combine_new(sim, &cr, err, sizeof err);
	traffic_upto(sim_traffic(sim), sim_steps(sim) - 1, &fwd);
	combine_traffic(c, &comb);
	for (i = 0; i < 4; i++) {
		schedule_rows(sim_schedule(sim), i, &r0, &r1);
		for (k = 0; k < 3; k++) {
			schedule_split_range(sim_schedule(sim), i, k, &j0, &j1);
			if (j1 > j0) {
				want += (uint64_t)(r1 - r0) * pb;
				runs++;
			}
		}
	}
	ck_assert_uint_eq(fwd.partials, want);
	ck_assert_uint_eq(comb.hbm_read, 16 * 3 * pb);
	ck_assert_uint_eq(comb.hbm_write, 16 * (4 * 4 + 4));
	traffic_parallel(sim_schedule(sim), 132, &par);
	ck_assert_int_eq(par.runs, runs);
	ck_assert_int_eq(par.waves, 1);
	ck_assert_int_eq(par.longest, 2);	/* 5 key blocks in 3: 2, 2, 1 */
	combine_free(c);
	sim_free(sim);
	problem_free(&p);
}
END_TEST

/* Parses argv (NULL-terminated, without the command) with the split
 * options; returns options_parse's result, err holds its message. */
static int
parse(const char *const *args, struct options *o, char *err, size_t errlen)
{
	char *argv[16];
	int argc = 1;

	argv[0] = (char *)"run";
	while (*args != NULL)
		argv[argc++] = (char *)*args++;
	options_init(o);
	return options_parse(argc, argv, 1, OPT_PROBLEM | OPT_SPLIT |
	    OPT_BACKWARD, NULL, NULL, o, err, errlen);
}

/* The split options: bad values and combinations are refused with one
 * line naming the option; the defaults fill in what was not given. */
START_TEST(test_options)
{
	static const struct {
		const char *args[6];
		const char *want;	/* in the error, or NULL: accepted */
	} cases[] = {
		{ { "--splits", "0" }, "--splits must be" },
		{ { "--splits", "x" }, "--splits must be" },
		{ { "--merge-order", "tree" }, "--merge-order applies to split runs" },
		{ { "--partials", "olse" }, "--partials applies to split runs" },
		{ { "--splits", "2", "--merge-order", "sideways" }, "ltr, tree or reverse" },
		{ { "--splits", "2", "--merge-bug", "none2" }, "--merge-bug must be" },
		{ { "--splits", "2", "--partials", "ml" }, "mlu or olse" },
		{ { "--heads", "0" }, "--heads must be" },
		{ { "--backward", "--splits", "2" }, NULL },
		{ { "--backward", "--heads", "2" }, "--backward runs one head" },
		{ { "--splits", "2", "--merge-order", "reverse" }, NULL },
	};
	struct options o;
	char err[256];
	size_t k;
	int rc;

	for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		err[0] = '\0';
		rc = parse(cases[k].args, &o, err, sizeof err);
		if (cases[k].want == NULL)
			ck_assert_msg(rc == 0, "case %zu refused: %s", k, err);
		else
			ck_assert_msg(rc != 0 && strstr(err, cases[k].want) != NULL,
			    "case %zu: '%s' does not say '%s'", k, err, cases[k].want);
		ck_assert(strchr(err, '\n') == NULL);
		options_free(&o);
	}

	/* --heads alone is multi-head attention; --kv-heads alone too */
	ck_assert_int_eq(parse((const char *[]){ "--heads", "4", NULL }, &o, err,
	    sizeof err), 0);
	ck_assert(o.spec.heads == 4 && o.spec.kv_heads == 4);
	options_free(&o);
	ck_assert_int_eq(parse((const char *[]){ "--kv-heads", "2", NULL }, &o,
	    err, sizeof err), 0);
	ck_assert(o.spec.heads == 2 && o.spec.kv_heads == 2);
	options_free(&o);
	/* unweighted is a bug of normalized partials: it picks olse ... */
	ck_assert_int_eq(parse((const char *[]){ "--splits", "3", "--merge-bug",
	    "unweighted", NULL }, &o, err, sizeof err), 0);
	ck_assert_int_eq(o.split.partials, MERGE_OLSE);
	options_free(&o);
	/* ... unless mlu was asked for (combine_new then refuses) */
	ck_assert_int_eq(parse((const char *[]){ "--splits", "3", "--merge-bug",
	    "unweighted", "--partials", "mlu", NULL }, &o, err, sizeof err), 0);
	ck_assert_int_eq(o.split.partials, MERGE_MLU);
	options_free(&o);
}
END_TEST

/* G must divide H, and files hold whole heads. */
START_TEST(test_heads_refused)
{
	static const float q[3 * 2] = { 0 }, kv[4 * 2] = { 0 };
	struct problem_spec spec;
	struct problem p;
	char err[256];

	problem_spec_init(&spec);
	spec.heads = 4;
	spec.kv_heads = 3;
	ck_assert(problem_build(&spec, &p, err, sizeof err) != 0);
	ck_assert_msg(strstr(err, "--kv-heads 3 must divide --heads 4"), "%s", err);

	problem_spec_init(&spec);
	spec.heads = 2;
	spec.q.data = q;
	spec.q.rows = 3;	/* 3 rows are not 2 heads of equal Tq */
	spec.q.cols = 2;
	spec.k.data = kv;
	spec.k.rows = 4;
	spec.k.cols = 2;
	spec.v.data = kv;
	spec.v.rows = 4;
	spec.v.cols = 2;
	ck_assert(problem_build(&spec, &p, err, sizeof err) != 0);
	ck_assert_msg(strstr(err, "not a multiple of --heads 2"), "%s", err);
	spec.q.rows = 2;
	spec.kv_heads = 2;	/* 4 key rows: 2 per K/V head */
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	ck_assert(p.tq == 1 && p.tk == 2 && p.heads == 2 && p.kv_heads == 2);
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("split");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_split_matches_unsplit);
	tcase_add_test(tc, test_orders);
	tcase_add_test(tc, test_partials_are_ranges);
	tcase_add_test(tc, test_empty_partials);
	tcase_add_test(tc, test_merge_bugs);
	tcase_add_test(tc, test_combine_refuses);
	tcase_add_test(tc, test_combine_seek);
	tcase_add_test(tc, test_forward_seek);
	tcase_add_test(tc, test_grouped_heads);
	tcase_add_test(tc, test_heads_schedule);
	tcase_add_test(tc, test_split_traffic);
	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_heads_refused);
	suite_add_tcase(s, tc);
	return s;
}
