#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make test-e2e: the adversarial packet corpus against kernel delivery.
# Two network namespaces of the suite's own joined by veth; the blocklist
# on the server's end with default settings (fail-open), blocking a TCP
# and a UDP service (and an SCTP one where the kernel has SCTP), a TCP and
# a UDP flow, and a source, of each family. Listening sockets in the
# server namespace; corpus.py sends crafted frames from the client's end
# with scapy and tells, for each shape, whether the kernel delivered what
# was sent to a blocked target (it must not) and an unblocked control
# (it must, where the kernel takes that shape), with what the program
# counted. One line per shape and family and protocol.
#
# Usage: corpus.sh SIEVE RESULTS_FILE [CASE_SUBSTRING]
set -u

SIEVE=$(realpath "$1")
RESULTS=$2
FILTER=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
TAG=$$
CL=sieve-cor-cl-$TAG
SV=sieve-cor-sv-$TAG
IF=svc$TAG		# the server's end, where XDP runs
CIF=clc$TAG
WORK=$(mktemp -d /tmp/sieve-corpus.XXXXXX)
export SIEVE_STATE_DIR=$WORK/state

# Documentation ranges, inside the namespaces only. A: the clients; F: a
# blocked flow's source; S: a blocked source.
SV4=198.51.100.1; A4=198.51.100.2; F4=198.51.100.3; S4=198.51.100.4
SV6=2001:db8:c0::1; A6=2001:db8:c0::2; F6=2001:db8:c0::3; S6=2001:db8:c0::4
TCP_BLOCKED=7101; TCP_OPEN=7102; UDP_BLOCKED=7201; UDP_OPEN=7202
SCTP_BLOCKED=7301; SCTP_OPEN=7302
# A flow entry per flow send: F's ports FLOW_SPORT.. to each open port.
FLOW_SPORT=41000; FLOW_PORTS=80

SERVER_PID=
RUNNER_PID=

sv() { in_ns $SV "$@"; }
cl() { in_ns $CL "$@"; }

# Debian's python3 has scapy (python3-scapy); a python3 earlier in PATH may not.
pick_python() {
	local p
	for p in python3 /usr/bin/python3; do
		if "$p" -c 'import scapy.all' 2>/dev/null; then
			PY=$p; return 0
		fi
	done
	return 1
}

cleanup() {
	touch "$WORK/stop"
	if [ -n "$RUNNER_PID" ]; then
		kill "$RUNNER_PID" 2>/dev/null; wait "$RUNNER_PID" 2>/dev/null
	fi
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
	fi
	sv "$SIEVE" xdp detach $IF >/dev/null 2>&1
	ip netns del $CL 2>/dev/null
	ip netns del $SV 2>/dev/null
	rm -rf "$WORK"
}
at_exit cleanup

die() {
	echo "corpus: $*"; echo "0 1" >"$RESULTS"; exit 1
}

setup() {
	ip netns add $CL && ip netns add $SV || return 1
	veth_pair $CL $CIF $SV $IF || return 1
	for a in $A4 $F4 $S4; do cl ip addr add "$a"/24 dev $CIF || return 1; done
	for a in $A6 $F6 $S6; do cl ip addr add "$a"/64 dev $CIF nodad || return 1; done
	sv ip addr add $SV4/24 dev $IF && sv ip addr add $SV6/64 dev $IF nodad || return 1
	cl ip link set lo up && sv ip link set lo up || return 1
	cl ping -c 1 -W 2 $SV4 >/dev/null && cl ping -6 -c 1 -W 2 $SV6 >/dev/null
}

# Whether the server namespace can open an SCTP socket (no module loading here).
have_sctp() {
	sv "$PY" -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)' \
		2>/dev/null
}

# The entries, one a line: each protocol's service, FLOW_PORTS flows, the source.
entries() {
	local p blocked port i
	for p in tcp udp ${SCTP:+sctp}; do
		blocked=${p^^}_BLOCKED; port=${p^^}_OPEN
		blocked=${!blocked}; port=${!port}
		echo "$p:$SV4:$blocked"
		echo "$p:[$SV6]:$blocked"
		for i in $(seq 0 $((FLOW_PORTS - 1))); do
			echo "$p:$F4:$((FLOW_SPORT + i)),$SV4:$port"
			echo "$p:[$F6]:$((FLOW_SPORT + i)),[$SV6]:$port"
		done
	done
	echo $S4; echo $S6
}

block() {
	# shellcheck disable=SC2046 # one entry a word
	sv "$SIEVE" xdp block -i $IF $(entries) >/dev/null
}

write_config() {
	local cl_mac sv_mac
	# Not /sys/class/net: nsenter --net keeps the host's /sys.
	cl_mac=$(ip -n $CL -br link show dev $CIF | awk '{ print $3 }')
	sv_mac=$(ip -n $SV -br link show dev $IF | awk '{ print $3 }')
	[ -n "$cl_mac" ] && [ -n "$sv_mac" ]
	"$PY" - "$WORK/config.json" <<EOF
import json, sys
json.dump({
    "iface": "$CIF", "cl_mac": "$cl_mac", "sv_mac": "$sv_mac",
    "sv4": "$SV4", "a4": "$A4", "flow4": "$F4", "bs4": "$S4",
    "sv6": "$SV6", "a6": "$A6", "flow6": "$F6", "bs6": "$S6",
    "tcp_blocked": $TCP_BLOCKED, "tcp_open": $TCP_OPEN,
    "udp_blocked": $UDP_BLOCKED, "udp_open": $UDP_OPEN,
    "sctp_blocked": $SCTP_BLOCKED, "sctp_open": $SCTP_OPEN, "sctp": bool("$SCTP"),
    "flow_sport": $FLOW_SPORT, "flow_ports": $FLOW_PORTS,
    "stats_cmd": ["nsenter", "--net=/run/netns/$SV", "$SIEVE", "xdp", "stats", "-j", "-i", "$IF"],
    "udp_log": "$WORK/udp.log", "stop": "$WORK/stop", "serve_seconds": 600,
    "results": "$RESULTS", "filter": "$FILTER", "verbose": ${CORPUS_VERBOSE:-0},
}, open(sys.argv[1], "w"))
EOF
}

main() {
	local i rc
	[ "$(id -u)" = 0 ] || die "needs root (network namespaces, XDP)"
	pick_python || die "no python3 with scapy (Debian: python3-scapy, in make deps)"
	setup || die "setting up the namespaces failed"
	SCTP=
	if have_sctp; then
		SCTP=1
	else
		echo "SKIP e2e_corpus_*_sctp: this kernel has no SCTP (the module is not loaded" \
			"and this host cannot load it); the TCP and UDP shapes still run"
	fi
	sv "$SIEVE" xdp attach $IF >/dev/null || die "attach $IF"
	block || die "block the corpus's entries"
	write_config || die "writing the corpus's config"
	# Not through sv(): a function in the background is a subshell, whose
	# pid is not the server's (nsenter execs python, keeping its pid).
	nsenter --net=/run/netns/$SV "$PY" "$HERE/corpus.py" serve "$WORK/config.json" \
		>"$WORK/serve" 2>&1 &
	SERVER_PID=$!
	for i in $(seq 100); do
		grep -q ready "$WORK/serve" 2>/dev/null && break
		sleep 0.05
	done
	grep -q ready "$WORK/serve" || die "the listeners did not start: $(cat "$WORK/serve")"
	# In the background, so a signal to this script reaches cleanup() at
	# once, which stops it before the namespaces go.
	timeout 300 nsenter --net=/run/netns/$CL "$PY" "$HERE/corpus.py" run "$WORK/config.json" &
	RUNNER_PID=$!
	wait $RUNNER_PID
	rc=$?
	RUNNER_PID=
	[ -s "$RESULTS" ] || die "corpus.py died (exit $rc)"
	return $rc
}

main
