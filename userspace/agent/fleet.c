// SPDX-License-Identifier: GPL-2.0
/*
 * Following the fleet's lists (redis.c has the data model). One thread,
 * one Redis connection and one store connection of its own:
 *
 *   session: connect (AUTH), then per list a resync: the stream's last id,
 *   the whole sets (read_set: ZRANGE by rank, ZSCAN where that fails), the
 *   store's entries of origin "fleet" made equal to them (other origins are
 *   never touched); then one XREAD BLOCK over every list's stream from the
 *   ids read before the scans. Changes between the id and the scan come
 *   again from the stream: applying a change twice does nothing more.
 *
 *   what Redis holds: a key in the allow set is allowed; a key in the block
 *   set only is blocked (a key in both is allowed, as a host holding both
 *   would enforce it). The store cannot hold a key on both lists, so a key
 *   that moves between them is first taken off the side it leaves: the
 *   follower converges to that function of Redis's sets for every order of
 *   changes (a resync removes before it adds; a live allow first removes
 *   the fleet's block of the key; a live disallow asks Redis whether the
 *   key is blocked too, and blocks it then).
 *
 *   change: consecutive records of one kind are applied as one operation:
 *   adds go live into the maps, removals make one rebuild (ops.c).
 *
 *   limits: an entry this host's [fleet] limits refuse (too broad, or a
 *   block of its management networks) is skipped like garbage.
 *
 *   stop: a stop (or a reload) during a resync abandons it before anything
 *   is stored: a set is stored only when its scan ran to its end.
 *
 *   loss (Redis down, restarted, a partition seen as a read timeout, a
 *   store error): the session ends; the maps keep what they hold; the
 *   next session, after a backoff doubling from 100 ms to retry_max (a
 *   random half to all of it), starts with a full resync. The stream trimmed past the last applied id
 *   (max-deleted-entry-id above it) is a resync too.
 *
 * Logging says each state once: connected, lost (with the reason), and
 * each kind of garbage once per list.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <hiredis/hiredis.h>

#include "agent.h"
#include "fleet.h"
#include "ops.h"

#define FLEET_ORIGIN		"fleet"
/* Longer is no entry sieve writes (a flow of two bracketed v6 endpoints is < 100). */
#define ENTRY_MAX		127
#define XREAD_COUNT		1000
#define XREAD_BLOCK_MS		1000
#define STR_(x)			#x
#define STR(x)			STR_(x)
/* A read that takes longer than this is a lost connection (a partition). */
#define READ_TIMEOUT_MS		(XREAD_BLOCK_MS + 4000)
#define SCAN_COUNT		"10000"
/*
 * A set read by rank: RANGE_COUNT members a ZRANGE (Redis serves 10^5 in
 * about 25 ms, a ZSCAN page of 10^4 takes as long: ZSCAN costs Redis 12
 * times more a member), each starting RANGE_OVERLAP before the previous
 * one's end, where that one's last member must be found again.
 */
#define RANGE_COUNT		100000
#define RANGE_OVERLAP		1000
/*
 * A ZSCAN that does not end (a hostile or broken server) is a lost
 * connection once it took more pages than this plus one per 100 members
 * of the set's size: a real one visits its table in about size/10000.
 */
#define SCAN_PAGES_MIN		1000
/* A size hint larger than this is not trusted with one allocation. */
#define RESERVE_MAX		(1U << 20)
#define BACKOFF_MIN_MS		100
/* How often an idle follower checks that its streams were not cut or replaced. */
#define CHECK_EVERY_MS		5000

/* What the log last said (set_state). */
enum fleet_state { FLEET_STARTING, FLEET_CONNECTED, FLEET_LOST, FLEET_REFUSED };

struct fleet_list {
	const char *name;
	char set[2][128];		/* blocklist, allowlist */
	char stream[128];
	char last_id[48];		/* the last stream id applied */
	bool stream_ok;			/* a stream, or no key yet */
	bool warned[SAGENT_NR_SKIPS];
	bool warned_empty;		/* Redis had nothing of it at all */
	unsigned int rescanned;		/* sets the last resync read by ZSCAN (range_set) */
	struct sagent_fleet_list_stats *st;
};

struct sagent_fleet {
	struct sconf_fleet_config cfg;		/* a copy: a reload may change the agent's */
	char state_dir[4096];
	enum sxdp_store_sync store_sync;	/* [store] sync: the agent's own connection's */
	char redis_name[300];
	struct sagent_fleet_stats *stats;
	struct sxdp_store *store;
	struct fleet_list lists[SCONF_MAX_FLEET_LISTS];
	pthread_t thread;
	/* Guards @rc's socket against stop's shutdown(), @stop, and @wake. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	redisContext *rc;
	enum fleet_state state;			/* the last logged */
	int64_t last_check_ns;
};

/* ---- small things ---- */

static bool stopping(struct sagent_fleet *f)
{
	bool stop;

	pthread_mutex_lock(&f->lock);
	stop = f->stop;
	pthread_mutex_unlock(&f->lock);
	return stop;
}

/*
 * The states logged: once each time the state changes, with the reason of
 * the first failure, not at every retry (the reason of a lost connection
 * changes as it is retried: closed, refused, timed out).
 */
static void __attribute__((format(printf, 4, 5)))
set_state(struct sagent_fleet *f, enum fleet_state state, int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (state == f->state)
		return;
	f->state = state;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sagent_log(level, "fleet: %s", line);
}

static void skipped(struct fleet_list *l, enum sagent_fleet_skip why, const char *what)
{
	static const char *const words[SAGENT_NR_SKIPS] = {
		[SAGENT_SKIP_UNPARSEABLE] = "unparseable", [SAGENT_SKIP_WRONG_TYPE] = "of the wrong type",
		[SAGENT_SKIP_TOO_LONG] = "too long",
		[SAGENT_SKIP_REFUSED] = "refused by this host's [fleet] limits",
	};

	atomic_fetch_add(&l->st->skipped[why], 1);
	if (l->warned[why])
		return;
	l->warned[why] = true;
	sagent_log(SAGENT_WARNING, "fleet: list %s: skipping what is %s (%s); counted in "
		   "sieve_fleet_skipped_total, logged once", l->name, words[why], what);
}

/* A stream id "MS-SEQ"; false if it is not one. */
static bool parse_id(const char *s, uint64_t *ms, uint64_t *seq)
{
	char *end;

	errno = 0;
	*ms = strtoull(s, &end, 10);
	if (errno || end == s || *end != '-')
		return false;
	s = end + 1;
	*seq = strtoull(s, &end, 10);
	return !errno && end != s && !*end;
}

/* Whether id @a comes after id @b. */
static bool id_after(const char *a, const char *b)
{
	uint64_t ams, aseq, bms, bseq;

	if (!parse_id(a, &ams, &aseq) || !parse_id(b, &bms, &bseq))
		return false;
	return ams > bms || (ams == bms && aseq > bseq);
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static redisReply *command(struct sagent_fleet *f, int argc, const char **argv)
{
	return redisCommandArgv(f->rc, argc, argv, NULL);
}

/* ---- resync ---- */

/* What a scan of one set gathered. */
struct gathered {
	struct sxdp_keys keys;
	int64_t *expires;
	size_t cap;
};

/* Room for @n more: one allocation for a whole set whose size is known. */
static int gather_reserve(struct gathered *g, size_t n)
{
	struct sieve_xdp_key *keys;
	int64_t *e;

	if (g->keys.n + n <= g->cap || n > SIZE_MAX / 2 / sizeof(*keys))
		return 0;
	n += g->keys.n;
	keys = realloc(g->keys.keys, n * sizeof(*keys));
	if (keys)
		g->keys.keys = keys;
	e = keys ? realloc(g->expires, n * sizeof(*e)) : NULL;
	if (!e)
		return -ENOMEM;
	g->expires = e;
	g->keys.cap = g->cap = n;
	return 0;
}

static int gather(struct gathered *g, const struct sieve_xdp_key *key, int64_t expires)
{
	if (g->keys.n == g->cap && gather_reserve(g, g->cap ? g->cap : 1024))
		return -ENOMEM;
	if (sxdp_keys_add(&g->keys, key))
		return -ENOMEM;
	g->expires[g->keys.n - 1] = expires;
	return 0;
}

static void gathered_free(struct gathered *g)
{
	sxdp_keys_free(&g->keys);
	free(g->expires);
}

/* Whether this host's limits take the fleet's @key (else skipped and counted). */
static bool within_limits(struct sagent_fleet *f, struct fleet_list *l,
			  const struct sieve_xdp_key *key, bool allow, const char *text)
{
	const char *why = sfleet_refused(&f->cfg, key, allow);
	char what[256];

	if (!why)
		return true;
	snprintf(what, sizeof(what), "%s: %s", why, text);
	skipped(l, SAGENT_SKIP_REFUSED, what);
	return false;
}

/* A page's member/score pairs from pair @from on into @g; garbage is skipped. */
static int gather_page(struct sagent_fleet *f, struct fleet_list *l, bool allow,
		       const redisReply *page, size_t from, int64_t now, struct gathered *g)
{
	struct sieve_xdp_key key;
	const char *why;
	int64_t expires;
	bool expired;
	size_t i;

	for (i = 2 * from; i + 1 < page->elements; i += 2) {
		const redisReply *m = page->element[i], *sc = page->element[i + 1];

		if (m->type != REDIS_REPLY_STRING || sc->type != REDIS_REPLY_STRING) {
			skipped(l, SAGENT_SKIP_UNPARSEABLE, "a member that is not text");
			continue;
		}
		if (m->len > ENTRY_MAX) {
			skipped(l, SAGENT_SKIP_TOO_LONG, "a member longer than 127 bytes");
			continue;
		}
		if (strlen(m->str) != m->len || sxdp_parse_entry(m->str, &key, &why) ||
		    !sfleet_parse_score(sc->str, now, &expires, &expired)) {
			skipped(l, SAGENT_SKIP_UNPARSEABLE, m->str);
			continue;
		}
		if (!within_limits(f, l, &key, allow, m->str))
			continue;
		if (!expired && gather(g, &key, expires))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The whole set of side @allow into @g by ZSCAN, @card its size (a hint).
 * 1 if the key is not a sorted set (skipped: the store keeps what it had),
 * 0, or -errno with @err: -EINTR if the agent stops before the scan's end
 * (what was read is no set).
 */
static int scan_set(struct sagent_fleet *f, struct fleet_list *l, bool allow, uint64_t card,
		    struct gathered *g, char *err, size_t errlen)
{
	const char *key = l->set[allow];
	const char *argv[] = { "ZSCAN", key, "0", "COUNT", SCAN_COUNT };
	char cursor[32] = "0";
	int64_t now = time(NULL);
	uint64_t pages = 0, max_pages = SCAN_PAGES_MIN + card / 100;
	redisReply *r;
	int ret = 0;

	do {
		argv[2] = cursor;
		r = command(f, 5, argv);
		if (!r) {
			snprintf(err, errlen, "%s", f->rc->errstr);
			return -EIO;
		}
		if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "WRONGTYPE", 9)) {
			skipped(l, SAGENT_SKIP_WRONG_TYPE, key);
			ret = 1;
		} else if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
			   r->element[0]->type != REDIS_REPLY_STRING ||
			   r->element[1]->type != REDIS_REPLY_ARRAY) {
			snprintf(err, errlen, "ZSCAN %s: %s", key,
				 r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected reply");
			ret = -EIO;
		} else if (++pages > max_pages) {
			snprintf(err, errlen, "ZSCAN %s: no end after %" PRIu64 " pages", key,
				 pages);
			ret = -EIO;
		} else {
			snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
			ret = gather_page(f, l, allow, r->element[1], 0, now, g);
			if (ret)
				snprintf(err, errlen, "out of memory");
		}
		freeReplyObject(r);
		if (!ret && strcmp(cursor, "0") && stopping(f)) {
			snprintf(err, errlen, "stopping");
			ret = -EINTR;
		}
	} while (!ret && strcmp(cursor, "0"));
	return ret;
}

/* The last member/score pair of a full page, looked for in the next one. */
struct anchor {
	char *member, *score;
	size_t mlen, slen;
};

static void anchor_free(struct anchor *a)
{
	free(a->member);
	free(a->score);
	memset(a, 0, sizeof(*a));
}

/* @a becomes @page's last pair; false if it is no pair of strings (or no memory). */
static bool anchor_set(struct anchor *a, const redisReply *page)
{
	const redisReply *m = page->element[page->elements - 2];
	const redisReply *sc = page->element[page->elements - 1];

	anchor_free(a);
	if (m->type != REDIS_REPLY_STRING || sc->type != REDIS_REPLY_STRING)
		return false;
	a->member = malloc(m->len + 1);
	a->score = malloc(sc->len + 1);
	if (!a->member || !a->score) {
		anchor_free(a);
		return false;
	}
	memcpy(a->member, m->str, m->len + 1);
	memcpy(a->score, sc->str, sc->len + 1);
	a->mlen = m->len;
	a->slen = sc->len;
	return true;
}

/* The pair after @a in @page, or 0 if @page does not hold @a. */
static size_t anchor_after(const struct anchor *a, const redisReply *page)
{
	size_t i;

	for (i = 0; i + 1 < page->elements; i += 2) {
		const redisReply *m = page->element[i], *sc = page->element[i + 1];

		if (m->type == REDIS_REPLY_STRING && sc->type == REDIS_REPLY_STRING &&
		    m->len == a->mlen && sc->len == a->slen && !memcmp(m->str, a->member, a->mlen) &&
		    !memcmp(sc->str, a->score, a->slen))
			return i / 2 + 1;
	}
	return 0;
}

/* Sends the ZRANGE page of @key from rank @start; its reply is read later. */
static int range_ask(struct sagent_fleet *f, const char *key, uint64_t start, char *err,
		     size_t errlen)
{
	char first[24], last[24];
	const char *argv[] = { "ZRANGE", key, first, last, "WITHSCORES" };
	int done = 0;

	snprintf(first, sizeof(first), "%" PRIu64, start);
	snprintf(last, sizeof(last), "%" PRIu64, start + RANGE_COUNT - 1);
	if (redisAppendCommandArgv(f->rc, 5, argv, NULL) != REDIS_OK)
		done = -1;
	while (!done)
		if (redisBufferWrite(f->rc, &done) != REDIS_OK)
			done = -1;
	if (done > 0)
		return 0;
	snprintf(err, errlen, "%s", f->rc->errstr);
	return -EIO;
}

/*
 * One page @r (the @index-th, from 0) of range_set into @g: 0, 1 if the
 * key is not a sorted set, 2 if the page is longer than asked or (after
 * the first) does not hold @a, -errno with @err. A page as long as asked
 * leaves its last pair in @a.
 */
static int range_page(struct sagent_fleet *f, struct fleet_list *l, bool allow,
		      const redisReply *r, uint64_t index, struct anchor *a, int64_t now,
		      struct gathered *g, char *err, size_t errlen)
{
	const char *key = l->set[allow];
	size_t from = 0;

	if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "WRONGTYPE", 9)) {
		skipped(l, SAGENT_SKIP_WRONG_TYPE, key);
		return 1;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2) {
		snprintf(err, errlen, "ZRANGE %s: %s", key,
			 r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected reply");
		return -EIO;
	}
	/* Longer than asked, or the anchor gone. */
	if (r->elements > 2 * RANGE_COUNT || (index && !(from = anchor_after(a, r))))
		return 2;
	if (gather_page(f, l, allow, r, from, now, g)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (r->elements == 2 * RANGE_COUNT && !anchor_set(a, r))
		return 2;
	return 0;
}

/*
 * The whole set of side @allow into @g by rank, as scan_set (its returns),
 * or 2: no whole set that way, @g emptied (scan it then).
 *
 * Pages by rank miss members when the set changes between them (a removal
 * before a page's start moves a member from the next page into this one's
 * range, read already), so each page starts RANGE_OVERLAP before the end of
 * the previous, which must hold that one's last member and score again
 * (the anchor). A page read at once is the set's order at that moment; one
 * holding the anchor holds every member after it up to its end. So every
 * member that was there throughout and kept its score is read, whatever is
 * added or removed meanwhile (ZREMRANGEBYSCORE included): changes of a
 * member's score come from the stream (blocked again with a new expiry).
 * An anchor not found again (removed, or moved past the overlap), a page
 * longer than asked, or more pages than the set's size asks (a hostile
 * server's endless pages): 2, and ZSCAN reads it instead, bounded itself.
 */
static int range_set(struct sagent_fleet *f, struct fleet_list *l, bool allow, uint64_t card,
		     struct gathered *g, char *err, size_t errlen)
{
	const char *key = l->set[allow];
	uint64_t start = 0, pages = 0;
	uint64_t max_pages = 2 * (card / (RANGE_COUNT - RANGE_OVERLAP)) + 4;
	struct anchor a = { 0 };
	int64_t now = time(NULL);
	bool full, asked;
	redisReply *r;
	int ret;

	ret = range_ask(f, key, start, err, errlen);
	asked = !ret;
	while (!ret) {
		if (redisGetReply(f->rc, (void **)&r) != REDIS_OK || !r) {
			snprintf(err, errlen, "%s", f->rc->errstr);
			ret = -EIO;
			break;
		}
		asked = false;
		full = r->type == REDIS_REPLY_ARRAY && r->elements == 2 * RANGE_COUNT;
		/* The next page asked before this one is judged: Redis serves it meanwhile. */
		if (full && pages + 1 < max_pages) {
			start += RANGE_COUNT - RANGE_OVERLAP;
			ret = range_ask(f, key, start, err, errlen);
			asked = !ret;
		}
		if (!ret)
			ret = range_page(f, l, allow, r, pages, &a, now, g, err, errlen);
		pages++;
		freeReplyObject(r);
		/* Done (a page shorter than asked), or more pages than the size asks. */
		if (!ret && !asked)
			ret = full ? 2 : 3;
		if (!ret && stopping(f)) {
			snprintf(err, errlen, "stopping");
			ret = -EINTR;
		}
	}
	/* A page asked still to come: read off the connection ZSCAN goes on with. */
	if (asked && ret == 2) {
		if (redisGetReply(f->rc, (void **)&r) != REDIS_OK || !r) {
			snprintf(err, errlen, "%s", f->rc->errstr);
			ret = -EIO;
		} else {
			freeReplyObject(r);
		}
	}
	anchor_free(&a);
	if (ret == 2)
		g->keys.n = 0;
	return ret == 3 ? 0 : ret;
}

/*
 * The whole set of side @allow into @g (scan_set's returns): by rank,
 * ZSCAN where that fails (see range_set).
 */
static int read_set(struct sagent_fleet *f, struct fleet_list *l, bool allow,
		    struct gathered *g, char *err, size_t errlen)
{
	const char *card[] = { "ZCARD", l->set[allow] };
	uint64_t n = 0;
	redisReply *r;
	int ret;

	/* Its size, to gather into one allocation (a hint: the set may change meanwhile). */
	r = command(f, 2, card);
	if (r && r->type == REDIS_REPLY_INTEGER && r->integer > 0) {
		n = (uint64_t)r->integer;
		if (gather_reserve(g, n < RESERVE_MAX ? (size_t)n : RESERVE_MAX)) {
			freeReplyObject(r);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	if (r)
		freeReplyObject(r);
	ret = range_set(f, l, allow, n, g, err, errlen);
	if (ret == 2) {
		l->rescanned++;
		ret = scan_set(f, l, allow, n, g, err, errlen);
	}
	return ret;
}

/* The stream's type: 1 a stream, 2 no such key, 0 something else, -EIO. */
static int stream_type(struct sagent_fleet *f, struct fleet_list *l, char *err, size_t errlen)
{
	const char *argv[] = { "TYPE", l->stream };
	redisReply *r = command(f, 2, argv);
	int ret;

	if (!r) {
		snprintf(err, errlen, "%s", f->rc->errstr);
		return -EIO;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "TYPE %s: %s", l->stream, r->str);
		freeReplyObject(r);
		return -EIO;
	}
	ret = r->type != REDIS_REPLY_STATUS ? 0 : !strcmp(r->str, "stream") ? 1 :
	      !strcmp(r->str, "none") ? 2 : 0;
	freeReplyObject(r);
	if (!ret)
		skipped(l, SAGENT_SKIP_WRONG_TYPE, l->stream);
	return ret;
}

/*
 * An empty stream's last-generated-id into @id (kept "0-0" if there is
 * none): reading from there, a stream trimmed to nothing (XTRIM MAXLEN 0)
 * is not taken for one cut past "0-0" again at every check.
 */
static int stream_generated_id(struct sagent_fleet *f, struct fleet_list *l, char *id,
			       size_t len, char *err, size_t errlen)
{
	const char *argv[] = { "XINFO", "STREAM", l->stream };
	redisReply *r = command(f, 3, argv);
	size_t i;

	if (!r) {
		snprintf(err, errlen, "%s", f->rc->errstr);
		return -EIO;
	}
	for (i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
		const redisReply *k = r->element[i], *v = r->element[i + 1];
		uint64_t ms, seq;

		if (k->type == REDIS_REPLY_STRING && v->type == REDIS_REPLY_STRING &&
		    !strcmp(k->str, "last-generated-id") && parse_id(v->str, &ms, &seq))
			snprintf(id, len, "%s", v->str);
	}
	freeReplyObject(r);
	return 0;
}

/* The stream's last id into @id ("0-0" if absent or never written). */
static int stream_last_id(struct sagent_fleet *f, struct fleet_list *l, char *id, size_t len,
			  char *err, size_t errlen)
{
	const char *argv[] = { "XREVRANGE", l->stream, "+", "-", "COUNT", "1" };
	redisReply *r = command(f, 6, argv);
	int ret = 0;

	snprintf(id, len, "0-0");
	if (!r) {
		snprintf(err, errlen, "%s", f->rc->errstr);
		return -EIO;
	}
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
	    r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2 &&
	    r->element[0]->element[0]->type == REDIS_REPLY_STRING)
		snprintf(id, len, "%s", r->element[0]->element[0]->str);
	else if (r->type != REDIS_REPLY_ARRAY)
		ret = -EIO;
	if (ret)
		snprintf(err, errlen, "XREVRANGE %s: %s", l->stream,
			 r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected reply");
	else if (r->type == REDIS_REPLY_ARRAY && !r->elements)
		ret = 1;
	freeReplyObject(r);
	return ret == 1 ? stream_generated_id(f, l, id, len, err, errlen) : ret;
}

/* The store's fleet entries of one side become @g. */
static int load_side(struct sagent_fleet *f, struct fleet_list *l, bool allow,
		     const struct gathered *g, size_t *changed, char *err, size_t errlen)
{
	struct sxdp_store_attrs a = {
		.origin = FLEET_ORIGIN, .now = time(NULL), .expires_each = g->expires,
		.allow = allow, .only_own = true,
	};
	struct sxdp_op_result res;
	int ret;

	ret = sxdp_op_load(f->store, l->name, &g->keys, &a, &res, err, errlen);
	*changed += res.changed + res.dropped;
	return ret;
}

/* Drops from @block the keys of @allow: a key in both sets is allowed. */
static int block_minus_allow(struct gathered *block, const struct gathered *allow)
{
	struct sxdp_keys sorted = { 0 };
	size_t i, out = 0;

	if (!allow->keys.n || !block->keys.n)
		return 0;
	for (i = 0; i < allow->keys.n; i++)
		if (sxdp_keys_add(&sorted, &allow->keys.keys[i])) {
			sxdp_keys_free(&sorted);
			return -ENOMEM;
		}
	sxdp_keys_sort(&sorted);
	for (i = 0; i < block->keys.n; i++) {
		if (sxdp_keys_find(&sorted, &block->keys.keys[i]))
			continue;
		block->keys.keys[out] = block->keys.keys[i];
		block->expires[out++] = block->expires[i];
	}
	block->keys.n = out;
	sxdp_keys_free(&sorted);
	return 0;
}

/*
 * What Redis holds of @l stored: removals before adds, so a key that moved
 * between the sets is never skipped as "on the other list" and then
 * removed from the one it left. The fleet's blocks of keys Redis allows go
 * first; then the allowlist is loaded (its fleet entries Redis no longer
 * allows go), then the blocklist.
 */
static int store_sides(struct sagent_fleet *f, struct fleet_list *l, struct gathered g[2],
		       const bool wrong[2], size_t *changed, char *err, size_t errlen)
{
	struct sxdp_op_result res = { 0 };
	int ret = 0;

	if (!wrong[0] && !wrong[1] && block_minus_allow(&g[0], &g[1])) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (!wrong[0] && g[1].keys.n) {
		ret = sxdp_op_remove_own(f->store, l->name, false, FLEET_ORIGIN, &g[1].keys, &res,
					 err, errlen);
		*changed += res.changed;
	}
	if (!ret && !wrong[1])
		ret = load_side(f, l, true, &g[1], changed, err, errlen);
	if (!ret && !wrong[0])
		ret = load_side(f, l, false, &g[0], changed, err, errlen);
	return ret;
}

static int resync_list(struct sagent_fleet *f, struct fleet_list *l, char *err, size_t errlen)
{
	struct gathered g[2] = { 0 };
	int64_t t0 = sagent_now_ns(), t1;
	size_t changed = 0, side, nblock = 0;
	bool no_stream, wrong[2];
	char id[48];
	int ret;

	l->rescanned = 0;
	ret = stream_type(f, l, err, errlen);
	if (ret < 0)
		return ret;
	l->stream_ok = ret > 0;
	no_stream = ret != 1;
	snprintf(id, sizeof(id), "0-0");
	ret = ret == 1 ? stream_last_id(f, l, id, sizeof(id), err, errlen) : 0;
	/* Both sets read to their end before anything is stored (a stop abandons both). */
	for (side = 0; !ret && side < 2; side++) {
		ret = read_set(f, l, side, &g[side], err, errlen);
		/* Not a set: neither an empty one. What the store has stays. */
		wrong[side] = ret == 1;
		if (ret == 1)
			ret = 0;
	}
	/*
	 * No set and no stream at all: a Redis that lost its data (restarted
	 * without persistence, flushed) more likely than a list emptied (that
	 * leaves its stream). The store keeps its fleet entries: fail-static.
	 */
	if (!ret && no_stream && !g[0].keys.n && !g[1].keys.n) {
		if (!l->warned_empty)
			sagent_log(SAGENT_WARNING, "fleet: list %s: Redis has neither its sets nor "
				   "its stream; keeping the fleet entries this host has", l->name);
		l->warned_empty = true;
		wrong[0] = wrong[1] = true;
	} else {
		l->warned_empty = false;
	}
	t1 = sagent_now_ns();
	nblock = g[0].keys.n;
	if (!ret)
		ret = store_sides(f, l, g, wrong, &changed, err, errlen);
	if (!ret) {
		snprintf(l->last_id, sizeof(l->last_id), "%s", id);
		atomic_fetch_add(&l->st->resyncs, 1);
		sagent_log(SAGENT_INFO, "fleet: list %s: %zu blocked, %zu allowed in Redis (read in "
			   "%" PRId64 " ms)%s; %zu changes to the store and the maps (%" PRId64 " ms)",
			   l->name, nblock, g[1].keys.n, (t1 - t0) / 1000000,
			   !l->rescanned ? "" : l->rescanned == 1 ? ", a set by ZSCAN (its pages by "
			   "rank did not hold)" : ", both sets by ZSCAN (their pages by rank did not hold)",
			   changed, (sagent_now_ns() - t1) / 1000000);
	}
	gathered_free(&g[0]);
	gathered_free(&g[1]);
	return ret;
}

/* ---- changes ---- */

/* A run of consecutive records that one operation applies. */
struct run {
	bool add, allow;
	struct gathered g;
	enum sxdp_list_op op[XREAD_COUNT];	/* per key, for the counters */
	char last_id[48];
};

/*
 * After a disallow of @keys: those Redis blocks too are blocked now. A
 * block published while its key was allowed was skipped (allowed wins, a
 * key in both sets is allowed), so without asking the key would be on
 * neither list while Redis blocks it. Redis's state now, not at the
 * disallow's time: what changed since comes from the stream after it.
 */
static int block_if_blocked(struct sagent_fleet *f, struct fleet_list *l,
			    const struct sxdp_keys *keys, char *err, size_t errlen)
{
	struct sxdp_store_attrs a = { .origin = FLEET_ORIGIN, .now = time(NULL), .only_own = true };
	const char **argv = calloc(keys->n + 2, sizeof(*argv));
	char (*text)[ENTRY_MAX + 1] = calloc(keys->n, sizeof(*text));
	struct gathered g = { 0 };
	struct sxdp_op_result res;
	int64_t expires;
	redisReply *r = NULL;
	bool expired;
	size_t i;
	int ret = 0;

	if (!argv || !text) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	argv[0] = "ZMSCORE";
	argv[1] = l->set[0];
	for (i = 0; i < keys->n; i++) {
		sxdp_format_entry(&keys->keys[i], text[i], sizeof(text[i]));
		argv[i + 2] = text[i];
	}
	r = command(f, (int)keys->n + 2, argv);
	if (!r) {
		snprintf(err, errlen, "%s", f->rc->errstr);
		ret = -EIO;
		goto out;
	}
	/* An error (the key is of the wrong type): nothing blocked there. */
	for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements && i < keys->n; i++) {
		const redisReply *sc = r->element[i];

		if (sc->type != REDIS_REPLY_STRING ||
		    !sfleet_parse_score(sc->str, a.now, &expires, &expired) || expired ||
		    !within_limits(f, l, &keys->keys[i], false, text[i]))
			continue;
		if (gather(&g, &keys->keys[i], expires)) {
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
			goto out;
		}
	}
	a.expires_each = g.expires;
	if (g.keys.n)
		ret = sxdp_op_add(f->store, l->name, &g.keys, &a, &res, err, errlen);
out:
	if (r)
		freeReplyObject(r);
	gathered_free(&g);
	free(text);
	free(argv);
	return ret;
}

static int flush(struct sagent_fleet *f, struct fleet_list *l, struct run *run, char *err,
		 size_t errlen)
{
	struct sxdp_store_attrs a = {
		.origin = FLEET_ORIGIN, .now = time(NULL), .expires_each = run->g.expires,
		.allow = run->allow, .only_own = true,
	};
	struct sxdp_op_result res;
	uint64_t ms, seq;
	size_t i, n = run->g.keys.n;
	int ret = 0;

	if (!n)
		return 0;
	/* An allow moves a key the fleet blocks: off the blocklist first. */
	if (run->add && run->allow)
		ret = sxdp_op_remove_own(f->store, l->name, false, FLEET_ORIGIN, &run->g.keys,
					 &res, err, errlen);
	if (!ret && run->add)
		ret = sxdp_op_add(f->store, l->name, &run->g.keys, &a, &res, err, errlen);
	else if (!ret)
		ret = sxdp_op_remove_own(f->store, l->name, run->allow, FLEET_ORIGIN, &run->g.keys,
					 &res, err, errlen);
	if (!ret && !run->add && run->allow)
		ret = block_if_blocked(f, l, &run->g.keys, err, errlen);
	run->g.keys.n = 0;
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		atomic_fetch_add(&l->st->applied[run->op[i]], 1);
	if (parse_id(run->last_id, &ms, &seq)) {
		atomic_store(&l->st->last_ms, ms);
		atomic_store(&l->st->last_seq, seq);
		atomic_store(&l->st->lag_ms, wall_ms() - (int64_t)ms);
	}
	return 0;
}

/* A record's field @name, or NULL. */
static const char *field(const redisReply *fields, const char *name, size_t *len)
{
	size_t i;

	for (i = 0; i + 1 < fields->elements; i += 2) {
		const redisReply *k = fields->element[i], *v = fields->element[i + 1];

		if (k->type == REDIS_REPLY_STRING && v->type == REDIS_REPLY_STRING &&
		    !strcmp(k->str, name)) {
			*len = v->len;
			return v->str;
		}
	}
	return NULL;
}

/*
 * One record as (op, key, expiry); 1 if it is garbage (skipped). A block
 * or allow already expired is applied as its removal: a resync would not
 * have it either.
 */
static int parse_record(struct fleet_list *l, const redisReply *fields, enum sxdp_list_op *op,
			struct sieve_xdp_key *key, int64_t *expires, bool *add, bool *allow)
{
	const char *opname, *entry, *score, *why;
	size_t oplen = 0, elen = 0, slen = 0;
	bool expired = false;

	opname = field(fields, "op", &oplen);
	entry = field(fields, "entry", &elen);
	score = field(fields, "expires", &slen);
	if (entry && elen > ENTRY_MAX) {
		skipped(l, SAGENT_SKIP_TOO_LONG, "a record's entry longer than 127 bytes");
		return 1;
	}
	*expires = 0;
	if (sxdp_list_op_parse(opname, op) || !entry || strlen(entry) != elen ||
	    sxdp_parse_entry(entry, key, &why) ||
	    (score && !sfleet_parse_score(score, time(NULL), expires, &expired))) {
		skipped(l, SAGENT_SKIP_UNPARSEABLE, entry && elen <= ENTRY_MAX ? entry : "a record");
		return 1;
	}
	*allow = sxdp_list_op_allows(*op);
	*add = sxdp_list_op_adds(*op) && !expired;
	return 0;
}

/* One stream's records of an XREAD reply, in order, in runs. */
static int apply_records(struct sagent_fleet *f, struct fleet_list *l, const redisReply *recs,
			 struct run *run, char *err, size_t errlen)
{
	struct sieve_xdp_key key;
	enum sxdp_list_op op;
	char text[ENTRY_MAX + 1];
	bool add, allow;
	int64_t expires;
	size_t i;
	int ret = 0;

	run->g.keys.n = 0;
	for (i = 0; !ret && i < recs->elements; i++) {
		const redisReply *rec = recs->element[i];

		if (rec->type != REDIS_REPLY_ARRAY || rec->elements != 2 ||
		    rec->element[0]->type != REDIS_REPLY_STRING)
			continue;
		if (rec->element[1]->type != REDIS_REPLY_ARRAY ||
		    parse_record(l, rec->element[1], &op, &key, &expires, &add, &allow))
			goto next;
		/* Removals are never refused: they only take back the fleet's own. */
		if (add) {
			sxdp_format_entry(&key, text, sizeof(text));
			if (!within_limits(f, l, &key, allow, text))
				goto next;
		}
		if (run->g.keys.n && (add != run->add || allow != run->allow ||
				      run->g.keys.n == XREAD_COUNT))
			ret = flush(f, l, run, err, errlen);
		run->add = add;
		run->allow = allow;
		if (!ret && gather(&run->g, &key, expires))
			ret = -ENOMEM;
		if (!ret)
			run->op[run->g.keys.n - 1] = op;
next:
		snprintf(run->last_id, sizeof(run->last_id), "%s", rec->element[0]->str);
		snprintf(l->last_id, sizeof(l->last_id), "%s", rec->element[0]->str);
	}
	if (!ret)
		ret = flush(f, l, run, err, errlen);
	return ret;
}

static void backoff(struct sagent_fleet *f, uint32_t ms);

/* ---- following ---- */

/*
 * Whether the stream lost records this list did not apply yet: trimmed
 * (MAXLEN) or deleted past @l->last_id (Redis 7's max-deleted-entry-id),
 * or the key gone or replaced since. A resync then.
 */
static int stream_cut(struct sagent_fleet *f, struct fleet_list *l, bool *cut, char *err,
		      size_t errlen)
{
	const char *argv[] = { "XINFO", "STREAM", l->stream };
	redisReply *r;
	size_t i;

	*cut = false;
	r = command(f, 3, argv);
	if (!r) {
		snprintf(err, errlen, "%s", f->rc->errstr);
		return -EIO;
	}
	if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "WRONGTYPE", 9)) {
		/* Replaced by something else: resync once, which stops following it. */
		*cut = l->stream_ok;
	} else if (r->type == REDIS_REPLY_ERROR) {
		/* No such key: cut if it held records (it was deleted). */
		*cut = strcmp(l->last_id, "0-0") || !l->stream_ok;
	} else if (r->type == REDIS_REPLY_ARRAY) {
		for (i = 0; i + 1 < r->elements; i += 2) {
			const redisReply *k = r->element[i], *v = r->element[i + 1];

			if (k->type == REDIS_REPLY_STRING && v->type == REDIS_REPLY_STRING &&
			    !strcmp(k->str, "max-deleted-entry-id"))
				*cut = id_after(v->str, l->last_id);
		}
		*cut |= !l->stream_ok;
	}
	freeReplyObject(r);
	return 0;
}

/* Every list's stream checked; those cut are resynced. */
static int check_streams(struct sagent_fleet *f, char *err, size_t errlen)
{
	unsigned int i;
	bool cut;
	int ret = 0;

	f->last_check_ns = sagent_now_ns();
	for (i = 0; !ret && i < f->stats->nr_lists; i++) {
		struct fleet_list *l = &f->lists[i];

		ret = stream_cut(f, l, &cut, err, errlen);
		if (!ret && cut) {
			sagent_log(SAGENT_INFO, "fleet: list %s: the stream lost changes not applied "
				   "yet (trimmed, deleted or replaced): resync", l->name);
			ret = resync_list(f, l, err, errlen);
		}
	}
	return ret;
}

/* XREAD COUNT BLOCK STREAMS s... id...: over the lists whose stream is one. */
static redisReply *xread(struct sagent_fleet *f, struct fleet_list **which, unsigned int *n)
{
	const char *argv[6 + 2 * SCONF_MAX_FLEET_LISTS] = {
		"XREAD", "COUNT", STR(XREAD_COUNT), "BLOCK", STR(XREAD_BLOCK_MS), "STREAMS",
	};
	unsigned int i, k = 0;

	for (i = 0; i < f->stats->nr_lists; i++)
		if (f->lists[i].stream_ok)
			which[k++] = &f->lists[i];
	*n = k;
	if (!k)
		return NULL;
	for (i = 0; i < k; i++) {
		argv[6 + i] = which[i]->stream;
		argv[6 + k + i] = which[i]->last_id;
	}
	return command(f, 6 + 2 * k, argv);
}

/* The list of reply stream @name. */
static struct fleet_list *list_of(struct fleet_list **which, unsigned int n, const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(which[i]->stream, name))
			return which[i];
	return NULL;
}

static int apply_reply(struct sagent_fleet *f, struct fleet_list **which, unsigned int n,
		       const redisReply *r, struct run *run, char *err, size_t errlen)
{
	struct fleet_list *l;
	size_t i;
	bool cut;
	int ret = 0;

	for (i = 0; !ret && i < r->elements; i++) {
		const redisReply *s = r->element[i];

		if (s->type != REDIS_REPLY_ARRAY || s->elements != 2 ||
		    s->element[0]->type != REDIS_REPLY_STRING ||
		    s->element[1]->type != REDIS_REPLY_ARRAY ||
		    !(l = list_of(which, n, s->element[0]->str)))
			continue;
		ret = apply_records(f, l, s->element[1], run, err, errlen);
		/* A full page: behind, so the stream may have been trimmed past us. */
		if (!ret && s->element[1]->elements == XREAD_COUNT) {
			ret = stream_cut(f, l, &cut, err, errlen);
			if (!ret && cut)
				ret = resync_list(f, l, err, errlen);
		}
	}
	return ret;
}

/* Until the connection is lost (-EIO, -errno) or the agent stops (0). */
static int follow(struct sagent_fleet *f, char *err, size_t errlen)
{
	struct fleet_list *which[SCONF_MAX_FLEET_LISTS];
	struct run *run = calloc(1, sizeof(*run));
	unsigned int n;
	redisReply *r;
	int ret = 0;

	if (!run) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (!ret && !stopping(f)) {
		if (sagent_now_ns() - f->last_check_ns > CHECK_EVERY_MS * 1000000LL) {
			ret = check_streams(f, err, errlen);
			continue;
		}
		r = xread(f, which, &n);
		if (!n) {
			/* Every stream key is of the wrong type: check again later. */
			ret = check_streams(f, err, errlen);
			if (!ret)
				backoff(f, XREAD_BLOCK_MS);
			continue;
		}
		if (!r) {
			snprintf(err, errlen, "%s", f->rc->errstr);
			ret = -EIO;
		} else if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "WRONGTYPE", 9)) {
			/* A stream replaced by something else while followed. */
			f->last_check_ns = 0;
		} else if (r->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "XREAD: %s", r->str);
			ret = -EIO;
		} else if (r->type == REDIS_REPLY_ARRAY) {
			ret = apply_reply(f, which, n, r, run, err, errlen);
		}
		/* else nil: nothing came within the block time */
		if (r)
			freeReplyObject(r);
	}
	gathered_free(&run->g);
	free(run);
	return ret;
}

/* ---- sessions and the thread ---- */

static int session_open(struct sagent_fleet *f, char *err, size_t errlen)
{
	redisContext *rc = sfleet_redis_connect(&f->cfg, READ_TIMEOUT_MS, err, errlen);

	if (!rc)
		return -EIO;
	pthread_mutex_lock(&f->lock);
	f->rc = rc;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static void session_close(struct sagent_fleet *f)
{
	pthread_mutex_lock(&f->lock);
	if (f->rc)
		redisFree(f->rc);
	f->rc = NULL;
	pthread_mutex_unlock(&f->lock);
}

/* One session: connect, resync every list, follow. */
static int session(struct sagent_fleet *f)
{
	char err[512] = "";
	unsigned int i;
	int ret;

	ret = session_open(f, err, sizeof(err));
	for (i = 0; !ret && i < f->stats->nr_lists; i++)
		ret = resync_list(f, &f->lists[i], err, sizeof(err));
	if (!ret) {
		atomic_store(&f->stats->connected, true);
		atomic_fetch_add(&f->stats->connects, 1);
		f->last_check_ns = sagent_now_ns();
		set_state(f, FLEET_CONNECTED, SAGENT_INFO, "connected to %s, following %u lists",
			  f->redis_name, f->stats->nr_lists);
		ret = follow(f, err, sizeof(err));
		atomic_store(&f->stats->connected, false);
	}
	session_close(f);
	/* Refused: Redis answered (a wrong password, an ACL): a state of its own. */
	if (ret && !stopping(f))
		set_state(f, ret == -EACCES ? FLEET_REFUSED : FLEET_LOST, SAGENT_WARNING,
			  "%s: %s; this host keeps enforcing what it has; retrying",
			  f->redis_name, err[0] ? err : strerror(-ret));
	return ret;
}

/* Sleeps @ms unless the agent stops first. */
static void backoff(struct sagent_fleet *f, uint32_t ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&f->lock);
	while (!f->stop && pthread_cond_timedwait(&f->wake, &f->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&f->lock);
}

static void *fleet_main(void *arg)
{
	struct sagent_fleet *f = arg;
	unsigned int seed = (unsigned int)(sagent_now_ns() ^ getpid());
	uint32_t wait_ms = BACKOFF_MIN_MS;
	char err[512] = "";

	if (sxdp_store_open_sync(f->state_dir, f->store_sync, &f->store, err, sizeof(err))) {
		sagent_log(SAGENT_ERR, "fleet: %s; not following", err);
		return NULL;
	}
	while (!stopping(f)) {
		uint64_t before = atomic_load(&f->stats->connects);

		session(f);
		/* A session that got in step starts the backoff over. */
		if (atomic_load(&f->stats->connects) != before)
			wait_ms = BACKOFF_MIN_MS;
		/*
		 * Half of it at random: a fleet that lost its Redis at once does
		 * not come back (and resync) at once.
		 */
		backoff(f, wait_ms / 2 + (uint32_t)(rand_r(&seed) % (wait_ms / 2 + 1)));
		wait_ms = wait_ms > f->cfg.retry_max_ms / 2 ? f->cfg.retry_max_ms : 2 * wait_ms;
	}
	sxdp_store_close(f->store);
	return NULL;
}

static void init_lists(struct sagent_fleet *f, struct sagent_fleet_stats *st)
{
	unsigned int i;

	for (i = 0; i < st->nr_lists; i++) {
		struct fleet_list *l = &f->lists[i];

		l->name = st->lists[i];
		l->st = &st->l[i];
		sfleet_redis_set_key(l->name, false, l->set[0], sizeof(l->set[0]));
		sfleet_redis_set_key(l->name, true, l->set[1], sizeof(l->set[1]));
		sfleet_redis_stream_key(l->name, l->stream, sizeof(l->stream));
		snprintf(l->last_id, sizeof(l->last_id), "0-0");
	}
}

int sagent_fleet_start(struct sagent *ag, struct sagent_fleet **fp, char *err, size_t errlen)
{
	struct sagent_fleet_stats *st = &ag->stats.fleet;
	struct sagent_fleet *f;
	unsigned int i;
	int ret;

	*fp = NULL;
	if (!ag->cfg.fleet.on)
		return 0;
	/* The lists are fixed at the first start: the metrics thread reads them. */
	if (!st->on) {
		for (i = 0; i < ag->cfg.fleet.nr_lists; i++)
			memcpy(st->lists[i], ag->cfg.fleet.lists[i], sizeof(st->lists[i]));
		st->nr_lists = ag->cfg.fleet.nr_lists;
		st->on = true;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f->cfg = ag->cfg.fleet;
	f->stats = st;
	snprintf(f->state_dir, sizeof(f->state_dir), "%s", ag->cfg.state_dir);
	f->store_sync = ag->cfg.store_sync;
	sfleet_redis_name(&f->cfg, f->redis_name, sizeof(f->redis_name));
	init_lists(f, st);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->wake, NULL);
	ret = -pthread_create(&f->thread, NULL, fleet_main, f);
	if (ret) {
		snprintf(err, errlen, "starting the fleet's thread: %s", strerror(-ret));
		free(f);
		return ret;
	}
	*fp = f;
	return 0;
}

void sagent_fleet_stop(struct sagent_fleet *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	/* Wakes a blocked XREAD (or a connect's wait) at once. */
	if (f->rc && f->rc->fd >= 0)
		shutdown(f->rc->fd, SHUT_RDWR);
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
