/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A CrowdSec Local API's decisions as list changes (crowdsec.c): one reply
 * of GET /v1/decisions/stream read with json-c into, per CrowdSec origin,
 * the keys to block (each with its expiry) and the keys whose decision
 * went. The agent fetches the replies and applies the changes
 * (userspace/agent/crowdsec.c); nothing here touches the store, the maps
 * or the network, so every hostile reply can be tried in the unit suite.
 *
 * The reply: {"new": [DECISION...] | null, "deleted": [DECISION...] | null},
 * a DECISION {"value": "1.2.3.4", "scope": "Ip", "type": "ban", "origin":
 * "cscli", "duration": "3h59m58.5s", ...}. Its duration is Go's
 * (time.Duration.String()): what is left of it at the reply's time; it is
 * negative under "deleted".
 *
 * What is taken: scopes Ip (an address) and Range (a prefix, or an
 * address), the types and origins [crowdsec] names. Everything else is a
 * skip of one reason, counted by origin; a reply that is not such an
 * object is refused whole (-EBADMSG), nothing taken of it.
 */
#ifndef SIEVE_SOURCES_CROWDSEC_H
#define SIEVE_SOURCES_CROWDSEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "xdp.h"

/* The sieve origin of CrowdSec origin X is "crowdsec/X". */
#define SCS_ORIGIN_PREFIX	"crowdsec/"
/* Distinct CrowdSec origins a reply may carry; decisions of more are skipped. */
#define SCS_MAX_ORIGINS		32
/* The longest decision taken: a century (cscli takes any Go duration). */
#define SCS_DURATION_MAX_S	(100LL * 365 * 24 * 3600)
/* A value longer than this is no address (the longest IPv6 prefix is 43). */
#define SCS_VALUE_MAX		64
/* The body's bound: 10^6 decisions are about 145 MB (14.5 MB a 10^5, measured). */
#define SCS_BODY_MAX		(256UL << 20)

/* Why a decision was not taken (the metrics' reason label: scs_skip_name). */
enum scs_skip {
	SCS_SKIP_MALFORMED,	/* not an object, or a field missing or not a string */
	SCS_SKIP_NOT_ADDRESS,	/* its value is not an address (a prefix for Range) */
	SCS_SKIP_DURATION,	/* not a duration, or out of range */
	SCS_SKIP_EXPIRED,	/* a new decision with nothing left of it */
	SCS_SKIP_SCOPE,		/* a scope [crowdsec] does not take (Country, AS, ...) */
	SCS_SKIP_TYPE,		/* a type it does not take (captcha, ...) */
	SCS_SKIP_ORIGIN,	/* an origin it does not take, or one too many */
	SCS_NR_SKIPS,
};

const char *scs_skip_name(enum scs_skip why);

/* One CrowdSec origin's changes in a reply. */
struct scs_changes {
	char origin[SCONF_CS_WORD_MAX + 1];	/* CrowdSec's word: "cscli" */
	struct sxdp_keys block;
	int64_t *expires;			/* per key of @block, Unix seconds */
	size_t expires_cap;
	struct sxdp_keys unblock;
	uint64_t skipped[SCS_NR_SKIPS];
};

/* A reply read. */
struct scs_reply {
	struct scs_changes origins[SCS_MAX_ORIGINS];
	unsigned int nr_origins;
	/* Skips of decisions with no origin to count them under (an origin not a word). */
	uint64_t skipped[SCS_NR_SKIPS];
	/* The first skip of each reason, for the log: "value 'x' (origin y)". */
	char first[SCS_NR_SKIPS][128];
};

/*
 * Reads @body (@len bytes, a NUL inside it is malformed) as of Unix time
 * @now into @r (zeroed first; scs_reply_free() it whatever the result)
 * under @cfg's scopes, types and origins. 0, -EBADMSG with @err if the
 * body is not the stream's object (not JSON, not an object, "new" or
 * "deleted" neither an array nor null), -ENOMEM.
 */
int scs_reply_parse(const char *body, size_t len, int64_t now,
		    const struct sconf_crowdsec_config *cfg, struct scs_reply *r, char *err,
		    size_t errlen);
void scs_reply_free(struct scs_reply *r);

/*
 * A Go duration ("1h2m3.5s", "-3.2s", "150ms", "0s") in whole seconds,
 * rounded up (a ban never ends early): 0, or -EINVAL if @s is not one or
 * its magnitude passes SCS_DURATION_MAX_S.
 */
int scs_parse_duration(const char *s, int64_t *seconds);

/* Whether [crowdsec] takes origin @origin (a word). */
bool scs_origin_taken(const struct sconf_crowdsec_config *cfg, const char *origin);

#endif /* SIEVE_SOURCES_CROWDSEC_H */
