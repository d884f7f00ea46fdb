// SPDX-License-Identifier: GPL-2.0
/*
 * What a registered filter tells about itself: its shape and counters (the
 * INFO command, /proc/sieve) and its snapshot (the EXPORT command). Both
 * hold the filter's resize_lock, so its layers stay put while whole tables
 * are read.
 */
#include "registry.h"

static void sieve_stats_sum(struct sieve *s, struct sieve_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct sieve_stats *st = per_cpu_ptr(s->stats, cpu);

		sum->inserted += READ_ONCE(st->inserted);
		sum->deleted += READ_ONCE(st->deleted);
		sum->queries += READ_ONCE(st->queries);
		sum->hits += READ_ONCE(st->hits);
	}
}

/* The layers, as the snapshot code takes them; kfree() the array. */
static struct sieve_snapshot_layer_src *sieve_layer_srcs(const struct sieve_layers *L)
{
	struct sieve_snapshot_layer_src *src;
	u32 i;

	src = kcalloc(L->n, sizeof(*src), GFP_KERNEL);
	if (!src)
		return NULL;
	for (i = 0; i < L->n; i++) {
		src[i].filter = L->l[i]->f;
		src[i].capacity = L->l[i]->capacity;
		src[i].items = atomic64_read(&L->l[i]->items);
	}
	return src;
}

/*
 * The size of @L's snapshot, as sieve_snapshot_bytes() counts it, one layer
 * at a time: no array to allocate, so INFO and the size-only EXPORT cannot
 * fail for lack of memory (and never report 0 instead).
 */
static u64 sieve_layers_snapshot_bytes(const struct sieve_layers *L)
{
	const u64 header = sizeof(struct sieve_snapshot_header);
	u64 bytes = header;
	u32 i;

	for (i = 0; i < L->n; i++) {
		struct sieve_snapshot_layer_src one = { .filter = L->l[i]->f };

		bytes += sieve_snapshot_bytes(&one, 1) - header;
	}
	return bytes;
}

void sieve_report(struct sieve *s, struct sieve_report *r)
{
	struct sieve_filter_summary all = {}, one;
	struct sieve_layers *L;
	u32 i;

	memset(r, 0, sizeof(*r));
	mutex_lock(&s->resize_lock);
	L = rcu_dereference_protected(s->layers, lockdep_is_held(&s->resize_lock));
	r->geo = L->l[0]->f->geo;
	r->fpp_ppb = s->fpp_ppb;
	r->nlayers = L->n;
	for (i = 0; i < L->n; i++) {
		r->capacity += L->l[i]->capacity;
		sieve_filter_summarize(L->l[i]->f, &one);
		sieve_summary_add_layer(&all, &one);
	}
	r->items = all.items;
	r->fpr_ppb = all.fpr_ppb;
	r->fill_ppm = all.fill_ppm;
	r->snapshot_bytes = sieve_layers_snapshot_bytes(L);
	/* Growth and exchange change it under the lock too. */
	r->memory_bytes = atomic64_read(&s->charged);
	mutex_unlock(&s->resize_lock);
	sieve_stats_sum(s, &r->stats);
}

/* Writes every layer; false if a cuckoo write moved fingerprints meanwhile. */
static bool sieve_put_layers(struct sieve *s, const struct sieve_snapshot_layer_src *src,
			     u32 n, u8 *out)
{
	unsigned int seq = 0;
	u32 i;

	if (s->type == SIEVE_CUCKOO)
		seq = read_seqcount_begin(&s->moving);
	for (i = 0; i < n; i++)
		out += sieve_snapshot_put_layer(&src[i], out);
	return s->type != SIEVE_CUCKOO || !read_seqcount_retry(&s->moving, seq);
}

/*
 * Cuckoo tables under constant writes: the filters (each one allocation,
 * header first, see filter.c) are copied whole while writers wait, then
 * written from the copies. All layers in one hold: a delete from an old
 * layer followed by an add to the newest must not be half in the
 * snapshot. The hold is a memcpy of the filter's tables, which the memory
 * limit bounds (they, the snapshot and the copies all count against it).
 */
static int sieve_put_layers_frozen(struct sieve *s, const struct sieve_snapshot_layer_src *src,
				   u32 n, u8 *out)
{
	struct sieve_filter *clone[SIEVE_MAX_LAYERS] = {};
	u64 bytes = 0;
	u32 i;
	int err;

	for (i = 0; i < n; i++) {
		const struct sieve_filter *f = src[i].filter;
		const u8 *table = f->table, *head = (const u8 *)f;

		/* The copy is only whole if the table is inside the allocation. */
		if (WARN_ON_ONCE(table < head + sizeof(*f) ||
				 table + f->table_bytes > head + f->alloc_bytes))
			return -EINVAL;
		bytes += f->alloc_bytes;
	}
	err = sieve_mem_reserve(bytes);
	if (err)
		return err;
	err = -ENOMEM;
	for (i = 0; i < n; i++) {
		clone[i] = kvmalloc(src[i].filter->alloc_bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!clone[i])
			goto out_free;
	}
	spin_lock_bh(&s->write_lock);
	for (i = 0; i < n; i++)
		memcpy(clone[i], src[i].filter, src[i].filter->alloc_bytes);
	spin_unlock_bh(&s->write_lock);
	for (i = 0; i < n; i++) {
		const struct sieve_filter *f = src[i].filter;
		struct sieve_snapshot_layer_src copy = src[i];

		clone[i]->table = (u8 *)clone[i] + ((const u8 *)f->table - (const u8 *)f);
		copy.filter = clone[i];
		out += sieve_snapshot_put_layer(&copy, out);
	}
	err = 0;
out_free:
	for (i = 0; i < n; i++)
		kvfree(clone[i]);
	sieve_mem_release(bytes);
	return err;
}

static void sieve_fill_header(struct sieve *s, const struct sieve_layers *L,
			      struct sieve_snapshot_header *hdr)
{
	struct sieve_stats st;

	sieve_stats_sum(s, &st);
	hdr->create_flags = s->create_flags & ~SIEVE_CREATE_EPHEMERAL;
	hdr->type = s->type;
	hdr->nlayers = L->n;
	hdr->max_layers = s->max_layers;
	hdr->growth = s->growth;
	hdr->fpp_ppb = s->fpp_ppb;
	hdr->capacity = L->l[0]->capacity;
	hdr->inserted = st.inserted;
	hdr->deleted = st.deleted;
	hdr->queries = st.queries;
	hdr->hits = st.hits;
}

/*
 * A snapshot of @s, consistent as of the call for cuckoo filters (Bloom
 * adds running meanwhile may or may not be in it).
 */
int sieve_export(struct sieve *s, void **bufp, u64 *bytesp)
{
	struct sieve_snapshot_layer_src *src;
	struct sieve_layers *L;
	u64 bytes;
	void *buf;
	int err = -ENOMEM;

	mutex_lock(&s->resize_lock);
	L = rcu_dereference_protected(s->layers, lockdep_is_held(&s->resize_lock));
	src = sieve_layer_srcs(L);
	if (!src)
		goto out_unlock;
	bytes = sieve_snapshot_bytes(src, L->n);
	err = sieve_mem_reserve(bytes);
	if (err)
		goto out_free_src;
	err = -ENOMEM;
	buf = kvzalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!buf)
		goto out_release;
	sieve_fill_header(s, L, buf);
	err = 0;
	if (!sieve_put_layers(s, src, L->n, (u8 *)buf + sizeof(struct sieve_snapshot_header)))
		err = sieve_put_layers_frozen(s, src, L->n,
					      (u8 *)buf + sizeof(struct sieve_snapshot_header));
	if (err)
		goto out_free_buf;
	sieve_snapshot_seal(buf, bytes);
	kfree(src);
	mutex_unlock(&s->resize_lock);
	*bufp = buf;
	*bytesp = bytes;
	return 0;

out_free_buf:
	kvfree(buf);
out_release:
	sieve_mem_release(bytes);
out_free_src:
	kfree(src);
out_unlock:
	mutex_unlock(&s->resize_lock);
	return err;
}

u64 sieve_export_bytes(struct sieve *s)
{
	struct sieve_layers *L;
	u64 bytes;

	mutex_lock(&s->resize_lock);
	L = rcu_dereference_protected(s->layers, lockdep_is_held(&s->resize_lock));
	bytes = sieve_layers_snapshot_bytes(L);
	mutex_unlock(&s->resize_lock);
	return bytes;
}
