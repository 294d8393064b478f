/* dtype.c - fp16 and bf16 rounding in software (see dtype.h). */
#include "config.h"

#include "dtype.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *dtype_names[] = {
	[DTYPE_FP32] = "fp32",
	[DTYPE_FP16] = "fp16",
	[DTYPE_BF16] = "bf16",
};

const char *
dtype_name(enum dtype t)
{
	return dtype_names[t];
}

int
dtype_parse(const char *name, enum dtype *out)
{
	int t;

	for (t = 0; t < (int)(sizeof dtype_names / sizeof dtype_names[0]); t++) {
		if (strcmp(name, dtype_names[t]) == 0) {
			*out = (enum dtype)t;
			return 0;
		}
	}
	return -1;
}

int
dtype_size(enum dtype t)
{
	return t == DTYPE_FP32 ? 4 : 2;
}

static uint32_t
float_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	return u;
}

static float
bits_float(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof x);
	return x;
}

unsigned short
dtype_to_bf16_bits(float x)
{
	uint32_t u = float_bits(x);

	if (isnan(x))
		return (unsigned short)((u >> 16) | 0x40);	/* stay a NaN */
	/* Round to nearest even on the 16 bits that are dropped. */
	u += 0x7fff + ((u >> 16) & 1);
	return (unsigned short)(u >> 16);
}

unsigned short
dtype_to_half_bits(float x)
{
	uint32_t u = float_bits(x);
	uint32_t sign = (u >> 16) & 0x8000;
	uint32_t a = u & 0x7fffffff;
	uint32_t mant, shift, half, rest;
	int exp;

	if (a >= 0x7f800000)			/* inf or NaN */
		return (unsigned short)(sign | 0x7c00 | (a > 0x7f800000 ? 0x200 : 0));
	if (a >= 0x477ff000)			/* rounds to >= 65520: overflow */
		return (unsigned short)(sign | 0x7c00);
	exp = (int)(a >> 23) - 127;
	if (exp < -14) {
		/* Subnormal half: value = mant * 2^-24. */
		if (exp < -25)
			return (unsigned short)sign;
		mant = (a & 0x7fffff) | 0x800000;
		shift = (uint32_t)(-exp - 14 + 13);
		half = mant >> shift;
		rest = mant & ((1u << shift) - 1);
		if (rest > (1u << (shift - 1)) ||
		    (rest == (1u << (shift - 1)) && (half & 1)))
			half++;
		return (unsigned short)(sign | half);
	}
	/* Normal: keep 10 of the 23 mantissa bits, round to nearest even;
	 * a carry out of the mantissa correctly bumps the exponent. */
	half = ((uint32_t)(exp + 15) << 10) | ((a >> 13) & 0x3ff);
	rest = a & 0x1fff;
	if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
		half++;
	return (unsigned short)(sign | half);
}

float
dtype_from_half_bits(unsigned short h)
{
	uint32_t sign = ((uint32_t)h & 0x8000) << 16;
	uint32_t e = ((uint32_t)h >> 10) & 0x1f;
	uint32_t m = (uint32_t)h & 0x3ff;

	if (e == 0)				/* zero or subnormal */
		return (sign ? -1.0f : 1.0f) * ldexpf((float)m, -24);
	if (e == 31)
		return bits_float(sign | 0x7f800000 | (m << 13));
	return bits_float(sign | ((e + 112) << 23) | (m << 13));
}

float
dtype_round(enum dtype t, float x)
{
	switch (t) {
	case DTYPE_FP16:
		return dtype_from_half_bits(dtype_to_half_bits(x));
	case DTYPE_BF16:
		return bits_float((uint32_t)dtype_to_bf16_bits(x) << 16);
	case DTYPE_FP32:
		break;
	}
	return x;
}

