/* lesson_lint.c - the rules of a lesson's script (lesson_lint.h). */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_lint.h"
#include "model/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- told before asked ---- */

/* Words that say nothing of a choice on their own. */
static const char *const stopwords[] = {
	"a", "an", "the", "of", "is", "are", "was", "be", "and", "or", "to",
	"in", "on", "at", "by", "for", "with", "as", "it", "its", "that",
	"this", "what", "which", "from", "than", "then", "so", "not", "no",
	"all", "one", "each", "every", "only", "there", "their", "they",
	"does", "do", "has", "have", "but", "if", "when", "where", "how",
	"same", "more", "less", "here", "these", "those", "can", "will",
};

static int
stopword(const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof stopwords / sizeof stopwords[0]; i++)
		if (strlen(stopwords[i]) == n && strncmp(stopwords[i], w, n) == 0)
			return 1;
	return 0;
}

/* text's words in lower case, stopwords left out, one space between
 * and one at each end: " row max rises ". */
static char *
normal(const char *text)
{
	char *out = malloc(strlen(text) + 3), *q = out, *w;
	const char *p;

	if (out == NULL)
		return NULL;
	*q++ = ' ';
	for (p = text; ; p++) {
		if (isalnum((unsigned char)*p)) {
			*q++ = (char)tolower((unsigned char)*p);
			continue;
		}
		if (q[-1] != ' ') {
			for (w = q; w[-1] != ' '; w--)
				;
			if (stopword(w, (size_t)(q - w)))
				q = w;
			else
				*q++ = ' ';
		}
		if (*p == '\0')
			break;
	}
	*q = '\0';
	return out;
}

/* The next three words of normalized text from *p as " a b c ", when
 * two of them are words of four letters or more. */
static int
next_trigram(const char **p, char *tri, size_t len)
{
	const char *s, *w[4];
	int k, longw;

	for (s = *p; *s != '\0'; s = strchr(s + 1, ' ')) {
		if (s[1] == '\0')
			break;
		w[0] = s;
		for (k = 1; k < 4 && w[k - 1] != NULL; k++)
			w[k] = w[k - 1][1] != '\0' ? strchr(w[k - 1] + 1, ' ') : NULL;
		if (k < 4 || w[3] == NULL)
			break;
		for (longw = 0, k = 0; k < 3; k++)
			longw += w[k + 1] - w[k] - 1 >= 4;
		if (longw < 2)
			continue;
		snprintf(tri, len, "%.*s", (int)(w[3] - w[0] + 1), w[0]);
		*p = strchr(s + 1, ' ');
		return 1;
	}
	return 0;
}

int
lesson_lint_told(const struct lesson_question *q, const char *text,
    char *phrase, size_t len)
{
	char *right, *seen, *other, tri[160];
	const char *p;
	int k, found = 0, elsewhere;

	if (q->nchoices == 0 || q->answer < 0)
		return 0;
	right = normal(q->choices[q->answer]);
	seen = normal(text);
	if (right == NULL || seen == NULL) {
		free(right);
		free(seen);
		return 0;
	}
	for (p = right; !found && next_trigram(&p, tri, sizeof tri); ) {
		if (strstr(seen, tri) == NULL)
			continue;
		/* words the question or a wrong choice shares tell nothing */
		other = normal(q->text);
		elsewhere = other != NULL && strstr(other, tri) != NULL;
		free(other);
		for (k = 0; k < q->nchoices && !elsewhere; k++) {
			if (k == q->answer)
				continue;
			other = normal(q->choices[k]);
			elsewhere = other != NULL && strstr(other, tri) != NULL;
			free(other);
		}
		if (!elsewhere) {
			snprintf(phrase, len, "%.*s", (int)strlen(tri) - 2, tri + 1);
			found = 1;
		}
	}
	free(right);
	free(seen);
	return found;
}

int
lesson_lint_told_before(const struct lesson *l, char *err, size_t errlen)
{
	const struct lesson_cmd *c;
	const struct lesson_question *q;
	char phrase[160];
	int i, k;

	for (i = 0; i < l->ncmds; i++) {
		c = &l->cmds[i];
		if (strcmp(c->dir->name, "ask") != 0)
			continue;
		q = &l->questions[c->ref];
		if (l->title != NULL && lesson_lint_told(q, l->title, phrase,
		    sizeof phrase))
			return util_error(err, errlen, "%s:%d: the right choice's "
			    "'%s' is in the lesson's title: ask before telling",
			    l->path, q->line, phrase);
		for (k = 0; k < i; k++)
			if (strcmp(l->cmds[k].dir->name, "say") == 0 &&
			    lesson_lint_told(q, l->cmds[k].text, phrase, sizeof phrase))
				return util_error(err, errlen, "%s:%d: the right choice's "
				    "'%s' was said at line %d, before the question: ask "
				    "before telling", l->path, q->line, phrase,
				    l->cmds[k].line);
	}
	return 0;
}

/* ---- the course ---- */

int
lesson_lint_course(const struct lesson *const *ls, int n, char *err,
    size_t errlen)
{
	const struct lesson_question *q;
	int count[27][26], nk[27], longest = 0, total = 0, i, k, j, most, least;
	double chance = 0;
	size_t len;

	memset(count, 0, sizeof count);
	memset(nk, 0, sizeof nk);
	for (i = 0; i < n; i++) {
		if (lesson_lint_told_before(ls[i], err, errlen) != 0)
			return -1;
		for (k = 0; k < ls[i]->nquestions; k++) {
			q = &ls[i]->questions[k];
			if (q->nchoices < 2 || q->answer < 0)
				continue;
			total++;
			nk[q->nchoices]++;
			count[q->nchoices][q->answer]++;
			chance += 1.0 / q->nchoices;
			len = strlen(q->choices[q->answer]);
			for (j = 0; j < q->nchoices; j++)
				if (j != q->answer && strlen(q->choices[j]) >= len)
					break;
			longest += j == q->nchoices;
		}
	}
	/* A student who picks the longest choice scores what chance gives,
	 * and one more at most. */
	if (total > 0 && longest > chance + 1)
		return util_error(err, errlen, "the right choice is the longest in "
		    "%d of the %d multiple-choice questions, where chance gives %.1f: "
		    "a student who picks the longest passes; make the choices of "
		    "similar length", longest, total, chance);
	/* Among questions of k choices, each letter is right in about n/k. */
	for (k = 2; k <= 26; k++) {
		if (nk[k] == 0)
			continue;
		most = (nk[k] + k - 1) / k + (nk[k] >= 2 * k);
		least = nk[k] >= 2 * k ? nk[k] / k - 1 : 0;
		for (j = 0; j < k; j++)
			if (count[k][j] > most || count[k][j] < least)
				return util_error(err, errlen, "'%c' is the right letter in "
				    "%d of the %d questions of %d choices (between %d and %d "
				    "would be balanced): a student who picks by position "
				    "gains; spread the right positions", 'a' + j,
				    count[k][j], nk[k], k, least, most);
	}
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
