/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter cores' common interface.
 *
 * A filter is a struct sieve_filter at the head of a type-specific struct,
 * driven through an ops table. The cores do no locking of their own:
 *  - Bloom and blocked Bloom: add, contains and count are safe to run
 *    concurrently with each other (bits are set with atomic ORs, one per
 *    word an add changes, and never cleared by them), unless the filter
 *    is single_writer (userspace); clear and merge need exclusive access.
 *  - Cuckoo: every write (add, delete, clear) needs exclusive access against
 *    other writes; a contains that runs during a write may miss a key that is
 *    being moved, so readers concurrent with writers must retry (seqcount).
 * Functions that may walk the whole table (clear, merge, summarize) may
 * sleep in the kernel; the others never sleep.
 */
#ifndef SIEVE_FILTER_H
#define SIEVE_FILTER_H

#include <sieve_env.h>	/* this folder's in the kernel; userspace builds bring theirs */
#include <linux/sieve.h>

struct sieve_filter;
struct sieve_snapshot_layer;

/**
 * struct sieve_filter_summary - what a filter says about itself
 * @items: items stored (exact for cuckoo, estimated from the bits set for
 *	the Bloom types).
 * @fpr_ppb: false-positive rate of a query now, in parts per billion.
 * @fill_ppm: bits set (Bloom types) or slots used (cuckoo), in parts per
 *	million.
 */
struct sieve_filter_summary {
	u64 items;
	u32 fpr_ppb;
	u32 fill_ppm;
};

/**
 * struct sieve_filter_ops - what each filter type implements
 *
 * A type sees a key only as its 64-bit hash (sieve_filter_hash()): hashing
 * is the same for every type, and is done once per key by the callers.
 *
 * @add: insert a key (enum sieve_add_flags in @flags, already checked).
 *	Returns 1 if the key may have been present already, 0 if it was
 *	certainly new, -ENOSPC if a cuckoo table is full (nothing stored
 *	before is lost). Bloom types: a test-and-set, for dedup; but two
 *	racing adds of one new key may both return 0. Cuckoo: stores another
 *	copy of a present key unless %SIEVE_ADD_IF_ABSENT.
 * @contains: true if the key may be present; never false for a stored key.
 * @del: remove one copy of a key: 0, -ENOENT if not found, -EOPNOTSUPP for
 *	the Bloom types.
 * @count: copies of the key that may be present (Bloom types: 0 or 1).
 * @prefetch_lines: start loading the cache lines a key touches, for reading or
 *	(@write) for an add, so the batch operations overlap memory misses.
 * @clear: forget every key; geometry and seed stay.
 * @merge: OR @src into @dst; the caller has checked the geometries match.
 * @summarize: what the filter says about itself (struct
 *	sieve_filter_summary), reading a Bloom type's table once for all of
 *	it: a report must not cost one pass over a big table per figure.
 * @save_state: optional: put the state a snapshot needs beyond the table
 *	(cuckoo: items, victim slot) in a snapshot's layer header.
 * @load_state: optional: a snapshot's table has just been copied into a new
 *	filter: check it (bits or bytes that must be zero) and take the rest
 *	of the state from the untrusted layer header, checking that too.
 *	0 or -EINVAL. May sleep.
 */
struct sieve_filter_ops {
	int (*add)(struct sieve_filter *f, u64 hash, u32 flags);
	bool (*contains)(const struct sieve_filter *f, u64 hash);
	int (*del)(struct sieve_filter *f, u64 hash);
	u32 (*count)(const struct sieve_filter *f, u64 hash);
	void (*prefetch_lines)(const struct sieve_filter *f, u64 hash, bool write);
	void (*clear)(struct sieve_filter *f);
	int (*merge)(struct sieve_filter *dst, const struct sieve_filter *src);
	void (*summarize)(const struct sieve_filter *f, struct sieve_filter_summary *out);
	void (*save_state)(const struct sieve_filter *f, struct sieve_snapshot_layer *l);
	int (*load_state)(struct sieve_filter *f, const struct sieve_snapshot_layer *l);
};

/**
 * struct sieve_filter - head of every filter
 * @ops: the type's operations.
 * @geo: the geometry the filter was created with (seed included).
 * @table: the table (bitmap or buckets), @table_bytes long: what a snapshot
 *	saves, and what is byte-identical whether the kernel or userspace
 *	built the filter from the same keys.
 * @table_bytes: size of the table in bytes.
 * @alloc_bytes: everything allocated for the filter, header included.
 * @single_writer: userspace only: one thread at a time uses the filter
 *	(libsieve's local filters), so the Bloom types' adds set bits with
 *	plain read-modify-writes, not atomic ones. The kernel ignores it: its
 *	adds are always atomic. Set by the creator, before any add.
 */
struct sieve_filter {
	const struct sieve_filter_ops *ops;
	struct sieve_geometry geo;
	void *table;
	u64 table_bytes;
	u64 alloc_bytes;
	bool single_writer;
};

/*
 * Up to 4 bytes of a key's tail (@n of them) as one little-endian word,
 * zero-padded: what jhash() adds to a state word, byte by byte, for the
 * last 1 to 12 bytes (sieve builds on little-endian machines only, where
 * its 32-bit loads read the same).
 */
static inline u32 sieve_hash_tail_word(const u8 *p, u32 n)
{
	u32 w = 0;

	switch (n) {
	case 4:
		return get_unaligned_le32(p);
	case 3:
		w = (u32)p[2] << 16;
		fallthrough;
	case 2:
		w |= (u32)p[1] << 8;
		fallthrough;
	case 1:
		w |= p[0];
	}
	return w;
}

/*
 * 64 bits of hash from one jhash pass: the kernel's own lookup3 steps
 * (__jhash_mix, __jhash_final from <linux/jhash.h>) over the key, keeping
 * two words of the final state, as Bob Jenkins' hashlittle2() does. On top
 * is c, the better mixed word and exactly what jhash(key, len, seed)
 * returns (the multiply-shift range reductions of the cores read the top
 * bits first); below it b, which __jhash_final() mixes with a and c in
 * its last rounds. tests/unit checks that the two halves are independent
 * enough for double hashing and for a cuckoo filter's bucket and
 * fingerprint, and the VM suite that this matches the kernel's jhash().
 * Like jhash(), an empty key is not mixed: its hash is the seed's.
 */
static inline u64 sieve_hash64(const void *key, u32 len, u32 seed)
{
	const u8 *k = key;
	u32 a, b, c;

	a = b = c = JHASH_INITVAL + len + seed;
	if (!len)
		return (u64)c << 32 | b;
	while (len > 12) {
		a += get_unaligned_le32(k);
		b += get_unaligned_le32(k + 4);
		c += get_unaligned_le32(k + 8);
		__jhash_mix(a, b, c);
		len -= 12;
		k += 12;
	}
	a += sieve_hash_tail_word(k, min(len, 4U));
	b += sieve_hash_tail_word(k + 4, len > 4 ? min(len - 4, 4U) : 0);
	c += sieve_hash_tail_word(k + 8, len > 8 ? len - 8 : 0);
	__jhash_final(a, b, c);
	return (u64)c << 32 | b;
}

/*
 * Whether a Bloom-type add may set bits with plain writes: a single-writer
 * filter, in userspace only (the kernel's adds are always atomic).
 */
static inline bool sieve_filter_plain_adds(const struct sieve_filter *f)
{
#ifdef __KERNEL__
	return false;
#else
	return f->single_writer;
#endif
}

int sieve_geometry_check(const struct sieve_geometry *geo, u64 *table_bytes);
int sieve_filter_create(const struct sieve_geometry *geo,
			struct sieve_filter **out);
void sieve_filter_destroy(struct sieve_filter *f);
int sieve_filter_merge(struct sieve_filter *dst, const struct sieve_filter *src);

static inline u64 sieve_filter_hash(const struct sieve_filter *f, const void *key, u32 len)
{
	return sieve_hash64(key, len, f->geo.seed);
}

int sieve_bloom_add(struct sieve_filter *f, u64 hash, u32 flags);
bool sieve_bloom_contains(const struct sieve_filter *f, u64 hash);
int sieve_blocked_add(struct sieve_filter *f, u64 hash, u32 flags);
bool sieve_blocked_contains(const struct sieve_filter *f, u64 hash);
int sieve_cuckoo_add(struct sieve_filter *f, u64 hash, u32 flags);
bool sieve_cuckoo_contains(const struct sieve_filter *f, u64 hash);

/*
 * A key's add and query by its hash: what ops->add and ops->contains do,
 * called directly. The hot paths use these: an indirect call costs a
 * retpoline in the kernel, whose barrier stops a loop of single calls from
 * starting the next key's memory access before this one's returns. The
 * geometry was checked at creation: the type is one of the three.
 */
static inline int sieve_filter_add_hash(struct sieve_filter *f, u64 hash, u32 flags)
{
	switch (f->geo.type) {
	case SIEVE_BLOOM:
		return sieve_bloom_add(f, hash, flags);
	case SIEVE_BLOCKED_BLOOM:
		return sieve_blocked_add(f, hash, flags);
	default:
		return sieve_cuckoo_add(f, hash, flags);
	}
}

static inline bool sieve_filter_contains_hash(const struct sieve_filter *f, u64 hash)
{
	switch (f->geo.type) {
	case SIEVE_BLOOM:
		return sieve_bloom_contains(f, hash);
	case SIEVE_BLOCKED_BLOOM:
		return sieve_blocked_contains(f, hash);
	default:
		return sieve_cuckoo_contains(f, hash);
	}
}

static inline int sieve_filter_add_flags(struct sieve_filter *f, const void *key,
					 u32 len, u32 flags)
{
	if (flags & ~SIEVE_ADD_FLAGS_ALL)
		return -EINVAL;
	return sieve_filter_add_hash(f, sieve_filter_hash(f, key, len), flags);
}

static inline int sieve_filter_add(struct sieve_filter *f, const void *key, u32 len)
{
	return sieve_filter_add_flags(f, key, len, 0);
}

static inline bool sieve_filter_contains(const struct sieve_filter *f,
					 const void *key, u32 len)
{
	return sieve_filter_contains_hash(f, sieve_filter_hash(f, key, len));
}

static inline int sieve_filter_delete(struct sieve_filter *f, const void *key, u32 len)
{
	return f->ops->del(f, sieve_filter_hash(f, key, len));
}

static inline u32 sieve_filter_count(const struct sieve_filter *f,
				     const void *key, u32 len)
{
	return f->ops->count(f, sieve_filter_hash(f, key, len));
}

/**
 * struct sieve_key - one key of a batch
 * @data: its bytes.
 * @len: how many.
 */
struct sieve_key {
	const void *data;
	u32 len;
};

/*
 * Batches: the same operations on @n keys, with @results[i] what the
 * single-key call returns for @keys[i] (an add batch returns -EINVAL for
 * unknown @flags, having done nothing, else 0). The caller bounds @n:
 * a batch never sleeps, and holds whatever lock the caller holds. Each key is hashed and its cache
 * lines prefetched some keys ahead of its turn, so the memory misses of
 * neighbouring keys overlap instead of following one another: on a table
 * far larger than the caches, a batch costs a fraction of single calls.
 * Keys are added in order, so a key repeated in a batch is reported
 * present the second time. Same locking rules as the single-key calls.
 */
int sieve_filter_add_batch(struct sieve_filter *f, const struct sieve_key *keys,
			   u32 n, u32 flags, int *results);
void sieve_filter_contains_batch(const struct sieve_filter *f,
				 const struct sieve_key *keys, u32 n, bool *results);

static inline void sieve_filter_clear(struct sieve_filter *f)
{
	f->ops->clear(f);
}

/* One read of the table (may sleep); the three helpers below each do one. */
void sieve_filter_summarize(const struct sieve_filter *f, struct sieve_filter_summary *out);

/*
 * A filter of several layers (oldest first): starting from a zeroed @all,
 * fold in each layer's summary. The one rule for the kernel's reports and
 * libsieve's local filters alike.
 */
void sieve_summary_add_layer(struct sieve_filter_summary *all,
			     const struct sieve_filter_summary *layer);

static inline u64 sieve_filter_estimate_items(const struct sieve_filter *f)
{
	struct sieve_filter_summary s;

	sieve_filter_summarize(f, &s);
	return s.items;
}

static inline u32 sieve_filter_fpr_ppb(const struct sieve_filter *f)
{
	struct sieve_filter_summary s;

	sieve_filter_summarize(f, &s);
	return s.fpr_ppb;
}

static inline u32 sieve_filter_fill_ppm(const struct sieve_filter *f)
{
	struct sieve_filter_summary s;

	sieve_filter_summarize(f, &s);
	return s.fill_ppm;
}

/*
 * Sizing (sizing.c): the geometry that holds @capacity keys with a
 * false-positive rate of at most @fpp_ppb parts per billion. The seed is
 * left 0 for the caller to set. -EINVAL for a bad type, a zero capacity or a
 * rate outside (0, 1) or below what the type can reach; -E2BIG if the table
 * would exceed SIEVE_MAX_TABLE_BYTES or the capacity SIEVE_MAX_CAPACITY.
 */
int sieve_size(u32 type, u64 capacity, u32 fpp_ppb, struct sieve_geometry *out);

/* The false-positive rate a filter of @geo is expected to have at @nitems. */
u32 sieve_expected_fpr_ppb(const struct sieve_geometry *geo, u64 nitems);

/* Whole-table operations for the types, which may sleep. */
void sieve_zero(void *table, u64 bytes);
void sieve_words_or(unsigned long *to, const unsigned long *from, u64 nwords);
u64 sieve_words_weight(const unsigned long *words, u64 nwords);
/* @used of @slots in parts per million, for the types' summaries. */
u32 sieve_fill_ppm(u64 used, u64 slots);

/*
 * For filter.c's type table: each type checks its own geometry (returning
 * the table size) and allocates a zeroed filter of a geometry it checked.
 */
int sieve_bloom_check(const struct sieve_geometry *geo, u64 *table_bytes);
struct sieve_filter *sieve_bloom_alloc(const struct sieve_geometry *geo, u64 table_bytes);
int sieve_blocked_bloom_check(const struct sieve_geometry *geo, u64 *table_bytes);
struct sieve_filter *sieve_blocked_bloom_alloc(const struct sieve_geometry *geo,
					       u64 table_bytes);
int sieve_cuckoo_check(const struct sieve_geometry *geo, u64 *table_bytes);
struct sieve_filter *sieve_cuckoo_alloc(const struct sieve_geometry *geo, u64 table_bytes);

#endif /* SIEVE_FILTER_H */
