// SPDX-License-Identifier: GPL-2.0
/*
 * What an interface's program is told to do with its verdicts, and what
 * it counts of them beyond the kinds: the dry run (monitor mode,
 * SIEVE_XDP_F_DRY_RUN) and the drops per origin (sieve_origins). Both
 * came with one build of the program: an instance without sieve_origins
 * runs an older program, which would ignore the flag.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"

/*
 * The switch rewrites the live slot's config in place, under the lock
 * every change of the interface takes: the kernel copies the value over
 * itself, and every byte but the one holding this bit keeps its value, so
 * a packet reads the flags of one mode or the other. The program reads
 * the bit once a packet (its drop()), so no packet is judged by neither.
 * The idle slot needs nothing: the next build copies the live flags.
 */
int sxdp_set_dry_run(struct sxdp_handle *h, bool on)
{
	struct sieve_xdp_config cfg;
	uint32_t live;
	int ret;

	if (h->origins_fd < 0 || h->stale)
		return -EOPNOTSUPP;
	ret = sxdp_read_config(h, &cfg, &live);
	if (ret)
		return ret;
	if (!!(cfg.flags & SIEVE_XDP_F_DRY_RUN) == on)
		return 0;
	cfg.flags ^= SIEVE_XDP_F_DRY_RUN;
	return bpf_map_update_elem(h->cfg_fd, &live, &cfg, BPF_EXIST) ? -errno : 0;
}

int sxdp_read_origin_drops(struct sxdp_handle *h, struct sieve_xdp_count *out)
{
	int ncpus = libbpf_num_possible_cpus(), cpu, ret = 0;
	struct sieve_xdp_count *per;
	uint32_t slot;

	memset(out, 0, SIEVE_XDP_ORIGIN_SLOTS * sizeof(*out));
	if (h->origins_fd < 0)
		return -ENOENT;
	if (ncpus < 0)
		return ncpus;
	per = calloc(ncpus, sizeof(*per));
	if (!per)
		return -ENOMEM;
	for (slot = 0; !ret && slot < SIEVE_XDP_ORIGIN_SLOTS; slot++) {
		if (bpf_map_lookup_elem(h->origins_fd, &slot, per)) {
			ret = -errno;
			break;
		}
		for (cpu = 0; cpu < ncpus; cpu++) {
			out[slot].packets += per[cpu].packets;
			out[slot].bytes += per[cpu].bytes;
		}
	}
	free(per);
	return ret;
}

int sxdp_carry_origin_drops(int old_fd, int new_fd)
{
	int ncpus = libbpf_num_possible_cpus(), ret = 0;
	struct sieve_xdp_count *per;
	uint32_t slot;

	if (ncpus < 0)
		return ncpus;
	per = calloc(ncpus, sizeof(*per));
	if (!per)
		return -ENOMEM;
	for (slot = 0; !ret && slot < SIEVE_XDP_ORIGIN_SLOTS; slot++)
		if (bpf_map_lookup_elem(old_fd, &slot, per) ||
		    bpf_map_update_elem(new_fd, &slot, per, BPF_ANY))
			ret = -errno;
	free(per);
	return ret;
}
