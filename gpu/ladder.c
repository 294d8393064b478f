/*
 * ladder.c - the kernel ladder (gpu.h): one shape through the kernels in
 * the order they were written, each rung one idea the one below lacks,
 * so that "how fast is attention?" gets the answer "which kernel?":
 *
 *   naive     standard attention: S and P (T x T) out to HBM and back
 *   teaching  FlashAttention's tiles: S and P stay on chip
 *   fast      the same tiles on the tensor cores (mma.sync), FA2's split
 *   wgmma     Hopper's asynchronous tensor core and copy engine, FA3's
 *             producer and ping-ponging consumer warpgroups
 *
 * Each rung is timed as bench --gpu times a kernel (gpu_time), so its
 * figures and the table's are the same measurement.  The backward's
 * ladder (gpu_ladder_backward) times each rung's backward pass as bench
 * --gpu --backward does (gpu_backward_run on the rung's own forward),
 * with the fast rung twice: dQ atomic, then ordered (deterministic).
 * Plain C: the CUDA calls are the kernels'.
 */
#include "config.h"

#include "gpu.h"
#include "model/backward.h"
#include "model/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rungs, lowest first: a kernel of the table and its one idea. */
static const struct {
	const char *kernel;
	const char *change;
} ladder_rungs[GPU_LADDER_RUNGS] = {
	{ "naive", "standard attention: S and P (T x T, float32) written to "
	    "HBM and read back" },
	{ "teaching", "tiles in shared memory, S and P never reach HBM "
	    "(float32, one scalar thread per entry)" },
	{ "fast", "mma.sync: tensor cores, fp16/bf16 in, float32 sums, FA2's "
	    "warp split" },
	{ "wgmma", "wgmma: asynchronous warpgroup MMA, TMA, producer/consumer "
	    "warps taking turns" },
};

int
gpu_ladder(const struct problem *ps, int n, const struct tiling *any,
    int repeat, struct gpu_ladder_rung rungs[GPU_LADDER_RUNGS], char *err,
    size_t errlen)
{
	const struct problem *p = &ps[0];
	struct gpu_result first, cur;
	struct gpu_ladder_rung *r;
	double flops;
	int i, below = -1, have_first = 0;

	memset(rungs, 0, GPU_LADDER_RUNGS * sizeof *rungs);
	memset(&first, 0, sizeof first);
	if (gpu_available(NULL, 0, err, errlen) != GPU_READY)
		return -1;
	flops = 4.0 * n * (double)p->tq * p->tk * p->d / (p->causal ? 2.0 : 1.0);
	for (i = 0; i < GPU_LADDER_RUNGS; i++) {
		r = &rungs[i];
		r->kernel = gpu_kernel_find(ladder_rungs[i].kernel);
		r->change = ladder_rungs[i].change;
		r->below = below;
		r->tiling = *any;
		if (gpu_time(r->kernel, ps, n, &r->tiling, repeat, &cur, r->why,
		    sizeof r->why) != 0)
			continue;
		r->ran = 1;
		r->ms = cur.ms;
		r->tflops = cur.ms > 0 ? flops / (cur.ms * 1e-3) / 1e12 : 0;
		r->device_bytes = cur.device_bytes;
		if (below >= 0 && cur.ms > 0)
			r->speedup = rungs[below].ms / cur.ms;
		below = i;
		if (!have_first) {
			first = cur;
			have_first = 1;
			continue;
		}
		r->o_diff = gpu_result_diff(&cur, &first,
		    (size_t)n * p->tq * p->dv);
		gpu_result_free(&cur);
	}
	gpu_result_free(&first);
	return 0;
}

void
gpu_ladder_cells(const struct gpu_ladder_rung *r, char *tiles,
    size_t tiles_len, char *speed, size_t speed_len)
{
	if (r->kernel->caps & GPU_CAP_NO_TILES)
		snprintf(tiles, tiles_len, "-");
	else
		snprintf(tiles, tiles_len, "%dx%d", r->tiling.br, r->tiling.bc);
	if (r->below >= 0)
		snprintf(speed, speed_len, "%.2fx", r->speedup);
	else
		snprintf(speed, speed_len, "-");
}

/* The backward's rungs, lowest first: a kernel, its dQ mode, what it
 * changes. */
static const struct {
	const char *kernel, *name;
	enum gpu_dq_mode dq;
	const char *change;
} ladder_bwd_rungs[GPU_LADDER_BWD_RUNGS] = {
	{ "naive", "naive", GPU_DQ_ATOMIC, "standard attention's backward: "
	    "P, dP and dS (T x T, float32) written to HBM and read back, a "
	    "kernel per product" },
	{ "teaching", "teaching", GPU_DQ_ATOMIC, "FA2's backward in tiles: S "
	    "and P recomputed from lse, five products, float32 scalar threads, "
	    "dQ atomic" },
	{ "fast", "fast", GPU_DQ_ATOMIC, "mma.sync: five tensor-core products "
	    "a tile, dK and dV in registers for a key block, dQ atomic" },
	{ "fast", "fast ordered", GPU_DQ_ORDERED, "the same with dQ ordered: "
	    "each key block adds after the one before, the same bits every "
	    "run" },
};

const char *
gpu_ladder_backward_name(int rung)
{
	return ladder_bwd_rungs[rung].name;
}

/* max |a - b| / max |b| over count values (the largest difference where b
 * is all zero). */
static double
ladder_diff(const float *a, const float *b, size_t count)
{
	double diff = 0, top = 0;
	size_t i;

	for (i = 0; i < count; i++) {
		if (fabs((double)a[i] - b[i]) > diff ||
		    isnan((double)a[i] - b[i]))
			diff = isnan((double)a[i] - b[i]) ? NAN :
			    fabs((double)a[i] - b[i]);
		if (fabs(b[i]) > top)
			top = fabs(b[i]);
		if (isnan(diff))
			return diff;
	}
	return top > 0 ? diff / top : diff;
}

/* The largest of dQ's, dK's and dV's differences from ref's. */
static double
ladder_grads_diff(const struct gpu_grads *g, const struct gpu_grads *ref)
{
	const size_t nq = (size_t)g->n * g->tq * g->d;
	const size_t nk = (size_t)g->n * g->tk * g->d;
	const size_t nv = (size_t)g->n * g->tk * g->dv;
	double x, worst;

	worst = ladder_diff(g->grad_q, ref->grad_q, nq);
	x = ladder_diff(g->grad_k, ref->grad_k, nk);
	if (isnan(x) || x > worst)
		worst = x;
	x = ladder_diff(g->grad_v, ref->grad_v, nv);
	if (isnan(x) || x > worst)
		worst = x;
	return worst;
}

int
gpu_ladder_backward(const struct problem *ps, int n, const float *dout,
    const struct tiling *any, int repeat,
    struct gpu_ladder_rung rungs[GPU_LADDER_BWD_RUNGS], char *err,
    size_t errlen)
{
	const struct problem *p = &ps[0];
	struct gpu_grads first, cur;
	struct gpu_result fwd;
	struct gpu_bwd_inputs in;
	struct gpu_ladder_rung *r;
	double flops;
	int i, below = -1, have_first = 0, rep;

	memset(rungs, 0, GPU_LADDER_BWD_RUNGS * sizeof *rungs);
	memset(&first, 0, sizeof first);
	if (gpu_available(NULL, 0, err, errlen) != GPU_READY)
		return -1;
	/* Five products a tile against the forward's two, with dv = d: 2.5
	 * times 4 n Tq Tk d, halved for causal. */
	flops = 2.5 * 4.0 * n * (double)p->tq * p->tk * p->d /
	    (p->causal ? 2.0 : 1.0);
	for (i = 0; i < GPU_LADDER_BWD_RUNGS; i++) {
		r = &rungs[i];
		r->kernel = gpu_kernel_find(ladder_bwd_rungs[i].kernel);
		r->change = ladder_bwd_rungs[i].change;
		r->below = below;
		r->tiling = *any;
		if (r->kernel == NULL || r->kernel->backward == NULL) {
			snprintf(r->why, sizeof r->why, "no backward pass");
			continue;
		}
		rep = repeat;
		if (r->kernel->bench_repeat > 0 && rep > r->kernel->bench_repeat)
			rep = r->kernel->bench_repeat;
		if (gpu_backward_check(r->kernel, p, BWD_BUG_NONE, r->why,
		    sizeof r->why) != 0 || gpu_time(r->kernel, ps, n, &r->tiling,
		    rep, &fwd, r->why, sizeof r->why) != 0)
			continue;
		in.o = fwd.o;
		in.lse = fwd.lse;
		in.m = NULL;
		in.dout = dout;
		if (gpu_backward_run(r->kernel, ps, n, &r->tiling, &in,
		    BWD_BUG_NONE, ladder_bwd_rungs[i].dq, 0, rep, &cur, r->why,
		    sizeof r->why) != 0) {
			gpu_result_free(&fwd);
			continue;
		}
		gpu_result_free(&fwd);
		r->ran = 1;
		/* The backward's own tiles (the fast one's key blocks). */
		r->tiling.br = cur.br;
		r->tiling.bc = cur.bc;
		r->ms = cur.ms;
		r->tflops = cur.ms > 0 ? flops / (cur.ms * 1e-3) / 1e12 : 0;
		r->device_bytes = cur.device_bytes;
		if (below >= 0 && cur.ms > 0)
			r->speedup = rungs[below].ms / cur.ms;
		below = i;
		if (!have_first) {
			first = cur;
			have_first = 1;
			continue;
		}
		r->o_diff = ladder_grads_diff(&cur, &first);
		gpu_grads_free(&cur);
	}
	gpu_grads_free(&first);
	return 0;
}
