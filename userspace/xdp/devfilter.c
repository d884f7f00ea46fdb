// SPDX-License-Identifier: GPL-2.0
/*
 * The filter backend (attach --backend filter:NAME): the generation's
 * filter is the /dev/sieve filter NAME, which sieve_xdp_filter.bpf.o asks
 * through sieve.ko's kfuncs (the config's filter.id names it), and
 * which daemons and kernel code can ask too.
 *
 * NAME holds a set: the sieve_xdp_digest() of each key the list expands
 * to (keyed by the host's secret, which the config carries), once (sxdp_filter_digests), however many entries make it. A cuckoo
 * filter holds at most 8 copies of a key (2 buckets of 4 slots), so one
 * copy per entry would let 9 nested prefixes on one probe length, or 9
 * entries of one digest, fail every build with ENOSPC. Who else holds a
 * digest is the store's to say: a live add stores only the digests no
 * other entry makes, a live removal deletes only those no entry left
 * makes (the reference count of each digest is derived from the store's
 * list, read by the caller). Distinct digests are added without
 * SIEVE_ADD_IF_ABSENT: two digests of one fingerprint and bucket pair
 * keep a copy each, so deleting one never takes the other's.
 * The invariant: while the live config's store_version is the store's,
 * NAME holds exactly that set under the live probe lengths. Live adds
 * and live removals from a cuckoo filter keep it. Anything else
 * rebuilds, and so does a command that finds the config behind the store:
 * a cuckoo delete is not idempotent (deleting a key twice can remove
 * another key's copy), so what a killed command may have half done is
 * never done again; NAME is rebuilt from the store instead. A config of
 * another digest (an older sieve's, or another secret) is behind too:
 * its NAME holds digests no packet of the new program would ask for, so
 * it is rebuilt, through the stand-in (the config and the table change
 * at once for packets).
 *
 * A rebuild never shows NAME half filled, and keeps its name and id: a
 * fresh ephemeral filter of the same type and seed is filled beside it,
 * then SIEVE_IOC_EXCHANGE swaps the two tables at once. The old table
 * leaves with the ephemeral filter (destroyed here, or by the kernel when
 * a killed command's /dev/sieve closes). When the probe lengths change
 * too, the program must not see the new table under the old lengths: a
 * stand-in filter with the new table takes the program over first (a
 * generation swap), NAME is exchanged and takes it back, and the stand-in
 * is destroyed. A command killed in between leaves the stand-in
 * enforcing, which the next rebuild destroys.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsieve.h"
#include "xdp.h"

/* Filters a rebuild makes beside NAME (id @id): names of their own. */
#define NEXT_NAME_FMT		"sieve-xdp-next.%u"
#define STANDIN_NAME_FMT	"sieve-xdp-standin.%u"
#define BESIDE_NAME_FMT		"sieve-xdp-upgrade.%u"

/*
 * The lowest rate a cuckoo filter reaches, about 1.2e-4: 2 buckets of
 * SIEVE_CUCKOO_SLOTS fingerprints of SIEVE_CUCKOO_MAX_FP_BITS (kmod/sizing.c).
 */
#define CUCKOO_MIN_FPP_PPB \
	((uint32_t)((2ULL * SIEVE_CUCKOO_SLOTS * SIEVE_PPB + (1U << SIEVE_CUCKOO_MAX_FP_BITS) - 1) >> \
		    SIEVE_CUCKOO_MAX_FP_BITS))

/* Table sizes a build tries: a cuckoo table can refuse a key below capacity. */
#define BUILD_TRIES		3

/* NAME, open. */
struct dfilter {
	struct sieve_dev *dev;
	uint32_t id;
	struct sieve_info info;
};

const char *sxdp_backend_filter(const char *backend)
{
	return strncmp(backend, SXDP_FILTER_PREFIX, strlen(SXDP_FILTER_PREFIX)) ? NULL :
	       backend + strlen(SXDP_FILTER_PREFIX);
}

int sxdp_filter_parse(const char *arg, const char **name)
{
	*name = sxdp_backend_filter(arg);
	if (!*name)
		return 1;
	return sieve_name_check(*name) ? -EINVAL : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int sxdp_filter_digests(const struct sxdp_keys *keys, const __u64 secret[2], uint64_t **d,
			size_t *n)
{
	size_t i, m = 0;

	*n = 0;
	*d = malloc((keys->n ? keys->n : 1) * sizeof(**d));
	if (!*d)
		return -ENOMEM;
	for (i = 0; i < keys->n; i++)
		(*d)[i] = sieve_xdp_digest(&keys->keys[i], secret);
	qsort(*d, keys->n, sizeof(**d), cmp_u64);
	for (i = 0; i < keys->n; i++)
		if (!m || (*d)[m - 1] != (*d)[i])
			(*d)[m++] = (*d)[i];
	*n = m;
	return 0;
}

/* The digests of @l's entries under @cfg's probe lengths (see sxdp_filter_digests). */
static int list_digests(const struct sxdp_keys *l, const struct sieve_xdp_config *cfg,
			uint64_t **d, size_t *n)
{
	struct sxdp_keys keys = { 0 };
	int ret = sxdp_expand(l, cfg, &keys);

	if (!ret)
		ret = sxdp_filter_digests(&keys, cfg->digest_key, d, n);
	sxdp_keys_free(&keys);
	return ret;
}

/* Drops from @a (sorted, *@na of them) every digest of @b (sorted). */
static void digests_minus(uint64_t *a, size_t *na, const uint64_t *b, size_t nb)
{
	size_t i, j = 0, m = 0;

	for (i = 0; i < *na; i++) {
		while (j < nb && b[j] < a[i])
			j++;
		if (j == nb || b[j] != a[i])
			a[m++] = a[i];
	}
	*na = m;
}

/* One batch of @op over @n digests; @st (may be NULL) says how far it went. */
static int apply(struct sieve_dev *dev, uint32_t id, uint32_t op, const uint64_t *d, size_t n,
		 struct sieve_batch_stats *st)
{
	struct sieve_batch_stats dummy;
	uint32_t *lens;
	size_t i;
	int ret;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (!n)
		return 0;
	lens = malloc(n * sizeof(*lens));
	if (!lens)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		lens[i] = sizeof(*d);
	ret = sieve_dev_batch(dev, id, op, 0, d, lens, n, NULL, st);
	free(lens);
	return ret;
}

static void filter_close(struct dfilter *f)
{
	sieve_dev_close(f->dev);
	f->dev = NULL;
}

/*
 * Opens NAME by name (@id 0) or id. An absent NAME is created: a cuckoo
 * filter (it can delete) for @capacity keys at the rate @fpp_ppb, or the
 * lowest a cuckoo filter reaches.
 */
static int filter_open(const char *name, uint32_t id, uint64_t capacity, uint32_t fpp_ppb,
		       struct dfilter *f, char *err, size_t errlen)
{
	struct sieve_params p = {
		.type = SIEVE_CUCKOO, .capacity = capacity,
		.fpp_ppb = fpp_ppb < CUCKOO_MIN_FPP_PPB ? CUCKOO_MIN_FPP_PPB : fpp_ppb,
	};
	int ret = sieve_dev_open(NULL, true, &f->dev);

	if (ret) {
		snprintf(err, errlen, "%s: %s (the filter backend needs sieve.ko)",
			 sieve_dev_default_path(), strerror(-ret));
		return ret;
	}
	ret = id ? (int)id : sieve_dev_lookup(f->dev, name);
	if (ret == -ENOENT) {
		ret = sieve_dev_create(f->dev, name, &p);
		/* Another command created it meanwhile. */
		if (ret == -EEXIST)
			ret = sieve_dev_lookup(f->dev, name);
	}
	if (ret > 0) {
		f->id = ret;
		ret = sieve_dev_info(f->dev, f->id, &f->info);
	}
	if (ret) {
		snprintf(err, errlen, "filter %s: %s", name ? name : "of the live generation",
			 strerror(-ret));
		filter_close(f);
	}
	return ret;
}

/*
 * A filter like NAME (type, seed, layering, rate) for @keys with a quarter
 * of headroom, never smaller than NAME (its owner sized it), scaled up
 * 2^@grow times.
 */
static int create_like(struct dfilter *f, const char *name, uint32_t flags, uint64_t keys,
		       unsigned int grow)
{
	const struct sieve_info *i = &f->info;
	uint64_t cap = keys + keys / 4;
	struct sieve_params p = {
		.type = i->geo.type, .seed = i->geo.seed,
		.flags = flags | SIEVE_CREATE_SEED | (i->create_flags & SIEVE_CREATE_SCALABLE),
	};

	if (i->create_flags & SIEVE_CREATE_GEOMETRY) {
		p.flags |= SIEVE_CREATE_GEOMETRY;
		p.geo = i->geo;
	} else {
		p.capacity = (cap > i->capacity ? cap : i->capacity) << grow;
		p.fpp_ppb = i->fpp_ppb;
	}
	if (p.flags & SIEVE_CREATE_SCALABLE) {
		p.growth = i->growth;
		p.max_layers = i->max_layers;
	}
	return sieve_dev_create(f->dev, name, &p);
}

/* The digests a filter holds. */
struct digest_set {
	uint64_t *d;
	size_t n;
};

/* A new filter like NAME holding @ds: its id, or -errno (nothing left behind). */
static int build_like(struct dfilter *f, const char *fmt, uint32_t flags,
		      const struct digest_set *ds)
{
	char name[SIEVE_NAME_MAX];
	unsigned int try;
	int id, ret = 0;

	snprintf(name, sizeof(name), fmt, f->id);
	for (try = 0; try < BUILD_TRIES; try++) {
		id = create_like(f, name, flags, ds->n, try);
		if (id < 0)
			return id;
		ret = apply(f->dev, id, SIEVE_BATCH_ADD, ds->d, ds->n, NULL);
		if (!ret)
			return id;
		sieve_dev_destroy(f->dev, id);
		if (ret != -ENOSPC || (f->info.create_flags & SIEVE_CREATE_GEOMETRY))
			break;
	}
	return ret;
}

/*
 * Destroys the stand-in left by a killed rebuild, and the filter an
 * upgrade built beside NAME, unless the program reads it (@live_id).
 */
static void drop_standin(struct dfilter *f, uint32_t live_id)
{
	static const char *const fmts[] = { STANDIN_NAME_FMT, BESIDE_NAME_FMT };
	char name[SIEVE_NAME_MAX];
	size_t i;
	int id;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		snprintf(name, sizeof(name), fmts[i], f->id);
		id = sieve_dev_lookup(f->dev, name);
		if (id > 0 && (uint32_t)id != live_id)
			sieve_dev_destroy(f->dev, id);
	}
}

/* The live probe lengths into @cfg, and @l's kinds and counts. */
static void keep_lengths(struct sieve_xdp_config *cfg, const struct sieve_xdp_config *cur,
			 const struct sxdp_keys *l)
{
	size_t i;

	cfg->nr_v4_lens = cur->nr_v4_lens;
	cfg->nr_v6_lens = cur->nr_v6_lens;
	memcpy(cfg->v4_lens, cur->v4_lens, sizeof(cfg->v4_lens));
	memcpy(cfg->v6_lens, cur->v6_lens, sizeof(cfg->v6_lens));
	memcpy(cfg->v4_masks, cur->v4_masks, sizeof(cfg->v4_masks));
	memcpy(cfg->v6_masks, cur->v6_masks, sizeof(cfg->v6_masks));
	cfg->kinds = 0;
	for (i = 0; i < l->n; i++)
		cfg->kinds |= SIEVE_XDP_KIND_BIT(l->keys[i].kind, l->keys[i].family);
	cfg->entries = l->n;
}

/*
 * The probe lengths and digests of @l: the live lengths while the program
 * reads NAME (@reads_name) and they still hold the list (no stand-in
 * needed then), else a new plan; *@kept says which.
 */
static int plan(const struct sxdp_keys *l, const struct sieve_xdp_config *cur, bool reads_name,
		struct sieve_xdp_config *cfg, struct digest_set *ds, bool *kept, char *err,
		size_t errlen)
{
	struct sieve_xdp_config k = *cfg;
	struct sxdp_keys keys = { 0 };
	int ret = 1;

	*kept = false;
	/*
	 * A config that walks IPv4 prefix lengths (an older sieve's) would
	 * miss them in a NAME refilled without them: a stand-in takes over
	 * with the config that reads the IPv4 prefix table instead.
	 */
	if (reads_name && sxdp_max_probes(cur) == sxdp_max_probes(cfg) &&
	    !((cfg->flags & SIEVE_XDP_F_V4TABLE) && !(cur->flags & SIEVE_XDP_F_V4TABLE))) {
		keep_lengths(&k, cur, l);
		ret = sxdp_expand(l, &k, &keys);
		if (!ret) {
			*cfg = k;
			*kept = true;
		}
	}
	if (ret)
		ret = sxdp_plan_keys(l, cfg, &keys, err, errlen);
	if (!ret)
		ret = sxdp_filter_digests(&keys, cfg->digest_key, &ds->d, &ds->n);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "the digests of %zu keys: %s", keys.n, strerror(-ret));
	sxdp_keys_free(&keys);
	return ret;
}

/* The program reads @id under @cfg from now on (a swap; in place if only bookkeeping moved). */
static int point_at(struct sxdp_handle *h, const struct sieve_xdp_config *cfg, uint32_t id,
		    uint64_t store_version)
{
	struct sieve_xdp_config next = *cfg;

	next.filter.id = id;
	next.store_version = store_version;
	return sxdp_publish_config(h, &next, -1, -1);
}

/* The filter's one-line complaint about a build that failed. */
static void build_err(const struct dfilter *f, const char *what, size_t n, int ret, char *err,
		      size_t errlen)
{
	snprintf(err, errlen, "building %s like %s for %zu digests: %s%s", what, f->info.name, n,
		 strerror(-ret), ret == -ENOSPC && (f->info.create_flags & SIEVE_CREATE_GEOMETRY) ?
		 " (its owner made it of a fixed geometry, which cannot grow)" : "");
}

/* NAME gets @ds' table by exchange, and the program reads it under @cfg. */
static int refill(struct sxdp_handle *h, struct dfilter *f, struct sieve_xdp_config *cfg,
		  const struct digest_set *ds, char *err, size_t errlen)
{
	int next = build_like(f, NEXT_NAME_FMT, SIEVE_CREATE_EPHEMERAL, ds), ret;

	if (next < 0) {
		build_err(f, "a filter", ds->n, next, err, errlen);
		return next;
	}
	ret = sieve_dev_exchange(f->dev, f->id, next);
	sieve_dev_destroy(f->dev, next);
	if (ret) {
		snprintf(err, errlen, "exchanging the tables of %s: %s", f->info.name,
			 strerror(-ret));
		return ret;
	}
	if (!sieve_dev_info(f->dev, f->id, &f->info))
		cfg->capacity = f->info.capacity;
	ret = point_at(h, cfg, f->id, cfg->store_version);
	if (ret)
		snprintf(err, errlen, "swapping in the new config: %s", strerror(-ret));
	return ret;
}

/* The stand-in holds @ds and the program reads it under @cfg, at @cur's version. */
static int stand_in(struct sxdp_handle *h, struct dfilter *f, const struct sieve_xdp_config *cfg,
		    const struct sieve_xdp_config *cur, const struct digest_set *ds, char *err,
		    size_t errlen)
{
	int id, ret;

	drop_standin(f, 0);
	id = build_like(f, STANDIN_NAME_FMT, 0, ds);
	if (id < 0) {
		build_err(f, "a stand-in", ds->n, id, err, errlen);
		return id;
	}
	/* Not the new version yet: killed from here on, the next command rebuilds. */
	ret = point_at(h, cfg, id, cur->store_version);
	if (ret)
		snprintf(err, errlen, "swapping in the stand-in: %s", strerror(-ret));
	return ret;
}

/*
 * An upgrade's staged instance (b->beside): @ds in a filter of its own,
 * which the new program reads until the upgrade has swapped it in and
 * rebuilt NAME under the new digest (attach.c). Not ephemeral: it must
 * outlive this command if it is killed after the swap; the next rebuild
 * destroys it (drop_standin).
 */
static int build_beside(struct sxdp_handle *h, struct dfilter *f, const struct sieve_xdp_config *cfg,
			const struct digest_set *ds, char *err, size_t errlen)
{
	char name[SIEVE_NAME_MAX];
	int id, ret;

	snprintf(name, sizeof(name), BESIDE_NAME_FMT, f->id);
	id = sieve_dev_lookup(f->dev, name);
	if (id > 0)
		sieve_dev_destroy(f->dev, id);	/* a killed upgrade's, never swapped in */
	id = build_like(f, BESIDE_NAME_FMT, 0, ds);
	if (id < 0) {
		build_err(f, "a filter", ds->n, id, err, errlen);
		return id;
	}
	ret = point_at(h, cfg, id, cfg->store_version);
	if (ret)
		snprintf(err, errlen, "pointing the new instance at its filter: %s", strerror(-ret));
	return ret;
}

int sxdp_filter_build(struct sxdp_handle *h, const struct sxdp_build_spec *b, char *err,
		      size_t errlen)
{
	struct sieve_xdp_config cur = { 0 }, cfg = {
		.flags = b->flags, .max_probes = b->max_probes, .fpp_ppb = b->fpp_ppb,
		.store_version = b->store_version,
	};
	struct digest_set ds = { 0 };
	struct dfilter f;
	bool reads_name, kept;
	int ret;

	if (!b->filter) {
		snprintf(err, errlen, "the filter backend needs a filter's name (filter:NAME)");
		return -EINVAL;
	}
	cfg.max_probes = sxdp_max_probes(&cfg);
	ret = sxdp_config_keyed(&cfg, h, b, err, errlen);
	if (ret)
		return ret;
	if (sxdp_read_config(h, &cur, NULL))
		memset(&cur, 0, sizeof(cur));
	ret = filter_open(b->filter, 0, sxdp_capacity_for(b->list->n), b->fpp_ppb, &f, err,
			  errlen);
	if (ret)
		return ret;
	reads_name = (cur.flags & SIEVE_XDP_F_FILTER) && cur.filter.id == f.id;
	ret = plan(b->list, &cur, reads_name, &cfg, &ds, &kept, err, errlen);
	if (!ret) {
		cfg.keys = ds.n;
		cfg.fpp_ppb = f.info.fpp_ppb;
	}
	if (!ret && b->beside) {
		ret = build_beside(h, &f, &cfg, &ds, err, errlen);
		goto out;
	}
	/*
	 * New lengths, or a new digest: packets must not see NAME's new table
	 * under the old config, so a stand-in carries them over.
	 */
	if (!ret && reads_name && (!kept || cur.digest != cfg.digest ||
				   memcmp(cur.digest_key, cfg.digest_key, sizeof(cfg.digest_key))))
		ret = stand_in(h, &f, &cfg, &cur, &ds, err, errlen);
	if (!ret)
		ret = refill(h, &f, &cfg, &ds, err, errlen);
	if (!ret)
		drop_standin(&f, f.id);
out:
	filter_close(&f);
	free(ds.d);
	return ret;
}

/*
 * The entries of @list not in @minus, into @out. @minus is small (the
 * entries of one command): sorted here, then looked up.
 */
static int list_minus(const struct sxdp_keys *list, const struct sxdp_keys *minus,
		      struct sxdp_keys *out)
{
	struct sxdp_keys m = { 0 };
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < minus->n; i++)
		ret = sxdp_keys_add(&m, &minus->keys[i]);
	sxdp_keys_sort(&m);
	for (i = 0; !ret && i < list->n; i++)
		if (!sxdp_keys_find(&m, &list->keys[i]))
			ret = sxdp_keys_add(out, &list->keys[i]);
	sxdp_keys_free(&m);
	return ret;
}

/* Drops from @ds the digests some entry of @others makes. */
static int minus_others(struct digest_set *ds, const struct sxdp_keys *others,
			const struct sieve_xdp_config *cfg)
{
	struct digest_set o = { 0 };
	int ret = list_digests(others, cfg, &o.d, &o.n);

	if (!ret)
		digests_minus(ds->d, &ds->n, o.d, o.n);
	free(o.d);
	return ret;
}

/*
 * The live config and the filter it names; 1 if there is none, or if it
 * is not a cuckoo filter and @deletes.
 */
static int live_filter(struct sxdp_handle *h, struct sieve_xdp_config *cur, struct dfilter *f,
		       bool deletes)
{
	char err[128];
	int ret = sxdp_read_config(h, cur, NULL);

	if (ret)
		return ret;
	/* Digests of another function: adding or deleting ours would be wrong. */
	if (!(cur->flags & SIEVE_XDP_F_FILTER) || cur->digest != SIEVE_XDP_DIGEST)
		return 1;
	ret = filter_open(NULL, cur->filter.id, 0, 0, f, err, sizeof(err));
	if (ret)
		return ret == -ENOENT ? 1 : ret;
	/* Only a cuckoo filter deletes; a Bloom type's add is a set's already. */
	if (deletes && f->info.geo.type != SIEVE_CUCKOO) {
		filter_close(f);
		return 1;
	}
	return 0;
}

int sxdp_filter_add_live(struct sxdp_handle *h, const struct sxdp_keys *fresh,
			 const struct sxdp_keys *list, uint64_t store_version)
{
	struct sieve_xdp_config cur, next;
	struct sxdp_keys rest = { 0 };
	struct sieve_batch_stats st;
	struct digest_set ds = { 0 };
	struct dfilter f;
	int ret = live_filter(h, &cur, &f, false), undo;

	if (ret)
		return ret;
	next = cur;
	/* A new probe length would move stored prefixes: a rebuild (expand.c). */
	if (sxdp_config_extend(&next, fresh)) {
		ret = 1;
		goto out;
	}
	ret = list_digests(fresh, &next, &ds.d, &ds.n);
	/*
	 * A digest NAME does not hold, no stored entry makes (NAME holds the
	 * store's set: no false negative), so only when one may be there is
	 * the rest of the list read: the usual block costs O(entries added).
	 */
	if (!ret)
		ret = apply(f.dev, f.id, SIEVE_BATCH_QUERY, ds.d, ds.n, &st);
	if (!ret && st.present)
		ret = !list ? 2 : list_minus(list, fresh, &rest) ?: minus_others(&ds, &rest, &next);
	if (ret == -E2BIG || ret == -ERANGE || (!ret && cur.keys + ds.n > cur.capacity))
		ret = 1;	/* past the table's capacity: a bigger one */
	/* 2: the caller reads the list and calls again; nothing changed yet. */
	if (ret)
		goto out;
	ret = apply(f.dev, f.id, SIEVE_BATCH_ADD, ds.d, ds.n, &st);
	if (ret == -ENOSPC) {
		/*
		 * Full below capacity: take back the copies this add stored (a
		 * Bloom type is never full), then rebuild.
		 */
		undo = apply(f.dev, f.id, SIEVE_BATCH_DELETE, ds.d, st.done, NULL);
		ret = undo ? undo : 1;
	}
	if (ret)
		goto out;
	next.entries = cur.entries + fresh->n;
	next.keys = cur.keys + ds.n;
	next.store_version = store_version;
	ret = sxdp_publish_config(h, &next, -1, -1);
out:
	filter_close(&f);
	sxdp_keys_free(&rest);
	free(ds.d);
	return ret;
}

int sxdp_filter_remove_live(struct sxdp_handle *h, const struct sxdp_keys *gone,
			    const struct sxdp_keys *list, uint64_t store_version)
{
	struct sieve_xdp_config cur, next;
	struct sieve_batch_stats st;
	struct digest_set ds = { 0 };
	struct dfilter f;
	int ret = live_filter(h, &cur, &f, true);

	if (ret)
		return ret;
	ret = list_digests(gone, &cur, &ds.d, &ds.n) ?: minus_others(&ds, list, &cur);
	if (ret == -E2BIG || ret == -ERANGE)
		ret = 1;
	if (!ret)
		ret = apply(f.dev, f.id, SIEVE_BATCH_DELETE, ds.d, ds.n, &st);
	/* A digest that was not there: NAME is not what the store says, rebuilt. */
	if (!ret && st.present != ds.n)
		ret = 1;
	if (ret)
		goto out;
	next = cur;
	next.entries -= next.entries < gone->n ? next.entries : gone->n;
	next.keys -= next.keys < ds.n ? next.keys : ds.n;
	next.store_version = store_version;
	ret = sxdp_publish_config(h, &next, -1, -1);
out:
	filter_close(&f);
	free(ds.d);
	return ret;
}

static int info_of(uint32_t id, struct sieve_info *info)
{
	struct sieve_dev *dev;
	int ret = sieve_dev_open(NULL, false, &dev);

	if (ret)
		return ret;
	ret = sieve_dev_info(dev, id, info);
	sieve_dev_close(dev);
	return ret;
}

int sxdp_filter_name_of(uint32_t id, char *name, size_t len)
{
	struct sieve_info info;
	int ret = info_of(id, &info);

	if (!ret)
		snprintf(name, len, "%s", info.name);
	return ret;
}

/* The list of filters, not INFO: INFO walks the table under its resize lock. */
bool sxdp_filter_gone(const struct sieve_xdp_config *cfg)
{
	struct sieve_list_entry *all = NULL;
	struct sieve_dev *dev;
	bool gone;
	int n, i;

	if (!(cfg->flags & SIEVE_XDP_F_FILTER))
		return false;
	/* No /dev/sieve (sieve.ko unloaded): no filter either. */
	if (sieve_dev_open(NULL, false, &dev))
		return true;
	n = sieve_dev_list_all(dev, &all);
	/* A list that fails says nothing: not gone, as far as anyone knows. */
	gone = n >= 0;
	for (i = 0; i < n && gone; i++)
		gone = all[i].id != cfg->filter.id;
	free(all);
	sieve_dev_close(dev);
	return gone;
}

double sxdp_filter_fpr(uint32_t id, uint64_t *nbits)
{
	struct sieve_info info;

	*nbits = 0;
	if (info_of(id, &info))
		return 0;
	*nbits = info.memory_bytes * 8;
	return info.fpr_ppb / 1e9;
}
