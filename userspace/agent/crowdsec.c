// SPDX-License-Identifier: GPL-2.0
/*
 * Following a CrowdSec Local API (sieve.conf(5) [crowdsec]): a thread of
 * its own, one store connection of its own, one GET at a time through
 * userspace/sources/http.h, each reply read by userspace/sources/
 * crowdsec.h into changes by origin, applied to every list of [crowdsec]
 * lists as sieve origin "crowdsec/ORIGIN":
 *
 *   resync: GET /v1/decisions/stream?startup=true at start, and after any
 *   failure (the LAPI unreachable, an HTTP error, a reply refused, a store
 *   error). Each origin's entries become its decisions, in one load of
 *   that origin (the bulk path: one new generation of the maps, as `sieve
 *   xdp load --origin`); a crowdsec/ origin the store holds and the reply
 *   does not (all its decisions went while the agent was away, or
 *   [crowdsec] origins skips it now) is loaded empty.
 *
 *   poll: every update_frequency, startup=false: what changed since the
 *   last request. Deleted decisions first: their keys removed from their
 *   origin only (what the operator, a feed, the fleet or another origin
 *   holds is never touched; a key already gone is nothing: LAPI repeats
 *   deletes for about 2 s). Then new ones: added live with the decision's
 *   remaining duration as TTL; a re-ban extends, never shortens
 *   (extend_only); a key another origin holds stays theirs (only_own). A
 *   key both deleted and new in one reply (an expired ban and its re-ban)
 *   is only added.
 *
 *   outage: the maps keep what they enforce (fail-static, as the fleet
 *   through Redis outages); sieve_crowdsec_up goes to 0; entries still
 *   expire by their TTL. The next request after update_frequency is a
 *   resync.
 *
 * Logging says each state once (up; lost, with its reason, again only
 * when the kind of failure changes: refused, timed out, an HTTP error, a
 * reply that cannot be read) and each kind of skipped decision once per
 * run.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "crowdsec.h"
#include "http.h"
#include "ops.h"

/* A startup reply of 10^6 decisions takes LAPI about 25 s (2.5 s a 10^5). */
#define RESYNC_TIMEOUT_MS	120000L
#define POLL_TIMEOUT_MS		15000L
#define KEY_MAX			256
#define ORIGIN_MAX		(sizeof(SCS_ORIGIN_PREFIX) + SCONF_CS_WORD_MAX)

struct sagent_crowdsec {
	struct sconf_crowdsec_config cfg;	/* a copy: a reload may change the agent's */
	char state_dir[4096];
	enum sxdp_store_sync store_sync;
	struct sagent_crowdsec_stats *stats;
	struct sxdp_store *store;
	pthread_t thread;
	/* Guards @stop; @wake ends a wait between requests. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	bool synced;			/* a resync went through since the last failure */
	bool lost_logged;
	int lost_ret;			/* the error last logged */
	bool warned[SCS_NR_SKIPS];
};

static bool stopping(struct sagent_crowdsec *c)
{
	bool stop;

	pthread_mutex_lock(&c->lock);
	stop = c->stop;
	pthread_mutex_unlock(&c->lock);
	return stop;
}

/* Waits @ms or until stopped; true if stopped. */
static bool wait_ms(struct sagent_crowdsec *c, uint32_t ms)
{
	struct timespec until;
	bool stop;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&c->lock);
	while (!c->stop && pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
		;
	stop = c->stop;
	pthread_mutex_unlock(&c->lock);
	return stop;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- counters ---- */

/* The counters of @origin ("" : none), named at its first use; o[0] past the table. */
static struct sagent_cs_origin_stats *origin_stats(struct sagent_crowdsec *c, const char *origin)
{
	struct sagent_crowdsec_stats *st = c->stats;
	unsigned int i, n = atomic_load(&st->nr_origins);

	if (!*origin)
		return &st->o[0];
	for (i = 1; i <= n; i++)
		if (!strcmp(st->o[i].name, origin))
			return &st->o[i];
	if (n == SCS_MAX_ORIGINS)
		return &st->o[0];
	snprintf(st->o[n + 1].name, sizeof(st->o[0].name), "%s", origin);
	atomic_store_explicit(&st->nr_origins, n + 1, memory_order_release);
	return &st->o[n + 1];
}

/* A reply's skips counted, each reason logged the first time it is seen. */
static void count_skips(struct sagent_crowdsec *c, const struct scs_reply *r)
{
	struct sagent_cs_origin_stats *os;
	uint64_t n[SCS_NR_SKIPS] = { 0 };
	unsigned int i, k;

	for (k = 0; k < SCS_NR_SKIPS; k++) {
		n[k] = r->skipped[k];
		atomic_fetch_add(&c->stats->o[0].skipped[k], r->skipped[k]);
	}
	for (i = 0; i < r->nr_origins; i++) {
		os = origin_stats(c, r->origins[i].origin);
		for (k = 0; k < SCS_NR_SKIPS; k++) {
			atomic_fetch_add(&os->skipped[k], r->origins[i].skipped[k]);
			n[k] += r->origins[i].skipped[k];
		}
	}
	for (k = 0; k < SCS_NR_SKIPS; k++) {
		if (!n[k] || c->warned[k])
			continue;
		c->warned[k] = true;
		sagent_log(SAGENT_WARNING, "crowdsec: skipping decisions (%s), the first: %s; counted "
			   "in sieve_crowdsec_skipped_total{reason=\"%s\"}, logged once",
			   scs_skip_name(k), r->first[k], scs_skip_name(k));
	}
}

/* ---- applying a reply ---- */

static void sieve_origin(const char *origin, char *buf, size_t len)
{
	snprintf(buf, len, SCS_ORIGIN_PREFIX "%s", origin);
}

/* What a resync found in the store: its crowdsec/ origins not in the reply. */
struct stale {
	const struct scs_reply *r;
	char (*names)[ORIGIN_MAX];
	size_t n, cap;
};

static int note_stale(const struct sxdp_store_count *cnt, void *ctx)
{
	struct stale *s = ctx;
	const char *origin = cnt->origin;
	unsigned int i;
	void *p;

	if (cnt->allow || strncmp(origin, SCS_ORIGIN_PREFIX, strlen(SCS_ORIGIN_PREFIX)) ||
	    strlen(origin) >= ORIGIN_MAX)
		return 0;
	for (i = 0; i < s->r->nr_origins; i++)
		if (!strcmp(origin + strlen(SCS_ORIGIN_PREFIX), s->r->origins[i].origin))
			return 0;
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], origin))
			return 0;
	if (s->n == s->cap) {
		p = realloc(s->names, (s->cap ? 2 * s->cap : 8) * sizeof(*s->names));
		if (!p)
			return -ENOMEM;
		s->names = p;
		s->cap = s->cap ? 2 * s->cap : 8;
	}
	snprintf(s->names[s->n++], ORIGIN_MAX, "%s", origin);
	return 0;
}

/* One origin's entries of @list become @keys (one load: the bulk path). */
static int load_origin(struct sagent_crowdsec *c, const char *list, const char *origin,
		       const struct sxdp_keys *keys, const int64_t *expires, char *err,
		       size_t errlen)
{
	struct sxdp_store_attrs a = {
		.origin = origin, .now = time(NULL), .expires_each = expires, .only_own = true,
	};
	struct sxdp_op_result res;

	return sxdp_op_load(c->store, list, keys, &a, &res, err, errlen);
}

static int resync_list(struct sagent_crowdsec *c, const char *list, const struct scs_reply *r,
		       char *err, size_t errlen)
{
	static const struct sxdp_keys none;
	struct stale s = { .r = r };
	char origin[ORIGIN_MAX];
	unsigned int i;
	int ret;

	ret = sxdp_store_origin_counts(c->store, list, note_stale, &s);
	if (ret)
		snprintf(err, errlen, "reading the origins of list %s: %s", list, strerror(-ret));
	for (i = 0; !ret && i < s.n; i++)
		ret = load_origin(c, list, s.names[i], &none, NULL, err, errlen);
	for (i = 0; !ret && i < r->nr_origins; i++) {
		sieve_origin(r->origins[i].origin, origin, sizeof(origin));
		ret = load_origin(c, list, origin, &r->origins[i].block, r->origins[i].expires,
				  err, errlen);
	}
	free(s.names);
	return ret;
}

/* @ch's unblocks without the keys it blocks too (a re-ban in one reply). */
static int unblocks_only(const struct scs_changes *ch, struct sxdp_keys *out)
{
	struct sxdp_keys blocked = { 0 };
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < ch->block.n; i++)
		ret = sxdp_keys_add(&blocked, &ch->block.keys[i]);
	sxdp_keys_sort(&blocked);
	for (i = 0; !ret && i < ch->unblock.n; i++)
		if (!sxdp_keys_find(&blocked, &ch->unblock.keys[i]))
			ret = sxdp_keys_add(out, &ch->unblock.keys[i]);
	sxdp_keys_free(&blocked);
	return ret;
}

static int poll_list(struct sagent_crowdsec *c, const char *list, const struct scs_reply *r,
		     char *err, size_t errlen)
{
	struct sxdp_store_attrs a = { .now = time(NULL), .only_own = true, .extend_only = true };
	const struct scs_changes *ch;
	struct sxdp_op_result res;
	struct sxdp_keys gone;
	char origin[ORIGIN_MAX];
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < r->nr_origins; i++) {
		ch = &r->origins[i];
		sieve_origin(ch->origin, origin, sizeof(origin));
		memset(&gone, 0, sizeof(gone));
		if (unblocks_only(ch, &gone)) {
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
		}
		if (!ret && gone.n)
			ret = sxdp_op_remove_own(c->store, list, false, origin, &gone, &res, err,
						 errlen);
		sxdp_keys_free(&gone);
		a.origin = origin;
		a.expires_each = ch->expires;
		if (!ret && ch->block.n)
			ret = sxdp_op_add(c->store, list, &ch->block, &a, &res, err, errlen);
	}
	return ret;
}

static int apply(struct sagent_crowdsec *c, bool startup, const struct scs_reply *r, char *err,
		 size_t errlen)
{
	struct sagent_cs_origin_stats *os;
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < c->cfg.nr_lists; i++)
		ret = startup ? resync_list(c, c->cfg.lists[i], r, err, errlen) :
				poll_list(c, c->cfg.lists[i], r, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < r->nr_origins; i++) {
		os = origin_stats(c, r->origins[i].origin);
		atomic_fetch_add(&os->applied[0], r->origins[i].block.n);
		if (!startup)
			atomic_fetch_add(&os->applied[1], r->origins[i].unblock.n);
	}
	return 0;
}

/* ---- one request ---- */

/*
 * The key file's first line (read at every resync: a rotated key needs no
 * reload), its owner and mode checked again on the file read.
 */
static int read_key(const char *path, char *key, size_t len, char *err, size_t errlen)
{
	int ret = sconf_read_secret("api_key_file", path, key, len, err, errlen);

	if (!ret && (!key[0] || strpbrk(key, " \t"))) {
		snprintf(err, errlen, "api_key_file %.300s: its first line is no key", path);
		ret = -EINVAL;
	}
	return ret;
}

/* One request and its reply applied: 0, or -errno with @err (then a resync is due). */
static int request(struct sagent_crowdsec *c, char *err, size_t errlen)
{
	char url[600], key[KEY_MAX], header[KEY_MAX + 16];
	const char *headers[] = { header, NULL };
	struct ssrc_http_request req = {
		.url = url, .headers = headers, .max_body = SCS_BODY_MAX,
		.timeout_ms = c->synced ? POLL_TIMEOUT_MS : RESYNC_TIMEOUT_MS,
	};
	struct ssrc_http_response resp;
	struct scs_reply r;
	int64_t t0, t1, tp = 0, t2;
	bool startup = !c->synced;
	int ret;

	ret = read_key(c->cfg.api_key_file, key, sizeof(key), err, errlen);
	if (ret)
		return ret;
	snprintf(header, sizeof(header), "X-Api-Key: %s", key);
	/* The LAPI sends only these scopes (its default: Ip and Range). */
	snprintf(url, sizeof(url), "%s/v1/decisions/stream?startup=%s&scopes=%s%s%s",
		 c->cfg.lapi_url, startup ? "true" : "false",
		 c->cfg.scopes & SCONF_CS_SCOPE_IP ? "Ip" : "",
		 c->cfg.scopes == (SCONF_CS_SCOPE_IP | SCONF_CS_SCOPE_RANGE) ? "," : "",
		 c->cfg.scopes & SCONF_CS_SCOPE_RANGE ? "Range" : "");
	t0 = sagent_now_ns();
	ret = ssrc_http_get(&req, &resp);
	explicit_bzero(header, sizeof(header));
	explicit_bzero(key, sizeof(key));
	if (ret < 0) {
		snprintf(err, errlen, "%s", resp.err);
		ssrc_http_response_free(&resp);
		return ret;
	}
	t1 = sagent_now_ns();
	ret = scs_reply_parse(resp.body ? resp.body : "", resp.body_len, time(NULL), &c->cfg, &r,
			      err, errlen);
	ssrc_http_response_free(&resp);
	tp = sagent_now_ns();
	if (!ret) {
		count_skips(c, &r);
		ret = apply(c, startup, &r, err, errlen);
	}
	t2 = sagent_now_ns();
	if (!ret && startup) {
		size_t n = 0;
		unsigned int i;

		for (i = 0; i < r.nr_origins; i++)
			n += r.origins[i].block.n;
		atomic_fetch_add(&c->stats->resyncs, 1);
		sagent_log(SAGENT_INFO, "crowdsec: resync: %zu decisions taken of %u origins "
			   "(LAPI's reply %" PRId64 " ms; sieve's part %" PRId64 " ms: read %" PRId64
			   " ms, stored and enforced %" PRId64 " ms)", n, r.nr_origins,
			   (t1 - t0) / 1000000, (t2 - t1) / 1000000, (tp - t1) / 1000000,
			   (t2 - tp) / 1000000);
	}
	scs_reply_free(&r);
	if (!ret) {
		atomic_fetch_add(&c->stats->polls, 1);
		atomic_store(&c->stats->last_poll_ms, wall_ms());
	}
	return ret;
}

static void *crowdsec_main(void *arg)
{
	struct sagent_crowdsec *c = arg;
	char err[512];
	int ret;

	ret = sxdp_store_open_sync(c->state_dir, c->store_sync, &c->store, err, sizeof(err));
	if (ret) {
		sagent_log(SAGENT_ERR, "crowdsec: %s; not following %s", err, c->cfg.lapi_url);
		return NULL;
	}
	while (!stopping(c)) {
		err[0] = '\0';
		ret = request(c, err, sizeof(err));
		if (ret) {
			atomic_fetch_add(&c->stats->failures, 1);
			atomic_store(&c->stats->up, false);
			/* Once an incident, and again only if its kind changes. */
			if (!c->lost_logged || ret != c->lost_ret)
				sagent_log(SAGENT_WARNING, "crowdsec: %s: %s; keeping what is enforced, "
					   "a resync at the next request", c->cfg.lapi_url, err);
			c->lost_logged = true;
			c->lost_ret = ret;
			c->synced = false;
		} else {
			if (!c->synced || c->lost_logged)
				sagent_log(SAGENT_INFO, "crowdsec: following %s (every %u ms)",
					   c->cfg.lapi_url, c->cfg.update_frequency_ms);
			atomic_store(&c->stats->up, true);
			c->lost_logged = false;
			c->synced = true;
		}
		if (wait_ms(c, c->cfg.update_frequency_ms))
			break;
	}
	sxdp_store_close(c->store);
	return NULL;
}

int sagent_crowdsec_start(struct sagent *ag, struct sagent_crowdsec **cp, char *err,
			  size_t errlen)
{
	struct sagent_crowdsec *c;
	int ret;

	*cp = NULL;
	if (!ag->cfg.crowdsec.on)
		return 0;
	ret = ssrc_http_init();
	if (ret) {
		snprintf(err, errlen, "libcurl: %s", strerror(-ret));
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->cfg = ag->cfg.crowdsec;
	c->stats = &ag->stats.crowdsec;
	c->stats->on = true;
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", ag->cfg.state_dir);
	c->store_sync = ag->cfg.store_sync;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	ret = -pthread_create(&c->thread, NULL, crowdsec_main, c);
	if (ret) {
		snprintf(err, errlen, "starting the crowdsec thread: %s", strerror(-ret));
		free(c);
		return ret;
	}
	*cp = c;
	return 0;
}

void sagent_crowdsec_stop(struct sagent_crowdsec *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
