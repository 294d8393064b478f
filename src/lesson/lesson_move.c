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
	if (c->argc != 2 || strcmp(c->argv[0], "row") != 0 ||
	    lesson_parser_long(c->argv[1], 0, INT_MAX, &c->n) != 0)
		return util_error(err, errlen, "focus takes 'row R' with R a row "
		    "number from 0");
	return 0;
}

static int
focus_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	if (c->n >= run->setup.problem.tq)
		return lesson_run_error(run, c, "focus row %ld does not exist: "
		    "the problem has %d rows (0 to %d)", c->n, run->setup.problem.tq,
		    run->setup.problem.tq - 1);
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

/* Is step k's tile one that `step until` waits for?  Leaves the probe
 * where it is: only the schedule and the main sim are read. */
static int
event_at(struct lesson_run *run, enum lesson_target ev, long k, int *hit)
{
	const struct sim_view *v;
	struct schedule_tile t;
	int r = run->focus, x;

	schedule_tile(sim_schedule(run->setup.sim), k, &t);
	*hit = 0;
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
	if (sim_seek(run->setup.sim, k, SIM_PHASE_LAST) != 0)
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

static int
step_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	long k, from, nsteps;
	int hit;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	nsteps = sim_steps(run->setup.sim);
	/* A step half done counts as one: `step` completes it. */
	from = run->step;
	if (run->step >= 0 && run->phase < sim_view(run->setup.sim)->nphases - 1)
		from--;
	if (c->target == LESSON_GOTO_STEP) {
		if (from + c->n >= nsteps)
			return lesson_run_error(run, c, "step %ld goes past the last "
			    "step: the problem has %ld steps (0 to %ld) and the lesson "
			    "is %s step %ld", c->n, nsteps, nsteps - 1, run->step < 0 ?
			    "before" : "at", run->step < 0 ? 0 : run->step);
		return lesson_run_seek(run, c, from + c->n, SIM_PHASE_LAST);
	}
	for (k = from + 1; k < nsteps; k++) {
		if (event_at(run, c->target, k, &hit) != 0)
			return lesson_run_error(run, c, "the simulator could not seek");
		if (hit)
			return lesson_run_seek(run, c, k, c->phase);
	}
	/* Put the main sim back where the lesson stands. */
	if (run->step >= 0)
		sim_seek(run->setup.sim, run->step, run->phase);
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

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	for (; left > 0; left--) {
		if (dir > 0 && run->step < 0) {
			if (lesson_run_seek(run, c, 0, SIM_PHASE_LOAD) != 0)
				return LESSON_ERROR;
		} else if (dir < 0 && run->step == 0 && run->phase == 0) {
			if (lesson_run_seek(run, c, -1, 0) != 0)
				return LESSON_ERROR;
		} else if (dir < 0 && run->step < 0)
			return lesson_run_error(run, c, "phase %ld goes back past the "
			    "start", c->n);
		else if (sim_move_phase(run->setup.sim, dir) != 0)
			return lesson_run_error(run, c, "phase %ld goes past the last "
			    "phase of the last step", c->n);
		else {
			run->step = sim_view(run->setup.sim)->step;
			run->phase = (int)sim_view(run->setup.sim)->phase;
		}
	}
	return LESSON_NEXT;
}

static int
goto_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	const char *what = c->argc > 0 ? c->argv[0] : "";

	c->phase = SIM_PHASE_LAST;
	if (strcmp(what, "step") == 0) {
		c->target = LESSON_GOTO_STEP;
		if (c->argc < 2 || lesson_parser_long(c->argv[1], 0, LONG_MAX, &c->n) != 0)
			return util_error(err, errlen, "goto step takes a step number "
			    "from 0");
		return lesson_parser_phase_suffix(c, 2, err, errlen);
	}
	if (strcmp(what, "tile") == 0) {
		c->target = LESSON_GOTO_TILE;
		if (c->argc < 3 || lesson_parser_long(c->argv[1], 0, INT_MAX, &c->n) != 0 ||
		    lesson_parser_long(c->argv[2], 0, INT_MAX, &c->n2) != 0)
			return util_error(err, errlen, "goto tile takes a row block I "
			    "and a key block J, from 0");
		return lesson_parser_phase_suffix(c, 3, err, errlen);
	}
	if (strcmp(what, "start") == 0 || strcmp(what, "end") == 0) {
		c->target = what[0] == 's' ? LESSON_GOTO_START : LESSON_GOTO_END;
		if (c->argc != 1)
			return util_error(err, errlen, "goto %s takes nothing after it",
			    what);
		return 0;
	}
	if (strcmp(what, "label") == 0) {
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
	return util_error(err, errlen, "goto takes step N, tile I J, start, end "
	    "or label NAME%s%s%s", *what ? ", not '" : "", what, *what ? "'" : "");
}

static int
goto_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	const struct schedule *s;
	const struct lesson_mark *mk;
	long k;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	s = sim_schedule(run->setup.sim);
	switch (c->target) {
	case LESSON_GOTO_STEP:
		return lesson_run_seek(run, c, c->n, c->phase);
	case LESSON_GOTO_TILE:
		if (c->n >= s->tr || c->n2 >= s->tc)
			return lesson_run_error(run, c, "tile (%ld, %ld) does not "
			    "exist: the tiles are (0..%d, 0..%d)", c->n, c->n2,
			    s->tr - 1, s->tc - 1);
		k = schedule_step_of(s, (int)c->n, (int)c->n2);
		if (k < 0)
			return lesson_run_error(run, c, "tile (%ld, %ld) is skipped by "
			    "the mask: no step visits it", c->n, c->n2);
		return lesson_run_seek(run, c, k, c->phase);
	case LESSON_GOTO_START:
		return lesson_run_seek(run, c, -1, 0);
	case LESSON_GOTO_END:
		return lesson_run_seek(run, c, s->nsteps - 1, SIM_PHASE_LAST);
	default:
		mk = &run->marks[c->ref];
		if (mk->generation != run->generation)
			return lesson_run_error(run, c, "label '%s' belongs to an "
			    "earlier problem (the problem changed at line %d)",
			    c->argv[1], run->problem_line);
		return lesson_run_seek(run, c, mk->step, mk->phase);
	}
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
	{ .name = "goto", .usage = "goto step N [phase P] | goto tile I J [phase P] "
	  "| goto start | goto end | goto label NAME", .parse = goto_parse,
	  .exec = goto_exec },
	{ .name = "label", .usage = "label NAME", .flags = LESSON_SILENT,
	  .parse = label_parse, .exec = label_exec },
	{ .name = "focus", .usage = "focus row R", .flags = LESSON_SILENT,
	  .parse = focus_parse, .exec = focus_exec },
	{ .name = "pause", .usage = "pause", .parse = pause_parse,
	  .exec = pause_exec },
	{ .name = NULL },
};
