/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The blocklist store: the list of record, in SQLite (store.c). Named
 * lists of entries, each entry with its kind, canonical key, when it was
 * added, when it expires (or never), its origin ("cli", a feed, later
 * "fleet") and an optional comment. Every list has a version that goes up
 * once per transaction that changes it; the maps' generation will record
 * the version it was built from. Not yet used by the commands.
 *
 * Functions return 0 or -errno and fill @err (one line) where only they
 * know the detail. Errors: -EINVAL a bad or foreign database file (or a
 * bad argument), -EPROTONOSUPPORT a store of a newer schema than this
 * build knows (left untouched), -EBUSY another writer held the database
 * longer than the busy timeout, -EIO anything else SQLite reports.
 *
 * Changes run in one transaction: the caller's, between
 * sxdp_store_begin() and sxdp_store_commit(), or else one of their own
 * (rolled back whole on an error). A change that fails inside the
 * caller's transaction may have done part of its batch: the caller rolls
 * back.
 */
#ifndef SIEVE_XDP_STORE_H
#define SIEVE_XDP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xdp.h"

#define SXDP_STORE_DIR		"/var/lib/sieve"
#define SXDP_STORE_FILE		"sieve.db"
/* The schema this build writes; see the migrations in store.c. */
#define SXDP_STORE_VERSION	1
/* How long a writer waits for another one before -EBUSY. */
#define SXDP_STORE_BUSY_MS	30000

struct sxdp_store;

/* One entry as stored (strings valid during the callback only). */
struct sxdp_store_entry {
	const char *list;
	const char *key;	/* canonical text, sxdp_format_entry() */
	unsigned int kind;	/* enum sieve_xdp_kind */
	bool allow;		/* an allowlist entry (none yet) */
	int64_t added_at;	/* Unix seconds */
	int64_t expires_at;	/* Unix seconds; 0 never */
	const char *origin;
	const char *comment;	/* NULL if none */
};

/* What an add gives every entry of its batch. */
struct sxdp_store_attrs {
	const char *origin;	/* required: "cli", a feed's name, ... */
	const char *comment;	/* or NULL */
	int64_t now;		/* added_at of new entries */
	int64_t expires_at;	/* 0: never */
};

/*
 * Opens (creating and migrating as needed) @state_dir/sieve.db; @state_dir
 * NULL: $SIEVE_STATE_DIR, else SXDP_STORE_DIR. The folder is made 0700,
 * the file 0600.
 */
int sxdp_store_open(const char *state_dir, struct sxdp_store **sp, char *err, size_t errlen);
void sxdp_store_close(struct sxdp_store *s);
/* The database's path (for messages). */
const char *sxdp_store_path(const struct sxdp_store *s);

/* One write transaction (BEGIN IMMEDIATE: writers queue here, not later). */
int sxdp_store_begin(struct sxdp_store *s, char *err, size_t errlen);
int sxdp_store_commit(struct sxdp_store *s, char *err, size_t errlen);
void sxdp_store_rollback(struct sxdp_store *s);

/*
 * Adds @n keys to @list (created if new). A key already there gets @a's
 * expiry, origin and comment, keeping its added_at. *@added: new keys.
 */
int sxdp_store_add(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *keys,
		   size_t n, const struct sxdp_store_attrs *a, size_t *added,
		   char *err, size_t errlen);
/* Removes @n keys from @list; *@missing: those not there. */
int sxdp_store_remove(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *keys,
		      size_t n, size_t *missing, char *err, size_t errlen);
/*
 * A feed refresh: @list's entries of origin @a->origin become @keys. Those
 * not in @keys go; new ones come; entries of other origins stay as they
 * are (a key one of them holds is left to it). *@added, *@removed may be
 * NULL.
 */
int sxdp_store_replace_origin(struct sxdp_store *s, const char *list,
			      const struct sieve_xdp_key *keys, size_t n,
			      const struct sxdp_store_attrs *a, size_t *added, size_t *removed,
			      char *err, size_t errlen);
/*
 * Deletes @list's entries with expires_at <= @now; @expired (may be NULL)
 * gets their keys appended, so the maps can be rebuilt without them.
 */
int sxdp_store_expire(struct sxdp_store *s, const char *list, int64_t now,
		      struct sxdp_list *expired, char *err, size_t errlen);

/* Every entry of @list, in key order; a nonzero return from @cb stops and is returned. */
int sxdp_store_foreach(struct sxdp_store *s, const char *list,
		       int (*cb)(const struct sxdp_store_entry *e, void *ctx), void *ctx,
		       char *err, size_t errlen);
/* @list's keys appended to @l, parsed (sxdp_parse_entry); not sorted. */
int sxdp_store_read(struct sxdp_store *s, const char *list, struct sxdp_list *l,
		    char *err, size_t errlen);
/* @list's version; 0 for a list never changed. */
int sxdp_store_version(struct sxdp_store *s, const char *list, uint64_t *version);
/* Entries of @list of @kind (-1: any) and @origin (NULL: any). */
int sxdp_store_count(struct sxdp_store *s, const char *list, int kind, const char *origin,
		     uint64_t *count);

#endif /* SIEVE_XDP_STORE_H */
