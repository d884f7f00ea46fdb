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
 * The host bitmap beside it: the bits of a list's IPv4 sources are set
 * with its prefixes (before the filter holds them) and cleared with a
 * build's sync, or by a live unblock once the /24 holds no host.
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

/* A prefix's first /24 and how many it spans (1 for one longer than /24). */
static void prefix_span(const struct sieve_xdp_key *k, uint32_t *first, uint32_t *n)
{
	*first = sieve_xdp_v4_slot(ntohl(k->saddr[0]));
	*n = k->prefix_len <= 24 ? 1U << (24 - k->prefix_len) : 1;
	*first &= ~(*n - 1);
}

/*
 * The chunk bits of a prefix longer than /24. The address is masked here
 * too: a key with host bits set (the parser refuses them, other callers
 * may not) must not reach past the chunk.
 */
static void prefix_bits(const struct sieve_xdp_key *k, struct sieve_xdp_v4_chunk *c)
{
	uint32_t n, a, i;

	if (k->prefix_len <= 24 || k->prefix_len > 32)
		return;
	n = 1U << (32 - k->prefix_len);
	a = ntohl(k->saddr[0]) & 255 & ~(n - 1);
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

#define ALL_COVERED	0x5555555555555555ULL	/* 32 slots of state 1 */

/*
 * A whole word of 32 /24s made covered at once (a short prefix spans
 * 2^16 of them for a /8): the chunks it had go stale.
 */
static int cover_word(__u64 *top, uint32_t word, struct stale_keys *stale)
{
	__u64 w = __atomic_load_n(&top[word], __ATOMIC_RELAXED);
	uint32_t i, st;
	int ret = 0;

	if (w == ALL_COVERED)
		return 0;
	for (i = 0; !ret && i < SIEVE_XDP_V4_SLOTS_PER_WORD; i++) {
		st = (w >> (2 * i)) & 3;
		if (st >= SIEVE_XDP_V4_CHUNK0)
			ret = stale_add(stale, sieve_xdp_v4_chunk_key(word * 32 + i, st));
	}
	__atomic_store_n(&top[word], ALL_COVERED, __ATOMIC_RELEASE);
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
 * The chunks the prefixes of @l longer than /24 inside the /24s [@first,
 * @first + @n) make, one per /24, sorted by /24: *@out (free() it), *@nr.
 */
static int collect_chunks(const struct sxdp_keys *l, uint32_t first, uint32_t n,
			  struct slot_bits **out, size_t *nr)
{
	struct slot_bits *v = NULL, *p;
	size_t i, nl = 0, cap = 0, j, m;
	uint32_t f, c;

	for (i = 0; i < l->n; i++) {
		const struct sieve_xdp_key *k = &l->keys[i];

		if (!sxdp_v4table_entry(k) || k->prefix_len <= 24)
			continue;
		prefix_span(k, &f, &c);
		if (f < first || f - first >= n)
			continue;
		if (nl == cap) {
			cap = cap ? 2 * cap : 64;
			p = realloc(v, cap * sizeof(*p));
			if (!p) {
				free(v);
				return -ENOMEM;
			}
			v = p;
		}
		memset(&v[nl], 0, sizeof(v[nl]));
		v[nl].slot = f;
		prefix_bits(k, &v[nl++].c);
	}
	if (nl)
		qsort(v, nl, sizeof(*v), by_slot);
	/* Merged: one chunk per /24. */
	for (i = 0, m = 0; i < nl; i = j, m++) {
		v[m] = v[i];
		for (j = i + 1; j < nl && v[j].slot == v[i].slot; j++)
			for (c = 0; c < 4; c++)
				v[m].c.w[c] |= v[j].c.w[c];
	}
	*out = v;
	*nr = m;
	return 0;
}

/*
 * The /24s [@first, @first + @n) made what the IPv4 prefixes among @l
 * say: covered by one of length <= 24, else the chunk of those longer, or
 * nothing. @l may hold anything; entries outside the span are skipped.
 * Each /24 is written at most once (a key made stale is never reused
 * before its grace period).
 */
static int recompute(struct sxdp_handle *h, __u64 *top, uint32_t first, uint32_t n,
		     const struct sxdp_keys *l, struct stale_keys *stale)
{
	static const struct sieve_xdp_v4_chunk none;
	static const uint8_t zero32[SIEVE_XDP_V4_SLOTS_PER_WORD];
	static const uint8_t ones32[SIEVE_XDP_V4_SLOTS_PER_WORD] = {
		[0 ... SIEVE_XDP_V4_SLOTS_PER_WORD - 1] = 1
	};
	uint8_t *cov = calloc(n, 1);
	struct slot_bits *chunks = NULL;
	size_t i, nc = 0;
	uint32_t s, f, m;
	int ret;

	if (!cov)
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		if (!sxdp_v4table_entry(&l->keys[i]) || l->keys[i].prefix_len > 24)
			continue;
		prefix_span(&l->keys[i], &f, &m);
		/* Aligned spans: one holds the other, or they are apart. */
		if (f <= first && f + (uint64_t)m >= first + (uint64_t)n)
			memset(cov, 1, n);
		else if (f >= first && f + (uint64_t)m <= first + (uint64_t)n)
			memset(cov + (f - first), 1, m);
	}
	ret = collect_chunks(l, first, n, &chunks, &nc);
	/* The chunks first (new keys, then the states flip). */
	for (i = 0; !ret && i < nc; i++) {
		ret = slot_put(h, top, chunks[i].slot, cov[chunks[i].slot - first], &chunks[i].c,
			       stale);
		cov[chunks[i].slot - first] |= 2;	/* done */
	}
	/* The rest: covered or nothing, any chunk they had now stale. */
	for (s = 0; !ret && s < n; s++) {
		/* A word of nothing that stays nothing (most of IPv4): skipped whole. */
		if (!((first + s) % SIEVE_XDP_V4_SLOTS_PER_WORD) &&
		    n - s >= SIEVE_XDP_V4_SLOTS_PER_WORD) {
			uint32_t word = sieve_xdp_v4_word(first + s);

			if (!top[word] && !memcmp(&cov[s], zero32, SIEVE_XDP_V4_SLOTS_PER_WORD)) {
				s += SIEVE_XDP_V4_SLOTS_PER_WORD - 1;
				continue;
			}
			/* Covered whole, none of them done above (a chunk is never 1). */
			if (!memcmp(&cov[s], ones32, SIEVE_XDP_V4_SLOTS_PER_WORD)) {
				ret = cover_word(top, word, stale);
				s += SIEVE_XDP_V4_SLOTS_PER_WORD - 1;
				continue;
			}
		}
		if (!(cov[s] & 2) && state_of(top, first + s) != cov[s])
			ret = slot_put(h, top, first + s, cov[s], &none, stale);
	}
	free(chunks);
	free(cov);
	return ret;
}

/* ---- the host bitmap (sieve_xdp_v4table.h): /24s holding an IPv4 source ---- */

#define HOST_BYTES	((size_t)SIEVE_XDP_V4_HOST_WORDS * sizeof(__u64))

bool sxdp_v4host_on(const struct sxdp_handle *h)
{
	return h->v4host_fd >= 0;
}

/* The /24 of an IPv4 source, which the filter holds (not the table): *@slot. */
static bool host_slot(const struct sieve_xdp_key *k, uint32_t *slot)
{
	if (k->kind != SIEVE_XDP_SRC || k->family != SIEVE_XDP_V4)
		return false;
	*slot = sieve_xdp_v4_slot(ntohl(k->saddr[0]));
	return true;
}

static __u64 *host_map(struct sxdp_handle *h)
{
	void *p = mmap(NULL, HOST_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, h->v4host_fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* One word's new bits: an aligned store (one writer: the interface's lock). */
static void host_word_set(__u64 *bits, uint32_t word, __u64 v)
{
	if (__atomic_load_n(&bits[word], __ATOMIC_RELAXED) != v)
		__atomic_store_n(&bits[word], v, __ATOMIC_RELEASE);
}

/* The bits of @l's IPv4 sources set (before they enter a filter); nothing without the map. */
static int hosts_add(struct sxdp_handle *h, const struct sxdp_keys *l)
{
	__u64 *bits;
	uint32_t slot, w;
	size_t i;

	if (!sxdp_v4host_on(h))
		return 0;
	bits = host_map(h);
	if (!bits)
		return -errno;
	for (i = 0; i < l->n; i++) {
		if (!host_slot(&l->keys[i], &slot))
			continue;
		w = sieve_xdp_v4_host_word(slot);
		host_word_set(bits, w, bits[w] | sieve_xdp_v4_host_bit(slot));
	}
	munmap(bits, HOST_BYTES);
	return 0;
}

/*
 * The bitmap made exactly @l's IPv4 sources (a build, after its swap: the
 * bits of every host were set before it, so only bits of /24s the list no
 * longer holds a host in are cleared).
 */
static int hosts_sync(struct sxdp_handle *h, const struct sxdp_keys *l)
{
	__u64 *bits, *want;
	uint32_t slot, w;
	size_t i;

	if (!sxdp_v4host_on(h))
		return 0;
	want = calloc(SIEVE_XDP_V4_HOST_WORDS, sizeof(*want));
	bits = want ? host_map(h) : NULL;
	if (!bits) {
		free(want);
		return want ? -errno : -ENOMEM;
	}
	for (i = 0; i < l->n; i++)
		if (host_slot(&l->keys[i], &slot))
			want[sieve_xdp_v4_host_word(slot)] |= sieve_xdp_v4_host_bit(slot);
	for (w = 0; w < SIEVE_XDP_V4_HOST_WORDS; w++)
		host_word_set(bits, w, want[w]);
	munmap(bits, HOST_BYTES);
	free(want);
	return 0;
}

int sxdp_v4host_remove(struct sxdp_handle *h, const struct sxdp_keys *gone,
		       int (*has_host)(void *ctx, uint32_t slot, bool *found), void *ctx)
{
	__u64 *bits, bit;
	uint32_t slot, w;
	bool found;
	size_t i;
	int ret = 0;

	if (!sxdp_v4host_on(h))
		return 0;
	bits = host_map(h);
	if (!bits)
		return -errno;
	for (i = 0; !ret && i < gone->n; i++) {
		if (!host_slot(&gone->keys[i], &slot))
			continue;
		w = sieve_xdp_v4_host_word(slot);
		bit = sieve_xdp_v4_host_bit(slot);
		/* Clear already (another host of the /24 gone before): asked once. */
		if (!(bits[w] & bit))
			continue;
		ret = has_host(ctx, slot, &found);
		if (!ret && !found)
			host_word_set(bits, w, bits[w] & ~bit);
	}
	munmap(bits, HOST_BYTES);
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

int sxdp_v4table_sync(struct sxdp_handle *h, const struct sxdp_keys *l)
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
	return ret ?: hosts_sync(h, l);
}

/*
 * /24s with a chunk at rest: at most half the chunk map, so that every
 * one of them can change in one command (its second key beside the first
 * until the grace period) and no change, an unblock least of all, fails
 * for want of room. Bounded where a list grows: a build counts its /24s
 * holding longer prefixes (covered or not: an unblock of the cover gives
 * them chunks), a live block those it gives a chunk.
 */
#define MAX_CHUNKED	(SIEVE_XDP_V4_MAX_CHUNKS / 2)

/* /24s with a chunk now. */
static uint64_t chunked(const __u64 *top)
{
	uint64_t n = 0;
	uint32_t w, s;

	for (w = 0; w < SIEVE_XDP_V4_WORDS; w++) {
		__u64 word = __atomic_load_n(&top[w], __ATOMIC_RELAXED);

		for (s = 0; word && s < SIEVE_XDP_V4_SLOTS_PER_WORD; s++)
			n += sieve_xdp_v4_state(word, s) >= SIEVE_XDP_V4_CHUNK0;
	}
	return n;
}

/* A live block's new chunks past MAX_CHUNKED: -ENOSPC, nothing written. */
static int live_bound(const __u64 *top, const struct slot_bits *chunks, size_t nc)
{
	uint64_t fresh = 0;
	size_t i;

	for (i = 0; i < nc; i++)
		fresh += state_of(top, chunks[i].slot) == SIEVE_XDP_V4_NONE;
	return fresh && chunked(top) + fresh > MAX_CHUNKED ? -ENOSPC : 0;
}

int sxdp_v4table_fits(const struct sxdp_keys *l)
{
	struct slot_bits *chunks = NULL;
	size_t nc = 0;
	int ret = collect_chunks(l, 0, SIEVE_XDP_V4_SLOTS, &chunks, &nc);

	free(chunks);
	return ret ? ret : nc > MAX_CHUNKED ? -ENOSPC : 0;
}

/*
 * Covers first, then one write per /24 of the longer prefixes. @live: a
 * live block, bounded here (a build's list is bounded by sxdp_v4table_fits).
 */
static int add(struct sxdp_handle *h, const struct sxdp_keys *fresh, bool live)
{
	static const struct sieve_xdp_v4_chunk none;
	struct stale_keys stale = { 0 };
	struct slot_bits *chunks = NULL;
	__u64 *top = top_map(h);
	uint32_t f, n, s, key, st, w;
	size_t i, nc = 0;
	int ret = 0;

	if (!top)
		return -errno;
	ret = collect_chunks(fresh, 0, SIEVE_XDP_V4_SLOTS, &chunks, &nc);
	if (!ret && live)
		ret = live_bound(top, chunks, nc);
	/* The hosts' bits before the backend adds them to the filter. */
	if (!ret)
		ret = hosts_add(h, fresh);
	for (i = 0; !ret && i < fresh->n; i++) {
		if (!sxdp_v4table_entry(&fresh->keys[i]) || fresh->keys[i].prefix_len > 24)
			continue;
		prefix_span(&fresh->keys[i], &f, &n);
		/* Covered: the chunks inside go stale. Whole words at once. */
		for (s = f; !ret && s < f + n; s++) {
			if (!(s % SIEVE_XDP_V4_SLOTS_PER_WORD) && f + n - s >= 32) {
				ret = cover_word(top, sieve_xdp_v4_word(s), &stale);
				s += SIEVE_XDP_V4_SLOTS_PER_WORD - 1;
			} else if (state_of(top, s) != SIEVE_XDP_V4_COVERED) {
				ret = slot_put(h, top, s, true, &none, &stale);
			}
		}
	}
	for (i = 0; !ret && i < nc; i++) {
		struct sieve_xdp_v4_chunk c;

		st = state_of(top, chunks[i].slot);
		if (st == SIEVE_XDP_V4_COVERED)
			continue;
		key = sieve_xdp_v4_chunk_key(chunks[i].slot, st);
		memset(&c, 0, sizeof(c));
		if (st >= SIEVE_XDP_V4_CHUNK0 && bpf_map_lookup_elem(h->v4chunk_fd, &key, &c))
			ret = -errno;
		for (w = 0; w < 4; w++)
			c.w[w] |= chunks[i].c.w[w];
		if (!ret)
			ret = slot_put(h, top, chunks[i].slot, false, &c, &stale);
	}
	free(chunks);
	stale_drop(h, &stale);
	munmap(top, TOP_BYTES);
	return ret;
}

int sxdp_v4table_add(struct sxdp_handle *h, const struct sxdp_keys *fresh)
{
	return add(h, fresh, true);
}

int sxdp_v4table_build_add(struct sxdp_handle *h, const struct sxdp_keys *l)
{
	return add(h, l, false);
}

struct span {
	uint32_t first, n;
};

static int by_first(const void *a, const void *b)
{
	uint32_t x = ((const struct span *)a)->first, y = ((const struct span *)b)->first;

	return x < y ? -1 : x > y;
}

/* The gone prefixes' spans, merged (aligned spans nest or are apart): each /24 once. */
int sxdp_v4table_remove(struct sxdp_handle *h, const struct sxdp_keys *gone,
			const struct sxdp_keys *remaining)
{
	struct stale_keys stale = { 0 };
	struct span *sp = calloc(gone->n ? gone->n : 1, sizeof(*sp));
	__u64 *top = top_map(h);
	size_t i, n = 0, j;
	int ret = 0;

	if (!top || !sp) {
		ret = top ? -ENOMEM : -errno;
		goto out;
	}
	for (i = 0; i < gone->n; i++)
		if (sxdp_v4table_entry(&gone->keys[i]))
			prefix_span(&gone->keys[i], &sp[n].first, &sp[n].n), n++;
	qsort(sp, n, sizeof(*sp), by_first);
	for (i = 0; !ret && i < n; i = j) {
		uint64_t end = (uint64_t)sp[i].first + sp[i].n;

		for (j = i + 1; j < n && sp[j].first < end; j++)
			if (sp[j].first + (uint64_t)sp[j].n > end)
				end = sp[j].first + (uint64_t)sp[j].n;
		ret = recompute(h, top, sp[i].first, (uint32_t)(end - sp[i].first), remaining,
				&stale);
	}
	stale_drop(h, &stale);
out:
	if (top)
		munmap(top, TOP_BYTES);
	free(sp);
	return ret;
}

int sxdp_v4table_counts(struct sxdp_handle *h, uint64_t *covered, uint64_t *chunks,
			uint64_t *bytes)
{
	__u64 *top = top_map(h);
	uint32_t w, s;

	*covered = *chunks = *bytes = 0;
	if (!top)
		return -errno;
	/* Word by word: a list of few prefixes leaves nearly every word 0. */
	for (w = 0; w < SIEVE_XDP_V4_WORDS; w++) {
		__u64 word = __atomic_load_n(&top[w], __ATOMIC_RELAXED);

		for (s = 0; word && s < SIEVE_XDP_V4_SLOTS_PER_WORD; s++) {
			uint32_t st = sieve_xdp_v4_state(word, s);

			*covered += st == SIEVE_XDP_V4_COVERED;
			*chunks += st >= SIEVE_XDP_V4_CHUNK0;
		}
	}
	munmap(top, TOP_BYTES);
	*bytes = sxdp_map_memlock(h->v4top_fd) + sxdp_map_memlock(h->v4chunk_fd) +
		 (sxdp_v4host_on(h) ? sxdp_map_memlock(h->v4host_fd) : 0);
	return 0;
}
