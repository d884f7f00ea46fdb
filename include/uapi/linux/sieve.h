/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * sieve: probabilistic set-membership filters in the kernel.
 *
 * What userspace and the kernel must agree on: the filter types and their
 * geometry, the ioctls of /dev/sieve, and the snapshot format that the
 * kernel's export and libsieve write and that both read.
 */
#ifndef _UAPI_LINUX_SIEVE_H
#define _UAPI_LINUX_SIEVE_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * enum sieve_filter_type - the filter families sieve implements
 * @SIEVE_BLOOM: classic Bloom filter, m bits, k probes spread over the bitmap.
 * @SIEVE_BLOCKED_BLOOM: Bloom filter whose k probes for a key all fall in one
 *	64-byte block (one cache miss per operation, slightly more bits/key).
 * @SIEVE_CUCKOO: cuckoo filter, buckets of 4 fingerprints; supports delete.
 */
enum sieve_filter_type {
	SIEVE_BLOOM = 1,
	SIEVE_BLOCKED_BLOOM = 2,
	SIEVE_CUCKOO = 3,
};

/**
 * enum sieve_add_flags - how an add treats a key that may be present
 * @SIEVE_ADD_IF_ABSENT: cuckoo: store nothing if the key may be present
 *	already (a set, for dedup); without it a cuckoo filter counts copies
 *	(a multiset, up to 8 of a key). Bloom types always behave so: an add
 *	is a test-and-set.
 */
enum sieve_add_flags {
	SIEVE_ADD_IF_ABSENT = 1U << 0,
};

#define SIEVE_ADD_FLAGS_ALL	SIEVE_ADD_IF_ABSENT

/* Probes per key a Bloom-type filter may use. */
#define SIEVE_MAX_HASHES	32
/* Bits in one blocked-Bloom block: one 64-byte cache line. */
#define SIEVE_BLOCK_BITS	512
/* Fingerprints per cuckoo bucket. */
#define SIEVE_CUCKOO_SLOTS	4
/* Fingerprint widths a cuckoo filter may use. */
#define SIEVE_CUCKOO_MIN_FP_BITS	4
#define SIEVE_CUCKOO_MAX_FP_BITS	16
/* Largest table one filter may hold, in bytes (1 GiB). */
#define SIEVE_MAX_TABLE_BYTES	(1ULL << 30)
/* Largest capacity the sizing accepts. */
#define SIEVE_MAX_CAPACITY	(1ULL << 40)
/* False-positive rates are given in parts per billion. */
#define SIEVE_PPB		1000000000U

/**
 * struct sieve_geometry - the shape of one filter
 * @type: an enum sieve_filter_type value.
 * @seed: seed of every hash of the filter; filters can be merged only if
 *	their seeds are equal.
 * @nbits: Bloom: bits in the bitmap, at least 64 (any value, not only powers
 *	of two). Blocked Bloom: a multiple of %SIEVE_BLOCK_BITS. Cuckoo: 0.
 * @nbuckets: Cuckoo: buckets, a power of two, at least 2. Others: 0.
 * @nhashes: Bloom types: probes per key, 1 to %SIEVE_MAX_HASHES. Cuckoo: 0.
 * @fp_bits: Cuckoo: fingerprint bits, %SIEVE_CUCKOO_MIN_FP_BITS to
 *	%SIEVE_CUCKOO_MAX_FP_BITS, packed tightly (12 bits cost 12 bits).
 *	Others: 0.
 *
 * A field that does not apply to the type must be 0. A table larger than
 * %SIEVE_MAX_TABLE_BYTES is refused with -E2BIG.
 */
struct sieve_geometry {
	__u32 type;
	__u32 seed;
	__u64 nbits;
	__u64 nbuckets;
	__u32 nhashes;
	__u32 fp_bits;
};

/*
 * ---------------------------------------------------------------------------
 * /dev/sieve
 * ---------------------------------------------------------------------------
 */

/**
 * DOC: The /dev/sieve ioctls
 *
 * Filters live in the kernel, in one registry per system, under a name and
 * an id. Every command takes one struct whose first two fields are @size
 * and @flags. Fields marked "out" are written back on success and, where
 * said, on failure. Reserved fields must be zero. Keys are 1 to
 * %SIEVE_MAX_KEY_LEN bytes.
 *
 * Structs grow at their end, as clone3()'s do. @size is the caller's
 * sizeof the struct: at least its first version's size
 * (SIEVE_<STRUCT>_SIZE_VER0, else -EINVAL) and at most 4096 (else -E2BIG).
 * A caller built against an older header passes a smaller struct: the
 * kernel reads the fields it holds, takes those past its end as zero, and
 * writes "out" fields back only as far as @size reaches. A caller built
 * against a newer header passes a larger struct: the bytes past the fields
 * this kernel knows must be zero (else -E2BIG). So a field added later
 * must mean "as before" when zero, and a SIEVE_<STRUCT>_SIZE_VER1 then
 * names the new end.
 *
 * A file opened read-only may only QUERY, QUERY batches, INFO, LIST, OPEN
 * and EXPORT; anything else gets -EBADF. The device is 0600 root by default.
 *
 * What a reader (a file opened read-only) can cost a writer, at most:
 *
 * - Memory: nothing of the writers' budget. The snapshot an EXPORT on a
 *   read-only file takes (one per file: a new export drops the one held)
 *   counts against the module parameter max_reader_memory_mb (default
 *   256), not max_memory_mb: past it the EXPORT fails with ENOBUFS, and a
 *   writer's CREATE, IMPORT, growth or CLEAR never fails for what readers
 *   hold. A table a CLEAR or DESTROY lets go while an INFO or EXPORT still
 *   reads it is freed when that call ends, and counts against the
 *   readers' budget until then. So the module holds at most max_memory_mb
 *   plus max_reader_memory_mb, plus the tables of filters cleared or
 *   destroyed during one INFO or EXPORT per reader.
 * - Time: INFO and EXPORT hold a filter's lock against growth, CLEAR,
 *   MERGE and EXCHANGE only while they take references to its layers (a
 *   few dozen pointers), never while they read a table: a writer waits
 *   for no whole-table scan or copy of a reader. Of ADD, DELETE and
 *   QUERY, only an ADD that grows a scalable filter takes that lock. A
 *   reader's EXPORT of a cuckoo filter never stops its writers: a write
 *   or an EXCHANGE during its copy makes it copy again, 8 times at most,
 *   then it fails with EAGAIN (a writer's EXPORT instead stops writes for
 *   one copy of the tables: a memcpy).
 * - CPU and memory bandwidth: each INFO reads a Bloom-type table once
 *   (cuckoo filters keep their count), and each EXPORT copies and
 *   checksums the tables; this is the reader's own time, in its own
 *   context, which a fatal signal interrupts between copies.
 *
 * Errors, for every command:
 *
 * - ENOTTY: unknown command.
 * - EINVAL: a @size below the struct's SIZE_VER0, unknown or conflicting
 *   @flags, a nonzero reserved field, or a field out of its documented
 *   range (each command lists its own); a corrupted snapshot (any header
 *   field, a table whose unused bits are set, a wrong checksum, a chunk at
 *   the wrong offset).
 * - E2BIG: a @size above 4096, or a nonzero byte past the fields the
 *   kernel knows (a newer caller asking for something this kernel lacks).
 * - EFAULT: a pointer (or the struct itself) that cannot be read or
 *   written.
 * - EBADF: a command that changes filters on a file opened read-only
 *   (checked before the struct is read, except for BATCH, whose @op says).
 * - ENOENT: no filter has this id or name (it never existed or was
 *   destroyed); ids are not reused soon after a destroy.
 *
 * And per command:
 *
 * - CREATE, OPEN, IMPORT: ENAMETOOLONG @name has no NUL in its
 *   %SIEVE_NAME_MAX bytes; EINVAL any other bad name.
 * - CREATE, IMPORT: EEXIST the name is taken; E2BIG the table would exceed
 *   %SIEVE_MAX_TABLE_BYTES or the capacity %SIEVE_MAX_CAPACITY; ENOSPC the
 *   module's limit on filters (max_filters) is reached; ENOMEM no memory,
 *   or the module's limit on memory (max_memory_mb) or the caller's memory
 *   cgroup would be exceeded. EINVAL also for a rate the type cannot reach
 *   (a cuckoo filter below 1.2e-4; a scalable filter's first layer is
 *   sized for half the rate).
 * - ADD and ADD batches: ENOSPC a cuckoo filter is full (a scalable one:
 *   its last layer is full, or the next layer's rate or table is out of
 *   range); nothing stored before is lost. ENOMEM a scalable filter could
 *   not grow for lack of memory (the add may be retried). A scalable Bloom
 *   filter that cannot grow for any other reason (max_layers, a rate or
 *   table out of range) keeps adding to its last layer, whose rate then
 *   rises above the target: SIEVE_IOC_INFO's @fpr_ppb shows it.
 * - CLEAR: ENOMEM the fresh table (allocated before the old one is freed,
 *   so concurrent users never see a half-cleared filter) would exceed a
 *   limit; the filter is unchanged.
 * - EXPORT: ENOMEM the snapshot buffer would exceed max_memory_mb (a file
 *   opened for writing) or there is no memory; ENOBUFS (a file opened
 *   read-only) it would exceed max_reader_memory_mb; EAGAIN (a file
 *   opened read-only) writes to a cuckoo filter, or exchanges, came during
 *   each of 8 copies: try again later or from a writer; EINTR a fatal
 *   signal arrived between two copies.
 * - DELETE: EOPNOTSUPP the type cannot delete (the Bloom types). A key that
 *   is not stored is not an error: @result says 0.
 * - Batches: EINTR a fatal signal arrived between two chunks. On any error
 *   after the call started, @done says how many keys were applied, in
 *   order, with their results written; the rest were not touched. Bad
 *   @lens (a length out of range, or a sum other than @keys_bytes) are
 *   found before any key is applied. An EFAULT writing @results leaves the
 *   results of the last chunk (up to 256 keys) unwritten, though its keys
 *   were applied and count in @done.
 * - MERGE: EINVAL the two filters differ in type, geometry or seed, are the
 *   same filter, are scalable, or are cuckoo filters.
 * - EXCHANGE: EINVAL the two filters differ in type, seed, growth,
 *   max_layers, or in %SIEVE_CREATE_SCALABLE or %SIEVE_CREATE_GEOMETRY, or
 *   @a_id equals @b_id; ENOENT either id names no filter. Nothing is
 *   changed on any error.
 * - IMPORT: ENOEXEC a snapshot of another format @version (version 1,
 *   from before the one-pass hash, cannot be converted without its keys);
 *   EINVAL any other bad header, layer or checksum.
 *   EALREADY (offset > 0) no import is in progress on this file;
 *   EINTR a fatal signal arrived within a chunk (the import is dropped).
 *   Once the header has arrived, the payload it announces is counted
 *   against max_memory_mb (ENOMEM) before any table is allocated.
 */

#define SIEVE_IOC_MAGIC		0xB9
/*
 * The version of this ABI: the ioctls above and below and their structs.
 * It goes up by one when a command or a struct's SIZE_VERn is added; what
 * an older caller passes keeps working (structs grow, commands are never
 * renumbered). Tools print it (`sieve --version`) so a report names the
 * ABI a binary was built against.
 */
#define SIEVE_ABI_VERSION	2

/* Longest key, in bytes. */
#define SIEVE_MAX_KEY_LEN	4096
/* Filter names: 1 to 31 bytes of [A-Za-z0-9._-], NUL-terminated. */
#define SIEVE_NAME_MAX		32
/* Keys one batch call may carry. */
#define SIEVE_MAX_BATCH		(1U << 20)
/*
 * A scalable filter: layers it may grow to, and the capacity factor
 * between one layer and the next; the defaults apply where a create
 * leaves the field 0.
 */
#define SIEVE_MIN_LAYERS	2
#define SIEVE_MAX_LAYERS	32
#define SIEVE_DEFAULT_LAYERS	8
#define SIEVE_MIN_GROWTH	2
#define SIEVE_MAX_GROWTH	16
#define SIEVE_DEFAULT_GROWTH	2

/**
 * enum sieve_create_flags - how a filter is created
 * @SIEVE_CREATE_EPHEMERAL: destroy the filter when the file that created it
 *	is closed (the last reference to that open file goes away).
 * @SIEVE_CREATE_SCALABLE: when the newest layer holds its capacity (or a
 *	cuckoo layer is full), stack a new layer @growth times larger whose
 *	rate is half the previous one's. Layer i is sized for fpp/2^(i+1), so
 *	the rate of the whole filter stays below fpp at any size. Needs
 *	capacity and fpp, not an explicit geometry. A layer whose rate the
 *	type cannot reach (cuckoo: below 1.2e-4, so at fpp 1% about 6
 *	layers) is not made: a Bloom filter then keeps adding to its last
 *	layer, a cuckoo filter answers -ENOSPC when that layer is full.
 * @SIEVE_CREATE_GEOMETRY: use @geo as given instead of sizing from
 *	@capacity and @fpp_ppb.
 * @SIEVE_CREATE_SEED: use @seed instead of a random one.
 */
enum sieve_create_flags {
	SIEVE_CREATE_EPHEMERAL	= 1U << 0,
	SIEVE_CREATE_SCALABLE	= 1U << 1,
	SIEVE_CREATE_GEOMETRY	= 1U << 2,
	SIEVE_CREATE_SEED	= 1U << 3,
};

#define SIEVE_CREATE_FLAGS_ALL	(SIEVE_CREATE_EPHEMERAL | SIEVE_CREATE_SCALABLE | \
				 SIEVE_CREATE_GEOMETRY | SIEVE_CREATE_SEED)

/**
 * struct sieve_create - SIEVE_IOC_CREATE: make a named filter
 * @size: sizeof(struct sieve_create).
 * @flags: enum sieve_create_flags.
 * @name: 1 to 31 bytes of [A-Za-z0-9._-], then NUL; the bytes after the
 *	NUL must be zero. Else -EINVAL (-ENAMETOOLONG without a NUL);
 *	-EEXIST if another filter has it.
 * @type: enum sieve_filter_type.
 * @fpp_ppb: target false-positive rate in parts per billion, 1 to
 *	%SIEVE_PPB - 1; must be 0 with %SIEVE_CREATE_GEOMETRY.
 * @capacity: keys the filter must hold at that rate, 1 to
 *	%SIEVE_MAX_CAPACITY; must be 0 with %SIEVE_CREATE_GEOMETRY. Scalable:
 *	of the first layer.
 * @geo: with %SIEVE_CREATE_GEOMETRY, the exact geometry (geo.type equal to
 *	@type, geo.seed 0: the seed comes from @seed); else all zero.
 * @seed: with %SIEVE_CREATE_SEED, the hash seed; else 0 (a random seed).
 * @growth: scalable: each layer's capacity is @growth times the previous
 *	one's, %SIEVE_MIN_GROWTH to %SIEVE_MAX_GROWTH (0 means
 *	%SIEVE_DEFAULT_GROWTH). Else 0.
 * @max_layers: scalable: at most this many layers, %SIEVE_MIN_LAYERS to
 *	%SIEVE_MAX_LAYERS (0 means %SIEVE_DEFAULT_LAYERS). Else 0.
 * @id: out: the new filter's id.
 * @__reserved: must be 0.
 */
struct sieve_create {
	__u32 size;
	__u32 flags;
	char name[SIEVE_NAME_MAX];
	__u32 type;
	__u32 fpp_ppb;
	__u64 capacity;
	struct sieve_geometry geo;
	__u32 seed;
	__u32 growth;
	__u32 max_layers;
	__u32 id;
	__u32 __reserved[2];
};

/**
 * struct sieve_open - SIEVE_IOC_OPEN: find a filter by name
 * @size: sizeof(struct sieve_open).
 * @flags: must be 0.
 * @name: the name, as for create.
 * @id: out: its id.
 * @__reserved: must be 0.
 */
struct sieve_open {
	__u32 size;
	__u32 flags;
	char name[SIEVE_NAME_MAX];
	__u32 id;
	__u32 __reserved;
};

/**
 * struct sieve_id - SIEVE_IOC_DESTROY, SIEVE_IOC_CLEAR: act on one filter
 * @size: sizeof(struct sieve_id).
 * @flags: must be 0.
 * @id: the filter. Destroy removes the name and id at once; operations
 *	already running on the filter finish, and its memory is freed after
 *	the last of them. Clear forgets every key and zeroes the counters of
 *	keys (inserted, deleted); a scalable filter goes back to one layer.
 * @__reserved: must be 0.
 */
struct sieve_id {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 __reserved;
};

/**
 * struct sieve_list_entry - one filter, as SIEVE_IOC_LIST reports it
 * @id: its id.
 * @type: enum sieve_filter_type.
 * @flags: the enum sieve_create_flags it was created with.
 * @__reserved: 0.
 * @name: its name, NUL-terminated.
 */
struct sieve_list_entry {
	__u32 id;
	__u32 type;
	__u32 flags;
	__u32 __reserved;
	char name[SIEVE_NAME_MAX];
};

/**
 * struct sieve_list - SIEVE_IOC_LIST: one page of filters, by id
 * @size: sizeof(struct sieve_list).
 * @flags: must be 0.
 * @start_id: list filters whose id is at least this.
 * @count: in: room at @entries (0 to 4096); out: entries written.
 * @entries: pointer to @count struct sieve_list_entry.
 * @next_id: out: @start_id of the next page, 0 when this page is the last.
 * @__reserved: must be 0.
 */
struct sieve_list {
	__u32 size;
	__u32 flags;
	__u32 start_id;
	__u32 count;
	__u64 entries;
	__u32 next_id;
	__u32 __reserved;
};

/**
 * struct sieve_key_op - SIEVE_IOC_ADD, SIEVE_IOC_QUERY, SIEVE_IOC_DELETE
 * @size: sizeof(struct sieve_key_op).
 * @flags: add: enum sieve_add_flags; else 0.
 * @id: the filter.
 * @key_len: bytes at @key, 1 to %SIEVE_MAX_KEY_LEN.
 * @key: pointer to the key.
 * @result: out: 1 if the key may have been present before the call (add:
 *	not new, so a dedup can drop it; query: maybe present; delete: a copy
 *	was found and removed), 0 if not.
 * @__reserved: must be 0.
 */
struct sieve_key_op {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 key_len;
	__u64 key;
	__u32 result;
	__u32 __reserved;
};

/**
 * enum sieve_batch_op - what a batch does to each key
 * @SIEVE_BATCH_ADD: add, as SIEVE_IOC_ADD.
 * @SIEVE_BATCH_QUERY: query, as SIEVE_IOC_QUERY.
 * @SIEVE_BATCH_DELETE: delete, as SIEVE_IOC_DELETE.
 */
enum sieve_batch_op {
	SIEVE_BATCH_ADD = 1,
	SIEVE_BATCH_QUERY = 2,
	SIEVE_BATCH_DELETE = 3,
};

/**
 * struct sieve_batch - SIEVE_IOC_BATCH: one operation on many keys
 * @size: sizeof(struct sieve_batch).
 * @flags: add: enum sieve_add_flags; else 0.
 * @id: the filter.
 * @op: enum sieve_batch_op.
 * @count: keys, 1 to %SIEVE_MAX_BATCH.
 * @done: out, on success and failure: keys applied, in order; their
 *	results are written.
 * @keys: pointer to the keys' bytes, back to back, no padding.
 * @keys_bytes: bytes at @keys: the sum of @lens.
 * @lens: pointer to @count __u32 key lengths, each 1 to %SIEVE_MAX_KEY_LEN.
 * @results: pointer to @count __u8, each set as &struct sieve_key_op's
 *	@result for its key; or 0 when the caller wants only @present.
 * @present: out, on success and failure: how many of the @done results
 *	are 1.
 * @__reserved: must be 0.
 *
 * The kernel reads keys and writes results a chunk at a time; it never
 * allocates memory sized by @count.
 */
struct sieve_batch {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 op;
	__u32 count;
	__u32 done;
	__u64 keys;
	__u64 keys_bytes;
	__u64 lens;
	__u64 results;
	__u32 present;
	__u32 __reserved;
};

/**
 * struct sieve_info - SIEVE_IOC_INFO: a filter's shape and counters
 * @size: sizeof(struct sieve_info).
 * @flags: must be 0.
 * @id: the filter.
 * @create_flags: out: the enum sieve_create_flags it was created with.
 * @name: out: its name.
 * @geo: out: the geometry of its first layer (the seed included).
 * @capacity: out: keys it was sized for, all layers together (0 for an
 *	explicit geometry).
 * @fpp_ppb: out: the target rate it was sized for (0 for an explicit
 *	geometry).
 * @nlayers: out: layers in use (1 unless scalable).
 * @max_layers: out: scalable: the most layers it may have; else 1.
 * @growth: out: scalable: capacity factor between layers; else 0.
 * @fill_ppm: out: of the newest layer, Bloom types: bits set, cuckoo:
 *	slots used, in parts per million.
 * @fpr_ppb: out: the false-positive rate of a query now (all layers).
 * @items: out: keys stored (cuckoo: exact; Bloom types: estimated from
 *	the bits set).
 * @inserted: out: adds that stored a key. Bloom types: adds reported new.
 *	Cuckoo: every add that stored a fingerprint (without
 *	%SIEVE_ADD_IF_ABSENT also another copy of a present key), so that
 *	@inserted - @deleted = @items for a filter the kernel made (a
 *	clear zeroes all three).
 * @deleted: out: deletes that removed a key.
 * @queries: out: queries (single and batched).
 * @hits: out: queries that answered "maybe present".
 * @memory_bytes: out: memory the filter holds, tables and headers.
 * @snapshot_bytes: out: size of its snapshot (SIEVE_IOC_EXPORT), now.
 */
struct sieve_info {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 create_flags;
	char name[SIEVE_NAME_MAX];
	struct sieve_geometry geo;
	__u64 capacity;
	__u32 fpp_ppb;
	__u32 nlayers;
	__u32 max_layers;
	__u32 growth;
	__u32 fill_ppm;
	__u32 fpr_ppb;
	__u64 items;
	__u64 inserted;
	__u64 deleted;
	__u64 queries;
	__u64 hits;
	__u64 memory_bytes;
	__u64 snapshot_bytes;
};

/**
 * struct sieve_export - SIEVE_IOC_EXPORT: read a filter's snapshot
 * @size: sizeof(struct sieve_export).
 * @flags: must be 0.
 * @id: the filter.
 * @__reserved: must be 0.
 * @offset: byte of the snapshot to start at. Offset 0 takes a new
 *	snapshot of the filter, consistent as of this call, held by the open
 *	file (and counted in the module's memory) until its last byte is
 *	read, another export starts on the file, or the file is closed. Later
 *	offsets read that snapshot (-EINVAL if none is held for @id, for
 *	example because the filter was destroyed meanwhile, or @offset is
 *	past its end). -ENOMEM if the copy would pass max_memory_mb,
 *	-ENOBUFS on a file opened read-only if it would pass
 *	max_reader_memory_mb, -EAGAIN on such a file if writes kept changing
 *	a cuckoo table (see "What a reader can cost a writer" above).
 * @buf: pointer to @buf_len bytes to fill.
 * @buf_len: room at @buf; 0 only asks for @total (at offset 0, without
 *	taking a snapshot or dropping a held one: the size of a snapshot
 *	taken now, which writes may change before the first read).
 * @copied: out: bytes written to @buf.
 * @total: out: the snapshot's size.
 */
struct sieve_export {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 __reserved;
	__u64 offset;
	__u64 buf;
	__u64 buf_len;
	__u64 copied;
	__u64 total;
};

/**
 * struct sieve_import - SIEVE_IOC_IMPORT: make a filter from a snapshot
 * @size: sizeof(struct sieve_import).
 * @flags: %SIEVE_CREATE_EPHEMERAL or 0.
 * @name: the new filter's name, as for create (checked at offset 0 and
 *	again when the filter is made; later chunks' @name and @flags are
 *	ignored).
 * @offset: bytes of the snapshot given before this chunk. Offset 0 starts
 *	a new import on this file (dropping an unfinished one); a chunk must
 *	start where the previous one ended.
 * @buf: pointer to the chunk.
 * @buf_len: bytes at @buf, 1 or more; the first chunk must hold at least
 *	the header (struct sieve_snapshot_header).
 * @id: out: 0 while more bytes are expected; the new filter's id once the
 *	last byte has arrived and the whole snapshot checked out.
 * @__reserved: must be 0.
 *
 * The snapshot is untrusted: the header is validated in full before
 * anything is allocated, each table is checked as it completes, the
 * checksum at the end. On any error the import is dropped and nothing is
 * created.
 */
struct sieve_import {
	__u32 size;
	__u32 flags;
	char name[SIEVE_NAME_MAX];
	__u64 offset;
	__u64 buf;
	__u64 buf_len;
	__u32 id;
	__u32 __reserved;
};

/**
 * struct sieve_merge - SIEVE_IOC_MERGE: OR one Bloom filter into another
 * @size: sizeof(struct sieve_merge).
 * @flags: must be 0.
 * @dst_id: the filter that receives the union.
 * @src_id: the filter whose keys are added; unchanged.
 *
 * Both must be non-scalable Bloom or blocked-Bloom filters with the same
 * geometry and seed. Adds running on @dst meanwhile are kept.
 */
struct sieve_merge {
	__u32 size;
	__u32 flags;
	__u32 dst_id;
	__u32 src_id;
};

/**
 * struct sieve_exchange - SIEVE_IOC_EXCHANGE: swap the keys of two filters
 * @size: sizeof(struct sieve_exchange).
 * @flags: must be 0.
 * @a_id: one filter.
 * @b_id: the other; not @a_id.
 *
 * Each filter takes the other's table: its layers (with their geometry,
 * capacity and keys), its target rate (@fpp_ppb of INFO), whether it may
 * still grow, and the memory it holds (@memory_bytes of INFO). The
 * counters of keys, @inserted and @deleted, go with the table, so that
 * INFO's @items and @inserted - @deleted still describe it. What names
 * the filter stays: its id, name, create flags (an ephemeral filter's
 * owner too), and its counters of queries (@queries, @hits).
 *
 * Both must have the same type, seed, growth and max_layers, and agree on
 * %SIEVE_CREATE_SCALABLE and %SIEVE_CREATE_GEOMETRY, the create flags
 * that shape a table; %SIEVE_CREATE_EPHEMERAL and %SIEVE_CREATE_SEED may
 * differ (the seeds themselves are compared). Their capacities,
 * geometries, target rates and numbers of layers may differ.
 *
 * The exchange is atomic for every reader: a query of either filter (an
 * ioctl, the in-kernel API, a BPF program) answers from its old table or
 * from its new one, never from neither nor from a mix. An add or delete
 * made on a filter while the exchange runs acts on its old table or on
 * its new one; on the old one, the key is now the other filter's (and
 * that call's count in @inserted or @deleted may land on either filter).
 * When the call returns, no reader is still on a filter's old table, so
 * the other filter may be destroyed at once.
 *
 * The use: a new table built beside a filter in use (an ephemeral filter
 * of the same type and seed, filled), then exchanged with it, replaces
 * its keys without a moment in which a key of both is missing, and
 * without a change of name or id; closing the builder's file then frees
 * the old table.
 */
struct sieve_exchange {
	__u32 size;
	__u32 flags;
	__u32 a_id;
	__u32 b_id;
};

/* Each struct's first version, in bytes: the smallest @size accepted. */
#define SIEVE_CREATE_SIZE_VER0	112
#define SIEVE_OPEN_SIZE_VER0	48
#define SIEVE_ID_SIZE_VER0	16
#define SIEVE_LIST_SIZE_VER0	32
#define SIEVE_KEY_OP_SIZE_VER0	32
#define SIEVE_BATCH_SIZE_VER0	64
#define SIEVE_INFO_SIZE_VER0	168
#define SIEVE_EXPORT_SIZE_VER0	56
#define SIEVE_IMPORT_SIZE_VER0	72
#define SIEVE_MERGE_SIZE_VER0	16
#define SIEVE_EXCHANGE_SIZE_VER0	16

#define SIEVE_IOC_CREATE	_IO(SIEVE_IOC_MAGIC, 0x00)
#define SIEVE_IOC_OPEN		_IO(SIEVE_IOC_MAGIC, 0x01)
#define SIEVE_IOC_LIST		_IO(SIEVE_IOC_MAGIC, 0x02)
#define SIEVE_IOC_DESTROY	_IO(SIEVE_IOC_MAGIC, 0x03)
#define SIEVE_IOC_ADD		_IO(SIEVE_IOC_MAGIC, 0x04)
#define SIEVE_IOC_QUERY		_IO(SIEVE_IOC_MAGIC, 0x05)
#define SIEVE_IOC_DELETE	_IO(SIEVE_IOC_MAGIC, 0x06)
#define SIEVE_IOC_BATCH		_IO(SIEVE_IOC_MAGIC, 0x07)
#define SIEVE_IOC_CLEAR		_IO(SIEVE_IOC_MAGIC, 0x08)
#define SIEVE_IOC_INFO		_IO(SIEVE_IOC_MAGIC, 0x09)
#define SIEVE_IOC_EXPORT	_IO(SIEVE_IOC_MAGIC, 0x0a)
#define SIEVE_IOC_IMPORT	_IO(SIEVE_IOC_MAGIC, 0x0b)
#define SIEVE_IOC_MERGE		_IO(SIEVE_IOC_MAGIC, 0x0c)
#define SIEVE_IOC_EXCHANGE	_IO(SIEVE_IOC_MAGIC, 0x0d)

/*
 * ---------------------------------------------------------------------------
 * Snapshots
 * ---------------------------------------------------------------------------
 */

/**
 * DOC: Snapshot format
 *
 * One format, written by SIEVE_IOC_EXPORT and by libsieve, read by
 * SIEVE_IOC_IMPORT and by libsieve. Every field is little-endian. In order:
 *
 * - struct sieve_snapshot_header (128 bytes);
 * - for each of @nlayers layers: struct sieve_snapshot_layer (64 bytes),
 *   then the layer's table, @table_bytes as its geometry gives, then zero
 *   bytes up to the next multiple of 8.
 *
 * @checksum covers everything else: h = jhash(piece, length, h) from
 * h = %SIEVE_SNAPSHOT_MAGIC over, in order, the header (with @checksum
 * read as 0), each layer header, each table in pieces of 4096 bytes (the
 * last piece shorter), and its padding if any. jhash is the kernel's
 * <linux/jhash.h>; libsieve carries a bit-identical copy.
 *
 * The table format is tied to the hash and to the way each type turns it
 * into bits: @version changes when either does. Version 2: the 64-bit
 * hash of one jhash pass (the final state's c and b words), and blocked
 * Bloom patterns from independent draws. Version 1 (two jhash passes,
 * Floyd's sampling) put keys elsewhere: its tables cannot be converted
 * without the keys, so it is refused (ENOEXEC, as any other version);
 * rebuild the filter from its keys (`sieve build`).
 */
#define SIEVE_SNAPSHOT_MAGIC	0x56454953U	/* "SIEV" */
#define SIEVE_SNAPSHOT_VERSION	2

/**
 * struct sieve_snapshot_header - the first 128 bytes of a snapshot
 * @magic: %SIEVE_SNAPSHOT_MAGIC.
 * @version: %SIEVE_SNAPSHOT_VERSION.
 * @header_bytes: sizeof(struct sieve_snapshot_header), 128.
 * @create_flags: the filter's enum sieve_create_flags, without
 *	%SIEVE_CREATE_EPHEMERAL (the importer chooses that).
 * @type: enum sieve_filter_type, of every layer.
 * @nlayers: layers that follow, 1 to @max_layers.
 * @max_layers: 1, or for a scalable filter %SIEVE_MIN_LAYERS to
 *	%SIEVE_MAX_LAYERS.
 * @growth: scalable: %SIEVE_MIN_GROWTH to %SIEVE_MAX_GROWTH; else 0.
 * @fpp_ppb: the target rate (0 for an explicit geometry).
 * @capacity: keys the first layer was sized for (0 for an explicit
 *	geometry).
 * @inserted: counters, as &struct sieve_info has them.
 * @deleted: see @inserted.
 * @queries: see @inserted.
 * @hits: see @inserted.
 * @payload_bytes: bytes after this header: layer headers, tables and
 *	their padding.
 * @checksum: see the format's description.
 * @__reserved: must be 0.
 */
struct sieve_snapshot_header {
	__u32 magic;
	__u16 version;
	__u16 header_bytes;
	__u32 create_flags;
	__u32 type;
	__u32 nlayers;
	__u32 max_layers;
	__u32 growth;
	__u32 fpp_ppb;
	__u64 capacity;
	__u64 inserted;
	__u64 deleted;
	__u64 queries;
	__u64 hits;
	__u64 payload_bytes;
	__u32 checksum;
	__u32 __reserved[11];
};

/**
 * struct sieve_snapshot_layer - the 64 bytes before each layer's table
 * @geo: the layer's geometry; type and seed as the first layer's.
 * @capacity: keys this layer takes before a scalable filter grows (0 for
 *	an explicit geometry).
 * @items: adds that stored a key in this layer (Bloom types; growth
 *	counts them); cuckoo: fingerprints stored, which the importer
 *	recounts from the table and compares.
 * @victim_fp: cuckoo: the fingerprint parked in the victim slot of a full
 *	table, 1 to 2^fp_bits - 1; 0 when none. Else 0.
 * @victim_bucket: cuckoo: one of its buckets (below nbuckets). Else 0.
 * @table_bytes: bytes of the table that follows, as the geometry gives.
 */
struct sieve_snapshot_layer {
	struct sieve_geometry geo;
	__u64 capacity;
	__u64 items;
	__u32 victim_fp;
	__u32 victim_bucket;
	__u64 table_bytes;
};

#endif /* _UAPI_LINUX_SIEVE_H */
