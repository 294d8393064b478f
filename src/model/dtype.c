/* dtype.c - fp16, bf16 and fp8 rounding in software (see dtype.h). */
#include "config.h"

#include "dtype.h"

#include <string.h>

static const char *dtype_names[] = {
	[DTYPE_FP32] = "fp32",
	[DTYPE_FP16] = "fp16",
	[DTYPE_BF16] = "bf16",
	[DTYPE_FP8] = "fp8",
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
	return t == DTYPE_FP32 ? 4 : t == DTYPE_FP8 ? 1 : 2;
}

int
dtype_out_size(enum dtype t)
{
	return t == DTYPE_FP8 ? 2 : dtype_size(t);
}

/* The conversions themselves are tile_rule.h's, which the GPU's
 * teaching kernels read too. */
unsigned short
dtype_to_bf16_bits(float x)
{
	return tile_rule_bf16_bits(x);
}

unsigned short
dtype_to_half_bits(float x)
{
	return tile_rule_half_bits(x);
}

float
dtype_from_half_bits(unsigned short h)
{
	return tile_rule_from_half_bits(h);
}

float
dtype_round(enum dtype t, float x)
{
	return tile_rule_round((int)t, x);
}
