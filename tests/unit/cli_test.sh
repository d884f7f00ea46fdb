#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sieve CLI on local filters: outputs, exit codes and one-line errors.
# Usage: cli_test.sh PATH/TO/sieve [RESULT_FILE]; writes "PASSED FAILED".
set -uo pipefail
sieve=${1:?usage: cli_test.sh PATH/TO/sieve [RESULT_FILE]}
result_file=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; shift; printf '#   %s\n' "$@"; }

# expect NAME WANTED_EXIT CMD...: runs CMD, keeps its stdout/stderr in $out/$err.
expect() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	rc=$?
	out=$(cat "$work/out") err=$(cat "$work/err")
	if [ "$rc" -eq "$want" ]; then ok "$name"; else not_ok "$name" "exit $rc, wanted $want" "stderr: $err"; fi
}

# A usage error: exit 2, exactly one line on stderr, nothing on stdout.
expect_refused() {
	local name=$1
	shift
	expect "$name: exit 2" 2 "$@"
	if [ "$(wc -l < "$work/err")" -eq 1 ] && [ ! -s "$work/out" ]; then
		ok "$name: one line on stderr"
	else
		not_ok "$name: one line on stderr" "stderr: $err" "stdout: $out"
	fi
}

check() {	# check NAME CONDITION-COMMAND...
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi
}

expect "help" 0 "$sieve" --help
check "help lists every command" grep -q measure <<<"$out"
for cmd in size dedup measure; do
	expect "$cmd --help" 0 "$sieve" "$cmd" --help
	check "$cmd --help prints its usage" grep -q "^usage: sieve $cmd" <<<"$out"
done

expect "size of all types" 0 "$sieve" size -n 1M -p 1%
check "size lists three types" test "$(grep -cE '^(bloom|blocked|cuckoo) ' <<<"$out")" -eq 3
check "bloom at 1% uses 7 hashes and 9.59 bits/key" grep -qE '^bloom +bits=[0-9]+ +hashes=7 .*bits/key= *9\.59 ' <<<"$out"
check "cuckoo at 1% uses 10-bit fingerprints" grep -qE '^cuckoo +buckets=262144 +fp_bits=10 ' <<<"$out"
# The formula's 9585059 bits, plus what the exact rate at capacity asks for (0.1%).
expect "size -j bloom" 0 "$sieve" size -j -t bloom -n 1M -p 1%
check "bloom at 1%: the formula's bits or at most 1% more, rate at capacity at most 1%" \
	python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; assert d["nhashes"]==7 and 9585059<=d["nbits"]<=9680910 and d["expected_fpr"]<=0.01, d' <<<"$out"
expect "size -j" 0 "$sieve" size -j -t cuckoo -n 64M -p 0.001
check "size -j is JSON with the geometry" \
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[0]["fp_bits"]==13 and d[0]["nbuckets"]==2**24' <<<"$out"

expect_refused "zero capacity" "$sieve" size -n 0
expect_refused "rate of 1" "$sieve" size -p 1
expect_refused "rate of 0" "$sieve" size -p 0
expect_refused "rate not a number" "$sieve" size -p abc
expect_refused "capacity with junk" "$sieve" size -n 12x
expect_refused "unknown type" "$sieve" size -t quotient
expect_refused "unknown option" "$sieve" size --frobnicate
expect_refused "unknown command" "$sieve" frobnicate
expect_refused "cuckoo below its reach" "$sieve" size -t cuckoo -p 1e-6
expect_refused "too big a filter" "$sieve" size -t bloom -n 1G -p 1e-9
expect_refused "missing input file" "$sieve" dedup "$work/none"
expect_refused "two suffixes" "$sieve" size -n 1kM
expect_refused "option without its value" "$sieve" size -n
expect_refused "no type fits" "$sieve" size -n 1G -p 1e-9
expect_refused "no command" "$sieve"
expect_refused "help for an unknown command" "$sieve" help nope
expect_refused "hexadecimal rate" "$sieve" size -p 0x0.01
expect_refused "rate with a space" "$sieve" size -p " 0.5"
expect_refused "query count that wraps" "$sieve" measure -q 18446744073709551615
expect "size -j when cuckoo cannot reach the rate" 0 "$sieve" size -j -p 1e-6
check "size -j lists the types that can, as valid JSON" \
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert [e["type"] for e in d]==["bloom","blocked"]' <<<"$out"
if [ -w /dev/full ]; then
	expect "output to a full disk fails" 2 sh -c "\"$sieve\" size > /dev/full"
fi

for type in bloom blocked cuckoo; do
	expect "measure $type" 0 "$sieve" measure -j -t "$type" -n 200k -p 1% -q 400k -s 7
	check "measure $type: no false negative, rate below 1.2%" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["false_negatives"] == 0 and d["full_at"] == 0, d
assert d["measured_fpr"] < 0.012, d' <<<"$out"
done

awk 'BEGIN { for (i = 0; i < 30000; i++) printf "k%d\n", i % 10000 }' > "$work/stream"
for type in bloom blocked cuckoo; do
	expect "dedup $type" 0 "$sieve" dedup -t "$type" -n 10k -p 0.1% -s 1 "$work/stream"
	check "dedup $type: every line at most once, about 10000" \
		test "$(sort <<<"$out" | uniq -d | wc -l)" -eq 0 -a "$(wc -l <<<"$out")" -ge 9980
done
expect "dedup from stdin" 0 "$sieve" dedup - < <(printf 'a\nb\na\n')
check "dedup from stdin keeps first occurrences in order" test "$out" = $'a\nb'
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "u%d\n", i }' > "$work/many"
expect "dedup past a cuckoo filter's room fails" 2 "$sieve" dedup -t cuckoo -n 100 "$work/many"
check "dedup past the room: one line saying so" test "$(wc -l <<<"$err")" -eq 1 -a "${err#*filter full}" != "$err"
check "dedup past the room: the lines before were printed" test "$(wc -l <<<"$out")" -ge 100

echo "$passed passed, $failed failed"
[ -z "$result_file" ] || echo "$passed $failed" > "$result_file"
[ "$failed" -eq 0 ]
