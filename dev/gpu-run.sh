#!/bin/bash
# dev/gpu-run.sh - one call's worth of work on a GPU host, its logs
# written as it goes into one folder (so a call cut off at its limit
# still leaves what it did): bootstrap (once: a tree already built is
# kept), FLASHSTEP_REQUIRE_GPU=1 make -j check, then, where asked, the
# plants of tests/gpu_planted.sh and the torch scripts of gpu/bench.
#
#   dev/gpu-run.sh OUTDIR
#
# From the top of the tree; .gpu-deps/env.sh is sourced where
# gpu/carry-deps.sh made it.  The environment chooses what runs:
#   TESTS=...      make check's TESTS (default: all of them)
#   CHECK_S=N      make check's limit in seconds (330)
#   PLANTS=REGEX   GPU_PLANTS for tests/gpu_planted.sh (none: not run),
#                  run beside the torch scripts; PLANT_S=N its limit (380)
#   TORCH=1        varlen_vs_torch.py and bwd_vs_torch.py, accuracy only
#                  (--no-speed: beside the plants, their times mean
#                  nothing); PY_S=N each one's limit (150)
#   BENCH=1        after all of that, alone on the GPU: the speed tables
#                  of bwd_vs_torch.py --fast and masks_vs_torch.py at
#                  d = 128 (doc/performance.md's shapes); PY_S as above
#   FP8=1          last, alone on the GPU: fp8_vs_torch.py (the FP8
#                  kernel's accuracy, its planted fault, and its speed
#                  beside fp16 and torch); FP8_VARIANTS="-1 1" times
#                  those variants too (speed only, fp8-v1.txt, ...)
# OUTDIR/summary.txt says what ran, when and how it ended; beside it
# build.log, check.log (with each failing test's log appended), libs.log,
# plants.txt, varlen.txt, bwdrules.txt, bench.txt, fp8.txt.
set -u
out=${1:?usage: dev/gpu-run.sh OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
S=$out/summary.txt
t0=$(date +%s)
ts() { echo "[$(($(date +%s) - t0))s] $*" >>"$S"; }
ts "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
[ -f .gpu-deps/env.sh ] && . .gpu-deps/env.sh
export FLASHSTEP_NO_INSTALL=1
if [ ! -x src/flashstep ]; then
	./bootstrap >"$out/build.log" 2>&1
	ts "bootstrap: exit $?"
fi
export FLASHSTEP_REQUIRE_GPU=1
timeout "${CHECK_S:-330}" make -j"$(nproc)" check ${TESTS:+TESTS="$TESTS"} \
    >"$out/check.log" 2>&1
ts "make check: exit $? (124: stopped at its limit)"
grep -E "^(FAIL|ERROR|XPASS)|^# (TOTAL|PASS|FAIL|SKIP|ERROR)" "$out/check.log" >>"$S"
for t in $(sed -n 's/^\(FAIL\|ERROR\): //p' "$out/check.log"); do
	log=${t%.test}.log
	[ -f "$log" ] && { echo "=== $log"; tail -40 "$log"; } >>"$out/check.log"
done
if [ -n "${PLANTS:-}" ]; then
	(GPU_PLANTS=$PLANTS timeout "${PLANT_S:-380}" tests/gpu_planted.sh \
	    >"$out/plants.txt" 2>&1
	 echo "gpu_planted.sh: exit $?" >>"$out/plants.txt") &
fi
export PYTHONUNBUFFERED=1
tmp=$(mktemp -d)
if [ -n "${TORCH:-}${BENCH:-}${FP8:-}" ]; then
	# the shared libraries the torch scripts load, as their headers say
	lib="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC -I . -I src -I gpu"
	nvcc $lib gpu/wgmma.cu -o "$tmp/libwgmma.so" >"$tmp/w.log" 2>&1 &
	w=$!
	nvcc $lib gpu/fast_bwd.cu gpu/timing.cu -o "$tmp/libfastbwd.so" \
	    >"$tmp/b.log" 2>&1 &
	b=$!
	nvcc ${lib/compute_90a,code=sm_90a/compute_90,code=sm_90} gpu/fast.cu \
	    -o "$tmp/libfast.so" >"$tmp/f.log" 2>&1 &
	f=$!
	wait $w $b $f
	cat "$tmp"/*.log >"$out/libs.log"
	ts "libraries: $(ls "$tmp"/*.so 2>/dev/null | wc -l) of 3 built"
fi
if [ -n "${TORCH:-}" ]; then
	timeout "${PY_S:-150}" python3 gpu/bench/varlen_vs_torch.py \
	    --wgmma "$tmp/libwgmma.so" --no-speed >"$out/varlen.txt" 2>&1
	ts "varlen_vs_torch.py: exit $?"
	timeout "${PY_S:-150}" python3 gpu/bench/bwd_vs_torch.py \
	    --fast "$tmp/libfastbwd.so" --no-speed >"$out/bwdrules.txt" 2>&1
	ts "bwd_vs_torch.py: exit $?"
fi
wait
[ -n "${PLANTS:-}" ] && ts "plants: $(tail -2 "$out/plants.txt" | head -1)"
if [ -n "${BENCH:-}" ]; then
	{
		timeout "${PY_S:-150}" python3 gpu/bench/bwd_vs_torch.py \
		    --fast "$tmp/libfastbwd.so" --no-accuracy --dims 128
		echo "bwd_vs_torch.py: exit $?"
		timeout "${PY_S:-150}" python3 gpu/bench/masks_vs_torch.py \
		    --fast "$tmp/libfast.so" --wgmma "$tmp/libwgmma.so" \
		    --no-accuracy --dims 128 --reps 5
		echo "masks_vs_torch.py: exit $?"
	} >"$out/bench.txt" 2>&1
	ts "bench: $(grep "exit" "$out/bench.txt" | tr "\n" " ")"
fi
if [ -n "${FP8:-}" ]; then
	timeout "${PY_S:-150}" python3 gpu/bench/fp8_vs_torch.py \
	    --wgmma "$tmp/libwgmma.so" --fault >"$out/fp8.txt" 2>&1
	ts "fp8_vs_torch.py: exit $?"
	for v in ${FP8_VARIANTS:-}; do
		[ "$v" = -1 ] && continue
		timeout "${PY_S:-150}" python3 gpu/bench/fp8_vs_torch.py \
		    --wgmma "$tmp/libwgmma.so" --no-accuracy --fp8-variant "$v" \
		    >"$out/fp8-v$v.txt" 2>&1
		ts "fp8_vs_torch.py --fp8-variant $v: exit $?"
	done
fi
rm -rf "$tmp"
ts done
