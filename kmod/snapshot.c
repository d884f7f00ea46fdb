// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshots: the one writer and the one reader of the format described in
 * <linux/sieve.h>, for the kernel's export and import and libsieve's files.
 */
#include "create.h"
#include "snapshot.h"

#define HEADER_BYTES	sizeof(struct sieve_snapshot_header)
#define LAYER_BYTES	sizeof(struct sieve_snapshot_layer)
#define CHECKSUM_PIECE	4096

static_assert(sizeof(struct sieve_snapshot_header) == 128);
static_assert(sizeof(struct sieve_snapshot_layer) == 64);

/* Tables travel padded to whole 8-byte words. */
static u64 padded(u64 bytes)
{
	return (bytes + 7) & ~7ULL;
}

u32 sieve_snapshot_checksum(u32 h, const void *data, u64 bytes)
{
	const u8 *p = data;

	while (bytes) {
		u32 piece = min_t(u64, bytes, CHECKSUM_PIECE);

		h = jhash(p, piece, h);
		p += piece;
		bytes -= piece;
		if (((uintptr_t)p & (SZ_1M - 1)) < CHECKSUM_PIECE)
			cond_resched();
	}
	return h;
}

u64 sieve_snapshot_bytes(const struct sieve_snapshot_layer_src *layers, u32 nlayers)
{
	u64 bytes = HEADER_BYTES;
	u32 i;

	/* At most SIEVE_MAX_LAYERS tables of at most 1 GiB: no overflow. */
	for (i = 0; i < nlayers; i++)
		bytes += LAYER_BYTES + padded(layers[i].filter->table_bytes);
	return bytes;
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_bytes, SIEVE_INTERNAL_NS);

static void copy_table(u8 *to, const u8 *from, u64 bytes)
{
	while (bytes) {
		size_t chunk = min_t(u64, bytes, SZ_1M);

		memcpy(to, from, chunk);
		to += chunk;
		from += chunk;
		bytes -= chunk;
		cond_resched();
	}
}

u64 sieve_snapshot_put_layer(const struct sieve_snapshot_layer_src *src, void *out)
{
	const struct sieve_filter *f = src->filter;
	struct sieve_snapshot_layer *l = out;
	u8 *table = (u8 *)(l + 1);

	memset(l, 0, sizeof(*l));
	l->geo = f->geo;
	l->capacity = src->capacity;
	l->items = src->items;
	l->table_bytes = f->table_bytes;
	if (f->ops->save_state)
		f->ops->save_state(f, l);
	copy_table(table, f->table, f->table_bytes);
	memset(table + f->table_bytes, 0, padded(f->table_bytes) - f->table_bytes);
	return LAYER_BYTES + padded(f->table_bytes);
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_put_layer, SIEVE_INTERNAL_NS);

/*
 * The checksum of a whole snapshot in memory, its own field read as 0.
 * Layer sizes are read from the buffer, so they are clamped to it.
 */
u32 sieve_snapshot_buffer_checksum(const void *buf, u64 bytes)
{
	struct sieve_snapshot_header hdr;
	const u8 *p = buf;
	u64 at = HEADER_BYTES;
	u32 h;

	memcpy(&hdr, buf, sizeof(hdr));
	hdr.checksum = 0;
	h = sieve_snapshot_checksum(SIEVE_SNAPSHOT_MAGIC, &hdr, sizeof(hdr));
	while (at + LAYER_BYTES <= bytes) {
		const struct sieve_snapshot_layer *l = (const void *)(p + at);
		u64 left = bytes - at - LAYER_BYTES;
		u64 table = min(l->table_bytes, left);
		u64 pad = min(padded(table) - table, left - table);

		h = sieve_snapshot_checksum(h, l, LAYER_BYTES);
		h = sieve_snapshot_checksum(h, l + 1, table);
		h = sieve_snapshot_checksum(h, (const u8 *)(l + 1) + table, pad);
		at += LAYER_BYTES + table + pad;
	}
	return h;
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_buffer_checksum, SIEVE_INTERNAL_NS);

void sieve_snapshot_seal(void *buf, u64 bytes)
{
	struct sieve_snapshot_header *hdr = buf;

	hdr->magic = SIEVE_SNAPSHOT_MAGIC;
	hdr->version = SIEVE_SNAPSHOT_VERSION;
	hdr->header_bytes = HEADER_BYTES;
	hdr->payload_bytes = bytes - HEADER_BYTES;
	hdr->checksum = sieve_snapshot_buffer_checksum(buf, bytes);
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_seal, SIEVE_INTERNAL_NS);

/*
 * Reading. Stages of the stream; each part is checked when its last byte
 * arrives, before anything that depends on it is allocated.
 */
enum {
	STAGE_HEADER,
	STAGE_LAYER,
	STAGE_TABLE,
	STAGE_DONE,
};

#define SNAPSHOT_FLAGS	(SIEVE_CREATE_SCALABLE | SIEVE_CREATE_GEOMETRY | SIEVE_CREATE_SEED)

static bool zeroes(const void *p, size_t bytes)
{
	const u8 *b = p;

	while (bytes--)
		if (*b++)
			return false;
	return true;
}

/*
 * What the filter was made with must pass the create contract, with its
 * layering as made (defaults resolved): a header no filter could have had
 * is corrupt.
 */
static bool made_valid(const struct sieve_snapshot_header *h)
{
	struct sieve_create_spec spec = {
		.type = h->type,
		.flags = h->create_flags,
		.capacity = h->capacity,
		.fpp_ppb = h->fpp_ppb,
	};

	return !sieve_create_check(&spec) &&
	       !sieve_layering_check(h->create_flags, h->growth, h->max_layers) &&
	       h->nlayers >= 1 && h->nlayers <= h->max_layers;
}

static int check_header(const struct sieve_snapshot_header *h)
{
	u64 max_payload = (u64)h->nlayers * (LAYER_BYTES + SIEVE_MAX_TABLE_BYTES);

	/* Another version hashes keys to other bits: no table of it can be used. */
	if (h->magic == SIEVE_SNAPSHOT_MAGIC && h->version != SIEVE_SNAPSHOT_VERSION)
		return -ENOEXEC;
	if (h->magic != SIEVE_SNAPSHOT_MAGIC || h->header_bytes != HEADER_BYTES ||
	    (h->create_flags & ~SNAPSHOT_FLAGS) ||
	    !zeroes(h->__reserved, sizeof(h->__reserved)) || !made_valid(h))
		return -EINVAL;
	if (h->payload_bytes < h->nlayers * LAYER_BYTES || h->payload_bytes > max_payload ||
	    h->payload_bytes % 8)
		return -EINVAL;
	return 0;
}

/*
 * Bytes of the announced payload from stream offset @at on, 0 past its end:
 * the only bytes that were reserved, so nothing may be allocated beyond them.
 */
static u64 payload_from(const struct sieve_snapshot_reader *r, u64 at)
{
	u64 end = HEADER_BYTES + r->hdr.payload_bytes;

	return at < end ? end - at : 0;
}

/*
 * A layer (its header, which has just arrived, and its padded table) fits
 * in what remains of the payload, leaving room for the headers of the
 * layers still announced: checked before its table is allocated.
 */
static bool layer_fits(const struct sieve_snapshot_reader *r, u64 table_bytes)
{
	u64 later = (u64)(r->hdr.nlayers - r->nlayers - 1) * LAYER_BYTES;

	return LAYER_BYTES + padded(table_bytes) + later <=
	       payload_from(r, r->offset - LAYER_BYTES);
}

static int check_layer(const struct sieve_snapshot_reader *r)
{
	const struct sieve_snapshot_layer *l = &r->layer_hdr;
	const struct sieve_snapshot_header *h = &r->hdr;
	u64 table_bytes;
	int err;

	if (l->geo.type != h->type ||
	    (r->nlayers && l->geo.seed != r->layers[0].filter->geo.seed))
		return -EINVAL;
	err = sieve_geometry_check(&l->geo, &table_bytes);
	if (err)
		return err;
	if (l->table_bytes != table_bytes || !layer_fits(r, table_bytes))
		return -EINVAL;
	if (!l->capacity != !!(h->create_flags & SIEVE_CREATE_GEOMETRY) ||
	    l->capacity > SIEVE_MAX_CAPACITY)
		return -EINVAL;
	/* The victim slot is cuckoo state; the cuckoo core checks its range. */
	if (h->type != SIEVE_CUCKOO && (l->victim_fp || l->victim_bucket))
		return -EINVAL;
	return 0;
}

void sieve_snapshot_reader_init(struct sieve_snapshot_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->stage = STAGE_HEADER;
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_reader_init, SIEVE_INTERNAL_NS);

void *sieve_snapshot_reader_window(struct sieve_snapshot_reader *r, u64 *len)
{
	struct sieve_filter *f;

	switch (r->stage) {
	case STAGE_HEADER:
		*len = HEADER_BYTES - r->part_done;
		return (u8 *)&r->hdr + r->part_done;
	case STAGE_LAYER:
		*len = LAYER_BYTES - r->part_done;
		return (u8 *)&r->layer_hdr + r->part_done;
	case STAGE_TABLE:
		f = r->layers[r->nlayers - 1].filter;
		if (r->part_done < f->table_bytes) {
			*len = f->table_bytes - r->part_done;
			return (u8 *)f->table + r->part_done;
		}
		*len = padded(f->table_bytes) - r->part_done;
		return (u8 *)&r->pad + (r->part_done - f->table_bytes);
	default:
		*len = 0;
		return NULL;
	}
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_reader_window, SIEVE_INTERNAL_NS);

static int header_done(struct sieve_snapshot_reader *r)
{
	struct sieve_snapshot_header hdr = r->hdr;
	int err = check_header(&r->hdr);

	if (err)
		return err;
	hdr.checksum = 0;
	r->sum = sieve_snapshot_checksum(SIEVE_SNAPSHOT_MAGIC, &hdr, sizeof(hdr));
	r->stage = STAGE_LAYER;
	return 0;
}

static int layer_done(struct sieve_snapshot_reader *r)
{
	struct sieve_snapshot_layer_src *src = &r->layers[r->nlayers];
	int err = check_layer(r);

	if (err)
		return err;
	err = sieve_filter_create(&r->layer_hdr.geo, &src->filter);
	if (err)
		return err;
	src->capacity = r->layer_hdr.capacity;
	src->items = r->layer_hdr.items;
	r->nlayers++;
	r->sum = sieve_snapshot_checksum(r->sum, &r->layer_hdr, LAYER_BYTES);
	r->stage = STAGE_TABLE;
	return 0;
}

/* A table and its padding have arrived. */
static int table_done(struct sieve_snapshot_reader *r)
{
	struct sieve_filter *f = r->layers[r->nlayers - 1].filter;
	u64 pad = padded(f->table_bytes) - f->table_bytes;
	int err;

	if (r->pad)
		return -EINVAL;
	r->sum = sieve_snapshot_checksum(r->sum, f->table, f->table_bytes);
	r->sum = sieve_snapshot_checksum(r->sum, &r->pad, pad);
	if (f->ops->load_state) {
		err = f->ops->load_state(f, &r->layer_hdr);
		if (err)
			return err;
	}
	if (r->nlayers < r->hdr.nlayers) {
		r->stage = STAGE_LAYER;
		return 0;
	}
	if (payload_from(r, r->offset) || r->sum != r->hdr.checksum)
		return -EINVAL;
	r->stage = STAGE_DONE;
	return 0;
}

static int part_done(struct sieve_snapshot_reader *r)
{
	switch (r->stage) {
	case STAGE_HEADER:
		return header_done(r);
	case STAGE_LAYER:
		return layer_done(r);
	default:
		return table_done(r);
	}
}

int sieve_snapshot_reader_advance(struct sieve_snapshot_reader *r, u64 n)
{
	u64 len;
	int err;

	if (!sieve_snapshot_reader_window(r, &len) || n > len)
		return -EINVAL;
	r->part_done += n;
	r->offset += n;
	if (n < len)
		return 0;
	r->part_done = 0;
	err = part_done(r);
	if (err)
		r->stage = STAGE_DONE + 1;	/* broken: accepts nothing more */
	return err;
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_reader_advance, SIEVE_INTERNAL_NS);

bool sieve_snapshot_reader_has_header(const struct sieve_snapshot_reader *r)
{
	return r->stage > STAGE_HEADER && r->stage <= STAGE_DONE;
}

bool sieve_snapshot_reader_done(const struct sieve_snapshot_reader *r)
{
	return r->stage == STAGE_DONE;
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_reader_done, SIEVE_INTERNAL_NS);

void sieve_snapshot_reader_take(struct sieve_snapshot_reader *r,
				struct sieve_snapshot_layer_src *out)
{
	memcpy(out, r->layers, r->nlayers * sizeof(*out));
	memset(r->layers, 0, sizeof(r->layers));
	r->nlayers = 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_reader_take, SIEVE_INTERNAL_NS);

void sieve_snapshot_reader_release(struct sieve_snapshot_reader *r)
{
	u32 i;

	for (i = 0; i < r->nlayers; i++)
		sieve_filter_destroy(r->layers[i].filter);
	r->nlayers = 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_snapshot_reader_release, SIEVE_INTERNAL_NS);
