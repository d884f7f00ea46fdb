// SPDX-License-Identifier: GPL-2.0
/*
 * The filter backend (attach --backend filter:NAME): the generation's
 * filter is the /dev/sieve filter NAME, which sieve_xdp_filter.bpf.o asks
 * through sieve.ko's kfuncs (the config's max_entries is its id), and
 * which daemons and kernel code can ask too.
 *
 * NAME holds a multiset: the sieve_xdp_digest() of each key of each entry
 * (keyed by the host's secret, which the config carries),
 * every entry expanded on its own (sxdp_expand_each), so that one entry's
 * keys can be deleted without taking another entry's copy of a shared key.
 * The invariant: while the live config's store_version is the store's,
 * NAME holds exactly that multiset under the live probe lengths. Live
 * adds keep it (every type), and so do live removals from a cuckoo
 * filter (each key of each entry that went, deleted once). Anything else
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

/* The digests of @keys under @secret (the filter's keys: 8 bytes, host order); their lengths. */
static int digests(const struct sxdp_list *keys, const __u64 secret[2], uint64_t **d,
		   uint32_t **lens)
{
	size_t i;

	*d = calloc(keys->n, sizeof(**d));
	*lens = calloc(keys->n, sizeof(**lens));
	if (!*d || !*lens) {
		free(*d);
		free(*lens);
		return -ENOMEM;
	}
	for (i = 0; i < keys->n; i++) {
		(*d)[i] = sieve_xdp_digest(&keys->keys[i], secret);
		(*lens)[i] = sizeof(**d);
	}
	return 0;
}

/*
 * One batch of @op over @keys' digests under @secret; *@present (may be
 * NULL): keys that answered 1. A cuckoo add stores another copy of a key
 * it holds.
 */
static int apply(struct sieve_dev *dev, uint32_t id, uint32_t op, const __u64 secret[2],
		 const struct sxdp_list *keys, uint64_t *present)
{
	struct sieve_batch_stats st = { 0 };
	uint32_t *lens;
	uint64_t *d;
	int ret;

	if (present)
		*present = 0;
	if (!keys->n)
		return 0;
	ret = digests(keys, secret, &d, &lens);
	if (ret)
		return ret;
	ret = sieve_dev_batch(dev, id, op, 0, d, lens, keys->n, NULL, &st);
	if (present)
		*present = st.present;
	free(d);
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

/* A new filter like NAME holding @keys under @secret: its id, or -errno (nothing left behind). */
static int build_like(struct dfilter *f, const char *fmt, uint32_t flags, const __u64 secret[2],
		      const struct sxdp_list *keys)
{
	char name[SIEVE_NAME_MAX];
	unsigned int try;
	int id, ret = 0;

	snprintf(name, sizeof(name), fmt, f->id);
	for (try = 0; try < BUILD_TRIES; try++) {
		id = create_like(f, name, flags, keys->n, try);
		if (id < 0)
			return id;
		ret = apply(f->dev, id, SIEVE_BATCH_ADD, secret, keys, NULL);
		if (!ret)
			return id;
		sieve_dev_destroy(f->dev, id);
		if (ret != -ENOSPC || (f->info.create_flags & SIEVE_CREATE_GEOMETRY))
			break;
	}
	return ret;
}

/* Destroys a stand-in left by a killed rebuild, unless the program reads it (@live_id). */
static void drop_standin(struct dfilter *f, uint32_t live_id)
{
	char name[SIEVE_NAME_MAX];
	int id;

	snprintf(name, sizeof(name), STANDIN_NAME_FMT, f->id);
	id = sieve_dev_lookup(f->dev, name);
	if (id > 0 && (uint32_t)id != live_id)
		sieve_dev_destroy(f->dev, id);
}

/* The live probe lengths into @cfg, and @l's kinds and counts. */
static void keep_lengths(struct sieve_xdp_config *cfg, const struct sieve_xdp_config *cur,
			 const struct sxdp_list *l)
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
 * The probe lengths and keys of @l: the live lengths while the program
 * reads NAME (@reads_name) and they still hold the list (no stand-in
 * needed then), else a new plan; *@kept says which.
 */
static int plan(const struct sxdp_list *l, const struct sieve_xdp_config *cur, bool reads_name,
		struct sieve_xdp_config *cfg, struct sxdp_list *keys, bool *kept, char *err,
		size_t errlen)
{
	struct sieve_xdp_config k = *cfg;

	*kept = false;
	if (reads_name && sxdp_max_probes(cur) == sxdp_max_probes(cfg)) {
		keep_lengths(&k, cur, l);
		if (!sxdp_expand_each(l, &k, keys)) {
			*cfg = k;
			*kept = true;
			return 0;
		}
	}
	return sxdp_plan_keys(l, cfg, keys, err, errlen);
}

/* The program reads @id under @cfg from now on (a swap; in place if only bookkeeping moved). */
static int point_at(struct sxdp_handle *h, const struct sieve_xdp_config *cfg, uint32_t id,
		    uint64_t store_version)
{
	struct sieve_xdp_config next = *cfg;

	next.max_entries = id;
	next.store_version = store_version;
	return sxdp_publish_config(h, &next, -1, -1);
}

/* NAME gets @keys' table by exchange, and the program reads it under @cfg. */
static int refill(struct sxdp_handle *h, struct dfilter *f, struct sieve_xdp_config *cfg,
		  const struct sxdp_list *keys, char *err, size_t errlen)
{
	int next = build_like(f, NEXT_NAME_FMT, SIEVE_CREATE_EPHEMERAL, cfg->digest_key, keys), ret;

	if (next < 0) {
		snprintf(err, errlen, "building a filter like %s for %zu keys: %s", f->info.name,
			 keys->n, strerror(-next));
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

/* The stand-in holds @keys and the program reads it under @cfg, at @cur's version. */
static int stand_in(struct sxdp_handle *h, struct dfilter *f, const struct sieve_xdp_config *cfg,
		    const struct sieve_xdp_config *cur, const struct sxdp_list *keys, char *err,
		    size_t errlen)
{
	int id, ret;

	drop_standin(f, 0);
	id = build_like(f, STANDIN_NAME_FMT, 0, cfg->digest_key, keys);
	if (id < 0) {
		snprintf(err, errlen, "building a stand-in for %s: %s", f->info.name,
			 strerror(-id));
		return id;
	}
	/* Not the new version yet: killed from here on, the next command rebuilds. */
	ret = point_at(h, cfg, id, cur->store_version);
	if (ret)
		snprintf(err, errlen, "swapping in the stand-in: %s", strerror(-ret));
	return ret;
}

int sxdp_filter_build(struct sxdp_handle *h, const struct sxdp_build_spec *b, char *err,
		      size_t errlen)
{
	struct sieve_xdp_config cur = { 0 }, cfg = {
		.flags = b->flags, .max_probes = b->max_probes, .fpp_ppb = b->fpp_ppb,
		.store_version = b->store_version,
	};
	struct sxdp_list keys = { 0 };
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
	reads_name = (cur.flags & SIEVE_XDP_F_FILTER) && cur.max_entries == f.id;
	ret = plan(b->list, &cur, reads_name, &cfg, &keys, &kept, err, errlen);
	if (!ret) {
		cfg.keys = keys.n;
		cfg.fpp_ppb = f.info.fpp_ppb;
	}
	/*
	 * New lengths, or a new digest: packets must not see NAME's new table
	 * under the old config, so a stand-in carries them over.
	 */
	if (!ret && reads_name && (!kept || cur.digest != cfg.digest ||
				   memcmp(cur.digest_key, cfg.digest_key, sizeof(cfg.digest_key))))
		ret = stand_in(h, &f, &cfg, &cur, &keys, err, errlen);
	if (!ret)
		ret = refill(h, &f, &cfg, &keys, err, errlen);
	if (!ret)
		drop_standin(&f, f.id);
	filter_close(&f);
	sxdp_list_free(&keys);
	return ret;
}

int sxdp_filter_add_live(const struct sieve_xdp_config *cfg, const struct sxdp_list *keys)
{
	struct sieve_dev *dev;
	int ret;

	if (cfg->digest != SIEVE_XDP_DIGEST)
		return 1;
	ret = sieve_dev_open(NULL, true, &dev);
	if (ret)
		return ret;
	ret = apply(dev, cfg->max_entries, SIEVE_BATCH_ADD, cfg->digest_key, keys, NULL);
	sieve_dev_close(dev);
	/* Full: a bigger table, by a rebuild (the keys added meanwhile are harmless). */
	return ret == -ENOSPC ? 1 : ret;
}

int sxdp_filter_remove_live(struct sxdp_handle *h, const struct sxdp_list *gone,
			    uint64_t store_version)
{
	struct sieve_xdp_config cur, next;
	struct sxdp_list keys = { 0 };
	uint64_t removed;
	struct dfilter f;
	char err[128];
	int ret = sxdp_read_config(h, &cur, NULL);

	if (ret)
		return ret;
	/* Deleting digests of another function would delete nothing, or others' keys. */
	if (!(cur.flags & SIEVE_XDP_F_FILTER) || cur.digest != SIEVE_XDP_DIGEST)
		return 1;
	ret = filter_open(NULL, cur.max_entries, 0, 0, &f, err, sizeof(err));
	if (ret)
		return ret == -ENOENT ? 1 : ret;
	/* Only a cuckoo filter deletes; the others are rebuilt. */
	if (f.info.geo.type != SIEVE_CUCKOO || sxdp_expand_each(gone, &cur, &keys)) {
		ret = 1;
		goto out;
	}
	ret = apply(f.dev, f.id, SIEVE_BATCH_DELETE, cur.digest_key, &keys, &removed);
	/* A key that was not there: NAME is not what the store says, rebuilt. */
	if (!ret && removed != keys.n)
		ret = 1;
	if (ret)
		goto out;
	next = cur;
	next.entries -= next.entries < gone->n ? next.entries : gone->n;
	next.keys -= next.keys < keys.n ? next.keys : keys.n;
	next.store_version = store_version;
	ret = sxdp_publish_config(h, &next, -1, -1);
out:
	filter_close(&f);
	sxdp_list_free(&keys);
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

double sxdp_filter_fpr(uint32_t id, uint64_t *nbits)
{
	struct sieve_info info;

	*nbits = 0;
	if (info_of(id, &info))
		return 0;
	*nbits = info.memory_bytes * 8;
	return info.fpr_ppb / 1e9;
}
