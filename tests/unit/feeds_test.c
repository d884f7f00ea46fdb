// SPDX-License-Identifier: GPL-2.0
/*
 * The feeds' rules without a server (userspace/sources/feed_rules.c):
 * min_entries and max_shrink at and around their bounds, in integers at
 * sizes where a product could overflow; and the [feed NAME] and [attach
 * IFACE] sections of sieve.conf as config.c reads them, defaults,
 * values and refusals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "feeds.h"

static struct sconf_feed_config feed_rules(uint64_t min_entries, uint32_t max_shrink_ppm)
{
	return (struct sconf_feed_config){
		.min_entries = min_entries, .max_shrink_ppm = max_shrink_ppm,
	};
}

/* Accepted, or refused for @want_why: one expectation of the rules. */
static void judge(struct sieve_test *t, const struct sconf_feed_config *f, uint64_t held,
		  uint64_t fetched, bool want_ok, enum ssrc_feed_refusal want_why)
{
	enum ssrc_feed_refusal why = SSRC_FEED_NR_REFUSALS;
	bool ok = ssrc_feed_acceptable(f, held, fetched, &why);

	CHECKF(t, ok == want_ok && (ok || why == want_why),
	       "min %llu shrink %u ppm, held %llu, fetched %llu: %s (%s), want %s (%s)",
	       (unsigned long long)f->min_entries, f->max_shrink_ppm, (unsigned long long)held,
	       (unsigned long long)fetched, ok ? "accepted" : "refused",
	       ok ? "-" : ssrc_feed_refusal_name(why), want_ok ? "accepted" : "refused",
	       want_ok ? "-" : ssrc_feed_refusal_name(want_why));
}

static void sieve_unit_feeds_min_entries(struct sieve_test *t)
{
	struct sconf_feed_config f = feed_rules(1, 1000000);

	/* An empty download never empties the origin with the default of 1. */
	judge(t, &f, 0, 0, false, SSRC_FEED_MIN_ENTRIES);
	judge(t, &f, 5, 0, false, SSRC_FEED_MIN_ENTRIES);
	judge(t, &f, 0, 1, true, 0);
	f = feed_rules(100, 1000000);
	judge(t, &f, 0, 99, false, SSRC_FEED_MIN_ENTRIES);
	judge(t, &f, 0, 100, true, 0);
	/* 0: the operator's consent to an empty feed. */
	f = feed_rules(0, 1000000);
	judge(t, &f, 5, 0, true, 0);
}

static void sieve_unit_feeds_max_shrink(struct sieve_test *t)
{
	struct sconf_feed_config f = feed_rules(0, 500000);

	/* Exactly half gone is not more than half: accepted; one more is refused. */
	judge(t, &f, 1000, 500, true, 0);
	judge(t, &f, 1000, 499, false, SSRC_FEED_MAX_SHRINK);
	judge(t, &f, 1001, 500, false, SSRC_FEED_MAX_SHRINK);
	/* Growth and a first load (nothing held) are never a shrink. */
	judge(t, &f, 1000, 5000, true, 0);
	judge(t, &f, 0, 1, true, 0);
	/* 0: no shrink at all; 10^6: any shrink, to empty with min_entries 0. */
	f = feed_rules(0, 0);
	judge(t, &f, 8, 7, false, SSRC_FEED_MAX_SHRINK);
	judge(t, &f, 8, 8, true, 0);
	f = feed_rules(0, 1000000);
	judge(t, &f, 8, 0, true, 0);
	/* 25% of 8: two may go, three may not (the e2e case's halving is four). */
	f = feed_rules(1, 250000);
	judge(t, &f, 8, 6, true, 0);
	judge(t, &f, 8, 5, false, SSRC_FEED_MAX_SHRINK);
	judge(t, &f, 8, 4, false, SSRC_FEED_MAX_SHRINK);
	/* Big lists: held * 10^6 near 2^60, no wrap, no rounding either way. */
	f = feed_rules(1, 100000);
	judge(t, &f, 1000000000000ULL, 900000000000ULL, true, 0);
	judge(t, &f, 1000000000000ULL, 899999999999ULL, false, SSRC_FEED_MAX_SHRINK);
	/* min_entries is checked first: both broken says min_entries. */
	f = feed_rules(10, 0);
	judge(t, &f, 100, 5, false, SSRC_FEED_MIN_ENTRIES);
}

static void sieve_unit_feeds_shares(struct sieve_test *t)
{
	static const struct { const char *text; uint32_t ppm; } good[] = {
		{ "0", 0 }, { "1", 1000000 }, { "0.5", 500000 }, { "25%", 250000 },
		{ "100%", 1000000 }, { "0.000001", 1 }, { "12.5%", 125000 },
	};
	static const char *const bad[] = { "", "-0.1", "1.01", "101%", "50%%", "x", "0.5x", "%", "nan",
					   "inf", ".5" };
	uint32_t ppm;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		CHECKF(t, !sconf_parse_share(good[i].text, &ppm) && ppm == good[i].ppm,
		       "'%s': %u ppm, want %u", good[i].text, ppm, good[i].ppm);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECKF(t, sconf_parse_share(bad[i], &ppm) == -EINVAL, "'%s' taken as a share", bad[i]);
}

static int conf_text(const char *text, struct sconf_config *c, char *err, size_t errlen)
{
	char path[] = "/tmp/sieve-feeds-conf-XXXXXX";
	int fd = mkstemp(path), ret;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	err[0] = '\0';
	ret = sconf_config_load(path, c, err, errlen);
	unlink(path);
	return ret;
}

static void sieve_unit_feeds_config(struct sieve_test *t)
{
	static const char text[] =
		"[feed drop]\nurl = https://example.org/drop.txt\nformat = drop\n"
		"[feed local]\nurl = file:///etc/sieve/local.txt\nlist = edge\ninterval = 5m\n"
		"timeout = 10s\nmin_entries = 0\nmax_shrink = 10%\n"
		"[attach eth0]\n"
		"[attach eth1]\nlist = edge\nbackend = blocked\nmode = generic\n";
	static struct sconf_config c;
	const struct sconf_feed_config *a = &c.feeds[0], *b = &c.feeds[1];
	char err[512];
	int ret = conf_text(text, &c, err, sizeof(err));

	CHECKF(t, !ret, "refused: %s", err);
	if (ret)
		return;
	CHECKF(t, c.nr_feeds == 2 && c.nr_attach == 2, "%u feeds, %u attach", c.nr_feeds,
	       c.nr_attach);
	/* The defaults sieve.conf(5) gives. */
	CHECKF(t, !strcmp(a->name, "drop") && a->format == SXDP_FORMAT_DROP &&
	       !strcmp(a->list, "default") && a->interval_s == 3600 && a->timeout_s == 60 &&
	       a->min_entries == 1 && a->max_shrink_ppm == 500000 && a->line == 1,
	       "feed drop: %s %d %s %u %u %llu %u line %d", a->name, a->format, a->list,
	       a->interval_s, a->timeout_s, (unsigned long long)a->min_entries, a->max_shrink_ppm,
	       a->line);
	CHECKF(t, !strcmp(b->url, "file:///etc/sieve/local.txt") && b->format == SXDP_FORMAT_AUTO &&
	       !strcmp(b->list, "edge") && b->interval_s == 300 && b->timeout_s == 10 &&
	       !b->min_entries && b->max_shrink_ppm == 100000,
	       "feed local: %s %s %u %u %llu %u", b->url, b->list, b->interval_s, b->timeout_s,
	       (unsigned long long)b->min_entries, b->max_shrink_ppm);
	/* A section without keys is a declaration with the defaults. */
	CHECKF(t, !strcmp(c.attach[0].iface, "eth0") && !strcmp(c.attach[0].list, "default") &&
	       !c.attach[0].backend[0] && !c.attach[0].mode[0], "attach eth0: %s %s '%s' '%s'",
	       c.attach[0].iface, c.attach[0].list, c.attach[0].backend, c.attach[0].mode);
	CHECKF(t, !strcmp(c.attach[1].list, "edge") && !strcmp(c.attach[1].backend, "blocked") &&
	       !strcmp(c.attach[1].mode, "generic"), "attach eth1: %s %s %s", c.attach[1].list,
	       c.attach[1].backend, c.attach[1].mode);
}

static void sieve_unit_feeds_config_refused(struct sieve_test *t)
{
	static const struct { const char *text, *says; } bad[] = {
		{ "[feed x]\nlist = a\n", ":1: [feed x] has no url" },
		{ "[feed]\nurl = http://a/\n", "needs a name" },
		{ "[feed cli]\nurl = http://a/\n", "cli is the origin of other changes" },
		{ "[feed a/b]\nurl = http://a/\n", "a feed's name" },
		{ "[feed x]\nurl = ftp://a/\n", "not an http://, https:// or file:// URL" },
		{ "[feed x]\nurl = /etc/x\n", "not an http://" },
		{ "[feed x]\nurl = http://a/\nformat = csv\n", "format = csv" },
		{ "[feed x]\nurl = http://a/\ninterval = 0s\n", "interval = 0s: out of range" },
		{ "[feed x]\nurl = http://a/\ninterval = 169h\n", "out of range" },
		{ "[feed x]\nurl = http://a/\nmax_shrink = 2\n", "max_shrink = 2" },
		{ "[feed x]\nurl = http://a/\nmin_entries = -1\n", "min_entries = -1" },
		{ "[feed x]\nurl = http://a/\nlist = no/list\n", "list = no/list" },
		{ "[feed x]\nurl = http://a/\nredis = x\n", "unknown key 'redis' in [feed x]" },
		{ "[feed x]\nurl = http://a/\n[feed x]\nurl = http://b/\n", ":3: [feed x]: given twice" },
		{ "[attach]\n", "[attach] needs a name" },
		{ "[attach a/b]\n", "not an interface name" },
		{ "[attach abcdefghijklmnop]\n", "not an interface name" },
		{ "[attach eth0]\nmode = turbo\n", "mode = turbo" },
		{ "[attach eth0]\nbackend = cuckoo\n", "backend = cuckoo" },
		{ "[attach eth0]\nbackend = filter:no/name\n", "backend = filter:no/name" },
		{ "[attach eth0]\n[attach eth0]\n", "given twice" },
		{ "[feeds x]\n", "unknown section [feeds x]" },
	};
	static struct sconf_config c;
	char err[512];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = conf_text(bad[i].text, &c, err, sizeof(err));

		CHECKF(t, ret == -EINVAL && strstr(err, bad[i].says), "'%s': %d '%s', want '%s'",
		       bad[i].text, ret, err, bad[i].says);
	}
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_feeds_cases[] = {
	CASE(sieve_unit_feeds_min_entries),
	CASE(sieve_unit_feeds_max_shrink),
	CASE(sieve_unit_feeds_shares),
	CASE(sieve_unit_feeds_config),
	CASE(sieve_unit_feeds_config_refused),
};

const unsigned int sieve_feeds_cases_n = ARRAY_SIZE(sieve_feeds_cases);
