/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The userspace unit suite: the shared core cases (tests/cases/) plus the
 * tests that only make sense in userspace (millions of keys, statistics in
 * double precision against libm). All of them are struct sieve_test_case,
 * run by runner.c, one cmocka test each.
 */
#ifndef SIEVE_UNIT_H
#define SIEVE_UNIT_H

#include <stdio.h>

#include "../cases/harness.h"

/* What a case records: its failures, kept to print when it ends. */
struct sieve_test {
	unsigned int nfail;
	size_t len;
	char log[16384];
};

/* Records a failure with a printf-style message. */
void sieve_test_failf(struct sieve_test *t, const char *file, int line,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Checks @cond; if false, records the formatted message and goes on. */
#define CHECKF(t, cond, ...) \
	do { if (!(cond)) sieve_test_failf(t, __FILE__, __LINE__, __VA_ARGS__); } while (0)

/* Prints an informational line (measured numbers) under the test's name. */
void sieve_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The userspace-only case tables, one per file. */
#define SIEVE_CASE_TABLE(name) \
	extern const struct sieve_test_case name[]; \
	extern const unsigned int name##_n
SIEVE_CASE_TABLE(sieve_scale_cases);
SIEVE_CASE_TABLE(sieve_fpr_cases);
SIEVE_CASE_TABLE(sieve_hash_cases);
SIEVE_CASE_TABLE(sieve_sizing_cases);
SIEVE_CASE_TABLE(sieve_estimate_cases);
SIEVE_CASE_TABLE(sieve_libsieve_cases);
SIEVE_CASE_TABLE(sieve_layers_cases);
SIEVE_CASE_TABLE(sieve_feed_cases);
SIEVE_CASE_TABLE(sieve_cpe_cases);
SIEVE_CASE_TABLE(sieve_build_cases);
SIEVE_CASE_TABLE(sieve_store_cases);
SIEVE_CASE_TABLE(sieve_blocked_cases);
SIEVE_CASE_TABLE(sieve_digest_cases);
SIEVE_CASE_TABLE(sieve_metrics_cases);
SIEVE_CASE_TABLE(sieve_escape_cases);
SIEVE_CASE_TABLE(sieve_fleet_cases);
SIEVE_CASE_TABLE(sieve_settings_cases);
SIEVE_CASE_TABLE(sieve_http_cases);
SIEVE_CASE_TABLE(sieve_crowdsec_cases);

/* ---- Keys: key (set, i) is a pure function of both ------------------------ */

#define UKEY_MAX	2048


/*
 * The bytes of key (@set, @i), @len of them. The first 8 bytes are a
 * bijection of (set, i), so keys of 8 bytes or more never repeat.
 */
static inline void unit_key_fill(u8 *buf, u32 set, u64 i, u32 len)
{
	u64 x = sieve_test_mix64((u64)set << 40 ^ i);
	u32 off;

	for (off = 0; off < len; off += 8) {
		u64 le = htole64(x);

		memcpy(buf + off, &le, len - off < 8 ? len - off : 8);
		x = sieve_test_mix64(x + 0x9e3779b97f4a7c15ULL);
	}
}

/* Distinct keys of 8 to 32 bytes: the negative queries of the FPR tests. */
static inline u32 unit_key_distinct(u8 *buf, u32 set, u64 i)
{
	u32 len = 8 + (u32)(sieve_test_mix64(i ^ (u64)set << 48 ^ 0x51) >> 59);	/* 8..39 */

	unit_key_fill(buf, set, i, len);
	return len;
}

/* ---- Statistics (stats.c) ------------------------------------------------- */

/*
 * The central (1 - @alpha) interval of Binomial(@trials, @p), exact (summed
 * in log space): P(X < *lo) <= alpha / 2 and P(X > *hi) <= alpha / 2.
 */
void binom_interval(u64 trials, double p, double alpha, u64 *lo, u64 *hi);

/* Bloom: (1 - e^(-kn/m))^k, and the exact (1 - (1 - 1/m)^(kn))^k. */
double bloom_fpr(double m, double n, double k);
double bloom_fpr_exact(double m, double n, double k);

/*
 * Blocked Bloom, the bound sizing.c uses: sum over i of Poisson(i; lambda) *
 * (1 - (1 - k/512)^i)^k with lambda = 512 n / m. A key sets a random
 * k-subset of its block, so a bit stays clear after i keys with
 * probability (1 - k/512)^i, and the bits are negatively associated: the
 * k bits of a query are all set with at most the product of their
 * probabilities. An upper bound on the expected rate.
 */
double blocked_fpr_bound(double m, double n, double k);

/* C(x, k) / C(512, k): a block with x bits set answers a foreign query yes. */
double blocked_block_rate(int x, int k);

/*
 * Blocked Bloom, exactly: the expected rate when each key sets a uniformly
 * random k-subset of its block (stats.c explains); @block_sd: the spread
 * of one block's rate.
 */
double blocked_fpr_exact(double m, double n, double k, double *block_sd);

/* Cuckoo: 1 - (1 - alpha / (2^f - 1))^(2b), alpha = min(1, n / (b * nbuckets)). */
double cuckoo_fpr(double nbuckets, double fp_bits, double n);

#endif /* SIEVE_UNIT_H */
