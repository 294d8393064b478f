/*
 * schedule.h - which tile each step visits, for both loop orders.
 *
 * Tiles are Br query rows by Bc keys; Tr = ceil(Tq/Br), Tc = ceil(Tk/Bc),
 * and the last tile of each axis may be ragged.  Tile (i, j) covers rows
 * [i Br, min(Tq, (i+1) Br)) and keys [j Bc, min(Tk, (j+1) Bc)).
 *
 *   fa2: for i in 0..Tr: for j in 0..Tc   (a row block's state stays on chip)
 *   fa1: for j in 0..Tc: for i in 0..Tr   (O, l, m go back to HBM each tile)
 *
 * A tile that the causal mask hides completely is skipped: it gets no
 * step.  Under the bottom-right mask the visible tiles of row block i are
 * always j = 0 .. jend(i)-1, and those of key block j are i = ibegin(j) ..
 * Tr-1, so each outer block's inner range is one interval.  Steps are
 * numbered from 0 in loop order.
 */
#ifndef FLASHSTEP_SCHEDULE_H
#define FLASHSTEP_SCHEDULE_H

#include <stddef.h>

#include "problem.h"

enum schedule_order {
	ORDER_FA2,
	ORDER_FA1,
};

struct tiling {
	int br, bc;
	enum schedule_order order;
};

/* One step's tile. */
struct schedule_tile {
	long step;
	int i, j;		/* tile coordinates (row block, key block) */
	int r0, r1;		/* rows [r0, r1) */
	int c0, c1;		/* keys [c0, c1) */
	int first_in_row;	/* j == 0: the row block's state starts here */
	int last_in_row;	/* the row block's last visible tile: finalize */
	int first_in_outer;	/* first step of its outer loop iteration */
};

struct schedule {
	int tq, tk, br, bc, tr, tc;
	int causal;
	enum schedule_order order;
	long nsteps;
	int nouter;
	int *jend;		/* per row block: visible key blocks are [0, jend) */
	int *ibegin;		/* per key block: visible row blocks are [ibegin, Tr) */
	long *first;		/* per outer block: its first step; [nouter] = nsteps */
};

const char *schedule_order_name(enum schedule_order o);
int schedule_order_parse(const char *name, enum schedule_order *out);

/* Lays out the steps.  Br and Bc larger than the problem are valid (one
 * tile).  Returns 0, or -1 with err set (bad tile sizes, no memory). */
int schedule_init(struct schedule *s, const struct problem *p,
    const struct tiling *t, char *err, size_t errlen);
void schedule_free(struct schedule *s);

/* The tile of step k, 0 <= k < nsteps. */
void schedule_tile(const struct schedule *s, long k, struct schedule_tile *out);

/* The step that visits tile (i, j), or -1 when the mask skips it. */
long schedule_step_of(const struct schedule *s, int i, int j);

/* Is tile (i, j) skipped by the mask? */
int schedule_skipped(const struct schedule *s, int i, int j);

#endif
