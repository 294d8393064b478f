/*
 * setup.h - what commands that run a problem do first and last: build
 * the problem and its sim from the options, describe them, and write the
 * output files.
 */
#ifndef FLASHSTEP_SETUP_H
#define FLASHSTEP_SETUP_H

#include <stdio.h>

#include "options.h"
#include "sim.h"

struct setup {
	struct problem problem;
	struct sim *sim;
};

/* Checks that --output and --lse can be written, then builds.  Returns
 * 0, or -1 with err set (nothing to close then). */
int setup_open(const struct options *o, struct setup *s, char *err,
    size_t errlen);
void setup_close(struct setup *s);

/* Can path be written (its folder exists and lets us create a file;
 * path is not a folder)?  0, or -1 with err set. */
int setup_check_writable(const char *path, char *err, size_t errlen);

/* Three lines: the problem, the tiling, the update rule. */
void setup_describe(FILE *f, const struct sim *sim);

/* The first rows and columns of a (rows, cols) output on stdout. */
void setup_print_matrix(const char *name, const float *x, int rows, int cols);

/* Writes --output and --lse when given, each whole or not at all.
 * Returns 0 or -1 with err set. */
int setup_write_outputs(const struct options *o, const struct problem *p,
    const float *out, const float *lse, char *err, size_t errlen);

#endif
