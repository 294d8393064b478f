/*
 * lesson_quantity.h - what expect, keep and {...} can read from the
 * simulator: one table, each entry a name, its kind, and how it is read
 * (a generic reader and the field it reads, or a reader of its own).
 *
 * Row quantities belong to the focus row at the current position (m, l,
 * alpha, u, o, lse, error and the fast kernel's base-2 numbers); tile
 * quantities to the focus row within the current tile (s, p, rowmax,
 * rowsum, s-raw, p-exp2); the rest to the run (step, tile, counters,
 * standard attention's counters).
 */
#ifndef FLASHSTEP_LESSON_QUANTITY_H
#define FLASHSTEP_LESSON_QUANTITY_H

#include <stddef.h>

#include "lesson_run.h"

enum lesson_qkind {
	LESSON_Q_REAL,		/* a float of the focus row (or several) */
	LESSON_Q_COUNT,		/* an integer counter: compared exactly */
	LESSON_Q_PHASE,		/* a phase name */
	LESSON_Q_TILE,		/* two integers: I J */
};

struct lesson_quantity {
	const char *name;
	enum lesson_qkind kind;
	int vector;		/* has dv or cols entries: name[i] works */
	int final;		/* `final NAME` works */
	const char *help;
	/* Reads the value(s) into out (up to max); 0, or -1 with err
	 * saying why there is none here (e.g. "alpha is known from phase
	 * rescale ..."). */
	int (*read)(struct lesson_run *run, const struct lesson_quantity *q,
	    int final, double *out, int max, int *n, char *err, size_t errlen);
	/* For the generic readers: the offsets of what they read (a sum
	 * of nfield fields), and the phase from which it is known (for a
	 * reader shared by two quantities, which of the two it is). */
	size_t field[2];
	int nfield;
	int from;
};

const struct lesson_quantity *lesson_quantity_find(const char *name);
/* The table, ending with a zeroed entry. */
const struct lesson_quantity *lesson_quantities(void);

/* The most entries a quantity of run's problem can have. */
int lesson_quantity_max(const struct lesson_run *run);

#endif
