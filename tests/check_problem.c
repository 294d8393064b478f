/* check_problem.c - building problems: shapes, files, refusals. */
#include "config.h"

#include "testutil.h"
#include "model/npy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static const char *
write_npy(const char *name, const float *x, int ndim, long r, long c)
{
	static char paths[4][128];
	static int next;
	long shape[2] = { r, c };
	char err[256], *path = paths[next++ % 4];

	snprintf(path, 128, "%s/%s", dir, name);
	ck_assert_msg(npy_write(path, x, ndim, shape, err, sizeof err) == 0, "%s", err);
	return path;
}

static void
setup(void)
{
	strcpy(dir, "/tmp/check_problem.XXXXXX");
	ck_assert(mkdtemp(dir) != NULL);
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert(system(cmd) == 0);
}

START_TEST(test_defaults)
{
	struct problem_spec spec;
	struct problem p;
	char err[256];

	problem_spec_init(&spec);
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	ck_assert_int_eq(p.tq, 16);
	ck_assert_int_eq(p.tk, 16);
	ck_assert_int_eq(p.d, 4);
	ck_assert_int_eq(p.dv, 4);
	ck_assert_float_eq(p.scale, 0.5f);
	ck_assert(!p.scores_mode);
	/* K^T really is K transposed. */
	ck_assert_float_eq(p.kt[3 * 16 + 5], p.k[5 * 4 + 3]);
	problem_free(&p);
}
END_TEST

/* ramp: each key tile's largest score exceeds the previous tile's. */
START_TEST(test_ramp_rises)
{
	struct problem_spec spec;
	struct problem p;
	char err[256];
	float best[4] = { -1e30f, -1e30f, -1e30f, -1e30f };
	int c, x;

	problem_spec_init(&spec);
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	for (c = 0; c < 16; c++) {
		float s = 0;
		for (x = 0; x < 4; x++)
			s += p.q[x] * p.k[c * 4 + x];
		if (s > best[c / 4])
			best[c / 4] = s;
	}
	for (c = 1; c < 4; c++)
		ck_assert_float_gt(best[c], best[c - 1]);
	problem_free(&p);
}
END_TEST

START_TEST(test_files)
{
	float q[6] = { 1, 2, 3, 4, 5, 6 }, k[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
	float v[6] = { 1, 2, 3, 4, 5, 6 }, bad[3] = { 1, NAN, 2 };
	struct problem_spec spec;
	struct problem p;
	char err[256];

	problem_spec_init(&spec);
	spec.q.path = write_npy("q.npy", q, 2, 2, 3);
	spec.k.path = write_npy("k.npy", k, 2, 3, 3);
	spec.v.path = write_npy("v.npy", v, 2, 3, 2);
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(p.tq, 2);
	ck_assert_int_eq(p.tk, 3);
	ck_assert_int_eq(p.d, 3);
	ck_assert_int_eq(p.dv, 2);
	problem_free(&p);

	/* --tq that contradicts the file */
	spec.tq = 5;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "--tq 5") && strstr(err, "q.npy"), "%s", err);
	spec.tq = 0;

	/* K with the wrong width */
	spec.k.path = write_npy("k2.npy", q, 2, 3, 2);
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "k2.npy") && strstr(err, "d)"), "%s", err);

	/* NaN in V */
	spec.k.path = write_npy("k.npy", k, 2, 3, 3);
	spec.v.path = write_npy("v3.npy", bad, 1, 3, 1);
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "v3.npy: entry (1, 0) is NaN"), "%s", err);

	/* only two of the three */
	spec.v.path = NULL;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "go together"), "%s", err);
}
END_TEST

START_TEST(test_scores)
{
	float s[4] = { 1, 2, 1001, 1002 }, v[4] = { 2, -1, 4, 8 };
	float sinf_[4] = { 1, INFINITY, 0, 0 };
	struct problem_spec spec;
	struct problem p;
	char err[256];

	problem_spec_init(&spec);
	spec.s.path = write_npy("s.npy", s, 1, 4, 1);
	spec.v.path = write_npy("v.npy", v, 1, 4, 1);
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	ck_assert(p.scores_mode);
	ck_assert_int_eq(p.tq, 1);
	ck_assert_int_eq(p.tk, 4);
	ck_assert_int_eq(p.dv, 1);
	ck_assert_float_eq(p.scale, 1.0f);
	problem_free(&p);

	spec.v.path = NULL;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "--scores needs --v"), "%s", err);

	spec.v.path = write_npy("v.npy", v, 1, 4, 1);
	spec.s.path = write_npy("s2.npy", sinf_, 1, 4, 1);
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "s2.npy: entry (0, 1) is inf"), "%s", err);

	/* V rows must equal S columns */
	spec.s.path = write_npy("s3.npy", s, 2, 2, 2);
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "Tk"), "%s", err);
}
END_TEST

START_TEST(test_refusals)
{
	struct problem_spec spec;
	struct problem p;
	char err[256];

	/* Tq = 10^9 is refused with the memory it needs, not attempted. */
	problem_spec_init(&spec);
	spec.tq = 1000000000;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "would need") && strstr(err, "GiB"), "%s", err);

	/* fp16 cannot hold 1e5 */
	problem_spec_init(&spec);
	spec.dtype = DTYPE_FP16;
	spec.tq = spec.tk = 2;
	spec.d = 1;
	spec.input = INPUTS_NORMAL;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	problem_free(&p);
	spec.scale_set = 1;
	spec.scale = -1;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "--scale"), "%s", err);
}
END_TEST

START_TEST(test_fp16_overflow)
{
	float s[2] = { 1e5f, 0 }, v[2] = { 1, 1 };
	struct problem_spec spec;
	struct problem p;
	char err[256];

	problem_spec_init(&spec);
	spec.dtype = DTYPE_FP16;
	spec.s.data = s;
	spec.s.rows = 1;
	spec.s.cols = 2;
	spec.v.data = v;
	spec.v.rows = 2;
	spec.v.cols = 1;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "overflows fp16"), "%s", err);
	spec.dtype = DTYPE_BF16;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	ck_assert_float_eq(p.s[0], 99840.0f);	/* 1e5 rounded to bf16 */
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("problem");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_ramp_rises);
	tcase_add_test(tc, test_files);
	tcase_add_test(tc, test_scores);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_fp16_overflow);
	suite_add_tcase(s, tc);
	return s;
}
