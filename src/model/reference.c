/* reference.c - plain attention in double, and in float32 (reference.h). */
#include "config.h"

#include "reference.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int
reference_attention(const struct problem *p, double *o, double *lse,
    char *err, size_t errlen)
{
	double *s, *pr, m, l;
	int r, c, x;

	s = util_calloc((size_t)p->tk, sizeof *s, "reference S row", err, errlen);
	pr = util_calloc((size_t)p->tk, sizeof *pr, "reference P row", err, errlen);
	if (s == NULL || pr == NULL) {
		free(s);
		free(pr);
		return -1;
	}
	for (r = 0; r < p->tq; r++) {
		double *orow = o + (size_t)r * p->dv;

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
			s[c] = problem_visible(p, r, c) ? dot : -INFINITY;
			if (s[c] > m)
				m = s[c];
		}
		memset(orow, 0, (size_t)p->dv * sizeof *orow);
		if (isinf(m)) {			/* the row sees no key */
			lse[r] = -INFINITY;
			continue;
		}
		l = 0.0;
		for (c = 0; c < p->tk; c++) {
			pr[c] = exp(s[c] - m);
			l += pr[c];
		}
		for (c = 0; c < p->tk; c++) {
			if (pr[c] == 0.0)
				continue;
			for (x = 0; x < p->dv; x++)
				orow[x] += pr[c] * (double)p->v[(size_t)c * p->dv + x];
		}
		for (x = 0; x < p->dv; x++)
			orow[x] /= l;
		lse[r] = m + log(l);
	}
	free(s);
	free(pr);
	return 0;
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
			if (!problem_visible(p, r, c))
				srow[c] = -INFINITY;
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
	/* O = P V. */
	memset(o, 0, (size_t)p->tq * p->dv * sizeof *o);
	for (r = 0; r < p->tq; r++) {
		srow = sp + (size_t)r * tk;
		for (c = 0; c < p->tk; c++) {
			const float pc = srow[c];
			const float *vc = p->v + (size_t)c * p->dv;
			for (x = 0; x < p->dv; x++)
				o[(size_t)r * p->dv + x] += pc * vc[x];
		}
	}
	free(sp);
	return 0;
}
