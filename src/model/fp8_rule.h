/*
 * fp8_rule.h - FP8 E4M3 as Hopper's tensor cores take it, the one
 * definition the simulator (dtype.c, fp8.c) and any CUDA kernel read.
 *
 * The format is e4m3fn (OCP FP8, NVIDIA's __nv_fp8_e4m3): a sign bit,
 * 4 exponent bits with bias 7 and 3 mantissa bits.
 *
 *   normal      exponent field 1..15: (1 + m/8) 2^(e-7); the largest,
 *               e = 15 and m = 6, is 1.75 * 2^8 = 448
 *   subnormal   exponent field 0: m 2^-9, so 2^-9 is the smallest
 *               positive value and 2^-6 the smallest normal one
 *   NaN         e = 15 and m = 7 (0x7f and 0xff); there is no inf
 *
 * A float32 becomes e4m3 by rounding to the nearest value, ties to the
 * even code (mantissa's last bit 0), and saturating: whatever rounds
 * beyond 448 in magnitude, +-inf included, becomes +-448.  That is PTX's
 * cvt.rn.satfinite.e4m3x2.f32, the conversion FP8 kernels use (without
 * satfinite, an overflow would give NaN, as e4m3 has no inf).  NaN stays
 * NaN.  Magnitudes of at most 2^-10 round to zero (2^-10, halfway to
 * 2^-9, ties to the even code 0), with their sign.
 *
 * The conversion is done in integers, the same code on host and device,
 * so the simulator's emulation and a kernel's rounding are one rule:
 * tests/check_fp8.c holds it to a brute-force nearest-value search over
 * the 256 codes.
 */
#ifndef FLASHSTEP_FP8_RULE_H
#define FLASHSTEP_FP8_RULE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define FP8_RULE_FN __host__ __device__ static inline
#else
#define FP8_RULE_FN static inline
#endif

/* The largest finite magnitude and the code of +448. */
#define FP8_RULE_MAX 448.0f
#define FP8_RULE_MAX_CODE 0x7e
/* The code e4m3 uses for NaN (with the sign bit: 0xff). */
#define FP8_RULE_NAN_CODE 0x7f
/* The smallest positive (subnormal) and smallest normal magnitudes. */
#define FP8_RULE_MIN_SUBNORMAL 0x1p-9f
#define FP8_RULE_MIN_NORMAL 0x1p-6f

FP8_RULE_FN uint32_t
fp8_rule_float_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	return u;
}

/* The e4m3 code of x: round to nearest even, saturate at +-448. */
FP8_RULE_FN unsigned char
fp8_rule_encode(float x)
{
	uint32_t u = fp8_rule_float_bits(x);
	uint32_t sign = (u >> 24) & 0x80;
	uint32_t a = u & 0x7fffffff;
	uint32_t code, rest, half, mant, shift;
	int exp;

	if (a > 0x7f800000)			/* NaN */
		return (unsigned char)(sign | FP8_RULE_NAN_CODE);
	if (a >= 0x43e00000)			/* >= 448 (and inf): saturate */
		return (unsigned char)(sign | FP8_RULE_MAX_CODE);
	exp = (int)(a >> 23) - 127;
	if (exp < -10)				/* below 2^-10: zero */
		return (unsigned char)sign;
	if (exp < -6) {
		/* Subnormal: the code is x / 2^-9 rounded to an integer, 0..8
		 * (8 is 0x08, the smallest normal, as it should be). */
		mant = (a & 0x7fffff) | 0x800000;	/* x = mant 2^(exp-23) */
		shift = (uint32_t)(14 - exp);		/* 21 .. 24 */
		code = mant >> shift;
		rest = mant & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rest > half || (rest == half && (code & 1)))
			code++;
		return (unsigned char)(sign | code);
	}
	/* Normal: keep 3 of the 23 mantissa bits; a carry out of them
	 * bumps the exponent, which is the right value too. */
	code = ((uint32_t)(exp + 7) << 3) | ((a >> 20) & 7);
	rest = a & 0xfffff;
	if (rest > 0x80000 || (rest == 0x80000 && (code & 1)))
		code++;
	if (code > FP8_RULE_MAX_CODE)		/* rounded past 448 */
		code = FP8_RULE_MAX_CODE;
	return (unsigned char)(sign | code);
}

/* The value of code c as float32 (exact: every e4m3 value is one). */
FP8_RULE_FN float
fp8_rule_decode(unsigned char c)
{
	int e = (c >> 3) & 15, m = c & 7;
	float mag;

	if (e == 15 && m == 7)
		return NAN;
	mag = e == 0 ? ldexpf((float)m, -9) : ldexpf((float)(8 + m), e - 10);
	return (c & 0x80) ? -mag : mag;
}

/* x rounded to the nearest e4m3 value (saturated), as float32. */
FP8_RULE_FN float
fp8_rule_round(float x)
{
	return fp8_rule_decode(fp8_rule_encode(x));
}

#endif
