// SPDX-License-Identifier: GPL-2.0
/*
 * Every list the planner accepts builds, on every backend (issue 20, 5).
 * Random lists (prefixes of every length, nested, duplicated, IPv4 and
 * IPv6, sources among them, a random probe budget) go through what a
 * rebuild does in userspace: sxdp_plan_keys, then the sizing plan of the
 * bloom-map and blocked backends, or the filter backend's keys into a
 * cuckoo filter (libsieve's local one, the module's core) grown as
 * devfilter.c grows its tables. Nothing may fail, and every key of every
 * entry must be found. A cuckoo filter holds at most 8 copies of a key: a
 * filter backend that stored one copy per entry failed on 9 nested
 * prefixes on one probe length, and every rebuild after.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsieve.h"
#include "unit.h"
#include "xdp.h"

/* Any secret: the digest only has to be the one the program asks. */
static const __u64 test_secret[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };

static u64 rng;

static u64 rnd(void)
{
	return sieve_test_mix64(rng++);
}

/* The prefix of @len of @base, as the CLI reads it. */
static void add_prefix(struct sieve_test *t, struct sxdp_keys *l, bool v6, const uint8_t *base,
		       unsigned int len)
{
	char addr[INET6_ADDRSTRLEN], text[64];
	struct sieve_xdp_key k;
	const char *why;
	uint8_t a[16] = { 0 };
	unsigned int b;

	/* The parser refuses host bits: only the first @len are copied. */
	for (b = 0; b < len; b++)
		a[b / 8] |= base[b / 8] & (0x80 >> (b % 8));
	inet_ntop(v6 ? AF_INET6 : AF_INET, a, addr, sizeof(addr));
	snprintf(text, sizeof(text), "%s/%u", addr, len);
	CHECKF(t, !sxdp_parse_entry(text, &k, &why), "%s: %s", text, why);
	sxdp_keys_add(l, &k);
}

/* Flips the bits of @a from @from (counted from the top) on, at random. */
static void scramble(uint8_t *a, unsigned int from, unsigned int bytes)
{
	unsigned int b;

	for (b = from; b < bytes * 8; b++)
		if (rnd() & 1)
			a[b / 8] ^= 0x80 >> (b % 8);
}

/*
 * A random list: clusters of prefixes around random addresses, nested
 * (one address, several lengths) or siblings (bits below the shortest
 * length scrambled), some twice, and sources. Lengths come from a window
 * of at most @window (so expansion stays small enough to check every
 * key), or from anywhere when there are no more of them than @probes.
 */
static void random_list(struct sieve_test *t, struct sxdp_keys *l, unsigned int probes,
			unsigned int window)
{
	/* From anywhere: one cluster, or clusters' lengths would add up past @probes. */
	unsigned int clusters = window ? 1 + rnd() % 4 : 1, c, i, n, len, lo, hi, maxlen;
	uint8_t base[16], a[16];
	u64 lo_of[2] = { rnd(), rnd() };
	bool v6, chain;

	for (c = 0; c < clusters; c++) {
		v6 = rnd() & 1;
		maxlen = v6 ? 128 : 32;
		for (i = 0; i < 16; i++)
			base[i] = (uint8_t)rnd();
		chain = window && (rnd() & 1);
		/*
		 * One window per family: clusters far apart would make lists of
		 * millions of keys (the planner takes up to 2^22 extra), too
		 * slow to check key by key.
		 */
		lo = 1 + lo_of[v6] % maxlen;
		/* A chain spans 9 lengths or more: 9 entries can make one key. */
		hi = lo + (chain ? 8 + rnd() % 3 : rnd() % (window + 1));
		if (hi > maxlen)
			hi = maxlen;
		n = chain ? 9 + rnd() % 4 : 1 + rnd() % 12;
		for (i = 0; i < n; i++) {
			/* A chain: every length from lo up, each nested in the last. */
			if (window && chain && lo + i <= hi)
				len = lo + i;
			else
				len = window ? lo + rnd() % (hi - lo + 1) : 1 + rnd() % maxlen;
			if (!window && i >= probes)
				break;	/* no more lengths than probes: no expansion */
			memcpy(a, base, sizeof(a));
			if (rnd() % 3 == 0)
				scramble(a, lo, v6 ? 16 : 4);
			add_prefix(t, l, v6, a, len);
			if (rnd() % 4 == 0)
				add_prefix(t, l, v6, a, len);	/* the same entry twice */
			if (rnd() % 4 == 0)
				add_prefix(t, l, v6, a, maxlen);	/* a source inside */
		}
	}
	sxdp_keys_sort(l);	/* as the store holds it: a set */
}

/*
 * A local filter of @type holding @keys' digests, grown as devfilter.c
 * grows NAME, from a quarter of headroom (a rebuild's least; fuller than
 * the loader's tables, so stricter).
 */
static int fill(struct sieve_test *t, uint32_t type, const struct sxdp_keys *keys,
		struct sieve_local **out)
{
	uint64_t cap = keys->n + keys->n / 4 + 16, *d;
	struct sieve_batch_stats st;
	uint32_t *lens;
	unsigned int try;
	size_t i;
	int ret = -ENOMEM;

	d = calloc(keys->n + 1, sizeof(*d));
	lens = calloc(keys->n + 1, sizeof(*lens));
	for (i = 0; d && lens && i < keys->n; i++) {
		d[i] = sieve_xdp_digest(&keys->keys[i], test_secret);
		lens[i] = sizeof(*d);
	}
	for (try = 0; d && lens && try < 3; try++) {
		struct sieve_params p = {
			.type = type, .capacity = cap << try, .fpp_ppb = 1000000,
		};

		ret = sieve_local_create(&p, out);
		if (ret)
			break;
		ret = sieve_local_batch(*out, SIEVE_BATCH_ADD, 0, d, lens, keys->n, NULL, &st);
		if (!ret)
			break;
		sieve_local_destroy(*out);
		*out = NULL;
		if (ret != -ENOSPC)
			break;
	}
	free(d);
	free(lens);
	CHECKF(t, !ret, "%zu keys into a local filter of type %u: %s", keys->n, type,
	       strerror(-ret));
	return ret;
}

/* Every key every entry of @l makes under @cfg is in @f. */
static void check_found(struct sieve_test *t, const struct sxdp_keys *l,
			const struct sieve_xdp_config *cfg, struct sieve_local *f)
{
	struct sxdp_keys one = { 0 }, x = { 0 };
	size_t i, j, missed = 0;
	uint64_t d;

	for (i = 0; i < l->n; i++) {
		one.n = 0;
		sxdp_keys_add(&one, &l->keys[i]);
		CHECKF(t, !sxdp_expand(&one, cfg, &x), "an entry of the list does not expand");
		for (j = 0; j < x.n; j++) {
			d = sieve_xdp_digest(&x.keys[j], test_secret);
			missed += sieve_local_query(f, &d, sizeof(d)) != 1;
		}
	}
	CHECKF(t, !missed, "%zu keys of stored entries not found", missed);
	sxdp_keys_free(&one);
	sxdp_keys_free(&x);
}

/*
 * One list on one backend: planned as sxdp_build plans it, sized, filled;
 * 1 if the planner refuses it (too many keys for the probes), else 0.
 */
static int build_one(struct sieve_test *t, const struct sxdp_keys *l, uint32_t flags,
		     unsigned int probes)
{
	struct sieve_xdp_config cfg = { .flags = flags, .max_probes = probes };
	struct sxdp_keys keys = { 0 };
	struct sieve_local *f = NULL;
	struct sxdp_plan plan;
	char err[256];
	uint32_t type;
	int ret;

	ret = sxdp_plan_keys(l, &cfg, &keys, err, sizeof(err));
	if (ret == -E2BIG) {
		sxdp_keys_free(&keys);
		return 1;
	}
	CHECKF(t, !ret, "%zu entries, %u probes: %s", l->n, probes, err);
	if (!(flags & SIEVE_XDP_F_FILTER)) {
		ret = sxdp_plan_for(flags, sxdp_capacity_for(keys.n), SXDP_DEFAULT_FPP_PPB, &plan);
		CHECKF(t, !ret, "no %s plan for %zu keys", sxdp_backend_name(flags), keys.n);
	}
	type = flags & SIEVE_XDP_F_FILTER ? SIEVE_CUCKOO :
	       flags & SIEVE_XDP_F_BLOCKED ? SIEVE_BLOCKED_BLOOM : SIEVE_BLOOM;
	if (!ret)
		ret = fill(t, type, &keys, &f);
	if (!ret)
		check_found(t, l, &cfg, f);
	sieve_local_destroy(f);
	sxdp_keys_free(&keys);
	return 0;
}

static const uint32_t backends[] = { 0, SIEVE_XDP_F_BLOCKED, SIEVE_XDP_F_FILTER };

/* Random lists the planner accepts build on every backend, their keys found. */
static void sieve_unit_build_random_lists(struct sieve_test *t)
{
	unsigned int round, b, probes, built = 0, refused = 0;
	struct sxdp_keys l = { 0 };

	rng = 0x5eed0020;
	for (round = 0; round < 60; round++) {
		/* Few probes half the time: more prefixes share a probe length. */
		probes = 1 + rnd() % (round & 1 ? 2 : SXDP_DEFAULT_MAX_PROBES);
		l.n = 0;
		random_list(t, &l, probes, round % 4 ? rnd() % 11 : 0);
		for (b = 0; b < ARRAY_SIZE(backends); b++) {
			if (build_one(t, &l, backends[b], probes))
				refused++;
			else
				built++;
		}
	}
	sieve_note("%u builds, %u lists refused by the planner", built, refused);
	EXPECT_TRUE(t, built > refused);
	sxdp_keys_free(&l);
}

/*
 * 9 nested prefixes of both families on one probe length build on every
 * backend; 20 (2^19 keys) on the filter backend, where copies counted.
 */
static void sieve_unit_build_nested(struct sieve_test *t)
{
	static const unsigned int depth[] = { 9, 20 };
	uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, 10, 8 };
	struct sxdp_keys l = { 0 };
	unsigned int d, i, b, v6;

	for (d = 0; d < ARRAY_SIZE(depth); d++) {
		for (v6 = 0; v6 < 2; v6++) {
			l.n = 0;
			for (i = 0; i < depth[d]; i++)
				add_prefix(t, &l, v6, v6 ? a : a + 4, (v6 ? 127 : 31) - i);
			sxdp_keys_sort(&l);
			for (b = depth[d] > 9 ? 2 : 0; b < ARRAY_SIZE(backends); b++)
				CHECKF(t, !build_one(t, &l, backends[b], 1),
				       "%u nested refused by the planner", depth[d]);
		}
	}
	sxdp_keys_free(&l);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_build_cases[] = {
	CASE(sieve_unit_build_random_lists),
	CASE(sieve_unit_build_nested),
};

const unsigned int sieve_build_cases_n = ARRAY_SIZE(sieve_build_cases);
