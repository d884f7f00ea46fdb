// SPDX-License-Identifier: GPL-2.0
/*
 * Removals without a rebuild ("Removals" in sieve_xdp.h). A Bloom filter
 * of either backend cannot forget a key, so an unblock used to build the
 * whole generation again from the store: O(list) for one entry. Instead
 * the digests of the removed keys go into the generation's removed map,
 * which the program asks after a filter hit; in exact mode the keys leave
 * the exact map. O(keys removed), whatever the list's size.
 *
 * Which keys. An entry's keys are its expansion under the probe lengths
 * (expand.c), and expansion shares keys: a removed /23 stored as two /24s
 * may share one with a /22 or a /24 still on the list. A key of probe
 * length L is made by an entry of length l when l's probe length is L
 * and the key masked to l is that entry; so the remaining list is asked
 * once per such l (the store's index: a point lookup each), never read
 * whole. Other kinds make only themselves.
 *
 * Lengths a live add inserted (@live_v4_lens, @live_v6_lens). Lengths
 * only ever come in between builds, so a prefix of length l sits at the
 * shortest probe length >= l the maps had when it came: the live one, or
 * a longer one if that came later. The build's lengths were there all
 * along, so the candidates are the probe lengths from l up to the first
 * of the build's (all of them: one is the prefix's, and keys of the
 * others that no remaining entry makes are harmless in the removed map),
 * and the remaining entries asked for a key of length L are those of
 * every length down to the first of the build's below L. A remaining
 * entry that holds the key's addresses keeps the key, whatever length it
 * sits at: those addresses stay blocked by it either way. Without
 * inserted lengths both rules are the plain ones above. Past
 * REMOVE_MAX_KEYS candidate keys the command rebuilds instead.
 *
 * Adds: a key whose digest is in the removed map is added to the filter
 * (its bits are there anyway) and then leaves the map (sxdp_removed_forget),
 * and the config's count of removed keys goes down by one. In exact mode
 * the program asks the exact map, never the removed one, but the removed
 * digests are noted there all the same, so that the count stays the
 * number of digests the map holds and a key blocked again is counted out.
 *
 * Order and kill -9: the store commits first (ops.c), then the map is
 * written, then the config records the store's version. Killed before
 * that, the config is behind the store and the next command rebuilds,
 * which starts the generation without a removed map. Digests are only
 * ever added to the live map for keys the store no longer makes, so a
 * cut-short removal lets through only what the store already unblocked.
 *
 * The bound: the removed keys' bits still load the filter, and the map
 * costs kernel memory, so past sxdp_removed_max() the command rebuilds.
 * Before that, past half of it (sxdp_removed_due), the agent rebuilds the
 * generation on its timer (sxdp_iface_compact), beside the live one and
 * under the interface's lock as a command would, so the commands seldom
 * pay for one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "backend.h"

/* A quarter of the generation's capacity, at least a few, at most the cap. */
uint32_t sxdp_removed_max(const struct sieve_xdp_config *cfg)
{
	uint64_t max = cfg->capacity / 4;

	if (max < 64)
		max = 64;
	return max > SIEVE_XDP_REMOVED_MAX ? SIEVE_XDP_REMOVED_MAX : (uint32_t)max;
}

bool sxdp_removed_due(const struct sieve_xdp_config *cfg)
{
	return cfg->removed && cfg->removed >= sxdp_removed_max(cfg) / 2;
}

/* Keys one removal may look up: past it a rebuild is cheaper. */
#define REMOVE_MAX_KEYS		65536
/*
 * Store lookups one removal may make (a key of probe length L asks every
 * length down to the build's next: up to 24 for IPv4, 127 for IPv6):
 * about 2 us each, so past this (a quarter of a second) a rebuild, which
 * holds the list's lock for less.
 */
#define REMOVE_MAX_LOOKUPS	131072

static bool bit_set(const __u32 *words, unsigned int bit)
{
	return words[bit / 32] & (1U << (bit % 32));
}

static const __u32 *live_bits(const struct sieve_xdp_config *cfg, bool v4)
{
	return v4 ? &cfg->live_v4_lens : cfg->live_v6_lens;
}

void sxdp_note_live_lens(const struct sieve_xdp_config *cur, struct sieve_xdp_config *next)
{
	unsigned int i;

	for (i = 0; i < next->nr_v4_lens && i < SIEVE_XDP_MAX_PREFIX_LENS; i++)
		if (sxdp_cpe_target(cur->v4_lens, cur->nr_v4_lens, next->v4_lens[i]) !=
		    next->v4_lens[i])
			next->live_v4_lens |= 1U << (next->v4_lens[i] % 32);
	for (i = 0; i < next->nr_v6_lens && i < SIEVE_XDP_MAX_PREFIX_LENS; i++)
		if (sxdp_cpe_target(cur->v6_lens, cur->nr_v6_lens, next->v6_lens[i]) !=
		    next->v6_lens[i])
			next->live_v6_lens[next->v6_lens[i] / 32] |= 1U << (next->v6_lens[i] % 32);
}

static int live_slot(struct sxdp_handle *h, uint32_t *slot)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(h->active_fd, &zero, slot))
		return -errno;
	*slot &= SIEVE_XDP_NR_GENS - 1;
	return 0;
}

/* A new removed map: the flags of the program's template, which the kernel compares. */
static int removed_create(const struct sieve_xdp_config *cfg)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "sieve_removed_g", sizeof(__u64),
				sizeof(__u32), sxdp_removed_max(cfg), &opts);

	return fd < 0 ? -errno : fd;
}

int sxdp_removed_carry(struct sxdp_handle *h, const struct sieve_xdp_config *next,
		       uint32_t live)
{
	int fd;

	/* A backend that deletes live (the cuckoo filter) keeps no digests. */
	if (h->removed_fd < 0 || !next->removed || sxdp_backend_of(next->flags)->remove_live)
		return -1;
	fd = sxdp_slot_map_fd(h->removed_fd, live);
	return fd == -ENOENT ? -1 : fd;
}

/* @key masked to its first @len source bits, as an entry of that length. */
static void prefix_of(const struct sieve_xdp_key *key, unsigned int len,
		      struct sieve_xdp_key *e)
{
	unsigned int w, bits;

	*e = *key;
	e->prefix_len = len;
	for (w = 0; w < 4; w++) {
		bits = len > 32 * w ? len - 32 * w : 0;
		e->saddr[w] &= htonl(bits >= 32 ? ~0U : bits ? ~0U << (32 - bits) : 0);
	}
}

/*
 * Whether an entry left on the list makes the expanded @key (of the live
 * @cfg): for a prefix key of probe length L, one lookup per prefix length
 * stored at L; any other key is its own entry, which went.
 */
static int still_made(const struct sieve_xdp_config *cfg, const struct sieve_xdp_key *key,
		      sxdp_has_fn has, void *ctx, size_t *lookups, bool *found)
{
	bool v4 = key->family == SIEVE_XDP_V4;
	const uint8_t *lens = v4 ? cfg->v4_lens : cfg->v6_lens;
	unsigned int nlens = v4 ? cfg->nr_v4_lens : cfg->nr_v6_lens, l;
	struct sieve_xdp_key e;
	int ret;

	*found = false;
	if (key->kind != SIEVE_XDP_PREFIX)
		return 0;
	for (l = key->prefix_len; l >= 1 && !*found; l--) {
		/* Below a length of the build, none is stored at this one. */
		if (l < key->prefix_len && sxdp_cpe_target(lens, nlens, l) == l &&
		    !bit_set(live_bits(cfg, v4), l))
			break;
		if (++*lookups > REMOVE_MAX_LOOKUPS)
			return 1;
		prefix_of(key, l, &e);
		ret = has(ctx, &e, found);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Whether the removal needs a rebuild before anything is looked up. The
 * config's kinds stay as they are on a live removal, and a port kind in
 * use makes the program drop what it cannot read the ports of
 * (dropped_unparsed); so does any kind, deep VLAN stacks. So removing a
 * service or flow entry, or the last entries, rebuilds: the new
 * generation's kinds are the store's. A source or prefix kind left set
 * only costs a probe.
 */
static bool needs_rebuild(struct sxdp_handle *h, const struct sieve_xdp_config *cur,
			  const struct sxdp_keys *gone)
{
	bool exact = cur->flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY);
	size_t i;

	/* Its own deletes (ops.c asks them first), or maps of another digest. */
	if (sxdp_backend_of(cur->flags)->remove_live || cur->digest != SIEVE_XDP_DIGEST)
		return true;
	if (!exact && h->removed_fd < 0)
		return true;
	/* More than the map may take: cheaper to rebuild than to look up. */
	if (cur->removed + gone->n > sxdp_removed_max(cur) || gone->n >= cur->entries)
		return true;
	for (i = 0; i < gone->n; i++)
		if (gone->keys[i].kind == SIEVE_XDP_SERVICE || gone->keys[i].kind == SIEVE_XDP_FLOW)
			return true;
	return false;
}

/*
 * The keys the maps may hold for @gone: each prefix expanded to each
 * length it may sit at (see the top), the rest as they are; sorted, each
 * once. 1 past REMOVE_MAX_KEYS.
 */
static int candidate_keys(const struct sieve_xdp_config *cfg, const struct sxdp_keys *gone,
			  struct sxdp_keys *out)
{
	struct sieve_xdp_config one = *cfg;
	struct sxdp_keys single = { 0 }, x = { 0 };
	size_t i, j, total = 0;
	int ret = 0;

	for (i = 0; !ret && i < gone->n; i++) {
		const struct sieve_xdp_key *k = &gone->keys[i];
		bool v4 = k->family == SIEVE_XDP_V4;
		const uint8_t *lens = v4 ? cfg->v4_lens : cfg->v6_lens;
		unsigned int n = v4 ? cfg->nr_v4_lens : cfg->nr_v6_lens, l;

		if (k->kind != SIEVE_XDP_PREFIX) {
			ret = sxdp_keys_add(out, k);
			total++;
			continue;
		}
		/* In the IPv4 prefix table: its own removal (v4table.c). */
		if ((cfg->flags & SIEVE_XDP_F_V4TABLE) && sxdp_v4table_entry(k))
			continue;
		/* Lengths ascend from l: each candidate in turn, as the only probe. */
		for (l = k->prefix_len; !ret && (l = sxdp_cpe_target(lens, n, l)); l++) {
			if (l - k->prefix_len >= 20 || (total += 1ULL << (l - k->prefix_len)) >
			    REMOVE_MAX_KEYS) {
				ret = 1;
				break;
			}
			single.n = 0;
			one.nr_v4_lens = one.nr_v6_lens = 1;
			one.v4_lens[0] = one.v6_lens[0] = l;
			ret = sxdp_keys_add(&single, k) ?: sxdp_expand(&single, &one, &x);
			for (j = 0; !ret && j < x.n; j++)
				ret = sxdp_keys_add(out, &x.keys[j]);
			if (!bit_set(live_bits(cfg, v4), l))
				break;	/* a length of the build: the longest it may sit at */
		}
		if (!ret && l == 0 && k->prefix_len && !sxdp_cpe_target(lens, n, k->prefix_len))
			ret = 1;	/* no probe length for it: not what the maps hold */
	}
	if (!ret)
		sxdp_keys_sort(out);
	sxdp_keys_free(&single);
	sxdp_keys_free(&x);
	return ret;
}

/* The keys of @keys no remaining entry makes, into @out; 1 past the lookups' bound. */
static int unmade(const struct sieve_xdp_config *cfg, const struct sxdp_keys *keys,
		  sxdp_has_fn has, void *ctx, struct sxdp_keys *out)
{
	size_t i, lookups = 0;
	bool found;
	int ret;

	for (i = 0; i < keys->n; i++) {
		ret = still_made(cfg, &keys->keys[i], has, ctx, &lookups, &found);
		if (!ret && !found)
			ret = sxdp_keys_add(out, &keys->keys[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Exact mode: the keys leave the live exact map. */
static int exact_delete(struct sxdp_handle *h, uint32_t slot, const struct sxdp_keys *keys)
{
	int fd = sxdp_slot_map_fd(h->exact_fd, slot), ret = 0;
	size_t i;

	if (fd < 0)
		return fd;
	for (i = 0; !ret && i < keys->n; i++)
		if (bpf_map_delete_elem(fd, &keys->keys[i]) && errno != ENOENT)
			ret = -errno;
	close(fd);
	return ret;
}

/*
 * The digests of @keys into the live removed map (made on the first
 * removal and put in the live slot once filled); *@added: new ones.
 */
static int removed_add(struct sxdp_handle *h, const struct sieve_xdp_config *cfg, uint32_t slot,
		       const struct sxdp_keys *keys, uint32_t *added)
{
	static const __u32 zero;
	bool made = false;
	int fd = sxdp_slot_map_fd(h->removed_fd, slot), ret = 0;
	size_t i;

	*added = 0;
	if (fd == -ENOENT) {
		fd = removed_create(cfg);
		made = true;
	}
	if (fd < 0)
		return fd;
	for (i = 0; !ret && i < keys->n; i++) {
		__u64 digest = sieve_xdp_digest(&keys->keys[i], cfg->digest_key);

		if (!bpf_map_update_elem(fd, &digest, &zero, BPF_NOEXIST))
			(*added)++;
		else if (errno != EEXIST)
			ret = -errno;	/* E2BIG: full, the caller rebuilds */
	}
	if (!ret && made && bpf_map_update_elem(h->removed_fd, &slot, &fd, BPF_ANY))
		ret = -errno;
	close(fd);
	return ret;
}

int sxdp_remove_live(struct sxdp_handle *h, const struct sxdp_keys *gone, sxdp_has_fn has,
		     void *ctx, uint64_t store_version)
{
	struct sxdp_keys keys = { 0 }, drop = { 0 };
	struct sieve_xdp_config cur, next;
	uint32_t slot, added;
	int ret;

	ret = sxdp_read_config(h, &cur, NULL);
	if (!ret)
		ret = live_slot(h, &slot);
	if (ret)
		return ret;
	if (needs_rebuild(h, &cur, gone))
		return 1;
	ret = candidate_keys(&cur, gone, &keys);
	if (ret == -E2BIG || ret == -ERANGE)
		ret = 1;
	if (!ret)
		ret = unmade(&cur, &keys, has, ctx, &drop);
	/* Expansion may make more keys than entries: the bound again. */
	if (!ret && cur.removed + drop.n > sxdp_removed_max(&cur))
		ret = 1;
	if (ret)
		goto out;
	next = cur;
	/*
	 * Exact mode notes the digests too, though the program does not ask
	 * the removed map there: a later add of one finds it and counts it
	 * back (sxdp_removed_forget), so block/unblock cycles of one key do
	 * not reach the bound. A handle without the map counts every key.
	 */
	added = drop.n;
	if (!(cur.flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY)) || h->removed_fd >= 0)
		ret = removed_add(h, &cur, slot, &drop, &added);
	if (!ret && (cur.flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY)))
		ret = exact_delete(h, slot, &drop);
	if (ret == -E2BIG)
		ret = 1;
	if (ret)
		goto out;
	next.removed = cur.removed + added;
	next.entries -= next.entries < gone->n ? next.entries : gone->n;
	next.keys -= next.keys < drop.n ? next.keys : drop.n;
	/*
	 * Last: the maps are at this version only now. Only bookkeeping
	 * changed, so in place (sxdp_publish_config), never a swap.
	 */
	next.store_version = store_version;
	if (bpf_map_update_elem(h->cfg_fd, &slot, &next, BPF_EXIST))
		ret = -errno;
out:
	sxdp_keys_free(&keys);
	sxdp_keys_free(&drop);
	return ret;
}

int sxdp_removed_forget(struct sxdp_handle *h, struct sieve_xdp_config *next,
			const struct sxdp_keys *keys)
{
	uint32_t slot;
	size_t i;
	int fd, ret;

	if (!next->removed || h->removed_fd < 0)
		return 0;
	ret = live_slot(h, &slot);
	if (ret)
		return ret;
	fd = sxdp_slot_map_fd(h->removed_fd, slot);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	for (i = 0; !ret && i < keys->n && next->removed; i++) {
		__u64 digest = sieve_xdp_digest(&keys->keys[i], next->digest_key);

		if (!bpf_map_delete_elem(fd, &digest))
			next->removed--;
		else if (errno != ENOENT)
			ret = -errno;
	}
	close(fd);
	return ret;
}
