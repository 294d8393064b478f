/*
 * ckstore.h - checkpoints of block states, for seeking: the simulator's
 * row blocks (sim.c) and the backward's row and key blocks (backward.c).
 *
 * A store keeps, for each of nblocks blocks of up to `tiles` tiles, the
 * block's state (`floats` floats) after every `every`-th tile, once a run
 * or a replay passes there and hands it over: slot b * per_block + n /
 * every - 1 holds block b after n tiles (NULL until then).  every is the
 * smallest spacing that keeps all the slots within a budget of bytes:
 * one a tile for small problems, tiles + 1 (none at all) when even one a
 * block would not fit.
 */
#ifndef FLASHSTEP_CKSTORE_H
#define FLASHSTEP_CKSTORE_H

#include <stddef.h>
#include <stdint.h>

struct ckstore {
	size_t floats;		/* of one state */
	int every, per_block, nblocks;
	float **slots;
};

/* The spacing that keeps `all` bytes (a checkpoint at every one of
 * `tiles` tiles) within budget bytes (0 counts as 1). */
int ckstore_every(uint64_t all, int tiles, uint64_t budget);

/*
 * Lays s out for nblocks blocks of up to `tiles` tiles, states of
 * `floats` floats, within budget bytes, dropping what it kept.  s starts
 * zeroed (or laid out before).  Returns 0, or -1 with err set without
 * memory (s then stays as it was).
 */
int ckstore_layout(struct ckstore *s, int nblocks, int tiles, size_t floats,
    uint64_t budget, char *err, size_t errlen);

void ckstore_free(struct ckstore *s);

/* Keeps the first count floats of state (the rest zero) as block b after
 * n tiles, if n is a checkpoint position not yet kept.  Without memory
 * for it nothing is kept: seeking just stays slower. */
void ckstore_save(struct ckstore *s, int b, int n, const float *state,
    size_t count);

/* The latest checkpoint of block b after at most n tiles and more than
 * `after`: its tile count, with *state set, or 0 (none). */
int ckstore_find(const struct ckstore *s, int b, int n, int after,
    const float **state);

#endif
