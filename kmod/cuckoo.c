// SPDX-License-Identifier: GPL-2.0
/*
 * Cuckoo filter (Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo Filter:
 * Practically Better Than Bloom"): buckets of 4 fingerprints of f bits,
 * f from 4 to 16, packed tightly: bucket i lives at bit 4 * f * i, so a
 * 12-bit table costs 12 bits a slot. A key may sit in bucket i1 or
 * i2 = i1 ^ hash(fingerprint) (partial-key cuckoo hashing: either bucket
 * and the fingerprint give the other, so entries can be moved without the
 * key). Unlike Bloom filters, keys can be deleted and counted.
 *
 * Writers (add, delete, clear) must be serialized by the caller; see
 * filter.h for readers.
 */
#include "filter.h"
#include "fixedpoint.h"

/*
 * Kicks before an insert gives up and parks the last homeless fingerprint
 * in the victim slot. The reference implementation's 500 reaches 96-97%
 * load on small tables but only about 95.5% at 2^24 buckets, short of the
 * 96% sizing.c counts on; 1000 reaches 96.4% there and 96.5% at 2^26
 * buckets (measured: first failure at 64.7M and 259M keys).
 * Long walks only happen near full: a walk costs two cache misses a kick.
 */
#define CUCKOO_MAX_KICKS	1000

/**
 * struct sieve_cuckoo - a cuckoo filter
 * @filter: the common head.
 * @nitems: fingerprints stored, the victim included.
 * @bucket_mask: nbuckets - 1.
 * @slot_mask: (1 << fp_bits) - 1.
 * @bucket_mask_bits: the 4 * fp_bits bits of one bucket.
 * @slot_lows: the lowest bit of each of a bucket's slots.
 * @slot_highs: the highest bit of each slot.
 * @rng: xorshift32 state: picks which slot to kick (deterministic per seed).
 * @victim_used: a fingerprint is parked in the victim slot: the table is full.
 * @victim_fp: the parked fingerprint.
 * @victim_bucket: one of its two buckets.
 * @table: the buckets, plus 8 bytes so every bucket can be read as one
 *	unaligned 64-bit word (a bucket is at most 64 bits and starts on a
 *	4-bit boundary, so it never straddles more than 8 bytes).
 *
 * Protected by the caller's writer lock.
 */
struct sieve_cuckoo {
	struct sieve_filter filter;
	u64 nitems;
	u32 bucket_mask;
	u32 slot_mask;
	u64 bucket_mask_bits;
	u64 slot_lows;
	u64 slot_highs;
	u32 rng;
	bool victim_used;
	u16 victim_fp;
	u32 victim_bucket;
	u8 table[];
};

/* sieve_filter_destroy() frees the filter through its head. */
static_assert(offsetof(struct sieve_cuckoo, filter) == 0);

static struct sieve_cuckoo *to_cuckoo(const struct sieve_filter *f)
{
	return container_of(f, struct sieve_cuckoo, filter);
}

static const u8 *bucket_addr(const struct sieve_cuckoo *cf, u32 i)
{
	return cf->table + (u64)i * SIEVE_CUCKOO_SLOTS * cf->filter.geo.fp_bits / 8;
}

static u64 bucket_read(const struct sieve_cuckoo *cf, u32 i)
{
	u64 bit = (u64)i * SIEVE_CUCKOO_SLOTS * cf->filter.geo.fp_bits;

	return (get_unaligned_le64(cf->table + bit / 8) >> (bit % 8)) & cf->bucket_mask_bits;
}

static void bucket_write(struct sieve_cuckoo *cf, u32 i, u64 bucket)
{
	u64 bit = (u64)i * SIEVE_CUCKOO_SLOTS * cf->filter.geo.fp_bits;
	u8 *p = cf->table + bit / 8;
	u64 mask = cf->bucket_mask_bits << (bit % 8);
	u64 word = get_unaligned_le64(p);

	put_unaligned_le64((word & ~mask) | (bucket << (bit % 8)), p);
}

static u32 slot_get(const struct sieve_cuckoo *cf, u64 bucket, u32 slot)
{
	return (bucket >> (slot * cf->filter.geo.fp_bits)) & cf->slot_mask;
}

static u64 slot_set(const struct sieve_cuckoo *cf, u64 bucket, u32 slot, u32 fp)
{
	u32 shift = slot * cf->filter.geo.fp_bits;

	return (bucket & ~((u64)cf->slot_mask << shift)) | ((u64)fp << shift);
}

/* The other bucket of a fingerprint: an involution, as i ^ x ^ x == i. */
static u32 alt_bucket(const struct sieve_cuckoo *cf, u32 i, u32 fp)
{
	return (i ^ (u32)(((u64)fp * 0x9e3779b97f4a7c15ULL) >> 32)) & cf->bucket_mask;
}

/*
 * The fingerprint comes from the top half of the hash, spread over
 * 1..2^f-1 by multiply-shift (0 marks an empty slot); the bucket from the
 * bottom half, which is an independent jhash.
 */
static void key_place(const struct sieve_cuckoo *cf, u64 h, u32 *fp, u32 *i1, u32 *i2)
{
	*fp = (u32)(((h >> 32) * cf->slot_mask) >> 32) + 1;
	*i1 = (u32)h & cf->bucket_mask;
	*i2 = alt_bucket(cf, *i1, *fp);
}

static u32 bucket_holds(const struct sieve_cuckoo *cf, u64 bucket, u32 fp)
{
	u32 slot, n = 0;

	for (slot = 0; slot < SIEVE_CUCKOO_SLOTS; slot++)
		n += slot_get(cf, bucket, slot) == fp;
	return n;
}

/*
 * Whether any slot of @bucket holds @fp, all four at once: a slot equal to
 * fp is a zero field of bucket ^ (fp in every slot), and x - lows borrows
 * into a field's top bit, where x had none, exactly when some field of x
 * is zero (a borrow only starts at a zero field, so it never invents one).
 */
static bool bucket_has(const struct sieve_cuckoo *cf, u64 bucket, u32 fp)
{
	u64 x = bucket ^ (fp * cf->slot_lows);

	return ((x - cf->slot_lows) & ~x & cf->slot_highs) != 0;
}

static u32 bucket_count(const struct sieve_cuckoo *cf, u32 i, u32 fp)
{
	return bucket_holds(cf, bucket_read(cf, i), fp);
}

/* Is the parked fingerprint one of this key's? */
static bool victim_matches(const struct sieve_cuckoo *cf, u32 fp, u32 i1, u32 i2)
{
	return cf->victim_used && cf->victim_fp == fp &&
	       (cf->victim_bucket == i1 || cf->victim_bucket == i2);
}

static u32 cuckoo_count_at(const struct sieve_cuckoo *cf, u32 fp, u32 i1, u32 i2)
{
	u32 n = bucket_count(cf, i1, fp);

	if (i2 != i1)
		n += bucket_count(cf, i2, fp);
	return n + victim_matches(cf, fp, i1, i2);
}

/* Replaces the first slot holding @old in bucket @i by @new; false if none. */
static bool bucket_replace(struct sieve_cuckoo *cf, u32 i, u32 old, u32 new)
{
	u64 bucket = bucket_read(cf, i);
	u32 slot;

	for (slot = 0; slot < SIEVE_CUCKOO_SLOTS; slot++) {
		if (slot_get(cf, bucket, slot) == old) {
			bucket_write(cf, i, slot_set(cf, bucket, slot, new));
			return true;
		}
	}
	return false;
}

static u32 next_random(struct sieve_cuckoo *cf)
{
	u32 x = cf->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	cf->rng = x;
	return x;
}

/*
 * Stores @fp in bucket @i or its alternate, kicking a random resident to
 * its own alternate when both are full. After CUCKOO_MAX_KICKS the
 * fingerprint left in hand is parked in the victim slot: nothing is lost,
 * and the table reports itself full until a delete makes room.
 */
static void cuckoo_place(struct sieve_cuckoo *cf, u32 i, u32 fp)
{
	u32 kick;

	if (bucket_replace(cf, i, 0, fp))
		return;
	i = alt_bucket(cf, i, fp);
	for (kick = 0; kick < CUCKOO_MAX_KICKS; kick++) {
		u64 bucket;
		u32 slot, evicted;

		if (bucket_replace(cf, i, 0, fp))
			return;
		bucket = bucket_read(cf, i);
		slot = next_random(cf) % SIEVE_CUCKOO_SLOTS;
		evicted = slot_get(cf, bucket, slot);
		bucket_write(cf, i, slot_set(cf, bucket, slot, fp));
		fp = evicted;
		i = alt_bucket(cf, i, fp);
	}
	cf->victim_used = true;
	cf->victim_fp = fp;
	cf->victim_bucket = i;
}

int sieve_cuckoo_add(struct sieve_filter *f, u64 h, u32 flags)
{
	struct sieve_cuckoo *cf = to_cuckoo(f);
	u32 fp, i1, i2, copies;

	if (cf->victim_used)
		return -ENOSPC;
	key_place(cf, h, &fp, &i1, &i2);
	copies = cuckoo_count_at(cf, fp, i1, i2);
	if (copies && (flags & SIEVE_ADD_IF_ABSENT))
		return 1;
	/* Its two buckets hold nothing else: kicking could only go round. */
	if (copies >= (i1 == i2 ? 1 : 2) * SIEVE_CUCKOO_SLOTS)
		return -ENOSPC;
	cuckoo_place(cf, i1, fp);
	cf->nitems++;
	return copies > 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_cuckoo_add, SIEVE_INTERNAL_NS);

/*
 * Both buckets are read before either is looked at, and the answer is
 * computed without a branch on them: a branch on the first bucket's
 * contents, mispredicted for about half the stored keys, held the second
 * load back, and a loop of single calls could not overlap the misses of
 * consecutive keys (make bench: 64M keys, single queries).
 */
bool sieve_cuckoo_contains(const struct sieve_filter *f, u64 h)
{
	const struct sieve_cuckoo *cf = to_cuckoo(f);
	u32 fp, i1, i2;
	u64 b1, b2;

	key_place(cf, h, &fp, &i1, &i2);
	b1 = bucket_read(cf, i1);
	b2 = bucket_read(cf, i2);
	return bucket_has(cf, b1, fp) | bucket_has(cf, b2, fp) |
	       victim_matches(cf, fp, i1, i2);
}
EXPORT_SYMBOL_NS_GPL(sieve_cuckoo_contains, SIEVE_INTERNAL_NS);

static u32 cuckoo_count(const struct sieve_filter *f, u64 h)
{
	const struct sieve_cuckoo *cf = to_cuckoo(f);
	u32 fp, i1, i2;

	key_place(cf, h, &fp, &i1, &i2);
	return cuckoo_count_at(cf, fp, i1, i2);
}

static int cuckoo_del(struct sieve_filter *f, u64 h)
{
	struct sieve_cuckoo *cf = to_cuckoo(f);
	u32 fp, i1, i2;

	key_place(cf, h, &fp, &i1, &i2);
	if (victim_matches(cf, fp, i1, i2)) {
		cf->victim_used = false;
		cf->nitems--;
		return 0;
	}
	if (!bucket_replace(cf, i1, fp, 0) && !bucket_replace(cf, i2, fp, 0))
		return -ENOENT;
	cf->nitems--;
	/* A slot is free now: give the parked fingerprint another chance. */
	if (cf->victim_used) {
		cf->victim_used = false;
		cuckoo_place(cf, cf->victim_bucket, cf->victim_fp);
	}
	return 0;
}

/*
 * Both buckets of a key. A bucket is read as 8 bytes from its first byte,
 * which crosses into the next cache line for 7 buckets in 64: prefetch
 * both ends (the same line, mostly, at no cost).
 */
static void cuckoo_prefetch(const struct sieve_filter *f, u64 h, bool write)
{
	const struct sieve_cuckoo *cf = to_cuckoo(f);
	u32 fp, i1, i2;

	key_place(cf, h, &fp, &i1, &i2);
	sieve_prefetch(bucket_addr(cf, i1), write);
	sieve_prefetch(bucket_addr(cf, i1) + 7, write);
	sieve_prefetch(bucket_addr(cf, i2), write);
	sieve_prefetch(bucket_addr(cf, i2) + 7, write);
}

static void cuckoo_clear(struct sieve_filter *f)
{
	struct sieve_cuckoo *cf = to_cuckoo(f);

	sieve_zero(cf->table, f->table_bytes);
	cf->nitems = 0;
	cf->victim_used = false;
}

static int cuckoo_merge(struct sieve_filter *dst, const struct sieve_filter *src)
{
	return -EOPNOTSUPP;
}

/* The count of fingerprints is kept: no need to read the table. */
static void cuckoo_summarize(const struct sieve_filter *f, struct sieve_filter_summary *out)
{
	u64 items = READ_ONCE(to_cuckoo(f)->nitems);

	out->items = items;
	out->fpr_ppb = sieve_expected_fpr_ppb(&f->geo, items);
	out->fill_ppm = sieve_fill_ppm(items, f->geo.nbuckets * SIEVE_CUCKOO_SLOTS);
}

static void cuckoo_save_state(const struct sieve_filter *f, struct sieve_snapshot_layer *l)
{
	const struct sieve_cuckoo *cf = to_cuckoo(f);

	l->items = cf->nitems;
	l->victim_fp = cf->victim_used ? cf->victim_fp : 0;
	l->victim_bucket = cf->victim_used ? cf->victim_bucket : 0;
}

/* Fingerprints in the table; every nonzero slot is one. */
static u64 cuckoo_recount(const struct sieve_cuckoo *cf)
{
	u64 n = 0;
	u32 i, slot;

	for (i = 0; i <= cf->bucket_mask; i++) {
		u64 bucket = bucket_read(cf, i);

		for (slot = 0; slot < SIEVE_CUCKOO_SLOTS; slot++)
			n += slot_get(cf, bucket, slot) != 0;
		if ((i & 65535) == 65535)
			cond_resched();
	}
	return n;
}

/*
 * The table came from a snapshot: the 8 padding bytes must be zero, the
 * victim a possible fingerprint in a real bucket, and the item count the
 * table's own (an add trusts it to say when the table is full).
 */
static int cuckoo_load_state(struct sieve_filter *f, const struct sieve_snapshot_layer *l)
{
	struct sieve_cuckoo *cf = to_cuckoo(f);
	u64 pad = get_unaligned_le64(cf->table + f->table_bytes - 8);
	u64 n;

	if (pad || l->victim_fp > cf->slot_mask || l->victim_bucket > cf->bucket_mask ||
	    (!l->victim_fp && l->victim_bucket))
		return -EINVAL;
	n = cuckoo_recount(cf) + (l->victim_fp != 0);
	if (n != l->items)
		return -EINVAL;
	cf->nitems = n;
	cf->victim_used = l->victim_fp != 0;
	cf->victim_fp = l->victim_fp;
	cf->victim_bucket = l->victim_bucket;
	return 0;
}

static const struct sieve_filter_ops sieve_cuckoo_ops = {
	.add = sieve_cuckoo_add,
	.contains = sieve_cuckoo_contains,
	.del = cuckoo_del,
	.count = cuckoo_count,
	.prefetch_lines = cuckoo_prefetch,
	.clear = cuckoo_clear,
	.merge = cuckoo_merge,
	.summarize = cuckoo_summarize,
	.save_state = cuckoo_save_state,
	.load_state = cuckoo_load_state,
};

int sieve_cuckoo_check(const struct sieve_geometry *geo, u64 *table_bytes)
{
	u64 bits;

	if (geo->nbuckets < 2 || !is_power_of_2(geo->nbuckets) ||
	    geo->fp_bits < SIEVE_CUCKOO_MIN_FP_BITS ||
	    geo->fp_bits > SIEVE_CUCKOO_MAX_FP_BITS || geo->nbits || geo->nhashes)
		return -EINVAL;
	if (check_mul_overflow(geo->nbuckets, (u64)SIEVE_CUCKOO_SLOTS * geo->fp_bits, &bits) ||
	    bits / 8 + 8 > SIEVE_MAX_TABLE_BYTES)
		return -E2BIG;
	*table_bytes = DIV_ROUND_UP_ULL(bits, 8) + 8;
	return 0;
}

struct sieve_filter *sieve_cuckoo_alloc(const struct sieve_geometry *geo, u64 table_bytes)
{
	struct sieve_cuckoo *cf;
	u64 bytes;

	if (check_add_overflow((u64)sizeof(*cf), table_bytes, &bytes))
		return NULL;
	cf = sieve_zalloc(bytes);
	if (!cf)
		return NULL;
	cf->bucket_mask = geo->nbuckets - 1;
	cf->slot_mask = (1U << geo->fp_bits) - 1;
	cf->bucket_mask_bits = geo->fp_bits * SIEVE_CUCKOO_SLOTS == 64 ? U64_MAX :
			       (1ULL << (geo->fp_bits * SIEVE_CUCKOO_SLOTS)) - 1;
	cf->slot_lows = cf->bucket_mask_bits / cf->slot_mask;	/* 1 every fp_bits bits */
	cf->slot_highs = cf->slot_lows << (geo->fp_bits - 1);
	cf->rng = geo->seed | 1;	/* xorshift must not start at 0 */
	cf->filter.ops = &sieve_cuckoo_ops;
	cf->filter.table = cf->table;
	cf->filter.alloc_bytes = bytes;
	return &cf->filter;
}
