/*
 * lesson_ask.c - questions: `ask`, then either its `choice`s or its
 * `number` (the student types a number), then its `answer`.
 *
 *   ask What is m after the second tile?       <- may quote {...}
 *   number 1002 tol 0.5                        <- or: choice ... (a, b, ...)
 *   answer The largest score seen so far.      <- with choices: "answer b ..."
 *
 * A number question's answer must be computed later in the lesson (an
 * expect or a {...} whose value is that number): lesson_run.c fails a
 * run that never does.
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_parser.h"
#include "lesson_run.h"
#include "lesson_value.h"
#include "model/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct lesson_question *
open_question(struct lesson_parser *ps)
{
	return ps->open_q >= 0 ? &ps->l->questions[ps->open_q] : NULL;
}

static int
ask_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = ps->l;
	struct lesson_question *grown, *q;

	if (ps->open_q >= 0)
		return util_error(err, errlen, "the question at line %d has no "
		    "answer yet (an 'answer' line follows its 'ask' and 'choice' "
		    "lines)", l->questions[ps->open_q].line);
	if (lesson_parser_need_text(c, "the question", err, errlen) != 0 ||
	    lesson_value_parse_fills(ps, c, err, errlen) != 0)
		return -1;
	grown = realloc(l->questions, ((size_t)l->nquestions + 1) * sizeof *grown);
	if (grown == NULL)
		return util_error(err, errlen, "out of memory");
	l->questions = grown;
	q = &l->questions[l->nquestions];
	memset(q, 0, sizeof *q);
	q->line = c->line;
	q->answer = -1;
	l->nquestions++;
	q->text = lesson_parser_strdup(c->text, err, errlen);
	if (q->text == NULL)
		return -1;
	c->ref = l->nquestions - 1;
	ps->open_q = c->ref;
	return 0;
}

static int
ask_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	char *text;
	int rc;

	if (c->nfills > 0 && lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	rc = lesson_value_fill(run, c, &text);
	run->nasked++;
	if (rc == LESSON_NEXT && run->sink != NULL && run->sink->ask != NULL)
		run->sink->ask(run->ctx, run, &run->lesson->questions[c->ref], text,
		    run->nasked);
	free(text);
	return rc;
}

static int
choice_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson_question *q = open_question(ps);
	char **grown;

	if (q == NULL || !lesson_parser_after(ps, "ask", "choice"))
		return util_error(err, errlen, "choice follows an 'ask' line or "
		    "another 'choice'");
	if (lesson_parser_need_text(c, "the text of the choice", err, errlen) != 0)
		return -1;
	if (q->nchoices == 26)
		return util_error(err, errlen, "a question has at most 26 choices");
	grown = realloc(q->choices, ((size_t)q->nchoices + 1) * sizeof *grown);
	if (grown == NULL)
		return util_error(err, errlen, "out of memory");
	q->choices = grown;
	q->choices[q->nchoices] = lesson_parser_strdup(c->text, err, errlen);
	if (q->choices[q->nchoices] == NULL)
		return -1;
	q->nchoices++;
	return 0;
}

/* "number N [tol X | rtol X]": the answer, and how near counts; without
 * a tolerance, half a unit in the last digit written. */
static int
number_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson_question *q = open_question(ps);
	const char *dot, *e;
	double x, unit;
	int decimals = 0;

	if (q == NULL || !lesson_parser_after(ps, "ask", NULL))
		return util_error(err, errlen, "number follows an 'ask' line (a "
		    "question has choices or a number, not both)");
	if ((c->argc != 1 && c->argc != 3) ||
	    lesson_parser_number(c->argv[0], 0, &q->number) != 0)
		return util_error(err, errlen, "number takes the answer, a finite "
		    "number, and may add 'tol X' or 'rtol X' (number 1002 tol 0.5)");
	q->numeric = 1;
	q->number_text = lesson_parser_strdup(c->argv[0], err, errlen);
	if (q->number_text == NULL)
		return -1;
	if (c->argc == 3) {
		if ((strcmp(c->argv[1], "tol") != 0 && strcmp(c->argv[1], "rtol")
		    != 0) || lesson_parser_number(c->argv[2], 0, &x) != 0 || x <= 0)
			return util_error(err, errlen, "number: after the answer comes "
			    "'tol X' or 'rtol X' with X above 0");
		q->tol = c->argv[1][0] == 'r' ? x * fabs(q->number) : x;
		q->rtol = c->argv[1][0] == 'r' ? x : 0;
		return 0;
	}
	dot = strchr(c->argv[0], '.');
	if (dot != NULL)
		for (dot++; *dot >= '0' && *dot <= '9'; dot++)
			decimals++;
	unit = pow(10, -decimals);
	e = strpbrk(c->argv[0], "eE");
	if (e != NULL)
		unit *= pow(10, strtol(e + 1, NULL, 10));
	q->tol = unit / 2;
	return 0;
}

/* With choices, "answer b explanation" (or "b)", "b:", "b."); without,
 * "answer explanation". */
static int
answer_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson_question *q = open_question(ps);
	const char *t = c->text, *rest;
	char letter;

	if (q == NULL || !lesson_parser_after(ps, q->numeric ? "number" : "ask",
	    q->numeric ? NULL : "choice"))
		return util_error(err, errlen, "answer follows its question's 'ask' "
		    "line (and its 'choice' or 'number' lines)");
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
	} else if (lesson_parser_need_text(c, "the answer", err, errlen) != 0)
		return -1;
	if (*t != '\0') {
		q->explanation = lesson_parser_strdup(t, err, errlen);
		if (q->explanation == NULL)
			return -1;
	}
	ps->open_q = -1;
	return 0;
}

const struct lesson_directive lesson_ask_directives[] = {
	{ .name = "ask", .usage = "ask QUESTION", .flags = LESSON_TEXT,
	  .parse = ask_parse, .exec = ask_exec },
	{ .name = "choice", .usage = "choice TEXT", .flags = LESSON_TEXT |
	  LESSON_SILENT, .parse = choice_parse },
	{ .name = "number", .usage = "number N [tol X | rtol X]",
	  .flags = LESSON_SILENT, .parse = number_parse },
	{ .name = "answer", .usage = "answer [LETTER] EXPLANATION",
	  .flags = LESSON_TEXT | LESSON_SILENT, .parse = answer_parse },
	{ .name = NULL },
};
