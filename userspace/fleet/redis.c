// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet's Redis side (hiredis): connecting, and publishing changes.
 *
 * The data model, list L (README "Fleet"), so that any producer can
 * publish with plain redis-cli:
 *
 *   sieve:{L}:block   sorted set: member = entry text, score = expiry in
 *                     Unix seconds, or +inf for never
 *   sieve:{L}:allow   the allowlist, the same way
 *   sieve:{L}:log     stream, one record per change: op (block, unblock,
 *                     allow, disallow), entry, expires (block, allow),
 *                     origin (who published); capped with MAXLEN ~
 *
 * The set is the state, the stream the changes since a point: a host
 * reads the stream's last id, then the whole set, then the stream from
 * that id. One change is one MULTI/EXEC of both, so they never disagree.
 * The braces are a Redis Cluster hash tag: a list's keys share a slot, so
 * the transaction is allowed there too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <hiredis/hiredis.h>

#include "fleet.h"

void sfleet_redis_set_key(const char *list, bool allow, char *buf, size_t len)
{
	snprintf(buf, len, "sieve:{%s}:%s", list, allow ? "allow" : "block");
}

void sfleet_redis_stream_key(const char *list, char *buf, size_t len)
{
	snprintf(buf, len, "sieve:{%s}:log", list);
}

const char *sfleet_redis_name(const struct sconf_fleet_config *f, char *buf, size_t len)
{
	if (f->unix_path[0])
		snprintf(buf, len, "unix:%s", f->unix_path);
	else
		snprintf(buf, len, strchr(f->host, ':') ? "[%s]:%u" : "%s:%u", f->host, f->port);
	return buf;
}

static int auth(redisContext *rc, const struct sconf_fleet_config *f, char *err, size_t errlen)
{
	const char *argv[3] = { "AUTH" };
	char password[512];
	redisReply *r;
	int argc = 1, ret = 0;

	if (!f->password_file[0])
		return 0;
	ret = sconf_read_secret("password file", f->password_file, password, sizeof(password), err,
				 errlen);
	if (ret)
		return ret;
	if (f->user[0])
		argv[argc++] = f->user;
	argv[argc++] = password;
	r = redisCommandArgv(rc, argc, argv, NULL);
	memset(password, 0, sizeof(password));
	if (!r) {
		snprintf(err, errlen, "AUTH: %s", rc->errstr);
		return -EIO;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		/* Redis's own words: WRONGPASS, NOPERM, ... */
		snprintf(err, errlen, "authentication failed: %s", r->str);
		ret = -EACCES;
	}
	freeReplyObject(r);
	return ret;
}

redisContext *sfleet_redis_connect(const struct sconf_fleet_config *f, int timeout_ms,
				   char *err, size_t errlen)
{
	struct timeval tv = { timeout_ms / 1000, timeout_ms % 1000 * 1000 };
	redisContext *rc;

	rc = f->unix_path[0] ? redisConnectUnixWithTimeout(f->unix_path, tv) :
			       redisConnectWithTimeout(f->host, f->port, tv);
	if (!rc) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (rc->err) {
		snprintf(err, errlen, "%s", rc->errstr);
		goto fail;
	}
	/* Reads too: a partition shows as a timeout, not a hang. */
	if (redisSetTimeout(rc, tv) || (!f->unix_path[0] && redisEnableKeepAlive(rc))) {
		snprintf(err, errlen, "setting up the socket: %s", rc->errstr);
		goto fail;
	}
	if (auth(rc, f, err, errlen))
		goto fail;
	return rc;
fail:
	redisFree(rc);
	return NULL;
}

/* ---- publishing ---- */

/* Changes per MULTI/EXEC: bounds what one transaction holds Redis for. */
#define PUBLISH_BATCH	1000

struct publish {
	redisContext *rc;
	const char *list, *origin;
	enum sxdp_list_op op;
	char set[128], stream[128], score[32], now[24], maxlen[24];
	size_t queued;		/* replies owed */
};

static int append(struct publish *p, int argc, const char **argv)
{
	if (redisAppendCommandArgv(p->rc, argc, argv, NULL))
		return -ENOMEM;
	p->queued++;
	return 0;
}

/*
 * A block or an allow of one entry, the re-ban rule in one script so that
 * no other change comes between the set's score and the record that says it
 * (fleet.h, sfleet_publish()). KEYS: the set, the stream. ARGV: the
 * entry, its expiry (Unix seconds, +inf, or keep), now, op, origin, maxlen.
 * A member at or past its score is no entry (followers skip it): a new one.
 * ZSCORE says +inf as "inf": the record says "+inf", as it always has.
 */
static const char add_script[] =
	"local set, entry, exp = KEYS[1], ARGV[1], ARGV[2]\n"
	"local old = redis.call('ZSCORE', set, entry)\n"
	"local n = old and tonumber(old)\n"
	"if not (old == 'inf' or (n and n > tonumber(ARGV[3]))) then\n"
	"  redis.call('ZADD', set, exp == 'keep' and '+inf' or exp, entry)\n"
	"elseif exp ~= 'keep' then\n"
	"  redis.call('ZADD', set, 'GT', exp, entry)\n"
	"end\n"
	"local score = redis.call('ZSCORE', set, entry)\n"
	"if score == 'inf' then score = '+inf' end\n"
	"return redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'op', ARGV[4],\n"
	"  'entry', entry, 'expires', score, 'origin', ARGV[5])\n";

/* The set's change and the stream's record of one entry. */
static int append_entry(struct publish *p, const char *entry)
{
	const char *add[] = { "EVAL", add_script, "2", p->set, p->stream, entry, p->score,
			      p->now, sxdp_list_op_name(p->op), p->origin, p->maxlen };
	const char *change[] = { "ZREM", p->set, entry };
	const char *record[] = { "XADD", p->stream, "MAXLEN", "~", p->maxlen, "*",
				 "op", sxdp_list_op_name(p->op), "entry", entry,
				 "origin", p->origin };
	int ret;

	if (sxdp_list_op_adds(p->op))
		return append(p, sizeof(add) / sizeof(*add), add);
	ret = append(p, sizeof(change) / sizeof(*change), change);
	return ret ? ret : append(p, sizeof(record) / sizeof(*record), record);
}

/* Reads the replies owed; the last is EXEC's, whose elements say how each went. */
static int collect(struct publish *p, char *err, size_t errlen)
{
	redisReply *r = NULL;
	size_t i;
	int ret = 0;

	for (; p->queued; p->queued--) {
		if (r)
			freeReplyObject(r);
		r = NULL;
		if (redisGetReply(p->rc, (void **)&r) != REDIS_OK) {
			snprintf(err, errlen, "%s", p->rc->errstr);
			return -EIO;
		}
		if (r->type == REDIS_REPLY_ERROR && !ret) {
			snprintf(err, errlen, "%s", r->str);
			ret = -EIO;
		}
	}
	if (!ret && r && r->type != REDIS_REPLY_ARRAY) {
		snprintf(err, errlen, "the transaction was not run");
		ret = -EIO;
	}
	for (i = 0; !ret && r && i < r->elements; i++) {
		if (r->element[i]->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "%s", r->element[i]->str);
			ret = -EIO;
		}
	}
	if (r)
		freeReplyObject(r);
	return ret;
}

int sfleet_publish(const struct sconf_fleet_config *f, const char *list,
			 enum sxdp_list_op op, const struct sxdp_keys *keys, int64_t expires_at,
			 const char *origin, char *err, size_t errlen)
{
	struct publish p = { .list = list, .origin = origin, .op = op };
	char name[300], entry[128], why[512] = "";
	const char *multi[] = { "MULTI" }, *exec[] = { "EXEC" };
	size_t i, end;
	int ret = 0;

	p.rc = sfleet_redis_connect(f, 5000, why, sizeof(why));
	if (!p.rc) {
		snprintf(err, errlen, "Redis at %s: %s", sfleet_redis_name(f, name, sizeof(name)),
			 why);
		return -EIO;
	}
	sfleet_redis_set_key(list, sxdp_list_op_allows(op), p.set, sizeof(p.set));
	sfleet_redis_stream_key(list, p.stream, sizeof(p.stream));
	snprintf(p.maxlen, sizeof(p.maxlen), "%" PRIu64, f->stream_maxlen);
	if (expires_at == SFLEET_EXPIRES_KEEP)
		snprintf(p.score, sizeof(p.score), "keep");
	else if (expires_at)
		snprintf(p.score, sizeof(p.score), "%" PRId64, expires_at);
	else
		snprintf(p.score, sizeof(p.score), "+inf");
	snprintf(p.now, sizeof(p.now), "%lld", (long long)time(NULL));
	for (i = 0; !ret && i < keys->n; i = end) {
		end = i + PUBLISH_BATCH < keys->n ? i + PUBLISH_BATCH : keys->n;
		ret = append(&p, 1, multi);
		for (; !ret && i < end; i++) {
			sxdp_format_entry(&keys->keys[i], entry, sizeof(entry));
			ret = append_entry(&p, entry);
		}
		if (!ret)
			ret = append(&p, 1, exec);
		if (!ret)
			ret = collect(&p, why, sizeof(why));
		else
			snprintf(why, sizeof(why), "out of memory");
	}
	if (ret)
		snprintf(err, errlen, "Redis at %s: %s", sfleet_redis_name(f, name, sizeof(name)),
			 why);
	redisFree(p.rc);
	return ret;
}
