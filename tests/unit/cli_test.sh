#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sieve CLI on local filters: outputs, exit codes and one-line errors.
# Usage: cli_test.sh PATH/TO/sieve [RESULT_FILE]; writes "PASSED FAILED".
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
work=$(mktemp -d) || exit 2
at_exit "rm -rf '$work'"
sieve=${1:?usage: cli_test.sh PATH/TO/sieve [RESULT_FILE]}
result_file=${2:-}


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

# --version: the version from the file VERSION and the ioctl ABI of the UAPI
# header, the same line for every command (`sieve agent --version` too).
top=$(cd "$(dirname "$0")/../.." && pwd)
version_line="sieve $(cat "$top/VERSION") (ioctl ABI $(awk '$2 == "SIEVE_ABI_VERSION" { print $3 }' \
	"$top/include/uapi/linux/sieve.h"))"
check "the version line is whole" grep -qxE 'sieve [0-9]+\.[0-9]+\.[0-9]+ \(ioctl ABI [0-9]+\)' <<<"$version_line"
version_cases=("" "size" "size -n 10" "filter" "filter create" "filter clear" "snapshot query" "build")
# The table read whole first: `| grep -q` would stop reading at its match,
# and under pipefail the writer's SIGPIPE would drop these cases silently.
commands=$("$sieve" __complete)
grep -q $'^command\txdp\t' <<<"$commands" && version_cases+=("xdp" "xdp attach" "xdp plan -n 5")
grep -q $'^command\tagent\t' <<<"$commands" && version_cases+=("agent")
for words in "${version_cases[@]}"; do
	# shellcheck disable=SC2086 # the command's words
	expect "sieve $words --version" 0 "$sieve" $words --version
	check "sieve $words --version: $version_line" test "$out" = "$version_line"
done
expect_refused "--version takes no value" "$sieve" size --version=1
check "--version=1: says it takes no value" grep -q "option '--version' takes no value" <<<"$err"
expect "help lists --version" 0 "$sieve" --help
check "--help lists --version" grep -qE '^ +--version ' <<<"$out"

expect "help" 0 "$sieve" --help
check "help lists every command" grep -q measure <<<"$out"
for cmd in size dedup measure; do
	expect "$cmd --help" 0 "$sieve" "$cmd" --help
	check "$cmd --help prints its usage" grep -q "^usage: sieve $cmd" <<<"$out"
done

expect "size of all types" 0 "$sieve" size -n 1M --fpr 1%
check "size lists three types" test "$(grep -cE '^(bloom|blocked|cuckoo) ' <<<"$out")" -eq 3
check "bloom at 1% uses 7 hashes and 9.59 bits/key" grep -qE '^bloom +bits=[0-9]+ +hashes=7 .*bits/key= *9\.59 ' <<<"$out"
check "cuckoo at 1% uses 10-bit fingerprints" grep -qE '^cuckoo +buckets=262144 +fp_bits=10 ' <<<"$out"
# The formula's 9585059 bits, plus what the exact rate at capacity asks for (0.1%).
expect "size -j bloom" 0 "$sieve" size -j -t bloom -n 1M --fpr 1%
check "bloom at 1%: the formula's bits or at most 1% more, rate at capacity at most 1%" \
	python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; assert d["nhashes"]==7 and 9585059<=d["nbits"]<=9680910 and d["expected_fpr"]<=0.01, d' <<<"$out"
expect "size -j" 0 "$sieve" size -j -t cuckoo -n 64M --fpr 0.001
check "size -j is JSON with the geometry" \
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[0]["fp_bits"]==13 and d[0]["nbuckets"]==2**24' <<<"$out"

expect_refused "zero capacity" "$sieve" size -n 0
expect_refused "rate of 1" "$sieve" size --fpr 1
expect_refused "rate of 0" "$sieve" size --fpr 0
expect_refused "rate not a number" "$sieve" size --fpr abc
expect_refused "capacity with junk" "$sieve" size -n 12x
expect_refused "unknown type" "$sieve" size -t quotient
expect_refused "unknown option" "$sieve" size --frobnicate
expect_refused "unknown command" "$sieve" frobnicate
expect_refused "cuckoo below its reach" "$sieve" size -t cuckoo --fpr 1e-6
expect_refused "too big a filter" "$sieve" size -t bloom -n 1G --fpr 1e-9
expect_refused "missing input file" "$sieve" dedup "$work/none"
expect_refused "two suffixes" "$sieve" size -n 1kM
expect_refused "option without its value" "$sieve" size -n
expect_refused "no type fits" "$sieve" size -n 1G --fpr 1e-9
expect_refused "no command" "$sieve"
expect_refused "help for an unknown command" "$sieve" help nope
expect_refused "hexadecimal rate" "$sieve" size --fpr 0x0.01
expect_refused "rate with a space" "$sieve" size --fpr " 0.5"
expect_refused "query count that wraps" "$sieve" measure -q 18446744073709551615
expect "size -j when cuckoo cannot reach the rate" 0 "$sieve" size -j --fpr 1e-6
check "size -j lists the types that can, as valid JSON" \
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert [e["type"] for e in d]==["bloom","blocked"]' <<<"$out"
if [ -w /dev/full ]; then
	expect "output to a full disk fails" 2 sh -c "\"$sieve\" size > /dev/full"
fi

for type in bloom blocked cuckoo; do
	expect "measure $type" 0 "$sieve" measure -j -t "$type" -n 200k --fpr 1% -q 400k -s 7
	check "measure $type: no false negative, rate below 1.2%" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["false_negatives"] == 0 and d["full_at"] == 0, d
assert d["measured_fpr"] < 0.012, d' <<<"$out"
done

awk 'BEGIN { for (i = 0; i < 30000; i++) printf "k%d\n", i % 10000 }' > "$work/stream"
for type in bloom blocked cuckoo; do
	expect "dedup $type" 0 "$sieve" dedup -t "$type" -n 10k --fpr 0.1% -s 1 "$work/stream"
	check "dedup $type: every line at most once, about 10000" \
		test "$(sort <<<"$out" | uniq -d | wc -l)" -eq 0 -a "$(wc -l <<<"$out")" -ge 9980
done
expect "dedup from stdin" 0 "$sieve" dedup - < <(printf 'a\nb\na\n')
check "dedup from stdin keeps first occurrences in order" test "$out" = $'a\nb'
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "u%d\n", i }' > "$work/many"
expect "dedup past a cuckoo filter's room fails" 2 "$sieve" dedup -t cuckoo -n 100 "$work/many"
check "dedup past the room: one line saying so" test "$(wc -l <<<"$err")" -eq 1 -a "${err#*filter full}" != "$err"
check "dedup past the room: the lines before were printed" test "$(wc -l <<<"$out")" -ge 100

# ---- sieve filter without a device: usage errors and one clear line --------
for sub in create list info add query del clear destroy export import merge; do
	expect "filter $sub --help" 0 "$sieve" filter "$sub" --help
	check "filter $sub --help prints its usage" grep -q "^usage: sieve filter $sub" <<<"$out"
done
for cmd in build snapshot; do
	expect "$cmd --help" 0 "$sieve" "$cmd" --help
	check "$cmd --help prints its usage" grep -q "^usage: sieve $cmd" <<<"$out"
done
expect "filter --help lists the subcommands" 0 "$sieve" filter --help
check "filter --help names merge" grep -q "^  merge " <<<"$out"
export SIEVE_DEVICE=$work/nonexistent
expect_refused "filter list without the device" "$sieve" filter list
check "no device: says so" grep -q "no such device (is the sieve module loaded?)" <<<"$err"
expect_refused "filter query without the device" "$sieve" filter query f k
expect_refused "filter create without the device" "$sieve" filter create f -t bloom -n 1k
if [ -e /dev/null ]; then
	SIEVE_DEVICE=/dev/null expect_refused "a device that is not sieve's" "$sieve" filter info f
	check "not sieve's device: says so" grep -q "is not a sieve device" <<<"$err"
fi
expect_refused "filter without subcommand" "$sieve" filter
expect_refused "filter unknown subcommand" "$sieve" filter frob
expect_refused "create without a type" "$sieve" filter create f -n 1k
expect_refused "create without a size" "$sieve" filter create f -t bloom
expect_refused "create with a bad name" "$sieve" filter create 'a/b' -t bloom -n 1k
expect_refused "create with a long name" "$sieve" filter create "$(printf 'n%.0s' {1..32})" -t bloom -n 1k
expect_refused "create --ephemeral" "$sieve" filter create f -t bloom -n 1k --ephemeral
expect_refused "create with a geometry and a capacity" "$sieve" filter create f -t bloom -n 1k --bits 1024 --hashes 3
expect_refused "create with the other type's geometry" "$sieve" filter create f -t cuckoo --bits 1024 --hashes 3
expect_refused "create with a bad geometry" "$sieve" filter create f -t cuckoo --buckets 3 --fp-bits 8
expect_refused "create --growth without --scalable" "$sieve" filter create f -t bloom -n 1k --growth 4
expect_refused "create --growth out of range" "$sieve" filter create f -t bloom -n 1k --scalable --growth 17
expect_refused "create cuckoo below its reach" "$sieve" filter create f -t cuckoo -n 1k --fpr 1e-6
expect_refused "create too big" "$sieve" filter create f -t bloom -n 1G --fpr 1e-9
expect_refused "add without keys" "$sieve" filter add f
expect_refused "add with keys and -f" "$sieve" filter add f k -f "$work/none"
expect_refused "add from a missing file" "$sieve" filter add f -f "$work/none"
expect_refused "query an option it does not take" "$sieve" filter query f --if-absent k
expect_refused "info with two names" "$sieve" filter info a b
expect_refused "merge with one name" "$sieve" filter merge a
expect_refused "export without a file" "$sieve" filter export a
unset SIEVE_DEVICE

# ---- sieve build and snapshot files, offline ---------------------------------
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "key-%d\n", i }' > "$work/keys"
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "other-%d\n", i }' > "$work/others"
for type in bloom blocked cuckoo; do
	snap=$work/$type.snap
	expect "build $type" 0 "$sieve" build "$snap" -t "$type" -n 20k --fpr 1% -s 11 -f "$work/keys"
	check "build $type: says how many keys" grep -q "^$snap: 20000 keys" <<<"$out"
	expect "snapshot query $type: every key present" 0 "$sieve" snapshot query -c "$snap" -f "$work/keys"
	check "snapshot query $type: 20000 present" grep -q "^20000 keys: 20000 maybe present, 0 absent" <<<"$out"
	expect "snapshot query $type: foreign keys mostly absent (exit 1)" 1 "$sieve" snapshot query -j -c "$snap" -f "$work/others"
	check "snapshot query $type: rate of foreign keys below 2%" \
		python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["keys"]==20000 and d["present"] < 400, d' <<<"$out"
	expect "snapshot info -j $type" 0 "$sieve" snapshot info -j "$snap"
	check "snapshot info $type: its type, seed and size" python3 -c '
import json, os, sys
d = json.load(sys.stdin)
assert d["type"] == sys.argv[1] and d["geometry"]["seed"] == 11 and d["capacity"] == 20000, d
assert d["snapshot_bytes"] == os.path.getsize(sys.argv[2]), d' "$type" "$snap" <<<"$out"
	expect "build $type again" 0 "$sieve" build "$work/again.snap" -t "$type" -n 20k --fpr 1% -s 11 -f "$work/keys"
	check "build $type: the same keys and seed give the same file" cmp -s "$snap" "$work/again.snap"
done
expect "snapshot query per key" 1 "$sieve" snapshot query "$work/bloom.snap" key-1 key-19999 not-a-key
check "snapshot query prints each key's answer" test "$out" = $'present key-1\npresent key-19999\nabsent not-a-key'
expect "snapshot query -j per key" 1 "$sieve" snapshot query -j "$work/bloom.snap" key-1 'not"a\key'
check "snapshot query -j is JSON with each key" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [r["key"] for r in d["results"]] == ["key-1", "not\"a\\key"] and d["results"][0]["present"], d
assert d["keys"] == 2 and d["present"] + d["absent"] == 2, d' <<<"$out"
expect "build sized by the key file" 0 "$sieve" build "$work/count.snap" -t blocked --fpr 0.1% -f "$work/keys" -j
check "build without --capacity: sized for the 20000 lines" python3 -c '
import json, sys; d = json.load(sys.stdin); assert d["keys"] == 20000 and d["fpr"] < 0.0012, d' <<<"$out"
expect "build from stdin" 0 "$sieve" build "$work/stdin.snap" -t cuckoo -n 100 - < <(printf 'a\nb\n\nc\n')
check "build from stdin: empty lines skipped" grep -q ": 3 keys" <<<"$out"
expect_refused "build from stdin needs --capacity" "$sieve" build "$work/x.snap" -t bloom - < /dev/null
expect "build with a geometry" 0 "$sieve" build "$work/geo.snap" -t bloom --bits 100000 --hashes 5 -f "$work/keys"
expect "build scalable" 0 "$sieve" build "$work/scal.snap" -t bloom -n 2000 --scalable -f "$work/keys" -j
check "build scalable: grew to 4 layers (2k + 4k + 8k + 16k)" python3 -c '
import json, sys; d = json.load(sys.stdin); assert d["layers"] == 4, d' <<<"$out"
expect "scalable snapshot: every key present" 0 "$sieve" snapshot query -c "$work/scal.snap" -f "$work/keys"
cp "$work/bloom.snap" "$work/keep.snap"
expect_refused "build past a cuckoo filter's room" "$sieve" build "$work/keep.snap" -t cuckoo -n 100 -f "$work/keys"
check "build past the room: says it is full" grep -q "full after" <<<"$err"
check "a failed build leaves the old file as it was" cmp -s "$work/bloom.snap" "$work/keep.snap"
# shellcheck disable=SC2010 # names this test made: no newlines, no dashes first
check "a failed build leaves no temporary file" test -z "$(ls "$work" | grep '\.tmp')"
expect_refused "build without keys" "$sieve" build "$work/x.snap" -t bloom -n 10
expect_refused "build without a file" "$sieve" build -t bloom -n 10 -f "$work/keys"
expect_refused "build --ephemeral" "$sieve" build "$work/x.snap" -t bloom -n 10 --ephemeral -f "$work/keys"
expect_refused "build with a key over 4096 bytes" "$sieve" build "$work/x.snap" -t bloom -n 10 - < <(head -c 5000 /dev/zero | tr '\0' a; echo)
check "a long key: names the line" grep -q "stdin:1: a key longer than 4096 bytes" <<<"$err"

# Snapshots that are not whole: one line, exit 2, for every kind of damage.
size=$(stat -c %s "$work/bloom.snap")
head -c $((size - 8)) "$work/bloom.snap" > "$work/truncated.snap"
{ cat "$work/bloom.snap"; printf x; } > "$work/trailing.snap"
cp "$work/bloom.snap" "$work/flipped.snap"
printf '\xff' | dd of="$work/flipped.snap" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
cp "$work/bloom.snap" "$work/badmagic.snap"
printf 'X' | dd of="$work/badmagic.snap" bs=1 seek=0 conv=notrunc 2>/dev/null
: > "$work/empty.snap"
for bad in truncated trailing flipped badmagic empty keys; do
	f=$work/$bad.snap
	[ "$bad" = keys ] && f=$work/keys
	expect_refused "snapshot info refuses a $bad file" "$sieve" snapshot info "$f"
	check "snapshot info on a $bad file: says it is not a valid snapshot" \
		grep -q "not a valid sieve snapshot" <<<"$err"
done
# A version-1 snapshot (before the one-pass hash): refused as such, with what to do.
cp "$work/bloom.snap" "$work/v1.snap"
printf '\x01\x00' | dd of="$work/v1.snap" bs=1 seek=4 conv=notrunc 2>/dev/null
expect_refused "snapshot info refuses a version 1 snapshot" "$sieve" snapshot info "$work/v1.snap"
check "snapshot info on a version 1 snapshot: names the version and 'sieve build'" \
	grep -q "another format version.*sieve build" <<<"$err"
expect_refused "snapshot info of a missing file" "$sieve" snapshot info "$work/none"
expect_refused "snapshot without subcommand" "$sieve" snapshot
expect_refused "snapshot unknown subcommand" "$sieve" snapshot frob x

# ---- The option tables: generated --help, usage errors, -j and -p ----------
has_xdp=false
"$sieve" xdp --help >/dev/null 2>&1 && has_xdp=true

# The long options in the Options list of a command's --help, sorted, on one line.
help_options() {
	"$sieve" "$@" --help | sed -n '/^Options:$/,$p' | grep -oE '^  (-[a-z], )? *--[a-z-]+' |
		grep -oE -- '--[a-z-]+' | sort | tr '\n' ' '
}
# expect_help_options "CMD WORDS" OPTION...: --help lists exactly these (and --help).
expect_help_options() {
	local cmd=$1 got want
	shift
	want=$(printf '%s\n' "$@" --help | sort | tr '\n' ' ')
	# shellcheck disable=SC2086 # the command's words
	got=$(help_options $cmd)
	if [ "$got" = "$want" ]; then ok "$cmd --help lists its options"; else
		not_ok "$cmd --help lists its options" "got:  $got" "want: $want"; fi
}
# json_has NAME KEY=VALUE...: the last stdout is a JSON document (as
# python3's json parses it) whose op and first list (or, for detach, whose
# interfaces' results) have these values.
json_has() {
	local name=$1
	shift
	check "$name" python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
flat = {"op": d["op"]}
for k, v in (d["lists"][0] if d.get("lists") else {}).items():
	flat[k] = v
for i in d.get("interfaces", []) if "lists" not in d else []:
	flat[i["iface"]] = i["result"]
for kv in sys.argv[2:]:
	k, v = kv.split("=", 1)
	assert str(flat.get(k)) == v, (k, flat.get(k), v)' "$work/out" "$@"
}

# -j of every change of `sieve xdp` (issue 22, item 9), on a store alone.
xdp_json_tests() {
	local st=$work/jst
	expect "block -j" 0 "$sieve" xdp block -j --state-dir "$st" 192.0.2.1 198.51.100.0/24
	json_has "block -j: op, list, counts, version, interfaces" op=block list=default added=2 \
		updated=0 removed=0 missing=0 store_version=1 interfaces_in_step=0 interfaces=[]
	expect "block -j again" 0 "$sieve" xdp block -j --comment again --state-dir "$st" 192.0.2.1 192.0.2.2
	json_has "block -j of one there: updated" added=1 updated=1 store_version=2
	expect "unblock -j, one missing" 1 "$sieve" xdp unblock -j --state-dir "$st" 192.0.2.1 192.0.2.9
	json_has "unblock -j: removed and missing" op=unblock removed=1 missing=1
	expect "allow -j" 0 "$sieve" xdp allow -p --state-dir "$st" 198.51.100.7
	json_has "allow -p: indented, the same fields" op=allow added=1
	expect "disallow -j" 0 "$sieve" xdp disallow -j --state-dir "$st" 198.51.100.7
	json_has "disallow -j" op=disallow removed=1 missing=0
	printf '203.0.113.1\n203.0.113.2\n' >"$work/j.feed"
	expect "load -j" 0 "$sieve" xdp load -j --state-dir "$st" --origin jf "$work/j.feed"
	json_has "load -j: added" op=load added=2 removed=0
	printf '203.0.113.1\n' >"$work/j.feed"
	expect "load -j, a shorter feed" 0 "$sieve" xdp load -j --state-dir "$st" --origin jf \
		"$work/j.feed"
	json_has "load -j: the one kept updated, the other removed" added=0 updated=1 removed=1
	expect "expire -j, nothing due" 0 "$sieve" xdp expire -j --state-dir "$st"
	json_has "expire -j: each list, at its version" op=expire list=default removed=0 \
		store_version=7
	expect "detach -j" 0 "$sieve" xdp detach -j --state-dir "$st" lo
	json_has "detach -j: each interface's result" op=detach lo=not_attached
	expect_refused "block -j --fleet" "$sieve" xdp block -j --fleet 192.0.2.1 \
		--config "$work/none.conf"
	expect_refused "stats --all without --watch" "$sieve" xdp stats --all
}

# list: a header, the comment, numeric order, --origin and --kind (issue 22, item 9).
# `xdp why` refuses bad input before it needs root or a store: one line, exit 2 (EINVAL).
xdp_why_tests() {
	local bad=(
		"no address|not an IP address|xdp why --state-dir $work/why nosuch"
		"a port of 0|bad port|xdp why 192.0.2.1:0"
		"a port past 65535|bad port|xdp why 192.0.2.1:65536"
		"an IPv6 address with junk|or [IPV6]:PORT|xdp why 2001:db8::1:80:x"
		"brackets without a port|expected [IPV6]:PORT|xdp why [2001:db8::1]"
		"a bad --dst|--dst 192.0.2.300: not an IP address|xdp why 192.0.2.1 --dst 192.0.2.300"
		"families apart|different families|xdp why 192.0.2.1 --dst 2001:db8::1"
		"icmp with a port|icmp has no ports|xdp why 192.0.2.1:5 --proto icmp"
		"an unknown protocol|tcp, udp, sctp or icmp|xdp why 192.0.2.1 --proto gre"
		"a bad interface name|interface name|xdp why 192.0.2.1 -i ../x"
		"two addresses|xdp why|xdp why 192.0.2.1 192.0.2.2"
	)
	local c name want args
	for c in "${bad[@]}"; do
		IFS='|' read -r name want args <<<"$c"
		# shellcheck disable=SC2086 # the arguments: one a word
		expect_refused "why: $name" "$sieve" $args
		check "why: $name: says so" grep -qF -- "$want" <<<"$err"
	done
	expect_refused "why of an address with control characters" "$sieve" xdp why "$(printf 'x\033[2J')"
	check "why: the address is escaped in the error" grep -qF 'x\x1b[2J: ' <<<"$err"
}

xdp_list_tests() {
	local st=$work/lst
	expect "list of an empty store" 0 "$sieve" xdp list --state-dir "$st"
	check "list of an empty store: nothing, not even the header" test -z "$out"
	expect "block in text order" 0 "$sieve" xdp block --state-dir "$st" 10.0.0.10 10.0.0.9 \
		2001:db8::10 2001:db8::9 10.0.0.0/8 9.0.0.1 tcp:192.0.2.1:8080 tcp:192.0.2.1:443 \
		--comment "$(printf 'ssh\tscan')"
	expect "allow" 0 "$sieve" xdp allow --state-dir "$st" 10.1.0.1
	printf '10.0.0.5\n' >"$work/l.feed"
	expect "load a feed" 0 "$sieve" xdp load --state-dir "$st" --origin lf "$work/l.feed"
	expect "list" 0 "$sieve" xdp list --state-dir "$st"
	check "list: a header line first" test "$(head -n 1 <<<"$out")" = \
		"$(printf 'LIST\tKIND\tENTRY\tORIGIN\tEXPIRES\tCOMMENT')"
	check "list: by number, a prefix first, v4 before v6, ports as numbers, then allowed" \
		test "$(tail -n +2 <<<"$out" | cut -f 3 | tr '\n' ' ')" = \
		"9.0.0.1 10.0.0.0/8 10.0.0.5 10.0.0.9 10.0.0.10 2001:db8::9 2001:db8::10 tcp:192.0.2.1:443 tcp:192.0.2.1:8080 10.1.0.1 "
	check "list: the comment, escaped, in the sixth column" \
		grep -qxP 'default\tsource\t10\.0\.0\.9\tcli\tnever\tssh\\x09scan' <<<"$out"
	check "list: six columns a row" test "$(awk -F '\t' 'NF != 6' <<<"$out" | wc -l)" -eq 0
	expect "list --origin" 0 "$sieve" xdp list --state-dir "$st" --origin lf
	check "list --origin: only that origin's" test "$(tail -n +2 <<<"$out" | cut -f 3)" = 10.0.0.5
	expect "list --kind" 0 "$sieve" xdp list --state-dir "$st" --kind prefix
	check "list --kind prefix: only prefixes" test "$(tail -n +2 <<<"$out" | cut -f 3)" = 10.0.0.0/8
	expect "list --kind allow-source -j" 0 "$sieve" xdp list -j --state-dir "$st" --kind allow-source
	check "list -j --kind: the filter applies to JSON" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [e["entry"] for e in d[0]["entries"]] == ["10.1.0.1"], d' <"$work/out"
	expect "list -j, sorted" 0 "$sieve" xdp list -j --state-dir "$st" --kind source
	check "list -j: the same numeric order" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [e["entry"] for e in d[0]["entries"]] == ["9.0.0.1", "10.0.0.5", "10.0.0.9", "10.0.0.10", "2001:db8::9", "2001:db8::10"], d' <"$work/out"
	expect_refused "list --kind of no kind" "$sieve" xdp list --state-dir "$st" --kind bogus
	check "list --kind: says which kinds there are" grep -q "allow-prefix" <<<"$err"
	expect "list --origin of no entry" 0 "$sieve" xdp list --state-dir "$st" --origin nobody
	check "list --origin of no entry: nothing" test -z "$out"
}
sizing="--type --capacity --fpr"
create="$sizing --bits --hashes --buckets --fp-bits --seed --scalable --growth --max-layers"
# shellcheck disable=SC2086 # the option lists: one option a word
{
expect_help_options "size" $sizing --json --pretty
expect_help_options "dedup" $sizing --seed --verbose
expect_help_options "measure" $sizing --seed --queries --json --pretty
expect_help_options "filter create" $create --json --pretty
expect_help_options "filter list" --json --pretty
expect_help_options "filter add" --if-absent --file --json --pretty
expect_help_options "filter query" --count --file --json --pretty
expect_help_options "filter clear"
expect_help_options "build" $create --if-absent --file --json --pretty
expect_help_options "snapshot query" --count --file --json --pretty
if $has_xdp; then
	expect_help_options "xdp attach" --mode --exact --no-exact --fpr --fail-closed --fail-open --backend \
		--dry-run --enforce --capacity --max-probes --sample-rate --force --list --state-dir --json --pretty
	expect_help_options "xdp set" --json --pretty
	expect_help_options "xdp capture" --write --iface --count --timeout --quiet
	expect_help_options "xdp top" --iface --by --window --rows --state-dir --json --pretty
	expect_help_options "xdp plan" --entries --format --fpr --max-probes --json --pretty
	expect_help_options "xdp stats" --iface --watch --interval --count --all --json --pretty
	expect_help_options "xdp block" --iface --list --state-dir --ttl --comment --origin --fleet --config \
		--json --pretty
	expect_help_options "xdp load" --iface --list --state-dir --format --origin --ttl --comment \
		--allow-empty --json --pretty
	expect_help_options "xdp list" --iface --list --origin --kind --state-dir --json --pretty
	expect_help_options "xdp why" --iface --proto --dst --state-dir --json --pretty
	for c in unblock allow disallow expire detach; do
		[[ $(help_options xdp $c) == *--json*--pretty* ]] ||
			not_ok "xdp $c --help lists -j and -p" "$(help_options xdp $c)"
	done
	# Text from outside in an error stays one escaped line (issue 20, item 9):
	# a newline and a journal priority, ESC, invalid UTF-8.
	expect_refused "block of an entry with control characters" "$sieve" xdp block --state-dir "$work/refused" \
		"$(printf 'x\n<0>y\033[2J\377')"
	check "the entry is escaped in the error" grep -qF 'sieve: x\x0a<0>y\x1b[2J\xff: ' <<<"$err"
	printf '192.0.2.1\nbad\033]0;title\a\n' >"$work/hostile.feed"
	expect_refused "a feed line with control characters" "$sieve" xdp load --state-dir "$work/st" \
		"$work/hostile.feed"
	check "the feed line is escaped in the error" grep -qF ':2: bad\x1b]0;title\x07: ' <<<"$err"
	# JSON output: an origin with control characters and invalid UTF-8 is
	# escaped, the document valid UTF-8 (a strict decoder takes it).
	printf '192.0.2.7\n' >"$work/one.feed"
	expect "load a feed of a hostile origin" 0 "$sieve" xdp load --state-dir "$work/st" \
		--origin "$(printf 'e\377\n"x\033')" "$work/one.feed"
	check "load's line shows the origin escaped, on one line" \
		grep -qxF 'default: loaded 1 entries from e\xff\x0a"x\x1b: 1 new, 0 no longer in it; store version 1; 0 interfaces in step' <<<"$out"
	expect "list of the hostile origin" 0 "$sieve" xdp list --state-dir "$work/st"
	check "list shows the origin escaped: one line, no ESC" \
		grep -qP '^default\tsource\t192\.0\.2\.7\te\\xff\\x0a"x\\x1b\tnever\t$' <<<"$out"
	expect "list -j of the hostile origin" 0 "$sieve" xdp list -j --state-dir "$work/st"
	check "list -j: valid UTF-8 JSON, the origin escaped" python3 -c '
import json, sys
d = json.loads(sys.stdin.buffer.read().decode("utf-8", "strict"))
assert d[0]["entries"][0]["origin"] == "e\ufffd\n\"x\x1b", d' <"$work/out"
	# Feeds (issue 22, items 5 and 6): the default origin is the file's base
	# name; an older sieve's path origin is taken over; stdin needs a name;
	# a feed all held by another origin, and an unblock a feed will undo, are said.
	fst="$work/fst"; mkdir -p "$work/etc"
	printf '192.0.2.1
192.0.2.2
' >"$work/etc/drop.txt"
	expect "load as a path origin (0.4's default)" 0 "$sieve" xdp load --state-dir "$fst" \
		--origin /etc/sieve/drop.txt "$work/etc/drop.txt"
	printf '192.0.2.1
' >"$work/etc/drop.txt"
	expect "refresh under the default origin" 0 "$sieve" xdp load --state-dir "$fst" \
		"$work/etc/drop.txt"
	check "it took over the path's entries and dropped the delisted one" \
		grep -qxF 'default: took over 2 entries of origin /etc/sieve/drop.txt: the same file, recorded by its path (sieve 0.4 and older)' <<<"$out"
	expect "list after the takeover" 0 "$sieve" xdp list --state-dir "$fst"
	check "one entry left, of origin drop.txt" \
		test "$(tail -n +2 <<<"$out" | cut -f3,4)" = "$(printf '192.0.2.1\tdrop.txt')"
	# A path origin that names another file, there, of the same base name is
	# another feed: not taken over (its entries would be dropped).
	mkdir -p "$work/fa" "$work/fb"
	printf '192.0.2.30\n' >"$work/fa/x.txt"; printf '192.0.2.31\n' >"$work/fb/x.txt"
	expect "load fa/x.txt as a path origin" 0 "$sieve" xdp load --state-dir "$work/fst2" \
		--origin "$work/fa/x.txt" "$work/fa/x.txt"
	expect "load fb/x.txt, another file of that base name" 0 "$sieve" xdp load \
		--state-dir "$work/fst2" "$work/fb/x.txt"
	check "another file's path origin is not taken over" test -z "$(grep 'took over' <<<"$out")"
	expect "list after loading the other file" 0 "$sieve" xdp list --state-dir "$work/fst2"
	check "both files' entries are there" test "$(tail -n +2 <<<"$out" | cut -f3 | sort | tr '\n' ' ')" = \
		"192.0.2.30 192.0.2.31 "
	expect_refused "load - without --origin" "$sieve" xdp load --state-dir "$fst" - \
		< <(printf '192.0.2.9\n')
	check "the error names --origin" grep -q -- "give --origin NAME" <<<"$err"
	expect "a refused load - changed nothing" 0 "$sieve" xdp list --state-dir "$fst"
	check "the list after it" test "$(tail -n +2 <<<"$out" | cut -f3)" = 192.0.2.1
	expect "load the same file as another origin" 0 "$sieve" xdp load --state-dir "$fst" \
		--origin other "$work/etc/drop.txt"
	check "warns: every entry held by drop.txt, in one line" test "$err" = \
		"sieve: warning: default: every entry of other is held by another origin (1 of 1 by drop.txt), which a refresh of it never drops: the same feed under another name? load it with --origin drop.txt"
	expect "block by hand" 0 "$sieve" xdp block --state-dir "$fst" 192.0.2.5
	printf '192.0.2.5\n' >"$work/hand.txt"
	expect "load a feed of a key blocked by hand" 0 "$sieve" xdp load --state-dir "$fst" \
		"$work/hand.txt"
	check "warns, with no --origin hint for cli" test "$err" = \
		"sieve: warning: default: every entry of hand.txt is held by another origin (1 of 1 by cli), which a refresh of it never drops"
	expect "unblock a feed's entry and a hand block: exit 0" 0 "$sieve" xdp unblock \
		--state-dir "$fst" 192.0.2.1 192.0.2.5
	check "unblock says the feed's entry will return, in one line" test "$err" = \
		"sieve: default: 192.0.2.1 is also listed by feed drop.txt; it will return at its next refresh; use \`sieve xdp allow\` for a lasting exception"
	xdp_json_tests
	xdp_list_tests
	xdp_why_tests
	# --fleet: refused before anything is sent (no Redis is needed to see these).
	printf '[fleet]\nredis = 127.0.0.1:1\nlists = edge\n' >"$work/fleet.conf"
	printf '[agent]\n' >"$work/nofleet.conf"
	expect_refused "block --fleet with -i" "$sieve" xdp block 192.0.2.1 --fleet -i lo \
		--config "$work/fleet.conf"
	expect_refused "block --fleet with --comment" "$sieve" xdp block 192.0.2.1 --fleet \
		--comment x --config "$work/fleet.conf"
	expect_refused "block --fleet, a file without [fleet]" "$sieve" xdp block 192.0.2.1 \
		--fleet --config "$work/nofleet.conf"
	expect_refused "block --fleet, no such file" "$sieve" xdp block 192.0.2.1 --fleet \
		--config "$work/none.conf"
	expect_refused "block --config without --fleet" "$sieve" xdp block 192.0.2.1 \
		--config "$work/fleet.conf"
	expect_refused "block --fleet, nothing listening" "$sieve" xdp block 192.0.2.1 --fleet \
		--list edge --config "$work/fleet.conf"
	check "block --fleet, nothing listening: names the server" \
		grep -q "Redis at 127.0.0.1:1: " "$work/err"
	printf '[fleet]\nredis = 127.0.0.1:1\n' >"$work/fleet.conf"
	expect_refused "block --fleet, redis without lists" "$sieve" xdp block 192.0.2.1 --fleet \
		--config "$work/fleet.conf"
fi
}
expect "filter create --help" 0 "$sieve" filter create --help
check "create --help: the usage line, then a line per option with its help" \
	grep -qE '^usage: sieve filter create \[OPTIONS\] NAME$' <<<"$out"
check "create --help: an option's value and help" \
	grep -qE '^  -n, --capacity N +keys to hold' <<<"$out"
check "create --help: the hidden alias --fpp is not listed" test "${out#*--fpp}" = "$out"
expect "sieve help filter create" 0 "$sieve" help filter create
check "sieve help CMD SUB is CMD SUB --help" grep -q '^usage: sieve filter create ' <<<"$out"

# The hidden table dump, for completion scripts: what --help lists, from the same table.
expect "__complete" 0 "$sieve" __complete
table=$out
check "__complete is not in --help" sh -c '! "$1" --help | grep -q __complete' _ "$sieve"
for cmd in "size" "filter create" "build" "snapshot query"; do
	# shellcheck disable=SC2086 # "filter create": the command's words
	check "__complete: the options of $cmd are those of its --help" test \
		"$(awk -F '\t' -v c="$cmd" '$1 == "option" && $2 == c { print $3 }' <<<"$table" |
		   { cat; echo --help; } | sort | tr '\n' ' ')" = "$(help_options $cmd)"
done
check "__complete: every subcommand of filter" test \
	"$(awk -F '\t' '$1 == "command" && $2 ~ /^filter / { print $2 }' <<<"$table" | wc -l)" -eq 11
check "__complete: no hidden alias" bash -c '! grep -q -- "--fpp" <<<"$1"' _ "$table"

# Usage errors, for each command family: one line naming the command and its --help.
usage_line() {	# usage_line "CMD WORDS": the last stderr has the usage error shape
	grep -qxE "sieve $1: .+ \(see 'sieve $1 --help'\)" <<<"$err"
}
# WORDS|ARGUMENTS|UNKNOWN OPTION|OPTION WITHOUT ITS VALUE|BAD VALUE
usage_cases=(
	"size||--frobnicate|-n|-n 0" "dedup||-z|-t|-t quotient" "measure||--json=x|-q|-q 0"
	"filter create|f -t bloom|--nope|--growth|--bits x" "filter query|f k|-x|-f|--count=1"
	"build|x.snap -t bloom|--frob|--fpr|--fpr 2" "snapshot query|x k|--frob|--file|-c=1"
)
$has_xdp && usage_cases+=("xdp plan||--frob|-n|--fpr 0" "xdp stats||--frob|--interval|--interval 0"
			  "xdp attach|lo|--frob|--mode|--mode fast" "xdp load|f|--frob|--format|--format csv"
			  "xdp attach|lo|--frob|--backend|--backend bloom"
			  "xdp attach|lo|--frob|--sample-rate|--sample-rate 100001"
			  "xdp top||--frob|--by|--by kind" "xdp top||--frob|--window|--window 0"
			  "xdp capture|-w x.pcap|--frob|-c|-c 0" "xdp set|lo sample-rate 1|--frob|-p=1|-j=1")
# Settings are checked before root: a bad one is a usage error.
if $has_xdp; then
	expect_refused "xdp set: a rate past the bound" "$sieve" xdp set lo sample-rate 100001
	check "xdp set: the bound named" usage_line "xdp set"
	expect_refused "xdp set: no such setting" "$sieve" xdp set lo sample-rated 1
	expect_refused "xdp set: on or off" "$sieve" xdp set lo sample-allowed yes
	expect_refused "xdp set: a setting without its value" "$sieve" xdp set lo sample-rate 1 sample-allowed
	expect_refused "xdp capture: -w is required" "$sieve" xdp capture -c 1
	check "xdp capture: run by sieve-agent, the usage error names sieve's command" usage_line "xdp capture"
fi
for case in "${usage_cases[@]}"; do
	# shellcheck disable=SC2034 # unknown, missing, bad: read as ${!what}
	IFS='|' read -r words args unknown missing bad <<<"$case"
	for what in unknown missing bad; do
		# shellcheck disable=SC2086 # the command's words and its arguments
		expect_refused "$words: $what option" "$sieve" $words $args ${!what}
		check "$words: $what option: the usage error names the command and its --help" \
			usage_line "$words"
	done
done
# A feed is read in full before any interface is touched: a bad line needs no root.
if $has_xdp; then
	printf '; Spamhaus DROP\r\n1.10.16.0/20 ; SBL1\r\n1.10.16.1/20 ; SBL2\r\n' >"$work/drop"
	expect_refused "xdp load --state-dir $work/refused --format drop: a bad line" "$sieve" xdp load --format drop "$work/drop"
	check "the error is FILE:LINE: entry: reason" \
		grep -qx "sieve: $work/drop:3: 1.10.16.1/20: host bits set after the prefix length" "$work/err"
	printf 'create s list:set\nadd s x\nadd t 192.0.2.0/24\n' >"$work/ipset"
	expect_refused "xdp load - of ipset (auto): an add to a set never created" \
		"$sieve" xdp load --state-dir "$work/refused" --origin ipset - <"$work/ipset"
	check "the error names line 3 of stdin, quoting it" grep -qx -- "sieve: -:3: add t 192.0.2.0/24: add to a set that was never created" "$work/err"
fi
# Issue 22 item 4: lines that said something else than what happened.
if $has_xdp; then
	printf '1.10.16.0/20 SBL1\n' >"$work/drop1"
	expect_refused "xdp load --state-dir $work/refused --format drop: a line of two words" "$sieve" xdp load --format drop "$work/drop1"
	check "the error quotes the line" \
		grep -qx "sieve: $work/drop1:1: 1.10.16.0/20 SBL1: one entry per line" "$work/err"
	for i in $(seq 1 12); do printf '192.0.2.%d\nbad%d\n' "$i" "$i"; done >"$work/bad12"
	expect "xdp load: twelve bad lines" 2 "$sieve" xdp load --state-dir "$work/st12" "$work/bad12"
	check "each of the first ten on a line, then how many more" test "$err" = "$(
		for i in $(seq 1 10); do
			echo "sieve: $work/bad12:$((2 * i)): bad$i: not an IP address, prefix, PROTO:ADDR:PORT or flow"
		done; echo "sieve: $work/bad12: ... and 2 more bad lines")"
	check "twelve bad lines: nothing loaded, nothing on stdout" test ! -s "$work/out" -a ! -e "$work/st12/sieve.db"
	expect_refused "xdp block of an IPv6 service without brackets" "$sieve" xdp block --state-dir "$work/refused" tcp:2001:db8::1:53
	check "the hint is the entry in brackets, its own port" \
		grep -qxF 'sieve: tcp:2001:db8::1:53: an IPv6 address with a port goes in brackets: [2001:db8::1]:53' "$work/err"
	expect_refused "xdp block --ttl 10: no unit" "$sieve" xdp block --state-dir "$work/refused" --ttl 10 192.0.2.1
	check "--ttl 10: says a unit is needed" grep -q "bad --ttl '10': a number with its unit" "$work/err"
	expect_refused "xdp block --state-dir $work/refused --ttl 10x" "$sieve" xdp block --ttl 10x 192.0.2.1
	# --state-dir is one option of every xdp command that opens the store: an
	# absolute path, else a usage error before anything is touched.
	for c in block list why top prune; do
		expect_refused "xdp $c --state-dir of a relative path" "$sieve" xdp $c --state-dir rel
		check "xdp $c: says the folder must be absolute" \
			grep -q "bad --state-dir 'rel': an absolute path" "$work/err"
	done
	# -i: a change goes to a list ("default" without it), not to every interface.
	expect "xdp block --help" 0 "$sieve" xdp block --help
	check "block -i: the list IFACE enforces, default --list, else default" \
		grep -qF -- '-i, --iface IFACE        the list IFACE enforces (default: --list, else "default")' <<<"$out"
	expect "xdp --help" 0 "$sieve" xdp --help
	check "xdp --help: without -i a change goes to default" grep -qF 'else "default", and' <<<"$out"
	check "xdp --help: not 'a command acts on every interface'" bash -c '! grep -q "a command acts on every interface" <<<"$1"' _ "$out"
fi
# The re-ban rule (the store's, sxdp_store_add): a re-block keeps the later
# expiry. Needs root (block does); the left time is read from list -j.
expires_in() {
	"$sieve" xdp list -j --state-dir "$work/ttl" | python3 -c '
import json, sys
e = json.load(sys.stdin)[0]["entries"][0]
print(e.get("expires_in", "never"))'
}
in_range() { [ "$1" != never ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
if $has_xdp && [ "$(id -u)" != 0 ]; then
	echo "# SKIP the re-ban rule through the CLI: sieve xdp block needs root (unit store_reban covers the store)"
elif $has_xdp; then
	b() { "$sieve" xdp block --state-dir "$work/ttl" "$@" 192.0.2.1; }
	expect "block --ttl 1h" 0 b --ttl 1h
	expect "re-block without --ttl" 0 b
	check "re-block without --ttl: nothing updated" grep -q '^default: blocked 0; store version 1;' <<<"$out"
	check "re-block without --ttl keeps the expiry (not permanent)" in_range "$(expires_in)" 3500 3600
	expect "re-block --ttl 2h" 0 b --ttl 2h
	check "re-block --ttl 2h: blocked 0, updated 1" \
		grep -q '^default: blocked 0, updated 1 (expiry, origin or comment); store version 2;' <<<"$out"
	check "a longer --ttl extends" in_range "$(expires_in)" 7100 7200
	expect "re-block --ttl 10m" 0 b --ttl 10m
	check "a shorter --ttl does not shorten" in_range "$(expires_in)" 7100 7200
	expect "re-block --ttl never" 0 b --ttl never
	check "--ttl never makes it permanent" test "$(expires_in)" = never
	expect "re-block --ttl 1h after never" 0 b --ttl 1h
	check "a --ttl does not shorten never" test "$(expires_in)" = never
	expect "unblock" 0 "$sieve" xdp unblock --state-dir "$work/ttl" 192.0.2.1
	expect "block --ttl 10m after the unblock" 0 b --ttl 10m
	check "unblock then block shortens" in_range "$(expires_in)" 500 600
	# block/unblock --origin (fail2ban's action): a source of its own. Its
	# re-bans extend; its unblock leaves what another origin holds.
	od="$work/origin"
	ob() { "$sieve" xdp block --state-dir "$od" "$@"; }
	ou() { "$sieve" xdp unblock --state-dir "$od" "$@"; }
	origin_of() {
		"$sieve" xdp list --state-dir "$od" |
			awk -F'\t' -v k="$1" '$2 !~ /^allow-/ && $3 == k { print $4 }'
	}
	expect "block 192.0.2.1 (cli)" 0 ob 192.0.2.1
	expect "block --origin fail2ban/a, one held by cli" 0 ob --origin fail2ban/a --ttl 10m 192.0.2.1 192.0.2.2
	check "block --origin: says the key cli holds is left to it" \
		grep -qxF 'sieve: default: 192.0.2.1 is held by origin cli, left to it' "$work/err"
	check "block --origin leaves cli's entry cli's" test "$(origin_of 192.0.2.1)" = cli
	check "block --origin records its own" test "$(origin_of 192.0.2.2)" = fail2ban/a
	expect "re-block --origin --ttl 1h" 0 ob --origin fail2ban/a --ttl 1h 192.0.2.2
	expect "re-block --origin --ttl 1m" 0 ob --origin fail2ban/a --ttl 1m 192.0.2.2
	check "a re-ban --origin extends, never shortens" in_range "$(
		"$sieve" xdp list -j --state-dir "$od" --origin fail2ban/a | python3 -c '
import json, sys
print(json.load(sys.stdin)[0]["entries"][0].get("expires_in", "never"))')" 3500 3600
	expect "block --origin fail2ban/b of fail2ban/a's key" 0 ob --origin fail2ban/b --ttl 1h 192.0.2.2
	check "another jail's block leaves the key to the first" test "$(origin_of 192.0.2.2)" = fail2ban/a
	expect "unblock --origin fail2ban/a of cli's key and its own: exit 1" 1 \
		ou --origin fail2ban/a 192.0.2.1 192.0.2.2
	check "unblock --origin: says cli's is left to it" \
		grep -qxF 'sieve: default: 192.0.2.1 is held by origin cli, left to it' "$work/err"
	check "unblock --origin: counts it as not its own" \
		grep -qxF 'default: 1 of the entries were not on the list as origin fail2ban/a' <<<"$out"
	check "unblock --origin keeps cli's entry" test "$(origin_of 192.0.2.1)" = cli
	check "unblock --origin removes its own" test -z "$(origin_of 192.0.2.2)"
	expect "allow 192.0.2.3" 0 "$sieve" xdp allow --state-dir "$od" 192.0.2.3
	expect "block --origin of an allowed key" 0 ob --origin fail2ban/a 192.0.2.3
	check "block --origin of an allowed key: says it is allowed" \
		grep -qxF 'sieve: default: 192.0.2.3 is allowed by origin cli, left to it' "$work/err"
	check "block --origin of an allowed key: not blocked" test -z "$(origin_of 192.0.2.3)"
	# fail2ban's actionban as fail2ban runs it: the tags substituted, %% read
	# as %, through sh. A ban past --ttl's bound (bantime.increment doubles
	# without a maxtime: 1h after 17 bans is 15 years) still bans.
	f2b_ban() {
		python3 - "$(dirname "$0")/../../dist/fail2ban/sieve-xdp.conf" "$sieve" "$od" \
			"$1" "$2" <<'PY'
import configparser, subprocess, sys
conf, sieve, state, bantime, ip = sys.argv[1:]
cp = configparser.RawConfigParser()
cp.read(conf)
cmd = cp['Definition']['actionban'].replace('%%', '%')
tags = {'_sieve_args': '--list <list> <sieve_opts>', 'list': 'default',
        'sieve_opts': '--state-dir ' + state, 'sieve': sieve, 'origin': 'fail2ban/<name>',
        'name': 't', 'bantime': bantime, 'ip': ip}
for _ in range(3):
    for k, v in tags.items():
        cmd = cmd.replace('<%s>' % k, v)
sys.exit(subprocess.run(['sh', '-c', cmd]).returncode)
PY
	}
	f2b_expires() {
		"$sieve" xdp list -j --state-dir "$od" --origin fail2ban/t | python3 -c '
import json, sys
print([e.get("expires_in", "never") for e in json.load(sys.stdin)[0]["entries"]
       if e["entry"] == sys.argv[1]][0])' "$1"
	}
	expect "fail2ban actionban, bantime 600" 0 f2b_ban 600 192.0.2.20
	check "fail2ban actionban: a 600 s TTL" in_range "$(f2b_expires 192.0.2.20)" 500 600
	expect "fail2ban actionban, bantime -1" 0 f2b_ban -1 192.0.2.21
	check "fail2ban actionban -1: never" test "$(f2b_expires 192.0.2.21)" = never
	expect "fail2ban actionban, bantime of 15 years" 0 f2b_ban 491520000 192.0.2.22
	check "fail2ban actionban of 15 years: banned" test "$(origin_of 192.0.2.22)" = fail2ban/t
	check "fail2ban actionban of 15 years: never expiring" \
		test "$(f2b_expires 192.0.2.22)" = never
	expect_refused "block --origin fleet" ob --origin fleet 192.0.2.4
	expect_refused "unblock --origin with --fleet" ou --origin fail2ban/a --fleet 192.0.2.4
	# The messages of a user without root: one line each, what to do.
	if command -v setpriv >/dev/null; then
		nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
		expect_refused "block as non-root" nobody "$sieve" xdp block --state-dir "$work/ttl" 192.0.2.2
		check "block as non-root: the command needs root" \
			grep -qxF 'sieve: sieve xdp block needs root (BPF maps and XDP)' "$work/err"
		chmod 755 "$work"
		expect_refused "list as non-root" nobody "$sieve" xdp list --state-dir "$work/ttl"
		check "list as non-root: needs root, not 'Permission denied'" \
			grep -qxF "sieve: sieve xdp list needs root: the store in $work/ttl is root's" "$work/err"
		chmod 700 "$work"
	else
		not_ok "setpriv (util-linux) runs the non-root cases"
	fi
	# status and stats: no interface has the blocklist (a namespace of their
	# own, with no pins), one code for both.
	if unshare -n true 2>/dev/null; then
		expect "status, no interface has the blocklist: exit 1" 1 unshare -n "$sieve" xdp status --state-dir "$work/ttl"
		expect "stats, no interface has the blocklist: exit 1" 1 unshare -n "$sieve" xdp stats
		check "stats: says so on one line" test "$err" = "sieve: no interface has the blocklist (sieve xdp attach IFACE)"
	else
		not_ok "unshare -n runs the status and stats cases"
	fi
fi
expect_refused "an unknown option's name in the error" "$sieve" size --frobnicate
check "the error names --frobnicate" grep -q "unknown option '--frobnicate'" <<<"$err"
expect_refused "a missing value's option in the error" "$sieve" filter create f --capacity
check "the error names --capacity" grep -q "option '--capacity' needs a value" <<<"$err"
expect_refused "a bad value: the option and what it accepts" "$sieve" size -n 12x
check "the error says what --capacity accepts" \
	grep -q "bad --capacity '12x': a positive integer" <<<"$err"
expect_refused "an option another command takes" "$sieve" dedup -q 10
expect_refused "dedup has no JSON output, so no -j" "$sieve" dedup -j

# -p (--pretty): the same JSON as -j, indented.
same_json() {	# same_json NAME CMD...: -j and -p of CMD, compared
	local name=$1 compact
	shift
	expect "$name -j" 0 "$@" -j
	compact=$out
	expect "$name -p" 0 "$@" -p
	check "$name: -j is one line, -p several" test "$(wc -l <<<"$compact")" -eq 1 -a "$(wc -l <<<"$out")" -gt 2
	check "$name: -p is valid JSON, equal to -j but for whitespace" python3 -c '
import json, sys
compact, pretty = sys.argv[1], sys.argv[2]
assert json.loads(pretty) == json.loads(compact)
assert "".join(pretty.split()) == "".join(compact.split())' "$compact" "$out"
	check "$name: --pretty is -p" cmp -s <("$@" --pretty) <(printf '%s\n' "$out")
}
same_json "size" "$sieve" size -n 1M --fpr 1%
same_json "measure" "$sieve" measure -t bloom -n 1000 -q 1000 -s 3
same_json "snapshot info" "$sieve" snapshot info "$work/bloom.snap"
check "snapshot query -p: per-key results, equal to -j" python3 -c '
import json, subprocess, sys
run = lambda flag: subprocess.run(sys.argv[1:] + [flag], capture_output=True, text=True).stdout
c, p = run("-j"), run("-p")
assert json.loads(c) == json.loads(p) and "".join(c.split()) == "".join(p.split()) and p.count("\n") > 5, (c, p)
assert [r["key"] for r in json.loads(p)["results"]] == ["key-1", "nope"], p' \
	"$sieve" snapshot query "$work/bloom.snap" key-1 nope
expect "build -p" 0 "$sieve" build "$work/p.snap" -t bloom -n 100 -s 1 -p - < <(printf 'a\nb\n')
check "build -p is valid JSON" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["keys"]==2, d' <<<"$out"
$has_xdp && same_json "xdp plan" "$sieve" xdp plan -n 1000 --fpr 1e-4

# -p was the rate: --fpr now, --fpp an alias for one release, -p RATE refused.
expect "size --fpr" 0 "$sieve" size -n 1M --fpr 0.1%
fpr_out=$out
expect "size --fpp (hidden alias)" 0 "$sieve" size -n 1M --fpp 0.1%
check "--fpp sizes as --fpr does" test "$out" = "$fpr_out"
expect "build --fpp" 0 "$sieve" build "$work/fpp.snap" -t bloom -n 1000 --fpp 0.001 -s 2 -f "$work/keys"
expect "build --fpr" 0 "$sieve" build "$work/fpr.snap" -t bloom -n 1000 --fpr 0.001 -s 2 -f "$work/keys"
check "build --fpp and --fpr make the same snapshot" cmp -s "$work/fpp.snap" "$work/fpr.snap"
if $has_xdp; then
	expect "xdp plan --fpp (hidden alias)" 0 "$sieve" xdp plan -j -n 1000 --fpp 1e-4
	check "xdp plan --fpp is --fpr" test "$out" = "$("$sieve" xdp plan -j -n 1000 --fpr 1e-4)"
	expect_refused "xdp plan -p RATE" "$sieve" xdp plan -p 1e-4
	check "xdp plan -p RATE: says to use --fpr" grep -q -- "--fpr 1e-4" <<<"$err"
	# IPv4 prefixes go to the IPv4 prefix table: no probe length, no key.
	for len in $(seq 8 31); do echo "$len.0.0.0/$len"; done > "$work/cpe4.list"
	for i in 1 2 3; do echo "198.51.100.$i"; done >> "$work/cpe4.list"
	expect "xdp plan FILE with 24 IPv4 prefix lengths" 0 "$sieve" xdp plan -j "$work/cpe4.list"
	check "xdp plan FILE: IPv4 prefixes probe nothing, only the hosts are keys" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["v4_lens"] == [] and d["list_entries"] == 27 and d["keys"] == 3, d' <<<"$out"
	# The planner on IPv6: a prefix of every length /40-/63, and hosts.
	for len in $(seq 40 63); do echo "2001:db8::/$len"; done > "$work/cpe.list"
	for i in 1 2 3; do echo "2001:db8::$i"; done >> "$work/cpe.list"
	expect "xdp plan FILE with 24 prefix lengths" 0 "$sieve" xdp plan -j "$work/cpe.list"
	check "xdp plan FILE: 8 probe lengths, the longest among them, keys after expansion" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["max_probes"] == 8 and len(d["v6_lens"]) == 8 and d["v6_lens"][0] == 63, d
assert d["v4_lens"] == [] and d["list_entries"] == 27 and d["keys"] > 27, d
assert d["entries"] == d["keys"] and abs(d["expansion"] - d["keys"] / 27) < 1e-3, d' <<<"$out"
	plan8=$out
	expect "xdp plan FILE --max-probes 16" 0 "$sieve" xdp plan -j --max-probes 16 "$work/cpe.list"
	check "xdp plan: more probes, fewer keys" python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.load(sys.stdin)
assert len(b["v6_lens"]) == 16 and b["keys"] < a["keys"], (a, b)' "$plan8" <<<"$out"
	expect_refused "xdp plan --max-probes 17" "$sieve" xdp plan --max-probes 17 "$work/cpe.list"
	expect "xdp plan: both backends" 0 "$sieve" xdp plan -j -n 10000000
	check "xdp plan: the blocked backend beside the bloom map, any number of blocks" python3 -c '
import json, sys
d = json.load(sys.stdin)
b = d["blocked"]
assert b["bits"] == 512 * b["max_entries"] and b["bytes"] * 8 == b["bits"], d
assert b["max_entries"] & (b["max_entries"] - 1) and 1 <= b["nr_hashes"] <= 32, d
assert b["expected_fpr"] <= d["target_fpr"] and d["expected_fpr"] <= d["target_fpr"], d
assert b["bytes"] < d["bytes"], d' <<<"$out"
	expect "xdp plan: text" 0 "$sieve" xdp plan -n 10000000
	check "xdp plan: a line for each backend" grep -qE "^bloom-map: .*blocked:|^blocked: " <<<"$out"
	printf '::/1\n2001:db8::/127\n' > "$work/cpe-far.list"
	expect_refused "xdp plan: one probe for /1 and /127" "$sieve" xdp plan --max-probes 1 "$work/cpe-far.list"
	check "xdp plan: the refusal says to allow more probes" grep -q -- "--max-probes" <<<"$err"
fi
for rate in 0.01 1% 1e-3; do
	expect_refused "size -p $rate (the old rate option)" "$sieve" size -p "$rate"
	check "size -p $rate: says -p is --pretty and the rate is --fpr" \
		grep -q -- "-p is --pretty now: give the false-positive rate as --fpr $rate" <<<"$err"
done
expect_refused "filter create -p RATE" "$sieve" filter create f -t bloom -n 1k -p 1%
check "filter create -p RATE: says --fpr" grep -q -- "--fpr 1%" <<<"$err"
expect_refused "build -p RATE" "$sieve" build "$work/x.snap" -t bloom -n 10 -p 0.01 -f "$work/keys"
expect "size -p alone is pretty JSON" 0 "$sieve" size -t bloom -p
check "size -p alone: indented JSON" python3 -c 'import json,sys; s=sys.stdin.read(); assert json.loads(s)[0]["nhashes"]==7 and "\n  " in s' <<<"$out"

# dedup over libsieve: the empty line is a line like any other.
expect "dedup with empty lines" 0 "$sieve" dedup - < <(printf 'a\n\nb\n\na\n')
check "dedup prints the empty line once" test "$out" = $'a\n\nb'
expect_refused "dedup of a line longer than a key" "$sieve" dedup - < <(head -c 5000 /dev/zero | tr '\0' a; echo)
check "dedup of a long line: names the line" grep -q "line 1: longer than 4096 bytes" <<<"$err"

# sieve agent --check: the settings of sieve.conf, and each kind of bad one as FILE:LINE.
printf '; sieve.conf\n[agent]\nstate_dir = /srv/sieve\nexpire_interval = 2m\n[metrics]\nlisten = [::1]:9100\nrefresh_interval = 3s\n[filters]\npersistent = seen, urls\n  ips\npersistent = urls tmp.1\nsave_interval = 0\n' >"$work/good.conf"
# Each value with where it came from, in the file's own units, by section.
g=$work/good.conf
expect "agent --check a good file" 0 env -u SIEVE_STATE_DIR -u SIEVE_CONFIG "$sieve" agent --check --config "$g"
check "agent --check: every setting as written, its origin, by section" test "$out" = "\
; file $g (command line --config)
[agent]
state_dir = /srv/sieve  ; file $g:3 [agent]
expire_interval = 2m  ; file $g:4 [agent]

[store]
sync = full  ; default

[metrics]
listen = [::1]:9100  ; file $g:6 [metrics]
refresh_interval = 3s  ; file $g:7 [metrics]

[filters]
persistent = seen urls ips tmp.1  ; file $g:9,10,11 [filters]
save_interval = 0  ; file $g:12 [filters]

[fleet]
redis =  ; default (none)
user =  ; default (none)
password_file =  ; default (none)
lists =  ; default (none)
retry_max = 30s  ; default
stream_maxlen = 1000000  ; default
broadest_block = /8 /12  ; default
broadest_allow = /16 /32  ; default
never_block =  ; default (none)

[crowdsec]
lapi_url =  ; default (none)
api_key_file =  ; default (none)
lists =  ; default (none)
update_frequency = 10s  ; default
scopes = Ip Range  ; default
types = ban  ; default
origins =  ; default (none)"
expect "agent --check --state-dir over the file" 0 "$sieve" agent --check --config "$g" --state-dir /tmp/st
check "agent --check: --state-dir wins, over the file's line" \
	grep -qxF "state_dir = /tmp/st  ; command line --state-dir, over file $g:3 [agent]" <<<"$out"
bad_conf() {	# bad_conf LINE CONTENT WANT
	printf '%b' "$2" >"$work/bad.conf"
	expect_refused "agent: $3" "$sieve" agent --check --config "$work/bad.conf"
	check "agent: $3 at $work/bad.conf:$1" grep -qF "$work/bad.conf:$1: $3" <<<"$err"
}
bad_conf 2 '[agent]\n[metric]\n' "unknown section [metric]"
bad_conf 3 '[metrics]\nlisten = off\nport = 80\n' "unknown key 'port' in [metrics]"
bad_conf 1 'expire_interval = 1s\n' "expire_interval: a key before any [section]"
bad_conf 2 '[agent]\nexpire_interval = 61m\n' "expire_interval = 61m: out of range"
bad_conf 2 '[agent]\nexpire_interval = 1d\n' "expire_interval = 1d: not a duration"
bad_conf 2 '[filters]\nsave_interval = -5m\n' "save_interval = -5m: not a duration"
bad_conf 2 '[agent]\nstate_dir = var/lib\n' "state_dir = var/lib: not an absolute path"
bad_conf 2 '[store]\nsync = off\n' "sync = off: not full or normal"
bad_conf 3 '[store]\nsync = normal\nfsync = full\n' "unknown key 'fsync' in [store]"
# [store] sync: the file's value, SIEVE_STORE_SYNC over it, each said so.
printf '[store]\nsync = normal\n' >"$work/sync.conf"
expect "agent --check [store] sync = normal" 0 env -u SIEVE_STORE_SYNC \
	"$sieve" agent --check --config "$work/sync.conf"
check "agent --check: sync from the file" \
	grep -qxF "sync = normal  ; file $work/sync.conf:2 [store]" <<<"$out"
expect "agent --check SIEVE_STORE_SYNC=full over the file" 0 env SIEVE_STORE_SYNC=full \
	"$sieve" agent --check --config "$work/sync.conf"
check "agent --check: SIEVE_STORE_SYNC wins, over the file's line" \
	grep -qxF "sync = full  ; environment SIEVE_STORE_SYNC, over file $work/sync.conf:2 [store]" \
	<<<"$out"
expect_refused "agent: SIEVE_STORE_SYNC=fast" env SIEVE_STORE_SYNC=fast \
	"$sieve" agent --check --config /dev/null
check "agent: SIEVE_STORE_SYNC=fast is named" \
	grep -qF "environment SIEVE_STORE_SYNC: sync = fast: not full or normal" <<<"$err"
bad_conf 2 '[metrics]\nlisten = 127.0.0.1\n' "listen = 127.0.0.1: not ADDR:PORT"
bad_conf 2 '[metrics]\nlisten = 127.0.0.1:65536\n' "listen = 127.0.0.1:65536: not ADDR:PORT"
bad_conf 2 '[metrics]\nlisten = [::1]\n' "listen = [::1]: not ADDR:PORT"
bad_conf 2 '[metrics]\nrefresh_interval = 0\n' "refresh_interval = 0: out of range"
bad_conf 2 '[metrics]\nrefresh_interval = 2h\n' "refresh_interval = 2h: out of range"
bad_conf 2 '[filters]\npersistent = a-filter-name-of-thirty-two-chars\n' \
	"persistent: 'a-filter-name-of-thirty-two-chars' is not a filter name"
bad_conf 4 "[filters]\npersistent = $(seq -f 'a%g' 1 30 | tr '\n' ' ')\npersistent = $(seq -f 'b%g' 1 30 | tr '\n' ' ')\npersistent = c1 c2 c3 c4 c5\n" \
	"persistent: more than 64 filters"
bad_conf 3 '[agent]\n\nthis is not a setting\n' "not KEY = VALUE, [SECTION] or a comment"
bad_conf 2 "[agent]\nstate_dir = /$(head -c 250 /dev/zero | tr '\0' a)\n" "line longer than 198 characters"
# [fleet]: the Redis address, the password file's mode, the lists.
printf 's3cret\n' >"$work/pass" && chmod 600 "$work/pass"
printf '[fleet]\nredis = [::1]:6380\nuser = sieve\npassword_file = %s\nlists = edge, core\n  edge\nretry_max = 5s\nstream_maxlen = 5000\n' "$work/pass" >"$work/fleet.conf"
f=$work/fleet.conf
expect "agent --check a [fleet] section" 0 "$sieve" agent --check --config "$f"
check "agent --check: the [fleet] settings as given" grep -qzF "\
redis = [::1]:6380  ; file $f:2 [fleet]
user = sieve  ; file $f:3 [fleet]
password_file = $work/pass  ; file $f:4 [fleet]
lists = edge core  ; file $f:5,6 [fleet]
retry_max = 5s  ; file $f:7 [fleet]
stream_maxlen = 5000  ; file $f:8 [fleet]" <<<"$out"
check "agent --check: the [fleet] limits' defaults" grep -qzF "\
broadest_block = /8 /12  ; default
broadest_allow = /16 /32  ; default
never_block =  ; default (none)
" <<<"$out"
printf 'broadest_block = 16 /48\nbroadest_allow = /24 64\nnever_block = 192.0.2.0/24, 2001:db8::/32\n' >>"$f"
expect "agent --check [fleet] limits" 0 "$sieve" agent --check --config "$f"
check "agent --check: the [fleet] limits as written" grep -qzF "\
broadest_block = 16 /48  ; file $f:9 [fleet]
broadest_allow = /24 64  ; file $f:10 [fleet]
never_block = 192.0.2.0/24 2001:db8::/32  ; file $f:11 [fleet]
" <<<"$out"
bad_conf 2 '[fleet]\nbroadest_allow = /0.5 /32\n' "broadest_allow = /0.5 /32: not two prefix lengths"
bad_conf 2 '[fleet]\nnever_block = 192.0.2.1/24\n' "never_block: '192.0.2.1/24' is not an address or a prefix"
bad_conf 2 '[fleet]\nredis = localhost\nlists = a\n' "redis = localhost: not HOST:PORT"
bad_conf 2 '[fleet]\nredis = unix:relative.sock\nlists = a\n' "redis = unix:relative.sock: not HOST:PORT"
bad_conf 3 '[fleet]\nredis = h:1\nlists = ok bad/name\n' "lists: 'bad/name' is not a list name"
bad_conf 3 '[fleet]\nredis = h:1\nlist = a\n' "unknown key 'list' in [fleet]"
bad_conf 2 '[fleet]\nstream_maxlen = 10\n' "stream_maxlen = 10: not a number from 1000"
chmod 644 "$work/pass"
bad_conf 3 "[fleet]\nredis = h:1\npassword_file = $work/pass\nlists = a\n" \
	"password_file = $work/pass: mode 0644, must be 0600 or stricter"
printf '[fleet]\nredis = h:1\n' >"$work/bad.conf"
expect_refused "agent: [fleet] redis without lists" "$sieve" agent --check --config "$work/bad.conf"
check "agent: [fleet] redis without lists: says so" grep -qF "redis is set but lists is not" <<<"$err"
# [feed NAME] and [attach IFACE] (issue 25): --check prints them with their defaults.
printf '[feed drop]\nurl = https://feeds.example.org/drop.txt\nmax_shrink = 12.5%%\n[attach eth9]\nmode = generic\n' \
	>"$work/feeds.conf"
expect "agent --check: [feed NAME] and [attach IFACE]" 0 "$sieve" agent --check --config "$work/feeds.conf"
check "agent --check: the feed, its line and its defaults" sh -c 'grep -A 8 -xF "[feed drop]  ; file $1:1" |
	tr "\n" "|" | grep -qF "url = https://feeds.example.org/drop.txt|format = auto|list = default|interval = 3600s|timeout = 60s|min_entries = 1|max_shrink = 12.5%|"' \
	sh "$work/feeds.conf" <<<"$out"
check "agent --check: the interface, its list and mode" sh -c 'grep -A 3 -xF "[attach eth9]  ; file $1:4" |
	tr "\n" "|" | grep -qF "list = default|backend = bloom-map|mode = generic|"' sh "$work/feeds.conf" <<<"$out"
bad_conf 1 '[feed x]\nlist = a\n' "[feed x] has no url"
expect_refused "agent --config of a missing file" "$sieve" agent --check --config "$work/none.conf"
check "agent: a missing file is named" grep -qF "$work/none.conf: No such file or directory" <<<"$err"

# One order of sources for sieve and the agent (issue 22, item 3): the
# command line, then the environment, then sieve.conf, then the default.
# The packaged file sets state_dir: SIEVE_STATE_DIR must still win, for
# both, so that the CLI changes the store the agent restores.
pkg=$top/dist/sieve.conf
es=$work/order/env-st fs=$work/order/file-st cs=$work/order/cl-st
mkdir -p "$work/order"
printf '[agent]\nstate_dir = %s\n' "$fs" >"$work/order/st.conf"
expect "agent --check: the packaged file and SIEVE_STATE_DIR" 0 \
	env -u SIEVE_CONFIG SIEVE_STATE_DIR="$es" "$sieve" agent --check --config "$pkg"
check "agent: SIEVE_STATE_DIR over the packaged file's state_dir" \
	grep -qxE "state_dir = $es  ; environment SIEVE_STATE_DIR, over file $pkg:[0-9]+ \[agent\]" <<<"$out"
expect "agent --check: SIEVE_CONFIG names the file" 0 \
	env -u SIEVE_STATE_DIR SIEVE_CONFIG="$work/order/st.conf" "$sieve" agent --check
check "agent: SIEVE_CONFIG's file, said so" \
	grep -qxF "; file $work/order/st.conf (environment SIEVE_CONFIG)" <<<"$out"
check "agent: the file's state_dir over the default" \
	grep -qxF "state_dir = $fs  ; file $work/order/st.conf:2 [agent]" <<<"$out"
expect "agent --check: --config over SIEVE_CONFIG" 0 env -u SIEVE_STATE_DIR \
	SIEVE_CONFIG="$work/order/none.conf" "$sieve" agent --check --config "$work/order/st.conf"
expect_refused "agent: SIEVE_CONFIG of a missing file" \
	env SIEVE_CONFIG="$work/order/none.conf" "$sieve" agent --check
expect "agent --check: --state-dir over SIEVE_STATE_DIR and the file" 0 \
	env SIEVE_STATE_DIR="$es" "$sieve" agent --check --config "$pkg" --state-dir "$cs"
check "agent: --state-dir wins, said so" \
	grep -qxE "state_dir = $cs  ; command line --state-dir, over file $pkg:[0-9]+ \[agent\]" <<<"$out"
expect_refused "agent: a relative SIEVE_STATE_DIR" \
	env SIEVE_STATE_DIR=var/lib "$sieve" agent --check --config /dev/null
check "agent: a relative SIEVE_STATE_DIR is named" \
	grep -qF "environment SIEVE_STATE_DIR: state_dir = var/lib: not an absolute path" <<<"$err"
if $has_xdp; then
	expect "xdp list: the packaged file and SIEVE_STATE_DIR" 0 \
		env SIEVE_CONFIG="$pkg" SIEVE_STATE_DIR="$es" "$sieve" xdp list
	check "xdp: the store of SIEVE_STATE_DIR, the agent's" test -f "$es/sieve.db"
	expect "xdp list: SIEVE_CONFIG's state_dir" 0 \
		env -u SIEVE_STATE_DIR SIEVE_CONFIG="$work/order/st.conf" "$sieve" xdp list
	check "xdp: the file's state_dir, the agent's" test -f "$fs/sieve.db"
	rm -rf "$es"
	expect "xdp list: --state-dir over SIEVE_STATE_DIR and the file" 0 \
		env SIEVE_CONFIG="$work/order/st.conf" SIEVE_STATE_DIR="$es" "$sieve" xdp list \
		--state-dir "$cs"
	check "xdp: the store of --state-dir, no other" \
		sh -c "test -f '$cs/sieve.db' && ! test -e '$es'"
	# From a folder of the test's: a build that took it would make var/lib there.
	expect_refused "xdp: a relative SIEVE_STATE_DIR" \
		env -C "$work/order" SIEVE_STATE_DIR=var/lib "$(realpath "$sieve")" xdp list
	check "xdp: a relative SIEVE_STATE_DIR is named" \
		grep -qF "environment SIEVE_STATE_DIR: state_dir = var/lib: not an absolute path" <<<"$err"
	# [store] sync, read by every command that opens the store: a bad one
	# is refused before the store is made; a good one opens it.
	expect_refused "xdp: a bad SIEVE_STORE_SYNC" \
		env SIEVE_STATE_DIR="$es" SIEVE_STORE_SYNC=off "$sieve" xdp list
	check "xdp: a bad SIEVE_STORE_SYNC is named, no store made" \
		sh -c "grep -qF 'environment SIEVE_STORE_SYNC: sync = off: not full or normal' \
			'$work/err' && ! test -e '$es'"
	printf '[store]\nsync = fast\n' >"$work/order/sync-bad.conf"
	expect_refused "xdp: a bad [store] sync in the file, SIEVE_STATE_DIR given" \
		env -u SIEVE_STORE_SYNC SIEVE_STATE_DIR="$es" SIEVE_CONFIG="$work/order/sync-bad.conf" \
		"$sieve" xdp list
	check "xdp: the file's bad sync is named" \
		grep -qF "$work/order/sync-bad.conf:2: sync = fast: not full or normal" <<<"$err"
	expect "xdp list: [store] sync = normal" 0 \
		env SIEVE_STATE_DIR="$es" SIEVE_CONFIG="$work/sync.conf" "$sieve" xdp list
	check "xdp: sync = normal opens the store" test -f "$es/sieve.db"
	rm -rf "$es"
	printf '[agent]\n[bogus]\n' >"$work/order/bad.conf"
	expect_refused "xdp: a bad file is an error, not another store" \
		env -u SIEVE_STATE_DIR SIEVE_CONFIG="$work/order/bad.conf" "$sieve" xdp list
	check "xdp: the bad file's line" grep -qF "$work/order/bad.conf:2: unknown section [bogus]" <<<"$err"
fi

# The packaged sieve.conf passes, and so do its [fleet] and [crowdsec]
# examples once uncommented (a password and a key file of ours in place
# of the examples').
expect "agent --check: the packaged sieve.conf" 0 "$sieve" agent --check --config "$pkg"
chmod 600 "$work/pass"
sed -e '/^#\[fleet\]/,$ s/^#\([a-z_[]\)/\1/' -e "s|^password_file = .*|password_file = $work/pass|" \
	-e "s|^api_key_file = .*|api_key_file = $work/pass|" "$pkg" >"$work/order/fleet.conf"
check "the packaged [fleet] example has its section" grep -qx '\[fleet\]' "$work/order/fleet.conf"
expect "agent --check: the packaged [fleet] example, uncommented" 0 \
	"$sieve" agent --check --config "$work/order/fleet.conf"
for key in redis user password_file lists retry_max stream_maxlen broadest_block broadest_allow \
	never_block; do
	check "the [fleet] example sets $key" grep -qE "^$key = .*; file " <<<"$out"
done
check "the packaged [crowdsec] example has its section" grep -qx '\[crowdsec\]' "$work/order/fleet.conf"
for key in lapi_url api_key_file lists update_frequency scopes types origins; do
	check "the [crowdsec] example sets $key" grep -qE "^$key = .*; file .*\[crowdsec\]" <<<"$out"
done

finish "$result_file"
