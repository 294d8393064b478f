/* lesson_lint.c - the rules of a lesson's script (lesson_lint.h). */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_lint.h"
#include "model/util.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Words of the language that mean nothing to a student. */
static const char *const language[] = {
	"expect", "goto", "compare gpu", "new-problem", "builds-on",
	"step until", "focus row", "focus key", "directive",
};

static int
word_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_';
}

const char *
lesson_lint_language(const char *text, char *word, size_t len)
{
	const struct options_entry *o;
	const char *p, *q, *e;
	size_t i, n;

	for (i = 0; i < sizeof language / sizeof language[0]; i++) {
		n = strlen(language[i]);
		for (p = strstr(text, language[i]); p != NULL;
		    p = strstr(p + 1, language[i]))
			if ((p == text || !word_char(p[-1])) && !word_char(p[n])) {
				snprintf(word, len, "%s", language[i]);
				return p;
			}
	}
	/* `name ...` in backquotes, where name is a directive */
	for (p = strchr(text, '`'); p != NULL; p = strchr(e + 1, '`')) {
		e = strchr(p + 1, '`');
		if (e == NULL)
			break;
		for (q = p + 1; q < e && word_char(*q); q++)
			;
		snprintf(word, len, "%.*s", (int)(q - p - 1), p + 1);
		if (lesson_directive_find(word, &o) != NULL)
			return p;
	}
	return NULL;
}

static int
shown_to_students(const struct lesson_cmd *c)
{
	static const char *const names[] = { "title", "say", "ask", "choice",
	    "answer" };
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(c->dir->name, names[i]) == 0)
			return 1;
	return 0;
}

static int
words_rule(const struct lesson *l, char *err, size_t errlen)
{
	const struct lesson_cmd *c;
	char word[64];
	int i;

	for (i = 0; i < l->ncmds; i++) {
		c = &l->cmds[i];
		if (shown_to_students(c) && c->text != NULL &&
		    lesson_lint_language(c->text, word, sizeof word) != NULL)
			return util_error(err, errlen, "%s:%d: '%s' is the lesson "
			    "language, not something a student reads: say what it "
			    "does instead", l->path, c->line, word);
	}
	return 0;
}

/* After each question's answer, only silent directives until a pause. */
static int
question_ends_slide(const struct lesson *l, char *err, size_t errlen)
{
	const struct lesson_cmd *c;
	int i, ask = -1;

	for (i = 0; i < l->ncmds; i++) {
		c = &l->cmds[i];
		if (strcmp(c->dir->name, "ask") == 0) {
			ask = c->line;
			continue;
		}
		if (ask < 0 || (c->dir->flags & LESSON_SILENT))
			continue;
		if (strcmp(c->dir->name, "pause") == 0) {
			ask = -1;
			continue;
		}
		return util_error(err, errlen, "%s:%d: '%s' after the question at "
		    "line %d, before the next pause: the slide would %s; end the "
		    "question's slide with a pause", l->path, c->line, c->name, ask,
		    c->dir->flags & LESSON_TEXT ? "say more under the question, "
		    "where its answer may be" : "move on to what answers it");
	}
	return 0;
}

static int
choices_rule(const struct lesson *l, char *err, size_t errlen)
{
	const struct lesson_question *q;
	int count[26] = { 0 }, n = 0, longest = 0, i, k, last = 0;
	size_t len;

	for (i = 0; i < l->nquestions; i++) {
		q = &l->questions[i];
		if (q->nchoices == 0)
			continue;
		if (q->nchoices < 2)
			return util_error(err, errlen, "%s:%d: one choice is no choice: "
			    "give each wrong choice a real misconception", l->path,
			    q->line);
		n++;
		count[q->answer]++;
		last = q->line;
		len = strlen(q->choices[q->answer]);
		for (k = 0; k < q->nchoices; k++)
			if (k != q->answer && strlen(q->choices[k]) >= len)
				break;
		longest += k == q->nchoices;
	}
	if (n < 2)
		return 0;
	for (k = 0; k < 26; k++)
		if (2 * count[k] > n)
			return util_error(err, errlen, "%s:%d: '%c' is the right letter "
			    "in %d of the lesson's %d multiple-choice questions: a "
			    "student who always picks it passes; balance the letters",
			    l->path, last, 'a' + k, count[k], n);
	if (longest == n)
		return util_error(err, errlen, "%s:%d: the right choice is the "
		    "longest in every multiple-choice question: a student who "
		    "picks the longest passes", l->path, last);
	return 0;
}

int
lesson_lint(const struct lesson *l, char *err, size_t errlen)
{
	if (words_rule(l, err, errlen) != 0 ||
	    question_ends_slide(l, err, errlen) != 0 ||
	    choices_rule(l, err, errlen) != 0)
		return -1;
	return 0;
}
