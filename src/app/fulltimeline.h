/*
 * fulltimeline.h - the timeline of a problem, and what commands that run the
 * backward pass do first and last, after setup_open: check the gradient
 * files, read or draw dO, run the forward (and, with split-KV, the
 * combine) for its O, lse and row max, build the backward and one
 * timeline over them all, and write the gradient files.
 */
#ifndef FLASHSTEP_FULLTIMELINE_H
#define FLASHSTEP_FULLTIMELINE_H

#include <stdio.h>

#include "model/backward.h"
#include "model/combine.h"
#include "options.h"
#include "setup.h"
#include "model/timeline.h"

struct fulltimeline {
	float *dout;		/* (Tq, dv) dO; NULL without the backward */
	const char *dout_source;	/* where dO came from, for display */
	float *o, *lse, *m;	/* the forward's output, lse and row max
				 * (the combine's with splits); NULL when
				 * nothing needed the forward run */
	struct combine *comb;	/* with --splits: merges the partials */
	struct backward *bwd;	/* with --backward */
	struct timeline *tl;	/* forward, then combine, then backward */
};

/*
 * The timeline of the options o over problem p and its sim (both
 * borrowed: keep them alive): the forward; with splits (the sim's
 * schedule has them) the combine, by o->combine; with o->backward the
 * backward, by o->grad_bug, from dO (o->spec.dout, or drawn from the
 * seed) and the O and lse the forward and combine give.  The forward
 * (and combine) run to their ends first when a later segment needs
 * their results: the sim is then at its last step, the timeline at its
 * first.  Returns 0, or -1 with err set (nothing to close).
 */
int fulltimeline_build(const struct options *o, const struct problem *p,
    struct sim *sim, struct fulltimeline *b, char *err, size_t errlen);

/*
 * What a build that takes long tells its caller (a view that draws its
 * progress and reads q meanwhile): fn is called now and then, often
 * (after every forward step and merge), with what the build is doing in
 * words and how far it is (done of total, in steps; total 0 when it
 * cannot say).  A non-zero return stops the build.
 */
struct fulltimeline_progress {
	int (*fn)(void *ctx, const char *what, long done, long total);
	void *ctx;
};

/* fulltimeline_build with progress (pr NULL: none).  Stopped by pr, it
 * returns -1 with err saying so and nothing built. */
int fulltimeline_build_progress(const struct options *o,
    const struct problem *p, struct sim *sim, struct fulltimeline *b,
    const struct fulltimeline_progress *pr, char *err, size_t errlen);

/*
 * For a setup s that setup_open built from o with o->backward: refuses
 * gradient files that cannot be written or do not fit the problem (a
 * scores problem has no dQ or dK), then fulltimeline_build.  Returns 0, or
 * -1 with err set (nothing to close).
 */
int fulltimeline_open(const struct options *o, struct setup *s,
    struct fulltimeline *b, char *err, size_t errlen);
void fulltimeline_close(struct fulltimeline *b);

/* One line: the backward's loop order, steps, bug and dO. */
void fulltimeline_describe(FILE *f, const struct fulltimeline *b);

/* Writes --grad-q, --grad-k, --grad-v and --grad-scores when given, each
 * whole or not at all.  Returns 0 or -1 with err set. */
int fulltimeline_write(const struct options *o, const struct problem *p,
    const struct backward_grads *g, char *err, size_t errlen);

#endif
