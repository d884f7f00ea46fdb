// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-xdp's reference for the digest's cost: the blocklist program
 * of bpf/sieve_xdp.bpf.c, unchanged but for its digest, which is the one
 * before the keyed SipHash (a sum of the key's five words times odd
 * constants; issue 20 solved collisions for it). The bench loads it on the
 * same maps as the real program and times a packet that misses with both:
 * a miss is a digest and a filter peek per probe, and digests that do not
 * match the maps' miss just the same. Never shipped: bench only.
 */
#include <linux/types.h>
#include "sieve_xdp.h"

static inline __attribute__((always_inline)) __u64
sieve_xdp_linear_digest(const struct sieve_xdp_key *key)
{
	const __u64 *w = (const __u64 *)key;

	return w[0] * 0x87c37b91114253d5ULL + w[1] * 0x4cf5ad432745937fULL +
	       w[2] * 0x9e3779b97f4a7c15ULL + w[3] * 0xc2b2ae3d27d4eb4fULL +
	       w[4] * 0x165667b19e3779f9ULL;
}

#define sieve_xdp_digest(key, secret)	sieve_xdp_linear_digest(key)

#include "sieve_xdp.bpf.c"
