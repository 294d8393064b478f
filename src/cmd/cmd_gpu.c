/*
 * cmd_gpu.c - `flashstep gpu`: the problem through a kernel of the table
 * (--kernel NAME, default teaching): the output, its error against the
 * double reference (--check: every row, or past a size a sample of each
 * head's rows, on the CPU's threads; gpucmd.h's rule), the kernel time.  --backward runs the kernel's
 * backward pass after it, on the forward's O and lse: the gradients'
 * errors against the double reference and the backward's time.
 * --list-kernels prints the table and what each kernel takes.
 *
 * --splits N runs the kernel's split-KV run (the teaching kernel's:
 * partials per key range, then the combine), each batch entry a launch
 * of its own.
 *
 * `--heads H [--kv-heads G] --batch B` make B batch entries of H query
 * heads on G K/V heads, entry b drawn from seed + b (gpucmd.h): run
 * whole by a kernel that takes grouped heads (decode) and by the split
 * runs, else one head a problem, all in one launch.  A kernel with its
 * own tilings runs its default for d, or the one --br and --bc name.
 * Without a GPU it says why and exits 3, 4 or 5 (cmd.h).
 */
#include "config.h"

#include "cmd.h"
#include "gpucmd.h"
#include "app/fulltimeline.h"
#include "model/combine.h"
#include "model/compare.h"
#include "model/gradref.h"
#include "model/reference.h"
#include "app/setup.h"
#include "model/sim.h"
#include "model/util.h"
#include "model/varlen.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	{ "batch", "B", "B batch entries (default 1), entry b drawn from "
	    "seed + b", gpucmd_set_batch },
	{ "repeat", "N", "timed runs after a warm-up (default 3)",
	    gpucmd_set_repeat },
	{ "dq", "MODE", "with --backward: how the kernel gets dQ, atomic "
	    "(default, FlashAttention 2's) or ordered (deterministic)",
	    gpucmd_set_dq },
	{ "check", "MODE", "O and lse against the double reference: full "
	    "(every row), sampled (32 evenly spaced rows of each head), none, "
	    "or auto (default: full up to 2^30 multiply-adds, B H Tq Tk "
	    "(d + dv), else sampled); --backward's gradients: all or none",
	    gpucmd_set_check },
	{ NULL, NULL, NULL, NULL },
};

static const char gpu_usage[] =
    "usage: flashstep gpu [options]\n"
    "\n"
    "Runs the problem through a GPU kernel, by default the teaching kernel\n"
    "(float32, the simulator's tiles, loop order and update rule), and\n"
    "prints the output, its error against naive attention in double\n"
    "precision, and the kernel time.  --kernel names another kernel of the\n"
    "table; --list-kernels prints each one and what it takes.\n"
    "The check against the double reference runs on the CPU's threads;\n"
    "past 2^30 multiply-adds (B H Tq Tk (d + dv)) it checks 32 evenly\n"
    "spaced rows of every head and says so (--check full: every row;\n"
    "--check none: no check), and past a second it says on stderr how far\n"
    "it has got.\n"
    "--heads H --kv-heads G make H query heads share G K/V heads;\n"
    "--batch B makes B such problems, entry b drawn from seed + b.\n"
    "--splits N runs the teaching kernel's split-KV run: each row block's\n"
    "keys in N ranges that run apart to partials (--partials mlu|olse),\n"
    "then a combine kernel that merges them (--merge-order, --merge-bug);\n"
    "--pack-gqa packs a group's query heads into one row block.\n"
    "--backward runs the kernel's backward pass (naive, teaching and fast\n"
    "have one) on the forward's O and lse and dO (--grad-output, or drawn\n"
    "from the seed), and prints the gradients' errors against naive attention's\n"
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

/*
 * --check: the heads of the problems against the double reference
 * (reference_rows, on every CPU), all their rows or the sampled ones,
 * with the worst errors so far and a progress line on stderr once the
 * check has taken more than a second.
 */
struct gpu_check {
	enum gpucmd_check mode;	/* full, sampled or none (auto resolved) */
	int rows[GPUCMD_CHECK_ROWS];	/* sampled: the rows of a head */
	int nrows;		/* rows checked a head; tq: all */
	int tq;			/* rows a head */
	int heads, done;	/* heads to check in all, checked so far */
	double start;		/* util_now() at its first head (0: before) */
	int shown, tty;		/* the progress line is out; stderr a terminal */
	double abs, rel, lse;	/* the worst errors */
	const char *what;	/* "O", "the gradients": for the progress line */
};

/* The check of the n problems ps (all of one shape). */
static void
gpu_check_init(struct gpu_check *c, enum gpucmd_check mode,
    const struct problem *ps, int n)
{
	int b;

	memset(c, 0, sizeof *c);
	c->mode = gpucmd_check_resolve(mode, ps, n);
	c->tq = ps[0].tq;
	c->nrows = c->mode == GPUCMD_CHECK_SAMPLED ?
	    gpucmd_check_rows(c->tq, c->rows) : c->tq;
	for (b = 0; b < n; b++)
		c->heads += ps[b].heads > 0 ? ps[b].heads : 1;
	c->tty = isatty(STDERR_FILENO);
	c->what = "O";
}

/* After a head: on a terminal a line that counts the heads, rewritten in
 * place; elsewhere one line when it starts to take long. */
static void
gpu_check_progress(struct gpu_check *c)
{
	const double t = util_now() - c->start;

	if (t < 1.0 || (c->shown && !c->tty))
		return;
	if (c->tty)
		fprintf(stderr, "\rflashstep gpu: checking %s against the double "
		    "reference (%s): head %d of %d, %.0f s", c->what,
		    gpucmd_check_name(c->mode), c->done, c->heads, t);
	else
		fprintf(stderr, "flashstep gpu: checking %s against the double "
		    "reference (%s, %d heads; --check none skips it)\n", c->what,
		    gpucmd_check_name(c->mode), c->heads);
	c->shown = 1;
}

/* The progress line's end (once; nothing when none was shown). */
static void
gpu_check_end(struct gpu_check *c)
{
	if (c->shown && c->tty)
		fprintf(stderr, "\rflashstep gpu: checked %s against the double "
		    "reference (%s): %d of %d heads in %.1f s\n", c->what,
		    gpucmd_check_name(c->mode), c->done, c->heads,
		    util_now() - c->start);
	c->shown = 0;
}

/* n values of O and nl of lse against the reference, into the worst
 * errors so far; one more of the c->heads done. */
static void
gpu_check_fold(struct gpu_check *c, const float *o, const double *ref,
    long n, const float *lse, const double *ref_lse, long nl)
{
	struct compare_result co, cl;

	compare_arrays(o, ref, n, 0, 0, &co);
	compare_arrays(lse, ref_lse, nl, 0, 0, &cl);
	c->rel = fmax(c->rel, co.max_rel);
	c->abs = fmax(c->abs, co.max_abs);
	c->lse = fmax(c->lse, cl.max_abs);
	c->done++;
	gpu_check_progress(c);
}

/* A packed batch's O and lse, every row of every head (each sequence
 * against its own reference at its offsets: varlen_reference). */
static int
gpu_check_packed(struct gpu_check *c, const struct problem *p,
    const float *o, const float *lse, char *err, size_t errlen)
{
	const long rows = problem_rows(p);
	double *ref, *ref_lse;
	int rc = -1;

	ref = util_calloc((size_t)rows * p->dv, sizeof *ref, "reference", err,
	    errlen);
	ref_lse = util_calloc((size_t)rows, sizeof *ref_lse, "reference", err,
	    errlen);
	if (ref == NULL || ref_lse == NULL ||
	    varlen_reference(p, ref, ref_lse, err, errlen) != 0)
		goto out;
	gpu_check_fold(c, o, ref, rows * p->dv, lse, ref_lse, rows);
	rc = 0;
out:
	free(ref);
	free(ref_lse);
	return rc;
}

/* Problem p's O (H Tq, dv) and lse (H Tq), head by head, the checked
 * rows against the reference.  0, or -1 with err. */
static int
gpu_check_add(struct gpu_check *c, const struct problem *p, const float *o,
    const float *lse, char *err, size_t errlen)
{
	const size_t no = (size_t)c->nrows * p->dv;
	const int *rows = c->nrows < p->tq ? c->rows : NULL;
	struct problem one;
	double *ref, *ref_lse;
	float *got = NULL, *got_lse = NULL;
	int h, i, rc = -1;

	if (c->mode == GPUCMD_CHECK_NONE)
		return 0;
	/* From the first head, not from init: the kernel's run between is
	 * not the check's time. */
	if (c->start == 0.0)
		c->start = util_now();
	if (p->nseq > 0)
		return gpu_check_packed(c, p, o, lse, err, errlen);
	ref = util_calloc(no + 1, sizeof *ref, "reference", err, errlen);
	ref_lse = util_calloc((size_t)c->nrows, sizeof *ref_lse, "reference",
	    err, errlen);
	if (rows != NULL) {
		got = util_calloc(no, sizeof *got, "checked rows", err, errlen);
		got_lse = util_calloc((size_t)c->nrows, sizeof *got_lse,
		    "checked rows", err, errlen);
	}
	if (ref == NULL || ref_lse == NULL || (rows != NULL && (got == NULL ||
	    got_lse == NULL)))
		goto out;
	for (h = 0; h < (p->heads > 0 ? p->heads : 1); h++) {
		const float *oh = o + h * (size_t)p->tq * p->dv;
		const float *lh = lse + (size_t)h * p->tq;

		problem_head(p, h, &one);
		if (reference_rows(&one, rows, c->nrows, 0, ref, ref_lse, err,
		    errlen) != 0)
			goto out;
		for (i = 0; rows != NULL && i < c->nrows; i++) {
			memcpy(got + (size_t)i * p->dv, oh + (size_t)rows[i] * p->dv,
			    (size_t)p->dv * sizeof *got);
			got_lse[i] = lh[rows[i]];
		}
		gpu_check_fold(c, rows != NULL ? got : oh, ref, (long)no,
		    rows != NULL ? got_lse : lh, ref_lse, c->nrows);
	}
	rc = 0;
out:
	free(ref);
	free(ref_lse);
	free(got);
	free(got_lse);
	return rc;
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
 * The gradients' check on threads: problem b on thread b mod threads,
 * each with its own reference arrays and worst errors, merged by max
 * after (so the result does not depend on the threads).  The progress
 * line is the mutex's.
 */
struct gpu_grad_share {
	const struct problem *ps;
	const struct gpu_grads *g;
	const float *dout;
	int n, first, step;
	struct gpu_grad_error e[4];
	double *ref[4];
	struct gpu_check *c;
	pthread_mutex_t *lock;
	pthread_t thread;
	int started, rc;
	char err[256];
};

static void *
gpu_grad_share_run(void *arg)
{
	struct gpu_grad_share *sh = arg;
	const struct problem *p = &sh->ps[0];
	const size_t d = p->scores_mode ? 0 : (size_t)p->d;
	const size_t no = (size_t)p->tq * p->dv, nq = (size_t)p->tq * d;
	const size_t nk = (size_t)p->tk * d, nv = (size_t)p->tk * p->dv;
	const size_t ns = (size_t)p->tq * p->tk;
	int b;

	for (b = sh->first; b < sh->n; b += sh->step) {
		if (gradref_gradients(&sh->ps[b], sh->dout + b * no, sh->ref[0],
		    sh->ref[1], sh->ref[2], sh->ref[3], sh->err,
		    sizeof sh->err) != 0) {
			sh->rc = -1;
			break;
		}
		if (d > 0) {
			gpu_grad_error(&sh->e[0], sh->g->grad_q + b * nq, sh->ref[0]);
			gpu_grad_error(&sh->e[1], sh->g->grad_k + b * nk, sh->ref[1]);
		}
		gpu_grad_error(&sh->e[2], sh->g->grad_v + b * nv, sh->ref[2]);
		if (sh->g->grad_s != NULL)
			gpu_grad_error(&sh->e[3], sh->g->grad_s + b * ns, sh->ref[3]);
		pthread_mutex_lock(sh->lock);
		sh->c->done += p->heads > 0 ? p->heads : 1;
		gpu_check_progress(sh->c);
		pthread_mutex_unlock(sh->lock);
	}
	return NULL;
}

/* The reference memory a thread may hold: past it, fewer threads. */
#define GPU_GRAD_THREAD_BYTES (2.0 * 1024 * 1024 * 1024)

/*
 * The n problems' gradients g against gradref's, into e (the worst over
 * the problems), on up to reference_threads() threads, fewer where their
 * arrays (and gradref's own S and P) would pass GPU_GRAD_THREAD_BYTES.
 * 0, or -1 with err.
 */
static int
gpu_grad_check(const struct problem *ps, int n, const float *dout,
    const struct gpu_grads *g, struct gpu_check *c,
    struct gpu_grad_error e[4], char *err, size_t errlen)
{
	const struct problem *p = &ps[0];
	const size_t d = p->scores_mode ? 0 : (size_t)p->d;
	const size_t sizes[4] = { (size_t)p->tq * d + 1, (size_t)p->tk * d + 1,
	    (size_t)p->tk * p->dv, (size_t)p->tq * p->tk };
	const double per = 8.0 * (sizes[0] + sizes[1] + sizes[2] +
	    3.0 * sizes[3]);
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct gpu_grad_share *sh;
	int threads = reference_threads(), t, x, rc = 0;

	if (threads > n)
		threads = n;
	if (threads > 1 && threads * per > GPU_GRAD_THREAD_BYTES)
		threads = per >= GPU_GRAD_THREAD_BYTES ? 1 :
		    (int)(GPU_GRAD_THREAD_BYTES / per);
	sh = util_calloc((size_t)threads, sizeof *sh, "gradient checks", err,
	    errlen);
	if (sh == NULL)
		return -1;
	for (t = 0; t < threads; t++) {
		sh[t].ps = ps;
		sh[t].g = g;
		sh[t].dout = dout;
		sh[t].n = n;
		sh[t].first = t;
		sh[t].step = threads;
		memcpy(sh[t].e, e, sizeof sh[t].e);
		sh[t].c = c;
		sh[t].lock = &lock;
		for (x = 0; x < 4; x++) {
			sh[t].ref[x] = util_calloc(sizes[x], sizeof(double),
			    "reference", err, errlen);
			if (sh[t].ref[x] == NULL)
				rc = -1;
		}
	}
	/* A thread that cannot be started has its share run here. */
	for (t = 1; rc == 0 && t < threads; t++)
		sh[t].started = pthread_create(&sh[t].thread, NULL,
		    gpu_grad_share_run, &sh[t]) == 0;
	if (rc == 0)
		gpu_grad_share_run(&sh[0]);
	for (t = 1; rc == 0 && t < threads; t++) {
		if (sh[t].started)
			pthread_join(sh[t].thread, NULL);
		else
			gpu_grad_share_run(&sh[t]);
	}
	for (t = 0; t < threads; t++) {
		if (rc == 0 && sh[t].rc != 0) {
			rc = util_error(err, errlen, "%s", sh[t].err);
		}
		for (x = 0; x < 4; x++) {
			e[x].max_abs = fmax(e[x].max_abs, sh[t].e[x].max_abs);
			e[x].max_rel = fmax(e[x].max_rel, sh[t].e[x].max_rel);
			free(sh[t].ref[x]);
		}
	}
	free(sh);
	pthread_mutex_destroy(&lock);
	return rc;
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
	struct tiling bt;
	struct gpu_grad_error e[4] = {
		{ "dQ", p->tq, (int)d, 0, 0 }, { "dK", p->tk, (int)d, 0, 0 },
		{ "dV", p->tk, p->dv, 0, 0 }, { "dS", p->tq, p->tk, 0, 0 },
	};
	struct gpu_bwd_inputs in;
	struct backward_grads bg;
	struct gpu_grads g;
	struct gpu_check c;
	struct schedule bs;
	float *dout = NULL, *m = NULL;
	char b1[32];
	int x, rc = -1;

	memset(&g, 0, sizeof g);
	memset(&bs, 0, sizeof bs);
	gpu_backward_tiling(a->common.kernel, &o->tiling, &bt);
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
	/* The gradients' reference has no sampled form: it checks every
	 * head, or none. */
	gpu_check_init(&c, a->common.check == GPUCMD_CHECK_NONE ?
	    GPUCMD_CHECK_NONE : GPUCMD_CHECK_FULL, ps, n);
	c.what = "the gradients";
	c.start = util_now();
	if (c.mode != GPUCMD_CHECK_NONE && gpu_grad_check(ps, n, dout, &g, &c,
	    e, err, errlen) != 0) {
		gpu_check_end(&c);
		goto out;
	}
	gpu_check_end(&c);

	if (a->common.kernel->backward->caps & GPU_CAP_NO_TILES)
		printf("\nbackward: no tiles: P, dP and dS (%d x %d) whole in "
		    "device memory, %s held; bug=%s; dQ one sum an entry; dO %s\n",
		    p->tq, p->tk, util_bytes(g.device_bytes, b1, sizeof b1),
		    backward_bug_name(o->grad_bug), o->spec.dout.path != NULL ?
		    o->spec.dout.path : "N(0,1) from the seed");
	else
		printf("\nbackward: key blocks outside, query blocks inside: "
		    "Tc=%d x Tr=%d tiles, %ld steps; bug=%s; dQ %s; dO %s\n",
		    bs.tc, bs.tr, bs.nsteps, backward_bug_name(o->grad_bug),
		    gpu_dq_mode_name(a->common.dq), o->spec.dout.path != NULL ?
		    o->spec.dout.path : "N(0,1) from the seed");
	printf("the forward's O and lse above are its input%s\n",
	    m != NULL ? " (and the row max, from the forward's trace)" : "");
	if (c.mode == GPUCMD_CHECK_NONE)
		printf("gradients against the double reference: not checked "
		    "(--check none)\n");
	else
		printf("gradients against the double reference%s (max rel is "
		    "relative to the largest |gradient|):\n", n > 1 ?
		    ", worst problem" : "");
	for (x = d > 0 ? 0 : 2; c.mode != GPUCMD_CHECK_NONE &&
	    x < (g.grad_s != NULL ? 4 : 3); x++)
		printf("  %-3s (%d x %d)  max abs %.3g, max rel %.3g\n", e[x].name,
		    e[x].rows, e[x].cols, e[x].max_abs, e[x].max_rel);
	printf("backward kernel time: %.3f ms (%s kernel, dQ %s, median of %ld "
	    "runs after the first)\n", g.ms, a->common.kernel->name,
	    a->common.kernel->backward->caps & GPU_CAP_NO_TILES ?
	    "one sum an entry" : gpu_dq_mode_name(a->common.dq),
	    a->common.repeat);
	bg.dq = g.grad_q;
	bg.dk = g.grad_k;
	bg.dv = g.grad_v;
	bg.ds = g.grad_s;
	rc = fulltimeline_write(o, p, &bg, err, errlen);
out:
	gpu_grads_free(&g);
	schedule_free(&bs);
	free(dout);
	free(m);
	return rc;
}

/* The error line: what was checked, and the worst errors. */
static void
gpu_check_print(const struct gpu_check *c, int heads)
{
	if (c->mode == GPUCMD_CHECK_NONE) {
		printf("error of O against the double reference: not checked "
		    "(--check none)\n");
		return;
	}
	if (c->mode == GPUCMD_CHECK_SAMPLED)
		printf("checked:  %d of %d rows in each of %d head%s (sampled, "
		    "evenly spaced from the first to the last; --check full "
		    "checks every row)\n", c->nrows, c->tq, c->heads,
		    c->heads == 1 ? "" : "s");
	printf("error of O against the double reference%s: max abs %.3g, "
	    "max rel %.3g (relative to max |O|%s); lse max abs %.3g\n",
	    heads ? " (worst head)" : "", c->abs, c->rel,
	    c->mode == GPUCMD_CHECK_SAMPLED ? " of those rows" : "", c->lse);
}

/*
 * --splits: every batch entry through the kernel's split-KV run, with a
 * sim and combine of its own (entry 0's is sim), O and lse against the
 * double reference into e.  Entry 0's result is left in first, for the
 * matrix, the time and the files.  0, or -1 with err.
 */
static int
gpu_split(const struct options *o, const struct gpu_args *a,
    const struct gpucmd_set *set, struct sim *sim, struct gpu_check *e,
    struct gpu_split_result *first, char *err, size_t errlen)
{
	struct gpu_split_result sr;
	struct combine *comb = NULL;
	struct sim *one;
	int b, rc = -1;

	memset(first, 0, sizeof *first);
	for (b = 0; b < set->batch; b++) {
		one = b == 0 ? sim : sim_new_split(&set->entries[b], &o->tiling,
		    &o->split, &o->rule, err, errlen);
		if (one == NULL)
			return -1;
		comb = combine_new(one, &o->combine, err, errlen);
		rc = comb == NULL || gpu_split_run(a->common.kernel, one, comb, 0,
		    (int)a->common.repeat, &sr, err, errlen) != 0 ? -1 : 0;
		combine_free(comb);
		if (one != sim)
			sim_free(one);
		if (rc != 0)
			return -1;
		rc = gpu_check_add(e, &set->entries[b], sr.out, sr.out_lse, err,
		    errlen);
		if (b == 0 && rc == 0)
			*first = sr;
		else
			gpu_split_result_free(&sr);
		if (rc != 0)
			return -1;
	}
	return 0;
}

int
cmd_gpu(int argc, char **argv)
{
	struct gpu_args a;
	struct options o;
	struct gpucmd_set set;
	struct sim *sim = NULL;
	struct gpucmd_packed pk;
	struct gpu_result res;
	struct gpu_split_result sr;
	struct gpu_check e;
	const struct gpu_kernel *k;
	const struct problem *p;
	const float *out, *out_lse;
	char err[512], dev[64], b1[32], how[160];
	int rc, b, split;

	memset(&res, 0, sizeof res);
	memset(&pk, 0, sizeof pk);
	memset(&sr, 0, sizeof sr);
	memset(&set, 0, sizeof set);
	memset(&a, 0, sizeof a);
	memset(&e, 0, sizeof e);
	gpucmd_args_init(&a.common, 3);
	rc = cmd_parse("gpu", gpu_usage, argc, argv, OPT_PROBLEM |
	    OPT_OUTFILES | OPT_BACKWARD | OPT_SPLIT, gpu_entries, &a, &o);
	if (rc >= 0)
		goto done;
	if (a.list) {
		gpu_list();
		rc = CMD_OK;
		goto done;
	}
	k = a.common.kernel;
	split = o.split.splits > 1;
	if (a.common.batch > 1 && (o.output != NULL || o.lse != NULL)) {
		snprintf(err, sizeof err, "--output and --lse take one problem, "
		    "not a batch of %ld", a.common.batch);
		goto fail;
	}
	/* The inputs and the outputs first, the device after them: a bad
	 * command line is a usage error (2) on any machine. */
	if (gpucmd_setup(&o, &a.common, &set, err, sizeof err) != 0 ||
	    gpucmd_backward_args(&o, &a.common, set.ps, set.n, 1, err,
	    sizeof err) != 0 || setup_check_outputs(&o, err, sizeof err) != 0)
		goto fail;
	/* The simulator refuses what no kernel takes (tiles, rules, splits),
	 * and describes the problem in the words every command uses (a
	 * packed batch: each sequence's; the backward refused it above). */
	if (gpucmd_sims_new(&o, &set.entries[0], &pk, &sim, err,
	    sizeof err) != 0)
		goto fail;
	rc = gpucmd_device("gpu", dev, sizeof dev);
	if (rc != CMD_OK)
		goto done;
	gpu_check_init(&e, a.common.check, set.ps, set.n);
	if (split) {
		if (gpu_split(&o, &a, &set, sim, &e, &sr, err, sizeof err) != 0)
			goto fail;
		out = sr.out;
		out_lse = sr.out_lse;
	} else {
		if (gpu_run(k, set.ps, set.n, &o.tiling, &o.rule, o.backward &&
		    o.grad_bug == BWD_BUG_MAX_NOT_LSE ? GPU_TRACE : 0,
		    (int)a.common.repeat, &res, err, sizeof err) != 0)
			goto fail;
		for (b = 0; b < set.n; b++)
			if (gpu_check_add(&e, &set.ps[b], res.o + (size_t)b *
			    res.tq * res.dv, res.lse + (size_t)b * res.tq, err,
			    sizeof err) != 0)
				goto fail;
		out = res.o;
		out_lse = res.lse;
	}

	gpu_check_end(&e);
	p = &set.entries[0];
	if (pk.nseq > 0)
		gpucmd_packed_describe(stdout, &pk);
	else
		setup_describe(stdout, sim);
	if (split)
		printf("combine:  merged %s, %d merges a row block%s%s\n",
		    combine_order_name(o.combine.order), sr.merges,
		    o.combine.bug != MERGE_BUG_NONE ? ", merge bug " : "",
		    o.combine.bug != MERGE_BUG_NONE ?
		    combine_bug_name(o.combine.bug) : "");
	gpucmd_print_set(&o, &set);
	printf("device:   %s\n", split ? sr.device : res.device);
	setup_print_matrix(set.batch > 1 ? "output O of batch entry 0" :
	    "output O", out, problem_rows(p), p->dv);
	gpu_check_print(&e, set.n > 1 || p->heads > 1);
	if (split) {
		snprintf(how, sizeof how, "%s kernel's split-KV run%s", k->name,
		    set.batch > 1 ? ", batch entry 0" : "");
		printf("kernel time: %.3f ms: ranges %.3f ms + combine %.3f ms (%s, "
		    "medians of %ld runs after a warm-up); device memory %s\n",
		    sr.ms_ranges + sr.ms_combine, sr.ms_ranges, sr.ms_combine, how,
		    a.common.repeat, util_bytes(sr.device_bytes, b1, sizeof b1));
	} else {
		if (k->caps & GPU_CAP_NO_TILES)
			snprintf(how, sizeof how, "%s kernel", k->name);
		else
			snprintf(how, sizeof how, "%s kernel, %s", k->name,
			    schedule_order_name(o.tiling.order));
		if (res.splits > 0)
			snprintf(how + strlen(how), sizeof how - strlen(how),
			    ", %d key range%s of its own choosing", res.splits,
			    res.splits == 1 ? "" : "s");
		printf("kernel time: %.3f ms (%s, median of %ld runs after a "
		    "warm-up); device memory %s\n", res.ms, how, a.common.repeat,
		    util_bytes(res.device_bytes, b1, sizeof b1));
	}
	if (setup_write_outputs(&o, p, out, out_lse, err, sizeof err) != 0)
		goto fail;
	if (o.backward && gpu_backward(&o, &a, set.ps, set.n, &res, err,
	    sizeof err) != 0)
		goto fail;
	rc = CMD_OK;
	goto done;
fail:
	gpu_check_end(&e);
	fprintf(stderr, "flashstep gpu: %s\n", err);
	rc = CMD_USAGE;
done:
	gpu_result_free(&res);
	gpu_split_result_free(&sr);
	sim_free(sim);
	gpucmd_packed_free(&pk);
	gpucmd_set_free(&set);
	options_free(&o);
	return rc;
}
