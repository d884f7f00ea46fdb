# SPDX-License-Identifier: GPL-2.0
# Sourced by the tests of tests/dist/: counting and reporting checks.
# Each script ends with `finish RESULT_FILE`, which prints "N passed,
# N failed" and writes "PASSED FAILED" to RESULT_FILE (if given).

passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; shift; [ $# -eq 0 ] || printf '#   %s\n' "$@"; }

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

finish() {
	echo "$passed passed, $failed failed"
	[ -z "${1:-}" ] || echo "$passed $failed" > "$1"
	[ "$failed" -eq 0 ]
}
