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

/* The Poisson weight of @i keys in a block holding @lambda on average. */
static double poisson(double lambda, double i)
{
	return exp(-lambda + i * log(lambda) - lgamma(i + 1));
}

/* Block loads worth summing over: beyond 40 standard deviations the weights are < 1e-300. */
static void poisson_range(double lambda, int *from, int *to)
{
	double lo = floor(lambda - 40 * sqrt(lambda) - 50);

	*from = lo > 0 ? (int)lo : 0;
	*to = (int)ceil(lambda + 40 * sqrt(lambda) + 50);
}

double blocked_fpr_bound(double m, double n, double k)
{
	double lambda = SIEVE_BLOCK_BITS * n / m, sum = 0;
	double clear = log1p(-k / SIEVE_BLOCK_BITS);	/* ln(1 - k/512) */
	int i, from, to;

	if (n == 0)
		return 0;
	poisson_range(lambda, &from, &to);
	for (i = from; i <= to; i++)
		sum += poisson(lambda, i) * pow(-expm1(i * clear), k);
	return sum;
}

double blocked_block_rate(int x, int k)
{
	double rate = 1;
	int j;

	if (x < k)
		return 0;
	for (j = 0; j < k; j++)
		rate *= (double)(x - j) / (SIEVE_BLOCK_BITS - j);
	return rate;
}

static double log_choose(int a, int b)
{
	return lgamma(a + 1.0) - lgamma(b + 1.0) - lgamma(a - b + 1.0);
}

/*
 * The exact expectation behind blocked_fpr_bound(). A key sets a uniformly
 * random k-subset of its block, so of the k bits it draws, the number d
 * that were clear when x of the 512 were set is hypergeometric:
 * P(x -> x + d) = C(512 - x, d) C(x, k - d) / C(512, k). The distribution
 * of x is carried key by key through that chain, weighted by the Poisson
 * number of keys per block; a query probes a random k-subset too, so a
 * block with x bits set answers it yes with C(x, k) / C(512, k). That is
 * at most (x / 512)^k, and the bits of a block are negatively associated,
 * so the expectation lies below the bound: how far, the unit tests print.
 * @block_sd (if not NULL) gets the standard deviation of one block's rate
 * over random blocks.
 */
double blocked_fpr_exact(double m, double n, double k, double *block_sd)
{
	enum { B = SIEVE_BLOCK_BITS };
	double (*step)[SIEVE_MAX_HASHES + 1] = calloc(B + 1, sizeof(*step)); /* P(x -> x + d) */
	double dist[B + 1] = { 1 }, next[B + 1], rate[B + 1];
	double lambda = B * n / m, mean = 0, square = 0, w, v, v2, row;
	int x, i, d, from, to, kk = (int)k;

	if (!step)
		abort();
	for (x = 0; x <= B; x++) {
		rate[x] = blocked_block_rate(x, kk);
		for (row = 0, d = 0; d <= kk; d++) {
			step[x][d] = d <= B - x && kk - d <= x ?
				exp(log_choose(B - x, d) + log_choose(x, kk - d) - log_choose(B, kk)) : 0;
			row += step[x][d];
		}
		for (d = 0; d <= kk; d++)	/* rows sum to 1 but for rounding */
			step[x][d] /= row;
	}
	poisson_range(lambda, &from, &to);
	for (i = 0; n > 0 && i <= to; i++) {
		if (i >= from) {
			w = poisson(lambda, i);
			for (v = 0, v2 = 0, x = 0; x <= B; x++) {
				v += dist[x] * rate[x];
				v2 += dist[x] * rate[x] * rate[x];
			}
			mean += w * v;
			square += w * v2;
		}
		/* One more key. */
		memset(next, 0, sizeof(next));
		for (x = 0; x <= B; x++)
			if (dist[x] > 0)
				for (d = 0; d <= kk && x + d <= B; d++)
					next[x + d] += dist[x] * step[x][d];
		memcpy(dist, next, sizeof(dist));
	}
	free(step);
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
