/*
 * lesson_quantity.h - what expect, keep and {...} can read from the
 * simulator: one table, each entry a name, its kind, and how it is read
 * in each segment of the run (the forward, the combine of a split run,
 * the backward): a generic reader and the field it reads, or a reader of
 * its own.  A quantity with no reader for the segment the run stands in
 * is not known there, and says where it is.
 *
 * Row quantities belong to the focus row at the current position (m, l,
 * alpha, u, o, lse, error, the fast kernel's base-2 numbers; in the
 * combine the merged state, in the backward the forward's final state);
 * tile quantities to the focus row within the current tile (s, p,
 * rowmax, rowsum; the backward's dP and dS); gradients to the focus row
 * (dQ) or the focus key (dK, dV); the rest to the run (step, tile,
 * counters, standard attention's counters, the partials' round trip,
 * the parallel runs).
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

struct lesson_quantity;
struct lesson_reader;

/* One read: what is asked, and where the value(s) go. */
struct lesson_read {
	struct lesson_run *run;
	const struct lesson_quantity *q;
	const struct lesson_reader *rd;	/* q's reader of this segment */
	int final;		/* after the whole run (`final NAME`) */
	double *out;		/* the values, up to max */
	int max, n;		/* n: how many the reader gave */
	char *err;
	size_t errlen;
};

/* Reads the value(s) into rq->out; 0, or -1 with rq->err saying why
 * there is none here (e.g. "alpha is known from phase rescale ..."). */
typedef int (*lesson_read_fn)(struct lesson_read *rq);

/* How a quantity is read in one segment.  For the generic readers: the
 * offsets of what they read (a sum of nfield fields), and the phase from
 * which it is known (for a reader shared by two quantities, which of the
 * two it is). */
struct lesson_reader {
	lesson_read_fn read;	/* NULL: not known in this segment */
	size_t field[2];
	int nfield;
	int from;
};

struct lesson_quantity {
	const char *name;
	enum lesson_qkind kind;
	int vector;		/* has several entries: name[i] works */
	int final;		/* `final NAME` works */
	const char *help;
	struct lesson_reader at[TIMELINE_KINDS];	/* by enum timeline_kind */
};

const struct lesson_quantity *lesson_quantity_find(const char *name);
/* The table, ending with a zeroed entry. */
const struct lesson_quantity *lesson_quantities(void);

/* Reads q where the run stands (or, final, after the whole run) with the
 * reader of that segment; 0, or -1 with err set. */
int lesson_quantity_read(struct lesson_run *run,
    const struct lesson_quantity *q, int final, double *out, int max,
    int *n, char *err, size_t errlen);

/* Is q a value of the focus row's state or of its tile's (m, l, u, o,
 * s, p, ...): what the algorithm's view shows, and a figure does not? */
int lesson_quantity_of_row(const struct lesson_quantity *q);

/* The most entries a quantity of run's problem can have. */
int lesson_quantity_max(const struct lesson_run *run);

/* The SM count the parallel runs assume: an H100 or H200 SXM. */
#define LESSON_SMS 132

#endif
