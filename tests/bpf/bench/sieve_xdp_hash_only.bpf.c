// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-xdp's hash-map-only reference: the blocklist program of
 * bpf/sieve_xdp.bpf.c built with SIEVE_XDP_BENCH_HASH_ONLY, so that a
 * generation flagged SIEVE_XDP_F_HASH_ONLY skips the filter and asks the
 * exact hash map alone. The bench loads it on the same maps as the real
 * program. The product never tests that flag per packet: bench only.
 */
#define SIEVE_XDP_BENCH_HASH_ONLY
#include "sieve_xdp.bpf.c"
