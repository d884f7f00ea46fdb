/* SPDX-License-Identifier: GPL-2.0 */
/*
 * userspace/fleet: the fleet's lists in Redis, for the hosts that follow
 * them (the agent's userspace/agent/fleet.c) and for those that publish
 * (`sieve xdp block ... --fleet`). redis.c holds the data model (keys,
 * connecting, publishing, hiredis); rules.c the limits a host applies to
 * what it reads (sieve.conf's [fleet]: conf.h).
 *
 * sieve, the CLI, links none of this: hiredis is sieve-agent's, so that
 * a command starts as fast as ipset's. `sieve xdp block ... --fleet`
 * checks the command line, then execs
 *
 *	sieve-agent __publish CONFIG LIST OP EXPIRES ORIGIN ENTRY...
 *
 * OP the stream's word (sxdp_list_op_name()), EXPIRES Unix seconds, 0
 * never, or "keep" when no --ttl was given; each ENTRY as
 * sxdp_format_entry() writes it (userspace/agent/publish.c reads it).
 */
#ifndef SIEVE_FLEET_H
#define SIEVE_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "ops.h"

#define SFLEET_PUBLISH_CMD	"__publish"
/* Its EXPIRES without --ttl: an entry there keeps its expiry. */
#define SFLEET_PUBLISH_KEEP	"keep"

/*
 * redis.c. A connection to @f's server, authenticated (the password file
 * is read again each time); NULL with the reason in @err.
 */
struct redisContext;
struct redisContext *sfleet_redis_connect(const struct sconf_fleet_config *f, int timeout_ms,
					  char *err, size_t errlen);
/* "host:port" or "unix:path", for messages. */
const char *sfleet_redis_name(const struct sconf_fleet_config *f, char *buf, size_t len);
/* The keys of list @list: its blocklist or allowlist set, and its stream. */
void sfleet_redis_set_key(const char *list, bool allow, char *buf, size_t len);
void sfleet_redis_stream_key(const char *list, char *buf, size_t len);
/*
 * Publishes @keys as @op on @list (`sieve xdp ... --fleet`): per batch of
 * entries one MULTI/EXEC of the set's change and the stream's records, so
 * the two never disagree. @expires_at (block and allow only): Unix seconds,
 * 0 never, SFLEET_EXPIRES_KEEP none given. The re-ban rule of the local store
 * (store.c RE_BAN_EXPIRY), applied by Redis per entry: a member keeps the
 * later of its score and @expires_at (never is the latest), keeps its score
 * with SFLEET_EXPIRES_KEEP, and a member past its score counts as absent (a
 * new one gets @expires_at, never for SFLEET_EXPIRES_KEEP). Each stream
 * record carries the score its set then holds.
 */
#define SFLEET_EXPIRES_KEEP	(-1)
int sfleet_publish(const struct sconf_fleet_config *f, const char *list,
			 enum sxdp_list_op op, const struct sxdp_keys *keys, int64_t expires_at,
			 const char *origin, char *err, size_t errlen);

/*
 * rules.c. A sorted set's score as an expiry: false if not a number;
 * *@expired if at or before @now (then *@expires is @now), else *@expires
 * is Unix seconds rounded up, 0 for +inf (never), capped at 4e18.
 */
bool sfleet_parse_score(const char *s, int64_t now, int64_t *expires, bool *expired);
/*
 * Why @f's limits refuse the fleet's block (or allow, @allow) of @key, or
 * NULL if they take it: broader than broadest_block/broadest_allow for
 * its family, a block touching a never_block prefix, or an allow of what
 * is not a source or a prefix.
 */
const char *sfleet_refused(const struct sconf_fleet_config *f,
				 const struct sieve_xdp_key *key, bool allow);

#endif /* SIEVE_FLEET_H */
