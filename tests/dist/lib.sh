# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash # sourced by bash scripts
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

# check_purged FILES DIR...: after a purge of $PACKAGES, none is
# installed, none of FILES (what `dpkg -L` listed before) is left but a
# folder another package owns, and no DIR exists.
check_purged() {
	local files=$1 p d left
	shift
	for p in $PACKAGES; do
		check "$p is gone, configuration and all" \
			sh -c "! dpkg-query -W -f='\${db:Status-Status}' $p 2>/dev/null | grep -qv '^not-installed$'"
	done
	# A folder they shared with other packages stays: it must have another owner.
	left=$(grep -vx "/." "$files" | while read -r f; do
		if [ -d "$f" ]; then
			dpkg-query -S "$f" >/dev/null 2>&1 || echo "$f"
		elif [ -e "$f" ] || [ -L "$f" ]; then
			echo "$f"
		fi
	done)
	# shellcheck disable=SC2086 # the files left: one argument each
	if [ -z "$left" ]; then ok "none of their files is left"; else not_ok "none of their files is left" $left; fi
	for d in "$@"; do
		check "no $d" test ! -e "$d"
	done
}

finish() {
	echo "$passed passed, $failed failed"
	[ -z "${1:-}" ] || echo "$passed $failed" > "$1"
	[ "$failed" -eq 0 ]
}
