// SPDX-License-Identifier: GPL-2.0
/*
 * The blocked backend's maps: an array of 64-byte blocks, created
 * mmapable, written through a mapping of it in this process: building a
 * generation of n keys costs n cache-line writes and no syscall per key,
 * where the bloom-filter map needs one bpf() call per key. The bits each
 * key sets are the rule of include/sieve_xdp_blocked.h, the program's.
 *
 * A live add ORs into the live array: the bits of keys already on the list
 * are never cleared, so a packet reading a block meanwhile sees each word
 * before or after an OR, never a key of the list missing. Removals cannot
 * clear bits (another key may share them): they build a new generation.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "xdp.h"

/* Keys whose block is prefetched before it is written: misses overlap. */
#define PREFETCH_AHEAD	8

struct blocked_map {
	__u64 *blocks;
	uint32_t nblocks;
	size_t len;
};

int sxdp_blocked_create(const struct sxdp_plan *plan)
{
	/* The flags of the program's inner-map template, which the kernel compares. */
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	int fd;

	if (!plan->blocked || !plan->max_entries || !plan->nr_hashes ||
	    plan->nr_hashes > SIEVE_XDP_BLOCKED_MAX_HASHES)
		return -EINVAL;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sieve_blocked_g", sizeof(__u32),
			    SIEVE_XDP_BLOCK_BYTES, plan->max_entries, &opts);
	return fd < 0 ? -errno : fd;
}

/* The size of a blocked array of ours; -EINVAL for any other map. */
static int blocked_info(int fd, struct blocked_map *m)
{
	struct bpf_map_info info = { 0 };
	__u32 info_len = sizeof(info);
	size_t page = sysconf(_SC_PAGESIZE);

	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_ARRAY || info.value_size != SIEVE_XDP_BLOCK_BYTES ||
	    !(info.map_flags & BPF_F_MMAPABLE) || !info.max_entries)
		return -EINVAL;
	m->nblocks = info.max_entries;
	m->len = ((size_t)m->nblocks * SIEVE_XDP_BLOCK_BYTES + page - 1) & ~(page - 1);
	return 0;
}

/* Maps a blocked array of ours whole. */
static int blocked_mmap(int fd, struct blocked_map *m)
{
	void *p;
	int err = blocked_info(fd, m);

	if (err)
		return err;
	p = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	m->blocks = p;
	return 0;
}

static __u64 *key_block(const struct blocked_map *m, __u64 h)
{
	return m->blocks + (size_t)sieve_xdp_blocked_index(h, m->nblocks) * SIEVE_XDP_BLOCK_WORDS;
}

/* The generation's hash of @key: its keyed digest, mixed with the generation's seed. */
static __u64 key_hash(const struct sieve_xdp_config *cfg, const struct sieve_xdp_key *key)
{
	return sieve_xdp_blocked_hash(sieve_xdp_digest(key, cfg->digest_key), cfg->blocked_seed);
}

/* Only words that miss a bit are written: keys already in cost no store. */
static void set_pattern(__u64 *block, __u64 h, uint32_t k, bool live)
{
	__u64 pattern[SIEVE_XDP_BLOCK_WORDS];
	int w;

	sieve_xdp_blocked_pattern(h, k, pattern);
	for (w = 0; w < SIEVE_XDP_BLOCK_WORDS; w++) {
		if (!(pattern[w] & ~__atomic_load_n(&block[w], __ATOMIC_RELAXED)))
			continue;
		if (live)
			__atomic_fetch_or(&block[w], pattern[w], __ATOMIC_RELAXED);
		else
			block[w] |= pattern[w];
	}
}

/*
 * A few live adds map only the page of each key's block: the kernel maps
 * an array's every page up front (remap_vmalloc_range), which for a
 * 10^7-entry array is most of what a `block` would cost. A block never
 * straddles a page (64 divides the page size).
 */
#define FEW_KEYS	64

static int insert_few(int fd, const struct blocked_map *whole, const struct sieve_xdp_config *cfg,
		      const struct sieve_xdp_key *keys, size_t n)
{
	size_t page = sysconf(_SC_PAGESIZE), i, off;
	__u64 h, *p;

	for (i = 0; i < n; i++) {
		h = key_hash(cfg, &keys[i]);
		off = (size_t)sieve_xdp_blocked_index(h, whole->nblocks) * SIEVE_XDP_BLOCK_BYTES;
		p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off & ~(page - 1));
		if (p == MAP_FAILED)
			return -errno;
		set_pattern(p + (off & (page - 1)) / sizeof(*p), h, cfg->blocked.k, true);
		munmap(p, page);
	}
	return 0;
}

int sxdp_blocked_insert(int fd, const struct sieve_xdp_config *cfg,
			const struct sieve_xdp_key *keys, size_t n, bool live)
{
	uint32_t nr_hashes = cfg->blocked.k;
	struct blocked_map m = { 0 };
	size_t i;
	int err;

	if (!nr_hashes || nr_hashes > SIEVE_XDP_BLOCKED_MAX_HASHES)
		return -EINVAL;
	if (!n)
		return 0;
	if (live && n <= FEW_KEYS) {
		err = blocked_info(fd, &m);
		return err ? err : insert_few(fd, &m, cfg, keys, n);
	}
	err = blocked_mmap(fd, &m);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		__u64 h = key_hash(cfg, &keys[i]);

		/* Hashing again later costs less than the miss it hides. */
		if (i + PREFETCH_AHEAD < n)
			__builtin_prefetch(key_block(&m, key_hash(cfg, &keys[i + PREFETCH_AHEAD])), 1);
		set_pattern(key_block(&m, h), h, nr_hashes, live);
	}
	munmap(m.blocks, m.len);
	return 0;
}
