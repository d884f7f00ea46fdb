# SPDX-License-Identifier: GPL-2.0
#
# make bench-peers (part of make bench, never of make test): sieve's
# control plane beside ipset and nftables in one run (issue 21): bulk load
# (`ipset restore`, `nft -f`, `sieve xdp load`), one add (`ipset add`, `nft
# add element`, `sieve xdp block`) and one delete (`ipset del`, `nft delete
# element`, `sieve xdp unblock`, each the median of 5) into tables of 10^4,
# 10^5, 10^6 and 10^7 IPv4 hosts, each backend, and `--version`; each
# command a fresh process through nsenter into a network namespace of the
# tool's own, sieve's list enforced on a veth there; ratios sieve / the
# faster peer beside the times. Root; about 15 minutes and 4 GB of memory
# at its peak (nft -f of 10^7: 3.9 GB). Writes
# $(BUILD)/bench/peers.txt, .tsv and .json. BENCH_PEERS_SIZES="10000
# 100000" narrows it; BENCH_PEERS_CALLS, BENCH_PEERS_BACKENDS, BENCH_PEERS_SYNCS
# (each backend with [store] sync = full and normal by default),
# BENCH_PEERS_TMPDIR, BENCH_PEERS_TIMEOUT and BENCH_PEERS_OP_TIMEOUT too
# (tests/e2e/peers_bench.py). Where others run the e2e suite:
# `flock /work/e2e.lock make bench-peers`.

.PHONY: bench-peers
bench-peers: deps $(BUILD)/sieve
	$(call msg,BENCH,$(BUILD)/bench/peers.txt)
	$(Q)mkdir -p $(BUILD)/bench && tests/e2e/peers_bench.py $(BUILD)/sieve $(BUILD)/bench/peers

BENCHES += bench-peers
DEB_PACKAGES += ipset nftables
