// SPDX-License-Identifier: GPL-2.0
/*
 * The blocked backend (--backend blocked): a generation's filter is a
 * blocked Bloom filter, an mmapable array of 64-byte blocks in the outer
 * map sieve_blocked (include/sieve_xdp_blocked.h has the rule, blocked.c
 * the maps, blocked_plan.c the sizing). Removals rebuild, as for the
 * bloom map: a bit may be another key's too.
 */
#include <errno.h>
#include <stdio.h>

#include "backend.h"

static int blocked_fill(const struct sieve_xdp_config *cfg, int fd,
			const struct sieve_xdp_key *keys, size_t n, bool live)
{
	return sxdp_blocked_insert(fd, cfg, keys, n, live);
}

static void blocked_config(struct sieve_xdp_config *cfg, const struct sxdp_plan *plan)
{
	cfg->blocked.nblocks = plan->max_entries;
	cfg->blocked.k = plan->nr_hashes;
}

static double blocked_fpr(const struct sieve_xdp_config *cfg, uint64_t keys, uint64_t *nbits)
{
	*nbits = (uint64_t)cfg->blocked.nblocks * SIEVE_XDP_BLOCK_BITS;
	return sxdp_blocked_fpr(cfg->blocked.nblocks, cfg->blocked.k, keys);
}

static uint64_t blocked_memory(const struct sieve_xdp_config *cfg)
{
	return (uint64_t)cfg->blocked.nblocks * SIEVE_XDP_BLOCK_BYTES;
}

static int blocked_describe(const struct sieve_xdp_config *cfg, uint64_t kernel_bytes,
			    const char *filter, char *buf, size_t len)
{
	return snprintf(buf, len, "blocked: %u blocks of 64 bytes, %u bits a key, %.3f MiB in the kernel",
			cfg->blocked.nblocks, cfg->blocked.k, kernel_bytes / 1048576.0);
}

/* -1 in pins of a sieve before the backend (see sxdp_open): a swap refuses it. */
static int blocked_outer_fd(const struct sxdp_handle *h)
{
	return h->blocked_fd;
}

const struct sxdp_backend_ops sxdp_blocked_ops = {
	.name = "blocked",
	.cfg_flag = SIEVE_XDP_F_BLOCKED,
	.limit = "1 GiB",
	.plan = sxdp_plan_blocked,
	.create = sxdp_blocked_create,
	.config = blocked_config,
	.fill = blocked_fill,
	.build = sxdp_gen_build,
	.add_live = sxdp_gen_add_live,
	.remove_live = NULL,
	.fpr = blocked_fpr,
	.memory = blocked_memory,
	.describe = blocked_describe,
	.outer_fd = blocked_outer_fd,
};
