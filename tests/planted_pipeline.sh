#!/bin/sh
# planted_pipeline.sh - shows that tests/check_pipeline catches each fault
# it exists to catch: for every claim below, one sed on one source file
# (the model, src/model/pipeline.c, unless the plant names the viewer,
# src/ui/ui_pipeline.c, or the recording's durations,
# src/model/pipeline_fit.c), the suite rebuilt against it, and the test case
# that must then fail.  Not part of make check.
#
#   tests/planted_pipeline.sh [TREE]
#
# TREE (default: the tree this script is in) must be built (make, or
# make check).  Nothing in TREE changes: the planted file and the test
# program are built under a temporary folder that is removed at the end.
# Prints one line per plant and exits 0 only when the unplanted suite
# passes and every plant is caught (1 otherwise, 2 when it cannot start).
#
# Plants (claim; the sed; the test that must fail):
#   refill before release   the producer's wait on EMPTY_V passes at once
#       s/BAR_EMPTY_V, s, r, j, r)/BAR_EMPTY_V, s, 0, j, r)/
#       -> test_dependencies_hold
#   stages ignored          neither EMPTY wait holds the producer back, so
#                           one stage costs what two do
#       s/BAR_EMPTY_\([KV]\), s, r, j, r)/BAR_EMPTY_\1, s, 0, j, r)/
#       -> test_what_if
#   no turns                ping-pong asked for, never done
#       s/const int pp = c->pingpong && c->overlap && c->consumers > 1;/const int pp = 0;/
#       -> test_dependencies_hold test_what_if
#   overlap ignored         --no-overlap runs the overlapped loop anyway
#       s/if (!c->overlap) {/if (0) {/
#       -> test_what_if
#   check: refill rule off  the check no longer compares a refill with
#                           the releases before it
#       s/else if (e->begin < m.release\[prev\])/else if (0)/
#       -> test_check_catches
#   check: read rule off    a refill is no longer held against the wait
#                           for the GEMM that read the slot
#       s/else if (e->begin < m.read\[prev\])/else if (0)/
#       -> test_check_catches
#   check: landing rule off a consumer's wait may end before the copy
#       s/else if (e->end < m.land\[at\])/else if (0)/
#       -> test_check_catches
#   check: turns off        the ping-pong order is never looked at
#       s/if (pingpong && consumers > 1 &&/if (0 \&\&/
#       -> test_check_catches
#   check: turn rule off    a turn taken before its pass is let through
#       s/if (taken > -INFINITY && taken < p\[at\]) {/if (0) {/
#       -> test_check_catches
#   check: turn at its stamp  a turn is taken where its wait's own clock
#                           says, which the recordings break
#       s/taken = row\[y\]->begin;/taken = row[x]->end;/
#       -> test_check_catches test_recorded_turns
#   model: no pauses        the model leaves out a recording's pause
#                           after each step
#       s/r->ready_at = t + k->stamp\[o->kind\];/r->ready_at = t;/
#       -> test_fit_recordings
#   fit: softmax shared     (src/model/pipeline_fit.c) the recorded
#                           softmax spans shared again among the consumers
#       s/k->compute_lanes = cfg->consumers;/k->compute_lanes = 1;/
#       -> test_fit_recordings
#   viewer: ring blind      (src/ui/ui_pipeline.c) the ring counts no
#                           release, so a stage read by one consumer
#                           shows as read by none
#       s/e->round == last->round && e->end <= t)/e->round == last->round \&\& e->end < 0)/
#       -> test_viewer

here=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-$here}
cd "$tree" || exit 2
[ -f Makefile ] && [ -f src/model/libmodel.a ] || {
	echo "planted_pipeline.sh: $tree is not built (run make first)" >&2
	exit 2
}
var() {
	printf 'print-%%:\n\t@echo $($*)\n' | make -s -f Makefile -f - "print-$1"
}
CC=$(var CC)
CFLAGS="$(var DEFS) -I. -Isrc -Itests $(var CHECK_CFLAGS) $(var CFLAGS)"
LIBS="$(var FLASHSTEP_LIBS) $(var CHECK_LIBS) $(var LIBS) $(var CURSES_LIBS)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/planted_pipeline.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM HUP

# build SRC: the suite linked against SRC compiled (its object comes
# before the libraries, so it replaces the library's own)
build() {
	$CC $CFLAGS -c "$1" -o "$tmp/planted.o" &&
	$CC $CFLAGS -o "$tmp/check" tests/check_pipeline.c tests/check_main.c \
	    tests/testutil.c "$tmp/planted.o" $LIBS
}

status=0
if ! build src/model/pipeline.c >"$tmp/log" 2>&1 ||
    ! CK_FORK=yes "$tmp/check" >"$tmp/out" 2>&1; then
	echo "the unplanted suite does not pass here:"
	cat "$tmp/log" "$tmp/out"
	exit 1
fi
echo "unplanted: pass"

plant() {
	file=src/model/pipeline.c
	if [ "$1" = --ui ]; then
		file=src/ui/ui_pipeline.c
		shift
	elif [ "$1" = --fit ]; then
		file=src/model/pipeline_fit.c
		shift
	fi
	name=$1 sed=$2
	shift 2
	sed "$sed" "$file" >"$tmp/planted.c"
	if cmp -s "$file" "$tmp/planted.c"; then
		printf '%-26s NOT SHOWN: the sed changed nothing\n' "$name"
		status=1
		return
	fi
	if ! build "$tmp/planted.c" >"$tmp/log" 2>&1; then
		printf '%-26s NOT SHOWN: the build failed\n' "$name"
		status=1
		return
	fi
	CK_FORK=yes "$tmp/check" >"$tmp/out" 2>&1
	for t in "$@"; do
		if grep -q ":$t:" "$tmp/out"; then
			printf '%-26s caught by %s\n' "$name" "$t"
		else
			printf '%-26s NOT CAUGHT by %s\n' "$name" "$t"
			status=1
		fi
	done
}

plant "refill before release" \
    's/BAR_EMPTY_V, s, r, j, r)/BAR_EMPTY_V, s, 0, j, r)/' \
    test_dependencies_hold
plant "stages ignored" \
    's/BAR_EMPTY_\([KV]\), s, r, j, r)/BAR_EMPTY_\1, s, 0, j, r)/' \
    test_what_if
plant "no turns" \
    's/const int pp = c->pingpong \&\& c->overlap \&\& c->consumers > 1;/const int pp = 0;/' \
    test_dependencies_hold test_what_if
plant "overlap ignored" 's/if (!c->overlap) {/if (0) {/' test_what_if
plant "check: refill rule off" \
    's/else if (e->begin < m.release\[prev\])/else if (0)/' \
    test_check_catches
plant "check: read rule off" \
    's/else if (e->begin < m.read\[prev\])/else if (0)/' test_check_catches
plant "check: landing rule off" \
    's/else if (e->end < m.land\[at\])/else if (0)/' test_check_catches
plant "check: turns off" \
    's/if (pingpong \&\& consumers > 1 \&\&/if (0 \&\&/' test_check_catches
plant "check: turn rule off" \
    's/if (taken > -INFINITY \&\& taken < p\[at\]) {/if (0) {/' \
    test_check_catches
plant "check: turn at its stamp" \
    's/taken = row\[y\]->begin;/taken = row[x]->end;/' \
    test_check_catches test_recorded_turns
plant "model: no pauses" \
    's/r->ready_at = t + k->stamp\[o->kind\];/r->ready_at = t;/' \
    test_fit_recordings
plant --fit "fit: softmax shared" \
    's/k->compute_lanes = cfg->consumers;/k->compute_lanes = 1;/' \
    test_fit_recordings
plant --ui "viewer: ring blind" \
    's/e->round == last->round \&\& e->end <= t)/e->round == last->round \&\& e->end < 0)/' \
    test_viewer
exit $status
