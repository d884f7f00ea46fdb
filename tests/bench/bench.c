// SPDX-License-Identifier: GPL-2.0
/*
 * sieve core benchmark: the filter cores, compiled for userspace from the
 * same sources as the module, timed at 1M keys (a table that lives in the
 * caches) and at 64M keys (a table far larger than the cache a core can
 * really use), with 8- and 32-byte keys, at target rates of 1% and 0.1%.
 *
 * Nanoseconds mean little across machines, so the same run also times a
 * random 8-byte read from a buffer the size of the largest 64M-key table,
 * both independent (many in flight, as queries of different keys are) and
 * dependent (pointer chasing), and every figure is printed again as a
 * multiple of the independent read ("R"), timed again next to every row
 * since the machine may be shared. The cost of hashing a key is reported
 * on its own, to tell compute from memory.
 *
 * Nothing here asserts on time: the aims of the issue are printed as
 * MET / NOT MET next to the measured numbers.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "filter.h"

#define KEY_STRIDE	32		/* one record per key; 8-byte keys use its head */
#define CHUNK		1000		/* keys made at a time; operations per timer reading */
#define SEED		0x5eed1234U
#define NTYPES		3
#define NRATES		2
#define NLENS		2
#define NSIZES		2

static const u32 types[NTYPES] = { SIEVE_BLOOM, SIEVE_BLOCKED_BLOOM, SIEVE_CUCKOO };
static const char *const type_names[] = {
	[SIEVE_BLOOM] = "bloom", [SIEVE_BLOCKED_BLOOM] = "blocked", [SIEVE_CUCKOO] = "cuckoo",
};
static const u32 rates_ppb[NRATES] = { 10000000, 1000000 };	/* 1%, 0.1% */
static const char *const rate_names[NRATES] = { "1%", "0.1%" };
static const u32 key_lens[NLENS] = { 8, 32 };

static const char *rate_name(u32 ppb)
{
	return ppb == rates_ppb[0] ? rate_names[0] : rate_names[1];
}

/* How much work each table size gets: enough to time, little enough to finish. */
struct size_plan {
	u64 nkeys;
	u64 npos;		/* positive queries per pass (a sample at 64M) */
	u64 nneg;		/* negative queries: FPR and its timing */
	int passes;		/* fills and query passes; the best time is kept */
	const char *name;
};

static struct size_plan plans[NSIZES] = {
	{ 1000000, 1000000, 10000000, 3, "1M" },
	{ 64000000, 8000000, 4000000, 1, "64M" },
};

struct result {
	u32 type, rate, len;
	const struct size_plan *plan;
	struct sieve_geometry geo;
	u64 table_bytes;
	u64 stored;		/* keys added before a cuckoo table reported full */
	u64 false_neg;
	u64 false_pos;
	u32 expected_ppb;
	double add_ns, pos_ns, neg_ns;
	double R, D;		/* independent and dependent read, timed next to this row */
};

/*
 * The buffer stays for the whole run, and reads are timed again next to
 * every row: this machine is shared, memory latency drifts with what the
 * neighbours do, and a row is best compared with a read timed under the
 * same conditions.
 */
struct memref {
	u64 bytes;
	u64 nwords;
	u64 *buf;
	double indep_ns[2], dep_ns[2];	/* at the start and at the end of the run */
};

static FILE *table_out;

/* Prints to stdout and to the table file. */
static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (table_out) {
		va_start(ap, fmt);
		vfprintf(table_out, fmt, ap);
		va_end(ap);
	}
}

static void progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Operations are timed on this thread's CPU clock: the machine may be
 * shared, and time spent descheduled is not the filter's. Reading it costs
 * a system call (a fraction of a microsecond), so it is read once per chunk
 * of CHUNK operations and its own cost, calibrated once, is subtracted.
 */
static double timer_cost;

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void calibrate_timer(void)
{
	double t, best = 1e30;
	int i;

	for (i = 0; i < 10000; i++) {
		t = cpu_ns();
		best = fmin(best, cpu_ns() - t);
	}
	timer_cost = best;
}

/* splitmix64's finalizer: a bijection of u64, so distinct inputs stay distinct. */
static inline u64 mix64(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * Key i of a set is 32 bytes: mix64(4 * (base + i) + j), j = 0..3. Its
 * first word alone is already unique across both sets (mix64 is a
 * bijection), so the 8-byte keys, the record heads, are distinct too, and
 * positives (base 0) never meet negatives (base 2^60).
 *
 * Keys are made CHUNK at a time into a 32 KB buffer, untimed, and the
 * operations then find them in L1, as a filter finds the key of a packet
 * it has just parsed. Streaming them from a multi-gigabyte array instead
 * would charge the filters for misses of their own input: this machine's
 * prefetchers do not hide them under a loop as heavy as a query.
 */
#define POS_BASE	0
#define NEG_BASE	(1ULL << 60)

static u64 key_buf[CHUNK * KEY_STRIDE / 8];

static void make_chunk(u64 base, u64 chunk)
{
	u64 i, first = 4 * (base + chunk * CHUNK);

	for (i = 0; i < ARRAY_SIZE(key_buf); i++)
		key_buf[i] = mix64(first + i);
}

static inline const u8 *key_at(u32 i)
{
	return (const u8 *)key_buf + i * KEY_STRIDE;
}

/*
 * Chunk @c of a pass that visits @nchunks of them in a scattered order:
 * 1000003 is prime, so it is coprime to any count of chunks below it and
 * c * 1000003 mod nchunks visits each chunk once.
 */
static u64 scatter(u64 c, u64 nchunks)
{
	return c * 1000003 % nchunks;
}

/* ---- the memory reference ---- */

static __attribute__((noinline)) u64 independent_reads(const u64 *buf, u64 nwords,
							u64 count, u64 salt)
{
	u64 i, sum = 0;

	/* The address comes from i alone: loads overlap, as queries do. */
	for (i = 0; i < count; i++)
		sum += buf[mul_u64_u64_shr(mix64(i + salt), nwords, 64)];
	return sum;
}

static __attribute__((noinline)) u64 dependent_reads(const u64 *buf, u64 count)
{
	u64 i, p = 0;

	/* Each address is the value just loaded: one read at a time. */
	for (i = 0; i < count; i++)
		p = buf[p];
	return p;
}

/*
 * Sattolo's shuffle: a random permutation that is one single cycle, so the
 * chase visits the whole buffer and never settles in a short loop. Written
 * first, so every page is really there (calloc'd pages read as one shared
 * zero page until written).
 */
static void make_cycle(u64 *buf, u64 nwords)
{
	u64 i, state = 42;

	for (i = 0; i < nwords; i++)
		buf[i] = i;
	for (i = nwords - 1; i > 0; i--) {
		u64 j = mul_u64_u64_shr(mix64(state++), i, 64);	/* j < i */
		u64 t = buf[i];

		buf[i] = buf[j];
		buf[j] = t;
	}
}

/* Best of 3 passes of @nindep independent reads; @ndep dependent reads. */
static void time_reads(const struct memref *m, u64 nindep, u64 ndep, double *indep,
		       double *dep)
{
	const u64 *buf = m->buf;
	u64 nwords = m->nwords;
	double t, best = 1e30;
	u64 sink = 0;
	int pass;

	for (pass = 0; pass < 3; pass++) {
		t = cpu_ns();
		sink += independent_reads(buf, nwords, nindep, pass * nindep);
		best = fmin(best, (cpu_ns() - t) / nindep);
	}
	*indep = best;
	t = cpu_ns();
	sink += dependent_reads(buf, ndep);
	*dep = (cpu_ns() - t) / ndep;
	if (sink == 1)		/* keeps the loads; never true in practice */
		progress(" ");
}

/* ---- the timed loops: one chunk each, the keys already in L1 ---- */

static __attribute__((noinline)) u64 hash_chunk(u32 len, int passes)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < CHUNK; i++)
		sum += passes == 2 ? sieve_hash64(key_at(i), len, SEED) :
				     jhash(key_at(i), len, SEED);
	return sum;
}

/* Stops at the first -ENOSPC: a full cuckoo table rejects every later add. */
static __attribute__((noinline)) u32 add_chunk(struct sieve_filter *f, u32 len)
{
	u32 i;

	for (i = 0; i < CHUNK; i++)
		if (sieve_filter_add(f, key_at(i), len) < 0)
			break;
	return i;
}

static __attribute__((noinline)) u64 query_chunk(const struct sieve_filter *f, u32 len)
{
	u64 hits = 0;
	u32 i;

	for (i = 0; i < CHUNK; i++)
		hits += sieve_filter_contains(f, key_at(i), len);
	return hits;
}

/* ns per sieve_hash64 (@passes 2) or per single jhash (@passes 1), 1M keys. */
static double time_hash(u32 len, int passes)
{
	const u64 nchunks = 1000;
	double t, best = 1e30, sum;
	u64 c, sink = 0;
	int rep;

	for (rep = 0; rep < 3; rep++) {
		for (c = 0, sum = 0; c < nchunks; c++) {
			make_chunk(POS_BASE, c);
			t = cpu_ns();
			sink += hash_chunk(len, passes);
			sum += cpu_ns() - t - timer_cost;
		}
		best = fmin(best, sum / (nchunks * CHUNK));
	}
	if (sink == 1)		/* keeps the hashes; never true in practice */
		progress(" ");
	return best;
}

/* Adds positive keys 0..n-1, in order; returns how many were stored. */
static u64 fill(struct sieve_filter *f, u64 n, u32 len, double *ns)
{
	u64 c, stored = 0;
	double t, sum = 0;
	u32 got = 0;

	for (c = 0; c < n / CHUNK; c++) {
		make_chunk(POS_BASE, c);
		t = cpu_ns();
		got = add_chunk(f, len);
		sum += cpu_ns() - t - timer_cost;
		stored += got;
		if (got < CHUNK)
			break;
	}
	*ns = sum / (c * CHUNK + (c < n / CHUNK ? got + 1 : 0));
	return stored;
}

/*
 * Queries @count keys of the first @n of set @base (both multiples of
 * CHUNK), chunks in a scattered order so a sample covers the whole set.
 * Best of @passes; *@hits is the answers "maybe present" of one pass.
 */
static double time_query(const struct sieve_filter *f, u64 base, u64 n, u64 count,
			 u32 len, int passes, u64 *hits)
{
	double t, best = 1e30, sum;
	u64 c;
	int pass;

	for (pass = 0; pass < passes; pass++) {
		*hits = 0;
		for (c = 0, sum = 0; c < count / CHUNK; c++) {
			make_chunk(base, scatter(c, n / CHUNK));
			t = cpu_ns();
			*hits += query_chunk(f, len);
			sum += cpu_ns() - t - timer_cost;
		}
		best = fmin(best, sum / count);
	}
	return best;
}

static int run_one(struct result *r, const struct memref *m)
{
	const struct size_plan *p = r->plan;
	struct sieve_filter *f = NULL;
	u64 hits, npos;
	double ns;
	int pass, err;

	err = sieve_size(r->type, p->nkeys, r->rate, &r->geo);
	if (err)
		return err;
	r->geo.seed = SEED;
	r->add_ns = 1e30;
	for (pass = 0; pass < p->passes; pass++) {
		if (f)
			sieve_filter_destroy(f);
		err = sieve_filter_create(&r->geo, &f);
		if (err)
			return err;
		/* Fault the table in first, as the module's kvzalloc does. */
		sieve_filter_clear(f);
		r->stored = fill(f, p->nkeys, r->len, &ns);
		r->add_ns = fmin(r->add_ns, ns);
	}
	r->table_bytes = f->table_bytes;
	r->expected_ppb = sieve_expected_fpr_ppb(&r->geo, r->stored);

	npos = min(p->npos, r->stored / CHUNK * CHUNK);
	r->pos_ns = time_query(f, POS_BASE, r->stored / CHUNK * CHUNK, npos, r->len,
			       p->passes, &hits);
	r->false_neg = npos - hits;
	r->neg_ns = time_query(f, NEG_BASE, p->nneg, p->nneg, r->len, p->passes,
			       &r->false_pos);
	sieve_filter_destroy(f);
	time_reads(m, 8000000, 500000, &r->R, &r->D);
	return 0;
}

/* ---- theory ---- */

static double log2_inv(u32 ppb)
{
	return log2(1e9 / ppb);
}

static double classic_bits(u32 ppb)
{
	return log2_inv(ppb) / M_LN2;
}

/*
 * A blocked Bloom filter at c bits per key: blocks of 512 bits hold
 * Poisson(512 / c) keys, each setting a random k-subset of its block, and
 * a block with i keys answers a foreign query yes with at most
 * (1 - (1 - k/512)^i)^k (the bound sizing.c uses). Computed here in
 * floating point, apart from the fixed-point sizing it checks.
 */
static double blocked_rate(double c, int k)
{
	double lambda = SIEVE_BLOCK_BITS / c, rate = 0;
	int i, top = lambda + 40 * sqrt(lambda) + 100;

	for (i = 0; i <= top; i++) {
		double w = exp(i * log(lambda) - lambda - lgamma(i + 1.0));

		rate += w * pow(1 - pow(1 - (double)k / SIEVE_BLOCK_BITS, i), k);
	}
	return rate;
}

static double blocked_best(double c)
{
	double best = 1;
	int k;

	for (k = 1; k <= SIEVE_MAX_HASHES; k++)
		best = fmin(best, blocked_rate(c, k));
	return best;
}

/* The fewest bits per key with which some k reaches the rate. */
static double blocked_bits(u32 ppb)
{
	double lo = classic_bits(ppb), hi = 3 * lo, p = ppb / 1e9;

	while (hi - lo > 0.001) {
		double mid = (lo + hi) / 2;

		if (blocked_best(mid) <= p)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static double cuckoo_bits(u32 ppb)
{
	return (log2_inv(ppb) + 3) / 0.95;
}

static double type_bits(u32 type, u32 ppb)
{
	switch (type) {
	case SIEVE_BLOOM:
		return classic_bits(ppb);
	case SIEVE_BLOCKED_BLOOM:
		return blocked_bits(ppb);
	default:
		return cuckoo_bits(ppb);
	}
}

/* ---- report ---- */

static void print_header(int argc, char **argv, const struct memref *m,
			 const double hash_ns[NLENS][2], const struct result *res, int nres)
{
	char line[256], model[256] = "unknown", date[64];
	FILE *cpu = fopen("/proc/cpuinfo", "r");
	double R = m->indep_ns[0], lo = 1e30, hi = 0;
	time_t t = time(NULL);
	int i;

	while (cpu && fgets(line, sizeof(line), cpu))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	if (cpu)
		fclose(cpu);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&t));
	for (i = 0; i < nres; i++) {
		lo = fmin(lo, res[i].R);
		hi = fmax(hi, res[i].R);
	}

	out("sieve core benchmark\n");
	out("  date:     %s\n", date);
	out("  cpu:      %s (%ld online)\n", model, sysconf(_SC_NPROCESSORS_ONLN));
	out("  command: ");
	for (i = 0; i < argc; i++)
		out(" %s", argv[i]);
	out("\n  cores:    kmod/*.c built for userspace, -O2; one thread; seed %#x\n", SEED);
	out("  timing:   thread CPU time per chunk of %d operations (%.0f ns per reading, subtracted)\n\n",
	    CHUNK, timer_cost);
	out("memory reference: random 8-byte reads from a %.0f MiB buffer (the largest 64M-key table)\n",
	    m->bytes / 1048576.0);
	out("  independent read R: %6.2f ns at the start, %6.2f ns at the end, %.2f to %.2f next to the rows\n",
	    m->indep_ns[0], m->indep_ns[1], lo, hi);
	out("  dependent read D:   %6.2f ns at the start, %6.2f ns at the end (= %.1f R)\n",
	    m->dep_ns[0], m->dep_ns[1], m->dep_ns[0] / R);
	for (i = 0; i < NLENS; i++)
		out("  hash of a %2u-byte key: sieve_hash64 %5.2f ns = %.2f R (one jhash pass alone: %.2f ns)\n",
		    key_lens[i], hash_ns[i][1], hash_ns[i][1] / R, hash_ns[i][0]);
	out("\n");
}

static void print_row(const struct result *r)
{
	double bits = r->table_bytes * 8.0 / r->plan->nkeys;
	double theory = type_bits(r->type, r->rate);
	double fpr = (double)r->false_pos / r->plan->nneg;
	char kf[16];

	if (r->type == SIEVE_CUCKOO)
		snprintf(kf, sizeof(kf), "f=%u", r->geo.fp_bits);
	else
		snprintf(kf, sizeof(kf), "k=%u", r->geo.nhashes);
	out("%-4s %3u  %-8s %-5s %-5s %8.2f %7.2f %6.2f %5.2f %5.2f %6.2f %8.1f %5.1f %7.1f %5.1f %7.1f %5.1f  %7.4f%% %7.4f%%",
	    r->plan->name, r->len, type_names[r->type], rate_name(r->rate),
	    kf, bits, classic_bits(r->rate), theory, bits / theory, bits / classic_bits(r->rate),
	    r->R, r->add_ns, r->add_ns / r->R, r->pos_ns, r->pos_ns / r->R,
	    r->neg_ns, r->neg_ns / r->R, 100.0 * fpr, r->expected_ppb / 1e7);
	if (r->stored < r->plan->nkeys)
		out("  FULL after %llu adds", (unsigned long long)r->stored);
	if (r->false_neg)
		out("  %llu FALSE NEGATIVES", (unsigned long long)r->false_neg);
	out("\n");
}

static void print_table(const struct result *res, int nres)
{
	int i;

	out("keys len  type     p     k/f   bits/key classic type-th  x-th x-cls   R ns   add ns   xR   pos ns   xR   neg ns   xR  FPR meas  FPR exp\n");
	for (i = 0; i < nres; i++) {
		if (i && res[i].plan != res[i - 1].plan)
			out("\n");
		print_row(&res[i]);
	}
	out("\n  bits/key = table bytes * 8 / keys; classic = 1.44 log2(1/p); type-th = the type's theory:\n"
	    "  Bloom: classic; blocked: fewest bits/key at which the Poisson bound of sizing.c,\n"
	    "  sum Pois(i; 512/c) (1 - (1 - k/512)^i)^k, reaches p for some k (floating point, independent);\n"
	    "  cuckoo: (log2(1/p) + 3) / 0.95. x-th, x-cls: bits/key over those.\n"
	    "  R ns: the independent read, timed again right after the row; xR: the ns before it over it.\n"
	    "  positive queries: %llu of 1M keys (best of %d passes), %llu of 64M (one pass);\n"
	    "  negative queries: %llu at 1M, %llu at 64M (distinct keys never added). FPR exp = sieve_expected_fpr_ppb().\n\n",
	    (unsigned long long)plans[0].npos, plans[0].passes, (unsigned long long)plans[1].npos,
	    (unsigned long long)plans[0].nneg, (unsigned long long)plans[1].nneg);
}

static const char *verdict(bool met)
{
	return met ? "MET" : "NOT MET";
}

static void print_query_aims(const struct result *res, int nres)
{
	int i;

	out("aims, query cost at 64M keys in independent reads R (the worse of positive and\n"
	    "negative decides); D: the same in dependent reads, for scale:\n");
	for (i = 0; i < nres; i++) {
		const struct result *r = &res[i];
		double aim = r->type == SIEVE_BLOCKED_BLOOM ? 1.5 :
			     r->type == SIEVE_CUCKOO ? 2.5 : r->geo.nhashes;
		double worst = fmax(r->pos_ns, r->neg_ns);

		if (r->plan != &plans[1])
			continue;
		out("  %-8s %-5s %2uB: positive %5.2f R, negative %5.2f R; aim <= %4.1f R%-7s %-7s (%.2f D)\n",
		    type_names[r->type], rate_name(r->rate), r->len,
		    r->pos_ns / r->R, r->neg_ns / r->R, aim,
		    r->type == SIEVE_BLOOM ? " (= k)" : "", verdict(worst / r->R <= aim), worst / r->D);
	}
}

static void print_size_aims(const struct result *res, int nres)
{
	int i;

	out("\naims, bits per key within 1.1x of the type's theory (key length does not matter):\n");
	for (i = 0; i < nres; i++) {
		const struct result *r = &res[i];
		double bits = r->table_bytes * 8.0 / r->plan->nkeys;
		double theory = type_bits(r->type, r->rate);

		if (r->len != key_lens[0])
			continue;
		out("  %-4s %-8s %-5s %6.2f bits/key / %6.2f = %.3f  %-7s",
		    r->plan->name, type_names[r->type], rate_name(r->rate),
		    bits, theory, bits / theory, verdict(bits / theory <= 1.1));
		if (r->type == SIEVE_BLOCKED_BLOOM)
			out("  (vs classic Bloom %.2f: %.3f, %s)", classic_bits(r->rate),
			    bits / classic_bits(r->rate),
			    verdict(bits / classic_bits(r->rate) <= 1.1));
		if (r->type == SIEVE_CUCKOO)
			out("  (load %.1f%%%s)", 100.0 * r->stored /
			    (r->geo.nbuckets * (double)SIEVE_CUCKOO_SLOTS),
			    r->stored < r->plan->nkeys ? ", table FULL before all keys were in" : "");
		out("\n");
	}
}

static void print_aims(const struct result *res, int nres)
{
	print_query_aims(res, nres);
	print_size_aims(res, nres);
}

/* ---- main ---- */

static u64 largest_table(void)
{
	struct sieve_geometry geo;
	u64 bytes, most = 0;
	int t, r;

	for (t = 0; t < NTYPES; t++)
		for (r = 0; r < NRATES; r++)
			if (!sieve_size(types[t], plans[NSIZES - 1].nkeys, rates_ppb[r], &geo) &&
			    !sieve_geometry_check(&geo, &bytes))
				most = max(most, bytes);
	return most;
}

static int memref_init(struct memref *m)
{
	m->bytes = largest_table() / 64 * 64;
	m->nwords = m->bytes / 8;
	m->buf = malloc(m->nwords * 8);
	if (!m->buf)
		return -ENOMEM;
	make_cycle(m->buf, m->nwords);
	return 0;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-o TABLE_FILE] [-s] [-n LARGE_KEYS] [-t TYPE]\n"
		"  -o  also write the report to TABLE_FILE\n"
		"  -s  small run: 1M keys only (the memory reference stays full size)\n"
		"  -n  keys of the large table instead of 64000000\n"
		"  -t  only this type: bloom, blocked or cuckoo (repeatable)\n", prog);
}

int main(int argc, char **argv)
{
	struct result res[NSIZES * NLENS * NTYPES * NRATES];
	double hash_ns[NLENS][2], t0 = now_ns();
	int s, l, t, r, n = 0, nsizes = NSIZES, opt, err;
	u32 wanted = 0;
	struct memref m = { 0 };

	while ((opt = getopt(argc, argv, "o:sn:t:")) != -1) {
		switch (opt) {
		case 'o':
			table_out = fopen(optarg, "w");
			if (!table_out) {
				perror(optarg);
				return 1;
			}
			break;
		case 's':
			nsizes = 1;
			break;
		case 'n':
			plans[1].nkeys = strtoull(optarg, NULL, 0) / CHUNK * CHUNK;
			plans[1].npos = min(plans[1].npos, plans[1].nkeys);
			if (!plans[1].nkeys) {
				usage(argv[0]);
				return 2;
			}
			break;
		case 't':
			for (t = 0; t < NTYPES; t++)
				if (!strcmp(optarg, type_names[types[t]]))
					break;
			if (t == NTYPES) {
				usage(argv[0]);
				return 2;
			}
			wanted |= 1U << t;
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}

	calibrate_timer();
	if (memref_init(&m)) {
		fprintf(stderr, "bench: out of memory\n");
		return 1;
	}
	progress("bench: memory reference (%llu MiB)...\n", (unsigned long long)(m.bytes >> 20));
	time_reads(&m, 32000000, 4000000, &m.indep_ns[0], &m.dep_ns[0]);

	for (l = 0; l < NLENS; l++) {
		hash_ns[l][0] = time_hash(key_lens[l], 1);
		hash_ns[l][1] = time_hash(key_lens[l], 2);
	}

	for (s = 0; s < nsizes; s++)
		for (l = 0; l < NLENS; l++)
			for (t = 0; t < NTYPES; t++)
				for (r = 0; r < NRATES && (!wanted || wanted & 1U << t); r++) {
					struct result *cur = &res[n++];
					double t1 = now_ns();

					*cur = (struct result){ .type = types[t], .rate = rates_ppb[r],
								.len = key_lens[l], .plan = &plans[s] };
					progress("bench: %s keys, %2u bytes, %-8s %-5s ...", plans[s].name,
						 key_lens[l], type_names[types[t]], rate_names[r]);
					err = run_one(cur, &m);
					if (err) {
						fprintf(stderr, "\nbench: %s\n", strerror(-err));
						return 1;
					}
					progress(" %.1f s\n", (now_ns() - t1) / 1e9);
				}

	time_reads(&m, 32000000, 4000000, &m.indep_ns[1], &m.dep_ns[1]);
	free(m.buf);

	print_header(argc, argv, &m, hash_ns, res, n);
	print_table(res, n);
	print_aims(res, n);
	out("\ntotal run time: %.1f s\n", (now_ns() - t0) / 1e9);
	if (table_out)
		fclose(table_out);
	return 0;
}
