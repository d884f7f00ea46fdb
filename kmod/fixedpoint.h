/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed-point maths for sizing and estimates: the cores run in the kernel,
 * where floating point is off limits.
 *
 * Two formats, both in a u64:
 *  - Q32 for logarithms and bits per key (log2 of anything sieve meets is
 *    below 64, so 31 integer bits are plenty);
 *  - Q62 for probabilities in [0, 1], because false-positive rates go down
 *    to 1e-9 and the Poisson tails that make them up lie far below that.
 */
#ifndef SIEVE_FIXEDPOINT_H
#define SIEVE_FIXEDPOINT_H

#include <sieve_env.h>	/* this folder's in the kernel; userspace builds bring theirs */

#define FX32_ONE	(1ULL << 32)
#define FX32_LN2	2977044472ULL	/* ln 2 = 0.69314718056 */
#define FX32_LOG2E	6196328019ULL	/* 1 / ln 2 = 1.44269504089 */
#define FX62_ONE	(1ULL << 62)

/* log2(@x) in Q32, for x >= 1; accurate to about 2^-30. */
static inline u64 fx32_log2(u64 x)
{
	int ipart = fls64(x) - 1;
	u64 result = (u64)ipart << 32;
	u64 y;		/* x / 2^ipart, in [1, 2), as Q31 */
	int bit;

	y = ipart >= 31 ? x >> (ipart - 31) : x << (31 - ipart);
	/*
	 * Squaring y doubles its logarithm: each time the square reaches 2,
	 * the next fractional bit of log2(y) is 1.
	 */
	for (bit = 31; bit >= 0; bit--) {
		y = (y * y) >> 31;
		if (y >= (2ULL << 31)) {
			y >>= 1;
			result |= 1ULL << bit;
		}
	}
	return result;
}

static inline u64 fx62_mul(u64 a, u64 b)
{
	return mul_u64_u64_shr(a, b, 62);
}

/* @base^@exp for a probability @base in Q62, by squaring. */
static inline u64 fx62_pow(u64 base, u64 exp)
{
	u64 result = FX62_ONE;

	while (exp) {
		if (exp & 1)
			result = fx62_mul(result, base);
		base = fx62_mul(base, base);
		exp >>= 1;
	}
	return result;
}

/* A probability in Q62 as parts per billion, rounded. */
static inline u32 fx62_to_ppb(u64 p)
{
	return (u32)((mul_u64_u64_shr(p, 2ULL * SIEVE_PPB, 62) + 1) / 2);
}

/*
 * @num / @den in Q62, for num <= den < 2^63, by long division: exact to
 * the last bit whatever the magnitudes (a Poisson weight sum is near 2^58).
 */
static inline u64 fx62_div(u64 num, u64 den)
{
	u64 quotient = 0;
	int bit;

	for (bit = 62; bit >= 0; bit--) {
		if (num >= den) {
			num -= den;
			quotient |= 1ULL << bit;
		}
		num <<= 1;
	}
	return quotient;
}

#endif /* SIEVE_FIXEDPOINT_H */
