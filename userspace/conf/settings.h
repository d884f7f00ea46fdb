/* SPDX-License-Identifier: GPL-2.0 */
/*
 * settings.c: every setting of sieve.conf(5) in one table, and the one
 * order in which its sources win, for sieve and sieve-agent alike:
 *
 *	the command line, then the environment, then sieve.conf, then the
 *	built-in default.
 *
 * Both programs link this file and config.c (the file's reader), so the
 * store the CLI's commands change is the one the agent restores, whatever
 * mix of --state-dir, SIEVE_STATE_DIR and state_dir is given. The file's
 * own path is chosen in the same order (--config, SIEVE_CONFIG,
 * /etc/sieve/sieve.conf). Each value keeps where it came from, which
 * `sieve agent --check` prints.
 */
#ifndef SIEVE_CONF_SETTINGS_H
#define SIEVE_CONF_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"	/* enum sxdp_store_sync */

/* The settings, in the order of the file's sections (sagent_settings[]). */
enum sagent_setting_id {
	SAGENT_STATE_DIR, SAGENT_EXPIRE_INTERVAL,			/* [agent] */
	SAGENT_STORE_SYNC,						/* [store] */
	SAGENT_LISTEN, SAGENT_REFRESH_INTERVAL,				/* [metrics] */
	SAGENT_PERSISTENT, SAGENT_SAVE_INTERVAL,			/* [filters] */
	SAGENT_REDIS, SAGENT_USER, SAGENT_PASSWORD_FILE, SAGENT_LISTS,	/* [fleet] */
	SAGENT_RETRY_MAX, SAGENT_STREAM_MAXLEN, SAGENT_BROADEST_BLOCK,
	SAGENT_BROADEST_ALLOW, SAGENT_NEVER_BLOCK,
	SAGENT_CS_LAPI_URL, SAGENT_CS_API_KEY_FILE, SAGENT_CS_LISTS,	/* [crowdsec] */
	SAGENT_CS_UPDATE_FREQUENCY, SAGENT_CS_SCOPES, SAGENT_CS_TYPES, SAGENT_CS_ORIGINS,
	SAGENT_NR_SETTINGS,
};

/*
 * One setting: its section and key, the environment variable and the
 * command-line option that override the file (NULL: none), and its default
 * as the file would write it ("": none), which sagent_config_defaults()
 * reads through the file's own parser.
 */
struct sagent_setting {
	const char *section, *key;
	const char *env, *option;
	const char *dflt;
	bool adds_up;		/* repeated lines add up (names, prefixes) */
};
extern const struct sagent_setting sagent_settings[SAGENT_NR_SETTINGS];

/* Where a value came from; the higher wins. */
enum sagent_source {
	SAGENT_FROM_DEFAULT,
	SAGENT_FROM_FILE,
	SAGENT_FROM_ENV,
	SAGENT_FROM_CMDLINE,
};

#define SAGENT_ORIGIN_LINES	8

struct sagent_origin {
	enum sagent_source from;
	/* FROM_FILE: the lines that set it (all of an adding-up key's, up to 8) */
	unsigned int nr_lines;
	int lines[SAGENT_ORIGIN_LINES];
	/* FROM_FILE, FROM_ENV, FROM_CMDLINE: the value as written, units and all */
	char text[200];
	/* FROM_ENV, FROM_CMDLINE: the file's line this value won over; 0: none */
	int over_line;
};

/* The file itself: its path and where that came from. */
struct sagent_config_file {
	char path[4096];
	enum sagent_source from;
	bool read;		/* false: the default file is not there, or was not needed */
};

/* What the command line gave: NULL for an option not given. */
struct sagent_cmdline {
	const char *config;			/* --config */
	const char *set[SAGENT_NR_SETTINGS];	/* by setting: [SAGENT_STATE_DIR] --state-dir */
};

struct sagent_config;

/* The index of [@section] @key in sagent_settings[], or -1. */
int sagent_setting_find(const char *section, const char *key);

/*
 * The settings in force: the file's path (--config, SIEVE_CONFIG, default),
 * the file (a missing default file means the defaults), then each setting's
 * environment variable and option over it. @need: a mask of (1 << id); the
 * file is read only if one of them is not given by the command line or the
 * environment (the CLI needs state_dir and sync; the agent all of them).
 * 0, or -errno with a one-line reason in @err ("FILE:LINE: ...",
 * "SIEVE_STATE_DIR=x: ...").
 */
#define SAGENT_NEED_ALL		((1u << SAGENT_NR_SETTINGS) - 1)
int sagent_settings_resolve(const struct sagent_cmdline *cl, unsigned int need,
			    struct sagent_config *c, char *err, size_t errlen);

/*
 * The store's folder by that order into @dir, and how its commits are
 * synced ([store] sync): what sieve's commands open.
 */
int sagent_store_settings(const struct sagent_cmdline *cl, char *dir, size_t len,
			  enum sxdp_store_sync *sync, char *err, size_t errlen);

/* The file's path by that order, and where it came from. */
const char *sagent_config_path(const struct sagent_cmdline *cl, enum sagent_source *from);

/*
 * `sieve agent --check`: every setting, grouped by section, as
 * "key = value  ; ORIGIN", values in the units they were written in.
 */
void sagent_settings_print(FILE *f, const struct sagent_config *c);

#endif /* SIEVE_CONF_SETTINGS_H */
