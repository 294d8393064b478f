/*
 * lesson_plain.h - a lesson as plain text: narration, the state at each
 * pause, the questions, and their answers at the end, with no waits.
 * For handouts and for reviewing a lesson.
 */
#ifndef FLASHSTEP_LESSON_PLAIN_H
#define FLASHSTEP_LESSON_PLAIN_H

#include <stdio.h>

#include "lesson.h"

/*
 * Writes lesson l to f; with presenter, the speaker notes too.  Returns
 * 0 when every expectation held, 1 when some failed (each is in the
 * text, marked "!!"), or -1 with err set when the lesson cannot run (a
 * rehearsal catches that before anything is written) or writing fails.
 */
int lesson_plain_write(const struct lesson *l, FILE *f, int presenter,
    char *err, size_t errlen);

#endif
