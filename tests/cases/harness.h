/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter-core test cases in core_cases.c run twice: in userspace under
 * cmocka (tests/unit/) and inside the kernel in the VM (tests/vm/). Each
 * environment provides struct sieve_test and sieve_test_fail(); a failed
 * expectation is recorded and the case goes on, so it still frees what it
 * allocated. A case passes when it recorded no failure.
 */
#ifndef SIEVE_TEST_HARNESS_H
#define SIEVE_TEST_HARNESS_H

#include "../../kmod/filter.h"

struct sieve_test;

void sieve_test_fail(struct sieve_test *t, const char *file, int line,
		     const char *expr, long long a, long long b);

/* Checks one condition; on failure records it (with both values) and goes on. */
#define EXPECT_TRUE(t, cond) \
	do { if (!(cond)) sieve_test_fail(t, __FILE__, __LINE__, #cond, 0, 0); } while (0)
#define EXPECT_EQ(t, a, b) \
	do { long long _a = (long long)(a), _b = (long long)(b); \
	     if (_a != _b) sieve_test_fail(t, __FILE__, __LINE__, #a " == " #b, _a, _b); } while (0)

/* The splitmix64 finalizer: a bijection of u64 that mixes every bit, for keys. */
static inline u64 sieve_test_mix64(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

struct sieve_test_case {
	const char *name;
	void (*run)(struct sieve_test *t);
};

extern const struct sieve_test_case sieve_core_cases[];
extern const unsigned int sieve_core_ncases;
extern const struct sieve_test_case sieve_snapshot_cases[];
extern const unsigned int sieve_snapshot_ncases;
extern const struct sieve_test_case sieve_create_cases[];
extern const unsigned int sieve_create_ncases;

#endif /* SIEVE_TEST_HARNESS_H */
