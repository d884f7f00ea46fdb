#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# An upgrade of the packages under traffic, on this machine (root: it
# installs the packages, then purges them), the way an operator does it:
#  - the OLD release's packages (sieve, libsieve0) are installed with dpkg;
#    with its CLI three interfaces of a namespace of the test's own are
#    attached, each with its list and settings (bloom-map; blocked; exact
#    mode), blocking sources of every kind: a host, a prefix (by `load` of
#    a feed), a service, a flow, and entries of IPv6 beside them;
#  - from a second namespace, a blocked and an allowed source per interface
#    send numbered UDP datagrams without pause, while `dpkg -i` installs
#    the NEW packages over the old ones, `sieve agent --check` judges the
#    kept configuration, the new agent starts as the service would (in the
#    namespace, until it says what it enforces) and `status` runs;
#  - the receiver counts per source: not one datagram of a blocked source
#    arrives at any time, the allowed ones do;
#  - after it, the new CLI's block, unblock and load take effect on the
#    next packets, and `list` shows every entry the old release stored;
#  - detach and `dpkg --purge` leave nothing: no package, none of their
#    files, no /etc/sieve, /var/lib/sieve, no pins of the namespace.
# Nothing here knows the pins' layout: the test drives packages and the
# CLI only, so it judges any change of layout between the two releases.
# sieve-dkms and libsieve-dev are not part of it (the module is not used
# by these backends, and its DKMS build costs a minute: deb_test.sh
# installs and purges all four).
# Usage: upgrade_test.sh OLD_DEB_DIR NEW_DEB_DIR OLD_REV [RESULT_FILE]
set -uo pipefail
usage="usage: upgrade_test.sh OLD_DEB_DIR NEW_DEB_DIR OLD_REV [RESULT_FILE]"
old_dir=${1:?$usage}
new_dir=${2:?$usage}
old_rev=${3:?$usage}
result_file=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
. "$here/purge.sh"

PACKAGES="sieve libsieve0"
[ "$(id -u)" = 0 ] || { echo "upgrade_test.sh: needs root (it installs packages)" >&2; exit 2; }
export DEBIAN_FRONTEND=noninteractive
# The packages' own store, /var/lib/sieve, as after a real upgrade.
unset SIEVE_STATE_DIR

TRAFFIC=$here/../e2e/traffic.py
TAG=$$
CL=sieve-upg-cl-$TAG
SV=sieve-upg-sv-$TAG
work=$(mktemp -d /tmp/sieve-upgrade.XXXXXX)
installed_here=0
agent_pid=
bg_pids=()

sv() { nsenter --net=/run/netns/$SV "$@"; }
cl() { nsenter --net=/run/netns/$CL "$@"; }
xdp() { sv /usr/bin/sieve xdp "$@"; }
# For what runs in the background: nsenter execs the command (no fork for
# a network namespace), so $! is its pid, to stop and to wait for.
SVX="nsenter --net=/run/netns/$SV"
CLX="nsenter --net=/run/netns/$CL"

# Three veth pairs: client ucN$TAG, server usN$TAG (XDP), one documentation
# range each. A: allowed source, B: blocked source (the kind named below).
IFS_SV=("us1$TAG" "us2$TAG" "us3$TAG")
IFS_CL=("uc1$TAG" "uc2$TAG" "uc3$TAG")
NET=(192.0.2 198.51.100 203.0.113)
SV4=(192.0.2.1 198.51.100.1 203.0.113.1)
A4=(192.0.2.100 198.51.100.100 203.0.113.100)
B4=(192.0.2.3 198.51.100.3 203.0.113.3)
LISTS=("upg1-$TAG" "upg2-$TAG" "upg3-$TAG")

# must NAME COMMAND...: as check_out, but what follows needs it: a failure
# ends the test (the trap cleans up).
must() {
	local before=$failed
	check_out "$@"
	[ "$failed" = "$before" ] || { finish "$result_file"; exit 1; }
}

# The prerm detaches every attachment of the host's bpffs (detach --all):
# with a bpffs of its own, others' attachments on this machine stay.
purge() {
	unshare -m --propagation private sh -c \
		"mount -t bpf bpf /sys/fs/bpf && dpkg --purge $PACKAGES" >"$work/purge.log" 2>&1
}

cleanup() {
	local p i
	for p in "${bg_pids[@]}" $agent_pid; do kill "$p" 2>/dev/null; done
	for p in "${bg_pids[@]}" $agent_pid; do wait "$p" 2>/dev/null; done
	if [ -x /usr/bin/sieve ] && [ -e /run/netns/$SV ]; then
		for i in 0 1 2; do xdp detach "${IFS_SV[$i]}" >/dev/null 2>&1; done
	fi
	[ ! -e /run/netns/$SV ] || rm -rf "/sys/fs/bpf/sieve/netns-$(sv stat -L -c %i /proc/self/ns/net)"
	ip netns del $CL 2>/dev/null
	ip netns del $SV 2>/dev/null
	# The test's own mess, if it died between install and purge.
	[ "$installed_here" = 0 ] || purge
	rm -rf "$work"
}
at_exit cleanup
trap 'exit 130' INT TERM

# One run at a time installs the packages on this machine (test-deb takes
# the same lock around deb_test.sh, dist.mk): dpkg's own lock makes a
# second dpkg fail, not wait, and a purge would pull them from under us.
exec 9>/run/lock/sieve-packages-test.lock
flock -w 900 9 || { not_ok "no other package test running (lock held 15 min)"; finish "$result_file"; exit 1; }

debs_of() {
	local dir=$1 p f
	for p in $PACKAGES; do
		f=$(ls "$dir/${p}_"*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -n 1)
		[ -n "$f" ] || { echo "no $p package in $dir" >&2; return 1; }
		realpath "$f"
	done
}
old_debs=$(debs_of "$old_dir") new_debs=$(debs_of "$new_dir") ||
	{ not_ok "the packages of both releases are built" "old: $old_dir" "new: $new_dir"; finish "$result_file"; exit 1; }
old_version=$(dpkg-deb -f "$(head -n 1 <<<"$old_debs")" Version)
new_version=$(dpkg-deb -f "$(head -n 1 <<<"$new_debs")" Version)
echo "# from $old_version (commit $old_rev) to $new_version (this tree)"

purge_left_over
if [ -e /var/lib/sieve ] || [ -e /etc/sieve ]; then
	not_ok "no /var/lib/sieve or /etc/sieve before the test (someone's store: move it away)"
	finish "$result_file"
	exit 1
fi

# ---- the old release, attached and blocking ----

installed_here=1
# shellcheck disable=SC2086 # the packages: one argument each
must "dpkg -i the packages of $old_version ($old_rev)" dpkg -i $old_debs

setup_net() {
	local i
	ip netns add $CL && ip netns add $SV || return 1
	cl ip link set lo up && sv ip link set lo up || return 1
	for i in 0 1 2; do
		ip link add "${IFS_CL[$i]}" netns $CL type veth peer name "${IFS_SV[$i]}" netns $SV || return 1
		cl ip addr add "${A4[$i]}/24" dev "${IFS_CL[$i]}" &&
		cl ip addr add "${B4[$i]}/24" dev "${IFS_CL[$i]}" &&
		sv ip addr add "${SV4[$i]}/24" dev "${IFS_SV[$i]}" &&
		cl ip link set "${IFS_CL[$i]}" up && sv ip link set "${IFS_SV[$i]}" up || return 1
	done
	for i in 0 1 2; do
		cl ping -c 1 -W 2 -I "${A4[$i]}" "${SV4[$i]}" >/dev/null || return 1
	done
}
must "two namespaces, three veth pairs" setup_net

# Interface 1: bloom-map, B blocked by address, a service blocked (A's
# datagrams to it must not arrive), IPv6 entries beside them.
# Interface 2: blocked backend, B blocked by a prefix of a feed (`load`).
# Interface 3: exact mode, B blocked by its flow, one entry with a TTL.
must "old: attach ${IFS_SV[0]} (bloom-map)" xdp attach --list "${LISTS[0]}" "${IFS_SV[0]}"
must "old: attach ${IFS_SV[1]} (blocked backend)" xdp attach --list "${LISTS[1]}" --backend blocked "${IFS_SV[1]}"
must "old: attach ${IFS_SV[2]} (exact mode)" xdp attach --list "${LISTS[2]}" --exact "${IFS_SV[2]}"
check_out "old: block a host, a service, IPv6 entries" xdp block -i "${IFS_SV[0]}" \
	--comment "before the upgrade" "${B4[0]}" "udp:${SV4[0]}:7001" 2001:db8:5::7 2001:db8:6::/48
printf '# a feed\n%s.0/28\n%s.77\n2001:db8:7::/64\n' "${NET[1]}" "${NET[1]}" >"$work/feed-old"
check_out "old: load a feed (a prefix, a host, an IPv6 prefix)" \
	xdp load -i "${IFS_SV[1]}" --origin feed-$TAG "$work/feed-old"
check_out "old: block a flow, a host with a TTL, a service" xdp block -i "${IFS_SV[2]}" \
	"udp:${B4[2]}:6001,${SV4[2]}:7000" "${NET[2]}.55" "tcp:${SV4[2]}:22"
check_out "old: block with a TTL" xdp block -i "${IFS_SV[2]}" --ttl 1d "${NET[2]}.56"
# What the old release stored: (list, entry) of each, as its CLI lists them.
entries() { python3 -c 'import json, sys
for l in json.load(sys.stdin):
	for e in l["entries"]: print(l["list"], e["entry"])'; }
for i in 0 1 2; do
	xdp list -j --list "${LISTS[$i]}" | entries
done | sort >"$work/before"
check "the old release lists the 11 entries" test "$(wc -l <"$work/before")" = 11
xdp status >"$work/status-old" 2>&1
check_out "old: status" cat "$work/status-old"

# ---- traffic across the upgrade ----

# udp-send's sources: per interface A:6000 and B:6001 to port 7000, and on
# interface 1 A:6002 to the blocked service (port 7001). 250 datagrams a
# second each, until the stop file (at most 2 minutes).
PPS=250
start_traffic() {
	local i port
	rm -f "$work/stop" "$work"/recv.* "$work"/sent.*
	for port in 7000 7001; do
		$SVX python3 "$TRAFFIC" udp-recv 0.0.0.0 $port 150 "$work/stop" >"$work/recv.$port" &
		bg_pids+=($!)
	done
	for port in 7000 7001; do
		for i in $(seq 1 100); do grep -q ready "$work/recv.$port" 2>/dev/null && break; sleep 0.05; done
	done
	for i in 0 1 2; do
		$CLX python3 "$TRAFFIC" udp-send "${A4[$i]}" 6000 "${SV4[$i]}" 7000 $((PPS * 120)) $PPS \
			"$work/stop" >"$work/sent.A$i" & bg_pids+=($!)
		$CLX python3 "$TRAFFIC" udp-send "${B4[$i]}" 6001 "${SV4[$i]}" 7000 $((PPS * 120)) $PPS \
			"$work/stop" >"$work/sent.B$i" & bg_pids+=($!)
	done
	$CLX python3 "$TRAFFIC" udp-send "${A4[0]}" 6002 "${SV4[0]}" 7001 $((PPS * 120)) $PPS \
		"$work/stop" >"$work/sent.S0" & bg_pids+=($!)
}
stop_traffic() {
	local p
	touch "$work/stop"
	for p in "${bg_pids[@]}"; do
		timeout 20 tail --pid="$p" -f /dev/null; wait "$p" 2>/dev/null
	done
	bg_pids=()
}
# received PORT SRC SPORT: datagrams the receiver on PORT counted from SRC:SPORT.
received() {
	python3 -c 'import json, sys
print(json.loads(open(sys.argv[1]).read().splitlines()[-1]).get(sys.argv[2], 0))' \
		"$work/recv.$1" "$2:$3" 2>/dev/null || echo "none"
}

start_traffic
sleep 2

# The new packages over the old, as an upgrade does: dpkg -i of the new
# version while the old one is installed. The postinst (dh_installsystemd)
# restarts sieve.service where systemd runs (/run/systemd/system), and the
# prerm stops it only on remove: the agent is started below in the test's
# namespace as that restart would start it (a service the postinst starts
# runs in the host's namespace, and has no attachment of ours).
# shellcheck disable=SC2086 # the packages: one argument each
check_out "dpkg -i the packages of $new_version over $old_version, under traffic" dpkg -i $new_debs
check "dpkg says $new_version is installed" \
	sh -c "dpkg-query -W -f='\${Version} \${Status}' sieve | grep -qx '$new_version install ok installed'"
# shellcheck disable=SC2086 # the packages: one argument each
check_out "the installed files are the new package's (dpkg --verify)" dpkg --verify $PACKAGES
check "the conffile /etc/sieve/sieve.conf is kept" test -f /etc/sieve/sieve.conf
check_out "new: sieve agent --check accepts the kept configuration" /usr/bin/sieve agent --check
sleep 1
# Exit 3 while an interface still runs the old program: its maps are of
# another layout, changes do not reach them (status says so, and why).
status_rc=0
xdp status >"$work/status-mid" 2>&1 || status_rc=$?
check_out "new: status while the old program may still run" cat "$work/status-mid"
check "new: status exits 0, or 3 naming the older program (exit $status_rc)" \
	sh -c "[ $status_rc = 0 ] || { [ $status_rc = 3 ] && grep -q \"older sieve's program\" '$work/status-mid'; }"

# The service's restart: the agent in the namespace (its attachments are
# that namespace's), until it says what it enforces.
$SVX /usr/bin/sieve agent </dev/null >/dev/null 2>"$work/agent.log" &
agent_pid=$!
for i in $(seq 1 300); do
	grep -q 'enforcing:' "$work/agent.log" 2>/dev/null && break
	kill -0 $agent_pid 2>/dev/null || break
	sleep 0.1
done
check_out "the new agent starts and says what it enforces" grep 'enforcing:' "$work/agent.log"
check "the agent failed on no attachment" grep -q 'enforcing: .* 0 failed' "$work/agent.log"
sed 's/^/# agent: /' "$work/agent.log"
# older: how many interfaces run an older sieve's program ("none": no status).
older() { xdp status -j 2>/dev/null | python3 -c 'import json, sys
print(sum(1 for s in json.load(sys.stdin) if s.get("older_program")))' 2>/dev/null || echo none; }
check "no interface runs the old program after the agent's start" test "$(older)" = 0
sleep 2
stop_traffic

# most GOT SENT: at least 95% of more than 3 seconds' worth arrived.
most() {
	case $1$2 in *[!0-9]*|'') return 1;; esac
	[ "$2" -gt $((PPS * 3)) ] && [ $(($1 * 100)) -ge $(($2 * 95)) ]
}
sent() { tail -n 1 "$work/sent.$1" 2>/dev/null; }
for i in 0 1 2; do
	got=$(received 7000 "${B4[$i]}" 6001)
	echo "# ${IFS_SV[$i]}: B sent $(sent B$i), received $got; A sent $(sent A$i), received $(received 7000 "${A4[$i]}" 6000)"
	check "not one datagram of blocked ${B4[$i]} (${IFS_SV[$i]}) arrived across the upgrade" test "$got" = 0
	got=$(received 7000 "${A4[$i]}" 6000) n=$(sent A$i)
	# Allowed traffic is not XDP's to lose; the stack of a busy machine may.
	check "the allowed source's datagrams arrived ($got of $n, >= 95%)" most "$got" "$n"
done
got=$(received 7001 "${A4[0]}" 6002)
echo "# blocked service: sent $(sent S0), received $got"
check "not one datagram to the blocked service arrived" test "$got" = 0

# ---- the new release's commands ----

# burst PORT SRC SPORT DST: 40 datagrams; prints how many arrived.
burst() {
	local port=$1 src=$2 sport=$3 dst=$4 rp
	rm -f "$work/stop" "$work/recv.$port"
	$SVX python3 "$TRAFFIC" udp-recv 0.0.0.0 "$port" 10 "$work/stop" >"$work/recv.$port" &
	rp=$!
	for i in $(seq 1 100); do grep -q ready "$work/recv.$port" 2>/dev/null && break; sleep 0.05; done
	cl python3 "$TRAFFIC" udp-send "$src" "$sport" "$dst" "$port" 40 400 >/dev/null
	sleep 0.3
	touch "$work/stop"
	wait $rp
	received "$port" "$src" "$sport"
}
check_out "new: block ${A4[0]} (bloom-map)" xdp block -i "${IFS_SV[0]}" "${A4[0]}"
check "new: ${A4[0]} is dropped after its block" test "$(burst 7000 "${A4[0]}" 6100 "${SV4[0]}")" = 0
check_out "new: unblock ${B4[0]}" xdp unblock -i "${IFS_SV[0]}" "${B4[0]}"
check "new: ${B4[0]} passes after its unblock" test "$(burst 7000 "${B4[0]}" 6101 "${SV4[0]}")" = 40
printf '%s\n' "${A4[1]}" >"$work/feed-new"
check_out "new: load a second feed (${A4[1]}) on the blocked backend" \
	xdp load -i "${IFS_SV[1]}" --origin feed2-$TAG "$work/feed-new"
check "new: ${A4[1]} is dropped after the load" test "$(burst 7000 "${A4[1]}" 6102 "${SV4[1]}")" = 0
check "new: ${B4[1]} (the old feed's prefix) is still dropped" test "$(burst 7000 "${B4[1]}" 6103 "${SV4[1]}")" = 0
check_out "new: block ${A4[2]} (exact mode)" xdp block -i "${IFS_SV[2]}" "${A4[2]}"
check "new: ${A4[2]} is dropped after its block" test "$(burst 7000 "${A4[2]}" 6104 "${SV4[2]}")" = 0
check "new: the flow of ${B4[2]} is still dropped" test "$(burst 7000 "${B4[2]}" 6001 "${SV4[2]}")" = 0
check "new: another port of ${B4[2]} (not the flow) passes" test "$(burst 7000 "${B4[2]}" 6105 "${SV4[2]}")" = 40
check_out "new: status" xdp status
check "new: status says no interface runs an older program" test "$(older)" = 0

# The store kept everything: the old entries (but the one unblocked) and the new ones.
for i in 0 1 2; do
	xdp list -j --list "${LISTS[$i]}" | entries
done | sort >"$work/after"
{ grep -vx "${LISTS[0]} ${B4[0]}" "$work/before"
  printf '%s\n' "${LISTS[0]} ${A4[0]}" "${LISTS[1]} ${A4[1]}" "${LISTS[2]} ${A4[2]}"; } | sort >"$work/want"
if diff "$work/want" "$work/after" >"$work/diff"; then
	ok "new: list shows every entry the old release stored, and the new ones"
else
	not_ok "new: list shows every entry the old release stored, and the new ones" "$(cat "$work/diff")"
fi

# ---- leaving nothing ----

kill $agent_pid
for i in $(seq 1 100); do kill -0 $agent_pid 2>/dev/null || break; sleep 0.1; done
check "the agent stops on SIGTERM" sh -c "! kill -0 $agent_pid 2>/dev/null"
wait $agent_pid 2>/dev/null
agent_pid=
netns_pins=/sys/fs/bpf/sieve/netns-$(sv stat -L -c %i /proc/self/ns/net)
check_out "new: detach the three interfaces" xdp detach "${IFS_SV[@]}"
check_out "no pins of the namespace are left" sh -c "! find '$netns_pins' -mindepth 1 2>/dev/null | grep ."
# detach leaves the namespace's folder, empty: the test's own, removed.
rmdir "$netns_pins" 2>/dev/null
for p in $PACKAGES; do dpkg -L "$p" 2>/dev/null; done | sort -u >"$work/files"
check_out "dpkg --purge removes the packages" purge
installed_here=0
check_purged "$work/files" /etc/sieve /var/lib/sieve /usr/lib/sieve

finish "$result_file"
