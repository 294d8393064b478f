/*
 * util.h - small helpers every layer shares: error messages into a
 * caller's buffer, checked allocation, and a monotonic clock.
 *
 * The model never prints.  A function that can fail takes `char *err,
 * size_t errlen`, writes one line (no newline) saying what is wrong, and
 * returns -1 (or NULL).  The command layer prints that line.
 */
#ifndef FLASHSTEP_UTIL_H
#define FLASHSTEP_UTIL_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define UTIL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define UTIL_PRINTF(a, b)
#endif

/* Formats a one-line message into err (if err is not NULL), control
 * characters shown as '?'; returns -1 so callers can write
 * `return util_error(err, errlen, "...")`. */
int util_error(char *err, size_t errlen, const char *fmt, ...) UTIL_PRINTF(3, 4);
/* Splits a table row "a | b | c |" into at most max trimmed cells, in
 * place (the empty cell after a last '|' is not one); returns how many. */
int util_table_cells(char *line, char **cell, int max);

/* calloc of n * size bytes with the multiplication checked; NULL (and a
 * message naming `what` and the bytes asked for) when it fails. */
void *util_calloc(size_t n, size_t size, const char *what, char *err, size_t errlen);

/* Bytes as "12.5 MiB" into buf; returns buf. */
const char *util_bytes(double bytes, char *buf, size_t len);

/* Seconds from a monotonic clock. */
double util_now(void);

/* Physical memory of this machine in bytes, or 0 when unknown. */
uint64_t util_physical_memory(void);

#endif
