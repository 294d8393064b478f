#!/bin/bash
# device_check.sh - everything the GPU half promises, in one pass on a GPU
# host, for a rationed machine: build, the test suite with the GPU
# required, the planted-change demonstration, the torch checks, and the
# figures doc/performance.md waits for.  Logs go under $OUT (default
# ./out), one file a phase, and a summary.
#
#   gpu/bench/device_check.sh [build] [check] [planted] [bwd] [fwd] [bench]
#
#   build    ./bootstrap (the wgmma kernel needs an nvcc that targets sm_90a)
#   check    make check with FLASHSTEP_REQUIRE_GPU=1 (check_gpu_wgmma and
#            check_gpu_bwd among the GPU tests; their logs in testlogs.txt)
#   planted  tests/gpu_planted.sh
#   bwd      the backward kernel against torch autograd (bwd_vs_torch.py)
#   fwd      libfast.so and libwgmma.so, vs_torch.py with the wgmma columns
#   bench    bench --gpu --ladder, then bench --gpu --backward
#
# No arguments: all six.  Run from the project's root.  On a host that
# cannot install packages, carry the ncurses and check headers first
# (.gpu-deps, see README).
set -u
out=${OUT:-./out}
mkdir -p "$out"
phases="${*:-build check planted bwd fwd bench}"
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
	fwd)
		log "fast and wgmma against torch's FA2 and cuDNN"
		F="-O3 -std=c++17 -I gpu -shared -Xcompiler -fPIC"
		nvcc $F -gencode=arch=compute_90,code=sm_90 gpu/fast.cu \
		    -o /tmp/libfast.so >"$out/fwd.log" 2>&1 &&
		nvcc $F -gencode=arch=compute_90a,code=sm_90a gpu/wgmma.cu \
		    -o /tmp/libwgmma.so >>"$out/fwd.log" 2>&1 &&
		timeout ${FWD_LIMIT:-300} python3 gpu/bench/vs_torch.py \
		    --lib /tmp/libfast.so --wgmma-lib /tmp/libwgmma.so \
		    ${FWD_ARGS:-} >>"$out/fwd.log" 2>&1
		log "fwd rc $?"
		tail -40 "$out/fwd.log" >>"$out/summary.txt" ;;
	bench)
		log "bench --gpu --ladder"
		timeout ${LADDER_LIMIT:-120} src/flashstep bench --gpu --ladder \
		    ${LADDER_ARGS:-} >"$out/ladder.log" 2>&1
		log "ladder rc $?"
		tee -a "$out/summary.txt" <"$out/ladder.log"
		log "bench --gpu --backward"
		timeout ${BENCH_LIMIT:-200} src/flashstep bench --gpu --backward \
		    ${BENCH_ARGS:---sizes 1024,4096 --dtypes fp16} \
		    >"$out/bench_bwd.log" 2>&1
		log "bench --backward rc $?"
		tee -a "$out/summary.txt" <"$out/bench_bwd.log" ;;
	esac
done
log "done"
