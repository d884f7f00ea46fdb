#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The cost of one `sieve xdp unblock` on a loaded list, as an operator
# sees it: N IPv4 hosts loaded on a veth of a namespace of its own, then 5
# unblocks of one entry each, each a fresh process through nsenter (as
# the issue's table measured ipset and nft), and their median in ms.
# Usage: unblock_bench.sh SIEVE N BACKEND (bloom-map or blocked); root.
# UNBLOCK_BENCH_CHECKPOINT=1: the store's log checkpointed after the load,
# so that the figures leave out what a later process pays for a log left
# below the store's checkpoint threshold (issue 21, item 4).
set -u

SIEVE=$(realpath "$1")
N=$2
BACKEND=$3
TAG=$$
NS=sieve-ub-$TAG
IF=ub$TAG
WORK=$(mktemp -d /tmp/sieve-ub.XXXXXX)
export SIEVE_STATE_DIR=$WORK/state

sv() { nsenter --net=/run/netns/$NS "$@"; }
cleanup() {
	sv "$SIEVE" xdp detach $IF >/dev/null 2>&1
	ip netns del $NS 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

ip netns add $NS || exit 1
ip -n $NS link add $IF type veth peer name ${IF}p || exit 1
ip -n $NS link set $IF up && ip -n $NS link set ${IF}p up || exit 1
# Hosts of 10.0.0.0/8, counted from 10.0.0.1.
python3 -c "
import sys
for i in range(1, $N + 1):
    sys.stdout.write('10.%d.%d.%d\n' % (i >> 16 & 255, i >> 8 & 255, i & 255))
" >"$WORK/list"
sv "$SIEVE" xdp attach $IF --backend "$BACKEND" >/dev/null || exit 1
sv "$SIEVE" xdp load -i $IF "$WORK/list" >/dev/null || exit 1
if [ -n "${UNBLOCK_BENCH_CHECKPOINT:-}" ]; then
	python3 -c "import sqlite3, sys
sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" "$SIEVE_STATE_DIR/sieve.db" ||
		exit 1
fi
times=()
for i in 1 2 3 4 5; do
	t0=$(date +%s%N)
	out=$(sv "$SIEVE" xdp unblock -i $IF 10.0.0.$i) || { echo "unblock failed: $out"; exit 1; }
	t1=$(date +%s%N)
	times+=($(((t1 - t0) / 1000)))
	echo "  unblock 10.0.0.$i: $(((t1 - t0) / 1000)) us: $out"
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
printf 'N=%s backend=%s%s unblock median %.1f ms\n' "$N" "$BACKEND" \
	"${UNBLOCK_BENCH_CHECKPOINT:+ (log checkpointed)}" "$(echo "$median / 1000" | bc -l)"
