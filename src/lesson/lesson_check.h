/*
 * lesson_check.h - `flashstep lesson --check`: a lesson holds when its
 * script keeps the rules of lesson_lint.h, every expect and {...} holds,
 * every number question's answer is computed later, and what it shows
 * can be taught from:
 *
 *   - no slide gives its question's answer away: the answer of a number
 *     question, or a number that only the right choice holds, is not on
 *     the slide that asks it, in its narration, in the question's own
 *     words, nor in what the view shows where the slide ends;
 *   - the worksheet (--plain --no-answers: every slide's narration,
 *     questions and frames, and the title) holds no value that answers
 *     one of its questions but in the question itself; it withholds
 *     (blanks) such values after the question, so what remains is told
 *     before the question is asked;
 *   - a value a slide quotes with {...} is what the view shows where the
 *     slide ends: it reads the same there, for a row the frame shows;
 *   - a slide that changes the problem builds it before it ends, so the
 *     view shows the problem the narration speaks of.
 *
 * Numbers are read as a student reads them: whole tokens (not the 16 of
 * fp16 or 16x16), and a whole number with its unit: the 4 of "4 FLOPs"
 * does not answer "how many times fewer".
 */
#ifndef FLASHSTEP_LESSON_CHECK_H
#define FLASHSTEP_LESSON_CHECK_H

#include <stddef.h>
#include <stdio.h>

#include "lesson.h"
#include "lesson_view.h"

/* 0 when the lesson holds; 1 when a check failed, or -1 when it cannot
 * run, with the first "path:line: ..." in msg. */
int lesson_check(const struct lesson *l, char *msg, size_t len);

/* Does text hold a value that answers q (its number; a number only its
 * right choice holds)?  1 with the value written in which, else 0. */
int lesson_check_gives_away(const struct lesson_question *q, const char *text,
    char *which, size_t len);

/* Blanks (with '.', the same width) every number in ls that answers
 * one of the questions qs[0..n): a worksheet's lines after the questions
 * were asked, so that what tells an answer does not give it. */
void lesson_check_withhold(const struct lesson_question *const *qs, int n,
    struct lesson_lines *ls);

/*
 * Checks the lessons names[0..n): each a lesson's name or file, or a
 * folder, whose .lesson files are checked in name order.  Every failure
 * is written to report, one line each; with two lessons or more, the
 * course's rules too (lesson_lint_course).  Returns 0 when all hold, 1
 * when a check or a rule failed, -1 when a lesson cannot be found, read
 * or run.
 */
int lesson_check_all(char *const *names, int n, FILE *report);

#endif
