// SPDX-License-Identifier: GPL-2.0
/*
 * From (capacity n, false-positive rate p) to a geometry, and from a
 * geometry to the rate it is expected to have: all in integer and
 * fixed-point maths, since this runs in the kernel.
 */
#include "filter.h"
#include "fixedpoint.h"

/* log2(1 / p) in Q32, p given in parts per billion. */
static u64 log2_inv_rate(u32 fpp_ppb)
{
	return fx32_log2(SIEVE_PPB) - fx32_log2(fpp_ppb);
}

/* (1 - (1 - 1/m)^(kn))^k: the exact expectation, not its e^x approximation. */
static u64 bloom_expected_rate(const struct sieve_geometry *geo, u64 nitems)
{
	u64 probes, bit_clear;

	if (check_mul_overflow(nitems, (u64)geo->nhashes, &probes))
		probes = U64_MAX;
	bit_clear = fx62_pow(FX62_ONE - fx62_div(1, geo->nbits), probes);
	return fx62_pow(FX62_ONE - bit_clear, geo->nhashes);
}

/*
 * The optimal Bloom filter spends log2(1/p) / ln 2 = 1.44 log2(1/p) bits
 * per key with k = log2(1/p) probes: m = -n ln p / ln^2 2, k = (m/n) ln 2.
 */
static int bloom_size(u64 n, u32 fpp_ppb, struct sieve_geometry *geo)
{
	u64 log_rate = log2_inv_rate(fpp_ppb);
	u64 bits_per_key = mul_u64_u64_shr(log_rate, FX32_LOG2E, 32);	/* Q32 */
	u64 target = fx62_div(fpp_ppb, SIEVE_PPB);
	u64 lo, hi;

	geo->nbits = max_t(u64, 64, mul_u64_u64_shr(n, bits_per_key, 32) + 1);
	geo->nhashes = clamp_t(u32, (log_rate + FX32_ONE / 2) >> 32, 1, SIEVE_MAX_HASHES);
	if (bloom_expected_rate(geo, n) <= target)
		return 0;
	/*
	 * The formula is asymptotic, and k is rounded (up to 1 where
	 * log2(1/p) < 1/2, p > 0.71, which needs far more bits than the
	 * formula says): find the fewest bits above it that meet p by the
	 * exact rate, which falls as bits are added, doubling then bisecting.
	 */
	hi = geo->nbits;
	do {
		if (hi >= SIEVE_MAX_TABLE_BYTES * 8)
			return -E2BIG;
		lo = hi;
		hi = min_t(u64, 2 * hi, SIEVE_MAX_TABLE_BYTES * 8);
		geo->nbits = hi;
	} while (bloom_expected_rate(geo, n) > target);
	while (lo + 1 < hi) {
		geo->nbits = lo + (hi - lo) / 2;
		if (bloom_expected_rate(geo, n) <= target)
			hi = geo->nbits;
		else
			lo = geo->nbits;
	}
	geo->nbits = hi;
	return 0;
}

/*
 * Rate of a blocked Bloom filter whose 512-bit blocks hold @lambda keys on
 * average (Q32), in Q62. The keys of a block are Poisson distributed, and
 * a block with i keys, each having set a random k-subset of its bits,
 * answers a foreign query yes with probability at most
 * (1 - (1 - k/512)^i)^k (see blocked_bloom.c: the bits are negatively
 * associated), so this is an upper bound, not an approximation.
 *
 * The Poisson weights are walked from the mode outwards, scaled so the
 * mode weighs 2^52, until they vanish: the sum needs no exp(-lambda), and
 * the far tail (blocks with many keys), which dominates small rates, is
 * kept.
 */
#define POISSON_MODE_WEIGHT	(1ULL << 52)
#define POISSON_MAX_MODE	2048	/* keys per block; beyond, the rate is taken as 1 */

static u64 blocked_rate(u64 lambda, u32 k)
{
	u64 clear_per_key = FX62_ONE - ((u64)k << (62 - 9));	/* 1 - k/512 */
	u64 inv_lambda, w, clear, weights = 0, hits = 0;
	u32 mode, i;

	/*
	 * 1 bounds any rate, and closely here: even with k = 1, 2048 keys
	 * leave only e^-4 = 2% of a block's bits clear.
	 */
	if (lambda > (u64)POISSON_MAX_MODE << 32)
		return FX62_ONE;
	lambda = max_t(u64, lambda, 1);
	inv_lambda = div64_u64(U64_MAX, lambda);	/* 1 / lambda in Q32 */
	mode = lambda >> 32;

	w = POISSON_MODE_WEIGHT;
	clear = fx62_pow(clear_per_key, mode);
	for (i = mode; w && i <= mode + 2 * POISSON_MAX_MODE; i++) {
		weights += w;
		hits += fx62_mul(w, fx62_pow(FX62_ONE - clear, k));
		w = div64_u64(mul_u64_u64_shr(w, lambda, 32), i + 1);
		clear = fx62_mul(clear, clear_per_key);
	}
	w = POISSON_MODE_WEIGHT;
	for (i = mode; w && i > 0; i--) {
		w = mul_u64_u64_shr(w, i * inv_lambda, 32);
		clear = fx62_pow(clear_per_key, i - 1);
		weights += w;
		hits += fx62_mul(w, fx62_pow(FX62_ONE - clear, k));
	}
	return fx62_div(hits, weights);
}

/* Keys per block, Q32, at @eighths / 8 bits per key. */
static u64 keys_per_block(u64 eighths)
{
	return div64_u64((u64)SIEVE_BLOCK_BITS * 8 << 32, eighths);
}

/*
 * The k that gives the lowest rate, and that rate. Blocks fill unevenly,
 * so the best k lies below the classic (m/n) ln 2, far below at low rates
 * (14 rather than 21 at 30 bits per key): every k is tried.
 */
static u64 blocked_best_rate(u64 eighths, u32 *best_k)
{
	u64 lambda = keys_per_block(eighths), best = FX62_ONE;
	u32 k;

	*best_k = 1;
	for (k = 1; k <= SIEVE_MAX_HASHES; k++) {
		u64 rate = blocked_rate(lambda, k);

		if (rate < best) {
			best = rate;
			*best_k = k;
		}
	}
	return best;
}

/*
 * The fewest bits per key, in steps of 1/8 bit, for which some k reaches
 * p; the rate falls as bits are added, so a binary search finds them.
 * Blocking costs little at high rates and more at low ones; a rate that
 * twice the bits of a classic Bloom filter cannot reach is refused.
 */
static int blocked_size(u64 n, u32 fpp_ppb, struct sieve_geometry *geo)
{
	u64 target = fx62_div(fpp_ppb, SIEVE_PPB);
	u64 lo = mul_u64_u64_shr(mul_u64_u64_shr(log2_inv_rate(fpp_ppb), FX32_LOG2E, 32), 8, 32);
	u64 hi = 2 * lo + 8, blocks;
	u32 k;

	if (blocked_best_rate(hi, &k) > target)
		return -EINVAL;
	while (lo + 1 < hi) {
		u64 mid = (lo + hi) / 2;

		if (blocked_best_rate(mid, &k) <= target)
			hi = mid;
		else
			lo = mid;
	}
	blocked_best_rate(hi, &k);
	blocks = DIV_ROUND_UP_ULL(n * hi, 8 * SIEVE_BLOCK_BITS);
	geo->nbits = blocks * SIEVE_BLOCK_BITS;
	geo->nhashes = k;
	return 0;
}

/*
 * A cuckoo filter's false hits come from the 2b slots of a key's two
 * buckets: p ~ 2b / 2^f, so f = ceil(log2(2b / p)). Buckets are a power of
 * two (partial-key hashing XORs bucket numbers) with the reference
 * implementation's 96% target load.
 */
#define CUCKOO_LOAD_PERCENT	96

static int cuckoo_size(u64 n, u32 fpp_ppb, struct sieve_geometry *geo)
{
	u64 buckets = DIV_ROUND_UP_ULL(n * 100, SIEVE_CUCKOO_SLOTS * CUCKOO_LOAD_PERCENT);
	u32 fp_bits = SIEVE_CUCKOO_MIN_FP_BITS;

	/* The smallest f with 2^f p >= 2b, in integers: no rounding at the edges. */
	while (((u64)fpp_ppb << fp_bits) < 2ULL * SIEVE_CUCKOO_SLOTS * SIEVE_PPB)
		if (++fp_bits > SIEVE_CUCKOO_MAX_FP_BITS)
			return -EINVAL;
	geo->fp_bits = fp_bits;
	geo->nbuckets = roundup_pow_of_two(max_t(u64, buckets, 2));
	return 0;
}

int sieve_size(u32 type, u64 capacity, u32 fpp_ppb, struct sieve_geometry *out)
{
	struct sieve_geometry geo = { .type = type };
	u64 table_bytes;
	int err;

	if (!capacity || !fpp_ppb || fpp_ppb >= SIEVE_PPB)
		return -EINVAL;
	if (capacity > SIEVE_MAX_CAPACITY)
		return -E2BIG;

	switch (type) {
	case SIEVE_BLOOM:
		err = bloom_size(capacity, fpp_ppb, &geo);
		break;
	case SIEVE_BLOCKED_BLOOM:
		err = blocked_size(capacity, fpp_ppb, &geo);
		break;
	case SIEVE_CUCKOO:
		err = cuckoo_size(capacity, fpp_ppb, &geo);
		break;
	default:
		return -EINVAL;
	}
	if (!err)
		err = sieve_geometry_check(&geo, &table_bytes);
	if (!err)
		*out = geo;
	return err;
}
EXPORT_SYMBOL_NS_GPL(sieve_size, SIEVE_INTERNAL_NS);

static u64 blocked_expected_rate(const struct sieve_geometry *geo, u64 nitems)
{
	u64 nblocks = geo->nbits / SIEVE_BLOCK_BITS;
	u64 whole = div64_u64(nitems, nblocks);
	u64 lambda;

	if (whole > POISSON_MAX_MODE)
		return FX62_ONE;
	lambda = (whole << 32) + div64_u64((nitems - whole * nblocks) << 32, nblocks);
	return blocked_rate(lambda, geo->nhashes);
}

/*
 * Each of the 2b slots of a query's two buckets is taken with probability
 * alpha (the load) and matches with 1 / (2^f - 1): 1 - (1 - alpha / (2^f - 1))^2b.
 */
static u64 cuckoo_expected_rate(const struct sieve_geometry *geo, u64 nitems)
{
	u64 slots = geo->nbuckets * SIEVE_CUCKOO_SLOTS;
	u64 load = fx62_div(min(nitems, slots), slots);
	u64 slot_miss = FX62_ONE - div64_u64(load, (1ULL << geo->fp_bits) - 1);

	return FX62_ONE - fx62_pow(slot_miss, 2 * SIEVE_CUCKOO_SLOTS);
}

u32 sieve_expected_fpr_ppb(const struct sieve_geometry *geo, u64 nitems)
{
	u64 table_bytes;

	if (sieve_geometry_check(geo, &table_bytes))
		return 0;
	switch (geo->type) {
	case SIEVE_BLOOM:
		return fx62_to_ppb(bloom_expected_rate(geo, nitems));
	case SIEVE_BLOCKED_BLOOM:
		return fx62_to_ppb(blocked_expected_rate(geo, nitems));
	default:
		return fx62_to_ppb(cuckoo_expected_rate(geo, nitems));
	}
}
EXPORT_SYMBOL_NS_GPL(sieve_expected_fpr_ppb, SIEVE_INTERNAL_NS);
