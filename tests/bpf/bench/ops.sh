#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-ops: what the operations of `sieve xdp` cost with the real CLI,
# each run a fresh process as an operator runs it, on a veth in network
# namespaces of the bench's own, the store in a temporary state dir on disk
# (SIEVE_STATE_DIR), for each backend (attach --backend bloom-map|blocked):
#
#   1. block X (one new source) into lists of 10^4, 10^6, 10^7 entries: ms
#      per call (median, p90, min, max of CALLS calls), beside the cost of
#      starting a process at all; one call broken down from its syscalls
#      (strace) and its CPU time (perf stat);
#   2. load of 10^6 and 10^7 entries (sources and /24 prefixes, a generated
#      plain file, --origin feed into an empty list): seconds, and its phases
#      from the same run (perf record of a few syscall tracepoints: reading
#      the file, the store's transaction, reading the list back, filling the
#      maps, the close); a profile by DSO and the bpf() syscalls of a 10^6 load;
#   3. unblock X (one entry: a rebuild from the store) at every size, its
#      phases at 10^6 and 10^7;
#   4. the FireHOL-like list of sieve-xdp-bench -W (about 6000 entries, every
#      IPv4 length /8-/32) loaded through the CLI at 8 and 16 probes:
#      status -j's lengths, keys and entries; then its ns/packet from
#      sieve-xdp-bench -f (BPF_PROG_TEST_RUN on a private instance).
#
# Usage: ops.sh SIEVE XDP_BENCH REPORT
# Environment: OPS_SIZES (default "10000 1000000 10000000"), OPS_LOAD_SIZES
# (sizes whose load and unblock are traced for their phases, default
# "1000000 10000000"), OPS_BACKENDS
# (default "bloom-map blocked"), OPS_CALLS (default 20), OPS_TMPDIR (where the
# state dirs and list files go, default /var/tmp: on disk, not tmpfs).
# Root. Run it under `flock /work/e2e.lock` where others run the e2e suite.
set -u
export LC_ALL=C

SIEVE=$(realpath "$1")
XDP_BENCH=$(realpath "$2")
REPORT=$3
SIZES=${OPS_SIZES:-10000 1000000 10000000}
LOAD_SIZES=${OPS_LOAD_SIZES:-1000000 10000000}
BACKENDS=${OPS_BACKENDS:-bloom-map blocked}
CALLS=${OPS_CALLS:-20}
TAG=$$
NS=sieve-bops-$TAG		# the blocklist's side
PEER=sieve-bopp-$TAG		# the other end of the veth
IF=sbo$TAG
WORK=$(mktemp -d "${OPS_TMPDIR:-/var/tmp}/sieve-bench-ops.XXXXXX") || exit 2
NETNS_INO=

say() { printf '%s\n' "$*" | tee -a "$REPORT"; }
die() { echo "bench-ops: $*" >&2; exit 2; }
inns() { nsenter --net=/run/netns/$NS "$@"; }

cleanup() {
	local st
	# shellcheck disable=SC2046 # one word per job: split on purpose
	kill $(jobs -p) 2>/dev/null
	if [ -e /run/netns/$NS ]; then
		for st in "$WORK"/state-*; do
			[ -d "$st" ] && SIEVE_STATE_DIR=$st inns "$SIEVE" xdp detach $IF >/dev/null 2>&1
		done
	fi
	ip netns del $NS 2>/dev/null
	ip netns del $PEER 2>/dev/null
	# Whatever detach left (a run cut short): this namespace's pins only.
	[ -n "$NETNS_INO" ] && rm -rf "/sys/fs/bpf/sieve/netns-$NETNS_INO"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

setup() {
	ip netns add $NS && ip netns add $PEER || return 1
	ip link add $IF netns $NS type veth peer name sbq$TAG netns $PEER || return 1
	inns ip addr add 198.18.0.1/24 dev $IF || return 1
	nsenter --net=/run/netns/$PEER ip addr add 198.18.0.2/24 dev sbq$TAG || return 1
	inns ip link set $IF up && nsenter --net=/run/netns/$PEER ip link set sbq$TAG up || return 1
	NETNS_INO=$(stat -L -c %i /run/netns/$NS)
}

# ---- timing: the timestamps are taken inside the namespace, around the process ----

# ms of one run of CMD... in the namespace (stdout to $WORK/last.out); fails with CMD.
ms() {
	inns bash -c 's=$EPOCHREALTIME; "$@" >"'"$WORK"'/last.out" 2>&1; r=$?; e=$EPOCHREALTIME
		[ $r = 0 ] || [ $r = 1 ] || { cat "'"$WORK"'/last.out" >&2; exit $r; }
		echo "$s $e" | awk "{ printf \"%.3f\n\", (\$2 - \$1) * 1000 }"' _ "$@"
}

# "median p90 min max" of the numbers on stdin (p90: nearest rank).
stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "- - - -"; exit }
		med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		r = int(0.9 * NR); if (r < 0.9 * NR) r++
		printf "%.2f %.2f %.2f %.2f\n", med, v[r], v[1], v[NR] }'
}

sec() { awk -v m="$1" 'BEGIN { printf "%.2f", m / 1000 }'; }

# A JSON field of `status -j -i IF` (the first interface's document).
status_field() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))[0]
v = d[sys.argv[2]]
print(",".join(map(str, v)) if isinstance(v, list) else v)' "$WORK/status.json" "$1"
}

# ---- the lists ----

# N entries, plain: 90% sources, 10% /24 prefixes, all distinct (bijections
# of the counter), none in 192.0.2.0/24 (the blocks) or a reserved /8.
gen_list() {
	python3 - "$1" "$2" <<'EOF'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
nets = n // 10
def ok(a):
    o = a >> 24
    return 0 < o < 224 and o != 127 and (a >> 8) != 0xc00002
with open(path, "w", buffering=1 << 20) as f:
    f.write("# sieve bench-ops: %d sources and prefixes\n" % n)
    out, i, left = [], 0, n - nets
    while left:
        a = (i * 2654435761 + 0x9e3779b9) & 0xffffffff
        i += 1
        if ok(a):
            out.append("%d.%d.%d.%d\n" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255))
            left -= 1
        if len(out) >= 100000:
            f.writelines(out); out = []
    out, j, left = out, 0, nets
    while left:
        a = ((j * 40503 + 12345) & 0xffffff) << 8
        j += 1
        if ok(a):
            out.append("%d.%d.%d.0/24\n" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255))
            left -= 1
        if len(out) >= 100000:
            f.writelines(out); out = []
    f.writelines(out)
EOF
}

# ---- one call of block, broken down ----

# Phases of a traced call from strace -f -ttt -T: see the report's legend.
breakdown() {
	python3 - "$1" <<'EOF'
import re, sys
ev = []
exited = None
for line in open(sys.argv[1]):
    x = re.match(r'(\d+)\s+(\d+\.\d+) \+\+\+ exited', line.strip())
    if x:
        exited = float(x.group(2))
        continue
    m = re.match(r'(\d+)\s+(\d+\.\d+) (\w+)\((.*?)(?:\) += (.*?))? <(\d+\.\d+)>$', line.strip())
    if not m:
        m2 = re.match(r'(\d+)\s+(\d+\.\d+) (\w+)\((.*)', line.strip())
        if m2:
            ev.append((float(m2.group(2)), m2.group(3), m2.group(4), 0.0))
        continue
    ev.append((float(m.group(2)), m.group(3), m.group(4), float(m.group(6))))
if not ev:
    print("  (no strace events)"); sys.exit(0)
t0 = ev[0][0]
end = exited or max(t + d for t, _, _, d in ev)
def first(pred, after=0.0):
    for t, n, a, d in ev:
        if t >= after and pred(n, a):
            return t, d
    return None
db = first(lambda n, a: n == "openat" and "sieve.db" in a)
bpf = [(t, d) for t, n, a, d in ev if n == "bpf"]
syncs = [(t, d) for t, n, a, d in ev if n in ("fsync", "fdatasync")]
marks = [("process start (exec, dynamic linking, argument parsing)", t0, None)]
if db:
    marks.append(("store open, list and attachment reads, interface lock", db[0], None))
if bpf:
    # The commit is the last sync before the last bpf() call (the live add).
    last_bpf = bpf[-1][0] + bpf[-1][1]
    commit = [s for s in syncs if s[0] < bpf[-1][0]]
    marks.append(("maps opened, config read, SQL insert, commit (fsyncs)", bpf[0][0], "sync"))
    if commit:
        c_end = commit[-1][0] + commit[-1][1]
        marks.append(("BPF: live add into the maps, config published", c_end, "bpf"))
    marks.append(("close: SQLite checkpoint on last close, WAL unlink, exit", last_bpf, "sync"))
marks.append(("", end, None))
for (name, t, what), (_, t2, _) in zip(marks, marks[1:]):
    inside = [(s, d) for s, d in (syncs if what == "sync" else bpf if what == "bpf" else [])
              if t <= s < t2]
    extra = ""
    if what:
        extra = "  (%d %s, %.2f ms inside)" % (len(inside), "fsync/fdatasync" if what == "sync" else "bpf()",
                                             sum(d for _, d in inside) * 1000)
    print("  %-58s %7.2f ms%s" % (name, (t2 - t) * 1000, extra))
print("  %-58s %7.2f ms" % ("total, execve to exit, under strace", (end - t0) * 1000))
print("  traced: bpf() %d (%.2f ms inside), fsync/fdatasync %d (%.2f ms inside), unlink %d" % (
    len(bpf), sum(d for _, d in bpf) * 1000, len(syncs), sum(d for _, d in syncs) * 1000,
    sum(1 for e in ev if e[1] == "unlink")))
EOF
}

# A load or unblock under perf record (syscall tracepoints; bpf() only
# BPF_MAP_CREATE, filtered in the kernel): its phases from one run.
TRACED=(perf record -q -o "$WORK/phases.data" -e syscalls:sys_enter_mkdir
	-e syscalls:sys_enter_fdatasync -e syscalls:sys_exit_fdatasync
	-e syscalls:sys_enter_bpf --filter 'cmd == 0' -e syscalls:sys_enter_exit_group)

# "read store commit readback maps close" in ms from $WORK/phases.data and the wall time $1.
phases() {
	perf script -i "$WORK/phases.data" -F time,event 2>/dev/null | python3 -c '
import sys
wall = float(sys.argv[1])
ev = []
for line in sys.stdin:
    f = line.split()
    if len(f) >= 2:
        ev.append((float(f[0].rstrip(":")), f[1].rstrip(":").split(":")[-1]))
t = lambda name: [x for x, n in ev if n == name]
exit_ = t("sys_enter_exit_group")
mk = t("sys_enter_mkdir")
if not exit_ or not mk:
    print("- - - - - -"); sys.exit()
start = exit_[0] - wall / 1000
creates = [x for x in t("sys_enter_bpf") if x > mk[0]]
sync_out = t("sys_exit_fdatasync")
sync_in = t("sys_enter_fdatasync")
if creates:
    commit = max([x for x in sync_out if x < creates[0]] or [mk[0]])
    close = min([x for x in sync_in if x > creates[0]] or [exit_[0]])
    marks = [start, mk[0], commit, creates[0], close, exit_[0]]
else:
    marks = [start, mk[0], exit_[0], exit_[0], exit_[0], exit_[0]]
print(" ".join("%.0f" % ((b - a) * 1000) for a, b in zip(marks, marks[1:])))
' "$1"
	rm -f "$WORK/phases.data"
}

# ---- the measurements ----

declare -A BLOCK BLOCKS UNBLOCK UNBLOCKP LOADF LOADP KEYS DBSIZE BPFCALLS START

measure_size() {
	local b=$1 n=$2 i t
	local file=$WORK/list-$n.txt st=$WORK/state-$b-$n calls=$WORK/block-$b-$n
	[ -s "$file" ] || { gen_list "$n" "$file" || die "generating $n entries"; }
	export SIEVE_STATE_DIR=$st
	rm -rf "$st"
	ms "$SIEVE" xdp attach $IF --backend "$b" >/dev/null || die "attach --backend $b"
	if [[ " $LOAD_SIZES " == *" $n "* ]]; then
		t=$(ms "${TRACED[@]}" "$SIEVE" xdp load -i $IF --origin feed "$file") || die "load $n ($b)"
		LOADP[$b,$n]=$(phases "$t")
	else
		t=$(ms "$SIEVE" xdp load -i $IF --origin feed "$file") || die "load $n ($b)"
	fi
	LOADF[$b,$n]=$t
	say "  load $n, $b, $IF attached: $(sec "$t") s: $(grep -v '^\[' "$WORK/last.out")"
	[ -n "${LOADP[$b,$n]:-}" ] && say "    phases, ms: read+parse+sort the file, store transaction+commit, store read back+plan, maps filled+swap, close (checkpoint), as traced: ${LOADP[$b,$n]}"
	DBSIZE[$n]=$(du -sm "$st" | cut -f1)
	inns "$SIEVE" xdp status -j -i $IF >"$WORK/status.json" || die "status"
	KEYS[$b,$n]="$(status_field keys) keys, capacity $(status_field capacity), $(status_field bloom_bytes) B filter, $(status_field mode) mode"
	# Steady state: the loads' writeback (GBs at 10^7) would otherwise
	# stretch every fsync of the first calls; the report says so.
	sync; sleep 2
	: >"$calls"
	for ((i = 1; i <= CALLS; i++)); do
		ms "$SIEVE" xdp block -i $IF 192.0.2.$i >>"$calls" || die "block 192.0.2.$i ($b, $n)"
	done
	BLOCK[$b,$n]=$(stats <"$calls")
	say "  block x$CALLS into $n, $b: ms median p90 min max: ${BLOCK[$b,$n]}; first call $(head -n 1 "$calls") ms; $(cat "$WORK/last.out")"
	: >"$calls.bare"
	for ((i = 1; i <= CALLS; i++)); do
		ms "$SIEVE" xdp block --list bare 192.0.2.$i >>"$calls.bare" || die "block --list bare"
	done
	BLOCKS[$b,$n]=$(stats <"$calls.bare")
	say "  block x$CALLS into list bare (no interface; same store file): ms median p90 min max: ${BLOCKS[$b,$n]}"
	if [ "$n" = "${SIZES##* }" ]; then
		say "  one block into $n, $b, broken down (strace --seccomp-bpf: only the syscalls named stop the process):"
		inns strace -f --seccomp-bpf -ttt -T -o "$WORK/strace.txt" \
			-e trace=execve,openat,bpf,fdatasync,fsync,unlink,exit_group \
			"$SIEVE" xdp block -i $IF 192.0.2.201 >/dev/null || die "strace block"
		breakdown "$WORK/strace.txt" | tee -a "$REPORT"
		inns perf stat -x, -e task-clock,page-faults,context-switches,syscalls:sys_enter_bpf \
			-e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync \
			"$SIEVE" xdp block -i $IF 192.0.2.202 2>"$WORK/perf.txt" >/dev/null
		say "  perf stat of one untraced block: $(awk -F, '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $3 }' "$WORK/perf.txt")"
		inns perf record -q -e cpu-clock -F 10000 -o "$WORK/perf.data" -- bash -c \
			'for i in $(seq 101 120); do "$1" xdp block -i "$2" 192.0.2.$i >/dev/null; done' \
			_ "$SIEVE" $IF >/dev/null 2>&1 || die "perf record block"
		say "  CPU of 20 block processes (perf record, cpu-clock), the sieve processes' samples by DSO:"
		perf report -i "$WORK/perf.data" --sort comm,dso --stdio -n 2>/dev/null | awk '
			$3 == "sieve" { n[$4] += $2; t += $2 }
			END { for (d in n) if (n[d] >= 0.01 * t) printf "    %5.1f%%  %s\n", 100 * n[d] / t, d }' |
			sort -rn | tee -a "$REPORT"
		rm -f "$WORK/perf.data"
	fi
	sync; sleep 2
	if [[ " $LOAD_SIZES " == *" $n "* ]]; then
		t=$(ms "${TRACED[@]}" "$SIEVE" xdp unblock -i $IF 192.0.2.1) || die "unblock ($b, $n)"
		UNBLOCKP[$b,$n]=$(phases "$t")
	else
		t=$(ms "$SIEVE" xdp unblock -i $IF 192.0.2.1) || die "unblock ($b, $n)"
	fi
	UNBLOCK[$b,$n]=$t
	say "  unblock 1 of $n, $b: $(sec "$t") s: $(grep -v '^\[' "$WORK/last.out")"
	[ -n "${UNBLOCKP[$b,$n]:-}" ] && say "    phases, ms: process start, store transaction+commit, store read back+plan, maps filled+swap, close, as traced: ${UNBLOCKP[$b,$n]}"
	inns "$SIEVE" xdp detach $IF >/dev/null
	rm -rf "$st"
}

# A 10^6 load again, profiled: time by DSO (perf record) and its bpf() syscalls.
profile_load() {
	local b=$1 n=1000000 st=$WORK/state-prof
	export SIEVE_STATE_DIR=$st
	rm -rf "$st"
	inns "$SIEVE" xdp attach $IF --backend "$b" >/dev/null || die "attach for the profile"
	inns perf record -q -e cpu-clock -F 999 -o "$WORK/perf.data" \
		"$SIEVE" xdp load -i $IF --origin feed "$WORK/list-$n.txt" >/dev/null 2>&1 ||
		die "perf record load"
	say "  load $n, $b, perf record (cpu-clock): share of samples by DSO"
	perf report -i "$WORK/perf.data" --sort dso --stdio 2>/dev/null |
		awk '/^ +[0-9.]+%/ && $1 + 0 >= 1 { printf "    %-8s %s\n", $1, $2 }' | tee -a "$REPORT"
	perf report -i "$WORK/perf.data" --sort sym --stdio 2>/dev/null |
		awk '/^ +[0-9.]+%/ && n < 8 { n++; $2 = ""; printf "    %s\n", $0 }' >"$WORK/syms"
	say "  top symbols:"; tee -a "$REPORT" <"$WORK/syms"
	inns "$SIEVE" xdp detach $IF >/dev/null
	rm -rf "$st" "$WORK/perf.data"
	# bpf() calls of the same load (counted by a tracepoint; not timed).
	inns "$SIEVE" xdp attach $IF --backend "$b" >/dev/null || die "attach for the count"
	inns perf stat -x, -e syscalls:sys_enter_bpf,syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync \
		"$SIEVE" xdp load -i $IF --origin feed "$WORK/list-$n.txt" >/dev/null 2>"$WORK/perf.txt" ||
		die "perf stat load"
	BPFCALLS[$b]=$(awk -F, '/sys_enter_bpf/ { print $1 }' "$WORK/perf.txt")
	say "  load $n, $b: syscalls $(awk -F, '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $3 }' "$WORK/perf.txt")"
	inns "$SIEVE" xdp detach $IF >/dev/null
	rm -rf "$st"
}

firehol() {
	local b mp st=$WORK/state-firehol file=$WORK/firehol.txt
	"$XDP_BENCH" -W "$file" || die "sieve-xdp-bench -W"
	export SIEVE_STATE_DIR=$st
	say ""
	say "4. FireHOL-like list ($(grep -vc '^#' "$file") entries, every IPv4 length /8-/32) through the CLI:"
	say "| backend | --max-probes | v4 lengths probed | probes a missing packet walks | keys | entries | expansion |"
	say "|---|---|---|---|---|---|---|"
	for b in $BACKENDS; do
		rm -rf "$st"
		for mp in 8 16; do
			inns "$SIEVE" xdp attach $IF --backend "$b" --max-probes $mp >/dev/null ||
				die "attach --max-probes $mp"
			inns "$SIEVE" xdp load -i $IF --origin firehol "$file" >/dev/null || die "load firehol"
			inns "$SIEVE" xdp status -j -i $IF >"$WORK/status.json" || die "status"
			say "| $b | $mp | $(status_field v4_lens) | $(( $(status_field nr_v4_lens) + ($(status_field sources) > 0) )) | $(status_field keys) | $(status_field entries) | $(status_field expansion) |"
		done
		inns "$SIEVE" xdp detach $IF >/dev/null
	done
	rm -rf "$st"
	say ""
	say "ns/packet, BPF_PROG_TEST_RUN (sieve-xdp-bench -f), the same list and planner:"
	"$XDP_BENCH" -f -o "$WORK/xdp-f.txt" >/dev/null || die "sieve-xdp-bench -f"
	tee -a "$REPORT" <"$WORK/xdp-f.txt"
}

main() {
	local b n t
	[ "$(id -u)" = 0 ] || die "needs root (network namespaces, XDP)"
	for t in strace perf python3 nsenter; do
		command -v $t >/dev/null || die "needs $t (apt-get install strace linux-perf python3 util-linux)"
	done
	: >"$REPORT"
	setup || die "setting up the namespaces"
	say "sieve bench-ops: the CLI's operations, each run a fresh process in the namespace"
	say "machine: nproc $(nproc), kernel $(uname -r), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	say "state dirs in $WORK ($(stat -f -c %T "$WORK") on $(df --output=source "$WORK" | tail -n 1)); veth $IF in netns $NS"
	say "CLI: $SIEVE; calls timed inside the namespace with bash's \$EPOCHREALTIME around the process"
	say "lists: N entries, 90% sources, 10% /24 prefixes (plain file); blocks: 192.0.2.1-$CALLS, after sync and 2 s"
	say ""
	# What starting any process costs here: the floor under every figure.
	for t in 1 2 3 4 5 6 7 8 9 10; do ms /bin/true; done >"$WORK/true"
	for t in 1 2 3 4 5 6 7 8 9 10; do ms "$SIEVE" xdp --help; done >"$WORK/help"
	START[true]=$(stats <"$WORK/true")
	START[help]=$(stats <"$WORK/help")
	say "process start, ms median p90 min max: /bin/true ${START[true]}; sieve xdp --help ${START[help]}"
	inns dd if=/dev/zero of="$WORK/dsync" bs=4k count=50 oflag=dsync 2>"$WORK/dd.txt"
	say "disk: 50 x 4 KiB writes with O_DSYNC: $(tail -n 1 "$WORK/dd.txt")"
	rm -f "$WORK/dsync"
	for n in $SIZES; do
		for b in $BACKENDS; do
			say ""
			say "== $n entries, --backend $b"
			measure_size "$b" "$n"
		done
		if [ "$n" = 1000000 ]; then
			for b in $BACKENDS; do profile_load "$b"; done
		fi
		# The list file stays for plan and the profile; the largest goes once done.
		[ "$n" = 1000000 ] || rm -f "$WORK/list-$n.txt"
	done
	rm -f "$WORK"/list-*.txt
	[ "${OPS_FIREHOL:-1}" = 0 ] || firehol

	say ""
	say "== summary"
	say ""
	say "1. block X (one new source), ms per call (fresh process; /bin/true alone: median ${START[true]%% *} ms, sieve xdp --help ${START[help]%% *} ms):"
	say "| entries | backend | median | p90 | min | max | store only (list bare): median, p90 | keys in the maps |"
	say "|---|---|---|---|---|---|---|---|"
	for n in $SIZES; do for b in $BACKENDS; do
		# shellcheck disable=SC2086 # the figures, one positional parameter each
		set -- ${BLOCK[$b,$n]} ${BLOCKS[$b,$n]}
		say "| $n | $b | $1 | $2 | $3 | $4 | $5, $6 | ${KEYS[$b,$n]} |"
	done; done
	say ""
	say "2. load --origin feed into an empty list, seconds; its phases from the same run (perf record of"
	say "   syscall tracepoints: store open = first mkdir, commit = last fdatasync before the first"
	say "   BPF_MAP_CREATE, maps = from it to the first fdatasync of the close):"
	say "| entries | backend | total | read+parse+sort file | store write+commit | store read back+plan | maps fill+swap | close (checkpoint) | store | bpf() calls |"
	say "|---|---|---|---|---|---|---|---|---|---|"
	for n in $LOAD_SIZES; do
		[[ " $SIZES " == *" $n "* ]] || continue
		for b in $BACKENDS; do
			# shellcheck disable=SC2086 # the figures, one positional parameter each
			set -- ${LOADP[$b,$n]}
			say "| $n | $b | $(sec "${LOADF[$b,$n]}") | $(sec "$1") | $(sec "$2") | $(sec "$3") | $(sec "$4") | $(sec "$5") | ${DBSIZE[$n]} MB | $([ "$n" = 1000000 ] && echo "${BPFCALLS[$b]:-}") |"
		done
	done
	say ""
	say "3. unblock X (one entry: a new generation from the store), seconds; traced: store read back+plan / maps fill+swap:"
	say "| entries | ${BACKENDS// / | } |"
	say "|---$(for b in $BACKENDS; do printf '|---'; done)|"
	for n in $SIZES; do
		line="| $n |"
		for b in $BACKENDS; do
			line+=" $(sec "${UNBLOCK[$b,$n]}")"
			if [ -n "${UNBLOCKP[$b,$n]:-}" ]; then
				# shellcheck disable=SC2086 # the figures, one positional parameter each
				set -- ${UNBLOCKP[$b,$n]}
				line+=" ($(sec "$3") / $(sec "$4"))"
			fi
			line+=" |"
		done
		say "$line"
	done
	say ""
	say "report: $REPORT"
}

main
