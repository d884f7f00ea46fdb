#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make test-SUITE T=NAME` reaches every suite, and a NAME no case holds
# fails loudly. Usage: t_test.sh TOP UNIT_RUNNER [RESULT_FILE].
#
# Every suite of the top Makefile's SUITES is dry-run (make -n, its
# heavy prerequisites assumed made) with T=NAME: its commands must carry
# NAME to its runner. A suite that hands the run to a sub-make (debug,
# arm64, arm64-dkms) is judged by the target the sub-make runs, which gets
# T as make passes every command-line variable down. Then real runs that
# take a second: `make test T=`, a one-case suite, the unit runner, the
# e2e scripts (as root), tests/t_result.sh.
set -uo pipefail
top=${1:?usage: t_test.sh TOP UNIT_RUNNER [RESULT_FILE]}
runner=${2:?usage: t_test.sh TOP UNIT_RUNNER [RESULT_FILE]}
result_file=${3:-}
. "$top/tests/lib.sh"
work=$(mktemp -d) || exit 2
at_exit "rm -rf '$work'"
# Not the caller's make: its flags (-j, T=, -n) are not these runs'.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
name=no_case_holds_this
mk() { make -C "$top" --no-print-directory RESULTS="$work/results" "$@"; }

# What the suites need built, assumed made: a dry run prints, never builds
# (a recipe line that runs $(MAKE) runs even under -n: MAKE=echo).
old=()
for t in vm-kernel vm-initrd vm-modules build-arm64 debug-kernel deb upgrade-old-deb \
	e2e-old-sieve unit-install; do
	old+=(-o "$t")
done
dry() { mk -n "${old[@]}" MAKE="echo make" T="$name" "$@" 2>&1; }

# holds TEXT PATTERN, lacks TEXT PATTERN: whether TEXT has a line matching.
holds() { grep -q -- "$2" <<<"$1"; }
lacks() { ! grep -q -- "$2" <<<"$1"; }

suites=$(mk --eval 'print-suites: ; @echo $(SUITES)' print-suites)
check "the Makefile lists its suites" test -n "$suites"
for s in $suites; do
	case $s in
	debug) target=debug-vm-run; vars=(SIEVE_DEBUG_VM=1) ;;
	arm64) target=test-vm; vars=() ;;
	arm64-dkms) target=test-dkms; vars=() ;;
	*) target=test-$s; vars=() ;;
	esac
	# Not t_result.sh's own mention of it: the suite's runner must get it.
	out=$(dry "${vars[@]}" "$target" | sed 's|tests/t_result\.sh [^|]*||')
	if holds "$out" "$name"; then
		ok "T= reaches $s ($target)"
	else
		not_ok "T= reaches $s ($target)" "make -n $target T=$name never names it:" "$(tail -n 5 <<<"$out")"
	fi
done

# The VM: init.sh's filter, and no host check of a suite that does not run.
out=$(dry test-vm)
check "test-vm T=: sieve.only= on the kernel command line" holds "$out" "sieve.only=$name"
check "test-vm T=: no host check of the core suite's files" lacks "$out" "--check"
check "test-vm T=core: the host checks run" holds "$(dry T=core test-vm)" "--check"

# Loud failures, for real.
out=$(mk test T="$name" 2>&1)
rc=$?
check "make test T=: refused (exit $rc)" test "$rc" -ne 0
check "make test T=: says why" holds "$out" "one case is make test-SUITE"
out=$(mk -o "$top/build/sieve" test-service T="$name" 2>&1)
rc=$?
check "test-service T=unknown: fails (exit $rc)" test "$rc" -ne 0
check "test-service T=unknown: says so" holds "$out" "matches no case of service"
check "test-service T=unknown: counted one failure" grep -qx "0 1" "$work/results/service"
out=$(mk T="bad name" test-bpf 2>&1)
check "T= with a space: refused by make" holds "$out" "a case name is letters"

out=$("$runner" -r "$work/unit" "$name" 2>&1)
rc=$?
check "unit runner, no case matches: exit 2 (got $rc)" test "$rc" -eq 2
check "unit runner, no case matches: says so" holds "$out" "no test matches"
"$runner" -n -r "$work/unit" "$name" >/dev/null 2>&1
rc=$?
check "unit runner -n, no case matches: exit 0 (got $rc), 0 0" \
	sh -c '[ "$1" -eq 0 ] && grep -qx "0 0" "$2"' sh "$rc" "$work/unit"

out=$("$top/tests/t_result.sh" "$name" unit "$work/unit" 2>&1)
rc=$?
check "t_result.sh on a result of no case: exit 1 (got $rc)" test "$rc" -eq 1
check "t_result.sh on a result of no case: says so" holds "$out" "no case of unit ran"
check "t_result.sh on a result of no case: 0 1" grep -qx "0 1" "$work/unit"
echo "3 0" >"$work/unit"
check "t_result.sh on a result of 3 cases: passes" "$top/tests/t_result.sh" "$name" unit "$work/unit"

# The e2e scripts pick their cases before setting anything up.
if [ "$(id -u)" = 0 ] && [ -x "$top/build/sieve" ]; then
	for s in e2e fleet demo; do
		out=$(timeout 60 "$top/tests/e2e/$s.sh" "$top/build/sieve" "$work/e2e.$s" "$name" 2>&1)
		rc=$?
		check "e2e $s.sh T=unknown: no case, 0 0 (exit $rc)" \
			sh -c '[ "$1" -eq 0 ] && grep -qx "0 0" "$2"' sh "$rc" "$work/e2e.$s"
		check "e2e $s.sh T=unknown: set nothing up" lacks "$out" "setting up\|FAIL"
	done
else
	skip "the e2e scripts with T=unknown: need root and build/sieve"
fi

finish "$result_file"
