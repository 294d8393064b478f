#!/bin/bash
# device_check.sh - everything the GPU half promises, in one pass on a GPU
# host, for a rationed machine: build, the test suite with the GPU
# required, the planted-change demonstration, the torch checks, and the
# figures doc/performance.md waits for.  Logs go under $OUT (default
# ./out), one file a phase, and a summary.
#
#   gpu/bench/device_check.sh [build] [check] [planted] [bwd] [fwd] [bench]
#       [split]
#
#   build    ./bootstrap (the wgmma kernel needs an nvcc that targets sm_90a)
#   check    make check with FLASHSTEP_REQUIRE_GPU=1 (check_gpu_wgmma,
#            check_gpu_bwd, check_gpu_split and check_gpu_decode among the
#            GPU tests; their logs, and gpu.test's, in testlogs.txt)
#   planted  tests/gpu_planted.sh
#   bwd      the backward kernel against torch autograd (bwd_vs_torch.py)
#   fwd      libfast.so and libwgmma.so, vs_torch.py with the wgmma columns
#   bench    bench --gpu --ladder, then bench --gpu --backward
#   split    compare --splits on three problems (rc 0), bench --gpu
#            --decode (its decode shapes), and the decode kernel against
#            torch's backends
#            (libdecode.so, decode_vs_torch.py)
#
# No arguments: all seven.  Run from the project's root.  On a host that
# cannot install packages, carry the ncurses and check headers first
# (.gpu-deps, see README).  On the H200, build and check took 2.5
# minutes, planted 6, split with its torch run 3: where one command may
# run for 10 minutes at most, give planted a command of its own.
set -u
out=${OUT:-./out}
mkdir -p "$out"
phases="${*:-build check planted bwd fwd bench split}"
export PYTHONUNBUFFERED=1
jobs=$(nproc 2>/dev/null || echo 4)

log() { echo "== $* ($(date +%T))" | tee -a "$out/summary.txt"; }

log "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1); commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
# The headers gpu/carry-deps.sh packed (README), where they were carried
# (or a .gpu-deps/device-env.sh made by hand for the same purpose).
if [ -f .gpu-deps/env.sh ]; then
	. .gpu-deps/env.sh
elif [ -f .gpu-deps/device-env.sh ]; then
	. .gpu-deps/device-env.sh
fi
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
		timeout ${PLANTED_LIMIT:-540} tests/gpu_planted.sh \
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
		F="-O3 -std=c++17 -I src -I gpu -shared -Xcompiler -fPIC"
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
	split)
		log "compare --splits: three problems (its faults: tests/check_gpu_split)"
		{
			for args in \
			    "--splits 4 --tq 300 --tk 517 --d 64 --br 32 --bc 64 --causal --input normal" \
			    "--splits 16 --merge-order tree --partials olse --tq 1 --tk 4096 --d 128 --br 64 --bc 128 --heads 32 --kv-heads 8 --pack-gqa --input normal --dtype fp16" \
			    "--splits 7 --merge-order reverse --convention normalized --tq 20 --tk 9 --d 8 --br 4 --bc 2 --causal --batch 2 --heads 4 --kv-heads 2 --dtype bf16"; do
				echo "### compare $args"
				# shellcheck disable=SC2086
				timeout ${SPLIT_LIMIT:-60} src/flashstep compare $args --worst 2
				echo "rc $?"
			done
		} >"$out/split.log" 2>&1
		grep -E '^(### |rc |result:|device:)' "$out/split.log" |
		    tee -a "$out/summary.txt"
		log "bench --gpu --decode"
		timeout ${DECODE_LIMIT:-240} src/flashstep bench --gpu --decode \
		    >"$out/bench_decode.log" 2>&1
		log "bench --decode rc $?"
		tee -a "$out/summary.txt" <"$out/bench_decode.log"
		log "the decode kernel against torch (decode_vs_torch.py)"
		nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -shared \
		    -Xcompiler -fPIC -I src -I gpu gpu/decode.cu \
		    gpu/decode_ranges.c -o /tmp/libdecode.so \
		    >"$out/decode_torch.log" 2>&1 &&
		timeout ${TORCH_LIMIT:-300} python3 gpu/bench/decode_vs_torch.py \
		    --lib /tmp/libdecode.so >>"$out/decode_torch.log" 2>&1
		log "decode_vs_torch rc $?"
		grep -v -e UserWarning -e scaled_dot_product_attention \
		    "$out/decode_torch.log" | tail -45 >>"$out/summary.txt" ;;
	esac
done
log "done"
