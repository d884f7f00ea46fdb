// SPDX-License-Identifier: GPL-2.0
/*
 * sieve.conf: the settings of sieve and sieve-agent, read with inih
 * (Debian's libinih). Every setting, its values and its default (sieve.conf(5) says the same):
 *
 *   [agent]
 *   state_dir = /var/lib/sieve
 *	The folder of the store (sieve.db) and of the filters' snapshots. An
 *	absolute path. $SIEVE_STATE_DIR overrides it, and --state-dir both,
 *	for the CLI as for the agent (settings.c). Read at start only: a
 *	reload that changes it is logged and takes effect at the next start.
 *   expire_interval = 10s
 *	How often entries past their TTL are removed (`sieve xdp expire` on
 *	every list): an expired entry stops being dropped within this time.
 *	A number and a unit, ms, s, m or h (a bare number is seconds); 1s to 1h.
 *
 *   [metrics]
 *   listen = 127.0.0.1:9477
 *	Where GET /metrics (Prometheus text) is served: ADDR:PORT with a
 *	numeric IPv4 address, [V6ADDR]:PORT, or off. Port 1-65535.
 *   refresh_interval = 1s
 *	Scrapes are answered from a snapshot of the metrics, gathered again
 *	(the store, the pins, every /dev/sieve filter's INFO) when a scrape
 *	finds it this old: however often anyone scrapes, at most one
 *	gathering an interval. A duration as above, 1s to 1h.
 *
 *   [filters]
 *   persistent = NAME NAME ...
 *	The /dev/sieve filters whose snapshots the agent keeps under
 *	STATE_DIR/filters/ and restores at start. Names of 1-31 characters
 *	of A-Z a-z 0-9 . _ -, separated by blanks or commas; the key may be
 *	repeated (or continued on indented lines) and the names add up; at
 *	most 64, a name given twice counts once. Default: none.
 *   save_interval = 5m
 *	How often those snapshots are saved; 0 saves them only at stop.
 *	A duration as above, 0 or 1s to 24h.
 *
 *   [fleet]
 *   redis = 127.0.0.1:6379
 *	The Redis server the fleet's lists are read from (and `sieve xdp
 *	... --fleet` publishes to): HOST:PORT (a name or IPv4 address),
 *	[V6ADDR]:PORT, or unix:PATH for a local socket. Without it (or with
 *	no [fleet] section) the agent follows no list. Default: none.
 *   user = NAME
 *	The Redis ACL user to AUTH as. Default: the default user.
 *   password_file = FILE
 *	A file holding the password (its first line). It must be a regular
 *	file owned by the user the agent runs as (root), of mode 0600 or
 *	stricter: a file others can read, or that another user could rewrite,
 *	is refused.
 *	It is read again at every connection (a rotated password needs no
 *	reload). Default: none (no AUTH).
 *   lists = NAME NAME ...
 *	The lists to follow, as the other lists' names; names add up over
 *	lines as for persistent; at most 16. Required with redis.
 *   retry_max = 30s
 *	The longest wait between two connection attempts (the wait doubles
 *	from 100 ms up to it). 1s to 1h.
 *   stream_maxlen = 1000000
 *	What publishers cap each list's change stream at (XADD MAXLEN ~). A
 *	host away longer than that many changes does a full resync.
 *	1000 to 1000000000.
 *   broadest_block = /8 /12
 *   broadest_allow = /16 /32
 *	The broadest prefix the fleet may block / allow on this host, for
 *	IPv4 then IPv6 ("/N" or N; 0 lets it do anything). An entry broader
 *	than that is refused: counted in sieve_fleet_skipped_total
 *	(reason="refused"), logged once, never stored. Whoever can write to
 *	Redis would otherwise control every host (an allow of 0.0.0.0/1 and
 *	128.0.0.0/1 exempts everything from every local block).
 *   never_block = PREFIX PREFIX ...
 *	Addresses and prefixes the fleet may never block (the host's
 *	management networks): a block whose source range, service address or
 *	flow endpoint touches one is refused the same way. Adds up over lines
 *	as lists; at most 64. Default: none.
 *
 *   [feed NAME]
 *   url = https://example.org/drop.txt
 *	A blocklist fetched by URL and loaded as origin NAME (1-64 of A-Z a-z
 *	0-9 _ . -, not cli or fleet; the origin `sieve xdp load --origin
 *	NAME` writes). http://, https:// or file://. Required.
 *   format = auto
 *	As `sieve xdp load --format`: auto, plain, netset, drop, ipset.
 *   list = default
 *	The list it is loaded into.
 *   interval = 1h
 *	How often it is fetched: a duration as above, 1s to 168h.
 *   timeout = 60s
 *	The bound on one fetch, connecting included: 1s to 1h.
 *   min_entries = 1
 *	A download with fewer entries is refused (0 lets an empty feed empty
 *	the origin). 0 to 1000000000.
 *   max_shrink = 0.5
 *	A download that would remove more than this share of the origin's
 *	entries is refused: a fraction 0 to 1, or a percentage (50%). 1 lets
 *	any shrink through.
 *
 *   [attach IFACE]
 *   list = default
 *   backend = bloom-map | blocked | filter:NAME
 *   mode = native | generic
 *	An interface the agent attaches (`sieve xdp attach IFACE --list ...
 *	--backend ... --mode ...`) whenever it is not attached so. backend
 *	and mode: as the CLI's options, their defaults when not given.
 *	Each section at most once a name; at most 32 of each kind.

 *   [crowdsec]
 *   lapi_url = http://127.0.0.1:8080
 *	A CrowdSec Local API whose decisions the agent follows (GET
 *	/v1/decisions/stream, userspace/sources/crowdsec.h): http:// or
 *	https://, a host and a port. Without it the agent follows none.
 *   api_key_file = FILE
 *	The bouncer key (`cscli bouncers add`), its first line; refused
 *	unless owned by the agent's user, mode 0600 or stricter, as
 *	password_file. Required with lapi_url.
 *   lists = NAME NAME ...
 *	The lists the decisions go to (each to all of them); add up over
 *	lines; at most 16. Required with lapi_url.
 *   update_frequency = 10s
 *	How often the stream is polled: ms, s, m or h, 100ms to 1h.
 *   scopes = Ip Range
 *	The decision scopes taken (Ip, Range, either case); others counted.
 *   types = ban
 *	The decision types taken (words); others counted (captcha, ...).
 *   origins = NAME !NAME ...
 *	The CrowdSec origins taken (cscli, crowdsec, CAPI, lists, ...):
 *	NAME takes it, !NAME skips it; when a NAME is given only the NAMEs
 *	are taken. Add up over lines; at most 16. Default: every origin.
 *
 * Comments start with '#' or ';' at the start of a line (';' also after a
 * blank). A line holds at most 198 characters (inih's line buffer as
 * Debian builds it): a longer one is an error, not cut in two. An error is "FILE:LINE: reason"; the first one is reported and
 * the whole file is refused: the agent does not start, or a reload keeps
 * the settings it had.
 *
 * The defaults, and which keys the environment or the command line may
 * override, are settings.c's table; this file reads values, whatever their
 * source, and notes the lines they came from.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ini.h>

#include <linux/sieve.h>

#include "conf.h"

/* One parse: the file, the line being read, and the first error. */
struct parse {
	FILE *f;
	const char *path;
	int line;
	int err_line;		/* 0: no error yet */
	char err[256];
	struct sconf_config *c;
	/* The [feed NAME] or [attach IFACE] being read; NULL in other sections. */
	struct sconf_feed_config *feed;
	struct sconf_attach_config *attach;
};

static void __attribute__((format(printf, 2, 3))) fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	/* The first error is the one reported: later ones may follow from it. */
	if (p->err_line)
		return;
	p->err_line = p->line;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
}

static const char *const sections[] = { "agent", "store", "metrics", "filters", "fleet",
					 "crowdsec" };

static bool known_section(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (strlen(sections[i]) == len && !strncmp(sections[i], name, len))
			return true;
	return false;
}

static const char *const reserved_origins[] = { "cli", "fleet" };

/* [feed NAME]: a new feed with the defaults sieve.conf(5) gives. */
static void open_feed(struct parse *p, const char *name, size_t len)
{
	struct sconf_config *c = p->c;
	struct sconf_feed_config *f;
	unsigned int i;

	if (!len || len > SXDP_LIST_NAME_MAX) {
		fail(p, "[feed %.*s]: a feed's name is 1-%d of A-Z a-z 0-9 _ . -", (int)len, name,
		     SXDP_LIST_NAME_MAX);
		return;
	}
	for (i = 0; i < c->nr_feeds; i++)
		if (strlen(c->feeds[i].name) == len && !strncmp(c->feeds[i].name, name, len)) {
			fail(p, "[feed %.*s]: given twice (first at line %d)", (int)len, name,
			     c->feeds[i].line);
			return;
		}
	if (c->nr_feeds == SCONF_MAX_FEEDS) {
		fail(p, "[feed %.*s]: more than %d feeds", (int)len, name, SCONF_MAX_FEEDS);
		return;
	}
	f = &c->feeds[c->nr_feeds];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%.*s", (int)len, name);
	for (i = 0; i < sizeof(reserved_origins) / sizeof(reserved_origins[0]); i++)
		if (!strcmp(f->name, reserved_origins[i])) {
			fail(p, "[feed %s]: %s is the origin of other changes, not a feed's name",
			     f->name, f->name);
			return;
		}
	if (!sxdp_list_name_ok(f->name)) {
		fail(p, "[feed %s]: a feed's name is 1-%d of A-Z a-z 0-9 _ . -", f->name,
		     SXDP_LIST_NAME_MAX);
		return;
	}
	snprintf(f->list, sizeof(f->list), "%s", SXDP_DEFAULT_LIST);
	f->format = SXDP_FORMAT_AUTO;
	f->interval_s = 3600;
	f->timeout_s = 60;
	f->min_entries = 1;
	f->max_shrink_ppm = 500000;
	f->line = p->line;
	c->nr_feeds++;
	p->feed = f;
}

/* [attach IFACE]: the list "default", the backend and mode the CLI's. */
static void open_attach(struct parse *p, const char *name, size_t len)
{
	struct sconf_config *c = p->c;
	struct sconf_attach_config *a;
	unsigned int i;

	if (!len || len >= IF_NAMESIZE || memchr(name, '/', len) || memchr(name, ' ', len) ||
	    (len <= 2 && name[0] == '.')) {
		fail(p, "[attach %.*s]: not an interface name (1-%d characters, no '/')", (int)len,
		     name, IF_NAMESIZE - 1);
		return;
	}
	for (i = 0; i < c->nr_attach; i++)
		if (strlen(c->attach[i].iface) == len && !strncmp(c->attach[i].iface, name, len)) {
			fail(p, "[attach %.*s]: given twice (first at line %d)", (int)len, name,
			     c->attach[i].line);
			return;
		}
	if (c->nr_attach == SCONF_MAX_ATTACH) {
		fail(p, "[attach %.*s]: more than %d interfaces", (int)len, name, SCONF_MAX_ATTACH);
		return;
	}
	a = &c->attach[c->nr_attach++];
	memset(a, 0, sizeof(*a));
	snprintf(a->iface, sizeof(a->iface), "%.*s", (int)len, name);
	snprintf(a->list, sizeof(a->list), "%s", SXDP_DEFAULT_LIST);
	a->line = p->line;
	p->attach = a;
}

/* "feed NAME" or "attach IFACE" (@s, @len): true if it is one of them. */
static bool repeated_section(struct parse *p, const char *s, size_t len)
{
	static const char *const kinds[] = { "feed", "attach" };
	size_t i, klen, blanks;

	for (i = 0; i < 2; i++) {
		klen = strlen(kinds[i]);
		if (len < klen || strncmp(s, kinds[i], klen) ||
		    (len > klen && !isspace((unsigned char)s[klen])))
			continue;
		blanks = klen + strspn(s + klen, " \t");
		if (blanks > len)
			blanks = len;
		if (blanks == len)
			fail(p, "[%s] needs a name: [%s %s]", kinds[i], kinds[i],
			     i ? "IFACE" : "NAME");
		else if (i)
			open_attach(p, s + blanks, len - blanks);
		else
			open_feed(p, s + blanks, len - blanks);
		return true;
	}
	return false;
}

/*
 * A section header is checked as its line is read: inih calls the handler
 * for keys only, so an unknown section without keys would pass unseen (and
 * an [attach IFACE] without keys, which takes the defaults, would be lost).
 */
static void check_header(struct parse *p, const char *line)
{
	const char *s = line, *e;

	while (isspace((unsigned char)*s))
		s++;
	if (*s != '[' || !(e = strchr(s, ']')))
		return;		/* not a header, or one inih reports as a syntax error */
	s++;
	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	p->feed = NULL;
	p->attach = NULL;
	if (!known_section(s, e - s) && !repeated_section(p, s, e - s))
		fail(p, "unknown section [%.*s] (sections: [agent], [store], [metrics], [filters], "
		     "[fleet], [crowdsec], [feed NAME], [attach IFACE])", (int)(e - s), s);
}

/*
 * inih's reader, so that the handler knows its line (inih hands each line
 * to the handler as soon as it is read) and an overlong line, which inih
 * would cut in two, is an error.
 */
static char *read_line(char *buf, int num, void *stream)
{
	struct parse *p = stream;
	size_t len;
	int ch;

	if (!fgets(buf, num, p->f))
		return NULL;
	p->line++;
	len = strlen(buf);
	if (len == (size_t)num - 1 && buf[len - 1] != '\n' && !feof(p->f)) {
		fail(p, "line longer than %d characters", num - 2);
		while ((ch = fgetc(p->f)) != EOF && ch != '\n')
			;
	}
	check_header(p, buf);
	return buf;
}

/*
 * A duration in ms: a number and s, m or h (a bare number is seconds),
 * from @min_ms to @max_ms, or 0 if @zero_ok.
 */
static int parse_duration(struct parse *p, const char *key, const char *v, uint64_t min_ms,
			  uint64_t max_ms, bool zero_ok, uint64_t *ms)
{
	unsigned long long n;
	uint64_t mul = 1000;
	char *end;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (!isdigit((unsigned char)*v) || errno || end == v)
		goto bad;
	if (!strcmp(end, "ms"))
		mul = 1;
	else if (!strcmp(end, "m"))
		mul = 60 * 1000;
	else if (!strcmp(end, "h"))
		mul = 3600 * 1000;
	else if (*end && strcmp(end, "s"))
		goto bad;
	/* n > max / mul first: n * mul cannot overflow after it. */
	if (n > max_ms / mul || (n * mul < min_ms && !(zero_ok && !n))) {
		if (min_ms % 1000)
			fail(p, "%s = %s: out of range (%s%" PRIu64 "ms to %" PRIu64 "s)", key, v,
			     zero_ok ? "0 or " : "", min_ms, max_ms / 1000);
		else
			fail(p, "%s = %s: out of range (%s%" PRIu64 "s to %" PRIu64 "s)", key, v,
			     zero_ok ? "0 or " : "", min_ms / 1000, max_ms / 1000);
		return -EINVAL;
	}
	*ms = n * mul;
	return 0;
bad:
	fail(p, "%s = %s: not a duration (a number and ms, s, m or h: 30s, 5m, 1h)", key, v);
	return -EINVAL;
}

/* ADDR:PORT, [V6ADDR]:PORT or off. */
static int parse_listen(struct parse *p, const char *v)
{
	struct sconf_config *c = p->c;
	char addr[64], buf[sizeof(struct in6_addr)];
	const char *port, *given = v;
	unsigned long n;
	char *end;
	int af = AF_INET;
	size_t len;

	if (!strcmp(v, "off")) {
		c->metrics_on = false;
		return 0;
	}
	if (*v == '[') {
		port = strstr(v, "]:");
		af = AF_INET6;
		len = port ? (size_t)(port - v - 1) : 0;
		v++;
		port = port ? port + 2 : NULL;
	} else {
		port = strrchr(v, ':');
		len = port ? (size_t)(port - v) : 0;
		port = port ? port + 1 : NULL;
	}
	if (!port || !len || len >= sizeof(addr))
		goto bad;
	memcpy(addr, v, len);
	addr[len] = '\0';
	errno = 0;
	n = strtoul(port, &end, 10);
	if (inet_pton(af, addr, buf) != 1 || !isdigit((unsigned char)*port) || *end || errno ||
	    !n || n > 65535)
		goto bad;
	c->metrics_on = true;
	snprintf(c->metrics_addr, sizeof(c->metrics_addr), "%s", addr);
	c->metrics_port = n;
	return 0;
bad:
	fail(p, "listen = %s: not ADDR:PORT, [V6ADDR]:PORT or off (numeric address, port 1-65535)",
	     given);
	return -EINVAL;
}

/* A /dev/sieve filter name: what SIEVE_IOC_CREATE takes. */
static bool filter_name_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || len >= SIEVE_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return false;
	return true;
}

static int add_filter(struct parse *p, const char *s, size_t len)
{
	struct sconf_config *c = p->c;
	unsigned int i;

	if (!filter_name_ok(s, len)) {
		fail(p, "persistent: '%.*s' is not a filter name (1-%d of A-Z a-z 0-9 . _ -)",
		     (int)len, s, SIEVE_NAME_MAX - 1);
		return -EINVAL;
	}
	for (i = 0; i < c->nr_persistent; i++)
		if (strlen(c->persistent[i]) == len && !strncmp(c->persistent[i], s, len))
			return 0;
	if (c->nr_persistent == SCONF_MAX_FILTERS) {
		fail(p, "persistent: more than %d filters", SCONF_MAX_FILTERS);
		return -E2BIG;
	}
	snprintf(c->persistent[c->nr_persistent++], SCONF_NAME_MAX, "%.*s", (int)len, s);
	return 0;
}

/* Names separated by blanks or commas; they add up over the key's lines. */
static void parse_persistent(struct parse *p, const char *v)
{
	const char *seps = " \t,";
	size_t len;

	for (v += strspn(v, seps); *v; v += strspn(v, seps)) {
		len = strcspn(v, seps);
		if (add_filter(p, v, len))
			return;
		v += len;
	}
}

static void set_agent(struct parse *p, const char *key, const char *v)
{
	struct sconf_config *c = p->c;
	uint64_t ms;

	if (!strcmp(key, "state_dir")) {
		if (*v != '/' || strlen(v) >= sizeof(c->state_dir))
			fail(p, "state_dir = %s: not an absolute path", v);
		else
			snprintf(c->state_dir, sizeof(c->state_dir), "%s", v);
	} else if (!strcmp(key, "expire_interval")) {
		if (!parse_duration(p, key, v, 1000, 3600 * 1000, false, &ms))
			c->expire_interval_ms = ms;
	} else {
		fail(p, "unknown key '%s' in [agent] (keys: state_dir, expire_interval)", key);
	}
}

static void set_store(struct parse *p, const char *key, const char *v)
{
	if (!strcmp(key, "sync")) {
		if (!strcmp(v, "full"))
			p->c->store_sync = SXDP_STORE_SYNC_FULL;
		else if (!strcmp(v, "normal"))
			p->c->store_sync = SXDP_STORE_SYNC_NORMAL;
		else
			fail(p, "sync = %s: not full or normal", v);
	} else {
		fail(p, "unknown key '%s' in [store] (keys: sync)", key);
	}
}

static void set_metrics(struct parse *p, const char *key, const char *v)
{
	uint64_t ms;

	if (!strcmp(key, "listen")) {
		parse_listen(p, v);
	} else if (!strcmp(key, "refresh_interval")) {
		if (!parse_duration(p, key, v, 1000, 3600 * 1000, false, &ms))
			p->c->metrics_refresh_ms = ms;
	} else {
		fail(p, "unknown key '%s' in [metrics] (keys: listen, refresh_interval)", key);
	}
}

static void set_filters(struct parse *p, const char *key, const char *v)
{
	uint64_t ms;

	if (!strcmp(key, "persistent")) {
		parse_persistent(p, v);
	} else if (!strcmp(key, "save_interval")) {
		if (!parse_duration(p, key, v, 1000, 24 * 3600 * 1000, true, &ms))
			p->c->save_interval_s = ms / 1000;
	} else {
		fail(p, "unknown key '%s' in [filters] (keys: persistent, save_interval)", key);
	}
}

/* HOST:PORT, [V6ADDR]:PORT or unix:PATH. */
static void parse_redis(struct parse *p, const char *v)
{
	struct sconf_fleet_config *f = &p->c->fleet;
	const char *colon, *host = v;
	unsigned long n;
	size_t len;
	char *end;

	memset(f->host, 0, sizeof(f->host));
	memset(f->unix_path, 0, sizeof(f->unix_path));
	if (!strncmp(v, "unix:", 5)) {
		if (v[5] != '/' || strlen(v + 5) >= sizeof(f->unix_path))
			goto bad;
		snprintf(f->unix_path, sizeof(f->unix_path), "%s", v + 5);
		f->on = true;
		return;
	}
	if (*v == '[') {
		colon = strstr(v, "]:");
		host = v + 1;
		len = colon ? (size_t)(colon - host) : 0;
		colon = colon ? colon + 1 : NULL;
	} else {
		colon = strrchr(v, ':');
		len = colon ? (size_t)(colon - v) : 0;
	}
	if (!colon || !len || len >= sizeof(f->host) || memchr(host, ' ', len))
		goto bad;
	errno = 0;
	n = strtoul(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end || errno || !n || n > 65535)
		goto bad;
	memcpy(f->host, host, len);
	f->port = n;
	f->on = true;
	return;
bad:
	fail(p, "redis = %s: not HOST:PORT, [V6ADDR]:PORT or unix:/PATH (port 1-65535)", v);
}

/*
 * A secret others can read is refused: the message names the file, not
 * the secret. Into @dst (@len bytes) if it is the agent's own, 0600 or
 * stricter.
 */
static void parse_secret_file(struct parse *p, const char *key, const char *v, char *dst,
			      size_t len)
{
	struct stat st;

	if (*v != '/' || strlen(v) >= len)
		fail(p, "%s = %s: not an absolute path", key, v);
	else if (stat(v, &st))
		fail(p, "%s = %s: %s", key, v, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		fail(p, "%s = %s: not a regular file", key, v);
	else if (st.st_uid != geteuid())
		fail(p, "%s = %s: owned by uid %u, must be the agent's own (uid %u)", key, v,
		     (unsigned int)st.st_uid, (unsigned int)geteuid());
	else if (st.st_mode & 077)
		fail(p, "%s = %s: mode %04o, must be 0600 or stricter", key, v,
		     (unsigned int)(st.st_mode & 07777));
	else
		snprintf(dst, len, "%s", v);
}

/* A list name into @lists (@nr of them, at most @max), once. */
static void add_list_name(struct parse *p, const char *s, size_t len,
			  char (*lists)[SXDP_LIST_NAME_MAX + 1], unsigned int *nr, unsigned int max)
{
	char name[SXDP_LIST_NAME_MAX + 1];
	unsigned int i;

	if (len > SXDP_LIST_NAME_MAX) {
		fail(p, "lists: '%.*s...' is longer than %d characters", 16, s, SXDP_LIST_NAME_MAX);
		return;
	}
	snprintf(name, sizeof(name), "%.*s", (int)len, s);
	if (!sxdp_list_name_ok(name)) {
		fail(p, "lists: '%s' is not a list name (1-%d of A-Z a-z 0-9 _ . -)", name,
		     SXDP_LIST_NAME_MAX);
		return;
	}
	for (i = 0; i < *nr; i++)
		if (!strcmp(lists[i], name))
			return;
	if (*nr == max) {
		fail(p, "lists: more than %u lists", max);
		return;
	}
	snprintf(lists[(*nr)++], sizeof(lists[0]), "%s", name);
}

static void add_fleet_list(struct parse *p, const char *s, size_t len)
{
	struct sconf_fleet_config *f = &p->c->fleet;

	add_list_name(p, s, len, f->lists, &f->nr_lists, SCONF_MAX_FLEET_LISTS);
}

/* broadest_block|broadest_allow = /V4 /V6 (the slash optional). */
static void parse_broadest(struct parse *p, const char *key, const char *v, uint8_t len[2])
{
	unsigned long n[2];
	const char *s = v;
	char *end;
	int i;

	for (i = 0; i < 2; i++) {
		s += strspn(s, " \t");
		if (*s == '/')
			s++;
		errno = 0;
		n[i] = strtoul(s, &end, 10);
		if (!isdigit((unsigned char)*s) || errno || n[i] > (i ? 128U : 32U) ||
		    (*end && !isspace((unsigned char)*end)))
			goto bad;
		s = end;
	}
	if (s[strspn(s, " \t")])
		goto bad;
	len[0] = n[0];
	len[1] = n[1];
	return;
bad:
	fail(p, "%s = %s: not two prefix lengths, IPv4 (0-32) then IPv6 (0-128): /8 /12", key, v);
}

static void add_never_block(struct parse *p, const char *s, size_t len)
{
	struct sconf_fleet_config *f = &p->c->fleet;
	struct sieve_xdp_key key;
	char text[128];
	const char *why;

	snprintf(text, sizeof(text), "%.*s", (int)len, s);
	if (len >= sizeof(text) || sxdp_parse_entry(text, &key, &why) ||
	    (key.kind != SIEVE_XDP_SRC && key.kind != SIEVE_XDP_PREFIX)) {
		fail(p, "never_block: '%s' is not an address or a prefix", text);
		return;
	}
	if (f->nr_never_block == SCONF_MAX_NEVER_BLOCK) {
		fail(p, "never_block: more than %d prefixes", SCONF_MAX_NEVER_BLOCK);
		return;
	}
	f->never_block[f->nr_never_block++] = key;
}

static void set_fleet(struct parse *p, const char *key, const char *v)
{
	struct sconf_fleet_config *f = &p->c->fleet;
	const char *seps = " \t,";
	unsigned long long n;
	uint64_t ms;
	char *end;
	size_t len;

	if (!strcmp(key, "redis")) {
		parse_redis(p, v);
	} else if (!strcmp(key, "user")) {
		if (!*v || strlen(v) >= sizeof(f->user) || strpbrk(v, " \t"))
			fail(p, "user = %s: not a Redis user name", v);
		else
			snprintf(f->user, sizeof(f->user), "%s", v);
	} else if (!strcmp(key, "password_file")) {
		parse_secret_file(p, key, v, f->password_file, sizeof(f->password_file));
	} else if (!strcmp(key, "lists")) {
		for (v += strspn(v, seps); *v; v += strspn(v, seps)) {
			len = strcspn(v, seps);
			add_fleet_list(p, v, len);
			v += len;
		}
	} else if (!strcmp(key, "never_block")) {
		for (v += strspn(v, seps); *v; v += strspn(v, seps)) {
			len = strcspn(v, seps);
			add_never_block(p, v, len);
			v += len;
		}
	} else if (!strcmp(key, "broadest_block")) {
		parse_broadest(p, key, v, f->broadest_block);
	} else if (!strcmp(key, "broadest_allow")) {
		parse_broadest(p, key, v, f->broadest_allow);
	} else if (!strcmp(key, "retry_max")) {
		if (!parse_duration(p, key, v, 1000, 3600 * 1000, false, &ms))
			f->retry_max_ms = ms;
	} else if (!strcmp(key, "stream_maxlen")) {
		errno = 0;
		n = strtoull(v, &end, 10);
		if (!isdigit((unsigned char)*v) || *end || errno || n < 1000 || n > 1000000000)
			fail(p, "stream_maxlen = %s: not a number from 1000 to 1000000000", v);
		else
			f->stream_maxlen = n;
	} else {
		fail(p, "unknown key '%s' in [fleet] (keys: redis, user, password_file, lists, "
		     "retry_max, stream_maxlen, broadest_block, broadest_allow, never_block)", key);
	}
}

int sconf_parse_share(const char *v, uint32_t *ppm)
{
	double x;
	char *end;

	errno = 0;
	x = strtod(v, &end);
	if (!isdigit((unsigned char)*v) || errno || end == v)
		return -EINVAL;
	if (*end == '%') {
		x /= 100;
		end++;
	}
	if (*end || !(x >= 0 && x <= 1))
		return -EINVAL;
	*ppm = (uint32_t)(x * 1000000 + 0.5);
	return 0;
}

static void set_feed(struct parse *p, const char *key, const char *v)
{
	struct sconf_feed_config *f = p->feed;
	unsigned long long n;
	uint64_t ms;
	char *end;

	if (!strcmp(key, "url")) {
		if (strlen(v) >= sizeof(f->url) || strpbrk(v, " \t") ||
		    (strncmp(v, "http://", 7) && strncmp(v, "https://", 8) && strncmp(v, "file://", 7)))
			fail(p, "url = %s: not an http://, https:// or file:// URL", v);
		else
			snprintf(f->url, sizeof(f->url), "%s", v);
	} else if (!strcmp(key, "format")) {
		if (sxdp_format_parse(v, &f->format))
			fail(p, "format = %s: not auto, plain, netset, drop or ipset", v);
	} else if (!strcmp(key, "list")) {
		if (!sxdp_list_name_ok(v))
			fail(p, "list = %s: not a list name (1-%d of A-Z a-z 0-9 _ . -)", v,
			     SXDP_LIST_NAME_MAX);
		else
			snprintf(f->list, sizeof(f->list), "%s", v);
	} else if (!strcmp(key, "interval")) {
		if (!parse_duration(p, key, v, 1000, 168 * 3600 * 1000ULL, false, &ms))
			f->interval_s = ms / 1000;
	} else if (!strcmp(key, "timeout")) {
		if (!parse_duration(p, key, v, 1000, 3600 * 1000, false, &ms))
			f->timeout_s = ms / 1000;
	} else if (!strcmp(key, "min_entries")) {
		errno = 0;
		n = strtoull(v, &end, 10);
		if (!isdigit((unsigned char)*v) || *end || errno || n > 1000000000)
			fail(p, "min_entries = %s: not a number from 0 to 1000000000", v);
		else
			f->min_entries = n;
	} else if (!strcmp(key, "max_shrink")) {
		if (sconf_parse_share(v, &f->max_shrink_ppm))
			fail(p, "max_shrink = %s: not a fraction from 0 to 1 or a percentage (50%%)",
			     v);
	} else {
		fail(p, "unknown key '%s' in [feed %s] (keys: url, format, list, interval, timeout, "
		     "min_entries, max_shrink)", key, f->name);
	}
}

static void set_attach(struct parse *p, const char *key, const char *v)
{
	struct sconf_attach_config *a = p->attach;
	const char *filter;
	uint32_t flag;

	if (!strcmp(key, "list")) {
		if (!sxdp_list_name_ok(v))
			fail(p, "list = %s: not a list name (1-%d of A-Z a-z 0-9 _ . -)", v,
			     SXDP_LIST_NAME_MAX);
		else
			snprintf(a->list, sizeof(a->list), "%s", v);
	} else if (!strcmp(key, "backend")) {
		int ret = sxdp_filter_parse(v, &filter);

		if (strlen(v) >= sizeof(a->backend) || ret < 0 ||
		    (ret > 0 && sxdp_backend_parse(v, &flag)))
			fail(p, "backend = %s: not bloom-map, blocked or filter:NAME", v);
		else
			snprintf(a->backend, sizeof(a->backend), "%s", v);
	} else if (!strcmp(key, "mode")) {
		if (strcmp(v, "native") && strcmp(v, "generic"))
			fail(p, "mode = %s: not native or generic", v);
		else
			snprintf(a->mode, sizeof(a->mode), "%s", v);
	} else {
		fail(p, "unknown key '%s' in [attach %s] (keys: list, backend, mode)", key,
		     a->iface);
	}
}

/* ---- [crowdsec] ---- */

/* "http://h:8080/" and "http://h:8080" are one URL. */
static void len_trim_slash(char *url)
{
	size_t len = strlen(url);

	while (len && url[len - 1] == '/')
		url[--len] = '\0';
}

/* A CrowdSec word (an origin, a type): what a metric label may carry. */
bool sconf_cs_word_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || len > SCONF_CS_WORD_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.:-", s[i]))
			return false;
	return true;
}

/* http:// or https://, a host, no blank: what libcurl is handed. */
static void parse_lapi_url(struct parse *p, const char *v)
{
	struct sconf_crowdsec_config *cs = &p->c->crowdsec;
	const char *host = !strncmp(v, "http://", 7) ? v + 7 : !strncmp(v, "https://", 8) ? v + 8 : NULL;

	if (!host || !*host || *host == '/' || strpbrk(v, " \t") ||
	    strlen(v) >= sizeof(cs->lapi_url)) {
		fail(p, "lapi_url = %s: not http://HOST:PORT or https://HOST:PORT", v);
		return;
	}
	snprintf(cs->lapi_url, sizeof(cs->lapi_url), "%s", v);
	/* The paths are appended to it: one '/' between them. */
	len_trim_slash(cs->lapi_url);
	cs->on = true;
}

static void parse_scopes(struct parse *p, const char *v)
{
	const char *seps = " \t,";
	unsigned int mask = 0;
	size_t len;

	for (v += strspn(v, seps); *v; v += strspn(v, seps)) {
		len = strcspn(v, seps);
		if (len == 2 && !strncasecmp(v, "ip", 2))
			mask |= SCONF_CS_SCOPE_IP;
		else if (len == 5 && !strncasecmp(v, "range", 5))
			mask |= SCONF_CS_SCOPE_RANGE;
		else {
			fail(p, "scopes: '%.*s' is not Ip or Range", (int)len, v);
			return;
		}
		v += len;
	}
	if (!mask)
		fail(p, "scopes: none (Ip, Range or both)");
	p->c->crowdsec.scopes = mask;
}

/* The words of @v into @words (replacing what was there). */
static void parse_types(struct parse *p, const char *v)
{
	struct sconf_crowdsec_config *cs = &p->c->crowdsec;
	const char *seps = " \t,";
	size_t len;

	cs->nr_types = 0;
	for (v += strspn(v, seps); *v; v += strspn(v, seps)) {
		len = strcspn(v, seps);
		if (!sconf_cs_word_ok(v, len)) {
			fail(p, "types: '%.*s' is not a decision type (1-%d of A-Z a-z 0-9 _ . : -)",
			     (int)len, v, SCONF_CS_WORD_MAX);
			return;
		}
		if (cs->nr_types == SCONF_MAX_CS_TYPES) {
			fail(p, "types: more than %d", SCONF_MAX_CS_TYPES);
			return;
		}
		snprintf(cs->types[cs->nr_types++], sizeof(cs->types[0]), "%.*s", (int)len, v);
		v += len;
	}
	if (!cs->nr_types)
		fail(p, "types: none (ban is CrowdSec's word for a block)");
}

/* NAME takes an origin, !NAME skips it; they add up. */
static void parse_origins(struct parse *p, const char *v)
{
	struct sconf_crowdsec_config *cs = &p->c->crowdsec;
	const char *seps = " \t,";
	bool skip;
	size_t len;

	for (v += strspn(v, seps); *v; v += strspn(v, seps)) {
		len = strcspn(v, seps);
		skip = *v == '!';
		if (!sconf_cs_word_ok(v + skip, len - skip)) {
			fail(p, "origins: '%.*s' is not NAME or !NAME (1-%d of A-Z a-z 0-9 _ . : -)",
			     (int)len, v, SCONF_CS_WORD_MAX);
			return;
		}
		if (cs->nr_origins == SCONF_MAX_CS_ORIGINS) {
			fail(p, "origins: more than %d", SCONF_MAX_CS_ORIGINS);
			return;
		}
		cs->origins[cs->nr_origins].skip = skip;
		snprintf(cs->origins[cs->nr_origins++].name, sizeof(cs->origins[0].name), "%.*s",
			 (int)(len - skip), v + skip);
		v += len;
	}
}

static void set_crowdsec(struct parse *p, const char *key, const char *v)
{
	struct sconf_crowdsec_config *cs = &p->c->crowdsec;
	const char *seps = " \t,";
	uint64_t ms;
	size_t len;

	if (!strcmp(key, "lapi_url")) {
		parse_lapi_url(p, v);
	} else if (!strcmp(key, "api_key_file")) {
		parse_secret_file(p, key, v, cs->api_key_file, sizeof(cs->api_key_file));
	} else if (!strcmp(key, "lists")) {
		for (v += strspn(v, seps); *v; v += strspn(v, seps)) {
			len = strcspn(v, seps);
			add_list_name(p, v, len, cs->lists, &cs->nr_lists, SCONF_MAX_CS_LISTS);
			v += len;
		}
	} else if (!strcmp(key, "update_frequency")) {
		if (!parse_duration(p, key, v, 100, 3600 * 1000, false, &ms))
			cs->update_frequency_ms = ms;
	} else if (!strcmp(key, "scopes")) {
		parse_scopes(p, v);
	} else if (!strcmp(key, "types")) {
		parse_types(p, v);
	} else if (!strcmp(key, "origins")) {
		parse_origins(p, v);
	} else {
		fail(p, "unknown key '%s' in [crowdsec] (keys: lapi_url, api_key_file, lists, "
		     "update_frequency, scopes, types, origins)", key);
	}
}

static void set_value(struct parse *p, const char *section, const char *key, const char *v)
{
	if (p->feed)
		set_feed(p, key, v);
	else if (p->attach)
		set_attach(p, key, v);
	else if (!*section)
		fail(p, "%s: a key before any [section]", key);
	else if (!strcmp(section, "agent"))
		set_agent(p, key, v);
	else if (!strcmp(section, "store"))
		set_store(p, key, v);
	else if (!strcmp(section, "metrics"))
		set_metrics(p, key, v);
	else if (!strcmp(section, "filters"))
		set_filters(p, key, v);
	else if (!strcmp(section, "fleet"))
		set_fleet(p, key, v);
	else if (!strcmp(section, "crowdsec"))
		set_crowdsec(p, key, v);
	/* else: an unknown section, reported at its header */
}

/*
 * Where a key of the file came from, for `sieve agent --check`: its line
 * (every line of a key whose values add up, the last of any other) and
 * its value as written, units and all.
 */
static void note_origin(struct parse *p, const char *section, const char *key, const char *v)
{
	int id = sconf_setting_find(section, key);
	struct sconf_origin *o;

	if (id < 0)
		return;
	o = &p->c->origin[id];
	if (o->from != SCONF_FROM_FILE || !sconf_settings[id].adds_up)
		o->nr_lines = 0;
	o->from = SCONF_FROM_FILE;
	if (o->nr_lines < SCONF_ORIGIN_LINES)
		o->lines[o->nr_lines] = p->line;
	o->nr_lines++;
	snprintf(o->text, sizeof(o->text), "%s", v);
}

/* inih's handler: returns 1 always; errors are kept in @p with their line. */
static int on_key(void *user, const char *section, const char *key, const char *value)
{
	struct parse *p = user;

	set_value(p, section, key, value);
	note_origin(p, section, key, value);
	return 1;
}

/*
 * The defaults are the table's values as the file would write them, read
 * by the file's own parser: what --check prints as a default is what is
 * in force.
 */
void sconf_config_defaults(struct sconf_config *c)
{
	struct parse p = { .c = c };
	int i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < SCONF_NR_SETTINGS; i++)
		if (sconf_settings[i].dflt[0])
			set_value(&p, sconf_settings[i].section, sconf_settings[i].key,
				  sconf_settings[i].dflt);
	/* A default the parser refuses is a bug of this program, never of a file. */
	if (p.err_line || p.err[0])
		abort();
}

int sconf_config_set(struct sconf_config *c, int id, const char *value, char *err,
		      size_t errlen)
{
	struct parse p = { .c = c };

	set_value(&p, sconf_settings[id].section, sconf_settings[id].key, value);
	if (!p.err[0])
		return 0;
	snprintf(err, errlen, "%s", p.err);
	return -EINVAL;
}

int sconf_config_load(const char *path, struct sconf_config *c, char *err, size_t errlen)
{
	struct parse p = { .path = path };
	struct sconf_config next;
	int line;

	p.f = fopen(path, "re");
	if (!p.f) {
		int ret = -errno;

		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	sconf_config_defaults(&next);
	p.c = &next;
	line = ini_parse_stream(read_line, &p, on_key, &p);
	fclose(p.f);
	/* inih's own errors are syntax: a line neither a key, a header nor a comment. */
	if (line > 0 && (!p.err_line || line < p.err_line)) {
		p.err_line = line;
		snprintf(p.err, sizeof(p.err), "not KEY = VALUE, [SECTION] or a comment");
	} else if (line < 0 && !p.err_line) {
		snprintf(err, errlen, "%s: %s", path, line == -2 ? "out of memory" : "cannot read it");
		return line == -2 ? -ENOMEM : -EIO;
	}
	if (p.err_line) {
		snprintf(err, errlen, "%s:%d: %s", path, p.err_line, p.err);
		return -EINVAL;
	}
	/* Checked once the whole section is read: the keys may come in any order. */
	if (next.fleet.on && !next.fleet.nr_lists) {
		snprintf(err, errlen, "%s: [fleet] redis is set but lists is not", path);
		return -EINVAL;
	}
	if (!next.fleet.on && (next.fleet.nr_lists || next.fleet.password_file[0])) {
		snprintf(err, errlen, "%s: [fleet] lists or password_file without redis", path);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < next.nr_feeds; i++)
		if (!next.feeds[i].url[0]) {
			snprintf(err, errlen, "%s:%d: [feed %s] has no url", path,
				 next.feeds[i].line, next.feeds[i].name);
			return -EINVAL;
		}

	if (next.crowdsec.on && (!next.crowdsec.nr_lists || !next.crowdsec.api_key_file[0])) {
		snprintf(err, errlen, "%s: [crowdsec] lapi_url is set but %s is not", path,
			 !next.crowdsec.nr_lists ? "lists" : "api_key_file");
		return -EINVAL;
	}
	if (!next.crowdsec.on && (next.crowdsec.nr_lists || next.crowdsec.api_key_file[0])) {
		snprintf(err, errlen, "%s: [crowdsec] lists or api_key_file without lapi_url", path);
		return -EINVAL;
	}
	*c = next;
	return 0;
}

void sconf_config_print_sections(FILE *f, const struct sconf_config *c)
{
	const struct sconf_feed_config *fd;
	const struct sconf_attach_config *a;
	char pct[24];
	unsigned int i;
	size_t len;

	for (i = 0; i < c->nr_feeds; i++) {
		fd = &c->feeds[i];
		fprintf(f, "\n[feed %s]  ; file %s:%d\n", fd->name, c->file.path, fd->line);
		fprintf(f, "url = %s\nformat = %s\nlist = %s\ninterval = %us\ntimeout = %us\n"
			"min_entries = %" PRIu64 "\n", fd->url, sxdp_format_name(fd->format), fd->list,
			fd->interval_s, fd->timeout_s, fd->min_entries);
		/* A percentage, as the file may write it: 50%, 12.5%. */
		snprintf(pct, sizeof(pct), "%u.%04u", fd->max_shrink_ppm / 10000,
			 fd->max_shrink_ppm % 10000);
		/* "%u.%04u" has a '.': the loop stops there at the latest. */
		for (len = strlen(pct); pct[len - 1] == '0'; len--)
			pct[len - 1] = '\0';
		if (pct[len - 1] == '.')
			pct[len - 1] = '\0';
		fprintf(f, "max_shrink = %s%%\n", pct);
	}
	for (i = 0; i < c->nr_attach; i++) {
		a = &c->attach[i];
		fprintf(f, "\n[attach %s]  ; file %s:%d\n", a->iface, c->file.path, a->line);
		fprintf(f, "list = %s\nbackend = %s\nmode = %s\n", a->list,
			a->backend[0] ? a->backend : "bloom-map",
			a->mode[0] ? a->mode : "native where the driver has it");
	}
}

/* The rule parse_secret_file applies, on the file opened (sconf_read_secret). */
int sconf_read_secret(const char *what, const char *path, char *buf, size_t len, char *err,
		       size_t errlen)
{
	struct stat st;
	FILE *f;
	int ret = 0;

	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f || fstat(fileno(f), &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s %s: not a regular file", what, path);
		ret = -EACCES;
	} else if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s %s: owned by uid %u, must be the agent's own (uid %u)",
			 what, path, (unsigned int)st.st_uid, (unsigned int)geteuid());
		ret = -EACCES;
	} else if (st.st_mode & 077) {
		snprintf(err, errlen, "%s %s: mode %04o, must be 0600 or stricter", what, path,
			 (unsigned int)(st.st_mode & 07777));
		ret = -EACCES;
	} else if (!fgets(buf, len, f)) {
		buf[0] = '\0';
	}
	buf[strcspn(buf, "\r\n")] = '\0';
out:
	if (f)
		fclose(f);
	return ret;
}
