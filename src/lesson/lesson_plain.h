/*
 * lesson_plain.h - a lesson as a document: narration, the problem, each
 * slide's frame (the state where it ends), the questions, and their
 * answers gathered at the end, with no waits.  Two styles: plain text
 * (--plain, for reviewing a lesson) and Markdown (--handout, for a
 * handout: frames as code blocks; without answers, a worksheet).
 */
#ifndef FLASHSTEP_LESSON_PLAIN_H
#define FLASHSTEP_LESSON_PLAIN_H

#include <stdio.h>

#include "lesson.h"

struct lesson_plain_opts {
	const char *output;	/* where f goes, for messages ("stdout") */
	int markdown;		/* the handout's Markdown, else plain text */
	int presenter;		/* the speaker notes too */
	int answers;		/* the answers at the end */
};

/*
 * Writes lesson l to f.  Returns 0 when every expectation held, 1 when
 * some failed (each is in the text, marked "!!"), -1 with err set
 * ("file:line: ...") when the lesson cannot run (a rehearsal catches
 * that before anything is written), or -2 when writing f failed, with
 * err "writing --plain output to stdout: No space left on device"
 * (--handout for Markdown, o->output for where).
 */
int lesson_plain_write(const struct lesson *l, FILE *f,
    const struct lesson_plain_opts *o, char *err, size_t errlen);

#endif
