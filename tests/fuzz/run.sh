#!/bin/sh
# tests/fuzz/run.sh SECONDS [NAME...] - build the libFuzzer harnesses with
# clang (-fsanitize=fuzzer,address,undefined) and run each for SECONDS on
# a copy of its committed seed corpus.  Run from the top of a configured
# tree (config.h must exist).  Exits non-zero on any crash, leak or
# sanitizer report; prints the executions each run counted.
set -eu
secs=${1:-30}
shift || true
top=$(pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_OUT:-$top/fuzz-build}
mkdir -p "$out"
[ -f "$top/config.h" ] || { echo "run.sh: no config.h here: run ./configure first" >&2; exit 2; }

# Every harness links the whole model and the application layer over it
# (neither has curses or CUDA).
model=$(cd "$src/src" && ls model/*.c app/*.c | sed 's/\.c$//')
# Harnesses that need more than the model name it in a comment line
# "/* fuzz-sources: src/x.c src/y.c */".

if [ $# -gt 0 ]; then
	names=$*
else
	names=$(cd "$src/tests/fuzz" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
fi
# The harnesses link the GPU half's C side as a build without CUDA does
# (gpu_stub.c, no kernels): their config.h is the tree's without the
# CUDA defines, whatever this machine's nvcc.
mkdir -p "$out/config"
grep -v -E '^#define HAVE_(CUDA|SM90A) ' "$top/config.h" >"$out/config/config.h"

status=0
for name in $names; do
	harness="$src/tests/fuzz/fuzz_$name.c"
	[ -f "$harness" ] || { echo "run.sh: no harness for '$name'" >&2; exit 2; }
	srcs=""
	for m in $model; do srcs="$srcs $src/src/$m.c"; done
	extra=$(sed -n 's|^/\* fuzz-sources: \(.*\) \*/$|\1|p' "$harness")
	for f in $extra; do srcs="$srcs $src/$f"; done
	# "/* fuzz-libs: PKG... */": pkg-config packages it links (the lesson
	# runner draws its figures with the view's code, which needs curses).
	libs=""
	pkgs=$(sed -n 's|^/\* fuzz-libs: \(.*\) \*/$|\1|p' "$harness")
	[ -z "$pkgs" ] || libs=$(pkg-config --libs $pkgs)
	# shellcheck disable=SC2086
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-ffp-contract=off -I"$out/config" -I"$top" -I"$src/src" -I"$src" \
		"$harness" $srcs $libs -lm -o "$out/fuzz_$name"
	rm -rf "$out/corpus_$name"
	mkdir -p "$out/corpus_$name"
	cp "$src/tests/fuzz/corpus/$name"/* "$out/corpus_$name"/
	if "$out/fuzz_$name" -max_total_time="$secs" -max_len=4096 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus_$name" >"$out/fuzz_$name.log" 2>&1; then
		runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/fuzz_$name.log" | grep -o '[0-9]*$')
		echo "fuzz $name: ${secs}s, $runs executions, no crash"
	else
		echo "fuzz $name: FAILED (log: $out/fuzz_$name.log)"
		tail -40 "$out/fuzz_$name.log"
		status=1
	fi
done
exit $status
