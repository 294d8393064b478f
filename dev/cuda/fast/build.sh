#!/bin/sh
# build.sh - the fast kernel's lab builds, by hand: every variant of
# variants.cu (not only the product's), on any machine with nvcc (no GPU
# needed).  From anywhere:
#
#   dev/cuda/fast/build.sh [OUTDIR]	(default: dev/cuda/fast/out)
#
# OUTDIR/bench_fast   gpu/bench/bench_fast.cu over all six variants
# OUTDIR/libfast.so   the same for gpu/bench/vs_torch.py --lib
# OUTDIR/fast.cubin   the product's gpu/fast.cu alone, for
#                     dev/cuda/wgmma/sass.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../../..
out=${1:-$here/out}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
# The product's flags (gpu/local.mk, less the compute_80 PTX): FMAs on.
F="-O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -I $root/gpu"
set -x
$NVCC $F -I "$root/src" "$here/variants.cu" "$root/gpu/timing.cu" \
    "$root/gpu/bench/bench_fast.cu" -o "$out/bench_fast"
$NVCC $F -shared -Xcompiler -fPIC "$here/variants.cu" -o "$out/libfast.so"
$NVCC $F -cubin "$root/gpu/fast.cu" -o "$out/fast.cubin"
