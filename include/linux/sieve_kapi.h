/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sieve's in-kernel API: other modules use the filters of /dev/sieve's
 * registry by name or id (exported GPL-only by sieve.ko).
 *
 * A filter is found with sieve_get() or sieve_get_id(), which take a
 * reference; sieve_put() drops it. A filter destroyed through /dev/sieve
 * meanwhile loses its name and id at once but keeps working for holders
 * of a reference until the last one is dropped.
 *
 * Contexts:
 * - sieve_get(), sieve_get_id(), sieve_put(): process context (they may
 *   sleep; the last put frees the tables).
 * - sieve_contains(): any context but hardirq and NMI.
 * - sieve_add(), sieve_delete(): process or softirq context. A scalable
 *   filter grows only in process context (in_task()), where sieve_add()
 *   may sleep: on a scalable filter, call it from task context only where
 *   sleeping is allowed (no spinlock held, outside rcu_read_lock() and
 *   local_bh_disable() sections), or from softirq, where a full scalable
 *   filter behaves as if at its last layer.
 *
 * Keys are 1 to SIEVE_MAX_KEY_LEN bytes (else -EINVAL).
 *
 * sieve_contains() takes no lock and its time is bounded: Bloom types read
 * the bits atomically; a cuckoo query retries a miss that overlapped a
 * write (the filter's seqcount), at most 8 times, then answers "may be
 * present", so a write storm can cause false positives, never false
 * negatives. A filter's table may be replaced under a holder of a
 * reference (SIEVE_IOC_EXCHANGE, which keeps its name and id): each query
 * answers from the old table or from the new one.
 *
 * BPF programs (XDP and TC; kmod/kfunc.c, unstable like every kfunc, built
 * where sieve.ko has BTF: see the README) reach the same filters through
 * kfuncs, declared for programs in bpf/sieve_kfuncs.bpf.h:
 *
 *   struct sieve *bpf_sieve_acquire(u32 id);        KF_ACQUIRE | KF_RET_NULL
 *   void bpf_sieve_release(struct sieve *s);        KF_RELEASE
 *   int bpf_sieve_contains(struct sieve *s, const void *key, u32 key__sz);
 *                                                   KF_TRUSTED_ARGS
 *   int bpf_sieve_contains_id(u32 id, const void *key, u32 key__sz);
 *
 * What the verifier enforces, and what they promise:
 * - A filter from bpf_sieve_acquire() must be checked against NULL and
 *   released before the program ends; bpf_sieve_contains() takes only such
 *   a reference. A filter destroyed meanwhile stays usable until then;
 *   its last release frees it from a work item, never in the program.
 * - @key points at @key__sz readable bytes (stack, map value, packet), a
 *   size the verifier can bound; a size of 0 or above SIEVE_MAX_KEY_LEN
 *   gives -EINVAL at run time, an unknown id -ENOENT (contains_id).
 * - None sleeps, none takes a lock (references are atomics, the queries
 *   are as sieve_contains() above), and none loops without bound: safe in
 *   softirq, under rcu_read_lock(), and on many CPUs at once.
 * - Queries count in the filter's statistics as any other.
 *
 * Kernel code may also make and destroy registered filters
 * (sieve_create_kernel(), sieve_destroy_kernel(), process context): they
 * are filters like those of /dev/sieve, listed and usable there by name.
 */
#ifndef _LINUX_SIEVE_KAPI_H
#define _LINUX_SIEVE_KAPI_H

#include <linux/types.h>
#include <uapi/linux/sieve.h>

struct sieve;

/* A reference to the filter called @name: ERR_PTR(-ENOENT) if none. */
struct sieve *sieve_get(const char *name);
/* A reference to filter @id: ERR_PTR(-ENOENT) if none. */
struct sieve *sieve_get_id(u32 id);
void sieve_put(struct sieve *s);

/*
 * Adds a key (@flags: enum sieve_add_flags): 1 if it may have been present
 * already (a dedup may drop it), 0 if it is new, -ENOSPC a cuckoo filter
 * is full, -ENOMEM a scalable filter could not grow, -EINVAL bad flags or
 * length.
 */
int sieve_add(struct sieve *s, const void *key, u32 len, u32 flags);
/* 1 if the key may be present, 0 if it certainly is not, -EINVAL. */
int sieve_contains(struct sieve *s, const void *key, u32 len);
/* 1 a copy was removed, 0 none was stored, -EOPNOTSUPP a Bloom type. */
int sieve_delete(struct sieve *s, const void *key, u32 len);

/**
 * struct sieve_kernel_create - a filter for sieve_create_kernel()
 * @name: 1 to 31 bytes of [A-Za-z0-9._-], NUL-terminated.
 * @type: enum sieve_filter_type.
 * @flags: %SIEVE_CREATE_SCALABLE and %SIEVE_CREATE_SEED only: no file owns
 *	a kernel caller's filter, so none is ephemeral, and the geometry is
 *	always sized from @capacity and @fpp_ppb.
 * @capacity: keys the filter holds at @fpp_ppb (scalable: its first
 *	layer), 1 to %SIEVE_MAX_CAPACITY.
 * @fpp_ppb: target false-positive rate in parts per billion, 1 to
 *	%SIEVE_PPB - 1.
 * @seed: with %SIEVE_CREATE_SEED, the hash seed; else 0 (a random seed).
 * @growth: scalable: %SIEVE_MIN_GROWTH to %SIEVE_MAX_GROWTH, 0 for
 *	%SIEVE_DEFAULT_GROWTH; else 0.
 * @max_layers: scalable: %SIEVE_MIN_LAYERS to %SIEVE_MAX_LAYERS, 0 for
 *	%SIEVE_DEFAULT_LAYERS; else 0.
 *
 * The fields mean what they mean in struct sieve_create (SIEVE_IOC_CREATE),
 * checked by the same code.
 */
struct sieve_kernel_create {
	const char *name;
	u32 type;
	u32 flags;
	u64 capacity;
	u32 fpp_ppb;
	u32 seed;
	u32 growth;
	u32 max_layers;
};

/*
 * Registers a new filter, as SIEVE_IOC_CREATE does: 0 and its id in *@id,
 * or -EINVAL (a field out of range), -ENAMETOOLONG (no NUL in the first
 * %SIEVE_NAME_MAX bytes of the name), -EEXIST (the name is taken), -ENOSPC
 * (max_filters), -E2BIG (the table would be too large), -ENOMEM.
 */
int sieve_create_kernel(const struct sieve_kernel_create *c, u32 *id);
/*
 * Unregisters filter @id, as SIEVE_IOC_DESTROY does: 0 or -ENOENT. Holders
 * of a reference keep using it until their sieve_put().
 */
int sieve_destroy_kernel(u32 id);
/* Bytes counted against max_memory_mb now, for leak checks. */
u64 sieve_memory_in_use(void);

#endif /* _LINUX_SIEVE_KAPI_H */
