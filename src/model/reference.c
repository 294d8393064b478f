/*
 * reference.c - plain attention in double, and in float32 (reference.h).
 *
 * The double reference is one function of one row, reference_row(): a
 * row depends on nothing but p and its index, so rows may be computed in
 * any order, by any thread, and come out the same bits.
 */
#include "config.h"

#include "reference.h"
#include "util.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

double
reference_score(const struct problem *p, int r, int c, double x)
{
	return reference_score_head(p, 0, r, c, x);
}

double
reference_score_head(const struct problem *p, int h, int r, int c, double x)
{
	struct mask_rule m = problem_mask(p, h);
	double dist = fabs((double)r + p->tk - p->tq - c);

	if (x == -INFINITY)
		return x;	/* a scores problem's masked entry stays masked */
	if (m.softcap > 0.0f)
		x = (double)m.softcap * tanh(x / (double)m.softcap);
	return x - (double)m.slope * dist;
}

double
reference_keep(const struct problem *p, int r, int c)
{
	struct mask_rule m = problem_mask(p, 0);

	if (!mask_rule_has(m, MASK_DROPOUT))
		return 1.0;
	return mask_rule_keep(m, r, c) ? 1.0 / (1.0 - (double)m.dropout) : 0.0;
}

double
reference_dscore(const struct problem *p, double x)
{
	double t;

	if (!(p->mask.softcap > 0.0f))
		return 1.0;
	t = tanh(x / (double)p->mask.softcap);
	return 1.0 - t * t;
}

/*
 * Row r of O (dv) and its lse, with s and pr scratch rows of Tk doubles:
 * S's row (masked entries -inf), its max m, P = exp(S - m), l = sum P,
 * O = (P o Z) V / l with Z dropout's keep / (1 - p) (1 without dropout;
 * l sums the undropped P), lse = m + log l.  A row that sees no key:
 * O = 0, lse = -inf.
 */
static void
reference_row(const struct problem *p, int r, double *s, double *pr,
    double *orow, double *lse)
{
	double m, l;
	int c, x;

	m = -INFINITY;
	for (c = 0; c < p->tk; c++) {
		double dot = 0.0;
		if (p->scores_mode)
			dot = p->s[(size_t)r * p->tk + c];
		else {
			for (x = 0; x < p->d; x++)
				dot += (double)p->q[(size_t)r * p->d + x] *
				    (double)p->k[(size_t)c * p->d + x];
			dot *= (double)p->scale;
		}
		s[c] = problem_visible(p, r, c) ? reference_score(p, r, c, dot) :
		    -INFINITY;
		if (s[c] > m)
			m = s[c];
	}
	memset(orow, 0, (size_t)p->dv * sizeof *orow);
	if (isinf(m)) {			/* the row sees no key */
		*lse = -INFINITY;
		return;
	}
	l = 0.0;
	for (c = 0; c < p->tk; c++) {
		pr[c] = exp(s[c] - m);
		l += pr[c];
	}
	for (c = 0; c < p->tk; c++) {
		double z = pr[c] == 0.0 ? 0.0 : pr[c] * reference_keep(p, r, c);

		if (z == 0.0)
			continue;
		for (x = 0; x < p->dv; x++)
			orow[x] += z * (double)p->v[(size_t)c * p->dv + x];
	}
	for (x = 0; x < p->dv; x++)
		orow[x] /= l;
	*lse = m + log(l);
}

/* One thread's share of reference_rows: rows first, first + step, ...
 * of the list (interleaved, so a causal problem's long late rows are
 * shared out evenly). */
struct reference_share {
	const struct problem *p;
	const int *rows;	/* NULL: row i is row i */
	int nrows, first, step;
	double *s, *pr;		/* its scratch, Tk each */
	double *o, *lse;
	pthread_t thread;
	int started;
};

static void *
reference_share_run(void *arg)
{
	struct reference_share *sh = arg;
	int i;

	for (i = sh->first; i < sh->nrows; i += sh->step)
		reference_row(sh->p, sh->rows != NULL ? sh->rows[i] : i, sh->s,
		    sh->pr, sh->o + (size_t)i * sh->p->dv, &sh->lse[i]);
	return NULL;
}

int
reference_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > REFERENCE_MAX_THREADS ? REFERENCE_MAX_THREADS : (int)n;
}

int
reference_rows(const struct problem *p, const int *rows, int nrows,
    int threads, double *o, double *lse, char *err, size_t errlen)
{
	struct reference_share *sh;
	double *scratch;
	int t;

	if (problem_refuse_packed(p, "the double reference",
	    err, errlen) != 0)
		return -1;

	if (threads <= 0)
		threads = reference_threads();
	if (threads > REFERENCE_MAX_THREADS)
		threads = REFERENCE_MAX_THREADS;
	if (threads > nrows)
		threads = nrows > 0 ? nrows : 1;
	sh = util_calloc((size_t)threads, sizeof *sh, "reference threads", err,
	    errlen);
	scratch = util_calloc((size_t)threads * 2 * (size_t)(p->tk + 1),
	    sizeof *scratch, "reference S and P rows", err, errlen);
	if (sh == NULL || scratch == NULL) {
		free(sh);
		free(scratch);
		return -1;
	}
	for (t = 0; t < threads; t++) {
		sh[t].p = p;
		sh[t].rows = rows;
		sh[t].nrows = nrows;
		sh[t].first = t;
		sh[t].step = threads;
		sh[t].s = scratch + (size_t)t * 2 * (size_t)(p->tk + 1);
		sh[t].pr = sh[t].s + p->tk + 1;
		sh[t].o = o;
		sh[t].lse = lse;
	}
	/* A thread that cannot be started has its share run here: the rows
	 * are the same either way. */
	for (t = 1; t < threads; t++)
		sh[t].started = pthread_create(&sh[t].thread, NULL,
		    reference_share_run, &sh[t]) == 0;
	reference_share_run(&sh[0]);
	for (t = 1; t < threads; t++) {
		if (sh[t].started)
			pthread_join(sh[t].thread, NULL);
		else
			reference_share_run(&sh[t]);
	}
	free(sh);
	free(scratch);
	return 0;
}

int
reference_attention(const struct problem *p, double *o, double *lse,
    char *err, size_t errlen)
{
	return reference_rows(p, NULL, p->tq, 1, o, lse, err, errlen);
}

int
reference_naive_f32(const struct problem *p, float *o, char *err, size_t errlen)
{
	float *sp, *srow, m, l;
	size_t tk = (size_t)p->tk;
	int r, c, x;

	sp = util_calloc((size_t)p->tq * tk, sizeof *sp, "score matrix", err, errlen);
	if (sp == NULL)
		return -1;
	/* S = scale Q K^T, all of it. */
	for (r = 0; r < p->tq; r++) {
		srow = sp + (size_t)r * tk;
		if (p->scores_mode)
			memcpy(srow, p->s + (size_t)r * tk, tk * sizeof *srow);
		else {
			for (x = 0; x < p->d; x++) {
				const float qx = p->q[(size_t)r * p->d + x];
				const float *kx = p->kt + (size_t)x * tk;
				for (c = 0; c < p->tk; c++)
					srow[c] += qx * kx[c];
			}
			for (c = 0; c < p->tk; c++)
				srow[c] *= p->scale;
		}
		for (c = 0; c < p->tk; c++)
			srow[c] = problem_visible(p, r, c) ? mask_rule_score(
			    problem_mask(p, 0), srow[c], r, c, p->tq, p->tk) :
			    -INFINITY;
	}
	/* P = softmax(S) row by row, in place. */
	for (r = 0; r < p->tq; r++) {
		srow = sp + (size_t)r * tk;
		m = -INFINITY;
		for (c = 0; c < p->tk; c++)
			m = srow[c] > m ? srow[c] : m;
		l = 0.0f;
		for (c = 0; c < p->tk; c++) {
			srow[c] = isinf(m) ? 0.0f : expf(srow[c] - m);
			l += srow[c];
		}
		for (c = 0; c < p->tk; c++)
			srow[c] = l > 0.0f ? srow[c] / l : 0.0f;
	}
	/* O = P V (P dropped and scaled under dropout). */
	memset(o, 0, (size_t)p->tq * p->dv * sizeof *o);
	for (r = 0; r < p->tq; r++) {
		struct mask_rule dm = problem_mask(p, 0);
		srow = sp + (size_t)r * tk;
		for (c = 0; c < p->tk; c++) {
			const float pc = mask_rule_drop(dm, mask_rule_keep(dm, r, c),
			    srow[c]);
			const float *vc = p->v + (size_t)c * p->dv;
			for (x = 0; x < p->dv; x++)
				o[(size_t)r * p->dv + x] += pc * vc[x];
		}
	}
	free(sp);
	return 0;
}
