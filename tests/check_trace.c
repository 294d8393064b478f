/* check_trace.c - the JSONL shape scripts rely on, and the other formats. */
#include "config.h"

#include "testutil.h"
#include "model/sim.h"
#include "app/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs the problem through a format into a string (caller frees). */
static char *
trace_to_string(const struct problem *p, const struct tiling *t,
    const char *format, int with_tiles, int with_acc)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct trace tr;
	char *buf = NULL, err[256];
	size_t len = 0;
	float *o, *lse;

	memset(&tr, 0, sizeof tr);
	tr.f = open_memstream(&buf, &len);
	tr.format = trace_format_find(format);
	ck_assert(tr.format != NULL);
	tr.sim = sim_new(p, t, &rule, err, sizeof err);
	tr.with_tiles = with_tiles;
	tr.with_acc = with_acc;
	o = malloc((size_t)p->tq * p->dv * sizeof *o);
	lse = malloc((size_t)p->tq * sizeof *lse);
	tr.format->begin(&tr);
	ck_assert_int_eq(sim_run((struct sim *)tr.sim, trace_step, &tr, o, lse), 0);
	tr.format->end(&tr, o, lse);
	fclose(tr.f);
	sim_free((struct sim *)tr.sim);
	free(o);
	free(lse);
	return buf;
}

static int
starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

START_TEST(test_jsonl_shape)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 3, 5, ORDER_FA2 };
	char err[256], *out, *line2;

	problem_spec_init(&spec);
	spec.tq = 7;
	spec.tk = 9;
	spec.causal = 1;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	out = trace_to_string(&p, &t, "jsonl", 1, 1);
	ck_assert_msg(starts_with(out, "{\"type\":\"problem\",\"tq\":7,\"tk\":9,"
	    "\"d\":4,\"dv\":4,\"br\":3,\"bc\":5,"), "%.200s", out);
	ck_assert(strstr(out, "\"order\":\"fa2\",\"causal\":true,\"scale\":0.5,"
	    "\"convention\":\"unnormalized\",\"bug\":\"none\",\"dtype\":\"fp32\","
	    "\"steps\":5") != NULL);
	/* 3 row blocks x 2 key blocks; causal with Tk - Tq = 2 hides tile
	 * (0, 1): row 2 sees keys up to 4 only. */
	ck_assert_int_eq(count_lines(out), 1 + 5 + 1);
	line2 = strchr(out, '\n') + 1;
	ck_assert_msg(starts_with(line2, "{\"type\":\"step\",\"step\":0,\"i\":0,"
	    "\"j\":0,\"rows\":[0,3],\"cols\":[0,5],\"m_old\":[\"-inf\",\"-inf\","
	    "\"-inf\"],\"m_new\":["), "%.200s", line2);
	ck_assert(strstr(line2, "\"alpha\":[0,0,0],\"l_old\":[0,0,0],\"l_new\":[")
	    != NULL);
	ck_assert(strstr(line2, "\"s\":[[") && strstr(line2, "\"p\":[["));
	ck_assert(strstr(line2, "\"acc_old\":[[0,0,0,0],[0,0,0,0],[0,0,0,0]]"));
	/* masked scores print as the string "-inf" */
	ck_assert(strstr(line2, "\"-inf\"]") != NULL);
	ck_assert(strstr(out, "{\"type\":\"output\",\"o\":[[") != NULL);
	ck_assert(strstr(out, "\"lse\":[") != NULL);
	free(out);
	problem_free(&p);
}
END_TEST

/* Nine significant digits bring a float32 back exactly. */
START_TEST(test_numbers_round_trip)
{
	float xs[] = { 0.1f, 1.0f / 3.0f, 6.92423439f, -1e-38f, 3.4e38f };
	char buf[64];
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		f = fmemopen(buf, sizeof buf, "w");
		trace_number(f, xs[i], 1);
		fclose(f);
		ck_assert_float_eq(strtof(buf, NULL), xs[i]);
	}
}
END_TEST

START_TEST(test_csv_and_text)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 4, 3, ORDER_FA1 };
	char err[256], *out;

	problem_spec_init(&spec);
	spec.tq = 8;
	spec.tk = 5;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	out = trace_to_string(&p, &t, "csv", 1, 0);
	/* header + 2 x 2 tiles of 4 rows */
	ck_assert_int_eq(count_lines(out), 1 + 4 * 4);
	ck_assert_msg(starts_with(out, "step,i,j,row,c0,c1,m_old,m_new,alpha,l_old,"
	    "l_new,rowmax,s0,s1,s2,p0,p1,p2\n0,0,0,0,0,3,-inf,"), "%.200s", out);
	free(out);
	out = trace_to_string(&p, &t, "text", 0, 1);
	ck_assert(strstr(out, "step 3: tile (1, 1), rows [4, 8), keys [3, 5), "
	    "finalize") != NULL);
	ck_assert(strstr(out, "u_new:") != NULL);
	free(out);
	ck_assert(trace_format_find("xml") == NULL);
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_jsonl_shape);
	tcase_add_test(tc, test_numbers_round_trip);
	tcase_add_test(tc, test_csv_and_text);
	suite_add_tcase(s, tc);
	return s;
}
