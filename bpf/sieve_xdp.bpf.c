// SPDX-License-Identifier: GPL-2.0
/*
 * sieve's XDP blocklist. Parses Ethernet, up to two VLAN tags, IPv4 or
 * IPv6 (a bounded chain of extension headers) and the ports of TCP, UDP
 * and SCTP, builds the flow key of every entry kind in use and probes the
 * filter of the live generation (the kernel's bloom-filter map, or a
 * blocked Bloom filter in an array) with its digest; a hit (confirmed in
 * the exact map in exact mode) drops the packet, unless it is a source or
 * prefix entry and the source is on the allowlist.
 *
 * Built a second time with SIEVE_XDP_KFUNC (sieve_xdp_filter.bpf.o), the
 * filter may instead be a /dev/sieve filter that sieve.ko's kfuncs answer
 * for (SIEVE_XDP_F_FILTER): its own object, as a program naming kfuncs
 * loads only where sieve.ko (with BTF) is loaded.
 *
 * In a dry run (SIEVE_XDP_F_DRY_RUN) every packet is judged and counted
 * the same, and passes. In exact mode a drop is also counted for the
 * origin of the key that matched (sieve_origins).
 *
 * It never locks the operator out: ARP and all other non-IP traffic, and
 * IPv6 neighbour discovery, always pass. A truncated or malformed packet
 * is still checked against the source kinds when its addresses could be
 * read, then passes (or is dropped with SIEVE_XDP_F_FAIL_CLOSED) and is
 * counted.
 *
 * Ports and crafted packets. The ports are the first 4 bytes of TCP, UDP
 * and SCTP, and are read as soon as those 4 bytes are in the packet (and
 * inside the length its IP header gives), whole L4 header or not: a first
 * fragment that carries 8 bytes of TCP is judged by its ports. A packet
 * whose ports should be there and cannot be read, while a service or flow
 * entry exists for its family, is judged as if it matched one: dropped,
 * counted DROP_UNPARSED (whatever SIEVE_XDP_F_FAIL_CLOSED says). Such are
 * a first fragment (IPv4 offset 0 with MF, IPv6 offset 0) too short to
 * carry them, with or without IP options (RFC 1858's tiny fragment); an
 * IPv6 extension chain longer than the program walks or cut short; an L4
 * header, or an IP header, cut short. Otherwise a blocked service could be
 * reached by any packet the parser gives up on, and the kernel reassembles
 * or walks what the parser does not. Without a port kind in use such a
 * packet is only malformed, as before: source kinds do not need ports.
 *
 * Non-first fragments carry no L4 header and are never dropped for it:
 * the kernel delivers them only reassembled with their first fragment,
 * which was judged by its ports (source kinds still apply to them).
 * Overlaps cannot move ports past that judgement: an overlapping fragment
 * at offset 0 is a first fragment and is judged itself, and Linux drops a
 * datagram with overlapping fragments (IPv4 since Linux 4.19, in 2018;
 * IPv6 by RFC 5722), as it drops an IPv6 first fragment without the whole
 * header chain (RFC 7112). One more rule from RFC 1858 (3.2): an IPv4 TCP
 * fragment at offset 1 (8 bytes) only ever follows a tiny first fragment
 * and can rewrite the TCP flags; with a port kind in use it is dropped as
 * DROP_UNPARSED too. A stack following the IPv4 minimum MTU of 68 never
 * has to send one unless it carries 40 bytes of IP options.
 *
 * VLAN tags: the program walks two (802.1ad + 802.1Q). The kernel strips
 * priority tags (VLAN id 0) one after another, as many as a frame has,
 * and delivers what is under them (__netif_receive_skb_core), and stacked
 * VLAN devices take more tags still; so a frame with a third tag, whose
 * addresses and ports the program does not read, is dropped as
 * DROP_UNPARSED while any entry is on the list (the kinds in use), and
 * passes as malformed when the list is empty.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "sieve_xdp.h"
#include "sieve_xdp_blocked.h"
#include "sieve_xdp_v4table.h"
#ifdef SIEVE_XDP_KFUNC
#include "sieve_kfuncs.bpf.h"
#endif

/* Inner-map templates: generations may differ in size, not in type. */
struct bloom_gen {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__type(value, __u64);
	__uint(max_entries, 1);
	__uint(map_extra, 1);
};

/*
 * The blocked backend's filter: one 64-byte block per element, mmapable
 * so the loader writes it without a syscall per key. Its generations
 * differ in max_entries, which an inner array must match unless its
 * template says BPF_F_INNER_MAP (the loader's maps carry the same flags:
 * the kernel compares them). The price: lookups in it are helper calls,
 * not inlined.
 */
struct blocked_gen {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	/* Sizes, not types, as the loader's maps have no BTF either. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, SIEVE_XDP_BLOCK_BYTES);
	__uint(max_entries, 1);
};

struct exact_gen {
	__uint(type, BPF_MAP_TYPE_HASH);
	/* Sizes, not types: BTF would only carry a forward declaration. */
	__uint(key_size, sizeof(struct sieve_xdp_key));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SIEVE_XDP_NR_GENS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct bloom_gen);
} sieve_bloom SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SIEVE_XDP_NR_GENS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct blocked_gen);
} sieve_blocked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SIEVE_XDP_NR_GENS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct exact_gen);
} sieve_exact SEC(".maps");

/*
 * Digests removed since the generation was built ("Removals" in
 * sieve_xdp.h). Entries are allocated as they come: most generations
 * have none, and the loader bounds the rest.
 */
struct removed_gen {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SIEVE_XDP_NR_GENS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct removed_gen);
} sieve_removed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SIEVE_XDP_NR_GENS);
	__type(key, __u32);
	__type(value, struct sieve_xdp_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_active SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sieve_xdp_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_stats SEC(".maps");

/* Drops per origin, exact mode: "Per-origin drops" in sieve_xdp.h. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SIEVE_XDP_ORIGIN_SLOTS);
	__type(key, __u32);
	__type(value, struct sieve_xdp_count);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_origins SEC(".maps");

/* Not generational: see "The allowlist" in sieve_xdp.h. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, SIEVE_XDP_ALLOW_MAX);
	__type(key, struct sieve_xdp_allow_key);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* the trie requires it */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_allow SEC(".maps");

/* 1: the allowlist is empty, skip it (SIEVE_XDP_MAP_ALLOW_NONE). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_allow_none SEC(".maps");

/*
 * The IPv4 prefix table (sieve_xdp_v4table.h): outside the generations,
 * read only by one whose config has SIEVE_XDP_F_V4TABLE. A fixed size, so
 * the JIT inlines the top lookup: one load a packet.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SIEVE_XDP_V4_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_v4top SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SIEVE_XDP_V4_MAX_CHUNKS);
	__type(key, __u32);
	__type(value, struct sieve_xdp_v4_chunk);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_v4chunk SEC(".maps");

/* The host bitmap (sieve_xdp_v4table.h): read where SIEVE_XDP_F_V4HOSTS says. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SIEVE_XDP_V4_HOST_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_v4host SEC(".maps");

/*
 * Samples ("Samples" in sieve_xdp.h): the ring userspace reads, the
 * settings, pinned and outside the generations, and each CPU's bucket
 * (its state only: not pinned, a new program starts with full buckets).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SIEVE_XDP_SAMPLE_RING_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sieve_xdp_sample_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sieve_sample_cfg SEC(".maps");

struct sample_bucket {
	__u64 credit_ns;	/* at most SIEVE_XDP_SAMPLE_BURST_NS */
	__u64 last_ns;		/* when it was last checked */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_bucket);
} sample_bucket SEC(".maps");

#define VLAN_MAX_DEPTH		2
#define IPV6_MAX_EXTHDRS	8
#define ETH_P_8021AD_		0x88A8
#define IPPROTO_HOPOPTS_	0
#define IPPROTO_ROUTING_	43
#define IPPROTO_FRAGMENT_	44
#define IPPROTO_ICMPV6_		58
#define IPPROTO_DSTOPTS_	60
#define IP_MF_			0x2000
#define IP_OFFSET_		0x1fff
#define ICMPV6_ND_FIRST		133	/* router solicitation ... */
#define ICMPV6_ND_LAST		137	/* ... redirect */

/* What the parser learnt about a packet. */
struct pkt {
	__u8 family;		/* 0: not IP */
	__u8 proto;
	__u8 l3_ok;		/* addresses are valid */
	__u8 has_ports;		/* sport/dport are valid */
	__u8 no_ports;		/* ports belong here and could not be read */
	__u8 malformed;
	__u8 nd;		/* IPv6 neighbour discovery */
	__u8 deep_vlan;		/* more VLAN tags than the program walks */
	__be16 sport;
	__be16 dport;
	__be32 saddr[4];
	__be32 daddr[4];
};

/* The live generation: its slot and config; the packet's counters. */
struct gen {
	__u32 slot;
	const struct sieve_xdp_config *cfg;
	struct sieve_xdp_stats *stats;
	__u64 len;		/* the frame's bytes, for the counters */
	__u32 origin;		/* the matching key's origin slot (exact mode) */
	struct xdp_md *ctx;	/* for a sample */
	__u8 probe_len;		/* of the source kind that matched (a sample's) */
};

/* What a sample says of its packet (struct sieve_xdp_sample). */
struct sample_meta {
	__u64 len;
	__u8 verdict;
	__u8 counter;
	__u8 kind;
	__u8 probe_len;
};

struct vlan_hdr_ {
	__be16 tci;
	__be16 proto;
};

struct l4_ports {
	__be16 sport;
	__be16 dport;
};

/*
 * The L4 header after an IP header, of which @avail bytes lie inside the
 * IP packet: ports for TCP, UDP, SCTP, read once their 4 bytes are there;
 * the type for ICMPv6 (neighbour discovery). A header not there in full
 * makes the packet malformed, as before; ports that cannot be read set
 * no_ports (see the top of this file).
 */
static __always_inline void parse_l4(struct pkt *p, void *pos, void *end, int avail)
{
	__u32 need;

	switch (p->proto) {
	case IPPROTO_TCP:
		need = 20;
		break;
	case IPPROTO_UDP:
		need = 8;
		break;
	case IPPROTO_SCTP:
		need = 12;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6_:
		need = 4;
		break;
	default:
		return;
	}
	if (pos + need > end || avail < (int)need)
		p->malformed = 1;
	if (pos + sizeof(struct l4_ports) > end || avail < (int)sizeof(struct l4_ports)) {
		/* need is 4 for ICMP too: it is malformed, and has no ports. */
		p->no_ports = p->proto != IPPROTO_ICMP && p->proto != IPPROTO_ICMPV6_;
		return;
	}
	if (p->proto == IPPROTO_ICMPV6_) {
		__u8 type = *(__u8 *)pos;

		p->nd = !p->malformed && type >= ICMPV6_ND_FIRST && type <= ICMPV6_ND_LAST;
		return;
	}
	if (p->proto == IPPROTO_ICMP)
		return;
	p->sport = ((struct l4_ports *)pos)->sport;
	p->dport = ((struct l4_ports *)pos)->dport;
	p->has_ports = 1;
}

/* Protocols whose packets carry the ports of service and flow entries. */
static __always_inline int port_proto(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP;
}

/*
 * A big-endian 16-bit length, to add to a packet pointer. The 6.1 verifier
 * (Debian 12's kernel) keeps no bounds for a byte swap's result, nor for
 * an OR of two unknowns, so the mask the verifier needs is hidden from the
 * compiler, which would drop it as redundant.
 */
static __always_inline __u32 be16_len(const __be16 *field)
{
	__u32 len = bpf_ntohs(*field);

	asm volatile("" : "+r"(len));
	return len & 0xffff;
}

static __always_inline void parse_ipv4(struct pkt *p, void *pos, void *end)
{
	struct iphdr *ip = pos;
	__u32 hlen, tot_len;

	if ((void *)(ip + 1) > end || ip->version != 4 || ip->ihl < 5) {
		p->malformed = 1;
		return;
	}
	hlen = ip->ihl * 4;
	/* The addresses are read before the options are known to be there:
	 * a source entry still applies to a packet cut short after them.
	 */
	p->saddr[0] = ip->saddr;
	p->daddr[0] = ip->daddr;
	p->proto = ip->protocol;
	p->l3_ok = 1;
	tot_len = be16_len(&ip->tot_len);
	if (pos + hlen > end || tot_len < hlen || pos + tot_len > end)
		p->malformed = 1;
	if (ip->frag_off & bpf_htons(IP_OFFSET_)) {
		/* RFC 1858 3.2: TCP at offset 1 follows a tiny first fragment. */
		p->no_ports = p->proto == IPPROTO_TCP &&
			      (ip->frag_off & bpf_htons(IP_OFFSET_)) == bpf_htons(1);
		/* Other later fragments carry no L4 header: see the top. */
		return;
	}
	if (pos + hlen > end || tot_len < hlen) {
		p->no_ports = port_proto(p->proto);
		return;
	}
	parse_l4(p, pos + hlen, end, tot_len - hlen);
}

/* An extension header the walk skips (AH and ESP are not skipped). */
static __always_inline int ipv6_ext(__u8 next)
{
	return next == IPPROTO_HOPOPTS_ || next == IPPROTO_ROUTING_ ||
	       next == IPPROTO_DSTOPTS_ || next == IPPROTO_FRAGMENT_;
}

/*
 * Skips hop-by-hop, routing, destination options and fragment headers,
 * at most IPV6_MAX_EXTHDRS of them; @off counts the bytes walked past the
 * fixed header, to bound the L4 header by the payload length.
 */
static __always_inline void parse_ipv6(struct pkt *p, void *pos, void *end)
{
	struct ipv6hdr *ip6 = pos;
	__u32 plen, off = 0;
	__u8 next;
	int i;

	if ((void *)(ip6 + 1) > end || ip6->version != 6) {
		p->malformed = 1;
		return;
	}
	__builtin_memcpy(p->saddr, &ip6->saddr, 16);
	__builtin_memcpy(p->daddr, &ip6->daddr, 16);
	p->l3_ok = 1;
	next = ip6->nexthdr;
	plen = be16_len(&ip6->payload_len);
	if (pos + sizeof(*ip6) + plen > end)
		p->malformed = 1;
	pos += sizeof(*ip6);
#pragma unroll
	for (i = 0; i < IPV6_MAX_EXTHDRS; i++) {
		__u8 *h = pos;

		if (!ipv6_ext(next))
			break;
		if ((void *)(h + 8) > end) {
			/* Cut short inside the chain: the protocol is unknown. */
			p->malformed = 1;
			p->no_ports = 1;
			return;
		}
		if (next == IPPROTO_FRAGMENT_) {
			next = h[0];
			pos += 8;
			off += 8;
			/* Offset != 0: a later fragment, no L4 header. */
			if (*(__be16 *)(h + 2) & bpf_htons(0xfff8)) {
				p->proto = next;
				return;
			}
			continue;
		}
		next = h[0];
		pos += (h[1] + 1) * 8;
		off += (h[1] + 1) * 8;
	}
	p->proto = next;
	if (ipv6_ext(next)) {
		/* A chain longer than the bound: the protocol is unknown. */
		p->malformed = 1;
		p->no_ports = 1;
		return;
	}
	parse_l4(p, pos, end, (int)plen - (int)off);
}

static __always_inline void parse(struct xdp_md *ctx, struct pkt *p)
{
	void *pos = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = pos;
	__be16 proto;
	int i;

	if ((void *)(eth + 1) > end) {
		p->malformed = 1;
		return;
	}
	proto = eth->h_proto;
	pos = eth + 1;
#pragma unroll
	for (i = 0; i < VLAN_MAX_DEPTH; i++) {
		struct vlan_hdr_ *vh = pos;

		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD_))
			break;
		if ((void *)(vh + 1) > end) {
			p->malformed = 1;
			return;
		}
		proto = vh->proto;
		pos = vh + 1;
	}
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD_)) {
		p->deep_vlan = 1;
		p->malformed = 1;
		return;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		p->family = SIEVE_XDP_V4;
		parse_ipv4(p, pos, end);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		p->family = SIEVE_XDP_V6;
		parse_ipv6(p, pos, end);
	}
}

/* Counter i: one packet of @len bytes, both in one cache line. */
static __always_inline void count_to(struct sieve_xdp_stats *stats, int i, __u64 len)
{
	stats->c[i].packets++;
	stats->c[i].bytes += len;
}

static __always_inline void count(struct gen *g, int i)
{
	count_to(g->stats, i, g->len);
}

/*
 * The k bits of the blocked backend's lookup, in a global function: the
 * verifier checks it once, not once for each probe.
 */
__noinline int sieve_blocked_test(const struct sieve_xdp_block *block, __u64 h, __u32 k)
{
	return block && sieve_xdp_blocked_test(block->w, h, k);
}

/*
 * The blocked backend: one block, k bits of it (include/sieve_xdp_blocked.h).
 * Block indexes are below nblocks by construction; a lookup that
 * still fails answers "no".
 */
static __always_inline int blocked_maybe(const struct sieve_xdp_config *cfg, __u32 slot,
					 __u64 digest)
{
	__u64 h = sieve_xdp_blocked_hash(digest, cfg->blocked_seed);
	__u32 idx = sieve_xdp_blocked_index(h, cfg->blocked.nblocks);
	void *blocked = bpf_map_lookup_elem(&sieve_blocked, &slot);

	if (!blocked)
		return 0;
	return sieve_blocked_test(bpf_map_lookup_elem(blocked, &idx), h, cfg->blocked.k);
}

/* Whether the generation's filter may hold the key's @digest, of any backend. */
static __always_inline int filter_maybe(const struct sieve_xdp_config *cfg, __u32 slot,
					__u64 digest)
{
	void *bloom;

#ifdef SIEVE_XDP_KFUNC
	/*
	 * The filter holds digests (see SIEVE_XDP_F_FILTER), and is found per
	 * call: a reference held across the packet's probes cannot be passed
	 * to this global function. A filter that is gone (-ENOENT) passes.
	 */
	if (cfg->flags & SIEVE_XDP_F_FILTER)
		return bpf_sieve_contains_id(cfg->filter.id, &digest, sizeof(digest)) > 0;
#endif
	if (cfg->flags & SIEVE_XDP_F_BLOCKED)
		return blocked_maybe(cfg, slot, digest);
	bloom = bpf_map_lookup_elem(&sieve_bloom, &slot);
	return bloom && !bpf_map_peek_elem(bloom, &digest);
}

/*
 * A hit in the exact map: 1 + the origin slot its value names (a probe's
 * hit, see probe_key), or 0.
 */
static __always_inline int exact_has(__u32 slot, const struct sieve_xdp_key *key)
{
	void *exact = bpf_map_lookup_elem(&sieve_exact, &slot);
	/* A copy on this frame's stack: 6.1 takes no other memory as a key. */
	struct sieve_xdp_key copy = *key;
	__u32 *origin;

	if (!exact)
		return 0;
	origin = bpf_map_lookup_elem(exact, &copy);
	return origin ? 1 + sieve_xdp_origin_slot(*origin) : 0;
}

/* Whether the key of @digest was removed since the generation was built. */
static __always_inline int removed_has(__u32 slot, __u64 digest)
{
	void *removed = bpf_map_lookup_elem(&sieve_removed, &slot);

	return removed && bpf_map_lookup_elem(removed, &digest);
}

/*
 * One probe: the filter answers "maybe" or "no"; in exact mode a "maybe"
 * is confirmed in the hash map, else refuted by the removed digests (an
 * empty slot unless the generation had removals); a refuted one is
 * counted. A hit returns 1 + the key's origin slot (exact mode; slot 0,
 * SIEVE_XDP_ORIGIN_NONE, otherwise), a miss 0. The
 * generation's maps are looked up per probe (array lookups the JIT
 * inlines): kept across probes, their NULL checks multiply the verifier's
 * states.
 */
static __always_inline int probe_key(const struct sieve_xdp_key *key,
				     const struct sieve_xdp_config *cfg,
				     struct sieve_xdp_stats *stats, __u32 slot, __u64 len)
{
	__u64 digest;
	int hit;

#ifdef SIEVE_XDP_BENCH_HASH_ONLY
	/* make bench-xdp's reference (tests/bpf/bench/): never in the product. */
	if (cfg->flags & SIEVE_XDP_F_HASH_ONLY)
		return exact_has(slot, key);
#endif
	/* Keyed by the host's secret, from the config: no lookup more. */
	digest = sieve_xdp_digest(key, cfg->digest_key);
	if (!filter_maybe(cfg, slot, digest))
		return 0;
	count_to(stats, SIEVE_XDP_BLOOM_HITS, len);
	hit = cfg->flags & SIEVE_XDP_F_EXACT ? exact_has(slot, key) : !removed_has(slot, digest);
	if (!hit)
		count_to(stats, SIEVE_XDP_FALSE_POSITIVES, len);
	return hit;
}

/*
 * Probes are made in global functions, each verified once: inlined at
 * each of the up to 35 places a packet may probe, the program is past
 * what the 6.1 verifier (Debian 12's kernel) explores. This one probes one
 * key; sieve_match_prefixes() walks the probe lengths in one call.
 */
__noinline int sieve_probe(const struct sieve_xdp_key *key, const struct sieve_xdp_config *cfg,
			   struct sieve_xdp_stats *stats, __u32 slot, __u64 len)
{
	if (!key || !cfg || !stats)
		return 0;
	return probe_key(key, cfg, stats, slot, len);
}

/*
 * Source prefixes: one probe per length in use, longest first. A hit
 * returns the length that hit (1-128) in its low 8 bits and the probe's
 * hit (1 + the key's origin slot, exact mode) above them; a miss 0.
 */
__noinline int sieve_match_prefixes(const struct pkt *p, const struct sieve_xdp_config *cfg,
				    struct sieve_xdp_stats *stats, __u32 slot, __u64 len)
{
	struct sieve_xdp_key key = { .kind = SIEVE_XDP_PREFIX };
	int i, hit;

	if (!p || !cfg || !stats)
		return 0;
	key.family = p->family;
	if (p->family == SIEVE_XDP_V4) {
		for (i = 0; i < SIEVE_XDP_MAX_PREFIX_LENS && i < cfg->nr_v4_lens; i++) {
			key.prefix_len = cfg->v4_lens[i];
			key.saddr[0] = p->saddr[0] & cfg->v4_masks[i];
			hit = probe_key(&key, cfg, stats, slot, len);
			if (hit)
				return key.prefix_len | (hit - 1) << 8;
		}
		return 0;
	}
	for (i = 0; i < SIEVE_XDP_MAX_PREFIX_LENS && i < cfg->nr_v6_lens; i++) {
		key.prefix_len = cfg->v6_lens[i];
		key.saddr[0] = p->saddr[0] & cfg->v6_masks[i][0];
		key.saddr[1] = p->saddr[1] & cfg->v6_masks[i][1];
		key.saddr[2] = p->saddr[2] & cfg->v6_masks[i][2];
		key.saddr[3] = p->saddr[3] & cfg->v6_masks[i][3];
		hit = probe_key(&key, cfg, stats, slot, len);
		if (hit)
			return key.prefix_len | (hit - 1) << 8;
	}
	return 0;
}

/*
 * The IPv4 prefix table: the /24's two bits, and for the /24s holding
 * longer prefixes one more lookup, of its chunk. Exact: no confirmation.
 * A global function, like the probes: verified once, whatever calls it.
 */
__noinline int sieve_v4table_has(__be32 saddr)
{
	__u32 addr = bpf_ntohl(saddr), slot = sieve_xdp_v4_slot(addr);
	__u32 word = sieve_xdp_v4_word(slot), state, key;
	const struct sieve_xdp_v4_chunk *chunk;
	__u64 *top = bpf_map_lookup_elem(&sieve_v4top, &word);

	if (!top)
		return 0;
	state = sieve_xdp_v4_state(*top, slot);
	if (state < SIEVE_XDP_V4_CHUNK0)
		return state == SIEVE_XDP_V4_COVERED;
	key = sieve_xdp_v4_chunk_key(slot, state);
	chunk = bpf_map_lookup_elem(&sieve_v4chunk, &key);
	return chunk && sieve_xdp_v4_chunk_has(chunk, addr);
}

/* A hit notes the key's origin slot for the verdict (count_origin). */
static __always_inline int noted(struct gen *g, int hit)
{
	if (hit > 0)
		g->origin = (hit - 1) & (SIEVE_XDP_ORIGIN_SLOTS - 1);
	return hit;
}

static __always_inline int probe(struct gen *g, struct sieve_xdp_key *key)
{
	return noted(g, sieve_probe(key, g->cfg, g->stats, g->slot, g->len));
}

static __always_inline int kind_on(const struct gen *g, int kind, __u8 family)
{
	return g->cfg->kinds & SIEVE_XDP_KIND_BIT(kind, family);
}

/* The length that hit, or 0; its key's origin noted. */
static __always_inline int match_prefixes(struct gen *g, const struct pkt *p)
{
	int hit = sieve_match_prefixes(p, g->cfg, g->stats, g->slot, g->len);

	if (!hit)
		return 0;
	noted(g, (hit >> 8) + 1);
	return hit & 0xff;
}

/*
 * Whether the source kind may hold the packet's source: for IPv4, where
 * the host bitmap is kept, only if its /24 holds a host (an inlined array
 * read, no digest). A missing word answers "maybe": probe.
 */
static __always_inline int source_maybe(const struct gen *g, const struct pkt *p)
{
	__u32 slot, word;
	__u64 *bits;

	if (!kind_on(g, SIEVE_XDP_SRC, p->family))
		return 0;
	if (p->family != SIEVE_XDP_V4 || !(g->cfg->flags & SIEVE_XDP_F_V4HOSTS))
		return 1;
	slot = sieve_xdp_v4_slot(bpf_ntohl(p->saddr[0]));
	word = sieve_xdp_v4_host_word(slot);
	bits = bpf_map_lookup_elem(&sieve_v4host, &word);
	return !bits || (*bits & sieve_xdp_v4_host_bit(slot));
}

/* The source kinds: SIEVE_XDP_SRC or SIEVE_XDP_PREFIX if one matches, or -1. */
static __always_inline int match_source(struct gen *g, const struct pkt *p)
{
	if (source_maybe(g, p)) {
		struct sieve_xdp_key key = { .kind = SIEVE_XDP_SRC, .family = p->family };

		key.prefix_len = p->family == SIEVE_XDP_V4 ? 32 : 128;
		__builtin_memcpy(key.saddr, p->saddr, 16);
		g->probe_len = key.prefix_len;
		if (probe(g, &key))
			return SIEVE_XDP_SRC;
	}
	g->probe_len = 0;
	if (!kind_on(g, SIEVE_XDP_PREFIX, p->family))
		return -1;
	/* The table holds no origins: SIEVE_XDP_ORIGIN_NONE, as g->origin starts. */
	if (p->family == SIEVE_XDP_V4 && (g->cfg->flags & SIEVE_XDP_F_V4TABLE))
		return sieve_v4table_has(p->saddr[0]) ? SIEVE_XDP_PREFIX : -1;
	g->probe_len = match_prefixes(g, p);
	return g->probe_len ? SIEVE_XDP_PREFIX : -1;
}

/* The port kinds: SIEVE_XDP_SERVICE or SIEVE_XDP_FLOW, or -1. */
static __always_inline int match_ports(struct gen *g, const struct pkt *p)
{
	struct sieve_xdp_key key;

	/* Skipped, key and all, when none is in use. */
	if (!p->has_ports || !(kind_on(g, SIEVE_XDP_SERVICE, p->family) ||
			       kind_on(g, SIEVE_XDP_FLOW, p->family)))
		return -1;
	key = (struct sieve_xdp_key){ .family = p->family, .proto = p->proto, .dport = p->dport };
	__builtin_memcpy(key.daddr, p->daddr, 16);
	if (kind_on(g, SIEVE_XDP_SERVICE, p->family)) {
		key.kind = SIEVE_XDP_SERVICE;
		if (probe(g, &key))
			return SIEVE_XDP_SERVICE;
	}
	if (kind_on(g, SIEVE_XDP_FLOW, p->family)) {
		key.kind = SIEVE_XDP_FLOW;
		key.sport = p->sport;
		__builtin_memcpy(key.saddr, p->saddr, 16);
		if (probe(g, &key))
			return SIEVE_XDP_FLOW;
	}
	return -1;
}

/*
 * The token bucket ("Samples" in sieve_xdp.h): whether this CPU may send
 * a sample now, at @rate a second. Integers only: a lookup and a clock read.
 */
static __always_inline int sample_take(__u32 rate)
{
	__u32 zero = 0;
	struct sample_bucket *b = bpf_map_lookup_elem(&sample_bucket, &zero);
	__u64 now, credit, cost = 1000000000ULL / rate;

	if (!b)
		return 0;
	/*
	 * The coarse clock: a read of the last tick's time, where the precise
	 * one reads the clocksource (on the test VM it doubled the cost of a
	 * drop's check: make bench-xdp). The bucket then earns its credit a
	 * tick at a time, as much all the same.
	 */
	now = bpf_ktime_get_coarse_ns();
	/* last_ns 0 (a new bucket): full. The clock is monotonic. */
	credit = now - b->last_ns >= SIEVE_XDP_SAMPLE_BURST_NS ? SIEVE_XDP_SAMPLE_BURST_NS :
		 b->credit_ns + (now - b->last_ns);
	if (credit > SIEVE_XDP_SAMPLE_BURST_NS)
		credit = SIEVE_XDP_SAMPLE_BURST_NS;
	b->last_ns = now;
	if (credit < cost) {
		b->credit_ns = credit;
		return 0;
	}
	b->credit_ns = credit - cost;
	return 1;
}

#if SIEVE_XDP_SAMPLE_BYTES & (SIEVE_XDP_SAMPLE_BYTES - 1)
#error "load_frame()'s mask needs SIEVE_XDP_SAMPLE_BYTES to be a power of two"
#endif

/*
 * The frame's first @cap bytes, 1 to SIEVE_XDP_SAMPLE_BYTES, into @dst.
 * The 6.1 verifier (Debian 12's) loses the lower bound of the caller's
 * min() as the compiler emits it ("invalid access to memory ... size=0")
 * and refuses the program: after the barrier the mask restates the range
 * in a form it tracks, and changes no value in it.
 */
static __always_inline int load_frame(struct xdp_md *ctx, void *dst, __u32 cap)
{
	barrier_var(cap);
	cap = ((cap - 1) & (SIEVE_XDP_SAMPLE_BYTES - 1)) + 1;
	return bpf_xdp_load_bytes(ctx, 0, dst, cap);
}

/*
 * A sample of the packet, if the bucket allows: its first bytes and what
 * judged it, into the ring. A global function, verified once whatever
 * calls it. A full ring is counted, never waited for.
 */
__noinline int sieve_sample(struct xdp_md *ctx, struct sieve_xdp_stats *stats,
			    const struct sample_meta *m)
{
	const struct sieve_xdp_sample_cfg *sc;
	struct sieve_xdp_sample *s;
	__u32 zero = 0, cap;

	if (!ctx || !stats || !m)
		return 0;
	sc = bpf_map_lookup_elem(&sieve_sample_cfg, &zero);
	if (!sc || !sc->rate)
		return 0;
	if (m->verdict != XDP_DROP && !(sc->flags & SIEVE_XDP_SAMPLE_ALLOWED))
		return 0;
	if (!sample_take(sc->rate))
		return 0;
	s = bpf_ringbuf_reserve(&sieve_samples, sizeof(*s), 0);
	if (!s) {
		count_to(stats, SIEVE_XDP_SAMPLES_LOST, m->len);
		return 0;
	}
	cap = m->len < SIEVE_XDP_SAMPLE_BYTES ? m->len : SIEVE_XDP_SAMPLE_BYTES;
	/* Frames are at least an Ethernet header: the bound is the verifier's. */
	if (cap < 1 || load_frame(ctx, s->data, cap))
		cap = 0;
	s->ktime_ns = bpf_ktime_get_ns();
	s->ifindex = ctx->ingress_ifindex;
	s->frame_len = m->len;
	s->cap_len = cap;
	s->verdict = m->verdict;
	s->counter = m->counter;
	s->kind = m->kind;
	s->probe_len = m->probe_len;
	s->__reserved[0] = 0;
	s->__reserved[1] = 0;
	bpf_ringbuf_submit(s, 0);
	count_to(stats, SIEVE_XDP_SAMPLED, m->len);
	return 0;
}

/* @kind: the entry kind that matched, or -1 (SIEVE_XDP_SAMPLE_NO_KIND). */
static __always_inline void sample(struct gen *g, __u8 verdict, int counter, int kind)
{
	struct sample_meta m = {
		.len = g->len, .verdict = verdict, .counter = counter,
		.kind = kind < 0 ? SIEVE_XDP_SAMPLE_NO_KIND : kind,
		.probe_len = kind == SIEVE_XDP_SRC || kind == SIEVE_XDP_PREFIX ? g->probe_len : 0,
	};

	sieve_sample(g->ctx, g->stats, &m);
}

/*
 * Every drop's way out: counted in @counter and sampled, with the entry
 * @kind that matched (or -1), as enforcing would; in a dry run (one read
 * of the flag a packet) the packet then passes instead.
 */
static __always_inline int drop(struct gen *g, int counter, int kind)
{
	count(g, counter);
	sample(g, XDP_DROP, counter, kind);
	if (g->cfg->flags & SIEVE_XDP_F_DRY_RUN) {
		count(g, SIEVE_XDP_DRY_RUN_PASSED);
		return XDP_PASS;
	}
	return XDP_DROP;
}

/* Whether the packet's source is on the allowlist: one trie lookup, none while it is empty. */
static __always_inline int allowed(const struct pkt *p)
{
	struct sieve_xdp_allow_key key = { .family = p->family };
	__u32 zero = 0, *none = bpf_map_lookup_elem(&sieve_allow_none, &zero);

	if (none && *none)
		return 0;

	key.prefixlen = SIEVE_XDP_ALLOW_PREFIXLEN(p->family == SIEVE_XDP_V4 ? 32 : 128);
	__builtin_memcpy(key.addr, p->saddr, 16);
	return !!bpf_map_lookup_elem(&sieve_allow, &key);
}

/*
 * The kind of the first entry that drops the packet, or -1. The allowlist
 * is asked only once a source kind matched (confirmed, in exact mode), so
 * traffic that matches nothing pays nothing for it, and at most once: its
 * answer depends on the source alone, so an allowed source skips the
 * remaining source probes too. Port kinds still apply to it.
 */
static __always_inline int match(struct gen *g, const struct pkt *p)
{
	int kind = match_source(g, p), port_kind;

	if (kind < 0)
		return match_ports(g, p);
	if (!allowed(p))
		return kind;
	count(g, SIEVE_XDP_ALLOWED);
	port_kind = match_ports(g, p);
	if (port_kind < 0)
		sample(g, XDP_PASS, SIEVE_XDP_ALLOWED, kind);
	return port_kind;
}

/*
 * Looks up the live generation: one read of sieve_active, then its slot.
 * Its maps are looked up by each probe (inlined array lookups): a packet
 * of a family or kind with no entries costs no map lookup.
 */
static __always_inline int load_gen(struct xdp_md *ctx, struct gen *g)
{
	__u32 zero = 0, *active;

	g->stats = bpf_map_lookup_elem(&sieve_stats, &zero);
	active = bpf_map_lookup_elem(&sieve_active, &zero);
	if (!g->stats || !active)
		return -1;
	g->slot = *active & (SIEVE_XDP_NR_GENS - 1);
	g->cfg = bpf_map_lookup_elem(&sieve_cfg, &g->slot);
	/* Not a helper call (bpf_xdp_get_buff_len): the program is not
	 * frags-aware, so the frame is all linear. Subtracting packet
	 * pointers needs a privileged loader, as attaching XDP does.
	 */
	g->len = ctx->data_end - ctx->data;
	g->ctx = ctx;
	g->probe_len = 0;
	g->origin = SIEVE_XDP_ORIGIN_NONE;
	return g->cfg ? 0 : -1;
}

/*
 * A drop by an entry, in exact mode: counted for the origin of the key
 * that matched. A helper call only on that path.
 */
static __always_inline void count_origin(struct gen *g)
{
	struct sieve_xdp_count *c;

	if (!(g->cfg->flags & SIEVE_XDP_F_EXACT))
		return;
	c = bpf_map_lookup_elem(&sieve_origins, &g->origin);
	if (c) {
		c->packets++;
		c->bytes += g->len;
	}
}

static __always_inline int verdict(struct gen *g, const struct pkt *p)
{
	int kind;

	if (!p->family && !p->malformed) {
		count(g, SIEVE_XDP_NON_IP);
		goto pass;
	}
	/* What lies under the tags is unknown: as if it matched, while anything is blocked. */
	if (p->deep_vlan && g->cfg->kinds)
		return drop(g, SIEVE_XDP_DROP_UNPARSED, -1);
	if (p->nd)
		goto pass;
	if (p->l3_ok) {
		kind = match(g, p);
		if (kind >= 0 && kind < SIEVE_XDP_NR_KINDS) {
			count_origin(g);
			return drop(g, SIEVE_XDP_DROP_SRC + kind, kind);
		}
		/* Ports that might match a port kind: as if they did. */
		if (p->no_ports && (kind_on(g, SIEVE_XDP_SERVICE, p->family) ||
				    kind_on(g, SIEVE_XDP_FLOW, p->family)))
			return drop(g, SIEVE_XDP_DROP_UNPARSED, -1);
	}
	if (p->malformed) {
		count(g, SIEVE_XDP_MALFORMED);
		if (g->cfg->flags & SIEVE_XDP_F_FAIL_CLOSED)
			return drop(g, SIEVE_XDP_DROP_MALFORMED, -1);
	}
pass:
	count(g, SIEVE_XDP_PASSED);
	return XDP_PASS;
}

SEC("xdp")
int sieve_xdp(struct xdp_md *ctx)
{
	struct pkt p = {};
	struct gen g;

	/* No maps (cannot happen once loaded): let everything through. */
	if (load_gen(ctx, &g))
		return XDP_PASS;
	parse(ctx, &p);
	return verdict(&g, &p);
}

char LICENSE[] SEC("license") = "GPL";
