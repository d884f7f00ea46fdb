// SPDX-License-Identifier: GPL-2.0
/*
 * What a registered filter tells about itself: its shape and counters (the
 * INFO command, /proc/sieve) and its snapshot (the EXPORT command).
 *
 * Both take the filter's resize_lock only to take references to its layers
 * (and read their small fields): the tables are read after, with no lock a
 * writer needs. So a report or export, however large the table and
 * however often asked (the agent's metrics run INFO over every filter on
 * every scrape), never makes a writer wait for a whole-table scan: growth,
 * clear, exchange and merge wait at most for a hold of O(layers). A layer
 * a clear or destroy lets go meanwhile is freed by the reader's last put.
 */
#include <linux/sched/signal.h>

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

/*
 * References to the layers @s has now, in @held (room for SIEVE_MAX_LAYERS);
 * returns how many. Called under resize_lock.
 */
static u32 sieve_hold_layers(struct sieve *s, const struct sieve_layers *L,
			     struct sieve_layer **held)
{
	u32 i;

	lockdep_assert_held(&s->resize_lock);
	for (i = 0; i < L->n; i++) {
		held[i] = L->l[i];
		sieve_layer_get(held[i]);
	}
	return L->n;
}

static void sieve_put_held(struct sieve_layer **held, u32 n)
{
	while (n--)
		sieve_layer_put(held[n]);
}

void sieve_report(struct sieve *s, struct sieve_report *r)
{
	struct sieve_layer *held[SIEVE_MAX_LAYERS];
	struct sieve_filter_summary all = {}, one;
	struct sieve_layers *L;
	u32 i, n;

	memset(r, 0, sizeof(*r));
	mutex_lock(&s->resize_lock);
	L = rcu_dereference_protected(s->layers, lockdep_is_held(&s->resize_lock));
	r->geo = L->l[0]->f->geo;
	r->fpp_ppb = s->fpp_ppb;
	r->nlayers = L->n;
	for (i = 0; i < L->n; i++)
		r->capacity += L->l[i]->capacity;
	r->snapshot_bytes = sieve_layers_snapshot_bytes(L);
	/* Growth and exchange change it under the lock too. */
	r->memory_bytes = atomic64_read(&s->charged);
	n = sieve_hold_layers(s, L, held);
	mutex_unlock(&s->resize_lock);

	/* The scans (a Bloom table's every word), with no lock held. */
	for (i = 0; i < n; i++) {
		sieve_filter_summarize(held[i]->f, &one);
		sieve_summary_add_layer(&all, &one);
	}
	sieve_put_held(held, n);
	r->items = all.items;
	r->fpr_ppb = all.fpr_ppb;
	r->fill_ppm = all.fill_ppm;
	sieve_stats_sum(s, &r->stats);
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

/* Reserves @bytes from the writers' or (@reader) the readers' budget. */
static int sieve_export_reserve(bool reader, u64 bytes)
{
	return reader ? sieve_reader_mem_reserve(bytes) : sieve_mem_reserve(bytes);
}

static void sieve_export_release(bool reader, u64 bytes)
{
	if (reader)
		sieve_reader_mem_release(bytes);
	else
		sieve_mem_release(bytes);
}

/*
 * Copies after a cuckoo write or an exchange came between: a reader gives
 * up after so many (-EAGAIN), a writer stops writes for one frozen copy.
 */
#define SIEVE_EXPORT_TRIES	8

/**
 * struct sieve_export_hold - what one unlocked export copies
 * @hdr: the snapshot header's description fields, read under resize_lock.
 * @held: references to the layers of that hold.
 * @src: the layers as the snapshot code takes them.
 * @n: layers.
 * @seq: the filter's @moving then: bumped by every cuckoo write and by an
 *	exchange, either of which makes the copy inconsistent.
 */
struct sieve_export_hold {
	struct sieve_snapshot_header hdr;
	struct sieve_layer *held[SIEVE_MAX_LAYERS];
	struct sieve_snapshot_layer_src src[SIEVE_MAX_LAYERS];
	u32 n;
	unsigned int seq;
};

static void sieve_export_take(struct sieve *s, struct sieve_export_hold *h)
{
	struct sieve_layers *L;
	u32 i;

	memset(h, 0, sizeof(*h));
	mutex_lock(&s->resize_lock);
	L = rcu_dereference_protected(s->layers, lockdep_is_held(&s->resize_lock));
	sieve_fill_header(s, L, &h->hdr);
	h->n = sieve_hold_layers(s, L, h->held);
	for (i = 0; i < h->n; i++) {
		h->src[i].filter = h->held[i]->f;
		h->src[i].capacity = h->held[i]->capacity;
		h->src[i].items = atomic64_read(&h->held[i]->items);
	}
	/*
	 * Read before the lock is dropped: an exchange, which needs it,
	 * bumps @moving after this, so the copy sees it.
	 */
	h->seq = read_seqcount_begin(&s->moving);
	mutex_unlock(&s->resize_lock);
}

/*
 * One copy with no lock held: 0, -EAGAIN if a cuckoo write or an exchange
 * came between (nothing is kept), or the reservation's or allocation's
 * error. Bloom adds meanwhile may or may not be in it.
 */
static int sieve_export_unlocked(struct sieve *s, struct sieve_export_hold *h, bool reader,
				 void **bufp, u64 *bytesp)
{
	u64 bytes;
	void *buf;
	u8 *out;
	int err;
	u32 i;

	sieve_export_take(s, h);
	bytes = sieve_snapshot_bytes(h->src, h->n);
	err = sieve_export_reserve(reader, bytes);
	if (err)
		goto out_put;
	err = -ENOMEM;
	buf = kvzalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!buf)
		goto out_release;
	memcpy(buf, &h->hdr, sizeof(h->hdr));
	out = (u8 *)buf + sizeof(struct sieve_snapshot_header);
	for (i = 0; i < h->n; i++)
		out += sieve_snapshot_put_layer(&h->src[i], out);
	err = -EAGAIN;
	if (read_seqcount_retry(&s->moving, h->seq))
		goto out_free_buf;
	sieve_put_held(h->held, h->n);
	sieve_snapshot_seal(buf, bytes);
	*bufp = buf;
	*bytesp = bytes;
	return 0;

out_free_buf:
	kvfree(buf);
out_release:
	sieve_export_release(reader, bytes);
out_put:
	sieve_put_held(h->held, h->n);
	return err;
}

/*
 * A writer's last resort for a cuckoo filter under constant writes: the
 * whole snapshot under resize_lock, its tables copied with writers
 * stopped (sieve_put_layers_frozen()). Counted against the writers' budget.
 */
static int sieve_export_frozen(struct sieve *s, void **bufp, u64 *bytesp)
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

/*
 * A snapshot of @s, consistent as of one moment for cuckoo filters (Bloom
 * adds running meanwhile may or may not be in it). Copied without a lock a
 * writer waits for; a cuckoo write or an exchange during the copy makes
 * it start over, SIEVE_EXPORT_TRIES times at most.
 */
int sieve_export(struct sieve *s, bool reader, void **bufp, u64 *bytesp)
{
	struct sieve_export_hold *h;
	int err = -ENOMEM, tries;

	h = kmalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return err;
	for (tries = 0; tries < SIEVE_EXPORT_TRIES; tries++) {
		err = sieve_export_unlocked(s, h, reader, bufp, bytesp);
		if (err != -EAGAIN)
			goto out_free;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto out_free;
		}
		cond_resched();
	}
	/* Writes kept coming: a writer may stop them for a copy, a reader may not. */
	if (!reader)
		err = sieve_export_frozen(s, bufp, bytesp);
out_free:
	kfree(h);
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
