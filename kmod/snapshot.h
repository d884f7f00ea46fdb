/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Snapshots (the format is in <linux/sieve.h>): written and read here,
 * once, for the kernel's export and import and for libsieve's files.
 *
 * Writing: a snapshot is built in one buffer of sieve_snapshot_bytes():
 * the caller fills the header's description fields, puts each layer with
 * sieve_snapshot_put_layer() (holding whatever keeps a cuckoo table still
 * while it is copied), then sieve_snapshot_seal() sets the sizes and the
 * checksum.
 *
 * Reading: a snapshot is untrusted. The reader is fed in pieces of any
 * size: it says where the next bytes go (sieve_snapshot_reader_window(),
 * straight into a table once its layer header has been checked and the
 * layer allocated), the caller writes there and reports how many
 * (sieve_snapshot_reader_advance()), which validates each part as it
 * completes: the header before anything is allocated, each layer header
 * before its table is allocated, each table's unused bits and state, and
 * the checksum at the end.
 */
#ifndef SIEVE_SNAPSHOT_H
#define SIEVE_SNAPSHOT_H

#include "filter.h"

/**
 * struct sieve_snapshot_layer_src - one layer to write
 * @filter: the layer's filter.
 * @capacity: keys the layer takes before a scalable filter grows (0 for an
 *	explicit geometry).
 * @items: Bloom types: adds that stored a key in the layer. Cuckoo: ignored
 *	(the table's own count is written).
 */
struct sieve_snapshot_layer_src {
	struct sieve_filter *filter;
	u64 capacity;
	u64 items;
};

/* Bytes of the snapshot of these layers (header included). */
u64 sieve_snapshot_bytes(const struct sieve_snapshot_layer_src *layers, u32 nlayers);

/*
 * Writes one layer (its header, then a copy of its table) at @out and
 * returns the bytes written. May sleep (large copies yield the CPU).
 */
u64 sieve_snapshot_put_layer(const struct sieve_snapshot_layer_src *src, void *out);

/*
 * @buf holds a header whose magic..counters fields the caller filled, then
 * the layers: sets magic, version, sizes and the checksum. @bytes is the
 * whole snapshot.
 */
void sieve_snapshot_seal(void *buf, u64 bytes);

/* The snapshot checksum of @bytes at @data, from @h. */
u32 sieve_snapshot_checksum(u32 h, const void *data, u64 bytes);
/* The checksum a whole snapshot in memory should carry (what seal sets). */
u32 sieve_snapshot_buffer_checksum(const void *buf, u64 bytes);

/**
 * struct sieve_snapshot_reader - a snapshot being read
 * @hdr: the header, once read (valid after the first
 *	sizeof(struct sieve_snapshot_header) bytes were accepted).
 * @layer_hdr: the header of the layer being read.
 * @layers: the layers read so far (or being read: the last one), each
 *	with the capacity and items its header gave.
 * @nlayers: entries in @layers.
 * @stage: what the next bytes are (private).
 * @part_done: bytes of the current part received (private).
 * @offset: bytes accepted so far.
 * @sum: the running checksum (private).
 * @pad: where a table's padding is received (private).
 *
 * Owned by one caller at a time; no locking of its own.
 */
struct sieve_snapshot_reader {
	struct sieve_snapshot_header hdr;
	struct sieve_snapshot_layer layer_hdr;
	struct sieve_snapshot_layer_src layers[SIEVE_MAX_LAYERS];
	u32 nlayers;
	u32 stage;
	u64 part_done;
	u64 offset;
	u32 sum;
	u64 pad;
};

void sieve_snapshot_reader_init(struct sieve_snapshot_reader *r);
/*
 * Where the next bytes go, and (@len) how many may go there at most; NULL
 * once the snapshot is complete.
 */
void *sieve_snapshot_reader_window(struct sieve_snapshot_reader *r, u64 *len);
/*
 * @n bytes (at most the window's length) were written at the window. 0, or
 * -EINVAL for a corrupted snapshot (anything that fails validation),
 * -E2BIG for a table larger than the limits, -ENOMEM. After an error the
 * reader must be released.
 */
int sieve_snapshot_reader_advance(struct sieve_snapshot_reader *r, u64 n);
/* The header has been read and checked: r->hdr is valid. */
bool sieve_snapshot_reader_has_header(const struct sieve_snapshot_reader *r);
/* Every byte has been read and checked, the checksum included. */
bool sieve_snapshot_reader_done(const struct sieve_snapshot_reader *r);
/*
 * Hands the layers to the caller (@out gets r->nlayers entries), which then
 * owns the filters; only after sieve_snapshot_reader_done().
 */
void sieve_snapshot_reader_take(struct sieve_snapshot_reader *r,
				struct sieve_snapshot_layer_src *out);
/* Frees whatever the reader still owns. */
void sieve_snapshot_reader_release(struct sieve_snapshot_reader *r);

#endif /* SIEVE_SNAPSHOT_H */
