/*
 * lesson_check.h - `flashstep lesson --check`: a lesson holds when its
 * script keeps the rules of lesson_lint.h, every expect and {...} holds,
 * every number question's answer is computed later, and no slide gives
 * its question's answer away: the answer of a number question, or a
 * number that only the right choice holds, must not be on the slide
 * that asks it, neither in the narration nor in what the view shows
 * where the slide ends.
 */
#ifndef FLASHSTEP_LESSON_CHECK_H
#define FLASHSTEP_LESSON_CHECK_H

#include <stddef.h>

#include "lesson.h"

/* 0 when the lesson holds; 1 when a check failed, or -1 when it cannot
 * run, with the first "path:line: ..." in msg. */
int lesson_check(const struct lesson *l, char *msg, size_t len);

#endif
