/* check_schedule.c - step numbering in both orders, masks, ragged tiles. */
#include "config.h"

#include "testutil.h"

#include <stdlib.h>

/* Checks a schedule against brute force over all tiles. */
static void
check_against_brute_force(const struct problem *p, const struct tiling *t)
{
	struct schedule s;
	struct schedule_tile tile;
	char err[256];
	long expect = 0;
	int i, j, r, c, visible, outer, inner;

	ck_assert_int_eq(schedule_init(&s, p, t, err, sizeof err), 0);
	for (outer = 0; outer < (t->order == ORDER_FA2 ? s.tr : s.tc); outer++) {
		for (inner = 0; inner < (t->order == ORDER_FA2 ? s.tc : s.tr); inner++) {
			i = t->order == ORDER_FA2 ? outer : inner;
			j = t->order == ORDER_FA2 ? inner : outer;
			visible = 0;
			for (r = i * s.br; r < (i + 1) * s.br && r < p->tq; r++)
				for (c = j * s.bc; c < (j + 1) * s.bc && c < p->tk; c++)
					visible |= problem_visible(p, r, c);
			ck_assert_int_eq(schedule_skipped(&s, i, j), !visible);
			if (!visible) {
				ck_assert_int_eq(schedule_step_of(&s, i, j), -1);
				continue;
			}
			ck_assert_int_eq(schedule_step_of(&s, i, j), expect);
			schedule_tile(&s, expect, &tile);
			ck_assert_int_eq(tile.i, i);
			ck_assert_int_eq(tile.j, j);
			ck_assert_int_eq(tile.r0, i * s.br);
			ck_assert_int_le(tile.r1, p->tq);
			ck_assert_int_le(tile.c1, p->tk);
			ck_assert_int_eq(tile.first_in_row, j == 0);
			expect++;
		}
	}
	ck_assert_int_eq(s.nsteps, expect);
	schedule_free(&s);
}

START_TEST(test_brute_force)
{
	struct inputs_rng rng;
	struct tu_case c;
	int n;

	inputs_rng_seed(&rng, 11);
	for (n = 0; n < 300; n++) {
		tu_random_case(&rng, 50, TU_CAUSAL, DTYPE_FP32, &c);
		check_against_brute_force(&c.p, &c.t);
		tu_case_free(&c);
	}
}
END_TEST

START_TEST(test_small_by_hand)
{
	struct problem_spec spec;
	struct problem p;
	struct schedule s;
	struct tiling t = { 2, 2, ORDER_FA1 };
	struct schedule_tile tile;
	char err[256];

	/* Tq = 6, Tk = 4, causal: rows 0 and 1 see nothing; row r >= 2 sees
	 * keys c <= r - 2.  Tiles 2 x 2: row block 0 is skipped entirely. */
	problem_spec_init(&spec);
	spec.tq = 6;
	spec.tk = 4;
	spec.causal = 1;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	ck_assert_int_eq(schedule_init(&s, &p, &t, err, sizeof err), 0);
	ck_assert_int_eq(s.jend[0], 0);
	ck_assert_int_eq(s.jend[1], 1);
	ck_assert_int_eq(s.jend[2], 2);
	ck_assert_int_eq(s.nsteps, 3);
	/* fa1: key block 0 visits row blocks 1, 2; key block 1 visits 2. */
	schedule_tile(&s, 0, &tile);
	ck_assert(tile.i == 1 && tile.j == 0 && tile.first_in_outer && tile.last_in_row);
	schedule_tile(&s, 1, &tile);
	ck_assert(tile.i == 2 && tile.j == 0 && !tile.first_in_outer && !tile.last_in_row);
	schedule_tile(&s, 2, &tile);
	ck_assert(tile.i == 2 && tile.j == 1 && tile.first_in_outer && tile.last_in_row);
	schedule_free(&s);

	/* Tiles bigger than the problem: one tile. */
	t.br = t.bc = 1000;
	ck_assert_int_eq(schedule_init(&s, &p, &t, err, sizeof err), 0);
	ck_assert_int_eq(s.nsteps, 1);
	ck_assert_int_eq(s.br, 6);
	schedule_free(&s);
	t.bc = 0;
	ck_assert_int_eq(schedule_init(&s, &p, &t, err, sizeof err), -1);
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("schedule");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_brute_force);
	tcase_add_test(tc, test_small_by_hand);
	suite_add_tcase(s, tc);
	return s;
}
