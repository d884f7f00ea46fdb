#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: the filter cores at work through the sieve CLI, on local
# (in-process) filters. Usage: demo.sh PATH/TO/sieve
set -euo pipefail
sieve=${1:?usage: demo.sh PATH/TO/sieve}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "Sizing: a million keys at a 1% false-positive rate, for each filter type"
run "$sieve" size -n 1M --fpr 1%

step "The same at 0.1%: memory grows with log(1/p), not with the keys' length"
run "$sieve" size -n 1M --fpr 0.1%

step "Fill each type to capacity, check no key is lost, measure false positives"
for type in bloom blocked cuckoo; do
	run "$sieve" measure -t "$type" -n 1M --fpr 1% -q 2M -s 42
done

step "Dedup a stream: 200k lines with 50k distinct values"
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "user-%d\n", (i * 7919) % 50000 }' > "$work/stream"
printf '$ %s dedup -v -t cuckoo -n 50k --fpr 0.1%% stream | wc -l\n' "$sieve"
"$sieve" dedup -v -t cuckoo -n 50k --fpr 0.1% "$work/stream" | wc -l

step "Bad input is refused with one line and exit code 2"
printf '$ %s size --fpr 1.5\n' "$sieve"
"$sieve" size --fpr 1.5 || echo "(exit $?)"
