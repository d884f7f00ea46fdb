/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The blocklist store: the list of record, in SQLite (store.c). Named
 * lists of entries, each entry with its kind, canonical key, when it was
 * added, when it expires (or never), its origin ("cli", a feed, later
 * "fleet") and an optional comment. Every list has a version that goes up
 * once per transaction that changes it; each interface's generation records
 * the version it was built from (sieve_xdp_config.store_version). Which
 * list an interface enforces, and how, is an attachment (the agent puts
 * them back after a reboot).
 *
 * Functions return 0 or -errno and fill @err (one line) where only they
 * know the detail. Errors: -EINVAL a bad or foreign database file (or a
 * bad argument), -EPROTONOSUPPORT a store of a newer schema than this
 * build knows (left untouched), -EBUSY another writer held the database
 * longer than the busy timeout, -EIO anything else SQLite reports.
 *
 * A store handle is used by one thread at a time (it is opened without
 * SQLite's per-connection mutex): threads open their own.
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
#define SXDP_STORE_VERSION	2
/* How long a writer waits for another one before -EBUSY. */
#define SXDP_STORE_BUSY_MS	30000

/* List names: [A-Za-z0-9_.-], 1 to this many characters. */
#define SXDP_LIST_NAME_MAX	64
#define SXDP_DEFAULT_LIST	"default"

struct sxdp_store;

/* Whether @name is a valid list name. */
bool sxdp_list_name_ok(const char *name);

/* One entry as stored (strings valid during the callback only). */
struct sxdp_store_entry {
	const char *list;
	const char *key;	/* canonical text, sxdp_format_entry() */
	unsigned int kind;	/* enum sieve_xdp_kind */
	bool allow;		/* an allowlist entry */
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
	/* Per key, over @expires_at (NULL: @expires_at for every key). */
	const int64_t *expires_each;
	/*
	 * An add gives no expiry of its own (`block` without --ttl): a key
	 * already there keeps the one it has, a new one gets @expires_at.
	 * Without it a re-add keeps the later of the two (the re-ban rule,
	 * sxdp_store_add).
	 */
	bool keep_expiry;
	bool allow;		/* allowlist entries (else blocklist ones) */
	/*
	 * An add that leaves alone a key held by another origin, or on the
	 * other list (fleet sync: what the operator or a feed decided on this
	 * host stays theirs), instead of taking it over or refusing it.
	 */
	bool only_own;
	/*
	 * With @only_own: a key of this origin there already keeps the later
	 * of its expiry and the add's (the re-ban rule) instead of taking the
	 * add's as a mirror does (a CrowdSec decision re-banned shorter, a
	 * fail2ban jail's `block --origin`).
	 */
	bool extend_only;
	/*
	 * A replace with no keys over an origin that has entries on that side
	 * is refused with -ENODATA, nothing changed: an empty feed is more
	 * likely a failed download than a list emptied on purpose.
	 */
	bool refuse_empty;
	/*
	 * A load of a file (sxdp_store_adopt_origins): the path as typed
	 * (NULL: stdin, or no file), and whether @origin is the default, the
	 * file's base name.
	 */
	const char *adopt_path;
	bool adopt_base;
};

/* An interface enforcing a list: a row of the attachments table. */
struct sxdp_attachment {
	uint64_t netns;		/* the network namespace's inode */
	char iface[16];		/* IF_NAMESIZE */
	char list[SXDP_LIST_NAME_MAX + 1];
	char mode[16];		/* the mode it runs in: "native" or "generic" */
	char backend[48];	/* "bloom-map", "blocked", "filter:NAME" */
	uint32_t flags;		/* SIEVE_XDP_F_* */
	uint32_t fpp_ppb;
	uint64_t capacity;
	unsigned int max_probes;
};

/*
 * Opens (creating and migrating as needed) @state_dir/sieve.db; @state_dir
 * NULL: SXDP_STORE_DIR (the programs pass the folder sieve.conf's order
 * chose: userspace/conf/settings.h). The folder is made 0700, the file 0600.
 */
int sxdp_store_open(const char *state_dir, struct sxdp_store **sp, char *err, size_t errlen);

/*
 * When a commit reaches the disk ([store] sync of sieve.conf(5)).
 * FULL: the log is synced at every commit, so a change reported done
 * survives a power loss too (one fdatasync a change). NORMAL: the log is
 * synced only when it is copied into the database (a checkpoint: after a
 * bulk change, and once every few dozen small ones); a commit is a write
 * into the page cache. A process killed at any point, a clean reboot or an
 * upgrade lose nothing either way, and the store is never corrupt; a power
 * loss or a kernel crash may take the last changes made before it (the
 * maps are rebuilt from the store at boot: those bans are gone).
 */
enum sxdp_store_sync {
	SXDP_STORE_SYNC_FULL,
	SXDP_STORE_SYNC_NORMAL,
};
/* sxdp_store_open() with commits synced as @sync says (FULL there). */
int sxdp_store_open_sync(const char *state_dir, enum sxdp_store_sync sync,
			 struct sxdp_store **sp, char *err, size_t errlen);
void sxdp_store_close(struct sxdp_store *s);
/* The database's path (for messages). */
const char *sxdp_store_path(const struct sxdp_store *s);
/*
 * The host's digest secret (two words), kept in the store's folder
 * (sxdp_secret_load: made at first use, read once per store): 0, or
 * -errno with *@secret NULL and @err saying why.
 */
int sxdp_store_secret(struct sxdp_store *s, const __u64 **secret, char *err, size_t errlen);

/* One write transaction (BEGIN IMMEDIATE: writers queue here, not later). */
int sxdp_store_begin(struct sxdp_store *s, char *err, size_t errlen);
/* One snapshot for several reads (ended by commit or rollback). */
int sxdp_store_begin_read(struct sxdp_store *s, char *err, size_t errlen);
int sxdp_store_commit(struct sxdp_store *s, char *err, size_t errlen);
void sxdp_store_rollback(struct sxdp_store *s);
/* Whether one of those is open: reads then see its changes. */
bool sxdp_store_in_tx(const struct sxdp_store *s);

/*
 * Adds @n keys to @list (created if new), to its allowlist if @a->allow.
 * A key already there gets @a's origin and comment, keeping its added_at,
 * and the later of its expiry and @a's (never is the latest; @a->
 * keep_expiry: its own; one already due, or @a->only_own, the fleet's
 * mirror: @a's): a re-ban extends, never shortens. *@added: new keys.
 * -EEXIST if a key is on the other list (blocked and allowed at once would
 * make no sense): unblock or disallow it first.
 */
int sxdp_store_add(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *keys,
		   size_t n, const struct sxdp_store_attrs *a, size_t *added,
		   char *err, size_t errlen);
/*
 * sxdp_store_add, and the keys that were new appended to @fresh (may be
 * NULL); *@updated (may be NULL): the keys there already that it changed.
 */
int sxdp_store_add_fresh(struct sxdp_store *s, const char *list,
			 const struct sieve_xdp_key *keys, size_t n,
			 const struct sxdp_store_attrs *a, struct sxdp_keys *fresh,
			 size_t *updated, char *err, size_t errlen);
/* Removes @n keys from @list's blocklist; *@missing: those not there. */
int sxdp_store_remove(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *keys,
		      size_t n, size_t *missing, char *err, size_t errlen);
/* The same for the blocklist (@allow false) or the allowlist. */
int sxdp_store_remove_from(struct sxdp_store *s, const char *list, bool allow,
			   const struct sieve_xdp_key *keys, size_t n, size_t *missing,
			   char *err, size_t errlen);
/* The same, only entries of @origin: a key another origin holds counts as missing. */
int sxdp_store_remove_own(struct sxdp_store *s, const char *list, bool allow, const char *origin,
			  const struct sieve_xdp_key *keys, size_t n, size_t *missing,
			  char *err, size_t errlen);
/* The same; the keys that were there (and went) appended to @removed. */
int sxdp_store_remove_gone(struct sxdp_store *s, const char *list, bool allow, const char *origin,
			   const struct sieve_xdp_key *keys, size_t n, struct sxdp_keys *removed,
			   char *err, size_t errlen);
/*
 * A feed refresh: @list's entries of origin @a->origin become @keys. Those
 * not in @keys go; new ones come; entries of other origins stay as they
 * are (a key one of them holds is left to it), and so do those of the
 * other list (blocked vs allowed), whatever their origin: a key allowed is
 * not an error in a blocklist feed, only left out. *@added, *@removed may
 * be NULL. -ENODATA: @n is 0, @a->refuse_empty, and the origin has entries.
 */
int sxdp_store_replace_origin(struct sxdp_store *s, const char *list,
			      const struct sieve_xdp_key *keys, size_t n,
			      const struct sxdp_store_attrs *a, size_t *added, size_t *removed,
			      char *err, size_t errlen);
/*
 * The same; the keys of the entries that went appended to @gone_keys and
 * of the entries that came to @fresh_keys (either may be NULL), unless
 * more than @keys_max went and came together: then both are left empty
 * and *@keys_over (may be NULL) set. A refresh that drops and adds within
 * the bound takes effect in the live maps without a rebuild (ops.c).
 */
int sxdp_store_replace_origin_gone(struct sxdp_store *s, const char *list,
				   const struct sieve_xdp_key *keys, size_t n,
				   const struct sxdp_store_attrs *a, size_t *added,
				   size_t *removed, struct sxdp_keys *gone_keys,
				   struct sxdp_keys *fresh_keys, size_t keys_max, bool *keys_over,
				   char *err, size_t errlen);
/*
 * An older sieve named a feed by the path as typed, so one file loaded
 * through two paths (./drop.txt, /etc/sieve/drop.txt) was two origins,
 * and a refresh through one never dropped what the other held. A load of
 * @a->adopt_path first takes over, as @a->origin, @list's entries on
 * @a's side of the origins recorded as a path (with a '/') that is
 * @a->adopt_path as typed or, with @a->adopt_base, whose base name is
 * @a->origin. One index seek per origin of the list, one UPDATE per
 * origin taken over; the list's version goes up if it took any.
 */
struct sxdp_adopted {
	size_t entries;		/* entries taken over */
	size_t origins;		/* of how many origins */
	char first[300];	/* the first of them (cut short past this) */
};

int sxdp_store_adopt_origins(struct sxdp_store *s, const char *list,
			     const struct sxdp_store_attrs *a, struct sxdp_adopted *r,
			     char *err, size_t errlen);
/*
 * After a refresh of @origin with @keys: if @list holds no entry of
 * @origin on @allow's side while other origins hold some of @keys there
 * (likely the same feed loaded under another name: the refresh leaves
 * them to it and never drops them), the origin that holds most of them in
 * @holder and how many in *@held; *@held 0 otherwise.
 */
int sxdp_store_held_by(struct sxdp_store *s, const char *list, bool allow, const char *origin,
		       const struct sieve_xdp_key *keys, size_t n, char *holder, size_t len,
		       size_t *held, char *err, size_t errlen);
/* @cb for each of @keys on @list's @allow side, with its origin, in key text order. */
int sxdp_store_origins_of(struct sxdp_store *s, const char *list, bool allow,
			  const struct sieve_xdp_key *keys, size_t n,
			  int (*cb)(const char *key, const char *origin, void *ctx), void *ctx,
			  char *err, size_t errlen);
/*
 * Deletes @list's entries with expires_at <= @now; @expired (may be NULL)
 * gets their keys appended, so the maps can be rebuilt without them.
 */
int sxdp_store_expire(struct sxdp_store *s, const char *list, int64_t now,
		      struct sxdp_keys *expired, char *err, size_t errlen);
/* The same, blocklist and allowlist entries apart (either list may be NULL). */
int sxdp_store_expire_split(struct sxdp_store *s, const char *list, int64_t now,
			    struct sxdp_keys *blocked, struct sxdp_keys *allowed, char *err,
			    size_t errlen);

/* Every entry of @list, in key order; a nonzero return from @cb stops and is returned. */
int sxdp_store_foreach(struct sxdp_store *s, const char *list,
		       int (*cb)(const struct sxdp_store_entry *e, void *ctx), void *ctx,
		       char *err, size_t errlen);
/* @list's blocked keys appended to @l, parsed (sxdp_parse_entry); in key order. */
int sxdp_store_read(struct sxdp_store *s, const char *list, struct sxdp_keys *l,
		    char *err, size_t errlen);
/*
 * @list's blocked IPv4 prefixes appended to @l, parsed, in no set order:
 * what the IPv4 prefix table recomputes a live unblock from (v4table.c).
 * One range of an index of prefix entries: sources cost nothing.
 */
int sxdp_store_read_v4_prefixes(struct sxdp_store *s, const char *list, struct sxdp_keys *l,
				char *err, size_t errlen);
/* The same for the blocklist (@allow false) or the allowlist. */
int sxdp_store_read_from(struct sxdp_store *s, const char *list, bool allow,
			 struct sxdp_keys *l, char *err, size_t errlen);
/*
 * Whether @key is on @list's blocklist (@allow false) or allowlist: one
 * lookup in the primary key's index, whatever the list's size.
 */
int sxdp_store_has(struct sxdp_store *s, const char *list, bool allow,
		   const struct sieve_xdp_key *key, bool *found);
/* Whether @list's blocklist holds an IPv4 source inside the /24 @slot (the host bitmap's). */
int sxdp_store_has_v4_host_in(struct sxdp_store *s, const char *list, uint32_t slot,
			      bool *found);
/*
 * @cb with @key's entry on @list (blocked or allowed, whichever it is),
 * whole; not called if there is none. One lookup in the primary key's
 * index. 0, @cb's nonzero return, or -errno.
 */
int sxdp_store_get(struct sxdp_store *s, const char *list, const struct sieve_xdp_key *key,
		   int (*cb)(const struct sxdp_store_entry *e, void *ctx), void *ctx);
/*
 * The keys of @list's blocklist (@allow false) or allowlist held by origins
 * other than @origin, appended to @l (a load's maps: the rest of the list).
 */
int sxdp_store_read_others(struct sxdp_store *s, const char *list, bool allow,
			   const char *origin, struct sxdp_keys *l, char *err, size_t errlen);
/* sxdp_format_entry(), faster for IPv4 sources and prefixes; the length. */
size_t sxdp_store_key_text(const struct sieve_xdp_key *key, char *buf, size_t len);
/* @list's version; 0 for a list never changed. */
int sxdp_store_version(struct sxdp_store *s, const char *list, uint64_t *version);
/* Entries of @list of @kind (-1: any) and @origin (NULL: any). */
int sxdp_store_count(struct sxdp_store *s, const char *list, int kind, const char *origin,
		     uint64_t *count);

/* Entries of @list: blocked ones by kind, and allowed ones. */
int sxdp_store_kind_counts(struct sxdp_store *s, const char *list,
			   uint64_t blocked[SIEVE_XDP_NR_KINDS], uint64_t *allowed);
/* Entries of one kind and origin on a list's blocklist or allowlist. */
struct sxdp_store_count {
	bool allow;
	unsigned int kind;	/* enum sieve_xdp_kind */
	const char *origin;	/* valid during the callback only */
	uint64_t count;
};

/*
 * @list's entries grouped by list (blocked or allowed), kind and origin,
 * one call of @cb a group (in no set order); a nonzero return from @cb
 * stops and is returned. One pass over the list: O(entries).
 */
int sxdp_store_origin_counts(struct sxdp_store *s, const char *list,
			     int (*cb)(const struct sxdp_store_count *c, void *ctx), void *ctx);
/* Every list name (sorted); free with sxdp_store_names_free. */
int sxdp_store_lists(struct sxdp_store *s, char ***names, size_t *n, char *err, size_t errlen);
void sxdp_store_names_free(char **names, size_t n);
/* The earliest expiry of @list (0: nothing expires). */
int sxdp_store_next_expiry(struct sxdp_store *s, const char *list, int64_t *at);

/* Records (or updates) an attachment. */
int sxdp_store_attach_set(struct sxdp_store *s, const struct sxdp_attachment *a,
			  char *err, size_t errlen);
/* Forgets one; 0 also if there was none. */
int sxdp_store_attach_del(struct sxdp_store *s, uint64_t netns, const char *iface,
			  char *err, size_t errlen);
/* One attachment; -ENOENT if none is recorded. */
int sxdp_store_attach_get(struct sxdp_store *s, uint64_t netns, const char *iface,
			  struct sxdp_attachment *a, char *err, size_t errlen);
/*
 * The attachments enforcing @list (NULL: all), sorted by namespace and
 * interface (the order their locks are taken in); free() *@out.
 */
int sxdp_store_attachments(struct sxdp_store *s, const char *list, struct sxdp_attachment **out,
			   size_t *n, char *err, size_t errlen);

/*
 * Origin ids (the table origin_ids): a small number per origin name,
 * made at its first need and never reused nor renumbered, which the exact
 * maps hold and the per-origin drop counters are indexed by (sieve_xdp.h).
 * Made beside the schema's versions, as the compatible indexes are: an
 * older sieve ignores the table. A store that cannot be written (read-only
 * mount) gives the ids it has, and 0 (no origin) for the others.
 */
int sxdp_store_origin_id(struct sxdp_store *s, const char *name, uint32_t *id);
/*
 * @list's blocklist entries with their origin ids, into @o (sorted): all of
 * them (@keys NULL, a build) or those of @keys (a live add's).
 */
int sxdp_store_read_origins(struct sxdp_store *s, const char *list, const struct sxdp_keys *keys,
			    struct sxdp_origins *o, char *err, size_t errlen);
/* @cb for each origin id and its name, by id. */
int sxdp_store_origin_names(struct sxdp_store *s,
			    int (*cb)(uint32_t id, const char *name, void *ctx), void *ctx,
			    char *err, size_t errlen);

#endif /* SIEVE_XDP_STORE_H */
