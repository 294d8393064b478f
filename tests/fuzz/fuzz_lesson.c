/*
 * fuzz_lesson.c - libFuzzer harness for the lesson parser and runner.
 *
 * Any text must parse into a lesson or give one line "fuzz.lesson:N: ..."
 * (or "fuzz.lesson: ..."); a lesson that parses and asks only for small
 * problems (no number of four digits or more) is also checked to the end
 * as `lesson --check` checks it (its rules, its checks, what each slide
 * shows), with one line for whatever it finds.  No crash, leak or
 * sanitizer report.  Three digits still allow a problem of gigabytes
 * (--heads 999 --tq 999 --d 999), so the product's memory check is
 * lowered well below the fuzzer's RSS limit: such a lesson is refused
 * as a user's would be.
 */
/* fuzz-sources: src/lesson/lesson.c src/lesson/lesson_parser.c src/lesson/lesson_directive.c src/lesson/lesson_meta.c src/lesson/lesson_say.c src/lesson/lesson_ask.c src/lesson/lesson_move.c src/lesson/lesson_expect.c src/lesson/lesson_problem.c src/lesson/lesson_gpu.c src/lesson/lesson_value.c src/lesson/lesson_quantity.c src/lesson/lesson_run.c src/lesson/lesson_path.c src/lesson/lesson_lint.c src/lesson/lesson_check.c src/lesson/lesson_view.c src/lesson/lesson_plain.c src/lesson/lesson_machine.c src/lesson/lesson_show.c src/lesson/lesson_tty.c src/lesson/lesson_notes.c src/lesson/lesson_slides.c src/ui/ui.c src/ui/ui_bench.c src/ui/ui_busy.c src/ui/ui_draw.c src/ui/ui_dropout.c src/ui/ui_form.c src/ui/ui_format.c src/ui/ui_fp8.c src/ui/ui_grid.c src/ui/ui_idle.c src/ui/ui_input.c src/ui/ui_keys.c src/ui/ui_layout.c src/ui/ui_loop.c src/ui/ui_pane_bars.c src/ui/ui_pane_bwd.c src/ui/ui_pane_bwd_eq.c src/ui/ui_pane_count.c src/ui/ui_pane_eq.c src/ui/ui_pane_heat.c src/ui/ui_pane_history.c src/ui/ui_pane_merge_eq.c src/ui/ui_pane_pages.c src/ui/ui_pane_split.c src/ui/ui_pane_state.c src/ui/ui_pane_tile.c src/ui/ui_pipe.c src/ui/ui_pipeline.c src/ui/ui_play.c src/ui/ui_roof.c src/ui/ui_roofline.c src/ui/ui_style.c src/ui/ui_term.c src/ui/ui_varlen.c gpu/kernel.c gpu/gpu.c gpu/gpubwd.c gpu/gpucheck.c gpu/ladder.c gpu/gpu_stub.c */
/* fuzz-libs: ncursesw */
#include "config.h"

#include "lesson/lesson.h"
#include "lesson/lesson_check.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("FLASHSTEP_MEMORY_LIMIT", "268435456", 1);	/* 256 MiB */
	return 0;
}

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
	char *text, err[512], msg[600];

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
		msg[0] = '\0';
		if (small(text) && lesson_check(l, msg, sizeof msg) != 0 &&
		    strchr(msg, '\n') != NULL)
			abort();
		lesson_free(l);
	}
	free(text);
	return 0;
}
