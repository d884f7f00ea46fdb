// SPDX-License-Identifier: GPL-2.0
/*
 * Test cases of the filter cores, shared by two suites: the userspace unit
 * suite runs them under cmocka (tests/unit/), the VM suite runs them inside
 * the kernel (tests/vm/ #includes this file). So this file uses only what
 * filter.h and sieve_env.h provide: no floating point, no libc beyond
 * memset/memcpy, every allocation freed on every path, and sizes small
 * enough that a case takes a few milliseconds natively (the VM emulates the
 * CPU in software). The statistical tests with millions of keys live in
 * tests/unit/ only.
 *
 * Every case uses fixed seeds, so each result is reproducible: a probabilistic
 * expectation either always holds or always fails. Keys are not stored but
 * regenerated: key (set, i) is a pure function of both numbers, and keys of 8
 * bytes or more are distinct for distinct (set, i) (their first 8 bytes are a
 * bijective mix of both).
 */
#include "harness.h"

#define TC_KEY_MAX	64	/* longest generated key kept on the stack */
#define TC_LONG_KEY	1000	/* the long-key cases allocate this many bytes */

/* Seeds: arbitrary, fixed. */
#define TC_SEED_A	0x5eed0001U
#define TC_SEED_B	0x5eed0002U

/* Key sets: keys of different sets are distinct (when 8 bytes or longer). */
enum { TC_SET_IN = 1, TC_SET_IN2, TC_SET_OUT, TC_SET_MORE };


/* Writes the @len bytes of key (@set, @i) into @buf. */
static void tc_key_fill(u8 *buf, u32 set, u32 i, u32 len)
{
	u64 x = sieve_test_mix64((u64)set << 32 | i);
	u8 word[8];
	u32 off;

	for (off = 0; off < len; off += 8) {
		put_unaligned_le64(x, word);
		memcpy(buf + off, word, min_t(u32, 8, len - off));
		x = sieve_test_mix64(x + 0x9e3779b97f4a7c15ULL);
	}
}

/* Length of key (@set, @i) in the "distinct keys" sets: 8 to 64 bytes. */
static u32 tc_key_len(u32 set, u32 i)
{
	return 8 + (u32)(sieve_test_mix64((u64)i << 32 | set) >> 32) % (TC_KEY_MAX - 8 + 1);
}

/* A generated key, distinct from every other (set, i) of length >= 8. */
struct tc_key {
	u8 b[TC_KEY_MAX];
	u32 len;
};

static void tc_key_make(struct tc_key *k, u32 set, u32 i)
{
	k->len = tc_key_len(set, i);
	tc_key_fill(k->b, set, i, k->len);
}

/* Like tc_key_make() but 1 to 64 bytes long: short keys may repeat. */
static void tc_key_make_any(struct tc_key *k, u32 set, u32 i)
{
	k->len = 1 + (u32)(sieve_test_mix64((u64)i << 32 | set) >> 40) % TC_KEY_MAX;
	tc_key_fill(k->b, set, i, k->len);
}

static int tc_add(struct sieve_filter *f, u32 set, u32 i)
{
	struct tc_key k;

	tc_key_make(&k, set, i);
	return sieve_filter_add(f, k.b, k.len);
}

static bool tc_has(const struct sieve_filter *f, u32 set, u32 i)
{
	struct tc_key k;

	tc_key_make(&k, set, i);
	return sieve_filter_contains(f, k.b, k.len);
}

static u32 tc_count(const struct sieve_filter *f, u32 set, u32 i)
{
	struct tc_key k;

	tc_key_make(&k, set, i);
	return sieve_filter_count(f, k.b, k.len);
}

static int tc_del(struct sieve_filter *f, u32 set, u32 i)
{
	struct tc_key k;

	tc_key_make(&k, set, i);
	return sieve_filter_delete(f, k.b, k.len);
}

/*
 * Adds keys (@set, @from .. @to - 1); returns how many adds said "may have
 * been present" (1), or the first error.
 */
static long tc_add_range(struct sieve_filter *f, u32 set, u32 from, u32 to)
{
	long present = 0;
	u32 i;
	int ret;

	for (i = from; i < to; i++) {
		ret = tc_add(f, set, i);
		if (ret < 0)
			return ret;
		present += ret;
		if ((i & 4095) == 4095)
			cond_resched();
	}
	return present;
}

/* How many of keys (@set, @from .. @to - 1) the filter says it contains. */
static u32 tc_found(const struct sieve_filter *f, u32 set, u32 from, u32 to)
{
	u32 i, found = 0;

	for (i = from; i < to; i++) {
		found += tc_has(f, set, i);
		if ((i & 4095) == 4095)
			cond_resched();
	}
	return found;
}

static struct sieve_geometry tc_bloom(u64 nbits, u32 nhashes, u32 seed)
{
	struct sieve_geometry g = {
		.type = SIEVE_BLOOM, .seed = seed, .nbits = nbits, .nhashes = nhashes,
	};

	return g;
}

static struct sieve_geometry tc_blocked(u64 nbits, u32 nhashes, u32 seed)
{
	struct sieve_geometry g = {
		.type = SIEVE_BLOCKED_BLOOM, .seed = seed, .nbits = nbits, .nhashes = nhashes,
	};

	return g;
}

static struct sieve_geometry tc_cuckoo(u64 nbuckets, u32 fp_bits, u32 seed)
{
	struct sieve_geometry g = {
		.type = SIEVE_CUCKOO, .seed = seed, .nbuckets = nbuckets, .fp_bits = fp_bits,
	};

	return g;
}

/* Creates a filter that the case expects to be valid; NULL (recorded) if not. */
static struct sieve_filter *tc_new_filter(struct sieve_test *t, struct sieve_geometry g)
{
	struct sieve_filter *f = NULL;
	int err = sieve_filter_create(&g, &f);

	EXPECT_EQ(t, err, 0);
	if (err)
		return NULL;
	EXPECT_TRUE(t, f != NULL);
	return f;
}

static bool tc_geo_equal(const struct sieve_geometry *a, const struct sieve_geometry *b)
{
	return a->type == b->type && a->seed == b->seed && a->nbits == b->nbits &&
	       a->nbuckets == b->nbuckets && a->nhashes == b->nhashes &&
	       a->fp_bits == b->fp_bits;
}

/* |a - b| <= b * ppm / 10^6, in integers (a, b < 2^43). */
static bool tc_within_ppm(u64 a, u64 b, u32 ppm)
{
	u64 diff = a > b ? a - b : b - a;

	return diff * 1000000 <= b * ppm;
}

static void tc_expect_near(struct sieve_test *t, const char *file, int line,
			const char *expr, u64 a, u64 b, u32 ppm)
{
	if (!tc_within_ppm(a, b, ppm))
		sieve_test_fail(t, file, line, expr, a, b);
}

/* Expects @a within @pct percent of @b (recording both if not). */
#define EXPECT_NEAR_PCT(t, a, b, pct) \
	tc_expect_near(t, __FILE__, __LINE__, #a " within " #pct "% of " #b, a, b, (pct) * 10000)

/*
 * The geometries most cases run on: big enough that a handful of keys leaves
 * them nearly empty (so "not contained" expectations are safe with the fixed
 * seeds), small enough for the VM.
 */
static struct sieve_geometry tc_geo_of(u32 type, u32 seed)
{
	switch (type) {
	case SIEVE_BLOOM:
		return tc_bloom(1 << 20, 6, seed);
	case SIEVE_BLOCKED_BLOOM:
		return tc_blocked(1 << 20, 6, seed);
	default:
		return tc_cuckoo(1 << 13, 16, seed);
	}
}

/* ---- Behaviour common to the three types ---------------------------------- */

static void tc_check_add_new_then_present(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));

	if (!f)
		return;
	/* A key never seen before is reported new... */
	EXPECT_EQ(t, tc_add(f, TC_SET_IN, 0), 0);
	EXPECT_TRUE(t, tc_has(f, TC_SET_IN, 0));
	/* ...and the same key again as (maybe) present. */
	EXPECT_EQ(t, tc_add(f, TC_SET_IN, 0), 1);
	/* Another key is new again. */
	EXPECT_EQ(t, tc_add(f, TC_SET_IN, 1), 0);
	sieve_filter_destroy(f);
}

static void tc_check_empty_contains_nothing(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));

	if (!f)
		return;
	/* An empty filter has no false positive at all. */
	EXPECT_EQ(t, tc_found(f, TC_SET_OUT, 0, 1000), 0);
	EXPECT_EQ(t, tc_count(f, TC_SET_OUT, 0), 0);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 0);
	EXPECT_EQ(t, sieve_filter_fpr_ppb(f), 0);
	sieve_filter_destroy(f);
}

/* 20000 keys of 1 to 64 bytes (short ones repeat): every one is found. */
static void tc_check_no_false_negatives(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));
	u32 i, missing = 0, failed = 0;
	struct tc_key k;

	if (!f)
		return;
	for (i = 0; i < 20000; i++) {
		tc_key_make_any(&k, TC_SET_IN, i);
		failed += sieve_filter_add(f, k.b, k.len) < 0;
	}
	for (i = 0; i < 20000; i++) {
		tc_key_make_any(&k, TC_SET_IN, i);
		missing += !sieve_filter_contains(f, k.b, k.len);
		missing += sieve_filter_count(f, k.b, k.len) == 0;
	}
	EXPECT_EQ(t, failed, 0);
	/* No stored key is ever reported absent, by contains or by count. */
	EXPECT_EQ(t, missing, 0);
	sieve_filter_destroy(f);
}

static void tc_check_one_byte_keys(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));
	u32 c, failed = 0, missing = 0;
	u8 b;

	if (!f)
		return;
	for (c = 0; c < 256; c++) {
		b = c;
		failed += sieve_filter_add(f, &b, 1) != 0;
	}
	for (c = 0; c < 256; c++) {
		b = c;
		missing += !sieve_filter_contains(f, &b, 1);
	}
	/* The 256 one-byte keys are 256 different keys, all new when added. */
	EXPECT_EQ(t, failed, 0);
	EXPECT_EQ(t, missing, 0);
	sieve_filter_destroy(f);
}

static void tc_check_long_key(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));
	u8 *key = sieve_zalloc(TC_LONG_KEY);

	if (!f || !key)
		goto out;
	tc_key_fill(key, TC_SET_IN, 0, TC_LONG_KEY);
	EXPECT_EQ(t, sieve_filter_add(f, key, TC_LONG_KEY), 0);
	EXPECT_TRUE(t, sieve_filter_contains(f, key, TC_LONG_KEY));
	/* The last byte is hashed too: change it and the key is another one. */
	key[TC_LONG_KEY - 1] ^= 1;
	EXPECT_TRUE(t, !sieve_filter_contains(f, key, TC_LONG_KEY));
	EXPECT_EQ(t, sieve_filter_add(f, key, TC_LONG_KEY), 0);
	/* A prefix of a stored key is not the key. */
	EXPECT_TRUE(t, !sieve_filter_contains(f, key, TC_LONG_KEY - 1));
	EXPECT_TRUE(t, sieve_filter_contains(f, key, TC_LONG_KEY));
out:
	EXPECT_TRUE(t, key != NULL);
	sieve_free(key);
	if (f)
		sieve_filter_destroy(f);
}

static void tc_check_empty_key(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));
	u8 zero = 0;

	if (!f)
		return;
	EXPECT_TRUE(t, !sieve_filter_contains(f, &zero, 0));
	/* The empty key is a key like any other. */
	EXPECT_EQ(t, sieve_filter_add(f, &zero, 0), 0);
	EXPECT_TRUE(t, sieve_filter_contains(f, &zero, 0));
	EXPECT_EQ(t, sieve_filter_add(f, &zero, 0), 1);
	/* It differs from the one-byte key "\0". */
	EXPECT_TRUE(t, !sieve_filter_contains(f, &zero, 1));
	sieve_filter_destroy(f);
}

static void tc_check_clear(struct sieve_test *t, u32 type)
{
	struct sieve_geometry g = tc_geo_of(type, TC_SEED_A);
	struct sieve_filter *f = tc_new_filter(t, g);

	if (!f)
		return;
	EXPECT_TRUE(t, tc_add_range(f, TC_SET_IN, 0, 2000) >= 0);
	sieve_filter_clear(f);
	/* Every key is forgotten... */
	EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, 2000), 0);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 0);
	EXPECT_EQ(t, sieve_filter_fpr_ppb(f), 0);
	/* ...while the geometry, seed included, stays. */
	EXPECT_TRUE(t, tc_geo_equal(&f->geo, &g));
	/* The filter works as new afterwards. */
	EXPECT_EQ(t, tc_add(f, TC_SET_IN, 0), 0);
	EXPECT_TRUE(t, tc_has(f, TC_SET_IN, 0));
	sieve_filter_destroy(f);
}

/*
 * Two filters of the same geometry and seed given the same keys answer every
 * query alike; with another seed, the false positives fall elsewhere.
 */
static void tc_check_seeds(struct sieve_test *t, struct sieve_geometry g)
{
	struct sieve_filter *a, *b, *c;
	u32 i, same_differs = 0, seed_differs = 0;
	bool in_a;

	g.seed = TC_SEED_A;
	a = tc_new_filter(t, g);
	b = tc_new_filter(t, g);
	g.seed = TC_SEED_B;
	c = tc_new_filter(t, g);
	if (!a || !b || !c)
		goto out;
	EXPECT_TRUE(t, tc_add_range(a, TC_SET_IN, 0, 3000) >= 0);
	EXPECT_TRUE(t, tc_add_range(b, TC_SET_IN, 0, 3000) >= 0);
	EXPECT_TRUE(t, tc_add_range(c, TC_SET_IN, 0, 3000) >= 0);
	for (i = 0; i < 5000; i++) {
		in_a = tc_has(a, TC_SET_OUT, i);
		same_differs += in_a != tc_has(b, TC_SET_OUT, i);
		seed_differs += in_a != tc_has(c, TC_SET_OUT, i);
	}
	/* Same seed: the very same false positives. */
	EXPECT_EQ(t, same_differs, 0);
	EXPECT_EQ(t, sieve_filter_estimate_items(a), sieve_filter_estimate_items(b));
	EXPECT_EQ(t, sieve_filter_fpr_ppb(a), sieve_filter_fpr_ppb(b));
	/* Another seed: other false positives (the seed reaches the hash). */
	EXPECT_TRUE(t, seed_differs > 0);
out:
	if (a)
		sieve_filter_destroy(a);
	if (b)
		sieve_filter_destroy(b);
	if (c)
		sieve_filter_destroy(c);
}

/* ---- Bloom and blocked Bloom ------------------------------------------------ */

static void tc_check_bloomish_count(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));

	if (!f)
		return;
	EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), 0);
	tc_add(f, TC_SET_IN, 0);
	EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), 1);
	/* A Bloom filter cannot count copies: still 1 after a second add. */
	tc_add(f, TC_SET_IN, 0);
	EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), 1);
	sieve_filter_destroy(f);
}

static void tc_check_bloomish_delete(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));

	if (!f)
		return;
	tc_add(f, TC_SET_IN, 0);
	/* Bloom filters cannot delete, and say so... */
	EXPECT_EQ(t, tc_del(f, TC_SET_IN, 0), -EOPNOTSUPP);
	EXPECT_EQ(t, tc_del(f, TC_SET_OUT, 0), -EOPNOTSUPP);
	/* ...without losing the key. */
	EXPECT_TRUE(t, tc_has(f, TC_SET_IN, 0));
	sieve_filter_destroy(f);
}

/*
 * Merging B into A gives the union: A holds the keys of both, and its bitmap
 * is the one a filter given all the keys has (same estimate and FPR, which
 * are functions of the bitmap). B is left alone.
 */
static void tc_check_bloomish_merge_union(struct sieve_test *t, u32 type)
{
	struct sieve_geometry g = tc_geo_of(type, TC_SEED_A);
	struct sieve_filter *a = tc_new_filter(t, g);
	struct sieve_filter *b = tc_new_filter(t, g);
	struct sieve_filter *all = tc_new_filter(t, g);
	u64 b_items;

	if (!a || !b || !all)
		goto out;
	tc_add_range(a, TC_SET_IN, 0, 5000);
	tc_add_range(b, TC_SET_IN2, 0, 5000);
	tc_add_range(all, TC_SET_IN, 0, 5000);
	tc_add_range(all, TC_SET_IN2, 0, 5000);
	b_items = sieve_filter_estimate_items(b);

	EXPECT_EQ(t, sieve_filter_merge(a, b), 0);
	EXPECT_EQ(t, tc_found(a, TC_SET_IN, 0, 5000), 5000);
	EXPECT_EQ(t, tc_found(a, TC_SET_IN2, 0, 5000), 5000);
	EXPECT_EQ(t, sieve_filter_estimate_items(a), sieve_filter_estimate_items(all));
	EXPECT_EQ(t, sieve_filter_fpr_ppb(a), sieve_filter_fpr_ppb(all));
	/* The source is unchanged. */
	EXPECT_EQ(t, sieve_filter_estimate_items(b), b_items);
	EXPECT_EQ(t, tc_found(b, TC_SET_IN2, 0, 5000), 5000);
out:
	if (a)
		sieve_filter_destroy(a);
	if (b)
		sieve_filter_destroy(b);
	if (all)
		sieve_filter_destroy(all);
}

static void tc_check_bloomish_merge_into_empty_and_self(struct sieve_test *t, u32 type)
{
	struct sieve_geometry g = tc_geo_of(type, TC_SEED_A);
	struct sieve_filter *a = tc_new_filter(t, g);
	struct sieve_filter *e = tc_new_filter(t, g);
	u64 items;
	u32 fpr;

	if (!a || !e)
		goto out;
	tc_add_range(a, TC_SET_IN, 0, 3000);
	items = sieve_filter_estimate_items(a);
	fpr = sieve_filter_fpr_ppb(a);
	/* Merging an empty filter changes nothing... */
	EXPECT_EQ(t, sieve_filter_merge(a, e), 0);
	EXPECT_EQ(t, sieve_filter_estimate_items(a), items);
	/* ...nor does merging a filter into itself (OR is idempotent). */
	EXPECT_EQ(t, sieve_filter_merge(a, a), 0);
	EXPECT_EQ(t, sieve_filter_estimate_items(a), items);
	EXPECT_EQ(t, sieve_filter_fpr_ppb(a), fpr);
	/* Merging into an empty filter copies. */
	EXPECT_EQ(t, sieve_filter_merge(e, a), 0);
	EXPECT_EQ(t, sieve_filter_estimate_items(e), items);
	EXPECT_EQ(t, tc_found(e, TC_SET_IN, 0, 3000), 3000);
out:
	if (a)
		sieve_filter_destroy(a);
	if (e)
		sieve_filter_destroy(e);
}

/* Any geometry difference, the seed included, makes a merge -EINVAL. */
static void tc_check_bloomish_merge_mismatch(struct sieve_test *t, u32 type)
{
	struct sieve_geometry g = tc_geo_of(type, TC_SEED_A), o;
	struct sieve_filter *a = tc_new_filter(t, g), *b;
	u64 items;
	int i;

	if (!a)
		return;
	tc_add_range(a, TC_SET_IN, 0, 1000);
	items = sieve_filter_estimate_items(a);
	for (i = 0; i < 5; i++) {
		o = g;
		switch (i) {
		case 0:
			o.seed = TC_SEED_B;
			break;
		case 1:
			o.nbits = g.nbits * 2;
			break;
		case 2:
			o.nbits = g.nbits - 512;
			break;
		case 3:
			o.nhashes = g.nhashes + 1;
			break;
		default:	/* the other Bloom type, same bits and hashes */
			o.type = type == SIEVE_BLOOM ? SIEVE_BLOCKED_BLOOM : SIEVE_BLOOM;
			break;
		}
		b = tc_new_filter(t, o);
		if (!b)
			continue;
		tc_add_range(b, TC_SET_IN2, 0, 1000);
		EXPECT_EQ(t, sieve_filter_merge(a, b), -EINVAL);
		sieve_filter_destroy(b);
	}
	/* A refused merge leaves the destination alone. */
	EXPECT_EQ(t, sieve_filter_estimate_items(a), items);
	EXPECT_EQ(t, tc_found(a, TC_SET_IN, 0, 1000), 1000);
	sieve_filter_destroy(a);
}

/* At moderate fill the estimate is within 3% of the true number of keys. */
static void tc_check_bloomish_estimate(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));
	static const u32 fills[] = { 8192, 32768, 65536, 131072 };
	u32 i, n = 0;
	u64 est;

	if (!f)
		return;
	/* 2^20 bits, 6 hashes: 1/128 to 1/8 key per bit, 5% to 53% of the bits set. */
	for (i = 0; i < ARRAY_SIZE(fills); i++) {
		tc_add_range(f, TC_SET_IN, n, fills[i]);
		n = fills[i];
		est = sieve_filter_estimate_items(f);
		EXPECT_NEAR_PCT(t, est, n, 3);
	}
	sieve_filter_destroy(f);
}

/*
 * The FPR estimate starts at 0 and grows with every batch of keys: 2^20
 * bits, 6 hashes, 128 down to 8 bits per key.
 *
 * Bloom: the estimate, (X/m)^k, follows the expected rate
 * (1 - (1 - 1/m)^(kn))^k within 10% (X, the bits set, spreads by under
 * 0.5% from filter to filter, so (X/m)^k by under 3%), and 1 ppb for the
 * rounding of rates as small as 9 ppb.
 *
 * Blocked Bloom: the estimate is the exact rate of the table, the mean
 * of C(x, k) / C(512, k) over its blocks, while sieve_expected_fpr_ppb()
 * is the upper bound sizing.c sizes with (36% above the exact
 * expectation at 128 bits per key, 1.6% at 8). So the estimate is
 * compared with the exact expectation for keys that set random k-subsets
 * (blocked_fpr_exact() in tests/unit/stats.c), within 4 times one table's
 * spread (a block's rate varies, and 2048 blocks average it out only so
 * far: 9.7% at 128 bits per key, 1.2% at 8), and that expectation must
 * lie below the bound.
 */
static const struct {
	u32 keys;
	u32 exact_ppb;		/* blocked Bloom, k = 6, 2048 blocks */
	u32 spread_pct;		/* 4 times one table's relative spread, rounded up */
} tc_fpr_fills[] = {
	{ 8192, 62, 39 }, { 32768, 43529, 14 }, { 65536, 1195008, 9 }, { 131072, 23489165, 5 },
};

static void tc_check_bloomish_fpr(struct sieve_test *t, u32 type)
{
	struct sieve_geometry g = tc_geo_of(type, TC_SEED_A);
	struct sieve_filter *f = tc_new_filter(t, g);
	u32 i, n = 0, fpr, prev = 0, expect, exact;
	u64 diff;

	if (!f)
		return;
	EXPECT_EQ(t, sieve_filter_fpr_ppb(f), 0);
	for (i = 0; i < ARRAY_SIZE(tc_fpr_fills); i++) {
		tc_add_range(f, TC_SET_IN, n, tc_fpr_fills[i].keys);
		n = tc_fpr_fills[i].keys;
		fpr = sieve_filter_fpr_ppb(f);
		expect = sieve_expected_fpr_ppb(&g, n);
		EXPECT_TRUE(t, fpr > prev);
		EXPECT_TRUE(t, fpr <= SIEVE_PPB);
		prev = fpr;
		if (type == SIEVE_BLOOM) {
			diff = fpr > expect ? fpr - expect : expect - fpr;
			if (diff * 10 > expect + 10)
				sieve_test_fail(t, __FILE__, __LINE__,
						"fpr (a) within 10% + 1 ppb of the expected rate (b)",
						fpr, expect);
			continue;
		}
		exact = tc_fpr_fills[i].exact_ppb;
		/* The table's rate is the exact expectation's, up to the table's spread... */
		diff = fpr > exact ? fpr - exact : exact - fpr;
		if (diff * 100 > (u64)exact * tc_fpr_fills[i].spread_pct + 100)
			sieve_test_fail(t, __FILE__, __LINE__,
					"fpr (a) within 4 spreads + 1 ppb of the exact expectation (b)",
					fpr, exact);
		/* ...and the sizing's rate bounds that expectation. */
		if (exact > expect)
			sieve_test_fail(t, __FILE__, __LINE__,
					"exact expectation (a) at most the expected rate (b)",
					exact, expect);
	}
	sieve_filter_destroy(f);
}

/* The smallest table: every bit set after enough keys, so everything matches. */
static void tc_check_bloomish_saturated(struct sieve_test *t, struct sieve_geometry g)
{
	struct sieve_filter *f = tc_new_filter(t, g);

	if (!f)
		return;
	EXPECT_TRUE(t, f->table_bytes * 8 >= g.nbits);
	/* Small filters keep their keys like big ones. */
	EXPECT_TRUE(t, tc_add_range(f, TC_SET_IN, 0, 10) >= 0);
	EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, 10), 10);
	/* 20000 keys on 512 bits or fewer: P(a bit stays 0) <= e^-39. */
	tc_add_range(f, TC_SET_IN, 10, 20000);
	EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, 20000), 20000);
	EXPECT_EQ(t, tc_found(f, TC_SET_OUT, 0, 1000), 1000);
	/* A full bitmap says a query is a false positive for sure. */
	EXPECT_TRUE(t, sieve_filter_fpr_ppb(f) >= SIEVE_PPB / 100 * 99);
	EXPECT_TRUE(t, sieve_filter_estimate_items(f) > 0);
	sieve_filter_destroy(f);
}

/* ---- Bloom ---------------------------------------------------------------- */

static void sieve_test_bloom_add_reports_new_then_present(struct sieve_test *t)
{
	tc_check_add_new_then_present(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_empty_contains_nothing(struct sieve_test *t)
{
	tc_check_empty_contains_nothing(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_no_false_negatives(struct sieve_test *t)
{
	tc_check_no_false_negatives(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_one_byte_keys(struct sieve_test *t)
{
	tc_check_one_byte_keys(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_long_key(struct sieve_test *t)
{
	tc_check_long_key(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_empty_key(struct sieve_test *t)
{
	tc_check_empty_key(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_count_is_0_or_1(struct sieve_test *t)
{
	tc_check_bloomish_count(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_delete_not_supported(struct sieve_test *t)
{
	tc_check_bloomish_delete(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_clear_forgets_keys(struct sieve_test *t)
{
	tc_check_clear(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_merge_is_union(struct sieve_test *t)
{
	tc_check_bloomish_merge_union(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_merge_empty_and_self(struct sieve_test *t)
{
	tc_check_bloomish_merge_into_empty_and_self(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_merge_mismatch_is_einval(struct sieve_test *t)
{
	tc_check_bloomish_merge_mismatch(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_estimate_items(struct sieve_test *t)
{
	tc_check_bloomish_estimate(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_fpr_grows_with_fill(struct sieve_test *t)
{
	tc_check_bloomish_fpr(t, SIEVE_BLOOM);
}

static void sieve_test_bloom_seeds(struct sieve_test *t)
{
	tc_check_seeds(t, tc_bloom(16384, 3, 0));
}

static void sieve_test_bloom_smallest_geometry(struct sieve_test *t)
{
	tc_check_bloomish_saturated(t, tc_bloom(64, 1, TC_SEED_A));
	tc_check_bloomish_saturated(t, tc_bloom(64, SIEVE_MAX_HASHES, TC_SEED_A));
}

/* Sizes that are not a multiple of 64 bits: every key found, no overrun. */
static void sieve_test_bloom_odd_sizes(struct sieve_test *t)
{
	static const u64 sizes[] = { 65, 100, 1000, 4097, 100003 };
	struct sieve_filter *f;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		f = tc_new_filter(t, tc_bloom(sizes[i], 3, TC_SEED_A));
		if (!f)
			continue;
		EXPECT_TRUE(t, f->table_bytes * 8 >= sizes[i]);
		EXPECT_TRUE(t, tc_add_range(f, TC_SET_IN, 0, 3000) >= 0);
		EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, 3000), 3000);
		sieve_filter_destroy(f);
	}
	/* The saturation case on a size that is no multiple of 64. */
	tc_check_bloomish_saturated(t, tc_bloom(100, 2, TC_SEED_A));
}

/* ---- Blocked Bloom -------------------------------------------------------- */

static void sieve_test_blocked_add_reports_new_then_present(struct sieve_test *t)
{
	tc_check_add_new_then_present(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_empty_contains_nothing(struct sieve_test *t)
{
	tc_check_empty_contains_nothing(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_no_false_negatives(struct sieve_test *t)
{
	tc_check_no_false_negatives(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_one_byte_keys(struct sieve_test *t)
{
	tc_check_one_byte_keys(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_long_key(struct sieve_test *t)
{
	tc_check_long_key(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_empty_key(struct sieve_test *t)
{
	tc_check_empty_key(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_count_is_0_or_1(struct sieve_test *t)
{
	tc_check_bloomish_count(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_delete_not_supported(struct sieve_test *t)
{
	tc_check_bloomish_delete(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_clear_forgets_keys(struct sieve_test *t)
{
	tc_check_clear(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_merge_is_union(struct sieve_test *t)
{
	tc_check_bloomish_merge_union(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_merge_empty_and_self(struct sieve_test *t)
{
	tc_check_bloomish_merge_into_empty_and_self(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_merge_mismatch_is_einval(struct sieve_test *t)
{
	tc_check_bloomish_merge_mismatch(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_estimate_items(struct sieve_test *t)
{
	tc_check_bloomish_estimate(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_fpr_grows_with_fill(struct sieve_test *t)
{
	tc_check_bloomish_fpr(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_blocked_seeds(struct sieve_test *t)
{
	tc_check_seeds(t, tc_blocked(16384, 3, 0));
}

static void sieve_test_blocked_smallest_geometry(struct sieve_test *t)
{
	tc_check_bloomish_saturated(t, tc_blocked(512, 1, TC_SEED_A));
	tc_check_bloomish_saturated(t, tc_blocked(512, SIEVE_MAX_HASHES, TC_SEED_A));
}

/*
 * One key sets exactly k distinct bits of one block: in a one-block filter,
 * 32 bits of 512, a lone key leaves the FPR estimate at 1 / C(512, 32),
 * about 1e-50, and with 16 keys every one of them is still found.
 */
static void sieve_test_blocked_one_block(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_blocked(512, SIEVE_MAX_HASHES, TC_SEED_A));

	if (!f)
		return;
	EXPECT_EQ(t, f->table_bytes, 64);
	EXPECT_EQ(t, tc_add(f, TC_SET_IN, 0), 0);
	EXPECT_TRUE(t, sieve_filter_fpr_ppb(f) < 10);
	/* One key in 512 bits: no other key (of 1000) matches all 32 bits. */
	EXPECT_EQ(t, tc_found(f, TC_SET_OUT, 0, 1000), 0);
	EXPECT_TRUE(t, tc_add_range(f, TC_SET_IN, 1, 16) >= 0);
	EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, 16), 16);
	sieve_filter_destroy(f);
}

/* ---- Cuckoo --------------------------------------------------------------- */

/*
 * Adds distinct keys (@set, 0, 1, ...) until the first -ENOSPC; returns how
 * many were stored (the key that got -ENOSPC is not), @limit if the table
 * never filled up, or another error.
 */
static long tc_cuckoo_fill(struct sieve_filter *f, u32 set, u32 limit)
{
	u32 i;
	int ret;

	for (i = 0; i < limit; i++) {
		ret = tc_add(f, set, i);
		if (ret == -ENOSPC)
			return i;
		if (ret < 0)
			return ret;
		if ((i & 4095) == 4095)
			cond_resched();
	}
	return limit;
}

/* The table the full-table cases fill: 4096 buckets, 16384 slots. */
#define TC_FULL_BUCKETS	4096
#define TC_FULL_SLOTS	(TC_FULL_BUCKETS * SIEVE_CUCKOO_SLOTS)

static void sieve_test_cuckoo_add_reports_new_then_present(struct sieve_test *t)
{
	tc_check_add_new_then_present(t, SIEVE_CUCKOO);
}

static void sieve_test_cuckoo_empty_contains_nothing(struct sieve_test *t)
{
	tc_check_empty_contains_nothing(t, SIEVE_CUCKOO);
}

static void sieve_test_cuckoo_no_false_negatives(struct sieve_test *t)
{
	tc_check_no_false_negatives(t, SIEVE_CUCKOO);
}

static void sieve_test_cuckoo_one_byte_keys(struct sieve_test *t)
{
	tc_check_one_byte_keys(t, SIEVE_CUCKOO);
}

static void sieve_test_cuckoo_long_key(struct sieve_test *t)
{
	tc_check_long_key(t, SIEVE_CUCKOO);
}

static void sieve_test_cuckoo_empty_key(struct sieve_test *t)
{
	tc_check_empty_key(t, SIEVE_CUCKOO);
}

static void sieve_test_cuckoo_clear_forgets_keys(struct sieve_test *t)
{
	tc_check_clear(t, SIEVE_CUCKOO);
}

static void sieve_test_cuckoo_seeds(struct sieve_test *t)
{
	tc_check_seeds(t, tc_cuckoo(1024, 8, 0));
}

/* Each add stores a copy: count follows adds and deletes one by one. */
static void sieve_test_cuckoo_count_follows_copies(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(SIEVE_CUCKOO, TC_SEED_A));

	if (!f)
		return;
	EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), 0);
	EXPECT_EQ(t, tc_add(f, TC_SET_IN, 0), 0);
	EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), 1);
	EXPECT_EQ(t, tc_add(f, TC_SET_IN, 0), 1);
	EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), 2);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 2);
	EXPECT_EQ(t, tc_del(f, TC_SET_IN, 0), 0);
	EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), 1);
	/* One copy left: still there. */
	EXPECT_TRUE(t, tc_has(f, TC_SET_IN, 0));
	EXPECT_EQ(t, tc_del(f, TC_SET_IN, 0), 0);
	EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), 0);
	EXPECT_TRUE(t, !tc_has(f, TC_SET_IN, 0));
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 0);
	/* Gone entirely: it is new again. */
	EXPECT_EQ(t, tc_add(f, TC_SET_IN, 0), 0);
	sieve_filter_destroy(f);
}

static void sieve_test_cuckoo_delete_absent_is_enoent(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(SIEVE_CUCKOO, TC_SEED_A));

	if (!f)
		return;
	/* Nothing to delete in an empty filter... */
	EXPECT_EQ(t, tc_del(f, TC_SET_OUT, 0), -ENOENT);
	tc_add_range(f, TC_SET_IN, 0, 1000);
	/* ...nor a key that was never added (16-bit fingerprints, 3% load)... */
	EXPECT_EQ(t, tc_del(f, TC_SET_OUT, 0), -ENOENT);
	EXPECT_EQ(t, tc_del(f, TC_SET_OUT, 1), -ENOENT);
	/* ...nor a key already deleted. */
	EXPECT_EQ(t, tc_del(f, TC_SET_IN, 5), 0);
	EXPECT_EQ(t, tc_del(f, TC_SET_IN, 5), -ENOENT);
	/* A refused delete takes nothing away. */
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 999);
	EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, 5), 5);
	EXPECT_EQ(t, tc_found(f, TC_SET_IN, 6, 1000), 994);
	sieve_filter_destroy(f);
}

/*
 * A key may be stored 8 times (4 slots in each of its two buckets); the 9th
 * copy is refused with -ENOSPC and harms nothing: the filter is not full.
 */
static void sieve_test_cuckoo_eight_copies_at_most(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_cuckoo(1024, 12, TC_SEED_A));
	u32 c;

	if (!f)
		return;
	for (c = 1; c <= 8; c++) {
		EXPECT_EQ(t, tc_add(f, TC_SET_IN, 0), c == 1 ? 0 : 1);
		EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), c);
	}
	EXPECT_EQ(t, tc_add(f, TC_SET_IN, 0), -ENOSPC);
	EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), 8);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 8);
	/* Other keys still go in: the refusal did not mark the filter full. */
	EXPECT_EQ(t, tc_add_range(f, TC_SET_IN2, 0, 100), 0);
	EXPECT_EQ(t, tc_found(f, TC_SET_IN2, 0, 100), 100);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 108);
	for (c = 8; c >= 1; c--) {
		EXPECT_EQ(t, tc_del(f, TC_SET_IN, 0), 0);
		EXPECT_EQ(t, tc_count(f, TC_SET_IN, 0), c - 1);
	}
	EXPECT_EQ(t, tc_del(f, TC_SET_IN, 0), -ENOENT);
	EXPECT_EQ(t, tc_found(f, TC_SET_IN2, 0, 100), 100);
	sieve_filter_destroy(f);
}

/*
 * Filled with distinct keys until the first -ENOSPC, a table of 4-slot
 * buckets is at least 95% full (the load the cuckoo filter paper reports),
 * every stored key is still there, including the one parked as the victim,
 * and the item count is exact.
 */
static void sieve_test_cuckoo_fills_to_95_percent(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_cuckoo(TC_FULL_BUCKETS, 12, TC_SEED_A));
	long stored;

	if (!f)
		return;
	stored = tc_cuckoo_fill(f, TC_SET_IN, 2 * TC_FULL_SLOTS);
	EXPECT_TRUE(t, stored > 0 && stored < 2 * TC_FULL_SLOTS);
	if (stored * 100 < TC_FULL_SLOTS * 95)
		sieve_test_fail(t, __FILE__, __LINE__, "stored >= 95% of slots",
				stored, TC_FULL_SLOTS * 95 / 100);
	/* Never more than the slots plus the victim. */
	EXPECT_TRUE(t, stored <= TC_FULL_SLOTS + 1);
	if (stored > 0) {
		EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, stored), stored);
		EXPECT_EQ(t, sieve_filter_estimate_items(f), stored);
	}
	sieve_filter_destroy(f);
}

/* Once full, every new key is refused and nothing stored is lost. */
static void sieve_test_cuckoo_full_refuses_and_keeps_keys(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_cuckoo(TC_FULL_BUCKETS, 12, TC_SEED_A));
	long stored;
	u32 i, refused = 0, low_count = 0;

	if (!f)
		return;
	stored = tc_cuckoo_fill(f, TC_SET_IN, 2 * TC_FULL_SLOTS);
	if (stored <= 0 || stored >= 2 * TC_FULL_SLOTS) {
		EXPECT_TRUE(t, stored > 0 && stored < 2 * TC_FULL_SLOTS);
		goto out;
	}
	for (i = 0; i < 200; i++)
		refused += tc_add(f, TC_SET_MORE, i) == -ENOSPC;
	/* A full filter refuses every new key... */
	EXPECT_EQ(t, refused, 200);
	/* ...counts none of them... */
	EXPECT_EQ(t, sieve_filter_estimate_items(f), stored);
	/* ...and still holds every key it took, each at least once. */
	EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, stored), stored);
	for (i = 0; i < stored; i++)
		low_count += tc_count(f, TC_SET_IN, i) == 0;
	EXPECT_EQ(t, low_count, 0);
out:
	sieve_filter_destroy(f);
}

/*
 * Deleting from a full filter makes room (the victim goes back into the
 * table): new keys are taken again and the old ones are all still there.
 */
static void sieve_test_cuckoo_delete_makes_room(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_cuckoo(TC_FULL_BUCKETS, 12, TC_SEED_A));
	u32 i, deleted = 0, bad_del = 0, missing = 0;
	long stored;

	if (!f)
		return;
	stored = tc_cuckoo_fill(f, TC_SET_IN, 2 * TC_FULL_SLOTS);
	if (stored <= 0 || stored >= 2 * TC_FULL_SLOTS) {
		EXPECT_TRUE(t, stored > 0 && stored < 2 * TC_FULL_SLOTS);
		goto out;
	}
	EXPECT_EQ(t, tc_add(f, TC_SET_MORE, 0), -ENOSPC);
	/* Delete one key in ten: 10% of the slots free again. */
	for (i = 0; i < stored; i += 10) {
		bad_del += tc_del(f, TC_SET_IN, i) != 0;
		deleted++;
	}
	EXPECT_EQ(t, bad_del, 0);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), stored - deleted);
	for (i = 0; i < stored; i++)
		missing += i % 10 && !tc_has(f, TC_SET_IN, i);
	/* The keys not deleted are all still there. */
	EXPECT_EQ(t, missing, 0);
	/* Half the freed room is easily refilled. */
	EXPECT_EQ(t, tc_add_range(f, TC_SET_MORE, 0, deleted / 2) < 0, 0);
	EXPECT_EQ(t, tc_found(f, TC_SET_MORE, 0, deleted / 2), deleted / 2);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), stored - deleted + deleted / 2);
	missing = 0;
	for (i = 0; i < stored; i++)
		missing += i % 10 && !tc_has(f, TC_SET_IN, i);
	EXPECT_EQ(t, missing, 0);
out:
	sieve_filter_destroy(f);
}

/* Clearing a full filter also empties the victim slot. */
static void sieve_test_cuckoo_clear_after_full(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_cuckoo(TC_FULL_BUCKETS, 12, TC_SEED_A));
	long stored;

	if (!f)
		return;
	stored = tc_cuckoo_fill(f, TC_SET_IN, 2 * TC_FULL_SLOTS);
	EXPECT_TRUE(t, stored > 0 && stored < 2 * TC_FULL_SLOTS);
	sieve_filter_clear(f);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 0);
	EXPECT_EQ(t, sieve_filter_fpr_ppb(f), 0);
	if (stored > 0)
		EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, stored), 0);
	/* No longer full. */
	EXPECT_EQ(t, tc_add(f, TC_SET_MORE, 0), 0);
	EXPECT_EQ(t, tc_add_range(f, TC_SET_IN, 0, TC_FULL_SLOTS / 2) < 0, 0);
	sieve_filter_destroy(f);
}

/*
 * Every fingerprint width packs and unpacks right: 1000 keys in 2048 slots,
 * delete half (the other half is untouched), then the rest (the table is
 * empty again: no key answers).
 */
static void sieve_test_cuckoo_every_fingerprint_width(struct sieve_test *t)
{
	struct sieve_filter *f;
	u32 fp, i, bad, missing;

	for (fp = SIEVE_CUCKOO_MIN_FP_BITS; fp <= SIEVE_CUCKOO_MAX_FP_BITS; fp++) {
		f = tc_new_filter(t, tc_cuckoo(512, fp, TC_SEED_A + fp));
		if (!f)
			continue;
		EXPECT_TRUE(t, tc_add_range(f, TC_SET_IN, 0, 1000) >= 0);
		EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, 1000), 1000);
		EXPECT_EQ(t, sieve_filter_estimate_items(f), 1000);
		for (bad = 0, i = 0; i < 1000; i += 2)
			bad += tc_del(f, TC_SET_IN, i) != 0;
		EXPECT_EQ(t, bad, 0);
		for (missing = 0, i = 1; i < 1000; i += 2)
			missing += !tc_has(f, TC_SET_IN, i);
		/* Deleting a key never disturbs its neighbours' bits. */
		EXPECT_EQ(t, missing, 0);
		EXPECT_EQ(t, sieve_filter_estimate_items(f), 500);
		for (bad = 0, i = 1; i < 1000; i += 2)
			bad += tc_del(f, TC_SET_IN, i) != 0;
		EXPECT_EQ(t, bad, 0);
		EXPECT_EQ(t, sieve_filter_estimate_items(f), 0);
		/* Empty again: every slot reads back as empty. */
		EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, 1000), 0);
		sieve_filter_destroy(f);
	}
}

/*
 * The smallest table, 2 buckets of 4 slots: it takes at least one bucket's
 * worth of keys, at most the 8 slots plus the victim, and loses none.
 */
static void sieve_test_cuckoo_smallest_geometry(struct sieve_test *t)
{
	static const u32 widths[] = { SIEVE_CUCKOO_MIN_FP_BITS, 8, SIEVE_CUCKOO_MAX_FP_BITS };
	struct sieve_filter *f;
	long stored;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(widths); i++) {
		f = tc_new_filter(t, tc_cuckoo(2, widths[i], TC_SEED_A));
		if (!f)
			continue;
		stored = tc_cuckoo_fill(f, TC_SET_IN, 100);
		EXPECT_TRUE(t, stored >= SIEVE_CUCKOO_SLOTS);
		EXPECT_TRUE(t, stored <= 2 * SIEVE_CUCKOO_SLOTS + 1);
		if (stored > 0) {
			EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, stored), stored);
			EXPECT_EQ(t, sieve_filter_estimate_items(f), stored);
		}
		sieve_filter_destroy(f);
	}
}

/* Cuckoo filters cannot be merged, even with a twin. */
static void sieve_test_cuckoo_merge_not_supported(struct sieve_test *t)
{
	struct sieve_geometry g = tc_geo_of(SIEVE_CUCKOO, TC_SEED_A);
	struct sieve_filter *a = tc_new_filter(t, g);
	struct sieve_filter *b = tc_new_filter(t, g);

	if (!a || !b)
		goto out;
	tc_add_range(a, TC_SET_IN, 0, 100);
	tc_add_range(b, TC_SET_IN2, 0, 100);
	EXPECT_EQ(t, sieve_filter_merge(a, b), -EOPNOTSUPP);
	EXPECT_EQ(t, sieve_filter_estimate_items(a), 100);
	EXPECT_EQ(t, sieve_filter_estimate_items(b), 100);
out:
	if (a)
		sieve_filter_destroy(a);
	if (b)
		sieve_filter_destroy(b);
}

/*
 * The cuckoo FPR estimate: 0 when empty, then growing with the load, close
 * (10%) to 2 * items / (nbuckets * (2^f - 1)) while that is small.
 */
static void sieve_test_cuckoo_fpr_grows_with_fill(struct sieve_test *t)
{
	struct sieve_geometry g = tc_cuckoo(TC_FULL_BUCKETS, 12, TC_SEED_A);
	struct sieve_filter *f = tc_new_filter(t, g);
	static const u32 fills[] = { 1000, 4000, 8000, 15000 };
	u32 i, n = 0, fpr, prev = 0;
	u64 approx;

	if (!f)
		return;
	EXPECT_EQ(t, sieve_filter_fpr_ppb(f), 0);
	for (i = 0; i < ARRAY_SIZE(fills); i++) {
		EXPECT_EQ(t, tc_add_range(f, TC_SET_IN, n, fills[i]) < 0, 0);
		n = fills[i];
		fpr = sieve_filter_fpr_ppb(f);
		approx = div64_u64(2ULL * n * SIEVE_PPB, (u64)TC_FULL_BUCKETS * ((1 << 12) - 1));
		EXPECT_TRUE(t, fpr > prev);
		EXPECT_NEAR_PCT(t, fpr, approx, 10);
		/* Never above the 2b / 2^f bound (plus 1% for 2^f - 1 and rounding). */
		EXPECT_TRUE(t, fpr <= (u64)2 * SIEVE_CUCKOO_SLOTS * SIEVE_PPB / 4096 * 101 / 100);
		prev = fpr;
	}
	sieve_filter_destroy(f);
}

/* ---- Geometry ------------------------------------------------------------- */

struct tc_bad_geo {
	struct sieve_geometry geo;
	int err;
};

#define TC_BLOOM(bits, k)	{ .type = SIEVE_BLOOM, .nbits = (bits), .nhashes = (k) }
#define TC_BLOCKED(bits, k)	{ .type = SIEVE_BLOCKED_BLOOM, .nbits = (bits), .nhashes = (k) }
#define TC_CUCKOO(nb, fp)	{ .type = SIEVE_CUCKOO, .nbuckets = (nb), .fp_bits = (fp) }

static const struct tc_bad_geo tc_bad_geos[] = {
	/* Not a type. */
	{ { .type = 0, .nbits = 1024, .nhashes = 3 }, -EINVAL },
	{ { .type = 4, .nbits = 1024, .nhashes = 3 }, -EINVAL },
	{ { .type = U32_MAX, .nbits = 1024, .nhashes = 3 }, -EINVAL },
	/* Bloom: fewer than 64 bits. */
	{ TC_BLOOM(0, 3), -EINVAL },
	{ TC_BLOOM(63, 3), -EINVAL },
	/* Bloom types: 0 or more than SIEVE_MAX_HASHES probes. */
	{ TC_BLOOM(1024, 0), -EINVAL },
	{ TC_BLOOM(1024, SIEVE_MAX_HASHES + 1), -EINVAL },
	{ TC_BLOOM(1024, U32_MAX), -EINVAL },
	{ TC_BLOCKED(1024, 0), -EINVAL },
	{ TC_BLOCKED(1024, SIEVE_MAX_HASHES + 1), -EINVAL },
	/* Blocked: not a whole number of 512-bit blocks. */
	{ TC_BLOCKED(0, 3), -EINVAL },
	{ TC_BLOCKED(64, 3), -EINVAL },
	{ TC_BLOCKED(256, 3), -EINVAL },
	{ TC_BLOCKED(513, 3), -EINVAL },
	{ TC_BLOCKED(1000, 3), -EINVAL },
	{ TC_BLOCKED(1536 + 64, 3), -EINVAL },
	/* Cuckoo: bucket count 0, 1 or not a power of two. */
	{ TC_CUCKOO(0, 8), -EINVAL },
	{ TC_CUCKOO(1, 8), -EINVAL },
	{ TC_CUCKOO(3, 8), -EINVAL },
	{ TC_CUCKOO(6, 8), -EINVAL },
	{ TC_CUCKOO(1000, 8), -EINVAL },
	{ TC_CUCKOO((1ULL << 20) + 1, 8), -EINVAL },
	/* Cuckoo: fingerprints outside 4..16 bits. */
	{ TC_CUCKOO(1024, 0), -EINVAL },
	{ TC_CUCKOO(1024, SIEVE_CUCKOO_MIN_FP_BITS - 1), -EINVAL },
	{ TC_CUCKOO(1024, SIEVE_CUCKOO_MAX_FP_BITS + 1), -EINVAL },
	{ TC_CUCKOO(1024, 32), -EINVAL },
	/* Fields the type does not use must be 0. */
	{ { .type = SIEVE_BLOOM, .nbits = 1024, .nhashes = 3, .nbuckets = 1 }, -EINVAL },
	{ { .type = SIEVE_BLOOM, .nbits = 1024, .nhashes = 3, .fp_bits = 8 }, -EINVAL },
	{ { .type = SIEVE_BLOCKED_BLOOM, .nbits = 1024, .nhashes = 3, .nbuckets = 2 }, -EINVAL },
	{ { .type = SIEVE_BLOCKED_BLOOM, .nbits = 1024, .nhashes = 3, .fp_bits = 8 }, -EINVAL },
	{ { .type = SIEVE_CUCKOO, .nbuckets = 1024, .fp_bits = 8, .nbits = 64 }, -EINVAL },
	{ { .type = SIEVE_CUCKOO, .nbuckets = 1024, .fp_bits = 8, .nhashes = 1 }, -EINVAL },
	/* Tables over SIEVE_MAX_TABLE_BYTES, some of whose sizes overflow u64. */
	{ TC_BLOOM(8 * SIEVE_MAX_TABLE_BYTES + 1, 3), -E2BIG },
	{ TC_BLOOM(U64_MAX, 3), -E2BIG },
	{ TC_BLOCKED(8 * SIEVE_MAX_TABLE_BYTES + SIEVE_BLOCK_BITS, 3), -E2BIG },
	{ TC_BLOCKED(U64_MAX / SIEVE_BLOCK_BITS * SIEVE_BLOCK_BITS, 3), -E2BIG },
	{ TC_CUCKOO(1ULL << 28, 16), -E2BIG },
	{ TC_CUCKOO(1ULL << 28, 9), -E2BIG },
	{ TC_CUCKOO(1ULL << 63, 4), -E2BIG },
};

static void sieve_test_geometry_rejects_bad(struct sieve_test *t)
{
	u64 bytes;
	u32 i;
	int err;

	for (i = 0; i < ARRAY_SIZE(tc_bad_geos); i++) {
		err = sieve_geometry_check(&tc_bad_geos[i].geo, &bytes);
		if (err != tc_bad_geos[i].err)
			sieve_test_fail(t, __FILE__, __LINE__,
					"check(tc_bad_geos[a]) returns the listed error, not b", i, err);
	}
}

/* Create refuses what check refuses, with the same error, and sets no filter. */
static void sieve_test_geometry_create_rejects_bad(struct sieve_test *t)
{
	struct sieve_filter *f;
	u32 i;
	int err;

	for (i = 0; i < ARRAY_SIZE(tc_bad_geos); i++) {
		f = NULL;
		err = sieve_filter_create(&tc_bad_geos[i].geo, &f);
		if (err != tc_bad_geos[i].err)
			sieve_test_fail(t, __FILE__, __LINE__,
					"create(tc_bad_geos[a]) returns the listed error, not b", i, err);
		if (f)
			sieve_test_fail(t, __FILE__, __LINE__,
					"create(tc_bad_geos[a]) sets no filter", i, 0);
		if (f && !err)
			sieve_filter_destroy(f);
	}
}

static void tc_expect_good_geo_at(struct sieve_test *t, const char *file, int line,
			       struct sieve_geometry g, u64 min_bytes, u64 max_bytes)
{
	u64 bytes = 0;
	int err = sieve_geometry_check(&g, &bytes);

	EXPECT_EQ(t, err, 0);
	if (bytes < min_bytes || bytes > max_bytes)
		sieve_test_fail(t, file, line, "table bytes a in [b, b + slack]", bytes, min_bytes);
}

#define tc_expect_good_geo(t, g, lo, hi) tc_expect_good_geo_at(t, __FILE__, __LINE__, g, lo, hi)

/* Valid geometries, smallest to largest, pass with the size they need. */
static void sieve_test_geometry_accepts_valid(struct sieve_test *t)
{
	const u64 max = SIEVE_MAX_TABLE_BYTES;
	u32 fp;

	/* Bloom: whole bytes at least, rounded up to 64-bit words at most. */
	tc_expect_good_geo(t, tc_bloom(64, 1, 0), 8, 8);
	tc_expect_good_geo(t, tc_bloom(65, SIEVE_MAX_HASHES, U32_MAX), 9, 16);
	tc_expect_good_geo(t, tc_bloom(100003, 7, 1), 12501, 12504);
	/* The largest: exactly SIEVE_MAX_TABLE_BYTES. */
	tc_expect_good_geo(t, tc_bloom(8 * max, 3, 0), max, max);
	tc_expect_good_geo(t, tc_bloom(8 * max - 1, 3, 0), max, max);
	/* Blocked: 64 bytes a block. */
	tc_expect_good_geo(t, tc_blocked(512, 1, 0), 64, 64);
	tc_expect_good_geo(t, tc_blocked(1536, SIEVE_MAX_HASHES, 0), 192, 192);
	tc_expect_good_geo(t, tc_blocked(8 * max, 8, 0), max, max);
	tc_expect_good_geo(t, tc_blocked(8 * max - 512, 8, 0), max - 64, max - 64);
	/* Cuckoo: nbuckets * 4 * f bits, plus at most 8 bytes of slack. */
	for (fp = SIEVE_CUCKOO_MIN_FP_BITS; fp <= SIEVE_CUCKOO_MAX_FP_BITS; fp++) {
		tc_expect_good_geo(t, tc_cuckoo(2, fp, 0), fp, fp + 8);
		tc_expect_good_geo(t, tc_cuckoo(1024, fp, 0), 512 * fp, 512 * fp + 8);
	}
	/* The largest cuckoo tables (2^27 buckets of 60 bits, 2^26 of 64 bits). */
	tc_expect_good_geo(t, tc_cuckoo(1ULL << 27, 15, 0), 15ULL << 26, (15ULL << 26) + 8);
	tc_expect_good_geo(t, tc_cuckoo(1ULL << 26, 16, 0), 1ULL << 29, (1ULL << 29) + 8);
	tc_expect_good_geo(t, tc_cuckoo(1ULL << 28, 7, 0), 7ULL << 27, (7ULL << 27) + 8);
}

/* A created filter reports its geometry and sizes. */
static void sieve_test_geometry_create_keeps_geometry(struct sieve_test *t)
{
	struct sieve_geometry geos[] = {
		tc_bloom(1000, 5, 0xdeadbeef),
		tc_blocked(4096, 9, 7),
		tc_cuckoo(64, 13, U32_MAX),
	};
	struct sieve_filter *f;
	u64 bytes;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(geos); i++) {
		EXPECT_EQ(t, sieve_geometry_check(&geos[i], &bytes), 0);
		f = tc_new_filter(t, geos[i]);
		if (!f)
			continue;
		EXPECT_TRUE(t, tc_geo_equal(&f->geo, &geos[i]));
		EXPECT_EQ(t, f->table_bytes, bytes);
		EXPECT_TRUE(t, f->alloc_bytes >= f->table_bytes);
		sieve_filter_destroy(f);
	}
}

/* ---- Sizing --------------------------------------------------------------- */

static const u32 tc_types[] = { SIEVE_BLOOM, SIEVE_BLOCKED_BLOOM, SIEVE_CUCKOO };

/* Every type sizes a usable geometry for everyday and extreme requests. */
static void sieve_test_sizing_gives_valid_geometry(struct sieve_test *t)
{
	static const struct { u64 n; u32 ppb; } reqs[] = {
		{ 1, 500000000 }, { 1, 200000 }, { 1000, 10000000 }, { 1000000, 10000000 },
		{ 12345, 1000000 }, { 100000000, 50000000 }, { 7, 999999999 },
	};
	struct sieve_geometry g;
	u64 bytes;
	u32 i, j;
	int err;

	for (i = 0; i < ARRAY_SIZE(tc_types); i++) {
		for (j = 0; j < ARRAY_SIZE(reqs); j++) {
			memset(&g, 0xff, sizeof(g));
			err = sieve_size(tc_types[i], reqs[j].n, reqs[j].ppb, &g);
			EXPECT_EQ(t, err, 0);
			if (err)
				continue;
			EXPECT_EQ(t, g.type, tc_types[i]);
			/* The seed is the caller's to choose. */
			EXPECT_EQ(t, g.seed, 0);
			EXPECT_EQ(t, sieve_geometry_check(&g, &bytes), 0);
			/*
			 * The filter keeps its promise: at capacity, the rate
			 * (a bound, for blocked Bloom) is at most the one asked for.
			 */
			EXPECT_TRUE(t, sieve_expected_fpr_ppb(&g, reqs[j].n) <= reqs[j].ppb);
		}
	}
}

/*
 * Bloom: k = round(log2(1/p)), and m starts at the formula, ceil(n
 * log2(1/p) / ln 2), to which bits are added while the exact rate at
 * capacity, (1 - (1 - 1/m)^(kn))^k, is above p. So m is at least the
 * formula and within 1% of it (the rounding of k costs up to 0.8%), the
 * rate at capacity is at most p, and 0.2% + 4 bits fewer would not do: no
 * more bits are spent than needed.
 */
static void sieve_test_sizing_bloom_formula(struct sieve_test *t)
{
	static const struct { u64 n; u32 ppb; u64 m; u32 k; } cases[] = {
		/* 1e6 * log2(100) / ln 2 = 9585058.4; log2(100) = 6.64 */
		{ 1000000, 10000000, 9585059, 7 },
		/* 1000 * log2(1000) / ln 2 = 14377.6; log2(1000) = 9.97 */
		{ 1000, 1000000, 14378, 10 },
		/* 1e9 * log2(2) / ln 2 = 1442695040.9: m/n = 1/ln 2 */
		{ 1000000000, 500000000, 1442695041, 1 },
		/* 1e9 parts: log2(1e9) = 29.9, 43.1 bits per key */
		{ 100, 1, 4314, 30 },
		/* 1e5 * log2(1/0.3) / ln 2 = 250591.2; log2(1/0.3) = 1.74 rounds up to 2 */
		{ 100000, 300000000, 250592, 2 },
	};
	struct sieve_geometry g, fewer;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		EXPECT_EQ(t, sieve_size(SIEVE_BLOOM, cases[i].n, cases[i].ppb, &g), 0);
		EXPECT_EQ(t, g.nhashes, cases[i].k);
		EXPECT_TRUE(t, g.nbits >= cases[i].m);
		tc_expect_near(t, __FILE__, __LINE__, "bloom m within 1% of the formula",
			       g.nbits, cases[i].m, 10000);
		/* The promise: at capacity, at most the rate asked for. */
		EXPECT_TRUE(t, sieve_expected_fpr_ppb(&g, cases[i].n) <= cases[i].ppb);
		/* 0.2% + 4 bits fewer would miss it (at 1 ppb, rounding hides that). */
		fewer = g;
		fewer.nbits = g.nbits - g.nbits / 500 - 4;
		if (cases[i].ppb >= 1000)
			EXPECT_TRUE(t, sieve_expected_fpr_ppb(&fewer, cases[i].n) > cases[i].ppb);
	}
	/* Tiny filters get the 64-bit minimum; the weakest rate gets 1 hash. */
	EXPECT_EQ(t, sieve_size(SIEVE_BLOOM, 1, 500000000, &g), 0);
	EXPECT_EQ(t, g.nbits, 64);
	EXPECT_EQ(t, sieve_size(SIEVE_BLOOM, 1000, 900000000, &g), 0);
	EXPECT_EQ(t, g.nhashes, 1);
}

/* The cuckoo fingerprint width, f = ceil(log2(8 / p)), is exact: smallest f with 2^f p >= 8. */
static void sieve_test_sizing_cuckoo_fingerprint_exact(struct sieve_test *t)
{
	static const u32 rates[] = {
		999999999, 500000001, 500000000, 499999999, 250000001, 250000000,
		249999999, 100000000, 31250000, 31249999, 10000000, 1000000,
		244141, 244140, 122071,
	};
	struct sieve_geometry g;
	u32 i, f;

	for (i = 0; i < ARRAY_SIZE(rates); i++) {
		for (f = SIEVE_CUCKOO_MIN_FP_BITS; ((u64)rates[i] << f) < 8ULL * SIEVE_PPB; f++)
			;
		EXPECT_EQ(t, sieve_size(SIEVE_CUCKOO, 1000, rates[i], &g), 0);
		EXPECT_EQ(t, g.fp_bits, f);
	}
	/* Below 8 / 2^16 = 122070.3 ppb, 16-bit fingerprints are not enough. */
	EXPECT_EQ(t, sieve_size(SIEVE_CUCKOO, 1000, 122070, &g), -EINVAL);
	EXPECT_EQ(t, sieve_size(SIEVE_CUCKOO, 1000, 1000, &g), -EINVAL);
	EXPECT_EQ(t, sieve_size(SIEVE_CUCKOO, 1000, 1, &g), -EINVAL);
}

/* Cuckoo buckets: roundup_pow_of_two(max(2, ceil(n / 3.84))), 3.84 = 4 slots * 0.96. */
static void sieve_test_sizing_cuckoo_buckets(struct sieve_test *t)
{
	static const struct { u64 n; u64 nbuckets; } cases[] = {
		{ 1, 2 }, { 7, 2 }, { 8, 4 }, { 3840, 1024 }, { 3932, 1024 },
		{ 3933, 2048 }, { 1000000, 1 << 18 },
		/* The largest with 16-bit fingerprints: 2^26 buckets, 512 MiB. */
		{ 257698037, 1 << 26 },
	};
	struct sieve_geometry g;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		EXPECT_EQ(t, sieve_size(SIEVE_CUCKOO, cases[i].n, 122071, &g), 0);
		EXPECT_EQ(t, g.nbuckets, cases[i].nbuckets);
	}
	/* 2^29 keys need 2^28 buckets of 64 bits: 2 GiB. */
	EXPECT_EQ(t, sieve_size(SIEVE_CUCKOO, 1ULL << 29, 122071, &g), -E2BIG);
}

static void sieve_test_sizing_rejects_bad_input(struct sieve_test *t)
{
	struct sieve_geometry g;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(tc_types); i++) {
		/* No capacity, no rate, or a rate of 100% or more. */
		EXPECT_EQ(t, sieve_size(tc_types[i], 0, 10000000, &g), -EINVAL);
		EXPECT_EQ(t, sieve_size(tc_types[i], 1000, 0, &g), -EINVAL);
		EXPECT_EQ(t, sieve_size(tc_types[i], 1000, SIEVE_PPB, &g), -EINVAL);
		EXPECT_EQ(t, sieve_size(tc_types[i], 1000, U32_MAX, &g), -EINVAL);
		/* More keys than SIEVE_MAX_CAPACITY. */
		EXPECT_EQ(t, sieve_size(tc_types[i], SIEVE_MAX_CAPACITY + 1, 10000000, &g), -E2BIG);
		EXPECT_EQ(t, sieve_size(tc_types[i], U64_MAX, 10000000, &g), -E2BIG);
		/* A table over 1 GiB: 2^40 keys at any rate. */
		EXPECT_EQ(t, sieve_size(tc_types[i], SIEVE_MAX_CAPACITY, 500000000, &g), -E2BIG);
	}
	EXPECT_EQ(t, sieve_size(0, 1000, 10000000, &g), -EINVAL);
	EXPECT_EQ(t, sieve_size(4, 1000, 10000000, &g), -EINVAL);
	EXPECT_EQ(t, sieve_size(U32_MAX, 1000, 10000000, &g), -EINVAL);
	/* 1e9 keys at 1e-6: 28.75 Gbit for Bloom, 2^28 buckets of 80 bits for cuckoo. */
	EXPECT_EQ(t, sieve_size(SIEVE_BLOOM, 1000000000, 1000, &g), -E2BIG);
	EXPECT_EQ(t, sieve_size(SIEVE_BLOCKED_BLOOM, 1000000000, 1000, &g), -E2BIG);
	EXPECT_EQ(t, sieve_size(SIEVE_CUCKOO, 1000000000, 10000000, &g), -E2BIG);
}

/* The expected FPR: 0 for no keys, never falling as keys are added, at most 1. */
static void sieve_test_sizing_expected_fpr_monotonic(struct sieve_test *t)
{
	struct sieve_geometry geos[] = {
		tc_bloom(10000, 7, 0), tc_blocked(10240, 7, 0), tc_cuckoo(256, 8, 0),
	};
	u32 i, fpr, prev;
	u64 n;

	for (i = 0; i < ARRAY_SIZE(geos); i++) {
		EXPECT_EQ(t, sieve_expected_fpr_ppb(&geos[i], 0), 0);
		prev = 0;
		for (n = 1; n <= 1000000; n = n * 3 / 2 + 1) {
			fpr = sieve_expected_fpr_ppb(&geos[i], n);
			EXPECT_TRUE(t, fpr >= prev && fpr <= SIEVE_PPB);
			prev = fpr;
		}
		EXPECT_TRUE(t, prev > 0);
	}
	/* (1 - e^-0.7)^7 = 0.0081937: 10 bits per key, 7 hashes. */
	fpr = sieve_expected_fpr_ppb(&geos[0], 1000);
	EXPECT_NEAR_PCT(t, fpr, 8193722, 1);
	/*
	 * Blocked, 10 bits per key, 7 hashes: the bound, sum over i of
	 * Poisson(i; 51.2) (1 - (1 - 7/512)^i)^7 = 0.00983827 (to 0.01%: the
	 * fixed point is that close), above the exact expectation for random
	 * 7-subsets, 0.00959661 (tests/unit/stats.c computes both).
	 */
	fpr = sieve_expected_fpr_ppb(&geos[1], 1024);
	tc_expect_near(t, __FILE__, __LINE__, "blocked bound within 0.01% of 9838268",
		       fpr, 9838268, 100);
	EXPECT_TRUE(t, fpr >= 9596612);
}


/* With SIEVE_ADD_IF_ABSENT a cuckoo filter is a set: repeats store nothing. */
static void sieve_test_cuckoo_add_if_absent(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(SIEVE_CUCKOO, TC_SEED_A));
	struct tc_key k;
	u32 i;

	if (!f)
		return;
	tc_key_make(&k, TC_SET_IN, 7);
	EXPECT_EQ(t, sieve_filter_add_flags(f, k.b, k.len, SIEVE_ADD_IF_ABSENT), 0);
	/* Far more repeats than the 8 copies a key may have: never full. */
	for (i = 0; i < 20; i++)
		EXPECT_EQ(t, sieve_filter_add_flags(f, k.b, k.len, SIEVE_ADD_IF_ABSENT), 1);
	EXPECT_EQ(t, sieve_filter_count(f, k.b, k.len), 1);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 1);
	/* One delete and the key is gone. */
	EXPECT_EQ(t, sieve_filter_delete(f, k.b, k.len), 0);
	EXPECT_TRUE(t, !sieve_filter_contains(f, k.b, k.len));
	sieve_filter_destroy(f);
}

/* An unknown add flag is refused before anything is stored. */
static void tc_check_add_unknown_flag(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));
	struct tc_key k;

	if (!f)
		return;
	tc_key_make(&k, TC_SET_IN, 3);
	EXPECT_EQ(t, sieve_filter_add_flags(f, k.b, k.len, 1U << 31), -EINVAL);
	EXPECT_TRUE(t, !sieve_filter_contains(f, k.b, k.len));
	/* Bloom types are test-and-set with or without the flag. */
	EXPECT_EQ(t, sieve_filter_add_flags(f, k.b, k.len, SIEVE_ADD_IF_ABSENT), 0);
	EXPECT_EQ(t, sieve_filter_add_flags(f, k.b, k.len, SIEVE_ADD_IF_ABSENT), 1);
	sieve_filter_destroy(f);
}

static void sieve_test_bloom_add_unknown_flag(struct sieve_test *t)
{
	tc_check_add_unknown_flag(t, SIEVE_BLOOM);
}

static void sieve_test_blocked_add_unknown_flag(struct sieve_test *t)
{
	tc_check_add_unknown_flag(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_cuckoo_add_unknown_flag(struct sieve_test *t)
{
	tc_check_add_unknown_flag(t, SIEVE_CUCKOO);
}

/* ---- Batches --------------------------------------------------------------- */

#define TC_BATCH	1000	/* not a multiple of the cores' prefetch group */

/* Keys, their references and room for results, allocated as one. */
struct tc_batch {
	struct tc_key keys[TC_BATCH];
	struct sieve_key refs[TC_BATCH];
	int added[TC_BATCH];
	bool found[TC_BATCH];
};

/* Keys (@set, @from ..): every 100th repeats the one before it. */
static struct tc_batch *tc_batch_make(struct sieve_test *t, u32 set, u32 from)
{
	struct tc_batch *b = sieve_zalloc(sizeof(*b));
	u32 i;

	EXPECT_TRUE(t, b != NULL);
	for (i = 0; b && i < TC_BATCH; i++) {
		tc_key_make(&b->keys[i], set, i % 100 == 99 ? from + i - 1 : from + i);
		b->refs[i].data = b->keys[i].b;
		b->refs[i].len = b->keys[i].len;
	}
	return b;
}

/*
 * A batch does what the same calls one at a time do: the same answers
 * (a key repeated in the batch is reported present the second time), and
 * the very same table.
 */
static void tc_check_batch_matches_single(struct sieve_test *t, u32 type)
{
	struct sieve_filter *batched = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));
	struct sieve_filter *single = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));
	struct tc_batch *in = tc_batch_make(t, TC_SET_IN, 0);
	struct tc_batch *out = tc_batch_make(t, TC_SET_OUT, 0);
	u32 i, mismatches = 0, found_in = 0, found_out = 0;

	if (!batched || !single || !in || !out)
		goto out_free;
	EXPECT_EQ(t, sieve_filter_add_batch(batched, in->refs, TC_BATCH, 0, in->added), 0);
	for (i = 0; i < TC_BATCH; i++) {
		mismatches += in->added[i] != sieve_filter_add(single, in->refs[i].data,
								in->refs[i].len);
		/* The repeated keys are the only ones reported present. */
		mismatches += in->added[i] != (i % 100 == 99);
	}
	EXPECT_EQ(t, mismatches, 0);
	EXPECT_EQ(t, memcmp(batched->table, single->table, batched->table_bytes), 0);

	sieve_filter_contains_batch(batched, in->refs, TC_BATCH, in->found);
	sieve_filter_contains_batch(batched, out->refs, TC_BATCH, out->found);
	for (i = 0; i < TC_BATCH; i++) {
		found_in += in->found[i];
		found_out += out->found[i];
		mismatches += out->found[i] != sieve_filter_contains(single, out->refs[i].data,
								     out->refs[i].len);
	}
	EXPECT_EQ(t, found_in, TC_BATCH);
	EXPECT_EQ(t, mismatches, 0);
	/* These tables are nearly empty: a stray yes would mean a wrong probe. */
	EXPECT_EQ(t, found_out, 0);

	/* An empty batch, or one with an unknown flag, touches nothing. */
	EXPECT_EQ(t, sieve_filter_add_batch(batched, out->refs, 0, 0, out->added), 0);
	EXPECT_EQ(t, sieve_filter_add_batch(batched, out->refs, TC_BATCH, 1U << 31, out->added),
		  -EINVAL);
	EXPECT_EQ(t, memcmp(batched->table, single->table, batched->table_bytes), 0);
out_free:
	sieve_free(out);
	sieve_free(in);
	if (single)
		sieve_filter_destroy(single);
	if (batched)
		sieve_filter_destroy(batched);
}

/* A batch into a cuckoo table too small for it: refusals, no loss. */
static void sieve_test_cuckoo_batch_fills_up(struct sieve_test *t)
{
	struct sieve_filter *f = tc_new_filter(t, tc_cuckoo(64, 12, TC_SEED_A));
	struct tc_batch *b = tc_batch_make(t, TC_SET_IN, 0);
	u32 i, stored = 0, refused = 0, lost = 0;

	if (!f || !b)
		goto out_free;
	EXPECT_EQ(t, sieve_filter_add_batch(f, b->refs, TC_BATCH, 0, b->added), 0);
	for (i = 0; i < TC_BATCH; i++) {
		stored += b->added[i] >= 0;
		refused += b->added[i] == -ENOSPC;
	}
	/* 256 slots and a victim: the first failure comes past 95% load. */
	EXPECT_TRUE(t, stored >= 244 && stored <= 257);
	EXPECT_EQ(t, stored + refused, TC_BATCH);
	sieve_filter_contains_batch(f, b->refs, TC_BATCH, b->found);
	for (i = 0; i < TC_BATCH; i++)
		lost += b->added[i] >= 0 && !b->found[i];
	EXPECT_EQ(t, lost, 0);
out_free:
	sieve_free(b);
	if (f)
		sieve_filter_destroy(f);
}

/*
 * A single-writer filter (plain ORs in userspace; the kernel ignores the
 * flag) and a shared one (atomic ORs), fed the same keys into a small
 * table so that many adds find their bits partly set, answer every add
 * alike and end with the same table.
 */
static void tc_check_single_writer_same(struct sieve_test *t, struct sieve_geometry g)
{
	struct sieve_filter *plain = tc_new_filter(t, g), *shared = tc_new_filter(t, g);
	u32 i, differ = 0, fresh = 0;

	if (plain && shared) {
		plain->single_writer = true;
		for (i = 0; i < 2000; i++) {
			int r = tc_add(plain, TC_SET_IN, i % 1500);

			differ += r != tc_add(shared, TC_SET_IN, i % 1500);
			fresh += r == 0;
		}
		EXPECT_EQ(t, differ, 0);
		/* The 500 repeats are present; most of the 1500 are new. */
		EXPECT_TRUE(t, fresh > 1000 && fresh <= 1500);
		EXPECT_EQ(t, memcmp(plain->table, shared->table, plain->table_bytes), 0);
	}
	if (plain)
		sieve_filter_destroy(plain);
	if (shared)
		sieve_filter_destroy(shared);
}

static void sieve_test_bloom_single_writer_same(struct sieve_test *t)
{
	tc_check_single_writer_same(t, tc_bloom(1 << 14, 6, TC_SEED_B));
}

static void sieve_test_blocked_single_writer_same(struct sieve_test *t)
{
	tc_check_single_writer_same(t, tc_blocked(1 << 14, 6, TC_SEED_B));
}

static void sieve_test_bloom_batch_matches_single(struct sieve_test *t)
{
	tc_check_batch_matches_single(t, SIEVE_BLOOM);
}

static void sieve_test_blocked_batch_matches_single(struct sieve_test *t)
{
	tc_check_batch_matches_single(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_cuckoo_batch_matches_single(struct sieve_test *t)
{
	tc_check_batch_matches_single(t, SIEVE_CUCKOO);
}

/*
 * The one hash pass: its top half is the kernel's jhash() of the key (in
 * the VM, the real <linux/jhash.h>), at every tail length and seed, and
 * its bottom half is another word of the same final state, not a copy.
 */
static void sieve_test_hash64_top_half_is_jhash(struct sieve_test *t)
{
	static const u32 seeds[] = { 0, 1, TC_SEED_A, 0xffffffff };
	u32 s, len, mismatches = 0, halves_equal = 0;
	u8 buf[TC_KEY_MAX];

	for (s = 0; s < ARRAY_SIZE(seeds); s++) {
		for (len = 0; len <= TC_KEY_MAX; len++) {
			u64 h;

			tc_key_fill(buf, TC_SET_IN, len, len);
			h = sieve_hash64(buf, len, seeds[s]);
			mismatches += (u32)(h >> 32) != jhash(buf, len, seeds[s]);
			halves_equal += len && (u32)(h >> 32) == (u32)h;
		}
	}
	EXPECT_EQ(t, mismatches, 0);
	EXPECT_EQ(t, halves_equal, 0);
}

#define TC_CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_core_cases[] = {
	TC_CASE(sieve_test_bloom_add_reports_new_then_present),
	TC_CASE(sieve_test_bloom_empty_contains_nothing),
	TC_CASE(sieve_test_bloom_no_false_negatives),
	TC_CASE(sieve_test_bloom_one_byte_keys),
	TC_CASE(sieve_test_bloom_long_key),
	TC_CASE(sieve_test_bloom_empty_key),
	TC_CASE(sieve_test_bloom_count_is_0_or_1),
	TC_CASE(sieve_test_bloom_delete_not_supported),
	TC_CASE(sieve_test_bloom_clear_forgets_keys),
	TC_CASE(sieve_test_bloom_merge_is_union),
	TC_CASE(sieve_test_bloom_merge_empty_and_self),
	TC_CASE(sieve_test_bloom_merge_mismatch_is_einval),
	TC_CASE(sieve_test_bloom_estimate_items),
	TC_CASE(sieve_test_bloom_fpr_grows_with_fill),
	TC_CASE(sieve_test_bloom_seeds),
	TC_CASE(sieve_test_bloom_smallest_geometry),
	TC_CASE(sieve_test_bloom_odd_sizes),
	TC_CASE(sieve_test_blocked_add_reports_new_then_present),
	TC_CASE(sieve_test_blocked_empty_contains_nothing),
	TC_CASE(sieve_test_blocked_no_false_negatives),
	TC_CASE(sieve_test_blocked_one_byte_keys),
	TC_CASE(sieve_test_blocked_long_key),
	TC_CASE(sieve_test_blocked_empty_key),
	TC_CASE(sieve_test_blocked_count_is_0_or_1),
	TC_CASE(sieve_test_blocked_delete_not_supported),
	TC_CASE(sieve_test_blocked_clear_forgets_keys),
	TC_CASE(sieve_test_blocked_merge_is_union),
	TC_CASE(sieve_test_blocked_merge_empty_and_self),
	TC_CASE(sieve_test_blocked_merge_mismatch_is_einval),
	TC_CASE(sieve_test_blocked_estimate_items),
	TC_CASE(sieve_test_blocked_fpr_grows_with_fill),
	TC_CASE(sieve_test_blocked_seeds),
	TC_CASE(sieve_test_blocked_smallest_geometry),
	TC_CASE(sieve_test_blocked_one_block),
	TC_CASE(sieve_test_cuckoo_add_reports_new_then_present),
	TC_CASE(sieve_test_cuckoo_empty_contains_nothing),
	TC_CASE(sieve_test_cuckoo_no_false_negatives),
	TC_CASE(sieve_test_cuckoo_one_byte_keys),
	TC_CASE(sieve_test_cuckoo_long_key),
	TC_CASE(sieve_test_cuckoo_empty_key),
	TC_CASE(sieve_test_cuckoo_clear_forgets_keys),
	TC_CASE(sieve_test_cuckoo_seeds),
	TC_CASE(sieve_test_cuckoo_count_follows_copies),
	TC_CASE(sieve_test_cuckoo_delete_absent_is_enoent),
	TC_CASE(sieve_test_cuckoo_eight_copies_at_most),
	TC_CASE(sieve_test_cuckoo_fills_to_95_percent),
	TC_CASE(sieve_test_cuckoo_full_refuses_and_keeps_keys),
	TC_CASE(sieve_test_cuckoo_delete_makes_room),
	TC_CASE(sieve_test_cuckoo_clear_after_full),
	TC_CASE(sieve_test_cuckoo_every_fingerprint_width),
	TC_CASE(sieve_test_cuckoo_smallest_geometry),
	TC_CASE(sieve_test_cuckoo_merge_not_supported),
	TC_CASE(sieve_test_cuckoo_fpr_grows_with_fill),
	TC_CASE(sieve_test_cuckoo_add_if_absent),
	TC_CASE(sieve_test_bloom_add_unknown_flag),
	TC_CASE(sieve_test_blocked_add_unknown_flag),
	TC_CASE(sieve_test_cuckoo_add_unknown_flag),
	TC_CASE(sieve_test_bloom_batch_matches_single),
	TC_CASE(sieve_test_blocked_batch_matches_single),
	TC_CASE(sieve_test_cuckoo_batch_matches_single),
	TC_CASE(sieve_test_cuckoo_batch_fills_up),
	TC_CASE(sieve_test_geometry_rejects_bad),
	TC_CASE(sieve_test_geometry_create_rejects_bad),
	TC_CASE(sieve_test_geometry_accepts_valid),
	TC_CASE(sieve_test_geometry_create_keeps_geometry),
	TC_CASE(sieve_test_sizing_gives_valid_geometry),
	TC_CASE(sieve_test_sizing_bloom_formula),
	TC_CASE(sieve_test_sizing_cuckoo_fingerprint_exact),
	TC_CASE(sieve_test_sizing_cuckoo_buckets),
	TC_CASE(sieve_test_sizing_rejects_bad_input),
	TC_CASE(sieve_test_sizing_expected_fpr_monotonic),
	TC_CASE(sieve_test_hash64_top_half_is_jhash),
	TC_CASE(sieve_test_bloom_single_writer_same),
	TC_CASE(sieve_test_blocked_single_writer_same),
};

const unsigned int sieve_core_ncases = ARRAY_SIZE(sieve_core_cases);
