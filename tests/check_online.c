/* check_online.c - the per-row update and the seed's scalar example. */
#include "config.h"

#include "testutil.h"
#include "model/online.h"

#include <math.h>
#include <string.h>

/* The seed's example: scores [1 2 1001 1002], values [2 -1 4 8], blocks
 * of two, answer (4 e^-1 + 8) / (e^-1 + 1) = 6.924234... */
static float
seed_example(enum online_convention conv)
{
	static const float s[4] = { 1, 2, 1001, 1002 }, v[4] = { 2, -1, 4, 8 };
	struct online_rule rule = { conv, BUG_NONE, MASK_BUG_NONE };
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
	struct online_rule good = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct online_rule num = { CONV_UNNORMALIZED, BUG_NUMERATOR_ONLY, MASK_BUG_NONE };
	struct online_rule den = { CONV_UNNORMALIZED, BUG_DENOMINATOR_ONLY, MASK_BUG_NONE };
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
	struct online_rule rule = { CONV_NORMALIZED, BUG_NONE, MASK_BUG_NONE };
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
	struct online_rule r = { CONV_UNNORMALIZED, BUG_FORGET_OLD_DENOMINATOR, MASK_BUG_NONE };

	ck_assert(!online_rule_valid(&r));
	r.convention = CONV_NORMALIZED;
	ck_assert(online_rule_valid(&r));
}
END_TEST

/*
 * Every row of the bug table is whole and read by every reader the same
 * way: the host's row (online_bug_mode), the device's flags
 * (online_bug_flags, which teach.cu reads), the name's parse, validity,
 * and the update's arithmetic.
 */
START_TEST(test_bug_table)
{
	const struct online_bug_mode *m;
	struct online_bug_flags f;
	struct online_rule r;
	enum online_bug b;
	float acc, l, want_l, want_acc;
	int i, j, c;

	ck_assert_int_ge(ONLINE_BUGS, 2);
	ck_assert_str_eq(online_bug_mode(BUG_NONE)->name, "none");
	for (i = 0; i < ONLINE_BUGS; i++) {
		m = online_bug_mode((enum online_bug)i);
		ck_assert_int_eq((int)m->bug, i);
		ck_assert_ptr_eq(online_bug_name((enum online_bug)i), m->name);
		ck_assert_int_eq(online_bug_parse(m->name, &b), 0);
		ck_assert_int_eq((int)b, i);
		ck_assert_msg(m->breaks != NULL && strlen(m->breaks) > 5,
		    "row %d says nothing of what it breaks", i);
		for (j = 0; j < i; j++)
			ck_assert_str_ne(online_bug_mode((enum online_bug)j)->name,
			    m->name);
		f = online_bug_flags(i);
		ck_assert_int_eq(f.scale_l, m->flags.scale_l);
		ck_assert_int_eq(f.scale_acc, m->flags.scale_acc);
		ck_assert_int_eq(f.keep_l, m->flags.keep_l);
		ck_assert_int_eq(f.normalized_only, (m->needs == CONV_NORMALIZED));
		ck_assert(m->needs == ONLINE_ANY_CONVENTION ||
		    (m->needs >= 0 && m->needs < ONLINE_CONVENTIONS));
		/* BUG_NONE is the correct update; every other row breaks it. */
		ck_assert_int_eq(f.scale_l && f.scale_acc && f.keep_l, i == BUG_NONE);
		for (c = 0; c < ONLINE_CONVENTIONS; c++) {
			r.convention = (enum online_convention)c;
			r.bug = (enum online_bug)i;
			ck_assert_int_eq(online_rule_valid(&r),
			    m->needs == ONLINE_ANY_CONVENTION || m->needs == c);
			/* The update does what the row says: a = 0.5, l = 2,
			 * rowsum 1, acc = 3 (normalized: o = 3), pv = 4. */
			acc = 3.0f;
			l = online_update(&r, 0.5f, 2.0f, 1.0f, &acc,
			    (const float[]){ 4.0f }, 1, &acc);
			want_l = (f.scale_l ? 0.5f : 1.0f) * 2.0f + 1.0f;
			if (c == CONV_UNNORMALIZED)
				want_acc = (f.scale_acc ? 0.5f : 1.0f) * 3.0f + 4.0f;
			else
				want_acc = ((f.scale_acc ? 0.5f : 1.0f) *
				    (f.keep_l ? 2.0f : 1.0f) * 3.0f + 4.0f) / want_l;
			ck_assert_float_eq(l, want_l);
			ck_assert_float_eq(acc, want_acc);
		}
	}
	ck_assert_int_eq(online_bug_mode(BUG_FORGET_OLD_DENOMINATOR)->needs,
	    CONV_NORMALIZED);
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
	tcase_add_test(tc, test_bug_table);
	suite_add_tcase(s, tc);
	return s;
}
