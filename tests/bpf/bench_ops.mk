# SPDX-License-Identifier: GPL-2.0
#
# make bench-ops (part of make bench): what the operations of `sieve xdp`
# cost through the real CLI, each call a fresh process, on a veth in network
# namespaces of its own with the store in a temporary state dir on disk, for
# either backend: block of one entry into lists of 10^4, 10^6 and 10^7
# entries (ms per call, and one call broken down), load of 10^6 and 10^7
# (store part and map part), unblock of one entry, and the FireHOL-like
# list's probes, keys and ns/packet (sieve-xdp-bench -f). Root; about 30
# minutes on a 2-core VM (the 10^7-entry loads are 4 minutes each), 2 GB
# of memory and 2 GB of disk at its peak (the 10^7-entry store and its
# WAL); every file, namespace and pin goes at the end, also on failure. Writes
# $(BUILD)/bench/ops.txt. Where others run the e2e suite:
# `flock /work/e2e.lock make bench-ops`. OPS_SIZES, OPS_LOAD_SIZES,
# OPS_BACKENDS, OPS_CALLS, OPS_TMPDIR narrow it (tests/bpf/bench/ops.sh).

.PHONY: bench-ops
# sieve-xdp-bench -f loads the bench-only programs (bench.mk) too.
bench-ops: $(BUILD)/sieve $(XDP_BENCH_BIN) $(XDP_BENCH_PROGS)
	$(call msg,BENCH,$(BUILD)/bench/ops.txt)
	$(Q)mkdir -p $(BUILD)/bench && tests/bpf/bench/ops.sh $(BUILD)/sieve $(XDP_BENCH_BIN) \
		$(BUILD)/bench/ops.txt

BENCHES += bench-ops
