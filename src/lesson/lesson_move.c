/*
 * lesson_move.c - moving through the simulator: step, phase, goto,
 * label, focus, and pause, where a slide ends.  What depends on the
 * problem (a step past the last, a row past Tq) is caught when the
 * directive runs; the runner rehearses a lesson before it shows it.
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_parser.h"
#include "lesson_run.h"
#include "model/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
pause_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	return lesson_parser_no_words(c, err, errlen);
}

static int
pause_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	run->npauses++;
	if (run->sink != NULL && run->sink->pause != NULL)
		run->sink->pause(run->ctx, run);
	return LESSON_PAUSED;
}

static int
focus_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	if (c->argc != 2 || (strcmp(c->argv[0], "row") != 0 &&
	    strcmp(c->argv[0], "key") != 0) ||
	    lesson_parser_long(c->argv[1], 0, INT_MAX, &c->n) != 0)
		return util_error(err, errlen, "focus takes 'row R' or 'key C' with "
		    "R a row, C a key, numbered from 0");
	c->n2 = c->argv[0][0] == 'k';
	return 0;
}

static int
focus_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	int n;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	n = c->n2 ? run->setup.problem.tk : lesson_run_rows(run);
	if (c->n >= n)
		return lesson_run_error(run, c, "focus %s %ld does not exist: the "
		    "problem has %d %s (0 to %d)", c->argv[0], c->n, n,
		    c->n2 ? "keys" : "rows", n - 1);
	if (c->n2)
		run->focus_key = (int)c->n;
	else
		run->focus = (int)c->n;
	return LESSON_NEXT;
}

static const struct {
	const char *name;
	enum lesson_target target;
} until_events[] = {
	{ "row", LESSON_UNTIL_ROW },
	{ "max-rises", LESSON_UNTIL_RISE },
	{ "row-done", LESSON_UNTIL_DONE },
};

static int
step_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	size_t i;

	(void)ps;
	c->n = 1;
	c->target = LESSON_GOTO_STEP;
	if (c->argc == 0)
		return 0;
	if (strcmp(c->argv[0], "until") == 0) {
		if (c->argc < 2)
			return util_error(err, errlen, "step until needs an event: "
			    "row, max-rises or row-done");
		for (i = 0; i < sizeof until_events / sizeof until_events[0]; i++)
			if (strcmp(c->argv[1], until_events[i].name) == 0)
				break;
		if (i == sizeof until_events / sizeof until_events[0])
			return util_error(err, errlen, "step until: unknown event '%s' "
			    "(row, max-rises or row-done)", c->argv[1]);
		c->target = until_events[i].target;
		return lesson_parser_phase_suffix(c, 2, err, errlen);
	}
	if (c->argc != 1 || lesson_parser_long(c->argv[0], 1, LONG_MAX, &c->n) != 0)
		return util_error(err, errlen, "step takes a number of steps from 1, "
		    "or 'until EVENT', not '%s'", c->argv[0]);
	return 0;
}

/* Is step k (global) one that `step until` waits for?  A forward step
 * whose tile holds the focus row, raises its max or finalizes it; a
 * combine step that merges its row block, or finalizes it; a backward
 * step whose tile holds it, or adds the last part of its dQ.  May move
 * the main sim (max-rises): the caller puts it back. */
static int
event_at(struct lesson_run *run, enum lesson_target ev, long k, int *hit)
{
	const struct sim_view *v;
	struct timeline_pos pos;
	struct schedule_tile t;
	const struct schedule *s = sim_schedule(run->setup.sim);
	int r = run->focus, x, m;

	*hit = 0;
	if (timeline_locate(run->bwd.tl, k, &pos) != 0)
		return -1;
	switch (timeline_segment(run->bwd.tl, pos.seg)->kind) {
	case TIMELINE_COMBINE:
		m = combine_merges(run->bwd.comb);
		schedule_rows(s, (int)(pos.step / m), &t.r0, &t.r1);
		t.last_in_row = pos.step % m == m - 1;
		if (ev == LESSON_UNTIL_RISE)
			return 0;
		break;
	case TIMELINE_BACKWARD:
		schedule_tile(backward_schedule(run->bwd.bwd), pos.step, &t);
		if (ev == LESSON_UNTIL_RISE)
			return 0;
		break;
	default:
		schedule_tile(s, pos.step, &t);
		break;
	}
	if (r < t.r0 || r >= t.r1)
		return 0;
	if (ev == LESSON_UNTIL_ROW) {
		*hit = 1;
		return 0;
	}
	if (ev == LESSON_UNTIL_DONE) {
		*hit = t.last_in_row;
		return 0;
	}
	/* max-rises: the row had a max and this tile raised it */
	if (sim_seek(run->setup.sim, pos.step, SIM_PHASE_LAST) != 0)
		return -1;
	v = sim_view(run->setup.sim);
	x = r - t.r0;
	*hit = isfinite(v->m_old[x]) && v->m_new[x] > v->m_old[x];
	return 0;
}

static const char *
event_words(enum lesson_target ev)
{
	switch (ev) {
	case LESSON_UNTIL_ROW:
		return "holds row";
	case LESSON_UNTIL_RISE:
		return "raises the max of row";
	default:
		return "finalizes row";
	}
}

/* The phases of global step k. */
static int
phases_of(const struct lesson_run *run, long k)
{
	struct timeline_pos pos;
	int s;

	timeline_locate(run->bwd.tl, k, &pos);
	s = pos.seg;
	return timeline_segment(run->bwd.tl, s)->phases(timeline_engine(run->bwd.tl, s),
	    pos.step);
}

static int
step_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	long k, from, nsteps;
	int hit, phase;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	nsteps = timeline_steps(run->bwd.tl);
	/* A step half done counts as one: `step` completes it. */
	from = run->step;
	if (run->step >= 0 && run->phase < phases_of(run, run->step) - 1)
		from--;
	if (c->target == LESSON_GOTO_STEP) {
		if (from + c->n >= nsteps)
			return lesson_run_error(run, c, "step %ld goes past the last "
			    "step: the problem has %ld steps (0 to %ld) and the lesson "
			    "is %s step %ld", c->n, nsteps, nsteps - 1, run->step < 0 ?
			    "before" : "at", run->step < 0 ? 0 : run->step);
		return lesson_run_seek(run, c, from + c->n, -1);
	}
	for (k = from + 1; k < nsteps; k++) {
		if (event_at(run, c->target, k, &hit) != 0)
			return lesson_run_error(run, c, "the simulator could not seek");
		if (hit) {
			if (lesson_run_phase_local(run, c, k, c->phase, &phase) != 0)
				return LESSON_ERROR;
			return lesson_run_seek(run, c, k, phase);
		}
	}
	/* Put the main sim back where the lesson stands. */
	lesson_run_resync(run);
	return lesson_run_error(run, c, "step until %s: no later step %s %d",
	    c->argv[1], event_words(c->target), run->focus);
}

static int
phase_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	c->n = 1;
	if (c->argc == 0)
		return 0;
	if (c->argc != 1 || lesson_parser_long(c->argv[0], -1000000, 1000000,
	    &c->n) != 0 || c->n == 0)
		return util_error(err, errlen, "phase takes a number of phases, "
		    "forwards (3) or back (-1), not '%s'", c->argv[0]);
	return 0;
}

static int
phase_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	long left = c->n > 0 ? c->n : -c->n;
	int dir = c->n > 0 ? 1 : -1;
	struct timeline_pos pos;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	for (; left > 0; left--) {
		if (dir > 0 && run->step < 0) {
			if (lesson_run_seek(run, c, 0, 0) != 0)
				return LESSON_ERROR;
		} else if (dir < 0 && run->step == 0 && run->phase == 0) {
			if (lesson_run_seek(run, c, -1, 0) != 0)
				return LESSON_ERROR;
		} else if (dir < 0 && run->step < 0)
			return lesson_run_error(run, c, "phase %ld goes back past the "
			    "start", c->n);
		else if (timeline_move_phase(run->bwd.tl, dir) != 0)
			return lesson_run_error(run, c, "phase %ld goes past the last "
			    "phase of the last step", c->n);
		else {
			timeline_position(run->bwd.tl, &pos);
			run->step = pos.global;
			run->phase = pos.phase;
		}
	}
	return LESSON_NEXT;
}

/* The segments `goto` can name. */
static const struct {
	const char *name;
	enum timeline_kind kind;
} goto_segments[] = {
	{ "forward", TIMELINE_FORWARD },
	{ "combine", TIMELINE_COMBINE },
	{ "backward", TIMELINE_BACKWARD },
};

static int
goto_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	const char *what = c->argc > 0 ? c->argv[0] : "";
	int at = 0;
	size_t i;

	c->phase = -1;
	for (i = 0; i < sizeof goto_segments / sizeof goto_segments[0]; i++)
		if (strcmp(what, goto_segments[i].name) == 0) {
			c->segment = 1 + (int)goto_segments[i].kind;
			at = 1;
			what = c->argc > 1 ? c->argv[1] : "";
		}
	if (strcmp(what, "step") == 0) {
		c->target = LESSON_GOTO_STEP;
		if (c->argc < at + 2 ||
		    lesson_parser_long(c->argv[at + 1], 0, LONG_MAX, &c->n) != 0)
			return util_error(err, errlen, "goto step takes a step number "
			    "from 0");
		return lesson_parser_phase_suffix(c, at + 2, err, errlen);
	}
	if (strcmp(what, "tile") == 0) {
		c->target = LESSON_GOTO_TILE;
		if (c->segment == 1 + TIMELINE_COMBINE)
			return util_error(err, errlen, "goto combine takes step N, "
			    "start or end: the combine merges partials, it has no "
			    "tiles");
		if (c->argc < at + 3 ||
		    lesson_parser_long(c->argv[at + 1], 0, INT_MAX, &c->n) != 0 ||
		    lesson_parser_long(c->argv[at + 2], 0, INT_MAX, &c->n2) != 0)
			return util_error(err, errlen, "goto tile takes a row block I "
			    "and a key block J, from 0");
		return lesson_parser_phase_suffix(c, at + 3, err, errlen);
	}
	if (strcmp(what, "start") == 0 || strcmp(what, "end") == 0) {
		c->target = what[0] == 's' ? LESSON_GOTO_START : LESSON_GOTO_END;
		if (c->argc != at + 1)
			return util_error(err, errlen, "goto %s takes nothing after it",
			    what);
		return 0;
	}
	if (strcmp(what, "label") == 0 && at == 0) {
		c->target = LESSON_GOTO_LABEL;
		if (c->argc != 2)
			return util_error(err, errlen, "goto label takes a label's name");
		c->ref = lesson_parser_label(ps, c->argv[1]);
		if (c->ref < 0)
			return util_error(err, errlen, "no label '%s' before this line",
			    c->argv[1]);
		c->ref = ps->l->cmds[c->ref].ref;
		return 0;
	}
	return util_error(err, errlen, "goto takes [forward|combine|backward] "
	    "step N, tile I J, start or end, or label NAME%s%s%s",
	    *what ? ", not '" : "", what, *what ? "'" : "");
}

/* The schedule of the segment's tiles. */
static const struct schedule *
segment_schedule(const struct lesson_run *run, enum timeline_kind kind)
{
	return kind == TIMELINE_BACKWARD ? backward_schedule(run->bwd.bwd) :
	    sim_schedule(run->setup.sim);
}

static int
goto_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	const struct lesson_mark *mk;
	const struct schedule *s;
	enum timeline_kind kind = c->segment > 0 ? (enum timeline_kind)
	    (c->segment - 1) : TIMELINE_FORWARD;
	long k, first = 0, n;
	int seg = 0, phase;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	n = timeline_steps(run->bwd.tl);
	if (c->segment > 0) {
		seg = timeline_find(run->bwd.tl, kind);
		if (seg < 0)
			return lesson_run_error(run, c, "the problem has no %s: %s",
			    c->argv[0], kind == TIMELINE_COMBINE ?
			    "give it splits 2 or more" : "give it backward");
		first = timeline_first(run->bwd.tl, seg);
		n = timeline_segment(run->bwd.tl, seg)->steps(timeline_engine(run->bwd.tl,
		    seg));
	}
	switch (c->target) {
	case LESSON_GOTO_STEP:
		if (c->segment > 0 && c->n >= n)
			return lesson_run_error(run, c, "the %s has %ld steps (0 to "
			    "%ld), no step %ld", timeline_segment(run->bwd.tl, seg)->name,
			    n, n - 1, c->n);
		k = first + c->n;
		break;
	case LESSON_GOTO_TILE:
		s = segment_schedule(run, kind);
		if (c->n >= s->tr || c->n2 >= s->tc)
			return lesson_run_error(run, c, "tile (%ld, %ld) does not "
			    "exist: the tiles are (0..%d, 0..%d)", c->n, c->n2,
			    s->tr - 1, s->tc - 1);
		k = schedule_step_of(s, (int)c->n, (int)c->n2);
		if (k < 0)
			return lesson_run_error(run, c, "tile (%ld, %ld) is skipped by "
			    "the mask: no step visits it", c->n, c->n2);
		k += first;
		break;
	case LESSON_GOTO_START:
		if (c->segment == 0)
			return lesson_run_seek(run, c, -1, 0);
		return lesson_run_seek(run, c, first, 0);
	case LESSON_GOTO_END:
		return lesson_run_seek(run, c, first + n - 1, -1);
	default:
		mk = &run->marks[c->ref];
		if (mk->generation != run->generation)
			return lesson_run_error(run, c, "label '%s' belongs to an "
			    "earlier problem (the problem changed at line %d)",
			    c->argv[1], run->problem_line);
		return lesson_run_seek(run, c, mk->step, mk->phase);
	}
	if (lesson_run_phase_local(run, c, k, c->phase, &phase) != 0)
		return LESSON_ERROR;
	return lesson_run_seek(run, c, k, phase);
}

static int
label_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = ps->l;
	const char *s;
	int prev;

	if (c->argc != 1)
		return util_error(err, errlen, "label takes one name (label rise)");
	for (s = c->argv[0]; *s != '\0'; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && *s != '-' && *s != '_')
			return util_error(err, errlen, "label names hold letters, "
			    "digits, '-' and '_', not '%s'", c->argv[0]);
	prev = lesson_parser_label(ps, c->argv[0]);
	if (prev >= 0)
		return util_error(err, errlen, "label '%s' is already at line %d",
		    c->argv[0], l->cmds[prev].line);
	c->ref = l->nlabels++;
	return 0;
}

static int
label_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	struct lesson_mark *mk = &run->marks[c->ref];

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	mk->step = run->step;
	mk->phase = run->phase;
	mk->generation = run->generation;
	return LESSON_NEXT;
}

const struct lesson_directive lesson_move_directives[] = {
	{ .name = "step", .usage = "step [N] | step until row|max-rises|row-done "
	  "[phase P]", .parse = step_parse, .exec = step_exec },
	{ .name = "phase", .usage = "phase [N]", .parse = phase_parse,
	  .exec = phase_exec },
	{ .name = "goto", .usage = "goto [forward|combine|backward] step N "
	  "[phase P] | goto [forward|backward] tile I J [phase P] | goto "
	  "[SEGMENT] start | goto [SEGMENT] end | goto label NAME",
	  .parse = goto_parse,
	  .exec = goto_exec },
	{ .name = "label", .usage = "label NAME", .flags = LESSON_SILENT,
	  .parse = label_parse, .exec = label_exec },
	{ .name = "focus", .usage = "focus row R | focus key C",
	  .flags = LESSON_SILENT,
	  .parse = focus_parse, .exec = focus_exec },
	{ .name = "pause", .usage = "pause", .parse = pause_parse,
	  .exec = pause_exec },
	{ .name = NULL },
};
