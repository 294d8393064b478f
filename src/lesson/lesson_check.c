/*
 * lesson_check.c - `--check` (lesson_check.h): the script's rules, then
 * a run that stops at the first failure, with a sink that reads each
 * slide as a student would see it:
 *
 *   text, ask  -> the slide's lines (the ask's own words too); each
 *                 {...} remembered with the focus it was read at
 *   pause, end -> the problem shown is the one built; every quote still
 *                 reads the same where the slide ends, for a row the
 *                 frame shows; the slide's question's answer is not on it
 *   after      -> no choice's words told before it is asked; the
 *                 worksheet (--plain --no-answers, which withholds what
 *                 answers a question already asked) gives no answer
 *
 * Several lessons, or a folder, are checked one by one and then as a
 * course (lesson_check_all).
 */
#include "config.h"

#include "lesson_check.h"
#include "lesson_lint.h"
#include "lesson_path.h"
#include "lesson_plain.h"
#include "lesson_quantity.h"
#include "lesson_run.h"
#include "lesson_show.h"
#include "lesson_value.h"
#include "lesson_view.h"
#include "model/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* Numbers that would give an answer away. */
#define CHECK_TARGETS 16
/* Entries of a quote compared at the pause. */
#define CHECK_QUOTE_VALUES 8

/* A {...} read on the current slide. */
struct quote {
	const struct lesson_cmd *c;
	const struct lesson_fill *f;
	int focus, focus_key;
	int n;
	double x[CHECK_QUOTE_VALUES];
};

struct check {
	struct lesson_lines text;	/* the slide's narration and problem */
	const struct lesson_question *q;	/* asked on this slide */
	int number;
	struct quote *quotes;
	int nquotes, quote_cap;
	int oom;
};

/* ---- numbers as a student reads them ---- */

static int
word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Units a count is read with: "4 FLOPs" is not the answer 4 times. */
static const char *const units[] = {
	"flop", "byte", "tile", "step", "key", "row", "head", "sm", "percent",
	"time", "merge", "block", "column", "entry", "entrie", "bit", "gib",
	"mib", "kib", "exp", "range", "warp", "thread", "query",
	"value", "score", "digit", "lesson", "slide", "wave", "run", "pass",
	"querie", "partial", "bucket",
};

/* The word after s, lower case and without a plural s, in unit (empty
 * when none follows): "4 FLOPs" -> "flop", "50%" -> "percent". */
static void
unit_after(const char *s, char *unit, size_t len)
{
	size_t n = 0;

	if (*s == '%') {
		snprintf(unit, len, "percent");
		return;
	}
	if (*s == ' ')
		s++;
	while (isalpha((unsigned char)*s) && n + 1 < len)
		unit[n++] = (char)tolower((unsigned char)*s++);
	unit[n] = '\0';
	if (n > 2 && unit[n - 1] == 's')
		unit[n - 1] = '\0';
}

static int
is_unit(const char *w)
{
	size_t i;

	for (i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcmp(w, units[i]) == 0)
			return 1;
	return 0;
}

/* The next number written in s from *p as a token of its own: 12, -0.5,
 * 1.7e-5, not the 16 of fp16 or 16x16, the 1 of Q1 or the 11 of 2^-11.
 * Returns 1 with where it starts (*at), the number, half a unit in its
 * last digit and the unit that follows it, or 0 at the end. */
static int
next_number(const char **p, const char **at, double *x, double *half,
    char *unit, size_t ulen)
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
		*x = strtod(start, &stop);
		end = stop;
		/* inside a word, or a power's exponent: not a number read alone */
		if ((start > *p && (word_char(start[-1]) ||
		    start[-1] == '.' || start[-1] == '^')) ||
		    word_char(*end)) {
			for (s = start; word_char(*s) || *s == '.' ||
			    *s == '-'; s++)
				;
			s--;
			continue;
		}
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
		unit_after(end, unit, ulen);
		/* "Tc=4" is a name's value: read with its name, not as a count */
		if (start > *p && start[-1] == '=' && ulen > 1)
			snprintf(unit, ulen, "=");
		*at = start;
		*p = end;
		return 1;
	}
	*p = s;
	return 0;
}

/* A number that would answer a question: its value, how near counts,
 * and for a whole number the unit it is read with (empty: none). */
struct target {
	double x, tol;
	char unit[16];
};

/* Does text hold t?  A whole number must come with t's unit, or with no
 * unit when t has none: the 4 of "4 FLOPs" answers no "how many times". */
static int
matches(double y, const char *unit, const struct target *t)
{
	if (fabs(y - t->x) > t->tol)
		return 0;
	if (t->x != floor(t->x))
		return 1;
	if (strcmp(unit, "=") == 0)
		return 0;
	return t->unit[0] != '\0' ? strcmp(unit, t->unit) == 0 : !is_unit(unit);
}

static int
holds(const char *text, const struct target *t)
{
	const char *p = text, *at;
	char unit[16];
	double y, half;

	while (next_number(&p, &at, &y, &half, unit, sizeof unit))
		if (matches(y, unit, t))
			return 1;
	return 0;
}

/* The unit a number question asks for: "How many times fewer ..." ->
 * "time", "What percent ..." -> "percent". */
static void
asked_unit(const char *text, char *unit, size_t len)
{
	const char *p;
	char w[16];

	unit[0] = '\0';
	for (p = text; *p != '\0'; p++) {
		if (strncasecmp(p, "how many ", 9) == 0)
			unit_after(p + 8, w, sizeof w);
		else if (strncasecmp(p, "what ", 5) == 0)
			unit_after(p + 4, w, sizeof w);
		else
			continue;
		if (is_unit(w)) {
			snprintf(unit, len, "%s", w);
			return;
		}
	}
}

/* The numbers a slide must not show: a number question's answer; the
 * numbers only the right choice holds (but not a single digit). */
static int
targets(const struct lesson_question *q, struct target *t)
{
	const char *p, *at;
	double y, half;
	int n = 0, k, other;
	struct target one;

	if (q->numeric) {
		p = q->number_text;
		if (next_number(&p, &at, &y, &half, one.unit, sizeof one.unit)) {
			t[0].x = q->number;
			t[0].tol = half;
			asked_unit(q->text, t[0].unit, sizeof t[0].unit);
			return 1;
		}
		return 0;
	}
	if (q->answer < 0)
		return 0;
	p = q->choices[q->answer];
	while (n < CHECK_TARGETS && next_number(&p, &at, &y, &half, one.unit,
	    sizeof one.unit)) {
		one.x = y;
		one.tol = half;
		/* a digit alone (the 2 of "e^(2 - m)") is on every slide */
		other = y == floor(y) && fabs(y) < 10;
		/* a number the question gives is its setting, not its answer */
		other = other || holds(q->text, &one);
		for (k = 0; k < q->nchoices && !other; k++)
			other = k != q->answer && holds(q->choices[k], &one);
		if (!other)
			t[n++] = one;
	}
	return n;
}

int
lesson_check_gives_away(const struct lesson_question *q, const char *text,
    char *which, size_t len)
{
	struct target t[CHECK_TARGETS];
	int n, k;

	n = targets(q, t);
	for (k = 0; k < n; k++)
		if (holds(text, &t[k])) {
			lesson_format(t[k].x, which, len);
			return 1;
		}
	return 0;
}

void
lesson_check_withhold(const struct lesson_question *const *qs, int nq,
    struct lesson_lines *ls)
{
	struct target t[CHECK_TARGETS];
	const char *p, *at;
	char unit[16];
	double y, half;
	int i, k, j, n;

	for (i = 0; i < nq; i++) {
		n = targets(qs[i], t);
		for (j = 0; j < ls->n; j++)
			for (p = ls->line[j]; next_number(&p, &at, &y, &half, unit,
			    sizeof unit); )
				for (k = 0; k < n; k++)
					if (matches(y, unit, &t[k])) {
						memset(ls->line[j] + (at - ls->line[j]), '.',
						    (size_t)(p - at));
						break;
					}
	}
}

/* ---- the sink ---- */

/* The {...} of the directive that just ran, read again here with the
 * focus they were read at (the run stands where they were filled). */
static void
note_quotes(struct check *ck, struct lesson_run *run)
{
	const struct lesson_cmd *c = &run->lesson->cmds[run->pc - 1];
	struct quote *grown, *qt;
	double *got;
	char err[256];
	int i, n;

	got = calloc((size_t)lesson_quantity_max(run), sizeof *got);
	if (got == NULL) {
		ck->oom = 1;
		return;
	}
	for (i = 0; i < c->nfills; i++) {
		if (lesson_value_read(run, &c->fills[i].expect.value, got,
		    lesson_quantity_max(run), &n, err, sizeof err) != 0 || n == 0)
			continue;	/* the fill itself failed: reported there */
		if (ck->nquotes == ck->quote_cap) {
			grown = realloc(ck->quotes, (size_t)(ck->quote_cap + 16) *
			    sizeof *grown);
			if (grown == NULL) {
				ck->oom = 1;
				break;
			}
			ck->quotes = grown;
			ck->quote_cap += 16;
		}
		qt = &ck->quotes[ck->nquotes++];
		qt->c = c;
		qt->f = &c->fills[i];
		qt->focus = run->focus;
		qt->focus_key = run->focus_key;
		qt->n = n < CHECK_QUOTE_VALUES ? n : CHECK_QUOTE_VALUES;
		memcpy(qt->x, got, (size_t)qt->n * sizeof *got);
	}
	free(got);
}

/* Does the frame where the run stands show row r: the focus row, or a
 * row of the current tile (or of the merge's row block)? */
static int
shows_row(const struct lesson_run *run, int r)
{
	const struct backward_view *bv = lesson_run_backward_view(run);
	const struct combine_view *cv = lesson_run_combine_view(run);
	const struct sim_view *v = lesson_run_view(run);

	if (r == run->focus)
		return 1;
	if (bv != NULL)
		return r >= bv->tile.r0 && r < bv->tile.r1;
	if (cv != NULL)
		return r >= cv->r0 && r < cv->r1;
	return v != NULL && r >= v->tile.r0 && r < v->tile.r1;
}

static int
same(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* A figure in the frame (show) shows no row of the algorithm: a quote
 * of a row's or a tile's value is shown only when the figure's text
 * holds it, as written (to half a unit in its last digit). */
static int
figure_holds(struct lesson_run *run, const struct quote *qt)
{
	const struct lesson_value *v = &qt->f->expect.value;
	struct lesson_lines fig = { 0 };
	struct target t;
	int i, ok = 0;

	if (v->kind != LESSON_Q_REAL || v->term[0].final ||
	    v->term[0].quantity == NULL ||
	    !lesson_quantity_of_row(v->term[0].quantity))
		return 1;
	memset(&t, 0, sizeof t);
	t.x = qt->x[0];
	t.tol = qt->f->expect.n > 0 ? qt->f->expect.shown[0].half :
	    fabs(t.x) * 5e-7;
	lesson_show_lines(run, &fig);
	for (i = 0; i < fig.n && !ok; i++)
		ok = holds(fig.line[i], &t);
	lesson_lines_free(&fig);
	return ok;
}

/* Every value the slide quoted reads the same where it ends, for the
 * row and key it was read for, and that row is on the frame: the view
 * shows what the narration says. */
static void
quotes_hold(struct check *ck, struct lesson_run *run)
{
	const struct quote *qt;
	double *got;
	char err[256], was[32], now[32];
	int i, k, n, focus = run->focus, key = run->focus_key, ok;

	if (ck->nquotes == 0 || run->failures > 0) {
		ck->nquotes = 0;	/* the first failure is the one said */
		return;
	}
	got = calloc((size_t)lesson_quantity_max(run), sizeof *got);
	if (got == NULL) {
		ck->oom = 1;
		return;
	}
	for (i = 0; i < ck->nquotes; i++) {
		qt = &ck->quotes[i];
		run->focus = qt->focus;
		run->focus_key = qt->focus_key;
		ok = lesson_value_read(run, &qt->f->expect.value, got,
		    lesson_quantity_max(run), &n, err, sizeof err) == 0;
		run->focus = focus;
		run->focus_key = key;
		for (k = 0; ok && k < qt->n; k++)
			ok = same(got[k], qt->x[k]);
		lesson_format(qt->x[0], was, sizeof was);
		if (!ok) {
			if (n > 0 && !isnan(got[0]))
				lesson_format(got[0], now, sizeof now);
			else
				snprintf(now, sizeof now, "not known");
			lesson_run_fail_at(run, qt->c->line, "{%s} quotes %s, but the "
			    "slide moves on before its pause, where the view shows %s: "
			    "quote it where the slide ends, or end the slide where it "
			    "quotes", qt->f->expect.value.name, was, now);
			break;
		}
		if (lesson_show_active(run) && !figure_holds(run, qt)) {
			lesson_run_fail_at(run, qt->c->line, "{%s} quotes the row's "
			    "%s, but where the slide ends its frame is a figure "
			    "(show %s) that does not show it: quote it where the "
			    "view is shown (show view)", qt->f->expect.value.name,
			    was, run->show->argv[0]);
			break;
		}
		if (qt->focus != focus && qt->f->expect.value.kind == LESSON_Q_REAL &&
		    !qt->f->expect.value.term[0].final &&
		    !shows_row(run, qt->focus)) {
			lesson_run_fail_at(run, qt->c->line, "{%s} quotes row %d, but "
			    "where the slide ends the view shows row %d and not row %d: "
			    "quote it where row %d is shown", qt->f->expect.value.name,
			    qt->focus, focus, qt->focus, qt->focus);
			break;
		}
	}
	free(got);
	ck->nquotes = 0;
}

/* Looks for the slide's question's answer in what the slide shows. */
static void
look(struct check *ck, struct lesson_run *run)
{
	struct lesson_lines state = { 0 };
	struct lesson_lines *all[2] = { &ck->text, &state };
	char where[32];
	int i, a;

	lesson_view_state(run, &state);
	if (ck->q == NULL)
		goto done;
	for (a = 0; a < 2; a++)
		for (i = 0; i < all[a]->n; i++) {
			if (!lesson_check_gives_away(ck->q, all[a]->line[i], where,
			    sizeof where))
				continue;
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

	if (kind != LESSON_SAY)
		return;
	lesson_lines_add(&ck->text, "%s", text);
	note_quotes(ck, run);
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

	ck->q = q;
	ck->number = number;
	/* the question's own words may give it away too */
	lesson_lines_add(&ck->text, "%s", text);
	note_quotes(ck, run);
}

/* The view shows the problem the slide speaks of: a slide that changes
 * the problem builds it before it ends, or the view would still show
 * the one before (lesson_view.h). */
static void
problem_shown(struct check *ck, struct lesson_run *run)
{
	char why[200];

	(void)ck;
	if (lesson_view_source(run, why, sizeof why) == LESSON_VIEW_STALE)
		lesson_run_fail_at(run, run->problem_line, "%s", why);
}

static void
check_slide_end(void *ctx, struct lesson_run *run)
{
	struct check *ck = ctx;

	problem_shown(ck, run);
	quotes_hold(ck, run);
	look(ck, run);
}

static const struct lesson_sink check_sink = {
	.text = check_text,
	.problem = check_problem,
	.ask = check_ask,
	.pause = check_slide_end,
	.end = check_slide_end,
};

/* Where question k's own lines end in the worksheet w: its block runs
 * from "Qk. " to the first blank line. */
static const char *
question_end(const char *q)
{
	const char *e = strstr(q, "\n\n");

	return e != NULL ? e : q + strlen(q);
}

/* A worksheet (the lesson without its answers, as --plain --no-answers
 * writes it: each value a question answers is withheld after the
 * question) holds no value that answers one of its questions but in the
 * question itself: not in the title, not before the question, and not
 * where the withholding missed it. */
static int
worksheet_rule(const struct lesson *l, char *msg, size_t len)
{
	struct lesson_plain_opts o = { .markdown = 0, .presenter = 0,
	    .answers = 0 };
	const struct lesson_question *q;
	char *text = NULL, head[24], which[32], *line, *nl, err[512];
	const char *own, *end;
	size_t size = 0;
	FILE *f;
	int k, rc = 0, r;

	f = open_memstream(&text, &size);
	if (f == NULL) {
		snprintf(msg, len, "%s: out of memory", l->path);
		return -1;
	}
	r = lesson_plain_write(l, f, &o, err, sizeof err);
	if (fclose(f) != 0 || text == NULL || r < 0) {
		snprintf(msg, len, "%s", r < 0 ? err : "out of memory");
		free(text);
		return -1;
	}
	for (k = 0; k < l->nquestions && rc == 0; k++) {
		q = &l->questions[k];
		snprintf(head, sizeof head, "\nQ%d. ", k + 1);
		own = strstr(text, head);
		end = own != NULL ? question_end(own + 1) : NULL;
		for (line = text; line != NULL && *line != '\0' && rc == 0;
		    line = nl != NULL ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			if (own != NULL && line > own && line < end)
				continue;
			if (nl != NULL)
				*nl = '\0';
			if (lesson_check_gives_away(q, line, which, sizeof which)) {
				snprintf(msg, len, "%s:%d: Q%d's answer (%s) is in the "
				    "worksheet %s the question: '%.60s'; ask before telling, "
				    "and tell it in the answer", l->path, q->line, k + 1,
				    which, own == NULL || line < own ? "before" : "after",
				    line);
				rc = 1;
			}
			if (nl != NULL)
				*nl = '\n';
		}
	}
	free(text);
	return rc;
}

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
		rc = lesson_lint_told_before(l, msg, len) != 0 ? 1 :
		    worksheet_rule(l, msg, len);
	lesson_run_free(run);
	lesson_lines_free(&ck.text);
	free(ck.quotes);
	return rc;
}

/* ---- several lessons, a folder: a course ---- */

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the *.lesson files of folder dir, by name, to paths. */
static int
add_folder(const char *dir, char ***paths, int *n, char *err, size_t errlen)
{
	struct dirent *de;
	char **grown;
	size_t len, dirlen;
	int first = *n;
	DIR *d;

	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	dirlen = len;
	d = opendir(dir);
	if (d == NULL)
		return util_error(err, errlen, "%s: cannot read the folder: %s", dir,
		    strerror(errno));
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 8 || strcmp(de->d_name + len - 7, ".lesson") != 0)
			continue;
		grown = realloc(*paths, ((size_t)*n + 1) * sizeof *grown);
		if (grown == NULL)
			break;
		*paths = grown;
		(*paths)[*n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
		if ((*paths)[*n] == NULL)
			break;
		sprintf((*paths)[(*n)++], "%.*s/%s", (int)dirlen, dir, de->d_name);
	}
	closedir(d);
	if (de != NULL)
		return util_error(err, errlen, "out of memory");
	if (*n == first)
		return util_error(err, errlen, "%s: a folder with no .lesson file",
		    dir);
	qsort(*paths + first, (size_t)(*n - first), sizeof **paths, by_name);
	return 0;
}

int
lesson_check_all(char *const *names, int nnames, FILE *report)
{
	struct lesson **ls = NULL;
	char **paths = NULL, err[600], msg[600], *p, **grown;
	struct stat st;
	int n = 0, i, rc = 0, r, nl = 0;

	for (i = 0; i < nnames; i++) {
		if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (add_folder(names[i], &paths, &n, err, sizeof err) != 0) {
				fprintf(report, "flashstep lesson: %s\n", err);
				rc = -1;
				goto done;
			}
			continue;
		}
		p = lesson_path_find(names[i], NULL, err, sizeof err);
		grown = p != NULL ? realloc(paths, ((size_t)n + 1) * sizeof *grown) :
		    NULL;
		if (grown == NULL) {
			fprintf(report, "flashstep lesson: %s\n", p == NULL ? err :
			    "out of memory");
			free(p);
			rc = -1;
			goto done;
		}
		paths = grown;
		paths[n++] = p;
	}
	ls = calloc((size_t)n, sizeof *ls);
	if (ls == NULL) {
		fprintf(report, "flashstep lesson: out of memory\n");
		rc = -1;
		goto done;
	}
	/* Every lesson is checked, each failure said; the worst decides. */
	for (i = 0; i < n; i++) {
		ls[nl] = lesson_parse_file(paths[i], err, sizeof err);
		if (ls[nl] == NULL) {
			fprintf(report, "%s\n", err);
			rc = -1;
			continue;
		}
		r = lesson_check(ls[nl++], msg, sizeof msg);
		if (r != 0) {
			fprintf(report, "%s\n", msg);
			if (rc == 0 || r < 0)
				rc = r;
		}
	}
	if (n > 1 && nl == n && lesson_lint_course((const struct lesson *const *)
	    ls, nl, msg, sizeof msg) != 0) {
		fprintf(report, "the course (%d lessons): %s\n", nl, msg);
		if (rc == 0)
			rc = 1;
	}
done:
	for (i = 0; i < nl; i++)
		lesson_free(ls[i]);
	free(ls);
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}
