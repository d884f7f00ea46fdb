// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-xdp's other reference for the digest's cost: the blocklist
 * program of bpf/sieve_xdp.bpf.c with SipHash-2-4 (two rounds a word, four
 * to finish) in place of the 1-3 it ships with, to show what the stronger
 * variant would cost a packet. Never shipped: bench only.
 */
#include <linux/types.h>
#include "sieve_xdp.h"

#define sieve_xdp_digest(key, secret) \
	sieve_xdp_siphash((const __u64 *)(key), sizeof(struct sieve_xdp_key) / 8, (secret), 2, 4)

#include "sieve_xdp.bpf.c"
