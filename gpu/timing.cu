/* timing.cu - the one timing helper of every kernel (timing.h). */
#include <stdlib.h>

#include "cudacheck.h"
#include "timing.h"

static int
timing_cmp(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* The median of n times (sorts them). */
static double
timing_median(float *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, timing_cmp);
	return n % 2 ? t[n / 2] : 0.5 * ((double)t[n / 2 - 1] + t[n / 2]);
}

extern "C" int
timing_median_ms(timing_run_fn run, void *ctx, int repeat, double *ms,
    char *err, size_t errlen)
{
	cudaEvent_t *ev = NULL;
	float *times = NULL;
	int runs = repeat > 0 ? repeat + 1 : 1, r, made = 0, rc = -1;

	*ms = 0;
	ev = (cudaEvent_t *)calloc((size_t)runs + 1, sizeof *ev);
	times = (float *)calloc((size_t)runs, sizeof *times);
	if (ev == NULL || times == NULL) {
		snprintf(err, errlen, "out of memory for the timing events");
		goto fail;
	}
	/* Run r lies between events r and r + 1. */
	for (made = 0; made <= runs; made++)
		CUDA_CHECK(cudaEventCreate(&ev[made]));
	CUDA_CHECK(cudaEventRecord(ev[0]));
	for (r = 0; r < runs; r++) {
		if (run(ctx, err, errlen) != 0)
			goto fail;
		CUDA_CHECK(cudaEventRecord(ev[r + 1]));
	}
	/* A fault while a kernel ran shows here. */
	CUDA_CHECK(cudaEventSynchronize(ev[runs]));
	for (r = 0; r < runs; r++)
		CUDA_CHECK(cudaEventElapsedTime(&times[r], ev[r], ev[r + 1]));
	/* The warm-up is left out when there are timed runs. */
	*ms = runs > 1 ? timing_median(times + 1, runs - 1) : times[0];
	rc = 0;
fail:
	for (r = 0; r < made; r++)
		cudaEventDestroy(ev[r]);
	free(ev);
	free(times);
	return rc;
}
