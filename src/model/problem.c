/* problem.c - building a problem from options, files and generators. */
#include "config.h"

#include "problem.h"
#include "memory.h"
#include "npy.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A source: first described (its shape, from a file's header or the
 * inline matrix), then loaded once the shapes and memory are checked. */
struct loaded {
	const struct problem_source *src;
	struct npy_file file;	/* fd -1 unless a file is open */
	float *data;
	int rows, cols;
	const char *name;	/* the path or the option, for messages */
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
	spec->memory_parts = MEMORY_SIM;
}

void
problem_free(struct problem *p)
{
	free(p->q);
	free(p->k);
	free(p->v);
	free(p->s);
	free(p->kt);
	fp8_free(p->fp8);
	free(p->alibi);
	free(p->cu_q);
	free(p->cu_k);
	paged_free(&p->paged);
	free(p->seq_page0);
	memset(p, 0, sizeof *p);
}

static int
given(const struct problem_source *src)
{
	return src->path != NULL || src->data != NULL;
}

/* Reads one source's shape; `flag` names the option for messages. */
static int
describe(const struct problem_source *src, const char *flag, int row_vector,
    struct loaded *l, char *err, size_t errlen)
{
	memset(l, 0, sizeof *l);
	l->src = src;
	l->file.fd = -1;
	if (src->path != NULL) {
		if (npy_open(src->path, &l->file, err, errlen) != 0)
			return -1;
		l->name = src->path;
		/* A 1-D array is one query row for Q and S, one column for K
		 * and V. */
		if (l->file.ndim == 1 && row_vector) {
			l->rows = 1;
			l->cols = (int)l->file.shape[0];
		} else {
			l->rows = (int)l->file.shape[0];
			l->cols = (int)l->file.shape[1];
		}
		return 0;
	}
	if (src->data == NULL)
		return 0;
	if (src->rows <= 0 || src->cols <= 0)
		return util_error(err, errlen, "%s: empty matrix", flag);
	l->rows = src->rows;
	l->cols = src->cols;
	l->name = flag;
	return 0;
}

/* Reads a described source's values. */
static int
load(struct loaded *l, char *err, size_t errlen)
{
	struct npy_array a;
	size_t n;

	if (l->file.fd >= 0) {
		if (npy_load(&l->file, &a, err, errlen) != 0)
			return -1;
		l->data = a.data;
		return 0;
	}
	if (l->src->data == NULL)
		return 0;
	n = (size_t)l->rows * (size_t)l->cols;
	l->data = util_calloc(n, sizeof(float), l->name, err, errlen);
	if (l->data == NULL)
		return -1;
	memcpy(l->data, l->src->data, n * sizeof(float));
	return 0;
}

static void
loaded_free(struct loaded *l)
{
	npy_close(&l->file);
	free(l->data);
	l->data = NULL;
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
		    spec->bc > 0 ? spec->bc : PROBLEM_DEFAULT_TILE, spec->causal ? 0 :
		    spec->window_set ? spec->window_right : -1,
		    p->q + (size_t)h * p->tq * p->d,
		    h % group == 0 ? p->k + (size_t)g * nk : spare,
		    h % group == 0 ? p->v + (size_t)g * nv : spare + p->d);
	}
	free(spare);
	return 0;
}

/* --page-size: the page table and the pool K and V are read from. */
static int
build_paged(const struct problem_spec *spec, struct problem *p, int kv_heads,
    char *err, size_t errlen)
{
	if (spec->page_size <= 0)
		return 0;
	if (p->scores_mode)
		return util_error(err, errlen, "--page-size pages K and V: a "
		    "scores problem (--scores) has no K to page");
	if (p->nseq > 0) {
		if (spec->block_table != NULL)
			return util_error(err, errlen, "--block-table with --seqlens: "
			    "a packed batch's tables are drawn from the seed (one "
			    "table a file pages one sequence)");
		return paged_packed(spec->page_size, p->nseq, p->cu_k, spec->seed,
		    p->kt, p->v, kv_heads, p->tk, p->d, p->dv, &p->paged,
		    &p->seq_page0, err, errlen);
	}
	if (paged_table(spec->page_size, p->tk, spec->block_table, spec->seed,
	    &p->paged, err, errlen) != 0)
		return -1;
	return paged_fill(&p->paged, p->kt, p->v, kv_heads, p->tk, p->d, p->dv,
	    err, errlen);
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
	if (p->paged.page_size > 0) {
		out->paged.kt = p->paged.kt + (size_t)g * paged_slots(&p->paged) *
		    (size_t)p->d;
		out->paged.v = p->paged.v + (size_t)g * paged_slots(&p->paged) *
		    (size_t)p->dv;
	}
	out->alibi = p->alibi != NULL ? p->alibi + h : NULL;
	out->head0 = p->head0 + h;
	out->kv_head0 = p->kv_head0 + g;
	out->seq_owned = 0;
}

void
problem_seq(const struct problem *p, int b, struct problem *out)
{
	int q0 = p->cu_q[b], k0 = p->cu_k[b];

	*out = *p;
	out->nseq = 0;
	out->cu_q = out->cu_k = NULL;
	out->tq = p->cu_q[b + 1] - q0;
	out->tk = p->cu_k[b + 1] - k0;
	out->head0 = p->head0 + b * p->seq_heads;
	/* Paged: the sequence's own entries of the table, the shared pool. */
	if (p->paged.page_size > 0 && p->seq_page0 != NULL) {
		out->paged.table = p->paged.table + p->seq_page0[b];
		out->paged.pages = p->seq_page0[b + 1] - p->seq_page0[b];
	}
	out->seq_page0 = NULL;
	out->seq_owned = 0;
	out->q = p->q + (size_t)q0 * p->d;
	out->k = p->k + (size_t)k0 * p->d;
	/* K^T of a packed batch is laid out sequence by sequence: (d, Tk_b)
	 * blocks, one after another (problem_build). */
	out->kt = p->kt != NULL ? p->kt + (size_t)k0 * p->d : NULL;
	out->v = p->v + (size_t)k0 * p->dv;
}

/* Sequence rows [r0, r0 + n) of each of heads packed heads of `total`
 * rows (width w) in from, gathered into (heads n, w) at to. */
static void
gather_rows(const float *from, float *to, int heads, int total, int r0,
    int n, int w)
{
	int h;

	for (h = 0; h < heads; h++)
		memcpy(to + (size_t)h * n * w, from + ((size_t)h * total + r0) *
		    w, (size_t)n * w * sizeof *to);
}

int
problem_seq_all(const struct problem *p, int b, struct problem *out,
    char *err, size_t errlen)
{
	const int heads = p->heads > 0 ? p->heads : 1;
	const int kv_heads = p->kv_heads > 0 ? p->kv_heads : 1;
	float *q, *k, *kt, *v;
	size_t nk;
	int g;

	problem_seq(p, b, out);
	if (heads == 1)
		return 0;
	nk = (size_t)out->tk * p->d;
	q = util_calloc((size_t)heads * out->tq * p->d, sizeof *q, "Q", err,
	    errlen);
	k = util_calloc((size_t)kv_heads * nk, sizeof *k, "K", err, errlen);
	kt = util_calloc((size_t)kv_heads * nk, sizeof *kt, "K^T", err, errlen);
	v = util_calloc((size_t)kv_heads * out->tk * p->dv, sizeof *v, "V", err,
	    errlen);
	if (q == NULL || k == NULL || kt == NULL || v == NULL) {
		free(q);
		free(k);
		free(kt);
		free(v);
		memset(out, 0, sizeof *out);
		return -1;
	}
	gather_rows(p->q, q, heads, p->tq, p->cu_q[b], out->tq, p->d);
	gather_rows(p->k, k, kv_heads, p->tk, p->cu_k[b], out->tk, p->d);
	gather_rows(p->v, v, kv_heads, p->tk, p->cu_k[b], out->tk, p->dv);
	/* K^T: each K/V head's (d, Tk_b) block of the sequence (problem_build
	 * lays a packed head's K^T sequence by sequence). */
	for (g = 0; g < kv_heads; g++)
		memcpy(kt + (size_t)g * nk, p->kt + (size_t)g * p->tk * p->d +
		    (size_t)p->cu_k[b] * p->d, nk * sizeof *kt);
	out->q = q;
	out->k = k;
	out->kt = kt;
	out->v = v;
	out->seq_owned = 1;
	return 0;
}

void
problem_seq_free(struct problem *out)
{
	if (!out->seq_owned)
		return;
	free((float *)out->q);
	free((float *)out->k);
	free((float *)out->kt);
	free((float *)out->v);
	out->q = out->k = out->kt = out->v = NULL;
	out->seq_owned = 0;
}

int
problem_refuse_packed(const struct problem *p, const char *what, char *err,
    size_t errlen)
{
	if (p->nseq == 0)
		return 0;
	return util_error(err, errlen, "--seqlens: %s over all a packed batch's "
	    "rows would mix its %d sequences; `flashstep run` and `trace` take "
	    "one (sequence by sequence)", what, p->nseq);
}

int
problem_seqlens(const char *text, const char *name, int *out, int max,
    int *n, char *err, size_t errlen)
{
	const char *at = text;
	char *end;
	long x;

	*n = 0;
	for (;;) {
		errno = 0;
		x = strtol(at, &end, 10);
		/* strtol skips blanks and takes a sign: a length is digits
		 * only, from its first character to the comma. */
		if (end == at || !isdigit((unsigned char)*at) ||
		    (errno != 0 && errno != ERANGE) ||
		    (*end != ',' && *end != '\0'))
			return util_error(err, errlen, "--%s: length %d of '%s' is "
			    "not a whole number", name, *n + 1, text);
		if (errno == ERANGE || x > INT_MAX)
			return util_error(err, errlen, "--%s: length %d of '%s' is "
			    "more than %d", name, *n + 1, text, INT_MAX);
		if (x < 1)
			return util_error(err, errlen, "--%s: length %d (%ld) must be "
			    "from 1 to %d (an empty sequence is left out of the "
			    "batch, not packed)", name, *n + 1, x, INT_MAX);
		if (out != NULL && *n < max)
			out[*n] = (int)x;
		(*n)++;
		if (*end == '\0')
			return 0;
		at = end + 1;
	}
}

/*
 * The offsets of a packed batch (spec->seqlens_q, seqlens_k) into p, and
 * its totals into *tq, *tk; what the model does not run packed is
 * refused by name.  Returns 0 (also when not packed: p->nseq stays 0).
 */
static int
pack_seqlens(const struct problem_spec *spec, struct problem *p, int *tq,
    int *tk, char *err, size_t errlen)
{
	int nq, nk, b, *lq = NULL, *lk = NULL;
	long long sq = 0, sk = 0;

	if (spec->seqlens_q == NULL && spec->seqlens_k == NULL)
		return 0;
	if (spec->seqlens_q == NULL || spec->seqlens_k == NULL)
		return util_error(err, errlen, "--seqlens-q and --seqlens-k go "
		    "together (or --seqlens for both)");
	if (problem_seqlens(spec->seqlens_q, "seqlens-q", NULL, 0, &nq, err,
	    errlen) != 0 || problem_seqlens(spec->seqlens_k, "seqlens-k", NULL,
	    0, &nk, err, errlen) != 0)
		return -1;
	if (nq != nk)
		return util_error(err, errlen, "--seqlens-q has %d length%s but "
		    "--seqlens-k has %d: one pair a sequence", nq, nq == 1 ? "" : "s",
		    nk);
	if (spec->tq != 0 || spec->tk != 0)
		return util_error(err, errlen, "--seqlens sets Tq and Tk (their "
		    "sums); drop --%s", spec->tq != 0 ? "tq" : "tk");
	if (given(&spec->s))
		return util_error(err, errlen, "--seqlens: a packed batch of "
		    "scores is not modelled (drop --scores)");
	if (spec->dtype == DTYPE_FP8)
		return util_error(err, errlen, "--seqlens: fp8's scale blocks "
		    "would cross sequences; not modelled (drop --dtype fp8)");
	lq = util_calloc((size_t)nq, sizeof *lq, "--seqlens-q", err, errlen);
	lk = util_calloc((size_t)nk, sizeof *lk, "--seqlens-k", err, errlen);
	p->cu_q = util_calloc((size_t)nq + 1, sizeof *p->cu_q, "cu_seqlens_q",
	    err, errlen);
	p->cu_k = util_calloc((size_t)nk + 1, sizeof *p->cu_k, "cu_seqlens_k",
	    err, errlen);
	if (lq == NULL || lk == NULL || p->cu_q == NULL || p->cu_k == NULL)
		goto fail;
	problem_seqlens(spec->seqlens_q, "seqlens-q", lq, nq, &nq, err, errlen);
	problem_seqlens(spec->seqlens_k, "seqlens-k", lk, nk, &nk, err, errlen);
	for (b = 0; b < nq; b++) {
		sq += lq[b];
		sk += lk[b];
		if (sq > INT_MAX || sk > INT_MAX) {
			util_error(err, errlen, "--seqlens: the %s add up to more "
			    "than %d rows", sq > INT_MAX ? "query lengths" :
			    "key lengths", INT_MAX);
			goto fail;
		}
		p->cu_q[b + 1] = (int)sq;
		p->cu_k[b + 1] = (int)sk;
	}
	p->nseq = nq;
	*tq = (int)sq;
	*tk = (int)sk;
	free(lq);
	free(lk);
	return 0;
fail:
	free(lq);
	free(lk);
	return -1;
}

int
problem_slopes(const char *text, float *out, int max, int *n, char *err,
    size_t errlen)
{
	const char *at = text;
	char *end;
	double x;

	*n = 0;
	for (;;) {
		errno = 0;
		x = strtod(at, &end);
		/* strtod skips blanks and reads "inf": a slope is a plain
		 * number, from its first character to the comma. */
		if (end == at || isspace((unsigned char)*at) || errno != 0 ||
		    !isfinite(x) || (*end != ',' && *end != '\0'))
			return util_error(err, errlen, "--alibi-slopes: slope %d of "
			    "'%s' is not a number", *n + 1, text);
		if (!(x >= 0 && x <= 1e6))
			return util_error(err, errlen, "--alibi-slopes: slope %d (%g) "
			    "must be from 0 to 1e6 (the bias -slope |r + Tk - Tq - c| "
			    "falls with distance)", *n + 1, x);
		if (out != NULL && *n < max)
			out[*n] = (float)x;
		(*n)++;
		if (*end == '\0')
			return 0;
		at = end + 1;
	}
}

/*
 * The masks and score modifiers of the spec (mask_rule.h), checked
 * before anything is read: --causal and --window both name the window
 * (refused together: which one is meant?), --alibi and --alibi-slopes
 * both the slopes.  The cap and the slopes must be numbers float32
 * holds.
 */
static int
check_mask(const struct problem_spec *spec, int heads, char *err,
    size_t errlen)
{
	int n;

	if (spec->causal && spec->window_set)
		return util_error(err, errlen, "--causal and --window both set the "
		    "window: give one (--causal is --window -1,0)");
	if (spec->window_set && (spec->window_left < -1 || spec->window_right < -1))
		return util_error(err, errlen, "--window %d,%d: each side is -1 "
		    "(unbounded) or a number of keys >= 0", spec->window_left,
		    spec->window_right);
	if (spec->softcap_set && !(isfinite(spec->softcap) && spec->softcap > 0 &&
	    spec->softcap <= FLT_MAX && (float)spec->softcap > 0.0f))
		return util_error(err, errlen, "--softcap must be a positive number "
		    "within float32's range, not %g", spec->softcap);
	if (spec->dropout_set && !(spec->dropout >= 0 && spec->dropout < 1 &&
	    (float)spec->dropout < 1.0f))
		return util_error(err, errlen, "--dropout must be a probability "
		    "from 0 to below 1, not %g", spec->dropout);
	if (spec->dropout_offset > UINT32_MAX)
		return util_error(err, errlen, "--dropout-offset must be below "
		    "2^32 (the counter's word), not %llu",
		    (unsigned long long)spec->dropout_offset);
	if (spec->alibi_set && spec->alibi_slopes != NULL)
		return util_error(err, errlen, "--alibi and --alibi-slopes both set "
		    "the slopes: give one (--alibi is every head's)");
	if (spec->alibi_set && !(isfinite(spec->alibi) && spec->alibi >= 0 &&
	    spec->alibi <= 1e6))
		return util_error(err, errlen, "--alibi: slope %g must be a number "
		    "from 0 to 1e6 (the bias -slope |r + Tk - Tq - c| falls with "
		    "distance)", spec->alibi);
	if (spec->alibi_slopes != NULL) {
		if (problem_slopes(spec->alibi_slopes, NULL, 0, &n, err, errlen) != 0)
			return -1;
		if (n != heads)
			return util_error(err, errlen, "--alibi-slopes has %d slope%s "
			    "but --heads is %d: one slope per query head", n,
			    n == 1 ? "" : "s", heads);
	}
	return 0;
}

/* The problem's rules from a checked spec: the window (causal is
 * (-1, 0)), the cap, and the slopes, one per head. */
static int
set_mask(const struct problem_spec *spec, struct problem *p, char *err,
    size_t errlen)
{
	int h, n;

	/* The causal mask is the flag (what every kernel reads); the
	 * window (-1, 0) is it too, and (-1, -1) no window at all. */
	p->mask = mask_rule_none();
	if (spec->window_set && !(spec->window_left < 0 && spec->window_right < 0))
		p->mask = mask_rule_window(p->mask, spec->window_left,
		    spec->window_right);
	p->causal = spec->causal || mask_rule_has(p->mask, MASK_CAUSAL);
	if (p->causal)
		p->mask = mask_rule_none();
	if (spec->softcap_set)
		p->mask.softcap = (float)spec->softcap;
	if (spec->dropout_set && spec->dropout > 0)
		mask_rule_set_dropout(&p->mask, spec->dropout, spec->dropout_seed,
		    (uint32_t)spec->dropout_offset);
	if (!spec->alibi_set && spec->alibi_slopes == NULL)
		return 0;
	p->alibi = util_calloc((size_t)p->heads, sizeof *p->alibi, "ALiBi slopes",
	    err, errlen);
	if (p->alibi == NULL)
		return -1;
	if (spec->alibi_slopes != NULL)
		return problem_slopes(spec->alibi_slopes, p->alibi, p->heads, &n,
		    err, errlen);
	for (h = 0; h < p->heads; h++)
		p->alibi[h] = (float)spec->alibi;
	return 0;
}

static int
check_size(const char *flag, int v, char *err, size_t errlen)
{
	if (v < 0)
		return util_error(err, errlen, "%s must be positive, not %d", flag, v);
	return 0;
}

/*
 * The simulator computes each score in float32: the products of a query
 * row and a key summed in order, then scaled.  None of those sums may
 * leave float32's range, or the score becomes inf and O nonsense.  The
 * sum of |q_x k_x| bounds every partial sum; with a margin for float32's
 * rounding (one part in 2^23 per term) it must fit, scaled and unscaled.
 * By Cauchy-Schwarz the largest row norms settle it at once for all but
 * absurd inputs; only then are the pairs searched, in order, for the
 * first that does not fit.
 */
static int
check_score_range(const struct problem *p, char *err, size_t errlen)
{
	double qn = 0.0, kn = 0.0, margin, scale = p->scale > 1.0f ? p->scale : 1.0;
	int r, c, x;

	margin = 1.0 + (double)p->d * 0x1p-23;
	for (r = 0; r < p->tq; r++) {
		double n = 0.0;
		for (x = 0; x < p->d; x++)
			n += (double)p->q[(size_t)r * p->d + x] * p->q[(size_t)r * p->d + x];
		qn = n > qn ? n : qn;
	}
	for (c = 0; c < p->tk; c++) {
		double n = 0.0;
		for (x = 0; x < p->d; x++)
			n += (double)p->k[(size_t)c * p->d + x] * p->k[(size_t)c * p->d + x];
		kn = n > kn ? n : kn;
	}
	if (sqrt(qn) * sqrt(kn) * scale * margin <= FLT_MAX)
		return 0;
	for (r = 0; r < p->tq; r++)
		for (c = 0; c < p->tk; c++) {
			double a = 0.0;
			if (!problem_visible(p, r, c))
				continue;
			for (x = 0; x < p->d; x++)
				a += fabs((double)p->q[(size_t)r * p->d + x] *
				    p->k[(size_t)c * p->d + x]);
			if (a * scale * margin > FLT_MAX)
				return util_error(err, errlen, "the score of query row %d "
				    "and key %d overflows float32 (|q|·|k|%s reaches %.3g; "
				    "float32 holds up to %.3g): scale the inputs down", r, c,
				    p->scale > 1.0f ? " times the scale" : "",
				    a * scale, (double)FLT_MAX);
		}
	return 0;
}

/*
 * The running numerator u adds p v over a row's keys with every p <= 1,
 * so its entries never exceed the sum of |v| down a column of V.  A V
 * whose column sums leave float32's range could overflow u.
 */
static int
check_value_range(const struct problem *p, const char *name, char *err,
    size_t errlen)
{
	int c, x;

	for (x = 0; x < p->dv; x++) {
		double sum = 0.0;
		for (c = 0; c < p->tk; c++)
			sum += fabs((double)p->v[(size_t)c * p->dv + x]);
		if (sum > FLT_MAX)
			return util_error(err, errlen, "%s: column %d adds up to %.3g "
			    "over the %d keys, beyond float32's range (%.3g): the "
			    "running numerator u could overflow; scale V down", name, x,
			    sum, p->tk, (double)FLT_MAX);
	}
	return 0;
}

int
problem_build(const struct problem_spec *spec, struct problem *p, char *err,
    size_t errlen)
{
	struct loaded q, k, v, s;
	struct memory_job job;
	struct problem one, head;
	struct problem_spec packed_spec;
	struct { int tq, tk; } packed = { 0, 0 };
	int files = 0, i, c, g, h, heads, kv_heads;

	memset(p, 0, sizeof *p);
	memset(&q, 0, sizeof q);
	memset(&k, 0, sizeof k);
	memset(&v, 0, sizeof v);
	memset(&s, 0, sizeof s);
	q.file.fd = k.file.fd = v.file.fd = s.file.fd = -1;

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
	if (check_mask(spec, heads, err, errlen) != 0)
		return -1;
	if (spec->block_table != NULL && spec->page_size <= 0)
		return util_error(err, errlen, "--block-table needs --page-size "
		    "(how many keys a page holds)");
	/* A packed batch is its sums of rows from here on. */
	if (pack_seqlens(spec, p, &packed.tq, &packed.tk, err, errlen) != 0) {
		problem_free(p);
		return -1;
	}
	if (p->nseq > 0) {
		p->seq_heads = heads;
		packed_spec = *spec;
		packed_spec.tq = packed.tq;
		packed_spec.tk = packed.tk;
		spec = &packed_spec;
	}
	if (spec->scale_set && !(isfinite(spec->scale) && spec->scale > 0 &&
	    spec->scale <= FLT_MAX && (float)spec->scale > 0.0f))
		return util_error(err, errlen, "--scale must be a positive number "
		    "within float32's range (%g to %g), not %g", (double)FLT_TRUE_MIN,
		    (double)FLT_MAX, spec->scale);

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

	/* Shapes first, from the files' headers: nothing large is read or
	 * allocated before the shapes agree and the memory is checked. */
	if (describe(&spec->s, "--scores", 1, &s, err, errlen) != 0 ||
	    describe(&spec->q, "--q", 1, &q, err, errlen) != 0 ||
	    describe(&spec->k, "--k", 0, &k, err, errlen) != 0 ||
	    describe(&spec->v, "--v", 0, &v, err, errlen) != 0)
		goto fail;

	if (given(&spec->s)) {
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
		    agree(spec->dv, v.cols, "--dv", &v, "columns", err, errlen))
			goto fail;
		p->scores_mode = 1;
		p->d = 0;
		p->dv = v.cols;
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
		if (agree(spec->tq, p->tq, p->nseq > 0 ? "--seqlens-q's sum" :
		    "--tq", &q, heads > 1 ? "rows per head" :
		    "rows", err, errlen) ||
		    agree(spec->d, q.cols, "--d", &q, "columns", err, errlen) ||
		    agree(spec->tk, p->tk, p->nseq > 0 ? "--seqlens-k's sum" :
		    "--tk", &k, kv_heads > 1 ? "rows per head" :
		    "rows", err, errlen) ||
		    agree(spec->dv, v.cols, "--dv", &v, "columns", err, errlen))
			goto fail;
		p->d = q.cols;
		p->dv = v.cols;
	} else {
		p->tq = spec->tq ? spec->tq : PROBLEM_DEFAULT_T;
		p->tk = spec->tk ? spec->tk : p->tq;
		p->d = spec->d ? spec->d : PROBLEM_DEFAULT_D;
		p->dv = spec->dv ? spec->dv : p->d;
	}
	p->heads = heads;
	p->kv_heads = kv_heads;

	/* Every head's rows count: H Tq queries, G Tk keys.  Rows are
	 * numbered in int everywhere, so their totals must fit one. */
	if ((long long)heads * p->tq > INT_MAX ||
	    (long long)kv_heads * p->tk > INT_MAX) {
		int q = (long long)heads * p->tq > INT_MAX;
		util_error(err, errlen, "%s %d x %s %d = %lld %s rows in all: at "
		    "most %d", q ? "--heads" : "--kv-heads", q ? heads : kv_heads,
		    q ? "--tq" : "--tk", q ? p->tq : p->tk,
		    q ? (long long)heads * p->tq : (long long)kv_heads * p->tk,
		    q ? "query" : "key", INT_MAX);
		goto fail;
	}
	memset(&job, 0, sizeof job);
	job.tq = p->tq;
	job.tk = p->tk;
	job.heads = heads;
	job.kv_heads = kv_heads;
	job.splits = spec->memory_splits;
	job.merge_tree = spec->memory_merge_tree;
	job.d = p->d;
	job.dv = p->dv;
	job.scores_mode = p->scores_mode;
	job.fp8 = spec->dtype == DTYPE_FP8;
	job.br = spec->br > 0 ? spec->br : PROBLEM_DEFAULT_TILE;
	job.bc = spec->bc > 0 ? spec->bc : PROBLEM_DEFAULT_TILE;
	job.fa1 = spec->fa1;
	job.page_size = spec->page_size;
	job.parts = spec->memory_parts;
	if (memory_check(&job, err, errlen) != 0)
		goto fail;

	if (p->scores_mode) {
		if (load(&s, err, errlen) || load(&v, err, errlen) ||
		    check_finite(&s, 1, err, errlen) ||
		    check_finite(&v, 0, err, errlen))
			goto fail;
		p->scale = 1.0f;
		p->s = s.data;
		p->v = v.data;
		s.data = v.data = NULL;
		snprintf(p->source, sizeof p->source, "scores from %s, values from %s",
		    spec->s.path ? spec->s.path : "inline",
		    spec->v.path ? spec->v.path : "inline");
	} else if (files != 0) {
		if (load(&q, err, errlen) || load(&k, err, errlen) ||
		    load(&v, err, errlen) ||
		    check_finite(&q, 0, err, errlen) ||
		    check_finite(&k, 0, err, errlen) ||
		    check_finite(&v, 0, err, errlen))
			goto fail;
		p->q = q.data;
		p->k = k.data;
		p->v = v.data;
		q.data = k.data = v.data = NULL;
		snprintf(p->source, sizeof p->source, "%s files",
		    spec->q.path ? "npy" : "inline");
	} else {
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
	if (set_mask(spec, p, err, errlen) != 0)
		goto fail;
	p->dtype = spec->dtype;

	/* The narrow types round what a kernel would store: the inputs;
	 * fp8 quantizes them with scales (fp8.h). */
	if (p->dtype == DTYPE_FP8) {
		if (fp8_quantize(p, &spec->fp8, spec->br > 0 ? spec->br :
		    PROBLEM_DEFAULT_TILE, spec->bc > 0 ? spec->bc :
		    PROBLEM_DEFAULT_TILE, spec->seed, err, errlen) != 0)
			goto fail;
	} else if (p->scores_mode) {
		if (round_checked(p->dtype, p->s, (long)heads * p->tq * p->tk,
		    "scores", err, errlen))
			goto fail;
	} else if (round_checked(p->dtype, p->q, (long)heads * p->tq * p->d, "Q",
	    err, errlen) ||
	    round_checked(p->dtype, p->k, (long)kv_heads * p->tk * p->d, "K",
	    err, errlen))
		goto fail;
	if (p->dtype != DTYPE_FP8 && round_checked(p->dtype, p->v,
	    (long)kv_heads * p->tk * p->dv, "V", err, errlen))
		goto fail;

	if (!p->scores_mode) {
		size_t nk = (size_t)p->tk * p->d;

		p->kt = util_calloc((size_t)kv_heads * nk, sizeof(float), "K^T",
		    err, errlen);
		if (p->kt == NULL)
			goto fail;
		for (g = 0; g < (p->nseq > 0 ? 0 : kv_heads); g++)
			for (c = 0; c < p->tk; c++)
				for (i = 0; i < p->d; i++)
					p->kt[g * nk + (size_t)i * p->tk + c] =
					    p->k[g * nk + (size_t)c * p->d + i];
		/* A packed batch's K^T: each K/V head's, (d, Tk_b) a sequence
		 * (problem_seq, problem_seq_all). */
		for (g = 0; g < (p->nseq > 0 ? kv_heads : 0); g++)
			for (h = 0; h < p->nseq; h++) {
				int k0 = p->cu_k[h], n = p->cu_k[h + 1] - k0;
				float *kt = p->kt + g * nk + (size_t)k0 * p->d;
				const float *kg = p->k + g * nk + (size_t)k0 * p->d;

				for (c = 0; c < n; c++)
					for (i = 0; i < p->d; i++)
						kt[(size_t)i * n + c] = kg[(size_t)c *
						    p->d + i];
			}
	}
	if (build_paged(spec, p, kv_heads, err, errlen) != 0)
		goto fail;
	/* Scores and sums that overflow float32, head by head (a packed
	 * batch: sequence by sequence). */
	for (h = 0; h < (p->nseq > 0 ? p->nseq * heads : heads); h++) {
		if (p->nseq > 0) {
			problem_head(p, h / p->nseq, &head);
			problem_seq(&head, h % p->nseq, &one);
		} else
			problem_head(p, h, &one);
		if ((!p->scores_mode && check_score_range(&one, err, errlen) != 0) ||
		    check_value_range(&one, v.name != NULL ? v.name : "V", err,
		    errlen) != 0)
			goto fail;
	}
	loaded_free(&q);
	loaded_free(&k);
	loaded_free(&v);
	loaded_free(&s);
	return 0;

fail:
	loaded_free(&q);
	loaded_free(&k);
	loaded_free(&v);
	loaded_free(&s);
	problem_free(p);
	return -1;
}

/*
 * The backward's sums of dO, as check_score_range and check_value_range
 * bound the forward's: dV_j = sum_i P_ij dO_i with every P <= 1, so a
 * column of |dO| must add up within float32's range; dP_ij = dO_i . V_j
 * is bounded by |dO_i| |V_j| (Cauchy-Schwarz), and when that bound does
 * not settle it, the pairs are searched in order for the first whose sum
 * of |dO_ix V_jx| does not fit.  (The rest the backward finds itself:
 * backward_check_grads.)
 */
static int
check_grad_range(const struct problem *p, const float *dout, const char *name,
    char *err, size_t errlen)
{
	double on = 0.0, vn = 0.0, margin = 1.0 + (double)p->dv * 0x1p-23;
	int rows = problem_rows(p), r, c, x;

	for (x = 0; x < p->dv; x++) {
		double sum = 0.0;
		for (r = 0; r < rows; r++)
			sum += fabs((double)dout[(size_t)r * p->dv + x]);
		if (sum * margin > FLT_MAX)
			return util_error(err, errlen, "%s: column %d adds up to %.3g "
			    "over the %d query rows, beyond float32's range (%.3g): "
			    "the backward's dV could overflow; scale dO down", name, x,
			    sum, rows, (double)FLT_MAX);
	}
	for (r = 0; r < rows; r++) {
		double n = 0.0;
		for (x = 0; x < p->dv; x++)
			n += (double)dout[(size_t)r * p->dv + x] *
			    dout[(size_t)r * p->dv + x];
		on = n > on ? n : on;
	}
	for (c = 0; c < p->tk * (p->kv_heads > 0 ? p->kv_heads : 1); c++) {
		double n = 0.0;
		for (x = 0; x < p->dv; x++)
			n += (double)p->v[(size_t)c * p->dv + x] * p->v[(size_t)c * p->dv + x];
		vn = n > vn ? n : vn;
	}
	if (sqrt(on) * sqrt(vn) * margin <= FLT_MAX)
		return 0;
	for (r = 0; r < rows; r++)
		for (c = 0; c < p->tk; c++) {
			double a = 0.0;
			for (x = 0; x < p->dv; x++)
				a += fabs((double)dout[(size_t)r * p->dv + x] *
				    p->v[(size_t)c * p->dv + x]);
			if (a * margin > FLT_MAX)
				return util_error(err, errlen, "%s: row %d times V's row "
				    "%d overflows float32 (|dO|·|v| reaches %.3g; float32 "
				    "holds up to %.3g): the backward's dP could overflow; "
				    "scale dO or V down", name, r, c, a, (double)FLT_MAX);
		}
	return 0;
}

int
problem_grad_output(const struct problem_spec *spec, const struct problem *p,
    float **out, char *err, size_t errlen)
{
	struct inputs_rng rng;
	struct loaded g;
	size_t n = (size_t)problem_rows(p) * (size_t)p->dv, e;

	*out = NULL;
	/* The shape from the header first, then exactly that many values. */
	if (describe(&spec->dout, "--grad-output", 1, &g, err, errlen) != 0)
		goto fail;
	if (g.name != NULL && (g.rows != problem_rows(p) || g.cols != p->dv)) {
		util_error(err, errlen, "%s is %d x %d, but dO has the shape of "
		    "O: %d x %d (Tq x dv)", g.name, g.rows, g.cols,
		    problem_rows(p), p->dv);
		goto fail;
	}
	if (load(&g, err, errlen) != 0)
		goto fail;
	if (g.data == NULL) {
		g.data = util_calloc(n, sizeof(float), "dO", err, errlen);
		if (g.data == NULL)
			goto fail;
		/* Its own stream: dO does not repeat Q's numbers. */
		inputs_rng_seed(&rng, spec->seed ^ 0x6772616420646f75ULL);
		for (e = 0; e < n; e++)
			g.data[e] = (float)inputs_rng_normal(&rng);
	} else if (check_finite(&g, 0, err, errlen) != 0)
		goto fail;
	if (round_checked(p->dtype, g.data, (long)n, "dO", err, errlen) != 0 ||
	    check_grad_range(p, g.data, g.name != NULL ? g.name : "dO", err,
	    errlen) != 0)
		goto fail;
	*out = g.data;
	g.data = NULL;
	loaded_free(&g);
	return 0;
fail:
	loaded_free(&g);
	return -1;
}
