/* compare.c - |got - ref| <= atol + rtol |ref|, and the figures around it. */
#include "config.h"

#include "compare.h"

#include <math.h>
#include <string.h>

int
compare_close(double got, double ref, double atol, double rtol)
{
	if (isnan(got) || isnan(ref))
		return 0;
	if (isinf(got) || isinf(ref))
		return got == ref;
	return fabs(got - ref) <= atol + rtol * fabs(ref);
}

int
compare_arrays(const float *got, const double *ref, long n, double atol,
    double rtol, struct compare_result *out)
{
	double refmax = 0.0, diff, sq = 0.0;
	long i, finite = 0;

	memset(out, 0, sizeof *out);
	out->worst = -1;
	for (i = 0; i < n; i++) {
		if (!compare_close(got[i], ref[i], atol, rtol)) {
			if (out->failures < COMPARE_FIRST)
				out->first[out->failures] = i;
			out->failures++;
		}
		if (isfinite(ref[i]) && fabs(ref[i]) > refmax)
			refmax = fabs(ref[i]);
		if (isfinite(got[i]) && isfinite(ref[i])) {
			diff = fabs((double)got[i] - ref[i]);
			sq += diff * diff;
			finite++;
			if (out->worst < 0 || diff > out->max_abs) {
				out->max_abs = diff;
				out->worst = i;
			}
		} else if (!(isinf(got[i]) && got[i] == ref[i])) {
			out->max_abs = INFINITY;	/* NaN, or inf against finite */
			out->worst = i;
		}
	}
	out->max_rel = refmax > 0.0 ? out->max_abs / refmax : out->max_abs;
	out->rmse = out->max_abs == INFINITY ? INFINITY :
	    finite > 0 ? sqrt(sq / (double)finite) : 0.0;
	return out->failures != 0;
}
