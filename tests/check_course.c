/*
 * check_course.c - the course as a whole (lessons/): every lesson holds
 * under --check (its checks, its rules, no answer on a question's
 * slide); across the course no answer letter is right in more than half
 * of the multiple-choice questions and the right choice is the longest
 * in at most half of them, and the course keeps lesson_lint_course (the
 * longest choice right no more often than chance, right letters spread,
 * no choice told before it is asked); every lesson's handout holds each
 * question and each frame, with no answer's text before its answers,
 * and its worksheet withholds the numbers its questions ask.
 */
#include "config.h"

#include "testutil.h"
#include "lesson/lesson.h"
#include "lesson/lesson_check.h"
#include "lesson/lesson_lint.h"
#include "lesson/lesson_plain.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LESSONS 64

static char *paths[MAX_LESSONS];
static int npaths;

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The course's lessons, by path, in order. */
static void
find_lessons(void)
{
	const char *top = getenv("top_srcdir");
	char folder[1024];
	struct dirent *de;
	size_t n;
	DIR *d;

	snprintf(folder, sizeof folder, "%s/lessons", top ? top :
	    LESSONS_SRCDIR "/..");
	d = opendir(folder);
	ck_assert_msg(d != NULL, "cannot open %s", folder);
	npaths = 0;
	while ((de = readdir(d)) != NULL && npaths < MAX_LESSONS) {
		n = strlen(de->d_name);
		if (n < 8 || strcmp(de->d_name + n - 7, ".lesson") != 0)
			continue;
		paths[npaths] = malloc(strlen(folder) + n + 2);
		ck_assert(paths[npaths] != NULL);
		sprintf(paths[npaths++], "%s/%s", folder, de->d_name);
	}
	closedir(d);
	qsort(paths, (size_t)npaths, sizeof *paths, by_name);
	ck_assert_int_ge(npaths, 18);
}

static void
free_lessons(void)
{
	while (npaths > 0)
		free(paths[--npaths]);
}

static struct lesson *
load(const char *path)
{
	struct lesson *l;
	char err[512];

	l = lesson_parse_file(path, err, sizeof err);
	ck_assert_msg(l != NULL, "%s", err);
	return l;
}

START_TEST(test_every_lesson_holds)
{
	struct lesson *l;
	char msg[600];
	int i;

	find_lessons();
	for (i = 0; i < npaths; i++) {
		l = load(paths[i]);
		ck_assert_msg(lesson_check(l, msg, sizeof msg) == 0, "%s", msg);
		lesson_free(l);
	}
	free_lessons();
}
END_TEST

START_TEST(test_answer_letters)
{
	const struct lesson_question *q;
	struct lesson *l;
	int count[26] = { 0 }, n = 0, longest = 0, numbers = 0, i, k, j;
	size_t len;

	find_lessons();
	for (i = 0; i < npaths; i++) {
		l = load(paths[i]);
		for (k = 0; k < l->nquestions; k++) {
			q = &l->questions[k];
			numbers += q->numeric;
			if (q->nchoices == 0)
				continue;
			n++;
			count[q->answer]++;
			len = strlen(q->choices[q->answer]);
			for (j = 0; j < q->nchoices; j++)
				if (j != q->answer && strlen(q->choices[j]) >= len)
					break;
			longest += j == q->nchoices;
		}
		lesson_free(l);
	}
	free_lessons();
	ck_assert_int_ge(n, 12);
	for (k = 0; k < 26; k++)
		ck_assert_msg(2 * count[k] <= n, "'%c' is right in %d of the course's "
		    "%d multiple-choice questions", 'a' + k, count[k], n);
	ck_assert_msg(2 * longest <= n, "the right choice is the longest in %d "
	    "of %d questions", longest, n);
	/* the course asks numbers too: predict, merge, traffic at 4T */
	ck_assert_int_ge(numbers, 5);
}
END_TEST

/* The course's quiz rules (lesson_lint_course): length and position say
 * nothing of the right choice, and no lesson tells a choice before it
 * asks; and every lesson's worksheet withholds what its questions ask. */
START_TEST(test_course_lint)
{
	struct lesson_plain_opts o = { .markdown = 1, .answers = 0 };
	const struct lesson *ls[MAX_LESSONS];
	struct lesson *l;
	char err[600], *text, which[32], *q1;
	size_t size;
	FILE *f;
	int i, k;

	find_lessons();
	for (i = 0; i < npaths; i++)
		ls[i] = load(paths[i]);
	ck_assert_msg(lesson_lint_course(ls, npaths, err, sizeof err) == 0, "%s",
	    err);
	/* a worksheet gives no question's answer after the question */
	for (i = 0; i < npaths; i++) {
		l = (struct lesson *)ls[i];
		text = NULL;
		f = open_memstream(&text, &size);
		ck_assert(f != NULL);
		ck_assert_msg(lesson_plain_write(l, f, &o, err, sizeof err) == 0,
		    "%s: %s", paths[i], err);
		fclose(f);
		q1 = strstr(text, "**Q1.**");
		for (k = 0; q1 != NULL && k < l->nquestions; k++)
			ck_assert_msg(!lesson_check_gives_away(&l->questions[k],
			    strstr(q1, "\n\n") != NULL ? strstr(q1, "\n\n") : q1,
			    which, sizeof which) || l->questions[k].numeric == 0,
			    "%s: the worksheet gives Q%d's %s", paths[i], k + 1, which);
		free(text);
	}
	for (i = 0; i < npaths; i++)
		lesson_free((struct lesson *)ls[i]);
	free_lessons();
}
END_TEST

/* text with every run of blanks and newlines as one space: a wrapped
 * paragraph reads as the line it was written as. */
static char *
flat(const char *text)
{
	char *out = malloc(strlen(text) + 1), *q = out;
	const char *p;

	ck_assert(out != NULL);
	for (p = text; *p != '\0'; p++) {
		if (*p == '\n' || *p == ' ') {
			if (q > out && q[-1] == ' ')
				continue;
			*q++ = ' ';
		} else
			*q++ = *p;
	}
	*q = '\0';
	return out;
}

START_TEST(test_handouts)
{
	struct lesson_plain_opts o = { .markdown = 1, .answers = 1 };
	const struct lesson_question *q;
	struct lesson *l;
	char *text, *answers, *p, head[48], err[512], frame[48], *all, *all_ans;
	size_t size;
	FILE *f;
	int i, k, pauses, frames;

	find_lessons();
	for (i = 0; i < npaths; i++) {
		l = load(paths[i]);
		text = NULL;
		f = open_memstream(&text, &size);
		ck_assert(f != NULL);
		ck_assert_msg(lesson_plain_write(l, f, &o, err, sizeof err) == 0,
		    "%s: %s", paths[i], err);
		fclose(f);
		answers = strstr(text, "\n## Answers\n");
		ck_assert_msg(answers != NULL || l->nquestions == 0, "%s: no "
		    "answers", paths[i]);
		all = flat(text);
		all_ans = strstr(all, " ## Answers ");
		for (k = 0; k < l->nquestions; k++) {
			q = &l->questions[k];
			/* the question is asked before the answers ... */
			snprintf(head, sizeof head, "**Q%d.** ", k + 1);
			p = strstr(text, head);
			ck_assert_msg(p != NULL && p < answers, "%s: Q%d is not asked",
			    paths[i], k + 1);
			/* ... and its explanation comes only after them */
			if (q->explanation == NULL)
				continue;
			snprintf(head, sizeof head, "%.40s", q->explanation);
			if (strpbrk(head, "*_`[]<>|\\") != NULL)
				continue;	/* escaped in Markdown: not found as is */
			p = strstr(all, head);
			ck_assert_msg(p != NULL && p > all_ans, "%s: Q%d's answer text "
			    "'%s' is %s", paths[i], k + 1, head, p == NULL ? "missing" :
			    "before the answers");
		}
		/* a frame for every pause, numbered as slides */
		for (pauses = 0, k = 0; k < l->ncmds; k++)
			pauses += strcmp(l->cmds[k].dir->name, "pause") == 0;
		for (frames = 0; ; frames++) {
			snprintf(frame, sizeof frame, "\n[slide %d of ", frames + 1);
			if (strstr(text, frame) == NULL)
				break;
		}
		ck_assert_msg(frames == pauses, "%s: %d frames for %d pauses",
		    paths[i], frames, pauses);
		free(all);
		free(text);
		lesson_free(l);
	}
	free_lessons();
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("course");
	TCase *tc = tcase_create("course");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_every_lesson_holds);
	tcase_add_test(tc, test_answer_letters);
	tcase_add_test(tc, test_course_lint);
	tcase_add_test(tc, test_handouts);
	suite_add_tcase(s, tc);
	return s;
}
