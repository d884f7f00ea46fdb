// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve xdp why` (report.h): what the live program does with one packet,
 * and which entries of the store cover it.
 *
 * The verdict is the program's own, not a model of it: a packet built here
 * is run through BPF_PROG_TEST_RUN. Not through the attached program
 * itself, whose counters are the live ones: a test run would count the
 * packet there, and taking it back out afterwards races with traffic on
 * the same CPU's counters. So a second instance of the same program object
 * (the skeleton this sieve attaches) is loaded, every map given the live
 * map's fd (bpf_map__reuse_fd: the same generations, allowlist and IPv4
 * table and host bitmap the interface reads, at the moment of the run)
 * except the maps the program writes, which it gets private ones of: the
 * counters, the drops per origin, the samples' ring, settings (rate 0: it
 * samples nothing) and bucket. Nothing is pinned, nothing in the
 * interface's folder is touched; the instance goes when the command ends,
 * and the live state is only read.
 *
 * That instance is the attached program only if it is the same code: the
 * kernel's tag (a hash of the instructions, map references left out) of
 * the one loaded here must equal the running one's. An older program left
 * running by an upgrade of the package does not match, and why says so
 * (-ESTALE: `attach` upgrades it) rather than answer for other code.
 *
 * The private counters then say what the run did: the drop counter of the
 * kind that matched, ALLOWED when the allowlist overrode a source match,
 * BLOOM_HITS and FALSE_POSITIVES for what exact mode (or the removed map)
 * refuted. A drop that no entry of the store covers is a false positive of
 * the filter, shown as one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "report.h"
#include "store.h"
#include "sieve_xdp_v4table.h"
#include "sieve_xdp.skel.h"
#include "sieve_xdp_filter.skel.h"

/* ---- the packet ---- */

#define WHY_ICMP_ECHO	8
#define WHY_ICMPV6_ECHO	128	/* not neighbour discovery, which always passes */

static size_t put_l4(const struct sxdp_why_packet *p, uint8_t *l4)
{
	switch (p->proto) {
	case IPPROTO_TCP:
		memcpy(l4, &p->sport, 2);
		memcpy(l4 + 2, &p->dport, 2);
		l4[12] = 5 << 4;	/* data offset: 20 bytes */
		l4[13] = 0x02;		/* SYN */
		return 20;
	case IPPROTO_UDP:
		memcpy(l4, &p->sport, 2);
		memcpy(l4 + 2, &p->dport, 2);
		l4[5] = 8;		/* length */
		return 8;
	case IPPROTO_SCTP:
		memcpy(l4, &p->sport, 2);
		memcpy(l4 + 2, &p->dport, 2);
		return 12;
	default:			/* ICMP, ICMPv6: an echo request */
		l4[0] = p->family == SIEVE_XDP_V4 ? WHY_ICMP_ECHO : WHY_ICMPV6_ECHO;
		return 8;
	}
}

size_t sxdp_why_build(const struct sxdp_why_packet *p, uint8_t buf[SXDP_WHY_PKT_MAX])
{
	struct ethhdr *eth = (struct ethhdr *)buf;
	uint8_t *ip = buf + sizeof(*eth);
	size_t l4len;

	memset(buf, 0, SXDP_WHY_PKT_MAX);
	memcpy(eth->h_dest, "\x02\0\0\0\0\x01", ETH_ALEN);
	memcpy(eth->h_source, "\x02\0\0\0\0\x02", ETH_ALEN);
	if (p->family == SIEVE_XDP_V4) {
		eth->h_proto = htons(ETH_P_IP);
		l4len = put_l4(p, ip + 20);
		ip[0] = 0x45;
		*(uint16_t *)(ip + 2) = htons(20 + l4len);
		ip[8] = 64;
		ip[9] = p->proto;
		memcpy(ip + 12, p->saddr, 4);
		memcpy(ip + 16, p->daddr, 4);
		return sizeof(*eth) + 20 + l4len;
	}
	eth->h_proto = htons(ETH_P_IPV6);
	l4len = put_l4(p, ip + 40);
	ip[0] = 0x60;
	*(uint16_t *)(ip + 4) = htons(l4len);
	ip[6] = p->proto;
	ip[7] = 64;
	memcpy(ip + 8, p->saddr, 16);
	memcpy(ip + 24, p->daddr, 16);
	return sizeof(*eth) + 40 + l4len;
}

/* ---- the program's verdict ---- */

/* The program of either build, as attach.c loads it. */
struct why_instance {
	struct sieve_xdp *plain;
	struct sieve_xdp_filter *filter;
	struct bpf_object *obj;
};

/* The live map of @name in @h; -1 if the instance has none (an older sieve's). */
static int live_fd(const struct sxdp_handle *h, const char *name)
{
	static const struct { const char *name; size_t off; } maps[] = {
		{ SIEVE_XDP_MAP_ACTIVE, offsetof(struct sxdp_handle, active_fd) },
		{ SIEVE_XDP_MAP_CFG, offsetof(struct sxdp_handle, cfg_fd) },
		{ SIEVE_XDP_MAP_BLOOM, offsetof(struct sxdp_handle, bloom_fd) },
		{ SIEVE_XDP_MAP_BLOCKED, offsetof(struct sxdp_handle, blocked_fd) },
		{ SIEVE_XDP_MAP_EXACT, offsetof(struct sxdp_handle, exact_fd) },
		{ SIEVE_XDP_MAP_REMOVED, offsetof(struct sxdp_handle, removed_fd) },
		{ SIEVE_XDP_MAP_ALLOW, offsetof(struct sxdp_handle, allow_fd) },
		{ SIEVE_XDP_MAP_V4TOP, offsetof(struct sxdp_handle, v4top_fd) },
		{ SIEVE_XDP_MAP_V4CHUNK, offsetof(struct sxdp_handle, v4chunk_fd) },
		{ SIEVE_XDP_MAP_V4HOST, offsetof(struct sxdp_handle, v4host_fd) },
		{ SIEVE_XDP_MAP_ALLOW_NONE, offsetof(struct sxdp_handle, allow_none_fd) },
	};
	size_t i;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (!strcmp(name, maps[i].name))
			return *(const int *)((const char *)h + maps[i].off);
	return -1;
}

/*
 * The maps the program writes (or, the ring's settings, reads only to
 * write the ring), and those whose absence from older pins means what an
 * empty private map means: an allowlist flag of 0 asks the trie, and a
 * bitmap only a config with SIEVE_XDP_F_V4HOSTS reads, which a handle
 * without it never writes. A map of neither kind, absent, is -ESTALE.
 */
static bool why_private(const char *name, const struct sxdp_handle *h)
{
	static const char *const written[] = {
		SIEVE_XDP_MAP_STATS, SIEVE_XDP_MAP_ORIGINS, SIEVE_XDP_MAP_SAMPLES,
		SIEVE_XDP_MAP_SAMPLE_CFG, "sample_bucket",
	};
	size_t i;

	for (i = 0; i < sizeof(written) / sizeof(written[0]); i++)
		if (!strcmp(name, written[i]))
			return true;
	return (!strcmp(name, SIEVE_XDP_MAP_ALLOW_NONE) && h->allow_none_fd < 0) ||
	       (!strcmp(name, SIEVE_XDP_MAP_V4HOST) && h->v4host_fd < 0);
}

/*
 * Opens the program object, its maps the live ones but those of
 * why_private, none
 * pinned (a map with a pin path would be pinned, or taken from its pin by
 * name, under the default root). -ESTALE: a map the object has and the
 * interface's instance lacks.
 */
static int why_open(struct why_instance *in, const struct sxdp_handle *h, bool filter)
{
	struct bpf_map *map;
	int ret;

	memset(in, 0, sizeof(*in));
	if (filter) {
		in->filter = sieve_xdp_filter__open();
		in->obj = in->filter ? in->filter->obj : NULL;
	} else {
		in->plain = sieve_xdp__open();
		in->obj = in->plain ? in->plain->obj : NULL;
	}
	if (!in->obj)
		return -errno;
	bpf_object__for_each_map(map, in->obj) {
		const char *name = bpf_map__name(map);
		int fd;

		ret = bpf_map__set_pin_path(map, NULL);
		if (ret)
			return ret;
		/* Written by the run: private maps, so the live ones never see it. */
		if (why_private(name, h))
			continue;
		fd = live_fd(h, name);
		if (fd < 0)
			return -ESTALE;
		ret = bpf_map__reuse_fd(map, fd);
		if (ret)
			return ret;
	}
	return 0;
}

static void why_close(struct why_instance *in)
{
	sieve_xdp__destroy(in->plain);
	sieve_xdp_filter__destroy(in->filter);
	memset(in, 0, sizeof(*in));
}

static int prog_tag(int prog_fd, char tag[17])
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	sxdp_tag_hex(info.tag, tag);
	return 0;
}

/* Runs @p once through the loaded instance; its private counters into @v. */
static int why_run(struct why_instance *in, const struct sxdp_prog *prog,
		   const struct sxdp_why_packet *p, struct sxdp_why_verdict *v)
{
	struct bpf_program *copy = bpf_object__find_program_by_name(in->obj, SIEVE_XDP_PROG);
	struct bpf_map *stats = bpf_object__find_map_by_name(in->obj, SIEVE_XDP_MAP_STATS);
	uint8_t pkt[SXDP_WHY_PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = pkt, .repeat = 1);
	int ret;

	if (!copy || !stats)
		return -ENOENT;
	ret = prog_tag(bpf_program__fd(copy), v->tag);
	if (ret)
		return ret;
	if (strcmp(v->tag, prog->tag))
		return -ESTALE;
	run.data_size_in = sxdp_why_build(p, pkt);
	if (bpf_prog_test_run_opts(bpf_program__fd(copy), &run))
		return -errno;
	v->action = run.retval;
	return sxdp_read_stats_fd(bpf_map__fd(stats), &v->counted);
}

/* Which counter took the packet: a DROP_* one, or PASSED. */
static int verdict_counter(const struct sieve_xdp_stats *s)
{
	int i;

	for (i = SIEVE_XDP_DROP_SRC; i <= SIEVE_XDP_DROP_MALFORMED; i++)
		if (s->c[i].packets)
			return i;
	return s->c[SIEVE_XDP_DROP_UNPARSED].packets ? SIEVE_XDP_DROP_UNPARSED : SIEVE_XDP_PASSED;
}

int sxdp_why_verdict(struct sxdp_handle *h, const struct sxdp_iface_report *r,
		     const struct sxdp_why_packet *p, struct sxdp_why_verdict *v)
{
	struct why_instance in;
	int ret;

	memset(v, 0, sizeof(*v));
	if (h->stale)
		return -ESTALE;
	if (!r->prog.id)
		return -ENOENT;
	ret = why_open(&in, h, sxdp_backend_of(r->cfg.flags)->kfunc_prog);
	if (!ret)
		ret = bpf_object__load(in.obj);
	if (!ret)
		ret = why_run(&in, &r->prog, p, v);
	why_close(&in);
	if (ret)
		return ret;
	v->counter = verdict_counter(&v->counted);
	v->allowed = v->counted.c[SIEVE_XDP_ALLOWED].packets != 0;
	v->dry_run = v->counted.c[SIEVE_XDP_DRY_RUN_PASSED].packets != 0;
	return 0;
}

/* ---- the entries that cover the packet ---- */

struct why_walk {
	const struct sieve_xdp_config *cfg;
	int (*cb)(const struct sxdp_why_entry *w, void *ctx);
	void *ctx;
	const char *v4table;	/* the IPv4 table's word on the address */
	struct sieve_xdp_key src;	/* the packet's source key */
};

/* The prefix key of @len bits that holds @src's source address. */
static void prefix_key(const struct sieve_xdp_key *src, unsigned int len, struct sieve_xdp_key *k)
{
	unsigned int w;

	*k = *src;
	k->kind = SIEVE_XDP_PREFIX;
	k->prefix_len = len;
	for (w = 0; w < 4; w++) {
		unsigned int bits = len > 32 * w ? len - 32 * w : 0;

		k->saddr[w] &= htonl(bits >= 32 ? ~0U : bits ? ~0U << (32 - bits) : 0);
	}
}

/*
 * Where a blocked prefix entry is in the live maps: the IPv4 table's
 * state for the address, or the key of the probe length it was expanded
 * to (of the packet's source: the one key of that length that holds it).
 * That length is the shortest probe length at or above the prefix's: a
 * prefix is expanded only when every probe length is taken (expand.c),
 * so no length comes between it and its target later.
 */
static void where_in_maps(const struct why_walk *x, const struct sxdp_store_entry *e,
			  const struct sieve_xdp_key *key, struct sxdp_why_entry *w)
{
	const struct sieve_xdp_config *cfg = x->cfg;
	struct sieve_xdp_key k;
	unsigned int target;

	if (e->allow || e->kind != SIEVE_XDP_PREFIX)
		return;
	if ((cfg->flags & SIEVE_XDP_F_V4TABLE) && sxdp_v4table_entry(key)) {
		snprintf(w->in_maps, sizeof(w->in_maps), "%s", x->v4table);
		return;
	}
	target = key->family == SIEVE_XDP_V4 ?
		 sxdp_cpe_target(cfg->v4_lens, cfg->nr_v4_lens, key->prefix_len) :
		 sxdp_cpe_target(cfg->v6_lens, cfg->nr_v6_lens, key->prefix_len);
	if (!target) {
		snprintf(w->in_maps, sizeof(w->in_maps), "no probe length covers it");
		return;
	}
	prefix_key(&x->src, target, &k);
	sxdp_format_entry(&k, w->in_maps, sizeof(w->in_maps));
}

struct why_found {
	const struct why_walk *x;
	const struct sieve_xdp_key *key;
};

static int found_entry(const struct sxdp_store_entry *e, void *ctx)
{
	struct why_found *f = ctx;
	struct sxdp_why_entry w = { .e = e };

	where_in_maps(f->x, e, f->key, &w);
	return f->x->cb(&w, f->x->ctx);
}

static int lookup(struct sxdp_store *s, const char *list, const struct why_walk *x,
		  const struct sieve_xdp_key *key)
{
	struct why_found f = { x, key };

	return sxdp_store_get(s, list, key, found_entry, &f);
}

/*
 * The IPv4 prefix table's word on @saddr: the /24 covered whole, the
 * address's bit in its chunk, or neither (read as the program reads it).
 */
static void v4table_says(struct sxdp_handle *h, __be32 saddr, char *buf, size_t n)
{
	uint32_t addr = ntohl(saddr), slot = sieve_xdp_v4_slot(addr);
	uint32_t word = sieve_xdp_v4_word(slot), state, key;
	struct sieve_xdp_v4_chunk chunk;
	struct in_addr net = { htonl(addr & ~255U) };
	char text[INET_ADDRSTRLEN];
	__u64 top = 0;

	inet_ntop(AF_INET, &net, text, sizeof(text));
	if (bpf_map_lookup_elem(h->v4top_fd, &word, &top)) {
		snprintf(buf, n, "IPv4 prefix table unreadable: %s", strerror(errno));
		return;
	}
	state = sieve_xdp_v4_state(top, slot);
	if (state == SIEVE_XDP_V4_COVERED) {
		snprintf(buf, n, "IPv4 prefix table: %s/24 covered whole", text);
		return;
	}
	key = sieve_xdp_v4_chunk_key(slot, state);
	if (state >= SIEVE_XDP_V4_CHUNK0 && !bpf_map_lookup_elem(h->v4chunk_fd, &key, &chunk))
		snprintf(buf, n, "IPv4 prefix table: the address %s in the chunk of %s/24",
			 sieve_xdp_v4_chunk_has(&chunk, addr) ? "set" : "NOT set", text);
	else
		snprintf(buf, n, "IPv4 prefix table: NOT set (%s/24 holds nothing)", text);
}

int sxdp_why_entries(struct sxdp_store *s, const char *list, struct sxdp_handle *h,
		     const struct sxdp_iface_report *r, const struct sxdp_why_packet *p,
		     int (*cb)(const struct sxdp_why_entry *w, void *ctx), void *ctx)
{
	const struct sieve_xdp_config *cfg = &r->cfg;
	char table[96] = "";
	struct why_walk x = { .cfg = cfg, .cb = cb, .ctx = ctx, .v4table = table };
	struct sieve_xdp_key key = { .kind = SIEVE_XDP_SRC, .family = p->family };
	unsigned int full = p->family == SIEVE_XDP_V4 ? 32 : 128, len;
	bool ports = p->proto == IPPROTO_TCP || p->proto == IPPROTO_UDP ||
		     p->proto == IPPROTO_SCTP;
	int ret;

	if ((cfg->flags & SIEVE_XDP_F_V4TABLE) && p->family == SIEVE_XDP_V4 && sxdp_v4table_on(h))
		v4table_says(h, p->saddr[0], table, sizeof(table));
	memcpy(key.saddr, p->saddr, 16);
	key.prefix_len = full;
	x.src = key;
	ret = lookup(s, list, &x, &key);
	/* Every prefix that holds the address, longest first. */
	for (len = full - 1; !ret && len >= 1; len--) {
		struct sieve_xdp_key k;

		prefix_key(&key, len, &k);
		ret = lookup(s, list, &x, &k);
	}
	if (ret || !ports || !p->dport)
		return ret;
	key = (struct sieve_xdp_key){ .kind = SIEVE_XDP_SERVICE, .family = p->family,
				      .proto = p->proto, .dport = p->dport };
	memcpy(key.daddr, p->daddr, 16);
	ret = lookup(s, list, &x, &key);
	if (ret || !p->sport)
		return ret;
	key.kind = SIEVE_XDP_FLOW;
	key.sport = p->sport;
	memcpy(key.saddr, p->saddr, 16);
	return lookup(s, list, &x, &key);
}
