/* check_problem.c - building problems: shapes, files, refusals. */
#include "config.h"

#include "testutil.h"
#include "model/memory.h"
#include "app/npyout.h"
#include "model/npy.h"
#include "model/util.h"

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

/* Scores the simulator's float32 cannot hold are refused, naming the
 * first query row and key; a tiny scale is no excuse for huge inputs
 * (the dot product is summed before it is scaled). */
START_TEST(test_score_overflow)
{
	float q[4] = { 1, 1, 1e20f, 1e20f }, k[4] = { 1, 1, 1e20f, 1e20f };
	float v[2] = { 1, 2 };
	struct problem_spec spec;
	struct problem p;
	char err[256];

	problem_spec_init(&spec);
	spec.q.data = q;
	spec.q.rows = 2;
	spec.q.cols = 2;
	spec.k.data = k;
	spec.k.rows = 2;
	spec.k.cols = 2;
	spec.v.data = v;
	spec.v.rows = 2;
	spec.v.cols = 1;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "query row 1 and key 1 overflows float32"),
	    "%s", err);
	spec.scale_set = 1;
	spec.scale = 1e-30;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	/* Causal: row 0 does not see key 1; row 1 does. */
	spec.scale_set = 0;
	q[2] = q[3] = 1;
	spec.causal = 1;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	problem_free(&p);
	/* A scale float32 cannot hold. */
	spec.scale_set = 1;
	spec.scale = 1e39;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "float32's range"), "%s", err);
	spec.scale = 1e-50;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
}
END_TEST

/* V whose columns add up beyond float32 could overflow u. */
START_TEST(test_value_overflow)
{
	float s[2] = { 0, 0 }, v[2] = { 3e38f, 3e38f };
	struct problem_spec spec;
	struct problem p;
	char err[256];

	problem_spec_init(&spec);
	spec.s.data = s;
	spec.s.rows = 1;
	spec.s.cols = 2;
	spec.v.data = v;
	spec.v.rows = 2;
	spec.v.cols = 1;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "column 0 adds up to 6e+38"), "%s", err);
	v[1] = -1e37f;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	problem_free(&p);
}
END_TEST

/* A file of Tk = 2^30 keys with no data written (a sparse file): the
 * header declares it all, the memory check refuses it from the header,
 * and not one byte of its 4 GiB is read. */
static const char *
sparse_npy(const char *name, long rows)
{
	static char path[128];
	char dict[128];
	unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
	size_t len, hlen;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	len = (size_t)snprintf(dict, sizeof dict, "{'descr': '<f4', "
	    "'fortran_order': False, 'shape': (%ld, 1), }", rows);
	hlen = 128 - 10;
	memset(dict + len, ' ', hlen - len - 1);
	dict[hlen - 1] = '\n';
	pre[8] = (unsigned char)hlen;
	f = fopen(path, "wb");
	ck_assert(f != NULL);
	ck_assert_uint_eq(fwrite(pre, 1, 10, f), 10);
	ck_assert_uint_eq(fwrite(dict, 1, hlen, f), hlen);
	ck_assert_int_eq(ftruncate(fileno(f), (off_t)(128 + 4 * rows)), 0);
	fclose(f);
	return path;
}

START_TEST(test_memory_before_reading)
{
	float x[1] = { 1 };
	struct problem_spec spec;
	struct problem p;
	char err[256], kpath[128], vpath[128];
	double t0;

	problem_spec_init(&spec);
	spec.q.path = write_npy("q.npy", x, 2, 1, 1);
	snprintf(kpath, sizeof kpath, "%s", sparse_npy("k.npy", 1L << 30));
	snprintf(vpath, sizeof vpath, "%s", sparse_npy("v.npy", 1L << 30));
	spec.k.path = kpath;
	spec.v.path = vpath;
	spec.memory_parts = MEMORY_FOR_RUN;
	if (memory_limit() > 30ULL << 30)
		return;		/* this machine could hold it */
	t0 = util_now();
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "Tk=1073741824") && strstr(err, "would need"),
	    "%s", err);
	/* Reading 8 GiB would take seconds; the headers take microseconds. */
	ck_assert_msg(util_now() - t0 < 0.5, "%.3f s", util_now() - t0);
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
	tcase_add_test(tc, test_score_overflow);
	tcase_add_test(tc, test_value_overflow);
	tcase_add_test(tc, test_memory_before_reading);
	suite_add_tcase(s, tc);
	return s;
}
