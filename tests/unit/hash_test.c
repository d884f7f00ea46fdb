// SPDX-License-Identifier: GPL-2.0
/*
 * The one jhash pass (sieve_hash64()): are its two 32-bit halves
 * independent enough to be used as two hashes?
 *
 * The cores use both halves at once: Bloom takes its first probe from the
 * top bits and the step of its double hashing from a mix of all 64; a
 * cuckoo filter takes the fingerprint from the top bits of the top half and
 * the bucket from the low bits of the bottom half. If the halves were
 * correlated, some (fingerprint, bucket) or (probe, step) pairs would be
 * more frequent than others and the false-positive rates would suffer.
 *
 * So 2^26 keys, 8-byte little-endian counters (the most regular keys there
 * are: the top 5 bytes are zero), are hashed with a fixed seed, and each
 * hash lands in two tables of 2^12 x 2^12 cells: (top 12 bits of the top
 * half, low 12 bits of the bottom half), as a cuckoo filter of 4096 buckets
 * uses them, and (top 12 bits of each half), as the range reductions do.
 * With independent uniform halves, every cell expects 4 keys, and the
 * chi-square statistic over the 2^24 cells is about normal with mean
 * d = 2^24 - 1 and standard deviation sqrt(2 d): both must lie within
 * Z_MAX of it. A dependence of even 1 in 1000 keys between the halves
 * moves the statistic far more than that.
 */
#include <math.h>

#include "unit.h"

#define HASH_KEYS	(1ULL << 26)
#define CELL_BITS	12
#define NCELLS		(1ULL << (2 * CELL_BITS))
#define Z_MAX		5.0	/* two-sided, about 6e-7 */
#define HASH_SEED	0x13572468U

/* Standard score of the chi-square statistic of @counts against uniform. */
static double chi_square_z(const u8 *counts, u64 ncells, u64 nkeys)
{
	double expected = (double)nkeys / ncells, sum = 0, df = ncells - 1;
	u64 i;

	for (i = 0; i < ncells; i++) {
		double d = counts[i] - expected;

		sum += d * d / expected;
	}
	return (sum - df) / sqrt(2 * df);
}

static void sieve_unit_hash64_halves_independent(struct sieve_test *t)
{
	u8 *cuckoo = calloc(NCELLS, 1), *ranges = calloc(NCELLS, 1);
	u32 overflow = 0;
	double z_cuckoo, z_ranges;
	u64 i;

	CHECKF(t, cuckoo && ranges, "out of memory");
	if (!cuckoo || !ranges)
		goto out;
	for (i = 0; i < HASH_KEYS; i++) {
		u8 key[8];
		u64 h, hi, lo, c, r;

		put_unaligned_le64(i, key);
		h = sieve_hash64(key, sizeof(key), HASH_SEED);
		hi = h >> 32;
		lo = (u32)h;
		c = hi >> (32 - CELL_BITS) << CELL_BITS | (lo & ((1 << CELL_BITS) - 1));
		r = hi >> (32 - CELL_BITS) << CELL_BITS | lo >> (32 - CELL_BITS);
		/* A u8 count: 255 keys where 4 are expected is a failure anyway. */
		overflow += cuckoo[c] == 255 || ranges[r] == 255;
		cuckoo[c] += cuckoo[c] < 255;
		ranges[r] += ranges[r] < 255;
	}
	z_cuckoo = chi_square_z(cuckoo, NCELLS, HASH_KEYS);
	z_ranges = chi_square_z(ranges, NCELLS, HASH_KEYS);
	sieve_note("2^26 8-byte counters, 2^24 cells: chi-square z = %.2f (fingerprint, bucket), %.2f (top bits of both halves)",
		   z_cuckoo, z_ranges);
	CHECKF(t, !overflow, "%u cells overflowed", overflow);
	CHECKF(t, fabs(z_cuckoo) <= Z_MAX, "(fingerprint, bucket): chi-square z = %.2f", z_cuckoo);
	CHECKF(t, fabs(z_ranges) <= Z_MAX, "(top, top): chi-square z = %.2f", z_ranges);
out:
	free(cuckoo);
	free(ranges);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_hash_cases[] = {
	CASE(sieve_unit_hash64_halves_independent),
};

const unsigned int sieve_hash_cases_n = ARRAY_SIZE(sieve_hash_cases);
