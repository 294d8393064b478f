/*
 * fuzz_lesson.c - libFuzzer harness for the lesson parser and runner.
 *
 * Any text must parse into a lesson or give one line "fuzz.lesson:N: ..."
 * (or "fuzz.lesson: ..."); a lesson that parses and asks only for small
 * problems (no number of four digits or more) is also run to the end as
 * `lesson --check` runs it.  No crash, leak or sanitizer report.
 */
/* fuzz-sources: src/lesson/lesson.c src/lesson/lesson_directive.c src/lesson/lesson_run.c src/lesson/lesson_path.c gpu/gpucheck.c gpu/gpu_stub.c */
#include "config.h"

#include "lesson/lesson.h"
#include "lesson/lesson_run.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A problem small enough to run many times a second. */
static int
small(const char *text)
{
	int digits = 0;

	for (; *text != '\0'; text++) {
		digits = isdigit((unsigned char)*text) ? digits + 1 : 0;
		if (digits > 3)
			return 0;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lesson *l;
	struct lesson_run *run;
	char *text, err[512];

	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	l = lesson_parse_string("/nonexistent/fuzz.lesson", text, err, sizeof err);
	if (l == NULL) {
		if (strncmp(err, "/nonexistent/fuzz.lesson:", 25) != 0 ||
		    strchr(err, '\n') != NULL)
			abort();
	} else {
		if (small(text)) {
			run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
			if (run != NULL) {
				lesson_run_all(run);
				lesson_run_free(run);
			}
		}
		lesson_free(l);
	}
	free(text);
	return 0;
}
