#!/bin/sh
# planted_pipeline_warps.sh - shows that tests/check_pipeline_warps
# catches each fault it exists to catch: for every claim below, one sed
# on one source file, the suite rebuilt against it, and the test case
# that must then fail.  Not part of make check.
#
#   tests/planted_pipeline_warps.sh [TREE]
#
# TREE (default: the tree this script is in) must be built.  Nothing in
# TREE changes: the planted file and the test program are built under a
# temporary folder.  Exits 0 only when the unplanted suite passes and
# every plant is caught (1 otherwise, 2 when it cannot start).
#
# Plants (claim; file; the sed; the test that must fail):
#   landing rule off   pipeline_warps.c: a read before another warp's
#                      share landed passes
#       s/else if (e->begin < o->land)/else if (0)/  -> test_check_catches
#   release rule off   pipeline_warps.c: a release before the warp's own
#                      read ended passes
#       s/else if (e->end < own->read_end)/else if (0)/ -> test_check_catches
#   refill rule off    pipeline_warps.c: a refill before the releases
#                      passes, the recording build's planted fault too
#       s/else if (e->begin < o->release)/else if (0)/
#       -> test_rules_hold test_check_catches
#   warps unnamed      pipeline_json.c: a warp trace's threads get the
#                      wgmma kernel's role names
#       s/if (pipeline_json_warps(m)) {/if (0) {/  -> test_json_round_trip
#   kernel forgotten   pipeline_json.c: the trace does not say its kernel
#       s/json_kernel_key(&b, m);//  -> test_json_round_trip
#   viewer: roles      ui_pipeline.c: the rows named as wgmma's roles
#       s/pipeline_json_role_name(v->meta, r, role/pipeline_role_name(r, role/
#       -> test_viewer
#   viewer: landing    ui_pipeline.c: a buffer full once its copies were
#                      issued, before the warps' shares landed
#       s/pipeline_json_warps(v->meta) ? landed < consumers : //
#       -> test_viewer
#   no time order      pipeline_warps.c: the events left warp by warp
#       s/qsort(ev, nev, sizeof \*ev, warps_time_cmp);//  -> test_viewer

here=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-$here}
cd "$tree" || exit 2
[ -f Makefile ] && [ -f src/model/libmodel.a ] || {
	echo "planted_pipeline_warps.sh: $tree is not built (run make first)" >&2
	exit 2
}
var() {
	printf 'print-%%:\n\t@echo $($*)\n' | make -s -f Makefile -f - "print-$1"
}
CC=$(var CC)
CFLAGS="$(var DEFS) -I. -Isrc -Itests $(var CHECK_CFLAGS) $(var CFLAGS)"
LIBS="$(var FLASHSTEP_LIBS) $(var CHECK_LIBS) $(var LIBS) $(var CURSES_LIBS)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/planted_pipeline_warps.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM HUP

# build SRC: the suite linked against SRC compiled (its object comes
# before the libraries, so it replaces the library's own)
build() {
	$CC $CFLAGS -c "$1" -o "$tmp/planted.o" &&
	$CC $CFLAGS -o "$tmp/check" tests/check_pipeline_warps.c \
	    tests/check_main.c tests/testutil.c "$tmp/planted.o" $LIBS
}

status=0
if ! build src/model/pipeline_warps.c >"$tmp/log" 2>&1 ||
    ! CK_FORK=yes "$tmp/check" >"$tmp/out" 2>&1; then
	echo "the unplanted suite does not pass here:"
	cat "$tmp/log" "$tmp/out"
	exit 1
fi
echo "unplanted: pass"

plant() {
	file=$1 name=$2 sed=$3
	shift 3
	sed "$sed" "$file" >"$tmp/planted.c"
	if cmp -s "$file" "$tmp/planted.c"; then
		printf '%-20s NOT SHOWN: the sed changed nothing\n' "$name"
		status=1
		return
	fi
	if ! build "$tmp/planted.c" >"$tmp/log" 2>&1; then
		printf '%-20s NOT SHOWN: the build failed\n' "$name"
		cat "$tmp/log"
		status=1
		return
	fi
	CK_FORK=yes "$tmp/check" >"$tmp/out" 2>&1
	for t in "$@"; do
		if grep -q ":$t:" "$tmp/out"; then
			printf '%-20s caught by %s\n' "$name" "$t"
		else
			printf '%-20s NOT CAUGHT by %s\n' "$name" "$t"
			status=1
		fi
	done
}

m=src/model/pipeline_warps.c
plant $m "landing rule off" 's/else if (e->begin < o->land)/else if (0)/' \
    test_check_catches
plant $m "release rule off" \
    's/else if (e->end < own->read_end)/else if (0)/' test_check_catches
plant $m "refill rule off" 's/else if (e->begin < o->release)/else if (0)/' \
    test_rules_hold test_check_catches
j=src/app/pipeline_json.c
plant $j "warps unnamed" 's/if (pipeline_json_warps(m)) {/if (0) {/' \
    test_json_round_trip
plant $j "kernel forgotten" 's/json_kernel_key(&b, m);//' test_json_round_trip
plant src/ui/ui_pipeline.c "viewer: roles" \
    's/pipeline_json_role_name(v->meta, r, role/pipeline_role_name(r, role/' \
    test_viewer
plant src/ui/ui_pipeline.c "viewer: landing" \
    's/pipeline_json_warps(v->meta) ? landed < consumers : //' test_viewer
plant $m "no time order" 's/qsort(ev, nev, sizeof \*ev, warps_time_cmp);//' \
    test_viewer
exit $status
