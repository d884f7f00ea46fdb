// SPDX-License-Identifier: GPL-2.0
/*
 * libsieve's local filters: the module's filter cores in this process,
 * with the module's rules for layers (scalable filters), counters and
 * batches, so that a local filter and a kernel one built from the same keys
 * hold the same tables.
 */
#include "filter.h"
#include "layers.h"
#include "snapshot.h"
#include "local.h"
#include "params.h"

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
 * The size of the next layer: the first from the filter's own capacity and
 * rate (a scalable filter's at the rate layers.h gives layer 0), the
 * others stacked as layers.h says.
 */
static int layer_size(const struct sieve_local *f, u64 *capacity, struct sieve_geometry *geo)
{
	int err;

	if (f->nlayers) {
		err = sieve_layer_next(f->type, f->fpp_ppb, f->growth, f->nlayers,
				       f->layers[f->nlayers - 1].capacity, capacity, geo);
	} else {
		*capacity = f->capacity;
		err = sieve_first_layer_size(f->type, f->flags, f->fpp_ppb, f->capacity, geo);
	}
	if (!err)
		geo->seed = f->seed;
	return err;
}

static int add_layer(struct sieve_local *f)
{
	struct sieve_snapshot_layer_src *l = &f->layers[f->nlayers];
	struct sieve_geometry geo;
	u64 capacity;
	int err = layer_size(f, &capacity, &geo);

	if (err)
		return err;
	err = sieve_filter_create(&geo, &l->filter);
	if (err)
		return err;
	l->filter->single_writer = true;	/* libsieve.h: one thread at a time */
	l->capacity = capacity;
	l->items = 0;
	f->nlayers++;
	return 0;
}

/* The create contract, and nothing but sieve_local_destroy() ends a local filter. */
static int check_params(const struct sieve_params *p)
{
	return p->flags & SIEVE_CREATE_EPHEMERAL ? -EINVAL : sieve_params_check(p);
}

int sieve_local_create(const struct sieve_params *p, struct sieve_local **out)
{
	struct sieve_create_spec spec;
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
	sieve_params_spec(p, &spec);
	sieve_create_layering(&spec, &f->growth, &f->max_layers);
	if (p->flags & SIEVE_CREATE_GEOMETRY) {
		struct sieve_geometry geo;

		sieve_params_geometry(p, &geo);
		geo.seed = f->seed;
		err = sieve_filter_create(&geo, &f->layers[0].filter);
		if (!err) {
			f->layers[0].filter->single_writer = true;
			f->nlayers = 1;
		}
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

int sieve_local_plan(const struct sieve_params *p, struct sieve_plan *out)
{
	struct sieve_geometry *geo = &out->geo;
	bool sized = !(p->flags & SIEVE_CREATE_GEOMETRY);
	int err = check_params(p);

	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	if (sized) {
		err = sieve_first_layer_size(p->type, p->flags, p->fpp_ppb, p->capacity, geo);
	} else {
		*geo = p->geo;
		geo->type = p->type;
	}
	geo->seed = 0;
	if (!err)
		err = sieve_geometry_check(geo, &out->table_bytes);
	if (!err && sized)
		out->expected_fpr_ppb = sieve_expected_fpr_ppb(geo, p->capacity);
	return err;
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
 * A new layer, as the module stacks one: 0, -ENOSPC when sizing refuses it
 * (and any later one: the sizes only grow), or -ENOMEM.
 */
static int grow(struct sieve_local *f)
{
	int err = add_layer(f);

	return err == -ENOMEM ? err : err ? -ENOSPC : 0;
}

static bool older_contain(const struct sieve_local *f, u64 hash)
{
	u32 i;

	for (i = 0; i + 1 < f->nlayers; i++)
		if (sieve_filter_contains_hash(f->layers[i].filter, hash))
			return true;
	return false;
}

/*
 * One try at an add, as the module makes it: a key an older layer holds
 * is present, and stored nowhere unless the filter counts copies (cuckoo
 * without SIEVE_ADD_IF_ABSENT: the copy goes into the newest layer). Every
 * add that stores a fingerprint or sets a key's bits counts as inserted.
 * -EAGAIN: layers.h wants a new layer first (only if @may_grow).
 */
static int add_try(struct sieve_local *f, u64 hash, u32 flags, bool may_grow)
{
	struct sieve_snapshot_layer_src *top = &f->layers[f->nlayers - 1];
	bool copies = !bloom_type(f->type) && !(flags & SIEVE_ADD_IF_ABSENT);
	bool present = older_contain(f, hash);
	int ret;

	if (present && !copies)
		return 1;
	if (may_grow && sieve_layer_full(top->items, top->capacity))
		return -EAGAIN;
	ret = sieve_filter_add_hash(top->filter, hash, flags);
	if (ret == -ENOSPC && may_grow && sieve_layer_refused_full(top->filter, hash))
		return -EAGAIN;
	if (ret < 0)
		return ret;
	if (!ret || copies) {
		top->items++;
		f->inserted++;
	}
	return ret || present;
}

/*
 * Each retry follows a new layer, or is the last (no layer can follow:
 * the newest takes the key, Bloom types at a rising rate, cuckoo until its
 * table refuses it).
 */
static int add_hash(struct sieve_local *f, u64 hash, u32 flags)
{
	bool sizable = true;
	int ret, err;

	for (;;) {
		ret = add_try(f, hash, flags, sizable &&
			      sieve_layers_may_grow(f->flags, f->nlayers, f->max_layers));
		if (ret != -EAGAIN)
			return ret;
		err = grow(f);
		if (err == -ENOMEM)
			return err;
		sizable = !err;
	}
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
		if (sieve_filter_contains_hash(f->layers[i].filter, hash))
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
