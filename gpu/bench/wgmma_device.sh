#!/bin/bash
# wgmma_device.sh - one full pass of the Hopper kernel on a GPU host, for
# a rationed machine: use the binaries built beside this script if they
# run there (else build them), then the phases named on the command line,
# each under a time limit, logs under $OUT (or ./out).
#
#   gpu/bench/wgmma_device.sh [check] [trace] [bench] [torch] [torch2] [ncu]
#
# Binaries (built on any machine with nvcc 13, no GPU needed), of the
# product's variants:
#   F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I src -I gpu"
#   nvcc $F -Xcompiler -pthread gpu/wgmma.cu gpu/fast.cu \
#       gpu/bench/bench_wgmma.cu -o bench_wgmma
#   nvcc $F -shared -Xcompiler -fPIC gpu/wgmma.cu -o libwgmma.so
#   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -I src -I gpu \
#       -shared -Xcompiler -fPIC gpu/fast.cu -o libfast.so
# or, with LAB=1, of every variant measured (dev/cuda/wgmma/build.sh,
# from dev/cuda/*/variants.cu).
# check runs each variant in its own process (a hang costs one limit, not
# the call); bench times only the variants whose check passed
# (or BENCH_VARIANTS, a list like 0,2).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=${SRC:-$here/../..}
bin=${BIN:-$here}
out=${OUT:-./out}
mkdir -p "$out"
phases="${*:-check trace bench torch ncu}"
export PYTHONUNBUFFERED=1

log() { echo "== $* ($(date +%T))" | tee -a "$out/summary.txt"; }

log "host: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1)"
log "nvcc: $(nvcc --version 2>&1 | tail -1)"
cd "$bin"
./bench_wgmma >/dev/null 2>&1
if [ $? -ne 2 ] || [ ! -f libwgmma.so ] || [ ! -f libfast.so ]; then
	log "carried binaries do not run here: building"
	if [ "${LAB:-0}" = 1 ]; then
		"$src/dev/cuda/wgmma/build.sh" . || { log "build failed"; exit 1; }
	else
		F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I $src/src -I $src/gpu"
		nvcc $F -Xcompiler -pthread $src/gpu/wgmma.cu $src/gpu/fast.cu \
		    $src/gpu/bench/bench_wgmma.cu -o bench_wgmma &&
		nvcc $F -shared -Xcompiler -fPIC $src/gpu/wgmma.cu -o libwgmma.so &&
		nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 \
		    -I $src/src -I $src/gpu -shared -Xcompiler -fPIC $src/gpu/fast.cu \
		    -o libfast.so || { log "build failed"; exit 1; }
	fi
fi

pass=""
for ph in $phases; do
	case $ph in
	check)
		# simplest schedule first: if it fails too, suspect layouts
		# (the product has variants 0 and 1 at d = 64, 0 at d = 128)
		[ "${LAB:-0}" = 1 ] && all="2 1 0 3" || all="1 0"
		for v in ${CHECK_VARIANTS:-$all}; do
			log "check v$v"
			echo "######## check v$v" >>"$out/check.log"
			timeout ${CHECK_LIMIT:-45} ./bench_wgmma check $v \
			    >"$out/check_v$v.tmp" 2>&1
			rc=$?
			cat "$out/check_v$v.tmp" >>"$out/check.log"
			tail -1 "$out/check_v$v.tmp" | tee -a "$out/summary.txt"
			rm -f "$out/check_v$v.tmp"
			log "check v$v rc $rc"
			[ $rc -eq 0 ] && pass="$pass $v"
		done ;;
	trace)
		log "trace"
		timeout ${TRACE_LIMIT:-60} ./bench_wgmma trace all \
		    >"$out/trace.log" 2>&1
		log "trace rc $? : $(grep -c ' ok (0), vs fast ok' "$out/trace.log") ok lines; $(tail -1 "$out/trace.log")" ;;
	bench)
		vs=${BENCH_VARIANTS:-$(echo $pass | tr ' ' ',')}
		[ -n "$vs" ] || { log "bench: no variant passed"; continue; }
		log "bench variants $vs"
		timeout ${BENCH_LIMIT:-150} ./bench_wgmma bench $vs \
		    >"$out/bench.log" 2>&1
		log "bench rc $?" ;;
	torch)
		log "vs_torch"
		timeout ${TORCH_LIMIT:-200} python3 $src/gpu/bench/vs_torch.py \
		    --lib ./libfast.so --wgmma-lib ./libwgmma.so \
		    ${TORCH_ARGS:-} >"$out/vs_torch.log" 2>&1
		log "vs_torch rc $?" ;;
	torch2)
		# a second pass on the goal's shapes: run-to-run spread
		log "vs_torch (second pass)"
		timeout ${TORCH_LIMIT:-200} python3 $src/gpu/bench/vs_torch.py \
		    --lib ./libfast.so --wgmma-lib ./libwgmma.so \
		    ${TORCH2_ARGS:-} >"$out/vs_torch2.log" 2>&1
		log "vs_torch (second pass) rc $?" ;;
	ncu)
		# NCU_SHAPES: "D T CAUSAL BF16" entries separated by ';'
		IFS=';' read -ra shapes <<<"${NCU_SHAPES:-128 4096 0 0}"
		for sh in "${shapes[@]}"; do
			log "ncu $sh v${NCU_VARIANT:--1}"
			timeout ${NCU_LIMIT:-120} ncu --clock-control none \
			    --section SpeedOfLight --section ComputeWorkloadAnalysis \
			    --section MemoryWorkloadAnalysis --section WarpStateStats \
			    --section LaunchStats --section Occupancy \
			    -k regex:wgmma_fwd --launch-skip 1 --launch-count 1 \
			    ./bench_wgmma one $sh ${NCU_VARIANT:--1} \
			    >>"$out/ncu.log" 2>&1
			log "ncu rc $?"
		done ;;
	esac
done
log "done"
