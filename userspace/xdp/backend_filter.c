// SPDX-License-Identifier: GPL-2.0
/*
 * The filter backend (--backend filter:NAME): the filter is a /dev/sieve
 * filter that sieve.ko's kfuncs answer for, named by id in the config
 * (devfilter.c). It is no map of the program's: the module sizes it when
 * it is made, and a build fills it whole (sxdp_filter_build), so plan,
 * create and fill are not its operations. A cuckoo filter deletes live.
 */
#include <errno.h>
#include <stdio.h>

#include "backend.h"

static int filter_plan(uint64_t capacity, uint32_t fpp_ppb, struct sxdp_plan *plan)
{
	return -EOPNOTSUPP;
}

static int filter_create(const struct sxdp_plan *plan)
{
	return -EOPNOTSUPP;
}

/* The module sizes the filter: only its id goes in the config, when it is made. */
static void filter_config(struct sieve_xdp_config *cfg, const struct sxdp_plan *plan)
{
}

static int filter_fill(const struct sieve_xdp_config *cfg, int fd,
		       const struct sieve_xdp_key *keys, size_t n, bool live)
{
	return -EOPNOTSUPP;
}

static double filter_fpr(const struct sieve_xdp_config *cfg, uint64_t keys, uint64_t *nbits)
{
	return sxdp_filter_fpr(cfg->filter.id, nbits);
}

/* In the module, not charged to the program's maps. */
static uint64_t filter_memory(const struct sieve_xdp_config *cfg)
{
	return 0;
}

static int filter_describe(const struct sieve_xdp_config *cfg, uint64_t kernel_bytes,
			   const char *filter, char *buf, size_t len)
{
	return snprintf(buf, len, "filter: /dev/sieve filter %s (id %u)", filter, cfg->filter.id);
}

static int filter_outer_fd(const struct sxdp_handle *h)
{
	return -1;
}

const struct sxdp_backend_ops sxdp_filter_ops = {
	.name = "filter",
	.cfg_flag = SIEVE_XDP_F_FILTER,
	.kfunc_prog = true,
	.named = true,
	.limit = "its type's limits",
	.plan = filter_plan,
	.create = filter_create,
	.config = filter_config,
	.fill = filter_fill,
	.build = sxdp_filter_build,
	.add_live = sxdp_filter_add_live,
	.remove_live = sxdp_filter_remove_live,
	.fpr = filter_fpr,
	.memory = filter_memory,
	.describe = filter_describe,
	.outer_fd = filter_outer_fd,
};
