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
#include "gpuprobe.h"
#include "model/reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
	int empty_rows;		/* rows that saw no key */
	int empty_ranges;	/* rows that saw no key of the last range */
	double worst;		/* largest excess over the bound */
};

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

	snprintf(what, sizeof what, "%s B=%d H=%d G=%d Tq=%d Tk=%d%s%s",
	    dtype_name(dt), sh->batch, sh->heads, sh->kv_heads, sh->tq, sh->tk,
	    sh->causal ? " causal" : "", sh->splits > 0 ? " (ranges asked)" : "");
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
		ck_assert_msg(problem_build(&spec, &ps[b], err, sizeof err) == 0,
		    "%s: %s", what, err);
	}
	ck_assert_msg(gpu_run_ranges(decode(), ps, sh->batch, &t, &rule, 0,
	    sh->splits, 0, &res, err, sizeof err) == 0, "%s: %s", what, err);
	ck_assert_msg(res.splits >= 1, "%s: %d key ranges", what, res.splits);
	seen->splits = res.splits;
	seen->empty_rows = seen->empty_ranges = 0;
	seen->worst = 0;
	range_keys = (sh->tk + res.splits - 1) / res.splits;
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
		{ 1, 1, 1, 1, 1, 0, 0 }, { 1, 1, 1, 1, 7, 0, 3 },
		{ 2, 4, 2, 3, 37, 1, 0 }, { 1, 8, 1, 5, 300, 1, 0 },
		{ 3, 6, 3, 1, 1000, 0, 0 }, { 1, 32, 8, 1, 129, 0, 0 },
		{ 2, 2, 2, 7, 5, 1, 0 },	/* rows that see no key */
		{ 2, 2, 2, 7, 5, 1, 2 },	/* and rows with an empty range */
		{ 1, 4, 2, 40, 300, 1, 12 },	/* empty ranges, packed rows */
		{ 4, 16, 2, 2, 999, 1, 0 },	/* 16 packed rows: two chunks */
		{ 1, 12, 4, 2, 4096, 0, 0 }, { 2, 32, 32, 1, 3000, 0, 0 },
		{ 1, 4, 4, 64, 300, 1, 0 },	/* the most rows a head */
		{ 1, 32, 8, 1, 5000, 0, 1 }, { 1, 32, 8, 1, 5000, 0, 7 },
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
		{ 1, 32, 8, 1, 32768, 0, 0 }, { 1, 32, 8, 1, 65537, 0, 0 },
		{ 2, 32, 8, 1, 20001, 1, 0 }, { 1, 32, 8, 1, 70000, 0, 256 },
		{ 9, 32, 32, 1, 1000, 0, 0 },
		{ 1, 32, 8, 1, 65537, 0, 1 }, { 1, 32, 8, 1, 70000, 0, 2 },
		{ 2, 8, 2, 3, 40000, 1, 1 }, { 1, 8, 8, 1, 33000, 0, 1 },
		{ 1, 32, 8, 1, 20000, 0, 1 }, { 1, 32, 8, 1, 32768, 0, 2 },
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

Suite *
test_suite(void)
{
	Suite *s = suite_create("gpu_decode");
	TCase *tc = tcase_create("decode kernel");

	gpuprobe_require_kernel(gpu_kernel_find("decode"));
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_small);
	tcase_add_test(tc, test_long);
	suite_add_tcase(s, tc);
	return s;
}
