/*
 * check_reference.c - the double reference (model/reference.h): its
 * rows are the same bits however many threads compute them and in
 * whatever order they are asked for, and it is attention.
 */
#include "config.h"

#include "testutil.h"
#include "model/reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
build_spec(struct problem *p, int tq, int tk, int d, int dv, int causal)
{
	struct problem_spec spec;
	char err[256];

	problem_spec_init(&spec);
	spec.tq = tq;
	spec.tk = tk;
	spec.d = d;
	spec.dv = dv;
	spec.causal = causal;
	spec.input = INPUTS_NORMAL;
	spec.seed = 7;
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
}

/* Every thread count gives reference_attention's bits, row for row. */
START_TEST(test_threads_same_bits)
{
	static const int threads[] = { 1, 2, 3, 7, 64, 0 };
	const int causal = _i;
	struct problem p;
	double *o, *lse, *o1, *lse1;
	char err[256];
	size_t no;
	int t;

	build_spec(&p, 131, 517, 24, 16, causal);
	no = (size_t)p.tq * p.dv;
	o = calloc(no, sizeof *o);
	lse = calloc((size_t)p.tq, sizeof *lse);
	o1 = calloc(no, sizeof *o1);
	lse1 = calloc((size_t)p.tq, sizeof *lse1);
	ck_assert(o && lse && o1 && lse1);
	ck_assert_int_eq(reference_attention(&p, o, lse, err, sizeof err), 0);
	for (t = 0; t < (int)(sizeof threads / sizeof threads[0]); t++) {
		memset(o1, 0xff, no * sizeof *o1);
		memset(lse1, 0xff, (size_t)p.tq * sizeof *lse1);
		ck_assert_int_eq(reference_rows(&p, NULL, p.tq, threads[t], o1,
		    lse1, err, sizeof err), 0);
		ck_assert_msg(memcmp(o, o1, no * sizeof *o) == 0, "O differs with "
		    "%d threads", threads[t]);
		ck_assert_msg(memcmp(lse, lse1, (size_t)p.tq * sizeof *lse) == 0,
		    "lse differs with %d threads", threads[t]);
	}
	free(o);
	free(lse);
	free(o1);
	free(lse1);
	problem_free(&p);
}
END_TEST

/* A list of rows, in any order and with repeats: row i of the result is
 * the full reference's row rows[i], the same bits. */
START_TEST(test_rows_subset)
{
	static const int rows[] = { 40, 0, 39, 17, 17, 3 };
	const int n = (int)(sizeof rows / sizeof rows[0]);
	struct problem p;
	double *o, *lse, o1[6 * 8], lse1[6];
	char err[256];
	int i;

	build_spec(&p, 41, 29, 5, 8, 1);
	o = calloc((size_t)p.tq * p.dv, sizeof *o);
	lse = calloc((size_t)p.tq, sizeof *lse);
	ck_assert(o && lse);
	ck_assert_int_eq(reference_attention(&p, o, lse, err, sizeof err), 0);
	ck_assert_int_eq(reference_rows(&p, rows, n, 4, o1, lse1, err,
	    sizeof err), 0);
	for (i = 0; i < n; i++) {
		ck_assert_msg(memcmp(o + (size_t)rows[i] * p.dv, o1 + i * p.dv,
		    (size_t)p.dv * sizeof *o) == 0, "row %d", rows[i]);
		ck_assert(memcmp(&lse[rows[i]], &lse1[i], sizeof *lse) == 0);
	}
	free(o);
	free(lse);
	problem_free(&p);
}
END_TEST

/* Attention itself, by hand: keys all alike give every visible key the
 * same weight, so O is the mean of V's rows and lse = s + log Tk. */
START_TEST(test_equal_keys)
{
	struct problem p;
	double o[4 * 3], lse[4], mean;
	char err[256];
	int r, c, x;

	build_spec(&p, 4, 5, 2, 3, 0);
	for (c = 0; c < p.tk; c++) {
		p.k[c * p.d] = 1.0f;
		p.k[c * p.d + 1] = -2.0f;
	}
	ck_assert_int_eq(reference_rows(&p, NULL, p.tq, 2, o, lse, err,
	    sizeof err), 0);
	for (r = 0; r < p.tq; r++) {
		double s = (double)p.scale * ((double)p.q[r * p.d] -
		    2.0 * (double)p.q[r * p.d + 1]);

		ck_assert(fabs(lse[r] - (s + log(5.0))) < 1e-12);
		for (x = 0; x < p.dv; x++) {
			for (mean = 0, c = 0; c < p.tk; c++)
				mean += p.v[c * p.dv + x];
			ck_assert(fabs(o[r * p.dv + x] - mean / 5.0) < 1e-12);
		}
	}
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("reference");
	TCase *tc = tcase_create("double reference");

	tcase_add_loop_test(tc, test_threads_same_bits, 0, 2);
	tcase_add_test(tc, test_rows_subset);
	tcase_add_test(tc, test_equal_keys);
	suite_add_tcase(s, tc);
	return s;
}
