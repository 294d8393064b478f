/*
 * npy.h - NumPy .npy files: read float32/float64, write float32.
 *
 * Accepted: format versions 1.0, 2.0 and 3.0; dtype '<f4' or '<f8'
 * (little-endian); C order; 1-D or 2-D with no zero-length axis.
 * Everything else is refused with a message naming the file and the
 * fault.  Values are converted to float32; finiteness is the caller's
 * rule to enforce (a scores file may hold -inf for "masked").
 */
#ifndef FLASHSTEP_NPY_H
#define FLASHSTEP_NPY_H

#include <stddef.h>

struct npy_array {
	int ndim;		/* 1 or 2 */
	long shape[2];		/* shape[1] is 1 for a 1-D array */
	float *data;		/* shape[0] * shape[1] values, row-major */
};

/* Reads path.  Returns 0, or -1 with "path: what is wrong" in err and out
 * left empty (data NULL). */
int npy_read(const char *path, struct npy_array *out, char *err, size_t errlen);

/* Parses an in-memory .npy image; `name` labels messages.  Same contract
 * as npy_read.  Used by npy_read and by the fuzzer. */
int npy_parse(const unsigned char *buf, size_t len, const char *name,
    struct npy_array *out, char *err, size_t errlen);

void npy_free(struct npy_array *a);

/*
 * Writes a float32 array of ndim (1 or 2) axes as a version 1.0 file.  The
 * bytes go to a temporary file in the same directory that is renamed
 * over path only once complete: path is never left half written, and on
 * error nothing is left behind.  Returns 0 or -1 with err set.
 */
int npy_write(const char *path, const float *data, int ndim, const long *shape,
    char *err, size_t errlen);

#endif
