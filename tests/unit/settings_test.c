// SPDX-License-Identifier: GPL-2.0
/*
 * The one order of a setting's sources (userspace/conf/settings.c), which
 * sieve and sieve-agent both link: the command line, then the environment,
 * then sieve.conf, then the default, with where each value came from; the
 * defaults the table gives; and a file read only when a needed setting is
 * not given otherwise. SIEVE_STATE_DIR, SIEVE_STORE_SYNC and SIEVE_CONFIG
 * are set here and put back as they were.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "conf.h"

/* The environment as the case found it, put back at its end. */
struct saved_env {
	char *state_dir, *sync, *config;
};

static char *dup_env(const char *name)
{
	const char *v = getenv(name);

	return v ? strdup(v) : NULL;
}

static void env_save(struct saved_env *e)
{
	e->state_dir = dup_env("SIEVE_STATE_DIR");
	e->sync = dup_env("SIEVE_STORE_SYNC");
	e->config = dup_env("SIEVE_CONFIG");
	unsetenv("SIEVE_STATE_DIR");
	unsetenv("SIEVE_STORE_SYNC");
	unsetenv("SIEVE_CONFIG");
}

static void env_put(const char *name, char *v)
{
	if (v)
		setenv(name, v, 1);
	else
		unsetenv(name);
	free(v);
}

static void env_restore(struct saved_env *e)
{
	env_put("SIEVE_STATE_DIR", e->state_dir);
	env_put("SIEVE_STORE_SYNC", e->sync);
	env_put("SIEVE_CONFIG", e->config);
}

/* @text in a new file whose name goes to @path (removed by the caller). */
static int write_conf(char *path, const char *text)
{
	int fd;
	FILE *f;

	strcpy(path, "/tmp/sieve-settings-XXXXXX");
	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

/* The table's defaults are the values the agent always had. */
static void sieve_unit_settings_defaults(struct sieve_test *t)
{
	struct sconf_config c;
	int i;

	sconf_config_defaults(&c);
	CHECKF(t, !strcmp(c.state_dir, "/var/lib/sieve"), "state_dir %s", c.state_dir);
	/* A change reported done survives a power loss unless the operator says otherwise. */
	CHECKF(t, c.store_sync == SXDP_STORE_SYNC_FULL, "sync %d", (int)c.store_sync);
	CHECKF(t, c.expire_interval_ms == 10000 && c.metrics_refresh_ms == 1000 &&
	       c.save_interval_s == 300, "intervals %u ms, %u ms, %u s", c.expire_interval_ms,
	       c.metrics_refresh_ms, c.save_interval_s);
	CHECKF(t, c.metrics_on && !strcmp(c.metrics_addr, "127.0.0.1") && c.metrics_port == 9477,
	       "listen %s:%u", c.metrics_addr, c.metrics_port);
	CHECKF(t, !c.nr_persistent && !c.fleet.on && !c.fleet.nr_lists && !c.fleet.user[0] &&
	       !c.fleet.password_file[0] && !c.fleet.nr_never_block, "a list or the fleet set");
	CHECKF(t, c.fleet.retry_max_ms == 30000 && c.fleet.stream_maxlen == 1000000,
	       "retry_max %u ms, stream_maxlen %llu", c.fleet.retry_max_ms,
	       (unsigned long long)c.fleet.stream_maxlen);
	CHECKF(t, c.fleet.broadest_block[0] == 8 && c.fleet.broadest_block[1] == 12 &&
	       c.fleet.broadest_allow[0] == 16 && c.fleet.broadest_allow[1] == 32,
	       "broadest /%u /%u, /%u /%u", c.fleet.broadest_block[0], c.fleet.broadest_block[1],
	       c.fleet.broadest_allow[0], c.fleet.broadest_allow[1]);
	for (i = 0; i < SCONF_NR_SETTINGS; i++) {
		/* Each row is found by its own section and key, and starts as a default. */
		CHECKF(t, sconf_setting_find(sconf_settings[i].section, sconf_settings[i].key) == i,
		       "[%s] %s not found", sconf_settings[i].section, sconf_settings[i].key);
		CHECKF(t, c.origin[i].from == SCONF_FROM_DEFAULT, "%s not a default",
		       sconf_settings[i].key);
	}
}

/* state_dir: the file over the default, the environment over it, the command line over all. */
static void sieve_unit_settings_order(struct sieve_test *t)
{
	struct sconf_cmdline cl = { 0 };
	struct sconf_config *c = malloc(sizeof(*c));
	struct saved_env e;
	char path[64], err[512] = "";
	struct sconf_origin *o;
	int ret;

	if (!c || write_conf(path, "[agent]\nstate_dir = /file\nexpire_interval = 2m\n")) {
		CHECKF(t, 0, "setting up: %s", strerror(errno));
		free(c);
		return;
	}
	env_save(&e);
	o = &c->origin[SCONF_STATE_DIR];
	cl.config = path;
	ret = sconf_settings_resolve(&cl, SCONF_NEED_ALL, c, err, sizeof(err));
	CHECKF(t, !ret && !strcmp(c->state_dir, "/file") && o->from == SCONF_FROM_FILE &&
	       o->nr_lines == 1 && o->lines[0] == 2, "the file: %s (%s)", c->state_dir, err);
	CHECKF(t, !strcmp(c->origin[SCONF_EXPIRE_INTERVAL].text, "2m") &&
	       c->expire_interval_ms == 120000, "expire_interval as written: '%s'",
	       c->origin[SCONF_EXPIRE_INTERVAL].text);
	CHECKF(t, c->file.read && c->file.from == SCONF_FROM_CMDLINE, "the file's origin");

	setenv("SIEVE_STATE_DIR", "/env", 1);
	ret = sconf_settings_resolve(&cl, SCONF_NEED_ALL, c, err, sizeof(err));
	CHECKF(t, !ret && !strcmp(c->state_dir, "/env") && o->from == SCONF_FROM_ENV &&
	       o->over_line == 2, "the environment over the file: %s", c->state_dir);

	cl.set[SCONF_STATE_DIR] = "/cmd";
	ret = sconf_settings_resolve(&cl, SCONF_NEED_ALL, c, err, sizeof(err));
	CHECKF(t, !ret && !strcmp(c->state_dir, "/cmd") && o->from == SCONF_FROM_CMDLINE &&
	       o->over_line == 2, "the command line over all: %s", c->state_dir);

	/* An empty variable is not set; SIEVE_CONFIG names the file without --config. */
	setenv("SIEVE_STATE_DIR", "", 1);
	setenv("SIEVE_CONFIG", path, 1);
	cl = (struct sconf_cmdline){ 0 };
	ret = sconf_settings_resolve(&cl, SCONF_NEED_ALL, c, err, sizeof(err));
	CHECKF(t, !ret && !strcmp(c->state_dir, "/file") && c->file.from == SCONF_FROM_ENV,
	       "SIEVE_CONFIG's file: %s (%s)", c->state_dir, err);

	/* A bad value from the environment is refused, naming where it came from. */
	setenv("SIEVE_STATE_DIR", "relative", 1);
	ret = sconf_settings_resolve(&cl, SCONF_NEED_ALL, c, err, sizeof(err));
	CHECKF(t, ret == -EINVAL && strstr(err, "environment SIEVE_STATE_DIR: ") &&
	       strstr(err, "not an absolute path"), "a relative SIEVE_STATE_DIR: %d %s", ret, err);
	env_restore(&e);
	unlink(path);
	free(c);
}

/*
 * The CLI asks for state_dir and sync: both given by the environment, the
 * file is not read (a file broken elsewhere does not stop it), while the
 * agent, which needs every setting, reads it and refuses it.
 */
static void sieve_unit_settings_file_when_needed(struct sieve_test *t)
{
	struct sconf_cmdline cl = { 0 };
	struct sconf_config *c = malloc(sizeof(*c));
	char path[64], err[512] = "", dir[256] = "";
	enum sxdp_store_sync sync;
	struct saved_env e;
	int ret;

	if (!c || write_conf(path, "[agent]\nstate_dir = /file\n[metrics]\nlisten = nowhere\n")) {
		CHECKF(t, 0, "setting up: %s", strerror(errno));
		free(c);
		return;
	}
	env_save(&e);
	setenv("SIEVE_CONFIG", path, 1);
	ret = sconf_store_settings(&cl, dir, sizeof(dir), &sync, err, sizeof(err));
	CHECKF(t, ret == -EINVAL && strstr(err, ":4: listen = nowhere"),
	       "state_dir from a bad file: %d %s", ret, err);
	/* state_dir alone from the environment: sync is still the file's to say. */
	setenv("SIEVE_STATE_DIR", "/env", 1);
	ret = sconf_store_settings(&cl, dir, sizeof(dir), &sync, err, sizeof(err));
	CHECKF(t, ret == -EINVAL, "sync from a bad file: %d", ret);
	setenv("SIEVE_STORE_SYNC", "normal", 1);
	ret = sconf_store_settings(&cl, dir, sizeof(dir), &sync, err, sizeof(err));
	CHECKF(t, !ret && !strcmp(dir, "/env") && sync == SXDP_STORE_SYNC_NORMAL,
	       "state_dir and sync from the environment: %d %s %d %s", ret, dir, (int)sync, err);
	ret = sconf_settings_resolve(&cl, SCONF_NEED_ALL, c, err, sizeof(err));
	CHECKF(t, ret == -EINVAL, "every setting from a bad file: %d", ret);
	/* A missing default file means the defaults; a missing named one is an error. */
	unlink(path);
	ret = sconf_store_settings(&cl, dir, sizeof(dir), &sync, err, sizeof(err));
	CHECKF(t, !ret, "a missing file when the environment gives state_dir and sync: %s", err);
	unsetenv("SIEVE_STATE_DIR");
	ret = sconf_store_settings(&cl, dir, sizeof(dir), &sync, err, sizeof(err));
	CHECKF(t, ret == -ENOENT, "a missing SIEVE_CONFIG file: %d", ret);
	env_restore(&e);
	free(c);
}

/*
 * [store] sync: full or normal from the file, the environment over it
 * (SIEVE_STORE_SYNC), anything else refused naming where it came from; what
 * sieve's commands open the store with.
 */
static void sieve_unit_settings_store_sync(struct sieve_test *t)
{
	struct sconf_cmdline cl = { 0 };
	struct sconf_config *c = malloc(sizeof(*c));
	struct sconf_origin *o = c ? &c->origin[SCONF_STORE_SYNC] : NULL;
	char path[64], bad[64], err[512] = "", dir[256] = "";
	enum sxdp_store_sync sync = SXDP_STORE_SYNC_FULL;
	struct saved_env e;
	int ret;

	if (!c || write_conf(path, "[agent]\nstate_dir = /file\n[store]\nsync = normal\n") ||
	    write_conf(bad, "[store]\nsync = fast\n")) {
		CHECKF(t, 0, "setting up: %s", strerror(errno));
		free(c);
		return;
	}
	env_save(&e);
	cl.config = path;
	ret = sconf_settings_resolve(&cl, SCONF_NEED_ALL, c, err, sizeof(err));
	CHECKF(t, !ret && c->store_sync == SXDP_STORE_SYNC_NORMAL && o->from == SCONF_FROM_FILE &&
	       o->lines[0] == 4 && !strcmp(o->text, "normal"), "the file's normal: %d %s",
	       (int)c->store_sync, err);
	ret = sconf_store_settings(&cl, dir, sizeof(dir), &sync, err, sizeof(err));
	CHECKF(t, !ret && sync == SXDP_STORE_SYNC_NORMAL && !strcmp(dir, "/file"),
	       "what the CLI opens: %d %s %d", ret, dir, (int)sync);

	setenv("SIEVE_STORE_SYNC", "full", 1);
	ret = sconf_settings_resolve(&cl, SCONF_NEED_ALL, c, err, sizeof(err));
	CHECKF(t, !ret && c->store_sync == SXDP_STORE_SYNC_FULL && o->from == SCONF_FROM_ENV &&
	       o->over_line == 4, "the environment over the file: %d", (int)c->store_sync);

	setenv("SIEVE_STORE_SYNC", "off", 1);
	ret = sconf_store_settings(&cl, dir, sizeof(dir), &sync, err, sizeof(err));
	CHECKF(t, ret == -EINVAL && strstr(err, "environment SIEVE_STORE_SYNC: sync = off: "
					   "not full or normal"), "SIEVE_STORE_SYNC=off: %d %s",
	       ret, err);

	unsetenv("SIEVE_STORE_SYNC");
	cl.config = bad;
	ret = sconf_settings_resolve(&cl, SCONF_NEED_ALL, c, err, sizeof(err));
	CHECKF(t, ret == -EINVAL && strstr(err, ":2: sync = fast: not full or normal"),
	       "sync = fast in the file: %d %s", ret, err);
	env_restore(&e);
	unlink(path);
	unlink(bad);
	free(c);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_settings_cases[] = {
	CASE(sieve_unit_settings_defaults),
	CASE(sieve_unit_settings_order),
	CASE(sieve_unit_settings_file_when_needed),
	CASE(sieve_unit_settings_store_sync),
};

const unsigned int sieve_settings_cases_n = ARRAY_SIZE(sieve_settings_cases);
