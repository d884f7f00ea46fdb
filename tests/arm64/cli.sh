# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "cli" of the arm64 smoke (make test-arm64; sourced by the VM's
# /init with sieve.ko loaded): the sieve CLI, built for arm64, driving
# /dev/sieve of the arm64 module through each kind of call it makes (create,
# batch add, query, snapshot export and import, delete, destroy). Prints KTAP.

# cli_case WANT_STATUS DESCRIPTION COMMAND...: passes if COMMAND exits WANT_STATUS.
cli_case() {
	local want=$1 name=$2 rc=0
	shift 2

	"$@" >/tmp/cli.out 2>&1 || rc=$?
	if [ "$rc" = "$want" ]; then
		ktap_result OK "$name"
	else
		ktap_result FAIL "$name (exit $rc, want $want: $(head -c 200 /tmp/cli.out))"
	fi
}

i=0
while [ $i -lt 5000 ]; do echo "user-$i"; i=$((i + 1)); done >/tmp/users.txt

cli_case 0 "create a bloom filter" sieve filter create users --type bloom --capacity 100000 --fpr 0.01
cli_case 0 "add 5000 keys from a file" sieve filter add users -f /tmp/users.txt
cli_case 0 "query stored keys" sieve filter query users user-0 user-2500 user-4999
cli_case 1 "query a key never added: absent" sieve filter query users mallory
cli_case 0 "export a snapshot" sieve filter export users /tmp/users.snap
cli_case 0 "import it under a new name" sieve filter import users-copy /tmp/users.snap
cli_case 0 "the copy holds the keys" sieve filter query users-copy user-42 user-4321
cli_case 0 "create a cuckoo filter" sieve filter create sessions --type cuckoo --capacity 1000 --fpr 0.001
cli_case 0 "add to it" sieve filter add sessions s-1 s-2 s-3
cli_case 0 "delete from it" sieve filter del sessions s-2
cli_case 1 "a deleted key is absent" sieve filter query sessions s-2
cli_case 0 "the others stay" sieve filter query sessions s-1 s-3
cli_case 0 "/proc/sieve lists the filters" grep -q sessions /proc/sieve
for f in users users-copy sessions; do
	cli_case 0 "destroy $f" sieve filter destroy "$f"
done
cli_case 2 "a destroyed filter is gone (exit 2: no such filter)" sieve filter query users user-0

ktap_print
true
