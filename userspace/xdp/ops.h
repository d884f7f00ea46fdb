/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The operations on a list (ops.c): each is one store transaction, and
 * the maps of every interface that enforces the list brought to the new
 * version: before the commit for what adds (block, allow, load), so that
 * a change an interface cannot take is refused and rolled back, never
 * left in the store for every later command to fail on; after it for
 * removals, which cannot fail for what they remove. The store is the
 * truth; the maps follow it:
 *
 *  - adds go live into the maps (O(entries added), no rebuild) unless the
 *    probe lengths or the capacity run out;
 *  - a load builds one new generation from the keys it parsed and the
 *    rest of the list (other origins' entries, the allowlist) read from
 *    the store inside its transaction: its own keys are never read back;
 *    a blocklist refresh that only drops keys (adds none) is a removal
 *    instead, committed first and gone live like an unblock's;
 *  - removals (unblock, expire, fleet removals) go live, in
 *    O(entries removed): a cuckoo filter of the filter backend deletes
 *    them (devfilter.c says why that stays safe when killed, and how it
 *    counts the entries that make each digest); the other backends note
 *    their keys in the generation's removed map, or delete them from its
 *    exact map (removed.c), until a bound makes it a rebuild;
 *  - an interface whose maps are behind the store (a command killed
 *    between its commit and its maps) is rebuilt from the store by the
 *    next operation on its list, before anything else.
 *
 * Locking: an operation takes the lock of every interface enforcing the
 * list (sorted by namespace and name), then the store's write lock
 * (BEGIN IMMEDIATE), and checks that the set of interfaces did not change
 * meanwhile (else it lets go and starts again). Nothing waits for an
 * interface's lock while holding the store's, so two operations never
 * deadlock, and two operations on one list never interleave: no lost
 * update. A kill -9 at any point leaves the store at the old or the new
 * version (one transaction), and the maps either at the store's version
 * or marked behind it (an add or a load marks them with its version
 * before it changes them), so the next operation rebuilds them. Until
 * then a cut-short block leaves them dropping more than the store says,
 * never less; a cut-short load may leave its own list enforced.
 *
 * Functions return 0 or -errno, with one line in @err.
 */
#ifndef SIEVE_XDP_OPS_H
#define SIEVE_XDP_OPS_H

#include <errno.h>
#include <string.h>

#include "enforce.h"
#include "store.h"
#include "xdp.h"

/*
 * The changes of a list by entry, one vocabulary for the commands
 * (sieve xdp block ...), the fleet's stream (its op field: fleet.h) and
 * the metrics. sxdp_op_add() does those that add, sxdp_op_remove() the
 * others; each is on the blocklist or on the allowlist.
 */
enum sxdp_list_op {
	SXDP_OP_BLOCK, SXDP_OP_UNBLOCK, SXDP_OP_ALLOW, SXDP_OP_DISALLOW,
	SXDP_NR_LIST_OPS,
};

/* The command's and the stream's word for @op ("block"); "unknown" out of range. */
static inline const char *sxdp_list_op_name(enum sxdp_list_op op)
{
	static const char *const names[SXDP_NR_LIST_OPS] = {
		[SXDP_OP_BLOCK] = "block", [SXDP_OP_UNBLOCK] = "unblock",
		[SXDP_OP_ALLOW] = "allow", [SXDP_OP_DISALLOW] = "disallow",
	};

	return (unsigned int)op < SXDP_NR_LIST_OPS ? names[op] : "unknown";
}

/* What a command says it did ("blocked"). */
static inline const char *sxdp_list_op_done(enum sxdp_list_op op)
{
	static const char *const done[SXDP_NR_LIST_OPS] = {
		[SXDP_OP_BLOCK] = "blocked", [SXDP_OP_UNBLOCK] = "unblocked",
		[SXDP_OP_ALLOW] = "allowed", [SXDP_OP_DISALLOW] = "disallowed",
	};

	return (unsigned int)op < SXDP_NR_LIST_OPS ? done[op] : "unknown";
}

/* The op of the word @word: 0, or -EINVAL if none is. */
static inline int sxdp_list_op_parse(const char *word, enum sxdp_list_op *op)
{
	unsigned int i;

	for (i = 0; word && i < SXDP_NR_LIST_OPS; i++)
		if (!strcmp(word, sxdp_list_op_name(i))) {
			*op = i;
			return 0;
		}
	return -EINVAL;
}

/* allow and disallow change the allowlist; block and unblock the blocklist. */
static inline bool sxdp_list_op_allows(enum sxdp_list_op op)
{
	return op == SXDP_OP_ALLOW || op == SXDP_OP_DISALLOW;
}

/* block and allow add entries (sxdp_op_add); unblock and disallow remove them. */
static inline bool sxdp_list_op_adds(enum sxdp_list_op op)
{
	return op == SXDP_OP_BLOCK || op == SXDP_OP_ALLOW;
}

/* What an operation did. */
struct sxdp_op_result {
	size_t changed;		/* entries added, removed or expired */
	size_t updated;		/* block/allow: entries there already, changed (expiry, origin, comment) */
	size_t missing;		/* unblock/disallow: not on the list */
	size_t dropped;		/* load: entries of the origin no longer in the feed */
	uint64_t version;	/* the list's store version after it */
	size_t ifaces;		/* interfaces brought to that version */
	size_t rebuilt;		/* of which by a new generation */
	size_t stale;		/* left as they were: an older program's maps (attach upgrades) */
	struct sxdp_adopted adopted;	/* load: origins of an older sieve taken over */
	/*
	 * Recorded attachments of the list that do not enforce it after the
	 * change (pins gone, no BPF filesystem here, an older program, a link
	 * detached...): the store has the change all the same. The first
	 * SXDP_UNREACHED_MAX of them, with why.
	 */
	size_t unreached;
	struct sxdp_unreached unreached_ifs[SXDP_UNREACHED_MAX];
};

/* block (@a->allow false) or allow: adds @keys to @list. */
int sxdp_op_add(struct sxdp_store *s, const char *list, const struct sxdp_keys *keys,
		const struct sxdp_store_attrs *a, struct sxdp_op_result *res, char *err,
		size_t errlen);
/* unblock (@allow false) or disallow. */
int sxdp_op_remove(struct sxdp_store *s, const char *list, bool allow,
		   const struct sxdp_keys *keys, struct sxdp_op_result *res, char *err,
		   size_t errlen);
/* The same, only entries of @origin (fleet sync): others count as missing. */
int sxdp_op_remove_own(struct sxdp_store *s, const char *list, bool allow, const char *origin,
		       const struct sxdp_keys *keys, struct sxdp_op_result *res, char *err,
		       size_t errlen);
/*
 * load: @list's entries of origin @a->origin on @a's side (blocked or
 * allowed) become @keys, after it took over the origins an older sieve
 * recorded for the same file (@a->adopt_path, sxdp_store_adopt_origins).
 */
int sxdp_op_load(struct sxdp_store *s, const char *list, const struct sxdp_keys *keys,
		 const struct sxdp_store_attrs *a, struct sxdp_op_result *res, char *err,
		 size_t errlen);
/*
 * Removes @list's entries due at @now in one rebuild. Cheap when none is
 * due: one indexed query, no lock.
 */
int sxdp_op_expire(struct sxdp_store *s, const char *list, int64_t now,
		   struct sxdp_op_result *res, char *err, size_t errlen);
/* Brings every interface enforcing @list to the store's version. */
int sxdp_op_sync(struct sxdp_store *s, const char *list, struct sxdp_op_result *res,
		 char *err, size_t errlen);

/* How an interface's generation is built, besides the entries. */
struct sxdp_iface_params {
	uint32_t flags;
	uint32_t fpp_ppb;
	uint64_t capacity;
	unsigned int max_probes;
	const char *filter;	/* SIEVE_XDP_F_FILTER: the filter's name */
	bool beside;		/* see struct sxdp_build_spec */
};

/*
 * A new generation of @h (locked by the caller) from @list in the store,
 * with @p (NULL: the live generation's settings). *@version (may be NULL)
 * gets the store version it holds.
 */
int sxdp_build_from_store(struct sxdp_handle *h, struct sxdp_store *s, const char *list,
			  const struct sxdp_iface_params *p, uint64_t *version, char *err,
			  size_t errlen);
/* @h's maps (locked by the caller) at @list's store version: rebuilt if behind. */
int sxdp_iface_sync(struct sxdp_handle *h, struct sxdp_store *s, const char *list,
		    bool *rebuilt, char *err, size_t errlen);
/*
 * @h's generation (locked by the caller, in step with the store) rebuilt
 * from the store if its removed keys are due (sxdp_removed_due): the
 * agent's background rebuild. *@removed: how many it held (0: not due,
 * nothing done).
 */
int sxdp_iface_compact(struct sxdp_handle *h, struct sxdp_store *s, const char *list,
		       uint64_t *removed, char *err, size_t errlen);

/*
 * Attaches the blocklist to @ifname (or applies new settings to it), its
 * maps built from the list in the store, and records the attachment:
 * SXDP_ATTACHED or SXDP_ALREADY, or -errno.
 */
int sxdp_attach(struct sxdp_store *s, const char *ifname, const struct sxdp_attach_opts *o,
		char *err, size_t errlen);
/*
 * Replaces the older program @ifname's link runs (its lock held in
 * *@lock_fd, which this may exchange for the lock of the folder that
 * takes the interface's place) by this sieve's, with maps of its own built
 * from @list in the store: see attach.c. 0 it runs this sieve's program
 * already, 1 upgraded (@err says from which tag to which), -errno with
 * the old program still running.
 */
int sxdp_upgrade_locked(struct sxdp_store *s, const char *ifname, const char *list,
			const struct sxdp_attach_opts *o, int *lock_fd, char *err, size_t errlen);
/* 0 detached, 1 was not attached; the record goes either way. */
int sxdp_detach(struct sxdp_store *s, const char *ifname, char *err, size_t errlen);
/* The ifindex of this namespace @ifname's pinned link runs on: 0 if none or defunct. */
int sxdp_linked_ifindex(const char *ifname);
/*
 * An interface that went away (or came back as another one): its pins are
 * removed, under its lock, unless its link runs on the interface of that
 * name now. The record stays, so the agent can attach it again. 0 removed,
 * 1 nothing to remove, or -errno.
 */
int sxdp_unpin(const char *ifname);

#endif /* SIEVE_XDP_OPS_H */
