#!/bin/bash
# device_check.sh - everything the GPU half promises, in one pass on a GPU
# host, for a rationed machine: build, the test suite with the GPU
# required, the planted-change demonstration, and the torch checks.
# Logs go under $OUT (default ./out), one file a phase, and a summary.
#
#   gpu/bench/device_check.sh [build] [check] [planted] [bwd] [fwd] [bench]
#
# Run from the project's root.  On a host that cannot install packages,
# carry the ncurses and check headers first (.gpu-deps, see README).
set -u
out=${OUT:-./out}
mkdir -p "$out"
phases="${*:-build check planted bwd}"
export PYTHONUNBUFFERED=1
jobs=$(nproc 2>/dev/null || echo 4)

log() { echo "== $* ($(date +%T))" | tee -a "$out/summary.txt"; }

log "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1); commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
[ -f .gpu-deps/device-env.sh ] && . .gpu-deps/device-env.sh
for ph in $phases; do
	case $ph in
	build)
		log "build"
		./bootstrap >"$out/build.log" 2>&1
		log "build rc $? ($(grep -c 'warning:' "$out/build.log") warnings)" ;;
	check)
		log "make check, FLASHSTEP_REQUIRE_GPU=1"
		FLASHSTEP_REQUIRE_GPU=1 timeout ${CHECK_LIMIT:-400} \
		    make -j"$jobs" check >"$out/check.log" 2>&1
		log "check rc $?"
		grep -E '^(PASS|FAIL|SKIP|ERROR|XPASS|# )' "$out/check.log" |
		    tee -a "$out/summary.txt"
		# the logs of what did not pass, and of the GPU tests always
		for t in tests/*.log; do
			case $t in *gpu*|*lesson_course*) ;; *)
				grep -q '^:test-result: PASS' "${t%.log}.trs" 2>/dev/null &&
				    continue ;;
			esac
			{ echo "######## $t"; tail -60 "$t"; } >>"$out/testlogs.txt"
		done ;;
	planted)
		log "planted changes"
		timeout ${PLANTED_LIMIT:-300} tests/gpu_planted.sh \
		    >"$out/planted.log" 2>&1
		log "planted rc $?"
		tail -8 "$out/planted.log" | tee -a "$out/summary.txt" ;;
	bwd)
		log "backward kernel against torch autograd"
		nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 \
		    -fmad=false -shared -Xcompiler -fPIC -I src -I gpu -I . \
		    gpu/teach_bwd.cu -o /tmp/libteachbwd.so \
		    >"$out/bwd.log" 2>&1 &&
		timeout ${BWD_LIMIT:-200} python3 gpu/bench/bwd_vs_torch.py \
		    --lib /tmp/libteachbwd.so >>"$out/bwd.log" 2>&1
		log "bwd rc $?"
		tail -6 "$out/bwd.log" | tee -a "$out/summary.txt" ;;
	bench)
		log "bench --gpu"
		timeout ${BENCH_LIMIT:-200} src/flashstep bench --gpu \
		    ${BENCH_ARGS:-} >"$out/bench.log" 2>&1
		log "bench rc $?"
		tail -30 "$out/bench.log" >>"$out/summary.txt" ;;
	esac
done
log "done"
