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
};

struct traffic_table {
	const struct schedule *sched;
	int d, dv, esize, scores_mode;
	int backward;		/* counted by traffic_backward_step */
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

/* Standard attention on the same problem. */
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

#endif
