/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sieve agent: the long-running process of a host (`sieve agent`). It
 * restores enforcement from the store at start (adopting pins that match),
 * runs expiry every expire_interval, saves and restores the /dev/sieve
 * filters named persistent, follows interfaces that come and go
 * (rtnetlink), and serves metrics. Enforcement never depends on it: the
 * pinned programs and maps keep dropping when it stops or crashes.
 *
 * Modules (one file each, one job):
 *   config.c   sieve.conf (inih): struct sagent_config, FILE:LINE errors
 *   agent.c    main loop: signals (SIGHUP reload, SIGTERM stop), timers,
 *              sd_notify, logging
 *   restore.c  attachments from the store: adopt or re-attach
 *   netlink.c  rtnetlink: interfaces that vanish and come back
 *   filters.c  persistent /dev/sieve filters: snapshots under the state dir
 *   metrics.c  Prometheus text on HTTP (libmicrohttpd)
 */
#ifndef SIEVE_AGENT_H
#define SIEVE_AGENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SAGENT_CONFIG_FILE	"/etc/sieve/sieve.conf"
#define SAGENT_MAX_FILTERS	64
#define SAGENT_NAME_MAX		64

/*
 * The settings of sieve.conf(5), one field each; defaults in
 * sagent_config_defaults().
 *
 *   [agent]   state_dir = /var/lib/sieve        the store and the snapshots
 *             expire_interval = 10s             s, m, h units; 1s to 1h
 *   [metrics] listen = 127.0.0.1:9477           ADDR:PORT, [V6]:PORT, or off
 *   [filters] persistent = NAME NAME ...        /dev/sieve filters to keep
 *             save_interval = 5m                0 = only at stop
 */
struct sagent_config {
	char state_dir[4096];
	uint32_t expire_interval_ms;
	bool metrics_on;
	char metrics_addr[64];		/* numeric: "127.0.0.1", "::1" */
	uint16_t metrics_port;
	uint32_t save_interval_s;	/* 0: only at stop */
	unsigned int nr_persistent;
	char persistent[SAGENT_MAX_FILTERS][SAGENT_NAME_MAX];
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
};

/* config.c */
void sagent_config_defaults(struct sagent_config *c);
/* -EINVAL with "FILE:LINE: reason" in err; -errno if the file cannot be read. */
int sagent_config_load(const char *path, struct sagent_config *c, char *err, size_t errlen);

/* metrics.c: an HTTP server on its own thread; stats may be updated meanwhile. */
struct sagent_metrics;
int sagent_metrics_start(const struct sagent_config *c, const struct sagent_stats *stats,
			 struct sagent_metrics **m, char *err, size_t errlen);
void sagent_metrics_stop(struct sagent_metrics *m);
/* The whole exposition, malloc'd (what GET /metrics returns). */
int sagent_metrics_render(const struct sagent_config *c, const struct sagent_stats *stats,
			  char **text, size_t *len);

/*
 * filters.c: the persistent /dev/sieve filters. Restore creates each one
 * named in @c that has a snapshot under STATE_DIR/filters/ and is not in
 * the module yet (a filter already there is left as it is); save exports
 * each to a temporary file, fsyncs it and renames it over the old one.
 * Errors of one filter are counted and logged, and do not stop the others.
 */
int sagent_filters_restore(const struct sagent_config *c, struct sagent_stats *stats);
int sagent_filters_save(const struct sagent_config *c, struct sagent_stats *stats);

/*
 * The running agent (agent.c), one per process: what its modules share.
 * Only the main loop's thread touches it, except @stats (atomics, read by
 * the metrics thread).
 */
struct sxdp_store;
struct sagent {
	struct sagent_config cfg;
	const char *config_path;
	struct sxdp_store *store;	/* opened once, at start */
	struct sagent_stats stats;
	int64_t start_ns;		/* CLOCK_MONOTONIC at start */
	struct sagent_metrics *metrics;	/* NULL until metrics.c is merged */
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

/* The `sieve agent` command (agent.c). */
int sagent_main(int argc, char **argv);

#endif /* SIEVE_AGENT_H */
