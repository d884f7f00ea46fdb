/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel/userspace parity: values that must come out bit-identical from the
 * kernel and from the userspace build of the cores, since filters built in
 * userspace are loaded into the module (snapshots).
 *
 * sieve_test.ko runs parity_report() in the kernel, where jhash() is
 * <linux/jhash.h> and the cores are those of sieve.ko; parity.c runs the
 * very same function in userspace, against the jhash port and libsieve, and
 * compares the two reports line by line. Sharing this code means the two
 * sides cannot drift apart on the inputs; the outputs are computed
 * independently, each by its own environment.
 *
 * A report is text, one value per line, in groups: a line's group is its
 * first two words ("jhash seed=0000002a", "table cuckoo-12"). The first
 * line is PARITY_HEADER and the last "end lines=N" (N lines before it), so
 * a truncated report is told from a complete one.
 */
#ifndef SIEVE_TEST_PARITY_H
#define SIEVE_TEST_PARITY_H

#include "../../kmod/filter.h"

#define PARITY_HEADER	"sieve-parity v1"
#define PARITY_LINE_MAX	256

/* Where a report goes: @emit gets one line, without its newline. */
struct parity_out {
	void (*emit)(struct parity_out *out, const char *line);
	unsigned int lines;
};

static void parity_printf(struct parity_out *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void parity_printf(struct parity_out *out, const char *fmt, ...)
{
	char line[PARITY_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	out->emit(out, line);
	out->lines++;
}

/*
 * Key bytes from a 32-bit LCG (Numerical Recipes' constants), taking its top
 * byte: every byte value occurs, high bit included, which catches a port
 * that sign-extends a char.
 */
static void parity_fill(u8 *buf, u32 len, u32 salt)
{
	u32 x = salt * 2654435761U + 1, i;

	for (i = 0; i < len; i++) {
		x = x * 1664525U + 1013904223U;
		buf[i] = x >> 24;
	}
}

static const u32 parity_seeds[] = { 0, 1, 0x2a, 0xdeadbeef, 0xffffffff };
/* Every tail length of jhash (len % 12) at several block counts, and 0. */
static const u32 parity_long_lengths[] = { 100, 255, 256, 1000, 4093 };
#define PARITY_SHORT_MAX	64
#define PARITY_BUF_BYTES	4096

static void parity_jhash(struct parity_out *out, u8 *buf)
{
	unsigned int s, i;
	u32 len;

	for (s = 0; s < ARRAY_SIZE(parity_seeds); s++) {
		u32 seed = parity_seeds[s];

		for (len = 0; len <= PARITY_SHORT_MAX; len++) {
			parity_fill(buf, len, len);
			parity_printf(out, "jhash seed=%08x len=%u %08x",
				      seed, len, jhash(buf, len, seed));
		}
		for (i = 0; i < ARRAY_SIZE(parity_long_lengths); i++) {
			len = parity_long_lengths[i];
			parity_fill(buf, len, len);
			parity_printf(out, "jhash seed=%08x len=%u %08x",
				      seed, len, jhash(buf, len, seed));
		}
	}
}

/*
 * sieve_hash64() is built from the kernel's own jhash steps: the 64 bits a
 * filter sees must be the same on both sides, for every tail length.
 */
static void parity_hash64(struct parity_out *out, u8 *buf)
{
	unsigned int s;
	u32 len;

	for (s = 0; s < ARRAY_SIZE(parity_seeds); s++) {
		u32 seed = parity_seeds[s];

		for (len = 0; len <= PARITY_SHORT_MAX; len++) {
			parity_fill(buf, len, len ^ 0x64);
			parity_printf(out, "hash64 seed=%08x len=%u %016llx", seed, len,
				      (unsigned long long)sieve_hash64(buf, len, seed));
		}
		len = parity_long_lengths[ARRAY_SIZE(parity_long_lengths) - 1];
		parity_fill(buf, len, len ^ 0x64);
		parity_printf(out, "hash64 seed=%08x len=%u %016llx", seed, len,
			      (unsigned long long)sieve_hash64(buf, len, seed));
	}
}

/*
 * Sizing and the FPR model are fixed-point maths with 128-bit products:
 * the kernel and userspace builds must agree to the last bit.
 */
static void parity_sizing(struct parity_out *out)
{
	static const u64 capacities[] = { 1, 1000, 123457, 10000000 };
	static const u32 fpps[] = { 100000000, 10000000, 1000000, 1000 };
	struct sieve_geometry geo;
	unsigned int c, p;
	u32 type;
	int err;

	for (type = SIEVE_BLOOM; type <= SIEVE_CUCKOO; type++) {
		for (c = 0; c < ARRAY_SIZE(capacities); c++) {
			for (p = 0; p < ARRAY_SIZE(fpps); p++) {
				memset(&geo, 0, sizeof(geo));
				err = sieve_size(type, capacities[c], fpps[p], &geo);
				parity_printf(out,
					      "sizing type=%u n=%llu p=%u err=%d nbits=%llu nbuckets=%llu k=%u f=%u expected_ppb=%u",
					      type, (unsigned long long)capacities[c], fpps[p],
					      err, (unsigned long long)geo.nbits,
					      (unsigned long long)geo.nbuckets, geo.nhashes,
					      geo.fp_bits,
					      err ? 0 : sieve_expected_fpr_ppb(&geo, capacities[c]));
			}
		}
	}
}

/* The filters built on both sides: fixed geometry, seed and keys. */
struct parity_table {
	const char *name;
	struct sieve_geometry geo;
	u32 nkeys;		/* keys added, 0..nkeys-1 */
	u32 delete_every;	/* cuckoo: then delete every n-th key */
};

static const struct parity_table parity_tables[] = {
	{ "bloom-7", { SIEVE_BLOOM, 0x12345678, 10007, 0, 7, 0 }, 1000, 0 },
	{ "bloom-1-full", { SIEVE_BLOOM, 0xffffffff, 64, 0, 1, 0 }, 300, 0 },
	{ "blocked-8", { SIEVE_BLOCKED_BLOOM, 0xdeadbeef, 512 * 40, 0, 8, 0 }, 2000, 0 },
	{ "blocked-3", { SIEVE_BLOCKED_BLOOM, 0, 512, 0, 3, 0 }, 100, 0 },
	{ "cuckoo-12", { SIEVE_CUCKOO, 7, 0, 256, 0, 12 }, 1000, 3 },
	{ "cuckoo-5-full", { SIEVE_CUCKOO, 0x2a, 0, 32, 0, 5 }, 200, 2 },
	{ "cuckoo-16", { SIEVE_CUCKOO, 0x80000000, 0, 2, 0, 16 }, 12, 1 },
};

/* Key @i of a table: 4 to 32 bytes, so every jhash tail length occurs. */
static u32 parity_key(u8 *buf, u32 i)
{
	u32 len = 4 + i % 29;

	parity_fill(buf, len, i ^ 0x5eed0000);
	return len;
}

/* Probes that were (mostly) never added, to catch false positives. */
#define PARITY_PROBES		4096
#define PARITY_PROBE_BASE	0x10000000

/*
 * One line per filter state: what add returned, which probes hit (as a
 * jhash chain over their indices, so every single answer counts), the copy
 * counts of the added keys, and the estimates.
 */
static void parity_table_state(struct parity_out *out, const struct parity_table *t,
			       const struct sieve_filter *f, const char *state, u8 *buf)
{
	u32 i, len, hits = 0, hit_digest = 0, copies = 0, copy_digest = 0;

	for (i = 0; i < PARITY_PROBES; i++) {
		len = parity_key(buf, PARITY_PROBE_BASE + i);
		if (sieve_filter_contains(f, buf, len)) {
			hits++;
			hit_digest = jhash(&i, sizeof(i), hit_digest);
		}
	}
	for (i = 0; i < t->nkeys; i++) {
		u32 n;

		len = parity_key(buf, i);
		n = sieve_filter_count(f, buf, len);
		copies += n;
		copy_digest = jhash(&n, sizeof(n), copy_digest);
	}
	parity_printf(out,
		      "table %s %s bytes=%llu digest=%08x probe_hits=%u/%08x copies=%u/%08x estimate=%llu fpr_ppb=%u",
		      t->name, state, (unsigned long long)f->table_bytes,
		      jhash(f->table, f->table_bytes, 0), hits, hit_digest,
		      copies, copy_digest,
		      (unsigned long long)sieve_filter_estimate_items(f),
		      sieve_filter_fpr_ppb(f));
}

static void parity_table(struct parity_out *out, const struct parity_table *t, u8 *buf)
{
	u32 i, len, ret_new = 0, ret_dup = 0, ret_full = 0, ret_other = 0;
	u32 del_ok = 0, del_missing = 0, del_other = 0;
	struct sieve_filter *f;
	int err;

	err = sieve_filter_create(&t->geo, &f);
	if (err) {
		parity_printf(out, "table %s create err=%d", t->name, err);
		return;
	}
	for (i = 0; i < t->nkeys; i++) {
		len = parity_key(buf, i);
		err = sieve_filter_add(f, buf, len);
		if (err == 0)
			ret_new++;
		else if (err == 1)
			ret_dup++;
		else if (err == -ENOSPC)
			ret_full++;
		else
			ret_other++;
	}
	parity_printf(out, "table %s add new=%u dup=%u enospc=%u other=%u",
		      t->name, ret_new, ret_dup, ret_full, ret_other);
	parity_table_state(out, t, f, "added", buf);
	if (t->delete_every) {
		for (i = 0; i < t->nkeys; i += t->delete_every) {
			len = parity_key(buf, i);
			err = sieve_filter_delete(f, buf, len);
			if (err == 0)
				del_ok++;
			else if (err == -ENOENT)
				del_missing++;
			else
				del_other++;
		}
		parity_printf(out, "table %s delete ok=%u enoent=%u other=%u",
			      t->name, del_ok, del_missing, del_other);
		parity_table_state(out, t, f, "deleted", buf);
	}
	sieve_filter_destroy(f);
}

/*
 * Writes the whole report. Returns 0, or -ENOMEM if the key buffer could
 * not be allocated (the report then has no "end" line).
 */
static int parity_report(struct parity_out *out)
{
	unsigned int i;
	u8 *buf;

	out->lines = 0;
	parity_printf(out, "%s", PARITY_HEADER);
	buf = sieve_zalloc(PARITY_BUF_BYTES);
	if (!buf)
		return -ENOMEM;
	parity_jhash(out, buf);
	parity_hash64(out, buf);
	parity_sizing(out);
	for (i = 0; i < ARRAY_SIZE(parity_tables); i++) {
		parity_table(out, &parity_tables[i], buf);
		cond_resched();
	}
	sieve_free(buf);
	parity_printf(out, "end lines=%u", out->lines);
	return 0;
}

#endif /* SIEVE_TEST_PARITY_H */
