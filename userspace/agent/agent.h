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
 *   redis.c    the fleet's data model in Redis (hiredis): connect, publish
 *   fleet.c    following the fleet's lists: resync, XREAD, reconnect
 */
#ifndef SIEVE_AGENT_H
#define SIEVE_AGENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "settings.h"
#include "store.h"

#define SAGENT_CONFIG_FILE	"/etc/sieve/sieve.conf"
#define SAGENT_MAX_FILTERS	64
#define SAGENT_NAME_MAX		64
#define SAGENT_MAX_FLEET_LISTS	16
#define SAGENT_MAX_NEVER_BLOCK	64

/*
 * The settings of sieve.conf(5), one field each; their defaults, and the
 * order of their sources, are settings.c's table (settings.h).
 *
 *   [agent]   state_dir = /var/lib/sieve        the store and the snapshots
 *             expire_interval = 10s             s, m, h units; 1s to 1h
 *   [store]   sync = full                       full or normal (enum sxdp_store_sync)
 *   [metrics] listen = 127.0.0.1:9477           ADDR:PORT, [V6]:PORT, or off
 *             refresh_interval = 1s             scrapes' snapshot; 1s to 1h
 *   [filters] persistent = NAME NAME ...        /dev/sieve filters to keep
 *             save_interval = 5m                0 = only at stop
 *   [fleet]   redis = HOST:PORT | unix:PATH     no [fleet]: no fleet
 *             user = NAME                       Redis ACL user (AUTH)
 *             password_file = FILE              ours, mode 0600 or stricter
 *             lists = NAME NAME ...             lists to follow
 *             retry_max = 30s                   capped reconnect backoff
 *             stream_maxlen = 1000000           what publishers trim to
 *             broadest_block = /8 /12           per family: IPv4, IPv6
 *             broadest_allow = /16 /32
 *             never_block = PREFIX ...          the host's management nets
 */
struct sagent_config {
	char state_dir[4096];
	uint32_t expire_interval_ms;
	enum sxdp_store_sync store_sync;
	bool metrics_on;
	char metrics_addr[64];		/* numeric: "127.0.0.1", "::1" */
	uint16_t metrics_port;
	uint32_t metrics_refresh_ms;	/* a scrape's snapshot is this fresh; 0: every scrape */
	uint32_t save_interval_s;	/* 0: only at stop */
	unsigned int nr_persistent;
	char persistent[SAGENT_MAX_FILTERS][SAGENT_NAME_MAX];
	struct sagent_fleet_config {
		bool on;			/* a redis address was given */
		char host[256];			/* a name or address; "" if unix */
		uint16_t port;
		char unix_path[108];		/* sun_path */
		char user[128];			/* "" : the default user */
		char password_file[4096];	/* "" : no AUTH */
		unsigned int nr_lists;
		char lists[SAGENT_MAX_FLEET_LISTS][SXDP_LIST_NAME_MAX + 1];
		uint32_t retry_max_ms;
		uint64_t stream_maxlen;
		/* Shortest prefix lengths the fleet may block / allow: [0] IPv4, [1] IPv6. */
		uint8_t broadest_block[2], broadest_allow[2];
		unsigned int nr_never_block;
		struct sieve_xdp_key never_block[SAGENT_MAX_NEVER_BLOCK];	/* prefixes */
	} fleet;
	/* Where each value came from, and the file read (settings.h). */
	struct sagent_origin origin[SAGENT_NR_SETTINGS];
	struct sagent_config_file file;
};

/* What the fleet's changes say (the stream's op field). */
enum sagent_fleet_op {
	SAGENT_FLEET_BLOCK, SAGENT_FLEET_UNBLOCK, SAGENT_FLEET_ALLOW, SAGENT_FLEET_DISALLOW,
	SAGENT_FLEET_NR_OPS,
};
/* The stream's word for @op. */
static inline const char *sagent_fleet_op_name(enum sagent_fleet_op op)
{
	static const char *const names[SAGENT_FLEET_NR_OPS] = {
		[SAGENT_FLEET_BLOCK] = "block", [SAGENT_FLEET_UNBLOCK] = "unblock",
		[SAGENT_FLEET_ALLOW] = "allow", [SAGENT_FLEET_DISALLOW] = "disallow",
	};

	return op < SAGENT_FLEET_NR_OPS ? names[op] : "unknown";
}

/* Why something read from Redis was skipped. */
enum sagent_fleet_skip {
	SAGENT_SKIP_UNPARSEABLE, SAGENT_SKIP_WRONG_TYPE, SAGENT_SKIP_TOO_LONG,
	SAGENT_SKIP_REFUSED,	/* outside this host's [fleet] limits */
	SAGENT_NR_SKIPS,
};

/* One followed list (fleet.c writes, the metrics thread reads). */
struct sagent_fleet_list_stats {
	atomic_uint_fast64_t applied[SAGENT_FLEET_NR_OPS];
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
	char lists[SAGENT_MAX_FLEET_LISTS][SXDP_LIST_NAME_MAX + 1];
	atomic_bool connected;
	atomic_uint_fast64_t connects;		/* sessions that reached Redis and synced */
	struct sagent_fleet_list_stats l[SAGENT_MAX_FLEET_LISTS];
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
};

/* config.c: the file's reader (the order of sources: settings.c). */
void sagent_config_defaults(struct sagent_config *c);
/* -EINVAL with "FILE:LINE: reason" in err; -errno if the file cannot be read. */
int sagent_config_load(const char *path, struct sagent_config *c, char *err, size_t errlen);
/* One value of setting @id (enum sagent_setting_id) read as the file's: -EINVAL, reason in @err. */
int sagent_config_set(struct sagent_config *c, int id, const char *value, char *err,
		      size_t errlen);

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
	struct sxdp_store *store;	/* opened once, at start */
	struct sagent_stats stats;
	int64_t start_ns;		/* CLOCK_MONOTONIC at start */
	struct sagent_metrics *metrics;	/* NULL until metrics.c is merged */
	struct sagent_fleet *fleet;	/* NULL: no [fleet] */
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
 * redis.c: the Redis side of the fleet, for the agent and for publishers.
 * A connection to @f's server, authenticated (the password file is read
 * again each time); NULL with the reason in @err.
 */
struct redisContext;
struct redisContext *sagent_redis_connect(const struct sagent_fleet_config *f, int timeout_ms,
					  char *err, size_t errlen);
/* "host:port" or "unix:path", for messages. */
const char *sagent_redis_name(const struct sagent_fleet_config *f, char *buf, size_t len);
/* The keys of list @list: its blocklist or allowlist set, and its stream. */
void sagent_redis_set_key(const char *list, bool allow, char *buf, size_t len);
void sagent_redis_stream_key(const char *list, char *buf, size_t len);
/*
 * Publishes @keys as @op on @list (`sieve xdp ... --fleet`): per batch of
 * entries one MULTI/EXEC of the set's change and the stream's records, so
 * the two never disagree. @expires_at (block and allow only): Unix seconds,
 * 0 never, SAGENT_EXPIRES_KEEP none given. The re-ban rule of the local store
 * (store.c RE_BAN_EXPIRY), applied by Redis per entry: a member keeps the
 * later of its score and @expires_at (never is the latest), keeps its score
 * with SAGENT_EXPIRES_KEEP, and a member past its score counts as absent (a
 * new one gets @expires_at, never for SAGENT_EXPIRES_KEEP). Each stream
 * record carries the score its set then holds.
 */
#define SAGENT_EXPIRES_KEEP	(-1)
int sagent_fleet_publish(const struct sagent_fleet_config *f, const char *list,
			 enum sagent_fleet_op op, const struct sxdp_list *keys, int64_t expires_at,
			 const char *origin, char *err, size_t errlen);

/*
 * fleet.c: following the lists of cfg.fleet (a thread of its own, with its
 * own store connection and one Redis connection). Start does nothing when
 * there is no [fleet]; stop joins the thread (a blocked read is woken).
 */
struct sagent_fleet;
int sagent_fleet_start(struct sagent *ag, struct sagent_fleet **fp, char *err, size_t errlen);
void sagent_fleet_stop(struct sagent_fleet *f);

/*
 * fleet_rules.c. A sorted set's score as an expiry: false if not a number;
 * *@expired if at or before @now (then *@expires is @now), else *@expires
 * is Unix seconds rounded up, 0 for +inf (never), capped at 4e18.
 */
bool sagent_fleet_parse_score(const char *s, int64_t now, int64_t *expires, bool *expired);
/*
 * Why @f's limits refuse the fleet's block (or allow, @allow) of @key, or
 * NULL if they take it: broader than broadest_block/broadest_allow for
 * its family, a block touching a never_block prefix, or an allow of what
 * is not a source or a prefix.
 */
const char *sagent_fleet_refused(const struct sagent_fleet_config *f,
				 const struct sieve_xdp_key *key, bool allow);

/* The `sieve agent` command (agent.c). */
int sagent_main(int argc, char **argv);

/*
 * Two programs. sieve, the CLI, links the XDP loader but none of the
 * agent's libraries (libmicrohttpd, libsystemd, hiredis, inih), so that a
 * command starts as fast as ipset's; sieve-agent, installed beside it, is
 * the agent and the fleet's publisher. `sieve agent ARGS` execs
 * `sieve-agent ARGS`; `sieve xdp block ... --fleet` execs
 * `sieve-agent __publish` (publish.c) with the entries it parsed.
 */
#define SAGENT_PROGRAM		"sieve-agent"
#define SAGENT_PUBLISH_CMD	"__publish"
/* Its EXPIRES without --ttl: an entry there keeps its expiry. */
#define SAGENT_PUBLISH_KEEP	"keep"

/*
 * command.c: the `agent` command's table, linked into both programs, so
 * that `sieve agent --help`, the completion and the man pages' test read
 * the options the agent parses. Its @run is sagent_run(), which each
 * program defines: sieve-agent runs the agent (agent.c), sieve execs
 * sieve-agent (userspace/cli/agent_exec.c).
 */
struct cli_command;
struct agent_opts {
	struct sagent_cmdline cl;	/* --config, --state-dir (settings.h) */
	bool check;
};
int sagent_run(const struct cli_command *cmd, int argc, char **argv);

/*
 * publish.c, in sieve-agent: `sieve-agent __publish CONFIG LIST OP EXPIRES
 * ORIGIN ENTRY...` (argv from __publish on): loads CONFIG, publishes the
 * entries as OP (the stream's word) with EXPIRES (Unix seconds, 0 never,
 * "keep" when no --ttl was given: sagent_fleet_publish()),
 * prints what `sieve xdp ... --fleet` prints; an exit code.
 */
int sagent_publish_main(int argc, char **argv);

#endif /* SIEVE_AGENT_H */
