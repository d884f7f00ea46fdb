// SPDX-License-Identifier: GPL-2.0
/*
 * make test-bpf: the XDP blocklist under BPF_PROG_TEST_RUN, on this host's
 * kernel, as root. The program and its maps come from the same skeleton
 * and loader as `sieve xdp`, unpinned; every case sets a blocklist, runs
 * crafted packets and checks the verdict and the counters.
 *
 * Usage: sieve-xdp-test [-r RESULTS_FILE] [SUBSTRING]
 */
#define _GNU_SOURCE	/* sched_getcpu, sched_setaffinity */
#include <arpa/inet.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ops.h"
#include "report.h"
#include "xdp.h"
#include "backend.h"
#include "sieve_xdp.skel.h"
#include "pkt.h"
#include "private_maps.h"
#include "splitmix.h"
#include "sieve_xdp_v4table.h"

static struct sieve_xdp *skel;
static struct sxdp_handle h;
/* The digest key of the first generation; sxdp_rebuild keeps the live one. */
static const __u64 test_secret[2] = { 0x5ec0f9b396b02aebULL, 0x0123456789abcdefULL };
static int prog_fd;
static bool case_failed;
/* The backend every list is set with: cases marked BOTH run with each. */
static uint32_t backend;

/* Records a failed expectation of the running case; returns ok. */
static bool expect(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return true;
	case_failed = true;
	fputs("    FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return false;
}

static int run_pkt(const uint8_t *buf, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .repeat = 1);
	int err = bpf_prog_test_run_opts(prog_fd, &opts);

	return err ? -errno : (int)opts.retval;
}

static struct sieve_xdp_stats stats_now(void)
{
	struct sieve_xdp_stats s;

	if (sxdp_read_stats(&h, &s))
		memset(&s, 0xff, sizeof(s));
	return s;
}

/* Parses entries into a list; a bad one fails the case. */
static void list_of(struct sxdp_keys *l, const char *const *entries, size_t n)
{
	struct sieve_xdp_key key;
	const char *why;
	size_t i;

	for (i = 0; i < n; i++) {
		/* Parsed first: why is an argument too, evaluated in no set order. */
		int err = sxdp_parse_entry(entries[i], &key, &why);

		if (expect(!err, "parse %s: %s", entries[i], why))
			sxdp_keys_add(l, &key);
	}
	sxdp_keys_sort(l);
}

static bool set_list(const struct sxdp_keys *l, uint32_t flags, uint32_t fpp_ppb)
{
	char err[256] = "";
	int ret = sxdp_rebuild(&h, l, flags | backend, fpp_ppb, l->n > 1024 ? l->n : 1024, err,
			       sizeof(err));

	return expect(!ret, "rebuild: %s", err);
}

static bool set_entries(const char *const *entries, size_t n, uint32_t flags)
{
	struct sxdp_keys l = { 0 };
	bool ok;

	list_of(&l, entries, n);
	ok = set_list(&l, flags, 1000);
	sxdp_keys_free(&l);
	return ok;
}

/*
 * What a block does to the maps (ops.c): live into the maps, else a
 * rebuild of @cur (the whole list, @add merged into it). 1 if rebuilt.
 */
static int add_entries(struct sxdp_keys *cur, const struct sxdp_keys *add)
{
	struct sieve_xdp_config cfg;
	struct sxdp_keys fresh = { 0 };
	char err[256] = "";
	size_t i;
	int ret;

	for (i = 0; i < add->n; i++)
		if (!sxdp_keys_find(cur, &add->keys[i]))
			sxdp_keys_add(&fresh, &add->keys[i]);
	for (i = 0; i < fresh.n; i++)
		sxdp_keys_add(cur, &fresh.keys[i]);
	sxdp_keys_sort(cur);
	ret = sxdp_read_config(&h, &cfg, NULL);
	/* IPv4 prefixes into the table first, as ops.c does. */
	if (!ret && (cfg.flags & SIEVE_XDP_F_V4TABLE))
		ret = sxdp_v4table_add(&h, &fresh);
	if (!ret)
		ret = sxdp_add_live(&h, &fresh, 0);
	if (ret == 1) {
		ret = sxdp_rebuild(&h, cur, cfg.flags, cfg.fpp_ppb,
				   sxdp_capacity_for(cur->n > 2 * cfg.capacity ? cur->n :
						     2 * cfg.capacity), err, sizeof(err));
		ret = ret ? ret : 1;
	}
	sxdp_keys_free(&fresh);
	expect(ret >= 0, "add: %d %s", ret, err);
	return ret;
}

/* What an unblock does: a generation without @del; *missing: not in @cur. */
static int remove_entries(struct sxdp_keys *cur, const struct sxdp_keys *del, size_t *missing)
{
	struct sieve_xdp_config cfg;
	char err[256] = "";
	size_t i;
	int ret;

	*missing = 0;
	for (i = 0; i < del->n; i++)
		*missing += !sxdp_keys_remove(cur, &del->keys[i]);
	ret = sxdp_read_config(&h, &cfg, NULL);
	if (!ret && *missing < del->n)
		ret = sxdp_rebuild(&h, cur, cfg.flags, cfg.fpp_ppb, cfg.capacity, err, sizeof(err));
	expect(!ret, "remove: %d %s", ret, err);
	return ret;
}

static struct sieve_xdp_key flow(const char *src, uint16_t sport, const char *dst, uint16_t dport,
				 uint8_t proto)
{
	struct sieve_xdp_key k = { .proto = proto, .sport = htons(sport), .dport = htons(dport) };
	int af = strchr(src, ':') ? AF_INET6 : AF_INET;

	k.family = af == AF_INET ? SIEVE_XDP_V4 : SIEVE_XDP_V6;
	inet_pton(af, src, k.saddr);
	inet_pton(af, dst, k.daddr);
	return k;
}

/*
 * The first counter that did not move as one packet of len bytes moves
 * them: up by one packet and len bytes for those in `moved` and for
 * packets, not at all for the others. -1 if all did.
 */
static int wrong_counter(const struct sieve_xdp_stats *before, const struct sieve_xdp_stats *after,
			 size_t len, const int *moved, int nmoved)
{
	int i, j;

	for (i = 0; i < SIEVE_XDP_NR_COUNTERS; i++) {
		uint64_t should = i == SIEVE_XDP_PACKETS;

		for (j = 0; j < nmoved; j++)
			should += moved[j] == i;
		if (after->c[i].packets - before->c[i].packets != should ||
		    after->c[i].bytes - before->c[i].bytes != should * len)
			return i;
	}
	return -1;
}

/*
 * Runs one packet; checks the verdict and that exactly the counters in
 * `moved` (packets always) went up by one packet of its length.
 */
static bool check_pkt(const char *what, const struct pkt_spec *spec, int want,
		      const int *moved, int nmoved)
{
	struct sieve_xdp_stats before = stats_now(), after;
	uint8_t buf[PKT_MAX];
	size_t len = pkt_build(spec, buf);
	int verdict = run_pkt(buf, len), i;
	bool ok;

	after = stats_now();
	ok = expect(verdict == want, "%s: verdict %d, want %d", what, verdict, want);
	i = wrong_counter(&before, &after, len, moved, nmoved);
	if (i >= 0)
		ok = expect(false, "%s: counter %d moved by %llu packets, %llu bytes (packet of %zu)",
			    what, i, (unsigned long long)(after.c[i].packets - before.c[i].packets),
			    (unsigned long long)(after.c[i].bytes - before.c[i].bytes), len);
	return ok;
}

static const int PASSED[] = { SIEVE_XDP_PASSED };

/* Whether the live generation answers for @kind of @s from the IPv4 prefix table. */
static bool table_answers(const struct pkt_spec *s, int kind)
{
	struct sieve_xdp_config cfg;

	return kind == SIEVE_XDP_PREFIX && s->flow.family == SIEVE_XDP_V4 &&
	       !sxdp_read_config(&h, &cfg, NULL) && (cfg.flags & SIEVE_XDP_F_V4TABLE);
}

static bool drops(const char *what, const struct pkt_spec *s, int kind)
{
	const int moved[] = { SIEVE_XDP_DROP_SRC + kind, SIEVE_XDP_BLOOM_HITS };

	/* The table is exact: no filter is asked, no filter hit counted. */
	return check_pkt(what, s, XDP_DROP, moved, table_answers(s, kind) ? 1 : 2);
}

static bool passes(const char *what, const struct pkt_spec *s)
{
	return check_pkt(what, s, XDP_PASS, PASSED, 1);
}

static struct pkt_spec tcp(const char *src, uint16_t sport, const char *dst, uint16_t dport)
{
	return (struct pkt_spec){ .flow = flow(src, sport, dst, dport, IPPROTO_TCP), .payload = 32 };
}

/* ---- entry kinds ---- */

static void test_source_v4_v6(void)
{
	static const char *const e[] = { "198.51.100.7", "2001:db8::7" };
	struct pkt_spec s;

	if (!set_entries(e, 2, 0))
		return;
	s = tcp("198.51.100.7", 1234, "203.0.113.1", 80);
	drops("v4 blocked source", &s, SIEVE_XDP_SRC);
	s = tcp("198.51.100.8", 1234, "203.0.113.1", 80);
	passes("v4 other source", &s);
	s = tcp("203.0.113.1", 80, "198.51.100.7", 1234);
	passes("v4 blocked address as destination", &s);
	s = tcp("2001:db8::7", 1234, "2001:db8:1::1", 80);
	drops("v6 blocked source", &s, SIEVE_XDP_SRC);
	s = tcp("2001:db8::8", 1234, "2001:db8:1::1", 80);
	passes("v6 other source", &s);
	s = (struct pkt_spec){ .flow = flow("198.51.100.7", 0, "203.0.113.1", 0, IPPROTO_ICMP),
			       .icmp_type = 8 };
	drops("v4 blocked source, ICMP", &s, SIEVE_XDP_SRC);
}

static void test_prefixes(void)
{
	static const char *const e[] = { "203.0.113.0/24", "10.20.0.0/16", "2001:db8:aa::/48",
					 "2001:db8:bb::/127" };
	struct pkt_spec s;

	if (!set_entries(e, 4, 0))
		return;
	s = tcp("203.0.113.99", 1, "198.51.100.1", 2);
	drops("v4 in /24", &s, SIEVE_XDP_PREFIX);
	s = tcp("10.20.255.1", 1, "198.51.100.1", 2);
	drops("v4 in /16", &s, SIEVE_XDP_PREFIX);
	s = tcp("10.21.0.1", 1, "198.51.100.1", 2);
	passes("v4 outside /16", &s);
	s = tcp("203.0.114.1", 1, "198.51.100.1", 2);
	passes("v4 outside /24", &s);
	s = tcp("2001:db8:aa:ffff::1", 1, "2001:db8::1", 2);
	drops("v6 in /48", &s, SIEVE_XDP_PREFIX);
	s = tcp("2001:db8:ab::1", 1, "2001:db8::1", 2);
	passes("v6 outside /48", &s);
	s = tcp("2001:db8:bb::1", 1, "2001:db8::1", 2);
	drops("v6 in /127", &s, SIEVE_XDP_PREFIX);
	s = tcp("2001:db8:bb::2", 1, "2001:db8::1", 2);
	passes("v6 outside /127", &s);
}

static void test_services(void)
{
	static const char *const e[] = { "tcp:192.0.2.10:22", "udp:[2001:db8::53]:53",
					 "sctp:192.0.2.10:3868" };
	struct pkt_spec s;

	if (!set_entries(e, 3, 0))
		return;
	s = tcp("198.51.100.1", 40000, "192.0.2.10", 22);
	drops("v4 tcp to blocked service", &s, SIEVE_XDP_SERVICE);
	s = tcp("198.51.100.1", 40000, "192.0.2.10", 23);
	passes("v4 tcp to another port", &s);
	s.flow = flow("198.51.100.1", 40000, "192.0.2.10", 22, IPPROTO_UDP);
	passes("v4 udp to the blocked tcp port", &s);
	s.flow = flow("198.51.100.1", 40000, "192.0.2.10", 3868, IPPROTO_SCTP);
	drops("v4 sctp to blocked service", &s, SIEVE_XDP_SERVICE);
	s.flow = flow("2001:db8::1", 5353, "2001:db8::53", 53, IPPROTO_UDP);
	drops("v6 udp to blocked service", &s, SIEVE_XDP_SERVICE);
	s.flow = flow("2001:db8::1", 5353, "2001:db8::54", 53, IPPROTO_UDP);
	passes("v6 udp to another host", &s);
}

static void test_flows(void)
{
	static const char *const e[] = { "tcp:198.51.100.7:40000,192.0.2.10:22",
					 "udp:[2001:db8::7]:5000,[2001:db8::1]:53" };
	struct pkt_spec s;

	if (!set_entries(e, 2, 0))
		return;
	s = tcp("198.51.100.7", 40000, "192.0.2.10", 22);
	drops("v4 blocked flow", &s, SIEVE_XDP_FLOW);
	s = tcp("198.51.100.7", 40001, "192.0.2.10", 22);
	passes("v4 other source port", &s);
	s = tcp("198.51.100.8", 40000, "192.0.2.10", 22);
	passes("v4 other source", &s);
	s.flow = flow("198.51.100.7", 40000, "192.0.2.10", 22, IPPROTO_UDP);
	passes("v4 same ports over udp", &s);
	s.flow = flow("2001:db8::7", 5000, "2001:db8::1", 53, IPPROTO_UDP);
	drops("v6 blocked flow", &s, SIEVE_XDP_FLOW);
	s.flow = flow("2001:db8::7", 5000, "2001:db8::1", 54, IPPROTO_UDP);
	passes("v6 other destination port", &s);
}

/* ---- encapsulation and fragments ---- */

static bool drops_unparsed(const char *what, const struct pkt_spec *s);
static bool passes_as(const char *what, const struct pkt_spec *s, bool malformed);

static void test_vlans(void)
{
	static const char *const e[] = { "198.51.100.7", "tcp:[2001:db8::1]:443" };
	struct pkt_spec s;
	int v;

	if (!set_entries(e, 2, 0))
		return;
	for (v = 1; v <= 2; v++) {
		s = tcp("198.51.100.7", 1, "192.0.2.1", 2);
		s.vlans = v;
		drops(v == 1 ? "802.1Q, blocked source" : "802.1ad+802.1Q, blocked source", &s,
		      SIEVE_XDP_SRC);
		s = tcp("2001:db8::9", 1, "2001:db8::1", 443);
		s.vlans = v;
		drops(v == 1 ? "802.1Q, v6 service" : "802.1ad+802.1Q, v6 service", &s,
		      SIEVE_XDP_SERVICE);
		s = tcp("198.51.100.8", 1, "192.0.2.1", 2);
		s.vlans = v;
		passes("VLAN, other source", &s);
	}
	/*
	 * Three or six tags, priority tags first: the kernel strips them all
	 * and delivers the packet, which the program cannot read; dropped
	 * while anything is on the list, whatever the packet (issue 20: a
	 * blocked source and service reached behind three VLAN 0 tags).
	 */
	for (v = 3; v <= 6; v += 3) {
		s = tcp("198.51.100.7", 1, "192.0.2.1", 2);
		s.vlans = v;
		drops_unparsed("VLAN 0 x3+, blocked source", &s);
		s = tcp("2001:db8::9", 1, "2001:db8::1", 443);
		s.vlans = v;
		drops_unparsed("VLAN 0 x3+, v6 service", &s);
		s = tcp("198.51.100.8", 1, "192.0.2.1", 2);
		s.vlans = v;
		drops_unparsed("VLAN 0 x3+, other source: unknown, dropped", &s);
	}
	if (!set_entries(e, 0, 0))
		return;
	s = tcp("198.51.100.7", 1, "192.0.2.1", 2);
	s.vlans = 3;
	passes_as("VLAN 0 x3, empty list: passes, malformed", &s, true);
}

static void test_ipv4_fragments_and_options(void)
{
	static const char *const e[] = { "udp:198.51.100.7:5000,192.0.2.1:53", "198.51.100.9" };
	struct pkt_spec s;

	if (!set_entries(e, 2, 0))
		return;
	s = (struct pkt_spec){ .flow = flow("198.51.100.7", 5000, "192.0.2.1", 53, IPPROTO_UDP),
			       .fragment = true, .payload = 100 };
	drops("first fragment of a blocked flow", &s, SIEVE_XDP_FLOW);
	s.frag_offset = 100;
	passes("later fragment: no ports, the flow cannot match", &s);
	s.flow = flow("198.51.100.9", 5000, "192.0.2.1", 53, IPPROTO_UDP);
	drops("later fragment of a blocked source", &s, SIEVE_XDP_SRC);
	s = (struct pkt_spec){ .flow = flow("198.51.100.7", 5000, "192.0.2.1", 53, IPPROTO_UDP),
			       .ip_options = 12, .payload = 8 };
	drops("IPv4 options before the ports", &s, SIEVE_XDP_FLOW);
}

static void test_ipv6_extension_headers(void)
{
	static const char *const e[] = { "tcp:[2001:db8::7]:1000,[2001:db8::1]:80",
					 "2001:db8::9" };
	struct pkt_spec s;

	if (!set_entries(e, 2, 0))
		return;
	s = tcp("2001:db8::7", 1000, "2001:db8::1", 80);
	s.ext_headers = true;
	drops("hop-by-hop, dst opts, routing, then tcp", &s, SIEVE_XDP_FLOW);
	s.fragment = true;
	drops("three headers and a first fragment", &s, SIEVE_XDP_FLOW);
	s.frag_offset = 10;
	passes("a later fragment: no ports", &s);
	s.flow = flow("2001:db8::9", 1000, "2001:db8::1", 80, IPPROTO_TCP);
	drops("a later fragment of a blocked source", &s, SIEVE_XDP_SRC);
	s = tcp("2001:db8::7", 1000, "2001:db8::1", 80);
	s.fragment = true;
	drops("fragment header only", &s, SIEVE_XDP_FLOW);
}

/* ---- packets whose ports cannot be read (RFC 1858 and kin) ---- */

static bool drops_unparsed(const char *what, const struct pkt_spec *s)
{
	const int moved[] = { SIEVE_XDP_DROP_UNPARSED };

	return check_pkt(what, s, XDP_DROP, moved, 1);
}

/* Set by test_unreadable_ports: the list is fail-closed. */
static bool crafted_closed;

/*
 * Passed: counted malformed too when the packet is (a header not whole),
 * and then dropped as such when fail-closed.
 */
static bool passes_as(const char *what, const struct pkt_spec *s, bool malformed)
{
	const int moved[] = { SIEVE_XDP_PASSED, SIEVE_XDP_MALFORMED };
	const int closed[] = { SIEVE_XDP_DROP_MALFORMED, SIEVE_XDP_MALFORMED };

	if (malformed && crafted_closed)
		return check_pkt(what, s, XDP_DROP, closed, 2);
	return check_pkt(what, s, XDP_PASS, moved, malformed ? 2 : 1);
}

/* A first fragment (MF, offset 0) carrying @l4_bytes of TCP. */
static struct pkt_spec tiny(const char *src, const char *dst, uint16_t dport, int l4_bytes)
{
	struct pkt_spec s = tcp(src, 40000, dst, dport);

	s.fragment = true;
	s.l4_short = true;
	s.l4_bytes = l4_bytes;
	return s;
}

/*
 * The crafted packets of issue 20 (1, 2) against a service or flow entry
 * to 192.0.2.10:22 / [2001:db8::10]:22, from a source not on the list.
 * @ports_on: a port kind is in use for the family (else sources only).
 */
static void crafted(const char *setup, bool ports_on, int kind)
{
	static const char *const names[] = {
		"v4 first fragment, no L4 byte", "v4 first fragment, 2 bytes of TCP",
		"v4 first fragment, 40 bytes of options, 3 bytes of TCP",
		"v6 first fragment, 2 bytes of TCP",
		"v6 three headers and a first fragment, 3 bytes of TCP",
		"v6 nine destination options headers, then TCP",
		"v6 eight destination options headers and a fragment header, then TCP",
	};
	struct pkt_spec p[7];
	char what[160];
	int i;

	p[0] = tiny("198.51.100.20", "192.0.2.10", 22, 0);
	p[1] = tiny("198.51.100.20", "192.0.2.10", 22, 2);
	p[2] = tiny("198.51.100.20", "192.0.2.10", 22, 3);
	p[2].ip_options = 40;
	p[3] = tiny("2001:db8::20", "2001:db8::10", 22, 2);
	p[4] = tiny("2001:db8::20", "2001:db8::10", 22, 3);
	p[4].ext_headers = true;
	p[5] = tcp("2001:db8::20", 40000, "2001:db8::10", 22);
	p[5].dst_opts = 9;
	p[6] = p[5];
	p[6].dst_opts = 8;
	p[6].fragment = true;
	for (i = 0; i < 7; i++) {
		snprintf(what, sizeof(what), "%s: %s", setup, names[i]);
		if (ports_on)
			drops_unparsed(what, &p[i]);
		else
			passes_as(what, &p[i], true);
	}

	/* Ports there, header not whole: judged by the ports (the issue's SYN). */
	p[0] = tiny("198.51.100.20", "192.0.2.10", 22, 8);
	p[0].ip_options = 12;		/* past a NIC's minimum frame */
	p[1] = tiny("2001:db8::20", "2001:db8::10", 22, 4);
	p[1].ext_headers = true;
	for (i = 0; i < 2; i++) {
		snprintf(what, sizeof(what), "%s: %s first fragment, %d bytes of TCP", setup,
			 i ? "v6" : "v4", p[i].l4_bytes);
		if (ports_on)
			drops(what, &p[i], kind);
		else
			passes_as(what, &p[i], true);
		p[i].flow.dport = htons(23);
		snprintf(what, sizeof(what), "%s: %s first fragment, another port", setup,
			 i ? "v6" : "v4");
		passes_as(what, &p[i], true);
	}

	/* Eight headers are walked: judged by the ports. */
	p[0] = tcp("2001:db8::20", 40000, "2001:db8::10", 22);
	p[0].dst_opts = 8;
	snprintf(what, sizeof(what), "%s: v6 eight destination options headers", setup);
	if (ports_on)
		drops(what, &p[0], kind);
	else
		passes_as(what, &p[0], false);

	/* RFC 1858 3.2: TCP at offset 1; later fragments otherwise pass. */
	p[0] = tcp("198.51.100.20", 40000, "192.0.2.10", 22);
	p[0].fragment = true;
	p[0].frag_offset = 1;
	snprintf(what, sizeof(what), "%s: v4 TCP fragment at offset 1", setup);
	if (ports_on)
		drops_unparsed(what, &p[0]);
	else
		passes_as(what, &p[0], false);
	p[0].frag_offset = 2;
	snprintf(what, sizeof(what), "%s: v4 TCP fragment at offset 2", setup);
	passes_as(what, &p[0], false);
	p[0].flow.proto = IPPROTO_UDP;
	p[0].frag_offset = 1;
	snprintf(what, sizeof(what), "%s: v4 UDP fragment at offset 1", setup);
	passes_as(what, &p[0], false);
	p[0] = tiny("2001:db8::20", "2001:db8::10", 22, 0);
	p[0].frag_offset = 1;
	p[0].l4_short = false;
	snprintf(what, sizeof(what), "%s: v6 later fragment", setup);
	passes_as(what, &p[0], false);
}

static void test_unreadable_ports(void)
{
	static const char *const services[] = { "tcp:192.0.2.10:22", "tcp:[2001:db8::10]:22" };
	static const char *const flows[] = { "tcp:198.51.100.20:40000,192.0.2.10:22",
					     "tcp:[2001:db8::20]:40000,[2001:db8::10]:22" };
	static const char *const sources[] = { "198.51.100.99", "2001:db8::99" };
	struct pkt_spec s;
	int closed;

	/* Fail-closed changes nothing for them: unparsed, not malformed, drops. */
	for (closed = 0; closed <= 1; closed++) {
		uint32_t f = closed ? SIEVE_XDP_F_FAIL_CLOSED : 0;

		crafted_closed = closed;
		if (set_entries(services, 2, f))
			crafted(closed ? "service, fail-closed" : "service", true, SIEVE_XDP_SERVICE);
		if (set_entries(flows, 2, f))
			crafted(closed ? "flow, fail-closed" : "flow", true, SIEVE_XDP_FLOW);
		if (set_entries(sources, 2, f))
			crafted(closed ? "sources only, fail-closed" : "sources only", false, 0);
	}
	crafted_closed = false;
	/* A port kind of the other family does not count. */
	if (!set_entries(&services[1], 1, 0))
		return;
	s = tiny("198.51.100.20", "192.0.2.10", 22, 2);
	passes_as("v6 service only: v4 tiny fragment", &s, true);
	s = tcp("198.51.100.20", 40000, "192.0.2.10", 22);
	s.fragment = true;
	s.frag_offset = 1;
	passes_as("v6 service only: v4 TCP fragment at offset 1", &s, false);
	/* A blocked source is still dropped as a source. */
	if (!set_entries((const char *const[]){ "198.51.100.20", "tcp:192.0.2.10:22" }, 2, 0))
		return;
	s = tiny("198.51.100.20", "192.0.2.10", 22, 2);
	drops("blocked source, tiny fragment", &s, SIEVE_XDP_SRC);
}

/* ---- maps of an older program (upgrades, attach.c) ---- */

/* Pins the maps sxdp_open needs in @dir, sieve_cfg @cfg_extra bytes longer, stats of @nstats. */
static int pin_fake_instance(const char *dir, size_t cfg_extra, int nstats, int *stats_fd)
{
	static const char *const names[] = { SIEVE_XDP_MAP_ACTIVE, SIEVE_XDP_MAP_CFG,
					      SIEVE_XDP_MAP_BLOOM, SIEVE_XDP_MAP_EXACT,
					      SIEVE_XDP_MAP_STATS };
	LIBBPF_OPTS(bpf_map_create_opts, outer, .inner_map_fd = -1);
	int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL), fd, i, ret = 0;
	char path[256];

	outer.inner_map_fd = inner;
	for (i = 0; !ret && i < 5; i++) {
		if (i == 0)
			fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
		else if (i == 1)
			fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4,
					    sizeof(struct sieve_xdp_config) + cfg_extra, 2, NULL);
		else if (i < 4)
			fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL, 4, 4, 2, &outer);
		else
			fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, NULL, 4,
					    nstats * sizeof(struct sieve_xdp_count), 1, NULL);
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ret = fd < 0 || bpf_obj_pin(fd, path) ? -errno : 0;
		if (i == 4 && !ret)
			*stats_fd = fd;
		else if (fd >= 0)
			close(fd);
	}
	if (inner >= 0)
		close(inner);
	return ret;
}

static void unpin_fake_instance(const char *dir)
{
	static const char *const names[] = { SIEVE_XDP_MAP_ACTIVE, SIEVE_XDP_MAP_CFG,
					      SIEVE_XDP_MAP_BLOOM, SIEVE_XDP_MAP_EXACT,
					      SIEVE_XDP_MAP_STATS };
	char path[256];
	size_t i;

	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/*
 * An older program's maps: a config of another layout is refused
 * (-ESTALE: written with this layout, that program would misread it), and
 * counters of an older, shorter layout still read, the new ones 0.
 */
static void test_older_layout(void)
{
	int ncpus = libbpf_num_possible_cpus(), stats_fd = -1, old_n = SIEVE_XDP_DROP_UNPARSED, i;
	struct sieve_xdp_stats *per = calloc(ncpus, sizeof(*per)), *got = calloc(ncpus, sizeof(*per));
	struct sxdp_handle fake;
	size_t stride = old_n * sizeof(struct sieve_xdp_count);
	char dir[128], *raw = calloc(ncpus, stride);
	uint32_t zero = 0;
	int ret;

	snprintf(dir, sizeof(dir), "/sys/fs/bpf/sieve-xdp-test-%d", (int)getpid());
	if (!expect(per && got && raw && !mkdir(dir, 0700), "mkdir %s: %s", dir, strerror(errno)))
		goto out;
	ret = pin_fake_instance(dir, 8, old_n, &stats_fd);
	if (!expect(!ret, "pinning the maps: %s", strerror(-ret)))
		goto out_unpin;
	ret = sxdp_open_dir(dir, 0, "fake", &fake);
	expect(ret == -ESTALE, "a config of another layout: %d, want -ESTALE", ret);
	if (!ret)
		sxdp_close(&fake);
	/* Twelve counters a CPU, as 9fddb3c's program had: read, the thirteenth 0. */
	for (i = 0; i < ncpus; i++) {
		struct sieve_xdp_count *c = (struct sieve_xdp_count *)(raw + i * stride);
		int j;

		for (j = 0; j < old_n; j++)
			c[j] = (struct sieve_xdp_count){ 1000 * i + j, 2000 * i + j };
	}
	expect(!bpf_map_update_elem(stats_fd, &zero, raw, BPF_ANY), "writing the old counters");
	memset(got, 0xff, ncpus * sizeof(*got));
	ret = sxdp_read_stats_percpu(stats_fd, got, ncpus);
	expect(!ret, "reading the old counters: %s", strerror(-ret));
	for (i = 0; !ret && i < ncpus; i++) {
		expect(got[i].c[SIEVE_XDP_ALLOWED].packets == (uint64_t)(1000 * i + SIEVE_XDP_ALLOWED) &&
		       got[i].c[SIEVE_XDP_PASSED].bytes == (uint64_t)(2000 * i + SIEVE_XDP_PASSED),
		       "cpu %d: old counters misread", i);
		expect(!got[i].c[SIEVE_XDP_DROP_UNPARSED].packets &&
		       !got[i].c[SIEVE_XDP_DROP_UNPARSED].bytes, "cpu %d: a counter it lacks not 0", i);
	}
out_unpin:
	unpin_fake_instance(dir);
	if (stats_fd >= 0)
		close(stats_fd);
	stats_fd = -1;
	/* This layout: opened. */
	if (!mkdir(dir, 0700) && !pin_fake_instance(dir, 0, SIEVE_XDP_NR_COUNTERS, &stats_fd)) {
		ret = sxdp_open_dir(dir, 0, "fake", &fake);
		expect(!ret, "this layout: %s", strerror(-ret));
		if (!ret)
			sxdp_close(&fake);
	}
	unpin_fake_instance(dir);
out:
	if (stats_fd >= 0)
		close(stats_fd);
	free(per);
	free(got);
	free(raw);
}

/* ---- never lock the operator out ---- */

static void test_arp_and_nd_pass(void)
{
	static const char *const e[] = { "198.51.100.7", "2001:db8::/32" };
	static const int non_ip[] = { SIEVE_XDP_PASSED, SIEVE_XDP_NON_IP };
	struct sieve_xdp_stats before, after;
	uint8_t buf[PKT_MAX];
	struct pkt_spec s;
	size_t len;
	int t;

	if (!set_entries(e, 2, 0))
		return;
	len = pkt_build_arp(buf);
	before = stats_now();
	expect(run_pkt(buf, len) == XDP_PASS, "ARP from a blocked address passes");
	after = stats_now();
	expect(wrong_counter(&before, &after, len, non_ip, 2) < 0,
	       "ARP counted as one packet of %zu bytes, passed and non-IP", len);
	for (t = 133; t <= 137; t++) {
		s = (struct pkt_spec){ .flow = flow("2001:db8::7", 0, "ff02::1", 0, IPPROTO_ICMPV6),
				       .icmp_type = t };
		passes("neighbour discovery from a blocked prefix", &s);
	}
	s = (struct pkt_spec){ .flow = flow("2001:db8::7", 0, "2001:db8::1", 0, IPPROTO_ICMPV6),
			       .icmp_type = 128 };
	drops("ICMPv6 echo from a blocked prefix", &s, SIEVE_XDP_PREFIX);
}

/*
 * Every truncation of a valid packet: malformed, passed (or dropped when
 * fail-closed); but a blocked source whose address made it into the
 * truncated copy is still dropped as such, and one whose addresses made
 * it (from @l3_end) but not its ports (@ports_end) is dropped as
 * unparsed when a service or flow entry exists for its family (@ports_end
 * 0: none does).
 */
struct cut_spec {
	size_t addr_end;	/* blocked source: dropped as such from here */
	size_t l3_end;		/* addresses read from here */
	size_t ports_end;	/* ports read from here; 0: no port kind in use */
};

static void truncations(const char *name, const struct pkt_spec *s, const struct cut_spec *c,
			bool blocked, bool fail_closed)
{
	const int open_moved[] = { SIEVE_XDP_PASSED, SIEVE_XDP_MALFORMED };
	const int closed_moved[] = { SIEVE_XDP_DROP_MALFORMED, SIEVE_XDP_MALFORMED };
	const int src_moved[] = { SIEVE_XDP_DROP_SRC, SIEVE_XDP_BLOOM_HITS };
	const int unparsed_moved[] = { SIEVE_XDP_DROP_UNPARSED };
	struct sieve_xdp_stats before, after;
	uint8_t buf[PKT_MAX];
	size_t len = pkt_build(s, buf), cut;
	int verdict, bad = 0;

	for (cut = 14; cut < len; cut++) {
		bool by_src = blocked && cut >= c->addr_end;
		bool unparsed = !by_src && cut >= c->l3_end && cut < c->ports_end;
		const int *moved = by_src ? src_moved : unparsed ? unparsed_moved :
				   fail_closed ? closed_moved : open_moved;
		int want = by_src || unparsed || fail_closed ? XDP_DROP : XDP_PASS;

		before = stats_now();
		verdict = run_pkt(buf, cut);
		after = stats_now();
		/* Bytes: the truncated copy, what the program saw. */
		bad += wrong_counter(&before, &after, cut, moved, unparsed ? 1 : 2) >= 0;
		if (verdict != want && !bad++)
			printf("    at %zu of %zu bytes: verdict %d, want %d\n", cut, len, verdict, want);
	}
	expect(!bad, "%s: %d wrong verdicts or counters over %zu truncations", name, bad, len - 14);
	/* The whole packet is not malformed. */
	before = stats_now();
	run_pkt(buf, len);
	after = stats_now();
	expect(after.c[SIEVE_XDP_MALFORMED].packets == before.c[SIEVE_XDP_MALFORMED].packets,
	       "%s: the whole packet counted malformed", name);
}

static void test_truncation(void)
{
	static const char *const e[] = { "198.51.100.7", "2001:db8::7",
					 "tcp:192.0.2.1:80", "udp:[2001:db8::1]:53" };
	static const char *const sources[] = { "198.51.100.7", "2001:db8::7" };
	struct pkt_spec v4 = tcp("198.51.100.8", 1, "192.0.2.1", 81);
	struct pkt_spec v6 = { .flow = flow("2001:db8::8", 1, "2001:db8::1", 54, IPPROTO_UDP),
			       .ext_headers = true, .fragment = true, .vlans = 2, .payload = 16 };
	/*
	 * v4: one tag, 20 + 8 bytes of IPv4, ports at 18 + 28; v6: two tags,
	 * 40 bytes of IPv6 and 32 of extension headers, ports at 22 + 72.
	 */
	const struct cut_spec c4 = { 18 + 20, 18 + 20, 18 + 28 + 4 };
	const struct cut_spec c6 = { 22 + 40, 22 + 40, 22 + 72 + 4 };
	const struct cut_spec c4_src = { 18 + 20, 18 + 20, 0 }, c6_src = { 22 + 40, 22 + 40, 0 };
	int closed;

	v4.ip_options = 8;
	v4.vlans = 1;
	for (closed = 0; closed <= 1; closed++) {
		if (!set_entries(e, 4, closed ? SIEVE_XDP_F_FAIL_CLOSED : 0))
			return;
		truncations(closed ? "v4, fail-closed" : "v4, fail-open", &v4, &c4, false, closed);
		truncations(closed ? "v6, fail-closed" : "v6, fail-open", &v6, &c6, false, closed);
		/* Source entries alone: ports do not matter, a cut packet is malformed. */
		if (!set_entries(sources, 2, closed ? SIEVE_XDP_F_FAIL_CLOSED : 0))
			return;
		truncations(closed ? "v4, sources only, fail-closed" : "v4, sources only", &v4,
			    &c4_src, false, closed);
		truncations(closed ? "v6, sources only, fail-closed" : "v6, sources only", &v6,
			    &c6_src, false, closed);
	}
	if (!set_entries(e, 4, 0))
		return;
	/* Blocked sources: the address ends 18 + 16 bytes in (v4, one tag), 22 + 24 (v6, two). */
	v4.flow = flow("198.51.100.7", 1, "192.0.2.1", 81, IPPROTO_TCP);
	truncations("v4, blocked source", &v4, &c4, true, false);
	v6.flow = flow("2001:db8::7", 1, "2001:db8::1", 54, IPPROTO_UDP);
	truncations("v6, blocked source", &v6, &c6, true, false);
}

/* ---- byte counters ---- */

/* One packet of a byte-sum case: a frame of `frame` bytes, cut to `cut` if non-zero. */
struct sized_pkt {
	const char *src;
	const char *dst;
	uint16_t dport;
	uint8_t proto;
	size_t frame;
	size_t cut;
	int counters[2];	/* besides packets; -1: none */
};

/* Sends every packet; adds what each should move to `want`. */
static void send_sized(const struct sized_pkt *p, size_t n, struct sieve_xdp_stats *want)
{
	uint8_t buf[PKT_MAX];
	size_t i, len, hdrs;
	int j;

	for (i = 0; i < n; i++) {
		struct pkt_spec s = { .flow = flow(p[i].src, 40000, p[i].dst, p[i].dport,
						   p[i].proto) };

		/* Ethernet, IPv4, then TCP or UDP. */
		hdrs = 14 + 20 + (p[i].proto == IPPROTO_TCP ? 20 : 8);
		s.payload = p[i].frame - hdrs;
		expect(pkt_build(&s, buf) == p[i].frame, "built a %zu-byte frame", p[i].frame);
		len = p[i].cut ? p[i].cut : p[i].frame;
		run_pkt(buf, len);
		want->c[SIEVE_XDP_PACKETS].packets++;
		want->c[SIEVE_XDP_PACKETS].bytes += len;
		for (j = 0; j < 2; j++) {
			if (p[i].counters[j] < 0)
				continue;
			want->c[p[i].counters[j]].packets++;
			want->c[p[i].counters[j]].bytes += len;
		}
	}
}

/* Every counter moved by exactly `want`, packets and bytes. */
static void expect_moved(const struct sieve_xdp_stats *before, const struct sieve_xdp_stats *want)
{
	struct sieve_xdp_stats after = stats_now();
	int i;

	for (i = 0; i < SIEVE_XDP_NR_COUNTERS; i++) {
		uint64_t packets = after.c[i].packets - before->c[i].packets;
		uint64_t bytes = after.c[i].bytes - before->c[i].bytes;

		expect(packets == want->c[i].packets && bytes == want->c[i].bytes,
		       "counter %d: %llu packets, %llu bytes; want %llu, %llu", i,
		       (unsigned long long)packets, (unsigned long long)bytes,
		       (unsigned long long)want->c[i].packets, (unsigned long long)want->c[i].bytes);
	}
}

/* What a drop by an entry of `kind` moves. */
#define DROPPED(kind)	{ SIEVE_XDP_DROP_ ## kind, SIEVE_XDP_BLOOM_HITS }

/* Frames of known lengths through every verdict: exact sums per counter. */
static void test_byte_sums(void)
{
	static const char *const e[] = { "198.51.100.7", "203.0.113.0/24", "tcp:192.0.2.10:22",
					 "udp:198.51.100.8:40000,192.0.2.1:53" };
	static const struct sized_pkt open[] = {
		{ "198.51.100.7", "192.0.2.1", 80, IPPROTO_TCP, 60, 0, DROPPED(SRC) },
		{ "198.51.100.7", "192.0.2.1", 80, IPPROTO_TCP, 100, 0, DROPPED(SRC) },
		{ "198.51.100.7", "192.0.2.1", 80, IPPROTO_TCP, 1514, 0, DROPPED(SRC) },
		/* The IPv4 prefix table: exact, no filter asked, no filter hit. */
		{ "203.0.113.5", "192.0.2.1", 80, IPPROTO_UDP, 64, 0, { SIEVE_XDP_DROP_PREFIX, -1 } },
		{ "203.0.113.6", "192.0.2.1", 80, IPPROTO_TCP, 1000, 0,
		  { SIEVE_XDP_DROP_PREFIX, -1 } },
		{ "198.51.100.9", "192.0.2.10", 22, IPPROTO_TCP, 128, 0, DROPPED(SERVICE) },
		{ "198.51.100.8", "192.0.2.1", 53, IPPROTO_UDP, 90, 0, DROPPED(FLOW) },
		{ "198.51.100.9", "192.0.2.1", 80, IPPROTO_TCP, 60, 0, { SIEVE_XDP_PASSED, -1 } },
		{ "198.51.100.9", "192.0.2.1", 80, IPPROTO_TCP, 1514, 0, { SIEVE_XDP_PASSED, -1 } },
		/* Cut inside the TCP header: the counters see the 40 bytes that came. */
		{ "198.51.100.9", "192.0.2.1", 80, IPPROTO_TCP, 1514, 40,
		  { SIEVE_XDP_PASSED, SIEVE_XDP_MALFORMED } },
	};
	static const struct sized_pkt closed[] = {
		{ "198.51.100.9", "192.0.2.1", 80, IPPROTO_TCP, 1514, 40,
		  { SIEVE_XDP_DROP_MALFORMED, SIEVE_XDP_MALFORMED } },
		{ "198.51.100.9", "192.0.2.1", 80, IPPROTO_UDP, 700, 600,
		  { SIEVE_XDP_DROP_MALFORMED, SIEVE_XDP_MALFORMED } },
	};
	static const int non_ip[] = { SIEVE_XDP_PASSED, SIEVE_XDP_NON_IP };
	struct sieve_xdp_stats before, want = { 0 }, after;
	uint8_t buf[PKT_MAX];
	size_t len;

	if (!set_entries(e, 4, 0))
		return;
	before = stats_now();
	send_sized(open, sizeof(open) / sizeof(open[0]), &want);
	/* The issue's own example, spelt out: 60 + 100 + 1514. */
	expect(want.c[SIEVE_XDP_DROP_SRC].bytes == 1674, "the case's sources sum to 1674 bytes");
	expect_moved(&before, &want);
	len = pkt_build_arp(buf);
	before = stats_now();
	run_pkt(buf, len);
	after = stats_now();
	expect(wrong_counter(&before, &after, len, non_ip, 2) < 0, "ARP: %zu bytes non-IP", len);
	if (!set_entries(e, 4, SIEVE_XDP_F_FAIL_CLOSED))
		return;
	memset(&want, 0, sizeof(want));
	before = stats_now();
	send_sized(closed, sizeof(closed) / sizeof(closed[0]), &want);
	expect_moved(&before, &want);
}

/* ---- live changes and swaps ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	return splitmix64_next(&rng_state);
}

static struct sieve_xdp_key random_flow(void)
{
	struct sieve_xdp_key k = { .kind = SIEVE_XDP_FLOW, .family = SIEVE_XDP_V4,
				   .proto = IPPROTO_UDP };
	uint64_t r = rng(), q = rng();

	k.saddr[0] = (uint32_t)r;
	k.daddr[0] = (uint32_t)(r >> 32);
	k.sport = (uint16_t)q | 1;
	k.dport = (uint16_t)(q >> 16) | 1;
	return k;
}


/* The outer map of the live generation's filter. */
static int filter_outer_fd(const struct sieve_xdp_config *cfg)
{
	return cfg->flags & SIEVE_XDP_F_BLOCKED ? h.blocked_fd : h.bloom_fd;
}

static uint32_t live_bloom_id(void)
{
	struct sieve_xdp_config cfg;
	uint32_t gen, id = 0;

	if (!sxdp_read_config(&h, &cfg, &gen))
		bpf_map_lookup_elem(filter_outer_fd(&cfg), &gen, &id);
	return id;
}

static void test_live_add_and_remove(void)
{
	static const char *const first[] = { "198.51.100.7" };
	static const char *const more[] = { "tcp:192.0.2.10:22", "203.0.113.0/24" };
	struct pkt_spec svc = tcp("198.51.100.1", 5, "192.0.2.10", 22);
	struct pkt_spec src = tcp("198.51.100.7", 5, "192.0.2.10", 80);
	struct pkt_spec pfx = tcp("203.0.113.5", 5, "192.0.2.10", 80);
	struct sxdp_keys l = { 0 }, add = { 0 }, del = { 0 };
	struct sieve_xdp_config cfg;
	uint32_t id;
	size_t missing;

	list_of(&l, first, 1);
	if (!set_list(&l, 0, 1000))
		goto out;
	passes("service not yet blocked", &svc);
	id = live_bloom_id();
	list_of(&add, more, 2);
	expect(add_entries(&l, &add) == 0, "a live add rebuilt");
	expect(live_bloom_id() == id, "a live add built new maps");
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.entries == 3, "entries after the add");
	drops("service blocked after a live add (a new kind)", &svc, SIEVE_XDP_SERVICE);
	drops("prefix blocked after a live add (a new length)", &pfx, SIEVE_XDP_PREFIX);
	drops("source still blocked", &src, SIEVE_XDP_SRC);
	list_of(&del, first, 1);
	expect(!remove_entries(&l, &del, &missing) && !missing, "remove");
	expect(live_bloom_id() != id, "a removal kept the old maps");
	passes("source unblocked", &src);
	drops("service still blocked", &svc, SIEVE_XDP_SERVICE);
	expect(!remove_entries(&l, &del, &missing) && missing == 1, "removing it again: missing");
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
	sxdp_keys_free(&del);
}

/* A test's store, closed, and its temporary folder removed. */
static void temp_store_close(struct sxdp_store *s, const char *dir)
{
	char cmd[128];

	sxdp_store_close(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		expect(false, "%s", cmd);
}

/*
 * A change killed between its commit and its maps: the store is ahead of
 * the maps. sxdp_iface_sync rebuilds from the store; maps in step are
 * left alone. The store's list is the truth, whatever the maps held.
 */
static void test_sync_after_cut_short(void)
{
	static const char *const before[] = { "198.51.100.7" };
	static const char *const after[] = { "203.0.113.9" };
	struct pkt_spec old = tcp("198.51.100.7", 5, "192.0.2.10", 80);
	struct pkt_spec new = tcp("203.0.113.9", 5, "192.0.2.10", 80);
	struct sxdp_store_attrs a = { .origin = "test", .now = 1 };
	char dir[] = "/tmp/sieve-xdp-store-XXXXXX", err[512] = "";
	struct sxdp_keys l = { 0 }, ahead = { 0 };
	struct sieve_xdp_config cfg;
	struct sxdp_store *s = NULL;
	uint64_t version;
	bool rebuilt;
	uint32_t gen;

	list_of(&l, before, 1);
	list_of(&ahead, after, 1);
	if (!expect(mkdtemp(dir) != NULL, "mkdtemp") ||
	    !expect(!sxdp_store_open(dir, &s, err, sizeof(err)), "store: %s", err))
		goto out;
	expect(!sxdp_store_add(s, "t", l.keys, l.n, &a, NULL, err, sizeof(err)), "add: %s", err);
	if (!expect(!sxdp_build_from_store(&h, s, "t", &(struct sxdp_iface_params){
			.fpp_ppb = 1000, .capacity = 1024 }, &version, err, sizeof(err)),
		    "build: %s", err) || !expect(!sxdp_read_config(&h, &cfg, NULL), "config"))
		goto out;
	expect(cfg.store_version == version && version == 1, "maps hold version %llu, want 1",
	       (unsigned long long)cfg.store_version);
	gen = cfg.gen_seq;
	expect(!sxdp_iface_sync(&h, s, "t", &rebuilt, err, sizeof(err)) && !rebuilt,
	       "sync in step rebuilt: %s", err);
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.gen_seq == gen,
	       "maps in step with the store were rebuilt");
	/* The store moves on, the maps do not: a command killed after its commit. */
	expect(!sxdp_store_replace_origin(s, "t", ahead.keys, ahead.n, &a, NULL, NULL, err,
					  sizeof(err)), "replace: %s", err);
	passes("the store's entry before the sync", &new);
	expect(!sxdp_iface_sync(&h, s, "t", &rebuilt, err, sizeof(err)) && rebuilt,
	       "sync behind: %s", err);
	drops("the store's entry after the sync", &new, SIEVE_XDP_SRC);
	passes("the entry the store dropped", &old);
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.entries == 1 && cfg.store_version == 2,
	       "after the sync: %llu entries at version %llu, want 1 at 2",
	       (unsigned long long)cfg.entries, (unsigned long long)cfg.store_version);
out:
	temp_store_close(s, dir);
	sxdp_keys_free(&l);
	sxdp_keys_free(&ahead);
}

/* Adding past the planned capacity builds a bigger generation. */
static void test_growth_past_capacity(void)
{
	struct sxdp_keys l = { 0 }, add = { 0 };
	struct sieve_xdp_config cfg;
	struct pkt_spec s = { .payload = 0 };
	uint8_t buf[PKT_MAX];
	size_t i, passed = 0;

	if (!set_list(&l, 0, 1000) || !expect(!sxdp_read_config(&h, &cfg, NULL), "config"))
		goto out;
	for (i = 0; i < cfg.capacity + 100; i++) {
		s.flow = random_flow();
		sxdp_keys_add(&add, &s.flow);
	}
	expect(add_entries(&l, &add) == 1, "an add past the capacity was live");
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.capacity >= add.n && cfg.entries == add.n,
	       "capacity %llu for %zu entries", (unsigned long long)cfg.capacity, add.n);
	for (i = 0; i < add.n; i++) {
		s.flow = add.keys[i];
		passed += run_pkt(buf, pkt_build(&s, buf)) != XDP_DROP;
	}
	expect(!passed, "%zu of %zu blocked flows passed after growing", passed, add.n);
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
}

struct swap_race {
	volatile bool stop;
	uint64_t runs, blocked_passed, allowed_dropped, errors;
};

/* Runs a blocked and an allowed packet in a loop while generations swap. */
static void *race_traffic(void *arg)
{
	struct swap_race *r = arg;
	struct pkt_spec blocked = tcp("198.51.100.7", 1, "192.0.2.1", 2);
	struct pkt_spec allowed = tcp("198.51.100.200", 1, "192.0.2.1", 2);
	uint8_t b[PKT_MAX], a[PKT_MAX];
	size_t bl = pkt_build(&blocked, b), al = pkt_build(&allowed, a);

	while (!r->stop) {
		int vb = run_pkt(b, bl), va = run_pkt(a, al);

		r->blocked_passed += vb == XDP_PASS;
		r->allowed_dropped += va == XDP_DROP;
		r->errors += vb < 0 || va < 0;
		r->runs++;
	}
	return NULL;
}

static void test_swap_under_traffic(void)
{
	static const char *const a[] = { "198.51.100.7", "203.0.113.0/24" };
	static const char *const b[] = { "198.51.100.0/25", "tcp:192.0.2.1:3" };
	struct sxdp_keys la = { 0 }, lb = { 0 };
	struct swap_race r = { 0 };
	pthread_t t;
	int i;

	/* Both lists block 198.51.100.7 (by source, then by prefix); neither
	 * blocks 198.51.100.200. Swaps alternate lists, modes and backends. */
	list_of(&la, a, 2);
	list_of(&lb, b, 2);
	if (!set_list(&la, SIEVE_XDP_F_EXACT, 1000))
		goto out;
	pthread_create(&t, NULL, race_traffic, &r);
	for (i = 0; i < 200; i++)
		set_list(i % 2 ? &la : &lb, (i % 3 ? SIEVE_XDP_F_EXACT : 0) |
			 (i % 5 < 2 ? SIEVE_XDP_F_BLOCKED : 0), 1000);
	r.stop = true;
	pthread_join(t, NULL);
	expect(r.runs > 0, "traffic ran during the swaps");
	expect(r.blocked_passed == 0, "%llu of %llu blocked packets passed during swaps",
	       (unsigned long long)r.blocked_passed, (unsigned long long)r.runs);
	expect(r.allowed_dropped == 0, "%llu of %llu allowed packets dropped during swaps",
	       (unsigned long long)r.allowed_dropped, (unsigned long long)r.runs);
	expect(r.errors == 0, "test runs failed");
	printf("    %llu packet pairs during 200 swaps\n", (unsigned long long)r.runs);
out:
	sxdp_keys_free(&la);
	sxdp_keys_free(&lb);
}

/* ---- monitor mode and drops per origin ---- */

static bool set_list_probes(const struct sxdp_keys *l, unsigned int max_probes);

/* Dry run on or off, live: the same generation before and after. */
static bool set_dry_run(bool on)
{
	struct sieve_xdp_config before, after;
	uint32_t gen_before, gen_after;

	if (!expect(!sxdp_read_config(&h, &before, &gen_before), "config") ||
	    !expect(!sxdp_set_dry_run(&h, on), "dry run %s", on ? "on" : "off") ||
	    !expect(!sxdp_read_config(&h, &after, &gen_after), "config"))
		return false;
	return expect(gen_after == gen_before && after.gen_seq == before.gen_seq &&
		      !!(after.flags & SIEVE_XDP_F_DRY_RUN) == on &&
		      (after.flags & ~SIEVE_XDP_F_DRY_RUN) == (before.flags & ~SIEVE_XDP_F_DRY_RUN),
		      "the switch rebuilt or changed another flag (gen %u -> %u, seq %u -> %u)",
		      gen_before, gen_after, before.gen_seq, after.gen_seq);
}

/* What drops() checks, but the packet passes, counted DRY_RUN_PASSED too. */
static bool dry_drops(const char *what, const struct pkt_spec *s, int kind)
{
	const int moved[] = { SIEVE_XDP_DROP_SRC + kind, SIEVE_XDP_DRY_RUN_PASSED,
			      SIEVE_XDP_BLOOM_HITS };

	return check_pkt(what, s, XDP_PASS, moved, table_answers(s, kind) ? 2 : 3);
}

struct judged {
	const char *what;
	struct pkt_spec s;
	int kind;
};

static void dry_run_with(uint32_t flags)
{
	static const char *const e[] = { "198.51.100.7", "203.0.113.0/24", "2001:db8:aa::/48",
					 "tcp:192.0.2.10:22" };
	const struct judged j[] = {
		{ "source", tcp("198.51.100.7", 1, "192.0.2.1", 2), SIEVE_XDP_SRC },
		{ "v4 prefix", tcp("203.0.113.9", 1, "192.0.2.1", 2), SIEVE_XDP_PREFIX },
		{ "v6 prefix", tcp("2001:db8:aa::9", 1, "2001:db8::1", 2), SIEVE_XDP_PREFIX },
		{ "service", tcp("198.51.100.1", 1, "192.0.2.10", 22), SIEVE_XDP_SERVICE },
	};
	const int unparsed_dry[] = { SIEVE_XDP_DROP_UNPARSED, SIEVE_XDP_DRY_RUN_PASSED };
	struct pkt_spec other = tcp("198.51.100.8", 1, "192.0.2.1", 2);
	struct pkt_spec frag = tiny("198.51.100.1", "192.0.2.10", 22, 2);
	size_t i;

	if (!set_entries(e, 4, flags))
		return;
	for (i = 0; i < sizeof(j) / sizeof(j[0]); i++)
		drops(j[i].what, &j[i].s, j[i].kind);
	drops_unparsed("tiny fragment, enforcing", &frag);
	if (!set_dry_run(true))
		goto out;
	for (i = 0; i < sizeof(j) / sizeof(j[0]); i++)
		dry_drops(j[i].what, &j[i].s, j[i].kind);
	check_pkt("tiny fragment, dry run", &frag, XDP_PASS, unparsed_dry, 2);
	passes("a source not on the list, dry run", &other);
	set_dry_run(true);	/* again: nothing changes */
	if (!set_dry_run(false))
		goto out;
	for (i = 0; i < sizeof(j) / sizeof(j[0]); i++)
		drops(j[i].what, &j[i].s, j[i].kind);
	passes("a source not on the list, enforcing", &other);
out:
	sxdp_set_dry_run(&h, false);
}

/* What enforcing drops, a dry run passes, counted the same; switched live. */
static void test_dry_run(void)
{
	dry_run_with(0);
	dry_run_with(SIEVE_XDP_F_EXACT);
}

/* An older program's instance (no sieve_origins): the flag is never set. */
static void test_dry_run_older_program(void)
{
	struct sieve_xdp_config cfg;
	int fd = h.origins_fd;

	if (!set_entries((const char *const[]){ "198.51.100.7" }, 1, 0))
		return;
	h.origins_fd = -1;
	expect(sxdp_set_dry_run(&h, true) == -EOPNOTSUPP, "dry run set without sieve_origins");
	h.origins_fd = fd;
	expect(!sxdp_read_config(&h, &cfg, NULL) && !(cfg.flags & SIEVE_XDP_F_DRY_RUN),
	       "the flag was written");
}

static bool origin_drops(struct sieve_xdp_count *c)
{
	return expect(!sxdp_read_origin_drops(&h, c), "reading sieve_origins");
}

/*
 * One packet of @s: dropped (as @kind), and counted in origin slot @slot
 * alone (@slot -1: in none).
 */
static void origin_counts(const char *what, const struct pkt_spec *s, int kind, int slot)
{
	struct sieve_xdp_count before[SIEVE_XDP_ORIGIN_SLOTS], after[SIEVE_XDP_ORIGIN_SLOTS];
	uint8_t buf[PKT_MAX];
	size_t len = pkt_build(s, buf);
	int i;

	if (!origin_drops(before) || !drops(what, s, kind) || !origin_drops(after))
		return;
	for (i = 0; i < SIEVE_XDP_ORIGIN_SLOTS; i++) {
		uint64_t want = i == slot;

		expect(after[i].packets - before[i].packets == want &&
		       after[i].bytes - before[i].bytes == want * len,
		       "%s: origin slot %d moved by %llu packets (want %llu)", what, i,
		       (unsigned long long)(after[i].packets - before[i].packets),
		       (unsigned long long)want);
	}
}

static void origins_of(struct sxdp_origins *o, const char *const *entries, const uint32_t *ids,
		       size_t n)
{
	struct sieve_xdp_key key;
	const char *why;
	size_t i;

	for (i = 0; i < n; i++)
		if (expect(!sxdp_parse_entry(entries[i], &key, &why), "parse %s", entries[i]))
			sxdp_origins_add(o, &key, ids[i]);
	sxdp_origins_sort(o);
}

/* Exact mode: each drop counted for the origin of the key that matched. */
static void test_origin_counters(void)
{
	/* Two IPv6 lengths, one probe: the /44 is expanded to /48s. */
	static const char *const e[] = { "198.51.100.7", "2001:db8:aa::/48", "2001:db8:b0::/44",
					 "tcp:192.0.2.10:22", "203.0.113.0/24" };
	static const uint32_t ids[] = { 3, 5, 6, 300, 7 };
	static const char *const more[] = { "198.51.100.9" };
	static const uint32_t more_ids[] = { 9 };
	struct pkt_spec src = tcp("198.51.100.7", 1, "192.0.2.1", 2);
	struct pkt_spec p48 = tcp("2001:db8:aa::1", 1, "2001:db8::1", 2);
	struct pkt_spec p44 = tcp("2001:db8:bf::1", 1, "2001:db8::1", 2);
	struct pkt_spec svc = tcp("198.51.100.1", 1, "192.0.2.10", 22);
	struct pkt_spec v4p = tcp("203.0.113.1", 1, "192.0.2.1", 2);
	struct pkt_spec added = tcp("198.51.100.9", 1, "192.0.2.1", 2);
	struct sxdp_origins o = { 0 }, o_more = { 0 };
	struct sxdp_keys l = { 0 }, add = { 0 };

	list_of(&l, e, 5);
	origins_of(&o, e, ids, 5);
	h.origins = &o;
	if (!set_list_probes(&l, 1))
		goto out;
	origin_counts("source", &src, SIEVE_XDP_SRC, 3);
	origin_counts("v6 prefix at its length", &p48, SIEVE_XDP_PREFIX, 5);
	origin_counts("v6 prefix expanded", &p44, SIEVE_XDP_PREFIX, 6);
	origin_counts("service, an id past the slots", &svc, SIEVE_XDP_SERVICE,
		      SIEVE_XDP_ORIGIN_OTHER);
	/* The IPv4 prefix table holds no origins. */
	origin_counts("v4 prefix in the table", &v4p, SIEVE_XDP_PREFIX, SIEVE_XDP_ORIGIN_NONE);
	origins_of(&o_more, more, more_ids, 1);
	h.origins = &o_more;
	list_of(&add, more, 1);
	expect(add_entries(&l, &add) == 0, "the live add rebuilt");
	origin_counts("a live add", &added, SIEVE_XDP_SRC, 9);
	/* Values without origins, as an older sieve built them: counted as none. */
	h.origins = NULL;
	if (set_list(&l, SIEVE_XDP_F_EXACT, 1000))
		origin_counts("a generation without origins", &src, SIEVE_XDP_SRC,
			      SIEVE_XDP_ORIGIN_NONE);
	/* Bloom-only: the filter knows no origin, and nothing is counted. */
	h.origins = &o;
	if (set_list(&l, 0, 1000))
		origin_counts("bloom-only", &src, SIEVE_XDP_SRC, -1);
out:
	h.origins = NULL;
	sxdp_origins_free(&o);
	sxdp_origins_free(&o_more);
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
}

/* ---- false positives ---- */

/*
 * Runs n flows of list l (blocked) or n random flows not on it; the drops,
 * and their bytes in *bytes if given.
 */
static uint64_t count_drops(const struct sxdp_keys *l, size_t n, bool on_list, uint64_t *bytes)
{
	uint64_t dropped = 0;
	uint8_t buf[PKT_MAX];
	size_t i, len;

	for (i = 0; i < n; i++) {
		struct pkt_spec s = { .payload = 0 };

		s.flow = on_list ? l->keys[i] : random_flow();
		if (!on_list && sxdp_keys_find(l, &s.flow)) {
			i--;
			continue;
		}
		len = pkt_build(&s, buf);
		if (run_pkt(buf, len) == XDP_DROP) {
			dropped++;
			if (bytes)
				*bytes += len;
		}
	}
	return dropped;
}

/* The live generation again, with other flags, on the very same maps. */
static bool reflag(uint32_t flags)
{
	struct sieve_xdp_config cfg;
	uint32_t gen, bid, eid;
	int bfd, efd;
	bool ok;

	if (!expect(!sxdp_read_config(&h, &cfg, &gen), "config") ||
	    !expect(!bpf_map_lookup_elem(filter_outer_fd(&cfg), &gen, &bid) &&
		    !bpf_map_lookup_elem(h.exact_fd, &gen, &eid), "live map ids"))
		return false;
	bfd = bpf_map_get_fd_by_id(bid);
	efd = bpf_map_get_fd_by_id(eid);
	cfg.flags = flags | (cfg.flags & SIEVE_XDP_F_BLOCKED);
	ok = expect(bfd >= 0 && efd >= 0 && !sxdp_swap(&h, &cfg, bfd, efd), "swap flags");
	close(bfd);
	close(efd);
	return ok;
}

#define FP_ENTRIES	100000
#define FP_QUERIES	1000000

static void test_false_positives(void)
{
	struct sieve_xdp_stats before, after;
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_config cfg;
	uint64_t dropped, dropped_bytes = 0, nbits, fp_caught, fp_bytes, innocent, queries_seed;
	double rate, sigma, lo, hi;
	size_t i;

	for (i = 0; i < FP_ENTRIES; i++) {
		struct sieve_xdp_key k = random_flow();

		sxdp_keys_add(&l, &k);
	}
	sxdp_keys_sort(&l);
	/* 1%: enough false positives to measure the rate within ~3%. Built
	 * with the exact map, then run bloom-only and exact on the same maps. */
	if (!set_list(&l, SIEVE_XDP_F_EXACT, 10000000) || !reflag(0) ||
	    !expect(!sxdp_read_config(&h, &cfg, NULL), "config"))
		goto out;
	nbits = sxdp_kernel_bloom_bits(cfg.bloom.max_entries, cfg.bloom.nr_hashes);
	rate = sxdp_bloom_fpr(nbits, cfg.bloom.nr_hashes, l.n);
	expect(count_drops(&l, l.n, true, NULL) == l.n, "a blocked flow passed (bloom-only)");
	queries_seed = rng_state;
	dropped = count_drops(&l, FP_QUERIES, false, &dropped_bytes);
	/* A 99.9% interval of a binomial: +-3.29 sigma. */
	sigma = sqrt(FP_QUERIES * rate * (1 - rate));
	lo = FP_QUERIES * rate - 3.29 * sigma;
	hi = FP_QUERIES * rate + 3.29 * sigma;
	printf("    bloom-only: %zu entries, 2^%.0f bits, %u hashes: %llu of %u innocent flows "
	       "dropped (planned %.0f, 99.9%% interval %.0f-%.0f)\n", l.n, log2((double)nbits),
	       cfg.bloom.nr_hashes, (unsigned long long)dropped, FP_QUERIES, FP_QUERIES * rate, lo, hi);
	expect(dropped >= lo && dropped <= hi, "false-positive count outside the 99.9%% interval");
	if (!reflag(SIEVE_XDP_F_EXACT))
		goto out;
	expect(count_drops(&l, l.n, true, NULL) == l.n, "a blocked flow passed (exact)");
	rng_state = queries_seed;	/* the same innocent flows again */
	before = stats_now();
	innocent = count_drops(&l, FP_QUERIES, false, NULL);
	after = stats_now();
	expect(innocent == 0, "exact mode dropped %llu innocent flows", (unsigned long long)innocent);
	fp_caught = after.c[SIEVE_XDP_FALSE_POSITIVES].packets -
		    before.c[SIEVE_XDP_FALSE_POSITIVES].packets;
	fp_bytes = after.c[SIEVE_XDP_FALSE_POSITIVES].bytes - before.c[SIEVE_XDP_FALSE_POSITIVES].bytes;
	printf("    exact, same maps and flows: %llu dropped, %llu false positives caught\n",
	       (unsigned long long)innocent, (unsigned long long)fp_caught);
	expect(fp_caught == dropped, "caught %llu false positives, bloom-only dropped %llu",
	       (unsigned long long)fp_caught, (unsigned long long)dropped);
	/* v4 and v6 flows differ in length: the very same packets, not just as many. */
	expect(fp_bytes == dropped_bytes, "false positives caught: %llu bytes, bloom-only dropped %llu",
	       (unsigned long long)fp_bytes, (unsigned long long)dropped_bytes);
out:
	sxdp_keys_free(&l);
}

/* ---- the backends' tables (userspace/xdp/backend*.c) ---- */

/*
 * Every backend's table is complete (only remove_live may be NULL: the
 * caller rebuilds), its name and flag select it and nothing else, and a
 * backend that cannot plan says -EOPNOTSUPP rather than planning wrong.
 */
static void test_backend_ops_tables(void)
{
	static const struct { const char *name; uint32_t flags; const struct sxdp_backend_ops *ops; }
	want[] = {
		{ "bloom-map", 0, &sxdp_bloom_ops },
		{ "bloom-map", SIEVE_XDP_F_EXACT | SIEVE_XDP_F_FAIL_CLOSED, &sxdp_bloom_ops },
		{ "blocked", SIEVE_XDP_F_BLOCKED, &sxdp_blocked_ops },
		{ "blocked", SIEVE_XDP_F_BLOCKED | SIEVE_XDP_F_EXACT, &sxdp_blocked_ops },
		{ "filter", SIEVE_XDP_F_FILTER, &sxdp_filter_ops },
	};
	struct sxdp_plan plan;
	size_t i, nr = 0;

	for (i = 0; sxdp_backends[i]; i++, nr++) {
		const struct sxdp_backend_ops *o = sxdp_backends[i];

		expect(o->name && o->limit && o->plan && o->create && o->fill && o->build &&
		       o->add_live && o->fpr && o->memory && o->describe && o->outer_fd,
		       "backend %zu (%s): an operation is missing", i, o->name ? o->name : "?");
		expect(sxdp_backend_by_name(o->name) == o, "%s: not found by its name", o->name);
		expect(sxdp_backend_of(o->cfg_flag) == o, "%s: not selected by its flag", o->name);
		expect(!strcmp(sxdp_backend_name(o->cfg_flag), o->name), "%s: named %s elsewhere",
		       o->name, sxdp_backend_name(o->cfg_flag));
	}
	expect(nr == 3, "%zu backends", nr);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		expect(sxdp_backend_of(want[i].flags) == want[i].ops &&
		       sxdp_backend_by_name(want[i].name) == want[i].ops,
		       "flags %#x / %s: the wrong table", want[i].flags, want[i].name);
	expect(!sxdp_backend_by_name("bloom") && !sxdp_backend_by_name(""), "a bad name selects");
	/* The Bloom filters cannot delete: their callers rebuild. The cuckoo filter can. */
	expect(!sxdp_bloom_ops.remove_live && !sxdp_blocked_ops.remove_live &&
	       sxdp_filter_ops.remove_live, "remove_live");
	expect(sxdp_filter_ops.plan(1000, 1000, &plan) == -EOPNOTSUPP, "the filter plans");
	/* The same plans as the flag-driven sizing of before. */
	expect(!sxdp_bloom_ops.plan(100000, 1000000, &plan) && !plan.blocked &&
	       !sxdp_blocked_ops.plan(100000, 1000000, &plan) && plan.blocked, "the plans");
	/* The outer maps: the program's own, none for the filter. */
	expect(sxdp_bloom_ops.outer_fd(&h) == h.bloom_fd &&
	       sxdp_blocked_ops.outer_fd(&h) == h.blocked_fd && sxdp_filter_ops.outer_fd(&h) < 0,
	       "the outer maps");
}

/*
 * The config's layout: one written before the field (0 there, the same
 * bytes) is read as this layout, and the next write stamps it; one of a
 * newer layout is refused (-ESTALE), not misread.
 */
/*
 * An older sieve's config (0.4.0: 440 bytes, @layout in its padding) with
 * non-zero bytes there: read as layout 0 through a read-only handle, its
 * fields as written, the removals' bookkeeping it lacks 0.
 */
static void test_older_config_padding(void)
{
	const size_t old_size = offsetof(struct sieve_xdp_config, removed);
	struct sieve_xdp_config cfg = { .flags = SIEVE_XDP_F_EXACT, .entries = 7,
					.fpp_ppb = 1000, .gen_seq = 3 }, got;
	struct sxdp_handle fake = { .stale = true, .removed_fd = -1 };
	unsigned char raw[sizeof(cfg)];
	uint32_t zero = 0;
	int ret;

	fake.active_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
	fake.cfg_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, old_size, 2, NULL);
	if (!expect(fake.active_fd >= 0 && fake.cfg_fd >= 0, "the maps: %s", strerror(errno)))
		goto out;
	memcpy(raw, &cfg, old_size);
	memset(raw + offsetof(struct sieve_xdp_config, layout), 0xa5, sizeof(cfg.layout));
	expect(!bpf_map_update_elem(fake.cfg_fd, &zero, raw, BPF_ANY), "writing the old config");
	ret = sxdp_read_config(&fake, &got, NULL);
	expect(!ret, "an old config with bytes in its padding: %s", strerror(-ret));
	expect(!ret && got.layout == SIEVE_XDP_LAYOUT && got.entries == 7 && got.fpp_ppb == 1000 &&
	       got.gen_seq == 3 && got.flags == SIEVE_XDP_F_EXACT && !got.removed,
	       "the old config misread");
out:
	if (fake.active_fd >= 0)
		close(fake.active_fd);
	if (fake.cfg_fd >= 0)
		close(fake.cfg_fd);
}

static void test_config_layout(void)
{
	static const char *const entries[] = { "192.0.2.1", "198.51.100.0/24" };
	struct sieve_xdp_config cfg, raw, got;
	struct sxdp_keys l = { 0 };
	uint32_t live;

	list_of(&l, entries, 2);
	if (!set_list(&l, 0, 1000000) || !expect(!sxdp_read_config(&h, &cfg, &live), "config"))
		goto out;
	expect(cfg.layout == SIEVE_XDP_LAYOUT, "layout %u", cfg.layout);
	raw = cfg;
	raw.layout = 0;
	expect(!bpf_map_update_elem(h.cfg_fd, &live, &raw, BPF_EXIST), "writing layout 0");
	expect(!sxdp_read_config(&h, &got, NULL) && got.layout == SIEVE_XDP_LAYOUT &&
	       got.bloom.max_entries == cfg.bloom.max_entries &&
	       got.bloom.nr_hashes == cfg.bloom.nr_hashes, "layout 0 not read as this one");
	/* The program reads the same bytes whatever the layout field says. */
	{
		struct pkt_spec a = tcp("192.0.2.1", 1000, "10.0.0.1", 80);
		struct pkt_spec b = tcp("198.51.100.7", 1000, "10.0.0.1", 80);
		struct pkt_spec c = tcp("192.0.2.2", 1000, "10.0.0.1", 80);

		drops("layout 0: a source", &a, 0);
		drops("layout 0: a prefix", &b, 1);
		passes("layout 0: another source", &c);
	}
	expect(!sxdp_set_version(&h, cfg.store_version + 1), "a write");
	expect(!bpf_map_lookup_elem(h.cfg_fd, &live, &raw) && raw.layout == SIEVE_XDP_LAYOUT,
	       "a write left layout %u", raw.layout);
	raw.layout = SIEVE_XDP_LAYOUT + 1;
	expect(!bpf_map_update_elem(h.cfg_fd, &live, &raw, BPF_EXIST), "writing a newer layout");
	expect(sxdp_read_config(&h, &got, NULL) == -ESTALE, "a newer layout read");
	raw.layout = SIEVE_XDP_LAYOUT;
	expect(!bpf_map_update_elem(h.cfg_fd, &live, &raw, BPF_EXIST), "restoring the layout");
out:
	sxdp_keys_free(&l);
}

/* ---- the bloom map's fast fill (userspace/xdp/bloom_fill.c) ---- */

#define FILL_KEYS	150000	/* more than two of the fill program's batches */
#define FILL_QUERIES	300000

/* A bloom map as the loader makes one for @keys keys at 1%; @flags: BPF_F_ZERO_SEED or 0. */
static int fill_map(size_t keys, uint32_t flags, struct sxdp_plan *plan)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	int fd;

	if (!expect(!sxdp_plan(keys, 10000000, plan), "a plan for %zu keys", keys))
		return -1;
	o.map_extra = plan->nr_hashes;
	fd = bpf_map_create(BPF_MAP_TYPE_BLOOM_FILTER, "fill_test", 0, sizeof(uint64_t),
			    plan->max_entries, &o);
	expect(fd >= 0, "a bloom map: %s", strerror(errno));
	return fd;
}

/* Fills @fd with @l in @mode; the mode that did it, or -1. */
static int fill_with(int fd, const struct sxdp_keys *l, enum sxdp_fill_mode mode)
{
	enum sxdp_fill_mode used;
	int err;

	sxdp_fill_mode = mode;
	err = sxdp_bloom_fill(fd, test_secret, l->keys, l->n, &used);
	sxdp_fill_mode = SXDP_FILL_AUTO;
	return expect(!err, "fill (mode %d): %s", mode, strerror(-err)) ? (int)used : -1;
}

static bool bloom_has(int fd, uint64_t digest)
{
	return !bpf_map_lookup_elem(fd, NULL, &digest);
}

/*
 * The fast fill's map answers exactly as the per-element fill's: with a
 * zero seed both maps hash alike, so every query gets the same answer, and
 * every key filled is present. With the kernel's random seed (as the
 * loader creates them) the fast map's false positives stay within the
 * 99.9% interval of the plan.
 */
static void test_bloom_fast_fill(void)
{
	int fast_fd = -1, slow_fd = -1, seeded_fd = -1, mode;
	uint64_t differ = 0, missing = 0, fp = 0, q;
	struct sxdp_keys l = { 0 };
	struct sxdp_plan plan;
	double rate, sigma;
	size_t i;

	rng_state = 21;
	for (i = 0; i < FILL_KEYS; i++) {
		struct sieve_xdp_key k = random_flow();

		sxdp_keys_add(&l, &k);
	}
	fast_fd = fill_map(l.n, BPF_F_ZERO_SEED, &plan);
	slow_fd = fill_map(l.n, BPF_F_ZERO_SEED, &plan);
	seeded_fd = fill_map(l.n, 0, &plan);
	if (fast_fd < 0 || slow_fd < 0 || seeded_fd < 0)
		goto out;
	mode = fill_with(fast_fd, &l, SXDP_FILL_FAST);
	expect(mode == SXDP_FILL_FAST, "the fast fill was not used (%d)", mode);
	expect(fill_with(slow_fd, &l, SXDP_FILL_SLOW) == SXDP_FILL_SLOW, "the slow fill");
	/* AUTO takes the fast fill on this host (its kernel runs syscall programs). */
	expect(fill_with(seeded_fd, &l, SXDP_FILL_AUTO) == SXDP_FILL_FAST, "auto: not the fast fill");
	for (i = 0; i < l.n; i++) {
		uint64_t d = sieve_xdp_digest(&l.keys[i], test_secret);

		missing += !bloom_has(fast_fd, d) + !bloom_has(seeded_fd, d);
		differ += bloom_has(fast_fd, d) != bloom_has(slow_fd, d);
	}
	/* Innocent digests: random words are as good as digests of other keys. */
	for (q = 0; q < FILL_QUERIES; q++) {
		uint64_t d = rng();

		differ += bloom_has(fast_fd, d) != bloom_has(slow_fd, d);
		fp += bloom_has(seeded_fd, d);
	}
	expect(!missing, "%llu keys filled are missing", (unsigned long long)missing);
	expect(!differ, "the fast and slow maps differ on %llu queries", (unsigned long long)differ);
	rate = sxdp_bloom_fpr(plan.nbits, plan.nr_hashes, l.n);
	sigma = sqrt(FILL_QUERIES * rate * (1 - rate));
	printf("    %zu keys: %llu of %u misses hit the seeded fast map (planned %.0f +- %.0f)\n",
	       l.n, (unsigned long long)fp, FILL_QUERIES, FILL_QUERIES * rate, 3.29 * sigma);
	expect(fabs(fp - FILL_QUERIES * rate) <= 3.29 * sigma,
	       "false positives outside the 99.9%% interval");
out:
	if (fast_fd >= 0)
		close(fast_fd);
	if (slow_fd >= 0)
		close(slow_fd);
	if (seeded_fd >= 0)
		close(seeded_fd);
	sxdp_keys_free(&l);
}

/* Forced, the fallback fills: by the mode, and by SIEVE_XDP_FILL=slow from the environment. */
/*
 * A run that fails after the program loaded, in the second of three
 * batches: AUTO fills the rest one update per key and every key is in
 * the map; a forced fast fill says the error instead.
 */
static void test_bloom_fill_fails_part_way(void)
{
	enum sxdp_fill_mode used = SXDP_FILL_AUTO;
	struct sxdp_keys l = { 0 };
	struct sxdp_plan plan;
	size_t i, missing = 0;
	int fd, err;

	rng_state = 23;
	for (i = 0; i < FILL_KEYS; i++) {
		struct sieve_xdp_key k = random_flow();

		sxdp_keys_add(&l, &k);
	}
	fd = fill_map(l.n, 0, &plan);
	if (fd < 0)
		goto out;
	sxdp_fill_fail_at = 100000;
	sxdp_fill_mode = SXDP_FILL_FAST;
	err = sxdp_bloom_fill(fd, test_secret, l.keys, l.n, &used);
	sxdp_fill_mode = SXDP_FILL_AUTO;
	expect(err == -EIO, "forced fast fill failing part-way: %s", strerror(-err));
	close(fd);
	fd = fill_map(l.n, 0, &plan);
	if (fd < 0)
		goto out;
	err = sxdp_bloom_fill(fd, test_secret, l.keys, l.n, &used);
	expect(!err && used == SXDP_FILL_SLOW, "auto, failing part-way: mode %d, %s", used,
	       strerror(-err));
	for (i = 0; i < l.n; i++)
		missing += !bloom_has(fd, sieve_xdp_digest(&l.keys[i], test_secret));
	expect(!missing, "%zu of %zu keys missing after the fallback", missing, l.n);
	close(fd);
out:
	sxdp_fill_fail_at = 0;
	sxdp_keys_free(&l);
}

static void test_bloom_fill_fallback(void)
{
	struct sxdp_keys l = { 0 };
	enum sxdp_fill_mode used;
	struct sxdp_plan plan;
	int fd, err;
	size_t i;

	rng_state = 22;
	for (i = 0; i < 5000; i++) {
		struct sieve_xdp_key k = random_flow();

		sxdp_keys_add(&l, &k);
	}
	fd = fill_map(l.n, 0, &plan);
	if (fd < 0)
		goto out;
	expect(fill_with(fd, &l, SXDP_FILL_SLOW) == SXDP_FILL_SLOW, "forced: not the fallback");
	setenv("SIEVE_XDP_FILL", "slow", 1);
	err = sxdp_bloom_fill(fd, test_secret, l.keys, l.n, &used);
	unsetenv("SIEVE_XDP_FILL");
	expect(!err && used == SXDP_FILL_SLOW, "SIEVE_XDP_FILL=slow: mode %d, %s", used,
	       strerror(-err));
	/* A few keys take the fallback by themselves: loading costs more. */
	err = sxdp_bloom_fill(fd, test_secret, l.keys, 10, &used);
	expect(!err && used == SXDP_FILL_SLOW, "10 keys: mode %d", used);
	for (i = 0; i < l.n; i++)
		expect(bloom_has(fd, sieve_xdp_digest(&l.keys[i], test_secret)), "key %zu missing", i);
	close(fd);
out:
	sxdp_keys_free(&l);
}

/* ---- chosen entries (issue 20, item 4) ---- */

/*
 * An entry solved to collide with a victim under the digest before the
 * keyed one: a sum of the key's five words times odd constants. With the
 * last word free (the low half of an IPv6 address), one line of algebra
 * gives an innocent-looking service entry whose digest is the victim's.
 */
static struct sieve_xdp_key collide_with(const struct sieve_xdp_key *victim)
{
	static const uint64_t c[5] = {
		0x87c37b91114253d5ULL, 0x4cf5ad432745937fULL, 0x9e3779b97f4a7c15ULL,
		0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL,
	};
	struct sieve_xdp_key a = {
		.kind = SIEVE_XDP_SERVICE, .family = SIEVE_XDP_V6, .proto = IPPROTO_TCP,
		.dport = htons(443), .daddr = { htonl(0x20010db8) },
	};
	uint64_t v[5], w[5], want = 0, have = 0, inv = c[4];
	int i;

	memcpy(v, victim, sizeof(v));
	memcpy(w, &a, sizeof(w));
	for (i = 0; i < 5; i++) {
		want += v[i] * c[i];
		have += i < 4 ? w[i] * c[i] : 0;
	}
	for (i = 0; i < 5; i++)
		inv *= 2 - c[4] * inv;	/* Newton: the inverse of c[4] mod 2^64 */
	w[4] = (want - have) * inv;
	memcpy(&a, w, sizeof(a));
	return a;
}

/*
 * Blocking the solved entry (from a feed, say) must not drop the victim:
 * in the default bloom-only mode it did, on every backend. The entry's own
 * traffic is dropped.
 */
static void test_solved_collision(void)
{
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_key victim, entry, other;
	struct pkt_spec s;
	const char *why = "";
	char text[128], what[192];
	int err = sxdp_parse_entry("8.8.8.8", &victim, &why);

	if (!expect(!err, "parse: %s", why))
		return;
	entry = collide_with(&victim);
	sxdp_format_entry(&entry, text, sizeof(text));
	sxdp_keys_add(&l, &entry);
	/* Any list has a source: then the program probes the victim's source key. */
	if (!expect(!sxdp_parse_entry("198.51.100.7", &other, &why), "parse: %s", why))
		goto out;
	sxdp_keys_add(&l, &other);
	sxdp_keys_sort(&l);
	if (!set_list(&l, 0, 1000))
		goto out;
	s = tcp("8.8.8.8", 53, "192.0.2.10", 4000);
	snprintf(what, sizeof(what), "8.8.8.8 while %s is blocked", text);
	passes(what, &s);
	s = tcp("2001:db8::1", 5000, "2001:db8::", 443);
	s.flow.daddr[2] = entry.daddr[2];
	s.flow.daddr[3] = entry.daddr[3];
	drops("the solved entry's own traffic", &s, SIEVE_XDP_SERVICE);
out:
	sxdp_keys_free(&l);
}

/*
 * A read-only handle on the pins of a newer sieve, whose config value is
 * longer than this build's struct: refused (-ESTALE) before the kernel
 * copies the value, never an overrun of the caller's struct.
 */
static void test_newer_config_refused(void)
{
	struct {
		struct sieve_xdp_config cfg;
		uint8_t guard[256];
	} out;
	uint8_t big[sizeof(struct sieve_xdp_config) + 128];
	struct sxdp_handle r = { .stale = true };
	uint32_t zero = 0;
	size_t i;
	int ret;

	memset(big, 0xa5, sizeof(big));
	memset(&out, 0, sizeof(out));
	r.active_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_active", 4, 4, 1, NULL);
	r.cfg_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_cfg", 4, sizeof(big),
				  SIEVE_XDP_NR_GENS, NULL);
	if (!expect(r.active_fd >= 0 && r.cfg_fd >= 0, "maps: %s", strerror(errno)) ||
	    !expect(!bpf_map_update_elem(r.cfg_fd, &zero, big, BPF_ANY), "a newer config"))
		goto out;
	ret = sxdp_read_config(&r, &out.cfg, NULL);
	expect(ret == -ESTALE, "a newer config read: %d, want -ESTALE", ret);
	for (i = 0; i < sizeof(out.guard); i++)
		if (out.guard[i])
			break;
	expect(i == sizeof(out.guard), "bytes past the struct written (at %zu)", i);
out:
	if (r.active_fd >= 0)
		close(r.active_fd);
	if (r.cfg_fd >= 0)
		close(r.cfg_fd);
}

/*
 * Every generation has the digest key it was given; a rebuild keeps the
 * key and draws a new blocked seed. A config of another digest (0: the
 * linear one of an older sieve) refuses live adds, and the next sync from
 * the store rebuilds it under the store's secret.
 */
static void test_stale_digest_rebuilt(void)
{
	static const char *const e[] = { "198.51.100.7" };
	struct sxdp_store_attrs a = { .origin = "test", .now = 1 };
	char dir[] = "/tmp/sieve-xdp-digest-XXXXXX", err[512] = "";
	struct sieve_xdp_config cfg, stale;
	struct sxdp_keys l = { 0 }, fresh = { 0 };
	struct pkt_spec s = tcp("198.51.100.7", 5, "192.0.2.10", 80);
	struct sxdp_store *st = NULL;
	const __u64 *secret = NULL;
	uint64_t seed;
	bool rebuilt;
	uint32_t live;

	list_of(&l, e, 1);
	if (!expect(!sxdp_read_config(&h, &stale, NULL), "config") || !set_list(&l, 0, 1000) ||
	    !expect(!sxdp_read_config(&h, &cfg, NULL), "config"))
		goto out;
	seed = cfg.blocked_seed;
	expect(cfg.digest == SIEVE_XDP_DIGEST && !memcmp(cfg.digest_key, stale.digest_key,
							 sizeof(cfg.digest_key)),
	       "the generation's digest %u, key kept: %d", cfg.digest,
	       !memcmp(cfg.digest_key, stale.digest_key, sizeof(cfg.digest_key)));
	if (!set_list(&l, 0, 1000) || !expect(!sxdp_read_config(&h, &cfg, &live), "config"))
		goto out;
	expect(cfg.blocked_seed != seed, "a rebuild kept the blocked seed %llx",
	       (unsigned long long)seed);
	/* As an older loader left it: the same maps, a config of the linear digest. */
	stale = cfg;
	stale.digest = 0;
	memset(stale.digest_key, 0, sizeof(stale.digest_key));
	if (!expect(!bpf_map_update_elem(h.cfg_fd, &live, &stale, BPF_EXIST), "stale config"))
		goto out;
	list_of(&fresh, (const char *const[]){ "198.51.100.8" }, 1);
	expect(sxdp_add_live(&h, &fresh, 0) == 1, "a live add into maps of another digest");
	if (!expect(mkdtemp(dir) != NULL, "mkdtemp") ||
	    !expect(!sxdp_store_open(dir, &st, err, sizeof(err)), "store: %s", err) ||
	    !expect(!sxdp_store_secret(st, &secret, err, sizeof(err)), "secret: %s", err))
		goto out;
	expect(!sxdp_store_add(st, "t", l.keys, l.n, &a, NULL, err, sizeof(err)), "add: %s", err);
	/* The maps at the store's version: only the digest is behind. */
	expect(!sxdp_set_version(&h, 1), "set version");
	expect(!sxdp_iface_sync(&h, st, "t", &rebuilt, err, sizeof(err)) && rebuilt,
	       "a sync of maps of another digest did not rebuild: %s", err);
	expect(!sxdp_read_config(&h, &cfg, NULL) && sxdp_digest_current(&cfg, secret),
	       "after the sync: digest %u, the store's secret %d", cfg.digest,
	       secret && !memcmp(cfg.digest_key, secret, sizeof(cfg.digest_key)));
	drops("the entry after the rebuild", &s, SIEVE_XDP_SRC);
	expect(!sxdp_iface_sync(&h, st, "t", &rebuilt, err, sizeof(err)) && !rebuilt,
	       "a sync in step rebuilt: %s", err);
out:
	temp_store_close(st, dir);
	sxdp_keys_free(&l);
	sxdp_keys_free(&fresh);
}

/* ---- the plan against the kernel ---- */

static void test_plan_matches_kernel(void)
{
	static const uint64_t ns[] = { 1, 100, 65536, 1000000, 10000000 };
	static const uint32_t ppbs[] = { 10000000, 1000, 1 };
	struct sxdp_keys empty = { 0 };
	size_t i, j;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		for (j = 0; j < sizeof(ppbs) / sizeof(ppbs[0]); j++) {
			struct sxdp_plan p;
			int bfd, efd;
			uint64_t mem;

			if (!expect(!sxdp_plan(ns[i], ppbs[j], &p), "plan %llu", (unsigned long long)ns[i]))
				continue;
			expect(p.fpr <= ppbs[j] / 1e9, "plan misses its target");
			expect(p.nr_hashes >= 1 && p.nr_hashes <= 15, "hash count %u", p.nr_hashes);
			if (p.bytes > (64u << 20))
				continue;
			if (!expect(!sxdp_gen_create(&p, &(struct sieve_xdp_config){ 0 }, false,
						     &empty, NULL, &bfd, &efd), "create map"))
				continue;
			mem = sxdp_map_memlock(bfd);
			/* The bitmap plus the struct around it, under a page. */
			expect(mem >= p.bytes && mem < p.bytes + 4096,
			       "n=%llu p=%u: kernel charges %llu bytes, plan says %llu",
			       (unsigned long long)ns[i], ppbs[j], (unsigned long long)mem,
			       (unsigned long long)p.bytes);
			close(bfd);
		}
	}
}

/* ---- prefix expansion: any prefix lengths, at most P probes ---- */

typedef unsigned __int128 u128;

/* An address as one 128-bit number; IPv4 is its top 32 bits (word 0). */
static u128 addr_of(const __be32 w[4])
{
	u128 v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = v << 32 | ntohl(w[i]);
	return v;
}

static void addr_put(__be32 w[4], u128 v)
{
	int i;

	for (i = 3; i >= 0; i--, v >>= 32)
		w[i] = htonl((uint32_t)v);
}

static u128 len_mask(unsigned int len)
{
	return len ? ~(u128)0 << (128 - len) : 0;
}

/* The test's oracle: does a source or prefix entry of @l cover @a? */
static bool covered(const struct sxdp_keys *l, uint8_t family, u128 a)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct sieve_xdp_key *k = &l->keys[i];

		if (k->family == family && (k->kind == SIEVE_XDP_SRC || k->kind == SIEVE_XDP_PREFIX) &&
		    (a & len_mask(k->prefix_len)) == addr_of(k->saddr))
			return true;
	}
	return false;
}

static int verdict_from(uint8_t family, u128 a)
{
	struct pkt_spec s = tcp(family == SIEVE_XDP_V4 ? "198.51.100.1" : "2001:db8::1", 1,
				family == SIEVE_XDP_V4 ? "192.0.2.1" : "2001:db8:ffff::1", 2);
	uint8_t buf[PKT_MAX];

	addr_put(s.flow.saddr, a);
	return run_pkt(buf, pkt_build(&s, buf));
}

/*
 * For every entry: its first and last address are dropped, the addresses
 * just outside pass unless another entry covers them. Verdicts only (the
 * lists are exact: no false positive may pass for a drop).
 */
static void check_edges(const struct sxdp_keys *l, const char *what)
{
	unsigned int bad = 0, runs = 0;
	size_t i;
	int j;

	for (i = 0; i < l->n; i++) {
		const struct sieve_xdp_key *k = &l->keys[i];
		bool v4 = k->family == SIEVE_XDP_V4;
		u128 all = v4 ? len_mask(32) : ~(u128)0, step = v4 ? (u128)1 << 96 : 1;
		u128 first = addr_of(k->saddr), last = first | (~len_mask(k->prefix_len) & all);
		u128 probe[4] = { first, last, first - step, last + step };
		bool skip[4] = { false, false, first == 0, last == all };

		for (j = 0; j < 4; j++) {
			int want, got;

			if (skip[j])
				continue;
			want = covered(l, k->family, probe[j]) ? XDP_DROP : XDP_PASS;
			got = verdict_from(k->family, probe[j]);
			runs++;
			if (got != want && bad++ < 5) {
				char buf[160];

				sxdp_format_entry(k, buf, sizeof(buf));
				expect(false, "%s: entry %s, %s: verdict %d, want %d", what, buf,
				       (const char *[]){ "first", "last", "below", "above" }[j], got, want);
			}
		}
	}
	expect(!bad, "%s: %u of %u verdicts wrong", what, bad, runs);
}

/* A random prefix of @len (a host at the full length) of @family. */
static struct sieve_xdp_key random_prefix(uint8_t family, unsigned int len)
{
	bool v4 = family == SIEVE_XDP_V4;
	struct sieve_xdp_key k = { .family = family, .prefix_len = len,
				   .kind = len == (v4 ? 32U : 128U) ? SIEVE_XDP_SRC : SIEVE_XDP_PREFIX };
	u128 a = (u128)rng() << 64 | rng();

	addr_put(k.saddr, a & len_mask(len) & (v4 ? len_mask(32) : ~(u128)0));
	return k;
}

/* Sets @l with @max_probes; the config probes at most that many lengths. */
static bool set_list_probes(const struct sxdp_keys *l, unsigned int max_probes)
{
	struct sieve_xdp_config cfg;
	char err[256] = "";
	int ret = sxdp_rebuild_probes(&h, l, SIEVE_XDP_F_EXACT | backend, 1000, 1024, max_probes,
				      err, sizeof(err));

	if (!expect(!ret, "rebuild with %u probes: %s", max_probes, err))
		return false;
	return expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.nr_v4_lens <= max_probes &&
		      cfg.nr_v6_lens <= max_probes, "more probe lengths than %u", max_probes);
}

/* IPv4: three prefixes of every length /1-/31 and hosts, 8 probes, then 3. */
static void test_expansion_every_v4_length(void)
{
	struct sxdp_keys l = { 0 };
	unsigned int len, i;

	rng_state = 4;
	for (len = 1; len <= 32; len++)
		for (i = 0; i < 3; i++) {
			struct sieve_xdp_key k = random_prefix(SIEVE_XDP_V4, len);

			sxdp_keys_add(&l, &k);
		}
	sxdp_keys_sort(&l);
	if (set_list_probes(&l, 8))
		check_edges(&l, "v4 /1-/32, 8 probes");
	/* Shorter lists of the long lengths: 3 probes stay within the budget. */
	for (i = 0; i < l.n; i++)
		if (l.keys[i].prefix_len < 12)
			l.keys[i].prefix_len = 0;
	{
		size_t out = 0;

		for (i = 0; i < l.n; i++)
			if (l.keys[i].prefix_len)
				l.keys[out++] = l.keys[i];
		l.n = out;
	}
	if (set_list_probes(&l, 3))
		check_edges(&l, "v4 /12-/32, 3 probes");
	sxdp_keys_free(&l);
}

/* IPv6: a prefix of every length /1-/127 and hosts, with 16 probes; a spread with 8. */
static void test_expansion_v6_lengths(void)
{
	static const unsigned int spread[] = { 1, 7, 20, 32, 33, 48, 56, 63, 64, 65, 96, 112,
					       120, 126, 127, 128 };
	struct sxdp_keys l = { 0 };
	unsigned int len, i;

	rng_state = 6;
	for (len = 1; len <= 128; len++) {
		struct sieve_xdp_key k = random_prefix(SIEVE_XDP_V6, len);

		sxdp_keys_add(&l, &k);
	}
	sxdp_keys_sort(&l);
	if (set_list_probes(&l, 16))
		check_edges(&l, "v6 /1-/128, 16 probes");
	sxdp_keys_free(&l);
	for (i = 0; i < sizeof(spread) / sizeof(spread[0]); i++) {
		struct sieve_xdp_key k = random_prefix(SIEVE_XDP_V6, spread[i]), k2;

		k2 = random_prefix(SIEVE_XDP_V6, spread[i]);
		sxdp_keys_add(&l, &k);
		sxdp_keys_add(&l, &k2);
	}
	sxdp_keys_sort(&l);
	if (set_list_probes(&l, 8))
		check_edges(&l, "v6 16 lengths, 8 probes");
	sxdp_keys_free(&l);
}

/*
 * Nested and overlapping prefixes expand to shared keys: all of them
 * still block, and removing the widest one leaves the others whole.
 */
static void test_expansion_nested(void)
{
	static const char *const e[] = { "10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/23",
					 "10.1.2.0/24", "10.1.3.7", "2001:db8::/32",
					 "2001:db8:0:1::/64", "2001:db8:0:1:8000::/65" };
	static const char *const wide[] = { "10.0.0.0/8", "2001:db8::/32" };
	struct sxdp_keys l = { 0 }, del = { 0 };
	size_t missing;

	list_of(&l, e, 8);
	/* Two probes: /24 and /8 (or /16) for v4, /65 and /32 for v6. */
	if (set_list_probes(&l, 2))
		check_edges(&l, "nested, two probes");
	list_of(&del, wide, 2);
	expect(!remove_entries(&l, &del, &missing) && !missing, "removing the widest");
	check_edges(&l, "nested, widest removed");
	expect(verdict_from(SIEVE_XDP_V4, (u128)0x0a050000 << 96) == XDP_PASS,
	       "10.5.0.0 passes once 10.0.0.0/8 is gone");
	sxdp_keys_free(&l);
	sxdp_keys_free(&del);
}

/*
 * A live block keeps the live probe lengths: a length near one goes to it
 * in the live maps; a length far from all needs a new plan (new maps).
 */
static void test_expansion_live_block(void)
{
	static const char *const first[] = { "10.0.0.0/16", "10.1.0.0/24" };
	static const char *const near[] = { "10.2.0.0/21" };
	static const char *const far[] = { "10.128.0.0/9" };
	struct sxdp_keys l = { 0 }, add = { 0 };
	struct sieve_xdp_config cfg;
	uint32_t id;

	list_of(&l, first, 2);
	if (!set_list_probes(&l, 2))
		goto out;
	id = live_bloom_id();
	list_of(&add, near, 1);
	expect(add_entries(&l, &add) == 0, "a near length rebuilt the maps");
	expect(live_bloom_id() == id, "a near length made new maps");
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.nr_v4_lens == 2 && cfg.keys == 10,
	       "after the near add: %u lengths, %llu keys, want 2 and 10", cfg.nr_v4_lens,
	       (unsigned long long)cfg.keys);
	sxdp_keys_free(&add);
	list_of(&add, far, 1);
	expect(add_entries(&l, &add) == 1, "a far length was added live");
	expect(live_bloom_id() != id, "a far length kept the maps");
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.nr_v4_lens == 2 && cfg.max_probes == 2,
	       "after the far add: %u lengths, max %u", cfg.nr_v4_lens, cfg.max_probes);
	check_edges(&l, "after live blocks");
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
}

/* ---- entries and files ---- */

static void test_entry_parser(void)
{
	static const char *const good[] = {
		"198.51.100.7", "203.0.113.0/24", "2001:db8::/48", "2001:db8::1",
		"tcp:192.0.2.10:22", "udp:[2001:db8::1]:53", "sctp:192.0.2.1:3868",
		"tcp:198.51.100.7:40000,192.0.2.10:22", "udp:[2001:db8::7]:1,[2001:db8::1]:2",
		"abcd::1", "10.0.0.0/8",
	};
	static const char *const bad[] = {
		"", "198.51.100", "198.51.100.7/33", "203.0.113.1/24", "0.0.0.0/0", "icmp:1.2.3.4:1",
		"tcp:192.0.2.10", "tcp:192.0.2.10:0", "tcp:192.0.2.10:65536", "tcp:2001:db8::1:22",
		"tcp:1.2.3.4:1,[2001:db8::1]:2", "tcp:[1.2.3.4]:5", "1.2.3.4/", "1.2.3.4/ 8",
		"2001:db8::/129", "tcp:1.2.3.4:1x",
	};
	struct sieve_xdp_key k, k2;
	const char *why;
	char buf[160];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (!expect(!sxdp_parse_entry(good[i], &k, &why), "%s refused: %s", good[i], why))
			continue;
		sxdp_format_entry(&k, buf, sizeof(buf));
		expect(!sxdp_parse_entry(buf, &k2, &why) && !memcmp(&k, &k2, sizeof(k)),
		       "%s does not survive formatting as %s", good[i], buf);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect(sxdp_parse_entry(bad[i], &k, &why) && why, "'%s' accepted", bad[i]);
	expect(!sxdp_parse_entry("203.0.113.9/32", &k, &why) && k.kind == SIEVE_XDP_SRC,
	       "a full-length prefix is a source");
}

static void test_list_file(void)
{
	char path[] = "/tmp/sieve-xdp-test-XXXXXX", err[256] = "";
	struct sxdp_keys l = { 0 };
	FILE *f;
	int fd = mkstemp(path);

	if (!expect(fd >= 0, "mkstemp"))
		return;
	f = fdopen(fd, "w");
	fputs("# a blocklist\n198.51.100.7\n\n  203.0.113.0/24   # a comment\n"
	      "198.51.100.7\ntcp:192.0.2.1:22\n", f);
	fclose(f);
	expect(!sxdp_keys_read(path, &l, err, sizeof(err)), "good file refused: %s", err);
	expect(l.n == 3, "%zu entries, want 3 (one duplicate)", l.n);
	f = fopen(path, "a");
	fputs("198.51.100.300\n", f);
	fclose(f);
	expect(sxdp_keys_read(path, &l, err, sizeof(err)) == -EINVAL, "bad line accepted");
	expect(strstr(err, ":7: ") != NULL, "error '%s' does not name line 7", err);
	expect(l.n == 3, "a refused file changed the list");
	unlink(path);
	sxdp_keys_free(&l);
}

/* ---- the allowlist ---- */

/* Makes the allowlist exactly @entries; NULL, 0 empties it. */
static bool allow_set(const char *const *entries, size_t n)
{
	struct sxdp_keys l = { 0 };
	int err;

	list_of(&l, entries, n);
	err = sxdp_allow_sync(&h, &l);
	sxdp_keys_free(&l);
	return expect(!err, "allow sync: %s", strerror(-err));
}

/* Live, one entry at a time: disallow when @del. */
static bool allow_one(const char *entry, bool del)
{
	struct sxdp_keys l = { 0 };
	int err;

	list_of(&l, &entry, 1);
	err = sxdp_allow_update(&h, del ? NULL : &l, del ? &l : NULL);
	sxdp_keys_free(&l);
	return expect(!err, "%s %s: %s", del ? "disallow" : "allow", entry, strerror(-err));
}

/*
 * A source entry matched, the allowlist overrode it: passed, counted
 * allowed (and a filter hit).
 */
static bool allowed_pass_src(const char *what, const struct pkt_spec *s)
{
	const int moved[] = { SIEVE_XDP_PASSED, SIEVE_XDP_ALLOWED, SIEVE_XDP_BLOOM_HITS };

	return check_pkt(what, s, XDP_PASS, moved, 3);
}

/* The same for a prefix: no filter hit where the IPv4 prefix table answered. */
static bool allowed_pass(const char *what, const struct pkt_spec *s)
{
	const int moved[] = { SIEVE_XDP_PASSED, SIEVE_XDP_ALLOWED, SIEVE_XDP_BLOOM_HITS };

	return check_pkt(what, s, XDP_PASS, moved, table_answers(s, SIEVE_XDP_PREFIX) ? 2 : 3);
}

/* The same, and then a port kind (@kind) dropped it: two filter hits (one by the table). */
static bool allowed_dropped(const char *what, const struct pkt_spec *s, int kind)
{
	const int moved[] = { SIEVE_XDP_DROP_SRC + kind, SIEVE_XDP_ALLOWED,
			      SIEVE_XDP_BLOOM_HITS, SIEVE_XDP_BLOOM_HITS };

	return check_pkt(what, s, XDP_DROP, moved, table_answers(s, SIEVE_XDP_PREFIX) ? 3 : 4);
}

/*
 * One family's addresses for allow_family(): a blocked prefix @pfx (also
 * blocked: @src, which lies in the blocked prefix @src_pfx), and a
 * service and a flow from @in.
 */
struct allow_addrs {
	const char *block[5];	/* pfx, src_pfx, src, service, flow */
	const char *allow[5];	/* in, sub, src, free, other family */
	const char *in;		/* allowed, inside pfx */
	const char *in_sub;	/* inside an allowed sub-prefix of pfx */
	const char *other;	/* inside pfx, not allowed */
	const char *mirror;	/* inside pfx: the other family's entry has its bytes */
	const char *src;	/* blocked as a source and by src_pfx, allowed */
	const char *src_other;	/* in src_pfx, not allowed */
	const char *free;	/* allowed, not blocked */
	const char *dst, *svc;	/* a destination; the blocked service's */
	uint16_t flow_sport, svc_port;
};

static void allow_family(const struct allow_addrs *a)
{
	struct pkt_spec s;

	if (!set_entries(a->block, 5, 0) || !allow_set(a->allow, 5))
		return;
	s = tcp(a->in, 1, a->dst, 80);
	allowed_pass("allowed source inside a blocked prefix", &s);
	s = tcp(a->in_sub, 1, a->dst, 80);
	allowed_pass("source in an allowed sub-prefix", &s);
	s = tcp(a->other, 1, a->dst, 80);
	drops("other source in the blocked prefix", &s, SIEVE_XDP_PREFIX);
	s = tcp(a->mirror, 1, a->dst, 80);
	drops("an entry of the other family with the source's bytes", &s, SIEVE_XDP_PREFIX);
	/* One bloom hit: the allowed source skips the prefix probes. */
	s = tcp(a->src, 1, a->dst, 80);
	allowed_pass_src("allowed source blocked as a source and by a prefix", &s);
	s = tcp(a->src_other, 1, a->dst, 80);
	drops("other source in that prefix", &s, SIEVE_XDP_PREFIX);
	s = tcp(a->free, 1, a->dst, 80);
	passes("allowed source not blocked: not counted", &s);
	s = tcp(a->in, 1, a->svc, a->svc_port);
	allowed_dropped("allowed source to a blocked service", &s, SIEVE_XDP_SERVICE);
	s = tcp(a->in, a->flow_sport, a->dst, 80);
	allowed_dropped("allowed source's blocked flow", &s, SIEVE_XDP_FLOW);
	if (allow_one(a->allow[0], true)) {
		s = tcp(a->in, 1, a->dst, 80);
		drops("disallowed source", &s, SIEVE_XDP_PREFIX);
		s = tcp(a->in_sub, 1, a->dst, 80);
		allowed_pass("the sub-prefix still allowed", &s);
	}
	allow_one(a->allow[0], true);	/* not there: no error */
	if (allow_one(a->allow[0], false)) {
		s = tcp(a->in, 1, a->dst, 80);
		allowed_pass("allowed again", &s);
	}
	allow_set(NULL, 0);
}

static void test_allow_v4(void)
{
	static const struct allow_addrs a = {
		.block = { "10.0.0.0/8", "198.51.100.0/24", "198.51.100.7", "tcp:192.0.2.10:22",
			   "tcp:10.1.2.3:40000,192.0.2.1:80" },
		/* a01:205:: holds the bytes of 10.1.2.5 */
		.allow = { "10.1.2.3", "10.9.0.0/16", "198.51.100.7", "192.0.2.99",
			   "a01:205::/32" },
		.in = "10.1.2.3", .in_sub = "10.9.200.1", .other = "10.1.2.4",
		.mirror = "10.1.2.5", .src = "198.51.100.7", .src_other = "198.51.100.8",
		.free = "192.0.2.99", .dst = "192.0.2.1", .svc = "192.0.2.10",
		.flow_sport = 40000, .svc_port = 22,
	};

	allow_family(&a);
}

static void test_allow_v6(void)
{
	static const struct allow_addrs a = {
		.block = { "2001:db8::/32", "2001:db8:1::/48", "2001:db8:1::7",
			   "tcp:[2001:db8:f::10]:22",
			   "tcp:[2001:db8::3]:40000,[2001:db8:f::1]:80" },
		/* 32.1.13.184 is 2001:db8 in IPv4 */
		.allow = { "2001:db8::3", "2001:db8:9::/48", "2001:db8:1::7", "2001:db9::99",
			   "32.1.13.184" },
		.in = "2001:db8::3", .in_sub = "2001:db8:9:ffff::1", .other = "2001:db8::4",
		.mirror = "2001:db8::5", .src = "2001:db8:1::7", .src_other = "2001:db8:1::8",
		.free = "2001:db9::99", .dst = "2001:db8:f::1", .svc = "2001:db8:f::10",
		.flow_sport = 40000, .svc_port = 22,
	};

	allow_family(&a);
}

/* The verdict of one packet of @s. */
static int run_spec(const struct pkt_spec *s)
{
	uint8_t buf[PKT_MAX];

	return run_pkt(buf, pkt_build(s, buf));
}

/* The allowlist's "empty, skip it" flag (SIEVE_XDP_MAP_ALLOW_NONE). */
static __u32 allow_none_now(void)
{
	__u32 zero = 0, v = 2;

	bpf_map_lookup_elem(h.allow_none_fd, &zero, &v);
	return v;
}

/*
 * The flag follows the trie: set once it is empty (a sync of nothing, the
 * last entry disallowed), cleared by any insert, by update or by sync; an
 * allowed source passes whenever the trie holds it. The program trusts
 * the flag: set by hand over a trie with an entry, that source is dropped.
 */
static void test_allow_none(void)
{
	static const char *const block[] = { "198.51.100.0/24", "192.0.2.7" };
	static const char *const allow[] = { "198.51.100.9" };
	struct pkt_spec in = tcp("198.51.100.9", 5, "203.0.113.1", 80);
	struct pkt_spec host = tcp("192.0.2.7", 5, "203.0.113.1", 80);
	__u32 zero = 0, one = 1, none;

	if (!set_entries(block, 2, 0) || !allow_set(NULL, 0))
		return;
	expect(allow_none_now() == 1, "an empty allowlist synced: flag %u, want 1", allow_none_now());
	drops("a blocked prefix, the allowlist skipped", &in, SIEVE_XDP_PREFIX);
	drops("a blocked host, the allowlist skipped", &host, SIEVE_XDP_SRC);
	if (!allow_one(allow[0], false))
		return;
	expect(allow_none_now() == 0, "after an allow: flag %u, want 0", allow_none_now());
	allowed_pass("allowed, live", &in);
	bpf_map_update_elem(h.allow_none_fd, &zero, &one, BPF_ANY);
	expect(run_spec(&in) == XDP_DROP,
	       "with the flag set by hand, the allowlist was asked all the same");
	none = 0;
	bpf_map_update_elem(h.allow_none_fd, &zero, &none, BPF_ANY);
	allow_one(allow[0], true);
	expect(allow_none_now() == 1, "the last entry disallowed: flag %u, want 1", allow_none_now());
	drops("disallowed again", &in, SIEVE_XDP_PREFIX);
	allow_set(allow, 1);
	expect(allow_none_now() == 0, "after a sync of one entry: flag %u, want 0", allow_none_now());
	allowed_pass("allowed by a sync", &in);
	allow_set(NULL, 0);
	expect(allow_none_now() == 1, "synced empty again: flag %u, want 1", allow_none_now());
}

/* Whether the trie lists exactly @entries. */
static bool allow_holds(const char *what, const char *const *entries, size_t n)
{
	struct sxdp_keys want = { 0 }, got = { 0 };
	bool ok;

	list_of(&want, entries, n);
	ok = expect(!sxdp_allow_read(&h, &got), "%s: read", what) &&
	     expect(got.n == want.n && (!n || !memcmp(got.keys, want.keys, n * sizeof(*got.keys))),
		    "%s: the trie holds %zu entries, want %zu", what, got.n, want.n);
	sxdp_keys_free(&want);
	sxdp_keys_free(&got);
	return ok;
}

static void test_allow_sync_and_read(void)
{
	static const char *const first[] = { "10.0.0.1", "10.1.0.0/16", "2001:db8::/48",
					     "2001:db8::1" };
	static const char *const second[] = { "10.1.0.0/16", "2001:db8::1", "10.2.0.0/15",
					      "2001:db8:1::/64", "192.0.2.1" };
	static const char *const both[] = { "10.0.0.1", "10.1.0.0/16", "2001:db8::/48",
					    "2001:db8::1", "10.2.0.0/15" };
	struct sxdp_keys add = { 0 }, del = { 0 };
	struct sieve_xdp_allow_key raw = { .prefixlen = SIEVE_XDP_ALLOW_PREFIXLEN(16),
					   .family = SIEVE_XDP_V4, .addr = { 10, 1, 9, 9 } };
	uint32_t zero = 0;

	if (!allow_set(first, 4) || !allow_holds("first set", first, 4))
		goto out;
	allow_set(second, 5);
	allow_holds("synced to the second set", second, 5);
	allow_set(second, 5);
	allow_holds("synced to it again", second, 5);
	/* Added and deleted at once: it stays. */
	allow_set(first, 4);
	list_of(&add, both + 4, 1);
	list_of(&del, both + 4, 1);
	expect(!sxdp_allow_update(&h, &add, &del), "add and delete one entry");
	allow_holds("an entry both added and deleted", both, 5);
	/* Keys written by hand: host bits are the same node; junk goes. */
	allow_set(NULL, 0);
	expect(!bpf_map_update_elem(h.allow_fd, &raw, &zero, BPF_ANY), "raw key, host bits");
	allow_holds("a key with host bits reads as its entry", both + 1, 1);
	allow_set(both + 1, 1);
	allow_holds("a sync keeps it", both + 1, 1);
	raw.family = 5;
	expect(!bpf_map_update_elem(h.allow_fd, &raw, &zero, BPF_ANY), "raw key, family 5");
	expect(sxdp_allow_read(&h, &add) == -EINVAL, "reading a key of no family");
	allow_set(first, 4);
	allow_holds("a sync removes it", first, 4);
	allow_set(NULL, 0);
	allow_holds("emptied", NULL, 0);
out:
	sxdp_keys_free(&add);
	sxdp_keys_free(&del);
	allow_set(NULL, 0);
}

/* Each kind of bad entry: -EINVAL from every function, and nothing changes. */
static void test_allow_bad_entries(void)
{
	static const char *const good[] = { "10.0.0.1", "2001:db8::/32" };
	static const char *const bad[] = { "tcp:192.0.2.10:22",
					   "udp:[2001:db8::7]:5000,[2001:db8::1]:53" };
	struct sieve_xdp_key keys[4];
	struct sxdp_keys l = { 0 }, one;
	const char *why;
	size_t i;

	if (!allow_set(good, 2))
		return;
	for (i = 0; i < 2; i++)
		sxdp_parse_entry(bad[i], &keys[i], &why);
	sxdp_parse_entry("10.0.0.0/8", &keys[2], &why);
	keys[2].saddr[0] |= htonl(1);			/* host bits */
	sxdp_parse_entry("10.0.0.1", &keys[3], &why);
	keys[3].prefix_len = 24;			/* a source with a prefix length */
	list_of(&l, good, 2);
	for (i = 0; i < 4; i++) {
		one = (struct sxdp_keys){ .keys = &keys[i], .n = 1, .cap = 1 };
		expect(sxdp_allow_update(&h, &one, NULL) == -EINVAL, "bad entry %zu added", i);
		expect(sxdp_allow_update(&h, NULL, &one) == -EINVAL, "bad entry %zu deleted", i);
		/* Good entries first: nothing of them either. */
		sxdp_keys_add(&l, &keys[i]);
		expect(sxdp_allow_sync(&h, &l) == -EINVAL, "bad entry %zu synced", i);
		l.n--;
		expect(sxdp_allow_update(&h, &l, NULL) == 0, "good entries");
	}
	allow_holds("after bad entries", good, 2);
	sxdp_keys_free(&l);
	allow_set(NULL, 0);
}

/*
 * Exact mode: a confirmed hit is allowed and counted; a bloom false
 * positive on an allowed source is refuted first, so it is counted as a
 * false positive and never as allowed.
 */
static void test_allow_exact(void)
{
	static const char *const e[] = { "10.0.0.0/8", "198.51.100.7" };
	static const char *const allow[] = { "10.1.2.3", "198.51.100.7" };
	const int fp_moved[] = { SIEVE_XDP_PASSED, SIEVE_XDP_BLOOM_HITS,
				 SIEVE_XDP_FALSE_POSITIVES };
	struct sxdp_keys l = { 0 }, fps = { 0 };
	struct pkt_spec s;
	uint8_t buf[PKT_MAX];
	size_t i;

	if (!set_entries(e, 2, SIEVE_XDP_F_EXACT) || !allow_set(allow, 2))
		goto out;
	s = tcp("10.1.2.3", 1, "192.0.2.1", 80);
	allowed_pass("exact: allowed source in a blocked prefix", &s);
	s = tcp("198.51.100.7", 1, "192.0.2.1", 80);
	allowed_pass_src("exact: allowed blocked source", &s);
	s = tcp("10.1.2.4", 1, "192.0.2.1", 80);
	drops("exact: other source in the prefix", &s, SIEVE_XDP_PREFIX);
	/* 2000 random sources at 10%: bloom-only drops about 1 in 10 others. */
	for (i = 0; i < 2000; i++) {
		struct sieve_xdp_key k = { .kind = SIEVE_XDP_SRC, .family = SIEVE_XDP_V4,
					   .prefix_len = 32, .saddr = { (uint32_t)rng() } };

		sxdp_keys_add(&l, &k);
	}
	sxdp_keys_sort(&l);
	if (!set_list(&l, SIEVE_XDP_F_EXACT, 100000000) || !reflag(0))
		goto out;
	s = (struct pkt_spec){ .flow = { .family = SIEVE_XDP_V4, .proto = IPPROTO_TCP,
					 .sport = htons(1), .dport = htons(80) } };
	for (i = 0; i < 4000 && fps.n < 32; i++) {
		s.flow.saddr[0] = (uint32_t)rng();
		s.flow.kind = SIEVE_XDP_SRC;
		s.flow.prefix_len = 32;
		s.flow.proto = 0, s.flow.sport = s.flow.dport = 0;
		if (sxdp_keys_find(&l, &s.flow))
			continue;
		sxdp_keys_add(&fps, &s.flow);	/* the entry; the packet's fields below */
		s.flow.proto = IPPROTO_TCP, s.flow.sport = htons(1), s.flow.dport = htons(80);
		if (run_pkt(buf, pkt_build(&s, buf)) != XDP_DROP)
			fps.n--;
	}
	if (!expect(fps.n >= 8, "only %zu false positives in bloom-only mode", fps.n) ||
	    !expect(!sxdp_allow_sync(&h, &fps), "allow the false positives") ||
	    !reflag(SIEVE_XDP_F_EXACT))
		goto out;
	for (i = 0; i < fps.n; i++) {
		s.flow = fps.keys[i];
		s.flow.proto = IPPROTO_TCP, s.flow.sport = htons(1), s.flow.dport = htons(80);
		check_pkt("exact: a false positive on an allowed source", &s, XDP_PASS, fp_moved,
			  3);
	}
	printf("    %zu allowed false positives, none counted as allowed\n", fps.n);
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&fps);
	allow_set(NULL, 0);
}

struct allow_race {
	volatile bool stop;
	uint64_t runs, allowed_dropped, blocked_passed, errors;
};

/* An allowed source in a blocked prefix, and one never allowed, in a loop. */
static void *allow_race_traffic(void *arg)
{
	struct allow_race *r = arg;
	struct pkt_spec allowed = tcp("10.1.2.3", 1, "192.0.2.1", 2);
	struct pkt_spec blocked = tcp("10.200.0.1", 1, "192.0.2.1", 2);
	uint8_t a[PKT_MAX], b[PKT_MAX];
	size_t al = pkt_build(&allowed, a), bl = pkt_build(&blocked, b);

	while (!r->stop) {
		int va = run_pkt(a, al), vb = run_pkt(b, bl);

		r->allowed_dropped += va == XDP_DROP;
		r->blocked_passed += vb == XDP_PASS;
		r->errors += va < 0 || vb < 0;
		r->runs++;
	}
	return NULL;
}

/* Syncs between sets that all allow 10.1.2.3 never drop it for a moment. */
static void test_allow_sync_under_traffic(void)
{
	static const char *const e[] = { "10.0.0.0/8" };
	static const char *const sets[3][3] = {
		{ "10.1.2.3", "10.2.0.0/16", "192.0.2.0/24" },
		{ "10.1.2.3", "10.1.0.0/16", "2001:db8::/32" },
		{ "10.1.2.3", "10.1.2.0/24", "10.3.3.3" },
	};
	struct allow_race r = { 0 };
	pthread_t t;
	int i;

	if (!set_entries(e, 1, 0) || !allow_set(sets[0], 3))
		return;
	pthread_create(&t, NULL, allow_race_traffic, &r);
	for (i = 0; i < 1000; i++)
		allow_set(sets[i % 3], 3);
	r.stop = true;
	pthread_join(t, NULL);
	expect(r.runs > 0, "traffic ran during the syncs");
	expect(r.allowed_dropped == 0, "%llu of %llu allowed packets dropped during syncs",
	       (unsigned long long)r.allowed_dropped, (unsigned long long)r.runs);
	expect(r.blocked_passed == 0, "%llu of %llu blocked packets passed during syncs",
	       (unsigned long long)r.blocked_passed, (unsigned long long)r.runs);
	expect(r.errors == 0, "test runs failed");
	printf("    %llu packet pairs during 1000 syncs\n", (unsigned long long)r.runs);
	allow_set(NULL, 0);
}

/* ---- the blocked backend (--backend blocked) ---- */

/* The live blocked array, mapped read-only: the tests' oracle reads it. */
struct blocked_view {
	const __u64 *blocks;
	size_t len;
	uint32_t nblocks, k, id;
	__u64 secret[2], seed;	/* the generation's digest key and seed */
};

static bool blocked_view_open(struct blocked_view *v)
{
	struct sieve_xdp_config cfg;
	uint32_t gen;
	void *p;
	int fd;

	memset(v, 0, sizeof(*v));
	if (!expect(!sxdp_read_config(&h, &cfg, &gen) && (cfg.flags & SIEVE_XDP_F_BLOCKED),
		    "a blocked generation is live") ||
	    !expect(!bpf_map_lookup_elem(h.blocked_fd, &gen, &v->id), "the live array's id"))
		return false;
	fd = bpf_map_get_fd_by_id(v->id);
	if (!expect(fd >= 0, "the live array's fd"))
		return false;
	v->nblocks = cfg.blocked.nblocks;
	v->k = cfg.blocked.k;
	memcpy(v->secret, cfg.digest_key, sizeof(v->secret));
	v->seed = cfg.blocked_seed;
	v->len = ((size_t)v->nblocks * SIEVE_XDP_BLOCK_BYTES + 4095) & ~(size_t)4095;
	p = mmap(NULL, v->len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (!expect(p != MAP_FAILED, "mmap of the live array: %s", strerror(errno)))
		return false;
	v->blocks = p;
	return true;
}

static void blocked_view_close(struct blocked_view *v)
{
	if (v->blocks)
		munmap((void *)v->blocks, v->len);
	v->blocks = NULL;
}

static uint32_t blocked_index_of(const struct blocked_view *v, const struct sieve_xdp_key *key)
{
	return sieve_xdp_blocked_index(sieve_xdp_blocked_hash(sieve_xdp_digest(key, v->secret),
							      v->seed), v->nblocks);
}

/*
 * The shared rule's answer for @key: its whole pattern against its block
 * (the program walks the bits one by one and stops at the first clear).
 */
static bool blocked_predict(const struct blocked_view *v, const struct sieve_xdp_key *key)
{
	__u64 hash = sieve_xdp_blocked_hash(sieve_xdp_digest(key, v->secret), v->seed);
	__u64 pattern[SIEVE_XDP_BLOCK_WORDS];
	const __u64 *b = v->blocks + (size_t)blocked_index_of(v, key) * SIEVE_XDP_BLOCK_WORDS;
	int w;

	sieve_xdp_blocked_pattern(hash, v->k, pattern);
	for (w = 0; w < SIEVE_XDP_BLOCK_WORDS; w++)
		if ((b[w] & pattern[w]) != pattern[w])
			return false;
	return true;
}

/* A blocked generation of @l by @plan, made and swapped in without a list file. */
static bool blocked_generation(const struct sxdp_keys *l, const struct sxdp_plan *plan)
{
	struct sieve_xdp_config cfg = { .digest = SIEVE_XDP_DIGEST, .blocked_seed = rng_state };
	int fd, unused;
	bool ok;

	memcpy(cfg.digest_key, test_secret, sizeof(cfg.digest_key));
	if (!expect(!sxdp_gen_create(plan, &cfg, false, l, NULL, &fd, &unused),
		    "creating the blocked array"))
		return false;
	sxdp_config_fill(&cfg, l);
	cfg.flags = SIEVE_XDP_F_BLOCKED;
	cfg.capacity = plan->capacity;
	sxdp_blocked_ops.config(&cfg, plan);
	cfg.fpp_ppb = plan->fpp_ppb;
	ok = expect(!sxdp_swap(&h, &cfg, fd, -1), "swapping the blocked generation in");
	close(fd);
	return ok;
}

/*
 * Each key's verdict from the XDP program against the prediction; a
 * wrong one fails the case (the first few are printed). Returns the
 * drops; *wrong counts the mismatches.
 */
static size_t blocked_verdicts(const struct blocked_view *v, const struct sieve_xdp_key *keys,
			       size_t n, size_t *wrong)
{
	uint8_t buf[PKT_MAX];
	size_t i, dropped = 0;

	for (i = 0; i < n; i++) {
		struct pkt_spec s = { .flow = keys[i] };
		bool drop = run_pkt(buf, pkt_build(&s, buf)) == XDP_DROP;

		dropped += drop;
		if (drop == blocked_predict(v, &keys[i]))
			continue;
		if (++*wrong <= 5)
			expect(false, "key %zu: the program says %s, the rule %s", i,
			       drop ? "drop" : "pass", drop ? "pass" : "drop");
	}
	return dropped;
}

/* How many of the flows @keys the program drops. */
static size_t drops_of(const struct sieve_xdp_key *keys, size_t n)
{
	uint8_t buf[PKT_MAX];
	size_t i, dropped = 0;

	for (i = 0; i < n; i++) {
		struct pkt_spec s = { .flow = keys[i] };

		dropped += run_pkt(buf, pkt_build(&s, buf)) == XDP_DROP;
	}
	return dropped;
}

/* @n random flows not in @l (sorted). */
static void flows_not_in(const struct sxdp_keys *l, size_t n, struct sxdp_keys *out)
{
	while (out->n < n) {
		struct sieve_xdp_key k = random_flow();

		if (!sxdp_keys_find(l, &k))
			sxdp_keys_add(out, &k);
	}
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

#define PARITY_KEYS	1000000

/*
 * 10^6 keys built in userspace (through mmap), then 10^6 packets through
 * the XDP program, half of them on the list: every verdict is the one the
 * shared rule predicts from the array's bits, exactly. At 1% so that
 * thousands of foreign keys are false positives and the rule's "yes" is
 * checked on them too, not only its "no".
 */
static void test_blocked_rule_parity(void)
{
	struct sxdp_keys l = { 0 }, on = { 0 }, off = { 0 };
	struct blocked_view v;
	struct sxdp_plan plan;
	size_t i, wrong = 0, on_drops, off_drops;
	double t0 = seconds(), t1, t2;

	rng_state = 10;
	for (i = 0; i < PARITY_KEYS; i++) {
		struct sieve_xdp_key k = random_flow();

		sxdp_keys_add(&l, &k);
	}
	sxdp_keys_sort(&l);
	for (i = 0; i < l.n; i += 2)
		sxdp_keys_add(&on, &l.keys[i]);
	flows_not_in(&l, PARITY_KEYS - on.n, &off);
	if (!expect(!sxdp_plan_blocked(l.n, 10000000, &plan), "plan") ||
	    !blocked_generation(&l, &plan) || !blocked_view_open(&v))
		goto out;
	t1 = seconds();
	on_drops = blocked_verdicts(&v, on.keys, on.n, &wrong);
	off_drops = blocked_verdicts(&v, off.keys, off.n, &wrong);
	t2 = seconds();
	printf("    %zu keys, %u blocks, k %u, built in %.2f s; %zu packets in %.1f s: "
	       "%zu of %zu listed dropped, %zu of %zu others (false positives), %zu mismatches\n",
	       l.n, v.nblocks, v.k, t1 - t0, on.n + off.n, t2 - t1, on_drops, on.n, off_drops,
	       off.n, wrong);
	expect(on_drops == on.n, "%zu listed keys passed", on.n - on_drops);
	expect(off_drops > off.n / 200, "too few false positives to check the rule's yes");
	expect(!wrong, "%zu verdicts differ from the rule", wrong);
	blocked_view_close(&v);
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&on);
	sxdp_keys_free(&off);
}

/*
 * Any number of blocks, with no rounding: 1, small primes, 1000, 65537.
 * The array has exactly that many elements, and keys land in all of them
 * (8 a block on average: about e^-8 of the blocks stay empty). k from 1
 * to the most the rule allows.
 */
static void test_blocked_any_size(void)
{
	static const uint32_t counts[] = { 1, 2, 3, 7, 97, 1000, 65537 };
	static const uint32_t ks[] = { 1, 7, 16, SIEVE_XDP_BLOCKED_MAX_HASHES };
	size_t c, i;

	rng_state = 11;
	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		struct sxdp_plan plan = { .blocked = true, .max_entries = counts[c],
					  .nr_hashes = ks[c % 4], .fpp_ppb = 1000 };
		struct sxdp_keys l = { 0 }, off = { 0 }, sample = { 0 };
		struct bpf_map_info info = { 0 };
		__u32 info_len = sizeof(info);
		struct blocked_view v;
		size_t empty = 0, wrong = 0, dropped;
		int fd;

		while (l.n < 8 * (size_t)counts[c]) {
			struct sieve_xdp_key k = random_flow();

			sxdp_keys_add(&l, &k);
		}
		sxdp_keys_sort(&l);
		plan.capacity = l.n;
		if (!blocked_generation(&l, &plan) || !blocked_view_open(&v))
			goto next;
		fd = bpf_map_get_fd_by_id(v.id);
		expect(fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &info_len) &&
		       info.max_entries == counts[c], "%u blocks: the array has %u", counts[c],
		       info.max_entries);
		close(fd);
		for (i = 0; i < counts[c]; i++) {
			const __u64 *b = v.blocks + i * SIEVE_XDP_BLOCK_WORDS;

			empty += !(b[0] | b[1] | b[2] | b[3] | b[4] | b[5] | b[6] | b[7]);
		}
		expect(empty <= 3 + counts[c] / 1000, "%u blocks: %zu empty", counts[c], empty);
		for (i = 0; i < l.n && i < 2000; i++)
			sxdp_keys_add(&sample, &l.keys[i * (l.n / 2000 ? l.n / 2000 : 1)]);
		dropped = blocked_verdicts(&v, sample.keys, sample.n, &wrong);
		expect(dropped == sample.n, "%u blocks, k %u: %zu listed keys passed", counts[c],
		       plan.nr_hashes, sample.n - dropped);
		flows_not_in(&l, 2000, &off);
		dropped = blocked_verdicts(&v, off.keys, off.n, &wrong);
		printf("    %u blocks, k %u, %zu keys: %zu empty blocks, %zu of 2000 others dropped, "
		       "%zu mismatches\n", counts[c], plan.nr_hashes, l.n, empty, dropped, wrong);
		blocked_view_close(&v);
next:
		sxdp_keys_free(&l);
		sxdp_keys_free(&off);
		sxdp_keys_free(&sample);
	}
}

/*
 * Adds go into the live array (the same map, ORed in through mmap) and the
 * program sees them at once; removals build a new array without them.
 */
static void test_blocked_live_add_and_rebuild(void)
{
	struct sxdp_keys l = { 0 }, add = { 0 }, del = { 0 }, keep = { 0 };
	struct blocked_view v;
	char err[256] = "";
	size_t i, wrong = 0, missing;
	uint32_t id;

	rng_state = 12;
	for (i = 0; i < 1000; i++) {
		struct sieve_xdp_key k = random_flow();

		sxdp_keys_add(&l, &k);
	}
	sxdp_keys_sort(&l);
	flows_not_in(&l, 2000, &add);
	sxdp_keys_sort(&add);
	if (!expect(!sxdp_rebuild(&h, &l, SIEVE_XDP_F_BLOCKED, 1000, 10000, err, sizeof(err)),
		    "rebuild: %s", err))
		goto out;
	id = live_bloom_id();
	expect(!drops_of(add.keys, add.n), "flows dropped before their add");
	expect(add_entries(&l, &add) == 0, "a live add rebuilt");
	expect(live_bloom_id() == id, "a live add built a new array");
	expect(drops_of(add.keys, add.n) == add.n, "an added flow passed");
	expect(drops_of(l.keys, l.n) == l.n, "a flow listed before the add passed");
	for (i = 0; i < add.n; i++)
		sxdp_keys_add(i % 4 ? &del : &keep, &add.keys[i]);
	expect(!remove_entries(&l, &del, &missing) && !missing, "remove");
	expect(live_bloom_id() != id, "a removal kept the old array");
	if (!blocked_view_open(&v))
		goto out;
	/* Removed flows pass unless the new array has them by chance (1e-6). */
	blocked_verdicts(&v, del.keys, del.n, &wrong);
	expect(!wrong, "%zu removed flows answered against the rule", wrong);
	expect(drops_of(keep.keys, keep.n) == keep.n, "a flow kept passed");
	expect(drops_of(l.keys, l.n) == l.n, "a flow of the first list passed");
	blocked_view_close(&v);
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
	sxdp_keys_free(&del);
	sxdp_keys_free(&keep);
}

/* The rate of this very table: C(x, k) / C(512, k) averaged over its blocks. */
static double blocked_table_rate(const struct blocked_view *v)
{
	double sum = 0;
	uint32_t b, j;

	for (b = 0; b < v->nblocks; b++) {
		const __u64 *w = v->blocks + (size_t)b * SIEVE_XDP_BLOCK_WORDS;
		double rate = 1;
		int x = 0, i;

		for (i = 0; i < SIEVE_XDP_BLOCK_WORDS; i++)
			x += __builtin_popcountll(w[i]);
		for (j = 0; j < v->k; j++)
			rate *= x > (int)j ? (double)(x - j) / (SIEVE_XDP_BLOCK_BITS - j) : 0;
		sum += rate;
	}
	return sum / v->nblocks;
}

/*
 * Each blocked generation draws its own seed: an innocent flow that is a
 * false positive of one generation is one of the next, of the same list
 * and size, only by chance (before the seed it was one in every such
 * generation: a known gap of issue 20).
 */
static void test_blocked_seed_per_generation(void)
{
	struct sxdp_keys l = { 0 }, others = { 0 }, fp = { 0 };
	char err[256] = "";
	size_t i, again;

	rng_state = 31;
	for (i = 0; i < 2000; i++) {
		struct sieve_xdp_key k = random_flow();

		sxdp_keys_add(&l, &k);
	}
	sxdp_keys_sort(&l);
	flows_not_in(&l, 20000, &others);
	/* A 1% filter: a few hundred innocent flows dropped. */
	if (!expect(!sxdp_rebuild(&h, &l, SIEVE_XDP_F_BLOCKED, 10000000, 2000, err, sizeof(err)),
		    "rebuild: %s", err))
		goto out;
	for (i = 0; i < others.n; i++)
		if (drops_of(&others.keys[i], 1))
			sxdp_keys_add(&fp, &others.keys[i]);
	if (!expect(fp.n >= 50, "only %zu false positives at 1%%", fp.n) ||
	    !expect(!sxdp_rebuild(&h, &l, SIEVE_XDP_F_BLOCKED, 10000000, 2000, err, sizeof(err)),
		    "rebuild: %s", err))
		goto out;
	expect(drops_of(l.keys, l.n) == l.n, "a listed flow passed after the rebuild");
	again = drops_of(fp.keys, fp.n);
	/* Chance alone: about 1% of them; all of them without a seed. */
	expect(again * 10 < fp.n, "%zu of %zu false positives again in the next generation",
	       again, fp.n);
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&others);
	sxdp_keys_free(&fp);
}

/*
 * At the planned size, full to capacity: the measured rate is that of the
 * table's bits (a 99.9% binomial interval), and under the bound the plan
 * was made with. Exact mode then refutes every one of them.
 */
static void test_blocked_false_positives(void)
{
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_config cfg;
	struct blocked_view v;
	double bound, table, sigma, lo, hi;
	uint64_t dropped, innocent, seed;
	size_t i;

	rng_state = 13;
	for (i = 0; i < FP_ENTRIES; i++) {
		struct sieve_xdp_key k = random_flow();

		sxdp_keys_add(&l, &k);
	}
	sxdp_keys_sort(&l);
	if (!set_list(&l, SIEVE_XDP_F_EXACT | SIEVE_XDP_F_BLOCKED, 10000000) || !reflag(0) ||
	    !expect(!sxdp_read_config(&h, &cfg, NULL), "config") || !blocked_view_open(&v))
		goto out;
	bound = sxdp_blocked_fpr(cfg.blocked.nblocks, cfg.blocked.k, l.n);
	table = blocked_table_rate(&v);
	blocked_view_close(&v);
	expect(count_drops(&l, l.n, true, NULL) == l.n, "a blocked flow passed");
	seed = rng_state;
	dropped = count_drops(&l, FP_QUERIES, false, NULL);
	sigma = sqrt(FP_QUERIES * table * (1 - table));
	lo = FP_QUERIES * table - 3.29 * sigma;
	hi = FP_QUERIES * table + 3.29 * sigma;
	printf("    %zu entries, %u blocks, k %u: %llu of %u innocent flows dropped; this table's "
	       "rate %.5f (99.9%% interval %.0f-%.0f), the plan's bound %.5f\n", l.n,
	       cfg.blocked.nblocks, cfg.blocked.k, (unsigned long long)dropped, FP_QUERIES, table, lo,
	       hi, bound);
	expect(dropped >= lo && dropped <= hi, "false positives outside the table's interval");
	/*
	 * The bound is on the expected rate of a table; one table's rate
	 * strays from that by about 2% here (1954 blocks). A close bound:
	 * blocks fill unevenly, and the plan models that.
	 */
	expect(bound <= cfg.fpp_ppb / 1e9, "the plan's bound above its target");
	expect(table <= 1.06 * bound && table >= 0.8 * bound,
	       "this table's rate %.5f is not close to the bound %.5f", table, bound);
	if (!reflag(SIEVE_XDP_F_EXACT))
		goto out;
	rng_state = seed;
	innocent = count_drops(&l, FP_QUERIES / 10, false, NULL);
	expect(!innocent, "exact mode dropped %llu innocent flows", (unsigned long long)innocent);
out:
	sxdp_keys_free(&l);
}
/* ---- removals without a rebuild (removed.c) ---- */

/* The remaining list, as ops.c asks the store: is this entry on it? */
static int list_has(void *ctx, const struct sieve_xdp_key *entry, bool *found)
{
	*found = sxdp_keys_find(ctx, entry);
	return 0;
}

/* The same for the host bitmap: is an IPv4 source in this /24 still on it? */
static int list_has_host(void *ctx, uint32_t slot, bool *found)
{
	const struct sxdp_keys *l = ctx;
	size_t i;

	*found = false;
	for (i = 0; i < l->n && !*found; i++)
		*found = l->keys[i].kind == SIEVE_XDP_SRC && l->keys[i].family == SIEVE_XDP_V4 &&
			 sieve_xdp_v4_slot(ntohl(l->keys[i].saddr[0])) == slot;
	return 0;
}

/*
 * What an unblock does now (ops.c): @del leaves @cur, then the live maps
 * in O(|del|); 1 if they asked for a rebuild (done here, as ops.c does).
 */
static int remove_live(struct sxdp_keys *cur, const char *const *del, size_t n)
{
	struct sxdp_keys gone = { 0 };
	struct sieve_xdp_config cfg;
	char err[256] = "";
	size_t i;
	int ret;

	list_of(&gone, del, n);
	for (i = 0; i < gone.n; i++)
		expect(sxdp_keys_remove(cur, &gone.keys[i]), "%s was not on the list", del[i]);
	ret = sxdp_read_config(&h, &cfg, NULL);
	/* The host bits and the table's /24s from what remains, as ops.c does. */
	if (!ret && (cfg.flags & SIEVE_XDP_F_V4TABLE))
		ret = sxdp_v4host_remove(&h, &gone, list_has_host, cur) ?:
		      sxdp_v4table_remove(&h, &gone, cur);
	if (!ret)
		ret = sxdp_remove_live(&h, &gone, list_has, cur, 7);
	if (ret == 1 && !sxdp_read_config(&h, &cfg, NULL)) {
		ret = sxdp_rebuild_probes(&h, cur, cfg.flags, cfg.fpp_ppb, cfg.capacity,
					  cfg.max_probes, err, sizeof(err));
		ret = ret ? ret : 1;
	}
	expect(ret >= 0, "remove: %d %s", ret, err);
	sxdp_keys_free(&gone);
	return ret;
}

/* A packet of a removed key: the filter's hit, refuted, and it passes. */
static bool passes_removed(const char *what, const struct pkt_spec *s)
{
	const int moved[] = { SIEVE_XDP_PASSED, SIEVE_XDP_BLOOM_HITS, SIEVE_XDP_FALSE_POSITIVES };

	return check_pkt(what, s, XDP_PASS, moved, 3);
}

static uint32_t live_gen_seq(void)
{
	struct sieve_xdp_config cfg;

	return sxdp_read_config(&h, &cfg, NULL) ? UINT32_MAX : cfg.gen_seq;
}

static uint32_t live_kinds(void)
{
	struct sieve_xdp_config cfg;

	return sxdp_read_config(&h, &cfg, NULL) ? UINT32_MAX : cfg.kinds;
}

static uint32_t live_removed(void)
{
	struct sieve_xdp_config cfg;

	return sxdp_read_config(&h, &cfg, NULL) ? UINT32_MAX : cfg.removed;
}

/* Back to the default probe budget: sxdp_rebuild keeps the live one for the next case. */
static void reset_probes(void)
{
	char err[256] = "";

	expect(!sxdp_rebuild_probes(&h, &(struct sxdp_keys){ 0 }, backend, 1000, 1024, 0, err,
				    sizeof(err)), "reset: %s", err);
}

/*
 * Unblocks of every kind on a list whose prefixes are expanded (one probe
 * length: /24): each one misses from the next packet, in the same
 * generation, while the keys an entry left on the list shares stay.
 * @flags: SIEVE_XDP_F_EXACT or 0.
 */
static void removed_live(uint32_t flags)
{
	static const char *const e[] = { "10.0.0.0/23", "10.0.1.0/24", "10.0.4.0/22",
					 "10.0.6.0/23", "198.51.100.7", "198.51.100.8",
					 "2001:db8::7", "tcp:192.0.2.10:22" };
	struct pkt_spec in0 = tcp("10.0.0.9", 1, "192.0.2.1", 2);
	struct pkt_spec in1 = tcp("10.0.1.9", 1, "192.0.2.1", 2);
	struct pkt_spec in4 = tcp("10.0.4.9", 1, "192.0.2.1", 2);
	struct pkt_spec in5 = tcp("10.0.5.9", 1, "192.0.2.1", 2);
	struct pkt_spec in6 = tcp("10.0.6.9", 1, "192.0.2.1", 2);
	struct pkt_spec in7 = tcp("10.0.7.9", 1, "192.0.2.1", 2);
	struct pkt_spec a = tcp("198.51.100.7", 1, "192.0.2.1", 2);
	struct pkt_spec b = tcp("198.51.100.8", 1, "192.0.2.1", 2);
	struct pkt_spec a6 = tcp("2001:db8::7", 1, "2001:db8::1", 2);
	struct pkt_spec svc = tcp("198.51.100.9", 1, "192.0.2.10", 22);
	struct sxdp_keys l = { 0 }, add = { 0 };
	char err[256] = "";
	uint32_t gen;

	list_of(&l, e, sizeof(e) / sizeof(e[0]));
	if (!expect(!sxdp_rebuild_probes(&h, &l, flags | backend, 1000, 1024, 1, err, sizeof(err)),
		    "build: %s", err))
		goto out;
	gen = live_gen_seq();
	drops("in the /23 before", &in0, SIEVE_XDP_PREFIX);
	expect(remove_live(&l, (const char *const[]){ "10.0.0.0/23" }, 1) == 0, "the /23 rebuilt");
	passes_removed("in the removed /23", &in0);
	drops("in the /24 the /23 shared", &in1, SIEVE_XDP_PREFIX);
	expect(remove_live(&l, (const char *const[]){ "10.0.4.0/22" }, 1) == 0, "the /22 rebuilt");
	passes_removed("in the removed /22, first /24", &in4);
	passes_removed("in the removed /22, second /24", &in5);
	drops("in the /23 the /22 overlapped", &in6, SIEVE_XDP_PREFIX);
	drops("in the /23 the /22 overlapped, again", &in7, SIEVE_XDP_PREFIX);
	expect(remove_live(&l, (const char *const[]){ "198.51.100.7" }, 1) == 0,
	       "a source rebuilt");
	passes_removed("the removed source", &a);
	drops("the source left", &b, SIEVE_XDP_SRC);
	drops("the v6 source left", &a6, SIEVE_XDP_SRC);
	expect(live_gen_seq() == gen, "generation %u after live removals, want %u", live_gen_seq(),
	       gen);
	/* The filter's bits stay: 1 + 2 + 1 keys noted (exact mode: deleted). */
	expect(live_removed() == 4, "%u keys removed, want 4", live_removed());
	/*
	 * The last service entry rebuilds: a live removal leaves the config's
	 * kinds alone, and a port kind in use drops what the program cannot
	 * read the ports of.
	 */
	drops("the service before", &svc, SIEVE_XDP_SERVICE);
	expect(remove_live(&l, (const char *const[]){ "tcp:192.0.2.10:22" }, 1) == 1,
	       "the service's removal did not rebuild");
	expect(live_gen_seq() != gen, "generation %u after the service's removal", gen);
	expect(!(live_kinds() & SIEVE_XDP_KIND_BIT(SIEVE_XDP_SERVICE, SIEVE_XDP_V4)),
	       "the service kind still in use: %#x", live_kinds());
	passes("the removed service", &svc);
	expect(live_removed() == 0, "%u keys removed after the rebuild", live_removed());
	gen = live_gen_seq();
	/* Blocked again: live. */
	list_of(&add, (const char *const[]){ "198.51.100.7", "10.0.0.0/23" }, 2);
	expect(add_entries(&l, &add) == 0, "the block again rebuilt");
	drops("the source blocked again", &a, SIEVE_XDP_SRC);
	drops("the /23 blocked again", &in0, SIEVE_XDP_PREFIX);
	passes("the /22 still removed", &in4);
	expect(live_gen_seq() == gen, "generation after the block again");
out:
	reset_probes();
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
}

static void test_removed_live(void)
{
	removed_live(0);
}

static void test_removed_exact(void)
{
	removed_live(SIEVE_XDP_F_EXACT);
}

/*
 * One key blocked and unblocked again and again, more times than the
 * bound on removals (sxdp_removed_max): each block counts the key's
 * digest out of the removed ones, so none of it rebuilds, and each step
 * answers right from the next packet. @flags: SIEVE_XDP_F_EXACT or 0.
 */
static void removed_cycles(uint32_t flags)
{
	struct pkt_spec a = tcp("198.51.100.7", 1, "192.0.2.1", 2);
	struct pkt_spec b = tcp("198.51.100.8", 1, "192.0.2.1", 2);
	struct sxdp_keys l = { 0 }, add = { 0 };
	struct sieve_xdp_config cfg;
	uint32_t gen, max, i;
	bool ok = true;

	list_of(&l, (const char *const[]){ "198.51.100.7", "198.51.100.8" }, 2);
	list_of(&add, (const char *const[]){ "198.51.100.7" }, 1);
	if (!set_list(&l, flags, 1000) || !expect(!sxdp_read_config(&h, &cfg, NULL), "config"))
		goto out;
	gen = cfg.gen_seq;
	max = sxdp_removed_max(&cfg);
	for (i = 0; ok && i < max + 8; i++) {
		ok = expect(remove_live(&l, (const char *const[]){ "198.51.100.7" }, 1) == 0,
			    "unblock %u of %u rebuilt", i + 1, max + 8) &&
		     expect(live_removed() == 1, "unblock %u: %u removed, want 1", i + 1,
			    live_removed()) &&
		     passes_removed("the unblocked source", &a) &&
		     drops("the other source", &b, SIEVE_XDP_SRC) &&
		     expect(add_entries(&l, &add) == 0, "block %u rebuilt", i + 1) &&
		     expect(live_removed() == 0, "block %u: %u removed, want 0", i + 1,
			    live_removed()) &&
		     drops("the source blocked again", &a, SIEVE_XDP_SRC);
	}
	expect(live_gen_seq() == gen, "generation %u after %u cycles, want %u", live_gen_seq(), i,
	       gen);
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
}

static void test_removed_cycles(void)
{
	removed_cycles(0);
}

static void test_removed_cycles_exact(void)
{
	removed_cycles(SIEVE_XDP_F_EXACT);
}

/* The live memory counts the removed map with the filter it refutes. */
static void test_removed_memory(void)
{
	uint64_t filter0, exact0, filter1, exact1;
	struct sxdp_keys l = { 0 };
	char err[256] = "";

	list_of(&l, (const char *const[]){ "198.51.100.7", "198.51.100.8" }, 2);
	if (!expect(!sxdp_rebuild_probes(&h, &l, backend, 1000, 1024, 1, err, sizeof(err)),
		    "build: %s", err) ||
	    !expect(!sxdp_live_memory(&h, &filter0, &exact0), "memory before"))
		goto out;
	expect(remove_live(&l, (const char *const[]){ "198.51.100.7" }, 1) == 0, "rebuilt");
	expect(live_removed() == 1, "%u keys removed, want 1", live_removed());
	if (expect(!sxdp_live_memory(&h, &filter1, &exact1), "memory after"))
		expect(filter1 > filter0 && exact1 == exact0,
		       "filter %llu -> %llu bytes, exact %llu -> %llu: the removed map not counted",
		       (unsigned long long)filter0, (unsigned long long)filter1,
		       (unsigned long long)exact0, (unsigned long long)exact1);
out:
	reset_probes();
	sxdp_keys_free(&l);
}

/*
 * The removed map at descriptor 0 (a command started with stdin closed)
 * is a removed map: the removal stays live. It was "none" at <= 0 there,
 * at < 0 for every other map.
 */
static void test_removed_fd_zero(void)
{
	struct pkt_spec a = tcp("198.51.100.7", 1, "192.0.2.1", 2);
	struct pkt_spec b = tcp("198.51.100.8", 1, "192.0.2.1", 2);
	int saved = dup(0), orig = h.removed_fd;
	struct sxdp_keys l = { 0 };
	char err[256] = "";
	uint32_t gen;

	if (!expect(saved >= 0 && dup2(orig, 0) == 0, "the removed map at fd 0: %s",
		    strerror(errno)))
		goto out;
	h.removed_fd = 0;
	list_of(&l, (const char *const[]){ "198.51.100.7", "198.51.100.8" }, 2);
	if (!expect(!sxdp_rebuild_probes(&h, &l, backend, 1000, 1024, 1, err, sizeof(err)),
		    "build: %s", err))
		goto out;
	gen = live_gen_seq();
	expect(remove_live(&l, (const char *const[]){ "198.51.100.7" }, 1) == 0,
	       "the removal rebuilt: the removed map at fd 0 taken for none");
	passes_removed("the removed source", &a);
	drops("the source left", &b, SIEVE_XDP_SRC);
	expect(live_gen_seq() == gen, "generation %u after the removal, want %u", live_gen_seq(),
	       gen);
out:
	h.removed_fd = orig;
	if (saved >= 0) {
		dup2(saved, 0);
		close(saved);
	}
	reset_probes();
	sxdp_keys_free(&l);
}

/*
 * A length a live add inserted: a prefix stored before it sits at the
 * longer length of the build, and its removal still takes all its keys;
 * a prefix that contains the key of another one keeps it.
 */
static void test_removed_after_live_length(void)
{
	struct pkt_spec in0 = tcp("10.0.0.9", 1, "192.0.2.1", 2);
	struct pkt_spec in2 = tcp("10.0.2.9", 1, "192.0.2.1", 2);
	struct pkt_spec in8 = tcp("10.0.9.9", 1, "192.0.2.1", 2);
	struct sxdp_keys l = { 0 }, add = { 0 };
	struct sieve_xdp_config cfg;
	char err[256] = "";
	uint32_t gen;
	int fd;

	list_of(&l, (const char *const[]){ "10.0.0.0/22", "10.0.9.0/24", "10.0.8.0/22" }, 3);
	if (!expect(!sxdp_rebuild_probes(&h, &l, backend, 1000, 1024, 1, err, sizeof(err)),
		    "build: %s", err) || !expect(!sxdp_read_config(&h, &cfg, NULL), "config"))
		goto out;
	/* Room for a second length: a /23 gets it live; the /22s stay at /24. */
	cfg.max_probes = 2;
	fd = bpf_map_get_fd_by_id(live_bloom_id());
	expect(fd >= 0 && !sxdp_publish_config(&h, &cfg, fd, -1), "a second probe allowed");
	if (fd >= 0)
		close(fd);
	list_of(&add, (const char *const[]){ "10.0.0.0/23" }, 1);
	expect(add_entries(&l, &add) == 0, "the /23 rebuilt");
	gen = live_gen_seq();
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.nr_v4_lens == 2 &&
	       cfg.live_v4_lens == 1U << 23, "lengths %u, inserted %#x", cfg.nr_v4_lens,
	       cfg.live_v4_lens);
	expect(remove_live(&l, (const char *const[]){ "10.0.0.0/22" }, 1) == 0, "the /22 rebuilt");
	passes_removed("the removed /22, outside the /23", &in2);
	drops("the removed /22, inside the /23", &in0, SIEVE_XDP_PREFIX);
	expect(remove_live(&l, (const char *const[]){ "10.0.9.0/24" }, 1) == 0, "the /24 rebuilt");
	drops("the /24 inside the other /22", &in8, SIEVE_XDP_PREFIX);
	expect(live_gen_seq() == gen, "generation after live removals");
out:
	reset_probes();
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
}

/*
 * A removal that would ask the store too many times rebuilds instead: IPv6
 * /127s at their own probe length ask every length below it (127 each),
 * so 1100 of them pass the bound of lookups, not that of keys.
 */
static void test_removed_lookup_bound(void)
{
	enum { N = 1200, GONE = 1100 };
	struct sxdp_keys l = { 0 };
	const char **del = NULL;
	char (*text)[64] = NULL;
	char err[256] = "";
	size_t i;

	text = calloc(N, sizeof(*text));
	del = calloc(N, sizeof(*del));
	for (i = 0; text && del && i < N; i++) {
		snprintf(text[i], sizeof(text[i]), "2001:db8:%zx::/127", i + 1);
		del[i] = text[i];
	}
	if (!expect(text && del, "calloc"))
		goto out;
	list_of(&l, del, N);
	if (!expect(!sxdp_rebuild_probes(&h, &l, backend, 1000, 16384, 1, err, sizeof(err)),
		    "build: %s", err))
		goto out;
	expect(remove_live(&l, del, GONE) == 1, "%d /127s removed without a rebuild", GONE);
out:
	reset_probes();
	sxdp_keys_free(&l);
	free(text);
	free(del);
}

/* Past the bound, the removal rebuilds: a new generation, no removals. */
static void test_removed_bound(void)
{
	struct sxdp_keys l = { 0 };
	struct pkt_spec s = { .payload = 0 };
	struct sieve_xdp_config cfg;
	const char **del = NULL;
	char (*text)[64] = NULL;
	uint8_t buf[PKT_MAX];
	size_t i, n = 400, passed = 0;
	uint32_t gen, max;

	text = calloc(n, sizeof(*text));
	del = calloc(n, sizeof(*del));
	for (i = 0; text && del && i < n; i++) {
		snprintf(text[i], sizeof(text[i]), "10.1.%zu.%zu", i / 250, i % 250 + 1);
		del[i] = text[i];
	}
	if (!expect(text && del, "calloc"))
		goto out;
	list_of(&l, del, n);
	if (!set_list(&l, 0, 1000) || !expect(!sxdp_read_config(&h, &cfg, NULL), "config"))
		goto out;
	max = sxdp_removed_max(&cfg);
	gen = cfg.gen_seq;
	if (!expect(max < n / 2 + 100 && max > 100, "bound %u for %zu entries", max, n))
		goto out;
	expect(remove_live(&l, del, max - 10) == 0, "%u removals rebuilt", max - 10);
	expect(live_gen_seq() == gen && live_removed() == max - 10, "removed %u", live_removed());
	expect(remove_live(&l, del + max - 10, 20) == 1, "past the bound, live");
	expect(live_gen_seq() != gen && live_removed() == 0, "rebuilt: generation %u, removed %u",
	       live_gen_seq(), live_removed());
	for (i = 0; i < n; i++) {
		sxdp_parse_entry(text[i], &s.flow, &(const char *){ NULL });
		s.flow.dport = s.flow.sport = htons(1);
		s.flow.proto = IPPROTO_TCP;
		inet_pton(AF_INET, "192.0.2.1", s.flow.daddr);
		passed += run_pkt(buf, pkt_build(&s, buf)) == XDP_PASS;
	}
	expect(passed == max + 10, "%zu passed, want the %u removed", passed, max + 10);
out:
	sxdp_keys_free(&l);
	free(text);
	free(del);
}

static int store_has(void *ctx, const struct sieve_xdp_key *entry, bool *found)
{
	return sxdp_store_has(ctx, "t", false, entry, found);
}

/*
 * A removal killed after its removed map was written, before the config
 * took the store's version: the maps are behind the store, and the next
 * sync rebuilds them, into a generation without removals. Then a live
 * removal through the store's point lookups keeps a shared key.
 */
static void test_removed_cut_short(void)
{
	struct pkt_spec a = tcp("198.51.100.7", 1, "192.0.2.1", 2);
	struct pkt_spec in1 = tcp("10.0.1.9", 1, "192.0.2.1", 2);
	struct pkt_spec in0 = tcp("10.0.0.9", 1, "192.0.2.1", 2);
	struct sxdp_store_attrs at = { .origin = "test", .now = 1 };
	char dir[] = "/tmp/sieve-xdp-store-XXXXXX", err[512] = "";
	struct sxdp_keys l = { 0 }, gone = { 0 };
	struct sieve_xdp_config cfg;
	struct sxdp_store *s = NULL;
	uint64_t version;
	bool rebuilt;
	uint32_t gen;

	list_of(&l, (const char *const[]){ "198.51.100.7", "10.0.0.0/23", "10.0.1.0/24" }, 3);
	list_of(&gone, (const char *const[]){ "198.51.100.7" }, 1);
	if (!expect(mkdtemp(dir) != NULL, "mkdtemp") ||
	    !expect(!sxdp_store_open(dir, &s, err, sizeof(err)), "store: %s", err))
		goto out;
	expect(!sxdp_store_add(s, "t", l.keys, l.n, &at, NULL, err, sizeof(err)), "add: %s", err);
	if (!expect(!sxdp_build_from_store(&h, s, "t", &(struct sxdp_iface_params){
			.flags = backend, .fpp_ppb = 1000, .capacity = 1024, .max_probes = 1 },
			&version, err, sizeof(err)), "build: %s", err))
		goto out;
	/* The store commits; the maps take the removal, but not the version. */
	expect(!sxdp_store_remove(s, "t", gone.keys, gone.n, NULL, err, sizeof(err)), "remove: %s",
	       err);
	sxdp_keys_remove(&l, &gone.keys[0]);
	expect(sxdp_remove_live(&h, &gone, list_has, &l, version) == 0, "live removal");
	passes_removed("the removed source, cut short", &a);
	expect(!sxdp_iface_sync(&h, s, "t", &rebuilt, err, sizeof(err)) && rebuilt,
	       "a cut-short removal was not rebuilt: %s", err);
	expect(live_removed() == 0, "%u removed after the rebuild", live_removed());
	passes("the removed source, rebuilt", &a);
	/* As an unblock runs (ops.c): the store first, then its point lookups. */
	gen = live_gen_seq();
	sxdp_keys_free(&gone);
	list_of(&gone, (const char *const[]){ "10.0.0.0/23" }, 1);
	expect(!sxdp_store_remove(s, "t", gone.keys, gone.n, NULL, err, sizeof(err)), "remove: %s",
	       err);
	expect(!sxdp_store_version(s, "t", &version), "version");
	expect(sxdp_remove_live(&h, &gone, store_has, s, version) == 0, "live removal of the /23");
	passes_removed("in the unblocked /23", &in0);
	drops("in the /24 it shared", &in1, SIEVE_XDP_PREFIX);
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.gen_seq == gen &&
	       cfg.store_version == version, "generation %u (want %u), version %llu (want %llu)",
	       cfg.gen_seq, gen, (unsigned long long)cfg.store_version,
	       (unsigned long long)version);
	expect(!sxdp_iface_sync(&h, s, "t", &rebuilt, err, sizeof(err)) && !rebuilt,
	       "maps in step rebuilt: %s", err);
out:
	reset_probes();
	temp_store_close(s, dir);
	sxdp_keys_free(&l);
	sxdp_keys_free(&gone);
}

/* ---- the IPv4 prefix table ---- */

/* The live config's flag and probe lengths: the table, and no IPv4 walk. */
static bool table_live(const char *what)
{
	struct sieve_xdp_config cfg = { 0 };

	return expect(!sxdp_read_config(&h, &cfg, NULL) && (cfg.flags & SIEVE_XDP_F_V4TABLE) &&
		      !cfg.nr_v4_lens, "%s: flags %#x, %u IPv4 probe lengths", what, cfg.flags,
		      cfg.nr_v4_lens);
}

/* An IPv4 address as check_edges' oracle takes it. */
static u128 v4(const char *addr)
{
	struct in_addr a;

	inet_pton(AF_INET, addr, &a);
	return (u128)ntohl(a.s_addr) << 96;
}

/*
 * Three random prefixes of every length /1-/32 (hosts at /32): every
 * first and last address dropped, every neighbour just outside passed
 * unless another covers it; IPv4 prefixes are not in the filter.
 */
static void test_v4table_every_length(void)
{
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_config cfg;
	unsigned int len, i;
	double t0;

	rng_state = 23;
	for (len = 1; len <= 32; len++)
		for (i = 0; i < 3; i++) {
			struct sieve_xdp_key k = random_prefix(SIEVE_XDP_V4, len);

			sxdp_keys_add(&l, &k);
		}
	sxdp_keys_sort(&l);
	t0 = seconds();
	if (!set_list(&l, 0, 1000) || !table_live("every length"))
		goto out;
	printf("    a build of %zu entries with the table: %.1f ms\n", l.n, (seconds() - t0) * 1e3);
	check_edges(&l, "v4 /1-/32 in the table");
	/* Only the hosts (SRC) went into the filter. */
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.keys == 3,
	       "%llu keys in the filter, want the 3 hosts", (unsigned long long)cfg.keys);
	/* Exact mode has nothing to confirm for them: the same verdicts. */
	if (set_list(&l, SIEVE_XDP_F_EXACT, 1000))
		check_edges(&l, "v4 /1-/32 in the table, exact mode");
out:
	sxdp_keys_free(&l);
}

/*
 * Nested and overlapping prefixes, long and short, removed live one at a
 * time (inner first, then outer, then the other way): every verdict as
 * the oracle says after each step, and no generation rebuilt.
 */
static void test_v4table_nested_live(void)
{
	static const char *const e[] = { "10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/23",
					 "10.1.2.0/24", "10.1.3.0/25", "10.1.3.128/26",
					 "10.1.3.192/31", "10.1.3.200", "10.1.4.0/30", "10.1.4.64/27",
					 "10.1.4.96/28", "192.0.2.0/29" };
	static const char *const order[] = { "10.1.4.96/28", "10.1.0.0/16", "10.1.3.0/25",
					     "10.0.0.0/8", "10.1.2.0/23", "10.1.4.64/27",
					     "10.1.3.192/31", "10.1.2.0/24", "10.1.4.0/30",
					     "10.1.3.128/26", "192.0.2.0/29" };
	struct sxdp_keys l = { 0 };
	uint32_t gen;
	size_t i;

	list_of(&l, e, sizeof(e) / sizeof(e[0]));
	if (!set_list(&l, 0, 1000) || !table_live("nested"))
		goto out;
	check_edges(&l, "nested, all");
	gen = live_gen_seq();
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		char what[64];

		expect(remove_live(&l, &order[i], 1) == 0, "%s: the removal rebuilt", order[i]);
		snprintf(what, sizeof(what), "without %s", order[i]);
		check_edges(&l, what);
	}
	/* Only the host is left, in the filter. */
	expect(verdict_from(SIEVE_XDP_V4, v4("10.1.3.200")) == XDP_DROP, "the host still dropped");
	expect(verdict_from(SIEVE_XDP_V4, v4("10.1.3.201")) == XDP_PASS &&
	       verdict_from(SIEVE_XDP_V4, v4("10.200.0.1")) == XDP_PASS, "nothing else dropped");
	/* And back, live, outer first. */
	for (i = sizeof(order) / sizeof(order[0]); i-- > 0;) {
		struct sxdp_keys add = { 0 };

		list_of(&add, &order[i], 1);
		expect(add_entries(&l, &add) == 0, "%s: the add rebuilt", order[i]);
		sxdp_keys_free(&add);
	}
	check_edges(&l, "all added back live");
	expect(live_gen_seq() == gen, "generation %u after live changes, want %u", live_gen_seq(),
	       gen);
out:
	sxdp_keys_free(&l);
}

/*
 * A /8 blocked and unblocked live around what stays (a /16 inside it, a
 * /28 inside that, a /30 beside): verdicts before and after, no new
 * generation, and the work of each change timed (the table alone).
 */
static void test_v4table_live_slash8(void)
{
	static const char *const e[] = { "10.20.0.0/16", "10.20.30.32/28", "10.99.1.4/30",
					 "192.0.2.1" };
	static const char *const slash8[] = { "10.0.0.0/8" };
	struct sxdp_keys l = { 0 }, add = { 0 };
	double t0, t_block, t_unblock;
	uint32_t gen;

	list_of(&l, e, 4);
	if (!set_list(&l, 0, 1000) || !table_live("/8"))
		goto out;
	gen = live_gen_seq();
	expect(verdict_from(SIEVE_XDP_V4, v4("10.1.2.3")) == XDP_PASS &&
	       verdict_from(SIEVE_XDP_V4, v4("10.255.255.255")) == XDP_PASS,
	       "the /8 dropped before its block");
	list_of(&add, slash8, 1);
	/* The table's part of the block timed alone (add_entries repeats it: nothing to do). */
	t0 = seconds();
	expect(!sxdp_v4table_add(&h, &add), "the /8 into the table");
	t_block = seconds() - t0;
	expect(add_entries(&l, &add) == 0, "the /8's block rebuilt");
	check_edges(&l, "with the /8");
	expect(verdict_from(SIEVE_XDP_V4, v4("10.1.2.3")) == XDP_DROP &&
	       verdict_from(SIEVE_XDP_V4, v4("11.0.0.0")) == XDP_PASS &&
	       verdict_from(SIEVE_XDP_V4, v4("9.255.255.255")) == XDP_PASS, "the /8's verdicts");
	/* The same for the unblock: the /8's /24s recomputed from what remains. */
	sxdp_keys_remove(&l, &add.keys[0]);
	t0 = seconds();
	expect(!sxdp_v4table_remove(&h, &add, &l), "the /8 out of the table");
	t_unblock = seconds() - t0;
	sxdp_keys_add(&l, &add.keys[0]);
	sxdp_keys_sort(&l);
	expect(remove_live(&l, slash8, 1) == 0, "the /8's unblock rebuilt");
	check_edges(&l, "the /8 unblocked");
	expect(verdict_from(SIEVE_XDP_V4, v4("10.1.2.3")) == XDP_PASS &&
	       verdict_from(SIEVE_XDP_V4, v4("10.20.30.47")) == XDP_DROP &&
	       verdict_from(SIEVE_XDP_V4, v4("10.20.30.48")) == XDP_DROP &&
	       verdict_from(SIEVE_XDP_V4, v4("10.99.1.7")) == XDP_DROP &&
	       verdict_from(SIEVE_XDP_V4, v4("10.99.1.8")) == XDP_PASS,
	       "what was inside the /8 is as before");
	expect(live_gen_seq() == gen, "generation %u after the /8, want %u", live_gen_seq(), gen);
	printf("    a /8 over a /28 live, the table's work: block %.2f ms (a grace period for "
	       "the /28's chunk), unblock %.2f ms\n", t_block * 1e3, t_unblock * 1e3);
	/* A /8 over no longer prefix: nothing to wait for. */
	add.keys[0].saddr[0] = htonl(0x0b000000);
	t0 = seconds();
	expect(!sxdp_v4table_add(&h, &add), "11.0.0.0/8 into the table");
	t_block = seconds() - t0;
	expect(verdict_from(SIEVE_XDP_V4, v4("11.1.2.3")) == XDP_DROP, "11.0.0.0/8 dropped");
	t0 = seconds();
	expect(!sxdp_v4table_remove(&h, &add, &l), "11.0.0.0/8 out of the table");
	t_unblock = seconds() - t0;
	expect(verdict_from(SIEVE_XDP_V4, v4("11.1.2.3")) == XDP_PASS, "11.0.0.0/8 passed");
	printf("    a /8 live, the table's work: block %.2f ms, unblock %.2f ms\n",
	       t_block * 1e3, t_unblock * 1e3);
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
}

struct chunk_race {
	volatile bool stop;
	uint64_t runs, blocked_passed, other_dropped;
};

/* A source under a /26 that stays, and one no prefix ever covers, in the same /24. */
static void *chunk_race_traffic(void *arg)
{
	struct chunk_race *r = arg;
	struct pkt_spec in = tcp("198.51.100.7", 1, "192.0.2.1", 2);
	struct pkt_spec out = tcp("198.51.100.250", 1, "192.0.2.1", 2);
	uint8_t b[PKT_MAX], a[PKT_MAX];
	size_t bl = pkt_build(&in, b), al = pkt_build(&out, a);

	while (!r->stop) {
		r->blocked_passed += run_pkt(b, bl) == XDP_PASS;
		r->other_dropped += run_pkt(a, al) == XDP_DROP;
		r->runs++;
	}
	return NULL;
}

/*
 * The chunk of one /24 rewritten 400 times under traffic (/28s beside a
 * /26 blocked and unblocked live): a packet sees the old chunk or the
 * new one, never neither, never another /24's.
 */
static void test_v4table_chunk_under_traffic(void)
{
	static const char *const e[] = { "198.51.100.0/26", "203.0.113.0/25" };
	static const char *const churn[] = { "198.51.100.64/28", "198.51.100.128/27",
					     "203.0.113.128/30" };
	struct sxdp_keys l = { 0 };
	struct chunk_race r = { 0 };
	pthread_t t;
	int i;

	list_of(&l, e, 2);
	if (!set_list(&l, 0, 1000) || !table_live("chunk race"))
		goto out;
	pthread_create(&t, NULL, chunk_race_traffic, &r);
	for (i = 0; i < 200; i++) {
		struct sxdp_keys add = { 0 };

		list_of(&add, churn, 3);
		add_entries(&l, &add);
		remove_live(&l, churn, 3);
		sxdp_keys_free(&add);
	}
	r.stop = true;
	pthread_join(t, NULL);
	expect(r.runs > 0, "traffic ran during the changes");
	expect(!r.blocked_passed, "%llu of %llu packets under the /26 passed",
	       (unsigned long long)r.blocked_passed, (unsigned long long)r.runs);
	expect(!r.other_dropped, "%llu of %llu packets under no prefix dropped",
	       (unsigned long long)r.other_dropped, (unsigned long long)r.runs);
	check_edges(&l, "after the churn");
	printf("    %llu packet pairs during 400 chunk changes\n", (unsigned long long)r.runs);
out:
	sxdp_keys_free(&l);
}



/* @n /25s, each in a /24 of its own from @base on. */
static void slash25s(struct sxdp_keys *l, uint32_t base, uint32_t n)
{
	struct sieve_xdp_key k = { .kind = SIEVE_XDP_PREFIX, .family = SIEVE_XDP_V4,
				   .prefix_len = 25 };
	uint32_t i;

	for (i = 0; i < n; i++) {
		k.saddr[0] = htonl(base + (i << 8));
		sxdp_keys_add(l, &k);
	}
	sxdp_keys_sort(l);
}

/*
 * The chunk map's bound, half of it (so every chunk can change at once):
 * a list past it refused whole, nothing written, the live generation
 * kept; at it, a live block giving one more /24 a chunk refused, nothing
 * written; an unblock still goes live, and then the block fits.
 */
static void test_v4table_chunk_bound(void)
{
	const uint32_t max = SIEVE_XDP_V4_MAX_CHUNKS / 2;
	static const char *const cover[] = { "192.0.2.0/24" };
	struct sxdp_keys l = { 0 }, one = { 0 }, gone = { 0 };
	uint64_t covered = 0, chunks = 0, bytes = 0;
	char err[256] = "";
	uint32_t gen;
	double t0;
	int ret;

	list_of(&l, cover, 1);
	if (!set_list(&l, 0, 1000) || !table_live("chunk bound"))
		goto out;
	gen = live_gen_seq();
	slash25s(&l, 0x0b000000, max + 1);
	ret = sxdp_rebuild(&h, &l, backend, 1000, l.n, err, sizeof(err));
	expect(ret == -ENOSPC, "a list of %u /24s with chunks: %d (%s), want -ENOSPC", max + 1,
	       ret, err);
	expect(live_gen_seq() == gen, "the refused list swapped a generation in");
	expect(!sxdp_v4table_counts(&h, &covered, &chunks, &bytes) && chunks == 0 && covered == 1,
	       "after the refused list: %llu chunks, %llu covered, want 0 and 1",
	       (unsigned long long)chunks, (unsigned long long)covered);
	/* At the bound: the last /25 (the highest /24) out. */
	l.n--;
	if (!set_list(&l, 0, 1000))
		goto out;
	slash25s(&one, 0x0e000000, 1);
	t0 = seconds();
	expect(sxdp_v4table_add(&h, &one) == -ENOSPC, "a live block past the bound");
	/* The bound's cost: a scan of the 4 MiB top array. */
	printf("    a live block refused at the bound: %.2f ms\n", (seconds() - t0) * 1e3);
	expect(!sxdp_v4table_counts(&h, &covered, &chunks, &bytes) && chunks == max,
	       "after the refused block: %llu chunks, want %u", (unsigned long long)chunks, max);
	expect(verdict_from(SIEVE_XDP_V4, v4("14.0.0.1")) == XDP_PASS, "the refused block drops");
	/* An unblock goes live at the bound, and makes room. */
	slash25s(&gone, 0x0b000000, 1);
	sxdp_keys_free(&l);
	list_of(&l, cover, 1);
	slash25s(&l, 0x0b000100, max - 1);
	expect(!sxdp_v4table_remove(&h, &gone, &l), "an unblock at the bound");
	expect(verdict_from(SIEVE_XDP_V4, v4("11.0.0.1")) == XDP_PASS, "the unblocked /25 drops");
	expect(!sxdp_v4table_add(&h, &one), "a block with room");
	expect(verdict_from(SIEVE_XDP_V4, v4("14.0.0.1")) == XDP_DROP, "the block passes");
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&one);
	sxdp_keys_free(&gone);
}
/*
 * A build killed after its swap, before the IPv4 prefix table lost what
 * the list lost: the maps must not claim the store's version, or no
 * command would ever take the gone prefix out of the table.
 */
static void test_v4table_build_killed_before_sync(void)
{
	static const char *const before[] = { "198.51.100.0/24", "203.0.113.0/25" };
	static const char *const after[] = { "203.0.113.0/25" };
	struct pkt_spec gone = tcp("198.51.100.7", 5, "192.0.2.10", 80);
	struct pkt_spec kept = tcp("203.0.113.9", 5, "192.0.2.10", 80);
	struct sxdp_store_attrs a = { .origin = "test", .now = 1 };
	char dir[] = "/tmp/sieve-xdp-store-XXXXXX", err[512] = "";
	struct sxdp_keys l = { 0 }, next = { 0 };
	struct sieve_xdp_config cfg;
	struct sxdp_store *s = NULL;
	uint64_t version;
	bool rebuilt;
	pid_t pid;
	int st = 0;

	list_of(&l, before, 2);
	list_of(&next, after, 1);
	if (!expect(mkdtemp(dir) != NULL, "mkdtemp") ||
	    !expect(!sxdp_store_open(dir, &s, err, sizeof(err)), "store: %s", err))
		goto out;
	expect(!sxdp_store_add(s, "t", l.keys, l.n, &a, NULL, err, sizeof(err)), "add: %s", err);
	if (!expect(!sxdp_build_from_store(&h, s, "t", &(struct sxdp_iface_params){
			.fpp_ppb = 1000, .capacity = 1024 }, &version, err, sizeof(err)),
		    "build: %s", err) || !table_live("killed build"))
		goto out;
	drops("the prefix before", &gone, SIEVE_XDP_PREFIX);
	expect(!sxdp_store_replace_origin(s, "t", next.keys, next.n, &a, NULL, NULL, err,
					  sizeof(err)), "replace: %s", err);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setenv("SIEVE_TEST_KILL_BUILD", "swapped", 1);
		sxdp_iface_sync(&h, s, "t", &rebuilt, err, sizeof(err));
		_exit(0);
	}
	if (!expect(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st),
		    "the build was not killed at its swap"))
		goto out;
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.store_version != 2,
	       "killed before the table's sync, the maps claim the store's version 2");
	expect(!sxdp_iface_sync(&h, s, "t", &rebuilt, err, sizeof(err)) && rebuilt,
	       "the next sync did not rebuild: %s", err);
	passes("the prefix the list lost, after the next sync", &gone);
	drops("the prefix kept", &kept, SIEVE_XDP_PREFIX);
	expect(!sxdp_read_config(&h, &cfg, NULL) && cfg.store_version == 2,
	       "after the sync: version %llu, want 2", (unsigned long long)cfg.store_version);
out:
	temp_store_close(s, dir);
	sxdp_keys_free(&l);
	sxdp_keys_free(&next);
}

/*
 * A config without SIEVE_XDP_F_V4TABLE (an older sieve's, or one built
 * where the pins have no table) is judged by the walk, whatever the
 * table holds; the next build on a handle with the table moves the
 * prefixes to it.
 */
static void test_v4table_older_config_walks(void)
{
	static const char *const e[] = { "10.0.0.0/8", "198.51.100.0/25", "192.0.2.1" };
	int top = h.v4top_fd, chunk = h.v4chunk_fd;
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_config cfg;
	bool built;

	list_of(&l, e, 3);
	/* The table emptied first, by a build of nothing. */
	set_list(&(struct sxdp_keys){ 0 }, 0, 1000);
	h.v4top_fd = h.v4chunk_fd = -1;
	built = set_list(&l, 0, 1000);
	h.v4top_fd = top;
	h.v4chunk_fd = chunk;
	if (!built)
		goto out;
	expect(!sxdp_read_config(&h, &cfg, NULL) && !(cfg.flags & SIEVE_XDP_F_V4TABLE) &&
	       cfg.nr_v4_lens == 2, "the walk's config: flags %#x, %u lengths", cfg.flags,
	       cfg.nr_v4_lens);
	check_edges(&l, "walked, the table empty");
	if (set_list(&l, 0, 1000) && table_live("rebuilt with the table"))
		check_edges(&l, "rebuilt into the table");
out:
	sxdp_keys_free(&l);
}


/* ---- the host bitmap ---- */

/* The host bitmap's bit of @addr's /24. */
static bool host_bit(const char *addr)
{
	__u32 slot = (__u32)(v4(addr) >> 104), word = sieve_xdp_v4_host_word(slot);
	__u64 w = 0;

	return !bpf_map_lookup_elem(h.v4host_fd, &word, &w) && (w & sieve_xdp_v4_host_bit(slot));
}

/* Clears (@on false) or sets the bit of @addr's /24 by hand, as no loader would. */
static void host_bit_force(const char *addr, bool on)
{
	__u32 slot = (__u32)(v4(addr) >> 104), word = sieve_xdp_v4_host_word(slot);
	__u64 w = 0;

	bpf_map_lookup_elem(h.v4host_fd, &word, &w);
	w = on ? w | sieve_xdp_v4_host_bit(slot) : w & ~sieve_xdp_v4_host_bit(slot);
	bpf_map_update_elem(h.v4host_fd, &word, &w, BPF_ANY);
}

/*
 * Hosts blocked and unblocked live in one /24: each sets the /24's bit
 * and is dropped; the bit stays while another host of the /24 is on the
 * list and clears with the last; a /24 without a host has none. The
 * program trusts it: with the bit cleared by hand a blocked host passes
 * (its probe skipped), so the bit is what the tests above saw work.
 */
static void test_v4host_live(void)
{
	static const char *const e[] = { "203.0.113.0/25", "192.0.2.99" };
	static const char *const h1[] = { "198.51.100.7" }, *const h2[] = { "198.51.100.9" };
	struct pkt_spec p1 = tcp("198.51.100.7", 5, "192.0.2.10", 80);
	struct pkt_spec p2 = tcp("198.51.100.9", 5, "192.0.2.10", 80);
	struct sxdp_keys l = { 0 }, add = { 0 };
	struct sieve_xdp_config cfg;
	uint32_t gen;

	list_of(&l, e, 2);
	if (!set_list(&l, 0, 1000) || !table_live("host bitmap") ||
	    !expect(!sxdp_read_config(&h, &cfg, NULL) && (cfg.flags & SIEVE_XDP_F_V4HOSTS),
		    "the build did not flag the host bitmap: flags %#x", cfg.flags))
		goto out;
	gen = live_gen_seq();
	expect(host_bit("192.0.2.99") && !host_bit("198.51.100.7") && !host_bit("203.0.113.1"),
	       "after the build: bits for the host's /24 only");
	passes("a host not yet blocked", &p1);
	list_of(&add, h1, 1);
	expect(add_entries(&l, &add) == 0 && host_bit("198.51.100.7"), "the first host, live");
	drops("the first host, added live", &p1, SIEVE_XDP_SRC);
	sxdp_keys_free(&add);
	list_of(&add, h2, 1);
	expect(add_entries(&l, &add) == 0, "the second host, live");
	drops("the second host, added live", &p2, SIEVE_XDP_SRC);
	expect(remove_live(&l, h1, 1) == 0 && host_bit("198.51.100.9"),
	       "the first host's unblock cleared the bit of a /24 that still holds one");
	drops("the second host, after the first left", &p2, SIEVE_XDP_SRC);
	expect(verdict_from(SIEVE_XDP_V4, v4("198.51.100.7")) == XDP_PASS, "the first host passes");
	expect(remove_live(&l, h2, 1) == 0 && !host_bit("198.51.100.9"),
	       "the last host's unblock left the bit set");
	expect(verdict_from(SIEVE_XDP_V4, v4("198.51.100.9")) == XDP_PASS, "the last host passes");
	/* Back, then the bit taken away by hand: the probe is skipped. */
	expect(add_entries(&l, &add) == 0, "the second host again");
	drops("the second host, again", &p2, SIEVE_XDP_SRC);
	host_bit_force("198.51.100.9", false);
	expect(verdict_from(SIEVE_XDP_V4, v4("198.51.100.9")) == XDP_PASS,
	       "without its bit the host was probed all the same");
	host_bit_force("198.51.100.9", true);
	drops("the second host, its bit back", &p2, SIEVE_XDP_SRC);
	expect(live_gen_seq() == gen, "generation %u after live changes, want %u", live_gen_seq(),
	       gen);
out:
	sxdp_keys_free(&l);
	sxdp_keys_free(&add);
}

/*
 * Builds: a rebuild sets the bits of its hosts and, after its swap,
 * clears those of /24s its list holds no host in; a build on pins
 * without the bitmap leaves the flag off and probes every packet.
 */
static void test_v4host_rebuild(void)
{
	static const char *const a[] = { "198.51.100.7", "203.0.113.0/24" };
	static const char *const b[] = { "192.0.2.77", "203.0.113.0/24" };
	struct sxdp_keys la = { 0 }, lb = { 0 };
	struct sieve_xdp_config cfg;
	int fd = h.v4host_fd;
	bool built;

	list_of(&la, a, 2);
	list_of(&lb, b, 2);
	if (!set_list(&la, 0, 1000))
		goto out;
	expect(host_bit("198.51.100.7") && !host_bit("192.0.2.77"), "list a's bits");
	if (!set_list(&lb, 0, 1000))
		goto out;
	expect(!host_bit("198.51.100.7") && host_bit("192.0.2.77"), "list b's bits after a rebuild");
	check_edges(&lb, "list b");
	h.v4host_fd = -1;
	built = set_list(&la, 0, 1000);
	h.v4host_fd = fd;
	if (!built)
		goto out;
	expect(!sxdp_read_config(&h, &cfg, NULL) && !(cfg.flags & SIEVE_XDP_F_V4HOSTS),
	       "a build without the bitmap flagged it: flags %#x", cfg.flags);
	/* The bitmap still says list b: a config without the flag must not read it. */
	check_edges(&la, "list a, built without the bitmap");
out:
	sxdp_keys_free(&la);
	sxdp_keys_free(&lb);
}

/*
 * The store's answer for a /24 (sxdp_store_has_v4_host_in): its sources
 * only, not its prefixes, not a /24 whose text begins the same way
 * (198.51.10. against 198.51.100.), not the allowlist.
 */
static void test_v4host_store(void)
{
	static const char *const e[] = { "198.51.100.7", "198.51.10.0/25", "198.51.1.200",
					 "tcp:198.51.10.5:80" };
	struct sxdp_store_attrs a = { .origin = "test", .now = 1 };
	char dir[] = "/tmp/sieve-xdp-store-XXXXXX", err[512] = "";
	struct sieve_xdp_key allowed;
	struct sxdp_keys l = { 0 };
	struct sxdp_store *s = NULL;
	bool f100 = false, f10 = true, f1 = false, f2 = true;
	const char *why;

	list_of(&l, e, 4);
	if (!expect(mkdtemp(dir) != NULL, "mkdtemp") ||
	    !expect(!sxdp_store_open(dir, &s, err, sizeof(err)), "store: %s", err))
		goto out;
	expect(!sxdp_store_add(s, "t", l.keys, l.n, &a, NULL, err, sizeof(err)), "add: %s", err);
	expect(!sxdp_parse_entry("198.51.2.1", &allowed, &why), "parse");
	a.allow = true;
	expect(!sxdp_store_add(s, "t", &allowed, 1, &a, NULL, err, sizeof(err)), "allow: %s", err);
	expect(!sxdp_store_has_v4_host_in(s, "t", 198 << 16 | 51 << 8 | 100, &f100) &&
	       !sxdp_store_has_v4_host_in(s, "t", 198 << 16 | 51 << 8 | 10, &f10) &&
	       !sxdp_store_has_v4_host_in(s, "t", 198 << 16 | 51 << 8 | 1, &f1) &&
	       !sxdp_store_has_v4_host_in(s, "t", 198 << 16 | 51 << 8 | 2, &f2),
	       "the store's lookups");
	expect(f100 && !f10 && f1 && !f2, "hosts in 198.51.100/24 %d, 198.51.10/24 %d (none), "
	       "198.51.1/24 %d, 198.51.2/24 %d (allowlist only)", f100, f10, f1, f2);
out:
	temp_store_close(s, dir);
	sxdp_keys_free(&l);
}

/*
 * Cases of the probe-length walk over IPv4 prefixes (counts of keys and
 * lengths, the removed digests): on a handle without the IPv4 prefix
 * table, as the pins of an older sieve are, builds expand IPv4 prefixes
 * into the filter again, and the walk still has to hold for them.
 */
static void without_v4table(void (*fn)(void))
{
	int top = h.v4top_fd, chunk = h.v4chunk_fd;

	h.v4top_fd = h.v4chunk_fd = -1;
	fn();
	h.v4top_fd = top;
	h.v4chunk_fd = chunk;
}

static void test_expansion_live_block_walk(void)
{
	without_v4table(test_expansion_live_block);
}

static void test_removed_live_walk(void)
{
	without_v4table(test_removed_live);
}

static void test_removed_exact_walk(void)
{
	without_v4table(test_removed_exact);
}

static void test_removed_after_live_length_walk(void)
{
	without_v4table(test_removed_after_live_length);
}

static void test_removed_cut_short_walk(void)
{
	without_v4table(test_removed_cut_short);
}

/* ---- samples ---- */

static int sample_rate_set(uint32_t rate, uint32_t flags)
{
	struct sieve_xdp_sample_cfg c = { .rate = rate, .flags = flags };
	uint32_t zero = 0;

	return bpf_map_update_elem(bpf_map__fd(skel->maps.sieve_sample_cfg), &zero, &c, BPF_ANY) ?
	       -errno : 0;
}

/* The samples read from the ring, at most SAMPLES_KEPT of them kept. */
#define SAMPLES_KEPT	16
struct samples_read {
	struct sieve_xdp_sample s[SAMPLES_KEPT];
	size_t n;
};

static int sample_read_one(void *ctx, void *data, size_t size)
{
	struct samples_read *r = ctx;

	if (r->n < SAMPLES_KEPT && size == sizeof(r->s[0]))
		memcpy(&r->s[r->n], data, size);
	r->n++;
	return 0;
}

/* Reads what the ring holds into @r (emptied first); the count, or -errno. */
static int samples_drain(struct samples_read *r)
{
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(skel->maps.sieve_samples),
						  sample_read_one, r, NULL);
	int ret;

	memset(r, 0, sizeof(*r));
	if (!rb)
		return -errno;
	ret = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return ret < 0 ? ret : (int)r->n;
}

/* ---- why ---- */

/*
 * `sieve xdp why` runs its packet through a second instance of the
 * program on the live maps: it must answer as the live one does (the host
 * bitmap, which the IPv4 source's check reads first, is the live one) and
 * leave nothing behind in what the program writes: the counters, the
 * drops per origin, the samples' ring and bucket.
 */
static void test_why_private_state(void)
{
	static const char *const e[] = { "198.51.100.7" };
	static const uint32_t ids[] = { 3 };
	struct sieve_xdp_count before[SIEVE_XDP_ORIGIN_SLOTS], after[SIEVE_XDP_ORIGIN_SLOTS];
	struct sxdp_why_packet p = { .family = SIEVE_XDP_V4, .proto = IPPROTO_TCP,
				     .sport = htons(1000), .dport = htons(22) };
	struct sxdp_iface_report r = { 0 };
	struct sieve_xdp_stats s0, s1;
	struct sxdp_origins o = { 0 };
	struct sxdp_why_verdict v;
	struct bpf_prog_info info = { 0 };
	struct samples_read sr;
	__u32 len = sizeof(info);
	struct sxdp_keys l = { 0 };
	int ret;

	list_of(&l, e, 1);
	origins_of(&o, e, ids, 1);
	h.origins = &o;
	if (!set_list(&l, SIEVE_XDP_F_EXACT, 1000) ||
	    !expect(!sxdp_read_config(&h, &r.cfg, NULL), "config") ||
	    !expect(!bpf_obj_get_info_by_fd(prog_fd, &info, &len), "prog info"))
		goto out;
	r.prog.id = info.id;
	sxdp_tag_hex(info.tag, r.prog.tag);
	inet_pton(AF_INET, "198.51.100.7", p.saddr);
	inet_pton(AF_INET, "192.0.2.1", p.daddr);
	expect(!sample_rate_set(1000, SIEVE_XDP_SAMPLE_ALLOWED), "sample rate");
	samples_drain(&sr);
	s0 = stats_now();
	if (!origin_drops(before))
		goto out;
	ret = sxdp_why_verdict(&h, &r, &p, &v);
	if (expect(!ret, "why: %s", strerror(-ret)))
		expect(v.action == XDP_DROP && v.counter == SIEVE_XDP_DROP_SRC,
		       "why: action %d counter %d, want a drop by a source", v.action, v.counter);
	s1 = stats_now();
	expect(!memcmp(&s0, &s1, sizeof(s0)), "why moved the live counters");
	if (origin_drops(after))
		expect(!memcmp(before, after, sizeof(before)), "why moved the live drops per origin");
	expect(samples_drain(&sr) == 0, "why left %zu samples in the live ring", sr.n);
	expect(!v.dry_run, "why: a dry run while enforcing");
	/* A dry run passes the packet: why says it would have dropped it. */
	if (!expect(!sxdp_set_dry_run(&h, true), "dry run on") ||
	    !expect(!sxdp_read_config(&h, &r.cfg, NULL), "config"))
		goto out;
	ret = sxdp_why_verdict(&h, &r, &p, &v);
	expect(!ret && v.action == XDP_PASS && v.dry_run && v.counter == SIEVE_XDP_DROP_SRC,
	       "why in a dry run: rc %d action %d dry run %d counter %d", ret, v.action,
	       v.dry_run, v.counter);
	sxdp_set_dry_run(&h, false);
out:
	sample_rate_set(0, 0);
	h.origins = NULL;
	sxdp_origins_free(&o);
	sxdp_keys_free(&l);
}

/* One packet of @spec: the verdict wanted and the one sample it makes, as @want says. */
static void sample_of(const char *what, const struct pkt_spec *spec, int verdict,
		      const struct sieve_xdp_sample *want)
{
	struct samples_read r;
	struct sieve_xdp_key key, want_key;
	uint8_t buf[PKT_MAX];
	size_t len = pkt_build(spec, buf), cap = len < SIEVE_XDP_SAMPLE_BYTES ? len :
						       SIEVE_XDP_SAMPLE_BYTES;
	const struct sieve_xdp_sample *s = &r.s[0];

	samples_drain(&r);
	expect(run_pkt(buf, len) == verdict, "%s: verdict", what);
	if (!expect(samples_drain(&r) == (want ? 1 : 0), "%s: %zu samples, want %d", what, r.n,
		    want ? 1 : 0) || !want)
		return;
	/* BPF_PROG_TEST_RUN's packets come in on the loopback device. */
	expect(s->ifindex == 1 && s->frame_len == len && s->cap_len == cap &&
	       !memcmp(s->data, buf, cap) && !s->__reserved[0] && !s->__reserved[1],
	       "%s: the frame: ifindex %u, %u of %u bytes", what, s->ifindex, s->cap_len,
	       s->frame_len);
	expect(s->verdict == want->verdict && s->counter == want->counter &&
	       s->kind == want->kind && s->probe_len == want->probe_len,
	       "%s: verdict %u counter %u kind %u probe length %u, want %u %u %u %u", what,
	       s->verdict, s->counter, s->kind, s->probe_len, want->verdict, want->counter,
	       want->kind, want->probe_len);
	/* What attributes it: the key of the entry kind that matched, from the frame. */
	if (want->kind < SIEVE_XDP_NR_KINDS) {
		want_key = spec->flow;
		want_key.kind = want->kind;
		expect(!sxdp_sample_key(s, &key), "%s: no key from the sample", what);
		if (want->kind == SIEVE_XDP_SRC || want->kind == SIEVE_XDP_PREFIX) {
			expect(!memcmp(key.saddr, want_key.saddr, want->probe_len ? 0 : 16) &&
			       key.family == want_key.family, "%s: the sample's source", what);
		} else {
			expect(key.dport == want_key.dport && key.proto == want_key.proto &&
			       !memcmp(key.daddr, want_key.daddr, 16),
			       "%s: the sample's service", what);
		}
	}
}

#define SAMPLE(v, ctr, k, plen) (&(struct sieve_xdp_sample){ .verdict = (v), \
	.counter = (ctr), .kind = (k), .probe_len = (plen) })

static void test_samples_carry_match(void)
{
	static const char *const e[] = { "198.51.100.7", "203.0.113.0/24", "2001:db8:aa::/48",
					 "2001:db8::9/128", "tcp:192.0.2.80:443",
					 "udp:10.0.0.1:53,192.0.2.53:5353" };
	static const char *const a[] = { "203.0.113.5" };
	struct pkt_spec s;

	if (!set_entries(e, 6, 0) || !allow_set(a, 1) ||
	    !expect(!sample_rate_set(1000, 0), "setting the rate"))
		return;
	s = tcp("198.51.100.7", 1234, "192.0.2.1", 80);
	sample_of("v4 source", &s, XDP_DROP,
		  SAMPLE(XDP_DROP, SIEVE_XDP_DROP_SRC, SIEVE_XDP_SRC, 32));
	/* The IPv4 prefix table knows no length: 0, the store says which. */
	s = tcp("203.0.113.99", 1234, "192.0.2.1", 80);
	sample_of("v4 prefix", &s, XDP_DROP,
		  SAMPLE(XDP_DROP, SIEVE_XDP_DROP_PREFIX, SIEVE_XDP_PREFIX,
			 table_answers(&s, SIEVE_XDP_PREFIX) ? 0 : 24));
	s = tcp("2001:db8:aa:1::1", 1234, "2001:db8::1", 80);
	sample_of("v6 prefix", &s, XDP_DROP,
		  SAMPLE(XDP_DROP, SIEVE_XDP_DROP_PREFIX, SIEVE_XDP_PREFIX, 48));
	s = tcp("2001:db8::9", 1234, "2001:db8::1", 80);
	sample_of("v6 source", &s, XDP_DROP,
		  SAMPLE(XDP_DROP, SIEVE_XDP_DROP_SRC, SIEVE_XDP_SRC, 128));
	s = tcp("198.51.100.200", 1234, "192.0.2.80", 443);
	sample_of("service", &s, XDP_DROP,
		  SAMPLE(XDP_DROP, SIEVE_XDP_DROP_SERVICE, SIEVE_XDP_SERVICE, 0));
	s = (struct pkt_spec){ .flow = flow("10.0.0.1", 53, "192.0.2.53", 5353, IPPROTO_UDP),
			       .payload = 200 };
	sample_of("flow, a frame longer than a sample", &s, XDP_DROP,
		  SAMPLE(XDP_DROP, SIEVE_XDP_DROP_FLOW, SIEVE_XDP_FLOW, 0));
	s = tcp("198.51.100.8", 1234, "192.0.2.1", 80);
	sample_of("not on the list", &s, XDP_PASS, NULL);
	s = tcp("203.0.113.5", 1234, "192.0.2.1", 80);
	sample_of("allowed, not asked for", &s, XDP_PASS, NULL);
	if (!expect(!sample_rate_set(1000, SIEVE_XDP_SAMPLE_ALLOWED), "setting the flag"))
		return;
	sample_of("allowed, asked for", &s, XDP_PASS,
		  SAMPLE(XDP_PASS, SIEVE_XDP_ALLOWED, SIEVE_XDP_PREFIX,
			 table_answers(&s, SIEVE_XDP_PREFIX) ? 0 : 24));
	s = tcp("203.0.113.5", 1234, "192.0.2.80", 443);
	sample_of("allowed, then a service", &s, XDP_DROP,
		  SAMPLE(XDP_DROP, SIEVE_XDP_DROP_SERVICE, SIEVE_XDP_SERVICE, 0));
	sample_rate_set(0, 0);
	allow_set(NULL, 0);
}

static void test_samples_rate_zero(void)
{
	static const char *const e[] = { "198.51.100.7" };
	struct pkt_spec s = tcp("198.51.100.7", 1234, "192.0.2.1", 80);
	struct sieve_xdp_stats before, after;
	struct samples_read r;
	int i;

	if (!set_entries(e, 1, 0) || !expect(!sample_rate_set(0, SIEVE_XDP_SAMPLE_ALLOWED), "rate"))
		return;
	samples_drain(&r);
	before = stats_now();
	for (i = 0; i < 100; i++)
		drops("dropped, rate 0", &s, SIEVE_XDP_SRC);
	after = stats_now();
	expect(samples_drain(&r) == 0 && after.c[SIEVE_XDP_SAMPLED].packets ==
	       before.c[SIEVE_XDP_SAMPLED].packets, "rate 0: %zu samples", r.n);
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

#define FLOOD	1000000

/*
 * @rate a second, FLOOD drops in one BPF_PROG_TEST_RUN: every one counted
 * dropped; samples within the bucket's allowance (a full bucket, and
 * @rate a second since), each either
 * in the ring or counted lost. Returns the samples sent.
 */
static uint64_t flood(uint32_t rate, bool read_ring, uint64_t *lost)
{
	struct pkt_spec s = tcp("198.51.100.7", 1234, "192.0.2.1", 80);
	struct sieve_xdp_stats before, after;
	struct samples_read r;
	uint8_t buf[PKT_MAX];
	size_t len = pkt_build(&s, buf);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = len, .repeat = FLOOD);
	cpu_set_t was, one;
	uint64_t t0, t1, sent, allowance;

	/*
	 * On one CPU: its bucket alone. A run that moved would draw on a
	 * second bucket, earning as the first (the bound is per CPU).
	 */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (!expect(!sched_getaffinity(0, sizeof(was), &was) &&
		    !sched_setaffinity(0, sizeof(one), &one), "flood: one CPU"))
		return 0;
	samples_drain(&r);
	before = stats_now();
	t0 = mono_ns();
	expect(!bpf_prog_test_run_opts(prog_fd, &opts) && opts.retval == XDP_DROP, "flood: run");
	t1 = mono_ns();
	after = stats_now();
	sched_setaffinity(0, sizeof(was), &was);
	sent = after.c[SIEVE_XDP_SAMPLED].packets - before.c[SIEVE_XDP_SAMPLED].packets;
	*lost = after.c[SIEVE_XDP_SAMPLES_LOST].packets - before.c[SIEVE_XDP_SAMPLES_LOST].packets;
	/* The bucket's clock is the coarse one: up to a tick (10 ms at HZ=100) behind. */
	allowance = (uint64_t)rate + rate * (t1 - t0 + 10000000) / 1000000000ULL + 1;
	expect(after.c[SIEVE_XDP_DROP_SRC].packets - before.c[SIEVE_XDP_DROP_SRC].packets == FLOOD,
	       "flood: %llu drops counted of %d", (unsigned long long)(after.c[SIEVE_XDP_DROP_SRC].packets -
	       before.c[SIEVE_XDP_DROP_SRC].packets), FLOOD);
	expect(sent + *lost <= allowance, "flood at %u/s for %.3f s: %llu sampled, %llu lost, "
	       "allowance %llu", rate, (t1 - t0) / 1e9, (unsigned long long)sent,
	       (unsigned long long)*lost, (unsigned long long)allowance);
	if (read_ring)
		expect(samples_drain(&r) >= 0 && r.n == sent, "flood: %zu samples in the ring, %llu "
		       "counted", r.n, (unsigned long long)sent);
	return sent;
}

static void test_samples_bucket_under_flood(void)
{
	static const char *const e[] = { "198.51.100.7" };
	struct samples_read r;
	uint64_t sent, lost;

	if (!set_entries(e, 1, 0) || !expect(!sample_rate_set(50, 0), "rate"))
		return;
	sent = flood(50, true, &lost);
	expect(sent > 0 && !lost, "rate 50: %llu sampled, %llu lost", (unsigned long long)sent,
	       (unsigned long long)lost);
	/*
	 * A rate the ring cannot hold unread: the surplus is counted lost,
	 * and the drops are all counted still.
	 */
	if (!expect(!sample_rate_set(SIEVE_XDP_SAMPLE_RATE_MAX, 0), "rate"))
		return;
	samples_drain(&r);
	sent = flood(SIEVE_XDP_SAMPLE_RATE_MAX, false, &lost);
	expect(lost > 0 && sent <= SIEVE_XDP_SAMPLE_RING_BYTES / sizeof(struct sieve_xdp_sample),
	       "a full ring: %llu sampled, %llu lost", (unsigned long long)sent,
	       (unsigned long long)lost);
	samples_drain(&r);
	sample_rate_set(0, 0);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "why_private_state", test_why_private_state },
	{ "entry_parser", test_entry_parser },
	{ "list_file", test_list_file },
	{ "plan_matches_kernel", test_plan_matches_kernel },
	{ "source_v4_v6", test_source_v4_v6 },
	{ "solved_collision", test_solved_collision },
	{ "stale_digest_rebuilt", test_stale_digest_rebuilt },
	{ "newer_config_refused", test_newer_config_refused },
	{ "prefixes", test_prefixes },
	{ "services", test_services },
	{ "flows", test_flows },
	{ "vlans", test_vlans },
	{ "ipv4_fragments_and_options", test_ipv4_fragments_and_options },
	{ "ipv6_extension_headers", test_ipv6_extension_headers },
	{ "unreadable_ports", test_unreadable_ports },
	{ "older_layout", test_older_layout },
	{ "arp_and_nd_pass", test_arp_and_nd_pass },
	{ "truncation", test_truncation },
	{ "byte_sums", test_byte_sums },
	{ "live_add_and_remove", test_live_add_and_remove },
	{ "growth_past_capacity", test_growth_past_capacity },
	{ "sync_after_cut_short", test_sync_after_cut_short },
	{ "swap_under_traffic", test_swap_under_traffic },
	{ "dry_run", test_dry_run },
	{ "dry_run_older_program", test_dry_run_older_program },
	{ "origin_counters", test_origin_counters },
	{ "false_positives", test_false_positives },
	{ "backend_ops_tables", test_backend_ops_tables },
	{ "config_layout", test_config_layout },
	{ "older_config_padding", test_older_config_padding },
	{ "bloom_fast_fill", test_bloom_fast_fill },
	{ "bloom_fill_fallback", test_bloom_fill_fallback },
	{ "bloom_fill_fails_part_way", test_bloom_fill_fails_part_way },
	{ "expansion_every_v4_length", test_expansion_every_v4_length },
	{ "expansion_v6_lengths", test_expansion_v6_lengths },
	{ "expansion_nested", test_expansion_nested },
	{ "expansion_live_block", test_expansion_live_block_walk },
	{ "v4table_every_length", test_v4table_every_length },
	{ "v4table_nested_live", test_v4table_nested_live },
	{ "v4table_live_slash8", test_v4table_live_slash8 },
	{ "v4table_chunk_under_traffic", test_v4table_chunk_under_traffic },
	{ "v4table_older_config_walks", test_v4table_older_config_walks },
	{ "v4table_build_killed_before_sync", test_v4table_build_killed_before_sync },
	{ "v4table_chunk_bound", test_v4table_chunk_bound },
	{ "v4host_live", test_v4host_live },
	{ "v4host_rebuild", test_v4host_rebuild },
	{ "v4host_store", test_v4host_store },
	{ "allow_v4", test_allow_v4 },
	{ "allow_v6", test_allow_v6 },
	{ "allow_none", test_allow_none },
	{ "allow_sync_and_read", test_allow_sync_and_read },
	{ "allow_bad_entries", test_allow_bad_entries },
	{ "allow_exact", test_allow_exact },
	{ "allow_sync_under_traffic", test_allow_sync_under_traffic },
	{ "blocked_rule_parity", test_blocked_rule_parity },
	{ "blocked_any_size", test_blocked_any_size },
	{ "blocked_live_add_and_rebuild", test_blocked_live_add_and_rebuild },
	{ "blocked_false_positives", test_blocked_false_positives },
	{ "blocked_seed_per_generation", test_blocked_seed_per_generation },
	{ "removed_live", test_removed_live_walk },
	{ "removed_exact", test_removed_exact_walk },
	{ "removed_cycles", test_removed_cycles },
	{ "removed_cycles_exact", test_removed_cycles_exact },
	{ "removed_fd_zero", test_removed_fd_zero },
	{ "removed_memory", test_removed_memory },
	{ "removed_after_live_length", test_removed_after_live_length_walk },
	{ "removed_bound", test_removed_bound },
	{ "removed_cut_short", test_removed_cut_short_walk },
	{ "removed_lookup_bound", test_removed_lookup_bound },
	{ "samples_carry_match", test_samples_carry_match },
	{ "samples_rate_zero", test_samples_rate_zero },
	{ "samples_bucket_under_flood", test_samples_bucket_under_flood },
};

/* Cases that hold for either backend: run again, blocked, as blocked_NAME. */
static const char *const both_backends[] = {
	"source_v4_v6", "solved_collision", "stale_digest_rebuilt", "prefixes", "services", "flows",
	"vlans", "ipv4_fragments_and_options", "ipv6_extension_headers", "unreadable_ports",
	"arp_and_nd_pass", "truncation", "byte_sums",
	"live_add_and_remove", "growth_past_capacity", "sync_after_cut_short",
	"swap_under_traffic", "dry_run", "origin_counters", "expansion_every_v4_length", "expansion_v6_lengths",
	"expansion_nested", "expansion_live_block", "v4table_every_length", "v4table_nested_live",
	"v4table_live_slash8", "v4table_chunk_under_traffic", "v4table_older_config_walks",
	"v4host_live", "v4host_rebuild", "removed_live", "removed_exact",
	"removed_after_live_length", "removed_bound", "removed_cut_short", "removed_fd_zero",
	"removed_memory", "removed_cycles", "removed_cycles_exact", "samples_carry_match",
};

static void run_case(const char *name, void (*fn)(void), const char *filter, int *passed,
		     int *failed)
{
	if (filter && !strstr(name, filter))
		return;
	case_failed = false;
	fn();
	printf("%s xdp_test_%s\n", case_failed ? "FAIL" : "ok  ", name);
	case_failed ? (*failed)++ : (*passed)++;
}

static int setup(void)
{
	char err[256] = "";
	int ret;

	skel = sieve_xdp__open();
	if (!skel)
		return -errno;
	ret = private_maps_load(skel, &h);
	if (ret)
		return ret;
	prog_fd = bpf_program__fd(skel->progs.sieve_xdp);
	snprintf(h.ifname, sizeof(h.ifname), "sieve-test");
	/* A first generation with a digest key, as attach makes from the store's. */
	ret = sxdp_build(&h, &(struct sxdp_build_spec){
		.list = &(struct sxdp_keys){ 0 }, .fpp_ppb = 1000, .capacity = 1024,
		.secret = test_secret }, err, sizeof(err));
	if (ret)
		fprintf(stderr, "the first generation: %s\n", err);
	return ret;
}

int main(int argc, char **argv)
{
	const char *results = NULL, *filter = NULL;
	int passed = 0, failed = 0, err, opt;
	size_t i;
	FILE *f;

	while ((opt = getopt(argc, argv, "r:")) != -1)
		if (opt == 'r')
			results = optarg;
	if (optind < argc)
		filter = argv[optind];
	if (geteuid()) {
		fprintf(stderr, "test-bpf needs root (BPF_PROG_TEST_RUN, bloom-filter maps)\n");
		return 2;
	}
	err = setup();
	if (err) {
		fprintf(stderr, "loading the XDP program: %s\n", strerror(-err));
		failed = 1;
	}
	for (i = 0; !err && i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(cases[i].name, cases[i].fn, filter, &passed, &failed);
	backend = SIEVE_XDP_F_BLOCKED;
	for (i = 0; !err && i < sizeof(both_backends) / sizeof(both_backends[0]); i++) {
		size_t c = 0;
		char name[64];

		while (strcmp(cases[c].name, both_backends[i]))
			c++;
		snprintf(name, sizeof(name), "blocked_%s", cases[c].name);
		run_case(name, cases[c].fn, filter, &passed, &failed);
	}
	backend = 0;
	sieve_xdp__destroy(skel);
	/* A filter (make test-bpf T=NAME) that picks nothing is a failure. */
	if (!err && filter && !passed && !failed) {
		fprintf(stderr, "no case matches '%s'\n", filter);
		failed = 1;
	}
	printf("%d passed, %d failed\n", passed, failed);
	if (results && (f = fopen(results, "w"))) {
		fprintf(f, "%d %d\n", passed, failed);
		fclose(f);
	}
	return failed ? 1 : 0;
}
