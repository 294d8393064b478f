/*
 * bench_wgmma.cu - standalone correctness and speed driver for the Hopper
 * kernel (gpu/wgmma.cu), built with plain nvcc, no autotools.  fast.cu is
 * linked too, for the trace cross-check and the side-by-side timing:
 *
 *   F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I src -I gpu"
 *   nvcc $F -Xcompiler -pthread gpu/wgmma.cu gpu/fast.cu \
 *       gpu/bench/bench_wgmma.cu -o bench_wgmma
 * That is the product's variants; dev/cuda/wgmma/build.sh builds it over
 * every variant measured (dev/cuda/wgmma/variants.cu).
 * V is a variant index, a list "0,2" or "all"; absent: the default.
 *   ./bench_wgmma check [V|all]   every variant (or V), ragged, causal,
 *                                 batched shapes, every element, against a
 *                                 double-precision CPU reference
 *   ./bench_wgmma trace [V|all]   the trace build against a CPU replay of
 *                                 the same tiling, and against the fast
 *                                 kernel's trace where tile edges meet; the
 *                                 test fault no_rescale must fail
 *   ./bench_wgmma bench [V|all]   the measured shapes: ms and TFLOP/s, the
 *                                 fast kernel beside, sampled rows checked
 *   ./bench_wgmma one D T CAUSAL DTYPE [V]   one shape twice (for ncu)
 *
 * Inputs are normal random numbers rounded to fp16 or bf16; the reference
 * sees the same rounded values.  Before every run O and lse are poisoned
 * with NaN, so a value the kernel never wrote fails the check.
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

#include <thread>
#include <vector>

#include "bench.cuh"
#include "fast.h"
#include "wgmma.h"

/* ------------------------------------------------------------------ */
/* Inputs: bench.cuh's, on the device and here as floats.             */

static float
bench_round16(int bf16, float x)
{
	return bf16 ? __bfloat162float(__float2bfloat16_rn(x)) :
	    __half2float(__float2half_rn(x));
}

struct bench_bufs {
	uint16_t *dq, *dk, *dv, *do_;
	float *dlse;
	uint16_t *ho;
	float *fq, *fk, *fv, *hlse;
};

static void *
bench_xmalloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL) {
		fprintf(stderr, "bench_wgmma: out of host memory\n");
		exit(1);
	}
	return p;
}

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
	b->ho = (uint16_t *)bench_xmalloc(nq * 2);
	b->fq = (float *)bench_xmalloc(nq * 4);
	b->fk = (float *)bench_xmalloc(nk * 4);
	b->fv = (float *)bench_xmalloc(nk * 4);
	b->hlse = (float *)bench_xmalloc(nl * 4);
}

static void
bench_release(struct bench_bufs *b)
{
	CK(cudaFree(b->dq));
	CK(cudaFree(b->dk));
	CK(cudaFree(b->dv));
	CK(cudaFree(b->do_));
	CK(cudaFree(b->dlse));
	free(b->ho);
	free(b->fq); free(b->fk); free(b->fv); free(b->hlse);
}

static void
bench_fill(int bf16, size_t n, uint64_t seed, uint16_t *d, float *f)
{
	uint16_t *h = (uint16_t *)bench_xmalloc(n * 2);

	bench_fill_kernel<<<1024, 256>>>(d, n, seed, bf16);
	CK(cudaGetLastError());
	CK(cudaMemcpy(h, d, n * 2, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n; i++)
		f[i] = bench_from16(bf16, h[i]);
	free(h);
}

/* Fresh random inputs (a new seed each call), on the device and here. */
static void
bench_inputs(struct bench_bufs *b, const struct shape *s, int bf16)
{
	static uint64_t seed = 1;
	size_t nq = (size_t)s->b * s->h * s->tq * s->d;
	size_t nk = (size_t)s->b * s->h * s->tk * s->d;

	bench_fill(bf16, nq, seed++, b->dq, b->fq);
	bench_fill(bf16, nk, seed++, b->dk, b->fk);
	bench_fill(bf16, nk, seed++, b->dv, b->fv);
}

/* ------------------------------------------------------------------ */
/* The reference: rows in double, spread over the host's threads.     */

/* Keys row r of a (tq, tk) problem sees: [0, n). */
static int
bench_visible(int tq, int tk, int causal, int r)
{
	long lim;

	if (!causal)
		return tk;
	lim = (long)r + tk - tq + 1;
	return lim < 0 ? 0 : lim < tk ? (int)lim : tk;
}

/* O (d values) and lse of row r of head bh, in double. */
static void
bench_ref_row(const struct bench_bufs *b, const struct shape *s, int bh,
    int r, double *sc, double *o, double *lse)
{
	const float *q = b->fq + ((size_t)bh * s->tq + r) * s->d;
	const float *k = b->fk + (size_t)bh * s->tk * s->d;
	const float *v = b->fv + (size_t)bh * s->tk * s->d;
	const double scale = 1.0 / sqrt((double)s->d);
	const int n = bench_visible(s->tq, s->tk, s->causal, r);
	double mx = -INFINITY, l = 0;

	for (int c = 0; c < n; c++) {
		double acc = 0;
		for (int x = 0; x < s->d; x++)
			acc += (double)q[x] * k[(size_t)c * s->d + x];
		sc[c] = acc * scale;
		if (sc[c] > mx)
			mx = sc[c];
	}
	for (int x = 0; x < s->d; x++)
		o[x] = 0;
	for (int c = 0; c < n; c++) {
		double p = exp(sc[c] - mx);
		l += p;
		for (int x = 0; x < s->d; x++)
			o[x] += p * v[(size_t)c * s->d + x];
	}
	for (int x = 0; x < s->d; x++)
		o[x] = n > 0 ? o[x] / l : 0;
	*lse = n > 0 ? mx + log(l) : -INFINITY;
}

/* The rows to check: every row (stride 1), or 0, stride, ... and last. */
struct bench_ref {
	std::vector<int> bh, row;
	std::vector<double> o, lse;	/* (rows, d), (rows) */
};

static void
bench_reference(const struct bench_bufs *b, const struct shape *s,
    int stride, struct bench_ref *ref)
{
	unsigned nth = std::thread::hardware_concurrency();
	std::vector<std::thread> th;
	size_t n;

	ref->bh.clear();
	ref->row.clear();
	for (int bh = 0; bh < s->b * s->h; bh++)
		for (int r = 0; r < s->tq; r += stride) {
			if (r + stride >= s->tq)
				r = s->tq - 1;
			ref->bh.push_back(bh);
			ref->row.push_back(r);
		}
	n = ref->row.size();
	ref->o.assign(n * s->d, 0);
	ref->lse.assign(n, 0);
	if (nth < 1)
		nth = 1;
	if (nth > 32)
		nth = 32;
	for (unsigned t = 0; t < nth; t++)
		th.emplace_back([=]() {
			std::vector<double> sc(s->tk);
			for (size_t x = t; x < n; x += nth)
				bench_ref_row(b, s, ref->bh[x], ref->row[x],
				    sc.data(), &ref->o[x * s->d], &ref->lse[x]);
		});
	for (auto &t : th)
		t.join();
}

/* The run's O and lse against ref; the worst |error| of O to *maxerr. */
static long
bench_check(const struct bench_bufs *b, const struct shape *s, int bf16,
    const struct bench_ref *ref, double *maxerr)
{
	/* P rounded to 16 bits before P V, O rounded at the end. */
	const double tol = bf16 ? 1.5e-2 : 2e-3;
	char where[96];
	long bad = 0, orows[2] = { 0, 0 }, lrows = 0, nanv = 0;

	*maxerr = 0;
	for (size_t x = 0; x < ref->row.size(); x++) {
		const int bh = ref->bh[x], r = ref->row[x];
		const size_t row = (size_t)bh * s->tq + r;
		const long before = bad;

		for (int c = 0; c < s->d; c++) {
			double g = bench_from16(bf16, b->ho[row * s->d + c]);
			double w = ref->o[x * s->d + c];

			snprintf(where, sizeof where, "O[bh %d][%d][%d]", bh, r,
			    c);
			bad = bench_compare("O", g, w, tol, tol, where, bad);
			if (!isfinite(g)) {
				*maxerr = INFINITY;
				nanv++;
			} else if (fabs(g - w) > *maxerr)
				*maxerr = fabs(g - w);
		}
		if (bad != before)
			orows[r % 128 >= 64]++;
		snprintf(where, sizeof where, "lse[bh %d][%d]", bh, r);
		const long lbefore = bad;
		bad = bench_compare("lse", b->hlse[row], ref->lse[x], 1e-3,
		    1e-4, where, bad);
		lrows += bad != lbefore;
	}
	/* Where the errors are says which stage to suspect: lse right and
	 * O wrong points at P V, both wrong at S, one half of the rows at
	 * one consumer warpgroup, NaN at values never written. */
	if (bad)
		fprintf(stderr, "  diagnosis: O wrong in %ld of %zu rows (%ld "
		    "in rows %% 128 < 64, %ld in >= 64), %ld non-finite O "
		    "values, lse wrong in %ld rows\n", orows[0] + orows[1],
		    ref->row.size(), orows[0], orows[1], nanv, lrows);
	return bad;
}

/* Poisons O and lse (0xff bytes: NaN in all three types), runs variant
 * v of the wgmma kernel (kernel 0) or of the fast kernel (kernel 1). */
static int
bench_run(struct bench_bufs *b, const struct shape *s, int bf16, int kernel,
    int v)
{
	size_t nq = (size_t)s->b * s->h * s->tq * s->d;
	size_t nl = (size_t)s->b * s->h * s->tq;
	char err[256];
	int rc;

	CK(cudaMemset(b->do_, 0xff, nq * 2));
	CK(cudaMemset(b->dlse, 0xff, nl * 4));
	if (kernel == 0)
		rc = wgmma_attention_fwd_variant(b->dq, b->dk, b->dv, b->do_,
		    b->dlse, s->b, s->h, s->tq, s->tk, s->d, bf16, s->causal,
		    0.f, v, NULL, err, sizeof err);
	else
		rc = fast_attention_fwd(b->dq, b->dk, b->dv, b->do_, b->dlse,
		    s->b, s->h, s->tq, s->tk, s->d, bf16, s->causal, 0.f, v,
		    NULL, err, sizeof err);
	if (rc != 0) {
		fprintf(stderr, "bench_wgmma: %s\n", err);
		return -1;
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(b->ho, b->do_, nq * 2, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(b->hlse, b->dlse, nl * 4, cudaMemcpyDeviceToHost));
	return 0;
}

static void
bench_tiling(const struct wgmma_config *c, char *buf, size_t len)
{
	snprintf(buf, len, "%dx%d/s%d/%s%s%s%s", c->br, c->bc, c->stages,
	    c->pingpong ? "pp" : "--", c->overlap ? "ov" : "--",
	    c->overlap == 2 ? "2" : "", c->persistent ? "/P" : "");
}

/*
 * Variants of d to run, from the command line's spec: NULL the default,
 * "all" every one, "0,2" those indices.
 */
static std::vector<int>
bench_variants(int d, const char *spec)
{
	std::vector<int> v;
	struct wgmma_config c;

	if (spec == NULL) {
		v.push_back(-1);
		return v;
	}
	for (int i = 0; wgmma_attention_variant(d, i, &c) == 0; i++) {
		int want = strcmp(spec, "all") == 0;
		for (const char *x = spec; !want && *x != '\0'; x++)
			if ((x == spec || x[-1] == ',') && atoi(x) == i &&
			    *x >= '0' && *x <= '9')
				want = 1;
		if (want)
			v.push_back(i);
	}
	return v;
}

static const struct shape bench_check_shapes[] = {
	/* b  h   tq    tk   d causal: for both d, see bench_cmd_check */
	{ 1, 1, 1, 1, 0, 0 },
	{ 1, 1, 1, 4097, 0, 0 },
	{ 1, 2, 77, 63, 0, 0 },		/* Tq > Tk: rows that see no key */
	{ 2, 3, 129, 300, 0, 0 },	/* batch and heads, Tq < Tk */
	{ 1, 1, 1000, 1, 0, 0 },
	{ 1, 2, 1000, 4097, 0, 0 },
	{ 1, 1, 300, 129, 0, 0 },
	{ 2, 2, 256, 256, 0, 0 },	/* whole tiles */
	{ 1, 1, 4097, 1000, 0, 0 },
};

/* Every selected variant on every check shape, d, dtype and mask. */
static int
bench_cmd_check(const char *sel)
{
	const int nshape = sizeof bench_check_shapes /
	    sizeof bench_check_shapes[0];
	int failed = 0, runs = 0;

	for (int d = 64; d <= 128; d += 64)
		for (int x = 0; x < nshape; x++)
			for (int causal = 0; causal < 2; causal++) {
				struct shape s = bench_check_shapes[x];
				struct bench_bufs b;

				s.d = d;
				s.causal = causal;
				bench_alloc(&b, &s);
				for (int bf16 = 0; bf16 < 2; bf16++) {
					struct bench_ref ref;

					bench_inputs(&b, &s, bf16);
					bench_reference(&b, &s, 1, &ref);
					for (int v : bench_variants(d, sel)) {
						struct wgmma_config c;
						char tiling[32];
						double maxerr;
						long bad;

						wgmma_attention_variant(d, v, &c);
						if (bench_run(&b, &s, bf16, 0, v) != 0)
							return 1;
						bad = bench_check(&b, &s, bf16, &ref,
						    &maxerr);
						bench_tiling(&c, tiling, sizeof tiling);
						printf("check %s B%d H%d Tq%-5d Tk%-5d "
						    "d%-3d %-6s v%d %-16s max|err| "
						    "%.2e %s\n", bf16 ? "bf16" : "fp16",
						    s.b, s.h, s.tq, s.tk, d,
						    causal ? "causal" : "full", v,
						    tiling, maxerr, bad ? "FAIL" : "ok");
						fflush(stdout);
						failed |= bad != 0;
						runs++;
					}
				}
				bench_release(&b);
			}
	printf("check: %d runs, %s\n", runs, failed ? "FAILED" :
	    "all passed");
	return failed;
}

/* ------------------------------------------------------------------ */
/* The trace.                                                          */

struct bench_trace {
	float *m, *alpha, *l, *acc;	/* device */
	std::vector<float> hm, ha, hl, hacc;
	size_t n;			/* entries (b h, Tr, Tc, Br) */
};

static void
bench_trace_alloc(struct bench_trace *t, size_t n, int d)
{
	t->n = n;
	CK(cudaMalloc(&t->m, n * 4));
	CK(cudaMalloc(&t->alpha, n * 4));
	CK(cudaMalloc(&t->l, n * 4));
	CK(cudaMalloc(&t->acc, n * d * 4));
	CK(cudaMemset(t->m, 0xff, n * 4));
	CK(cudaMemset(t->alpha, 0xff, n * 4));
	CK(cudaMemset(t->l, 0xff, n * 4));
	CK(cudaMemset(t->acc, 0xff, n * d * 4));
}

static void
bench_trace_fetch(struct bench_trace *t, int d)
{
	t->hm.resize(t->n);
	t->ha.resize(t->n);
	t->hl.resize(t->n);
	t->hacc.resize(t->n * d);
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(t->hm.data(), t->m, t->n * 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(t->ha.data(), t->alpha, t->n * 4,
	    cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(t->hl.data(), t->l, t->n * 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(t->hacc.data(), t->acc, t->n * d * 4,
	    cudaMemcpyDeviceToHost));
	CK(cudaFree(t->m));
	CK(cudaFree(t->alpha));
	CK(cudaFree(t->l));
	CK(cudaFree(t->acc));
}

/* Key tiles row block i of a (tq, tk) problem visits: the kernels' nt. */
static int
bench_tiles(int tq, int tk, int causal, int br, int bc, int i)
{
	int kend = tk;

	if (causal) {
		int last = (i + 1) * br < tq ? (i + 1) * br : tq;
		kend = last + tk - tq < tk ? last + tk - tq : tk;
	}
	return kend > 0 ? (kend + bc - 1) / bc : 0;
}

/*
 * The CPU replay of fast.h's trace for tiling (br, bc) of one shape, in
 * double: m (raw), alpha, l and acc (P rounded to 16 bits, as the kernel
 * feeds P V) after every tile, compared with the kernel's trace t.
 * Entries the kernel must not write must still be NaN.  Returns the
 * number of mismatches; *rescales counts the steps where a row with l > 0
 * met a larger max (alpha < 1), the only steps where the test fault
 * no_rescale can show.
 */
static long
bench_trace_replay(const struct bench_bufs *b, const struct shape *s,
    int bf16, int br, int bc, const struct bench_trace *t, long *rescales)
{
	const double scale = 1.0 / sqrt((double)s->d);
	const double tol = bf16 ? 1.5e-2 : 2e-3;
	const int tr = (s->tq + br - 1) / br, tc = (s->tk + bc - 1) / bc;
	std::vector<double> acc(s->d);
	char where[128];
	long bad = 0, stray = 0;

	*rescales = 0;
	for (int bh = 0; bh < s->b * s->h; bh++)
		for (int i = 0; i < tr; i++) {
			const int nt = bench_tiles(s->tq, s->tk, s->causal, br,
			    bc, i);
			for (int r = 0; r < br; r++) {
				const int row = i * br + r;
				const float *q = b->fq + ((size_t)bh * s->tq +
				    row) * s->d;
				const int vis = row < s->tq ? bench_visible(s->tq,
				    s->tk, s->causal, row) : 0;
				double m = -INFINITY, l = 0;

				for (int x = 0; x < s->d; x++)
					acc[x] = 0;
				for (int j = 0; j < tc; j++) {
					const size_t at = (((size_t)bh * tr + i) *
					    tc + j) * br + r;
					if (row >= s->tq || j >= nt) {
						stray += !isnan(t->hm[at]) ||
						    !isnan(t->hl[at]);
						continue;
					}
					double mn = m, sum = 0;
					const int c1 = (j + 1) * bc < vis ?
					    (j + 1) * bc : vis;
					std::vector<double> sr;
					for (int c = j * bc; c < c1; c++) {
						double dot = 0;
						const float *k = b->fk +
						    ((size_t)bh * s->tk + c) * s->d;
						for (int x = 0; x < s->d; x++)
							dot += (double)q[x] * k[x];
						sr.push_back(dot);
						if (dot > mn)
							mn = dot;
					}
					const double al = m == -INFINITY ? 0 :
					    exp(scale * (m - mn));
					*rescales += l > 0 && al < 1 - 1e-6;
					l *= al;
					for (int x = 0; x < s->d; x++)
						acc[x] *= al;
					for (size_t e = 0; e < sr.size(); e++) {
						const double p = exp(scale *
						    (sr[e] - mn));
						const double p16 = bench_round16(bf16,
						    (float)p);
						const float *v = b->fv + ((size_t)bh *
						    s->tk + j * bc + e) * s->d;
						sum += p;
						for (int x = 0; x < s->d; x++)
							acc[x] += p16 * v[x];
					}
					l += sum;
					m = mn;
					snprintf(where, sizeof where,
					    "[bh %d][i %d][j %d][r %d]", bh, i, j, r);
					bad = bench_compare("m", t->hm[at], m, 1e-3,
					    1e-4, where, bad);
					bad = bench_compare("alpha", t->ha[at], al,
					    1e-5, 1e-3, where, bad);
					bad = bench_compare("l", t->hl[at], l, 1e-4,
					    1e-3, where, bad);
					for (int x = 0; x < s->d; x++)
						bad = bench_compare("acc",
						    t->hacc[at * s->d + x], acc[x],
						    tol * (1 + l), tol, where, bad);
				}
			}
		}
	if (stray)
		fprintf(stderr, "  %ld trace entries written that should "
		    "not be\n", stray);
	return bad + stray;
}

/*
 * The wgmma trace against the fast kernel's (same Br; fast's Bc divides
 * ours): after our tile j both have seen the same keys, so m, l and acc
 * must agree up to float32 rounding.  Returns the number of mismatches,
 * or -1 when the tilings do not line up.
 */
static long
bench_trace_vs_fast(const struct shape *s, int bf16, int br, int bc,
    const struct bench_trace *w, const struct fast_config *fc,
    const struct bench_trace *f)
{
	const double tol = bf16 ? 1.5e-2 : 2e-3;
	const int tr = (s->tq + br - 1) / br, tc = (s->tk + bc - 1) / bc;
	const int ftc = (s->tk + fc->bc - 1) / fc->bc, k = bc / fc->bc;
	char where[128];
	long bad = 0;

	if (fc->br != br || bc % fc->bc != 0)
		return -1;
	for (int bh = 0; bh < s->b * s->h; bh++)
		for (int i = 0; i < tr; i++) {
			const int nt = bench_tiles(s->tq, s->tk, s->causal, br,
			    bc, i);
			const int fnt = bench_tiles(s->tq, s->tk, s->causal,
			    br, fc->bc, i);
			for (int j = 0; j < nt; j++) {
				const int fj = ((j + 1) * k < fnt ?
				    (j + 1) * k : fnt) - 1;
				for (int r = 0; r < br && i * br + r < s->tq;
				    r++) {
					const size_t at = (((size_t)bh * tr + i) *
					    tc + j) * br + r;
					const size_t ft = (((size_t)bh * tr + i) *
					    ftc + fj) * br + r;
					snprintf(where, sizeof where,
					    "vs fast [bh %d][i %d][j %d/%d][r %d]",
					    bh, i, j, fj, r);
					bad = bench_compare("m", w->hm[at],
					    f->hm[ft], 1e-3, 1e-4, where, bad);
					bad = bench_compare("l", w->hl[at],
					    f->hl[ft], 1e-4, 1e-3, where, bad);
					for (int x = 0; x < s->d; x++)
						bad = bench_compare("acc",
						    w->hacc[at * s->d + x],
						    f->hacc[ft * s->d + x],
						    tol * (1 + f->hl[ft]), tol,
						    where, bad);
				}
			}
		}
	return bad;
}

static void
bench_trace_run(struct bench_bufs *b, const struct shape *s, int bf16,
    int kernel, int v, int fault, struct bench_trace *t, size_t n)
{
	struct fast_trace tr;
	char err[256];
	int rc;

	bench_trace_alloc(t, n, s->d);
	tr.m = t->m;
	tr.alpha = t->alpha;
	tr.l = t->l;
	tr.acc = t->acc;
	tr.no_rescale = fault;	/* bug no-rescale, against a correct replay */
	CK(cudaMemset(b->do_, 0xff, (size_t)s->b * s->h * s->tq * s->d * 2));
	if (kernel == 0)
		rc = wgmma_attention_trace(b->dq, b->dk, b->dv, b->do_,
		    b->dlse, s->b, s->h, s->tq, s->tk, s->d, bf16, s->causal,
		    0.f, v, &tr, NULL, err, sizeof err);
	else
		rc = fast_attention_trace(b->dq, b->dk, b->dv, b->do_,
		    b->dlse, s->b, s->h, s->tq, s->tk, s->d, bf16, s->causal,
		    0.f, -1, &tr, NULL, err, sizeof err);
	if (rc != 0) {
		fprintf(stderr, "bench_wgmma: %s\n", err);
		exit(1);
	}
	bench_trace_fetch(t, s->d);
}

static int
bench_cmd_trace(const char *sel)
{
	static const struct shape shapes[] = {
		{ 1, 1, 200, 300, 64, 0 },
		{ 2, 2, 129, 257, 64, 1 },
		{ 1, 1, 300, 129, 64, 1 },	/* rows that see no key */
		{ 1, 2, 256, 520, 128, 0 },
		{ 2, 1, 77, 300, 128, 1 },
		{ 1, 1, 300, 200, 128, 1 },
	};
	int failed = 0;

	for (size_t x = 0; x < sizeof shapes / sizeof shapes[0]; x++) {
		const struct shape *s = &shapes[x];
		struct bench_bufs b;

		bench_alloc(&b, s);
		for (int bf16 = 0; bf16 < 2; bf16++) {
			struct fast_config fc;
			struct bench_trace ft;
			size_t fn;

			bench_inputs(&b, s, bf16);
			fast_attention_variant(s->d, -1, &fc);
			fn = (size_t)s->b * s->h * ((s->tq + fc.br - 1) / fc.br) *
			    ((s->tk + fc.bc - 1) / fc.bc) * fc.br;
			bench_trace_run(&b, s, bf16, 1, -1, 0, &ft, fn);
			for (int v : bench_variants(s->d, sel)) {
				struct wgmma_config c;
				struct bench_trace wt, wf;
				long bad, badf, badv, resc, rescf;
				size_t n;

				wgmma_attention_variant(s->d, v, &c);
				n = (size_t)s->b * s->h *
				    ((s->tq + c.br - 1) / c.br) *
				    ((s->tk + c.bc - 1) / c.bc) * c.br;
				bench_trace_run(&b, s, bf16, 0, v, 0, &wt, n);
				bad = bench_trace_replay(&b, s, bf16, c.br, c.bc,
				    &wt, &resc);
				badv = bench_trace_vs_fast(s, bf16, c.br, c.bc,
				    &wt, &fc, &ft);
				fprintf(stderr, "  (the test fault follows: "
				    "mismatches expected)\n");
				bench_trace_run(&b, s, bf16, 0, v, 1, &wf, n);
				badf = bench_trace_replay(&b, s, bf16, c.br,
				    c.bc, &wf, &rescf);
				/* The fault must show wherever a rescale is due. */
				printf("trace %s B%d H%d Tq%-4d Tk%-4d d%-3d %-6s "
				    "v%d: replay %s (%ld), vs fast %s (%ld), "
				    "no_rescale fault %s (%ld mismatches, %ld "
				    "rescales due)\n",
				    bf16 ? "bf16" : "fp16", s->b, s->h, s->tq,
				    s->tk, s->d, s->causal ? "causal" : "full",
				    v, bad ? "FAIL" : "ok", bad,
				    badv < 0 ? "n/a" : badv ? "FAIL" : "ok",
				    badv, badf ? "caught" : resc ? "MISSED" :
				    "not visible", badf, resc);
				fflush(stdout);
				failed |= bad != 0 || badv > 0 ||
				    (badf == 0 && resc > 0);
			}
		}
		bench_release(&b);
	}
	printf("trace: %s\n", failed ? "FAILED" : "all passed");
	return failed;
}

/* ------------------------------------------------------------------ */
/* Timing.                                                             */

/* Median of N CUDA-event timings (ms), after 3 warm-ups. */
static double
bench_time(struct bench_bufs *b, const struct shape *s, int bf16, int kernel,
    int v)
{
	enum { N = 20 };
	cudaEvent_t e0, e1;
	float ms[N], t;
	char err[256];
	int rc;

	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int r = -3; r < N; r++) {
		CK(cudaEventRecord(e0));
		if (kernel == 0)
			rc = wgmma_attention_fwd_variant(b->dq, b->dk, b->dv,
			    b->do_, b->dlse, s->b, s->h, s->tq, s->tk, s->d,
			    bf16, s->causal, 0.f, v, NULL, err, sizeof err);
		else
			rc = fast_attention_fwd(b->dq, b->dk, b->dv, b->do_,
			    b->dlse, s->b, s->h, s->tq, s->tk, s->d, bf16,
			    s->causal, 0.f, v, NULL, err, sizeof err);
		if (rc != 0) {
			fprintf(stderr, "bench_wgmma: %s\n", err);
			exit(1);
		}
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&t, e0, e1));
		if (r >= 0)
			ms[r] = t;
	}
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	for (int x = 1; x < N; x++)		/* insertion sort */
		for (int y = x; y > 0 && ms[y] < ms[y - 1]; y--) {
			t = ms[y];
			ms[y] = ms[y - 1];
			ms[y - 1] = t;
		}
	return (ms[N / 2 - 1] + ms[N / 2]) / 2;
}

/* One benchmark shape: the fast kernel's default, then our variants. */
static int
bench_shape(const struct shape *s, int bf16, const char *sel)
{
	double flops = 4.0 * s->b * s->h * (double)s->tq * s->tk * s->d;
	struct bench_bufs b;
	struct bench_ref ref;
	int failed = 0;
	double fast_ms;

	if (s->causal)
		flops /= 2;
	bench_alloc(&b, s);
	bench_inputs(&b, s, bf16);
	/* Rows of every head, spread over the sequence. */
	bench_reference(&b, s, s->tq / 4, &ref);
	fast_ms = bench_time(&b, s, bf16, 1, -1);
	for (int v : bench_variants(s->d, sel)) {
		struct wgmma_config c;
		char tiling[32];
		double maxerr, ms;
		long bad;

		wgmma_attention_variant(s->d, v, &c);
		if (bench_run(&b, s, bf16, 0, v) != 0)
			exit(1);
		bad = bench_check(&b, s, bf16, &ref, &maxerr);
		ms = bench_time(&b, s, bf16, 0, v);
		bench_tiling(&c, tiling, sizeof tiling);
		printf("%-5s %4d %6d %-6s v%d %-16s %9.3f %7.1f %7.1f %5.2f "
		    "%9.2e %s\n", bf16 ? "bf16" : "fp16", s->d, s->tq,
		    s->causal ? "causal" : "full", v, tiling, ms,
		    flops / (ms * 1e-3) / 1e12,
		    flops / (fast_ms * 1e-3) / 1e12, fast_ms / ms, maxerr,
		    bad ? "FAIL" : "");
		fflush(stdout);
		failed |= bad != 0;
	}
	bench_release(&b);
	return failed;
}

/* The measured shapes (doc/performance.md): B T = 32768, H = 16. */
static int
bench_cmd_bench(const char *sel)
{
	static const int ts[] = { 1024, 4096, 16384 };
	static const int ds[] = { 64, 128 };
	int failed = 0;

	printf("%-5s %4s %6s %-6s %-2s %-16s %9s %7s %7s %5s %9s\n", "dtype",
	    "d", "T", "mask", "v", "tiling", "ms", "TFLOP/s", "fast", "x",
	    "max|err|");
	/* i = ((dtype * 2 + d) * 3 + T) * 2 + causal */
	for (int i = 0; i < 24; i++) {
		const int t = ts[i / 2 % 3];
		struct shape s = { 32768 / t, 16, t, t, ds[i / 6 % 2], i % 2 };

		failed |= bench_shape(&s, i / 12, sel);
	}
	printf("bench: %s\n", failed ? "a check FAILED" : "all checks passed");
	return failed;
}

/* One shape, launched twice (the second is the one to profile). */
static int
bench_cmd_one(int d, int t, int causal, int bf16, const char *spec)
{
	struct shape s = { 32768 / t, 16, t, t, d, causal };
	struct bench_bufs b;

	const int v = spec != NULL ? atoi(spec) : -1;

	bench_alloc(&b, &s);
	bench_inputs(&b, &s, bf16);
	for (int r = 0; r < 2; r++)
		if (bench_run(&b, &s, bf16, 0, v) != 0)
			return 1;
	bench_release(&b);
	printf("one: done\n");
	return 0;
}

/* The variant spec at argv[at]: NULL (the default) when absent. */
static const char *
bench_sel(int argc, char **argv, int at)
{
	return argc > at ? argv[at] : NULL;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return bench_cmd_check(bench_sel(argc, argv, 2));
	if (argc >= 2 && strcmp(argv[1], "trace") == 0)
		return bench_cmd_trace(bench_sel(argc, argv, 2));
	if (argc >= 2 && strcmp(argv[1], "bench") == 0)
		return bench_cmd_bench(bench_sel(argc, argv, 2));
	if (argc >= 6 && strcmp(argv[1], "one") == 0)
		return bench_cmd_one(atoi(argv[2]), atoi(argv[3]),
		    atoi(argv[4]), atoi(argv[5]), bench_sel(argc, argv, 6));
	fprintf(stderr, "usage: bench_wgmma check [V|all] | trace [V|all] | "
	    "bench [V|all] | one D T CAUSAL BF16 [V]\n");
	return 2;
}
