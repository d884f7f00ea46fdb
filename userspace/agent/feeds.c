// SPDX-License-Identifier: GPL-2.0
/*
 * The [feed NAME] sections: one thread refreshes each feed when it is due
 * (userspace/sources/feeds.h does the refresh) and sleeps until the next
 * one is, or until a reload or the stop wakes it. Refreshes run one after
 * another: a feed's fetch is bounded by its timeout, and the loads take
 * the store's write lock anyway. Enforcement never waits for this thread:
 * the maps keep what the last good load put there.
 *
 * Logging: a load is one line; a refusal is logged when it starts or its
 * reason changes, and its end once; an unchanged feed says nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"

/* One feed as the thread runs it. */
struct feed {
	struct sconf_feed_config cfg;
	struct ssrc_feed_state state;
	int64_t due_ns;			/* CLOCK_MONOTONIC */
	/* The last refusal logged (its reason and status); none: -1. */
	int refused;
	long refused_status;
};

struct sagent_feeds {
	struct sagent_feeds_stats *stats;
	char state_dir[4096];
	enum sxdp_store_sync store_sync;
	struct sxdp_store *store;
	unsigned int nr;
	struct feed feeds[SCONF_MAX_FEEDS];
	pthread_t thread;
	/* Guards @stop, @next and @changed; @wake is signalled on each. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop, changed;
	atomic_bool cancel;		/* set by stop, outside @lock: aborts a fetch */
	unsigned int next_nr;
	struct sconf_feed_config next[SCONF_MAX_FEEDS];
};

static void count(atomic_uint_fast64_t *c)
{
	atomic_fetch_add(c, 1);
}

/*
 * The log of one refresh's result: see the top. A refusal is the same
 * one while its reason and HTTP status are (the text may vary: a
 * timeout's says how many milliseconds it took).
 */
static void report(struct feed *fd, const struct ssrc_feed_result *r)
{
	const struct sconf_feed_config *c = &fd->cfg;

	if (r->outcome == SSRC_FEED_REFUSED) {
		if (fd->refused != (int)r->reason || fd->refused_status != r->http_status)
			sagent_log(SAGENT_WARNING, "feed %s: refused (%s): %s; list %s keeps what "
				   "it holds (logged once; tried again every %us)", c->name,
				   ssrc_feed_refusal_name(r->reason), r->msg, c->list,
				   c->interval_s);
		fd->refused = r->reason;
		fd->refused_status = r->http_status;
		return;
	}
	if (fd->refused >= 0)
		sagent_log(SAGENT_INFO, "feed %s: refreshes again", c->name);
	fd->refused = -1;
	if (r->outcome == SSRC_FEED_LOADED)
		sagent_log(SAGENT_INFO, "feed %s: loaded %" PRIu64 " entries into list %s: %zu new, "
			   "%zu no longer in it%s%s", c->name, r->entries, c->list, r->added,
			   r->dropped, r->unreached ? "; " : "", r->unreached ? r->msg : "");
}

static void refresh(struct sagent_feeds *f, unsigned int i)
{
	struct sagent_feed_stats *st = &f->stats->f[i];
	struct feed *fd = &f->feeds[i];
	struct ssrc_feed_result r;
	uint64_t held;

	ssrc_feed_refresh(f->store, &fd->cfg, &fd->state, &f->cancel, &r);
	if (atomic_load(&f->cancel))
		return;		/* stopping: a cut fetch is no refusal */
	atomic_store(&st->last_attempt, time(NULL));
	atomic_store(&st->last_status, r.http_status);
	count(&st->refreshes[r.outcome]);
	if (r.outcome == SSRC_FEED_REFUSED)
		count(&st->refusals[r.reason]);
	else
		atomic_store(&st->last_success, time(NULL));
	if (!sxdp_store_count(f->store, fd->cfg.list, -1, fd->cfg.name, &held))
		atomic_store(&st->entries, held);
	report(fd, &r);
}

/* A feed kept by a reload: same name; its state too if it is the same download. */
static const struct feed *kept(const struct feed *old, unsigned int nr_old,
			       const struct sconf_feed_config *c)
{
	unsigned int i;

	for (i = 0; i < nr_old; i++)
		if (!strcmp(old[i].cfg.name, c->name))
			return &old[i];
	return NULL;
}

static bool same_download(const struct sconf_feed_config *a, const struct sconf_feed_config *b)
{
	return !strcmp(a->url, b->url) && !strcmp(a->list, b->list) && a->format == b->format;
}

/*
 * The sections of a reload, on the thread: a new feed is due now, a kept
 * one keeps its schedule (within its new interval) and counters, and its
 * validators if it downloads the same thing into the same list.
 */
static void apply_reload(struct sagent_feeds *f, const struct sconf_feed_config *next,
			 unsigned int nr, int64_t now)
{
	static struct feed old[SCONF_MAX_FEEDS];	/* one thread: not on its stack */
	static struct sagent_feed_stats old_st[SCONF_MAX_FEEDS];
	struct sagent_feeds_stats *st = f->stats;
	unsigned int i, nr_old = f->nr;
	const struct feed *k;

	memcpy(old, f->feeds, sizeof(old));
	pthread_mutex_lock(&st->lock);
	memcpy(old_st, st->f, sizeof(old_st));
	memset(st->f, 0, sizeof(st->f));
	memset(f->feeds, 0, sizeof(f->feeds));
	for (i = 0; i < nr; i++) {
		struct feed *fd = &f->feeds[i];

		fd->cfg = next[i];
		fd->due_ns = now;
		fd->refused = -1;
		k = kept(old, nr_old, &next[i]);
		if (k) {
			if (k->due_ns < now + (int64_t)next[i].interval_s * 1000000000)
				fd->due_ns = k->due_ns;
			if (same_download(&k->cfg, &next[i])) {
				fd->state = k->state;
				fd->refused = k->refused;
				fd->refused_status = k->refused_status;
			}
			st->f[i] = old_st[k - old];
		}
		memcpy(st->f[i].name, next[i].name, sizeof(st->f[i].name));
		memcpy(st->f[i].list, next[i].list, sizeof(st->f[i].list));
	}
	f->nr = nr;
	st->nr = nr;
	pthread_mutex_unlock(&st->lock);
}

/* Waits until @due_ns or a wake-up; true to stop. Under f->lock. */
static bool wait_until(struct sagent_feeds *f, int64_t due_ns)
{
	struct timespec ts = { .tv_sec = due_ns / 1000000000, .tv_nsec = due_ns % 1000000000 };

	while (!f->stop && !f->changed && sagent_now_ns() < due_ns)
		if (pthread_cond_timedwait(&f->wake, &f->lock, &ts) == ETIMEDOUT)
			break;
	return f->stop;
}

static void *feeds_main(void *arg)
{
	static struct sconf_feed_config next[SCONF_MAX_FEEDS];
	struct sagent_feeds *f = arg;
	unsigned int i, nr;
	int64_t now, soonest;

	for (;;) {
		pthread_mutex_lock(&f->lock);
		if (f->stop) {
			pthread_mutex_unlock(&f->lock);
			break;
		}
		nr = 0;
		if (f->changed) {
			nr = f->next_nr;
			memcpy(next, f->next, sizeof(next[0]) * nr);
			f->changed = false;
			pthread_mutex_unlock(&f->lock);
			apply_reload(f, next, nr, sagent_now_ns());
		} else {
			pthread_mutex_unlock(&f->lock);
		}
		now = sagent_now_ns();
		/* A day without feeds is a long sleep a reload or the stop cuts short. */
		soonest = now + 86400LL * 1000000000;
		for (i = 0; i < f->nr; i++) {
			if (f->feeds[i].due_ns <= now) {
				refresh(f, i);
				now = sagent_now_ns();
				f->feeds[i].due_ns = now + (int64_t)f->feeds[i].cfg.interval_s *
							 1000000000;
			}
			if (f->feeds[i].due_ns < soonest)
				soonest = f->feeds[i].due_ns;
		}
		pthread_mutex_lock(&f->lock);
		wait_until(f, soonest);
		pthread_mutex_unlock(&f->lock);
	}
	return NULL;
}

void sagent_feeds_reload(struct sagent_feeds *f, const struct sconf_config *c)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->next_nr = c->nr_feeds;
	memcpy(f->next, c->feeds, sizeof(f->next[0]) * c->nr_feeds);
	f->changed = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
}

int sagent_feeds_start(struct sagent *ag, struct sagent_feeds **fp, char *err, size_t errlen)
{
	pthread_condattr_t ca;
	struct sagent_feeds *f;
	int ret;

	*fp = NULL;
	ret = ssrc_http_init();
	if (ret) {
		snprintf(err, errlen, "initialising libcurl: %s", strerror(-ret));
		return ret;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f->stats = &ag->stats.feeds;
	/* Its own connection: the loads of this thread and the loop's expiry never share one. */
	ret = sxdp_store_open_sync(ag->cfg.state_dir, ag->cfg.store_sync, &f->store, err, errlen);
	if (ret)
		goto out_free;
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);	/* sagent_now_ns()'s clock */
	pthread_cond_init(&f->wake, &ca);
	pthread_condattr_destroy(&ca);
	sagent_feeds_reload(f, &ag->cfg);
	ret = -pthread_create(&f->thread, NULL, feeds_main, f);
	if (ret) {
		snprintf(err, errlen, "starting the feeds' thread: %s", strerror(-ret));
		goto out_destroy;
	}
	*fp = f;
	return 0;
out_destroy:
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	sxdp_store_close(f->store);
out_free:
	free(f);
	return ret;
}

void sagent_feeds_stop(struct sagent_feeds *f)
{
	if (!f)
		return;
	atomic_store(&f->cancel, true);
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	sxdp_store_close(f->store);
	free(f);
}
