#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh in the VM, which dash's dialect matches
#
# `make demo`, the device part: runs inside the VM (as /demo.sh, busybox
# sh) with sieve.ko loaded, and shows a short session of the CLI driving
# /dev/sieve. Every command is echoed before it runs; the session stops at
# the first command that fails unexpectedly.
set -e

step() {
	echo
	echo "# $1"
}

run() {
	echo "\$ $*"
	"$@"
}

# A command that is expected to exit with status $1 (query: 1 = absent).
run_expect() {
	local want=$1 rc=0
	shift
	echo "\$ $*"
	"$@" || rc=$?
	echo "(exit status $rc)"
	[ "$rc" = "$want" ]
}

echo "=== sieve: /dev/sieve, driven by the sieve CLI inside a VM ==="
echo "(kernel $(uname -r); sieve.ko loaded, device node:"
ls -l /dev/sieve
echo ")"

step "A Bloom filter for 100000 keys at a 1% false-positive rate"
run sieve filter create users --type bloom --capacity 100000 --fpr 0.01

step "Bulk add 5000 keys from a file (one batch ioctl carries up to 65536 keys)"
i=0
while [ $i -lt 5000 ]; do echo "user-$i"; i=$((i + 1)); done >/tmp/users.txt
run sieve filter add users -f /tmp/users.txt

step "Query: two stored keys and one never added (exit 1: not present)"
run_expect 1 sieve filter query users user-7 user-4999 mallory

step "Stats"
run sieve filter info users

step "Export a snapshot, import it under a new name, query the copy"
run sieve filter export users /tmp/users.snap
ls -l /tmp/users.snap
run sieve filter import users-copy /tmp/users.snap
run sieve filter query users-copy user-42

step "A cuckoo filter can delete"
run sieve filter create sessions --type cuckoo --capacity 1000 --fpr 0.001
run sieve filter add sessions s-1 s-2 s-3
run sieve filter del sessions s-2
run_expect 1 sieve filter query sessions s-1 s-2

step "What an operator sees"
run sieve filter list
run cat /proc/sieve

step "Destroy everything"
run sieve filter destroy users
run sieve filter destroy users-copy
run sieve filter destroy sessions
run sieve filter list
