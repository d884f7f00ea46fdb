// SPDX-License-Identifier: GPL-2.0
/*
 * Controlled prefix expansion (userspace/xdp/expand.c): the dynamic
 * program against brute force over every set of lengths, its edges (one
 * probe, every IPv4 length, IPv6 lengths whose expansion overflows 64
 * bits), and the expansion of lists into keys.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "xdp.h"

#define SAT	UINT64_MAX

static u64 rng_state;

static u64 rnd(void)
{
	return sieve_test_mix64(rng_state++);
}

/* Every set of at most @left more lengths above @from, ascending in @lens. */
static void brute_sets(const u64 *hist, unsigned int maxlen, uint8_t *lens, unsigned int n,
		       unsigned int from, unsigned int left, u64 *best)
{
	u64 cost = sxdp_cpe_cost((const uint64_t *)hist, maxlen, lens, n);
	unsigned int l;

	if (cost < *best)
		*best = cost;
	for (l = from + 1; left && l <= maxlen; l++) {
		lens[n] = l;
		brute_sets(hist, maxlen, lens, n + 1, l, left - 1, best);
	}
}

/*
 * The fewest entries over every set of at most @p lengths in 1..@maxlen,
 * present or not: what the DP must find while looking at present ones only.
 */
static u64 brute_force(const u64 *hist, unsigned int maxlen, unsigned int p)
{
	uint8_t lens[SIEVE_XDP_MAX_PREFIX_LENS];
	u64 best = SAT;

	brute_sets(hist, maxlen, lens, 0, 0, p, &best);
	return best;
}

/* lens (longest first, as chosen) reversed, for sxdp_cpe_cost. */
static u64 cost_of(const u64 *hist, unsigned int maxlen, const uint8_t *lens, unsigned int n)
{
	uint8_t asc[SIEVE_XDP_MAX_PREFIX_LENS];
	unsigned int i;

	for (i = 0; i < n; i++)
		asc[i] = lens[n - 1 - i];
	return sxdp_cpe_cost((const uint64_t *)hist, maxlen, asc, n);
}

/* What every plan must be: at most p lengths, longest first, the top one first, cost as said. */
static void check_plan(struct sieve_test *t, const u64 *hist, unsigned int maxlen,
		       unsigned int p, const uint8_t *lens, unsigned int n, u64 entries)
{
	unsigned int i, top = 0;

	for (i = 1; i <= maxlen; i++)
		if (hist[i])
			top = i;
	CHECKF(t, n <= p, "%u lengths for at most %u", n, p);
	CHECKF(t, !top || (n && lens[0] == top), "longest length %u not chosen", top);
	for (i = 1; i < n; i++)
		CHECKF(t, lens[i] < lens[i - 1], "lengths not strictly longest first");
	EXPECT_TRUE(t, cost_of(hist, maxlen, lens, n) == entries);
}

static void sieve_unit_cpe_vs_brute_force(struct sieve_test *t)
{
	unsigned int round, p, n, l, maxlen;
	uint8_t lens[SIEVE_XDP_MAX_PREFIX_LENS];
	u64 hist[SXDP_CPE_MAX_LEN + 1], entries;

	rng_state = 1;
	for (round = 0; round < 300; round++) {
		maxlen = 2 + rnd() % 11;
		memset(hist, 0, sizeof(hist));
		for (l = 1; l <= maxlen; l++)
			hist[l] = rnd() % 3 ? 0 : rnd() % 1000;
		p = 1 + rnd() % 6;
		if (sxdp_cpe_choose((uint64_t *)hist, maxlen, p, lens, &n, (uint64_t *)&entries)) {
			CHECKF(t, 0, "round %u: refused", round);
			continue;
		}
		check_plan(t, hist, maxlen, p, lens, n, entries);
		CHECKF(t, entries == brute_force(hist, maxlen, p),
		       "round %u: DP %llu, brute force %llu (P %u)", round,
		       (unsigned long long)entries, (unsigned long long)brute_force(hist, maxlen, p), p);
	}
}

/* One probe: everything goes to the longest length present. */
static void sieve_unit_cpe_one_probe(struct sieve_test *t)
{
	uint8_t lens[SIEVE_XDP_MAX_PREFIX_LENS];
	u64 hist[SXDP_CPE_MAX_LEN + 1] = { 0 }, entries;
	unsigned int n;

	hist[8] = 3;
	hist[20] = 5;
	hist[24] = 7;
	EXPECT_EQ(t, sxdp_cpe_choose((uint64_t *)hist, 32, 1, lens, &n, (uint64_t *)&entries), 0);
	EXPECT_EQ(t, n, 1);
	EXPECT_EQ(t, lens[0], 24);
	EXPECT_TRUE(t, entries == 3 * (1ULL << 16) + 5 * 16 + 7);
	/* No prefixes: no probe. */
	memset(hist, 0, sizeof(hist));
	EXPECT_EQ(t, sxdp_cpe_choose((uint64_t *)hist, 32, 1, lens, &n, (uint64_t *)&entries), 0);
	EXPECT_EQ(t, n, 0);
	EXPECT_EQ(t, entries, 0);
	/* P out of range: refused. */
	EXPECT_EQ(t, sxdp_cpe_choose((uint64_t *)hist, 32, 0, lens, &n, (uint64_t *)&entries),
		  -EINVAL);
	EXPECT_EQ(t, sxdp_cpe_choose((uint64_t *)hist, 32, SIEVE_XDP_MAX_PREFIX_LENS + 1, lens,
				     &n, (uint64_t *)&entries), -EINVAL);
}

/* Every IPv4 prefix length /1-/31: the DP against brute force up to 5 probes. */
static void sieve_unit_cpe_all_v4_lengths(struct sieve_test *t)
{
	uint8_t lens[SIEVE_XDP_MAX_PREFIX_LENS];
	u64 hist[SXDP_CPE_MAX_LEN + 1] = { 0 }, entries, prev = SAT;
	unsigned int n, l, p;

	for (l = 1; l <= 31; l++)
		hist[l] = 1 + l % 5;
	for (p = 1; p <= SIEVE_XDP_MAX_PREFIX_LENS; p++) {
		EXPECT_EQ(t, sxdp_cpe_choose((uint64_t *)hist, 32, p, lens, &n,
					     (uint64_t *)&entries), 0);
		check_plan(t, hist, 32, p, lens, n, entries);
		/* A probe more never costs entries. */
		CHECKF(t, entries <= prev, "P %u: %llu entries, more than with one probe less", p,
		       (unsigned long long)entries);
		if (p <= 5)
			CHECKF(t, entries == brute_force(hist, 31, p), "P %u: DP %llu is not the best",
			       p, (unsigned long long)entries);
		prev = entries;
	}
	sieve_note("every v4 length, 1-5 prefixes each: %llu entries with 16 probes",
		   (unsigned long long)prev);
}

/*
 * IPv6 lengths /1-/127: expansions past 2^64 saturate instead of
 * wrapping, a plan that cannot avoid them is refused, and enough probes
 * bring the count down to what fits.
 */
static void sieve_unit_cpe_v6_capping(struct sieve_test *t)
{
	uint8_t lens[SIEVE_XDP_MAX_PREFIX_LENS];
	u64 hist[SXDP_CPE_MAX_LEN + 1] = { 0 }, entries;
	unsigned int n, l;

	hist[1] = 1;
	hist[127] = 1;
	/* 2^126 + 1 entries: saturated, so refused. */
	EXPECT_EQ(t, sxdp_cpe_choose((uint64_t *)hist, 128, 1, lens, &n, (uint64_t *)&entries),
		  -E2BIG);
	EXPECT_TRUE(t, sxdp_cpe_cost((uint64_t *)hist, 128, (uint8_t[]){ 127 }, 1) == SAT);
	EXPECT_EQ(t, sxdp_cpe_choose((uint64_t *)hist, 128, 2, lens, &n, (uint64_t *)&entries), 0);
	EXPECT_EQ(t, entries, 2);
	/* 2^63 one prefix at /64 to /127: counts, no wrap. */
	memset(hist, 0, sizeof(hist));
	hist[64] = 3;
	hist[127] = 1;
	EXPECT_TRUE(t, sxdp_cpe_cost((uint64_t *)hist, 128, (uint8_t[]){ 127 }, 1) == SAT);
	hist[64] = 1;
	EXPECT_TRUE(t, sxdp_cpe_cost((uint64_t *)hist, 128, (uint8_t[]){ 127 }, 1) ==
		    (1ULL << 63) + 1);
	/* Every length: 8 probes find a finite plan, 16 one no larger. */
	for (l = 1; l <= 127; l++)
		hist[l] = 1;
	EXPECT_EQ(t, sxdp_cpe_choose((uint64_t *)hist, 128, 8, lens, &n, (uint64_t *)&entries), 0);
	check_plan(t, hist, 128, 8, lens, n, entries);
	EXPECT_TRUE(t, entries < SAT);
	{
		u64 e8 = entries;

		EXPECT_EQ(t, sxdp_cpe_choose((uint64_t *)hist, 128, 16, lens, &n,
					     (uint64_t *)&entries), 0);
		check_plan(t, hist, 128, 16, lens, n, entries);
		EXPECT_TRUE(t, entries <= e8);
		sieve_note("every v6 length: %llu entries with 8 probes, %llu with 16",
			   (unsigned long long)e8, (unsigned long long)entries);
	}
}

static void list_of(struct sieve_test *t, struct sxdp_keys *l, const char *const *e, size_t n)
{
	struct sieve_xdp_key k;
	const char *why;
	size_t i;

	for (i = 0; i < n; i++) {
		CHECKF(t, !sxdp_parse_entry(e[i], &k, &why), "%s: %s", e[i], why);
		sxdp_keys_add(l, &k);
	}
	sxdp_keys_sort(l);
}

/* The expanded list, formatted, equals @want (sorted as the list sorts). */
static void check_expand(struct sieve_test *t, const char *const *in, size_t nin,
			 unsigned int max_probes, const char *const *want, size_t nwant)
{
	struct sieve_xdp_config cfg = { .max_probes = max_probes };
	struct sxdp_keys l = { 0 }, w = { 0 }, x = { 0 };
	size_t i;

	list_of(t, &l, in, nin);
	list_of(t, &w, want, nwant);
	EXPECT_EQ(t, sxdp_config_fill(&cfg, &l), 0);
	EXPECT_EQ(t, sxdp_expand(&l, &cfg, &x), 0);
	EXPECT_EQ(t, x.n, w.n);
	for (i = 0; i < x.n && i < w.n; i++) {
		char a[160], b[160];

		sxdp_format_entry(&x.keys[i], a, sizeof(a));
		sxdp_format_entry(&w.keys[i], b, sizeof(b));
		CHECKF(t, !strcmp(a, b), "key %zu: %s, want %s", i, a, b);
	}
	sxdp_keys_free(&l);
	sxdp_keys_free(&w);
	sxdp_keys_free(&x);
}

/*
 * Nested and overlapping prefixes share keys after expansion; hosts are
 * not prefixes and stay; IPv6 expansion carries across 32-bit words.
 */
static void sieve_unit_cpe_expand(struct sieve_test *t)
{
	static const char *const v4_in[] = { "10.0.0.0/8", "10.0.0.0/9", "10.192.0.0/10",
					     "10.64.0.0/10", "10.64.0.1" };
	static const char *const v4_want[] = { "10.0.0.0/10", "10.64.0.0/10", "10.128.0.0/10",
					       "10.192.0.0/10", "10.64.0.1" };
	static const char *const v6_in[] = { "2001:db8::/63", "2001:db8:0:2::/65",
					     "2001:db6::/31" };
	static const char *const v6_want[] = {
		"2001:db8::/65", "2001:db8:0:0:8000::/65", "2001:db8:0:1::/65",
		"2001:db8:0:1:8000::/65", "2001:db8:0:2::/65",
	};
	static const char *const v6_in2[] = { "2001:db8::/31", "2001:db8::/33" };
	static const char *const v6_want2[] = { "2001:db8::/33", "2001:db8:8000::/33",
						"2001:db9::/33", "2001:db9:8000::/33" };
	struct sieve_xdp_config cfg = { .max_probes = 1 };
	struct sxdp_keys l = { 0 };

	check_expand(t, v4_in, 5, 1, v4_want, 5);
	check_expand(t, v6_in, 2, 1, v6_want, 5);
	check_expand(t, v6_in2, 2, 1, v6_want2, 4);
	/* Within the probe budget: nothing expands. */
	check_expand(t, v4_in, 5, 3, v4_in, 5);
	/* /31 with /65 and one probe: 2^34 keys, past the budget. */
	list_of(t, &l, v6_in, 3);
	EXPECT_EQ(t, sxdp_config_fill(&cfg, &l), -E2BIG);
	cfg.max_probes = 2;
	EXPECT_EQ(t, sxdp_config_fill(&cfg, &l), 0);
	EXPECT_EQ(t, cfg.nr_v6_lens, 2);
	sxdp_keys_free(&l);
}

/*
 * A live add keeps the live lengths: a new length takes a free probe, or
 * goes to the next length up when that is a few keys, else needs a rebuild.
 */
static void sieve_unit_cpe_extend(struct sieve_test *t)
{
	static const char *const base[] = { "10.0.0.0/16", "10.1.0.0/24" };
	static const char *const near[] = { "10.2.0.0/21" };
	static const char *const far[] = { "10.128.0.0/9" };
	static const char *const above[] = { "10.4.0.0/30" };
	struct sieve_xdp_config cfg = { .max_probes = 2 }, c;
	struct sxdp_keys l = { 0 }, f = { 0 };

	list_of(t, &l, base, 2);
	EXPECT_EQ(t, sxdp_config_fill(&cfg, &l), 0);
	c = cfg;
	list_of(t, &f, near, 1);
	EXPECT_EQ(t, sxdp_config_extend(&c, &f), 0);	/* /21 -> 8 keys of /24 */
	EXPECT_EQ(t, c.nr_v4_lens, 2);
	sxdp_keys_free(&f);
	c = cfg;
	list_of(t, &f, far, 1);
	EXPECT_EQ(t, sxdp_config_extend(&c, &f), -E2BIG);	/* /9 -> 128 keys of /16 */
	sxdp_keys_free(&f);
	c = cfg;
	list_of(t, &f, above, 1);
	EXPECT_EQ(t, sxdp_config_extend(&c, &f), -E2BIG);	/* no length at or above /30 */
	c.max_probes = 3;
	EXPECT_EQ(t, sxdp_config_extend(&c, &f), 0);		/* a free probe */
	EXPECT_EQ(t, c.nr_v4_lens, 3);
	EXPECT_EQ(t, c.v4_lens[0], 30);
	sxdp_keys_free(&f);
	sxdp_keys_free(&l);
}

/*
 * The filter backend's keys are a set (a cuckoo filter holds at most 8
 * copies of a key: nested prefixes must not each store one), its digests
 * each once, and a live add there never takes a new probe length: it
 * would move stored prefixes.
 */
static void sieve_unit_cpe_filter_backend(struct sieve_test *t)
{
	static const char *const in[] = { "10.0.0.0/23", "10.0.0.0/24", "10.0.1.5" };
	static const char *const above[] = { "10.4.0.0/30" };
	struct sieve_xdp_config cfg = { .max_probes = 2 }, c;
	struct sxdp_keys l = { 0 }, f = { 0 }, x = { 0 };
	const char *name;
	char text[256];
	size_t i, nd, shared = 0;
	uint64_t *d;

	list_of(t, &l, in, 3);
	cfg.max_probes = 1;
	EXPECT_EQ(t, sxdp_config_fill(&cfg, &l), 0);
	cfg.flags = SIEVE_XDP_F_FILTER;
	EXPECT_EQ(t, sxdp_plan_keys(&l, &cfg, &x, text, sizeof(text)), 0);
	EXPECT_EQ(t, x.n, 3);
	for (i = 0; i < x.n; i++) {
		sxdp_format_entry(&x.keys[i], text, sizeof(text));
		shared += !strcmp(text, "10.0.0.0/24");
	}
	EXPECT_EQ(t, shared, 1);	/* the /23's and the /24's key, once */
	/* A key twice (two entries make it) is one digest. */
	EXPECT_EQ(t, sxdp_keys_add(&x, &x.keys[0]), 0);
	EXPECT_EQ(t, sxdp_filter_digests(&x, cfg.digest_key, &d, &nd), 0);
	EXPECT_EQ(t, nd, 3);
	for (i = 1; i < nd; i++)
		EXPECT_TRUE(t, d[i - 1] < d[i]);
	free(d);
	cfg.flags = 0;
	list_of(t, &f, above, 1);
	c = cfg;
	c.max_probes = 2;
	EXPECT_EQ(t, sxdp_config_extend(&c, &f), 0);	/* a free probe */
	c = cfg;
	c.max_probes = 2;
	c.flags = SIEVE_XDP_F_FILTER;
	EXPECT_EQ(t, sxdp_config_extend(&c, &f), -E2BIG);	/* never for the filter backend */
	EXPECT_EQ(t, c.nr_v4_lens, 1);
	EXPECT_EQ(t, sxdp_filter_parse("filter:xdp-bl.1", &name), 0);
	EXPECT_TRUE(t, !strcmp(name, "xdp-bl.1"));
	EXPECT_EQ(t, sxdp_filter_parse("filter:", &name), -EINVAL);
	EXPECT_EQ(t, sxdp_filter_parse("filter:a b", &name), -EINVAL);
	EXPECT_EQ(t, sxdp_filter_parse("blocked", &name), 1);
	EXPECT_TRUE(t, !strcmp(sxdp_backend_filter("filter:x"), "x"));
	EXPECT_TRUE(t, !sxdp_backend_filter("bloom-map"));
	EXPECT_TRUE(t, !strcmp(sxdp_backend_name(SIEVE_XDP_F_FILTER), "filter"));
	sxdp_keys_free(&l);
	sxdp_keys_free(&f);
	sxdp_keys_free(&x);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_cpe_cases[] = {
	CASE(sieve_unit_cpe_vs_brute_force),
	CASE(sieve_unit_cpe_one_probe),
	CASE(sieve_unit_cpe_all_v4_lengths),
	CASE(sieve_unit_cpe_v6_capping),
	CASE(sieve_unit_cpe_expand),
	CASE(sieve_unit_cpe_extend),
	CASE(sieve_unit_cpe_filter_backend),
};

const unsigned int sieve_cpe_cases_n = ARRAY_SIZE(sieve_cpe_cases);
