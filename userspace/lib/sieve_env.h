/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter cores' environment in userspace: the few kernel helpers the
 * cores use, with the same names and semantics, over libc.
 *
 * The cores (kmod/bloom.c, blocked_bloom.c, cuckoo.c, sizing.c, filter.c,
 * snapshot.c, create.c) are written against the kernel's own API and
 * compiled unchanged into sieve.ko and into userspace (libsieve, the tests,
 * the benchmark). They include <sieve_env.h>: the kernel's build finds
 * kmod/sieve_env.h, which only gathers the kernel's includes; userspace
 * builds put userspace/lib before kmod on the include path and find this
 * file, as tools/testing/radix-tree keeps the shims that build lib/xarray.c
 * in userspace outside lib/. So kmod/ never names a userspace file.
 */
#ifndef SIEVE_ENV_H
#define SIEVE_ENV_H

#ifdef __KERNEL__
#error "userspace/lib/sieve_env.h is the cores' userspace environment; sieve.ko uses kmod's"
#endif


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
/* Each argument evaluated once, as the kernel's. */
#define min(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a > _b ? _a : _b; })
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
#define SIEVE_EXPORT_INTERNAL(sym)
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
