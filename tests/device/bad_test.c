// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/sieve fed bad input, one case per block: each call must fail with
 * the errno the ABI documents for it, and the keys of a Bloom and a cuckoo
 * filter stored beforehand must all still be there afterwards. Each case
 * prints two KTAP results: "CALL: what -> errno" and "CALL: what: known
 * keys intact".
 *
 * Usage: sieve_bad_test
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dev.h"

#define FPP_1PCT	10000000U

static int fd;
static struct known known;
static long page;
/* Two pages: the first mapped read-write, the second not mapped at all. */
static uint8_t *edge;
/* A mapped page that is then unmapped: an address nothing maps. */
static uint8_t *unmapped;
/* A read-only page. */
static uint8_t *rdonly;
/* The known Bloom filter's snapshot, for IMPORT's valid arguments. */
static uint8_t *bloom_snap;
static uint64_t bloom_snap_len;

/* Records "LABEL -> ERR (want WANT)" and the known keys' check. */
static void expect(int err, int want, const char *fmt, ...)
{
	char label[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(label, sizeof(label), fmt, ap);
	va_end(ap);
	ktap_ok(err == want, "%s -> %s (want %s)", label, errname(err), errname(want));
	known_check(&known, label);
}

/* ---- one valid argument per command ---------------------------------- */

static const char *const scratch_names[] = {
	"sz.create", "sz.scratch", "sz.import", "sz.m1", "sz.m2", "sz.x1", "sz.x2",
};

static void scratch_cleanup(void)
{
	uint32_t id;
	size_t i;

	for (i = 0; i < sizeof(scratch_names) / sizeof(scratch_names[0]); i++)
		if (!sv_open_name(fd, scratch_names[i], &id))
			sv_destroy(fd, id);
}

static uint32_t scratch(const char *name, uint32_t type)
{
	uint32_t id = 0, r;

	if (sv_create_simple(fd, name, type, 1000, FPP_1PCT, 0, &id))
		diag("cannot create scratch filter %s", name);
	sv_add(fd, id, "scratch-key", 11, 0, &r);
	return id;
}

static struct sieve_list_entry list_room[16];
static const char query_key[] = "known-1";

/*
 * Fills @buf (zeroed, large) with a valid argument for @cmd; returns its
 * size. The call then succeeds, except where the case breaks it on purpose.
 */
static size_t valid_arg(unsigned long cmd, void *buf)
{
	switch (cmd) {
	case SIEVE_IOC_CREATE: {
		struct sieve_create *c = buf;

		sv_create_arg(c, "sz.create", SIEVE_BLOOM, 100, FPP_1PCT);
		return sizeof(*c);
	}
	case SIEVE_IOC_OPEN: {
		struct sieve_open *o = buf;

		o->size = sizeof(*o);
		strcpy(o->name, known.bloom_name);
		return sizeof(*o);
	}
	case SIEVE_IOC_LIST: {
		struct sieve_list *l = buf;

		*l = (struct sieve_list){ .size = sizeof(*l), .count = 16,
					  .entries = (uintptr_t)list_room };
		return sizeof(*l);
	}
	case SIEVE_IOC_DESTROY:
	case SIEVE_IOC_CLEAR: {
		struct sieve_id *a = buf;

		*a = (struct sieve_id){ .size = sizeof(*a), .id = scratch("sz.scratch", SIEVE_CUCKOO) };
		return sizeof(*a);
	}
	case SIEVE_IOC_ADD:
	case SIEVE_IOC_DELETE: {
		struct sieve_key_op *op = buf;

		*op = (struct sieve_key_op){ .size = sizeof(*op),
					     .id = scratch("sz.scratch", SIEVE_CUCKOO),
					     .key_len = 11, .key = (uintptr_t)"scratch-key" };
		return sizeof(*op);
	}
	case SIEVE_IOC_QUERY: {
		struct sieve_key_op *op = buf;

		*op = (struct sieve_key_op){ .size = sizeof(*op), .id = known.bloom_id,
					     .key_len = strlen(query_key),
					     .key = (uintptr_t)query_key };
		return sizeof(*op);
	}
	case SIEVE_IOC_BATCH: {
		struct sieve_batch *b = buf;
		struct keyset *ks = known.keys;

		*b = (struct sieve_batch){ .size = sizeof(*b), .id = known.cuckoo_id,
					   .op = SIEVE_BATCH_QUERY, .count = ks->n,
					   .keys = (uintptr_t)ks->bytes, .keys_bytes = ks->nbytes,
					   .lens = (uintptr_t)ks->lens,
					   .results = (uintptr_t)ks->results };
		return sizeof(*b);
	}
	case SIEVE_IOC_INFO: {
		struct sieve_info *i = buf;

		i->size = sizeof(*i);
		i->id = known.cuckoo_id;
		return sizeof(*i);
	}
	case SIEVE_IOC_EXPORT: {
		struct sieve_export *e = buf;

		*e = (struct sieve_export){ .size = sizeof(*e), .id = known.bloom_id };
		return sizeof(*e);
	}
	case SIEVE_IOC_IMPORT: {
		struct sieve_import *im = buf;

		*im = (struct sieve_import){ .size = sizeof(*im), .buf = (uintptr_t)bloom_snap,
					     .buf_len = bloom_snap_len };
		strcpy(im->name, "sz.import");
		return sizeof(*im);
	}
	case SIEVE_IOC_MERGE: {
		struct sieve_merge *m = buf;

		*m = (struct sieve_merge){ .size = sizeof(*m),
					   .dst_id = scratch("sz.m1", SIEVE_BLOOM),
					   .src_id = scratch("sz.m2", SIEVE_BLOOM) };
		return sizeof(*m);
	}
	case SIEVE_IOC_EXCHANGE: {
		struct sieve_exchange *x = buf;

		*x = (struct sieve_exchange){ .size = sizeof(*x),
					      .a_id = scratch("sz.x1", SIEVE_CUCKOO),
					      .b_id = scratch("sz.x2", SIEVE_CUCKOO) };
		return sizeof(*x);
	}
	}
	return 0;
}

static const struct {
	unsigned long cmd;
	const char *name;
	/* where __reserved is, or 0 */
	size_t reserved;
	/* where a name is, or 0 */
	size_t name_off;
} cmds[] = {
	{ SIEVE_IOC_CREATE, "CREATE", offsetof(struct sieve_create, __reserved),
	  offsetof(struct sieve_create, name) },
	{ SIEVE_IOC_OPEN, "OPEN", offsetof(struct sieve_open, __reserved),
	  offsetof(struct sieve_open, name) },
	{ SIEVE_IOC_LIST, "LIST", offsetof(struct sieve_list, __reserved), 0 },
	{ SIEVE_IOC_DESTROY, "DESTROY", offsetof(struct sieve_id, __reserved), 0 },
	{ SIEVE_IOC_ADD, "ADD", offsetof(struct sieve_key_op, __reserved), 0 },
	{ SIEVE_IOC_QUERY, "QUERY", offsetof(struct sieve_key_op, __reserved), 0 },
	{ SIEVE_IOC_DELETE, "DELETE", offsetof(struct sieve_key_op, __reserved), 0 },
	{ SIEVE_IOC_BATCH, "BATCH", offsetof(struct sieve_batch, __reserved), 0 },
	{ SIEVE_IOC_CLEAR, "CLEAR", offsetof(struct sieve_id, __reserved), 0 },
	{ SIEVE_IOC_INFO, "INFO", 0, 0 },
	{ SIEVE_IOC_EXPORT, "EXPORT", offsetof(struct sieve_export, __reserved), 0 },
	{ SIEVE_IOC_IMPORT, "IMPORT", offsetof(struct sieve_import, __reserved),
	  offsetof(struct sieve_import, name) },
	{ SIEVE_IOC_MERGE, "MERGE", 0, 0 },
	{ SIEVE_IOC_EXCHANGE, "EXCHANGE", 0, 0 },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static uint8_t argbuf[16384] __attribute__((aligned(64)));

static int call(unsigned long cmd, void *arg)
{
	int err = sv_ioctl(fd, cmd, arg);

	scratch_cleanup();
	return err;
}

/* ---- sizes ------------------------------------------------------------ */

static void bad_size_zero(unsigned int c)
{
	memset(argbuf, 0, sizeof(argbuf));
	valid_arg(cmds[c].cmd, argbuf);
	*(uint32_t *)argbuf = 0;
	expect(call(cmds[c].cmd, argbuf), -EINVAL, "%s: size 0", cmds[c].name);
}

static void bad_size_short(unsigned int c)
{
	size_t size;

	memset(argbuf, 0, sizeof(argbuf));
	size = valid_arg(cmds[c].cmd, argbuf);
	*(uint32_t *)argbuf = size - 4;
	expect(call(cmds[c].cmd, argbuf), -EINVAL, "%s: size one field short (%zu)",
	       cmds[c].name, size - 4);
}

static void bad_size_tail_nonzero(unsigned int c)
{
	size_t size;

	memset(argbuf, 0, sizeof(argbuf));
	size = valid_arg(cmds[c].cmd, argbuf);
	*(uint32_t *)argbuf = size + 64;
	argbuf[size + 63] = 1;
	expect(call(cmds[c].cmd, argbuf), -E2BIG, "%s: size +64 with a nonzero tail",
	       cmds[c].name);
}

static void good_size_tail_zero(unsigned int c)
{
	size_t size;

	memset(argbuf, 0, sizeof(argbuf));
	size = valid_arg(cmds[c].cmd, argbuf);
	*(uint32_t *)argbuf = size + 64;
	expect(call(cmds[c].cmd, argbuf), 0, "%s: size +64 with a zero tail (a newer caller)",
	       cmds[c].name);
}

static void good_size_tail_page(unsigned int c)
{
	memset(argbuf, 0, sizeof(argbuf));
	valid_arg(cmds[c].cmd, argbuf);
	*(uint32_t *)argbuf = 4096;
	expect(call(cmds[c].cmd, argbuf), 0, "%s: size 4096 with a zero tail", cmds[c].name);
}

/* @size is at most 4096 (as for clone3()): even a zero tail past it is refused. */
static void bad_size_over_page(void)
{
	memset(argbuf, 0, sizeof(argbuf));
	valid_arg(SIEVE_IOC_INFO, argbuf);
	*(uint32_t *)argbuf = 4097;
	expect(call(SIEVE_IOC_INFO, argbuf), -E2BIG, "INFO: size 4097 with a zero tail");
	*(uint32_t *)argbuf = 12288;
	expect(call(SIEVE_IOC_INFO, argbuf), -E2BIG, "INFO: size 12288 with a zero tail");
}

/* The struct fits, its zero tail runs into an unmapped page. */
static void bad_size_tail_unmapped(unsigned int c)
{
	size_t size;
	uint8_t *arg;

	memset(argbuf, 0, sizeof(argbuf));
	size = valid_arg(cmds[c].cmd, argbuf);
	arg = edge + page - size - 8;
	memset(edge, 0, page);
	memcpy(arg, argbuf, size);
	*(uint32_t *)arg = size + 64;
	expect(call(cmds[c].cmd, arg), -EFAULT, "%s: size +64 whose tail is unmapped",
	       cmds[c].name);
}

/* ---- flags and reserved fields ---------------------------------------- */

static void bad_flags_unknown(unsigned int c)
{
	memset(argbuf, 0, sizeof(argbuf));
	valid_arg(cmds[c].cmd, argbuf);
	((uint32_t *)argbuf)[1] = 1U << 31;
	expect(call(cmds[c].cmd, argbuf), -EINVAL, "%s: unknown flag 1<<31", cmds[c].name);
}

/* Commands whose flags must be 0 refuse the one flag others know. */
static void bad_flags_not_zero(unsigned int c)
{
	unsigned long cmd = cmds[c].cmd;

	if (cmd == SIEVE_IOC_CREATE || cmd == SIEVE_IOC_IMPORT || cmd == SIEVE_IOC_ADD)
		return;
	memset(argbuf, 0, sizeof(argbuf));
	valid_arg(cmd, argbuf);
	((uint32_t *)argbuf)[1] = 1;
	expect(call(cmd, argbuf), -EINVAL, "%s: flags 1 where flags must be 0", cmds[c].name);
}

static void bad_reserved(unsigned int c)
{
	if (!cmds[c].reserved)
		return;
	memset(argbuf, 0, sizeof(argbuf));
	valid_arg(cmds[c].cmd, argbuf);
	argbuf[cmds[c].reserved] = 1;
	expect(call(cmds[c].cmd, argbuf), -EINVAL, "%s: nonzero __reserved", cmds[c].name);
}

/* ---- pointers to the struct itself -------------------------------------- */

static void bad_arg_null(unsigned int c)
{
	expect(call(cmds[c].cmd, NULL), -EFAULT, "%s: argument NULL", cmds[c].name);
}

static void bad_arg_unmapped(unsigned int c)
{
	expect(call(cmds[c].cmd, unmapped), -EFAULT, "%s: argument unmapped", cmds[c].name);
}

static void bad_arg_kernel(unsigned int c)
{
	expect(call(cmds[c].cmd, (void *)(uintptr_t)KERNEL_PTR), -EFAULT,
	       "%s: argument at a kernel address", cmds[c].name);
}

/* Size readable, the rest of the struct in an unmapped page. */
static void bad_arg_split(unsigned int c)
{
	size_t size;
	uint8_t *arg = edge + page - 8;

	memset(argbuf, 0, sizeof(argbuf));
	size = valid_arg(cmds[c].cmd, argbuf);
	memcpy(arg, argbuf, 8);
	(void)size;
	expect(call(cmds[c].cmd, arg), -EFAULT, "%s: struct running into an unmapped page",
	       cmds[c].name);
}

/* Readable but not writable: the answer cannot be written back. */
static void bad_arg_read_only(unsigned int c)
{
	unsigned long cmd = cmds[c].cmd;
	size_t size;

	/* DESTROY, CLEAR, MERGE and EXCHANGE write nothing back. */
	if (cmd == SIEVE_IOC_DESTROY || cmd == SIEVE_IOC_CLEAR || cmd == SIEVE_IOC_MERGE ||
	    cmd == SIEVE_IOC_EXCHANGE)
		return;
	memset(argbuf, 0, sizeof(argbuf));
	size = valid_arg(cmd, argbuf);
	mprotect(rdonly, page, PROT_READ | PROT_WRITE);
	memcpy(rdonly, argbuf, size);
	mprotect(rdonly, page, PROT_READ);
	expect(call(cmd, rdonly), -EFAULT, "%s: struct in a read-only page", cmds[c].name);
}

/* ---- commands --------------------------------------------------------- */

static void bad_commands(void)
{
	static const struct {
		unsigned long cmd;
		const char *what;
	} bad[] = {
		{ _IO(SIEVE_IOC_MAGIC, 0x0e), "_IO(0xB9, 0x0e), one past the last" },
		{ _IO(SIEVE_IOC_MAGIC, 0xff), "_IO(0xB9, 0xff)" },
		{ _IOWR(SIEVE_IOC_MAGIC, 0x00, struct sieve_create), "_IOWR(0xB9, 0, create)" },
		{ _IOR(SIEVE_IOC_MAGIC, 0x09, struct sieve_info), "_IOR(0xB9, 9, info)" },
		{ _IO('x', 0x04), "_IO('x', 4): another magic" },
		{ 0xdeadbeef, "0xdeadbeef" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(argbuf, 0, sizeof(argbuf));
		valid_arg(SIEVE_IOC_INFO, argbuf);
		expect(call(bad[i].cmd, argbuf), -ENOTTY, "unknown command %s", bad[i].what);
	}
}

/* ---- CREATE's fields -------------------------------------------------- */

static void create_case(const char *what, int want, void (*mutate)(struct sieve_create *))
{
	struct sieve_create c;

	sv_create_arg(&c, "sz.create", SIEVE_BLOOM, 100, FPP_1PCT);
	mutate(&c);
	expect(call(SIEVE_IOC_CREATE, &c), want, "CREATE: %s", what);
}

static void m_type0(struct sieve_create *c) { c->type = 0; }
static void m_type4(struct sieve_create *c) { c->type = 4; }
static void m_fpp0(struct sieve_create *c) { c->fpp_ppb = 0; }
static void m_fpp1(struct sieve_create *c) { c->fpp_ppb = SIEVE_PPB; }
static void m_cap0(struct sieve_create *c) { c->capacity = 0; }
static void m_cuckoo_fpp(struct sieve_create *c) { c->type = SIEVE_CUCKOO; c->fpp_ppb = 10000; }
static void m_seed_noflag(struct sieve_create *c) { c->seed = 5; }
static void m_growth_plain(struct sieve_create *c) { c->growth = 2; }
static void m_layers_plain(struct sieve_create *c) { c->max_layers = 2; }
static void m_growth1(struct sieve_create *c)
{
	c->flags = SIEVE_CREATE_SCALABLE;
	c->growth = 1;
}
static void m_growth17(struct sieve_create *c)
{
	c->flags = SIEVE_CREATE_SCALABLE;
	c->growth = 17;
}
static void m_layers1(struct sieve_create *c)
{
	c->flags = SIEVE_CREATE_SCALABLE;
	c->max_layers = 1;
}
static void m_layers33(struct sieve_create *c)
{
	c->flags = SIEVE_CREATE_SCALABLE;
	c->max_layers = SIEVE_MAX_LAYERS + 1;
}
static void m_geo_noflag(struct sieve_create *c) { c->geo.nbits = 1024; }
static void m_geo_scalable(struct sieve_create *c)
{
	c->flags = SIEVE_CREATE_GEOMETRY | SIEVE_CREATE_SCALABLE;
	c->geo = (struct sieve_geometry){ .type = SIEVE_BLOOM, .nbits = 1024, .nhashes = 3 };
	c->capacity = 0;
	c->fpp_ppb = 0;
}
static void m_geo(struct sieve_create *c, struct sieve_geometry g)
{
	c->flags = SIEVE_CREATE_GEOMETRY;
	c->capacity = 0;
	c->fpp_ppb = 0;
	c->type = g.type;
	c->geo = g;
}
static void m_geo_type(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_BLOOM, .nbits = 1024, .nhashes = 3 });
	c->type = SIEVE_BLOCKED_BLOOM;
}
static void m_geo_seed(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_BLOOM, .seed = 3, .nbits = 1024,
					  .nhashes = 3 });
}
static void m_geo_nbits63(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_BLOOM, .nbits = 63, .nhashes = 3 });
}
static void m_geo_k0(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_BLOOM, .nbits = 1024, .nhashes = 0 });
}
static void m_geo_k33(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_BLOOM, .nbits = 1024, .nhashes = 33 });
}
static void m_geo_bloom_buckets(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_BLOOM, .nbits = 1024, .nhashes = 3,
					  .nbuckets = 4 });
}
static void m_geo_blocked_1000(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_BLOCKED_BLOOM, .nbits = 1000,
					  .nhashes = 3 });
}
static void m_geo_buckets3(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_CUCKOO, .nbuckets = 3, .fp_bits = 8 });
}
static void m_geo_fp3(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_CUCKOO, .nbuckets = 16, .fp_bits = 3 });
}
static void m_geo_fp17(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_CUCKOO, .nbuckets = 16, .fp_bits = 17 });
}
static void m_geo_huge(struct sieve_create *c)
{
	m_geo(c, (struct sieve_geometry){ .type = SIEVE_BLOOM, .nbits = 1ULL << 40,
					  .nhashes = 3 });
}

static void bad_create_fields(void)
{
	create_case("type 0", -EINVAL, m_type0);
	create_case("type 4", -EINVAL, m_type4);
	create_case("fpp_ppb 0", -EINVAL, m_fpp0);
	create_case("fpp_ppb 10^9", -EINVAL, m_fpp1);
	create_case("capacity 0", -EINVAL, m_cap0);
	create_case("cuckoo at 1e-5 (needs > 16 fingerprint bits)", -EINVAL, m_cuckoo_fpp);
	create_case("seed without SEED", -EINVAL, m_seed_noflag);
	create_case("growth without SCALABLE", -EINVAL, m_growth_plain);
	create_case("max_layers without SCALABLE", -EINVAL, m_layers_plain);
	create_case("scalable growth 1", -EINVAL, m_growth1);
	create_case("scalable growth 17", -EINVAL, m_growth17);
	create_case("scalable max_layers 1", -EINVAL, m_layers1);
	create_case("scalable max_layers 33", -EINVAL, m_layers33);
	create_case("geo without GEOMETRY", -EINVAL, m_geo_noflag);
	create_case("GEOMETRY with SCALABLE", -EINVAL, m_geo_scalable);
	create_case("geo.type other than type", -EINVAL, m_geo_type);
	create_case("geo.seed nonzero", -EINVAL, m_geo_seed);
	create_case("bloom nbits 63", -EINVAL, m_geo_nbits63);
	create_case("bloom nhashes 0", -EINVAL, m_geo_k0);
	create_case("bloom nhashes 33", -EINVAL, m_geo_k33);
	create_case("bloom with nbuckets", -EINVAL, m_geo_bloom_buckets);
	create_case("blocked nbits 1000 (not a multiple of 512)", -EINVAL, m_geo_blocked_1000);
	create_case("cuckoo nbuckets 3", -EINVAL, m_geo_buckets3);
	create_case("cuckoo fp_bits 3", -EINVAL, m_geo_fp3);
	create_case("cuckoo fp_bits 17", -EINVAL, m_geo_fp17);
	create_case("bloom nbits 2^40 (128 GiB table)", -E2BIG, m_geo_huge);
}

/* ---- names ------------------------------------------------------------ */

static void name_case(unsigned long cmd, const char *cname, const char *what, const char *name,
		      size_t name_len, int want)
{
	size_t off = cmd == SIEVE_IOC_CREATE ? offsetof(struct sieve_create, name) :
		     cmd == SIEVE_IOC_OPEN ? offsetof(struct sieve_open, name) :
		     offsetof(struct sieve_import, name);

	memset(argbuf, 0, sizeof(argbuf));
	valid_arg(cmd, argbuf);
	memset(argbuf + off, 0, SIEVE_NAME_MAX);
	memcpy(argbuf + off, name, name_len);
	expect(call(cmd, argbuf), want, "%s: name %s", cname, what);
}

static void bad_names(void)
{
	static const char n32[] = "abcdefghijabcdefghijabcdefghij12";
	static const unsigned long ncmds[] = { SIEVE_IOC_CREATE, SIEVE_IOC_OPEN, SIEVE_IOC_IMPORT };
	static const char *const cn[] = { "CREATE", "OPEN", "IMPORT" };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		name_case(ncmds[i], cn[i], "empty", "", 0, -EINVAL);
		name_case(ncmds[i], cn[i], "32 bytes, no NUL", n32, 32, -ENAMETOOLONG);
		name_case(ncmds[i], cn[i], "with a space", "a b", 3, -EINVAL);
		name_case(ncmds[i], cn[i], "with a slash", "a/b", 3, -EINVAL);
		name_case(ncmds[i], cn[i], "with a UTF-8 letter", "caf\xc3\xa9", 5, -EINVAL);
		name_case(ncmds[i], cn[i], "with a newline", "a\nb", 3, -EINVAL);
		name_case(ncmds[i], cn[i], "with bytes after the NUL", "ab\0cd", 5, -EINVAL);
	}
	/* 31 bytes is the longest name: it must work. */
	name_case(SIEVE_IOC_CREATE, "CREATE", "of 31 bytes", n32, 31, 0);
	name_case(SIEVE_IOC_CREATE, "CREATE", "taken (the known Bloom filter's)",
		  known.bloom_name, strlen(known.bloom_name), -EEXIST);
	name_case(SIEVE_IOC_IMPORT, "IMPORT", "taken (the known cuckoo filter's)",
		  known.cuckoo_name, strlen(known.cuckoo_name), -EEXIST);
	name_case(SIEVE_IOC_OPEN, "OPEN", "that no filter has", "no.such.filter", 14, -ENOENT);
}

/* ---- keys ------------------------------------------------------------- */

static uint8_t bigkey[SIEVE_MAX_KEY_LEN + 1];

static void key_case(unsigned long cmd, const char *cname, const char *what, const void *key,
		     uint32_t len, int want)
{
	struct sieve_key_op op;

	memset(&op, 0, sizeof(op));
	valid_arg(cmd, &op);
	op.key = (uintptr_t)key;
	op.key_len = len;
	expect(call(cmd, &op), want, "%s: %s", cname, what);
}

static void bad_keys(void)
{
	static const unsigned long kc[] = { SIEVE_IOC_ADD, SIEVE_IOC_QUERY, SIEVE_IOC_DELETE };
	static const char *const kn[] = { "ADD", "QUERY", "DELETE" };
	unsigned int i;

	memset(bigkey, 'k', sizeof(bigkey));
	for (i = 0; i < 3; i++) {
		key_case(kc[i], kn[i], "key_len 0", "x", 0, -EINVAL);
		key_case(kc[i], kn[i], "key_len 4097", bigkey, SIEVE_MAX_KEY_LEN + 1, -EINVAL);
		key_case(kc[i], kn[i], "key_len 2^32-1", bigkey, UINT32_MAX, -EINVAL);
		key_case(kc[i], kn[i], "key_len 4096 (the longest)", bigkey, SIEVE_MAX_KEY_LEN, 0);
		key_case(kc[i], kn[i], "key NULL", NULL, 8, -EFAULT);
		key_case(kc[i], kn[i], "key unmapped", unmapped, 8, -EFAULT);
		key_case(kc[i], kn[i], "key at a kernel address", (void *)(uintptr_t)KERNEL_PTR, 8,
			 -EFAULT);
		key_case(kc[i], kn[i], "key running into an unmapped page", edge + page - 4, 8,
			 -EFAULT);
	}
	{
		struct sieve_key_op op;

		memset(&op, 0, sizeof(op));
		valid_arg(SIEVE_IOC_QUERY, &op);
		op.flags = SIEVE_ADD_IF_ABSENT;
		expect(call(SIEVE_IOC_QUERY, &op), -EINVAL, "QUERY: flag IF_ABSENT");
		memset(&op, 0, sizeof(op));
		valid_arg(SIEVE_IOC_DELETE, &op);
		op.flags = SIEVE_ADD_IF_ABSENT;
		expect(call(SIEVE_IOC_DELETE, &op), -EINVAL, "DELETE: flag IF_ABSENT");
		memset(&op, 0, sizeof(op));
		valid_arg(SIEVE_IOC_ADD, &op);
		op.flags = 2;
		expect(call(SIEVE_IOC_ADD, &op), -EINVAL, "ADD: unknown add flag 2");
	}
}

/* ---- batches ---------------------------------------------------------- */

static struct sieve_batch batch_arg(struct keyset *ks, uint32_t id, uint32_t op)
{
	return (struct sieve_batch){ .size = sizeof(struct sieve_batch), .id = id, .op = op,
				     .count = ks->n, .keys = (uintptr_t)ks->bytes,
				     .keys_bytes = ks->nbytes, .lens = (uintptr_t)ks->lens,
				     .results = (uintptr_t)ks->results };
}

/*
 * A batch ADD into a fresh cuckoo filter that must fail with @want: the
 * keys before @done are in, the rest are not ("the rest were not touched").
 */
static void batch_add_case(const char *what, int want, void (*mutate)(struct sieve_batch *,
								   struct keyset *))
{
	struct keyset *ks = keyset_make("batch", 0, 600);
	struct sieve_batch b;
	uint32_t id = scratch("sz.scratch", SIEVE_CUCKOO), i, wrong = 0;
	int err;

	b = batch_arg(ks, id, SIEVE_BATCH_ADD);
	mutate(&b, ks);
	err = sv_ioctl(fd, SIEVE_IOC_BATCH, &b);
	ktap_ok(err == want, "BATCH: %s -> %s (want %s), done %u", what, errname(err),
		errname(want), b.done);
	for (i = 0; i < ks->n; i++) {
		uint32_t len, r = 0;
		const uint8_t *k = keyset_key(ks, i, &len);

		if (len < 1 || len > SIEVE_MAX_KEY_LEN)
			continue;
		sv_query(fd, id, k, len, &r);
		wrong += r != (i < b.done);
	}
	ktap_ok(b.done <= ks->n && wrong == 0,
		"BATCH: %s: exactly the %u keys reported done were applied (%u wrong)", what,
		b.done, wrong);
	known_check(&known, what);
	scratch_cleanup();
	keyset_free(ks);
}

static void mb_count0(struct sieve_batch *b, struct keyset *ks) { b->count = 0; }
static void mb_count_max1(struct sieve_batch *b, struct keyset *ks) { b->count = SIEVE_MAX_BATCH + 1; }
static void mb_count_huge(struct sieve_batch *b, struct keyset *ks) { b->count = UINT32_MAX; }
static void mb_bytes_more(struct sieve_batch *b, struct keyset *ks) { b->keys_bytes++; }
static void mb_bytes_less(struct sieve_batch *b, struct keyset *ks) { b->keys_bytes--; }
static void mb_bytes_huge(struct sieve_batch *b, struct keyset *ks) { b->keys_bytes = 1ULL << 62; }
static void mb_len0(struct sieve_batch *b, struct keyset *ks)
{
	/* key 300 loses its bytes to key 299: keys_bytes still matches */
	ks->lens[299] += ks->lens[300];
	ks->lens[300] = 0;
}
static void mb_len_big(struct sieve_batch *b, struct keyset *ks)
{
	ks->lens[300] = SIEVE_MAX_KEY_LEN + 1;
	b->keys_bytes = 0;
	for (uint32_t i = 0; i < ks->n; i++)
		b->keys_bytes += ks->lens[i];
}
static void mb_op0(struct sieve_batch *b, struct keyset *ks) { b->op = 0; }
static void mb_op4(struct sieve_batch *b, struct keyset *ks) { b->op = 4; }
static void mb_keys_null(struct sieve_batch *b, struct keyset *ks) { b->keys = 0; }
static void mb_keys_unmapped(struct sieve_batch *b, struct keyset *ks) { b->keys = (uintptr_t)unmapped; }
static void mb_keys_kernel(struct sieve_batch *b, struct keyset *ks) { b->keys = KERNEL_PTR; }
static void mb_lens_null(struct sieve_batch *b, struct keyset *ks) { b->lens = 0; }
static void mb_lens_unmapped(struct sieve_batch *b, struct keyset *ks) { b->lens = (uintptr_t)unmapped; }
static void mb_lens_kernel(struct sieve_batch *b, struct keyset *ks) { b->lens = KERNEL_PTR; }
static void mb_results_unmapped(struct sieve_batch *b, struct keyset *ks) { b->results = (uintptr_t)unmapped; }
static void mb_results_kernel(struct sieve_batch *b, struct keyset *ks) { b->results = KERNEL_PTR; }
static void mb_results_ro(struct sieve_batch *b, struct keyset *ks) { b->results = (uintptr_t)rdonly; }
static void mb_if_absent_query(struct sieve_batch *b, struct keyset *ks)
{
	b->op = SIEVE_BATCH_QUERY;
	b->flags = SIEVE_ADD_IF_ABSENT;
}
/* Keys whose last bytes are in an unmapped page: the first keys are fine. */
static void mb_keys_edge(struct sieve_batch *b, struct keyset *ks)
{
	uint64_t n = ks->nbytes < (uint64_t)page ? ks->nbytes : (uint64_t)page;

	memcpy(edge + page - n + 16, ks->bytes, n - 16);
	b->keys = (uintptr_t)(edge + page - n + 16);
}

static void good_results_null(void)
{
	struct keyset *ks = known.keys;
	struct sieve_batch b = batch_arg(ks, known.bloom_id, SIEVE_BATCH_QUERY);
	int err;

	b.results = 0;
	err = sv_ioctl(fd, SIEVE_IOC_BATCH, &b);
	ktap_ok(!err && b.done == ks->n && b.present == ks->n,
		"BATCH: results 0 (only present wanted) -> %s, present %u", errname(err), b.present);
	known_check(&known, "BATCH: results 0");
}

static void bad_batches(void)
{
	batch_add_case("count 0", -EINVAL, mb_count0);
	batch_add_case("count 2^20 + 1", -EINVAL, mb_count_max1);
	batch_add_case("count 2^32 - 1", -EINVAL, mb_count_huge);
	batch_add_case("keys_bytes one more than the lens", -EINVAL, mb_bytes_more);
	batch_add_case("keys_bytes one less than the lens", -EINVAL, mb_bytes_less);
	batch_add_case("keys_bytes 2^62", -EINVAL, mb_bytes_huge);
	batch_add_case("key 300 of length 0", -EINVAL, mb_len0);
	batch_add_case("key 300 of length 4097", -EINVAL, mb_len_big);
	batch_add_case("op 0", -EINVAL, mb_op0);
	batch_add_case("op 4", -EINVAL, mb_op4);
	batch_add_case("keys NULL", -EFAULT, mb_keys_null);
	batch_add_case("keys unmapped", -EFAULT, mb_keys_unmapped);
	batch_add_case("keys at a kernel address", -EFAULT, mb_keys_kernel);
	batch_add_case("keys running into an unmapped page", -EFAULT, mb_keys_edge);
	batch_add_case("lens NULL", -EFAULT, mb_lens_null);
	batch_add_case("lens unmapped", -EFAULT, mb_lens_unmapped);
	batch_add_case("lens at a kernel address", -EFAULT, mb_lens_kernel);
	batch_add_case("results unmapped", -EFAULT, mb_results_unmapped);
	batch_add_case("results at a kernel address", -EFAULT, mb_results_kernel);
	batch_add_case("results read-only", -EFAULT, mb_results_ro);
	batch_add_case("QUERY with IF_ABSENT", -EINVAL, mb_if_absent_query);
	good_results_null();
}

/* ---- LIST, EXPORT ----------------------------------------------------- */

static void bad_list(void)
{
	struct sieve_list l;

	valid_arg(SIEVE_IOC_LIST, &l);
	l.count = 4097;
	expect(call(SIEVE_IOC_LIST, &l), -EINVAL, "LIST: count 4097");
	valid_arg(SIEVE_IOC_LIST, &l);
	l.entries = 0;
	expect(call(SIEVE_IOC_LIST, &l), -EFAULT, "LIST: entries NULL");
	valid_arg(SIEVE_IOC_LIST, &l);
	l.entries = KERNEL_PTR;
	expect(call(SIEVE_IOC_LIST, &l), -EFAULT, "LIST: entries at a kernel address");
	valid_arg(SIEVE_IOC_LIST, &l);
	l.entries = (uintptr_t)rdonly;
	expect(call(SIEVE_IOC_LIST, &l), -EFAULT, "LIST: entries read-only");
}

static void bad_export(void)
{
	struct sieve_export e;
	uint8_t buf[64];
	int fd2 = dev_open(O_RDWR);

	/* no snapshot held on this new file */
	e = (struct sieve_export){ .size = sizeof(e), .id = known.bloom_id, .offset = 8,
				   .buf = (uintptr_t)buf, .buf_len = 8 };
	expect(sv_ioctl(fd2, SIEVE_IOC_EXPORT, &e), -EINVAL, "EXPORT: offset 8 with no snapshot");
	e = (struct sieve_export){ .size = sizeof(e), .id = known.bloom_id };
	sv_ioctl(fd2, SIEVE_IOC_EXPORT, &e);
	e.offset = e.total + 1;
	e.buf = (uintptr_t)buf;
	e.buf_len = 8;
	expect(sv_ioctl(fd2, SIEVE_IOC_EXPORT, &e), -EINVAL, "EXPORT: offset past the end");
	e = (struct sieve_export){ .size = sizeof(e), .id = known.cuckoo_id, .offset = 8,
				   .buf = (uintptr_t)buf, .buf_len = 8 };
	expect(sv_ioctl(fd2, SIEVE_IOC_EXPORT, &e), -EINVAL,
	       "EXPORT: offset 8 of another filter than the one held");
	e = (struct sieve_export){ .size = sizeof(e), .id = known.bloom_id,
				   .buf = 0, .buf_len = 64 };
	expect(sv_ioctl(fd2, SIEVE_IOC_EXPORT, &e), -EFAULT, "EXPORT: buf NULL");
	e = (struct sieve_export){ .size = sizeof(e), .id = known.bloom_id,
				   .buf = KERNEL_PTR, .buf_len = 64 };
	expect(sv_ioctl(fd2, SIEVE_IOC_EXPORT, &e), -EFAULT, "EXPORT: buf at a kernel address");
	e = (struct sieve_export){ .size = sizeof(e), .id = known.bloom_id,
				   .buf = (uintptr_t)rdonly, .buf_len = 64 };
	expect(sv_ioctl(fd2, SIEVE_IOC_EXPORT, &e), -EFAULT, "EXPORT: buf read-only");
	close(fd2);
}

/* ---- stale ids -------------------------------------------------------- */

static void bad_stale_ids(void)
{
	static const unsigned long sc[] = {
		SIEVE_IOC_DESTROY, SIEVE_IOC_ADD, SIEVE_IOC_QUERY, SIEVE_IOC_DELETE,
		SIEVE_IOC_BATCH, SIEVE_IOC_CLEAR, SIEVE_IOC_INFO, SIEVE_IOC_EXPORT,
	};
	static const char *const sn[] = {
		"DESTROY", "ADD", "QUERY", "DELETE", "BATCH", "CLEAR", "INFO", "EXPORT",
	};
	/* where the id is in each struct */
	static const size_t idoff[] = {
		offsetof(struct sieve_id, id), offsetof(struct sieve_key_op, id),
		offsetof(struct sieve_key_op, id), offsetof(struct sieve_key_op, id),
		offsetof(struct sieve_batch, id), offsetof(struct sieve_id, id),
		offsetof(struct sieve_info, id), offsetof(struct sieve_export, id),
	};
	static const uint32_t odd_ids[] = { 0, UINT32_MAX };
	uint32_t stale, i, j;

	stale = scratch("sz.scratch", SIEVE_BLOOM);
	sv_destroy(fd, stale);
	for (i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		memset(argbuf, 0, sizeof(argbuf));
		valid_arg(sc[i], argbuf);
		scratch_cleanup();
		memcpy(argbuf + idoff[i], &stale, 4);
		expect(call(sc[i], argbuf), -ENOENT, "%s: the id of a destroyed filter", sn[i]);
		for (j = 0; j < 2; j++) {
			memset(argbuf, 0, sizeof(argbuf));
			valid_arg(sc[i], argbuf);
			scratch_cleanup();
			memcpy(argbuf + idoff[i], &odd_ids[j], 4);
			expect(call(sc[i], argbuf), -ENOENT, "%s: id %u", sn[i], odd_ids[j]);
		}
	}
	{
		struct sieve_merge m;

		valid_arg(SIEVE_IOC_MERGE, &m);
		m.dst_id = stale;
		expect(call(SIEVE_IOC_MERGE, &m), -ENOENT, "MERGE: dst destroyed");
		valid_arg(SIEVE_IOC_MERGE, &m);
		m.src_id = stale;
		expect(call(SIEVE_IOC_MERGE, &m), -ENOENT, "MERGE: src destroyed");
	}
	{
		struct sieve_exchange x;

		valid_arg(SIEVE_IOC_EXCHANGE, &x);
		x.a_id = stale;
		expect(call(SIEVE_IOC_EXCHANGE, &x), -ENOENT, "EXCHANGE: a destroyed");
		valid_arg(SIEVE_IOC_EXCHANGE, &x);
		x.b_id = stale;
		expect(call(SIEVE_IOC_EXCHANGE, &x), -ENOENT, "EXCHANGE: b destroyed");
	}
	{
		uint32_t fresh = scratch("sz.scratch", SIEVE_BLOOM);

		ktap_ok(fresh != stale, "CREATE after DESTROY: a new id (%u, destroyed %u)", fresh,
			stale);
		scratch_cleanup();
	}
}

/* ---- snapshots -------------------------------------------------------- */

static uint8_t *cuckoo_snap;
static uint64_t cuckoo_snap_len;
static uint8_t *geo_bloom_snap;
static uint64_t geo_bloom_snap_len;
/* A scalable Bloom filter of three layers or more. */
static uint8_t *scal_snap;
static uint64_t scal_snap_len;

#define HDR_NLAYERS(b) (((struct sieve_snapshot_header *)(b))->nlayers)

/*
 * A full 16-bucket cuckoo table (victim slot used), a 1000-bit Bloom and a
 * scalable Bloom filter of three layers or more.
 */
static int make_snapshots(void)
{
	struct sieve_create c;
	struct keyset *ks = keyset_make("snap", 0, 100);
	int err;

	sv_create_arg(&c, "sz.snapc", SIEVE_CUCKOO, 0, 0);
	c.flags = SIEVE_CREATE_GEOMETRY;
	c.geo = (struct sieve_geometry){ .type = SIEVE_CUCKOO, .nbuckets = 16, .fp_bits = 12 };
	err = sv_create(fd, &c);
	/* 100 keys into 64 slots: the table fills, and -ENOSPC is expected. */
	if (!err)
		sv_add_each(fd, c.id, ks, NULL);
	err = sv_export_all(fd, c.id, 1 << 20, &cuckoo_snap, &cuckoo_snap_len);
	sv_destroy(fd, c.id);
	if (err)
		return err;
	sv_create_arg(&c, "sz.snapb", SIEVE_BLOOM, 0, 0);
	c.flags = SIEVE_CREATE_GEOMETRY;
	c.geo = (struct sieve_geometry){ .type = SIEVE_BLOOM, .nbits = 1000, .nhashes = 4 };
	err = sv_create(fd, &c);
	if (!err)
		sv_batch(fd, c.id, SIEVE_BATCH_ADD, 0, ks, NULL);
	err = err ? err : sv_export_all(fd, c.id, 1 << 20, &geo_bloom_snap, &geo_bloom_snap_len);
	sv_destroy(fd, c.id);
	keyset_free(ks);
	if (err)
		return err;
	ks = keyset_make("scal", 0, 500);
	err = sv_create_simple(fd, "sz.snaps", SIEVE_BLOOM, 64, FPP_1PCT, SIEVE_CREATE_SCALABLE,
			       &c.id);
	err = err ? err : sv_batch(fd, c.id, SIEVE_BATCH_ADD, 0, ks, NULL);
	err = err ? err : sv_export_all(fd, c.id, 1 << 20, &scal_snap, &scal_snap_len);
	sv_destroy(fd, c.id);
	keyset_free(ks);
	if (!err && HDR_NLAYERS(scal_snap) < 3)
		err = -ERANGE;
	return err;
}

/* Imports a copy of @snap changed by @mutate (resealed unless @keep_sum). */
static void snap_case(const char *what, const uint8_t *snap, uint64_t len, bool keep_sum,
		      int want, void (*mutate)(uint8_t *buf, uint64_t *len))
{
	uint8_t *buf = malloc(len + 64);
	uint64_t blen = len;
	uint32_t id = 0;
	int err;

	memcpy(buf, snap, len);
	memset(buf + len, 0, 64);
	if (mutate)
		mutate(buf, &blen);
	if (!keep_sum)
		snapshot_reseal(buf, blen);
	err = sv_import_all(fd, "sz.import", 0, buf, blen, 1 << 20, &id);
	if (!err && !id)
		err = -EINPROGRESS;	/* took every byte and still waits for more */
	ktap_ok(err == want, "IMPORT: %s -> %s (want %s)", what, errname(err), errname(want));
	if (want)
		ktap_ok(sv_open_name(fd, "sz.import", NULL) == -ENOENT,
			"IMPORT: %s: nothing created", what);
	known_check(&known, what);
	scratch_cleanup();
	free(buf);
}

#define HDR(b) ((struct sieve_snapshot_header *)(b))
#define LAYER(b) ((struct sieve_snapshot_layer *)((b) + sizeof(struct sieve_snapshot_header)))

static void s_magic(uint8_t *b, uint64_t *l) { HDR(b)->magic ^= 1; }
static void s_version1(uint8_t *b, uint64_t *l) { HDR(b)->version = 1; }
static void s_version3(uint8_t *b, uint64_t *l) { HDR(b)->version = 3; }
static void s_version0(uint8_t *b, uint64_t *l) { HDR(b)->version = 0; }
static void s_hbytes(uint8_t *b, uint64_t *l) { HDR(b)->header_bytes = 120; }
static void s_hbytes2(uint8_t *b, uint64_t *l) { HDR(b)->header_bytes = 136; }
static void s_flags_eph(uint8_t *b, uint64_t *l) { HDR(b)->create_flags |= SIEVE_CREATE_EPHEMERAL; }
static void s_flags_unknown(uint8_t *b, uint64_t *l) { HDR(b)->create_flags |= 1U << 4; }
static void s_flags_scalable(uint8_t *b, uint64_t *l) { HDR(b)->create_flags |= SIEVE_CREATE_SCALABLE; }
static void s_type0(uint8_t *b, uint64_t *l) { HDR(b)->type = 0; }
static void s_type4(uint8_t *b, uint64_t *l) { HDR(b)->type = 4; }
static void s_type_other(uint8_t *b, uint64_t *l) { HDR(b)->type = SIEVE_BLOCKED_BLOOM; }
static void s_nlayers0(uint8_t *b, uint64_t *l) { HDR(b)->nlayers = 0; }
static void s_nlayers2(uint8_t *b, uint64_t *l) { HDR(b)->nlayers = 2; }
static void s_maxlayers0(uint8_t *b, uint64_t *l) { HDR(b)->max_layers = 0; }
static void s_maxlayers33(uint8_t *b, uint64_t *l) { HDR(b)->max_layers = 33; }
static void s_growth(uint8_t *b, uint64_t *l) { HDR(b)->growth = 2; }
static void s_fpp(uint8_t *b, uint64_t *l) { HDR(b)->fpp_ppb = SIEVE_PPB; }
static void s_capacity(uint8_t *b, uint64_t *l) { HDR(b)->capacity = SIEVE_MAX_CAPACITY + 1; }
static void s_payload_more(uint8_t *b, uint64_t *l) { HDR(b)->payload_bytes += 8; }
static void s_payload_less(uint8_t *b, uint64_t *l) { HDR(b)->payload_bytes -= 8; }
static void s_checksum(uint8_t *b, uint64_t *l) { HDR(b)->checksum ^= 0x100; }
static void s_table_bit(uint8_t *b, uint64_t *l) { b[*l - 9] ^= 0x10; }
static void s_reserved0(uint8_t *b, uint64_t *l) { HDR(b)->__reserved[0] = 1; }
static void s_reserved10(uint8_t *b, uint64_t *l) { HDR(b)->__reserved[10] = 1; }
static void s_l_type(uint8_t *b, uint64_t *l) { LAYER(b)->geo.type = SIEVE_BLOCKED_BLOOM; }
static void s_l_nbits63(uint8_t *b, uint64_t *l) { LAYER(b)->geo.nbits = 63; }
static void s_l_nbits_big(uint8_t *b, uint64_t *l) { LAYER(b)->geo.nbits = 2048; }
static void s_l_k0(uint8_t *b, uint64_t *l) { LAYER(b)->geo.nhashes = 0; }
static void s_l_k33(uint8_t *b, uint64_t *l) { LAYER(b)->geo.nhashes = 33; }
static void s_l_buckets(uint8_t *b, uint64_t *l) { LAYER(b)->geo.nbuckets = 16; }
static void s_l_table_more(uint8_t *b, uint64_t *l) { LAYER(b)->table_bytes += 8; }
static void s_l_table_less(uint8_t *b, uint64_t *l) { LAYER(b)->table_bytes -= 8; }
static void s_l_victim_bloom(uint8_t *b, uint64_t *l) { LAYER(b)->victim_fp = 1; }
static void s_l_huge(uint8_t *b, uint64_t *l) { LAYER(b)->geo.nbits = 1ULL << 40; }
/* Bit 1023 of a 1000-bit map: past nbits, in the last word. */
static void s_tail_bit(uint8_t *b, uint64_t *l)
{
	b[sizeof(struct sieve_snapshot_header) + sizeof(struct sieve_snapshot_layer) + 127] |= 0x80;
}
static void s_c_nbuckets(uint8_t *b, uint64_t *l) { LAYER(b)->geo.nbuckets = 15; }
static void s_c_fp3(uint8_t *b, uint64_t *l) { LAYER(b)->geo.fp_bits = 3; }
static void s_c_fp17(uint8_t *b, uint64_t *l) { LAYER(b)->geo.fp_bits = 17; }
static void s_c_items(uint8_t *b, uint64_t *l) { LAYER(b)->items += 1; }
static void s_c_victim_big(uint8_t *b, uint64_t *l) { LAYER(b)->victim_fp = 1 << 12; }
static void s_c_victim_bucket(uint8_t *b, uint64_t *l) { LAYER(b)->victim_bucket = 16; }
static void s_c_victim_none(uint8_t *b, uint64_t *l)
{
	/* no victim, yet a bucket: "0 when none" */
	LAYER(b)->items -= LAYER(b)->victim_fp != 0;
	LAYER(b)->victim_fp = 0;
	LAYER(b)->victim_bucket = 3;
}
static void s_c_padding(uint8_t *b, uint64_t *l) { b[*l - 1] = 0x5a; }
static void s_truncate8(uint8_t *b, uint64_t *l) { *l -= 8; }
static void s_longer(uint8_t *b, uint64_t *l) { *l += 8; }

/* The second layer's header of a scalable snapshot. */
static struct sieve_snapshot_layer *layer1(uint8_t *b, uint64_t len)
{
	return (struct sieve_snapshot_layer *)(b + snapshot_layer_offset(b, len, 1));
}

static void s_sc_growth1(uint8_t *b, uint64_t *l) { HDR(b)->growth = 1; }
static void s_sc_growth17(uint8_t *b, uint64_t *l) { HDR(b)->growth = 17; }
static void s_sc_max1(uint8_t *b, uint64_t *l) { HDR(b)->max_layers = 1; }
static void s_sc_max_below(uint8_t *b, uint64_t *l) { HDR(b)->max_layers = HDR(b)->nlayers - 1; }
static void s_sc_noflag(uint8_t *b, uint64_t *l) { HDR(b)->create_flags &= ~SIEVE_CREATE_SCALABLE; }
static void s_sc_l1_seed(uint8_t *b, uint64_t *l) { layer1(b, *l)->geo.seed ^= 1; }
static void s_sc_l1_type(uint8_t *b, uint64_t *l) { layer1(b, *l)->geo.type = SIEVE_BLOCKED_BLOOM; }
static void s_sc_nlayers_less(uint8_t *b, uint64_t *l) { HDR(b)->nlayers -= 1; }

static void bad_snapshot_scalable(void)
{
	const uint8_t *s = scal_snap;
	uint64_t n = scal_snap_len;

	snap_case("untouched scalable snapshot, resealed by the test", s, n, false, 0, NULL);
	snap_case("scalable growth 1", s, n, false, -EINVAL, s_sc_growth1);
	snap_case("scalable growth 17", s, n, false, -EINVAL, s_sc_growth17);
	snap_case("scalable max_layers 1", s, n, false, -EINVAL, s_sc_max1);
	snap_case("scalable nlayers above max_layers", s, n, false, -EINVAL, s_sc_max_below);
	snap_case("several layers without SCALABLE", s, n, false, -EINVAL, s_sc_noflag);
	snap_case("layer 1 seed other than layer 0's", s, n, false, -EINVAL, s_sc_l1_seed);
	snap_case("layer 1 type other than layer 0's", s, n, false, -EINVAL, s_sc_l1_type);
	snap_case("nlayers one less than the layers sent", s, n, false, -EINVAL, s_sc_nlayers_less);
}

static void bad_snapshot_headers(void)
{
	const uint8_t *s = geo_bloom_snap;
	uint64_t n = geo_bloom_snap_len;

	snap_case("untouched 1000-bit Bloom snapshot, resealed by the test", s, n, false, 0, NULL);
	snap_case("untouched full cuckoo snapshot, resealed by the test", cuckoo_snap,
		  cuckoo_snap_len, false, 0, NULL);
	snap_case("header magic", s, n, false, -EINVAL, s_magic);
	/* Another format version: the keys are elsewhere, ENOEXEC says so. */
	snap_case("header version 1 (before the one-pass hash)", s, n, false, -ENOEXEC, s_version1);
	snap_case("header version 3", s, n, false, -ENOEXEC, s_version3);
	snap_case("header version 0", s, n, false, -ENOEXEC, s_version0);
	snap_case("header_bytes 120", s, n, false, -EINVAL, s_hbytes);
	snap_case("header_bytes 136", s, n, false, -EINVAL, s_hbytes2);
	snap_case("create_flags with EPHEMERAL", s, n, false, -EINVAL, s_flags_eph);
	snap_case("create_flags with an unknown bit", s, n, false, -EINVAL, s_flags_unknown);
	snap_case("create_flags SCALABLE on a one-layer explicit geometry", s, n, false, -EINVAL,
		  s_flags_scalable);
	snap_case("type 0", s, n, false, -EINVAL, s_type0);
	snap_case("type 4", s, n, false, -EINVAL, s_type4);
	snap_case("type other than the layer's", s, n, false, -EINVAL, s_type_other);
	snap_case("nlayers 0", s, n, false, -EINVAL, s_nlayers0);
	snap_case("nlayers 2 above max_layers 1", s, n, false, -EINVAL, s_nlayers2);
	snap_case("max_layers 0", s, n, false, -EINVAL, s_maxlayers0);
	snap_case("max_layers 33", s, n, false, -EINVAL, s_maxlayers33);
	snap_case("growth 2 when not scalable", s, n, false, -EINVAL, s_growth);
	snap_case("fpp_ppb 10^9", s, n, false, -EINVAL, s_fpp);
	snap_case("capacity 2^40 + 1", s, n, false, -EINVAL, s_capacity);
	snap_case("payload_bytes 8 more", s, n, false, -EINVAL, s_payload_more);
	snap_case("payload_bytes 8 less", s, n, false, -EINVAL, s_payload_less);
	snap_case("__reserved[0] nonzero", s, n, false, -EINVAL, s_reserved0);
	snap_case("__reserved[10] nonzero", s, n, false, -EINVAL, s_reserved10);
	snap_case("checksum off by one bit", s, n, true, -EINVAL, s_checksum);
	snap_case("a table bit flipped, checksum kept", s, n, true, -EINVAL, s_table_bit);
}

static void bad_snapshot_layers(void)
{
	const uint8_t *s = geo_bloom_snap, *c = cuckoo_snap;
	uint64_t n = geo_bloom_snap_len, cn = cuckoo_snap_len;

	snap_case("layer geo.type other than the header's", s, n, false, -EINVAL, s_l_type);
	snap_case("layer nbits 63", s, n, false, -EINVAL, s_l_nbits63);
	snap_case("layer nbits 2048 (table_bytes says 1000)", s, n, false, -EINVAL, s_l_nbits_big);
	/* IMPORT lists E2BIG for a table over the limit */
	snap_case("layer nbits 2^40", s, n, false, -E2BIG, s_l_huge);
	snap_case("layer nhashes 0", s, n, false, -EINVAL, s_l_k0);
	snap_case("layer nhashes 33", s, n, false, -EINVAL, s_l_k33);
	snap_case("Bloom layer with nbuckets", s, n, false, -EINVAL, s_l_buckets);
	snap_case("layer table_bytes 8 more", s, n, false, -EINVAL, s_l_table_more);
	snap_case("layer table_bytes 8 less", s, n, false, -EINVAL, s_l_table_less);
	snap_case("Bloom layer with a victim", s, n, false, -EINVAL, s_l_victim_bloom);
	snap_case("Bloom tail bits (bit 1023 of 1000) set", s, n, false, -EINVAL, s_tail_bit);
	snap_case("cuckoo nbuckets 15", c, cn, false, -EINVAL, s_c_nbuckets);
	snap_case("cuckoo fp_bits 3", c, cn, false, -EINVAL, s_c_fp3);
	snap_case("cuckoo fp_bits 17", c, cn, false, -EINVAL, s_c_fp17);
	snap_case("cuckoo items one more than the table holds", c, cn, false, -EINVAL, s_c_items);
	snap_case("cuckoo victim_fp 2^fp_bits", c, cn, false, -EINVAL, s_c_victim_big);
	snap_case("cuckoo victim_bucket = nbuckets", c, cn, false, -EINVAL, s_c_victim_bucket);
	snap_case("cuckoo no victim but a victim_bucket", c, cn, false, -EINVAL, s_c_victim_none);
	snap_case("cuckoo padding byte set", c, cn, false, -EINVAL, s_c_padding);
	snap_case("one chunk 8 bytes longer than the snapshot", s, n, false, -EINVAL, s_longer);
	snap_case("truncated by 8 bytes", s, n, false, -EINPROGRESS, s_truncate8);
}

/* The layer header at @at announces a 64 MiB table: four times the limit below. */
static void announce_64m(uint8_t *b, uint64_t at)
{
	struct sieve_snapshot_layer *l = (void *)(b + at);

	l->geo.nbits = 1ULL << 29;
	l->table_bytes = 1ULL << 26;
}

/* The payload ends before the last layer, whose header is sent and nothing after. */
static void s_sc_last_past(uint8_t *b, uint64_t *l)
{
	uint64_t last = snapshot_layer_offset(b, *l, HDR(b)->nlayers - 1);

	HDR(b)->payload_bytes = last - sizeof(struct sieve_snapshot_header);
	announce_64m(b, last);
	*l = last + sizeof(struct sieve_snapshot_layer);
}

/* nlayers one more than the payload holds, that layer's header sent after it. */
static void s_sc_one_more(uint8_t *b, uint64_t *l)
{
	uint64_t last = snapshot_layer_offset(b, *l, HDR(b)->nlayers - 1);

	memcpy(b + *l, b + last, sizeof(struct sieve_snapshot_layer));
	announce_64m(b, *l);
	HDR(b)->nlayers++;
	*l += sizeof(struct sieve_snapshot_layer);
}

/*
 * Only the announced payload is reserved against max_memory_mb: a layer
 * past it is refused at its header, not allocated. With the limit at
 * 16 MiB, a 64 MiB table taken anyway shows as an import that waits for
 * more bytes (-EINPROGRESS) where -EINVAL is due.
 */
static void bad_snapshot_past_payload(void)
{
	long long old_mem = param_read("max_memory_mb");

	ktap_ok(param_write("max_memory_mb", 16) == 0, "max_memory_mb 16 (was %lld)", old_mem);
	snap_case("last layer's header past the payload", scal_snap, scal_snap_len, false,
		  -EINVAL, s_sc_last_past);
	snap_case("one layer more than the payload holds", scal_snap, scal_snap_len, false,
		  -EINVAL, s_sc_one_more);
	ktap_ok(param_write("max_memory_mb", old_mem) == 0, "max_memory_mb restored");
}

/* Chunks in the wrong place. */
static void bad_import_chunks(void)
{
	const uint8_t *s = geo_bloom_snap;
	uint64_t n = geo_bloom_snap_len;
	struct sieve_import im;
	int err;

	/* a fresh file: the earlier cases may have left an import open on fd */
	{
		int fd2 = dev_open(O_RDWR);

		im = (struct sieve_import){ .size = sizeof(im), .offset = 128,
					    .buf = (uintptr_t)(s + 128), .buf_len = n - 128 };
		strcpy(im.name, "sz.import");
		expect(sv_ioctl(fd2, SIEVE_IOC_IMPORT, &im), -EALREADY,
		       "IMPORT: offset 128 with no import started");
		close(fd2);
	}

	im = (struct sieve_import){ .size = sizeof(im), .buf = (uintptr_t)s, .buf_len = 64 };
	strcpy(im.name, "sz.import");
	expect(call(SIEVE_IOC_IMPORT, &im), -EINVAL, "IMPORT: first chunk shorter than the header");

	/* header in, then a chunk that skips 8 bytes */
	im = (struct sieve_import){ .size = sizeof(im), .buf = (uintptr_t)s, .buf_len = 128 };
	strcpy(im.name, "sz.import");
	err = sv_ioctl(fd, SIEVE_IOC_IMPORT, &im);
	im.offset = 136;
	im.buf = (uintptr_t)(s + 136);
	im.buf_len = n - 136;
	expect(err ? err : sv_ioctl(fd, SIEVE_IOC_IMPORT, &im), -EINVAL,
	       "IMPORT: chunk at offset 136 after 128 bytes");
	/* the failed import was dropped: continuing it is refused */
	im.offset = 128;
	im.buf = (uintptr_t)(s + 128);
	im.buf_len = n - 128;
	expect(call(SIEVE_IOC_IMPORT, &im), -EALREADY, "IMPORT: continuing a dropped import");

	/* a chunk going back */
	im = (struct sieve_import){ .size = sizeof(im), .buf = (uintptr_t)s, .buf_len = 136 };
	strcpy(im.name, "sz.import");
	err = sv_ioctl(fd, SIEVE_IOC_IMPORT, &im);
	im.offset = 128;
	im.buf = (uintptr_t)(s + 128);
	im.buf_len = n - 128;
	expect(err ? err : call(SIEVE_IOC_IMPORT, &im), -EINVAL,
	       "IMPORT: chunk at offset 128 after 136 bytes");

	im = (struct sieve_import){ .size = sizeof(im), .buf = (uintptr_t)s, .buf_len = 0 };
	strcpy(im.name, "sz.import");
	expect(call(SIEVE_IOC_IMPORT, &im), -EINVAL, "IMPORT: buf_len 0");
	im = (struct sieve_import){ .size = sizeof(im), .buf = 0, .buf_len = n };
	strcpy(im.name, "sz.import");
	expect(call(SIEVE_IOC_IMPORT, &im), -EFAULT, "IMPORT: buf NULL");
	im = (struct sieve_import){ .size = sizeof(im), .buf = KERNEL_PTR, .buf_len = n };
	strcpy(im.name, "sz.import");
	expect(call(SIEVE_IOC_IMPORT, &im), -EFAULT, "IMPORT: buf at a kernel address");
	im = (struct sieve_import){ .size = sizeof(im), .buf = (uintptr_t)unmapped, .buf_len = n };
	strcpy(im.name, "sz.import");
	expect(call(SIEVE_IOC_IMPORT, &im), -EFAULT, "IMPORT: buf unmapped");
	im = (struct sieve_import){ .size = sizeof(im), .flags = SIEVE_CREATE_SCALABLE,
				    .buf = (uintptr_t)s, .buf_len = n };
	strcpy(im.name, "sz.import");
	expect(call(SIEVE_IOC_IMPORT, &im), -EINVAL, "IMPORT: flags SCALABLE (only EPHEMERAL)");
	/* offset 0 drops an unfinished import and starts anew */
	im = (struct sieve_import){ .size = sizeof(im), .buf = (uintptr_t)s, .buf_len = 128 };
	strcpy(im.name, "sz.import");
	err = sv_ioctl(fd, SIEVE_IOC_IMPORT, &im);
	{
		uint32_t id = 0;
		int err2 = err ? err : sv_import_all(fd, "sz.import", 0, s, n, n, &id);

		expect(err2 == 0 && id ? 0 : err2 ? err2 : -EINPROGRESS, 0,
		       "IMPORT: offset 0 restarts over an unfinished import");
		scratch_cleanup();
	}
}

/* ---- the cases, in order --------------------------------------------- */

static void per_command(void (*fn)(unsigned int))
{
	unsigned int c;

	for (c = 0; c < NCMDS; c++)
		fn(c);
}

int main(void)
{
	ktap_begin("bad-input");
	page = sysconf(_SC_PAGESIZE);
	fd = dev_open(O_RDWR);
	/*
	 * Inaccessible pages stay reserved (PROT_NONE) rather than unmapped,
	 * so that no later mapping can land there.
	 */
	edge = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(edge + page, page, PROT_NONE);
	unmapped = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rdonly = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (known_setup(&known, fd, "bad")) {
		printf("Bail out! cannot set up the known filters\n");
		return 1;
	}
	if (sv_export_all(fd, known.bloom_id, 1 << 20, &bloom_snap, &bloom_snap_len) ||
	    make_snapshots()) {
		printf("Bail out! cannot export the snapshots the cases need\n");
		return 1;
	}
	scratch_cleanup();

	per_command(bad_size_zero);
	per_command(bad_size_short);
	per_command(bad_size_tail_nonzero);
	per_command(good_size_tail_zero);
	per_command(good_size_tail_page);
	bad_size_over_page();
	per_command(bad_size_tail_unmapped);
	per_command(bad_flags_unknown);
	per_command(bad_flags_not_zero);
	per_command(bad_reserved);
	per_command(bad_arg_null);
	per_command(bad_arg_unmapped);
	per_command(bad_arg_kernel);
	per_command(bad_arg_split);
	per_command(bad_arg_read_only);
	bad_commands();
	bad_create_fields();
	bad_names();
	bad_keys();
	bad_batches();
	bad_list();
	bad_export();
	bad_stale_ids();
	bad_snapshot_headers();
	bad_snapshot_layers();
	bad_snapshot_scalable();
	bad_snapshot_past_payload();
	bad_import_chunks();

	known_teardown(&known);
	close(fd);
	return ktap_end();
}
