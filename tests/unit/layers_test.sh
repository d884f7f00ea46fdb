#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The layers point down: each folder includes headers only of the folders
# below it (CONTRIBUTING.md's table), so the CLI never reaches into the
# agent, libsieve never into the loader, the module never into userspace:
#
#	include/            what the module, BPF and userspace agree on
#	kmod/, bpf/         the module and the XDP program
#	userspace/lib/      libsieve: the cores built in userspace
#	userspace/xdp/      the XDP loader
#	userspace/conf/     sieve.conf
#	userspace/fleet/    the fleet's lists in Redis
#	userspace/cli/      the sieve CLI
#	userspace/agent/    the daemon: nothing includes it
#
# A quoted #include is resolved as the compilers do for our files: the
# including file's folder first, else the one folder of the tree holding
# that name (two would be ambiguous, and fail). Generated headers (the
# libbpf skeletons, vmlinux.h) and system headers (<...>) are no layer.
# Usage: layers_test.sh [TOP [RESULT_FILE]]; writes "PASSED FAILED".
set -uo pipefail
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
result_file=${2:-}
# ok, not_ok and finish: the counting the dist tests use.
. "$top/tests/dist/lib.sh"

# The folders, and which of them each may include from (itself included).
declare -A may=(
	[include]="include"
	[kmod]="kmod include"
	[bpf]="bpf include"
	[userspace/lib]="userspace/lib kmod include"
	[userspace/xdp]="userspace/xdp userspace/lib kmod include"
	[userspace/conf]="userspace/conf userspace/xdp userspace/lib kmod include"
	[userspace/fleet]="userspace/fleet userspace/conf userspace/xdp userspace/lib kmod include"
	[userspace/sources]="userspace/sources userspace/conf userspace/xdp userspace/lib kmod include"
	[userspace/cli]="userspace/cli userspace/fleet userspace/conf userspace/xdp userspace/lib kmod include"
	[userspace/agent]="userspace/agent userspace/cli userspace/sources userspace/fleet userspace/conf
		userspace/xdp
		userspace/lib kmod include"
)

# The folder (a key of may) a path of the tree lies in.
layer_of() {
	local f=$1
	case $f in
	include/*) echo include ;;
	kmod/*) echo kmod ;;
	bpf/*) echo bpf ;;
	userspace/*/*) f=${f#userspace/}; echo "userspace/${f%%/*}" ;;
	*) echo "" ;;
	esac
}

# Every header of the tree by its name: "NAME PATH" lines.
headers=$(cd "$top" && find include kmod bpf userspace -name '*.h' -printf '%f %p\n' | sort)

checked=0
bad=()
for layer in "${!may[@]}"; do
	while IFS= read -r src; do
		rel=${src#"$top"/}
		dir=$(dirname "$rel")
		while IFS= read -r name; do
			if [ -f "$top/$dir/$name" ]; then
				target=$dir/$name
			else
				target=$(awk -v n="$(basename "$name")" -v want="$name" \
					'$1 == n && substr($2, length($2) - length(want) + 1) == want { print $2 }' \
					<<<"$headers")
				case $(wc -l <<<"$target") in
				1) [ -n "$target" ] || continue ;;	# generated, or not in the tree
				*) bad+=("$rel: \"$name\" is ambiguous: $(tr '\n' ' ' <<<"$target")"); continue ;;
				esac
			fi
			checked=$((checked + 1))
			to=$(layer_of "$target")
			[ -n "$to" ] || continue
			# shellcheck disable=SC2086,SC2116 # echo joins the words with one space each
			case " $(echo ${may[$layer]}) " in
			*" $to "*) ;;
			*) bad+=("$rel includes $target: $layer may not reach $to") ;;
			esac
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$src")
	done < <([ ! -d "$top/$layer" ] || find "$top/$layer" -maxdepth 1 -name '*.[ch]' | sort)
done

if [ "$checked" -lt 100 ]; then
	not_ok "the includes were read" "only $checked quoted includes found under $top"
elif [ ${#bad[@]} -eq 0 ]; then
	ok "$checked includes, each of a folder below its own"
else
	not_ok "each include is of a folder below its own" "${bad[@]}"
fi
# Nothing includes the daemon: the one that was reached into before.
hits=$(cd "$top/userspace" && grep -rlE '#[[:space:]]*include[[:space:]]*"(agent|metrics)\.h"' \
	--exclude-dir=agent . 2>/dev/null)
if [ -n "$hits" ]; then
	# shellcheck disable=SC2086 # the files: one argument each
	not_ok "no folder but the agent's includes agent.h or metrics.h" $hits
else
	ok "no folder but the agent's includes agent.h or metrics.h"
fi
finish "$result_file"
