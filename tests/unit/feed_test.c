// SPDX-License-Identifier: GPL-2.0
/*
 * Blocklist files in the formats of feeds (userspace/xdp/feed.c), on files
 * written here: each format with comments, blank lines, CRLF and trailing
 * blanks; auto's choice for each; and bad lines, each refused with
 * FILE:LINE: reason and the list left as it was.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "unit.h"
#include "xdp.h"

struct feed_file {
	char path[32];
	char err[4096];
	struct sxdp_keys l;
	struct sxdp_feed_info info;
};

/* Writes @text to a new file and reads it as @fmt; the list starts with one entry. */
static int feed_try(struct feed_file *ff, const char *text, enum sxdp_format fmt)
{
	struct sieve_xdp_key key;
	const char *why;
	FILE *f;
	int fd, ret;

	strcpy(ff->path, "/tmp/sieve-feed-XXXXXX");
	fd = mkstemp(ff->path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	ff->l = (struct sxdp_keys){ 0 };
	sxdp_parse_entry("192.0.2.99", &key, &why);
	sxdp_keys_add(&ff->l, &key);
	ff->err[0] = '\0';
	ff->info = (struct sxdp_feed_info){ 0 };
	ret = sxdp_feed_read(ff->path, fmt, &ff->l, &ff->info, ff->err, sizeof(ff->err));
	unlink(ff->path);
	return ret;
}

/* Is @entry (canonical text) on the list? */
static bool feed_has(const struct feed_file *ff, const char *entry)
{
	struct sieve_xdp_key key;
	const char *why;

	return !sxdp_parse_entry(entry, &key, &why) && sxdp_keys_find(&ff->l, &key);
}

/* @text is refused with "PATH:LINE: ...WHY..." and the list is untouched. */
static void expect_refused(struct sieve_test *t, const char *text, enum sxdp_format fmt,
			   unsigned int line, const char *why)
{
	struct feed_file ff;
	char where[64];
	int ret = feed_try(&ff, text, fmt);

	snprintf(where, sizeof(where), "%s:%u: ", ff.path, line);
	CHECKF(t, ret == -EINVAL, "%s: accepted (%d): %s", sxdp_format_name(fmt), ret, text);
	CHECKF(t, !strncmp(ff.err, where, strlen(where)) && strstr(ff.err, why),
	       "error '%s', want '%s...%s'", ff.err, where, why);
	CHECKF(t, ff.l.n == 1 && feed_has(&ff, "192.0.2.99"), "a refused file changed the list");
	sxdp_keys_free(&ff.l);
}

/* Plain: comments, blanks, CRLF and trailing blanks; every entry kind. */
static void sieve_unit_feed_plain(struct sieve_test *t)
{
	struct feed_file ff;
	int ret = feed_try(&ff, "# a list\r\n\r\n  198.51.100.7  \r\n203.0.113.0/24\t# why\r\n"
			   "tcp:192.0.2.1:22 \r\n198.51.100.7\n", SXDP_FORMAT_PLAIN);

	CHECKF(t, !ret, "refused: %s", ff.err);
	/* Replaced, not added to; the duplicate counted once. */
	EXPECT_EQ(t, ff.l.n, 3);
	CHECKF(t, feed_has(&ff, "203.0.113.0/24") && feed_has(&ff, "tcp:192.0.2.1:22"), "entries");
	sxdp_keys_free(&ff.l);
	expect_refused(t, "198.51.100.7\n198.51.100.7 203.0.113.0/24\n", SXDP_FORMAT_PLAIN, 2,
		       "one entry per line");
	expect_refused(t, "# x\n198.51.100.300\n", SXDP_FORMAT_PLAIN, 2,
		       "198.51.100.300: not an IP address");
}

/* A FireHOL-like list with every IPv4 length /8-/32 (parsing only: see README). */
static void sieve_unit_feed_netset_every_length(struct sieve_test *t)
{
	char text[4096] = "#\n# firehol_level1\n# Maintainer      : FireHOL\r\n#\n";
	struct feed_file ff;
	unsigned int len, prefixes = 0;
	size_t i;
	int ret;

	for (len = 8; len <= 32; len++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%u.%u.0.0/%u\r\n",
			 len, len >= 16 ? 128 : 0, len);
	ret = feed_try(&ff, text, SXDP_FORMAT_AUTO);
	CHECKF(t, !ret, "refused: %s", ff.err);
	/* auto: the FireHOL header. */
	EXPECT_EQ(t, ff.info.format, SXDP_FORMAT_NETSET);
	EXPECT_EQ(t, ff.l.n, 25);
	for (i = 0; i < ff.l.n; i++)
		prefixes += ff.l.keys[i].kind == SIEVE_XDP_PREFIX;
	EXPECT_EQ(t, prefixes, 24);
	CHECKF(t, feed_has(&ff, "32.128.0.0") && feed_has(&ff, "8.0.0.0/8"), "the /32 and the /8");
	sxdp_keys_free(&ff.l);
	/* A netset holds addresses and prefixes: a service there is a mistake. */
	expect_refused(t, "# FireHOL\n10.0.0.0/8\ntcp:192.0.2.1:22\n", SXDP_FORMAT_NETSET, 3,
		       "addresses and prefixes only");
	/* Host bits stay refused: real feeds are clean, so a dirty one is noticed. */
	expect_refused(t, "10.0.0.0/8\n10.0.0.1/24\n", SXDP_FORMAT_NETSET, 2, "host bits set");
}

/* Spamhaus DROP and DROPv6: "; SBL" references and ';' comment lines. */
static void sieve_unit_feed_drop(struct sieve_test *t)
{
	struct feed_file ff;
	int ret = feed_try(&ff, "; Spamhaus DROP List 2026/11/24 - (c) 2026 The Spamhaus Project\r\n"
			   "; Last-Modified: Tue, 24 Nov 2026 04:00:00 GMT\r\n\r\n"
			   "1.10.16.0/20 ; SBL256894\r\n2.56.192.0/22 ; SBL459831  \r\n"
			   "2001:db8::/32 ; SBL123\r\n5.134.128.0/19\r\n", SXDP_FORMAT_AUTO);

	CHECKF(t, !ret, "refused: %s", ff.err);
	EXPECT_EQ(t, ff.info.format, SXDP_FORMAT_DROP);
	EXPECT_EQ(t, ff.l.n, 4);
	CHECKF(t, feed_has(&ff, "1.10.16.0/20") && feed_has(&ff, "2001:db8::/32") &&
	       feed_has(&ff, "5.134.128.0/19"), "entries");
	sxdp_keys_free(&ff.l);
	expect_refused(t, "; DROP\n1.10.16.0/20 ; SBL1\n1.10.16.1/20 ; SBL2\n", SXDP_FORMAT_DROP, 3,
		       "1.10.16.1/20: host bits set");
	/* The line's text is in its report: which line it was shows at a glance. */
	expect_refused(t, "1.10.16.0/20 SBL1\n", SXDP_FORMAT_DROP, 1,
		       ": 1.10.16.0/20 SBL1: one entry per line");
	expect_refused(t, "udp:192.0.2.1:53 ; SBL1\n", SXDP_FORMAT_DROP, 1,
		       "addresses and prefixes only");
}

/* ipset save: hash:net and hash:ip adds, a list:set's skipped, options ignored. */
static void sieve_unit_feed_ipset(struct sieve_test *t)
{
	struct feed_file ff;
	int ret = feed_try(&ff,
		"create bl hash:net family inet hashsize 1024 maxelem 65536 timeout 0 comment\n"
		"add bl 203.0.113.0/24 timeout 600 comment \"from a feed\"\r\n"
		"add -exist bl 198.51.100.0/25 comment \"not a nomatch; really\"\n"
		"create hosts hash:ip family inet6 hashsize 1024 maxelem 65536\n"
		"add hosts 2001:db8::7\n\n"
		"create all list:set size 8\nadd all bl\nadd all hosts\n"
		"create ports bitmap:port range 0-1024\nadd ports 22\n", SXDP_FORMAT_AUTO);

	CHECKF(t, !ret, "refused: %s", ff.err);
	EXPECT_EQ(t, ff.info.format, SXDP_FORMAT_IPSET);
	EXPECT_EQ(t, ff.l.n, 3);
	/* The list:set's two adds and the bitmap:port's one. */
	EXPECT_EQ(t, ff.info.skipped, 3);
	CHECKF(t, feed_has(&ff, "203.0.113.0/24") && feed_has(&ff, "198.51.100.0/25") &&
	       feed_has(&ff, "2001:db8::7"), "entries");
	sxdp_keys_free(&ff.l);
}

/* ipset: each bad line on its own, with the line it is on. */
static void sieve_unit_feed_ipset_bad(struct sieve_test *t)
{
	const char *bl = "create bl hash:net family inet\nadd bl 192.0.2.0/24\n";
	char text[256];

	expect_refused(t, "create bl hash:net\nadd other 192.0.2.0/24\n", SXDP_FORMAT_IPSET, 2,
		       "never created");
	snprintf(text, sizeof(text), "%sflush bl\n", bl);
	expect_refused(t, text, SXDP_FORMAT_IPSET, 3, "not a create or add line");
	snprintf(text, sizeof(text), "%sadd bl\n", bl);
	expect_refused(t, text, SXDP_FORMAT_IPSET, 3, "expected add NAME MEMBER");
	snprintf(text, sizeof(text), "%sadd bl 192.0.2.0/28 nomatch\n", bl);
	expect_refused(t, text, SXDP_FORMAT_IPSET, 3, "nomatch");
	snprintf(text, sizeof(text), "%sadd bl 192.0.2.1/24\n", bl);
	expect_refused(t, text, SXDP_FORMAT_IPSET, 3, "192.0.2.1/24: host bits set");
	snprintf(text, sizeof(text), "%screate bl hash:ip\n", bl);
	expect_refused(t, text, SXDP_FORMAT_IPSET, 3, "set created twice");
	expect_refused(t, "create h hash:ip family inet netmask 24\n", SXDP_FORMAT_IPSET, 1,
		       "netmask");
	expect_refused(t, "create n hash:net family inet bitmask 255.255.0.0\n", SXDP_FORMAT_IPSET,
		       1, "bitmask");
	/* A refused line anywhere refuses the file: after a skipped set too. */
	expect_refused(t, "create s list:set\nadd s x\ncreate b hash:ip\nadd b nope\n",
		       SXDP_FORMAT_IPSET, 4, "nope: not an IP address");
}

/* auto: what each head chooses; no sign at all is plain. */
static void sieve_unit_feed_auto(struct sieve_test *t)
{
	static const struct { const char *text; enum sxdp_format want; } heads[] = {
		{ "198.51.100.7\n", SXDP_FORMAT_PLAIN },
		{ "# a list\n\ntcp:192.0.2.1:22\n", SXDP_FORMAT_PLAIN },
		{ "", SXDP_FORMAT_PLAIN },
		{ "# only comments\n\n", SXDP_FORMAT_PLAIN },
		{ "# FireHOL list\n198.51.100.0/24\n", SXDP_FORMAT_NETSET },
		{ "; Spamhaus EDROP\n", SXDP_FORMAT_DROP },
		{ "# no name\n198.51.100.0/24 ; SBL9\n", SXDP_FORMAT_DROP },
		{ "create x hash:ip\nadd x 198.51.100.7\n", SXDP_FORMAT_IPSET },
		{ "\r\n  create x hash:ip\nadd x 198.51.100.7\n", SXDP_FORMAT_IPSET },
		/* ipset before drop: its head may hold a ';'. */
		{ "create x hash:ip comment ;\n", SXDP_FORMAT_IPSET },
		/* A FireHOL name after the first entry is too late. */
		{ "198.51.100.7\n# FireHOL\n", SXDP_FORMAT_PLAIN },
	};
	struct feed_file ff;
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(heads); i++) {
		ret = feed_try(&ff, heads[i].text, SXDP_FORMAT_AUTO);
		CHECKF(t, !ret, "head %zu refused: %s", i, ff.err);
		CHECKF(t, ff.info.format == heads[i].want, "head %zu: %s, want %s", i,
		       sxdp_format_name(ff.info.format), sxdp_format_name(heads[i].want));
		sxdp_keys_free(&ff.l);
	}
}

/* Format names both ways; a line longer than any entry. */
static void sieve_unit_feed_names_and_limits(struct sieve_test *t)
{
	static const char *const names[] = { "auto", "plain", "netset", "drop", "ipset" };
	char text[2100];
	enum sxdp_format fmt;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		CHECKF(t, !sxdp_format_parse(names[i], &fmt) &&
		       !strcmp(sxdp_format_name(fmt), names[i]), "format %s", names[i]);
	CHECKF(t, sxdp_format_parse("csv", &fmt) == -EINVAL, "csv accepted");
	memset(text, 'x', sizeof(text) - 2);
	memcpy(text, "198.51.100.7\n", 13);
	text[sizeof(text) - 2] = '\n';
	text[sizeof(text) - 1] = '\0';
	expect_refused(t, text, SXDP_FORMAT_PLAIN, 2, "line too long");
}

/*
 * A file cut short (a download that stopped mid-line): an entry on a last
 * line without its line end is refused, in every format, even when what
 * is left parses (a /24 cut to a /2, an address cut to another one).
 */
static void sieve_unit_feed_truncated(struct sieve_test *t)
{
	struct feed_file ff;
	int ret;

	expect_refused(t, "198.51.100.7\n10.0.0.0/2", SXDP_FORMAT_PLAIN, 2, "no line end");
	expect_refused(t, "198.51.100.7\n198.51.100.2", SXDP_FORMAT_AUTO, 2, "no line end");
	expect_refused(t, "# FireHOL\n10.0.0.0/8\n10.0.0.0/1", SXDP_FORMAT_NETSET, 3,
		       "no line end");
	expect_refused(t, "; DROP\n1.10.16.0/20 ; SBL1\n1.10.16.0/2", SXDP_FORMAT_DROP, 3,
		       "no line end");
	expect_refused(t, "create b hash:net\nadd b 10.0.0.0/2", SXDP_FORMAT_IPSET, 2,
		       "no line end");
	expect_refused(t, "198.51.100.2\r", SXDP_FORMAT_PLAIN, 1, "no line end");
	/* A last line without an entry cut nothing that counts. */
	ret = feed_try(&ff, "198.51.100.7\n# the end", SXDP_FORMAT_PLAIN);
	CHECKF(t, !ret && ff.l.n == 1, "a last comment without line end refused: %s", ff.err);
	sxdp_keys_free(&ff.l);
	ret = feed_try(&ff, "198.51.100.7\n  ", SXDP_FORMAT_PLAIN);
	CHECKF(t, !ret && ff.l.n == 1, "a last blank line without line end refused: %s", ff.err);
	sxdp_keys_free(&ff.l);
}

static int ref_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sieve_xdp_key));
}

/*
 * sxdp_keys_sort() against qsort() with memcmp(), the order find() and
 * remove() search by: random keys of every kind, with duplicates, and the
 * shapes that break naive quicksorts (sorted, reversed, all equal, organ
 * pipe, few values), each deduplicated exactly. Keys that differ in a few
 * bytes take the radix sort, keys random in every address byte (shape 6:
 * IPv6 flows) the comparison sort.
 */
static void sieve_unit_feed_list_sort(struct sieve_test *t)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 17, 100, 1000, 100000 };
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_key *ref;
	unsigned int shape, seed = 1;
	size_t si, i, n, out;

	for (shape = 0; shape < 7; shape++) {
		for (si = 0; si < ARRAY_SIZE(sizes); si++) {
			n = sizes[si];
			ref = calloc(n ? n : 1, sizeof(*ref));
			l.keys = calloc(n ? n : 1, sizeof(*l.keys));
			l.n = l.cap = n;
			if (!ref || !l.keys) {
				CHECKF(t, 0, "out of memory");
				free(ref);
				sxdp_keys_free(&l);
				return;
			}
			for (i = 0; i < n; i++) {
				struct sieve_xdp_key *k = &l.keys[i];
				unsigned int v;

				seed = seed * 1103515245 + 12345;
				v = shape == 0 ? (seed >> 8) % 5000 :	/* random, duplicates */
				    shape == 1 ? i :			/* sorted */
				    shape == 2 ? n - i :		/* reversed */
				    shape == 3 ? 7 :			/* all equal */
				    shape == 4 ? (i < n / 2 ? i : n - i) :	/* organ pipe */
				    (seed >> 8) % 5;			/* few values */
				k->kind = shape == 0 ? seed % SIEVE_XDP_NR_KINDS : SIEVE_XDP_SRC;
				k->family = shape == 0 && (seed & 16) ? SIEVE_XDP_V6 : SIEVE_XDP_V4;
				k->prefix_len = 32;
				k->saddr[0] = htonl(v);
				k->saddr[3] = shape == 0 ? v & 3 : 0;	/* duplicates */
				k->dport = htons(shape == 0 ? (v >> 4) & 1 : 0);
				/* Keys that differ in the last word only. */
				k->daddr[3] = shape == 0 ? (seed >> 3) & 1 : 0;
				if (shape == 6) {
					unsigned int w;

					k->kind = SIEVE_XDP_FLOW;
					k->family = SIEVE_XDP_V6;
					for (w = 0; w < 4; w++) {
						seed = seed * 1103515245 + 12345;
						k->saddr[w] = seed ^ w;
						k->daddr[w] = seed >> 3;
					}
				}
			}
			memcpy(ref, l.keys, n * sizeof(*ref));
			if (n)
				qsort(ref, n, sizeof(*ref), ref_cmp);
			for (i = 1, out = n ? 1 : 0; i < n; i++)
				if (memcmp(&ref[out - 1], &ref[i], sizeof(*ref)))
					ref[out++] = ref[i];
			sxdp_keys_sort(&l);
			CHECKF(t, l.n == out && (!out || !memcmp(l.keys, ref, out * sizeof(*ref))),
			       "shape %u, %zu keys: sorted to %zu, want %zu", shape, n, l.n, out);
			for (i = 0; i < out && i < 50; i++)
				CHECKF(t, sxdp_keys_find(&l, &ref[i * (out / 50 ? out / 50 : 1) % out]),
				       "shape %u: a key not found after the sort", shape);
			free(ref);
			sxdp_keys_free(&l);
		}
	}
}

/*
 * Every bad line is reported, one a line: the first ten, then how many
 * more; the good lines among them change nothing (issue 22).
 */
static void sieve_unit_feed_every_bad_line(struct sieve_test *t)
{
	char text[1024] = "192.0.2.1\n", want[256], *line, *save = NULL;
	struct feed_file ff;
	unsigned int i, n = 0;
	size_t len = strlen(text);
	int ret;

	for (i = 2; i <= 16; i++)
		len += snprintf(text + len, sizeof(text) - len, "bad%u x\n192.0.2.%u\n", i, i);
	ret = feed_try(&ff, text, SXDP_FORMAT_PLAIN);
	CHECKF(t, ret == -EINVAL && ff.l.n == 1 && feed_has(&ff, "192.0.2.99"),
	       "a file of 15 bad lines: %d, %zu entries", ret, ff.l.n);
	for (line = strtok_r(ff.err, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		if (n < 10)
			snprintf(want, sizeof(want), "%s:%u: bad%u x: one entry per line", ff.path,
				 2 * n + 2, n + 2);
		else
			snprintf(want, sizeof(want), "%s: ... and 5 more bad lines", ff.path);
		CHECKF(t, !strcmp(line, want), "report line %u: '%s', want '%s'", n, line, want);
	}
	CHECKF(t, n == 11, "%u report lines, want 10 and the rest counted", n);
	sxdp_keys_free(&ff.l);
	/* A long line is quoted to its first 80 characters. */
	memset(text, 'x', 200);
	strcpy(text + 200, " y\n");
	ret = feed_try(&ff, text, SXDP_FORMAT_PLAIN);
	snprintf(want, sizeof(want), "%s:1: %.80s...: one entry per line", ff.path, text);
	CHECKF(t, ret == -EINVAL && !strcmp(ff.err, want), "a long line: '%s'", ff.err);
	sxdp_keys_free(&ff.l);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_feed_cases[] = {
	CASE(sieve_unit_feed_plain),
	CASE(sieve_unit_feed_netset_every_length),
	CASE(sieve_unit_feed_drop),
	CASE(sieve_unit_feed_ipset),
	CASE(sieve_unit_feed_ipset_bad),
	CASE(sieve_unit_feed_auto),
	CASE(sieve_unit_feed_names_and_limits),
	CASE(sieve_unit_feed_truncated),
	CASE(sieve_unit_feed_list_sort),
	CASE(sieve_unit_feed_every_bad_line),
};

const unsigned int sieve_feed_cases_n = ARRAY_SIZE(sieve_feed_cases);
