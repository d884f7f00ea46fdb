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

/* The settings, in the order of the file's sections (sconf_settings[]). */
enum sconf_setting_id {
	SCONF_STATE_DIR, SCONF_EXPIRE_INTERVAL,			/* [agent] */
	SCONF_STORE_SYNC,						/* [store] */
	SCONF_LISTEN, SCONF_REFRESH_INTERVAL,				/* [metrics] */
	SCONF_PERSISTENT, SCONF_SAVE_INTERVAL,			/* [filters] */
	SCONF_REDIS, SCONF_USER, SCONF_PASSWORD_FILE, SCONF_LISTS,	/* [fleet] */
	SCONF_RETRY_MAX, SCONF_STREAM_MAXLEN, SCONF_BROADEST_BLOCK,
	SCONF_BROADEST_ALLOW, SCONF_NEVER_BLOCK,
	SCONF_CS_LAPI_URL, SCONF_CS_API_KEY_FILE, SCONF_CS_LISTS,	/* [crowdsec] */
	SCONF_CS_UPDATE_FREQUENCY, SCONF_CS_SCOPES, SCONF_CS_TYPES, SCONF_CS_ORIGINS,
	SCONF_NR_SETTINGS,
};

/*
 * One setting: its section and key, the environment variable and the
 * command-line option that override the file (NULL: none), and its default
 * as the file would write it ("": none), which sconf_config_defaults()
 * reads through the file's own parser.
 */
struct sconf_setting {
	const char *section, *key;
	const char *env, *option;
	const char *dflt;
	bool adds_up;		/* repeated lines add up (names, prefixes) */
};
extern const struct sconf_setting sconf_settings[SCONF_NR_SETTINGS];

/* Where a value came from; the higher wins. */
enum sconf_source {
	SCONF_FROM_DEFAULT,
	SCONF_FROM_FILE,
	SCONF_FROM_ENV,
	SCONF_FROM_CMDLINE,
};

#define SCONF_ORIGIN_LINES	8

struct sconf_origin {
	enum sconf_source from;
	/* FROM_FILE: the lines that set it (all of an adding-up key's, up to 8) */
	unsigned int nr_lines;
	int lines[SCONF_ORIGIN_LINES];
	/* FROM_FILE, FROM_ENV, FROM_CMDLINE: the value as written, units and all */
	char text[200];
	/* FROM_ENV, FROM_CMDLINE: the file's line this value won over; 0: none */
	int over_line;
};

/* The file itself: its path and where that came from. */
struct sconf_config_file {
	char path[4096];
	enum sconf_source from;
	bool read;		/* false: the default file is not there, or was not needed */
};

/* What the command line gave: NULL for an option not given. */
struct sconf_cmdline {
	const char *config;			/* --config */
	const char *set[SCONF_NR_SETTINGS];	/* by setting: [SCONF_STATE_DIR] --state-dir */
};

struct sconf_config;

/* The index of [@section] @key in sconf_settings[], or -1. */
int sconf_setting_find(const char *section, const char *key);

/*
 * The settings in force: the file's path (--config, SIEVE_CONFIG, default),
 * the file (a missing default file means the defaults), then each setting's
 * environment variable and option over it. @need: a mask of (1 << id); the
 * file is read only if one of them is not given by the command line or the
 * environment (the CLI needs state_dir and sync; the agent all of them).
 * 0, or -errno with a one-line reason in @err ("FILE:LINE: ...",
 * "SIEVE_STATE_DIR=x: ...").
 */
#define SCONF_NEED_ALL		((1u << SCONF_NR_SETTINGS) - 1)
int sconf_settings_resolve(const struct sconf_cmdline *cl, unsigned int need,
			    struct sconf_config *c, char *err, size_t errlen);

/*
 * The store's folder by that order into @dir, and how its commits are
 * synced ([store] sync): what sieve's commands open.
 */
int sconf_store_settings(const struct sconf_cmdline *cl, char *dir, size_t len,
			  enum sxdp_store_sync *sync, char *err, size_t errlen);

/* The file's path by that order, and where it came from. */
const char *sconf_config_path(const struct sconf_cmdline *cl, enum sconf_source *from);

/*
 * `sieve agent --check`: every setting, grouped by section, as
 * "key = value  ; ORIGIN", values in the units they were written in.
 */
void sconf_settings_print(FILE *f, const struct sconf_config *c);

#endif /* SIEVE_CONF_SETTINGS_H */
