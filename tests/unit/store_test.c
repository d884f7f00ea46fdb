// SPDX-License-Identifier: GPL-2.0
/*
 * The blocklist store (userspace/xdp/store.c), each case in a folder of
 * its own under /tmp: entries round trip, upserts, a feed refresh that
 * keeps other origins, a bulk refresh's expiries and comments (and its
 * cost: O(n log n)), the fast key text against sxdp_format_entry(),
 * expiry, list versions, bad and foreign files,
 * migration from an empty database and from a version-1 store, the
 * allowlist beside the blocklist, the keys add_fresh reports new, list
 * names, attachments, read snapshots against a second writer, two
 * writers at once, and writers killed with SIGKILL mid-transaction. The cost of adding one entry (and
 * of a bulk load) is printed, not asserted; SIEVE_STORE_BENCH=1 adds the
 * 10^6-entry numbers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "unit.h"
#include "store.h"

struct store_dir {
	char base[64];		/* the mkdtemp folder */
	char dir[96];		/* the state folder, made by the store */
	char db[128];
};

static bool store_dir_make(struct sieve_test *t, struct store_dir *d)
{
	strcpy(d->base, "/tmp/sieve-store-XXXXXX");
	if (!mkdtemp(d->base)) {
		CHECKF(t, 0, "mkdtemp: %s", strerror(errno));
		return false;
	}
	snprintf(d->dir, sizeof(d->dir), "%s/state", d->base);
	snprintf(d->db, sizeof(d->db), "%s/%s", d->dir, SXDP_STORE_FILE);
	return true;
}

static void store_dir_clean(struct store_dir *d)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->base);
	if (system(cmd))
		fprintf(stderr, "%s failed\n", cmd);
}

static struct sxdp_store *store_open(struct sieve_test *t, const struct store_dir *d)
{
	struct sxdp_store *s = NULL;
	char err[512] = "";
	int ret;

	ret = sxdp_store_open(d->dir, &s, err, sizeof(err));
	CHECKF(t, !ret, "open %s: %d %s", d->dir, ret, err);
	return ret ? NULL : s;
}

/* Key number @i of kind @kind (src, prefix, service, flow). */
static struct sieve_xdp_key key_n(unsigned int kind, unsigned int i)
{
	struct sieve_xdp_key key;
	const char *why;
	char text[96];

	switch (kind) {
	case SIEVE_XDP_SRC:
		snprintf(text, sizeof(text), "10.%u.%u.%u", i >> 16 & 255, i >> 8 & 255, i & 255);
		break;
	case SIEVE_XDP_PREFIX:
		snprintf(text, sizeof(text), "2001:db8:%x::/48", i & 0xffff);
		break;
	case SIEVE_XDP_SERVICE:
		snprintf(text, sizeof(text), "tcp:192.0.2.%u:%u", i & 255, 1 + (i >> 8 & 0xffff));
		break;
	default:
		snprintf(text, sizeof(text), "udp:198.51.100.%u:%u,192.0.2.1:53", i & 255,
			 1 + (i >> 8 & 0xffff));
	}
	memset(&key, 0, sizeof(key));
	if (sxdp_parse_entry(text, &key, &why))
		fprintf(stderr, "key_n: %s: %s\n", text, why);
	return key;
}

/* @n source keys from number @first. */
static struct sieve_xdp_key *keys_src(unsigned int first, size_t n)
{
	struct sieve_xdp_key *keys = calloc(n ? n : 1, sizeof(*keys));
	size_t i;

	for (i = 0; keys && i < n; i++)
		keys[i] = key_n(SIEVE_XDP_SRC, first + i);
	return keys;
}

static uint64_t count(struct sxdp_store *s, const char *list, int kind, const char *origin)
{
	uint64_t n = UINT64_MAX;

	sxdp_store_count(s, list, kind, origin, &n);
	return n;
}

static uint64_t version(struct sxdp_store *s, const char *list)
{
	uint64_t v = UINT64_MAX;

	sxdp_store_version(s, list, &v);
	return v;
}

static bool has(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *key)
{
	struct sxdp_keys l = { 0 };
	bool found;

	if (sxdp_store_read(s, list, &l, NULL, 0))
		return false;
	sxdp_keys_sort(&l);
	found = sxdp_keys_find(&l, key);
	sxdp_keys_free(&l);
	return found;
}

/* One integer from @sql on the file itself, not through the store. */
static int64_t raw_int(const char *path, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;
	sqlite3 *db;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}

static int raw_exec(const char *path, const char *sql)
{
	sqlite3 *db;
	int rc;

	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

static bool integrity_ok(const char *path)
{
	sqlite3_stmt *st;
	bool ok = false;
	sqlite3 *db;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK) {
		ok = sqlite3_step(st) == SQLITE_ROW &&
		     !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return ok;
}

/* Whether SQLite's plan for @sql names index @index (EXPLAIN QUERY PLAN's detail column). */
static bool plan_uses(const char *path, const char *sql, const char *index)
{
	char explain[512];
	sqlite3_stmt *st;
	bool uses = false;
	sqlite3 *db;

	snprintf(explain, sizeof(explain), "EXPLAIN QUERY PLAN %s", sql);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, explain, -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW)
			uses |= strstr((const char *)sqlite3_column_text(st, 3), index) != NULL;
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return uses;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (int)(st.st_mode & 07777);
}

struct seen {
	unsigned int n, with_comment, never;
};

static int seen_one(const struct sxdp_store_entry *e, void *ctx)
{
	struct seen *s = ctx;

	s->n++;
	s->with_comment += e->comment != NULL;
	s->never += e->expires_at == 0;
	return 0;
}

/* Entries of every kind come back as they went in, after a reopen too. */
static void sieve_unit_store_round_trip(struct sieve_test *t)
{
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1000 };
	struct sieve_xdp_key keys[8];
	struct sxdp_keys l = { 0 };
	struct sxdp_store *s;
	struct store_dir d;
	struct seen seen = { 0 };
	size_t added, i;
	char err[512];

	if (!store_dir_make(t, &d))
		return;
	s = store_open(t, &d);
	if (!s)
		goto out;
	/* The folder is private to root, the file too. */
	CHECKF(t, mode_of(d.dir) == 0700, "state folder mode %o", mode_of(d.dir));
	CHECKF(t, mode_of(d.db) == 0600, "store file mode %o", mode_of(d.db));
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		keys[i] = key_n(i % SIEVE_XDP_NR_KINDS, i);
	CHECKF(t, !sxdp_store_add(s, "edge", keys, 4, &a, &added, err, sizeof(err)) && added == 4,
	       "add: %s", err);
	a.comment = "noisy";
	a.expires_at = 5000;
	CHECKF(t, !sxdp_store_add(s, "edge", keys + 4, 4, &a, &added, err, sizeof(err)) &&
	       added == 4, "add: %s", err);
	sxdp_store_close(s);

	s = store_open(t, &d);
	if (!s)
		goto out;
	CHECKF(t, !sxdp_store_read(s, "edge", &l, err, sizeof(err)) && l.n == 8, "read %zu: %s",
	       l.n, err);
	sxdp_keys_sort(&l);
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		CHECKF(t, sxdp_keys_find(&l, &keys[i]), "key %zu lost", i);
	sxdp_keys_free(&l);
	sxdp_store_foreach(s, "edge", seen_one, &seen, err, sizeof(err));
	CHECKF(t, seen.n == 8 && seen.with_comment == 4 && seen.never == 4,
	       "foreach: %u entries, %u comments, %u never", seen.n, seen.with_comment, seen.never);
	CHECKF(t, count(s, "edge", -1, NULL) == 8, "count all");
	CHECKF(t, count(s, "edge", SIEVE_XDP_SERVICE, NULL) == 2, "count service");
	CHECKF(t, count(s, "edge", -1, "cli") == 8 && count(s, "edge", -1, "feed") == 0,
	       "count by origin");
	/* Lists are apart. */
	CHECKF(t, count(s, "other", -1, NULL) == 0 && version(s, "other") == 0, "other list");
	sxdp_store_close(s);
out:
	store_dir_clean(&d);
}

/* Re-adding a key updates expiry, origin and comment, keeps added_at. */
static void sieve_unit_store_upsert(struct sieve_test *t)
{
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1000, .expires_at = 2000 };
	struct sieve_xdp_key *keys = keys_src(0, 10);
	struct sxdp_store *s;
	struct store_dir d;
	size_t added = 99;
	char err[512];

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	sxdp_store_add(s, "l", keys, 5, &a, &added, err, sizeof(err));
	a = (struct sxdp_store_attrs){ .origin = "feedA", .now = 3000, .comment = "c" };
	/* Five of ten are new. */
	CHECKF(t, !sxdp_store_add(s, "l", keys, 10, &a, &added, err, sizeof(err)) && added == 5,
	       "re-add: %zu new, %s", added, err);
	CHECKF(t, count(s, "l", -1, "feedA") == 10, "origin not updated");
	CHECKF(t, raw_int(d.db, "SELECT count(*) FROM entries WHERE expires_at IS NULL AND "
			  "comment = 'c'") == 10, "expiry/comment not updated");
	CHECKF(t, raw_int(d.db, "SELECT count(*) FROM entries WHERE added_at = 1000") == 5,
	       "added_at of re-added keys changed");
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

/* A feed refresh replaces its own entries and leaves cli and other feeds. */
static void sieve_unit_store_replace_origin(struct sieve_test *t)
{
	struct sxdp_store_attrs cli = { .origin = "cli", .now = 1 };
	struct sxdp_store_attrs fa = { .origin = "feedA", .now = 1 };
	struct sxdp_store_attrs fb = { .origin = "feedB", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, 100);
	size_t added = 0, removed = 0;
	struct sxdp_store *s;
	struct store_dir d;
	uint64_t v;
	char err[512];

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	/* cli: 0-9; feedA: 10-49; feedB: 50-59; feedA refreshed to 30-69 plus 5 (cli's). */
	sxdp_store_add(s, "l", keys, 10, &cli, NULL, err, sizeof(err));
	sxdp_store_add(s, "l", keys + 10, 40, &fa, NULL, err, sizeof(err));
	sxdp_store_add(s, "l", keys + 50, 10, &fb, NULL, err, sizeof(err));
	v = version(s, "l");
	keys[29] = keys[5];
	CHECKF(t, !sxdp_store_replace_origin(s, "l", keys + 29, 41, &fa, &added, &removed,
					     err, sizeof(err)), "replace: %s", err);
	/* 50-69 are new to feedA but 50-59 are feedB's: 60-69 are new; 10-29 go. */
	CHECKF(t, added == 10 && removed == 20, "added %zu removed %zu", added, removed);
	CHECKF(t, count(s, "l", -1, "cli") == 10, "cli entries: %llu",
	       (unsigned long long)count(s, "l", -1, "cli"));
	CHECKF(t, count(s, "l", -1, "feedB") == 10, "feedB entries touched");
	CHECKF(t, count(s, "l", -1, "feedA") == 30, "feedA entries: %llu",
	       (unsigned long long)count(s, "l", -1, "feedA"));
	CHECKF(t, !has(s, "l", &keys[10]) && has(s, "l", &keys[30]) && has(s, "l", &keys[69]),
	       "the wrong keys");
	CHECKF(t, version(s, "l") == v + 1, "version %llu after %llu",
	       (unsigned long long)version(s, "l"), (unsigned long long)v);
	/* The same refresh again changes nothing. */
	CHECKF(t, !sxdp_store_replace_origin(s, "l", keys + 29, 41, &fa, &added, &removed,
					     err, sizeof(err)) && !added && !removed &&
	       version(s, "l") == v + 1, "a repeated refresh changed something");
	/* An empty refresh asked to refuse (the CLI's default): refused, nothing changed. */
	fa.refuse_empty = true;
	CHECKF(t, sxdp_store_replace_origin(s, "l", NULL, 0, &fa, &added, &removed, err,
					    sizeof(err)) == -ENODATA, "an empty refresh taken");
	CHECKF(t, strstr(err, "refusing to remove them all") && count(s, "l", -1, "feedA") == 30 &&
	       version(s, "l") == v + 1, "a refused empty refresh changed something: %s", err);
	/* Over an origin with no entries (a first load), empty is no loss: taken. */
	fb.origin = "feedC";
	fb.refuse_empty = true;
	CHECKF(t, !sxdp_store_replace_origin(s, "l", NULL, 0, &fb, &added, &removed, err,
					     sizeof(err)), "an empty first load refused: %s", err);
	/* Not asked to refuse (--allow-empty): an empty refresh removes the feed. */
	fa.refuse_empty = false;
	CHECKF(t, !sxdp_store_replace_origin(s, "l", NULL, 0, &fa, &added, &removed, err,
					     sizeof(err)) && removed == 30 &&
	       count(s, "l", -1, NULL) == 20, "empty refresh: removed %zu", removed);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

/*
 * A refresh names the keys it dropped (ops.c takes a refresh that only
 * drops out of the live maps with them): exactly the origin's entries not
 * in the batch, no other origin's; past the bound, none and *over set,
 * the refresh done all the same.
 */
static void sieve_unit_store_replace_origin_gone(struct sieve_test *t)
{
	struct sxdp_store_attrs cli = { .origin = "cli", .now = 1 };
	struct sxdp_store_attrs fa = { .origin = "feedA", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, 60);
	struct sxdp_keys gone = { 0 }, fresh = { 0 };
	size_t added = 9, removed = 0, i;
	struct sxdp_store *s;
	struct store_dir d;
	bool over = true;
	char err[512];

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	/* cli: 0-9; feedA: 10-49, refreshed to 20-49, then to 30-49 past a bound of 5. */
	sxdp_store_add(s, "l", keys, 10, &cli, NULL, err, sizeof(err));
	sxdp_store_add(s, "l", keys + 10, 40, &fa, NULL, err, sizeof(err));
	CHECKF(t, !sxdp_store_replace_origin_gone(s, "l", keys + 20, 30, &fa, &added, &removed,
						  &gone, NULL, 100, &over, err,
						  sizeof(err)),
	       "replace: %s", err);
	CHECKF(t, !added && removed == 10 && gone.n == 10 && !over,
	       "added %zu removed %zu gone %zu over %d", added, removed, gone.n, over);
	sxdp_keys_sort(&gone);
	for (i = 10; i < 20; i++)
		CHECKF(t, sxdp_keys_find(&gone, &keys[i]), "dropped key %zu not named", i);
	CHECKF(t, !has(s, "l", &keys[15]) && has(s, "l", &keys[5]) && has(s, "l", &keys[20]),
	       "the wrong keys went");
	sxdp_keys_free(&gone);
	CHECKF(t, !sxdp_store_replace_origin_gone(s, "l", keys + 30, 20, &fa, &added, &removed,
						  &gone, NULL, 5, &over, err,
						  sizeof(err)),
	       "replace past the bound: %s", err);
	CHECKF(t, removed == 10 && over && !gone.n, "past the bound: removed %zu over %d gone %zu",
	       removed, over, gone.n);
	CHECKF(t, count(s, "l", -1, "feedA") == 20 && count(s, "l", -1, "cli") == 10,
	       "past the bound: feedA %llu cli %llu",
	       (unsigned long long)count(s, "l", -1, "feedA"),
	       (unsigned long long)count(s, "l", -1, "cli"));
	sxdp_keys_free(&gone);
	/* 30-49 to 35-54 names both sides: 30-34 went, 50-54 came (keys_src makes 0-59). */
	CHECKF(t, !sxdp_store_replace_origin_gone(s, "l", keys + 35, 20, &fa, &added, &removed,
						  &gone, &fresh, 10, &over, err, sizeof(err)),
	       "replace with adds: %s", err);
	CHECKF(t, added == 5 && removed == 5 && gone.n == 5 && fresh.n == 5 && !over,
	       "adds and drops: added %zu removed %zu gone %zu fresh %zu over %d", added,
	       removed, gone.n, fresh.n, over);
	sxdp_keys_sort(&fresh);
	for (i = 50; i < 55; i++)
		CHECKF(t, sxdp_keys_find(&fresh, &keys[i]), "new key %zu not named", i);
	sxdp_keys_free(&gone);
	sxdp_keys_free(&fresh);
	/* Back to 30-49: ten changes past a bound of 9, none named. */
	CHECKF(t, !sxdp_store_replace_origin_gone(s, "l", keys + 30, 20, &fa, &added, &removed,
						  &gone, &fresh, 9, &over, err, sizeof(err)),
	       "replace with adds past the bound: %s", err);
	CHECKF(t, added == 5 && removed == 5 && !gone.n && !fresh.n && over,
	       "adds past the bound: gone %zu fresh %zu over %d", gone.n, fresh.n, over);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

/* One entry's expiry, comment and origin, through foreach. */
struct entry_probe {
	const char *key;
	bool found;
	int64_t expires_at;
	char comment[32];
	char origin[32];
};

static int probe_cb(const struct sxdp_store_entry *e, void *ctx)
{
	struct entry_probe *p = ctx;

	if (strcmp(e->key, p->key))
		return 0;
	p->found = true;
	p->expires_at = e->expires_at;
	snprintf(p->comment, sizeof(p->comment), "%s", e->comment ? e->comment : "");
	snprintf(p->origin, sizeof(p->origin), "%s", e->origin);
	return 0;
}

static struct entry_probe probe(struct sxdp_store *s, const char *list, const char *key)
{
	struct entry_probe p = { .key = key };

	sxdp_store_foreach(s, list, probe_cb, &p, NULL, 0);
	return p;
}

/*
 * The re-ban rule (issue 22): a re-add keeps the later expiry. A longer
 * TTL extends, a shorter one does not shorten, an add without an expiry
 * of its own (keep_expiry) keeps the one there rather than making it
 * permanent, never (0) makes it permanent, and an entry already due is
 * banned afresh. Each step says whether it counted as an update.
 */
static void sieve_unit_store_reban(struct sieve_test *t)
{
	static const struct {
		int64_t now, expires_at;
		bool keep;
		int64_t want;		/* the expiry after; 0 never */
		size_t updated;
	} steps[] = {
		{ 1000, 2000, false, 2000, 0 },	/* a new entry: its own TTL */
		{ 1100, 5000, false, 5000, 1 },	/* longer: extends */
		{ 1200, 3000, false, 5000, 0 },	/* shorter: kept */
		{ 1300, 0, true, 5000, 0 },	/* no TTL given: kept, not permanent */
		{ 1400, 0, false, 0, 1 },	/* never: permanent */
		{ 1500, 9000, false, 0, 0 },	/* a TTL does not shorten never */
		{ 1600, 0, true, 0, 0 },
	};
	struct sieve_xdp_key *keys = keys_src(0, 1);
	struct sxdp_keys fresh = { 0 };
	struct sxdp_store_attrs a;
	struct sxdp_store *s;
	struct store_dir d;
	size_t i, updated;
	char err[512];

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		a = (struct sxdp_store_attrs){ .origin = "cli", .now = steps[i].now,
					       .expires_at = steps[i].expires_at,
					       .keep_expiry = steps[i].keep };
		updated = 99;
		CHECKF(t, !sxdp_store_add_fresh(s, "l", keys, 1, &a, &fresh, &updated, err,
						sizeof(err)), "step %zu: %s", i, err);
		CHECKF(t, probe(s, "l", "10.0.0.0").expires_at == steps[i].want &&
		       updated == steps[i].updated,
		       "step %zu: expiry %lld (want %lld), updated %zu (want %zu)", i,
		       (long long)probe(s, "l", "10.0.0.0").expires_at, (long long)steps[i].want,
		       updated, steps[i].updated);
	}
	CHECKF(t, fresh.n == 1, "new keys: %zu, want the first add's", fresh.n);
	/* Shortening: an unblock, then a block with the shorter TTL. */
	CHECKF(t, !sxdp_store_remove(s, "l", keys, 1, NULL, err, sizeof(err)), "unblock: %s", err);
	a = (struct sxdp_store_attrs){ .origin = "cli", .now = 1700, .expires_at = 1800 };
	sxdp_store_add(s, "l", keys, 1, &a, NULL, err, sizeof(err));
	CHECKF(t, probe(s, "l", "10.0.0.0").expires_at == 1800, "unblock+block: %lld",
	       (long long)probe(s, "l", "10.0.0.0").expires_at);
	/* Due (1800 <= now) and not yet expired: a re-add without a TTL bans afresh, for good. */
	a = (struct sxdp_store_attrs){ .origin = "cli", .now = 1900, .keep_expiry = true };
	sxdp_store_add(s, "l", keys, 1, &a, NULL, err, sizeof(err));
	CHECKF(t, probe(s, "l", "10.0.0.0").expires_at == 0, "a due entry re-added: %lld",
	       (long long)probe(s, "l", "10.0.0.0").expires_at);
	/* The fleet's mirror (only_own) copies the fleet's expiry as it is. */
	a = (struct sxdp_store_attrs){ .origin = "cli", .now = 2000, .expires_at = 2500,
				       .only_own = true };
	sxdp_store_add(s, "l", keys, 1, &a, NULL, err, sizeof(err));
	CHECKF(t, probe(s, "l", "10.0.0.0").expires_at == 2500, "the fleet's mirror: %lld",
	       (long long)probe(s, "l", "10.0.0.0").expires_at);
	sxdp_store_close(s);
out:
	sxdp_keys_free(&fresh);
	free(keys);
	store_dir_clean(&d);
}

/*
 * A refresh is one statement per step over the whole batch: a refresh of
 * a large feed gives its kept entries the feed's new expiry (per key) and
 * comment, takes the new ones, drops the rest, and costs O(n log n), not
 * a pass over the batch per entry (a join the planner once ran the wrong
 * way round took 12 minutes at 10^6, and this case 30 s).
 */
#define BULK_N	20000

static void sieve_unit_store_replace_bulk(struct sieve_test *t)
{
	struct sxdp_store_attrs fa = { .origin = "feedA", .now = 7 };
	struct sieve_xdp_key *keys = keys_src(0, BULK_N + 10);
	int64_t *each = calloc(BULK_N, sizeof(*each));
	struct timespec t0, t1;
	size_t i, added = 0, removed = 0;
	struct entry_probe p;
	struct sxdp_store *s;
	struct store_dir d;
	char err[512] = "";
	double secs, first;
	uint64_t v;

	if (!keys || !each || !store_dir_make(t, &d)) {
		CHECKF(t, keys && each, "out of memory");
		goto out_free;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECKF(t, !sxdp_store_replace_origin(s, "l", keys, BULK_N, &fa, &added, &removed, err,
					     sizeof(err)) && added == BULK_N && !removed,
	       "first load: added %zu %s", added, err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	first = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	v = version(s, "l");
	/* 10..BULK_N+9: 10 new, 10 gone, every kept one a new expiry and a comment. */
	for (i = 0; i < BULK_N; i++)
		each[i] = 1000 + (i % 7);
	fa.expires_each = each;
	fa.comment = "refreshed";
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECKF(t, !sxdp_store_replace_origin(s, "l", keys + 10, BULK_N, &fa, &added, &removed,
					     err, sizeof(err)) && added == 10 && removed == 10,
	       "refresh: added %zu removed %zu %s", added, removed, err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* Linear: a few times the first load. The quadratic join took 50x and more. */
	CHECKF(t, secs < 2 + 10 * first, "a refresh of %d entries took %.2f s, the first load "
	       "%.2f s", BULK_N, secs, first);
	printf("    # refresh of %d entries: %.3f s, their first load %.3f s\n", BULK_N, secs,
	       first);
	CHECKF(t, version(s, "l") == v + 1 && count(s, "l", -1, "feedA") == BULK_N,
	       "after the refresh: version %llu, %llu entries", (unsigned long long)version(s, "l"),
	       (unsigned long long)count(s, "l", -1, "feedA"));
	CHECKF(t, !has(s, "l", &keys[9]) && has(s, "l", &keys[10]) && has(s, "l", &keys[BULK_N + 9]),
	       "the wrong keys after the refresh");
	/* keys[10 + i] got each[i]: keys[20] is i = 10, expiry 1003. */
	p = probe(s, "l", "10.0.0.20");
	CHECKF(t, p.found && p.expires_at == 1003 && !strcmp(p.comment, "refreshed"),
	       "a kept entry: found %d expiry %lld comment '%s'", p.found,
	       (long long)p.expires_at, p.comment);
	p = probe(s, "l", "10.0.78.41");	/* keys[20009]: new, i = 19999 */
	CHECKF(t, p.found && p.expires_at == 1000 + 19999 % 7 && !strcmp(p.comment, "refreshed"),
	       "a new entry: found %d expiry %lld comment '%s'", p.found,
	       (long long)p.expires_at, p.comment);
	/* The same again: nothing to write, no new version. */
	CHECKF(t, !sxdp_store_replace_origin(s, "l", keys + 10, BULK_N, &fa, &added, &removed,
					     err, sizeof(err)) && !added && !removed &&
	       version(s, "l") == v + 1, "a repeated refresh changed something");
	/* Only one expiry changes: one new version. */
	each[10] = 5000;
	CHECKF(t, !sxdp_store_replace_origin(s, "l", keys + 10, BULK_N, &fa, &added, &removed,
					     err, sizeof(err)) && !added && !removed &&
	       version(s, "l") == v + 2 && probe(s, "l", "10.0.0.20").expires_at == 5000,
	       "an expiry change: version %llu", (unsigned long long)version(s, "l"));
	sxdp_store_close(s);
out:
	store_dir_clean(&d);
out_free:
	free(keys);
	free(each);
}

/* The store's fast key text is sxdp_format_entry()'s, for every kind. */
static void sieve_unit_store_key_text(struct sieve_test *t)
{
	static const char *const fixed[] = {
		"0.0.0.0", "255.255.255.255", "1.2.3.4", "10.0.100.9", "199.99.9.0/24",
		"0.0.0.0/1", "128.0.0.0/1", "192.0.2.128/25", "2001:db8::1", "2001:db8::/32",
		"tcp:192.0.2.1:443", "udp:198.51.100.7:1000,192.0.2.1:53", "tcp:[2001:db8::1]:80",
	};
	char want[128], got[128];
	struct sieve_xdp_key key;
	const char *why;
	unsigned int i, kind, bad = 0;
	size_t len;

	for (i = 0; i < ARRAY_SIZE(fixed) + 4 * 70000; i++) {
		if (i < ARRAY_SIZE(fixed)) {
			if (sxdp_parse_entry(fixed[i], &key, &why)) {
				CHECKF(t, 0, "%s: %s", fixed[i], why);
				continue;
			}
		} else {
			kind = (i - ARRAY_SIZE(fixed)) % 4;
			key = key_n(kind, i * 2654435761u);
			if (kind == SIEVE_XDP_SERVICE) {	/* an IPv4 prefix of every length */
				memset(&key, 0, sizeof(key));
				key.kind = SIEVE_XDP_PREFIX;
				key.family = SIEVE_XDP_V4;
				key.prefix_len = i % 33;
				key.saddr[0] = htonl((i * 2654435761u) &
						     (key.prefix_len ? ~0u << (32 - key.prefix_len) : 0));
			} else if (kind == SIEVE_XDP_FLOW) {	/* any IPv4 address */
				memset(&key, 0, sizeof(key));
				key.kind = SIEVE_XDP_SRC;
				key.family = SIEVE_XDP_V4;
				key.prefix_len = 32;
				key.saddr[0] = i * 2654435761u;
			}
		}
		sxdp_format_entry(&key, want, sizeof(want));
		len = sxdp_store_key_text(&key, got, sizeof(got));
		if (strcmp(want, got) || len != strlen(want)) {
			if (!bad++)
				CHECKF(t, 0, "key text '%s' (%zu), sxdp_format_entry '%s'", got, len,
				       want);
		}
	}
	CHECKF(t, !bad, "%u key texts differ", bad);
}

struct text_order_check {
	struct sieve_test *t;
	char prev[64];
	size_t n, bad;
};

static int text_order_one(const char *key, const char *origin, void *ctx)
{
	struct text_order_check *c = ctx;

	if (c->n++ && strcmp(c->prev, key) >= 0 && !c->bad++)
		CHECKF(c->t, 0, "'%s' came after '%s'", key, c->prev);
	snprintf(c->prev, sizeof(c->prev), "%s", key);
	return 0;
}

/*
 * A batch of IPv4 hosts and prefixes is put in text order by numbers
 * (key_texts_make), not by strcmp: the batch's lookups and the order
 * SQLite takes from it must be strcmp's all the same. Fields whose
 * decimal strings are each other's heads (1, 10, 100, 19, 199, 2, 25,
 * 255), hosts beside prefixes of the same address, lengths of one and
 * two digits: every key is found, and they come back in strcmp order.
 */
static void sieve_unit_store_text_order(struct sieve_test *t)
{
	static const uint8_t octet[] = { 0, 1, 2, 9, 10, 11, 19, 20, 25, 99, 100, 101, 199, 200,
					 249, 250, 255 };
	static const uint8_t lens[] = { 1, 2, 3, 8, 9, 10, 16, 19, 24, 25, 30, 32 };
	struct sxdp_store_attrs fa = { .origin = "feedA", .now = 7 };
	struct text_order_check c = { .t = t };
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_key k;
	unsigned int i, seed = 22;
	struct sxdp_store *s;
	struct store_dir d;
	char err[512] = "";
	size_t added = 0;

	for (i = 0; i < 6000; i++) {
		uint32_t addr = 0, w;

		for (w = 0; w < 4; w++) {
			seed = seed * 1103515245 + 12345;
			addr = addr << 8 | octet[(seed >> 16) % sizeof(octet)];
		}
		memset(&k, 0, sizeof(k));
		k.family = SIEVE_XDP_V4;
		k.kind = i % 3 ? SIEVE_XDP_SRC : SIEVE_XDP_PREFIX;
		k.prefix_len = k.kind == SIEVE_XDP_SRC ? 32 : lens[(seed >> 8) % sizeof(lens)];
		k.saddr[0] = htonl(addr & (~0u << (32 - k.prefix_len)));
		if (sxdp_keys_add(&l, &k))
			break;
	}
	sxdp_keys_sort(&l);
	if (!store_dir_make(t, &d))
		goto out_free;
	s = store_open(t, &d);
	if (!s)
		goto out;
	CHECKF(t, !sxdp_store_replace_origin(s, "l", l.keys, l.n, &fa, &added, NULL, err,
					     sizeof(err)) && added == l.n,
	       "load of %zu keys: added %zu %s", l.n, added, err);
	CHECKF(t, !sxdp_store_origins_of(s, "l", false, l.keys, l.n, text_order_one, &c, err,
					 sizeof(err)) && c.n == l.n && !c.bad,
	       "origins_of: %zu of %zu keys, %zu out of order %s", c.n, l.n, c.bad, err);
	sxdp_store_close(s);
out:
	store_dir_clean(&d);
out_free:
	sxdp_keys_free(&l);
}

static int count_origins(const char *key, const char *origin, void *ctx)
{
	(*(size_t *)ctx)++;
	return 0;
}

/* The median of 7 sxdp_store_origins_of() calls of one key on @list, in ms. */
static double origins_of_ms(struct sxdp_store *s, const char *list,
			    const struct sieve_xdp_key *key, size_t *found)
{
	double ms[7], t0, x;
	char err[256];
	int i, j;

	for (i = 0; i < 7; i++) {
		t0 = now_ms();
		sxdp_store_origins_of(s, list, false, key, 1, count_origins, found, err,
				      sizeof(err));
		ms[i] = now_ms() - t0;
		for (j = i; j > 0 && ms[j - 1] > ms[j]; j--) {
			x = ms[j];
			ms[j] = ms[j - 1];
			ms[j - 1] = x;
		}
	}
	return ms[3];
}

/*
 * A lookup of a few keys (`unblock` asks whose they were) costs the same
 * on a list of 2000 and of 200000: a primary key lookup per key, never a
 * walk of the list. Walking it made the big list's lookup some 100 times
 * the small one's; the bound is ten times, plus 2 ms for a busy machine.
 */
static void sieve_unit_store_lookup_by_key(struct sieve_test *t)
{
	struct sxdp_store_attrs fa = { .origin = "feedA", .now = 7 };
	struct sieve_xdp_key *keys = keys_src(0, 200000);
	double small, big;
	size_t found = 0;
	struct sxdp_store *s;
	struct store_dir d;
	char err[512] = "";

	if (!keys || !store_dir_make(t, &d)) {
		CHECKF(t, keys != NULL, "out of memory");
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	CHECKF(t, !sxdp_store_replace_origin(s, "small", keys, 2000, &fa, NULL, NULL, err,
					     sizeof(err)) &&
	       !sxdp_store_replace_origin(s, "big", keys, 200000, &fa, NULL, NULL, err,
					  sizeof(err)), "loads: %s", err);
	small = origins_of_ms(s, "small", &keys[1000], &found);
	big = origins_of_ms(s, "big", &keys[1000], &found);
	CHECKF(t, found == 14, "origins_of found %zu of 14", found);
	CHECKF(t, big < 10 * small + 2, "one key's origin: %.3f ms on 200000 entries, %.3f ms "
	       "on 2000", big, small);
	printf("    # one key's origin: %.3f ms on 200000 entries, %.3f ms on 2000\n", big, small);
	sxdp_store_close(s);
out:
	store_dir_clean(&d);
	free(keys);
}

/* Expiry returns exactly the due entries, once. */
static void sieve_unit_store_expire(struct sieve_test *t)
{
	struct sieve_xdp_key *keys = keys_src(0, 30);
	struct sxdp_store_attrs a = { .origin = "cli", .now = 100 };
	struct sxdp_keys l = { 0 };
	struct sxdp_store *s;
	struct store_dir d;
	uint64_t v;
	size_t i;
	char err[512];

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	/* 0-9 never, 10-19 at 200, 20-29 at 300. */
	sxdp_store_add(s, "l", keys, 10, &a, NULL, err, sizeof(err));
	a.expires_at = 200;
	sxdp_store_add(s, "l", keys + 10, 10, &a, NULL, err, sizeof(err));
	a.expires_at = 300;
	sxdp_store_add(s, "l", keys + 20, 10, &a, NULL, err, sizeof(err));
	v = version(s, "l");
	CHECKF(t, !sxdp_store_expire(s, "l", 199, &l, err, sizeof(err)) && l.n == 0 &&
	       version(s, "l") == v, "expired early: %zu", l.n);
	CHECKF(t, !sxdp_store_expire(s, "l", 200, &l, err, sizeof(err)) && l.n == 10,
	       "expire at 200: %zu %s", l.n, err);
	sxdp_keys_sort(&l);
	for (i = 10; i < 20; i++)
		CHECKF(t, sxdp_keys_find(&l, &keys[i]), "key %zu not returned", i);
	CHECKF(t, version(s, "l") == v + 1 && count(s, "l", -1, NULL) == 20, "after expiry");
	l.n = 0;
	/* Again: nothing. */
	CHECKF(t, !sxdp_store_expire(s, "l", 200, &l, err, sizeof(err)) && l.n == 0 &&
	       version(s, "l") == v + 1, "expiry not idempotent");
	CHECKF(t, !sxdp_store_expire(s, "l", 1000000, NULL, err, sizeof(err)) &&
	       count(s, "l", -1, NULL) == 10, "expire without a list");
	sxdp_keys_free(&l);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

/* One bump per transaction that changes the list; none for no-ops. */
static void sieve_unit_store_version(struct sieve_test *t)
{
	struct sieve_xdp_key *keys = keys_src(0, 20);
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1 };
	struct sxdp_store *s;
	struct store_dir d;
	size_t missing = 0;
	char err[512];

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	CHECKF(t, version(s, "l") == 0, "new list version");
	sxdp_store_add(s, "l", keys, 10, &a, NULL, err, sizeof(err));
	CHECKF(t, version(s, "l") == 1, "after one add: %llu",
	       (unsigned long long)version(s, "l"));
	/* Three changes, one transaction, two lists. */
	CHECKF(t, !sxdp_store_begin(s, err, sizeof(err)), "begin: %s", err);
	sxdp_store_add(s, "l", keys + 10, 5, &a, NULL, err, sizeof(err));
	sxdp_store_add(s, "l", keys + 15, 5, &a, NULL, err, sizeof(err));
	sxdp_store_remove(s, "l", keys, 2, &missing, err, sizeof(err));
	sxdp_store_add(s, "m", keys, 1, &a, NULL, err, sizeof(err));
	CHECKF(t, !sxdp_store_commit(s, err, sizeof(err)), "commit: %s", err);
	CHECKF(t, version(s, "l") == 2 && version(s, "m") == 1, "after one transaction: %llu %llu",
	       (unsigned long long)version(s, "l"), (unsigned long long)version(s, "m"));
	/* No-ops: the same adds again, removing what is not there. */
	sxdp_store_add(s, "l", keys + 10, 10, &a, NULL, err, sizeof(err));
	CHECKF(t, !sxdp_store_remove(s, "l", keys, 2, &missing, err, sizeof(err)) && missing == 2,
	       "missing %zu", missing);
	CHECKF(t, version(s, "l") == 2, "a no-op bumped: %llu",
	       (unsigned long long)version(s, "l"));
	/* A rolled back transaction leaves version and entries. */
	sxdp_store_begin(s, err, sizeof(err));
	sxdp_store_remove(s, "l", keys + 10, 10, &missing, err, sizeof(err));
	sxdp_store_rollback(s);
	CHECKF(t, version(s, "l") == 2 && count(s, "l", -1, NULL) == 18, "rollback kept changes");
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

static bool file_read(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*buf = malloc(n + 1);
	*len = n;
	if (!*buf || fread(*buf, 1, n, f) != (size_t)n) {
		fclose(f);
		free(*buf);
		return false;
	}
	fclose(f);
	return true;
}

static void file_write(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
}

/* Opening @d's file fails with @want and @what in the message, leaving its bytes. */
static void expect_refused(struct sieve_test *t, const struct store_dir *d, int want,
			   const char *what, const char *label)
{
	struct sxdp_store *s = NULL;
	char *before = NULL, *after = NULL;
	size_t nb = 0, na = 0;
	char err[512] = "";
	int ret;

	file_read(d->db, &before, &nb);
	ret = sxdp_store_open(d->dir, &s, err, sizeof(err));
	CHECKF(t, ret == want, "%s: open gave %d, want %d (%s)", label, ret, want, err);
	CHECKF(t, strstr(err, what) && strstr(err, d->db), "%s: message '%s'", label, err);
	if (!ret)
		sxdp_store_close(s);
	file_read(d->db, &after, &na);
	CHECKF(t, before && after && nb == na && !memcmp(before, after, nb),
	       "%s: the file was changed", label);
	free(before);
	free(after);
}

/* Text, foreign databases, a newer schema: refused, untouched. Empty: migrated. */
static void sieve_unit_store_bad_files(struct sieve_test *t)
{
	static const char text[] = "# not a database\n192.0.2.1\n";
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, 5000);
	struct sxdp_store *s;
	struct store_dir d;
	struct sxdp_keys l = { 0 };
	char err[512] = "";
	char *buf = NULL;
	size_t len;
	int ret;

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	mkdir(d.dir, 0700);
	file_write(d.db, text, sizeof(text) - 1);
	expect_refused(t, &d, -EINVAL, "not a sieve store", "text file");

	unlink(d.db);
	raw_exec(d.db, "CREATE TABLE bans(ip TEXT); INSERT INTO bans VALUES ('192.0.2.1')");
	expect_refused(t, &d, -EINVAL, "something else", "foreign database");

	unlink(d.db);
	raw_exec(d.db, "PRAGMA application_id = 1234; PRAGMA user_version = 1");
	expect_refused(t, &d, -EINVAL, "another application", "other application id");

	/* A store of a newer sieve. */
	unlink(d.db);
	s = store_open(t, &d);
	sxdp_store_close(s);
	raw_exec(d.db, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99");
	expect_refused(t, &d, -EPROTONOSUPPORT, "newer", "future version");

	/*
	 * A few bytes of a real store's header. The store keeps its log across
	 * connections: it is folded into the file first, so that the damage
	 * is to what the file holds.
	 */
	unlink(d.db);
	s = store_open(t, &d);
	sxdp_store_close(s);
	raw_exec(d.db, "PRAGMA wal_checkpoint(TRUNCATE)");
	if (file_read(d.db, &buf, &len)) {
		file_write(d.db, buf, 50);
		free(buf);
	}
	ret = sxdp_store_open(d.dir, &s, err, sizeof(err));
	CHECKF(t, ret == -EINVAL && strstr(err, d.db), "50-byte header: %d %s", ret, err);
	if (!ret)
		sxdp_store_close(s);

	/* A store cut in half: refused at open or when read, never a crash. */
	unlink(d.db);
	s = store_open(t, &d);
	if (s) {
		sxdp_store_add(s, "l", keys, 5000, &a, NULL, err, sizeof(err));
		sxdp_store_close(s);
	}
	raw_exec(d.db, "PRAGMA wal_checkpoint(TRUNCATE)");
	if (file_read(d.db, &buf, &len)) {
		CHECKF(t, !truncate(d.db, len / 2), "truncate");
		free(buf);
	}
	err[0] = '\0';
	ret = sxdp_store_open(d.dir, &s, err, sizeof(err));
	if (!ret) {
		ret = sxdp_store_read(s, "l", &l, err, sizeof(err));
		sxdp_store_close(s);
	}
	CHECKF(t, ret == -EINVAL && strstr(err, d.db), "half a store: %d '%s'", ret, err);
	sxdp_keys_free(&l);

	/* An empty file and an empty database (version 0) are migrated. */
	unlink(d.db);
	file_write(d.db, "", 0);
	s = store_open(t, &d);
	sxdp_store_close(s);
	CHECKF(t, raw_int(d.db, "PRAGMA user_version") == SXDP_STORE_VERSION,
	       "empty file: version %lld", (long long)raw_int(d.db, "PRAGMA user_version"));
	unlink(d.db);
	raw_exec(d.db, "PRAGMA journal_mode = WAL; PRAGMA user_version = 0");
	s = store_open(t, &d);
	if (s) {
		CHECKF(t, !sxdp_store_add(s, "l", keys, 3, &a, NULL, err, sizeof(err)) &&
		       count(s, "l", -1, NULL) == 3, "migrated store: %s", err);
		sxdp_store_close(s);
	}
	CHECKF(t, raw_int(d.db, "PRAGMA user_version") == SXDP_STORE_VERSION &&
	       raw_int(d.db, "PRAGMA journal_mode") != -1, "empty database not migrated");
	free(keys);
	store_dir_clean(&d);
}

/* Key @key's canonical text, as the store keeps it and names it in messages. */
static const char *key_text(const struct sieve_xdp_key *key, char *buf, size_t len)
{
	sxdp_format_entry(key, buf, len);
	return buf;
}

/* How many keys @list has on one side: its allowlist if @allow, else its blocklist. */
static size_t side_n(struct sxdp_store *s, const char *list, bool allow)
{
	struct sxdp_keys l = { 0 };
	size_t n;

	n = sxdp_store_read_from(s, list, allow, &l, NULL, 0) ? SIZE_MAX : l.n;
	sxdp_keys_free(&l);
	return n;
}

/* Whether @key is on @list's allowlist (@allow) or blocklist. */
static bool has_on(struct sxdp_store *s, const char *list, bool allow,
		   const struct sieve_xdp_key *key)
{
	struct sxdp_keys l = { 0 };
	bool found;

	if (sxdp_store_read_from(s, list, allow, &l, NULL, 0))
		return false;
	sxdp_keys_sort(&l);
	found = sxdp_keys_find(&l, key);
	sxdp_keys_free(&l);
	return found;
}

/*
 * migrations[0] of store.c, copied and never to be edited: the schema of
 * a store a version-1 sieve wrote. Copied rather than shared so that an
 * edit of the first migration (which must never happen: stores in the
 * field have it) shows up as a v1 store this build can no longer read.
 */
static const char v1_schema[] =
	"CREATE TABLE lists ("
	"  name TEXT PRIMARY KEY NOT NULL,"
	"  version INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE entries ("
	"  list TEXT NOT NULL REFERENCES lists(name) ON DELETE CASCADE,"
	"  kind INTEGER NOT NULL,"
	"  allow INTEGER NOT NULL DEFAULT 0,"
	"  key TEXT NOT NULL,"
	"  added_at INTEGER NOT NULL,"
	"  expires_at INTEGER,"
	"  origin TEXT NOT NULL,"
	"  comment TEXT,"
	"  PRIMARY KEY (list, key)) WITHOUT ROWID;"
	"CREATE INDEX entries_expiry ON entries(list, expires_at) WHERE expires_at IS NOT NULL;"
	"CREATE INDEX entries_origin ON entries(list, origin);"
	"CREATE TABLE attachments ("
	"  netns INTEGER NOT NULL,"
	"  iface TEXT NOT NULL,"
	"  list TEXT NOT NULL REFERENCES lists(name),"
	"  mode TEXT NOT NULL,"
	"  backend TEXT NOT NULL,"
	"  flags INTEGER NOT NULL DEFAULT 0,"
	"  fpp_ppb INTEGER,"
	"  capacity INTEGER,"
	"  built_version INTEGER,"
	"  PRIMARY KEY (netns, iface));";

#define V1_APP_ID	0x53494556	/* "SIEV" */
#define V1_ENTRIES	8
#define NETNS_INIT	4026531840ULL	/* init_net's inode */
#define NETNS_OTHER	4026532288ULL

/* What v1_store_make() writes for entry @i of @keys. */
static bool v1_allow(unsigned int i) { return i >= 6; }
static int64_t v1_added(unsigned int i) { return 100 + i; }
static int64_t v1_expires(unsigned int i) { return i & 1 ? 7000 + i : 0; }
static const char *v1_origin(unsigned int i) { return i < 4 ? "cli" : "feedA"; }
static const char *v1_comment(unsigned int i) { return i == 0 ? "first" : NULL; }

/*
 * A store as a version-1 sieve left it, made with SQLite alone: list
 * "edge" at version 3 with V1_ENTRIES entries of every kind (two of them
 * allowed, half of them expiring), and eth0 of init_net attached to it.
 */
static int v1_store_make(const struct store_dir *d, const struct sieve_xdp_key *keys)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	char sql[256], text[128];
	unsigned int i;
	int rc;

	mkdir(d->dir, 0700);
	rc = sqlite3_open_v2(d->db, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	/* WAL, as the version-1 store set it. */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL; BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, v1_schema, NULL, NULL, NULL);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = 1; PRAGMA application_id = %d",
		 V1_APP_ID);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "INSERT INTO lists VALUES ('edge', 3);"
				  "INSERT INTO attachments VALUES (4026531840, 'eth0', 'edge', "
				  "'native', 'bloom-map', 1, 1000, 65536, 3)", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO entries(list, kind, allow, key, added_at, "
					"expires_at, origin, comment) VALUES "
					"('edge', ?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &st, NULL);
	for (i = 0; rc == SQLITE_OK && i < V1_ENTRIES; i++) {
		sqlite3_bind_int(st, 1, keys[i].kind);
		sqlite3_bind_int(st, 2, v1_allow(i));
		sqlite3_bind_text(st, 3, key_text(&keys[i], text, sizeof(text)), -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, v1_added(i));
		if (v1_expires(i))
			sqlite3_bind_int64(st, 5, v1_expires(i));
		else
			sqlite3_bind_null(st, 5);
		sqlite3_bind_text(st, 6, v1_origin(i), -1, SQLITE_STATIC);
		if (v1_comment(i))
			sqlite3_bind_text(st, 7, v1_comment(i), -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 7);
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? sqlite3_reset(st) : rc;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		fprintf(stderr, "v1 store: %s\n", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	sqlite3_close(db);
	return rc;
}

struct v1_check {
	struct sieve_test *t;
	const struct sieve_xdp_key *keys;
	unsigned int n, seen;	/* entries met; a bit per entry of keys */
};

/* Each entry the store gives back is one of v1_store_make()'s, as written. */
static int v1_check_one(const struct sxdp_store_entry *e, void *ctx)
{
	struct v1_check *c = ctx;
	struct sieve_test *t = c->t;
	char text[128];
	unsigned int i;

	c->n++;
	for (i = 0; i < V1_ENTRIES; i++)
		if (!strcmp(e->key, key_text(&c->keys[i], text, sizeof(text))))
			break;
	if (i == V1_ENTRIES) {
		CHECKF(t, 0, "v1: an entry '%s' that was not there", e->key);
		return 0;
	}
	c->seen |= 1U << i;
	CHECKF(t, e->kind == c->keys[i].kind && e->allow == v1_allow(i) &&
	       e->added_at == v1_added(i) && e->expires_at == v1_expires(i) &&
	       !strcmp(e->origin, v1_origin(i)) &&
	       (v1_comment(i) ? e->comment && !strcmp(e->comment, v1_comment(i)) : !e->comment),
	       "v1 entry %u (%s): kind %u allow %d added %lld expires %lld origin %s comment %s",
	       i, e->key, e->kind, e->allow, (long long)e->added_at, (long long)e->expires_at,
	       e->origin, e->comment ? e->comment : "(none)");
	return 0;
}

/*
 * A version-1 store is migrated to version 2 in place, its data kept, and
 * gets the index of allowed keys (a compatible index, made at open).
 */
static void sieve_unit_store_migrate_v1(struct sieve_test *t)
{
	struct v1_check c = { .t = t };
	struct sieve_xdp_key keys[V1_ENTRIES];
	struct sxdp_attachment a;
	struct sxdp_store *s;
	struct store_dir d;
	char err[512] = "";
	unsigned int i;
	int ret;

	for (i = 0; i < V1_ENTRIES; i++)
		keys[i] = key_n(i % SIEVE_XDP_NR_KINDS, i);
	c.keys = keys;
	if (!store_dir_make(t, &d))
		return;
	if (v1_store_make(&d, keys) != SQLITE_OK) {
		CHECKF(t, 0, "could not make the version-1 store");
		goto out;
	}
	CHECKF(t, raw_int(d.db, "PRAGMA user_version") == 1, "the v1 store is not at version 1");
	s = store_open(t, &d);
	if (!s)
		goto out;
	CHECKF(t, raw_int(d.db, "PRAGMA user_version") == SXDP_STORE_VERSION,
	       "user_version %lld after the open", (long long)raw_int(d.db, "PRAGMA user_version"));
	/* The allowlist is read through its own index, not a scan of the whole list. */
	CHECKF(t, raw_int(d.db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
			  "name = 'entries_allowed'") == 1, "no index entries_allowed");
	CHECKF(t, plan_uses(d.db, "SELECT key FROM entries WHERE list = 'edge' AND allow = 1 "
			    "ORDER BY key", "entries_allowed"),
	       "the allowlist read does not use entries_allowed");
	/* The IPv4 prefixes of a live unblock: their own index, not the list's sources. */
	CHECKF(t, plan_uses(d.db, "SELECT key FROM entries WHERE list = 'edge' AND kind = 1 AND "
			    "allow = 0 AND instr(key, ':') = 0", "entries_prefix"),
	       "the prefixes' read does not use entries_prefix");
	CHECKF(t, raw_int(d.db, "SELECT count(*) FROM pragma_table_info('attachments') WHERE "
			  "name = 'max_probes'") == 1, "no attachments.max_probes");
	/* The list's version is the one the maps were built from: kept, or they all rebuild. */
	CHECKF(t, version(s, "edge") == 3, "version %llu",
	       (unsigned long long)version(s, "edge"));
	sxdp_store_foreach(s, "edge", v1_check_one, &c, err, sizeof(err));
	CHECKF(t, c.n == V1_ENTRIES && c.seen == (1U << V1_ENTRIES) - 1,
	       "%u entries, seen %#x: %s", c.n, c.seen, err);
	CHECKF(t, side_n(s, "edge", false) == 6 && side_n(s, "edge", true) == 2,
	       "sides: %zu blocked, %zu allowed", side_n(s, "edge", false), side_n(s, "edge", true));

	/* The old row: its max_probes is NULL, which reads as 0 (the loader's default). */
	ret = sxdp_store_attach_get(s, NETNS_INIT, "eth0", &a, err, sizeof(err));
	CHECKF(t, !ret && !strcmp(a.list, "edge") && !strcmp(a.mode, "native") &&
	       !strcmp(a.backend, "bloom-map") && a.flags == 1 && a.fpp_ppb == 1000 &&
	       a.capacity == 65536 && a.max_probes == 0,
	       "v1 attachment: %d %s list %s mode %s backend %s flags %u fpp %u cap %llu "
	       "probes %u", ret, err, a.list, a.mode, a.backend, a.flags, a.fpp_ppb,
	       (unsigned long long)a.capacity, a.max_probes);
	a.max_probes = 6;
	CHECKF(t, !sxdp_store_attach_set(s, &a, err, sizeof(err)), "attach_set: %s", err);
	memset(&a, 0, sizeof(a));
	CHECKF(t, !sxdp_store_attach_get(s, NETNS_INIT, "eth0", &a, err, sizeof(err)) &&
	       a.max_probes == 6 && a.capacity == 65536 && !strcmp(a.list, "edge"),
	       "max_probes %u after the set", a.max_probes);
	sxdp_store_close(s);

	/* Opened again: nothing left to migrate (ALTER TABLE twice would fail). */
	s = store_open(t, &d);
	if (s) {
		CHECKF(t, !sxdp_store_attach_get(s, NETNS_INIT, "eth0", &a, err, sizeof(err)) &&
		       a.max_probes == 6, "max_probes %u after a reopen", a.max_probes);
		CHECKF(t, count(s, "edge", -1, NULL) == V1_ENTRIES && version(s, "edge") == 3,
		       "after a reopen: %llu entries", (unsigned long long)count(s, "edge", -1, NULL));
		sxdp_store_close(s);
	}
	CHECKF(t, raw_int(d.db, "PRAGMA user_version") == SXDP_STORE_VERSION && integrity_ok(d.db),
	       "the migrated store after a reopen");
out:
	store_dir_clean(&d);
}

/* Blocked and allowed keys of one list: apart, and never both at once. */
static void sieve_unit_store_allowlist(struct sieve_test *t)
{
	struct sxdp_store_attrs blk = { .origin = "cli", .now = 10 };
	struct sxdp_store_attrs alw = { .origin = "cli", .now = 10, .allow = true };
	struct sxdp_store_attrs fa_blk = { .origin = "feedA", .now = 20 };
	struct sxdp_store_attrs fa_alw = { .origin = "feedA", .now = 20, .allow = true };
	struct sieve_xdp_key *keys = keys_src(0, 60);
	struct sieve_xdp_key batch[12], pfx[2];
	uint64_t kinds[SIEVE_XDP_NR_KINDS], allowed = 99, v;
	size_t added = 99, removed = 99, missing = 99, i;
	struct sxdp_keys l = { 0 }, a = { 0 };
	struct sxdp_store *s;
	struct store_dir d;
	char err[512] = "", text[128];
	int ret;

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	/* Blocked: sources 0-9 and two prefixes. Allowed: sources 10-14. */
	pfx[0] = key_n(SIEVE_XDP_PREFIX, 0);
	pfx[1] = key_n(SIEVE_XDP_PREFIX, 1);
	CHECKF(t, !sxdp_store_add(s, "l", keys, 10, &blk, &added, err, sizeof(err)) &&
	       added == 10, "block: %s", err);
	CHECKF(t, !sxdp_store_add(s, "l", pfx, 2, &blk, &added, err, sizeof(err)) && added == 2,
	       "block prefixes: %s", err);
	CHECKF(t, !sxdp_store_add(s, "l", keys + 10, 5, &alw, &added, err, sizeof(err)) &&
	       added == 5, "allow: %s", err);
	CHECKF(t, side_n(s, "l", false) == 12 && side_n(s, "l", true) == 5,
	       "sides: %zu blocked, %zu allowed", side_n(s, "l", false), side_n(s, "l", true));
	/* sxdp_store_read is what the maps are built from: never an allowed key. */
	CHECKF(t, !sxdp_store_read(s, "l", &l, err, sizeof(err)) && l.n == 12,
	       "read: %zu keys", l.n);
	sxdp_keys_free(&l);
	CHECKF(t, has_on(s, "l", true, &keys[10]) && !has_on(s, "l", false, &keys[10]) &&
	       has_on(s, "l", false, &keys[0]) && !has_on(s, "l", true, &keys[0]),
	       "a key on the wrong side");
	CHECKF(t, !sxdp_store_kind_counts(s, "l", kinds, &allowed) && kinds[SIEVE_XDP_SRC] == 10 &&
	       kinds[SIEVE_XDP_PREFIX] == 2 && kinds[SIEVE_XDP_SERVICE] == 0 &&
	       kinds[SIEVE_XDP_FLOW] == 0 && allowed == 5,
	       "kind counts: src %llu prefix %llu allowed %llu",
	       (unsigned long long)kinds[SIEVE_XDP_SRC],
	       (unsigned long long)kinds[SIEVE_XDP_PREFIX], (unsigned long long)allowed);
	/* Allowing an allowed key again is an upsert, not a conflict. */
	CHECKF(t, !sxdp_store_add(s, "l", keys + 10, 1, &alw, &added, err, sizeof(err)) &&
	       added == 0, "re-allow: %s", err);

	/* Allowing a blocked key refuses the whole batch: the new key before it too. */
	v = version(s, "l");
	batch[0] = keys[20];
	batch[1] = keys[3];
	batch[2] = keys[21];
	err[0] = '\0';
	ret = sxdp_store_add(s, "l", batch, 3, &alw, &added, err, sizeof(err));
	CHECKF(t, ret == -EEXIST && strstr(err, key_text(&keys[3], text, sizeof(text))) &&
	       strstr(err, "blocked"), "allow a blocked key: %d '%s'", ret, err);
	CHECKF(t, !has_on(s, "l", true, &keys[20]) && !has_on(s, "l", false, &keys[20]) &&
	       has_on(s, "l", false, &keys[3]) && !has_on(s, "l", true, &keys[3]),
	       "a refused allow left part of its batch");
	CHECKF(t, count(s, "l", -1, NULL) == 17 && version(s, "l") == v,
	       "a refused allow: %llu entries, version %llu (was %llu)",
	       (unsigned long long)count(s, "l", -1, NULL), (unsigned long long)version(s, "l"),
	       (unsigned long long)v);
	/* And blocking an allowed key. */
	batch[0] = keys[22];
	batch[1] = keys[11];
	err[0] = '\0';
	ret = sxdp_store_add(s, "l", batch, 2, &blk, &added, err, sizeof(err));
	CHECKF(t, ret == -EEXIST && strstr(err, key_text(&keys[11], text, sizeof(text))) &&
	       strstr(err, "allowed"), "block an allowed key: %d '%s'", ret, err);
	CHECKF(t, !has_on(s, "l", false, &keys[22]) && !has_on(s, "l", false, &keys[11]) &&
	       has_on(s, "l", true, &keys[11]) && count(s, "l", -1, NULL) == 17 &&
	       version(s, "l") == v, "a refused block left part of its batch");
	/* In the caller's transaction the caller rolls back, earlier calls included. */
	CHECKF(t, !sxdp_store_begin(s, err, sizeof(err)), "begin: %s", err);
	sxdp_store_add(s, "l", keys + 23, 1, &blk, NULL, err, sizeof(err));
	batch[0] = keys[24];
	batch[1] = keys[12];
	ret = sxdp_store_add(s, "l", batch, 2, &blk, NULL, err, sizeof(err));
	CHECKF(t, ret == -EEXIST, "conflict in a transaction: %d", ret);
	sxdp_store_rollback(s);
	CHECKF(t, !has_on(s, "l", false, &keys[23]) && !has_on(s, "l", false, &keys[24]) &&
	       count(s, "l", -1, NULL) == 17 && version(s, "l") == v,
	       "the rolled back transaction left something");

	/* remove_from takes its own side only, and counts the rest missing. */
	batch[0] = keys[3];	/* blocked */
	batch[1] = keys[11];	/* allowed */
	batch[2] = keys[50];	/* neither */
	CHECKF(t, !sxdp_store_remove_from(s, "l", true, batch, 3, &missing, err, sizeof(err)) &&
	       missing == 2, "disallow: missing %zu %s", missing, err);
	CHECKF(t, !has_on(s, "l", true, &keys[11]) && has_on(s, "l", false, &keys[3]) &&
	       version(s, "l") == v + 1, "disallow took the wrong keys");
	CHECKF(t, !sxdp_store_remove_from(s, "l", false, keys + 12, 1, &missing, err,
					  sizeof(err)) && missing == 1 &&
	       has_on(s, "l", true, &keys[12]) && version(s, "l") == v + 1,
	       "unblock of an allowed key: missing %zu", missing);
	CHECKF(t, !sxdp_store_remove(s, "l", keys + 12, 1, &missing, err, sizeof(err)) &&
	       missing == 1 && has_on(s, "l", true, &keys[12]), "remove took an allowed key");
	/* Disallowed, the key can be blocked. */
	CHECKF(t, !sxdp_store_add(s, "l", keys + 11, 1, &blk, &added, err, sizeof(err)) &&
	       added == 1 && has_on(s, "l", false, &keys[11]), "block after disallow: %s", err);

	/*
	 * A refresh of feedA's blocklist: its allowlist entries stay, and a
	 * key allowed (by feedA itself or by cli) is left out, not an error.
	 */
	CHECKF(t, !sxdp_store_add(s, "l", keys + 30, 5, &fa_alw, NULL, err, sizeof(err)) &&
	       !sxdp_store_add(s, "l", keys + 40, 10, &fa_blk, NULL, err, sizeof(err)),
	       "feedA: %s", err);
	for (i = 0; i < 10; i++)
		batch[i] = keys[45 + i];
	batch[10] = keys[30];
	batch[11] = keys[13];
	err[0] = '\0';
	ret = sxdp_store_replace_origin(s, "l", batch, 12, &fa_blk, &added, &removed, err,
					sizeof(err));
	CHECKF(t, !ret && added == 5 && removed == 5, "feedA refresh: %d added %zu removed %zu %s",
	       ret, added, removed, err);
	for (i = 30; i < 35; i++)
		CHECKF(t, has_on(s, "l", true, &keys[i]) && !has_on(s, "l", false, &keys[i]),
		       "feedA's allowed key %zu after its blocklist's refresh", i);
	CHECKF(t, has_on(s, "l", true, &keys[13]) && !has_on(s, "l", false, &keys[13]),
	       "cli's allowed key after feedA's refresh");
	CHECKF(t, !has_on(s, "l", false, &keys[40]) && has_on(s, "l", false, &keys[54]) &&
	       count(s, "l", -1, "feedA") == 15, "feedA: %llu entries",
	       (unsigned long long)count(s, "l", -1, "feedA"));
	/* Its allowlist refreshed: the blocked entries stay, a blocked key is left out. */
	batch[0] = keys[30];
	batch[1] = keys[31];
	batch[2] = keys[45];
	ret = sxdp_store_replace_origin(s, "l", batch, 3, &fa_alw, &added, &removed, err,
					sizeof(err));
	CHECKF(t, !ret && added == 0 && removed == 3, "feedA allow refresh: %d added %zu "
	       "removed %zu %s", ret, added, removed, err);
	CHECKF(t, has_on(s, "l", true, &keys[31]) && !has_on(s, "l", true, &keys[32]) &&
	       has_on(s, "l", false, &keys[45]) && !has_on(s, "l", true, &keys[45]) &&
	       count(s, "l", -1, "feedA") == 12, "after feedA's allow refresh: %llu entries",
	       (unsigned long long)count(s, "l", -1, "feedA"));

	/* Expiry takes due allowlist entries as well as blocked ones. */
	alw.expires_at = 500;
	blk.expires_at = 500;
	sxdp_store_add(s, "l", keys + 55, 1, &alw, NULL, err, sizeof(err));
	sxdp_store_add(s, "l", keys + 56, 1, &blk, NULL, err, sizeof(err));
	CHECKF(t, !sxdp_store_expire(s, "l", 499, &l, err, sizeof(err)) && l.n == 0,
	       "expired early: %zu", l.n);
	CHECKF(t, !sxdp_store_expire(s, "l", 500, &l, err, sizeof(err)) && l.n == 2,
	       "expire: %zu %s", l.n, err);
	sxdp_keys_sort(&l);
	CHECKF(t, sxdp_keys_find(&l, &keys[55]) && sxdp_keys_find(&l, &keys[56]) &&
	       !has_on(s, "l", true, &keys[55]) && !has_on(s, "l", false, &keys[56]),
	       "expiry of an allowed and a blocked key");
	sxdp_keys_free(&l);
	/* The same apart: which side each expired entry was on. */
	sxdp_store_add(s, "l", keys + 55, 1, &alw, NULL, err, sizeof(err));
	sxdp_store_add(s, "l", keys + 56, 1, &blk, NULL, err, sizeof(err));
	CHECKF(t, !sxdp_store_expire_split(s, "l", 500, &l, &a, err, sizeof(err)) && l.n == 1 &&
	       a.n == 1 && !memcmp(&l.keys[0], &keys[56], sizeof(keys[56])) &&
	       !memcmp(&a.keys[0], &keys[55], sizeof(keys[55])),
	       "expire split: %zu blocked, %zu allowed: %s", l.n, a.n, err);
	sxdp_keys_free(&l);
	sxdp_keys_free(&a);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

/* add_fresh gives back exactly the keys that were new, one bump a call. */
static void sieve_unit_store_add_fresh(struct sieve_test *t)
{
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, 30);
	struct sxdp_keys fresh = { 0 };
	struct sieve_xdp_key batch[3];
	struct sxdp_store *s;
	struct store_dir d;
	char err[512] = "";
	size_t i;
	int ret;

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	sxdp_store_add(s, "l", keys, 5, &a, NULL, err, sizeof(err));
	CHECKF(t, version(s, "l") == 1, "version %llu", (unsigned long long)version(s, "l"));
	/*
	 * Ten keys, the first five there (and updated: a new comment): the
	 * other five come back, appended after what the caller had.
	 */
	a.comment = "again";
	sxdp_keys_add(&fresh, &keys[29]);
	ret = sxdp_store_add_fresh(s, "l", keys, 10, &a, &fresh, NULL, err, sizeof(err));
	CHECKF(t, !ret && fresh.n == 6 && !memcmp(&fresh.keys[0], &keys[29], sizeof(keys[29])),
	       "add_fresh: %d, %zu keys %s", ret, fresh.n, err);
	sxdp_keys_sort(&fresh);
	for (i = 0; i < 10; i++)
		CHECKF(t, sxdp_keys_find(&fresh, &keys[i]) == (i >= 5),
		       "key %zu %s fresh", i, i >= 5 ? "not" : "wrongly");
	CHECKF(t, raw_int(d.db, "SELECT count(*) FROM entries WHERE comment = 'again'") == 10,
	       "the old keys were not updated");
	CHECKF(t, version(s, "l") == 2, "one call, version %llu",
	       (unsigned long long)version(s, "l"));
	sxdp_keys_free(&fresh);
	/* The same again: nothing new, nothing changed, no bump. */
	CHECKF(t, !sxdp_store_add_fresh(s, "l", keys, 10, &a, &fresh, NULL, err, sizeof(err)) &&
	       fresh.n == 0 && version(s, "l") == 2, "a repeated add_fresh: %zu fresh, "
	       "version %llu", fresh.n, (unsigned long long)version(s, "l"));
	/*
	 * Updates only: nothing fresh, one bump. (A comment: an expiry of 900
	 * would not shorten their never, the re-ban rule.)
	 */
	a.comment = "third";
	CHECKF(t, !sxdp_store_add_fresh(s, "l", keys, 10, &a, &fresh, NULL, err, sizeof(err)) &&
	       fresh.n == 0 && version(s, "l") == 3, "updates only: %zu fresh, version %llu",
	       fresh.n, (unsigned long long)version(s, "l"));
	/* A key twice in one batch is fresh once: the live maps get it once. */
	batch[0] = keys[20];
	batch[1] = keys[20];
	batch[2] = keys[21];
	CHECKF(t, !sxdp_store_add_fresh(s, "l", batch, 3, &a, &fresh, NULL, err, sizeof(err)) &&
	       fresh.n == 2 && version(s, "l") == 4, "a duplicate: %zu fresh, version %llu",
	       fresh.n, (unsigned long long)version(s, "l"));
	sxdp_keys_free(&fresh);
	/* Allowlist keys are fresh on their side too. */
	a.allow = true;
	CHECKF(t, !sxdp_store_add_fresh(s, "l", keys + 22, 1, &a, &fresh, NULL, err, sizeof(err)) &&
	       fresh.n == 1 && version(s, "l") == 5, "allow: %zu fresh", fresh.n);
	sxdp_keys_free(&fresh);
	/* A conflict: -EEXIST, and nothing of the batch stays in the store. */
	batch[0] = keys[23];
	batch[1] = keys[0];
	ret = sxdp_store_add_fresh(s, "l", batch, 2, &a, &fresh, NULL, err, sizeof(err));
	CHECKF(t, ret == -EEXIST && !has_on(s, "l", true, &keys[23]) &&
	       !has_on(s, "l", false, &keys[23]) && version(s, "l") == 5,
	       "add_fresh conflict: %d, version %llu", ret, (unsigned long long)version(s, "l"));
	sxdp_keys_free(&fresh);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

/* List names, the lists there are, and when a list next expires. */
static void sieve_unit_store_lists(struct sieve_test *t)
{
	/* Exactly [A-Za-z0-9_.-]: names never become paths, so "." and ".." are fine. */
	static const char *const good[] = { "default", "a", "A-z_0.9", ".", "..", "-x", "0" };
	static const char *const bad[] = { "", "a/b", "../x", "a b", "a\tb", "a:b", "a*",
					   "caf\xc3\xa9", "a\n" };
	static const char *const want[] = { "1x", "Alpha", "beta", "default", "zeta" };
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, 10);
	char name[SXDP_LIST_NAME_MAX + 2], err[512] = "";
	struct sxdp_keys l = { 0 };
	struct sxdp_store *s;
	struct store_dir d;
	char **names = NULL;
	size_t n = 99, i;
	int64_t at = -1;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		CHECKF(t, sxdp_list_name_ok(good[i]), "'%s' refused", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECKF(t, !sxdp_list_name_ok(bad[i]), "'%s' taken", bad[i]);
	memset(name, 'n', SXDP_LIST_NAME_MAX);
	name[SXDP_LIST_NAME_MAX] = '\0';
	CHECKF(t, sxdp_list_name_ok(name), "a name of %d refused", SXDP_LIST_NAME_MAX);
	name[SXDP_LIST_NAME_MAX] = 'n';
	name[SXDP_LIST_NAME_MAX + 1] = '\0';
	CHECKF(t, !sxdp_list_name_ok(name), "a name of %d taken", SXDP_LIST_NAME_MAX + 1);

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	CHECKF(t, !sxdp_store_lists(s, &names, &n, err, sizeof(err)) && n == 0,
	       "a new store: %zu lists %s", n, err);
	sxdp_store_names_free(names, n);
	/* Made in no order; listed in byte order, upper case first. */
	for (i = 0; i < ARRAY_SIZE(want); i++)
		sxdp_store_add(s, want[(i * 2 + 1) % ARRAY_SIZE(want)], keys, 1, &a, NULL, err,
			       sizeof(err));
	names = NULL;
	CHECKF(t, !sxdp_store_lists(s, &names, &n, err, sizeof(err)) && n == ARRAY_SIZE(want),
	       "%zu lists %s", n, err);
	for (i = 0; names && i < n && i < ARRAY_SIZE(want); i++)
		CHECKF(t, !strcmp(names[i], want[i]), "list %zu: %s, want %s", i, names[i],
		       want[i]);
	sxdp_store_names_free(names, n);

	/* Nothing expires: 0, as for a list that is not there. */
	CHECKF(t, !sxdp_store_next_expiry(s, "zeta", &at) && at == 0, "zeta: %lld",
	       (long long)at);
	CHECKF(t, !sxdp_store_next_expiry(s, "nosuch", &at) && at == 0, "nosuch: %lld",
	       (long long)at);
	/* beta: never (key 0), 300, 200 and an allowed key at 250; Alpha's 10 is not beta's. */
	a.expires_at = 300;
	sxdp_store_add(s, "beta", keys + 1, 1, &a, NULL, err, sizeof(err));
	a.expires_at = 200;
	sxdp_store_add(s, "beta", keys + 2, 1, &a, NULL, err, sizeof(err));
	a.expires_at = 10;
	sxdp_store_add(s, "Alpha", keys + 2, 1, &a, NULL, err, sizeof(err));
	a.expires_at = 250;
	a.allow = true;
	sxdp_store_add(s, "beta", keys + 3, 1, &a, NULL, err, sizeof(err));
	CHECKF(t, !sxdp_store_next_expiry(s, "beta", &at) && at == 200, "beta: %lld",
	       (long long)at);
	sxdp_store_expire(s, "beta", 200, NULL, err, sizeof(err));
	CHECKF(t, !sxdp_store_next_expiry(s, "beta", &at) && at == 250,
	       "beta after 200: %lld", (long long)at);
	sxdp_store_expire(s, "beta", 300, NULL, err, sizeof(err));
	CHECKF(t, !sxdp_store_next_expiry(s, "beta", &at) && at == 0 &&
	       !sxdp_store_read(s, "beta", &l, err, sizeof(err)) && l.n == 1,
	       "beta after 300: %lld, %zu left", (long long)at, l.n);
	sxdp_keys_free(&l);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

/* An attachment with every field set from its arguments. */
static struct sxdp_attachment attachment(uint64_t netns, const char *iface, const char *list,
					 const char *mode, unsigned int max_probes)
{
	struct sxdp_attachment a;

	memset(&a, 0, sizeof(a));
	a.netns = netns;
	snprintf(a.iface, sizeof(a.iface), "%s", iface);
	snprintf(a.list, sizeof(a.list), "%s", list);
	snprintf(a.mode, sizeof(a.mode), "%s", mode);
	snprintf(a.backend, sizeof(a.backend), "bloom-map");
	a.flags = SIEVE_XDP_F_EXACT;
	a.fpp_ppb = 1000 + max_probes;
	a.capacity = 1ULL << 20;
	a.max_probes = max_probes;
	return a;
}

/* *@out's ifaces and namespaces are @want's, in that order. */
static void expect_attachments(struct sieve_test *t, struct sxdp_store *s, const char *list,
			       const struct sxdp_attachment *want, size_t nwant)
{
	struct sxdp_attachment *v = NULL;
	char err[512] = "";
	size_t n = 99, i;

	CHECKF(t, !sxdp_store_attachments(s, list, &v, &n, err, sizeof(err)) && n == nwant,
	       "attachments of %s: %zu, want %zu %s", list ? list : "all", n, nwant, err);
	for (i = 0; v && i < n && i < nwant; i++)
		CHECKF(t, !memcmp(&v[i], &want[i], sizeof(v[i])),
		       "attachments of %s, %zu: %llu %s (list %s), want %llu %s (list %s)",
		       list ? list : "all", i, (unsigned long long)v[i].netns, v[i].iface,
		       v[i].list, (unsigned long long)want[i].netns, want[i].iface, want[i].list);
	free(v);
}

/* Attachments: set, get, update in place, delete, and sorted by namespace, then name. */
static void sieve_unit_store_attachments(struct sieve_test *t)
{
	/* In the order sxdp_store_attachments gives them (eth10 after eth1: bytes). */
	struct sxdp_attachment all[] = {
		attachment(NETNS_INIT, "eth9", "a", "native", 0),
		attachment(NETNS_INIT, "vethabcdefghijk", "b", "", 3),	/* 15: IF_NAMESIZE - 1 */
		attachment(NETNS_OTHER, "eth0", "b", "generic", 4),
		attachment(NETNS_OTHER, "eth1", "a", "native", 5),
		attachment(NETNS_OTHER, "eth10", "a", "native", 6),
	};
	static const unsigned int order[] = { 3, 0, 4, 2, 1 };	/* the order they are set in */
	struct sxdp_attachment a, want[ARRAY_SIZE(all)];
	struct sxdp_store *s;
	struct store_dir d;
	char err[512] = "";
	size_t i;
	int ret;

	if (!store_dir_make(t, &d))
		return;
	s = store_open(t, &d);
	if (!s)
		goto out;
	expect_attachments(t, s, NULL, NULL, 0);
	for (i = 0; i < ARRAY_SIZE(order); i++)
		CHECKF(t, !sxdp_store_attach_set(s, &all[order[i]], err, sizeof(err)),
		       "attach_set %s: %s", all[order[i]].iface, err);
	for (i = 0; i < ARRAY_SIZE(all); i++) {
		ret = sxdp_store_attach_get(s, all[i].netns, all[i].iface, &a, err, sizeof(err));
		CHECKF(t, !ret && !memcmp(&a, &all[i], sizeof(a)),
		       "attach_get %s: %d %s list %s mode '%s' probes %u", all[i].iface, ret, err,
		       a.list, a.mode, a.max_probes);
	}
	expect_attachments(t, s, NULL, all, ARRAY_SIZE(all));
	/* List a's, in the same order. */
	want[0] = all[0];
	want[1] = all[3];
	want[2] = all[4];
	expect_attachments(t, s, "a", want, 3);
	expect_attachments(t, s, "nosuch", NULL, 0);
	/* Another namespace's eth1, and an iface never attached: not there. */
	CHECKF(t, sxdp_store_attach_get(s, NETNS_INIT, "eth1", &a, err, sizeof(err)) == -ENOENT,
	       "init_net's eth1");
	CHECKF(t, sxdp_store_attach_get(s, NETNS_OTHER, "eth2", &a, err, sizeof(err)) == -ENOENT,
	       "eth2");

	/* A re-attach updates the row in place: to list b, generic, another probe budget. */
	all[3] = attachment(NETNS_OTHER, "eth1", "b", "generic", 9);
	CHECKF(t, !sxdp_store_attach_set(s, &all[3], err, sizeof(err)), "update: %s", err);
	CHECKF(t, !sxdp_store_attach_get(s, NETNS_OTHER, "eth1", &a, err, sizeof(err)) &&
	       !memcmp(&a, &all[3], sizeof(a)), "after the update: list %s mode %s probes %u",
	       a.list, a.mode, a.max_probes);
	expect_attachments(t, s, NULL, all, ARRAY_SIZE(all));
	want[0] = all[0];
	want[1] = all[4];
	expect_attachments(t, s, "a", want, 2);
	want[0] = all[1];
	want[1] = all[2];
	want[2] = all[3];
	expect_attachments(t, s, "b", want, 3);

	/* A detach forgets the row; forgetting one that is not there is no error. */
	CHECKF(t, !sxdp_store_attach_del(s, NETNS_OTHER, "eth1", err, sizeof(err)), "del: %s",
	       err);
	CHECKF(t, sxdp_store_attach_get(s, NETNS_OTHER, "eth1", &a, err, sizeof(err)) == -ENOENT,
	       "eth1 after its del");
	CHECKF(t, !sxdp_store_attach_del(s, NETNS_OTHER, "eth1", err, sizeof(err)) &&
	       !sxdp_store_attach_del(s, NETNS_INIT, "nosuch", err, sizeof(err)),
	       "del of a missing one: %s", err);
	memmove(&all[3], &all[4], sizeof(all[0]));
	sxdp_store_close(s);
	/* Kept across a reopen. */
	s = store_open(t, &d);
	if (s) {
		expect_attachments(t, s, NULL, all, ARRAY_SIZE(all) - 1);
		sxdp_store_close(s);
	}
out:
	store_dir_clean(&d);
}

/* Reads between begin_read and its end see one state, whatever commits meanwhile. */
static void sieve_unit_store_read_snapshot(struct sieve_test *t)
{
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, 30);
	struct sxdp_attachment att = attachment(NETNS_INIT, "eth0", "l", "native", 0);
	struct sxdp_attachment *v = NULL;
	struct sxdp_store *s, *w = NULL;
	struct sxdp_keys l = { 0 };
	struct store_dir d;
	char err[512] = "";
	size_t n = 99;
	int ret;

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (s)
		w = store_open(t, &d);	/* the other writer: another connection */
	if (!s || !w)
		goto out_close;
	sxdp_store_add(s, "l", keys, 5, &a, NULL, err, sizeof(err));

	CHECKF(t, !sxdp_store_begin_read(s, err, sizeof(err)), "begin_read: %s", err);
	ret = sxdp_store_begin_read(s, err, sizeof(err));
	CHECKF(t, ret == -EBUSY, "a second begin_read: %d", ret);
	/* SQLite's snapshot starts at the transaction's first read: this one. */
	CHECKF(t, version(s, "l") == 1, "version %llu", (unsigned long long)version(s, "l"));
	/* WAL: the writer does not wait for the reader. */
	CHECKF(t, !sxdp_store_add(w, "l", keys + 5, 5, &a, NULL, err, sizeof(err)) &&
	       !sxdp_store_attach_set(w, &att, err, sizeof(err)), "the other writer: %s", err);
	CHECKF(t, version(w, "l") == 2 && count(w, "l", -1, NULL) == 10, "the writer's view");
	CHECKF(t, version(s, "l") == 1 && count(s, "l", -1, NULL) == 5 &&
	       !sxdp_store_read(s, "l", &l, err, sizeof(err)) && l.n == 5,
	       "in the snapshot: version %llu, %zu keys read", (unsigned long long)version(s, "l"),
	       l.n);
	sxdp_keys_free(&l);
	CHECKF(t, !sxdp_store_attachments(s, NULL, &v, &n, err, sizeof(err)) && n == 0,
	       "in the snapshot: %zu attachments", n);
	free(v);
	v = NULL;
	CHECKF(t, !sxdp_store_commit(s, err, sizeof(err)), "commit: %s", err);
	CHECKF(t, version(s, "l") == 2 && count(s, "l", -1, NULL) == 10 &&
	       !sxdp_store_attachments(s, NULL, &v, &n, err, sizeof(err)) && n == 1,
	       "after the commit: version %llu, %zu attachments",
	       (unsigned long long)version(s, "l"), n);
	free(v);

	/* Ended by a rollback, with a removal meanwhile. */
	CHECKF(t, !sxdp_store_begin_read(s, err, sizeof(err)), "begin_read: %s", err);
	CHECKF(t, count(s, "l", -1, NULL) == 10, "before the removal");
	CHECKF(t, !sxdp_store_remove(w, "l", keys, 3, NULL, err, sizeof(err)), "remove: %s", err);
	CHECKF(t, count(s, "l", -1, NULL) == 10 && version(s, "l") == 2 && has(s, "l", &keys[0]),
	       "the removal showed in the snapshot");
	sxdp_store_rollback(s);
	CHECKF(t, count(s, "l", -1, NULL) == 7 && version(s, "l") == 3 && !has(s, "l", &keys[0]),
	       "after the rollback: %llu entries, version %llu",
	       (unsigned long long)count(s, "l", -1, NULL), (unsigned long long)version(s, "l"));
	/* The snapshot is over: the reader writes, and the other one sees it. */
	CHECKF(t, !sxdp_store_add(s, "l", keys + 20, 1, &a, NULL, err, sizeof(err)) &&
	       version(w, "l") == 4 && count(w, "l", -1, NULL) == 8, "a write after: %s", err);
out_close:
	sxdp_store_close(w);
	sxdp_store_close(s);
	free(keys);
	store_dir_clean(&d);
}

/* A child writing @n entries from @first, @per a transaction; exits 0 if all went in. */
static void writer(const struct store_dir *d, unsigned int first, unsigned int n,
		   unsigned int per)
{
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(first, n);
	struct sxdp_store *s;
	char err[512] = "";
	unsigned int i;
	size_t added;

	if (!keys || sxdp_store_open(d->dir, &s, err, sizeof(err))) {
		fprintf(stderr, "writer: open: %s\n", err);
		_exit(2);
	}
	for (i = 0; i < n; i += per) {
		if (sxdp_store_begin(s, err, sizeof(err)) ||
		    sxdp_store_add(s, "l", keys + i, per, &a, &added, err, sizeof(err)) ||
		    sxdp_store_commit(s, err, sizeof(err)) || added != per) {
			fprintf(stderr, "writer %u: %s\n", first, err);
			_exit(1);
		}
	}
	sxdp_store_close(s);
	_exit(0);
}

/* Two processes writing at once: all 1000 entries, no busy error. */
static void sieve_unit_store_concurrent(struct sieve_test *t)
{
	struct sxdp_store *s;
	struct store_dir d;
	pid_t pid[2];
	int i, status;

	if (!store_dir_make(t, &d))
		return;
	s = store_open(t, &d);
	sxdp_store_close(s);
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] == 0)
			writer(&d, i * 500, 500, 5);
	}
	for (i = 0; i < 2; i++) {
		CHECKF(t, pid[i] > 0 && waitpid(pid[i], &status, 0) == pid[i] &&
		       WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", i);
	}
	s = store_open(t, &d);
	if (s) {
		CHECKF(t, count(s, "l", -1, NULL) == 1000, "entries: %llu",
		       (unsigned long long)count(s, "l", -1, NULL));
		/* One version per transaction of each. */
		CHECKF(t, version(s, "l") == 200, "version %llu",
		       (unsigned long long)version(s, "l"));
		sxdp_store_close(s);
	}
	store_dir_clean(&d);
}

/* Processes opening a store no one has made yet: one makes it, all use it. */
static void sieve_unit_store_first_open_race(struct sieve_test *t)
{
	struct sxdp_store *s;
	struct store_dir d;
	unsigned int round, i;
	pid_t pid[4];
	int status;

	for (round = 0; round < 10 && !t->nfail; round++) {
		if (!store_dir_make(t, &d))
			return;
		for (i = 0; i < ARRAY_SIZE(pid); i++) {
			pid[i] = fork();
			if (pid[i] == 0)
				writer(&d, i * 10, 10, 10);
		}
		for (i = 0; i < ARRAY_SIZE(pid); i++)
			CHECKF(t, pid[i] > 0 && waitpid(pid[i], &status, 0) == pid[i] &&
			       WIFEXITED(status) && WEXITSTATUS(status) == 0,
			       "round %u: writer %u failed", round, i);
		s = store_open(t, &d);
		if (s) {
			CHECKF(t, count(s, "l", -1, NULL) == 40, "round %u: %llu entries", round,
			       (unsigned long long)count(s, "l", -1, NULL));
			sxdp_store_close(s);
		}
		store_dir_clean(&d);
	}
}

#define CRASH_TRIALS	50
#define CRASH_OLD	10
#define CRASH_NEW	10000

/* A child adding CRASH_NEW entries in one transaction. */
static void crash_writer(const struct store_dir *d)
{
	writer(d, 1000, CRASH_NEW, CRASH_NEW);
}

/* kill -9 mid-transaction: an intact store at the old state or the new one. */
static void sieve_unit_store_crash(struct sieve_test *t)
{
	struct sxdp_store_attrs a = { .origin = "old", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, CRASH_OLD);
	unsigned int trial, old = 0, new = 0;
	double start, full_ms = 0;
	struct sxdp_store *s;
	struct store_dir d;
	char err[512];
	int status;
	pid_t pid;

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	srand(42);
	/* Trial 0 runs to the end: its time bounds the kill points of the others. */
	for (trial = 0; trial <= CRASH_TRIALS && !t->nfail; trial++) {
		char cmd[160];
		uint64_t n, v;

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d.dir);
		if (system(cmd))
			break;
		s = store_open(t, &d);
		if (!s)
			break;
		sxdp_store_add(s, "l", keys, CRASH_OLD, &a, NULL, err, sizeof(err));
		sxdp_store_close(s);
		start = now_ms();
		pid = fork();
		if (pid == 0)
			crash_writer(&d);
		if (trial) {
			usleep((useconds_t)(full_ms * 1100 * (rand() / (double)RAND_MAX)));
			kill(pid, SIGKILL);
		}
		waitpid(pid, &status, 0);
		if (!trial) {
			full_ms = now_ms() - start;
			CHECKF(t, WIFEXITED(status) && !WEXITSTATUS(status), "the full run failed");
		}
		CHECKF(t, integrity_ok(d.db), "trial %u: integrity check failed", trial);
		s = store_open(t, &d);
		if (!s)
			break;
		n = count(s, "l", -1, NULL);
		v = version(s, "l");
		CHECKF(t, (n == CRASH_OLD && v == 1) || (n == CRASH_OLD + CRASH_NEW && v == 2),
		       "trial %u: %llu entries, version %llu", trial, (unsigned long long)n,
		       (unsigned long long)v);
		if (trial)
			n == CRASH_OLD ? old++ : new++;
		sxdp_store_close(s);
	}
	sieve_note("%u kills in a %.0f ms transaction of %u adds: %u at the old state, %u at "
		   "the new", old + new, full_ms, CRASH_NEW, old, new);
	free(keys);
	store_dir_clean(&d);
}

/* ms per call of adding one entry (its own transaction) to a list of @n. */
static void bench_one(struct sieve_test *t, unsigned int n, bool bulk)
{
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, n + 200);
	struct sxdp_store *s;
	struct store_dir d;
	double start, bulk_ms;
	char err[512] = "";
	unsigned int i;

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	start = now_ms();
	CHECKF(t, !sxdp_store_add(s, "l", keys, n, &a, NULL, err, sizeof(err)), "bulk: %s", err);
	bulk_ms = now_ms() - start;
	start = now_ms();
	for (i = 0; i < 200; i++)
		CHECKF(t, !sxdp_store_add(s, "l", keys + n + i, 1, &a, NULL, err, sizeof(err)),
		       "add: %s", err);
	sieve_note("list of %u: add 1 entry %.3f ms/call (own transaction, synchronous=FULL)",
		   n, (now_ms() - start) / 200);
	if (bulk)
		sieve_note("bulk insert of %u entries in one transaction: %.0f ms", n, bulk_ms);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long long)st.st_size;
}

/* What this process has read with read(2) and its kind so far (/proc/self/io rchar), or -1. */
static long long rchar_now(void)
{
	long long v = -1;
	char line[128];
	FILE *f = fopen("/proc/self/io", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %lld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/*
 * One add as a `block` makes it: the store opened, one entry added, closed.
 * The process holds no other connection, so the open rebuilds the log's
 * index by reading the log, as a new process does. Returns the bytes read.
 */
static long long one_add_read(struct sieve_test *t, struct store_dir *d,
			      const struct sieve_xdp_key *key)
{
	struct sxdp_store_attrs a = { .origin = "cli", .now = 1 };
	long long before = rchar_now(), after;
	char err[512] = "";
	struct sxdp_store *s = store_open(t, d);

	if (!s)
		return -1;
	CHECKF(t, !sxdp_store_add(s, "l", key, 1, &a, NULL, err, sizeof(err)), "add: %s", err);
	sxdp_store_close(s);
	after = rchar_now();
	return before < 0 || after < 0 ? -1 : after - before;
}

/*
 * A bulk load leaves no long log behind for the next process to read and
 * checkpoint again (store.c's bound_wal()): an add after it reads at most
 * a bound, whatever the load's size: 10^4, 10^5, and a load whose log
 * stays just under 16 MiB, the bound before 256 KiB (each add after it read
 * the whole log twice, 19.6 MB at 10^5). Small adds keep their log (one
 * fsync a commit), and it stays under the bound as they pile up.
 */
#define WAL_READ_BOUND	(512 << 10)
static void sieve_unit_store_wal_bounded(struct sieve_test *t)
{
	static const unsigned int sizes[] = { 10000, 100000, 270000 };
	struct sxdp_store_attrs a = { .origin = "feed", .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, 270000 + 40);
	long long read, most = 0;
	struct sxdp_store *s;
	struct store_dir d;
	char err[512] = "", wal[160];
	unsigned int i, j;

	for (i = 0; keys && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned int n = sizes[i];

		if (!store_dir_make(t, &d))
			break;
		snprintf(wal, sizeof(wal), "%s-wal", d.db);
		s = store_open(t, &d);
		if (s) {
			CHECKF(t, !sxdp_store_add(s, "l", keys, n, &a, NULL, err, sizeof(err)),
			       "bulk: %s", err);
			if (i == 2)
				CHECKF(t, file_size(wal) > 14 << 20 && file_size(wal) < 16 << 20,
				       "a load of %u logs just under 16 MiB (%lld)", n, file_size(wal));
			sxdp_store_close(s);
		}
		CHECKF(t, file_size(wal) == 0, "%u: closed after the load, the log is emptied "
		       "(%lld bytes)", n, file_size(wal));
		read = one_add_read(t, &d, &keys[n]);
		CHECKF(t, read >= 0 && read <= WAL_READ_BOUND,
		       "%u: an add after the load read %lld bytes (at most %d)", n, read,
		       WAL_READ_BOUND);
		CHECKF(t, file_size(wal) > 0 && file_size(wal) < 1 << 20,
		       "%u: after one add the small log is kept (%lld bytes)", n, file_size(wal));
		/* Small adds pile up in the log until it passes 256 KiB; then it is emptied. */
		for (j = 1; n == 10000 && j < 40; j++) {
			read = one_add_read(t, &d, &keys[n + j]);
			most = read > most ? read : most;
			CHECKF(t, file_size(wal) <= (256 + 64) << 10, "add %u: a log of %lld bytes",
			       j, file_size(wal));
		}
		s = store_open(t, &d);
		if (s) {
			uint64_t want = n + (n == 10000 ? 40 : 1);

			CHECKF(t, count(s, "l", -1, NULL) == want, "every entry is there (%llu)",
			       (unsigned long long)count(s, "l", -1, NULL));
			sxdp_store_close(s);
		}
		CHECKF(t, integrity_ok(d.db), "the store passes its integrity check");
		store_dir_clean(&d);
	}
	CHECKF(t, most > 0 && most <= WAL_READ_BOUND, "40 adds in a row read at most %lld bytes",
	       most);
	free(keys);
}

/* The cost of one add (printed; 10^6 only with SIEVE_STORE_BENCH=1). */
static void sieve_unit_store_bench(struct sieve_test *t)
{
	bool big = getenv("SIEVE_STORE_BENCH") && *getenv("SIEVE_STORE_BENCH") == '1';

	bench_one(t, 10000, true);
	if (big)
		bench_one(t, 1000000, true);
}

/* The expiry of @list's entry @key (-1 if absent) and its origin. */
static int64_t expiry_of_key(struct sxdp_store *s, const char *list,
			     const struct sieve_xdp_key *key, char origin[32])
{
	char text[128];
	struct entry_probe p;

	sxdp_format_entry(key, text, sizeof(text));
	p = probe(s, list, text);
	snprintf(origin, 32, "%s", p.origin);
	return p.found ? p.expires_at : -1;
}

/*
 * What fleet sync relies on: per-key expiries, adds that leave other
 * origins' keys (and the other list's) alone, removals of its own entries
 * only, and a refresh with per-key expiries.
 */
static void sieve_unit_store_fleet(struct sieve_test *t)
{
	int64_t exp[20];
	struct sxdp_store_attrs cli = { .origin = "cli", .now = 1 };
	struct sxdp_store_attrs fleet = { .origin = "fleet", .now = 1, .expires_each = exp,
					  .only_own = true };
	struct sxdp_store_attrs allow = { .origin = "cli", .now = 1, .allow = true };
	struct sieve_xdp_key *keys = keys_src(0, 20), ask[4];
	size_t missing = 0, added = 0, removed = 0, i;
	struct sxdp_keys gone = { 0 };
	struct sxdp_store *s;
	struct store_dir d;
	char err[512], origin[32];

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	for (i = 0; i < 20; i++)
		exp[i] = i % 2 ? 0 : 5000 + (int64_t)i;
	/* cli holds 0-4; 5 is allowed; the fleet adds 0-9. */
	sxdp_store_add(s, "l", keys, 5, &cli, NULL, err, sizeof(err));
	sxdp_store_add(s, "l", keys + 5, 1, &allow, NULL, err, sizeof(err));
	CHECKF(t, !sxdp_store_add(s, "l", keys, 10, &fleet, &added, err, sizeof(err)) &&
	       added == 4, "fleet add: added %zu: %s", added, err);
	/* cli: 5 blocked and 1 allowed. */
	CHECKF(t, count(s, "l", -1, "cli") == 6 && count(s, "l", -1, "fleet") == 4,
	       "origins: cli %llu fleet %llu", (unsigned long long)count(s, "l", -1, "cli"),
	       (unsigned long long)count(s, "l", -1, "fleet"));
	CHECKF(t, expiry_of_key(s, "l", &keys[6], origin) == 5006 && !strcmp(origin, "fleet"),
	       "key 6: expiry %lld origin %s", (long long)expiry_of_key(s, "l", &keys[6], origin),
	       origin);
	CHECKF(t, expiry_of_key(s, "l", &keys[7], origin) == 0, "key 7 should never expire");
	CHECKF(t, expiry_of_key(s, "l", &keys[2], origin) == 0 && !strcmp(origin, "cli"),
	       "cli's key 2 was taken over: origin %s", origin);
	/* The fleet removes 0-9: only its own 6-9 go. */
	CHECKF(t, !sxdp_store_remove_own(s, "l", false, "fleet", keys, 10, &missing, err,
					 sizeof(err)) && missing == 6,
	       "remove own: missing %zu: %s", missing, err);
	CHECKF(t, count(s, "l", -1, "cli") == 6 && count(s, "l", -1, "fleet") == 0,
	       "after remove own: cli %llu", (unsigned long long)count(s, "l", -1, "cli"));
	/* Which went (the filter backend deletes them live): 3 and 4, once, not 8 (gone). */
	ask[0] = ask[3] = keys[3];
	ask[1] = keys[8];
	ask[2] = keys[4];
	CHECKF(t, !sxdp_store_remove_gone(s, "l", false, NULL, ask, 4, &gone, err, sizeof(err)) &&
	       gone.n == 2 && !memcmp(&gone.keys[0], &keys[3], sizeof(keys[3])) &&
	       !memcmp(&gone.keys[1], &keys[4], sizeof(keys[4])),
	       "remove gone: %zu removed: %s", gone.n, err);
	sxdp_keys_free(&gone);
	/* A refresh with per-key expiries: 10-19, then 15-19 with new expiries. */
	CHECKF(t, !sxdp_store_replace_origin(s, "l", keys + 10, 10, &fleet, &added, &removed,
					     err, sizeof(err)) && added == 10 && !removed,
	       "refresh: added %zu removed %zu: %s", added, removed, err);
	for (i = 0; i < 20; i++)
		exp[i] = 9000 + (int64_t)i;
	CHECKF(t, !sxdp_store_replace_origin(s, "l", keys + 15, 5, &fleet, &added, &removed,
					     err, sizeof(err)) && !added && removed == 5,
	       "second refresh: added %zu removed %zu", added, removed);
	CHECKF(t, expiry_of_key(s, "l", &keys[16], origin) == 9001, "key 16 expiry %lld",
	       (long long)expiry_of_key(s, "l", &keys[16], origin));
	/* A negative expiry in the batch is refused whole. */
	exp[3] = -1;
	CHECKF(t, sxdp_store_add(s, "l", keys + 15, 5, &fleet, NULL, err, sizeof(err)) == -EINVAL,
	       "a negative per-key expiry was taken");
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

#define CASE(fn)	{ #fn, fn }

/*
 * An existing state folder open to others is tightened to 0700; one owned
 * by another user is refused, and nothing is made in it (issue 20, 13).
 */
static void sieve_unit_store_dir_owner(struct sieve_test *t)
{
	struct sxdp_store *s = NULL;
	struct store_dir d;
	char err[512] = "";
	struct stat st;
	int ret;

	if (!store_dir_make(t, &d))
		return;
	CHECKF(t, !mkdir(d.dir, 0777) && !chmod(d.dir, 0777), "mkdir %s", d.dir);
	s = store_open(t, &d);
	sxdp_store_close(s);
	CHECKF(t, !stat(d.dir, &st) && (st.st_mode & 0777) == 0700,
	       "an existing 0777 folder: mode %o after the open", st.st_mode & 0777);

	if (geteuid()) {
		/* Only root can give a folder away: the unit suite runs as root (make test). */
		CHECKF(t, 0, "not root: the other owner's folder cannot be made");
	} else {
		unlink(d.db);
		CHECKF(t, !chown(d.dir, 65534, 65534), "chown %s", d.dir);
		ret = sxdp_store_open(d.dir, &s, err, sizeof(err));
		CHECKF(t, ret == -EPERM && strstr(err, "owned by uid 65534"),
		       "another user's folder: %d %s", ret, err);
		if (!ret)
			sxdp_store_close(s);
		CHECKF(t, access(d.db, F_OK), "a store was made in another user's folder");
	}
	store_dir_clean(&d);
}

/* An origin per key, appended "KEY=ORIGIN " to @ctx (sxdp_store_origins_of). */
static int origin_cat(const char *key, const char *origin, void *ctx)
{
	size_t len = strlen(ctx);

	snprintf((char *)ctx + len, 512 - len, "%s=%s ", key, origin);
	return 0;
}

/*
 * Issue 22, item 5: a load under a file's base name takes over the
 * origins an older sieve recorded as the path typed (any path of that base
 * name under the default, only the path typed under --origin), on its own
 * side and list only; a refresh whose keys another origin holds names it.
 */
static void sieve_unit_store_adopt_origins(struct sieve_test *t)
{
	static const char *const origins[] = {
		"/etc/sieve/drop.txt", "./drop.txt", "x/notdrop.txt", "drop.txt", "cli",
		"/other/feed", "drop.txt/",
	};
	struct sxdp_store_attrs a = { .now = 1 };
	struct sieve_xdp_key *keys = keys_src(0, 10);
	struct sxdp_adopted r;
	struct sxdp_store *s;
	struct store_dir d;
	char err[512], seen[512] = "", holder[64];
	size_t i, held;
	uint64_t v;

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	for (i = 0; i < ARRAY_SIZE(origins); i++) {
		a.origin = origins[i];
		sxdp_store_add(s, "l", &keys[i], 1, &a, NULL, err, sizeof(err));
	}
	a.origin = "/etc/sieve/drop.txt";
	sxdp_store_add(s, "m", &keys[7], 1, &a, NULL, err, sizeof(err));
	a.allow = true;
	a.origin = "/etc/allow/drop.txt";
	sxdp_store_add(s, "l", &keys[8], 1, &a, NULL, err, sizeof(err));
	v = version(s, "l");
	/* The default origin: both paths of the base name, nothing else. */
	a = (struct sxdp_store_attrs){ .origin = "drop.txt", .adopt_path = "feeds/drop.txt",
				       .adopt_base = true };
	CHECKF(t, !sxdp_store_adopt_origins(s, "l", &a, &r, err, sizeof(err)), "adopt: %s", err);
	CHECKF(t, r.entries == 2 && r.origins == 2 && !strcmp(r.first, "./drop.txt"),
	       "took %zu entries of %zu origins, first %s", r.entries, r.origins, r.first);
	CHECKF(t, count(s, "l", -1, "drop.txt") == 3 && count(s, "l", -1, "x/notdrop.txt") == 1 &&
	       count(s, "l", -1, "drop.txt/") == 1 && count(s, "l", -1, "/other/feed") == 1 &&
	       count(s, "m", -1, "/etc/sieve/drop.txt") == 1 &&
	       count(s, "l", -1, "/etc/allow/drop.txt") == 1, "took the wrong origins");
	CHECKF(t, version(s, "l") == v + 1, "version %llu after %llu",
	       (unsigned long long)version(s, "l"), (unsigned long long)v);
	/* Again: nothing left to take, no version. */
	CHECKF(t, !sxdp_store_adopt_origins(s, "l", &a, &r, err, sizeof(err)) && !r.entries &&
	       version(s, "l") == v + 1, "a second adopt took %zu", r.entries);
	/* --origin: only the path as typed. */
	a = (struct sxdp_store_attrs){ .origin = "feed5", .adopt_path = "/other/feed" };
	CHECKF(t, !sxdp_store_adopt_origins(s, "l", &a, &r, err, sizeof(err)) &&
	       r.entries == 1 && count(s, "l", -1, "feed5") == 1 &&
	       count(s, "l", -1, "x/notdrop.txt") == 1, "adopt the typed path: %zu", r.entries);
	/* Held by another origin: named, with how many; not when the origin has entries. */
	CHECKF(t, !sxdp_store_held_by(s, "l", false, "nobody", keys, 5, holder, sizeof(holder),
				      &held, err, sizeof(err)) && held == 3 &&
	       !strcmp(holder, "drop.txt"), "held by %s: %zu (%s)", holder, held, err);
	CHECKF(t, !sxdp_store_held_by(s, "l", false, "drop.txt", keys, 5, holder,
				      sizeof(holder), &held, err, sizeof(err)) && !held,
	       "an origin with entries: held %zu", held);
	CHECKF(t, !sxdp_store_origins_of(s, "l", false, keys + 3, 3, origin_cat, seen, err,
					 sizeof(err)) &&
	       !strcmp(seen, "10.0.0.3=drop.txt 10.0.0.4=cli 10.0.0.5=feed5 "), "origins: %s",
	       seen);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

/*
 * Origin ids: one per name, in order of first use, the same at every
 * reopen and never reused; a list's entries read with them (all, or a
 * live add's keys), sorted for sxdp_origin_of().
 */
static void sieve_unit_store_origin_ids(struct sieve_test *t)
{
	struct sxdp_store_attrs a = { .origin = "feedA", .now = 1000 };
	struct sieve_xdp_key *keys = keys_src(0, 6);
	struct sxdp_origins o = { 0 };
	struct sxdp_keys some = { 0 };
	uint32_t a_id = 0, b_id = 0, cli_id = 0, again = 0;
	struct sxdp_store *s;
	struct store_dir d;
	size_t added, i;
	char err[512] = "";

	if (!keys || !store_dir_make(t, &d)) {
		free(keys);
		return;
	}
	s = store_open(t, &d);
	if (!s)
		goto out;
	sxdp_store_add(s, "l", keys, 3, &a, &added, err, sizeof(err));
	a.origin = "feedB";
	sxdp_store_add(s, "l", keys + 3, 2, &a, &added, err, sizeof(err));
	a.origin = "cli";
	sxdp_store_add(s, "l", keys + 5, 1, &a, &added, err, sizeof(err));
	CHECKF(t, !sxdp_store_read_origins(s, "l", NULL, &o, err, sizeof(err)) && o.n == 6,
	       "read the list's origins: %zu, %s", o.n, err);
	a_id = sxdp_origin_of(&o, &keys[0]);
	b_id = sxdp_origin_of(&o, &keys[3]);
	cli_id = sxdp_origin_of(&o, &keys[5]);
	/* Ids in order of first use, from 1 (0 is no origin). */
	CHECKF(t, a_id && b_id && cli_id && a_id != b_id && b_id != cli_id && a_id != cli_id,
	       "ids %u %u %u", a_id, b_id, cli_id);
	CHECKF(t, sxdp_origin_of(&o, &keys[1]) == a_id && sxdp_origin_of(&o, &keys[4]) == b_id,
	       "keys of one origin, one id");
	sxdp_origins_free(&o);
	sxdp_store_close(s);
	/* Reopened: the same ids; a new name gets a new one. */
	s = store_open(t, &d);
	if (!s)
		goto out;
	CHECKF(t, !sxdp_store_origin_id(s, "feedB", &again) && again == b_id,
	       "feedB's id after a reopen: %u, was %u", again, b_id);
	CHECKF(t, !sxdp_store_origin_id(s, "feedC", &again) && again &&
	       again != a_id && again != b_id && again != cli_id, "a new origin's id %u", again);
	/* A live add's keys alone: what the exact map's values take. */
	for (i = 2; i < 4; i++)
		sxdp_keys_add(&some, &keys[i]);
	CHECKF(t, !sxdp_store_read_origins(s, "l", &some, &o, err, sizeof(err)) && o.n == 2 &&
	       sxdp_origin_of(&o, &keys[2]) == a_id && sxdp_origin_of(&o, &keys[3]) == b_id &&
	       sxdp_origin_of(&o, &keys[0]) == SIEVE_XDP_ORIGIN_NONE,
	       "the origins of two keys: %zu, %s", o.n, err);
	sxdp_origins_free(&o);
	sxdp_keys_free(&some);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

const struct sieve_test_case sieve_store_cases[] = {
	CASE(sieve_unit_store_dir_owner),
	CASE(sieve_unit_store_round_trip),
	CASE(sieve_unit_store_upsert),
	CASE(sieve_unit_store_origin_ids),
	CASE(sieve_unit_store_reban),
	CASE(sieve_unit_store_replace_origin),
	CASE(sieve_unit_store_replace_origin_gone),
	CASE(sieve_unit_store_adopt_origins),
	CASE(sieve_unit_store_replace_bulk),
	CASE(sieve_unit_store_key_text),
	CASE(sieve_unit_store_text_order),
	CASE(sieve_unit_store_lookup_by_key),
	CASE(sieve_unit_store_expire),
	CASE(sieve_unit_store_version),
	CASE(sieve_unit_store_bad_files),
	CASE(sieve_unit_store_migrate_v1),
	CASE(sieve_unit_store_allowlist),
	CASE(sieve_unit_store_add_fresh),
	CASE(sieve_unit_store_fleet),
	CASE(sieve_unit_store_lists),
	CASE(sieve_unit_store_attachments),
	CASE(sieve_unit_store_read_snapshot),
	CASE(sieve_unit_store_concurrent),
	CASE(sieve_unit_store_first_open_race),
	CASE(sieve_unit_store_crash),
	CASE(sieve_unit_store_wal_bounded),
	CASE(sieve_unit_store_bench),
};

const unsigned int sieve_store_cases_n = ARRAY_SIZE(sieve_store_cases);
