// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-fill: filling a bloom-map generation, one bpf() update per key
 * (the fallback) against the fast fill (bpf/bloom_fill.bpf.c, a batch of
 * digests per BPF_PROG_TEST_RUN), on maps planned as the loader plans them
 * (1%, capacity with headroom). Root.
 *
 * Usage: sieve-fill-bench N...   (default: 1000000 10000000)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "xdp.h"

static const __u64 secret[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds to fill a fresh map of @plan with @n keys in @mode; < 0 on error. */
static double timed_fill(const struct sxdp_plan *plan, const struct sieve_xdp_key *keys, size_t n,
			 enum sxdp_fill_mode mode)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_extra = plan->nr_hashes);
	enum sxdp_fill_mode used;
	double t;
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_BLOOM_FILTER, "fill_bench", 0, sizeof(__u64),
			    plan->max_entries, &o);
	if (fd < 0) {
		fprintf(stderr, "a bloom map: %s\n", strerror(errno));
		return -1;
	}
	sxdp_fill_mode = mode;
	t = now();
	err = sxdp_bloom_fill(fd, secret, keys, n, &used);
	t = now() - t;
	close(fd);
	if (err || used != mode) {
		fprintf(stderr, "fill: %s (mode %d, used %d)\n", strerror(-err), mode, used);
		return -1;
	}
	return t;
}

int main(int argc, char **argv)
{
	static const char *const dflt[] = { "1000000", "10000000" };
	const char *const *ns = argc > 1 ? (const char *const *)argv + 1 : dflt;
	int i, nr = argc > 1 ? argc - 1 : 2;

	printf("%-10s %-9s %-6s %12s %12s %8s\n", "keys", "bits", "k", "per-key s", "fast s",
	       "ratio");
	for (i = 0; i < nr; i++) {
		size_t n = strtoull(ns[i], NULL, 10), j;
		struct sieve_xdp_key *keys = calloc(n ? n : 1, sizeof(*keys));
		struct sxdp_plan plan;
		double slow, fast;

		if (!keys || !n || sxdp_plan(sxdp_capacity_for(n), 10000000, &plan)) {
			fprintf(stderr, "bad size %s\n", ns[i]);
			return 1;
		}
		for (j = 0; j < n; j++) {
			keys[j].kind = SIEVE_XDP_SRC;
			keys[j].family = SIEVE_XDP_V6;
			keys[j].prefix_len = 128;
			keys[j].saddr[0] = 0x20010db8;
			keys[j].saddr[2] = j >> 32;
			keys[j].saddr[3] = (__u32)j;
		}
		slow = timed_fill(&plan, keys, n, SXDP_FILL_SLOW);
		fast = timed_fill(&plan, keys, n, SXDP_FILL_FAST);
		free(keys);
		if (slow < 0 || fast < 0)
			return 1;
		printf("%-10zu 2^%-7.1f %-6u %12.2f %12.2f %7.1fx\n", n,
		       __builtin_log2((double)plan.nbits), plan.nr_hashes, slow, fast, slow / fast);
	}
	return 0;
}
