/* fp8.c - block quantization and incoherent processing (see fp8.h). */
#include "config.h"

#include "fp8.h"
#include "fp8_rule.h"
#include "inputs.h"
#include "problem.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct fp8_bug_mode fp8_bugs[FP8_BUGS] = {
	[FP8_BUG_NONE] = { "none", "block scales, as asked", 0 },
	[FP8_BUG_WHOLE_TENSOR] = { "whole-tensor", "one scale for each whole "
	    "tensor: one outlier sets the range of every row", 0 },
	[FP8_BUG_ROTATE_Q_ONLY] = { "rotate-q-only", "--hadamard rotates Q "
	    "and not K: Q K^T is no longer the scores", 1 },
};

const struct fp8_bug_mode *
fp8_bug_mode(enum fp8_bug b)
{
	return &fp8_bugs[b];
}

int
fp8_bug_parse(const char *word, enum fp8_bug *out)
{
	int b;

	for (b = 0; b < FP8_BUGS; b++)
		if (strcmp(word, fp8_bugs[b].word) == 0) {
			*out = (enum fp8_bug)b;
			return 0;
		}
	return -1;
}

int
fp8_pow2(int d)
{
	return d > 0 && (d & (d - 1)) == 0;
}

/* The fast Walsh-Hadamard transform (Sylvester's order), then 1/sqrt(d):
 * orthogonal, its own inverse. */
void
fp8_rotate_row(const signed char *signs, int d, double *x)
{
	double norm = 1.0 / sqrt((double)d);
	int i, j, h;

	for (i = 0; i < d; i++)
		x[i] *= signs[i];
	for (h = 1; h < d; h *= 2)
		for (i = 0; i < d; i += 2 * h)
			for (j = i; j < i + h; j++) {
				double a = x[j], b = x[j + h];
				x[j] = a + b;
				x[j + h] = a - b;
			}
	for (i = 0; i < d; i++)
		x[i] *= norm;
}

int
fp8_block_of(const struct fp8_tensor *t, int r)
{
	if (t->whole)
		return 0;
	return (r / t->head_rows) * t->blocks_per_head +
	    (r % t->head_rows) / t->block;
}

float
fp8_value(const struct fp8_tensor *t, int r, int c)
{
	return fp8_rule_decode(t->code[(size_t)r * t->cols + c]) *
	    t->scale[fp8_block_of(t, r)];
}

static void
tensor_free(struct fp8_tensor *t)
{
	if (t->before != t->exact)
		free(t->before);
	free(t->exact);
	free(t->code);
	free(t->scale);
	memset(t, 0, sizeof *t);
}

void
fp8_free(struct fp8_data *f)
{
	if (f == NULL)
		return;
	tensor_free(&f->q);
	tensor_free(&f->k);
	tensor_free(&f->v);
	free(f->signs);
	free(f);
}

/* x (rows x d), every row multiplied by M, into a new array. */
static float *
rotated(const float *x, int rows, int d, const signed char *signs,
    const char *name, char *err, size_t errlen)
{
	float *out = util_calloc((size_t)rows * d, sizeof *out, name, err, errlen);
	double *row = util_calloc((size_t)d, sizeof *row, name, err, errlen);
	int r, c;

	if (out == NULL || row == NULL) {
		free(out);
		free(row);
		return NULL;
	}
	for (r = 0; r < rows; r++) {
		for (c = 0; c < d; c++)
			row[c] = x[(size_t)r * d + c];
		fp8_rotate_row(signs, d, row);
		for (c = 0; c < d; c++)
			out[(size_t)r * d + c] = (float)row[c];
	}
	free(row);
	return out;
}

/*
 * Takes *data (the input as given) into t, quantizes it and leaves the
 * dequantized values in *data.  The block's scale is amax / 448 in
 * float32; a block of zeros gets scale 1.
 */
static int
quantize(struct fp8_tensor *t, const char *name, float **data, int rows,
    int cols, int head_rows, int block, int whole, const signed char *signs,
    char *err, size_t errlen)
{
	size_t n = (size_t)rows * cols, i;
	float *deq;
	int b;

	t->name = name;
	t->rows = rows;
	t->cols = cols;
	t->head_rows = head_rows;
	t->block = block < head_rows ? block : head_rows;
	t->whole = whole;
	t->blocks_per_head = whole ? 1 : (head_rows + t->block - 1) / t->block;
	t->nblocks = whole ? 1 : t->blocks_per_head * (rows / head_rows);
	t->exact = *data;
	*data = NULL;
	t->rotated = signs != NULL;
	t->before = signs != NULL ? rotated(t->exact, rows, cols, signs, name,
	    err, errlen) : t->exact;
	t->code = util_calloc(n > 0 ? n : 1, 1, name, err, errlen);
	t->scale = util_calloc((size_t)t->nblocks, sizeof *t->scale, name, err,
	    errlen);
	deq = util_calloc(n > 0 ? n : 1, sizeof *deq, name, err, errlen);
	if (t->before == NULL || t->code == NULL || t->scale == NULL ||
	    deq == NULL) {
		free(deq);
		return -1;
	}
	for (b = 0; b < t->nblocks; b++)
		t->scale[b] = 0.0f;
	for (i = 0; i < n; i++) {
		float *s = &t->scale[fp8_block_of(t, (int)(i / (size_t)cols))];
		float a = fabsf(t->before[i]);
		if (a > *s)
			*s = a;
	}
	for (b = 0; b < t->nblocks; b++)
		t->scale[b] = t->scale[b] > 0.0f ? t->scale[b] / FP8_RULE_MAX : 1.0f;
	for (i = 0; i < n; i++) {
		float s = t->scale[fp8_block_of(t, (int)(i / (size_t)cols))];
		t->code[i] = fp8_rule_encode(t->before[i] / s);
		deq[i] = fp8_rule_decode(t->code[i]) * s;
	}
	*data = deq;
	return 0;
}

int
fp8_quantize(struct problem *p, const struct fp8_spec *spec, int br, int bc,
    uint64_t seed, char *err, size_t errlen)
{
	struct fp8_data *f;
	int heads = p->heads > 0 ? p->heads : 1;
	int kv_heads = p->kv_heads > 0 ? p->kv_heads : 1;
	int whole = spec->bug == FP8_BUG_WHOLE_TENSOR;
	int bq = spec->block > 0 ? spec->block : br;
	int bk = spec->block > 0 ? spec->block : bc;
	const signed char *kmat;

	if (p->scores_mode)
		return util_error(err, errlen, "--dtype fp8 quantizes Q, K and V; "
		    "a scores problem (--scores) has no Q or K");
	if (spec->hadamard && !fp8_pow2(p->d))
		return util_error(err, errlen, "--hadamard needs d a power of two "
		    "(the Walsh-Hadamard matrix has order 2^n), not d = %d", p->d);
	f = util_calloc(1, sizeof *f, "fp8", err, errlen);
	if (f == NULL)
		return -1;
	f->spec = *spec;
	f->d = p->d;
	p->fp8 = f;
	if (spec->hadamard) {
		struct inputs_rng r;
		int i;

		f->signs = util_calloc((size_t)p->d, 1, "signs", err, errlen);
		if (f->signs == NULL)
			return -1;
		/* A stream apart from the inputs': the same signs for any
		 * input kind or file. */
		inputs_rng_seed(&r, seed ^ 0x4861646d61726421ULL);
		for (i = 0; i < p->d; i++)
			f->signs[i] = (inputs_rng_next(&r) >> 63) ? -1 : 1;
	}
	kmat = spec->bug == FP8_BUG_ROTATE_Q_ONLY ? NULL : f->signs;
	if (quantize(&f->q, "Q", &p->q, heads * p->tq, p->d, p->tq, bq, whole,
	    f->signs, err, errlen) != 0 ||
	    quantize(&f->k, "K", &p->k, kv_heads * p->tk, p->d, p->tk, bk, whole,
	    kmat, err, errlen) != 0 ||
	    quantize(&f->v, "V", &p->v, kv_heads * p->tk, p->dv, p->tk, bk, whole,
	    NULL, err, errlen) != 0)
		return -1;
	return 0;
}

void
fp8_exact(const struct problem *p, struct problem *out)
{
	*out = *p;
	if (p->fp8 == NULL)
		return;
	out->q = p->fp8->q.exact;
	out->k = p->fp8->k.exact;
	out->v = p->fp8->v.exact;
	out->kt = NULL;
	out->dtype = DTYPE_FP32;
	out->fp8 = NULL;
}

void
fp8_stats(const struct fp8_tensor *t, struct fp8_stats *s)
{
	size_t n = (size_t)t->rows * t->cols, i;
	double se = 0.0, sx = 0.0;
	int b;

	memset(s, 0, sizeof *s);
	for (i = 0; i < n; i++) {
		float s_b = t->scale[fp8_block_of(t, (int)(i / (size_t)t->cols))];
		double x = t->before[i];
		double e = fabs((double)(fp8_rule_decode(t->code[i]) * s_b) - x);
		int field = (t->code[i] >> 3) & 15;

		if (fabs(x) > s->amax)
			s->amax = fabs(x);
		if (e > s->max_err)
			s->max_err = e;
		se += e * e;
		sx += x * x;
		if ((t->code[i] & 0x7f) == 0 && x != 0.0)
			s->zeros++;
		else if (field == 0 && (t->code[i] & 0x7f) != 0)
			s->subnormal++;
	}
	s->rms_err = n > 0 ? sqrt(se / (double)n) : 0.0;
	s->rms = n > 0 ? sqrt(sx / (double)n) : 0.0;
	s->min_scale = s->max_scale = t->nblocks > 0 ? t->scale[0] : 0.0;
	for (b = 1; b < t->nblocks; b++) {
		if (t->scale[b] < s->min_scale)
			s->min_scale = t->scale[b];
		if (t->scale[b] > s->max_scale)
			s->max_scale = t->scale[b];
	}
}
