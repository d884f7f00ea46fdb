// SPDX-License-Identifier: GPL-2.0
/*
 * Double-precision reference formulas for the unit suite: what the
 * fixed-point code in kmod/ is compared with, and the binomial intervals
 * that decide whether a measured false-positive count fits a rate.
 */
#include <math.h>

#include "unit.h"

static double log_binom_pmf(double trials, double k, double logp, double log1mp)
{
	return lgamma(trials + 1) - lgamma(k + 1) - lgamma(trials - k + 1) +
	       k * logp + (trials - k) * log1mp;
}

void binom_interval(u64 trials, double p, double alpha, u64 *lo, u64 *hi)
{
	double mean = trials * p, sd = sqrt(trials * p * (1 - p));
	double logp = log(p), log1mp = log1p(-p), cdf = 0;
	u64 k, from, to;
	bool have_lo = false;

	if (p <= 0 || p >= 1) {
		*lo = *hi = p <= 0 ? 0 : trials;
		return;
	}
	/* Beyond 40 standard deviations (plus a margin for tiny means) the mass is < 1e-300. */
	from = mean - 40 * sd - 50 > 0 ? (u64)(mean - 40 * sd - 50) : 0;
	to = mean + 40 * sd + 50 < trials ? (u64)(mean + 40 * sd + 50) : trials;
	*lo = from;
	*hi = to;
	for (k = from; k <= to; k++) {
		cdf += exp(log_binom_pmf(trials, k, logp, log1mp));
		/* lo: one past the last k with P(X <= k) <= alpha / 2. */
		if (!have_lo && cdf > alpha / 2) {
			*lo = k;
			have_lo = true;
		}
		/* hi: the first k with P(X > k) <= alpha / 2. */
		if (cdf >= 1 - alpha / 2) {
			*hi = k;
			return;
		}
	}
}

double bloom_fpr(double m, double n, double k)
{
	return pow(1 - exp(-k * n / m), k);
}

double bloom_fpr_exact(double m, double n, double k)
{
	return pow(-expm1(k * n * log1p(-1 / m)), k);
}

double blocked_fpr(double m, double n, double k)
{
	double lambda = SIEVE_BLOCK_BITS * n / m, sum = 0, w;
	double miss = log1p(-1.0 / SIEVE_BLOCK_BITS);	/* ln(1 - 1/512) */
	double from = floor(lambda - 40 * sqrt(lambda) - 50);
	double to = ceil(lambda + 40 * sqrt(lambda) + 50);
	double i;

	if (n == 0)
		return 0;
	for (i = from > 0 ? from : 0; i <= to; i++) {
		w = exp(-lambda + i * log(lambda) - lgamma(i + 1));
		sum += w * pow(-expm1(i * k * miss), k);
	}
	return sum;
}

/*
 * The exact expectation behind blocked_fpr(): a block holding i keys has
 * had i * k bits drawn uniformly with replacement, and its number x of
 * distinct set bits follows the occupancy distribution, carried here one
 * draw at a time. A query's rate in that block is E[(x / 512)^k], which
 * exceeds (E[x] / 512)^k, the documented formula's term, by Jensen's
 * inequality. @block_sd (if not NULL) gets the standard deviation of one
 * block's rate (x / 512)^k over random blocks.
 */
double blocked_fpr_exact(double m, double n, double k, double *block_sd)
{
	const int b = SIEVE_BLOCK_BITS;
	double lambda = b * n / m, mean = 0, square = 0;
	double dist[SIEVE_BLOCK_BITS + 1] = { 1 }, next[SIEVE_BLOCK_BITS + 1];
	double rate[SIEVE_BLOCK_BITS + 1], w, v, v2;
	int x, i, d, imax = lambda + 40 * sqrt(lambda) + 50;

	for (x = 0; x <= b; x++)
		rate[x] = pow((double)x / b, k);
	for (i = 0; i <= imax; i++) {
		w = exp(-lambda + i * log(lambda) - lgamma(i + 1));
		for (v = 0, v2 = 0, x = 0; x <= b; x++) {
			v += dist[x] * rate[x];
			v2 += dist[x] * rate[x] * rate[x];
		}
		mean += w * v;
		square += w * v2;
		/* One more key: k more draws. */
		for (d = 0; d < k; d++) {
			next[0] = 0;
			for (x = 1; x <= b; x++)
				next[x] = dist[x] * x / b + dist[x - 1] * (b - x + 1) / b;
			next[0] = 0;
			memcpy(dist, next, sizeof(dist));
		}
	}
	if (block_sd)
		*block_sd = sqrt(fmax(0, square - mean * mean));
	return mean;
}

double cuckoo_fpr(double nbuckets, double fp_bits, double n)
{
	double slots = nbuckets * SIEVE_CUCKOO_SLOTS;
	double load = n < slots ? n / slots : 1;

	return -expm1(2 * SIEVE_CUCKOO_SLOTS * log1p(-load / (exp2(fp_bits) - 1)));
}
