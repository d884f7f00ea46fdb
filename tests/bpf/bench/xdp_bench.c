// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-xdp: ns per packet of the XDP blocklist under
 * BPF_PROG_TEST_RUN (the kernel's own average over REPEAT runs of one
 * packet), side by side with a program that only returns XDP_DROP (the
 * floor): a packet not on the list and one on it, with the bloom-filter
 * map (bloom-only, exact), the same lookup in a plain hash map only, and
 * the blocked backend (planned for the target, and for the rate the bloom
 * map really gets), at 1M and 10M source entries. Each filter's
 * false-positive rate is measured on a stream of new sources. The stream rows put a program in front that gives every
 * repetition a new source address (bpf/bench_stream.bpf.c), so keys are
 * cache-cold; the floor's stream row carries the same front program.
 * Memory per entry: the plan against what the kernel charges (fdinfo).
 * Then a FireHOL-like list (about 6000 sources and prefixes of every IPv4
 * length /8-/32): probe lengths, keys after expansion, and ns per packet
 * for a packet that misses (walks every probe) and ones that hit a long
 * and a short prefix, at 8 and 16 probes, beside as many entries of only
 * 16 prefix lengths.
 *
 * Last, the keyed digest's cost: a packet that misses, timed with the
 * program and with its build on the old linear digest, on the same maps.
 *
 * Usage: sieve-xdp-bench [-o FILE] [-r REPEAT] [-s|-l|-f|-d]
 *   -s: 1M entries only, -l: 10M only, -f: the FireHOL-like list only,
 *   -d: the digest's cost only
 *        sieve-xdp-bench -W FILE   writes the FireHOL-like list to FILE (no root)
 */
#define _GNU_SOURCE	/* sched_setaffinity */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"
#include "backend.h"
#include "sieve_xdp.skel.h"
#include "pkt.h"

static struct sieve_xdp *skel;
static struct sxdp_handle h;
/* The digest fields of every generation the bench makes by hand. */
static const struct sieve_xdp_config keyed = {
	.digest = SIEVE_XDP_DIGEST,
	.digest_key = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL },
	.blocked_seed = 0x243f6a8885a308d3ULL,
};
static int sieve_fd, floor_fd, stream_fd, stream_next_fd;
/* The program on the old linear digest, and on SipHash-2-4, on sieve_fd's maps. */
static int linear_fd = -1, sip24_fd = -1;
static uint32_t repeat = 1000000;
static FILE *out;
static double floor_ns, floor_stream_ns;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (out) {
		va_start(ap, fmt);
		vfprintf(out, fmt, ap);
		va_end(ap);
	}
	fflush(stdout);
}

/* The kernel's average ns per run; the best of nine, against noise (other jobs share the CPUs). */
static double run_ns(int fd, const uint8_t *pkt, size_t len)
{
	uint8_t copy[PKT_MAX];
	double best = 1e30;
	int i;

	/* i == 0 warms caches and branch predictors and is not counted. */
	for (i = 0; i < 10; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = copy, .data_size_in = len,
			    .repeat = repeat);

		memcpy(copy, pkt, len);
		if (bpf_prog_test_run_opts(fd, &o))
			return -1;
		if (i && o.duration < best)
			best = o.duration;
	}
	return best;
}

/* The stream: the front program, then a tail call into fd. */
static double stream_ns(int fd, const uint8_t *pkt, size_t len)
{
	uint32_t zero = 0;

	if (bpf_map_update_elem(stream_next_fd, &zero, &fd, BPF_ANY))
		return -1;
	return run_ns(stream_fd, pkt, len);
}

static void row(const char *what, double ns, double base)
{
	say("| %-44s | %7.1f | %5.2fx |\n", what, ns, ns / base);
}

static int load_prog(const char *path, const char *name, struct bpf_object **obj)
{
	*obj = bpf_object__open_file(path, NULL);
	if (!*obj || bpf_object__load(*obj))
		return -1;
	return bpf_program__fd(bpf_object__find_program_by_name(*obj, name));
}

static uint64_t memlock(int fd)
{
	unsigned long long v = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static uint64_t rng_state = 0x243f6a8885a308d3ULL;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t udp_from(uint32_t saddr, uint8_t *buf)
{
	struct pkt_spec s = { .flow = { .family = SIEVE_XDP_V4, .proto = IPPROTO_UDP,
					.sport = htons(5000), .dport = htons(53) },
			      .payload = 18 };

	s.flow.saddr[0] = saddr;
	s.flow.daddr[0] = htonl(0xc0000201);	/* 192.0.2.1 */
	return pkt_build(&s, buf);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec - t0->tv_sec + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

struct bench_list {
	struct sxdp_list l;
	uint8_t miss[PKT_MAX], hit[PKT_MAX];
	size_t miss_len, hit_len;
	int exact_fd;		/* the exact map, filled once, shared by every rate */
};

/* n random source entries, a packet on the list and one not on it. */
static int make_list(struct bench_list *b, uint64_t n)
{
	struct sieve_xdp_key k = { .kind = SIEVE_XDP_SRC, .family = SIEVE_XDP_V4,
				   .prefix_len = 32 };
	size_t i;

	for (i = 0; i < n; i++) {
		k.saddr[0] = (uint32_t)rng();
		if (sxdp_list_add(&b->l, &k))
			return -ENOMEM;
	}
	sxdp_list_sort(&b->l);
	b->hit_len = udp_from(b->l.keys[0].saddr[0], b->hit);
	for (i = 0; i < 1000; i++) {
		k.saddr[0] = htonl(0xcb007100 + i);	/* 203.0.113.0 + i */
		if (!sxdp_list_find(&b->l, &k))
			break;
	}
	b->miss_len = udp_from(k.saddr[0], b->miss);
	b->exact_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "bench_exact", sizeof(k), sizeof(uint32_t),
				     (uint32_t)n, NULL);
	if (b->exact_fd < 0)
		return -errno;
	return sxdp_gen_insert(-1, b->exact_fd, keyed.digest_key, b->l.keys, b->l.n);
}

/*
 * The filters of one list and rate: the bloom-filter map, the blocked
 * backend planned for the same target and, for a false-positive rate no
 * worse, the blocked backend planned for the rate the bloom map really
 * gets (its bitmap is rounded up to a power of two, so it beats the target).
 */
enum { GEN_BLOOM, GEN_BLOCKED, GEN_BLOCKED_MATCHED, NR_GENS };

struct bench_gen {
	const char *name;
	struct sxdp_plan plan;
	int fd;
	double fill_s;
};

static const struct {
	uint32_t flags;
	int gen;
	const char *name;
} modes[] = {
	{ 0, GEN_BLOOM, "bloom-map" },
	{ SIEVE_XDP_F_EXACT, GEN_BLOOM, "bloom-map, exact" },
	{ SIEVE_XDP_F_HASH_ONLY, GEN_BLOOM, "hash map only" },
	{ SIEVE_XDP_F_BLOCKED, GEN_BLOCKED, "blocked" },
	{ SIEVE_XDP_F_BLOCKED | SIEVE_XDP_F_EXACT, GEN_BLOCKED, "blocked, exact" },
	{ SIEVE_XDP_F_BLOCKED, GEN_BLOCKED_MATCHED, "blocked at bloom-map's rate" },
};
#define NR_MODES	(sizeof(modes) / sizeof(modes[0]))

static int gens_create(struct bench_list *b, uint64_t n, uint32_t fpp_ppb, struct bench_gen *g)
{
	struct timespec t0;
	int i, unused, ret;

	g[GEN_BLOOM].name = "bloom-map";
	g[GEN_BLOCKED].name = "blocked";
	g[GEN_BLOCKED_MATCHED].name = "blocked at bloom-map's rate";
	ret = sxdp_plan(n, fpp_ppb, &g[GEN_BLOOM].plan);
	if (!ret)
		ret = sxdp_plan_blocked(n, fpp_ppb, &g[GEN_BLOCKED].plan);
	if (!ret)
		ret = sxdp_plan_blocked(n, (uint32_t)(g[GEN_BLOOM].plan.fpr * 1e9) ?: 1,
					&g[GEN_BLOCKED_MATCHED].plan);
	for (i = 0; !ret && i < NR_GENS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = sxdp_gen_create(&g[i].plan, &keyed, false, &b->l, &g[i].fd, &unused);
		g[i].fill_s = seconds_since(&t0);
	}
	return ret;
}

/* The live generation: gen's filter with flags, and the shared exact map. */
static int use(struct bench_list *b, const struct bench_gen *g, uint32_t flags)
{
	struct sieve_xdp_config cfg = keyed;

	sxdp_config_fill(&cfg, &b->l);
	cfg.flags = flags;
	cfg.capacity = g->plan.capacity;
	sxdp_backend_of(flags)->config(&cfg, &g->plan);
	cfg.fpp_ppb = g->plan.fpp_ppb;
	return sxdp_swap(&h, &cfg, g->fd, b->exact_fd);
}

/*
 * The measured rate: a stream of @queries new sources in exact mode, where
 * the program counts each filter hit the exact map refutes. Sources on the
 * list are dropped; every other one passes, false positive or not.
 */
static int measure_fpr(struct bench_list *b, const struct bench_gen *g, uint32_t queries,
		       double *fpr)
{
	struct sieve_xdp_stats s0, s1;
	uint32_t zero = 0;
	uint64_t fp, passed;
	int ret = use(b, g, SIEVE_XDP_F_EXACT | (g->plan.blocked ? SIEVE_XDP_F_BLOCKED : 0));
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = b->miss, .data_size_in = b->miss_len,
		    .repeat = queries);

	if (!ret)
		ret = sxdp_read_stats(&h, &s0);
	if (!ret && bpf_map_update_elem(stream_next_fd, &zero, &sieve_fd, BPF_ANY))
		ret = -errno;
	if (!ret && bpf_prog_test_run_opts(stream_fd, &o))
		ret = -errno;
	if (!ret)
		ret = sxdp_read_stats(&h, &s1);
	if (ret)
		return ret;
	fp = s1.c[SIEVE_XDP_FALSE_POSITIVES].packets - s0.c[SIEVE_XDP_FALSE_POSITIVES].packets;
	passed = s1.c[SIEVE_XDP_PASSED].packets - s0.c[SIEVE_XDP_PASSED].packets;
	*fpr = passed ? (double)fp / passed : 0;
	say("  %-28s %8llu of %llu sources not on the list: %.3g (planned %.3g)\n", g->name,
	    (unsigned long long)fp, (unsigned long long)passed, *fpr, g->plan.fpr);
	return 0;
}

static void rate_rows(const double ns[NR_MODES][3])
{
	char what[96];
	size_t m;

	say("| %-44s | ns/pkt  | floor  |\n|---|---|---|\n", "sieve, one entry kind (source)");
	for (m = 0; m < NR_MODES; m++) {
		snprintf(what, sizeof(what), "%s, not on the list", modes[m].name);
		row(what, ns[m][0], floor_ns);
		snprintf(what, sizeof(what), "%s, on the list", modes[m].name);
		row(what, ns[m][1], floor_ns);
	}
	for (m = 0; m < NR_MODES; m++) {
		snprintf(what, sizeof(what), "stream: %s", modes[m].name);
		row(what, ns[m][2], floor_stream_ns);
	}
}

/* The aims: blocked stream and hot misses against the bloom map and the floor. */
static void rate_summary(const double ns[NR_MODES][3])
{
	double bloom = ns[0][2] - floor_stream_ns, hash = ns[2][2] - floor_stream_ns;
	double blocked = ns[3][2] - floor_stream_ns, matched = ns[5][2] - floor_stream_ns;

	say("stream, above the floor's stream: bloom-map %.1f ns, blocked %.1f ns (%.2fx faster), "
	    "blocked at bloom-map's rate %.1f ns (%.2fx), hash map %.1f ns\n", bloom, blocked,
	    bloom / blocked, matched, bloom / matched, hash);
	say("not on the list, hot: bloom-map %.2fx the floor, blocked %.2fx, "
	    "blocked at bloom-map's rate %.2fx\n", ns[0][0] / floor_ns, ns[3][0] / floor_ns,
	    ns[5][0] / floor_ns);
}

/* One target rate: every mode's rows, then each filter's measured rate and memory. */
static int bench_rate(struct bench_list *b, uint64_t n, uint32_t fpp_ppb)
{
	struct bench_gen g[NR_GENS] = { { .fd = -1 }, { .fd = -1 }, { .fd = -1 } };
	/* At least 100 false positives expected down to a target of 1e-6. */
	uint32_t queries = fpp_ppb >= 100000 ? 1000000 : 100000000;
	double ns[NR_MODES][3], fpr;
	size_t m;
	int i, ret;

	ret = gens_create(b, n, fpp_ppb, g);
	if (ret)
		goto out;
	say("\n%llu source entries (%zu distinct), target rate %g\n", (unsigned long long)n, b->l.n,
	    fpp_ppb / 1e9);
	for (i = 0; i < NR_GENS; i++)
		say("  %-28s %u %s, k %u: %.1f MiB, %.2f bits/entry, filled in %.2f s\n", g[i].name,
		    g[i].plan.max_entries, g[i].plan.blocked ? "blocks" : "max_entries",
		    g[i].plan.nr_hashes, g[i].plan.bytes / 1048576.0,
		    (double)g[i].plan.nbits / n, g[i].fill_s);
	for (m = 0; m < NR_MODES; m++) {
		ret = use(b, &g[modes[m].gen], modes[m].flags);
		if (ret)
			goto out;
		ns[m][0] = run_ns(sieve_fd, b->miss, b->miss_len);
		ns[m][1] = run_ns(sieve_fd, b->hit, b->hit_len);
		ns[m][2] = stream_ns(sieve_fd, b->miss, b->miss_len);
	}
	rate_rows(ns);
	rate_summary(ns);
	say("measured false-positive rate, a stream of %u new sources in exact mode:\n", queries);
	for (i = 0; !ret && i < NR_GENS; i++)
		ret = measure_fpr(b, &g[i], queries, &fpr);
	say("memory per entry: bloom-map planned %.3f B, kernel charges %.3f B; blocked planned "
	    "%.3f B, kernel charges %.3f B; exact hash map %.1f B (estimate %.1f B)\n",
	    (double)g[0].plan.bytes / n, (double)memlock(g[0].fd) / n,
	    (double)g[1].plan.bytes / n, (double)memlock(g[1].fd) / n,
	    (double)memlock(b->exact_fd) / n, sxdp_exact_bytes_per_entry(n));
out:
	for (i = 0; i < NR_GENS; i++)
		if (g[i].fd >= 0)
			close(g[i].fd);
	return ret;
}

/* One list size, at the default rate and at 1%. */
static int bench_entries(uint64_t n)
{
	static const uint32_t rates[] = { SXDP_DEFAULT_FPP_PPB, 10000000 };
	struct bench_list *b = calloc(1, sizeof(*b));
	size_t i;
	int ret;

	if (!b)
		return -ENOMEM;
	b->exact_fd = -1;
	ret = make_list(b, n);
	for (i = 0; !ret && i < sizeof(rates) / sizeof(rates[0]); i++)
		ret = bench_rate(b, n, rates[i]);
	if (b->exact_fd >= 0)
		close(b->exact_fd);
	sxdp_list_free(&b->l);
	free(b);
	return ret;
}


/*
 * A FireHOL-like list (the shape of firehol_level1: mostly /24s and hosts,
 * some of every length from /8 to /31), drawn from its own generator so
 * the other lists stay the same. Hosts (/32) are source entries. Counts
 * per length, /8 first.
 */
static const uint16_t firehol_shape[25] = {
	6, 4, 6, 8, 12, 20, 30, 40,		/* /8-/15 */
	200, 60, 90, 150, 250, 250, 450, 300,	/* /16-/23 */
	1800, 20, 30, 30, 30, 40, 20, 10,	/* /24-/31 */
	2100,					/* /32 */
};
/* The control: as many prefixes over 16 lengths only (/16-/31), and the same hosts. */
#define CONTROL_FIRST	16

static uint64_t list_rng_state = 0x6a09e667f3bcc908ULL;

static uint32_t list_rng(void)
{
	uint64_t z = (list_rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (uint32_t)(z ^ (z >> 31));
}

static uint32_t mask_of(unsigned int len)
{
	return len ? ~0U << (32 - len) : 0;
}

/* Adds @n prefixes of @len (host order, random, public-looking) to @l through the parser. */
static int add_prefixes(struct sxdp_list *l, unsigned int len, unsigned int n)
{
	struct sieve_xdp_key k;
	const char *why;
	char text[32];
	uint32_t a;
	unsigned int i;

	for (i = 0; i < n; i++) {
		/* 1.0.0.0-223.255.255.255, not 192.0.2.0/24 (the miss packet's range is checked). */
		do
			a = list_rng();
		while ((a >> 24) == 0 || (a >> 24) >= 224 || (a >> 24) == 127);
		a &= mask_of(len);
		snprintf(text, sizeof(text), "%u.%u.%u.%u/%u", a >> 24, (a >> 16) & 255,
			 (a >> 8) & 255, a & 255, len);
		if (sxdp_parse_entry(text, &k, &why) || sxdp_list_add(l, &k))
			return -EINVAL;
	}
	return 0;
}

/* @control: the 16-length list, else the FireHOL-like one. Sorted, no duplicates. */
static int firehol_list(struct sxdp_list *l, bool control)
{
	unsigned int len, prefixes = 0, per, ret = 0;

	list_rng_state = control ? 0xbb67ae8584caa73bULL : 0x6a09e667f3bcc908ULL;
	if (!control) {
		for (len = 8; !ret && len <= 32; len++)
			ret = add_prefixes(l, len, firehol_shape[len - 8]);
	} else {
		for (len = 8; len < 32; len++)
			prefixes += firehol_shape[len - 8];
		per = prefixes / 16;
		for (len = CONTROL_FIRST; !ret && len < 32; len++)
			ret = add_prefixes(l, len, len == 31 ? prefixes - 15 * per : per);
		if (!ret)
			ret = add_prefixes(l, 32, firehol_shape[24]);
	}
	sxdp_list_sort(l);
	return ret ? -EINVAL : 0;
}

/* The longest entry of @l covering host-order @a (33: a source entry), 0 if none. */
static unsigned int longest_cover(const struct sxdp_list *l, uint32_t a)
{
	unsigned int best = 0, len;
	size_t i;

	for (i = 0; i < l->n; i++) {
		len = l->keys[i].prefix_len;
		if ((a & mask_of(len)) != ntohl(l->keys[i].saddr[0]))
			continue;
		if (l->keys[i].kind == SIEVE_XDP_SRC)
			len = 33;
		if (len > best)
			best = len;
	}
	return best;
}

/* A host-order address whose longest cover in @l is exactly @len (0: none); 0 if none found. */
static uint32_t address_covered_at(const struct sxdp_list *l, unsigned int len)
{
	uint32_t a;
	size_t i, tries;

	if (!len) {
		for (a = 0xc0000201; a < 0xc0000300; a++)	/* 192.0.2.1 up */
			if (!longest_cover(l, a))
				return a;
		return 0;
	}
	for (i = 0; i < l->n; i++) {
		if (l->keys[i].prefix_len != len || l->keys[i].kind != SIEVE_XDP_PREFIX)
			continue;
		/* Inside it, away from the longer entries nested in it. */
		for (tries = 0; tries < 64; tries++) {
			a = ntohl(l->keys[i].saddr[0]) | (list_rng() & ~mask_of(len));
			if (longest_cover(l, a) == len)
				return a;
		}
	}
	return 0;
}

static int write_firehol(const char *path)
{
	struct sxdp_list l = { 0 };
	char text[64];
	size_t i;
	FILE *f = fopen(path, "w");
	int ret = f ? firehol_list(&l, false) : -errno;

	if (!ret) {
		fprintf(f, "# A FireHOL-like list (firehol_level1's shape), sieve-xdp-bench -W\n"
			"# %zu entries, every IPv4 prefix length from /8 to /32\n", l.n);
		for (i = 0; i < l.n; i++) {
			sxdp_format_entry(&l.keys[i], text, sizeof(text));
			fprintf(f, "%s\n", text);
		}
		if (fclose(f))
			ret = -errno;
	} else if (f) {
		fclose(f);
	}
	sxdp_list_free(&l);
	return ret;
}

/* The maps rebuilt for @l on backend @flags with @max_probes; their config into @cfg. */
static int bench_rebuild(const struct sxdp_list *l, uint32_t flags, unsigned int max_probes,
			 const char *name, struct sieve_xdp_config *cfg)
{
	char err[256] = "";
	int ret;

	ret = sxdp_rebuild_probes(&h, l, flags, SXDP_DEFAULT_FPP_PPB, 0, max_probes, err,
				  sizeof(err));
	if (!ret)
		ret = sxdp_read_config(&h, cfg, NULL);
	if (ret)
		fprintf(stderr, "xdp bench: %s: %s\n", name, err[0] ? err : strerror(-ret));
	return ret;
}

/* One list, backend and probe budget: its config and ns per packet. */
static int firehol_case(const char *name, const struct sxdp_list *l, uint32_t flags,
			unsigned int max_probes, const uint8_t pkts[3][PKT_MAX], const size_t lens[3])
{
	struct sieve_xdp_config cfg;
	char probes[128];
	double ns[3];
	size_t off = 0;
	unsigned int i;
	int ret;

	ret = bench_rebuild(l, flags, max_probes, name, &cfg);
	if (ret)
		return ret;
	for (i = 0; i < cfg.nr_v4_lens && off < sizeof(probes) - 4; i++)
		off += snprintf(probes + off, sizeof(probes) - off, "%s%u", i ? "," : "",
				cfg.v4_lens[i]);
	for (i = 0; i < 3; i++)
		ns[i] = lens[i] ? run_ns(sieve_fd, pkts[i], lens[i]) : 0;
	say("| %-22s | %-9s | %2u | %2u: %-46s | %6llu / %4llu (x%.2f) | %2u | %6.1f | %6.1f | "
	    "%6.1f |\n", name, sxdp_backend_name(flags), max_probes, cfg.nr_v4_lens, probes,
	    (unsigned long long)cfg.keys, (unsigned long long)cfg.entries,
	    cfg.entries ? (double)cfg.keys / cfg.entries : 0,
	    cfg.nr_v4_lens + !!(cfg.kinds & SIEVE_XDP_KIND_BIT(SIEVE_XDP_SRC, SIEVE_XDP_V4)),
	    ns[0], ns[1], ns[2]);
	return 0;
}

/*
 * The FireHOL-like list at 8 and 16 probes and the 16-length control, on
 * either backend: a packet that misses (every probe), one that hits a /31
 * (the longest prefix: the source probe and the first prefix probe) and
 * one that hits a /8 only (every probe, the last one hits).
 */
static int bench_firehol(void)
{
	static const uint32_t backends[] = { 0, SIEVE_XDP_F_BLOCKED };
	struct sxdp_list fh = { 0 }, ctl = { 0 };
	uint8_t pkts[2][3][PKT_MAX];
	size_t lens[2][3];
	uint32_t a[2][3];
	unsigned int b, c;
	int ret;

	ret = firehol_list(&fh, false);
	if (!ret)
		ret = firehol_list(&ctl, true);
	if (ret)
		goto out;
	a[0][0] = address_covered_at(&fh, 0);
	a[0][1] = address_covered_at(&fh, 31);
	a[0][2] = address_covered_at(&fh, 8);
	a[1][0] = address_covered_at(&ctl, 0);
	a[1][1] = address_covered_at(&ctl, 31);
	a[1][2] = address_covered_at(&ctl, 16);
	for (c = 0; c < 2; c++)
		for (b = 0; b < 3; b++)
			lens[c][b] = a[c][b] ? udp_from(htonl(a[c][b]), pkts[c][b]) : 0;
	say("\nFireHOL-like list: %zu entries, every IPv4 length /8-/32 (%zu hosts); control: %zu "
	    "entries, prefixes of 16 lengths /16-/31 and the same hosts. ns/packet, best of 9; "
	    "probes: what a packet that misses walks (source + prefix lengths). Hits: the "
	    "FireHOL list's /31 and /8, the control's /31 and /16 (its shortest).\n\n",
	    fh.n, (size_t)firehol_shape[24], ctl.n);
	say("| %-22s | %-9s | mp | %-50s | %-26s | pr | miss   | hit /31 | hit short |\n"
	    "|---|---|---|---|---|---|---|---|---|\n", "list", "backend", "v4 lengths probed",
	    "keys / entries (expansion)");
	for (b = 0; !ret && b < 2; b++) {
		ret = firehol_case("FireHOL-like", &fh, backends[b], 8, pkts[0], lens[0]);
		if (!ret)
			ret = firehol_case("FireHOL-like", &fh, backends[b], 16, pkts[0], lens[0]);
		if (!ret)
			ret = firehol_case("16 lengths (control)", &ctl, backends[b], 16, pkts[1],
					   lens[1]);
	}
out:
	sxdp_list_free(&fh);
	sxdp_list_free(&ctl);
	return ret;
}

/*
 * A build of the program on another digest (sieve_xdp_linear.bpf.c,
 * sieve_xdp_siphash24.bpf.c), loaded on the maps of the real one: both
 * see the same generation.
 */
static int load_variant(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_map *map, *ours;

	if (!obj)
		return -errno;
	bpf_object__for_each_map(map, obj) {
		bpf_map__set_pin_path(map, NULL);
		ours = bpf_object__find_map_by_name(skel->obj, bpf_map__name(map));
		if (ours && bpf_map__reuse_fd(map, bpf_map__fd(ours)))
			return -EINVAL;
	}
	if (bpf_object__load(obj))
		return -EINVAL;
	return bpf_program__fd(bpf_object__find_program_by_name(obj, "sieve_xdp"));
}

static int setup(void)
{
	struct bpf_object *floor_obj, *stream_obj;
	struct bpf_map *map;
	char dir[256], path[512];
	ssize_t len;

	/* The BPF objects sit in build/bpf, beside this binary's folder. */
	len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (len < 0)
		return -errno;
	dir[len] = '\0';
	*strrchr(dir, '/') = '\0';
	*strrchr(dir, '/') = '\0';
	skel = sieve_xdp__open();
	if (!skel)
		return -errno;
	bpf_object__for_each_map(map, skel->obj)
		bpf_map__set_pin_path(map, NULL);
	if (sieve_xdp__load(skel))
		return -EINVAL;
	sieve_fd = bpf_program__fd(skel->progs.sieve_xdp);
	h = (struct sxdp_handle){
		.active_fd = bpf_map__fd(skel->maps.sieve_active),
		.cfg_fd = bpf_map__fd(skel->maps.sieve_cfg),
		.bloom_fd = bpf_map__fd(skel->maps.sieve_bloom),
		.exact_fd = bpf_map__fd(skel->maps.sieve_exact),
		.stats_fd = bpf_map__fd(skel->maps.sieve_stats),
		.allow_fd = bpf_map__fd(skel->maps.sieve_allow),
		.blocked_fd = bpf_map__fd(skel->maps.sieve_blocked),
		.removed_fd = bpf_map__fd(skel->maps.sieve_removed),
		.v4top_fd = bpf_map__fd(skel->maps.sieve_v4top),
		.v4chunk_fd = bpf_map__fd(skel->maps.sieve_v4chunk),
	};
	snprintf(path, sizeof(path), "%s/bpf/floor.bpf.o", dir);
	floor_fd = load_prog(path, "sieve_xdp_floor", &floor_obj);
	snprintf(path, sizeof(path), "%s/bpf/bench_stream.bpf.o", dir);
	stream_fd = load_prog(path, "sieve_bench_stream", &stream_obj);
	if (floor_fd < 0 || stream_fd < 0)
		return -ENOENT;
	stream_next_fd = bpf_map__fd(bpf_object__find_map_by_name(stream_obj, "bench_next"));
	snprintf(path, sizeof(path), "%s/bench-xdp/sieve_xdp_linear.bpf.o", dir);
	linear_fd = load_variant(path);
	if (linear_fd < 0) {
		fprintf(stderr, "xdp bench: %s: %s\n", path, strerror(-linear_fd));
		return linear_fd;
	}
	snprintf(path, sizeof(path), "%s/bench-xdp/sieve_xdp_siphash24.bpf.o", dir);
	sip24_fd = load_variant(path);
	if (sip24_fd < 0)
		fprintf(stderr, "xdp bench: %s: %s\n", path, strerror(-sip24_fd));
	return sip24_fd < 0 ? sip24_fd : 0;
}

/*
 * The keyed digest's cost: the live generation of @l (backend @flags, at
 * most @max_probes), a packet that misses timed with the program and with
 * its linear-digest build; each best of three alternating runs of best-of-9.
 */
static int digest_case(const char *name, const struct sxdp_list *l, uint32_t flags,
		       unsigned int max_probes, const uint8_t *pkt, size_t len)
{
	struct sieve_xdp_config cfg;
	double keyed = 1e30, linear = 1e30, sip24 = 1e30, x;
	unsigned int probes;
	int i, ret;

	ret = bench_rebuild(l, flags, max_probes, name, &cfg);
	if (ret)
		return ret;
	for (i = 0; i < 3; i++) {
		x = run_ns(sieve_fd, pkt, len);
		keyed = x < keyed ? x : keyed;
		x = run_ns(linear_fd, pkt, len);
		linear = x < linear ? x : linear;
		x = run_ns(sip24_fd, pkt, len);
		sip24 = x < sip24 ? x : sip24;
	}
	probes = cfg.nr_v4_lens + !!(cfg.kinds & SIEVE_XDP_KIND_BIT(SIEVE_XDP_SRC, SIEVE_XDP_V4));
	say("| %-26s | %-9s | %2u | %7.1f | %7.1f | %5.3f | %6.2f | %7.1f | %5.3f |\n", name,
	    sxdp_backend_name(flags), probes, linear, keyed, keyed / linear,
	    probes ? (keyed - linear) / probes : 0, sip24, sip24 / linear);
	return 0;
}

/*
 * The keyed digest against the linear one, one run: a list of sources
 * (one probe a packet) and the FireHOL-like list at 16 probes (17 digests
 * for a packet that misses), on both map backends.
 */
static int bench_digest(void)
{
	static const uint32_t backends[] = { 0, SIEVE_XDP_F_BLOCKED };
	struct sxdp_list src = { 0 }, fh = { 0 };
	struct sieve_xdp_key k = { .kind = SIEVE_XDP_SRC, .family = SIEVE_XDP_V4,
				   .prefix_len = 32 };
	uint8_t miss[PKT_MAX], fh_miss[PKT_MAX];
	size_t miss_len, fh_len, i;
	unsigned int b;
	int ret = 0;

	for (i = 0; !ret && i < 100000; i++) {
		k.saddr[0] = htonl(0x0a000000 + (uint32_t)i * 7);	/* in 10/8 */
		ret = sxdp_list_add(&src, &k);
	}
	if (!ret)
		ret = firehol_list(&fh, false);
	if (ret)
		goto out;
	sxdp_list_sort(&src);
	miss_len = udp_from(htonl(0xcb007101), miss);		/* 203.0.113.1 */
	fh_len = udp_from(htonl(address_covered_at(&fh, 0)), fh_miss);
	say("\nThe digest's cost: a packet that misses (a digest and a filter peek per probe), "
	    "ns/packet with the old linear digest (bench build), the keyed SipHash-1-3 (shipped) "
	    "and SipHash-2-4 (bench build), the same maps; best of 3 x best of 9; ns/digest: "
	    "(1-3 - linear) / probes.\n\n");
	say("| %-26s | %-9s | pr | linear  | 1-3     | ratio | ns/digest | 2-4     | ratio |\n"
	    "|---|---|---|---|---|---|---|---|---|\n", "list", "backend");
	for (b = 0; !ret && b < 2; b++) {
		ret = digest_case("100000 sources", &src, backends[b], 8, miss, miss_len);
		if (!ret)
			ret = digest_case("FireHOL-like, 16 probes", &fh, backends[b], 16, fh_miss,
					  fh_len);
	}
out:
	sxdp_list_free(&src);
	sxdp_list_free(&fh);
	return ret;
}

int main(int argc, char **argv)
{
	uint64_t sizes[] = { 1000000, 10000000 };
	struct sxdp_list empty = { 0 };
	struct sieve_xdp_config cfg = keyed;
	uint8_t pkt[PKT_MAX];
	size_t len, first = 0, nsizes = 2, i;
	bool firehol_only = false, digest_only = false;
	int opt, err;

	while ((opt = getopt(argc, argv, "o:r:slfdW:")) != -1) {
		if (opt == 'o')
			out = fopen(optarg, "w");
		else if (opt == 'r')
			repeat = strtoul(optarg, NULL, 10);
		else if (opt == 's')
			nsizes = 1;
		else if (opt == 'l')
			first = 1;
		else if (opt == 'f')
			firehol_only = true;
		else if (opt == 'd')
			digest_only = firehol_only = true;
		else if (opt == 'W') {
			err = write_firehol(optarg);
			if (err)
				fprintf(stderr, "xdp bench: %s: %s\n", optarg, strerror(-err));
			return err ? 2 : 0;
		} else {
			fprintf(stderr, "usage: sieve-xdp-bench [-o FILE] [-r REPEAT] [-s|-l|-f|-d] | -W FILE\n");
			return 2;
		}
	}
	if (firehol_only)
		nsizes = first = 0;
	/* One CPU: BPF_PROG_TEST_RUN runs where it is called; no migrations. */
	{
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	err = setup();
	if (err) {
		fprintf(stderr, "xdp bench: loading the programs: %s (root?)\n", strerror(-err));
		return 2;
	}
	len = udp_from(htonl(0xc6336407), pkt);
	floor_ns = run_ns(floor_fd, pkt, len);
	floor_stream_ns = stream_ns(floor_fd, pkt, len);
	say("XDP blocklist, BPF_PROG_TEST_RUN, repeat %u, best of 9, one %zu-byte IPv4 UDP packet\n\n",
	    repeat, len);
	say("| %-44s | ns/pkt  | floor  |\n|---|---|---|\n", "program");
	row("floor: XDP_DROP only", floor_ns, floor_ns);
	row("floor stream: new source, tail call, XDP_DROP", floor_stream_ns, floor_stream_ns);
	sxdp_config_fill(&cfg, &empty);
	cfg.capacity = cfg.bloom.max_entries = 1;
	err = sxdp_swap(&h, &cfg, -1, -1) ? -EINVAL : 0;
	if (!err)
		row("sieve, empty list (parsing only)", run_ns(sieve_fd, pkt, len), floor_ns);
	for (i = first; !err && i < nsizes; i++)
		err = bench_entries(sizes[i]);
	if (!err && !digest_only)
		err = bench_firehol();
	if (!err)
		err = bench_digest();
	sieve_xdp__destroy(skel);
	if (out)
		fclose(out);
	if (err)
		fprintf(stderr, "xdp bench: %s\n", strerror(-err));
	return err ? 2 : 0;
}
