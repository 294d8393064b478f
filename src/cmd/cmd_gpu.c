/*
 * cmd_gpu.c - `flashstep gpu`: the problem through a kernel of the table
 * (--kernel NAME, default teaching): the output, its error against the
 * double reference, the kernel time.  --backward runs the kernel's
 * backward pass after it, on the forward's O and lse: the gradients'
 * errors against the double reference and the backward's time.
 * --list-kernels prints the table and what each kernel takes.
 *
 * `--heads H --batch B` make B*H problems of one shape, problem b*H + h
 * drawing its inputs from seed + b*H + h, run in one launch.  A kernel
 * with its own tilings runs its default for d, or the one --br and --bc
 * name.  Without a GPU it says why and exits 3, 4 or 5 (cmd.h).
 */
#include "config.h"

#include "cmd.h"
#include "gpucmd.h"
#include "model/bwdsetup.h"
#include "model/compare.h"
#include "model/gradref.h"
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
	{ "dq", "MODE", "with --backward: how the kernel gets dQ, atomic "
	    "(default, FlashAttention 2's) or ordered (deterministic)",
	    gpucmd_set_dq },
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
    "naive: S and P in device memory; wgmma: Hopper's tensor cores, H100\n"
    "and H200 only); --list-kernels says what each takes.\n"
    "--backward runs the kernel's backward pass (the teaching kernel has\n"
    "one) on the forward's O and lse and dO (--grad-output, or drawn from\n"
    "the seed), and prints the gradients' errors against naive attention's\n"
    "gradients in double precision and the backward's kernel time;\n"
    "--grad-q, --grad-k, --grad-v, --grad-scores write them.\n"
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

/*
 * The forward's final row max of every problem, from its trace (the
 * m_new of each row's last step; -inf for a row that sees no key): what
 * --grad-bug max-not-lse subtracts.  *out is malloc'd.
 */
static int
gpu_row_max(const struct gpu_result *res, const struct problem *p,
    const struct tiling *t, float **out, char *err, size_t errlen)
{
	struct schedule s;
	float *m;
	long step;
	int b, r, i;

	if (schedule_init(&s, p, t, err, errlen) != 0)
		return -1;
	m = util_calloc((size_t)res->n * p->tq, sizeof *m, "row max", err,
	    errlen);
	if (m == NULL) {
		schedule_free(&s);
		return -1;
	}
	for (b = 0; b < res->n; b++)
		for (r = 0; r < p->tq; r++) {
			i = r / s.br;
			step = s.jend[i] > 0 ? schedule_step_of(&s, i,
			    s.jend[i] - 1) : -1;
			m[(size_t)b * p->tq + r] = step < 0 ? -INFINITY :
			    res->m_new[gpu_trace_at(res, b, step, r - i * s.br)];
		}
	schedule_free(&s);
	*out = m;
	return 0;
}

/* One gradient's worst error over the problems, against the double
 * reference. */
struct gpu_grad_error {
	const char *name;
	int rows, cols;
	double max_abs, max_rel;
};

static void
gpu_grad_error(struct gpu_grad_error *e, const float *got,
    const double *ref)
{
	struct compare_result c;

	compare_arrays(got, ref, (long)e->rows * e->cols, 0, 0, &c);
	e->max_abs = fmax(e->max_abs, c.max_abs);
	e->max_rel = fmax(e->max_rel, c.max_rel);
}

/*
 * --backward: the kernel's backward on the forward's results res, the
 * gradients against the double reference, the time, the files.  0, or
 * -1 with err.
 */
static int
gpu_backward(const struct options *o, const struct gpu_args *a,
    const struct problem *ps, int n, const struct gpu_result *res,
    char *err, size_t errlen)
{
	const struct problem *p = &ps[0];
	const size_t d = p->scores_mode ? 0 : (size_t)p->d;
	const size_t no = (size_t)p->tq * p->dv, nq = (size_t)p->tq * d;
	const size_t nk = (size_t)p->tk * d, nv = (size_t)p->tk * p->dv;
	const size_t ns = (size_t)p->tq * p->tk;
	const struct tiling bt = { o->tiling.br, o->tiling.bc, ORDER_FA1 };
	struct gpu_grad_error e[4] = {
		{ "dQ", p->tq, (int)d, 0, 0 }, { "dK", p->tk, (int)d, 0, 0 },
		{ "dV", p->tk, p->dv, 0, 0 }, { "dS", p->tq, p->tk, 0, 0 },
	};
	struct gpu_bwd_inputs in;
	struct backward_grads bg;
	struct gpu_grads g;
	struct schedule bs;
	double *ref[4] = { NULL, NULL, NULL, NULL };
	float *dout = NULL, *m = NULL;
	int b, x, rc = -1;

	memset(&g, 0, sizeof g);
	memset(&bs, 0, sizeof bs);
	if (gpucmd_grad_outputs(o, ps, n, &dout, err, errlen) != 0 ||
	    (o->grad_bug == BWD_BUG_MAX_NOT_LSE && gpu_row_max(res, p,
	    &o->tiling, &m, err, errlen) != 0) ||
	    schedule_init(&bs, p, &bt, err, errlen) != 0)
		goto out;
	in.o = res->o;
	in.lse = res->lse;
	in.m = m;
	in.dout = dout;
	if (gpu_backward_run(a->common.kernel, ps, n, &o->tiling, &in,
	    o->grad_bug, a->common.dq, 0, (int)a->common.repeat, &g, err,
	    errlen) != 0)
		goto out;
	ref[0] = util_calloc(nq + 1, sizeof(double), "reference", err, errlen);
	ref[1] = util_calloc(nk + 1, sizeof(double), "reference", err, errlen);
	ref[2] = util_calloc(nv, sizeof(double), "reference", err, errlen);
	ref[3] = util_calloc(ns, sizeof(double), "reference", err, errlen);
	if (ref[0] == NULL || ref[1] == NULL || ref[2] == NULL || ref[3] == NULL)
		goto out;
	for (b = 0; b < n; b++) {
		if (gradref_gradients(&ps[b], dout + b * no, ref[0], ref[1], ref[2],
		    ref[3], err, errlen) != 0)
			goto out;
		if (d > 0) {
			gpu_grad_error(&e[0], g.grad_q + b * nq, ref[0]);
			gpu_grad_error(&e[1], g.grad_k + b * nk, ref[1]);
		}
		gpu_grad_error(&e[2], g.grad_v + b * nv, ref[2]);
		if (g.grad_s != NULL)
			gpu_grad_error(&e[3], g.grad_s + b * ns, ref[3]);
	}

	printf("\nbackward: key blocks outside, query blocks inside: Tc=%d x "
	    "Tr=%d tiles, %ld steps; bug=%s; dQ %s; dO %s\n", bs.tc, bs.tr,
	    bs.nsteps, backward_bug_name(o->grad_bug),
	    gpu_dq_mode_name(a->common.dq), o->spec.dout.path != NULL ?
	    o->spec.dout.path : "N(0,1) from the seed");
	printf("the forward's O and lse above are its input%s\n",
	    m != NULL ? " (and the row max, from the forward's trace)" : "");
	printf("gradients against the double reference%s (max rel is relative "
	    "to the largest |gradient|):\n", n > 1 ? ", worst problem" : "");
	for (x = d > 0 ? 0 : 2; x < (g.grad_s != NULL ? 4 : 3); x++)
		printf("  %-3s (%d x %d)  max abs %.3g, max rel %.3g\n", e[x].name,
		    e[x].rows, e[x].cols, e[x].max_abs, e[x].max_rel);
	printf("backward kernel time: %.3f ms (%s kernel, dQ %s, median of %ld "
	    "runs after the first)\n", g.ms, a->common.kernel->name,
	    gpu_dq_mode_name(a->common.dq), a->common.repeat);
	bg.dq = g.grad_q;
	bg.dk = g.grad_k;
	bg.dv = g.grad_v;
	bg.ds = g.grad_s;
	rc = bwdsetup_write(o, p, &bg, err, errlen);
out:
	for (x = 0; x < 4; x++)
		free(ref[x]);
	gpu_grads_free(&g);
	schedule_free(&bs);
	free(dout);
	free(m);
	return rc;
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
	    OPT_PROBLEM | OPT_OUTFILES | OPT_BACKWARD, gpu_entries, &a, &o);
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
	if (gpucmd_setup(&o, &a.common, &ps, &n, err, sizeof err) != 0 ||
	    gpucmd_backward_args(&o, &a.common, ps, n, 1, err, sizeof err) != 0)
		goto fail;
	/* The simulator refuses what no kernel takes (tiles, rules), and
	 * describes the problem in the words every command uses. */
	sim = sim_new(&ps[0], &o.tiling, &o.rule, err, sizeof err);
	if (sim == NULL)
		goto fail;
	if (gpu_run(k, ps, n, &o.tiling, &o.rule, o.backward &&
	    o.grad_bug == BWD_BUG_MAX_NOT_LSE ? GPU_TRACE : 0,
	    (int)a.common.repeat, &res, err, sizeof err) != 0)
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
	if (o.backward && gpu_backward(&o, &a, ps, n, &res, err, sizeof err) != 0)
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
