# SPDX-License-Identifier: GPL-2.0
#
# make bench-crowdsec (part of make bench, never of make test): sieve's
# agent ([crowdsec] in sieve.conf) and Debian's crowdsec-firewall-bouncer,
# ipset and nftables modes, following the same offline CrowdSec Local API
# in one run: start-up sync of BENCH_CROWDSEC_N decisions (default 10^4;
# the issue's size, 100000, takes the bouncer's nftables mode ~10 minutes),
# add and delete to enforcement (median, p99 of 20), RSS and CPU.
# BENCH_CROWDSEC_MODES="sieve ipset" skips a mode; tests/e2e/crowdsec_bench.py
# has the rest. Writes $(BUILD)/bench/crowdsec.txt and .json. Where others
# run the e2e suite: `flock /work/e2e.lock make bench-crowdsec`.
#
# crowdsec itself, and the opt-out of its Central API registration that
# must come before it, are `make deps`' (userspace/sources/sources.mk).
BENCH_CROWDSEC_PACKAGES := crowdsec-firewall-bouncer curl

.PHONY: bench-crowdsec
bench-crowdsec: deps $(BUILD)/sieve
	$(Q)$(call deps_install,$(BENCH_CROWDSEC_PACKAGES))
	$(call msg,BENCH,$(BUILD)/bench/crowdsec.txt)
	$(Q)mkdir -p $(BUILD)/bench && tests/e2e/crowdsec_bench.py $(BUILD)/sieve $(BUILD)/bench/crowdsec

BENCHES += bench-crowdsec
