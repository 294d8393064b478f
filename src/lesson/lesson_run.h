/*
 * lesson_run.h - the lesson runner's core: a parsed script executed
 * against the simulator, one pause at a time.
 *
 * The states and what moves between them:
 *
 *   lesson_run_new --> READY --lesson_run_next--> PAUSED --next--> ... END
 *                        ^                          |
 *                        +----- lesson_run_reset ---+   (going back: reset,
 *                                                         then replay)
 *
 * lesson_run_next executes directives until a `pause` (LESSON_PAUSED), the
 * end (LESSON_END), a failed `expect` when the run stops at failures
 * (LESSON_FAILED) or a directive that cannot run (LESSON_ERROR, with
 * "file:line: what is wrong" in run->err).  What a lesson shows goes to a
 * sink, a table of callbacks: the plain writer prints it, the terminal
 * runner draws it, --check gives none.  The core itself never prints.
 *
 * When a run ends, every `number` question it asked must have had its
 * answer computed by a later check (an expect or a {...} whose value is
 * the answer): a question whose answer nothing shows fails the lesson.
 *
 * The problem is built lazily: problem directives change the list of
 * options the script gave (run->given), and the next directive that
 * needs the simulator parses that list as `flashstep run` parses its
 * command line into run->opts and builds the problem anew, standing
 * before the first step (step = -1).
 *
 * A problem is a timeline (model/timeline.h, built by fulltimeline_build):
 * the forward pass, then the combine of a split run (splits 2 or more),
 * then the backward pass (backward).  Positions are (step, phase) with step the timeline's
 * global step number; phase is the phase of that step in its own
 * segment's numbering (sim.h, combine.h, backward.h), and phases 0 ..
 * phase of the step are done.  Scripts name phases (lesson_parser.h);
 * lesson_run_phase_local turns a name into the phase of a segment.
 */
#ifndef FLASHSTEP_LESSON_RUN_H
#define FLASHSTEP_LESSON_RUN_H

#include <stddef.h>
#include <stdio.h>

#include "gpu/gpu.h"
#include "gpu/gpucheck.h"
#include "lesson.h"
#include "lesson_parser.h"
#include "app/fulltimeline.h"
#include "model/combine.h"
#include "app/options.h"
#include "app/setup.h"
#include "model/sim.h"
#include "model/timeline.h"
#include "model/util.h"

/* What exec functions and lesson_run_next return. */
#define LESSON_NEXT	0	/* exec: go on with the next directive */
#define LESSON_PAUSED	1	/* at a `pause` */
#define LESSON_END	2	/* past the last directive */
#define LESSON_FAILED	3	/* an expectation failed (stop_at_failure) */
#define LESSON_ERROR	(-1)	/* the script cannot go on: run->err */

/* Flags of a run. */
#define LESSON_RUN_STOP	0x1	/* stop at the first failed expectation */
#define LESSON_RUN_DRY	0x2	/* a rehearsal: `compare gpu` does not run */

enum lesson_text_kind {
	LESSON_SAY,
	LESSON_NOTE,
};

struct lesson_run;

/* Where a lesson's output goes.  Any callback may be NULL. */
struct lesson_sink {
	void (*begin)(void *ctx, struct lesson_run *run);
	void (*text)(void *ctx, struct lesson_run *run,
	    enum lesson_text_kind kind, const char *text);
	/* A new problem was built (the position is before the first step). */
	void (*problem)(void *ctx, struct lesson_run *run);
	/* A question; text is its text with any {...} filled in. */
	void (*ask)(void *ctx, struct lesson_run *run,
	    const struct lesson_question *q, const char *text, int number);
	void (*pause)(void *ctx, struct lesson_run *run);
	/* An expectation or a GPU comparison failed; msg is file:line: ... */
	void (*failed)(void *ctx, struct lesson_run *run, const char *msg);
	/* compare gpu: rep when the kernel ran, else why it was skipped. */
	void (*compare)(void *ctx, struct lesson_run *run,
	    const struct gpucheck_report *rep, const char *skipped);
	/* ladder: the rungs (GPU_LADDER_RUNGS) when a GPU ran them, else why
	 * the ladder was skipped; device names the GPU. */
	void (*ladder)(void *ctx, struct lesson_run *run,
	    const struct gpu_ladder_rung *rungs, const char *device,
	    const char *skipped);
	void (*end)(void *ctx, struct lesson_run *run);
};

/* Where a `label` was: a position of one problem. */
struct lesson_mark {
	long step;
	int phase;
	int generation;		/* the problem it belongs to; 0: not yet */
};

struct lesson_run {
	const struct lesson *lesson;
	const struct lesson_sink *sink;
	void *ctx;
	int flags;

	int pc;			/* the next directive */
	int begun, ended;
	int npauses;		/* pauses passed */
	int nasked;		/* questions asked */

	const struct lesson_cmd **given;	/* the problem options in force,
					 * the latest of each name */
	int ngiven;
	struct options opts;	/* given, parsed, when built */
	int dirty;		/* given changed since the problem was built */
	int problem_line;	/* the last line that changed the problem */
	int built;
	struct setup setup;	/* problem and sim, when built */
	struct fulltimeline bwd;	/* the timeline (forward, then the combine of
				 * a split run, then the backward) and
				 * their engines */
	struct sim *probe;	/* reads rows outside the current tile */
	struct backward *bprobe;	/* reads dQ rows outside it */
	float *final_o, *final_lse;	/* the whole run's output, once asked */
	struct backward_grads grads;	/* the backward's gradients, once asked */
	float *unsplit_o, *unsplit_lse;	/* the same problem unsplit, once asked */
	float *zeros;		/* zeros: an accumulator before any step */
	int generation;		/* bumped at each build */
	/* A long build's progress (the terminal runner's busy screen), or
	 * NULL; a build it stops fails as any other, and its caller, who
	 * knows it stopped it, says so. */
	const struct fulltimeline_progress *progress;

	/* `show FIGURE` in force (lesson_show.h): the frame shows that
	 * figure instead of the view; NULL: the view (and after any change
	 * of the problem). */
	const struct lesson_cmd *show;

	long step;		/* -1: before the first step; else global */
	int phase;		/* in the step's own segment */
	int focus;		/* the focus row, in the schedule's row order */
	int focus_key;		/* the focus key (dK, dV) */
	struct lesson_mark *marks;	/* one per label */

	double *kept;		/* the values `keep` remembered, by index */
	unsigned char *confirmed;	/* per question: a number question's
					 * answer was computed by a later check */
	double *ref_o;		/* the reference O, once asked (error) */
	double *ref_grad[4];	/* the reference dQ, dK, dV, dS, once asked */

	int failures;
	char failure[512];	/* the first failed expectation */
	char err[512];
};

/*
 * A run of lesson l (borrowed: keep it alive) that sends what it shows to
 * sink with ctx (sink may be NULL).  Returns NULL when out of memory.
 */
struct lesson_run *lesson_run_new(const struct lesson *l,
    const struct lesson_sink *sink, void *ctx, int flags);
void lesson_run_free(struct lesson_run *run);

/* Back to before the first directive, as if new (the sink stays). */
void lesson_run_reset(struct lesson_run *run);

/* Executes directives up to the next pause or the end; see above. */
int lesson_run_next(struct lesson_run *run);

/* Runs to the end, ignoring pauses.  Returns LESSON_END, LESSON_FAILED
 * or LESSON_ERROR. */
int lesson_run_all(struct lesson_run *run);

/*
 * Rehearses lesson l: runs it to the end without a sink and without the
 * GPU, so that a lesson that cannot run is refused before anything is
 * shown.  Returns 0 and sets *slides to its number of slides (a slide
 * ends at each pause; what follows the last pause, if anything does, is
 * one more), or -1 with err set.
 */
int lesson_run_rehearse(const struct lesson *l,
    const struct fulltimeline_progress *progress, int *slides, char *err,
    size_t errlen);

/* Is this the last slide: the run ended, or it paused with nothing left
 * after the pause?  (rc: what lesson_run_next returned.) */
int lesson_run_last_slide(const struct lesson_run *run, int rc);

/* ---- what views read ---- */

/* One row's state at the current position. */
struct lesson_row {
	int row;
	int in_tile;		/* the current tile holds the row */
	int index;		/* its index in the current tile (in_tile) */
	long from_step;		/* the step its state comes from; -1: none */
	int has_alpha;		/* the rescale phase of its last step is done */
	int has_out;		/* finalized: o and lse are known */
	float m, alpha, l, lse;
	const float *acc;	/* dv values: u, or o when normalized */
	const float *o;		/* dv values, when has_out */
};

/* The forward's state of row r (0 <= r < H Tq, the schedule's order) at
 * the current position (past the forward: as the forward left it);
 * pointers stay valid until the run moves.  Returns 0, or -1 when no
 * problem is built or r is out of range. */
int lesson_run_row(struct lesson_run *run, int r, struct lesson_row *out);

/* The forward's view, or NULL before the first step, before a build, or
 * when the run stands in another segment. */
const struct sim_view *lesson_run_view(const struct lesson_run *run);

/* The segment the run stands in (the forward before the first step),
 * and its kind; NULL / TIMELINE_FORWARD before a build. */
const struct timeline_segment *lesson_run_segment(const struct lesson_run *run);
enum timeline_kind lesson_run_kind(const struct lesson_run *run);

/* The current step in its segment's own numbering (-1 before the first
 * step), and the global number of the first step of the segment of
 * kind k (-1: the problem has none). */
long lesson_run_local_step(const struct lesson_run *run);
long lesson_run_first(const struct lesson_run *run, enum timeline_kind k);

/* The current phase by name, and by its number across segments
 * (lesson_parser.h). */
const char *lesson_run_phase_name(const struct lesson_run *run);
int lesson_run_phase_id(const struct lesson_run *run);

/* The backward's or the combine's view when the run stands in that
 * segment, else NULL. */
const struct backward_view *lesson_run_backward_view(const struct lesson_run *run);
const struct combine_view *lesson_run_combine_view(const struct lesson_run *run);

/* The rows of O (H Tq) and the row of O that row r of the schedule's
 * order is (they differ only when --pack-gqa interleaves heads). */
int lesson_run_rows(const struct lesson_run *run);
int lesson_run_out_row(const struct lesson_run *run, int r);
/* The forward's row block that holds row r of the schedule's order. */
int lesson_run_block(const struct lesson_run *run, int r);

/* Writes the problem's description (setup_describe's lines, and those
 * of the combine or the backward). */
void lesson_run_describe(const struct lesson_run *run, FILE *f);

/* ---- the backward's gradients ---- */

enum lesson_grad_kind {
	LESSON_DQ,		/* of a query row: (d) */
	LESSON_DK,		/* of a key: (d) */
	LESSON_DV,		/* of a key: (dv) */
};

/* One row of dQ, dK or dV at the current position. */
struct lesson_grad {
	int in_tile;		/* the current backward tile holds the row */
	int index;		/* its index in the tile (in_tile) */
	long from_step;		/* the backward step whose value it is; -1:
				 * none has added to it yet (it is 0) */
	int done;		/* every tile that adds to it has */
	int n;			/* its entries: d, or dv */
	const float *x;
};

/* Row `at` (a query row for dQ, a key for dK and dV) at the current
 * position, or after the whole backward (final).  Returns 0, or -1 when
 * the problem has no backward, `at` is out of range or no memory. */
int lesson_run_grad(struct lesson_run *run, enum lesson_grad_kind kind,
    int at, int final, struct lesson_grad *out);

/* The double-precision gradients (model/gradref.h) of the problem:
 * dQ, dK, dV, dS in ref[0..3]; 0 or LESSON_ERROR. */
int lesson_run_reference_grads(struct lesson_run *run,
    const struct lesson_cmd *c, double *const **ref);

/* The same problem's O and lse without splits (H Tq, dv and H Tq, O's
 * row order); 0 or LESSON_ERROR. */
int lesson_run_unsplit(struct lesson_run *run, const struct lesson_cmd *c,
    const float **o, const float **lse);

/* ---- for the directives (lesson_directive.c) ---- */

/* Builds the problem when the script changed it.  0, or LESSON_ERROR. */
int lesson_run_ready(struct lesson_run *run, const struct lesson_cmd *c);

/* Goes to global step `step` and phase (in that step's segment, or -1:
 * its last); step -1 is before the first step.  0 or LESSON_ERROR (out
 * of range; the position is then unchanged). */
int lesson_run_seek(struct lesson_run *run, const struct lesson_cmd *c,
    long step, int phase);

/* Puts the engines back where the run stands (after a search moved
 * them). */
void lesson_run_resync(struct lesson_run *run);

/* The phase of global step `step`'s segment named by `id` (a number of
 * lesson_parser_phase; -1: the step's last phase, -1).  0 with *local
 * set, or LESSON_ERROR when that segment has no such phase. */
int lesson_run_phase_local(struct lesson_run *run, const struct lesson_cmd *c,
    long step, int id, int *local);

/* Sets run->err to "file:line: " and the message; returns LESSON_ERROR. */
int lesson_run_error(struct lesson_run *run, const struct lesson_cmd *c,
    const char *fmt, ...) UTIL_PRINTF(3, 4);

/* Records a failed check "file:line: ..." and tells the sink; returns
 * LESSON_FAILED when the run stops at failures, else LESSON_NEXT. */
int lesson_run_fail(struct lesson_run *run, const struct lesson_cmd *c,
    const char *fmt, ...) UTIL_PRINTF(3, 4);

/* The final O (H Tq, dv) and lse (H Tq) of the whole problem (with
 * splits, merged); 0, or LESSON_ERROR when out of memory. */
int lesson_run_final(struct lesson_run *run, const struct lesson_cmd *c,
    const float **o, const float **lse);

/* The double-precision reference O (H Tq, dv) of the whole problem (see
 * model/reference.h), computed once per problem; 0 or LESSON_ERROR. */
int lesson_run_reference(struct lesson_run *run, const struct lesson_cmd *c,
    const double **o);

/* Records a failed check at line of the lesson, as lesson_run_fail does
 * for a directive. */
int lesson_run_fail_at(struct lesson_run *run, int line, const char *fmt, ...)
    UTIL_PRINTF(3, 4);

/* Writes x as the lessons show numbers: %.7g, -inf, inf, nan. */
const char *lesson_format(double x, char *buf, size_t len);

#endif
