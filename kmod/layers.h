/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The layers of a scalable filter: the one copy of the rules for the
 * module's registry (keys.c) and libsieve's local filters (local.c), so a
 * kernel filter and a local one fed the same keys grow the same layers at
 * the same keys and refuse at the same one.
 *
 * Layer i takes growth times the keys of layer i - 1 at a rate of
 * fpp / 2^(i + 1): the rates of all layers sum to less than fpp. A
 * scalable filter grows when its newest layer holds its capacity, or when
 * a full cuckoo table refuses a key; it stops at max_layers or, for good,
 * at the first layer sizing refuses. These functions take no locks and
 * allocate nothing: the caller holds what keeps its layers still.
 */
#ifndef SIEVE_LAYERS_H
#define SIEVE_LAYERS_H

#include "filter.h"

/* The rate of layer @i in ppb: 0, which sizing refuses, from i = 31 on. */
u32 sieve_layer_fpp(u32 fpp_ppb, u32 i);

/*
 * The geometry of layer @i of a scalable filter holding @capacity keys
 * (seed left 0): sieve_size()'s answer at the layer's rate.
 */
int sieve_layer_size(u32 type, u32 fpp_ppb, u32 i, u64 capacity, struct sieve_geometry *geo);

/*
 * The first layer of a filter made with @create_flags: sized for the whole
 * rate, or for layer 0's share of it when the filter is scalable.
 */
int sieve_first_layer_size(u32 type, u32 create_flags, u32 fpp_ppb, u64 capacity,
			   struct sieve_geometry *geo);

/*
 * The layer to stack on @n layers whose newest takes @top_capacity keys:
 * its capacity and geometry (seed left 0). -E2BIG or -EINVAL when the
 * capacity or sizing is out of range: then no layer ever follows.
 */
int sieve_layer_next(u32 type, u32 fpp_ppb, u32 growth, u32 n, u64 top_capacity,
		     u64 *capacity, struct sieve_geometry *geo);

/* May a filter of @create_flags with @n of @max_layers layers stack another? */
bool sieve_layers_may_grow(u32 create_flags, u32 n, u32 max_layers);

/* Before an add: the newest layer holds @items of its @capacity: grow first. */
bool sieve_layer_full(u64 items, u64 capacity);

/*
 * After the newest layer @top refused @hash with -ENOSPC: is that a full
 * table, worth a new layer? Not when the key's own two buckets already
 * hold a bucket's worth of copies of it (a cuckoo multiset keeps up to
 * twice that): a new layer is for a full table, not for more copies, else
 * repeating one key would stack layer on layer.
 */
bool sieve_layer_refused_full(const struct sieve_filter *top, u64 hash);

#endif /* SIEVE_LAYERS_H */
