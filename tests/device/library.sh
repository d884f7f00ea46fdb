# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "library" (sourced by the VM's /init): /dev/sieve through
# libsieve (sieve_lib_test; sieve_layers_test, the growth sequences on the
# device beside local filters; each its own KTAP report) and through the CLI
# (the statically linked `sieve`, $(CLI_STATIC)), every filter command on
# every type. The CLI checks are one KTAP report: each runs one command and
# judges its exit status (0 done / yes, 1 no, 2 error), and for errors that
# it printed exactly one line on stderr.

ktap_run sieve_lib_test
ktap_run sieve_layers_test
# The CLI's part, as one case (make test-vm T=library_cli).
ktap_wants library_cli || return 0

# shellcheck disable=SC2034 # read by ktap_result (tests/vm/init.sh)
ktap_prefix="cli: "
SIEVE=sieve

# A result; a failure shows the last command's output on the console.
cli_record() {
	ktap_result "$@"
	if [ "$1" != OK ]; then
		echo "sieve-vm: cli: FAILED: $2" >&2
		sed 's/^/sieve-vm:   out: /' /tmp/cli.out >&2
		sed 's/^/sieve-vm:   err: /' /tmp/cli.err >&2
	fi
}

# cli_exit WANT DESCRIPTION ARGS...: runs sieve ARGS, wants exit WANT; an
# error (2) must say so in one line on stderr, a success in none.
cli_exit() {
	local want=$1 desc=$2 rc lines
	shift 2
	"$SIEVE" "$@" >/tmp/cli.out 2>/tmp/cli.err
	rc=$?
	lines=$(wc -l </tmp/cli.err)
	if [ "$rc" = "$want" ] && { [ "$want" != 2 ] || [ "$lines" = 1 ]; } &&
	   { [ "$want" = 2 ] || [ "$lines" = 0 ]; }; then
		cli_record OK "$desc (exit $rc)"
	else
		cli_record FAIL "$desc (exit $rc, want $want; $lines lines on stderr)"
	fi
}

# cli_out PATTERN DESCRIPTION: the last command's stdout matches PATTERN.
cli_out() {
	if grep -q -E -- "$1" /tmp/cli.out; then
		cli_record OK "$2"
	else
		cli_record FAIL "$2 (stdout lacks /$1/)"
	fi
}

i=0
while [ $i -lt 1000 ]; do echo "clikey-$i"; i=$((i + 1)); done >/tmp/cli.keys
i=0
while [ $i -lt 3000 ]; do echo "cliscale-$i"; i=$((i + 1)); done >/tmp/cli.scale

for t in bloom blocked cuckoo; do
	f=cli.$t
	cli_exit 0 "$t: filter create" filter create $f --type $t --capacity 2000 --seed 7
	cli_exit 2 "$t: filter create of a taken name" filter create $f --type $t --capacity 10
	cli_exit 0 "$t: filter list" filter list
	cli_out "$f" "$t: filter list shows it"
	cli_exit 0 "$t: filter list -j" filter list -j
	cli_out "\"$f\"" "$t: filter list -j shows it"
	cli_exit 0 "$t: filter add of three keys" filter add $f one two three
	cli_exit 0 "$t: filter add -f of 1000 keys" filter add $f -f /tmp/cli.keys
	cli_exit 0 "$t: filter add from stdin" filter add $f - </tmp/cli.keys
	cli_exit 0 "$t: filter query of present keys" filter query $f one two three
	cli_out "present one" "$t: filter query says 'present one'"
	cli_exit 1 "$t: filter query of an absent key" filter query $f nowhere-to-be-found
	cli_out "absent nowhere-to-be-found" "$t: filter query says 'absent KEY'"
	cli_exit 0 "$t: filter query -c -f of 1000 present keys" filter query $f -c -f /tmp/cli.keys
	cli_exit 0 "$t: filter info" filter info $f
	cli_exit 0 "$t: filter info -j" filter info $f -j
	cli_out '"inserted"' "$t: filter info -j has the counters"
	cli_exit 0 "$t: filter info -p" filter info $f -p
	cli_out '^  "inserted": [0-9]+,$' "$t: filter info -p: one member a line, indented"
	cli_exit 1 "$t: filter query -p" filter query $f -p one nowhere-to-be-found
	cli_out '^      "key": "nowhere-to-be-found",$' "$t: filter query -p: each key, indented"
	cli_exit 0 "$t: filter create --fpr" filter create $f.fpr --type $t --capacity 1000 --fpr 0.001
	cli_exit 0 "$t: filter create --fpp (the old name, hidden)" \
		filter create $f.fpp --type $t --capacity 1000 --fpp 0.001
	cli_exit 2 "$t: filter create -p RATE (now --fpr)" \
		filter create $f.p --type $t --capacity 1000 -p 0.001
	cli_exit 0 "$t: destroy the --fpr filter" filter destroy $f.fpr
	cli_exit 0 "$t: destroy the --fpp filter" filter destroy $f.fpp
	cli_exit 2 "$t: -p RATE made no filter" filter info $f.p
	if [ $t = cuckoo ]; then
		cli_exit 0 "$t: filter del of a present key" filter del $f one
		cli_exit 1 "$t: filter del of an absent key" filter del $f nowhere-to-be-found
	else
		cli_exit 2 "$t: filter del refused by a Bloom type" filter del $f one
	fi
	cli_exit 0 "$t: filter export" filter export $f /tmp/cli.$t.snap
	cli_exit 0 "$t: filter import" filter import $f.copy /tmp/cli.$t.snap
	cli_exit 0 "$t: the imported copy holds the keys" filter query $f.copy -c -f /tmp/cli.keys
	"$SIEVE" filter info $f -j | grep -o '"inserted": *[0-9]*' >/tmp/cli.ins1
	"$SIEVE" filter info $f.copy -j | grep -o '"inserted": *[0-9]*' >/tmp/cli.ins2
	if [ -s /tmp/cli.ins1 ] && cmp -s /tmp/cli.ins1 /tmp/cli.ins2; then
		cli_record OK "$t: the copy carries the counters ($(cat /tmp/cli.ins1))"
	else
		cli_record FAIL "$t: the copy carries the counters ($(cat /tmp/cli.ins1) vs $(cat /tmp/cli.ins2))"
	fi
	cli_exit 0 "$t: filter export to stdout" filter export $f -
	cli_exit 0 "$t: filter destroy of the copy" filter destroy $f.copy
	cli_exit 0 "$t: filter clear" filter clear $f
	cli_exit 1 "$t: after clear the keys are gone" filter query $f two
	cli_exit 0 "$t: filter destroy" filter destroy $f
	cli_exit 2 "$t: filter info of a destroyed filter" filter info $f

	cli_exit 0 "$t: scalable create" filter create $f.sc --type $t --capacity 300 --scalable
	cli_exit 0 "$t: scalable: 3000 keys" filter add $f.sc -f /tmp/cli.scale
	cli_exit 0 "$t: scalable: none lost" filter query $f.sc -c -f /tmp/cli.scale
	cli_exit 0 "$t: scalable info -j" filter info $f.sc -j
	cli_out '"layers": *([3-9]|[1-3][0-9])' "$t: scalable grew to 3 layers or more"
	cli_exit 0 "$t: scalable destroy" filter destroy $f.sc

	cli_exit 0 "$t: sieve build of a snapshot offline" build /tmp/cli.$t.built --type $t -f /tmp/cli.keys
	cli_exit 0 "$t: filter import of the built snapshot" filter import $f.built /tmp/cli.$t.built
	cli_exit 0 "$t: the built filter holds the keys" filter query $f.built -c -f /tmp/cli.keys
	cli_exit 0 "$t: destroy the built filter" filter destroy $f.built
	rm -f /tmp/cli.$t.snap /tmp/cli.$t.built
done

cli_exit 0 "merge: create dst" filter create cli.mdst --type bloom --capacity 1000 --seed 9
cli_exit 0 "merge: create src" filter create cli.msrc --type bloom --capacity 1000 --seed 9
cli_exit 0 "merge: add to src" filter add cli.msrc alpha beta
cli_exit 0 "filter merge" filter merge cli.mdst cli.msrc
cli_exit 0 "merge: dst holds src's keys" filter query cli.mdst alpha beta
cli_exit 0 "merge: create a cuckoo filter" filter create cli.mcu --type cuckoo --capacity 1000 --seed 9
cli_exit 2 "filter merge of a cuckoo filter" filter merge cli.mdst cli.mcu
cli_exit 0 "merge: destroy" filter destroy cli.mdst
cli_exit 0 "merge: destroy" filter destroy cli.msrc
cli_exit 0 "merge: destroy" filter destroy cli.mcu

cli_exit 2 "filter create with a bad name" filter create 'bad name' --type bloom --capacity 10
cli_exit 2 "filter create --ephemeral refused" filter create cli.eph --type bloom --capacity 10 --ephemeral
cli_exit 2 "filter query of a filter that does not exist" filter query no.such.filter k
cli_exit 2 "filter import of a corrupted snapshot" filter import cli.bad /tmp/cli.keys
SIEVE_DEVICE=/nonexistent "$SIEVE" filter list >/tmp/cli.out 2>/tmp/cli.err
rc=$?
if [ "$rc" = 2 ] && [ "$(wc -l </tmp/cli.err)" = 1 ]; then
	cli_record OK "SIEVE_DEVICE=/nonexistent: exit 2, one line on stderr"
else
	cli_record FAIL "SIEVE_DEVICE=/nonexistent: exit $rc, want 2 and one line on stderr"
fi
rm -f /tmp/cli.keys /tmp/cli.scale /tmp/cli.out /tmp/cli.err /tmp/cli.ins1 /tmp/cli.ins2

ktap_print
true
