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
 * Every operation is timed two ways on the same table: one call per key
 * (sieve_filter_add, sieve_filter_contains), and through the batch calls
 * (sieve_filter_add_batch, sieve_filter_contains_batch), one call per chunk
 * of CHUNK keys. A single call cannot overlap its misses with the next
 * key's; a batch prefetches keys ahead, so its misses overlap, as the
 * independent read's do.
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

/*
 * -x: rows of a fixed size instead of a target rate, so two versions of
 * the cores can be compared at the same bits per key: blocked Bloom at
 * 8.4 and 10 bits/key (k the best sieve_expected_fpr_ppb() sees at that
 * size), cuckoo with 12-bit fingerprints at a 95.4% load (2^18 buckets at
 * 1M keys, 2^24 at 64M), and Bloom at 1% as sized.
 */
struct fixed_row {
	u32 type;
	u32 bits_x10;		/* blocked: bits per key times 10 */
	u32 fp_bits;		/* cuckoo */
	const char *name;
};

static const struct fixed_row fixed_rows[] = {
	{ SIEVE_BLOCKED_BLOOM, 84, 0, "8.4b" },
	{ SIEVE_BLOCKED_BLOOM, 100, 0, "10b" },
	{ SIEVE_CUCKOO, 0, 12, "f12" },
};

/* How the operations are called: one key a call, or a chunk a batch call. */
enum { SINGLE, BATCH, NMODES };

struct result {
	u32 type, rate, len;
	const struct fixed_row *fixed;	/* a geometry by bits per key (-x), or NULL */
	const struct size_plan *plan;
	struct sieve_geometry geo;
	u64 table_bytes;
	u64 stored;		/* keys added before a cuckoo table reported full */
	u64 false_neg[NMODES];
	u64 false_pos[NMODES];
	u32 expected_ppb;
	double add_ns[NMODES], pos_ns[NMODES], neg_ns[NMODES];
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
static bool single_writer;	/* -w: plain ORs, as libsieve's local filters */

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

/* The chunk as a batch: the same records of key_buf, @len bytes each. */
static struct sieve_key batch_keys[CHUNK];
static int add_results[CHUNK];
static bool query_results[CHUNK];

static void set_batch_len(u32 len)
{
	u32 i;

	for (i = 0; i < CHUNK; i++)
		batch_keys[i] = (struct sieve_key){ .data = key_at(i), .len = len };
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

/*
 * Adds positive keys 0..n-1, in order; returns how many were stored. The
 * chunks alternate between single adds (even chunks) and one add_batch
 * (odd chunks), so both ways are timed on the same table at the same
 * loads, over half the keys each; @ns[mode] is the mean of each. A single
 * add stops at the first -ENOSPC (a full cuckoo table rejects every later
 * add); a batch runs to its end, so its last chunk counts whole.
 */
static u64 fill(struct sieve_filter *f, u64 n, u32 len, double ns[NMODES])
{
	double t, sum[NMODES] = { 0 };
	u64 c, stored = 0, ops[NMODES] = { 0 };
	u32 got = 0;
	int mode;

	set_batch_len(len);
	for (c = 0; c < n / CHUNK; c++) {
		mode = c & 1 ? BATCH : SINGLE;
		make_chunk(POS_BASE, c);
		t = cpu_ns();
		if (mode == SINGLE)
			got = add_chunk(f, len);
		else
			sieve_filter_add_batch(f, batch_keys, CHUNK, 0, add_results);
		sum[mode] += cpu_ns() - t - timer_cost;
		if (mode == BATCH)
			for (got = 0; got < CHUNK && add_results[got] >= 0; got++)
				;
		stored += got;
		ops[mode] += mode == BATCH || got == CHUNK ? CHUNK : got + 1;
		if (got < CHUNK)
			break;
	}
	for (mode = 0; mode < NMODES; mode++)
		ns[mode] = ops[mode] ? sum[mode] / ops[mode] : NAN;
	return stored;
}

/*
 * Queries @count keys of the first @n of set @base (both multiples of
 * CHUNK), chunks in a scattered order so a sample covers the whole set,
 * each key once by single calls and once in a batch. The two ways take
 * turns chunk by chunk, so they share the machine's conditions; the batch
 * runs half the sample behind, so at 64M keys the lines a single query
 * loaded are long gone when the batch asks for the same key. Best of
 * @passes for each way; @hits[mode] is the answers "maybe present" of one
 * pass (the same for both ways: same keys, same table).
 */
static void time_query(const struct sieve_filter *f, u64 base, u64 n, u64 count,
		       u32 len, int passes, double ns[NMODES], u64 hits[NMODES])
{
	u64 c, nchunks = count / CHUNK, i;
	double t, sum[NMODES];
	int pass, mode;

	set_batch_len(len);
	ns[SINGLE] = ns[BATCH] = 1e30;
	for (pass = 0; pass < passes; pass++) {
		hits[SINGLE] = hits[BATCH] = 0;
		sum[SINGLE] = sum[BATCH] = 0;
		for (c = 0; c < nchunks; c++) {
			make_chunk(base, scatter(c, n / CHUNK));
			t = cpu_ns();
			hits[SINGLE] += query_chunk(f, len);
			sum[SINGLE] += cpu_ns() - t - timer_cost;

			make_chunk(base, scatter((c + nchunks / 2) % nchunks, n / CHUNK));
			t = cpu_ns();
			sieve_filter_contains_batch(f, batch_keys, CHUNK, query_results);
			sum[BATCH] += cpu_ns() - t - timer_cost;
			for (i = 0; i < CHUNK; i++)
				hits[BATCH] += query_results[i];
		}
		for (mode = 0; mode < NMODES; mode++)
			ns[mode] = fmin(ns[mode], sum[mode] / count);
	}
}

/* A fixed row's geometry for @nkeys keys. */
static int fixed_geometry(const struct fixed_row *x, u64 nkeys, struct sieve_geometry *geo)
{
	u32 best = SIEVE_PPB, k;

	*geo = (struct sieve_geometry){ .type = x->type };
	if (x->type == SIEVE_CUCKOO) {
		geo->fp_bits = x->fp_bits;
		geo->nbuckets = roundup_pow_of_two(nkeys / SIEVE_CUCKOO_SLOTS);
		return 0;
	}
	geo->nbits = DIV_ROUND_UP_ULL(nkeys * x->bits_x10 / 10, SIEVE_BLOCK_BITS) *
		     SIEVE_BLOCK_BITS;
	for (k = 1; k <= 16; k++) {
		struct sieve_geometry g = *geo;
		u32 ppb;

		g.nhashes = k;
		ppb = sieve_expected_fpr_ppb(&g, nkeys);
		if (ppb < best) {
			best = ppb;
			geo->nhashes = k;
		}
	}
	return 0;
}

static int run_one(struct result *r, const struct memref *m)
{
	const struct size_plan *p = r->plan;
	struct sieve_filter *f = NULL;
	double ns[NMODES];
	u64 hits[NMODES], npos;
	int pass, mode, err;

	if (r->fixed)
		err = fixed_geometry(r->fixed, p->nkeys, &r->geo);
	else
		err = sieve_size(r->type, p->nkeys, r->rate, &r->geo);
	if (err)
		return err;
	r->geo.seed = SEED;
	r->add_ns[SINGLE] = r->add_ns[BATCH] = 1e30;
	for (pass = 0; pass < p->passes; pass++) {
		if (f)
			sieve_filter_destroy(f);
		err = sieve_filter_create(&r->geo, &f);
		if (err)
			return err;
		f->single_writer = single_writer;
		/* Fault the table in first, as the module's kvzalloc does. */
		sieve_filter_clear(f);
		r->stored = fill(f, p->nkeys, r->len, ns);
		for (mode = 0; mode < NMODES; mode++)
			r->add_ns[mode] = fmin(r->add_ns[mode], ns[mode]);
	}
	r->table_bytes = f->table_bytes;
	r->expected_ppb = sieve_expected_fpr_ppb(&r->geo, r->stored);

	npos = min(p->npos, r->stored / CHUNK * CHUNK);
	time_query(f, POS_BASE, r->stored / CHUNK * CHUNK, npos, r->len, p->passes,
		   r->pos_ns, hits);
	for (mode = 0; mode < NMODES; mode++)
		r->false_neg[mode] = npos - hits[mode];
	time_query(f, NEG_BASE, p->nneg, p->nneg, r->len, p->passes, r->neg_ns,
		   r->false_pos);
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
	out("\n  cores:    kmod/*.c built for userspace, -O2; one thread; seed %#x; %s adds\n", SEED,
	    single_writer ? "single-writer (plain)" : "atomic");
	out("  timing:   thread CPU time per chunk of %d operations (%.0f ns per reading, subtracted)\n\n",
	    CHUNK, timer_cost);
	out("memory reference: random 8-byte reads from a %.0f MiB buffer (the largest %s-key table)\n",
	    m->bytes / 1048576.0, plans[NSIZES - 1].name);
	out("  independent read R: %6.2f ns at the start, %6.2f ns at the end, %.2f to %.2f next to the rows\n",
	    m->indep_ns[0], m->indep_ns[1], lo, hi);
	out("  dependent read D:   %6.2f ns at the start, %6.2f ns at the end (= %.1f R)\n",
	    m->dep_ns[0], m->dep_ns[1], m->dep_ns[0] / R);
	for (i = 0; i < NLENS; i++)
		out("  hash of a %2u-byte key: sieve_hash64 %5.2f ns = %.2f R (one jhash pass alone: %.2f ns)\n",
		    key_lens[i], hash_ns[i][1], hash_ns[i][1] / R, hash_ns[i][0]);
	out("\n");
}

/* The columns before the timings, and one group of timings, in characters. */
#define ROW_HEAD	73
#define GROUP_WIDTH	43

static void print_row(const struct result *r)
{
	double bits = r->table_bytes * 8.0 / r->plan->nkeys;
	double theory = type_bits(r->type, r->rate);
	double fpr = (double)r->false_pos[SINGLE] / r->plan->nneg;
	char kf[16];
	int mode;

	if (r->type == SIEVE_CUCKOO)
		snprintf(kf, sizeof(kf), "f=%u", r->geo.fp_bits);
	else
		snprintf(kf, sizeof(kf), "k=%u", r->geo.nhashes);
	out("%-4s %3u  %-8s %-5s %-5s %8.2f %7.2f %6.2f %5.2f %5.2f %6.2f",
	    r->plan->name, r->len, type_names[r->type],
	    r->fixed ? r->fixed->name : rate_name(r->rate),
	    kf, bits, classic_bits(r->rate), theory, bits / theory, bits / classic_bits(r->rate),
	    r->R);
	for (mode = 0; mode < NMODES; mode++)
		out("  %7.1f %5.1f %7.1f %5.1f %7.1f %5.1f",
		    r->add_ns[mode], r->add_ns[mode] / r->R, r->pos_ns[mode],
		    r->pos_ns[mode] / r->R, r->neg_ns[mode], r->neg_ns[mode] / r->R);
	out("  %7.4f%% %7.4f%%", 100.0 * fpr, r->expected_ppb / 1e7);
	if (r->stored < r->plan->nkeys)
		out("  FULL after %llu adds", (unsigned long long)r->stored);
	if (r->false_neg[SINGLE] || r->false_neg[BATCH])
		out("  FALSE NEGATIVES: %llu single, %llu batch",
		    (unsigned long long)r->false_neg[SINGLE], (unsigned long long)r->false_neg[BATCH]);
	if (r->false_pos[SINGLE] != r->false_pos[BATCH] ||
	    r->false_neg[SINGLE] != r->false_neg[BATCH])
		out("  BATCH ANSWERS DIFFER: %llu false positives batch vs %llu single",
		    (unsigned long long)r->false_pos[BATCH],
		    (unsigned long long)r->false_pos[SINGLE]);
	out("\n");
}

/* "  --- label ---": a group's label, centred over its columns. */
static void print_group_label(const char *label)
{
	int len = strlen(label) + 2, left = (GROUP_WIDTH - 2 - len) / 2, i;

	out("  ");
	for (i = 0; i < left; i++)
		out("-");
	out(" %s ", label);
	for (i = left + len; i < GROUP_WIDTH - 2; i++)
		out("-");
}

static void print_table(const struct result *res, int nres)
{
	int i, mode;

	out("%*s", ROW_HEAD, "");
	print_group_label("single: one call per key");
	print_group_label("batch: one call per 1000 keys");
	out("\n%-*s", ROW_HEAD,
	    "keys len  type     p     k/f   bits/key classic type-th  x-th x-cls   R ns");
	for (mode = 0; mode < NMODES; mode++)
		out("  %7s %5s %7s %5s %7s %5s", "add ns", "xR", "pos ns", "xR", "neg ns", "xR");
	out("  FPR meas  FPR exp\n");
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
	    "  single: sieve_filter_add / sieve_filter_contains, one call per key (no two keys' misses overlap);\n"
	    "  batch: sieve_filter_add_batch / sieve_filter_contains_batch, one call per chunk of %d keys\n"
	    "  (prefetch pipeline: misses of neighbouring keys overlap). Hashing is inside both.\n"
	    "  add: one fill per table, its chunks alternating single (even) and batch (odd), so both\n"
	    "  columns come from the same table at the same loads, each over half of the keys\n"
	    "  (%s: best of %d fills; %s: one fill).\n"
	    "  queries: every key of the sample through both, single and batch taking turns chunk by chunk\n"
	    "  (the batch half a sample behind, so it never finds lines a single call just loaded);\n"
	    "  positive: %llu of %s keys (best of %d passes), %llu of %s (one pass);\n"
	    "  negative: %llu at %s, %llu at %s (distinct keys never added).\n"
	    "  FPR meas: negatives answered yes (single and batch answers are compared: any difference is flagged);\n"
	    "  FPR exp = sieve_expected_fpr_ppb().\n"
	    "  -x rows: p names a fixed size instead of a rate: 8.4b, 10b = blocked Bloom at that many\n"
	    "  bits/key, k the best sieve_expected_fpr_ppb() sees; f12 = cuckoo, 12-bit fingerprints,\n"
	    "  nkeys / 4 buckets rounded up to a power of two (95.4%% load at 1M and 64M keys);\n"
	    "  their theory columns refer to p = 1%%.\n\n",
	    CHUNK, plans[0].name, plans[0].passes, plans[1].name,
	    (unsigned long long)plans[0].npos, plans[0].name, plans[0].passes,
	    (unsigned long long)plans[1].npos, plans[1].name,
	    (unsigned long long)plans[0].nneg, plans[0].name,
	    (unsigned long long)plans[1].nneg, plans[1].name);
}

static const char *verdict(bool met)
{
	return met ? "MET" : "NOT MET";
}

static double query_aim(const struct result *r)
{
	return r->type == SIEVE_BLOCKED_BLOOM ? 1.5 :
	       r->type == SIEVE_CUCKOO ? 2.5 : r->geo.nhashes;
}

static void print_query_aims(const struct result *res, int nres)
{
	const struct size_plan *large = &plans[NSIZES - 1];
	int i, shown = 0;

	for (i = 0; i < nres; i++)
		shown += res[i].plan == large;
	if (!shown)
		return;
	out("aims, query cost at %s keys: blocked <= 1.5 R, cuckoo <= 2.5 R, Bloom <= k R, R the\n"
	    "independent read (the worse of positive and negative decides). The aims are about\n"
	    "independent queries, so they are judged on the batch figures, whose misses overlap as\n"
	    "R's do. Single calls cannot overlap one key's misses with the next key's; for context\n"
	    "they are shown in dependent reads D (timed next to the row), and against the aim in R.\n"
	    "in cache: the worse batch query of the same row at %s keys, where the table sits in the\n"
	    "caches (hashing and compute alone), over this row's R: a floor no memory gain can lower.\n",
	    large->name, plans[0].name);
	out("                        --------------------- batch (judged) ----------------------  ------- single calls (context) -------\n");
	out("  type     p     len    pos R   neg R   aim R       verdict   in cache              pos D   neg D   worst R  vs aim\n");
	for (i = 0; i < nres; i++) {
		const struct result *r = &res[i], *small = NULL;
		double aim = query_aim(r);
		double batch = fmax(r->pos_ns[BATCH], r->neg_ns[BATCH]);
		double single = fmax(r->pos_ns[SINGLE], r->neg_ns[SINGLE]);
		char aim_s[16], floor_s[16] = "-";
		int j;

		if (r->plan != large)
			continue;
		for (j = 0; j < nres; j++)
			if (res[j].plan == &plans[0] && res[j].type == r->type &&
			    res[j].rate == r->rate && res[j].len == r->len &&
			    res[j].fixed == r->fixed)
				small = &res[j];
		if (small)
			snprintf(floor_s, sizeof(floor_s), "%.2f R",
				 fmax(small->pos_ns[BATCH], small->neg_ns[BATCH]) / r->R);
		snprintf(aim_s, sizeof(aim_s), "<= %4.1f%s", aim,
			 r->type == SIEVE_BLOOM ? " (k)" : "");
		out("  %-8s %-5s %2uB   %6.2f  %6.2f   %-11s %-7s   %-8s              %5.2f   %5.2f   %6.2f   %s\n",
		    type_names[r->type], r->fixed ? r->fixed->name : rate_name(r->rate), r->len,
		    r->pos_ns[BATCH] / r->R, r->neg_ns[BATCH] / r->R, aim_s,
		    verdict(batch / r->R <= aim), floor_s,
		    r->pos_ns[SINGLE] / r->D, r->neg_ns[SINGLE] / r->D, single / r->R,
		    verdict(single / r->R <= aim));
	}
	out("\n");
}

static void print_size_aims(const struct result *res, int nres)
{
	int i;

	out("aims, bits per key within 1.1x of the type's theory (key length does not matter):\n");
	for (i = 0; i < nres; i++) {
		const struct result *r = &res[i];
		double bits = r->table_bytes * 8.0 / r->plan->nkeys;
		double theory = type_bits(r->type, r->rate);

		if (r->len != key_lens[0])
			continue;
		out("  %-4s %-8s %-5s %6.2f bits/key / %6.2f = %.3f  %-7s",
		    r->plan->name, type_names[r->type],
		    r->fixed ? r->fixed->name : rate_name(r->rate),
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
	fprintf(stderr, "usage: %s [-o TABLE_FILE] [-s] [-x] [-w] [-n LARGE_KEYS] [-t TYPE]\n"
		"  -o  also write the report to TABLE_FILE\n"
		"  -s  small run: 1M keys only (the memory reference stays full size)\n"
		"  -x  fixed-size rows, 8-byte keys: Bloom at 1%%, blocked Bloom at 8.4 and\n"
		"      10 bits/key, cuckoo with 12-bit fingerprints at 95.4%% load\n"
		"  -w  single-writer filters: Bloom-type adds with plain ORs, as libsieve's\n"
		"      local filters (else atomic, as in the kernel)\n"
		"  -n  keys of the large table instead of 64000000\n"
		"  -t  only this type: bloom, blocked or cuckoo (repeatable)\n", prog);
}

int main(int argc, char **argv)
{
	struct result res[NSIZES * (NLENS * NTYPES * NRATES + ARRAY_SIZE(fixed_rows) + 1)];
	double hash_ns[NLENS][2], t0 = now_ns();
	int s, l, t, r, n = 0, nsizes = NSIZES, opt, err;
	bool fixed = false;
	u32 wanted = 0;
	struct memref m = { 0 };
	static char large_name[24];

	while ((opt = getopt(argc, argv, "o:sxwn:t:")) != -1) {
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
		case 'x':
			fixed = true;
			break;
		case 'w':
			single_writer = true;
			break;
		case 'n':
			plans[1].nkeys = strtoull(optarg, NULL, 0) / CHUNK * CHUNK;
			plans[1].npos = min(plans[1].npos, plans[1].nkeys);
			plans[1].name = large_name;
			snprintf(large_name, sizeof(large_name),
				 plans[1].nkeys % 1000000 ? "%lluk" : "%lluM",
				 (unsigned long long)(plans[1].nkeys /
						      (plans[1].nkeys % 1000000 ? 1000 : 1000000)));
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

	for (s = 0; s < nsizes; s++) {
		if (fixed) {
			res[n++] = (struct result){ .type = SIEVE_BLOOM, .rate = rates_ppb[0],
						    .len = key_lens[0], .plan = &plans[s] };
			for (r = 0; r < (int)ARRAY_SIZE(fixed_rows); r++)
				res[n++] = (struct result){ .type = fixed_rows[r].type,
							    .rate = rates_ppb[0],
							    .fixed = &fixed_rows[r],
							    .len = key_lens[0], .plan = &plans[s] };
			continue;
		}
		for (l = 0; l < NLENS; l++)
			for (t = 0; t < NTYPES; t++)
				for (r = 0; r < NRATES && (!wanted || wanted & 1U << t); r++)
					res[n++] = (struct result){ .type = types[t],
								    .rate = rates_ppb[r],
								    .len = key_lens[l],
								    .plan = &plans[s] };
	}
	for (r = 0; r < n; r++) {
		struct result *cur = &res[r];
		double t1 = now_ns();

		progress("bench: %s keys, %2u bytes, %-8s %-5s ...", cur->plan->name, cur->len,
			 type_names[cur->type],
			 cur->fixed ? cur->fixed->name : rate_name(cur->rate));
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
