// SPDX-License-Identifier: GPL-2.0
/*
 * The blocklist store (store.h): the list of record in one SQLite file.
 *
 * Crash safety. The database runs in WAL mode: a commit is one append to
 * the write-ahead log, so a writer killed at any point (kill -9) leaves
 * the last committed state, and readers never block the writer.
 * synchronous=FULL fsyncs the log at every commit, so a change a command
 * has reported done also survives a power loss: after a reboot the maps
 * are rebuilt from the store, and a ban the operator was told about must
 * be there. That is one fsync per transaction; bulk loads are one
 * transaction, so they pay it once. [store] sync = normal (the caller's
 * choice, sxdp_store_open_sync) drops that sync and keeps the rest: see
 * enum sxdp_store_sync.
 *
 * Concurrency. Writers begin with BEGIN IMMEDIATE, which takes the write
 * lock up front, and wait up to SXDP_STORE_BUSY_MS for it (busy_timeout):
 * two CLI runs queue instead of one failing, and no transaction fails
 * half-way on a lock upgrade.
 */
#define _GNU_SOURCE	/* qsort_r */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>

#include "store.h"

/*
 * The page cache, at most (negative: KiB). SQLite's default, 2 MiB, is a
 * few levels of a 10^7-entry B-tree: a bulk load then rereads pages for
 * every insert. Pages are only taken as they are read, so a small command
 * never grows to it.
 */
#define STORE_CACHE_KIB	"-262144"

/* "SIEV": marks the file as a sieve store (PRAGMA application_id). */
#define SXDP_STORE_APP_ID	0x53494556

/*
 * The schema, one step per version: migrations[i] takes a database from
 * user_version i to i + 1. Only ever append.
 *
 * entries.kind is enum sieve_xdp_kind; entries.allow is 1 for an
 * allowlist entry (exempt from the blocklist). The key (list, key) makes
 * an entry either blocked or allowed in one list.
 * attachments: which list an interface enforces, how (for the agent).
 * Version 2: the probe budget of an attachment (attach --max-probes).
 */
static const char *const migrations[] = {
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
	"  PRIMARY KEY (netns, iface));",
	"ALTER TABLE attachments ADD COLUMN max_probes INTEGER;",
};

/*
 * Indexes that change no answer, only how fast one comes, made at open if
 * missing, with no version step: an older sieve of the same schema version
 * opens the store as before and keeps them up to date without knowing them
 * (SQLite does), so going back and forth between two builds on one store
 * (e2e upgrade_killed) still works. When they are there, IF NOT EXISTS
 * costs no lock.
 *
 * entries_allowed: the allowlist entries alone (partial: the bulk of a
 * list, its blocklist, pays nothing for it), so that every load and
 * rebuild reads the few allowed keys in O(allowed), not by a scan of the
 * whole list (0.35 s of CPU of a load at 10^7 entries). allow is a column
 * of it so that the planner, which has no statistics, sees two equalities
 * and picks it.
 *
 * entries_prefix: the blocklists' prefix entries alone, so that a live
 * unblock of an IPv4 prefix reads the prefixes that remain
 * (sxdp_store_read_v4_prefixes) without walking a list of sources; kind
 * and allow are columns of it for the same reason.
 */
static const char compatible_indexes[] =
	"CREATE INDEX IF NOT EXISTS entries_allowed ON entries(list, allow, key) WHERE allow = 1;"
	"CREATE INDEX IF NOT EXISTS entries_prefix ON entries(list, kind, allow, key) "
	"WHERE kind = 1 AND allow = 0;";

/*
 * Origin ids (store.h, sxdp_store_origin_id): beside the schema's
 * versions, like the indexes above. An older sieve of the same version
 * never reads nor writes the table, and the ids it holds stay right: a
 * name's id never changes, whoever renamed or deleted entries meanwhile.
 */
static const char origin_ids_table[] =
	"CREATE TABLE IF NOT EXISTS origin_ids ("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL UNIQUE);";

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == SXDP_STORE_VERSION,
	       "one migration per schema version");

/*
 * The statements a command may run more than once, or that a one-entry
 * change runs: each is compiled at its first use (stmt()) and kept until
 * the store is closed, so that a `block` compiles only the few it runs.
 */
enum {
	ST_INSERT,	/* a new entry, or nothing */
	ST_UPDATE,	/* an existing one's attributes, if they differ */
	ST_DELETE,
	ST_BUMP,	/* the list's version */
	ST_HAS,		/* one entry, by the primary key (sxdp_store_has) */
	ST_GET,		/* one entry whole, by the primary key (sxdp_store_get) */
	ST_ENSURE_LIST,	/* a list's row */
	ST_VERSION,	/* a list's version */
	ST_ATTACH_GET,	/* one attachment */
	ST_ATTACHMENTS,	/* a list's attachments */
	ST_NR,
};

/*
 * The re-ban rule: an add of a key already there keeps the later expiry,
 * NULL (never) being the latest. A shorter TTL does not shorten it, an add
 * with no expiry of its own (?10, keep_expiry: `block` without --ttl)
 * keeps the one it has instead of making it permanent, and only an add
 * that says never (?5 NULL, ?10 0: `--ttl never`) makes it permanent. An
 * entry already due (?4 now) is banned afresh: it takes ?5. Shortening is
 * an unblock and a block (fail2ban's and CrowdSec's re-bans extend only).
 * An only_own add (?8: the agent mirroring the fleet's state, where the
 * publisher's expiry is the fleet's) takes ?5 as it is: a mirror that kept
 * a later one would drift from the fleet; unless it says extend_only (?11:
 * a CrowdSec decision, whose re-ban extends only, as fail2ban's).
 */
#define RE_BAN_EXPIRY							\
	"(CASE WHEN (?8 AND NOT ?11) OR expires_at <= ?4 THEN ?5 WHEN ?10 THEN expires_at "	\
	"WHEN expires_at IS NULL OR ?5 IS NULL THEN NULL "		\
	"ELSE max(expires_at, ?5) END)"

#define ATTACH_COLS "SELECT netns, iface, list, mode, backend, flags, fpp_ppb, capacity, " \
		    "max_probes FROM attachments "

static const char *const stmt_sql[ST_NR] = {
	[ST_INSERT] = "INSERT INTO entries(list, kind, key, added_at, expires_at, origin, comment, "
		      "allow) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?9) ON CONFLICT DO NOTHING",
	/*
	 * ?8: only an entry of the same origin (replace_origin). The expiry
	 * follows the re-ban rule (RE_BAN_EXPIRY).
	 */
	[ST_UPDATE] = "UPDATE entries SET expires_at = " RE_BAN_EXPIRY ", origin = ?6, comment = ?7 "
		      "WHERE list = ?1 AND key = ?3 AND allow = ?9 AND (?8 = 0 OR origin = ?6) AND "
		      "(expires_at IS NOT " RE_BAN_EXPIRY " OR origin IS NOT ?6 OR comment IS NOT ?7)",
	/* ?4: only an entry of that origin (NULL: any). */
	[ST_DELETE] = "DELETE FROM entries WHERE list = ?1 AND key = ?2 AND allow = ?3 AND "
		      "(?4 IS NULL OR origin = ?4)",
	[ST_BUMP] = "INSERT INTO lists(name, version) VALUES (?1, 1) "
		    "ON CONFLICT(name) DO UPDATE SET version = version + 1",
	[ST_HAS] = "SELECT 1 FROM entries WHERE list = ?1 AND key = ?2 AND allow = ?3",
	[ST_GET] = "SELECT kind, allow, added_at, expires_at, origin, comment FROM entries "
		   "WHERE list = ?1 AND key = ?2",
	[ST_ENSURE_LIST] = "INSERT OR IGNORE INTO lists(name) VALUES (?1)",
	[ST_VERSION] = "SELECT version FROM lists WHERE name = ?1",
	[ST_ATTACH_GET] = ATTACH_COLS "WHERE netns = ?1 AND iface = ?2",
	[ST_ATTACHMENTS] = ATTACH_COLS "WHERE ?1 IS NULL OR list = ?1 ORDER BY netns, iface",
};

static const sqlite3_module batch_module;

struct sxdp_store {
	sqlite3 *db;
	sqlite3_stmt *st[ST_NR];
	bool in_tx;		/* the caller's transaction */
	bool opened;		/* a sieve store, checked: bound_wal() may touch it */
	/* Lists whose version this transaction has bumped already. */
	char **bumped;
	size_t nbumped;
	char path[4096];
	char dir[4096];		/* the state folder: the digest secret's too */
	bool have_secret;
	__u64 secret[2];	/* sxdp_store_secret's, once read */
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* An SQLite result as -errno, with the database's message in @err. */
static int sqlerr(struct sxdp_store *s, int rc, const char *what, char *err, size_t errlen)
{
	int ret;

	switch (rc & 0xff) {
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
	case SQLITE_FORMAT:
		ret = -EINVAL;
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		ret = -EBUSY;
		break;
	case SQLITE_NOMEM:
		ret = -ENOMEM;
		break;
	case SQLITE_FULL:
		ret = -ENOSPC;
		break;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		ret = -EACCES;
		break;
	default:
		ret = -EIO;
	}
	seterr(err, errlen, "%s: %s: %s", s->path, what,
	       s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
	return ret;
}

static int exec(struct sxdp_store *s, const char *sql, char *err, size_t errlen)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sqlerr(s, rc, sql, err, errlen);
}

/* One integer from @sql (a PRAGMA or a count). */
static int query_int(struct sxdp_store *s, const char *sql, int64_t *v, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, sql, err, errlen);
	rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sqlerr(s, rc, sql, err, errlen);
}

static int mkdir_p(const char *dir)
{
	char buf[4096];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * The state folder holds the list of record: one that existed before
 * (made by hand, by an older version, by a package) is made ours, 0700:
 * group and others lose every right. One owned by another user is
 * refused (-EPERM): that user could replace the store under us.
 */
static int own_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int fd, ret = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		seterr(err, errlen, "%s: %s", dir, strerror(errno));
	} else if (st.st_uid != geteuid()) {
		ret = -EPERM;
		seterr(err, errlen, "%s: owned by uid %u, not by this user (uid %u): refused",
		       dir, (unsigned int)st.st_uid, (unsigned int)geteuid());
	} else if ((st.st_mode & 077) && fchmod(fd, st.st_mode & 0700)) {
		ret = -errno;
		seterr(err, errlen, "%s: tightening its mode to 0700: %s", dir, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * Brings the schema to SXDP_STORE_VERSION. Under the write lock, the
 * version is read again: another process may have migrated meanwhile.
 */
static int migrate(struct sxdp_store *s, char *err, size_t errlen)
{
	int64_t version, objects;
	char pragma[64];
	int ret;

	ret = exec(s, "BEGIN IMMEDIATE", err, errlen);
	if (ret)
		return ret;
	ret = query_int(s, "PRAGMA user_version", &version, err, errlen);
	if (!ret && version == 0) {
		ret = query_int(s, "SELECT count(*) FROM sqlite_master", &objects, err, errlen);
		if (!ret && objects) {
			seterr(err, errlen, "%s: a database of something else (tables, no sieve "
			       "schema version): refusing to touch it", s->path);
			ret = -EINVAL;
		}
	}
	for (; !ret && version < SXDP_STORE_VERSION; version++)
		ret = exec(s, migrations[version], err, errlen);
	if (!ret) {
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", SXDP_STORE_VERSION);
		ret = exec(s, pragma, err, errlen);
	}
	if (!ret) {
		snprintf(pragma, sizeof(pragma), "PRAGMA application_id = %d", SXDP_STORE_APP_ID);
		ret = exec(s, pragma, err, errlen);
	}
	if (!ret)
		ret = exec(s, "COMMIT", err, errlen);
	if (ret)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}

/* What check_file() reads of a database, in one snapshot. */
struct file_facts {
	int64_t version;	/* user_version */
	int64_t app_id;		/* application_id */
	int64_t objects;	/* tables, indexes, ... */
	int64_t tables;		/* of the sieve tables */
	int64_t wal;		/* in WAL mode */
};

/*
 * One snapshot (a migration may commit meanwhile) of @f. Plain PRAGMAs in
 * a read transaction, not one SELECT over the pragma_ table functions:
 * those cost a virtual table each, a tenth of a millisecond per command.
 */
static int read_facts(struct sxdp_store *s, struct file_facts *f, char *why, size_t whylen)
{
	static const char *const sql[] = {
		"PRAGMA user_version",
		"PRAGMA application_id",
		"SELECT count(*), count(*) FILTER (WHERE type = 'table' AND "
		"name IN ('lists', 'entries', 'attachments')) FROM sqlite_master",
		"PRAGMA journal_mode",
	};
	const char *mode;
	sqlite3_stmt *st;
	size_t i;
	int rc;

	rc = sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
	for (i = 0; rc == SQLITE_OK && i < sizeof(sql) / sizeof(sql[0]); i++) {
		rc = sqlite3_prepare_v2(s->db, sql[i], -1, &st, NULL);
		if (rc != SQLITE_OK)
			break;
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			rc = SQLITE_OK;
			if (i == 0) {
				f->version = sqlite3_column_int64(st, 0);
			} else if (i == 1) {
				f->app_id = sqlite3_column_int64(st, 0);
			} else if (i == 2) {
				f->objects = sqlite3_column_int64(st, 0);
				f->tables = sqlite3_column_int64(st, 1);
			} else {
				mode = (const char *)sqlite3_column_text(st, 0);
				f->wal = mode && !sqlite3_stricmp(mode, "wal");
			}
		}
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK)
		snprintf(why, whylen, "%s", sqlite3_errmsg(s->db));
	if (sqlite3_get_autocommit(s->db) == 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/*
 * Reads the header's versions before anything writes to the file: a
 * store of a newer schema, or a foreign database, is refused untouched.
 */
static int check_file(struct sxdp_store *s, struct file_facts *f, char *err, size_t errlen)
{
	int64_t version, app_id;
	char why[256] = "";
	int rc;

	memset(f, 0, sizeof(*f));
	rc = read_facts(s, f, why, sizeof(why));
	version = f->version;
	app_id = f->app_id;
	if ((rc & 0xff) == SQLITE_BUSY) {
		seterr(err, errlen, "%s: open: %s", s->path, why);
		return -EBUSY;
	}
	if (rc != SQLITE_OK) {
		seterr(err, errlen, "%s: not a sieve store: %s", s->path, why);
		return -EINVAL;
	}
	if (app_id && app_id != SXDP_STORE_APP_ID) {
		seterr(err, errlen, "%s: a database of another application (id %#llx): refusing "
		       "to touch it", s->path, (unsigned long long)app_id);
		return -EINVAL;
	}
	if (version > SXDP_STORE_VERSION) {
		seterr(err, errlen, "%s: store schema version %lld is newer than this sieve's "
		       "(%d): use a newer sieve; the file is left as it is", s->path,
		       (long long)version, SXDP_STORE_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (version ? app_id != SXDP_STORE_APP_ID : f->objects != 0) {
		seterr(err, errlen, "%s: a database of something else (%s): refusing to touch it",
		       s->path, version ? "no sieve id" : "tables, no sieve schema version");
		return -EINVAL;
	}
	return 0;
}

/* The sieve tables are there (@n of them), as a store of this version has them. */
static int check_schema(struct sxdp_store *s, int64_t n, char *err, size_t errlen)
{
	int ret = 0;

	if (n < 0)
		ret = query_int(s, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
				"name IN ('lists', 'entries', 'attachments')", &n, err, errlen);
	if (!ret && n != 3) {
		seterr(err, errlen, "%s: a sieve store without its tables: damaged", s->path);
		ret = -EINVAL;
	}
	return ret;
}

/*
 * Each CLI run is a new connection, and SQLite's last connection to close
 * checkpoints the log into the database and deletes it, and the next one
 * writes a new log header: four fsyncs on top of the commit's one, most
 * of what a `block` costs. So the log is kept across connections and
 * checkpointed by the commits themselves (wal_autocheckpoint, every 1000
 * pages); a commit stays one fsync of the log, and as durable.
 */
static void keep_wal(struct sxdp_store *s)
{
	int on = 1;

	sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_file_control(s->db, "main", SQLITE_FCNTL_PERSIST_WAL, &on);
}

/*
 * One sync per commit: the log's. SQLite's unix VFS opens the log with
 * O_CREAT on every connection, and a log it opens so it takes for new: at
 * its first sync it syncs the folder too, so that the file's name is as
 * durable as its frames. For a CLI run that is a second sync per command,
 * of a name that a connection before made durable already: the log is
 * kept (keep_wal()), so it is made once in the life of a store.
 *
 * So the log is opened without SQLITE_OPEN_CREATE (and then not synced
 * as new) when it holds more than its header. That proves its name
 * durable: SQLite writes frames into a log only after the header of that
 * log has been synced (its first sync in the file, which was a new log's
 * of the connection that made it and so synced the folder too), and a log
 * only shrinks to nothing (a TRUNCATE checkpoint, bound_wal()). An empty
 * or missing log is opened as before (a missing one is made, and synced
 * with its folder). What a crash of the machine leaves on disk is durable
 * by definition; a process killed at any point leaves either no frames
 * (the next connection syncs the folder) or frames after a folder sync.
 * (A writer with synchronous=OFF skips the header's sync: none of ours.)
 */
#define WAL_HEADER_BYTES	32	/* SQLite's WAL_HDRSIZE */
#define WAL_VFS			"sieve-wal"

static sqlite3_vfs *base_vfs;
static sqlite3_vfs wal_vfs;
static pthread_once_t wal_vfs_once = PTHREAD_ONCE_INIT;

static int wal_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	int kept = flags;
	struct stat st;
	int rc;

	(void)vfs;
	if ((flags & SQLITE_OPEN_WAL) && (flags & SQLITE_OPEN_CREATE) && name &&
	    !lstat(name, &st) && S_ISREG(st.st_mode) && st.st_size > WAL_HEADER_BYTES)
		kept &= ~SQLITE_OPEN_CREATE;
	rc = base_vfs->xOpen(base_vfs, name, f, kept, out);
	/* Gone meanwhile (another process's last close deletes it): made as new. */
	if (rc != SQLITE_OK && kept != flags)
		rc = base_vfs->xOpen(base_vfs, name, f, flags, out);
	return rc;
}

/* The default VFS with wal_open(): every other call is its own. */
static void wal_vfs_register(void)
{
	base_vfs = sqlite3_vfs_find(NULL);
	if (!base_vfs)
		return;
	wal_vfs = *base_vfs;
	wal_vfs.pNext = NULL;
	wal_vfs.zName = WAL_VFS;
	wal_vfs.xOpen = wal_open;
	if (sqlite3_vfs_register(&wal_vfs, 0) != SQLITE_OK)
		base_vfs = NULL;
}

/* The VFS a store is opened with: WAL_VFS, or the default if that failed. */
static const char *store_vfs(void)
{
	pthread_once(&wal_vfs_once, wal_vfs_register);
	return base_vfs ? WAL_VFS : NULL;
}

/*
 * Setting the journal mode takes a lock even when the mode stays, and
 * that failed with "database is locked", the busy timeout notwithstanding,
 * while another process emptied the log (bound_wal(); e2e
 * concurrent_attach_detach). Reading it does not (check_file()): it is
 * set only once.
 */
static int set_wal(struct sxdp_store *s, const struct file_facts *f, char *err, size_t errlen)
{
	return f->wal ? 0 : exec(s, "PRAGMA journal_mode = WAL", err, errlen);
}

int sxdp_store_open(const char *state_dir, struct sxdp_store **sp, char *err, size_t errlen)
{
	return sxdp_store_open_sync(state_dir, SXDP_STORE_SYNC_FULL, sp, err, errlen);
}

/*
 * The connection's PRAGMAs. synchronous=NORMAL in WAL mode still syncs a
 * new log's header (so wal_open()'s reasoning holds) and every checkpoint
 * (the log before it is copied, the database after): only the commit's
 * own sync goes.
 */
static const char *const connection_pragmas[] = {
	[SXDP_STORE_SYNC_FULL] = "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; "
		"PRAGMA temp_store = MEMORY; PRAGMA cache_size = " STORE_CACHE_KIB,
	[SXDP_STORE_SYNC_NORMAL] = "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; "
		"PRAGMA temp_store = MEMORY; PRAGMA cache_size = " STORE_CACHE_KIB,
};

int sxdp_store_open_sync(const char *state_dir, enum sxdp_store_sync sync,
			 struct sxdp_store **sp, char *err, size_t errlen)
{
	struct file_facts f;
	struct sxdp_store *s;
	struct stat stbuf;
	int fd, rc, ret;

	/* $SIEVE_STATE_DIR and sieve.conf are the caller's: settings.c, one order for all. */
	if (!state_dir || !*state_dir)
		state_dir = SXDP_STORE_DIR;
	if ((unsigned int)sync > SXDP_STORE_SYNC_NORMAL) {
		seterr(err, errlen, "unknown sync mode %d", (int)sync);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (snprintf(s->path, sizeof(s->path), "%s/%s", state_dir, SXDP_STORE_FILE) >=
	    (int)sizeof(s->path)) {
		seterr(err, errlen, "%s: state folder name too long", state_dir);
		ret = -ENAMETOOLONG;
		goto out_free;
	}
	snprintf(s->dir, sizeof(s->dir), "%s", state_dir);
	ret = mkdir_p(state_dir);
	if (ret) {
		seterr(err, errlen, "%s: %s", state_dir, strerror(-ret));
		goto out_free;
	}
	ret = own_dir(state_dir, err, errlen);
	if (ret)
		goto out_free;
	/* Created here, so that its mode is ours (SQLite gives the WAL the same). */
	fd = open(s->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fstat(fd, &stbuf) || !S_ISREG(stbuf.st_mode)) {
		ret = fd < 0 ? -errno : -EINVAL;
		seterr(err, errlen, "%s: %s", s->path, fd < 0 ? strerror(errno) : "not a file");
		if (fd >= 0)
			close(fd);
		goto out_free;
	}
	close(fd);

	/*
	 * NOMUTEX: a store (connection) is used by one thread at a time (the
	 * agent's threads each open their own), so SQLite's per-call lock is
	 * pure cost, a few per entry written.
	 */
	rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW |
			     SQLITE_OPEN_NOMUTEX, store_vfs());
	if (rc != SQLITE_OK) {
		ret = sqlerr(s, rc, "open", err, errlen);
		goto out_close;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, SXDP_STORE_BUSY_MS);
	keep_wal(s);
	ret = check_file(s, &f, err, errlen);
	if (ret)
		goto out_close;
	ret = set_wal(s, &f, err, errlen);
	if (!ret)
		ret = exec(s, connection_pragmas[sync], err, errlen);
	if (!ret && f.version < SXDP_STORE_VERSION)
		ret = migrate(s, err, errlen);
	/* Counted again after a migration; else as check_file() found them. */
	if (!ret)
		ret = check_schema(s, f.version < SXDP_STORE_VERSION ? -1 : f.tables, err,
				   errlen);
	/*
	 * Not fatal: without them every answer is the same, only slower (a
	 * store on a read-only mount, another writer past the busy timeout
	 * while they are first made); the next open tries again.
	 */
	if (!ret)
		sqlite3_exec(s->db, compatible_indexes, NULL, NULL, NULL);
	if (!ret)
		sqlite3_exec(s->db, origin_ids_table, NULL, NULL, NULL);
	if (!ret) {
		rc = sqlite3_create_module(s->db, "sxdp_batch", &batch_module, NULL);
		if (rc != SQLITE_OK)
			ret = sqlerr(s, rc, "sxdp_batch", err, errlen);
	}
	if (ret)
		goto out_close;
	s->opened = true;
	*sp = s;
	return 0;

out_close:
	sxdp_store_close(s);
	return ret;
out_free:
	free(s);
	return ret;
}

static void forget_bumps(struct sxdp_store *s)
{
	size_t i;

	for (i = 0; i < s->nbumped; i++)
		free(s->bumped[i]);
	free(s->bumped);
	s->bumped = NULL;
	s->nbumped = 0;
}

/*
 * The log is kept across connections (keep_wal()), but what it holds
 * costs every later process: the first connection of a process finds no
 * other holding the log's index (-shm) and rebuilds it by reading every
 * frame of the log, and a rebuilt index forgets how much of it was
 * checkpointed, so a commit that then passes wal_autocheckpoint copies
 * all of it into the database again (a 10^5-entry load left 9.8 MB: each
 * later `block` read 19.6 MB, and the log only grew, by a few pages a
 * command, until it passed the bound). So a connection that leaves more
 * than WAL_KEEP_BYTES of log checkpoints it all and empties it at close:
 * after a bulk load, and once every few dozen small changes (a `block`
 * logs about 12 KiB). The bound weighs what a process pays to read the
 * log (about 1 ms a MiB, every command) against an emptying's fsyncs
 * (the database's, the log's, and the next log header's: a few ms, once
 * per WAL_KEEP_BYTES of changes); 256 KiB is about where their sum is
 * least. Emptying is SQLite's own TRUNCATE checkpoint (the database is
 * synced before the log is cut: kill -9 safe). A log past what
 * wal_autocheckpoint keeps (1000 pages, WAL_WAIT_BYTES), a bulk change's,
 * waits at most a second for readers and writers in the way; a smaller
 * one is emptied only if none is, so that a `block` never waits on a
 * long `list`. Either way, if they stay, the next close tries again.
 */
#define WAL_KEEP_BYTES	(256 << 10)
#define WAL_WAIT_BYTES	(4 << 20)
#define WAL_TRUNCATE_WAIT_MS	1000

static void bound_wal(struct sxdp_store *s)
{
	char wal[sizeof(s->path) + 4];
	struct stat st;

	if (snprintf(wal, sizeof(wal), "%s-wal", s->path) >= (int)sizeof(wal) ||
	    stat(wal, &st) || st.st_size <= WAL_KEEP_BYTES)
		return;
	sqlite3_busy_timeout(s->db, st.st_size > WAL_WAIT_BYTES ? WAL_TRUNCATE_WAIT_MS : 0);
	sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
}

void sxdp_store_close(struct sxdp_store *s)
{
	int i;

	if (!s)
		return;
	if (s->in_tx)
		sxdp_store_rollback(s);
	for (i = 0; i < ST_NR; i++)
		sqlite3_finalize(s->st[i]);
	if (s->opened)
		bound_wal(s);
	sqlite3_close(s->db);
	forget_bumps(s);
	explicit_bzero(s->secret, sizeof(s->secret));
	free(s);
}

const char *sxdp_store_path(const struct sxdp_store *s)
{
	return s->path;
}

int sxdp_store_secret(struct sxdp_store *s, const __u64 **secret, char *err, size_t errlen)
{
	int ret = 0;

	if (!s->have_secret) {
		ret = sxdp_secret_load(s->dir, s->secret, err, errlen);
		s->have_secret = !ret;
	}
	*secret = s->have_secret ? s->secret : NULL;
	return ret;
}

static int begin(struct sxdp_store *s, const char *sql, char *err, size_t errlen)
{
	int ret;

	if (s->in_tx) {
		seterr(err, errlen, "%s: a transaction is open already", s->path);
		return -EBUSY;
	}
	ret = exec(s, sql, err, errlen);
	if (!ret)
		s->in_tx = true;
	return ret;
}

int sxdp_store_begin(struct sxdp_store *s, char *err, size_t errlen)
{
	return begin(s, "BEGIN IMMEDIATE", err, errlen);
}

/* Deferred: the snapshot starts at the first read, and takes no write lock. */
int sxdp_store_begin_read(struct sxdp_store *s, char *err, size_t errlen)
{
	return begin(s, "BEGIN", err, errlen);
}

int sxdp_store_commit(struct sxdp_store *s, char *err, size_t errlen)
{
	int ret;

	if (!s->in_tx)
		return 0;
	ret = exec(s, "COMMIT", err, errlen);
	if (ret) {
		sxdp_store_rollback(s);
		return ret;
	}
	s->in_tx = false;
	forget_bumps(s);
	return 0;
}

void sxdp_store_rollback(struct sxdp_store *s)
{
	if (sqlite3_get_autocommit(s->db) == 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_tx = false;
	forget_bumps(s);
}

bool sxdp_store_in_tx(const struct sxdp_store *s)
{
	return s->in_tx;
}

/* A transaction for one call, unless the caller has one open. */
static int call_begin(struct sxdp_store *s, bool *own, char *err, size_t errlen)
{
	*own = !s->in_tx;
	return *own ? sxdp_store_begin(s, err, errlen) : 0;
}

static int call_end(struct sxdp_store *s, bool own, int ret, char *err, size_t errlen)
{
	if (!own)
		return ret;
	if (ret) {
		sxdp_store_rollback(s);
		return ret;
	}
	return sxdp_store_commit(s, err, errlen);
}

/* Runs a prepared statement that returns no row; its bindings are cleared. */
static int step_done(struct sxdp_store *s, sqlite3_stmt *st, char *err, size_t errlen)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return sqlerr(s, rc, sqlite3_sql(st), err, errlen);
	return 0;
}

/* Statement @id (stmt_sql), compiled at its first use. */
static int stmt(struct sxdp_store *s, int id, sqlite3_stmt **st, char *err, size_t errlen)
{
	int rc;

	*st = NULL;
	if (!s->st[id]) {
		rc = sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
					&s->st[id], NULL);
		if (rc != SQLITE_OK) {
			s->st[id] = NULL;
			return sqlerr(s, rc, "prepare", err, errlen);
		}
	}
	*st = s->st[id];
	return 0;
}

/* Done with a kept statement's rows: its lock and bindings go. */
static void stmt_done(sqlite3_stmt *st)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* @list changed: its version goes up, once per transaction. */
static int bump(struct sxdp_store *s, const char *list, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	char **bumped;
	size_t i;
	int ret;

	for (i = 0; i < s->nbumped; i++)
		if (!strcmp(s->bumped[i], list))
			return 0;
	ret = stmt(s, ST_BUMP, &st, err, errlen);
	if (ret)
		return ret;
	bumped = realloc(s->bumped, (s->nbumped + 1) * sizeof(*bumped));
	if (!bumped)
		return -ENOMEM;
	s->bumped = bumped;
	bumped[s->nbumped] = strdup(list);
	if (!bumped[s->nbumped])
		return -ENOMEM;
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	ret = step_done(s, st, err, errlen);
	if (!ret)
		s->nbumped++;
	else
		free(bumped[s->nbumped]);
	return ret;
}

/* The list's row, for entries to refer to (version 0 until it changes). */
static int ensure_list(struct sxdp_store *s, const char *list, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int ret;

	ret = stmt(s, ST_ENSURE_LIST, &st, err, errlen);
	if (ret)
		return ret;
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	return step_done(s, st, err, errlen);
}

/* -EEXIST if @text is in @list on the list other than @allow's. */
static int on_other_list(struct sxdp_store *s, const char *list, const char *text, bool allow,
			 char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc, ret;

	ret = stmt(s, ST_HAS, &st, err, errlen);
	if (ret)
		return ret;
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, !allow);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		seterr(err, errlen, "%s is %s in list %s: %s it first", text,
		       allow ? "blocked" : "allowed", list, allow ? "unblock" : "disallow");
		ret = -EEXIST;
	} else if (rc != SQLITE_DONE) {
		ret = sqlerr(s, rc, "add", err, errlen);
	}
	stmt_done(st);
	return ret;
}

/*
 * Upserts one key: *@is_new if inserted, *@changed if anything was
 * written. @same_origin: update only an entry of @a->origin, and leave a
 * key on the other list to it (a refresh, see replace_origin).
 */
static int upsert(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *key,
		  const char *text, int64_t expires_at, const struct sxdp_store_attrs *a,
		  bool same_origin, bool *is_new, bool *changed, char *err, size_t errlen)
{
	int i, ret;

	for (i = ST_INSERT; i <= ST_UPDATE; i++) {
		sqlite3_stmt *st;

		ret = stmt(s, i, &st, err, errlen);
		if (ret)
			return ret;
		sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 2, key->kind);
		sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, a->now);
		if (expires_at)
			sqlite3_bind_int64(st, 5, expires_at);
		else
			sqlite3_bind_null(st, 5);
		sqlite3_bind_text(st, 6, a->origin, -1, SQLITE_STATIC);
		if (a->comment)
			sqlite3_bind_text(st, 7, a->comment, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 7);
		if (i == ST_UPDATE) {
			sqlite3_bind_int(st, 8, same_origin);
			sqlite3_bind_int(st, 10, a->keep_expiry);
			sqlite3_bind_int(st, 11, a->extend_only);
		}
		sqlite3_bind_int(st, 9, a->allow);
		ret = step_done(s, st, err, errlen);
		if (ret)
			return ret;
		if (sqlite3_changes(s->db)) {
			*is_new = i == ST_INSERT;
			*changed = true;
			return 0;
		}
	}
	*is_new = false;
	/*
	 * A feed that lists a key the operator allowed is what the allowlist
	 * is for: the refresh goes on without it, as it does for a key of
	 * another origin. Only an explicit add is refused.
	 */
	if (same_origin)
		return 0;
	return on_other_list(s, list, text, a->allow, err, errlen);
}

/*
 * A batch's keys as text, in text order. The primary key and the origin
 * index are ordered by it: a batch written in that order walks each
 * B-tree once, left to right, instead of jumping across it per key (a
 * feed or a fleet resync comes in any order). 10^6 entries: see README.
 */
struct key_text {
	size_t off;	/* in the arena */
	size_t i;	/* the key's index in the batch */
};

struct key_texts {
	struct key_text *v;
	char *arena;
};

static int key_text_cmp(const void *a, const void *b, void *arena)
{
	return strcmp((char *)arena + ((const struct key_text *)a)->off,
		      (char *)arena + ((const struct key_text *)b)->off);
}

/* @v in decimal at @p; the end. */
static char *put_u8(char *p, unsigned int v)
{
	if (v >= 100)
		*p++ = '0' + v / 100;
	if (v >= 10)
		*p++ = '0' + v / 10 % 10;
	*p++ = '0' + v % 10;
	return p;
}

/*
 * sxdp_format_entry(), with the kinds feeds are made of (IPv4 sources and
 * prefixes) written directly: at 10^7 keys inet_ntop and snprintf were a
 * tenth of a load. The same text (tests/unit store_test: key_text).
 */
size_t sxdp_store_key_text(const struct sieve_xdp_key *key, char *buf, size_t len)
{
	const unsigned char *a = (const unsigned char *)key->saddr;
	char *p = buf;
	int i;

	if (key->family != SIEVE_XDP_V4 || len < sizeof("255.255.255.255/32") ||
	    (key->kind != SIEVE_XDP_SRC && key->kind != SIEVE_XDP_PREFIX)) {
		sxdp_format_entry(key, buf, len);
		return strlen(buf);
	}
	for (i = 0; i < 4; i++) {
		p = put_u8(p, a[i]);
		*p++ = i < 3 ? '.' : '\0';
	}
	p--;
	if (key->kind == SIEVE_XDP_PREFIX) {
		*p++ = '/';
		p = put_u8(p, key->prefix_len);
		*p = '\0';
	}
	return p - buf;
}

/* Whether @key's text is dotted IPv4 with an optional "/LEN" (sxdp_store_key_text's fast kinds). */
static bool key_dotted(const struct sieve_xdp_key *key)
{
	return key->family == SIEVE_XDP_V4 &&
	       (key->kind == SIEVE_XDP_SRC || key->kind == SIEVE_XDP_PREFIX);
}

/*
 * Where each of 0..255 written in decimal falls in strcmp() order ("0" <
 * "1" < "10" < "100" < ... < "99"), made once (decimal_rank_once).
 */
static uint8_t decimal_rank[256];
static pthread_once_t decimal_rank_once = PTHREAD_ONCE_INIT;

static void decimal_rank_make(void)
{
	char text[256][4];
	unsigned int i, j, r;

	for (i = 0; i < 256; i++)
		snprintf(text[i], sizeof(text[i]), "%u", i);
	for (i = 0; i < 256; i++) {
		for (j = 0, r = 0; j < 256; j++)
			r += strcmp(text[j], text[i]) < 0;
		decimal_rank[i] = r;
	}
}

/*
 * A dotted key's text order as a number. Its text is four decimal fields
 * ended by '.', '.', '.' and then NUL or "/LEN": each ender sorts below
 * every digit, so two texts compare as their first differing field's
 * decimal strings do (a field that is the other's head ends first, and
 * sorts first), and after four equal fields a source (NUL) sorts before a
 * prefix ('/'), prefixes by their length's string. So the text order is
 * the order of (rank of each byte, 0 for a source or 1 + rank of the
 * length), packed from the most significant end.
 */
static uint64_t dotted_order(const struct sieve_xdp_key *key)
{
	const uint8_t *rank = decimal_rank;
	const unsigned char *a = (const unsigned char *)key->saddr;
	uint64_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = v << 8 | rank[a[i]];
	return v << 16 | (key->kind == SIEVE_XDP_PREFIX ? 1 + rank[key->prefix_len] : 0);
}

struct text_order {
	uint64_t order;
	size_t j;	/* into key_texts.v, as made */
};

/*
 * Sorts @kt's texts of @n dotted keys by dotted_order(), an LSD radix
 * sort over its six low bytes: 10^7 texts in linear passes instead of
 * n log n strcmp() calls through qsort_r (a tenth of a 10^7 load). -ENOMEM:
 * nothing done.
 */
static int key_texts_sort_dotted(const struct sieve_xdp_key *keys, size_t n, struct key_texts *kt)
{
	struct text_order *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b)), *t;
	struct key_text *sorted = malloc(n * sizeof(*sorted));
	size_t count[256], i, sum, k;
	unsigned int byte, c;
	int ret = -ENOMEM;

	if (!a || !b || !sorted)
		goto out;
	pthread_once(&decimal_rank_once, decimal_rank_make);
	for (i = 0; i < n; i++)
		a[i] = (struct text_order){ dotted_order(&keys[kt->v[i].i]), i };
	for (byte = 0; byte < 6; byte++) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[a[i].order >> (8 * byte) & 0xff]++;
		if (count[a[0].order >> (8 * byte) & 0xff] == n)
			continue;	/* one value in this byte: nothing to order */
		for (c = 0, sum = 0; c < 256; c++) {
			k = count[c];
			count[c] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			b[count[a[i].order >> (8 * byte) & 0xff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (i = 0; i < n; i++)
		sorted[i] = kt->v[a[i].j];
	free(kt->v);
	kt->v = sorted;
	sorted = NULL;
	ret = 0;
out:
	free(a);
	free(b);
	free(sorted);
	return ret;
}

static int key_texts_make(const struct sieve_xdp_key *keys, size_t n, struct key_texts *kt)
{
	bool dotted = true;

	size_t i, used = 0, cap = 32 * n + 128, len;
	char text[128];

	kt->v = malloc((n ? n : 1) * sizeof(*kt->v));
	kt->arena = malloc(cap);
	if (!kt->v || !kt->arena)
		goto nomem;
	for (i = 0; i < n; i++) {
		len = sxdp_store_key_text(&keys[i], text, sizeof(text)) + 1;
		if (used + len > cap) {
			char *grown = realloc(kt->arena, 2 * cap);

			if (!grown)
				goto nomem;
			kt->arena = grown;
			cap *= 2;
		}
		memcpy(kt->arena + used, text, len);
		kt->v[i] = (struct key_text){ .off = used, .i = i };
		used += len;
		dotted = dotted && key_dotted(&keys[i]);
	}
	if (!dotted || n < 64 || key_texts_sort_dotted(keys, n, kt))
		qsort_r(kt->v, n, sizeof(*kt->v), key_text_cmp, kt->arena);
	return 0;
nomem:
	free(kt->v);
	free(kt->arena);
	return -ENOMEM;
}

static void key_texts_free(struct key_texts *kt)
{
	free(kt->v);
	free(kt->arena);
}

static const char *key_text(const struct key_texts *kt, size_t j)
{
	return kt->arena + kt->v[j].off;
}

static int check_attrs(const struct sxdp_store_attrs *a, size_t n, char *err, size_t errlen)
{
	size_t i;

	if (!a || !a->origin || !*a->origin || a->expires_at < 0)
		goto bad;
	for (i = 0; a->expires_each && i < n; i++)
		if (a->expires_each[i] < 0)
			goto bad;
	return 0;
bad:
	seterr(err, errlen, "an entry needs an origin and an expiry >= 0");
	return -EINVAL;
}

/* Key @i's expiry under @a. */
static int64_t expiry_of(const struct sxdp_store_attrs *a, size_t i)
{
	return a->expires_each ? a->expires_each[i] : a->expires_at;
}

static int add_keys(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *keys,
		    size_t n, const struct sxdp_store_attrs *a, size_t *added, size_t *updated,
		    struct sxdp_keys *fresh, char *err, size_t errlen)
{
	bool own, is_new, changed = false, this_one;
	size_t i, j, nnew = 0, nupd = 0;
	struct key_texts kt;
	int ret;

	ret = check_attrs(a, n, err, errlen);
	if (ret)
		return ret;
	if (key_texts_make(keys, n, &kt)) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = call_begin(s, &own, err, errlen);
	if (ret)
		goto out;
	ret = ensure_list(s, list, err, errlen);
	for (j = 0; !ret && j < n; j++) {
		i = kt.v[j].i;
		this_one = is_new = false;
		ret = upsert(s, list, &keys[i], key_text(&kt, j), expiry_of(a, i), a, a->only_own,
			     &is_new, &this_one, err, errlen);
		nnew += is_new;
		nupd += this_one && !is_new;
		changed |= this_one;
		if (!ret && is_new && fresh && sxdp_keys_add(fresh, &keys[i]))
			ret = -ENOMEM;
	}
	if (!ret && changed)
		ret = bump(s, list, err, errlen);
	ret = call_end(s, own, ret, err, errlen);
out:
	key_texts_free(&kt);
	if (!ret && added)
		*added = nnew;
	if (!ret && updated)
		*updated = nupd;
	return ret;
}

int sxdp_store_add(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *keys,
		   size_t n, const struct sxdp_store_attrs *a, size_t *added,
		   char *err, size_t errlen)
{
	return add_keys(s, list, keys, n, a, added, NULL, NULL, err, errlen);
}

int sxdp_store_add_fresh(struct sxdp_store *s, const char *list,
			 const struct sieve_xdp_key *keys, size_t n,
			 const struct sxdp_store_attrs *a, struct sxdp_keys *fresh,
			 size_t *updated, char *err, size_t errlen)
{
	return add_keys(s, list, keys, n, a, NULL, updated, fresh, err, errlen);
}

int sxdp_store_remove(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *keys,
		      size_t n, size_t *missing, char *err, size_t errlen)
{
	return sxdp_store_remove_from(s, list, false, keys, n, missing, err, errlen);
}

int sxdp_store_remove_from(struct sxdp_store *s, const char *list, bool allow,
			   const struct sieve_xdp_key *keys, size_t n, size_t *missing,
			   char *err, size_t errlen)
{
	return sxdp_store_remove_own(s, list, allow, NULL, keys, n, missing, err, errlen);
}

/* The removals; *@missing: the keys that were not there; @removed: those that were. */
static int remove_keys(struct sxdp_store *s, const char *list, bool allow, const char *origin,
		       const struct sieve_xdp_key *keys, size_t n, size_t *missing,
		       struct sxdp_keys *removed, char *err, size_t errlen)
{
	size_t i, gone = 0;
	sqlite3_stmt *st;
	char text[128];
	bool own;
	int ret;

	ret = stmt(s, ST_DELETE, &st, err, errlen);
	if (!ret)
		ret = call_begin(s, &own, err, errlen);
	if (ret)
		return ret;
	for (i = 0; !ret && i < n; i++) {
		sxdp_format_entry(&keys[i], text, sizeof(text));
		sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 3, allow);
		if (origin)
			sqlite3_bind_text(st, 4, origin, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 4);
		ret = step_done(s, st, err, errlen);
		if (ret || !sqlite3_changes(s->db))
			continue;
		gone++;
		if (removed)
			ret = sxdp_keys_add(removed, &keys[i]);
	}
	if (!ret && gone)
		ret = bump(s, list, err, errlen);
	ret = call_end(s, own, ret, err, errlen);
	if (!ret && missing)
		*missing = n - gone;
	return ret;
}

int sxdp_store_remove_own(struct sxdp_store *s, const char *list, bool allow, const char *origin,
			  const struct sieve_xdp_key *keys, size_t n, size_t *missing,
			  char *err, size_t errlen)
{
	return remove_keys(s, list, allow, origin, keys, n, missing, NULL, err, errlen);
}

int sxdp_store_remove_gone(struct sxdp_store *s, const char *list, bool allow, const char *origin,
			   const struct sieve_xdp_key *keys, size_t n, struct sxdp_keys *removed,
			   char *err, size_t errlen)
{
	return remove_keys(s, list, allow, origin, keys, n, NULL, removed, err, errlen);
}

/* Whether @list has entries of @a's origin on @a's side (an indexed probe). */
static int origin_present(struct sxdp_store *s, const char *list,
			  const struct sxdp_store_attrs *a, bool *present, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, "SELECT 1 FROM entries WHERE list = ?1 AND origin = ?2 AND "
				"allow = ?3 LIMIT 1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "replace", err, errlen);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, a->origin, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, a->allow);
	rc = sqlite3_step(st);
	*present = rc == SQLITE_ROW;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "replace", err, errlen);
}

/*
 * A batch of keys as a table of one statement (a table-valued function,
 * sxdp_batch(?)): a refresh writes its whole batch with one INSERT, one
 * UPDATE and one DELETE instead of two statements per key, whose setup
 * and teardown (bind, step, reset, the statement's own journal) cost more
 * than the B-tree work itself at 10^6 keys. Rows come in text order (the
 * B-trees' own, see key_texts). The batch is bound with
 * sqlite3_bind_pointer() under the type name "sxdp_batch", which SQL
 * cannot forge.
 */
struct batch {
	const struct sieve_xdp_key *keys;
	const struct key_texts *kt;
	const struct sxdp_store_attrs *a;
	size_t n;
};

enum { BATCH_KEY, BATCH_KIND, BATCH_EXP, BATCH_ARG };

struct batch_cursor {
	sqlite3_vtab_cursor base;
	const struct batch *b;
	size_t j, end;		/* the rows left: [j, end) */
};

static int batch_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
			 sqlite3_vtab **vt, char **errp)
{
	int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(key TEXT, kind INTEGER, exp INTEGER, "
				      "batch HIDDEN)");

	if (rc != SQLITE_OK)
		return rc;
	*vt = sqlite3_malloc(sizeof(**vt));
	if (!*vt)
		return SQLITE_NOMEM;
	memset(*vt, 0, sizeof(**vt));
	return SQLITE_OK;
}

static int batch_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

/*
 * Only with its argument (the batch): there is no table without one. A
 * key given is looked up (the batch is sorted by it), so that a join with
 * the entries walks the entries and finds each key in O(log n), never the
 * batch once per entry.
 */
#define BATCH_BY_KEY	1

static int batch_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	int i, arg = -1, key = -1;

	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (c->op != SQLITE_INDEX_CONSTRAINT_EQ)
			continue;
		if (c->iColumn == BATCH_ARG) {
			if (!c->usable)
				return SQLITE_CONSTRAINT;
			arg = i;
		} else if (c->iColumn == BATCH_KEY && c->usable) {
			key = i;
		}
	}
	if (arg < 0)
		return SQLITE_CONSTRAINT;
	info->aConstraintUsage[arg].argvIndex = 1;
	info->aConstraintUsage[arg].omit = 1;
	if (key >= 0) {
		info->aConstraintUsage[key].argvIndex = 2;
		info->aConstraintUsage[key].omit = 1;
		info->idxNum = BATCH_BY_KEY;
		info->estimatedCost = 20;
		info->estimatedRows = 1;
		return SQLITE_OK;
	}
	info->estimatedCost = 1e7;
	info->estimatedRows = 1000000;
	if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == BATCH_KEY &&
	    !info->aOrderBy[0].desc)
		info->orderByConsumed = 1;
	return SQLITE_OK;
}

static int batch_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **cur)
{
	struct batch_cursor *c = sqlite3_malloc(sizeof(*c));

	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*cur = &c->base;
	return SQLITE_OK;
}

static int batch_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int batch_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr, int argc,
			sqlite3_value **argv)
{
	struct batch_cursor *c = (struct batch_cursor *)cur;
	const struct key_texts *kt;
	const char *key;
	size_t lo, hi, mid;

	c->b = argc >= 1 ? sqlite3_value_pointer(argv[0], "sxdp_batch") : NULL;
	c->j = 0;
	c->end = c->b ? c->b->n : 0;
	if (!c->b || idx != BATCH_BY_KEY || argc != 2)
		return SQLITE_OK;
	key = (const char *)sqlite3_value_text(argv[1]);
	kt = c->b->kt;
	lo = 0;
	hi = c->b->n;
	while (key && lo < hi) {	/* the first >= key */
		mid = lo + (hi - lo) / 2;
		if (strcmp(key_text(kt, mid), key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	c->j = lo;
	for (hi = lo; key && hi < c->b->n && !strcmp(key_text(kt, hi), key); hi++)
		;
	c->end = hi;
	return SQLITE_OK;
}

static int batch_next(sqlite3_vtab_cursor *cur)
{
	((struct batch_cursor *)cur)->j++;
	return SQLITE_OK;
}

static int batch_eof(sqlite3_vtab_cursor *cur)
{
	struct batch_cursor *c = (struct batch_cursor *)cur;

	return !c->b || c->j >= c->end;
}

static int batch_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct batch_cursor *c = (struct batch_cursor *)cur;
	const struct batch *b = c->b;
	size_t i = b->kt->v[c->j].i;
	int64_t exp;

	switch (col) {
	case BATCH_KEY:
		sqlite3_result_text(ctx, key_text(b->kt, c->j), -1, SQLITE_STATIC);
		break;
	case BATCH_KIND:
		sqlite3_result_int(ctx, b->keys[i].kind);
		break;
	case BATCH_EXP:
		exp = expiry_of(b->a, i);
		if (exp)
			sqlite3_result_int64(ctx, exp);
		else
			sqlite3_result_null(ctx);
		break;
	default:
		sqlite3_result_null(ctx);
	}
	return SQLITE_OK;
}

static int batch_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct batch_cursor *)cur)->j;
	return SQLITE_OK;
}

static const sqlite3_module batch_module = {
	.xConnect = batch_connect,
	.xBestIndex = batch_best_index,
	.xDisconnect = batch_disconnect,
	.xOpen = batch_open,
	.xClose = batch_close,
	.xFilter = batch_filter,
	.xNext = batch_next,
	.xEof = batch_eof,
	.xColumn = batch_column,
	.xRowid = batch_rowid,
};

/*
 * Runs @sql over batch @b: ?1 the list, ?2 now, ?3 the origin, ?4 the
 * comment, ?5 allow, ?6 the batch. *@changes: the rows it changed.
 */
static int batch_exec(struct sxdp_store *s, const char *sql, const char *list,
		      const struct batch *b, size_t *changes, char *err, size_t errlen)
{
	const struct sxdp_store_attrs *a = b->a;
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "replace", err, errlen);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, a->now);
	sqlite3_bind_text(st, 3, a->origin, -1, SQLITE_STATIC);
	if (a->comment)
		sqlite3_bind_text(st, 4, a->comment, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, a->allow);
	sqlite3_bind_pointer(st, 6, (void *)b, "sxdp_batch", NULL);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE && changes)
		*changes = sqlite3_changes(s->db);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "replace", err, errlen);
}

/*
 * A refresh in three statements over the batch: the origin's entries not
 * in it go; its entries in it get its expiry and comment; the rest is
 * inserted unless the key is there already (another origin's, or on the
 * other list: left to it). A first load of an origin has nothing of its
 * own to drop or update: only the insert.
 */
static const char *const replace_sql[] = {
	"DELETE FROM entries WHERE list = ?1 AND origin = ?3 AND allow = ?5 AND "
	"key NOT IN (SELECT key FROM sxdp_batch(?6))",
	"UPDATE entries SET expires_at = b.exp, comment = ?4 FROM sxdp_batch(?6) AS b "
	"WHERE entries.list = ?1 AND entries.key = b.key AND entries.allow = ?5 AND "
	"entries.origin = ?3 AND (entries.expires_at IS NOT b.exp OR entries.comment IS NOT ?4)",
	"INSERT INTO entries(list, kind, key, added_at, expires_at, origin, comment, allow) "
	"SELECT ?1, kind, key, ?2, exp, ?3, ?4, ?5 FROM sxdp_batch(?6) WHERE true "
	"ON CONFLICT DO NOTHING",
};

static int list_add_text(struct sxdp_store *s, struct sxdp_keys *l, const char *text,
			 char *err, size_t errlen);

/*
 * The refresh's DELETE (@sql 0) or INSERT (1) with RETURNING key, the keys
 * of the rows it deletes or inserts appended to @l (the same one
 * statement, O(rows returned) more) while *@total, counted over both,
 * stays at most @max; past it @l is emptied, *@over set, and the rest
 * only counted. *@changes: the rows it changed.
 */
static int batch_returning(struct sxdp_store *s, int sql, const char *list,
			   const struct batch *b, struct sxdp_keys *l, size_t max, size_t *total,
			   bool *over, size_t *changes, char *err, size_t errlen)
{
	static const char *const sqls[] = {
		"DELETE FROM entries WHERE list = ?1 AND origin = ?3 AND allow = ?5 AND "
		"key NOT IN (SELECT key FROM sxdp_batch(?6)) RETURNING key",
		"INSERT INTO entries(list, kind, key, added_at, expires_at, origin, comment, allow) "
		"SELECT ?1, kind, key, ?2, exp, ?3, ?4, ?5 FROM sxdp_batch(?6) WHERE true "
		"ON CONFLICT DO NOTHING RETURNING key",
	};
	const struct sxdp_store_attrs *a = b->a;
	size_t rows = 0;
	sqlite3_stmt *st;
	int rc, ret = 0;

	rc = sqlite3_prepare_v2(s->db, sqls[sql], -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "replace", err, errlen);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, a->now);
	sqlite3_bind_text(st, 3, a->origin, -1, SQLITE_STATIC);
	if (a->comment)
		sqlite3_bind_text(st, 4, a->comment, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, a->allow);
	sqlite3_bind_pointer(st, 6, (void *)b, "sxdp_batch", NULL);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		rows++;
		if (ret || *over)
			continue;	/* stepped to the end all the same: one statement */
		if (++*total > max) {
			*over = true;
			sxdp_keys_free(l);
			continue;
		}
		ret = list_add_text(s, l, (const char *)sqlite3_column_text(st, 0), err, errlen);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sqlerr(s, rc, "replace", err, errlen);
	*changes = rows;
	return ret;
}

int sxdp_store_replace_origin(struct sxdp_store *s, const char *list,
			      const struct sieve_xdp_key *keys, size_t n,
			      const struct sxdp_store_attrs *a, size_t *added, size_t *removed,
			      char *err, size_t errlen)
{
	return sxdp_store_replace_origin_gone(s, list, keys, n, a, added, removed, NULL, NULL, 0,
					      NULL, err, errlen);
}

int sxdp_store_replace_origin_gone(struct sxdp_store *s, const char *list,
				   const struct sieve_xdp_key *keys, size_t n,
				   const struct sxdp_store_attrs *a, size_t *added,
				   size_t *removed, struct sxdp_keys *gone_keys,
				   struct sxdp_keys *fresh_keys, size_t keys_max, bool *keys_over,
				   char *err, size_t errlen)
{
	size_t nnew = 0, gone = 0, updated = 0, named = 0;
	bool over = false, fresh_named;
	struct batch b = { keys, NULL, a, n };
	bool own, present = false;
	struct key_texts kt;
	int ret;

	ret = check_attrs(a, n, err, errlen);
	if (ret)
		return ret;
	if (key_texts_make(keys, n, &kt)) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b.kt = &kt;
	ret = call_begin(s, &own, err, errlen);
	if (ret)
		goto out;
	ret = ensure_list(s, list, err, errlen);
	if (!ret)
		ret = origin_present(s, list, a, &present, err, errlen);
	if (!ret && present && !n && a->refuse_empty) {
		seterr(err, errlen, "no entries, and %s has entries of origin %s: refusing to "
		       "remove them all", list, a->origin);
		ret = -ENODATA;
	}
	if (!ret && present && gone_keys)
		ret = batch_returning(s, 0, list, &b, gone_keys, keys_max, &named, &over, &gone,
				      err, errlen);
	else if (!ret && present)
		ret = batch_exec(s, replace_sql[0], list, &b, &gone, err, errlen);
	if (!ret && present)
		ret = batch_exec(s, replace_sql[1], list, &b, &updated, err, errlen);
	/*
	 * The new keys are named on a refresh, or a first load within the
	 * bound (a bulk first load's are all of its keys): RETURNING buffers
	 * the rows it returns, a cost per key new.
	 */
	fresh_named = fresh_keys && !over && (present || n <= keys_max - named);
	if (!ret && n && fresh_named)
		ret = batch_returning(s, 1, list, &b, fresh_keys, keys_max, &named, &over, &nnew,
				      err, errlen);
	else if (!ret && n)
		ret = batch_exec(s, replace_sql[2], list, &b, &nnew, err, errlen);
	if (over && gone_keys)
		sxdp_keys_free(gone_keys);
	if (!ret && (nnew || updated || gone))
		ret = bump(s, list, err, errlen);
	ret = call_end(s, own, ret, err, errlen);
	if (!ret && added)
		*added = nnew;
	if (!ret && removed)
		*removed = gone;
	if (keys_over)
		*keys_over = over || (fresh_keys && !fresh_named && nnew);
out:
	key_texts_free(&kt);
	return ret;
}

/* Parses stored key @text into @l; a key that does not parse is damage. */
static int list_add_text(struct sxdp_store *s, struct sxdp_keys *l, const char *text,
			 char *err, size_t errlen)
{
	struct sieve_xdp_key key;
	const char *why;

	if (sxdp_parse_entry(text, &key, &why)) {
		seterr(err, errlen, "%s: stored entry '%s': %s", s->path, text, why);
		return -EINVAL;
	}
	return sxdp_keys_add(l, &key);
}

int sxdp_store_expire(struct sxdp_store *s, const char *list, int64_t now,
		      struct sxdp_keys *expired, char *err, size_t errlen)
{
	return sxdp_store_expire_split(s, list, now, expired, expired, err, errlen);
}

int sxdp_store_expire_split(struct sxdp_store *s, const char *list, int64_t now,
			    struct sxdp_keys *blocked, struct sxdp_keys *allowed, char *err,
			    size_t errlen)
{
	static const char *const sql[] = {
		"SELECT key, allow FROM entries WHERE list = ?1 AND expires_at <= ?2",
		"DELETE FROM entries WHERE list = ?1 AND expires_at <= ?2",
	};
	sqlite3_stmt *st;
	size_t i, gone = 0;
	bool own;
	int rc, ret;

	ret = call_begin(s, &own, err, errlen);
	if (ret)
		return ret;
	for (i = blocked || allowed ? 0 : 1; !ret && i < 2; i++) {
		rc = sqlite3_prepare_v2(s->db, sql[i], -1, &st, NULL);
		if (rc != SQLITE_OK) {
			ret = sqlerr(s, rc, "expire", err, errlen);
			break;
		}
		sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, now);
		while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct sxdp_keys *to = sqlite3_column_int(st, 1) ? allowed : blocked;

			if (to)
				ret = list_add_text(s, to, (const char *)sqlite3_column_text(st, 0),
						    err, errlen);
		}
		if (!ret && rc != SQLITE_DONE)
			ret = sqlerr(s, rc, "expire", err, errlen);
		if (!ret && i == 1)
			gone = sqlite3_changes(s->db);
		sqlite3_finalize(st);
	}
	if (!ret && gone)
		ret = bump(s, list, err, errlen);
	return call_end(s, own, ret, err, errlen);
}

int sxdp_store_foreach(struct sxdp_store *s, const char *list,
		       int (*cb)(const struct sxdp_store_entry *e, void *ctx), void *ctx,
		       char *err, size_t errlen)
{
	struct sxdp_store_entry e = { .list = list };
	sqlite3_stmt *st;
	int rc, ret = 0;

	rc = sqlite3_prepare_v2(s->db, "SELECT key, kind, allow, added_at, expires_at, origin, "
				"comment FROM entries WHERE list = ?1 ORDER BY key", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "read", err, errlen);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		e.key = (const char *)sqlite3_column_text(st, 0);
		e.kind = sqlite3_column_int(st, 1);
		e.allow = sqlite3_column_int(st, 2);
		e.added_at = sqlite3_column_int64(st, 3);
		e.expires_at = sqlite3_column_int64(st, 4);
		e.origin = (const char *)sqlite3_column_text(st, 5);
		e.comment = (const char *)sqlite3_column_text(st, 6);
		if (!e.key || !e.origin) {
			seterr(err, errlen, "%s: an entry of list %s without key or origin",
			       s->path, list);
			ret = -EINVAL;
			break;
		}
		ret = cb(&e, ctx);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sqlerr(s, rc, "read", err, errlen);
	sqlite3_finalize(st);
	return ret;
}

/* The keys @st's rows give (column 0), parsed and appended to @l; finalizes @st. */
static int read_keys(struct sxdp_store *s, sqlite3_stmt *st, const char *list,
		     struct sxdp_keys *l, char *err, size_t errlen)
{
	int rc, ret = 0;

	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 0);

		if (!key) {
			seterr(err, errlen, "%s: an entry of list %s without key", s->path, list);
			ret = -EINVAL;
			break;
		}
		ret = list_add_text(s, l, key, err, errlen);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sqlerr(s, rc, "read", err, errlen);
	sqlite3_finalize(st);
	return ret;
}

/*
 * Only the key: a rebuild reads every entry of a list, and at 10^7 the
 * other columns would cost seconds.
 */
int sxdp_store_read_from(struct sxdp_store *s, const char *list, bool allow,
			 struct sxdp_keys *l, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	/* allow = 1 as a literal: only then may SQLite use the partial index entries_allowed. */
	rc = sqlite3_prepare_v2(s->db, allow ? "SELECT key FROM entries WHERE list = ?1 AND "
				"allow = 1 ORDER BY key" : "SELECT key FROM entries WHERE list = ?1 "
				"AND allow = 0 ORDER BY key", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "read", err, errlen);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	return read_keys(s, st, list, l, err, errlen);
}

/*
 * Two ranges of the origin index, below and above @origin: a load into a
 * list of its own reads nothing, whatever its size.
 */
int sxdp_store_read_others(struct sxdp_store *s, const char *list, bool allow,
			   const char *origin, struct sxdp_keys *l, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, "SELECT key FROM entries WHERE list = ?1 AND origin < ?3 "
				"AND allow = ?2 UNION ALL SELECT key FROM entries WHERE list = ?1 AND "
				"origin > ?3 AND allow = ?2", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "read", err, errlen);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, allow);
	sqlite3_bind_text(st, 3, origin, -1, SQLITE_STATIC);
	return read_keys(s, st, list, l, err, errlen);
}

int sxdp_store_read_v4_prefixes(struct sxdp_store *s, const char *list, struct sxdp_keys *l,
				char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	_Static_assert(SIEVE_XDP_PREFIX == 1, "the kind the prefix index holds");
	/* Literals, as the index's WHERE: SQLite matches a partial index on them only. */
	rc = sqlite3_prepare_v2(s->db, "SELECT key FROM entries "
				"WHERE list = ?1 AND kind = 1 AND allow = 0 AND "
				"instr(key, ':') = 0", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "read", err, errlen);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	return read_keys(s, st, list, l, err, errlen);
}

int sxdp_store_read(struct sxdp_store *s, const char *list, struct sxdp_keys *l,
		    char *err, size_t errlen)
{
	return sxdp_store_read_from(s, list, false, l, err, errlen);
}

/* One count from @sql with a list, an optional int and an optional text. */
static int count_stmt(struct sxdp_store *s, const char *sql, const char *list, int kind,
		      const char *origin, uint64_t *v)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "count", NULL, 0);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, kind);
	if (origin)
		sqlite3_bind_text(st, 3, origin, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "count", NULL, 0);
}

int sxdp_store_version(struct sxdp_store *s, const char *list, uint64_t *version)
{
	sqlite3_stmt *st;
	int rc;

	rc = stmt(s, ST_VERSION, &st, NULL, 0);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	*version = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	stmt_done(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "version", NULL, 0);
}

int sxdp_store_count(struct sxdp_store *s, const char *list, int kind, const char *origin,
		     uint64_t *count)
{
	return count_stmt(s, "SELECT count(*) FROM entries WHERE list = ?1 AND "
			  "(?2 < 0 OR kind = ?2) AND (?3 IS NULL OR origin = ?3)", list, kind,
			  origin, count);
}

bool sxdp_list_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (!n || n > SXDP_LIST_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.-", name[i]))
			return false;
	return true;
}

void sxdp_store_names_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int sxdp_store_origin_counts(struct sxdp_store *s, const char *list,
			     int (*cb)(const struct sxdp_store_count *c, void *ctx), void *ctx)
{
	struct sxdp_store_count c;
	sqlite3_stmt *st;
	int rc, ret = 0;

	rc = sqlite3_prepare_v2(s->db, "SELECT allow, kind, origin, count(*) FROM entries "
				"WHERE list = ?1 GROUP BY allow, kind, origin", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "count", NULL, 0);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		c.allow = sqlite3_column_int(st, 0);
		c.kind = (unsigned int)sqlite3_column_int(st, 1);
		c.origin = (const char *)sqlite3_column_text(st, 2);
		c.count = (uint64_t)sqlite3_column_int64(st, 3);
		if (!c.origin)
			c.origin = "";
		ret = cb(&c, ctx);
	}
	sqlite3_finalize(st);
	if (ret)
		return ret;
	return rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "count", NULL, 0);
}

int sxdp_store_lists(struct sxdp_store *s, char ***names, size_t *n, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	char **v = NULL, **grown;
	size_t cnt = 0;
	int rc, ret = 0;

	rc = sqlite3_prepare_v2(s->db, "SELECT name FROM lists ORDER BY name", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "lists", err, errlen);
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		grown = realloc(v, (cnt + 1) * sizeof(*v));
		if (!grown || !name || !(grown[cnt] = strdup(name))) {
			v = grown ? grown : v;
			ret = -ENOMEM;
			break;
		}
		v = grown;
		cnt++;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sqlerr(s, rc, "lists", err, errlen);
	sqlite3_finalize(st);
	if (ret) {
		sxdp_store_names_free(v, cnt);
		return ret;
	}
	*names = v;
	*n = cnt;
	return 0;
}

int sxdp_store_next_expiry(struct sxdp_store *s, const char *list, int64_t *at)
{
	uint64_t v;
	int ret = count_stmt(s, "SELECT min(expires_at) FROM entries WHERE list = ?1 AND "
			     "?2 = ?2 AND expires_at IS NOT NULL", list, 0, NULL, &v);

	*at = ret ? 0 : (int64_t)v;
	return ret;
}

int sxdp_store_attach_set(struct sxdp_store *s, const struct sxdp_attachment *a,
			  char *err, size_t errlen)
{
	sqlite3_stmt *st;
	bool own;
	int rc, ret;

	ret = call_begin(s, &own, err, errlen);
	if (ret)
		return ret;
	ret = ensure_list(s, a->list, err, errlen);
	if (ret)
		return call_end(s, own, ret, err, errlen);
	rc = sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO attachments(netns, iface, list, "
				"mode, backend, flags, fpp_ppb, capacity, max_probes) VALUES "
				"(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, (int64_t)a->netns);
		sqlite3_bind_text(st, 2, a->iface, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, a->list, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, a->mode, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, a->backend, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 6, a->flags);
		sqlite3_bind_int64(st, 7, a->fpp_ppb);
		sqlite3_bind_int64(st, 8, (int64_t)a->capacity);
		sqlite3_bind_int(st, 9, a->max_probes);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_DONE)
		ret = sqlerr(s, rc, "attachments", err, errlen);
	return call_end(s, own, ret, err, errlen);
}

int sxdp_store_attach_del(struct sxdp_store *s, uint64_t netns, const char *iface,
			  char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, "DELETE FROM attachments WHERE netns = ?1 AND iface = ?2",
				-1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, (int64_t)netns);
		sqlite3_bind_text(st, 2, iface, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
	}
	return rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "attachments", err, errlen);
}

static void text_col(sqlite3_stmt *st, int col, char *buf, size_t len)
{
	const char *v = (const char *)sqlite3_column_text(st, col);

	snprintf(buf, len, "%s", v ? v : "");
}

static void attachment_row(sqlite3_stmt *st, struct sxdp_attachment *a)
{
	memset(a, 0, sizeof(*a));
	a->netns = (uint64_t)sqlite3_column_int64(st, 0);
	text_col(st, 1, a->iface, sizeof(a->iface));
	text_col(st, 2, a->list, sizeof(a->list));
	text_col(st, 3, a->mode, sizeof(a->mode));
	text_col(st, 4, a->backend, sizeof(a->backend));
	a->flags = (uint32_t)sqlite3_column_int64(st, 5);
	a->fpp_ppb = (uint32_t)sqlite3_column_int64(st, 6);
	a->capacity = (uint64_t)sqlite3_column_int64(st, 7);
	a->max_probes = (unsigned int)sqlite3_column_int(st, 8);
}

int sxdp_store_attach_get(struct sxdp_store *s, uint64_t netns, const char *iface,
			  struct sxdp_attachment *a, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc, ret;

	ret = stmt(s, ST_ATTACH_GET, &st, err, errlen);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, (int64_t)netns);
	sqlite3_bind_text(st, 2, iface, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		attachment_row(st, a);
	else if (rc == SQLITE_DONE)
		ret = -ENOENT;
	else
		ret = sqlerr(s, rc, "attachments", err, errlen);
	stmt_done(st);
	return ret;
}

int sxdp_store_attachments(struct sxdp_store *s, const char *list, struct sxdp_attachment **out,
			   size_t *n, char *err, size_t errlen)
{
	struct sxdp_attachment *v = NULL, *grown;
	sqlite3_stmt *st;
	size_t cnt = 0;
	int rc, ret;

	ret = stmt(s, ST_ATTACHMENTS, &st, err, errlen);
	if (ret)
		return ret;
	if (list)
		sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		grown = realloc(v, (cnt + 1) * sizeof(*v));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		v = grown;
		attachment_row(st, &v[cnt++]);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sqlerr(s, rc, "attachments", err, errlen);
	stmt_done(st);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int sxdp_store_kind_counts(struct sxdp_store *s, const char *list,
			   uint64_t blocked[SIEVE_XDP_NR_KINDS], uint64_t *allowed)
{
	sqlite3_stmt *st;
	int rc;

	memset(blocked, 0, SIEVE_XDP_NR_KINDS * sizeof(blocked[0]));
	*allowed = 0;
	rc = sqlite3_prepare_v2(s->db, "SELECT kind, allow, count(*) FROM entries WHERE list = ?1 "
				"GROUP BY kind, allow", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "count", NULL, 0);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int kind = sqlite3_column_int(st, 0);
		uint64_t n = (uint64_t)sqlite3_column_int64(st, 2);

		if (sqlite3_column_int(st, 1))
			*allowed += n;
		else if (kind >= 0 && kind < SIEVE_XDP_NR_KINDS)
			blocked[kind] += n;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "count", NULL, 0);
}

int sxdp_store_has(struct sxdp_store *s, const char *list, bool allow,
		   const struct sieve_xdp_key *key, bool *found)
{
	sqlite3_stmt *st;
	char text[128];
	int rc;

	rc = stmt(s, ST_HAS, &st, NULL, 0);
	if (rc)
		return rc;
	sxdp_format_entry(key, text, sizeof(text));
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, allow);
	rc = sqlite3_step(st);
	stmt_done(st);
	*found = rc == SQLITE_ROW;
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "lookup", NULL, 0);
}

int sxdp_store_get(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *key,
		   int (*cb)(const struct sxdp_store_entry *e, void *ctx), void *ctx)
{
	struct sxdp_store_entry e = { .list = list };
	sqlite3_stmt *st;
	char text[128];
	int rc, ret;

	rc = stmt(s, ST_GET, &st, NULL, 0);
	if (rc)
		return rc;
	sxdp_format_entry(key, text, sizeof(text));
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		stmt_done(st);
		return rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "lookup", NULL, 0);
	}
	e.key = text;
	e.kind = sqlite3_column_int(st, 0);
	e.allow = sqlite3_column_int(st, 1);
	e.added_at = sqlite3_column_int64(st, 2);
	e.expires_at = sqlite3_column_int64(st, 3);
	e.origin = (const char *)sqlite3_column_text(st, 4);
	e.comment = (const char *)sqlite3_column_text(st, 5);
	ret = e.origin ? cb(&e, ctx) : -EINVAL;
	stmt_done(st);
	return ret;
}

/*
 * Whether @list's blocklist holds an IPv4 source in the /24 @slot: one
 * range of the primary key's index, as a source's key is its dotted text
 * ("a.b.c." up to, not including, "a.b.c/", the character after '.'):
 * at most the /24's 256 sources and its prefixes longer than /24 are read.
 */
int sxdp_store_has_v4_host_in(struct sxdp_store *s, const char *list, uint32_t slot,
			      bool *found)
{
	char lo[16], hi[16];
	sqlite3_stmt *st;
	int rc;

	_Static_assert(SIEVE_XDP_SRC == 0, "the kind the query names");
	snprintf(lo, sizeof(lo), "%u.%u.%u.", slot >> 16, (slot >> 8) & 255, slot & 255);
	snprintf(hi, sizeof(hi), "%u.%u.%u/", slot >> 16, (slot >> 8) & 255, slot & 255);
	rc = sqlite3_prepare_v2(s->db, "SELECT 1 FROM entries WHERE list = ?1 AND key >= ?2 AND "
				"key < ?3 AND kind = 0 AND allow = 0 LIMIT 1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "lookup", NULL, 0);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, lo, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, hi, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	*found = rc == SQLITE_ROW;
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "lookup", NULL, 0);
}

/*
 * Whether origin @o is one an older sieve recorded for the file @a is
 * loaded from (sxdp_store_adopt_origins): a path, not @a's origin, and
 * the path as typed or, with @a->adopt_base, one of the same base name
 * that names no other file now (moved, or the same file by another path):
 * a file there of that name is another feed, whose entries the refresh
 * would drop.
 */
static bool adoptable(const struct sxdp_store_attrs *a, const char *o)
{
	const char *slash = strrchr(o, '/');
	struct stat old, now;

	if (!slash || !strcmp(o, a->origin))
		return false;
	if (a->adopt_path && !strcmp(o, a->adopt_path))
		return true;
	if (!a->adopt_base || strcmp(slash + 1, a->origin))
		return false;
	return stat(o, &old) || !a->adopt_path || stat(a->adopt_path, &now) ||
	       (old.st_dev == now.st_dev && old.st_ino == now.st_ino);
}

/*
 * The list's origins one at a time, in order, each an index seek
 * (entries_origin): a list of 10^7 entries has a handful of origins, and
 * a GROUP BY would read every entry. *@next: the origin after @after
 * (malloc'd), NULL past the last.
 */
static int next_origin(struct sxdp_store *s, sqlite3_stmt *st, const char *list,
		       const char *after, char **next, char *err, size_t errlen)
{
	int rc;

	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, after, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	*next = NULL;
	if (rc == SQLITE_ROW) {
		*next = strdup((const char *)sqlite3_column_text(st, 0));
		if (!*next)
			rc = SQLITE_NOMEM;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sqlerr(s, rc, "reading the origins", err, errlen);
	return 0;
}

/* Gives @from's entries of @list on @allow's side to @to; *@moved: how many. */
static int rename_origin(struct sxdp_store *s, const char *list, bool allow, const char *from,
			 const char *to, size_t *moved, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, "UPDATE entries SET origin = ?3 WHERE list = ?1 AND "
				"origin = ?2 AND allow = ?4", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "adopt", err, errlen);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, from, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, to, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, allow);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		*moved = sqlite3_changes(s->db);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sqlerr(s, rc, "adopt", err, errlen);
}

int sxdp_store_adopt_origins(struct sxdp_store *s, const char *list,
			     const struct sxdp_store_attrs *a, struct sxdp_adopted *r,
			     char *err, size_t errlen)
{
	char *o = NULL, *next = NULL;
	sqlite3_stmt *st;
	size_t moved;
	bool own;
	int rc, ret;

	memset(r, 0, sizeof(*r));
	if (!a->adopt_path && !a->adopt_base)
		return 0;
	ret = call_begin(s, &own, err, errlen);
	if (ret)
		return ret;
	rc = sqlite3_prepare_v2(s->db, "SELECT origin FROM entries WHERE list = ?1 AND "
				"origin > ?2 ORDER BY origin LIMIT 1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return call_end(s, own, sqlerr(s, rc, "adopt", err, errlen), err, errlen);
	ret = next_origin(s, st, list, "", &o, err, errlen);
	while (!ret && o) {
		moved = 0;
		if (adoptable(a, o))
			ret = rename_origin(s, list, a->allow, o, a->origin, &moved, err,
					    errlen);
		if (!ret && moved && !r->origins++)
			snprintf(r->first, sizeof(r->first), "%s", o);
		r->entries += moved;
		if (!ret)
			ret = next_origin(s, st, list, o, &next, err, errlen);
		free(o);
		o = ret ? NULL : next;
	}
	free(o);
	sqlite3_finalize(st);
	if (!ret && r->entries)
		ret = bump(s, list, err, errlen);
	if (ret)
		memset(r, 0, sizeof(*r));
	return call_end(s, own, ret, err, errlen);
}

/*
 * Runs @sql over @keys as sxdp_batch(?3), ?1 the list, ?2 allow; @cb gets
 * each row (its columns 0 and 1 as text).
 */
static int batch_rows(struct sxdp_store *s, const char *sql, const char *list, bool allow,
		      const struct sieve_xdp_key *keys, size_t n,
		      int (*cb)(const char *c0, const char *c1, int64_t c2, void *ctx),
		      void *ctx, char *err, size_t errlen)
{
	const struct sxdp_store_attrs a = { .origin = "" };
	struct batch b = { keys, NULL, &a, n };
	struct key_texts kt;
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (key_texts_make(keys, n, &kt)) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b.kt = &kt;
	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		key_texts_free(&kt);
		return sqlerr(s, rc, "lookup", err, errlen);
	}
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, allow);
	sqlite3_bind_pointer(st, 3, &b, "sxdp_batch", NULL);
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW)
		ret = cb((const char *)sqlite3_column_text(st, 0),
			 (const char *)sqlite3_column_text(st, 1), sqlite3_column_int64(st, 2),
			 ctx);
	sqlite3_finalize(st);
	key_texts_free(&kt);
	if (!ret && rc != SQLITE_DONE)
		ret = sqlerr(s, rc, "lookup", err, errlen);
	return ret;
}

struct holder_arg {
	char *holder;
	size_t len;
	size_t *held;
};

static int holder_row(const char *origin, const char *unused, int64_t count, void *ctx)
{
	struct holder_arg *x = ctx;

	snprintf(x->holder, x->len, "%s", origin ? origin : "");
	*x->held = (size_t)count;
	return 0;
}

int sxdp_store_held_by(struct sxdp_store *s, const char *list, bool allow, const char *origin,
		       const struct sieve_xdp_key *keys, size_t n, char *holder, size_t len,
		       size_t *held, char *err, size_t errlen)
{
	const struct sxdp_store_attrs a = { .origin = origin, .allow = allow };
	struct holder_arg x = { holder, len, held };
	bool present = false;
	int ret;

	*held = 0;
	if (len)
		*holder = '\0';
	if (!n)
		return 0;
	ret = origin_present(s, list, &a, &present, err, errlen);
	if (ret || present)
		return ret;
	/* CROSS JOIN: the batch outside, as in sxdp_store_origins_of(). */
	return batch_rows(s, "SELECT e.origin, NULL, count(*) AS c FROM sxdp_batch(?3) AS b "
			  "CROSS JOIN entries AS e ON e.list = ?1 AND e.key = b.key AND e.allow = ?2 "
			  "GROUP BY e.origin ORDER BY c DESC, e.origin LIMIT 1", list, allow,
			  keys, n, holder_row, &x, err, errlen);
}

struct origins_arg {
	int (*cb)(const char *key, const char *origin, void *ctx);
	void *ctx;
};

static int origins_row(const char *key, const char *origin, int64_t unused, void *ctx)
{
	struct origins_arg *x = ctx;

	return key && origin ? x->cb(key, origin, x->ctx) : 0;
}

int sxdp_store_origins_of(struct sxdp_store *s, const char *list, bool allow,
			  const struct sieve_xdp_key *keys, size_t n,
			  int (*cb)(const char *key, const char *origin, void *ctx), void *ctx,
			  char *err, size_t errlen)
{
	struct origins_arg x = { cb, ctx };

	if (!n)
		return 0;
	/*
	 * CROSS JOIN: the batch outside, each key found by the primary key.
	 * Left to the planner, which takes sxdp_batch() for a million rows
	 * (batch_best_index cannot see the batch), it walked the whole list
	 * and looked each entry up in the batch: an `unblock` of one key read
	 * every entry (11 ms at 10^5, O(N)).
	 */
	return batch_rows(s, "SELECT DISTINCT e.key, e.origin, 0 FROM sxdp_batch(?3) AS b "
			  "CROSS JOIN entries AS e ON e.list = ?1 AND e.key = b.key AND "
			  "e.allow = ?2 "
			  "ORDER BY e.key", list, allow, keys, n, origins_row, &x, err, errlen);
}

/* ---- origin ids (store.h) ---- */

int sxdp_store_origin_id(struct sxdp_store *s, const char *name, uint32_t *id)
{
	sqlite3_stmt *st;
	int64_t v = 0;

	*id = SIEVE_XDP_ORIGIN_NONE;
	/* Not fatal: a store it cannot write gives the ids it has. */
	if (sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO origin_ids(name) VALUES (?1)", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (sqlite3_prepare_v2(s->db, "SELECT id FROM origin_ids WHERE name = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	*id = v > 0 && v <= UINT32_MAX ? (uint32_t)v : SIEVE_XDP_ORIGIN_NONE;
	return 0;
}

/* Rows come grouped by origin: one id look-up a group. */
struct read_origins {
	struct sxdp_store *s;
	struct sxdp_origins *o;
	char last[1024];	/* a longer name is looked up each row: still right */
	uint32_t id;
	char *err;
	size_t errlen;
};

static int read_origin_row(const char *key, const char *origin, void *ctx)
{
	struct read_origins *r = ctx;
	struct sieve_xdp_key k;
	const char *why;

	if (sxdp_parse_entry(key, &k, &why)) {
		seterr(r->err, r->errlen, "%s: stored entry '%s': %s", r->s->path, key, why);
		return -EINVAL;
	}
	if (strcmp(origin, r->last)) {
		snprintf(r->last, sizeof(r->last), "%s", origin);
		sxdp_store_origin_id(r->s, origin, &r->id);
	}
	return sxdp_origins_add(r->o, &k, r->id);
}

int sxdp_store_read_origins(struct sxdp_store *s, const char *list, const struct sxdp_keys *keys,
			    struct sxdp_origins *o, char *err, size_t errlen)
{
	struct read_origins r = { .s = s, .o = o, .err = err, .errlen = errlen };
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (keys) {
		ret = sxdp_store_origins_of(s, list, false, keys->keys, keys->n, read_origin_row,
					    &r, err, errlen);
		sxdp_origins_sort(o);
		return ret;
	}
	/* By origin, its index: rows of one origin together. */
	rc = sqlite3_prepare_v2(s->db, "SELECT key, origin FROM entries WHERE list = ?1 AND "
				"allow = 0 ORDER BY origin", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(s, rc, "read", err, errlen);
	sqlite3_bind_text(st, 1, list, -1, SQLITE_STATIC);
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 0);
		const char *origin = (const char *)sqlite3_column_text(st, 1);

		if (key && origin)
			ret = read_origin_row(key, origin, &r);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sqlerr(s, rc, "read", err, errlen);
	sqlite3_finalize(st);
	sxdp_origins_sort(o);
	return ret;
}

int sxdp_store_origin_names(struct sxdp_store *s,
			    int (*cb)(uint32_t id, const char *name, void *ctx), void *ctx,
			    char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc, ret = 0;

	rc = sqlite3_prepare_v2(s->db, "SELECT id, name FROM origin_ids ORDER BY id", -1, &st,
				NULL);
	/* No table yet (a store no sieve with origins has opened for writing): none. */
	if (rc != SQLITE_OK)
		return 0;
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);

		if (name && id > 0 && id <= UINT32_MAX)
			ret = cb((uint32_t)id, name, ctx);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sqlerr(s, rc, "read", err, errlen);
	sqlite3_finalize(st);
	return ret;
}
