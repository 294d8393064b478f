#!/bin/sh
# gpu_planted.sh - shows that tests/check_gpu catches a teaching kernel
# that no longer does the simulator's operations in its order, and that
# tests/check_gpu_decode catches a decode kernel whose tensor-core path
# lost a step of the online softmax.  Not part of make check: it needs a
# GPU, and builds the kernel once per plant.
#
#   tests/gpu_planted.sh [TREE]
#
# On the GPU host, from the project's root:
#   . .gpu-deps/env.sh && ./bootstrap && tests/gpu_planted.sh
# (.gpu-deps/env.sh only where gpu/carry-deps.sh's packages were carried.)
#
# TREE (default: the tree this script is in) must be bootstrapped and
# configured in place (./bootstrap, as for make check), with nvcc found.
# The script copies it once (sources and build, not .git or .gpu-deps:
# about 25 MB under TMPDIR, removed at the end), then for each plant
# copies that copy, changes one kernel with sed, rebuilds its test
# (only that kernel and the links are redone: 10 to 40 s for teach.cu,
# a minute or more for decode.cu, whose test runs long shapes)
# and runs it with FLASHSTEP_REQUIRE_GPU=1, so a missing GPU fails
# rather than skips.  The tree as it is must pass; every plant must fail in its
# tests (a plant that fails to apply or to build counts as not shown).
# It prints a verdict table and exits 0 when every plant was caught.
#
# Plants in gpu/teach.cu (tests/check_gpu):
#   d-loop reversed  the score sum over x runs from d-1 down to 0
#   fma in scores    the score sum fused: s = fmaf(q, k, s)
#   __expf           expf replaced by the fast approximation __expf
#   alpha __expf     only alpha's expf replaced
# and in gpu/decode.cu's tensor-core paths (tests/check_gpu_decode; the
# first and last plants change both the registers' kernel and the ring's):
#   mma no rescale   one of a lane's two rows is not rescaled by alpha
#   mma V pairs      the byte permute pairs the wrong halves of V
#   ring V tiles     two of V's four ldmatrix tiles swapped in P V (the
#                    ring that feeds the tensor cores in long ranges)
#   mma l one lane   l is not summed over the four lanes of a row
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
src=$(cd "${1:-$here}" && pwd) || exit 2
jobs=$(nproc 2>/dev/null || echo 4)
if [ ! -f "$src/config.status" ] || [ ! -f "$src/gpu/teach.cu" ]; then
	echo "gpu_planted: $src is not a configured flashstep tree" \
	    "(run ./bootstrap there first)" >&2
	exit 2
fi
if ! grep -q '^#define HAVE_CUDA 1' "$src/config.h"; then
	echo "gpu_planted: $src was configured without CUDA (no nvcc)" >&2
	exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu_planted.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM

# A copy that keeps every file's time, so make rebuilds only what a
# plant touches and never reruns autotools.
base="$work/base"
mkdir "$base" && tar -C "$src" --exclude=./.git --exclude=./.gpu-deps -cf - . |
    tar -C "$base" -xf - || exit 2
if ! (cd "$base" && make -j"$jobs" tests/check_gpu tests/check_gpu_decode) \
    >"$work/base.log" 2>&1; then
	echo "gpu_planted: the tree does not build:" >&2
	tail -20 "$work/base.log" >&2
	exit 2
fi

# plant NAME SED [FILE TEST]: the copy's FILE (gpu/teach.cu) changed by
# SED (must change it), TEST (tests/check_gpu) rebuilt and run.
plant() {
	name=$1
	expr=$2
	file=${3:-gpu/teach.cu}
	test=${4:-tests/check_gpu}
	dir="$work/$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_')"
	log="$dir.log"
	cp -a "$base" "$dir"
	verdict=
	if [ -n "$expr" ]; then
		sed "$expr" "$base/$file" >"$dir/$file"
		if cmp -s "$base/$file" "$dir/$file"; then
			verdict="NOT APPLIED"
		fi
	fi
	build=ok
	if [ -z "$verdict" ] &&
	    ! (cd "$dir" && make -j"$jobs" "$test") >"$log" 2>&1; then
		build=FAILED
		verdict="NOT BUILT"
	fi
	rc=-
	failed=-
	if [ -z "$verdict" ]; then
		(cd "$dir" && FLASHSTEP_REQUIRE_GPU=1 "./$test") \
		    >>"$log" 2>&1
		rc=$?
		# check's failure lines: file:line:F:case:test_name:0: message
		failed=$(sed -n 's/^[^:]*:[0-9]*:[FE]:[^:]*:\([a-z_0-9]*\):.*/\1/p' \
		    "$log" | sort -u | tr '\n' ' ')
		[ -n "$failed" ] || failed=-
		if grep -q "no kernel can run" "$log"; then
			verdict="NO GPU"
		elif [ -z "$expr" ]; then
			[ $rc -eq 0 ] && verdict=passes || verdict="FAILS"
		elif [ $rc -ne 0 ] && [ "$failed" != - ]; then
			verdict=caught
		else
			verdict=MISSED
		fi
	fi
	printf '%-18s %-7s %-4s %-9s %s\n' "$name" "$build" "$rc" "$verdict" \
	    "$failed"
	echo "$name|$verdict" >>"$work/verdicts"
	case "$verdict" in
	passes | caught) ;;
	*) sed 's/^/    | /' "$log" | tail -15 ;;
	esac
	rm -rf "$dir"
}

printf '%-18s %-7s %-4s %-9s %s\n' "plant" "build" "exit" "verdict" \
    "failed tests"
plant "(none)" ""
plant "d-loop reversed" \
    's/for (x = 0; x < P\.d; x++)$/for (x = P.d - 1; x >= 0; x--)/'
plant "fma in scores" \
    's/s += T\.q\[r \* P\.d + x\] \* T\.k\[c \* dk + x\];/s = fmaf(T.q[r * P.d + x], T.k[c * dk + x], s);/'
plant "__expf" 's/\([^_a-z]\)expf(/\1__expf(/g'
plant "alpha __expf" 's/expf(T\.m\[r\] - m_new)/__expf(T.m[r] - m_new)/'
plant "(none)" "" gpu/decode.cu tests/check_gpu_decode
plant "mma no rescale" 's/acc\[i\]\[1\] \*= a1;/;/' gpu/decode.cu \
    tests/check_gpu_decode
plant "mma V pairs" 's/(i \& 1) ? 0x7632 : 0x5410/(i \& 1) ? 0x5410 : 0x7632/' \
    gpu/decode.cu tests/check_gpu_decode
plant "ring V tiles" \
    's/acc\[i\], x\[0\], x\[1\], x\[2\], x\[3\]/acc[i], x[0], x[2], x[1], x[3]/' \
    gpu/decode.cu tests/check_gpu_decode
plant "mma l one lane" 's/^\tl += __shfl_xor_sync(0xffffffffu, l, 2);$/;/' \
    gpu/decode.cu tests/check_gpu_decode

if [ "$(grep -c '|passes$' "$work/verdicts")" -eq 2 ] &&
    [ "$(grep -c '|caught$' "$work/verdicts")" -eq 8 ]; then
	echo "gpu_planted: the tree passes both tests and all 8 plants are caught"
	exit 0
fi
echo "gpu_planted: NOT SHOWN (see the table)"
exit 1
