/* cmd_run_varlen.h - `flashstep run --seqlens`: a packed batch. */
#ifndef FLASHSTEP_CMD_RUN_VARLEN_H
#define FLASHSTEP_CMD_RUN_VARLEN_H

#include <stddef.h>

#include "app/options.h"

/*
 * Runs packed batch o->spec (--seqlens given) sequence by sequence
 * (varlen.h) and prints each sequence's error against the double
 * reference (with --backward: its gradients' too) and the counters
 * summed.  Returns 0, or -1 with one line in err.
 */
int run_varlen(const struct options *o, char *err, size_t errlen);

#endif
