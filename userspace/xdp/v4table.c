// SPDX-License-Identifier: GPL-2.0
/*
 * The IPv4 prefix table (include/sieve_xdp_v4table.h) from the loader's
 * side: a build makes it equal to the list's IPv4 prefixes; a live block
 * sets the bits of the new prefixes; a live unblock recomputes the /24s
 * the gone prefixes spanned from the prefixes that remain. Backend-
 * independent: the same table serves bloom-map, blocked and filter:NAME.
 *
 * Publication order, so that a packet never sees a /24's state point at a
 * chunk that is not there, nor drop what the list no longer holds for
 * longer than the command: chunks are written first (under the key no
 * state points at), then the top words (one aligned 8-byte store each,
 * through the map's mmap), then, after a grace period, the chunks no
 * state points at any more are deleted. At rest a chunk key exists only
 * where its /24's state points at it; a covered /24 (state 1) has none
 * (its longer prefixes are in the store, and an unblock of the cover
 * recomputes them from it). Keys a killed command left behind are
 * unreferenced, so never read, and the next build deletes them.
 *
 * Locking: the caller holds the interface's lock (ops.c), as for every
 * change to its maps: one writer at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "xdp.h"
#include "sieve_xdp_v4table.h"

#define TOP_BYTES	((size_t)SIEVE_XDP_V4_WORDS * sizeof(__u64))

bool sxdp_v4table_on(const struct sxdp_handle *h)
{
	return h->v4top_fd >= 0 && h->v4chunk_fd >= 0;
}

bool sxdp_v4table_entry(const struct sieve_xdp_key *k)
{
	return k->kind == SIEVE_XDP_PREFIX && k->family == SIEVE_XDP_V4 && k->prefix_len < 32;
}

/* A prefix's first /24 and how many it spans (1 for one longer than /24). */
static void prefix_span(const struct sieve_xdp_key *k, uint32_t *first, uint32_t *n)
{
	*first = sieve_xdp_v4_slot(ntohl(k->saddr[0]));
	*n = k->prefix_len <= 24 ? 1U << (24 - k->prefix_len) : 1;
	*first &= ~(*n - 1);
}

/* The chunk bits of a prefix longer than /24. */
static void prefix_bits(const struct sieve_xdp_key *k, struct sieve_xdp_v4_chunk *c)
{
	uint32_t a = ntohl(k->saddr[0]) & 255, n = 1U << (32 - k->prefix_len), i;

	for (i = a; i < a + n; i++)
		c->w[i / 64] |= 1ULL << (i % 64);
}

static __u64 *top_map(struct sxdp_handle *h)
{
	void *p = mmap(NULL, TOP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, h->v4top_fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint32_t state_of(const __u64 *top, uint32_t slot)
{
	return sieve_xdp_v4_state(__atomic_load_n(&top[sieve_xdp_v4_word(slot)], __ATOMIC_RELAXED),
				  slot);
}

/* One slot's state: an aligned store of its word (one writer: the lock). */
static void set_state(__u64 *top, uint32_t slot, uint32_t state)
{
	__u64 *w = &top[sieve_xdp_v4_word(slot)], v = __atomic_load_n(w, __ATOMIC_RELAXED);
	unsigned int sh = sieve_xdp_v4_shift(slot);

	v = (v & ~(3ULL << sh)) | (__u64)state << sh;
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
}

/* Chunk keys to delete once no packet can still be reading them. */
struct stale_keys {
	__u32 *keys;
	size_t n, cap;
};

static int stale_add(struct stale_keys *s, __u32 key)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		__u32 *k = realloc(s->keys, cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		s->keys = k;
		s->cap = cap;
	}
	s->keys[s->n++] = key;
	return 0;
}

/* After the top words: a grace period, then the chunks nothing points at. */
static void stale_drop(struct sxdp_handle *h, struct stale_keys *s)
{
	size_t i;

	if (s->n)
		sxdp_wait_for_packets();
	for (i = 0; i < s->n; i++)
		bpf_map_delete_elem(h->v4chunk_fd, &s->keys[i]);
	free(s->keys);
}

/*
 * Gives @slot the chunk @c (all zero: none) under cover @covered: the
 * chunk goes under the key its state does not point at, the state flips,
 * the key it pointed at is stale. An equal chunk is left where it is.
 */
static int slot_put(struct sxdp_handle *h, __u64 *top, uint32_t slot, bool covered,
		    const struct sieve_xdp_v4_chunk *c, struct stale_keys *stale)
{
	static const struct sieve_xdp_v4_chunk zero;
	uint32_t cur = state_of(top, slot), next, key;
	struct sieve_xdp_v4_chunk old;
	bool has = memcmp(c, &zero, sizeof(*c)) != 0;
	int ret = 0;

	if (cur >= SIEVE_XDP_V4_CHUNK0 && !covered && has) {
		key = sieve_xdp_v4_chunk_key(slot, cur);
		if (!bpf_map_lookup_elem(h->v4chunk_fd, &key, &old) && !memcmp(&old, c, sizeof(old)))
			return 0;	/* unchanged */
	}
	next = covered ? SIEVE_XDP_V4_COVERED : SIEVE_XDP_V4_NONE;
	if (!covered && has) {
		next = cur == SIEVE_XDP_V4_CHUNK0 ? SIEVE_XDP_V4_CHUNK1 : SIEVE_XDP_V4_CHUNK0;
		key = sieve_xdp_v4_chunk_key(slot, next);
		if (bpf_map_update_elem(h->v4chunk_fd, &key, c, BPF_ANY))
			return errno == E2BIG ? -ENOSPC : -errno;
	}
	if (cur >= SIEVE_XDP_V4_CHUNK0)
		ret = stale_add(stale, sieve_xdp_v4_chunk_key(slot, cur));
	if (cur != next)
		set_state(top, slot, next);
	return ret;
}

/* A long prefix's chunk, to sort by /24. */
struct slot_bits {
	uint32_t slot;
	struct sieve_xdp_v4_chunk c;
};

static int by_slot(const void *a, const void *b)
{
	uint32_t x = ((const struct slot_bits *)a)->slot, y = ((const struct slot_bits *)b)->slot;

	return x < y ? -1 : x > y;
}

/*
 * The /24s [@first, @first + @n) made what the IPv4 prefixes among @l
 * say: covered by one of length <= 24, else the chunk of those longer, or
 * nothing. @l may hold anything; entries outside the span are skipped.
 */
static int recompute(struct sxdp_handle *h, __u64 *top, uint32_t first, uint32_t n,
		     const struct sxdp_list *l, struct stale_keys *stale)
{
	uint8_t *cov = calloc(n, 1);
	struct slot_bits *long_ = NULL;
	size_t i, nl = 0, cap = 0, j;
	uint32_t s, f, m;
	int ret = 0;

	if (!cov)
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		if (!sxdp_v4table_entry(&l->keys[i]))
			continue;
		prefix_span(&l->keys[i], &f, &m);
		if (f + m <= first || f >= first + n)
			continue;
		if (l->keys[i].prefix_len <= 24) {
			for (s = f < first ? first : f; s < f + m && s < first + n; s++)
				cov[s - first] = 1;
			continue;
		}
		if (nl == cap) {
			struct slot_bits *p;

			cap = cap ? 2 * cap : 64;
			p = realloc(long_, cap * sizeof(*p));
			if (!p) {
				ret = -ENOMEM;
				goto out;
			}
			long_ = p;
		}
		memset(&long_[nl], 0, sizeof(long_[nl]));
		long_[nl].slot = f;
		prefix_bits(&l->keys[i], &long_[nl++].c);
	}
	if (nl)
		qsort(long_, nl, sizeof(*long_), by_slot);
	/* Merged per /24: the chunks first (new keys, then the states flip). */
	for (i = 0, j = 0; !ret && i < nl; i = j) {
		struct sieve_xdp_v4_chunk c = { 0 };

		for (j = i; j < nl && long_[j].slot == long_[i].slot; j++) {
			int w;

			for (w = 0; w < 4; w++)
				c.w[w] |= long_[j].c.w[w];
		}
		ret = slot_put(h, top, long_[i].slot, cov[long_[i].slot - first], &c, stale);
		cov[long_[i].slot - first] |= 2;	/* done */
	}
	/* The rest: covered or nothing, any chunk they had now stale. */
	for (s = 0; !ret && s < n; s++) {
		static const struct sieve_xdp_v4_chunk none;

		if (cov[s] & 2)
			continue;
		if (state_of(top, first + s) != cov[s])
			ret = slot_put(h, top, first + s, cov[s], &none, stale);
	}
out:
	free(long_);
	free(cov);
	return ret;
}

/* Chunk keys no /24 points at: a killed command's, deleted by a build. */
static int unreferenced(struct sxdp_handle *h, const __u64 *top, struct stale_keys *stale)
{
	__u32 key, next, *prev = NULL;
	int ret = 0;

	while (!ret && !bpf_map_get_next_key(h->v4chunk_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (state_of(top, key >> 1) != (SIEVE_XDP_V4_CHUNK0 | (key & 1)))
			ret = stale_add(stale, key);
	}
	return ret;
}

int sxdp_v4table_sync(struct sxdp_handle *h, const struct sxdp_list *l)
{
	struct stale_keys stale = { 0 };
	__u64 *top = top_map(h);
	int ret;

	if (!top)
		return -errno;
	ret = recompute(h, top, 0, SIEVE_XDP_V4_SLOTS, l, &stale);
	if (!ret)
		ret = unreferenced(h, top, &stale);
	stale_drop(h, &stale);
	munmap(top, TOP_BYTES);
	return ret;
}

int sxdp_v4table_add(struct sxdp_handle *h, const struct sxdp_list *fresh)
{
	struct stale_keys stale = { 0 };
	__u64 *top = top_map(h);
	uint32_t f, n, s, key, st;
	size_t i;
	int ret = 0;

	if (!top)
		return -errno;
	for (i = 0; !ret && i < fresh->n; i++) {
		const struct sieve_xdp_key *k = &fresh->keys[i];
		struct sieve_xdp_v4_chunk c = { 0 };

		if (!sxdp_v4table_entry(k))
			continue;
		prefix_span(k, &f, &n);
		if (k->prefix_len <= 24) {
			/* Covered: the chunks inside go stale. */
			for (s = f; !ret && s < f + n; s++)
				if (state_of(top, s) != SIEVE_XDP_V4_COVERED)
					ret = slot_put(h, top, s, true, &c, &stale);
			continue;
		}
		st = state_of(top, f);
		if (st == SIEVE_XDP_V4_COVERED)
			continue;
		key = sieve_xdp_v4_chunk_key(f, st);
		if (st >= SIEVE_XDP_V4_CHUNK0 && bpf_map_lookup_elem(h->v4chunk_fd, &key, &c))
			ret = -errno;
		if (!ret) {
			prefix_bits(k, &c);
			ret = slot_put(h, top, f, false, &c, &stale);
		}
	}
	stale_drop(h, &stale);
	munmap(top, TOP_BYTES);
	return ret;
}

int sxdp_v4table_remove(struct sxdp_handle *h, const struct sxdp_list *gone,
			const struct sxdp_list *remaining)
{
	struct stale_keys stale = { 0 };
	__u64 *top = top_map(h);
	uint32_t f, n;
	size_t i;
	int ret = 0;

	if (!top)
		return -errno;
	for (i = 0; !ret && i < gone->n; i++) {
		if (!sxdp_v4table_entry(&gone->keys[i]))
			continue;
		prefix_span(&gone->keys[i], &f, &n);
		ret = recompute(h, top, f, n, remaining, &stale);
	}
	stale_drop(h, &stale);
	munmap(top, TOP_BYTES);
	return ret;
}

int sxdp_v4table_counts(struct sxdp_handle *h, uint64_t *covered, uint64_t *chunks)
{
	__u64 *top = top_map(h);
	uint32_t s;

	*covered = *chunks = 0;
	if (!top)
		return -errno;
	for (s = 0; s < SIEVE_XDP_V4_SLOTS; s++) {
		uint32_t st = state_of(top, s);

		*covered += st == SIEVE_XDP_V4_COVERED;
		*chunks += st >= SIEVE_XDP_V4_CHUNK0;
	}
	munmap(top, TOP_BYTES);
	return 0;
}
