#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: shellcheck.sh [SHELLCHECK_OPTION...] [FILE...]
# (options in one word: --format=gcc, not -f gcc)
#
# Runs shellcheck over FILE..., or over every shell script of the tree: the
# *.sh files and the files whose first line starts a shell (the Debian
# maintainer scripts, .ci/run). Options and the checks turned off for the
# whole tree, each with its reason, are in the top .shellcheckrc; a
# file's own exceptions are directives in it, with theirs.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Tracked files when this is a git tree; else every file but build/ and cache/.
tree_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files
	else
		find . -path ./build -prune -o -path ./cache -prune -o -type f -print | sed 's|^\./||'
	fi
}

shell_scripts() {
	local f

	tree_files | while read -r f; do
		[ -f "$f" ] || continue
		case $f in
		*.sh) echo "$f" ;;
		*) head -n 1 "$f" | grep -qE '^#!(/usr)?/bin/(env )?(ba|da)?sh\b' && echo "$f" ;;
		esac
	done
	true
}

options=() scripts=()
for arg in "$@"; do
	case $arg in
	-*) options+=("$arg") ;;
	*) scripts+=("$arg") ;;
	esac
done
[ ${#scripts[@]} -gt 0 ] || mapfile -t scripts < <(shell_scripts)
shellcheck "${options[@]}" "${scripts[@]}"
