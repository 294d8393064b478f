/*
 * setup.h - what commands that run a problem do first and last: build
 * the problem and its sim from the options, describe them, and write the
 * output files.
 */
#ifndef FLASHSTEP_SETUP_H
#define FLASHSTEP_SETUP_H

#include <stdio.h>

#include "options.h"
#include "model/sim.h"

struct setup {
	struct problem problem;
	struct sim *sim;
};

/* Adds to spec's memory parts what o's options make a command hold
 * besides them: split-KV's partials and combine (--splits), the
 * backward (--backward), dS (--grad-scores). */
void setup_memory_spec(const struct options *o, struct problem_spec *spec);

/* Checks that --output and --lse can be written (and are not one file),
 * then builds: the problem is checked for memory with what the caller
 * set in o->spec.memory_parts and what o's options add to it
 * (setup_memory_spec).  Returns 0, or -1 with err set (nothing
 * to close then). */
int setup_open(const struct options *o, struct setup *s, char *err,
    size_t errlen);
void setup_close(struct setup *s);

/* Can every output file of o be written (--output, --lse and the
 * gradients), each to a file of its own?  Checked as the writer
 * (outfile.h) will take them; 0, or -1 with err set. */
int setup_check_outputs(const struct options *o, char *err, size_t errlen);

/* Three lines: the problem, the tiling, the update rule. */
void setup_describe(FILE *f, const struct sim *sim);

/* The first rows and columns of a (rows, cols) output on stdout. */
void setup_print_matrix(const char *name, const float *x, int rows, int cols);

/* Writes --output and --lse when given, as one set (outfile.h): both
 * are replaced or neither.  Returns 0 or -1 with err set. */
int setup_write_outputs(const struct options *o, const struct problem *p,
    const float *out, const float *lse, char *err, size_t errlen);

#endif
