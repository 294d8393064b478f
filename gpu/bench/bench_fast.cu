/*
 * bench_fast.cu - standalone correctness and speed driver for the fast
 * kernel (gpu/fast.cu), built with plain nvcc, no autotools:
 *
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -I src -I gpu \
 *       -I src gpu/fast.cu gpu/timing.cu gpu/bench/bench_fast.cu \
 *       -o bench_fast
 * (the product's variants; dev/cuda/fast/build.sh builds it over every
 * variant measured, dev/cuda/fast/variants.cu)
 *   ./bench_fast check            every variant, ragged and causal shapes,
 *                                 against a double-precision CPU reference
 *   ./bench_fast bench [V|all]    the shapes of `flashstep bench --gpu`:
 *                                 ms and TFLOP/s of the default variant
 *                                 (or variant V, or every one), sampled
 *                                 rows checked against the CPU
 *
 * Inputs are normal random numbers rounded to fp16 or bf16; the reference
 * sees the same rounded values.  Before every run O and lse are poisoned
 * with NaN, so a value the kernel never wrote fails the check.  Times
 * come from the timing helper every kernel uses (gpu/timing.h); the
 * check holds O and lse to the closeness rule of `flashstep compare`
 * (gpu/gpucheck.h), with the double reference where the simulator would
 * be: P's rounding, which the simulator shares with the kernel and the
 * reference does not, takes at most half of the rule's atol.
 * Exit status: 0 all passed, 1 a check failed or CUDA failed, 2 usage.
 */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.cuh"
#include "fast.h"
#include "timing.h"

extern "C" {
#include "gpucheck.h"
}

/* n random values on the device at d; the same values as floats in f. */
static void
bench_fill(int bf16, size_t n, uint64_t seed, uint16_t *d, uint16_t *h16,
    float *f)
{
	bench_fill_kernel<<<1024, 256>>>(d, n, seed, bf16);
	CK(cudaGetLastError());
	CK(cudaMemcpy(h16, d, n * 2, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n; i++)
		f[i] = bench_from16(bf16, h16[i]);
}

/*
 * Reference for row r of one head: o (d values) and lse, in double.
 * q (tq, d), k and v (tk, d).  A row that sees no key: 0 and -inf.
 */
static void
bench_ref_row(const float *q, const float *k, const float *v, int tq,
    int tk, int d, int causal, int r, double *s, double *o, double *lse)
{
	const double scale = 1.0 / sqrt((double)d);
	double mx = -INFINITY, l = 0;
	int n = tk;

	if (causal) {
		long lim = (long)r + tk - tq + 1;
		n = lim < 0 ? 0 : lim < tk ? (int)lim : tk;
	}
	for (int c = 0; c < n; c++) {
		double acc = 0;
		for (int x = 0; x < d; x++)
			acc += (double)q[(size_t)r * d + x] *
			    k[(size_t)c * d + x];
		s[c] = acc * scale;
		if (s[c] > mx)
			mx = s[c];
	}
	for (int x = 0; x < d; x++)
		o[x] = 0;
	for (int c = 0; c < n; c++) {
		double p = exp(s[c] - mx);
		l += p;
		for (int x = 0; x < d; x++)
			o[x] += p * v[(size_t)c * d + x];
	}
	for (int x = 0; x < d; x++)
		o[x] = n > 0 ? o[x] / l : 0;
	*lse = n > 0 ? mx + log(l) : -INFINITY;
}

struct bench_bufs {
	uint16_t *dq, *dk, *dv, *do_;
	float *dlse;
	uint16_t *hq, *hk, *hv, *ho;
	float *fq, *fk, *fv, *hlse;
};

static void
bench_alloc(struct bench_bufs *b, const struct shape *s)
{
	size_t nq = (size_t)s->b * s->h * s->tq * s->d;
	size_t nk = (size_t)s->b * s->h * s->tk * s->d;
	size_t nl = (size_t)s->b * s->h * s->tq;

	CK(cudaMalloc(&b->dq, nq * 2));
	CK(cudaMalloc(&b->dk, nk * 2));
	CK(cudaMalloc(&b->dv, nk * 2));
	CK(cudaMalloc(&b->do_, nq * 2));
	CK(cudaMalloc(&b->dlse, nl * 4));
	b->hq = (uint16_t *)malloc(nq * 2);
	b->hk = (uint16_t *)malloc(nk * 2);
	b->hv = (uint16_t *)malloc(nk * 2);
	b->ho = (uint16_t *)malloc(nq * 2);
	b->fq = (float *)malloc(nq * 4);
	b->fk = (float *)malloc(nk * 4);
	b->fv = (float *)malloc(nk * 4);
	b->hlse = (float *)malloc(nl * 4);
	if (!b->hq || !b->hk || !b->hv || !b->ho || !b->fq || !b->fk ||
	    !b->fv || !b->hlse) {
		fprintf(stderr, "bench_fast: out of host memory\n");
		exit(1);
	}
}

static void
bench_release(struct bench_bufs *b)
{
	CK(cudaFree(b->dq));
	CK(cudaFree(b->dk));
	CK(cudaFree(b->dv));
	CK(cudaFree(b->do_));
	CK(cudaFree(b->dlse));
	free(b->hq); free(b->hk); free(b->hv); free(b->ho);
	free(b->fq); free(b->fk); free(b->fv); free(b->hlse);
}

/* Fresh random inputs (a new seed each call), on the device and here. */
static void
bench_inputs(struct bench_bufs *b, const struct shape *s, int bf16)
{
	static uint64_t seed = 1;
	size_t nq = (size_t)s->b * s->h * s->tq * s->d;
	size_t nk = (size_t)s->b * s->h * s->tk * s->d;

	bench_fill(bf16, nq, seed++, b->dq, b->hq, b->fq);
	bench_fill(bf16, nk, seed++, b->dk, b->hk, b->fk);
	bench_fill(bf16, nk, seed++, b->dv, b->hv, b->fv);
}

/* Poisons O and lse (0xff bytes: NaN in all three types), runs. */
static int
bench_run(struct bench_bufs *b, const struct shape *s, int bf16,
    int variant)
{
	size_t nq = (size_t)s->b * s->h * s->tq * s->d;
	size_t nl = (size_t)s->b * s->h * s->tq;
	char err[256];

	CK(cudaMemset(b->do_, 0xff, nq * 2));
	CK(cudaMemset(b->dlse, 0xff, nl * 4));
	if (fast_attention_fwd(b->dq, b->dk, b->dv, b->do_, b->dlse, s->b,
	    s->h, s->tq, s->tk, s->d, bf16 ? FAST_BF16 : FAST_FP16, s->causal,
	    0.f, variant, NULL, err, sizeof err) != 0) {
		fprintf(stderr, "bench_fast: %s\n", err);
		return -1;
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(b->ho, b->do_, nq * 2, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(b->hlse, b->dlse, nl * 4, cudaMemcpyDeviceToHost));
	return 0;
}

/* The rule's numbers for head bh (gpucheck.h): delta from the largest
 * row norms of its Q and K, max |V|. */
static void
bench_tolerance(const struct bench_bufs *b, const struct shape *s, int bf16,
    int bh, struct gpucheck_tol *tol)
{
	const size_t qo = (size_t)bh * s->tq * s->d;
	const size_t ko = (size_t)bh * s->tk * s->d;
	double nq = 0, nk = 0, vmax = 0, sum;

	for (int r = 0; r < s->tq; r++) {
		sum = 0;
		for (int x = 0; x < s->d; x++)
			sum += (double)b->fq[qo + (size_t)r * s->d + x] *
			    b->fq[qo + (size_t)r * s->d + x];
		nq = fmax(nq, sum);
	}
	for (int c = 0; c < s->tk; c++) {
		sum = 0;
		for (int x = 0; x < s->d; x++) {
			sum += (double)b->fk[ko + (size_t)c * s->d + x] *
			    b->fk[ko + (size_t)c * s->d + x];
			vmax = fmax(vmax, fabs(b->fv[ko + (size_t)c * s->d + x]));
		}
		nk = fmax(nk, sum);
	}
	gpucheck_tol_set(tol, bf16 ? DTYPE_BF16 : DTYPE_FP16,
	    gpucheck_tensor_delta(s->d, sqrt(nq) * sqrt(nk) / sqrt((double)s->d)),
	    vmax);
}

/*
 * Row r of head bh against the reference; adds its mismatches to bad and
 * returns the sum, raising *maxerr to the worst |error| of O.
 */
static long
bench_check_row(const struct bench_bufs *b, const struct shape *s,
    int bf16, int bh, int r, const struct gpucheck_tol *tol, double *sc,
    double *maxerr, long bad)
{
	const size_t qo = (size_t)bh * s->tq * s->d;
	const size_t ko = (size_t)bh * s->tk * s->d;
	const size_t row = (size_t)bh * s->tq + r;
	const uint16_t *got = b->ho + row * s->d;
	double o[128], lse;
	char where[96];

	bench_ref_row(b->fq + qo, b->fk + ko, b->fv + ko, s->tq, s->tk, s->d,
	    s->causal, r, sc, o, &lse);
	for (int x = 0; x < s->d; x++) {
		double g = bench_from16(bf16, got[x]);

		snprintf(where, sizeof where, "O[bh %d][%d][%d]", bh, r, x);
		bad = bench_compare("O", g, o[x], gpucheck_atol_acc(tol, 1.0),
		    tol->rtol_acc, where, bad);
		if (isfinite(g) && fabs(g - o[x]) > *maxerr)
			*maxerr = fabs(g - o[x]);
	}
	snprintf(where, sizeof where, "lse[bh %d][%d]", bh, r);
	return bench_compare("lse", b->hlse[row], lse, tol->rtol, tol->rtol,
	    where, bad);
}

/*
 * Checks rows of every (batch, head): all rows when stride is 1, else
 * rows 0, stride, 2 stride, ... and the last.  Returns the number of
 * mismatches; the worst |error| of O goes to *maxerr.
 */
static long
bench_check(const struct bench_bufs *b, const struct shape *s, int bf16,
    int stride, double *maxerr)
{
	double *sc = (double *)malloc((size_t)s->tk * sizeof *sc);
	long bad = 0;

	if (sc == NULL) {
		fprintf(stderr, "bench_fast: out of host memory\n");
		exit(1);
	}
	if (stride < 1)
		stride = 1;
	*maxerr = 0;
	for (int bh = 0; bh < s->b * s->h; bh++) {
		struct gpucheck_tol tol;

		bench_tolerance(b, s, bf16, bh, &tol);
		for (int r = 0; r < s->tq; r += stride) {
			if (r + stride >= s->tq)
				r = s->tq - 1;
			bad = bench_check_row(b, s, bf16, bh, r, &tol, sc,
			    maxerr, bad);
		}
	}
	free(sc);
	return bad;
}

static void
bench_tiling(const struct fast_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "%dx%d/%dw%s", cfg->br, cfg->bc, cfg->warps,
	    cfg->q_in_regs ? "/qr" : "");
}

/* Every variant on small ragged and causal shapes, every element. */
static int
bench_cmd_check(void)
{
	static const struct shape shapes[] = {
		{ 1, 1, 1, 1, 64, 0 },
		{ 1, 2, 17, 33, 64, 0 },
		{ 2, 3, 100, 37, 64, 1 },	/* rows that see no key */
		{ 1, 2, 129, 257, 64, 1 },
		{ 1, 1, 300, 300, 64, 1 },
		{ 1, 1, 1, 1, 128, 1 },
		{ 1, 2, 129, 65, 128, 0 },
		{ 2, 1, 70, 300, 128, 1 },
		{ 1, 2, 255, 255, 128, 1 },
		{ 1, 1, 200, 130, 128, 1 },
	};
	int failed = 0;

	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const struct shape *s = &shapes[i];
		struct bench_bufs b;

		bench_alloc(&b, s);
		for (int bf16 = 0; bf16 < 2; bf16++) {
			struct fast_config cfg;
			char tiling[32];
			double maxerr;
			long bad;

			bench_inputs(&b, s, bf16);
			for (int v = 0; fast_attention_variant(s->d, v, &cfg) ==
			    0; v++) {
				if (bench_run(&b, s, bf16, v) != 0)
					return 1;
				bad = bench_check(&b, s, bf16, 1, &maxerr);
				bench_tiling(&cfg, tiling, sizeof tiling);
				printf("check %s B%d H%d Tq%-4d Tk%-4d d%-3d "
				    "%-6s v%d %-12s max|err| %.2e %s\n",
				    bf16 ? "bf16" : "fp16", s->b, s->h, s->tq,
				    s->tk, s->d, s->causal ? "causal" : "full",
				    v, tiling, maxerr, bad ? "FAIL" : "ok");
				failed |= bad != 0;
			}
		}
		bench_release(&b);
	}
	printf("check: %s\n", failed ? "FAILED" : "all passed");
	return failed;
}

/* One run of variant v, for the timing helper. */
struct bench_timed {
	struct bench_bufs *b;
	const struct shape *s;
	int bf16, v;
};

static int
bench_enqueue(void *ctx, char *err, size_t errlen)
{
	const struct bench_timed *t = (const struct bench_timed *)ctx;

	return fast_attention_fwd(t->b->dq, t->b->dk, t->b->dv, t->b->do_,
	    t->b->dlse, t->s->b, t->s->h, t->s->tq, t->s->tk, t->s->d, t->bf16,
	    t->s->causal, 0.f, t->v, NULL, err, errlen);
}

/* The median of 20 timed runs of variant v after a warm-up (timing.h). */
static double
bench_time(struct bench_bufs *b, const struct shape *s, int bf16, int v)
{
	struct bench_timed t = { b, s, bf16, v };
	char err[256];
	double ms;

	if (timing_median_ms(bench_enqueue, &t, 20, &ms, err, sizeof err) != 0) {
		fprintf(stderr, "bench_fast: %s\n", err);
		exit(1);
	}
	return ms;
}

/*
 * One benchmark shape: variant -1 the default, -2 every one, else that
 * one.  Prints a line per variant; returns 1 when a check failed.
 */
static int
bench_shape(const struct shape *s, int bf16, int variant)
{
	double flops = 4.0 * s->b * s->h * (double)s->tq * s->tk * s->d;
	struct fast_config cfg;
	struct bench_bufs b;
	int failed = 0;

	if (s->causal)
		flops /= 2;
	bench_alloc(&b, s);
	bench_inputs(&b, s, bf16);
	for (int v = variant == -2 ? 0 : variant;
	    fast_attention_variant(s->d, v, &cfg) == 0; v++) {
		char tiling[32];
		double maxerr, ms;
		long bad;

		if (bench_run(&b, s, bf16, v) != 0)
			exit(1);
		/* Rows of every head, spread over the sequence. */
		bad = bench_check(&b, s, bf16, s->tq / 4, &maxerr);
		ms = bench_time(&b, s, bf16, v);
		bench_tiling(&cfg, tiling, sizeof tiling);
		printf("%-5s %4d %6d %-6s %-12s %9.3f %9.1f %10.2e %s\n",
		    bf16 ? "bf16" : "fp16", s->d, s->tq,
		    s->causal ? "causal" : "full", tiling, ms,
		    flops / (ms * 1e-3) / 1e12, maxerr, bad ? "FAIL" : "");
		fflush(stdout);
		failed |= bad != 0;
		if (variant != -2)
			break;
	}
	bench_release(&b);
	return failed;
}

/* The shapes of `flashstep bench --gpu`: B T = 32768, H = 16. */
static int
bench_cmd_bench(int variant)
{
	static const int ts[] = { 1024, 4096, 16384 };
	static const int ds[] = { 64, 128 };
	int failed = 0;

	printf("%-5s %4s %6s %-6s %-12s %9s %9s %10s\n", "dtype", "d", "T",
	    "mask", "Br x Bc/w", "ms", "TFLOP/s", "max|err|");
	/* i = ((dtype * 2 + d) * 3 + T) * 2 + causal */
	for (int i = 0; i < 24; i++) {
		const int t = ts[i / 2 % 3];
		struct shape s = { 32768 / t, 16, t, t, ds[i / 6 % 2], i % 2 };

		failed |= bench_shape(&s, i / 12, variant);
	}
	return failed;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "check") == 0)
		return bench_cmd_check();
	if (argc >= 2 && argc <= 3 && strcmp(argv[1], "bench") == 0) {
		if (argc == 2)
			return bench_cmd_bench(-1);
		if (strcmp(argv[2], "all") == 0)
			return bench_cmd_bench(-2);
		if (argv[2][0] >= '0' && argv[2][0] <= '9')
			return bench_cmd_bench(atoi(argv[2]));
	}
	fprintf(stderr, "usage: bench_fast check | bench [variant | all]\n");
	return 2;
}
