/*
 * bwdsetup.h - what commands that run the backward pass do first and
 * last, after setup_open: check the gradient files, read or draw dO,
 * run the forward for its O, lse and row max, build the backward and
 * one timeline over both, and write the gradient files.
 */
#ifndef FLASHSTEP_BWDSETUP_H
#define FLASHSTEP_BWDSETUP_H

#include <stdio.h>

#include "backward.h"
#include "options.h"
#include "setup.h"
#include "timeline.h"

struct bwdsetup {
	float *dout;		/* (Tq, dv) dO */
	const char *dout_source;	/* where dO came from, for display */
	float *o, *lse, *m;	/* the forward's output, lse and row max */
	struct backward *bwd;
	struct timeline *tl;	/* forward, then backward */
};

/*
 * For a setup s that setup_open built from o: refuses gradient files
 * that cannot be written or do not fit the problem (a scores problem has
 * no dQ or dK), then runs the forward (s->sim ends at its last step) and
 * builds the rest.  Returns 0, or -1 with err set (nothing to close).
 */
int bwdsetup_open(const struct options *o, struct setup *s,
    struct bwdsetup *b, char *err, size_t errlen);
void bwdsetup_close(struct bwdsetup *b);

/* One line: the backward's loop order, steps, bug and dO. */
void bwdsetup_describe(FILE *f, const struct bwdsetup *b);

/* Writes --grad-q, --grad-k, --grad-v and --grad-scores when given, each
 * whole or not at all.  Returns 0 or -1 with err set. */
int bwdsetup_write(const struct options *o, const struct problem *p,
    const struct backward_grads *g, char *err, size_t errlen);

#endif
