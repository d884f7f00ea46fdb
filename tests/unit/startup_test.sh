#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What a sieve command pays before it works: the shared libraries the CLI
# loads (none: it is static-pie, inih linked in, with which sieve and the
# agent read sieve.conf the same way; none of the agent's in any build:
# those are sieve-agent's, which `sieve agent` and --fleet exec), and the
# store's log a `block` or an `unblock` reads after a bulk load (a bound,
# whatever the load's size; store.c's bound_wal()).
# Usage: startup_test.sh PATH/TO/sieve [RESULT_FILE]; writes "PASSED FAILED".
set -uo pipefail
sieve=${1:?usage: startup_test.sh PATH/TO/sieve [RESULT_FILE]}
result_file=${2:-}
sieve=$(realpath "$sieve")
agent=$(dirname "$sieve")/sieve-agent
. "$(dirname "$0")/../lib.sh"
work=$(mktemp -d /tmp/sieve-startup.XXXXXX)
at_exit "rm -rf '$work'"

# The agent's libraries (libcurl: its feeds), and gnutls, which libmicrohttpd brings.
AGENT_LIBS='libmicrohttpd|libsystemd|libhiredis|libcurl|libgnutls'

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

# The binary that runs `sieve xdp block`: its own NEEDED list, and all it loads.
needed "$sieve" >"$work/needed"
if grep -Eq "^($AGENT_LIBS)" "$work/needed"; then
	not_ok "sieve needs none of the agent's libraries" "NEEDED: $(tr '\n' ' ' <"$work/needed")"
else
	ok "sieve needs none of the agent's libraries ($(wc -l <"$work/needed") NEEDED)"
fi
ldd "$sieve" >"$work/ldd" 2>&1
if grep -Eq "($AGENT_LIBS)" "$work/ldd"; then
	not_ok "sieve loads none of the agent's libraries, nor theirs" \
		"$(grep -Eo "($AGENT_LIBS)[^ ]*" "$work/ldd" | tr '\n' ' ')"
else
	ok "sieve loads none of the agent's libraries, nor theirs ($(wc -l <"$work/ldd") in ldd)"
fi
# The XDP loader's libraries are linked in (userspace/xdp/xdp.mk,
# CLI_STATIC_XDP): no symbol of theirs is looked up at every start.
if grep -Eq '^(libbpf|libelf|libsqlite3)\.' "$work/needed"; then
	not_ok "sieve links libbpf, libelf and SQLite in" "NEEDED: $(tr '\n' ' ' <"$work/needed")"
else
	ok "sieve links libbpf, libelf and SQLite in"
fi
check "sieve still has the XDP loader (libbpf, SQLite)" \
	sh -c "{ nm '$sieve' | grep -Eq ' T sqlite3_open_v2\$' &&
		 nm '$sieve' | grep -Eq ' T bpf_object__open_mem\$'; } ||
	       { grep -q '^libbpf' '$work/needed' && grep -q '^libsqlite3' '$work/needed'; }"
check "sieve reads sieve.conf with the agent's reader (inih)" \
	sh -c "grep -q '^libinih' '$work/needed' || nm '$sieve' | grep -Eq ' T ini_parse_stream\$'"
# The default build (CLI_STATIC_XDP=1, userspace/xdp/xdp.mk) is static-pie:
# no dynamic linker, no library mapped or symbol looked up at start
# (unit.mk sets SIEVE_CLI_SHARED for a CLI_STATIC_XDP=0 build).
if [ -z "${SIEVE_CLI_SHARED:-}" ]; then
	check "sieve is static-pie (no interpreter, no NEEDED)" \
		sh -c "! readelf -l '$sieve' | grep -q 'INTERP' && [ ! -s '$work/needed' ]"
else
	echo "# SKIP static-pie: SIEVE_CLI_SHARED set (a CLI_STATIC_XDP=0 build)"
fi

# sieve-agent, beside it, has them, and `sieve agent` runs it.
check "sieve-agent is beside sieve" test -x "$agent"
needed "$agent" >"$work/agent-needed" 2>/dev/null
for lib in libmicrohttpd libsystemd libhiredis libinih libcurl; do
	check "sieve-agent links $lib" grep -q "^$lib" "$work/agent-needed"
done
check "sieve agent --version runs sieve-agent" \
	test "$("$sieve" agent --version 2>&1)" = "$("$sieve" --version)"
check "sieve agent --check runs the agent's settings check" \
	sh -c "'$sieve' agent --check --config /dev/null | grep -q '^state_dir = '"

# Alone in a folder, sieve says what it cannot run, in one line, exit 2.
mkdir "$work/alone" && cp "$sieve" "$work/alone/sieve"
"$work/alone/sieve" agent --check >"$work/out" 2>"$work/err"
rc=$?
check "without sieve-agent beside it: exit 2" test "$rc" -eq 2
check "without sieve-agent beside it: one line naming it" \
	sh -c "[ \$(wc -l <'$work/err') -eq 1 ] && grep -q 'cannot run $work/alone/sieve-agent' '$work/err'"

# rchar (bytes read through read(2) and its kind) of one run of CMD: read
# from /proc/PID/io while the process is a zombie (waitid WNOWAIT).
rchar() {
	python3 - "$@" <<'EOF'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
io = open('/proc/%d/io' % p.pid).read()
print(p.wait(), [l.split()[1] for l in io.splitlines() if l.startswith('rchar:')][0])
EOF
}

# A `block` (and an `unblock`) after a bulk load reads at most BOUND, whatever the load's size:
# 10^4, 10^5, and 250000, whose log (15.9 MB, origin "feed") is just under
# the 16 MiB the store emptied its log at before; under that, each block
# read all the log twice (24.7 MB after 10^5).
BOUND=$((512 << 10))
if [ "$(id -u)" != 0 ]; then
	# Said, not hidden: unit store_wal_bounded covers the store without root.
	echo "# SKIP the reads of a block after a load: sieve xdp block needs root"
else
	# The most bytes any of three `sieve xdp OP` reads from the store $1,
	# or "failed" if one of them fails.
	worst_reads() {
		local st=$1 op=$2 worst=0 i rc bytes
		for i in 1 2 3; do
			read -r rc bytes < <(rchar "$sieve" xdp "$op" --state-dir "$st" --list l 192.0.2.$i)
			[ "$rc" = 0 ] || { echo failed; return; }
			[ "$bytes" -gt "$worst" ] && worst=$bytes
		done
		echo "$worst"
	}
	for n in 10000 100000 250000; do
		st=$work/st$n
		python3 -c "
for i in range($n): print('10.%d.%d.%d' % (i >> 16, (i >> 8) & 255, i & 255))" >"$work/feed"
		"$sieve" xdp load --state-dir "$st" --list l --origin feed "$work/feed" >/dev/null ||
			{ not_ok "load $n"; continue; }
		# An unblock too: its keys looked up, never the list walked (the
		# feed notes' join did: 4.7 MB at 10^5).
		for op in block unblock; do
			worst=$(worst_reads "$st" "$op")
			check "sieve xdp $op after a load of $n reads $worst bytes, at most $BOUND" \
				test "$worst" != failed -a "$worst" -le "$BOUND"
		done
		check "the log after them is under 256 KiB plus the blocks'" \
			test "$(stat -c %s "$st/sieve.db-wal")" -le $(((256 + 64) << 10))
	done
fi

finish "$result_file"
