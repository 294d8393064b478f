#!/bin/bash
# probe.sh - one device call's study of the tensor-core backward against
# torch's flash backward: each variant build.sh made, timed beside torch
# in one process each (bwd_vs_torch.py --no-accuracy, fp16, d = 128);
# ncu's full set on one launch of FlashAttention 2's kernel and of ours
# (details and the SASS with its stall samples); then flash-attention's
# accuracy rule on the variants named in ACC.  Each table's rows also
# go to OUTDIR/summary.txt, which is read first when files are few.
#
#   dev/cuda/fastbwd/probe.sh OUTDIR LIBDIR	(from the top of the tree)
#
# The environment: VARIANTS (default: every lib-*.so in LIBDIR), NCU
# (the variant ncu profiles; none: skipped), ACC (variants whose
# accuracy is checked), SIZES (4096 16384).
set -u
out=${1:?usage: probe.sh OUTDIR LIBDIR}
libs=${2:?usage: probe.sh OUTDIR LIBDIR}
mkdir -p "$out"
S=$out/summary.txt
t0=$(date +%s)
ts() { echo "[$(($(date +%s) - t0))s] $*" >>"$S"; }
export PYTHONUNBUFFERED=1
ts "host: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>&1)"
vs=${VARIANTS:-$(cd "$libs" && ls lib-*.so | sed 's/^lib-//; s/\.so$//')}
for v in $vs; do
	timeout 120 python3 gpu/bench/bwd_vs_torch.py --fast "$libs/lib-$v.so" \
	    --no-accuracy --dims 128 --dtypes fp16 --sizes ${SIZES:-4096 16384} \
	    >"$out/speed-$v.txt" 2>&1
	ts "speed $v: exit $?"
	grep '^| [fb]' "$out/speed-$v.txt" >>"$S"
done
if [ -n "${NCU:-}" ]; then
	k='regex:flash_bwd_dq_dk_dv|fast_bwd_kernel_p'
	for w in flash ours; do
		timeout 150 ncu --kernel-name "$k" --launch-skip 1 \
		    --launch-count 1 --set full --import-source yes \
		    -o "$out/ncu-$w" -f python3 dev/cuda/fastbwd/one_bwd.py \
		    --which $w --lib "$libs/lib-$NCU.so" >"$out/ncu-$w.log" 2>&1
		ts "ncu $w: exit $?"
		ncu -i "$out/ncu-$w.ncu-rep" --page details \
		    >"$out/ncu-$w-details.txt" 2>&1
		ncu -i "$out/ncu-$w.ncu-rep" --page source --csv \
		    --print-source sass >"$out/ncu-$w-sass.csv" 2>&1
		ts "ncu $w pages: exit $?"
		# the report itself is large, and a call brings back few files
		rm -f "$out/ncu-$w.ncu-rep"
	done
	cuobjdump -sass "$libs/lib-$NCU.so" >"$out/sass-$NCU.txt" 2>&1
	ts "cuobjdump: exit $?"
fi
for v in ${ACC:-}; do
	timeout 200 python3 gpu/bench/bwd_vs_torch.py --fast "$libs/lib-$v.so" \
	    --no-speed >"$out/acc-$v.txt" 2>&1
	ts "accuracy $v: exit $?; $(tail -1 "$out/acc-$v.txt")"
done
ts done
