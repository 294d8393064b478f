/*
 * dtype.h - the storage precisions a tensor-core kernel uses, emulated.
 *
 * fp16 (IEEE binary16: 10 mantissa bits, max 65504) and bf16 (8 exponent
 * bits like float32, 7 mantissa bits).  Rounding is to nearest, ties to
 * even, as the GPU's __float2half_rn and __float2bfloat16_rn do.  The
 * arithmetic itself stays float32: a value is rounded where the kernel
 * would store it in the narrow type (inputs, and P before P V).
 *
 * fp8 is e4m3 (fp8_rule.h: max 448, subnormals down to 2^-9, saturating).
 * Its range is too narrow for raw inputs, so Q, K and V are quantized
 * with per-block scales (fp8.h, FlashAttention 3's block quantization);
 * dtype_round(DTYPE_FP8, x) is the unscaled rounding, which P in [0, 1]
 * gets before P V.
 */
#ifndef FLASHSTEP_DTYPE_H
#define FLASHSTEP_DTYPE_H

#include <stddef.h>

#include "tile_rule.h"

enum dtype {
	DTYPE_FP32 = TILE_RULE_FP32,
	DTYPE_FP16 = TILE_RULE_FP16,
	DTYPE_BF16 = TILE_RULE_BF16,
	DTYPE_FP8 = TILE_RULE_FP8,
};

/* "fp32", "fp16", "bf16", "fp8". */
const char *dtype_name(enum dtype t);

/* Parses a name; returns 0, or -1 for an unknown name. */
int dtype_parse(const char *name, enum dtype *out);

/* Bytes one element occupies in memory: 4, 2 or 1 (fp8's scales, one a
 * block, are not counted). */
int dtype_size(enum dtype t);

/* Bytes of one entry of O as a kernel of type t writes it: fp8 kernels
 * write O in 16 bits (FlashAttention 3's FP8 forward writes bf16), the
 * others in their own type. */
int dtype_out_size(enum dtype t);

/* x rounded to the nearest value of type t, returned as float (t = fp32
 * returns x).  Values beyond fp16's range become +-inf, as on the GPU;
 * beyond fp8's +-448, as cvt.satfinite does. */
float dtype_round(enum dtype t, float x);

/* The bits of x as binary16 / bfloat16, round to nearest even (for files
 * and for the GPU's inputs). */
unsigned short dtype_to_half_bits(float x);
unsigned short dtype_to_bf16_bits(float x);
float dtype_from_half_bits(unsigned short h);

#endif
