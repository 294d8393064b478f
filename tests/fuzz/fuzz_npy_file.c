/*
 * fuzz_npy_file.c - libFuzzer harness for the .npy reader on files,
 * including what is not a regular file.
 *
 * The first byte picks what the path names: a regular file holding the
 * rest of the input, a FIFO with no writer, a folder, a character device
 * (/dev/zero, /dev/null), a link to one of those, or a regular file that
 * is cut short after its header was read.  The reader must answer each
 * at once: an array whose shape matches its data, or one line naming the
 * path, never a hang (a FIFO), a read without bound (/dev/zero), a crash
 * or a leak.
 */
#include "config.h"

#include "model/npy.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], file[96], fifo[96], folder[96], link_file[96],
    link_fifo[96];

static void
fuzz_cleanup(void)
{
	unlink(link_fifo);
	unlink(link_file);
	unlink(file);
	unlink(fifo);
	rmdir(folder);
	rmdir(dir);
}

static void
fuzz_setup(void)
{
	if (dir[0] != '\0')
		return;
	atexit(fuzz_cleanup);
	strcpy(dir, "/tmp/fuzz_npy_file.XXXXXX");
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(file, sizeof file, "%s/in.npy", dir);
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	snprintf(folder, sizeof folder, "%s/folder", dir);
	snprintf(link_file, sizeof link_file, "%s/link.npy", dir);
	snprintf(link_fifo, sizeof link_fifo, "%s/link-fifo", dir);
	if (mkfifo(fifo, 0600) != 0 || mkdir(folder, 0700) != 0 ||
	    symlink("in.npy", link_file) != 0 || symlink("fifo", link_fifo) != 0)
		abort();
}

static void
put(const uint8_t *data, size_t size)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
}

static void
check(const char *path, int must_fail)
{
	struct npy_array a;
	char err[256];
	volatile float sink = 0.0f;
	long i, n;

	if (npy_read(path, &a, err, sizeof err) == 0) {
		if (must_fail || a.ndim < 1 || a.ndim > 2 || a.shape[0] < 1 ||
		    a.shape[1] < 1)
			abort();
		n = a.shape[0] * a.shape[1];
		for (i = 0; i < n; i++)
			sink += a.data[i];
		npy_free(&a);
	} else if (a.data != NULL || strncmp(err, path, strlen(path)) != 0 ||
	    strchr(err, '\n') != NULL)
		abort();
	(void)sink;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_file f;
	struct npy_array a;
	char err[256];
	int kind;

	fuzz_setup();
	if (size == 0)
		return 0;
	kind = data[0] % 8;
	data++;
	size--;
	put(data, size);
	switch (kind) {
	case 0:
	case 1:
		check(file, 0);
		break;
	case 2:
		check(fifo, 1);
		break;
	case 3:
		check(folder, 1);
		break;
	case 4:
		check(size > 0 && (data[0] & 1) ? "/dev/zero" : "/dev/null", 1);
		break;
	case 5:
		check(link_file, 0);
		check(link_fifo, 1);
		break;
	case 6:
		/* Cut short between the header and the data. */
		if (npy_open(file, &f, err, sizeof err) == 0) {
			if (truncate(file, (off_t)(size / 2)) != 0)
				abort();
			if (npy_load(&f, &a, err, sizeof err) == 0)
				npy_free(&a);
		}
		break;
	case 7:
		/* Opened and closed without reading: no leak. */
		if (npy_open(file, &f, err, sizeof err) == 0)
			npy_close(&f);
		break;
	}
	return 0;
}
