/*
 * lesson_directive.c - the directives of the lesson language: for each,
 * the function that reads its words when the script is parsed and the
 * one that executes it when the lesson runs.
 *
 * Parse functions catch everything that can be known from the script
 * alone (counts, names, numbers, the order of ask / choice / answer, that
 * a label exists before its goto), so that a script either parses whole
 * or runs nothing.  What depends on the problem (a step past the last,
 * a row past Tq) is caught when it runs; the runner rehearses a lesson
 * before showing it, so those errors also come before any output.
 */
#include "config.h"

#include "lesson.h"
#include "lesson_path.h"
#include "lesson_run.h"
#include "model/compare.h"
#include "model/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- small readers ---- */

static int
read_long(const char *word, long min, long max, long *out)
{
	char *end;
	long v = strtol(word, &end, 10);

	if (*word == '\0' || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "phase P" at argv[at], or nothing there: the step's last phase. */
static int
read_phase_suffix(struct lesson_cmd *c, int at, char *err, size_t errlen)
{
	c->phase = SIM_PHASE_LAST;
	if (c->argc == at)
		return 0;
	if (c->argc != at + 2 || strcmp(c->argv[at], "phase") != 0)
		return util_error(err, errlen, "%s: unexpected '%s' (the line may end "
		    "with 'phase P')", c->name, c->argv[at]);
	c->phase = lesson_phase_parse(c->argv[at + 1]);
	if (c->phase < 0)
		return util_error(err, errlen, "%s: unknown phase '%s' (load, scores, "
		    "max, rescale, exp, update or finalize)", c->name, c->argv[at + 1]);
	return 0;
}

static int
no_words(struct lesson_cmd *c, char *err, size_t errlen)
{
	if (c->argc != 0)
		return util_error(err, errlen, "%s takes nothing after it, not '%s'",
		    c->name, c->argv[0]);
	return 0;
}

static int
need_text(struct lesson_cmd *c, const char *what, char *err, size_t errlen)
{
	if (c->text == NULL || *c->text == '\0')
		return util_error(err, errlen, "%s needs %s", c->name, what);
	return 0;
}

static int
prev_is(struct lesson_parser *ps, const char *a, const char *b)
{
	const struct lesson_cmd *p = lesson_parser_previous(ps);

	return p != NULL && (strcmp(p->dir->name, a) == 0 ||
	    (b != NULL && strcmp(p->dir->name, b) == 0));
}

/* ---- title, builds-on ---- */

static int
title_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = lesson_parser_lesson(ps);
	int i;

	if (need_text(c, "the lesson's title", err, errlen) != 0)
		return -1;
	if (l->title != NULL) {
		for (i = 0; strcmp(l->cmds[i].dir->name, "title") != 0; i++)
			;
		return util_error(err, errlen, "a second title (the first is at "
		    "line %d)", l->cmds[i].line);
	}
	l->title = strdup(c->text);
	return l->title == NULL ? util_error(err, errlen, "out of memory") : 0;
}

static int
builds_on_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = lesson_parser_lesson(ps);
	char **grown;

	if (c->argc != 1)
		return util_error(err, errlen, "builds-on takes one lesson name "
		    "(builds-on 01-scalar)");
	grown = realloc(l->builds_on, ((size_t)l->nbuilds_on + 1) * sizeof *grown);
	if (grown == NULL)
		return util_error(err, errlen, "out of memory");
	l->builds_on = grown;
	l->builds_on[l->nbuilds_on] = strdup(c->argv[0]);
	if (l->builds_on[l->nbuilds_on] == NULL)
		return util_error(err, errlen, "out of memory");
	l->nbuilds_on++;
	return 0;
}

/* The lesson named must exist: a course that renames a lesson must say
 * so in the lessons that build on it. */
static int
builds_on_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	char msg[400], *path;

	path = lesson_path_find(c->argv[0], run->lesson->path, msg, sizeof msg);
	if (path == NULL)
		return lesson_run_error(run, c, "builds-on: %s", msg);
	free(path);
	return LESSON_NEXT;
}

/* ---- narration ---- */

static int
text_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	return need_text(c, "some text", err, errlen);
}

static int
say_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	if (run->sink != NULL && run->sink->text != NULL)
		run->sink->text(run->ctx, run, LESSON_SAY, c->text);
	return LESSON_NEXT;
}

static int
note_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	if (run->sink != NULL && run->sink->text != NULL)
		run->sink->text(run->ctx, run, LESSON_NOTE, c->text);
	return LESSON_NEXT;
}

/* ---- questions ---- */

static int
ask_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = lesson_parser_lesson(ps);
	struct lesson_question *grown, *q;
	int open = lesson_parser_open_question(ps);

	if (open >= 0)
		return util_error(err, errlen, "the question at line %d has no "
		    "answer yet (an 'answer' line follows its 'ask' and 'choice' "
		    "lines)", l->questions[open].line);
	if (need_text(c, "the question", err, errlen) != 0)
		return -1;
	grown = realloc(l->questions, ((size_t)l->nquestions + 1) * sizeof *grown);
	if (grown == NULL)
		return util_error(err, errlen, "out of memory");
	l->questions = grown;
	q = &l->questions[l->nquestions];
	memset(q, 0, sizeof *q);
	q->line = c->line;
	q->answer = -1;
	q->text = strdup(c->text);
	if (q->text == NULL)
		return util_error(err, errlen, "out of memory");
	c->ref = l->nquestions++;
	lesson_parser_set_open_question(ps, c->ref);
	return 0;
}

static int
ask_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	run->nasked++;
	if (run->sink != NULL && run->sink->ask != NULL)
		run->sink->ask(run->ctx, run, &run->lesson->questions[c->ref],
		    run->nasked);
	return LESSON_NEXT;
}

static int
choice_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = lesson_parser_lesson(ps);
	int open = lesson_parser_open_question(ps);
	struct lesson_question *q;
	char **grown;

	if (open < 0 || !prev_is(ps, "ask", "choice"))
		return util_error(err, errlen, "choice follows an 'ask' line or "
		    "another 'choice'");
	if (need_text(c, "the text of the choice", err, errlen) != 0)
		return -1;
	q = &l->questions[open];
	if (q->nchoices == 26)
		return util_error(err, errlen, "a question has at most 26 choices");
	grown = realloc(q->choices, ((size_t)q->nchoices + 1) * sizeof *grown);
	if (grown == NULL)
		return util_error(err, errlen, "out of memory");
	q->choices = grown;
	q->choices[q->nchoices] = strdup(c->text);
	if (q->choices[q->nchoices] == NULL)
		return util_error(err, errlen, "out of memory");
	q->nchoices++;
	return 0;
}

/* With choices, "answer b explanation" (or "b)", "b:", "b."); without,
 * "answer explanation". */
static int
answer_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = lesson_parser_lesson(ps);
	int open = lesson_parser_open_question(ps);
	struct lesson_question *q;
	const char *t = c->text, *rest;
	char letter;

	if (open < 0 || !prev_is(ps, "ask", "choice"))
		return util_error(err, errlen, "answer follows its question's 'ask' "
		    "line (and its 'choice' lines)");
	q = &l->questions[open];
	if (q->nchoices > 0) {
		/* An empty answer has no letter, and nothing after its end. */
		letter = t[0];
		rest = letter != '\0' ? t + 1 : t;
		if (*rest == ')' || *rest == ':' || *rest == '.')
			rest++;
		if (letter < 'a' || letter >= 'a' + q->nchoices ||
		    (*rest != '\0' && *rest != ' ' && *rest != '\t'))
			return util_error(err, errlen, "answer starts with the letter "
			    "of the right choice (a to %c)", 'a' + q->nchoices - 1);
		q->answer = letter - 'a';
		while (*rest == ' ' || *rest == '\t')
			rest++;
		t = rest;
	} else if (need_text(c, "the answer", err, errlen) != 0)
		return -1;
	if (*t != '\0') {
		q->explanation = strdup(t);
		if (q->explanation == NULL)
			return util_error(err, errlen, "out of memory");
	}
	lesson_parser_set_open_question(ps, -1);
	return 0;
}

/* ---- moving ---- */

static int
pause_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	return no_words(c, err, errlen);
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
	    read_long(c->argv[1], 0, INT_MAX, &c->n) != 0)
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
		return read_phase_suffix(c, 2, err, errlen);
	}
	if (c->argc != 1 || read_long(c->argv[0], 1, LONG_MAX, &c->n) != 0)
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
	if (c->argc != 1 || read_long(c->argv[0], -1000000, 1000000, &c->n) != 0 ||
	    c->n == 0)
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
		if (c->argc < 2 || read_long(c->argv[1], 0, LONG_MAX, &c->n) != 0)
			return util_error(err, errlen, "goto step takes a step number "
			    "from 0");
		return read_phase_suffix(c, 2, err, errlen);
	}
	if (strcmp(what, "tile") == 0) {
		c->target = LESSON_GOTO_TILE;
		if (c->argc < 3 || read_long(c->argv[1], 0, INT_MAX, &c->n) != 0 ||
		    read_long(c->argv[2], 0, INT_MAX, &c->n2) != 0)
			return util_error(err, errlen, "goto tile takes a row block I "
			    "and a key block J, from 0");
		return read_phase_suffix(c, 3, err, errlen);
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
		c->ref = lesson_parser_lesson(ps)->cmds[c->ref].ref;
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
	struct lesson *l = lesson_parser_lesson(ps);
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

/* ---- checks ---- */

static int
expect_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson_expect *e = &c->expect;
	const struct lesson_quantity *q, *best = NULL;
	char name[64], *br;
	int at = 0, nvals, i, dist, bestd = 1000;
	long x;

	(void)ps;
	e->index = -1;
	if (at < c->argc && strcmp(c->argv[at], "final") == 0) {
		e->final = 1;
		at++;
	}
	if (at >= c->argc)
		return util_error(err, errlen, "expect needs a quantity and a value "
		    "(expect m 2)");
	snprintf(name, sizeof name, "%s", c->argv[at++]);
	br = strchr(name, '[');
	if (br != NULL) {
		size_t n = strlen(br);
		if (n < 3 || br[n - 1] != ']')
			return util_error(err, errlen, "expect: '%s' is not NAME[I]",
			    c->argv[at - 1]);
		br[n - 1] = '\0';
		*br++ = '\0';
		if (read_long(br, 0, INT_MAX, &x) != 0)
			return util_error(err, errlen, "expect: the index in '%s' is "
			    "not a number from 0", c->argv[at - 1]);
		e->index = (int)x;
	}
	q = lesson_quantity_find(name);
	if (q == NULL) {
		for (q = lesson_quantities(); q->name != NULL; q++) {
			dist = lesson_distance(name, q->name);
			if (dist < bestd) {
				bestd = dist;
				best = q;
			}
		}
		if (best != NULL && bestd <= (strlen(name) <= 4 ? 1 : 2))
			return util_error(err, errlen, "expect: unknown quantity '%s' "
			    "(did you mean '%s'?)", name, best->name);
		return util_error(err, errlen, "expect: unknown quantity '%s' (see "
		    "flashstep-lesson(5) for the list)", name);
	}
	e->quantity = q;
	if (e->final && !q->final)
		return util_error(err, errlen, "expect final applies to o and lse, "
		    "not %s", q->name);
	if (e->index >= 0 && !q->vector)
		return util_error(err, errlen, "expect: %s is one number; it takes "
		    "no [index]", q->name);

	for (nvals = 0; at + nvals < c->argc && strcmp(c->argv[at + nvals], "tol") &&
	    strcmp(c->argv[at + nvals], "rtol"); nvals++)
		;
	if (nvals == 0)
		return util_error(err, errlen, "expect %s needs the value it should "
		    "have", q->name);
	if ((q->kind == LESSON_Q_PHASE && nvals != 1) ||
	    (q->kind == LESSON_Q_TILE && nvals != 2) ||
	    ((!q->vector || e->index >= 0) && q->kind != LESSON_Q_TILE && nvals != 1))
		return util_error(err, errlen, "expect %s takes %s value%s, not %d",
		    q->name, q->kind == LESSON_Q_TILE ? "two" : "one",
		    q->kind == LESSON_Q_TILE ? "s (I J)" : "", nvals);
	e->values = calloc((size_t)nvals, sizeof *e->values);
	if (e->values == NULL)
		return util_error(err, errlen, "out of memory");
	e->n = nvals;
	for (i = 0; i < nvals; i++) {
		const char *w = c->argv[at + i];
		int bad;

		if (q->kind == LESSON_Q_PHASE) {
			int ph = lesson_phase_parse(w);
			bad = ph < 0;
			e->values[i] = ph;
		} else if (q->kind == LESSON_Q_REAL)
			bad = lesson_number(w, 1, &e->values[i]) != 0;
		else {
			x = 0;
			bad = read_long(w, -1, LONG_MAX, &x) != 0;
			e->values[i] = (double)x;
		}
		if (bad)
			return util_error(err, errlen, "expect %s: '%s' is not %s", q->name,
			    w, q->kind == LESSON_Q_PHASE ? "a phase (load, scores, max, "
			    "rescale, exp, update, finalize)" : q->kind == LESSON_Q_REAL ?
			    "a number" : "a whole number");
	}
	at += nvals;

	if (q->kind == LESSON_Q_REAL)
		e->atol = e->rtol = 1e-6;
	while (at < c->argc) {
		double t;
		if (at + 1 >= c->argc || lesson_number(c->argv[at + 1], 0, &t) != 0 ||
		    t < 0)
			return util_error(err, errlen, "expect: %s takes a number from 0",
			    c->argv[at]);
		if (q->kind == LESSON_Q_PHASE || q->kind == LESSON_Q_TILE)
			return util_error(err, errlen, "expect %s takes no tolerance",
			    q->name);
		if (strcmp(c->argv[at], "tol") == 0)
			e->atol = t;
		else
			e->rtol = t;
		at += 2;
	}
	return 0;
}

/* "1 2 3" into buf: the first 8 values of x. */
static void
format_values(const double *x, int n, int kind, char *buf, size_t len)
{
	char one[48];
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && i < 8 && used < len; i++) {
		if (kind == LESSON_Q_PHASE)
			snprintf(one, sizeof one, "%s", lesson_phase_name((int)x[i]));
		else if (kind == LESSON_Q_REAL)
			lesson_format(x[i], one, sizeof one);
		else
			snprintf(one, sizeof one, "%.0f", x[i]);
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "",
		    one);
	}
	if (n > 8 && used < len)
		snprintf(buf + used, len - used, " ...");
}

/* "row 0 at step 1, phase update" for messages. */
static void
where(struct lesson_run *run, const struct lesson_quantity *q, int final,
    char *buf, size_t len)
{
	const char *row = q->kind == LESSON_Q_REAL ? "row " : "";
	char num[16] = "";

	if (q->kind == LESSON_Q_REAL)
		snprintf(num, sizeof num, "%d, ", run->focus);
	if (final)
		snprintf(buf, len, "%s%safter the whole run", row, num);
	else if (run->step < 0)
		snprintf(buf, len, "%s%sbefore the first step", row, num);
	else
		snprintf(buf, len, "%s%sat step %ld, phase %s", row, num, run->step,
		    lesson_phase_name(run->phase));
}

static int
expect_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	const struct lesson_expect *e = &c->expect;
	const struct lesson_quantity *q = e->quantity;
	char msg[256], want[256], got[256], at[96], tol[64], label[80];
	double *vals = NULL;
	int n = 0, max, i, ok = 1, rc;
	const double *cmp;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	max = run->setup.problem.dv + run->setup.problem.tk + 4;
	vals = calloc((size_t)max, sizeof *vals);
	if (vals == NULL)
		return lesson_run_error(run, c, "out of memory");
	where(run, q, e->final, at, sizeof at);
	format_values(e->values, e->n, q->kind, want, sizeof want);
	if (e->index >= 0)
		snprintf(label, sizeof label, "%s%s[%d]", e->final ? "final " : "",
		    q->name, e->index);
	else
		snprintf(label, sizeof label, "%s%s", e->final ? "final " : "", q->name);
	tol[0] = '\0';
	if (e->atol > 0 || e->rtol > 0)
		snprintf(tol, sizeof tol, " (tol %g, rtol %g)", e->atol, e->rtol);

	if (q->read(run, e->final, vals, max, &n, msg, sizeof msg) != 0) {
		rc = lesson_run_fail(run, c, "expected %s %s%s got none: %s (%s)",
		    label, want, tol, msg, at);
		goto done;
	}
	if (e->index >= 0) {
		if (e->index >= n) {
			rc = lesson_run_fail(run, c, "expected %s %s got none: %s has %d "
			    "entries (%s)", label, want, q->name, n, at);
			goto done;
		}
		cmp = vals + e->index;
		n = 1;
	} else
		cmp = vals;
	if (n != e->n) {
		format_values(cmp, n, q->kind, got, sizeof got);
		rc = lesson_run_fail(run, c, "expected %s %s got %s (%d value%s, not "
		    "%d; %s)", label, want, got, n, n == 1 ? "" : "s", e->n, at);
		goto done;
	}
	for (i = 0; i < n; i++)
		ok = ok && compare_close(cmp[i], e->values[i], e->atol, e->rtol);
	rc = LESSON_NEXT;
	if (!ok) {
		format_values(cmp, n, q->kind, got, sizeof got);
		rc = lesson_run_fail(run, c, "expected %s %s%s got %s (%s)", label,
		    want, tol, got, at);
	}
done:
	free(vals);
	return rc;
}

static int
compare_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	if (c->argc != 1 || strcmp(c->argv[0], "gpu") != 0)
		return util_error(err, errlen, "compare takes 'gpu' (compare gpu)");
	return 0;
}

static int
compare_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	struct gpucheck_report rep;
	char why[256];

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	if (run->flags & LESSON_RUN_DRY)
		return LESSON_NEXT;
	if (gpucheck_run(&run->setup.problem, &run->opts.tiling, &run->opts.rule,
	    &rep, why, sizeof why) != 0) {
		/* No GPU here is not the lesson's fault: it says so and goes on;
		 * unless one must run (FLASHSTEP_REQUIRE_GPU) or a GPU is there
		 * and the kernel failed (gpu/gpu.h: gpu_may_skip). */
		if (!gpu_may_skip(gpu_available(NULL, 0, NULL, 0)))
			return lesson_run_fail(run, c, "expected the kernel to run "
			    "got: %s", why);
		if (run->sink != NULL && run->sink->compare != NULL)
			run->sink->compare(run->ctx, run, NULL, why);
		return LESSON_NEXT;
	}
	if (run->sink != NULL && run->sink->compare != NULL)
		run->sink->compare(run->ctx, run, &rep, NULL);
	if (!rep.pass)
		return lesson_run_fail(run, c, "expected the kernel to agree with the "
		    "simulator (tol %g, rtol %g) got differences m %g, alpha %g, l %g, "
		    "acc %g, O %g, lse %g (worst at step %ld)", rep.atol, rep.rtol,
		    rep.max_m, rep.max_alpha, rep.max_l, rep.max_acc, rep.max_o,
		    rep.max_lse, rep.worst_step);
	return LESSON_NEXT;
}

/* ---- the problem ---- */

/* Which problem options take a matrix: inline numbers or a file. */
static int
is_matrix(const char *name)
{
	return strcmp(name, "q") == 0 || strcmp(name, "k") == 0 ||
	    strcmp(name, "v") == 0 || strcmp(name, "scores") == 0 ||
	    strcmp(name, "values") == 0;
}

/*
 * Inline numbers, rows separated by ';'.  One row without any ';' is a
 * row for q and scores and a column for k and v, as a 1-D .npy file is:
 * `scores 1 2 1001 1002` is S (1, 4), `values 2 -1 4 8` is V (4, 1).
 */
static int
parse_matrix(struct lesson_cmd *c, const char *name, char *err, size_t errlen)
{
	int i, rows = 0, cols = -1, inrow = 0, n = 0, semis = 0;
	int scores = strcmp(name, "scores") == 0;
	double x;

	c->matrix = calloc((size_t)c->argc + 1, sizeof *c->matrix);
	if (c->matrix == NULL)
		return util_error(err, errlen, "out of memory");
	for (i = 0; i <= c->argc; i++) {
		if (i == c->argc || strcmp(c->argv[i], ";") == 0) {
			if (i < c->argc)
				semis++;
			if (inrow == 0) {
				if (i < c->argc)
					return util_error(err, errlen, "%s: row %d is "
					    "empty", name, rows + 1);
				continue;
			}
			if (cols >= 0 && inrow != cols)
				return util_error(err, errlen, "%s: row %d has %d "
				    "number%s but row 1 has %d", name, rows + 1, inrow,
				    inrow == 1 ? "" : "s", cols);
			cols = inrow;
			rows++;
			inrow = 0;
			continue;
		}
		/* Beyond float32's range is refused here, not rounded to inf. */
		if (lesson_number(c->argv[i], scores, &x) != 0 ||
		    (isinf(x) && x > 0) || (isfinite(x) && fabs(x) > 3.4e38))
			return util_error(err, errlen, "%s: '%s' is not a finite "
			    "number%s", name, c->argv[i], scores ?
			    " (or -inf, masked)" : "");
		c->matrix[n++] = (float)x;
		inrow++;
	}
	if (rows == 0)
		return util_error(err, errlen, "%s needs numbers or a file", name);
	if (semis == 0 && (name[0] == 'k' || name[0] == 'v')) {
		c->rows = cols;
		c->cols = 1;
	} else {
		c->rows = rows;
		c->cols = cols;
	}
	return 0;
}

static int
option_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	const char *name = c->option != NULL ? c->option->name : "v";
	const char *folder = lesson_parser_folder(ps);
	struct options o;
	char flag[64], *argv[4];
	double x;
	int rc;

	if (is_matrix(c->name)) {
		if (c->argc == 0)
			return util_error(err, errlen, "%s needs numbers or a .npy "
			    "file", c->name);
		if (c->argc == 1 && strcmp(c->argv[0], ";") != 0 &&
		    lesson_number(c->argv[0], 1, &x) != 0) {
			if (c->argv[0][0] == '/')
				c->path = strdup(c->argv[0]);
			else {
				c->path = malloc(strlen(folder) + strlen(c->argv[0]) + 1);
				if (c->path != NULL)
					sprintf(c->path, "%s%s", folder, c->argv[0]);
			}
			if (c->path == NULL)
				return util_error(err, errlen, "out of memory");
			if (access(c->path, R_OK) != 0)
				return util_error(err, errlen, "%s: cannot read %s", c->name,
				    c->path);
			return 0;
		}
		return parse_matrix(c, c->name, err, errlen);
	}
	if (strcmp(name, "causal") == 0) {
		if (c->argc == 0 || (c->argc == 1 && (strcmp(c->argv[0], "on") == 0 ||
		    strcmp(c->argv[0], "off") == 0)))
			return 0;
		return util_error(err, errlen, "causal takes nothing, 'on' or 'off'");
	}
	if (c->argc != 1)
		return util_error(err, errlen, "%s takes one value (%s %s)", name,
		    name, c->option->metavar);
	/* The shared parser checks the value, with the CLI's messages. */
	snprintf(flag, sizeof flag, "--%s", name);
	argv[0] = "lesson";
	argv[1] = flag;
	argv[2] = c->argv[0];
	argv[3] = NULL;
	options_init(&o);
	rc = options_parse(3, argv, 1, OPT_PROBLEM, NULL, NULL, &o, err, errlen);
	options_free(&o);
	if (rc != 0)
		lesson_unflag(err);
	return rc;
}

static int
option_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	struct problem_source *src = NULL;
	char flag[64], *argv[4], msg[256];
	int rc;

	run->dirty = 1;
	run->problem_line = c->line;
	if (is_matrix(c->name)) {
		switch (c->name[0]) {
		case 'q':
			src = &run->opts.spec.q;
			break;
		case 'k':
			src = &run->opts.spec.k;
			break;
		case 's':
			src = &run->opts.spec.s;
			break;
		default:
			src = &run->opts.spec.v;
			break;
		}
		src->path = c->path;
		src->data = c->matrix;
		src->rows = c->rows;
		src->cols = c->cols;
		return LESSON_NEXT;
	}
	if (strcmp(c->name, "causal") == 0) {
		run->opts.spec.causal = c->argc == 0 || strcmp(c->argv[0], "on") == 0;
		return LESSON_NEXT;
	}
	snprintf(flag, sizeof flag, "--%s", c->name);
	argv[0] = "lesson";
	argv[1] = flag;
	argv[2] = c->argv[0];
	argv[3] = NULL;
	rc = options_parse(3, argv, 1, OPT_PROBLEM, NULL, NULL, &run->opts, msg,
	    sizeof msg);
	options_free(&run->opts);
	if (rc != 0) {
		lesson_unflag(msg);
		return lesson_run_error(run, c, "%s", msg);
	}
	return LESSON_NEXT;
}

/* Forgets every problem option: a later part of a lesson starts from
 * run's defaults instead of undoing the earlier part's options one by
 * one (inline q, k, v cannot be undone by an option). */
static int
new_problem_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	return no_words(c, err, errlen);
}

static int
new_problem_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	options_init(&run->opts);
	run->dirty = 1;
	run->problem_line = c->line;
	return LESSON_NEXT;
}

/* ---- the table ---- */

static const struct lesson_directive directives[] = {
	{ .name = "title", .usage = "title TEXT", .flags = LESSON_TEXT,
	  .parse = title_parse },
	{ .name = "builds-on", .usage = "builds-on LESSON",
	  .parse = builds_on_parse, .exec = builds_on_exec },
	{ .name = "say", .usage = "say TEXT", .flags = LESSON_TEXT,
	  .parse = text_parse, .exec = say_exec },
	{ .name = "note", .usage = "note TEXT", .flags = LESSON_TEXT,
	  .parse = text_parse, .exec = note_exec },
	{ .name = "ask", .usage = "ask QUESTION", .flags = LESSON_TEXT,
	  .parse = ask_parse, .exec = ask_exec },
	{ .name = "choice", .usage = "choice TEXT", .flags = LESSON_TEXT,
	  .parse = choice_parse },
	{ .name = "answer", .usage = "answer [LETTER] EXPLANATION",
	  .flags = LESSON_TEXT, .parse = answer_parse },
	{ .name = "values", .usage = "values NUMBERS|FILE", .flags = LESSON_PROBLEM,
	  .parse = option_parse, .exec = option_exec },
	{ .name = "new-problem", .usage = "new-problem", .flags = LESSON_PROBLEM,
	  .parse = new_problem_parse, .exec = new_problem_exec },
	{ .name = "step", .usage = "step [N] | step until row|max-rises|row-done "
	  "[phase P]", .parse = step_parse, .exec = step_exec },
	{ .name = "phase", .usage = "phase [N]", .parse = phase_parse,
	  .exec = phase_exec },
	{ .name = "goto", .usage = "goto step N [phase P] | goto tile I J [phase P] "
	  "| goto start | goto end | goto label NAME", .parse = goto_parse,
	  .exec = goto_exec },
	{ .name = "label", .usage = "label NAME", .parse = label_parse,
	  .exec = label_exec },
	{ .name = "focus", .usage = "focus row R", .parse = focus_parse,
	  .exec = focus_exec },
	{ .name = "pause", .usage = "pause", .parse = pause_parse,
	  .exec = pause_exec },
	{ .name = "expect", .usage = "expect [final] QUANTITY[I] VALUE... "
	  "[tol X] [rtol X]", .parse = expect_parse, .exec = expect_exec },
	{ .name = "compare", .usage = "compare gpu", .parse = compare_parse,
	  .exec = compare_exec },
	{ .name = NULL },
};

/* Every problem option of `run` is a directive of this one shape. */
static const struct lesson_directive option_directive = {
	.name = "problem option", .usage = "NAME VALUE (any option of run)",
	.flags = LESSON_PROBLEM, .parse = option_parse, .exec = option_exec,
};

const struct lesson_directive *
lesson_directives(void)
{
	return directives;
}

const struct lesson_directive *
lesson_directive_find(const char *name, const struct options_entry **option)
{
	const struct lesson_directive *d;
	const struct options_entry *o;

	*option = NULL;
	for (d = directives; d->name != NULL; d++)
		if (strcmp(d->name, name) == 0)
			return d;
	for (o = options_problem_entries(); o->name != NULL; o++)
		if (strcmp(o->name, name) == 0) {
			*option = o;
			return &option_directive;
		}
	return NULL;
}
