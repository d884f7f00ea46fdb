// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's metrics (userspace/agent/metrics.c) without an interface or
 * the module: a render over a store made here (lists of every kind and of
 * several origins, an attachment whose pins are missing), the entry-count
 * cache, the text of a made-up scrape with counters and /dev/sieve
 * filters, and the HTTP server on a free loopback port. Every exposition
 * is also checked for the format's rules (each family once, HELP and TYPE
 * before its samples, no series twice). promtool checks the real thing in
 * tests/e2e (case metrics).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>

#include "unit.h"
#include "metrics.h"
#include "xdp.h"

struct mdir {
	char base[64];
	char dir[96];
};

static bool mdir_make(struct sieve_test *t, struct mdir *d)
{
	strcpy(d->base, "/tmp/sieve-metrics-XXXXXX");
	if (!mkdtemp(d->base)) {
		CHECKF(t, 0, "mkdtemp: %s", strerror(errno));
		return false;
	}
	snprintf(d->dir, sizeof(d->dir), "%s/state", d->base);
	return true;
}

static void mdir_clean(struct mdir *d)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->base);
	if (system(cmd))
		fprintf(stderr, "%s failed\n", cmd);
}

/* Adds the entries of the NULL-terminated @texts to @list with @origin. */
static void add(struct sieve_test *t, struct sxdp_store *s, const char *list, bool allow,
		const char *origin, const char *const *texts)
{
	struct sxdp_store_attrs a = { .origin = origin, .now = 1000, .allow = allow };
	struct sieve_xdp_key keys[8];
	char err[256] = "";
	const char *why;
	size_t n, added;
	int ret;

	for (n = 0; texts[n]; n++)
		CHECKF(t, !sxdp_parse_entry(texts[n], &keys[n], &why), "parse %s: %s", texts[n],
		       why);
	ret = sxdp_store_add(s, list, keys, n, &a, &added, err, sizeof(err));
	CHECKF(t, !ret && added == n, "add to %s: %d %s", list, ret, err);
}

#define ENTRIES(...)	((const char *const[]){ __VA_ARGS__, NULL })

static void config(struct sconf_config *c, const char *dir)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", dir);
	c->metrics_on = true;
	snprintf(c->metrics_addr, sizeof(c->metrics_addr), "127.0.0.1");
}

/* Whether @text has the line @line, whole. */
static bool has_line(const char *text, const char *line)
{
	size_t len = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[len] == '\n')
			return true;
	return false;
}

#define CHECK_LINE(t, text, line) \
	CHECKF(t, has_line(text, line), "no line '%s' in:\n%s", line, text)
#define CHECK_NO(t, text, part) \
	CHECKF(t, !strstr(text, part), "'%s' should not be there:\n%s", part, text)

/*
 * The format's rules, on a whole exposition: every family's HELP, then its
 * TYPE, then its samples, all together; a family never comes back; no
 * sample line twice (same name and labels); every line ends in '\n'.
 */
static void check_exposition(struct sieve_test *t, const char *text)
{
	char *copy = strdup(text), *line, *save = NULL, fam[128] = "", seen[64][128];
	char *series[512];
	size_t nseen = 0, nseries = 0, i, len = strlen(text);
	int state = 0;	/* 0 HELP next, 1 TYPE next, 2 samples */

	CHECKF(t, len && text[len - 1] == '\n', "the text does not end in a newline");
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128];

		if (!strncmp(line, "# HELP ", 7)) {
			sscanf(line + 7, "%127s", fam);
			for (i = 0; i < nseen; i++)
				CHECKF(t, strcmp(seen[i], fam), "family %s twice", fam);
			if (nseen < 64)
				snprintf(seen[nseen++], sizeof(seen[0]), "%s", fam);
			CHECKF(t, state != 1, "HELP of %s after a HELP", fam);
			state = 1;
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			CHECKF(t, state == 1 && !strncmp(line + 7, fam, strlen(fam)) &&
			       line[7 + strlen(fam)] == ' ', "TYPE without its HELP: %s", line);
			state = 2;
			continue;
		}
		sscanf(line, "%127[^{ ]", name);
		CHECKF(t, state == 2 && !strcmp(name, fam), "sample outside its family %s: %s",
		       fam, line);
		*strrchr(line, ' ') = '\0';
		for (i = 0; i < nseries; i++)
			CHECKF(t, strcmp(series[i], line), "series twice: %s", line);
		if (nseries < 512)
			series[nseries++] = line;
	}
	free(copy);
}

static char *render(struct sieve_test *t, const struct sconf_config *c,
		    const struct sagent_stats *st)
{
	char *text = NULL;
	size_t len = 0;
	int ret = sagent_metrics_render(c, st, &text, &len);

	CHECKF(t, !ret && text && strlen(text) == len, "render: %d", ret);
	if (text)
		check_exposition(t, text);
	return text;
}

/* A store of two lists: entries by kind, origin and action; an interface without pins. */
static void sieve_unit_metrics_store(struct sieve_test *t)
{
	struct sxdp_attachment a = { .netns = sxdp_netns(), .iface = "ghost0", .list = "default",
				     .mode = "generic", .backend = "bloom-map" };
	static struct sagent_stats st;
	struct sconf_config c;
	struct sxdp_store *s;
	char err[256] = "", *text;
	struct mdir d;

	if (!mdir_make(t, &d))
		return;
	/* No module here, wherever the suite runs. */
	setenv("SIEVE_DEVICE", "/nonexistent/sieve", 1);
	CHECKF(t, !sxdp_store_open(d.dir, &s, err, sizeof(err)), "open: %s", err);
	if (t->nfail)
		goto out;
	add(t, s, "default", false, "cli", ENTRIES("192.0.2.1", "192.0.2.2", "198.51.100.0/24"));
	add(t, s, "default", false, "spamhaus-drop", ENTRIES("203.0.113.0/24", "10.0.0.0/8"));
	add(t, s, "default", false, "cli", ENTRIES("tcp:192.0.2.10:22",
						   "udp:198.51.100.7:5000,192.0.2.10:53"));
	add(t, s, "default", true, "cli", ENTRIES("192.0.2.99"));
	/* Origins are free text: a quote, a backslash and a newline are escaped. */
	add(t, s, "edge", false, "feed \"x\"\\y\nz", ENTRIES("2001:db8::1"));
	CHECKF(t, !sxdp_store_attach_set(s, &a, err, sizeof(err)), "attach_set: %s", err);
	sxdp_store_close(s);

	atomic_store(&st.rebuilds, 3);
	atomic_store(&st.rebuild_ns, 1500000000);
	atomic_store(&st.expired, 7);
	st.started_at = 1700000000;
	config(&c, d.dir);
	text = render(t, &c, &st);
	if (!text)
		goto out;
	CHECK_LINE(t, text, "sieve_store_up 1");
	/* Entries by list, action, kind and origin: block before allow, kinds in order. */
	CHECK_LINE(t, text, "# TYPE sieve_list_entries gauge");
	CHECK_LINE(t, text, "sieve_list_entries{list=\"default\",action=\"block\",kind=\"source\","
			    "origin=\"cli\"} 2");
	CHECK_LINE(t, text, "sieve_list_entries{list=\"default\",action=\"block\",kind=\"prefix\","
			    "origin=\"cli\"} 1");
	CHECK_LINE(t, text, "sieve_list_entries{list=\"default\",action=\"block\",kind=\"prefix\","
			    "origin=\"spamhaus-drop\"} 2");
	CHECK_LINE(t, text, "sieve_list_entries{list=\"default\",action=\"block\",kind=\"service\","
			    "origin=\"cli\"} 1");
	CHECK_LINE(t, text, "sieve_list_entries{list=\"default\",action=\"block\",kind=\"flow\","
			    "origin=\"cli\"} 1");
	CHECK_LINE(t, text, "sieve_list_entries{list=\"default\",action=\"allow\",kind=\"source\","
			    "origin=\"cli\"} 1");
	CHECK_LINE(t, text, "sieve_list_entries{list=\"edge\",action=\"block\",kind=\"source\","
			    "origin=\"feed \\\"x\\\"\\\\y\\nz\"} 1");
	/* One version a transaction that changed the list. */
	CHECK_LINE(t, text, "sieve_list_version{list=\"default\"} 4");
	CHECK_LINE(t, text, "sieve_list_version{list=\"edge\"} 1");
	/* The attachment without pins: down, and nothing else of it. */
	CHECK_LINE(t, text, "sieve_xdp_up{iface=\"ghost0\"} 0");
	CHECK_NO(t, text, "sieve_xdp_packets_total");
	CHECK_NO(t, text, "sieve_xdp_info");
	CHECK_LINE(t, text, "sieve_agent_rebuilds_total 3");
	CHECK_LINE(t, text, "sieve_agent_rebuild_seconds_total 1.5");
	CHECK_LINE(t, text, "sieve_agent_expired_entries_total 7");
	CHECK_LINE(t, text, "sieve_agent_start_time_seconds 1700000000");
	CHECK_LINE(t, text, "# TYPE sieve_agent_rebuild_seconds_total counter");
	CHECK_LINE(t, text, "sieve_dev_up 0");
	CHECK_NO(t, text, "sieve_filter_");
	free(text);

	/* Without the agent's counters (a driver), no sieve_agent_ family. */
	text = render(t, &c, NULL);
	if (text)
		CHECK_NO(t, text, "sieve_agent_");
	free(text);
out:
	sagent_metrics_forget();
	unsetenv("SIEVE_DEVICE");
	mdir_clean(&d);
}

/* A store that cannot be opened: sieve_store_up 0, no list, the rest still there. */
static void sieve_unit_metrics_store_down(struct sieve_test *t)
{
	struct sconf_config c;
	char db[160], *text;
	struct mdir d;
	FILE *f;

	if (!mdir_make(t, &d))
		return;
	setenv("SIEVE_DEVICE", "/nonexistent/sieve", 1);
	/* Not a database: the store refuses it and leaves it alone. */
	mkdir(d.dir, 0700);
	snprintf(db, sizeof(db), "%s/%s", d.dir, SXDP_STORE_FILE);
	f = fopen(db, "w");
	CHECKF(t, f, "%s: %s", db, strerror(errno));
	if (f) {
		fputs("not a database, and long enough for SQLite to say so at once\n", f);
		fclose(f);
	}
	config(&c, d.dir);
	text = render(t, &c, NULL);
	if (text) {
		CHECK_LINE(t, text, "sieve_store_up 0");
		CHECK_NO(t, text, "sieve_list_");
		CHECK_LINE(t, text, "sieve_dev_up 0");
	}
	free(text);
	sagent_metrics_forget();
	unsetenv("SIEVE_DEVICE");
	mdir_clean(&d);
}

/*
 * Counts are kept per (store, list, version): a change the version does
 * not show (made behind the store's back here) is not seen; one that
 * bumps it is.
 */
static void sieve_unit_metrics_count_cache(struct sieve_test *t)
{
	struct sconf_config c;
	struct sxdp_store *s;
	char err[256] = "", db[160], *text;
	sqlite3 *raw;
	struct mdir d;

	if (!mdir_make(t, &d))
		return;
	setenv("SIEVE_DEVICE", "/nonexistent/sieve", 1);
	CHECKF(t, !sxdp_store_open(d.dir, &s, err, sizeof(err)), "open: %s", err);
	if (t->nfail)
		goto out;
	add(t, s, "default", false, "cli", ENTRIES("192.0.2.1", "192.0.2.2"));
	config(&c, d.dir);
	free(render(t, &c, NULL));

	snprintf(db, sizeof(db), "%s/%s", d.dir, SXDP_STORE_FILE);
	CHECKF(t, sqlite3_open(db, &raw) == SQLITE_OK &&
	       sqlite3_exec(raw, "UPDATE entries SET origin = 'sneaky'", NULL, NULL, NULL) ==
	       SQLITE_OK, "update behind the store's back");
	sqlite3_close(raw);
	text = render(t, &c, NULL);
	if (text) {
		/* The cached counts: the version did not move. */
		CHECK_LINE(t, text, "sieve_list_entries{list=\"default\",action=\"block\","
				    "kind=\"source\",origin=\"cli\"} 2");
		CHECK_NO(t, text, "sneaky");
	}
	free(text);

	add(t, s, "default", false, "cli", ENTRIES("192.0.2.3"));
	text = render(t, &c, NULL);
	if (text) {
		/* Counted again at the new version. */
		CHECK_LINE(t, text, "sieve_list_entries{list=\"default\",action=\"block\","
				    "kind=\"source\",origin=\"cli\"} 1");
		CHECK_LINE(t, text, "sieve_list_entries{list=\"default\",action=\"block\","
				    "kind=\"source\",origin=\"sneaky\"} 2");
	}
	free(text);
	sxdp_store_close(s);
out:
	sagent_metrics_forget();
	unsetenv("SIEVE_DEVICE");
	mdir_clean(&d);
}

/* The text of a made-up scrape: an interface's counters and config, filters of the module. */
static void sieve_unit_metrics_format(struct sieve_test *t)
{
	struct sagent_mx_iface ifs[2] = { 0 };
	struct sieve_info fl[2] = { 0 };
	struct sagent_mx_scrape s = { .store_up = true, .ifaces = ifs, .nifaces = 2,
				      .dev_up = true, .filters = fl, .nfilters = 2 };
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	/* Interface names may hold a quote or a backslash. */
	snprintf(ifs[0].a.iface, sizeof(ifs[0].a.iface), "e\"th\\0");
	snprintf(ifs[0].a.list, sizeof(ifs[0].a.list), "default");
	ifs[0].read = true;
	snprintf(ifs[0].r.mode, sizeof(ifs[0].r.mode), "native");
	ifs[0].r.cfg.flags = SIEVE_XDP_F_EXACT | SIEVE_XDP_F_BLOCKED;
	ifs[0].r.cfg.gen_seq = 5;
	ifs[0].r.cfg.store_version = 9;
	ifs[0].r.cfg.entries = 1000;
	ifs[0].r.cfg.keys = 1200;
	ifs[0].r.cfg.capacity = 65536;
	ifs[0].r.cfg.fpp_ppb = 1000;
	ifs[0].r.fpr = 2.5e-9;
	ifs[0].r.filter_bytes = 131072;
	ifs[0].r.exact_bytes = 4194304;
	for (i = 0; i < SIEVE_XDP_NR_COUNTERS; i++) {
		ifs[0].r.stats.c[i].packets = 100 + i;
		ifs[0].r.stats.c[i].bytes = 10000 + i;
	}
	/* Maps present, program gone: counters still shown, not up. */
	snprintf(ifs[1].a.iface, sizeof(ifs[1].a.iface), "eth1");
	ifs[1].read = true;
	snprintf(ifs[1].r.mode, sizeof(ifs[1].r.mode), "none");

	snprintf(fl[0].name, sizeof(fl[0].name), "seen");
	fl[0].geo.type = SIEVE_CUCKOO;
	fl[0].items = 42;
	fl[0].capacity = 1000;
	fl[0].nlayers = 1;
	fl[0].fill_ppm = 250000;
	fl[0].fpr_ppb = 3000;
	fl[0].fpp_ppb = 10000;
	fl[0].memory_bytes = 8192;
	fl[0].snapshot_bytes = 4096;
	fl[0].inserted = 50;
	fl[0].deleted = 8;
	fl[0].queries = 1000;
	fl[0].hits = 60;
	snprintf(fl[1].name, sizeof(fl[1].name), "urls");
	fl[1].geo.type = SIEVE_BLOOM;
	fl[1].create_flags = SIEVE_CREATE_SCALABLE;
	fl[1].nlayers = 3;

	f = open_memstream(&text, &len);
	CHECKF(t, f && !sagent_metrics_format(f, &s), "format");
	if (f)
		fclose(f);
	if (!text)
		return;
	check_exposition(t, text);
	CHECK_LINE(t, text, "sieve_xdp_up{iface=\"e\\\"th\\\\0\"} 1");
	CHECK_LINE(t, text, "sieve_xdp_up{iface=\"eth1\"} 0");
	CHECK_LINE(t, text, "sieve_xdp_info{iface=\"e\\\"th\\\\0\",list=\"default\",mode=\"native\","
			    "backend=\"blocked\",exact=\"true\",fail_closed=\"false\"} 1");
	CHECK_LINE(t, text, "# TYPE sieve_xdp_packets_total counter");
	CHECK_LINE(t, text, "sieve_xdp_packets_total{iface=\"e\\\"th\\\\0\",verdict=\"pass\","
			    "kind=\"none\"} 101");
	CHECK_LINE(t, text, "sieve_xdp_packets_total{iface=\"e\\\"th\\\\0\",verdict=\"drop\","
			    "kind=\"source\"} 102");
	CHECK_LINE(t, text, "sieve_xdp_packets_total{iface=\"e\\\"th\\\\0\",verdict=\"drop\","
			    "kind=\"flow\"} 105");
	CHECK_LINE(t, text, "sieve_xdp_packets_total{iface=\"e\\\"th\\\\0\",verdict=\"drop\","
			    "kind=\"malformed\"} 106");
	CHECK_LINE(t, text, "sieve_xdp_packets_total{iface=\"e\\\"th\\\\0\",verdict=\"drop\","
			    "kind=\"unparsed\"} 112");
	CHECK_LINE(t, text, "sieve_xdp_bytes_total{iface=\"e\\\"th\\\\0\",verdict=\"drop\","
			    "kind=\"prefix\"} 10003");
	CHECK_LINE(t, text, "sieve_xdp_filter_hits_total{iface=\"e\\\"th\\\\0\"} 107");
	CHECK_LINE(t, text, "sieve_xdp_false_positives_total{iface=\"e\\\"th\\\\0\"} 108");
	CHECK_LINE(t, text, "sieve_xdp_malformed_packets_total{iface=\"e\\\"th\\\\0\"} 109");
	CHECK_LINE(t, text, "sieve_xdp_non_ip_packets_total{iface=\"e\\\"th\\\\0\"} 110");
	CHECK_LINE(t, text, "sieve_xdp_allowed_packets_total{iface=\"e\\\"th\\\\0\"} 111");
	CHECK_LINE(t, text, "sieve_xdp_allowed_bytes_total{iface=\"e\\\"th\\\\0\"} 10011");
	CHECK_LINE(t, text, "sieve_xdp_packets_total{iface=\"eth1\",verdict=\"pass\","
			    "kind=\"none\"} 0");
	CHECK_LINE(t, text, "# TYPE sieve_xdp_generation gauge");
	CHECK_LINE(t, text, "sieve_xdp_generation{iface=\"e\\\"th\\\\0\"} 5");
	CHECK_LINE(t, text, "sieve_xdp_maps_version{iface=\"e\\\"th\\\\0\"} 9");
	CHECK_LINE(t, text, "sieve_xdp_entries{iface=\"e\\\"th\\\\0\"} 1000");
	CHECK_LINE(t, text, "sieve_xdp_keys{iface=\"e\\\"th\\\\0\"} 1200");
	CHECK_LINE(t, text, "sieve_xdp_capacity{iface=\"e\\\"th\\\\0\"} 65536");
	CHECK_LINE(t, text, "sieve_xdp_filter_memory_bytes{iface=\"e\\\"th\\\\0\"} 131072");
	CHECK_LINE(t, text, "sieve_xdp_exact_memory_bytes{iface=\"e\\\"th\\\\0\"} 4194304");
	CHECK_LINE(t, text, "sieve_xdp_expected_false_positive_ratio{iface=\"e\\\"th\\\\0\"} "
			    "2.5e-09");
	CHECK_LINE(t, text, "sieve_xdp_target_false_positive_ratio{iface=\"e\\\"th\\\\0\"} 1e-06");
	CHECK_LINE(t, text, "sieve_dev_up 1");
	CHECK_LINE(t, text, "sieve_filter_info{filter=\"seen\",type=\"cuckoo\","
			    "scalable=\"false\"} 1");
	CHECK_LINE(t, text, "sieve_filter_info{filter=\"urls\",type=\"bloom\","
			    "scalable=\"true\"} 1");
	CHECK_LINE(t, text, "sieve_filter_items{filter=\"seen\"} 42");
	CHECK_LINE(t, text, "sieve_filter_capacity{filter=\"seen\"} 1000");
	CHECK_LINE(t, text, "sieve_filter_layers{filter=\"urls\"} 3");
	CHECK_LINE(t, text, "sieve_filter_fill_ratio{filter=\"seen\"} 0.25");
	CHECK_LINE(t, text, "sieve_filter_expected_false_positive_ratio{filter=\"seen\"} 3e-06");
	CHECK_LINE(t, text, "sieve_filter_target_false_positive_ratio{filter=\"seen\"} 1e-05");
	CHECK_LINE(t, text, "sieve_filter_memory_bytes{filter=\"seen\"} 8192");
	CHECK_LINE(t, text, "sieve_filter_snapshot_bytes{filter=\"seen\"} 4096");
	CHECK_LINE(t, text, "# TYPE sieve_filter_inserts_total counter");
	CHECK_LINE(t, text, "sieve_filter_inserts_total{filter=\"seen\"} 50");
	CHECK_LINE(t, text, "sieve_filter_deletes_total{filter=\"seen\"} 8");
	CHECK_LINE(t, text, "sieve_filter_queries_total{filter=\"seen\"} 1000");
	CHECK_LINE(t, text, "sieve_filter_hits_total{filter=\"seen\"} 60");
	/* No list in this scrape: the family is left out, not left empty. */
	CHECK_NO(t, text, "sieve_list_entries");
	free(text);
}

/* One HTTP/1.0 request to 127.0.0.1:@port; the whole response in @buf. */
static int http(uint16_t port, const char *request, char *buf, size_t room)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 10 };
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
		close(fd);
		return -errno;
	}
	while (got < room - 1 && (n = read(fd, buf + got, room - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	return 0;
}

/* GET /metrics 200 in the text format, other paths 404, other methods 405; bad addresses. */
static void sieve_unit_metrics_http(struct sieve_test *t)
{
	static char buf[65536];
	struct sagent_metrics *m = NULL, *m2 = NULL;
	static struct sagent_stats st;
	struct sconf_config c;
	char err[256] = "";
	uint16_t port;
	struct mdir d;
	int ret;

	if (!mdir_make(t, &d))
		return;
	setenv("SIEVE_DEVICE", "/nonexistent/sieve", 1);
	config(&c, d.dir);
	c.metrics_port = 0;	/* a free port */
	ret = sagent_metrics_start(&c, &st, &m, err, sizeof(err));
	CHECKF(t, !ret && m, "start: %d %s", ret, err);
	if (!m)
		goto out;
	port = sagent_metrics_port(m);
	CHECKF(t, port, "no port");

	CHECKF(t, !http(port, "GET /metrics HTTP/1.0\r\n\r\n", buf, sizeof(buf)), "GET");
	CHECKF(t, !strncmp(buf, "HTTP/1.0 200", 12) || !strncmp(buf, "HTTP/1.1 200", 12),
	       "GET /metrics: %.40s", buf);
	CHECKF(t, strstr(buf, "text/plain; version=0.0.4"), "content type: %.300s", buf);
	CHECKF(t, strstr(buf, "\r\n\r\n# HELP sieve_store_up"), "body: %.300s", buf);
	CHECKF(t, strstr(buf, "\nsieve_dev_up 0\n"), "body: %.300s", buf);

	CHECKF(t, !http(port, "GET /other HTTP/1.0\r\n\r\n", buf, sizeof(buf)), "GET other");
	CHECKF(t, strstr(buf, " 404 ") == buf + 8, "GET /other: %.40s", buf);
	CHECKF(t, !http(port, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n", buf,
			sizeof(buf)), "POST");
	CHECKF(t, strstr(buf, " 405 ") == buf + 8, "POST /metrics: %.40s", buf);
	CHECKF(t, strstr(buf, "Allow: GET, HEAD"), "405 without Allow: %.300s", buf);

	/* The port taken: an error that names the address. */
	c.metrics_port = port;
	ret = sagent_metrics_start(&c, &st, &m2, err, sizeof(err));
	CHECKF(t, ret && !m2 && strstr(err, "127.0.0.1:"), "second start: %d %s", ret, err);
	sagent_metrics_stop(m2);
	sagent_metrics_stop(m);
	CHECKF(t, http(port, "GET /metrics HTTP/1.0\r\n\r\n", buf, sizeof(buf)),
	       "still served after stop");

	/* Names are not resolved: only numeric addresses. */
	snprintf(c.metrics_addr, sizeof(c.metrics_addr), "localhost");
	ret = sagent_metrics_start(&c, &st, &m, err, sizeof(err));
	CHECKF(t, ret == -EINVAL && !m && strstr(err, "localhost"), "localhost: %d %s", ret, err);
	/* Off: no server, no error. */
	c.metrics_on = false;
	ret = sagent_metrics_start(&c, &st, &m, err, sizeof(err));
	CHECKF(t, !ret && !m, "metrics off: %d", ret);
out:
	sagent_metrics_forget();
	unsetenv("SIEVE_DEVICE");
	mdir_clean(&d);
}

/*
 * The loader's interface-name rule (sxdp_ifname_ok, linked here with the
 * loader): Linux's dev_valid_name, so no name reaches another folder.
 */
static void sieve_unit_metrics_ifname_rule(struct sieve_test *t)
{
	static const char *const good[] = { "lo", "eth0", "veth-a.1", "0123456789abcde", "..a",
					    "a..", "é" };
	static const char *const bad[] = { "", ".", "..", "../x", "a/b", "/", "a b", "a\tb",
					   "a\nb", "a:1", "0123456789abcdef" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		CHECKF(t, sxdp_ifname_ok(good[i]), "'%s' refused", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECKF(t, !sxdp_ifname_ok(bad[i]), "'%s' taken", bad[i]);
	/* The lock and the pins refuse them too, before any path is made. */
	CHECKF(t, sxdp_lock("../x", false) == -EINVAL, "sxdp_lock('../x')");
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_metrics_cases[] = {
	CASE(sieve_unit_metrics_ifname_rule),
	CASE(sieve_unit_metrics_store),
	CASE(sieve_unit_metrics_store_down),
	CASE(sieve_unit_metrics_count_cache),
	CASE(sieve_unit_metrics_format),
	CASE(sieve_unit_metrics_http),
};

const unsigned int sieve_metrics_cases_n = ARRAY_SIZE(sieve_metrics_cases);
