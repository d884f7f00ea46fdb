// SPDX-License-Identifier: GPL-2.0
/*
 * The allowlist's maps: sources and prefixes that a source or prefix entry
 * never drops, in the pinned LPM trie SIEVE_XDP_MAP_ALLOW. Entries travel
 * as the blocklist's own keys (kind SIEVE_XDP_SRC or SIEVE_XDP_PREFIX) so
 * the parser, the formatter and the lists serve both; only this file knows
 * the trie's key (struct sieve_xdp_allow_key).
 *
 * No generations here: the trie inserts and deletes one entry at a time
 * under RCU, and a packet asks it once (see sieve_xdp.h). What needs care
 * is order: an insert before a delete, so that a source allowed before and
 * after a change is allowed throughout it.
 *
 * The program skips the trie while SIEVE_XDP_MAP_ALLOW_NONE says it is
 * empty: so that flag is cleared before any insert, and set only after
 * the trie was seen empty, at the end of a change.
 *
 * The callers hold the interface's lock (sxdp_lock): two changes would
 * otherwise read and write the trie interleaved, and a sync could delete
 * what a concurrent update just inserted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "xdp.h"

static unsigned int family_bits(uint8_t family)
{
	return family == SIEVE_XDP_V4 ? 32 : 128;
}

/*
 * Whether @key is an allowlist entry as the parser makes them: a source
 * or prefix of a known family, its length right for its kind, no host
 * bits, nothing in the fields those kinds leave zero. Host bits matter:
 * the trie would keep them, list them back, and treat two spellings of
 * one prefix as one entry.
 */
static bool allow_entry_ok(const struct sieve_xdp_key *key)
{
	static const __be32 zero[4];
	unsigned int full, w;

	if (key->family != SIEVE_XDP_V4 && key->family != SIEVE_XDP_V6)
		return false;
	full = family_bits(key->family);
	if ((key->kind != SIEVE_XDP_SRC || key->prefix_len != full) &&
	    (key->kind != SIEVE_XDP_PREFIX || !key->prefix_len || key->prefix_len >= full))
		return false;
	if (key->proto || key->sport || key->dport || memcmp(key->daddr, zero, sizeof(zero)))
		return false;
	for (w = 0; w < 4; w++) {
		unsigned int bits = key->prefix_len > 32 * w ? key->prefix_len - 32 * w : 0;
		uint32_t mask = bits >= 32 ? ~0U : bits ? ~0U << (32 - bits) : 0;

		if (ntohl(key->saddr[w]) & ~mask)
			return false;
	}
	return true;
}

static bool allow_list_ok(const struct sxdp_keys *l)
{
	size_t i;

	for (i = 0; l && i < l->n; i++)
		if (!allow_entry_ok(&l->keys[i]))
			return false;
	return true;
}

static void to_trie_key(const struct sieve_xdp_key *key, struct sieve_xdp_allow_key *tk)
{
	memset(tk, 0, sizeof(*tk));
	tk->prefixlen = SIEVE_XDP_ALLOW_PREFIXLEN(key->prefix_len);
	tk->family = key->family;
	memcpy(tk->addr, key->saddr, family_bits(key->family) / 8);
}

/*
 * The entry a trie key stands for, host bits cleared (a key written by
 * hand, with bpftool, may have them: it is the same node of the trie);
 * -EINVAL if it cannot be an entry at all.
 */
static int from_trie_key(const struct sieve_xdp_allow_key *tk, struct sieve_xdp_key *key)
{
	unsigned int len = tk->prefixlen - SIEVE_XDP_ALLOW_PREFIXLEN(0), w;

	memset(key, 0, sizeof(*key));
	if (tk->prefixlen < SIEVE_XDP_ALLOW_PREFIXLEN(1) ||
	    (tk->family != SIEVE_XDP_V4 && tk->family != SIEVE_XDP_V6) ||
	    len > family_bits(tk->family))
		return -EINVAL;
	key->family = tk->family;
	key->kind = len == family_bits(tk->family) ? SIEVE_XDP_SRC : SIEVE_XDP_PREFIX;
	key->prefix_len = len;
	memcpy(key->saddr, tk->addr, family_bits(tk->family) / 8);
	for (w = 0; w < 4; w++) {
		unsigned int bits = len > 32 * w ? len - 32 * w : 0;
		uint32_t mask = bits >= 32 ? ~0U : bits ? ~0U << (32 - bits) : 0;

		key->saddr[w] &= htonl(mask);
	}
	return 0;
}

static int allow_insert(int fd, const struct sieve_xdp_key *key)
{
	struct sieve_xdp_allow_key tk;
	uint32_t value = 0;

	to_trie_key(key, &tk);
	return bpf_map_update_elem(fd, &tk, &value, BPF_ANY) ? -errno : 0;
}

/* Deleting what is not there is no error: deletes repeat after a crash. */
static int allow_delete(int fd, const struct sieve_xdp_key *key)
{
	struct sieve_xdp_allow_key tk;

	to_trie_key(key, &tk);
	return bpf_map_delete_elem(fd, &tk) && errno != ENOENT ? -errno : 0;
}

/* @l sorted and without duplicates, so that sxdp_keys_find works on it. */
static int sorted_copy(const struct sxdp_keys *l, struct sxdp_keys *out)
{
	size_t i;
	int err;

	*out = (struct sxdp_keys){ 0 };
	for (i = 0; l && i < l->n; i++) {
		err = sxdp_keys_add(out, &l->keys[i]);
		if (err) {
			sxdp_keys_free(out);
			return err;
		}
	}
	sxdp_keys_sort(out);
	return 0;
}

/* Where @h has the flag: 1 to skip the trie, 0 to ask it. */
static int allow_none_set(struct sxdp_handle *h, __u32 none)
{
	__u32 zero = 0;

	if (h->allow_none_fd < 0)
		return 0;
	return bpf_map_update_elem(h->allow_none_fd, &zero, &none, BPF_ANY) ? -errno : 0;
}

/* After a change: the flag set if the trie holds nothing now. */
static int allow_none_after(struct sxdp_handle *h)
{
	struct sieve_xdp_allow_key k;

	if (!bpf_map_get_next_key(h->allow_fd, NULL, &k))
		return 0;
	return errno == ENOENT ? allow_none_set(h, 1) : -errno;
}

int sxdp_allow_update(struct sxdp_handle *h, const struct sxdp_keys *add,
		      const struct sxdp_keys *del)
{
	struct sxdp_keys keep;
	size_t i;
	int err = 0;

	if (h->allow_fd < 0)
		return -EOPNOTSUPP;
	if (!allow_list_ok(add) || !allow_list_ok(del))
		return -EINVAL;
	if (add && add->n)
		err = allow_none_set(h, 0);
	for (i = 0; add && i < add->n && !err; i++)
		err = allow_insert(h->allow_fd, &add->keys[i]);
	if (err || !del || !del->n)
		return err ?: allow_none_after(h);
	/* An entry both added and deleted stays: it is never gone for a moment. */
	err = sorted_copy(add, &keep);
	for (i = 0; i < del->n && !err; i++)
		if (!sxdp_keys_find(&keep, &del->keys[i]))
			err = allow_delete(h->allow_fd, &del->keys[i]);
	sxdp_keys_free(&keep);
	return err ?: allow_none_after(h);
}

/* Keys as the trie holds them. */
struct trie_keys {
	struct sieve_xdp_allow_key *k;
	size_t n, cap;
};

/*
 * Every key in the trie. Collected before anything is deleted: a delete
 * in the middle of a bpf_map_get_next_key walk would restart it from the
 * first key (the trie's answer for a key it no longer holds).
 */
static int trie_keys_read(int fd, struct trie_keys *t)
{
	struct sieve_xdp_allow_key *prev = NULL;
	int err;

	*t = (struct trie_keys){ 0 };
	for (;;) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 64;
			void *k = realloc(t->k, cap * sizeof(*t->k));

			if (!k)
				goto fail;
			t->k = k;
			t->cap = cap;
			prev = t->n ? &t->k[t->n - 1] : NULL;
		}
		if (bpf_map_get_next_key(fd, prev, &t->k[t->n]))
			break;
		prev = &t->k[t->n++];
	}
	if (errno == ENOENT)
		return 0;
fail:
	err = -errno;
	free(t->k);
	return err;
}

int sxdp_allow_read(struct sxdp_handle *h, struct sxdp_keys *out)
{
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_key key;
	struct trie_keys t;
	size_t i;
	int err;

	if (h->allow_fd < 0)
		return -EOPNOTSUPP;
	err = trie_keys_read(h->allow_fd, &t);
	for (i = 0; !err && i < t.n; i++) {
		err = from_trie_key(&t.k[i], &key);
		if (!err)
			err = sxdp_keys_add(&l, &key);
	}
	free(t.k);
	if (err) {
		sxdp_keys_free(&l);
		return err;
	}
	sxdp_keys_sort(&l);
	sxdp_keys_free(out);
	*out = l;
	return 0;
}

/*
 * Deletes the keys that are not on @want, as the trie holds them (a key
 * that is no entry at all goes too). A key whose entry is on @want stays
 * even if spelt with host bits: it is that entry's node.
 */
static int delete_extras(int fd, const struct trie_keys *t, const struct sxdp_keys *want)
{
	struct sieve_xdp_key key;
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (!from_trie_key(&t->k[i], &key) && sxdp_keys_find(want, &key))
			continue;
		if (bpf_map_delete_elem(fd, &t->k[i]) && errno != ENOENT)
			return -errno;
	}
	return 0;
}

int sxdp_allow_sync(struct sxdp_handle *h, const struct sxdp_keys *all)
{
	struct sxdp_keys want, have = { 0 };
	struct sieve_xdp_key key;
	struct trie_keys t;
	size_t i;
	int err;

	if (h->allow_fd < 0)
		return -EOPNOTSUPP;
	if (!allow_list_ok(all))
		return -EINVAL;
	err = sorted_copy(all, &want);
	if (err)
		return err;
	err = trie_keys_read(h->allow_fd, &t);
	if (err)
		goto out_free_want;
	for (i = 0; i < t.n && !err; i++)
		if (!from_trie_key(&t.k[i], &key))
			err = sxdp_keys_add(&have, &key);
	sxdp_keys_sort(&have);
	if (!err && want.n)
		err = allow_none_set(h, 0);
	/* Inserts first: a source that moves from one entry to a wider one
	 * (10.0.0.1 to 10.0.0.0/24) is covered all along. */
	for (i = 0; i < want.n && !err; i++)
		if (!sxdp_keys_find(&have, &want.keys[i]))
			err = allow_insert(h->allow_fd, &want.keys[i]);
	if (!err)
		err = delete_extras(h->allow_fd, &t, &want);
	if (!err)
		err = allow_none_after(h);
	sxdp_keys_free(&have);
	free(t.k);
out_free_want:
	sxdp_keys_free(&want);
	return err;
}
