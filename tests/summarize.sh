#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Sums the per-suite results of `make test` and prints the final line.
# A suite that left no result counts as one failure: it did not run.
set -u
results=$1; shift
passed=0; failed=0
for suite in "$@"; do
	if read -r p f < "$results/$suite" 2>/dev/null && [ -n "$p" ] && [ -n "$f" ]; then
		printf '  %-6s %d passed, %d failed\n' "$suite" "$p" "$f"
		passed=$((passed + p)); failed=$((failed + f))
	else
		printf '  %-6s produced no result: counted as 1 failure\n' "$suite"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
