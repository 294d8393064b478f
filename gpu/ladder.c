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
 * figures and the table's are the same measurement.  Plain C: the CUDA
 * calls are the kernels'.
 */
#include "config.h"

#include "gpu.h"
#include "model/util.h"

#include <stdio.h>
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
