// SPDX-License-Identifier: GPL-2.0
/*
 * Random ioctls on /dev/sieve: random command numbers (the valid ones most
 * often), sizes, flags, ids, counts, lengths, names and pointers (valid
 * buffers, NULL, unmapped, read-only, kernel addresses), on a read-write
 * and a read-only file, with the module's limits lowered so that no call
 * can take much memory. No call may crash the kernel or answer with an
 * errno the ABI does not list, and the keys of a Bloom and a cuckoo filter
 * made before must all be there after. The seed is printed; the same seed
 * replays the same calls.
 *
 * Usage: sieve_fuzz_test [CALLS [SEED]]    (default 100000, 0x5eedf00d)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "dev.h"

/* The scratch memory every valid pointer points into, with guard pages. */
#define REGION		(1 << 20)
#define MAX_IDS		24

static uint64_t rng;
static uint8_t *region, *rdonly, *unmapped;
static long page;
static struct known known;
static uint32_t ids[MAX_IDS];
static unsigned int nids;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static const unsigned long valid_cmds[] = {
	SIEVE_IOC_CREATE, SIEVE_IOC_OPEN, SIEVE_IOC_LIST, SIEVE_IOC_DESTROY, SIEVE_IOC_ADD,
	SIEVE_IOC_QUERY, SIEVE_IOC_DELETE, SIEVE_IOC_BATCH, SIEVE_IOC_CLEAR, SIEVE_IOC_INFO,
	SIEVE_IOC_EXPORT, SIEVE_IOC_IMPORT, SIEVE_IOC_MERGE, SIEVE_IOC_EXCHANGE,
};
#define NVALID (sizeof(valid_cmds) / sizeof(valid_cmds[0]))

static const size_t sizes[] = {
	sizeof(struct sieve_create), sizeof(struct sieve_open), sizeof(struct sieve_list),
	sizeof(struct sieve_id), sizeof(struct sieve_key_op), sizeof(struct sieve_key_op),
	sizeof(struct sieve_key_op), sizeof(struct sieve_batch), sizeof(struct sieve_id),
	sizeof(struct sieve_info), sizeof(struct sieve_export), sizeof(struct sieve_import),
	sizeof(struct sieve_merge), sizeof(struct sieve_exchange),
};

/*
 * The VFS answers some ioctl numbers itself before the driver sees them
 * (FIFREEZE on the device's filesystem, FIONBIO, FIOASYNC...): random
 * numbers avoid those types, which test the VFS, not sieve.
 */
static bool vfs_cmd(unsigned long cmd)
{
	unsigned int type = _IOC_TYPE(cmd);

	return type == 0 || type == 'X' || type == 'f' || type == 'T' || type == 0x94 ||
	       type == 0x15;
}

static unsigned long pick_cmd(void)
{
	uint64_t r = below(100);
	unsigned long cmd;

	if (r < 75)
		return valid_cmds[below(NVALID)];
	if (r < 85)
		return _IO(SIEVE_IOC_MAGIC, below(256));
	do {
		if (r < 93)
			cmd = _IOC(below(4), SIEVE_IOC_MAGIC, below(32), below(1 << 14));
		else
			cmd = (uint32_t)rnd();
	} while (vfs_cmd(cmd));
	return cmd;
}

static uint64_t pick_ptr(bool often_valid)
{
	static const uint64_t odd[] = {
		0, 1, KERNEL_PTR, 0xffff888000000000ULL, 0xffffffffffffffffULL,
		0x0000800000000000ULL, 0xfffffffffffff000ULL,
	};
	uint64_t r = below(100);

	if (often_valid ? r < 70 : r < 40)
		return (uintptr_t)(region + below(REGION));
	if (r < 80)
		return odd[below(sizeof(odd) / sizeof(odd[0]))];
	if (r < 85)
		return (uintptr_t)unmapped + below(page);
	if (r < 90)
		return (uintptr_t)rdonly + below(page);
	if (r < 95)
		/* the last bytes before the guard page */
		return (uintptr_t)(region + REGION - below(64));
	return rnd();
}

static uint64_t pick_count(void)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 15, 16, 17, 255, 256, 257, 4095, 4096, 4097, 65536,
		SIEVE_MAX_BATCH, SIEVE_MAX_BATCH + 1, UINT32_MAX, 1ULL << 32, 1ULL << 40,
		SIEVE_MAX_CAPACITY + 1, UINT64_MAX, 20000000,
	};

	if (below(4) == 0)
		return rnd() >> below(64);
	return v[below(sizeof(v) / sizeof(v[0]))];
}

static uint32_t pick_id(void)
{
	uint64_t r = below(100);
	uint32_t id;

	if (r < 60 && nids)
		id = ids[below(nids)];
	else if (r < 70)
		id = 0;
	else if (r < 80)
		id = UINT32_MAX;
	else
		id = below(64);
	/* Never the known filters: their keys must survive. */
	if (id == known.bloom_id || id == known.cuckoo_id)
		id = 0;
	return id;
}

static uint32_t pick_flags(void)
{
	uint64_t r = below(100);

	if (r < 50)
		return 0;
	if (r < 85)
		return below(16);
	return 1U << below(32);
}

static void pick_name(char *name)
{
	static const char chars[] = "abcz09._-/ \n\xff";
	uint64_t r = below(100), i, n;

	memset(name, 0, SIEVE_NAME_MAX);
	if (r < 70) {
		snprintf(name, SIEVE_NAME_MAX, "fz.%u", (unsigned int)below(12));
		return;
	}
	n = below(SIEVE_NAME_MAX + 1);
	for (i = 0; i < n && i < SIEVE_NAME_MAX; i++)
		name[i] = chars[below(sizeof(chars) - 1)];
	if (below(4) == 0)
		name[below(SIEVE_NAME_MAX)] = (char)rnd();
}

static void fill_geo(struct sieve_geometry *g)
{
	g->type = below(5);
	g->seed = below(3) ? 0 : rnd();
	g->nbits = below(2) ? 512 * below(64) : pick_count();
	g->nbuckets = below(2) ? 1ULL << below(16) : pick_count();
	g->nhashes = below(40);
	g->fp_bits = below(20);
}

/* A plausible argument for @cmd at @a (in the region), fields randomised. */
static void fill_struct(unsigned long cmd, uint8_t *a, size_t size)
{
	switch (cmd) {
	case SIEVE_IOC_CREATE: {
		struct sieve_create *c = (void *)a;

		pick_name(c->name);
		c->type = below(5);
		c->fpp_ppb = below(2) ? 10000000 : rnd();
		/* at most a megabyte or so, usually: max_memory_mb is low anyway */
		c->capacity = below(4) ? below(100000) + 1 : pick_count();
		if (c->flags & SIEVE_CREATE_GEOMETRY || below(10) == 0)
			fill_geo(&c->geo);
		c->seed = below(3) ? 0 : rnd();
		c->growth = below(3) ? 0 : below(20);
		c->max_layers = below(3) ? 0 : below(40);
		break;
	}
	case SIEVE_IOC_OPEN:
		pick_name(((struct sieve_open *)a)->name);
		break;
	case SIEVE_IOC_LIST: {
		struct sieve_list *l = (void *)a;

		l->start_id = below(2) ? 0 : pick_id();
		l->count = below(2) ? below(64) : pick_count();
		l->entries = pick_ptr(true);
		break;
	}
	case SIEVE_IOC_DESTROY:
	case SIEVE_IOC_CLEAR:
		((struct sieve_id *)a)->id = pick_id();
		break;
	case SIEVE_IOC_ADD:
	case SIEVE_IOC_QUERY:
	case SIEVE_IOC_DELETE: {
		struct sieve_key_op *op = (void *)a;

		op->id = pick_id();
		op->key_len = below(2) ? below(64) : pick_count();
		op->key = pick_ptr(true);
		break;
	}
	case SIEVE_IOC_BATCH: {
		struct sieve_batch *b = (void *)a;
		uint32_t *lens;
		uint64_t i, total = 0;

		b->id = pick_id();
		b->op = below(5);
		b->count = below(2) ? below(300) : pick_count();
		b->keys = pick_ptr(true);
		b->lens = (uintptr_t)(region + (REGION / 2) + 4 * below(1024));
		lens = (uint32_t *)(uintptr_t)b->lens;
		/* half the time, lengths that add up */
		for (i = 0; i < b->count && i < 4096 && b->lens + 4 * i + 4 <
		     (uintptr_t)region + REGION; i++) {
			lens[i] = below(8) ? below(32) + 1 : (uint32_t)pick_count();
			total += lens[i];
		}
		b->keys_bytes = below(2) ? total : pick_count();
		if (below(5) == 0)
			b->lens = pick_ptr(false);
		b->results = below(5) ? pick_ptr(true) : 0;
		break;
	}
	case SIEVE_IOC_INFO:
		((struct sieve_info *)a)->id = pick_id();
		break;
	case SIEVE_IOC_EXPORT: {
		struct sieve_export *e = (void *)a;

		e->id = pick_id();
		e->offset = below(2) ? 0 : below(3) ? below(4096) : pick_count();
		e->buf = pick_ptr(true);
		e->buf_len = below(2) ? below(8192) : pick_count();
		break;
	}
	case SIEVE_IOC_IMPORT: {
		struct sieve_import *im = (void *)a;

		pick_name(im->name);
		im->offset = below(2) ? 0 : below(3) ? 128 * below(4) : pick_count();
		im->buf = pick_ptr(true);
		im->buf_len = below(2) ? 128 + below(4096) : pick_count();
		break;
	}
	case SIEVE_IOC_MERGE: {
		struct sieve_merge *m = (void *)a;

		m->dst_id = pick_id();
		m->src_id = below(2) ? pick_id() : known.bloom_id;
		break;
	}
	case SIEVE_IOC_EXCHANGE: {
		struct sieve_exchange *x = (void *)a;

		x->a_id = pick_id();
		x->b_id = pick_id();
		break;
	}
	}
	(void)size;
}

/* Snapshot-like bytes at the start of import buffers, sometimes. */
static void plant_snapshot(const uint8_t *snap, uint64_t len)
{
	uint64_t off = below(REGION / 2 - len);
	uint8_t *p = region + off;

	memcpy(p, snap, len);
	if (below(2))
		p[below(len)] ^= 1 << below(8);
}

/* Whatever the mutations did, no call may name a known filter to change it. */
static void sanitize_ids(unsigned long cmd, uint8_t *a)
{
	uint32_t *id = NULL;

	switch (cmd) {
	case SIEVE_IOC_DESTROY:
	case SIEVE_IOC_CLEAR:
		id = &((struct sieve_id *)a)->id;
		break;
	case SIEVE_IOC_ADD:
	case SIEVE_IOC_DELETE:
		id = &((struct sieve_key_op *)a)->id;
		break;
	case SIEVE_IOC_BATCH:
		id = &((struct sieve_batch *)a)->id;
		break;
	case SIEVE_IOC_MERGE:
		id = &((struct sieve_merge *)a)->dst_id;
		break;
	case SIEVE_IOC_EXCHANGE:
		/* both change: a_id here, b_id below */
		id = &((struct sieve_exchange *)a)->a_id;
		if (id[1] == known.bloom_id || id[1] == known.cuckoo_id)
			id[1] = 0;
		break;
	}
	if (id && (*id == known.bloom_id || *id == known.cuckoo_id))
		*id = 0;
}

static bool documented(int err)
{
	switch (-err) {
	case 0: case EINVAL: case EFAULT: case ENOTTY: case EBADF: case ENOENT: case EEXIST:
	case E2BIG: case ENOSPC: case ENOMEM: case EOPNOTSUPP: case EINTR: case EALREADY:
	case ENAMETOOLONG:
		return true;
	}
	return false;
}

/* Fuzz-made filters are kept at MAX_IDS: the oldest is destroyed. */
static void note_id(int fd, uint32_t id)
{
	if (!id || id == known.bloom_id || id == known.cuckoo_id)
		return;
	if (nids == MAX_IDS) {
		sv_destroy(fd, ids[0]);
		memmove(ids, ids + 1, sizeof(ids[0]) * (MAX_IDS - 1));
		nids--;
	}
	ids[nids++] = id;
}

static void destroy_all_but_known(int fd)
{
	static struct sieve_list_entry e[4096];
	uint32_t n = 0, i;

	if (sv_list_all(fd, e, 4096, &n))
		return;
	for (i = 0; i < n; i++)
		if (e[i].id != known.bloom_id && e[i].id != known.cuckoo_id)
			sv_destroy(fd, e[i].id);
}

/*
 * The import's sizes and counts: a scalable snapshot whose payload length,
 * layer count, layer geometries (tables up to 64 MiB, each consistent with
 * its geometry) and length are mutated, resealed, and fed in random chunks
 * while max_memory_mb is 16. Only the announced payload is reserved, so a
 * call may never succeed having taken a byte past it (the reader would be
 * filling a table nobody reserved), nor succeed at all once the header
 * announced more than the limit.
 */
#define IMPORT_LIMIT_MB	16

static const uint64_t import_nbits[] = {
	64, 4096, 1ULL << 20, 1ULL << 24, 1ULL << 27, 1ULL << 29,
};

static void mutate_layers(uint8_t *b, uint64_t *len)
{
	struct sieve_snapshot_header *h = (void *)b;
	uint64_t at = snapshot_layer_offset(b, *len, below(h->nlayers));
	struct sieve_snapshot_layer *l = (void *)(b + at);
	uint64_t hb = sizeof(*h), lb = sizeof(*l);

	if (!at)
		return;		/* earlier mutations left no such layer */
	switch (below(5)) {
	case 0:		/* the payload ends at a layer boundary, or 8 bytes off it */
		h->payload_bytes = at - hb + 8 * (below(3) - 1) * below(2);
		break;
	case 1:
		h->nlayers = below(h->max_layers) + 1;
		break;
	case 2:		/* a table of another size, its header consistent */
		l->geo.nbits = import_nbits[below(sizeof(import_nbits) / 8)];
		l->table_bytes = (l->geo.nbits + 63) / 64 * 8;
		break;
	case 3:		/* one more layer header after the end */
		memcpy(b + *len, b + at, lb);
		l = (void *)(b + *len);
		l->geo.nbits = import_nbits[below(sizeof(import_nbits) / 8)];
		l->table_bytes = (l->geo.nbits + 63) / 64 * 8;
		h->nlayers++;
		*len += lb;
		break;
	default:
		*len = hb + below(*len - hb) + 1;
		break;
	}
}

/*
 * One import of @b in random chunks: false if a call took what it must not.
 * A layer header is judged once whole, so up to 63 bytes of one past the
 * payload may be taken: they go to the reader's own buffer, not a table.
 */
static bool import_chunks(int fd, const uint8_t *b, uint64_t len)
{
	const struct sieve_snapshot_header *h = (const void *)b;
	uint64_t end = sizeof(*h) + h->payload_bytes, off = 0;
	struct sieve_import im;
	int err = 0;

	while (!err && off < len) {
		im = (struct sieve_import){ .size = sizeof(im), .offset = off,
					    .buf = (uintptr_t)(b + off) };
		strcpy(im.name, "fz.imp");
		im.buf_len = off ? below(len - off) + 1 : len < 4096 ? len : 128 + below(4096);
		err = ioctl(fd, SIEVE_IOC_IMPORT, &im) < 0 ? -errno : 0;
		off += im.buf_len;
		if (!err && (off >= end + sizeof(struct sieve_snapshot_layer) ||
			     end > (IMPORT_LIMIT_MB << 20))) {
			diag("import: %llu bytes taken, payload ends at %llu",
			     (unsigned long long)off, (unsigned long long)end);
			return false;
		}
		if (!err && im.id)
			sv_destroy(fd, im.id);
	}
	return true;
}

/* A scalable Bloom filter of 4 layers (64 + 128 + 256 + 512 keys), exported. */
static int scalable_snapshot(int fd, uint8_t **snap, uint64_t *len)
{
	struct keyset *ks = keyset_make("fzimp", 0, 500);
	uint32_t id;
	int err;

	err = sv_create_simple(fd, "fz.scal", SIEVE_BLOOM, 64, 10000000, SIEVE_CREATE_SCALABLE,
			       &id);
	err = err ? err : sv_batch(fd, id, SIEVE_BATCH_ADD, 0, ks, NULL);
	err = err ? err : sv_export_all(fd, id, 1 << 20, snap, len);
	sv_destroy(fd, id);
	keyset_free(ks);
	return err;
}

static void import_fuzz(int fd, unsigned long rounds)
{
	uint8_t *snap = NULL, *b = NULL;
	unsigned long i, bad = 0;
	uint64_t len, snap_len = 0;
	uint32_t id = 0;
	int m, err;

	err = scalable_snapshot(fd, &snap, &snap_len);
	err = err ? err : sv_import_all(fd, "fz.imp", 0, snap, snap_len, 4096, &id);
	ktap_ok(!err && id, "the untouched scalable snapshot imports (%s)", errname(err));
	sv_destroy(fd, id);
	if (!err)
		b = malloc(snap_len + 4 * sizeof(struct sieve_snapshot_layer));
	for (i = 0; b && i < rounds; i++) {
		memcpy(b, snap, snap_len);
		len = snap_len;
		for (m = below(3); m >= 0; m--)
			mutate_layers(b, &len);
		if (below(4))
			snapshot_reseal(b, len);
		bad += !import_chunks(fd, b, len);
	}
	ktap_ok(b && !bad, "%lu mutated scalable imports: none took bytes past its payload (%lu did)",
		rounds, bad);
	free(b);
	free(snap);
}

int main(int argc, char **argv)
{
	unsigned long calls = 100000, i, ok = 0, undocumented = 0, errs[600] = { 0 };
	uint64_t seed = 0x5eedf00d;
	long long old_mem, old_filters;
	int kfd, rw, ro, err;
	uint8_t *snap = NULL;
	uint64_t snap_len = 0;
	struct timespec t0, t1;

	if (argc > 1)
		calls = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		seed = strtoull(argv[2], NULL, 0);
	rng = seed ? seed : 1;
	ktap_begin("fuzz");
	diag("seed %#llx, %lu calls (replay: sieve_fuzz_test %lu %#llx)",
	     (unsigned long long)seed, calls, calls, (unsigned long long)seed);
	page = sysconf(_SC_PAGESIZE);
	/* region, then a guard page nothing maps */
	region = mmap(NULL, REGION + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	/* reserved, not unmapped: no later mapping may land there */
	mprotect(region + REGION, page, PROT_NONE);
	unmapped = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rdonly = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	kfd = dev_open(O_RDWR);
	if (known_setup(&known, kfd, "fuzz") ||
	    sv_export_all(kfd, known.bloom_id, 4096, &snap, &snap_len)) {
		printf("Bail out! cannot set up the known filters\n");
		return 1;
	}
	old_mem = param_read("max_memory_mb");
	old_filters = param_read("max_filters");
	/* Every call stays cheap, whatever sizes it asks for. */
	ktap_ok(param_write("max_memory_mb", 16) == 0 && param_write("max_filters", 64) == 0,
		"limits lowered for the fuzz (max_memory_mb 16, max_filters 64; were %lld, %lld)",
		old_mem, old_filters);
	rw = dev_open(O_RDWR);
	ro = dev_open(O_RDONLY);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < calls; i++) {
		unsigned long cmd = pick_cmd();
		size_t size = 0;
		uint8_t *arg;
		uint64_t r = below(100);
		int fd = below(10) ? rw : ro;
		unsigned int c;

		for (c = 0; c < NVALID; c++)
			if (valid_cmds[c] == cmd)
				size = sizes[c];
		if (!size)
			size = below(256) + 8;
		arg = region + 8 * below((REGION / 2 - 16384) / 8);
		if (below(64) == 0)
			for (c = 0; c < 4096; c++)
				region[below(REGION)] = rnd();
		if (cmd == SIEVE_IOC_IMPORT && below(2))
			plant_snapshot(snap, snap_len);
		memset(arg, 0, size + 64);
		if (r < 85) {
			fill_struct(cmd, arg, size);
			((uint32_t *)arg)[0] = below(8) ? size : below(3) ? size + below(64) : rnd();
			((uint32_t *)arg)[1] = pick_flags();
			if (below(10) == 0)	/* a reserved field, or the tail */
				arg[below(size + 64)] = rnd();
			if (cmd == SIEVE_IOC_IMPORT && below(2)) {
				struct sieve_import *im = (void *)arg;

				im->buf = (uintptr_t)snap;	/* the known snapshot, read only */
				im->buf_len = below(2) ? snap_len : below(snap_len) + 1;
			}
		} else {
			for (c = 0; c < size + 64; c++)
				arg[c] = rnd();
		}
		sanitize_ids(cmd, arg);
		if (below(20) == 0)
			arg = (uint8_t *)(uintptr_t)pick_ptr(false);
		err = ioctl(fd, cmd, arg) < 0 ? -errno : 0;
		if (!err) {
			ok++;
			if (arg >= region && arg < region + REGION) {
				if (cmd == SIEVE_IOC_CREATE)
					note_id(rw, ((struct sieve_create *)arg)->id);
				if (cmd == SIEVE_IOC_IMPORT)
					note_id(rw, ((struct sieve_import *)arg)->id);
			}
		} else if (-err < 600) {
			errs[-err]++;
		}
		if (!documented(err) && undocumented++ < 5)
			diag("call %lu: cmd %#lx answered %s, which the ABI does not list", i, cmd,
			     errname(err));
		/* now and then, a fresh file: its exports and imports go with it */
		if (below(2000) == 0) {
			close(rw);
			rw = dev_open(O_RDWR);
		}
		if ((i + 1) % 25000 == 0) {
			char what[64];

			snprintf(what, sizeof(what), "after %lu random calls", i + 1);
			known_check(&known, what);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag("%lu calls in %.1f s: %lu succeeded; EINVAL %lu EFAULT %lu ENOTTY %lu EBADF %lu "
	     "ENOENT %lu EEXIST %lu E2BIG %lu ENOSPC %lu ENOMEM %lu EOPNOTSUPP %lu EALREADY %lu",
	     calls, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, ok, errs[EINVAL],
	     errs[EFAULT], errs[ENOTTY], errs[EBADF], errs[ENOENT], errs[EEXIST], errs[E2BIG],
	     errs[ENOSPC], errs[ENOMEM], errs[EOPNOTSUPP], errs[EALREADY]);
	ktap_ok(undocumented == 0, "every answer an errno the ABI lists (%lu others)",
		undocumented);
	ktap_ok(ok > calls / 100, "some calls succeeded (%lu): the fuzz reaches the commands", ok);
	close(rw);
	close(ro);
	destroy_all_but_known(kfd);
	known_check(&known, "after the fuzz");
	import_fuzz(kfd, calls / 20);
	known_check(&known, "after the import fuzz");
	err = param_write("max_memory_mb", old_mem);
	err = err ? err : param_write("max_filters", old_filters);
	ktap_ok(!err, "limits restored (%s)", errname(err));
	known_teardown(&known);
	free(snap);
	close(kfd);
	return ktap_end();
}
