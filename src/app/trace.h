/*
 * trace.h - every step of a run, as text, CSV or JSON Lines.
 *
 * The JSONL shape is an interface that scripts rely on:
 *   {"type":"problem", "tq", "tk", "d", "dv", "br", "bc", "order",
 *    "causal", "scale", "convention", "bug", "dtype", "steps", "window"
 *    ([left, right], -1 unbounded), "softcap" (0: none), "alibi" (a slope
 *    per query head, [] without ALiBi), "mask_bug", "dropout" (p, 0:
 *    none), "dropout_seed", "dropout_offset", "heads", "kv_heads",
 *    "pack_gqa", "splits", ...}
 *   {"type":"step", "step", "i", "j", "split", "rows":[r0,r1],
 *    "cols":[c0,c1], "m_old", "m_new", "alpha", "l_old", "l_new", ...}
 *    one per step
 *   {"type":"merge", "merge", "i", "op", ...}  one per merge of a split run
 *   {"type":"output", "o":[[..],..], "lse":[..]}
 * Ranges are half-open, arrays hold one entry per row of the tile, steps
 * count from 0.  Non-finite numbers are the strings "-inf", "inf", "nan";
 * finite ones print with 9 significant digits (enough for float32).
 * with_tiles adds "s" and "p"; with_acc adds "acc_old" and "acc_new" (the
 * numerator u, or o under the normalized convention: see "acc").
 *
 * The backward (trace --backward) writes instead, after the problem
 * line and the forward's output line:
 *   {"type":"backward", "steps", "first", "tr", "tc", "grad_bug",
 *    "grad_output"}
 *   {"type":"backward_step", "step", "timeline_step", "i", "j", "rows",
 *    "cols", "lse", "D", "dq_norm", "dk_norm", "dv_norm", "dq_final",
 *    "write", "hbm_read", "hbm_write", "flops"}  one per backward step
 *   {"type":"gradients", "dq", "dk", "dv"} (a scores problem: "ds", "dv")
 * "lse" and "D" hold one entry per row of the tile, the norms one per
 * row of dQ_i (rows) or of dK_j, dV_j (keys) after the step.  with_tiles
 * adds "s", "p", "dp", "ds"; with_acc adds "dq_old", "dq_new", "dk_old",
 * "dk_new", "dv_old", "dv_new".
 */
#ifndef FLASHSTEP_TRACE_H
#define FLASHSTEP_TRACE_H

#include <stdio.h>

#include "model/backward.h"
#include "model/combine.h"
#include "model/sim.h"

struct trace;

/* A format is a table of writers; merge may be NULL (CSV has only the
 * forward's steps). */
struct trace_format {
	const char *name;
	void (*begin)(struct trace *t);
	void (*step)(struct trace *t, const struct sim_view *v);
	void (*merge)(struct trace *t, const struct combine_view *v);
	void (*end)(struct trace *t, const float *o, const float *lse);
	/* trace --backward: the forward's O and lse, each backward step,
	 * and the gradients. */
	void (*backward_begin)(struct trace *t, const float *o, const float *lse);
	void (*backward_step)(struct trace *t, const struct backward_view *v);
	void (*backward_end)(struct trace *t, const struct backward_grads *g);
};

struct trace {
	FILE *f;
	const struct trace_format *format;
	const struct sim *sim;
	const struct combine *combine;	/* a split run's combine, or NULL */
	int with_tiles;		/* add S and P */
	int with_acc;		/* add the accumulator rows */
	const struct backward *bwd;	/* trace --backward */
	long bwd_first;		/* the timeline's number of its step 0 */
	const char *grad_output;	/* where dO came from, for display */
	const struct problem *batch;	/* a packed batch (--seqlens) whose
				 * sequence seq sim runs, or NULL: every
				 * record then carries seq, its rows and keys
				 * counted within the sequence */
	int seq;
};

/* The format called name ("text", "csv", "jsonl"), or NULL. */
const struct trace_format *trace_format_find(const char *name);

/* A sim_step_fn that writes one step to the struct trace in ctx. */
int trace_step(const struct sim_view *v, void *ctx);

/* A combine_step_fn that writes one merge to the struct trace in ctx. */
int trace_merge(const struct combine_view *v, void *ctx);

/* A backward_step_fn that writes one backward step. */
int trace_backward_step(const struct backward_view *v, void *ctx);

/* A float the way every format writes it: "%.9g", or inf, -inf, nan
 * (in double quotes when quoted is set, for JSON). */
void trace_number(FILE *f, float x, int quoted);

#endif
