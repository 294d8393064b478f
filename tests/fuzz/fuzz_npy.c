/*
 * fuzz_npy.c - libFuzzer harness for the .npy parser.
 *
 * Any byte string must give either an array whose shape matches its data
 * or a one-line error naming the file, never a crash, a leak or a read
 * out of bounds.
 */
#include "config.h"

#include "model/npy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_array a;
	char err[256];
	volatile float sink = 0.0f;
	long i, n;

	if (npy_parse(data, size, "fuzz.npy", &a, err, sizeof err) == 0) {
		if (a.ndim < 1 || a.ndim > 2 || a.shape[0] < 1 || a.shape[1] < 1)
			abort();
		/* Touch every value: the shape must not promise more data
		 * than was allocated. */
		n = a.shape[0] * a.shape[1];
		for (i = 0; i < n; i++)
			sink += a.data[i];
		npy_free(&a);
	} else if (a.data != NULL || strncmp(err, "fuzz.npy: ", 10) != 0 ||
	    strchr(err, '\n') != NULL)
		abort();
	(void)sink;
	return 0;
}
