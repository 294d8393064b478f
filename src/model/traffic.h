/*
 * traffic.h - bytes and arithmetic, counted per step and in total.
 *
 * What the tiled algorithm moves between HBM and on-chip memory, for the
 * loop order in use, against standard attention, which writes S and P to
 * HBM and reads them back (Algorithm 0 of the FlashAttention paper).
 *
 * Element sizes: Q, K, V, S and the final O in the problem's dtype (4 or
 * 2 bytes); m, l, lse and the running accumulator in float32.
 *
 *   fa2 step (i, j), R rows and C keys:
 *     read  Q_i (first tile of the row block only), K_j, V_j
 *     write O_i and lse_i after the row block's last tile
 *   fa1 step (j, i):
 *     read  K_j, V_j (first tile of the key block only), Q_i, and the
 *           row block's O, l, m unless this is its first tile
 *     write O_i, l_i, m_i (or, after the last tile, O_i and lse_i)
 *   scores problems read the S tile instead of Q_i and K_j.
 *
 * Split-KV (schedule.h): each key range is counted as its own run, as a
 * split kernel's block does: it reads Q_i at its first tile and, at its
 * last, writes a partial in float32 instead of O_i and lse_i: (m, l, u),
 * R (dv + 2) 4 bytes, or (o, lse), R (dv + 1) 4 bytes.  The combine reads
 * them all back (combine.h); that round trip is what splitting costs,
 * and traffic_parallel says what it buys.  With grouped heads each row
 * block reads the K_j and V_j of its own K/V head; packing a group's
 * query rows into one row block (--pack-gqa) reads them once for the
 * group instead of once per query head: kv_read counts them.
 *
 * FLOPs count 2 per multiply-add of Q K^T and P V over each visited tile
 * (masked entries inside a partly masked tile are computed too, as on a
 * GPU).  The exp count is one per entry of P; the rescale factors cost
 * one more exp per row per tile, counted apart.
 */
#ifndef FLASHSTEP_TRAFFIC_H
#define FLASHSTEP_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "problem.h"
#include "schedule.h"

struct traffic {
	uint64_t hbm_read;	/* bytes read from HBM */
	uint64_t hbm_write;	/* bytes written to HBM */
	uint64_t onchip;	/* bytes on chip during a step (a total: the peak) */
	uint64_t stored;	/* bytes of intermediates kept in HBM (peak) */
	uint64_t flops;		/* matmul FLOPs */
	uint64_t exps;		/* exp of a score: entries of P */
	uint64_t rescale_exps;	/* exp(m_old - m_new): one per row per tile */
	uint64_t kv_read;	/* bytes of K and V read (part of hbm_read) */
	uint64_t partials;	/* bytes of split partials written (part of hbm_write) */
};

struct traffic_table {
	const struct schedule *sched;
	int d, dv, esize, scores_mode;
	struct traffic *before;	/* per outer block: totals of earlier blocks */
	struct traffic total;
};

/* Counts every step once, so that traffic_upto costs one outer block at
 * most.  The schedule is borrowed.  Returns 0 or -1 (no memory). */
int traffic_init(struct traffic_table *t, const struct problem *p,
    const struct schedule *s, char *err, size_t errlen);
void traffic_free(struct traffic_table *t);

/* One step alone. */
void traffic_step(const struct traffic_table *t, const struct schedule_tile *tile,
    struct traffic *out);

/* Steps 0 .. k inclusive (k = -1: nothing yet). */
void traffic_upto(const struct traffic_table *t, long k, struct traffic *out);

/* Standard attention on the same problem (K and V read per query head,
 * as an unfused implementation that repeats them for each head does). */
void traffic_standard(const struct problem *p, struct traffic *out);

/* Bytes of one row's partial in float32: (m, l, u) or (o, lse). */
uint64_t traffic_partial_bytes(enum merge_form form, int dv);

/*
 * What splitting buys: the independent runs a GPU can spread over its
 * SMs (a run is one row block without splits, one (row block, range)
 * with them; each is one thread block of a split kernel), and a floor
 * on the time in tile steps if each SM does one tile per step: a run's
 * tiles follow one another, and no SM does more than its share.  The
 * SM count is the caller's assumption (132 on an H100 or H200 SXM).
 */
struct traffic_parallel {
	int sms;		/* SMs assumed */
	long runs;		/* runs with at least one tile */
	long waves;		/* ceil(runs / sms) */
	long longest;		/* tiles of the longest run */
	long span;		/* max(longest, ceil(steps / sms)) */
};
void traffic_parallel(const struct schedule *s, int sms,
    struct traffic_parallel *out);

#endif
