#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The fleet cases of make test-e2e (issue 12): one blocklist kept in step
# across 4 hosts through a real redis-server, on real traffic. The test bed
# (namespaces, Redis, hosts, agents, publishing, traffic) is fleet_lib.sh.
# Each case starts from a fresh fleet: Redis emptied (and started again if a
# case stopped it), every host detached, its store and its agent gone.
#
# Usage: fleet.sh SIEVE RESULTS_FILE [CASE_SUBSTRING]
set -u

SIEVE=$(realpath "$1")
RESULTS=$2
FILTER=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/fleet_lib.sh"
MAPS="$HERE/fleet_maps.py"

# Sources on the clients' loopback (documentation range).
A=198.51.100.2; B=198.51.100.3; C=198.51.100.4; D=198.51.100.5
X=198.51.100.7; Y=198.51.100.8; Z=198.51.100.9
# The bulk case's sources: first, middle and last of its 10^5, and one past them.
BULK_N=100000
BULK_SAMPLES="172.16.0.1 172.16.195.80 172.17.134.160"
BULK_OUTSIDE=172.17.134.161


at_exit fleet_cleanup

# Does host I drop (0 of 2 pings) / deliver (2 of 2) SRC?
host_drops() { [ "$(pings "$1" "$2" 2)" = 0 ]; }
host_delivers() { [ "$(pings "$1" "$2" 2)" = 2 ]; }

# The entries and origins of host I's list (past the header), "ENTRY:ORIGIN" sorted.
origins() { hxdp "$1" list --list "$LIST" | awk -F'\t' 'NR > 1 { print $3 ":" $4 }' | sort; }

# Every agent reports METRIC (LABEL=VALUE...) >= MIN.
expect_metric_all() {
	local min=$1 name=$2 i v; shift 2
	for i in $(seq 1 "$NHOSTS"); do
		v=$(metric "$i" "$name" "$@")
		[ "$v" != absent ] && python3 -c "import sys; sys.exit(not float('$v') >= $min)" ||
			fail "host $i: $name{$*} = $v, want >= $min"
	done
}

# Each host's live generation, in host order.
generations() {
	local i
	for i in $(seq 1 "$NHOSTS"); do
		hxdp "$i" status -j | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['generation'])"
	done | tr '\n' ' '
}

# ---- the cases ----

# A block, an unblock, an allow inside a blocked prefix and a TTL entry,
# each published with plain redis-cli on the documented model, reach all 4.
case_block_unblock_ttl() {
	local exp i at ts out
	hosts_up || return
	expect_eq "$(pings_all "$A")" "3 3 3 3" "pings from A before any block"
	publish block "$A" || fail "publishing the block of A"
	wait_until 10 all_drop "$A" || fail "A not dropped everywhere 10 s after its block: $(pings_all "$A")"
	expect_eq "$(pings_all "$B")" "3 3 3 3" "pings from B, not blocked"
	for i in $(seq 1 "$NHOSTS"); do
		expect_eq "$(origins "$i")" "$A:fleet" "host $i: its list after the block"
	done
	publish unblock "$A" || fail "publishing the unblock of A"
	wait_until 10 all_deliver "$A" || fail "A not delivered everywhere 10 s after its unblock: $(pings_all "$A")"
	# The allowlist travels the same way.
	publish block 198.51.100.0/24 && publish allow "$B" || fail "publishing a /24 and an allow"
	wait_until 10 all_drop "$C" || fail "C (in the /24) not dropped everywhere: $(pings_all "$C")"
	wait_until 10 all_deliver "$B" || fail "B (allowed) not delivered everywhere: $(pings_all "$B")"
	publish disallow "$B" && publish unblock 198.51.100.0/24 || fail "publishing the disallow, unblock"
	wait_until 10 all_deliver "$C" || fail "C not delivered after the /24's unblock: $(pings_all "$C")"
	# Score now + 2: dropped, then expired by every agent (expire_interval 1 s).
	exp=$(($(date +%s) + 2))
	publish block "$D" "$exp" || fail "publishing D with a TTL"
	wait_until 2 all_drop "$D" || fail "D not dropped before its expiry: $(pings_all "$D")"
	for i in $(seq 1 "$NHOSTS"); do
		at=$(hxdp "$i" list --list "$LIST" -j | python3 -c "import json,sys
print([e.get('expires_at') for l in json.load(sys.stdin) for e in l['entries'] if e['entry'] == '$D'])")
		case $at in "[$exp]"|"[]") ;; *) fail "host $i: D's expires_at $at, want [$exp] (the score)";; esac
	done
	wait_until 10 all_deliver "$D" || fail "D not delivered everywhere 10 s after its expiry: $(pings_all "$D")"
	expect_metric_all 1 sieve_fleet_connected
	expect_metric_all 2 sieve_fleet_applied_total "list=$LIST" op=block
	expect_metric_all 1 sieve_fleet_applied_total "list=$LIST" op=unblock
	expect_metric_all 1 sieve_fleet_applied_total "list=$LIST" op=allow
	# The last change applied is the stream's last record: its id, and its time (the id's ms).
	ts=$(rcli XREVRANGE "sieve:{$LIST}:log" + - COUNT 1 | head -n 1)
	expect_eq "$(metric 1 sieve_fleet_last_applied_info "list=$LIST" "id=$ts")" 1 \
		"sieve_fleet_last_applied_info{id=\"$ts\"} (the stream's last id)"
	expect_eq "$(metric 1 sieve_fleet_last_applied_timestamp_seconds "list=$LIST")" \
		"$(python3 -c "print('%.3f' % (int('${ts%-*}') / 1000))")" \
		"sieve_fleet_last_applied_timestamp_seconds (the last id's ms / 1000)"
	in_host 1 curl -s --max-time 5 http://127.0.0.1:9477/metrics >"$WORK/metrics.txt"
	out=$(promtool check metrics <"$WORK/metrics.txt" 2>&1) || fail "promtool check metrics: $out"
}

# Redis killed (-9, AOF on), restarted where the hosts cannot reach it yet,
# changed, then reachable again: the hosts drop through the outage, keep what
# they had while away, then converge on what changed.
case_redis_killed() {
	local i gens
	hosts_up || return
	publish block "$A" && publish block "$B" || fail "publishing A and B"
	publish block 198.51.100.6/31 && publish allow "$X" || fail "publishing a /31 and an allow of X in it"
	wait_until 10 all_drop "$B" || fail "B not dropped everywhere: $(pings_all "$B")"
	wait_until 10 all_deliver "$X" || fail "X (allowed) not delivered everywhere: $(pings_all "$X")"
	gens=$(generations)
	redis_stop KILL
	for i in $(seq 1 "$NHOSTS"); do
		wait_until 15 eval '[ "$(metric $i sieve_fleet_connected)" = 0 ]' ||
			fail "host $i: sieve_fleet_connected $(metric "$i" sieve_fleet_connected) 15 s after the kill"
	done
	expect_eq "$(pings_all "$A")" "0 0 0 0" "pings from A with Redis dead"
	# Restarted behind a bridge that is down: the changes come while the hosts are away.
	in_rd ip link set "fb$TAG" down
	redis_start || { fail "restarting redis-server"; return; }
	expect_eq "$(rcli ZSCORE "sieve:{$LIST}:block" "$A")" inf "A's score after the restart (AOF)"
	publish unblock "$A" && publish block "$C" || fail "publishing while the hosts are away"
	publish disallow "$X" && publish allow 198.51.100.6 || fail "publishing allows while away"
	sleep 3
	expect_eq "$(pings_all "$A")" "0 0 0 0" "pings from A while the hosts cannot reach Redis"
	in_rd ip link set "fb$TAG" up
	wait_until 60 all_deliver "$A" || fail "A not delivered 60 s after Redis came back: $(pings_all "$A")"
	wait_until 10 all_drop "$C" || fail "C not dropped after Redis came back: $(pings_all "$C")"
	expect_eq "$(pings_all "$B")" "0 0 0 0" "pings from B after the resync"
	wait_until 10 all_drop "$X" || fail "X (disallowed) not dropped after Redis came back: $(pings_all "$X")"
	# The resync's loads drop and add on both sides: live, no host rebuilt (ops.c).
	expect_eq "$(generations)" "$gens" "each host's generation after the resync"
	expect_metric_all 1 sieve_fleet_connected
	expect_metric_all 1 sieve_fleet_reconnects_total
	for i in $(seq 1 "$NHOSTS"); do
		# One line per change of state, not one per retry (retry_max 1 s).
		expect_eq "$(grep -c 'fleet: .*retrying' "$(host_dir "$i")/agent.log")" 1 \
			"host $i: lines saying Redis was lost, over the outage"
		[ "$(grep -Ec "fleet: list $LIST: .*(in step|in Redis)" "$(host_dir "$i")/agent.log")" -ge 2 ] ||
			fail "host $i: no resync after the outage in the log: $(tail -n 5 "$(host_dir "$i")/agent.log")"
	done
}

# One host's link to Redis down for 10 s: it keeps what it had while the
# others follow, then converges on what changed meanwhile.
case_host_cut_off() {
	local i t0
	hosts_up || return
	publish block "$C" || fail "publishing C"
	wait_until 10 all_drop "$C" || fail "C not dropped everywhere: $(pings_all "$C")"
	t0=$(date +%s)
	in_host 2 ip link set "$(host_link 2)" down
	publish block "$D" && publish unblock "$C" || fail "publishing while host 2 is cut off"
	for i in 1 3 4; do
		wait_until 10 host_drops "$i" "$D" || fail "host $i: D not dropped"
		wait_until 10 host_delivers "$i" "$C" || fail "host $i: C not delivered"
	done
	host_drops 2 "$C" || fail "host 2 (cut off): C no longer dropped"
	host_delivers 2 "$D" || fail "host 2 (cut off): D dropped already"
	sleep $((10 - ($(date +%s) - t0) > 0 ? 10 - ($(date +%s) - t0) : 0))
	in_host 2 ip link set "$(host_link 2)" up
	wait_until 60 host_drops 2 "$D" || fail "host 2: D not dropped 60 s after its link came back"
	wait_until 10 host_delivers 2 "$C" || fail "host 2: C not delivered after its link came back"
	expect_eq "$(origins 2)" "$D:fleet" "host 2's list after it came back"
}

# 10^5 blocks in one redis-cli --pipe, each its own MULTI/EXEC: every host's
# store and live maps hold them all, and samples of them are dropped.
case_bulk() {
	local i out n
	hosts_up || return
	out=$(bulk_entries "$BULK_N" | bulk_resp | in_rd timeout 300 redis-cli -h 127.0.0.1 \
		-p "$REDIS_PORT" --pipe 2>&1) || fail "redis-cli --pipe: $out"
	case $out in *"errors: 0, replies: $((4 * BULK_N))"*) ;; *) fail "redis-cli --pipe: $out";; esac
	expect_eq "$(rcli ZCARD "sieve:{$LIST}:block")" "$BULK_N" "members in Redis"
	for i in $(seq 1 "$NHOSTS"); do
		wait_until 180 eval '[ "$(python3 "$MAPS" show "$(pin_dir $i)" | cut -d" " -f1)" = $BULK_N ]' ||
			fail "host $i: the live maps hold $(python3 "$MAPS" show "$(pin_dir "$i")" | cut -d' ' -f1)" \
				"entries 180 s after the publish, want $BULK_N"
		n=$(hxdp "$i" list --list "$LIST" | awk -F'\t' '$4 == "fleet"' | wc -l)
		expect_eq "$n" "$BULK_N" "host $i: fleet entries in its store"
		expect_eq "$(hxdp "$i" status -j -i "$(host_if "$i")" | python3 -c "import json,sys
s = json.load(sys.stdin)[0]; print(s['entries'], s['in_step'], s['resynced'])")" "$BULK_N True False" \
			"host $i: entries, in step, not re-synced by status"
	done
	for a in $BULK_SAMPLES; do
		expect_eq "$(pings_all "$a" 2)" "0 0 0 0" "pings from $a, one of the 10^5"
	done
	expect_eq "$(pings_all "$BULK_OUTSIDE" 2)" "2 2 2 2" "pings from $BULK_OUTSIDE, past them"
}

# Garbage in Redis: an unparseable member, a huge one, a stream record with
# no entry, one with an unknown op, and a list whose key is a string. Each
# is skipped and counted; the agents keep following: a later block applies.
case_garbage() {
	local i huge
	rcli SET "sieve:{junk}:block" "not a sorted set" >/dev/null || fail "SET the junk list's key"
	hosts_up || return
	publish block "not-an-entry" || fail "publishing an unparseable entry"
	publish block 198.51.100.300 || fail "publishing an address out of range"
	huge=$(head -c 100000 /dev/zero | tr '\0' 7)
	printf '%s' "$huge" | rcli -x ZADD "sieve:{$LIST}:block" +inf >/dev/null || fail "ZADD a huge member"
	printf '%s' "$huge" | rcli -x XADD "sieve:{$LIST}:log" '*' op block expires +inf origin e2e entry \
		>/dev/null || fail "XADD a huge entry"
	rcli XADD "sieve:{$LIST}:log" '*' op block origin e2e >/dev/null || fail "XADD a record without entry"
	rcli XADD "sieve:{$LIST}:log" '*' op frobnicate entry "$B" origin e2e >/dev/null ||
		fail "XADD a record with an unknown op"
	publish block "$A" || fail "publishing A after the garbage"
	wait_until 10 all_drop "$A" || fail "A (after the garbage) not dropped everywhere: $(pings_all "$A")"
	expect_eq "$(pings_all "$B")" "3 3 3 3" "pings from B (the unknown op's entry)"
	for i in $(seq 1 "$NHOSTS"); do
		kill -0 "${AGENT_PIDS[$i]}" 2>/dev/null || fail "host $i: the agent died"
		expect_eq "$(origins "$i")" "$A:fleet" "host $i: its list (the garbage left out)"
	done
	expect_metric_all 1 sieve_fleet_skipped_total "list=$LIST" reason=unparseable
	expect_metric_all 1 sieve_fleet_skipped_total "list=$LIST" reason=too_long
	expect_metric_all 1 sieve_fleet_skipped_total list=junk reason=wrong_type
	expect_metric_all 1 sieve_fleet_connected
	# A resync (the agent restarted) reads the garbage in the sorted set again, and skips it.
	agent_stop 1; agent_start 1; agent_ready 1 30 || return
	publish block "$C" || fail "publishing C"
	wait_until 10 host_drops 1 "$C" || fail "host 1 (restarted): C not dropped"
	expect_eq "$(origins 1)" "$(printf '%s:fleet\n%s:fleet' "$A" "$C")" "host 1's list after its resync"
}

# A wrong password: a clear error, logged once, retried; once the ACL takes
# that password the agent connects and follows. A password file others can
# read is refused.
case_wrong_password() {
	local d log err rc
	d=$(host_dir 1); log=$d/agent.log
	# Read-only: the agent reads, never writes.
	rcli ACL SETUSER sieve on '>right-pass' '~sieve:*' '+@read' '+@connection' >/dev/null ||
		fail "ACL SETUSER"
	printf 'wrong-pass\n' >"$d/redis.pass"
	chmod 0644 "$d/redis.pass"
	write_agent_conf 1 "user = sieve\npassword_file = $d/redis.pass\n"
	err=$(in_host 1 timeout 10 "$SIEVE" agent --config "$d/agent.conf" --state-dir "$d/state" --check 2>&1)
	rc=$?
	expect_eq "$rc" 2 "exit code of --check with a password file of mode 0644"
	case $err in *password_file*) ;; *) fail "the error for a mode 0644 password file: $err";; esac
	chmod 0600 "$d/redis.pass"
	host_attach 1 || { fail "attach host 1"; return; }
	agent_start 1
	agent_ready 1 30 || return
	wait_until 10 grep -q "fleet: .*authentication failed: .*WRONGPASS" "$log" ||
		fail "no authentication error in the log: $(tail -n 5 "$log")"
	sleep 3	# retries, every second at most
	kill -0 "${AGENT_PIDS[1]}" 2>/dev/null || fail "the agent stopped after the wrong password"
	expect_eq "$(grep -c 'fleet: .*authentication failed' "$log")" 1 "authentication errors logged (retried 3 s)"
	expect_eq "$(metric 1 sieve_fleet_connected)" 0 "sieve_fleet_connected with the wrong password"
	rcli ACL SETUSER sieve '>wrong-pass' >/dev/null || fail "ACL SETUSER: the agent's password"
	wait_until 10 grep -q "fleet: connected to $REDIS_ADDR:$REDIS_PORT" "$log" ||
		fail "not connected 10 s after the ACL took its password: $(tail -n 5 "$log")"
	publish block "$A" || fail "publishing A"
	wait_until 10 host_drops 1 "$A" || fail "A not dropped by the host that authenticated"
	expect_eq "$(metric 1 sieve_fleet_connected)" 1 "sieve_fleet_connected once authenticated"
	# Given to another user since (who could rewrite it): refused at the next connection.
	chown 65534 "$d/redis.pass"
	rcli CLIENT KILL USER sieve >/dev/null
	wait_until 10 eval '[ "$(metric 1 sieve_fleet_connected)" = 0 ]' ||
		fail "sieve_fleet_connected after the kill: $(metric 1 sieve_fleet_connected)"
	sleep 3	# retries, every second at most
	expect_eq "$(metric 1 sieve_fleet_connected)" 0 "sieve_fleet_connected, the password file of uid 65534"
	chown 0 "$d/redis.pass"
	wait_until 10 eval '[ "$(metric 1 sieve_fleet_connected)" = 1 ]' ||
		fail "not connected again 10 s after the password file was the agent's again"
}

# Local entries and fleet entries side by side on host 1: the fleet's
# unblock leaves a manual block, a resync leaves it too, and a feed refresh
# leaves the fleet's entries.
case_local_and_fleet() {
	local i
	hosts_up || return
	hxdp 1 block --list "$LIST" "$X" >/dev/null || fail "block X by hand on host 1"
	publish block "$X" || fail "publishing X"
	wait_until 10 all_drop "$X" || fail "X not dropped everywhere: $(pings_all "$X")"
	publish unblock "$X" || fail "publishing the unblock of X"
	for i in 2 3 4; do wait_until 10 host_delivers "$i" "$X" || fail "host $i: X still dropped"; done
	host_drops 1 "$X" || fail "host 1: X (blocked by hand) unblocked by the fleet"
	expect_eq "$(origins 1)" "$X:cli" "host 1's list after the fleet's unblock"
	publish block "$Y" || fail "publishing Y"
	wait_until 10 all_drop "$Y" || fail "Y not dropped everywhere: $(pings_all "$Y")"
	printf '%s\n' "$Z" >"$WORK/feed"
	hxdp 1 load --list "$LIST" --origin feedname "$WORK/feed" >/dev/null || fail "load the feed"
	: >"$WORK/feed"
	hxdp 1 load --list "$LIST" --origin feedname --allow-empty "$WORK/feed" >/dev/null ||
		fail "refresh the feed (empty, --allow-empty)"
	host_drops 1 "$Y" || fail "host 1: Y (the fleet's) removed by a feed refresh"
	host_delivers 1 "$Z" || fail "host 1: Z still dropped after the refresh"
	expect_eq "$(origins 1)" "$(printf '%s:cli\n%s:fleet' "$X" "$Y")" "host 1's list after the refresh"
	# At start the agent makes its fleet entries equal Redis's: the manual one stays.
	agent_stop 1; agent_start 1; agent_ready 1 30 || return
	wait_until 10 grep -Eq "fleet: list $LIST: .*(in step|in Redis)" "$(host_dir 1)/agent.log" ||
		fail "host 1: no resync after its restart"
	host_drops 1 "$X" || fail "host 1: X (blocked by hand) gone after a resync"
	expect_eq "$(origins 1)" "$(printf '%s:cli\n%s:fleet' "$X" "$Y")" "host 1's list after its resync"
}

# `sieve xdp block|unblock|allow --fleet` publishes: the sorted set and the
# stream say so, and every host follows.
case_cli_publish() {
	local conf rec score now
	hosts_up || return
	conf=$(host_dir 1)/agent.conf
	hxdp 1 block --fleet --list "$LIST" --config "$conf" "$X" >/dev/null || fail "block --fleet X"
	expect_eq "$(rcli ZSCORE "sieve:{$LIST}:block" "$X")" inf "X's score"
	rec=$(rcli XREVRANGE "sieve:{$LIST}:log" + - COUNT 1 | sed 1d | paste -sd' ')
	case " $rec " in *" op block "*) ;; *) fail "the stream's last record: $rec";; esac
	case " $rec " in *" entry $X "*) ;; *) fail "the stream's last record: $rec";; esac
	wait_until 10 all_drop "$X" || fail "X not dropped everywhere: $(pings_all "$X")"
	now=$(date +%s)
	hxdp 1 block --fleet --list "$LIST" --ttl 60s --config "$conf" "$Y" >/dev/null || fail "block --fleet --ttl"
	score=$(rcli ZSCORE "sieve:{$LIST}:block" "$Y")
	[ "${score%%.*}" -ge $((now + 60)) ] 2>/dev/null && [ "${score%%.*}" -le $((now + 65)) ] ||
		fail "Y's score $score, want about $((now + 60))"
	hxdp 1 allow --fleet --list "$LIST" --config "$conf" "$A" >/dev/null || fail "allow --fleet A"
	expect_eq "$(rcli ZSCORE "sieve:{$LIST}:allow" "$A")" inf "A's score on the allowlist"
	hxdp 1 unblock --fleet --list "$LIST" --config "$conf" "$X" >/dev/null || fail "unblock --fleet X"
	expect_eq "$(rcli ZSCORE "sieve:{$LIST}:block" "$X")" "" "X's score after the unblock"
	rec=$(rcli XREVRANGE "sieve:{$LIST}:log" + - COUNT 1 | sed 1d | paste -sd' ')
	case " $rec " in *" op unblock "*) ;; *) fail "the stream's last record after the unblock: $rec";; esac
	case " $rec " in *" entry $X "*) ;; *) fail "the stream's last record after the unblock: $rec";; esac
	wait_until 10 all_deliver "$X" || fail "X not delivered everywhere: $(pings_all "$X")"
	wait_until 10 all_drop "$Y" || fail "Y not dropped everywhere: $(pings_all "$Y")"
}

# Host I's expires_at of ENTRY ("None": never; empty: not listed).
expires_on() {
	hxdp "$1" list --list "$LIST" -j | python3 -c "import json,sys
print(*[e.get('expires_at') for l in json.load(sys.stdin) for e in l['entries'] if e['entry'] == '$2'])"
}
expires_is() { [ "$(expires_on "$1" "$2")" = "$3" ]; }

# A re-ban through --fleet follows the local re-ban rule (issue 22 item 4):
# the later expiry wins, no --ttl keeps it, --ttl never makes it permanent.
# The set's score, the stream's record and a follower's store all agree.
# Before: a re-ban without --ttl published +inf and a shorter --ttl shortened.
reban() {
	hxdp 1 block --fleet --list "$LIST" --config "$(host_dir 1)/agent.conf" "$@" >/dev/null ||
		fail "block --fleet $*"
}
# ENTRY's score is in [LOW, LOW + 5] (or is WANT exactly: inf), its last
# record carries that score, and host 2 holds that expiry; what for says so.
expect_score() {
	local entry=$1 low=$2 what=$3 score rec want
	score=$(rcli ZSCORE "sieve:{$LIST}:block" "$entry")
	if [ "$low" = inf ]; then
		expect_eq "$score" inf "$what: $entry's score"; want=None
	else
		[ "${score%%.*}" -ge "$low" ] 2>/dev/null && [ "${score%%.*}" -le $((low + 5)) ] ||
			fail "$what: $entry's score $score, want about $low"
		want=$score
	fi
	rec=$(rcli XREVRANGE "sieve:{$LIST}:log" + - COUNT 1 | sed 1d | paste -sd' ')
	case " $rec " in *" entry $entry expires ${score/inf/+inf} "*) ;;
		*) fail "$what: the stream's last record '$rec', want expires $score";; esac
	wait_until 10 expires_is 2 "$entry" "$want" ||
		fail "$what: host 2's expires_at of $entry '$(expires_on 2 "$entry")', want '$want'"
}
case_cli_reban() {
	local now score
	hosts_up || return
	now=$(date +%s)
	reban --ttl 1h "$X"; expect_score "$X" $((now + 3600)) "--ttl 1h"
	reban "$X"; expect_score "$X" $((now + 3600)) "then no --ttl (keeps 1h)"
	reban --ttl 10m "$X"; expect_score "$X" $((now + 3600)) "then --ttl 10m (no shorter)"
	now=$(date +%s)
	reban --ttl 2h "$X"; expect_score "$X" $((now + 7200)) "then --ttl 2h (extends)"
	reban --ttl never "$X"; expect_score "$X" inf "then --ttl never"
	reban --ttl 1h "$X"; expect_score "$X" inf "then --ttl 1h (never stays)"
	reban "$Y"; expect_score "$Y" inf "a new entry without --ttl"
	# A member past its score is no entry (followers ignore it): a re-ban is new.
	rcli ZADD "sieve:{$LIST}:block" $((now - 60)) "$Z" >/dev/null || fail "ZADD Z in the past"
	reban "$Z"; expect_score "$Z" inf "an expired member, no --ttl"
	wait_until 10 all_drop "$X" || fail "X not dropped everywhere: $(pings_all "$X")"
	wait_until 10 all_drop "$Z" || fail "Z not dropped everywhere: $(pings_all "$Z")"
	# The allowlist follows the same rule.
	now=$(date +%s)
	hxdp 1 allow --fleet --list "$LIST" --ttl 1h --config "$(host_dir 1)/agent.conf" "$A" >/dev/null &&
		hxdp 1 allow --fleet --list "$LIST" --config "$(host_dir 1)/agent.conf" "$A" >/dev/null ||
		fail "allow --fleet A"
	score=$(rcli ZSCORE "sieve:{$LIST}:allow" "$A")
	[ "${score%%.*}" -ge $((now + 3600)) ] 2>/dev/null && [ "${score%%.*}" -le $((now + 3605)) ] ||
		fail "A's allowlist score $score after --ttl 1h then no --ttl, want about $((now + 3600))"
}

# The kind, entry and origin of host I's list, "KIND:ENTRY:ORIGIN" sorted.
kinds() { hxdp "$1" list --list "$LIST" | awk -F'\t' 'NR > 1 { print $2 ":" $3 ":" $4 }' | sort; }

# Keys moving between the fleet's allowlist and blocklist, live and across a
# resync, in both orders: each host ends where Redis has the key (a key in
# both sets is allowed). Today's bug: block --fleet X then disallow --fleet X
# left X on neither list; so did a resync after a move from allow to block.
case_list_moves() {
	local i conf
	hosts_up || return
	conf=$(host_dir 1)/agent.conf
	hxdp 1 allow --fleet --list "$LIST" --config "$conf" "$X" >/dev/null || fail "allow --fleet X"
	wait_until 10 eval '[ "$(kinds 1)" = "allow-source:$X:fleet" ]' || fail "X not allowed: $(kinds 1)"
	hxdp 1 block --fleet --list "$LIST" --config "$conf" "$X" >/dev/null || fail "block --fleet X"
	hxdp 1 block --fleet --list "$LIST" --config "$conf" "$Z" >/dev/null || fail "block --fleet Z"
	wait_until 10 all_drop "$Z" || fail "Z not dropped everywhere: $(pings_all "$Z")"
	expect_eq "$(pings_all "$X")" "3 3 3 3" "pings from X, allowed and blocked in Redis"
	hxdp 1 disallow --fleet --list "$LIST" --config "$conf" "$X" >/dev/null || fail "disallow --fleet X"
	wait_until 10 all_drop "$X" || fail "X not dropped everywhere after its disallow: $(pings_all "$X")"
	for i in $(seq 1 "$NHOSTS"); do
		expect_eq "$(kinds "$i" | grep ":$X:")" "source:$X:fleet" "host $i: X after block, disallow"
	done
	# Across a resync: host 1 away while X moves to the allowlist and Y from it.
	publish allow "$Y" || fail "publishing the allow of Y"
	wait_until 10 eval '[ "$(kinds 1 | grep ":$Y:")" = "allow-source:$Y:fleet" ]' || fail "Y not allowed"
	agent_stop 1
	publish unblock "$X" && publish allow "$X" || fail "publishing X's move to the allowlist"
	publish disallow "$Y" && publish block "$Y" || fail "publishing Y's move to the blocklist"
	agent_start 1; agent_ready 1 30 || return
	wait_until 10 eval '[ "$(kinds 1 | grep -E ":($X|$Y):")" = "$(printf "allow-source:%s:fleet\nsource:%s:fleet" $X $Y)" ]' ||
		fail "host 1 after its resync: $(kinds 1 | tr '\n' ' ')"
	wait_until 10 host_drops 1 "$Y" || fail "host 1: Y not dropped after the resync"
	host_delivers 1 "$X" || fail "host 1: X dropped after the resync"
	for i in 2 3 4; do
		expect_eq "$(kinds "$i" | grep -E ":($X|$Y):" | tr '\n' ' ')" \
			"allow-source:$X:fleet source:$Y:fleet " "host $i: X and Y, followed live"
	done
}

# A hostile Redis against host 1's follower, model-based: tests/e2e/fleet_model.py
# (a proxy in front of Redis, which can make ZSCAN never end, and a driver of
# random changes, moves between the lists, garbage, silent changes, disconnects
# and hostile scores; after each step the store must equal what Redis holds).
# FLEET_SEED=N repeats a run; FLEET_MODEL_STEPS=N (default 60).
MODEL_PORT=6380
PROXY_PID=
case_hostile_model() {
	local d pid rc v reason seed=${FLEET_SEED:-$(( (RANDOM << 15) | RANDOM ))}
	d=$(host_dir 1)
	host_attach 1 || { fail "attach host 1"; return; }
	printf '[agent]\nexpire_interval = 1s\n[metrics]\nlisten = 127.0.0.1:9477\n[fleet]\nredis = %s:%s\nlists = %s junk\nretry_max = 1s\nnever_block = 198.51.100.99\n' \
		"$REDIS_ADDR" "$MODEL_PORT" "$LIST" >"$d/agent.conf"
	rm -f "$d/agent.pid"
	in_rd timeout 240 python3 "$HERE/fleet_model.py" --redis "127.0.0.1:$REDIS_PORT" \
		--listen "$REDIS_ADDR:$MODEL_PORT" --netns "/run/netns/$(host_ns 1)" --state "$d/state" \
		--sieve "$SIEVE" --list "$LIST" --seed "$seed" --steps "${FLEET_MODEL_STEPS:-60}" \
		--agent-pid-file "$d/agent.pid" >"$WORK/model.out" 2>&1 &
	pid=$!
	if ! wait_until 10 grep -q "proxy ready" "$WORK/model.out"; then
		fail "the model's proxy did not start: $(cat "$WORK/model.out")"
		kill "$pid"; wait "$pid"; return
	fi
	agent_start 1
	echo "${AGENT_PIDS[1]}" >"$d/agent.pid"
	wait "$pid"; rc=$?
	grep "fleet_model:" "$WORK/model.out" | sed 's/^/    /'
	[ "$rc" = 0 ] || fail "the model (exit $rc, seed $seed): $(grep FAIL -A4 "$WORK/model.out" | head -n 8)"
	kill -0 "${AGENT_PIDS[1]}" 2>/dev/null || fail "the agent died"
	for reason in refused unparseable too_long; do
		v=$(metric 1 sieve_fleet_skipped_total "list=$LIST" "reason=$reason")
		[ "$v" != absent ] && [ "$v" -ge 1 ] 2>/dev/null ||
			fail "sieve_fleet_skipped_total{reason=$reason} = $v, want >= 1"
	done
}

# Host 1's settings (EXTRA as write_agent_conf's), its Redis the proxy's port.
conf_via_proxy() {
	write_agent_conf 1 "${1:-}"
	sed -i "s/^redis = .*/redis = $REDIS_ADDR:$MODEL_PORT/" "$(host_dir 1)/agent.conf"
}

# The fleet's entries of host 1, "ALLOWED BLOCKED", from the store itself.
fleet_counts() {
	python3 -c '
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=30)
n = dict(db.execute("SELECT allow, count(*) FROM entries WHERE list = ? AND origin = ? "
                    "GROUP BY allow", (sys.argv[2], "fleet")).fetchall())
print(n.get(1, 0), n.get(0, 0))' "$(host_dir 1)/state/sieve.db" "$LIST"
}

# SIGTERM and SIGHUP at random points of a resync of a large list (N blocked,
# N allowed): never killed by SIGPIPE (exit 141), the final save done on
# SIGTERM, and each side of the list either as it was or whole, never part
# of it (a stop in the allow set's scan once committed what was read of it).
case_stop_mid_resync() {
	local n=${FLEET_STOP_N:-100000} d pid rc round sig ms delay before out whole hup
	local rounds=${FLEET_STOP_ROUNDS:-9} seed=${FLEET_SEED:-$RANDOM}
	d=$(host_dir 1)
	echo "    stop_mid_resync: seed $seed (FLEET_SEED=$seed repeats it), $n entries a side"
	python3 -c '
import sys
n, lst = int(sys.argv[1]), sys.argv[2]
def cmd(*w):
    return "*%d\r\n" % len(w) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in w)
w = sys.stdout.write
for side, base in (("block", (172 << 24) | (16 << 16)), ("allow", 10 << 24)):
    for s in range(1, n + 1, 1000):
        args = []
        for a in range(base + s, base + min(s + 1000, n + 1)):
            args += ["+inf", "%d.%d.%d.%d" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255)]
        w(cmd("ZADD", "sieve:{%s}:%s" % (lst, side), *args))
w(cmd("XADD", "sieve:{%s}:log" % lst, "*", "op", "block", "entry", "172.16.0.1",
      "expires", "+inf", "origin", "e2e"))' "$n" "$LIST" | rcli --pipe >/dev/null || { fail "loading Redis"; return; }
	host_attach 1 || { fail "attach host 1"; return; }
	# Through the model's proxy, which adds to each page of the allowlist's scan
	# 10^5 members the follower refuses: it spends most of the allow side
	# judging pages, where a stop once ended the scan as if whole.
	# nsenter execs timeout, which passes a kill on: the proxy's port is free after it
	# (in_rd's subshell would die alone, the proxy listening on into the next case).
	nsenter "--net=/run/netns/$RD" timeout 900 python3 "$HERE/fleet_model.py" \
		--redis "127.0.0.1:$REDIS_PORT" --listen "$REDIS_ADDR:$MODEL_PORT" --proxy-only \
		--pad-allow 100000 >"$WORK/proxy.out" 2>&1 &
	PROXY_PID=$!
	wait_until 10 grep -q "proxy ready" "$WORK/proxy.out" ||
		{ fail "the proxy did not start: $(cat "$WORK/proxy.out")"; return; }
	conf_via_proxy
	# The first start: a whole resync, timed.
	agent_start 1; agent_ready 1 30 || return
	wait_until 60 grep -q "fleet: list $LIST: $n blocked, $n allowed in Redis" "$d/agent.log" ||
		{ fail "no whole resync in 60 s: $(tail -n 3 "$d/agent.log")"; return; }
	expect_eq "$(fleet_counts)" "$n $n" "the fleet's entries after the first resync"
	agent_stop 1
	# Timed again: the first scan is slower than those of the rounds (a cold Redis).
	: >"$d/agent.log"
	agent_start 1; agent_ready 1 30 || return
	wait_until 60 grep -q "fleet: list $LIST: $n blocked, $n allowed in Redis" "$d/agent.log"
	ms=$(sed -n "s/.*$n allowed in Redis (read in \([0-9]*\) ms).*/\1/p" "$d/agent.log" | head -n 1)
	echo "    stop_mid_resync: the scan took ${ms:-?} ms"
	agent_stop 1
	RANDOM=$seed
	whole="fleet: list $LIST: $n blocked, $n allowed in Redis"
	for round in $(seq 1 "$rounds"); do
		sig=TERM; [ $((round % 3)) = 0 ] && sig=HUP
		: >"$d/agent.log"
		agent_start 1; agent_ready 1 30 || return
		pid=${AGENT_PIDS[1]}
		# SIGHUP: a burst of reloads, each restarting the follower (the settings
		# changed) at a random point of the resync the one before started.
		for hup in $([ "$sig" = HUP ] && seq 1 6); do
			conf_via_proxy "stream_maxlen = $((1000 + 10 * round + hup))\n"
			sleep "$(python3 -c "print('%.3f' % ($RANDOM / 32768 * 1.3 * ${ms:-1000} / 1000))")"
			# shellcheck disable=SC2034 # read by the wait_until eval below
			before=$(grep -c "$whole" "$d/agent.log")
			kill -HUP "$pid"
			wait_until 10 eval '! kill -0 $pid 2>/dev/null || [ "$(grep -c "reloaded" "$d/agent.log")" -ge $hup ]'
			kill -0 "$pid" 2>/dev/null || break
		done
		if [ "$sig" = HUP ]; then
			# Done: one more whole resync than before the last reload, or the agent gone.
			wait_until 60 eval '! kill -0 $pid 2>/dev/null || [ "$(grep -c "$whole" "$d/agent.log")" -gt $before ]' ||
				fail "round $round: no whole resync after the SIGHUPs"
			if ! kill -0 "$pid" 2>/dev/null; then
				wait "$pid"; rc=$?
				fail "round $round: a SIGHUP during a resync killed the agent (exit $rc)"
				AGENT_PIDS[1]=; agent_stop 1; conf_via_proxy; continue
			fi
			expect_eq "$(fleet_counts)" "$n $n" "round $round: the fleet's entries after the reloads"
			delay=0
		else
			# Somewhere in the scan (blocks, then allows) or the loads after it.
			delay=$(python3 -c "print('%.3f' % ((0.2 + $RANDOM / 32768 * 1.1) * ${ms:-1000} / 1000))")
			sleep "$delay"
		fi
		kill -TERM "$pid"
		wait_until 30 eval '! kill -0 $pid 2>/dev/null'
		wait "$pid"; rc=$?
		AGENT_PIDS[1]=; agent_stop 1	# its notify socket's reader
		expect_eq "$rc" 0 "round $round: exit status after SIG$sig (SIGTERM at $delay s)"
		grep -q "stopped; the XDP programs keep enforcing" "$d/agent.log" ||
			fail "round $round: no clean stop (the final save) after SIG$sig (SIGTERM at $delay s)"
		out=$(fleet_counts)
		case $out in "0 0"|"0 $n"|"$n 0"|"$n $n") ;;
		*) fail "round $round: SIG$sig left part of a list: $out (allowed blocked), want 0 or $n each";;
		esac
		# A resync stores only sets read whole: it never logs fewer than Redis has.
		out=$(grep "fleet: list $LIST: .* in Redis" "$d/agent.log" | grep -v "$whole")
		[ -z "$out" ] || fail "round $round: a resync stored part of a set: $out"
		conf_via_proxy
	done
	agent_stop 1
	kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null; PROXY_PID=
}

# A set read by rank while it shrinks (tests/e2e/fleet_model.py --shift):
# 250000 blocked, read through the model's proxy, which before the follower's
# second ZRANGE page removes the set's K lowest members silently (as a
# producer's ZREMRANGEBYSCORE of expired members does). K within the pages'
# overlap: the next page still holds the previous one's last member, so no
# member the set kept is missed (all 250000, the K read before their removal
# included, and no fallback); K past it: that anchor is gone, the set is read
# again by ZSCAN (logged), and the store holds what the set holds then.
case_range_shift() {
	local n=250000 k d want log
	d=$(host_dir 1)
	python3 -c '
import sys
n, lst = int(sys.argv[1]), sys.argv[2]
def cmd(*w):
    return "*%d\r\n" % len(w) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in w)
w = sys.stdout.write
base = (172 << 24) | (16 << 16)
for s in range(1, n + 1, 1000):
    args = []
    for a in range(base + s, base + min(s + 1000, n + 1)):
        args += ["+inf", "%d.%d.%d.%d" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255)]
    w(cmd("ZADD", "sieve:{%s}:block" % lst, *args))
w(cmd("XADD", "sieve:{%s}:log" % lst, "*", "op", "block", "entry", "172.16.0.1",
      "expires", "+inf", "origin", "e2e"))' "$n" "$LIST" | rcli --pipe >/dev/null || { fail "loading Redis"; return; }
	for k in 500 5000; do
		hosts_reset
		host_attach 1 || { fail "attach host 1"; return; }
		# As stop_mid_resync's: killed, the port is free for the next.
		nsenter "--net=/run/netns/$RD" timeout 300 python3 "$HERE/fleet_model.py" \
			--redis "127.0.0.1:$REDIS_PORT" --listen "$REDIS_ADDR:$MODEL_PORT" --proxy-only \
			--shift "$k" >"$WORK/proxy.out" 2>&1 &
		PROXY_PID=$!
		wait_until 10 grep -q "proxy ready" "$WORK/proxy.out" ||
			{ fail "the proxy did not start: $(cat "$WORK/proxy.out")"; return; }
		conf_via_proxy
		want=$(rcli ZCARD "sieve:{$LIST}:block")
		[ "$k" = 500 ] || want=$((want - k))
		agent_start 1; agent_ready 1 60 || return
		wait_until 60 grep -q "fleet: list $LIST: .* in Redis" "$d/agent.log" ||
			{ fail "K=$k: no resync in 60 s: $(tail -n 3 "$d/agent.log")"; return; }
		log=$(grep -o "fleet: list $LIST: .* in Redis.*" "$d/agent.log" | head -n 1)
		echo "    range_shift: $k removed before the second page: $log"
		expect_eq "$(fleet_counts)" "0 $want" "K=$k: the fleet's entries (allowed blocked)"
		case $k:$log in
		500:*ZSCAN*) fail "K=500: read by ZSCAN, want by rank: $log";;
		5000:*"a set by ZSCAN"*) ;;
		5000:*) fail "K=5000: the anchor was gone, yet no ZSCAN: $log";;
		esac
		agent_stop 1
		kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null; PROXY_PID=
	done
}

# Log injection (issue 20, item 9): members and records that hold a newline
# and a journal priority, ESC and invalid UTF-8 reach each agent's log as
# one escaped line each, never as a line of their own; the metrics stay
# valid (promtool) and the agents follow on.
case_log_injection() {
	local i log evil
	evil=$(printf 'x\n<0>evil\033[2J\377')
	hosts_up || return
	printf '%s' "$evil" | rcli -x ZADD "sieve:{$LIST}:block" +inf >/dev/null || fail "ZADD the member"
	printf '%s' "$evil" | rcli -x XADD "sieve:{$LIST}:log" '*' op block expires +inf origin e2e \
		entry >/dev/null || fail "XADD the record"
	publish block "$A" || fail "publishing A after them"
	wait_until 10 all_drop "$A" || fail "A not dropped everywhere: $(pings_all "$A")"
	# The resync after a restart reads the member from the set (the stream's record was live).
	agent_stop 1; agent_start 1; agent_ready 1 30 || return
	for i in $(seq 1 "$NHOSTS"); do
		log=$(host_dir "$i")/agent.log
		grep -q '^<0>' "$log" && fail "host $i: the member made a line of its own: $(grep '^<0>' "$log")"
		grep -q "$(printf '\033')" "$log" && fail "host $i: a raw ESC in the log"
		LC_ALL=C grep -q "$(printf '\377')" "$log" && fail "host $i: invalid UTF-8 in the log"
		grep -qF 'x\x0a<0>evil\x1b[2J\xff' "$log" ||
			fail "host $i: no escaped line for the member: $(grep skipping "$log" | head -n 2)"
		grep -v '^sieve agent: [a-z]*: ' "$log" | grep -q . &&
			fail "host $i: a log line without the agent's prefix: $(grep -v '^sieve agent: ' "$log" | head -n 1)"
	done
}


CASES="block_unblock_ttl redis_killed host_cut_off bulk garbage wrong_password local_and_fleet
	cli_publish cli_reban list_moves hostile_model stop_mid_resync range_shift log_injection"

main() {
	local c cases
	if [ "$(id -u)" != 0 ]; then
		echo "the fleet cases need root (network namespaces, XDP)"; echo "0 1" >"$RESULTS"; exit 2
	fi
	# shellcheck disable=SC2086 # the names: one argument each
	cases=$(cases_matching e2e_fleet_ "$FILTER" $CASES)
	[ -n "$cases" ] || { finish "$RESULTS" fleet; return; }
	# shellcheck disable=SC2086 # the sample addresses: one argument each
	if ! fleet_setup || ! add_sources $A $B $C $D $X $Y $Z $BULK_SAMPLES $BULK_OUTSIDE ||
	   ! redis_start; then
		echo "setting up the fleet's namespaces and Redis failed"; echo "0 1" >"$RESULTS"; exit 1
	fi
	for c in $cases; do
		hosts_reset
		if [ -z "$REDIS_PID" ] || ! kill -0 $REDIS_PID 2>/dev/null; then redis_start; fi
		in_rd ip link set fb$TAG up
		rcli FLUSHALL >/dev/null && rcli ACL DELUSER sieve >/dev/null || fail "emptying Redis"
		"case_$c"
		# A proxy a case left behind (it returned early): its port is the next one's.
		[ -z "$PROXY_PID" ] || { kill "$PROXY_PID"; wait "$PROXY_PID"; PROXY_PID=; } 2>/dev/null
		if [ "$case_failed" != 0 ]; then
			for i in $(seq 1 $NHOSTS); do
				[ -s "$(host_dir "$i")/agent.log" ] &&
					sed 's/^/    host '"$i"' log: /' "$(host_dir "$i")/agent.log" | tail -n 5
			done
		fi
		case_report "e2e_fleet_$c"
	done
	hosts_reset
	finish "$RESULTS" fleet
}

main; exit $?	# on one line: nothing after it is read, even if the file changes meanwhile
