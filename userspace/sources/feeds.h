/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Feeds fetched by URL (sieve.conf's [feed NAME]): one refresh is a
 * conditional GET (http.h), the body read in the feed's format as `sieve
 * xdp load` reads a file (userspace/xdp/feed.c), the rules below, then the
 * same atomic load of origin NAME the CLI does (sxdp_op_load). The agent
 * schedules the refreshes (userspace/agent/feeds.c).
 *
 * A refresh that fails or looks wrong changes nothing: enforcement stays
 * as the last good load left it (fail static). A download that failed,
 * was cut short, is an HTML page, holds a line that is no entry, has fewer
 * than min_entries entries or would remove more than max_shrink of the
 * origin's entries is refused, with its reason; a failed download never
 * unblocks anything.
 */
#ifndef SIEVE_SOURCES_FEEDS_H
#define SIEVE_SOURCES_FEEDS_H

#include <stdbool.h>
#include <stdint.h>

#include "conf.h"
#include "http.h"

/* The largest body a feed may have: ~10^7 entries of text. */
#define SSRC_FEED_MAX_BYTES	(256u << 20)

/* Why a refresh was refused: the metrics' reason label (ssrc_feed_refusal_name). */
enum ssrc_feed_refusal {
	SSRC_FEED_FETCH,	/* no body: HTTP status, timeout, refused, too big, cut short */
	SSRC_FEED_HTML,		/* an HTML page where the feed should be */
	SSRC_FEED_PARSE,	/* a line that is no entry in the feed's format */
	SSRC_FEED_MIN_ENTRIES,
	SSRC_FEED_MAX_SHRINK,
	SSRC_FEED_LOAD,		/* the store or the maps refused the load */
	SSRC_FEED_NR_REFUSALS,
};

const char *ssrc_feed_refusal_name(enum ssrc_feed_refusal r);

/*
 * The rules on a download of @fetched entries for an origin holding
 * @held: true if it may be loaded, else false and *@why. Refused: fewer
 * than min_entries; or @held > 0 and more than max_shrink of @held would
 * go (held - fetched > max_shrink * held; integers, no rounding).
 */
bool ssrc_feed_acceptable(const struct sconf_feed_config *f, uint64_t held, uint64_t fetched,
			  enum ssrc_feed_refusal *why);

/*
 * What a feed keeps between refreshes (the agent's feeds thread owns it):
 * the validators and a hash of the body of the last load, so that a
 * server that says nothing changed (304), or sends the same body again,
 * costs no load. Zeroed: the first refresh fetches unconditionally.
 */
struct ssrc_feed_state {
	char etag[SSRC_HTTP_ETAG_MAX];
	int64_t modified;
	uint64_t body_hash;
	bool loaded;		/* body_hash is a load's */
};

enum ssrc_feed_outcome { SSRC_FEED_LOADED, SSRC_FEED_UNCHANGED, SSRC_FEED_REFUSED };

struct ssrc_feed_result {
	enum ssrc_feed_outcome outcome;
	enum ssrc_feed_refusal reason;	/* REFUSED */
	long http_status;		/* 0: file://, or no response */
	uint64_t entries;		/* LOADED: the feed's; REFUSED: the download's (0: none) */
	uint64_t held;			/* the origin's entries before */
	size_t added, dropped;		/* LOADED */
	size_t unreached;		/* LOADED: interfaces of the list not enforcing it */
	char msg[512];			/* REFUSED: why, one line; LOADED: unreached ones */
};

/*
 * One refresh of @f into @s: the result in @r (every outcome is a result).
 * @cancel (may be NULL): set by another thread, the fetch in flight stops
 * (refused, fetch).
 */
void ssrc_feed_refresh(struct sxdp_store *s, const struct sconf_feed_config *f,
		       struct ssrc_feed_state *st, const atomic_bool *cancel,
		       struct ssrc_feed_result *r);

#endif /* SIEVE_SOURCES_FEEDS_H */
