/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metrics.c's insides, for its tests: what one scrape gathered, and the
 * text made of it. A scrape reads everything first (store, pins,
 * /dev/sieve), then writes the families one after another: the
 * exposition format wants every sample of a family together, and a family
 * spans the interfaces, lists and filters.
 */
#ifndef SIEVE_AGENT_METRICS_H
#define SIEVE_AGENT_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/sieve.h>

#include "agent.h"
#include "report.h"
#include "store.h"

/* Entries of one list, one kind and one origin (store.h's sxdp_store_count). */
struct sagent_mx_count {
	bool allow;
	unsigned int kind;
	char *origin;
	uint64_t count;
};

/* One list of the store. */
struct sagent_mx_list {
	char name[SXDP_LIST_NAME_MAX + 1];
	uint64_t version;
	const struct sagent_mx_count *counts;
	size_t ncounts;
};

/* One attachment of this network namespace, as its pins showed it. */
struct sagent_mx_iface {
	struct sxdp_attachment a;	/* iface, list: the store's record */
	bool read;			/* the pinned maps were read: @r is valid */
	struct sxdp_iface_report r;	/* as `sieve xdp status` reads it */
};

/* One list the fleet follows. */
struct sagent_mx_fleet_list {
	const char *name;
	uint64_t applied[SXDP_NR_LIST_OPS], skipped[SAGENT_NR_SKIPS], resyncs;
	uint64_t last_ms, last_seq;	/* 0: nothing applied from the stream yet */
	int64_t lag_ms;
};

/* One [feed NAME] (agent.h's struct sagent_feed_stats, copied). */
struct sagent_mx_feed {
	char name[SXDP_LIST_NAME_MAX + 1], list[SXDP_LIST_NAME_MAX + 1];
	int64_t last_success, last_attempt;	/* Unix seconds; 0 none yet */
	long last_status;
	uint64_t entries;
	uint64_t refreshes[SSRC_FEED_REFUSED + 1], refusals[SSRC_FEED_NR_REFUSALS];
};

/* The agent's own counters, loaded once a scrape. */
struct sagent_mx_agent {
	uint64_t rebuilds, rebuild_ns, expired, expire_runs, restores, adoptions;
	uint64_t snapshot_saves, errors;
	uint64_t metrics_refreshes;	/* the server's snapshots gathered */
	int64_t started_at;
	struct {
		bool on, connected;
		uint64_t connects;
		unsigned int nr_lists;
		struct sagent_mx_fleet_list l[SCONF_MAX_FLEET_LISTS];
	} fleet;
	unsigned int nr_feeds;
	struct sagent_mx_feed feeds[SCONF_MAX_FEEDS];

	struct {
		bool on, up;
		int64_t last_poll_ms;		/* 0: no reply read yet */
		uint64_t polls, resyncs, failures;
		unsigned int nr_origins;	/* o[0] (no origin) and these */
		struct {
			const char *name;
			uint64_t applied[2], skipped[SCS_NR_SKIPS];
		} o[SCS_MAX_ORIGINS + 1];
	} crowdsec;
};

struct sagent_mx_scrape {
	bool store_up;
	const struct sagent_mx_list *lists;
	size_t nlists;
	const struct sagent_mx_iface *ifaces;
	size_t nifaces;
	const struct sagent_mx_agent *agent;	/* NULL: no agent (a test driver) */
	bool dev_up;				/* /dev/sieve opened and listed */
	const struct sieve_info *filters;
	size_t nfilters;
	/*
	 * The store's origin names by per-origin counter slot (sieve_xdp.h);
	 * NULL: a slot no origin has. NULL as a whole: none read.
	 */
	char *const *origins;
};

/* The exposition of @s into @f; -EIO if @f failed. */
int sagent_metrics_format(FILE *f, const struct sagent_mx_scrape *s);
/* The port a started server listens on (the one the kernel chose for port 0). */
uint16_t sagent_metrics_port(const struct sagent_metrics *m);
/* Drops the cached entry counts (tests: a store that vanished and came back). */
void sagent_metrics_forget(void);

#endif /* SIEVE_AGENT_METRICS_H */
