// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve xdp ...`: the XDP blocklist. Each subcommand acts on the program
 * and maps pinned for an interface (-i IFACE), or on every interface that
 * has the blocklist when -i is not given, so separate runs work on the
 * running program. Exit codes as everywhere: 0, 1 not present, 2 error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>

#include "cli.h"
#include "xdp.h"

#define MAX_IFACES	64

struct xdp_opts {
	const char *iface;
	bool json;
	bool exact, no_exact, fail_closed, fail_open, force, watch;
	uint32_t xdp_flags;
	uint32_t fpp_ppb;
	bool fpp_given;
	uint64_t capacity, entries;
	uint32_t interval, count;
};

enum { OPT_EXACT = 256, OPT_NO_EXACT, OPT_FAIL_CLOSED, OPT_FAIL_OPEN, OPT_FORCE, OPT_MODE,
       OPT_WATCH, OPT_INTERVAL, OPT_COUNT, OPT_CAPACITY, OPT_FPP };

static const struct option xdp_long_opts[] = {
	{ "iface", required_argument, NULL, 'i' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ "entries", required_argument, NULL, 'n' },
	{ "fpp", required_argument, NULL, OPT_FPP },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "exact", no_argument, NULL, OPT_EXACT },
	{ "no-exact", no_argument, NULL, OPT_NO_EXACT },
	{ "fail-closed", no_argument, NULL, OPT_FAIL_CLOSED },
	{ "fail-open", no_argument, NULL, OPT_FAIL_OPEN },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "capacity", required_argument, NULL, OPT_CAPACITY },
	{ "watch", no_argument, NULL, OPT_WATCH },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ NULL, 0, NULL, 0 },
};

static int parse_value_opt(const struct cli_command *cmd, int c, struct xdp_opts *o)
{
	switch (c) {
	case 'n':
		if (parse_u64(optarg, &o->entries) || !o->entries)
			return cli_usage_error(cmd, "bad entry count '%s'", optarg);
		return -1;
	case OPT_FPP:
		if (parse_rate_ppb(optarg, &o->fpp_ppb))
			return cli_usage_error(cmd, "bad false-positive rate '%s': between 1e-9 and 1, e.g. 1e-6 or 0.01%%", optarg);
		o->fpp_given = true;
		return -1;
	case OPT_MODE:
		if (!strcmp(optarg, "native"))
			o->xdp_flags = XDP_FLAGS_DRV_MODE;
		else if (!strcmp(optarg, "generic"))
			o->xdp_flags = XDP_FLAGS_SKB_MODE;
		else
			return cli_usage_error(cmd, "unknown mode '%s' (native, generic)", optarg);
		return -1;
	case OPT_CAPACITY:
		if (parse_u64(optarg, &o->capacity) || !o->capacity || o->capacity > UINT32_MAX)
			return cli_usage_error(cmd, "bad capacity '%s': 1 to 2^32-1 entries", optarg);
		return -1;
	case OPT_INTERVAL:
		if (parse_u32(optarg, &o->interval) || !o->interval || o->interval > 3600)
			return cli_usage_error(cmd, "bad interval '%s': 1 to 3600 seconds", optarg);
		return -1;
	case OPT_COUNT:
		if (parse_u32(optarg, &o->count) || !o->count)
			return cli_usage_error(cmd, "bad count '%s'", optarg);
		return -1;
	}
	return cli_usage_error(cmd, "unknown option '%s'", optarg);
}

/* Returns -1 when parsing went through, else the exit code to end with. */
static int parse_xdp_opts(const struct cli_command *cmd, int argc, char **argv,
			  struct xdp_opts *o)
{
	int c, ret;

	*o = (struct xdp_opts){ .fpp_ppb = SXDP_DEFAULT_FPP_PPB, .capacity = SXDP_DEFAULT_CAPACITY,
				.interval = 1 };
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:jhn:", xdp_long_opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->iface = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			printf("usage: %s\n", cmd->usage);
			return EXIT_OK;
		case OPT_EXACT:
			o->exact = true;
			break;
		case OPT_NO_EXACT:
			o->no_exact = true;
			break;
		case OPT_FAIL_CLOSED:
			o->fail_closed = true;
			break;
		case OPT_FAIL_OPEN:
			o->fail_open = true;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_WATCH:
			o->watch = true;
			break;
		case ':':
			return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		case '?':
			return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		default:
			ret = parse_value_opt(cmd, c, o);
			if (ret >= 0)
				return ret;
		}
	}
	if ((o->exact && o->no_exact) || (o->fail_closed && o->fail_open))
		return cli_usage_error(cmd, "contradictory options");
	return -1;
}

static int need_root(const char *what)
{
	return geteuid() ? cli_error("%s needs root (BPF maps and XDP)", what) : 0;
}

/* The interfaces to act on: -i, or all that have the blocklist. */
static int target_ifaces(const struct xdp_opts *o, char names[][IF_NAMESIZE])
{
	int n;

	if (o->iface) {
		snprintf(names[0], IF_NAMESIZE, "%s", o->iface);
		return 1;
	}
	n = sxdp_list_ifaces(names, MAX_IFACES);
	return n < 0 ? 0 : n;
}

static int open_iface(const char *ifname, struct sxdp_handle *h)
{
	int err = sxdp_open(ifname, h);

	if (err == -ENOENT)
		return cli_error("the blocklist is not attached to %s (sieve xdp attach %s)",
				 ifname, ifname);
	if (err)
		return cli_error("%s: opening the pinned maps: %s", ifname, strerror(-err));
	return 0;
}

/* Parses every ENTRY argument before anything is changed. */
static int parse_entries(const struct cli_command *cmd, int argc, char **argv,
			 struct sxdp_list *l)
{
	struct sieve_xdp_key key;
	const char *why;
	int i;

	if (optind >= argc)
		return cli_usage_error(cmd, "no entry given");
	for (i = optind; i < argc; i++) {
		if (sxdp_parse_entry(argv[i], &key, &why))
			return cli_error("%s: %s", argv[i], why);
		if (sxdp_list_add(l, &key))
			return cli_error("out of memory");
	}
	sxdp_list_sort(l);
	return 0;
}

static uint32_t cfg_flags_of(const struct xdp_opts *o)
{
	return (o->exact ? SIEVE_XDP_F_EXACT : 0) | (o->fail_closed ? SIEVE_XDP_F_FAIL_CLOSED : 0);
}

static int cmd_attach(int argc, char **argv);
static int cmd_detach(int argc, char **argv);
static int cmd_block(int argc, char **argv);
static int cmd_unblock(int argc, char **argv);
static int cmd_load(int argc, char **argv);
static int cmd_list(int argc, char **argv);
static int cmd_plan(int argc, char **argv);
static int cmd_status(int argc, char **argv);
static int cmd_stats(int argc, char **argv);

static const struct cli_command xdp_subcommands[] = {
	{ "xdp attach", "attach the blocklist to interfaces",
	  "sieve xdp attach IFACE... [--mode native|generic] [--exact] [--fpp P] [--fail-closed]\n"
	  "                 [--capacity N] [--force]\n"
	  "  Loads the XDP program with an empty list; maps are pinned under\n"
	  "  " SIEVE_XDP_PIN_ROOT "/netns-N/IFACE. Default mode: native, else generic. --exact\n"
	  "  confirms every bloom hit in a hash map (no innocent packet dropped, ~100\n"
	  "  bytes/entry); default bloom-only. --fpp: target false-positive rate\n"
	  "  (default 1e-6). --fail-closed drops malformed packets (default: pass).\n"
	  "  Again on an attached interface: applies the settings given (--no-exact\n"
	  "  and --fail-open turn them off), keeps the others and the mode, exit 0.\n"
	  "  Another XDP program on the interface is replaced only with --force.",
	  cmd_attach },
	{ "xdp detach", "detach the blocklist and remove its maps",
	  "sieve xdp detach IFACE...\n"
	  "  Idempotent: an interface without the blocklist is left alone.",
	  cmd_detach },
	{ "xdp block", "add entries, live",
	  "sieve xdp block [-i IFACE] ENTRY...\n"
	  "  ENTRY: 198.51.100.7 (source), 203.0.113.0/24 or 2001:db8::/48 (source\n"
	  "  prefix), tcp:192.0.2.10:22 or udp:[2001:db8::1]:53 (service: destination,\n"
	  "  protocol, port), tcp:198.51.100.7:40000,192.0.2.10:22 (one flow).\n"
	  "  Protocols: tcp, udp, sctp. Added to the live maps; past the planned\n"
	  "  capacity a bigger generation is built and swapped in.",
	  cmd_block },
	{ "xdp unblock", "remove entries (swaps in a new generation)",
	  "sieve xdp unblock [-i IFACE] ENTRY...\n"
	  "  Exit 1 if an entry was not on the list (the others are removed).",
	  cmd_unblock },
	{ "xdp load", "replace the whole list from a file, atomically",
	  "sieve xdp load [-i IFACE] FILE|-\n"
	  "  One entry per line (see block), '#' starts a comment. A bad line is\n"
	  "  reported as FILE:LINE: reason and nothing changes. The new generation\n"
	  "  is sized for the list plus 25% (at least 65536 entries).",
	  cmd_load },
	{ "xdp list", "print the entries",
	  "sieve xdp list [-i IFACE] [-j]\n  Exit 1 if no interface has the blocklist.",
	  cmd_list },
	{ "xdp plan", "bloom filter size and false-positive rate for a list",
	  "sieve xdp plan [-j] [-n ENTRIES | FILE] [--fpp P]\n"
	  "  The bloom map's max_entries and hash count, its memory (the kernel\n"
	  "  rounds the bitmap up to a power of two) and the expected rate.\n"
	  "  Defaults: 65536 entries, 1e-6.",
	  cmd_plan },
	{ "xdp status", "interfaces, mode, entries, memory, expected rate",
	  "sieve xdp status [-i IFACE] [-j]\n  Exit 1 if no interface has the blocklist.",
	  cmd_status },
	{ "xdp stats", "packet counters (summed over CPUs)",
	  "sieve xdp stats [-i IFACE] [-j] [--watch [--interval S] [--count N]]\n"
	  "  --watch prints the rates every S seconds (default 1), N times or until\n"
	  "  interrupted.",
	  cmd_stats },
};
#define XDP_NSUB (sizeof(xdp_subcommands) / sizeof(xdp_subcommands[0]))

static const struct cli_command *sub(const char *name)
{
	size_t i;

	for (i = 0; i < XDP_NSUB; i++)
		if (!strcmp(xdp_subcommands[i].name + 4, name))
			return &xdp_subcommands[i];
	return NULL;
}

static int cmd_attach(int argc, char **argv)
{
	const struct cli_command *cmd = sub("attach");
	struct sxdp_attach_opts ao;
	struct xdp_opts o;
	char err[256];
	int ret = parse_xdp_opts(cmd, argc, argv, &o), i;

	if (ret >= 0)
		return ret;
	if (optind >= argc)
		return cli_usage_error(cmd, "no interface given");
	if (need_root("attaching"))
		return EXIT_ERROR;
	ao = (struct sxdp_attach_opts){
		.xdp_flags = o.xdp_flags, .cfg_flags = cfg_flags_of(&o),
		.cfg_given = (o.exact || o.no_exact ? SIEVE_XDP_F_EXACT : 0) |
			     (o.fail_closed || o.fail_open ? SIEVE_XDP_F_FAIL_CLOSED : 0),
		.fpp_ppb = o.fpp_ppb, .fpp_given = o.fpp_given, .capacity = o.capacity,
		.force = o.force };
	for (i = optind; i < argc; i++) {
		err[0] = '\0';
		ret = sxdp_attach(argv[i], &ao, err, sizeof(err));
		if (ret < 0)
			return cli_error("%s: %s", argv[i], err[0] ? err : strerror(-ret));
		if (o.json)
			printf("{\"iface\": \"%s\", \"attached\": \"%s\"}\n", argv[i],
			       ret == SXDP_ALREADY ? "already" : "now");
		else
			printf("%s: %s\n", argv[i], ret == SXDP_ALREADY ? "already attached" : "attached");
	}
	return EXIT_OK;
}

static int cmd_detach(int argc, char **argv)
{
	const struct cli_command *cmd = sub("detach");
	struct xdp_opts o;
	int ret = parse_xdp_opts(cmd, argc, argv, &o), i;

	if (ret >= 0)
		return ret;
	if (optind >= argc)
		return cli_usage_error(cmd, "no interface given");
	if (need_root("detaching"))
		return EXIT_ERROR;
	for (i = optind; i < argc; i++) {
		ret = sxdp_detach(argv[i]);
		if (ret < 0)
			return cli_error("%s: %s", argv[i], strerror(-ret));
		printf("%s: %s\n", argv[i], ret ? "was not attached" : "detached");
	}
	return EXIT_OK;
}

/* Runs fn on each target interface; stops at the first error. */
static int for_each_iface(const struct xdp_opts *o, const char *what,
			  int (*fn)(struct sxdp_handle *h, void *arg), void *arg)
{
	char names[MAX_IFACES][IF_NAMESIZE];
	struct sxdp_handle h;
	int n, i, ret, worst = EXIT_OK;

	if (need_root(what))
		return EXIT_ERROR;
	n = target_ifaces(o, names);
	if (!n)
		return cli_error("no interface has the blocklist (sieve xdp attach IFACE)");
	for (i = 0; i < n; i++) {
		if (open_iface(names[i], &h))
			return EXIT_ERROR;
		ret = fn(&h, arg);
		sxdp_close(&h);
		if (ret == EXIT_ERROR)
			return ret;
		if (ret > worst)
			worst = ret;
	}
	return worst;
}

/* One line after a change: what the live generation holds now. */
static void print_entries(struct sxdp_handle *h, const char *what)
{
	struct sieve_xdp_config c;

	if (!sxdp_read_config(h, &c, NULL))
		printf("%s: %s; %llu entries on the list, generation %u\n", h->ifname, what,
		       (unsigned long long)c.entries, c.gen_seq);
}

static int do_block(struct sxdp_handle *h, void *arg)
{
	char err[256] = "";
	int ret = sxdp_add(h, arg, err, sizeof(err));

	if (ret)
		return cli_error("%s: %s", h->ifname, err[0] ? err : strerror(-ret));
	print_entries(h, "blocked");
	return EXIT_OK;
}

/* block and unblock: entries from the arguments, applied on each interface. */
static int entries_each_iface(const char *name, const char *what, int argc, char **argv,
			      int (*apply)(struct sxdp_handle *h, void *arg))
{
	const struct cli_command *cmd = sub(name);
	struct sxdp_list l = { 0 };
	struct xdp_opts o;
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	ret = parse_entries(cmd, argc, argv, &l);
	if (!ret)
		ret = for_each_iface(&o, what, apply, &l);
	sxdp_list_free(&l);
	return ret;
}

static int cmd_block(int argc, char **argv)
{
	return entries_each_iface("block", "blocking", argc, argv, do_block);
}

static int do_unblock(struct sxdp_handle *h, void *arg)
{
	size_t missing;
	int ret = sxdp_remove(h, arg, &missing);

	if (ret)
		return cli_error("%s: %s", h->ifname, strerror(-ret));
	print_entries(h, "unblocked");
	if (missing)
		printf("%s: %zu of the entries were not on the list\n", h->ifname, missing);
	return missing ? EXIT_ABSENT : EXIT_OK;
}

static int cmd_unblock(int argc, char **argv)
{
	return entries_each_iface("unblock", "unblocking", argc, argv, do_unblock);
}

static int do_load(struct sxdp_handle *h, void *arg)
{
	char err[256] = "";
	int ret = sxdp_replace(h, arg, err, sizeof(err));

	if (ret)
		return cli_error("%s: %s", h->ifname, err[0] ? err : strerror(-ret));
	print_entries(h, "loaded");
	return EXIT_OK;
}

static int cmd_load(int argc, char **argv)
{
	const struct cli_command *cmd = sub("load");
	struct sxdp_list l = { 0 };
	struct xdp_opts o;
	char err[512];
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (optind != argc - 1)
		return cli_usage_error(cmd, "give one file");
	if (sxdp_list_read(argv[optind], &l, err, sizeof(err)))
		return cli_error("%s", err);
	ret = for_each_iface(&o, "loading", do_load, &l);
	sxdp_list_free(&l);
	return ret;
}

struct list_arg {
	bool json;
	int printed;
};

static int do_list(struct sxdp_handle *h, void *arg)
{
	struct list_arg *la = arg;
	struct sxdp_list l = { 0 };
	char buf[160];
	size_t i;
	int ret = sxdp_state_read(h->ifname, &l);

	if (ret)
		return cli_error("%s: reading the list: %s", h->ifname, strerror(-ret));
	if (la->json)
		printf("%s  {\"iface\": \"%s\", \"entries\": [", la->printed++ ? ",\n" : "", h->ifname);
	for (i = 0; i < l.n; i++) {
		sxdp_format_entry(&l.keys[i], buf, sizeof(buf));
		if (la->json)
			printf("%s\"%s\"", i ? ", " : "", buf);
		else
			printf("%s\t%s\t%s\n", h->ifname, sxdp_kind_name(l.keys[i].kind), buf);
	}
	if (la->json)
		printf("]}");
	sxdp_list_free(&l);
	return EXIT_OK;
}

static int no_iface_absent(const struct xdp_opts *o)
{
	char names[MAX_IFACES][IF_NAMESIZE];

	if (o->iface || target_ifaces(o, names))
		return 0;
	fprintf(stderr, "sieve: no interface has the blocklist\n");
	return 1;
}

/*
 * list and status: the same options, a report per interface, and in JSON
 * one array of them all.
 */
static int report_each_iface(const char *name, const char *what, int argc, char **argv,
			     int (*report)(struct sxdp_handle *h, void *arg))
{
	const struct cli_command *cmd = sub(name);
	struct list_arg la = { 0 };
	struct xdp_opts o;
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (optind != argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (need_root(what))
		return EXIT_ERROR;
	if (no_iface_absent(&o))
		return EXIT_ABSENT;
	la.json = o.json;
	if (o.json)
		printf("[\n");
	ret = for_each_iface(&o, what, report, &la);
	if (o.json)
		printf("\n]\n");
	return ret;
}

static int cmd_list(int argc, char **argv)
{
	return report_each_iface("list", "listing", argc, argv, do_list);
}

static void print_plan(const struct sxdp_plan *p, bool json)
{
	double exact = sxdp_exact_bytes_per_entry(p->capacity);

	if (json) {
		printf("{\"entries\": %llu, \"target_fpr\": %.9g, \"max_entries\": %u, "
		       "\"nr_hashes\": %u, \"bits\": %llu, \"bytes\": %llu, \"bits_per_entry\": %.3f, "
		       "\"expected_fpr\": %.9g, \"exact_bytes_estimate\": %.0f}\n",
		       (unsigned long long)p->capacity, p->fpp_ppb / 1e9, p->max_entries, p->nr_hashes,
		       (unsigned long long)p->nbits, (unsigned long long)p->bytes,
		       (double)p->nbits / p->capacity, p->fpr, exact * p->capacity);
		return;
	}
	printf("entries %llu, target rate %.3g\n"
	       "bloom map: max_entries %u, %u hashes -> 2^%d bits = %.3f MiB (%.2f bits/entry)\n"
	       "expected false-positive rate %.3g per probe\n"
	       "with --exact add a hash map: about %.1f MiB (%.0f bytes/entry)\n",
	       (unsigned long long)p->capacity, p->fpp_ppb / 1e9, p->max_entries, p->nr_hashes,
	       (int)log2((double)p->nbits), p->bytes / 1048576.0, (double)p->nbits / p->capacity,
	       p->fpr, exact * p->capacity / 1048576.0, exact);
}

static int cmd_plan(int argc, char **argv)
{
	const struct cli_command *cmd = sub("plan");
	struct sxdp_list l = { 0 };
	struct sxdp_plan p;
	struct xdp_opts o;
	char err[512];
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (optind < argc - 1 || (optind == argc - 1 && o.entries))
		return cli_usage_error(cmd, "give -n ENTRIES or one file");
	if (optind == argc - 1) {
		if (sxdp_list_read(argv[optind], &l, err, sizeof(err)))
			return cli_error("%s", err);
		o.entries = l.n ? l.n : 1;
		sxdp_list_free(&l);
	}
	if (sxdp_plan(o.entries ? o.entries : SXDP_DEFAULT_CAPACITY, o.fpp_ppb, &p))
		return cli_error("no bloom map of at most 2^32 bits with 15 hashes reaches that rate");
	print_plan(&p, o.json);
	return EXIT_OK;
}

/* Entries of each kind in the list. */
static void count_kinds(const struct sxdp_list *l, uint64_t counts[SIEVE_XDP_NR_KINDS])
{
	size_t i;

	memset(counts, 0, SIEVE_XDP_NR_KINDS * sizeof(counts[0]));
	for (i = 0; i < l->n; i++)
		counts[l->keys[i].kind]++;
}

static void print_lens(const uint8_t *lens, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", lens[i]);
}

static int do_status(struct sxdp_handle *h, void *arg)
{
	struct list_arg *la = arg;
	struct sieve_xdp_config c;
	struct sxdp_list l = { 0 };
	uint64_t counts[SIEVE_XDP_NR_KINDS], bloom_mem, exact_mem;
	uint64_t nbits;
	double fpr;
	int ret = sxdp_read_config(h, &c, NULL);

	if (!ret)
		ret = sxdp_live_memory(h, &bloom_mem, &exact_mem);
	if (!ret)
		ret = sxdp_state_read(h->ifname, &l);
	if (ret)
		return cli_error("%s: %s", h->ifname, strerror(-ret));
	count_kinds(&l, counts);
	nbits = sxdp_kernel_bloom_bits(c.max_entries, c.nr_hashes);
	fpr = sxdp_bloom_fpr(nbits, c.nr_hashes, c.entries);
	if (la->json) {
		printf("%s  {\"iface\": \"%s\", \"mode\": \"%s\", \"exact\": %s, \"fail_closed\": %s, "
		       "\"entries\": %llu, \"capacity\": %llu, \"sources\": %llu, \"prefixes\": %llu, "
		       "\"services\": %llu, \"flows\": %llu, \"nr_v4_lens\": %u, \"nr_v6_lens\": %u, "
		       "\"bloom_bits\": %llu, \"nr_hashes\": %u, \"max_entries\": %u, "
		       "\"bloom_bytes\": %llu, \"exact_bytes\": %llu, \"target_fpr\": %.9g, "
		       "\"expected_fpr\": %.9g, \"generation\": %u}",
		       la->printed++ ? ",\n" : "", h->ifname, sxdp_mode(h),
		       c.flags & SIEVE_XDP_F_EXACT ? "true" : "false",
		       c.flags & SIEVE_XDP_F_FAIL_CLOSED ? "true" : "false",
		       (unsigned long long)c.entries, (unsigned long long)c.capacity,
		       (unsigned long long)counts[0], (unsigned long long)counts[1],
		       (unsigned long long)counts[2], (unsigned long long)counts[3], c.nr_v4_lens,
		       c.nr_v6_lens, (unsigned long long)nbits, c.nr_hashes, c.max_entries,
		       (unsigned long long)bloom_mem, (unsigned long long)exact_mem, c.fpp_ppb / 1e9,
		       fpr, c.gen_seq);
	} else {
		printf("%s: %s mode, %s, %s, generation %u\n", h->ifname, sxdp_mode(h),
		       c.flags & SIEVE_XDP_F_EXACT ? "exact" : "bloom-only",
		       c.flags & SIEVE_XDP_F_FAIL_CLOSED ? "fail-closed" : "fail-open", c.gen_seq);
		printf("  entries %llu of capacity %llu: %llu sources, %llu prefixes (v4 /",
		       (unsigned long long)c.entries, (unsigned long long)c.capacity,
		       (unsigned long long)counts[0], (unsigned long long)counts[1]);
		print_lens(c.v4_lens, c.nr_v4_lens);
		printf(", v6 /");
		print_lens(c.v6_lens, c.nr_v6_lens);
		printf("), %llu services, %llu flows\n", (unsigned long long)counts[2],
		       (unsigned long long)counts[3]);
		printf("  bloom: 2^%d bits, %u hashes (max_entries %u), %.3f MiB in the kernel\n",
		       (int)log2((double)nbits), c.nr_hashes, c.max_entries, bloom_mem / 1048576.0);
		if (exact_mem)
			printf("  exact map: %.3f MiB in the kernel\n", exact_mem / 1048576.0);
		printf("  expected false-positive rate per probe now %.3g (target %.3g at capacity)\n",
		       fpr, c.fpp_ppb / 1e9);
	}
	sxdp_list_free(&l);
	return EXIT_OK;
}

static int cmd_status(int argc, char **argv)
{
	return report_each_iface("status", "status", argc, argv, do_status);
}

static const char *const counter_names[SIEVE_XDP_NR_COUNTERS] = {
	[SIEVE_XDP_PACKETS] = "packets", [SIEVE_XDP_PASSED] = "passed",
	[SIEVE_XDP_DROP_SRC] = "dropped_source", [SIEVE_XDP_DROP_PREFIX] = "dropped_prefix",
	[SIEVE_XDP_DROP_SERVICE] = "dropped_service", [SIEVE_XDP_DROP_FLOW] = "dropped_flow",
	[SIEVE_XDP_DROP_MALFORMED] = "dropped_malformed", [SIEVE_XDP_BLOOM_HITS] = "bloom_hits",
	[SIEVE_XDP_FALSE_POSITIVES] = "false_positives", [SIEVE_XDP_MALFORMED] = "malformed",
	[SIEVE_XDP_NON_IP] = "non_ip",
};

struct stats_arg {
	struct list_arg out;
	struct sieve_xdp_stats prev[MAX_IFACES];
	int index;
	bool quiet;		/* a baseline round: remember, print nothing */
	double seconds;		/* 0: totals, else rates over this long */
};

/* Totals, or rates per second when seconds > 0. */
static void print_stats_text(const char *ifname, const struct sieve_xdp_stats *s,
			     const struct sieve_xdp_stats *prev, double seconds)
{
	static const char *const labels[SIEVE_XDP_NR_COUNTERS] = {
		"packets", "passed", "dropped: source", "prefix", "service", "flow", "malformed",
		"\n  bloom hits", "false positives caught", "malformed", "non-IP",
	};
	int i;

	printf("%s:%s\n  ", ifname, seconds > 0 ? " (per second)" : "");
	for (i = 0; i < SIEVE_XDP_NR_COUNTERS; i++) {
		if (seconds > 0)
			printf("%s %.1f", labels[i], (s->count[i] - prev->count[i]) / seconds);
		else
			printf("%s %llu", labels[i], (unsigned long long)s->count[i]);
		printf(i == SIEVE_XDP_DROP_MALFORMED ? "" : i == SIEVE_XDP_PASSED ? "  " :
		       i == SIEVE_XDP_NR_COUNTERS - 1 ? "\n" : ", ");
	}
}

static void print_stats(const char *ifname, const struct sieve_xdp_stats *s,
			const struct sieve_xdp_stats *prev, double seconds, struct list_arg *la)
{
	int i;

	if (!la->json) {
		print_stats_text(ifname, s, prev, seconds);
		return;
	}
	printf("%s  {\"iface\": \"%s\"", la->printed++ ? ",\n" : "", ifname);
	for (i = 0; i < SIEVE_XDP_NR_COUNTERS; i++) {
		if (seconds > 0) {
			double rate = (s->count[i] - prev->count[i]) / seconds;

			printf(", \"%s_per_s\": %.1f", counter_names[i], rate);
		} else {
			printf(", \"%s\": %llu", counter_names[i], (unsigned long long)s->count[i]);
		}
	}
	printf("}");
}

static int do_stats(struct sxdp_handle *h, void *arg)
{
	struct stats_arg *sa = arg;
	struct sieve_xdp_stats s;
	int ret = sxdp_read_stats(h, &s);

	if (ret)
		return cli_error("%s: reading the counters: %s", h->ifname, strerror(-ret));
	if (sa->index < MAX_IFACES) {
		if (!sa->quiet)
			print_stats(h->ifname, &s, &sa->prev[sa->index], sa->seconds,
				    &sa->out);
		sa->prev[sa->index] = s;
	}
	sa->index++;
	return EXIT_OK;
}

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = 1;
}

static int cmd_stats(int argc, char **argv)
{
	const struct cli_command *cmd = sub("stats");
	static struct stats_arg sa;
	struct xdp_opts o;
	uint32_t round;
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (optind != argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	sa.out.json = o.json;
	if (!o.watch) {
		if (o.json)
			printf("[\n");
		ret = for_each_iface(&o, "stats", do_stats, &sa);
		if (o.json)
			printf("\n]\n");
		return ret;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* The first round only takes the baseline. */
	sa.quiet = true;
	ret = for_each_iface(&o, "stats", do_stats, &sa);
	sa.quiet = false;
	sa.seconds = o.interval;
	for (round = 0; !ret && !exiting && (!o.count || round < o.count); round++) {
		sleep(o.interval);
		if (exiting)
			break;
		sa.index = 0;
		sa.out.printed = 0;
		/* With -j, one JSON array a line. */
		if (o.json)
			printf("[");
		ret = for_each_iface(&o, "stats", do_stats, &sa);
		printf(o.json ? "]\n" : "\n");
		fflush(stdout);
	}
	return ret;
}

/* `sieve xdp SUBCOMMAND`: one entry in the top-level table. */
static int cmd_xdp(int argc, char **argv)
{
	const struct cli_command *cmd;
	size_t i;

	if (argc < 2)
		return cli_error("no xdp subcommand given (see 'sieve xdp --help')");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		printf("usage: sieve xdp SUBCOMMAND [OPTIONS]   (sieve xdp SUBCOMMAND --help)\n\n"
		       "The XDP blocklist: drops packets by source, source prefix, service or\n"
		       "flow, with a BPF bloom filter.\n\n");
		for (i = 0; i < XDP_NSUB; i++)
			printf("  %-8s %s\n", xdp_subcommands[i].name + 4,
			       xdp_subcommands[i].summary);
		return EXIT_OK;
	}
	cmd = sub(argv[1]);
	if (!cmd)
		return cli_error("unknown xdp subcommand '%s' (see 'sieve xdp --help')", argv[1]);
	return cmd->run(argc - 1, argv + 1);
}

const struct cli_command xdp_commands[] = {
	{ "xdp", "XDP blocklist: attach, block, unblock, load, list, plan, status, stats",
	  "sieve xdp SUBCOMMAND [OPTIONS]\n"
	  "  attach, detach, block, unblock, load, list, plan, status, stats;\n"
	  "  'sieve xdp SUBCOMMAND --help' for each.",
	  cmd_xdp },
};
const unsigned int xdp_ncommands = sizeof(xdp_commands) / sizeof(xdp_commands[0]);
