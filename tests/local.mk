# tests/local.mk - `make check`: one check suite per module (each a
# program with its own PASS line), and shell tests that drive the binary.

AM_CPPFLAGS += $(CHECK_CFLAGS)
TESTUTIL = tests/check_main.c tests/testutil.c tests/testutil.h
CHECK_LDADD = $(FLASHSTEP_LIBS) $(CHECK_LIBS)

CORE_CHECKS = \
	tests/check_backward \
	tests/check_dropout \
	tests/check_dtype \
	tests/check_fp8 \
	tests/check_npy \
	tests/check_online \
	tests/check_mask \
	tests/check_memory \
	tests/check_options \
	tests/check_outfile \
	tests/check_paged \
	tests/check_problem \
	tests/check_reference \
	tests/check_schedule \
	tests/check_sim \
	tests/check_split \
	tests/check_trace \
	tests/check_timeline \
	tests/check_traffic \
	tests/check_varlen
check_PROGRAMS += $(CORE_CHECKS)
HARDEN_TESTS = tests/outfile.test tests/adversarial.test tests/install.test \
	tests/bootstrap.test
TESTS += $(CORE_CHECKS) tests/cli.test tests/backward.test $(HARDEN_TESTS)
EXTRA_DIST += tests/cli.test tests/backward.test $(HARDEN_TESTS) tests/testlib.sh
# planted.sh (not part of make check) shows the CPU tests failing on a
# planted fault for each claim they guard.
EXTRA_DIST += tests/planted.sh

tests_check_backward_SOURCES = tests/check_backward.c $(TESTUTIL)
tests_check_backward_LDADD = $(CHECK_LDADD)
tests_check_timeline_SOURCES = tests/check_timeline.c $(TESTUTIL)
tests_check_timeline_LDADD = $(CHECK_LDADD)
tests_check_dtype_SOURCES = tests/check_dtype.c $(TESTUTIL)
tests_check_dtype_LDADD = $(CHECK_LDADD)
tests_check_fp8_SOURCES = tests/check_fp8.c $(TESTUTIL)
tests_check_fp8_LDADD = $(CHECK_LDADD)
tests_check_dropout_SOURCES = tests/check_dropout.c $(TESTUTIL)
tests_check_dropout_LDADD = $(CHECK_LDADD)
tests_check_paged_SOURCES = tests/check_paged.c $(TESTUTIL)
tests_check_paged_LDADD = $(CHECK_LDADD)
tests_check_npy_SOURCES = tests/check_npy.c $(TESTUTIL)
tests_check_npy_LDADD = $(CHECK_LDADD)
tests_check_online_SOURCES = tests/check_online.c $(TESTUTIL)
tests_check_online_LDADD = $(CHECK_LDADD)
tests_check_mask_SOURCES = tests/check_mask.c $(TESTUTIL)
tests_check_mask_LDADD = $(CHECK_LDADD)
tests_check_varlen_SOURCES = tests/check_varlen.c $(TESTUTIL)
tests_check_varlen_LDADD = $(CHECK_LDADD)
tests_check_memory_SOURCES = tests/check_memory.c $(TESTUTIL)
tests_check_memory_LDADD = $(CHECK_LDADD)
tests_check_outfile_SOURCES = tests/check_outfile.c $(TESTUTIL)
tests_check_outfile_LDADD = $(CHECK_LDADD)
tests_check_options_SOURCES = tests/check_options.c $(TESTUTIL)
tests_check_options_LDADD = $(CHECK_LDADD)
tests_check_problem_SOURCES = tests/check_problem.c $(TESTUTIL)
tests_check_problem_LDADD = $(CHECK_LDADD)
tests_check_reference_SOURCES = tests/check_reference.c $(TESTUTIL)
tests_check_reference_LDADD = $(CHECK_LDADD)
tests_check_schedule_SOURCES = tests/check_schedule.c $(TESTUTIL)
tests_check_schedule_LDADD = $(CHECK_LDADD)
tests_check_sim_SOURCES = tests/check_sim.c $(TESTUTIL)
tests_check_sim_LDADD = $(CHECK_LDADD)
tests_check_split_SOURCES = tests/check_split.c $(TESTUTIL)
tests_check_split_LDADD = $(CHECK_LDADD)
tests_check_trace_SOURCES = tests/check_trace.c $(TESTUTIL)
tests_check_trace_LDADD = $(CHECK_LDADD)
tests_check_traffic_SOURCES = tests/check_traffic.c $(TESTUTIL)
tests_check_traffic_LDADD = $(CHECK_LDADD)

# The claim ledger (doc/claims.md): every claim of the course has a
# source, and every lesson check, figure and test it cites is there.
TESTS += tests/claims.test
EXTRA_DIST += tests/claims.test

# The wgmma pipeline model and its Chrome trace (tests/planted_pipeline.sh,
# not part of make check, shows these failing on planted faults).
check_PROGRAMS += tests/check_pipeline
TESTS += tests/check_pipeline tests/pipeline.test
EXTRA_DIST += tests/planted_pipeline.sh tests/pipeline.test \
	tests/gpu_record_planted.sh tests/planted_pipeline_warps.sh \
	doc/recordings/README.md doc/recordings/wgmma-d128.json \
	doc/recordings/wgmma-d128-causal.json \
	doc/recordings/wgmma-d128-nopp.json doc/recordings/wgmma-d64.json \
	doc/recordings/fast-d128.json doc/recordings/fast-d64-causal.json
tests_check_pipeline_SOURCES = tests/check_pipeline.c $(TESTUTIL)
tests_check_pipeline_LDADD = $(CHECK_LDADD)
# The mma.sync kernel's recordings: its own rules, its trace, its view.
check_PROGRAMS += tests/check_pipeline_warps
TESTS += tests/check_pipeline_warps
tests_check_pipeline_warps_SOURCES = tests/check_pipeline_warps.c \
	$(TESTUTIL)
tests_check_pipeline_warps_LDADD = $(CHECK_LDADD)

# The roofline (src/model/roofline.c) by hand, and `bench --roofline`
# from the recorded figures (in tests/h200_figures.test).
check_PROGRAMS += tests/check_roofline
TESTS += tests/check_roofline
tests_check_roofline_SOURCES = tests/check_roofline.c $(TESTUTIL)
tests_check_roofline_LDADD = $(CHECK_LDADD)
