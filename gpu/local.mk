# gpu/local.mk - the CUDA kernels, or a stub without CUDA.
#
# With nvcc (configure's HAVE_CUDA) the library holds the C side (gpu.c)
# and the .cu files, built by the suffix rule below: machine code for
# sm_90 (H100, H200) plus PTX for compute_80 that the driver compiles on
# other GPUs.  -fmad=false: no fused multiply-adds in the kernels, so the
# teaching kernel rounds as the simulator does (-ffp-contract=off).  The
# fast kernel (fast.cu) has its own rule and flags: fused multiply-adds
# on (its exponent is one FFMA), as it was measured.
# Without nvcc the stub answers every call "built without CUDA support".
# Both sets of sources go into the tarball either way, with the fast
# kernel's standalone driver and torch comparison (gpu/bench/).

noinst_LIBRARIES += gpu/libfsgpu.a
GPU_HDRS = gpu/gpu.h gpu/kernels.h gpu/cudacheck.h gpu/fast.h
# The simulator against a kernel: host C, built with or without CUDA.
GPU_CHECK = gpu/gpucheck.c gpu/gpucheck.h
if HAVE_CUDA
gpu_libfsgpu_a_SOURCES = $(GPU_HDRS) $(GPU_CHECK) gpu/gpu.c gpu/device.cu \
	gpu/teach.cu gpu/naive.cu gpu/fast.cu gpu/fastrun.cu \
	gpu/teach_bwd.cu gpu/teach_bwd.h
else
gpu_libfsgpu_a_SOURCES = $(GPU_HDRS) $(GPU_CHECK) gpu/gpu_stub.c
endif
EXTRA_DIST += gpu/gpu_stub.c gpu/gpu.c gpu/device.cu gpu/teach.cu \
	gpu/naive.cu gpu/fast.cu gpu/fastrun.cu gpu/bench/bench_fast.cu \
	gpu/bench/vs_torch.py gpu/teach_bwd.cu gpu/teach_bwd.h \
	gpu/bench/bwd_vs_torch.py

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
	-Xcompiler -Wall,-Wextra -I$(top_srcdir)/gpu
AM_V_NVCC = $(am__v_NVCC_@AM_V@)
am__v_NVCC_ = $(am__v_NVCC_@AM_DEFAULT_V@)
am__v_NVCC_0 = @echo "  NVCC    " $@;
am__v_NVCC_1 =
.cu.o:
	$(AM_V_NVCC)$(NVCC) $(GPU_NVCCFLAGS) $(NVCCFLAGS) -c -o $@ $<
gpu/fast.o: gpu/fast.cu gpu/fast.h gpu/$(am__dirstamp)
	$(AM_V_NVCC)$(NVCC) $(GPU_FAST_NVCCFLAGS) $(NVCCFLAGS) -c -o $@ \
	    `test -f gpu/fast.cu || echo '$(srcdir)/'`gpu/fast.cu

# nvcc tracks no dependencies here: name the headers the .cu files use.
gpu/device.o gpu/teach.o gpu/naive.o gpu/fastrun.o: $(GPU_HDRS) \
	src/model/online.h src/model/schedule.h src/model/problem.h \
	src/model/dtype.h src/model/util.h \
	config.h

# The GPU tests: the teaching kernel (check_gpu) and the fast kernel
# (check_gpu_fast) against the simulator, step by step.  They exit 77
# (skip) only when no device can be used, or in a build without CUDA.
check_PROGRAMS += tests/check_gpu tests/check_gpu_fast
TESTS += tests/check_gpu tests/check_gpu_fast tests/gpu.test
EXTRA_DIST += tests/gpu.test
GPU_PROBE = tests/gpuprobe.c tests/gpuprobe.h
tests_check_gpu_SOURCES = tests/check_gpu.c $(GPU_PROBE) $(TESTUTIL)
tests_check_gpu_LDADD = $(CHECK_LDADD)
tests_check_gpu_fast_SOURCES = tests/check_gpu_fast.c $(GPU_PROBE) \
	$(TESTUTIL)
tests_check_gpu_fast_LDADD = $(CHECK_LDADD)
