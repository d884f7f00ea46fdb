# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "dkms" (sourced by the VM's /init, which has loaded
# $SIEVE_MODDIR/sieve.ko: here the module DKMS built, make test-dkms): a
# short smoke through the CLI, one KTAP report. The full device suites run
# on the in-tree build (make test-vm); this shows the DKMS build is the
# same working module.


# ktap_step DESCRIPTION COMMAND...: COMMAND must exit 0.
ktap_step "sieve.ko is loaded" test -d /sys/module/sieve
ktap_step "its vermagic is this kernel's" grep -q "vermagic=$(uname -r) " "$SIEVE_MODDIR/sieve.ko"
ktap_step "/dev/sieve is there" test -c /dev/sieve
ktap_step "filter create" sieve filter create dkms-smoke --type bloom --capacity 1000 --seed 7
ktap_step "filter add" sieve filter add dkms-smoke one two three
ktap_step "filter query finds the keys" sh -c 'sieve filter query dkms-smoke one two three | grep -c "^present" | grep -qx 3'
ktap_step "filter query misses another" sh -c 'sieve filter query dkms-smoke four; [ $? -eq 1 ]'
ktap_step "filter list shows it" sh -c 'sieve filter list | grep -q dkms-smoke'
ktap_step "filter destroy" sieve filter destroy dkms-smoke

ktap_print
