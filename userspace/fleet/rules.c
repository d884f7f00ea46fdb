// SPDX-License-Identifier: GPL-2.0
/*
 * What the fleet follower takes from Redis, judged without Redis: a
 * member's score as an expiry, and whether this host lets the fleet block
 * or allow an entry at all (the [fleet] limits of sieve.conf(5)). Apart
 * from fleet.c so that the unit suite runs them under UBSan.
 *
 * The limits exist because whoever can write to the fleet's Redis would
 * otherwise control every host: an allow of 0.0.0.0/1 and 128.0.0.0/1
 * exempts everything from every local block, a block of them black-holes
 * the host. An entry broader than the list's broadest prefix for its
 * family, or a block touching a never_block prefix (the host's management
 * networks), is refused: counted and logged like garbage, never stored.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "fleet.h"

/* Beyond any date sieve stores (year 10^11): a cap, not an error. */
#define SCORE_MAX	4e18

bool sfleet_parse_score(const char *s, int64_t now, int64_t *expires, bool *expired)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || isnan(v))
		return false;
	/*
	 * Decided on the double: a huge negative, -inf or anything already
	 * past never reaches the conversion (undefined out of int64_t's range).
	 */
	*expired = v <= (double)now;
	if (*expired)
		*expires = now;
	else if (isinf(v))
		*expires = 0;
	else
		*expires = v > SCORE_MAX ? (int64_t)SCORE_MAX : (int64_t)ceil(v);
	return true;
}

/* Whether the first @bits bits of @a and @b are equal (addresses in network order). */
static bool same_bits(const void *a, const void *b, unsigned int bits)
{
	const uint8_t *x = a, *y = b;
	unsigned int i;

	for (i = 0; i < bits / 8; i++)
		if (x[i] != y[i])
			return false;
	return bits % 8 == 0 || !((x[i] ^ y[i]) & (uint8_t)(0xff << (8 - bits % 8)));
}

/* Whether address range @addr/@len and prefix @p share an address (one holds the other). */
static bool overlaps(const __be32 *addr, unsigned int len, const struct sieve_xdp_key *p)
{
	return same_bits(addr, p->saddr, len < p->prefix_len ? len : p->prefix_len);
}

/* Whether block @key touches one of the prefixes the fleet may never block. */
static bool never_blocked(const struct sconf_fleet_config *f, const struct sieve_xdp_key *key)
{
	unsigned int i, full = key->family == SIEVE_XDP_V6 ? 128 : 32;

	for (i = 0; i < f->nr_never_block; i++) {
		const struct sieve_xdp_key *p = &f->never_block[i];

		if (p->family != key->family)
			continue;
		/* A source range; a service's destination; a flow's two endpoints. */
		if (key->kind == SIEVE_XDP_SRC || key->kind == SIEVE_XDP_PREFIX) {
			if (overlaps(key->saddr, key->prefix_len, p))
				return true;
		} else if (overlaps(key->daddr, full, p) ||
			   (key->kind == SIEVE_XDP_FLOW && overlaps(key->saddr, full, p))) {
			return true;
		}
	}
	return false;
}

const char *sfleet_refused(const struct sconf_fleet_config *f,
				 const struct sieve_xdp_key *key, bool allow)
{
	unsigned int fam = key->family == SIEVE_XDP_V6;
	bool prefix = key->kind == SIEVE_XDP_SRC || key->kind == SIEVE_XDP_PREFIX;

	/* The allowlist holds sources and prefixes only (its maps refuse the rest). */
	if (allow && !prefix)
		return "an allow of a service or a flow";
	if (prefix && key->prefix_len < (allow ? f->broadest_allow : f->broadest_block)[fam])
		return allow ? "an allow broader than broadest_allow" :
			       "a block broader than broadest_block";
	if (!allow && never_blocked(f, key))
		return "a block touching never_block";
	return NULL;
}
