/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsieve: probabilistic set-membership filters (Bloom, blocked Bloom,
 * cuckoo) from userspace, two ways:
 *
 *  - the device client (sieve_dev_*): filters held by the kernel module
 *    behind /dev/sieve, one thin call per ioctl of <linux/sieve.h>, plus
 *    helpers that split big batches, exports and imports into chunks;
 *  - local filters (sieve_local_*): the very same filter cores compiled
 *    into the library, in this process's memory, with snapshot files in the
 *    format the kernel exports and imports.
 *
 * Conventions, for every function: a return of 0 or more is success (where
 * a function returns a count, an id or a yes/no answer, it says so), a
 * negative return is -errno. Nothing here prints, exits or aborts, and
 * nothing reads errno after a call (it may be clobbered). Keys are 1 to
 * SIEVE_MAX_KEY_LEN bytes.
 *
 * Link: pkg-config --cflags --libs sieve (or --static for libsieve.a).
 */
#ifndef LIBSIEVE_H
#define LIBSIEVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/sieve.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct sieve_params - what a filter is made of, device or local
 * @type: enum sieve_filter_type.
 * @flags: enum sieve_create_flags. Local filters refuse
 *	%SIEVE_CREATE_EPHEMERAL (-EINVAL): they live until destroyed anyway.
 * @capacity: keys to hold at @fpp_ppb (without %SIEVE_CREATE_GEOMETRY);
 *	scalable: keys of the first layer.
 * @fpp_ppb: target false-positive rate, parts per billion (1 to
 *	SIEVE_PPB - 1), without %SIEVE_CREATE_GEOMETRY.
 * @geo: with %SIEVE_CREATE_GEOMETRY, the exact geometry (@geo.type equal
 *	to @type or 0, @geo.seed ignored: the seed is @seed).
 * @seed: with %SIEVE_CREATE_SEED, the hash seed; else a random one.
 * @growth: scalable: capacity factor between layers, SIEVE_MIN_GROWTH to
 *	SIEVE_MAX_GROWTH (0: SIEVE_DEFAULT_GROWTH).
 * @max_layers: scalable: most layers, SIEVE_MIN_LAYERS to SIEVE_MAX_LAYERS
 *	(0: SIEVE_DEFAULT_LAYERS).
 *
 * Fields that do not apply must be 0 (else -EINVAL), except @geo without
 * %SIEVE_CREATE_GEOMETRY and @seed without %SIEVE_CREATE_SEED, which are
 * ignored. The rules are the module's own (SIEVE_IOC_CREATE), compiled
 * into the library: sieve_params_check() applies them.
 */
struct sieve_params {
	uint32_t type;
	uint32_t flags;
	uint64_t capacity;
	uint32_t fpp_ppb;
	uint32_t seed;
	struct sieve_geometry geo;
	uint32_t growth;
	uint32_t max_layers;
};

/**
 * struct sieve_batch_stats - how far a batch went
 * @done: keys applied, in order (on success: all of them). Their results
 *	are written.
 * @present: how many of the @done keys answered 1 (add: maybe present
 *	before, so not new; query: maybe present; delete: a copy removed).
 */
struct sieve_batch_stats {
	uint64_t done;
	uint64_t present;
};

/*
 * Filter names: 1 to SIEVE_NAME_MAX - 1 bytes of [A-Za-z0-9._-]. 0 if @name
 * is one, else -EINVAL (-ENAMETOOLONG if it is too long), as the module
 * answers.
 */
int sieve_name_check(const char *name);

/*
 * 0 if @p is a request the module's create contract accepts (which flags
 * and fields go together, their ranges), else what create would return:
 * -EINVAL, or -E2BIG for a capacity above SIEVE_MAX_CAPACITY. Not judged
 * here: the name, whether sizing reaches the rate (sieve_local_create()
 * says) and an explicit geometry's sizes. Local filters also refuse
 * %SIEVE_CREATE_EPHEMERAL.
 */
int sieve_params_check(const struct sieve_params *p);

/* ---- The device client --------------------------------------------------- */

/*
 * One open file of /dev/sieve. A handle may be used by one thread at a
 * time (the kernel side is safe for any number of handles). Ephemeral
 * filters created through a handle die when it is closed; an export or
 * import in progress belongs to its handle.
 */
struct sieve_dev;

/* $SIEVE_DEVICE if set and not empty, else "/dev/sieve". */
const char *sieve_dev_default_path(void);

/*
 * Opens @path (NULL: sieve_dev_default_path()) read-write if @writable,
 * else read-only (enough to list, look up, query, get info and export).
 * -ENOENT no such file (the module is not loaded), -EACCES, ...
 */
int sieve_dev_open(const char *path, bool writable, struct sieve_dev **out);
void sieve_dev_close(struct sieve_dev *dev);
/* The file descriptor, for poll()ing or raw ioctls; owned by @dev. */
int sieve_dev_fd(const struct sieve_dev *dev);

/* SIEVE_IOC_CREATE: the new filter's id (positive). */
int sieve_dev_create(struct sieve_dev *dev, const char *name, const struct sieve_params *p);
/* SIEVE_IOC_OPEN: the id of the filter called @name. */
int sieve_dev_lookup(struct sieve_dev *dev, const char *name);
/*
 * SIEVE_IOC_LIST, one page: up to @room entries of ids >= @start_id into
 * @entries; returns how many, *@next_id is where the next page starts
 * (0: none). @room is at most 4096.
 */
int sieve_dev_list(struct sieve_dev *dev, uint32_t start_id, struct sieve_list_entry *entries,
		   uint32_t room, uint32_t *next_id);
/*
 * Every filter, all pages: *@out is a malloc'd array (free() it; NULL when
 * there are none) and the return is its length.
 */
int sieve_dev_list_all(struct sieve_dev *dev, struct sieve_list_entry **out);
int sieve_dev_destroy(struct sieve_dev *dev, uint32_t id);
int sieve_dev_clear(struct sieve_dev *dev, uint32_t id);
int sieve_dev_info(struct sieve_dev *dev, uint32_t id, struct sieve_info *out);
/* SIEVE_IOC_MERGE: OR @src_id into @dst_id (non-scalable Bloom types). */
int sieve_dev_merge(struct sieve_dev *dev, uint32_t dst_id, uint32_t src_id);
/*
 * SIEVE_IOC_EXCHANGE: filters @a_id and @b_id swap their tables (keys,
 * layers, capacity, memory), atomically for every reader; ids and names
 * stay. Same type, seed, growth, max_layers, scalable or not and explicit
 * geometry or not, else -EINVAL (one may be ephemeral). To rebuild a filter in use: fill an ephemeral twin, exchange,
 * close (or destroy) the twin.
 */
int sieve_dev_exchange(struct sieve_dev *dev, uint32_t a_id, uint32_t b_id);

/*
 * One key. add: 1 if it may have been present (not new), 0 if new (flags:
 * enum sieve_add_flags). query: 1 maybe present, 0 absent. delete: 1
 * removed, 0 not found, -EOPNOTSUPP for the Bloom types.
 */
int sieve_dev_add(struct sieve_dev *dev, uint32_t id, const void *key, uint32_t len,
		  uint32_t flags);
int sieve_dev_query(struct sieve_dev *dev, uint32_t id, const void *key, uint32_t len);
int sieve_dev_delete(struct sieve_dev *dev, uint32_t id, const void *key, uint32_t len);

/*
 * A batch of @count keys: their bytes back to back at @keys, their lengths
 * at @lens. @op is enum sieve_batch_op, @flags enum sieve_add_flags for an
 * add. @results (NULL if only @stats matter) gets one 0/1 per key, as the
 * single-key calls return. Any @count: the keys go to the kernel in calls
 * of at most SIEVE_MAX_BATCH. 0, or -errno with @stats (optional) telling
 * how many keys were applied before the error, with their results.
 */
int sieve_dev_batch(struct sieve_dev *dev, uint32_t id, uint32_t op, uint32_t flags,
		    const void *keys, const uint32_t *lens, size_t count, uint8_t *results,
		    struct sieve_batch_stats *stats);

/*
 * SIEVE_IOC_EXPORT, whole: writes the filter's snapshot to @fd (1 MiB at a
 * time) and returns 0; *@bytes (optional) gets its size. -EIO if the
 * device stops short.
 */
int sieve_dev_export(struct sieve_dev *dev, uint32_t id, int fd, uint64_t *bytes);
/*
 * The same into the file @path: written beside it and renamed over it
 * once complete, so a failed export leaves any old file as it was (a path
 * that exists and is not a regular file is written in place).
 */
int sieve_dev_export_path(struct sieve_dev *dev, uint32_t id, const char *path, uint64_t *bytes);

/*
 * SIEVE_IOC_IMPORT, whole: reads a snapshot from @fd to its end (1 MiB at
 * a time) into a new filter @name; @flags is %SIEVE_CREATE_EPHEMERAL or 0.
 * Returns the new id. -EINVAL for a corrupted or truncated snapshot or one
 * followed by extra bytes (an unfinished import is dropped by the next
 * import or the close of @dev); -ENOEXEC for one of another format
 * version (version 1, from before the one-pass hash, cannot be converted:
 * rebuild it from its keys); the kernel's errors otherwise.
 */
int sieve_dev_import(struct sieve_dev *dev, const char *name, uint32_t flags, int fd);
int sieve_dev_import_path(struct sieve_dev *dev, const char *name, uint32_t flags,
			  const char *path);

/* ---- Local filters ------------------------------------------------------- */

/*
 * A filter in this process, over the same cores as the module: a table
 * built here is byte-identical to one the kernel builds from the same keys
 * and seed, and a snapshot of either loads into the other.
 *
 * Scalable filters grow as the module's do: the newest layer full (its
 * capacity of stored keys, or a cuckoo table that refuses a key) stacks a
 * layer @growth times larger at half the rate; at @max_layers a Bloom-type
 * filter keeps adding to its last layer and a cuckoo filter returns
 * -ENOSPC.
 *
 * Not thread-safe: one thread at a time per filter (or a lock of yours).
 */
struct sieve_local;

/*
 * -EINVAL bad parameters or %SIEVE_CREATE_EPHEMERAL; -E2BIG too big a
 * table or capacity; -ENOMEM.
 */
int sieve_local_create(const struct sieve_params *p, struct sieve_local **out);
void sieve_local_destroy(struct sieve_local *f);

/* As the device's single-key calls (add may also return -ENOSPC, -ENOMEM). */
int sieve_local_add(struct sieve_local *f, const void *key, uint32_t len, uint32_t flags);
int sieve_local_query(struct sieve_local *f, const void *key, uint32_t len);
int sieve_local_delete(struct sieve_local *f, const void *key, uint32_t len);
/* As sieve_dev_batch(), on a local filter. */
int sieve_local_batch(struct sieve_local *f, uint32_t op, uint32_t flags, const void *keys,
		      const uint32_t *lens, size_t count, uint8_t *results,
		      struct sieve_batch_stats *stats);
/* Forgets every key (a scalable filter goes back to one layer). */
int sieve_local_clear(struct sieve_local *f);
/*
 * ORs @src into @dst: both non-scalable, one layer, Bloom or blocked Bloom,
 * same geometry and seed; else -EINVAL.
 */
int sieve_local_merge(struct sieve_local *dst, const struct sieve_local *src);
/**
 * struct sieve_plan - the table sieve_local_create() would make first
 * @geo: the first layer's geometry (@geo.seed 0: the seed is not chosen yet).
 * @table_bytes: that layer's table, in bytes.
 * @expected_fpr_ppb: its false-positive rate once it holds its capacity of
 *	keys (a scalable filter's first layer gets half the target); 0 for an
 *	explicit geometry, which has no capacity.
 */
struct sieve_plan {
	struct sieve_geometry geo;
	uint64_t table_bytes;
	uint32_t expected_fpr_ppb;
};

/*
 * Sizes a filter without making it, so a program can show or refuse a size
 * before it allocates: the same checks and errors as sieve_local_create()
 * (-EINVAL also when the type cannot reach the rate, -E2BIG too big).
 */
int sieve_local_plan(const struct sieve_params *p, struct sieve_plan *out);

/*
 * Shape and counters, as SIEVE_IOC_INFO gives them (@id 0, @name empty,
 * @create_flags as given at creation).
 */
int sieve_local_info(const struct sieve_local *f, struct sieve_info *out);

/*
 * Snapshot files (the format of <linux/sieve.h>, every layer). save writes
 * the whole snapshot to @fd, built first in memory as large as the tables
 * (it is checksummed before it is written); save_path writes beside @path
 * and renames over it once complete. load reads @fd to its end and checks everything
 * (header, each table, the checksum): -EINVAL for a corrupted, truncated
 * or over-long snapshot, -ENOEXEC for one of another format version
 * (version 1 cannot be converted), -E2BIG for tables beyond the limits,
 * -ENOMEM.
 */
int sieve_local_save(const struct sieve_local *f, int fd);
int sieve_local_save_path(const struct sieve_local *f, const char *path);
int sieve_local_load(int fd, struct sieve_local **out);
int sieve_local_load_path(const char *path, struct sieve_local **out);

#ifdef __cplusplus
}
#endif

#endif /* LIBSIEVE_H */
