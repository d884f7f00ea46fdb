/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One interface's blocklist as its pins show it now, read in one call
 * (report.c): what `sieve xdp status` prints, what the agent's metrics
 * export and what `sieve xdp why` runs a packet against (why.c), so they
 * cannot read an interface two ways. The store's side
 * (the list it records, its version) is the caller's: a report reads only
 * what the kernel holds.
 */
#ifndef SIEVE_XDP_REPORT_H
#define SIEVE_XDP_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/sieve.h>

#include "xdp.h"

struct sxdp_iface_report {
	struct sieve_xdp_config cfg;	/* the live generation's */
	struct sieve_xdp_stats stats;	/* the counters, summed over the CPUs */
	char mode[16];			/* sxdp_mode(): "native", "generic", or "none" */
	uint64_t filter_bytes;		/* kernel-reported memory of the filter, its removed map too */
	uint64_t exact_bytes;		/* of the exact maps; 0 if none */
	/* Expected per probe now: removed keys keep their bits until the next generation. */
	double fpr;
	uint64_t nbits;			/* the filter's bits that rate is of */
	/* The filter backend's /dev/sieve filter: its name ("" if unknown), or gone. */
	char filter[SIEVE_NAME_MAX];
	bool filter_gone;		/* sxdp_filter_gone(): the interface enforces nothing */
	struct sxdp_prog prog;		/* the program its link runs; id 0: none */
	/* The IPv4 prefix table, when the generation reads it (SIEVE_XDP_F_V4TABLE). */
	uint64_t v4_covered;		/* /24s a prefix of length <= 24 covers whole */
	uint64_t v4_chunks;		/* /24s holding longer prefixes */
	uint64_t v4table_bytes;		/* kernel memory of its two maps */
	/*
	 * Drops per origin slot (sieve_xdp.h), counted in exact mode only;
	 * none at all by an older sieve's program (!has_origins).
	 */
	bool has_origins;
	struct sieve_xdp_count origin_drops[SIEVE_XDP_ORIGIN_SLOTS];
};

/*
 * The report of @h (from sxdp_open* or sxdp_open_reader*: an older
 * program's maps read as far as they go): 0, or -errno if its config,
 * counters or memory cannot be read.
 */
int sxdp_iface_report(struct sxdp_handle *h, struct sxdp_iface_report *r);

/* ---- why (why.c): one packet's verdict, and the entries covering it ---- */

struct sxdp_store;
struct sxdp_store_entry;

/* The packet asked about; addresses and ports in network order. */
struct sxdp_why_packet {
	uint8_t family;		/* SIEVE_XDP_V4 or SIEVE_XDP_V6 */
	uint8_t proto;		/* IPPROTO_TCP, _UDP, _SCTP, or _ICMP(V6) */
	__be16 sport, dport;	/* 0: none given (no entry has port 0) */
	__be32 saddr[4], daddr[4];
};

/* Ethernet, IP and an L4 header: what sxdp_why_build writes at most. */
#define SXDP_WHY_PKT_MAX	128

/* The frame the program is run on: @p's headers, no payload; its length. */
size_t sxdp_why_build(const struct sxdp_why_packet *p, uint8_t buf[SXDP_WHY_PKT_MAX]);

struct sxdp_why_verdict {
	int action;			/* XDP_PASS or XDP_DROP, as the program returned */
	int counter;			/* the SIEVE_XDP_DROP_* that counted it, or PASSED */
	bool allowed;			/* the allowlist overrode a source or prefix match */
	bool dry_run;			/* a drop the dry run passed (action XDP_PASS) */
	struct sieve_xdp_stats counted;	/* all the run counted, in its own counters */
	char tag[17];			/* the tag of the one run: the running one's */
};

/*
 * Runs @p through the program attached at @h (from sxdp_open_reader*), of
 * report @r (sxdp_iface_report: its config and running program), on the
 * live maps, its counters untouched (why.c says how). 0, or -errno:
 * -ENOENT no program runs there; -ESTALE the running program, or its
 * maps, are not this sieve's (`sieve xdp attach IFACE` upgrades it);
 * another from loading or running the program.
 */
int sxdp_why_verdict(struct sxdp_handle *h, const struct sxdp_iface_report *r,
		     const struct sxdp_why_packet *p, struct sxdp_why_verdict *v);

/* An entry of the store that covers the packet. */
struct sxdp_why_entry {
	const struct sxdp_store_entry *e;	/* as stored (its strings: during the call) */
	/*
	 * A blocked prefix entry: where the live maps hold what covers the
	 * packet, the key it was expanded to ("2001:db8:4::/48") or the
	 * IPv4 prefix table's word on the address; "" otherwise.
	 */
	char in_maps[96];
};

/*
 * @cb for each entry of @list, blocked or allowed, that covers @p: its
 * source, every prefix holding its source (longest first), then the
 * service and the flow of its destination and ports when given; where
 * the maps of @h hold them by @r's config. 0, @cb's nonzero return, or
 * -errno.
 */
int sxdp_why_entries(struct sxdp_store *s, const char *list, struct sxdp_handle *h,
		     const struct sxdp_iface_report *r, const struct sxdp_why_packet *p,
		     int (*cb)(const struct sxdp_why_entry *w, void *ctx), void *ctx);

#endif /* SIEVE_XDP_REPORT_H */
