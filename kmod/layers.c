// SPDX-License-Identifier: GPL-2.0
/*
 * The layers of a scalable filter (layers.h): compiled unchanged into
 * sieve.ko and into libsieve.
 */
#include "layers.h"

u32 sieve_layer_fpp(u32 fpp_ppb, u32 i)
{
	/* An imported filter may have 31 layers: no shift by 32 or more. */
	return i + 1 < 32 ? fpp_ppb >> (i + 1) : 0;
}

int sieve_layer_size(u32 type, u32 fpp_ppb, u32 i, u64 capacity, struct sieve_geometry *geo)
{
	return sieve_size(type, capacity, sieve_layer_fpp(fpp_ppb, i), geo);
}

int sieve_first_layer_size(u32 type, u32 create_flags, u32 fpp_ppb, u64 capacity,
			   struct sieve_geometry *geo)
{
	if (create_flags & SIEVE_CREATE_SCALABLE)
		return sieve_layer_size(type, fpp_ppb, 0, capacity, geo);
	return sieve_size(type, capacity, fpp_ppb, geo);
}

int sieve_layer_next(u32 type, u32 fpp_ppb, u32 growth, u32 n, u64 top_capacity,
		     u64 *capacity, struct sieve_geometry *geo)
{
	if (check_mul_overflow(top_capacity, (u64)growth, capacity))
		return -E2BIG;
	return sieve_layer_size(type, fpp_ppb, n, *capacity, geo);
}

bool sieve_layers_may_grow(u32 create_flags, u32 n, u32 max_layers)
{
	return (create_flags & SIEVE_CREATE_SCALABLE) && n < max_layers;
}

bool sieve_layer_full(u64 items, u64 capacity)
{
	return items >= capacity;
}

bool sieve_layer_refused_full(const struct sieve_filter *top, u64 hash)
{
	return top->ops->count(top, hash) < SIEVE_CUCKOO_SLOTS;
}
