// SPDX-License-Identifier: GPL-2.0
/*
 * What the fleet follower judges without Redis (userspace/fleet/
 * rules.c): scores as expiries, hostile ones included (built with
 * UBSan's float-cast-overflow check: a conversion out of int64_t's range
 * fails the suite), and the [fleet] limits of sieve.conf, read by
 * config.c from files written here; the password file's owner and mode;
 * and the words of the list operations the stream carries (ops.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "fleet.h"

/* Score @s at @now: *ok, and the expiry and whether it is past. */
static void score(struct sieve_test *t, const char *s, int64_t now, bool ok, int64_t want,
		  bool want_expired)
{
	int64_t expires = -1;
	bool expired = false;
	bool got = sfleet_parse_score(s, now, &expires, &expired);

	CHECKF(t, got == ok, "score '%s': %s", s, got ? "taken" : "refused");
	if (!got || !ok)
		return;
	CHECKF(t, expired == want_expired && expires == want,
	       "score '%s' at %lld: expires %lld expired %d, want %lld %d", s, (long long)now,
	       (long long)expires, expired, (long long)want, want_expired);
}

/* Scores from a hostile Redis: huge, infinite, not numbers. */
static void sieve_unit_fleet_scores(struct sieve_test *t)
{
	const int64_t now = 1800000000;

	score(t, "+inf", now, true, 0, false);
	score(t, "inf", now, true, 0, false);
	score(t, "1800000000.2", now, true, 1800000001, false);
	score(t, "1800000000", now, true, now, true);
	score(t, "1e300", now, true, 4000000000000000000LL, false);
	/* Past, however far: never converted (out of range is undefined). */
	score(t, "-1e300", now, true, now, true);
	score(t, "-inf", now, true, now, true);
	score(t, "-9.3e18", now, true, now, true);
	score(t, "-1.7976931348623157e308", now, true, now, true);
	score(t, "nan", now, false, 0, false);
	score(t, "-nan", now, false, 0, false);
	score(t, "", now, false, 0, false);
	score(t, "12abc", now, false, 0, false);
	score(t, "0x10", now, true, now, true);
}

static bool entry(const char *s, struct sieve_xdp_key *key)
{
	const char *why;

	return !sxdp_parse_entry(s, key, &why);
}

/* Whether @c's limits refuse the fleet's block (or allow) of @text. */
static bool refused(struct sieve_test *t, const struct sconf_config *c, const char *text,
		    bool allow)
{
	struct sieve_xdp_key key;

	if (!entry(text, &key)) {
		CHECKF(t, 0, "'%s' does not parse", text);
		return false;
	}
	return sfleet_refused(&c->fleet, &key, allow) != NULL;
}

struct conf_file {
	char path[64];
	char err[512];
};

static int conf_load(struct conf_file *cf, const char *text, struct sconf_config *c)
{
	FILE *f;
	int fd;

	strcpy(cf->path, "/tmp/sieve-fleet-conf-XXXXXX");
	fd = mkstemp(cf->path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	cf->err[0] = '\0';
	fd = sconf_config_load(cf->path, c, cf->err, sizeof(cf->err));
	unlink(cf->path);
	return fd;
}

/* The defaults refuse what would hand the fleet a host; narrower entries pass. */
static void sieve_unit_fleet_default_limits(struct sieve_test *t)
{
	struct sconf_config c;

	sconf_config_defaults(&c);
	/* The attack of issue 20: two /1 allows exempt everything. */
	CHECKF(t, refused(t, &c, "0.0.0.0/1", true) && refused(t, &c, "128.0.0.0/1", true),
	       "an allow of a /1 taken by default");
	CHECKF(t, refused(t, &c, "0.0.0.0/1", false), "a block of a /1 taken by default");
	CHECKF(t, refused(t, &c, "10.0.0.0/15", true) && !refused(t, &c, "10.0.0.0/16", true),
	       "IPv4 allows: /16 is the broadest");
	CHECKF(t, refused(t, &c, "10.0.0.0/7", false) && !refused(t, &c, "10.0.0.0/8", false),
	       "IPv4 blocks: /8 is the broadest");
	CHECKF(t, refused(t, &c, "2000::/3", false) && !refused(t, &c, "2000::/12", false),
	       "IPv6 blocks: /12 is the broadest");
	CHECKF(t, refused(t, &c, "2001:db8::/31", true) && !refused(t, &c, "2001:db8::/32", true),
	       "IPv6 allows: /32 is the broadest");
	CHECKF(t, !refused(t, &c, "198.51.100.7", false) && !refused(t, &c, "198.51.100.7", true) &&
	       !refused(t, &c, "tcp:192.0.2.1:22", false), "a single address refused");
	/* The allowlist's maps take sources and prefixes only: the rest would wedge the list. */
	CHECKF(t, refused(t, &c, "tcp:192.0.2.1:22", true) &&
	       refused(t, &c, "udp:192.0.2.1:53,203.0.113.1:53", true),
	       "an allow of a service taken");
}

/* The [fleet] keys: limits and never_block, and their bad values. */
static void sieve_unit_fleet_config_limits(struct sieve_test *t)
{
	static const char *const bad[] = {
		"broadest_block = /8\n", "broadest_block = /33 /12\n", "broadest_allow = 8 129\n",
		"broadest_allow = x y\n", "broadest_block = /8 /12 /16\n",
		"never_block = 10.0.0.0/8 nope\n", "never_block = tcp:192.0.2.1:22\n",
		"never_block = 10.0.0.1/8\n",
	};
	const char *head = "[fleet]\nredis = 127.0.0.1:6379\nlists = edge\n";
	struct sconf_config c;
	struct conf_file cf;
	char text[512];
	size_t i;
	int ret;

	snprintf(text, sizeof(text), "%sbroadest_block = /16 48\nbroadest_allow = 24 /64\n"
		 "never_block = 192.0.2.0/24, 2001:db8:1::/48\nnever_block = 198.51.100.9\n", head);
	ret = conf_load(&cf, text, &c);
	CHECKF(t, !ret, "refused: %s", cf.err);
	if (ret)
		return;
	CHECKF(t, c.fleet.broadest_block[0] == 16 && c.fleet.broadest_block[1] == 48 &&
	       c.fleet.broadest_allow[0] == 24 && c.fleet.broadest_allow[1] == 64 &&
	       c.fleet.nr_never_block == 3, "the limits as read: %u %u %u %u, %u never_block",
	       c.fleet.broadest_block[0], c.fleet.broadest_block[1], c.fleet.broadest_allow[0],
	       c.fleet.broadest_allow[1], c.fleet.nr_never_block);
	CHECKF(t, refused(t, &c, "10.0.0.0/15", false) && !refused(t, &c, "10.0.0.0/16", false),
	       "broadest_block /16");
	CHECKF(t, refused(t, &c, "10.0.0.0/23", true) && !refused(t, &c, "10.0.0.0/24", true),
	       "broadest_allow /24");
	/* never_block: inside, around, a service on it, a flow from or to it; not allows. */
	CHECKF(t, refused(t, &c, "192.0.2.7", false), "a block inside never_block");
	CHECKF(t, refused(t, &c, "192.0.0.0/16", false), "a block holding never_block");
	CHECKF(t, refused(t, &c, "tcp:192.0.2.1:22", false), "a service on never_block");
	CHECKF(t, refused(t, &c, "udp:192.0.2.1:53,203.0.113.1:53", false) &&
	       refused(t, &c, "udp:203.0.113.1:53,192.0.2.1:53", false), "a flow touching it");
	CHECKF(t, refused(t, &c, "2001:db8:1:2::1", false) && refused(t, &c, "198.51.100.9", false),
	       "a block of the other never_block entries");
	CHECKF(t, !refused(t, &c, "192.0.3.0/24", false) &&
	       !refused(t, &c, "198.51.100.8", false) && !refused(t, &c, "2001:db8:2::1", false),
	       "a block beside never_block refused");
	CHECKF(t, !refused(t, &c, "192.0.2.7", true), "an allow inside never_block refused");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(text, sizeof(text), "%s%s", head, bad[i]);
		ret = conf_load(&cf, text, &c);
		CHECKF(t, ret == -EINVAL && strstr(cf.err, ":4: "), "'%s' taken (%d): %s", bad[i],
		       ret, cf.err);
	}
}

/* A password file of another user, or others can read, is refused. */
static void sieve_unit_fleet_password_file(struct sieve_test *t)
{
	char pw[64] = "/tmp/sieve-fleet-pw-XXXXXX", text[256];
	const char *head = "[fleet]\nredis = 127.0.0.1:6379\nlists = edge\n";
	struct sconf_config c;
	struct conf_file cf;
	int fd, ret;

	fd = mkstemp(pw);
	if (fd < 0 || write(fd, "secret\n", 7) != 7) {
		CHECKF(t, 0, "mkstemp: %s", strerror(errno));
		return;
	}
	close(fd);
	snprintf(text, sizeof(text), "%spassword_file = %s\n", head, pw);
	chmod(pw, 0600);
	ret = conf_load(&cf, text, &c);
	CHECKF(t, !ret, "a 0600 file of ours refused: %s", cf.err);
	chmod(pw, 0640);
	ret = conf_load(&cf, text, &c);
	CHECKF(t, ret == -EINVAL && strstr(cf.err, "must be 0600"), "a 0640 file: %s", cf.err);
	chmod(pw, 0600);
	/* Another owner (root only can give a file away: else it is not checked here). */
	if (geteuid() == 0 && !chown(pw, 65534, 65534)) {
		ret = conf_load(&cf, text, &c);
		CHECKF(t, ret == -EINVAL && strstr(cf.err, "owned by uid 65534"),
		       "a file of uid 65534 taken: %s", cf.err);
	} else {
		sieve_note("not root: the owner check is covered by tests/e2e (fleet cases)");
	}
	unlink(pw);
}

/*
 * The words of the list operations (ops.h): the stream's op field, what
 * `sieve-agent __publish` is handed, and what the commands print.
 */
static void sieve_unit_fleet_op_words(struct sieve_test *t)
{
	static const char *const bad[] = { "", "BLOCK", "blocked", "block ", "unknown", "ban" };
	unsigned int i, adds = 0, allows = 0;
	enum sxdp_list_op op;

	for (i = 0; i < SXDP_NR_LIST_OPS; i++) {
		/* Each op reads back from its own word, and from no other. */
		CHECKF(t, !sxdp_list_op_parse(sxdp_list_op_name(i), &op) && op == i,
		       "op %u: '%s' reads back as %d", i, sxdp_list_op_name(i), (int)op);
		/* What a command says it did starts with the op's word ("blocked"). */
		CHECKF(t, !strncmp(sxdp_list_op_done(i), sxdp_list_op_name(i),
				   strlen(sxdp_list_op_name(i))),
		       "op %u: '%s' is not the past of '%s'", i, sxdp_list_op_done(i),
		       sxdp_list_op_name(i));
		adds += sxdp_list_op_adds(i);
		allows += sxdp_list_op_allows(i);
	}
	/* Two add (block, allow), two change the allowlist (allow, disallow). */
	CHECKF(t, adds == 2 && allows == 2, "%u ops add, %u allow", adds, allows);
	CHECKF(t, sxdp_list_op_adds(SXDP_OP_ALLOW) && sxdp_list_op_allows(SXDP_OP_ALLOW) &&
		  !sxdp_list_op_adds(SXDP_OP_UNBLOCK) && !sxdp_list_op_allows(SXDP_OP_UNBLOCK),
	       "allow adds to the allowlist, unblock removes from the blocklist");
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECKF(t, sxdp_list_op_parse(bad[i], &op) == -EINVAL, "'%s' read as an op", bad[i]);
	CHECKF(t, sxdp_list_op_parse(NULL, &op) == -EINVAL, "no word read as an op");
	CHECKF(t, !strcmp(sxdp_list_op_name(SXDP_NR_LIST_OPS), "unknown"),
	       "an op out of range has a word");
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_fleet_cases[] = {
	CASE(sieve_unit_fleet_scores),
	CASE(sieve_unit_fleet_default_limits),
	CASE(sieve_unit_fleet_config_limits),
	CASE(sieve_unit_fleet_password_file),
	CASE(sieve_unit_fleet_op_words),
};

const unsigned int sieve_fleet_cases_n = ARRAY_SIZE(sieve_fleet_cases);
