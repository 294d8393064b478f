/* check_online.c - the per-row update and the seed's scalar example. */
#include "config.h"

#include "testutil.h"
#include "model/online.h"

#include <math.h>

/* The seed's example: scores [1 2 1001 1002], values [2 -1 4 8], blocks
 * of two, answer (4 e^-1 + 8) / (e^-1 + 1) = 6.924234... */
static float
seed_example(enum online_convention conv)
{
	static const float s[4] = { 1, 2, 1001, 1002 }, v[4] = { 2, -1, 4, 8 };
	struct online_rule rule = { conv, BUG_NONE };
	float m = -INFINITY, l = 0.0f, acc = 0.0f, p[2], o, lse;
	int start, c;

	for (start = 0; start < 4; start += 2) {
		float m_new = online_max(m, s + start, 2);
		float alpha = online_alpha(m, m_new);
		float pv = 0.0f;
		online_exp(s + start, 2, m_new, p);
		for (c = 0; c < 2; c++)
			pv += p[c] * v[start + c];
		l = online_update(&rule, alpha, l, p[0] + p[1], &acc, &pv, 1, &acc);
		m = m_new;
	}
	online_finalize(conv, m, l, &acc, 1, &o, &lse);
	return o;
}

START_TEST(test_seed_example)
{
	double want = (4.0 * exp(-1.0) + 8.0) / (exp(-1.0) + 1.0);

	ck_assert_double_eq_tol(want, 6.92423431, 1e-8);
	ck_assert_double_eq_tol(seed_example(CONV_UNNORMALIZED), want, 1e-5);
	ck_assert_double_eq_tol(seed_example(CONV_NORMALIZED), want, 1e-5);
}
END_TEST

/* The seed's question: the max rises from 5 to 10; both l and u must be
 * multiplied by e^-5 before the new tile is added. */
START_TEST(test_rescale_both)
{
	struct online_rule good = { CONV_UNNORMALIZED, BUG_NONE };
	struct online_rule num = { CONV_UNNORMALIZED, BUG_NUMERATOR_ONLY };
	struct online_rule den = { CONV_UNNORMALIZED, BUG_DENOMINATOR_ONLY };
	float alpha = online_alpha(5.0f, 10.0f), acc, pv = 0.0f, l;

	ck_assert_float_eq_tol(alpha, expf(-5.0f), 1e-9f);
	acc = 3.0f;
	l = online_update(&good, alpha, 2.0f, 0.0f, &acc, &pv, 1, &acc);
	ck_assert_float_eq_tol(l, 2.0f * expf(-5.0f), 1e-9f);
	ck_assert_float_eq_tol(acc, 3.0f * expf(-5.0f), 1e-9f);
	acc = 3.0f;
	l = online_update(&num, alpha, 2.0f, 0.0f, &acc, &pv, 1, &acc);
	ck_assert_float_eq(l, 2.0f);
	ck_assert_float_eq_tol(acc, 3.0f * expf(-5.0f), 1e-9f);
	acc = 3.0f;
	l = online_update(&den, alpha, 2.0f, 0.0f, &acc, &pv, 1, &acc);
	ck_assert_float_eq_tol(l, 2.0f * expf(-5.0f), 1e-9f);
	ck_assert_float_eq(acc, 3.0f);
}
END_TEST

/* m = -inf everywhere: alpha 1, p 0, finalize to 0 and -inf, no NaN. */
START_TEST(test_nothing_seen)
{
	struct online_rule rule = { CONV_NORMALIZED, BUG_NONE };
	float s[3] = { -INFINITY, -INFINITY, -INFINITY }, p[3], acc = 0, pv = 0;
	float m = online_max(-INFINITY, s, 3), l, o, lse;

	ck_assert(isinf(m) && m < 0);
	ck_assert_float_eq(online_alpha(-INFINITY, m), 1.0f);
	online_exp(s, 3, m, p);
	ck_assert_float_eq(p[0] + p[1] + p[2], 0.0f);
	l = online_update(&rule, 1.0f, 0.0f, 0.0f, &acc, &pv, 1, &acc);
	ck_assert_float_eq(l, 0.0f);
	ck_assert(!isnan(acc));
	online_finalize(CONV_NORMALIZED, m, l, &acc, 1, &o, &lse);
	ck_assert_float_eq(o, 0.0f);
	ck_assert(isinf(lse) && lse < 0);
	/* The first visible score after nothing: alpha = exp(-inf) = 0. */
	ck_assert_float_eq(online_alpha(-INFINITY, 2.0f), 0.0f);
}
END_TEST

START_TEST(test_names)
{
	enum online_bug b;
	enum online_convention c;
	int i;

	for (i = 0; i < ONLINE_BUGS; i++) {
		ck_assert_int_eq(online_bug_parse(online_bug_name((enum online_bug)i),
		    &b), 0);
		ck_assert_int_eq((int)b, i);
	}
	ck_assert_int_eq(online_bug_parse("rescale-nothing", &b), -1);
	ck_assert_int_eq(online_convention_parse("normalized", &c), 0);
	ck_assert_int_eq(c, CONV_NORMALIZED);
	ck_assert_int_eq(online_convention_parse("Normalized", &c), -1);
}
END_TEST

START_TEST(test_rule_valid)
{
	struct online_rule r = { CONV_UNNORMALIZED, BUG_FORGET_OLD_DENOMINATOR };

	ck_assert(!online_rule_valid(&r));
	r.convention = CONV_NORMALIZED;
	ck_assert(online_rule_valid(&r));
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("online");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_seed_example);
	tcase_add_test(tc, test_rescale_both);
	tcase_add_test(tc, test_nothing_seen);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_rule_valid);
	suite_add_tcase(s, tc);
	return s;
}
