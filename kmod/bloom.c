// SPDX-License-Identifier: GPL-2.0
/*
 * Classic Bloom filter: m bits, k probes per key spread over the whole
 * bitmap. m may be any value from 64 up, not only a power of two: a probe
 * is mapped onto [0, m) by multiply-shift (Lemire's "fast range"), which is
 * as uniform as '%' and costs one multiplication instead of a division.
 */
#include "filter.h"
#include "fixedpoint.h"

struct sieve_bloom {
	struct sieve_filter filter;
	unsigned long bits[];
};

/* sieve_filter_destroy() frees the filter through its head. */
static_assert(offsetof(struct sieve_bloom, filter) == 0);

static struct sieve_bloom *to_bloom(const struct sieve_filter *f)
{
	return container_of(f, struct sieve_bloom, filter);
}

/* [0, range) from the top bits of a 64-bit hash. */
static inline u64 reduce(u64 x, u64 range)
{
	return mul_u64_u64_shr(x, range, 64);
}

/*
 * Double hashing (Kirsch and Mitzenmacher): probe i is h1 + i * h2, which
 * keeps the false-positive rate of k independent hashes. The step is a
 * bijective mix of the whole 64-bit hash, so the top bits that reduce()
 * uses differ between the first probe and the step.
 */
static inline u64 probe_step(u64 h)
{
	return (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
}

int sieve_bloom_add(struct sieve_filter *f, u64 h, u32 flags)
{
	struct sieve_bloom *bf = to_bloom(f);
	u64 step = probe_step(h);
	bool present = true;
	u32 i;

	for (i = 0; i < f->geo.nhashes; i++, h += step) {
		u64 bit = reduce(h, f->geo.nbits);
		unsigned long *word = &bf->bits[BIT_WORD(bit)];
		unsigned long mask = BIT_MASK(bit), old;

		/* A single-writer filter (userspace): plain, no branch on the table. */
		if (sieve_filter_plain_adds(f)) {
			old = *word;
			*word = old | mask;
			present &= (old & mask) != 0;
			continue;
		}
		/*
		 * Test first: a bit already set costs no write. Else one atomic
		 * OR of the word, whose old value says exactly whether this add
		 * set the bit.
		 */
		if (!(READ_ONCE(*word) & mask) && !(sieve_fetch_or(mask, word) & mask))
			present = false;
	}
	return present;
}
EXPORT_SYMBOL_NS_GPL(sieve_bloom_add, SIEVE_INTERNAL_NS);

bool sieve_bloom_contains(const struct sieve_filter *f, u64 h)
{
	const struct sieve_bloom *bf = to_bloom(f);
	u64 step = probe_step(h);
	u32 i;

	for (i = 0; i < f->geo.nhashes; i++, h += step)
		if (!test_bit(reduce(h, f->geo.nbits), bf->bits))
			return false;
	return true;
}
EXPORT_SYMBOL_NS_GPL(sieve_bloom_contains, SIEVE_INTERNAL_NS);

static u32 bloom_count(const struct sieve_filter *f, u64 h)
{
	return sieve_bloom_contains(f, h);
}

static int bloom_del(struct sieve_filter *f, u64 h)
{
	return -EOPNOTSUPP;
}

/* The k words a key probes, each likely on a cache line of its own. */
static void bloom_prefetch(const struct sieve_filter *f, u64 h, bool write)
{
	const struct sieve_bloom *bf = to_bloom(f);
	u64 step = probe_step(h);
	u32 i;

	for (i = 0; i < f->geo.nhashes; i++, h += step)
		sieve_prefetch(&bf->bits[BIT_WORD(reduce(h, f->geo.nbits))], write);
}

static u64 bloom_words(const struct sieve_filter *f)
{
	return f->table_bytes / sizeof(unsigned long);
}

static void bloom_clear(struct sieve_filter *f)
{
	sieve_zero(to_bloom(f)->bits, f->table_bytes);
}

static int bloom_merge(struct sieve_filter *dst, const struct sieve_filter *src)
{
	sieve_words_or(to_bloom(dst)->bits, to_bloom(src)->bits, bloom_words(dst));
	return 0;
}

/*
 * With X of m bits set by k probes per key, n = -(m / k) * ln(1 - X / m)
 * (Swamidass and Baldi), computed as (m / k) * ln 2 * log2(m / (m - X)).
 * A full bitmap says nothing about n: it is read as one bit short of full.
 */
static u64 bloom_items(const struct sieve_filter *f, u64 set)
{
	u64 m = f->geo.nbits;
	u64 log_ratio = fx32_log2(m) - fx32_log2(m - min(set, m - 1));	/* Q32 */
	/* Q16 in between (m < 2^34, log_ratio < 2^38), rounded at the end. */
	u64 n = mul_u64_u64_shr(mul_u64_u64_shr(m, log_ratio, 16), FX32_LN2, 32);
	u64 div = (u64)f->geo.nhashes << 16;

	return div64_u64(n + div / 2, div);
}

/* A query hits k bits, each set with probability X / m. */
static u32 bloom_fpr(const struct sieve_filter *f, u64 set)
{
	return fx62_to_ppb(fx62_pow(fx62_div(set, f->geo.nbits), f->geo.nhashes));
}

/* Every figure from one count of the bits (none is set past nbits). */
static void bloom_summarize(const struct sieve_filter *f, struct sieve_filter_summary *out)
{
	u64 set = sieve_words_weight(to_bloom(f)->bits, bloom_words(f));

	out->items = bloom_items(f, set);
	out->fpr_ppb = bloom_fpr(f, set);
	out->fill_ppm = sieve_fill_ppm(set, f->geo.nbits);
}

/* A snapshot's bitmap must not set bits past nbits: no add ever does. */
static int bloom_load_state(struct sieve_filter *f, const struct sieve_snapshot_layer *l)
{
	u64 tail = f->geo.nbits % BITS_PER_LONG;

	if (tail && to_bloom(f)->bits[bloom_words(f) - 1] >> tail)
		return -EINVAL;
	return 0;
}

static const struct sieve_filter_ops sieve_bloom_ops = {
	.add = sieve_bloom_add,
	.contains = sieve_bloom_contains,
	.del = bloom_del,
	.count = bloom_count,
	.prefetch_lines = bloom_prefetch,
	.clear = bloom_clear,
	.merge = bloom_merge,
	.summarize = bloom_summarize,
	.load_state = bloom_load_state,
};

int sieve_bloom_check(const struct sieve_geometry *geo, u64 *table_bytes)
{
	if (geo->nbits < 64 || geo->nhashes < 1 || geo->nhashes > SIEVE_MAX_HASHES ||
	    geo->nbuckets || geo->fp_bits)
		return -EINVAL;
	if (geo->nbits > SIEVE_MAX_TABLE_BYTES * 8)
		return -E2BIG;
	/* Whole words: the bit operations work a word at a time. */
	*table_bytes = DIV_ROUND_UP_ULL(geo->nbits, BITS_PER_LONG) * sizeof(unsigned long);
	if (*table_bytes > SIEVE_MAX_TABLE_BYTES)
		return -E2BIG;
	return 0;
}

struct sieve_filter *sieve_bloom_alloc(const struct sieve_geometry *geo, u64 table_bytes)
{
	struct sieve_bloom *bf;
	u64 bytes;

	if (check_add_overflow((u64)sizeof(*bf), table_bytes, &bytes))
		return NULL;
	bf = sieve_zalloc(bytes);
	if (!bf)
		return NULL;
	bf->filter.ops = &sieve_bloom_ops;
	bf->filter.table = bf->bits;
	bf->filter.alloc_bytes = bytes;
	return &bf->filter;
}
