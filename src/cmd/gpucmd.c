/* gpucmd.c - what the GPU commands share (gpucmd.h). */
#include "config.h"

#include "cmd.h"
#include "gpucmd.h"
#include "app/setup.h"
#include "model/sim.h"
#include "model/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
gpucmd_args_init(struct gpucmd_args *a, long repeat)
{
	a->kernel = gpu_kernel_find("teaching");
	a->heads = 1;
	a->batch = 1;
	a->repeat = repeat;
	a->dq = GPU_DQ_ATOMIC;
	a->check = GPUCMD_CHECK_AUTO;
}

static const char *const gpucmd_check_names[] = {
	[GPUCMD_CHECK_AUTO] = "auto",
	[GPUCMD_CHECK_FULL] = "full",
	[GPUCMD_CHECK_SAMPLED] = "sampled",
	[GPUCMD_CHECK_NONE] = "none",
};

const char *
gpucmd_check_name(enum gpucmd_check c)
{
	return gpucmd_check_names[c];
}

int
gpucmd_set_check(void *ctx, const char *v, char *err, size_t errlen)
{
	int c;

	for (c = 0; c < (int)(sizeof gpucmd_check_names /
	    sizeof gpucmd_check_names[0]); c++)
		if (strcmp(v, gpucmd_check_names[c]) == 0) {
			((struct gpucmd_args *)ctx)->check = (enum gpucmd_check)c;
			return 0;
		}
	return util_error(err, errlen, "--check must be auto, full, sampled or "
	    "none, not '%s'", v);
}

long long
gpucmd_check_work(const struct problem *ps, int n)
{
	long long work = 0;
	int b;

	/* A scores problem has S: only P V is left to do. */
	for (b = 0; b < n; b++)
		work += (long long)(ps[b].heads > 0 ? ps[b].heads : 1) *
		    ps[b].tq * ps[b].tk * ((ps[b].scores_mode ? 0 : ps[b].d) +
		    ps[b].dv);
	return work;
}

enum gpucmd_check
gpucmd_check_resolve(enum gpucmd_check mode, const struct problem *ps, int n)
{
	if (mode != GPUCMD_CHECK_AUTO)
		return mode;
	return gpucmd_check_work(ps, n) <= GPUCMD_CHECK_FULL_MAX ?
	    GPUCMD_CHECK_FULL : GPUCMD_CHECK_SAMPLED;
}

int
gpucmd_check_rows(int tq, int *rows)
{
	const int n = tq < GPUCMD_CHECK_ROWS ? tq : GPUCMD_CHECK_ROWS;
	int i;

	/* i (tq - 1) / (n - 1): 0 and tq - 1 exactly, strictly rising
	 * since the step is at least 1 */
	for (i = 0; i < n; i++)
		rows[i] = n > 1 ? (int)((long long)i * (tq - 1) / (n - 1)) : 0;
	return n;
}

int
gpucmd_set_kernel(void *ctx, const char *v, char *err, size_t errlen)
{
	const struct gpu_kernel *k = gpu_kernel_find(v);

	if (k == NULL)
		return util_error(err, errlen, "--kernel must be one of %s, not "
		    "'%s' (flashstep gpu --list-kernels)", gpu_kernel_names(), v);
	((struct gpucmd_args *)ctx)->kernel = k;
	return 0;
}

int
gpucmd_set_heads(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_int("heads", v, 1, 65535,
	    &((struct gpucmd_args *)ctx)->heads, err, errlen);
}

int
gpucmd_set_batch(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_int("batch", v, 1, 65535,
	    &((struct gpucmd_args *)ctx)->batch, err, errlen);
}

int
gpucmd_set_repeat(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_int("repeat", v, 1, 100,
	    &((struct gpucmd_args *)ctx)->repeat, err, errlen);
}

int
gpucmd_set_dq(void *ctx, const char *v, char *err, size_t errlen)
{
	struct gpucmd_args *a = ctx;

	if (gpu_dq_mode_parse(v, &a->dq) != 0)
		return util_error(err, errlen, "--dq must be atomic or ordered, "
		    "not '%s'", v);
	return 0;
}

int
gpucmd_device(const char *name, char *dev, size_t devlen)
{
	static const int status[] = {
		[GPU_READY] = CMD_OK,
		[GPU_NOT_BUILT] = CMD_NO_CUDA,
		[GPU_NO_DRIVER] = CMD_NO_DRIVER,
		[GPU_BAD_DRIVER] = CMD_NO_DRIVER,
		[GPU_NO_DEVICE] = CMD_NO_DEVICE,
	};
	char err[512];
	enum gpu_status s = gpu_available(dev, devlen, err, sizeof err);

	if (s != GPU_READY)
		fprintf(stderr, "flashstep %s: %s\n", name, err);
	return status[s];
}

/*
 * A kernel with its own tilings: its tiling for head width d (its
 * default, or the one --br and --bc name) into o->tiling and o->spec.bc,
 * where spike inputs land; the order stays the user's, so a kernel
 * that lacks it refuses it by name.  Other kernels: nothing to do.
 */
static int
gpucmd_tiling(const struct gpu_kernel *k, int d, struct options *o,
    char *err, size_t errlen)
{
	struct tiling t;
	int given = options_given(o, "br") || options_given(o, "bc");

	if (k->caps & (GPU_CAP_ANY_TILING | GPU_CAP_NO_TILES))
		return 0;
	/* Without CUDA no kernel has its tilings: the device check, after
	 * the usage checks, says so with its own exit status. */
	if (!gpu_built())
		return 0;
	if (gpu_kernel_tiling(k, d, given ? o->tiling.br : 0,
	    given ? o->tiling.bc : 0, &t, err, errlen) != 0)
		return -1;
	o->tiling.br = t.br;
	o->tiling.bc = t.bc;
	o->spec.bc = t.bc;
	/* fp8's default scale blocks are a tile's rows: Br for Q too */
	if (o->spec.dtype == DTYPE_FP8)
		o->spec.br = t.br;
	return 0;
}

static void
gpucmd_free_problems(struct problem *ps, int n)
{
	int b;

	if (ps == NULL)
		return;
	for (b = 0; b < n; b++)
		problem_free(&ps[b]);
	free(ps);
}

/* B problems from the spec, problem b from seed + b. */
static int
gpucmd_problems(const struct options *o, const struct gpucmd_args *a,
    struct problem **out, int *nout, char *err, size_t errlen)
{
	const struct problem_spec *spec = &o->spec;
	struct problem_spec one;
	struct problem *ps;
	int b;

	*out = NULL;
	*nout = 0;
	if (a->batch > 1 && (spec->q.path != NULL || spec->s.path != NULL ||
	    spec->q.data != NULL || spec->s.data != NULL))
		return util_error(err, errlen, "--batch draws each entry's inputs "
		    "from its own seed; it does not go with input files");
	ps = util_calloc((size_t)a->batch, sizeof *ps, "problems", err, errlen);
	if (ps == NULL)
		return -1;
	for (b = 0; b < a->batch; b++) {
		one = *spec;
		one.seed = spec->seed + (uint64_t)b;
		if (problem_build(&one, &ps[b], err, errlen) != 0) {
			gpucmd_free_problems(ps, b);
			return -1;
		}
	}
	*out = ps;
	*nout = (int)a->batch;
	return 0;
}

void
gpucmd_set_free(struct gpucmd_set *set)
{
	if (set->apart)
		free(set->ps);
	gpucmd_free_problems(set->entries, set->batch);
	memset(set, 0, sizeof *set);
}

/* The entries' heads as problems of their own (views). */
static int
gpucmd_apart(struct gpucmd_set *set, char *err, size_t errlen)
{
	const int heads = set->entries[0].heads;
	int b, h;

	if ((long)set->batch * heads > 65535)
		return util_error(err, errlen, "--batch %d times --heads %d is %ld "
		    "problems of one head; one launch takes 65535 at most",
		    set->batch, heads, (long)set->batch * heads);
	set->ps = util_calloc((size_t)set->batch * heads, sizeof *set->ps,
	    "problems", err, errlen);
	if (set->ps == NULL)
		return -1;
	for (b = 0; b < set->batch; b++)
		for (h = 0; h < heads; h++)
			problem_head(&set->entries[b], h, &set->ps[b * heads + h]);
	set->n = set->batch * heads;
	set->apart = 1;
	return 0;
}

int
gpucmd_setup(struct options *o, const struct gpucmd_args *a,
    struct gpucmd_set *set, char *err, size_t errlen)
{
	const struct gpu_kernel *k = a->kernel;
	int whole = o->split.splits > 1 || (k->caps & GPU_CAP_HEADS);

	memset(set, 0, sizeof *set);
	/* Said before any input is made or a device probed, on any machine
	 * (gpu_kernel_check says the same of a hand-made problem). */
	if (o->spec.dtype == DTYPE_FP8 && !(k->dtypes & (1u << DTYPE_FP8)))
		return util_error(err, errlen, GPU_NO_FP8_KERNEL, k->name);
	if ((o->spec.seqlens_q != NULL || o->spec.seqlens_k != NULL) &&
	    gpu_varlen_check(k, "", err, errlen) != 0)
		return -1;
	if (o->spec.page_size > 0 && !(k->caps & GPU_CAP_PAGED))
		return util_error(err, errlen, GPU_NO_PAGED_KERNEL, k->name);
	if (o->spec.page_size % GPU_PAGE_MULTIPLE != 0)
		return util_error(err, errlen, GPU_PAGE_SIZE_REFUSED, k->name,
		    o->spec.page_size);
	if (o->spec.d > 0 && gpucmd_tiling(k, o->spec.d, o, err, errlen) != 0)
		return -1;
	if (o->split.pack_gqa && !whole)
		return util_error(err, errlen, "--pack-gqa: kernel %s takes one "
		    "head a problem; packing a group's heads into one row block "
		    "needs a kernel that takes them whole (decode, or teaching "
		    "with --splits)", k->name);
	if (gpucmd_problems(o, a, &set->entries, &set->batch, err, errlen) != 0)
		return -1;
	set->ps = set->entries;
	set->n = set->batch;
	/* A scores problem has no d: the kernel refuses it if it must. */
	if ((!whole && set->entries[0].heads > 1 &&
	    gpucmd_apart(set, err, errlen) != 0) ||
	    (!set->entries[0].scores_mode &&
	    gpucmd_tiling(k, set->entries[0].d, o, err, errlen) != 0)) {
		gpucmd_set_free(set);
		return -1;
	}
	/* What the kernel does not take (a mask, a bug, a dtype) is a usage
	 * error on any machine that has its code, said before the device
	 * is probed, as the backward's is (gpucmd_backward_args); a split-KV
	 * run's own check needs its plan (gpu_split_check). */
	if (gpu_built() && o->split.splits <= 1 && gpu_kernel_check(k,
	    &set->ps[0], &o->tiling, &o->rule, 0, err, errlen) != 0) {
		gpucmd_set_free(set);
		return -1;
	}
	return 0;
}

int
gpucmd_backward_args(const struct options *o, const struct gpucmd_args *a,
    const struct problem *ps, int n, int files, char *err, size_t errlen)
{
	const char *file = o->grad_q != NULL ? "--grad-q" : o->grad_k != NULL ?
	    "--grad-k" : o->grad_v != NULL ? "--grad-v" : o->grad_s != NULL ?
	    "--grad-scores" : NULL;

	/* The grad- options without --backward options_parse refuses. */
	if (!o->backward)
		return options_given(o, "dq") ? util_error(err, errlen,
		    "--dq goes with --backward") : 0;
	if (file != NULL && !files)
		return util_error(err, errlen, "%s: this command writes no "
		    "gradients (flashstep gpu --backward does)", file);
	if (file != NULL && n > 1)
		return util_error(err, errlen, "%s takes one problem, not %d",
		    file, n);
	if (file != NULL && ps[0].scores_mode && (o->grad_q != NULL ||
	    o->grad_k != NULL))
		return util_error(err, errlen, "%s: a scores problem has no Q or "
		    "K; its gradient is dS (--grad-scores)", file);
	if (o->grad_s != NULL && !ps[0].scores_mode)
		return util_error(err, errlen, "--grad-scores: the GPU backward "
		    "gives dS for a scores problem only (flashstep run --backward "
		    "writes it for any)");
	if (setup_check_outputs(o, err, errlen) != 0)
		return -1;
	return gpu_backward_check(a->kernel, &ps[0], o->grad_bug, err, errlen);
}

int
gpucmd_grad_outputs(const struct options *o, const struct problem *ps,
    int n, float **out, char *err, size_t errlen)
{
	const size_t per = (size_t)ps[0].tq * ps[0].dv;
	struct problem_spec one;
	float *x, *all;
	int b;

	*out = NULL;
	all = util_calloc((size_t)n * per, sizeof *all, "dO", err, errlen);
	if (all == NULL)
		return -1;
	for (b = 0; b < n; b++) {
		one = o->spec;
		one.seed = o->spec.seed + (uint64_t)b;
		if (problem_grad_output(&one, &ps[b], &x, err, errlen) != 0) {
			free(all);
			return -1;
		}
		memcpy(all + b * per, x, per * sizeof *x);
		free(x);
	}
	*out = all;
	return 0;
}

void
gpucmd_print_set(const struct options *o, const struct gpucmd_set *set)
{
	if (set->apart)
		printf("heads:    run one at a time: %d problems of one head\n",
		    set->n);
	if (set->batch > 1)
		printf("batch:    %d entries, seeds %llu .. %llu\n", set->batch,
		    (unsigned long long)o->spec.seed,
		    (unsigned long long)(o->spec.seed + (uint64_t)set->batch - 1));
}

void
gpucmd_label(const struct options *o, const struct gpucmd_set *set, int i,
    char *buf, size_t len)
{
	const int heads = set->n / set->batch;

	if (set->apart)
		snprintf(buf, len, "batch entry %d (seed %llu), head %d",
		    i / heads, (unsigned long long)(o->spec.seed +
		    (uint64_t)(i / heads)), i % heads);
	else
		snprintf(buf, len, "problem %d (seed %llu)", i,
		    (unsigned long long)(o->spec.seed + (uint64_t)i));
}

int
gpucmd_packed_new(const struct options *o, const struct problem *p,
    struct gpucmd_packed *pk, char *err, size_t errlen)
{
	int b;

	memset(pk, 0, sizeof *pk);
	if (o->split.splits > 1)
		return util_error(err, errlen, "--seqlens: split-KV (--splits) "
		    "of a packed batch is not modelled");
	pk->seqs = util_calloc((size_t)p->nseq, sizeof *pk->seqs, "sequences",
	    err, errlen);
	pk->sims = util_calloc((size_t)p->nseq, sizeof *pk->sims, "sequences",
	    err, errlen);
	pk->step0 = util_calloc((size_t)p->nseq + 1, sizeof *pk->step0,
	    "sequences", err, errlen);
	if (pk->seqs == NULL || pk->sims == NULL || pk->step0 == NULL) {
		gpucmd_packed_free(pk);
		return -1;
	}
	pk->nseq = p->nseq;
	for (b = 0; b < p->nseq; b++) {
		/* Grouped heads run whole (decode): a sequence's heads are
		 * gathered, each head being packed apart. */
		if (problem_seq_all(p, b, &pk->seqs[b], err, errlen) != 0) {
			gpucmd_packed_free(pk);
			return -1;
		}
		pk->sims[b] = sim_new(&pk->seqs[b], &o->tiling, &o->rule, err,
		    errlen);
		if (pk->sims[b] == NULL) {
			gpucmd_packed_free(pk);
			return -1;
		}
		pk->step0[b + 1] = pk->step0[b] + sim_steps(pk->sims[b]);
	}
	return 0;
}

int
gpucmd_sims_new(const struct options *o, const struct problem *p,
    struct gpucmd_packed *pk, struct sim **sim, char *err, size_t errlen)
{
	*sim = NULL;
	if (p->nseq > 0)
		return gpucmd_packed_new(o, p, pk, err, errlen);
	*sim = sim_new_split(p, &o->tiling, &o->split, &o->rule, err, errlen);
	return *sim != NULL ? 0 : -1;
}

void
gpucmd_packed_free(struct gpucmd_packed *pk)
{
	int b;

	for (b = 0; pk->sims != NULL && b < pk->nseq; b++)
		sim_free(pk->sims[b]);
	for (b = 0; pk->seqs != NULL && b < pk->nseq; b++)
		problem_seq_free(&pk->seqs[b]);
	free(pk->sims);
	free(pk->seqs);
	free(pk->step0);
	memset(pk, 0, sizeof *pk);
}

void
gpucmd_packed_describe(FILE *f, const struct gpucmd_packed *pk)
{
	int b;

	setup_describe(f, pk->sims[0]);
	fprintf(f, "packed:   %d sequences (the lines above: sequence 0), "
	    "%ld steps in all\n", pk->nseq, pk->step0[pk->nseq]);
	for (b = 0; b < pk->nseq; b++)
		fprintf(f, "  seq %-4d Tq=%-6d Tk=%-6d steps %ld .. %ld\n", b,
		    pk->seqs[b].tq, pk->seqs[b].tk, pk->step0[b],
		    pk->step0[b + 1] - 1);
}

int
gpucmd_packed_seq(const struct gpucmd_packed *pk, long k, long *local)
{
	int lo = 0, hi = pk->nseq - 1, mid;

	/* the last sequence whose first step is at most k (a sequence of
	 * no steps shares its number with the next) */
	while (lo < hi) {
		mid = (lo + hi + 1) / 2;
		if (pk->step0[mid] <= k)
			lo = mid;
		else
			hi = mid - 1;
	}
	*local = k - pk->step0[lo];
	return lo;
}
