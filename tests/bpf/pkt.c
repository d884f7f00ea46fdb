// SPDX-License-Identifier: GPL-2.0
/*
 * Crafted packets. Lengths in the headers are right (IPv4 total length,
 * IPv6 payload length), so any shorter copy of a packet is a truncation
 * the XDP program can tell. Checksums are left zero: XDP does not look.
 */
#include <arpa/inet.h>
#include <string.h>
#include <netinet/in.h>

#include "pkt.h"

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
	return p + 2;
}

static uint8_t *put_eth(const struct pkt_spec *s, uint8_t *p)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
	uint16_t l3 = s->flow.family == SIEVE_XDP_V4 ? 0x0800 : 0x86dd;

	memcpy(p, macs, 12);
	p += 12;
	/* Past two: priority tags (VLAN id 0), which the kernel strips in a loop. */
	for (int i = 2; i < s->vlans; i++) {
		p = put16(p, 0x8100);
		p = put16(p, 0);
	}
	if (s->vlans >= 2) {
		p = put16(p, 0x88a8);
		p = put16(p, 100);
	}
	if (s->vlans >= 1) {
		p = put16(p, 0x8100);
		p = put16(p, 200);
	}
	return put16(p, l3);
}

static size_t l4_len(const struct pkt_spec *s)
{
	if (s->frag_offset)
		return 0;
	switch (s->flow.proto) {
	case IPPROTO_TCP:
		return 20;
	case IPPROTO_UDP:
		return 8;
	case IPPROTO_SCTP:
		return 12;
	default:
		return 8;	/* ICMP echo */
	}
}

static void put_l4(const struct pkt_spec *s, uint8_t *out)
{
	uint8_t p[20] = { 0 };

	if (!s->frag_offset && (s->flow.proto == IPPROTO_ICMP || s->flow.proto == IPPROTO_ICMPV6)) {
		p[0] = s->icmp_type;
	} else if (!s->frag_offset) {
		memcpy(p, &s->flow.sport, 2);
		memcpy(p + 2, &s->flow.dport, 2);
		if (s->flow.proto == IPPROTO_TCP)
			p[12] = 5 << 4;		/* data offset */
		if (s->flow.proto == IPPROTO_UDP)
			put16(p + 4, 8 + s->payload);
	}
	/* A tiny fragment: the header's first bytes, as far as they go. */
	memcpy(out, p, s->l4_short ? (size_t)s->l4_bytes : l4_len(s));
}

/* The L4 bytes and the payload after them that the packet carries. */
static size_t l4_carried(const struct pkt_spec *s)
{
	return s->l4_short ? (size_t)s->l4_bytes : l4_len(s) + s->payload;
}

static size_t build_v4(const struct pkt_spec *s, uint8_t *ip)
{
	size_t hlen = 20 + s->ip_options, l4 = l4_len(s), tot = hlen + l4_carried(s);
	uint16_t frag = s->frag_offset | (s->fragment ? 0x2000 : 0);

	memset(ip, 0, hlen);
	ip[0] = 0x40 | (hlen / 4);
	put16(ip + 2, tot);
	put16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = s->flow.proto;
	memcpy(ip + 12, s->flow.saddr, 4);
	memcpy(ip + 16, s->flow.daddr, 4);
	if (s->ip_options)
		ip[20] = 1;		/* NOPs, then end of list (zeros) */
	put_l4(s, ip + hlen);
	if (!s->l4_short)
		memset(ip + hlen + l4, 0xab, s->payload);
	return tot;
}

/* An extension header of 8 bytes: next header, length 0, padding. */
static uint8_t *put_ext(uint8_t *p, uint8_t next)
{
	memset(p, 0, 8);
	p[0] = next;
	p[2] = 1;		/* PadN: fills the 6 option bytes */
	p[3] = 4;
	return p + 8;
}

static size_t build_v6(const struct pkt_spec *s, uint8_t *ip)
{
	uint8_t chain[48], *p = ip + 40, l4proto = s->flow.proto;
	size_t l4 = l4_len(s), payload;
	int n = 0, i;

	/* The next-header values in order: extension headers, then L4. */
	if (s->ext_headers) {
		chain[n++] = 0;				/* hop-by-hop */
		chain[n++] = 60;			/* then destination options */
		chain[n++] = 43;			/* then routing */
	}
	for (i = 0; i < s->dst_opts && n < 40; i++)
		chain[n++] = 60;
	if (s->fragment)
		chain[n++] = 44;
	chain[n] = l4proto;
	memset(ip, 0, 40);
	ip[0] = 0x60;
	ip[6] = chain[0];
	ip[7] = 64;
	memcpy(ip + 8, s->flow.saddr, 16);
	memcpy(ip + 24, s->flow.daddr, 16);
	for (i = 0; i < n; i++) {
		if (chain[i] == 44) {
			memset(p, 0, 8);
			p[0] = chain[i + 1];
			put16(p + 2, (s->frag_offset << 3) | 1);	/* offset, M */
			p += 8;
			continue;
		}
		p = put_ext(p, chain[i + 1]);
		if (chain[i] == 43) {
			p[-6] = 0;			/* routing: type 0, segments 0 */
			p[-5] = 0;
		}
	}
	put_l4(s, p);
	if (!s->l4_short)
		memset(p + l4, 0xab, s->payload);
	payload = (p - ip) - 40 + l4_carried(s);
	put16(ip + 4, payload);
	return 40 + payload;
}

size_t pkt_build(const struct pkt_spec *s, uint8_t *buf)
{
	uint8_t *ip = put_eth(s, buf);

	return (ip - buf) + (s->flow.family == SIEVE_XDP_V4 ? build_v4(s, ip) : build_v6(s, ip));
}

size_t pkt_build_arp(uint8_t *buf)
{
	static const uint8_t arp[28] = {
		0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 198, 51, 100, 7,
		0, 0, 0, 0, 0, 0, 198, 51, 100, 1,
	};

	memset(buf, 0xff, 6);
	memset(buf + 6, 2, 6);
	put16(buf + 12, 0x0806);
	memcpy(buf + 14, arp, sizeof(arp));
	return 14 + sizeof(arp);
}
