/* npy.c - .npy reading and atomic writing (see npy.h). */
#include "config.h"

#include "npy.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* Files bigger than this are refused before reading them whole. */
#define NPY_MAX_BYTES ((size_t)1 << 36)

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

int
npy_parse(const unsigned char *buf, size_t len, const char *name,
    struct npy_array *out, char *err, size_t errlen)
{
	size_t hlen, hstart, count, item, i;
	char *hdr = NULL;
	const char *v;
	long shape[3] = { 0, 0, 0 };
	int ndim, f8;
	const unsigned char *data;

	memset(out, 0, sizeof *out);
	if (len < NPY_MAGIC_LEN + 4 || memcmp(buf, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
		return util_error(err, errlen, "%s: not a .npy file (bad magic)", name);
	if (buf[6] == 1) {
		hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
		hstart = 10;
	} else if (buf[6] == 2 || buf[6] == 3) {
		if (len < 12)
			return util_error(err, errlen, "%s: truncated header", name);
		hlen = le32(buf + 8);
		hstart = 12;
	} else
		return util_error(err, errlen, "%s: unsupported .npy version %d.%d",
		    name, buf[6], buf[7]);
	if (hlen > len - hstart)
		return util_error(err, errlen, "%s: truncated header", name);
	hdr = malloc(hlen + 1);
	if (hdr == NULL)
		return util_error(err, errlen, "%s: out of memory", name);
	memcpy(hdr, buf + hstart, hlen);
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
	if (strncmp(v, "'<f4'", 5) == 0 || strncmp(v, "\"<f4\"", 5) == 0)
		f8 = 0;
	else if (strncmp(v, "'<f8'", 5) == 0 || strncmp(v, "\"<f8\"", 5) == 0)
		f8 = 1;
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
	count = (size_t)shape[0] * (size_t)shape[1];
	item = f8 ? 8 : 4;
	data = buf + hstart + hlen;
	if (len - hstart - hlen < count * item) {
		util_error(err, errlen, "%s: truncated data (%zu of %zu bytes)",
		    name, len - hstart - hlen, count * item);
		goto fail;
	}
	if (len - hstart - hlen > count * item) {
		util_error(err, errlen, "%s: %zu stray bytes after the data",
		    name, len - hstart - hlen - count * item);
		goto fail;
	}

	out->data = malloc(count * sizeof(float));
	if (out->data == NULL) {
		util_error(err, errlen, "%s: out of memory", name);
		goto fail;
	}
	for (i = 0; i < count; i++) {
		if (f8) {
			double x;
			uint64_t u = (uint64_t)le32(data + 8 * i) |
			    (uint64_t)le32(data + 8 * i + 4) << 32;
			memcpy(&x, &u, sizeof x);
			out->data[i] = (float)x;
		} else {
			uint32_t u = le32(data + 4 * i);
			memcpy(&out->data[i], &u, sizeof(float));
		}
	}
	out->ndim = ndim;
	out->shape[0] = shape[0];
	out->shape[1] = shape[1];
	free(hdr);
	return 0;

fail:
	free(hdr);
	return -1;
}

int
npy_read(const char *path, struct npy_array *out, char *err, size_t errlen)
{
	FILE *f;
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int rc;

	memset(out, 0, sizeof *out);
	f = fopen(path, "rb");
	if (f == NULL)
		return util_error(err, errlen, "%s: %s", path, strerror(errno));
	for (;;) {
		if (len == cap) {
			unsigned char *nb;
			if (cap >= NPY_MAX_BYTES) {
				fclose(f);
				free(buf);
				return util_error(err, errlen, "%s: file too large", path);
			}
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				fclose(f);
				free(buf);
				return util_error(err, errlen, "%s: out of memory", path);
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return util_error(err, errlen, "%s: read error", path);
	}
	fclose(f);
	rc = npy_parse(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}

void
npy_free(struct npy_array *a)
{
	free(a->data);
	memset(a, 0, sizeof *a);
}

int
npy_write(const char *path, const float *data, int ndim, const long *shape,
    char *err, size_t errlen)
{
	char header[128], *tmp = NULL;
	size_t hlen, count, i;
	unsigned char *body = NULL;
	FILE *f = NULL;
	int fd, n, made = 0;
	mode_t mask;

	if (ndim == 1)
		n = snprintf(header, sizeof header,
		    "{'descr': '<f4', 'fortran_order': False, 'shape': (%ld,), }",
		    shape[0]);
	else
		n = snprintf(header, sizeof header,
		    "{'descr': '<f4', 'fortran_order': False, 'shape': (%ld, %ld), }",
		    shape[0], shape[1]);
	/* Pad with spaces and a newline so magic + length + header is a
	 * multiple of 64, as the format asks. */
	hlen = (size_t)n + 1;
	while ((10 + hlen) % 64 != 0)
		hlen++;
	memset(header + n, ' ', hlen - (size_t)n - 1);
	header[hlen - 1] = '\n';

	count = (size_t)shape[0] * (size_t)(ndim == 2 ? shape[1] : 1);
	body = malloc(count * 4 + 1);
	tmp = malloc(strlen(path) + 16);
	if (body == NULL || tmp == NULL) {
		util_error(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	for (i = 0; i < count; i++) {
		uint32_t u;
		memcpy(&u, &data[i], 4);
		body[4 * i] = (unsigned char)u;
		body[4 * i + 1] = (unsigned char)(u >> 8);
		body[4 * i + 2] = (unsigned char)(u >> 16);
		body[4 * i + 3] = (unsigned char)(u >> 24);
	}

	sprintf(tmp, "%s.tmpXXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		util_error(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		goto fail;
	}
	made = 1;
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	f = fdopen(fd, "wb");
	if (f == NULL) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		goto fail;
	}
	if (fwrite(NPY_MAGIC "\x01\x00", 1, 8, f) != 8 ||
	    fputc((int)(hlen & 0xff), f) == EOF ||
	    fputc((int)(hlen >> 8), f) == EOF ||
	    fwrite(header, 1, hlen, f) != hlen ||
	    fwrite(body, 4, count, f) != count || fflush(f) != 0 ||
	    fsync(fileno(f)) != 0) {
		util_error(err, errlen, "%s: write failed: %s", path, strerror(errno));
		fclose(f);
		goto fail;
	}
	if (fclose(f) != 0) {
		util_error(err, errlen, "%s: write failed: %s", path, strerror(errno));
		goto fail;
	}
	if (rename(tmp, path) != 0) {
		util_error(err, errlen, "%s: cannot rename into place: %s", path,
		    strerror(errno));
		goto fail;
	}
	free(tmp);
	free(body);
	return 0;

fail:
	if (made)
		unlink(tmp);
	free(tmp);
	free(body);
	return -1;
}
