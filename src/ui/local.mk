# src/ui/local.mk - the ncurses step-through view (`flashstep view`).
# Only ui_term.c includes curses; the rest is testable without a terminal.

noinst_LIBRARIES += src/ui/libui.a
src_ui_libui_a_SOURCES = \
	src/ui/ui.h src/ui/ui_int.h src/ui/ui_keys.h src/ui/ui_form.h \
	src/ui/ui.c \
	src/ui/ui_style.c \
	src/ui/ui_format.c \
	src/ui/ui_grid.c \
	src/ui/ui_draw.c \
	src/ui/ui_input.c \
	src/ui/ui_idle.c \
	src/ui/ui_play.c \
	src/ui/ui_layout.c \
	src/ui/ui_keys.c \
	src/ui/ui_form.c \
	src/ui/ui_pane_bars.c \
	src/ui/ui_pane_heat.c \
	src/ui/ui_varlen.c \
	src/ui/ui_pane_tile.c \
	src/ui/ui_dropout.c \
	src/ui/ui_pane_state.c \
	src/ui/ui_pane_eq.c \
	src/ui/ui_pane_count.c \
	src/ui/ui_pane_history.c \
	src/ui/ui_pane_split.c \
	src/ui/ui_pane_merge_eq.c \
	src/ui/ui_pane_bwd.c \
	src/ui/ui_pane_bwd_eq.c \
	src/ui/ui_pane_pages.c \
	src/ui/ui_term.c \
	src/ui/ui_loop.c \
	src/ui/ui_busy.c \
	src/ui/ui_bench.c src/ui/ui_bench.h
src_ui_libui_a_CFLAGS = $(AM_CFLAGS) $(CURSES_CFLAGS)

# Tests: the panes without a terminal, and the real binary in tmux.
check_PROGRAMS += tests/check_ui
tests_check_ui_SOURCES = tests/check_ui.c $(TESTUTIL)
tests_check_ui_LDADD = $(CHECK_LDADD)
TESTS += tests/check_ui
TESTS += tests/view.test
EXTRA_DIST += tests/view.test

# The pipeline viewer (`flashstep pipeline --view`): no curses of its own.
src_ui_libui_a_SOURCES += src/ui/ui_pipeline.c src/ui/ui_pipeline.h
src_ui_libui_a_SOURCES += src/ui/ui_pipe.c src/ui/ui_fp8.c src/ui/ui_fp8.h
# The roofline figure (`bench --roofline` prints it, R shows it).
src_ui_libui_a_SOURCES += src/ui/ui_roofline.c src/ui/ui_roofline.h
src_ui_libui_a_SOURCES += src/ui/ui_roof.c
