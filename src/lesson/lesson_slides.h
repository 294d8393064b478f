/*
 * lesson_slides.h - a lesson as a sequence of slides, forwards and back:
 * the logic of the interactive runner, apart from any terminal.
 *
 * Slide n holds what the script showed between pause n-1 and pause n
 * (narration, notes, questions, failed checks, GPU comparisons), and the
 * simulator stands where pause n left it.  The last slide is what comes
 * after the last pause, up to the end.  The notes are kept apart from
 * what students see (the terminal runner sends them elsewhere).
 *
 * A slide's questions are shown without their answers; each reveal
 * shows the answer of the next one, one question at a time.
 *
 *   open --> slide 1 --forward--> slide 2 ... --forward--> last (at_end)
 *               ^                    |
 *               +------- back -------+  (reset the run, replay to n-1)
 *
 * Going back replays the script from the start with the same sink, so
 * the slide and the simulator are exactly what going forwards gave.
 */
#ifndef FLASHSTEP_LESSON_SLIDES_H
#define FLASHSTEP_LESSON_SLIDES_H

#include "lesson.h"
#include "lesson_run.h"

enum lesson_item_kind {
	LESSON_ITEM_SAY,
	LESSON_ITEM_NOTE,	/* the presenter's, never drawn for students */
	LESSON_ITEM_QUESTION,
	LESSON_ITEM_PROBLEM,	/* a new problem: its description */
	LESSON_ITEM_FAILED,	/* a failed expect: file:line: ... */
	LESSON_ITEM_COMPARE,	/* compare gpu: the result, or why skipped */
	LESSON_ITEM_TABLE,	/* ladder: lines shown as they are ('\n') */
};

struct lesson_item {
	enum lesson_item_kind kind;
	char *text;		/* QUESTION: its text with {...} filled */
	const struct lesson_question *q;	/* QUESTION */
	int number;		/* QUESTION: its number in the lesson */
	int revealed;		/* QUESTION: the answer is shown */
};

struct lesson_slides {
	const struct lesson *lesson;
	struct lesson_run *run;
	int index;		/* the slide shown, from 1 */
	int count;		/* slides in the lesson */
	int at_end;		/* it is the last */
	int nitems, cap;
	struct lesson_item *items;
	int oom;
	char err[512];
};

/* Opens lesson l at slide 1.  Returns 0, or -1 with err set (the lesson
 * cannot run, or no memory). */
int lesson_slides_open(struct lesson_slides *s, const struct lesson *l,
    char *err, size_t errlen);
/* The same, every timeline built (the rehearsal's, then the slides')
 * through progress (fulltimeline_progress; NULL: none). */
int lesson_slides_open_progress(struct lesson_slides *s,
    const struct lesson *l, const struct fulltimeline_progress *progress,
    char *err, size_t errlen);
void lesson_slides_close(struct lesson_slides *s);

/* The next slide: 0, 1 when already at the last, -1 with s->err set. */
int lesson_slides_forward(struct lesson_slides *s);

/* The previous slide: 0, 1 when already at the first, -1 with s->err. */
int lesson_slides_back(struct lesson_slides *s);

/* Goes to slide n (from 1; past the last stops there).  0 or -1. */
int lesson_slides_go(struct lesson_slides *s, int n);

/* Reveals the answer of the slide's first question whose answer is
 * hidden; returns 1, or 0 when none is. */
int lesson_slides_reveal(struct lesson_slides *s);

/* The slide's first question whose answer is hidden, or NULL. */
struct lesson_item *lesson_slides_hidden(struct lesson_slides *s);

/*
 * Slide n's heading, for the presenter: the first sentence of its first
 * narration or question, as the script writes it ({...} shown as "…"),
 * cut at a word to at most width columns with "…".  Read from the script
 * (every pause ends a slide), so it costs no run.  Returns 0 with buf
 * set, or -1 when l has no slide n or the slide says nothing.
 */
int lesson_slides_heading(const struct lesson *l, int n, int width, char *buf,
    size_t len);

#endif
