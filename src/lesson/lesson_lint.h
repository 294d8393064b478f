/*
 * lesson_lint.h - the rules a lesson's script must keep to be taught
 * (`flashstep lesson --check` applies them, so every lesson of the
 * course does):
 *
 *   - What students read (title, say, ask, choice, answer) never holds
 *     the lesson language: expect, goto, compare gpu, new-problem, step
 *     until, ..., nor a directive in `backquotes`.
 *   - A question ends its slide: between its answer and the next pause
 *     only what shows nothing and moves nothing (expect, keep, note,
 *     label, focus), so the view never moves on to what answers it, and
 *     no slide holds two questions.
 *   - Multiple choice has at least two choices, and when a lesson has two
 *     or more such questions, no letter is right in more than half of
 *     them and the right choice is not the longest in every one.
 *
 * and, across a course (lesson_lint_course): length and position say
 * nothing of the right choice, and no lesson tells a choice before it
 * asks.
 */
#ifndef FLASHSTEP_LESSON_LINT_H
#define FLASHSTEP_LESSON_LINT_H

#include <stddef.h>

#include "lesson.h"

/* 0, or -1 with "path:line: what breaks which rule" in err. */
int lesson_lint(const struct lesson *l, char *err, size_t errlen);

/* Ask before telling: no multiple-choice question's right choice is in
 * the lesson's title or in narration before the question (three of its
 * words in a row, two of them of four letters or more, that neither the
 * question nor a wrong choice holds).  0, or -1 with "path:line: ..." */
int lesson_lint_told_before(const struct lesson *l, char *err, size_t errlen);

/* Does text tell q's right choice (as above)?  1 with the words in
 * phrase, else 0. */
int lesson_lint_told(const struct lesson_question *q, const char *text,
    char *phrase, size_t len);

/*
 * The rules of a course, the lessons ls[0..n) together: each keeps
 * lesson_lint_told_before; the right choice is the longest in no more
 * questions than chance gives (the sum of 1/k over questions of k
 * choices), and one more; among the questions of k choices, each letter
 * is right in about 1/k of them (at most ceil(n/k), one more from 2k
 * questions on; at least n/k - 1 from 2k on).  0, or -1 with a sentence
 * in err.
 */
int lesson_lint_course(const struct lesson *const *ls, int n, char *err,
    size_t errlen);

/* The first lesson-language word in text, or NULL: exposed for tests. */
const char *lesson_lint_language(const char *text, char *word, size_t len);

#endif
