/*
 * check_gpu_decode.c - the decode kernel (gpu/decode.cu, the table's
 * decode entry through gpu_run) against the double reference, head by
 * head: small shapes for every path (one query row and several, causal,
 * rows that see no key, packed rows past what a block holds, MQA and
 * grouped heads and none, ragged Tk, ranges that some rows see nothing
 * of), a few long ones (many key ranges, and none), both dtypes.  The
 * key ranges are the kernel's own choice, or asked for (gpu_run_ranges)
 * where a count or an empty range must be reached on any GPU.  The
 * table's refusals are check_gpu_table's.
 *
 * The bound.  The kernel's arithmetic is its own (float32 sums, on the
 * tensor cores for packed rows, scores in units of log2(e) and p = 2^x),
 * so it is held to the double reference, not to the simulator, with
 * gpucheck.h's rule for such arithmetic: a score is a float32 sum of d
 * products in some order and p one exp2 of it, so one p is within delta
 * = gpucheck_tensor_delta(d, S1) (gpucheck.c derives it for any order of
 * the sum and the exponent); l and the numerator add p's of one row in
 * float32 chains of at most Tk / 16 keys (a lane's share: 16 lanes a
 * half-warp, or 16 keys an mma.sync, each range split again over warps),
 * each add within one unit of 2^-24 of the sum of the magnitudes, and
 * merge the chains with merge.h's rule (a few units each); the packed
 * rows round p to the dtype before P V (one unit u of it: at most u
 * max|V| in O), and O is rounded to the dtype at the end (u |O|): the
 * two are the 2 u of rtol_acc.  So an entry o of O agrees when
 *     |o - ref| <= atol + rtol |ref|,  rtol = rtol_acc + 2 delta + c,
 *     atol = rtol max|V|,  c = (Tk / 16 + 64) 2^-24
 * (rtol_acc: twice the dtype's unit, gpucheck.h), and lse within
 * GPUCHECK_RTOL + 2 delta + c of it, relative and absolute.  A row that
 * sees no key has O = 0 and lse = -inf exactly.  A kernel that lost a
 * key range, a merge's weight or a rescale is off by a whole share of O:
 * hundreds of times the bound.
 *
 * Without a device the program fails, or skips (77) only where the
 * hardware is missing and FLASHSTEP_REQUIRE_GPU is not set.
 */
#include "config.h"

#include "testutil.h"
#include "gpu/gpu.h"
#include "gpu/decode.h"
#include "gpu/gpucheck.h"
#include "gpu/kernels.h"
#include "gpuprobe.h"
#include "model/reference.h"
#include "model/varlen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

static const struct gpu_kernel *
decode(void)
{
	return gpu_kernel_find("decode");
}

/* A decoding shape, and the key ranges to ask for (0: the kernel's own
 * choice; else asked through gpu_run_ranges). */
struct decode_shape {
	int batch, heads, kv_heads, tq, tk, causal, splits;
	int page_size;		/* > 0: K and V paged (a shuffled table) */
};

/* The largest norm of a row of x (rows, cols). */
static double
max_norm(const float *x, size_t rows, int cols)
{
	double best = 0, sum;
	size_t r;
	int c;

	for (r = 0; r < rows; r++) {
		for (sum = 0, c = 0; c < cols; c++)
			sum += (double)x[r * cols + c] * x[r * cols + c];
		best = fmax(best, sum);
	}
	return sqrt(best);
}

/* What a run showed, for the coverage asserts. */
struct decode_seen {
	int splits;		/* key ranges the kernel chose */
	int shuffled;		/* paged through a table that is no identity */
	int empty_rows;		/* rows that saw no key */
	int empty_ranges;	/* rows that saw no key of the last range */
	double worst;		/* largest excess over the bound */
};

/*
 * A paged run must read the keys the contiguous run reads, in the same
 * groups and ranges: the same problems unpaged give O and lse bit for
 * bit (a wrong page, slot or entry of the table moves whole keys).
 */
static void
same_as_contiguous(const struct decode_shape *sh, const struct problem *paged,
    const struct gpu_result *got, const char *what)
{
	struct problem_spec spec;
	struct problem *ps;
	struct gpu_result res;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	const size_t no = (size_t)sh->batch * sh->heads * sh->tq * 128;
	const size_t nl = (size_t)sh->batch * sh->heads * sh->tq;
	char err[512];
	size_t i;
	int b;

	ps = calloc((size_t)sh->batch, sizeof *ps);
	ck_assert(ps != NULL);
	for (b = 0; b < sh->batch; b++) {
		problem_spec_init(&spec);
		spec.tq = sh->tq;
		spec.tk = sh->tk;
		spec.d = spec.dv = 128;
		spec.heads = sh->heads;
		spec.kv_heads = sh->kv_heads;
		spec.causal = sh->causal;
		spec.input = INPUTS_NORMAL;
		spec.dtype = paged[b].dtype;
		spec.seed = 7 + (uint64_t)b;
		ck_assert_msg(problem_build(&spec, &ps[b], err, sizeof err) == 0,
		    "%s: %s", what, err);
		ck_assert(memcmp(ps[b].k, paged[b].k, (size_t)sh->kv_heads *
		    sh->tk * 128 * sizeof(float)) == 0);
	}
	ck_assert_msg(gpu_run_ranges(decode(), ps, sh->batch, &t, &rule, 0,
	    sh->splits, 0, &res, err, sizeof err) == 0, "%s: %s", what, err);
	ck_assert_msg(res.splits == got->splits, "%s: %d ranges paged, %d "
	    "contiguous", what, got->splits, res.splits);
	for (i = 0; i < no; i++)
		ck_assert_msg(memcmp(&res.o[i], &got->o[i], sizeof(float)) == 0,
		    "%s: O entry %zu is %.9g paged, %.9g contiguous", what, i,
		    got->o[i], res.o[i]);
	for (i = 0; i < nl; i++)
		ck_assert_msg(memcmp(&res.lse[i], &got->lse[i], sizeof(float)) == 0,
		    "%s: lse entry %zu is %.9g paged, %.9g contiguous", what, i,
		    got->lse[i], res.lse[i]);
	gpu_result_free(&res);
	for (b = 0; b < sh->batch; b++)
		problem_free(&ps[b]);
	free(ps);
}

/*
 * Runs one shape (entry b from seed + b) and holds every head of every
 * entry to the bound above.
 */
static void
decode_check(const struct decode_shape *sh, enum dtype dt,
    struct decode_seen *seen)
{
	struct problem_spec spec;
	struct problem *ps, one;
	struct gpu_result res;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_tol tol;
	double *ref, *ref_lse, s1, delta, c, rtol, rtol_lse, atol, e;
	const size_t no = (size_t)sh->tq * 128;
	char err[512], what[160];
	int b, h, r, x, range_keys, last0;

	snprintf(what, sizeof what, "%s B=%d H=%d G=%d Tq=%d Tk=%d%s%s%s%.0d",
	    dtype_name(dt), sh->batch, sh->heads, sh->kv_heads, sh->tq, sh->tk,
	    sh->causal ? " causal" : "", sh->splits > 0 ? " (ranges asked)" : "",
	    sh->page_size > 0 ? " pages of " : "", sh->page_size);
	ps = calloc((size_t)sh->batch, sizeof *ps);
	ref = malloc(no * sizeof *ref);
	ref_lse = malloc((size_t)sh->tq * sizeof *ref_lse);
	ck_assert(ps != NULL && ref != NULL && ref_lse != NULL);
	for (b = 0; b < sh->batch; b++) {
		problem_spec_init(&spec);
		spec.tq = sh->tq;
		spec.tk = sh->tk;
		spec.d = spec.dv = 128;
		spec.heads = sh->heads;
		spec.kv_heads = sh->kv_heads;
		spec.causal = sh->causal;
		spec.input = INPUTS_NORMAL;
		spec.dtype = dt;
		spec.seed = 7 + (uint64_t)b;
		spec.page_size = sh->page_size;
		ck_assert_msg(problem_build(&spec, &ps[b], err, sizeof err) == 0,
		    "%s: %s", what, err);
	}
	ck_assert_msg(gpu_run_ranges(decode(), ps, sh->batch, &t, &rule, 0,
	    sh->splits, 0, &res, err, sizeof err) == 0, "%s: %s", what, err);
	ck_assert_msg(res.splits >= 1, "%s: %d key ranges", what, res.splits);
	seen->splits = res.splits;
	seen->empty_rows = seen->empty_ranges = seen->shuffled = 0;
	seen->worst = 0;
	for (b = 0; b < sh->batch && sh->page_size > 0; b++)
		for (x = 0; x < ps[b].paged.pages; x++)
			seen->shuffled |= ps[b].paged.table[x] != x;
	range_keys = decode_range_keys(sh->tk, res.splits, sh->page_size > 0);
	last0 = (res.splits - 1) * range_keys;
	c = (sh->tk / 16.0 + 64.0) * 0x1p-24;
	for (b = 0; b < sh->batch; b++) {
		gpucheck_tolerance(decode(), &ps[b], &tol);
		s1 = ps[b].scale * max_norm(ps[b].q, (size_t)sh->heads * sh->tq,
		    128) * max_norm(ps[b].k, (size_t)sh->kv_heads * sh->tk, 128);
		delta = gpucheck_tensor_delta(128, s1);
		rtol = gpucheck_rtol_acc(dt) + 2 * delta + c;
		rtol_lse = GPUCHECK_RTOL + 2 * delta + c;
		atol = rtol * tol.vmax;
		for (h = 0; h < sh->heads; h++) {
			const float *o = res.o + ((size_t)b * sh->heads + h) * no;
			const float *lse = res.lse + ((size_t)b * sh->heads + h) *
			    sh->tq;

			problem_head(&ps[b], h, &one);
			ck_assert(reference_attention(&one, ref, ref_lse, err,
			    sizeof err) == 0);
			for (r = 0; r < sh->tq; r++) {
				const long sees = (long)r + sh->tk - sh->tq;

				if (sh->causal && sees < 0) {
					/* no key: O = 0, lse = -inf, exactly */
					ck_assert_msg(lse[r] == -INFINITY, "%s: head %d row "
					    "%d sees no key, lse %g", what, h, r, lse[r]);
					for (x = 0; x < 128; x++)
						ck_assert(o[(size_t)r * 128 + x] == 0.0f);
					seen->empty_rows++;
					continue;
				}
				if (sh->causal && sees < last0)
					seen->empty_ranges++;
				e = fabs(lse[r] - ref_lse[r]) / (rtol_lse * (1 +
				    fabs(ref_lse[r])));
				ck_assert_msg(e <= 1.0, "%s: batch %d head %d row %d: lse "
				    "%.9g, reference %.9g", what, b, h, r, lse[r],
				    ref_lse[r]);
				seen->worst = fmax(seen->worst, e);
				for (x = 0; x < 128; x++) {
					const double got = o[(size_t)r * 128 + x];
					const double want = ref[(size_t)r * 128 + x];

					e = fabs(got - want) / (atol + rtol * fabs(want));
					ck_assert_msg(e <= 1.0, "%s: batch %d head %d row %d "
					    "column %d: %.9g, reference %.9g (%d ranges)",
					    what, b, h, r, x, got, want, res.splits);
					seen->worst = fmax(seen->worst, e);
				}
			}
		}
	}
	printf("decode %s: %d key range%s, worst at %.3g of the bound\n", what,
	    res.splits, res.splits == 1 ? "" : "s", seen->worst);
	if (sh->page_size > 0)
		same_as_contiguous(sh, ps, &res, what);
	gpu_result_free(&res);
	for (b = 0; b < sh->batch; b++)
		problem_free(&ps[b]);
	free(ps);
	free(ref);
	free(ref_lse);
}

/* Small shapes: every path of the kernel, both dtypes. */
START_TEST(test_small)
{
	static const struct decode_shape shapes[] = {
		{ 1, 1, 1, 1, 1, 0, 0, 0 }, { 1, 1, 1, 1, 7, 0, 3, 0 },
		{ 2, 4, 2, 3, 37, 1, 0, 0 }, { 1, 8, 1, 5, 300, 1, 0, 0 },
		{ 3, 6, 3, 1, 1000, 0, 0, 0 }, { 1, 32, 8, 1, 129, 0, 0, 0 },
		{ 2, 2, 2, 7, 5, 1, 0, 0 },	/* rows that see no key */
		{ 2, 2, 2, 7, 5, 1, 2, 0 },	/* and rows with an empty range */
		{ 1, 4, 2, 40, 300, 1, 12, 0 },	/* empty ranges, packed rows */
		{ 4, 16, 2, 2, 999, 1, 0, 0 },	/* 16 packed rows: two chunks */
		{ 1, 12, 4, 2, 4096, 0, 0, 0 }, { 2, 32, 32, 1, 3000, 0, 0, 0 },
		{ 1, 4, 4, 64, 300, 1, 0, 0 },	/* the most rows a head */
		{ 1, 32, 8, 1, 5000, 0, 1, 0 }, { 1, 32, 8, 1, 5000, 0, 7, 0 },
	};
	struct decode_seen seen;
	int i, dt, empty_rows = 0, empty_ranges = 0, split = 0;

	for (dt = DTYPE_FP16; dt <= DTYPE_BF16; dt++)
		for (i = 0; i < (int)(sizeof shapes / sizeof shapes[0]); i++) {
			decode_check(&shapes[i], (enum dtype)dt, &seen);
			empty_rows += seen.empty_rows;
			empty_ranges += seen.empty_ranges;
			split += seen.splits > 1;
		}
	ck_assert_msg(empty_rows > 0 && empty_ranges > 0 && split >= 4,
	    "coverage: %d rows without keys, %d rows with an empty last range, "
	    "%d split runs", empty_rows, empty_ranges, split);
}
END_TEST

/* Long ones, in fp16 (bf16 takes the same paths, checked above, and
 * here on one shape of each kernel): many key ranges (one batch entry, 8
 * K/V heads), a ragged Tk, the most ranges, and a batch whose groups fill
 * the GPU unsplit; and ranges long enough that the default streams them
 * through the tensor cores' ring (decode_takes_ring; packed rows: one
 * range, ragged; two, merged; causal, Tq = 3, two row chunks; one range
 * of 20000 keys; two of 16384, the least the ring takes; and one row a
 * block, one range). */
START_TEST(test_long)
{
	static const struct decode_shape shapes[] = {
		{ 1, 32, 8, 1, 32768, 0, 0, 0 }, { 1, 32, 8, 1, 65537, 0, 0, 0 },
		{ 2, 32, 8, 1, 20001, 1, 0, 0 }, { 1, 32, 8, 1, 70000, 0, 256, 0 },
		{ 9, 32, 32, 1, 1000, 0, 0, 0 },
		{ 1, 32, 8, 1, 65537, 0, 1, 0 }, { 1, 32, 8, 1, 70000, 0, 2, 0 },
		{ 2, 8, 2, 3, 40000, 1, 1, 0 }, { 1, 8, 8, 1, 33000, 0, 1, 0 },
		{ 1, 32, 8, 1, 20000, 0, 1, 0 }, { 1, 32, 8, 1, 32768, 0, 2, 0 },
	};
	struct decode_seen seen;
	int i, most = 0, ring = 0;

	for (i = 0; i < (int)(sizeof shapes / sizeof shapes[0]); i++) {
		decode_check(&shapes[i], DTYPE_FP16, &seen);
		most = seen.splits > most ? seen.splits : most;
		ring += decode_takes_ring(decode_block_rows(shapes[i].heads /
		    shapes[i].kv_heads * shapes[i].tq),
		    (shapes[i].tk + seen.splits - 1) / seen.splits);
	}
	decode_check(&shapes[0], DTYPE_BF16, &seen);
	decode_check(&shapes[5], DTYPE_BF16, &seen);
	ck_assert_msg(most >= 8, "the long shapes ran %d key ranges at most",
	    most);
	ck_assert_msg(ring >= 6, "%d runs through the ring", ring);
}
END_TEST

/* Paged K and V (a shuffled table of pages of 16, 64 or 256 keys):
 * every kernel (one row; packed rows; the ring, one row and packed),
 * grouped heads and none, causal and not, Tk not a multiple of the page
 * size and smaller than a page, ranges asked and the kernel's own; each
 * held to the reference and to the contiguous run's bits. */
START_TEST(test_paged)
{
	static const struct decode_shape shapes[] = {
		{ 2, 8, 2, 1, 1000, 0, 0, 16 },	/* packed rows */
		{ 1, 8, 8, 1, 777, 1, 0, 64 },	/* one row a block */
		{ 3, 32, 8, 2, 3001, 1, 0, 256 },
		{ 1, 4, 2, 3, 300, 1, 5, 16 },	/* ranges asked */
		{ 2, 4, 4, 1, 5000, 0, 7, 256 },
		{ 1, 2, 1, 1, 100, 0, 0, 256 },	/* less than a page */
		{ 2, 8, 1, 5, 1234, 1, 0, 64 },	/* MQA */
		{ 1, 32, 8, 1, 40000, 0, 2, 16 },	/* the ring, packed */
		{ 1, 8, 8, 1, 33000, 1, 1, 64 },	/* the ring, one row */
		{ 1, 32, 8, 1, 65537, 0, 0, 256 },
	};
	const int n = (int)(sizeof shapes / sizeof shapes[0]);
	struct decode_seen seen;
	int i, dt, shuffled = 0, ring = 0;

	for (dt = DTYPE_FP16; dt <= DTYPE_BF16; dt++)
		for (i = 0; i < n; i++) {
			if (dt == DTYPE_BF16 && shapes[i].tk > 20000 && i != n - 3)
				continue;
			decode_check(&shapes[i], (enum dtype)dt, &seen);
			shuffled += seen.shuffled;
			ring += decode_takes_ring(decode_block_rows(shapes[i].heads /
			    shapes[i].kv_heads * shapes[i].tq), decode_range_keys(
			    shapes[i].tk, seen.splits, 1));
		}
	ck_assert_msg(shuffled >= n, "%d paged runs through a shuffled table",
	    shuffled);
	ck_assert_msg(ring >= 3, "%d paged runs through the ring", ring);
}
END_TEST

#ifdef HAVE_CUDA
/* max |x| over n entries */
static double
max_abs(const float *x, size_t n)
{
	double m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		m = fmax(m, fabs((double)x[i]));
	return m;
}

/*
 * A batch of cache lengths Tk_b (one of them 0, some under a range's
 * first key) through decode_host, contiguous and then paged through
 * shuffled tables of pages of 16, 64 and 256 keys: the contiguous run
 * against a double reference of each entry's Tk_b keys (the diagonal at
 * r + Tk_b - Tq), the paged ones against its bits.
 */
static void
varlen_check(int batch, int heads, int kv_heads, int tq, int tk,
    const int *lens, int causal, int splits, enum dtype dt)
{
	const size_t nq = (size_t)batch * heads * tq * 128;
	const size_t nk = (size_t)batch * kv_heads * tk * 128;
	const int group = heads / kv_heads;
	struct problem_spec spec;
	struct problem p;
	struct decode_host_call call;
	struct decode_result ran, ran_p;
	float *q, *k, *v, *o, *lse, *o_p, *lse_p, *kp, *vp;
	double *s, s1, delta, c, rtol, rtol_lse, atol, vmax;
	float scale = 0;
	char err[512], what[200];
	int b, h, r, x, key, empty = 0, sizes_i;
	uint64_t rng = 12345;

	snprintf(what, sizeof what, "varlen %s B=%d H=%d G=%d Tq=%d Tk=%d%s "
	    "splits %d", dtype_name(dt), batch, heads, kv_heads, tq, tk,
	    causal ? " causal" : "", splits);
	q = malloc(nq * sizeof *q);
	k = malloc(nk * sizeof *k);
	v = malloc(nk * sizeof *v);
	o = malloc(nq * sizeof *o);
	o_p = malloc(nq * sizeof *o_p);
	lse = malloc(nq / 128 * sizeof *lse);
	lse_p = malloc(nq / 128 * sizeof *lse_p);
	s = malloc((size_t)tk * sizeof *s);
	ck_assert(q && k && v && o && o_p && lse && lse_p && s);
	for (b = 0; b < batch; b++) {
		problem_spec_init(&spec);
		spec.tq = tq;
		spec.tk = tk;
		spec.d = spec.dv = 128;
		spec.heads = heads;
		spec.kv_heads = kv_heads;
		spec.input = INPUTS_NORMAL;
		spec.dtype = dt;
		spec.seed = 31 + (uint64_t)b;
		ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0,
		    "%s: %s", what, err);
		memcpy(q + (size_t)b * heads * tq * 128, p.q, (size_t)heads * tq *
		    128 * sizeof *q);
		memcpy(k + (size_t)b * kv_heads * tk * 128, p.k, (size_t)kv_heads *
		    tk * 128 * sizeof *k);
		memcpy(v + (size_t)b * kv_heads * tk * 128, p.v, (size_t)kv_heads *
		    tk * 128 * sizeof *v);
		scale = p.scale;
		problem_free(&p);
	}
	memset(&call, 0, sizeof call);
	call.batch = batch;
	call.heads = heads;
	call.kv_heads = kv_heads;
	call.tq = tq;
	call.tk = tk;
	call.dtype = dt == DTYPE_BF16 ? DECODE_BF16 : DECODE_FP16;
	call.causal = causal;
	call.splits = splits;
	call.scale = scale;
	call.q = q;
	call.k = k;
	call.v = v;
	call.seqlens = lens;
	ck_assert_msg(decode_host(&call, o, lse, &ran, err, sizeof err) == 0,
	    "%s: %s", what, err);

	/* The reference, entry by entry, with the bound of decode_check. */
	s1 = call.scale * max_norm(q, nq / 128, 128) * max_norm(k, nk / 128, 128);
	delta = gpucheck_tensor_delta(128, s1);
	c = (tk / 16.0 + 64.0) * 0x1p-24;
	rtol = gpucheck_rtol_acc(dt) + 2 * delta + c;
	rtol_lse = GPUCHECK_RTOL + 2 * delta + c;
	vmax = max_abs(v, nk);
	atol = rtol * vmax;
	for (b = 0; b < batch; b++)
		for (h = 0; h < heads; h++)
			for (r = 0; r < tq; r++) {
				const size_t row = ((size_t)b * heads + h) * tq + r;
				const float *qr = q + row * 128;
				const float *kh = k + ((size_t)b * kv_heads + h / group) *
				    tk * 128;
				const float *vh = v + ((size_t)b * kv_heads + h / group) *
				    tk * 128;
				const long sees = causal ? (long)r + lens[b] - tq :
				    (long)lens[b] - 1;
				double mx = -INFINITY, l = 0, e;

				for (key = 0; key < lens[b] && key <= sees; key++) {
					double dot = 0;

					for (x = 0; x < 128; x++)
						dot += (double)qr[x] * kh[(size_t)key * 128 + x];
					s[key] = dot * call.scale;
					mx = fmax(mx, s[key]);
				}
				if (key == 0) {
					ck_assert_msg(lse[row] == -INFINITY, "%s: entry %d "
					    "(Tk_b %d) head %d row %d sees no key, lse %g",
					    what, b, lens[b], h, r, lse[row]);
					for (x = 0; x < 128; x++)
						ck_assert(o[row * 128 + x] == 0.0f);
					empty++;
					continue;
				}
				for (x = 0; x < key; x++)
					l += (s[x] = exp(s[x] - mx));
				e = fabs(lse[row] - (mx + log(l))) / (rtol_lse *
				    (1 + fabs(mx + log(l))));
				ck_assert_msg(e <= 1.0, "%s: entry %d (Tk_b %d) head %d "
				    "row %d: lse %.9g, reference %.9g", what, b, lens[b], h,
				    r, lse[row], mx + log(l));
				for (x = 0; x < 128; x++) {
					double want = 0;
					int j;

					for (j = 0; j < key; j++)
						want += s[j] * vh[(size_t)j * 128 + x];
					want /= l;
					e = fabs(o[row * 128 + x] - want) / (atol + rtol *
					    fabs(want));
					ck_assert_msg(e <= 1.0, "%s: entry %d (Tk_b %d) head %d "
					    "row %d column %d: %.9g, reference %.9g", what, b,
					    lens[b], h, r, x, o[row * 128 + x], want);
				}
			}
	ck_assert_msg(empty > 0, "%s: no row saw no key", what);

	/* Paged: each entry's pages at shuffled places of one pool, with
	 * one page more than the table names, and the same bits. */
	for (sizes_i = 0; sizes_i < 3; sizes_i++) {
		static const int sizes[] = { 16, 64, 256 };
		const int ps = sizes[sizes_i], max_pages = (tk + ps - 1) / ps;
		const int pages = batch * max_pages + 1;
		int *table = malloc((size_t)batch * max_pages * sizeof *table);
		int *perm = malloc((size_t)pages * sizeof *perm), i, j, t;
		const size_t slot = (size_t)kv_heads * 128;
		size_t at;

		kp = calloc((size_t)pages * ps * slot, sizeof *kp);
		vp = calloc((size_t)pages * ps * slot, sizeof *vp);
		ck_assert(table && perm && kp && vp);
		for (i = 0; i < pages; i++)
			perm[i] = i;
		for (i = pages - 1; i > 0; i--) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			j = (int)((rng >> 33) % (uint64_t)(i + 1));
			t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (b = 0; b < batch; b++)
			for (i = 0; i < max_pages; i++)
				table[b * max_pages + i] = perm[b * max_pages + i];
		for (b = 0; b < batch; b++)
			for (h = 0; h < kv_heads; h++)
				for (key = 0; key < tk; key++) {
					at = ((size_t)table[b * max_pages + key / ps] * ps +
					    key % ps) * slot + (size_t)h * 128;
					memcpy(kp + at, k + (((size_t)b * kv_heads + h) * tk +
					    key) * 128, 128 * sizeof *kp);
					memcpy(vp + at, v + (((size_t)b * kv_heads + h) * tk +
					    key) * 128, 128 * sizeof *vp);
				}
		call.k = kp;
		call.v = vp;
		call.table = table;
		call.page_size = ps;
		call.max_pages = max_pages;
		call.pages = pages;
		ck_assert_msg(decode_host(&call, o_p, lse_p, &ran_p, err,
		    sizeof err) == 0, "%s pages of %d: %s", what, ps, err);
		ck_assert_msg(ran_p.splits == ran.splits && ran_p.ring == ran.ring,
		    "%s pages of %d: ran %d ranges (ring %d), contiguous %d (%d)",
		    what, ps, ran_p.splits, ran_p.ring, ran.splits, ran.ring);
		ck_assert_msg(memcmp(o, o_p, nq * sizeof *o) == 0 &&
		    memcmp(lse, lse_p, nq / 128 * sizeof *lse) == 0,
		    "%s pages of %d: not the contiguous run's bits", what, ps);
		call.k = k;
		call.v = v;
		call.table = NULL;
		free(table);
		free(perm);
		free(kp);
		free(vp);
	}
	printf("decode %s: %d key range%s%s, %d rows without keys; paged "
	    "alike\n", what, ran.splits, ran.splits == 1 ? "" : "s",
	    ran.ring ? " (ring)" : "", empty);
	free(q);
	free(k);
	free(v);
	free(o);
	free(o_p);
	free(lse);
	free(lse_p);
	free(s);
}
#endif

/* Cache lengths per batch entry (cache_seqlens), through the C entry
 * (the table's decode entry takes one Tk a batch): entries of 0 keys,
 * of fewer keys than a range, causal, packed rows, ranges the kernel
 * picks and ranges asked, the ring. */
START_TEST(test_varlen)
{
#ifdef HAVE_CUDA
	static const int lens4[] = { 1000, 0, 317, 999 };
	static const int lens3[] = { 40000, 12345, 0 };
	static const int lens5[] = { 5, 0, 64, 1, 200 };

	varlen_check(4, 8, 2, 1, 1000, lens4, 0, 0, DTYPE_FP16);
	varlen_check(4, 8, 2, 1, 1000, lens4, 0, 0, DTYPE_BF16);
	varlen_check(4, 4, 4, 3, 1000, lens4, 1, 4, DTYPE_FP16);
	varlen_check(5, 8, 8, 1, 200, lens5, 1, 0, DTYPE_BF16);
	varlen_check(5, 16, 2, 2, 200, lens5, 1, 3, DTYPE_FP16);
	varlen_check(3, 32, 8, 1, 40000, lens3, 0, 2, DTYPE_FP16);
	varlen_check(3, 8, 8, 1, 40000, lens3, 1, 1, DTYPE_FP16);
#else
	ck_abort_msg("built without CUDA: no decode kernel to run");
#endif
}
END_TEST

/*
 * A packed batch (--seqlens-q, --seqlens-k) through the table's entry:
 * sequence b runs as entry b with cache length Tk_b (grouped heads: each
 * head packed, head after head), held to the double reference of each
 * head and sequence (varlen_reference) with decode_check's bound;
 * sequences of unequal Tq_b are refused by name.
 */
static void
packed_check(const char *lens_q, const char *lens_k, int heads,
    int kv_heads, int causal, enum dtype dt)
{
	struct problem_spec spec;
	struct problem p;
	struct gpu_result res;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_tol tol;
	double *ref, *ref_lse, s1, delta, c, rtol, rtol_lse, atol, e, worst = 0;
	char err[512], what[160];
	int longest = 0, empty = 0, b, r, x, rows;

	snprintf(what, sizeof what, "packed %s H=%d G=%d Tq_b %s Tk_b %s%s",
	    dtype_name(dt), heads, kv_heads, lens_q, lens_k, causal ?
	    " causal" : "");
	problem_spec_init(&spec);
	spec.seqlens_q = lens_q;
	spec.seqlens_k = lens_k;
	spec.d = spec.dv = 128;
	spec.heads = heads;
	spec.kv_heads = kv_heads;
	spec.causal = causal;
	spec.input = INPUTS_NORMAL;
	spec.dtype = dt;
	spec.seed = 41;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s: %s",
	    what, err);
	rows = problem_rows(&p);
	ref = malloc((size_t)rows * 128 * sizeof *ref);
	ref_lse = malloc((size_t)rows * sizeof *ref_lse);
	ck_assert(ref != NULL && ref_lse != NULL);
	ck_assert(varlen_reference(&p, ref, ref_lse, err, sizeof err) == 0);
	ck_assert_msg(gpu_run(decode(), &p, 1, &t, &rule, 0, 0, &res, err,
	    sizeof err) == 0, "%s: %s", what, err);
	for (b = 0; b < p.nseq; b++)
		longest = p.cu_k[b + 1] - p.cu_k[b] > longest ? p.cu_k[b + 1] -
		    p.cu_k[b] : longest;
	gpucheck_tolerance(decode(), &p, &tol);
	s1 = p.scale * max_norm(p.q, (size_t)rows, 128) * max_norm(p.k,
	    (size_t)kv_heads * p.tk, 128);
	delta = gpucheck_tensor_delta(128, s1);
	c = (longest / 16.0 + 64.0) * 0x1p-24;
	rtol = gpucheck_rtol_acc(dt) + 2 * delta + c;
	rtol_lse = GPUCHECK_RTOL + 2 * delta + c;
	atol = rtol * tol.vmax;
	for (r = 0; r < rows; r++) {
		if (ref_lse[r] == -INFINITY) {
			ck_assert_msg(res.lse[r] == -INFINITY, "%s: row %d sees no "
			    "key, lse %g", what, r, res.lse[r]);
			for (x = 0; x < 128; x++)
				ck_assert(res.o[(size_t)r * 128 + x] == 0.0f);
			empty++;
			continue;
		}
		e = fabs(res.lse[r] - ref_lse[r]) / (rtol_lse * (1 +
		    fabs(ref_lse[r])));
		ck_assert_msg(e <= 1.0, "%s: row %d: lse %.9g, reference %.9g",
		    what, r, res.lse[r], ref_lse[r]);
		worst = fmax(worst, e);
		for (x = 0; x < 128; x++) {
			e = fabs(res.o[(size_t)r * 128 + x] - ref[(size_t)r * 128 +
			    x]) / (atol + rtol * fabs(ref[(size_t)r * 128 + x]));
			ck_assert_msg(e <= 1.0, "%s: row %d column %d: %.9g, "
			    "reference %.9g", what, r, x, res.o[(size_t)r * 128 + x],
			    ref[(size_t)r * 128 + x]);
			worst = fmax(worst, e);
		}
	}
	printf("decode %s: %d key range%s, %d rows without keys, worst at "
	    "%.3g of the bound\n", what, res.splits, res.splits == 1 ? "" :
	    "s", empty, worst);
	gpu_result_free(&res);
	problem_free(&p);
	free(ref);
	free(ref_lse);
}

START_TEST(test_packed)
{
	struct problem_spec spec;
	struct problem p;
	struct gpu_result res;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512];

	packed_check("1,1,1,1", "1000,1,317,4096", 1, 1, 0, DTYPE_FP16);
	packed_check("3,3,3", "2,700,40000", 1, 1, 1, DTYPE_BF16);
	packed_check("8,8", "5,129", 1, 1, 1, DTYPE_FP16);
	/* Grouped heads, each packed head after head: the rows of a head
	 * and a sequence gathered to the kernel's entry and back. */
	packed_check("1,1,1", "300,17,5000", 8, 2, 0, DTYPE_FP16);
	packed_check("2,2", "1,900", 4, 4, 1, DTYPE_BF16);
	problem_spec_init(&spec);
	spec.seqlens_q = "2,3";
	spec.seqlens_k = "100,100";
	spec.d = spec.dv = 128;
	spec.input = INPUTS_NORMAL;
	spec.dtype = DTYPE_FP16;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(gpu_run(decode(), &p, 1, &t, &rule, 0, 0, &res, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "sequence 1 has 3 query rows and sequence 0 "
	    "has 2") != NULL, "%s", err);
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("gpu_decode");
	TCase *tc = tcase_create("decode kernel");

	gpuprobe_require_kernel(gpu_kernel_find("decode"));
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_small);
	tcase_add_test(tc, test_long);
	tcase_add_test(tc, test_paged);
	tcase_add_test(tc, test_varlen);
	tcase_add_test(tc, test_packed);
	suite_add_tcase(s, tc);
	return s;
}
