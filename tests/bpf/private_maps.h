/* SPDX-License-Identifier: GPL-2.0 */
/* The program as the BPF suite and the XDP benchmark load it: maps of its own. */
#ifndef SIEVE_TEST_PRIVATE_MAPS_H
#define SIEVE_TEST_PRIVATE_MAPS_H

#include <bpf/libbpf.h>

#include "xdp.h"
#include "sieve_xdp.skel.h"

/*
 * Loads the opened @skel with no map pinned, so that nothing is shared
 * with an instance running on this machine, and fills @h with its maps:
 * a handle the loader drives as it does an attached interface's.
 * 0, or libbpf's -errno.
 */
static inline int private_maps_load(struct sieve_xdp *skel, struct sxdp_handle *h)
{
	struct bpf_map *map;
	int ret;

	bpf_object__for_each_map(map, skel->obj)
		bpf_map__set_pin_path(map, NULL);
	ret = sieve_xdp__load(skel);
	if (ret)
		return ret;
	*h = (struct sxdp_handle){
		.active_fd = bpf_map__fd(skel->maps.sieve_active),
		.cfg_fd = bpf_map__fd(skel->maps.sieve_cfg),
		.bloom_fd = bpf_map__fd(skel->maps.sieve_bloom),
		.exact_fd = bpf_map__fd(skel->maps.sieve_exact),
		.stats_fd = bpf_map__fd(skel->maps.sieve_stats),
		.allow_fd = bpf_map__fd(skel->maps.sieve_allow),
		.allow_none_fd = bpf_map__fd(skel->maps.sieve_allow_none),
		.blocked_fd = bpf_map__fd(skel->maps.sieve_blocked),
		.removed_fd = bpf_map__fd(skel->maps.sieve_removed),
		.v4top_fd = bpf_map__fd(skel->maps.sieve_v4top),
		.v4chunk_fd = bpf_map__fd(skel->maps.sieve_v4chunk),
		.v4host_fd = bpf_map__fd(skel->maps.sieve_v4host),
		.origins_fd = bpf_map__fd(skel->maps.sieve_origins),
	};
	return 0;
}

#endif /* SIEVE_TEST_PRIVATE_MAPS_H */
