// SPDX-License-Identifier: GPL-2.0
/*
 * What every filter type shares: geometry checks, creation, destruction
 * and merging, dispatched to the type's own file.
 */
#include "filter.h"

/* Each type checks its own geometry and allocates its own filters. */
static const struct {
	int (*check)(const struct sieve_geometry *geo, u64 *table_bytes);
	struct sieve_filter *(*alloc)(const struct sieve_geometry *geo, u64 table_bytes);
} sieve_types[] = {
	[SIEVE_BLOOM] = { sieve_bloom_check, sieve_bloom_alloc },
	[SIEVE_BLOCKED_BLOOM] = { sieve_blocked_bloom_check, sieve_blocked_bloom_alloc },
	[SIEVE_CUCKOO] = { sieve_cuckoo_check, sieve_cuckoo_alloc },
};

int sieve_geometry_check(const struct sieve_geometry *geo, u64 *table_bytes)
{
	if (geo->type >= ARRAY_SIZE(sieve_types) || !sieve_types[geo->type].check)
		return -EINVAL;
	return sieve_types[geo->type].check(geo, table_bytes);
}
EXPORT_SYMBOL_NS_GPL(sieve_geometry_check, SIEVE_INTERNAL_NS);

/* On error *@out is left as it was and nothing stays allocated. */
int sieve_filter_create(const struct sieve_geometry *geo, struct sieve_filter **out)
{
	struct sieve_filter *f;
	u64 table_bytes;
	int err;

	err = sieve_geometry_check(geo, &table_bytes);
	if (err)
		return err;
	f = sieve_types[geo->type].alloc(geo, table_bytes);
	if (!f)
		return -ENOMEM;
	f->geo = *geo;
	f->table_bytes = table_bytes;
	*out = f;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_filter_create, SIEVE_INTERNAL_NS);

/* Every type is one allocation, header and table together, header first. */
void sieve_filter_destroy(struct sieve_filter *f)
{
	sieve_free(f);
}
EXPORT_SYMBOL_NS_GPL(sieve_filter_destroy, SIEVE_INTERNAL_NS);

/*
 * Union is a plain OR of two tables, which is only meaningful when every
 * key maps to the same bits in both: same type, size, probes and seed.
 */
int sieve_filter_merge(struct sieve_filter *dst, const struct sieve_filter *src)
{
	if (memcmp(&dst->geo, &src->geo, sizeof(dst->geo)))
		return -EINVAL;
	return dst->ops->merge(dst, src);
}
EXPORT_SYMBOL_NS_GPL(sieve_filter_merge, SIEVE_INTERNAL_NS);

/*
 * Batches run as a pipeline: key i is hashed and its lines prefetched
 * BATCH_AHEAD keys before it is used, so about that many misses are in
 * flight at any time. Enough to cover a memory latency with the work of
 * the keys in between; few enough that the lines are still cached when
 * their turn comes.
 */
#define BATCH_AHEAD	16

int sieve_filter_add_batch(struct sieve_filter *f, const struct sieve_key *keys,
			   u32 n, u32 flags, int *results)
{
	u64 ahead[BATCH_AHEAD];
	u64 i;	/* n + BATCH_AHEAD must not wrap */

	if (flags & ~SIEVE_ADD_FLAGS_ALL)
		return -EINVAL;
	for (i = 0; i < (u64)n + BATCH_AHEAD; i++) {
		u32 slot = i % BATCH_AHEAD;

		if (i >= BATCH_AHEAD)
			results[i - BATCH_AHEAD] = sieve_filter_add_hash(f, ahead[slot], flags);
		if (i < n) {
			ahead[slot] = sieve_filter_hash(f, keys[i].data, keys[i].len);
			f->ops->prefetch_lines(f, ahead[slot], true);
		}
	}
	return 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_filter_add_batch, SIEVE_INTERNAL_NS);

void sieve_filter_contains_batch(const struct sieve_filter *f,
				 const struct sieve_key *keys, u32 n, bool *results)
{
	u64 ahead[BATCH_AHEAD];
	u64 i;	/* n + BATCH_AHEAD must not wrap */

	for (i = 0; i < (u64)n + BATCH_AHEAD; i++) {
		u32 slot = i % BATCH_AHEAD;

		if (i >= BATCH_AHEAD)
			results[i - BATCH_AHEAD] = sieve_filter_contains_hash(f, ahead[slot]);
		if (i < n) {
			ahead[slot] = sieve_filter_hash(f, keys[i].data, keys[i].len);
			f->ops->prefetch_lines(f, ahead[slot], false);
		}
	}
}
EXPORT_SYMBOL_NS_GPL(sieve_filter_contains_batch, SIEVE_INTERNAL_NS);

#ifdef SIEVE_COUNT_SCANS
sieve_scan_counter_t sieve_table_scans;
#endif

void sieve_filter_summarize(const struct sieve_filter *f, struct sieve_filter_summary *out)
{
	f->ops->summarize(f, out);
}
EXPORT_SYMBOL_NS_GPL(sieve_filter_summarize, SIEVE_INTERNAL_NS);

void sieve_summary_add_layer(struct sieve_filter_summary *all,
			     const struct sieve_filter_summary *layer)
{
	/* A foreign key is a false positive unless every layer says no. */
	u64 miss = SIEVE_PPB - all->fpr_ppb;

	/* Both factors are at most 10^9: the product fits in 64 bits. */
	miss = div64_u64(miss * (SIEVE_PPB - layer->fpr_ppb), SIEVE_PPB);
	all->fpr_ppb = SIEVE_PPB - miss;
	all->items += layer->items;
	/* The newest layer's: the one that takes the adds. */
	all->fill_ppm = layer->fill_ppm;
}

u32 sieve_fill_ppm(u64 used, u64 slots)
{
	/* slots < 2^34 and used <= slots: the product fits in 64 bits. */
	return div64_u64(min(used, slots) * 1000000, slots);
}

/* Zeroes a table of any size, a megabyte at a time so the CPU is not held. */
void sieve_zero(void *table, u64 bytes)
{
	u8 *p = table;

	might_sleep();
	while (bytes) {
		size_t chunk = min_t(u64, bytes, SZ_1M);

		memset(p, 0, chunk);
		p += chunk;
		bytes -= chunk;
		cond_resched();
	}
}

/*
 * Atomic ORs, so a merge keeps the bits that lock-free adds set in @to
 * meanwhile; words with nothing to add cost no locked write.
 */
void sieve_words_or(unsigned long *to, const unsigned long *from, u64 nwords)
{
	u64 i;

	might_sleep();
	for (i = 0; i < nwords; i++) {
		unsigned long bits = READ_ONCE(from[i]);

		if (bits & ~READ_ONCE(to[i]))
			sieve_atomic_or(bits, &to[i]);
		if ((i & 4095) == 4095)
			cond_resched();
	}
}

u64 sieve_words_weight(const unsigned long *words, u64 nwords)
{
	u64 i, set = 0;

	might_sleep();
	sieve_count_scan();
	for (i = 0; i < nwords; i++) {
		set += hweight_long(READ_ONCE(words[i]));
		if ((i & 4095) == 4095)
			cond_resched();
	}
	return set;
}
