#!/bin/sh
# gpu_record_planted.sh - on an H100 or H200: shows the recording's
# dependency check catching a fault planted in the recording build of
# the wgmma kernel (V's slot released when its P V is issued, not done:
# the producer then refills it under the running wgmma), and one planted
# in the recording build of the mma.sync kernel (the loads of tile j + 1
# issued before the barrier that releases the buffers of tile j - 1:
# a warp refills a stage that the other warps, and itself, have not
# released).  Not part of make check.
#
#   tests/gpu_record_planted.sh [TREE]
#
# TREE (default: this script's) must be built with CUDA and sm_90a.  The
# planted object and program are built under a temporary folder; TREE is
# not changed.  Exits 0 when the unplanted recording keeps the ring's
# rules and the planted one breaks them, 1 otherwise, 2 when it cannot
# start.
here=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-$here}
cd "$tree" || exit 2
[ -f gpu/libfsgpu.a ] && [ -f gpu/wgmma_record.o ] &&
    [ -f gpu/fast_record.o ] || {
	echo "gpu_record_planted.sh: $tree has no recording build" >&2
	exit 2
}
var() {
	printf 'print-%%:\n\t@echo $($*)\n' | make -s -f Makefile -f - "print-$1"
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu_record_planted.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM HUP
nvcc=$(var NVCC)
$nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -Igpu -Isrc -I. \
    -DWGMMA_PLANT_EARLY_RELEASE -c -o "$tmp/wgmma_record.o" \
    gpu/wgmma_record.cu || exit 2
mkdir "$tmp/fast" || exit 2
$nvcc $(var GPU_NVCC_ARCH) -O3 -std=c++17 -Igpu -Isrc -I. \
    -DFAST_PLANT_EARLY_REFILL -c -o "$tmp/fast/fast_record.o" \
    gpu/fast_record.cu || exit 2
# planted: $tmp/flashstep (wgmma's), $tmp/fast/flashstep (fast's)
for at in "$tmp/wgmma_record.o:$tmp" "$tmp/fast/fast_record.o:$tmp/fast"; do
	obj=${at%%:*} dir=${at#*:}
	cp gpu/libfsgpu.a "$dir/libfsgpu.a" && ar r "$dir/libfsgpu.a" \
	    "$obj" || exit 2
	libs=$(var FLASHSTEP_LIBS | sed "s@gpu/libfsgpu.a@$dir/libfsgpu.a@")
	$(var CC) -o "$dir/flashstep" src/cmd/main.o $libs \
	    $(var CURSES_LIBS) $(var CUDA_LIBS) -lm || exit 2
done
status=0
args="pipeline --record --ignore-turns --d 128 --tq 1024 --tk 1024 --ctas 2"
if src/flashstep $args >"$tmp/out" 2>&1; then
	echo "unplanted: the ring's rules hold"
else
	echo "unplanted: FAILED"; cat "$tmp/out"; status=1
fi
timeout 60 "$tmp/flashstep" $args >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'before the GEMM reading it' "$tmp/out"; then
	echo "early release: caught ($(grep dependencies "$tmp/out"))"
else
	echo "early release: NOT CAUGHT (exit $rc)"; cat "$tmp/out"; status=1
fi
args="pipeline --record --kernel fast --d 128 --tq 512 --tk 512 --ctas 2"
if src/flashstep $args >"$tmp/out" 2>&1; then
	echo "fast, unplanted: every rule holds"
else
	echo "fast, unplanted: FAILED"; cat "$tmp/out"; status=1
fi
timeout 60 "$tmp/fast/flashstep" $args >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'before warp [0-9] released it' "$tmp/out"; then
	echo "fast, early refill: caught ($(grep dependencies "$tmp/out"))"
else
	echo "fast, early refill: NOT CAUGHT (exit $rc)"; cat "$tmp/out"
	status=1
fi
exit $status
