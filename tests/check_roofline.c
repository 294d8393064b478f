/* check_roofline.c - intensities and roofs, computed by hand. */
#include "config.h"

#include "testutil.h"
#include "model/roofline.h"

#include <math.h>
#include <string.h>

static struct roofline_count
count(enum roofline_pass pass, int batch, int h, int g, int tq, int tk, int d,
    enum dtype dt, int br, int bc)
{
	struct roofline_shape s;
	struct roofline_count c;
	char err[256];

	memset(&s, 0, sizeof s);
	s.pass = pass;
	s.batch = batch;
	s.heads = h;
	s.kv_heads = g;
	s.tq = tq;
	s.tk = tk;
	s.d = d;
	s.dtype = dt;
	s.br = br;
	s.bc = bc;
	s.pack_gqa = g < h;
	ck_assert_msg(roofline_count(&s, &c, err, sizeof err) == 0, "%s", err);
	return c;
}

/*
 * A tiled forward, one head, fp16 (e = 2), d = 64, Tq = Tk = T:
 *   FLOPs 4 T^2 d.
 *   each tensor once: Q, K, V read and O written, 4 T d e, and lse T x 4:
 *     T = 1024: 524288 + 4096 = 528384;  I = 268435456 / 528384 = 508.0
 *     T = 4096: 2097152 + 16384 = 2113536; I = 4294967296 / 2113536 = 2032.1
 *   so I ~ T / e grows with T (four times the T, four times the I);
 *   Br = 128 tiles: Q once, K and V once a row block (T / 128 of them):
 *     T = 1024: 131072 + 8 x 262144 + 131072 + 4096 = 2363392; I = 113.6
 *     T = 4096: 524288 + 32 x 1048576 + 524288 + 16384 = 34619392; I = 124.1
 *   flat near 2 Br / e = 128.
 */
START_TEST(test_tiled_by_hand)
{
	struct roofline_count a = count(ROOFLINE_TILED, 1, 1, 1, 1024, 1024, 64,
	    DTYPE_FP16, 128, 64);
	struct roofline_count b = count(ROOFLINE_TILED, 1, 1, 1, 4096, 4096, 64,
	    DTYPE_FP16, 128, 64);

	ck_assert_uint_eq(a.flops, 268435456ULL);
	ck_assert_uint_eq(a.hbm_bytes, 528384ULL);
	ck_assert_uint_eq(a.tile_bytes, 2363392ULL);
	ck_assert_uint_eq(b.flops, 4294967296ULL);
	ck_assert_uint_eq(b.hbm_bytes, 2113536ULL);
	ck_assert_uint_eq(b.tile_bytes, 34619392ULL);
	/* Eight heads of a batch of 4: 32 times one head. */
	a = count(ROOFLINE_TILED, 4, 8, 8, 1024, 1024, 64, DTYPE_FP16, 128, 64);
	ck_assert_uint_eq(a.flops, 32 * 268435456ULL);
	ck_assert_uint_eq(a.hbm_bytes, 32 * 528384ULL);
	ck_assert_uint_eq(a.tile_bytes, 32 * 2363392ULL);
}
END_TEST

/*
 * Decoding: one query row, d = 128, fp16.  A head: Q 256 B, K and V
 * 2 x 256 Tk, O 256, lse 4; FLOPs 4 Tk d = 512 Tk.  32 heads on 32:
 *   Tk = 4096: 32 x (2097152 + 516) bytes, 32 x 2097152 FLOPs: I = 0.99975
 *   Tk = 32768: I = 0.99997: flat at 2 (H / G) / e = 1.
 * On 8 K/V heads, packed: a group reads its K and V once for 4 rows:
 *   8 x (4 x 256 + 512 Tk + 4 x 256 + 16) bytes, 32 x 512 Tk FLOPs: I ~ 4.
 */
START_TEST(test_decode_by_hand)
{
	struct roofline_count a = count(ROOFLINE_TILED, 1, 32, 32, 1, 4096, 128,
	    DTYPE_FP16, 1, 128);
	struct roofline_count b = count(ROOFLINE_TILED, 1, 32, 32, 1, 32768, 128,
	    DTYPE_FP16, 1, 128);
	struct roofline_count c = count(ROOFLINE_TILED, 1, 32, 8, 1, 32768, 128,
	    DTYPE_FP16, 4, 128);

	ck_assert_uint_eq(a.flops, 32ULL * 2097152);
	ck_assert_uint_eq(a.hbm_bytes, 32ULL * (2097152 + 516));
	ck_assert_uint_eq(a.tile_bytes, a.hbm_bytes);
	ck_assert_uint_eq(b.hbm_bytes, 32ULL * (16777216 + 516));
	ck_assert_uint_eq(c.flops, 32ULL * 512 * 32768);
	ck_assert_uint_eq(c.hbm_bytes, 8ULL * (1024 + 16777216 + 1024 + 16));
	ck_assert_double_eq_tol((double)c.flops / (double)c.hbm_bytes, 4.0, 1e-3);
}
END_TEST

/*
 * Standard attention, float32, d = 64, one head: read Q, K (2 T d), S,
 * P (2 T^2), V (T d); write S, P (2 T^2), O (T d): 16 T (T + d) bytes
 * for 4 T^2 d FLOPs, I = T d / (4 (T + d)):
 *   T = 1024: 17825792 bytes, I = 15.06;  T = 4096: 272629760, I = 15.75
 * flat near d / 4 whatever T: S and P grow as fast as the FLOPs.
 */
START_TEST(test_standard_by_hand)
{
	struct roofline_count a = count(ROOFLINE_STANDARD, 1, 1, 1, 1024, 1024,
	    64, DTYPE_FP32, 0, 0);
	struct roofline_count b = count(ROOFLINE_STANDARD, 1, 1, 1, 4096, 4096,
	    64, DTYPE_FP32, 0, 0);

	ck_assert_uint_eq(a.hbm_bytes, 17825792ULL);
	ck_assert_uint_eq(a.tile_bytes, a.hbm_bytes);
	ck_assert_uint_eq(b.hbm_bytes, 272629760ULL);
	ck_assert_uint_eq(b.flops, 4294967296ULL);
}
END_TEST

/*
 * FlashAttention 2's backward, fp16, d = 128, one head, each tensor
 * once: the D pass reads O, dO (2 T d e) and writes D (4 T); the pass
 * reads K, V, Q, dO (4 T d e), lse and D (8 T), writes dQ in float32
 * (4 T d: its first tile does not read it), dK and dV (2 T d e):
 * 8 T d e + 4 T d + 12 T = 10534912 bytes at T = 4096, for 2.5 times the
 * forward's FLOPs, 10 T^2 d = 21474836480: I = 2038.4.
 */
START_TEST(test_backward_by_hand)
{
	struct roofline_count a = count(ROOFLINE_TILED_BWD, 1, 1, 1, 4096, 4096,
	    128, DTYPE_FP16, 64, 128);

	ck_assert_uint_eq(a.flops, 21474836480ULL);
	ck_assert_uint_eq(a.hbm_bytes, 10534912ULL);
	ck_assert_uint_gt(a.tile_bytes, a.hbm_bytes);
}
END_TEST

/* The H200's ridge: 989 / 4.8 = 206.04 FLOPs a byte (fp32: 13.96). */
START_TEST(test_ridge)
{
	const struct roofline_machine *m = &roofline_h200;

	ck_assert_double_eq_tol(roofline_ridge(m->tensor, m->hbm), 206.04, 0.01);
	ck_assert_double_eq_tol(roofline_ridge(m->fp32, m->hbm), 13.96, 0.01);
	ck_assert_double_eq_tol(roofline_roof(m->tensor, m->hbm, 1.0), 4.8e12, 1);
	ck_assert_double_eq_tol(roofline_roof(m->tensor, m->hbm, 2032), 989e12, 1);
	ck_assert_int_eq(roofline_compute_bound(m->tensor, m->hbm, 124), 0);
	ck_assert_int_eq(roofline_compute_bound(m->tensor, m->hbm, 2032), 1);
	ck_assert_int_eq(roofline_compute_bound(m->tensor, m->hbm, 1.0), 0);
}
END_TEST

START_TEST(test_bad_shape)
{
	struct roofline_shape s;
	struct roofline_count c;
	char err[256] = "";

	memset(&s, 0, sizeof s);
	s.batch = 1;
	s.heads = 6;
	s.kv_heads = 4;		/* 4 does not divide 6 */
	s.tq = s.tk = 8;
	s.d = 4;
	ck_assert_int_eq(roofline_count(&s, &c, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "heads 6 on 4"));
	ck_assert_uint_eq(c.flops, 0);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("roofline");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_tiled_by_hand);
	tcase_add_test(tc, test_decode_by_hand);
	tcase_add_test(tc, test_standard_by_hand);
	tcase_add_test(tc, test_backward_by_hand);
	tcase_add_test(tc, test_ridge);
	tcase_add_test(tc, test_bad_shape);
	suite_add_tcase(s, tc);
	return s;
}
