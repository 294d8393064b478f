# src/local.mk - the model, the commands and the program.

noinst_LIBRARIES += src/libflashstep.a
src_libflashstep_a_SOURCES = \
	src/util.c src/util.h \
	src/dtype.c src/dtype.h \
	src/inputs.c src/inputs.h \
	src/npy.c src/npy.h \
	src/problem.c src/problem.h \
	src/schedule.c src/schedule.h \
	src/online.c src/online.h \
	src/traffic.c src/traffic.h \
	src/sim.c src/sim.h \
	src/reference.c src/reference.h \
	src/compare.c src/compare.h \
	src/trace.c src/trace.h \
	src/options.c src/options.h \
	src/setup.c src/setup.h \
	src/gpucheck.c src/gpucheck.h \
	src/cmd.h \
	src/cmd_run.c \
	src/cmd_trace.c \
	src/cmd_bench.c \
	src/cmd_view.c \
	src/cmd_lesson.c \
	src/cmd_gpu.c
src_libflashstep_a_CFLAGS = $(AM_CFLAGS) $(CURSES_CFLAGS)

bin_PROGRAMS += src/flashstep
src_flashstep_SOURCES = src/main.c
src_flashstep_LDADD = src/libflashstep.a $(GPU_LIB) $(CURSES_LIBS) $(CUDA_LIBS) -lm

# Everything a test program links against.
FLASHSTEP_LIBS = src/libflashstep.a $(GPU_LIB) $(CURSES_LIBS) $(CUDA_LIBS) -lm
