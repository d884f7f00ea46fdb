// SPDX-License-Identifier: GPL-2.0
/*
 * Filling a bloom-map generation. The kernel's bloom-filter map takes no
 * batch update, so from userspace each digest is one bpf() call (17.6 s at
 * 10^7 keys, nearly all of it syscall entry and exit). The fast fill runs
 * bpf/bloom_fill.bpf.c instead: the digests of a batch are written into the
 * program's .bss through its mmap, then one BPF_PROG_TEST_RUN pushes them
 * all into the map with bpf_map_push_elem(), the insert the syscall makes.
 * The map's bits are the same either way (the kernel's hash of the same
 * value under the map's own seed), so a fill may use both.
 *
 * Where the program cannot load (a kernel before syscall programs and
 * bpf_loop, 5.17, or one that refuses it), or SIEVE_XDP_FILL=slow asks,
 * the fill falls back to one update per key, and says so once. A run that
 * fails after the program loaded (a kernel that refuses a test run of it,
 * memory short) falls back for the keys from its batch on: a digest
 * pushed twice sets the same bits, so a batch cut short is simply pushed
 * again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"
#include "bloom_fill.skel.h"

/* Must match bpf/bloom_fill.bpf.c. */
#define FILL_BATCH	65536
/* Below this, loading the program costs more than the calls it saves. */
#define FAST_MIN_KEYS	1024

enum sxdp_fill_mode sxdp_fill_mode = SXDP_FILL_AUTO;
size_t sxdp_fill_fail_at;

static bool said_slow;

static enum sxdp_fill_mode fill_mode(void)
{
	const char *env = getenv("SIEVE_XDP_FILL");

	if (sxdp_fill_mode != SXDP_FILL_AUTO)
		return sxdp_fill_mode;
	if (env && !strcmp(env, "slow"))
		return SXDP_FILL_SLOW;
	if (env && !strcmp(env, "fast"))
		return SXDP_FILL_FAST;
	return SXDP_FILL_AUTO;
}

static int fill_slow(int bloom_fd, const __u64 secret[2], const struct sieve_xdp_key *keys,
		     size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t digest = sieve_xdp_digest(&keys[i], secret);

		if (bpf_map_update_elem(bloom_fd, NULL, &digest, BPF_ANY))
			return -errno;
	}
	return 0;
}

/*
 * One run per batch; -errno of a run, or the push's error. *@done: the
 * keys of the batches pushed whole.
 */
static int fill_fast(struct bloom_fill *skel, const __u64 secret[2],
		     const struct sieve_xdp_key *keys, size_t n, size_t *done)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	int prog_fd = bpf_program__fd(skel->progs.sieve_bloom_fill);
	size_t i, j, m;

	for (i = 0; i < n; i += m) {
		*done = i;
		m = n - i < FILL_BATCH ? n - i : FILL_BATCH;
		for (j = 0; j < m; j++)
			skel->bss->digests[j] = sieve_xdp_digest(&keys[i + j], secret);
		skel->bss->count = m;
		if (sxdp_fill_fail_at && i + m > sxdp_fill_fail_at)
			return -EIO;
		if (bpf_prog_test_run_opts(prog_fd, &run))
			return -errno;
		if (skel->bss->fill_err)
			return skel->bss->fill_err;
		if (skel->bss->pushed != m)
			return -EIO;
	}
	*done = n;
	return 0;
}

static void say_slow(const char *why, int err)
{
	if (!said_slow)
		fprintf(stderr, "sieve: the bloom map's fast fill %s (%s): one update per key\n",
			why, strerror(-err));
	said_slow = true;
}

/*
 * The program, loaded, with @bloom_fd in its target slot; NULL and *err if
 * not. The kernel compares an inner map's flags with the template's, so
 * the template takes the target's (BPF_F_ZERO_SEED, say).
 */
static struct bloom_fill *fill_open(int bloom_fd, int *err)
{
	struct bpf_map_info info = { 0 };
	__u32 info_len = sizeof(info);
	struct bloom_fill *skel;
	uint32_t zero = 0;

	if (bpf_obj_get_info_by_fd(bloom_fd, &info, &info_len)) {
		*err = -errno;
		return NULL;
	}
	if (info.type != BPF_MAP_TYPE_BLOOM_FILTER || info.value_size != sizeof(__u64)) {
		*err = -EINVAL;
		return NULL;
	}
	skel = bloom_fill__open();
	if (!skel) {
		*err = -errno;
		return NULL;
	}
	*err = bpf_map__set_map_flags(bpf_map__inner_map(skel->maps.fill_target), info.map_flags);
	if (!*err)
		*err = bloom_fill__load(skel);
	if (!*err && bpf_map_update_elem(bpf_map__fd(skel->maps.fill_target), &zero, &bloom_fd,
					 BPF_ANY))
		*err = -errno;
	if (*err) {
		bloom_fill__destroy(skel);
		return NULL;
	}
	return skel;
}

int sxdp_bloom_fill(int bloom_fd, const __u64 secret[2], const struct sieve_xdp_key *keys,
		    size_t n, enum sxdp_fill_mode *used)
{
	enum sxdp_fill_mode mode = fill_mode();
	struct bloom_fill *skel;
	size_t done = 0;
	int err = 0;

	if (used)
		*used = SXDP_FILL_SLOW;
	if (mode == SXDP_FILL_SLOW || (mode == SXDP_FILL_AUTO && n < FAST_MIN_KEYS))
		return fill_slow(bloom_fd, secret, keys, n);
	skel = fill_open(bloom_fd, &err);
	if (!skel) {
		if (mode == SXDP_FILL_FAST)
			return err;
		say_slow("does not load here", err);
		return fill_slow(bloom_fd, secret, keys, n);
	}
	err = fill_fast(skel, secret, keys, n, &done);
	bloom_fill__destroy(skel);
	if (!err && used)
		*used = SXDP_FILL_FAST;
	if (!err || mode == SXDP_FILL_FAST)
		return err;
	say_slow("failed part-way", err);
	return fill_slow(bloom_fd, secret, keys + done, n - done);
}
