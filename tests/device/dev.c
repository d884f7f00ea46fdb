// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the /dev/sieve test programs (see dev.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dev.h"
#include "jhash.h"

/* ---- KTAP ---------------------------------------------------------- */

static unsigned int ktap_n, ktap_failed;
static const char *ktap_suite = "";

void ktap_begin(const char *suite)
{
	ktap_suite = suite;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n# %s\n", suite);
}

bool ktap_ok(bool ok, const char *fmt, ...)
{
	va_list ap;

	ktap_n++;
	if (!ok)
		ktap_failed++;
	printf("%s %u %s: ", ok ? "ok" : "not ok", ktap_n, ktap_suite);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return ok;
}

void ktap_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	ktap_n++;
	printf("ok %u %s: ", ktap_n, ktap_suite);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

int ktap_end(void)
{
	printf("1..%u\n", ktap_n);
	printf("# %s: %u of %u failed\n", ktap_suite, ktap_failed, ktap_n);
	fflush(stdout);
	return ktap_failed ? 1 : 0;
}

void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *errname(int err)
{
	/* several may appear in one printf: a few buffers in turn */
	static __thread char bufs[4][32];
	static __thread unsigned int turn;
	char *buf = bufs[turn++ % 4];
	static const struct { int e; const char *n; } names[] = {
		{ EINVAL, "EINVAL" }, { EFAULT, "EFAULT" }, { ENOTTY, "ENOTTY" },
		{ EBADF, "EBADF" }, { ENOENT, "ENOENT" }, { EEXIST, "EEXIST" },
		{ E2BIG, "E2BIG" }, { ENOSPC, "ENOSPC" }, { ENOMEM, "ENOMEM" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { EINTR, "EINTR" }, { EALREADY, "EALREADY" },
		{ EACCES, "EACCES" }, { EPERM, "EPERM" }, { 515, "ENOIOCTLCMD(515)" },
		{ EBUSY, "EBUSY" }, { ERANGE, "ERANGE" }, { EOVERFLOW, "EOVERFLOW" },
		{ ENAMETOOLONG, "ENAMETOOLONG" },
	};
	size_t i;

	if (err == 0)
		return "0";
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (-err == names[i].e) {
			snprintf(buf, sizeof(bufs[0]), "-%s", names[i].n);
			return buf;
		}
	snprintf(buf, sizeof(bufs[0]), "%d", err);
	return buf;
}

/* ---- the device ---------------------------------------------------- */

const struct sv_type sv_types[SV_NR_TYPES] = {
	{ SIEVE_BLOOM, "bloom" },
	{ SIEVE_BLOCKED_BLOOM, "blocked" },
	{ SIEVE_CUCKOO, "cuckoo" },
};

const char *dev_path(void)
{
	const char *p = getenv("SIEVE_DEVICE");

	return p && *p ? p : DEV_PATH_DEFAULT;
}

int dev_open(int oflags)
{
	int fd = open(dev_path(), oflags | O_CLOEXEC);

	if (fd < 0) {
		printf("Bail out! cannot open %s: %s\n", dev_path(), strerror(errno));
		exit(1);
	}
	return fd;
}

int sv_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	if (ret < 0)
		return -errno;
	/* The ABI answers in the struct: a positive return is a bug too. */
	return ret == 0 ? 0 : -ERANGE;
}

void sv_create_arg(struct sieve_create *c, const char *name, uint32_t type,
		   uint64_t capacity, uint32_t fpp_ppb)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->type = type;
	c->capacity = capacity;
	c->fpp_ppb = fpp_ppb;
}

int sv_create(int fd, struct sieve_create *c)
{
	return sv_ioctl(fd, SIEVE_IOC_CREATE, c);
}

int sv_create_simple(int fd, const char *name, uint32_t type, uint64_t capacity,
		     uint32_t fpp_ppb, uint32_t flags, uint32_t *id)
{
	struct sieve_create c;
	int err;

	sv_create_arg(&c, name, type, capacity, fpp_ppb);
	c.flags = flags | SIEVE_CREATE_SEED;
	c.seed = 0x5eed0000 + type;
	err = sv_create(fd, &c);
	if (!err && id)
		*id = c.id;
	return err;
}

int sv_open_name(int fd, const char *name, uint32_t *id)
{
	struct sieve_open o = { .size = sizeof(o) };
	int err;

	snprintf(o.name, sizeof(o.name), "%s", name);
	err = sv_ioctl(fd, SIEVE_IOC_OPEN, &o);
	if (!err && id)
		*id = o.id;
	return err;
}

static int sv_id_cmd(int fd, unsigned long cmd, uint32_t id)
{
	struct sieve_id a = { .size = sizeof(a), .id = id };

	return sv_ioctl(fd, cmd, &a);
}

int sv_destroy(int fd, uint32_t id)
{
	return sv_id_cmd(fd, SIEVE_IOC_DESTROY, id);
}

int sv_clear(int fd, uint32_t id)
{
	return sv_id_cmd(fd, SIEVE_IOC_CLEAR, id);
}

int sv_info(int fd, uint32_t id, struct sieve_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->id = id;
	return sv_ioctl(fd, SIEVE_IOC_INFO, info);
}

static int sv_key_cmd(int fd, unsigned long cmd, uint32_t id, const void *key,
		      uint32_t len, uint32_t flags, uint32_t *result)
{
	struct sieve_key_op op = {
		.size = sizeof(op), .flags = flags, .id = id, .key_len = len,
		.key = (uintptr_t)key, .result = 0xdead,
	};
	int err = sv_ioctl(fd, cmd, &op);

	if (!err && op.result > 1)
		return -ERANGE;	/* result is documented as 0 or 1 */
	if (!err && result)
		*result = op.result;
	return err;
}

int sv_add(int fd, uint32_t id, const void *key, uint32_t len, uint32_t flags,
	   uint32_t *result)
{
	return sv_key_cmd(fd, SIEVE_IOC_ADD, id, key, len, flags, result);
}

int sv_query(int fd, uint32_t id, const void *key, uint32_t len, uint32_t *result)
{
	return sv_key_cmd(fd, SIEVE_IOC_QUERY, id, key, len, 0, result);
}

int sv_delete(int fd, uint32_t id, const void *key, uint32_t len, uint32_t *result)
{
	return sv_key_cmd(fd, SIEVE_IOC_DELETE, id, key, len, 0, result);
}

int sv_merge(int fd, uint32_t dst, uint32_t src)
{
	struct sieve_merge m = { .size = sizeof(m), .dst_id = dst, .src_id = src };

	return sv_ioctl(fd, SIEVE_IOC_MERGE, &m);
}

int sv_exchange(int fd, uint32_t a, uint32_t b)
{
	struct sieve_exchange x = { .size = sizeof(x), .a_id = a, .b_id = b };

	return sv_ioctl(fd, SIEVE_IOC_EXCHANGE, &x);
}

int sv_list_all(int fd, struct sieve_list_entry *out, uint32_t max, uint32_t *n)
{
	uint32_t start = 0, got = 0, pages = 0;

	do {
		struct sieve_list l = {
			.size = sizeof(l), .start_id = start, .count = max - got,
			.entries = (uintptr_t)(out + got),
		};
		int err;

		if (got == max)
			return -ENOSPC;
		err = sv_ioctl(fd, SIEVE_IOC_LIST, &l);
		if (err)
			return err;
		if (l.count > max - got)
			return -ERANGE;
		got += l.count;
		/* next_id must move forward, or the listing never ends. */
		if (l.next_id && l.next_id <= start)
			return -ERANGE;
		start = l.next_id;
		if (++pages > 100000)
			return -ERANGE;
	} while (start);
	*n = got;
	return 0;
}

/* ---- keys ---------------------------------------------------------- */

struct keyset *keyset_make(const char *prefix, uint64_t first, uint32_t n)
{
	struct keyset *ks = calloc(1, sizeof(*ks));
	size_t plen = strlen(prefix), room = (size_t)n * (plen + 22);
	uint64_t off = 0;
	uint32_t i;

	ks->n = n;
	ks->bytes = malloc(room + 1);
	ks->lens = calloc(n ? n : 1, sizeof(*ks->lens));
	ks->results = calloc(n ? n : 1, 1);
	for (i = 0; i < n; i++) {
		int len = snprintf((char *)ks->bytes + off, room + 1 - off, "%s-%llu",
				   prefix, (unsigned long long)(first + i));

		ks->lens[i] = len;
		off += len;
	}
	ks->nbytes = off;
	return ks;
}

void keyset_free(struct keyset *ks)
{
	if (!ks)
		return;
	free(ks->bytes);
	free(ks->lens);
	free(ks->results);
	free(ks);
}

const uint8_t *keyset_key(const struct keyset *ks, uint32_t i, uint32_t *len)
{
	uint64_t off = 0;
	uint32_t j;

	for (j = 0; j < i; j++)
		off += ks->lens[j];
	*len = ks->lens[i];
	return ks->bytes + off;
}

int sv_batch(int fd, uint32_t id, uint32_t op, uint32_t flags, struct keyset *ks,
	     struct sieve_batch *b)
{
	struct sieve_batch local;

	if (!b)
		b = &local;
	memset(b, 0, sizeof(*b));
	b->size = sizeof(*b);
	b->flags = flags;
	b->id = id;
	b->op = op;
	b->count = ks->n;
	b->keys = (uintptr_t)ks->bytes;
	b->keys_bytes = ks->nbytes;
	b->lens = (uintptr_t)ks->lens;
	b->results = (uintptr_t)ks->results;
	memset(ks->results, 0xee, ks->n);
	return sv_ioctl(fd, SIEVE_IOC_BATCH, b);
}

long sv_count_absent(int fd, uint32_t id, struct keyset *ks)
{
	struct sieve_batch b;
	long absent = 0;
	uint32_t i;
	int err;

	err = sv_batch(fd, id, SIEVE_BATCH_QUERY, 0, ks, &b);
	if (err)
		return err;
	if (b.done != ks->n)
		return -ERANGE;
	for (i = 0; i < ks->n; i++) {
		if (ks->results[i] > 1)
			return -ERANGE;
		absent += ks->results[i] == 0;
	}
	if (b.present != ks->n - absent)
		return -ERANGE;
	return absent;
}

int sv_add_each(int fd, uint32_t id, const struct keyset *ks, uint32_t *added)
{
	uint32_t i, len, result, n = 0;
	const uint8_t *k;
	int err = 0;

	for (i = 0; i < ks->n && !err; i++) {
		k = keyset_key(ks, i, &len);
		err = sv_add(fd, id, k, len, 0, &result);
		n += !err;
	}
	if (added)
		*added = n;
	return err;
}

/* ---- known filters --------------------------------------------------- */

int known_setup(struct known *k, int fd, const char *tag)
{
	struct sieve_batch b;
	int err;

	memset(k, 0, sizeof(*k));
	k->fd = fd;
	snprintf(k->bloom_name, sizeof(k->bloom_name), "known.%s.bloom", tag);
	snprintf(k->cuckoo_name, sizeof(k->cuckoo_name), "known.%s.cuckoo", tag);
	k->keys = keyset_make("known", 0, KNOWN_KEYS);
	err = sv_create_simple(fd, k->bloom_name, SIEVE_BLOOM, 1000, 1000000, 0, &k->bloom_id);
	if (!err)
		err = sv_create_simple(fd, k->cuckoo_name, SIEVE_CUCKOO, 1000, 1000000, 0,
				       &k->cuckoo_id);
	if (!err)
		err = sv_batch(fd, k->bloom_id, SIEVE_BATCH_ADD, 0, k->keys, &b);
	if (!err)
		err = sv_batch(fd, k->cuckoo_id, SIEVE_BATCH_ADD, 0, k->keys, &b);
	return err;
}

bool known_check(struct known *k, const char *what)
{
	long miss_b = sv_count_absent(k->fd, k->bloom_id, k->keys);
	long miss_c = sv_count_absent(k->fd, k->cuckoo_id, k->keys);
	bool ok = miss_b == 0 && miss_c == 0;

	if (!ok)
		diag("known keys after '%s': bloom %ld missing, cuckoo %ld missing "
		     "(negative: the query failed with that -errno)", what, miss_b, miss_c);
	return ktap_ok(ok, "%s: known keys intact", what);
}

void known_teardown(struct known *k)
{
	sv_destroy(k->fd, k->bloom_id);
	sv_destroy(k->fd, k->cuckoo_id);
	keyset_free(k->keys);
}

/* ---- snapshots ------------------------------------------------------- */

int sv_export_all(int fd, uint32_t id, uint64_t chunk, uint8_t **buf, uint64_t *len)
{
	struct sieve_export e = { .size = sizeof(e), .id = id };
	uint8_t *out = NULL;
	uint64_t total = 0, off = 0;
	int err;

	/* Offset 0 takes the snapshot; buf_len 0 only asks for its size. */
	err = sv_ioctl(fd, SIEVE_IOC_EXPORT, &e);
	if (err)
		return err;
	total = e.total;
	if (total < sizeof(struct sieve_snapshot_header) || total > (1ULL << 31))
		return -ERANGE;
	out = malloc(total);
	while (off < total) {
		memset(&e, 0, sizeof(e));
		e.size = sizeof(e);
		e.id = id;
		e.offset = off;
		e.buf = (uintptr_t)(out + off);
		e.buf_len = chunk < total - off ? chunk : total - off;
		err = sv_ioctl(fd, SIEVE_IOC_EXPORT, &e);
		if (err)
			goto fail;
		if (e.total != total || e.copied == 0 || e.copied > e.buf_len) {
			err = -ERANGE;
			goto fail;
		}
		off += e.copied;
	}
	*buf = out;
	*len = total;
	return 0;
fail:
	free(out);
	return err;
}

int sv_import_all(int fd, const char *name, uint32_t flags, const uint8_t *buf,
		  uint64_t len, uint64_t chunk, uint32_t *id)
{
	uint64_t off = 0;

	*id = 0;
	while (off < len) {
		struct sieve_import im = { .size = sizeof(im), .flags = flags };
		int err;

		snprintf(im.name, sizeof(im.name), "%s", name);
		im.offset = off;
		im.buf = (uintptr_t)(buf + off);
		im.buf_len = chunk < len - off ? chunk : len - off;
		/* The first chunk must hold the whole header. */
		if (off == 0 && im.buf_len < sizeof(struct sieve_snapshot_header))
			im.buf_len = len < sizeof(struct sieve_snapshot_header) ?
				     len : sizeof(struct sieve_snapshot_header);
		err = sv_ioctl(fd, SIEVE_IOC_IMPORT, &im);
		if (err)
			return err;
		off += im.buf_len;
		if (im.id && off != len)
			return -ERANGE;	/* finished before the last byte */
		*id = im.id;
	}
	return 0;
}

/*
 * The snapshot checksum, written from the format's description in
 * <linux/sieve.h> (not from kmod/snapshot.c, so that it checks that code):
 * jhash over the header (checksum read as 0), each layer header, each table
 * in pieces of 4096 bytes and its padding.
 */
static uint32_t sum_bytes(uint32_t h, const uint8_t *p, uint64_t bytes)
{
	while (bytes) {
		uint32_t piece = bytes < 4096 ? bytes : 4096;

		h = jhash(p, piece, h);
		p += piece;
		bytes -= piece;
	}
	return h;
}

uint32_t snapshot_checksum(const uint8_t *buf, uint64_t len)
{
	struct sieve_snapshot_header hdr;
	uint64_t off = sizeof(hdr);
	uint32_t h, i;

	memcpy(&hdr, buf, sizeof(hdr));
	hdr.checksum = 0;
	h = jhash(&hdr, sizeof(hdr), SIEVE_SNAPSHOT_MAGIC);
	for (i = 0; i < hdr.nlayers && i < SIEVE_MAX_LAYERS; i++) {
		struct sieve_snapshot_layer l;
		uint64_t pad;

		if (off + sizeof(l) > len)
			break;
		memcpy(&l, buf + off, sizeof(l));
		h = jhash(&l, sizeof(l), h);
		off += sizeof(l);
		if (l.table_bytes > len - off)
			break;
		h = sum_bytes(h, buf + off, l.table_bytes);
		off += l.table_bytes;
		pad = (8 - l.table_bytes % 8) % 8;
		if (pad > len - off)
			break;
		h = sum_bytes(h, buf + off, pad);
		off += pad;
	}
	return h;
}

void snapshot_reseal(uint8_t *buf, uint64_t len)
{
	struct sieve_snapshot_header *hdr = (void *)buf;

	hdr->checksum = snapshot_checksum(buf, len);
}

uint64_t snapshot_layer_offset(const uint8_t *buf, uint64_t len, uint32_t i)
{
	const struct sieve_snapshot_header *hdr = (const void *)buf;
	uint64_t off = sizeof(*hdr);
	uint32_t j;

	if (i >= hdr->nlayers)
		return 0;
	for (j = 0; j < i; j++) {
		const struct sieve_snapshot_layer *l = (const void *)(buf + off);

		off += sizeof(*l) + l->table_bytes;
		if (off + sizeof(*l) > len)
			return 0;
	}
	return off;
}

/* ---- the module's memory ---------------------------------------------- */

long long param_read(const char *name)
{
	char path[128], line[64];
	FILE *f;
	long long v = -1;

	snprintf(path, sizeof(path), "/sys/module/sieve/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f))
		v = strtoll(line, NULL, 0);
	fclose(f);
	return v;
}

int param_write(const char *name, long long value)
{
	char path[128];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/sys/module/sieve/parameters/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fprintf(f, "%lld\n", value) < 0)
		err = -EIO;
	if (fclose(f))
		err = -errno;
	return err;
}

long long module_memory_bytes(long long *filters)
{
	char line[512], last[512] = "";
	long long n = -1, mem = -1;
	FILE *f = fopen("/proc/sieve", "r");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (line[0] == '#')
				snprintf(last, sizeof(last), "%s", line);
		fclose(f);
		if (sscanf(last, "# filters %lld memory_bytes %lld", &n, &mem) == 2) {
			if (filters)
				*filters = n;
			return mem;
		}
	}
	if (filters)
		*filters = -1;
	return param_read("memory_in_use");
}
