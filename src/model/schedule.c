/* schedule.c - step numbering for both loop orders (see schedule.h). */
#include "config.h"

#include "schedule.h"
#include "mask_rule.h"
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
	return schedule_init_split(s, p, t, NULL, err, errlen);
}

int
schedule_init_split(struct schedule *s, const struct problem *p,
    const struct tiling *t, const struct split_plan *sp, char *err,
    size_t errlen)
{
	static const struct split_plan none;
	int i, j, o, inner, r0, r1, nb, ne, a;

	memset(s, 0, sizeof *s);
	if (sp == NULL)
		sp = &none;
	/* Tiles of a packed batch never cross a sequence: it is scheduled
	 * one sequence at a time (problem_seq), never whole. */
	if (problem_refuse_packed(p, "a schedule", err,
	    errlen) != 0)
		return -1;
	if (t->br <= 0 || t->bc <= 0)
		return util_error(err, errlen, "tile sizes must be positive "
		    "(Br=%d, Bc=%d)", t->br, t->bc);
	if (sp->splits < 0)
		return util_error(err, errlen, "splits must be positive (%d)",
		    sp->splits);
	s->heads = p->heads > 0 ? p->heads : 1;
	s->kv_heads = p->kv_heads > 0 ? p->kv_heads : 1;
	s->group = s->heads / s->kv_heads;
	s->pack = sp->pack_gqa && s->group > 1;
	s->nseg = s->pack ? s->kv_heads : s->heads;
	s->seglen = s->pack ? s->group * p->tq : p->tq;
	s->rows = s->nseg * s->seglen;
	s->splits = sp->splits > 1 ? sp->splits : 1;
	s->partials = sp->partials;
	s->tq = p->tq;
	s->tk = p->tk;
	s->br = min_int(t->br, s->seglen);
	s->bc = min_int(t->bc, p->tk);
	s->tr_seg = (s->seglen + s->br - 1) / s->br;
	s->tr = s->nseg * s->tr_seg;
	s->tc = (p->tk + s->bc - 1) / s->bc;
	s->causal = p->causal;
	s->mask = problem_mask(p, 0);
	s->order = t->order;
	s->nouter = t->order == ORDER_FA2 ? s->tr : s->nseg * s->tc;
	s->jbegin = calloc((size_t)s->tr, sizeof *s->jbegin);
	s->jend = calloc((size_t)s->tr, sizeof *s->jend);
	s->ibegin = calloc((size_t)s->tc, sizeof *s->ibegin);
	s->iend = calloc((size_t)s->tc, sizeof *s->iend);
	s->first = calloc((size_t)s->nouter + 1, sizeof *s->first);
	if (s->jbegin == NULL || s->jend == NULL || s->ibegin == NULL ||
	    s->iend == NULL || s->first == NULL) {
		schedule_free(s);
		return util_error(err, errlen, "schedule: out of memory");
	}

	/* Row block i sees the keys its rows see between them, one
	 * interval (mask_rule_keys): from the first row's left edge to the
	 * last row's right edge.  A tile is visible when it holds one of
	 * them, and skipped only when it holds none.  Every segment has
	 * the same shape, so the same ranges. */
	for (i = 0; i < s->tr; i++) {
		long lo, hi;

		schedule_rows(s, i, &r0, &r1);
		mask_rule_keys(s->mask, schedule_row_pos(s, r0),
		    schedule_row_pos(s, r1 - 1), p->tq, p->tk, &lo, &hi);
		if (lo > hi)
			s->jbegin[i] = s->jend[i] = 0;	/* sees no key */
		else {
			s->jbegin[i] = (int)(lo / s->bc);
			s->jend[i] = (int)(hi / s->bc + 1);
		}
	}
	/* Within a segment the blocks that see a key are consecutive, and
	 * over them jbegin and jend never decrease with i (the band moves
	 * right as the rows go down).  So the row blocks that see key block
	 * j are one interval [ibegin[j], iend[j]) (counted from the
	 * segment's start): from the first with jend > j to the first
	 * after it with jbegin > j.  Both edges never decrease with j: one
	 * sweep each finds them. */
	nb = 0;
	while (nb < s->tr_seg && s->jend[nb] == 0)
		nb++;
	ne = nb;
	while (ne < s->tr_seg && s->jend[ne] > 0)
		ne++;
	for (i = nb, a = nb, j = 0; j < s->tc; j++) {
		while (i < ne && s->jend[i] <= j)
			i++;
		if (a < i)
			a = i;
		while (a < ne && s->jbegin[a] <= j)
			a++;
		s->ibegin[j] = i;
		s->iend[j] = a;
	}
	for (o = 0; o < s->nouter; o++) {
		inner = t->order == ORDER_FA2 ? s->jend[o] - s->jbegin[o] :
		    s->iend[o % s->tc] - s->ibegin[o % s->tc];
		s->first[o + 1] = s->first[o] + inner;
	}
	s->nsteps = s->first[s->nouter];
	return 0;
}

void
schedule_free(struct schedule *s)
{
	free(s->jbegin);
	free(s->jend);
	free(s->ibegin);
	free(s->iend);
	free(s->first);
	memset(s, 0, sizeof *s);
}

/* The range fields of a tile whose i and j are set. */
static void
schedule_split_tile(const struct schedule *s, struct schedule_tile *t)
{
	int j0, j1;

	t->split = schedule_split_of(s, t->i, t->j);
	schedule_split_range(s, t->i, t->split, &j0, &j1);
	t->first_in_split = t->j == j0;
	t->last_in_split = t->j == j1 - 1;
	t->kv_head = schedule_kv_head(s, t->i);
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
		out->j = s->jbegin[o] + (int)inner;
	} else {
		out->j = o % s->tc;
		out->i = (o / s->tc) * s->tr_seg + s->ibegin[out->j] + (int)inner;
	}
	schedule_rows(s, out->i, &out->r0, &out->r1);
	out->c0 = out->j * s->bc;
	out->c1 = min_int(out->c0 + s->bc, s->tk);
	out->first_in_row = out->j == s->jbegin[out->i];
	out->last_in_row = out->j == s->jend[out->i] - 1;
	out->first_in_outer = inner == 0;
	schedule_split_tile(s, out);
}

int
schedule_skipped(const struct schedule *s, int i, int j)
{
	return j < s->jbegin[i] || j >= s->jend[i];
}

long
schedule_step_of(const struct schedule *s, int i, int j)
{
	if (i < 0 || i >= s->tr || j < 0 || j >= s->tc || schedule_skipped(s, i, j))
		return -1;
	if (s->order == ORDER_FA2)
		return s->first[i] + (j - s->jbegin[i]);
	return s->first[(i / s->tr_seg) * s->tc + j] +
	    (i % s->tr_seg - s->ibegin[j]);
}

void
schedule_rows(const struct schedule *s, int i, int *r0, int *r1)
{
	int seg = i / s->tr_seg, start = seg * s->seglen;

	*r0 = start + (i % s->tr_seg) * s->br;
	*r1 = min_int(*r0 + s->br, start + s->seglen);
}

/* Range `split` of n key blocks cut into `splits` nearly even pieces:
 * the first n mod splits pieces have one block more. */
void
schedule_split_range(const struct schedule *s, int i, int split, int *j0,
    int *j1)
{
	int n = s->jend[i] - s->jbegin[i], base = n / s->splits;
	int extra = n % s->splits;

	*j0 = s->jbegin[i] + split * base + min_int(split, extra);
	*j1 = *j0 + base + (split < extra);
}

int
schedule_split_of(const struct schedule *s, int i, int j)
{
	int n = s->jend[i] - s->jbegin[i], base = n / s->splits;
	int extra = n % s->splits;
	int longer = extra * (base + 1);	/* blocks in the longer ranges */

	j -= s->jbegin[i];
	if (j < longer)
		return j / (base + 1);
	return extra + (j - longer) / base;
}

int
schedule_row_pos(const struct schedule *s, int row)
{
	int r = row % s->seglen;

	return s->pack ? r / s->group : r;
}

int
schedule_row_out(const struct schedule *s, int row)
{
	int seg = row / s->seglen, r = row % s->seglen;

	if (!s->pack)
		return row;
	/* packed row (pos, hh) of K/V head seg is query head seg H/G + hh */
	return (seg * s->group + r % s->group) * s->tq + r / s->group;
}

int
schedule_kv_head(const struct schedule *s, int i)
{
	int seg = i / s->tr_seg;

	return s->pack ? seg : seg / s->group;
}
