// SPDX-License-Identifier: GPL-2.0
/*
 * What a filter says about itself, sieve_filter_estimate_items() and
 * sieve_filter_fpr_ppb(), against the double-precision formulas, as keys
 * are added. Tables are large enough that one filter's randomness is far
 * below the tolerances (stated per check).
 */
#include <math.h>

#include "unit.h"
#include "libsieve.h"
#include "local.h"

#define SET_EST		31
#define Z_999		3.29	/* two-sided 99.9% normal quantile */

static void add_until(struct sieve_filter *f, u64 *n, u64 target)
{
	u8 buf[64];

	for (; *n < target; (*n)++)
		sieve_filter_add(f, buf, unit_key_distinct(buf, SET_EST, *n));
}

/*
 * Bloom, m = 2^22 bits, k = 7, from 1/256 to 1/5 key per bit (up to 75% of
 * the bits set): the estimate -(m/k) ln(1 - X/m) is within 1% of n (its
 * standard deviation is under 0.1% here), the rate (X/m)^k within 2% of the
 * expected (1 - (1 - 1/m)^(kn))^k (deviation k * sd(X)/X < 0.4%), and the
 * two agree with each other: (1 - e^(-k n_est / m))^k within 0.5%.
 */
static void sieve_unit_bloom_estimates_vs_formula(struct sieve_test *t)
{
	static const double per_bit[] = { 1.0 / 256, 1.0 / 64, 1.0 / 32, 1.0 / 16,
					  1.0 / 10, 1.0 / 8, 1.0 / 6, 1.0 / 5 };
	struct sieve_geometry g = { .type = SIEVE_BLOOM, .seed = 41, .nbits = 1 << 22, .nhashes = 7 };
	struct sieve_filter *f = NULL;
	u64 n = 0, est;
	double fpr, want, from_est;
	u32 i;

	EXPECT_EQ(t, sieve_filter_create(&g, &f), 0);
	if (!f)
		return;
	for (i = 0; i < ARRAY_SIZE(per_bit); i++) {
		add_until(f, &n, per_bit[i] * g.nbits);
		est = sieve_filter_estimate_items(f);
		fpr = sieve_filter_fpr_ppb(f) / 1e9;
		want = bloom_fpr_exact(g.nbits, n, g.nhashes);
		from_est = bloom_fpr(g.nbits, est, g.nhashes);
		sieve_note("n=%-7llu estimate %-7llu (%+.3f%%)  fpr %.6g, expected %.6g (%+.3f%%)",
			   (unsigned long long)n, (unsigned long long)est, 100.0 * est / n - 100,
			   fpr, want, 100 * fpr / want - 100);
		CHECKF(t, fabs((double)est - n) <= 0.01 * n, "n=%llu: estimate %llu",
		       (unsigned long long)n, (unsigned long long)est);
		CHECKF(t, fabs(fpr - want) <= 0.02 * want + 1e-9, "n=%llu: fpr %.6g, expected %.6g",
		       (unsigned long long)n, fpr, want);
		CHECKF(t, fabs(fpr - from_est) <= 0.005 * from_est + 1e-9,
		       "n=%llu: fpr %.6g, from the estimate %.6g", (unsigned long long)n, fpr, from_est);
	}
	sieve_filter_destroy(f);
}

/*
 * What the blocked filter's own figures should be, from its table read in
 * double precision (filter->table, 64 bytes a block): the exact rate, the
 * mean over blocks of C(x, k) / C(512, k), and the estimate, the sum over
 * blocks of log(1 - x/512) / log(1 - k/512) (a full block read as 511 bits).
 */
static void blocked_table_figures(const struct sieve_filter *f, double *rate, double *items)
{
	const u64 *words = f->table;
	u64 nblocks = f->geo.nbits / SIEVE_BLOCK_BITS, b;
	u32 w, x;

	*rate = 0;
	*items = 0;
	for (b = 0; b < nblocks; b++) {
		for (x = 0, w = 0; w < SIEVE_BLOCK_BITS / 64; w++)
			x += __builtin_popcountll(words[b * (SIEVE_BLOCK_BITS / 64) + w]);
		*rate += blocked_block_rate(x, f->geo.nhashes);
		x = x < SIEVE_BLOCK_BITS ? x : SIEVE_BLOCK_BITS - 1;
		*items += log1p(-(double)x / SIEVE_BLOCK_BITS) /
			  log1p(-(double)f->geo.nhashes / SIEVE_BLOCK_BITS);
	}
	*rate /= nblocks;
}

/*
 * Blocked Bloom, 16384 blocks, k = 8, from 64 down to 6 bits per key:
 *  - the fixed-point figures are those of the table, recomputed in double:
 *    the rate to 1.25 ppb (it is truncated to whole ppb, and each block's
 *    rate to Q32 first, 2^-32 = 0.23 ppb) plus 1e-6, the
 *    estimate to 1 key plus 1e-6;
 *  - the per-block estimate is within 1.5% of n;
 *  - the rate fits the exact expectation E for random k-subset patterns
 *    (fpr_test.c explains) within z = 3.29 times one table's spread s
 *    (1 ppb for rounding), and lies below the bound B (1 + z s) that
 *    sizing.c uses.
 */
static void sieve_unit_blocked_estimates_vs_formula(struct sieve_test *t)
{
	static const u32 bits_per_key[] = { 64, 32, 16, 12, 10, 8, 6 };
	struct sieve_geometry g = {
		.type = SIEVE_BLOCKED_BLOOM, .seed = 42, .nbits = 16384 * SIEVE_BLOCK_BITS, .nhashes = 8,
	};
	struct sieve_filter *f = NULL;
	double fpr, want, bound, sd, s, table_rate, table_items;
	u64 n = 0, est;
	u32 i;

	EXPECT_EQ(t, sieve_filter_create(&g, &f), 0);
	if (!f)
		return;
	for (i = 0; i < ARRAY_SIZE(bits_per_key); i++) {
		add_until(f, &n, g.nbits / bits_per_key[i]);
		est = sieve_filter_estimate_items(f);
		fpr = sieve_filter_fpr_ppb(f) / 1e9;
		want = blocked_fpr_exact(g.nbits, n, g.nhashes, &sd);
		bound = blocked_fpr_bound(g.nbits, n, g.nhashes);
		s = sd / want / sqrt(16384);
		blocked_table_figures(f, &table_rate, &table_items);
		sieve_note("n=%-7llu estimate %-7llu (%+.3f%%)  fpr %.6g, exact %.6g (%+.3f%%, spread %.2f%%), bound %.6g",
			   (unsigned long long)n, (unsigned long long)est, 100.0 * est / n - 100,
			   fpr, want, 100 * fpr / want - 100, 100 * s, bound);
		CHECKF(t, fabs(fpr - table_rate) <= 1.25e-9 + 1e-6 * table_rate,
		       "n=%llu: fpr %.9g, the table's %.9g", (unsigned long long)n, fpr, table_rate);
		CHECKF(t, fabs(est - table_items) <= 1 + 1e-6 * table_items,
		       "n=%llu: estimate %llu, the table's %.3f", (unsigned long long)n,
		       (unsigned long long)est, table_items);
		CHECKF(t, fabs((double)est - n) <= 0.015 * n, "n=%llu: estimate %llu",
		       (unsigned long long)n, (unsigned long long)est);
		CHECKF(t, fabs(fpr - want) <= Z_999 * s * want + 1e-9,
		       "n=%llu: fpr %.6g, exact %.6g (+-%.2f%%)", (unsigned long long)n, fpr, want,
		       100 * Z_999 * s);
		CHECKF(t, fpr <= bound * (1 + Z_999 * s) + 1e-9, "n=%llu: fpr %.6g above the bound %.6g",
		       (unsigned long long)n, fpr, bound);
	}
	sieve_filter_destroy(f);
}

/*
 * Cuckoo, 2^14 buckets, 10-bit fingerprints: the count is exact, and the
 * rate is 1 - (1 - alpha / (2^f - 1))^8 at load alpha (1% + 1 ppb), up to
 * and beyond the first -ENOSPC.
 */
static void sieve_unit_cuckoo_estimates_vs_formula(struct sieve_test *t)
{
	static const double loads[] = { 0.001, 0.1, 0.5, 0.9, 0.95 };
	struct sieve_geometry g = { .type = SIEVE_CUCKOO, .seed = 43, .nbuckets = 1 << 14, .fp_bits = 10 };
	u64 slots = g.nbuckets * SIEVE_CUCKOO_SLOTS, n = 0, est;
	struct sieve_filter *f = NULL;
	double fpr, want;
	u8 buf[64];
	u32 i;

	EXPECT_EQ(t, sieve_filter_create(&g, &f), 0);
	if (!f)
		return;
	for (i = 0; i <= ARRAY_SIZE(loads); i++) {
		if (i < ARRAY_SIZE(loads)) {
			add_until(f, &n, loads[i] * slots);
		} else {	/* full */
			while (sieve_filter_add(f, buf, unit_key_distinct(buf, SET_EST, n)) >= 0)
				n++;
		}
		est = sieve_filter_estimate_items(f);
		fpr = sieve_filter_fpr_ppb(f) / 1e9;
		want = cuckoo_fpr(g.nbuckets, g.fp_bits, n);
		sieve_note("n=%-6llu load %.4f  fpr %.6g, formula %.6g", (unsigned long long)n,
			   (double)n / slots, fpr, want);
		EXPECT_EQ(t, est, n);
		CHECKF(t, fabs(fpr - want) <= 0.01 * want + 1e-9, "n=%llu: fpr %.6g, formula %.6g",
		       (unsigned long long)n, fpr, want);
	}
	sieve_filter_destroy(f);
}

/*
 * One summary reads a Bloom-type table once, for all three figures (the
 * INFO command, /proc/sieve and `sieve filter list` read it through here):
 * SIEVE_COUNT_SCANS counts the whole-table reads. Its fill is the bits
 * set, counted here word by word.
 */
static void sieve_unit_summary_reads_table_once(struct sieve_test *t)
{
	static const struct sieve_geometry geos[] = {
		{ .type = SIEVE_BLOOM, .seed = 5, .nbits = 1 << 20, .nhashes = 7 },
		{ .type = SIEVE_BLOCKED_BLOOM, .seed = 5, .nbits = 1 << 20, .nhashes = 7 },
		{ .type = SIEVE_CUCKOO, .seed = 5, .nbuckets = 1 << 14, .fp_bits = 12 },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(geos); i++) {
		bool cuckoo = geos[i].type == SIEVE_CUCKOO;
		struct sieve_filter_summary sum;
		struct sieve_filter *f = NULL;
		unsigned long before;
		u64 n = 0, w, set = 0;

		EXPECT_EQ(t, sieve_filter_create(&geos[i], &f), 0);
		if (!f)
			continue;
		add_until(f, &n, 50000);
		before = sieve_table_scans_read();
		sieve_filter_summarize(f, &sum);
		/* Cuckoo keeps its count: no read of the table at all. */
		EXPECT_EQ(t, sieve_table_scans_read() - before, cuckoo ? 0 : 1);
		EXPECT_EQ(t, sum.items, sieve_filter_estimate_items(f));
		EXPECT_EQ(t, sum.fpr_ppb, sieve_filter_fpr_ppb(f));
		if (cuckoo) {
			EXPECT_EQ(t, sum.items, n);
			EXPECT_EQ(t, sum.fill_ppm, n * 1000000 / (geos[i].nbuckets * 4));
		} else {
			for (w = 0; w < f->table_bytes / 8; w++)
				set += __builtin_popcountll(((const u64 *)f->table)[w]);
			EXPECT_EQ(t, sum.fill_ppm, set * 1000000 / geos[i].nbits);
		}
		sieve_filter_destroy(f);
	}
}

/*
 * libsieve's info of a scalable local filter reads each layer's table once
 * and folds the layers by the kernel's rule: items add up, the rate is
 * 1 - prod(1 - rate of a layer), the fill is the newest layer's.
 */
static void sieve_unit_local_info_reads_each_layer_once(struct sieve_test *t)
{
	static const u32 types[] = { SIEVE_BLOOM, SIEVE_BLOCKED_BLOOM };
	u32 i, j;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		struct sieve_params p = {
			.type = types[i], .flags = SIEVE_CREATE_SEED | SIEVE_CREATE_SCALABLE,
			.capacity = 1000, .fpp_ppb = SIEVE_PPB / 100, .seed = 9,
			.growth = 2, .max_layers = 8,
		};
		struct sieve_local *f = NULL;
		struct sieve_info info;
		unsigned long before;
		double pass = 1;
		u64 items = 0;
		u8 key[64];
		u32 nlayers;

		EXPECT_EQ(t, sieve_local_create(&p, &f), 0);
		if (!f)
			continue;
		for (j = 0; j < 8000; j++)
			sieve_local_add(f, key, unit_key_distinct(key, SET_EST, j), 0);
		before = sieve_table_scans_read();
		sieve_local_info(f, &info);
		EXPECT_EQ(t, sieve_table_scans_read() - before, info.nlayers);
		EXPECT_TRUE(t, info.nlayers >= 3);
		nlayers = f->nlayers;
		EXPECT_EQ(t, nlayers, info.nlayers);
		for (j = 0; j < nlayers; j++) {
			items += sieve_filter_estimate_items(f->layers[j].filter);
			pass *= 1 - sieve_filter_fpr_ppb(f->layers[j].filter) / 1e9;
		}
		EXPECT_EQ(t, info.items, items);
		CHECKF(t, fabs(info.fpr_ppb - (1 - pass) * 1e9) <= nlayers,
		       "rate %u ppb, layers folded in double %.1f", info.fpr_ppb, (1 - pass) * 1e9);
		EXPECT_EQ(t, info.fill_ppm, sieve_filter_fill_ppm(f->layers[nlayers - 1].filter));
		sieve_local_destroy(f);
	}
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_estimate_cases[] = {
	CASE(sieve_unit_bloom_estimates_vs_formula),
	CASE(sieve_unit_blocked_estimates_vs_formula),
	CASE(sieve_unit_cuckoo_estimates_vs_formula),
	CASE(sieve_unit_summary_reads_table_once),
	CASE(sieve_unit_local_info_reads_each_layer_once),
};

const unsigned int sieve_estimate_cases_n = ARRAY_SIZE(sieve_estimate_cases);
