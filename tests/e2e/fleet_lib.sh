# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash # sourced by bash scripts
#
# The fleet's test bed, sourced by tests/e2e/fleet.sh (the suite's cases)
# and tests/e2e/fleet_bench.sh (make bench-fleet). A redis-server of the
# run's own and 4 "hosts", each a network namespace of its own:
#
#   RD (redis)  bridge fb$TAG 10.99.0.1/24; redis-server bound to it and
#               to its loopback only, AOF on (appendfsync always)
#   H1..H4      fl<i>$TAG 10.99.0.1<i>/24, the link to Redis (a veth to RD's
#               bridge, taken down to cut the host off);
#               fh<i>$TAG 10.200.<i>.1/24, where XDP runs (a veth to CL);
#               its own store (state dir) and agent
#   CL          the clients: the sources on its loopback, a veth to each
#               host (10.200.<i>.2/24); ping -I SRC reaches each host
#
# Nothing outside these namespaces reaches Redis. Every loop is bounded in
# count and time; fleet_cleanup (the caller's EXIT trap) stops everything
# started here and removes every namespace, pin and file.
#
# The caller sets SIEVE (the CLI) and HERE (tests/e2e); fail() and
# wait_until() are tests/lib.sh's (a caller may define its own fail()).

. "$HERE/../lib.sh"

TAG=$$
NHOSTS=4
RD=sieve-fl-rd-$TAG
CL=sieve-fl-cl-$TAG
LIST=edge			# the list the hosts enforce and follow
REDIS_ADDR=10.99.0.1
REDIS_PORT=6379
WORK=$(mktemp -d "${FLEET_TMPDIR:-/tmp}/sieve-fleet.XXXXXX") || exit 2
REDIS_PID=
declare -a AGENT_PIDS NOTIFY_PIDS

host_ns() { echo "sieve-fl-h$1-$TAG"; }
host_if() { echo "fh$1$TAG"; }		# XDP's interface
host_link() { echo "fl$1$TAG"; }		# the link to Redis
host_addr() { echo "10.200.$1.1"; }
host_dir() { echo "$WORK/h$1"; }
in_host() { local i=$1; shift; in_ns "$(host_ns "$i")" "$@"; }
in_rd() { in_ns $RD "$@"; }
in_cl() { in_ns $CL "$@"; }
# `sieve xdp SUB ARGS` on host I, with its own store.
hxdp() { local i=$1; shift; SIEVE_STATE_DIR=$(host_dir "$i")/state in_host "$i" "$SIEVE" xdp "$@"; }
# redis-cli on Redis's loopback.
rcli() { in_rd timeout 60 redis-cli -h 127.0.0.1 -p $REDIS_PORT "$@"; }
pin_dir() { echo "/sys/fs/bpf/sieve/netns-$(stat -Lc %i "/run/netns/$(host_ns "$1")")/$(host_if "$1")"; }


# ---- the namespaces ----

fleet_setup() {
	local i
	ip netns add $RD && ip netns add $CL || return 1
	in_rd ip link add fb$TAG type bridge || return 1
	in_rd ip addr add $REDIS_ADDR/24 dev fb$TAG
	in_rd ip link set fb$TAG up && in_rd ip link set lo up && in_cl ip link set lo up || return 1
	for i in $(seq 1 $NHOSTS); do
		ip netns add "$(host_ns "$i")" || return 1
		in_host "$i" ip link set lo up
		# The link to Redis: the RD end on the bridge.
		veth_pair "$(host_ns "$i")" "$(host_link "$i")" $RD "fr$i$TAG" || return 1
		in_rd ip link set "fr$i$TAG" master fb$TAG || return 1
		in_host "$i" ip addr add "10.99.0.1$i/24" dev "$(host_link "$i")"
		# The traffic: CL's end fc<i>.
		veth_pair "$(host_ns "$i")" "$(host_if "$i")" $CL "fc$i$TAG" || return 1
		in_host "$i" ip addr add "$(host_addr "$i")/24" dev "$(host_if "$i")"
		in_cl ip addr add "10.200.$i.2/24" dev "fc$i$TAG"
		# Replies to the sources (on CL's loopback) go back over that veth.
		in_host "$i" ip route add default via "10.200.$i.2" || return 1
		mkdir -p "$(host_dir "$i")/state"
	done
	for i in $(seq 1 $NHOSTS); do
		in_cl ping -c 1 -W 2 "$(host_addr "$i")" >/dev/null || return 1
		in_host "$i" ping -c 1 -W 2 $REDIS_ADDR >/dev/null || return 1
	done
}

# Adds the sources ADDR... to the clients' loopback.
add_sources() {
	local a
	for a in "$@"; do in_cl ip addr add "$a/32" dev lo || return 1; done
}

fleet_cleanup() {
	local i ino ns
	agents_stop 2>/dev/null
	redis_stop
	# shellcheck disable=SC2046 # one word per job: split on purpose
	kill $(jobs -p) 2>/dev/null
	for i in $(seq 1 $NHOSTS); do
		[ -e "/run/netns/$(host_ns "$i")" ] || continue
		ino=$(stat -Lc %i "/run/netns/$(host_ns "$i")")
		hxdp "$i" detach "$(host_if "$i")" >/dev/null 2>&1
		# shellcheck disable=SC2046 # one pid each
		kill -9 $(ip netns pids "$(host_ns "$i")") 2>/dev/null
		ip netns del "$(host_ns "$i")" 2>/dev/null
		# Whatever detach left: this namespace's pins only.
		rm -rf "/sys/fs/bpf/sieve/netns-$ino"
	done
	# Anything of ours still running in our namespaces (a run cut short), by PID.
	for ns in $RD $CL; do
		# shellcheck disable=SC2046 # one pid each
		[ -e "/run/netns/$ns" ] && kill -9 $(ip netns pids "$ns") 2>/dev/null
	done
	ip netns del $CL 2>/dev/null
	ip netns del $RD 2>/dev/null
	rm -rf "$WORK"
}

# ---- redis ----

# redis.conf of the run: its own folder, AOF with an fsync per write.
redis_conf() {
	mkdir -p "$WORK/redis"
	cat >"$WORK/redis/redis.conf" <<-EOF
	bind $REDIS_ADDR 127.0.0.1
	port $REDIS_PORT
	protected-mode no
	daemonize no
	dir $WORK/redis
	logfile $WORK/redis/redis.log
	appendonly yes
	appendfsync always
	save ""
	EOF
}

# Starts redis-server in RD (its config written once) and waits up to 10 s for its PONG.
redis_start() {
	[ -e "$WORK/redis/redis.conf" ] || redis_conf
	# nsenter execs it: $! is redis-server itself, not a subshell (stopped by its PID).
	nsenter --net=/run/netns/$RD redis-server "$WORK/redis/redis.conf" &
	REDIS_PID=$!
	wait_until 10 eval '[ "$(rcli PING 2>/dev/null)" = PONG ]' ||
		{ echo "redis-server did not start: $(tail -n 5 "$WORK/redis/redis.log")"; return 1; }
	# The AOF replayed: loading is over once it answers other commands.
	wait_until 30 eval 'rcli INFO persistence | grep -q "^loading:0"'
}

# SIGTERM (or SIG), bounded: one that does not stop in 10 s gets SIGKILL.
redis_stop() {
	local sig=${1:-TERM}
	[ -n "$REDIS_PID" ] || return 0
	kill "-$sig" "$REDIS_PID" 2>/dev/null
	wait_until 10 eval '! kill -0 $REDIS_PID 2>/dev/null' || kill -9 "$REDIS_PID" 2>/dev/null
	wait "$REDIS_PID" 2>/dev/null
	REDIS_PID=
}

# ---- publishing on the documented model (README, "The fleet") ----

# One change as one MULTI/EXEC: publish OP ENTRY [EXPIRES] (block|allow: EXPIRES
# Unix seconds or +inf, the default; unblock|disallow: none). List: $LIST.
publish() {
	local op=$1 entry=$2 exp=${3:-+inf} set=block out
	case $op in allow|disallow) set=allow;; esac
	case $op in
	block|allow) out=$(printf 'MULTI\nZADD sieve:{%s}:%s %s %s\nXADD sieve:{%s}:log MAXLEN ~ 1000000 * op %s entry %s expires %s origin e2e\nEXEC\n' \
		$LIST $set "$exp" "$entry" $LIST "$op" "$entry" "$exp" | rcli);;
	*) out=$(printf 'MULTI\nZREM sieve:{%s}:%s %s\nXADD sieve:{%s}:log MAXLEN ~ 1000000 * op %s entry %s origin e2e\nEXEC\n' \
		$LIST $set "$entry" $LIST "$op" "$entry" | rcli);;
	esac
	# MULTI's OK, two QUEUED, then EXEC's two replies: no error anywhere.
	case $out in *ERR*|*WRONGTYPE*|"") echo "publish $op $entry: $out" >&2; return 1;; esac
}

# The RESP of one command from its words (for redis-cli --pipe).
resp() {
	local w
	printf '*%d\r\n' $#
	for w in "$@"; do printf '$%d\r\n%s\r\n' ${#w} "$w"; done
}

# Generates the documented MULTI/ZADD/XADD/EXEC of "block ENTRY +inf" for
# each line of stdin, as RESP for redis-cli --pipe (python: 10^6 lines in seconds).
bulk_resp() {
	python3 -c '
import sys
list_ = sys.argv[1]
def cmd(*w):
    out = ["*%d\r\n" % len(w)]
    for x in w:
        out.append("$%d\r\n%s\r\n" % (len(x.encode()), x))
    return "".join(out)
zkey, lkey = "sieve:{%s}:block" % list_, "sieve:{%s}:log" % list_
w = sys.stdout.write
for line in sys.stdin:
    e = line.strip()
    w(cmd("MULTI") + cmd("ZADD", zkey, "+inf", e) +
      cmd("XADD", lkey, "MAXLEN", "~", "1000000", "*", "op", "block", "entry", e,
          "expires", "+inf", "origin", "bulk") + cmd("EXEC"))
' $LIST
}

# N distinct sources in 172.16.0.0/12 (172.16.0.1 on), one a line.
bulk_entries() {
	python3 -c "
import sys
for i in range(1, int(sys.argv[1]) + 1):
    a = ((172 << 24) | (16 << 16)) + i
    print('%d.%d.%d.%d' % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255))" "$1"
}

# ---- hosts: XDP, agents ----

# The agent's settings of host I: expiry every second, its metrics on its
# own loopback, following $LIST (and "junk", a list the garbage case spoils)
# with a short backoff. EXTRA (printf %b) is appended to [fleet].
write_agent_conf() {
	local i=$1 extra=${2:-}
	printf '[agent]\nexpire_interval = 1s\n[metrics]\nlisten = 127.0.0.1:9477\n[fleet]\nredis = %s:%s\nlists = %s junk\nretry_max = 1s\n%b' \
		$REDIS_ADDR $REDIS_PORT $LIST "$extra" >"$(host_dir "$i")/agent.conf"
}

# Attaches XDP to host I's interface for $LIST (ARGS: more options).
host_attach() {
	local i=$1; shift
	hxdp "$i" attach "$(host_if "$i")" --list $LIST "$@" >/dev/null
}

# Starts host I's agent (its config written first unless there is one) with
# notify.py as systemd's notify socket; returns at once.
agent_start() {
	local i=$1 d; d=$(host_dir "$1")
	[ -e "$d/agent.conf" ] || write_agent_conf "$i"
	rm -f "$d/notify" "$d/nstop"
	python3 "$HERE/notify.py" "$d/notify.sock" 900 "$d/nstop" >"$d/notify" &
	NOTIFY_PIDS[i]=$!
	wait_until 5 grep -q ready "$d/notify" 2>/dev/null
	NOTIFY_SOCKET=$d/notify.sock nsenter "--net=/run/netns/$(host_ns "$i")" "$SIEVE" agent \
		--config "$d/agent.conf" --state-dir "$d/state" 2>>"$d/agent.log" &
	AGENT_PIDS[i]=$!
}

# Waits up to SECS for host I's agent's READY=1.
agent_ready() {
	local i=$1 secs=$2 d; d=$(host_dir "$1")
	wait_until "$secs" eval 'grep -q " READY=1$" "$d/notify" || ! kill -0 ${AGENT_PIDS[$i]} 2>/dev/null'
	grep -q " READY=1$" "$d/notify" ||
		{ fail "host $i: no READY=1 from the agent: $(tail -n 3 "$d/agent.log")"; return 1; }
}

# SIGTERM to host I's agent, bounded: one that does not stop in 10 s fails the case.
agent_stop() {
	local i=$1 pid=${AGENT_PIDS[$1]:-} d; d=$(host_dir "$1")
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait_until 10 eval '! kill -0 $pid 2>/dev/null' ||
			{ fail "host $i: the agent did not stop on SIGTERM"; kill -9 "$pid" 2>/dev/null; }
		wait "$pid" 2>/dev/null
		AGENT_PIDS[i]=
	fi
	if [ -n "${NOTIFY_PIDS[$i]:-}" ]; then
		touch "$d/nstop"
		wait_until 5 eval '! kill -0 ${NOTIFY_PIDS[$i]} 2>/dev/null' || kill "${NOTIFY_PIDS[$i]}"
		wait "${NOTIFY_PIDS[$i]}" 2>/dev/null
		NOTIFY_PIDS[i]=
	fi
}

agents_stop() {
	local i
	for i in $(seq 1 $NHOSTS); do agent_stop "$i"; done
}

# Attaches every host and starts its agent; fails unless all are ready in 30 s.
hosts_up() {
	local i
	for i in $(seq 1 $NHOSTS); do
		host_attach "$i" "$@" || { fail "host $i: attach"; return 1; }
		agent_start "$i"
	done
	for i in $(seq 1 $NHOSTS); do agent_ready "$i" 30 || return 1; done
}

# Agents stopped, XDP detached, stores and logs gone: a fresh fleet.
hosts_reset() {
	local i
	agents_stop
	for i in $(seq 1 $NHOSTS); do
		hxdp "$i" detach "$(host_if "$i")" >/dev/null 2>&1
		in_host "$i" ip link set "$(host_link "$i")" up
		rm -rf "$(host_dir "$i")"; mkdir -p "$(host_dir "$i")/state"
	done
}

# The sum of metric NAME's series that have every LABEL=VALUE given, from
# host I's agent; "absent" when it has none.
metric() {
	local i=$1; shift
	in_host "$i" curl -s --max-time 5 http://127.0.0.1:9477/metrics | python3 -c '
import re, sys
name, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
total, seen = 0.0, False
for line in sys.stdin:
    m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)", line)
    if not m or m.group(1) != name:
        continue
    labels = dict(re.findall(r"(\w+)=\"([^\"]*)\"", m.group(2) or ""))
    if all(labels.get(k) == v for k, v in want.items()):
        total += float(m.group(3)); seen = True
print(("%d" % total if total == int(total) else "%.3f" % total) if seen else "absent")' "$@"
}

# ---- traffic ----

# Replies host I gave to N (default 3) pings from SRC.
pings() {
	local i=$1 src=$2 n=${3:-3}
	in_cl ping -n -q -c "$n" -i 0.05 -W 1 -I "$src" "$(host_addr "$i")" 2>/dev/null |
		sed -n 's/.* \([0-9]*\) received.*/\1/p'
}

# The replies of each host to N pings from SRC, all at once: "R1 R2 R3 R4".
pings_all() {
	local src=$1 n=${2:-3} i pids=
	for i in $(seq 1 $NHOSTS); do
		pings "$i" "$src" "$n" >"$WORK/pings.$i" &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086 # one pid each
	wait $pids
	for i in $(seq 1 $NHOSTS); do printf '%s ' "$(cat "$WORK/pings.$i")"; done | sed 's/ $//'
}

# "0 0 0 0" / "2 2 2 2": every host drops / delivers SRC (2 pings each).
all_drop() { [ "$(pings_all "$1" 2)" = "0 0 0 0" ]; }
all_deliver() { [ "$(pings_all "$1" 2)" = "2 2 2 2" ]; }
