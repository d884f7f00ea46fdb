// SPDX-License-Identifier: GPL-2.0
/*
 * The origin of each key the exact maps hold: their value, which the
 * program counts a drop under ("Per-origin drops" in sieve_xdp.h). The
 * store numbers origins (sxdp_store_origin_ids); a change gives the
 * loader the list's entries with their ids (h->origins), and every key
 * written to an exact map takes the id of the entry that made it. A prefix
 * expanded to a longer probe length (expand.c) made keys its entry is not:
 * they take the id of the longest entry of the list that covers them. A key
 * two entries make (a prefix and its expansion of a shorter one) is
 * counted under the longer one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "xdp.h"

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sieve_xdp_key));
}

int sxdp_origins_add(struct sxdp_origins *o, const struct sieve_xdp_key *key, uint32_t id)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 1024;
		struct sxdp_origin_entry *v;

		if (cap > SIZE_MAX / sizeof(*v))
			return -ENOMEM;
		v = realloc(o->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n].key = *key;
	o->v[o->n].id = id;
	o->n++;
	o->sorted = false;
	return 0;
}

void sxdp_origins_sort(struct sxdp_origins *o)
{
	/* The key is the entry's first member: sorted by key. */
	if (o->n)
		qsort(o->v, o->n, sizeof(*o->v), key_cmp);
	o->sorted = true;
}

void sxdp_origins_free(struct sxdp_origins *o)
{
	free(o->v);
	memset(o, 0, sizeof(*o));
}

static const struct sxdp_origin_entry *find(const struct sxdp_origins *o,
					    const struct sieve_xdp_key *key)
{
	return o->sorted ? bsearch(key, o->v, o->n, sizeof(*o->v), key_cmp) : NULL;
}

/* @key's source masked to its first @len bits. */
static void mask_source(struct sieve_xdp_key *key, unsigned int len)
{
	unsigned int w, bits;

	for (w = 0; w < 4; w++) {
		bits = len > 32 * w ? len - 32 * w : 0;
		if (bits < 32)
			key->saddr[w] &= htonl(bits ? ~0U << (32 - bits) : 0);
	}
	key->prefix_len = len;
}

uint32_t sxdp_origin_of(const struct sxdp_origins *o, const struct sieve_xdp_key *key)
{
	const struct sxdp_origin_entry *e;
	struct sieve_xdp_key k;
	unsigned int len;

	if (!o)
		return SIEVE_XDP_ORIGIN_NONE;
	e = find(o, key);
	if (e)
		return e->id;
	if (key->kind != SIEVE_XDP_PREFIX)
		return SIEVE_XDP_ORIGIN_NONE;
	/* An expanded key: the longest entry shorter than it that covers it. */
	for (k = *key, len = key->prefix_len; len-- > 0;) {
		mask_source(&k, len);
		e = find(o, &k);
		if (e)
			return e->id;
	}
	return SIEVE_XDP_ORIGIN_NONE;
}
