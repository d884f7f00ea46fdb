/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one environment header of the filter cores.
 *
 * The cores (bloom.c, blocked_bloom.c, cuckoo.c, sizing.c, filter.c,
 * snapshot.c, create.c) are written against the kernel's own API and
 * compiled unchanged into sieve.ko and into userspace (libsieve, the tests,
 * the benchmark). In the kernel this header
 * only gathers includes; in userspace it provides the few kernel helpers the
 * cores use, with the same names and semantics.
 */
#ifndef SIEVE_ENV_H
#define SIEVE_ENV_H

#ifdef __KERNEL__

#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/atomic.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/prefetch.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/version.h>
#if BITS_PER_LONG != 64 || defined(__BIG_ENDIAN)
/* Tables are arrays of little-endian 64-bit words, the same in userspace. */
#error "sieve supports 64-bit little-endian kernels only"
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * sieve.ko exports plainly only its in-kernel API (<linux/sieve_kapi.h>);
 * what its test modules (tests/vm, tests/kunit, the benchmark module) call
 * besides goes into this namespace, which they import. Since 6.13 the
 * namespace is a string (before, a name the macros stringify):
 * EXPORT_SYMBOL_NS_GPL(sym, SIEVE_INTERNAL_NS).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define SIEVE_INTERNAL_NS		"SIEVE_INTERNAL"
#else
#define SIEVE_INTERNAL_NS		SIEVE_INTERNAL
#endif
#define SIEVE_IMPORT_INTERNAL()		MODULE_IMPORT_NS(SIEVE_INTERNAL_NS)

static inline void sieve_prefetch(const void *p, bool write)
{
	if (write)
		prefetchw(p);
	else
		prefetch(p);
}

/*
 * Tables are charged to the memory cgroup of the task that creates them;
 * their size is the caller's choice, so a failure is an errno, not a splat.
 */
static inline void *sieve_zalloc(size_t bytes)
{
	return kvzalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
}

static inline void sieve_free(const void *p)
{
	kvfree(p);
}

/* ORs @v into *@p so that bits other CPUs set meanwhile are kept. */
static inline void sieve_atomic_or(unsigned long v, unsigned long *p)
{
	atomic_long_or(v, (atomic_long_t *)p);
}

/*
 * ORs @v into *@p and returns the word's old value, atomically: the one
 * locked operation of an add per word it changes.
 */
static inline unsigned long sieve_fetch_or(unsigned long v, unsigned long *p)
{
	return atomic_long_fetch_or(v, (atomic_long_t *)p);
}

static inline u32 sieve_random_u32(void)
{
	return get_random_u32();
}

#ifdef SIEVE_COUNT_SCANS
typedef atomic_long_t sieve_scan_counter_t;
extern sieve_scan_counter_t sieve_table_scans;

static inline void sieve_count_scan(void)
{
	atomic_long_inc(&sieve_table_scans);
}

static inline unsigned long sieve_table_scans_read(void)
{
	return atomic_long_read(&sieve_table_scans);
}
#endif

#else /* userspace */

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#if __SIZEOF_LONG__ != 8 || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sieve supports 64-bit little-endian machines only"
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#include "jhash.h"	/* bit-identical port of <linux/jhash.h> */

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define DIV_ROUND_UP_ULL(n, d)	DIV_ROUND_UP((unsigned long long)(n), (d))
/*
 * Each argument evaluated once, as the kernel's; each macro's names its own,
 * so that clamp_t's max() inside min() shadows nothing.
 */
#define min(a, b)	({ __typeof__(a) _min_a = (a); __typeof__(b) _min_b = (b); \
			   _min_a < _min_b ? _min_a : _min_b; })
#define max(a, b)	({ __typeof__(a) _max_a = (a); __typeof__(b) _max_b = (b); \
			   _max_a > _max_b ? _max_a : _max_b; })
#define clamp_t(t, v, lo, hi)	min_t(t, max_t(t, v, lo), hi)
#define min_t(t, a, b)	min((t)(a), (t)(b))
#define max_t(t, a, b)	max((t)(a), (t)(b))
#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define check_mul_overflow(a, b, d)	__builtin_mul_overflow(a, b, d)
#define BITS_PER_LONG	(8 * (int)sizeof(long))
#define BIT_WORD(nr)	((nr) / BITS_PER_LONG)
#define BIT_MASK(nr)	(1UL << ((nr) % BITS_PER_LONG))
#define U32_MAX		UINT32_MAX
#define U64_MAX		UINT64_MAX
#define cond_resched()	do { } while (0)
#define might_sleep()	do { } while (0)
#define EXPORT_SYMBOL_NS_GPL(sym, ns)
#define SZ_1M		(1 << 20)

static inline bool test_bit(unsigned long nr, const unsigned long *addr)
{
	return (READ_ONCE(addr[BIT_WORD(nr)]) & BIT_MASK(nr)) != 0;
}

/* Atomic, like the kernel's: concurrent adds never lose a bit. */
static inline void sieve_atomic_or(unsigned long v, unsigned long *p)
{
	__atomic_fetch_or(p, v, __ATOMIC_RELAXED);
}

/* ORs @v into *@p and returns the word's old value, atomically, as the kernel's. */
static inline unsigned long sieve_fetch_or(unsigned long v, unsigned long *p)
{
	return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
}

static inline bool test_and_set_bit(unsigned long nr, unsigned long *addr)
{
	unsigned long mask = BIT_MASK(nr);

	return (__atomic_fetch_or(addr + BIT_WORD(nr), mask, __ATOMIC_SEQ_CST) & mask) != 0;
}

static inline unsigned int hweight_long(unsigned long w)
{
	return __builtin_popcountl(w);
}

static inline unsigned long __ffs(unsigned long word)
{
	return __builtin_ctzl(word);
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static inline bool is_power_of_2(unsigned long n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	return n <= 1 ? 1 : 1UL << fls64(n - 1);
}

#define ilog2(n)	(fls64(n) - 1)

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline u64 mul_u64_u64_shr(u64 a, u64 b, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * b) >> shift);
}

#define fallthrough	__attribute__((__fallthrough__))

static inline u32 get_unaligned_le32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline u64 get_unaligned_le64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline void put_unaligned_le64(u64 v, void *p)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline void sieve_prefetch(const void *p, bool write)
{
	if (write)
		__builtin_prefetch(p, 1);
	else
		__builtin_prefetch(p, 0);
}

static inline void *sieve_zalloc(size_t bytes)
{
	return calloc(1, bytes);
}

static inline void sieve_free(const void *p)
{
	free((void *)p);
}

static inline u32 sieve_random_u32(void)
{
	u32 v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		abort();	/* no entropy source at all: nothing sane to do */
	return v;
}

#ifdef SIEVE_COUNT_SCANS
typedef unsigned long sieve_scan_counter_t;
extern sieve_scan_counter_t sieve_table_scans;

static inline void sieve_count_scan(void)
{
	__atomic_fetch_add(&sieve_table_scans, 1, __ATOMIC_RELAXED);
}

static inline unsigned long sieve_table_scans_read(void)
{
	return __atomic_load_n(&sieve_table_scans, __ATOMIC_RELAXED);
}
#endif

#endif /* __KERNEL__ */

/*
 * Test builds (SIEVE_COUNT_SCANS) count the whole-table reads of the
 * summaries, so the tests can check that a report reads each table once.
 */
#ifndef SIEVE_COUNT_SCANS
static inline void sieve_count_scan(void)
{
}
#endif

#endif /* SIEVE_ENV_H */
