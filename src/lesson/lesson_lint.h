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
 */
#ifndef FLASHSTEP_LESSON_LINT_H
#define FLASHSTEP_LESSON_LINT_H

#include <stddef.h>

#include "lesson.h"

/* 0, or -1 with "path:line: what breaks which rule" in err. */
int lesson_lint(const struct lesson *l, char *err, size_t errlen);

/* The first lesson-language word in text, or NULL: exposed for tests. */
const char *lesson_lint_language(const char *text, char *word, size_t len);

#endif
