#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-fleet: the fleet (issue 12) on the test bed of the e2e cases
# (fleet_lib.sh: a redis-server of its own, AOF with an fsync per write, and
# 4 hosts in network namespaces, each with its agent and store):
#
#   1. convergence: publish to enforcement on all 4 hosts, one entry at a
#      time, p50 and p99 over FLEET_BENCH_N (1000) entries (fleet_latency.py:
#      the live maps' version polled, not traffic);
#   2. Redis memory per entry (INFO memory used_memory before and after):
#      the sorted set at each of FLEET_MEM_SIZES (10^6 10^7) members, and the
#      stream's records at 10^6 (its cap, MAXLEN ~ 10^6);
#   3. initial sync: 10^6 entries published as producers do (MULTI/EXEC
#      each), then a fresh host (empty store, XDP attached with each backend
#      of FLEET_SYNC_BACKENDS, default "blocked bloom-map") starts its agent:
#      ms from the agent's start to its live maps holding all 10^6, beside
#      what the agent logs of its resync.
#
# FLEET_BENCH_PARTS (default "latency memory sync") runs only the parts
# named, e.g. FLEET_BENCH_PARTS=sync for the initial sync alone.
#
# Usage: fleet_bench.sh SIEVE REPORT. Root; about 10 minutes and 3 GB of
# memory at its peak (Redis with 10^7 members). Where others run the e2e
# suite: `flock /work/e2e.lock make bench-fleet`.
set -u
export LC_ALL=C

SIEVE=$(realpath "$1")
REPORT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
FLEET_TMPDIR=${FLEET_TMPDIR:-/var/tmp}	# Redis's AOF on disk, not tmpfs
. "$HERE/fleet_lib.sh"
MAPS="$HERE/fleet_maps.py"
N=${FLEET_BENCH_N:-1000}
MEM_SIZES=${FLEET_MEM_SIZES:-1000000 10000000}
SYNC_N=${FLEET_SYNC_N:-1000000}
SYNC_BACKENDS=${FLEET_SYNC_BACKENDS:-blocked bloom-map}
PARTS=${FLEET_BENCH_PARTS:-latency memory sync}

say() { printf '%s\n' "$*" | tee -a "$REPORT"; }
die() { echo "bench-fleet: $*" >&2; exit 2; }
fail() { die "$*"; }

at_exit fleet_cleanup
trap 'exit 130' INT TERM

used_memory() { rcli INFO memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }

# Pipes RESP from stdin into Redis; fails unless every reply was good.
pipe() {
	local out
	out=$(in_rd timeout 1800 redis-cli -h 127.0.0.1 -p $REDIS_PORT --pipe 2>&1)
	case $out in *"errors: 0,"*) ;; *) die "redis-cli --pipe: $out";; esac
}

# ZADD of N members (bulk_entries) into LIST's set, 1000 a command.
zadd_resp() {
	python3 -c '
import sys
n, key = int(sys.argv[1]), "sieve:{%s}:block" % sys.argv[2]
w = sys.stdout.write
batch = []
def flush():
    words = ["ZADD", key] + batch
    w("*%d\r\n" % len(words) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in words))
for i in range(1, n + 1):
    a = ((172 << 24) | (16 << 16)) + i
    batch += ["+inf", "%d.%d.%d.%d" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255)]
    if len(batch) == 2000:
        flush(); batch = []
if batch:
    flush()' "$1" $LIST
}

# N XADD records of LIST's stream as the documented model writes them.
xadd_resp() {
	bulk_entries "$1" | python3 -c '
import sys
key = "sieve:{%s}:log" % sys.argv[1]
w = sys.stdout.write
for line in sys.stdin:
    e = line.strip()
    words = ["XADD", key, "MAXLEN", "~", "1000000", "*", "op", "block", "entry", e,
             "expires", "+inf", "origin", "bulk"]
    w("*%d\r\n" % len(words) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in words))' $LIST
}

bench_latency() {
	local i dirs=
	say "== 1. publish to enforcement on all $NHOSTS hosts, $N single entries (default backend) =="
	hosts_up || die "the hosts did not start"
	for i in $(seq 1 $NHOSTS); do dirs="$dirs $(pin_dir "$i")"; done
	# shellcheck disable=SC2086 # the pin folders: one argument each
	in_rd python3 "$HERE/fleet_latency.py" 127.0.0.1 $REDIS_PORT $LIST "$N" $dirs | tee -a "$REPORT"
	for i in $(seq 1 $NHOSTS); do
		say "  host $i: live maps (entries store_version generation): $(python3 "$MAPS" show "$(pin_dir "$i")")"
	done
	hosts_reset
}

bench_memory() {
	local n m0 m1 m2
	say "== 2. Redis memory per entry (used_memory; redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')) =="
	for n in $MEM_SIZES; do
		rcli FLUSHALL >/dev/null
		m0=$(used_memory)
		zadd_resp "$n" | pipe
		m1=$(used_memory)
		[ "$(rcli ZCARD "sieve:{$LIST}:block")" = "$n" ] || die "ZCARD $(rcli ZCARD "sieve:{$LIST}:block"), want $n"
		say "  sorted set, $n members: $(((m1 - m0) / n)) bytes/entry ($(((m1 - m0) >> 20)) MiB;" \
			"MEMORY USAGE of the key: $(($(rcli MEMORY USAGE "sieve:{$LIST}:block" SAMPLES 0) / n)) bytes/entry)"
	done
	rcli FLUSHALL >/dev/null
	m1=$(used_memory)
	xadd_resp 1000000 | pipe
	m2=$(used_memory)
	say "  stream, 10^6 records (op, entry, expires, origin): $(((m2 - m1) / 1000000)) bytes/record" \
		"($(((m2 - m1) >> 20)) MiB; XLEN $(rcli XLEN "sieve:{$LIST}:log"))"
	rcli FLUSHALL >/dev/null
}

bench_initial_sync() {
	local b t0 t1 ms wpid
	say "== 3. initial sync of $SYNC_N entries to a fresh host =="
	rcli FLUSHALL >/dev/null
	t0=$(date +%s%N)
	bulk_entries "$SYNC_N" | bulk_resp | pipe
	t1=$(date +%s%N)
	say "  published with redis-cli --pipe, one MULTI/EXEC each: $(((t1 - t0) / 1000000)) ms" \
		"(ZCARD $(rcli ZCARD "sieve:{$LIST}:block"), XLEN $(rcli XLEN "sieve:{$LIST}:log"))"
	for b in $SYNC_BACKENDS; do
		hosts_reset
		host_attach 1 --backend "$b" || die "attach --backend $b"
		python3 "$MAPS" wait "$(pin_dir 1)" "$SYNC_N" 300 >"$WORK/sync.ms" &
		wpid=$!
		agent_start 1
		wait $wpid
		ms=$(cat "$WORK/sync.ms")
		# The agent logs its resync after the maps are filled.
		wait_until 10 grep -q "fleet: list $LIST: " "$(host_dir 1)/agent.log"
		say "  --backend $b: agent start to $SYNC_N entries in the live maps: $ms ms;" \
			"the agent: $(grep -o "fleet: list $LIST: .*" "$(host_dir 1)/agent.log" | head -n 1)"
		say "    $(hxdp 1 status -i "$(host_if 1)" | sed -n 2p)"
		[ "$ms" != never ] || die "host 1 did not get in step in 300 s: $(tail -n 5 "$(host_dir 1)/agent.log")"
	done
	hosts_reset
}

[ "$(id -u)" = 0 ] || die "needs root (network namespaces, XDP)"
: >"$REPORT"
say "bench-fleet, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, kernel $(uname -r)"
fleet_setup || die "setting up the namespaces failed"
redis_start || die "redis-server did not start"
for part in $PARTS; do
	case $part in
	latency) bench_latency;;
	memory) bench_memory;;
	sync) bench_initial_sync;;
	*) die "FLEET_BENCH_PARTS: no part $part (latency memory sync)";;
	esac
done
