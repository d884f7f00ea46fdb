/* SPDX-License-Identifier: GPL-2.0 */
/* libsieve's local filters, inside the library (not installed). */
#ifndef SIEVE_LIB_LOCAL_H
#define SIEVE_LIB_LOCAL_H

#include "snapshot.h"
#include "libsieve.h"

/**
 * struct sieve_local - a filter in this process
 * @type: enum sieve_filter_type, of every layer.
 * @flags: the enum sieve_create_flags it was made with.
 * @seed: the hash seed of every layer.
 * @fpp_ppb: the target rate (0 for an explicit geometry).
 * @capacity: keys of the first layer (0 for an explicit geometry).
 * @growth: scalable: capacity factor between layers; else 0.
 * @max_layers: scalable: most layers; else 1.
 * @nlayers: layers in use, at least 1; the last is the newest.
 * @inserted: adds that stored a key.
 * @deleted: deletes that removed one.
 * @queries: queries, single and batched.
 * @hits: queries that answered "maybe present".
 * @layers: each layer's filter, capacity and stored keys (what the
 *	snapshot code writes and reads).
 *
 * No locking: one thread at a time (libsieve.h says so).
 */
struct sieve_local {
	u32 type;
	u32 flags;
	u32 seed;
	u32 fpp_ppb;
	u64 capacity;
	u32 growth;
	u32 max_layers;
	u32 nlayers;
	u64 inserted;
	u64 deleted;
	u64 queries;
	u64 hits;
	struct sieve_snapshot_layer_src layers[SIEVE_MAX_LAYERS];
};

#endif /* SIEVE_LIB_LOCAL_H */
