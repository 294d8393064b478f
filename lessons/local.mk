# lessons/local.mk - the lesson scripts, their man page and
# their tests.  Lessons install to $(pkgdatadir)/lessons, with the
# figures recorded on the H200 that 08-gpu, 18-kernel-ladder and
# 19-fast-backward show where there is no GPU (h200-figures.txt) and
# those `bench --roofline` shows (h200-roofline.txt); an uninstalled
# build finds them in the source tree (see src/lesson/lesson_path.h).

lessonsdir = $(pkgdatadir)/lessons
dist_lessons_DATA = \
	lessons/01-scalar.lesson \
	lessons/02-rescale.lesson \
	lessons/03-conventions.lesson \
	lessons/04-forward.lesson \
	lessons/05-causal.lesson \
	lessons/06-loop-order.lesson \
	lessons/07-dense.lesson \
	lessons/08-gpu.lesson \
	lessons/09-precision.lesson \
	lessons/10-io.lesson \
	lessons/11-causal-kv.lesson \
	lessons/12-fast-arith.lesson \
	lessons/13-backward.lesson \
	lessons/14-backward-loop.lesson \
	lessons/15-backward-masks.lesson \
	lessons/16-split-merge.lesson \
	lessons/17-decode.lesson \
	lessons/18-kernel-ladder.lesson \
	lessons/19-fast-backward.lesson \
	lessons/20-machine.lesson \
	lessons/21-pipeline.lesson \
	lessons/22-serving-layouts.lesson \
	lessons/23-windows.lesson \
	lessons/24-softcap-alibi.lesson \
	lessons/25-low-precision.lesson \
	lessons/26-dropout.lesson \
	lessons/h200-figures.txt \
	lessons/h200-roofline.txt

# An installed binary finds its lessons from its own place and the way
# from bindir to lessonsdir; only a binary in the build tree looks in
# the source tree (src/lesson/lesson_path.c).
AM_CPPFLAGS += -DLESSONS_DIR='"$(lessonsdir)"' -DFLASHSTEP_BINDIR='"$(bindir)"' \
	-DLESSONS_SRCDIR='"$(abs_top_srcdir)/lessons"' \
	-DFLASHSTEP_BUILDDIR='"$(abs_top_builddir)"'

dist_man_MANS += doc/flashstep-lesson.5

# make check: the parser and runner suite, the course as a whole (every
# lesson in --check, its answers, its handout), the command line, and
# the interactive runner driven in tmux.
check_PROGRAMS += tests/check_lesson tests/check_course
tests_check_lesson_SOURCES = tests/check_lesson.c $(TESTUTIL)
tests_check_lesson_LDADD = $(CHECK_LDADD)
tests_check_course_SOURCES = tests/check_course.c $(TESTUTIL)
tests_check_course_LDADD = $(CHECK_LDADD)
LESSON_TESTS = tests/lesson_course.test tests/lesson_cli.test \
	tests/lesson_tty.test tests/h200_figures.test
TESTS += tests/check_lesson tests/check_course $(LESSON_TESTS)
EXTRA_DIST += $(LESSON_TESTS)
