#!/bin/sh
# sass.sh - what nvcc made of a kernel file, in a form two builds can be
# diffed by: for each kernel of CUBIN, its registers, stack and shared
# memory (cuobjdump -res-usage), a hash of its SASS with the addresses
# taken out, the same with the registers and constants unnamed too (the
# instruction stream's shape), and its instruction count by opcode.
# Needs no GPU; cuobjdump comes with the CUDA toolkit (or pip's
# nvidia-cuda-cuobjdump).
#
#   nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -I src -I gpu \
#       -cubin -o before.cubin gpu/wgmma.cu
#   dev/cuda/wgmma/sass.sh before.cubin >before.txt	(same for after)
#   diff before.txt after.txt	(no output: the same machine code)
#
# Kernels are named by their mangled names, in sorted order (the glob's),
# so the order nvcc emits them in does not matter.
set -eu
cubin=${1:?usage: sass.sh FILE.cubin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cuobjdump -res-usage "$cubin" >"$tmp/res"
cuobjdump -sass "$cubin" >"$tmp/sass"
# One file per function of the SASS, instructions only, addresses out.
awk -v dir="$tmp" '
/Function : / { name = $3; file = dir "/f_" name; next }
file != "" && /\/\*[0-9a-f]+\*\// {
	line = $0
	sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
	sub(/[ \t]*\/\*[ \t]*0x[0-9a-f]+[ \t]*\*\/[ \t]*$/, "", line)
	print line >> file
}' "$tmp/sass"
for f in "$tmp"/f_*; do
	name=${f#"$tmp"/f_}
	res=$(grep -A1 "Function $name:" "$tmp/res" | tail -1 |
	    sed 's/^[ \t]*//')
	echo "== $name"
	echo "   $res"
	echo "   sass $(md5sum <"$f" | cut -c1-16), $(wc -l <"$f") instructions"
	# the same with registers and constants unnamed: equal when two
	# builds differ only in which registers they picked
	echo "   shape $(sed -E 's/\bU?R[0-9]+\b/R/g; s/\bU?P[0-9]\b/P/g;
	    s/0x[0-9a-f]+/X/g; s/\.reuse//g' "$f" | md5sum | cut -c1-16)"
	# opcode: the first word after an optional predicate, without its
	# modifiers (HMMA.16816.F32 -> HMMA)
	sed -e 's/^@!*U*P[0-9T] *//' -e 's/[ ;].*//' -e 's/\..*//' "$f" |
	    sort | uniq -c | sort -k2 | awk '{ printf "   %s %s\n", $2, $1 }'
done
