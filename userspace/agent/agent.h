/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sieve agent: the long-running process of a host (`sieve agent`). It
 * restores enforcement from the store at start (adopting pins that match),
 * runs expiry every expire_interval, saves and restores the /dev/sieve
 * filters named persistent, follows interfaces that come and go
 * (rtnetlink), and serves metrics. Enforcement never depends on it: the
 * pinned programs and maps keep dropping when it stops or crashes.
 *
 * It reads sieve.conf with userspace/conf/ (conf.h), as sieve's commands
 * do, and the fleet's lists with userspace/fleet/ (fleet.h); its command
 * line is the CLI's table (userspace/cli/agent_command.c).
 *
 * Modules (one file each, one job):
 *   main.c     sieve-agent: the agent, or the CLI's __publish (publish.c)
 *   agent.c    main loop: signals (SIGHUP reload, SIGTERM stop), timers,
 *              sd_notify, logging
 *   restore.c  attachments from the store: adopt or re-attach
 *   netlink.c  rtnetlink: interfaces that vanish and come back
 *   filters.c  persistent /dev/sieve filters: snapshots under the state dir
 *   metrics.c  Prometheus text on HTTP (libmicrohttpd)
 *   fleet.c    following the fleet's lists: resync, XREAD, reconnect
 *   feeds.c    [feed NAME]: each feed refreshed on its interval
 *              (userspace/sources/feeds.h)
 *   declared.c [attach IFACE]: what the file declares, attached

 *   crowdsec.c following a CrowdSec Local API's decision stream
 *   publish.c  `sieve xdp ... --fleet`'s publishing (fleet.h)
 */
#ifndef SIEVE_AGENT_H
#define SIEVE_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "feeds.h"

#include "crowdsec.h"
#include "ops.h"
#include "store.h"

/* Why something read from Redis was skipped. */
enum sagent_fleet_skip {
	SAGENT_SKIP_UNPARSEABLE, SAGENT_SKIP_WRONG_TYPE, SAGENT_SKIP_TOO_LONG,
	SAGENT_SKIP_REFUSED,	/* outside this host's [fleet] limits */
	SAGENT_NR_SKIPS,
};

/* One followed list (fleet.c writes, the metrics thread reads). */
struct sagent_fleet_list_stats {
	atomic_uint_fast64_t applied[SXDP_NR_LIST_OPS];
	atomic_uint_fast64_t skipped[SAGENT_NR_SKIPS];
	atomic_uint_fast64_t resyncs;
	atomic_uint_fast64_t last_ms, last_seq;	/* the last applied stream id */
	atomic_int_fast64_t lag_ms;		/* when it was applied, minus its time */
};

/*
 * The fleet's state. @lists and @nr_lists are set before the fleet's
 * thread first starts and never change after (a reload that changes the
 * lists takes effect at the next start), so the metrics thread reads them
 * without a lock.
 */
struct sagent_fleet_stats {
	bool on;
	unsigned int nr_lists;
	char lists[SCONF_MAX_FLEET_LISTS][SXDP_LIST_NAME_MAX + 1];
	atomic_bool connected;
	atomic_uint_fast64_t connects;		/* sessions that reached Redis and synced */
	struct sagent_fleet_list_stats l[SCONF_MAX_FLEET_LISTS];
};

/* One [feed NAME] (feeds.c writes, the metrics thread reads). */
struct sagent_feed_stats {
	char name[SXDP_LIST_NAME_MAX + 1];
	char list[SXDP_LIST_NAME_MAX + 1];
	atomic_int_fast64_t last_success;	/* Unix seconds: loaded or unchanged; 0 none yet */
	atomic_int_fast64_t last_attempt;
	atomic_long last_status;		/* the last response's HTTP status; 0 none, file:// */
	atomic_uint_fast64_t entries;		/* the origin's entries in the store */
	atomic_uint_fast64_t refreshes[SSRC_FEED_REFUSED + 1];	/* by enum ssrc_feed_outcome */
	atomic_uint_fast64_t refusals[SSRC_FEED_NR_REFUSALS];
};

/*
 * The feeds in force. A reload changes them (feeds.c, on its thread):
 * @lock guards @nr and the names against the metrics thread.
 */
struct sagent_feeds_stats {
	pthread_mutex_t lock;
	unsigned int nr;
	struct sagent_feed_stats f[SCONF_MAX_FEEDS];
};

/* One CrowdSec origin's decisions (crowdsec.c writes, the metrics thread reads). */
struct sagent_cs_origin_stats {
	char name[SCONF_CS_WORD_MAX + 1];	/* written before nr_origins counts it */
	atomic_uint_fast64_t applied[2];	/* [0] new (blocks), [1] deleted (unblocks) */
	atomic_uint_fast64_t skipped[SCS_NR_SKIPS];
};

/*
 * The CrowdSec follower's state. o[0] counts the decisions of no origin
 * that could be named (and of origins past the table); o[1..] are named
 * as they first come, never renamed: the metrics thread reads
 * @nr_origins (acquire) and the names below it without a lock.
 */
struct sagent_crowdsec_stats {
	bool on;
	atomic_bool up;				/* the last request got a reply read whole */
	atomic_int_fast64_t last_poll_ms;	/* its wall-clock time */
	atomic_uint_fast64_t polls, resyncs;
	atomic_uint_fast64_t failures;		/* requests that failed, replies refused */
	atomic_uint nr_origins;
	struct sagent_cs_origin_stats o[SCS_MAX_ORIGINS + 1];
};

/* What the agent itself did, for the metrics (read from the HTTP thread). */
struct sagent_stats {
	atomic_uint_fast64_t rebuilds;		/* generations the agent built */
	atomic_uint_fast64_t rebuild_ns;	/* their time */
	atomic_uint_fast64_t expired;		/* entries removed by expiry */
	atomic_uint_fast64_t expire_runs;
	atomic_uint_fast64_t restores;		/* attachments re-attached */
	atomic_uint_fast64_t adoptions;		/* attachments adopted as they ran */
	atomic_uint_fast64_t snapshot_saves;
	atomic_uint_fast64_t errors;
	int64_t started_at;			/* Unix seconds */
	struct sagent_fleet_stats fleet;
	struct sagent_feeds_stats feeds;
	struct sagent_crowdsec_stats crowdsec;
};

/* metrics.c: an HTTP server on its own thread; stats may be updated meanwhile. */
struct sagent_metrics;
int sagent_metrics_start(const struct sconf_config *c, const struct sagent_stats *stats,
			 struct sagent_metrics **m, char *err, size_t errlen);
void sagent_metrics_stop(struct sagent_metrics *m);
/* The whole exposition, malloc'd (what GET /metrics returns). */
int sagent_metrics_render(const struct sconf_config *c, const struct sagent_stats *stats,
			  char **text, size_t *len);

/*
 * filters.c: the persistent /dev/sieve filters. Restore creates each one
 * named in @c that has a snapshot under STATE_DIR/filters/ and is not in
 * the module yet (a filter already there is left as it is); save exports
 * each to a temporary file, fsyncs it and renames it over the old one.
 * Errors of one filter are counted and logged, and do not stop the others.
 */
int sagent_filters_restore(const struct sconf_config *c, struct sagent_stats *stats);
int sagent_filters_save(const struct sconf_config *c, struct sagent_stats *stats);

/*
 * The running agent (agent.c), one per process: what its modules share.
 * Only the main loop's thread touches it, except @stats (atomics, read by
 * the metrics thread).
 */
struct sxdp_store;
struct sagent {
	struct sconf_config cfg;
	struct sxdp_store *store;	/* opened once, at start */
	struct sagent_stats stats;
	int64_t start_ns;		/* CLOCK_MONOTONIC at start */
	struct sagent_metrics *metrics;	/* NULL until metrics.c is merged */
	struct sagent_fleet *fleet;	/* NULL: no [fleet] */
	struct sagent_feeds *feeds;	/* NULL: not started */

	struct sagent_crowdsec *crowdsec;	/* NULL: no [crowdsec] */
};

/* Logging (agent.c): one line on stderr, a level word first (and <N> under the journal). */
enum { SAGENT_ERR = 3, SAGENT_WARNING = 4, SAGENT_INFO = 6 };
void sagent_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* CLOCK_MONOTONIC in ns. */
int64_t sagent_now_ns(void);

/* What a restore pass found (restore.c). */
struct sagent_restore_result {
	unsigned int adopted, reattached, waiting, failed;
};

/*
 * restore.c. Every attachment of this network namespace: adopted (its pins
 * run on this interface with the recorded settings: brought to the store's
 * version, no rebuild if in step), re-attached with the recorded settings
 * (pins gone, as after a reboot), or waited for (the interface does not
 * exist: netlink brings it). @verbose logs every adoption too.
 */
void sagent_restore_all(struct sagent *ag, bool verbose, struct sagent_restore_result *r);
/* At start, before the restore: the pins of namespaces that are gone (sxdp_prune). */
void sagent_prune(struct sagent *ag);
/*
 * The periodic check (every expire_interval, restore.c): every attachment
 * of this namespace whose interface exists is brought back to enforcing
 * what the store holds: maps behind the store rebuilt, a vanished
 * /dev/sieve filter made again, pins or a link that went re-attached. A
 * failure is logged once per incident, and its end.
 */
void sagent_check_all(struct sagent *ag);
/* netlink.c's events: an interface appeared (or changed), or went away. */
void sagent_link_up(struct sagent *ag, const char *ifname);
void sagent_link_gone(struct sagent *ag, const char *ifname);

/*
 * netlink.c: an rtnetlink socket of this namespace for RTMGRP_LINK
 * (nonblocking); sagent_netlink_read() handles what is queued and, when
 * the kernel dropped events (ENOBUFS), runs a restore pass instead.
 */
int sagent_netlink_open(char *err, size_t errlen);
void sagent_netlink_read(struct sagent *ag, int fd);

/*
 * fleet.c: following the lists of cfg.fleet (a thread of its own, with its
 * own store connection and one Redis connection). Start does nothing when
 * there is no [fleet]; stop joins the thread (a blocked read is woken).
 */
struct sagent_fleet;
int sagent_fleet_start(struct sagent *ag, struct sagent_fleet **fp, char *err, size_t errlen);
void sagent_fleet_stop(struct sagent_fleet *f);

/*
 * feeds.c: the [feed NAME] sections, refreshed on their intervals by a
 * thread of their own (with its own store connection); each refresh is
 * ssrc_feed_refresh(). Start refreshes every feed at once; reload hands
 * the thread the new sections (a feed kept by name keeps its validators,
 * its counters and its schedule); stop aborts a fetch in flight (within
 * about a second) and joins it.
 */
struct sagent_feeds;
int sagent_feeds_start(struct sagent *ag, struct sagent_feeds **fp, char *err, size_t errlen);
void sagent_feeds_reload(struct sagent_feeds *f, const struct sconf_config *c);
void sagent_feeds_stop(struct sagent_feeds *f);

/*
 * declared.c: each [attach IFACE] whose interface exists and that the
 * store does not record as declared (list, and backend and mode where
 * given) is attached as `sieve xdp attach` would; the record then
 * restores it as any other. At start, at every reload and periodic check,
 * and when the interface comes (netlink). A failure is logged once per
 * incident.
 */
void sagent_attach_declared(struct sagent *ag, const char *only_iface);

/*
 * crowdsec.c: following cfg.crowdsec's Local API (a thread of its own,
 * with its own store connection). Start does nothing without [crowdsec];
 * stop joins the thread (a wait between polls is woken; a request under
 * way ends within its timeout).
 */
struct sagent_crowdsec;
int sagent_crowdsec_start(struct sagent *ag, struct sagent_crowdsec **cp, char *err,
			  size_t errlen);
void sagent_crowdsec_stop(struct sagent_crowdsec *c);

/*
 * publish.c, in sieve-agent: `sieve-agent __publish CONFIG LIST OP EXPIRES
 * ORIGIN ENTRY...` (argv from __publish on): loads CONFIG, publishes the
 * entries as OP (the stream's word) with EXPIRES (Unix seconds, 0 never,
 * "keep" when no --ttl was given: sfleet_publish(), fleet.h),
 * prints what `sieve xdp ... --fleet` prints; an exit code.
 */
int sagent_publish_main(int argc, char **argv);

#endif /* SIEVE_AGENT_H */
