/* ckstore.c - checkpoints of block states (ckstore.h). */
#include "config.h"

#include "ckstore.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int
ckstore_every(uint64_t all, int tiles, uint64_t budget)
{
	if (budget == 0)
		budget = 1;
	all = (all + budget - 1) / budget;
	return all < 1 ? 1 : all > (uint64_t)tiles ? tiles + 1 : (int)all;
}

static void
ckstore_clear(struct ckstore *s)
{
	size_t n = (size_t)s->nblocks * (size_t)s->per_block;

	if (s->slots != NULL)
		while (n-- > 0)
			free(s->slots[n]);
	free(s->slots);
	s->slots = NULL;
}

int
ckstore_layout(struct ckstore *s, int nblocks, int tiles, size_t floats,
    uint64_t budget, char *err, size_t errlen)
{
	uint64_t all = (uint64_t)nblocks * (uint64_t)tiles * (uint64_t)floats *
	    sizeof(float);
	int every = ckstore_every(all, tiles, budget);
	/* A state of no floats (dQ of a scores problem) keeps nothing. */
	int per_block = floats == 0 ? 0 : tiles / every;
	float **slots;

	slots = util_calloc((size_t)nblocks * (size_t)per_block + 1,
	    sizeof *slots, "checkpoints", err, errlen);
	if (slots == NULL)
		return -1;
	ckstore_clear(s);
	s->slots = slots;
	s->floats = floats;
	s->every = every;
	s->per_block = per_block;
	s->nblocks = nblocks;
	return 0;
}

void
ckstore_free(struct ckstore *s)
{
	ckstore_clear(s);
	memset(s, 0, sizeof *s);
}

/* The slot of block b after n tiles, or NULL when there is none. */
static float **
ckstore_slot(const struct ckstore *s, int b, int n)
{
	int q;

	if (n <= 0 || n % s->every != 0 || (q = n / s->every) > s->per_block)
		return NULL;
	return &s->slots[(size_t)b * s->per_block + (size_t)(q - 1)];
}

void
ckstore_save(struct ckstore *s, int b, int n, const float *state,
    size_t count)
{
	float **slot = ckstore_slot(s, b, n);

	if (slot == NULL || *slot != NULL)
		return;
	*slot = calloc(s->floats, sizeof(float));
	if (*slot != NULL)
		memcpy(*slot, state, count * sizeof(float));
}

int
ckstore_find(const struct ckstore *s, int b, int n, int after,
    const float **state)
{
	float **slot;
	int q;

	for (q = n / s->every; q > 0 && q * s->every > after; q--) {
		slot = ckstore_slot(s, b, q * s->every);
		if (slot != NULL && *slot != NULL) {
			*state = *slot;
			return q * s->every;
		}
	}
	return 0;
}
