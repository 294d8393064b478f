/*
 * tile_rule.h - the two rules every tile applies entry by entry, read by
 * the simulator (dtype.c) and by the kernels (gpu/teach_step.cuh,
 * gpu/teach_bwd.cu, gpu/fast_bwd.cu), so each is written once, as
 * online_rule.h's bug table is:
 *
 *   the mask   query position r (a row within its head) sees key c when
 *              c <= r + Tk - Tq: the causal mask aligned bottom-right,
 *              so the last query sees every key even when Tq < Tk.  It
 *              is the window (-1, 0) of mask_rule.h, whose table holds
 *              the windows, softcap and ALiBi and which the simulator and
 *              the teaching kernels read; the two functions below are
 *              that entry for the kernels that know the causal mask
 *              alone, made from mask_rule.h's own.
 *   rounding   x as fp16 or bf16 would store it (round to nearest, ties
 *              to even), back in float32; fp32 leaves x as it is
 *
 * Plain C that C++ and CUDA read too (TILE_RULE_FN, as ONLINE_RULE_FN).
 * The rounding runs the GPU's own conversion on the device and its
 * emulation in integers on the host: the teaching kernels' bit-for-bit
 * agreement with the simulator in fp16 and bf16 (tests/check_gpu) is
 * what shows the emulation right, so the device must not run it too.
 */
#ifndef FLASHSTEP_TILE_RULE_H
#define FLASHSTEP_TILE_RULE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mask_rule.h"

#ifdef __CUDACC__
/* C++ linkage even inside a .cu file's extern "C" block: templates. */
extern "C++" {
#include <cuda_bf16.h>
#include <cuda_fp16.h>
}
#define TILE_RULE_FN __host__ __device__ static inline
#define TILE_RULE_HOST_FN __host__ static inline
#else
#define TILE_RULE_FN static inline
#define TILE_RULE_HOST_FN static inline
#endif

/* The storage types (dtype.h's enum dtype, in its order). */
#define TILE_RULE_FP32 0
#define TILE_RULE_FP16 1
#define TILE_RULE_BF16 2

/* The last key query position r sees under the causal mask. */
TILE_RULE_FN long
tile_rule_last_key(long r, int tq, int tk)
{
	return mask_rule_diag(r, tq, tk);
}

/* Does query position r see key c (causal, or no mask)? */
TILE_RULE_FN int
tile_rule_visible(int causal, long r, long c, int tq, int tk)
{
	return !causal || mask_rule_visible(mask_rule_window(mask_rule_none(),
	    MASK_UNBOUNDED, 0), r, c, tq, tk);
}

/* ---- the host's emulation of the conversions ---- */

TILE_RULE_HOST_FN uint32_t
tile_rule_float_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	return u;
}

TILE_RULE_HOST_FN float
tile_rule_bits_float(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof x);
	return x;
}

/* x's bits as bfloat16, round to nearest even. */
TILE_RULE_HOST_FN unsigned short
tile_rule_bf16_bits(float x)
{
	uint32_t u = tile_rule_float_bits(x);

	if (isnan(x))
		return (unsigned short)((u >> 16) | 0x40);	/* stay a NaN */
	/* Round to nearest even on the 16 bits that are dropped. */
	u += 0x7fff + ((u >> 16) & 1);
	return (unsigned short)(u >> 16);
}

/* x's bits as binary16, round to nearest even; beyond 65504 +-inf. */
TILE_RULE_HOST_FN unsigned short
tile_rule_half_bits(float x)
{
	uint32_t u = tile_rule_float_bits(x);
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

/* The float32 value of binary16 bits h. */
TILE_RULE_HOST_FN float
tile_rule_from_half_bits(unsigned short h)
{
	uint32_t sign = ((uint32_t)h & 0x8000) << 16;
	uint32_t e = ((uint32_t)h >> 10) & 0x1f;
	uint32_t m = (uint32_t)h & 0x3ff;

	if (e == 0)				/* zero or subnormal */
		return (sign ? -1.0f : 1.0f) * ldexpf((float)m, -24);
	if (e == 31)
		return tile_rule_bits_float(sign | 0x7f800000 | (m << 13));
	return tile_rule_bits_float(sign | ((e + 112) << 23) | (m << 13));
}

/* x rounded to storage type dtype (TILE_RULE_...), as float32. */
TILE_RULE_FN float
tile_rule_round(int dtype, float x)
{
#ifdef __CUDA_ARCH__
	if (dtype == TILE_RULE_FP16)
		return __half2float(__float2half_rn(x));
	if (dtype == TILE_RULE_BF16)
		return __bfloat162float(__float2bfloat16_rn(x));
	return x;
#else
	if (dtype == TILE_RULE_FP16)
		return tile_rule_from_half_bits(tile_rule_half_bits(x));
	if (dtype == TILE_RULE_BF16)
		return tile_rule_bits_float((uint32_t)tile_rule_bf16_bits(x) << 16);
	return x;
#endif
}

#endif
