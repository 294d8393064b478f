/*
 * check_tc_args.c - the argument checks fast.cu and wgmma.cu share
 * (gpu/tc_args.h): each bad argument refused with its one line, named
 * after the entry, in the order the entries check them, and a good call
 * let through.  Host code alone: runs in every build, GPU or not.
 */
#include "config.h"

#include "testutil.h"
#include "gpu/tc_args.h"

#include <math.h>
#include <string.h>

/* Distinct 16-byte-aligned stand-ins for device pointers. */
static float tc_args_buf[5][4] __attribute__((aligned(16)));
#define Q (tc_args_buf[0])
#define K (tc_args_buf[1])
#define V (tc_args_buf[2])
#define O (tc_args_buf[3])
#define LSE (tc_args_buf[4])

/* tc_args_check with one argument changed from a good call. */
struct tc_args_call {
	const void *q, *k, *v, *o;
	const float *lse;
	int batch, heads, tq, tk, dtype;
	unsigned align;
};

static int
tc_args_run(const struct tc_args_call *c, char *err, size_t len)
{
	err[0] = '\0';
	return tc_args_check("x_fwd", c->q, c->k, c->v, c->o, c->lse, c->batch,
	    c->heads, c->tq, c->tk, c->dtype, c->align, "TMA", err, len);
}

static struct tc_args_call
tc_args_good(void)
{
	struct tc_args_call c = { Q, K, V, O, LSE, 2, 3, 100, 70, FAST_BF16,
	    16 };

	return c;
}

START_TEST(test_tc_args_good)
{
	struct tc_args_call c = tc_args_good();
	char err[256];

	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), 0);
	ck_assert_str_eq(err, "");
	c.dtype = FAST_FP16;
	c.batch = c.heads = 65535;
	c.tq = c.tk = 1;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), 0);
	/* No alignment asked: an odd pointer passes (fast.cu). */
	c.align = 0;
	c.o = (const char *)O + 2;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), 0);
}
END_TEST

START_TEST(test_tc_args_refusals)
{
	struct tc_args_call c;
	char err[256];

	c = tc_args_good();
	c.v = NULL;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), -1);
	ck_assert_str_eq(err, "x_fwd: a tensor pointer is NULL");
	c = tc_args_good();
	c.lse = NULL;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), -1);
	ck_assert_str_eq(err, "x_fwd: a tensor pointer is NULL");
	c = tc_args_good();
	c.k = (const char *)K + 8;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), -1);
	ck_assert_str_eq(err, "x_fwd: Q, K, V and O must be 16-byte aligned "
	    "(TMA)");
	c = tc_args_good();
	c.heads = 0;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), -1);
	ck_assert_str_eq(err, "x_fwd: batch 2 or heads 0 not in 1..65535");
	c = tc_args_good();
	c.batch = 65536;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), -1);
	ck_assert_str_eq(err, "x_fwd: batch 65536 or heads 3 not in 1..65535");
	c = tc_args_good();
	c.tk = 0;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), -1);
	ck_assert_str_eq(err, "x_fwd: Tq 100 and Tk 0 must be at least 1");
	c = tc_args_good();
	c.dtype = 2;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), -1);
	ck_assert_str_eq(err, "x_fwd: dtype 2 is neither fp16 (0) nor bf16 "
	    "(1)");
	/* The first bad argument in the entries' order is the one named. */
	c = tc_args_good();
	c.dtype = -1;
	c.tq = 0;
	c.o = (const char *)O + 4;
	ck_assert_int_eq(tc_args_run(&c, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "aligned") != NULL, "%s", err);
}
END_TEST

START_TEST(test_tc_args_trace_variant_scale)
{
	struct fast_trace tr;
	char err[256];

	ck_assert_int_eq(tc_args_trace("x_trace", NULL, err, sizeof err), 0);
	memset(&tr, 0, sizeof tr);
	tr.m = LSE;
	tr.alpha = LSE;
	ck_assert_int_eq(tc_args_trace("x_trace", &tr, err, sizeof err), -1);
	ck_assert_str_eq(err, "x_trace: the trace's m, alpha and l must all "
	    "be given");
	tr.l = LSE;
	ck_assert_int_eq(tc_args_trace("x_trace", &tr, err, sizeof err), 0);
	ck_assert_int_eq(tc_args_no_variant("x_fwd", 7, 96, err, sizeof err),
	    -1);
	ck_assert_str_eq(err, "x_fwd: no variant 7 for d = 96 (d must be 64 "
	    "or 128)");
	ck_assert(tc_args_scale(0.5f, 64) == 0.5f);
	ck_assert(tc_args_scale(0.f, 64) == 0.125f);
	ck_assert(tc_args_scale(-1.f, 128) == 1.f / sqrtf(128.f));
	ck_assert(tc_args_scale(NAN, 64) == 0.125f);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("tc_args");
	TCase *tc = tcase_create("tc_args");

	tcase_add_test(tc, test_tc_args_good);
	tcase_add_test(tc, test_tc_args_refusals);
	tcase_add_test(tc, test_tc_args_trace_variant_scale);
	suite_add_tcase(s, tc);
	return s;
}
