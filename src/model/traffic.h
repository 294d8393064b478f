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
	int oesize;		/* bytes of an entry of O (dtype_out_size) */
	int backward;		/* counted by traffic_backward_step */
	struct traffic *before;	/* per outer block: totals of earlier blocks */
	struct traffic total;
	/* Where the last traffic_at stopped: steps of outer block
	 * cursor->outer before cursor->step, summed whole.  A step after it
	 * in the same block continues from there, so stepping forward costs
	 * one step each (not a walk from the block's start: cubic in the
	 * tiles with 1 x 1 tiles).  Mutable behind a const table: one
	 * table is not for two threads at once. */
	struct traffic_cursor {
		int outer;	/* -1: nothing cached */
		long step;
		struct traffic sum;
	} *cursor;
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

/*
 * The parts of a step, in the order it does them; the sim's phases map
 * onto them (sim.h).  A count "through" a stage holds that stage and
 * every one before it:
 *
 *   LOAD      read Q_i, K_j, V_j (fa1: and the row block's O, l, m);
 *             on chip: those and the running state
 *   SCORES    S = scale Q_i K_j^T: 2 R C d FLOPs; the S tile on chip
 *   RESCALE   alpha = exp(m_old - m_new): R exps
 *   EXP       P = exp(S - m_new): R C exps
 *   UPDATE    P V_j: 2 R C dv FLOPs; fa1 writes O, l, m back to HBM
 *   FINALIZE  write O_i and lse_i (a row block's last tile only)
 *
 * Through FINALIZE is the whole step: what traffic_step counts.
 */
enum traffic_stage {
	TRAFFIC_LOAD,
	TRAFFIC_SCORES,
	TRAFFIC_RESCALE,
	TRAFFIC_EXP,
	TRAFFIC_UPDATE,
	TRAFFIC_FINALIZE,
};

/* Steps 0 .. k-1 whole and step k through stage (0 <= k < steps): what
 * has been done when step k reaches that stage.  On-chip bytes are step
 * k's at that stage. */
void traffic_at(const struct traffic_table *t, long k, enum traffic_stage stage,
    struct traffic *out);

/* Standard attention on the same problem (K and V read per query head,
 * as an unfused implementation that repeats them for each head does). */
void traffic_standard(const struct problem *p, struct traffic *out);

/*
 * The backward pass (backward.h), over its key-outer schedule:
 *
 *   before step 0, the D pass: read O and dO, write D (float32)
 *   step (i, j), R rows and C keys:
 *     read  K_j, V_j (first tile of the key block only), Q_i, dO_i, lse_i,
 *           D_i, and the float32 dQ_i unless this is row block i's first
 *           tile (j = 0: it starts from 0)
 *     write dQ_i (float32), and dK_j, dV_j after the key block's last tile
 *   scores problems read the S tile instead of Q_i and K_j, write the dS
 *   tile (their gradient) instead of dQ_i, and have no dK_j.
 *
 * FLOPs: five products, 2 per multiply-add: S = Q_i K_j^T and dQ_i +=
 * dS K_j and dK_j += dS^T Q_i (d each), dV_j += P^T dO_i and dP = dO_i
 * V_j^T (dv each): 2 R C (3d + 2dv) per tile against the forward's
 * 2 R C (d + dv), so 2.5 times the forward's when dv = d (FlashAttention
 * 2, section 4.1: five matmuls against two).  exps: P is recomputed, one
 * per entry; no rescale factors.  Kept in HBM: lse and D (Tq each) and
 * the float32 dQ accumulator.
 */
int traffic_backward_init(struct traffic_table *t, const struct problem *p,
    const struct schedule *s, char *err, size_t errlen);
void traffic_backward_step(const struct traffic_table *t,
    const struct schedule_tile *tile, struct traffic *out);

/*
 * The parts of a backward step, in the order it does them: the
 * backward's phases (backward.h), one for one.  A count "through" a
 * stage holds that stage and every one before it:
 *
 *   LOAD    read K_j, V_j (a key block's first tile), Q_i, dO_i, lse_i,
 *           D_i (a scores problem: the S tile); on chip: those and the
 *           dK_j, dV_j accumulators
 *   SCORES  S = scale Q_i K_j^T: 2 R C d FLOPs; the S tile on chip
 *   P       P = exp(S - lse_i): R C exps
 *   DV      dV_j += P^T dO_i: 2 R C dv FLOPs
 *   DP      dP = dO_i V_j^T: 2 R C dv FLOPs; the dP tile on chip
 *   DS      dS = P o (dP - D_i) (a scores problem writes the dS tile)
 *   DQ      dQ_i += scale dS K_j: read dQ_i (not on row block i's first
 *           tile), 2 R C d FLOPs, write dQ_i: the read-modify-write
 *   DK      dK_j += scale dS^T Q_i: 2 R C d FLOPs
 *   WRITE   dK_j, dV_j to HBM (a key block's last tile only)
 *
 * Through WRITE is the whole step: what traffic_backward_step counts.
 */
enum traffic_bwd_stage {
	TRAFFIC_BWD_LOAD,
	TRAFFIC_BWD_SCORES,
	TRAFFIC_BWD_P,
	TRAFFIC_BWD_DV,
	TRAFFIC_BWD_DP,
	TRAFFIC_BWD_DS,
	TRAFFIC_BWD_DQ,
	TRAFFIC_BWD_DK,
	TRAFFIC_BWD_WRITE,
};
void traffic_backward_step_through(const struct traffic_table *t,
    const struct schedule_tile *tile, enum traffic_bwd_stage stage,
    struct traffic *out);

/* On the backward's table: the D pass, steps 0 .. k-1 whole and step k
 * through stage.  (traffic_at and traffic_upto count its step k whole.) */
void traffic_backward_at(const struct traffic_table *t, long k,
    enum traffic_bwd_stage stage, struct traffic *out);

/* The D pass alone. */
void traffic_backward_dpass(const struct problem *p, struct traffic *out);

/*
 * Standard attention's backward on the same problem, from the P its
 * forward stored (Algorithm 3 of the FlashAttention paper): dV = P^T dO
 * (read P, dO; write dV), dP = dO V^T (read dO, V; write dP), dS = P o
 * (dP - rowsum(P o dP)) (read P, dP; write dS), dQ = scale dS K (read
 * dS, K; write dQ), dK = scale dS^T Q (read dS, Q; write dK).  Four
 * products, no exp; P, dP and dS (Tq x Tk each) all in HBM at the peak.
 */
void traffic_standard_backward(const struct problem *p, struct traffic *out);

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
