/*
 * check_mask.c - the masks and score modifiers (mask_rule.h) through the
 * model: the table and its arithmetic, the tiles a window skips against
 * a count over every entry, the forward and the gradients against the
 * double references, the cost of a window at two sizes, rows that see
 * no key, and the bug modes' damage.
 */
#include "config.h"

#include "testutil.h"
#include "model/backward.h"
#include "model/gradref.h"
#include "model/mask.h"
#include "model/sim.h"
#include "model/traffic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table ---- */

START_TEST(test_table)
{
	int e, b;
	enum mask_bug got;

	ck_assert_int_ge(MASK_ENTRIES, 4);
	for (e = 0; e < MASK_ENTRIES; e++) {
		const struct mask_entry_row *row = mask_entry_row((enum mask_entry)e);

		ck_assert_int_eq((int)row->id, e);
		ck_assert(row->name[0] != '\0' && row->does[0] != '\0' &&
		    row->skips[0] != '\0' && row->backward[0] != '\0' &&
		    row->options[0] != '\0');
		ck_assert(row->kind == MASK_HIDES || row->kind == MASK_BENDS ||
		    row->kind == MASK_DROPS);
	}
	ck_assert_str_eq(mask_entry_row(MASK_CAUSAL)->name, "causal");
	for (b = 0; b < MASK_BUGS; b++) {
		ck_assert_int_eq(mask_bug_parse(mask_bug_name((enum mask_bug)b),
		    &got), 0);
		ck_assert_int_eq((int)got, b);
	}
	ck_assert_int_eq(mask_bug_parse("nonesuch", &got), -1);
}
END_TEST

/* Causal is the window (-1, 0), entry for entry, and the same rule as
 * tile_rule_visible (the causal-only kernels' reading). */
START_TEST(test_causal_is_a_window)
{
	struct mask_rule m = mask_rule_window(mask_rule_none(), -1, 0);
	int tq, tk, r, c;

	ck_assert(mask_rule_has(m, MASK_CAUSAL) && !mask_rule_has(m, MASK_WINDOW));
	for (tq = 1; tq < 9; tq++)
		for (tk = 1; tk < 9; tk++)
			for (r = 0; r < tq; r++)
				for (c = 0; c < tk; c++)
					ck_assert_int_eq(mask_rule_visible(m, r, c, tq, tk),
					    tile_rule_visible(1, r, c, tq, tk));
	m.right = 2;
	ck_assert(!mask_rule_has(m, MASK_CAUSAL) && mask_rule_has(m, MASK_WINDOW));
	m.right = MASK_UNBOUNDED;
	ck_assert(!mask_rule_has(m, MASK_CAUSAL) && !mask_rule_has(m, MASK_WINDOW));
	ck_assert(!mask_rule_hides(m));
	/* a zero-filled rule (a problem built by hand) hides nothing */
	memset(&m, 0, sizeof m);
	ck_assert(!mask_rule_hides(m) && mask_rule_visible(m, 0, 8, 1, 9) &&
	    mask_rule_visible(m, 0, 0, 9, 1));
}
END_TEST

/* The window's definition, FlashAttention's: key c is seen by row r when
 * r + Tk - Tq - L <= c <= r + Tk - Tq + R (a side -1 is unbounded); the
 * bug leaves the left edge out and nothing else. */
START_TEST(test_window_definition)
{
	struct mask_rule m = mask_rule_window(mask_rule_none(), -1, -1);
	int tq = 7, tk = 11, r, c, want;

	for (m.left = -1; m.left < 5; m.left++)
		for (m.right = -1; m.right < 5; m.right++)
			for (r = 0; r < tq; r++)
				for (c = 0; c < tk; c++) {
					long diag = r + tk - tq;

					want = (m.left < 0 || c >= diag - m.left) &&
					    (m.right < 0 || c <= diag + m.right);
					ck_assert_int_eq(mask_rule_visible(m, r, c, tq, tk),
					    want);
					ck_assert_int_eq(mask_rule_visible_bug(m,
					    MASK_BUG_WINDOW_EDGE, r, c, tq, tk), want &&
					    !(m.left >= 0 && c == diag - m.left));
				}
}
END_TEST

/* The cap's tanh in +, -, * and / alone stays within 4 units of 2^-24 |tanh| of
 * libm's double tanh over the whole range (and the cap keeps -inf). */
START_TEST(test_tanh)
{
	double worst = 0.0, y, want, got;
	struct mask_rule m = mask_rule_none();
	int i;

	for (i = -200000; i <= 200000; i++) {
		y = i * 1e-4;		/* -20 .. 20 */
		want = tanh((double)(float)y);
		got = mask_rule_tanh((float)y);
		if (want != 0.0)
			worst = fmax(worst, fabs(got - want) / fabs(want));
	}
	ck_assert_msg(worst <= 4 * 0x1p-24, "mask_rule_tanh off by %g units",
	    worst / 0x1p-24);
	ck_assert(mask_rule_tanh(0.0f) == 0.0f);
	m.softcap = 5.0f;
	ck_assert(mask_rule_cap(m, -INFINITY) == -INFINITY);
	ck_assert(fabs(mask_rule_cap(m, 1000.0f) - 5.0f) < 1e-6);
	ck_assert(fabs(mask_rule_dscore(m, 1.0f, mask_rule_cap(m, 2.0f)) -
	    (1.0 - pow(tanh(0.4), 2))) < 1e-6);
}
END_TEST

/* ---- building problems ---- */

struct shape {
	int tq, tk, br, bc, left, right;
	double softcap, alibi;
	enum schedule_order order;
	int heads, kv_heads, splits, pack;
	int scores;		/* S given directly */
};

static void
build(const struct shape *sh, enum inputs_kind input, uint64_t seed,
    struct problem *p)
{
	struct problem_spec spec;
	char err[256], slopes[256] = "";
	float *s = NULL, *v = NULL;
	int h, at = 0;

	problem_spec_init(&spec);
	spec.tq = sh->tq;
	spec.tk = sh->tk;
	spec.d = 5;
	spec.dv = 3;
	spec.input = input;
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
	if (sh->alibi > 0 && spec.heads == 1) {
		spec.alibi_set = 1;
		spec.alibi = sh->alibi;
	} else if (sh->alibi > 0) {
		/* a slope per head, as ALiBi's geometric sequence */
		for (h = 0; h < spec.heads; h++)
			at += snprintf(slopes + at, sizeof slopes - (size_t)at, "%s%g",
			    h ? "," : "", sh->alibi / (1 << h));
		spec.alibi_slopes = slopes;
	}
	if (sh->scores)
		tu_spec_scores(&spec, seed, 4.0, &s, &v);
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
	free(s);
	free(v);
}

static void
describe(const struct shape *sh, char *buf, size_t len)
{
	snprintf(buf, len, "Tq=%d Tk=%d Br=%d Bc=%d window (%d, %d) softcap %g "
	    "alibi %g %s H=%d G=%d splits %d%s%s", sh->tq, sh->tk, sh->br, sh->bc,
	    sh->left, sh->right, sh->softcap, sh->alibi,
	    schedule_order_name(sh->order), sh->heads, sh->kv_heads, sh->splits,
	    sh->pack ? " packed" : "", sh->scores ? " scores" : "");
}

/* A random shape: ragged tiles, Tq != Tk, a window of any sides, the
 * modifiers on or off, heads, splits, packing. */
static void
random_shape(struct inputs_rng *rng, struct shape *sh)
{
	memset(sh, 0, sizeof *sh);
	sh->tq = 1 + (int)(inputs_rng_next(rng) % 40);
	sh->tk = 1 + (int)(inputs_rng_next(rng) % 40);
	sh->br = 1 + (int)(inputs_rng_next(rng) % 9);
	sh->bc = 1 + (int)(inputs_rng_next(rng) % 9);
	sh->left = (int)(inputs_rng_next(rng) % 12) - 1;
	sh->right = (int)(inputs_rng_next(rng) % 12) - 1;
	if (inputs_rng_next(rng) % 4 == 0)
		sh->left = -1;
	sh->softcap = inputs_rng_next(rng) % 2 ? 0.5 + (double)(inputs_rng_next(rng)
	    % 40) / 10.0 : 0.0;
	sh->alibi = inputs_rng_next(rng) % 2 ? 0.05 + (double)(inputs_rng_next(rng)
	    % 10) / 10.0 : 0.0;
	sh->order = inputs_rng_next(rng) % 2 ? ORDER_FA1 : ORDER_FA2;
	sh->kv_heads = 1 + (int)(inputs_rng_next(rng) % 2);
	sh->heads = sh->kv_heads * (1 + (int)(inputs_rng_next(rng) % 2));
	sh->splits = inputs_rng_next(rng) % 3 == 0 ? 2 + (int)(inputs_rng_next(rng)
	    % 3) : 1;
	sh->pack = sh->heads > sh->kv_heads && inputs_rng_next(rng) % 2;
	sh->scores = inputs_rng_next(rng) % 5 == 0;
}

/* The schedule of p under sh's tiles, order, splits and packing. */
static void
schedule_of(const struct shape *sh, const struct problem *p,
    struct schedule *s)
{
	struct tiling t = { sh->br, sh->bc, sh->order };
	struct split_plan sp;
	char err[256];

	memset(&sp, 0, sizeof sp);
	sp.splits = sh->splits;
	sp.pack_gqa = sh->pack;
	ck_assert_msg(schedule_init_split(s, p, &t, &sp, err, sizeof err) == 0,
	    "%s", err);
}

/* ---- the tiles a mask skips ---- */

/*
 * Every tile of random windows, heads and packings: skipped exactly when
 * every one of its entries is hidden (a count over all entries), each
 * visible tile visited by one step, in one key range, and the steps'
 * first_in_row / last_in_row at the row block's first and last visible
 * key blocks.
 */
START_TEST(test_skipped_tiles_brute_force)
{
	struct inputs_rng rng;
	struct shape sh;
	struct problem p;
	struct schedule s;
	struct schedule_tile tile;
	char what[256];
	long k, visible, seen;
	int n, i, j, r, c, r0, r1, any, first, last;
	unsigned char *hit;

	inputs_rng_seed(&rng, 28);
	for (n = 0; n < 400; n++) {
		random_shape(&rng, &sh);
		sh.scores = 0;
		build(&sh, INPUTS_RAMP, 1, &p);
		describe(&sh, what, sizeof what);
		schedule_of(&sh, &p, &s);
		hit = calloc((size_t)s.tr * s.tc, 1);
		ck_assert(hit != NULL);
		visible = 0;
		for (i = 0; i < s.tr; i++) {
			schedule_rows(&s, i, &r0, &r1);
			first = last = -1;
			for (j = 0; j < s.tc; j++) {
				any = 0;
				for (r = r0; r < r1 && !any; r++)
					for (c = j * s.bc; c < (j + 1) * s.bc && c < p.tk; c++)
						if (problem_visible(&p, schedule_row_pos(&s, r), c)) {
							any = 1;
							break;
						}
				ck_assert_msg(schedule_skipped(&s, i, j) == !any, "%s: tile "
				    "(%d, %d) skipped %d but visible %d", what, i, j,
				    schedule_skipped(&s, i, j), any);
				ck_assert_int_eq(schedule_step_of(&s, i, j) < 0, !any);
				if (any) {
					visible++;
					first = first < 0 ? j : first;
					last = j;
				}
			}
			if (first >= 0) {
				ck_assert_int_eq(s.jbegin[i], first);
				ck_assert_int_eq(s.jend[i], last + 1);
			}
		}
		ck_assert_msg(s.nsteps == visible, "%s: %ld steps for %ld visible "
		    "tiles", what, s.nsteps, visible);
		for (k = 0, seen = 0; k < s.nsteps; k++) {
			schedule_tile(&s, k, &tile);
			ck_assert_int_eq(schedule_step_of(&s, tile.i, tile.j), k);
			ck_assert(!hit[(size_t)tile.i * s.tc + tile.j]);
			hit[(size_t)tile.i * s.tc + tile.j] = 1;
			ck_assert_int_eq(tile.first_in_row, tile.j == s.jbegin[tile.i]);
			ck_assert_int_eq(tile.last_in_row, tile.j == s.jend[tile.i] - 1);
			ck_assert_int_eq(schedule_split_of(&s, tile.i, tile.j),
			    tile.split);
			seen++;
		}
		ck_assert_int_eq(seen, visible);
		free(hit);
		schedule_free(&s);
		problem_free(&p);
	}
}
END_TEST

/*
 * mask_rule_rows, the rows that see a key block (the tensor-core
 * backward's inner range, gpu/fast_bwd.cu): for random windows (left
 * only, right only, both, rows that see no key), ragged tiles and
 * Tq != Tk, exactly the rows a count over mask_rule_visible finds, and
 * the row blocks it gives (lo / Br .. hi / Br) are the schedule's
 * ibegin and iend for the key block, and their steps its step count.
 * And what the ordered dQ's turn (fast_bwd_dq_turn) takes of them: the
 * end of the row blocks never goes back as j grows, so bisection finds
 * the first key block that reaches past row block i, and the key blocks
 * before j that see i are every one from that first on.
 */
START_TEST(test_rows_of_key_block)
{
	struct inputs_rng rng;
	struct shape sh;
	struct problem p;
	struct schedule s;
	char what[256];
	long lo, hi, steps;
	int n, j, r, c, c0, c1, rlo, rhi, i0, i1, empty = 0, one_side = 0;
	int ib[60], ie[60], i, jj, first, seen, late = 0;

	inputs_rng_seed(&rng, 29);
	for (n = 0; n < 600; n++) {
		memset(&sh, 0, sizeof sh);
		sh.tq = 1 + (int)(inputs_rng_next(&rng) % 50);
		sh.tk = 1 + (int)(inputs_rng_next(&rng) % 50);
		sh.br = 1 + (int)(inputs_rng_next(&rng) % 9);
		sh.bc = 1 + (int)(inputs_rng_next(&rng) % 9);
		sh.left = (int)(inputs_rng_next(&rng) % 14) - 1;
		sh.right = (int)(inputs_rng_next(&rng) % 14) - 1;
		if (n % 5 == 0)
			sh.left = -1;
		else if (n % 5 == 1)
			sh.right = -1;
		sh.order = ORDER_FA1;
		build(&sh, INPUTS_RAMP, 1, &p);
		describe(&sh, what, sizeof what);
		schedule_of(&sh, &p, &s);
		one_side += (sh.left < 0) != (sh.right < 0);
		for (r = 0; r < p.tq; r++) {
			mask_rule_keys(s.mask, r, r, p.tq, p.tk, &lo, &hi);
			empty += lo > hi;
		}
		for (steps = 0, j = 0; j < s.tc; j++) {
			c0 = j * s.bc;
			c1 = c0 + s.bc < p.tk ? c0 + s.bc - 1 : p.tk - 1;
			for (rlo = -1, rhi = -2, r = 0; r < p.tq; r++)
				for (c = c0; c <= c1; c++)
					if (mask_rule_visible(s.mask, r, c, p.tq,
					    p.tk)) {
						rlo = rlo < 0 ? r : rlo;
						rhi = r;
						break;
					}
			mask_rule_rows(s.mask, c0, c1, p.tq, p.tk, &lo, &hi);
			if (rlo < 0)
				ck_assert_msg(lo > hi, "%s: key block %d: rows "
				    "[%ld, %ld], none by count", what, j, lo, hi);
			else
				ck_assert_msg(lo == rlo && hi == rhi, "%s: key "
				    "block %d: rows [%ld, %ld], by count [%d, %d]",
				    what, j, lo, hi, rlo, rhi);
			i0 = lo > hi ? 0 : (int)(lo / s.br);
			i1 = lo > hi ? 0 : (int)(hi / s.br + 1);
			ck_assert_msg(i1 - i0 == s.iend[j] - s.ibegin[j] &&
			    (i0 == i1 || i0 == s.ibegin[j]), "%s: key block %d: "
			    "row blocks [%d, %d), the schedule's [%d, %d)", what,
			    j, i0, i1, s.ibegin[j], s.iend[j]);
			steps += i1 - i0;
			ck_assert(j < 60);
			ib[j] = i0;
			ie[j] = i1;
			ck_assert_msg(j == 0 || i1 >= ie[j - 1], "%s: key "
			    "block %d's row blocks end at %d, before %d's at "
			    "%d", what, j, i1, j - 1, ie[j - 1]);
		}
		ck_assert_int_eq(steps, s.nsteps);
		for (j = 0; j < s.tc; j++)
			for (i = ib[j]; i < ie[j]; i++) {
				for (first = 0; ie[first] <= i; first++)
					;
				for (seen = 0, jj = 0; jj < j; jj++)
					seen += ib[jj] <= i && i < ie[jj];
				ck_assert_msg(seen == j - first, "%s: key "
				    "block %d, row block %d: %d blocks before "
				    "it see the row block, the turn says %d",
				    what, j, i, seen, j - first);
				late += first > 0;
			}
		schedule_free(&s);
		problem_free(&p);
	}
	ck_assert_int_gt(empty, 0);
	ck_assert_int_gt(one_side, 100);
	/* row blocks whose first key block is not 0: a left edge's */
	ck_assert_int_gt(late, 100);
}
END_TEST

/* ---- the forward against the double reference ---- */

/* Runs the sim (and the combine for splits): O and lse of every head. */
static void
run_forward(const struct problem *p, const struct shape *sh,
    const struct online_rule *rule, float *o, float *lse)
{
	struct tiling t = { sh->br, sh->bc, sh->order };

	tu_run_split(p, &t, sh->splits, sh->pack, rule, o, lse);
}

/* 300 random problems with every rule, fp32: O within 2e-5 of the
 * double reference (relative to max(1, |O|)), lse within 1e-5, and the
 * empty rows (lse -inf) where the reference has them. */
START_TEST(test_forward_random)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct inputs_rng rng;
	struct shape sh;
	struct problem p;
	float *o, *lse;
	double e, le;
	char what[256];
	int n;

	inputs_rng_seed(&rng, 2028);
	for (n = 0; n < 300; n++) {
		random_shape(&rng, &sh);
		build(&sh, (enum inputs_kind)(n % 3 == 0 ? INPUTS_RAMP : INPUTS_NORMAL),
		    (uint64_t)n + 1, &p);
		describe(&sh, what, sizeof what);
		rule.convention = n % 2 ? CONV_NORMALIZED : CONV_UNNORMALIZED;
		o = malloc((size_t)problem_rows(&p) * p.dv * sizeof *o);
		lse = malloc((size_t)problem_rows(&p) * sizeof *lse);
		ck_assert(o != NULL && lse != NULL);
		run_forward(&p, &sh, &rule, o, lse);
		e = tu_forward_error(&p, o, lse, &le);
		ck_assert_msg(e < 2e-5 && le < 1e-5, "case %d (%s): O off by %g, "
		    "lse by %g", n, what, e, le);
		free(o);
		free(lse);
		problem_free(&p);
	}
}
END_TEST

/* Each rule alone changes O (so the tests above test something): against
 * the same problem without it. */
START_TEST(test_each_rule_changes_o)
{
	static const struct shape base = { 12, 20, 4, 4, -1, -1, 0, 0, ORDER_FA2,
		1, 1, 1, 0, 0 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct shape sh[3];
	struct problem p0, p;
	float o0[12 * 3], l0[12], o[12 * 3], l[12];
	double d;
	int k, x;

	build(&base, INPUTS_NORMAL, 5, &p0);
	run_forward(&p0, &base, &rule, o0, l0);
	for (k = 0; k < 3; k++) {
		sh[k] = base;
		if (k == 0)
			sh[k].left = 3, sh[k].right = 1;
		else if (k == 1)
			sh[k].softcap = 0.5;
		else
			sh[k].alibi = 0.5;
		build(&sh[k], INPUTS_NORMAL, 5, &p);
		run_forward(&p, &sh[k], &rule, o, l);
		for (x = 0, d = 0.0; x < 12 * 3; x++)
			d = fmax(d, fabs(o[x] - o0[x]));
		ck_assert_msg(d > 1e-2, "rule %d changes O by %g only", k, d);
		problem_free(&p);
	}
	problem_free(&p0);
}
END_TEST

/*
 * Rows that see no key: with Tq > Tk a window's right edge r + Tk - Tq +
 * R lies left of key 0 for the first Tq - Tk - R rows (bottom-right
 * alignment: the left edge never passes the last key).  They output 0
 * and lse = -inf, never NaN, with softcap and ALiBi on, split or not,
 * packed or not; and the backward gives them zero gradients
 * (test_backward_random draws such shapes too).
 */
START_TEST(test_empty_rows)
{
	static const struct shape shapes[] = {
		{ 20, 6, 4, 4, 0, 0, 2.0, 0.3, ORDER_FA2, 1, 1, 1, 0, 0 },
		{ 20, 6, 3, 5, 2, 0, 2.0, 0.3, ORDER_FA1, 1, 1, 3, 0, 0 },
		{ 25, 10, 4, 4, -1, 2, 0.0, 0.0, ORDER_FA2, 1, 1, 1, 0, 1 },
		{ 20, 6, 4, 2, 1, 1, 3.0, 0.1, ORDER_FA2, 2, 1, 2, 1, 0 },
	};
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem p;
	float o[2 * 30 * 3], lse[2 * 30];
	double e, le;
	int k, r, x, empty;

	for (k = 0; k < (int)(sizeof shapes / sizeof shapes[0]); k++) {
		build(&shapes[k], INPUTS_NORMAL, 3, &p);
		run_forward(&p, &shapes[k], &rule, o, lse);
		e = tu_forward_error(&p, o, lse, &le);
		ck_assert_msg(e < 2e-5 && le < 1e-5, "shape %d: O off by %g", k, e);
		for (r = 0, empty = 0; r < problem_rows(&p); r++)
			if (isinf(lse[r])) {
				ck_assert(lse[r] < 0);
				for (x = 0; x < p.dv; x++)
					ck_assert(o[(size_t)r * p.dv + x] == 0.0f);
				empty++;
			}
		ck_assert_msg(empty > 0, "shape %d has no empty row", k);
		problem_free(&p);
	}
}
END_TEST

/* ---- the gradients ---- */

/* The backward of one head against gradref: dQ, dK, dV (or dS, dV for a
 * scores problem) within 1e-4 of the largest entry. */
static void
check_backward(const struct shape *sh, uint64_t seed, const char *what)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct tiling t = { sh->br, sh->bc, ORDER_FA1 };
	struct backward_input in;
	struct backward_grads g;
	struct backward *b;
	struct problem_spec spec;
	struct problem p;
	struct sim *sim;
	float *o, *lse, *m, *dout;
	double *ref[4], worst, big;
	float *got[4];
	size_t n[4], e;
	char err[256];
	int k;

	build(sh, INPUTS_NORMAL, seed, &p);
	problem_spec_init(&spec);
	spec.seed = seed;
	ck_assert_msg(problem_grad_output(&spec, &p, &dout, err, sizeof err) == 0,
	    "%s", err);
	o = malloc((size_t)p.tq * p.dv * sizeof *o);
	lse = malloc((size_t)p.tq * sizeof *lse);
	m = malloc((size_t)p.tq * sizeof *m);
	ck_assert(o != NULL && lse != NULL && m != NULL);
	sim = sim_new(&p, &t, &rule, err, sizeof err);
	ck_assert_msg(sim != NULL, "%s", err);
	ck_assert_int_eq(backward_forward(sim, NULL, o, lse, m), 0);
	in.o = o;
	in.lse = lse;
	in.m = m;
	in.dout = dout;
	b = backward_new(&p, &t, &in, BWD_BUG_NONE, err, sizeof err);
	ck_assert_msg(b != NULL, "%s", err);
	n[0] = (size_t)p.tq * (p.d > 0 ? p.d : 1);
	n[1] = (size_t)p.tk * (p.d > 0 ? p.d : 1);
	n[2] = (size_t)p.tk * p.dv;
	n[3] = (size_t)p.tq * p.tk;
	for (k = 0; k < 4; k++) {
		got[k] = calloc(n[k], sizeof *got[k]);
		ref[k] = calloc(n[k], sizeof *ref[k]);
		ck_assert(got[k] != NULL && ref[k] != NULL);
	}
	g.dq = p.scores_mode ? NULL : got[0];
	g.dk = p.scores_mode ? NULL : got[1];
	g.dv = got[2];
	g.ds = got[3];
	ck_assert_int_eq(backward_run(b, NULL, NULL, &g), 0);
	ck_assert(gradref_gradients(&p, dout, ref[0], ref[1], ref[2], ref[3], err,
	    sizeof err) == 0);
	for (k = p.scores_mode ? 2 : 0; k < 4; k++) {
		worst = 0.0;
		big = 1e-30;
		for (e = 0; e < n[k]; e++) {
			ck_assert(isfinite(got[k][e]));
			worst = fmax(worst, fabs(got[k][e] - ref[k][e]));
			big = fmax(big, fabs(ref[k][e]));
		}
		ck_assert_msg(worst <= 1e-4 * big, "%s: d%c off by %g of %g", what,
		    "QKVS"[k], worst, big);
	}
	for (k = 0; k < 4; k++) {
		free(got[k]);
		free(ref[k]);
	}
	backward_free(b);
	sim_free(sim);
	free(o);
	free(lse);
	free(m);
	free(dout);
	problem_free(&p);
}

/* 150 random one-head problems with every rule: the tiled backward
 * against the double gradients. */
START_TEST(test_backward_random)
{
	struct inputs_rng rng;
	struct shape sh;
	char what[256];
	int n;

	inputs_rng_seed(&rng, 2029);
	for (n = 0; n < 150; n++) {
		random_shape(&rng, &sh);
		sh.heads = sh.kv_heads = 1;
		sh.splits = 1;
		sh.pack = 0;
		describe(&sh, what, sizeof what);
		check_backward(&sh, (uint64_t)n + 7, what);
	}
}
END_TEST

/*
 * gradref itself against central differences of the double forward's
 * loss sum(dO o O), with the cap and ALiBi on: the cap's backward
 * (1 - (s_capped / C)^2) and ALiBi's (none) are what it must get right.
 * A planted fault (the cap's factor left out) must fail the same check.
 */
START_TEST(test_gradref_finite_differences)
{
	static const struct shape shapes[] = {
		{ 6, 9, 2, 2, 3, 1, 1.5, 0.4, ORDER_FA1, 1, 1, 1, 0, 0 },
		{ 7, 5, 2, 2, -1, 0, 0.8, 0.0, ORDER_FA1, 1, 1, 1, 0, 0 },
		{ 5, 8, 2, 2, -1, -1, 0.0, 0.7, ORDER_FA1, 1, 1, 1, 0, 0 },
		{ 6, 6, 2, 2, 2, 2, 1.2, 0.2, ORDER_FA1, 1, 1, 1, 0, 1 },
	};
	struct problem_spec spec;
	struct problem p;
	float *dout;
	double *g, worst, big;
	char err[256];
	int k, n;

	for (k = 0; k < (int)(sizeof shapes / sizeof shapes[0]); k++) {
		build(&shapes[k], INPUTS_NORMAL, 11, &p);
		problem_spec_init(&spec);
		spec.seed = 4;
		ck_assert(problem_grad_output(&spec, &p, &dout, err, sizeof err) == 0);
		n = p.scores_mode ? p.tq * p.tk : p.tq * p.d;
		g = calloc((size_t)n, sizeof *g);
		ck_assert(g != NULL);
		ck_assert(gradref_gradients(&p, dout, p.scores_mode ? NULL : g, NULL,
		    NULL, p.scores_mode ? g : NULL, err, sizeof err) == 0);
		worst = tu_fd_error(&p, dout, g, &big);
		ck_assert_msg(worst <= 1e-5 * fmax(1.0, big), "shape %d: gradref "
		    "off the finite differences by %g (max %g)", k, worst, big);
		if (shapes[k].softcap > 0) {
			/* the cap's factor left out: the same check fails */
			p.mask.softcap = 0.0f;
			ck_assert(gradref_gradients(&p, dout, p.scores_mode ? NULL : g,
			    NULL, NULL, p.scores_mode ? g : NULL, err, sizeof err) == 0);
			p.mask.softcap = (float)shapes[k].softcap;
			worst = tu_fd_error(&p, dout, g, NULL);
			ck_assert_msg(worst > 1e-3 * fmax(1.0, big), "shape %d: a "
			    "gradient without the cap's factor passed (%g)", k, worst);
		}
		free(g);
		free(dout);
		problem_free(&p);
	}
}
END_TEST

/* ---- the cost ---- */

/* The forward's matmul FLOPs of a problem of T rows and keys. */
static double
forward_flops(int t, int left, int right)
{
	struct shape sh = { t, t, 16, 16, left, right, 0, 0, ORDER_FA2, 1, 1, 1,
		0, 0 };
	struct tiling tl = { 16, 16, ORDER_FA2 };
	struct traffic_table tt;
	struct traffic tot;
	struct schedule s;
	struct problem p;
	char err[256];

	build(&sh, INPUTS_RAMP, 1, &p);
	ck_assert(schedule_init(&s, &p, &tl, err, sizeof err) == 0);
	ck_assert(traffic_init(&tt, &p, &s, err, sizeof err) == 0);
	traffic_upto(&tt, s.nsteps - 1, &tot);
	traffic_free(&tt);
	schedule_free(&s);
	problem_free(&p);
	return (double)tot.flops;
}

/*
 * A window's work grows as T, full attention's as T^2: doubling T from
 * 1024 to 2048 doubles the windowed FLOPs (within the tiles at the
 * edges: 1.9 to 2.1) and quadruples the full ones (and the causal ones),
 * and the windowed count is what the visible tiles cost.
 */
START_TEST(test_window_cost_linear)
{
	double w1 = forward_flops(1024, 64, 0), w2 = forward_flops(2048, 64, 0);
	double f1 = forward_flops(1024, -1, -1), f2 = forward_flops(2048, -1, -1);
	double c1 = forward_flops(1024, -1, 0), c2 = forward_flops(2048, -1, 0);

	ck_assert_msg(w2 / w1 > 1.9 && w2 / w1 < 2.1, "window: %g -> %g (x%g)",
	    w1, w2, w2 / w1);
	ck_assert_msg(f2 / f1 > 3.9 && f2 / f1 < 4.1, "full: x%g", f2 / f1);
	ck_assert_msg(c2 / c1 > 3.9 && c2 / c1 < 4.1, "causal: x%g", c2 / c1);
	/* each row block sees its own diagonal tile and 64 / 16 = 4 before:
	 * 5 tiles (4 for the first blocks), each 2 (2 16 16 5) FLOPs for S
	 * and P V (d = 5, dv = 3: 2 16 16 5 + 2 16 16 3) */
	ck_assert_double_eq_tol(w1, (64.0 * 5 - (4 + 3 + 2 + 1)) *
	    (2.0 * 16 * 16 * 5 + 2.0 * 16 * 16 * 3), 0.5);
}
END_TEST

/*
 * The traffic table counts a windowed schedule's steps in runs that
 * count alike (traffic.c's add_run: in fa1 a key block's run is cut
 * where last_in_row stops and where a window's first_in_row starts):
 * its totals must be the sum of every step counted alone, for random
 * windows, both orders, heads, packing and splits, forward and backward.
 */
START_TEST(test_traffic_runs)
{
	struct inputs_rng rng;
	struct shape sh;
	struct problem p;
	struct schedule s;
	struct traffic_table tt;
	struct traffic tot, sum, one;
	struct schedule_tile tile;
	char err[256], what[256];
	long k;
	int n, bwd;

	inputs_rng_seed(&rng, 2031);
	for (n = 0; n < 200; n++) {
		random_shape(&rng, &sh);
		sh.scores = 0;
		bwd = n % 4 == 0;
		if (bwd) {
			sh.heads = sh.kv_heads = 1;
			sh.splits = 1;
			sh.pack = 0;
			sh.order = ORDER_FA1;
		}
		build(&sh, INPUTS_RAMP, 1, &p);
		describe(&sh, what, sizeof what);
		schedule_of(&sh, &p, &s);
		ck_assert_msg((bwd ? traffic_backward_init(&tt, &p, &s, err,
		    sizeof err) : traffic_init(&tt, &p, &s, err, sizeof err)) == 0,
		    "%s", err);
		memset(&sum, 0, sizeof sum);
		for (k = 0; k < s.nsteps; k++) {
			schedule_tile(&s, k, &tile);
			if (bwd)
				traffic_backward_step(&tt, &tile, &one);
			else
				traffic_step(&tt, &tile, &one);
			sum.hbm_read += one.hbm_read;
			sum.hbm_write += one.hbm_write;
			sum.flops += one.flops;
			sum.exps += one.exps;
			sum.kv_read += one.kv_read;
		}
		if (s.nsteps > 0) {
			if (bwd)
				traffic_backward_at(&tt, s.nsteps - 1, TRAFFIC_BWD_WRITE,
				    &tot);
			else
				traffic_upto(&tt, s.nsteps - 1, &tot);
			ck_assert_msg(tot.flops == sum.flops && tot.exps == sum.exps &&
			    tot.kv_read == sum.kv_read && (bwd ||
			    (tot.hbm_read == sum.hbm_read &&
			    tot.hbm_write == sum.hbm_write)), "%s%s: the table's "
			    "totals (read %llu, flops %llu) are not its steps' (read "
			    "%llu, flops %llu)", what, bwd ? " backward" : "",
			    (unsigned long long)tot.hbm_read,
			    (unsigned long long)tot.flops,
			    (unsigned long long)sum.hbm_read,
			    (unsigned long long)sum.flops);
		}
		traffic_free(&tt);
		schedule_free(&s);
		problem_free(&p);
	}
}
END_TEST

/* ---- the bug modes ---- */

/*
 * softcap-after-max: with scores far past the cap, the max of the
 * uncapped scores leaves every exp(capped - max) at 0, and rows lose
 * their output; the correct rule on the same problem is within 1e-5.
 * window-off-by-one: each row misses its window's first key, and O moves
 * far from the reference.  Each needs its rule, and is refused without.
 */
START_TEST(test_bug_modes_damage)
{
	static const struct shape capped = { 8, 12, 4, 4, -1, -1, 4.0, 0.0,
		ORDER_FA2, 1, 1, 1, 0, 0 };
	static const struct shape windowed = { 12, 12, 4, 4, 3, 0, 0.0, 0.0,
		ORDER_FA2, 1, 1, 1, 0, 0 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct tiling t = { 4, 4, ORDER_FA2 };
	struct problem_spec spec;
	struct problem p;
	float o[12 * 3], lse[12];
	double e, le;
	char err[256];

	build(&capped, INPUTS_NORMAL, 9, &p);
	p.scale = 300.0f;	/* scores in the hundreds, the cap at 4 */
	run_forward(&p, &capped, &rule, o, lse);
	e = tu_forward_error(&p, o, lse, &le);
	ck_assert_msg(e < 1e-5, "the correct rule is off by %g", e);
	rule.mask_bug = MASK_BUG_MAX_BEFORE_CAP;
	run_forward(&p, &capped, &rule, o, lse);
	ck_assert(isinf(lse[0]) || isinf(lse[1]) || isinf(lse[2]));
	problem_free(&p);

	build(&windowed, INPUTS_NORMAL, 9, &p);
	rule.mask_bug = MASK_BUG_NONE;
	run_forward(&p, &windowed, &rule, o, lse);
	ck_assert(tu_forward_error(&p, o, lse, &le) < 1e-5);
	rule.mask_bug = MASK_BUG_WINDOW_EDGE;
	run_forward(&p, &windowed, &rule, o, lse);
	ck_assert_msg(tu_rel_error(&p, o) > 0.05, "window-off-by-one: O only "
	    "off by %g", tu_rel_error(&p, o));
	problem_free(&p);

	/* without the rule each needs, refused by name */
	problem_spec_init(&spec);
	ck_assert(problem_build(&spec, &p, err, sizeof err) == 0);
	rule.mask_bug = MASK_BUG_MAX_BEFORE_CAP;
	ck_assert(sim_new(&p, &t, &rule, err, sizeof err) == NULL);
	ck_assert(strstr(err, "--softcap") != NULL);
	rule.mask_bug = MASK_BUG_WINDOW_EDGE;
	ck_assert(sim_new(&p, &t, &rule, err, sizeof err) == NULL);
	ck_assert(strstr(err, "--window") != NULL);
	problem_free(&p);
}
END_TEST

/* --window -1,0 is --causal: the same flag (what the causal-only kernels
 * read), the same schedule and the same bits of O; -1,-1 is no mask. */
START_TEST(test_window_causal_alias)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct tiling t = { 3, 5, ORDER_FA2 };
	struct problem_spec spec;
	struct problem a, b;
	float *oa, *la, *ob, *lb;
	char err[256];

	problem_spec_init(&spec);
	spec.tq = 13;
	spec.tk = 9;
	spec.input = INPUTS_NORMAL;
	spec.causal = 1;
	ck_assert(problem_build(&spec, &a, err, sizeof err) == 0);
	spec.causal = 0;
	spec.window_set = 1;
	spec.window_left = -1;
	spec.window_right = 0;
	ck_assert(problem_build(&spec, &b, err, sizeof err) == 0);
	ck_assert(a.causal && b.causal && !problem_beyond_causal(&b));
	tu_run(&a, &t, &rule, &oa, &la);
	tu_run(&b, &t, &rule, &ob, &lb);
	ck_assert(memcmp(oa, ob, 13 * 4 * sizeof *oa) == 0);
	ck_assert(memcmp(la, lb, 13 * sizeof *la) == 0);
	free(oa);
	free(la);
	free(ob);
	free(lb);
	problem_free(&b);
	spec.window_right = -1;
	ck_assert(problem_build(&spec, &b, err, sizeof err) == 0);
	ck_assert(!b.causal && !b.mask.window && !problem_beyond_causal(&b));
	problem_free(&a);
	problem_free(&b);
}
END_TEST

/* ---- refusals ---- */

START_TEST(test_refusals)
{
	struct problem_spec spec;
	struct problem p;
	char err[256];

	problem_spec_init(&spec);
	spec.causal = 1;
	spec.window_set = 1;
	spec.window_left = 4;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == -1);
	ck_assert(strstr(err, "--causal and --window") != NULL);

	problem_spec_init(&spec);
	spec.window_set = 1;
	spec.window_left = -2;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == -1);

	problem_spec_init(&spec);
	spec.softcap_set = 1;
	spec.softcap = -1;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == -1);
	ck_assert(strstr(err, "--softcap") != NULL);

	problem_spec_init(&spec);
	spec.heads = spec.kv_heads = 3;
	spec.alibi_slopes = "0.5,0.25";
	ck_assert(problem_build(&spec, &p, err, sizeof err) == -1);
	ck_assert(strstr(err, "2 slopes but --heads is 3") != NULL);
	spec.alibi_slopes = "0.5,0.25,x";
	ck_assert(problem_build(&spec, &p, err, sizeof err) == -1);
	ck_assert(strstr(err, "slope 3") != NULL);
	spec.alibi_slopes = "0.5,0.25,0.1";
	spec.alibi_set = 1;
	spec.alibi = 1;
	ck_assert(problem_build(&spec, &p, err, sizeof err) == -1);
	ck_assert(strstr(err, "--alibi and --alibi-slopes") != NULL);
	spec.alibi_set = 0;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	ck_assert(p.alibi != NULL && p.alibi[2] == 0.1f);
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("mask");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_causal_is_a_window);
	tcase_add_test(tc, test_window_definition);
	tcase_add_test(tc, test_tanh);
	tcase_add_test(tc, test_skipped_tiles_brute_force);
	tcase_add_test(tc, test_rows_of_key_block);
	tcase_add_test(tc, test_forward_random);
	tcase_add_test(tc, test_each_rule_changes_o);
	tcase_add_test(tc, test_empty_rows);
	tcase_add_test(tc, test_backward_random);
	tcase_add_test(tc, test_gradref_finite_differences);
	tcase_add_test(tc, test_window_cost_linear);
	tcase_add_test(tc, test_traffic_runs);
	tcase_add_test(tc, test_bug_modes_damage);
	tcase_add_test(tc, test_window_causal_alias);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	return s;
}
