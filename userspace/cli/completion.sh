#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Writes sieve's bash completion on stdout, generated from the CLI's own
# table (`sieve __complete`, see cli_print_table()), so it completes every
# command and option the binary has and no other.
# Usage: completion.sh PATH/TO/sieve > build/completion/sieve
#
# What a value or an argument completes to comes from its name in the
# table: FILE and KEYFILE files, DIR folders, IFACE the interfaces of
# /sys/class/net, an option's CHOICES column its words, and NAME, DST and
# SRC of a `filter` command the names `sieve filter list` prints (but for
# create and import, whose NAME is a new one).
set -eu
sieve=${1:?usage: completion.sh PATH/TO/sieve}
table=$("$sieve" __complete)

printf '%s\n' "# bash completion for sieve(8): generated from 'sieve __complete' by" \
	"# userspace/cli/completion.sh; do not edit." \
	"# shellcheck shell=bash disable=SC2207"

printf '%s\n' "$table" | awk -F '\t' '
# What a value or a positional argument named META of command CMD completes to.
function kind(meta, cmd) {
	sub(/^\[/, "", meta); sub(/\]$/, "", meta); sub(/\|.*/, "", meta)
	rep = sub(/\.\.\.$/, "", meta) ? "..." : ""
	if (meta == "FILE" || meta == "KEYFILE") k = "file"
	else if (meta == "DIR") k = "dir"
	else if (meta == "IFACE") k = "iface"
	else if (cmd ~ /^filter / && cmd !~ /^filter (create|import)$/ &&
		 (meta == "NAME" || meta == "DST" || meta == "SRC")) k = "filter"
	else k = "none"
	return k rep
}
# The kinds of the positional arguments of ARGS ("NAME (KEY... | -f FILE | -)"):
# of a group of alternatives, its first, unless that is an option.
function arg_kinds(args, cmd,    out, n, i, w, t) {
	while (match(args, /\([^)]*\)/)) {
		t = substr(args, RSTART + 1, RLENGTH - 2)
		sub(/ *\|.*/, "", t)
		if (t ~ /^-/) t = "REST..."
		args = substr(args, 1, RSTART - 1) t substr(args, RSTART + RLENGTH)
	}
	n = split(args, w, " ")
	out = ""
	for (i = 1; i <= n; i++)
		out = out (out == "" ? "" : " ") kind(w[i], cmd)
	return out
}
# Keys are command lines: "sieve filter create" (bash takes no empty key).
function entry(array, key, value) {
	key = "sieve" (key == "" ? "" : " " key)
	if ((key value) ~ /[^A-Za-z0-9 _.:\/-]/) {
		print "completion.sh: unexpected characters in \"" key "\" \"" value "\"" > "/dev/stderr"
		bad = 1
	}
	lines[array] = lines[array] sprintf("\t[\"%s\"]=\"%s\"\n", key, value)
}
$1 == "command" {
	cmds[++ncmds] = $2
	args[$2] = arg_kinds($3, $2)
	parent = $2; sub(/ ?[^ ]+$/, "", parent)
	if ($2 != "") sub_of[parent] = sub_of[parent] (sub_of[parent] == "" ? "" : " ") word($2)
}
$1 == "option" {
	opts[$2] = opts[$2] (opts[$2] == "" ? "" : " ") $3 ($4 == "" ? "" : " " $4)
	if ($5 != "") {
		v = $7 != "" ? "w:" $7 : kind($5, $2)
		entry("_sieve_val", $2 " " $3, v)
		if ($4 != "") entry("_sieve_val", $2 " " $4, v)
	}
}
function word(name) { sub(/.* /, "", name); return name }
END {
	for (i = 1; i <= ncmds; i++) {
		c = cmds[i]
		if (c in sub_of) entry("_sieve_sub", c, sub_of[c])
		else {
			entry("_sieve_opts", c, opts[c])
			entry("_sieve_args", c, args[c])
		}
	}
	# Subcommands of a command; options, values and arguments of the others.
	n = split("_sieve_sub _sieve_opts _sieve_val _sieve_args", names, " ")
	for (i = 1; i <= n; i++)
		printf "declare -gA %s=(\n%s)\n", names[i], lines[names[i]]
	exit bad
}'

cat <<'EOF'

# The filters of /dev/sieve, by the sieve being completed (it needs the device).
_sieve_filter_names()
{
	"${COMP_WORDS[0]}" filter list 2>/dev/null | awk '$1 != "ID" { print $2 }'
}

# COMPREPLY: the words of KIND (file, dir, iface, filter, none, "w:WORDS")
# that start with $2, each after the prefix $3 (for --option=value).
_sieve_complete_kind()
{
	local kind=${1%...} cur=$2 prefix=${3-} w
	case $kind in
	file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
	dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
	iface) COMPREPLY=($(compgen -W "$(command ls /sys/class/net 2>/dev/null)" -- "$cur")) ;;
	filter) COMPREPLY=($(compgen -W "$(_sieve_filter_names)" -- "$cur")) ;;
	w:*) COMPREPLY=($(compgen -W "${kind#w:}" -- "$cur")) ;;
	*) COMPREPLY=() ;;
	esac
	if [ -n "$prefix" ]; then
		for w in "${!COMPREPLY[@]}"; do COMPREPLY[w]=$prefix${COMPREPLY[w]}; done
	fi
}

_sieve()
{
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=sieve w i nargs=0 endopts="" kinds
	COMPREPLY=()
	# Walk the words before the cursor: commands, options (with their
	# values: "--opt VALUE", and "--opt = VALUE" as bash splits at '='),
	# and positional arguments.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [ -z "$endopts" ] && [ "$w" = -- ]; then
			endopts=1
		elif [ -z "$endopts" ] && [[ $w == -?* ]]; then
			[ -n "${_sieve_val["$cmd $w"]+set}" ] || continue
			if ((i + 2 <= COMP_CWORD)) && [ "${COMP_WORDS[i + 1]}" = = ]; then
				((i++))
			fi
			if ((i + 1 == COMP_CWORD)); then
				[ "$cur" = = ] && cur=""
				_sieve_complete_kind "${_sieve_val["$cmd $w"]}" "$cur"
				return 0
			fi
			((i++))
		elif [ -n "${_sieve_sub["$cmd"]+set}" ] && ((nargs == 0)); then
			# A command of commands: `sieve help CMD...` walks the same way.
			[[ " ${_sieve_sub["$cmd"]} " == *" $w "* ]] && cmd="$cmd $w"
		else
			((nargs++))
		fi
	done
	if [ -z "$endopts" ] && [[ $cur == --*=* ]] && [ -n "${_sieve_val["$cmd ${cur%%=*}"]+set}" ]; then
		_sieve_complete_kind "${_sieve_val["$cmd ${cur%%=*}"]}" "${cur#*=}" "${cur%%=*}="
	elif [ -z "$endopts" ] && [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${_sieve_opts["$cmd"]-} --help --version" -- "$cur"))
	elif [ -n "${_sieve_sub["$cmd"]+set}" ]; then
		COMPREPLY=($(compgen -W "${_sieve_sub["$cmd"]}" -- "$cur"))
	else
		read -ra kinds <<<"${_sieve_args["$cmd"]-}"
		if ((nargs < ${#kinds[@]})); then
			_sieve_complete_kind "${kinds[nargs]}" "$cur"
		elif ((${#kinds[@]})) && [[ ${kinds[-1]} == *... ]]; then
			_sieve_complete_kind "${kinds[-1]}" "$cur"
		fi
	fi
	return 0
}
complete -F _sieve sieve
EOF
