/*
 * gpusplit.c - gpu_split_run(), the front end of every kernel's split-KV
 * run (gpu.h), as gpu.c is the forward's: checks the split sim's
 * problem, tiling, plan and rule and the combine's rule against the
 * kernel's entry, lays the simulator's split schedule and the combine's
 * plan out in arrays (so the kernel visits the same tiles with the same
 * ranges and rows, and merges in the same order), owns the result's host
 * arrays, and calls the run's launch.  Plain C, the same in a build
 * without CUDA (where gpu_available() stops it first).
 */
#include "config.h"

#include "gpu.h"
#include "kernels.h"
#include "model/combine.h"
#include "model/sim.h"
#include "model/util.h"

#include <stdlib.h>
#include <string.h>

void
gpu_split_result_free(struct gpu_split_result *res)
{
	free(res->m);
	free(res->l);
	free(res->lse);
	free(res->acc);
	free(res->o);
	free(res->merge_m);
	free(res->merge_l);
	free(res->out);
	free(res->out_lse);
	memset(res, 0, sizeof *res);
}

/* The schedule in the arrays the job names (kernels.h). */
struct gpusplit_layout {
	int *block_rows, *block_kv, *range, *row_out, *row_pos;
};

static void
gpusplit_layout_free(struct gpusplit_layout *l)
{
	free(l->block_rows);
	free(l->block_kv);
	free(l->range);
	free(l->row_out);
	free(l->row_pos);
}

static int
gpusplit_layout(const struct schedule *sc, struct gpusplit_layout *l,
    char *err, size_t errlen)
{
	const size_t tr = (size_t)sc->tr, n = (size_t)sc->splits;
	int i, s, r1, *at;

	memset(l, 0, sizeof *l);
	l->block_rows = util_calloc(tr + 1, sizeof(int), "split layout", err,
	    errlen);
	l->block_kv = util_calloc(tr, sizeof(int), "split layout", err, errlen);
	l->range = util_calloc(tr * n * 2, sizeof(int), "split layout", err,
	    errlen);
	l->row_out = util_calloc((size_t)sc->rows, sizeof(int),
	    "split layout", err, errlen);
	l->row_pos = util_calloc((size_t)sc->rows, sizeof(int),
	    "split layout", err, errlen);
	if (l->block_rows == NULL || l->block_kv == NULL || l->range == NULL ||
	    l->row_out == NULL || l->row_pos == NULL) {
		gpusplit_layout_free(l);
		return -1;
	}
	for (i = 0; i < sc->tr; i++) {
		schedule_rows(sc, i, &l->block_rows[i], &r1);
		l->block_rows[i + 1] = r1;
		l->block_kv[i] = schedule_kv_head(sc, i);
		for (s = 0; s < sc->splits; s++) {
			at = &l->range[((size_t)i * n + (size_t)s) * 2];
			schedule_split_range(sc, i, s, &at[0], &at[1]);
		}
	}
	for (i = 0; i < sc->rows; i++) {
		l->row_out[i] = schedule_row_out(sc, i);
		l->row_pos[i] = schedule_row_pos(sc, i);
	}
	return 0;
}

/* The result's arrays, NaN-filled: an entry the kernel never wrote
 * cannot pass for a value. */
static int
gpusplit_result(struct gpu_split_result *res, const struct schedule *sc,
    int dv, int merges, char *err, size_t errlen)
{
	const size_t rows = (size_t)sc->rows, np = rows * (size_t)sc->splits;

	res->rows = sc->rows;
	res->splits = sc->splits;
	res->dv = dv;
	res->merges = merges;
	if (np > (size_t)-1 / sizeof(float) / (size_t)(dv > 0 ? dv : 1))
		return util_error(err, errlen, "split partials: size overflows "
		    "memory");
	return (res->m = gpu_nan_floats(np, err, errlen)) == NULL ||
	    (res->l = gpu_nan_floats(np, err, errlen)) == NULL ||
	    (res->lse = gpu_nan_floats(np, err, errlen)) == NULL ||
	    (res->acc = gpu_nan_floats(np * dv, err, errlen)) == NULL ||
	    (res->o = gpu_nan_floats(np * dv, err, errlen)) == NULL ||
	    (res->merge_m = gpu_nan_floats(rows * merges, err, errlen)) == NULL ||
	    (res->merge_l = gpu_nan_floats(rows * merges, err, errlen)) == NULL ||
	    (res->out = gpu_nan_floats(rows * dv, err, errlen)) == NULL ||
	    (res->out_lse = gpu_nan_floats(rows, err, errlen)) == NULL ? -1 : 0;
}

int
gpu_split_run(const struct gpu_kernel *k, const struct sim *sim,
    const struct combine *comb, unsigned flags, int repeat,
    struct gpu_split_result *res, char *err, size_t errlen)
{
	const struct problem *p = sim_problem(sim);
	const struct schedule *sc = sim_schedule(sim);
	const struct tiling t = { sc->br, sc->bc, sc->order };
	const struct split_plan sp = { sc->splits, sc->partials, sc->pack };
	const struct combine_merge *plan = combine_plan(comb);
	struct gpusplit_layout lay;
	struct gpu_split_job job;
	int n, rc = -1;

	memset(res, 0, sizeof *res);
	if (flags != 0)
		return util_error(err, errlen, "gpu_split_run: flags 0x%x mean "
		    "nothing (none are defined)", flags);
	if (gpu_split_check(k, p, &t, sim_rule(sim), &sp, combine_rule(comb),
	    err, errlen) != 0)
		return -1;
	if (gpu_available(res->device, sizeof res->device, err, errlen) !=
	    GPU_READY || gpu_kernel_on_device(k, err, errlen) != 0)
		return -1;
	if (gpusplit_layout(sc, &lay, err, errlen) != 0)
		return -1;
	memset(&job, 0, sizeof job);
	job.p = p;
	job.sched = sc;
	job.rule = sim_rule(sim);
	job.block_rows = lay.block_rows;
	job.block_kv = lay.block_kv;
	job.range = lay.range;
	job.row_out = lay.row_out;
	job.row_pos = lay.row_pos;
	job.form = combine_form(comb);
	job.merge_bug = combine_rule(comb)->bug;
	job.plan = plan;
	job.merges = combine_merges(comb);
	for (n = 0; n < job.merges; n++)
		if (plan[n].dst + 1 > job.slots)
			job.slots = plan[n].dst + 1;
	job.repeat = repeat;
	job.res = res;
	if (gpusplit_result(res, sc, p->dv, job.merges, err, errlen) != 0 ||
	    k->split->launch(&job, err, errlen) != 0)
		goto out;
	rc = 0;
out:
	if (rc != 0)
		gpu_split_result_free(res);
	gpusplit_layout_free(&lay);
	return rc;
}
