// SPDX-License-Identifier: GPL-2.0
/*
 * No false negative, ever, over a million keys and more per filter type:
 * every 1-byte key, every 2-byte key, and a million keys of 3 to 64 bytes
 * with one in 997 from 65 to 1500 bytes. Too big for the VM; the shared
 * cases run a smaller version there.
 */
#include "unit.h"

#define SET_SCALE	11
#define SET_FULL	12
#define NSHORT		(256 + 65536)
#define NKEYS		(NSHORT + 1000000)

/* Key @j of the scale set; returns its length. */
static u32 scale_key(u8 *buf, u32 j)
{
	u64 r;
	u32 len;

	if (j < 256) {
		buf[0] = j;
		return 1;
	}
	if (j < NSHORT) {
		buf[0] = (j - 256) & 0xff;
		buf[1] = (j - 256) >> 8;
		return 2;
	}
	j -= NSHORT;
	r = sieve_test_mix64(j ^ 0xabcdef);
	len = j % 997 == 0 ? 65 + r % 1436 : 3 + r % 62;
	unit_key_fill(buf, SET_SCALE, j, len);
	return len;
}

static void check_scale(struct sieve_test *t, u32 type)
{
	struct sieve_geometry g;
	struct sieve_filter *f = NULL;
	static u8 buf[UKEY_MAX];
	u32 j, len, failed_add = 0, missing = 0, uncounted = 0;
	int err, ret;

	/* Sized for the keys at 1%: an ordinary load for every type. */
	err = sieve_size(type, NKEYS, 10000000, &g);
	EXPECT_EQ(t, err, 0);
	if (err)
		return;
	g.seed = 0x5ca1e;
	err = sieve_filter_create(&g, &f);
	EXPECT_EQ(t, err, 0);
	if (err)
		return;
	for (j = 0; j < NKEYS; j++) {
		len = scale_key(buf, j);
		ret = sieve_filter_add(f, buf, len);
		failed_add += ret < 0;
	}
	for (j = 0; j < NKEYS; j++) {
		len = scale_key(buf, j);
		missing += !sieve_filter_contains(f, buf, len);
		uncounted += sieve_filter_count(f, buf, len) == 0;
	}
	sieve_note("%u keys in %llu bytes: %u adds failed, %u missing, %u with count 0, estimate %llu",
		   NKEYS, (unsigned long long)f->table_bytes, failed_add, missing, uncounted,
		   (unsigned long long)sieve_filter_estimate_items(f));
	EXPECT_EQ(t, failed_add, 0);
	/* Not one stored key is reported absent. */
	EXPECT_EQ(t, missing, 0);
	EXPECT_EQ(t, uncounted, 0);
	/* A cuckoo filter stores a copy per add, duplicates included. */
	if (type == SIEVE_CUCKOO)
		EXPECT_EQ(t, sieve_filter_estimate_items(f), NKEYS);
	sieve_filter_destroy(f);
}

static void sieve_unit_bloom_no_false_negatives_1m(struct sieve_test *t)
{
	check_scale(t, SIEVE_BLOOM);
}

static void sieve_unit_blocked_no_false_negatives_1m(struct sieve_test *t)
{
	check_scale(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_unit_cuckoo_no_false_negatives_1m(struct sieve_test *t)
{
	check_scale(t, SIEVE_CUCKOO);
}

/*
 * A million-slot cuckoo table filled to the first -ENOSPC: at least 95%
 * full, every key found; delete every third, the others are all still found.
 */
static void sieve_unit_cuckoo_full_table_1m(struct sieve_test *t)
{
	struct sieve_geometry g = {
		.type = SIEVE_CUCKOO, .seed = 0xf011, .nbuckets = 1 << 18, .fp_bits = 12,
	};
	u64 slots = g.nbuckets * SIEVE_CUCKOO_SLOTS, stored, i;
	struct sieve_filter *f = NULL;
	u32 missing = 0, bad_del = 0, deleted = 0;
	u8 buf[64];
	int err, ret = 0;

	err = sieve_filter_create(&g, &f);
	EXPECT_EQ(t, err, 0);
	if (err)
		return;
	for (stored = 0; stored < 2 * slots; stored++) {
		ret = sieve_filter_add(f, buf, unit_key_distinct(buf, SET_FULL, stored));
		if (ret < 0)
			break;
	}
	EXPECT_EQ(t, ret, -ENOSPC);
	sieve_note("%llu slots: first -ENOSPC after %llu keys, load %.2f%%",
		   (unsigned long long)slots, (unsigned long long)stored, 100.0 * stored / slots);
	CHECKF(t, stored >= slots * 95 / 100, "load %.4f below 95%%", (double)stored / slots);
	for (i = 0; i < stored; i++)
		missing += !sieve_filter_contains(f, buf, unit_key_distinct(buf, SET_FULL, i));
	EXPECT_EQ(t, missing, 0);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), stored);
	for (i = 0; i < stored; i += 3) {
		bad_del += sieve_filter_delete(f, buf, unit_key_distinct(buf, SET_FULL, i)) != 0;
		deleted++;
	}
	EXPECT_EQ(t, bad_del, 0);
	missing = 0;
	for (i = 0; i < stored; i++)
		if (i % 3)
			missing += !sieve_filter_contains(f, buf, unit_key_distinct(buf, SET_FULL, i));
	EXPECT_EQ(t, missing, 0);
	EXPECT_EQ(t, sieve_filter_estimate_items(f), stored - deleted);
	sieve_filter_destroy(f);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_scale_cases[] = {
	CASE(sieve_unit_bloom_no_false_negatives_1m),
	CASE(sieve_unit_blocked_no_false_negatives_1m),
	CASE(sieve_unit_cuckoo_no_false_negatives_1m),
	CASE(sieve_unit_cuckoo_full_table_1m),
};

const unsigned int sieve_scale_cases_n = ARRAY_SIZE(sieve_scale_cases);
