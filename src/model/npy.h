/*
 * npy.h - NumPy .npy files: read float32/float64 (app/npyout.h writes
 * float32).
 *
 * Accepted: format versions 1.0, 2.0 and 3.0; dtype '<f4' or '<f8'
 * (little-endian); C order; 1-D or 2-D with no zero-length axis.
 * Everything else is refused with a message naming the file and the
 * fault.  Values are converted to float32 (a float64 entry beyond
 * float32's range is refused, naming it); finiteness is the caller's rule
 * to enforce (a scores file may hold -inf for "masked").
 *
 * Reading never trusts the file for how much to read: only a regular
 * file is opened for it (a FIFO, a device or a folder is refused before
 * a byte is read), its header is read first and bounded, and the size it
 * declares must be the file's size; then exactly that much is read.
 */
#ifndef FLASHSTEP_NPY_H
#define FLASHSTEP_NPY_H

#include <stddef.h>

struct npy_array {
	int ndim;		/* 1 or 2 */
	long shape[2];		/* shape[1] is 1 for a 1-D array */
	float *data;		/* shape[0] * shape[1] values, row-major */
};

/* An opened file whose header is read: its shape is known, no data is
 * read yet (so a caller can check sizes and memory first). */
struct npy_file {
	int fd;
	const char *name;	/* the path, for messages (borrowed) */
	int ndim;
	long shape[2];
	int f8;			/* float64 entries */
};

/* Opens path and reads its header.  Returns 0, or -1 with "path: what is
 * wrong" in err (nothing left open). */
int npy_open(const char *path, struct npy_file *f, char *err, size_t errlen);

/* Reads f's data into out and closes f.  Returns 0, or -1 with err set
 * and out empty (f closed either way). */
int npy_load(struct npy_file *f, struct npy_array *out, char *err,
    size_t errlen);

/* Closes an opened file without reading it. */
void npy_close(struct npy_file *f);

/* npy_open and npy_load: same contract as npy_open. */
int npy_read(const char *path, struct npy_array *out, char *err, size_t errlen);

/* Parses an in-memory .npy image; `name` labels messages.  Same contract
 * as npy_read.  The fuzzer's door to the same header and data rules. */
int npy_parse(const unsigned char *buf, size_t len, const char *name,
    struct npy_array *out, char *err, size_t errlen);

void npy_free(struct npy_array *a);

/*
 * Reads a 1-D array of integers, dtype '<i4' or '<i8' (an index file: a
 * page table), under the same header and size rules.  *out gets *n
 * entries, malloc'd.  Returns 0, or -1 with "path: what is wrong" in err
 * (*out is then NULL).
 */
int npy_read_index(const char *path, long **out, long *n, char *err,
    size_t errlen);

#endif
