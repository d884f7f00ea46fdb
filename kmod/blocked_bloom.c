// SPDX-License-Identifier: GPL-2.0
/*
 * Blocked Bloom filter (Putze, Sanders and Singler, "Cache-, hash- and
 * space-efficient Bloom filters"): a key picks one 512-bit block, a 64-byte
 * cache line, and all k of its probes fall inside it, so an operation costs
 * one cache miss instead of k. The price is a higher false-positive rate at
 * the same size, since blocks fill unevenly; sizing.c pays it with a few
 * more bits per key.
 */
#include "filter.h"
#include "fixedpoint.h"

#define BLOCK_BYTES	(SIEVE_BLOCK_BITS / 8)
#define BLOCK_WORDS	(SIEVE_BLOCK_BITS / BITS_PER_LONG)

struct sieve_blocked_bloom {
	struct sieve_filter filter;
	u64 nblocks;
	unsigned long *blocks;	/* into storage, aligned to a cache line */
	u8 storage[];
};

static struct sieve_blocked_bloom *to_blocked(const struct sieve_filter *f)
{
	return container_of(f, struct sieve_blocked_bloom, filter);
}

/*
 * The block comes from the top bits of the hash, by multiply-shift; the
 * positions inside it from the low 32 bits, stepped by a multiplicative
 * congruential generator whose top 9 bits give each probe. Every 32-bit
 * value yields its own sequence of probes, so two keys that share a block
 * almost never share a whole pattern, and probes are independent enough
 * for the with-replacement formula that sizing.c relies on.
 */
static unsigned long *key_block(const struct sieve_blocked_bloom *bb, u64 h)
{
	u64 block = mul_u64_u64_shr(h, bb->nblocks, 64);

	return bb->blocks + block * BLOCK_WORDS;
}

#define PROBE_MULTIPLIER	0x9e3779b1U	/* odd: a bijection of u32 */

static inline u32 next_probe(u32 *x)
{
	*x *= PROBE_MULTIPLIER;
	return *x >> (32 - 9);
}

static int blocked_add(struct sieve_filter *f, const void *key, u32 len)
{
	u64 h = sieve_hash64(key, len, f->geo.seed);
	unsigned long *block = key_block(to_blocked(f), h);
	u32 x = (u32)h | 1, i;
	bool present = true;

	for (i = 0; i < f->geo.nhashes; i++) {
		u32 bit = next_probe(&x);

		if (!test_bit(bit, block) && !test_and_set_bit(bit, block))
			present = false;
	}
	return present;
}

static bool blocked_contains(const struct sieve_filter *f, const void *key, u32 len)
{
	u64 h = sieve_hash64(key, len, f->geo.seed);
	const unsigned long *block = key_block(to_blocked(f), h);
	u32 x = (u32)h | 1, i;

	for (i = 0; i < f->geo.nhashes; i++)
		if (!test_bit(next_probe(&x), block))
			return false;
	return true;
}

static u32 blocked_count(const struct sieve_filter *f, const void *key, u32 len)
{
	return blocked_contains(f, key, len);
}

static int blocked_del(struct sieve_filter *f, const void *key, u32 len)
{
	return -EOPNOTSUPP;
}

static void blocked_clear(struct sieve_filter *f)
{
	memset(to_blocked(f)->blocks, 0, f->table_bytes);
}

static int blocked_merge(struct sieve_filter *dst, const struct sieve_filter *src)
{
	sieve_words_or(to_blocked(dst)->blocks, to_blocked(src)->blocks,
		       dst->table_bytes / sizeof(unsigned long));
	return 0;
}

static u32 block_weight(const unsigned long *block)
{
	u32 i, set = 0;

	for (i = 0; i < BLOCK_WORDS; i++)
		set += hweight_long(READ_ONCE(block[i]));
	return set;
}

/*
 * The Bloom estimate, block by block: a block with x of its 512 bits set
 * holds about -(512 / k) * ln(1 - x / 512) keys. Summing per block instead
 * of using the global fill matters: blocks fill unevenly, and the estimate
 * is convex in x. A full block is read as one bit short of full.
 */
static u64 blocked_estimate_items(const struct sieve_filter *f)
{
	const struct sieve_blocked_bloom *bb = to_blocked(f);
	u64 b, log_ratios = 0;	/* Q32 sum of log2(512 / (512 - x)) */

	for (b = 0; b < bb->nblocks; b++) {
		u32 set = min(block_weight(bb->blocks + b * BLOCK_WORDS),
			      (u32)SIEVE_BLOCK_BITS - 1);

		log_ratios += fx32_log2(SIEVE_BLOCK_BITS) - fx32_log2(SIEVE_BLOCK_BITS - set);
		if ((b & 1023) == 1023)
			cond_resched();
	}
	return div64_u64(mul_u64_u64_shr(log_ratios, FX32_LN2 * SIEVE_BLOCK_BITS, 64),
			 f->geo.nhashes);
}

/* A query lands in a uniformly chosen block: average (x / 512)^k over them. */
static u32 blocked_fpr_ppb(const struct sieve_filter *f)
{
	const struct sieve_blocked_bloom *bb = to_blocked(f);
	u64 b, sum = 0;		/* Q32 */

	for (b = 0; b < bb->nblocks; b++) {
		u64 fill = (u64)block_weight(bb->blocks + b * BLOCK_WORDS) << (62 - 9);

		sum += fx62_pow(fill, f->geo.nhashes) >> 30;
		if ((b & 1023) == 1023)
			cond_resched();
	}
	return (u32)mul_u64_u64_shr(div64_u64(sum, bb->nblocks), SIEVE_PPB, 32);
}

static const struct sieve_filter_ops sieve_blocked_bloom_ops = {
	.add = blocked_add,
	.contains = blocked_contains,
	.del = blocked_del,
	.count = blocked_count,
	.clear = blocked_clear,
	.merge = blocked_merge,
	.estimate_items = blocked_estimate_items,
	.fpr_ppb = blocked_fpr_ppb,
};

int sieve_blocked_bloom_check(const struct sieve_geometry *geo, u64 *table_bytes)
{
	if (geo->nbits < SIEVE_BLOCK_BITS || geo->nbits % SIEVE_BLOCK_BITS ||
	    geo->nhashes < 1 || geo->nhashes > SIEVE_MAX_HASHES ||
	    geo->nbuckets || geo->fp_bits)
		return -EINVAL;
	if (geo->nbits > SIEVE_MAX_TABLE_BYTES * 8)
		return -E2BIG;
	*table_bytes = geo->nbits / 8;
	return 0;
}

struct sieve_filter *sieve_blocked_bloom_alloc(const struct sieve_geometry *geo,
					       u64 table_bytes)
{
	struct sieve_blocked_bloom *bb;
	uintptr_t aligned;
	u64 bytes;

	/* Room to align the first block on a cache line. */
	if (check_add_overflow((u64)sizeof(*bb) + BLOCK_BYTES - 1, table_bytes, &bytes))
		return NULL;
	bb = sieve_zalloc(bytes);
	if (!bb)
		return NULL;
	aligned = ((uintptr_t)bb->storage + BLOCK_BYTES - 1) & ~(uintptr_t)(BLOCK_BYTES - 1);
	bb->blocks = (unsigned long *)aligned;
	bb->nblocks = geo->nbits / SIEVE_BLOCK_BITS;
	bb->filter.ops = &sieve_blocked_bloom_ops;
	bb->filter.alloc_bytes = bytes;
	return &bb->filter;
}
