# gpu/local.mk - the CUDA kernels, or a stub without CUDA.
#
# The C side (the kernel table kernel.c, the front end gpu.c, gpucheck.c)
# builds either way.  With nvcc (configure's HAVE_CUDA) the library adds
# the .cu files, built by the suffix rule below: machine code for sm_90
# (H100, H200) plus PTX for compute_80 that the driver compiles on other
# GPUs.  -fmad=false: no fused multiply-adds in the kernels, so the
# teaching kernel rounds as the simulator does (-ffp-contract=off).  The
# fast kernel (fast.cu) has its own rule and flags: fused multiply-adds
# on (its exponent is one FFMA), as it was measured.  Without nvcc,
# gpu_stub.c stands for device.cu and answers "built without CUDA
# support".  Both sets of sources go into the tarball either way, with
# the fast kernel's standalone driver and torch comparisons
# (gpu/bench/).
# The variants measured against the shipped ones, their notes and the
# raw H200 logs live in dev/ (built by hand), which the tarball leaves
# out.
# The Hopper kernel (wgmma.cu) is machine code for sm_90a alone (wgmma and
# setmaxnreg exist nowhere else, so no PTX fallback), FMAs on as fast.o;
# it is built only when configure found an nvcc that can target sm_90a
# (HAVE_SM90A), and otherwise its entry in kernel.c says so.  The
# decoding kernel (decode.cu) has its own rule too, FMAs on as it was
# measured; its table glue (decoderun.cu) and the teaching kernel's
# split-KV run (teach_split.cu) take the suffix rule.
#
# A new kernel: its .cu file in GPU_KERNELS (and in the dependency line
# below), its entry in kernel.c.

noinst_LIBRARIES += gpu/libfsgpu.a
# The rules C and CUDA share (tile_rule.h includes the other three): a
# kernel that reads one is rebuilt when any changes.
GPU_RULE_HDRS = src/model/tile_rule.h src/model/mask_rule.h \
	src/model/philox.h src/model/fp8_rule.h
GPU_HDRS = gpu/gpu.h gpu/kernel.h gpu/kernels.h gpu/cudacheck.h \
	gpu/timing.h gpu/fast.h gpu/wgmma.h gpu/gpucheck.h gpu/gpucheck_bwd.h \
	gpu/teach_bwd.h gpu/gpucheck_split.h gpu/decode.h gpu/to16.h \
	gpu/tc_args.h gpu/tc_mask.cuh gpu/teach_step.cuh gpu/fast_mma.cuh \
	gpu/fast_bwd.h
GPU_C = gpu/kernel.c gpu/gpu.c gpu/gpubwd.c gpu/gpusplit.c gpu/gpucheck.c \
	gpu/gpucheck_bwd.c gpu/gpucheck_split.c gpu/ladder.c gpu/decode_ranges.c
GPU_KERNELS = gpu/teach.cu gpu/naive.cu gpu/naive_bwd.cu gpu/fast.cu \
	gpu/tcrun.cu gpu/teach_bwd.cu gpu/teach_split.cu gpu/decode.cu gpu/decoderun.cu \
	gpu/fast_bwd.cu
GPU_CU = gpu/device.cu gpu/timing.cu $(GPU_KERNELS)
if HAVE_CUDA
gpu_libfsgpu_a_SOURCES = $(GPU_HDRS) $(GPU_C) $(GPU_CU)
if HAVE_SM90A
gpu_libfsgpu_a_SOURCES += gpu/wgmma.cu
endif
else
gpu_libfsgpu_a_SOURCES = $(GPU_HDRS) $(GPU_C) gpu/gpu_stub.c
endif
EXTRA_DIST += gpu/gpu_stub.c $(GPU_CU) gpu/wgmma.cu gpu/bench/bench.cuh \
	gpu/bench/bench_fast.cu gpu/bench/benchlib.py \
	gpu/bench/vs_torch.py gpu/bench/bwd_vs_torch.py \
	gpu/bench/device_check.sh gpu/bench/bench_wgmma.cu \
	gpu/bench/wgmma_device.sh gpu/bench/masks_vs_torch.py \
	gpu/bench/fp8_vs_torch.py \
	gpu/bench/varlen_vs_torch.py
# The decoding kernel's torch comparison and profiling driver.
EXTRA_DIST += gpu/bench/decode_vs_torch.py gpu/bench/decode_profile.py

# Host code that nvcc compiles is C++ (guarded statics of the kernel
# registration, an exception personality): it needs libstdc++ when gcc
# links.
if HAVE_CUDA
GPU_LIB = gpu/libfsgpu.a -lstdc++
else
GPU_LIB = gpu/libfsgpu.a
endif

SUFFIXES = .cu
GPU_NVCC_ARCH = -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_80,code=compute_80
GPU_NVCCFLAGS = $(GPU_NVCC_ARCH) -O3 -fmad=false -std=c++17 \
	-Xcompiler -Wall,-Wextra -I$(top_builddir) -I$(top_srcdir)/src \
	-I$(top_srcdir)
GPU_FAST_NVCCFLAGS = $(GPU_NVCC_ARCH) -O3 -std=c++17 \
	-Xcompiler -Wall,-Wextra -I$(top_srcdir)/gpu -I$(top_srcdir)/src
AM_V_NVCC = $(am__v_NVCC_@AM_V@)
am__v_NVCC_ = $(am__v_NVCC_@AM_DEFAULT_V@)
am__v_NVCC_0 = @echo "  NVCC    " $@;
am__v_NVCC_1 =
.cu.o:
	$(AM_V_NVCC)$(NVCC) $(GPU_NVCCFLAGS) $(NVCCFLAGS) -c -o $@ $<
gpu/fast.o: gpu/fast.cu gpu/fast.h gpu/fast_mma.cuh gpu/tc_args.h \
	gpu/tc_mask.cuh $(GPU_RULE_HDRS) gpu/$(am__dirstamp)
	$(AM_V_NVCC)$(NVCC) $(GPU_FAST_NVCCFLAGS) $(NVCCFLAGS) -c -o $@ \
	    `test -f gpu/fast.cu || echo '$(srcdir)/'`gpu/fast.cu
# The tensor-core backward (fast_bwd.cu): FMAs on as fast.o (its
# exponents are FFMAs), the project's headers for the table's glue.
gpu/fast_bwd.o: gpu/fast_bwd.cu gpu/fast_bwd.h gpu/fast.h gpu/fast_mma.cuh \
	gpu/tc_args.h gpu/tc_mask.cuh gpu/timing.h gpu/to16.h gpu/kernels.h gpu/gpu.h \
	$(GPU_RULE_HDRS) src/model/backward.h src/model/dtype.h \
	config.h gpu/$(am__dirstamp)
	$(AM_V_NVCC)$(NVCC) $(GPU_FAST_NVCCFLAGS) -I$(top_builddir) \
	    -I$(top_srcdir)/src -I$(top_srcdir) $(NVCCFLAGS) -c -o $@ \
	    `test -f gpu/fast_bwd.cu || echo '$(srcdir)/'`gpu/fast_bwd.cu
GPU_DECODE_NVCCFLAGS = $(GPU_NVCC_ARCH) -O3 -std=c++17 \
	-Xcompiler -Wall,-Wextra -I$(top_srcdir)/src -I$(top_srcdir)/gpu
gpu/decode.o: gpu/decode.cu gpu/decode.h src/model/merge.h \
	gpu/$(am__dirstamp)
	$(AM_V_NVCC)$(NVCC) $(GPU_DECODE_NVCCFLAGS) $(NVCCFLAGS) -c -o $@ \
	    `test -f gpu/decode.cu || echo '$(srcdir)/'`gpu/decode.cu
GPU_WGMMA_NVCCFLAGS = -gencode=arch=compute_90a,code=sm_90a -O3 \
	-std=c++17 -Xcompiler -Wall,-Wextra -I$(top_srcdir)/gpu \
	-I$(top_srcdir)/src
gpu/wgmma.o: gpu/wgmma.cu gpu/wgmma.h gpu/fast.h gpu/cudacheck.h \
	gpu/tc_args.h gpu/tc_mask.cuh $(GPU_RULE_HDRS) gpu/$(am__dirstamp)
	$(AM_V_NVCC)$(NVCC) $(GPU_WGMMA_NVCCFLAGS) $(NVCCFLAGS) -c -o $@ \
	    `test -f gpu/wgmma.cu || echo '$(srcdir)/'`gpu/wgmma.cu

# nvcc tracks no dependencies here: name the headers the .cu files use.
gpu/device.o gpu/timing.o gpu/teach.o gpu/naive.o gpu/naive_bwd.o \
	gpu/tcrun.o gpu/teach_bwd.o gpu/teach_split.o gpu/decoderun.o: $(GPU_HDRS) \
	src/model/online.h src/model/online_rule.h $(GPU_RULE_HDRS) \
	src/model/schedule.h src/model/problem.h src/model/dtype.h src/model/util.h \
	src/model/backward.h src/model/combine.h src/model/merge.h \
	src/model/sim.h src/model/traffic.h config.h

# The GPU tests: the teaching kernel (check_gpu), the tensor-core
# kernels (check_gpu_fast, check_gpu_wgmma: one source, check_gpu_tc.c,
# built for each), the teaching backward (check_gpu_bwd) and its split-KV
# run (check_gpu_split) against the simulator, step by step, the decode
# kernel against the double reference (check_gpu_decode), and the
# commands (gpu.test), fresh recordings of the pipelines checked
# (gpu_pipeline.test).  Where no kernel can run they exit 77 (skip) only when the
# hardware is missing, and fail under FLASHSTEP_REQUIRE_GPU=1 (or
# ./configure --enable-gpu-tests=required, which sets it for make
# check); gpu_require.test shows both with the device hidden.
# gpu_planted.sh (not part of make check) shows check_gpu, check_gpu_split
# and check_gpu_bwd failing on a teaching tile step (teach_step.cuh)
# whose order of operations was changed.
check_PROGRAMS += tests/check_gpu tests/check_gpu_fast \
	tests/check_gpu_wgmma tests/check_gpu_bwd tests/check_gpu_table \
	tests/check_gpu_split tests/check_gpu_decode
TESTS += tests/check_gpu tests/check_gpu_fast tests/check_gpu_wgmma \
	tests/check_gpu_bwd tests/gpu.test tests/gpu_require.test \
	tests/check_gpu_table tests/check_gpu_split tests/check_gpu_decode \
	tests/gpu_pipeline.test
EXTRA_DIST += tests/gpu.test tests/gpu_require.test tests/gpu_planted.sh \
	tests/gpu_pipeline.test
if GPU_TESTS_REQUIRED
AM_TESTS_ENVIRONMENT += FLASHSTEP_REQUIRE_GPU=1; \
	export FLASHSTEP_REQUIRE_GPU;
endif
GPU_PROBE = tests/gpuprobe.c tests/gpuprobe.h
tests_check_gpu_SOURCES = tests/check_gpu.c $(GPU_PROBE) $(TESTUTIL)
tests_check_gpu_LDADD = $(CHECK_LDADD)
tests_check_gpu_fast_SOURCES = tests/check_gpu_tc.c $(GPU_PROBE) \
	$(TESTUTIL)
tests_check_gpu_fast_CPPFLAGS = $(AM_CPPFLAGS) -DCHECK_TC_KERNEL='"fast"'
tests_check_gpu_fast_LDADD = $(CHECK_LDADD)
tests_check_gpu_wgmma_SOURCES = $(tests_check_gpu_fast_SOURCES)
tests_check_gpu_wgmma_CPPFLAGS = $(AM_CPPFLAGS) -DCHECK_TC_KERNEL='"wgmma"'
tests_check_gpu_wgmma_LDADD = $(CHECK_LDADD)
tests_check_gpu_bwd_SOURCES = tests/check_gpu_bwd.c $(GPU_PROBE) $(TESTUTIL)
tests_check_gpu_bwd_LDADD = $(CHECK_LDADD)
tests_check_gpu_split_SOURCES = tests/check_gpu_split.c $(GPU_PROBE) \
	$(TESTUTIL)
tests_check_gpu_split_LDADD = $(CHECK_LDADD)
tests_check_gpu_decode_SOURCES = tests/check_gpu_decode.c $(GPU_PROBE) \
	$(TESTUTIL)
tests_check_gpu_decode_LDADD = $(CHECK_LDADD)
# The tensor-core backward (fast_bwd.cu) against the simulator through
# the table and against a double reference with grouped heads.
check_PROGRAMS += tests/check_gpu_fast_bwd
TESTS += tests/check_gpu_fast_bwd
tests_check_gpu_fast_bwd_SOURCES = tests/check_gpu_fast_bwd.c $(GPU_PROBE) \
	$(TESTUTIL)
tests_check_gpu_fast_bwd_LDADD = $(CHECK_LDADD)
# The kernel table and the rules that need no GPU: runs everywhere.
tests_check_gpu_table_SOURCES = tests/check_gpu_table.c $(TESTUTIL)
tests_check_gpu_table_LDADD = $(CHECK_LDADD)
# The tensor-core kernels' shared argument checks (gpu/tc_args.h): host
# code, runs everywhere.
check_PROGRAMS += tests/check_tc_args
TESTS += tests/check_tc_args
tests_check_tc_args_SOURCES = tests/check_tc_args.c $(TESTUTIL)
tests_check_tc_args_LDADD = $(CHECK_LDADD)

# The wgmma kernel's recording build (wgmma_record.cu: wgmma.cu compiled
# with WGMMA_RECORD, one thread of each role stamping its steps): its own
# object, so the timed kernel (wgmma.o) is never the recording one.
# `flashstep pipeline --record` runs it.
if HAVE_CUDA
if HAVE_SM90A
gpu_libfsgpu_a_SOURCES += gpu/wgmma_record.cu
endif
endif
EXTRA_DIST += gpu/wgmma_record.cu gpu/wgmma_record.h gpu/rec_fill.cuh

# The mma.sync kernel's recording build (fast_record.cu: fast.cu with
# FAST_RECORD, lane 0 of each warp stamping its steps), the same way:
# its own object, fast.o untouched.  It needs no sm_90a.
if HAVE_CUDA
gpu_libfsgpu_a_SOURCES += gpu/fast_record.cu
endif
EXTRA_DIST += gpu/fast_record.cu gpu/fast_record.h
gpu/fast_record.o: gpu/fast_record.cu gpu/fast.cu gpu/fast_record.h \
	gpu/wgmma_record.h gpu/fast.h gpu/fast_mma.cuh gpu/tc_args.h \
	gpu/tc_mask.cuh $(GPU_RULE_HDRS) gpu/rec_fill.cuh \
	src/model/pipeline.h gpu/$(am__dirstamp)
	$(AM_V_NVCC)$(NVCC) $(GPU_FAST_NVCCFLAGS) \
	    $(NVCCFLAGS) -c -o $@ \
	    `test -f gpu/fast_record.cu || echo '$(srcdir)/'`gpu/fast_record.cu
gpu/wgmma_record.o: gpu/wgmma_record.cu gpu/wgmma.cu gpu/wgmma_record.h \
	gpu/wgmma.h gpu/fast.h gpu/cudacheck.h gpu/tc_args.h gpu/rec_fill.cuh \
	gpu/tc_mask.cuh $(GPU_RULE_HDRS) src/model/pipeline.h \
	gpu/$(am__dirstamp)
	$(AM_V_NVCC)$(NVCC) $(GPU_WGMMA_NVCCFLAGS) \
	    $(NVCCFLAGS) -c -o $@ \
	    `test -f gpu/wgmma_record.cu || echo '$(srcdir)/'`gpu/wgmma_record.cu
