/*
 * sim.h - the tiled replay engine: FlashAttention one step at a time.
 *
 * A sim runs a problem with a tiling (Br, Bc, loop order) and an update
 * rule (convention, bug).  Step k visits one tile (schedule.h) in phases:
 *
 *   LOAD      Q_i, K_j, V_j into on-chip memory
 *   SCORES    S = scale Q_i K_j^T, capped and biased by the score rules
 *             (mask_rule.h), hidden entries -inf
 *   MAX       m_new = max(m_old, rowmax S)
 *   RESCALE   alpha = exp(m_old - m_new)
 *   EXP       P = exp(S - m_new)
 *   UPDATE    l_new = alpha l_old + rowsum P;  acc_new per convention
 *   FINALIZE  O = u / l, lse = m + log l  (only on a row block's last tile;
 *             with split-KV, on each key range's last tile: the range's
 *             partial (o, lse))
 *
 * Positions and moves:
 *
 *        sim_seek(k, phase)             sim_move_phase(+1 / -1)
 *   any (k, phase) ----------> (k, phase) ---------------------> (k', phase')
 *
 * The view (sim_view) describes the current step: all its numbers are
 * computed on arrival, and `phase` says how far a reader should show
 * them.  A row block's state depends only on that block's earlier tiles,
 * in either loop order, so a seek replays at most the tiles of one row
 * block, starting from the nearest checkpoint (kept every few tiles, in
 * a bounded amount of memory) or from the previous seek's state.  Seeking
 * gives bit for bit the state that stepping from the start gives.
 *
 * Numerics: float32, in the teaching kernel's order: each score is a dot
 * product summed over d in order, then scaled; each P V entry is summed
 * over the tile's keys in order; the row sum uses P before it is rounded
 * to fp16/bf16 for P V, as tensor-core kernels do.
 */
#ifndef FLASHSTEP_SIM_H
#define FLASHSTEP_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "online.h"
#include "problem.h"
#include "schedule.h"
#include "traffic.h"

enum sim_phase {
	SIM_PHASE_LOAD,
	SIM_PHASE_SCORES,
	SIM_PHASE_MAX,
	SIM_PHASE_RESCALE,
	SIM_PHASE_EXP,
	SIM_PHASE_UPDATE,
	SIM_PHASE_FINALIZE,
};
#define SIM_PHASES 7
#define SIM_PHASE_LAST (-1)	/* for sim_seek: the step's last phase */

struct sim_view {
	long step;
	enum sim_phase phase;	/* phases 0 .. phase of this step are done */
	int nphases;		/* 6, or 7 when the step finalizes its rows */
	struct schedule_tile tile;
	int rows, cols, dv;	/* rows = r1 - r0, cols = c1 - c0 */
	const float *s;		/* (rows, cols), row stride cols */
	const float *p;		/* (rows, cols): exp(S - m_new), float32 */
	const float *rowmax;	/* max of each row of S */
	const float *rowsum;	/* sum of each row of P */
	const float *m_old, *m_new, *alpha, *l_old, *l_new;	/* rows */
	const float *acc_old, *acc_new;	/* (rows, dv): u, or o if normalized */
	const float *o, *lse;	/* (rows, dv) and rows, when finalized */
	struct traffic traffic;	/* done so far: steps before this one, and
				 * this one through its phase (traffic_at) */
};

/*
 * The partial states a split run leaves (split_plan.splits = N > 1), one per
 * row and key range: entry R N + s for row R of the schedule's order
 * (schedule_row_out gives its row of O) and range s.  Both forms are
 * kept; `form` says which one the forward was asked to write.  A range
 * no tile visits (the mask hides it, or jend < N) stays empty: m = -inf,
 * l = 0, u = o = 0, lse = -inf.
 */
struct sim_partials {
	int rows, splits, dv;
	enum merge_form form;
	float *m, *l, *lse;	/* (rows, N) */
	float *u, *o;		/* (rows, N, dv): u = sum p V, o = u / l */
};

struct sim;

/* Called by sim_run after each step; a non-zero return stops the run. */
typedef int (*sim_step_fn)(const struct sim_view *v, void *ctx);

/*
 * A sim over problem p, which it borrows (keep p alive and unchanged).
 * Returns NULL with err set on bad tiles, a rule that does not exist
 * (forget-old-denominator needs the normalized convention) or no memory.
 * The new sim stands at step 0, phase LOAD.
 */
struct sim *sim_new(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, char *err, size_t errlen);

/* The same with split-KV ranges and head packing (schedule.h; sp NULL:
 * none).  A problem with several heads runs them all, row blocks of
 * each head (or each packed group) after one another. */
struct sim *sim_new_split(const struct problem *p, const struct tiling *t,
    const struct split_plan *sp, const struct online_rule *rule, char *err,
    size_t errlen);
void sim_free(struct sim *sim);

/* The memory a new sim's checkpoints may take at most. */
#define SIM_CHECKPOINT_BUDGET ((uint64_t)64 << 20)

/*
 * Caps the memory this sim's checkpoints may take (tests lower it to
 * exercise sparse checkpoints) and drops those kept so far.  Returns 0,
 * or -1 with err set when out of memory (the sim is then unchanged).
 */
int sim_set_checkpoint_budget(struct sim *sim, uint64_t bytes, char *err,
    size_t errlen);

/* Checkpoints are kept every this many tiles of a row block. */
int sim_checkpoint_every(const struct sim *sim);

long sim_steps(const struct sim *sim);
const struct schedule *sim_schedule(const struct sim *sim);
const struct problem *sim_problem(const struct sim *sim);
const struct online_rule *sim_rule(const struct sim *sim);
const struct traffic_table *sim_traffic(const struct sim *sim);
const struct sim_view *sim_view(const struct sim *sim);

/* Goes to step k (0 <= k < steps) and phase (or SIM_PHASE_LAST; a
 * FINALIZE asked of a step that has none means its last phase).  Returns
 * 0, or -1 when k is out of range (the position is then unchanged). */
int sim_seek(struct sim *sim, long k, int phase);

/*
 * Row block i's running state after its tiles j < ntiles (0 .. jend[i];
 * up to jbegin[i] it is the empty state m = -inf, l = 0, acc = 0): m and l get
 * one value per row of the block, acc rows x dv (u, or o if normalized);
 * any of them may be NULL.  Replays from the nearest checkpoint, keeping
 * the checkpoints it passes, in buffers of its own, so the view
 * (position, numbers, counters) is untouched; the state is bit for bit
 * the m_new, l_new, acc_new that seeking to tile (i, ntiles - 1) shows.
 * Returns 0, or -1 when i or ntiles is out of range or out of memory.
 */
int sim_block_state(struct sim *sim, int i, int ntiles, float *m, float *l,
    float *acc);

/* One phase forwards (+1) or back (-1), across steps.  Returns 0, or -1
 * at either end (the position is then unchanged). */
int sim_move_phase(struct sim *sim, int delta);

/*
 * Runs every step in order, calling fn (if not NULL) after each, and
 * writes the output O (H Tq, dv) and lse (H Tq) when they are not NULL.
 * Rows that see no key get O = 0 and lse = -inf.  With splits > 1 the
 * outputs are the combine's (combine.h): sim_run then fills the partials
 * (sim_partials) and leaves o and lse untouched.  Returns 0, -1 when out
 * of memory, or fn's non-zero value.  Leaves the sim at the last step.
 */
int sim_run(struct sim *sim, sim_step_fn fn, void *ctx, float *o, float *lse);

/* The partials of the last sim_run (splits > 1; empty before a run). */
const struct sim_partials *sim_partials(const struct sim *sim);

/*
 * S = scale Q_i K_j^T for tile t of schedule sc over problem p (or the
 * given scores), masked entries -inf, into s: (rows, cols), row stride
 * cols, rows and keys as sc lays them out (schedule_row_out picks Q's
 * row, t->kv_head the K head).  Each entry sums q[x] k[x] over x = 0 ..
 * d-1 in order, then scales.  The forward's tiles and the backward's
 * (backward.c, which recomputes S) both come from here, so they agree
 * bit for bit.  Reads p and sc only; writes nothing but s.
 */
void sim_tile_scores(const struct problem *p, const struct schedule *sc,
    const struct schedule_tile *t, float *s);

/* The same, and in capped each score after the cap and before the ALiBi
 * bias (-inf where hidden): the cap's backward (mask_rule_dscore). */
void sim_tile_scores_capped(const struct problem *p, const struct schedule *sc,
    const struct schedule_tile *t, float *s, float *capped);

#endif
