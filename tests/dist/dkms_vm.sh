# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "dkms" (sourced by the VM's /init, which has loaded
# $SIEVE_MODDIR/sieve.ko: here the module DKMS built, make test-dkms): a
# short smoke through the CLI, one KTAP report. The full device suites run
# on the in-tree build (make test-vm); this shows the DKMS build is the
# same working module.

dkms_n=0
dkms_ktap=""

# dkms_step DESCRIPTION COMMAND...: COMMAND must exit 0.
dkms_step() {
	local desc=$1
	shift
	dkms_n=$((dkms_n + 1))
	if "$@" >/tmp/dkms.out 2>&1; then
		dkms_ktap="${dkms_ktap}ok $dkms_n $desc
"
	else
		dkms_ktap="${dkms_ktap}not ok $dkms_n $desc
"
		sed 's/^/sieve-vm: dkms: /' /tmp/dkms.out >&2
	fi
}

dkms_step "sieve.ko is loaded" test -d /sys/module/sieve
dkms_step "its vermagic is this kernel's" grep -q "vermagic=$(uname -r) " "$SIEVE_MODDIR/sieve.ko"
dkms_step "/dev/sieve is there" test -c /dev/sieve
dkms_step "filter create" sieve filter create dkms-smoke --type bloom --capacity 1000 --seed 7
dkms_step "filter add" sieve filter add dkms-smoke one two three
dkms_step "filter query finds the keys" sh -c 'sieve filter query dkms-smoke one two three | grep -c "^present" | grep -qx 3'
dkms_step "filter query misses another" sh -c 'sieve filter query dkms-smoke four; [ $? -eq 1 ]'
dkms_step "filter list shows it" sh -c 'sieve filter list | grep -q dkms-smoke'
dkms_step "filter destroy" sieve filter destroy dkms-smoke

printf 'KTAP version 1\n1..%d\n%s' "$dkms_n" "$dkms_ktap"
