// SPDX-License-Identifier: GPL-2.0
/*
 * libsieve's local filters: the module's filter cores in this process,
 * with the module's rules for layers (scalable filters), counters and
 * batches, so that a local filter and a kernel one built from the same keys
 * hold the same tables.
 */
#include "filter.h"
#include "snapshot.h"
#include "local.h"

/* Keys hashed and prefetched together by the cores' batch calls. */
#define BATCH_CHUNK	256

static bool bloom_type(u32 type)
{
	return type == SIEVE_BLOOM || type == SIEVE_BLOCKED_BLOOM;
}

static bool scalable(const struct sieve_local *f)
{
	return f->flags & SIEVE_CREATE_SCALABLE;
}

/*
 * Layer @i of a scalable filter (or the only layer of a sized one): its
 * capacity is capacity * growth^i and its rate fpp / 2^(i + 1), so the
 * rates of all layers sum to less than fpp.
 */
static int layer_size(const struct sieve_local *f, u32 i, u64 *capacity,
		      struct sieve_geometry *geo)
{
	u64 cap = f->capacity;
	u32 fpp = f->fpp_ppb, j;
	int err;

	if (scalable(f)) {
		for (j = 0; j < i; j++)
			if (check_mul_overflow(cap, (u64)f->growth, &cap))
				return -E2BIG;
		fpp >>= i + 1;
	}
	err = sieve_size(f->type, cap, fpp, geo);
	if (err)
		return err;
	geo->seed = f->seed;
	*capacity = cap;
	return 0;
}

static int add_layer(struct sieve_local *f)
{
	struct sieve_snapshot_layer_src *l = &f->layers[f->nlayers];
	struct sieve_geometry geo;
	u64 capacity;
	int err = layer_size(f, f->nlayers, &capacity, &geo);

	if (err)
		return err;
	err = sieve_filter_create(&geo, &l->filter);
	if (err)
		return err;
	l->capacity = capacity;
	l->items = 0;
	f->nlayers++;
	return 0;
}

static int check_params(const struct sieve_params *p)
{
	if (p->type < SIEVE_BLOOM || p->type > SIEVE_CUCKOO ||
	    (p->flags & ~SIEVE_CREATE_FLAGS_ALL) || (p->flags & SIEVE_CREATE_EPHEMERAL))
		return -EINVAL;
	if (p->flags & SIEVE_CREATE_SCALABLE) {
		if ((p->flags & SIEVE_CREATE_GEOMETRY) ||
		    (p->growth && (p->growth < 2 || p->growth > 16)) ||
		    (p->max_layers && (p->max_layers < 2 || p->max_layers > SIEVE_MAX_LAYERS)))
			return -EINVAL;
	} else if (p->growth || p->max_layers) {
		return -EINVAL;
	}
	if (p->flags & SIEVE_CREATE_GEOMETRY)
		return (p->geo.type && p->geo.type != p->type) || p->capacity || p->fpp_ppb ?
		       -EINVAL : 0;
	if (!p->capacity || !p->fpp_ppb || p->fpp_ppb >= SIEVE_PPB)
		return -EINVAL;
	return p->capacity > SIEVE_MAX_CAPACITY ? -E2BIG : 0;
}

int sieve_local_create(const struct sieve_params *p, struct sieve_local **out)
{
	struct sieve_local *f;
	int err = check_params(p);

	if (err)
		return err;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->type = p->type;
	f->flags = p->flags;
	f->seed = p->flags & SIEVE_CREATE_SEED ? p->seed : sieve_random_u32();
	f->max_layers = 1;
	if (scalable(f)) {
		f->growth = p->growth ? p->growth : 2;
		f->max_layers = p->max_layers ? p->max_layers : 8;
	}
	if (p->flags & SIEVE_CREATE_GEOMETRY) {
		struct sieve_geometry geo = p->geo;

		geo.type = p->type;
		geo.seed = f->seed;
		err = sieve_filter_create(&geo, &f->layers[0].filter);
		if (!err)
			f->nlayers = 1;
	} else {
		f->capacity = p->capacity;
		f->fpp_ppb = p->fpp_ppb;
		err = add_layer(f);
	}
	if (err) {
		free(f);
		return err;
	}
	*out = f;
	return 0;
}

void sieve_local_destroy(struct sieve_local *f)
{
	u32 i;

	if (!f)
		return;
	for (i = 0; i < f->nlayers; i++)
		sieve_filter_destroy(f->layers[i].filter);
	free(f);
}

static int check_key(const void *key, u32 len)
{
	return !key || !len || len > SIEVE_MAX_KEY_LEN ? -EINVAL : 0;
}

static u64 key_hash(const struct sieve_local *f, const void *key, u32 len)
{
	/* Every layer has the same seed: one hash serves them all. */
	return sieve_filter_hash(f->layers[0].filter, key, len);
}

/*
 * Growth when the newest layer is full: 0 with a new layer, else the
 * reason there is none (-ENOSPC at max_layers or when sizing cannot go
 * further, -ENOMEM).
 */
static int grow(struct sieve_local *f)
{
	int err;

	if (!scalable(f) || f->nlayers >= f->max_layers)
		return -ENOSPC;
	err = add_layer(f);
	return err == -ENOMEM ? err : err ? -ENOSPC : 0;
}

/*
 * Keys a layer holds, for growth: cuckoo tables count their fingerprints
 * (copies included); Bloom types count the adds that stored a key.
 */
static u64 layer_items(const struct sieve_snapshot_layer_src *l)
{
	return bloom_type(l->filter->geo.type) ? l->items : sieve_filter_estimate_items(l->filter);
}

/*
 * As the module adds: a key an older layer holds is present, and stored
 * nowhere unless the filter counts copies (cuckoo without
 * SIEVE_ADD_IF_ABSENT: the copy goes into the newest layer). Every add
 * that stores a fingerprint or sets a key's bits counts as inserted.
 */
static int add_hash(struct sieve_local *f, u64 hash, u32 flags)
{
	struct sieve_snapshot_layer_src *top = &f->layers[f->nlayers - 1];
	bool copies = !bloom_type(f->type) && !(flags & SIEVE_ADD_IF_ABSENT);
	bool present = false;
	u32 i;
	int ret;

	for (i = 0; i + 1 < f->nlayers && !present; i++)
		present = f->layers[i].filter->ops->contains(f->layers[i].filter, hash);
	if (present && !copies)
		return 1;
	if (scalable(f) && layer_items(top) >= top->capacity) {
		/*
		 * Without a new layer the last one takes the key: Bloom types
		 * at a rising rate, cuckoo until its table refuses it.
		 */
		ret = grow(f);
		if (ret == -ENOMEM)
			return ret;
		top = &f->layers[f->nlayers - 1];
	}
	ret = top->filter->ops->add(top->filter, hash, flags);
	if (ret == -ENOSPC) {
		int err = grow(f);

		if (err == -ENOMEM)
			return err;
		if (!err) {
			top = &f->layers[f->nlayers - 1];
			ret = top->filter->ops->add(top->filter, hash, flags);
		}
	}
	if (ret < 0)
		return ret;
	if (!ret || copies) {
		top->items++;
		f->inserted++;
	}
	return ret || present;
}

int sieve_local_add(struct sieve_local *f, const void *key, u32 len, u32 flags)
{
	int err = check_key(key, len);

	if (err)
		return err;
	if (flags & ~SIEVE_ADD_FLAGS_ALL)
		return -EINVAL;
	return add_hash(f, key_hash(f, key, len), flags);
}

static bool contains_hash(const struct sieve_local *f, u64 hash)
{
	u32 i;

	for (i = f->nlayers; i-- > 0;)
		if (f->layers[i].filter->ops->contains(f->layers[i].filter, hash))
			return true;
	return false;
}

int sieve_local_query(struct sieve_local *f, const void *key, u32 len)
{
	int err = check_key(key, len);
	bool hit;

	if (err)
		return err;
	hit = contains_hash(f, key_hash(f, key, len));
	f->queries++;
	f->hits += hit;
	return hit;
}

static int delete_hash(struct sieve_local *f, u64 hash)
{
	u32 i;

	if (bloom_type(f->type))
		return -EOPNOTSUPP;
	/* Newest first: a key's latest copy is the likeliest to be there. */
	for (i = f->nlayers; i-- > 0;) {
		struct sieve_filter *l = f->layers[i].filter;

		if (!l->ops->del(l, hash)) {
			if (f->layers[i].items)
				f->layers[i].items--;
			f->deleted++;
			return 1;
		}
	}
	return 0;
}

int sieve_local_delete(struct sieve_local *f, const void *key, u32 len)
{
	int err = check_key(key, len);

	return err ? err : delete_hash(f, key_hash(f, key, len));
}

/* One chunk of a batch through the cores' prefetching batch calls. */
static void batch_chunk_fast(struct sieve_local *f, u32 op, u32 flags,
			     const struct sieve_key *keys, u32 n, u8 *results, u64 *present)
{
	struct sieve_filter *l = f->layers[0].filter;
	bool hit[BATCH_CHUNK];
	int added[BATCH_CHUNK];
	u32 i;

	if (op == SIEVE_BATCH_QUERY)
		sieve_filter_contains_batch(l, keys, n, hit);
	else
		sieve_filter_add_batch(l, keys, n, flags, added);
	for (i = 0; i < n; i++) {
		bool yes = op == SIEVE_BATCH_QUERY ? hit[i] : added[i] == 1;

		if (op == SIEVE_BATCH_QUERY) {
			f->queries++;
			f->hits += yes;
		} else if (!yes) {
			f->layers[0].items++;
			f->inserted++;
		}
		if (results)
			results[i] = yes;
		*present += yes;
	}
}

/*
 * The fast path holds for one layer that cannot fail: any query, and adds
 * to a Bloom-type filter that will not grow in this chunk. Everything else
 * goes key by key, stopping at the first error.
 */
static bool batch_fast(const struct sieve_local *f, u32 op, u32 n)
{
	const struct sieve_snapshot_layer_src *l = &f->layers[0];

	if (f->nlayers != 1)
		return false;
	if (op == SIEVE_BATCH_QUERY)
		return true;
	return op == SIEVE_BATCH_ADD && bloom_type(f->type) &&
	       (!scalable(f) || l->items + n < l->capacity);
}

static int batch_slow(struct sieve_local *f, u32 op, u32 flags, const struct sieve_key *keys,
		      u32 n, u8 *results, struct sieve_batch_stats *st)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u64 hash = key_hash(f, keys[i].data, keys[i].len);
		int ret;

		if (op == SIEVE_BATCH_ADD) {
			ret = add_hash(f, hash, flags);
		} else if (op == SIEVE_BATCH_DELETE) {
			ret = delete_hash(f, hash);
		} else {
			ret = contains_hash(f, hash);
			f->queries++;
			f->hits += ret;
		}
		if (ret < 0)
			return ret;
		if (results)
			results[i] = ret;
		st->present += ret;
		st->done++;
	}
	return 0;
}

int sieve_local_batch(struct sieve_local *f, u32 op, u32 flags, const void *keys,
		      const u32 *lens, size_t count, u8 *results, struct sieve_batch_stats *stats)
{
	struct sieve_batch_stats st = { 0, 0 };
	struct sieve_key chunk[BATCH_CHUNK];
	const u8 *k = keys;
	size_t i;
	int err = 0;

	if (op < SIEVE_BATCH_ADD || op > SIEVE_BATCH_DELETE ||
	    (flags & ~(op == SIEVE_BATCH_ADD ? SIEVE_ADD_FLAGS_ALL : 0)))
		err = -EINVAL;
	for (i = 0; !err && i < count; i++)
		if (!lens[i] || lens[i] > SIEVE_MAX_KEY_LEN)
			err = -EINVAL;
	while (!err && st.done < count) {
		u32 n = count - st.done < BATCH_CHUNK ? (u32)(count - st.done) : BATCH_CHUNK;
		u8 *res = results ? results + st.done : NULL;

		for (i = 0; i < n; i++) {
			chunk[i].data = k;
			chunk[i].len = lens[st.done + i];
			k += chunk[i].len;
		}
		if (batch_fast(f, op, n)) {
			batch_chunk_fast(f, op, flags, chunk, n, res, &st.present);
			st.done += n;
		} else {
			err = batch_slow(f, op, flags, chunk, n, res, &st);
		}
	}
	if (stats)
		*stats = st;
	return err;
}

int sieve_local_clear(struct sieve_local *f)
{
	u32 i;

	for (i = 1; i < f->nlayers; i++) {
		sieve_filter_destroy(f->layers[i].filter);
		f->layers[i].filter = NULL;
	}
	f->nlayers = 1;
	sieve_filter_clear(f->layers[0].filter);
	f->layers[0].items = 0;
	f->inserted = 0;
	f->deleted = 0;
	return 0;
}

int sieve_local_merge(struct sieve_local *dst, const struct sieve_local *src)
{
	const struct sieve_filter *s = src->layers[0].filter;
	struct sieve_filter *d = dst->layers[0].filter;

	if (dst == src || scalable(dst) || scalable(src) || dst->nlayers != 1 ||
	    src->nlayers != 1 || !bloom_type(dst->type) ||
	    memcmp(&d->geo, &s->geo, sizeof(d->geo)))
		return -EINVAL;
	return sieve_filter_merge(d, s);
}

int sieve_local_info(const struct sieve_local *f, struct sieve_info *out)
{
	struct sieve_filter_summary all = {}, one;
	u32 i;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->create_flags = f->flags;
	out->geo = f->layers[0].filter->geo;
	out->fpp_ppb = f->fpp_ppb;
	out->nlayers = f->nlayers;
	out->max_layers = f->max_layers;
	out->growth = f->growth;
	out->inserted = f->inserted;
	out->deleted = f->deleted;
	out->queries = f->queries;
	out->hits = f->hits;
	out->memory_bytes = sizeof(*f);
	/* As the kernel's INFO: one read of each table, the same rule for the layers. */
	for (i = 0; i < f->nlayers; i++) {
		const struct sieve_filter *l = f->layers[i].filter;

		out->capacity += f->layers[i].capacity;
		out->memory_bytes += l->alloc_bytes;
		sieve_filter_summarize(l, &one);
		sieve_summary_add_layer(&all, &one);
	}
	out->items = all.items;
	out->fpr_ppb = all.fpr_ppb;
	out->fill_ppm = all.fill_ppm;
	out->snapshot_bytes = sieve_snapshot_bytes(f->layers, f->nlayers);
	return 0;
}
