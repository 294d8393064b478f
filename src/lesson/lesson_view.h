/*
 * lesson_view.h - what a lesson shows, as lines of text: the state at a
 * pause, questions, narration wrapped to a width.
 *
 * The plain writer prints all of it; the terminal runner draws the
 * narration and questions from here and the state with the view's own
 * panes.  Nothing here prints or draws.
 */
#ifndef FLASHSTEP_LESSON_VIEW_H
#define FLASHSTEP_LESSON_VIEW_H

#include "lesson_run.h"
#include "model/util.h"

/* A growing list of lines.  On no memory it stops growing and sets
 * oom; callers check that once at the end. */
struct lesson_lines {
	int n, cap;
	char **line;
	int oom;
};

void lesson_lines_free(struct lesson_lines *ls);
void lesson_lines_clear(struct lesson_lines *ls);
void lesson_lines_add(struct lesson_lines *ls, const char *fmt, ...)
    UTIL_PRINTF(2, 3);

/* text wrapped to width columns (at least 20): the first line starts
 * with first, the others with indent (both count in the width). */
void lesson_lines_wrap(struct lesson_lines *ls, const char *text, int width,
    const char *first, const char *indent);

/*
 * The state at the current position: where the run stands, a map of the
 * tiles, the current tile's S and P (small tiles), the state of the
 * tile's rows (the focus row first) and the counters so far; with
 * several heads, which head the focus row is of.  Lines are
 * at most about 78 columns.
 */
void lesson_view_state(struct lesson_run *run, struct lesson_lines *out);

/* What the view can show of the run's problem where it stands. */
enum lesson_view_source {
	LESSON_VIEW_NONE,	/* nothing built yet: no problem to show */
	LESSON_VIEW_PANES,	/* the view's panes show the run's problem */
	LESSON_VIEW_FRAME,	/* several heads: the panes show one head, so
				 * the lesson's frame shows the focus row's,
				 * named ("head 3 of 16 (kv head 0 of 4)") */
	LESSON_VIEW_STALE,	/* the script changed the problem and has not
				 * built it: the view still shows the old one */
};

/* Which of those, with a sentence for the screen (or for --check, at
 * STALE) in why. */
int lesson_view_source(const struct lesson_run *run, char *why, size_t len);

/* The kernel ladder as `ladder` ran it on device: a line of what the
 * table is, then one per rung (its time, TFLOP/s, speed-up over the rung
 * below, its O against the lowest rung's, what it changes), or one line
 * saying why it was skipped (rungs NULL). */
void lesson_view_ladder(const struct gpu_ladder_rung *rungs,
    const char *device, const char *skipped, struct lesson_lines *out);

/* Question `number` as asked: its text (text, with any {...} filled,
 * or q's own) and its choices. */
void lesson_view_question(const struct lesson_question *q, const char *text,
    int number, int width, struct lesson_lines *out);

/* What revealing it adds under the question: "Answer: b) ...", or the
 * number and how near counts, then the explanation. */
void lesson_view_reveal(const struct lesson_question *q, int width,
    struct lesson_lines *out);

/* The answer alone, for the answers at the end: "Q2. b) the choice --
 * the explanation", or the number, or the explanation. */
void lesson_view_answer(const struct lesson_question *q, int number, int width,
    struct lesson_lines *out);

#endif
