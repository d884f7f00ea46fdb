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

/* sieve_filter_destroy() frees the filter through its head. */
static_assert(offsetof(struct sieve_blocked_bloom, filter) == 0);

static struct sieve_blocked_bloom *to_blocked(const struct sieve_filter *f)
{
	return container_of(f, struct sieve_blocked_bloom, filter);
}

/* The block: multiply-shift of the top bits of the hash. */
static unsigned long *key_block(const struct sieve_blocked_bloom *bb, u64 h)
{
	u64 block = mul_u64_u64_shr(h, bb->nblocks, 64);

	return bb->blocks + block * BLOCK_WORDS;
}

#define PATTERN_MULTIPLIER	0x9e3779b97f4a7c15ULL	/* odd: a bijection of u64 */

/*
 * The k bits of a key inside its block: k distinct positions, a uniformly
 * random k-subset of the 512 (Floyd's sampling: exactly k draws, each
 * from a multiplicative congruential sequence seeded by the whole 64-bit
 * hash). The seed must be the whole hash: with 2^31 patterns, a query
 * sharing its block and pattern with one of the block's keys would add
 * about keys-per-block / 2^31 to the false-positive rate, several times a
 * target of 1e-9.
 *
 * Distinct, uniform subsets are what make sizing.c's rate a bound and not
 * an approximation: with keys setting random k-subsets, the events "bit j
 * is set" are negatively associated, so the k distinct bits of a query are
 * all set with probability at most the product of their marginals,
 * (1 - (1 - k/512)^i)^k in a block holding i keys.
 */
/* Draw number @j of Floyd's sampling: a position not in @pattern yet. */
static u32 pattern_next(u64 *x, u32 j, unsigned long pattern[BLOCK_WORDS])
{
	u32 pick;

	*x *= PATTERN_MULTIPLIER;
	pick = (u32)mul_u64_u64_shr(*x, j + 1, 64);	/* uniform in [0, j] */
	if (pattern[BIT_WORD(pick)] & BIT_MASK(pick))
		pick = j;
	pattern[BIT_WORD(pick)] |= BIT_MASK(pick);
	return pick;
}

static void key_pattern(u64 h, u32 k, unsigned long pattern[BLOCK_WORDS])
{
	u64 x = h | 1;
	u32 j;

	memset(pattern, 0, BLOCK_BYTES);
	for (j = SIEVE_BLOCK_BITS - k; j < SIEVE_BLOCK_BITS; j++)
		pattern_next(&x, j, pattern);
}

static int blocked_add(struct sieve_filter *f, u64 h, u32 flags)
{
	unsigned long *block = key_block(to_blocked(f), h);
	unsigned long pattern[BLOCK_WORDS];
	bool present = true;
	u32 w;

	key_pattern(h, f->geo.nhashes, pattern);
	for (w = 0; w < BLOCK_WORDS; w++) {
		unsigned long missing = pattern[w] & ~READ_ONCE(block[w]);

		/* Only bits not yet set cost an atomic operation. */
		while (missing) {
			u32 bit = __ffs(missing);

			missing &= missing - 1;
			if (!test_and_set_bit(w * BITS_PER_LONG + bit, block))
				present = false;
		}
	}
	return present;
}

/* Bit by bit as they are drawn: most foreign keys miss within two. */
static bool blocked_contains(const struct sieve_filter *f, u64 h)
{
	const unsigned long *block = key_block(to_blocked(f), h);
	unsigned long pattern[BLOCK_WORDS] = { 0 };
	u64 x = h | 1;
	u32 j;

	for (j = SIEVE_BLOCK_BITS - f->geo.nhashes; j < SIEVE_BLOCK_BITS; j++)
		if (!test_bit(pattern_next(&x, j, pattern), block))
			return false;
	return true;
}

static u32 blocked_count(const struct sieve_filter *f, u64 h)
{
	return blocked_contains(f, h);
}

static int blocked_del(struct sieve_filter *f, u64 h)
{
	return -EOPNOTSUPP;
}

static void blocked_prefetch(const struct sieve_filter *f, u64 h, bool write)
{
	sieve_prefetch(key_block(to_blocked(f), h), write);
}

static void blocked_clear(struct sieve_filter *f)
{
	sieve_zero(to_blocked(f)->blocks, f->table_bytes);
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

/* 1 / (512 - j) in Q62, for the k factors of a block's exact rate. */
#define INV_LEFT(j)	(FX62_ONE / (SIEVE_BLOCK_BITS - (j)))
#define INV_LEFT4(j)	INV_LEFT(j), INV_LEFT(j + 1), INV_LEFT(j + 2), INV_LEFT(j + 3)
static const u64 inv_left[SIEVE_MAX_HASHES] = {
	INV_LEFT4(0), INV_LEFT4(4), INV_LEFT4(8), INV_LEFT4(12),
	INV_LEFT4(16), INV_LEFT4(20), INV_LEFT4(24), INV_LEFT4(28),
};

/*
 * A query lands in a uniformly chosen block and probes a random k-subset:
 * with x bits set it is a false positive with probability
 * C(x, k) / C(512, k) = prod (x - j) / (512 - j), in Q32.
 */
static u64 block_fpr(const struct sieve_filter *f, u32 set)
{
	u64 rate = FX62_ONE;
	u32 j;

	if (set < f->geo.nhashes)
		return 0;
	for (j = 0; j < f->geo.nhashes; j++)
		rate = fx62_mul(rate, (set - j) * inv_left[j]);
	return rate >> 30;
}

/*
 * Every figure from one read of the blocks, each figure summed per block:
 *  - items: keys set random k-subsets, so a bit stays clear after i keys
 *    with probability (1 - k/512)^i: a block with x bits set holds about
 *    log(1 - x/512) / log(1 - k/512) keys. Summing per block instead of
 *    using the global fill matters, since blocks fill unevenly and the
 *    estimate is convex in x. A full block is read as one bit short of
 *    full.
 *  - the rate: block_fpr() averaged over blocks, the exact rate of this
 *    very table.
 *  - the fill: bits set over all blocks.
 */
static void blocked_summarize(const struct sieve_filter *f, struct sieve_filter_summary *out)
{
	const struct sieve_blocked_bloom *bb = to_blocked(f);
	u64 per_key = fx32_log2(SIEVE_BLOCK_BITS) - fx32_log2(SIEVE_BLOCK_BITS - f->geo.nhashes);
	u64 b, log_ratios = 0;	/* Q32 sum of log2(512 / (512 - x)) */
	u64 fpr_sum = 0;	/* Q32 */
	u64 set_total = 0;

	sieve_count_scan();
	for (b = 0; b < bb->nblocks; b++) {
		u32 set = block_weight(bb->blocks + b * BLOCK_WORDS);
		u32 est = min(set, (u32)SIEVE_BLOCK_BITS - 1);

		set_total += set;
		log_ratios += fx32_log2(SIEVE_BLOCK_BITS) - fx32_log2(SIEVE_BLOCK_BITS - est);
		fpr_sum += block_fpr(f, set);
		if ((b & 1023) == 1023)
			cond_resched();
	}
	out->items = div64_u64(log_ratios + per_key / 2, per_key);
	out->fpr_ppb = (u32)mul_u64_u64_shr(div64_u64(fpr_sum, bb->nblocks), SIEVE_PPB, 32);
	out->fill_ppm = sieve_fill_ppm(set_total, f->geo.nbits);
}

static const struct sieve_filter_ops sieve_blocked_bloom_ops = {
	.add = blocked_add,
	.contains = blocked_contains,
	.del = blocked_del,
	.count = blocked_count,
	.prefetch_lines = blocked_prefetch,
	.clear = blocked_clear,
	.merge = blocked_merge,
	.summarize = blocked_summarize,
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
	bb->filter.table = bb->blocks;
	bb->filter.ops = &sieve_blocked_bloom_ops;
	bb->filter.alloc_bytes = bytes;
	return &bb->filter;
}
