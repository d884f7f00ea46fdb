// SPDX-License-Identifier: GPL-2.0
/*
 * libsieve's local filters and snapshot files (userspace/lib): round trips,
 * tables identical to the cores', scalable growth, batches against single
 * calls, and snapshots that are corrupted, truncated or too long refused
 * with -EINVAL. Plus what the device client does without a device.
 */
#include <fcntl.h>
#include <unistd.h>

#include "unit.h"
#include "libsieve.h"
#include "../../kmod/snapshot.h"

#define SET_LIB		57
#define KEYS		20000

static const u32 types[] = { SIEVE_BLOOM, SIEVE_BLOCKED_BLOOM, SIEVE_CUCKOO };

static struct sieve_params sized(u32 type, u64 capacity, u32 seed)
{
	return (struct sieve_params){
		.type = type, .flags = SIEVE_CREATE_SEED, .capacity = capacity,
		.fpp_ppb = SIEVE_PPB / 100, .seed = seed,
	};
}

static int add_keys(struct sieve_local *f, u64 from, u64 to)
{
	u8 key[64];
	u64 i;
	int ret;

	for (i = from; i < to; i++) {
		ret = sieve_local_add(f, key, unit_key_distinct(key, SET_LIB, i), 0);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static u64 missing_keys(struct sieve_local *f, u64 from, u64 to)
{
	u8 key[64];
	u64 i, missing = 0;

	for (i = from; i < to; i++)
		missing += sieve_local_query(f, key, unit_key_distinct(key, SET_LIB, i)) != 1;
	return missing;
}

/* A snapshot in memory: saved through a temporary file. */
static u8 *save_to_buf(struct sieve_local *f, size_t *len)
{
	FILE *tmp = tmpfile();
	u8 *buf = NULL;
	long size;

	if (!tmp)
		return NULL;
	if (!sieve_local_save(f, fileno(tmp)) && (size = lseek(fileno(tmp), 0, SEEK_END)) > 0) {
		buf = malloc((size_t)size);
		if (buf && pread(fileno(tmp), buf, (size_t)size, 0) != size) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)size;
	}
	fclose(tmp);
	return buf;
}

static int load_from_buf(const void *buf, size_t len, struct sieve_local **out)
{
	FILE *tmp = tmpfile();
	int ret;

	if (!tmp)
		return -errno;
	if (len && write(fileno(tmp), buf, len) != (ssize_t)len) {
		fclose(tmp);
		return -EIO;
	}
	lseek(fileno(tmp), 0, SEEK_SET);
	ret = sieve_local_load(fileno(tmp), out);
	fclose(tmp);
	return ret;
}

/* Save, load, save again: the same bytes, the same answers and counters. */
static void sieve_unit_libsieve_round_trip(struct sieve_test *t)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		struct sieve_params p = sized(types[i], KEYS, 1234);
		struct sieve_local *f = NULL, *g = NULL;
		struct sieve_info a, b;
		size_t len1 = 0, len2 = 0;
		u8 *s1, *s2;

		EXPECT_EQ(t, sieve_local_create(&p, &f), 0);
		if (!f)
			continue;
		EXPECT_EQ(t, add_keys(f, 0, KEYS), 0);
		s1 = save_to_buf(f, &len1);
		EXPECT_TRUE(t, s1 != NULL);
		EXPECT_EQ(t, load_from_buf(s1, len1, &g), 0);
		if (g) {
			/* No false negative after the trip. */
			EXPECT_EQ(t, missing_keys(g, 0, KEYS), 0);
			s2 = save_to_buf(g, &len2);
			EXPECT_EQ(t, len1, len2);
			/* Queries moved g's counters; the tables must be the same. */
			sieve_local_info(f, &a);
			sieve_local_info(g, &b);
			EXPECT_TRUE(t, !memcmp(&a.geo, &b.geo, sizeof(a.geo)));
			EXPECT_EQ(t, a.items, b.items);
			EXPECT_EQ(t, a.inserted, b.inserted);
			EXPECT_EQ(t, b.queries, KEYS);
			EXPECT_EQ(t, a.snapshot_bytes, len1);
			/* Past the header (counters, checksum): identical. */
			EXPECT_TRUE(t, s2 && len1 > 128 &&
				       !memcmp(s1 + 128, s2 + 128, len1 - 128));
			free(s2);
			sieve_local_destroy(g);
		}
		free(s1);
		sieve_local_destroy(f);
	}
}

/*
 * A local filter's table is the core's table for the same keys and seed:
 * the snapshot's one layer is byte-identical to a sieve_filter's table.
 */
static void sieve_unit_libsieve_table_matches_core(struct sieve_test *t)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		struct sieve_params p = sized(types[i], 5000, 77);
		struct sieve_local *f = NULL;
		struct sieve_filter *core = NULL;
		struct sieve_info info;
		const size_t table_at = sizeof(struct sieve_snapshot_header) +
					sizeof(struct sieve_snapshot_layer);
		size_t len = 0;
		u8 key[64], *snap;
		u64 k;

		EXPECT_EQ(t, sieve_local_create(&p, &f), 0);
		if (!f)
			continue;
		sieve_local_info(f, &info);
		EXPECT_EQ(t, sieve_filter_create(&info.geo, &core), 0);
		for (k = 0; core && k < 5000; k++) {
			u32 n = unit_key_distinct(key, SET_LIB, k);

			sieve_local_add(f, key, n, 0);
			sieve_filter_add(core, key, n);
		}
		snap = save_to_buf(f, &len);
		EXPECT_TRUE(t, snap && core && len >= table_at + core->table_bytes);
		if (snap && core && len >= table_at + core->table_bytes)
			EXPECT_TRUE(t, !memcmp(snap + table_at, core->table, core->table_bytes));
		free(snap);
		sieve_filter_destroy(core);
		sieve_local_destroy(f);
	}
}

/*
 * Every single-byte change the checksum or a check must catch (-EINVAL, or
 * -E2BIG for a size grown past the limits), every truncation and a
 * trailing byte (-EINVAL): no filter handed out.
 */
static void sieve_unit_libsieve_corrupted_refused(struct sieve_test *t)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		struct sieve_params p = sized(types[i], 2000, 9);
		struct sieve_local *f = NULL, *g;
		size_t len = 0, at, bad = 0, tried = 0;
		int ret;
		u8 *snap, *copy;

		EXPECT_EQ(t, sieve_local_create(&p, &f), 0);
		if (!f)
			continue;
		add_keys(f, 0, 1500);
		snap = save_to_buf(f, &len);
		copy = snap ? malloc(len + 1) : NULL;
		EXPECT_TRUE(t, copy != NULL);
		for (at = 0; copy && at < len; at += at < 256 ? 1 : 97) {
			memcpy(copy, snap, len);
			copy[at] ^= 0x40;
			g = NULL;
			tried++;
			ret = load_from_buf(copy, len, &g);
			/*
			 * A flipped high byte of a size makes a table too big:
			 * -E2BIG; a flipped version (bytes 4 and 5), another
			 * format version: -ENOEXEC.
			 */
			if ((ret == -EINVAL || ret == -E2BIG ||
			     (ret == -ENOEXEC && (at == 4 || at == 5))) && !g)
				bad++;
			else
				sieve_note("type %u: byte %zu flipped: %d", types[i], at, ret);
			sieve_local_destroy(g);
		}
		/* Every flipped byte was refused. */
		EXPECT_EQ(t, bad, tried);
		for (at = 0; copy && at < len; at += at < 256 ? 8 : 1001) {
			g = NULL;
			EXPECT_EQ(t, load_from_buf(snap, at, &g), -EINVAL);
			EXPECT_TRUE(t, !g);
		}
		if (copy) {
			memcpy(copy, snap, len);
			copy[len] = 0;
			g = NULL;
			/* A snapshot followed by anything is not one. */
			EXPECT_EQ(t, load_from_buf(copy, len + 1, &g), -EINVAL);
			EXPECT_TRUE(t, !g);
			/* And the untouched copy still loads. */
			EXPECT_EQ(t, load_from_buf(copy, len, &g), 0);
			sieve_local_destroy(g);
		}
		free(copy);
		free(snap);
		sieve_local_destroy(f);
	}
}

/*
 * A scalable filter grows past its first layer's capacity, keeps every key,
 * keeps its rate near the target, and its snapshot of several layers loads.
 */
static void sieve_unit_libsieve_scalable(struct sieve_test *t)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		struct sieve_params p = sized(types[i], 1000, 3);
		struct sieve_local *f = NULL, *g = NULL;
		struct sieve_info info;
		size_t len = 0;
		u8 *snap;

		p.flags |= SIEVE_CREATE_SCALABLE;
		p.growth = 2;
		p.max_layers = 8;
		EXPECT_EQ(t, sieve_local_create(&p, &f), 0);
		if (!f)
			continue;
		EXPECT_EQ(t, add_keys(f, 0, 14000), 0);
		sieve_local_info(f, &info);
		/* 1000 + 2000 + 4000 + 8000 keys: four layers. */
		EXPECT_EQ(t, info.nlayers, 4);
		EXPECT_EQ(t, missing_keys(f, 0, 14000), 0);
		/* Layer rates 1/2 + 1/4 + ... of the target: below it. */
		EXPECT_TRUE(t, info.fpr_ppb < p.fpp_ppb);
		snap = save_to_buf(f, &len);
		EXPECT_EQ(t, snap ? load_from_buf(snap, len, &g) : -1, 0);
		if (g) {
			EXPECT_EQ(t, missing_keys(g, 0, 14000), 0);
			sieve_local_info(g, &info);
			EXPECT_EQ(t, info.nlayers, 4);
			EXPECT_EQ(t, info.create_flags, SIEVE_CREATE_SCALABLE | SIEVE_CREATE_SEED);
			/* Clear goes back to one layer and forgets the keys. */
			EXPECT_EQ(t, sieve_local_clear(g), 0);
			sieve_local_info(g, &info);
			EXPECT_EQ(t, info.nlayers, 1);
			EXPECT_EQ(t, info.items, 0);
			sieve_local_destroy(g);
		}
		free(snap);
		sieve_local_destroy(f);
	}
}

/* load_from_buf(), also telling how many bytes the reader took (*@pos). */
static int load_taking(const void *buf, size_t len, struct sieve_local **out, off_t *pos)
{
	FILE *tmp = tmpfile();
	int ret;

	if (!tmp)
		return -errno;
	if (write(fileno(tmp), buf, len) != (ssize_t)len) {
		fclose(tmp);
		return -EIO;
	}
	lseek(fileno(tmp), 0, SEEK_SET);
	ret = sieve_local_load(fileno(tmp), out);
	*pos = lseek(fileno(tmp), 0, SEEK_CUR);
	fclose(tmp);
	return ret;
}

/*
 * Layers past the announced payload: refused at the layer header, before
 * the table it announces is allocated or a byte of it read (the kernel
 * reserves only the payload; libsieve runs the same reader).
 */
static void sieve_unit_libsieve_layers_past_payload(struct sieve_test *t)
{
	const size_t hdr = sizeof(struct sieve_snapshot_header);
	const size_t lhdr = sizeof(struct sieve_snapshot_layer);
	struct sieve_params p = sized(SIEVE_BLOOM, 64, 5);
	struct sieve_snapshot_header *h;
	struct sieve_snapshot_layer *extra;
	struct sieve_local *f = NULL, *g = NULL;
	size_t len = 0, last;
	u64 table_bytes = 0;
	off_t pos = 0;
	u8 *snap, *buf;
	u32 i;

	p.flags |= SIEVE_CREATE_SCALABLE;
	EXPECT_EQ(t, sieve_local_create(&p, &f), 0);
	if (!f)
		return;
	EXPECT_EQ(t, add_keys(f, 0, 500), 0);
	snap = save_to_buf(f, &len);
	buf = snap ? calloc(1, len + lhdr) : NULL;
	EXPECT_TRUE(t, buf && ((struct sieve_snapshot_header *)snap)->nlayers >= 3);
	if (!buf || ((struct sieve_snapshot_header *)snap)->nlayers < 3)
		goto out;
	h = (void *)buf;
	memcpy(buf, snap, len);
	/* Bloom tables are whole words: no padding between layers. */
	for (last = hdr, i = 0; i + 1 < h->nlayers; i++)
		last += lhdr + ((struct sieve_snapshot_layer *)(buf + last))->table_bytes;
	/* One layer more than the payload holds: its header, announcing 16 MiB, after it. */
	h->nlayers++;
	extra = (void *)(buf + len);
	memcpy(extra, buf + last, lhdr);
	extra->geo.nbits = 1ULL << 27;
	EXPECT_EQ(t, sieve_geometry_check(&extra->geo, &table_bytes), 0);
	extra->table_bytes = table_bytes;
	h->checksum = sieve_snapshot_buffer_checksum(buf, len + lhdr);
	EXPECT_EQ(t, load_taking(buf, len + lhdr, &g, &pos), -EINVAL);
	EXPECT_TRUE(t, !g && pos <= (off_t)len);
	/* The payload of all layers but the last: its header is past it. */
	memcpy(buf, snap, len);
	h->payload_bytes = last - hdr;
	h->checksum = sieve_snapshot_buffer_checksum(buf, len);
	EXPECT_EQ(t, load_taking(buf, len, &g, &pos), -EINVAL);
	EXPECT_TRUE(t, !g && pos <= (off_t)last);
	/* Untouched, it loads: the cases above differ only where they say. */
	EXPECT_EQ(t, load_taking(snap, len, &g, &pos), 0);
	EXPECT_TRUE(t, g && pos == (off_t)len);
	sieve_local_destroy(g);
out:
	free(buf);
	free(snap);
	sieve_local_destroy(f);
}

/* Keys 0..n-1 back to back, for the batch calls. */
static u8 *batch_keys(u64 n, u32 *lens)
{
	u8 *bytes = malloc(n * 40), *at = bytes;
	u64 i;

	for (i = 0; bytes && i < n; i++) {
		lens[i] = unit_key_distinct(at, SET_LIB, i % (n / 2 + 1));	/* repeats */
		at += lens[i];
	}
	return bytes;
}

/* A batch answers exactly what the same single calls answer, in order. */
static void sieve_unit_libsieve_batch_vs_single(struct sieve_test *t)
{
	enum { N = 3000 };
	static u32 lens[N];
	static u8 results[N];
	u32 i, k;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		struct sieve_params p = sized(types[i], N, 21);
		struct sieve_local *a = NULL, *b = NULL;
		struct sieve_batch_stats st = { 0, 0 };
		u8 *bytes = batch_keys(N, lens), *at;
		u64 diff = 0, present = 0;

		EXPECT_EQ(t, sieve_local_create(&p, &a), 0);
		EXPECT_EQ(t, sieve_local_create(&p, &b), 0);
		if (!a || !b || !bytes)
			goto next;
		EXPECT_EQ(t, sieve_local_batch(a, SIEVE_BATCH_ADD, SIEVE_ADD_IF_ABSENT, bytes, lens,
					       N, results, &st), 0);
		EXPECT_EQ(t, st.done, N);
		for (k = 0, at = bytes; k < N; at += lens[k++]) {
			int r = sieve_local_add(b, at, lens[k], SIEVE_ADD_IF_ABSENT);

			diff += r != results[k];
			present += r;
		}
		EXPECT_EQ(t, diff, 0);
		EXPECT_EQ(t, st.present, present);
		/* Repeats (half the keys) were reported present. */
		EXPECT_TRUE(t, present >= N / 2 - 1);
		EXPECT_EQ(t, sieve_local_batch(a, SIEVE_BATCH_QUERY, 0, bytes, lens, N, results, &st), 0);
		EXPECT_EQ(t, st.present, N);
		/* A bad length anywhere: nothing is done. */
		lens[N - 1] = 0;
		EXPECT_EQ(t, sieve_local_batch(a, SIEVE_BATCH_QUERY, 0, bytes, lens, N, NULL, &st),
			  -EINVAL);
		EXPECT_EQ(t, st.done, 0);
		EXPECT_EQ(t, sieve_local_batch(a, 7, 0, bytes, lens, 1, NULL, &st), -EINVAL);
next:
		free(bytes);
		sieve_local_destroy(a);
		sieve_local_destroy(b);
	}
}

/*
 * A full cuckoo table stops an add batch at its first -ENOSPC: done counts
 * the keys stored, each of which is found.
 */
static void sieve_unit_libsieve_full_batch_stops(struct sieve_test *t)
{
	enum { N = 200 };
	struct sieve_params p = {
		.type = SIEVE_CUCKOO, .flags = SIEVE_CREATE_GEOMETRY | SIEVE_CREATE_SEED, .seed = 5,
		.geo = { .nbuckets = 4, .fp_bits = 8 },
	};
	static u32 lens[N];
	struct sieve_batch_stats st = { 0, 0 };
	struct sieve_local *f = NULL;
	struct sieve_info info;
	u8 *bytes, *at;
	u64 k, found = 0;

	bytes = malloc(N * 40);
	for (k = 0, at = bytes; bytes && k < N; at += lens[k++])
		lens[k] = unit_key_distinct(at, SET_LIB + 1, k);
	EXPECT_EQ(t, sieve_local_create(&p, &f), 0);
	if (!f || !bytes)
		goto out;
	EXPECT_EQ(t, sieve_local_batch(f, SIEVE_BATCH_ADD, 0, bytes, lens, N, NULL, &st), -ENOSPC);
	/* 16 slots and a victim: at most 17 stored, and at least most of them. */
	EXPECT_TRUE(t, st.done >= 12 && st.done <= 17);
	sieve_local_info(f, &info);
	EXPECT_EQ(t, info.items, st.done);
	for (k = 0, at = bytes; k < st.done; at += lens[k++])
		found += sieve_local_query(f, at, lens[k]) == 1;
	EXPECT_EQ(t, found, st.done);
	/* Delete takes one back out; a Bloom filter cannot delete. */
	EXPECT_EQ(t, sieve_local_delete(f, bytes, lens[0]), 1);
out:
	free(bytes);
	sieve_local_destroy(f);
}

static void sieve_unit_libsieve_merge_and_delete(struct sieve_test *t)
{
	struct sieve_params p = sized(SIEVE_BLOOM, 4000, 8), q = sized(SIEVE_BLOOM, 4000, 9);
	struct sieve_params c = sized(SIEVE_CUCKOO, 4000, 8);
	struct sieve_local *a = NULL, *b = NULL, *other = NULL, *ck = NULL;
	struct sieve_info info;

	EXPECT_EQ(t, sieve_local_create(&p, &a), 0);
	EXPECT_EQ(t, sieve_local_create(&p, &b), 0);
	EXPECT_EQ(t, sieve_local_create(&q, &other), 0);
	EXPECT_EQ(t, sieve_local_create(&c, &ck), 0);
	if (a && b && other && ck) {
		add_keys(a, 0, 2000);
		add_keys(b, 2000, 4000);
		/* The union holds both halves. */
		EXPECT_EQ(t, sieve_local_merge(a, b), 0);
		EXPECT_EQ(t, missing_keys(a, 0, 4000), 0);
		/* Another seed, a cuckoo filter, itself: refused. */
		EXPECT_EQ(t, sieve_local_merge(a, other), -EINVAL);
		EXPECT_EQ(t, sieve_local_merge(ck, ck), -EINVAL);
		EXPECT_EQ(t, sieve_local_merge(a, a), -EINVAL);
		EXPECT_EQ(t, sieve_local_delete(a, "k", 1), -EOPNOTSUPP);
		add_keys(ck, 0, 100);
		EXPECT_EQ(t, missing_keys(ck, 0, 100), 0);
		EXPECT_EQ(t, sieve_local_delete(ck, "never added", 11), 0);
		/*
		 * As the module counts: a cuckoo copy of a present key is stored
		 * and inserted (answer 1); with SIEVE_ADD_IF_ABSENT it is not.
		 */
		sieve_local_clear(ck);
		EXPECT_EQ(t, sieve_local_add(ck, "dup", 3, 0), 0);
		EXPECT_EQ(t, sieve_local_add(ck, "dup", 3, 0), 1);
		EXPECT_EQ(t, sieve_local_add(ck, "dup", 3, SIEVE_ADD_IF_ABSENT), 1);
		sieve_local_info(ck, &info);
		EXPECT_EQ(t, info.items, 2);
		EXPECT_EQ(t, info.inserted, 2);
		EXPECT_EQ(t, sieve_local_delete(ck, "dup", 3), 1);
		EXPECT_EQ(t, sieve_local_delete(ck, "dup", 3), 1);
		EXPECT_EQ(t, sieve_local_delete(ck, "dup", 3), 0);
	}
	sieve_local_destroy(a);
	sieve_local_destroy(b);
	sieve_local_destroy(other);
	sieve_local_destroy(ck);
}

/* Parameters a local filter refuses, each with its errno. */
static void sieve_unit_libsieve_bad_params(struct sieve_test *t)
{
	struct sieve_params p = sized(SIEVE_BLOOM, 1000, 1);
	struct sieve_local *f = NULL;

	p.flags |= SIEVE_CREATE_EPHEMERAL;
	EXPECT_EQ(t, sieve_local_create(&p, &f), -EINVAL);
	p = sized(0, 1000, 1);
	EXPECT_EQ(t, sieve_local_create(&p, &f), -EINVAL);
	p = sized(SIEVE_BLOOM, SIEVE_MAX_CAPACITY + 1, 1);
	EXPECT_EQ(t, sieve_local_create(&p, &f), -E2BIG);
	p = sized(SIEVE_BLOOM, 1000, 1);
	p.fpp_ppb = SIEVE_PPB;
	EXPECT_EQ(t, sieve_local_create(&p, &f), -EINVAL);
	p = sized(SIEVE_BLOOM, 1000, 1);
	p.growth = 2;	/* without SCALABLE */
	EXPECT_EQ(t, sieve_local_create(&p, &f), -EINVAL);
	p = (struct sieve_params){ .type = SIEVE_CUCKOO, .flags = SIEVE_CREATE_GEOMETRY,
				   .geo = { .nbuckets = 3, .fp_bits = 8 } };
	EXPECT_EQ(t, sieve_local_create(&p, &f), -EINVAL);
	p.geo.nbuckets = 1ULL << 40;
	EXPECT_EQ(t, sieve_local_create(&p, &f), -E2BIG);
	EXPECT_TRUE(t, f == NULL);
	p = sized(SIEVE_BLOOM, 1000, 1);
	EXPECT_EQ(t, sieve_local_create(&p, &f), 0);
	if (f) {
		EXPECT_EQ(t, sieve_local_add(f, "", 0, 0), -EINVAL);
		EXPECT_EQ(t, sieve_local_add(f, "k", 1, 0x80), -EINVAL);
		EXPECT_EQ(t, sieve_local_add(f, "k", 1, 0), 0);
		EXPECT_EQ(t, sieve_local_add(f, "k", 1, 0), 1);
		EXPECT_EQ(t, sieve_local_query(f, "k", SIEVE_MAX_KEY_LEN + 1), -EINVAL);
	}
	sieve_local_destroy(f);
	EXPECT_EQ(t, sieve_name_check("good.name-1_x"), 0);
	EXPECT_EQ(t, sieve_name_check(""), -EINVAL);
	EXPECT_EQ(t, sieve_name_check("bad/name"), -EINVAL);
	EXPECT_EQ(t, sieve_name_check("0123456789012345678901234567890123"), -ENAMETOOLONG);
}

/*
 * A plan is the table create then makes (the first layer's geometry and
 * bytes), the formula's rate at capacity within the target, and the
 * create's errors without a filter.
 */
static void sieve_unit_libsieve_plan_matches_create(struct sieve_test *t)
{
	struct sieve_local *f = NULL;
	struct sieve_plan plan;
	struct sieve_info info;
	struct sieve_params p;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		p = sized(types[i], 100000, 5);
		EXPECT_EQ(t, sieve_local_plan(&p, &plan), 0);
		EXPECT_EQ(t, sieve_local_create(&p, &f), 0);
		if (!f)
			continue;
		sieve_local_info(f, &info);
		info.geo.seed = 0;
		EXPECT_TRUE(t, !memcmp(&plan.geo, &info.geo, sizeof(plan.geo)));
		EXPECT_TRUE(t, plan.table_bytes > 0 && plan.table_bytes < info.memory_bytes);
		EXPECT_TRUE(t, plan.expected_fpr_ppb > 0 && plan.expected_fpr_ppb <= SIEVE_PPB / 100);
		sieve_local_destroy(f);
		f = NULL;
	}
	/* A scalable filter's first layer is sized for half the rate. */
	p = sized(SIEVE_BLOOM, 100000, 5);
	p.flags |= SIEVE_CREATE_SCALABLE;
	EXPECT_EQ(t, sieve_local_plan(&p, &plan), 0);
	EXPECT_TRUE(t, plan.expected_fpr_ppb <= SIEVE_PPB / 200);
	/* An explicit geometry has no capacity, so no expected rate. */
	p = (struct sieve_params){ .type = SIEVE_BLOOM, .flags = SIEVE_CREATE_GEOMETRY,
				   .geo = { .nbits = 1 << 16, .nhashes = 3 } };
	EXPECT_EQ(t, sieve_local_plan(&p, &plan), 0);
	EXPECT_EQ(t, plan.table_bytes, (1 << 16) / 8);
	EXPECT_EQ(t, plan.expected_fpr_ppb, 0);
	p = sized(SIEVE_CUCKOO, 1000, 1);
	p.fpp_ppb = 1000;	/* 1e-6: beyond 16-bit fingerprints */
	EXPECT_EQ(t, sieve_local_plan(&p, &plan), -EINVAL);
	p = sized(SIEVE_BLOOM, 1000000000, 1);
	p.fpp_ppb = 1;
	EXPECT_EQ(t, sieve_local_plan(&p, &plan), -E2BIG);
	p.flags |= SIEVE_CREATE_EPHEMERAL;
	EXPECT_EQ(t, sieve_local_plan(&p, &plan), -EINVAL);
}

/* sieve_params_check() applies the module's contract, ignored fields dropped first. */
static void sieve_unit_libsieve_params_check(struct sieve_test *t)
{
	struct sieve_params p = sized(SIEVE_BLOOM, 1000, 1);

	EXPECT_EQ(t, sieve_params_check(&p), 0);
	p.flags = SIEVE_CREATE_SCALABLE;
	p.growth = SIEVE_MAX_GROWTH;
	p.max_layers = SIEVE_MAX_LAYERS;
	p.seed = 5;		/* ignored without SIEVE_CREATE_SEED */
	p.geo.nbits = 64;	/* ignored without SIEVE_CREATE_GEOMETRY */
	EXPECT_EQ(t, sieve_params_check(&p), 0);
	p.growth = SIEVE_MAX_GROWTH + 1;
	EXPECT_EQ(t, sieve_params_check(&p), -EINVAL);
	p.growth = SIEVE_MIN_GROWTH - 1;
	EXPECT_EQ(t, sieve_params_check(&p), -EINVAL);
	p.growth = 0;
	p.max_layers = SIEVE_MIN_LAYERS - 1;
	EXPECT_EQ(t, sieve_params_check(&p), -EINVAL);
	p.max_layers = 0;
	p.capacity = SIEVE_MAX_CAPACITY + 1;
	EXPECT_EQ(t, sieve_params_check(&p), -E2BIG);
	/* The device may make ephemeral filters: only local ones refuse it. */
	p = sized(SIEVE_BLOOM, 1000, 1);
	p.flags |= SIEVE_CREATE_EPHEMERAL;
	EXPECT_EQ(t, sieve_params_check(&p), 0);
	p = (struct sieve_params){ .type = SIEVE_BLOOM, .flags = SIEVE_CREATE_GEOMETRY,
				   .geo = { .type = SIEVE_CUCKOO } };
	EXPECT_EQ(t, sieve_params_check(&p), -EINVAL);
	p.geo.type = 0;
	EXPECT_EQ(t, sieve_params_check(&p), 0);
}

/* Without a device: the errno of open, and of an ioctl on a file that is not one. */
static void sieve_unit_libsieve_device_absent(struct sieve_test *t)
{
	struct sieve_dev *dev = NULL;
	struct sieve_batch_stats st = { 1, 1 };
	struct sieve_params p = sized(SIEVE_BLOOM, 1000, 1);
	u32 len = 1;

	EXPECT_EQ(t, sieve_dev_open("/nonexistent/sieve", false, &dev), -ENOENT);
	EXPECT_EQ(t, sieve_dev_open("/dev/null", true, &dev), 0);
	if (!dev)
		return;
	EXPECT_EQ(t, sieve_dev_lookup(dev, "x"), -ENOTTY);
	EXPECT_EQ(t, sieve_dev_create(dev, "x", &p), -ENOTTY);
	/* A bad name is refused before any ioctl. */
	EXPECT_EQ(t, sieve_dev_create(dev, "no spaces", &p), -EINVAL);
	EXPECT_EQ(t, sieve_dev_create(dev, "abcdefghijabcdefghijabcdefghij12", &p), -ENAMETOOLONG);
	/* So is a geometry of another type, as a local filter refuses it. */
	p = (struct sieve_params){ .type = SIEVE_BLOOM, .flags = SIEVE_CREATE_GEOMETRY,
				   .geo = { .type = SIEVE_CUCKOO, .nbits = 1024, .nhashes = 3 } };
	EXPECT_EQ(t, sieve_dev_create(dev, "x", &p), -EINVAL);
	EXPECT_EQ(t, sieve_dev_batch(dev, 1, SIEVE_BATCH_QUERY, 0, "k", &len, 1, NULL, &st), -ENOTTY);
	EXPECT_EQ(t, st.done, 0);
	/* An empty batch makes no call. */
	EXPECT_EQ(t, sieve_dev_batch(dev, 1, SIEVE_BATCH_QUERY, 0, "", &len, 0, NULL, &st), 0);
	/* An import that is not a snapshot stops before the kernel. */
	EXPECT_EQ(t, sieve_dev_import_path(dev, "x", 0, "/dev/null"), -EINVAL);
	sieve_dev_close(dev);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_libsieve_cases[] = {
	CASE(sieve_unit_libsieve_round_trip),
	CASE(sieve_unit_libsieve_table_matches_core),
	CASE(sieve_unit_libsieve_corrupted_refused),
	CASE(sieve_unit_libsieve_scalable),
	CASE(sieve_unit_libsieve_layers_past_payload),
	CASE(sieve_unit_libsieve_batch_vs_single),
	CASE(sieve_unit_libsieve_full_batch_stops),
	CASE(sieve_unit_libsieve_merge_and_delete),
	CASE(sieve_unit_libsieve_bad_params),
	CASE(sieve_unit_libsieve_plan_matches_create),
	CASE(sieve_unit_libsieve_params_check),
	CASE(sieve_unit_libsieve_device_absent),
};

const unsigned int sieve_libsieve_cases_n = ARRAY_SIZE(sieve_libsieve_cases);
