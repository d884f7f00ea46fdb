// SPDX-License-Identifier: GPL-2.0
/*
 * Sizing and expected rates (kmod/sizing.c, integer and fixed-point maths)
 * against the same formulas evaluated with libm in double precision, over a
 * grid of capacities (1 to 1e9) and rates (0.5 to 1e-6).
 */
#include <math.h>

#include "unit.h"

static const u64 capacities[] = {
	1, 2, 3, 10, 100, 1000, 4321, 10000, 100000, 1000000, 12345678,
	10000000, 100000000, 1000000000,
};

static const double rates[] = {
	0.99, 0.9, 0.75, 0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.001, 1e-4, 1e-5, 1e-6,
};

static u32 ppb_of(double rate)
{
	return (u32)llround(rate * 1e9);
}

/* Table bytes within 1% of the limit: either answer is fine. */
static bool near_limit(double bytes)
{
	return bytes > 0.99 * SIEVE_MAX_TABLE_BYTES && bytes < 1.01 * SIEVE_MAX_TABLE_BYTES;
}

/*
 * The fewest bits, from 64 up, with which a Bloom filter of @k probes
 * meets @p at @n keys by the exact rate (1 - (1 - 1/m)^(kn))^k, which
 * falls as bits are added: bisection.
 */
static double bloom_min_bits(double n, double p, u32 k)
{
	double lo = 64, hi = 64, mid;

	if (bloom_fpr_exact(lo, n, k) <= p)
		return lo;
	while (bloom_fpr_exact(hi, n, k) > p)
		hi *= 2;
	while (hi - lo > 1) {
		mid = floor((lo + hi) / 2);
		if (bloom_fpr_exact(mid, n, k) <= p)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/*
 * Fixed point against double: sizing.c's rates are exact to about 1e-9 of
 * themselves (64-bit fixed point, powers by squaring), so a rate that
 * meets p there may exceed it here by that much.
 */
#define FIXED_POINT_SLACK	1e-8

/*
 * Bloom: k = (m/n) ln 2 = log2(1/p) rounded, exactly; -E2BIG beyond 1 GiB.
 * sizing.c starts from m = -n ln p / ln^2 2 and adds bits, 0.1% at a time,
 * while the exact rate at capacity, (1 - (1 - 1/m)^(kn))^k, is above p
 * (k is rounded, and the formula is asymptotic). So:
 *  - the rate at capacity is at most p (the promise);
 *  - m is at most 0.2% plus 4 bits above the fewest bits that keep it
 *    (bisection in double, bloom_min_bits());
 *  - m is the formula's within 1%, and never below it, where the formula
 *    asks for 1024 bits or more and for k >= 1/2; below 1024 bits the
 *    64-bit minimum and the exact rate's departure from the asymptotic
 *    one decide (up to 1.4% more bits at n = 10), and for p > 0.71 the
 *    single hash needs far more bits than the formula's k < 1/2 would.
 */
static void sieve_unit_sizing_bloom_vs_libm(struct sieve_test *t)
{
	u32 i, j, checked = 0;
	double worst_rate = 0, worst_formula = 0, worst_min = 0;

	for (i = 0; i < ARRAY_SIZE(capacities); i++) {
		for (j = 0; j < ARRAY_SIZE(rates); j++) {
			double n = capacities[i], p = rates[j];
			double m = -n * log(p) / (M_LN2 * M_LN2), want = fmax(64, m);
			double log_inv = log2(1 / p), fpr, need;
			struct sieve_geometry g;
			int err = sieve_size(SIEVE_BLOOM, capacities[i], ppb_of(p), &g);
			u32 k = fmin(SIEVE_MAX_HASHES, fmax(1, round(log_inv)));

			if (near_limit(want / 8) || near_limit(want * 1.01 / 8))
				continue;
			checked++;
			if (want / 8 > SIEVE_MAX_TABLE_BYTES) {
				CHECKF(t, err == -E2BIG, "n=%g p=%g: %d, not -E2BIG", n, p, err);
				continue;
			}
			CHECKF(t, err == 0, "n=%g p=%g: error %d", n, p, err);
			if (err)
				continue;
			/* log2(1/p) exactly halfway between two integers may round either way. */
			if (fabs(log_inv - floor(log_inv) - 0.5) > 1e-6)
				CHECKF(t, g.nhashes == k, "n=%g p=%g: k=%u, libm %u", n, p, g.nhashes, k);
			fpr = bloom_fpr_exact(g.nbits, n, g.nhashes);
			CHECKF(t, fpr <= p * (1 + FIXED_POINT_SLACK), "n=%g p=%g: m=%llu k=%u: rate at capacity %.12g",
			       n, p, (unsigned long long)g.nbits, g.nhashes, fpr);
			need = bloom_min_bits(n, p, g.nhashes);
			CHECKF(t, g.nbits <= need + need / 500 + 4,
			       "n=%g p=%g: m=%llu, the fewest that meet p %.0f", n, p,
			       (unsigned long long)g.nbits, need);
			worst_rate = fmax(worst_rate, fpr / p);
			worst_min = fmax(worst_min, g.nbits / need - 1);
			/* The formula's k = log2(1/p) below 1/2 rounds up to 1: it does not apply. */
			if (want < 1024 || log_inv < 0.5)
				continue;
			CHECKF(t, g.nbits >= floor(want) && g.nbits <= 1.01 * want + 1,
			       "n=%g p=%g: m=%llu, libm %.1f", n, p, (unsigned long long)g.nbits, want);
			worst_formula = fmax(worst_formula, g.nbits / want - 1);
		}
	}
	sieve_note("%u sizes checked; rate at capacity at most %.9f p; m at most %.3f%% above the fewest bits, %.3f%% above the formula (m >= 1024)",
		   checked, worst_rate, 100 * worst_min, 100 * worst_formula);
}

/*
 * Cuckoo: f = ceil(log2(2b/p)) exactly (-EINVAL beyond 16 bits), nbuckets =
 * roundup_pow_of_two(max(2, ceil(n / 3.84))) exactly, -E2BIG beyond 1 GiB.
 * Besides the grid, every rate at and next to the boundaries 8 / 2^f, where
 * a logarithm that is off in its last bits picks the wrong width.
 */
static void check_cuckoo_size(struct sieve_test *t, u64 n, u32 ppb)
{
	u64 buckets = (n * 25 + 95) / 96;	/* ceil(n / 3.84) */
	struct sieve_geometry g;
	double bytes;
	u32 f;
	int err = sieve_size(SIEVE_CUCKOO, n, ppb, &g);

	/* The smallest f with 2^f * p >= 8: ceil(log2(8 / p)), in integers. */
	for (f = SIEVE_CUCKOO_MIN_FP_BITS; ((u64)ppb << f) < 8ULL * SIEVE_PPB; f++)
		;
	/* ...which is what libm says away from the integers. */
	if (fabs(log2(8e9 / ppb) - round(log2(8e9 / ppb))) > 1e-6 && f > SIEVE_CUCKOO_MIN_FP_BITS)
		CHECKF(t, f == (u32)ceil(log2(8e9 / ppb)), "p=%u ppb: test's own f=%u", ppb, f);
	if (f > SIEVE_CUCKOO_MAX_FP_BITS) {
		CHECKF(t, err == -EINVAL, "n=%llu p=%u ppb: %d, not -EINVAL",
		       (unsigned long long)n, ppb, err);
		return;
	}
	buckets = buckets < 2 ? 2 : buckets;
	buckets = 1ULL << (64 - __builtin_clzll(buckets - 1));
	bytes = (double)buckets * SIEVE_CUCKOO_SLOTS * f / 8 + 8;
	if (bytes > SIEVE_MAX_TABLE_BYTES) {
		CHECKF(t, err == -E2BIG, "n=%llu p=%u ppb: %d, not -E2BIG",
		       (unsigned long long)n, ppb, err);
		return;
	}
	CHECKF(t, err == 0, "n=%llu p=%u ppb: error %d", (unsigned long long)n, ppb, err);
	if (err)
		return;
	CHECKF(t, g.fp_bits == f, "n=%llu p=%u ppb: f=%u, exact %u",
	       (unsigned long long)n, ppb, g.fp_bits, f);
	CHECKF(t, g.nbuckets == buckets, "n=%llu p=%u ppb: %llu buckets, exact %llu",
	       (unsigned long long)n, ppb, (unsigned long long)g.nbuckets,
	       (unsigned long long)buckets);
}

static void sieve_unit_sizing_cuckoo_vs_libm(struct sieve_test *t)
{
	u32 i, j, f, before = 0;
	double edge;
	int d;

	for (i = 0; i < ARRAY_SIZE(capacities); i++)
		for (j = 0; j < ARRAY_SIZE(rates); j++)
			check_cuckoo_size(t, capacities[i], ppb_of(rates[j]));
	for (f = SIEVE_CUCKOO_MIN_FP_BITS; f <= SIEVE_CUCKOO_MAX_FP_BITS + 1; f++) {
		edge = 8e9 / exp2(f);
		for (d = -2; d <= 2; d++)
			if (edge + d > 0 && edge + d < SIEVE_PPB)
				check_cuckoo_size(t, 1000, (u32)(floor(edge) + d));
	}
	/* Capacities around the bucket thresholds n = 3.84 * 2^j. */
	for (j = 1; j < 30; j++)
		for (d = -1; d <= 1; d++)
			check_cuckoo_size(t, (u64)(3.84 * (1ULL << j)) + d, 1000000);
	before = t->nfail;
	sieve_note("grid, boundary rates and bucket thresholds checked: %u failures", before);
}

/*
 * sizing.c's blocked-Bloom bound (stats.c, blocked_fpr_bound()), minimised
 * over k: the fewest bits per key (to 1e-4) for which some k in 1..32
 * brings it to @p or below. For a fixed k the bound falls as bits are
 * added, so bisection finds each k's threshold.
 */
static double blocked_threshold(double p, u32 k)
{
	double lo = 0.25, hi = 200, mid;

	if (blocked_fpr_bound(hi, 1, k) > p)
		return INFINITY;
	while (hi - lo > 1e-4) {
		mid = (lo + hi) / 2;
		if (blocked_fpr_bound(mid, 1, k) <= p)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static double blocked_min_bits_per_key(double p, u32 *best_k)
{
	u32 k0 = fmin(SIEVE_MAX_HASHES, fmax(1, round(log2(1 / p)))), k;
	double best = blocked_threshold(p, k0), bpk;

	*best_k = k0;
	for (k = 1; k <= SIEVE_MAX_HASHES; k++) {
		/* A k that does not reach p at the best so far cannot beat it. */
		if (k == k0 || (best < INFINITY && blocked_fpr_bound(best, 1, k) > p))
			continue;
		bpk = blocked_threshold(p, k);
		if (bpk < best) {
			best = bpk;
			*best_k = k;
		}
	}
	return best;
}

/*
 * Blocked Bloom: the returned geometry meets p by the bound (evaluated
 * with libm; FIXED_POINT_SLACK for sizing.c's fixed point), and spends no
 * more than 1/8 bit per key (the sizing step) plus 1% above the fewest
 * bits per key with which some k reaches p, before rounding up to whole
 * blocks.
 */
static void sieve_unit_sizing_blocked_vs_libm(struct sieve_test *t)
{
	u32 i, j, k = 0, checked = 0;
	double worst_bits = 0, worst_rate = 0;

	for (j = 0; j < ARRAY_SIZE(rates); j++) {
		double p = rates[j], min_bpk = blocked_min_bits_per_key(p, &k);

		sieve_note("p=%-6g fewest bits/key %.4f (k=%u), Bloom %.4f", p, min_bpk, k,
			   -log(p) / (M_LN2 * M_LN2));
		for (i = 0; i < ARRAY_SIZE(capacities); i++) {
			double n = capacities[i], fpr, allowed;
			double want = ceil(n * min_bpk / SIEVE_BLOCK_BITS) * SIEVE_BLOCK_BITS;
			struct sieve_geometry g;
			int err = sieve_size(SIEVE_BLOCKED_BLOOM, capacities[i], ppb_of(p), &g);

			if (near_limit(want / 8) || near_limit(want * 1.02 / 8))
				continue;
			checked++;
			if (want / 8 > SIEVE_MAX_TABLE_BYTES) {
				CHECKF(t, err == -E2BIG, "n=%g p=%g: %d, not -E2BIG", n, p, err);
				continue;
			}
			CHECKF(t, err == 0, "n=%g p=%g: error %d", n, p, err);
			if (err)
				continue;
			fpr = blocked_fpr_bound(g.nbits, n, g.nhashes);
			CHECKF(t, fpr <= p * (1 + FIXED_POINT_SLACK), "n=%g p=%g: m=%llu k=%u bound %.12g",
			       n, p, (unsigned long long)g.nbits, g.nhashes, fpr);
			worst_rate = fmax(worst_rate, fpr / p);
			allowed = ceil(n * (min_bpk * 1.01 + 0.125) / SIEVE_BLOCK_BITS) * SIEVE_BLOCK_BITS;
			CHECKF(t, g.nbits <= allowed, "n=%g p=%g: m=%llu, more than %.0f (%.4f bits/key)",
			       n, p, (unsigned long long)g.nbits, allowed, g.nbits / n);
			if (n >= 1000000)
				worst_bits = fmax(worst_bits, g.nbits / n - min_bpk);
		}
	}
	sieve_note("%u sizes checked; bound at capacity at most %.9f p; at n >= 1e6, at most %.4f bits/key above the fewest",
		   checked, worst_rate, worst_bits);
}

/* |got - want| <= 1% of want + 1 ppb (the rounding to parts per billion). */
static void check_rate(struct sieve_test *t, const struct sieve_geometry *g, u64 n,
		       double want, double *worst)
{
	u32 got = sieve_expected_fpr_ppb(g, n);
	double err = fabs(got - want * 1e9);

	CHECKF(t, err <= 0.01 * want * 1e9 + 1,
	       "type %u m=%llu b=%llu k=%u f=%u n=%llu: %u ppb, libm %.3f", g->type,
	       (unsigned long long)g->nbits, (unsigned long long)g->nbuckets, g->nhashes,
	       g->fp_bits, (unsigned long long)n, got, want * 1e9);
	if (want * 1e9 >= 100)
		*worst = fmax(*worst, err / (want * 1e9));
}

/*
 * sieve_expected_fpr_ppb() against the double formulas of each type: the
 * exact expectation for Bloom and cuckoo, the bound for blocked Bloom.
 */
static void sieve_unit_expected_fpr_vs_libm(struct sieve_test *t)
{
	static const u64 bloom_bits[] = { 64, 1000, 1 << 16, 1000003, 1ULL << 33 };
	static const u64 blocked_bits[] = { 512, 8192, 1 << 20, 1ULL << 33 };
	static const u32 hashes[] = { 1, 3, 7, 13, 32 };
	static const u64 buckets[] = { 2, 1024, 1 << 20 };
	static const u32 widths[] = { 4, 8, 12, 16 };
	/* keys as a fraction of m (Bloom types) or of the slots (cuckoo) */
	static const double fills[] = { 0, 1e-6, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 4, 8 };
	double worst[3] = { 0 };
	u32 i, j, l;

	for (i = 0; i < ARRAY_SIZE(bloom_bits); i++)
		for (j = 0; j < ARRAY_SIZE(hashes); j++)
			for (l = 0; l < ARRAY_SIZE(fills); l++) {
				struct sieve_geometry g = {
					.type = SIEVE_BLOOM, .nbits = bloom_bits[i],
					.nhashes = hashes[j],
				};
				u64 n = llround(fills[l] * g.nbits);

				check_rate(t, &g, n, bloom_fpr_exact(g.nbits, n, g.nhashes), &worst[0]);
			}
	for (i = 0; i < ARRAY_SIZE(blocked_bits); i++)
		for (j = 0; j < ARRAY_SIZE(hashes); j++)
			for (l = 0; l < ARRAY_SIZE(fills); l++) {
				struct sieve_geometry g = {
					.type = SIEVE_BLOCKED_BLOOM, .nbits = blocked_bits[i],
					.nhashes = hashes[j],
				};
				u64 n = llround(fills[l] * g.nbits);

				check_rate(t, &g, n, blocked_fpr_bound(g.nbits, n, g.nhashes), &worst[1]);
			}
	for (i = 0; i < ARRAY_SIZE(buckets); i++)
		for (j = 0; j < ARRAY_SIZE(widths); j++)
			for (l = 0; l < ARRAY_SIZE(fills); l++) {
				struct sieve_geometry g = {
					.type = SIEVE_CUCKOO, .nbuckets = buckets[i],
					.fp_bits = widths[j],
				};
				u64 n = llround(fills[l] * g.nbuckets * SIEVE_CUCKOO_SLOTS);

				check_rate(t, &g, n, cuckoo_fpr(g.nbuckets, g.fp_bits, n), &worst[2]);
			}
	sieve_note("largest relative error (rates >= 100 ppb): bloom %.2e, blocked %.2e, cuckoo %.2e",
		   worst[0], worst[1], worst[2]);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_sizing_cases[] = {
	CASE(sieve_unit_sizing_bloom_vs_libm),
	CASE(sieve_unit_sizing_cuckoo_vs_libm),
	CASE(sieve_unit_sizing_blocked_vs_libm),
	CASE(sieve_unit_expected_fpr_vs_libm),
};

const unsigned int sieve_sizing_cases_n = ARRAY_SIZE(sieve_sizing_cases);
