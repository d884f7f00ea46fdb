#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The CrowdSec cases of make test-e2e (issue 25): sieve-agent following a
# real CrowdSec Local API (Debian's crowdsec, offline: SQLite in the
# suite's folder, no Central API, bound to 127.0.0.1 of a namespace of the
# suite's own, as ../shared's crowdsec-testbed.sh does), decisions made
# with cscli, real traffic from a client namespace over veth to the
# server namespace where the LAPI, the agent and XDP run.
#
# Usage: crowdsec.sh SIEVE RESULTS_FILE [CASE_SUBSTRING]
# Every wait is bounded; the trap stops the LAPI and the agent and removes
# the namespaces whatever happens.
set -u

SIEVE=$(realpath "$1")
RESULTS=$2
FILTER=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
TAG=$$
CL=sieve-cs-cl-$TAG
SV=sieve-cs-sv-$TAG
IF=scs$TAG
WORK=$(mktemp -d /tmp/sieve-cs.XXXXXX)
export SIEVE_STATE_DIR=$WORK/state
LAPI_PORT=$((20000 + TAG % 20000))
METRICS_PORT=$((LAPI_PORT + 1))
KEY=sieve0123456789abcdef0123456789ab
CONF=$WORK/sieve.conf
LAPI_PID=; AGENT_PID=

SV4=198.51.100.1; A4=198.51.100.2; B4=198.51.100.3; C4=198.51.100.100
SV6=2001:db8:c5::1; A6=2001:db8:c5::2; C6=2001:db8:c5::100
# The bulk case's 10^5 sources from 172.16.0.1: the first, the middle, the
# last, and one past them.
BULK_N=100000
BULK_SAMPLES="172.16.0.1 172.16.195.80 172.17.134.160"
BULK_OUTSIDE=172.17.134.161

passed=0; failed=0
# fail, expect_eq, wait_until: the suites' one helper library.
. "$HERE/../lib.sh"

sv() { nsenter --net=/run/netns/$SV "$@"; }
cl() { nsenter --net=/run/netns/$CL "$@"; }
cscli_() { sv cscli -c "$WORK/lapi/config.yaml" --error "$@"; }
xdp() { sv "$SIEVE" xdp "$@"; }

# Replies out of N pings from SRC to DST.
pings() {
	cl ping -n -q -c "${3:-2}" -i 0.05 -W 1 -I "$1" "$2" 2>/dev/null |
		sed -n 's/.* \([0-9]*\) received.*/\1/p'
}
drops() { [ "$(pings "$1" "$2")" = 0 ]; }
delivers() { [ "$(pings "$1" "$2")" = 2 ]; }

# One sample of the agent's /metrics (labels as NAME=VALUE), "absent" if none.
metric() {
	local name=$1; shift
	sv curl -s --max-time 5 "http://127.0.0.1:$METRICS_PORT/metrics" | python3 -c '
import re, sys
name, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
for line in sys.stdin:
    m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)", line)
    if m and m.group(1) == name and \
       dict(re.findall(r"(\w+)=\"([^\"]*)\"", m.group(2) or "")) == want:
        print(m.group(3)); sys.exit(0)
print("absent")' "$name" "$@"
}
metric_is() { [ "$(metric "$@")" = "$VALUE" ]; }

# "ENTRY ORIGIN" of the default list, sorted.
rows() { xdp list --list default | awk -F'\t' 'NR > 1 { print $3, $4 }' | sort; }
# The EXPIRES column of ENTRY ("59m58s").
expires_of() { xdp list --list default | awk -F'\t' -v e="$1" '$3 == e { print $5 }'; }

# ---- the test bed ----

setup() {
	ip netns add $CL && ip netns add $SV || return 1
	ip link add cl$TAG netns $CL type veth peer name $IF netns $SV || return 1
	for a in $A4 $B4 $C4 $BULK_SAMPLES $BULK_OUTSIDE; do cl ip addr add "$a/24" dev cl$TAG; done
	cl ip addr add $A6/64 dev cl$TAG nodad
	cl ip addr add $C6/64 dev cl$TAG nodad
	sv ip addr add $SV4/24 dev $IF
	sv ip addr add $SV6/64 dev $IF nodad
	for l in lo cl$TAG; do cl ip link set "$l" up; done
	for l in lo $IF; do sv ip link set "$l" up; done
	# Replies to the bulk case's sources.
	sv ip route add 172.16.0.0/12 dev $IF || return 1
	cl ping -c 1 -W 2 $SV4 >/dev/null || return 1
	mkdir -p "$WORK/lapi/data" || return 1
	cat >"$WORK/lapi/config.yaml" <<-YAML
	common:
	  daemonize: false
	  log_media: stdout
	  log_level: warning
	config_paths:
	  config_dir: $WORK/lapi/
	  data_dir: $WORK/lapi/data/
	db_config:
	  type: sqlite
	  db_path: $WORK/lapi/data/crowdsec.db
	  use_wal: true
	api:
	  client:
	    credentials_path: $WORK/lapi/local_api_credentials.yaml
	  server:
	    listen_uri: 127.0.0.1:$LAPI_PORT
	    profiles_path: /etc/crowdsec/profiles.yaml
	YAML
	# No online_client section: the Central API is off.
	cscli -c "$WORK/lapi/config.yaml" --error machines add test --password testpassword \
		-f "$WORK/lapi/local_api_credentials.yaml" --url "http://127.0.0.1:$LAPI_PORT" >/dev/null &&
	cscli -c "$WORK/lapi/config.yaml" --error bouncers add sieve -k "$KEY" >/dev/null || return 1
	(umask 077; echo "$KEY" >"$WORK/key")
	cat >"$CONF" <<-EOF
	[agent]
	state_dir = $WORK/state
	expire_interval = 1s
	[metrics]
	listen = 127.0.0.1:$METRICS_PORT
	[crowdsec]
	lapi_url = http://127.0.0.1:$LAPI_PORT
	api_key_file = $WORK/key
	lists = default
	update_frequency = 200ms
	EOF
}

# Started by nsenter itself, not by a function (sv) in a subshell: nsenter
# execs the program, so $! is the program's PID and a kill reaches it.
lapi_up() {
	nsenter --net=/run/netns/$SV crowdsec -c "$WORK/lapi/config.yaml" -no-cs \
		>>"$WORK/lapi.log" 2>&1 &
	LAPI_PID=$!
	wait_until 20 sv curl -sf -o /dev/null "http://127.0.0.1:$LAPI_PORT/health" ||
		{ fail "the LAPI did not come up in 20 s: $(tail -n 3 "$WORK/lapi.log")"; return 1; }
}

lapi_down() {
	[ -n "$LAPI_PID" ] || return 0
	kill "$LAPI_PID" 2>/dev/null
	wait_until 10 eval '! kill -0 $LAPI_PID 2>/dev/null' || kill -9 "$LAPI_PID" 2>/dev/null
	wait "$LAPI_PID" 2>/dev/null
	LAPI_PID=
}

agent_up() {
	nsenter --net=/run/netns/$SV "$SIEVE" agent --config "$CONF" 2>>"$WORK/agent.log" &
	AGENT_PID=$!
	VALUE=1 wait_until "${1:-10}" metric_is sieve_crowdsec_up ||
		{ fail "the agent not following the LAPI in ${1:-10} s: $(tail -n 3 "$WORK/agent.log")"; return 1; }
}

agent_down() {
	[ -n "$AGENT_PID" ] || return 0
	kill "$AGENT_PID" 2>/dev/null
	wait_until 20 eval '! kill -0 $AGENT_PID 2>/dev/null' ||
		{ fail "the agent did not stop on SIGTERM in 20 s"; kill -9 "$AGENT_PID"; }
	wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
}

cleanup() {
	agent_down
	lapi_down
	xdp detach $IF >/dev/null 2>&1
	ip netns del $CL 2>/dev/null
	ip netns del $SV 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

# ---- the cases ----

# cscli decisions add and delete of an IPv4 address, a range, an IPv6
# address; a short duration that runs out; a shorter re-ban, which leaves
# the longer in force (the LAPI streams the longest decision of a value;
# the store's extend_only, crowdsec_test.c, keeps it so whatever it sends).
case_add_delete() {
	local e
	cscli_ decisions add -i $A4 -d 1h >/dev/null || fail "cscli add $A4"
	cscli_ decisions add -r 198.51.100.96/27 -d 30m >/dev/null || fail "cscli add a /27"
	cscli_ decisions add -i $A6 -d 1h >/dev/null || fail "cscli add $A6"
	wait_until 5 drops $A4 $SV4 || fail "$A4 not dropped 5 s after its decision"
	wait_until 5 drops $C4 $SV4 || fail "$C4 (in the /27) not dropped"
	wait_until 5 drops $A6 $SV6 || fail "$A6 not dropped"
	delivers $B4 $SV4 || fail "$B4, not banned, not delivered"
	delivers $C6 $SV6 || fail "$C6, not banned, not delivered"
	expect_eq "$(rows)" "$(printf '%s\n' "$A4 crowdsec/cscli" "$A6 crowdsec/cscli" \
		"198.51.100.96/27 crowdsec/cscli" | sort)" "the list after three decisions"
	e=$(expires_of $A4)
	case $e in 59m*) ;; *) fail "$A4 expires in '$e', want 59m..";; esac
	# A re-ban of 5 m: LAPI streams it; the 1 h one stays in force.
	cscli_ decisions add -i $A4 -d 5m >/dev/null || fail "cscli re-add $A4 for 5m"
	sleep 1
	e=$(expires_of $A4)
	case $e in 59m*) ;; *) fail "after a 5m re-ban $A4 expires in '$e', want 59m..";; esac
	cscli_ decisions delete -i $A4 >/dev/null || fail "cscli delete $A4"
	wait_until 5 delivers $A4 $SV4 || fail "$A4 still dropped 5 s after its delete"
	# Banned again at once: the deletes LAPI repeats for about 2 s must not lift it.
	cscli_ decisions add -i $A6 -d 1h >/dev/null && cscli_ decisions delete -i $A6 >/dev/null &&
		cscli_ decisions add -i $A6 -d 2h >/dev/null || fail "cscli add, delete, add $A6"
	sleep 3
	drops $A6 $SV6 || fail "$A6, banned again after its delete, delivered 3 s later"
	cscli_ decisions delete -r 198.51.100.96/27 >/dev/null || fail "cscli delete the /27"
	wait_until 5 delivers $C4 $SV4 || fail "$C4 still dropped after the /27's delete"
	cscli_ decisions delete -i $A6 >/dev/null || fail "cscli delete $A6"
	wait_until 5 delivers $A6 $SV6 || fail "$A6 still dropped after its delete"
	# A decision of 2 s: dropped, then passed once it ran out (expiry every 1 s).
	cscli_ decisions add -i $B4 -d 2s >/dev/null || fail "cscli add $B4 for 2s"
	wait_until 3 drops $B4 $SV4 || fail "$B4 not dropped during its 2 s"
	wait_until 8 delivers $B4 $SV4 || fail "$B4 still dropped 8 s after a 2 s decision"
	expect_eq "$(rows)" "" "the list at the end"
}

# What the operator blocked stays: a decision on it changes nothing, its delete removes nothing.
case_local_wins() {
	xdp block -i $IF $B4 >/dev/null || fail "sieve xdp block $B4"
	cscli_ decisions add -i $B4 -d 1h >/dev/null || fail "cscli add $B4"
	cscli_ decisions add -i $A4 -d 1h >/dev/null || fail "cscli add $A4"
	wait_until 5 drops $A4 $SV4 || fail "$A4 not dropped"
	cscli_ decisions delete -i $B4 >/dev/null || fail "cscli delete $B4"
	cscli_ decisions delete -i $A4 >/dev/null || fail "cscli delete $A4"
	wait_until 5 delivers $A4 $SV4 || fail "$A4 not delivered after its delete"
	sleep 2.5	# LAPI repeats deletes for about 2 s: all of them applied
	drops $B4 $SV4 || fail "$B4, blocked by the operator, delivered after a CrowdSec delete"
	expect_eq "$(rows)" "$B4 cli" "the list: the operator's block only"
	xdp unblock -i $IF $B4 >/dev/null
}

# A type not taken is counted, not enforced. (Scopes are asked of the LAPI,
# ?scopes=Ip,Range: a Country decision never comes; the unit suite tries
# a reply that sends one anyway.)
case_skipped() {
	cscli_ decisions add -i $B4 -d 1h -t captcha >/dev/null || fail "cscli add a captcha"
	cscli_ decisions add --scope Country -v FR -d 1h >/dev/null || fail "cscli add a Country"
	VALUE=1 wait_until 5 metric_is sieve_crowdsec_skipped_total origin=cscli reason=type ||
		fail "captcha not counted: $(metric sieve_crowdsec_skipped_total origin=cscli reason=type)"
	delivers $B4 $SV4 || fail "$B4 (a captcha) dropped"
	grep -q "skipping decisions (type)" "$WORK/agent.log" || fail "no log line for the captcha"
	cscli_ decisions delete --all >/dev/null
}

# The LAPI stops: enforcement stays; it comes back with a decision gone
# meanwhile (its row deleted): the resync lifts it and keeps the rest.
case_outage_resync() {
	local resyncs
	cscli_ decisions add -i $A4 -d 1h >/dev/null && cscli_ decisions add -i $C4 -d 1h >/dev/null ||
		fail "cscli add $A4, $C4"
	wait_until 5 drops $A4 $SV4 && wait_until 5 drops $C4 $SV4 || fail "$A4, $C4 not dropped"
	resyncs=$(metric sieve_crowdsec_resyncs_total)
	lapi_down
	VALUE=0 wait_until 5 metric_is sieve_crowdsec_up || fail "sieve_crowdsec_up not 0 with the LAPI down"
	sleep 1
	drops $A4 $SV4 && drops $C4 $SV4 || fail "enforcement lapsed with the LAPI down"
	# While it is down, A's decision goes (as an operator's delete would).
	python3 -c "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); \
		db.execute('DELETE FROM decisions WHERE value = ?', (sys.argv[2],)); db.commit()" \
		"$WORK/lapi/data/crowdsec.db" $A4 || fail "deleting $A4's decision in the LAPI's database"
	lapi_up || return
	VALUE=1 wait_until 10 metric_is sieve_crowdsec_up || fail "sieve_crowdsec_up not back to 1"
	VALUE=$((resyncs + 1)) wait_until 5 metric_is sieve_crowdsec_resyncs_total ||
		fail "no resync after the LAPI came back: $(metric sieve_crowdsec_resyncs_total)"
	wait_until 5 delivers $A4 $SV4 || fail "$A4, gone from the LAPI, still dropped after the resync"
	drops $C4 $SV4 || fail "$C4 not dropped after the resync"
	cscli_ decisions delete --all >/dev/null
}

# A hostile server in the LAPI's place: a body that is not JSON, a 403,
# then the stream's object with bad decisions beside good ones. The first
# two change nothing enforced (counted as failures, logged once); the
# third is a resync that takes the good ones and counts the bad ones.
# The real LAPI back: the fake's origin goes, what the LAPI holds stays.
failures_at_least() { [ "$(metric sieve_crowdsec_failures_total)" -ge "$1" ]; }

case_hostile_lapi() {
	local fails fake
	cscli_ decisions add -i $A4 -d 1h >/dev/null || fail "cscli add $A4"
	wait_until 5 drops $A4 $SV4 || fail "$A4 not dropped"
	lapi_down
	echo garbage >"$WORK/fake.mode"
	nsenter --net=/run/netns/$SV python3 "$HERE/fake_lapi.py" 127.0.0.1 $LAPI_PORT \
		"$WORK/fake.mode" 60 &
	fake=$!
	fails=$(metric sieve_crowdsec_failures_total)
	VALUE=0 wait_until 5 metric_is sieve_crowdsec_up || fail "sieve_crowdsec_up not 0 on garbage"
	wait_until 5 failures_at_least $((fails + 3)) ||
		fail "garbage replies not counted as failures: $(metric sieve_crowdsec_failures_total)"
	drops $A4 $SV4 || fail "$A4 delivered while the LAPI sent garbage"
	expect_eq "$(grep -c 'not JSON' "$WORK/agent.log")" 1 "log lines of the garbage (logged once)"
	echo forbidden >"$WORK/fake.mode"
	fails=$(metric sieve_crowdsec_failures_total)
	wait_until 5 failures_at_least $((fails + 3)) ||
		fail "403s not counted as failures"
	drops $A4 $SV4 || fail "$A4 delivered while the LAPI answered 403"
	printf 'body:{"deleted":null,"new":[%s,%s,%s,%s]}\n' \
		'{"origin":"cscli","scope":"Ip","type":"ban","value":"'$A4'","duration":"59m"}' \
		'{"origin":"cscli","scope":"Ip","type":"ban","value":"not-an-ip","duration":"1h"}' \
		'{"origin":"cscli","scope":"Ip","type":"ban","value":"'$B4'","duration":"99999999999h"}' \
		'{"origin":"fake","scope":"Ip","type":"ban","value":"'$C4'","duration":"1h"}' >"$WORK/fake.mode"
	VALUE=1 wait_until 5 metric_is sieve_crowdsec_up || fail "the fake's stream object not taken"
	wait_until 5 drops $C4 $SV4 || fail "$C4, the fake's good decision, not dropped"
	drops $A4 $SV4 || fail "$A4 not dropped after the fake's resync"
	delivers $B4 $SV4 || fail "$B4, of a duration out of range, dropped"
	# The fake sends them again at every poll: counted each time, logged once.
	[ "$(metric sieve_crowdsec_skipped_total origin=cscli reason=not_address)" -ge 1 ] ||
		fail "values that are no address not counted"
	[ "$(metric sieve_crowdsec_skipped_total origin=cscli reason=duration)" -ge 1 ] ||
		fail "durations out of range not counted"
	expect_eq "$(grep -c 'skipping decisions (duration)' "$WORK/agent.log")" 1 \
		"log lines of the durations out of range"
	kill $fake 2>/dev/null; wait $fake 2>/dev/null
	# An outage between the two (a LAPI restarted between two polls keeps
	# its state, and its own record of this bouncer's last pull).
	VALUE=0 wait_until 5 metric_is sieve_crowdsec_up || fail "sieve_crowdsec_up not 0 with no server"
	lapi_up || return
	wait_until 10 delivers $C4 $SV4 || fail "$C4 (origin fake, gone with it) still dropped with the LAPI back"
	drops $A4 $SV4 || fail "$A4 not dropped with the LAPI back"
	expect_eq "$(rows)" "$A4 crowdsec/cscli" "the list with the LAPI back"
	cscli_ decisions delete --all >/dev/null
}

# 10^5 decisions by cscli decisions import, taken by a start-up resync;
# the first, middle and last dropped, one past them delivered.
case_bulk_import() {
	local line
	agent_down
	python3 -c "import ipaddress, sys
base = int(ipaddress.ip_address('172.16.0.1'))
print('value,duration,scope,type,origin')
for i in range(int(sys.argv[1])):
    print(f'{ipaddress.ip_address(base + i)},4h,ip,ban,bulk')" $BULK_N >"$WORK/bulk.csv"
	cscli_ decisions import -i "$WORK/bulk.csv" >/dev/null 2>&1 || fail "cscli decisions import"
	agent_up 60 || return
	for s in $BULK_SAMPLES; do drops "$s" $SV4 || fail "$s of the bulk not dropped"; done
	delivers $BULK_OUTSIDE $SV4 || fail "$BULK_OUTSIDE, past the bulk, not delivered"
	# cscli 1.4.6 gives imported decisions its own origin, cscli-import.
	expect_eq "$(xdp list --list default | awk -F'\t' '$3 ~ /^172\.1[67]\./ { print $4 }' | sort | uniq -c |
		awk '{ print $1, $2 }')" "$BULK_N crowdsec/cscli-import" "the bulk's entries and their origin"
	line=$(grep 'crowdsec: resync' "$WORK/agent.log" | tail -n 1)
	echo "    ${line#*info: }"
	# The last case: the suite's cleanup removes the LAPI with its 10^5.
}

CASES="add_delete local_wins skipped outage_resync hostile_lapi bulk_import"

main() {
	local c t0 any=
	for c in $CASES; do case crowdsec_$c in *"$FILTER"*) any=1;; esac; done
	if [ -z "$any" ]; then echo "0 0" >"$RESULTS"; exit 0; fi
	if [ "$(id -u)" != 0 ]; then
		echo "crowdsec.sh needs root (network namespaces, XDP)"; echo "0 1" >"$RESULTS"; exit 2
	fi
	if ! command -v crowdsec >/dev/null || ! command -v cscli >/dev/null; then
		echo "crowdsec.sh: no crowdsec (make deps installs it)"; echo "0 1" >"$RESULTS"; exit 1
	fi
	if ! setup || ! lapi_up; then
		echo "setting up the namespaces and the LAPI failed"; echo "0 1" >"$RESULTS"; exit 1
	fi
	xdp attach $IF >/dev/null || { echo "attach failed"; echo "0 1" >"$RESULTS"; exit 1; }
	for c in $CASES; do
		case crowdsec_$c in *"$FILTER"*) ;; *) continue;; esac
		case_failed=0
		t0=$(date +%s)
		if [ -z "$AGENT_PID" ]; then agent_up || { echo "FAIL e2e_crowdsec_$c"; failed=$((failed + 1)); continue; }; fi
		[ -n "$LAPI_PID" ] || lapi_up
		"case_$c"
		if [ $case_failed = 0 ]; then
			echo "ok   e2e_crowdsec_$c ($(($(date +%s) - t0)) s)"; passed=$((passed + 1))
		else
			echo "FAIL e2e_crowdsec_$c"; failed=$((failed + 1))
			tail -n 5 "$WORK/agent.log" | sed 's/^/    agent: /'
		fi
	done
	echo "$passed $failed" >"$RESULTS"
	echo "$passed passed, $failed failed ($SECONDS s)"
	[ $failed = 0 ]
}

main
