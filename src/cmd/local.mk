# src/cmd/local.mk - the commands (one file each) and the program.

noinst_LIBRARIES += src/cmd/libcmd.a
src_cmd_libcmd_a_SOURCES = \
	src/cmd/cmd.h src/cmd/cmd_parse.c \
	src/cmd/cmd_run.c \
	src/cmd/cmd_run_varlen.c src/cmd/cmd_run_varlen.h \
	src/cmd/cmd_trace.c \
	src/cmd/cmd_bench.c \
	src/cmd/cmd_view.c \
	src/cmd/cmd_lesson.c \
	src/cmd/gpucmd.c src/cmd/gpucmd.h \
	src/cmd/cmd_gpu.c \
	src/cmd/cmd_compare.c \
	src/cmd/cmd_bench_gpu.c \
	src/cmd/cmd_pipeline.c \
	src/cmd/cmd_pipeline_fit.c src/cmd/cmd_pipeline_fit.h \
	src/cmd/cmd_bench_steps.c \
	src/cmd/cmd_bench_fp8.c \
	src/cmd/cmd_roofline.c

bin_PROGRAMS += src/flashstep
src_flashstep_SOURCES = src/cmd/main.c
src_flashstep_LDADD = $(FLASHSTEP_LIBS)
