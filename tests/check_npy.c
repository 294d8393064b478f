/* check_npy.c - .npy round trips and every malformed file refused. */
#include "config.h"

#include "testutil.h"
#include "app/npyout.h"
#include "model/npy.h"

#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void
make_dir(void)
{
	strcpy(dir, "/tmp/check_npy.XXXXXX");
	ck_assert(mkdtemp(dir) != NULL);
}

/* Removes the scratch directory; fails if anything but `keep` remains. */
static void
remove_dir(const char *keep)
{
	char path[512];
	struct dirent *e;
	DIR *d = opendir(dir);

	ck_assert(d != NULL);
	while ((e = readdir(d)) != NULL) {
		/* Dot files too: the writer's temporaries are hidden. */
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		ck_assert_msg(keep != NULL && strcmp(e->d_name, keep) == 0,
		    "stray file %s", e->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Writes a .npy of format version 1 or 2 with the given header dict
 * (padded as the format asks) and payload; returns its length. */
static size_t
build_v(unsigned char *buf, int version, const char *dict, const void *data,
    size_t n)
{
	size_t pre = version == 1 ? 10 : 12, hlen = strlen(dict) + 1, len;

	while ((pre + hlen) % 64)
		hlen++;
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)version;
	buf[7] = 0;
	buf[8] = (unsigned char)(hlen & 0xff);
	buf[9] = (unsigned char)(hlen >> 8);
	if (version != 1)
		buf[10] = buf[11] = 0;
	memset(buf + pre, ' ', hlen);
	memcpy(buf + pre, dict, strlen(dict));
	buf[pre + hlen - 1] = '\n';
	len = pre + hlen;
	memcpy(buf + len, data, n);
	return len + n;
}

static size_t
build(unsigned char *buf, const char *dict, const void *data, size_t n)
{
	return build_v(buf, 1, dict, data, n);
}

START_TEST(test_round_trip)
{
	float x[6] = { 1.5f, -2.0f, 3.25f, 0.0f, 1e-30f, -7.0f };
	long shape[2] = { 2, 3 };
	struct npy_array a;
	char path[128], err[256];

	make_dir();
	snprintf(path, sizeof path, "%s/x.npy", dir);
	ck_assert_int_eq(npy_write(path, x, 2, shape, err, sizeof err), 0);
	ck_assert_int_eq(npy_read(path, &a, err, sizeof err), 0);
	ck_assert_int_eq(a.ndim, 2);
	ck_assert_int_eq(a.shape[0], 2);
	ck_assert_int_eq(a.shape[1], 3);
	ck_assert_mem_eq(a.data, x, sizeof x);
	npy_free(&a);
	shape[0] = 6;
	ck_assert_int_eq(npy_write(path, x, 1, shape, err, sizeof err), 0);
	ck_assert_int_eq(npy_read(path, &a, err, sizeof err), 0);
	ck_assert_int_eq(a.ndim, 1);
	ck_assert_int_eq(a.shape[0], 6);
	npy_free(&a);
	remove_dir("x.npy");
}
END_TEST

START_TEST(test_float64_and_v2)
{
	double x[3] = { 1.0, -0.5, 1e10 };
	unsigned char buf[512];
	struct npy_array a;
	char err[256];
	size_t len;

	len = build(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
	    x, sizeof x);
	ck_assert_int_eq(npy_parse(buf, len, "x", &a, err, sizeof err), 0);
	ck_assert_float_eq(a.data[1], -0.5f);
	ck_assert_float_eq(a.data[2], 1e10f);
	npy_free(&a);
	/* Version 2.0: a 4-byte header length. */
	len = build_v(buf, 2, "{'descr': '<f8', 'fortran_order': False, "
	    "'shape': (3,), }", x, sizeof x);
	ck_assert_int_eq(npy_parse(buf, len, "x", &a, err, sizeof err), 0);
	ck_assert_int_eq(a.shape[0], 3);
	npy_free(&a);
}
END_TEST

/* Each malformed file, and a word its message must contain. */
static const struct {
	const char *dict;
	size_t data;		/* payload bytes */
	const char *word;
} bad[] = {
	{ "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, "dtype" },
	{ "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, "big-endian" },
	{ "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", 4, "dtype" },
	{ "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, "Fortran" },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 12, "truncated" },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12, "stray" },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2), }", 32, "dimensions" },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, "dimensions" },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", 0, "empty" },
	{ "{'descr': '<f4', 'fortran_order': False, }", 8, "shape" },
	{ "{'fortran_order': False, 'shape': (2,), }", 8, "descr" },
	{ "{'descr': '<f4', 'shape': (2,), }", 8, "fortran_order" },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 8, "shape" },
};

START_TEST(test_malformed)
{
	unsigned char buf[512], zero[64] = { 0 };
	struct npy_array a;
	char err[256];
	size_t len;

	len = build(buf, bad[_i].dict, zero, bad[_i].data);
	ck_assert_int_eq(npy_parse(buf, len, "bad.npy", &a, err, sizeof err), -1);
	ck_assert_msg(strstr(err, bad[_i].word) != NULL, "'%s' lacks '%s'", err,
	    bad[_i].word);
	ck_assert_msg(strncmp(err, "bad.npy: ", 9) == 0, "'%s' lacks the name", err);
	ck_assert(a.data == NULL);
}
END_TEST

START_TEST(test_bad_framing)
{
	unsigned char buf[512], zero[8] = { 0 };
	struct npy_array a;
	char err[256];
	size_t len;

	len = build(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
	    zero, 8);
	buf[0] = 'X';
	ck_assert_int_eq(npy_parse(buf, len, "f", &a, err, sizeof err), -1);
	ck_assert(strstr(err, "magic") != NULL);
	buf[0] = 0x93;
	buf[6] = 9;
	ck_assert_int_eq(npy_parse(buf, len, "f", &a, err, sizeof err), -1);
	ck_assert(strstr(err, "version") != NULL);
	buf[6] = 1;
	ck_assert_int_eq(npy_parse(buf, 40, "f", &a, err, sizeof err), -1);
	ck_assert(strstr(err, "truncated header") != NULL);
	ck_assert_int_eq(npy_parse(buf, 5, "f", &a, err, sizeof err), -1);
	ck_assert_int_eq(npy_read("/nonexistent/x.npy", &a, err, sizeof err), -1);
	ck_assert(strstr(err, "/nonexistent/x.npy: ") == err);
}
END_TEST

/* A write that cannot happen leaves nothing behind, and an existing file
 * is replaced whole or kept. */
START_TEST(test_write_failure_leaves_nothing)
{
	float x[2] = { 1, 2 };
	long shape[1] = { 2 };
	char path[128], err[256];

	ck_assert_int_eq(npy_write("/nonexistent/dir/o.npy", x, 1, shape, err,
	    sizeof err), -1);
	ck_assert(strstr(err, "/nonexistent/dir/o.npy") != NULL);
	make_dir();
	/* A directory in the way of the rename: the temporary file must go. */
	snprintf(path, sizeof path, "%s/o.npy", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(npy_write(path, x, 1, shape, err, sizeof err), -1);
	rmdir(path);
	remove_dir(NULL);
}
END_TEST

/* What is not a regular file is refused before a byte is read: a FIFO
 * with no writer must not hang, /dev/zero must not be read forever. */
START_TEST(test_not_regular)
{
	static const struct {
		const char *path, *word;
	} cases[] = {
		{ "/dev/zero", "not a regular file" },
		{ "/dev/null", "not a regular file" },
		{ "/tmp", "is a directory" },
		{ "/nonexistent", "No such file" },
	};
	struct npy_array a;
	char path[128], err[256];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(npy_read(cases[i].path, &a, err, sizeof err), -1);
		ck_assert_msg(strstr(err, cases[i].word) != NULL, "%s", err);
		ck_assert(a.data == NULL);
	}
	make_dir();
	snprintf(path, sizeof path, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	alarm(5);
	ck_assert_int_eq(npy_read(path, &a, err, sizeof err), -1);
	alarm(0);
	ck_assert_msg(strstr(err, "not a regular file") != NULL, "%s", err);
	unlink(path);
	remove_dir(NULL);
}
END_TEST

/* The header is read first: a file whose header declares more (or less)
 * data than it holds is refused before the data is allocated or read. */
START_TEST(test_size_declared)
{
	unsigned char buf[512];
	char path[128], err[256];
	struct npy_file f;
	struct npy_array a;
	size_t len;
	FILE *fp;

	make_dir();
	snprintf(path, sizeof path, "%s/big.npy", dir);
	len = build(buf, "{'descr': '<f4', 'fortran_order': False, "
	    "'shape': (100000, 100000), }", "\0\0\0\0", 4);
	fp = fopen(path, "wb");
	ck_assert(fp != NULL);
	ck_assert_uint_eq(fwrite(buf, 1, len, fp), len);
	fclose(fp);
	ck_assert_int_eq(npy_open(path, &f, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "truncated data (4 of 40000000000 bytes)"),
	    "%s", err);
	ck_assert_int_eq(f.fd, -1);
	/* A 2.0 header claiming 2 GiB of text. */
	memcpy(buf, "\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
	fp = fopen(path, "wb");
	ck_assert(fp != NULL);
	ck_assert_uint_eq(fwrite(buf, 1, 64, fp), 64);
	fclose(fp);
	ck_assert_int_eq(npy_read(path, &a, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "too long") != NULL, "%s", err);
	unlink(path);
	remove_dir(NULL);
}
END_TEST

/* A float64 beyond float32's range is named, not shown as inf. */
START_TEST(test_float64_overflow)
{
	double x[4] = { 1.0, 2.0, 1e300, -1e300 };
	unsigned char buf[512];
	struct npy_array a;
	char err[256];
	size_t len;

	len = build(buf, "{'descr': '<f8', 'fortran_order': False, "
	    "'shape': (2, 2), }", x, sizeof x);
	ck_assert_int_eq(npy_parse(buf, len, "x.npy", &a, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "x.npy: entry (1, 0) is 1e+300, beyond "
	    "float32's range") != NULL, "%s", err);
	ck_assert(a.data == NULL);
	len = build(buf, "{'descr': '<f8', 'fortran_order': False, "
	    "'shape': (4,), }", x, sizeof x);
	ck_assert_int_eq(npy_parse(buf, len, "x.npy", &a, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "entry 2 is 1e+300") != NULL, "%s", err);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("npy");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_float64_and_v2);
	tcase_add_loop_test(tc, test_malformed, 0, (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(tc, test_bad_framing);
	tcase_add_test(tc, test_write_failure_leaves_nothing);
	tcase_add_test(tc, test_not_regular);
	tcase_add_test(tc, test_size_declared);
	tcase_add_test(tc, test_float64_overflow);
	suite_add_tcase(s, tc);
	return s;
}
