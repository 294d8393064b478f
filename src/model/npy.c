/* npy.c - .npy reading, bounded (npy.h); writing is app/npyout.c. */
#include "config.h"

#include "npy.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* Magic, version and the longest header-length field. */
#define NPY_PREAMBLE 12
/* NumPy writes headers of a hundred bytes or so; a longer one is not
 * worth reading (NumPy's own reader stops at 10000 by default). */
#define NPY_MAX_HEADER ((size_t)1 << 16)
/* Data are read through a buffer of this many bytes. */
#define NPY_CHUNK ((size_t)1 << 16)

/* What a header says. */
struct npy_info {
	int ndim;
	long shape[2];
	int f8;			/* 8-byte entries */
	int integer;		/* '<i4' or '<i8' (npy_read_index only) */
	size_t count;		/* entries */
	size_t bytes;		/* of data */
};

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Finds the value text after 'key': in the header dict; NULL if absent. */
static const char *
header_value(const char *hdr, const char *key)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof pat, "'%s'", key);
	p = strstr(hdr, pat);
	if (p == NULL) {
		snprintf(pat, sizeof pat, "\"%s\"", key);
		p = strstr(hdr, pat);
	}
	if (p == NULL)
		return NULL;
	p += strlen(pat);
	while (isspace((unsigned char)*p))
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* Up to len-1 characters of s for a message: one line, printable. */
static void
printable(const char *s, char *out, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len && s[i] != '\0' && s[i] != ','; i++)
		out[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	out[i] = '\0';
}

/* Parses "(a, b)" / "(a,)" / "()" into shape; returns ndim or -1. */
static int
parse_shape(const char *p, long *shape, int maxdim)
{
	int ndim = 0;
	char *end;
	long v;

	if (*p != '(')
		return -1;
	p++;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == ')')
			return ndim;
		if (!isdigit((unsigned char)*p))
			return -1;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno != 0 || v < 0)
			return -1;
		if (ndim < maxdim)
			shape[ndim] = v;
		ndim++;
		p = end;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == ',')
			p++;
		else if (*p != ')')
			return -1;
	}
}

/* The framing: magic, version and header length, from the first avail
 * bytes.  Sets *hstart (where the header text begins) and *hlen. */
static int
npy_frame(const unsigned char *buf, size_t avail, const char *name,
    size_t *hstart, size_t *hlen, char *err, size_t errlen)
{
	if (avail < NPY_MAGIC_LEN + 4 || memcmp(buf, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
		return util_error(err, errlen, "%s: not a .npy file (bad magic)", name);
	if (buf[6] == 1) {
		*hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
		*hstart = 10;
	} else if (buf[6] == 2 || buf[6] == 3) {
		if (avail < 12)
			return util_error(err, errlen, "%s: truncated header", name);
		*hlen = le32(buf + 8);
		*hstart = 12;
	} else
		return util_error(err, errlen, "%s: unsupported .npy version %d.%d",
		    name, buf[6], buf[7]);
	if (*hlen > NPY_MAX_HEADER)
		return util_error(err, errlen, "%s: header of %zu bytes is too long "
		    "(at most %zu)", name, *hlen, NPY_MAX_HEADER);
	return 0;
}

/* Parses the header text (hlen bytes at text) into info. */
static int
npy_header(const unsigned char *text, size_t hlen, const char *name,
    int integer, struct npy_info *info, char *err, size_t errlen)
{
	char *hdr;
	const char *v;
	long shape[3] = { 0, 0, 0 };
	int ndim;

	memset(info, 0, sizeof *info);
	hdr = malloc(hlen + 1);
	if (hdr == NULL)
		return util_error(err, errlen, "%s: out of memory", name);
	memcpy(hdr, text, hlen);
	hdr[hlen] = '\0';
	if (strlen(hdr) != hlen) {
		util_error(err, errlen, "%s: header holds a NUL byte", name);
		goto fail;
	}

	v = header_value(hdr, "descr");
	if (v == NULL) {
		util_error(err, errlen, "%s: header has no 'descr'", name);
		goto fail;
	}
	if (integer) {
		/* An index file: integers only, never rounded from floats. */
		if (strncmp(v, "'<i4'", 5) == 0 || strncmp(v, "\"<i4\"", 5) == 0)
			info->f8 = 0;
		else if (strncmp(v, "'<i8'", 5) == 0 ||
		    strncmp(v, "\"<i8\"", 5) == 0)
			info->f8 = 1;
		else {
			char shown[16];
			printable(v, shown, sizeof shown);
			util_error(err, errlen, "%s: dtype %s is not supported "
			    "(need int32 '<i4' or int64 '<i8')", name, shown);
			goto fail;
		}
		info->integer = 1;
	} else if (strncmp(v, "'<f4'", 5) == 0 || strncmp(v, "\"<f4\"", 5) == 0)
		info->f8 = 0;
	else if (strncmp(v, "'<f8'", 5) == 0 || strncmp(v, "\"<f8\"", 5) == 0)
		info->f8 = 1;
	else if (strncmp(v, "'>f", 3) == 0 || strncmp(v, "\">f", 3) == 0) {
		util_error(err, errlen, "%s: big-endian data is not supported "
		    "(need '<f4' or '<f8')", name);
		goto fail;
	} else {
		char shown[16];
		printable(v, shown, sizeof shown);
		util_error(err, errlen, "%s: dtype %s is not supported "
		    "(need float32 '<f4' or float64 '<f8')", name, shown);
		goto fail;
	}

	v = header_value(hdr, "fortran_order");
	if (v == NULL) {
		util_error(err, errlen, "%s: header has no 'fortran_order'", name);
		goto fail;
	}
	if (strncmp(v, "True", 4) == 0) {
		util_error(err, errlen, "%s: Fortran order is not supported "
		    "(save with C order)", name);
		goto fail;
	}
	if (strncmp(v, "False", 5) != 0) {
		util_error(err, errlen, "%s: bad 'fortran_order' value", name);
		goto fail;
	}

	v = header_value(hdr, "shape");
	ndim = v == NULL ? -1 : parse_shape(v, shape, 3);
	if (ndim < 0) {
		util_error(err, errlen, "%s: header has no readable 'shape'", name);
		goto fail;
	}
	if (ndim < 1 || ndim > 2) {
		util_error(err, errlen, "%s: array has %d dimensions (need 1 or 2)",
		    name, ndim);
		goto fail;
	}
	if (ndim == 1)
		shape[1] = 1;
	if (shape[0] == 0 || shape[1] == 0) {
		util_error(err, errlen, "%s: array is empty", name);
		goto fail;
	}
	if (shape[0] > INT32_MAX || shape[1] > INT32_MAX ||
	    (size_t)shape[0] > SIZE_MAX / 8 / (size_t)shape[1]) {
		util_error(err, errlen, "%s: shape too large", name);
		goto fail;
	}
	info->ndim = ndim;
	info->shape[0] = shape[0];
	info->shape[1] = shape[1];
	info->count = (size_t)shape[0] * (size_t)shape[1];
	info->bytes = info->count * (info->f8 ? 8 : 4);
	free(hdr);
	return 0;

fail:
	free(hdr);
	return -1;
}

/* The data must be exactly what the header declares. */
static int
npy_data_size(size_t have, const struct npy_info *info, const char *name,
    char *err, size_t errlen)
{
	if (have < info->bytes)
		return util_error(err, errlen, "%s: truncated data (%zu of %zu "
		    "bytes)", name, have, info->bytes);
	if (have > info->bytes)
		return util_error(err, errlen, "%s: %zu stray bytes after the data",
		    name, have - info->bytes);
	return 0;
}

/* Converts n entries of raw little-endian data into out[first ..]; a
 * float64 beyond float32's range is refused, naming the entry. */
static int
npy_decode(const unsigned char *raw, size_t n, int f8, float *out, size_t first,
    long cols, int ndim, const char *name, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (f8) {
			double x;
			uint64_t u = (uint64_t)le32(raw + 8 * i) |
			    (uint64_t)le32(raw + 8 * i + 4) << 32;
			memcpy(&x, &u, sizeof x);
			if (isfinite(x) && fabs(x) > FLT_MAX) {
				size_t at = first + i;
				if (ndim == 1)
					return util_error(err, errlen, "%s: entry %zu is "
					    "%g, beyond float32's range (up to %g)", name,
					    at, x, (double)FLT_MAX);
				return util_error(err, errlen, "%s: entry (%zu, %zu) "
				    "is %g, beyond float32's range (up to %g)", name,
				    at / (size_t)cols, at % (size_t)cols, x,
				    (double)FLT_MAX);
			}
			out[first + i] = (float)x;
		} else {
			uint32_t u = le32(raw + 4 * i);
			memcpy(&out[first + i], &u, sizeof(float));
		}
	}
	return 0;
}

static int
npy_alloc(const struct npy_info *info, struct npy_array *out, const char *name,
    char *err, size_t errlen)
{
	out->data = util_calloc(info->count, sizeof(float), name, err, errlen);
	if (out->data == NULL)
		return -1;
	out->ndim = info->ndim;
	out->shape[0] = info->shape[0];
	out->shape[1] = info->shape[1];
	return 0;
}

int
npy_parse(const unsigned char *buf, size_t len, const char *name,
    struct npy_array *out, char *err, size_t errlen)
{
	struct npy_info info;
	size_t hstart, hlen;

	memset(out, 0, sizeof *out);
	if (npy_frame(buf, len, name, &hstart, &hlen, err, errlen) != 0)
		return -1;
	if (hlen > len - hstart)
		return util_error(err, errlen, "%s: truncated header", name);
	if (npy_header(buf + hstart, hlen, name, 0, &info, err, errlen) != 0 ||
	    npy_data_size(len - hstart - hlen, &info, name, err, errlen) != 0 ||
	    npy_alloc(&info, out, name, err, errlen) != 0)
		return -1;
	if (npy_decode(buf + hstart + hlen, info.count, info.f8, out->data, 0,
	    info.shape[1], info.ndim, name, err, errlen) != 0) {
		npy_free(out);
		return -1;
	}
	return 0;
}

/* Reads up to len bytes, fewer only at the end of the file; -1 on error. */
static ssize_t
npy_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

void
npy_close(struct npy_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* npy_open, for float files (integer 0) or index files (1). */
static int
npy_open_as(const char *path, int integer, struct npy_file *f, char *err,
    size_t errlen)
{
	unsigned char pre[NPY_PREAMBLE], *text = NULL;
	struct npy_info info;
	struct stat st;
	size_t hstart, hlen, size;
	ssize_t n;
	int flags;

	memset(f, 0, sizeof *f);
	f->name = path;
	/* O_NONBLOCK: a FIFO with no writer must not hang the open; it is
	 * refused below, before anything is read. */
	f->fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (f->fd < 0)
		return util_error(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(f->fd, &st) != 0) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		util_error(err, errlen, "%s: is a directory, not a .npy file", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		util_error(err, errlen, "%s: not a regular file (a FIFO, device or "
		    "socket is not read)", path);
		goto fail;
	}
	flags = fcntl(f->fd, F_GETFL);
	if (flags < 0 || fcntl(f->fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	size = (size_t)st.st_size;
	n = npy_read_full(f->fd, pre, size < sizeof pre ? size : sizeof pre);
	if (n < 0) {
		util_error(err, errlen, "%s: read error: %s", path, strerror(errno));
		goto fail;
	}
	if (npy_frame(pre, (size_t)n, path, &hstart, &hlen, err, errlen) != 0)
		goto fail;
	if (hlen > size - hstart) {
		util_error(err, errlen, "%s: truncated header", path);
		goto fail;
	}
	text = malloc(hlen + 1);
	if (text == NULL) {
		util_error(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	if (lseek(f->fd, (off_t)hstart, SEEK_SET) < 0 ||
	    (n = npy_read_full(f->fd, text, hlen)) < 0 || (size_t)n != hlen) {
		util_error(err, errlen, "%s: read error: %s", path,
		    n < 0 ? strerror(errno) : "the file shrank");
		goto fail;
	}
	if (npy_header(text, hlen, path, integer, &info, err, errlen) != 0 ||
	    npy_data_size(size - hstart - hlen, &info, path, err, errlen) != 0)
		goto fail;
	free(text);
	f->ndim = info.ndim;
	f->shape[0] = info.shape[0];
	f->shape[1] = info.shape[1];
	f->f8 = info.f8;
	return 0;

fail:
	free(text);
	npy_close(f);
	return -1;
}

int
npy_open(const char *path, struct npy_file *f, char *err, size_t errlen)
{
	return npy_open_as(path, 0, f, err, errlen);
}

int
npy_load(struct npy_file *f, struct npy_array *out, char *err, size_t errlen)
{
	struct npy_info info;
	unsigned char *chunk = NULL, extra;
	size_t item = f->f8 ? 8 : 4, per = NPY_CHUNK / item, done, n;
	ssize_t got;

	memset(out, 0, sizeof *out);
	memset(&info, 0, sizeof info);
	info.ndim = f->ndim;
	info.shape[0] = f->shape[0];
	info.shape[1] = f->shape[1];
	info.count = (size_t)f->shape[0] * (size_t)f->shape[1];
	chunk = malloc(NPY_CHUNK);
	if (chunk == NULL) {
		util_error(err, errlen, "%s: out of memory", f->name);
		goto fail;
	}
	if (npy_alloc(&info, out, f->name, err, errlen) != 0)
		goto fail;
	for (done = 0; done < info.count; done += n) {
		n = info.count - done < per ? info.count - done : per;
		got = npy_read_full(f->fd, chunk, n * item);
		if (got < 0) {
			util_error(err, errlen, "%s: read error: %s", f->name,
			    strerror(errno));
			goto fail;
		}
		if ((size_t)got != n * item) {
			util_error(err, errlen, "%s: truncated data (the file shrank "
			    "while it was read)", f->name);
			goto fail;
		}
		if (npy_decode(chunk, n, f->f8, out->data, done, info.shape[1],
		    info.ndim, f->name, err, errlen) != 0)
			goto fail;
	}
	if (npy_read_full(f->fd, &extra, 1) != 0) {
		util_error(err, errlen, "%s: the file grew while it was read",
		    f->name);
		goto fail;
	}
	free(chunk);
	npy_close(f);
	return 0;

fail:
	free(chunk);
	npy_free(out);
	npy_close(f);
	return -1;
}

int
npy_read(const char *path, struct npy_array *out, char *err, size_t errlen)
{
	struct npy_file f;

	memset(out, 0, sizeof *out);
	if (npy_open(path, &f, err, errlen) != 0)
		return -1;
	return npy_load(&f, out, err, errlen);
}

void
npy_free(struct npy_array *a)
{
	free(a->data);
	memset(a, 0, sizeof *a);
}

int
npy_read_index(const char *path, long **out, long *n, char *err, size_t errlen)
{
	struct npy_file f;
	unsigned char *raw = NULL, extra;
	size_t item, count, i;
	ssize_t got;

	*out = NULL;
	*n = 0;
	if (npy_open_as(path, 1, &f, err, errlen) != 0)
		return -1;
	if (f.ndim != 1) {
		util_error(err, errlen, "%s: array is %ld x %ld (need a 1-D array)",
		    path, f.shape[0], f.shape[1]);
		goto fail;
	}
	item = f.f8 ? 8 : 4;
	count = (size_t)f.shape[0];
	raw = util_calloc(count, item, path, err, errlen);
	if (raw == NULL || (*out = util_calloc(count, sizeof **out, path, err,
	    errlen)) == NULL)
		goto fail;
	got = npy_read_full(f.fd, raw, count * item);
	if (got < 0 || (size_t)got != count * item ||
	    npy_read_full(f.fd, &extra, 1) != 0) {
		util_error(err, errlen, "%s: the file changed while it was read",
		    path);
		goto fail;
	}
	for (i = 0; i < count; i++) {
		uint64_t u = le32(raw + item * i);
		if (f.f8)
			u |= (uint64_t)le32(raw + 8 * i + 4) << 32;
		else if (u & 0x80000000u)
			u |= 0xffffffff00000000ULL;	/* sign of an int32 */
		(*out)[i] = (long)(int64_t)u;
	}
	free(raw);
	npy_close(&f);
	*n = (long)count;
	return 0;

fail:
	free(raw);
	free(*out);
	*out = NULL;
	npy_close(&f);
	return -1;
}
