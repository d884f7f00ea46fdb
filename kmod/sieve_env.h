/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter cores' environment in the kernel.
 *
 * The cores (bloom.c, blocked_bloom.c, cuckoo.c, sizing.c, filter.c,
 * snapshot.c, create.c) are written against the kernel's own API and
 * compiled unchanged into sieve.ko and into userspace (libsieve, the tests,
 * the benchmark). They include <sieve_env.h>: this file in the kernel
 * (Kbuild puts kmod/ on the include path), where it only gathers includes;
 * userspace/lib/sieve_env.h in userspace, which provides the few kernel
 * helpers the cores use over libc, with the same names and semantics.
 */
#ifndef SIEVE_ENV_H
#define SIEVE_ENV_H

#ifndef __KERNEL__
#error "kmod/sieve_env.h is the kernel's: userspace builds put userspace/lib before kmod on -I"
#endif

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
 * namespace is a string.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define SIEVE_EXPORT_INTERNAL(sym)	EXPORT_SYMBOL_NS_GPL(sym, "SIEVE_INTERNAL")
#define SIEVE_IMPORT_INTERNAL()		MODULE_IMPORT_NS("SIEVE_INTERNAL")
#else
#define SIEVE_EXPORT_INTERNAL(sym)	EXPORT_SYMBOL_NS_GPL(sym, SIEVE_INTERNAL)
#define SIEVE_IMPORT_INTERNAL()		MODULE_IMPORT_NS(SIEVE_INTERNAL)
#endif

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
