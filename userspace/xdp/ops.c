// SPDX-License-Identifier: GPL-2.0
/*
 * The operations on a list: the store first, then the maps of every
 * interface that enforces it (ops.h says why in that order, and how the
 * locks are taken).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"
#include "backend.h"
#include "sieve_xdp_v4table.h"

/* One interface enforcing the list, locked. */
struct locked_iface {
	int lock_fd;		/* -1: its pins are gone (not running), skipped */
	bool open;		/* h holds its maps */
	bool behind;		/* its maps are not at the store's version */
	bool stale;		/* an older program's maps: never written (-ESTALE) */
	int open_err;		/* why its maps did not open: -errno, or 0 */
	struct sxdp_handle h;
};

/* The interfaces of one list, locked, and the store's write transaction. */
struct list_lock {
	struct sxdp_attachment *a;
	struct locked_iface *ifs;
	size_t n;
	uint64_t version;	/* the list's store version before the change */
};

/* Set changes between the unlocked read and the locked one: retries. */
#define LOCK_TRIES	16

static void list_unlock(struct list_lock *L)
{
	size_t i;

	for (i = 0; i < L->n; i++) {
		if (L->ifs[i].open)
			sxdp_close(&L->ifs[i].h);
		sxdp_unlock(L->ifs[i].lock_fd);
	}
	free(L->ifs);
	free(L->a);
	memset(L, 0, sizeof(*L));
}

static bool same_ifaces(const struct sxdp_attachment *a, size_t n,
			const struct sxdp_attachment *b, size_t m)
{
	size_t i;

	if (n != m)
		return false;
	for (i = 0; i < n; i++)
		if (a[i].netns != b[i].netns || strcmp(a[i].iface, b[i].iface))
			return false;
	return true;
}

/* Locks every interface of L->a, in its order (the store sorts it). */
static int lock_ifaces(struct list_lock *L, char *err, size_t errlen)
{
	size_t i;
	int fd;

	L->ifs = calloc(L->n ? L->n : 1, sizeof(*L->ifs));
	if (!L->ifs)
		return -ENOMEM;
	for (i = 0; i < L->n; i++)
		L->ifs[i].lock_fd = -1;
	for (i = 0; i < L->n; i++) {
		fd = sxdp_lock_ns(L->a[i].netns, L->a[i].iface, false);
		if (fd == -ENOENT)
			continue;	/* recorded, not running: the agent's to restore */
		if (fd < 0) {
			snprintf(err, errlen, "%s: taking its lock: %s", L->a[i].iface,
				 strerror(-fd));
			return fd;
		}
		L->ifs[i].lock_fd = fd;
	}
	return 0;
}

/*
 * Whether @cfg's maps hold digests under the host's secret: else they are
 * behind whatever the versions say (an older sieve's linear digest, or a
 * secret file that was replaced), and rebuilt from the store. One whose
 * secret cannot be read counts as behind: the rebuild says why it fails.
 */
static bool digest_current(struct sxdp_store *s, const struct sieve_xdp_config *cfg)
{
	const __u64 *secret;

	return !sxdp_store_secret(s, &secret, NULL, 0) && sxdp_digest_current(cfg, secret);
}

/*
 * Locks @list's interfaces, then opens the store's write transaction, and
 * checks the set is still the one locked. Then opens each one's maps and
 * notes which are behind the store.
 */
static int list_lock(struct sxdp_store *s, const char *list, struct list_lock *L, char *err,
		     size_t errlen)
{
	struct sxdp_attachment *now;
	size_t m, i, tries;
	uint64_t version;
	int ret;

	memset(L, 0, sizeof(*L));
	for (tries = 0; tries < LOCK_TRIES; tries++) {
		ret = sxdp_store_attachments(s, list, &L->a, &L->n, err, errlen);
		if (!ret)
			ret = lock_ifaces(L, err, errlen);
		if (!ret)
			ret = sxdp_store_begin(s, err, errlen);
		if (ret) {
			list_unlock(L);
			return ret;
		}
		ret = sxdp_store_attachments(s, list, &now, &m, err, errlen);
		if (!ret && same_ifaces(L->a, L->n, now, m)) {
			free(now);
			break;
		}
		free(now);
		sxdp_store_rollback(s);
		list_unlock(L);
		if (ret)
			return ret;
	}
	if (tries == LOCK_TRIES) {
		snprintf(err, errlen, "the interfaces of list %s keep changing", list);
		return -EAGAIN;
	}
	ret = sxdp_store_version(s, list, &version);
	if (ret)
		snprintf(err, errlen, "%s: reading the version of list %s", sxdp_store_path(s), list);
	L->version = version;
	for (i = 0; !ret && i < L->n; i++) {
		struct locked_iface *f = &L->ifs[i];
		struct sieve_xdp_config cfg;
		const __u64 *secret;
		int open_ret;

		if (f->lock_fd < 0)
			continue;
		open_ret = sxdp_open_ns(L->a[i].netns, L->a[i].iface, &f->h);
		f->stale = open_ret == -ESTALE;
		f->open_err = open_ret;
		if (open_ret)
			continue;
		f->open = true;
		/*
		 * Maps cannot follow without the digest's secret: refused before
		 * anything is stored. A filter backend's filter that vanished is
		 * rebuilt like maps behind.
		 */
		ret = sxdp_store_secret(s, &secret, err, errlen);
		if (!ret)
			f->behind = sxdp_read_config(&f->h, &cfg, NULL) ||
				    cfg.store_version != version || !sxdp_digest_current(&cfg, secret) ||
				    sxdp_filter_gone(&cfg);
	}
	if (ret) {
		sxdp_store_rollback(s);
		list_unlock(L);
	}
	return ret;
}

/*
 * The interface's allowlist trie becomes @allowed. An instance from before
 * the allowlist has no trie: fine while the list allows nothing.
 */
static int allow_sync(struct sxdp_handle *h, const struct sxdp_keys *allowed, char *err,
		      size_t errlen)
{
	int ret;

	if (h->allow_fd < 0 && !allowed->n)
		return 0;
	ret = sxdp_allow_sync(h, allowed);
	if (ret == -EOPNOTSUPP)
		snprintf(err, errlen, "%s was attached by an older sieve without an allowlist: "
			 "detach and attach it", h->ifname);
	else if (ret)
		snprintf(err, errlen, "%s: the allowlist: %s", h->ifname, strerror(-ret));
	return ret;
}

/* The capacity a rebuild for @n entries plans, from the live @cap. */
static uint64_t rebuild_capacity(uint64_t n, uint64_t cap)
{
	/* Doubling: growth by live adds costs O(1) amortised per entry. */
	if (n <= cap)
		return cap;
	return sxdp_capacity_for(n > 2 * cap ? n : 2 * cap);
}

/*
 * A new generation of @h from @l (the blocklist, sorted) and @allowed
 * (the allowlist), at @store_version.
 */
/*
 * Exact mode: the origins of @keys (NULL: of all @list's entries), which
 * the exact maps' values take, given to @h until with_origins_done().
 */
static int with_origins(struct sxdp_handle *h, struct sxdp_store *s, const char *list,
			const struct sxdp_keys *keys, uint32_t flags, struct sxdp_origins *o,
			char *err, size_t errlen)
{
	int ret;

	if (!(flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY)))
		return 0;
	ret = sxdp_store_read_origins(s, list, keys, o, err, errlen);
	if (!ret)
		h->origins = o;
	return ret;
}

static void with_origins_done(struct sxdp_handle *h, struct sxdp_origins *o)
{
	h->origins = NULL;
	sxdp_origins_free(o);
}

static int build_lists(struct sxdp_handle *h, struct sxdp_store *s, const char *list,
		       const struct sxdp_keys *l, const struct sxdp_keys *allowed,
		       uint64_t store_version, const struct sxdp_iface_params *p, char *err,
		       size_t errlen)
{
	struct sxdp_origins origins = { 0 };
	struct sxdp_build_spec b = { .list = l, .store_version = store_version };
	struct sxdp_attachment rec;
	struct sieve_xdp_config cur;
	int ret;

	ret = sxdp_store_secret(s, &b.secret, err, errlen);
	if (ret)
		return ret;
	if (p) {
		b.flags = p->flags;
		b.fpp_ppb = p->fpp_ppb;
		b.capacity = p->capacity;
		b.max_probes = p->max_probes;
		b.filter = p->filter;
		b.beside = p->beside;
	} else {
		ret = sxdp_read_config(h, &cur, NULL);
		if (ret) {
			snprintf(err, errlen, "reading the live config: %s", strerror(-ret));
			return ret;
		}
		b.flags = cur.flags;
		b.fpp_ppb = cur.fpp_ppb;
		b.capacity = rebuild_capacity(l->n, cur.capacity);
		b.max_probes = cur.max_probes;
		/* A named filter (filter:NAME): the one of record. */
		if (sxdp_backend_of(cur.flags)->named &&
		    !sxdp_store_attach_get(s, h->netns, h->ifname, &rec, NULL, 0))
			b.filter = sxdp_backend_filter(rec.backend);
	}
	/*
	 * The allowlist first: it is not generational, and entries allowed in
	 * the store must hold before the new generation can drop them.
	 */
	ret = allow_sync(h, allowed, err, errlen);
	if (!ret)
		ret = with_origins(h, s, list, NULL, b.flags, &origins, err, errlen);
	if (!ret)
		ret = sxdp_build(h, &b, err, errlen);
	with_origins_done(h, &origins);
	return ret;
}

int sxdp_build_from_store(struct sxdp_handle *h, struct sxdp_store *s, const char *list,
			  const struct sxdp_iface_params *p, uint64_t *version, char *err,
			  size_t errlen)
{
	struct sxdp_keys l = { 0 }, allowed = { 0 };
	uint64_t store_version = 0;
	bool own;
	int ret;

	/*
	 * One snapshot: the version is the one of the entries read. Inside
	 * the caller's transaction (an add enforced before its commit), that
	 * one, with its change.
	 */
	own = !sxdp_store_in_tx(s);
	ret = own ? sxdp_store_begin_read(s, err, errlen) : 0;
	if (ret)
		return ret;
	ret = sxdp_store_version(s, list, &store_version);
	if (!ret)
		ret = sxdp_store_read(s, list, &l, err, errlen);
	if (!ret)
		ret = sxdp_store_read_from(s, list, true, &allowed, err, errlen);
	if (own)
		sxdp_store_rollback(s);
	if (!ret)
		ret = build_lists(h, s, list, &l, &allowed, store_version, p, err, errlen);
	if (!ret && version)
		*version = store_version;
	sxdp_keys_free(&l);
	sxdp_keys_free(&allowed);
	return ret;
}

int sxdp_iface_sync(struct sxdp_handle *h, struct sxdp_store *s, const char *list,
		    bool *rebuilt, char *err, size_t errlen)
{
	struct sieve_xdp_config cfg;
	uint64_t version;
	int ret;

	*rebuilt = false;
	ret = sxdp_store_version(s, list, &version);
	if (!ret)
		ret = sxdp_read_config(h, &cfg, NULL);
	if (ret) {
		snprintf(err, errlen, "reading the versions: %s", strerror(-ret));
		return ret;
	}
	if (cfg.store_version == version && digest_current(s, &cfg) && !sxdp_filter_gone(&cfg))
		return 0;
	*rebuilt = true;
	return sxdp_build_from_store(h, s, list, NULL, NULL, err, errlen);
}

int sxdp_iface_compact(struct sxdp_handle *h, struct sxdp_store *s, const char *list,
		       uint64_t *removed, char *err, size_t errlen)
{
	struct sieve_xdp_config cfg;
	int ret;

	*removed = 0;
	ret = sxdp_read_config(h, &cfg, NULL);
	if (ret) {
		snprintf(err, errlen, "reading the live config: %s", strerror(-ret));
		return ret;
	}
	if (!sxdp_removed_due(&cfg))
		return 0;
	*removed = cfg.removed;
	return sxdp_build_from_store(h, s, list, NULL, NULL, err, errlen);
}

/* What a change left for the maps. */
struct change {
	bool first;			/* enforced before the commit (adds, loads) */
	struct sxdp_keys stored;	/* the blocklist after it, once read (have_stored) */
	bool have_stored;
	struct sxdp_keys fresh;		/* blocklist entries new to the list */
	bool removal;			/* blocklist entries went: a rebuild */
	const struct sxdp_keys *gone;	/* which, if known: a cuckoo filter deletes them live */
	struct sxdp_keys removed;	/* what gone points at after an unblock or expiry */
	struct sxdp_keys allow_gone;	/* allowlist entries an expiry removed */
	/*
	 * A load: the lists as the store holds them after it, made from its
	 * parsed keys (stored and allowed), so a rebuild fills the maps from
	 * them instead of reading the feed back out of the store.
	 */
	bool have_lists;
	struct sxdp_keys allowed;
	/* A blocklist load gone live: its keys, to make the lists if one rebuilds. */
	const struct sxdp_keys *load_keys;
	const char *load_origin;
	struct sxdp_keys allow_add;	/* allowlist entries new to the list */
	/* An add's keys, some there already: the origin of those may be another now. */
	const struct sxdp_keys *reorigin;
	const struct sxdp_keys *allow_del;	/* allowlist entries removed (or missing) */
};

/*
 * The blocklist as the change left it, read once for every interface of
 * the filter backend: which entries still make a digest is the store's
 * to say (devfilter.c).
 */
static const struct sxdp_keys *stored(struct sxdp_store *s, const char *list, struct change *c,
				      char *err, size_t errlen)
{
	if (!c->have_stored && sxdp_store_read(s, list, &c->stored, err, errlen))
		return NULL;
	c->have_stored = true;
	return &c->stored;
}

/* A config that reads the table on a handle without it: never written so. */
static int v4table_ready(const struct sxdp_handle *h)
{
	return sxdp_v4table_on(h) ? 0 : -EIO;
}

/* For removed.c and the host bitmap: what is still on the list, asked of the store. */
struct store_list {
	struct sxdp_store *s;
	const char *list;
};

/* For the host bitmap: whether the store still holds a host in a /24. */
static int store_has_host(void *ctx, uint32_t slot, bool *found)
{
	struct store_list *x = ctx;

	return sxdp_store_has_v4_host_in(x->s, x->list, slot, found);
}

/*
 * The IPv4 prefixes of @c->gone out of the table: the /24s they spanned
 * recomputed from the prefixes that remain in the store (its prefix
 * index: sources are not read). Nothing if none is gone. The IPv4
 * sources gone clear their /24's host bit where the store has no other.
 */

static int v4table_remove(struct sxdp_store *s, const char *list, struct sxdp_handle *h,
			  struct change *c, char *err, size_t errlen)
{
	struct sxdp_keys remaining = { 0 };
	struct store_list x = { s, list };
	size_t i;
	int ret;

	/* The host bits of /24s left without a host (the store is past the change). */
	ret = sxdp_v4host_remove(h, c->gone, store_has_host, &x);
	if (ret)
		return ret;
	for (i = 0; i < c->gone->n && !sxdp_v4table_entry(&c->gone->keys[i]); i++)
		;
	if (i == c->gone->n)
		return 0;
	ret = v4table_ready(h);
	if (!ret)
		ret = sxdp_store_read_v4_prefixes(s, list, &remaining, err, errlen);
	if (!ret)
		ret = sxdp_v4table_remove(h, c->gone, &remaining);
	sxdp_keys_free(&remaining);
	return ret;
}

/*
 * Live adds of @c->fresh into @h's maps, of either kind of backend: 1 for
 * a rebuild. The filter backend reads the list only if it may hold one
 * of the digests already (devfilter.c).
 */
static int add_live(struct sxdp_store *s, const char *list, struct sxdp_handle *h,
		    struct change *c, uint64_t version, char *err, size_t errlen)
{
	const struct sxdp_backend_ops *ops;
	struct sxdp_origins origins = { 0 };
	const struct sxdp_keys *l;
	struct sieve_xdp_config cfg;
	int ret;

	/* Unreadable: the default's add, which reads it again and says why. */
	ret = sxdp_read_config(h, &cfg, NULL);
	ops = sxdp_backend_of(ret ? 0 : cfg.flags);
	/* IPv4 prefixes: into the table first, whatever the backend does next. */
	if (!ret && (cfg.flags & SIEVE_XDP_F_V4TABLE)) {
		ret = v4table_ready(h) ?: sxdp_v4table_add(h, &c->fresh);
		if (ret == -ENOSPC)
			snprintf(err, errlen, "%s: the IPv4 prefix table takes at most %u /24s "
				 "holding prefixes longer than /24", h->ifname,
				 SIEVE_XDP_V4_MAX_CHUNKS / 2);
		if (ret)
			return ret;
	}
	/* An unreadable config (ret): no origins, as the default's add reads it again. */
	ret = with_origins(h, s, list, &c->fresh, ret ? 0 : cfg.flags, &origins, err, errlen);
	if (!ret)
		ret = ops->add_live(h, &c->fresh, c->have_stored ? &c->stored : NULL, version);
	if (ret == 2) {
		l = stored(s, list, c, err, errlen);
		ret = l ? ops->add_live(h, &c->fresh, l, version) : -EIO;
	}
	with_origins_done(h, &origins);
	return ret;
}

/*
 * Exact mode: the keys of @entries that an add found there already take
 * their origin's id, as the store says now, in the live exact map.
 */
static int reorigin_live(struct sxdp_store *s, const char *list, struct sxdp_handle *h,
			 const struct sxdp_keys *entries, char *err, size_t errlen)
{
	struct sxdp_origins origins = { 0 };
	struct sieve_xdp_config cfg;
	int ret = sxdp_read_config(h, &cfg, NULL);

	if (!ret)
		ret = with_origins(h, s, list, entries, cfg.flags, &origins, err, errlen);
	if (!ret && h->origins)
		ret = sxdp_exact_reorigin(h, entries);
	with_origins_done(h, &origins);
	return ret;
}

static int store_has(void *ctx, const struct sieve_xdp_key *entry, bool *found)
{
	struct store_list *x = ctx;

	return sxdp_store_has(x->s, x->list, false, entry, found);
}

/*
 * Live removals of @c->gone from @h's maps: 1 for a rebuild. A backend
 * that deletes them itself (ops->remove_live: the cuckoo filter, which
 * reads the list) does; for the others they are noted as removed
 * (removed.c: point lookups in the store, in one snapshot of it).
 */
static int remove_live(struct sxdp_store *s, const char *list, struct sxdp_handle *h,
		       struct change *c, uint64_t version, char *err, size_t errlen)
{
	const struct sxdp_backend_ops *ops;
	struct store_list x = { s, list };
	const struct sxdp_keys *l;
	struct sieve_xdp_config cfg;
	bool own;
	int ret;

	ret = sxdp_read_config(h, &cfg, NULL);
	if (ret)
		return ret;
	ops = sxdp_backend_of(cfg.flags);
	if (cfg.flags & SIEVE_XDP_F_V4TABLE) {
		ret = v4table_remove(s, list, h, c, err, errlen);
		if (ret)
			return ret;
	}
	if (ops->remove_live) {
		l = stored(s, list, c, err, errlen);
		return l ? ops->remove_live(h, c->gone, l, version) : -EIO;
	}
	/* Inside a load's transaction (enforced first), the store as it leaves it. */
	own = !sxdp_store_in_tx(s);
	ret = own ? sxdp_store_begin_read(s, err, errlen) : 0;
	if (ret)
		return ret;
	ret = sxdp_remove_live(h, c->gone, store_has, &x, version);
	if (own)
		sxdp_store_rollback(s);
	return ret;
}

static int load_lists(struct sxdp_store *s, const char *list, const struct sxdp_keys *keys,
		      const char *origin, struct change *c, char *err, size_t errlen);

/*
 * Brings one locked interface to @version after @c: live adds, then live
 * removals (a refresh may do both: the maps drop more, never less, in
 * between), where they do, else a rebuild from the store (which also
 * catches up a behind one).
 */
static int apply_iface(struct sxdp_store *s, const char *list, struct locked_iface *f,
		       struct change *c, uint64_t version, struct sxdp_op_result *res,
		       char *err, size_t errlen)
{
	int ret = 1;

	res->stale += f->stale;
	if (!f->open)
		return 0;
	if (!f->behind && (c->allow_add.n || c->allow_del)) {
		ret = sxdp_allow_update(&f->h, &c->allow_add, c->allow_del ? c->allow_del :
					&(struct sxdp_keys){ 0 });
		/* A trie that refused part of it: rebuilt whole from the store. */
		f->behind = ret < 0;
		ret = 1;
	}
	ret = f->behind ? 1 : 0;
	if (!ret && c->fresh.n) {
		err[0] = '\0';
		ret = add_live(s, list, &f->h, c, version, err, errlen);
		/* A cause add_live() put in words is kept. */
		if (ret < 0 && !err[0])
			snprintf(err, errlen, "%s: adding to the live maps: %s", f->h.ifname,
				 strerror(-ret));
	}
	if (!ret && c->reorigin) {
		ret = reorigin_live(s, list, &f->h, c->reorigin, err, errlen);
		if (ret < 0 && !err[0])
			snprintf(err, errlen, "%s: the origins of the live maps: %s", f->h.ifname,
				 strerror(-ret));
	}
	if (!ret && c->removal) {
		ret = c->gone ? remove_live(s, list, &f->h, c, version, err, errlen) : 1;
		if (ret < 0)
			snprintf(err, errlen, "%s: removing from the live maps: %s", f->h.ifname,
				 strerror(-ret));
	} else if (!ret && !c->fresh.n) {
		ret = sxdp_set_version(&f->h, version);
		if (ret < 0)
			snprintf(err, errlen, "%s: setting its version: %s", f->h.ifname,
				 strerror(-ret));
	}
	/* A load that could not go live: built from its parsed keys after all. */
	if (ret == 1 && c->load_keys && !c->have_lists && !c->have_stored) {
		ret = load_lists(s, list, c->load_keys, c->load_origin, c, err, errlen) ?: 1;
		if (ret < 0)
			return ret;
	}
	if (ret == 1) {
		ret = c->have_lists ?
		      build_lists(&f->h, s, list, &c->stored, &c->allowed, version, NULL, err,
				  errlen) :
		      sxdp_build_from_store(&f->h, s, list, NULL, NULL, err, errlen);
		res->rebuilt += !ret;
	}
	res->ifaces += !ret;
	return ret;
}

/*
 * An add or a load, enforced before its commit: it can fail for what it
 * adds (a list the planner cannot fit in the probes, a filter of a fixed
 * size that is full), and an interface must never be left behind a store
 * it cannot follow, or every later command would fail on it. So every
 * interface takes the change inside the store's transaction; if one
 * cannot, the transaction is rolled back, the interfaces that took it are
 * rebuilt from the store as it was, and the change is refused: the store
 * and what the maps enforce agree. Killed in between, the maps are ahead
 * of the store (marked with a version it never committed): the next
 * operation rebuilds them. Until then a block's maps drop more than the
 * store says, never less; a load's may enforce the load's list (a cut-
 * short command's outcome, as if it had committed).
 */
static int enforce_first(struct sxdp_store *s, const char *list, struct list_lock *L,
			 struct change *c, struct sxdp_op_result *res, char *err, size_t errlen)
{
	char why[256];
	size_t i, j;
	int ret = 0;

	for (i = 0; !ret && i < L->n; i++) {
		struct locked_iface *f = &L->ifs[i];

		/*
		 * The new version first: killed while the maps change, they are
		 * at a version the store never committed, so the next command
		 * finds them behind and rebuilds them (a live add would leave
		 * keys of no entry otherwise, never to be deleted).
		 */
		if (f->open && !f->behind && sxdp_set_version(&f->h, res->version))
			f->behind = true;
		ret = apply_iface(s, list, f, c, res->version, res, err, errlen);
	}
	if (!ret)
		ret = sxdp_store_commit(s, err, errlen);
	if (!ret)
		return 0;
	sxdp_store_rollback(s);
	snprintf(why, sizeof(why), "%s", err);
	/* ret set in the loop: interface i - 1 refused it; else the commit failed. */
	snprintf(err, errlen, "refused, nothing changed: %s%s%s",
		 i && L->ifs[i - 1].open ? L->ifs[i - 1].h.ifname : "",
		 i && L->ifs[i - 1].open ? ": " : "", why);
	for (j = 0; j < i; j++) {
		if (L->ifs[j].open &&
		    sxdp_build_from_store(&L->ifs[j].h, s, list, NULL, NULL, why, sizeof(why)))
			L->ifs[j].behind = true;	/* the next operation rebuilds it */
	}
	res->version = L->version;
	res->ifaces = res->rebuilt = res->changed = 0;
	return ret;
}

/*
 * The recorded attachments of @L that do not enforce the list, into
 * @res: without pins (a reboot, or no BPF filesystem in this mount
 * namespace), an older program's, unreadable, or a link that runs on no
 * interface (whose maps took the change, for no program).
 */
static void note_unreached(const struct list_lock *L, struct sxdp_op_result *res)
{
	struct sxdp_unreached *u;
	enum sxdp_enforce st;
	size_t i;
	int err = 0;

	for (i = 0; i < L->n; i++) {
		const struct locked_iface *f = &L->ifs[i];

		if (f->lock_fd < 0) {
			st = sxdp_pins_state(L->a[i].netns, L->a[i].iface, &err);
			/* Gone since the lock was tried: gone all the same. */
			if (st == SXDP_ENFORCING)
				st = SXDP_PINS_GONE;
		} else if (f->stale) {
			st = SXDP_OLDER_PROG;
		} else if (!f->open) {
			st = SXDP_UNREADABLE;
			err = f->open_err;
		} else {
			st = sxdp_pins_state(L->a[i].netns, L->a[i].iface, &err);
			if (st == SXDP_ENFORCING)
				continue;
		}
		if (res->unreached < SXDP_UNREACHED_MAX) {
			u = &res->unreached_ifs[res->unreached];
			u->netns = L->a[i].netns;
			snprintf(u->iface, sizeof(u->iface), "%s", L->a[i].iface);
			u->state = st;
			u->err = err;
		}
		res->unreached++;
	}
}

/*
 * The frame of every operation: lock, @change in the store's transaction,
 * then each interface, before the commit for an add or a load
 * (enforce_first), after it for the rest. An error in the store rolls back
 * and leaves the maps alone. A removal cannot fail for what it removes
 * (a part of a list that fits fits too); one that fails all the same (out
 * of memory, the module gone) leaves the maps behind the store, for the
 * next operation to rebuild.
 */
static int run_op(struct sxdp_store *s, const char *list,
		  int (*fn)(struct sxdp_store *s, const char *list, void *arg, struct change *c,
			    struct sxdp_op_result *res, char *err, size_t errlen),
		  void *arg, struct sxdp_op_result *res, char *err, size_t errlen)
{
	struct change c = { 0 };
	struct list_lock L;
	size_t i;
	int ret, first = 0;

	memset(res, 0, sizeof(*res));
	if (!sxdp_list_name_ok(list)) {
		snprintf(err, errlen, "%s: not a list name (1-%d of A-Z a-z 0-9 _ . -)", list,
			 SXDP_LIST_NAME_MAX);
		return -EINVAL;
	}
	ret = list_lock(s, list, &L, err, errlen);
	if (ret)
		return ret;
	ret = fn(s, list, arg, &c, res, err, errlen);
	if (!ret)
		ret = sxdp_store_version(s, list, &res->version);
	if (!ret && c.first)
		ret = enforce_first(s, list, &L, &c, res, err, errlen);
	else if (!ret)
		ret = sxdp_store_commit(s, err, errlen);
	else
		sxdp_store_rollback(s);
	for (i = 0; !ret && !c.first && i < L.n; i++) {
		ret = apply_iface(s, list, &L.ifs[i], &c, res->version, res, err, errlen);
		/* The others still get the change; the first error is reported. */
		if (ret && !first)
			first = ret;
		ret = 0;
	}
	if (!ret)
		note_unreached(&L, res);
	list_unlock(&L);
	sxdp_keys_free(&c.stored);
	sxdp_keys_free(&c.fresh);
	sxdp_keys_free(&c.allow_add);
	sxdp_keys_free(&c.removed);
	sxdp_keys_free(&c.allow_gone);
	sxdp_keys_free(&c.allowed);
	return ret ? ret : first;
}

struct add_arg {
	const struct sxdp_keys *keys;
	const struct sxdp_store_attrs *a;
};

static int change_add(struct sxdp_store *s, const char *list, void *arg, struct change *c,
		      struct sxdp_op_result *res, char *err, size_t errlen)
{
	struct add_arg *x = arg;
	struct sxdp_keys fresh = { 0 };
	int ret;

	ret = sxdp_store_add_fresh(s, list, x->keys->keys, x->keys->n, x->a, &fresh,
				   &res->updated, err, errlen);
	res->changed = fresh.n;
	c->first = true;
	/* An allowlist entry goes to the trie, not the bloom maps. */
	if (!x->a->allow)
		c->fresh = fresh;
	else
		c->allow_add = fresh;
	if (!x->a->allow && res->updated)
		c->reorigin = x->keys;
	return ret;
}

int sxdp_op_add(struct sxdp_store *s, const char *list, const struct sxdp_keys *keys,
		const struct sxdp_store_attrs *a, struct sxdp_op_result *res, char *err,
		size_t errlen)
{
	struct add_arg x = { keys, a };

	return run_op(s, list, change_add, &x, res, err, errlen);
}

struct remove_arg {
	const struct sxdp_keys *keys;
	bool allow;
	const char *origin;	/* only entries of it; NULL: any */
};

static int change_remove(struct sxdp_store *s, const char *list, void *arg, struct change *c,
			 struct sxdp_op_result *res, char *err, size_t errlen)
{
	struct remove_arg *x = arg;
	int ret;

	ret = sxdp_store_remove_gone(s, list, x->allow, x->origin, x->keys->keys, x->keys->n,
				     &c->removed, err, errlen);
	res->changed = c->removed.n;
	res->missing = x->keys->n - c->removed.n;
	c->removal = !x->allow && res->changed;
	if (c->removal)
		c->gone = &c->removed;
	if (x->allow && res->changed)
		c->allow_del = x->keys;
	return ret;
}

int sxdp_op_remove(struct sxdp_store *s, const char *list, bool allow,
		   const struct sxdp_keys *keys, struct sxdp_op_result *res, char *err,
		   size_t errlen)
{
	struct remove_arg x = { keys, allow, NULL };

	return run_op(s, list, change_remove, &x, res, err, errlen);
}

int sxdp_op_remove_own(struct sxdp_store *s, const char *list, bool allow, const char *origin,
		       const struct sxdp_keys *keys, struct sxdp_op_result *res, char *err,
		       size_t errlen)
{
	struct remove_arg x = { keys, allow, origin };

	return run_op(s, list, change_remove, &x, res, err, errlen);
}

/* Whether @l is sorted with no key twice (a feed as sxdp_feed_read leaves it). */
static bool list_sorted(const struct sxdp_keys *l)
{
	size_t i;

	/* sxdp_keys_sort's order: the keys' bytes. */
	for (i = 1; i < l->n; i++)
		if (memcmp(&l->keys[i - 1], &l->keys[i], sizeof(l->keys[i])) >= 0)
			return false;
	return true;
}

/*
 * The blocklist a blocklist load leaves: the entries of other origins (read
 * back, usually few) and the load's keys, but for those allowed (a feed
 * lists a key the operator allowed: it is left out of the store, see
 * sxdp_store_replace_origin). The load's own keys never go through the
 * store twice.
 */
static int load_lists(struct sxdp_store *s, const char *list, const struct sxdp_keys *keys,
		      const char *origin, struct change *c, char *err, size_t errlen)
{
	struct sxdp_keys *l = &c->stored;
	size_t i, others;
	int ret;

	ret = sxdp_store_read_from(s, list, true, &c->allowed, err, errlen);
	if (!ret)
		ret = sxdp_store_read_others(s, list, false, origin, l, err, errlen);
	if (ret)
		return ret;
	others = l->n;
	sxdp_keys_sort(&c->allowed);
	/* Room for every key at once: growing 10^7 keys by doubling copies them again and again. */
	if (l->cap < others + keys->n) {
		struct sieve_xdp_key *grown = realloc(l->keys, (others + keys->n) * sizeof(*grown));

		if (!grown) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		l->keys = grown;
		l->cap = others + keys->n;
	}
	for (i = 0; !ret && i < keys->n; i++)
		if (!c->allowed.n || !sxdp_keys_find(&c->allowed, &keys->keys[i]))
			ret = sxdp_keys_add(l, &keys->keys[i]);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	/* A sorted feed into a list of its own needs no sort (n log n at 10^7). */
	if (others || !list_sorted(l))
		sxdp_keys_sort(l);
	c->have_stored = c->have_lists = true;
	return 0;
}

/*
 * Keys a refresh may drop and add together and still go live: past them
 * removed.c rebuilds anyway (it looks up at most 65536 candidate keys),
 * so the load builds from its parsed keys instead, without a store read.
 */
#define LOAD_LIVE_MAX	65536

static int change_load(struct sxdp_store *s, const char *list, void *arg, struct change *c,
		       struct sxdp_op_result *res, char *err, size_t errlen)
{
	struct add_arg *x = arg;
	bool over = false;
	int ret;

	/* In the refresh's transaction: what it took over, it may drop. */
	ret = sxdp_store_adopt_origins(s, list, x->a, &res->adopted, err, errlen);
	if (!ret)
		ret = sxdp_store_replace_origin_gone(s, list, x->keys->keys, x->keys->n,
						     x->a, &res->changed, &res->dropped,
						     &c->removed, &c->fresh, LOAD_LIVE_MAX,
						     &over, err, errlen);
	if (ret)
		return ret;
	/*
	 * A blocklist refresh that only drops is a removal like an unblock's:
	 * committed first, then its keys leave the live maps (remove_live) in
	 * O(keys dropped), the generation kept.
	 */
	if (!x->a->allow && !res->changed && res->dropped && !over) {
		c->removal = true;
		c->gone = &c->removed;
		return 0;
	}
	/*
	 * One that adds too, within the bound: enforced first, the adds live
	 * as a block's, then the drops as an unblock's. An allowlist refresh
	 * goes to the trie, whose inserts and deletes are live by nature.
	 */
	c->first = true;
	if (!over && x->a->allow) {
		c->allow_add = c->fresh;
		c->fresh = (struct sxdp_keys){ 0 };
		if (res->dropped)
			c->allow_del = &c->removed;
		return 0;
	}
	if (!over) {
		c->removal = res->dropped > 0;
		if (c->removal)
			c->gone = &c->removed;
		c->load_keys = x->keys;
		c->load_origin = x->a->origin;
		return 0;
	}
	sxdp_keys_free(&c->removed);
	sxdp_keys_free(&c->fresh);
	/*
	 * Else a bulk change: one generation whatever it did, which also sizes
	 * the maps for the new list, enforced before the commit.
	 */
	c->removal = res->changed || res->dropped;
	if (c->removal && !x->a->allow)
		ret = load_lists(s, list, x->keys, x->a->origin, c, err, errlen);
	return ret;
}

int sxdp_op_load(struct sxdp_store *s, const char *list, const struct sxdp_keys *keys,
		 const struct sxdp_store_attrs *a, struct sxdp_op_result *res, char *err,
		 size_t errlen)
{
	struct add_arg x = { keys, a };

	return run_op(s, list, change_load, &x, res, err, errlen);
}

static int change_expire(struct sxdp_store *s, const char *list, void *arg, struct change *c,
			 struct sxdp_op_result *res, char *err, size_t errlen)
{
	int ret;

	ret = sxdp_store_expire_split(s, list, *(int64_t *)arg, &c->removed, &c->allow_gone,
				      err, errlen);
	res->changed = c->removed.n + c->allow_gone.n;
	c->removal = c->removed.n > 0;
	if (c->removal)
		c->gone = &c->removed;
	if (c->allow_gone.n)
		c->allow_del = &c->allow_gone;
	return ret;
}

int sxdp_op_expire(struct sxdp_store *s, const char *list, int64_t now,
		   struct sxdp_op_result *res, char *err, size_t errlen)
{
	int64_t next;
	int ret;

	memset(res, 0, sizeof(*res));
	ret = sxdp_store_next_expiry(s, list, &next);
	if (ret) {
		snprintf(err, errlen, "%s: reading the next expiry of %s", sxdp_store_path(s),
			 list);
		return ret;
	}
	if (!next || next > now)
		return 0;
	return run_op(s, list, change_expire, &now, res, err, errlen);
}

static int change_none(struct sxdp_store *s, const char *list, void *arg, struct change *c,
		       struct sxdp_op_result *res, char *err, size_t errlen)
{
	return 0;
}

int sxdp_op_sync(struct sxdp_store *s, const char *list, struct sxdp_op_result *res,
		 char *err, size_t errlen)
{
	return run_op(s, list, change_none, NULL, res, err, errlen);
}
