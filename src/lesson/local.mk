# src/lesson/local.mk - the lesson language (parser, directives) and its
# runner with its sinks (plain text, slides in a terminal).  The scripts
# themselves, their man page and their tests are in lessons/local.mk.

noinst_LIBRARIES += src/lesson/liblesson.a
src_lesson_liblesson_a_SOURCES = \
	src/lesson/lesson.c src/lesson/lesson.h \
	src/lesson/lesson_parser.c src/lesson/lesson_parser.h \
	src/lesson/lesson_directive.c src/lesson/lesson_directive.h \
	src/lesson/lesson_meta.c src/lesson/lesson_say.c \
	src/lesson/lesson_ask.c src/lesson/lesson_move.c \
	src/lesson/lesson_expect.c src/lesson/lesson_problem.c \
	src/lesson/lesson_gpu.c \
	src/lesson/lesson_show.c src/lesson/lesson_show.h \
	src/lesson/lesson_value.c src/lesson/lesson_value.h \
	src/lesson/lesson_quantity.c src/lesson/lesson_quantity.h \
	src/lesson/lesson_machine.c src/lesson/lesson_machine.h \
	src/lesson/lesson_run.c src/lesson/lesson_run.h \
	src/lesson/lesson_path.c src/lesson/lesson_path.h \
	src/lesson/lesson_view.c src/lesson/lesson_view.h \
	src/lesson/lesson_lint.c src/lesson/lesson_lint.h \
	src/lesson/lesson_check.c src/lesson/lesson_check.h \
	src/lesson/lesson_plain.c src/lesson/lesson_plain.h \
	src/lesson/lesson_notes.c src/lesson/lesson_notes.h \
	src/lesson/lesson_slides.c src/lesson/lesson_slides.h \
	src/lesson/lesson_tty.c src/lesson/lesson_tty.h
src_lesson_liblesson_a_CFLAGS = $(AM_CFLAGS) $(CURSES_CFLAGS)
