/*
 * check_paged.c - the paged KV cache (model/paged.h): the simulator
 * reading K and V through a page table gives the contiguous problem's
 * O and lse bit for bit (page sizes 1 to 256, a ragged last page,
 * causal, windows, split-KV, grouped heads, fp16), the seed's table is a
 * permutation, a table read from .npy (int32 and int64) is used as
 * given, bad tables are refused, and the run counter counts one run per
 * page a tile touches while the HBM bytes stay put.
 */
#include "config.h"

#include "testutil.h"
#include "model/memory.h"
#include "model/traffic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
spec_for(struct problem_spec *spec, int tq, int tk, int d, int page_size)
{
	problem_spec_init(spec);
	spec->tq = tq;
	spec->tk = tk;
	spec->d = d;
	spec->dv = d;
	spec->input = INPUTS_NORMAL;
	spec->seed = 7;
	spec->page_size = page_size;
}

static void
build(const struct problem_spec *spec, struct problem *p)
{
	char err[256];

	ck_assert_msg(problem_build(spec, p, err, sizeof err) == 0, "%s", err);
}

/* O and lse of p under tiling t, split by splits ranges (< 2: none);
 * malloc'd (the caller frees). */
static void
run(const struct problem *p, int br, int bc, int splits, float **o,
    float **lse)
{
	struct tiling t = { .br = br, .bc = bc, .order = ORDER_FA2 };
	struct online_rule rule = { .convention = CONV_UNNORMALIZED };
	size_t rows = (size_t)problem_rows(p);

	*o = malloc(rows * (size_t)p->dv * sizeof **o);
	*lse = malloc(rows * sizeof **lse);
	ck_assert(*o != NULL && *lse != NULL);
	tu_run_split(p, &t, splits, 0, &rule, *o, *lse);
}

/* The paged problem of spec (page size P) against its contiguous twin:
 * the same bits in O and lse. */
static void
same_bits(struct problem_spec *spec, int page_size, int br, int bc,
    int splits)
{
	struct problem flat, paged;
	float *o0, *l0, *o1, *l1;
	size_t rows;

	const char *table = spec->block_table;

	spec->page_size = 0;
	spec->block_table = NULL;
	build(spec, &flat);
	spec->page_size = page_size;
	spec->block_table = table;
	build(spec, &paged);
	ck_assert_int_eq(paged.paged.page_size, page_size);
	ck_assert_int_eq(flat.paged.page_size, 0);
	run(&flat, br, bc, splits, &o0, &l0);
	run(&paged, br, bc, splits, &o1, &l1);
	rows = (size_t)problem_rows(&flat);
	ck_assert_msg(memcmp(o0, o1, rows * (size_t)flat.dv * sizeof *o0) == 0,
	    "O differs: tk %d, page size %d, bc %d, splits %d", spec->tk,
	    page_size, bc, splits);
	ck_assert_msg(memcmp(l0, l1, rows * sizeof *l0) == 0,
	    "lse differs: tk %d, page size %d, bc %d, splits %d", spec->tk,
	    page_size, bc, splits);
	free(o0);
	free(l0);
	free(o1);
	free(l1);
	problem_free(&flat);
	problem_free(&paged);
}

static const int page_sizes[] = { 1, 3, 16, 64, 256 };
#define NSIZES (int)(sizeof page_sizes / sizeof page_sizes[0])

START_TEST(test_paged_equals_contiguous)
{
	struct problem_spec spec;
	int i;

	/* 300 keys: every page size leaves a ragged last page. */
	for (i = 0; i < NSIZES; i++) {
		spec_for(&spec, 8, 300, 8, 0);
		same_bits(&spec, page_sizes[i], 4, 32, 1);
		same_bits(&spec, page_sizes[i], 8, 7, 1);
	}
}
END_TEST

START_TEST(test_paged_masks)
{
	struct problem_spec spec;
	int i;

	for (i = 0; i < NSIZES; i++) {
		spec_for(&spec, 40, 300, 8, 0);
		spec.causal = 1;
		same_bits(&spec, page_sizes[i], 8, 16, 1);
		spec_for(&spec, 40, 300, 8, 0);
		spec.window_set = 1;
		spec.window_left = 37;
		spec.window_right = 5;
		same_bits(&spec, page_sizes[i], 8, 16, 1);
		spec.softcap_set = 1;
		spec.softcap = 2.0;
		spec.alibi_set = 1;
		spec.alibi = 0.25;
		same_bits(&spec, page_sizes[i], 8, 16, 1);
	}
}
END_TEST

START_TEST(test_paged_split_heads_dtype)
{
	struct problem_spec spec;
	int i;

	for (i = 0; i < NSIZES; i++) {
		spec_for(&spec, 4, 500, 16, 0);
		same_bits(&spec, page_sizes[i], 4, 32, 3);
		spec.heads = 4;
		spec.kv_heads = 2;
		same_bits(&spec, page_sizes[i], 4, 16, 1);
		spec.dtype = DTYPE_FP16;
		same_bits(&spec, page_sizes[i], 4, 16, 2);
	}
}
END_TEST

/* The seed's table: a permutation of the pages, not the identity (or
 * the test would not tell physical from logical), and the pool holds
 * each key at its slot. */
START_TEST(test_seed_table)
{
	struct problem_spec spec;
	struct problem p;
	int seen[64] = { 0 }, first[64], b, moved = 0, c, x;

	spec_for(&spec, 4, 250, 4, 4);
	build(&spec, &p);
	ck_assert_int_eq(p.paged.pages, 63);
	ck_assert_int_eq(p.paged.pool, 63);
	for (b = 0; b < p.paged.pages; b++) {
		ck_assert(p.paged.table[b] >= 0 && p.paged.table[b] < 63);
		ck_assert_int_eq(seen[p.paged.table[b]]++, 0);
		moved += p.paged.table[b] != b;
		first[b] = p.paged.table[b];
	}
	ck_assert_int_gt(moved, 50);
	for (c = 0; c < p.tk; c++)
		for (x = 0; x < p.d; x++) {
			long s = paged_slot(&p.paged, c);
			ck_assert(p.paged.kt[(size_t)x * paged_slots(&p.paged) +
			    (size_t)s] == p.kt[(size_t)x * p.tk + c]);
			ck_assert(p.paged.v[(size_t)s * p.dv + x] ==
			    p.v[(size_t)c * p.dv + x]);
		}
	problem_free(&p);
	/* Another seed, another table. */
	spec.seed = 8;
	build(&spec, &p);
	for (b = 0, moved = 0; b < p.paged.pages; b++)
		moved += p.paged.table[b] != first[b];
	ck_assert_int_gt(moved, 0);
	problem_free(&p);
}
END_TEST

/* A .npy file of n integers (4 or 8 bytes each), or of float32 when
 * item is 0; two rows of n/2 when two_d. */
static void
write_table(const char *path, const long *v, int n, int item, int two_d)
{
	char hdr[128];
	FILE *f;
	int len, i;

	len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': "
	    "False, 'shape': (%d%s), }", item == 8 ? "<i8" : item == 4 ?
	    "<i4" : "<f4", two_d ? 2 : n, two_d ? ", 0" : ",");
	if (two_d)
		len = snprintf(hdr, sizeof hdr, "{'descr': '<i4', 'fortran_order': "
		    "False, 'shape': (2, %d), }", n / 2);
	while ((10 + len + 1) % 64 != 0)
		hdr[len++] = ' ';
	hdr[len++] = '\n';
	f = fopen(path, "wb");
	ck_assert(f != NULL);
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc(len & 0xff, f);
	fputc(len >> 8, f);
	fwrite(hdr, 1, (size_t)len, f);
	for (i = 0; i < n; i++) {
		long long x = v[i];
		unsigned char b[8];
		float fx = (float)v[i];
		int k;

		if (item == 0) {
			fwrite(&fx, 4, 1, f);
			continue;
		}
		for (k = 0; k < 8; k++)
			b[k] = (unsigned char)((unsigned long long)x >> (8 * k));
		fwrite(b, 1, (size_t)item, f);
	}
	ck_assert_int_eq(fclose(f), 0);
}

/* The tables' file: named in the parent (an unchecked fixture), so
 * that the parent removes it even after a test that failed in its fork. */
static char table_path[64];

static void
path_setup(void)
{
	snprintf(table_path, sizeof table_path, "check_paged_%ld.npy",
	    (long)getpid());
}

static void
path_teardown(void)
{
	unlink(table_path);
}

/* A table from a file is used as given: int32 and int64, a pool larger
 * than the pages (entries beyond them unused), and still the same bits. */
START_TEST(test_npy_table)
{
	static const long table[] = { 9, 0, 7, 2, 5, 1, 3, 8, 4, 6, 11 };
	struct problem_spec spec;
	struct problem p;
	int item, b;

	for (item = 4; item <= 8; item += 4) {
		write_table(table_path, table, 11, item, 0);
		spec_for(&spec, 8, 70, 8, 7);
		spec.block_table = table_path;
		build(&spec, &p);
		ck_assert_int_eq(p.paged.pages, 10);
		ck_assert_int_eq(p.paged.pool, 11);
		for (b = 0; b < 10; b++)
			ck_assert_int_eq(p.paged.table[b], table[b]);
		problem_free(&p);
		same_bits(&spec, 7, 4, 8, 1);
		same_bits(&spec, 7, 4, 16, 2);
	}
	unlink(table_path);
}
END_TEST

static void
refused(const long *v, int n, int item, int two_d, int page_size,
    const char *want)
{
	struct problem_spec spec;
	struct problem p;
	char err[256];

	write_table(table_path, v, n, item, two_d);
	spec_for(&spec, 8, 40, 4, page_size);
	spec.block_table = table_path;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
	ck_assert_ptr_null(p.paged.table);
}

START_TEST(test_refusals)
{
	static const long ok[] = { 3, 1, 0, 2, 4 };
	static const long repeat[] = { 3, 1, 1, 2, 4 };
	static const long outside[] = { 3, 1, 5, 2, 4 };
	static const long negative[] = { 3, -1, 0, 2, 4 };
	struct problem_spec spec;
	struct problem p;
	char err[256];

	/* 40 keys in pages of 10: 4 pages, so ok[] (5) is enough ... */
	refused(ok, 3, 4, 0, 10, "3 pages, but --tk needs 4");
	refused(repeat, 5, 4, 0, 10, "entry 2 repeats page 1");
	refused(outside, 5, 8, 0, 10, "entry 2 is page 5, outside the pool "
	    "of 5 pages");
	refused(negative, 5, 4, 0, 10, "entry 1 is page -1");
	refused(ok, 5, 0, 0, 10, "need int32 '<i4' or int64 '<i8'");
	refused(ok, 4, 4, 1, 10, "need a 1-D array");
	/* ... and pages of 8 need 5 of them: ok[] holds them. */
	write_table(table_path, ok, 5, 4, 0);
	spec_for(&spec, 8, 40, 4, 8);
	spec.block_table = table_path;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	problem_free(&p);
	/* A table without a page size, a page size of 0 by hand. */
	spec.page_size = 0;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "--block-table needs --page-size") != NULL,
	    "%s", err);
	unlink(table_path);
	ck_assert_int_eq(paged_table(0, 10, NULL, 1, &p.paged, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "--page-size must be at least 1") != NULL,
	    "%s", err);
}
END_TEST

/* Paging moves no byte more: each tile reads K_j and V_j in one run a
 * page it touches.  Bc = 16: pages of 16 keep one run a tile, pages of 4
 * take four, and pages of 24 end inside 5 of the 16 tiles (at 24, 72,
 * 120, 168, 216), which then read two runs. */
START_TEST(test_runs)
{
	struct problem_spec spec;
	struct problem flat, p16, p4, p24;
	struct tiling t = { .br = 4, .bc = 16, .order = ORDER_FA2 };
	struct schedule s;
	struct traffic_table t0, t1;
	struct paged_reads r;
	char err[256];

	spec_for(&spec, 1, 256, 8, 0);
	build(&spec, &flat);
	spec.page_size = 16;
	build(&spec, &p16);
	spec.page_size = 4;
	build(&spec, &p4);
	spec.page_size = 24;
	build(&spec, &p24);
	ck_assert_msg(schedule_init_split(&s, &flat, &t, NULL, err, sizeof err)
	    == 0, "%s", err);
	ck_assert_int_eq(s.nsteps, 16);

	paged_count(&flat.paged, &s, &r);
	ck_assert_int_eq(r.tiles, 16);
	ck_assert_int_eq(r.runs, 16);
	ck_assert_int_eq(r.longest, 16);
	paged_count(&p16.paged, &s, &r);
	ck_assert_int_eq(r.runs, 16);
	ck_assert_int_eq(r.longest, 16);
	ck_assert_int_eq(r.spanning, 0);
	paged_count(&p4.paged, &s, &r);
	ck_assert_int_eq(r.runs, 64);
	ck_assert_int_eq(r.longest, 4);
	ck_assert_int_eq(r.spanning, 16);
	/* Pages of 24 keys: tiles [0,16) one run, [16,32) two, ... */
	paged_count(&p24.paged, &s, &r);
	ck_assert_int_eq(r.runs, 16 + 5);
	ck_assert_int_eq(r.longest, 16);
	ck_assert_int_eq(r.spanning, 5);

	/* The HBM bytes of the paged problem are the contiguous one's. */
	ck_assert_msg(traffic_init(&t0, &flat, &s, err, sizeof err) == 0, "%s",
	    err);
	ck_assert_msg(traffic_init(&t1, &p4, &s, err, sizeof err) == 0, "%s",
	    err);
	ck_assert_uint_eq(t0.total.hbm_read, t1.total.hbm_read);
	ck_assert_uint_eq(t0.total.hbm_write, t1.total.hbm_write);
	traffic_free(&t0);
	traffic_free(&t1);
	schedule_free(&s);
	problem_free(&flat);
	problem_free(&p16);
	problem_free(&p4);
	problem_free(&p24);
}
END_TEST

/* The memory check counts the pool: whole pages of K^T and V for each
 * K/V head (100 keys in pages of 16: 112 slots). */
START_TEST(test_memory_counts_pool)
{
	struct memory_job j;
	uint64_t flat, paged;

	memset(&j, 0, sizeof j);
	j.tq = 8;
	j.tk = 100;
	j.d = 8;
	j.dv = 4;
	j.heads = 4;
	j.kv_heads = 2;
	j.br = j.bc = 16;
	j.parts = MEMORY_SIM;
	flat = memory_estimate(&j);
	j.page_size = 16;
	paged = memory_estimate(&j);
	ck_assert_uint_eq(paged - flat, 2 * 112 * (8 + 4) * sizeof(float));
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("paged");
	TCase *tc = tcase_create("paged");

	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, path_setup, path_teardown);
	tcase_add_test(tc, test_paged_equals_contiguous);
	tcase_add_test(tc, test_paged_masks);
	tcase_add_test(tc, test_paged_split_heads_dtype);
	tcase_add_test(tc, test_seed_table);
	tcase_add_test(tc, test_npy_table);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_runs);
	tcase_add_test(tc, test_memory_counts_pool);
	suite_add_tcase(s, tc);
	return s;
}
