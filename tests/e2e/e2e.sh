#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make test-e2e: the XDP blocklist on real traffic. Two network namespaces
# of the suite's own, "cl" (clients) and "sv" (server, the blocklist on its
# veth end), joined by veth; ping, UDP and TCP between them only. Each case
# starts from a fresh attach and is listed once in CASES at the bottom.
#
# Usage: e2e.sh SIEVE RESULTS_FILE [CASE_SUBSTRING]
# The CLI runs in the server namespace through `nsenter --net`, so it sees
# the host's /sys/fs/bpf (`ip netns exec` would remount /sys).
set -u

SIEVE=$(realpath "$1")
RESULTS=$2
FILTER=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
TRAFFIC="$HERE/traffic.py"
TAG=$$
CL=sieve-e2e-cl-$TAG
SV=sieve-e2e-sv-$TAG
IF=sve$TAG		# the server's end, where XDP runs (pins are by name)
IF2=svf$TAG		# a second interface for the several-interfaces case
WORK=$(mktemp -d /tmp/sieve-e2e.XXXXXX)

# Documentation ranges, inside the namespaces only.
SV4=198.51.100.1; A4=198.51.100.2; B4=198.51.100.3; C4=198.51.100.100
SV6=2001:db8:e2e::1; A6=2001:db8:e2e::2; C6=2001:db8:e2e::100
# The concurrent cases block 198.51.100.20-99 and send from one of each twenty.
SAMPLES="198.51.100.39 198.51.100.59 198.51.100.79 198.51.100.99"

passed=0; failed=0

sv() { nsenter --net=/run/netns/$SV "$@"; }
cl() { nsenter --net=/run/netns/$CL "$@"; }
sieve() { sv "$SIEVE" xdp "$@"; }
# Commands on the first interface name it: another run of this suite may
# have the blocklist on interfaces of its own, and no -i means all of them.
on() { local sub=$1; shift; sieve "$sub" -i $IF "$@"; }

fail() { echo "    FAIL: $*"; case_failed=1; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"; }

setup() {
	ip netns add $CL && ip netns add $SV || return 1
	ip link add cl$TAG netns $CL type veth peer name $IF netns $SV || return 1
	ip link add cm$TAG netns $CL type veth peer name $IF2 netns $SV || return 1
	cl ip addr add $A4/24 dev cl$TAG
	cl ip addr add $B4/24 dev cl$TAG
	cl ip addr add $C4/24 dev cl$TAG
	cl ip addr add $A6/64 dev cl$TAG nodad
	cl ip addr add $C6/64 dev cl$TAG nodad
	cl ip addr add 203.0.113.2/24 dev cm$TAG
	for a in $SAMPLES; do cl ip addr add $a/24 dev cl$TAG; done
	sv ip addr add $SV4/24 dev $IF
	sv ip addr add $SV6/64 dev $IF nodad
	sv ip addr add 203.0.113.1/24 dev $IF2
	for l in lo cl$TAG cm$TAG; do cl ip link set $l up; done
	for l in lo $IF $IF2; do sv ip link set $l up; done
	cl ping -c 1 -W 2 $SV4 >/dev/null && cl ping -c 1 -W 2 203.0.113.1 >/dev/null
}

cleanup() {
	# Background workers and traffic of a case cut short (each is bounded too).
	kill $(jobs -p) 2>/dev/null
	sieve detach $IF $IF2 >/dev/null 2>&1
	ip netns del $CL 2>/dev/null
	ip netns del $SV 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

# Replies received out of N pings from SRC (v4 or v6) to the server.
pings() {
	local src=$1 dst=$2 n=${3:-5}
	cl ping -n -q -c "$n" -i 0.05 -W 1 -I "$src" "$dst" 2>/dev/null |
		sed -n 's/.* \([0-9]*\) received.*/\1/p'
}

# One counter from `stats -j` of the server interface.
counter() {
	on stats -j -i "${2:-$IF}" | python3 -c \
		"import json,sys; print(json.load(sys.stdin)[0]['$1'])"
}

attach() {
	sieve attach $IF "$@" >/dev/null || { fail "attach $IF $*"; return 1; }
}

case_block_source() {
	attach || return
	expect_eq "$(pings $A4 $SV4)" 5 "pings from A before the block"
	on block $A4 >/dev/null || fail "block $A4"
	expect_eq "$(pings $A4 $SV4)" 0 "pings from blocked A"
	expect_eq "$(pings $C4 $SV4)" 5 "pings from C while A is blocked"
	expect_eq "$(counter dropped_source)" 5 "dropped_source counter"
	on unblock $A4 >/dev/null || fail "unblock $A4"
	expect_eq "$(pings $A4 $SV4)" 5 "pings from A after unblock"
	expect_eq "$(counter dropped_source)" 5 "dropped_source after unblock"
}

case_block_cidr() {
	attach || return
	on block 198.51.100.0/28 >/dev/null || fail "block a /28"
	expect_eq "$(pings $A4 $SV4)" 0 "pings from A in the /28"
	expect_eq "$(pings $B4 $SV4)" 0 "pings from B in the /28"
	expect_eq "$(pings $C4 $SV4)" 5 "pings from C outside it"
	expect_eq "$(counter dropped_prefix)" 10 "dropped_prefix counter"
	on unblock 198.51.100.0/28 >/dev/null || fail "unblock the /28"
	expect_eq "$(pings $B4 $SV4)" 5 "pings from B after unblock"
}

case_ipv6_source_and_nd() {
	attach || return
	on block $A6 >/dev/null || fail "block $A6"
	# Flush neighbours: A's neighbour solicitations must still get through.
	sv ip -6 neigh flush dev $IF; cl ip -6 neigh flush dev cl$TAG
	expect_eq "$(pings $A6 $SV6)" 0 "pings from blocked v6 A"
	expect_eq "$(pings $C6 $SV6)" 5 "pings from v6 C"
	on unblock $A6 >/dev/null
	expect_eq "$(pings $A6 $SV6)" 5 "pings from v6 A after unblock"
}

# UDP datagrams the server got from SRC:SPORT, out of N sent.
udp_count() {
	local src=$1 sport=$2 n=$3 out
	sv python3 "$TRAFFIC" udp-recv $SV4 7000 3 >"$WORK/recv" &
	local rpid=$!
	until grep -q ready "$WORK/recv" 2>/dev/null; do sleep 0.05; done
	cl python3 "$TRAFFIC" udp-send "$src" "$sport" $SV4 7000 "$n" 500 >/dev/null
	wait $rpid
	out=$(tail -n 1 "$WORK/recv")
	python3 -c "import json,sys; print(json.loads(sys.argv[1]).get('$src:$sport', 0))" "$out"
}

case_five_tuple() {
	attach || return
	on block udp:$C4:5001,$SV4:7000 tcp:$C4:40001,$SV4:8080 >/dev/null || fail "block flows"
	expect_eq "$(udp_count $C4 5001 50)" 0 "UDP datagrams of the blocked flow"
	expect_eq "$(udp_count $C4 5002 50)" 50 "UDP datagrams from another source port"
	expect_eq "$(pings $C4 $SV4)" 5 "pings from the blocked flow's source"
	sv python3 "$TRAFFIC" tcp-serve $SV4 8080 8 >"$WORK/tcp" &
	local spid=$!
	until grep -q ready "$WORK/tcp" 2>/dev/null; do sleep 0.05; done
	cl python3 "$TRAFFIC" tcp-connect $C4 40001 $SV4 8080 && fail "TCP connect of the blocked flow"
	cl python3 "$TRAFFIC" tcp-connect $C4 40002 $SV4 8080 || fail "TCP connect from another port"
	# 50 datagrams and at least one SYN (retransmits vary).
	[ "$(counter dropped_flow)" -ge 51 ] || fail "dropped_flow: $(counter dropped_flow), want >= 51"
	on unblock tcp:$C4:40001,$SV4:8080 >/dev/null
	cl python3 "$TRAFFIC" tcp-connect $C4 40001 $SV4 8080 || fail "TCP connect after unblock"
	kill $spid 2>/dev/null; wait $spid 2>/dev/null
}

# Bytes beside packets: the frames XDP saw (Ethernet 14 + IPv4 20 + UDP 8
# + payload, whose length varies by datagram), in -j, in text and as rates.
case_byte_counters() {
	local n=50 frames pass0 pass1
	attach || return
	on block $C4 >/dev/null || fail "block $C4"
	pass0=$(counter passed_bytes)
	expect_eq "$(udp_count $C4 5001 $n)" 0 "datagrams from blocked C"
	expect_eq "$(udp_count $A4 5002 $n)" $n "datagrams from A"
	frames=$(($(python3 "$TRAFFIC" udp-bytes $n) + n * 42))
	expect_eq "$(counter dropped_source)" $n "dropped_source"
	expect_eq "$(counter dropped_source_bytes)" $frames "dropped_source_bytes: the frames sent"
	pass1=$(counter passed_bytes)
	# A's datagrams, and whatever ARP and IPv6 chatter came meanwhile.
	[ $((pass1 - pass0)) -ge $frames ] ||
		fail "passed_bytes grew by $((pass1 - pass0)), want >= $frames"
	expect_eq "$(on stats -j | python3 -c "import json,sys
d = json.load(sys.stdin)[0]
counts = [k for k in d if k not in ('iface', 'bytes') and not k.endswith('_bytes')]
twins = all((k + '_bytes' if k != 'packets' else 'bytes') in d for k in counts)
drops = sum(v for k, v in d.items() if k.startswith('dropped') and k.endswith('_bytes'))
verdicts = d['passed_bytes'] + drops
print(len(counts), twins, d['bytes'] == verdicts)")" "11 True True" \
		"stats -j: 11 packet counters, each with its bytes; bytes = passed + dropped"
	on stats | grep -Eq "^  dropped_source +$n pkts +$frames B$" ||
		fail "text stats: no line 'dropped_source $n pkts $frames B'"
	expect_eq "$(on stats -j --watch --interval 1 --count 1 | python3 -c "import json,sys
d = json.loads(sys.stdin.readline())[0]
print(d['dropped_source_per_s'], d['dropped_source_bytes_per_s'])")" "0.0 0.0" \
		"stats --watch -j: packet and byte rates of a quiet second"
}

# `load` replaces the list again and again under a steady stream from an
# allowed and a blocked source: every allowed datagram arrives, no blocked one.
case_load_under_traffic() {
	local i n=3000
	attach || return
	printf '# both lists block B\n%s\n203.0.113.0/24\n' $B4 >"$WORK/one"
	printf '198.51.100.0/30\ntcp:%s:22\n2001:db8::/32\n' $SV4 >"$WORK/two"
	on load "$WORK/one" >/dev/null || fail "load one"
	local lost0; lost0=$(stack_drops)
	sv python3 "$TRAFFIC" udp-recv $SV4 7000 10 >"$WORK/recv" &
	local rpid=$!
	until grep -q ready "$WORK/recv" 2>/dev/null; do sleep 0.05; done
	cl python3 "$TRAFFIC" udp-send $C4 6000 $SV4 7000 $n 1000 >/dev/null &
	local a=$!
	cl python3 "$TRAFFIC" udp-send $B4 6001 $SV4 7000 $n 1000 >/dev/null &
	local b=$!
	for i in $(seq 1 20); do
		on load "$WORK/$([ $((i % 2)) = 0 ] && echo one || echo two)" >/dev/null ||
			fail "load number $i"
	done
	wait $a $b; wait $rpid
	local out; out=$(tail -n 1 "$WORK/recv")
	local got; got=$(python3 -c "import json,sys; print(json.loads(sys.argv[1]).get('$C4:6000', 0))" "$out")
	expect_eq "$(python3 -c "import json,sys; print(json.loads(sys.argv[1]).get('$B4:6001', 0))" "$out")" \
		0 "blocked datagrams received during 20 loads"
	# The program itself dropped the blocked datagrams and nothing else.
	expect_eq "$(on stats -j | python3 -c "import json,sys
d = json.load(sys.stdin)[0]
print(sum(v for k, v in d.items() if k.startswith('dropped') and not k.endswith('bytes')))")" \
		$n "datagrams the program dropped during 20 loads"
	# A busy host may lose a datagram after XDP (the veth's ring, the
	# socket): only such losses, counted by the kernel, excuse a shortfall.
	local lost; lost=$(stack_drops)
	if [ "$got" != $n ] && [ $((got + lost - lost0)) -ge $n ]; then
		echo "    note: $((n - got)) allowed datagrams lost after XDP ($((lost - lost0)) stack drops)"
	else
		expect_eq "$got" $n "allowed datagrams received during 20 loads"
	fi
}

# Datagrams the server's stack dropped after XDP: its veth's receive drops
# and UDP receive-buffer errors.
stack_drops() {
	local rx udp
	# /proc/net follows the reader's namespace; /sys/class/net would need sysfs remounted.
	rx=$(sv awk -v dev="$IF:" '$1 == dev { print $5 }' /proc/net/dev)
	udp=$(sv awk '/^Udp:/ && !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
		/^Udp:/ { print $c["RcvbufErrors"] + $c["InErrors"] }' /proc/net/snmp)
	echo $((rx + udp))
}

# A list of 24 prefix lengths (/8-/31) and a host: the program probes 8
# lengths, the other prefixes are stored expanded. The edges of the /13
# hold on real traffic, and so does a live block of a length not probed.
case_many_prefix_lengths() {
	local len ins=10.8.0.0 last=10.15.255.255 below=10.7.255.255 above=10.16.0.0 a
	attach || return
	{
		for len in 8 9 10 11 12 14 15; do echo "$((len + 20)).0.0.0/$len"; done
		echo 10.8.0.0/13
		for len in $(seq 16 31); do echo "100.$len.0.0/$len"; done
		echo $B4
	} >"$WORK/many"
	for a in $ins $last $below $above; do cl ip addr add $a/32 dev cl$TAG; done
	sv ip route add 10.0.0.0/8 dev $IF
	on load "$WORK/many" >/dev/null || fail "load 24 prefix lengths"
	expect_eq "$(on status -j | python3 -c "import json,sys
d = json.load(sys.stdin)[0]
print(len(d['v4_lens']), d['max_probes'], d['keys'] > d['entries'], d['entries'])")" \
		"8 8 True 25" "probe lengths, budget, expansion, entries"
	expect_eq "$(pings $ins $SV4)" 0 "pings from the first address of the /13"
	expect_eq "$(pings $last $SV4)" 0 "pings from the last address of the /13"
	expect_eq "$(pings $below $SV4)" 5 "pings from just below the /13"
	expect_eq "$(pings $above $SV4)" 5 "pings from just above the /13"
	expect_eq "$(pings $B4 $SV4)" 0 "pings from the blocked host"
	expect_eq "$(pings $A4 $SV4)" 5 "pings from A, on no list"
	on block 10.16.0.0/14 >/dev/null || fail "block a /14 live"
	expect_eq "$(pings $above $SV4)" 0 "pings from the /14 blocked live"
	expect_eq "$(pings $below $SV4)" 5 "pings from just below the /13, after the block"
	sv ip route del 10.0.0.0/8 dev $IF
	for a in $ins $last $below $above; do cl ip addr del $a/32 dev cl$TAG; done
}

case_bad_file_loads_nothing() {
	attach || return
	on block $A4 >/dev/null
	printf '%s\n198.51.100.300\n' $C4 >"$WORK/bad"
	local err; err=$(on load "$WORK/bad" 2>&1 >/dev/null); local rc=$?
	expect_eq $rc 2 "exit code of a bad load"
	case $err in *"$WORK/bad:2: "*) ;; *) fail "error names file:line: $err";; esac
	expect_eq "$(on list | cut -f3)" $A4 "list after a refused load"
}

# Feeds in their own formats reach the maps: DROP with --format, ipset save by auto.
case_load_feeds() {
	attach || return
	printf '; Spamhaus DROP List\r\n; Last-Modified: today\r\n198.51.100.0/30 ; SBL1\r\n%s\r\n' \
		'2001:db8:e2e::/126 ; SBL2' >"$WORK/drop"
	on load --format drop "$WORK/drop" >/dev/null || fail "load --format drop"
	expect_eq "$(on list | cut -f3 | sort | tr '\n' ' ')" "198.51.100.0/30 2001:db8:e2e::/126 " \
		"list after loading a DROP file"
	expect_eq "$(pings $A4 $SV4)" 0 "pings from A, in a DROP prefix"
	expect_eq "$(pings $A6 $SV6)" 0 "pings from A6, in a DROPv6 prefix"
	expect_eq "$(pings $C4 $SV4)" 5 "pings from C, outside them"
	printf '%s\n' "create bl hash:net family inet" "add bl 198.51.100.96/28 timeout 600" \
		"create all list:set size 8" "add all bl" >"$WORK/ipset"
	local out; out=$(on load "$WORK/ipset") || fail "load an ipset save (auto)"
	case $out in *"hash:net: 1"*) ;; *) fail "the skipped add is counted: $out";; esac
	expect_eq "$(on list | cut -f3)" 198.51.100.96/28 "list after loading an ipset save"
	expect_eq "$(pings $C4 $SV4)" 0 "pings from C, in the hash:net"
	expect_eq "$(pings $A4 $SV4)" 5 "pings from A, no longer listed"
}

case_detach_leaves_clean() {
	attach || return
	on block $A4 >/dev/null
	sieve detach $IF >/dev/null || fail "detach"
	sv ip link show $IF | grep -q xdp && fail "xdp still on $IF"
	ls -d /sys/fs/bpf/sieve/netns-*/"$IF" >/dev/null 2>&1 &&
		fail "pins left under /sys/fs/bpf/sieve/netns-*/$IF"
	expect_eq "$(pings $A4 $SV4)" 5 "pings from A after detach"
	expect_eq "$(sieve detach $IF)" "$IF: was not attached" "second detach"
	sieve status -i $IF >/dev/null 2>&1; expect_eq $? 2 "status of a detached interface"
}

case_generic_mode() {
	attach --mode generic || return
	case $(on status) in *"generic mode"*) ;; *) fail "status does not say generic";; esac
	sv ip link show $IF | grep -q xdpgeneric || fail "ip link shows no xdpgeneric"
	on block $A4 >/dev/null
	expect_eq "$(pings $A4 $SV4)" 0 "pings from blocked A, generic"
	expect_eq "$(pings $C4 $SV4)" 5 "pings from C, generic"
	sieve attach $IF --mode native >/dev/null 2>&1; expect_eq $? 2 "re-attach in another mode"
}

case_native_mode() {
	attach --mode native || return
	sv ip link show $IF | grep -q "xdp " || sv ip link show $IF | grep -q "prog/xdp" ||
		fail "ip link shows no native xdp"
	case $(on status) in *"native mode"*) ;; *) fail "status does not say native";; esac
	sieve attach $IF --mode native >/dev/null || fail "attach again (idempotent)"
	on block $A4 >/dev/null
	expect_eq "$(pings $A4 $SV4)" 0 "pings from blocked A, native"
}

case_exact_mode() {
	attach --exact || return
	on block $A4 >/dev/null
	expect_eq "$(pings $A4 $SV4)" 0 "pings from blocked A, exact"
	expect_eq "$(pings $C4 $SV4)" 5 "pings from C, exact"
	case $(on status) in *"exact map"*) ;; *) fail "status shows no exact map";; esac
	sieve attach $IF >/dev/null || fail "attach again without options"
	case $(on status) in *", exact,"*) ;; *) fail "a bare re-attach dropped --exact";; esac
	sieve attach $IF --no-exact >/dev/null || fail "attach --no-exact"
	case $(on status) in *"bloom-only"*) ;; *) fail "--no-exact did not apply";; esac
	expect_eq "$(pings $A4 $SV4)" 0 "pings from blocked A after the switch (list kept)"
}

case_errors() {
	local err rc
	err=$(sv setpriv --reuid=65534 --regid=65534 --clear-groups "$SIEVE" xdp attach $IF 2>&1); rc=$?
	expect_eq $rc 2 "attach as nobody"
	case $err in *root*) ;; *) fail "not-root message: $err";; esac
	err=$(sieve attach nosuch$TAG 2>&1); rc=$?
	expect_eq $rc 2 "attach to a missing interface"
	case $err in *"no such interface"*) ;; *) fail "missing-interface message: $err";; esac
	sv ip link set dev $IF xdpgeneric obj "$FLOOR" sec xdp || { fail "ip link set xdp"; return; }
	err=$(sieve attach $IF 2>&1); rc=$?
	expect_eq $rc 2 "attach over another program"
	case $err in *"another XDP program"*) ;; *) fail "other-program message: $err";; esac
	sieve attach $IF --force >/dev/null || fail "attach --force"
	sv ip link show $IF | grep -q "name sieve_xdp" || fail "sieve_xdp not attached after --force"
	err=$(on block 198.51.100.7/24 2>&1); rc=$?
	expect_eq $rc 2 "block with host bits"
	expect_eq "$(echo "$err" | wc -l)" 1 "one line per error"
	on unblock $A4 >/dev/null; expect_eq $? 1 "unblock of an entry not on the list"
}

case_several_interfaces() {
	attach || return
	sieve attach $IF2 >/dev/null || fail "attach $IF2"
	sieve block -i $IF2 203.0.113.2 >/dev/null || fail "block on $IF2"
	expect_eq "$(pings 203.0.113.2 203.0.113.1)" 0 "pings over $IF2 from its blocked source"
	expect_eq "$(pings $A4 $SV4)" 5 "pings over $IF, whose list is empty"
	expect_eq "$(sieve status -j | python3 -c "import json,sys; print(sum(s['iface'] in ('$IF', '$IF2') for s in json.load(sys.stdin)))")" \
		2 "our interfaces in status -j"
	# No -i: every interface (an address no case sends from, as other
	# runs' interfaces get it too).
	sieve block 192.0.2.99 >/dev/null || fail "block on every interface"
	expect_eq "$(sieve list -i $IF; sieve list -i $IF2)" "$(printf '%s\tsource\t192.0.2.99\n%s\tsource\t192.0.2.99\n%s\tsource\t203.0.113.2' $IF $IF2 $IF2)" \
		"entry added to both lists"
}

# Runs "SUB ARGS" one command a line from stdin on the first interface,
# each bounded in time; a line per failed command goes to FILE.
run_commands() {
	local file=$1 sub args
	while read -r sub args; do
		timeout 30 nsenter --net=/run/netns/$SV "$SIEVE" xdp $sub -i $IF $args \
			>/dev/null 2>>"$file.err" || echo "$sub $args: exit $?" >>"$file"
	done
}

# Waits up to SECONDS for the PIDS; kills those still running (they fail the case).
wait_bounded() {
	local secs=$1 t p; shift
	for t in $(seq 1 $((secs * 10))); do
		kill -0 "$@" 2>/dev/null || break
		sleep 0.1
	done
	for p in "$@"; do
		kill -0 $p 2>/dev/null && { fail "worker $p still running after ${secs}s"; kill $p; }
		wait $p 2>/dev/null
	done
}

# A steady stream from B (blocked before the run) and from C (allowed) while
# WORKERS run; afterwards none of B's datagrams may have arrived, all of C's
# (losses after XDP excepted), and the program dropped B's and nothing else.
under_traffic() {
	local stop=$WORK/stop rstop=$WORK/rstop lost0 t
	rm -f "$stop" "$rstop" "$WORK"/sent.*
	lost0=$(stack_drops)
	local drop0; drop0=$(dropped_total)
	sv python3 "$TRAFFIC" udp-recv $SV4 7000 120 "$rstop" >"$WORK/recv" &
	local rpid=$!
	for t in $(seq 1 100); do grep -q ready "$WORK/recv" 2>/dev/null && break; sleep 0.05; done
	cl python3 "$TRAFFIC" udp-send $C4 6000 $SV4 7000 60000 500 "$stop" >"$WORK/sent.c" &
	local a=$!
	cl python3 "$TRAFFIC" udp-send $B4 6001 $SV4 7000 60000 500 "$stop" >"$WORK/sent.b" &
	local b=$!
	# B's first datagrams are dropped before the first change (python is slow to start).
	for t in $(seq 1 100); do [ "$(dropped_total)" -gt "$drop0" ] && break; sleep 0.1; done
	extra_drops=0	# what WORKERS send from blocked addresses themselves
	"$@"
	sleep 0.3
	touch "$stop"; wait_bounded 5 $a $b
	sleep 0.3
	touch "$rstop"; wait_bounded 5 $rpid
	local out; out=$(tail -n 1 "$WORK/recv")
	local sent_b sent_c got_b got_c
	sent_b=$(cat "$WORK/sent.b"); sent_c=$(cat "$WORK/sent.c")
	got_b=$(python3 -c "import json,sys; print(json.loads(sys.argv[1]).get('$B4:6001', 0))" "$out")
	got_c=$(python3 -c "import json,sys; print(json.loads(sys.argv[1]).get('$C4:6000', 0))" "$out")
	[ "${sent_b:-0}" -gt 100 ] || fail "only '$sent_b' datagrams sent from B during the run"
	expect_eq "$got_b" 0 "datagrams from B (blocked before the run) that got through"
	expect_eq "$(($(dropped_total) - drop0))" "$((sent_b + extra_drops))" "packets the program dropped"
	local lost; lost=$(stack_drops)
	if [ "$got_c" != "$sent_c" ] && [ $((got_c + lost - lost0)) -ge "$sent_c" ]; then
		echo "    note: $((sent_c - got_c)) allowed datagrams lost after XDP"
	else
		expect_eq "$got_c" "$sent_c" "allowed datagrams from C received"
	fi
}

dropped_total() {
	on stats -j | python3 -c "import json,sys
d = json.load(sys.stdin)[0]
print(sum(v for k, v in d.items() if k.startswith('dropped') and not k.endswith('bytes')))"
}

# The list of the first interface, sorted, against WANT (one entry a line).
expect_list() {
	local got; got=$(on list | cut -f3 | sort)
	[ "$got" = "$1" ] || fail "$2: missing $(comm -13 <(echo "$got") <(echo "$1") | wc -l)" \
		"($(comm -13 <(echo "$got") <(echo "$1") | head -n 3 | tr '\n' ' ')...)," \
		"unexpected $(comm -23 <(echo "$got") <(echo "$1") | wc -l)"
}

# A worker that re-attaches with --exact, then --no-exact, 5 times: each
# re-attach rebuilds and swaps a generation, racing the other workers.
toggle_exact() {
	local i opt
	for i in $(seq 1 5); do
		for opt in --exact --no-exact; do
			timeout 30 nsenter --net=/run/netns/$SV "$SIEVE" xdp attach $IF $opt \
				>/dev/null 2>>"$WORK/fail.a.err" || echo "attach $opt: exit $?" >>"$WORK/fail.a"
		done
	done
}

# Four workers block twenty addresses each, one command at a time, while a
# fifth blocks and unblocks addresses of its own and a sixth switches
# --exact on and off: every unblock and switch builds a generation, so
# swaps race each other and the live adds.
concurrent_blocks() {
	local p i pids=
	for p in 0 1 2 3; do
		for i in $(seq 0 19); do echo "block 198.51.100.$((20 + 20 * p + i))"; done |
			run_commands "$WORK/fail.$p" &
		pids="$pids $!"
	done
	for i in $(seq 1 10); do echo "block 192.0.2.$i"; echo "unblock 192.0.2.$i"; done |
		run_commands "$WORK/fail.u" &
	pids="$pids $!"
	toggle_exact &
	pids="$pids $!"
	wait_bounded 120 $pids
}

case_concurrent_changes() {
	local f want
	attach || return
	rm -f "$WORK"/fail.*
	on block $B4 >/dev/null || { fail "block $B4"; return; }
	under_traffic concurrent_blocks
	for f in "$WORK"/fail.?; do
		[ -s "$f" ] && fail "$(wc -l <"$f") commands failed, e.g. $(head -n 1 "$f"): $(head -n 1 "$f.err")"
	done
	want=$( (echo $B4; seq 20 99 | sed 's/^/198.51.100./') | sort)
	expect_list "$want" "the list after the concurrent run"
	expect_eq "$(on status -j | python3 -c "import json,sys
s = json.load(sys.stdin)[0]
print(s['entries'], s['exact'], s['bloom_bytes'] > 0)")" "81 False True" \
		"entries, exact and a live bloom map after the run"
	for a in $SAMPLES; do
		expect_eq "$(pings $a $SV4 3)" 0 "pings from $a, blocked during the run"
	done
	expect_eq "$(pings $C4 $SV4)" 5 "pings from C after the run"
}

# Four lists, each with B and one of the sample addresses, loaded again and
# again by four workers at once while a fifth switches --exact on and off:
# the list ends as exactly one of them, and the maps hold that one.
concurrent_loads() {
	local p i pids=
	for p in 0 1 2 3; do
		for i in $(seq 1 10); do echo "load $WORK/list.$p"; done | run_commands "$WORK/fail.$p" &
		pids="$pids $!"
	done
	toggle_exact &
	pids="$pids $!"
	wait_bounded 120 $pids
}

case_concurrent_loads() {
	local f p winner= samples=($SAMPLES)
	attach || return
	rm -f "$WORK"/fail.*
	for p in 0 1 2 3; do
		(echo $B4; echo ${samples[p]}; seq $((20 + 20 * p)) $((37 + 20 * p)) |
			sed 's/^/198.51.100./') | sort >"$WORK/list.$p"
	done
	on block $B4 >/dev/null || { fail "block $B4"; return; }
	under_traffic concurrent_loads
	for f in "$WORK"/fail.?; do
		[ -s "$f" ] && fail "$(wc -l <"$f") commands failed, e.g. $(head -n 1 "$f"): $(head -n 1 "$f.err")"
	done
	for p in 0 1 2 3; do
		[ "$(on list | cut -f3 | sort)" = "$(cat "$WORK/list.$p")" ] && winner=$p
	done
	[ -n "$winner" ] || { fail "the list is none of the four loaded: $(on list | wc -l) entries"; return; }
	expect_eq "$(on status -j | python3 -c "import json,sys
s = json.load(sys.stdin)[0]
print(s['entries'], s['exact'], s['bloom_bytes'] > 0)")" "20 False True" \
		"entries, exact and a live bloom map after the run"
	for p in 0 1 2 3; do
		expect_eq "$(pings ${samples[p]} $SV4 3)" $([ $p = $winner ] && echo 0 || echo 3) \
			"pings from ${samples[p]} (list $winner live)"
	done
}

# Three workers attach and detach the first interface at once, ten times
# each, while a fourth blocks: every command succeeds, and afterwards the
# interface is either attached with all its pins, or detached without any.
case_concurrent_attach_detach() {
	local p i pids= xdp pins
	rm -f "$WORK"/fail.*
	for p in 0 1 2; do
		for i in $(seq 1 10); do
			timeout 30 nsenter --net=/run/netns/$SV "$SIEVE" xdp attach $IF \
				>/dev/null 2>>"$WORK/fail.$p.err" || echo "attach: exit $?" >>"$WORK/fail.$p"
			timeout 30 nsenter --net=/run/netns/$SV "$SIEVE" xdp detach $IF \
				>/dev/null 2>>"$WORK/fail.$p.err" || echo "detach: exit $?" >>"$WORK/fail.$p"
		done &
		pids="$pids $!"
	done
	# A block either lands on an attached interface or finds none (exit 2
	# with "not attached"): any other error is a failure.
	for i in $(seq 1 20); do
		timeout 30 nsenter --net=/run/netns/$SV "$SIEVE" xdp block -i $IF 192.0.2.$i \
			>/dev/null 2>>"$WORK/fail.b.err"
	done &
	pids="$pids $!"
	wait_bounded 120 $pids
	for f in "$WORK"/fail.?; do
		[ -s "$f" ] && fail "$(wc -l <"$f") commands failed, e.g. $(head -n 1 "$f"): $(head -n 1 "$f.err")"
	done
	grep -v "not attached\|no longer attached" "$WORK/fail.b.err" | head -n 1 |
		while read -r l; do fail "block: $l"; done
	xdp=$(sv ip link show $IF | grep -c "prog/xdp\|xdp")
	pins=$(ls /sys/fs/bpf/sieve/netns-*/"$IF" 2>/dev/null | wc -l)
	if [ "$xdp" != 0 ]; then
		expect_eq "$pins" 6 "pins of the attached interface"
		on status >/dev/null || fail "status of the attached interface"
	else
		expect_eq "$pins" 0 "pins of the detached interface"
	fi
	attach || return
	on block $A4 >/dev/null || fail "block after the run"
	expect_eq "$(pings $A4 $SV4)" 0 "pings from A blocked after the run"
	sieve detach $IF >/dev/null || fail "detach after the run"
	expect_eq "$(pings $A4 $SV4)" 5 "pings from A after the last detach"
}

# Commands killed (SIGKILL) at random points of a load of 20000 entries
# or of a block, under traffic: after each, the live generation still
# drops B and the next command succeeds; in the end the list, the maps
# and the state folder are in step, with no temporary file left behind.
killed_commands() {
	local i pid sub want samples=($SAMPLES)
	for i in $(seq 1 12); do
		case $((i % 3)) in
		0) sub="block 192.0.2.$i" ;;
		*) sub="load $WORK/big" ;;
		esac
		nsenter --net=/run/netns/$SV "$SIEVE" xdp $sub -i $IF >/dev/null 2>&1 &
		pid=$!
		sleep "0.$((RANDOM % 40))"
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		expect_eq "$(on status -j | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['bloom_bytes'] > 0)")" \
			True "a live bloom map after kill number $i"
		on block 192.0.2.$((100 + i)) >/dev/null || fail "block after kill number $i"
		on unblock 192.0.2.$((100 + i)) >/dev/null || fail "unblock after kill number $i"
		# The maps hold what the list says: the second sample is on the big list only.
		if on list | grep -q "	${samples[1]}$"; then
			want=0; extra_drops=$((extra_drops + 3))
		else
			want=3
		fi
		expect_eq "$(pings ${samples[1]} $SV4 3)" $want "pings from ${samples[1]} after kill number $i"
	done
}

case_killed_commands() {
	local samples=($SAMPLES) small=$WORK/small
	attach || return
	python3 -c "
import sys
print('$B4')
print('${samples[1]}')
for i in range(20000):
    print('10.%d.%d.0/24' % (i // 256, i % 256))" >"$WORK/big"
	printf '%s\n%s\n' $B4 ${samples[0]} >"$small"
	on block $B4 >/dev/null || { fail "block $B4"; return; }
	under_traffic killed_commands
	on load "$small" >/dev/null || fail "load after the kills"
	on block 192.0.2.200 >/dev/null || fail "block after the kills"
	expect_list "$( (cat "$small"; echo 192.0.2.200) | sort)" "the list after the kills"
	expect_eq "$(on status -j | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['entries'])")" \
		3 "entries in the live config after the kills"
	expect_eq "$(pings ${samples[0]} $SV4 3)" 0 "pings from ${samples[0]} (on the list)"
	expect_eq "$(pings ${samples[1]} $SV4 3)" 3 "pings from ${samples[1]} (not on it)"
	local left; left=$(ls /run/sieve/xdp/netns-*/ 2>/dev/null | grep -c "^$IF\.list\.")
	expect_eq "$left" 0 "temporary list files left beside $IF.list"
}

CASES="block_source block_cidr many_prefix_lengths ipv6_source_and_nd five_tuple byte_counters
	load_under_traffic bad_file_loads_nothing load_feeds detach_leaves_clean generic_mode native_mode
	exact_mode
	errors several_interfaces concurrent_changes concurrent_loads
	concurrent_attach_detach killed_commands"

main() {
	if [ "$(id -u)" != 0 ]; then
		echo "test-e2e needs root (network namespaces, XDP)"; echo "0 1" >"$RESULTS"; exit 2
	fi
	FLOOR=$(dirname "$SIEVE")/bpf/floor.bpf.o
	if ! setup; then
		echo "setting up the namespaces failed"; echo "0 1" >"$RESULTS"; exit 1
	fi
	for c in $CASES; do
		case $c in *"$FILTER"*) ;; *) continue;; esac
		case_failed=0
		case_$c
		sieve detach $IF $IF2 >/dev/null 2>&1
		if [ $case_failed = 0 ]; then
			echo "ok   e2e_$c"; passed=$((passed + 1))
		else
			echo "FAIL e2e_$c"; failed=$((failed + 1))
		fi
	done
	echo "$passed $failed" >"$RESULTS"
	echo "$passed passed, $failed failed"
	[ $failed = 0 ]
}

main
