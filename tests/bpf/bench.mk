# SPDX-License-Identifier: GPL-2.0
#
# make bench-xdp (part of make bench): the XDP blocklist's ns per packet
# under BPF_PROG_TEST_RUN against an XDP_DROP-only floor: the bloom-filter
# map (bloom-only, exact), hash-map-only and the blocked backend, at 1M and
# 10M entries, one packet and a cache-cold stream; each filter's measured
# false-positive rate; memory per entry. Root; about three minutes and 2 GB
# (the 10M-entry exact hash map). Writes $(BUILD)/bench/xdp.txt. Then a
# FireHOL-like list (about 6000 entries, every IPv4 length /8-/32) at 8 and
# 16 probes beside as many entries of 16 lengths: probes, keys, ns/packet.
# Then the prefix lists against their peers (tests/bpf/bench/lpm_peer.bpf.c):
# the FireHOL-like list, the 16-length control and a list of every length
# /1-/32, each beside a list of as many sources only and beside the same
# prefixes in a BPF_MAP_TYPE_LPM_TRIE: miss and hit ns/packet, a stream,
# memory, ratios (5.6 minutes with -p on 2 cores under a load average of 9);
# then, per list and packet, the parse-only floor (lpm_peer.bpf.c's
# parse_only_xdp), each program's ns above it, sieve as before the host
# bitmap and the allowlist flag beside it, and the trie / sieve ratio whole
# and above the floor.
# Last, the keyed digest's cost: a packet that misses, timed with the
# program and with bench-only builds of it on the old linear digest and on
# SipHash-2-4 (tests/bpf/bench/sieve_xdp_*.bpf.c), on the same maps.
# Then the samples' cost: a dropped and a passed packet, sampling off
# (rate 0) against the default rate and the highest with the ring full.
# The output names the commit, the date and the kernel.
# XDP_BENCH_ARGS=-s runs only the 1M-entry half, -l only the 10M one, -f
# only the FireHOL-like list (with the peers and the digest's cost), -d
# only the digest's cost, -p only the peers, -S only the samples' cost (a dropped
# and a passed packet, sampling off against on, ratios).

XDP_BENCH_DIR := $(BUILD)/bench-xdp
XDP_BENCH_BIN := $(XDP_BENCH_DIR)/sieve-xdp-bench
XDP_BENCH_ARGS ?=
# What the numbers were measured on: the tree's commit (-dirty when changed).
XDP_BENCH_COMMIT = $(shell git -C $(TOP) describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)

$(XDP_BENCH_DIR)/%.o: tests/bpf/bench/%.c $$(XDP_SKEL)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) -O2 -g $(SIEVE_CFLAGS) $(XDP_CFLAGS) -I$(TOP)/tests/bpf -c $< -o $@

$(XDP_BENCH_BIN): $(XDP_BENCH_DIR)/xdp_bench.o $$(BPF_TEST_DIR)/pkt.o $$(XDP_OBJS) $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) -O2 -g -o $@ $^ $(XDP_LDLIBS) -lm

# The bench's programs, never built by `make`: the floor (XDP_DROP only;
# e2e attaches it as another program too), the stream (a new source per
# packet), the blocklist program with the linear digest of before and with
# SipHash-2-4 for the digest's cost, the hash-map-only reference
# (SIEVE_XDP_BENCH_HASH_ONLY) and the LPM-trie peer.
XDP_BENCH_FLOOR := $(XDP_BENCH_DIR)/floor.bpf.o
XDP_BENCH_PROGS := $(XDP_BENCH_FLOOR) $(XDP_BENCH_DIR)/bench_stream.bpf.o \
	$(XDP_BENCH_DIR)/sieve_xdp_linear.bpf.o $(XDP_BENCH_DIR)/sieve_xdp_siphash24.bpf.o \
	$(XDP_BENCH_DIR)/sieve_xdp_hash_only.bpf.o $(XDP_BENCH_DIR)/lpm_peer.bpf.o
$(XDP_BENCH_PROGS): $(XDP_BENCH_DIR)/%.bpf.o: tests/bpf/bench/%.bpf.c
	$(call msg,BPF,$<)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) \
		-I$(TOP)/bpf -I$(TOP)/include -I$(TOP)/include/uapi $(BPF_ARCH_INCLUDE) -c $< -o $@

.PHONY: bench-xdp
bench-xdp: $(XDP_BENCH_BIN) $(XDP_BENCH_PROGS)
	$(call msg,BENCH,$(BUILD)/bench/xdp.txt)
	$(Q)mkdir -p $(BUILD)/bench && $(XDP_BENCH_BIN) -o $(BUILD)/bench/xdp.txt \
		-c '$(XDP_BENCH_COMMIT)' $(XDP_BENCH_ARGS)

BENCHES += bench-xdp

# make bench-fill: a bloom-map generation filled one bpf() update per key
# against the fast fill (bpf/bloom_fill.bpf.c), at 10^6 and 10^7 keys
# (FILL_BENCH_ARGS= other sizes). Root; about 30 s and 1.5 GB.
FILL_BENCH_BIN := $(XDP_BENCH_DIR)/sieve-fill-bench
FILL_BENCH_ARGS ?=

$(FILL_BENCH_BIN): $(XDP_BENCH_DIR)/fill_bench.o $$(XDP_OBJS) $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) -O2 -g -o $@ $^ $(XDP_LDLIBS) -lm

.PHONY: bench-fill
bench-fill: $(FILL_BENCH_BIN)
	$(Q)$(FILL_BENCH_BIN) $(FILL_BENCH_ARGS)
