// SPDX-License-Identifier: GPL-2.0
/*
 * Controlled prefix expansion: a list of any prefix lengths becomes at
 * most P probe lengths per family. Each probe length costs every packet of
 * its family one bloom probe, so the program only probes the lengths the
 * config names; a prefix whose length is not among them is stored as the
 * 2^(L - l) prefixes of the next chosen length L above it, which together
 * cover the same addresses.
 *
 * Which lengths: the ones that make the fewest entries after expansion for
 * the list at hand (Srinivasan and Varghese, "Fast address lookups using
 * controlled prefix expansion", 1999). Only lengths present in the list
 * are worth choosing (moving a chosen length down to the longest present
 * length below it never costs more), and the longest present length must
 * be chosen, or its prefixes would have nowhere to go. So a dynamic
 * program over the present lengths, O(n^2 P) for n <= 127 lengths.
 *
 * Counts saturate: 2^(128-1) overflows 64 bits, and a saturated cost only
 * has to lose against any real one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "xdp.h"
#include "backend.h"

#define SAT	UINT64_MAX

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > SAT - b ? SAT : a + b;
}

/* count * 2^shift, saturating. */
static uint64_t sat_shl(uint64_t count, unsigned int shift)
{
	if (!count)
		return 0;
	if (shift >= 64 || count > SAT >> shift)
		return SAT;
	return count << shift;
}

/* Entries lengths (lo, hi] make when expanded to hi. */
static uint64_t span_cost(const uint64_t *hist, unsigned int lo, unsigned int hi)
{
	uint64_t cost = 0;
	unsigned int l;

	for (l = lo + 1; l <= hi; l++)
		cost = sat_add(cost, sat_shl(hist[l], hi - l));
	return cost;
}

uint64_t sxdp_cpe_cost(const uint64_t *hist, unsigned int maxlen, const uint8_t *lens,
		       unsigned int nlens)
{
	uint64_t cost = 0;
	unsigned int i, prev = 0, l;

	/* lens ascending here; a length above the last chosen one costs all. */
	for (i = 0; i < nlens; i++) {
		cost = sat_add(cost, span_cost(hist, prev, lens[i]));
		prev = lens[i];
	}
	for (l = prev + 1; l <= maxlen; l++)
		if (hist[l])
			return SAT;
	return cost;
}

/*
 * best[c][j]: fewest entries for the lengths up to present length j with
 * c chosen lengths, the last being j; from[c][j] the chosen one before
 * (0 for none). Ties go to fewer lengths: a probe costs every packet.
 */
int sxdp_cpe_choose(const uint64_t *hist, unsigned int maxlen, unsigned int max_probes,
		    uint8_t *lens, unsigned int *nlens, uint64_t *entries)
{
	/* About 20 KiB of stack: no state shared between calls. */
	uint64_t best[SIEVE_XDP_MAX_PREFIX_LENS + 1][SXDP_CPE_MAX_LEN + 1];
	uint8_t from[SIEVE_XDP_MAX_PREFIX_LENS + 1][SXDP_CPE_MAX_LEN + 1];
	unsigned int c, i, j, top = 0, best_c = 0;
	uint64_t answer = SAT;

	if (!max_probes || max_probes > SIEVE_XDP_MAX_PREFIX_LENS || maxlen > SXDP_CPE_MAX_LEN)
		return -EINVAL;
	for (j = 1; j <= maxlen; j++)
		if (hist[j])
			top = j;
	*nlens = 0;
	*entries = 0;
	if (!top)
		return 0;
	for (c = 1; c <= max_probes; c++) {
		for (j = 1; j <= top; j++) {
			best[c][j] = SAT;
			if (!hist[j])
				continue;
			if (c == 1) {
				best[c][j] = span_cost(hist, 0, j);
				from[c][j] = 0;
				continue;
			}
			for (i = 1; i < j; i++) {
				uint64_t v;

				if (!hist[i] || best[c - 1][i] == SAT)
					continue;
				v = sat_add(best[c - 1][i], span_cost(hist, i, j));
				if (v < best[c][j]) {
					best[c][j] = v;
					from[c][j] = i;
				}
			}
		}
		if (best[c][top] < answer) {
			answer = best[c][top];
			best_c = c;
		}
	}
	if (!best_c)
		return -E2BIG;	/* every plan saturates */
	/* Walk back: the lengths come out longest first, as the program probes. */
	for (j = top, c = best_c; c; j = from[c][j], c--)
		lens[(*nlens)++] = j;
	*entries = answer;
	return 0;
}

/*
 * Adds @i << (128 - @len) to an address read as one 128-bit big-endian
 * number: an IPv4 address is word 0, its top bits, so @len counts from
 * the top for both families.
 */
static void addr_add(__be32 out[4], const __be32 in[4], uint64_t i, unsigned int len)
{
	unsigned __int128 v = 0;
	int w;

	for (w = 0; w < 4; w++)
		v = v << 32 | ntohl(in[w]);
	v += (unsigned __int128)i << (128 - len);
	for (w = 3; w >= 0; w--, v >>= 32)
		out[w] = htonl((uint32_t)v);
}

/*
 * The probe length a prefix of @len is stored at: the shortest chosen
 * length at or above it (lens are longest first), or 0 if none.
 */
unsigned int sxdp_cpe_target(const uint8_t *lens, unsigned int nlens, unsigned int len)
{
	unsigned int i, target = 0;

	for (i = 0; i < nlens; i++)
		if (lens[i] >= len)
			target = lens[i];
	return target;
}

/*
 * The keys of a list as the maps hold them under cfg's lengths: each
 * prefix as the prefixes of its probe length that cover it, everything
 * else as it is; sorted, without duplicates (nested and overlapping
 * prefixes expand to shared keys). -E2BIG past SXDP_MAX_EXTRA_KEYS keys
 * more than entries; -ERANGE if a prefix has no probe length (a config
 * that does not fit the list).
 */
/* Here, not in v4table.c: the planner is built without libbpf too (the unit runner). */
bool sxdp_v4table_entry(const struct sieve_xdp_key *k)
{
	return k->kind == SIEVE_XDP_PREFIX && k->family == SIEVE_XDP_V4 && k->prefix_len < 32;
}

/* A prefix the generation keeps in the IPv4 prefix table. */
static bool in_v4table(const struct sieve_xdp_config *cfg, const struct sieve_xdp_key *k)
{
	return (cfg->flags & SIEVE_XDP_F_V4TABLE) && sxdp_v4table_entry(k);
}

static int expand_into(const struct sxdp_keys *l, const struct sieve_xdp_config *cfg,
		       struct sxdp_keys *out)
{
	struct sxdp_keys x = { 0 };
	size_t n;
	int ret = 0;

	/* At least every entry: one allocation, not a doubling per power of two of 10^7. */
	x.keys = malloc((l->n ? l->n : 1) * sizeof(*x.keys));
	if (!x.keys)
		return -ENOMEM;
	x.cap = l->n ? l->n : 1;
	for (n = 0; !ret && n < l->n; n++) {
		const struct sieve_xdp_key *k = &l->keys[n];
		struct sieve_xdp_key e = *k;
		unsigned int target;
		uint64_t i, count;

		if (k->kind != SIEVE_XDP_PREFIX) {
			ret = sxdp_keys_add(&x, k);
			continue;
		}
		/* In the IPv4 prefix table (v4table.c), not the filter. */
		if (in_v4table(cfg, k))
			continue;
		target = k->family == SIEVE_XDP_V4 ?
			sxdp_cpe_target(cfg->v4_lens, cfg->nr_v4_lens, k->prefix_len) :
			sxdp_cpe_target(cfg->v6_lens, cfg->nr_v6_lens, k->prefix_len);
		if (!target) {
			ret = -ERANGE;
			break;
		}
		count = sat_shl(1, target - k->prefix_len);
		if (count > SXDP_MAX_EXTRA_KEYS || x.n + count > l->n + SXDP_MAX_EXTRA_KEYS) {
			ret = -E2BIG;
			break;
		}
		e.prefix_len = target;
		for (i = 0; !ret && i < count; i++) {
			addr_add(e.saddr, k->saddr, i, target);
			ret = sxdp_keys_add(&x, &e);
		}
	}
	if (ret) {
		sxdp_keys_free(&x);
		return ret;
	}
	sxdp_keys_free(out);
	*out = x;
	return 0;
}

int sxdp_expand(const struct sxdp_keys *l, const struct sieve_xdp_config *cfg,
		struct sxdp_keys *out)
{
	int ret = expand_into(l, cfg, out);

	if (!ret)
		sxdp_keys_sort(out);
	return ret;
}

/* ---- the config of a generation ---- */

static __be32 mask_word(unsigned int len, unsigned int w)
{
	unsigned int bits = len > 32 * w ? len - 32 * w : 0;

	return htonl(bits >= 32 ? ~0U : bits ? ~0U << (32 - bits) : 0);
}

/* The netmasks the program ANDs with, from the probe lengths. */
static void config_masks(struct sieve_xdp_config *cfg)
{
	unsigned int i, w;

	for (i = 0; i < SIEVE_XDP_MAX_PREFIX_LENS; i++) {
		cfg->v4_masks[i] = i < cfg->nr_v4_lens ? mask_word(cfg->v4_lens[i], 0) : 0;
		for (w = 0; w < 4; w++)
			cfg->v6_masks[i][w] = i < cfg->nr_v6_lens ? mask_word(cfg->v6_lens[i], w) : 0;
	}
}

unsigned int sxdp_max_probes(const struct sieve_xdp_config *cfg)
{
	return cfg->max_probes && cfg->max_probes <= SIEVE_XDP_MAX_PREFIX_LENS ?
	       cfg->max_probes : SXDP_DEFAULT_MAX_PROBES;
}

/*
 * One family's probe lengths for the prefixes of @l: *extra is how many
 * keys expansion adds to them.
 */
static int choose_family(const struct sxdp_keys *l, const struct sieve_xdp_config *cfg,
			 uint8_t family, unsigned int max_probes, uint8_t *lens, uint8_t *nr,
			 uint64_t *extra)
{
	uint64_t hist[SXDP_CPE_MAX_LEN + 1] = { 0 }, prefixes = 0, keys;
	unsigned int n = 0;
	size_t i;
	int ret;

	for (i = 0; i < l->n; i++) {
		if (l->keys[i].kind == SIEVE_XDP_PREFIX && l->keys[i].family == family &&
		    !in_v4table(cfg, &l->keys[i])) {
			hist[l->keys[i].prefix_len]++;
			prefixes++;
		}
	}
	ret = sxdp_cpe_choose(hist, family == SIEVE_XDP_V4 ? 32 : 128, max_probes, lens, &n,
			      &keys);
	*nr = n;
	*extra = ret ? UINT64_MAX : keys - prefixes;
	return ret;
}

int sxdp_config_fill(struct sieve_xdp_config *cfg, const struct sxdp_keys *l)
{
	unsigned int max_probes = sxdp_max_probes(cfg);
	uint64_t extra4, extra6;
	size_t i;
	int ret;

	cfg->kinds = 0;
	for (i = 0; i < l->n; i++)
		cfg->kinds |= SIEVE_XDP_KIND_BIT(l->keys[i].kind, l->keys[i].family);
	ret = choose_family(l, cfg, SIEVE_XDP_V4, max_probes, cfg->v4_lens, &cfg->nr_v4_lens, &extra4);
	if (!ret)
		ret = choose_family(l, cfg, SIEVE_XDP_V6, max_probes, cfg->v6_lens, &cfg->nr_v6_lens,
				    &extra6);
	if (ret || extra4 > SXDP_MAX_EXTRA_KEYS || extra6 > SXDP_MAX_EXTRA_KEYS - extra4)
		return -E2BIG;
	config_masks(cfg);
	cfg->entries = l->n;
	return 0;
}

/* Inserts @len into a family's probe lengths, keeping them longest first. */
static void insert_len(uint8_t *lens, uint8_t *nr, uint8_t len)
{
	unsigned int i = *nr;

	for (; i > 0 && lens[i - 1] < len; i--)
		lens[i] = lens[i - 1];
	lens[i] = len;
	(*nr)++;
}

/*
 * A live add keeps the probe lengths of the live maps: a new prefix
 * length gets a probe of its own while there is room, else goes to the
 * next probe length above it if that makes at most 2^SXDP_LIVE_EXPAND_BITS
 * keys.
 * Otherwise -E2BIG: the list needs a new plan (a rebuild).
 * A backend that deletes live (remove_live: the filter backend's cuckoo
 * filter) never gets a new length live: it would move the probe length
 * of prefixes already stored, and a later delete of one would then
 * remove keys it never added.
 */
#define SXDP_LIVE_EXPAND_BITS	6	/* 64 keys for one entry */

int sxdp_config_extend(struct sieve_xdp_config *cfg, const struct sxdp_keys *fresh)
{
	unsigned int max_probes = sxdp_max_probes(cfg);
	size_t i;

	for (i = 0; i < fresh->n; i++) {
		const struct sieve_xdp_key *k = &fresh->keys[i];
		bool v4 = k->family == SIEVE_XDP_V4;
		uint8_t *lens = v4 ? cfg->v4_lens : cfg->v6_lens;
		uint8_t *nr = v4 ? &cfg->nr_v4_lens : &cfg->nr_v6_lens;
		unsigned int target;

		cfg->kinds |= SIEVE_XDP_KIND_BIT(k->kind, k->family);
		if (k->kind != SIEVE_XDP_PREFIX || in_v4table(cfg, k))
			continue;
		target = sxdp_cpe_target(lens, *nr, k->prefix_len);
		if (target == k->prefix_len)
			continue;
		if (*nr < max_probes && !sxdp_backend_of(cfg->flags)->remove_live)
			insert_len(lens, nr, k->prefix_len);
		else if (!target || target - k->prefix_len > SXDP_LIVE_EXPAND_BITS)
			return -E2BIG;
	}
	config_masks(cfg);
	return 0;
}

/* The config of a list and the keys its maps hold; err says why not. */
int sxdp_plan_keys(const struct sxdp_keys *l, struct sieve_xdp_config *cfg,
		   struct sxdp_keys *keys, char *err, size_t errlen)
{
	int ret = sxdp_config_fill(cfg, l);

	if (!ret)
		ret = sxdp_expand(l, cfg, keys);
	if (!ret)
		cfg->keys = keys->n;
	if (ret == -E2BIG)
		snprintf(err, errlen, "with %u probe lengths per family the prefixes expand to more than %llu extra keys: allow more probes (attach --max-probes, at most %d)",
			 sxdp_max_probes(cfg), (unsigned long long)SXDP_MAX_EXTRA_KEYS,
			 SIEVE_XDP_MAX_PREFIX_LENS);
	else if (ret)
		snprintf(err, errlen, "expanding the prefixes: %s", strerror(-ret));
	return ret;
}
