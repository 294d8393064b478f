/* timeline.c - segments in order, global step numbers (timeline.h). */
#include "config.h"

#include "timeline.h"
#include "backward.h"
#include "combine.h"
#include "sim.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct timeline_entry {
	const struct timeline_segment *seg;
	void *engine;
	long first;		/* global number of its step 0 */
};

struct timeline {
	struct timeline_entry *e;
	int n, cap;
	int cur;		/* the segment the position is in */
	long total;
};

/* ---- the forward: struct sim ---- */

static const char *forward_phase_names[SIM_PHASES] = {
	[SIM_PHASE_LOAD] = "load",
	[SIM_PHASE_SCORES] = "scores",
	[SIM_PHASE_MAX] = "max",
	[SIM_PHASE_RESCALE] = "rescale",
	[SIM_PHASE_EXP] = "exp",
	[SIM_PHASE_UPDATE] = "update",
	[SIM_PHASE_FINALIZE] = "finalize",
};

static long
forward_steps(const void *e)
{
	return sim_steps(e);
}

static int
forward_phases(const void *e, long k)
{
	struct schedule_tile t;

	/* A row block's last tile finalizes, or with split-KV each key
	 * range's last (sim.h). */
	schedule_tile(sim_schedule(e), k, &t);
	return t.last_in_split ? SIM_PHASES : SIM_PHASES - 1;
}

static const char *
forward_phase_name(int phase)
{
	return phase >= 0 && phase < SIM_PHASES ? forward_phase_names[phase] : "?";
}

static int
forward_seek(void *e, long k, int phase)
{
	return sim_seek(e, k, phase);
}

static int
forward_move_phase(void *e, int delta)
{
	return sim_move_phase(e, delta);
}

static long
forward_step(const void *e)
{
	return sim_view(e)->step;
}

static int
forward_phase(const void *e)
{
	return (int)sim_view(e)->phase;
}

static const void *
forward_view(const void *e)
{
	return sim_view(e);
}

const struct timeline_segment timeline_forward = {
	.name = "forward",
	.kind = TIMELINE_FORWARD,
	.steps = forward_steps,
	.phases = forward_phases,
	.phase_name = forward_phase_name,
	.seek = forward_seek,
	.move_phase = forward_move_phase,
	.step = forward_step,
	.phase = forward_phase,
	.view = forward_view,
};

/* ---- the combine: struct combine ---- */

static long
comb_steps(const void *e)
{
	return combine_steps(e);
}

static int
comb_phases(const void *e, long k)
{
	return combine_step_phases(e, k);
}

static int
comb_seek(void *e, long k, int phase)
{
	return combine_seek(e, k, phase);
}

static int
comb_move_phase(void *e, int delta)
{
	return combine_move_phase(e, delta);
}

static long
comb_step(const void *e)
{
	return combine_view(e)->step;
}

static int
comb_phase(const void *e)
{
	return (int)combine_view(e)->phase;
}

static const void *
comb_view(const void *e)
{
	return combine_view(e);
}

const struct timeline_segment timeline_combine = {
	.name = "combine",
	.kind = TIMELINE_COMBINE,
	.steps = comb_steps,
	.phases = comb_phases,
	.phase_name = combine_phase_name,
	.seek = comb_seek,
	.move_phase = comb_move_phase,
	.step = comb_step,
	.phase = comb_phase,
	.view = comb_view,
};

/* ---- the backward: struct backward ---- */

static long
bwd_steps(const void *e)
{
	return backward_steps(e);
}

static int
bwd_phases(const void *e, long k)
{
	return backward_step_phases(e, k);
}

static int
bwd_seek(void *e, long k, int phase)
{
	return backward_seek(e, k, phase);
}

static int
bwd_move_phase(void *e, int delta)
{
	return backward_move_phase(e, delta);
}

static long
bwd_step(const void *e)
{
	return backward_view(e)->step;
}

static int
bwd_phase(const void *e)
{
	return (int)backward_view(e)->phase;
}

static const void *
bwd_view(const void *e)
{
	return backward_view(e);
}

const struct timeline_segment timeline_backward = {
	.name = "backward",
	.kind = TIMELINE_BACKWARD,
	.steps = bwd_steps,
	.phases = bwd_phases,
	.phase_name = backward_phase_name,
	.seek = bwd_seek,
	.move_phase = bwd_move_phase,
	.step = bwd_step,
	.phase = bwd_phase,
	.view = bwd_view,
};

/* ---- the timeline ---- */

struct timeline *
timeline_new(char *err, size_t errlen)
{
	return util_calloc(1, sizeof(struct timeline), "timeline", err, errlen);
}

void
timeline_free(struct timeline *tl)
{
	if (tl == NULL)
		return;
	free(tl->e);
	free(tl);
}

int
timeline_add(struct timeline *tl, const struct timeline_segment *seg,
    void *engine, char *err, size_t errlen)
{
	struct timeline_entry *e;
	long n = seg->steps(engine);

	if (n <= 0)
		return util_error(err, errlen, "the %s has no steps", seg->name);
	if (tl->n == tl->cap) {
		e = realloc(tl->e, (size_t)(tl->cap * 2 + 2) * sizeof *e);
		if (e == NULL)
			return util_error(err, errlen, "timeline: out of memory");
		tl->e = e;
		tl->cap = tl->cap * 2 + 2;
	}
	tl->e[tl->n].seg = seg;
	tl->e[tl->n].engine = engine;
	tl->e[tl->n].first = tl->total;
	tl->total += n;
	if (tl->n++ == 0)
		seg->seek(engine, 0, 0);
	return 0;
}

int
timeline_segments(const struct timeline *tl)
{
	return tl->n;
}

const struct timeline_segment *
timeline_segment(const struct timeline *tl, int seg)
{
	return tl->e[seg].seg;
}

void *
timeline_engine(const struct timeline *tl, int seg)
{
	return tl->e[seg].engine;
}

long
timeline_first(const struct timeline *tl, int seg)
{
	return tl->e[seg].first;
}

int
timeline_find(const struct timeline *tl, enum timeline_kind kind)
{
	int s;

	for (s = 0; s < tl->n; s++)
		if (tl->e[s].seg->kind == kind)
			return s;
	return -1;
}

long
timeline_steps(const struct timeline *tl)
{
	return tl->total;
}

int
timeline_locate(const struct timeline *tl, long g, struct timeline_pos *out)
{
	int s;

	if (g < 0 || g >= tl->total)
		return -1;
	for (s = tl->n - 1; tl->e[s].first > g; s--)
		;
	out->seg = s;
	out->step = g - tl->e[s].first;
	out->global = g;
	out->phase = 0;
	return 0;
}

int
timeline_seek(struct timeline *tl, long g, int phase)
{
	struct timeline_pos pos;

	if (timeline_locate(tl, g, &pos) != 0)
		return -1;
	if (tl->e[pos.seg].seg->seek(tl->e[pos.seg].engine, pos.step, phase) != 0)
		return -1;
	tl->cur = pos.seg;
	return 0;
}

int
timeline_move_phase(struct timeline *tl, int delta)
{
	const struct timeline_entry *e;
	int next;

	if (tl->n == 0)
		return -1;
	e = &tl->e[tl->cur];
	if (e->seg->move_phase(e->engine, delta) == 0)
		return 0;
	/* Off the end of this segment: into its neighbour, if any. */
	next = tl->cur + (delta > 0 ? 1 : -1);
	if (next < 0 || next >= tl->n)
		return -1;
	e = &tl->e[next];
	if (e->seg->seek(e->engine, delta > 0 ? 0 : e->seg->steps(e->engine) - 1,
	    delta > 0 ? 0 : -1) != 0)
		return -1;
	tl->cur = next;
	return 0;
}

void
timeline_position(const struct timeline *tl, struct timeline_pos *out)
{
	const struct timeline_entry *e;

	memset(out, 0, sizeof *out);
	if (tl->n == 0)
		return;
	e = &tl->e[tl->cur];
	out->seg = tl->cur;
	out->step = e->seg->step(e->engine);
	out->global = e->first + out->step;
	out->phase = e->seg->phase(e->engine);
}

const void *
timeline_view(const struct timeline *tl)
{
	if (tl->n == 0)
		return NULL;
	return tl->e[tl->cur].seg->view(tl->e[tl->cur].engine);
}
