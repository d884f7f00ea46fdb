#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# dist/systemd/sieve.service, judged offline by systemd-analyze:
#  - `verify` loads it without a complaint; it checks that ExecStart's
#    program exists, so it reads a copy whose /usr/bin/sieve is the built
#    CLI. Documentation=man: pages are checked by the package test, where
#    they are installed (--man=no here).
#  - `security --offline=true` rates its exposure, from 0.0 (locked down)
#    to 10.0; the figure must stay at or below MAX_EXPOSURE.
# Usage: service_test.sh UNIT SIEVE_BINARY [RESULT_FILE]
set -uo pipefail
unit=${1:?usage: service_test.sh UNIT SIEVE_BINARY [RESULT_FILE]}
binary=${2:?usage: service_test.sh UNIT SIEVE_BINARY [RESULT_FILE]}
. "$(dirname "$0")/../lib.sh"

# The threshold. The unit scores 2.6, and most of that must stay (the
# weights systemd-analyze gives): root (0.4: the pins, the store and
# /dev/sieve are root's), the host's network (0.5: it is the network it
# filters), CAP_BPF, CAP_NET_ADMIN and CAP_SYS_ADMIN (0.6), sockets for
# sd_notify, the metrics and rtnetlink (0.5), bpf(2) from @privileged
# (0.2), joining network namespaces (0.1: prune). 3.0 leaves room for one small need of the agent, and fails a real
# loosening: without SystemCallFilter= the unit scores 3.9, without the
# bounding set 4.1.
MAX_EXPOSURE=3.0

work=$(mktemp -d)
at_exit "rm -rf '$work'"
mkdir "$work/units"
sed "s|^ExecStart=/usr/bin/sieve |ExecStart=$(realpath "$binary") |" "$unit" > "$work/units/sieve.service"

check "the unit runs /usr/bin/sieve agent" grep -qx 'ExecStart=/usr/bin/sieve agent' "$unit"
check "the copy runs the built CLI" grep -q "^ExecStart=/.*/sieve agent$" "$work/units/sieve.service"
if systemd-analyze verify --man=no "$work/units/sieve.service" >"$work/verify" 2>&1 && ! [ -s "$work/verify" ]; then
	ok "systemd-analyze verify: no complaint"
else
	not_ok "systemd-analyze verify: no complaint" "$(cat "$work/verify")"
fi

if systemd-analyze security --offline=true "$work/units/sieve.service" >"$work/security" 2>&1; then
	exposure=$(sed -n 's/.*Overall exposure level for sieve.service: \([0-9.]*\).*/\1/p' "$work/security")
	echo "# systemd-analyze security: exposure $exposure (at most $MAX_EXPOSURE)"
	grep '✗' "$work/security" | sed 's/^/#   /; s/  */ /g'
	check "systemd-analyze security rates the exposure" test -n "$exposure"
	check "the exposure ($exposure) is at most $MAX_EXPOSURE" \
		awk -v e="${exposure:-99}" -v max=$MAX_EXPOSURE 'BEGIN { exit !(e <= max) }'
else
	not_ok "systemd-analyze security rates the exposure" "$(cat "$work/security")"
fi

# What the comments of the unit promise, kept true.
check "the bounding set is CAP_BPF CAP_NET_ADMIN CAP_SYS_ADMIN" \
	grep -qx 'CapabilityBoundingSet=CAP_BPF CAP_NET_ADMIN CAP_SYS_ADMIN' "$unit"
check "the agent notifies systemd (Type=notify)" grep -qx 'Type=notify' "$unit"
check "bpf(2) is allowed beside @system-service" grep -qx 'SystemCallFilter=@system-service bpf' "$unit"
check "the pins' bpffs is writable" grep -qx 'ReadWritePaths=/sys/fs/bpf' "$unit"
check "the one device is /dev/sieve" grep -qx 'DeviceAllow=/dev/sieve rw' "$unit"
check "no device class is granted" test "$(grep -c '^DeviceAllow=' "$unit")" = 1
# The agent prunes at start (userspace/xdp/prune.c): a child joins each
# namespace a pin folder names, setns(CLONE_NEWNET), to read its cookie;
# RestrictNamespaces=yes refuses that, and every foreign folder then looks
# like its namespace's own (an inode's next namespace inherits its record).
check "the agent may join network namespaces, and only those (RestrictNamespaces=net)" \
	grep -qx 'RestrictNamespaces=net' "$unit"
check "the unit's memory is bounded (MemoryMax=)" grep -qE '^MemoryMax=[0-9]+[KMG]$' "$unit"

finish "${3:-}"
