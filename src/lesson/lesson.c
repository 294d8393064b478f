/*
 * lesson.c - reading lesson scripts: lines, continuations, words, the
 * directive for each line, and messages that name file:line.
 *
 * Two passes.  The first joins each directive with its indented
 * continuation lines into one logical line and splits off the name; the
 * second hands the words (or the text) to the directive's parse function
 * in script order, so a directive can look back at what came before it
 * (an `answer` at its `ask`, a `goto label` at its `label`).
 */
#include "config.h"

#include "lesson.h"
#include "model/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lessons are short: a longer file is more likely a wrong file. */
#define LESSON_MAX_BYTES (1 << 20)

struct lesson_parser {
	struct lesson *l;
	char *folder;		/* where the lesson's files are found */
	int idx;		/* the directive being parsed */
	int open_q;		/* a question waiting for its answer, or -1 */
};

struct lesson *
lesson_parser_lesson(struct lesson_parser *ps)
{
	return ps->l;
}

const char *
lesson_parser_folder(struct lesson_parser *ps)
{
	return ps->folder;
}

int
lesson_parser_open_question(struct lesson_parser *ps)
{
	return ps->open_q;
}

void
lesson_parser_set_open_question(struct lesson_parser *ps, int q)
{
	ps->open_q = q;
}

const struct lesson_cmd *
lesson_parser_previous(struct lesson_parser *ps)
{
	return ps->idx > 0 ? &ps->l->cmds[ps->idx - 1] : NULL;
}

int
lesson_parser_label(struct lesson_parser *ps, const char *name)
{
	const struct lesson_cmd *c;
	int i;

	for (i = 0; i < ps->idx; i++) {
		c = &ps->l->cmds[i];
		if (strcmp(c->dir->name, "label") == 0 && c->argc > 0 &&
		    strcmp(c->argv[0], name) == 0)
			return i;
	}
	return -1;
}

int
lesson_number(const char *word, int inf, double *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(word, &end);
	if (*word == '\0' || *end != '\0' || errno == ERANGE || isnan(x))
		return -1;
	if (isinf(x) && !inf)
		return -1;
	/* strtod takes "infinity" and "0x1p3"; lessons keep to plain words */
	if (isinf(x) && strcmp(word, "inf") != 0 && strcmp(word, "-inf") != 0)
		return -1;
	*out = x;
	return 0;
}

/*
 * Optimal string alignment distance: Levenshtein plus the swap of two
 * neighbours as one edit, so "stpe" is one edit from "step".  Words are
 * short (directive names); longer ones are cut at 31 characters.
 */
int
lesson_distance(const char *a, const char *b)
{
	int d[32][32], n = (int)strlen(a), m = (int)strlen(b), i, j, x;

	n = n > 31 ? 31 : n;
	m = m > 31 ? 31 : m;
	for (i = 0; i <= n; i++)
		d[i][0] = i;
	for (j = 0; j <= m; j++)
		d[0][j] = j;
	for (i = 1; i <= n; i++) {
		for (j = 1; j <= m; j++) {
			int cost = a[i - 1] != b[j - 1];
			x = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < x)
				x = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < x)
				x = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < x)
				x = d[i - 2][j - 2] + 1;
			d[i][j] = x;
		}
	}
	return d[n][m];
}

static void
consider(const char *name, const char *cand, const char **best, int *bestd)
{
	int dist = lesson_distance(name, cand);

	if (dist < *bestd) {
		*best = cand;
		*bestd = dist;
	}
}

const char *
lesson_directive_suggest(const char *name)
{
	const struct lesson_directive *d;
	const struct options_entry *o;
	const char *best = NULL;
	size_t len = strlen(name);
	int bestd = 1000, limit;

	for (d = lesson_directives(); d->name != NULL; d++)
		consider(name, d->name, &best, &bestd);
	for (o = options_problem_entries(); o->name != NULL; o++)
		consider(name, o->name, &best, &bestd);
	/* One edit in a short word, two in a longer one, three in a long
	 * one; never so many that any word would do. */
	limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	return bestd <= limit ? best : NULL;
}

/* ---- the lesson ---- */

static void
free_cmd(struct lesson_cmd *c)
{
	int i;

	free(c->name);
	free(c->text);
	for (i = 0; i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
	free(c->matrix);
	free(c->path);
	free(c->expect.values);
}

void
lesson_free(struct lesson *l)
{
	int i, j;

	if (l == NULL)
		return;
	for (i = 0; i < l->ncmds; i++)
		free_cmd(&l->cmds[i]);
	free(l->cmds);
	for (i = 0; i < l->nquestions; i++) {
		free(l->questions[i].text);
		for (j = 0; j < l->questions[i].nchoices; j++)
			free(l->questions[i].choices[j]);
		free(l->questions[i].choices);
		free(l->questions[i].explanation);
	}
	free(l->questions);
	for (i = 0; i < l->nbuilds_on; i++)
		free(l->builds_on[i]);
	free(l->builds_on);
	free(l->path);
	free(l->title);
	free(l);
}

/* Adds word [s, s + n) to c's words; 0 or -1 (no memory). */
static int
add_word(struct lesson_cmd *c, const char *s, size_t n)
{
	char **argv, *w;

	w = strndup(s, n);
	argv = realloc(c->argv, ((size_t)c->argc + 2) * sizeof *argv);
	if (w == NULL || argv == NULL) {
		free(w);
		if (argv != NULL)
			c->argv = argv;
		return -1;
	}
	c->argv = argv;
	c->argv[c->argc++] = w;
	c->argv[c->argc] = NULL;
	return 0;
}

/* Words are split at blanks; ';' (the row separator of inline matrices)
 * is a word of its own; a word that starts with '#' starts a comment. */
static int
split_words(struct lesson_cmd *c, const char *s)
{
	const char *w;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '#')
			return 0;
		if (*s == ';') {
			if (add_word(c, s, 1) != 0)
				return -1;
			s++;
			continue;
		}
		for (w = s; *s != '\0' && *s != ' ' && *s != '\t' && *s != ';'; s++)
			;
		if (add_word(c, w, (size_t)(s - w)) != 0)
			return -1;
	}
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Appends " more" to *text; 0 or -1 (no memory). */
static int
append(char **text, const char *more)
{
	size_t a = strlen(*text), b = strlen(more);
	char *t;

	t = realloc(*text, a + b + 2);
	if (t == NULL)
		return -1;
	if (a > 0 && b > 0)
		t[a++] = ' ';
	memcpy(t + a, more, b + 1);
	*text = t;
	return 0;
}

/* A logical line: a directive's first line and its continuations. */
struct logical {
	int line;
	char *text;
};

static void
free_logical(struct logical *lines, int n)
{
	while (n-- > 0)
		free(lines[n].text);
	free(lines);
}

/* First pass: text into logical lines.  Returns their number, or -1
 * with err set. */
static int
join_lines(const char *path, const char *text, struct logical **out,
    char *err, size_t errlen)
{
	struct logical *lines = NULL, *grown;
	const char *p = text, *nl;
	char *raw = NULL, *s;
	int n = 0, cap = 0, lineno = 0, open = 0;

	*out = NULL;
	while (*p != '\0') {
		lineno++;
		nl = strchr(p, '\n');
		raw = strndup(p, nl != NULL ? (size_t)(nl - p) : strlen(p));
		if (raw == NULL)
			goto nomem;
		p = nl != NULL ? nl + 1 : p + strlen(p);
		s = trim(raw);
		if (*s == '\0') {
			open = 0;	/* a blank line ends a continuation */
			free(raw);
			continue;
		}
		if (*s == '#') {
			free(raw);
			continue;
		}
		if (raw[0] == ' ' || raw[0] == '\t') {
			if (!open) {
				util_error(err, errlen, "%s:%d: an indented line "
				    "continues the directive above it, but there is "
				    "none (a blank line or the start of the file)",
				    path, lineno);
				goto fail;
			}
			if (append(&lines[n - 1].text, s) != 0)
				goto nomem;
			free(raw);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(lines, (size_t)cap * sizeof *lines);
			if (grown == NULL)
				goto nomem;
			lines = grown;
		}
		lines[n].line = lineno;
		lines[n].text = strdup(s);
		if (lines[n].text == NULL)
			goto nomem;
		n++;
		open = 1;
		free(raw);
	}
	*out = lines;
	return n;

nomem:
	util_error(err, errlen, "%s: out of memory", path);
fail:
	free(raw);
	free_logical(lines, n);
	return -1;
}

/* Second pass, one logical line: find the directive, keep its name and
 * its text or words. */
static int
make_cmd(const char *path, const struct logical *ln, struct lesson_cmd *c,
    char *err, size_t errlen)
{
	const char *s = ln->text, *rest, *hint;
	char *name;

	memset(c, 0, sizeof *c);
	c->line = ln->line;
	for (rest = s; *rest != '\0' && *rest != ' ' && *rest != '\t'; rest++)
		;
	name = strndup(s, (size_t)(rest - s));
	if (name == NULL)
		return util_error(err, errlen, "%s: out of memory", path);
	c->name = name;
	c->dir = lesson_directive_find(name, &c->option);
	if (c->dir == NULL) {
		hint = lesson_directive_suggest(name);
		if (hint != NULL)
			return util_error(err, errlen, "%s:%d: unknown directive "
			    "'%s' (did you mean '%s'?)", path, ln->line, name, hint);
		return util_error(err, errlen, "%s:%d: unknown directive '%s' "
		    "(see flashstep-lesson(5))", path, ln->line, name);
	}
	if (c->dir->flags & LESSON_TEXT) {
		while (*rest == ' ' || *rest == '\t')
			rest++;
		c->text = strdup(rest);
		if (c->text == NULL)
			return util_error(err, errlen, "%s: out of memory", path);
	} else if (split_words(c, rest) != 0)
		return util_error(err, errlen, "%s: out of memory", path);
	return 0;
}

static struct lesson *
parse(const char *path, const char *text, char *err, size_t errlen)
{
	struct lesson_parser ps;
	struct logical *lines = NULL;
	struct lesson *l;
	char msg[400], *slash;
	int n, i;

	memset(&ps, 0, sizeof ps);
	ps.open_q = -1;
	l = calloc(1, sizeof *l);
	if (l == NULL) {
		util_error(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	l->path = strdup(path);
	ps.folder = strdup(path);
	if (l->path == NULL || ps.folder == NULL)
		goto nomem;
	slash = strrchr(ps.folder, '/');
	if (slash != NULL)
		slash[1] = '\0';
	else
		ps.folder[0] = '\0';
	ps.l = l;

	n = join_lines(path, text, &lines, err, errlen);
	if (n < 0)
		goto fail;
	l->cmds = calloc((size_t)n + 1, sizeof *l->cmds);
	if (l->cmds == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		ps.idx = i;
		l->ncmds = i + 1;
		if (make_cmd(path, &lines[i], &l->cmds[i], err, errlen) != 0)
			goto fail;
		if (l->cmds[i].dir->parse != NULL &&
		    l->cmds[i].dir->parse(&ps, &l->cmds[i], msg, sizeof msg) != 0) {
			util_error(err, errlen, "%s:%d: %s", path, lines[i].line, msg);
			goto fail;
		}
	}
	if (ps.open_q >= 0) {
		util_error(err, errlen, "%s:%d: this question has no answer (an "
		    "'answer' line follows its 'ask' and 'choice' lines)", path,
		    l->questions[ps.open_q].line);
		goto fail;
	}
	if (l->title == NULL) {
		util_error(err, errlen, "%s:1: the lesson has no title (add a "
		    "line 'title ...')", path);
		goto fail;
	}
	free_logical(lines, n);
	free(ps.folder);
	return l;

nomem:
	util_error(err, errlen, "%s: out of memory", path);
fail:
	if (lines != NULL)
		free_logical(lines, n);
	free(ps.folder);
	lesson_free(l);
	return NULL;
}

struct lesson *
lesson_parse_string(const char *path, const char *text, char *err,
    size_t errlen)
{
	return parse(path, text, err, errlen);
}

struct lesson *
lesson_parse_file(const char *path, char *err, size_t errlen)
{
	struct lesson *l = NULL;
	FILE *f;
	char *text = NULL;
	size_t n;

	f = fopen(path, "rb");
	if (f == NULL) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	text = malloc(LESSON_MAX_BYTES + 1);
	if (text == NULL) {
		util_error(err, errlen, "%s: out of memory", path);
		goto done;
	}
	n = fread(text, 1, LESSON_MAX_BYTES + 1, f);
	if (ferror(f)) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		goto done;
	}
	if (n > LESSON_MAX_BYTES) {
		util_error(err, errlen, "%s: larger than %d bytes: not a lesson",
		    path, LESSON_MAX_BYTES);
		goto done;
	}
	text[n] = '\0';
	if (strlen(text) != n) {
		util_error(err, errlen, "%s: holds a NUL byte: not a lesson", path);
		goto done;
	}
	l = parse(path, text, err, errlen);
done:
	free(text);
	fclose(f);
	return l;
}

void
lesson_unflag(char *msg)
{
	char *p = msg, *q = msg;

	/* "--tq must be ..." from the shared option parser reads, in a
	 * script, "tq must be ...": the lesson spells options without "--". */
	while (*p != '\0') {
		if (p[0] == '-' && p[1] == '-' && islower((unsigned char)p[2]) &&
		    (p == msg || p[-1] == ' ' || p[-1] == '\'' || p[-1] == '('))
			p += 2;
		else
			*q++ = *p++;
	}
	*q = '\0';
}
