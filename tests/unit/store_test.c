// SPDX-License-Identifier: GPL-2.0
/*
 * The blocklist store (userspace/xdp/store.c), each case in a folder of
 * its own under /tmp: entries round trip, upserts, a feed refresh that
 * keeps other origins, expiry, list versions, bad and foreign files,
 * migration from an empty database, two writers at once, and writers
 * killed with SIGKILL mid-transaction. The cost of adding one entry (and
 * of a bulk load) is printed, not asserted; SIEVE_STORE_BENCH=1 adds the
 * 10^6-entry numbers.
 */
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
	struct sxdp_list l = { 0 };
	bool found;

	if (sxdp_store_read(s, list, &l, NULL, 0))
		return false;
	sxdp_list_sort(&l);
	found = sxdp_list_find(&l, key);
	sxdp_list_free(&l);
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
	struct sxdp_list l = { 0 };
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
	sxdp_list_sort(&l);
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		CHECKF(t, sxdp_list_find(&l, &keys[i]), "key %zu lost", i);
	sxdp_list_free(&l);
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
	/* An empty refresh removes the feed. */
	CHECKF(t, !sxdp_store_replace_origin(s, "l", NULL, 0, &fa, &added, &removed, err,
					     sizeof(err)) && removed == 30 &&
	       count(s, "l", -1, NULL) == 20, "empty refresh: removed %zu", removed);
	sxdp_store_close(s);
out:
	free(keys);
	store_dir_clean(&d);
}

/* Expiry returns exactly the due entries, once. */
static void sieve_unit_store_expire(struct sieve_test *t)
{
	struct sieve_xdp_key *keys = keys_src(0, 30);
	struct sxdp_store_attrs a = { .origin = "cli", .now = 100 };
	struct sxdp_list l = { 0 };
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
	sxdp_list_sort(&l);
	for (i = 10; i < 20; i++)
		CHECKF(t, sxdp_list_find(&l, &keys[i]), "key %zu not returned", i);
	CHECKF(t, version(s, "l") == v + 1 && count(s, "l", -1, NULL) == 20, "after expiry");
	l.n = 0;
	/* Again: nothing. */
	CHECKF(t, !sxdp_store_expire(s, "l", 200, &l, err, sizeof(err)) && l.n == 0 &&
	       version(s, "l") == v + 1, "expiry not idempotent");
	CHECKF(t, !sxdp_store_expire(s, "l", 1000000, NULL, err, sizeof(err)) &&
	       count(s, "l", -1, NULL) == 10, "expire without a list");
	sxdp_list_free(&l);
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
	struct sxdp_list l = { 0 };
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

	/* A few bytes of a real store's header. */
	unlink(d.db);
	s = store_open(t, &d);
	sxdp_store_close(s);
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
	sxdp_list_free(&l);

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

/* The cost of one add (printed; 10^6 only with SIEVE_STORE_BENCH=1). */
static void sieve_unit_store_bench(struct sieve_test *t)
{
	bool big = getenv("SIEVE_STORE_BENCH") && *getenv("SIEVE_STORE_BENCH") == '1';

	bench_one(t, 10000, true);
	if (big)
		bench_one(t, 1000000, true);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_store_cases[] = {
	CASE(sieve_unit_store_round_trip),
	CASE(sieve_unit_store_upsert),
	CASE(sieve_unit_store_replace_origin),
	CASE(sieve_unit_store_expire),
	CASE(sieve_unit_store_version),
	CASE(sieve_unit_store_bad_files),
	CASE(sieve_unit_store_concurrent),
	CASE(sieve_unit_store_first_open_race),
	CASE(sieve_unit_store_crash),
	CASE(sieve_unit_store_bench),
};

const unsigned int sieve_store_cases_n = ARRAY_SIZE(sieve_store_cases);
