// SPDX-License-Identifier: GPL-2.0
/*
 * The settings' table and the one order of their sources (settings.h),
 * linked into sieve and sieve-agent: which folder holds the store, which
 * file holds the settings, and, for `sieve agent --check`, where each
 * value came from. Values are read by config.c's parser whatever their
 * source, so the environment and the command line take exactly what the
 * file takes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

const struct sconf_setting sconf_settings[SCONF_NR_SETTINGS] = {
	[SCONF_STATE_DIR] = { "agent", "state_dir", .env = "SIEVE_STATE_DIR",
			       .option = "--state-dir", .dflt = SXDP_STORE_DIR },
	[SCONF_EXPIRE_INTERVAL] = { "agent", "expire_interval", .dflt = "10s" },
	/* A change reported done survives a power loss: the safe default. */
	[SCONF_STORE_SYNC] = { "store", "sync", .env = "SIEVE_STORE_SYNC", .dflt = "full" },
	[SCONF_LISTEN] = { "metrics", "listen", .dflt = "127.0.0.1:9477" },
	[SCONF_REFRESH_INTERVAL] = { "metrics", "refresh_interval", .dflt = "1s" },
	[SCONF_PERSISTENT] = { "filters", "persistent", .dflt = "", .adds_up = true },
	[SCONF_SAVE_INTERVAL] = { "filters", "save_interval", .dflt = "5m" },
	[SCONF_REDIS] = { "fleet", "redis", .dflt = "" },
	[SCONF_USER] = { "fleet", "user", .dflt = "" },
	[SCONF_PASSWORD_FILE] = { "fleet", "password_file", .dflt = "" },
	[SCONF_LISTS] = { "fleet", "lists", .dflt = "", .adds_up = true },
	[SCONF_RETRY_MAX] = { "fleet", "retry_max", .dflt = "30s" },
	[SCONF_STREAM_MAXLEN] = { "fleet", "stream_maxlen", .dflt = "1000000" },
	/*
	 * A /8 is the broadest block IANA hands an RIR in IPv4 (a /12 in IPv6):
	 * no abuse list names more at once, and a slice of the whole Internet
	 * (a /1 .. /7) stays a local decision. Allows exempt from every local
	 * block, so they stop at one organisation's size: a /16, an LIR's /32.
	 */
	[SCONF_BROADEST_BLOCK] = { "fleet", "broadest_block", .dflt = "/8 /12" },
	[SCONF_BROADEST_ALLOW] = { "fleet", "broadest_allow", .dflt = "/16 /32" },
	[SCONF_NEVER_BLOCK] = { "fleet", "never_block", .dflt = "", .adds_up = true },
	[SCONF_CS_LAPI_URL] = { "crowdsec", "lapi_url", .dflt = "" },
	[SCONF_CS_API_KEY_FILE] = { "crowdsec", "api_key_file", .dflt = "" },
	[SCONF_CS_LISTS] = { "crowdsec", "lists", .dflt = "", .adds_up = true },
	/* cs-firewall-bouncer's default: operators compare the two. */
	[SCONF_CS_UPDATE_FREQUENCY] = { "crowdsec", "update_frequency", .dflt = "10s" },
	[SCONF_CS_SCOPES] = { "crowdsec", "scopes", .dflt = "Ip Range" },
	/* captcha and throttle mean nothing to a packet filter: counted, not taken. */
	[SCONF_CS_TYPES] = { "crowdsec", "types", .dflt = "ban" },
	[SCONF_CS_ORIGINS] = { "crowdsec", "origins", .dflt = "", .adds_up = true },
};

#define SIEVE_CONFIG_ENV	"SIEVE_CONFIG"

int sconf_setting_find(const char *section, const char *key)
{
	int i;

	for (i = 0; i < SCONF_NR_SETTINGS; i++)
		if (!strcmp(sconf_settings[i].section, section) &&
		    !strcmp(sconf_settings[i].key, key))
			return i;
	return -1;
}

/*
 * The order itself, for every setting and for the file's path: the command
 * line's value, else the environment's (set and not empty). NULL: neither,
 * so the file's value or the default holds.
 */
static const char *given(const char *cmdline, const char *env, enum sconf_source *from)
{
	const char *v = env ? getenv(env) : NULL;

	if (cmdline) {
		*from = SCONF_FROM_CMDLINE;
		return cmdline;
	}
	if (v && *v) {
		*from = SCONF_FROM_ENV;
		return v;
	}
	return NULL;
}

const char *sconf_config_path(const struct sconf_cmdline *cl, enum sconf_source *from)
{
	const char *path = given(cl->config, SIEVE_CONFIG_ENV, from);

	if (path)
		return path;
	*from = SCONF_FROM_DEFAULT;
	return SCONF_CONFIG_FILE;
}

/* The file, if a setting of @need is not given otherwise; the defaults if not. */
static int read_file(const struct sconf_cmdline *cl, unsigned int need, struct sconf_config *c,
		     char *err, size_t errlen)
{
	enum sconf_source from, unused;
	const char *path = sconf_config_path(cl, &from);
	bool needed = false;
	int i, ret = -ENOENT;

	for (i = 0; i < SCONF_NR_SETTINGS; i++)
		if ((need & (1u << i)) && !given(cl->set[i], sconf_settings[i].env, &unused))
			needed = true;
	if (needed)
		ret = sconf_config_load(path, c, err, errlen);
	/* Only a file named by --config or SIEVE_CONFIG must be there. */
	if (ret == -ENOENT && (!needed || from == SCONF_FROM_DEFAULT)) {
		sconf_config_defaults(c);
		needed = false;
		ret = 0;
	}
	if (ret)
		return ret;
	snprintf(c->file.path, sizeof(c->file.path), "%s", path);
	c->file.from = from;
	c->file.read = needed;
	return 0;
}

int sconf_settings_resolve(const struct sconf_cmdline *cl, unsigned int need,
			    struct sconf_config *c, char *err, size_t errlen)
{
	const struct sconf_setting *s;
	enum sconf_source from;
	struct sconf_origin *o;
	char why[256];
	const char *v;
	int i, ret, line;

	ret = read_file(cl, need, c, err, errlen);
	for (i = 0; !ret && i < SCONF_NR_SETTINGS; i++) {
		s = &sconf_settings[i];
		v = given(cl->set[i], s->env, &from);
		if (!v)
			continue;
		ret = sconf_config_set(c, i, v, why, sizeof(why));
		if (ret) {
			if (from == SCONF_FROM_ENV)
				snprintf(err, errlen, "environment %s: %s", s->env, why);
			else
				snprintf(err, errlen, "%s: %s", s->option, why);
			break;
		}
		o = &c->origin[i];
		/* The line it won over is kept: --check says the file was not obeyed. */
		line = o->from == SCONF_FROM_FILE ? o->lines[0] : 0;
		memset(o, 0, sizeof(*o));
		o->from = from;
		o->over_line = line;
		snprintf(o->text, sizeof(o->text), "%s", v);
	}
	return ret;
}

int sconf_store_settings(const struct sconf_cmdline *cl, char *dir, size_t len,
			  enum sxdp_store_sync *sync, char *err, size_t errlen)
{
	struct sconf_config *c = malloc(sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	ret = sconf_settings_resolve(cl, (1u << SCONF_STATE_DIR) | (1u << SCONF_STORE_SYNC),
				      c, err, errlen);
	if (!ret && snprintf(dir, len, "%s", c->state_dir) >= (int)len)
		ret = -ENAMETOOLONG;
	if (!ret)
		*sync = c->store_sync;
	/* A file that is not there is the defaults: no error to report. */
	if (!ret && errlen)
		err[0] = '\0';
	free(c);
	return ret;
}

/* ---- sieve agent --check ---- */

static void print_origin(FILE *f, const struct sconf_config *c, int id)
{
	const struct sconf_setting *s = &sconf_settings[id];
	const struct sconf_origin *o = &c->origin[id];
	unsigned int i;

	switch (o->from) {
	case SCONF_FROM_CMDLINE:
		fprintf(f, "command line %s", s->option);
		break;
	case SCONF_FROM_ENV:
		fprintf(f, "environment %s", s->env);
		break;
	case SCONF_FROM_FILE:
		fprintf(f, "file %s:", c->file.path);
		for (i = 0; i < o->nr_lines && i < SCONF_ORIGIN_LINES; i++)
			fprintf(f, "%s%d", i ? "," : "", o->lines[i]);
		fprintf(f, "%s [%s]", o->nr_lines > SCONF_ORIGIN_LINES ? ",..." : "", s->section);
		break;
	default:
		fprintf(f, s->dflt[0] ? "default" : "default (none)");
	}
	if (o->over_line)
		fprintf(f, ", over file %s:%d [%s]", c->file.path, o->over_line, s->section);
}

/* A key whose values add up: the names or prefixes in force, once each. */
static void print_list(FILE *f, const struct sconf_config *c, int id)
{
	char text[128];
	unsigned int i;

	if (id == SCONF_PERSISTENT)
		for (i = 0; i < c->nr_persistent; i++)
			fprintf(f, " %s", c->persistent[i]);
	else if (id == SCONF_LISTS)
		for (i = 0; i < c->fleet.nr_lists; i++)
			fprintf(f, " %s", c->fleet.lists[i]);
	else if (id == SCONF_CS_LISTS)
		for (i = 0; i < c->crowdsec.nr_lists; i++)
			fprintf(f, " %s", c->crowdsec.lists[i]);
	else if (id == SCONF_CS_ORIGINS)
		for (i = 0; i < c->crowdsec.nr_origins; i++)
			fprintf(f, " %s%s", c->crowdsec.origins[i].skip ? "!" : "",
				c->crowdsec.origins[i].name);
	else
		for (i = 0; i < c->fleet.nr_never_block; i++) {
			sxdp_format_entry(&c->fleet.never_block[i], text, sizeof(text));
			fprintf(f, " %s", text);
		}
}

void sconf_settings_print(FILE *f, const struct sconf_config *c)
{
	static const char *const from[] = {
		[SCONF_FROM_DEFAULT] = "default", [SCONF_FROM_FILE] = "",
		[SCONF_FROM_ENV] = "environment " SIEVE_CONFIG_ENV,
		[SCONF_FROM_CMDLINE] = "command line --config",
	};
	const struct sconf_setting *s;
	const char *section = NULL;
	int i;

	fprintf(f, "; file %s (%s)%s\n", c->file.path, from[c->file.from],
		c->file.read ? "" : ": not there, no value below is from a file");
	for (i = 0; i < SCONF_NR_SETTINGS; i++) {
		s = &sconf_settings[i];
		if (!section || strcmp(section, s->section))
			fprintf(f, "%s[%s]\n", section ? "\n" : "", s->section);
		section = s->section;
		fprintf(f, "%s =", s->key);
		if (s->adds_up)
			print_list(f, c, i);
		else if (c->origin[i].from != SCONF_FROM_DEFAULT)
			fprintf(f, " %s", c->origin[i].text);
		else if (s->dflt[0])
			fprintf(f, " %s", s->dflt);
		fprintf(f, "  ; ");
		print_origin(f, c, i);
		fputc('\n', f);
	}
	sconf_config_print_sections(f, c);
}
