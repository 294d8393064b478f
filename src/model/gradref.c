/* gradref.c - attention's gradients in double (gradref.h). */
#include "config.h"

#include "gradref.h"
#include "reference.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Both functions: magnitudes sums |terms| instead of terms. */
static int
gradref_sums(const struct problem *p, const float *dout, int magnitudes,
    double *dq, double *dk, double *dv, double *ds, char *err, size_t errlen)
{
	const int tk = p->tk, d = p->d, dvw = p->dv, qk = !p->scores_mode;
	double *s, *pr, *o, m, l, dsum, dp, g;
	int r, c, x;

	s = util_calloc((size_t)tk, sizeof *s, "reference S row", err, errlen);
	pr = util_calloc((size_t)tk, sizeof *pr, "reference P row", err, errlen);
	o = util_calloc((size_t)dvw, sizeof *o, "reference O row", err, errlen);
	if (s == NULL || pr == NULL || o == NULL) {
		free(s);
		free(pr);
		free(o);
		return -1;
	}
	if (dq != NULL && qk)
		memset(dq, 0, (size_t)p->tq * d * sizeof *dq);
	if (dk != NULL && qk)
		memset(dk, 0, (size_t)tk * d * sizeof *dk);
	if (dv != NULL)
		memset(dv, 0, (size_t)tk * dvw * sizeof *dv);
	if (ds != NULL)
		memset(ds, 0, (size_t)p->tq * tk * sizeof *ds);

	for (r = 0; r < p->tq; r++) {
		const float *gr = dout + (size_t)r * dvw;

		/* The row of S and its softmax. */
		m = -INFINITY;
		for (c = 0; c < tk; c++) {
			double dot = 0.0;
			if (p->scores_mode)
				dot = p->s[(size_t)r * tk + c];
			else {
				for (x = 0; x < d; x++)
					dot += (double)p->q[(size_t)r * d + x] *
					    (double)p->k[(size_t)c * d + x];
				dot *= (double)p->scale;
			}
			/* x (the scaled product) in pr until P replaces it:
			 * the cap's backward reads it. */
			pr[c] = dot;
			s[c] = problem_visible(p, r, c) ? reference_score(p, r, c,
			    dot) : -INFINITY;
			if (s[c] > m)
				m = s[c];
		}
		if (isinf(m))		/* the row sees no key */
			continue;
		l = 0.0;
		for (c = 0; c < tk; c++) {
			/* s holds the cap's derivative from here on: P is all
			 * the rest needs of the score. */
			double x = pr[c];

			pr[c] = exp(s[c] - m);
			s[c] = reference_dscore(p, x);
			l += pr[c];
		}
		memset(o, 0, (size_t)dvw * sizeof *o);
		for (c = 0; c < tk; c++) {
			pr[c] /= l;
			for (x = 0; x < dvw; x++)
				o[x] += pr[c] * reference_keep(p, r, c) *
				    (double)p->v[(size_t)c * dvw + x];
		}
		dsum = 0.0;
		for (x = 0; x < dvw; x++)
			dsum += magnitudes ? fabs((double)gr[x] * o[x]) :
			    (double)gr[x] * o[x];

		/* Each key's part of the gradients. */
		for (c = 0; c < tk; c++) {
			/* Dropout's Z = keep / (1 - p): O_r = sum P Z V, so
			 * dP_rc = Z dO_r . V_c and dV_c += P Z dO_r; D is
			 * dO . O as ever (sum P dP = sum P Z dO . V = D). */
			const double z = reference_keep(p, r, c);

			if (pr[c] == 0.0)
				continue;
			dp = 0.0;
			for (x = 0; x < dvw; x++) {
				double t = (double)gr[x] * (double)p->v[(size_t)c * dvw + x];
				dp += magnitudes ? fabs(t) : t;
			}
			dp *= z;
			g = magnitudes ? pr[c] * (dp + dsum) : pr[c] * (dp - dsum);
			/* Through the cap to the scaled product (ALiBi's bias
			 * is a constant: nothing to go through). */
			g *= magnitudes ? fabs(s[c]) : s[c];
			if (ds != NULL)
				ds[(size_t)r * tk + c] = g;	/* dS_rc */
			if (dv != NULL)
				for (x = 0; x < dvw; x++)
					dv[(size_t)c * dvw + x] += pr[c] * z *
					    (magnitudes ? fabs(gr[x]) : (double)gr[x]);
			if (!qk)
				continue;
			g *= (double)p->scale;
			for (x = 0; x < d; x++) {
				double kx = p->k[(size_t)c * d + x];
				double qx = p->q[(size_t)r * d + x];
				if (dq != NULL)
					dq[(size_t)r * d + x] += g *
					    (magnitudes ? fabs(kx) : kx);
				if (dk != NULL)
					dk[(size_t)c * d + x] += g *
					    (magnitudes ? fabs(qx) : qx);
			}
		}
	}
	free(s);
	free(pr);
	free(o);
	return 0;
}

int
gradref_gradients(const struct problem *p, const float *dout, double *dq,
    double *dk, double *dv, double *ds, char *err, size_t errlen)
{
	if (problem_refuse_packed(p, "the double gradients",
	    err, errlen) != 0)
		return -1;
	return gradref_sums(p, dout, 0, dq, dk, dv, ds, err, errlen);
}

int
gradref_magnitudes(const struct problem *p, const float *dout, double *dq,
    double *dk, double *dv, double *ds, char *err, size_t errlen)
{
	return gradref_sums(p, dout, 1, dq, dk, dv, ds, err, errlen);
}
