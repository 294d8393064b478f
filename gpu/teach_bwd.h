/*
 * teach_bwd.h - the teaching backward kernel (gpu/teach_bwd.cu):
 * FlashAttention 2's backward pass in float32, on the simulator's
 * schedule (src/model/backward.h), with host arrays in and out.  A plain
 * C entry point, so the C host code and Python (ctypes) can both call it.
 *
 * Shapes, row-major, n problems of one shape one after another:
 *   Q (n, Tq, d)  K (n, Tk, d)  V (n, Tk, dv)  or S (n, Tq, Tk) with d = 0
 *   O, dO (n, Tq, dv)  lse, m (n, Tq)
 *   grad_q = dQ (n, Tq, d)   grad_k = dK (n, Tk, d)   grad_v = dV (n, Tk, dv)
 *   grad_s = dS (n, Tq, Tk), a scores problem's gradient   dsum = D (n, Tq)
 * The masks and score modifiers are mask_rule.h's (the causal mask, bottom
 * right, is the window (-1, 0): query r sees key c when c <= r + Tk - Tq;
 * a window, softcap and ALiBi's bias as the forward applies them, and the
 * cap's backward 1 - (s_capped / C)^2); a row that sees no key has lse =
 * -inf, gets P = 0 and gradients 0.
 *
 * dQ, two ways (teach_bwd_job.dq_mode):
 *   ATOMIC   FlashAttention 2's: each key block's thread block adds its
 *            tile's part into a float32 dQ in global memory with
 *            atomicAdd.  Key blocks run in parallel, so the order of the
 *            additions, and dQ's last bits, change from run to run; only
 *            the final dQ can be compared, within a tolerance.  (Under the
 *            bug dq-overwrite, whichever key block stores last wins.)
 *   ORDERED  deterministic: each tile's part goes to a slot of its own
 *            (n, Tc, Tq, d floats), and a second kernel sums the slots in
 *            the order of j, as the simulator adds them.  It gives dQ
 *            after every step (the trace) and the same bits every run.
 *
 * The trace (teach_bwd_job.trace_*, host arrays the caller allocates, or
 * NULL), laid out by the simulator's backward step numbers k (key blocks
 * outside: step = first[j] + i - ibegin[j], schedule.h's fa1 order):
 *   trace_dk  (n, nsteps, Bc, d)   dK_j after step k, rows of the tile's keys
 *   trace_dv  (n, nsteps, Bc, dv)  dV_j after step k
 *   trace_dq  (n, nsteps, Br, d)   dQ_i after step k (ORDERED only)
 * Entries no step writes (rows past a ragged tile's end, trace_dq under
 * ATOMIC) are NaN, so they cannot pass for values.
 *
 * How close to the simulator (derived in teach_bwd.cu): the kernel does
 * the simulator's operations in the simulator's order without fused
 * multiply-adds, so S, dP and D are the same bits and differences enter
 * only through expf in P: a gradient entry stays within
 * TEACH_BWD_RTOL (fp32; TEACH_BWD_RTOL_FP16, _BF16 when P and dS are
 * rounded to 16 bits) times the sum of its terms' magnitudes
 * (gradref_magnitudes), for ORDERED step by step and for ATOMIC at the
 * end.
 */
#ifndef FLASHSTEP_TEACH_BWD_H
#define FLASHSTEP_TEACH_BWD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "model/mask_rule.h"

#define TEACH_BWD_RTOL		1e-4
#define TEACH_BWD_RTOL_FP16	0x1p-10
#define TEACH_BWD_RTOL_BF16	0x1p-7

enum teach_bwd_dq {
	TEACH_BWD_DQ_ATOMIC = 0,
	TEACH_BWD_DQ_ORDERED = 1,
};

struct teach_bwd_job {
	/* the problems */
	int n, tq, tk, d, dv;		/* d = 0: scores problems */
	float scale;
	struct mask_rule mask;		/* the window and the cap (mask_rule.h;
					 * the causal mask is (-1, 0)) */
	const float *slopes;		/* (n) each problem's ALiBi slope, or NULL */
	int dtype;			/* enum dtype: 0 fp32, 1 fp16, 2 bf16 */
	int bug;			/* enum backward_bug (0: none) */
	const float *q, *k, *v, *s;	/* inputs; s only for scores problems */
	const float *o, *lse, *dout;	/* the forward's O and lse, and dO */
	const float *m;			/* the row max: bug max-not-lse only */

	/* how */
	int br, bc;			/* tiles, as the simulator's */
	int dq_mode;			/* enum teach_bwd_dq */
	int repeat;			/* timed runs after the first */

	/* results: host arrays (NULL: not wanted) */
	float *grad_q, *grad_k, *grad_v, *grad_s, *dsum;
	float *trace_dk, *trace_dv, *trace_dq;
	long nsteps;			/* set: the backward's steps */
	double ms;			/* set: median time of the timed runs */
};

/* The backward's steps for this shape and tiling (the trace's second
 * axis), or -1 for bad sizes. */
long teach_bwd_steps(int tq, int tk, int br, int bc, struct mask_rule m);

/* The step that visits tile (i, j) (row block i, key block j), or -1
 * when the mask skips it or it is out of range: where the trace holds
 * that tile. */
long teach_bwd_step(int tq, int tk, int br, int bc, struct mask_rule m, int i,
    int j);

/* Bytes of shared memory one block needs. */
size_t teach_bwd_smem_bytes(int br, int bc, int d, int dv);

/*
 * Runs the backward on the device (0 with the results in the job's
 * arrays), or -1 with one line in err: bad sizes, tiles too large for
 * shared memory, or a CUDA error (no device included).
 */
int teach_bwd(struct teach_bwd_job *job, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
