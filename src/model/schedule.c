/* schedule.c - step numbering for both loop orders (see schedule.h). */
#include "config.h"

#include "schedule.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static const char *order_names[] = {
	[ORDER_FA2] = "fa2",
	[ORDER_FA1] = "fa1",
};

const char *
schedule_order_name(enum schedule_order o)
{
	return order_names[o];
}

int
schedule_order_parse(const char *name, enum schedule_order *out)
{
	int o;

	for (o = 0; o < 2; o++) {
		if (strcmp(name, order_names[o]) == 0) {
			*out = (enum schedule_order)o;
			return 0;
		}
	}
	return -1;
}

static int
min_int(int a, int b)
{
	return a < b ? a : b;
}

int
schedule_init(struct schedule *s, const struct problem *p,
    const struct tiling *t, char *err, size_t errlen)
{
	long shift = (long)p->tk - p->tq;	/* query r sees keys c <= r + shift */
	int i, j, o, inner;

	memset(s, 0, sizeof *s);
	if (t->br <= 0 || t->bc <= 0)
		return util_error(err, errlen, "tile sizes must be positive "
		    "(Br=%d, Bc=%d)", t->br, t->bc);
	s->tq = p->tq;
	s->tk = p->tk;
	s->br = min_int(t->br, p->tq);
	s->bc = min_int(t->bc, p->tk);
	s->tr = (p->tq + s->br - 1) / s->br;
	s->tc = (p->tk + s->bc - 1) / s->bc;
	s->causal = p->causal;
	s->order = t->order;
	s->nouter = t->order == ORDER_FA2 ? s->tr : s->tc;
	s->jend = calloc((size_t)s->tr, sizeof *s->jend);
	s->ibegin = calloc((size_t)s->tc, sizeof *s->ibegin);
	s->first = calloc((size_t)s->nouter + 1, sizeof *s->first);
	if (s->jend == NULL || s->ibegin == NULL || s->first == NULL) {
		schedule_free(s);
		return util_error(err, errlen, "schedule: out of memory");
	}

	/* Tile (i, j) is visible when its last row sees its first key. */
	for (i = 0; i < s->tr; i++) {
		long last_row = min_int((i + 1) * s->br, s->tq) - 1;
		long seen = last_row + shift;	/* last key that row sees */
		if (!s->causal)
			s->jend[i] = s->tc;
		else if (seen < 0)
			s->jend[i] = 0;
		else
			s->jend[i] = (int)(seen / s->bc + 1 < s->tc ? seen / s->bc + 1 : s->tc);
	}
	/* jend never decreases with i, so ibegin[j] (the first row block
	 * with jend > j) never decreases with j: one sweep finds them all. */
	for (i = 0, j = 0; j < s->tc; j++) {
		while (i < s->tr && s->jend[i] <= j)
			i++;
		s->ibegin[j] = i;
	}
	for (o = 0; o < s->nouter; o++) {
		inner = t->order == ORDER_FA2 ? s->jend[o] : s->tr - s->ibegin[o];
		s->first[o + 1] = s->first[o] + inner;
	}
	s->nsteps = s->first[s->nouter];
	return 0;
}

void
schedule_free(struct schedule *s)
{
	free(s->jend);
	free(s->ibegin);
	free(s->first);
	memset(s, 0, sizeof *s);
}

void
schedule_tile(const struct schedule *s, long k, struct schedule_tile *out)
{
	int lo = 0, hi = s->nouter - 1, mid, o;
	long inner;

	/* The outer block is the last one whose first step is <= k. */
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (s->first[mid] <= k)
			lo = mid;
		else
			hi = mid - 1;
	}
	o = lo;
	inner = k - s->first[o];
	out->step = k;
	if (s->order == ORDER_FA2) {
		out->i = o;
		out->j = (int)inner;
	} else {
		out->j = o;
		out->i = s->ibegin[o] + (int)inner;
	}
	out->r0 = out->i * s->br;
	out->r1 = min_int(out->r0 + s->br, s->tq);
	out->c0 = out->j * s->bc;
	out->c1 = min_int(out->c0 + s->bc, s->tk);
	out->first_in_row = out->j == 0;
	out->last_in_row = out->j == s->jend[out->i] - 1;
	out->first_in_outer = inner == 0;
}

int
schedule_skipped(const struct schedule *s, int i, int j)
{
	return j >= s->jend[i];
}

long
schedule_step_of(const struct schedule *s, int i, int j)
{
	if (i < 0 || i >= s->tr || j < 0 || j >= s->tc || schedule_skipped(s, i, j))
		return -1;
	if (s->order == ORDER_FA2)
		return s->first[i] + j;
	return s->first[j] + (i - s->ibegin[j]);
}
