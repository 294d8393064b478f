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
 * A tile that the mask (causal, or a window: mask_rule.h) hides
 * completely is skipped: it gets no step; a tile with one visible entry
 * runs.  Under a bottom-right band the visible tiles of row block i are
 * j = jbegin(i) .. jend(i)-1 (jbegin = 0 without a left edge), and those
 * of key block j are i = ibegin(j) .. iend(j)-1 of each segment (iend is
 * the segment's last block + 1 without a left edge), so each outer
 * block's inner range is one interval.  Steps are numbered from 0 in loop order.
 *
 * Grouped heads (problem.h: H query heads share G K/V heads) lay the
 * rows of all heads one after another in segments, each tiled alone, so
 * that a row block never mixes K/V heads:
 *
 *   unpacked   one segment per query head: rows h Tq + pos
 *   packed     one segment per K/V head (--pack-gqa): the H/G query
 *              heads of the group interleaved, row (pos, hh) at
 *              pos H/G + hh, as FlashAttention packs them for decoding;
 *              a row block then reads K_j and V_j once for several heads
 *
 * Steps go segment after segment, in the loop order within each (FA1
 * runs its key loop per head).  With one head this is the plain layout.
 *
 * Split-KV (split_plan.splits = N > 1): the visible key blocks
 * [jbegin(i), jend(i))
 * of each row block are cut into N contiguous ranges of whole key blocks,
 * as even as can be (the first jend(i) mod N ranges one block longer).
 * When jend(i) < N the last N - jend(i) ranges are empty, and a row
 * block the mask hides entirely has N empty ranges.  Each range runs the
 * online update alone: its state starts empty at the range's first tile
 * and ends, at its last tile, in a partial state (merge.h).  Steps visit
 * the same tiles in the same order as without splits; only where state
 * starts and ends changes.
 */
#ifndef FLASHSTEP_SCHEDULE_H
#define FLASHSTEP_SCHEDULE_H

#include <stddef.h>

#include "merge.h"
#include "problem.h"

enum schedule_order {
	ORDER_FA2,
	ORDER_FA1,
};

struct tiling {
	int br, bc;
	enum schedule_order order;
};

/* What split-KV decoding adds to a tiling (all zero: nothing). */
struct split_plan {
	int splits;		/* key ranges per row block; 0 or 1: no split */
	enum merge_form partials;	/* the form the ranges end in */
	int pack_gqa;		/* pack a K/V group's query rows together */
};

/* One step's tile. */
struct schedule_tile {
	long step;
	int i, j;		/* tile coordinates (row block, key block) */
	int r0, r1;		/* rows [r0, r1) */
	int c0, c1;		/* keys [c0, c1) */
	int first_in_row;	/* j == jbegin: the row block's state starts here */
	int last_in_row;	/* the row block's last visible tile: finalize */
	int first_in_outer;	/* first step of its outer loop iteration */
	int split;		/* the key range of row block i holding j */
	int first_in_split;	/* the range's first tile: its state starts */
	int last_in_split;	/* the range's last tile: its partial ends */
	int kv_head;		/* the K/V head whose K_j, V_j it reads */
};

struct schedule {
	int tq, tk, br, bc, tr, tc;
	int causal;
	struct mask_rule mask;	/* the window that skips tiles (problem's) */
	enum schedule_order order;
	long nsteps;
	int nouter;
	int *jbegin, *jend;	/* per row block: visible key blocks are
				 * [jbegin, jend); both 0 when none */
	int *ibegin, *iend;	/* per key block: visible row blocks of each
				 * segment are [ibegin, iend), from its start */
	long *first;		/* per outer block: its first step; [nouter] = nsteps */

	/* Heads and splits (one segment and splits = 1 without them). */
	int heads, kv_heads, group;	/* H, G, H / G */
	int pack;		/* rows of a K/V group packed into one segment */
	int nseg, seglen;	/* segments and rows per segment */
	int tr_seg;		/* row blocks per segment: Tr = nseg tr_seg */
	int rows;		/* all rows: H Tq */
	int splits;		/* key ranges per row block (>= 1) */
	enum merge_form partials;
};

const char *schedule_order_name(enum schedule_order o);
int schedule_order_parse(const char *name, enum schedule_order *out);

/* Lays out the steps.  Br and Bc larger than the problem are valid (one
 * tile).  Returns 0, or -1 with err set (bad tile sizes, no memory). */
int schedule_init(struct schedule *s, const struct problem *p,
    const struct tiling *t, char *err, size_t errlen);

/* The same with split-KV ranges and head packing (sp NULL: none). */
int schedule_init_split(struct schedule *s, const struct problem *p,
    const struct tiling *t, const struct split_plan *sp, char *err,
    size_t errlen);
void schedule_free(struct schedule *s);

/* The tile of step k, 0 <= k < nsteps. */
void schedule_tile(const struct schedule *s, long k, struct schedule_tile *out);

/* The step that visits tile (i, j), or -1 when the mask skips it. */
long schedule_step_of(const struct schedule *s, int i, int j);

/* Is tile (i, j) skipped by the mask? */
int schedule_skipped(const struct schedule *s, int i, int j);

/* Rows [r0, r1) of row block i, in the schedule's row order. */
void schedule_rows(const struct schedule *s, int i, int *r0, int *r1);

/* Key blocks [j0, j1) of range `split` of row block i (j0 = j1: empty). */
void schedule_split_range(const struct schedule *s, int i, int split,
    int *j0, int *j1);

/* The range of row block i that holds key block j (jbegin(i) <= j <
 * jend(i)). */
int schedule_split_of(const struct schedule *s, int i, int j);

/*
 * Row `row` of the schedule's order: its query position (0 .. Tq-1, what
 * the causal mask sees), and its row of Q, O and lse laid out head after
 * head (h Tq + pos).  Without packing the two orders are the same.
 */
int schedule_row_pos(const struct schedule *s, int row);
int schedule_row_out(const struct schedule *s, int row);

/* The K/V head of row block i. */
int schedule_kv_head(const struct schedule *s, int i);

#endif
