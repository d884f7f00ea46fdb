/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * sieve: probabilistic set-membership filters in the kernel.
 *
 * What userspace and the kernel must agree on: the filter types, their
 * geometry and the flags of their operations.
 */
#ifndef _UAPI_LINUX_SIEVE_H
#define _UAPI_LINUX_SIEVE_H

#include <linux/types.h>

/**
 * enum sieve_filter_type - the filter families sieve implements
 * @SIEVE_BLOOM: classic Bloom filter, m bits, k probes spread over the bitmap.
 * @SIEVE_BLOCKED_BLOOM: Bloom filter whose k probes for a key all fall in one
 *	64-byte block (one cache miss per operation, slightly more bits/key).
 * @SIEVE_CUCKOO: cuckoo filter, buckets of 4 fingerprints; supports delete.
 */
enum sieve_filter_type {
	SIEVE_BLOOM = 1,
	SIEVE_BLOCKED_BLOOM = 2,
	SIEVE_CUCKOO = 3,
};

/**
 * enum sieve_add_flags - how an add treats a key that may be present
 * @SIEVE_ADD_IF_ABSENT: cuckoo: store nothing if the key may be present
 *	already (a set, for dedup); without it a cuckoo filter counts copies
 *	(a multiset, up to 8 of a key). Bloom types always behave so: an add
 *	is a test-and-set.
 */
enum sieve_add_flags {
	SIEVE_ADD_IF_ABSENT = 1U << 0,
};
#define SIEVE_ADD_FLAGS_ALL	SIEVE_ADD_IF_ABSENT

/* Probes per key a Bloom-type filter may use. */
#define SIEVE_MAX_HASHES	32
/* Bits in one blocked-Bloom block: one 64-byte cache line. */
#define SIEVE_BLOCK_BITS	512
/* Fingerprints per cuckoo bucket. */
#define SIEVE_CUCKOO_SLOTS	4
/* Fingerprint widths a cuckoo filter may use. */
#define SIEVE_CUCKOO_MIN_FP_BITS	4
#define SIEVE_CUCKOO_MAX_FP_BITS	16
/* Largest table one filter may hold, in bytes (1 GiB). */
#define SIEVE_MAX_TABLE_BYTES	(1ULL << 30)
/* Largest capacity the sizing accepts. */
#define SIEVE_MAX_CAPACITY	(1ULL << 40)
/* False-positive rates are given in parts per billion. */
#define SIEVE_PPB		1000000000U

/**
 * struct sieve_geometry - the shape of one filter
 * @type: an enum sieve_filter_type value.
 * @seed: seed of every hash of the filter; filters can be merged only if
 *	their seeds are equal.
 * @nbits: Bloom: bits in the bitmap, at least 64 (any value, not only powers
 *	of two). Blocked Bloom: a multiple of %SIEVE_BLOCK_BITS. Cuckoo: 0.
 * @nbuckets: Cuckoo: buckets, a power of two, at least 2. Others: 0.
 * @nhashes: Bloom types: probes per key, 1 to %SIEVE_MAX_HASHES. Cuckoo: 0.
 * @fp_bits: Cuckoo: fingerprint bits, %SIEVE_CUCKOO_MIN_FP_BITS to
 *	%SIEVE_CUCKOO_MAX_FP_BITS, packed tightly (12 bits cost 12 bits).
 *	Others: 0.
 *
 * A field that does not apply to the type must be 0. A table larger than
 * %SIEVE_MAX_TABLE_BYTES is refused with -E2BIG.
 */
struct sieve_geometry {
	__u32 type;
	__u32 seed;
	__u64 nbits;
	__u64 nbuckets;
	__u32 nhashes;
	__u32 fp_bits;
};

#endif /* _UAPI_LINUX_SIEVE_H */
