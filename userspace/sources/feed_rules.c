// SPDX-License-Identifier: GPL-2.0
/*
 * The rules a feed's download must pass before it is loaded (feeds.h),
 * apart from the fetching and loading so that the unit suite checks them
 * alone (tests/unit/feeds_test.c).
 */
#include "feeds.h"

const char *ssrc_feed_refusal_name(enum ssrc_feed_refusal r)
{
	static const char *const names[SSRC_FEED_NR_REFUSALS] = {
		[SSRC_FEED_FETCH] = "fetch", [SSRC_FEED_HTML] = "html",
		[SSRC_FEED_PARSE] = "parse", [SSRC_FEED_MIN_ENTRIES] = "min_entries",
		[SSRC_FEED_MAX_SHRINK] = "max_shrink", [SSRC_FEED_LOAD] = "load",
	};

	return (unsigned int)r < SSRC_FEED_NR_REFUSALS ? names[r] : "unknown";
}

bool ssrc_feed_acceptable(const struct sconf_feed_config *f, uint64_t held, uint64_t fetched,
			  enum ssrc_feed_refusal *why)
{
	if (fetched < f->min_entries) {
		*why = SSRC_FEED_MIN_ENTRIES;
		return false;
	}
	/*
	 * (held - fetched) / held > ppm / 10^6, in integers: held is at most
	 * the store's entries (< 2^40), ppm at most 10^6, so neither side
	 * overflows 64 bits.
	 */
	if (held > fetched && (held - fetched) * 1000000 > (uint64_t)f->max_shrink_ppm * held) {
		*why = SSRC_FEED_MAX_SHRINK;
		return false;
	}
	return true;
}
