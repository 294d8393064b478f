/*
 * timeline.h - one problem stepped from the first forward step to the
 * last backward step, and back.
 *
 * A timeline is an ordered table of segments, each an engine with its
 * own steps and phases behind a table of functions (struct
 * timeline_segment).  Global step numbers run on from one segment to the
 * next:
 *
 *     forward     steps 0 .. F-1              (struct sim)
 *     combine     steps F .. F+C-1            (struct combine: split-KV
 *                                              only, --splits 2 or more)
 *     backward    steps F+C .. F+C+B-1        (struct backward)
 *
 * Each segment is there only when the problem has it (fulltimeline_build
 * adds them); another engine is one more table of functions here and
 * one more timeline_add there.
 *
 * Positions and moves:
 *
 *        timeline_seek(g, phase)          timeline_move_phase(+1 / -1)
 *   any (g, phase) ----------> (g, phase) ---------------------> (g', phase')
 *
 * A seek lands in the segment that holds global step g and calls that
 * engine's seek; the other segments keep their positions.  A phase move
 * off the end of a segment enters the next one at its first step's
 * first phase (or the previous one at its last step's last phase).  The
 * timeline borrows its engines: keep them alive while it lives.
 */
#ifndef FLASHSTEP_TIMELINE_H
#define FLASHSTEP_TIMELINE_H

#include <stddef.h>

/* Which engine, and so which view struct, a segment has. */
enum timeline_kind {
	TIMELINE_FORWARD,	/* view: struct sim_view (sim.h) */
	TIMELINE_COMBINE,	/* view: struct combine_view (combine.h) */
	TIMELINE_BACKWARD,	/* view: struct backward_view (backward.h) */
};
#define TIMELINE_KINDS 3

/* An engine as the timeline drives it.  Every function gets the engine
 * pointer given to timeline_add. */
struct timeline_segment {
	const char *name;		/* "forward", "combine", "backward" */
	enum timeline_kind kind;
	long (*steps)(const void *engine);
	int (*phases)(const void *engine, long k);	/* phases of step k */
	const char *(*phase_name)(int phase);
	/* Go to step k, phase (-1: the step's last); 0 or -1 (k out of
	 * range, position unchanged). */
	int (*seek)(void *engine, long k, int phase);
	/* One phase forwards or back within the segment; 0, or -1 at
	 * either end of it (position unchanged). */
	int (*move_phase)(void *engine, int delta);
	long (*step)(const void *engine);		/* where it stands */
	int (*phase)(const void *engine);
	const void *(*view)(const void *engine);	/* per kind */
};

/* The engines of this file's table. */
extern const struct timeline_segment timeline_forward;	/* struct sim */
extern const struct timeline_segment timeline_combine;	/* struct combine */
extern const struct timeline_segment timeline_backward;	/* struct backward */

struct timeline;

/* Where a global step lies. */
struct timeline_pos {
	int seg;		/* segment index */
	long step;		/* the segment's own step number */
	long global;		/* the timeline's */
	int phase;
};

/* An empty timeline, or NULL (err set) when out of memory. */
struct timeline *timeline_new(char *err, size_t errlen);
void timeline_free(struct timeline *tl);

/* Appends a segment over engine (borrowed); the first segment added is
 * sought to its step 0, phase 0.  Returns 0, or -1 (err set: no memory,
 * or a segment of no steps). */
int timeline_add(struct timeline *tl, const struct timeline_segment *seg,
    void *engine, char *err, size_t errlen);

int timeline_segments(const struct timeline *tl);
const struct timeline_segment *timeline_segment(const struct timeline *tl,
    int seg);
void *timeline_engine(const struct timeline *tl, int seg);
/* The global number of a segment's step 0. */
long timeline_first(const struct timeline *tl, int seg);
/* The segment of the given kind (the first one), or -1. */
int timeline_find(const struct timeline *tl, enum timeline_kind kind);
long timeline_steps(const struct timeline *tl);

/* Where global step g lies; 0, or -1 when g is out of range. */
int timeline_locate(const struct timeline *tl, long g, struct timeline_pos *out);

/* Goes to global step g and phase (-1: its last).  Returns 0, or -1
 * when g is out of range (the position is then unchanged). */
int timeline_seek(struct timeline *tl, long g, int phase);

/* One phase forwards (+1) or back (-1), across steps and segments.
 * Returns 0, or -1 at either end (the position is then unchanged). */
int timeline_move_phase(struct timeline *tl, int delta);

/* The current position, and the current segment's view (cast it by
 * timeline_segment(tl, pos.seg)->kind). */
void timeline_position(const struct timeline *tl, struct timeline_pos *out);
const void *timeline_view(const struct timeline *tl);

#endif
