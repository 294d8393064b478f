/*
 * cmd_gpu.c - `flashstep gpu`: the problem through a kernel of the table
 * (--kernel NAME, default teaching): the output, its error against the
 * double reference, the kernel time.  --list-kernels prints the table
 * and what each kernel takes.
 *
 * `--heads H --batch B` make B*H problems of one shape, problem b*H + h
 * drawing its inputs from seed + b*H + h, run in one launch.  A kernel
 * with its own tilings runs its default for d, or the one --br and --bc
 * name.  Without a GPU it says why and exits 3, 4 or 5 (cmd.h).
 */
#include "config.h"

#include "cmd.h"
#include "gpucmd.h"
#include "model/compare.h"
#include "model/reference.h"
#include "model/setup.h"
#include "model/sim.h"
#include "model/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gpu_args {
	struct gpucmd_args common;	/* first: the shared setters' ctx */
	int list;			/* --list-kernels */
};

static int
set_list(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct gpu_args *)ctx)->list, v, err,
	    errlen);
}

static const struct options_entry gpu_entries[] = {
	{ "kernel", "NAME", "the kernel to run (default teaching; see "
	    "--list-kernels)", gpucmd_set_kernel },
	{ "list-kernels", NULL, "print the kernels and what each takes",
	    set_list },
	{ "heads", "H", "H heads per batch entry (default 1)",
	    gpucmd_set_heads },
	{ "batch", "B", "B batch entries (default 1): B*H problems, "
	    "seeds seed .. seed+B*H-1", gpucmd_set_batch },
	{ "repeat", "N", "timed runs after a warm-up (default 3)",
	    gpucmd_set_repeat },
	{ NULL, NULL, NULL, NULL },
};

static const char gpu_usage[] =
    "usage: flashstep gpu [options]\n"
    "\n"
    "Runs the problem through a GPU kernel, by default the teaching kernel\n"
    "(float32, the simulator's tiles, loop order and update rule), and\n"
    "prints the output, its error against naive attention in double\n"
    "precision, and the kernel time.  --kernel names another (fast: the\n"
    "tensor-core kernel, --dtype fp16|bf16, --d 64|128, its own Br x Bc;\n"
    "naive: S and P in device memory); --list-kernels says what each takes.\n"
    "Exits 3 when built without CUDA, 4 without a usable CUDA driver, 5\n"
    "without a CUDA device.\n"
    "\n";

/* The table, and what each kernel takes. */
static void
gpu_list(void)
{
	char line[512];
	int i, what;

	for (i = 0; gpu_kernels[i] != NULL; i++) {
		printf("%s%-9s %s\n", i > 0 ? "\n" : "", gpu_kernels[i]->name,
		    gpu_kernels[i]->summary);
		for (what = 0; gpu_kernel_describe(gpu_kernels[i], what, line,
		    sizeof line) == 0; what++)
			printf("  %s\n", line);
	}
	if (!gpu_built())
		printf("\nThis build has no CUDA support: none of them runs "
		    "here.\n");
}

int
cmd_gpu(int argc, char **argv)
{
	struct gpu_args a;
	struct options o;
	struct problem *ps = NULL;
	struct sim *sim = NULL;
	struct gpu_result res;
	struct compare_result co, cl;
	const struct gpu_kernel *k;
	double *ref = NULL, *ref_lse = NULL, worst_rel = 0, worst_abs = 0,
	    worst_lse = 0;
	char err[512], dev[64], b1[32], how[64];
	int rc, n = 0, b;
	size_t no;

	memset(&res, 0, sizeof res);
	memset(&a, 0, sizeof a);
	gpucmd_args_init(&a.common, 3);
	rc = gpucmd_parse("gpu", gpu_usage, argc, argv,
	    OPT_PROBLEM | OPT_OUTFILES, gpu_entries, &a, &o);
	if (rc >= 0)
		goto done;
	if (a.list) {
		gpu_list();
		rc = CMD_OK;
		goto done;
	}
	k = a.common.kernel;
	rc = gpucmd_device("gpu", dev, sizeof dev);
	if (rc != CMD_OK)
		goto done;
	if (a.common.heads * a.common.batch > 1 &&
	    (o.output != NULL || o.lse != NULL)) {
		snprintf(err, sizeof err, "--output and --lse take one problem, "
		    "not %ld", a.common.heads * a.common.batch);
		goto fail;
	}
	if (gpucmd_setup(&o, &a.common, &ps, &n, err, sizeof err) != 0)
		goto fail;
	/* The simulator refuses what no kernel takes (tiles, rules), and
	 * describes the problem in the words every command uses. */
	sim = sim_new(&ps[0], &o.tiling, &o.rule, err, sizeof err);
	if (sim == NULL)
		goto fail;
	if (gpu_run(k, ps, n, &o.tiling, &o.rule, 0, (int)a.common.repeat,
	    &res, err, sizeof err) != 0)
		goto fail;

	no = (size_t)ps[0].tq * ps[0].dv;
	ref = util_calloc(no, sizeof *ref, "reference", err, sizeof err);
	ref_lse = util_calloc((size_t)ps[0].tq, sizeof *ref_lse, "reference", err,
	    sizeof err);
	if (ref == NULL || ref_lse == NULL)
		goto fail;
	for (b = 0; b < n; b++) {
		if (reference_attention(&ps[b], ref, ref_lse, err, sizeof err) != 0)
			goto fail;
		compare_arrays(res.o + b * no, ref, (long)no, 0, 0, &co);
		compare_arrays(res.lse + (size_t)b * ps[0].tq, ref_lse, ps[0].tq, 0,
		    0, &cl);
		worst_rel = fmax(worst_rel, co.max_rel);
		worst_abs = fmax(worst_abs, co.max_abs);
		worst_lse = fmax(worst_lse, cl.max_abs);
	}

	setup_describe(stdout, sim);
	gpucmd_print_heads(&o, &a.common, n);
	printf("device:   %s\n", res.device);
	setup_print_matrix(n > 1 ? "output O of problem 0" : "output O", res.o,
	    ps[0].tq, ps[0].dv);
	printf("error of O against the double reference%s: max abs %.3g, "
	    "max rel %.3g (relative to max |O|); lse max abs %.3g\n",
	    n > 1 ? " (worst problem)" : "", worst_abs, worst_rel, worst_lse);
	if (k->caps & GPU_CAP_NO_TILES)
		snprintf(how, sizeof how, "%s kernel", k->name);
	else
		snprintf(how, sizeof how, "%s kernel, %s", k->name,
		    schedule_order_name(o.tiling.order));
	printf("kernel time: %.3f ms (%s, median of %ld runs after a "
	    "warm-up); device memory %s\n", res.ms, how, a.common.repeat,
	    util_bytes(res.device_bytes, b1, sizeof b1));
	if (setup_write_outputs(&o, &ps[0], res.o, res.lse, err, sizeof err) != 0)
		goto fail;
	rc = CMD_OK;
	goto done;
fail:
	fprintf(stderr, "flashstep gpu: %s\n", err);
	rc = CMD_USAGE;
done:
	free(ref);
	free(ref_lse);
	gpu_result_free(&res);
	sim_free(sim);
	gpucmd_free_problems(ps, n);
	options_free(&o);
	return rc;
}
