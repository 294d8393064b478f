/* npyout.c - .npy writing through outfile (npyout.h). */
#include "config.h"

#include "npyout.h"
#include "outfile.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
/* Data are written through a buffer of this many bytes. */
#define NPY_CHUNK ((size_t)1 << 16)

int
npy_write_to(struct outfile_set *set, int i, const float *data, int ndim,
    const long *shape, char *err, size_t errlen)
{
	char header[128];
	unsigned char pre[10], chunk[NPY_CHUNK];
	size_t hlen, count, done, n, k;
	int len;

	if (ndim == 1)
		len = snprintf(header, sizeof header,
		    "{'descr': '<f4', 'fortran_order': False, 'shape': (%ld,), }",
		    shape[0]);
	else
		len = snprintf(header, sizeof header,
		    "{'descr': '<f4', 'fortran_order': False, 'shape': (%ld, %ld), }",
		    shape[0], shape[1]);
	/* Pad with spaces and a newline so magic + length + header is a
	 * multiple of 64, as the format asks. */
	hlen = (size_t)len + 1;
	while ((10 + hlen) % 64 != 0)
		hlen++;
	memset(header + len, ' ', hlen - (size_t)len - 1);
	header[hlen - 1] = '\n';
	memcpy(pre, NPY_MAGIC "\x01\x00", 8);
	pre[8] = (unsigned char)(hlen & 0xff);
	pre[9] = (unsigned char)(hlen >> 8);
	if (outfile_write(set, i, pre, sizeof pre, err, errlen) != 0 ||
	    outfile_write(set, i, header, hlen, err, errlen) != 0)
		return -1;

	count = (size_t)shape[0] * (size_t)(ndim == 2 ? shape[1] : 1);
	for (done = 0; done < count; done += n) {
		n = count - done < NPY_CHUNK / 4 ? count - done : NPY_CHUNK / 4;
		for (k = 0; k < n; k++) {
			uint32_t u;
			memcpy(&u, &data[done + k], 4);
			chunk[4 * k] = (unsigned char)u;
			chunk[4 * k + 1] = (unsigned char)(u >> 8);
			chunk[4 * k + 2] = (unsigned char)(u >> 16);
			chunk[4 * k + 3] = (unsigned char)(u >> 24);
		}
		if (outfile_write(set, i, chunk, 4 * n, err, errlen) != 0)
			return -1;
	}
	return 0;
}

int
npy_write(const char *path, const float *data, int ndim, const long *shape,
    char *err, size_t errlen)
{
	struct outfile_set set;
	int i;

	outfile_init(&set);
	if ((i = outfile_add(&set, path, err, errlen)) < 0)
		return -1;
	if (outfile_begin(&set, err, errlen) != 0)
		return -1;
	if (npy_write_to(&set, i, data, ndim, shape, err, errlen) != 0) {
		outfile_abort(&set);
		return -1;
	}
	return outfile_commit(&set, err, errlen);
}
