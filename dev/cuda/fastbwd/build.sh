#!/bin/sh
# build.sh - the tensor-core backward's lab builds: gpu/fast_bwd.cu as
# libfastbwd.so (for gpu/bench/bwd_vs_torch.py --fast) once per variant
# of its FAST_BWD_* switches (gpu/fast_bwd.cu's opening list), on any
# machine with nvcc (no GPU needed), in parallel.  From anywhere:
#
#   dev/cuda/fastbwd/build.sh [OUTDIR]	(default: dev/cuda/fastbwd/out)
#
# OUTDIR/lib-NAME.so, NAME one of:
#   base     the product's switches (FAST_BWD_SMEM_P=1: FlashAttention
#            2's warp layout, P^T and dS^T through shared memory)
#   perwarp  FAST_BWD_SMEM_P=0: each warp owns 16 keys of every product
#   cpside   perwarp with FAST_BWD_CP_SIDE=1: lse and D by cp.async
#   dqv4     perwarp with FAST_BWD_DQ_V4=1: dQ added four floats at a time
#   pv4      base with FAST_BWD_DQ_V4=1
# and OUTDIR/ptxas-NAME.txt, ptxas's registers and spills for each.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../../..
out=${1:-$here/out}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
# The product's flags (gpu/local.mk's for fast_bwd.cu, less compute_80).
F="-O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -shared -Xcompiler -fPIC"
F="$F -I $root -I $root/src -I $root/gpu -Xptxas -v"
build() {
	$NVCC $F $2 "$root/gpu/fast_bwd.cu" "$root/gpu/timing.cu" \
	    -o "$out/lib-$1.so" >"$out/ptxas-$1.txt" 2>&1
}
build base "" &
build perwarp "-DFAST_BWD_SMEM_P=0" &
build cpside "-DFAST_BWD_SMEM_P=0 -DFAST_BWD_CP_SIDE=1" &
build dqv4 "-DFAST_BWD_SMEM_P=0 -DFAST_BWD_DQ_V4=1" &
build pv4 "-DFAST_BWD_DQ_V4=1" &
wait
for v in base perwarp cpside dqv4 pv4; do ls "$out/lib-$v.so"; done
