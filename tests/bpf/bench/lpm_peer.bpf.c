// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-xdp's peer for prefix lists: what operators reach for
 * instead of sieve, a BPF_MAP_TYPE_LPM_TRIE of the list's IPv4 prefixes
 * and hosts (as Cilium's prefilter and gamemann's XDP firewall use one),
 * looked up with the packet's source; a hit drops. It parses packets with
 * sieve's own parser (parse() of bpf/sieve_xdp.bpf.c, included, not
 * copied), so the two programs differ only in what they look up. It keeps
 * no counters and asks no allowlist, which only flatters the peer. The
 * bench loads it on the maps of the real program, so the included
 * program's maps cost nothing more. Never shipped: bench only.
 *
 * parse_only_xdp is the floor of both: the same parser and no lookup, so
 * that a program's ns less its ns is what the lookup (and, for sieve,
 * its config, counters and verdict) costs.
 */
#include "sieve_xdp.bpf.c"

/* Cilium's prefilter caps its trie at 64k prefixes. */
#define LPM_PEER_MAX_ENTRIES	65536

struct lpm_peer_key {
	__u32 prefixlen;
	__be32 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm_peer_key);
	__type(value, __u32);
	__uint(max_entries, LPM_PEER_MAX_ENTRIES);
} lpm_peer_v4 SEC(".maps");

SEC("xdp")
int lpm_peer_xdp(struct xdp_md *ctx)
{
	struct lpm_peer_key key = { .prefixlen = 32 };
	struct pkt p = {};

	parse(ctx, &p);
	if (p.family != SIEVE_XDP_V4 || !p.l3_ok)
		return XDP_PASS;
	key.addr = p.saddr[0];
	return bpf_map_lookup_elem(&lpm_peer_v4, &key) ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int parse_only_xdp(struct xdp_md *ctx)
{
	struct pkt p = {};

	parse(ctx, &p);
	if (p.family != SIEVE_XDP_V4 || !p.l3_ok)
		return XDP_PASS;
	/* The source read, as the lookups read it: the parse is not optimised away. */
	return p.saddr[0] ? XDP_PASS : XDP_DROP;
}
