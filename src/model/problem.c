/* problem.c - building a problem from options, files and generators. */
#include "config.h"

#include "problem.h"
#include "npy.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A loaded source: its values and shape; `name` labels messages. */
struct loaded {
	float *data;
	int rows, cols;
	const char *name;
};

void
problem_spec_init(struct problem_spec *spec)
{
	memset(spec, 0, sizeof *spec);
	spec->dtype = DTYPE_FP32;
	spec->input = INPUTS_RAMP;
	spec->seed = 1;
	spec->heads = 1;
	spec->kv_heads = 1;
}

void
problem_free(struct problem *p)
{
	free(p->q);
	free(p->k);
	free(p->v);
	free(p->s);
	free(p->kt);
	memset(p, 0, sizeof *p);
}

uint64_t
problem_memory_needed(int tq, int tk, int d, int dv, int scores_mode)
{
	uint64_t f = 0;

	/* Inputs (K twice: as given and transposed), or S. */
	if (scores_mode)
		f += (uint64_t)tq * tk;
	else
		f += (uint64_t)tq * d + 2 * (uint64_t)tk * d;
	f += (uint64_t)tk * dv;
	/* Running state (m, l, u) and output for every row, twice over for
	 * the simulator and its checks; the reference's output in double. */
	f += 2 * (uint64_t)tq * (dv + 2) + 2 * (uint64_t)tq * (dv + 1);
	return 4 * f;
}

static int
given(const struct problem_source *src)
{
	return src->path != NULL || src->data != NULL;
}

/* Reads one source into l; `flag` names the option for messages. */
static int
load(const struct problem_source *src, const char *flag, int row_vector,
    struct loaded *l, char *err, size_t errlen)
{
	struct npy_array a;
	size_t n;

	memset(l, 0, sizeof *l);
	if (src->path != NULL) {
		if (npy_read(src->path, &a, err, errlen) != 0)
			return -1;
		l->data = a.data;
		l->name = src->path;
		/* A 1-D array is one query row for Q and S, one column for K
		 * and V. */
		if (a.ndim == 1 && row_vector) {
			l->rows = 1;
			l->cols = (int)a.shape[0];
		} else {
			l->rows = (int)a.shape[0];
			l->cols = (int)a.shape[1];
		}
		return 0;
	}
	if (src->data == NULL)
		return 0;
	if (src->rows <= 0 || src->cols <= 0)
		return util_error(err, errlen, "%s: empty matrix", flag);
	n = (size_t)src->rows * (size_t)src->cols;
	l->data = util_calloc(n, sizeof(float), flag, err, errlen);
	if (l->data == NULL)
		return -1;
	memcpy(l->data, src->data, n * sizeof(float));
	l->rows = src->rows;
	l->cols = src->cols;
	l->name = flag;
	return 0;
}

/* NaN and infinities are refused; a scores matrix may hold -inf (masked). */
static int
check_finite(const struct loaded *l, int allow_neg_inf, char *err, size_t errlen)
{
	long i, n = (long)l->rows * l->cols;

	for (i = 0; i < n; i++) {
		float x = l->data[i];
		if (isfinite(x) || (allow_neg_inf && isinf(x) && x < 0))
			continue;
		return util_error(err, errlen, "%s: entry (%ld, %ld) is %s "
		    "(inputs must be finite%s)", l->name, i / l->cols, i % l->cols,
		    isnan(x) ? "NaN" : x > 0 ? "inf" : "-inf",
		    allow_neg_inf ? "; -inf means masked" : "");
	}
	return 0;
}

/* A size given on the command line must agree with the file's. */
static int
agree(int given, int found, const char *flag, const struct loaded *l,
    const char *what, char *err, size_t errlen)
{
	if (given != 0 && given != found)
		return util_error(err, errlen, "%s %d does not match %s, which has "
		    "%d %s", flag, given, l->name, found, what);
	return 0;
}

static int
round_checked(enum dtype t, float *x, long n, const char *name, char *err,
    size_t errlen)
{
	long i;

	for (i = 0; i < n; i++) {
		float y = dtype_round(t, x[i]);
		if (isinf(y) && !isinf(x[i]))
			return util_error(err, errlen, "%s: entry %ld (%g) overflows %s",
			    name, i, (double)x[i], dtype_name(t));
		x[i] = y;
	}
	return 0;
}

/* rows of a file that holds n heads of `what` one after another must
 * be a multiple of n; *per gets the rows of one head. */
static int
per_head(const struct loaded *l, int n, const char *flag, int *per,
    char *err, size_t errlen)
{
	if (l->rows % n != 0)
		return util_error(err, errlen, "%s has %d rows, not a multiple of "
		    "%s %d (the heads lie one after another)", l->name, l->rows,
		    flag, n);
	*per = l->rows / n;
	return 0;
}

/* Generated inputs, head by head: query head h draws its Q (and, for the
 * first head of each group, the group's K and V) from its own seed, so
 * one head gives exactly the single-head inputs.  Every kind draws Q
 * first, so the other heads draw with Tk = 1: the same Q, without
 * drawing a K and V nobody reads. */
static int
fill_heads(const struct problem_spec *spec, struct problem *p, char *err,
    size_t errlen)
{
	size_t nk = (size_t)p->tk * p->d, nv = (size_t)p->tk * p->dv;
	int h, g, group = p->heads / p->kv_heads;
	float *spare;

	/* the one K row and V row a head that is not first draws */
	spare = util_calloc((size_t)p->d + (size_t)p->dv, sizeof *spare, "K",
	    err, errlen);
	if (spare == NULL)
		return -1;
	for (h = 0; h < p->heads; h++) {
		g = h / group;
		inputs_fill(spec->input, spec->seed + (uint64_t)h * 0x9e3779b97f4a7c15ull,
		    p->tq, h % group == 0 ? p->tk : 1, p->d, p->dv,
		    spec->bc > 0 ? spec->bc : PROBLEM_DEFAULT_TILE, spec->causal,
		    p->q + (size_t)h * p->tq * p->d,
		    h % group == 0 ? p->k + (size_t)g * nk : spare,
		    h % group == 0 ? p->v + (size_t)g * nv : spare + p->d);
	}
	free(spare);
	return 0;
}

void
problem_head(const struct problem *p, int h, struct problem *out)
{
	int g = h / (p->heads / p->kv_heads);

	*out = *p;
	out->heads = out->kv_heads = 1;
	if (p->scores_mode)
		out->s = p->s + (size_t)h * p->tq * p->tk;
	else {
		out->q = p->q + (size_t)h * p->tq * p->d;
		out->k = p->k + (size_t)g * p->tk * p->d;
		out->kt = p->kt != NULL ? p->kt + (size_t)g * p->tk * p->d : NULL;
	}
	out->v = p->v + (size_t)g * p->tk * p->dv;
}

static int
check_size(const char *flag, int v, char *err, size_t errlen)
{
	if (v < 0)
		return util_error(err, errlen, "%s must be positive, not %d", flag, v);
	return 0;
}

int
problem_build(const struct problem_spec *spec, struct problem *p, char *err,
    size_t errlen)
{
	struct loaded q, k, v, s;
	int files = 0, i, c, g, heads, kv_heads;
	uint64_t need, have;
	char b1[32], b2[32];

	memset(p, 0, sizeof *p);
	memset(&q, 0, sizeof q);
	memset(&k, 0, sizeof k);
	memset(&v, 0, sizeof v);
	memset(&s, 0, sizeof s);

	if (check_size("--tq", spec->tq, err, errlen) != 0 ||
	    check_size("--tk", spec->tk, err, errlen) != 0 ||
	    check_size("--d", spec->d, err, errlen) != 0 ||
	    check_size("--dv", spec->dv, err, errlen) != 0)
		return -1;
	heads = spec->heads > 0 ? spec->heads : 1;
	kv_heads = spec->kv_heads > 0 ? spec->kv_heads : 1;
	if (heads % kv_heads != 0)
		return util_error(err, errlen, "--kv-heads %d must divide --heads %d "
		    "(each K/V head serves H/G query heads)", kv_heads, heads);
	if (spec->scale_set && !(isfinite(spec->scale) && spec->scale > 0))
		return util_error(err, errlen, "--scale must be a positive finite "
		    "number, not %g", spec->scale);

	/* Which inputs go together is settled before any file is read. */
	files = given(&spec->q) + given(&spec->k) + given(&spec->v);
	if (given(&spec->s)) {
		if (given(&spec->q) || given(&spec->k))
			return util_error(err, errlen, "--scores replaces --q and "
			    "--k; give one or the other");
		if (!given(&spec->v))
			return util_error(err, errlen, "--scores needs --v (the values)");
		if (spec->scale_set && spec->scale != 1.0)
			return util_error(err, errlen, "--scale does not apply to a "
			    "scores problem (its scale is 1)");
	} else if (files != 0 && files != 3)
		return util_error(err, errlen, "--q, --k and --v go together "
		    "(or use --scores with --v)");

	if (load(&spec->s, "--scores", 1, &s, err, errlen) != 0 ||
	    load(&spec->q, "--q", 1, &q, err, errlen) != 0 ||
	    load(&spec->k, "--k", 0, &k, err, errlen) != 0 ||
	    load(&spec->v, "--v", 0, &v, err, errlen) != 0)
		goto fail;

	if (s.data != NULL) {
		/* A scores problem: S (H Tq, Tk) and V (G Tk, dv). */
		if (per_head(&s, heads, "--heads", &p->tq, err, errlen) ||
		    per_head(&v, kv_heads, "--kv-heads", &p->tk, err, errlen))
			goto fail;
		if (s.cols != p->tk) {
			util_error(err, errlen, "%s has %d columns but %s has %d rows%s "
			    "(both are Tk)", s.name, s.cols, v.name, p->tk,
			    kv_heads > 1 ? " per head" : "");
			goto fail;
		}
		if (agree(spec->tq, p->tq, "--tq", &s, heads > 1 ? "rows per head" :
		    "rows", err, errlen) ||
		    agree(spec->tk, s.cols, "--tk", &s, "columns", err, errlen) ||
		    agree(spec->dv, v.cols, "--dv", &v, "columns", err, errlen) ||
		    check_finite(&s, 1, err, errlen) ||
		    check_finite(&v, 0, err, errlen))
			goto fail;
		p->scores_mode = 1;
		p->d = 0;
		p->dv = v.cols;
		p->scale = 1.0f;
		p->s = s.data;
		p->v = v.data;
		s.data = v.data = NULL;
		snprintf(p->source, sizeof p->source, "scores from %s, values from %s",
		    spec->s.path ? spec->s.path : "inline",
		    spec->v.path ? spec->v.path : "inline");
	} else if (files != 0) {
		if (k.cols != q.cols) {
			util_error(err, errlen, "%s has %d columns but %s has %d "
			    "(both are d)", q.name, q.cols, k.name, k.cols);
			goto fail;
		}
		if (v.rows != k.rows) {
			util_error(err, errlen, "%s has %d rows but %s has %d "
			    "(both are Tk)", k.name, k.rows, v.name, v.rows);
			goto fail;
		}
		if (per_head(&q, heads, "--heads", &p->tq, err, errlen) ||
		    per_head(&k, kv_heads, "--kv-heads", &p->tk, err, errlen))
			goto fail;
		if (agree(spec->tq, p->tq, "--tq", &q, heads > 1 ? "rows per head" :
		    "rows", err, errlen) ||
		    agree(spec->d, q.cols, "--d", &q, "columns", err, errlen) ||
		    agree(spec->tk, p->tk, "--tk", &k, kv_heads > 1 ? "rows per head" :
		    "rows", err, errlen) ||
		    agree(spec->dv, v.cols, "--dv", &v, "columns", err, errlen) ||
		    check_finite(&q, 0, err, errlen) ||
		    check_finite(&k, 0, err, errlen) ||
		    check_finite(&v, 0, err, errlen))
			goto fail;
		p->d = q.cols;
		p->dv = v.cols;
		p->q = q.data;
		p->k = k.data;
		p->v = v.data;
		q.data = k.data = v.data = NULL;
		snprintf(p->source, sizeof p->source, "%s files",
		    spec->q.path ? "npy" : "inline");
	} else {
		p->tq = spec->tq ? spec->tq : PROBLEM_DEFAULT_T;
		p->tk = spec->tk ? spec->tk : p->tq;
		p->d = spec->d ? spec->d : PROBLEM_DEFAULT_D;
		p->dv = spec->dv ? spec->dv : p->d;
		need = problem_memory_needed(heads * p->tq, kv_heads * p->tk,
		    p->d, p->dv, 0);
		have = util_physical_memory();
		if (have != 0 && need > have / 2) {
			util_error(err, errlen, "problem too large: Tq=%d Tk=%d d=%d "
			    "dv=%d would need %s of memory (this machine has %s)",
			    p->tq, p->tk, p->d, p->dv,
			    util_bytes((double)need, b1, sizeof b1),
			    util_bytes((double)have, b2, sizeof b2));
			goto fail;
		}
		p->heads = heads;
		p->kv_heads = kv_heads;
		p->q = util_calloc((size_t)heads * p->tq * p->d, sizeof(float), "Q",
		    err, errlen);
		p->k = util_calloc((size_t)kv_heads * p->tk * p->d, sizeof(float), "K",
		    err, errlen);
		p->v = util_calloc((size_t)kv_heads * p->tk * p->dv, sizeof(float), "V",
		    err, errlen);
		if (p->q == NULL || p->k == NULL || p->v == NULL ||
		    fill_heads(spec, p, err, errlen) != 0)
			goto fail;
		snprintf(p->source, sizeof p->source, "%s, seed %llu",
		    inputs_kind_name(spec->input), (unsigned long long)spec->seed);
	}

	if (!p->scores_mode)
		p->scale = spec->scale_set ? (float)spec->scale :
		    (float)(1.0 / sqrt((double)p->d));
	p->causal = spec->causal;
	p->dtype = spec->dtype;
	p->heads = heads;
	p->kv_heads = kv_heads;

	/* The narrow types round what a kernel would store: the inputs. */
	if (p->scores_mode) {
		if (round_checked(p->dtype, p->s, (long)heads * p->tq * p->tk,
		    "scores", err, errlen))
			goto fail;
	} else if (round_checked(p->dtype, p->q, (long)heads * p->tq * p->d, "Q",
	    err, errlen) ||
	    round_checked(p->dtype, p->k, (long)kv_heads * p->tk * p->d, "K",
	    err, errlen))
		goto fail;
	if (round_checked(p->dtype, p->v, (long)kv_heads * p->tk * p->dv, "V",
	    err, errlen))
		goto fail;

	if (!p->scores_mode) {
		size_t nk = (size_t)p->tk * p->d;

		p->kt = util_calloc((size_t)kv_heads * nk, sizeof(float), "K^T",
		    err, errlen);
		if (p->kt == NULL)
			goto fail;
		for (g = 0; g < kv_heads; g++)
			for (c = 0; c < p->tk; c++)
				for (i = 0; i < p->d; i++)
					p->kt[g * nk + (size_t)i * p->tk + c] =
					    p->k[g * nk + (size_t)c * p->d + i];
	}
	return 0;

fail:
	free(q.data);
	free(k.data);
	free(v.data);
	free(s.data);
	problem_free(p);
	return -1;
}

int
problem_grad_output(const struct problem_spec *spec, const struct problem *p,
    float **out, char *err, size_t errlen)
{
	struct inputs_rng rng;
	struct loaded g;
	size_t n = (size_t)p->tq * (size_t)p->dv, e;

	*out = NULL;
	if (load(&spec->dout, "--grad-output", 1, &g, err, errlen) != 0)
		return -1;
	if (g.data == NULL) {
		g.data = util_calloc(n, sizeof(float), "dO", err, errlen);
		if (g.data == NULL)
			return -1;
		/* Its own stream: dO does not repeat Q's numbers. */
		inputs_rng_seed(&rng, spec->seed ^ 0x6772616420646f75ULL);
		for (e = 0; e < n; e++)
			g.data[e] = (float)inputs_rng_normal(&rng);
	} else if (g.rows != p->tq || g.cols != p->dv) {
		util_error(err, errlen, "%s is %d x %d, but dO has the shape of "
		    "O: %d x %d (Tq x dv)", g.name, g.rows, g.cols, p->tq, p->dv);
		goto fail;
	} else if (check_finite(&g, 0, err, errlen) != 0)
		goto fail;
	if (round_checked(p->dtype, g.data, (long)n, "dO", err, errlen) != 0)
		goto fail;
	*out = g.data;
	return 0;
fail:
	free(g.data);
	return -1;
}
