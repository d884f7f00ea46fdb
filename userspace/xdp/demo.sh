#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The XDP blocklist, live: two network namespaces of the demo's own joined
# by veth, a client pinging a server, the blocklist on the server's end.
# Usage: demo.sh PATH/TO/sieve   (run by `make demo`; needs root)
set -u

SIEVE=$(realpath "$1")
TAG=$$
CL=sieve-demo-cl-$TAG
SV=sieve-demo-sv-$TAG
IF=svdemo$TAG
CLIENT=198.51.100.2
OTHER=198.51.100.3
SERVER=198.51.100.1
# A store of the demo's own, so the host's lists are left alone.
STATE=$(mktemp -d /tmp/sieve-demo-state.XXXXXX)
export SIEVE_STATE_DIR=$STATE

if [ "$(id -u)" != 0 ]; then
	echo "XDP demo skipped: it needs root (network namespaces and XDP)"
	exit 0
fi

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
sieve() { printf '$ sieve xdp %s\n' "$*"; nsenter --net=/run/netns/$SV "$SIEVE" xdp "$@"; }
ping_from() {
	printf '$ ping -c 5 -I %s %s   (from the client namespace)\n' "$1" $SERVER
	nsenter --net=/run/netns/$CL ping -n -q -c 5 -i 0.1 -W 1 -I "$1" $SERVER | grep -E 'transmitted'
}

cleanup() {
	nsenter --net=/run/netns/$SV "$SIEVE" xdp detach $IF >/dev/null 2>&1
	ip netns del $CL 2>/dev/null
	ip netns del $SV 2>/dev/null
	rm -rf "$STATE"
}
trap cleanup EXIT

say "Two namespaces: a client ($CLIENT and $OTHER) and a server ($SERVER)"
ip netns add $CL && ip netns add $SV || exit 2
ip link add cl$TAG netns $CL type veth peer name $IF netns $SV || exit 2
ip -n $CL addr add $CLIENT/24 dev cl$TAG
ip -n $CL addr add $OTHER/24 dev cl$TAG
ip -n $SV addr add $SERVER/24 dev $IF
ip -n $CL link set cl$TAG up
ip -n $SV link set $IF up
echo "The sieve commands run inside the server's namespace (nsenter --net)."

say "Attach the blocklist to the server's interface"
sieve attach $IF || exit 2
sieve status
ping_from $CLIENT

say "Block the client's address: its packets are dropped at XDP, before the stack"
sieve block $CLIENT
ping_from $CLIENT
echo "The other address of the same client still gets through:"
ping_from $OTHER
sieve stats

say "A prefix, a service and a flow can be blocked too; the list as loaded"
sieve block 203.0.113.0/24 tcp:$SERVER:22 udp:$OTHER:5000,$SERVER:53
sieve list

say "Allow the other address: a source entry no longer drops it"
sieve block 198.51.100.0/24
ping_from $OTHER
sieve allow $OTHER
ping_from $OTHER

say "Unblock: traffic flows again (the maps are rebuilt from the store and swapped in atomically)"
sieve unblock $CLIENT 198.51.100.0/24
ping_from $CLIENT
sieve stats

say "An entry with a TTL drops until \`expire\` runs after it"
sieve block --ttl 2s $CLIENT
ping_from $CLIENT
sleep 2
sieve expire
ping_from $CLIENT

say "The store keeps the lists; status says which version the maps hold"
sieve status
sieve list

say "Detach: the interface is left as it was (the list stays in the store)"
sieve detach $IF
ip -n $SV link show $IF | head -1
