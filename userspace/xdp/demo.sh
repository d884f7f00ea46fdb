#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The XDP blocklist, live: two network namespaces of the demo's own joined
# by veth, a client pinging a server, the blocklist on the server's end.
# Every verdict is checked with real traffic: the demo stops with exit 1 at
# the first block that is not enforced (or pass that is dropped), exit 2
# when it cannot set up, and removes its namespaces, pins and store on
# every way out (also a failure or Ctrl-C).
#
# Usage: demo.sh PATH/TO/sieve   (`make demo-xdp`, and part of `make demo`;
# root). SIEVE_DEMO_TAG names the namespaces and the interface (default:
# the PID), so that a test can find what it left.
set -u

SIEVE=$(realpath "${1:?usage: demo.sh PATH/TO/sieve}")
TAG=${SIEVE_DEMO_TAG:-$$}
CL=sieve-demo-cl-$TAG
SV=sieve-demo-sv-$TAG
IF=svdemo$TAG
CLIENT=198.51.100.2
OTHER=198.51.100.3
SERVER=198.51.100.1

if [ "$(id -u)" != 0 ]; then
	echo "demo-xdp: needs root (network namespaces and XDP): sudo make demo-xdp" >&2
	exit 2
fi
# A store of the demo's own, so the host's lists are left alone.
STATE=$(mktemp -d "${TMPDIR:-/tmp}/sieve-demo-state.XXXXXX") || exit 2
export SIEVE_STATE_DIR=$STATE

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
sieve() { printf '$ sieve xdp %s\n' "$*"; nsenter "--net=/run/netns/$SV" "$SIEVE" xdp "$@"; }
# A sieve command that must work: the demo stops if it does not.
must() { sieve "$@" || { echo "DEMO FAILED: sieve xdp $* exited $?" >&2; exit 1; }; }

# ping_from SRC WANT: 5 pings from SRC to the server; WANT is "all" or
# "none" of them answered, else the demo fails.
ping_from() {
	local got
	printf '$ ping -c 5 -I %s %s   (from the client namespace)\n' "$1" $SERVER
	got=$(nsenter "--net=/run/netns/$CL" ping -n -q -c 5 -i 0.1 -W 1 -I "$1" $SERVER 2>/dev/null |
		sed -n 's/.* \([0-9]*\) received.*/\1/p')
	got=${got:-0}
	echo "  $got of 5 answered"
	case $2/$got in
	all/5 | none/0) ;;
	none/*) echo "DEMO FAILED: $1 is blocked but $got of 5 pings got through" >&2; exit 1;;
	*) echo "DEMO FAILED: $1 should pass but only $got of 5 pings were answered" >&2; exit 1;;
	esac
}

cleanup() {
	local ino
	trap - EXIT INT TERM
	nsenter "--net=/run/netns/$SV" "$SIEVE" xdp detach "$IF" >/dev/null 2>&1
	# The namespace's pin folder, if detach left it empty (rmdir only
	# removes an empty one: what another tool pinned there stays).
	ino=$(stat -L -c %i "/run/netns/$SV" 2>/dev/null) &&
		rmdir "/sys/fs/bpf/sieve/netns-$ino" 2>/dev/null
	ip netns del "$CL" 2>/dev/null
	ip netns del "$SV" 2>/dev/null
	rm -rf "$STATE"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "Two namespaces: a client ($CLIENT and $OTHER) and a server ($SERVER)"
ip netns add "$CL" && ip netns add "$SV" || exit 2
ip link add "cl$TAG" netns "$CL" type veth peer name "$IF" netns "$SV" || exit 2
ip -n "$CL" addr add $CLIENT/24 dev "cl$TAG" && ip -n "$CL" addr add $OTHER/24 dev "cl$TAG" &&
	ip -n "$SV" addr add $SERVER/24 dev "$IF" && ip -n "$CL" link set "cl$TAG" up &&
	ip -n "$SV" link set "$IF" up || exit 2
echo "The sieve commands run inside the server's namespace (nsenter --net)."

say "Attach the blocklist to the server's interface: everything still passes"
sieve attach "$IF" || exit 2
ping_from $CLIENT all

say "Block the client's address: its packets are dropped at XDP, before the stack"
must block $CLIENT
ping_from $CLIENT none
echo "The other address of the same client still gets through:"
ping_from $OTHER all
must stats -i "$IF"

say "A prefix, a service and a flow can be blocked too; the list as stored"
must block 203.0.113.0/24 tcp:$SERVER:22 udp:$OTHER:5000,$SERVER:53
must list

say "Allow the other address: a source entry no longer drops it"
must block 198.51.100.0/24
ping_from $OTHER none
must allow $OTHER
ping_from $OTHER all

say "Unblock: traffic flows again at once"
must unblock $CLIENT 198.51.100.0/24
ping_from $CLIENT all

say "An entry with a TTL drops until \`expire\` runs after it"
must block --ttl 2s $CLIENT
ping_from $CLIENT none
sleep 2
must expire
ping_from $CLIENT all

say "The store keeps the lists; status says which version the maps hold"
must status -i "$IF"

say "Detach: the interface is left as it was (the list stays in the store)"
must detach "$IF"
ip -n "$SV" link show "$IF" 2>/dev/null | head -1
say "Done: every verdict above was checked with real traffic"
