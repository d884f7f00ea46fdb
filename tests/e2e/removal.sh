#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Removal and leftovers (issue 22, items 7 and 8), for e2e.sh's cases:
#   detach_all       `xdp detach --all` takes every interface of every
#                    namespace down (links, pins, records): traffic passes;
#   detach_all_carries_on  one interface that fails does not stop the
#                    others; each failure is reported, exit 2;
#   detach_all_record_fails  a record the store will not drop does not stop
#                    the others'; exit 2;
#   detach_all_foreign_dir  detach --all leaves a state folder that holds
#                    no store as it was (the prerm over someone's folder);
#   prerm_store_fails  the package's prerm lets the removal go on when the
#                    pins are detached but the store cannot be opened;
#   no_empty_folders detach and a failed attach leave no empty netns-N;
#   prune_gone       a deleted namespace's pins and records are pruned;
#   inode_reuse      a new namespace that gets a deleted one's inode number
#                    does not inherit its attachments: the agent prunes
#                    them at start instead of restoring them.
# detach --all acts on every pin of the host and other runs share the
# host's bpffs, so this runs in a mount namespace of its own with a bpffs
# of its own at /sys/fs/bpf: the pins, and so the links, go with it.
# Usage: removal.sh SIEVE CASE; prints "FAIL: ..." lines, exit 1 on any.
set -u
SIEVE=$(realpath "$1")
CASE=$2
FLOOR=$(dirname "$SIEVE")/bench-xdp/floor.bpf.o
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/lib.sh"
if [ -z "${SIEVE_REMOVAL_ISOLATED:-}" ]; then
	exec env SIEVE_REMOVAL_ISOLATED=1 unshare -m --propagation private "$0" "$@"
fi
mount -t bpf bpf /sys/fs/bpf || { echo "FAIL: mounting a bpffs of our own"; exit 1; }

T=$$
WORK=$(mktemp -d /tmp/sieve-removal.XXXXXX)
export SIEVE_STATE_DIR=$WORK/state
ROOT=/sys/fs/bpf/sieve
NSS=()
AGENT_PID=

cleanup() {
	[ -z "$AGENT_PID" ] || { kill "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null; }
	for n in "${NSS[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$WORK"
}
at_exit cleanup

mkns() { ip netns add "$1" && NSS+=("$1"); }
xdp() { local n=$1; shift; in_ns "$n" "$SIEVE" xdp "$@"; }
ino() { stat -L -c %i "/run/netns/$1"; }
has_xdp() { in_ns "$1" ip link show dev "$2" 2>/dev/null | grep -q xdp; }
# A veth pair between two namespaces, addressed 10.T.0.1 (left) and .2.
veth() {
	veth_pair "$1" "$2" "$3" "$4" || return 1
	in_ns "$1" ip addr add "$5.1/24" dev "$2"; in_ns "$3" ip addr add "$5.2/24" dev "$4"
}
pings() { in_ns "$1" ping -n -q -c 3 -i 0.05 -W 1 "$2" 2>/dev/null | sed -n 's/.* \([0-9]*\) received.*/\1/p'; }
folders() { find "$ROOT" -mindepth 1 -maxdepth 1 -name 'netns-*' 2>/dev/null | wc -l; }
# The interfaces of a -j document {"op": OP, "interfaces": [...]}: their count.
json_len() {
	python3 -c 'import json,sys
d = json.load(sys.stdin)
assert d["op"] == sys.argv[1] and list(d) == ["op", "interfaces"], d
print(len(d["interfaces"]))' "$1"
}

case_detach_all() {
	local A=rma$T B=rmb$T out
	mkns "$A" && mkns "$B" || { fail "namespaces"; return; }
	veth "$A" "ra$T" "$B" "rb$T" 10.201.1 && veth "$A" "rc$T" "$B" "rd$T" 10.201.2 || { fail "veth"; return; }
	xdp "$A" attach "ra$T" "rc$T" >/dev/null || fail "attach in A"
	xdp "$B" attach "rb$T" >/dev/null || fail "attach in B"
	xdp "$A" block -i "ra$T" 10.201.1.2 >/dev/null || fail "block B's address in A"
	expect_eq "$(pings "$B" 10.201.1.1)" 0 "pings from B, blocked"
	# What an operator without sieve would try: it cannot take off a pinned link.
	in_ns "$A" ip link set dev "ra$T" xdp off 2>/dev/null
	has_xdp "$A" "ra$T" || fail "ip link ... xdp off took a pinned link off (the premise)"
	out=$("$SIEVE" xdp detach --all -j) || fail "detach --all -j: $out"
	expect_eq "$(json_len detach <<<"$out")" 3 "interfaces detach --all -j reports"
	python3 - "$out" <<-'EOF' || fail "detach --all -j said: $out"
	import json, sys
	for i in json.loads(sys.argv[1])["interfaces"]:
	    assert list(i)[:2] == ["iface", "result"] and i["result"] == "detached", i
	    assert i["was_linked"] and i["record_removed"] and "error" not in i, i
	EOF
	for i in "$A ra$T" "$A rc$T" "$B rb$T"; do
		! has_xdp "${i%% *}" "${i#* }" || fail "XDP still on ${i#* } after detach --all"
	done
	expect_eq "$(pings "$B" 10.201.1.1)" 3 "pings from B after detach --all"
	expect_eq "$(folders)" 0 "netns-N folders left"
	# The records went too: nothing is left to restore.
	expect_eq "$("$SIEVE" xdp detach --all -j | json_len detach)" 0 "a second detach --all -j"
	out=$("$SIEVE" xdp detach --all) || fail "a second detach --all"
	expect_eq "$out" "no interface had the blocklist" "a second detach --all"
	xdp "$A" list | grep -q 10.201.1.2 || fail "the list lost its entry"
	"$SIEVE" xdp detach --all "ra$T" >/dev/null 2>&1 && fail "detach --all with an IFACE accepted"
	"$SIEVE" xdp detach >/dev/null 2>&1 && fail "detach without IFACE or --all accepted"
}

# detach --all, as the package's prerm runs it, over a state folder that
# holds no store (someone else's /var/lib/sieve): the pins go, and the
# folder is left as it was: no sieve.db made in it, its mode and owner not
# changed, and no refusal because another user owns it.
case_detach_all_foreign_dir() {
	local A=rma$T B=rmb$T d out
	mkns "$A" && mkns "$B" || { fail "namespaces"; return; }
	veth "$A" "ra$T" "$B" "rb$T" 10.201.9 || { fail "veth"; return; }
	xdp "$A" attach "ra$T" >/dev/null || fail "attach"
	for d in mine theirs; do
		mkdir -m 0755 "$WORK/$d" && echo data >"$WORK/$d/theirs.txt"
	done
	chown 12345:12345 "$WORK/theirs"
	out=$(SIEVE_STATE_DIR=$WORK/mine "$SIEVE" xdp detach --all 2>&1) ||
		fail "detach --all over a folder without a store: $out"
	! has_xdp "$A" "ra$T" || fail "XDP still on ra$T after detach --all"
	[ ! -e "$WORK/mine/sieve.db" ] || fail "detach --all made a store in a folder that had none"
	expect_eq "$(stat -c %a "$WORK/mine")" 755 "the folder's mode after detach --all"
	xdp "$A" attach "ra$T" >/dev/null || fail "attach again"
	out=$(SIEVE_STATE_DIR=$WORK/theirs "$SIEVE" xdp detach --all 2>&1) ||
		fail "detach --all over another user's folder without a store: $out"
	! has_xdp "$A" "ra$T" || fail "XDP still on ra$T after the second detach --all"
	expect_eq "$(stat -c '%a %u' "$WORK/theirs")" "755 12345" "the other user's folder"
	[ ! -e "$WORK/theirs/sieve.db" ] || fail "detach --all made a store in another user's folder"
}

# The package's prerm (debian/sieve.prerm, run as dpkg does, with this
# build as /usr/bin/sieve on an overlay of this mount namespace): a store
# that cannot be opened (here a sieve.conf with a typo) does not refuse the
# removal once every program is detached; one left attached does.
case_prerm_store_fails() {
	local A=rma$T B=rmb$T out rc
	mkns "$A" && mkns "$B" || { fail "namespaces"; return; }
	veth "$A" "ra$T" "$B" "rb$T" 10.201.10 || { fail "veth"; return; }
	xdp "$A" attach "ra$T" >/dev/null || fail "attach"
	mkdir "$WORK/up" "$WORK/wk" && cp "$SIEVE" "$WORK/up/sieve" &&
		mount -t overlay overlay -o "lowerdir=/usr/bin,upperdir=$WORK/up,workdir=$WORK/wk" \
			/usr/bin || { fail "an overlay over /usr/bin"; return; }
	printf '[agent]\nexpire_interval = soon\n' >"$WORK/typo.conf"
	out=$(env -u SIEVE_STATE_DIR SIEVE_CONFIG="$WORK/typo.conf" sh "$TOP/debian/sieve.prerm" remove 2>&1)
	rc=$?
	expect_eq "$rc" 0 "prerm remove with every program detached, the store not opened ($out)"
	! has_xdp "$A" "ra$T" || fail "XDP still on ra$T after the prerm"
	grep -q "typo.conf" <<<"$out" || fail "the prerm did not pass on why the store was not opened: $out"
	# A sieve that detaches nothing: the removal is refused.
	xdp "$A" attach "ra$T" >/dev/null || fail "attach again"
	printf '#!/bin/sh\nexit 2\n' >/usr/bin/sieve
	sh "$TOP/debian/sieve.prerm" remove >/dev/null 2>&1 && fail "prerm remove with XDP still attached exited 0"
	has_xdp "$A" "ra$T" || fail "the premise: XDP on ra$T"
	umount -l /usr/bin
	"$SIEVE" xdp detach --all >/dev/null
}

case_no_empty_folders() {
	local A=rma$T B=rmb$T
	mkns "$A" && mkns "$B" || { fail "namespaces"; return; }
	veth "$A" "ra$T" "$B" "rb$T" 10.201.3 || { fail "veth"; return; }
	xdp "$A" attach "ra$T" >/dev/null || fail "attach"
	expect_eq "$(folders)" 1 "netns-N folders while attached"
	expect_eq "$(xdp "$A" detach -j "ra$T")" \
		"{\"op\": \"detach\", \"interfaces\": [{\"iface\": \"ra$T\", \"result\": \"detached\"}]}" "detach -j"
	expect_eq "$(folders)" 0 "netns-N folders after detach"
	# Another XDP program there: the attach fails once its folder is made.
	in_ns "$A" ip link set dev "ra$T" xdpgeneric obj "$FLOOR" sec xdp || fail "ip link set xdp"
	xdp "$A" attach "ra$T" >/dev/null 2>&1 && fail "attach over another program, without --force"
	expect_eq "$(folders)" 0 "netns-N folders after a failed attach"
	in_ns "$A" ip link set dev "ra$T" xdpgeneric off
	# One interface's detach leaves the other's folder.
	xdp "$A" attach "ra$T" >/dev/null && xdp "$B" attach "rb$T" >/dev/null || fail "attach both"
	xdp "$A" detach "ra$T" >/dev/null || fail "detach ra"
	expect_eq "$(folders)" 1 "netns-N folders with B still attached"
	has_xdp "$B" "rb$T" || fail "B lost XDP when A's folder went"
	xdp "$B" detach "rb$T" >/dev/null
}

case_prune_gone() {
	local A=rma$T B=rmb$T C=rmc$T n out
	mkns "$A" && mkns "$B" && mkns "$C" || { fail "namespaces"; return; }
	veth "$A" "ra$T" "$B" "rb$T" 10.201.4 && veth "$C" "rc$T" "$B" "rd$T" 10.201.5 || { fail "veth"; return; }
	xdp "$A" attach "ra$T" >/dev/null && xdp "$C" attach "rc$T" >/dev/null || fail "attach"
	n=$(ino "$A")
	ip netns del "$A"
	# The namespace goes in a work item: its link is defunct once it has.
	for i in $(seq 1 50); do has_xdp "$B" "rb$T" || break; sleep 0.1; done
	[ -d "$ROOT/netns-$n" ] || fail "no pins of the deleted namespace to prune (the premise)"
	out=$(xdp "$C" prune -j) || fail "prune -j: $out"
	python3 - "$out" "$n" "ra$T" <<-'EOF' || fail "prune -j said: $out"
	import json, sys
	d = json.loads(sys.argv[1])
	assert d["op"] == "prune", d
	r = d["interfaces"]
	assert len(r) == 1 and r[0]["result"] == "pruned" and r[0]["netns"] == int(sys.argv[2]) and r[0]["iface"] == sys.argv[3], r
	assert r[0]["why"] == "its namespace is gone" and r[0]["record_removed"], r
	EOF
	[ ! -e "$ROOT/netns-$n" ] || fail "the deleted namespace's folder is still there"
	has_xdp "$C" "rc$T" || fail "prune took the live namespace's XDP off"
	# A folder of an older sieve (no identity) whose link runs gets its
	# namespace's identity from prune: deleted later, it is still known.
	local c
	c=$(ino "$C")
	rm "$ROOT/netns-$c/rc$T/netns" || fail "removing the identity (an older sieve's folder)"
	expect_eq "$(xdp "$C" prune)" "nothing to prune" "prune of an older sieve's live folder"
	[ -e "$ROOT/netns-$c/rc$T/netns" ] || fail "prune did not give an older sieve's folder its identity"
	bpftool -j map dump pinned "$ROOT/netns-$c/rc$T/netns" 2>/dev/null | python3 -c '
import json, sys
v = bytes(int(b, 16) for b in json.load(sys.stdin)[0]["value"])
sys.exit(not (int.from_bytes(v[8:16], "little") == int(sys.argv[1]) and any(v[:8])))' "$c" ||
		fail "the identity written is not C's (a cookie and its inode): $(bpftool -j map dump pinned "$ROOT/netns-$c/rc$T/netns" 2>&1) ino $c"
	expect_eq "$(xdp "$C" prune)" "nothing to prune" "a second prune"
	# A namespace gone whose pins went by hand: its record goes too.
	local D=rmd$T m
	mkns "$D" && veth "$D" "rx$T" "$B" "ry$T" 10.201.8 || { fail "namespace D"; return; }
	xdp "$D" attach "rx$T" >/dev/null || fail "attach in D"
	m=$(ino "$D")
	rm -rf "$ROOT/netns-$m"
	ip netns del "$D"
	for i in $(seq 1 50); do ip -n "$B" link show "ry$T" >/dev/null 2>&1 || break; sleep 0.1; done
	out=$(xdp "$C" prune) || fail "prune (D): $out"
	expect_eq "$out" "rx$T (netns $m): pruned, its namespace is gone; its record removed" \
		"prune of a namespace without pins"
	# Its record is gone: detach --all finds only C's.
	expect_eq "$("$SIEVE" xdp detach --all -j | json_len detach)" 1 "attachments left after prune"
}

# One interface that cannot be taken down does not stop the others: a pin
# where an interface's folder should be (its lock cannot be taken), in
# each namespace's folder, and a link pin that is no link (it cannot be
# detached). Each is reported (a line on stderr; with -j an object with
# result "failed" and an error), the rest are detached, and the exit is 2.
case_detach_all_carries_on() {
	local A=rma$T B=rmb$T a b out rc
	mkns "$A" && mkns "$B" || { fail "namespaces"; return; }
	veth "$A" "ra$T" "$B" "rb$T" 10.201.11 && veth "$A" "rc$T" "$B" "rd$T" 10.201.12 || { fail "veth"; return; }
	a=$(ino "$A") b=$(ino "$B")
	odd_pins() {
		xdp "$A" attach "ra$T" "rc$T" >/dev/null && xdp "$B" attach "rb$T" >/dev/null || fail "attach"
		for n in $a $b; do
			bpftool map create "$ROOT/netns-$n/zz$T" type array key 4 value 4 entries 1 \
				name zz || fail "a stray pin in netns-$n"
		done
		rm "$ROOT/netns-$a/rc$T/link" && bpftool map create "$ROOT/netns-$a/rc$T/link" \
			type array key 4 value 4 entries 1 name notalink || fail "a link pin that is no link"
	}
	detached() {
		! has_xdp "$A" "ra$T" || fail "$1: XDP still on ra$T"
		! has_xdp "$B" "rb$T" || fail "$1: XDP still on rb$T"
		[ ! -e "$ROOT/netns-$a/ra$T" ] || fail "$1: ra$T's pins stay"
		[ -e "$ROOT/netns-$a/rc$T/link" ] || fail "$1: the folder with a link pin that is no link went"
	}
	odd_pins
	out=$("$SIEVE" xdp detach --all 2>"$WORK/err")
	rc=$?
	expect_eq "$rc" 2 "detach --all's exit with interfaces that fail"
	detached "detach --all"
	expect_eq "$(grep -c '^sieve: not detached: ' "$WORK/err")" 3 \
		"failure lines of detach --all ($(cat "$WORK/err"))"
	grep -q "netns-$a/rc$T: detaching its link pin: Invalid argument" "$WORK/err" ||
		fail "the link pin that is no link not reported: $(cat "$WORK/err")"
	grep -q "netns-$b/zz$T: taking its lock: Not a directory" "$WORK/err" ||
		fail "the stray pin not reported: $(cat "$WORK/err")"
	expect_eq "$(sort <<<"$out")" "$(printf 'ra%s (netns %s): detached\nrb%s (netns %s): detached' \
		"$T" "$a" "$T" "$b")" "detach --all's lines"
	rm -f "$ROOT/netns-$a/zz$T" "$ROOT/netns-$b/zz$T" "$ROOT/netns-$a/rc$T/link"
	"$SIEVE" xdp detach --all >/dev/null || fail "detach --all once the odd pins went"
	# -j: one document, the failures in it.
	odd_pins
	out=$("$SIEVE" xdp detach --all -j)
	expect_eq "$?" 2 "detach --all -j's exit with interfaces that fail"
	detached "detach --all -j"
	python3 - "$out" "$a" "$b" "$T" <<-'EOF' || fail "detach --all -j said: $out"
	import json, sys
	d = json.loads(sys.argv[1])
	a, b, t = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
	assert d["op"] == "detach", d
	got = {(i["iface"], i["netns"]): i for i in d["interfaces"]}
	assert len(got) == 5, got
	for k in [("ra" + t, a), ("rb" + t, b)]:
	    assert got[k]["result"] == "detached" and got[k]["record_removed"], got[k]
	for k in [("rc" + t, a), ("zz" + t, a), ("zz" + t, b)]:
	    assert got[k]["result"] == "failed" and got[k]["error"], got[k]
	    assert not got[k]["record_removed"], got[k]
	assert "detaching its link pin" in got[("rc" + t, a)]["error"], got
	EOF
	# prune carries on alike: ra's folder, its interface gone, still goes.
	xdp "$A" attach "ra$T" >/dev/null || fail "attach ra again"
	ip -n "$A" link del "ra$T"
	out=$(xdp "$A" prune -j)
	expect_eq "$?" 2 "prune -j's exit with interfaces that fail"
	[ ! -e "$ROOT/netns-$a/ra$T" ] || fail "prune: the gone interface's pins stay"
	python3 - "$out" "$T" <<-'EOF' || fail "prune -j said: $out"
	import json, sys
	d = json.loads(sys.argv[1])
	t = sys.argv[2]
	assert d["op"] == "prune", d
	r = {i["iface"]: i["result"] for i in d["interfaces"]}
	assert r["ra" + t] == "pruned" and r["zz" + t] == "failed", r
	EOF
	rm -f "$ROOT/netns-$a/zz$T" "$ROOT/netns-$b/zz$T" "$ROOT/netns-$a/rc$T/link"
	"$SIEVE" xdp detach --all >/dev/null || fail "detach --all at the end"
}

# Records whose pins are gone (by hand, or a reboot), one of which the
# store will not drop (a trigger refuses it): the others still go, the one
# is reported and kept, the exit is 2. (Its attachments' list was leaked
# on that path: SIEVE_REMOVAL_VALGRIND=1 runs detach --all under valgrind.)
case_detach_all_record_fails() {
	local A=rma$T B=rmb$T a b out rc db=$SIEVE_STATE_DIR/sieve.db run=("$SIEVE")
	[ -z "${SIEVE_REMOVAL_VALGRIND:-}" ] ||
		run=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite
		     --error-exitcode=99 "$SIEVE")
	mkns "$A" && mkns "$B" || { fail "namespaces"; return; }
	veth "$A" "ra$T" "$B" "rb$T" 10.201.13 && veth "$A" "rc$T" "$B" "rd$T" 10.201.14 || { fail "veth"; return; }
	xdp "$A" attach "ra$T" "rc$T" >/dev/null && xdp "$B" attach "rb$T" >/dev/null || fail "attach"
	a=$(ino "$A") b=$(ino "$B")
	rm -rf "$ROOT/netns-$a" "$ROOT/netns-$b"
	python3 -c "import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute(\"CREATE TRIGGER keep BEFORE DELETE ON attachments WHEN old.iface = '\" + sys.argv[2] +
	   \"' BEGIN SELECT RAISE(ABORT, 'kept by a test trigger'); END\")
db.commit()" "$db" "rc$T" || { fail "the trigger"; return; }
	out=$("${run[@]}" xdp detach --all -j 2>"$WORK/err")
	rc=$?
	expect_eq "$rc" 2 "detach --all's exit with a record the store keeps ($(cat "$WORK/err"))"
	python3 - "$out" "$a" "$b" "$T" <<-'EOF' || fail "detach --all -j said: $out"
	import json, sys
	d = json.loads(sys.argv[1])
	a, b, t = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
	got = {(i["iface"], i["netns"]): i for i in d["interfaces"]}
	assert d["op"] == "detach" and len(got) == 3, d
	for k in [("ra" + t, a), ("rb" + t, b)]:
	    assert got[k]["result"] == "detached" and got[k]["record_removed"], got[k]
	k = ("rc" + t, a)
	assert got[k]["result"] == "failed" and not got[k]["record_removed"], got[k]
	assert "kept by a test trigger" in got[k]["error"], got[k]
	EOF
	expect_eq "$(python3 -c "import sqlite3, sys
print(' '.join(r[0] for r in sqlite3.connect(sys.argv[1]).execute('SELECT iface FROM attachments')))" \
		"$db")" "rc$T" "the records left"
}

# Namespaces until one gets inode $1 (the lowest free number is handed out):
# its name in REUSED, or nothing. Not in a subshell: mkns records what to delete.
ns_with_ino() {
	local want=$1 i n
	REUSED=
	[ -z "${SIEVE_REMOVAL_SIMULATE:-}" ] || return	# the fallback's own test
	for i in $(seq 1 30); do
		n=rmr$i-$T
		mkns "$n" || return
		[ "$(ino "$n")" = "$want" ] && { REUSED=$n; return; }
	done
}

case_inode_reuse() {
	local A=rma$T B=rmb$T R n out
	mkns "$A" && mkns "$B" || { fail "namespaces"; return; }
	veth "$A" "ra$T" "$B" "rb$T" 10.201.6 || { fail "veth"; return; }
	xdp "$A" attach "ra$T" >/dev/null || fail "attach"
	n=$(ino "$A")
	ip netns del "$A"
	for i in $(seq 1 50); do has_xdp "$B" "rb$T" || break; sleep 0.1; done
	sleep 0.5	# the namespace's number is freed with it, in a work item
	ns_with_ino "$n"
	R=$REUSED
	if [ -z "$R" ]; then
		# Another run took the number: one of ours stands in, its identity edited.
		echo "    # inode $n not reused in 30 namespaces: simulated by editing the identity"
		R=rms$T; mkns "$R" || { fail "namespace"; return; }
		veth "$R" "ra$T" "$B" "rx$T" 10.201.7 || fail "veth"
		xdp "$R" attach "ra$T" >/dev/null || fail "attach in R"
		n=$(ino "$R")
		bpftool map update pinned "$ROOT/netns-$n/ra$T/netns" key hex 00 00 00 00 \
			value hex 01 02 03 04 05 06 07 08 00 00 00 00 00 00 00 00 ||
			fail "editing the identity"
	else
		echo "    # namespace $R got inode $n, the deleted one's"
	fi
	# The new namespace has an interface of the old one's name, not attached.
	in_ns "$R" ip link show dev "ra$T" >/dev/null 2>&1 || veth "$R" "ra$T" "$B" "rx$T" 10.201.7 ||
		fail "veth in the new namespace"
	printf '[agent]\n[metrics]\nlisten = off\n' >"$WORK/agent.conf"
	# nsenter and sieve exec: $! is the agent.
	nsenter "--net=/run/netns/$R" "$SIEVE" agent --config "$WORK/agent.conf" 2>"$WORK/agent.log" &
	AGENT_PID=$!
	for i in $(seq 1 100); do grep -q 'enforcing:' "$WORK/agent.log" && break; sleep 0.1; done
	grep -q 'enforcing:' "$WORK/agent.log" || fail "the agent did not start: $(tail -3 "$WORK/agent.log")"
	kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null; AGENT_PID=
	! has_xdp "$R" "ra$T" || fail "the new namespace's ra$T got the old namespace's attachment"
	grep -q "ra$T (netns $n): pruned its pins.*attachment removed" "$WORK/agent.log" ||
		fail "the agent did not say it pruned: $(grep -i prun "$WORK/agent.log")"
	[ ! -e "$ROOT/netns-$n/ra$T" ] || fail "the old namespace's pins are still there"
	# Attached by hand now, it is new ("attached", not "already attached").
	out=$(xdp "$R" attach "ra$T") || fail "attach in the new namespace"
	expect_eq "$out" "ra$T: attached" "attach in the new namespace"
	# attach does not adopt a folder whose identity is another namespace's
	# (simulated: the identity edited, the link live).
	n=$(ino "$R")
	bpftool map update pinned "$ROOT/netns-$n/ra$T/netns" key hex 00 00 00 00 \
		value hex 01 02 03 04 05 06 07 08 00 00 00 00 00 00 00 00 ||
		fail "editing the identity"
	out=$(xdp "$R" attach "ra$T") || fail "attach over another namespace's folder"
	expect_eq "$out" "ra$T: attached" "attach over another namespace's folder"
	has_xdp "$R" "ra$T" || fail "no XDP on ra$T after the attach"
}

declare -F "case_$CASE" >/dev/null || { echo "removal.sh: no case $CASE" >&2; exit 2; }
"case_$CASE"
exit $case_failed
