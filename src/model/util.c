/* util.c - error messages, checked allocation, clock (see util.h). */
#include "config.h"

#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
util_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
		/* Messages quote user input (arguments, file headers); a
		 * control character in it must not break the one line. */
		for (p = err; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
	}
	return -1;
}

void *
util_calloc(size_t n, size_t size, const char *what, char *err, size_t errlen)
{
	void *p;
	char buf[32];

	if (n == 0 || size == 0)
		n = size = 1;
	if (n > SIZE_MAX / size) {
		util_error(err, errlen, "%s: size overflows memory", what);
		return NULL;
	}
	p = calloc(n, size);
	if (p == NULL)
		util_error(err, errlen, "%s: out of memory (asked for %s)", what,
		    util_bytes((double)n * (double)size, buf, sizeof buf));
	return p;
}

const char *
util_bytes(double bytes, char *buf, size_t len)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;

	while (bytes >= 1024.0 && u < 5) {
		bytes /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f B", bytes);
	else
		snprintf(buf, len, "%.1f %s", bytes, units[u]);
	return buf;
}

double
util_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t
util_physical_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long page = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)page;
}

int
util_table_cells(char *line, char **cell, int max)
{
	char *p = line, *bar, *end;
	int n = 0;

	while (n < max) {
		bar = strchr(p, '|');
		if (bar != NULL)
			*bar = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strlen(p);
		while (end > p && strchr(" \t\r\n", end[-1]) != NULL)
			*--end = '\0';
		if (bar == NULL && *p == '\0')
			break;
		cell[n++] = p;
		if (bar == NULL)
			break;
		p = bar + 1;
	}
	return n;
}
