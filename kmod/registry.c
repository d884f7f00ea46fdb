// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of named filters: creation, lookup, destruction, and the
 * limits on how many filters and how much memory the module may hold.
 * Locking is described at struct sieve (registry.h); the registry itself
 * is an xarray of id -> struct sieve, written under sieve_registry_lock
 * and read under RCU.
 */
#include <linux/cpumask.h>
#include <linux/xarray.h>

#include "layers.h"
#include "registry.h"

unsigned int sieve_max_filters = 1024;
unsigned int sieve_max_memory_mb = 1024;
unsigned int sieve_max_reader_memory_mb = 256;

/* Bytes reserved by filters, exports and imports, against max_memory_mb. */
static atomic64_t sieve_mem_used = ATOMIC64_INIT(0);
/*
 * Bytes held for files opened read-only (their exports) and layers a
 * reader still read when the filter let go of them, against
 * max_reader_memory_mb.
 */
static atomic64_t sieve_reader_mem_used = ATOMIC64_INIT(0);
/*
 * Orders the last put of a layer after sieve_layer_free()'s move of its
 * charge to the readers' budget (struct sieve_layer's @readers_charged).
 */
static DEFINE_SPINLOCK(sieve_layer_hold_lock);
/* struct sieve allocated and not yet freed (leak tests). */
static atomic_t sieve_nalive = ATOMIC_INIT(0);

/* Serialises create, import and destroy: name uniqueness, the filter count. */
static DEFINE_MUTEX(sieve_registry_lock);
/* id -> struct sieve; ids from 1, cyclic so a destroyed id is not reused soon. */
static DEFINE_XARRAY_ALLOC1(sieve_filters);
static u32 sieve_next_id;
/* Filters in sieve_filters, under sieve_registry_lock. */
static u32 sieve_nregistered;

u64 sieve_memory_in_use(void)
{
	return atomic64_read(&sieve_mem_used);
}

u32 sieve_filters_in_use(void)
{
	return atomic_read(&sieve_nalive);
}

u64 sieve_reader_memory_in_use(void)
{
	return atomic64_read(&sieve_reader_mem_used);
}

/* Counts @bytes against a budget of @limit_mb before they are allocated. */
static bool sieve_budget_reserve(atomic64_t *used, unsigned int limit_mb, u64 bytes)
{
	u64 limit = (u64)limit_mb << 20;

	if (bytes > limit)
		return false;
	if (atomic64_add_return(bytes, used) > limit) {
		atomic64_sub(bytes, used);
		return false;
	}
	return true;
}

int sieve_mem_reserve(u64 bytes)
{
	return sieve_budget_reserve(&sieve_mem_used, READ_ONCE(sieve_max_memory_mb), bytes) ?
	       0 : -ENOMEM;
}

void sieve_mem_release(u64 bytes)
{
	WARN_ON_ONCE(atomic64_sub_return(bytes, &sieve_mem_used) < 0);
}

int sieve_reader_mem_reserve(u64 bytes)
{
	return sieve_budget_reserve(&sieve_reader_mem_used,
				    READ_ONCE(sieve_max_reader_memory_mb), bytes) ? 0 : -ENOBUFS;
}

void sieve_reader_mem_release(u64 bytes)
{
	WARN_ON_ONCE(atomic64_sub_return(bytes, &sieve_reader_mem_used) < 0);
}

/* What a layer costs beyond its table: the core's header and ours. */
#define SIEVE_LAYER_SLACK	PAGE_SIZE

/* A zeroed layer of @geo (seed included), counted against the limit. */
int sieve_layer_new(const struct sieve_geometry *geo, u64 capacity,
		    struct sieve_layer **out)
{
	struct sieve_layer *l;
	u64 table_bytes, reserved, actual;
	int err;

	err = sieve_geometry_check(geo, &table_bytes);
	if (err)
		return err;
	reserved = table_bytes + SIEVE_LAYER_SLACK;
	err = sieve_mem_reserve(reserved);
	if (err)
		return err;
	err = -ENOMEM;
	l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	if (!l)
		goto out_release;
	err = sieve_filter_create(geo, &l->f);
	if (err)
		goto out_free_layer;
	/* Count what was allocated, not the estimate. */
	actual = l->f->alloc_bytes + sizeof(*l);
	if (actual <= reserved)
		sieve_mem_release(reserved - actual);
	else
		atomic64_add(actual - reserved, &sieve_mem_used);
	l->charged = actual;
	l->capacity = capacity;
	refcount_set(&l->ref, 1);
	*out = l;
	return 0;

out_free_layer:
	kfree(l);
out_release:
	sieve_mem_release(reserved);
	return err;
}

/* The last reference is gone. */
static void sieve_layer_destroy(struct sieve_layer *l)
{
	sieve_filter_destroy(l->f);
	if (l->readers_charged)
		sieve_reader_mem_release(l->charged);
	else
		sieve_mem_release(l->charged);
	kfree(l);
}

/*
 * The filter's put. A reader still reading the layer frees it when done;
 * until then its memory counts against the readers' budget (even past
 * that limit: a reader holds a layer for one scan or copy at most), so a
 * reader never keeps memory a writer is about to need.
 */
void sieve_layer_free(struct sieve_layer *l)
{
	bool last;

	spin_lock(&sieve_layer_hold_lock);
	last = refcount_dec_and_test(&l->ref);
	if (!last) {
		atomic64_add(l->charged, &sieve_reader_mem_used);
		sieve_mem_release(l->charged);
		l->readers_charged = true;
	}
	spin_unlock(&sieve_layer_hold_lock);
	if (last)
		sieve_layer_destroy(l);
}

void sieve_layer_get(struct sieve_layer *l)
{
	refcount_inc(&l->ref);
}

void sieve_layer_put(struct sieve_layer *l)
{
	bool last;

	spin_lock(&sieve_layer_hold_lock);
	last = refcount_dec_and_test(&l->ref);
	spin_unlock(&sieve_layer_hold_lock);
	if (last)
		sieve_layer_destroy(l);
}

struct sieve_layers *sieve_layers_alloc(u32 n)
{
	struct sieve_layers *L = kzalloc(struct_size(L, l, n), GFP_KERNEL_ACCOUNT);

	if (L)
		L->n = n;
	return L;
}

/* Frees the array and its layers; no reader may still see them. */
void sieve_layers_free(struct sieve_layers *L)
{
	u32 i;

	for (i = 0; i < L->n; i++)
		sieve_layer_free(L->l[i]);
	kfree(L);
}

u64 sieve_layers_charged(const struct sieve_layers *L)
{
	u64 bytes = 0;
	u32 i;

	for (i = 0; i < L->n; i++)
		bytes += L->l[i]->charged;
	return bytes;
}

static struct sieve *sieve_struct_alloc(const struct sieve_reg_params *p, u32 seed)
{
	struct sieve *s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);

	if (!s)
		return NULL;
	/* A failed percpu allocation also dumps a stack: -ENOMEM says enough. */
	s->stats = alloc_percpu_gfp(struct sieve_stats, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!s->stats) {
		kfree(s);
		return NULL;
	}
	refcount_set(&s->ref, 1);
	strscpy(s->name, p->name, sizeof(s->name));
	s->type = p->type;
	s->create_flags = p->create_flags;
	s->seed = seed;
	s->fpp_ppb = p->fpp_ppb;
	s->growth = p->growth;
	s->max_layers = p->max_layers;
	s->owner = p->owner;
	mutex_init(&s->resize_lock);
	spin_lock_init(&s->write_lock);
	seqcount_spinlock_init(&s->moving, &s->write_lock);
	atomic64_set(&s->charged, sizeof(*s));
	atomic64_add(sizeof(*s), &sieve_mem_used);
	atomic_inc(&sieve_nalive);
	return s;
}

/* The last reference is gone: nobody but RCU lookups can see @s. */
static void sieve_struct_free(struct sieve *s)
{
	struct sieve_layers *L = rcu_dereference_protected(s->layers, true);

	if (L)
		sieve_layers_free(L);
	free_percpu(s->stats);
	mutex_destroy(&s->resize_lock);
	sieve_mem_release(sizeof(*s));
	atomic_dec(&sieve_nalive);
	kfree_rcu(s, rcu);
}

void sieve_release(struct sieve *s)
{
	if (refcount_dec_and_test(&s->ref))
		sieve_struct_free(s);
}

/* Frees filters whose last reference was dropped where sleeping is not allowed. */
static struct workqueue_struct *sieve_free_wq;

static void sieve_struct_free_work(struct work_struct *work)
{
	sieve_struct_free(container_of(work, struct sieve, free_work));
}

/*
 * Freeing a filter may sleep (vfree() of its tables): the last put from a
 * BPF program (softirq, or a test run under rcu_read_lock()) leaves it to
 * a work item. Nothing else can see @s then, so @free_work is free to use.
 */
void sieve_release_nosleep(struct sieve *s)
{
	if (!refcount_dec_and_test(&s->ref))
		return;
	INIT_WORK(&s->free_work, sieve_struct_free_work);
	queue_work(sieve_free_wq, &s->free_work);
}

int sieve_registry_init(void)
{
	sieve_free_wq = alloc_workqueue("sieve_free", 0, 0);
	return sieve_free_wq ? 0 : -ENOMEM;
}

/* After every filter is destroyed: waits for the frees still queued. */
void sieve_registry_exit(void)
{
	destroy_workqueue(sieve_free_wq);
}

static struct sieve *sieve_find_name_locked(const char *name)
{
	struct sieve *s;
	unsigned long id;

	lockdep_assert_held(&sieve_registry_lock);
	xa_for_each(&sieve_filters, id, s)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* May a filter called @name be registered now? */
static int sieve_room_locked(const char *name)
{
	if (sieve_find_name_locked(name))
		return -EEXIST;
	if (sieve_nregistered >= READ_ONCE(sieve_max_filters))
		return -ENOSPC;
	return 0;
}

/* The same check, before a caller spends memory on a filter. */
int sieve_room(const char *name)
{
	int err;

	mutex_lock(&sieve_registry_lock);
	err = sieve_room_locked(name);
	mutex_unlock(&sieve_registry_lock);
	return err;
}

/*
 * Registers a filter of the layers @L (which it takes over, freeing them
 * on error) and, for an import, @counters.
 */
static int sieve_publish(const struct sieve_reg_params *p, struct sieve_layers *L, u32 seed,
			 const struct sieve_stats *counters, u32 *id)
{
	struct sieve *s;
	int err;

	s = sieve_struct_alloc(p, seed);
	if (!s) {
		sieve_layers_free(L);
		return -ENOMEM;
	}
	RCU_INIT_POINTER(s->layers, L);
	atomic64_add(sieve_layers_charged(L), &s->charged);
	if (counters)
		*per_cpu_ptr(s->stats, cpumask_first(cpu_possible_mask)) = *counters;

	mutex_lock(&sieve_registry_lock);
	err = sieve_room_locked(p->name);
	if (!err) {
		/* s->id is set before the entry is visible to lookups. */
		err = xa_alloc_cyclic(&sieve_filters, &s->id, s, XA_LIMIT(1, INT_MAX),
				      &sieve_next_id, GFP_KERNEL);
		if (err == -EBUSY)
			err = -ENOSPC;
	}
	if (err >= 0) {
		sieve_nregistered++;
		*id = s->id;
		err = 0;
	}
	mutex_unlock(&sieve_registry_lock);
	if (err)
		sieve_release(s);
	return err;
}

/* The first layer's geometry: as given, or sized (layers.h); the seed as asked, else random. */
static int sieve_first_geometry(const struct sieve_create_spec *spec,
				const struct sieve_geometry *geo, struct sieve_geometry *out)
{
	int err = 0;

	if (geo)
		*out = *geo;
	else
		err = sieve_first_layer_size(spec->type, spec->flags, spec->fpp_ppb,
					     spec->capacity, out);
	out->seed = spec->flags & SIEVE_CREATE_SEED ? spec->seed : get_random_u32();
	return err;
}

int sieve_create(const char *name, const struct sieve_create_spec *spec,
		 const struct sieve_geometry *geo, const void *owner, u32 *id)
{
	struct sieve_reg_params p = {
		.name = name,
		.type = spec->type,
		.create_flags = spec->flags,
		.fpp_ppb = spec->fpp_ppb,
		.capacity = spec->capacity,
		.owner = owner,
	};
	struct sieve_geometry first;
	struct sieve_layers *L;
	struct sieve_layer *l;
	int err;

	sieve_create_layering(spec, &p.growth, &p.max_layers);
	err = sieve_first_geometry(spec, geo, &first);
	if (err)
		return err;
	/* Refuse early what registration would refuse, before a big allocation. */
	err = sieve_room(name);
	if (err)
		return err;
	err = sieve_layer_new(&first, spec->capacity, &l);
	if (err)
		return err;
	L = sieve_layers_alloc(1);
	if (!L) {
		sieve_layer_free(l);
		return -ENOMEM;
	}
	L->l[0] = l;
	return sieve_publish(&p, L, first.seed, NULL, id);
}

/*
 * A new filter of imported layers: takes over the @nlayers filters of
 * @src (freeing them on error). Their memory is counted without the limit
 * check: the importer reserved it when the snapshot's header arrived.
 */
int sieve_register_layers(const struct sieve_reg_params *p,
			  const struct sieve_snapshot_layer_src *src, u32 nlayers,
			  const struct sieve_stats *counters, u32 *id)
{
	struct sieve_layers *L;
	u32 i;

	L = sieve_layers_alloc(nlayers);
	if (!L)
		goto out_free_filters;
	for (L->n = 0; L->n < nlayers; L->n++) {
		struct sieve_layer *l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
		const struct sieve_filter *f = src[L->n].filter;

		if (!l)
			goto out_free_layers;
		l->f = src[L->n].filter;
		l->capacity = src[L->n].capacity;
		atomic64_set(&l->items, p->type == SIEVE_CUCKOO ?
			     sieve_filter_estimate_items(f) : src[L->n].items);
		l->charged = f->alloc_bytes + sizeof(*l);
		refcount_set(&l->ref, 1);
		atomic64_add(l->charged, &sieve_mem_used);
		L->l[L->n] = l;
	}
	return sieve_publish(p, L, src[0].filter->geo.seed, counters, id);

out_free_layers:
	i = L->n;
	sieve_layers_free(L);
	nlayers -= i;
	src += i;
out_free_filters:
	for (i = 0; i < nlayers; i++)
		sieve_filter_destroy(src[i].filter);
	return -ENOMEM;
}

/*
 * Removes the name and id at once; operations holding a reference finish
 * first, and the last of them frees the filter.
 */
int sieve_destroy(u32 id)
{
	struct sieve *s;

	mutex_lock(&sieve_registry_lock);
	s = xa_erase(&sieve_filters, id);
	if (s)
		sieve_nregistered--;
	mutex_unlock(&sieve_registry_lock);
	if (!s)
		return -ENOENT;
	sieve_release(s);
	return 0;
}

/* Destroys the filters created ephemeral by @owner, or all if @owner is NULL. */
static void sieve_destroy_matching(const void *owner)
{
	struct sieve *s;
	unsigned long id;

	mutex_lock(&sieve_registry_lock);
	xa_for_each(&sieve_filters, id, s) {
		if (owner && s->owner != owner)
			continue;
		xa_erase(&sieve_filters, id);
		sieve_nregistered--;
		sieve_release(s);
		cond_resched();
	}
	mutex_unlock(&sieve_registry_lock);
}

void sieve_destroy_owned(const void *owner)
{
	sieve_destroy_matching(owner);
}

void sieve_destroy_all(void)
{
	sieve_destroy_matching(NULL);
}

/* A reference to filter @id, or NULL. */
struct sieve *sieve_lookup(u32 id)
{
	struct sieve *s;

	rcu_read_lock();
	s = xa_load(&sieve_filters, id);
	if (s && !refcount_inc_not_zero(&s->ref))
		s = NULL;
	rcu_read_unlock();
	return s;
}

/* A reference to the filter called @name (any string), or NULL. */
struct sieve *sieve_lookup_name(const char *name)
{
	struct sieve *s;

	mutex_lock(&sieve_registry_lock);
	s = sieve_find_name_locked(name);
	if (s)
		refcount_inc(&s->ref);	/* the registry holds one */
	mutex_unlock(&sieve_registry_lock);
	return s;
}

/* A reference to the registered filter of the lowest id >= *@id, or NULL. */
struct sieve *sieve_next(unsigned long *id)
{
	struct sieve *s;

	rcu_read_lock();
	for (;;) {
		s = xa_find(&sieve_filters, id, ULONG_MAX, XA_PRESENT);
		if (!s || refcount_inc_not_zero(&s->ref))
			break;
		(*id)++;	/* being freed: skip it */
	}
	rcu_read_unlock();
	return s;
}
