// SPDX-License-Identifier: GPL-2.0
/*
 * A CrowdSec Local API's stream replies read as list changes
 * (userspace/sources/crowdsec.c), the hostile ones above all: what is not
 * the stream's object is refused whole; a bad decision costs itself only,
 * counted under its origin and reason; Go durations, out of range ones
 * included; and the [crowdsec] section that chooses what is taken.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "crowdsec.h"
#include "store.h"

#define NOW	1800000000LL

/* [crowdsec] as its defaults make it: Ip and Range, ban, every origin. */
static void cs_defaults(struct sconf_crowdsec_config *cs)
{
	struct sconf_config *c = malloc(sizeof(*c));

	sconf_config_defaults(c);
	*cs = c->crowdsec;
	free(c);
}

static int parse(const char *body, const struct sconf_crowdsec_config *cs, struct scs_reply *r)
{
	char err[256];

	return scs_reply_parse(body, strlen(body), NOW, cs, r, err, sizeof(err));
}

static struct scs_changes *origin(struct scs_reply *r, const char *name)
{
	unsigned int i;

	for (i = 0; i < r->nr_origins; i++)
		if (!strcmp(r->origins[i].origin, name))
			return &r->origins[i];
	return NULL;
}

static void duration(struct sieve_test *t, const char *s, int want_ret, int64_t want)
{
	int64_t got = -12345;
	int ret = scs_parse_duration(s, &got);

	CHECKF(t, ret == want_ret, "duration '%s': returned %d, want %d", s, ret, want_ret);
	if (!ret && !want_ret)
		CHECKF(t, got == want, "duration '%s': %lld s, want %lld", s, (long long)got,
		       (long long)want);
}

/* Go's time.Duration.String() and what a hostile server may send instead. */
static void sieve_unit_crowdsec_durations(struct sieve_test *t)
{
	duration(t, "3h59m57.641708611s", 0, 4 * 3600 - 2);	/* rounded up: never early */
	duration(t, "4h0m0s", 0, 4 * 3600);
	duration(t, "59m", 0, 3540);
	duration(t, "150ms", 0, 1);
	duration(t, "1.5h", 0, 5400);
	duration(t, "2\xc2\xb5s", 0, 1);
	duration(t, "0s", 0, 0);
	duration(t, "0", 0, 0);
	duration(t, "-3.2s", 0, -4);
	duration(t, "-1h0m0.5s", 0, -3601);
	duration(t, "876000h", 0, 876000LL * 3600);	/* a century: the bound */
	duration(t, "876001h", -EINVAL, 0);
	duration(t, "99999999999999999999h", -EINVAL, 0);	/* past int64 */
	duration(t, "9223372036854775807ns", -EINVAL, 0);
	duration(t, "3153600000s1h", -EINVAL, 0);	/* in range alone, not summed */
	duration(t, "", -EINVAL, 0);
	duration(t, "-", -EINVAL, 0);
	duration(t, "5", -EINVAL, 0);			/* no unit */
	duration(t, "1e3s", -EINVAL, 0);
	duration(t, "1.5.3s", -EINVAL, 0);
	duration(t, "3h-2m", -EINVAL, 0);
	duration(t, "h", -EINVAL, 0);
	duration(t, ".s", -EINVAL, 0);
	duration(t, "4 h", -EINVAL, 0);
	duration(t, "4d", -EINVAL, 0);
}

/* The stream's own replies: empty, new and deleted of three origins. */
static void sieve_unit_crowdsec_reply(struct sieve_test *t)
{
	static const char body[] =
		"{\"deleted\":[{\"duration\":\"-2.5s\",\"id\":7,\"origin\":\"cscli\",\"scenario\":"
		"\"manual\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.9\"}],"
		"\"new\":[{\"duration\":\"3h59m58.2s\",\"id\":1,\"origin\":\"cscli\",\"scope\":\"Ip\","
		"\"type\":\"ban\",\"value\":\"192.0.2.1\"},"
		"{\"duration\":\"10s\",\"origin\":\"cscli\",\"scope\":\"Range\",\"type\":\"ban\","
		"\"value\":\"198.51.100.0/24\"},"
		"{\"duration\":\"1m\",\"origin\":\"crowdsec\",\"scope\":\"Ip\",\"type\":\"ban\","
		"\"value\":\"2001:db8::1\"},"
		"{\"duration\":\"1m\",\"origin\":\"CAPI\",\"scope\":\"range\",\"type\":\"ban\","
		"\"value\":\"2001:db8:1::/48\"}]}";
	struct sconf_crowdsec_config cs;
	struct scs_changes *c;
	struct scs_reply r;
	char text[64];
	int ret;

	cs_defaults(&cs);
	ret = parse("{\"deleted\":null,\"new\":null}", &cs, &r);
	CHECKF(t, !ret && !r.nr_origins, "the empty reply: ret %d, %u origins", ret, r.nr_origins);
	scs_reply_free(&r);
	ret = parse(" {\"new\":[]}\n", &cs, &r);
	CHECKF(t, !ret && !r.nr_origins, "new only, empty: ret %d", ret);
	scs_reply_free(&r);

	ret = parse(body, &cs, &r);
	CHECKF(t, !ret && r.nr_origins == 3, "ret %d, %u origins, want 3", ret, r.nr_origins);
	c = origin(&r, "cscli");
	CHECKF(t, c && c->block.n == 2 && c->unblock.n == 1, "cscli: %zu blocks %zu unblocks",
	       c ? c->block.n : 0, c ? c->unblock.n : 0);
	if (c && c->block.n == 2) {
		/* The remaining duration as the expiry, rounded up. */
		CHECKF(t, c->expires[0] == NOW + 4 * 3600 - 1, "expiry %lld",
		       (long long)c->expires[0]);
		CHECKF(t, c->expires[1] == NOW + 10, "expiry %lld", (long long)c->expires[1]);
		sxdp_format_entry(&c->block.keys[1], text, sizeof(text));
		CHECKF(t, !strcmp(text, "198.51.100.0/24"), "the range: %s", text);
		CHECKF(t, c->block.keys[1].kind == SIEVE_XDP_PREFIX, "the range's kind");
	}
	if (c && c->unblock.n == 1) {
		sxdp_format_entry(&c->unblock.keys[0], text, sizeof(text));
		CHECKF(t, !strcmp(text, "192.0.2.9"), "the deleted: %s", text);
	}
	c = origin(&r, "crowdsec");
	CHECKF(t, c && c->block.n == 1 && c->block.keys[0].kind == SIEVE_XDP_SRC, "crowdsec's v6");
	c = origin(&r, "CAPI");
	CHECKF(t, c && c->block.n == 1 && c->block.keys[0].kind == SIEVE_XDP_PREFIX,
	       "CAPI's v6 range (scope written lower case)");
	scs_reply_free(&r);
}

/* Bodies that are not the stream's object: refused whole, nothing taken. */
static void sieve_unit_crowdsec_bad_bodies(struct sieve_test *t)
{
	static const char *const bad[] = {
		"", " ", "null", "[]", "\"new\"", "42", "{", "{\"new\":[",
		"{\"new\":[{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\","
		"\"duration\":\"1h\"}]",				/* truncated */
		"{\"new\":5}", "{\"new\":\"192.0.2.1\"}", "{\"new\":{}}", "{\"deleted\":true}",
		"{\"new\":null} {\"new\":null}", "{\"new\":null}x", "<html><body>502</body></html>",
		"{\"new\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
	};
	struct sconf_crowdsec_config cs;
	static const char nul[] = "{\"new\":null}\0{\"new\":[]}";
	struct scs_reply r;
	char err[256];
	size_t i;
	int ret;

	cs_defaults(&cs);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		ret = scs_reply_parse(bad[i], strlen(bad[i]), NOW, &cs, &r, err, sizeof(err));
		CHECKF(t, ret == -EBADMSG && err[0] && !r.nr_origins, "'%.40s': ret %d, %u origins",
		       bad[i], ret, r.nr_origins);
		scs_reply_free(&r);
	}
	ret = scs_reply_parse(nul, sizeof(nul) - 1, NOW, &cs, &r, err, sizeof(err));
	CHECKF(t, ret == -EBADMSG, "a NUL inside: ret %d", ret);
	scs_reply_free(&r);
	/* Past the bound, refused before a byte is read (the buffer is small). */
	ret = scs_reply_parse("{}", SCS_BODY_MAX + 1, NOW, &cs, &r, err, sizeof(err));
	CHECKF(t, ret == -EBADMSG, "a reply past the bound: ret %d", ret);
	scs_reply_free(&r);
}

/* Bad decisions: each skipped under its reason; the good ones beside them taken. */
static void sieve_unit_crowdsec_bad_decisions(struct sieve_test *t)
{
	static const struct {
		const char *decision;
		enum scs_skip why;
	} bad[] = {
		{ "42", SCS_SKIP_MALFORMED },
		{ "{}", SCS_SKIP_MALFORMED },
		{ "{\"origin\":7,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.3\",\"duration\":\"1h\"}",
		  SCS_SKIP_MALFORMED },
		{ "{\"origin\":\"a b\\n# HELP\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.3\","
		  "\"duration\":\"1h\"}", SCS_SKIP_MALFORMED },	/* no metric label of it */
		{ "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":3221225985,"
		  "\"duration\":\"1h\"}", SCS_SKIP_MALFORMED },
		{ "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.3\"}",
		  SCS_SKIP_MALFORMED },				/* no duration */
		{ "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"not-an-ip\","
		  "\"duration\":\"1h\"}", SCS_SKIP_NOT_ADDRESS },
		{ "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.0/24\","
		  "\"duration\":\"1h\"}", SCS_SKIP_NOT_ADDRESS },	/* a prefix is a Range */
		{ "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.3:80/tcp\","
		  "\"duration\":\"1h\"}", SCS_SKIP_NOT_ADDRESS },
		{ "{\"origin\":\"cscli\",\"scope\":\"Range\",\"type\":\"ban\",\"value\":\"192.0.2.0/33\","
		  "\"duration\":\"1h\"}", SCS_SKIP_NOT_ADDRESS },
		{ "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.3\","
		  "\"duration\":\"99999999999999h\"}", SCS_SKIP_DURATION },
		{ "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.3\","
		  "\"duration\":\"forever\"}", SCS_SKIP_DURATION },
		{ "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.3\","
		  "\"duration\":\"-1s\"}", SCS_SKIP_EXPIRED },
		{ "{\"origin\":\"cscli\",\"scope\":\"Country\",\"type\":\"ban\",\"value\":\"FR\","
		  "\"duration\":\"1h\"}", SCS_SKIP_SCOPE },
		{ "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"captcha\",\"value\":\"192.0.2.3\","
		  "\"duration\":\"1h\"}", SCS_SKIP_TYPE },
	};
	static const char good[] = "{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\","
				   "\"value\":\"192.0.2.77\",\"duration\":\"1h\"}";
	struct sconf_crowdsec_config cs;
	struct scs_changes *c;
	struct scs_reply r;
	char body[1024];
	uint64_t n;
	size_t i;
	int ret, k;

	cs_defaults(&cs);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(body, sizeof(body), "{\"new\":[%s,%s]}", bad[i].decision, good);
		ret = parse(body, &cs, &r);
		c = origin(&r, "cscli");
		for (k = 0, n = 0; k < SCS_NR_SKIPS; k++)
			n += r.skipped[k] + (c ? c->skipped[k] : 0);
		CHECKF(t, !ret && c && c->block.n == 1 && n == 1 &&
		       (c->skipped[bad[i].why] + r.skipped[bad[i].why]) == 1 &&
		       r.first[bad[i].why][0], "decision %zu (%s): ret %d, %zu taken, %llu skipped",
		       i, scs_skip_name(bad[i].why), ret, c ? c->block.n : 0, (unsigned long long)n);
		scs_reply_free(&r);
	}
}

/* Origins: a skipped one, a taken-only set, and more of them than a reply may hold. */
static void sieve_unit_crowdsec_origins(struct sieve_test *t)
{
	struct sconf_crowdsec_config cs;
	struct scs_changes *c;
	struct scs_reply r;
	char *body, *p;
	int i, ret;

	cs_defaults(&cs);
	snprintf(cs.origins[0].name, sizeof(cs.origins[0].name), "CAPI");
	cs.origins[0].skip = true;
	cs.nr_origins = 1;
	CHECKF(t, !scs_origin_taken(&cs, "CAPI") && scs_origin_taken(&cs, "cscli"), "!CAPI");
	snprintf(cs.origins[1].name, sizeof(cs.origins[1].name), "crowdsec");
	cs.nr_origins = 2;
	CHECKF(t, scs_origin_taken(&cs, "crowdsec") && !scs_origin_taken(&cs, "cscli"),
	       "crowdsec !CAPI takes crowdsec only");
	ret = parse("{\"new\":[{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":"
		    "\"192.0.2.1\",\"duration\":\"1h\"}]}", &cs, &r);
	c = origin(&r, "cscli");
	CHECKF(t, !ret && c && !c->block.n && c->skipped[SCS_SKIP_ORIGIN] == 1,
	       "cscli's decision skipped as of an origin not taken");
	scs_reply_free(&r);

	/* SCS_MAX_ORIGINS + 8 origins: the last 8 are counted, never a table past its end. */
	cs_defaults(&cs);
	body = malloc(64 * 1024);
	p = body + sprintf(body, "{\"new\":[");
	for (i = 0; i < SCS_MAX_ORIGINS + 8; i++)
		p += sprintf(p, "%s{\"origin\":\"o%d\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":"
			     "\"192.0.2.%d\",\"duration\":\"1h\"}", i ? "," : "", i, i);
	sprintf(p, "]}");
	ret = parse(body, &cs, &r);
	CHECKF(t, !ret && r.nr_origins == SCS_MAX_ORIGINS && r.skipped[SCS_SKIP_ORIGIN] == 8,
	       "%u origins, %llu skipped", r.nr_origins,
	       (unsigned long long)r.skipped[SCS_SKIP_ORIGIN]);
	scs_reply_free(&r);
	free(body);
}

/* Scopes and types [crowdsec] does not take are counted, not taken. */
static void sieve_unit_crowdsec_scopes_types(struct sieve_test *t)
{
	static const char body[] =
		"{\"new\":[{\"origin\":\"cscli\",\"scope\":\"Range\",\"type\":\"ban\",\"value\":"
		"\"192.0.2.0/24\",\"duration\":\"1h\"},{\"origin\":\"cscli\",\"scope\":\"Ip\",\"type\":"
		"\"captcha\",\"value\":\"192.0.2.1\",\"duration\":\"1h\"}]}";
	struct sconf_crowdsec_config cs;
	struct scs_changes *c;
	struct scs_reply r;
	int ret;

	cs_defaults(&cs);
	cs.scopes = SCONF_CS_SCOPE_IP;
	snprintf(cs.types[1], sizeof(cs.types[1]), "captcha");
	cs.nr_types = 2;
	ret = parse(body, &cs, &r);
	c = origin(&r, "cscli");
	CHECKF(t, !ret && c && c->block.n == 1 && c->skipped[SCS_SKIP_SCOPE] == 1,
	       "Ip only: the range skipped, the captcha taken (types ban captcha)");
	scs_reply_free(&r);
}

/* [crowdsec] from a file: its defaults, its refusals, the key file's mode. */
static void sieve_unit_crowdsec_config(struct sieve_test *t)
{
	char dir[] = "/tmp/sieve-cs-XXXXXX", conf[64], key[64], err[512], text[1024];
	struct sconf_config *c = malloc(sizeof(*c));
	FILE *f;
	int ret;

	if (!mkdtemp(dir)) {
		CHECKF(t, 0, "mkdtemp");
		free(c);
		return;
	}
	snprintf(conf, sizeof(conf), "%s/sieve.conf", dir);
	snprintf(key, sizeof(key), "%s/key", dir);
	f = fopen(key, "w");
	fputs("0123456789abcdef\n", f);
	fclose(f);
	chmod(key, 0644);
	snprintf(text, sizeof(text), "[crowdsec]\nlapi_url = http://127.0.0.1:8080/\n"
		 "api_key_file = %s\nlists = default\n", key);
	f = fopen(conf, "w");
	fputs(text, f);
	fclose(f);
	ret = sconf_config_load(conf, c, err, sizeof(err));
	CHECKF(t, ret == -EINVAL && strstr(err, "0600"), "a key file of mode 0644: %d %s", ret, err);
	chmod(key, 0600);
	ret = sconf_config_load(conf, c, err, sizeof(err));
	CHECKF(t, !ret && c->crowdsec.on && !strcmp(c->crowdsec.lapi_url, "http://127.0.0.1:8080") &&
	       c->crowdsec.update_frequency_ms == 10000 &&
	       c->crowdsec.scopes == (SCONF_CS_SCOPE_IP | SCONF_CS_SCOPE_RANGE) &&
	       c->crowdsec.nr_types == 1 && !strcmp(c->crowdsec.types[0], "ban"),
	       "defaults: %d %s", ret, err);

	static const char *const refused[] = {
		"[crowdsec]\nlapi_url = ftp://h:1\n", "[crowdsec]\nlapi_url = http://\n",
		"[crowdsec]\nupdate_frequency = 50ms\n", "[crowdsec]\nscopes = Country\n",
		"[crowdsec]\norigins = a,b c!\n", "[crowdsec]\ntypes = \n",
		"[crowdsec]\nlapi_url = http://127.0.0.1:8080\n",	/* no key, no lists */
		"[crowdsec]\nlists = default\n",			/* no lapi_url */
		"[crowdsec]\nbouncer = x\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		f = fopen(conf, "w");
		fputs(refused[i], f);
		fclose(f);
		err[0] = '\0';
		ret = sconf_config_load(conf, c, err, sizeof(err));
		CHECKF(t, ret == -EINVAL && err[0], "'%s' taken: %d", refused[i], ret);
	}
	snprintf(text, sizeof(text), "[crowdsec]\nlapi_url = https://lapi:8080\napi_key_file = %s\n"
		 "lists = a b\nlists = c\nupdate_frequency = 250ms\nscopes = ip\n"
		 "origins = cscli !CAPI\n", key);
	f = fopen(conf, "w");
	fputs(text, f);
	fclose(f);
	ret = sconf_config_load(conf, c, err, sizeof(err));
	CHECKF(t, !ret && c->crowdsec.nr_lists == 3 && c->crowdsec.update_frequency_ms == 250 &&
	       c->crowdsec.scopes == SCONF_CS_SCOPE_IP && c->crowdsec.nr_origins == 2 &&
	       c->crowdsec.origins[1].skip, "a full section: %d %s", ret, err);
	unlink(conf);
	unlink(key);
	rmdir(dir);
	free(c);
}

static int expiry_cb(const struct sxdp_store_entry *e, void *ctx)
{
	*(int64_t *)ctx = e->expires_at;
	return 0;
}

/*
 * The re-ban rule of the agent's live adds (only_own, extend_only): a
 * shorter decision leaves the longer expiry; a longer one extends it; a
 * mirror's add (only_own alone, the fleet's) takes what it is given.
 */
static void sieve_unit_crowdsec_reban_extends(struct sieve_test *t)
{
	char dir[] = "/tmp/sieve-cs-store-XXXXXX", err[256], cmd[64];
	struct sxdp_store_attrs a = {
		.origin = "crowdsec/cscli", .now = NOW, .only_own = true, .extend_only = true,
	};
	struct sieve_xdp_key key;
	struct sxdp_store *s;
	const char *why;
	int64_t got = -1;

	if (!mkdtemp(dir) || sxdp_store_open(dir, &s, err, sizeof(err))) {
		CHECKF(t, 0, "a store in %s: %s", dir, err);
		return;
	}
	sxdp_parse_entry("192.0.2.1", &key, &why);
	a.expires_at = NOW + 3600;
	CHECKF(t, !sxdp_store_add(s, "default", &key, 1, &a, NULL, err, sizeof(err)), "%s", err);
	a.expires_at = NOW + 300;
	CHECKF(t, !sxdp_store_add(s, "default", &key, 1, &a, NULL, err, sizeof(err)), "%s", err);
	sxdp_store_foreach(s, "default", expiry_cb, &got, err, sizeof(err));
	CHECKF(t, got == NOW + 3600, "a 5m re-ban after a 1h ban: expires at now+%lld, want +3600",
	       (long long)(got - NOW));
	a.expires_at = NOW + 7200;
	sxdp_store_add(s, "default", &key, 1, &a, NULL, err, sizeof(err));
	sxdp_store_foreach(s, "default", expiry_cb, &got, err, sizeof(err));
	CHECKF(t, got == NOW + 7200, "a 2h re-ban: now+%lld, want +7200", (long long)(got - NOW));
	a.extend_only = false;
	a.expires_at = NOW + 300;
	sxdp_store_add(s, "default", &key, 1, &a, NULL, err, sizeof(err));
	sxdp_store_foreach(s, "default", expiry_cb, &got, err, sizeof(err));
	CHECKF(t, got == NOW + 300, "a mirror's add: now+%lld, want +300", (long long)(got - NOW));
	sxdp_store_close(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECKF(t, !system(cmd), "%s", cmd);
}

/*
 * The key file is judged when it is read, as it is read: one that became
 * readable by others, or whose path now leads to a file that is not the
 * agent's own 0600 one (a symlink swapped in), is refused, and the key
 * never leaves it.
 */
static void sieve_unit_cs_key_file_rechecked(struct sieve_test *t)
{
	char dir[] = "/tmp/sieve-cs-key-XXXXXX", path[64], other[64], key[128], err[256];
	FILE *f;
	int rc;

	if (!mkdtemp(dir)) {
		CHECKF(t, 0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/key", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	f = fopen(path, "w");
	CHECKF(t, f && fputs("s3cret\nsecond line\n", f) >= 0 && !fclose(f), "writing the key");
	chmod(path, 0600);
	rc = sconf_read_secret("api_key_file", path, key, sizeof(key), err, sizeof(err));
	CHECKF(t, !rc && !strcmp(key, "s3cret"), "a 0600 key: rc %d key '%s' err '%s'", rc, key,
	       err);

	chmod(path, 0644);
	strcpy(key, "untouched");
	rc = sconf_read_secret("api_key_file", path, key, sizeof(key), err, sizeof(err));
	CHECKF(t, rc == -EACCES && strstr(err, "0644") && !strstr(err, "s3cret") &&
	       strcmp(key, "s3cret"), "a key made 0644 since: rc %d err '%s'", rc, err);

	/* The path swapped for a symlink to a file others may read. */
	f = fopen(other, "w");
	CHECKF(t, f && fputs("not-a-key\n", f) >= 0 && !fclose(f), "writing the other file");
	chmod(other, 0644);
	unlink(path);
	CHECKF(t, !symlink(other, path), "symlink: %s", strerror(errno));
	rc = sconf_read_secret("api_key_file", path, key, sizeof(key), err, sizeof(err));
	CHECKF(t, rc == -EACCES && strcmp(key, "not-a-key"), "a symlink to a 0644 file: rc %d",
	       rc);

	/* Not a regular file. */
	rc = sconf_read_secret("api_key_file", dir, key, sizeof(key), err, sizeof(err));
	CHECKF(t, rc < 0, "a folder: rc %d", rc);
	unlink(path);
	unlink(other);
	rmdir(dir);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_crowdsec_cases[] = {
	CASE(sieve_unit_crowdsec_durations),
	CASE(sieve_unit_crowdsec_reply),
	CASE(sieve_unit_crowdsec_bad_bodies),
	CASE(sieve_unit_crowdsec_bad_decisions),
	CASE(sieve_unit_crowdsec_origins),
	CASE(sieve_unit_crowdsec_scopes_types),
	CASE(sieve_unit_crowdsec_config),
	CASE(sieve_unit_crowdsec_reban_extends),
	CASE(sieve_unit_cs_key_file_rechecked),
};

const unsigned int sieve_crowdsec_cases_n = ARRAY_SIZE(sieve_crowdsec_cases);
