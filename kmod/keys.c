// SPDX-License-Identifier: GPL-2.0
/*
 * Keys through a registered filter: add, query and delete over its layers,
 * with the growth of scalable filters. Locking is described at struct
 * sieve (registry.h).
 */
#include "layers.h"
#include "registry.h"

/* Keys one pass of the cores handles under one lock hold. */
#define SIEVE_SUB_KEYS	64
/*
 * Fewer keys than this go one by one: the batch pipeline's start and end
 * (16 keys of look-ahead) cost more than the misses it overlaps.
 */
#define SIEVE_PIPELINE_MIN	4
/* Cuckoo writes: how far ahead of its turn a key's buckets are prefetched. */
#define SIEVE_CUCKOO_AHEAD	8

/**
 * struct sieve_apply - one run of keys through a filter
 * @s: the filter.
 * @L: its layers, under rcu_read_lock() (and @s->write_lock for cuckoo
 *	writes).
 * @op: enum sieve_batch_op.
 * @flags: enum sieve_add_flags, for adds.
 * @may_grow: the caller may sleep, so a scalable filter may grow.
 * @grow: out: the run stopped because the newest layer is full and the
 *	filter may grow; the key it stopped at was not applied.
 * @st: counts to add to the filter's counters.
 */
struct sieve_apply {
	struct sieve *s;
	const struct sieve_layers *L;
	u32 op;
	u32 flags;
	bool may_grow;
	bool grow;
	struct sieve_stats st;
};

static struct sieve_layer *sieve_top(const struct sieve_layers *L)
{
	return L->l[L->n - 1];
}

static bool sieve_can_grow(const struct sieve_apply *a)
{
	return a->may_grow && !READ_ONCE(a->s->cannot_grow) &&
	       sieve_layers_may_grow(a->s->create_flags, a->L->n, a->s->max_layers);
}

/* Is the newest layer at its capacity, with room for another? */
static bool sieve_wants_layer(const struct sieve_apply *a)
{
	const struct sieve_layer *top = sieve_top(a->L);

	return sieve_can_grow(a) && sieve_layer_full(atomic64_read(&top->items), top->capacity);
}

/* Any layer but the newest may hold the key. */
static bool sieve_older_contain(const struct sieve_layers *L, u64 h)
{
	u32 i;

	for (i = 0; i + 1 < L->n; i++)
		if (sieve_filter_contains_hash(L->l[i]->f, h))
			return true;
	return false;
}

static bool sieve_layers_contain(const struct sieve_layers *L, u64 h)
{
	u32 i;

	for (i = L->n; i-- > 0;)
		if (sieve_filter_contains_hash(L->l[i]->f, h))
			return true;
	return false;
}

/*
 * A cuckoo miss is only believed if no write moved fingerprints meanwhile.
 * Readers may be BPF programs in softirq, which must not spin for as long
 * as writers keep coming: after SIEVE_QUERY_TRIES misses that each
 * overlapped a write, the key is reported as maybe present, a false
 * positive (which a filter may give) rather than a false negative.
 *
 * The layers are read after the seqcount: an exchange bumps it as it
 * gives the filter another table, whose writers (the other filter's)
 * bump only their own seqcount. A read that began on the old table and
 * missed is retried on the new one.
 */
#define SIEVE_QUERY_TRIES	8

static bool sieve_query_hash(const struct sieve *s, const struct sieve_layers *L, u64 h)
{
	unsigned int seq;
	u32 tries;
	bool hit;

	if (s->type != SIEVE_CUCKOO)
		return sieve_layers_contain(L, h);
	for (tries = 0; tries < SIEVE_QUERY_TRIES; tries++) {
		seq = read_seqcount_begin(&s->moving);
		L = rcu_dereference(s->layers);
		hit = sieve_layers_contain(L, h);
		if (hit || !read_seqcount_retry(&s->moving, seq))
			return hit;
	}
	return true;
}

static void sieve_query_keys(struct sieve_apply *a, const struct sieve_key *keys,
			     u32 n, u8 *res)
{
	const struct sieve_filter *f;
	bool hit[SIEVE_SUB_KEYS];
	unsigned int seq = 0;
	u32 i;

	if (a->s->type == SIEVE_CUCKOO) {
		seq = read_seqcount_begin(&a->s->moving);
		a->L = rcu_dereference(a->s->layers);	/* after the seqcount, as above */
	}
	/* Every layer and table of a filter has its seed: any layer hashes. */
	f = a->L->l[0]->f;
	if (a->L->n > 1 || n < SIEVE_PIPELINE_MIN) {
		for (i = 0; i < n; i++)
			res[i] = sieve_query_hash(a->s, a->L,
						  sieve_filter_hash(f, keys[i].data, keys[i].len));
		goto count;
	}
	/* One layer: the pipelined batch, then a second look at cuckoo misses. */
	sieve_filter_contains_batch(f, keys, n, hit);
	for (i = 0; i < n; i++) {
		if (!hit[i] && a->s->type == SIEVE_CUCKOO &&
		    read_seqcount_retry(&a->s->moving, seq))
			hit[i] = sieve_query_hash(a->s, a->L,
						  sieve_filter_hash(f, keys[i].data, keys[i].len));
		res[i] = hit[i];
	}
count:
	a->st.queries += n;
	for (i = 0; i < n; i++)
		a->st.hits += res[i];
}

/*
 * Bloom-type adds: a key any layer holds is present, else it goes into
 * the newest layer. Returns the keys applied.
 */
static u32 sieve_bloom_add_keys(struct sieve_apply *a, const struct sieve_key *keys,
				u32 n, u8 *res)
{
	struct sieve_layer *top = sieve_top(a->L);
	int r[SIEVE_SUB_KEYS];
	u32 i, stored = 0;

	if (a->L->n == 1 && !(a->s->create_flags & SIEVE_CREATE_SCALABLE) &&
	    n >= SIEVE_PIPELINE_MIN) {
		sieve_filter_add_batch(top->f, keys, n, a->flags, r);
		for (i = 0; i < n; i++) {
			res[i] = r[i];
			stored += !r[i];
		}
		goto out;
	}
	for (i = 0; i < n; i++) {
		u64 h = sieve_filter_hash(top->f, keys[i].data, keys[i].len);

		if (sieve_older_contain(a->L, h)) {
			res[i] = 1;
			continue;
		}
		if (sieve_wants_layer(a)) {
			a->grow = true;
			break;
		}
		res[i] = sieve_filter_add_hash(top->f, h, a->flags);
		/* Counted as it goes: the capacity check above reads it. */
		if (!res[i])
			atomic64_inc(&top->items);
	}
	n = i;
out:
	if (stored)
		atomic64_add(stored, &top->items);
	for (i = 0; i < n; i++)
		a->st.inserted += !res[i];
	return n;
}

/* One cuckoo add, under write_lock: 0 or 1 in *@res, or -errno. */
static int sieve_cuckoo_add_hash(struct sieve_apply *a, u64 h, u8 *res)
{
	struct sieve_layer *top = sieve_top(a->L);
	bool present = sieve_older_contain(a->L, h);
	int r;

	if (present && (a->flags & SIEVE_ADD_IF_ABSENT)) {
		*res = 1;
		return 0;
	}
	if (sieve_wants_layer(a)) {
		a->grow = true;
		return -EAGAIN;
	}
	write_seqcount_begin(&a->s->moving);
	r = sieve_filter_add_hash(top->f, h, a->flags);
	write_seqcount_end(&a->s->moving);
	if (r == -ENOSPC && sieve_can_grow(a) && sieve_layer_refused_full(top->f, h)) {
		a->grow = true;
		return -EAGAIN;
	}
	if (r < 0)
		return r;
	*res = r || present;
	/*
	 * An add told present with SIEVE_ADD_IF_ABSENT stored nothing; any
	 * other stored a fingerprint, a copy of a present key too, so that
	 * inserted - deleted is what the table holds.
	 */
	if (!(*res && (a->flags & SIEVE_ADD_IF_ABSENT))) {
		atomic64_inc(&top->items);
		a->st.inserted++;
	}
	return 0;
}

/* One cuckoo delete, under write_lock: the newest copy goes first. */
static u8 sieve_cuckoo_del_hash(struct sieve_apply *a, u64 h)
{
	u32 i;
	int r;

	for (i = a->L->n; i-- > 0;) {
		struct sieve_layer *l = a->L->l[i];

		write_seqcount_begin(&a->s->moving);
		r = l->f->ops->del(l->f, h);
		write_seqcount_end(&a->s->moving);
		if (!r) {
			atomic64_dec(&l->items);
			a->st.deleted++;
			return 1;
		}
	}
	return 0;
}

/*
 * Cuckoo adds and deletes: returns the keys applied, *@err the first error.
 * Keys go one at a time, so a run stops exactly at a full table; but they
 * are hashed before the lock is taken, and the buckets of the key
 * SIEVE_CUCKOO_AHEAD places on are prefetched, so the misses of
 * neighbouring keys still overlap.
 */
static u32 sieve_cuckoo_write_keys(struct sieve_apply *a, const struct sieve_key *keys,
				   u32 n, u8 *res, int *err)
{
	u64 h[SIEVE_SUB_KEYS];
	struct sieve_filter *top;
	u32 i;

	for (i = 0; i < n; i++)
		h[i] = sieve_hash64(keys[i].data, keys[i].len, a->s->seed);
	spin_lock_bh(&a->s->write_lock);
	a->L = rcu_dereference(a->s->layers);	/* swaps happen under write_lock */
	top = sieve_top(a->L)->f;
	for (i = 0; i < min_t(u32, n, SIEVE_CUCKOO_AHEAD); i++)
		top->ops->prefetch_lines(top, h[i], true);
	for (i = 0; i < n; i++) {
		if (i + SIEVE_CUCKOO_AHEAD < n)
			top->ops->prefetch_lines(top, h[i + SIEVE_CUCKOO_AHEAD], true);
		if (a->op == SIEVE_BATCH_DELETE) {
			res[i] = sieve_cuckoo_del_hash(a, h[i]);
			continue;
		}
		*err = sieve_cuckoo_add_hash(a, h[i], &res[i]);
		if (*err)
			break;
	}
	spin_unlock_bh(&a->s->write_lock);
	if (*err == -EAGAIN)
		*err = 0;	/* a->grow says why it stopped */
	return i;
}

/* Up to SIEVE_SUB_KEYS keys under one lock hold: the keys applied. */
static u32 sieve_apply_sub(struct sieve_apply *a, const struct sieve_key *keys, u32 n,
			   u8 *res, int *err)
{
	*err = 0;
	a->L = rcu_dereference(a->s->layers);
	if (a->op == SIEVE_BATCH_QUERY) {
		sieve_query_keys(a, keys, n, res);
		return n;
	}
	if (a->s->type == SIEVE_CUCKOO)
		return sieve_cuckoo_write_keys(a, keys, n, res, err);
	return sieve_bloom_add_keys(a, keys, n, res);
}

/* Per-CPU adds that interrupts cannot tear, from any context the API allows. */
static void sieve_stats_add(struct sieve *s, const struct sieve_stats *st)
{
	if (st->inserted)
		this_cpu_add(s->stats->inserted, st->inserted);
	if (st->deleted)
		this_cpu_add(s->stats->deleted, st->deleted);
	if (st->queries)
		this_cpu_add(s->stats->queries, st->queries);
	if (st->hits)
		this_cpu_add(s->stats->hits, st->hits);
}

static int sieve_grow(struct sieve *s, const struct sieve_layer *seen_top);

/*
 * Applies @op to @keys in order, stopping at the first error: *@done keys
 * were applied and have their @results (0 or 1). @may_sleep: the caller is
 * in process context without locks, so a scalable filter may grow here.
 */
static int sieve_keys_run(struct sieve *s, u32 op, u32 flags, const struct sieve_key *keys,
			  u32 n, u8 *results, u32 *done, bool may_sleep)
{
	struct sieve_apply a = { .s = s, .op = op, .flags = flags, .may_grow = may_sleep };
	int err = 0;
	u32 i = 0;

	if (op == SIEVE_BATCH_DELETE && s->type != SIEVE_CUCKOO)
		err = -EOPNOTSUPP;
	while (!err && i < n) {
		u32 m = min_t(u32, n - i, SIEVE_SUB_KEYS);
		const struct sieve_layer *top;

		a.grow = false;
		rcu_read_lock();
		i += sieve_apply_sub(&a, keys + i, m, results + i, &err);
		top = sieve_top(a.L);	/* compared only, once unlocked */
		rcu_read_unlock();
		if (a.grow)
			err = sieve_grow(s, top);
	}
	sieve_stats_add(s, &a.st);
	*done = i;
	return err;
}

int sieve_keys_apply(struct sieve *s, u32 op, u32 flags, const struct sieve_key *keys,
		     u32 n, u8 *results, u32 *done)
{
	might_sleep();
	return sieve_keys_run(s, op, flags, keys, n, results, done, true);
}

/*
 * For the in-kernel API: growth only in process context, which in_task()
 * cannot tell from a spinlock, RCU or bh-disabled section of the caller:
 * say so where the kernel can check (CONFIG_DEBUG_ATOMIC_SLEEP) on every
 * add to a scalable filter, not only on the rare one that grows.
 */
int sieve_key_apply(struct sieve *s, u32 op, u32 flags, const void *key, u32 len)
{
	struct sieve_key k = { .data = key, .len = len };
	bool may_grow = in_task();
	u32 done;
	u8 res;
	int err;

	might_sleep_if(may_grow && op == SIEVE_BATCH_ADD &&
		       (s->create_flags & SIEVE_CREATE_SCALABLE));
	err = sieve_keys_run(s, op, flags, &k, 1, &res, &done, may_grow);
	return err ? err : res;
}

/* Swaps in @L: cuckoo writers read the layers under write_lock. */
static void sieve_publish_layers(struct sieve *s, struct sieve_layers *L)
{
	lockdep_assert_held(&s->resize_lock);
	spin_lock_bh(&s->write_lock);
	rcu_assign_pointer(s->layers, L);
	spin_unlock_bh(&s->write_lock);
}

/*
 * Stacks a new layer, as layers.h sizes it, on a scalable filter whose
 * newest layer @seen_top was full. If another caller got there first (or
 * cleared the filter: @seen_top is gone, a clear replaces every layer),
 * there is nothing to do. A layer sizing refuses (a rate or table out of
 * range) ends the growth for good; a failed allocation is -ENOMEM for this
 * caller only.
 */
static int sieve_grow(struct sieve *s, const struct sieve_layer *seen_top)
{
	struct sieve_layers *old, *L;
	struct sieve_geometry geo;
	struct sieve_layer *l;
	u64 capacity;
	u32 n;
	int err = 0;

	mutex_lock(&s->resize_lock);
	old = rcu_dereference_protected(s->layers, lockdep_is_held(&s->resize_lock));
	n = old->n;
	if (old->l[n - 1] != seen_top || s->cannot_grow ||
	    !sieve_layers_may_grow(s->create_flags, n, s->max_layers))
		goto out_unlock;
	if (sieve_layer_next(s->type, s->fpp_ppb, s->growth, n, old->l[n - 1]->capacity,
			     &capacity, &geo)) {
		WRITE_ONCE(s->cannot_grow, true);
		goto out_unlock;
	}
	geo.seed = s->seed;
	err = sieve_layer_new(&geo, capacity, &l);
	if (err == -E2BIG || err == -EINVAL) {
		WRITE_ONCE(s->cannot_grow, true);
		err = 0;
	}
	if (err)
		goto out_unlock;
	L = sieve_layers_alloc(n + 1);
	if (!L) {
		sieve_layer_free(l);
		err = -ENOMEM;
		goto out_unlock;
	}
	memcpy(L->l, old->l, n * sizeof(L->l[0]));
	L->l[n] = l;
	atomic64_add(l->charged, &s->charged);
	sieve_publish_layers(s, L);
	kfree_rcu(old, rcu);
out_unlock:
	mutex_unlock(&s->resize_lock);
	return err;
}

/*
 * Forgets every key: a fresh first layer is swapped in, and the old layers
 * are freed once no reader can see them. Counters of keys are zeroed.
 */
int sieve_clear(struct sieve *s)
{
	struct sieve_layers *old, *L;
	struct sieve_layer *l, *first;
	int cpu, err;

	mutex_lock(&s->resize_lock);
	old = rcu_dereference_protected(s->layers, lockdep_is_held(&s->resize_lock));
	first = old->l[0];
	err = sieve_layer_new(&first->f->geo, first->capacity, &l);
	if (err)
		goto out_unlock;
	L = sieve_layers_alloc(1);
	if (!L) {
		sieve_layer_free(l);
		err = -ENOMEM;
		goto out_unlock;
	}
	L->l[0] = l;
	atomic64_add(l->charged, &s->charged);
	sieve_publish_layers(s, L);
	/* The layer sizing refused is far off again. */
	WRITE_ONCE(s->cannot_grow, false);
	for_each_possible_cpu(cpu) {
		struct sieve_stats *st = per_cpu_ptr(s->stats, cpu);

		WRITE_ONCE(st->inserted, 0);
		WRITE_ONCE(st->deleted, 0);
	}
	atomic64_sub(sieve_layers_charged(old), &s->charged);
	mutex_unlock(&s->resize_lock);
	synchronize_rcu();
	sieve_layers_free(old);
	return 0;

out_unlock:
	mutex_unlock(&s->resize_lock);
	return err;
}

/*
 * ORs @src into @dst: two single-layer Bloom-type filters of one geometry
 * and seed. Both are held still (no clear) while the tables are read and
 * written; adds to @dst meanwhile are kept, as the OR is atomic.
 */
int sieve_merge(struct sieve *dst, struct sieve *src)
{
	struct sieve *first = dst->id < src->id ? dst : src;
	struct sieve *second = first == dst ? src : dst;
	struct sieve_layers *dl, *sl;
	int err = -EINVAL;

	if (dst == src || dst->type == SIEVE_CUCKOO || dst->type != src->type ||
	    ((dst->create_flags | src->create_flags) & SIEVE_CREATE_SCALABLE))
		return -EINVAL;
	mutex_lock(&first->resize_lock);
	mutex_lock_nested(&second->resize_lock, SINGLE_DEPTH_NESTING);
	dl = rcu_dereference_protected(dst->layers, lockdep_is_held(&dst->resize_lock));
	sl = rcu_dereference_protected(src->layers, lockdep_is_held(&src->resize_lock));
	if (dl->n == 1 && sl->n == 1 &&
	    !memcmp(&dl->l[0]->f->geo, &sl->l[0]->f->geo, sizeof(dl->l[0]->f->geo))) {
		err = sieve_filter_merge(dl->l[0]->f, sl->l[0]->f);
		if (!err)
			atomic64_add(atomic64_read(&sl->l[0]->items), &dl->l[0]->items);
	}
	mutex_unlock(&second->resize_lock);
	mutex_unlock(&first->resize_lock);
	return err;
}

/* Gives @s the layers @L of another filter (sieve_exchange()). */
static void sieve_take_layers(struct sieve *s, struct sieve_layers *L)
{
	lockdep_assert_held(&s->resize_lock);
	lockdep_assert_held(&s->write_lock);
	/* Cuckoo readers that began on the old table and missed retry on @L. */
	write_seqcount_begin(&s->moving);
	rcu_assign_pointer(s->layers, L);
	write_seqcount_end(&s->moving);
}

/*
 * The create flags that shape a table, which two filters exchanging theirs
 * must share. Not EPHEMERAL (the owner stays with its filter: a filter in
 * use is rebuilt through an ephemeral one) nor SEED (how the seed was
 * chosen; the seeds are compared).
 */
#define SIEVE_EXCHANGE_SAME_FLAGS	(SIEVE_CREATE_SCALABLE | SIEVE_CREATE_GEOMETRY)

/* The counters of keys follow the table (see struct sieve_exchange). */
static void sieve_exchange_key_counts(struct sieve *a, struct sieve *b)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sieve_stats *sa = per_cpu_ptr(a->stats, cpu);
		struct sieve_stats *sb = per_cpu_ptr(b->stats, cpu);
		u64 inserted = READ_ONCE(sa->inserted), deleted = READ_ONCE(sa->deleted);

		WRITE_ONCE(sa->inserted, READ_ONCE(sb->inserted));
		WRITE_ONCE(sa->deleted, READ_ONCE(sb->deleted));
		WRITE_ONCE(sb->inserted, inserted);
		WRITE_ONCE(sb->deleted, deleted);
	}
}

/*
 * Gives @a the table of @b and @b that of @a: their layers, target rate,
 * growth state, memory charge and counters of keys (SIEVE_IOC_EXCHANGE).
 * Both are held still (no growth, clear, export or merge) by their
 * resize_lock, and cuckoo writers are kept out by their write_lock while
 * the layers are swapped. Before returning, waits for every reader that
 * may still be on its filter's old table: the other filter owns that
 * table now, and its destroy frees it without a grace period.
 */
int sieve_exchange(struct sieve *a, struct sieve *b)
{
	struct sieve *first = a->id < b->id ? a : b;
	struct sieve *second = first == a ? b : a;
	struct sieve_layers *la, *lb;
	bool cannot_grow;
	u32 fpp_ppb;
	s64 delta;

	if (a == b || a->type != b->type || a->seed != b->seed ||
	    ((a->create_flags ^ b->create_flags) & SIEVE_EXCHANGE_SAME_FLAGS) ||
	    a->growth != b->growth || a->max_layers != b->max_layers)
		return -EINVAL;
	mutex_lock(&first->resize_lock);
	mutex_lock_nested(&second->resize_lock, SINGLE_DEPTH_NESTING);
	la = rcu_dereference_protected(a->layers, lockdep_is_held(&a->resize_lock));
	lb = rcu_dereference_protected(b->layers, lockdep_is_held(&b->resize_lock));
	/* What @a's charge gains: @b's layers, less its own. */
	delta = (s64)(sieve_layers_charged(lb) - sieve_layers_charged(la));

	spin_lock_bh(&first->write_lock);
	spin_lock_nested(&second->write_lock, SINGLE_DEPTH_NESTING);
	sieve_take_layers(a, lb);
	sieve_take_layers(b, la);
	fpp_ppb = a->fpp_ppb;
	WRITE_ONCE(a->fpp_ppb, b->fpp_ppb);
	WRITE_ONCE(b->fpp_ppb, fpp_ppb);
	cannot_grow = a->cannot_grow;
	WRITE_ONCE(a->cannot_grow, b->cannot_grow);
	WRITE_ONCE(b->cannot_grow, cannot_grow);
	spin_unlock(&second->write_lock);
	spin_unlock_bh(&first->write_lock);

	atomic64_add(delta, &a->charged);
	atomic64_sub(delta, &b->charged);
	sieve_exchange_key_counts(a, b);
	mutex_unlock(&second->resize_lock);
	mutex_unlock(&first->resize_lock);
	synchronize_rcu();
	return 0;
}
