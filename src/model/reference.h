/*
 * reference.h - attention computed the plain way: the ground truth.
 *
 * reference_attention works in double: for each query row it forms the
 * row of S = scale Q K^T, bent by the score rules (reference_score:
 * softcap, then ALiBi's bias), hidden entries -inf, its max, P = exp(S - max),
 * l = sum P, O = P V / l and lse = max + log l.  It never tiles and never
 * rescales, so it shares no code and no rounding with the simulator.
 *
 * reference_naive_f32 is standard attention in float32 as a library
 * would run it: the whole (Tq, Tk) score matrix is materialized, turned
 * into P in place, then multiplied by V.  The CPU benchmark runs it
 * against the tiled simulator.
 */
#ifndef FLASHSTEP_REFERENCE_H
#define FLASHSTEP_REFERENCE_H

#include <stddef.h>

#include "problem.h"

/*
 * The score rules of mask_rule.h in double, written apart from the
 * simulator's float32 ones (libm's tanh, not mask_rule_tanh): the score
 * the softmax sees of the scaled product x at visible (r, c) of a
 * one-head problem p, C tanh(x / C) - slope |r + Tk - Tq - c|; and the
 * derivative of that score in x, 1 - tanh^2(x / C) (1 without a cap).
 */
double reference_score(const struct problem *p, int r, int c, double x);
/* The same for query head h of a problem with several heads. */
double reference_score_head(const struct problem *p, int h, int r, int c,
    double x);
double reference_dscore(const struct problem *p, double x);
/* Dropout's factor Z of entry (r, c) of a one-head problem p (its head
 * is p->head0): 1 / (1 - p) where the generator keeps it, 0 where it
 * drops it, 1 without dropout (the keep bits are mask_rule_keep's: the
 * generator is the definition, shared; the arithmetic around it is
 * double). */
double reference_keep(const struct problem *p, int r, int c);

/* O (Tq, dv) and lse (Tq) in double, on the calling thread.  Rows that
 * see no key get O = 0 and lse = -inf.  Returns 0, or -1 when out of
 * memory (err set). */
int reference_attention(const struct problem *p, double *o, double *lse,
    char *err, size_t errlen);

/* The most threads reference_rows starts. */
#define REFERENCE_MAX_THREADS 64

/* The CPUs online, 1 to REFERENCE_MAX_THREADS: reference_rows' default. */
int reference_threads(void);

/*
 * Rows rows[0 .. nrows) of reference_attention's O and lse (rows NULL:
 * rows 0 .. nrows), row i into o + i dv and lse[i], shared among threads
 * threads (0: reference_threads()).  Each row is computed alone, the same
 * way on any thread, so the result is the same bits for any threads.
 * Returns 0, or -1 when out of memory (err set; o and lse then
 * untouched).
 */
int reference_rows(const struct problem *p, const int *rows, int nrows,
    int threads, double *o, double *lse, char *err, size_t errlen);

/* O (Tq, dv) in float32 through a materialized S; returns 0 or -1. */
int reference_naive_f32(const struct problem *p, float *o, char *err,
    size_t errlen);

#endif
