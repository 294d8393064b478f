/*
 * npyout.h - NumPy .npy files written: float32, version 1.0, through the
 * output sets of outfile.h, so a command's files land whole or not at
 * all.  Reading is the model's (model/npy.h): a problem's inputs.
 */
#ifndef FLASHSTEP_NPYOUT_H
#define FLASHSTEP_NPYOUT_H

#include <stddef.h>

struct outfile_set;

/*
 * Writes a float32 array of ndim (1 or 2) axes as a version 1.0 file to
 * output i of a begun set (outfile.h), which the caller commits.
 * Returns 0 or -1 with err set.
 */
int npy_write_to(struct outfile_set *set, int i, const float *data, int ndim,
    const long *shape, char *err, size_t errlen);

/* One file by itself: a set of one, written whole or not at all (see
 * outfile.h for what path may name).  Returns 0 or -1 with err set. */
int npy_write(const char *path, const float *data, int ndim, const long *shape,
    char *err, size_t errlen);

#endif
