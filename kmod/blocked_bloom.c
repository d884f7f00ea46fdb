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
#define POSITION_SHIFT		(64 - 9)		/* the top 9 bits: 0..511 */

/*
 * The draws of a key's pattern: draw j is x_j = (h | 1) * M^(j + 1), M
 * the multiplier above, a multiplicative congruential sequence seeded by
 * the whole hash. Its first SIEVE_MAX_HASHES members are products of the
 * hash with these powers of M, so they are computed side by side instead
 * of one after the other.
 */
static const u64 draw_multiplier[SIEVE_MAX_HASHES] = {
	0x9e3779b97f4a7c15ULL, 0xdf442d22ce4859b9ULL, 0x604a5ce3addef82dULL,
	0xd94363fc538227b1ULL, 0x2e2b795f2d10fd85ULL, 0x4be7956e30a337e9ULL,
	0x5ecb31e4ccd2721dULL, 0x06d4b2611beb6861ULL, 0x0f10cd6a9be88bf5ULL,
	0x80e0dcf76db02719ULL, 0x779023cf069d510dULL, 0x4114e3439eebf211ULL,
	0x8fc15a19ba851765ULL, 0x50687085a271d749ULL, 0x82fe791be9b804fdULL,
	0xf53f7dff42a4f4c1ULL, 0xc1712bcbdcdf8fd5ULL, 0x204db59ca693f879ULL,
	0xe1a216043077fdedULL, 0x07dde4bf1258a071ULL, 0x657df06edea5e545ULL,
	0xfb5e617f1f9b3aa9ULL, 0xb39afcd693ffabddULL, 0x761af3294c1a2521ULL,
	0x3737591302ab07b5ULL, 0xa6a140ea15154dd9ULL, 0xa09b3202342e7ecdULL,
	0x590dd8f2277db2d1ULL, 0x3710df127f56e725ULL, 0xf0f4b4b9b5c8e209ULL,
	0x196a94fe0490e6bdULL, 0xcdfb8afc05487981ULL,
};

/*
 * Draws the rare patterns look at beyond their first k: 32 distinct
 * positions of 512 come within 256 draws but with a probability below
 * 10^-200, so the filling-in after them is never reached in practice; it
 * only bounds the loop.
 */
#define PATTERN_MAX_DRAWS	256

/*
 * The k bits of a key inside its block, as the block's 8 word masks: the
 * first k distinct positions among draws 0, 1, 2, ... (the top 9 bits of
 * each), a uniformly random k-subset of the 512: each draw that repeats
 * an earlier one is rejected, so the accepted ones are an ordered k-tuple
 * of distinct positions, all tuples equally likely. The draws come from
 * the whole 64-bit hash: with 2^31 patterns, a query sharing its block
 * and pattern with one of the block's keys would add about keys-per-block
 * / 2^31 to the false-positive rate, several times a target of 1e-9.
 *
 * Uniform k-subsets are what make sizing.c's rate a bound and not an
 * approximation: with keys setting random k-subsets, the events "bit j is
 * set" are negatively associated, so the k distinct bits of a query are
 * all set with probability at most the product of their marginals,
 * (1 - (1 - k/512)^i)^k in a block holding i keys.
 *
 * For all but about k(k-1)/1024 of the keys (3% at k = 6), draws 0..k-1
 * are distinct and are the pattern: k multiplies, side by side, no branch.
 * The others start over one draw at a time (pattern_redraw()).
 */
static void pattern_redraw(u64 x, u32 k, unsigned long pattern[BLOCK_WORDS])
{
	u32 j, pos, taken = 0;

	memset(pattern, 0, BLOCK_BYTES);
	for (j = 0; j < PATTERN_MAX_DRAWS && taken < k; j++) {
		x *= PATTERN_MULTIPLIER;
		pos = x >> POSITION_SHIFT;
		if (!(pattern[BIT_WORD(pos)] & BIT_MASK(pos))) {
			pattern[BIT_WORD(pos)] |= BIT_MASK(pos);
			taken++;
		}
	}
	for (pos = 0; taken < k; pos++) {
		if (!(pattern[BIT_WORD(pos)] & BIT_MASK(pos))) {
			pattern[BIT_WORD(pos)] |= BIT_MASK(pos);
			taken++;
		}
	}
}

static void key_pattern(u64 h, u32 k, unsigned long pattern[BLOCK_WORDS])
{
	unsigned long repeated = 0;
	u64 x = h | 1;
	u32 j;

	memset(pattern, 0, BLOCK_BYTES);
	for (j = 0; j < k; j++) {
		u32 pos = (x * draw_multiplier[j]) >> POSITION_SHIFT;

		repeated |= pattern[BIT_WORD(pos)] & BIT_MASK(pos);
		pattern[BIT_WORD(pos)] |= BIT_MASK(pos);
	}
	if (unlikely(repeated))
		pattern_redraw(x, k, pattern);
}

/*
 * Each word of the block is touched once, and its old value says exactly
 * which bits this add set. A single-writer filter (userspace) reads and
 * writes all 8 words, with no branch on the table. Else only the words
 * that lack some of their pattern's bits cost an atomic OR; which words,
 * is found first without a branch per word (the branches of a loop over
 * the block's contents mispredict, and each one that does holds back the
 * work that follows, the next key's included).
 */
int sieve_blocked_add(struct sieve_filter *f, u64 h, u32 flags)
{
	unsigned long *block = key_block(to_blocked(f), h);
	unsigned long pattern[BLOCK_WORDS], missing = 0;
	u32 w, lacking = 0;

	key_pattern(h, f->geo.nhashes, pattern);
	if (sieve_filter_plain_adds(f)) {
		for (w = 0; w < BLOCK_WORDS; w++) {
			unsigned long old = block[w];

			missing |= pattern[w] & ~old;
			block[w] = old | pattern[w];
		}
		return !missing;
	}
	for (w = 0; w < BLOCK_WORDS; w++)
		lacking |= (u32)((pattern[w] & ~READ_ONCE(block[w])) != 0) << w;
	while (lacking) {
		w = __ffs(lacking);
		lacking &= lacking - 1;
		missing |= pattern[w] & ~sieve_fetch_or(pattern[w], &block[w]);
	}
	return !missing;
}
EXPORT_SYMBOL_NS_GPL(sieve_blocked_add, SIEVE_INTERNAL_NS);

/*
 * Draws 0..k-1 are all in the key's pattern, repeated or not: one of their
 * bits clear in the block is a certain no, the common answer for a key
 * that was never added, found with k multiplies and no table of the
 * pattern. When they are all set and distinct, they are the whole pattern:
 * yes. Two equal draws agree on both their low 6 bits and their high 6
 * bits (which together are all 9), so if no two draws agree on one of the
 * two, they are distinct: two 64-bit maps, no memory, no pairs. Else (a
 * true repeat, or two pairs that agree on a half each) the whole pattern
 * decides.
 */
bool sieve_blocked_contains(const struct sieve_filter *f, u64 h)
{
	const unsigned long *block = key_block(to_blocked(f), h);
	unsigned long pattern[BLOCK_WORDS], missing = 0;
	u64 low_seen = 0, high_seen = 0, low_again = 0, high_again = 0;
	u32 j, w, k = f->geo.nhashes;
	u64 x = h | 1;

	for (j = 0; j < k; j++) {
		u32 pos = (x * draw_multiplier[j]) >> POSITION_SHIFT;
		u64 low = 1ULL << (pos & 63), high = 1ULL << (pos >> 3);

		missing |= ~READ_ONCE(block[BIT_WORD(pos)]) & BIT_MASK(pos);
		low_again |= low_seen & low;
		low_seen |= low;
		high_again |= high_seen & high;
		high_seen |= high;
	}
	if (missing)
		return false;
	if (!low_again || !high_again)
		return true;
	key_pattern(h, k, pattern);
	for (w = 0; w < BLOCK_WORDS; w++)
		missing |= pattern[w] & ~READ_ONCE(block[w]);
	return !missing;
}
EXPORT_SYMBOL_NS_GPL(sieve_blocked_contains, SIEVE_INTERNAL_NS);

static u32 blocked_count(const struct sieve_filter *f, u64 h)
{
	return sieve_blocked_contains(f, h);
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
static const u64 inv_left[SIEVE_MAX_HASHES] = {
	INV_LEFT(0), INV_LEFT(1), INV_LEFT(2), INV_LEFT(3),
	INV_LEFT(4), INV_LEFT(5), INV_LEFT(6), INV_LEFT(7),
	INV_LEFT(8), INV_LEFT(9), INV_LEFT(10), INV_LEFT(11),
	INV_LEFT(12), INV_LEFT(13), INV_LEFT(14), INV_LEFT(15),
	INV_LEFT(16), INV_LEFT(17), INV_LEFT(18), INV_LEFT(19),
	INV_LEFT(20), INV_LEFT(21), INV_LEFT(22), INV_LEFT(23),
	INV_LEFT(24), INV_LEFT(25), INV_LEFT(26), INV_LEFT(27),
	INV_LEFT(28), INV_LEFT(29), INV_LEFT(30), INV_LEFT(31),
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
	.add = sieve_blocked_add,
	.contains = sieve_blocked_contains,
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
