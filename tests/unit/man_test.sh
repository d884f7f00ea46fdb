#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The man pages (doc/man) against what they document, so they cannot drift:
#  - every page formats without a warning (groff -man -ww -z);
#  - the commands' pages against the CLI's own table (`sieve __complete`):
#    each command has one synopsis (.SY ... .YS) in its page (sieve-filter(8)
#    for `filter ...`, sieve-xdp(8) for `xdp ...`, sieve-agent(8) for
#    `agent`, sieve(8) for the rest) whose options (.OP) are exactly the
#    command's, with the same short letter and value name; and a page's
#    OPTIONS section describes (.TP/.TQ tags) exactly the options of its
#    synopses, plus --help and --version;
#  - sieve.conf(5) against the settings' table, userspace/conf/settings.c;
#  - libsieve(3)'s synopsis against the functions of userspace/lib/libsieve.h.
# Usage: man_test.sh PATH/TO/sieve MAN_DIR [RESULT_FILE]; writes "PASSED FAILED".
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
sieve=${1:?usage: man_test.sh PATH/TO/sieve MAN_DIR [RESULT_FILE]}
man=${2:?usage: man_test.sh PATH/TO/sieve MAN_DIR [RESULT_FILE]}
result_file=${3:-}
top=$(cd "$(dirname "$0")/../.." && pwd)

# same NAME GOT WANT: two sorted lists, equal; else what each lacks.
same() {
	local name=$1 got=$2 want=$3
	if [ "$got" = "$want" ]; then ok "$name"; return; fi
	not_ok "$name" "documented, not in the source: $(comm -23 <(echo "$got") <(echo "$want") | tr '\n' ' ')" \
		"in the source, not documented: $(comm -13 <(echo "$got") <(echo "$want") | tr '\n' ' ')"
}

pages=(sieve.8 sieve-filter.8 sieve-xdp.8 sieve-agent.8 sieve.conf.5 libsieve.3)
for p in "${pages[@]}"; do
	[ -f "$man/$p" ] || { not_ok "$p exists"; continue; }
	name=${p%.*} section=${p##*.}
	if grep -qE "^\.TH ${name^^} $section " "$man/$p"; then ok "$p: .TH names it"; else
		not_ok "$p: .TH names it" "$(grep '^\.TH' "$man/$p")"; fi
	if ! command -v groff >/dev/null; then
		skip "$p: groff -man -ww -z (no groff: make deps installs groff-base)"
		continue
	fi
	out=$(groff -man -ww -z "$man/$p" 2>&1)
	if [ -z "$out" ]; then ok "$p: groff -man -ww -z prints nothing"; else
		not_ok "$p: groff -man -ww -z prints nothing" "$out"; fi
done

# roff to text, enough for the lines read here: \- and \(aq, fonts and \& gone.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/\\(aq/'"'"'/g'; }

# The synopses of a page: "COMMAND<TAB>--LONG<TAB>-L<TAB>VALUE" per option,
# "COMMAND" alone for a synopsis; COMMAND without "sieve ".
synopses() {
	plain <"$1" | awk '
	/^\.SY/ { cmd = $0; sub(/^\.SY */, "", cmd); gsub(/"/, "", cmd); sub(/^sieve ?/, "", cmd)
		in_sy = 1; print cmd; next }
	/^\.YS/ { in_sy = 0; next }
	in_sy && /^\.OP / {
		line = substr($0, 5)
		if (line ~ /^"/) { match(line, /^"[^"]*"/); names = substr(line, 2, RLENGTH - 2)
				   value = substr(line, RLENGTH + 1) }
		else { names = line; sub(/ .*/, "", names); value = line; sub(/^[^ ]* ?/, "", value) }
		gsub(/^ +| +$|"/, "", value)
		n = split(names, alt, "|"); long = ""; letter = ""
		for (i = 1; i <= n; i++)
			if (alt[i] ~ /^--/) long = alt[i]; else letter = alt[i]
		print cmd "\t" long "\t" letter "\t" value
	}'
}
# The long options a page's OPTIONS section describes (its .TP and .TQ tags).
described() {
	plain <"$1" | awk '
	/^\.SH/ { in_opts = ($0 ~ /^\.SH "?OPTIONS"?$/); next }
	in_opts && /^\.T[PQ]/ { tag = 1; next }
	in_opts && tag { tag = 0; while (match($0, /--[a-z][a-z-]*/)) {
		print substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH) } }' | sort -u
}

table=$("$sieve" __complete) || { not_ok "sieve __complete"; table=""; }
commands=$(awk -F '\t' '$1 == "command" { print $2 }' <<<"$table")
# Commands of commands (filter, xdp, snapshot, the root) have no synopsis.
leaves=$(while read -r c; do grep -q "^${c:+$c }[^ ]" <<<"$commands" || echo "$c"; done <<<"$commands")
page_of() {
	case $1 in
	filter | "filter "*) echo sieve-filter.8 ;;
	xdp | "xdp "*) echo sieve-xdp.8 ;;
	agent | "agent "*) echo sieve-agent.8 ;;
	*) echo sieve.8 ;;
	esac
}
# The synopses of sieve(8) that are no command of the table: `sieve`, `sieve help`.
extra_synopses=("" help)

for p in sieve.8 sieve-filter.8 sieve-xdp.8 sieve-agent.8; do
	[ -f "$man/$p" ] || continue
	mine=$(while read -r c; do [ "$(page_of "$c")" = "$p" ] && echo "$c"; done <<<"$leaves")
	if [ -z "$mine" ]; then
		# The agent (or the XDP commands) may be absent from this build of the CLI.
		skip "$p: the CLI has none of its commands"
		continue
	fi
	syn=$(synopses "$man/$p")
	got=$(grep -v $'\t' <<<"$syn" | sort -u)
	want=$( { echo "$mine"; [ "$p" != sieve.8 ] || printf '%s\n' "${extra_synopses[@]}"; } | sort -u)
	same "$p: a synopsis for each of its commands, and for no other" "$got" "$want"
	while read -r c; do
		got=$(awk -F '\t' -v c="$c" 'NF > 1 && $1 == c { print $2 " " $3 " " $4 }' <<<"$syn" | sort)
		want=$(awk -F '\t' -v c="$c" '$1 == "option" && $2 == c { print $3 " " $4 " " $5 }' <<<"$table" | sort)
		same "$p: sieve $c: the synopsis has its options, letters and values" "$got" "$want"
	done <<<"$mine"
	got=$(described "$man/$p" | grep -vxE -- '--help|--version')
	want=$(awk -F '\t' 'NF > 1 && $2 != "" { print $2 }' <<<"$syn" | sort -u)
	same "$p: OPTIONS describes the options of its synopses" "$got" "$want"
done
if described "$man/sieve.8" | grep -qx -- --version && described "$man/sieve.8" | grep -qx -- --help; then
	ok "sieve.8: describes --help and --version"
else
	not_ok "sieve.8: describes --help and --version"
fi

# sieve.conf(5): the settings of settings.c's table, by section.
settings_c=$top/userspace/conf/settings.c
if [ -f "$settings_c" ]; then
	want=$(sed -n 's/^[[:space:]]*\[SCONF_[A-Z_]*\] = { "\([a-z]*\)", "\([a-z_]*\)".*/[\1] \2/p' \
		"$settings_c" | sort)
	got=$(plain <"$man/sieve.conf.5" | awk '
		/^\.SH/ { in_s = ($0 ~ /^\.SH "?SETTINGS"?$/); next }
		in_s && /^\.SS/ { section = $2; gsub(/"/, "", section); next }
		in_s && /^\.TP/ { tag = 1; next }
		in_s && tag { tag = 0; print section " " $2 }' | sort)
	if [ -z "$want" ]; then
		not_ok "sieve.conf.5: settings.c's table read" "no [SCONF_...] = { \"section\", \"key\" line"
	else
		same "sieve.conf.5: SETTINGS has settings.c's settings, each in its section" "$got" "$want"
	fi
else
	not_ok "sieve.conf.5: no userspace/conf/settings.c"
fi

# libsieve(3): its SYNOPSIS declares every function of libsieve.h.
want=$(grep -oE '^[a-z][^;(]*[ *]sieve_[a-z_]+\(' "$top/userspace/lib/libsieve.h" |
	grep -oE 'sieve_[a-z_]+' | sort -u)
got=$(plain <"$man/libsieve.3" | awk '/^\.SH/ { in_s = ($0 ~ /SYNOPSIS/); next } in_s' |
	grep -oE 'sieve_[a-z_]+\(' | tr -d '(' | sort -u)
same "libsieve.3: SYNOPSIS declares the functions of libsieve.h" "$got" "$want"

finish "$result_file"
