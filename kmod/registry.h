/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The registry of named filters behind /dev/sieve, /proc/sieve and the
 * in-kernel API: one struct sieve per filter, found by id (an xarray) or by
 * name, refcounted, its layers published with RCU.
 */
#ifndef SIEVE_REGISTRY_H
#define SIEVE_REGISTRY_H

#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "create.h"
#include "filter.h"
#include "snapshot.h"

/**
 * struct sieve_layer - one layer of a filter (one unless scalable)
 * @f: its filter core.
 * @capacity: keys it takes before a scalable filter grows (0 for an
 *	explicit geometry).
 * @items: adds that stored a key in it, minus deletes that removed one:
 *	what growth compares with @capacity.
 * @charged: bytes counted against max_memory_mb for it (against the
 *	readers' budget once @readers_charged).
 * @ref: the filter's reference (one, whichever arrays list the layer),
 *	plus one per report or export reading it outside the filter's
 *	resize_lock (sieve_layer_get(), taken under that lock while the
 *	layer is in the filter's @layers).
 * @readers_charged: the filter let go of the layer (clear, destroy) while
 *	a reader still held it: @charged moved to the readers' budget, so a
 *	reader's scan never keeps writers' memory. Written under
 *	sieve_layer_hold_lock with the filter's put, read by the last put.
 *
 * A layer is shared by every layer array that lists it (growth copies the
 * pointers), so @items is never lost to a copy; an exchange moves whole
 * arrays, so the arrays sharing a layer are always of one filter. The
 * filter lets go of it only in clear and destroy, when no RCU reader can
 * see it any more; the last of @ref frees it.
 */
struct sieve_layer {
	struct sieve_filter *f;
	u64 capacity;
	atomic64_t items;
	u64 charged;
	refcount_t ref;
	bool readers_charged;
};

/**
 * struct sieve_layers - the layers of a filter, oldest first
 * @rcu: frees the array (not the layers) after readers are done.
 * @n: layers in @l.
 * @l: the layers.
 */
struct sieve_layers {
	struct rcu_head rcu;
	u32 n;
	struct sieve_layer *l[];
};

/* Per-CPU counters of a filter, summed when read. */
struct sieve_stats {
	u64 inserted;
	u64 deleted;
	u64 queries;
	u64 hits;
};

/**
 * struct sieve - one named filter
 * @ref: the registry's reference plus one per user; the last put frees
 *	the layers and kfree_rcu()s the struct (RCU lookups may still be
 *	reading @name or trying refcount_inc_not_zero()).
 * @rcu: for that kfree_rcu().
 * @free_work: frees the filter when its last reference went where sleeping
 *	is not allowed (sieve_release_nosleep(): a BPF program's).
 * @id: the registry key; never changes.
 * @name: never changes.
 * @type: enum sieve_filter_type, of every layer.
 * @create_flags: enum sieve_create_flags.
 * @seed: of every layer.
 * @fpp_ppb: the target rate (0 for an explicit geometry) of the table
 *	@layers holds; an exchange moves it with the table, under
 *	@resize_lock and @write_lock.
 * @growth: scalable: capacity factor between layers; else 0.
 * @max_layers: 1, or for a scalable filter 2 to SIEVE_MAX_LAYERS.
 * @owner: the struct sieve_file that created an ephemeral filter, only
 *	compared (never dereferenced); NULL otherwise.
 * @cannot_grow: sizing refused the next layer (its rate or table is out
 *	of range): the filter behaves as if at @max_layers, until a clear.
 *	Written under @resize_lock (an exchange, which moves it with the
 *	table: also under @write_lock).
 * @layers: the current layers.
 * @resize_lock: serialises changes of @layers (growth, clear, exchange)
 *	and holds them still for merge and a writer's frozen export. Reports
 *	(INFO, /proc/sieve) and exports hold it only to take references to
 *	the layers (O(layers), no table is read under it) and read tables
 *	after: a reader never makes a writer wait for a whole-table scan.
 * @write_lock: cuckoo: serialises writes (add, delete) and the swap of
 *	@layers; taken with spin_lock_bh() so softirq users may write.
 * @moving: bumped around each cuckoo write, and around an exchange's swap
 *	of @layers; cuckoo readers retry a miss, an unlocked export its copy.
 * @charged: bytes this filter counts against max_memory_mb: this struct
 *	and the layers of @layers (an exchange moves their part).
 * @stats: counters.
 *
 * Locking:
 * - Bloom types: add and query take only rcu_read_lock() for @layers;
 *   the cores set bits atomically, merge ORs atomically, so nothing is
 *   lost between concurrent adds, queries and merges.
 * - Cuckoo: add and delete take @write_lock and write @moving around the
 *   core call; queries run under rcu_read_lock() and retry only a miss,
 *   if @moving changed meanwhile. A query reads @layers after it reads
 *   @moving, and again on each retry.
 * - @layers is replaced (growth, clear, exchange) under @resize_lock and
 *   @write_lock; old arrays are freed after a grace period, old layers
 *   (clear) after synchronize_rcu() and their last reference.
 * - A table may change hands: an exchange gives filter A the layers of B
 *   and B those of A (both @resize_lock, then both @write_lock; @moving
 *   of each is written around its swap). So a pointer to @layers, or to
 *   a layer or table in it, is only used within the RCU read section or
 *   the @resize_lock hold it was read in (or compared, never followed,
 *   after), or while a layer reference taken in that hold lasts (reports
 *   and exports: struct sieve_layer's @ref; the table may have changed
 *   hands meanwhile, which an export checks with @moving): a reader of A
 *   still on A's old table after the exchange reads a table that B's
 *   writers now change (under B's @write_lock and @moving) and that B's
 *   destroy frees without a grace period. The
 *   exchange waits for such readers (synchronize_rcu()) before it
 *   returns and drops its reference to B.
 * - Lock order: @resize_lock, then @write_lock. Two filters' @resize_lock
 *   (merge, exchange) and @write_lock (exchange): lower id first.
 */
struct sieve {
	refcount_t ref;
	struct rcu_head rcu;
	struct work_struct free_work;
	u32 id;
	char name[SIEVE_NAME_MAX];
	u32 type;
	u32 create_flags;
	u32 seed;
	u32 fpp_ppb;
	u32 growth;
	u32 max_layers;
	const void *owner;
	bool cannot_grow;
	struct sieve_layers __rcu *layers;
	struct mutex resize_lock;
	spinlock_t write_lock;
	seqcount_spinlock_t moving;
	atomic64_t charged;
	struct sieve_stats __percpu *stats;
};

/* Limits (module parameters) and what is in use, for leak tests. */
extern unsigned int sieve_max_filters;
extern unsigned int sieve_max_memory_mb;
extern unsigned int sieve_max_reader_memory_mb;
u64 sieve_memory_in_use(void);
u64 sieve_reader_memory_in_use(void);
u32 sieve_filters_in_use(void);

/* Writers' budget (max_memory_mb): filters, their exports, imports. -ENOMEM. */
int sieve_mem_reserve(u64 bytes);
void sieve_mem_release(u64 bytes);
/*
 * Readers' budget (max_reader_memory_mb): what files opened read-only
 * hold, apart from the writers' so a reader never makes a writer's
 * create, import or growth fail. -ENOBUFS when it is spent.
 */
int sieve_reader_mem_reserve(u64 bytes);
void sieve_reader_mem_release(u64 bytes);

/* Layers (registry.c), for growth and clear. */
int sieve_layer_new(const struct sieve_geometry *geo, u64 capacity, struct sieve_layer **out);
/* The filter lets go of @l (or it was never published). */
void sieve_layer_free(struct sieve_layer *l);
/* A reader's reference, taken under resize_lock while @l is in @layers. */
void sieve_layer_get(struct sieve_layer *l);
/* Drops it; may free the layer (sleeps). */
void sieve_layer_put(struct sieve_layer *l);
struct sieve_layers *sieve_layers_alloc(u32 n);
void sieve_layers_free(struct sieve_layers *L);
u64 sieve_layers_charged(const struct sieve_layers *L);

/**
 * struct sieve_reg_params - what the registry makes a filter of: a request
 *	checked against the create contract (create.h), defaults resolved
 * @name: checked with sieve_name_check().
 * @type: enum sieve_filter_type.
 * @create_flags: enum sieve_create_flags.
 * @fpp_ppb: the target rate (0 for an explicit geometry).
 * @capacity: of the first layer (0 for an explicit geometry).
 * @growth: as sieve_create_layering() gives it.
 * @max_layers: as sieve_create_layering() gives it.
 * @owner: for an ephemeral filter, its creator.
 */
struct sieve_reg_params {
	const char *name;
	u32 type;
	u32 create_flags;
	u32 fpp_ppb;
	u64 capacity;
	u32 growth;
	u32 max_layers;
	const void *owner;
};

/* -EEXIST if @name is taken, -ENOSPC at max_filters, else 0 (for now). */
int sieve_room(const char *name);
/*
 * A new filter of one layer for a request @spec that passed
 * sieve_create_check(): of the geometry @geo (%SIEVE_CREATE_GEOMETRY) or,
 * if NULL, sized from the request; @owner as struct sieve_reg_params has it.
 */
int sieve_create(const char *name, const struct sieve_create_spec *spec,
		 const struct sieve_geometry *geo, const void *owner, u32 *id);
int sieve_register_layers(const struct sieve_reg_params *p,
			  const struct sieve_snapshot_layer_src *src, u32 nlayers,
			  const struct sieve_stats *counters, u32 *id);
int sieve_destroy(u32 id);
void sieve_destroy_owned(const void *owner);
void sieve_destroy_all(void);

struct sieve *sieve_lookup(u32 id);
struct sieve *sieve_lookup_name(const char *name);
struct sieve *sieve_next(unsigned long *id);
void sieve_release(struct sieve *s);
/* sieve_release() from any context but hardirq and NMI. */
void sieve_release_nosleep(struct sieve *s);
/* The work queue sieve_release_nosleep() frees on: made at load, drained at unload. */
int sieve_registry_init(void);
void sieve_registry_exit(void);

/* kfuncs for XDP and TC (kfunc.c), where the module has BTF. */
#ifdef SIEVE_KFUNCS
int sieve_kfunc_init(void);
#else
static inline int sieve_kfunc_init(void)
{
	return 0;
}
#endif

/* Batch operations, enum sieve_batch_op. */
int sieve_keys_apply(struct sieve *s, u32 op, u32 flags, const struct sieve_key *keys,
		     u32 n, u8 *results, u32 *done);
/* One key, from any context the in-kernel API allows: 0, 1 or -errno. */
int sieve_key_apply(struct sieve *s, u32 op, u32 flags, const void *key, u32 len);
int sieve_clear(struct sieve *s);
int sieve_merge(struct sieve *dst, struct sieve *src);
int sieve_exchange(struct sieve *a, struct sieve *b);

/**
 * struct sieve_report - a filter's state, for INFO and /proc/sieve
 * @geo: of the first layer.
 * @capacity: of all layers together.
 * @fpp_ppb: the target rate of these layers.
 * @nlayers: layers in use.
 * @fill_ppm: of the newest layer.
 * @fpr_ppb: of a query now, all layers.
 * @items: keys stored, all layers (Bloom types: estimated).
 * @stats: the counters, summed over the CPUs.
 * @memory_bytes: what the filter counts against max_memory_mb.
 * @snapshot_bytes: size of its snapshot now.
 *
 * As struct sieve_info has them, of the layers the filter had at one
 * hold of its resize_lock (an exchange cannot come between two of them),
 * but for the counters. The tables are read after that hold, through
 * references to their layers: a Bloom table's bits as they are then.
 */
struct sieve_report {
	struct sieve_geometry geo;
	u64 capacity;
	u32 fpp_ppb;
	u32 nlayers;
	u32 fill_ppm;
	u32 fpr_ppb;
	u64 items;
	struct sieve_stats stats;
	u64 memory_bytes;
	u64 snapshot_bytes;
};

void sieve_report(struct sieve *s, struct sieve_report *r);

/*
 * A snapshot of @s in a new buffer of *@bytes, counted against the
 * writers' budget or, for a @reader, the readers': kvfree() it, then
 * release *@bytes from that budget. -EAGAIN: a @reader's copies all met a
 * cuckoo write or an exchange (readers never stop writers).
 */
int sieve_export(struct sieve *s, bool reader, void **buf, u64 *bytes);
/* What sieve_export() would make now, in bytes. */
u64 sieve_export_bytes(struct sieve *s);

/* /proc/sieve. */
int sieve_procfs_init(void);
void sieve_procfs_exit(void);

/* /dev/sieve. */
int sieve_device_init(void);
void sieve_device_exit(void);

#endif /* SIEVE_REGISTRY_H */
