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
# create and import, whose NAME is a new one); BACKEND its words and
# filter:NAME of those names; ENTRY of `xdp unblock` the entries of the
# list `sieve xdp list` prints (of `xdp disallow`, the allowlist's; ADDR
# of `xdp why`, the sources of both).
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
	else if (cmd == "xdp unblock" && meta == "ENTRY") k = "entry"
	else if (cmd == "xdp disallow" && meta == "ENTRY") k = "allowed"
	else if (cmd == "xdp why" && meta ~ /^ADDR/) k = "source"
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
# The store'"'"'s default folder, from --state-dir'"'"'s help: "(default ..., else DIR)".
$1 == "option" && $3 == "--state-dir" && match($6, /else \/[^)]*/) {
	store_dir = substr($6, RSTART + 5, RLENGTH - 5)
}
$1 == "option" {
	opts[$2] = opts[$2] (opts[$2] == "" ? "" : " ") $3 ($4 == "" ? "" : " " $4)
	if ($5 != "") {
		# --backend: its words, and filter:NAME for the device'"'"'s filters.
		v = $5 == "BACKEND" ? "backend:" $7 : $7 != "" ? "w:" $7 : kind($5, $2)
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
	if (store_dir ~ /[^A-Za-z0-9_.\/-]/) {
		print "completion.sh: unexpected characters in \"" store_dir "\"" > "/dev/stderr"
		bad = 1
	}
	printf "declare -g _sieve_store_dir=%s\n", store_dir
	exit bad
}'

cat <<'EOF'

# The filters of /dev/sieve, by the sieve being completed (it needs the device).
_sieve_filter_names()
{
	"${COMP_WORDS[0]}" filter list 2>/dev/null | awk '$1 != "ID" { print $2 }'
}

# The word being completed as typed: bash splits words at ':' too
# (COMP_WORDBREAKS), so that filter:NA and 2001:db8::1 arrive in pieces.
_sieve_typed_word()
{
	local line=${COMP_LINE:0:COMP_POINT}
	printf '%s' "${line##*[[:space:]]}"
}

# COMPREPLY: the WORDS ($1) that start with the word as typed (less a
# leading "--option=", $2), less what bash already holds before its last
# ':' (as bash-completion's __ltrim_colon_completions).
_sieve_reply_colon_words()
{
	local typed w
	typed=$(_sieve_typed_word)
	typed=${typed#"${2-}"}
	COMPREPLY=($(compgen -W "$1" -- "$typed"))
	if [[ $typed == *:* && $COMP_WORDBREAKS == *:* ]]; then
		typed=${typed%"${typed##*:}"}
		for w in "${!COMPREPLY[@]}"; do COMPREPLY[w]=${COMPREPLY[w]#"$typed"}; done
	fi
}

# The entries of the list the command line names (--list, -i, --state-dir),
# of the allowlist if $1 is allow (both lists' sources if it is source), that start with $2 (awk picks them: a
# feed's 100000 entries are too many for compgen): `sieve xdp list`, at most 2 s, nothing
# if it cannot read the store. A store that is not there is left so: list
# would make one, and a Tab makes nothing.
_sieve_xdp_entries()
{
	local i w dir=${SIEVE_STATE_DIR-} args=()
	# The order of sources of every command (settings.c): --state-dir, the
	# environment, sieve.conf's state_dir, the default; then named to list,
	# so that it reads the store checked here and never makes one elsewhere.
	[ -n "$dir" ] || dir=$(awk -F '=' '/^[ \t]*state_dir[ \t]*=/ {
		v = $2; gsub(/^[ \t]+|[ \t]+$/, "", v); d = v } END { print d }' \
		"${SIEVE_CONFIG:-/etc/sieve/sieve.conf}" 2>/dev/null)
	[ -n "$dir" ] || dir=$_sieve_store_dir
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--list|-i|--iface|--state-dir)
			[ "${COMP_WORDS[i + 1]-}" = = ] && ((i++))
			if [ "$w" = --state-dir ]; then dir=${COMP_WORDS[i + 1]-}; else
			args+=("$w" "${COMP_WORDS[i + 1]-}"); fi ;;
		esac
	done
	[ -n "$dir" ] && [ -r "$dir/sieve.db" ] || return 0
	args+=(--state-dir "$dir")
	# A change without --list or -i goes to the list "default" (list alone shows all).
	[[ " ${args[*]} " == *" --list "* || " ${args[*]} " == *" -i "* ||
	   " ${args[*]} " == *" --iface "* ]] || args+=(--list default)
	timeout 2 "${COMP_WORDS[0]}" xdp list "${args[@]}" </dev/null 2>/dev/null |
		awk -F '\t' -v allow="${1-}" -v p="${2-}" \
			'NR > 1 && index($3, p) == 1 &&
			 (allow == "source" ? $2 ~ /^(allow-)?source$/ : ($2 ~ /^allow-/) == (allow != "")) {
				print $3 }'
}

# COMPREPLY: the words of KIND (file, dir, iface, filter, entry, allowed,
# source, none, "w:WORDS", "backend:WORDS") that start with $2, each after the
# prefix $3 (for --option=value).
_sieve_complete_kind()
{
	local kind=${1%...} cur=$2 prefix=${3-} w
	case $kind in
	entry) _sieve_reply_colon_words "$(_sieve_xdp_entries "" "$(_sieve_typed_word)")"; return ;;
	allowed) _sieve_reply_colon_words "$(_sieve_xdp_entries allow "$(_sieve_typed_word)")"; return ;;
	source) _sieve_reply_colon_words "$(_sieve_xdp_entries source "$(_sieve_typed_word)")"; return ;;
	backend:*)
		w=$(_sieve_filter_names | sed 's/^/filter:/')
		if [ -z "$prefix" ]; then
			_sieve_reply_colon_words "${kind#backend:} $w"
			return
		fi
		COMPREPLY=($(compgen -W "${kind#backend:} $w" -- "$cur")) ;;
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
	# "--backend filter:NA", as bash splits it at ':': the walk below would
	# take the pieces for arguments.
	w=${COMP_LINE:0:COMP_POINT}
	w=${w%"$(_sieve_typed_word)"}
	if [[ $(_sieve_typed_word) == filter:* && $w =~ (^|[[:space:]])--backend[[:space:]]+$ ]]; then
		_sieve_reply_colon_words "$(_sieve_filter_names | sed 's/^/filter:/')"
		return 0
	fi
	if [[ $(_sieve_typed_word) == --backend=filter:* ]]; then
		_sieve_reply_colon_words "$(_sieve_filter_names | sed 's/^/filter:/')" --backend=
		return 0
	fi
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
