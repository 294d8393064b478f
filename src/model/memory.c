/* memory.c - the sum of what a command allocates (see memory.h). */
#include "config.h"

#include "memory.h"
#include "ckstore.h"
#include "backward.h"
#include "heatmap.h"
#include "reference.h"
#include "sim.h"
#include "traffic.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/resource.h>
#include <string.h>

static uint64_t
memory_ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/*
 * The sums are kept in long double: sizes are products of up to four
 * numbers that each fit an int (H Tq x splits x dv), which can pass 2^64
 * and wrap a uint64_t into a small, acceptable-looking estimate.  A long
 * double holds every integer below 2^64 exactly (a 64-bit significand
 * at least), and beyond that only grows.
 */
typedef long double msize;

/* x as a uint64_t, UINT64_MAX when it does not fit. */
static uint64_t
memory_saturate(msize x)
{
	return x >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)x;
}

/* What malloc takes for n bytes: glibc's chunks carry 8 bytes of
 * header, are 16-byte aligned and 32 bytes at least.  It matters for
 * the checkpoints: a million slots of 24 bytes take 32 MB, not 24. */
static msize
memory_chunk(msize n)
{
	uint64_t c = ((memory_saturate(n) + 8 + 15) / 16) * 16;

	return n >= (msize)UINT64_MAX / 2 ? n : c < 32 ? 32 : c;
}

/* One checkpoint store (ckstore_layout, or sim_new's through it): the
 * slots it keeps at most, nblocks blocks of `tiles` tiles, states of
 * `floats` floats, within budget bytes. */
static msize
memory_slots(uint64_t nblocks, uint64_t tiles, msize floats, uint64_t budget)
{
	msize all = (msize)nblocks * tiles * floats * sizeof(float);
	int every = ckstore_every(memory_saturate(all),
	    tiles > INT_MAX ? INT_MAX : (int)tiles, budget);

	return floats == 0 ? 0 : (msize)nblocks * (tiles / (uint64_t)every);
}

/* n clamped to 1 .. max, as the schedule clamps a tile size. */
static uint64_t
memory_clamp(int n, uint64_t max)
{
	return n > 0 && (uint64_t)n < max ? (uint64_t)n : max;
}

/* A schedule and its traffic table, in bytes: jbegin and jend per row
 * block, ibegin and iend per key block (per head), first and a struct
 * traffic per outer block. */
static msize
memory_schedule(uint64_t tr, uint64_t tc_all, uint64_t outer)
{
	return (msize)(2 * tr + 2 * tc_all + outer + 1) * sizeof(int) +
	    (msize)(outer + 1) * sizeof(struct traffic) +
	    sizeof(struct traffic_cursor);
}

/* A tiled sim's own buffers (sim_new), in floats: S, P and rounded P of
 * a tile; P V, u before and after and O of a row block; eight per-row
 * vectors; the seek's state. */
static msize
memory_sim_floats(msize br, msize bc, msize dv)
{
	return 3 * br * bc + 4 * br * dv + 8 * br + br * (dv + 2);
}

uint64_t
memory_estimate(const struct memory_job *j)
{
	uint64_t H = (uint64_t)(j->heads > 0 ? j->heads : 1);
	uint64_t G = (uint64_t)(j->kv_heads > 0 ? j->kv_heads : 1);
	uint64_t tq = (uint64_t)(j->tq > 0 ? j->tq : 1);
	uint64_t tk = (uint64_t)(j->tk > 0 ? j->tk : 1);
	uint64_t brh, ubr, ubc, tr, tc, outer, btr, gy, gx;
	msize d = j->d > 0 ? j->d : 0, dv = j->dv > 0 ? j->dv : 0;
	msize rows = (msize)H * tq, keys = (msize)G * tk, splits, br, bc;
	msize slots, floats = 0, bytes = 0, doubles = 0, tile, wide, ds, twin;

	/* The inputs, as problem_build keeps them: K also transposed. */
	if (j->scores_mode)
		floats += rows * tk + keys * dv;
	else
		floats += rows * d + 2 * keys * d + keys * dv;
	/* A paged cache keeps a pool beside them: K^T and V in whole pages
	 * (a --block-table naming a larger pool allocates it after). */
	if (j->page_size > 0 && !j->scores_mode)
		floats += (msize)G * ((tk + (uint64_t)j->page_size - 1) /
		    (uint64_t)j->page_size) * (uint64_t)j->page_size * (d + dv);
	/* fp8 keeps the inputs as given beside the dequantized ones, Q and
	 * K rotated (counted whether or not --hadamard), a byte of code an
	 * entry, and a scale a row at most. */
	if (j->fp8 && !j->scores_mode) {
		floats += 2 * (rows * d + keys * d) + keys * dv + rows + 2 * keys;
		bytes += rows * d + keys * d + keys * dv;
	}

	/* A row block holds up to Br rows of one head (or, packed, of a
	 * group's heads): its tiles are at most Br x Bc, and there are at
	 * most H ceil(Tq / Br) row blocks and H Tc key blocks a loop. */
	ubr = memory_clamp(j->br, H * tq);
	brh = memory_clamp(j->br, tq);
	ubc = memory_clamp(j->bc, tk);
	br = ubr;
	bc = ubc;
	tr = H * memory_ceil_div(tq, brh);
	tc = memory_ceil_div(tk, ubc);
	outer = j->fa1 ? H * tc : tr;
	slots = memory_slots(tr, tc, br * (dv + 2), SIM_CHECKPOINT_BUDGET);
	splits = (j->parts & MEMORY_SPLIT) && j->splits > 1 ? j->splits : 1;
	/* The sim (and its checkpoints, and with splits its partials);
	 * twice when a bug-free twin runs beside it (the view). */
	twin = j->parts & MEMORY_CORRECT_SIM ? 2 : 1;
	if (j->parts & (MEMORY_SIM | MEMORY_CHECKPOINTS)) {
		floats += twin * memory_sim_floats(br, bc, dv);
		bytes += twin * (memory_schedule(tr, H * tc, outer) +
		    (slots + 1) * sizeof(float *));
	}
	if (j->parts & MEMORY_CHECKPOINTS)
		bytes += twin * slots * memory_chunk(br * (dv + 2) * 4);
	if (j->parts & MEMORY_RUN)
		/* the caller's O and lse; sim_run's m, l and accumulator (O
		 * itself, unless packed or split) */
		floats += 2 * rows * dv + 4 * rows;
	if (j->parts & MEMORY_REFERENCE)
		/* O and lse in double, and one row of S and P:
		 * reference_attention runs on the calling thread alone
		 * (counting a row per CPU overstated it by 3 MiB a CPU at
		 * Tk = 200000) */
		doubles += rows * dv + rows + 2 * (msize)(tk + 1);
	if (j->parts & MEMORY_NAIVE)
		floats += rows * tk + rows * dv + rows;
	if (j->parts & MEMORY_HEATMAP) {
		/* Two pooled maxima per cell, and heatmap.c's slice of
		 * 512 keys rounded up to whole cells. */
		gy = memory_ceil_div(H * tq, HEATMAP_MAX_CELLS);
		gx = memory_ceil_div(tk, HEATMAP_MAX_CELLS);
		floats += 2 * (msize)memory_ceil_div(H * tq, gy) *
		    memory_ceil_div(tk, gx) + memory_ceil_div(512, gx) * gx;
	}
	if (splits > 1) {
		/* sim.c's partials: m, l, lse, u and o for every (row, range);
		 * the combine's plan, slots (one, or a tree's splits - 1) and row
		 * block buffers, counted twice (the view's bug-free twin of
		 * a combine with a merge bug) as they are small */
		floats += twin * rows * splits * (3 + 2 * dv) +
		    2 * ((j->merge_tree ? splits - 1 : 1) * br * (dv + 2) +
		    9 * br + 3 * br * dv);
		bytes += 2 * (splits * 64 + 2 * splits * sizeof(int));
		if (j->parts & MEMORY_REFERENCE) {
			/* run's unsplit run beside: its sim, O and lse in
			 * float and double, two more tables to compare */
			floats += memory_sim_floats(br, bc, dv) + 2 * rows * dv +
			    3 * rows;
			doubles += rows * dv + rows;
			bytes += 3 * memory_schedule(tr, H * tc, outer) +
			    (slots + 1) * sizeof(float *);
		}
	}
	if (splits > 1 || (j->parts & MEMORY_BACKWARD))
		floats += rows * dv + 2 * rows;	/* the forward's O, lse, m */
	if (j->parts & MEMORY_BACKWARD) {
		/* backward.c over its key-outer schedule (one head), twice
		 * with a bug-free twin beside it */
		twin = j->parts & MEMORY_CORRECT_BWD ? 2 : 1;
		btr = memory_ceil_div(H * tq, brh);
		tile = (msize)brh * ubc;
		wide = (d > dv ? d : dv) * (brh > ubc ? brh : ubc);
		ds = j->scores_mode || (j->parts & MEMORY_GRAD_S) ? rows * tk : 0;
		bytes += twin * memory_schedule(btr, tc, tc);
		floats += rows * dv +		/* dO */
		    twin * (rows * (3 + dv) +	/* its lse, m, D and dO */
		    2 * (7 * tile + wide) +	/* two sets of tile buffers */
		    bc * (d + dv) + brh * d + 1 +	/* the side state */
		    2 * (brh * d + 1) + 2 * (bc * d + 1) + 2 * bc * dv +
		    (brh * d + 1) + bc * (d + dv));	/* old and new, work */
		/* the checkpoints of dQ_i and of (dK_j, dV_j), half the
		 * budget each, and their pointers */
		slots = memory_slots(btr, tc, brh * d,
		    BACKWARD_CHECKPOINT_BUDGET / 2 + 1);
		bytes += twin * (slots * memory_chunk(brh * d * 4) +
		    (slots + 1) * sizeof(float *));
		slots = memory_slots(tc, btr, bc * (d + dv),
		    BACKWARD_CHECKPOINT_BUDGET / 2 + 1);
		bytes += twin * (slots * memory_chunk(bc * (d + dv) * 4) +
		    (slots + 1) * sizeof(float *));
		/* the caller's gradients */
		floats += rows * d + 1 + keys * d + 1 + keys * dv + ds;
		if (j->parts & MEMORY_REFERENCE)
			/* run's double gradients, and gradref's rows */
			doubles += rows * d + 1 + keys * d + 1 + keys * dv + ds +
			    2 * tk + dv;
	}
	return memory_saturate(bytes + 4 * floats + 8 * doubles);
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

/* FLASHSTEP_MEMORY_LIMIT: a cap in bytes the user sets (a shared
 * machine; the tests, to read the estimate from the refusal); 0 when
 * unset or not a number. */
static uint64_t
memory_env_cap(void)
{
	const char *v = getenv("FLASHSTEP_MEMORY_LIMIT");
	unsigned long long x;
	char *end;

	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	x = strtoull(v, &end, 10);
	return errno == 0 && *end == '\0' && v[0] != '-' ? (uint64_t)x : 0;
}

uint64_t
memory_limit(void)
{
	uint64_t half = util_physical_memory() / 2, avail = memory_available();
	uint64_t cap = memory_process_cap(), env = memory_env_cap();

	if (half == 0)
		half = UINT64_MAX;
	if (avail != 0 && avail < half)
		half = avail;
	if (env != 0 && env < cap)
		cap = env;
	return cap < half ? cap : half;
}

int
memory_check(const struct memory_job *j, char *err, size_t errlen)
{
	uint64_t need = memory_estimate(j), limit = memory_limit();
	char b1[32], b2[32], b3[32], shape[160];

	if (need <= limit)
		return 0;
	if (j->scores_mode)
		snprintf(shape, sizeof shape, "scores Tq=%d Tk=%d dv=%d", j->tq,
		    j->tk, j->dv);
	else
		snprintf(shape, sizeof shape, "Tq=%d Tk=%d d=%d dv=%d", j->tq, j->tk,
		    j->d, j->dv);
	if (j->heads > 1 || j->kv_heads > 1)
		snprintf(shape + strlen(shape), sizeof shape - strlen(shape),
		    " (--heads %d, --kv-heads %d)", j->heads > 0 ? j->heads : 1,
		    j->kv_heads > 0 ? j->kv_heads : 1);
	if ((j->parts & MEMORY_SPLIT) && j->splits > 1)
		snprintf(shape + strlen(shape), sizeof shape - strlen(shape),
		    " with --splits %d", j->splits);
	if (j->parts & MEMORY_BACKWARD)
		snprintf(shape + strlen(shape), sizeof shape - strlen(shape),
		    " with --backward");
	return util_error(err, errlen, "problem too large: %s would need %s of "
	    "memory; the limit here is %s (half of this machine's %s, or what "
	    "is free now, or this process's limit or FLASHSTEP_MEMORY_LIMIT, if "
	    "less)", shape, util_bytes((double)need, b1, sizeof b1),
	    util_bytes((double)limit, b2, sizeof b2),
	    util_bytes((double)util_physical_memory(), b3, sizeof b3));
}
