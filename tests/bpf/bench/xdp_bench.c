// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-xdp: ns per packet of the XDP blocklist under
 * BPF_PROG_TEST_RUN (the kernel's own average over REPEAT runs of one
 * packet), side by side with a program that only returns XDP_DROP (the
 * floor): a packet not on the list and a blocked one, bloom-only, exact
 * and the same lookup in a plain hash map only, at 1M and 10M source
 * entries. The stream rows put a program in front that gives every
 * repetition a new source address (bpf/bench_stream.bpf.c), so keys are
 * cache-cold; the floor's stream row carries the same front program.
 * Memory per entry: the plan against what the kernel charges (fdinfo).
 *
 * Usage: sieve-xdp-bench [-o FILE] [-r REPEAT] [-s]   (-s: 1M entries only)
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

/* One target rate: bloom-only, exact and hash-only on the same maps. */
static int bench_rate(struct bench_list *b, uint64_t n, uint32_t fpp_ppb)
{
	static const struct { uint32_t flags; const char *name; } modes[] = {
		{ 0, "bloom-only" }, { SIEVE_XDP_F_EXACT, "exact" },
		{ SIEVE_XDP_F_HASH_ONLY, "hash map only" },
	};
	struct sieve_xdp_config cfg = { 0 };
	struct sxdp_plan plan;
	struct timespec t0;
	int bfd, unused, m, ret;
	char what[96];
	double ns[3][3];

	ret = sxdp_plan(n, fpp_ppb, &plan);
	if (ret)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = sxdp_gen_create(&plan, false, &b->l, &bfd, &unused);
	if (ret)
		return ret;
	say("\n%llu source entries (%zu distinct), target rate %g: bloom 2^%d bits, %u hashes, "
	    "filled in %.1f s\n", (unsigned long long)n, b->l.n, fpp_ppb / 1e9,
	    __builtin_ctzll(plan.nbits), plan.nr_hashes, seconds_since(&t0));
	sxdp_config_fill(&cfg, &b->l);
	cfg.capacity = plan.capacity;
	cfg.max_entries = plan.max_entries;
	cfg.nr_hashes = plan.nr_hashes;
	cfg.fpp_ppb = plan.fpp_ppb;
	for (m = 0; m < 3; m++) {
		cfg.flags = modes[m].flags;
		ret = sxdp_swap(&h, &cfg, bfd, b->exact_fd);
		if (ret)
			break;
		ns[m][0] = run_ns(sieve_fd, b->miss, b->miss_len);
		ns[m][1] = run_ns(sieve_fd, b->hit, b->hit_len);
		ns[m][2] = stream_ns(sieve_fd, b->miss, b->miss_len);
	}
	say("| %-44s | ns/pkt  | floor  |\n|---|---|---|\n", "sieve, one entry kind (source)");
	for (m = 0; !ret && m < 3; m++) {
		snprintf(what, sizeof(what), "%s, not on the list", modes[m].name);
		row(what, ns[m][0], floor_ns);
		snprintf(what, sizeof(what), "%s, blocked", modes[m].name);
		row(what, ns[m][1], floor_ns);
	}
	for (m = 0; !ret && m < 3; m++) {
		snprintf(what, sizeof(what), "stream: %s (vs the floor's stream)", modes[m].name);
		row(what, ns[m][2], floor_stream_ns);
	}
	if (!ret) {
		say("stream, above the floor's stream: bloom-only %.1f ns, hash map %.1f ns: "
		    "bloom %.2fx faster\n", ns[0][2] - floor_stream_ns, ns[2][2] - floor_stream_ns,
		    (ns[2][2] - floor_stream_ns) / (ns[0][2] - floor_stream_ns));
		say("memory per entry: bloom planned %.3f B, kernel charges %.3f B; exact hash map "
		    "%.1f B (estimate %.1f B)\n", (double)plan.bytes / n, (double)memlock(bfd) / n,
		    (double)memlock(b->exact_fd) / n, sxdp_exact_bytes_per_entry(n));
	}
	close(bfd);
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
	size_t len, nsizes = 2, i;
	int opt, err;

	while ((opt = getopt(argc, argv, "o:r:s")) != -1) {
		if (opt == 'o')
			out = fopen(optarg, "w");
		else if (opt == 'r')
			repeat = strtoul(optarg, NULL, 10);
		else if (opt == 's')
			nsizes = 1;
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
	for (i = 0; !err && i < nsizes; i++)
		err = bench_entries(sizes[i]);
	sieve_xdp__destroy(skel);
	if (out)
		fclose(out);
	if (err)
		fprintf(stderr, "xdp bench: %s\n", strerror(-err));
	return err ? 2 : 0;
}
