/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Growth sequences of scalable filters, the same on every side: the unit
 * suite runs them on libsieve's local filters, the VM on a /dev/sieve
 * filter and a local one side by side (tests/device/layers_test.c). Each
 * run leaves a trace (what every add answered, at which add each layer
 * came, and each layer's geometry, capacity, rate, items and table), which
 * must be identical across sides and agree with layer_trace_check(): the
 * policy of kmod/layers.h written out again independently, with divisions
 * where the code shifts.
 *
 * Userspace only (libsieve, and the cores it carries for crafting
 * snapshots).
 */
#ifndef SIEVE_TEST_LAYER_SEQS_H
#define SIEVE_TEST_LAYER_SEQS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libsieve.h"
#include "../../kmod/snapshot.h"

/**
 * struct layer_seq - one growth sequence
 * @name: for messages.
 * @type: enum sieve_filter_type.
 * @capacity: of layer 0 (1 when crafted).
 * @fpp_ppb: the filter's target rate.
 * @growth: capacity factor between layers.
 * @max_layers: most layers.
 * @start_layers: 0: a new filter; else imported from a crafted snapshot of
 *	that many full one-key layers of capacity 1.
 * @nkeys: distinct keys then added.
 * @repeat: then the first key added this many times more (copies).
 * @want_layers: layers at the end.
 * @want_enospc: some add must have been refused with -ENOSPC.
 */
struct layer_seq {
	const char *name;
	u32 type;
	u64 capacity;
	u32 fpp_ppb;
	u32 growth;
	u32 max_layers;
	u32 start_layers;
	u32 nkeys;
	u32 repeat;
	u32 want_layers;
	bool want_enospc;
};

#define LS_PCT		10000000U
/* Just under 10^9 < 2^30: layer i's rate, fpp / 2^(i + 1), is 0 from i = 29. */
#define LS_HIGH		999999999U
#define LS_SEED		0x1a7e25U

static const struct layer_seq layer_seqs[] = {
	{ "bloom grows", SIEVE_BLOOM, 100, LS_PCT, 2, 8, 0, 1000, 0, 4, false },
	{ "blocked stops at max_layers", SIEVE_BLOCKED_BLOOM, 100, LS_PCT, 4, 3, 0, 3000, 0, 3,
	  false },
	{ "cuckoo grows", SIEVE_CUCKOO, 100, LS_PCT, 2, 8, 0, 1000, 0, 4, false },
	{ "cuckoo full at max_layers", SIEVE_CUCKOO, 100, LS_PCT, 2, 2, 0, 1000, 0, 2, true },
	/* Copies of one key fill its buckets: -ENOSPC, not a new layer. */
	{ "cuckoo one key 24 times", SIEVE_CUCKOO, 1000, LS_PCT, 2, 8, 0, 1, 23, 1, true },
	{ "cuckoo one key 24 times, grown", SIEVE_CUCKOO, 50, LS_PCT, 2, 8, 0, 120, 23, 2, true },
	/* Layer 31 would need a rate of fpp / 2^32: none (no shift by 32). */
	{ "bloom imported with 31 layers", SIEVE_BLOOM, 1, LS_HIGH, 2, 32, 31, 50, 0, 31, false },
	{ "cuckoo imported with 31 layers", SIEVE_CUCKOO, 1, LS_HIGH, 2, 32, 31, 50, 0, 31, true },
	/* Layers 20 to 28 come; layer 29's rate, fpp / 2^30, is 0. */
	{ "bloom imported with 20 layers", SIEVE_BLOOM, 1, LS_HIGH, 2, 32, 20, 2500, 0, 29, false },
};

/**
 * struct layer_trace - what a run of a sequence left
 * @added: adds that answered 0 (new).
 * @present: adds that answered 1.
 * @enospc: adds refused with -ENOSPC.
 * @other: adds that failed otherwise.
 * @first_enospc: index of the first refused add, or -1.
 * @grew_at: @grew_at[i]: the add at which layer i appeared (i past the
 *	starting layers).
 * @nlayers: layers at the end.
 * @layer: each layer at the end: geometry, capacity, the rate its
 *	geometry gives at that capacity, items, a checksum of its table.
 */
struct layer_trace {
	u32 added, present, enospc, other;
	int first_enospc;
	u32 grew_at[SIEVE_MAX_LAYERS];
	u32 nlayers;
	struct {
		struct sieve_geometry geo;
		u64 capacity;
		u32 rate_ppb;
		u64 items;
		u32 digest;
	} layer[SIEVE_MAX_LAYERS];
};

/* A side a sequence runs on: a local filter, or one behind /dev/sieve. */
struct layer_side {
	const char *name;
	/* A new filter from @p, or from the snapshot file @fd: 0 or -errno. */
	int (*create)(struct layer_side *s, const struct sieve_params *p, int fd);
	int (*add)(struct layer_side *s, const void *key, u32 len);
	/* Layers in use, or -errno. */
	int (*nlayers)(struct layer_side *s);
	/* Writes the filter's snapshot to @fd. */
	int (*save)(struct layer_side *s, int fd);
	void (*destroy)(struct layer_side *s);
};

static u32 ls_key(char *buf, u32 i)
{
	return (u32)snprintf(buf, 32, "layer-key-%u", i);
}

static void *ls_read_fd(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	u8 *buf = end > 0 ? malloc((size_t)end) : NULL;

	if (buf && pread(fd, buf, (size_t)end, 0) != end) {
		free(buf);
		buf = NULL;
	}
	*len = buf ? (size_t)end : 0;
	return buf;
}

/* A tiny full layer of capacity 1 holding key "crafted-@i". */
static struct sieve_filter *ls_crafted_layer(u32 type, u32 i)
{
	struct sieve_geometry g = { .type = type, .seed = LS_SEED };
	struct sieve_filter *f = NULL;
	char key[32];

	if (type == SIEVE_CUCKOO) {
		g.nbuckets = 2;
		g.fp_bits = 8;
	} else {
		g.nbits = type == SIEVE_BLOOM ? 64 : SIEVE_BLOCK_BITS;
		g.nhashes = 1;
	}
	if (sieve_filter_create(&g, &f))
		return NULL;
	sieve_filter_add(f, key, (u32)snprintf(key, sizeof(key), "crafted-%u", i));
	return f;
}

/* The snapshot @q starts from, written to @fd: 0 or -errno. */
static int ls_craft(const struct layer_seq *q, int fd)
{
	struct sieve_snapshot_layer_src src[SIEVE_MAX_LAYERS] = { { 0 } };
	struct sieve_snapshot_header *h;
	u64 bytes, at = sizeof(*h);
	u8 *buf = NULL;
	u32 i;
	int err = -ENOMEM;

	for (i = 0; i < q->start_layers; i++) {
		src[i] = (struct sieve_snapshot_layer_src){ ls_crafted_layer(q->type, i), 1, 1 };
		if (!src[i].filter)
			goto out;
	}
	bytes = sieve_snapshot_bytes(src, q->start_layers);
	buf = calloc(1, bytes);
	if (!buf)
		goto out;
	h = (void *)buf;
	*h = (struct sieve_snapshot_header){
		.create_flags = SIEVE_CREATE_SCALABLE | SIEVE_CREATE_SEED, .type = q->type,
		.nlayers = q->start_layers, .max_layers = q->max_layers, .growth = q->growth,
		.fpp_ppb = q->fpp_ppb, .capacity = 1, .inserted = q->start_layers,
	};
	for (i = 0; i < q->start_layers; i++)
		at += sieve_snapshot_put_layer(&src[i], buf + at);
	sieve_snapshot_seal(buf, bytes);
	err = write(fd, buf, bytes) == (ssize_t)bytes ? 0 : -EIO;
	lseek(fd, 0, SEEK_SET);
out:
	free(buf);
	for (i = 0; i < q->start_layers; i++)
		if (src[i].filter)
			sieve_filter_destroy(src[i].filter);
	return err;
}

/* The layers of a snapshot into @tr. */
static int ls_trace_layers(const u8 *buf, size_t len, struct layer_trace *tr)
{
	const struct sieve_snapshot_header *h = (const void *)buf;
	size_t at = sizeof(*h);
	u32 i;

	if (len < at || h->nlayers > SIEVE_MAX_LAYERS)
		return -EINVAL;
	tr->nlayers = h->nlayers;
	for (i = 0; i < h->nlayers; i++) {
		const struct sieve_snapshot_layer *l = (const void *)(buf + at);

		if (at + sizeof(*l) + l->table_bytes > len)
			return -EINVAL;
		tr->layer[i].geo = l->geo;
		tr->layer[i].capacity = l->capacity;
		tr->layer[i].rate_ppb = sieve_expected_fpr_ppb(&l->geo, l->capacity);
		tr->layer[i].items = l->items;
		tr->layer[i].digest = sieve_snapshot_checksum(0, l + 1, l->table_bytes);
		at += sizeof(*l) + ((l->table_bytes + 7) & ~7ULL);
	}
	return 0;
}

static void ls_record(struct layer_trace *tr, u32 step, int r)
{
	if (r == 0)
		tr->added++;
	else if (r == 1)
		tr->present++;
	else if (r == -ENOSPC)
		tr->enospc++;
	else
		tr->other++;
	if (r == -ENOSPC && tr->first_enospc < 0)
		tr->first_enospc = (int)step;
}

/* Runs @q on @s into @tr: 0, or -errno if the side could not. */
static int layer_run(const struct layer_seq *q, struct layer_side *s, struct layer_trace *tr)
{
	struct sieve_params p = {
		.type = q->type, .flags = SIEVE_CREATE_SCALABLE | SIEVE_CREATE_SEED,
		.capacity = q->capacity, .fpp_ppb = q->fpp_ppb, .seed = LS_SEED,
		.growth = q->growth, .max_layers = q->max_layers,
	};
	FILE *tmp = tmpfile();
	u32 step, have;
	size_t len = 0;
	char key[32];
	u8 *snap = NULL;
	int n, err;

	memset(tr, 0, sizeof(*tr));
	tr->first_enospc = -1;
	if (!tmp)
		return -errno;
	err = q->start_layers ? ls_craft(q, fileno(tmp)) : 0;
	err = err ? err : s->create(s, q->start_layers ? NULL : &p,
				    q->start_layers ? fileno(tmp) : -1);
	if (err)
		goto out;
	have = q->start_layers ? q->start_layers : 1;
	for (step = 0; step < q->nkeys + q->repeat; step++) {
		ls_record(tr, step, s->add(s, key, ls_key(key, step < q->nkeys ? step : 0)));
		n = s->nlayers(s);
		while (n > 0 && have < (u32)n && have < SIEVE_MAX_LAYERS)
			tr->grew_at[have++] = step;
	}
	fclose(tmp);
	tmp = tmpfile();
	err = tmp ? s->save(s, fileno(tmp)) : -errno;
	snap = err ? NULL : ls_read_fd(fileno(tmp), &len);
	err = err ? err : snap ? ls_trace_layers(snap, len, tr) : -EIO;
	s->destroy(s);
out:
	free(snap);
	if (tmp)
		fclose(tmp);
	return err;
}

/* The rate layers.h gives layer @i, as a division: no shift to get wrong. */
static u32 ls_rate(u32 fpp_ppb, u32 i)
{
	return i < 40 ? (u32)(fpp_ppb / (2ULL << i)) : 0;
}

/*
 * @tr against the policy: each layer made by growth has growth times the
 * capacity of the one before, the geometry sizing gives that capacity at
 * the layer's rate, a rate at capacity within it; growth stopped where
 * @q says, and where it stopped short of max_layers, sizing refuses the
 * next layer. Returns what is wrong, or NULL.
 */
static const char *layer_trace_check(const struct layer_seq *q, const struct layer_trace *tr)
{
	static char why[160];
	struct sieve_geometry g;
	u32 i, first = q->start_layers ? q->start_layers : 0;
	u64 cap;

	if (tr->nlayers != q->want_layers || tr->other || (tr->enospc > 0) != q->want_enospc) {
		snprintf(why, sizeof(why), "%u layers, %u refused, %u other errors", tr->nlayers,
			 tr->enospc, tr->other);
		return why;
	}
	for (i = first; i < tr->nlayers; i++) {
		cap = i ? tr->layer[i - 1].capacity * q->growth : q->capacity;
		memset(&g, 0, sizeof(g));
		if (sieve_size(q->type, cap, ls_rate(q->fpp_ppb, i), &g))
			g.type = 0;
		g.seed = LS_SEED;
		if (tr->layer[i].capacity != cap || memcmp(&g, &tr->layer[i].geo, sizeof(g)) ||
		    tr->layer[i].rate_ppb > ls_rate(q->fpp_ppb, i)) {
			snprintf(why, sizeof(why), "layer %u: capacity %llu, rate %u of %u", i,
				 (unsigned long long)tr->layer[i].capacity, tr->layer[i].rate_ppb,
				 ls_rate(q->fpp_ppb, i));
			return why;
		}
	}
	i = tr->nlayers;
	cap = tr->layer[i - 1].capacity * q->growth;
	if (i < q->max_layers && tr->layer[i - 1].items >= tr->layer[i - 1].capacity &&
	    !sieve_size(q->type, cap, ls_rate(q->fpp_ppb, i), &g)) {
		snprintf(why, sizeof(why), "stopped at %u layers, but layer %u can be sized", i, i);
		return why;
	}
	return NULL;
}

/* The first difference between two traces, or NULL. */
static const char *layer_trace_diff(const struct layer_trace *a, const struct layer_trace *b)
{
	static char why[160];
	u32 i;

	if (a->added != b->added || a->present != b->present || a->enospc != b->enospc ||
	    a->other != b->other || a->first_enospc != b->first_enospc) {
		snprintf(why, sizeof(why), "adds new/present/refused/other %u/%u/%u/%u vs %u/%u/%u/%u",
			 a->added, a->present, a->enospc, a->other, b->added, b->present,
			 b->enospc, b->other);
		return why;
	}
	if (a->nlayers != b->nlayers) {
		snprintf(why, sizeof(why), "%u layers vs %u", a->nlayers, b->nlayers);
		return why;
	}
	for (i = 0; i < SIEVE_MAX_LAYERS; i++) {
		if (a->grew_at[i] != b->grew_at[i] ||
		    memcmp(&a->layer[i], &b->layer[i], sizeof(a->layer[i]))) {
			snprintf(why, sizeof(why),
				 "layer %u: came at add %u vs %u, capacity %llu vs %llu, rate %u vs %u",
				 i, a->grew_at[i], b->grew_at[i],
				 (unsigned long long)a->layer[i].capacity,
				 (unsigned long long)b->layer[i].capacity, a->layer[i].rate_ppb,
				 b->layer[i].rate_ppb);
			return why;
		}
	}
	return NULL;
}

/* ---- the local side -------------------------------------------------- */

struct ls_local {
	struct layer_side side;
	struct sieve_local *f;
};

static int ls_local_create(struct layer_side *s, const struct sieve_params *p, int fd)
{
	struct ls_local *l = (struct ls_local *)s;

	return p ? sieve_local_create(p, &l->f) : sieve_local_load(fd, &l->f);
}

static int ls_local_add(struct layer_side *s, const void *key, u32 len)
{
	return sieve_local_add(((struct ls_local *)s)->f, key, len, 0);
}

static int ls_local_nlayers(struct layer_side *s)
{
	struct sieve_info info;
	int err = sieve_local_info(((struct ls_local *)s)->f, &info);

	return err ? err : (int)info.nlayers;
}

static int ls_local_save(struct layer_side *s, int fd)
{
	return sieve_local_save(((struct ls_local *)s)->f, fd);
}

static void ls_local_destroy(struct layer_side *s)
{
	struct ls_local *l = (struct ls_local *)s;

	sieve_local_destroy(l->f);
	l->f = NULL;
}

static inline struct ls_local ls_local_side(void)
{
	return (struct ls_local){ .side = {
		.name = "libsieve", .create = ls_local_create, .add = ls_local_add,
		.nlayers = ls_local_nlayers, .save = ls_local_save, .destroy = ls_local_destroy,
	} };
}

#endif /* SIEVE_TEST_LAYER_SEQS_H */
