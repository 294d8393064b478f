# tests/testlib.sh - what the shell tests share so that each one runs
# beside the others (make -j) on a loaded machine and fails only for the
# reason it names.  Sourced, never run: `. "$top_srcdir/tests/testlib.sh"`.
#
# - A folder of the test's own ($tmp, from mktemp), removed on every way
#   out: normal exit, INT, TERM or HUP.  No fixed names anywhere else.
# - Waits poll, up to a deadline long enough for a machine running every
#   other test at once; a wait that succeeds returns as soon as it can,
#   so the deadline costs nothing when things work.
# - A time limit is `timeout` (coreutils): it is the parent of what it
#   limits and waits for it, so it never signals a process that is gone
#   (a `(sleep N; kill $pid) &` watchdog can: $pid may be reaped and
#   reused by then), and it runs the command in a process group of its
#   own; when the command dies of a signal, timeout exits as it did.
# - A test signals a process only while that process cannot have ended:
#   one blocked until the signal comes (bash reaps a background job as
#   soon as it ends, so $! alone does not keep a pid from reuse).
# - Nothing is sent a signal while it is a subshell of the test: bash
#   (make check's shell) runs the EXIT trap in a subshell killed by
#   SIGTERM, so `(sleep N; ...) & kill $!` removes the test's folder
#   under it (95 times in 100 here, when the kill comes at once).  What
#   runs in the background is a command (exec'd, no trap left) or
#   timeout; a background subshell that must stay a shell starts with
#   `trap - EXIT INT TERM HUP` and is never killed.

# How long one wait may take, in seconds.
: "${FLASHSTEP_TEST_WAIT:=120}"

testlib_cleanup_hook=

# testlib_init [HOOK]: makes $tmp; on exit HOOK (a command, if given)
# runs and then $tmp is removed.
testlib_init() {
	testlib_cleanup_hook=${1:-}
	tmp=$(mktemp -d) || { echo "FAIL: mktemp -d failed"; exit 1; }
	trap testlib_exit EXIT
	# A signal ends the test through exit, so the EXIT trap runs (dash
	# runs it on exit, not on death by a signal it does not trap).  A
	# signal the shell was started ignoring stays ignored (POSIX).
	trap 'exit 1' INT TERM HUP
}

testlib_exit() {
	[ -n "$testlib_cleanup_hook" ] && $testlib_cleanup_hook
	rm -rf "$tmp"
}

# testlib_poll SECONDS COMMAND...: runs COMMAND until it succeeds (0) or
# SECONDS pass (1, after one last try).
testlib_poll() {
	testlib_end=$(($(date +%s) + $1))
	shift
	while ! "$@"; do
		[ "$(date +%s)" -ge "$testlib_end" ] && { "$@"; return; }
		sleep 0.1
	done
}

# testlib_drained TTY: the terminal TTY holds no input that its reader
# has not read yet (FIONREAD, with perl; counts what a reader in
# non-canonical mode, as curses is, would get).  Keys that must do
# nothing are sent, then this is polled, then what could make them act
# (a resize): so they cannot be read only after it.  Without perl: true
# after a pause.
testlib_drained() {
	if command -v perl >/dev/null 2>&1; then
		perl -e 'use Fcntl;
			sysopen(my $t, $ARGV[0], O_RDONLY | O_NOCTTY | O_NONBLOCK) or exit 2;
			my $n = pack("i", 0);
			ioctl($t, 0x541B, $n) or exit 2;	# FIONREAD
			exit(unpack("i", $n) == 0 ? 0 : 1)' "$1"
		[ $? -ne 1 ]
	else
		sleep 1
	fi
}
