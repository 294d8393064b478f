/* check_dtype.c - fp16 and bf16 rounding against known bit patterns. */
#include "config.h"

#include "testutil.h"
#include "model/dtype.h"

#include <math.h>

START_TEST(test_half_bits)
{
	ck_assert_uint_eq(dtype_to_half_bits(1.0f), 0x3c00);
	ck_assert_uint_eq(dtype_to_half_bits(-2.0f), 0xc000);
	ck_assert_uint_eq(dtype_to_half_bits(0.1f), 0x2e66);
	ck_assert_uint_eq(dtype_to_half_bits(1.0f / 3.0f), 0x3555);
	ck_assert_uint_eq(dtype_to_half_bits(65504.0f), 0x7bff);
	ck_assert_uint_eq(dtype_to_half_bits(65519.0f), 0x7bff);
	ck_assert_uint_eq(dtype_to_half_bits(65520.0f), 0x7c00);	/* overflow */
	ck_assert_uint_eq(dtype_to_half_bits(ldexpf(1.0f, -24)), 0x0001);
	ck_assert_uint_eq(dtype_to_half_bits(ldexpf(1.0f, -26)), 0x0000);
	ck_assert_uint_eq(dtype_to_half_bits(ldexpf(3.0f, -26)), 0x0001);
	ck_assert_uint_eq(dtype_to_half_bits(ldexpf(1.0f, -14)), 0x0400);
	/* Ties go to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10. */
	ck_assert_uint_eq(dtype_to_half_bits(1.0f + ldexpf(1.0f, -11)), 0x3c00);
	ck_assert_uint_eq(dtype_to_half_bits(1.0f + 3 * ldexpf(1.0f, -11)), 0x3c02);
	ck_assert_uint_eq(dtype_to_half_bits(INFINITY), 0x7c00);
	ck_assert_uint_eq(dtype_to_half_bits(-INFINITY), 0xfc00);
}
END_TEST

START_TEST(test_half_round_trip)
{
	unsigned h;

	/* Every finite half converts to float and back unchanged. */
	for (h = 0; h < 0x10000; h++) {
		if ((h & 0x7c00) == 0x7c00)
			continue;
		ck_assert_uint_eq(dtype_to_half_bits(dtype_from_half_bits(
		    (unsigned short)h)), h);
	}
}
END_TEST

START_TEST(test_bf16)
{
	ck_assert_uint_eq(dtype_to_bf16_bits(1.0f), 0x3f80);
	ck_assert_uint_eq(dtype_to_bf16_bits(0.1f), 0x3dcd);
	ck_assert_uint_eq(dtype_to_bf16_bits(-3.0f), 0xc040);
	ck_assert_float_eq(dtype_round(DTYPE_BF16, 1.0f + ldexpf(1.0f, -8)), 1.0f);
	ck_assert_float_eq(dtype_round(DTYPE_BF16, 1.0f + 3 * ldexpf(1.0f, -8)),
	    1.0f + ldexpf(1.0f, -6));
	ck_assert_float_eq(dtype_round(DTYPE_FP32, 0.1f), 0.1f);
	ck_assert(isnan(dtype_round(DTYPE_BF16, NAN)));
}
END_TEST

START_TEST(test_names)
{
	enum dtype t;

	ck_assert_int_eq(dtype_parse("bf16", &t), 0);
	ck_assert_int_eq(t, DTYPE_BF16);
	ck_assert_int_eq(dtype_size(t), 2);
	ck_assert_int_eq(dtype_parse("fp4", &t), -1);
	ck_assert_int_eq(dtype_parse("fp8", &t), 0);
	ck_assert_int_eq(t, DTYPE_FP8);
	ck_assert_int_eq(dtype_size(t), 1);
	ck_assert_str_eq(dtype_name(DTYPE_FP32), "fp32");
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("dtype");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_half_bits);
	tcase_add_test(tc, test_half_round_trip);
	tcase_add_test(tc, test_bf16);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	return s;
}
