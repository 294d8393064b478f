/*
 * lesson_tty.h - a lesson in the terminal: the narration pane beside the
 * simulator's panes (src/ui), one slide per pause (lesson_slides.h).
 *
 * Keys: Space reads on (scrolls the narration while there is more, then
 * reveals the next hidden answer, then goes to the next slide); Right
 * and Enter reveal, then go on; Left goes back; PgUp and PgDn scroll a
 * page of the narration; a reveals an answer; = types a number answer;
 * j goes to a slide by number; ? lists these keys, then the view's that
 * still work; q quits.  The view's own keys (., Tab, b, c, m, o, e, ...)
 * look around until the next slide, which puts the view back where the
 * lesson stands: its problem, rule, tiles, position and focus row.
 * While a slide change computes, the title bar says "working…"; keys
 * pressed meanwhile are dropped (q still quits), not replayed as slides.  The speaker notes never show on this screen: they go
 * to notes_to (lesson_notes.h) when it is given.
 */
#ifndef FLASHSTEP_LESSON_TTY_H
#define FLASHSTEP_LESSON_TTY_H

#include <stddef.h>

#include "lesson.h"

/* Runs lesson l until q.  Needs a terminal on stdin and stdout.  Returns
 * 0, or -1 with err set (the lesson cannot run, the notes cannot be
 * opened, or the terminal).  *sig is SIGINT, SIGTERM, SIGHUP or SIGQUIT
 * when one ended it (the terminal is restored every way).  warn (either
 * way) is why the notes stopped during the lesson, or empty: the lesson
 * went on without them, and said so on its status line once. */
int lesson_tty_run(const struct lesson *l, const char *notes_to, int *sig,
    char *warn, size_t warnlen, char *err, size_t errlen);

#endif
