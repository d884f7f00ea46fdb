/* SPDX-License-Identifier: GPL-2.0 */
/*
 * userspace/conf: sieve.conf(5), the settings sieve and sieve-agent share.
 * settings.c holds every setting in one table and the one order in which
 * their sources win (settings.h); config.c reads the file (inih) into
 * struct sconf_config. Both programs link these two files and nothing
 * else of the agent's, so the store the CLI's commands change is the one
 * the agent restores, and `sieve xdp ... --fleet` publishes to the Redis
 * the agents follow. Its names are sconf_ (SCONF_): the agent's own are
 * sagent_, the loader's sxdp_.
 */
#ifndef SIEVE_CONF_H
#define SIEVE_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <net/if.h>

#include "settings.h"
#include "store.h"

#define SCONF_CONFIG_FILE	"/etc/sieve/sieve.conf"
#define SCONF_MAX_FILTERS	64
#define SCONF_NAME_MAX		64
#define SCONF_MAX_FLEET_LISTS	16
#define SCONF_MAX_NEVER_BLOCK	64
#define SCONF_MAX_FEEDS	32
#define SCONF_MAX_ATTACH	32
/* A URL fits on one line of the file (config.c: 198 characters). */
#define SCONF_URL_MAX		200

/*
 * [feed NAME]: a blocklist fetched by URL every @interval_s and loaded
 * as origin NAME of @list (userspace/sources/feeds.h applies the rules).
 */
struct sconf_feed_config {
	char name[SXDP_LIST_NAME_MAX + 1];	/* the origin of its entries */
	char url[SCONF_URL_MAX];
	char list[SXDP_LIST_NAME_MAX + 1];
	enum sxdp_format format;
	uint32_t interval_s;
	uint32_t timeout_s;		/* a fetch's whole transfer */
	uint64_t min_entries;		/* fewer: refused; 0 lets it empty the origin */
	uint32_t max_shrink_ppm;	/* a shrink past this share is refused; 10^6: any */
	int line;			/* its section's line, for messages */
};

/* [attach IFACE]: what the agent attaches when it is not attached so. */
struct sconf_attach_config {
	char iface[IF_NAMESIZE];
	char list[SXDP_LIST_NAME_MAX + 1];
	char backend[48];		/* as --backend: "" the default, bloom-map, blocked, filter:NAME */
	char mode[8];			/* "" native where the driver has it, native, generic */
	int line;
};

#define SCONF_MAX_CS_LISTS	16
#define SCONF_MAX_CS_ORIGINS	16
/* A CrowdSec origin or type word: [A-Za-z0-9_.:-], at most this long. */
#define SCONF_CS_WORD_MAX	32
/*
 * Whether @len bytes at @s are a CrowdSec origin or type word: 1 to
 * SCONF_CS_WORD_MAX of [A-Za-z0-9_.:-]. The one rule for [crowdsec]'s
 * settings and the LAPI's replies (a sieve origin and a metric label).
 */
bool sconf_cs_word_ok(const char *s, size_t len);
#define SCONF_MAX_CS_TYPES	8

/* [crowdsec] scopes: a mask of these. */
enum { SCONF_CS_SCOPE_IP = 1, SCONF_CS_SCOPE_RANGE = 2 };

/*
 * The settings of sieve.conf(5), one field each. Their names, sections
 * and defaults, and the order of their sources, are settings.c's table
 * (settings.h); the man page describes them (tests/unit/man_test.sh
 * checks it against the table); config.c's comment gives each one's
 * syntax and range.
 */
struct sconf_config {
	char state_dir[4096];
	uint32_t expire_interval_ms;
	enum sxdp_store_sync store_sync;
	bool metrics_on;
	char metrics_addr[64];		/* numeric: "127.0.0.1", "::1" */
	uint16_t metrics_port;
	uint32_t metrics_refresh_ms;	/* a scrape's snapshot is this fresh; 0: every scrape */
	uint32_t save_interval_s;	/* 0: only at stop */
	unsigned int nr_persistent;
	char persistent[SCONF_MAX_FILTERS][SCONF_NAME_MAX];
	struct sconf_fleet_config {
		bool on;			/* a redis address was given */
		char host[256];			/* a name or address; "" if unix */
		uint16_t port;
		char unix_path[108];		/* sun_path */
		char user[128];			/* "" : the default user */
		char password_file[4096];	/* "" : no AUTH */
		unsigned int nr_lists;
		char lists[SCONF_MAX_FLEET_LISTS][SXDP_LIST_NAME_MAX + 1];
		uint32_t retry_max_ms;
		uint64_t stream_maxlen;
		/* Shortest prefix lengths the fleet may block / allow: [0] IPv4, [1] IPv6. */
		uint8_t broadest_block[2], broadest_allow[2];
		unsigned int nr_never_block;
		struct sieve_xdp_key never_block[SCONF_MAX_NEVER_BLOCK];	/* prefixes */
	} fleet;
	/* The sections that repeat, in the file's order. */
	unsigned int nr_feeds, nr_attach;
	struct sconf_feed_config feeds[SCONF_MAX_FEEDS];
	struct sconf_attach_config attach[SCONF_MAX_ATTACH];

	struct sconf_crowdsec_config {
		bool on;			/* lapi_url was given */
		char lapi_url[512];		/* http://HOST:PORT[/PATH] or https:// */
		char api_key_file[4096];
		unsigned int nr_lists;
		char lists[SCONF_MAX_CS_LISTS][SXDP_LIST_NAME_MAX + 1];
		uint32_t update_frequency_ms;
		unsigned int scopes;		/* SCONF_CS_SCOPE_* */
		unsigned int nr_types;
		char types[SCONF_MAX_CS_TYPES][SCONF_CS_WORD_MAX + 1];
		/* Taken or skipped; none taken: every origin not skipped is taken. */
		unsigned int nr_origins;
		struct sconf_cs_origin {
			char name[SCONF_CS_WORD_MAX + 1];
			bool skip;		/* written !NAME */
		} origins[SCONF_MAX_CS_ORIGINS];
	} crowdsec;
	/* Where each value came from, and the file read (settings.h). */
	struct sconf_origin origin[SCONF_NR_SETTINGS];
	struct sconf_config_file file;
};

/* config.c: the file's reader (the order of sources: settings.c). */
void sconf_config_defaults(struct sconf_config *c);
/* -EINVAL with "FILE:LINE: reason" in err; -errno if the file cannot be read. */
int sconf_config_load(const char *path, struct sconf_config *c, char *err, size_t errlen);
/* The settings that repeat, for `sieve agent --check` (config.c). */
void sconf_config_print_sections(FILE *f, const struct sconf_config *c);
/* max_shrink's parser: a fraction 0 to 1 or a percentage to 100%; -EINVAL. */
int sconf_parse_share(const char *v, uint32_t *ppm);
/* One value of setting @id (enum sconf_setting_id) read as the file's: -EINVAL, reason in @err. */
int sconf_config_set(struct sconf_config *c, int id, const char *value, char *err,
		      size_t errlen);

/*
 * The first line of secret file @path (password_file, api_key_file) into
 * @buf, its owner and mode checked on the file opened, not only when the
 * settings were read: they may have changed since, or the path may name
 * another file now. 0; -EACCES if it is not a regular file of the agent's
 * own of mode 0600 or stricter; -errno if unreadable. @what names it in @err.
 */
int sconf_read_secret(const char *what, const char *path, char *buf, size_t len, char *err,
		       size_t errlen);

#endif /* SIEVE_CONF_H */
