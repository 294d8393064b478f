/* pipeline_warps.c - a producerless kernel's dependencies (pipeline_warps.h). */
#include "config.h"

#include "model/pipeline_warps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* What one warp did to one (block, tensor, stage, round). */
struct warps_slot {
	double land;		/* its wait for its share ended; NAN: none */
	double release;		/* its release; NAN: none */
	double read_begin, read_end;	/* its read (S or P V); NAN: none */
	int copies;		/* its copies into the round */
};

struct warps_map {
	int ncta, nstage, nround, warps;
	struct warps_slot *s;
};

/* K is tensor 0, V tensor 1; -1: not a kind of the ring's. */
static int
warps_tensor(int kind)
{
	switch (kind) {
	case PIPELINE_COPY_K: case PIPELINE_WAIT_FULL_K:
	case PIPELINE_RELEASE_K: case PIPELINE_ISSUE_QK:
		return 0;
	case PIPELINE_COPY_V: case PIPELINE_WAIT_FULL_V:
	case PIPELINE_RELEASE_V: case PIPELINE_ISSUE_PV:
		return 1;
	default:
		return -1;
	}
}

static const char *const warps_tensor_name[2] = { "K", "V" };

static struct warps_slot *
warps_at(const struct warps_map *m, int cta, int tensor, int stage,
    int round, int warp)
{
	return &m->s[((((size_t)cta * 2 + tensor) * m->nstage + stage) *
	    m->nround + round) * m->warps + warp];
}

#define WARPS_FAIL(...) do {						\
	if (bad++ == 0)							\
		snprintf(why, whylen, __VA_ARGS__);			\
} while (0)

int
pipeline_check_warps(const struct pipeline_event *ev, size_t nev, int warps,
    char *why, size_t whylen)
{
	struct warps_map m = { 0, 0, 0, warps, NULL };
	size_t x, n;
	int bad = 0, w;

	if (whylen > 0)
		why[0] = '\0';
	if (warps < 1) {
		WARPS_FAIL("a recording of %d warps", warps);
		return bad;
	}
	for (x = 0; x < nev; x++) {
		const struct pipeline_event *e = &ev[x];

		if (e->cta < 0 || e->stage < -1 || e->round < 0) {
			WARPS_FAIL("event %zu has a negative block, stage or "
			    "round", x);
			return bad;
		}
		if (e->role < 0 || e->role >= warps) {
			WARPS_FAIL("event %zu is of role %d, not a warp 0..%d",
			    x, e->role, warps - 1);
			return bad;
		}
		if (e->cta + 1 > m.ncta)
			m.ncta = e->cta + 1;
		if (e->stage + 1 > m.nstage)
			m.nstage = e->stage + 1;
		if (e->round + 1 > m.nround)
			m.nround = e->round + 1;
	}
	if (nev == 0 || m.nstage == 0)
		return 0;
	n = (size_t)m.ncta * 2 * m.nstage * m.nround * warps;
	if ((m.s = malloc(n * sizeof *m.s)) == NULL) {
		WARPS_FAIL("out of memory checking %zu events", nev);
		return bad;
	}
	for (x = 0; x < n; x++) {
		m.s[x].land = m.s[x].release = NAN;
		m.s[x].read_begin = m.s[x].read_end = NAN;
		m.s[x].copies = 0;
	}
	for (x = 0; x < nev; x++) {
		const struct pipeline_event *e = &ev[x];
		const int tn = warps_tensor(e->kind);
		struct warps_slot *s;

		if (tn < 0 || e->stage < 0)
			continue;
		s = warps_at(&m, e->cta, tn, e->stage, e->round, e->role);
		switch (e->kind) {
		case PIPELINE_COPY_K: case PIPELINE_COPY_V:
			s->copies++;
			break;
		case PIPELINE_WAIT_FULL_K: case PIPELINE_WAIT_FULL_V:
			if (isnan(s->land) || e->end > s->land)
				s->land = e->end;
			break;
		case PIPELINE_RELEASE_K: case PIPELINE_RELEASE_V:
			if (isnan(s->release) || e->end > s->release)
				s->release = e->end;
			break;
		default:	/* the reads */
			if (isnan(s->read_begin) || e->begin < s->read_begin)
				s->read_begin = e->begin;
			if (isnan(s->read_end) || e->end > s->read_end)
				s->read_end = e->end;
			break;
		}
	}
	for (x = 0; x < nev; x++) {
		const struct pipeline_event *e = &ev[x];
		const int tn = warps_tensor(e->kind);
		const char *t = tn >= 0 ? warps_tensor_name[tn] : "";
		const struct warps_slot *own;

		if (tn < 0 || e->stage < 0)
			continue;
		own = warps_at(&m, e->cta, tn, e->stage, e->round, e->role);
		if (e->kind == PIPELINE_ISSUE_QK || e->kind == PIPELINE_ISSUE_PV) {
			for (w = 0; w < warps; w++) {
				const struct warps_slot *o = warps_at(&m,
				    e->cta, tn, e->stage, e->round, w);

				if (o->copies == 0)
					WARPS_FAIL("block %d: warp %d read %s "
					    "of stage %d (round %d) with no "
					    "share of it copied by warp %d",
					    e->cta, e->role, t, e->stage,
					    e->round, w);
				else if (isnan(o->land))
					WARPS_FAIL("block %d: warp %d read %s "
					    "of stage %d (round %d), warp %d "
					    "never waited for its share", e->cta,
					    e->role, t, e->stage, e->round, w);
				else if (e->begin < o->land)
					WARPS_FAIL("block %d: warp %d read %s "
					    "of stage %d (round %d) at %.0f, "
					    "before warp %d's copy landed at "
					    "%.0f", e->cta, e->role, t, e->stage,
					    e->round, e->begin, w, o->land);
			}
		} else if (e->kind == PIPELINE_RELEASE_K ||
		    e->kind == PIPELINE_RELEASE_V) {
			if (isnan(own->read_end))
				WARPS_FAIL("block %d: warp %d released %s of "
				    "stage %d (round %d) it never read", e->cta,
				    e->role, t, e->stage, e->round);
			else if (e->end < own->read_end)
				WARPS_FAIL("block %d: warp %d released %s of "
				    "stage %d (round %d) at %.0f, before its "
				    "read ended at %.0f", e->cta, e->role, t,
				    e->stage, e->round, e->end, own->read_end);
		} else if ((e->kind == PIPELINE_COPY_K ||
		    e->kind == PIPELINE_COPY_V) && e->round > 0) {
			if (own->copies > 1)
				WARPS_FAIL("block %d: warp %d copied %s into "
				    "stage %d twice in round %d", e->cta,
				    e->role, t, e->stage, e->round);
			for (w = 0; w < warps; w++) {
				const struct warps_slot *o = warps_at(&m,
				    e->cta, tn, e->stage, e->round - 1, w);

				if (isnan(o->release))
					WARPS_FAIL("block %d: warp %d refilled "
					    "%s stage %d (round %d) before warp "
					    "%d released round %d", e->cta,
					    e->role, t, e->stage, e->round, w,
					    e->round - 1);
				else if (e->begin < o->release)
					WARPS_FAIL("block %d: warp %d refilled "
					    "%s stage %d (round %d) at %.0f, "
					    "before warp %d released it at "
					    "%.0f", e->cta, e->role, t, e->stage,
					    e->round, e->begin, w, o->release);
			}
		}
	}
	free(m.s);
	return bad;
}

static int
warps_time_cmp(const void *pa, const void *pb)
{
	const struct pipeline_event *a = pa, *b = pb;

	if (a->cta != b->cta)
		return a->cta < b->cta ? -1 : 1;
	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	if (a->role != b->role)
		return a->role < b->role ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

void
pipeline_warps_sort(struct pipeline_event *ev, size_t nev)
{
	qsort(ev, nev, sizeof *ev, warps_time_cmp);
}
