// SPDX-License-Identifier: GPL-2.0
/*
 * The bloom-map backend (the default): a generation's filter is one of the
 * kernel's BPF_MAP_TYPE_BLOOM_FILTER maps, in the outer map sieve_bloom,
 * holding digests. The kernel sizes its bitmap from max_entries and k
 * (plan.c); a fill pushes a batch of digests per run (bloom_fill.c).
 * Removals cannot clear bits another key may share: they rebuild.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <bpf/bpf.h>

#include "backend.h"

static int bloom_create(const struct sxdp_plan *plan)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_extra = plan->nr_hashes);
	int fd;

	if (plan->blocked || !plan->max_entries || !plan->nr_hashes)
		return -EINVAL;
	fd = bpf_map_create(BPF_MAP_TYPE_BLOOM_FILTER, "sieve_bloom_g", 0, sizeof(uint64_t),
			    plan->max_entries, &opts);
	return fd < 0 ? -errno : fd;
}

/* A push sets bits atomically: live or not, the same fill. */
static int bloom_fill(const struct sieve_xdp_config *cfg, int fd,
		      const struct sieve_xdp_key *keys, size_t n, bool live)
{
	return sxdp_bloom_fill(fd, cfg->digest_key, keys, n, NULL);
}

static void bloom_config(struct sieve_xdp_config *cfg, const struct sxdp_plan *plan)
{
	cfg->bloom.max_entries = plan->max_entries;
	cfg->bloom.nr_hashes = plan->nr_hashes;
}

static double bloom_fpr(const struct sieve_xdp_config *cfg, uint64_t keys, uint64_t *nbits)
{
	*nbits = sxdp_kernel_bloom_bits(cfg->bloom.max_entries, cfg->bloom.nr_hashes);
	return sxdp_bloom_fpr(*nbits, cfg->bloom.nr_hashes, keys);
}

static uint64_t bloom_memory(const struct sieve_xdp_config *cfg)
{
	return sxdp_kernel_bloom_bits(cfg->bloom.max_entries, cfg->bloom.nr_hashes) / 8;
}

static int bloom_describe(const struct sieve_xdp_config *cfg, uint64_t kernel_bytes,
			  const char *filter, char *buf, size_t len)
{
	uint64_t nbits = sxdp_kernel_bloom_bits(cfg->bloom.max_entries, cfg->bloom.nr_hashes);

	return snprintf(buf, len, "bloom: 2^%d bits, %u hashes (max_entries %u), %.3f MiB in the kernel",
			(int)log2((double)nbits), cfg->bloom.nr_hashes, cfg->bloom.max_entries,
			kernel_bytes / 1048576.0);
}

static int bloom_outer_fd(const struct sxdp_handle *h)
{
	return h->bloom_fd;
}

const struct sxdp_backend_ops sxdp_bloom_ops = {
	.name = "bloom-map",
	.cfg_flag = 0,
	.limit = "2^32 bits",
	.plan = sxdp_plan,
	.create = bloom_create,
	.config = bloom_config,
	.fill = bloom_fill,
	.build = sxdp_gen_build,
	.add_live = sxdp_gen_add_live,
	.remove_live = NULL,
	.fpr = bloom_fpr,
	.memory = bloom_memory,
	.describe = bloom_describe,
	.outer_fd = bloom_outer_fd,
};
