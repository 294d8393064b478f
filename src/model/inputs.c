/* inputs.c - synthetic inputs from our own PRNG (see inputs.h). */
#include "config.h"

#include "inputs.h"

#include <math.h>
#include <string.h>

static const char *inputs_names[] = {
	[INPUTS_NORMAL] = "normal",
	[INPUTS_UNIFORM] = "uniform",
	[INPUTS_RAMP] = "ramp",
	[INPUTS_SPIKE] = "spike",
};

const char *
inputs_kind_name(enum inputs_kind k)
{
	return inputs_names[k];
}

int
inputs_kind_parse(const char *name, enum inputs_kind *out)
{
	int k;

	for (k = 0; k < (int)(sizeof inputs_names / sizeof inputs_names[0]); k++) {
		if (strcmp(name, inputs_names[k]) == 0) {
			*out = (enum inputs_kind)k;
			return 0;
		}
	}
	return -1;
}

void
inputs_rng_seed(struct inputs_rng *r, uint64_t seed)
{
	r->state = seed;
}

uint64_t
inputs_rng_next(struct inputs_rng *r)
{
	/* splitmix64 (Steele, Lea, Flood 2014): tiny and well mixed. */
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double
inputs_rng_uniform(struct inputs_rng *r)
{
	return (double)(inputs_rng_next(r) >> 11) * 0x1.0p-53;
}

double
inputs_rng_normal(struct inputs_rng *r)
{
	double u1, u2;

	do
		u1 = inputs_rng_uniform(r);
	while (u1 <= 0.0);
	u2 = inputs_rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static void
fill(struct inputs_rng *r, enum inputs_kind kind, float *x, long n)
{
	long i;

	for (i = 0; i < n; i++)
		x[i] = kind == INPUTS_UNIFORM ?
		    (float)(2.0 * inputs_rng_uniform(r) - 1.0) :
		    (float)inputs_rng_normal(r);
}

/*
 * ramp: every query is the unit direction e (all ones / sqrt(d)) plus a
 * little noise, and key c is (0.5 + 4 c / Tk) sqrt(d) e plus noise.  With
 * the default scale 1/sqrt(d) the score of key c is about 0.5 + 4 c / Tk:
 * it rises across the keys, so every key tile raises the running max.
 */
static void
fill_ramp(struct inputs_rng *r, int tq, int tk, int d, float *q, float *k)
{
	double e = 1.0 / sqrt((double)d);
	int row, c, x;

	for (row = 0; row < tq; row++)
		for (x = 0; x < d; x++)
			q[(long)row * d + x] = (float)(e + 0.05 * inputs_rng_normal(r));
	for (c = 0; c < tk; c++) {
		double len = (0.5 + 4.0 * c / tk) * sqrt((double)d);
		for (x = 0; x < d; x++)
			k[(long)c * d + x] =
			    (float)(len * e + 0.05 * inputs_rng_normal(r));
	}
}

/*
 * spike: normal inputs, then one key is replaced by a long copy of one
 * query, so that pair's score is about 12 (with scale 1/sqrt(d)) while the
 * others stay near N(0, 1).  The key sits in the last key tile that its
 * query can see: the max jumps late, after many tiles of accumulation.
 */
static void
fill_spike(struct inputs_rng *r, int tq, int tk, int d, int bc, int right,
    float *q, float *k)
{
	int row, c, last, x;
	double norm2 = 0.0, gain;

	fill(r, INPUTS_NORMAL, q, (long)tq * d);
	fill(r, INPUTS_NORMAL, k, (long)tk * d);
	row = (int)(inputs_rng_next(r) % (uint64_t)tq);
	last = right >= 0 ? row + tk - tq + right : tk - 1;
	last = last < tk - 1 ? last : tk - 1;
	if (last < 0) {			/* that row sees no key: take the last row */
		row = tq - 1;
		last = tk - 1;
	}
	c = (last / bc) * bc;		/* first key of the last visible tile */
	c += (int)(inputs_rng_next(r) % (uint64_t)(last - c + 1));
	for (x = 0; x < d; x++)
		norm2 += (double)q[(long)row * d + x] * q[(long)row * d + x];
	gain = norm2 > 0.0 ? 12.0 * sqrt((double)d) / norm2 : 0.0;
	for (x = 0; x < d; x++)
		k[(long)c * d + x] = (float)(gain * q[(long)row * d + x]);
}

void
inputs_fill(enum inputs_kind kind, uint64_t seed, int tq, int tk, int d,
    int dv, int bc, int right, float *q, float *k, float *v)
{
	struct inputs_rng r;

	inputs_rng_seed(&r, seed);
	switch (kind) {
	case INPUTS_RAMP:
		fill_ramp(&r, tq, tk, d, q, k);
		break;
	case INPUTS_SPIKE:
		fill_spike(&r, tq, tk, d, bc, right, q, k);
		break;
	case INPUTS_NORMAL:
	case INPUTS_UNIFORM:
		fill(&r, kind, q, (long)tq * d);
		fill(&r, kind, k, (long)tk * d);
		break;
	}
	fill(&r, kind == INPUTS_UNIFORM ? INPUTS_UNIFORM : INPUTS_NORMAL, v,
	    (long)tk * dv);
}
