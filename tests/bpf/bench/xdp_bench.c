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
 *
 * Usage: sieve-xdp-bench [-o FILE] [-r REPEAT] [-s|-l]   (-s: 1M entries only, -l: 10M only)
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
#include "sieve_xdp.skel.h"
#include "pkt.h"

static struct sieve_xdp *skel;
static struct sxdp_handle h;
static int sieve_fd, floor_fd, stream_fd, stream_next_fd;
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
	return sxdp_gen_insert(-1, b->exact_fd, b->l.keys, b->l.n);
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
		ret = sxdp_gen_create(&g[i].plan, false, &b->l, &g[i].fd, &unused);
		g[i].fill_s = seconds_since(&t0);
	}
	return ret;
}

/* The live generation: gen's filter with flags, and the shared exact map. */
static int use(struct bench_list *b, const struct bench_gen *g, uint32_t flags)
{
	struct sieve_xdp_config cfg = { 0 };

	sxdp_config_fill(&cfg, &b->l);
	cfg.flags = flags;
	cfg.capacity = g->plan.capacity;
	cfg.max_entries = g->plan.max_entries;
	cfg.nr_hashes = g->plan.nr_hashes;
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
	};
	snprintf(path, sizeof(path), "%s/bpf/floor.bpf.o", dir);
	floor_fd = load_prog(path, "sieve_xdp_floor", &floor_obj);
	snprintf(path, sizeof(path), "%s/bpf/bench_stream.bpf.o", dir);
	stream_fd = load_prog(path, "sieve_bench_stream", &stream_obj);
	if (floor_fd < 0 || stream_fd < 0)
		return -ENOENT;
	stream_next_fd = bpf_map__fd(bpf_object__find_map_by_name(stream_obj, "bench_next"));
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t sizes[] = { 1000000, 10000000 };
	struct sxdp_list empty = { 0 };
	struct sieve_xdp_config cfg = { 0 };
	uint8_t pkt[PKT_MAX];
	size_t len, first = 0, nsizes = 2, i;
	int opt, err;

	while ((opt = getopt(argc, argv, "o:r:sl")) != -1) {
		if (opt == 'o')
			out = fopen(optarg, "w");
		else if (opt == 'r')
			repeat = strtoul(optarg, NULL, 10);
		else if (opt == 's')
			nsizes = 1;
		else if (opt == 'l')
			first = 1;
	}
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
	cfg.capacity = cfg.max_entries = 1;
	err = sxdp_swap(&h, &cfg, -1, -1) ? -EINVAL : 0;
	if (!err)
		row("sieve, empty list (parsing only)", run_ns(sieve_fd, pkt, len), floor_ns);
	for (i = first; !err && i < nsizes; i++)
		err = bench_entries(sizes[i]);
	sieve_xdp__destroy(skel);
	if (out)
		fclose(out);
	if (err)
		fprintf(stderr, "xdp bench: %s\n", strerror(-err));
	return err ? 2 : 0;
}
