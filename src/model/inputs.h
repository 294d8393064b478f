/*
 * inputs.h - deterministic synthetic Q, K, V for a problem.
 *
 * Our own generator (splitmix64) so that a seed gives the same numbers on
 * every machine and in every build.  The kinds:
 *   normal   entries ~ N(0, 1)
 *   uniform  entries ~ U(-1, 1)
 *   ramp     keys grow along the query direction, so each later key
 *            tile holds larger scores and the running max m rises tile
 *            after tile (every rescale factor alpha < 1)
 *   spike    normal, plus one score far above the rest hidden in a late
 *            key tile: m jumps once, late
 */
#ifndef FLASHSTEP_INPUTS_H
#define FLASHSTEP_INPUTS_H

#include <stdint.h>

enum inputs_kind {
	INPUTS_NORMAL,
	INPUTS_UNIFORM,
	INPUTS_RAMP,
	INPUTS_SPIKE,
};

struct inputs_rng {
	uint64_t state;
};

const char *inputs_kind_name(enum inputs_kind k);
int inputs_kind_parse(const char *name, enum inputs_kind *out);

void inputs_rng_seed(struct inputs_rng *r, uint64_t seed);
uint64_t inputs_rng_next(struct inputs_rng *r);
/* Uniform in [0, 1). */
double inputs_rng_uniform(struct inputs_rng *r);
/* Standard normal (Box-Muller). */
double inputs_rng_normal(struct inputs_rng *r);

/*
 * Fills q (tq, d), k (tk, d), v (tk, dv).  right tells `spike` the last
 * key a row can see, r + Tk - Tq + right (-1: the last key, no mask;
 * causal is 0, a window (L, R) R), so the spike is never hidden by the
 * mask's right edge; it lands at most one tile left of it, where a
 * window's left edge of at least Bc - 1 keys still sees it.
 */
void inputs_fill(enum inputs_kind kind, uint64_t seed, int tq, int tk,
    int d, int dv, int bc, int right, float *q, float *k, float *v);

#endif
