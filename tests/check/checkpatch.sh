#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: checkpatch.sh CHECKPATCH SUPPRESSIONS FILE...
#
# Runs the kernel's checkpatch.pl (--strict, --no-tree: sieve is out of
# tree) over FILE... and fails on any finding that SUPPRESSIONS does not
# account for. SUPPRESSIONS has lines "FILE TYPE COUNT REASON": FILE may
# have exactly COUNT findings of TYPE, for REASON. Counts, not line
# numbers, so that edits elsewhere in a file do not break them; a count
# that no longer matches fails too, in both directions, so that a
# suppression never outlives (or quietly covers more than) what it was
# written for.
set -euo pipefail

checkpatch=$1 suppressions=$2
shift 2

# checkpatch's --terse --show-types lines: "FILE:LINE: LEVEL:TYPE: text".
findings=$(perl "$checkpatch" --no-tree --strict --terse --show-types --no-summary \
	--max-line-length=100 -f "$@" | grep -E '^[^ ]+:[0-9]+: (ERROR|WARNING|CHECK):' || true)

found_counts() {
	[ -z "$findings" ] || printf '%s\n' "$findings" |
		sed -E 's/^([^:]+):[0-9]+: [A-Z]+:([A-Z0-9_]+):.*/\1 \2/' | sort | uniq -c |
		awk '{ print $2, $3, $1 }'
}

allowed_counts() {
	grep -Ev '^[[:space:]]*(#|$)' "$suppressions" | awk '{ print $1, $2, $3 }' | sort
}

status=0
# Every (file, type) either side: found and allowed counts must agree.
while read -r file type found allowed; do
	[ "$found" = "$allowed" ] && continue
	status=1
	if [ "$allowed" = 0 ]; then
		printf '%s\n' "$findings" | grep -F "$file:" | grep -F ":$type:"
	elif [ "$found" = 0 ]; then
		echo "$suppressions: $file $type allows $allowed, none found: remove it"
	else
		echo "$suppressions: $file $type allows $allowed, found $found:"
		printf '%s\n' "$findings" | grep -F "$file:" | grep -F ":$type:"
	fi
done < <(join -a1 -a2 -e0 -o 0,1.2,1.3,2.3 \
	<(found_counts | awk '{ print $1 "|" $2, $1, $3 }' | sort) \
	<(allowed_counts | awk '{ print $1 "|" $2, $1, $3 }' | sort) |
	awk '{ split($1, k, "|"); print k[1], k[2], $3, $4 }')
exit $status
