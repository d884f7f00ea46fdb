// SPDX-License-Identifier: GPL-2.0
/*
 * Sizing the blocked backend, and what the CLI says about either backend.
 * The blocked backend's rule (include/sieve_xdp_blocked.h) draws the same
 * distribution as the module's blocked Bloom core, k distinct bits of one
 * 64-byte block, uniform (the core draws them by multiply-shift, the BPF
 * side by Floyd's sampling), so it is sized by the module's own sizing
 * (kmod/sizing.c, compiled into libsieve): the fewest bits per key for
 * which some k keeps the Poisson bound under the target, in whole 64-byte
 * blocks, any number of them.
 */
#include <errno.h>
#include <string.h>

#include "filter.h"
#include "xdp.h"
#include "backend.h"

/* kmod/filter.h's limits are the rule's: one header must not drift from the other. */
static_assert(SIEVE_XDP_BLOCK_BITS == SIEVE_BLOCK_BITS, "a block is one cache line");
static_assert(SIEVE_XDP_BLOCKED_MAX_HASHES == SIEVE_MAX_HASHES, "the sizing's range of k");

static void blocked_geometry(uint32_t nblocks, uint32_t k, struct sieve_geometry *geo)
{
	memset(geo, 0, sizeof(*geo));
	geo->type = SIEVE_BLOCKED_BLOOM;
	geo->nbits = (u64)nblocks * SIEVE_XDP_BLOCK_BITS;
	geo->nhashes = k;
}

double sxdp_blocked_fpr(uint32_t nblocks, uint32_t k, uint64_t n)
{
	struct sieve_geometry geo;

	blocked_geometry(nblocks, k, &geo);
	return sieve_expected_fpr_ppb(&geo, n) / 1e9;
}

int sxdp_plan_blocked(uint64_t capacity, uint32_t fpp_ppb, struct sxdp_plan *plan)
{
	struct sieve_geometry geo;
	int err;

	if (!capacity || !fpp_ppb || fpp_ppb >= SIEVE_PPB)
		return -EINVAL;
	/* -EINVAL: no k reaches the rate; -E2BIG: more than a GiB of blocks. */
	err = sieve_size(SIEVE_BLOCKED_BLOOM, capacity, fpp_ppb, &geo);
	if (err)
		return -E2BIG;
	memset(plan, 0, sizeof(*plan));
	plan->blocked = true;
	plan->capacity = capacity;
	plan->fpp_ppb = fpp_ppb;
	plan->nr_hashes = geo.nhashes;
	plan->max_entries = geo.nbits / SIEVE_XDP_BLOCK_BITS;	/* at most 2^24 */
	plan->nbits = geo.nbits;
	plan->bytes = geo.nbits / 8;
	plan->fpr = sieve_expected_fpr_ppb(&geo, capacity) / 1e9;
	return 0;
}

/* The flag-driven helpers of before the backends' table, through it (backend.h). */
int sxdp_plan_for(uint32_t cfg_flags, uint64_t capacity, uint32_t fpp_ppb, struct sxdp_plan *plan)
{
	return sxdp_backend_of(cfg_flags)->plan(capacity, fpp_ppb, plan);
}

double sxdp_config_fpr(const struct sieve_xdp_config *cfg, uint64_t keys, uint64_t *nbits)
{
	return sxdp_backend_of(cfg->flags)->fpr(cfg, keys, nbits);
}

const char *sxdp_backend_name(uint32_t cfg_flags)
{
	return sxdp_backend_of(cfg_flags)->name;
}

/* --backend NAME: the filter backend is named with its filter, filter:NAME (devfilter.c). */
int sxdp_backend_parse(const char *name, uint32_t *cfg_flag)
{
	const struct sxdp_backend_ops *ops = sxdp_backend_by_name(name);

	if (!ops || ops == &sxdp_filter_ops)
		return -EINVAL;
	*cfg_flag = ops->cfg_flag;
	return 0;
}
