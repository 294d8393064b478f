# gpu/local.mk - the CUDA kernels, or a stub without CUDA.

noinst_LIBRARIES += gpu/libfsgpu.a
gpu_libfsgpu_a_SOURCES = gpu/gpu.h gpu/gpu_stub.c
GPU_LIB = gpu/libfsgpu.a
