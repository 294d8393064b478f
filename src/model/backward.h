/*
 * backward.h - FlashAttention 2's backward pass (its Algorithm 2), one
 * tile at a time.
 *
 * The forward keeps O (Tq, dv) and lse (Tq); the backward gets the
 * upstream gradient dO (Tq, dv), torch's grad_output, and gives
 * dQ (Tq, d), dK (Tk, d) and dV (Tk, dv).  Before the first step, once:
 *
 *   D = rowsum(dO o O)              one number per query row
 *
 * then key/value blocks outside and query blocks inside (schedule.h's
 * fa1 order; the tiling's order is ignored).  Step k visits tile (i, j)
 * in phases:
 *
 *   LOAD    Q_i, dO_i, lse_i, D_i (and K_j, V_j on the key block's first
 *           tile, where dK_j = dV_j = 0 on chip)
 *   SCORES  S = scale Q_i K_j^T, masked entries -inf      (recomputed)
 *   P       P = exp(S - lse_i)                            (recomputed)
 *   DV      dV_j += P^T dO_i
 *   DP      dP = dO_i V_j^T
 *   DS      dS = P o (dP - D_i)
 *   DQ      dQ_i += scale dS K_j      (read-modify-write of dQ_i in HBM)
 *   DK      dK_j += scale dS^T Q_i
 *   WRITE   dK_j, dV_j to HBM, once (only on the key block's last tile)
 *
 * Why D: dS = P o (dP - rowsum(P o dP)) is the softmax's backward, and
 * rowsum(P o dP) = rowsum(P o (dO V^T)) = rowsum(dO o (P V)) = rowsum(dO
 * o O): the row sum that would need all of a row's P is D, which needs
 * only O.  Why lse: P = exp(S - lse) is the normalized softmax in one
 * exp, with no row max or row sum to redo.
 *
 * Rows that see no key: flashstep's forward gives them lse = -inf, and
 * here P = 0 for such a row (as online_exp's rule while m = -inf), so
 * their dS, their dQ and their part of dK and dV are 0, never NaN.
 * (FlashAttention 2 stores lse = +inf for them instead, so that exp(S -
 * lse) = exp(-inf) = 0 without a test; doc/algorithm.md, section 11.)
 *
 * A scores problem (S given, d = 0) has no Q or K: its gradients are
 * dS itself, the gradient with respect to S, written to HBM at phase DS,
 * and dV; dQ and dK have width 0.
 *
 * Seeking.  A tile's S, P, dP and dS depend only on the inputs, never on
 * what earlier steps accumulated.  dK_j and dV_j after step (i, j)
 * depend only on key block j's earlier tiles; dQ_i after it only on row
 * block i's tiles (i, 0 .. j), which ran in earlier key blocks.  A seek
 * replays at most those two runs of tiles, from checkpoints of both kinds
 * kept every few tiles in a bounded amount of memory, through the same
 * functions backward_run uses, in the same order: seeking gives bit for
 * bit what stepping from the start gives.
 *
 * Numerics: float32 in a fixed order, every product of a tile summed
 * from 0 in order (S over x, dV over the tile's rows, dP over x, dQ over
 * the tile's keys, dK over the tile's rows) and then added to its
 * accumulator: acc + scale * sum.  With --dtype fp16|bf16, dO is
 * rounded like the inputs, O as the forward stores it (in D), P before
 * P^T dO and dS before dS K and dS^T Q, as a tensor-core kernel does; dS
 * itself uses the float32 P.
 */
#ifndef FLASHSTEP_BACKWARD_H
#define FLASHSTEP_BACKWARD_H

#include <stddef.h>
#include <stdint.h>

#include "problem.h"
#include "schedule.h"
#include "sim.h"
#include "traffic.h"

enum backward_phase {
	BWD_PHASE_LOAD,
	BWD_PHASE_SCORES,
	BWD_PHASE_P,
	BWD_PHASE_DV,
	BWD_PHASE_DP,
	BWD_PHASE_DS,
	BWD_PHASE_DQ,
	BWD_PHASE_DK,
	BWD_PHASE_WRITE,
};
#define BWD_PHASES 9
#define BWD_PHASE_LAST (-1)	/* for backward_seek: the step's last phase */

/* Mistakes people make in the backward, on purpose. */
enum backward_bug {
	BWD_BUG_NONE,
	BWD_BUG_NO_D,		/* dS = P o dP: D left out */
	BWD_BUG_MAX_NOT_LSE,	/* P = exp(S - m): the row max kept, not lse */
	BWD_BUG_NO_SCALE,	/* dQ, dK without the factor scale */
	BWD_BUG_DQ_OVERWRITE,	/* dQ_i = scale dS K_j: written, not added */
	BWD_BUG_DROPOUT_OFFSET,	/* dropout's keep bits regenerated with the
				 * counter's offset + 1: another mask than
				 * the forward's (nothing changes without
				 * dropout) */
};
#define BACKWARD_BUGS 6

/* What the backward takes from the forward, and the upstream gradient. */
struct backward_input {
	const float *o;		/* (Tq, dv) the forward's output */
	const float *lse;	/* (Tq) */
	const float *m;		/* (Tq) the final row max (max-not-lse reads it) */
	const float *dout;	/* (Tq, dv) dO, already rounded to the dtype */
};

/* The gradients, in arrays the caller owns (NULL: not wanted). */
struct backward_grads {
	float *dq;		/* (Tq, d) */
	float *dk;		/* (Tk, d) */
	float *dv;		/* (Tk, dv) */
	float *ds;		/* (Tq, Tk): the gradient of S (a scores
				 * problem's gradient; any problem's) */
};

struct backward_view {
	long step;
	enum backward_phase phase; /* phases 0 .. phase of this step are done */
	int nphases;		/* 8, or 9 when the step writes dK_j and dV_j */
	struct schedule_tile tile; /* key-outer: first_in_outer starts key
				 * block j, last_in_row ends dQ_i's sum */
	int last_in_key;	/* the key block's last tile: WRITE */
	int rows, cols, d, dv;	/* d = 0 in a scores problem */
	const float *s, *p;	/* (rows, cols): S, and P in float32 */
	const float *dp, *ds;	/* (rows, cols): dP, and dS in float32 */
	const unsigned char *keep; /* (rows, cols): dropout's keep bits as
				 * this backward drew them for dP (from
				 * phase dP on); NULL without dropout */
	const float *lse;	/* rows: what P subtracted (m under max-not-lse) */
	const float *dsum;	/* rows: D */
	const float *dq_old, *dq_new;	/* (rows, d) */
	const float *dk_old, *dk_new;	/* (cols, d) */
	const float *dv_old, *dv_new;	/* (cols, dv) */
	struct traffic traffic;	/* the D pass, steps 0 .. step-1, and step
				 * through phase (traffic_backward_at);
				 * step's on-chip bytes at phase */
};

struct backward;

/* Called by backward_run after each step; non-zero stops the run. */
typedef int (*backward_step_fn)(const struct backward_view *v, void *ctx);

const char *backward_bug_name(enum backward_bug b);
int backward_bug_parse(const char *name, enum backward_bug *out);
/* "load", "S", "P", "dV", "dP", "dS", "dQ", "dK", "write". */
const char *backward_phase_name(int phase);

struct combine;

/*
 * Runs the forward sim to its end and keeps what the backward needs: O
 * (Tq, dv), lse (Tq) and the final row max m (Tq; -inf for a row that
 * sees no key).  A split sim (--splits) leaves partials, not O: then
 * comb, a combine over that sim (combine.h), merges them into O and lse,
 * and m is the largest of each row's range maxima; comb is NULL without
 * splits.  Returns 0, or -1 when out of memory.
 */
int backward_forward(struct sim *sim, struct combine *comb, float *o,
    float *lse, float *m);

/* The same, calling fn (when not NULL) after each forward step and each
 * merge with the steps done of all of them (a view's progress): a
 * non-zero return stops the run, and backward_forward_progress returns
 * it.  Returns 0, -1 when out of memory, or fn's value. */
typedef int (*backward_progress_fn)(void *ctx, long done, long total);
int backward_forward_progress(struct sim *sim, struct combine *comb, float *o,
    float *lse, float *m, backward_progress_fn fn, void *ctx);

/*
 * A backward over problem p (borrowed: keep it alive and unchanged) with
 * Br, Bc from t.  The input arrays are copied (D is computed here).
 * Returns NULL with err set on bad tiles, max-not-lse without in->m, or
 * no memory.  The new backward stands at step 0, phase LOAD.
 */
struct backward *backward_new(const struct problem *p, const struct tiling *t,
    const struct backward_input *in, enum backward_bug bug, char *err,
    size_t errlen);
void backward_free(struct backward *b);

/* The memory a new backward's checkpoints may take at most. */
#define BACKWARD_CHECKPOINT_BUDGET ((uint64_t)64 << 20)

/*
 * Caps the memory this backward's checkpoints may take (tests lower it
 * to exercise sparse checkpoints) and drops those kept so far; the
 * position and the view stay.  Returns 0, or -1 with err set when out of
 * memory (the backward is then unchanged).
 */
int backward_set_checkpoint_budget(struct backward *b, uint64_t bytes,
    char *err, size_t errlen);
/*
 * Replays the first ntiles tiles of a key block (key set; its dK_j, dV_j)
 * or of a row block (dQ_i), keeping the checkpoints it passes, in buffers
 * of its own: the position, the view and what the next seek starts from
 * stay as they were (sim_block_state's promise), so a viewer can warm
 * checkpoints in idle time.  Returns 0, or -1 when blk or ntiles is out of
 * range.
 */
int backward_warm(struct backward *b, int key, int blk, int ntiles);

/* Checkpoints are kept every this many tiles: of a row block (dQ_i), of
 * a key block (dK_j, dV_j). */
int backward_checkpoint_every(const struct backward *b, int key);

long backward_steps(const struct backward *b);
const struct problem *backward_problem(const struct backward *b);
const struct schedule *backward_schedule(const struct backward *b);
const struct traffic_table *backward_traffic(const struct backward *b);
enum backward_bug backward_bug(const struct backward *b);
const float *backward_dsum(const struct backward *b);	/* D, (Tq) */
const struct backward_view *backward_view(const struct backward *b);

/*
 * After backward_run: 0 when every gradient in g (those not NULL) is
 * finite, or -1 with "the backward's dQ entry (r, c) is inf: ..." in
 * err.  float32 sums can overflow where the inputs passed the forward's
 * checks (K near FLT_MAX with Q tiny, whose products cancel): such a
 * gradient is refused, never written.
 */
int backward_check_grads(const struct backward *b,
    const struct backward_grads *g, char *err, size_t errlen);

/* The phases of step k: 9 on a key block's last tile, else 8. */
int backward_step_phases(const struct backward *b, long k);

/* Goes to step k and phase (or BWD_PHASE_LAST; WRITE asked of a step
 * without it means its last phase).  Returns 0, or -1 when k is out of
 * range (the position is then unchanged). */
int backward_seek(struct backward *b, long k, int phase);

/* One phase forwards (+1) or back (-1), across steps.  Returns 0, or -1
 * at either end (the position is then unchanged). */
int backward_move_phase(struct backward *b, int delta);

/*
 * Runs every step in order, calling fn (if not NULL) after each, and
 * writes the gradients asked for in g (may be NULL).  Rows and keys no
 * tile reaches get 0.  Returns 0, -1 when out of memory, or fn's
 * non-zero value.  Leaves the backward at the last step.
 */
int backward_run(struct backward *b, backward_step_fn fn, void *ctx,
    const struct backward_grads *g);

#endif
