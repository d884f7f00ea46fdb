# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash # sourced by the host's shell suites (bash)
#
# The one helper library of the host's shell suites: every tests/*/*.sh
# that counts results sources it (`. "$(dirname "$0")/../lib.sh"`). The
# VM's scripts are busybox sh and report KTAP through tests/vm/init.sh.
#
# Two ways to count, each ending in `finish`, which prints "N passed, N
# failed" and writes "PASSED FAILED" to the result file make test sums
# (tests/summarize.sh):
#   checks  ok NAME, not_ok NAME [DETAIL...], skip NAME, check NAME CMD...,
#           check_out NAME CMD...: one "ok - NAME" line each
#   cases   functions case_NAME, listed once in CASES: fail MSG and
#           expect_eq inside one; cases_matching picks those T= names
#           (make test-SUITE T=NAME), case_report counts one
# And: wait_until SECS CMD... (a bounded wait), at_exit CMD (run at exit,
# the last registered first: work=$(mktemp -d) && at_exit "rm -rf '$work'").

passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; shift; [ $# -eq 0 ] || printf '#   %s\n' "$@"; }
# A check that cannot run here, said so: never counted as a pass.
skip() { echo "ok - # SKIP $1"; }

# check NAME COMMAND...: the check passes when COMMAND exits 0.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi
}

# check_out NAME COMMAND...: as check, showing COMMAND's output on failure.
check_out() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "failed: $*" "$out"; fi
}

# finish [RESULT_FILE [LABEL]]: the counts, printed (after "LABEL: ") and
# written; the status: 0 when nothing failed.
finish() {
	echo "${2:+$2: }$passed passed, $failed failed"
	[ -z "${1:-}" ] || echo "$passed $failed" >"$1"
	[ "$failed" -eq 0 ]
}

# ---- cases ----

case_failed=0
# Inside a case: one failed expectation (the case goes on, and fails).
fail() { echo "    FAIL: $*"; case_failed=1; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"; }

# cases_matching PREFIX FILTER CASE...: the CASEs whose reported name,
# PREFIX then the case, holds FILTER; all of them without one.
cases_matching() {
	local prefix=$1 filter=$2 c
	shift 2
	for c in "$@"; do
		case $prefix$c in *"$filter"*) echo "$c" ;; esac
	done
}

# case_report NAME: "ok   NAME" or "FAIL NAME" for the case just run (by
# case_failed), counted; case_failed is reset for the next.
case_report() {
	if [ "$case_failed" = 0 ]; then
		echo "ok   $1"; passed=$((passed + 1))
	else
		echo "FAIL $1"; failed=$((failed + 1))
	fi
	case_failed=0
}

# ---- waits and cleanup ----

# wait_until SECS CMD...: runs CMD until it succeeds or SECS have passed
# (then once more); its status.
wait_until() {
	local secs=$1 end
	shift
	end=$(($(date +%s) + secs))
	while [ "$(date +%s)" -lt "$end" ]; do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# at_exit CMD: CMD (one shell word list, eval'd) runs when the script
# exits, however it exits; the last registered runs first.
lib_at_exit=""
at_exit() {
	lib_at_exit="$1${lib_at_exit:+; $lib_at_exit}"
	# shellcheck disable=SC2064 # the list as it is now
	trap "$lib_at_exit" EXIT
}

# ---- network namespaces ----

# in_ns NS CMD...: CMD in the network namespace NS. nsenter --net, not `ip
# netns exec`, which remounts /sys: the CLI must see the host's bpffs.
in_ns() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# veth_pair NS1 IF1 NS2 IF2: a veth pair, IF1 in NS1 and IF2 in NS2, both up.
veth_pair() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" &&
		in_ns "$1" ip link set "$2" up && in_ns "$3" ip link set "$4" up
}
