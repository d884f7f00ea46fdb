// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve xdp set IFACE SETTING VALUE...`: an attached interface's sample
 * settings, changed live (one store into its pinned settings map,
 * nothing rebuilt). `sieve xdp top`: the program's samples over a window,
 * each attributed through the store to the entry that covers it (the
 * longest stored prefix over the probe that matched) and its origin.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>

#include "cli.h"
#include "json.h"
#include "ops.h"
#include "store.h"
#include "xdp.h"
#include "xdp_samples.h"

/* ---- set ---- */

static int parse_on_off(const char *v, bool *on)
{
	if (!strcmp(v, "on"))
		*on = true;
	else if (!strcmp(v, "off"))
		*on = false;
	else
		return -EINVAL;
	return 0;
}

static int parse_setting(const struct cli_command *cmd, const char *name, const char *value,
			 struct sxdp_sample_change *ch)
{
	if (!strcmp(name, "sample-rate")) {
		if (parse_u32(value, &ch->rate) || ch->rate > SIEVE_XDP_SAMPLE_RATE_MAX)
			return cli_usage_error(cmd, "sample-rate: %s: not 0-%u", value,
					       SIEVE_XDP_SAMPLE_RATE_MAX);
		ch->rate_given = true;
	} else if (!strcmp(name, "sample-allowed")) {
		if (parse_on_off(value, &ch->allowed))
			return cli_usage_error(cmd, "sample-allowed: %s: not on or off", value);
		ch->allowed_given = true;
	} else {
		return cli_usage_error(cmd, "%s: no such setting (sample-rate, sample-allowed)",
				       name);
	}
	return -1;
}

static int cmd_set(const struct cli_command *cmd, int argc, char **argv)
{
	struct sxdp_sample_change ch = { 0 };
	struct sieve_xdp_sample_cfg c;
	const char *ifname;
	struct cli_args a;
	char err[512] = "", dir[256];
	int ret = cli_parse(cmd, argc, argv, &ch, &a), i;

	if (ret >= 0)
		return ret;
	ifname = a.args[0];
	if (!sxdp_ifname_ok(ifname))
		return cli_usage_error(cmd, "%s: not an interface name", ifname);
	if (a.nargs % 2 != 1)
		return cli_usage_error(cmd, "each setting takes a value");
	for (i = 1; i < a.nargs; i += 2) {
		ret = parse_setting(cmd, a.args[i], a.args[i + 1], &ch);
		if (ret >= 0)
			return ret;
	}
	if (geteuid())
		return cli_error("sieve xdp set needs root (BPF maps)");
	ret = sxdp_sample_set(ifname, &ch, err, sizeof(err));
	if (ret)
		return cli_error("%s", err);
	sxdp_pin_dir(dir, sizeof(dir), ifname);
	if (sxdp_sample_cfg_get(dir, &c))
		return cli_error("%s: reading the settings back failed", ifname);
	if (a.json) {
		json_object(NULL);
		json_str("iface", ifname);
		json_u64("sample_rate", c.rate);
		json_bool("sample_allowed", c.flags & SIEVE_XDP_SAMPLE_ALLOWED);
		json_end();
	} else {
		printf("%s: sample-rate %u, sample-allowed %s\n", ifname, c.rate,
		       c.flags & SIEVE_XDP_SAMPLE_ALLOWED ? "on" : "off");
	}
	return EXIT_OK;
}

const struct cli_command xdp_set_command = {
	"xdp set", "change an attached interface's settings, live",
	.args = "IFACE SETTING VALUE...", .min_args = 3, .max_args = -1,
	.details = "  sample-rate N: samples of dropped packets a second per CPU, 0-"
		   CLI_STR(SIEVE_XDP_SAMPLE_RATE_MAX) "\n"
		   "  (0: none), for sieve xdp capture and top; a token bucket per CPU, so a\n"
		   "  flood costs one bucket check per drop. sample-allowed on|off: sample\n"
		   "  the packets the allowlist let through too. Takes effect at once,\n"
		   "  nothing rebuilt; kept until detach (not in the store: a restore after\n"
		   "  a reboot samples at the default rate). Prints the settings now.",
	.options = CLI_OPTIONS(CLI_JSON_OPTIONS),
	.run = cmd_set,
};

/* ---- top ---- */

enum top_by { TOP_ENTRY, TOP_SOURCE, TOP_ORIGIN };

#define TOP_GROUPS_MAX	4096	/* more distinct rows count as "(others)" */
#define TOP_ROWS	10
#define TOP_IFACES	64

struct top_opts {
	const char *state_dir;	/* first, for xdp_opt_state_dir */
	const char *iface;
	enum top_by by;
	uint32_t window;	/* seconds */
	uint32_t rows;
};

struct top_group {
	char name[160];
	uint64_t samples;
};

struct top {
	const struct top_opts *o;
	struct sxdp_store *s;
	struct top_group *groups;
	size_t n;
	uint64_t samples, others;
};

static int set_top_iface(void *opts, const char *arg)
{
	((struct top_opts *)opts)->iface = arg;
	return sxdp_ifname_ok(arg) ? 0 : -EINVAL;
}

XDP_STATE_DIR_FIRST(struct top_opts);

static int set_by(void *opts, const char *arg)
{
	struct top_opts *o = opts;

	if (!strcmp(arg, "entry"))
		o->by = TOP_ENTRY;
	else if (!strcmp(arg, "source"))
		o->by = TOP_SOURCE;
	else if (!strcmp(arg, "origin"))
		o->by = TOP_ORIGIN;
	else
		return -EINVAL;
	return 0;
}

static int set_window(void *opts, const char *arg)
{
	struct top_opts *o = opts;

	return parse_u32(arg, &o->window) || !o->window || o->window > 3600 ? -EINVAL : 0;
}

static int set_rows(void *opts, const char *arg)
{
	struct top_opts *o = opts;

	return parse_u32(arg, &o->rows) || !o->rows ? -EINVAL : 0;
}

static int first_origin(const char *key, const char *origin, void *ctx)
{
	snprintf(ctx, 128, "%s", origin);
	return 1;
}

/*
 * The stored entry that covers @key (what the sample matched): the key
 * itself, or for a prefix the longest stored prefix at or above the probe
 * length (controlled prefix expansion stores a prefix at a longer probe
 * length). 0 and the entry in @key, or 1 if none is stored (a false
 * positive of a bloom-only filter, or an entry gone since).
 */
static int covering_entry(struct sxdp_store *s, const char *list, struct sieve_xdp_key *key)
{
	unsigned int bits = key->family == SIEVE_XDP_V4 ? 32 : 128, len;
	struct sieve_xdp_key k;
	bool found = false;

	if (key->kind != SIEVE_XDP_SRC && key->kind != SIEVE_XDP_PREFIX)
		return sxdp_store_has(s, list, false, key, &found) || !found;
	for (len = key->prefix_len; len >= 1; len--) {
		unsigned char *a;
		unsigned int i;

		k = *key;
		k.kind = len == bits ? SIEVE_XDP_SRC : SIEVE_XDP_PREFIX;
		k.prefix_len = len;
		a = (unsigned char *)k.saddr;
		for (i = 0; i < 16; i++)
			a[i] &= i * 8 + 8 <= len ? 0xff : i * 8 >= len ? 0 :
				(unsigned char)(0xff00 >> (len - i * 8));
		if (!sxdp_store_has(s, list, false, &k, &found) && found) {
			*key = k;
			return 0;
		}
	}
	return 1;
}

/* The row of @s by what top groups by: an entry, a source or an origin. */
static void attribute(struct top *t, const char *ifname, const struct sieve_xdp_sample *s,
		      char *name, size_t len)
{
	struct sxdp_attachment rec;
	struct sieve_xdp_key key;
	char text[128], origin[128] = "";
	const char *list;

	if (t->o->by == TOP_SOURCE) {
		if (sxdp_sample_source(s, &key))
			snprintf(name, len, "(cut short)");
		else
			sxdp_format_entry(&key, name, len);
		return;
	}
	if (sxdp_sample_key(s, &key)) {
		snprintf(name, len, "(%s)", sxdp_sample_reason(s));
		return;
	}
	list = !sxdp_store_attach_get(t->s, sxdp_netns(), ifname, &rec, NULL, 0) ? rec.list :
	       SXDP_DEFAULT_LIST;
	if (covering_entry(t->s, list, &key)) {
		snprintf(name, len, "(%s hit on no list entry)", sxdp_sample_reason(s));
		return;
	}
	sxdp_format_entry(&key, text, sizeof(text));
	sxdp_store_origins_of(t->s, list, false, &key, 1, first_origin, origin, NULL, 0);
	if (t->o->by == TOP_ORIGIN)
		snprintf(name, len, "%s", origin[0] ? origin : "(no origin)");
	else
		snprintf(name, len, "%s%s%s%s", text, s->verdict == XDP_PASS ? " (allowed)" : "",
			 origin[0] ? " from " : "", origin);
}

static int top_sample(const char *ifname, const struct sieve_xdp_sample *s, void *ctx)
{
	struct top *t = ctx;
	char name[sizeof(t->groups[0].name)];
	size_t i;

	attribute(t, ifname, s, name, sizeof(name));
	t->samples++;
	for (i = 0; i < t->n; i++)
		if (!strcmp(t->groups[i].name, name))
			break;
	if (i == t->n) {
		if (t->n == TOP_GROUPS_MAX) {
			t->others++;
			return 0;
		}
		snprintf(t->groups[t->n].name, sizeof(t->groups[0].name), "%s", name);
		t->groups[t->n++].samples = 0;
	}
	t->groups[i].samples++;
	return 0;
}

static int by_samples(const void *a, const void *b)
{
	const struct top_group *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 :
	       strcmp(x->name, y->name);
}

static volatile sig_atomic_t top_stop;

static void on_top_signal(int sig)
{
	top_stop = sig;
}

static int top_collect(struct top *t, char names[][IF_NAMESIZE], int n)
{
	struct sigaction sa = { .sa_handler = on_top_signal };
	struct sxdp_sampler *r;
	struct timespec start, now;
	char err[512] = "";
	int ret = sxdp_sampler_open(names, n, top_sample, t, &r, err, sizeof(err));

	if (ret)
		return cli_error("%s", err);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		ret = sxdp_sampler_poll(r, 200);
		if (ret == -EINTR)
			ret = 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!ret && !top_stop &&
		 (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 <
		 (long)t->o->window * 1000);
	sxdp_sampler_close(r);
	return ret ? cli_error("reading the samples: %s", strerror(-ret)) : 0;
}

static void top_print(const struct top *t, bool json)
{
	static const char *const by_name[] = { "entry", "source", "origin" };
	size_t i;

	if (json) {
		json_object(NULL);
		json_u64("window_s", t->o->window);
		json_u64("samples", t->samples);
		json_str("by", by_name[t->o->by]);
		json_array("top");
		for (i = 0; i < t->n && i < t->o->rows; i++) {
			json_object(NULL);
			json_str(by_name[t->o->by], t->groups[i].name);
			json_u64("samples", t->groups[i].samples);
			json_end();
		}
		json_end();
		json_end();
		return;
	}
	printf("%llu samples in %u s, by %s\n", (unsigned long long)t->samples, t->o->window,
	       by_name[t->o->by]);
	for (i = 0; i < t->n && i < t->o->rows; i++)
		printf("%10llu %5.1f%%  %s\n", (unsigned long long)t->groups[i].samples,
		       100.0 * t->groups[i].samples / t->samples, t->groups[i].name);
	if (t->others)
		printf("%10llu %5.1f%%  (others)\n", (unsigned long long)t->others,
		       100.0 * t->others / t->samples);
}

static int cmd_top(const struct cli_command *cmd, int argc, char **argv)
{
	struct top_opts o = { .window = 10, .rows = TOP_ROWS };
	struct top t = { .o = &o };
	char names[TOP_IFACES][IF_NAMESIZE];
	struct cli_args a;
	int ret = cli_parse(cmd, argc, argv, &o, &a), n;

	if (ret >= 0)
		return ret;
	if (geteuid())
		return cli_error("sieve xdp top needs root (BPF maps)");
	if (o.iface) {
		snprintf(names[0], IF_NAMESIZE, "%s", o.iface);
		n = 1;
	} else if ((n = sxdp_list_ifaces(names, TOP_IFACES)) <= 0) {
		return cli_error("the blocklist is attached to no interface");
	}
	t.groups = calloc(TOP_GROUPS_MAX, sizeof(*t.groups));
	if (!t.groups)
		return cli_error("out of memory");
	if (xdp_open_store(o.state_dir, NULL, cmd->name, &t.s)) {
		free(t.groups);
		return EXIT_ERROR;
	}
	ret = top_collect(&t, names, n);
	if (!ret) {
		qsort(t.groups, t.n, sizeof(*t.groups), by_samples);
		top_print(&t, a.json);
	}
	sxdp_store_close(t.s);
	free(t.groups);
	return ret ? EXIT_ERROR : EXIT_OK;
}

static const struct cli_option opt_top_iface = {
	"iface", 'i', "IFACE", "one interface (default: every one with the blocklist)",
	.set = set_top_iface, .accepts = "an interface name",
};
static const struct cli_option opt_by = {
	"by", 0, "WHAT", "rows by entry (default), source or origin", .set = set_by,
	.accepts = "entry, source or origin", .choices = "entry source origin",
};
static const struct cli_option opt_window = {
	"window", 0, "S", "read samples for S seconds (default 10)", .set = set_window,
	.accepts = "seconds, 1-3600",
};
static const struct cli_option opt_rows = {
	"rows", 'n', "N", "the first N rows (default " CLI_STR(TOP_ROWS) ")", .set = set_rows,
	.accepts = "a count from 1",
};

const struct cli_command xdp_top_command = {
	"xdp top", "the top dropped entries, sources or origins, from the samples",
	.details = "  Reads the program's samples (sieve xdp set IFACE sample-rate N) for\n"
		   "  --window seconds, then prints the rows with the most samples. An entry\n"
		   "  is the one of the store that covers the sample (for a prefix, the\n"
		   "  longest stored one over the probe that matched), with its origin;\n"
		   "  \"on no list entry\" is a false positive of the filter, or an entry\n"
		   "  gone since. Samples, not packets: sieve xdp stats counts those. The\n"
		   "  ring has one reader: a capture and a top at once split the samples.",
	.options = CLI_OPTIONS(&opt_top_iface, &opt_by, &opt_window, &opt_rows, &xdp_opt_state_dir,
			       CLI_JSON_OPTIONS),
	.max_args = 0,
	.run = cmd_top,
};
