/* SPDX-License-Identifier: GPL-2.0 */
/* Crafted packets for BPF_PROG_TEST_RUN: the test suite's and the benchmark's. */
#ifndef SIEVE_TEST_PKT_H
#define SIEVE_TEST_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve_xdp.h"

#define PKT_MAX		2048	/* a 1514-byte frame fits */

/* What to put in a packet; the addresses and ports come from a flow key. */
struct pkt_spec {
	struct sieve_xdp_key flow;	/* family, proto, addresses, ports */
	int vlans;			/* 0, 1 (802.1Q), 2 (802.1ad + 802.1Q), more: VID 0 tags first */
	int ip_options;			/* IPv4 option bytes, a multiple of 4 */
	bool ext_headers;		/* IPv6: hop-by-hop, dst opts, routing */
	bool fragment;			/* IPv4 MF / IPv6 fragment header */
	uint16_t frag_offset;		/* in 8-byte units; non-zero: no L4 header */
	uint8_t icmp_type;		/* for IPPROTO_ICMP / IPPROTO_ICMPV6 */
	int payload;			/* bytes after the L4 header */
	int dst_opts;			/* IPv6: more destination options headers, then L4 */
	bool l4_short;			/* only l4_bytes of L4, no payload: a tiny fragment */
	int l4_bytes;
};

/* Builds the packet into buf (PKT_MAX bytes); returns its length. */
size_t pkt_build(const struct pkt_spec *spec, uint8_t *buf);
/* An ARP request. */
size_t pkt_build_arp(uint8_t *buf);

#endif /* SIEVE_TEST_PKT_H */
