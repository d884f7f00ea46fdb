// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-xdp: ns per packet of the XDP blocklist under
 * BPF_PROG_TEST_RUN (the kernel's own average over REPEAT runs of one
 * packet), side by side with a program that only returns XDP_DROP (the
 * floor): a packet not on the list and one on it, with the bloom-filter
 * map (bloom-only, exact), the same lookup in a plain hash map only (a
 * bench build of the program, sieve_xdp_hash_only.bpf.c), and
 * the blocked backend (planned for the target, and for the rate the bloom
 * map really gets), at 1M and 10M source entries. Each filter's
 * false-positive rate is measured on a stream of new sources. The stream rows put a program in front that gives every
 * repetition a new source address (tests/bpf/bench/bench_stream.bpf.c), so keys are
 * cache-cold; the floor's stream row carries the same front program.
 * Memory per entry: the plan against what the kernel charges (fdinfo).
 * Then a FireHOL-like list (about 6000 sources and prefixes of every IPv4
 * length /8-/32): probe lengths, keys after expansion, and ns per packet
 * for a packet that misses (walks every probe) and ones that hit a long
 * and a short prefix, at 8 and 16 probes, beside as many entries of only
 * 16 prefix lengths.
 *
 * Then the prefix lists against their peers: the FireHOL-like list, the
 * 16-length control and a list of every length /1-/32, each as the loader
 * builds it (whatever structure that is), beside a list of as many sources
 * only (the cost the aims allow 1.3x of) and beside the same prefixes in a
 * BPF_MAP_TYPE_LPM_TRIE (tests/bpf/bench/lpm_peer.bpf.c): a packet that
 * misses, one that hits the shortest and one the longest entry, memory;
 * then where the time goes: the parser alone (lpm_peer.bpf.c's
 * parse_only_xdp) on the same packets, each program's ns above it, sieve
 * as before the host bitmap and the allowlist flag, and the trie's ratio
 * on both bases.
 *
 * Then the keyed digest's cost: a packet that misses, timed with the
 * program and with its build on the old linear digest, on the same maps.
 * Last, the samples' cost: a dropped and a passed packet with sampling
 * off, at the default rate and at the highest with the ring full.
 *
 * Usage: sieve-xdp-bench [-o FILE] [-r REPEAT] [-c COMMIT] [-s|-l|-f|-d|-p]
 *   -s: 1M entries only, -l: 10M only, -f: the FireHOL-like list only
 *   (with the peers and the digest's cost), -d: the digest's cost only,
 *   -p: the peers only, -S: the samples' cost only; -c: the commit the output names
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
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"
#include "backend.h"
#include "sieve_xdp.skel.h"
#include "pkt.h"
#include "private_maps.h"
#include "splitmix.h"

static struct sieve_xdp *skel;
static struct sxdp_handle h;
/* The digest fields of every generation the bench makes by hand. */
static const struct sieve_xdp_config keyed = {
	.digest = SIEVE_XDP_DIGEST,
	.digest_key = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL },
	.blocked_seed = 0x243f6a8885a308d3ULL,
};
static int sieve_fd, hash_only_fd, floor_fd, stream_fd, stream_next_fd;
/* The program on the old linear digest, and on SipHash-2-4, on sieve_fd's maps. */
static int linear_fd = -1, sip24_fd = -1;
/* The LPM-trie peer (lpm_peer.bpf.c), its trie, and the parser alone (the floor of both). */
static int peer_fd = -1, trie_fd = -1, parse_fd = -1;
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

/* The verdict (XDP_*) of one run of @fd on @pkt, or -errno: what run_ns timed. */
static int verdict_of(int fd, const uint8_t *pkt, size_t len)
{
	uint8_t copy[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = copy, .data_size_in = len, .repeat = 1);

	memcpy(copy, pkt, len);
	if (bpf_prog_test_run_opts(fd, &o))
		return -errno;
	return (int)o.retval;
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

static uint64_t rng_state = 0x243f6a8885a308d3ULL;

static uint64_t rng(void)
{
	return splitmix64_next(&rng_state);
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
	struct sxdp_keys l;
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
		if (sxdp_keys_add(&b->l, &k))
			return -ENOMEM;
	}
	sxdp_keys_sort(&b->l);
	b->hit_len = udp_from(b->l.keys[0].saddr[0], b->hit);
	for (i = 0; i < 1000; i++) {
		k.saddr[0] = htonl(0xcb007100 + i);	/* 203.0.113.0 + i */
		if (!sxdp_keys_find(&b->l, &k))
			break;
	}
	b->miss_len = udp_from(k.saddr[0], b->miss);
	b->exact_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "bench_exact", sizeof(k), sizeof(uint32_t),
				     (uint32_t)n, NULL);
	if (b->exact_fd < 0)
		return -errno;
	return sxdp_gen_insert(-1, b->exact_fd, keyed.digest_key, b->l.keys, b->l.n, NULL);
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
		ret = sxdp_gen_create(&g[i].plan, &keyed, false, &b->l, NULL, &g[i].fd, &unused);
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

/*
 * The dry run's cost: the same generation and packets, the flag on
 * against off, bloom-only and exact (where a drop is also counted per
 * origin). On the list, enforcing drops and the dry run passes; not on
 * it, both pass and the flag is never read.
 */
static int bench_dry_run(struct bench_list *b, const struct bench_gen *g)
{
	static const uint32_t flags[] = { 0, SIEVE_XDP_F_EXACT };
	const uint8_t *pkts[2] = { b->hit, b->miss };
	const size_t lens[2] = { b->hit_len, b->miss_len };
	static const char *const where[2] = { "on the list", "not on the list" };
	double ns[2][2];
	char what[96];
	size_t f;
	int d, p, ret;

	say("| %-44s | ns/pkt  | enforcing |\n|---|---|---|\n", "dry run (monitor mode)");
	for (f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		for (d = 0; d < 2; d++) {
			ret = use(b, g, flags[f] | (d ? SIEVE_XDP_F_DRY_RUN : 0));
			if (ret)
				return ret;
			if (verdict_of(sieve_fd, b->hit, b->hit_len) != (d ? XDP_PASS : XDP_DROP))
				return -EPROTO;	/* the dry run drops, or enforcing passes */
			for (p = 0; p < 2; p++)
				ns[d][p] = run_ns(sieve_fd, pkts[p], lens[p]);
		}
		for (p = 0; p < 2; p++) {
			snprintf(what, sizeof(what), "%s%s, %s, enforcing", g->name,
				 flags[f] ? ", exact" : "", where[p]);
			say("| %-44s | %7.1f | %5.2fx |\n", what, ns[0][p], 1.0);
			snprintf(what, sizeof(what), "%s%s, %s, dry run", g->name,
				 flags[f] ? ", exact" : "", where[p]);
			say("| %-44s | %7.1f | %5.2fx |\n", what, ns[1][p], ns[1][p] / ns[0][p]);
		}
	}
	return 0;
}

/* One target rate: every mode's rows, then each filter's measured rate and memory. */
static int bench_rate(struct bench_list *b, uint64_t n, uint32_t fpp_ppb)
{
	struct bench_gen g[NR_GENS] = { { .fd = -1 }, { .fd = -1 }, { .fd = -1 } };
	/* At least 100 false positives expected down to a target of 1e-6. */
	uint32_t queries = fpp_ppb >= 100000 ? 1000000 : 100000000;
	double ns[NR_MODES][3], fpr;
	size_t m;
	int i, prog, ret;

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
		/* The product cannot skip its filter: the bench build can. */
		prog = modes[m].flags & SIEVE_XDP_F_HASH_ONLY ? hash_only_fd : sieve_fd;
		ns[m][0] = run_ns(prog, b->miss, b->miss_len);
		ns[m][1] = run_ns(prog, b->hit, b->hit_len);
		ns[m][2] = stream_ns(prog, b->miss, b->miss_len);
	}
	rate_rows(ns);
	rate_summary(ns);
	if (fpp_ppb == SXDP_DEFAULT_FPP_PPB)
		ret = bench_dry_run(b, &g[0]);
	if (ret)
		goto out;
	say("measured false-positive rate, a stream of %u new sources in exact mode:\n", queries);
	for (i = 0; !ret && i < NR_GENS; i++)
		ret = measure_fpr(b, &g[i], queries, &fpr);
	say("memory per entry: bloom-map planned %.3f B, kernel charges %.3f B; blocked planned "
	    "%.3f B, kernel charges %.3f B; exact hash map %.1f B (estimate %.1f B)\n",
	    (double)g[0].plan.bytes / n, (double)sxdp_map_memlock(g[0].fd) / n,
	    (double)g[1].plan.bytes / n, (double)sxdp_map_memlock(g[1].fd) / n,
	    (double)sxdp_map_memlock(b->exact_fd) / n, sxdp_exact_bytes_per_entry(n));
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
	sxdp_keys_free(&b->l);
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
	return (uint32_t)splitmix64_next(&list_rng_state);
}

static uint32_t mask_of(unsigned int len)
{
	return len ? ~0U << (32 - len) : 0;
}

/* Adds host-order @a/@len to @l through the parser, as a feed's line would be. */
static int add_prefix(struct sxdp_keys *l, uint32_t a, unsigned int len)
{
	struct sieve_xdp_key k;
	const char *why;
	char text[32];

	snprintf(text, sizeof(text), "%u.%u.%u.%u/%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
		 a & 255, len);
	if (sxdp_parse_entry(text, &k, &why) || sxdp_keys_add(l, &k))
		return -EINVAL;
	return 0;
}

/* Adds @n prefixes of @len (host order, random, public-looking) to @l. */
static int add_prefixes(struct sxdp_keys *l, unsigned int len, unsigned int n)
{
	uint32_t a;
	unsigned int i;

	for (i = 0; i < n; i++) {
		/* 1.0.0.0-223.255.255.255, not 192.0.2.0/24 (the miss packet's range is checked). */
		do
			a = list_rng();
		while ((a >> 24) == 0 || (a >> 24) >= 224 || (a >> 24) == 127);
		if (add_prefix(l, a & mask_of(len), len))
			return -EINVAL;
	}
	return 0;
}

/* @control: the 16-length list, else the FireHOL-like one. Sorted, no duplicates. */
static int firehol_list(struct sxdp_keys *l, bool control)
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
	sxdp_keys_sort(l);
	return ret ? -EINVAL : 0;
}

/* The longest entry of @l covering host-order @a (33: a source entry), 0 if none. */
static unsigned int longest_cover(const struct sxdp_keys *l, uint32_t a)
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

/*
 * A host-order address whose longest cover in @l is exactly @len (0: none;
 * 32: a host, a source entry); 0 if none found.
 */
static uint32_t address_covered_at(const struct sxdp_keys *l, unsigned int len)
{
	unsigned int want = len == 32 ? 33 : len;
	uint32_t a;
	size_t i, tries;

	if (!len) {
		for (a = 0xc0000201; a < 0xc0000300; a++)	/* 192.0.2.1 up */
			if (!longest_cover(l, a))
				return a;
		return 0;
	}
	for (i = 0; i < l->n; i++) {
		if (l->keys[i].family != SIEVE_XDP_V4 || l->keys[i].prefix_len != len ||
		    l->keys[i].kind != (len == 32 ? SIEVE_XDP_SRC : SIEVE_XDP_PREFIX))
			continue;
		/* Inside it, away from the longer entries nested in it. */
		for (tries = 0; tries < 64; tries++) {
			a = ntohl(l->keys[i].saddr[0]) | (list_rng() & ~mask_of(len));
			if (longest_cover(l, a) == want)
				return a;
		}
	}
	return 0;
}

static int write_firehol(const char *path)
{
	struct sxdp_keys l = { 0 };
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
	sxdp_keys_free(&l);
	return ret;
}

/* The maps rebuilt for @l on backend @flags with @max_probes; their config into @cfg. */
static int bench_rebuild(const struct sxdp_keys *l, uint32_t flags, unsigned int max_probes,
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
static int firehol_case(const char *name, const struct sxdp_keys *l, uint32_t flags,
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
	struct sxdp_keys fh = { 0 }, ctl = { 0 };
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
	sxdp_keys_free(&fh);
	sxdp_keys_free(&ctl);
	return ret;
}

/*
 * Every IPv4 length /1-/32, a few of each (one /1, two /2s, three /3s,
 * four of every longer length): every other one nested in a shorter
 * prefix drawn before it, as feeds list a /24 inside their /16, the rest
 * where they fall. Each prefix keeps a witness, an address of its own no
 * longer prefix may cover, so every length has addresses whose longest
 * cover it is (the hits); none covers 192.0.2.1, the packet that misses.
 */
#define EVERY_LENGTH_PER	4
#define EVERY_LENGTH_MAX	(32 * EVERY_LENGTH_PER)
#define EVERY_LENGTH_TRIES	100000	/* draws per prefix, far more than it takes */

/* Whether host-order @a/@len covers any of @n addresses. */
static bool covers_any(uint32_t a, unsigned int len, const uint32_t *addrs, unsigned int n)
{
	while (n--)
		if ((addrs[n] & mask_of(len)) == a)
			return true;
	return false;
}

static int every_length_list(struct sxdp_keys *l)
{
	uint32_t addr[EVERY_LENGTH_MAX], witness[EVERY_LENGTH_MAX + 1], a;
	uint8_t plen[EVERY_LENGTH_MAX];
	unsigned int len, i, j, n = 0, shorter, tries;
	int ret = 0;

	list_rng_state = 0x3c6ef372fe94f82bULL;
	witness[EVERY_LENGTH_MAX] = 0xc0000201;	/* 192.0.2.1, the miss */
	for (len = 1; !ret && len <= 32; len++) {
		shorter = n;	/* addr[0, shorter) are of shorter lengths */
		for (i = 0; !ret && i < (len < EVERY_LENGTH_PER ? len : EVERY_LENGTH_PER); i++) {
			for (tries = 0; tries < EVERY_LENGTH_TRIES; tries++) {
				a = list_rng();
				/* Nested unless no room is left inside (a /2 in a /1). */
				if ((i & 1) && shorter && tries < EVERY_LENGTH_TRIES / 2) {
					j = list_rng() % shorter;
					a = addr[j] | (a & ~mask_of(plen[j]));
				}
				a &= mask_of(len);
				/* Not drawn yet (same length: a duplicate), no witness inside. */
				if (!covers_any(a, len, witness, n) &&
				    !covers_any(a, len, witness + EVERY_LENGTH_MAX, 1))
					break;
			}
			if (tries == EVERY_LENGTH_TRIES)
				return -EDEADLK;
			addr[n] = a;
			witness[n] = a | (list_rng() & ~mask_of(len));
			plen[n++] = len;
			ret = add_prefix(l, a, len);
		}
	}
	sxdp_keys_sort(l);
	return ret;
}

/* @n sources only (one entry kind, hosts), drawn like the lists' hosts. */
static int sources_list(struct sxdp_keys *l, size_t n)
{
	int ret;

	list_rng_state = 0xa54ff53a5f1d36f1ULL;
	ret = add_prefixes(l, 32, n);
	sxdp_keys_sort(l);
	return ret;
}

/* lpm_peer.bpf.c's trie key. */
struct lpm_peer_key {
	uint32_t prefixlen;
	uint32_t addr;		/* network order */
};

/* @l's IPv4 sources and prefixes into the peer's trie (@add), or out of it. */
static int trie_load(const struct sxdp_keys *l, bool add)
{
	struct lpm_peer_key k;
	uint32_t one = 1;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->keys[i].family != SIEVE_XDP_V4 || (l->keys[i].kind != SIEVE_XDP_SRC &&
							  l->keys[i].kind != SIEVE_XDP_PREFIX))
			continue;
		k.prefixlen = l->keys[i].prefix_len;
		k.addr = l->keys[i].saddr[0];
		if (add && bpf_map_update_elem(trie_fd, &k, &one, BPF_NOEXIST))
			return -errno;
		if (!add && bpf_map_delete_elem(trie_fd, &k) && errno != ENOENT)
			return -errno;
	}
	return 0;
}

struct v4_prefix {
	uint32_t addr;		/* host order */
	unsigned int len;
};

/* The trie's pre-order: by address, a prefix before the longer ones it covers. */
static int prefix_order(const void *x, const void *y)
{
	const struct v4_prefix *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (int)a->len - (int)b->len;
}

/*
 * The valueless nodes an LPM trie of @l holds besides its entries, which
 * the memory the kernel reports for it leaves out (it counts n_entries
 * nodes). The kernel's trie is a path-compressed binary trie with such a
 * node wherever two subtrees part below no entry: the common prefix of
 * two entries next to each other in pre-order, neither covering the other.
 */
static long trie_intermediate_nodes(const struct sxdp_keys *l)
{
	struct v4_prefix *p = calloc(l->n + 1, sizeof(*p)), *fork = calloc(l->n + 1, sizeof(*p));
	size_t i, n = 0, nf = 0;
	long im = 0;

	if (!p || !fork) {
		im = -ENOMEM;
		goto out;
	}
	for (i = 0; i < l->n; i++)
		if (l->keys[i].family == SIEVE_XDP_V4)
			p[n++] = (struct v4_prefix){ ntohl(l->keys[i].saddr[0]),
						     l->keys[i].prefix_len };
	qsort(p, n, sizeof(*p), prefix_order);
	for (i = 1; i < n; i++) {
		const struct v4_prefix *a = &p[i - 1], *b = &p[i];
		unsigned int len;

		if (a->len <= b->len && (b->addr & mask_of(a->len)) == a->addr)
			continue;	/* a covers b: b hangs below a */
		len = __builtin_clz(a->addr ^ b->addr);
		fork[nf++] = (struct v4_prefix){ a->addr & mask_of(len), len };
	}
	qsort(fork, nf, sizeof(*fork), prefix_order);
	for (i = 0; i < nf; i++)
		if ((!i || prefix_order(&fork[i - 1], &fork[i])) &&
		    !bsearch(&fork[i], p, n, sizeof(*p), prefix_order))
			im++;
out:
	free(p);
	free(fork);
	return im;
}

enum { PEER_MISS, PEER_SHORT, PEER_LONG, NR_PEER_PKTS };
static const char *const peer_pkt_names[NR_PEER_PKTS] = { "miss", "shortest hit", "longest hit" };

/*
 * A list and three packets: one it does not cover, one whose longest cover
 * is of length lens[PEER_SHORT] and one of lens[PEER_LONG] (32: a host).
 */
struct peer_list {
	const char *name;
	struct sxdp_keys l;
	unsigned int lens[NR_PEER_PKTS];
	uint8_t pkt[NR_PEER_PKTS][PKT_MAX];
	size_t len[NR_PEER_PKTS];
};

/* What one program costs on one list: ns per packet, bytes the kernel reports. */
struct peer_cost {
	double ns[NR_PEER_PKTS];
	double stream;		/* a new source each packet (bench_stream.bpf.c) */
	uint64_t bytes;
	uint64_t capacity;	/* sieve's: the keys its maps are sized for */
	unsigned int probes;	/* sieve's: what a packet that misses walks */
	bool table;		/* sieve's: it reads the IPv4 prefix table too */
};

static const uint32_t peer_backends[] = { 0, SIEVE_XDP_F_BLOCKED };
#define NR_PEER_BACKENDS	(sizeof(peer_backends) / sizeof(peer_backends[0]))

/* A list's costs: sieve and as many sources only on each backend, and the trie. */
struct peer_result {
	struct peer_cost sieve[NR_PEER_BACKENDS], sources[NR_PEER_BACKENDS], trie;
	/* sieve as before the host bitmap and the allowlist's flag: bloom-map, blocked */
	struct peer_cost before[NR_PEER_BACKENDS];
	double parse[NR_PEER_PKTS];	/* the parser alone on each packet */
	long trie_im;		/* the trie's intermediate nodes */
};

static int peer_packets(struct peer_list *p)
{
	uint32_t a;
	int i;

	for (i = 0; i < NR_PEER_PKTS; i++) {
		a = address_covered_at(&p->l, p->lens[i]);
		if (!a) {
			fprintf(stderr, "xdp bench: %s: no address covered at /%u\n", p->name,
				p->lens[i]);
			return -ENOENT;
		}
		p->len[i] = udp_from(htonl(a), p->pkt[i]);
	}
	return 0;
}

/*
 * @fd's ns per packet on @p's packets, once it is seen to pass the miss
 * and drop the hits (a wrong path timed would be no number at all), and
 * on a stream of new sources from the miss on. A host hit at both lengths
 * is timed once.
 */
static int peer_time(int fd, const char *who, const struct peer_list *p, struct peer_cost *c)
{
	int i, v, want;

	for (i = 0; i < NR_PEER_PKTS; i++) {
		want = i == PEER_MISS ? XDP_PASS : XDP_DROP;
		v = verdict_of(fd, p->pkt[i], p->len[i]);
		if (v != want) {
			fprintf(stderr, "xdp bench: %s, %s: the %s (/%u) got %s, not %s\n", p->name,
				who, peer_pkt_names[i], p->lens[i], v == XDP_DROP ? "XDP_DROP" :
				v == XDP_PASS ? "XDP_PASS" : "another verdict",
				want == XDP_DROP ? "XDP_DROP" : "XDP_PASS");
			return -EPROTO;
		}
		if (i == PEER_LONG && p->lens[PEER_LONG] == p->lens[PEER_SHORT])
			c->ns[i] = c->ns[PEER_SHORT];
		else
			c->ns[i] = run_ns(fd, p->pkt[i], p->len[i]);
		if (c->ns[i] < 0)
			return -EIO;
	}
	c->stream = stream_ns(fd, p->pkt[PEER_MISS], p->len[PEER_MISS]);
	return c->stream < 0 ? -EIO : 0;
}

/* @p as the loader builds it on backend @flags, default probe budget. */
static int peer_sieve(const struct peer_list *p, uint32_t flags, struct peer_cost *c)
{
	struct sieve_xdp_config cfg;
	uint64_t filter, exact, covered, chunks, table = 0;
	int ret = bench_rebuild(&p->l, flags, 0, p->name, &cfg);

	if (!ret)
		ret = sxdp_live_memory(&h, &filter, &exact);
	/*
	 * The table's 4 MiB and chunks are the interface's memory too, prefixes
	 * or not; a packet reads it only while the list holds IPv4 prefixes.
	 */
	if (!ret && (cfg.flags & SIEVE_XDP_F_V4TABLE))
		ret = sxdp_v4table_counts(&h, &covered, &chunks, &table);
	c->table = table && (cfg.kinds & SIEVE_XDP_KIND_BIT(SIEVE_XDP_PREFIX, SIEVE_XDP_V4));
	if (ret)
		return ret;
	c->bytes = filter + exact + table;
	c->capacity = cfg.capacity;
	c->probes = cfg.nr_v4_lens + !!(cfg.kinds & SIEVE_XDP_KIND_BIT(SIEVE_XDP_SRC, SIEVE_XDP_V4));
	return peer_time(sieve_fd, sxdp_backend_name(flags), p, c);
}

/*
 * @p as peer_sieve builds it, as before the host bitmap and the empty
 * allowlist's flag: every IPv4 packet probes, every hit asks the trie.
 */
static int peer_sieve_before(const struct peer_list *p, uint32_t flags, struct peer_cost *c)
{
	__u32 zero = 0, ask = 0, skip = 1;
	int fd = h.v4host_fd, ret;

	h.v4host_fd = -1;
	ret = bpf_map_update_elem(h.allow_none_fd, &zero, &ask, BPF_ANY) ? -errno : 0;
	if (!ret)
		ret = peer_sieve(p, flags, c);
	h.v4host_fd = fd;
	if (!ret && bpf_map_update_elem(h.allow_none_fd, &zero, &skip, BPF_ANY))
		ret = -errno;
	return ret;
}

/* @p in the peer's trie; emptied again after, for the next list. */
static int peer_trie(const struct peer_list *p, struct peer_result *r)
{
	struct lpm_peer_key k;
	int ret = trie_load(&p->l, true), undo, i;

	if (!ret) {
		r->trie.bytes = sxdp_map_memlock(trie_fd);
		r->trie_im = trie_intermediate_nodes(&p->l);
		ret = r->trie_im < 0 ? (int)r->trie_im : peer_time(peer_fd, "LPM trie", p, &r->trie);
	}
	/* The parse-only floor, right after the trie, on the same packets. */
	for (i = 0; !ret && i < NR_PEER_PKTS; i++) {
		r->parse[i] = run_ns(parse_fd, p->pkt[i], p->len[i]);
		ret = r->parse[i] < 0 ? -EIO : 0;
	}
	undo = trie_load(&p->l, false);
	if (!undo && !bpf_map_get_next_key(trie_fd, NULL, &k))
		undo = -ENOTEMPTY;
	return ret ?: undo;
}

static void peer_row(const char *list, const char *who, const struct peer_cost *c,
		     const char *memory)
{
	char probes[16] = "-";

	if (c->probes || c->table)
		snprintf(probes, sizeof(probes), c->table ? "%u+table" : "%u", c->probes);
	say("| %-34s | %-26s | %8s | %7.1f | %7.1f | %7.1f | %7.1f | %s |\n", list, who, probes,
	    c->ns[PEER_MISS], c->ns[PEER_SHORT], c->ns[PEER_LONG], c->stream, memory);
}

/* One list's rows: sieve and sources only on each backend, then the trie. */
static void peer_rows(const struct peer_list *p, const struct peer_list *src,
		      const struct peer_result *r)
{
	char list[96], who[64], mem[128];
	uint64_t node;
	size_t i;

	snprintf(list, sizeof(list), "%s, %zu: /%u, /%u", p->name, p->l.n, p->lens[PEER_SHORT],
		 p->lens[PEER_LONG]);
	for (i = 0; i < NR_PEER_BACKENDS; i++) {
		snprintf(who, sizeof(who), "sieve, %s", sxdp_backend_name(peer_backends[i]));
		snprintf(mem, sizeof(mem), "%.1f KiB, capacity %llu keys",
			 r->sieve[i].bytes / 1024.0, (unsigned long long)r->sieve[i].capacity);
		peer_row(list, who, &r->sieve[i], mem);
		snprintf(who, sizeof(who), "%zu sources only, %s", src->l.n,
			 sxdp_backend_name(peer_backends[i]));
		snprintf(mem, sizeof(mem), "%.1f KiB, capacity %llu keys",
			 r->sources[i].bytes / 1024.0, (unsigned long long)r->sources[i].capacity);
		peer_row(list, who, &r->sources[i], mem);
	}
	/* The kernel's node size, from its own count: bytes / n_entries. */
	node = p->l.n ? r->trie.bytes / p->l.n : 0;
	snprintf(mem, sizeof(mem), "%.1f KiB; %.1f KiB with %ld intermediate nodes of %llu B",
		 r->trie.bytes / 1024.0, (r->trie.bytes + node * r->trie_im) / 1024.0, r->trie_im,
		 (unsigned long long)node);
	peer_row(list, "LPM trie (peer)", &r->trie, mem);
}

/* The aims: at most 1.3x sources only, at least 2x faster than the trie. */
static void peer_ratios(const struct peer_list *p, const struct peer_result *r)
{
	const struct peer_cost *s, *src, *t = &r->trie;
	size_t i;

	for (i = 0; i < NR_PEER_BACKENDS; i++) {
		s = &r->sieve[i];
		src = &r->sources[i];
		say("| %-22s | %-9s | %8.2fx | %8.2fx | %8.2fx | %8.2fx | %8.2fx | %8.2fx | %8.2fx "
		    "| %8.2fx |\n", p->name, sxdp_backend_name(peer_backends[i]),
		    s->ns[PEER_MISS] / src->ns[PEER_MISS], s->ns[PEER_SHORT] / src->ns[PEER_SHORT],
		    s->ns[PEER_LONG] / src->ns[PEER_LONG], s->stream / src->stream,
		    t->ns[PEER_MISS] / s->ns[PEER_MISS], t->ns[PEER_SHORT] / s->ns[PEER_SHORT],
		    t->ns[PEER_LONG] / s->ns[PEER_LONG], t->stream / s->stream);
	}
}

/*
 * Where the time goes: per list, backend and packet, whole-packet ns of
 * sieve and the trie, the parse-only floor, each program's ns above it
 * (its lookup; for sieve also its config, counters and verdict, which the
 * trie program does not have), and the trie / sieve ratio on both bases.
 */
static void peer_split(const struct peer_list *p, const struct peer_result *r)
{
	const struct peer_cost *s, *o, *t = &r->trie;
	size_t b;
	int i;

	for (b = 0; b < NR_PEER_BACKENDS; b++) {
		s = &r->sieve[b];
		o = &r->before[b];
		for (i = 0; i < NR_PEER_PKTS; i++)
			say("| %-22s | %-9s | %-12s | %6.1f | %6.1f | %6.1f | %6.1f | %6.1f | "
			    "%6.1f | %6.2fx | %6.2fx |\n", p->name,
			    sxdp_backend_name(peer_backends[b]), peer_pkt_names[i], r->parse[i],
			    o->ns[i], s->ns[i], t->ns[i], s->ns[i] - r->parse[i],
			    t->ns[i] - r->parse[i], t->ns[i] / s->ns[i],
			    (t->ns[i] - r->parse[i]) / (s->ns[i] - r->parse[i]));
	}
}

enum { PEER_FIREHOL, PEER_CONTROL, PEER_EVERY, NR_PEER_LISTS };

static int peer_lists_make(struct peer_list *p, struct peer_list *src)
{
	int i, ret;

	p[PEER_FIREHOL] = (struct peer_list){ .name = "FireHOL-like", .lens = { 0, 8, 31 } };
	p[PEER_CONTROL] = (struct peer_list){ .name = "16 lengths (control)",
					      .lens = { 0, CONTROL_FIRST, 31 } };
	p[PEER_EVERY] = (struct peer_list){ .name = "every length", .lens = { 0, 1, 32 } };
	ret = firehol_list(&p[PEER_FIREHOL].l, false);
	if (!ret)
		ret = firehol_list(&p[PEER_CONTROL].l, true);
	if (!ret)
		ret = every_length_list(&p[PEER_EVERY].l);
	for (i = 0; !ret && i < NR_PEER_LISTS; i++) {
		src[i] = (struct peer_list){ .name = "sources only", .lens = { 0, 32, 32 } };
		ret = sources_list(&src[i].l, p[i].l.n);
		if (!ret)
			ret = peer_packets(&p[i]);
		if (!ret)
			ret = peer_packets(&src[i]);
	}
	return ret;
}

/*
 * The prefix lists against their peers, one run: each list as the loader
 * builds it (through the same calls as an operator's attach), beside as
 * many sources only on the same backend and the same prefixes in an LPM
 * trie. Sieve's memory is what the kernel reports for the live
 * generation's maps (sxdp_live_memory); the trie's, what it reports in
 * fdinfo's memlock, and that plus its intermediate nodes.
 */
static int bench_peers(void)
{
	static struct peer_list p[NR_PEER_LISTS], src[NR_PEER_LISTS];
	static struct peer_result r[NR_PEER_LISTS];
	size_t i, b;
	int ret = peer_lists_make(p, src);

	say("\nPrefix lists against their peers: each list as the loader builds it (default "
	    "probe budget), a list of as many sources only (one entry kind) and the same "
	    "prefixes in a BPF_MAP_TYPE_LPM_TRIE (tests/bpf/bench/lpm_peer.bpf.c: sieve's "
	    "parser, one trie lookup). ns/packet, best of 9: a packet that misses, one whose "
	    "longest cover is the list's shortest entry and one its longest (the lengths "
	    "after the entries; /32: a host); stream: a new source each packet from the miss "
	    "on, across all of IPv4 (hits as often as the list covers it). Memory: what the kernel reports (fdinfo "
	    "memlock); for the trie it counts n_entries nodes, so the bench adds the "
	    "intermediate nodes the trie holds at the kernel's node size.\n\n");
	say("| %-34s | %-26s | probes | miss    | hit S   | hit L   | stream  | memory |\n"
	    "|---|---|---|---|---|---|---|---|\n", "list, entries: shortest, longest", "program");
	for (i = 0; !ret && i < NR_PEER_LISTS; i++) {
		for (b = 0; !ret && b < NR_PEER_BACKENDS; b++) {
			ret = peer_sieve(&src[i], peer_backends[b], &r[i].sources[b]);
			if (!ret)
				ret = peer_sieve_before(&p[i], peer_backends[b], &r[i].before[b]);
			if (!ret)
				ret = peer_sieve(&p[i], peer_backends[b], &r[i].sieve[b]);
		}
		if (!ret)
			ret = peer_trie(&p[i], &r[i]);
		if (!ret)
			peer_rows(&p[i], &src[i], &r[i]);
	}
	if (!ret) {
		say("\nRatios, one run: sieve / sources only (aim <= 1.3x) and LPM trie / sieve "
		    "(aim >= 2x), miss, shortest hit, longest hit, stream.\n\n"
		    "| %-22s | backend   | miss: src | hit S: src | hit L: src | stream: src | "
		    "trie: miss | trie: hit S | trie: hit L | trie: stream |\n"
		    "|---|---|---|---|---|---|---|---|---|---|\n", "list");
		for (i = 0; i < NR_PEER_LISTS; i++)
			peer_ratios(&p[i], &r[i]);
		say("\nWhere the time goes, one run: the parse-only floor (lpm_peer.bpf.c's "
		    "parse_only_xdp: the same parser, no lookup, on the same packet), each "
		    "program's whole-packet ns and its ns above the floor (for the trie its "
		    "lookup; for sieve its lookup, config read, counters and verdict), and the "
		    "aim's ratio, LPM trie / sieve (>= 2x), on both bases: whole packet, and "
		    "above the floor. Before: sieve's generation built without the host bitmap "
		    "and with the allowlist asked on every hit (every IPv4 packet probes the "
		    "filter for the source kind), as before both.\n\n"
		    "| %-22s | backend   | packet       | parse  | sieve before | sieve  | trie   | "
		    "sieve-parse | trie-parse | trie/sieve whole | trie/sieve above floor |\n"
		    "|---|---|---|---|---|---|---|---|---|---|---|\n", "list");
		for (i = 0; i < NR_PEER_LISTS; i++)
			peer_split(&p[i], &r[i]);
	}
	for (i = 0; i < NR_PEER_LISTS; i++) {
		sxdp_keys_free(&p[i].l);
		sxdp_keys_free(&src[i].l);
	}
	return ret;
}

/*
 * A bench build that includes the program (sieve_xdp_linear.bpf.c,
 * sieve_xdp_siphash24.bpf.c on another digest; sieve_xdp_hash_only.bpf.c;
 * lpm_peer.bpf.c), loaded on
 * the maps of the real one: both see the same generation. Its program
 * @name's fd; the object in *@obj, for maps of its own.
 */
static int load_variant(const char *path, const char *name, struct bpf_object **obj)
{
	struct bpf_map *map, *ours;
	struct bpf_program *prog;

	*obj = bpf_object__open_file(path, NULL);
	if (!*obj)
		return -errno;
	bpf_object__for_each_map(map, *obj) {
		bpf_map__set_pin_path(map, NULL);
		ours = bpf_object__find_map_by_name(skel->obj, bpf_map__name(map));
		if (ours && bpf_map__reuse_fd(map, bpf_map__fd(ours)))
			return -EINVAL;
	}
	if (bpf_object__load(*obj))
		return -EINVAL;
	prog = bpf_object__find_program_by_name(*obj, name);
	return prog ? bpf_program__fd(prog) : -ENOENT;
}

static int setup(void)
{
	struct bpf_object *floor_obj, *stream_obj, *variant;
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
	if (private_maps_load(skel, &h))
		return -EINVAL;
	sieve_fd = bpf_program__fd(skel->progs.sieve_xdp);
	/* The allowlist as attach leaves it on a list that allows nothing. */
	if (sxdp_allow_sync(&h, &(struct sxdp_keys){ 0 }))
		return -EIO;
	snprintf(path, sizeof(path), "%s/bench-xdp/floor.bpf.o", dir);
	floor_fd = load_prog(path, "sieve_xdp_floor", &floor_obj);
	snprintf(path, sizeof(path), "%s/bench-xdp/bench_stream.bpf.o", dir);
	stream_fd = load_prog(path, "sieve_bench_stream", &stream_obj);
	if (floor_fd < 0 || stream_fd < 0)
		return -ENOENT;
	stream_next_fd = bpf_map__fd(bpf_object__find_map_by_name(stream_obj, "bench_next"));
	snprintf(path, sizeof(path), "%s/bench-xdp/sieve_xdp_linear.bpf.o", dir);
	linear_fd = load_variant(path, "sieve_xdp", &variant);
	if (linear_fd < 0) {
		fprintf(stderr, "xdp bench: %s: %s\n", path, strerror(-linear_fd));
		return linear_fd;
	}
	snprintf(path, sizeof(path), "%s/bench-xdp/sieve_xdp_hash_only.bpf.o", dir);
	hash_only_fd = load_variant(path, "sieve_xdp", &variant);
	if (hash_only_fd < 0) {
		fprintf(stderr, "xdp bench: %s: %s\n", path, strerror(-hash_only_fd));
		return hash_only_fd;
	}
	snprintf(path, sizeof(path), "%s/bench-xdp/sieve_xdp_siphash24.bpf.o", dir);
	sip24_fd = load_variant(path, "sieve_xdp", &variant);
	if (sip24_fd < 0) {
		fprintf(stderr, "xdp bench: %s: %s\n", path, strerror(-sip24_fd));
		return sip24_fd;
	}
	snprintf(path, sizeof(path), "%s/bench-xdp/lpm_peer.bpf.o", dir);
	peer_fd = load_variant(path, "lpm_peer_xdp", &variant);
	map = peer_fd >= 0 ? bpf_object__find_map_by_name(variant, "lpm_peer_v4") : NULL;
	trie_fd = peer_fd < 0 ? peer_fd : map ? bpf_map__fd(map) : -ENOENT;
	if (trie_fd >= 0) {
		struct bpf_program *prog = bpf_object__find_program_by_name(variant,
									     "parse_only_xdp");

		parse_fd = prog ? bpf_program__fd(prog) : -ENOENT;
		trie_fd = parse_fd < 0 ? parse_fd : trie_fd;
	}
	if (trie_fd < 0)
		fprintf(stderr, "xdp bench: %s: %s\n", path, strerror(-trie_fd));
	return trie_fd < 0 ? trie_fd : 0;
}

/*
 * The keyed digest's cost: the live generation of @l (backend @flags, at
 * most @max_probes), a packet that misses timed with the program and with
 * its linear-digest build; each best of three alternating runs of best-of-9.
 */
static int digest_case(const char *name, const struct sxdp_keys *l, uint32_t flags,
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
	struct sxdp_keys src = { 0 }, fh = { 0 };
	struct sieve_xdp_key k = { .kind = SIEVE_XDP_SRC, .family = SIEVE_XDP_V4,
				   .prefix_len = 32 };
	uint8_t miss[PKT_MAX], fh_miss[PKT_MAX];
	size_t miss_len, fh_len, i;
	unsigned int b;
	int ret = 0;

	for (i = 0; !ret && i < 100000; i++) {
		k.saddr[0] = htonl(0x0a000000 + (uint32_t)i * 7);	/* in 10/8 */
		ret = sxdp_keys_add(&src, &k);
	}
	if (!ret)
		ret = firehol_list(&fh, false);
	if (ret)
		goto out;
	sxdp_keys_sort(&src);
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
	sxdp_keys_free(&src);
	sxdp_keys_free(&fh);
	return ret;
}

static int sample_rate(uint32_t rate)
{
	struct sieve_xdp_sample_cfg c = { .rate = rate };
	uint32_t zero = 0;

	return bpf_map_update_elem(bpf_map__fd(skel->maps.sieve_sample_cfg), &zero, &c, BPF_ANY) ?
	       -errno : 0;
}

/* Best of three alternating runs (of best-of-9) of @pkt at each of @rates: ns into @ns. */
static int sample_times(const uint8_t *pkt, size_t len, const uint32_t *rates, size_t n,
			double *ns)
{
	size_t i, r;
	double x;

	for (i = 0; i < n; i++)
		ns[i] = 1e30;
	for (r = 0; r < 3; r++) {
		for (i = 0; i < n; i++) {
			if (sample_rate(rates[i]))
				return -errno;
			x = run_ns(sieve_fd, pkt, len);
			if (x < 0)
				return -EIO;
			ns[i] = x < ns[i] ? x : ns[i];
		}
	}
	return sample_rate(0);
}

/*
 * The samples' cost: a dropped packet (its source on a list of 100000)
 * and a passed one, sampling off (rate 0) against the default rate (the
 * bucket checked per drop, one sample in 10^5 at this speed) and the
 * highest rate with the ring full and unread (every drop past the
 * bucket's burst tries the ring and is counted lost).
 */
static int bench_samples(void)
{
	static const uint32_t rates[] = { 0, SIEVE_XDP_SAMPLE_RATE_DEFAULT,
					  SIEVE_XDP_SAMPLE_RATE_MAX };
	static const char *const names[] = { "off (rate 0)", "default rate", "highest rate, full ring" };
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_config cfg;
	struct sieve_xdp_key k = { .kind = SIEVE_XDP_SRC, .family = SIEVE_XDP_V4,
				   .prefix_len = 32 };
	uint8_t drop[PKT_MAX], pass[PKT_MAX];
	double dns[3], pns[3];
	size_t dlen, plen, i;
	int ret = 0;

	for (i = 0; !ret && i < 100000; i++) {
		k.saddr[0] = htonl(0x0a000000 + (uint32_t)i * 7);	/* in 10/8 */
		ret = sxdp_keys_add(&l, &k);
	}
	if (!ret) {
		sxdp_keys_sort(&l);
		ret = bench_rebuild(&l, 0, 8, "samples", &cfg);
	}
	if (ret)
		goto out;
	dlen = udp_from(htonl(0x0a000000 + 7 * 5), drop);
	plen = udp_from(htonl(0xcb007101), pass);		/* 203.0.113.1 */
	if (verdict_of(sieve_fd, drop, dlen) != XDP_DROP ||
	    verdict_of(sieve_fd, pass, plen) != XDP_PASS) {
		fprintf(stderr, "xdp bench: samples: the packets' verdicts are not as planned\n");
		ret = -EINVAL;
		goto out;
	}
	ret = sample_times(drop, dlen, rates, 3, dns);
	if (!ret)
		ret = sample_times(pass, plen, rates, 2, pns);
	if (ret)
		goto out;
	say("\nThe samples' cost (bloom-map, 100000 sources): ns/packet with sampling off "
	    "(rate 0), at the default rate (%u/s per CPU) and at the highest (%u/s) with the "
	    "ring full and unread; ratio to off; best of 3 x best of 9.\n\n",
	    SIEVE_XDP_SAMPLE_RATE_DEFAULT, SIEVE_XDP_SAMPLE_RATE_MAX);
	say("| %-24s | %-24s | ns/pkt  | ratio |\n|---|---|---|---|\n", "packet", "sampling");
	for (i = 0; i < 3; i++)
		say("| %-24s | %-24s | %7.1f | %5.3f |\n", "dropped (source)", names[i], dns[i],
		    dns[i] / dns[0]);
	for (i = 0; i < 2; i++)
		say("| %-24s | %-24s | %7.1f | %5.3f |\n", "passed (not on the list)", names[i],
		    pns[i], pns[i] / pns[0]);
out:
	sxdp_keys_free(&l);
	return ret;
}

/* What the numbers were measured on: the commit, when, the kernel, the CPUs. */
static void say_when(const char *commit)
{
	struct utsname u = { 0 };
	char date[32] = "?";
	time_t now = time(NULL);
	struct tm tm;

	uname(&u);
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &tm);
	say("sieve-xdp-bench, commit %s, %s, kernel %s, %ld CPUs online\n", commit, date,
	    u.release, sysconf(_SC_NPROCESSORS_ONLN));
}

int main(int argc, char **argv)
{
	uint64_t sizes[] = { 1000000, 10000000 };
	struct sxdp_keys empty = { 0 };
	struct sieve_xdp_config cfg = keyed;
	uint8_t pkt[PKT_MAX];
	size_t len, first = 0, nsizes = 2, i;
	bool firehol_only = false, digest_only = false, peers_only = false, samples_only = false;
	const char *commit = "unknown";
	int opt, err;

	while ((opt = getopt(argc, argv, "o:r:c:slfdpSW:")) != -1) {
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
		else if (opt == 'p')
			peers_only = firehol_only = true;
		else if (opt == 'S')
			samples_only = digest_only = peers_only = firehol_only = true;
		else if (opt == 'c')
			commit = optarg;
		else if (opt == 'W') {
			err = write_firehol(optarg);
			if (err)
				fprintf(stderr, "xdp bench: %s: %s\n", optarg, strerror(-err));
			return err ? 2 : 0;
		} else {
			fprintf(stderr, "usage: sieve-xdp-bench [-o FILE] [-r REPEAT] [-c COMMIT] "
				"[-s|-l|-f|-d|-p|-S] | -W FILE\n");
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
	say_when(commit);
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
	if (!err && !digest_only && !peers_only)
		err = bench_firehol();
	if (!err && !digest_only)
		err = bench_peers();
	if (!err && !peers_only)
		err = bench_digest();
	if (!err && (samples_only || !firehol_only))
		err = bench_samples();
	sieve_xdp__destroy(skel);
	if (out)
		fclose(out);
	if (err)
		fprintf(stderr, "xdp bench: %s\n", strerror(-err));
	return err ? 2 : 0;
}
