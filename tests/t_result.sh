#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# t_result.sh NAME SUITE RESULT_FILE: after `make test-SUITE T=NAME`, a
# suite whose result counts no case ran nothing: that is a failure (the
# result becomes "0 1"), said on stderr, never a pass.
t=$1 suite=$2 result=$3
if read -r p f <"$result" 2>/dev/null && [ $((p + f)) -gt 0 ]; then
	exit 0
fi
echo "T=$t: no case of $suite ran (none matches)" >&2
echo "0 1" >"$result"
exit 1
