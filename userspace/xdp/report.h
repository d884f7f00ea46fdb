/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One interface's blocklist as its pins show it now, read in one call
 * (report.c): what `sieve xdp status` prints and what the agent's metrics
 * export, so the two cannot read an interface two ways. The store's side
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

#endif /* SIEVE_XDP_REPORT_H */
