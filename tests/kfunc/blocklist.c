// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP blocklist asking a /dev/sieve filter (SIEVE_XDP_F_FILTER): the
 * program of bpf/sieve_xdp.bpf.c built with SIEVE_XDP_KFUNC, run through
 * BPF_PROG_TEST_RUN on crafted packets (tests/bpf/pkt.c). Its maps are
 * filled here as the loader fills them: one generation, in slot 0, whose
 * config names the filter; the filter holds sieve_xdp_digest()s under the
 * config's key.
 *
 *   blocklist_check()  the blocklist program as shipped (sieve_xdp.bpf.o)
 *                      loads on this kernel, Debian 12's; then for each
 *                      filter type of its kfunc build: a source, a prefix (its first
 *                      and last address; the neighbours outside pass), a
 *                      service and an IPv6 source dropped and counted by
 *                      kind; never-added sources judged as the ioctl query
 *                      judges their digests; cuckoo: a source deleted over
 *                      ioctl passes on the very next packet; a destroyed
 *                      filter drops nothing
 *   blocklist_bench()  ns per packet beside the bloom-map and blocked
 *                      backends, in the same run
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../device/dev.h"
#include "../bpf/pkt.h"
#include "sieve_xdp.h"
#include "sieve_xdp_blocked.h"
#include "kfunc_test.h"
#include "blocklist.h"
#include "sieve_xdp.skel.h"
#include "sieve_xdp_filter.skel.h"

#define FOREIGN		1000
#define DELETED		100
#define CAPACITY	10000
/* 1e-2, the blocklist's default target for the benchmark's filters ... */
#define BENCH_FPP_PPB	10000000
/* ... and what the maps get for it: 10 bits and 7 hashes a key. */
#define BENCH_HASHES	7
#define BENCH_BITS_PER_KEY	10
#define BENCH_REPEAT	20000

static struct sieve_xdp_filter *bl;
static int dev;

/* Entry kinds in use: the benchmark's one, and every case's. */
#define SOURCES_V4	SIEVE_XDP_KIND_BIT(SIEVE_XDP_SRC, SIEVE_XDP_V4)
#define ALL_KINDS	(SOURCES_V4 | SIEVE_XDP_KIND_BIT(SIEVE_XDP_SRC, SIEVE_XDP_V6) | \
			 SIEVE_XDP_KIND_BIT(SIEVE_XDP_PREFIX, SIEVE_XDP_V4) | \
			 SIEVE_XDP_KIND_BIT(SIEVE_XDP_SERVICE, SIEVE_XDP_V4))

/* The digest key and blocked seed of the one generation: what a config carries. */
static const __u64 secret[2] = { 0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL };
#define SEED	0x165667b19e3779f9ULL

/*
 * The one generation: slot 0, with /24 probed when prefixes are in use.
 * @size and @k: the backend's, by @flags (the filter's id and 0).
 */
static int set_config(uint32_t flags, uint32_t size, uint32_t k, uint32_t kinds)
{
	struct sieve_xdp_config c = { .flags = flags, .kinds = kinds, .layout = SIEVE_XDP_LAYOUT,
				      .digest = SIEVE_XDP_DIGEST,
				      .digest_key = { secret[0], secret[1] }, .blocked_seed = SEED };
	uint32_t zero = 0;

	if (flags & SIEVE_XDP_F_FILTER) {
		c.filter.id = size;
	} else if (flags & SIEVE_XDP_F_BLOCKED) {
		c.blocked.nblocks = size;
		c.blocked.k = k;
	} else {
		c.bloom.max_entries = size;
		c.bloom.nr_hashes = k;
	}

	if (kinds & SIEVE_XDP_KIND_BIT(SIEVE_XDP_PREFIX, SIEVE_XDP_V4)) {
		c.nr_v4_lens = 1;
		c.v4_lens[0] = 24;
		c.v4_masks[0] = htonl(0xffffff00);
	}
	if (bpf_map_update_elem(bpf_map__fd(bl->maps.sieve_cfg), &zero, &c, BPF_ANY))
		return -errno;
	return bpf_map_update_elem(bpf_map__fd(bl->maps.sieve_active), &zero, &zero, BPF_ANY) ?
	       -errno : 0;
}

/* Flow keys as the program builds them (match_source, match_prefixes, match_ports). */
static struct sieve_xdp_key source4(uint32_t addr)
{
	return (struct sieve_xdp_key){ .kind = SIEVE_XDP_SRC, .family = SIEVE_XDP_V4,
				       .prefix_len = 32, .saddr = { htonl(addr) } };
}

static struct sieve_xdp_key prefix24(uint32_t addr)
{
	return (struct sieve_xdp_key){ .kind = SIEVE_XDP_PREFIX, .family = SIEVE_XDP_V4,
				       .prefix_len = 24, .saddr = { htonl(addr & 0xffffff00) } };
}

static struct sieve_xdp_key service4(uint32_t daddr, uint16_t port)
{
	return (struct sieve_xdp_key){ .kind = SIEVE_XDP_SERVICE, .family = SIEVE_XDP_V4,
				       .proto = IPPROTO_TCP, .dport = htons(port),
				       .daddr = { htonl(daddr) } };
}

static struct sieve_xdp_key source6(uint32_t last)
{
	return (struct sieve_xdp_key){ .kind = SIEVE_XDP_SRC, .family = SIEVE_XDP_V6,
				       .prefix_len = 128,
				       .saddr = { htonl(0x20010db8), 0, 0, htonl(last) } };
}

static int filter_op(unsigned long op, uint32_t id, const struct sieve_xdp_key *key)
{
	uint64_t digest = sieve_xdp_digest(key, secret);
	uint32_t res = 0;
	int err;

	if (op == SIEVE_IOC_ADD)
		err = sv_add(dev, id, &digest, sizeof(digest), 0, &res);
	else if (op == SIEVE_IOC_DELETE)
		err = sv_delete(dev, id, &digest, sizeof(digest), &res);
	else
		err = sv_query(dev, id, &digest, sizeof(digest), &res);
	return err ?: (int)res;
}

/* A TCP packet from @saddr (host order; 0x20010db8... for IPv6) to @daddr:@dport. */
static size_t packet(uint8_t buf[PKT_MAX], int family, uint32_t saddr, uint32_t daddr,
		     uint16_t dport)
{
	struct pkt_spec s = { .flow = { .family = family, .proto = IPPROTO_TCP,
					.sport = htons(40000), .dport = htons(dport) } };

	if (family == SIEVE_XDP_V4) {
		s.flow.saddr[0] = htonl(saddr);
		s.flow.daddr[0] = htonl(daddr);
	} else {
		s.flow.saddr[0] = htonl(0x20010db8);
		s.flow.saddr[3] = htonl(saddr);
		s.flow.daddr[0] = htonl(0x20010db8);
		s.flow.daddr[3] = htonl(daddr);
	}
	return pkt_build(&s, buf);
}

/* The verdict on one packet (-1 if the run failed); @repeat > 1: its ns in *@ns. */
static int run(const uint8_t *buf, size_t len, int repeat, double *ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(bpf_program__fd(bl->progs.sieve_xdp), &opts))
		return -1;
	if (ns)
		*ns = opts.duration;
	return opts.retval;
}

static int verdict4(uint32_t saddr, uint32_t daddr, uint16_t dport)
{
	uint8_t buf[PKT_MAX];

	return run(buf, packet(buf, SIEVE_XDP_V4, saddr, daddr, dport), 1, NULL);
}

static uint64_t drops(int counter)
{
	int n = libbpf_num_possible_cpus(), i;
	struct sieve_xdp_stats *v = calloc(n > 0 ? n : 1, sizeof(*v));
	uint32_t zero = 0;
	uint64_t sum = 0;

	if (v && n > 0 && !bpf_map_lookup_elem(bpf_map__fd(bl->maps.sieve_stats), &zero, v))
		for (i = 0; i < n; i++)
			sum += v[i].c[counter].packets;
	free(v);
	return sum;
}

#define SERVER	0xc6336410u	/* 198.51.100.16 */
#define SOURCE	0x0a000001u	/* 10.0.0.1 */
#define NET	0xc0000200u	/* 192.0.2.0/24 */
#define OTHERS	0x0a010000u	/* 10.1.0.0: never-added sources from here */

static bool maybe(uint32_t id, struct sieve_xdp_key key)
{
	return filter_op(SIEVE_IOC_QUERY, id, &key) != 0;	/* an error counts as a hit */
}

/* The verdict the filter's own answers give for an IPv4 packet: every probe the program makes. */
static int expected4(uint32_t id, uint32_t saddr, uint32_t daddr, uint16_t dport)
{
	return maybe(id, source4(saddr)) || maybe(id, prefix24(saddr)) ||
	       maybe(id, service4(daddr, dport)) ? XDP_DROP : XDP_PASS;
}

/* Each kind on the list is dropped and counted as its kind; neighbours pass. */
static void check_kinds(const char *type, uint32_t id)
{
	struct sieve_xdp_key keys[] = { source4(SOURCE), prefix24(NET), service4(SERVER, 22),
					source6(7) };
	uint64_t src = drops(SIEVE_XDP_DROP_SRC), pfx = drops(SIEVE_XDP_DROP_PREFIX);
	uint64_t svc = drops(SIEVE_XDP_DROP_SERVICE);
	uint32_t outside[] = { NET - 1, NET + 256 };
	uint8_t buf[PKT_MAX];
	int bad = 0, differ = 0, dropped = 0;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		bad += filter_op(SIEVE_IOC_ADD, id, &keys[i]) < 0;
	ktap_ok(bad == 0, "blocklist/%s: four entries added as digests (%d failed)", type, bad);
	ktap_ok(verdict4(SOURCE, SERVER, 80) == XDP_DROP, "blocklist/%s: a source dropped", type);
	ktap_ok(verdict4(NET, SERVER, 80) == XDP_DROP &&
		verdict4(NET | 255, SERVER, 80) == XDP_DROP,
		"blocklist/%s: a /24's first and last address dropped", type);
	ktap_ok(verdict4(OTHERS, SERVER, 22) == XDP_DROP,
		"blocklist/%s: a service dropped", type);
	ktap_ok(run(buf, packet(buf, SIEVE_XDP_V6, 7, 1, 80), 1, NULL) == XDP_DROP,
		"blocklist/%s: an IPv6 source dropped", type);
	ktap_ok(drops(SIEVE_XDP_DROP_SRC) - src == 2 && drops(SIEVE_XDP_DROP_PREFIX) - pfx == 2 &&
		drops(SIEVE_XDP_DROP_SERVICE) - svc == 1,
		"blocklist/%s: drops counted by kind (source +%llu, prefix +%llu, service +%llu)",
		type, (unsigned long long)(drops(SIEVE_XDP_DROP_SRC) - src),
		(unsigned long long)(drops(SIEVE_XDP_DROP_PREFIX) - pfx),
		(unsigned long long)(drops(SIEVE_XDP_DROP_SERVICE) - svc));
	for (i = 0; i < 2; i++) {
		differ += verdict4(outside[i], SERVER, 80) != expected4(id, outside[i], SERVER, 80);
		dropped += verdict4(outside[i], SERVER, 80) == XDP_DROP;
	}
	differ += verdict4(OTHERS, SERVER, 23) != expected4(id, OTHERS, SERVER, 23);
	dropped += verdict4(OTHERS, SERVER, 23) == XDP_DROP;
	ktap_ok(differ == 0 && dropped == 0,
		"blocklist/%s: the /24's neighbours and the service's next port pass (%d dropped)",
		type, dropped);
	for (i = 0, differ = dropped = 0; i < FOREIGN; i++) {
		int v = verdict4(OTHERS + 1 + i, SERVER, 80);

		differ += v != expected4(id, OTHERS + 1 + i, SERVER, 80);
		dropped += v == XDP_DROP;
	}
	ktap_ok(differ == 0 && dropped <= 5,
		"blocklist/%s: %d never-added sources get the ioctl's verdict (%d differ, %d dropped)",
		type, FOREIGN, differ, dropped);
}

/* Cuckoo: a source deleted over ioctl passes on the very next packet. */
static void check_deleted(uint32_t id)
{
	int i, added = 0, passed = 0, still = 0;
	struct sieve_xdp_key key;

	for (i = 0; i < DELETED; i++) {
		key = source4(SOURCE + 1 + i);
		added += filter_op(SIEVE_IOC_ADD, id, &key) >= 0 &&
			 verdict4(SOURCE + 1 + i, SERVER, 80) == XDP_DROP;
	}
	for (i = 0; i < DELETED; i++) {
		key = source4(SOURCE + 1 + i);
		if (filter_op(SIEVE_IOC_DELETE, id, &key) != 1)
			continue;
		if (verdict4(SOURCE + 1 + i, SERVER, 80) == XDP_PASS)
			passed++;
		else	/* only a false positive may keep dropping it */
			still += expected4(id, SOURCE + 1 + i, SERVER, 80) == XDP_DROP;
	}
	ktap_ok(added == DELETED && passed + still == DELETED && still <= 2,
		"blocklist/cuckoo: %d sources dropped, deleted over ioctl, passed on the next packet "
		"(%d; %d still reported by the filter)", DELETED, passed, still);
}

static void check_type(uint32_t type, const char *name)
{
	uint32_t id;
	int err;

	err = sv_create_simple(dev, "bl-check", type, CAPACITY, 200000, 0, &id);
	if (!ktap_ok(!err, "blocklist/%s: a filter of 2e-4 (%s)", name, errname(err)))
		return;
	err = set_config(SIEVE_XDP_F_FILTER, id, 0, ALL_KINDS);
	if (ktap_ok(!err, "blocklist/%s: the generation names it (%s)", name, errname(err))) {
		check_kinds(name, id);
		if (type == SIEVE_CUCKOO)
			check_deleted(id);
	}
	sv_destroy(dev, id);
	ktap_ok(verdict4(SOURCE, SERVER, 80) == XDP_PASS && verdict4(NET, SERVER, 80) == XDP_PASS,
		"blocklist/%s: its filter destroyed, nothing is dropped (fail-open)", name);
}

/* The program built with SIEVE_XDP_KFUNC, its maps private to this process (no pins). */
static struct sieve_xdp_filter *open_blocklist(void)
{
	struct sieve_xdp_filter *skel = sieve_xdp_filter__open();
	struct bpf_map *map;

	if (!skel)
		return NULL;
	bpf_object__for_each_map(map, skel->obj)
		bpf_map__set_pin_path(map, NULL);
	if (sieve_xdp_filter__load(skel)) {
		sieve_xdp_filter__destroy(skel);
		return NULL;
	}
	return skel;
}

/* The program the loader attaches, as built: it must load on Debian 12's kernel too. */
static void check_shipped_loads(void)
{
	struct sieve_xdp *skel = sieve_xdp__open();
	struct bpf_map *map;
	int err = skel ? 0 : -errno;

	if (skel) {
		bpf_object__for_each_map(map, skel->obj)
			bpf_map__set_pin_path(map, NULL);
		err = sieve_xdp__load(skel);
		sieve_xdp__destroy(skel);
	}
	ktap_ok(!err, "blocklist: sieve_xdp.bpf.o loads (the 6.1 verifier) (%s)", errname(err));
}

void blocklist_check(int fd)
{
	static const struct { uint32_t type; const char *name; } types[] = {
		{ SIEVE_BLOOM, "bloom" }, { SIEVE_BLOCKED_BLOOM, "blocked" },
		{ SIEVE_CUCKOO, "cuckoo" },
	};
	size_t i;

	dev = fd;
	check_shipped_loads();
	bl = open_blocklist();
	if (!ktap_ok(bl != NULL, "blocklist: sieve_xdp_filter.bpf.o (the kfunc build) loads (%s)",
		     bl ? "ok" : strerror(errno)))
		return;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		check_type(types[i].type, types[i].name);
	sieve_xdp_filter__destroy(bl);
	bl = NULL;
}

/* ---- the benchmark ------------------------------------------------ */

double median5(double v[5])
{
	double t;
	int i, j;

	for (i = 1; i < 5; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[2];
}

/* ns per packet of a source's packet, the median of 5 runs of BENCH_REPEAT. */
static double median_ns(uint32_t saddr)
{
	uint8_t buf[PKT_MAX];
	size_t len = packet(buf, SIEVE_XDP_V4, saddr, SERVER, 80);
	double v[5];
	int i;

	for (i = 0; i < 5; i++)
		if (run(buf, len, BENCH_REPEAT, &v[i]) < 0)
			v[i] = -1;
	return median5(v);
}

/* Sources on the list: 10.0.0.0 + i; never added: 11.0.0.0 + i. */
#define LISTED	0x0a000000u
#define UNLISTED	0x0b000000u

static int fill_bloom_map(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_extra = BENCH_HASHES);
	int fd = bpf_map_create(BPF_MAP_TYPE_BLOOM_FILTER, NULL, 0, sizeof(uint64_t),
				BENCH_MAP_ENTRIES, &o);
	struct sieve_xdp_key key;
	uint32_t zero = 0;
	uint64_t digest;
	int i;

	for (i = 0; fd >= 0 && i < BENCH_MAP_ENTRIES; i++) {
		key = source4(LISTED + i);
		digest = sieve_xdp_digest(&key, secret);
		if (bpf_map_update_elem(fd, NULL, &digest, BPF_ANY))
			return -1;
	}
	if (fd < 0 || bpf_map_update_elem(bpf_map__fd(bl->maps.sieve_bloom), &zero, &fd, BPF_ANY))
		return -1;
	close(fd);	/* the outer map holds it */
	return set_config(0, BENCH_MAP_ENTRIES, BENCH_HASHES, SOURCES_V4);
}

/* The blocked backend's array, written through a mapping as the loader does. */
static int fill_blocked(void)
{
	uint32_t nblocks = BENCH_MAP_ENTRIES * BENCH_BITS_PER_KEY / SIEVE_XDP_BLOCK_BITS + 1;
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(uint32_t), SIEVE_XDP_BLOCK_BYTES,
				nblocks, &o);
	__u64 pattern[SIEVE_XDP_BLOCK_WORDS], *blocks, h;
	struct sieve_xdp_key key;
	size_t bytes = (size_t)nblocks * SIEVE_XDP_BLOCK_BYTES;
	uint32_t zero = 0, idx, w;
	int i;

	if (fd < 0)
		return -1;
	blocks = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (blocks == MAP_FAILED)
		return -1;
	for (i = 0; i < BENCH_MAP_ENTRIES; i++) {
		key = source4(LISTED + i);
		h = sieve_xdp_blocked_hash(sieve_xdp_digest(&key, secret), SEED);
		idx = sieve_xdp_blocked_index(h, nblocks);
		sieve_xdp_blocked_pattern(h, BENCH_HASHES, pattern);
		for (w = 0; w < SIEVE_XDP_BLOCK_WORDS; w++)
			blocks[(size_t)idx * SIEVE_XDP_BLOCK_WORDS + w] |= pattern[w];
	}
	munmap(blocks, bytes);
	if (bpf_map_update_elem(bpf_map__fd(bl->maps.sieve_blocked), &zero, &fd, BPF_ANY))
		return -1;
	close(fd);
	return set_config(SIEVE_XDP_F_BLOCKED, nblocks, BENCH_HASHES, SOURCES_V4);
}

static int fill_filter(uint32_t type, uint32_t *id)
{
	struct sieve_xdp_key key;
	int i, err;

	err = sv_create_simple(dev, "bl-bench", type, BENCH_MAP_ENTRIES, BENCH_FPP_PPB, 0, id);
	for (i = 0; !err && i < BENCH_MAP_ENTRIES; i++) {
		key = source4(LISTED + i);
		err = filter_op(SIEVE_IOC_ADD, *id, &key) < 0;
	}
	return err ?: set_config(SIEVE_XDP_F_FILTER, *id, 0, SOURCES_V4);
}

/* Time from a delete's ioctl to the end of the first run that passes the source. */
static void bench_delete_to_pass(FILE *out, uint32_t id)
{
	double t0, total = 0, worst = 0;
	int i, runs, timed = 0, still = 0;
	struct sieve_xdp_key key;
	struct timespec ts;

	for (i = 0; i < 200; i++) {
		key = source4(LISTED + i);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = ts.tv_sec + ts.tv_nsec / 1e9;
		filter_op(SIEVE_IOC_DELETE, id, &key);
		for (runs = 1; runs < 100 && verdict4(LISTED + i, SERVER, 80) != XDP_PASS; runs++)
			;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = ts.tv_sec + ts.tv_nsec / 1e9 - t0;
		if (runs == 100) {
			still++;	/* a false positive keeps it */
			continue;
		}
		timed++;
		total += t0;
		worst = t0 > worst ? t0 : worst;
	}
	fprintf(out, "blocklist, cuckoo filter: `delete` ioctl of a source's digest to the first "
		"of its packets passed: mean %.1f us, worst %.1f us over %d sources "
		"(%d still dropped: false positives)\n",
		timed ? total / timed * 1e6 : 0, worst * 1e6, timed, still);
}

/*
 * The blocklist program (the kfunc build, so every backend runs the same
 * code) with one source entry kind of BENCH_MAP_ENTRIES sources, each
 * backend at 1e-2, in one run: a packet from a source not on the list and
 * one from a source on it. "parsing only" has no entry kind in use: what
 * is left above it is the probe.
 */
int blocklist_bench(int fd, FILE *out)
{
	static const struct { uint32_t type; const char *name; } filters[] = {
		{ SIEVE_CUCKOO, "filter:NAME, cuckoo" },
		{ SIEVE_BLOCKED_BLOOM, "filter:NAME, blocked Bloom" },
		{ SIEVE_BLOOM, "filter:NAME, Bloom" },
	};
	double parse_absent, parse_present, base = 0, absent, present;
	uint32_t id;
	size_t i;

	dev = fd;
	bl = open_blocklist();
	if (!bl || set_config(0, 0, 0, 0))
		return -1;
	parse_absent = median_ns(UNLISTED + 1);
	parse_present = median_ns(LISTED + 5);
	fprintf(out, "\nThe blocklist program (sieve_xdp_filter.bpf.o), one source kind, %d sources "
		"on the list, each backend at 1e-2;\nns per packet, medians of 5 x %d runs; "
		"above parsing: minus the program with no entry kind in use\n"
		"%-28s %10s %10s %12s %12s\n", BENCH_MAP_ENTRIES, BENCH_REPEAT, "backend",
		"not listed", "listed", "probe (not)", "vs bloom-map");
	fprintf(out, "%-28s %10.1f %10.1f\n", "parsing only", parse_absent, parse_present);
	for (i = 0; i < 2 + sizeof(filters) / sizeof(filters[0]); i++) {
		int err = i == 0 ? fill_bloom_map() : i == 1 ? fill_blocked() :
			  fill_filter(filters[i - 2].type, &id);

		if (err)
			return -1;
		absent = median_ns(UNLISTED + 1);
		present = median_ns(LISTED + 5);
		if (i == 0)
			base = absent - parse_absent;
		fprintf(out, "%-28s %10.1f %10.1f %12.1f %11.2fx\n",
			i == 0 ? "bloom-map (k = 7)" : i == 1 ? "blocked (k = 7, 10 bits/key)" :
			filters[i - 2].name, absent, present, absent - parse_absent,
			base > 0 ? (absent - parse_absent) / base : 0);
		if (i >= 2 && filters[i - 2].type == SIEVE_CUCKOO)
			bench_delete_to_pass(out, id);
		if (i >= 2)
			sv_destroy(dev, id);
	}
	sieve_xdp_filter__destroy(bl);
	bl = NULL;
	return 0;
}
