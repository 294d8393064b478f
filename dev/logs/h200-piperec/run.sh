#!/bin/sh
# run.sh - the one device call behind this folder's logs (README.txt):
# recordings of the mma.sync kernel to ship, the cost of recording, the
# GPU tests of the recordings, the planted faults, then make check.
# Run from the tree's root on the H200 with OUT set and LABEL the commit.
set -u
t0=$(date +%s)
s() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$OUT/summary.txt"; }
s "host $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $LABEL"
fs=src/flashstep
{
for a in "d128 --d 128 --tq 256 --tk 256 --ctas 2" \
    "d64-causal --d 64 --tq 384 --tk 384 --causal --ctas 3"; do
	set -- $a
	n=$1; shift
	echo "\$ flashstep pipeline --record --kernel fast $* --label \"$LABEL\""
	$fs pipeline --record --kernel fast "$@" --label "$LABEL" \
	    --output "$OUT/fast-$n.json"
	echo "rc $?"
done
for d in 128 64; do
	for k in 1 2 3; do
		echo "\$ flashstep pipeline --record --kernel fast --d $d --tq 4096 --tk 4096 --cost (run $k)"
		$fs pipeline --record --kernel fast --d $d --tq 4096 --tk 4096 \
		    --cost | grep -E "cost|dependencies"
	done
done
} >"$OUT/pipeline.txt" 2>&1
s "recordings: $(grep -c '^rc 0' "$OUT/pipeline.txt") of 2 rc 0"
FLASHSTEP_REQUIRE_GPU=1 timeout 100 make -s -j16 check TESTS='tests/gpu_pipeline.test tests/check_gpu_fast tests/check_pipeline_warps tests/pipeline.test' >"$OUT/tests.txt" 2>&1
s "gpu tests rc $?: $(grep -E '^(PASS|FAIL|SKIP|ERROR):' "$OUT/tests.txt" | tr '\n' ' ')"
cat tests/gpu_pipeline.log >>"$OUT/tests.txt" 2>/dev/null
timeout 150 sh tests/gpu_record_planted.sh >"$OUT/planted.txt" 2>&1
s "planted rc $?: $(tr '\n' ';' <"$OUT/planted.txt" | cut -c1-400)"
left=$(( 285 - ($(date +%s) - t0) ))
if [ $left -gt 40 ]; then
	FLASHSTEP_REQUIRE_GPU=1 timeout $left make -s -j16 check >"$OUT/check.txt" 2>&1
	s "make -j16 check rc $? (timeout $left s; 124: cut short): $(grep -E '^# (TOTAL|PASS|FAIL|SKIP|ERROR)' "$OUT/check.txt" | tr '\n' ' ')"
	s "of it: $(grep -c '^PASS:' "$OUT/check.txt") PASS, $(grep -c '^SKIP:' "$OUT/check.txt") SKIP, $(grep -c -E '^(FAIL|ERROR):' "$OUT/check.txt") FAIL or ERROR"
	grep -E '^(FAIL|ERROR|SKIP):' "$OUT/check.txt" >>"$OUT/summary.txt"
fi
s done
