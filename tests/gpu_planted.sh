#!/bin/sh
# gpu_planted.sh - shows that the GPU tests catch a teaching kernel that
# no longer does the simulator's operations in its order, in every
# kernel that shares the changed code, and that tests/check_gpu_decode
# catches a decode kernel whose tensor-core path lost a step of the
# online softmax, or that reads a paged cache or a cache length wrong,
# and tests/check_gpu_wgmma a packed batch (varlen) that reads or stores
# across its sequences.  Not part of make check: it needs a GPU, and builds the
# kernels once per plant.
#
#   tests/gpu_planted.sh [TREE]
#   GPU_PLANTS='REGEX' tests/gpu_planted.sh [TREE]
#
# GPU_PLANTS (an extended regular expression) keeps only the plants whose
# names it matches, for a device call too short for all of them; the
# tree as it is always runs first, in the tests those plants use (all
# seven without GPU_PLANTS).  An interrupted run (INT, TERM: a timeout)
# removes its copies and exits 2.
#
# On the GPU host, from the project's root:
#   . .gpu-deps/env.sh && ./bootstrap && tests/gpu_planted.sh
# (.gpu-deps/env.sh only where gpu/carry-deps.sh's packages were carried.)
#
# TREE (default: the tree this script is in) must be bootstrapped and
# configured in place (./bootstrap, as for make check), with nvcc found.
# The script copies it once (sources and build, not .git or .gpu-deps:
# about 25 MB under TMPDIR, removed at the end), then for each plant
# copies that copy, changes one file with sed, rebuilds the plant's tests
# (only the kernels that include the file and the links are redone) and
# runs each with FLASHSTEP_REQUIRE_GPU=1, so a missing GPU fails rather
# than skips.  The tree as it is must pass every test; every plant must
# fail in every test listed for it (a plant that fails to apply or to
# build counts as not shown).  It prints a verdict table, one row per
# plant and test, and exits 0 when every plant was caught by each.
#
# The teaching kernels share one tile step (gpu/teach_step.cuh: teach.cu
# and teach_split.cu run it, teach_bwd.cu its score), one mask
# (src/model/mask_rule.h) and one rounding (src/model/tile_rule.h, whose
# device branch only the kernels run), so each plant below is made once
# and must be caught by the test
# of every kernel it reaches: check_gpu (the forward), check_gpu_split
# (its split-KV run), check_gpu_bwd (the backward, for the score, the
# mask and the rounding).
#   d-loop reversed  the score sum over x runs from d-1 down to 0
#                    (forward, split: m's bits; backward: the gradients'
#                    bits where every p is 0 or 1)
#   fma in scores    the score sum fused: s = fmaf(q, k, s)
#   __expf           the tile step's expf replaced by the fast
#                    approximation __expf (alpha's units: check_gpu; the
#                    split run's partials carry no alpha and the step is
#                    the same code, and the backward's expf is its own)
#   alpha __expf     only alpha's expf replaced (check_gpu)
#   P V reversed     the sum of P V runs over the keys from the last
#                    (the numerator's bits where every p is 0 or 1:
#                    check_gpu, check_gpu_split)
#   mask off by one  the device's mask hides the last key a query sees
#   fp32 rounded     the device rounds fp32 values to bf16
# and in gpu/decode.cu's tensor-core paths (tests/check_gpu_decode; the
# first and last plants change both the registers' kernel and the ring's):
#   mma no rescale   one of a lane's two rows is not rescaled by alpha
#   mma V pairs      the byte permute pairs the wrong halves of V
#   ring V tiles     two of V's four ldmatrix tiles swapped in P V (the
#                    ring that feeds the tensor cores in long ranges)
#   mma l one lane   l is not summed over the four lanes of a row
# and in gpu/decode.cu's paged cache and cache lengths (tests/check_gpu_decode,
# its paged and varlen tests):
#   paged slot + 1   a key is read from the next slot of its page (the
#                    page's last slot clamped): the bits differ from the
#                    contiguous run's
#   table other entry  batch entry b reads entry b + 1's row of the table
#   varlen diagonal  the causal diagonal at r + Tk - Tq, not r + Tk_b - Tq
# and in gpu/wgmma.cu's packed batch (tests/check_gpu_wgmma, its varlen
# test: needs an sm_90a device):
#   varlen keys unmasked  a sequence's key tiles are masked at the total
#                    Tk, not at its own Tk_b: the next sequence's keys,
#                    which TMA reads into its last tile, are seen
#   varlen store unguarded  O's rows are stored up to the tensor's end,
#                    not the sequence's: a long sequence's last row block
#                    writes its rows past Tq_b over the next (short)
#                    sequence's, after that one's block stored them
# and in gpu/wgmma.cu's FP8 build (tests/check_gpu_wgmma, its fp8 test):
#   fp8 V scale ignored  O is not carried from one V tile's scale to the
#                    next (wgmma_vratio's ratio left at 1)
#   fp8 key order    V^T's keys stored in their own order, not P's
#                    (wgmma_fp8_key_at the identity)
# and in gpu/tcrun.cu (tests/check_gpu_fast):
#   tc bug ignored   the tensor-core kernels' trace build no longer runs
#                    bug no-rescale when the rule asks for it
# and in gpu/fast_bwd.cu (tests/check_gpu_fast_bwd):
#   bwd no D         the tensor-core backward's D pass writes D = 0, so
#                    dS = P o dP
#   bwd dq dropped   the odd key blocks' parts of dQ are never added
#   bwd rows reversed  each key block visits its row blocks from the last:
#                    the same sums in another order, so the final
#                    gradients stay within the bound and only the trace
#                    build's steps (dK, dV after each row block) show it
#   bwd cap factor   the softcap's backward loses its (1 - t^2): dS goes
#                    to dQ and dK as if the cap were not there
# and in gpu/tc_mask.cuh (tests/check_gpu_fast_bwd):
#   bwd window rows  a key block whose first seeing row is past row 0
#                    (causal, or a window's left edge) starts one row
#                    block late: the backward's inverse of the window off
#                    by a block
# in gpu/tc_mask.cuh (tests/check_gpu_fast, its rules test):
#   tc window edge     each row misses the first key it sees (the
#                      window's left edge, or key 0)
#   tc window tiles    each row block starts one key tile late
# and in gpu/naive_bwd.cu (tests/check_gpu_bwd, its naive tests):
#   naive bwd no D     dS = P o dP: softmax's backward without D
#   naive bwd last row dV and dK leave out the last query row
#   naive bwd mask     the causal mask shows each row one key too many
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
trap 'rm -rf "$work"' EXIT
trap 'rm -rf "$work"; exit 2' INT TERM

# A copy that keeps every file's time, so make rebuilds only what a
# plant touches and never reruns autotools.
base="$work/base"
mkdir "$base" && tar -C "$src" --exclude=./.git --exclude=./.gpu-deps -cf - . |
    tar -C "$base" -xf - || exit 2
if ! (cd "$base" && make -j"$jobs" tests/check_gpu tests/check_gpu_split \
    tests/check_gpu_bwd tests/check_gpu_decode tests/check_gpu_fast \
    tests/check_gpu_fast_bwd tests/check_gpu_wgmma) \
    >"$work/base.log" 2>&1; then
	echo "gpu_planted: the tree does not build:" >&2
	tail -20 "$work/base.log" >&2
	exit 2
fi

# plant NAME FILE "TESTS" SED: the copy's FILE changed by SED (which
# must change it; SED "" runs the tree as it is), every test of TESTS
# rebuilt and run.  One row per test: each must fail (pass when SED is "").
plant() {
	name=$1
	file=$2
	tests=$3
	expr=$4
	if [ -n "$expr" ] && [ -n "${GPU_PLANTS:-}" ] &&
	    ! echo "$name" | grep -qE "$GPU_PLANTS"; then
		return 0
	fi
	dir="$work/$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_')"
	cp -a "$base" "$dir"
	applied=yes
	if [ -n "$expr" ]; then
		sed "$expr" "$base/$file" >"$dir/$file"
		cmp -s "$base/$file" "$dir/$file" && applied=no
	fi
	for test in $tests; do
		log="$dir.$(basename "$test").log"
		verdict=
		build=ok
		rc=-
		failed=-
		if [ $applied = no ]; then
			verdict="NOT APPLIED"
			build=-
		elif ! (cd "$dir" && make -j"$jobs" "$test") >"$log" 2>&1; then
			build=FAILED
			verdict="NOT BUILT"
		else
			(cd "$dir" && FLASHSTEP_REQUIRE_GPU=1 "./$test") \
			    >>"$log" 2>&1
			rc=$?
			# check's failure lines: file:line:F:case:test_name:0: message
			failed=$(sed -n \
			    's/^[^:]*:[0-9]*:[FE]:[^:]*:\([a-z_0-9]*\):.*/\1/p' \
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
		printf '%-16s %-22s %-7s %-4s %-11s %s\n' "$name" "${test#tests/}" \
		    "$build" "$rc" "$verdict" "$failed"
		echo "$name|$test|$verdict" >>"$work/verdicts"
		case "$verdict" in
		passes | caught) ;;
		*) [ -f "$log" ] && sed 's/^/    | /' "$log" | tail -15 ;;
		esac
	done
	rm -rf "$dir" "$dir".*.log
}

step=gpu/teach_step.cuh
rule=src/model/tile_rule.h
mrule=src/model/mask_rule.h
fwd="tests/check_gpu tests/check_gpu_split"
all="tests/check_gpu tests/check_gpu_split tests/check_gpu_bwd"
printf '%-16s %-22s %-7s %-4s %-11s %s\n' "plant" "test" "build" "exit" \
    "verdict" "failed tests"
# Every plant, through the function $1 (plant, or selected: the tests
# of the plants GPU_PLANTS keeps).
plants() {
	"$1" "d-loop reversed" "$step" "$all" \
	    's/^\tfor (x = 0; x < d; x++)$/\tfor (x = d - 1; x >= 0; x--)/'
	"$1" "fma in scores" "$step" "$all" \
	    's/s += q\[x\] \* k\[x\];/s = fmaf(q[x], k[x], s);/'
	"$1" "__expf" "$step" tests/check_gpu 's/\([^_a-z]\)expf(/\1__expf(/g'
	"$1" "alpha __expf" "$step" tests/check_gpu \
	    's/expf(T\.m\[r\] - m_new)/__expf(T.m[r] - m_new)/'
	"$1" "P V reversed" "$step" "$fwd" \
	    '/float pv = 0\.0f/,/pv +=/s/for (c = 0; c < cols; c++)/for (c = cols - 1; c >= 0; c--)/'
	"$1" "mask off by one" "$mrule" "$all" \
	    's/^\treturn c >= lo \&\& (m.right < 0 || c <= diag + m.right);$/#ifdef __CUDA_ARCH__\n\treturn c >= lo \&\& (m.right < 0 || c < diag + m.right);\n#else\n&\n#endif/'
	"$1" "fp32 rounded" "$rule" "$all" \
	    '/^#ifdef __CUDA_ARCH__$/,/^#else$/s/^\treturn x;$/\treturn __bfloat162float(__float2bfloat16_rn(x));/'
	"$1" "mma no rescale" gpu/decode.cu tests/check_gpu_decode \
	    's/^\tc\[1\] \*= a1;$/;/'
	"$1" "mma V pairs" gpu/decode.cu tests/check_gpu_decode \
	    's/(i \& 1) ? 0x7632 : 0x5410/(i \& 1) ? 0x5410 : 0x7632/'
	"$1" "ring V tiles" gpu/decode.cu tests/check_gpu_decode \
	    's/acc\[i\], x\[0\], x\[1\], x\[2\], x\[3\]/acc[i], x[0], x[2], x[1], x[3]/'
	"$1" "mma l one lane" gpu/decode.cu tests/check_gpu_decode \
	    's/^\tl += __shfl_xor_sync(0xffffffffu, l, 2);$/;/'
	"$1" "paged slot + 1" gpu/decode.cu tests/check_gpu_decode \
	    's/P\.page_size + key % P\.page_size)/P.page_size + min(key % P.page_size + 1, P.page_size - 1))/'
	"$1" "table other entry" gpu/decode.cu tests/check_gpu_decode \
	    's/B\.table = P\.table + (size_t)B\.b \* P\.max_pages;/B.table = P.table + (size_t)((B.b + 1) % gridDim.z) * P.max_pages;/'
	"$1" "varlen diagonal" gpu/decode.cu tests/check_gpu_decode \
	    's/+ B\.tk - P\.tq/+ P.tk - P.tq/'
	"$1" "varlen keys unmasked" gpu/wgmma.cu tests/check_gpu_wgmma \
	    's/^\t\treturn it\.tk;$/\t\treturn p.tk;/'
	"$1" "varlen store unguarded" gpu/wgmma.cu tests/check_gpu_wgmma \
	    '/another sequence.s, written by another block/,/p\.o + (orow + r)/s/if (it\.row0 + r < wgmma_tq<VARLEN>(p, it))/if (it.row0 + r < p.tq - wgmma_q0<VARLEN>(it))/'
	"$1" "fp8 V scale ignored" gpu/wgmma.cu tests/check_gpu_wgmma \
	    's/const float r = f\.vs \/ vs;/const float r = 1.f;/'
	"$1" "fp8 key order" gpu/wgmma.cu tests/check_gpu_wgmma \
	    's/return (x \& ~31) | 16 \* h | 8 \* b | 2 \* t | (x \& 1);/return x;/'
	"$1" "tc bug ignored" gpu/tcrun.cu tests/check_gpu_fast \
	    's/return job->rule->bug == BUG_NO_RESCALE;/return 0;/'
	"$1" "bwd no D" gpu/fast_bwd.cu tests/check_gpu_fast_bwd \
	    's/p.dsum\[row\] = p.no_d ? 0.f : sum;/p.dsum[row] = 0.f;/'
	"$1" "bwd dq dropped" gpu/fast_bwd.cu tests/check_gpu_fast_bwd \
	    's/if (r >= p.tq)$/if (r >= p.tq || (j \& 1))/
	     s/if (!decltype(whole)::value && r >= p.tq)$/if ((!decltype(whole)::value \&\& r >= p.tq) || (j \& 1))/'
	"$1" "bwd rows reversed" gpu/fast_bwd.cu tests/check_gpu_fast_bwd \
	    's/(i) = ibegin + (it) % ni;/(i) = iend - 1 - (it) % ni;/
	     s/int h = hk \* p.group, i = ibegin;/int h = hk * p.group, i = iend - 1;/
	     s/const int h_next = i + 1 < iend ? h : h + 1;/const int h_next = i > ibegin ? h : h + 1;/
	     s/const int i_next = i + 1 < iend ? i + 1 : ibegin;/const int i_next = i > ibegin ? i - 1 : iend - 1;/'
	"$1" "bwd cap factor" gpu/fast_bwd.cu tests/check_gpu_fast_bwd \
	    's/\*dcap = p\.rule\.cap_in > 0\.f ? 1\.f - u \* u : 1\.f;/*dcap = 1.f;/'
	"$1" "bwd window rows" gpu/tc_mask.cuh tests/check_gpu_fast_bwd \
	    's/\*i0 = (int)(lo \/ br);/*i0 = (int)(lo \/ br) + (lo > 0);/'
	"$1" "tc window edge" gpu/tc_mask.cuh tests/check_gpu_fast \
	    's/^\t\*lo = (int)a;$/\t*lo = (int)a + 1;/'
	"$1" "tc window tiles" gpu/tc_mask.cuh tests/check_gpu_fast \
	    's/\*j0 = (int)(lo \/ bc);/*j0 = (int)(lo \/ bc) + 1;/'
	"$1" "naive bwd no D" gpu/naive_bwd.cu tests/check_gpu_bwd \
	    's/R.G\[e\] = R.P\[e\] \* (R.G\[e\] - R.D\[e \/ R.tk\]);/R.G[e] = R.P[e] * R.G[e];/'
	"$1" "naive bwd last row" gpu/naive_bwd.cu tests/check_gpu_bwd \
	    's/for (r = 0; r < R.tq; r++)/for (r = 0; r < R.tq - 1; r++)/'
	"$1" "naive bwd mask" gpu/naive_bwd.cu tests/check_gpu_bwd \
	    's/(long)c > (long)r + R.tk - R.tq)/(long)c > (long)r + 1 + R.tk - R.tq)/'
}

controls=
selected() {
	if [ -z "${GPU_PLANTS:-}" ] || echo "$1" | grep -qE "$GPU_PLANTS"; then
		for t in $3; do
			case " $controls " in
			*" $t "*) ;;
			*) controls="$controls $t" ;;
			esac
		done
	fi
}
plants selected
ncontrols=$(echo $controls | wc -w)
plant "(none)" "$step" "$controls" ""
plants plant

# The controls must pass; every other row, a plant in one test, be caught.
rows=$(grep -vc '^(none)|' "$work/verdicts")
nplants=$(grep -v '^(none)|' "$work/verdicts" | cut -d'|' -f1 | sort -u | wc -l)
if [ "$(grep -c '^(none)|.*|passes$' "$work/verdicts")" -eq "$ncontrols" ] &&
    [ "$(grep -c '|caught$' "$work/verdicts")" -eq "$rows" ]; then
	echo "gpu_planted: the tree passes its $ncontrols tests and all" \
	    "$nplants plants run are caught in each of their $rows tests"
	exit 0
fi
echo "gpu_planted: NOT SHOWN (see the table)"
exit 1
