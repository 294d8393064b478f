/* memory.c - the sum of what a command allocates (see memory.h). */
#include "config.h"

#include "memory.h"
#include "ckstore.h"
#include "heatmap.h"
#include "sim.h"
#include "traffic.h"
#include "util.h"

#include <stdio.h>
#include <sys/resource.h>
#include <string.h>

static uint64_t
memory_ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* The checkpoint slots of sim_new: a row block keeps one every `every`
 * tiles, so that all of them fit a new sim's budget (ckstore_layout). */
static uint64_t
memory_checkpoints(uint64_t tr, uint64_t tc, uint64_t br, uint64_t dv)
{
	uint64_t all = tr * tc * br * (dv + 2) * sizeof(float);
	int every = ckstore_every(all, (int)tc, SIM_CHECKPOINT_BUDGET);

	return tr * (tc / (uint64_t)every);
}

uint64_t
memory_estimate(const struct memory_job *j)
{
	uint64_t tq = (uint64_t)j->tq, tk = (uint64_t)j->tk, d = (uint64_t)j->d;
	uint64_t dv = (uint64_t)j->dv, br, bc, tr, tc, outer, slots, floats = 0;
	uint64_t bytes = 0, gy, gx, ny, nx;

	/* The inputs, as problem_build keeps them: K also transposed. */
	if (j->scores_mode)
		floats += tq * tk + tk * dv;
	else
		floats += tq * d + 2 * tk * d + tk * dv;

	br = j->br > 0 && (uint64_t)j->br < tq ? (uint64_t)j->br : tq;
	bc = j->bc > 0 && (uint64_t)j->bc < tk ? (uint64_t)j->bc : tk;
	tr = memory_ceil_div(tq, br);
	tc = memory_ceil_div(tk, bc);
	outer = j->fa1 ? tc : tr;
	slots = memory_checkpoints(tr, tc, br, dv);
	if (j->parts & (MEMORY_SIM | MEMORY_CHECKPOINTS)) {
		/* S, P and rounded P of a tile; P V, u before and after and
		 * O of a row block; eight per-row vectors; the seek's state. */
		floats += 3 * br * bc + 4 * br * dv + 8 * br + br * (dv + 2);
		bytes += (tr + tc + outer + 1) * sizeof(int) +
		    (outer + 1) * sizeof(struct traffic) +
		    (slots + 1) * sizeof(float *);
	}
	if (j->parts & MEMORY_CHECKPOINTS)
		floats += slots * br * (dv + 2);
	if (j->parts & MEMORY_RUN)
		floats += tq * dv + 3 * tq;
	if (j->parts & MEMORY_REFERENCE)
		bytes += sizeof(double) * (tq * dv + tq + 2 * tk);
	if (j->parts & MEMORY_NAIVE)
		floats += tq * tk + tq * dv + tq;
	if (j->parts & MEMORY_HEATMAP) {
		/* Two pooled maxima per cell, and heatmap.c's slice of
		 * 512 keys rounded up to whole cells. */
		gy = memory_ceil_div(tq, HEATMAP_MAX_CELLS);
		gx = memory_ceil_div(tk, HEATMAP_MAX_CELLS);
		ny = memory_ceil_div(tq, gy);
		nx = memory_ceil_div(tk, gx);
		floats += 2 * ny * nx + memory_ceil_div(512, gx) * gx;
	}
	return bytes + 4 * floats;
}

/* MemAvailable from /proc/meminfo, in bytes; 0 when unknown. */
static uint64_t
memory_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb;
	uint64_t bytes = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			bytes = (uint64_t)kb * 1024;
			break;
		}
	fclose(f);
	return bytes;
}

/* A number of bytes from the first line of a file ("max": none); 0
 * when unknown or unlimited. */
static uint64_t
memory_file_bytes(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return (uint64_t)v;
}

/* What this process may take besides the machine's memory: its address
 * space and data limits, and its container's (cgroup v2, then v1), the
 * smallest of those set; UINT64_MAX when none is. */
static uint64_t
memory_process_cap(void)
{
	static const char *const cgroup[] = {
		"/sys/fs/cgroup/memory.max",
		"/sys/fs/cgroup/memory/memory.limit_in_bytes",
	};
	static const int which[] = { RLIMIT_AS, RLIMIT_DATA };
	uint64_t cap = UINT64_MAX, v;
	struct rlimit rl;
	size_t i;

	for (i = 0; i < sizeof which / sizeof which[0]; i++)
		if (getrlimit(which[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    (uint64_t)rl.rlim_cur < cap)
			cap = (uint64_t)rl.rlim_cur;
	for (i = 0; i < sizeof cgroup / sizeof cgroup[0]; i++) {
		v = memory_file_bytes(cgroup[i]);
		/* v1 says "no limit" with a number near 2^63 */
		if (v != 0 && v < ((uint64_t)1 << 60) && v < cap)
			cap = v;
	}
	return cap;
}

uint64_t
memory_limit(void)
{
	uint64_t half = util_physical_memory() / 2, avail = memory_available();
	uint64_t cap = memory_process_cap();

	if (half == 0)
		half = UINT64_MAX;
	if (avail != 0 && avail < half)
		half = avail;
	return cap < half ? cap : half;
}

int
memory_check(const struct memory_job *j, char *err, size_t errlen)
{
	uint64_t need = memory_estimate(j), limit = memory_limit();
	char b1[32], b2[32], b3[32], shape[96];

	if (need <= limit)
		return 0;
	if (j->scores_mode)
		snprintf(shape, sizeof shape, "scores Tq=%d Tk=%d dv=%d", j->tq,
		    j->tk, j->dv);
	else
		snprintf(shape, sizeof shape, "Tq=%d Tk=%d d=%d dv=%d", j->tq, j->tk,
		    j->d, j->dv);
	return util_error(err, errlen, "problem too large: %s would need %s of "
	    "memory; the limit here is %s (half of this machine's %s, or what "
	    "is free now, or this process's limit, if less)", shape, util_bytes((double)need, b1, sizeof b1),
	    util_bytes((double)limit, b2, sizeof b2),
	    util_bytes((double)util_physical_memory(), b3, sizeof b3));
}
