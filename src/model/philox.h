/*
 * philox.h - Philox4x32-10, the counter-based generator of Salmon,
 * Moraes, Dror and Shaw ("Parallel Random Numbers: As Easy as 1, 2, 3",
 * SC 2011), the one cuRAND's curand_init/Philox4_32_10 and FlashAttention's
 * dropout use.  Written here from the paper's definition: a 128-bit counter
 * and a 64-bit key give 128 random bits through ten rounds of
 *
 *   (hi0, lo0) = M0 * x0     (hi1, lo1) = M1 * x2     (32 x 32 -> 64 bits)
 *   x = (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0)
 *
 * with the key bumped by the Weyl constants (W0, W1) between rounds.
 *
 * Why a counter-based generator: its output is a pure function of
 * (key, counter), so any thread on any device draws the bits of any
 * entry without a stored state or a sequence to walk, and the backward
 * regenerates the forward's dropout mask from the seed alone instead of
 * storing it (the FlashAttention paper's argument).  Philox and not a
 * shorter hash: it is the generator the kernels this project teaches
 * use, with published known answers (Random123's kat_vectors, checked
 * in tests/check_dropout), so "the same mask" is checkable against
 * someone else's numbers, not only against itself.
 *
 * Plain C that CUDA reads too: integer operations only, the same bits on
 * the host and the device.
 */
#ifndef FLASHSTEP_PHILOX_H
#define FLASHSTEP_PHILOX_H

#include <stdint.h>

#ifdef __CUDACC__
#define PHILOX_FN __host__ __device__ static inline
#else
#define PHILOX_FN static inline
#endif

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u	/* the golden ratio's bits */
#define PHILOX_W1 0xBB67AE85u	/* sqrt(3) - 1's */
#define PHILOX_ROUNDS 10

struct philox4 {
	uint32_t v[4];
};

/* One round: the two products and the Feistel-like exchange. */
PHILOX_FN struct philox4
philox_round(struct philox4 x, uint32_t k0, uint32_t k1)
{
	uint64_t p0 = (uint64_t)PHILOX_M0 * x.v[0];
	uint64_t p1 = (uint64_t)PHILOX_M1 * x.v[2];
	struct philox4 y;

	y.v[0] = (uint32_t)(p1 >> 32) ^ x.v[1] ^ k0;
	y.v[1] = (uint32_t)p1;
	y.v[2] = (uint32_t)(p0 >> 32) ^ x.v[3] ^ k1;
	y.v[3] = (uint32_t)p0;
	return y;
}

/* Philox4x32 with rounds rounds (10: Philox4x32-10) of counter ctr and
 * key (k0, k1). */
PHILOX_FN struct philox4
philox4x32_r(int rounds, struct philox4 ctr, uint32_t k0, uint32_t k1)
{
	int i;

	for (i = 0; i < rounds; i++) {
		if (i > 0) {
			k0 += PHILOX_W0;
			k1 += PHILOX_W1;
		}
		ctr = philox_round(ctr, k0, k1);
	}
	return ctr;
}

PHILOX_FN struct philox4
philox4x32_10(struct philox4 ctr, uint32_t k0, uint32_t k1)
{
	return philox4x32_r(PHILOX_ROUNDS, ctr, k0, k1);
}

#endif
