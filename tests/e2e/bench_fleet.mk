# SPDX-License-Identifier: GPL-2.0
#
# make bench-fleet (part of make bench): the fleet of issue 12 on the e2e
# suite's test bed (a redis-server of its own, 4 hosts in network
# namespaces, each with its agent): publish to enforcement on all 4 hosts
# (p50, p99 over 1000 single entries), Redis memory per entry at 10^6 and
# 10^7, the initial sync of 10^6 entries to a fresh host with each backend.
# Root; about 10 minutes, 3 GB of memory at its peak. Writes
# $(BUILD)/bench/fleet.txt. Where others run the e2e suite:
# `flock /work/e2e.lock make bench-fleet`. FLEET_BENCH_N, FLEET_MEM_SIZES,
# FLEET_SYNC_N, FLEET_SYNC_BACKENDS, FLEET_BENCH_PARTS narrow it (tests/e2e/fleet_bench.sh).

.PHONY: bench-fleet
bench-fleet: $(BUILD)/sieve
	$(call msg,BENCH,$(BUILD)/bench/fleet.txt)
	$(Q)mkdir -p $(BUILD)/bench && tests/e2e/fleet_bench.sh $(BUILD)/sieve $(BUILD)/bench/fleet.txt

BENCHES += bench-fleet
