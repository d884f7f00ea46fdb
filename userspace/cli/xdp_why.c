// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve xdp why ADDR[:PORT]`: the verdict the attached program gives a
 * packet from ADDR, run through the program itself on the live maps (its
 * counters untouched), and every entry of the store that covers it. Read
 * through the report API (report.h, why.c), as status is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/bpf.h>

#include "cli.h"
#include "escape.h"
#include "json.h"
#include "report.h"
#include "store.h"
#include "xdp.h"
#include "xdp_list.h"

#define WHY_MAX_IFACES	64

struct why_opts {
	const char *state_dir;	/* first, for xdp_opt_state_dir */
	const char *iface;
	const char *proto;
	const char *dst;
};
XDP_STATE_DIR_FIRST(struct why_opts);

static int set_iface(void *opts, const char *arg)
{
	((struct why_opts *)opts)->iface = arg;
	return sxdp_ifname_ok(arg) ? 0 : -EINVAL;
}

static const struct { const char *name; uint8_t v4, v6; } why_protos[] = {
	{ "tcp", IPPROTO_TCP, IPPROTO_TCP }, { "udp", IPPROTO_UDP, IPPROTO_UDP },
	{ "sctp", IPPROTO_SCTP, IPPROTO_SCTP }, { "icmp", IPPROTO_ICMP, IPPROTO_ICMPV6 },
};

static int set_proto(void *opts, const char *arg)
{
	size_t i;

	for (i = 0; i < sizeof(why_protos) / sizeof(why_protos[0]); i++)
		if (!strcmp(arg, why_protos[i].name))
			return ((struct why_opts *)opts)->proto = why_protos[i].name, 0;
	return -EINVAL;
}

static int set_dst(void *opts, const char *arg)
{
	((struct why_opts *)opts)->dst = arg;
	return 0;
}

static const struct cli_option why_opt_iface = {
	"iface", 'i', "IFACE", "this interface (default: every one with the blocklist)",
	.set = set_iface, .accepts = "an interface name (" SXDP_IFNAME_RULE ")",
};
static const struct cli_option why_opt_proto = {
	"proto", 0, "P", "the packet's protocol: tcp (default), udp, sctp or icmp",
	.set = set_proto, .accepts = "tcp, udp, sctp or icmp", .choices = "tcp udp sctp icmp",
};
static const struct cli_option why_opt_dst = {
	"dst", 0, "DST[:PORT]", "its destination (default: the unspecified address, no port)",
	.set = set_dst, .accepts = "ADDR, ADDR:PORT, IPV6 or [IPV6]:PORT",
};

/* The packet the arguments describe; EXIT_OK or a usage error said. */
static int why_packet(const struct cli_command *cmd, const struct why_opts *o, const char *src,
		      struct sxdp_why_packet *p)
{
	const char *why;
	size_t i;
	int fam;

	memset(p, 0, sizeof(*p));
	p->family = sxdp_parse_host(src, p->saddr, &p->sport, &why);
	if (!p->family)
		return cli_usage_error(cmd, "%s: %s", src, why);
	if (o->dst) {
		fam = sxdp_parse_host(o->dst, p->daddr, &p->dport, &why);
		if (!fam)
			return cli_usage_error(cmd, "--dst %s: %s", o->dst, why);
		if (fam != p->family)
			return cli_usage_error(cmd, "%s and --dst %s are of different families",
					       src, o->dst);
	}
	p->proto = IPPROTO_TCP;
	for (i = 0; o->proto && i < sizeof(why_protos) / sizeof(why_protos[0]); i++)
		if (!strcmp(o->proto, why_protos[i].name))
			p->proto = p->family == SIEVE_XDP_V4 ? why_protos[i].v4 : why_protos[i].v6;
	if ((p->proto == IPPROTO_ICMP || p->proto == IPPROTO_ICMPV6) && (p->sport || p->dport))
		return cli_usage_error(cmd, "icmp has no ports");
	return EXIT_OK;
}

static const char *proto_name(uint8_t proto)
{
	size_t i;

	for (i = 0; i < sizeof(why_protos) / sizeof(why_protos[0]); i++)
		if (proto == why_protos[i].v4 || proto == why_protos[i].v6)
			return why_protos[i].name;
	return "?";
}

/* What one interface's answer holds, gathered before it is printed. */
struct why_answer {
	const struct sxdp_why_packet *p;
	const char *iface;
	char list[SXDP_LIST_NAME_MAX + 1];
	bool recorded;			/* the store records the attachment */
	uint64_t store_version;
	struct sxdp_iface_report r;	/* what status reads of the interface */
	struct sxdp_why_verdict v;
	unsigned int blocked, allowed;	/* entries covering the packet */
	bool json;
	int64_t now;
};

/* Whether the program's verdict drops the packet, or would but for a dry run. */
static bool verdict_drops(const struct sxdp_why_verdict *v)
{
	return v->action == XDP_DROP || v->dry_run;
}

/* The verdict in words: the one line a person reads first. */
static void verdict_text(const struct why_answer *a, char *buf, size_t len)
{
	const struct sxdp_why_verdict *v = &a->v;
	/* A dry run passes what it would drop: said so, not "passed". */
	const char *dry = v->dry_run ? "passed (dry run), would be " : "";

	if (verdict_drops(v) && v->counter >= SIEVE_XDP_DROP_SRC &&
	    v->counter <= SIEVE_XDP_DROP_FLOW && !a->blocked)
		snprintf(buf, len, "%sdropped: bloom false positive, no entry covers it", dry);
	else if (verdict_drops(v) && v->counter >= SIEVE_XDP_DROP_SRC &&
		 v->counter <= SIEVE_XDP_DROP_FLOW)
		snprintf(buf, len, "%sdropped by a %s entry", dry,
			 sxdp_kind_name(v->counter - SIEVE_XDP_DROP_SRC));
	else if (verdict_drops(v))
		snprintf(buf, len, "%sdropped (%s)", dry, v->counter == SIEVE_XDP_DROP_UNPARSED ?
			 "ports unreadable" : "malformed");
	else if (v->allowed)
		snprintf(buf, len, "passed: allowlisted (a source or prefix entry matched)");
	else if (a->blocked)
		snprintf(buf, len, "passed, though an entry below covers it");
	else
		snprintf(buf, len, "passed");
}

static const char *verdict_reason(const struct why_answer *a)
{
	const struct sxdp_why_verdict *v = &a->v;

	if (verdict_drops(v) && v->counter >= SIEVE_XDP_DROP_SRC &&
	    v->counter <= SIEVE_XDP_DROP_FLOW)
		return a->blocked ? sxdp_kind_name(v->counter - SIEVE_XDP_DROP_SRC) :
				    "false_positive";
	if (verdict_drops(v))
		return v->counter == SIEVE_XDP_DROP_UNPARSED ? "unparsed" : "malformed";
	return v->allowed ? "allowed" : "none";
}

static void endpoint_text(uint8_t family, const __be32 addr[4], __be16 port, char *buf,
			  size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(family == SIEVE_XDP_V4 ? AF_INET : AF_INET6, addr, a, sizeof(a));
	if (!port)
		snprintf(buf, len, "%s", a);
	else if (family == SIEVE_XDP_V4)
		snprintf(buf, len, "%s:%u", a, ntohs(port));
	else
		snprintf(buf, len, "[%s]:%u", a, ntohs(port));
}

static void json_head(const struct why_answer *a, const char *src, const char *dst,
		      const char *verdict)
{
	json_object(NULL);
	json_str("iface", a->iface);
	json_str("list", a->list);
	json_str("proto", proto_name(a->p->proto));
	json_str("src", src);
	json_str("dst", dst);
	json_str("verdict", a->v.action == XDP_DROP ? "drop" : "pass");
	json_str("reason", verdict_reason(a));
	json_bool("dry_run", a->v.dry_run);
	json_str("summary", verdict);
	json_u64("prog_id", a->r.prog.id);
	json_str("prog_tag", a->r.prog.tag);
	json_u64("filter_hits", a->v.counted.c[SIEVE_XDP_BLOOM_HITS].packets);
	json_u64("false_positives_refuted", a->v.counted.c[SIEVE_XDP_FALSE_POSITIVES].packets);
	json_u64("store_version", a->store_version);
	json_u64("maps_version", a->r.cfg.store_version);
	json_array("entries");
}

/* The verdict and how it was reached; the entries follow (print_entry). */
static void print_head(const struct why_answer *a)
{
	const struct sieve_xdp_stats *counted = &a->v.counted;
	const struct sxdp_why_packet *p = a->p;
	char src[64], dst[64], verdict[96];

	endpoint_text(p->family, p->saddr, p->sport, src, sizeof(src));
	endpoint_text(p->family, p->daddr, p->dport, dst, sizeof(dst));
	verdict_text(a, verdict, sizeof(verdict));
	if (a->json) {
		json_head(a, src, dst, verdict);
		return;
	}
	printf("%s: %s %s -> %s: %s\n", a->iface, proto_name(p->proto), src, dst, verdict);
	printf("  program id %u tag %s (its code, on the live maps; counters untouched); list %s%s\n",
	       a->r.prog.id, a->r.prog.tag, a->list,
	       a->recorded ? "" : " (no attachment recorded: the default)");
	if (counted->c[SIEVE_XDP_FALSE_POSITIVES].packets)
		printf("  the filter claimed it %llu time(s), refuted %llu (exact map or removed keys)\n",
		       (unsigned long long)counted->c[SIEVE_XDP_BLOOM_HITS].packets,
		       (unsigned long long)counted->c[SIEVE_XDP_FALSE_POSITIVES].packets);
	if (a->store_version != a->r.cfg.store_version)
		printf("  the maps hold version %llu of the list, the store %llu: the next "
		       "command rebuilds them\n", (unsigned long long)a->r.cfg.store_version,
		       (unsigned long long)a->store_version);
}

static int print_entry(const struct sxdp_why_entry *w, void *ctx)
{
	struct why_answer *a = ctx;
	const struct sxdp_store_entry *e = w->e;
	char left[32] = "never", kind[32];

	if (a->json) {
		json_object(NULL);
		xdp_entry_json(e, a->now);
		if (w->in_maps[0])
			json_str("in_maps", w->in_maps);
		json_end();
		return 0;
	}
	if (e->expires_at)
		xdp_time_left(left, sizeof(left), e->expires_at - a->now);
	xdp_kind_text(e, kind, sizeof(kind));
	/* Origins and comments come from outside: escaped, one line each (as list). */
	printf("  %s %s, origin ", kind, e->key);
	sieve_escape(stdout, e->origin, strlen(e->origin), SIEVE_ESC_LOG);
	printf(", expires %s", left);
	if (e->comment) {
		printf(", comment ");
		sieve_escape(stdout, e->comment, strlen(e->comment), SIEVE_ESC_LOG);
	}
	printf("\n");
	if (w->in_maps[0])
		printf("    in the maps: %s\n", w->in_maps);
	return 0;
}

/* The list @h enforces, by the store's record; "default" if none. */
static int why_list(struct sxdp_store *s, struct sxdp_handle *h, struct why_answer *a)
{
	struct sxdp_attachment att;
	char err[512] = "";
	int ret = sxdp_store_attach_get(s, h->netns, h->ifname, &att, err, sizeof(err));

	if (ret && ret != -ENOENT)
		return cli_error("%s", err[0] ? err : strerror(-ret));
	a->recorded = !ret;
	snprintf(a->list, sizeof(a->list), "%s", ret ? SXDP_DEFAULT_LIST : att.list);
	ret = sxdp_store_version(s, a->list, &a->store_version);
	return ret ? cli_error("%s: reading the store: %s", a->list, strerror(-ret)) : EXIT_OK;
}

static int why_verdict_error(const char *ifname, int err)
{
	if (err == -ENOENT)
		return cli_error("%s: no program runs there (sieve xdp attach %s)", ifname, ifname);
	if (err == -ESTALE)
		return cli_error("%s: the running program is an older sieve's, not this one's "
				 "(sieve xdp attach %s upgrades it)", ifname, ifname);
	return cli_error("%s: running the program on the packet: %s", ifname, strerror(-err));
}

static int count_entry(const struct sxdp_why_entry *w, void *ctx)
{
	struct why_answer *a = ctx;

	if (w->e->allow)
		a->allowed++;
	else
		a->blocked++;
	return 0;
}

/*
 * The entries twice: counted first, as the verdict line (printed before
 * them) says whether one covers the packet; 130 indexed lookups at most
 * each time.
 */
static int why_report(struct sxdp_store *s, struct sxdp_handle *h, struct why_answer *a)
{
	int ret = sxdp_why_entries(s, a->list, h, &a->r, a->p, count_entry, a);

	if (!ret) {
		print_head(a);
		ret = sxdp_why_entries(s, a->list, h, &a->r, a->p, print_entry, a);
		if (a->json) {
			json_end();	/* entries */
			json_end();
		}
	}
	return ret ? cli_error("%s: reading the store: %s", a->iface, strerror(-ret)) : EXIT_OK;
}

static int why_iface(struct sxdp_store *s, const char *ifname, struct why_answer *a)
{
	char err[512] = "";
	struct sxdp_handle h;
	int ret = sxdp_open_reader(ifname, &h);

	if (ret == -ENOENT)
		return cli_error("the blocklist is not attached to %s (sieve xdp attach %s)",
				 ifname, ifname);
	if (ret)
		return cli_error("%s: opening the pinned maps: %s", ifname, strerror(-ret));
	a->iface = ifname;
	a->blocked = a->allowed = 0;
	/* One snapshot of the store for the list, its version and its entries. */
	ret = sxdp_store_begin_read(s, err, sizeof(err));
	if (ret)
		ret = cli_error("%s", err[0] ? err : strerror(-ret));
	if (!ret)
		ret = why_list(s, &h, a);
	if (!ret && (ret = sxdp_iface_report(&h, &a->r)))
		ret = cli_error("%s: reading its maps: %s", ifname, strerror(-ret));
	if (!ret && (ret = sxdp_why_verdict(&h, &a->r, a->p, &a->v)))
		ret = why_verdict_error(ifname, ret);
	if (!ret)
		ret = why_report(s, &h, a);
	sxdp_store_rollback(s);
	sxdp_close(&h);
	return ret;
}

static int cmd_why(const struct cli_command *cmd, int argc, char **argv)
{
	char names[WHY_MAX_IFACES][IF_NAMESIZE];
	struct why_opts o = { 0 };
	struct sxdp_why_packet p;
	struct sxdp_store *s = NULL;
	struct why_answer a = { .p = &p };
	struct cli_args args;
	int ret = cli_parse(cmd, argc, argv, &o, &args);
	int n, i;

	if (ret >= 0)
		return ret;
	ret = why_packet(cmd, &o, args.args[0], &p);
	if (ret)
		return ret;
	if (geteuid())
		return cli_error("sieve %s needs root (BPF maps and XDP)", cmd->name);
	if (o.iface) {
		snprintf(names[0], IF_NAMESIZE, "%s", o.iface);
		n = 1;
	} else {
		n = sxdp_list_ifaces(names, WHY_MAX_IFACES);
	}
	if (n <= 0) {
		cli_error("no interface has the blocklist (sieve xdp attach IFACE)");
		return EXIT_ABSENT;
	}
	if (xdp_open_store(o.state_dir, NULL, cmd->name, &s))
		return EXIT_ERROR;
	a.json = args.json;
	a.now = time(NULL);
	if (a.json)
		json_array(NULL);
	for (i = 0, ret = EXIT_OK; !ret && i < n; i++)
		ret = why_iface(s, names[i], &a);
	if (a.json)
		json_end_all();
	sxdp_store_close(s);
	return ret;
}

const struct cli_command xdp_why_command = {
	"xdp why", "the verdict the live program gives a packet, and the entries covering it",
	.args = "ADDR[:PORT]", .min_args = 1, .max_args = 1,
	.details = "  A packet from ADDR (and PORT) to --dst (the unspecified address\n"
		   "  without it, so only source and prefix entries can match), of --proto\n"
		   "  (tcp), is run through the program attached to each interface: the\n"
		   "  same code, on the live maps, its counters untouched (a copy of the\n"
		   "  program with counters of its own, matched to the running one by its\n"
		   "  tag). Then every entry of the interface's list that covers the packet,\n"
		   "  blocked or allowed: its source, each prefix holding it (and where the\n"
		   "  maps hold it after expansion, or the IPv4 prefix table's word on the\n"
		   "  address), the service and the flow. A drop no entry covers is said to\n"
		   "  be a bloom false positive. Exit 0 answered (dropped or not: the\n"
		   "  first line says, and -j's \"verdict\"), 1 no interface has the\n"
		   "  blocklist, 2 an error: bad input (EINVAL, one line), not attached to\n"
		   "  IFACE, or an older program running there (ESTALE: attach upgrades it).",
	.options = CLI_OPTIONS(&why_opt_iface, &why_opt_proto, &why_opt_dst, &xdp_opt_state_dir,
			       CLI_JSON_OPTIONS),
	.run = cmd_why,
};
