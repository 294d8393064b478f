#!/bin/sh
# build.sh - the Hopper kernel's lab builds, by hand: every variant of
# variants.cu (not only the product's), on any machine with nvcc 12.3 or
# newer (no GPU needed).  From anywhere:
#
#   dev/cuda/wgmma/build.sh [OUTDIR]	(default: dev/cuda/wgmma/out)
#
# OUTDIR/bench_wgmma   gpu/bench/bench_wgmma.cu over all eight variants
# OUTDIR/libwgmma.so   the same for gpu/bench/vs_torch.py --wgmma-lib
# OUTDIR/libfast.so    dev/cuda/fast's variants, for vs_torch.py --lib
# OUTDIR/wgmma.cubin   the product's gpu/wgmma.cu alone, for sass.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../../..
out=${1:-$here/out}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
# The product's flags (gpu/local.mk): sm_90a machine code, FMAs on.
F90A="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I $root/gpu -I $root/src"
F90="-O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -I $root/gpu -I $root/src"
set -x
$NVCC $F90A -Xcompiler -pthread "$here/variants.cu" "$root/gpu/fast.cu" \
    "$root/gpu/bench/bench_wgmma.cu" -o "$out/bench_wgmma"
$NVCC $F90A -shared -Xcompiler -fPIC "$here/variants.cu" \
    -o "$out/libwgmma.so"
$NVCC $F90 -shared -Xcompiler -fPIC "$here/../fast/variants.cu" \
    -o "$out/libfast.so"
$NVCC $F90A -cubin "$root/gpu/wgmma.cu" -o "$out/wgmma.cubin"
