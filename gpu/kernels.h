/*
 * kernels.h - what gpu_run() (gpu.c) hands a kernel's launch() and
 * trace() (kernel.h): plain C types, host arrays in, host arrays out.
 * Each kernel's .cu file owns every CUDA call of its own (device memory
 * through cudacheck.h's counter, copies, launches, timing.h's timing)
 * and keeps its own parameters (tiles, variants) to itself.  Only the
 * front ends (gpu.c, gpubwd.c), the .cu files and check_gpu_decode (for
 * decode_host) include this.
 */
#ifndef FLASHSTEP_KERNELS_H
#define FLASHSTEP_KERNELS_H

#include "gpu.h"
#include "model/combine.h"
#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

/*
 * One run of n problems of one shape, already checked against the
 * kernel's entry.  Problem b's inputs are ps[b]'s arrays (q (Tq, d),
 * k (Tk, d), kt (d, Tk), v (Tk, dv), or s (Tq, Tk) in a scores problem);
 * ps[0] gives the shape.  tiling is the tiling asked for (for a kernel
 * with its own tilings, one of them); sched is the simulator's schedule
 * for it, so a tiled kernel visits the same tiles and a trace numbers
 * the same steps (its Br and Bc are cut to Tq and Tk: a kernel picking
 * its own variant reads tiling, not sched).
 *
 * launch() writes res->o, res->lse (allocated, n Tq dv and n Tq floats),
 * res->ms and res->device_bytes.  trace() writes res->m_new, alpha,
 * l_new (allocated when flags has GPU_TRACE, NaN-filled) and res->acc
 * (when GPU_TRACE_ACC), laid out by gpu_trace_at().  A kernel whose
 * timed code has no bug modes but whose trace build has one (the
 * tensor-core kernels' no-rescale) writes that run's O and lse over the
 * timed ones, in launch() when there is no trace to follow.
 */
struct gpu_job {
	const struct problem *ps;
	int n;
	const struct tiling *tiling;
	const struct schedule *sched;
	const struct online_rule *rule;
	unsigned flags;			/* GPU_TRACE, GPU_TRACE_ACC */
	int splits;			/* key ranges asked (gpu_run_ranges); 0: own */
	int repeat;			/* timed runs after the warm-up */
	struct gpu_result *res;
	/* A packed batch (ps[b].nseq > 0, GPU_CAP_VARLEN; the n problems
	 * share its cu_q, cu_k): sched is NULL, seqs[s] is sequence s's
	 * schedule (problem_seq) and step0[s] the number of its first step
	 * in the batch's, which runs on from one sequence to the next as
	 * the simulator's timeline does (varlen.h); res->nsteps is their
	 * sum, res->br the largest Br.  nseq 0: not packed. */
	int nseq;
	const struct schedule *seqs;
	const long *step0;
};

/*
 * The backward's run (gpu_backward_run, gpubwd.c), already checked
 * against the kernel's entry: n problems' inputs packed one after another
 * in host arrays (q, k (n, T, d), v (n, Tk, dv), or s (n, Tq, Tk) in a
 * scores problem, d = 0 then), the forward's results and dO, the tiles,
 * and where the results go.  launch() fills g's gradients and g->ms,
 * and with GPU_BWD_TRACE its trace arrays (all allocated by the front
 * end, the trace NaN-filled; trace_dq only when ordered); it checks that
 * its steps are g->nsteps.
 */
struct gpu_bwd_job {
	int n, tq, tk, d, dv;
	float scale;
	int causal, dtype, bug;
	struct mask_rule mask;		/* the window and the cap (mask_rule.h) */
	const float *slopes;		/* (n) each problem's ALiBi slope, or NULL */
	const float *q, *k, *v, *s;
	struct gpu_bwd_inputs in;
	int br, bc;			/* as asked (the kernel cuts them) */
	enum gpu_dq_mode dq;
	unsigned flags;			/* GPU_BWD_TRACE */
	int repeat;
	struct gpu_grads *g;
};

/*
 * The split-KV run (gpu_split_run, gpusplit.c), already checked against
 * the kernel's entry: one problem p of H query heads on G K/V heads
 * (Q (H Tq, d), K (G Tk, d), V (G Tk, dv), or S (H Tq, Tk) in a scores
 * problem), and the simulator's split schedule laid out in arrays, so
 * the kernel visits the same tiles with the same ranges and rows:
 *   block_rows  (Tr + 1): row block i holds rows [block_rows[i],
 *               block_rows[i + 1])  (schedule_rows)
 *   block_kv    (Tr): the K/V head of row block i  (schedule_kv_head)
 *   range       (Tr, N, 2): key blocks [j0, j1) of range s of row block
 *               i  (schedule_split_range)
 *   row_out     (rows): the row of Q, O and lse  (schedule_row_out)
 *   row_pos     (rows): the query position, for the mask
 *               (schedule_row_pos)
 * and the combine's plan (combine_plan: merges entries, writing slots
 * 0 .. slots-1).  launch() fills every array of res (allocated by the
 * front end, NaN-filled) and its times.
 */
struct gpu_split_job {
	const struct problem *p;
	const struct schedule *sched;
	const struct online_rule *rule;
	const int *block_rows, *block_kv, *range, *row_out, *row_pos;
	enum merge_form form;
	enum merge_bug merge_bug;
	const struct combine_merge *plan;
	int merges, slots;
	int repeat;
	struct gpu_split_result *res;
};

/* n floats with all bits set (NaN), malloc'd, so an entry nobody wrote
 * cannot pass for a value; NULL with err when out of memory. */
float *gpu_nan_floats(size_t n, char *err, size_t errlen);

/* Problems 1 .. n-1 have problem 0's shape, scale, mask, dtype and kind,
 * and 1 <= n <= 65535: 0, or -1 with err. */
int gpu_problems_alike(const struct problem *ps, int n, char *err,
    size_t errlen);

/*
 * The tests' way in to decode_attention_kv (decode.h), from host
 * arrays: q (B, H, Tq, d), k and v contiguous (B, G, Tk, d), or, with
 * table (B x max_pages), the pool (pages, page_size, G, d); float32,
 * rounded to dtype (decode.h's) on the device.  seqlens (B, or NULL)
 * are the cache lengths.  o (B, H, Tq, d) and lse (B, H, Tq) come back
 * in float32.  Built with CUDA only (decoderun.cu).  Returns 0, or -1
 * with err set.
 */
struct decode_result;
struct decode_host_call {
	int batch, heads, kv_heads, tq, tk, dtype, causal, splits;
	float scale;
	const float *q, *k, *v;
	const int *seqlens;
	const int *table;
	int page_size, max_pages, pages;
};
int decode_host(const struct decode_host_call *c, float *o, float *lse,
    struct decode_result *res, char *err, size_t errlen);

#endif
