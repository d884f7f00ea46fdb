/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The IPv4 prefix table: every IPv4 source prefix of the list (/1 to /31)
 * in at most two lookups a packet, exactly, after DIR-24-8 (Gupta, Lin and
 * McKeown, 1998). Written once, here, for the BPF program (the lookup) and
 * the loader (builds, live changes, the tests' predictions).
 *
 * The top table: two bits for each of the 2^24 /24s of IPv4, 32 to a
 * 64-bit word, 2^19 words (4 MiB) in one mmapable array (sieve_v4top):
 *   0  no prefix of the list covers any address of the /24;
 *   1  a prefix of length <= 24 covers it all: drop;
 *   2, 3  it holds prefixes longer than /24: the chunk of the /24 says
 *	which of its 256 addresses they cover; the chunk is the element of
 *	sieve_v4chunk whose key is sieve_xdp_v4_chunk_key(/24, state).
 * A chunk is 256 bits, bit a for the address whose last byte is a.
 *
 * Why two chunk states: the loader never rewrites a chunk a packet may
 * be reading. A hash map frees a replaced element at once, to be reused
 * by the next update while a packet that found it still reads it; so a
 * changed chunk is inserted under its other key, the /24's state flips
 * to it (one aligned word store), and only after every packet that may
 * have read the old state is done (a grace period) is the old key
 * deleted. A packet sees the old chunk or the new one, never another.
 *
 * A covered /24 (state 1) keeps no chunk: its longer prefixes stay in the
 * store, and uncovering it recomputes its chunk from them (v4table.c).
 * At most SIEVE_XDP_V4_MAX_CHUNKS / 2 /24s hold a chunk at rest, so that
 * each can change at once (two keys). The table and the chunks are not
 * per generation: they are exact, so nothing is planned for a list, and
 * a rebuild rewrites only the words that differ; only a generation whose
 * config has SIEVE_XDP_F_V4TABLE reads them (sieve_xdp.h).
 *
 * The host bitmap (sieve_v4host): one bit for each /24, set while the
 * list holds an IPv4 source (a /32, which stays in the filter) inside it,
 * 2^18 words (2 MiB). A generation whose config has SIEVE_XDP_F_V4HOSTS
 * skips the source kind's digest and filter probe for a packet whose /24
 * has no bit: the common miss costs the two array reads and no hash. The
 * loader keeps it a superset of the hosts any live generation's filter
 * holds: set before a host enters a filter (a live block, a build before
 * its swap), cleared only once the list holds no host in the /24 (a live
 * unblock, a build after its swap). Bits are flipped in place (an aligned
 * word store); there is nothing to free, so no grace period.
 */
#ifndef SIEVE_XDP_V4TABLE_H
#define SIEVE_XDP_V4TABLE_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define SIEVE_XDP_MAP_V4TOP	"sieve_v4top"	/* array of SIEVE_XDP_V4_WORDS __u64 */
#define SIEVE_XDP_MAP_V4CHUNK	"sieve_v4chunk"	/* hash: chunk key -> struct sieve_xdp_v4_chunk */
#define SIEVE_XDP_MAP_V4HOST	"sieve_v4host"	/* array of SIEVE_XDP_V4_HOST_WORDS __u64 */

#define SIEVE_XDP_V4_SLOTS	(1U << 24)	/* /24s of IPv4 */
#define SIEVE_XDP_V4_SLOTS_PER_WORD	32
#define SIEVE_XDP_V4_WORDS	(SIEVE_XDP_V4_SLOTS / SIEVE_XDP_V4_SLOTS_PER_WORD)
#define SIEVE_XDP_V4_HOST_WORDS	(SIEVE_XDP_V4_SLOTS / 64)

/* A /24's state in the top table. */
#define SIEVE_XDP_V4_NONE	0
#define SIEVE_XDP_V4_COVERED	1
#define SIEVE_XDP_V4_CHUNK0	2
#define SIEVE_XDP_V4_CHUNK1	3

/*
 * Chunks held at once, both keys of a /24 counted: /24s holding prefixes
 * longer than /24 past half of it are refused (-ENOSPC). Elements are
 * allocated as they come (40 bytes of chunk and key, about 100 with the
 * kernel's element header): memory follows the list, not this bound.
 */
#define SIEVE_XDP_V4_MAX_CHUNKS	(1U << 18)

struct sieve_xdp_v4_chunk {
	__u64 w[4];
};

/* The /24 of an IPv4 address in host order. */
static __always_inline __u32 sieve_xdp_v4_slot(__u32 addr)
{
	return addr >> 8;
}

static __always_inline __u32 sieve_xdp_v4_word(__u32 slot)
{
	return slot / SIEVE_XDP_V4_SLOTS_PER_WORD;
}

static __always_inline __u32 sieve_xdp_v4_shift(__u32 slot)
{
	return (slot % SIEVE_XDP_V4_SLOTS_PER_WORD) * 2;
}

/* The state of @slot in its top word @word. */
static __always_inline __u32 sieve_xdp_v4_state(__u64 word, __u32 slot)
{
	return (word >> sieve_xdp_v4_shift(slot)) & 3;
}

/* The chunk key of @slot in state 2 or 3. */
static __always_inline __u32 sieve_xdp_v4_chunk_key(__u32 slot, __u32 state)
{
	return slot << 1 | (state & 1);
}

/* Whether a chunk covers the host-order address @addr of its /24. */
static __always_inline int sieve_xdp_v4_chunk_has(const struct sieve_xdp_v4_chunk *c, __u32 addr)
{
	__u32 a = addr & 255;

	return (c->w[(a >> 6) & 3] >> (a & 63)) & 1;
}

/* The host bitmap's word of @slot, and its bit there. */
static __always_inline __u32 sieve_xdp_v4_host_word(__u32 slot)
{
	return slot / 64;
}

static __always_inline __u64 sieve_xdp_v4_host_bit(__u32 slot)
{
	return 1ULL << (slot % 64);
}

#endif /* SIEVE_XDP_V4TABLE_H */
