/*
 * lesson_check.c - `--check` (lesson_check.h): the script's rules, then
 * a run that stops at the first failure, with a sink that reads each
 * slide as a student would see it and looks for its question's answer.
 */
#include "config.h"

#include "lesson_check.h"
#include "lesson_lint.h"
#include "lesson_run.h"
#include "lesson_view.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Numbers that would give an answer away. */
#define CHECK_TARGETS 16

struct check {
	struct lesson_lines text;	/* the slide's narration and problem */
	const struct lesson_question *q;	/* asked on this slide */
	int number;
	int oom;
};

/* The next number written in s from *p: 12, -0.5, 1.7e-5, not the 16
 * of fp16 or the 1 of Q1.  Returns 1 with the number and half a unit in
 * its last digit, or 0 at the end. */
static int
next_number(const char **p, double *x, double *half)
{
	const char *s = *p, *start, *end;
	int decimals;
	char *stop;

	for (; *s != '\0'; s++) {
		start = s;
		if (*s == '-' && (isdigit((unsigned char)s[1]) || (s[1] == '.' &&
		    isdigit((unsigned char)s[2]))))
			s++;
		if (!isdigit((unsigned char)*s) && !(*s == '.' &&
		    isdigit((unsigned char)s[1])))
			continue;
		if (start > *p && (isalnum((unsigned char)start[-1]) ||
		    start[-1] == '.' || start[-1] == '_')) {
			while (isalnum((unsigned char)*s) || *s == '.')
				s++;
			s--;
			continue;
		}
		*x = strtod(start, &stop);
		end = stop;
		/* "2." at the end of a sentence is 2 */
		decimals = 0;
		for (s = start; s < end && *s != '.' && *s != 'e' && *s != 'E'; s++)
			;
		if (*s == '.')
			for (s++; s < end && isdigit((unsigned char)*s); s++)
				decimals++;
		*half = 0.5 * pow(10, -decimals);
		s = strpbrk(start, "eE");
		if (s != NULL && s < end)
			*half *= pow(10, strtol(s + 1, NULL, 10));
		*p = end;
		return 1;
	}
	*p = s;
	return 0;
}

static int
holds(const char *text, double x, double tol)
{
	const char *p = text;
	double y, half;

	while (next_number(&p, &y, &half))
		if (fabs(y - x) <= tol)
			return 1;
	return 0;
}

/* The numbers a slide must not show: a number question's answer; the
 * numbers only the right choice holds (but not a single digit). */
static int
targets(const struct lesson_question *q, double *x, double *tol)
{
	const char *p;
	double y, half;
	int n = 0, k, other;

	if (q->numeric) {
		p = q->number_text;
		if (next_number(&p, &y, &half)) {
			x[0] = q->number;
			tol[0] = half;
			return 1;
		}
		return 0;
	}
	if (q->answer < 0)
		return 0;
	p = q->choices[q->answer];
	while (n < CHECK_TARGETS && next_number(&p, &y, &half)) {
		/* a digit alone (the 2 of "e^(2 - m)") is on every slide */
		other = y == floor(y) && fabs(y) < 10;
		other = other || holds(q->text, y, half);
		for (k = 0; k < q->nchoices && !other; k++)
			other = k != q->answer && holds(q->choices[k], y, half);
		if (!other) {
			x[n] = y;
			tol[n++] = half;
		}
	}
	return n;
}

/* Looks for the slide's question's answer in what the slide shows. */
static void
look(struct check *ck, struct lesson_run *run)
{
	struct lesson_lines state = { 0 };
	struct lesson_lines *all[2] = { &ck->text, &state };
	double x[CHECK_TARGETS], tol[CHECK_TARGETS];
	char where[16];
	int n, i, k, a;

	if (ck->q == NULL)
		goto done;
	n = targets(ck->q, x, tol);
	lesson_view_state(run, &state);
	for (a = 0; a < 2; a++)
		for (i = 0; i < all[a]->n; i++)
			for (k = 0; k < n; k++) {
				if (!holds(all[a]->line[i], x[k], tol[k]))
					continue;
				lesson_format(x[k], where, sizeof where);
				lesson_run_fail_at(run, ck->q->line, "Q%d's answer (%s) is "
				    "on its own slide, in the %s: '%.60s'; show the slide "
				    "before what answers it", ck->number, where, a == 0 ?
				    "narration" : "view", all[a]->line[i]);
				goto done;
			}
done:
	if (state.oom || ck->text.oom)
		ck->oom = 1;
	lesson_lines_free(&state);
	lesson_lines_clear(&ck->text);
	ck->q = NULL;
}

static void
check_text(void *ctx, struct lesson_run *run, enum lesson_text_kind kind,
    const char *text)
{
	struct check *ck = ctx;

	(void)run;
	if (kind == LESSON_SAY)
		lesson_lines_add(&ck->text, "%s", text);
}

static void
check_problem(void *ctx, struct lesson_run *run)
{
	struct check *ck = ctx;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL) {
		ck->oom = 1;
		return;
	}
	lesson_run_describe(run, f);
	if (fclose(f) == 0 && text != NULL)
		lesson_lines_add(&ck->text, "%s", text);
	else
		ck->oom = 1;
	free(text);
}

static void
check_ask(void *ctx, struct lesson_run *run, const struct lesson_question *q,
    const char *text, int number)
{
	struct check *ck = ctx;

	(void)run;
	(void)text;
	ck->q = q;
	ck->number = number;
}

static void
check_slide_end(void *ctx, struct lesson_run *run)
{
	look(ctx, run);
}

static const struct lesson_sink check_sink = {
	.text = check_text,
	.problem = check_problem,
	.ask = check_ask,
	.pause = check_slide_end,
	.end = check_slide_end,
};

int
lesson_check(const struct lesson *l, char *msg, size_t len)
{
	struct lesson_run *run;
	struct check ck;
	int rc;

	if (lesson_lint(l, msg, len) != 0)
		return 1;
	memset(&ck, 0, sizeof ck);
	run = lesson_run_new(l, &check_sink, &ck, LESSON_RUN_STOP);
	if (run == NULL) {
		snprintf(msg, len, "%s: out of memory", l->path);
		return -1;
	}
	rc = lesson_run_all(run);
	if (rc == LESSON_ERROR) {
		snprintf(msg, len, "%s", run->err);
		rc = -1;
	} else if (ck.oom) {
		snprintf(msg, len, "%s: out of memory", l->path);
		rc = -1;
	} else if (rc == LESSON_FAILED || run->failures > 0) {
		snprintf(msg, len, "%s", run->failure);
		rc = 1;
	} else
		rc = 0;
	lesson_run_free(run);
	lesson_lines_free(&ck.text);
	return rc;
}
