/*
 * lesson_tty.h - a lesson in the terminal: the narration pane beside the
 * simulator's panes (src/ui), one slide per pause (lesson_slides.h).
 *
 * Keys: space, Right or Enter go on (revealing the slide's answers
 * first), Left goes back, a reveals the answers, PgUp and PgDn scroll the
 * narration, q quits; the view's own keys (?, ., Tab, c, ...) look around
 * until the next slide.  With presenter the speaker notes show too.
 */
#ifndef FLASHSTEP_LESSON_TTY_H
#define FLASHSTEP_LESSON_TTY_H

#include <stddef.h>

#include "lesson.h"

/* Runs lesson l until q.  Needs a terminal on stdin and stdout.  Returns
 * 0, or -1 with err set (the lesson cannot run, or the terminal).  *sig is
 * SIGINT or SIGTERM when one ended it (the terminal is restored). */
int lesson_tty_run(const struct lesson *l, int presenter, int *sig, char *err,
    size_t errlen);

#endif
