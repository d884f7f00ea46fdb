# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash # sourced by e2e.sh
#
# fail2ban's action (dist/fail2ban/sieve-xdp.conf) on Debian's fail2ban,
# for e2e.sh (sourced: its namespaces, helpers and store). A fail2ban
# server of the case's own, inside the server namespace, offline: its
# configuration, socket, pid file, log and the jails' log files in
# $F2B (never /etc/fail2ban); two jails with the shipped action:
#   f2b_a  bantime 600: failure line -> blocked on real traffic (the time
#          from the third line to the first dropped ping, median of
#          F2B_ROUNDS, printed), its unban lifting it, IPv6, an address
#          cli holds (left to cli, kept through a's unban), a flush (a's
#          entries only);
#   f2b_b  bantime 8, bantime.increment (factor 20): a second ban is
#          prolonged by the observer (actionprolong, 320 s), the TTL grows; an
#          address b holds that a bans too stays through a's unban.

F2B=$WORK/fail2ban
F2B_ROUNDS=${F2B_ROUNDS:-5}
f2b_client() { sv timeout 20 fail2ban-client -c "$F2B/etc" -s "$F2B/sock" -p "$F2B/pid" "$@"; }

f2b_config() {
	mkdir -p "$F2B/etc/filter.d" "$F2B/etc/action.d" || return 1
	: >"$F2B/a.log" && : >"$F2B/b.log" || return 1
	cp "$HERE/../../dist/fail2ban/sieve-xdp.conf" "$F2B/etc/action.d/" || return 1
	cat >"$F2B/etc/fail2ban.conf" <<-EOF
	[Definition]
	loglevel = INFO
	logtarget = $F2B/fail2ban.log
	syslogsocket = auto
	socket = $F2B/sock
	pidfile = $F2B/pid
	dbfile = :memory:
	dbpurgeage = 1d
	EOF
	# The shipped action, told the suite's sieve and store.
	local act="sieve-xdp[sieve=\"$SIEVE\", sieve_opts=\"--state-dir $SIEVE_STATE_DIR\"]"
	cat >"$F2B/etc/jail.conf" <<-EOF
	[DEFAULT]
	usedns = no
	ignoreself = false
	backend = polling
	filter = sievetest
	maxretry = 3
	findtime = 600
	action = $act

	[f2b_a]
	enabled = true
	logpath = $F2B/a.log
	bantime = 600

	[f2b_b]
	enabled = true
	logpath = $F2B/b.log
	bantime = 8
	bantime.increment = true
	bantime.factor = 20
	EOF
	cat >"$F2B/etc/filter.d/sievetest.conf" <<-'EOF'
	[Definition]
	failregex = ^\s*AUTH FAIL user=\S+ from <HOST>\s*$
	datepattern = {^LN-BEG}%%Y-%%m-%%d %%H:%%M:%%S
	EOF
}

f2b_start() {
	f2b_config || { fail "writing fail2ban's configuration in $F2B"; return 1; }
	f2b_client -x start >"$F2B/start.out" 2>&1 ||
		{ fail "fail2ban-client start: $(tail -3 "$F2B/start.out")"; return 1; }
	wait_until 10 f2b_client ping >/dev/null 2>&1 || { fail "fail2ban does not answer"; return 1; }
}

# Stops the case's server (also from e2e.sh's cleanup): by its socket,
# then by the pid its pid file names.
f2b_stop() {
	local pid
	[ -e "$F2B/pid" ] || return 0
	pid=$(cat "$F2B/pid" 2>/dev/null)
	f2b_client stop >/dev/null 2>&1
	[ -n "$pid" ] && wait_until 10 eval '! kill -0 $pid 2>/dev/null' ||
		{ [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; }
	rm -f "$F2B/pid"
}

# f2b_fail LOG ADDR: three failure lines from ADDR (maxretry).
f2b_fail() {
	local i
	for i in 1 2 3; do
		printf '%s AUTH FAIL user=u%s from %s\n' "$(date '+%F %T')" "$i" "$2" >>"$F2B/$1.log"
	done
}

# One ping from SRC: 0 answered, 1 dropped (the server's address by family).
f2b_dropped() {
	local dst=$SV4
	case $1 in *:*) dst=$SV6;; esac
	! cl ping -n -q -c 1 -W 0.3 -I "$1" "$dst" >/dev/null 2>&1
}

# f2b_until SRC WANT SECS: pings from SRC until its fate is WANT (0
# passes, 1 dropped), at most SECS; prints the ms from $t0 to the ping
# that showed it. Status 1 if it never did.
f2b_until() {
	local src=$1 want=$2 deadline=$(( $(date +%s%N) + $3 * 1000000000 )) ts
	while [ "$(date +%s%N)" -lt $deadline ]; do
		ts=$(date +%s%N)
		if f2b_dropped "$src"; then [ "$want" = 1 ] && break; else [ "$want" = 0 ] && break; fi
		sleep 0.02
		ts=
	done
	[ -n "$ts" ] && echo $(( (ts - t0) / 1000000 ))
	[ -n "$ts" ]
}

# The origin and the left seconds of ENTRY on the list (empty if none).
f2b_entry() {
	on list -j | python3 -c '
import json, sys
for l in json.load(sys.stdin):
    for e in l["entries"]:
        if e["entry"] == sys.argv[1] and not e["allow"]:
            print(e["origin"], e.get("expires_in", "never"))' "$1"
}

f2b_median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Ban, measure, unban: F2B_ROUNDS times from A4.
f2b_rounds() {
	local r ms bans="" unbans="" e
	for r in $(seq 1 "$F2B_ROUNDS"); do
		t0=$(date +%s%N)
		f2b_fail a "$A4"
		ms=$(f2b_until "$A4" 1 10) || { fail "round $r: $A4 not dropped 10 s after its failures"; return 1; }
		bans="$bans $ms"
		e=$(f2b_entry "$A4")
		case $e in "fail2ban/f2b_a "59[0-9]|"fail2ban/f2b_a 600") ;;
		*) fail "round $r: entry of $A4 is '$e', want fail2ban/f2b_a with ~600 s";; esac
		t0=$(date +%s%N)
		f2b_client set f2b_a unbanip "$A4" >/dev/null || fail "unbanip $A4"
		ms=$(f2b_until "$A4" 0 10) || { fail "round $r: $A4 still dropped 10 s after the unban"; return 1; }
		unbans="$unbans $ms"
		expect_eq "$(f2b_entry "$A4")" "" "round $r: $A4 on the list after the unban"
	done
	echo "    fail2ban: failure line -> dropped, ms:$bans (median $(echo "$bans" | f2b_median));" \
		"unban -> passes, ms:$unbans (median $(echo "$unbans" | f2b_median))"
}

case_fail2ban_jail() {
	command -v fail2ban-client >/dev/null || { fail "fail2ban is not installed (make deps)"; return; }
	attach || return
	f2b_start || { f2b_stop; return; }
	f2b_rounds
	# IPv6, through the same action.
	t0=$(date +%s%N)
	f2b_fail a "$A6"
	f2b_until "$A6" 1 10 >/dev/null || fail "$A6 not dropped 10 s after its failures"
	# cli's entry: the jail's ban leaves it to cli, its unban keeps it.
	on block "$C4" >/dev/null || fail "block $C4"
	f2b_fail a "$C4"
	wait_until 10 grep -q "Ban $C4" "$F2B/fail2ban.log" || fail "f2b_a did not ban $C4"
	f2b_client set f2b_a unbanip "$C4" >/dev/null || fail "unbanip $C4"
	wait_until 10 grep -q "Unban $C4" "$F2B/fail2ban.log" || fail "f2b_a did not unban $C4"
	expect_eq "$(f2b_entry "$C4")" "cli never" "cli's $C4 after f2b_a's unban"
	f2b_dropped "$C4" || fail "cli's $C4 passes after f2b_a's unban"
	f2b_increment
	# The flush (the jail's stop): a's entries go, b's and cli's stay.
	t0=$(date +%s%N)
	f2b_fail a "$A4"
	f2b_until "$A4" 1 10 >/dev/null || fail "$A4 not dropped before the flush"
	f2b_client stop f2b_a >/dev/null || fail "stop f2b_a"
	f2b_until "$A4" 0 10 >/dev/null || fail "$A4 still dropped after f2b_a's flush"
	expect_eq "$(on list --origin fail2ban/f2b_a | sed 1d)" "" "f2b_a's entries after its flush"
	expect_eq "$(f2b_entry "$C4" | cut -d' ' -f1)" cli "cli's $C4 after f2b_a's flush"
	expect_eq "$(f2b_entry "$B4" | cut -d' ' -f1)" fail2ban/f2b_b "f2b_b's $B4 after f2b_a's flush"
	grep -q 'ERROR' "$F2B/fail2ban.log" && fail "fail2ban logged errors: $(grep ERROR "$F2B/fail2ban.log" | head -3)"
	f2b_stop
}

# bantime.increment: B4's second ban in f2b_b is prolonged (actionprolong)
# and the entry's TTL grows; f2b_a's ban and unban of it leave it to b.
f2b_increment() {
	local ttl
	t0=$(date +%s%N)
	f2b_fail b "$B4"
	f2b_until "$B4" 1 10 >/dev/null || fail "$B4 not dropped 10 s after its failures (f2b_b)"
	# The first ban runs out (bantime 8): fail2ban's unban lifts it.
	f2b_until "$B4" 0 15 >/dev/null || fail "$B4 still dropped 15 s after its 8 s ban"
	t0=$(date +%s%N)
	f2b_fail b "$B4"
	f2b_until "$B4" 1 10 >/dev/null || fail "$B4 not dropped after its second failures"
	wait_until 12 grep -q "Increase Ban $B4" "$F2B/fail2ban.log" || fail "f2b_b did not increase $B4's ban"
	# The observer prolongs it within 10 s; the TTL goes past the 8 s bantime.
	wait_until 12 eval '[ "$(f2b_entry $B4 | cut -d" " -f2)" -gt 8 ] 2>/dev/null' ||
		fail "$B4's TTL did not grow past 8 s: '$(f2b_entry "$B4")'"
	ttl=$(f2b_entry "$B4" | cut -d' ' -f2)
	f2b_fail a "$B4"
	wait_until 10 grep -q "\[f2b_a\] Ban $B4" "$F2B/fail2ban.log" || fail "f2b_a did not ban $B4"
	f2b_client set f2b_a unbanip "$B4" >/dev/null || fail "f2b_a unbanip $B4"
	wait_until 10 grep -q "\[f2b_a\] Unban $B4" "$F2B/fail2ban.log" || fail "f2b_a did not unban $B4"
	expect_eq "$(f2b_entry "$B4" | cut -d' ' -f1)" fail2ban/f2b_b "f2b_b's $B4 after f2b_a's unban"
	f2b_dropped "$B4" || fail "f2b_b's $B4 (TTL $ttl s) passes after f2b_a's unban"
}
