/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The XDP blocklist: what the BPF program (bpf/sieve_xdp.bpf.c) and its
 * loader (userspace/xdp/) agree on. Flow-key layout, entry kinds, config
 * bits, counter indexes, map names and the key digest live here only, so
 * the two sides cannot drift.
 *
 * Packets see one generation of maps at a time: the program reads
 * sieve_active once, then uses slot [gen] of sieve_cfg, sieve_bloom (or
 * sieve_blocked) and sieve_exact. The loader builds the next generation in the other slot and
 * flips sieve_active (one aligned 4-byte store), so a packet never mixes
 * two generations.
 */
#ifndef SIEVE_XDP_H
#define SIEVE_XDP_H

#include <linux/types.h>

/* Entry kinds; a key's kind keeps equal addresses of different kinds apart. */
enum sieve_xdp_kind {
	SIEVE_XDP_SRC = 0,	/* source address */
	SIEVE_XDP_PREFIX,	/* source prefix shorter than the address */
	SIEVE_XDP_SERVICE,	/* destination address + protocol + port */
	SIEVE_XDP_FLOW,		/* full 5-tuple */
	SIEVE_XDP_NR_KINDS,
};

/* Address families as stored in keys (not AF_*: the BPF side has no libc). */
#define SIEVE_XDP_V4	4
#define SIEVE_XDP_V6	6

/*
 * A flow key: 40 bytes, no implicit padding. Addresses and ports are in
 * network byte order; an IPv4 address sits in word 0, the rest is zero.
 * Fields a kind does not use are zero (a prefix key holds the masked
 * source). The exact map is keyed by this struct; the filter holds its
 * keyed 64-bit digest, see sieve_xdp_digest().
 */
struct sieve_xdp_key {
	__u8 kind;		/* enum sieve_xdp_kind */
	__u8 family;		/* SIEVE_XDP_V4 or SIEVE_XDP_V6 */
	__u8 proto;		/* IPPROTO_TCP, _UDP, _SCTP (service, flow) */
	__u8 prefix_len;	/* source bits that count (src, prefix) */
	__be16 sport;
	__be16 dport;
	__be32 saddr[4];
	__be32 daddr[4];
} __attribute__((aligned(8)));	/* the digest reads it as five 64-bit words */

/*
 * Kinds in use, one bit per kind and family: a kind with no entries costs
 * no probe. Prefix lengths in use are listed in the config instead.
 */
#define SIEVE_XDP_KIND_BIT(kind, family) \
	(1U << ((kind) * 2 + ((family) == SIEVE_XDP_V6)))

/* Config flags. */
#define SIEVE_XDP_F_EXACT	(1U << 0)	/* confirm bloom hits in the exact map */
#define SIEVE_XDP_F_FAIL_CLOSED	(1U << 1)	/* drop malformed packets */
#define SIEVE_XDP_F_HASH_ONLY	(1U << 2)	/* skip the bloom: bench builds only */
/*
 * The blocked backend: the filter is a blocked Bloom filter in
 * sieve_blocked (include/sieve_xdp_blocked.h), not the kernel's bloom map
 * in sieve_bloom. A flag of the generation, so every rebuild keeps it.
 */
#define SIEVE_XDP_F_BLOCKED	(1U << 3)
/*
 * The filter backend: the filter is the /dev/sieve filter whose id is
 * max_entries, asked through sieve.ko's kfuncs (bpf/sieve_kfuncs.bpf.h)
 * by the program's kfunc build, sieve_xdp_filter.bpf.o. Its keys are
 * sieve_xdp_digest()s, 8 bytes in host order: what the program asks.
 * A filter that is gone (destroyed, or never there) holds nothing.
 */
#define SIEVE_XDP_F_FILTER	(1U << 4)
/*
 * IPv4 prefixes are in the IPv4 prefix table (include/sieve_xdp_v4table.h),
 * not in the filter: @nr_v4_lens is 0 and the program reads the table
 * instead of walking probe lengths. Every backend, exact mode or not (the
 * table is exact). Set by every build of a sieve whose program has the
 * table; a config without it (written by an older sieve) is walked.
 */
#define SIEVE_XDP_F_V4TABLE	(1U << 5)
/*
 * The host bitmap (include/sieve_xdp_v4table.h) holds a bit for every
 * /24 with an IPv4 source of the list: the program probes the filter for
 * an IPv4 source only where its /24 has one. Set by a build on pins with
 * the bitmap, after it has set the bits of the list's hosts; a config
 * without it (an older sieve's, or pins without the map) probes every
 * packet, as before.
 */
#define SIEVE_XDP_F_V4HOSTS	(1U << 6)
/*
 * Dry run (monitor mode): every packet is judged and counted as when
 * enforcing, and passes; DRY_RUN_PASSED counts those a verdict dropped. A
 * setting of the interface, not of a generation: every build copies it
 * from the live config, and a switch rewrites the live config in place
 * (only this bit changes, and the program reads it once a packet, so a
 * packet is judged by one mode or the other, never by neither). Read by
 * the program that has sieve_origins: the loader sets it on no other.
 */
#define SIEVE_XDP_F_DRY_RUN	(1U << 7)

/*
 * Probe lengths per family: each costs one probe per packet of that
 * family, so they are bounded (and the BPF loop with them). A list may
 * have any prefix lengths: the loader stores each prefix at a probe
 * length at or above its own (controlled prefix expansion).
 */
#define SIEVE_XDP_MAX_PREFIX_LENS	16

/*
 * The config's layout, in its @layout: raised whenever a field changes
 * meaning or place, so that a loader knows what it reads. 0 is the layout
 * of before the field (it sat in padding, so it reads as 0 there): the
 * same bytes as 1, which only named the backend's fields. 2: the same
 * bytes again, with SIEVE_XDP_F_V4TABLE, which a loader of layout 1 would
 * not know to keep (it reads a config of a newer layout as -ESTALE); and
 * SIEVE_XDP_F_V4HOSTS, added before layout 2 was released.
 * 3: the same bytes, with SIEVE_XDP_F_DRY_RUN, which a loader of layout
 * 2 would drop at its next build (and so start dropping).
 */
#define SIEVE_XDP_LAYOUT	3

/**
 * struct sieve_xdp_config - one generation's view of the blocklist
 * @flags: SIEVE_XDP_F_*
 * @kinds: SIEVE_XDP_KIND_BIT()s of the kinds with entries
 * @nr_v4_lens: probe lengths in @v4_lens (at most @max_probes)
 * @nr_v6_lens: probe lengths in @v6_lens
 * @max_probes: probe lengths allowed per family (the loader's; 0: its default)
 * @digest: the digest function the generation's filter holds:
 *	%SIEVE_XDP_DIGEST (0 in a config of a sieve before it: the linear
 *	digest, which the loader rebuilds from the store on sight)
 * @v4_lens: IPv4 prefix lengths probed (1-31), longest first
 * @v6_lens: IPv6 prefix lengths probed (1-127), longest first
 * @v4_masks: the netmask of each of @v4_lens, network order
 * @v6_masks: the netmask of each of @v6_lens, network order (the program
 *	ANDs without branching on the length: fewer verifier states)
 * @layout: %SIEVE_XDP_LAYOUT of the loader that wrote it (0: before it)
 * @entries: entries on the list of this generation (the loader's bookkeeping)
 * @capacity: entries the bloom filter was planned for
 * @bloom: the bloom-map backend's filter (no backend flag)
 * @bloom.max_entries: the bloom map's max_entries (sizes its bitmap)
 * @bloom.nr_hashes: the bloom map's hash count (1-15)
 * @blocked: the blocked backend's filter (%SIEVE_XDP_F_BLOCKED)
 * @blocked.nblocks: the blocked array's number of 64-byte blocks
 * @blocked.k: the bits a key sets in its block (1-%SIEVE_XDP_BLOCKED_MAX_HASHES)
 * @filter: the filter backend's (%SIEVE_XDP_F_FILTER)
 * @filter.id: the /dev/sieve filter's id
 * @filter.__reserved: 0
 * @fpp_ppb: the target false-positive rate, parts per billion
 * @gen_seq: generations built since attach (status shows it)
 * @keys: keys in the maps: @entries after prefix expansion
 * @store_version: the version of the store's list the maps hold (the
 *	loader's: a command that finds the store ahead rebuilds from it)
 * @digest_key: the host's secret, the key of sieve_xdp_digest(): the same
 *	in every generation and backend of the host (userspace/xdp/secret.c).
 *	Here so that a packet pays no lookup for it; kernel memory, read by
 *	root only, and never printed
 * @blocked_seed: the blocked backend's seed of this generation
 *	(sieve_xdp_blocked_hash()), random at each build: a key that is a
 *	false positive in one generation is one in the next only by chance
 * @removed: keys removed live since the generation was built, whose bits
 *	the filter still holds: digests in its sieve_removed map (in exact
 *	mode also deleted from its exact map). The loader's
 *	bookkeeping, 0 in a new generation; see "Removals" below
 * @live_v4_lens: the IPv4 probe lengths a live add inserted since the
 *	build, bit l for length l: a prefix entry added before then may sit
 *	at a longer length than the live ones say (the loader's bookkeeping,
 *	see userspace/xdp/removed.c)
 * @live_v6_lens: the same for IPv6, bit l % 32 of word l / 32
 */
struct sieve_xdp_config {
	__u32 flags;
	__u32 kinds;
	__u8 nr_v4_lens;
	__u8 nr_v6_lens;
	__u8 max_probes;
	__u8 digest;
	__u8 v4_lens[SIEVE_XDP_MAX_PREFIX_LENS];
	__u8 v6_lens[SIEVE_XDP_MAX_PREFIX_LENS];
	__be32 v4_masks[SIEVE_XDP_MAX_PREFIX_LENS];
	__be32 v6_masks[SIEVE_XDP_MAX_PREFIX_LENS][4];
	__u32 layout;
	__u64 entries;
	__u64 capacity;
	/* One backend's fields, by the backend flag; where max_entries was. */
	union {
		struct {
			__u32 max_entries;
			__u32 nr_hashes;
		} bloom;
		struct {
			__u32 nblocks;
			__u32 k;
		} blocked;
		struct {
			__u32 id;
			__u32 __reserved;
		} filter;
	};
	__u32 fpp_ppb;
	__u32 gen_seq;
	__u64 keys;
	__u64 store_version;
	__u64 digest_key[2];
	__u64 blocked_seed;
	__u32 removed;
	__u32 live_v4_lens;
	__u32 live_v6_lens[4];
};

/*
 * Removals. A Bloom filter cannot forget a key (another may share its
 * bits), so a removal that must not rebuild the generation goes into
 * sieve_removed: per generation, an exact hash of the digests removed
 * since it was built (key: the u64 sieve_xdp_digest(), value: a __u32,
 * 0). The program asks it only after the filter said "maybe", so traffic
 * not on the list never pays for it, and a generation with no removals
 * has no map in its slot at all; a digest found there is a miss (counted
 * as a bloom hit refuted, as in exact mode). A digest goes there only
 * when no entry left on the list makes it (prefix expansion shares keys),
 * and leaves when an add makes it again. In exact mode a removal is a
 * delete from the exact map, which the program asks instead; the digest
 * is noted in sieve_removed all the same (never asked there), so that
 * @removed counts down when an add makes it again. Past
 * SIEVE_XDP_REMOVED_MAX (or a quarter of the generation's capacity) the
 * generation is rebuilt, and starts without one.
 */
#define SIEVE_XDP_REMOVED_MAX	(1U << 20)

/*
 * Per-CPU counters: one array value holds them all (one lookup a packet).
 * Each counts packets and, beside them in the same cache line, bytes: the
 * frame as the program sees it (data_end - data, Ethernet header and VLAN
 * tags included, no FCS). Every packet ends in exactly one of PASSED and
 * the DROP_* counters; the program leaves PACKETS at zero and the loader
 * fills in their sum. The array only grows at its end: a loader reads an
 * older program's shorter value as far as it goes (sxdp_read_stats).
 */
enum sieve_xdp_counter {
	SIEVE_XDP_PACKETS = 0,
	SIEVE_XDP_PASSED,
	SIEVE_XDP_DROP_SRC,		/* dropped, one counter per kind ... */
	SIEVE_XDP_DROP_PREFIX,
	SIEVE_XDP_DROP_SERVICE,
	SIEVE_XDP_DROP_FLOW,
	SIEVE_XDP_DROP_MALFORMED,	/* ... and malformed, fail-closed */
	SIEVE_XDP_BLOOM_HITS,
	SIEVE_XDP_FALSE_POSITIVES,	/* bloom hits the exact map (or sieve_removed) refuted */
	SIEVE_XDP_MALFORMED,
	SIEVE_XDP_NON_IP,
	SIEVE_XDP_ALLOWED,		/* source/prefix hits the allowlist overrode */
	/*
	 * Dropped as if a service or flow entry matched: ports that belong in
	 * the packet could not be read (a tiny first fragment, a long or cut
	 * IPv6 extension chain, a cut L4 header) while a port kind is in use
	 * for its family. Appended: the indexes above keep their meaning.
	 */
	SIEVE_XDP_DROP_UNPARSED,
	/*
	 * Samples (see "Samples" below): sent to the ring, and lost to a
	 * full ring (bpf_ringbuf_reserve failed). Appended likewise.
	 */
	SIEVE_XDP_SAMPLED,
	SIEVE_XDP_SAMPLES_LOST,
	/*
	 * Dry run: packets a DROP_* counter counted that passed all the same
	 * (SIEVE_XDP_F_DRY_RUN). Not one of the verdicts: the sum above holds.
	 */
	SIEVE_XDP_DRY_RUN_PASSED,
	SIEVE_XDP_NR_COUNTERS,
};

struct sieve_xdp_count {
	__u64 packets;
	__u64 bytes;
};

struct sieve_xdp_stats {
	struct sieve_xdp_count c[SIEVE_XDP_NR_COUNTERS];
};

/*
 * Per-origin drops (exact mode). The exact map's value is the origin id of
 * the entry that made the key (the store numbers origins: "cli", a feed,
 * "fleet"...), and a drop by a confirmed key counts in slot
 * sieve_xdp_origin_slot(id) of the per-CPU array sieve_origins: one
 * struct sieve_xdp_count a slot. Bounded: ids from SIEVE_XDP_ORIGIN_OTHER
 * on share its slot. Id 0 is no origin: a generation built by a sieve
 * before origins (its values are 0), and IPv4 prefixes, which the prefix
 * table holds without one. Without exact mode nothing is counted here: the
 * filter holds digests, not origins.
 */
#define SIEVE_XDP_ORIGIN_SLOTS	256
#define SIEVE_XDP_ORIGIN_NONE	0
#define SIEVE_XDP_ORIGIN_OTHER	(SIEVE_XDP_ORIGIN_SLOTS - 1)

static inline __attribute__((always_inline)) __u32 sieve_xdp_origin_slot(__u32 id)
{
	return id < SIEVE_XDP_ORIGIN_OTHER ? id : SIEVE_XDP_ORIGIN_OTHER;
}

/* Two generations: the live one and the one being built. */
#define SIEVE_XDP_NR_GENS	2

/* Map and program names: the pins under SIEVE_XDP_PIN_ROOT/IFACE/ */
#define SIEVE_XDP_PIN_ROOT	"/sys/fs/bpf/sieve"
#define SIEVE_XDP_MAP_ACTIVE	"sieve_active"	/* array[1]: live generation */
#define SIEVE_XDP_MAP_CFG	"sieve_cfg"	/* array[2] of struct sieve_xdp_config */
#define SIEVE_XDP_MAP_BLOOM	"sieve_bloom"	/* array-of-maps[2]: bloom of digests */
#define SIEVE_XDP_MAP_BLOCKED	"sieve_blocked"	/* array-of-maps[2]: blocked Bloom arrays */
#define SIEVE_XDP_MAP_EXACT	"sieve_exact"	/* array-of-maps[2]: hash: key -> origin id */
#define SIEVE_XDP_MAP_REMOVED	"sieve_removed"	/* array-of-maps[2]: hash of digests removed */
#define SIEVE_XDP_MAP_STATS	"sieve_stats"	/* per-CPU struct sieve_xdp_stats */
#define SIEVE_XDP_MAP_ALLOW	"sieve_allow"	/* LPM trie of struct sieve_xdp_allow_key */
/*
 * One __u32: 1 while the loader knows the allowlist is empty, so that a
 * packet a source entry matched skips the trie (its lookup costs a hit
 * about 9 ns); 0, as a new map starts, asks the trie. Cleared before an
 * entry is inserted into an empty trie, set only after the trie was seen
 * empty (allow.c): a packet never skips an entry that is there.
 */
#define SIEVE_XDP_MAP_ALLOW_NONE	"sieve_allow_none"
#define SIEVE_XDP_MAP_SAMPLES	"sieve_samples"	/* ring buffer of struct sieve_xdp_sample */
#define SIEVE_XDP_MAP_SAMPLE_CFG "sieve_sample_cfg" /* array[1] of struct sieve_xdp_sample_cfg */
#define SIEVE_XDP_MAP_ORIGINS	"sieve_origins"	/* per-CPU drops per origin slot */
#define SIEVE_XDP_PROG		"sieve_xdp"
#define SIEVE_XDP_LINK_PIN	"link"

/*
 * The allowlist: sources and source prefixes that a source or prefix
 * entry never drops (a service or flow entry still does). The program
 * asks it only after such an entry matched, so traffic that matches
 * nothing never pays for it; ALLOWED counts the hits it overrode, whatever
 * the packet's fate after that.
 *
 * It is one LPM trie, outside the generations: allowing and disallowing
 * are single inserts and deletes, which the trie publishes under RCU, so
 * a packet sees the entry or not, never half of one. Its answer depends
 * on the source alone, not on the blocklist generation the packet uses,
 * so there is nothing to keep in step with a swap.
 *
 * Bounded at SIEVE_XDP_ALLOW_MAX entries: nodes are allocated as entries
 * come (BPF_F_NO_PREALLOC), and the bound caps what a runaway feed can pin
 * in kernel memory: a 64-byte node an entry, and at most one intermediate
 * node more, so 64-128 MiB when full. A million entries still takes the
 * published ranges of cloud and CDN providers (tens of thousands of
 * prefixes) many times over. The value is a __u32, 0 (reserved).
 */
#define SIEVE_XDP_ALLOW_MAX	(1U << 20)

/*
 * Bits of an allow key that count: the family byte, then the address.
 * The family is part of the matched prefix, so IPv4 and IPv6 entries never
 * match each other's packets (::/96 would otherwise cover every IPv4).
 */
#define SIEVE_XDP_ALLOW_PREFIXLEN(addr_bits)	(8 + (addr_bits))

/**
 * struct sieve_xdp_allow_key - an allowlist entry, the LPM trie's key
 * @prefixlen: SIEVE_XDP_ALLOW_PREFIXLEN() of the address bits that count:
 *	32 or 128 for a source, fewer for a prefix (the packet's full
 *	length in a lookup)
 * @family: SIEVE_XDP_V4 or SIEVE_XDP_V6 (the first byte matched)
 * @addr: the address, network order; an IPv4 one in bytes 0-3. Bits
 *	after the prefix are 0 (the trie keeps what it is given and would
 *	list them back)
 * @__pad: must be 0 (it lies past every prefix, so it is never matched)
 *
 * The trie compares @prefixlen bits of everything after @prefixlen, hence
 * byte arrays: no padding may sit between the family and the address.
 * The same layout as struct bpf_lpm_trie_key with 20 bytes of data.
 */
struct sieve_xdp_allow_key {
	__u32 prefixlen;
	__u8 family;
	__u8 addr[16];
	__u8 __pad[3];
};

/*
 * Samples. The program sends the first bytes of some of the packets it
 * drops (and, with SIEVE_XDP_SAMPLE_ALLOWED, of those the allowlist let
 * through) to userspace through the ring buffer sieve_samples, with what
 * matched: `sieve xdp capture` and `sieve xdp top` read it.
 *
 * Bounded per CPU by a token bucket, so a flood costs one bucket check per
 * drop and never fills the ring: @rate samples a second, a burst of at
 * most one second's worth (at least one sample). The bucket holds its
 * credit in nanoseconds (integers only): each nanosecond since the last
 * check earns one, capped at SIEVE_XDP_SAMPLE_BURST_NS, and a sample costs
 * NSEC_PER_SEC / @rate of them. A sample the ring had no room for anyway
 * counts SAMPLES_LOST.
 *
 * The settings are one array element outside the generations (like the
 * allowlist): a rate is no property of a list, so a rebuild never carries
 * it and a change is one store, live, with nothing rebuilt. A program
 * older than the samples has neither map, and goes on as it was (the
 * loader says so: sieve xdp attach upgrades it). @rate 0: no sample, and
 * the drop path pays one load of it.
 */
#define SIEVE_XDP_SAMPLE_BYTES		128	/* frame bytes a sample carries, at most */
#define SIEVE_XDP_SAMPLE_RATE_DEFAULT	10	/* samples a second and CPU, at attach */
#define SIEVE_XDP_SAMPLE_RATE_MAX	100000	/* the ring's reader keeps up with this */
#define SIEVE_XDP_SAMPLE_BURST_NS	1000000000ULL	/* one second of credit */
#define SIEVE_XDP_SAMPLE_RING_BYTES	(1U << 20)	/* 6000-odd samples */

/* struct sieve_xdp_sample_cfg @flags */
#define SIEVE_XDP_SAMPLE_ALLOWED	(1U << 0)	/* sample what the allowlist let through */

/**
 * struct sieve_xdp_sample_cfg - what the program samples
 * @rate: samples a second per CPU (0: none; at most %SIEVE_XDP_SAMPLE_RATE_MAX)
 * @flags: SIEVE_XDP_SAMPLE_*
 */
struct sieve_xdp_sample_cfg {
	__u32 rate;
	__u32 flags;
};

/* A sample's @kind when no entry matched (unparsed ports, malformed, deep VLAN). */
#define SIEVE_XDP_SAMPLE_NO_KIND	0xff

/**
 * struct sieve_xdp_sample - one sampled packet, a record of sieve_samples
 * @ktime_ns: bpf_ktime_get_ns() when it was judged (CLOCK_MONOTONIC)
 * @ifindex: the interface it came in on
 * @frame_len: the frame's length (the counters' bytes)
 * @cap_len: bytes of it in @data (at most %SIEVE_XDP_SAMPLE_BYTES)
 * @verdict: XDP_DROP, or XDP_PASS for an allowlisted source
 * @counter: the sieve_xdp_counter it was counted in (DROP_*; ALLOWED)
 * @kind: the enum sieve_xdp_kind that matched, %SIEVE_XDP_SAMPLE_NO_KIND if none
 * @probe_len: the probe length that matched: the source bits of a source
 *	or prefix key (32/128 for a source), 0 for a port kind or an IPv4
 *	prefix found in the IPv4 prefix table (exact: the store knows which)
 * @__reserved: 0
 * @data: the frame's first @cap_len bytes
 */
struct sieve_xdp_sample {
	__u64 ktime_ns;
	__u32 ifindex;
	__u32 frame_len;
	__u16 cap_len;
	__u8 verdict;
	__u8 counter;
	__u8 kind;
	__u8 probe_len;
	__u8 __reserved[2];
	__u8 data[SIEVE_XDP_SAMPLE_BYTES];
};

/*
 * The filters hold a 64-bit digest of the key rather than the key: the
 * kernel's bloom map hashes the whole value once per hash function (jhash2
 * with a random seed), and one word hashes several times faster than five;
 * the blocked backend and the /dev/sieve filter take 8 bytes too.
 *
 * Entries come from outside (feeds, fleet publishers, automation), so the
 * digest must not let anyone pick an entry whose digest equals a victim's:
 * in the default mode (no exact map) that entry would drop the victim's
 * traffic. Any fixed, public function allows that by search or algebra
 * (the first digest here, a linear combination of the five words, was
 * solved for in one line). So it is a keyed pseudo-random function:
 * SipHash-1-3 over the key's 40 bytes under a 128-bit secret of the host
 * (userspace/xdp/secret.c), which travels to the program in the config.
 * Without the secret, two chosen keys collide with probability about
 * 2^-64 whatever they are, and the digests of keys an attacker does see
 * blocked (or not) tell nothing about other keys'.
 *
 * SipHash-1-3 (one round per word, three to finish), not 2-4: the cost per
 * packet probe is in make bench-xdp's table; 1-3 is what the kernel
 * (hsiphash on 64-bit), Rust's and Python's hash tables use against
 * hash flooding, where the output is never shown to the attacker, as here.
 * A digest's only observable effect is a drop, one bit per probe.
 *
 * The words are read in host order: on little-endian hosts this is the
 * SipHash of the paper (tests/unit/digest_test.c checks its vectors); on
 * others a PRF all the same, and BPF and userspace agree on one host.
 */

/* The config's @digest: which function filled its filters. 0: the linear one. */
#define SIEVE_XDP_DIGEST_SIPHASH13	1
#define SIEVE_XDP_DIGEST		SIEVE_XDP_DIGEST_SIPHASH13

#define SIEVE_XDP_ROTL64(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

/* One SipRound. */
#define SIEVE_XDP_SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = SIEVE_XDP_ROTL64(v1, 13); v1 ^= v0; v0 = SIEVE_XDP_ROTL64(v0, 32); \
	v2 += v3; v3 = SIEVE_XDP_ROTL64(v3, 16); v3 ^= v2;			\
	v0 += v3; v3 = SIEVE_XDP_ROTL64(v3, 21); v3 ^= v0;			\
	v2 += v1; v1 = SIEVE_XDP_ROTL64(v1, 17); v1 ^= v2; v2 = SIEVE_XDP_ROTL64(v2, 32); \
} while (0)

/*
 * SipHash-@c-@d of @n 64-bit words (a message of 8 * @n bytes, so the last
 * block holds the length alone) under the key @k. Called with constants,
 * so the compiler unrolls both loops; the unit test runs it as 2-4 against
 * the paper's vectors.
 */
static inline __attribute__((always_inline)) __u64
sieve_xdp_siphash(const __u64 *m, unsigned int n, const __u64 k[2], unsigned int c,
		  unsigned int d)
{
	__u64 v0 = k[0] ^ 0x736f6d6570736575ULL, v1 = k[1] ^ 0x646f72616e646f6dULL;
	__u64 v2 = k[0] ^ 0x6c7967656e657261ULL, v3 = k[1] ^ 0x7465646279746573ULL;
	__u64 b = (__u64)(n * 8) << 56;
	unsigned int i, r;

	for (i = 0; i < n; i++) {
		v3 ^= m[i];
		for (r = 0; r < c; r++)
			SIEVE_XDP_SIPROUND(v0, v1, v2, v3);
		v0 ^= m[i];
	}
	v3 ^= b;
	for (r = 0; r < c; r++)
		SIEVE_XDP_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (r = 0; r < d; r++)
		SIEVE_XDP_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The digest of @key under the host's secret @secret (a config's digest_key). */
static inline __attribute__((always_inline)) __u64
sieve_xdp_digest(const struct sieve_xdp_key *key, const __u64 secret[2])
{
	return sieve_xdp_siphash((const __u64 *)key, sizeof(*key) / 8, secret, 1, 3);
}

#endif /* SIEVE_XDP_H */
