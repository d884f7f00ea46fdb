// SPDX-License-Identifier: GPL-2.0
/*
 * Test cases of the snapshot format (kmod/snapshot.c), shared like
 * core_cases.c: run under cmocka in userspace and inside the kernel in the
 * VM. A snapshot is written with the writer, then fed to the reader in
 * uneven pieces; corrupted copies must be refused with -EINVAL at the part
 * that is wrong, and every good one must give back the same tables.
 */
#include "harness.h"
#include "../../kmod/snapshot.h"

#define SC_SEED		0x5eed0101U
#define HDR(buf)	((struct sieve_snapshot_header *)(buf))
#define LAYER(buf)	((struct sieve_snapshot_layer *)((buf) + sizeof(struct sieve_snapshot_header)))
#define SC_KEYS		3000

/* Key @i: 8 bytes, distinct for distinct @i. */
static u64 sc_key(u32 i)
{
	return sieve_test_mix64(0x5c00000000ULL + i);
}

static u32 sc_add_keys(struct sieve_filter *f, u32 n)
{
	u32 i, stored = 0;

	for (i = 0; i < n; i++) {
		u64 k = sc_key(i);

		if (sieve_filter_add(f, &k, sizeof(k)) < 0)
			break;
		stored++;
	}
	return stored;
}

static u32 sc_found(const struct sieve_filter *f, u32 n)
{
	u32 i, found = 0;

	for (i = 0; i < n; i++) {
		u64 k = sc_key(i);

		found += sieve_filter_contains(f, &k, sizeof(k));
	}
	return found;
}

static struct sieve_geometry sc_geo(u32 type)
{
	struct sieve_geometry g = { .type = type, .seed = SC_SEED };

	switch (type) {
	case SIEVE_BLOOM:
		g.nbits = 30011;	/* not a multiple of 64: a tail to check */
		g.nhashes = 5;
		break;
	case SIEVE_BLOCKED_BLOOM:
		g.nbits = 64 * SIEVE_BLOCK_BITS;
		g.nhashes = 6;
		break;
	default:
		g.nbuckets = 1024;
		g.fp_bits = 13;		/* odd: packed buckets */
		break;
	}
	return g;
}

/* A sealed one-layer snapshot of @f, as the kernel's export makes it. */
static u8 *sc_write(const struct sieve_filter *f, u64 items, u64 *bytes)
{
	struct sieve_snapshot_layer_src src = {
		.filter = (struct sieve_filter *)f, .capacity = 0, .items = items,
	};
	struct sieve_snapshot_header *hdr;
	u8 *buf;

	*bytes = sieve_snapshot_bytes(&src, 1);
	buf = sieve_zalloc(*bytes);
	if (!buf)
		return NULL;
	hdr = (void *)buf;
	hdr->create_flags = SIEVE_CREATE_GEOMETRY;
	hdr->type = f->geo.type;
	hdr->nlayers = 1;
	hdr->max_layers = 1;
	hdr->inserted = items;
	sieve_snapshot_put_layer(&src, buf + sizeof(*hdr));
	sieve_snapshot_seal(buf, *bytes);
	return buf;
}

/*
 * Feeds @bytes of @buf in pieces of 1, 7, 61, 4099 ... bytes. Returns the
 * first error, or 0; *@done tells whether the reader finished. On success
 * the reader still holds the layers: the caller releases it.
 */
static int sc_feed(struct sieve_snapshot_reader *r, const u8 *buf, u64 bytes, bool *done)
{
	static const u32 pieces[] = { 1, 7, 61, 4099, 100000 };
	u64 at = 0;
	u32 p = 0;
	int err = 0;

	sieve_snapshot_reader_init(r);
	while (at < bytes && !err) {
		u64 room, n;
		void *win = sieve_snapshot_reader_window(r, &room);

		if (!win)
			return -EINVAL;		/* bytes past the end */
		n = min(min((u64)pieces[p++ % ARRAY_SIZE(pieces)], room), bytes - at);
		memcpy(win, buf + at, n);
		err = sieve_snapshot_reader_advance(r, n);
		at += n;
	}
	*done = sieve_snapshot_reader_done(r);
	return err;
}

/* Reads @buf back; 0 and a filter equal to @f, or the reader's error. */
static int sc_read_check(struct sieve_test *t, const u8 *buf, u64 bytes,
			 const struct sieve_filter *f)
{
	struct sieve_snapshot_reader *r = sieve_zalloc(sizeof(*r));
	struct sieve_snapshot_layer_src got;
	bool done;
	int err;

	if (!r)
		return -ENOMEM;
	err = sc_feed(r, buf, bytes, &done);
	if (!err && !done)
		err = -EAGAIN;	/* no error, but not complete either */
	if (!err && f) {
		sieve_snapshot_reader_take(r, &got);
		EXPECT_EQ(t, got.filter->table_bytes, f->table_bytes);
		EXPECT_TRUE(t, !memcmp(got.filter->table, f->table, f->table_bytes));
		EXPECT_EQ(t, sieve_filter_estimate_items(got.filter),
			  sieve_filter_estimate_items(f));
		EXPECT_EQ(t, sc_found(got.filter, SC_KEYS), sc_found(f, SC_KEYS));
		sieve_filter_destroy(got.filter);
	}
	sieve_snapshot_reader_release(r);
	sieve_free(r);
	return err;
}

static struct sieve_filter *sc_filled(struct sieve_test *t, u32 type, u32 nkeys)
{
	struct sieve_geometry g = sc_geo(type);
	struct sieve_filter *f = NULL;

	EXPECT_EQ(t, sieve_filter_create(&g, &f), 0);
	if (f)
		sc_add_keys(f, nkeys);
	return f;
}

static void sc_check_round_trip(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = sc_filled(t, type, SC_KEYS);
	u64 bytes;
	u8 *buf;

	if (!f)
		return;
	buf = sc_write(f, SC_KEYS, &bytes);
	EXPECT_TRUE(t, buf != NULL);
	if (buf) {
		EXPECT_EQ(t, bytes % 8, 0);
		EXPECT_EQ(t, sc_read_check(t, buf, bytes, f), 0);
		sieve_free(buf);
	}
	sieve_filter_destroy(f);
}

static void sieve_test_snapshot_round_trip_bloom(struct sieve_test *t)
{
	sc_check_round_trip(t, SIEVE_BLOOM);
}

static void sieve_test_snapshot_round_trip_blocked(struct sieve_test *t)
{
	sc_check_round_trip(t, SIEVE_BLOCKED_BLOOM);
}

static void sieve_test_snapshot_round_trip_cuckoo(struct sieve_test *t)
{
	sc_check_round_trip(t, SIEVE_CUCKOO);
}

/* A full cuckoo table keeps its parked fingerprint across a snapshot. */
static void sieve_test_snapshot_cuckoo_victim_survives(struct sieve_test *t)
{
	struct sieve_filter *f = sc_filled(t, SIEVE_CUCKOO, 8000);
	struct sieve_snapshot_reader *r = sieve_zalloc(sizeof(*r));
	struct sieve_snapshot_layer_src got = { 0 };
	u64 bytes, k = sc_key(9999);
	u32 stored;
	bool done;
	u8 *buf;

	if (!f || !r)
		goto out;
	stored = sc_found(f, 8000);
	/* 1024 buckets of 4 hold at most 4096 (+1 parked): it is full. */
	EXPECT_EQ(t, sieve_filter_add(f, &k, sizeof(k)), -ENOSPC);
	buf = sc_write(f, 0, &bytes);
	if (!buf)
		goto out;
	EXPECT_EQ(t, sc_feed(r, buf, bytes, &done), 0);
	EXPECT_TRUE(t, done);
	if (done) {
		sieve_snapshot_reader_take(r, &got);
		EXPECT_EQ(t, sc_found(got.filter, 8000), stored);
		EXPECT_EQ(t, sieve_filter_add(got.filter, &k, sizeof(k)), -ENOSPC);
		sieve_filter_destroy(got.filter);
	}
	sieve_free(buf);
out:
	if (r)
		sieve_snapshot_reader_release(r);
	sieve_free(r);
	if (f)
		sieve_filter_destroy(f);
}

/*
 * Applies @corrupt to a copy of a good snapshot of @type, reseals it when
 * @reseal (so the checksum is right and the content check is what fails),
 * and expects the reader to refuse it.
 */
static void sc_expect_refused(struct sieve_test *t, u32 type,
			      void (*corrupt)(u8 *buf, u64 bytes), bool reseal, int err)
{
	struct sieve_filter *f = sc_filled(t, type, 500);
	u64 bytes;
	u8 *buf;

	if (!f)
		return;
	buf = sc_write(f, 500, &bytes);
	if (buf) {
		corrupt(buf, bytes);
		if (reseal)
			HDR(buf)->checksum = sieve_snapshot_buffer_checksum(buf, bytes);
		EXPECT_EQ(t, sc_read_check(t, buf, bytes, NULL), err);
		sieve_free(buf);
	}
	sieve_filter_destroy(f);
}

static void bad_magic(u8 *b, u64 n)		{ HDR(b)->magic ^= 1; }
static void old_version(u8 *b, u64 n)		{ HDR(b)->version = SIEVE_SNAPSHOT_VERSION - 1; }
static void new_version(u8 *b, u64 n)		{ HDR(b)->version = SIEVE_SNAPSHOT_VERSION + 1; }
static void bad_header_bytes(u8 *b, u64 n)	{ HDR(b)->header_bytes = 120; }
static void bad_flag_ephemeral(u8 *b, u64 n)	{ HDR(b)->create_flags |= SIEVE_CREATE_EPHEMERAL; }
static void bad_flag_unknown(u8 *b, u64 n)	{ HDR(b)->create_flags |= 1U << 20; }
static void bad_type_zero(u8 *b, u64 n)		{ HDR(b)->type = 0; }
static void bad_type_high(u8 *b, u64 n)		{ HDR(b)->type = 4; }
static void bad_nlayers_zero(u8 *b, u64 n)	{ HDR(b)->nlayers = 0; }
static void bad_nlayers_two(u8 *b, u64 n)	{ HDR(b)->nlayers = 2; }
static void bad_max_layers(u8 *b, u64 n)	{ HDR(b)->max_layers = 2; }
static void bad_growth(u8 *b, u64 n)		{ HDR(b)->growth = 2; }
static void bad_fpp(u8 *b, u64 n)		{ HDR(b)->fpp_ppb = 1000; }
static void bad_capacity(u8 *b, u64 n)		{ HDR(b)->capacity = 100; }
static void bad_payload_short(u8 *b, u64 n)	{ HDR(b)->payload_bytes -= 8; }
static void bad_payload_long(u8 *b, u64 n)	{ HDR(b)->payload_bytes += 8; }
static void bad_payload_odd(u8 *b, u64 n)	{ HDR(b)->payload_bytes += 1; }
static void bad_reserved(u8 *b, u64 n)		{ HDR(b)->__reserved[10] = 1; }
static void bad_checksum(u8 *b, u64 n)		{ HDR(b)->checksum ^= 0x100; }
static void bad_counter(u8 *b, u64 n)		{ HDR(b)->hits += 1; }
static void bad_table_byte(u8 *b, u64 n)	{ b[n - 64] ^= 0x10; }
static void bad_layer_type(u8 *b, u64 n)	{ LAYER(b)->geo.type ^= 3; }
static void bad_layer_nhashes(u8 *b, u64 n)	{ LAYER(b)->geo.nhashes = 33; }
static void bad_layer_table_bytes(u8 *b, u64 n)	{ LAYER(b)->table_bytes += 8; }
static void bad_layer_capacity(u8 *b, u64 n)	{ LAYER(b)->capacity = 10; }
static void bad_layer_victim(u8 *b, u64 n)	{ LAYER(b)->victim_fp = 1; }

/* A resealed header that says what fields cannot: refused at the header. */
static void sieve_test_snapshot_refuses_bad_header(struct sieve_test *t)
{
	static void (*const bad[])(u8 *, u64) = {
		bad_magic, bad_header_bytes, bad_flag_ephemeral,
		bad_flag_unknown, bad_type_zero, bad_type_high, bad_nlayers_zero,
		bad_nlayers_two, bad_max_layers, bad_growth, bad_fpp, bad_capacity,
		bad_payload_short, bad_payload_long, bad_payload_odd, bad_reserved,
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		sc_expect_refused(t, SIEVE_BLOOM, bad[i], false, -EINVAL);
		sc_expect_refused(t, SIEVE_BLOOM, bad[i], true, -EINVAL);
	}
}

/*
 * Version 1 (two jhash passes, Floyd's patterns) and any later one hash
 * keys to other bits: refused as such, before the checksum is read, with
 * an errno of its own, so tools can say why.
 */
static void sieve_test_snapshot_refuses_other_version(struct sieve_test *t)
{
	u32 type;

	for (type = SIEVE_BLOOM; type <= SIEVE_CUCKOO; type++) {
		sc_expect_refused(t, type, old_version, false, -ENOEXEC);
		sc_expect_refused(t, type, old_version, true, -ENOEXEC);
		sc_expect_refused(t, type, new_version, true, -ENOEXEC);
	}
}

static void sieve_test_snapshot_refuses_bad_layer(struct sieve_test *t)
{
	static void (*const bad[])(u8 *, u64) = {
		bad_layer_type, bad_layer_nhashes, bad_layer_table_bytes,
		bad_layer_capacity, bad_layer_victim,
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		sc_expect_refused(t, SIEVE_BLOOM, bad[i], true, -EINVAL);
}

/* Any byte that changes without a new checksum is caught at the end. */
static void sieve_test_snapshot_refuses_bad_checksum(struct sieve_test *t)
{
	sc_expect_refused(t, SIEVE_BLOOM, bad_checksum, false, -EINVAL);
	sc_expect_refused(t, SIEVE_BLOOM, bad_counter, false, -EINVAL);
	sc_expect_refused(t, SIEVE_BLOOM, bad_table_byte, false, -EINVAL);
	sc_expect_refused(t, SIEVE_CUCKOO, bad_table_byte, false, -EINVAL);
	sc_expect_refused(t, SIEVE_BLOCKED_BLOOM, bad_table_byte, false, -EINVAL);
}

/* Bloom: bits past nbits are never set by an add, so a table with one lies. */
static void bloom_tail_bit(u8 *b, u64 n)
{
	struct sieve_snapshot_layer *l = LAYER(b);
	u8 *table = (u8 *)(l + 1);

	table[l->table_bytes - 1] |= 0x80;
}

static void sieve_test_snapshot_refuses_bloom_tail_bits(struct sieve_test *t)
{
	sc_expect_refused(t, SIEVE_BLOOM, bloom_tail_bit, true, -EINVAL);
}

static void cuckoo_pad_byte(u8 *b, u64 n)
{
	struct sieve_snapshot_layer *l = LAYER(b);

	((u8 *)(l + 1))[l->table_bytes - 1] = 1;
}

static void cuckoo_items_wrong(u8 *b, u64 n)	{ LAYER(b)->items += 1; }
static void cuckoo_victim_fp_wide(u8 *b, u64 n)	{ LAYER(b)->victim_fp = 1U << 13; }
static void cuckoo_victim_bucket_out(u8 *b, u64 n)
{
	LAYER(b)->victim_fp = 5;
	LAYER(b)->victim_bucket = 1024;
	LAYER(b)->items += 1;
}

static void cuckoo_victim_bucket_alone(u8 *b, u64 n)	{ LAYER(b)->victim_bucket = 3; }

static void sieve_test_snapshot_refuses_bad_cuckoo_state(struct sieve_test *t)
{
	sc_expect_refused(t, SIEVE_CUCKOO, cuckoo_pad_byte, true, -EINVAL);
	sc_expect_refused(t, SIEVE_CUCKOO, cuckoo_items_wrong, true, -EINVAL);
	sc_expect_refused(t, SIEVE_CUCKOO, cuckoo_victim_fp_wide, true, -EINVAL);
	sc_expect_refused(t, SIEVE_CUCKOO, cuckoo_victim_bucket_out, true, -EINVAL);
	sc_expect_refused(t, SIEVE_CUCKOO, cuckoo_victim_bucket_alone, true, -EINVAL);
}

/* A snapshot cut short is not complete; one with bytes past its end fails. */
static void sieve_test_snapshot_truncated_and_trailing(struct sieve_test *t)
{
	struct sieve_filter *f = sc_filled(t, SIEVE_CUCKOO, 500);
	u64 bytes;
	u8 *buf, *longer;

	if (!f)
		return;
	buf = sc_write(f, 0, &bytes);
	longer = sieve_zalloc(bytes + 8);
	if (buf && longer) {
		EXPECT_EQ(t, sc_read_check(t, buf, bytes - 1, NULL), -EAGAIN);
		EXPECT_EQ(t, sc_read_check(t, buf, 100, NULL), -EAGAIN);
		memcpy(longer, buf, bytes);
		EXPECT_EQ(t, sc_read_check(t, longer, bytes + 8, NULL), -EINVAL);
	}
	sieve_free(longer);
	sieve_free(buf);
	sieve_filter_destroy(f);
}

/* Two layers, as a scalable filter has: each comes back with its own table. */
static void sieve_test_snapshot_two_layers(struct sieve_test *t)
{
	struct sieve_geometry g2 = sc_geo(SIEVE_BLOOM);
	struct sieve_filter *f1 = sc_filled(t, SIEVE_BLOOM, 1000), *f2 = NULL;
	struct sieve_snapshot_layer_src src[2], got[2];
	struct sieve_snapshot_reader *r = sieve_zalloc(sizeof(*r));
	struct sieve_snapshot_header *hdr;
	u64 bytes, at;
	bool done;
	u8 *buf = NULL;

	g2.nbits *= 2;
	EXPECT_EQ(t, sieve_filter_create(&g2, &f2), 0);
	if (!f1 || !f2 || !r)
		goto out;
	sc_add_keys(f2, 100);
	src[0] = (struct sieve_snapshot_layer_src){ f1, 1000, 1000 };
	src[1] = (struct sieve_snapshot_layer_src){ f2, 2000, 100 };
	bytes = sieve_snapshot_bytes(src, 2);
	buf = sieve_zalloc(bytes);
	if (!buf)
		goto out;
	hdr = (void *)buf;
	*hdr = (struct sieve_snapshot_header){
		.create_flags = SIEVE_CREATE_SCALABLE, .type = SIEVE_BLOOM, .nlayers = 2,
		.max_layers = 4, .growth = 2, .fpp_ppb = 10000000, .capacity = 1000,
	};
	at = sizeof(*hdr);
	at += sieve_snapshot_put_layer(&src[0], buf + at);
	at += sieve_snapshot_put_layer(&src[1], buf + at);
	EXPECT_EQ(t, at, bytes);
	sieve_snapshot_seal(buf, bytes);
	EXPECT_EQ(t, sc_feed(r, buf, bytes, &done), 0);
	EXPECT_TRUE(t, done);
	EXPECT_EQ(t, r->nlayers, 2);
	if (done && r->nlayers == 2) {
		sieve_snapshot_reader_take(r, got);
		EXPECT_EQ(t, got[1].capacity, 2000);
		EXPECT_EQ(t, got[1].items, 100);
		EXPECT_TRUE(t, !memcmp(got[0].filter->table, f1->table, f1->table_bytes));
		EXPECT_TRUE(t, !memcmp(got[1].filter->table, f2->table, f2->table_bytes));
		sieve_filter_destroy(got[0].filter);
		sieve_filter_destroy(got[1].filter);
	}
out:
	sieve_free(buf);
	if (r)
		sieve_snapshot_reader_release(r);
	sieve_free(r);
	if (f1)
		sieve_filter_destroy(f1);
	if (f2)
		sieve_filter_destroy(f2);
}

/*
 * A scalable snapshot of SC_LAYERS Bloom layers, sealed, with room for one
 * more layer header after it (*@bytes does not count that room).
 */
#define SC_LAYERS	3
static u8 *sc_write_layers(struct sieve_filter **f, u64 *bytes)
{
	struct sieve_snapshot_layer_src src[SC_LAYERS];
	struct sieve_snapshot_header *hdr;
	u64 at = sizeof(*hdr);
	u8 *buf;
	u32 i;

	for (i = 0; i < SC_LAYERS; i++)
		src[i] = (struct sieve_snapshot_layer_src){ f[i], 1000, 100 };
	*bytes = sieve_snapshot_bytes(src, SC_LAYERS);
	buf = sieve_zalloc(*bytes + sizeof(struct sieve_snapshot_layer));
	if (!buf)
		return NULL;
	hdr = (void *)buf;
	*hdr = (struct sieve_snapshot_header){
		.create_flags = SIEVE_CREATE_SCALABLE, .type = SIEVE_BLOOM,
		.nlayers = SC_LAYERS, .max_layers = 8, .growth = 2,
		.fpp_ppb = 10000000, .capacity = 1000,
	};
	for (i = 0; i < SC_LAYERS; i++)
		at += sieve_snapshot_put_layer(&src[i], buf + at);
	sieve_snapshot_seal(buf, *bytes);
	return buf;
}

/* Offset of layer @i's header in a snapshot of sc_write_layers(). */
static u64 sc_layer_at(const struct sieve_filter *f, u32 i)
{
	return sizeof(struct sieve_snapshot_header) +
	       i * (sizeof(struct sieve_snapshot_layer) + f->table_bytes);
}

/*
 * Feeds @bytes of @buf whole and expects -EINVAL with at most @held layers
 * allocated: a layer running past the payload must be refused at its
 * header, before its table exists (only the payload was reserved).
 */
static void sc_expect_refused_at(struct sieve_test *t, const u8 *buf, u64 bytes, u32 held)
{
	struct sieve_snapshot_reader *r = sieve_zalloc(sizeof(*r));
	bool done;

	if (!r)
		return;
	EXPECT_EQ(t, sc_feed(r, buf, bytes, &done), -EINVAL);
	EXPECT_TRUE(t, r->nlayers <= held);
	sieve_snapshot_reader_release(r);
	sieve_free(r);
}

/* Layer headers, counts and sizes that run past the announced payload. */
static void sieve_test_snapshot_refuses_layers_past_payload(struct sieve_test *t)
{
	struct sieve_filter *f[SC_LAYERS] = { NULL };
	struct sieve_snapshot_layer *extra;
	u64 bytes, last, two;
	u8 *buf = NULL;
	u32 i;

	for (i = 0; i < SC_LAYERS; i++)
		f[i] = sc_filled(t, SIEVE_BLOOM, 100);
	if (!f[0] || !f[1] || !f[2])
		goto out;
	buf = sc_write_layers(f, &bytes);
	if (!buf)
		goto out;
	last = sc_layer_at(f[0], SC_LAYERS - 1);
	two = last - sizeof(struct sieve_snapshot_header);
	/* The untouched snapshot reads back: the cases below differ only where said. */
	EXPECT_EQ(t, sc_read_check(t, buf, bytes, NULL), 0);
	/* Payload of two layers: the third header lies past it. */
	HDR(buf)->payload_bytes = two;
	sc_expect_refused_at(t, buf, bytes, SC_LAYERS - 1);
	/* The last table runs 8 bytes past the payload. */
	HDR(buf)->payload_bytes = bytes - sizeof(struct sieve_snapshot_header) - 8;
	sc_expect_refused_at(t, buf, bytes, SC_LAYERS - 1);
	/* One layer more than the payload holds, its header sent after it. */
	HDR(buf)->payload_bytes = bytes - sizeof(struct sieve_snapshot_header);
	HDR(buf)->nlayers = SC_LAYERS + 1;
	extra = (void *)(buf + bytes);
	memcpy(extra, buf + last, sizeof(*extra));
	sc_expect_refused_at(t, buf, bytes + sizeof(*extra), SC_LAYERS);
	/* A table that would need more than the payload announced. */
	HDR(buf)->nlayers = SC_LAYERS;
	extra = (void *)(buf + last);
	extra->geo.nbits *= 4;
	EXPECT_EQ(t, sieve_geometry_check(&extra->geo, &extra->table_bytes), 0);
	sc_expect_refused_at(t, buf, bytes, SC_LAYERS - 1);
out:
	sieve_free(buf);
	for (i = 0; i < SC_LAYERS; i++)
		if (f[i])
			sieve_filter_destroy(f[i]);
}

#define SC_CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_snapshot_cases[] = {
	SC_CASE(sieve_test_snapshot_round_trip_bloom),
	SC_CASE(sieve_test_snapshot_round_trip_blocked),
	SC_CASE(sieve_test_snapshot_round_trip_cuckoo),
	SC_CASE(sieve_test_snapshot_cuckoo_victim_survives),
	SC_CASE(sieve_test_snapshot_refuses_bad_header),
	SC_CASE(sieve_test_snapshot_refuses_other_version),
	SC_CASE(sieve_test_snapshot_refuses_bad_layer),
	SC_CASE(sieve_test_snapshot_refuses_bad_checksum),
	SC_CASE(sieve_test_snapshot_refuses_bloom_tail_bits),
	SC_CASE(sieve_test_snapshot_refuses_bad_cuckoo_state),
	SC_CASE(sieve_test_snapshot_truncated_and_trailing),
	SC_CASE(sieve_test_snapshot_two_layers),
	SC_CASE(sieve_test_snapshot_refuses_layers_past_payload),
};

const unsigned int sieve_snapshot_ncases = ARRAY_SIZE(sieve_snapshot_cases);
