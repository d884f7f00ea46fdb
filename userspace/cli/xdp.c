// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve xdp ...`: the XDP blocklist. Entries live in named lists in the
 * store (SQLite, --state-dir); an interface enforces one list. A change to
 * a list reaches every interface enforcing it (ops.h): the list is --list,
 * or the one -i IFACE enforces, else "default". Reports act on an
 * interface (-i IFACE), or on every interface that has the blocklist when
 * -i is not given. Exit codes as everywhere: 0, 1 not present, 2 error;
 * and 3, EXIT_NOT_ENFORCED: a change kept in the store that a recorded
 * attachment of the list does not enforce, or status of such an
 * attachment (xdp_enforce.c).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_link.h>

#include "cli.h"
#include "conf.h"
#include "escape.h"
#include "fleet.h"
#include "json.h"
#include "ops.h"
#include "report.h"
#include "xdp.h"
#include "xdp_json.h"
#include "xdp_list.h"
#include "backend.h"
#include "xdp_enforce.h"
#include "xdp_capture.h"
#include "xdp_samples.h"

#define MAX_IFACES	64

struct xdp_opts {
	const char *state_dir;	/* --state-dir: first, for xdp_opt_state_dir */
	const char *iface;
	bool json;
	bool exact, no_exact, fail_closed, fail_open, force, watch;
	bool dry_run, enforce;	/* attach --dry-run, --enforce */
	bool allow_empty;	/* load --allow-empty */
	bool all;		/* detach --all; stats --watch --all: the rows at zero too */
	uint32_t xdp_flags;
	uint32_t fpp_ppb;
	bool fpp_given;
	uint64_t capacity, entries;
	uint32_t interval, count;
	enum sxdp_format format;	/* load: the file's format */
	uint32_t max_probes;	/* 0: not given */
	const char *list;	/* --list */
	const char *origin;	/* load, block, unblock --origin */
	const char *comment;	/* block/allow --comment */
	const char *kind;	/* list --kind */
	uint64_t ttl;		/* seconds; 0: never expires */
	bool ttl_given;		/* --ttl, a TTL or never: else a re-block keeps the expiry */
	uint32_t backend;	/* SIEVE_XDP_F_BLOCKED, SIEVE_XDP_F_FILTER or 0 */
	const char *filter;	/* --backend filter:NAME */
	bool backend_given;
	bool fleet;		/* block/unblock/allow/disallow --fleet: publish */
	const char *config;	/* --config: the settings with [fleet] */
	struct sxdp_sample_change sample;	/* attach --sample-rate */
	const char *cmd;	/* the command's name, "xdp list", for messages */
	int nargs;		/* the positional arguments, after the options */
	char **args;
};

static int set_iface(void *opts, const char *arg)
{
	((struct xdp_opts *)opts)->iface = arg;
	return sxdp_ifname_ok(arg) ? 0 : -EINVAL;
}

static int set_entries(void *opts, const char *arg)
{
	struct xdp_opts *o = opts;

	return parse_u64(arg, &o->entries) || !o->entries ? -EINVAL : 0;
}

static int set_fpr(void *opts, const char *arg)
{
	struct xdp_opts *o = opts;

	if (parse_rate_ppb(arg, &o->fpp_ppb))
		return -EINVAL;
	o->fpp_given = true;
	return 0;
}

static int set_mode(void *opts, const char *arg)
{
	struct xdp_opts *o = opts;

	if (!strcmp(arg, "native"))
		o->xdp_flags = XDP_FLAGS_DRV_MODE;
	else if (!strcmp(arg, "generic"))
		o->xdp_flags = XDP_FLAGS_SKB_MODE;
	else
		return -EINVAL;
	return 0;
}

static int set_format(void *opts, const char *arg)
{
	return sxdp_format_parse(arg, &((struct xdp_opts *)opts)->format);
}

static int set_capacity(void *opts, const char *arg)
{
	struct xdp_opts *o = opts;

	return parse_u64(arg, &o->capacity) || !o->capacity || o->capacity > UINT32_MAX ?
	       -EINVAL : 0;
}

static int set_interval(void *opts, const char *arg)
{
	struct xdp_opts *o = opts;

	return parse_u32(arg, &o->interval) || !o->interval || o->interval > 3600 ? -EINVAL : 0;
}

static int set_count(void *opts, const char *arg)
{
	struct xdp_opts *o = opts;

	return parse_u32(arg, &o->count) || !o->count ? -EINVAL : 0;
}

static int set_max_probes(void *opts, const char *arg)
{
	struct xdp_opts *o = opts;

	return parse_u32(arg, &o->max_probes) || !o->max_probes ||
	       o->max_probes > SIEVE_XDP_MAX_PREFIX_LENS ? -EINVAL : 0;
}

static int set_sample_rate(void *opts, const char *arg)
{
	struct xdp_opts *o = opts;

	o->sample.rate_given = true;
	return parse_u32(arg, &o->sample.rate) || o->sample.rate > SIEVE_XDP_SAMPLE_RATE_MAX ?
	       -EINVAL : 0;
}

static int set_list(void *opts, const char *arg)
{
	((struct xdp_opts *)opts)->list = arg;
	return sxdp_list_name_ok(arg) ? 0 : -EINVAL;
}

XDP_STATE_DIR_FIRST(struct xdp_opts);

static int set_state_dir(void *opts, const char *arg)
{
	*(const char **)opts = arg;
	return *arg == '/' ? 0 : -EINVAL;
}

static int set_origin(void *opts, const char *arg)
{
	((struct xdp_opts *)opts)->origin = arg;
	return *arg && strlen(arg) <= 256 ? 0 : -EINVAL;
}

static int set_config(void *opts, const char *arg)
{
	((struct xdp_opts *)opts)->config = arg;
	return *arg ? 0 : -EINVAL;
}

static int set_kind(void *opts, const char *arg)
{
	((struct xdp_opts *)opts)->kind = arg;
	return xdp_kind_ok(arg) ? 0 : -EINVAL;
}

static int set_comment(void *opts, const char *arg)
{
	((struct xdp_opts *)opts)->comment = arg;
	return strlen(arg) <= 1024 ? 0 : -EINVAL;
}

/* Ten years: past that a TTL is a typo, and never is what was meant. */
#define MAX_TTL		(10ULL * 366 * 86400)

/*
 * "90s", "10m", "2h", "7d" or "never". A bare number is refused: 10 could
 * mean seconds, minutes or (to fail2ban users) anything.
 */
static int set_ttl(void *opts, const char *arg)
{
	static const struct { char unit; uint64_t secs; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	struct xdp_opts *o = opts;
	uint64_t n = 0;
	const char *p = arg;
	size_t i;

	o->ttl_given = true;
	if (!strcmp(arg, "never")) {
		o->ttl = 0;
		return 0;
	}
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (*p - '0');
		if (n > MAX_TTL)
			return -EINVAL;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]) && units[i].unit != *p; i++)
		;
	if (!*p || i == sizeof(units) / sizeof(units[0]) || p[1])
		return -EINVAL;
	o->ttl = n * units[i].secs;
	return o->ttl && o->ttl <= MAX_TTL ? 0 : -EINVAL;
}

static int set_backend(void *opts, const char *arg)
{
	struct xdp_opts *o = opts;

	int ret = sxdp_filter_parse(arg, &o->filter);

	o->backend_given = true;
	if (ret <= 0) {
		o->backend = sxdp_filter_ops.cfg_flag;
		return ret;
	}
	return sxdp_backend_parse(arg, &o->backend);
}

#define XDP_RATE_ACCEPTS	"between 1e-9 and 1, e.g. 1e-6 or 0.01%"

static const struct cli_option opt_iface = {
	"iface", 'i', "IFACE", "this interface (default: every one with the blocklist)",
	.set = set_iface, .accepts = "an interface name (" SXDP_IFNAME_RULE ")",
};
/* A change's -i: it names a list, the one IFACE enforces (target_list). */
static const struct cli_option opt_change_iface = {
	"iface", 'i', "IFACE", "the list IFACE enforces (default: --list, else \"default\")",
	.set = set_iface, .accepts = "an interface name (" SXDP_IFNAME_RULE ")",
};
/* expire's and list's -i: the same, and every list without it (target_lists). */
static const struct cli_option opt_lists_iface = {
	"iface", 'i', "IFACE", "the list IFACE enforces (default: every list)",
	.set = set_iface, .accepts = "an interface name (" SXDP_IFNAME_RULE ")",
};
static const struct cli_option opt_entries = {
	"entries", 'n', "ENTRIES", "entries to plan for (default 65536)",
	.set = set_entries, .accepts = "a positive integer",
};
static const struct cli_option opt_fpr = {
	"fpr", 0, "FPR", "target false-positive rate per probe (default 1e-6)",
	.set = set_fpr, .accepts = XDP_RATE_ACCEPTS,
};
/* The old name, before -p became --pretty: kept one release, not in --help. */
static const struct cli_option opt_fpp = {
	"fpp", 0, "FPR", "old name of --fpr", .hidden = true,
	.set = set_fpr, .accepts = XDP_RATE_ACCEPTS,
};
static const struct cli_option opt_mode = {
	"mode", 0, "MODE", "native or generic (default: native where the driver has it)",
	.set = set_mode, .accepts = "native or generic", .choices = "native generic",
};
static const struct cli_option opt_exact = {
	"exact", 0, NULL, "confirm bloom hits in a hash map (~100 bytes/entry)",
	CLI_FLAG(struct xdp_opts, exact),
};
static const struct cli_option opt_no_exact = {
	"no-exact", 0, NULL, "bloom only (the default)", CLI_FLAG(struct xdp_opts, no_exact),
};
static const struct cli_option opt_sample_rate = {
	"sample-rate", 0, "N", "samples of dropped packets a second per CPU (0: none; default "
	CLI_STR(SIEVE_XDP_SAMPLE_RATE_DEFAULT) ")", .set = set_sample_rate,
	.accepts = "0-" CLI_STR(SIEVE_XDP_SAMPLE_RATE_MAX),
};
static const struct cli_option opt_fail_closed = {
	"fail-closed", 0, NULL, "drop malformed packets", CLI_FLAG(struct xdp_opts, fail_closed),
};
static const struct cli_option opt_fail_open = {
	"fail-open", 0, NULL, "pass malformed packets (the default)",
	CLI_FLAG(struct xdp_opts, fail_open),
};
static const struct cli_option opt_dry_run = {
	"dry-run", 0, NULL, "judge and count every packet, drop none (monitor mode)",
	CLI_FLAG(struct xdp_opts, dry_run),
};
static const struct cli_option opt_enforce = {
	"enforce", 0, NULL, "drop what the list matches (the default)",
	CLI_FLAG(struct xdp_opts, enforce),
};
static const struct cli_option opt_force = {
	"force", 0, NULL, "replace another XDP program", CLI_FLAG(struct xdp_opts, force),
};
static const struct cli_option opt_detach_all = {
	"all", 0, NULL, "every interface in every namespace that this host's pins know",
	CLI_FLAG(struct xdp_opts, all),
};
static const struct cli_option opt_capacity = {
	"capacity", 0, "N", "entries the first maps are planned for (default 65536)",
	.set = set_capacity, .accepts = "1 to 2^32-1 entries",
};
static const struct cli_option opt_format = {
	"format", 0, "FORMAT", "auto (default), plain, netset, drop or ipset",
	.set = set_format, .accepts = "auto, plain, netset, drop or ipset",
	.choices = "auto plain netset drop ipset",
};
static const struct cli_option opt_max_probes = {
	"max-probes", 0, "P", "prefix lengths probed per family (default 8); others are expanded",
	.set = set_max_probes, .accepts = "1 to 16",
};
static const struct cli_option opt_list = {
	"list", 0, "LIST", "the list (default: the interface's with -i, else \"default\")",
	.set = set_list, .accepts = "1-64 of A-Z a-z 0-9 _ . -",
};
static const struct cli_option opt_attach_list = {
	"list", 0, "LIST", "the list to enforce (default: the one it has, else \"default\")",
	.set = set_list, .accepts = "1-64 of A-Z a-z 0-9 _ . -",
};
const struct cli_option xdp_opt_state_dir = {
	"state-dir", 0, "DIR", "the store's folder (default $SIEVE_STATE_DIR, else sieve.conf's "
	"state_dir, else " SXDP_STORE_DIR ")", .set = set_state_dir, .accepts = "an absolute path",
};
static const struct cli_option opt_ttl = {
	"ttl", 0, "TTL", "expire after TTL: 90s, 10m, 2h, 7d, or never (default: a new entry never, "
	"one there keeps its expiry)",
	.set = set_ttl, .accepts = "a number with its unit (s, m, h or d: 90s, 10m, 2h, 7d), "
	"up to 10 years, or never",
};
static const struct cli_option opt_origin = {
	"origin", 0, "NAME",
	"the feed's name: a reload replaces only its entries (default: FILE's base name)",
	.set = set_origin, .accepts = "1 to 256 characters",
};
static const struct cli_option opt_change_origin = {
	"origin", 0, "NAME",
	"the source of the change (a fail2ban jail's): block leaves an entry another origin holds "
	"to it, unblock removes only this origin's (default: cli, both without those limits)",
	.set = set_origin, .accepts = "1 to 256 characters",
};
static const struct cli_option opt_allow_empty = {
	"allow-empty", 0, NULL, "load a FILE without entries even if it empties the origin",
	CLI_FLAG(struct xdp_opts, allow_empty),
};
static const struct cli_option opt_comment = {
	"comment", 0, "TEXT", "a note kept with the entries", .set = set_comment,
	.accepts = "up to 1024 characters",
};
static const struct cli_option opt_backend = {
	"backend", 0, "BACKEND",
	"bloom-map (the kernel's, default), blocked (one cache line) or filter:NAME (a /dev/sieve filter)",
	.set = set_backend, .accepts = "bloom-map, blocked or filter:NAME (a filter name)",
	.choices = "bloom-map blocked",
};
static const struct cli_option opt_fleet = {
	"fleet", 0, NULL, "publish to the fleet's Redis instead (every host's agent applies it)",
	CLI_FLAG(struct xdp_opts, fleet),
};
static const struct cli_option opt_config = {
	"config", 0, "FILE", "--fleet: the settings naming Redis (default $SIEVE_CONFIG, else "
	SCONF_CONFIG_FILE ")", .set = set_config, .accepts = "a file",
};
static const struct cli_option opt_watch = {
	"watch", 0, NULL, "print the rates every interval", CLI_FLAG(struct xdp_opts, watch),
};
static const struct cli_option opt_interval = {
	"interval", 0, "S", "--watch: seconds between prints (default 1)",
	.set = set_interval, .accepts = "1 to 3600 seconds",
};
static const struct cli_option opt_watch_all = {
	"all", 0, NULL, "--watch: also the counters that did not move", CLI_FLAG(struct xdp_opts, all),
};
static const struct cli_option opt_count = {
	"count", 0, "N", "--watch: stop after N prints", .set = set_count,
	.accepts = "a positive integer",
};

/* Returns -1 when parsing went through, else the exit code to end with. */
static int parse_xdp_opts(const struct cli_command *cmd, int argc, char **argv,
			  struct xdp_opts *o)
{
	struct cli_args a;
	int ret;

	*o = (struct xdp_opts){ .fpp_ppb = SXDP_DEFAULT_FPP_PPB, .capacity = SXDP_DEFAULT_CAPACITY,
				.interval = 1 };
	ret = cli_parse(cmd, argc, argv, o, &a);
	if (ret >= 0)
		return ret;
	o->json = a.json;
	o->cmd = cmd->name;
	o->args = a.args;
	o->nargs = a.nargs;
	if ((o->exact && o->no_exact) || (o->fail_closed && o->fail_open) ||
	    (o->dry_run && o->enforce))
		return cli_usage_error(cmd, "contradictory options");
	return -1;
}

/* @cmd: the command's name ("xdp block"): "sieve xdp block needs root (...)". */
static int need_root(const char *cmd)
{
	return geteuid() ? cli_error("sieve %s needs root (BPF maps and XDP)", cmd) : 0;
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

/* For status and stats: an older program's maps too (h->stale). */
static int open_iface(const char *ifname, struct sxdp_handle *h)
{
	int err = sxdp_open_reader(ifname, h);

	if (err == -ENOENT)
		return cli_error("the blocklist is not attached to %s (sieve xdp attach %s)",
				 ifname, ifname);
	if (err)
		return cli_error("%s: opening the pinned maps: %s", ifname, strerror(-err));
	return 0;
}

static uint32_t cfg_flags_of(const struct xdp_opts *o)
{
	return (o->exact ? SIEVE_XDP_F_EXACT : 0) | (o->fail_closed ? SIEVE_XDP_F_FAIL_CLOSED : 0) |
	       (o->dry_run ? SIEVE_XDP_F_DRY_RUN : 0) | o->backend;
}

/*
 * The store by the agent's order too (settings.h): --state-dir,
 * $SIEVE_STATE_DIR, the file; its [store] sync likewise.
 */
int xdp_open_store(const char *state_dir, const char *config, const char *cmd,
		   struct sxdp_store **s)
{
	struct sconf_cmdline cl = { .config = config };
	char err[512] = "", dir[4096];
	enum sxdp_store_sync sync;
	struct stat st;
	int ret;

	cl.set[SCONF_STATE_DIR] = state_dir;
	ret = sconf_store_settings(&cl, dir, sizeof(dir), &sync, err, sizeof(err));
	if (ret)
		return cli_error("%s", err[0] ? err : strerror(-ret));
	ret = sxdp_store_open_sync(dir, sync, s, err, sizeof(err));
	/*
	 * Not "sieve.db: Permission denied" but what to do about it: only its
	 * owner opens a store (sxdp_store_open), root's unless made by another.
	 */
	if ((ret == -EACCES || ret == -EPERM) && geteuid() &&
	    (stat(dir, &st) || st.st_uid == 0))
		return cli_error("sieve %s needs root: the store in %s is root's", cmd, dir);
	return ret ? cli_error("%s", err[0] ? err : strerror(-ret)) : 0;
}

static int open_store(const struct xdp_opts *o, struct sxdp_store **s)
{
	return xdp_open_store(o->state_dir, o->config, o->cmd, s);
}

/*
 * What an attach again changed, from the records before and after: ", "
 * separated in @buf ("" for nothing), and each field's name in JSON.
 */
static void attach_changes(const struct sxdp_attachment *was, const struct sxdp_attachment *now,
			   bool json, char *buf, size_t len)
{
	static const struct { uint32_t flag; const char *name, *on, *off; } flags[] = {
		{ SIEVE_XDP_F_EXACT, "exact", "exact", "bloom-only" },
		{ SIEVE_XDP_F_FAIL_CLOSED, "fail_closed", "fail-closed", "fail-open" },
		{ SIEVE_XDP_F_DRY_RUN, "dry_run", "dry run", "enforcing" },
	};
	size_t i, n = 0;

	buf[0] = '\0';
#define CHANGED(name, fmt, ...) do {						\
		if (json)							\
			json_str(NULL, name);					\
		n += snprintf(buf + n, n < len ? len - n : 0, "%s" fmt,		\
			      n ? ", " : "", __VA_ARGS__);			\
	} while (0)
	if (strcmp(was->list, now->list))
		CHANGED("list", "list %s (was %s)", now->list, was->list);
	if (strcmp(was->backend, now->backend))
		CHANGED("backend", "%s backend (was %s)", now->backend, was->backend);
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if ((was->flags ^ now->flags) & flags[i].flag)
			CHANGED(flags[i].name, "%s (was %s)",
				now->flags & flags[i].flag ? flags[i].on : flags[i].off,
				was->flags & flags[i].flag ? flags[i].on : flags[i].off);
	if (was->fpp_ppb != now->fpp_ppb)
		CHANGED("target_fpr", "target rate %.3g (was %.3g)", now->fpp_ppb / 1e9,
			was->fpp_ppb / 1e9);
	if (was->max_probes != now->max_probes)
		CHANGED("max_probes", "max probes %u (was %u)", now->max_probes, was->max_probes);
#undef CHANGED
}

static int cmd_attach(const struct cli_command *cmd, int argc, char **argv)
{
	struct sxdp_attachment rec_was, rec_now;
	struct sxdp_attach_opts ao;
	struct sxdp_store *s;
	struct sxdp_prog prog, was;
	struct xdp_opts o;
	char err[512], changes[256];
	bool recorded;
	int ret = parse_xdp_opts(cmd, argc, argv, &o), i;

	if (ret >= 0)
		return ret;
	if (need_root(cmd->name) || open_store(&o, &s))
		return EXIT_ERROR;
	ao = (struct sxdp_attach_opts){
		.xdp_flags = o.xdp_flags, .cfg_flags = cfg_flags_of(&o),
		.cfg_given = (o.exact || o.no_exact ? SIEVE_XDP_F_EXACT : 0) |
			     (o.fail_closed || o.fail_open ? SIEVE_XDP_F_FAIL_CLOSED : 0) |
			     (o.dry_run || o.enforce ? SIEVE_XDP_F_DRY_RUN : 0) |
			     (o.backend_given ? sxdp_backend_flags() : 0),
		.fpp_ppb = o.fpp_ppb, .fpp_given = o.fpp_given, .capacity = o.capacity,
		.max_probes = o.max_probes, .force = o.force, .list = o.list, .filter = o.filter,
		.sample = o.sample };
	for (i = 0, ret = EXIT_OK; ret == EXIT_OK && i < o.nargs; i++) {
		err[0] = '\0';
		/* What ran before, for the message of an upgrade. */
		if (sxdp_prog_running(sxdp_netns(), o.args[i], &was))
			snprintf(was.tag, sizeof(was.tag), "?");
		/* And its settings, to say what an attach again changed. */
		recorded = !sxdp_store_attach_get(s, sxdp_netns(), o.args[i], &rec_was, NULL, 0);
		if (!recorded)
			rec_was = (struct sxdp_attachment){ 0 };
		ret = sxdp_attach(s, o.args[i], &ao, err, sizeof(err));
		if (ret < 0 || !recorded ||
		    sxdp_store_attach_get(s, sxdp_netns(), o.args[i], &rec_now, NULL, 0))
			rec_now = rec_was;
		if (ret < 0) {
			ret = cli_error("%s: %s", o.args[i], err[0] ? err : strerror(-ret));
		} else if (o.json) {
			/* One document per interface, as each is attached. */
			json_object(NULL);
			json_str("iface", o.args[i]);
			json_str("attached", ret == SXDP_ALREADY ? "already" :
					     ret == SXDP_UPGRADED ? "upgraded" : "now");
			if (!sxdp_prog_running(sxdp_netns(), o.args[i], &prog))
				json_str("prog_tag", prog.tag);
			if (ret == SXDP_UPGRADED)
				json_str("replaced_tag", was.tag);
			json_array("changed");
			attach_changes(&rec_was, &rec_now, true, changes, sizeof(changes));
			json_end();
			json_end();
			ret = EXIT_OK;
		} else if (ret == SXDP_UPGRADED) {
			if (sxdp_prog_running(sxdp_netns(), o.args[i], &prog))
				snprintf(prog.tag, sizeof(prog.tag), "?");
			attach_changes(&rec_was, &rec_now, false, changes, sizeof(changes));
			printf("%s: already attached; upgraded: it ran another build's program "
			       "(tag %s), now this sieve's (tag %s)%s%s\n", o.args[i], was.tag, prog.tag,
			       changes[0] ? "; now " : "", changes);
			ret = EXIT_OK;
		} else if (ret == SXDP_ALREADY) {
			attach_changes(&rec_was, &rec_now, false, changes, sizeof(changes));
			printf("%s: already attached%s%s\n", o.args[i], changes[0] ? "; now " : "",
			       changes);
			ret = EXIT_OK;
		} else {
			printf("%s: attached%s\n", o.args[i],
			       o.dry_run ? ", dry run (judges and counts, drops nothing)" : "");
			ret = EXIT_OK;
		}
	}
	sxdp_store_close(s);
	return ret;
}

static int cmd_detach(const struct cli_command *cmd, int argc, char **argv)
{
	struct sxdp_store *s;
	struct xdp_opts o;
	char err[512];
	int ret = parse_xdp_opts(cmd, argc, argv, &o), i;

	if (ret >= 0)
		return ret;
	if (o.all != !o.nargs)
		return cli_usage_error(cmd, "IFACE... or --all, one of them");
	if (o.all)
		return xdp_removal_run(false, o.state_dir, o.json);
	if (need_root(cmd->name) || open_store(&o, &s))
		return EXIT_ERROR;
	if (o.json)
		xdp_json_begin("detach", "interfaces");
	for (i = 0, ret = EXIT_OK; ret == EXIT_OK && i < o.nargs; i++) {
		err[0] = '\0';
		ret = sxdp_detach(s, o.args[i], err, sizeof(err));
		if (ret < 0) {
			ret = cli_error("%s: %s", o.args[i], err[0] ? err : strerror(-ret));
		} else if (o.json) {
			xdp_json_detached(o.args[i], !ret);
			ret = EXIT_OK;
		} else {
			printf("%s: %s\n", o.args[i], ret ? "was not attached" : "detached");
			ret = EXIT_OK;
		}
	}
	if (o.json)
		xdp_json_end();
	sxdp_store_close(s);
	return ret;
}

/* Runs fn on each target interface, to read it; stops at the first error. */
static int for_each_iface(const struct xdp_opts *o, const char *what,
			  int (*fn)(struct sxdp_handle *h, void *arg), void *arg)
{
	char names[MAX_IFACES][IF_NAMESIZE];
	struct sxdp_handle h;
	int n, i, ret, worst = EXIT_OK;

	if (need_root(what))
		return EXIT_ERROR;
	n = target_ifaces(o, names);
	/* Exit 1, as status's: nothing to report is "not present", not an error. */
	if (!n) {
		cli_error("no interface has the blocklist (sieve xdp attach IFACE)");
		return EXIT_ABSENT;
	}
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

/*
 * The list a change goes to: --list, or the one -i IFACE enforces, or
 * "default". @name holds it.
 */
static int target_list(const struct xdp_opts *o, struct sxdp_store *s,
		       char name[SXDP_LIST_NAME_MAX + 1])
{
	struct sxdp_attachment a;
	char err[512] = "";
	int ret;

	if (o->list && o->iface)
		return cli_error("give -i IFACE or --list LIST, not both");
	snprintf(name, SXDP_LIST_NAME_MAX + 1, "%s", o->list ? o->list : SXDP_DEFAULT_LIST);
	if (!o->iface)
		return 0;
	ret = sxdp_store_attach_get(s, sxdp_netns(), o->iface, &a, err, sizeof(err));
	if (ret == -ENOENT)
		return cli_error("the blocklist is not attached to %s (sieve xdp attach %s)",
				 o->iface, o->iface);
	if (ret)
		return cli_error("%s", err);
	snprintf(name, SXDP_LIST_NAME_MAX + 1, "%s", a.list);
	return 0;
}

/* One line after a change; "updated N" when entries there already changed. */
static void print_result(const char *list, const char *what, const struct sxdp_op_result *r)
{
	printf("%s: %s %zu", list, what, r->changed);
	if (r->updated)
		printf(", updated %zu (expiry, origin or comment)", r->updated);
	printf("; store version %llu; %zu interface%s in step",
	       (unsigned long long)r->version, r->ifaces, r->ifaces == 1 ? "" : "s");
	if (r->rebuilt)
		printf(" (%zu rebuilt)", r->rebuilt);
	printf("\n");
}

/* Parses every ENTRY argument before anything is changed. */
static int parse_entries(const struct xdp_opts *o, bool allow, struct sxdp_keys *l)
{
	struct sieve_xdp_key key;
	const char *why;
	int i;

	for (i = 0; i < o->nargs; i++) {
		if (sxdp_parse_entry(o->args[i], &key, &why))
			return cli_error("%s: %s", o->args[i], why);
		if (allow && key.kind != SIEVE_XDP_SRC && key.kind != SIEVE_XDP_PREFIX)
			return cli_error("%s: only sources and prefixes can be allowed",
					 o->args[i]);
		if (sxdp_keys_add(l, &key))
			return cli_error("out of memory");
	}
	sxdp_keys_sort(l);
	return 0;
}

/* The size of one entry's text (sxdp_format_entry()). */
#define ENTRY_TEXT_MAX	128

/*
 * --fleet: the change goes to Redis, not to this host's store; this
 * host's agent applies it as every other host's does. hiredis is
 * sieve-agent's (fleet.h): this checks the command, then execs
 * `sieve-agent __publish CONFIG LIST OP EXPIRES ORIGIN ENTRY...`, which
 * reads the settings, publishes (fleet/redis.c) and prints the result.
 */
static int publish_entries(const struct xdp_opts *o, enum sxdp_list_op op,
			   const struct sxdp_keys *l)
{
	struct sconf_cmdline cl = { .config = o->config };
	enum sconf_source from;
	const char *path = sconf_config_path(&cl, &from);
	char origin[300], host[256] = "", expires[24], *text;
	const char *list = o->list ? o->list : SXDP_DEFAULT_LIST;
	char **argv;
	size_t i;
	int ret;

	if (o->iface)
		return cli_error("--fleet publishes to a list: give --list LIST, not -i");
	if (o->comment)
		return cli_error("--comment stays on this host: it is not published with --fleet");
	/* The re-ban rule, applied by Redis (fleet.h): without --ttl, keep. */
	if (!o->ttl_given)
		snprintf(expires, sizeof(expires), "%s", SFLEET_PUBLISH_KEEP);
	else
		snprintf(expires, sizeof(expires), "%lld",
			 o->ttl ? (long long)time(NULL) + (long long)o->ttl : 0LL);
	gethostname(host, sizeof(host) - 1);
	snprintf(origin, sizeof(origin), "cli@%s", host);
	argv = calloc(l->n + 8, sizeof(*argv));
	text = malloc(l->n * ENTRY_TEXT_MAX + 1);
	if (!argv || !text) {
		free(argv);
		free(text);
		return cli_error("out of memory");
	}
	argv[1] = SFLEET_PUBLISH_CMD;
	argv[2] = (char *)path;
	argv[3] = (char *)list;
	argv[4] = (char *)sxdp_list_op_name(op);
	argv[5] = expires;
	argv[6] = origin;
	for (i = 0; i < l->n; i++) {
		argv[7 + i] = text + i * ENTRY_TEXT_MAX;
		sxdp_format_entry(&l->keys[i], argv[7 + i], ENTRY_TEXT_MAX);
	}
	ret = cli_exec_agent(argv);
	free(argv);
	free(text);
	return ret;
}

/*
 * Unblocking an entry a feed holds lasts until the feed's next refresh,
 * which puts it back: unblock says so, and points to allow. The store
 * keeps one origin per entry, so a key blocked by hand that a feed also
 * lists (the feed left it to cli) is not caught: its refresh brings it
 * back all the same.
 */
#define FEED_NOTES_MAX	10

/*
 * The same notes for a change --origin made: the keys another origin
 * holds (@own set), which it left alone.
 */
struct feed_notes {
	struct { char *key, *origin; } v[FEED_NOTES_MAX];
	size_t n, more;
	const char *own;	/* --origin: note the keys of other origins */
	bool allowed;		/* the keys read were the allowlist's */
};

/* Origins that are no feed: a change by hand, and the fleet's sync (agent/fleet.c). */
static bool origin_is_feed(const char *origin)
{
	return strcmp(origin, "cli") && strcmp(origin, "fleet");
}

static int feed_note(const char *key, const char *origin, void *ctx)
{
	struct feed_notes *x = ctx;

	if (x->own ? !strcmp(origin, x->own) : !origin_is_feed(origin))
		return 0;
	if (x->n == FEED_NOTES_MAX) {
		x->more++;
		return 0;
	}
	x->v[x->n].key = strdup(key);
	x->v[x->n].origin = strdup(origin);
	x->n++;
	return x->v[x->n - 1].key && x->v[x->n - 1].origin ? 0 : -ENOMEM;
}

static void feed_notes_print(const char *list, struct feed_notes *x)
{
	size_t i;

	for (i = 0; x->own && i < x->n; i++) {
		fprintf(stderr, "sieve: %s: %s is %s by origin ", list, x->v[i].key,
			x->allowed ? "allowed" : "held");
		sieve_escape(stderr, x->v[i].origin, strlen(x->v[i].origin), SIEVE_ESC_LOG);
		fprintf(stderr, ", left to it\n");
	}
	if (x->own && x->more)
		fprintf(stderr, "sieve: %s: and %zu more entries of other origins, left to them\n",
			list, x->more);
	for (i = 0; !x->own && i < x->n; i++) {
		fprintf(stderr, "sieve: %s: %s is also listed by feed ", list, x->v[i].key);
		sieve_escape(stderr, x->v[i].origin, strlen(x->v[i].origin), SIEVE_ESC_LOG);
		fprintf(stderr, "; it will return at its next refresh; use `sieve xdp allow` "
			"for a lasting exception\n");
	}
	if (!x->own && x->more)
		fprintf(stderr, "sieve: %s: and %zu more entries listed by feeds: they will "
			"return at their next refresh too\n", list, x->more);
}

static void feed_notes_free(struct feed_notes *x)
{
	size_t i;

	for (i = 0; i < x->n; i++) {
		free(x->v[i].key);
		free(x->v[i].origin);
	}
}

/* -j of a change of @given entries (xdp_json.h); the warnings still on stderr. */
static void json_change(struct sxdp_store *s, enum sxdp_list_op op, const char *list,
			size_t given, const struct sxdp_op_result *r)
{
	struct xdp_json_counts c = { .missing = r->missing };

	if (sxdp_list_op_adds(op)) {
		/* Entries there already whose expiry, origin or comment changed. */
		c.added = r->changed;
		c.updated = r->updated;
	} else {
		c.removed = r->changed;
	}
	xdp_json_begin(sxdp_list_op_name(op), "lists");
	xdp_json_list(s, list, &c, r);
	xdp_json_end();
}

/*
 * block/unblock --origin: a source of bans of its own (a fail2ban jail).
 * Not the fleet's: the agent mirrors the fleet under that origin, and a
 * block made under it would be removed at the next sync.
 */
static int check_change_origin(const struct cli_command *cmd, const struct xdp_opts *o)
{
	if (!o->origin)
		return 0;
	if (o->fleet)
		return cli_usage_error(cmd, "--origin does not go with --fleet (the fleet's "
				       "entries are origin fleet on every host)");
	if (!strcmp(o->origin, "fleet"))
		return cli_usage_error(cmd, "--origin fleet: that origin is sieve-agent's mirror "
				       "of the fleet; publish with --fleet");
	return 0;
}

/* block, unblock, allow and disallow: entries from the arguments, one transaction. */
static int change_entries(const struct cli_command *cmd, enum sxdp_list_op op, int argc,
			  char **argv)
{
	bool allow = sxdp_list_op_allows(op);
	char list[SXDP_LIST_NAME_MAX + 1], err[512] = "";
	struct sxdp_store_attrs a = { .origin = "cli", .allow = allow };
	struct feed_notes notes = { 0 }, allowed = { 0 };
	struct sxdp_keys l = { 0 };
	struct sxdp_op_result r;
	struct sxdp_store *s = NULL;
	struct xdp_opts o;
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	ret = parse_entries(&o, allow, &l);
	if (!ret && o.fleet && o.json)
		ret = cli_usage_error(cmd, "-j does not go with --fleet (sieve-agent reports "
				      "the publish, as text)");
	if (!ret && o.fleet) {
		ret = publish_entries(&o, op, &l);
		goto out;
	}
	if (!ret && o.config)
		ret = cli_error("--config goes with --fleet");
	if (!ret)
		ret = check_change_origin(cmd, &o);
	if (!ret)
		ret = need_root(cmd->name);
	if (!ret)
		ret = open_store(&o, &s);
	if (!ret)
		ret = target_list(&o, s, list);
	if (ret)
		goto out;
	/* Read before the change, with them their origins. */
	notes.own = o.origin;
	if ((op == SXDP_OP_UNBLOCK || o.origin) &&
	    sxdp_store_origins_of(s, list, false, l.keys, l.n, feed_note, &notes, err,
				  sizeof(err))) {
		ret = cli_error("%s: %s", list, err[0] ? err : "out of memory");
		goto out;
	}
	/* block --origin of an allowed key: left out (the allowlist's job), said so. */
	allowed.own = o.origin;
	allowed.allowed = true;
	if (op == SXDP_OP_BLOCK && o.origin &&
	    sxdp_store_origins_of(s, list, true, l.keys, l.n, feed_note, &allowed, err,
				  sizeof(err))) {
		ret = cli_error("%s: %s", list, err[0] ? err : "out of memory");
		goto out;
	}
	if (o.origin) {
		/* A source of its own: others' entries stay theirs, its re-bans extend. */
		a.origin = o.origin;
		a.only_own = a.extend_only = true;
	}
	a.now = time(NULL);
	a.expires_at = o.ttl ? a.now + (int64_t)o.ttl : 0;
	/* The re-ban rule (sxdp_store_add): without --ttl an entry keeps its expiry. */
	a.keep_expiry = !o.ttl_given;
	a.comment = o.comment;
	if (sxdp_list_op_adds(op))
		ret = sxdp_op_add(s, list, &l, &a, &r, err, sizeof(err));
	else if (o.origin)
		ret = sxdp_op_remove_own(s, list, allow, o.origin, &l, &r, err, sizeof(err));
	else
		ret = sxdp_op_remove(s, list, allow, &l, &r, err, sizeof(err));
	if (ret) {
		ret = cli_error("%s: %s", list, err[0] ? err : strerror(-ret));
		goto out;
	}
	if (o.json)
		json_change(s, op, list, l.n, &r);
	else
		print_result(list, sxdp_list_op_done(op), &r);
	if (r.missing && !o.json && !o.origin)
		printf("%s: %zu of the entries were not on the %s\n", list, r.missing,
		       allow ? "allowlist" : "list");
	if (r.missing && !o.json && o.origin) {
		printf("%s: %zu of the entries were not on the list as origin ", list, r.missing);
		sieve_escape(stdout, o.origin, strlen(o.origin), SIEVE_ESC_LOG);
		printf("\n");
	}
	feed_notes_print(list, &notes);
	feed_notes_print(list, &allowed);
	ret = r.missing ? EXIT_ABSENT : EXIT_OK;
	/* Not enforced everywhere outranks entries that were not there. */
	if (xdp_report_unreached(list, &r))
		ret = EXIT_NOT_ENFORCED;
out:
	feed_notes_free(&notes);
	feed_notes_free(&allowed);
	sxdp_store_close(s);
	sxdp_keys_free(&l);
	return ret;
}

static int cmd_block(const struct cli_command *cmd, int argc, char **argv)
{
	return change_entries(cmd, SXDP_OP_BLOCK, argc, argv);
}

static int cmd_unblock(const struct cli_command *cmd, int argc, char **argv)
{
	return change_entries(cmd, SXDP_OP_UNBLOCK, argc, argv);
}

static int cmd_allow(const struct cli_command *cmd, int argc, char **argv)
{
	return change_entries(cmd, SXDP_OP_ALLOW, argc, argv);
}

static int cmd_disallow(const struct cli_command *cmd, int argc, char **argv)
{
	return change_entries(cmd, SXDP_OP_DISALLOW, argc, argv);
}

/*
 * After a load: the origins of an older sieve it took over (their path
 * was its default origin), and a feed whose every entry another origin
 * holds (the same feed under another name: this refresh never drops
 * them). Notes, not errors: the load is done.
 */
static void load_notes(struct sxdp_store *s, const char *list, const struct sxdp_store_attrs *a,
		       const struct sxdp_keys *l, const struct sxdp_op_result *r, FILE *out)
{
	const struct sxdp_adopted *ad = &r->adopted;
	char holder[300], err[512];
	size_t held = 0;

	if (ad->entries) {
		fprintf(out, "%s: took over %zu entries of origin ", list, ad->entries);
		sieve_escape(out, ad->first, strlen(ad->first), SIEVE_ESC_LOG);
		if (ad->origins > 1)
			fprintf(out, " and %zu other%s", ad->origins - 1, ad->origins > 2 ? "s" : "");
		fprintf(out, ": the same file, recorded by its path (sieve 0.4 and older)\n");
	}
	if (r->changed || !l->n ||
	    sxdp_store_held_by(s, list, a->allow, a->origin, l->keys, l->n, holder,
			       sizeof(holder), &held, err, sizeof(err)) || !held)
		return;
	fprintf(stderr, "sieve: warning: %s: every entry of ", list);
	sieve_escape(stderr, a->origin, strlen(a->origin), SIEVE_ESC_LOG);
	fprintf(stderr, " is held by another origin (%zu of %zu by ", held, l->n);
	sieve_escape(stderr, holder, strlen(holder), SIEVE_ESC_LOG);
	fprintf(stderr, "), which a refresh of it never drops");
	/* Entries blocked by hand or by the fleet are no feed to load under. */
	if (origin_is_feed(holder)) {
		fprintf(stderr, ": the same feed under another name? load it with --origin ");
		sieve_escape(stderr, holder, strlen(holder), SIEVE_ESC_LOG);
	}
	fprintf(stderr, "\n");
}

/* -j of a load of @given entries: new ones added, the origin's others removed. */
static void json_load(struct sxdp_store *s, const char *list, size_t given,
		      const struct sxdp_op_result *r)
{
	struct xdp_json_counts c = { .added = r->changed, .removed = r->dropped };

	c.updated = given > r->changed ? given - r->changed : 0;
	xdp_json_begin("load", "lists");
	xdp_json_list(s, list, &c, r);
	xdp_json_end();
}

/* A file's bad lines (sxdp_feed_read), one error line each. */
#define FEED_ERR_MAX	4096

static int feed_errors(char *err)
{
	char *line, *save = NULL;

	for (line = strtok_r(err, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		cli_error("%s", line);
	return EXIT_ERROR;
}

static int cmd_load(const struct cli_command *cmd, int argc, char **argv)
{
	char list[SXDP_LIST_NAME_MAX + 1], err[FEED_ERR_MAX] = "";
	struct sxdp_store_attrs a = { 0 };
	struct sxdp_keys l = { 0 };
	struct sxdp_feed_info info;
	struct sxdp_op_result r;
	struct sxdp_store *s = NULL;
	struct xdp_opts o;
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	/* Before stdin is read: a second unnamed feed would replace the first. */
	if (!o.origin && !sxdp_feed_origin(o.args[0]))
		return cli_error("load -: stdin has no name for the next refresh to find its "
				 "entries by: give --origin NAME");
	if (sxdp_feed_read(o.args[0], o.format, &l, &info, err, sizeof(err))) {
		ret = feed_errors(err);
		goto out;
	}
	/* Said before loading, so it is there whatever the interfaces do. */
	if (info.skipped)
		/* With -j, stdout holds the document alone. */
		fprintf(o.json ? stderr : stdout,
			"%s: %s: skipped the adds of sets other than hash:ip and hash:net: %zu\n",
			o.args[0], sxdp_format_name(info.format), info.skipped);
	ret = need_root(cmd->name);
	if (!ret)
		ret = open_store(&o, &s);
	if (!ret)
		ret = target_list(&o, s, list);
	if (ret)
		goto out;
	a.origin = o.origin ? o.origin : sxdp_feed_origin(o.args[0]);
	a.adopt_path = strcmp(o.args[0], "-") ? o.args[0] : NULL;
	a.adopt_base = !o.origin;
	a.now = time(NULL);
	a.expires_at = o.ttl ? a.now + (int64_t)o.ttl : 0;
	a.comment = o.comment;
	a.refuse_empty = !o.allow_empty;
	ret = sxdp_op_load(s, list, &l, &a, &r, err, sizeof(err));
	if (ret == -ENODATA) {
		ret = cli_error("%s: %s has no entries and would remove every entry of origin %s "
				"(a failed download?); nothing changed (--allow-empty to load it)",
				list, o.args[0], a.origin);
		goto out;
	}
	if (ret) {
		ret = cli_error("%s: %s", list, err[0] ? err : strerror(-ret));
		goto out;
	}
	if (o.json) {
		json_load(s, list, l.n, &r);
		load_notes(s, list, &a, &l, &r, stderr);
		goto report;
	}
	printf("%s: loaded %zu entries from ", list, l.n);
	sieve_escape(stdout, a.origin, strlen(a.origin), SIEVE_ESC_LOG);
	printf(": %zu new, %zu no longer in it; store version %llu; "
	       "%zu interface%s in step", r.changed, r.dropped,
	       (unsigned long long)r.version, r.ifaces, r.ifaces == 1 ? "" : "s");
	/* As print_result: a refresh that only drops goes live, no rebuild. */
	if (r.rebuilt)
		printf(" (%zu rebuilt)", r.rebuilt);
	printf("\n");
	load_notes(s, list, &a, &l, &r, stdout);
report:
	/* Interfaces it did not reach (an older program's too: r.stale). */
	ret = xdp_report_unreached(list, &r);
out:
	sxdp_store_close(s);
	sxdp_keys_free(&l);
	return ret;
}

/* The lists to act on: -i's, --list, or every list in the store. */
static int target_lists(const struct xdp_opts *o, struct sxdp_store *s, char ***names,
			size_t *n)
{
	char list[SXDP_LIST_NAME_MAX + 1], err[512] = "";

	if (o->list || o->iface) {
		if (target_list(o, s, list))
			return EXIT_ERROR;
		*names = malloc(sizeof(**names));
		if (!*names || !(**names = strdup(list)))
			return cli_error("out of memory");
		*n = 1;
		return 0;
	}
	if (sxdp_store_lists(s, names, n, err, sizeof(err)))
		return cli_error("%s", err);
	return 0;
}

static int cmd_expire(const struct cli_command *cmd, int argc, char **argv)
{
	struct sxdp_store *s = NULL;
	struct sxdp_op_result r;
	struct xdp_opts o;
	char **lists = NULL, err[512] = "";
	size_t n = 0, i, total = 0;
	int ret = parse_xdp_opts(cmd, argc, argv, &o), enforced = EXIT_OK;

	if (ret >= 0)
		return ret;
	ret = need_root(cmd->name);
	if (!ret)
		ret = open_store(&o, &s);
	if (!ret)
		ret = target_lists(&o, s, &lists, &n);
	if (!ret && o.json)
		xdp_json_begin("expire", "lists");
	for (i = 0; !ret && i < n; i++) {
		ret = sxdp_op_expire(s, lists[i], time(NULL), &r, err, sizeof(err));
		if (ret)
			ret = cli_error("%s: %s", lists[i], err[0] ? err : strerror(-ret));
		else if (o.json)
			/* Every list looked at, what expired in it or not. */
			xdp_json_list(s, lists[i], &(struct xdp_json_counts){ .removed = r.changed },
				      &r);
		else if (r.changed)
			print_result(lists[i], "expired", &r);
		if (!ret && r.changed && xdp_report_unreached(lists[i], &r))
			enforced = EXIT_NOT_ENFORCED;
		total += r.changed;
	}
	if (o.json)
		xdp_json_end();
	else if (!ret && !total)
		printf("nothing was due\n");
	if (!ret)
		ret = enforced;
	sxdp_store_names_free(lists, n);
	sxdp_store_close(s);
	return ret;
}

struct list_arg {
	bool json;
	bool headed;		/* the text's header line is out */
	int64_t now;
	const char *list;
};

static int list_one(const struct sxdp_store_entry *e, void *arg)
{
	struct list_arg *la = arg;
	char left[32] = "never", kind[32];

	if (e->expires_at)
		xdp_time_left(left, sizeof(left), e->expires_at - la->now);
	xdp_kind_text(e, kind, sizeof(kind));
	if (!la->json) {
		/* Before the first entry: an empty list prints nothing. */
		if (!la->headed)
			printf("LIST\tKIND\tENTRY\tORIGIN\tEXPIRES\tCOMMENT\n");
		la->headed = true;
		/*
		 * The origin and the comment come from outside (--origin, the
		 * fleet's publishers, --comment): controls (ESC, a tab, a
		 * newline) and invalid UTF-8 are shown escaped, as in the
		 * agent's log lines, so a row stays one line of six columns.
		 */
		printf("%s\t%s\t%s\t", la->list, kind, e->key);
		sieve_escape(stdout, e->origin, strlen(e->origin), SIEVE_ESC_LOG);
		printf("\t%s\t", left);
		if (e->comment)
			sieve_escape(stdout, e->comment, strlen(e->comment), SIEVE_ESC_LOG);
		printf("\n");
		return 0;
	}
	json_object(NULL);
	xdp_entry_json(e, la->now);
	json_end();
	return 0;
}

/* @list's entries that --origin and --kind take, sorted by number (xdp_list.c). */
static int list_rows(struct sxdp_store *s, const char *list, struct xdp_rows *rows,
		     struct list_arg *la)
{
	char err[512] = "";
	size_t i;
	int ret = sxdp_store_foreach(s, list, xdp_rows_add, rows, err, sizeof(err));

	if (rows->nomem)
		ret = cli_error("out of memory");
	else if (ret)
		ret = cli_error("%s", err[0] ? err : strerror(-ret));
	if (!ret)
		xdp_rows_sort(rows);
	for (i = 0; !ret && i < rows->n; i++)
		list_one(&rows->v[i].e, la);
	xdp_rows_clear(rows);
	return ret;
}

static int cmd_list(const struct cli_command *cmd, int argc, char **argv)
{
	struct list_arg la = { 0 };
	struct xdp_rows rows = { 0 };
	struct sxdp_store *s = NULL;
	struct xdp_opts o;
	char **lists = NULL;
	size_t n = 0, i;
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	ret = open_store(&o, &s);
	if (!ret)
		ret = target_lists(&o, s, &lists, &n);
	la.json = o.json;
	la.now = time(NULL);
	rows.origin = o.origin;
	rows.kind = o.kind;
	if (!ret && o.json)
		json_array(NULL);
	for (i = 0; !ret && i < n; i++) {
		la.list = lists[i];
		if (o.json) {
			json_object(NULL);
			json_str("list", lists[i]);
			json_array("entries");
		}
		ret = list_rows(s, lists[i], &rows, &la);
		if (o.json) {
			json_end();
			json_end();
		}
	}
	if (o.json)
		json_end_all();
	sxdp_store_names_free(lists, n);
	sxdp_store_close(s);
	return ret;
}

static void print_lens(const uint8_t *lens, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		printf(" /%u", lens[i]);
	if (!n)
		printf(" none");
}

static void json_lens(const char *key, const uint8_t *lens, unsigned int n)
{
	unsigned int i;

	json_array(key);
	for (i = 0; i < n; i++)
		json_u64(NULL, lens[i]);
	json_end();
}

/* Probe lengths per family and what expansion made of the list. */
static void print_probes(const struct sieve_xdp_config *c, bool json)
{
	double factor = c->entries ? (double)c->keys / c->entries : 1;

	if (json) {
		json_u64("max_probes", sxdp_max_probes(c));
		json_lens("v4_lens", c->v4_lens, c->nr_v4_lens);
		json_lens("v6_lens", c->v6_lens, c->nr_v6_lens);
		json_u64("keys", c->keys);
		json_double("expansion", "%.4f", factor);
		return;
	}
	printf("  prefix probes (at most %u a family): v4", sxdp_max_probes(c));
	print_lens(c->v4_lens, c->nr_v4_lens);
	printf(", v6");
	print_lens(c->v6_lens, c->nr_v6_lens);
	printf("\n  %llu keys in the maps for %llu entries (expansion x%.3f)\n",
	       (unsigned long long)c->keys, (unsigned long long)c->entries, factor);
}

/* The blocked backend's plan, beside the bloom map's (in JSON: an object of its own). */
static void print_blocked_plan(const struct sxdp_plan *b, bool json)
{
	if (!b) {
		if (!json)
			printf("blocked: no table of at most 1 GiB reaches that rate\n");
		return;
	}
	if (json) {
		json_object("blocked");
		json_u64("max_entries", b->max_entries);
		json_u64("nr_hashes", b->nr_hashes);
		json_u64("bits", b->nbits);
		json_u64("bytes", b->bytes);
		json_double("bits_per_entry", "%.3f", (double)b->nbits / b->capacity);
		json_double("expected_fpr", "%.9g", b->fpr);
		json_end();
		return;
	}
	printf("blocked:   %u blocks of 64 bytes, %u bits a key -> %.3f MiB (%.2f bits/entry), "
	       "expected rate %.3g\n", b->max_entries, b->nr_hashes, b->bytes / 1048576.0,
	       (double)b->nbits / b->capacity, b->fpr);
}

/*
 * @c: the list's config when planned from a FILE, else NULL. @b: the
 * blocked backend's plan (NULL: none reaches the rate). The top-level
 * JSON fields are the default backend's, the bloom map's.
 */
static void print_plan(const struct sxdp_plan *p, const struct sxdp_plan *b,
		       const struct sieve_xdp_config *c, bool json)
{
	double exact = sxdp_exact_bytes_per_entry(p->capacity);

	if (json) {
		json_object(NULL);
		json_u64("entries", p->capacity);
		json_double("target_fpr", "%.9g", p->fpp_ppb / 1e9);
		json_u64("max_entries", p->max_entries);
		json_u64("nr_hashes", p->nr_hashes);
		json_u64("bits", p->nbits);
		json_u64("bytes", p->bytes);
		json_double("bits_per_entry", "%.3f", (double)p->nbits / p->capacity);
		json_double("expected_fpr", "%.9g", p->fpr);
		json_double("exact_bytes_estimate", "%.0f", exact * p->capacity);
		print_blocked_plan(b, true);
		if (c) {
			json_u64("list_entries", c->entries);
			print_probes(c, true);
		}
		json_end();
		return;
	}
	printf("entries %llu, target rate %.3g\n", (unsigned long long)p->capacity,
	       p->fpp_ppb / 1e9);
	if (c)
		print_probes(c, false);
	printf("bloom-map: max_entries %u, %u hashes -> 2^%d bits = %.3f MiB (%.2f bits/entry), "
	       "expected rate %.3g\n", p->max_entries, p->nr_hashes, (int)log2((double)p->nbits),
	       p->bytes / 1048576.0, (double)p->nbits / p->capacity, p->fpr);
	print_blocked_plan(b, false);
	printf("(expected false-positive rates per probe at the entries)\n"
	       "with --exact add a hash map: about %.1f MiB (%.0f bytes/entry)\n",
	       exact * p->capacity / 1048576.0, exact);
}

/* A FILE's probe lengths and keys after expansion, in @c. */
static int plan_file(const char *path, enum sxdp_format fmt, uint32_t max_probes,
		     struct sieve_xdp_config *c)
{
	struct sxdp_keys l = { 0 }, keys = { 0 };
	char err[FEED_ERR_MAX];
	int ret;

	if (sxdp_feed_read(path, fmt, &l, NULL, err, sizeof(err)))
		return feed_errors(err);
	/* As this sieve's program keeps them: IPv4 prefixes in the table, not probed. */
	*c = (struct sieve_xdp_config){ .flags = SIEVE_XDP_F_V4TABLE, .max_probes = max_probes };
	ret = sxdp_plan_keys(&l, c, &keys, err, sizeof(err));
	sxdp_keys_free(&l);
	sxdp_keys_free(&keys);
	return ret ? cli_error("%s: %s", path, err) : 0;
}

static int cmd_plan(const struct cli_command *cmd, int argc, char **argv)
{
	struct sieve_xdp_config c;
	struct sxdp_plan p, b;
	struct xdp_opts o;
	uint64_t n;
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.nargs && o.entries)
		return cli_usage_error(cmd, "give -n ENTRIES or one file");
	if (o.nargs) {
		if (plan_file(o.args[0], o.format, o.max_probes, &c))
			return EXIT_ERROR;
		/* The maps hold the keys after expansion: plan for those. */
		o.entries = c.keys ? c.keys : 1;
	}
	n = o.entries ? o.entries : SXDP_DEFAULT_CAPACITY;
	if (sxdp_plan(n, o.fpp_ppb, &p))
		return cli_error("no bloom map of at most 2^32 bits with 15 hashes reaches that rate");
	print_plan(&p, sxdp_plan_blocked(n, o.fpp_ppb, &b) ? NULL : &b, o.nargs ? &c : NULL, o.json);
	return EXIT_OK;
}

/* What status reports of one interface besides its config. */
struct status_info {
	struct sxdp_attachment a;	/* a.list "": no record in the store */
	uint64_t counts[SIEVE_XDP_NR_KINDS];
	uint64_t allowed;
	uint64_t version;		/* the store's version of the list */
	bool synced;			/* its maps were behind: this run rebuilt them */
	struct sxdp_iface_report r;	/* what its pins show (report.h) */
	enum sxdp_enforce state;	/* whether it enforces its list (status_state) */
};

/* The mode: queried here, or the recorded one of another namespace's interface. */
static const char *status_mode(struct sxdp_handle *h, const struct status_info *si)
{
	return !h->ifindex && si->a.mode[0] ? si->a.mode : si->r.mode;
}

/* The filter backend's filter, by name. */
static const char *status_filter(const struct status_info *si)
{
	return si->r.filter[0] ? si->r.filter : "(gone)";
}

/* The interface's sample settings; nonzero for an older program, which has none. */
static int status_samples(const struct sxdp_handle *h, struct sieve_xdp_sample_cfg *sc)
{
	char dir[256];

	sxdp_pin_dir_ns(dir, sizeof(dir), h->netns, h->ifname);
	return sxdp_sample_cfg_get(dir, sc);
}

static void print_status_json(struct sxdp_handle *h, const struct sieve_xdp_config *c,
			      const struct status_info *si)
{
	struct sieve_xdp_sample_cfg sc;
	char why[SXDP_WHY_MAX];

	json_object(NULL);
	json_str("iface", h->ifname);
	json_u64("netns", h->netns);
	json_bool("recorded", si->a.list[0]);
	json_str("state", sxdp_enforce_word(si->state));
	if (si->state != SXDP_ENFORCING)
		json_str("why", sxdp_enforce_why(si->state, h->ifname, 0, why, sizeof(why)));
	json_str("mode", status_mode(h, si));
	json_str("list", si->a.list);
	json_u64("store_version", si->version);
	json_u64("maps_version", c->store_version);
	json_bool("in_step", c->store_version == si->version);
	json_bool("resynced", si->synced);
	json_str("backend", sxdp_backend_name(c->flags));
	if (sxdp_backend_of(c->flags)->named)
		json_str("filter", status_filter(si));
	json_bool("exact", c->flags & SIEVE_XDP_F_EXACT);
	json_bool("fail_closed", c->flags & SIEVE_XDP_F_FAIL_CLOSED);
	json_bool("dry_run", c->flags & SIEVE_XDP_F_DRY_RUN);
	json_u64("entries", c->entries);
	json_u64("capacity", c->capacity);
	json_u64("removed", c->removed);
	json_u64("sources", si->counts[0]);
	json_u64("prefixes", si->counts[1]);
	json_u64("services", si->counts[2]);
	json_u64("flows", si->counts[3]);
	json_u64("allowed", si->allowed);
	json_u64("nr_v4_lens", c->nr_v4_lens);
	json_u64("nr_v6_lens", c->nr_v6_lens);
	print_probes(c, true);
	json_u64("bloom_bits", si->r.nbits);
	/*
	 * The backend's two words under the names they had before the config
	 * named them per backend: k or 0, and max_entries, blocks or the id.
	 */
	json_u64("nr_hashes", c->bloom.nr_hashes);
	json_u64("max_entries", c->bloom.max_entries);
	json_u64("bloom_bytes", si->r.filter_bytes);
	json_u64("exact_bytes", si->r.exact_bytes);
	if (c->flags & SIEVE_XDP_F_V4TABLE) {
		json_object("v4table");
		json_u64("covered_24s", si->r.v4_covered);
		json_u64("chunk_24s", si->r.v4_chunks);
		json_u64("bytes", si->r.v4table_bytes);
		json_end();
	}
	json_double("target_fpr", "%.9g", c->fpp_ppb / 1e9);
	json_double("expected_fpr", "%.9g", si->r.fpr);
	json_u64("generation", c->gen_seq);
	/* The running program: attach replaces one of another tag (an upgrade). */
	json_u64("prog_id", si->r.prog.id);
	json_str("prog_tag", si->r.prog.tag);
	json_bool("older_program", h->stale);
	if (!status_samples(h, &sc)) {
		json_u64("sample_rate", sc.rate);
		json_bool("sample_allowed", sc.flags & SIEVE_XDP_SAMPLE_ALLOWED);
	}
	json_end();
}

static void print_status_text(struct sxdp_handle *h, const struct sieve_xdp_config *c,
			      const struct status_info *si)
{
	struct sieve_xdp_sample_cfg sc;
	char line[256], label[64];

	printf("%s: %s mode, %s backend, %s, %s, %s, generation %u\n",
	       xdp_iface_label(h->netns, h->ifname, label, sizeof(label)), status_mode(h, si),
	       sxdp_backend_name(c->flags), c->flags & SIEVE_XDP_F_EXACT ? "exact" : "bloom-only",
	       c->flags & SIEVE_XDP_F_FAIL_CLOSED ? "fail-closed" : "fail-open",
	       c->flags & SIEVE_XDP_F_DRY_RUN ? "DRY RUN (drops nothing)" : "enforcing", c->gen_seq);
	printf("  list %s, store version %llu; the maps hold version %llu%s\n",
	       si->a.list[0] ? si->a.list : "(not recorded in the store)",
	       (unsigned long long)si->version, (unsigned long long)c->store_version,
	       si->synced ? " (they were behind: rebuilt now)" :
	       c->store_version == si->version ? " (in step)" : " (behind)");
	printf("  entries %llu: %llu sources, %llu prefixes, %llu services, %llu flows; "
	       "%llu allowed\n", (unsigned long long)c->entries,
	       (unsigned long long)si->counts[0], (unsigned long long)si->counts[1],
	       (unsigned long long)si->counts[2], (unsigned long long)si->counts[3],
	       (unsigned long long)si->allowed);
	print_probes(c, false);
	printf("  capacity %llu keys", (unsigned long long)c->capacity);
	if (c->removed)
		printf("; %u removed since this generation was built (rebuilt past %u)", c->removed,
		       sxdp_removed_max(c));
	printf("\n");
	sxdp_backend_of(c->flags)->describe(c, si->r.filter_bytes, status_filter(si), line,
					    sizeof(line));
	printf("  %s\n", line);
	if (si->r.exact_bytes)
		printf("  exact map: %.3f MiB in the kernel\n", si->r.exact_bytes / 1048576.0);
	if (c->flags & SIEVE_XDP_F_V4TABLE)
		printf("  IPv4 prefixes in the prefix table (two lookups a packet at most): %llu /24s "
		       "covered whole, %llu with longer prefixes; %.3f MiB in the kernel\n",
		       (unsigned long long)si->r.v4_covered, (unsigned long long)si->r.v4_chunks,
		       si->r.v4table_bytes / 1048576.0);
	printf("  expected false-positive rate per probe now %.3g (target %.3g at capacity)\n",
	       si->r.fpr, c->fpp_ppb / 1e9);
	if (!status_samples(h, &sc))
		printf("  samples: %u a second per CPU%s (sieve xdp capture, top)\n", sc.rate,
		       sc.flags & SIEVE_XDP_SAMPLE_ALLOWED ? ", drops and allowed" : " of drops");
	if (si->r.prog.id)
		printf("  program id %u, tag %s%s\n", si->r.prog.id, si->r.prog.tag,
		       h->stale ? "; an older sieve's, with maps of another layout: changes do not "
				  "reach it until `sieve xdp attach` replaces it" : "");
	else
		printf("  program: none runs\n");
	if (si->state == SXDP_ENFORCING)
		printf("  state: enforcing\n");
	else
		printf("  state: %s: %s\n", si->state == SXDP_BEHIND ? "behind" : "NOT enforcing",
		       sxdp_enforce_why(si->state, h->ifname, 0, line, sizeof(line)));
}

/*
 * The interface's list in the store; maps found behind it are brought in
 * step here, as by any command (a change cut short by a kill).
 */
static int status_store(struct sxdp_store *s, struct sxdp_handle *h,
			const struct sieve_xdp_config *c, struct status_info *si)
{
	struct sxdp_op_result r;
	char err[512] = "";
	int ret;

	ret = sxdp_store_attach_get(s, h->netns, h->ifname, &si->a, err, sizeof(err));
	if (ret == -ENOENT)
		return 0;
	if (!ret)
		ret = sxdp_store_version(s, si->a.list, &si->version);
	if (!ret && si->version != c->store_version) {
		ret = sxdp_op_sync(s, si->a.list, &r, err, sizeof(err));
		si->synced = !ret;
	}
	if (!ret)
		ret = sxdp_store_kind_counts(s, si->a.list, si->counts, &si->allowed);
	if (ret)
		return cli_error("%s: %s", h->ifname, err[0] ? err : strerror(-ret));
	return 0;
}

struct status_arg {
	bool json;
	struct sxdp_store *s;
	bool detached;		/* the interface's link runs on no interface */
};

/* Whether the interface enforces its list, once status_store synced it. */
static enum sxdp_enforce status_state(const struct sxdp_handle *h,
				      const struct sieve_xdp_config *c,
				      const struct status_info *si, bool detached)
{
	if (h->stale)
		return SXDP_OLDER_PROG;
	if (detached)
		return SXDP_DETACHED;
	if (si->a.list[0] && c->store_version != si->version)
		return SXDP_BEHIND;
	return SXDP_ENFORCING;
}

static int do_status(struct sxdp_handle *h, void *arg)
{
	struct status_arg *sa = arg;
	struct status_info si = { 0 };
	int ret = sxdp_iface_report(h, &si.r);

	if (!ret && status_store(sa->s, h, &si.r.cfg, &si))
		return EXIT_ERROR;
	if (!ret && si.synced)
		ret = sxdp_iface_report(h, &si.r);
	if (ret)
		return cli_error("%s: %s", h->ifname, strerror(-ret));
	si.state = status_state(h, &si.r.cfg, &si, sa->detached);
	if (sa->json)
		print_status_json(h, &si.r.cfg, &si);
	else
		print_status_text(h, &si.r.cfg, &si);
	return si.state == SXDP_ENFORCING ? EXIT_OK : EXIT_NOT_ENFORCED;
}

/*
 * One interface of status: recorded in the store (@list) or only pinned
 * in this namespace (@list NULL). A recorded one whose maps cannot be
 * read gets a line saying why it does not enforce its list.
 */
static int status_one(struct status_arg *sa, uint64_t netns, const char *ifname,
		      const char *list)
{
	char why[SXDP_WHY_MAX];
	struct sxdp_handle h;
	enum sxdp_enforce st;
	int err, ret;

	st = sxdp_pins_state(netns, ifname, &err);
	if (st == SXDP_ENFORCING || st == SXDP_DETACHED) {
		err = sxdp_open_reader_ns(netns, ifname, &h);
		if (!err) {
			sa->detached = st == SXDP_DETACHED;
			ret = do_status(&h, sa);
			sxdp_close(&h);
			return ret;
		}
		st = SXDP_UNREADABLE;
	}
	if (list) {
		xdp_status_unenforced(sa->json, netns, ifname, list, st, err);
		return EXIT_NOT_ENFORCED;
	}
	if (st == SXDP_PINS_GONE)
		return cli_error("the blocklist is not attached to %s (sieve xdp attach %s)",
				 ifname, ifname);
	return cli_error("%s: %s", ifname, sxdp_enforce_why(st, ifname, err, why, sizeof(why)));
}

static bool is_recorded(const struct sxdp_attachment *a, size_t n, uint64_t netns,
			const char *ifname)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i].netns == netns && !strcmp(a[i].iface, ifname))
			return true;
	return false;
}

/*
 * Every attachment the store records, of every namespace (-i: this
 * namespace's IFACE), then this namespace's pinned interfaces without a
 * record. The worst exit status; EXIT_ABSENT if there is none.
 */
static int status_all(const struct xdp_opts *o, struct status_arg *sa)
{
	char names[MAX_IFACES][IF_NAMESIZE], err[512] = "";
	struct sxdp_attachment *a = NULL;
	int n_pinned, i, ret = EXIT_OK, worst = EXIT_OK;
	size_t n = 0, j, shown = 0;

	if (sxdp_store_attachments(sa->s, NULL, &a, &n, err, sizeof(err)))
		return cli_error("%s", err);
	for (j = 0; ret != EXIT_ERROR && j < n; j++) {
		if (o->iface && (a[j].netns != sxdp_netns() || strcmp(a[j].iface, o->iface)))
			continue;
		ret = status_one(sa, a[j].netns, a[j].iface, a[j].list);
		shown++;
		if (ret > worst)
			worst = ret;
	}
	n_pinned = target_ifaces(o, names);
	for (i = 0; ret != EXIT_ERROR && i < n_pinned; i++) {
		if (is_recorded(a, n, sxdp_netns(), names[i]))
			continue;
		ret = status_one(sa, sxdp_netns(), names[i], NULL);
		shown++;
		if (ret > worst)
			worst = ret;
	}
	free(a);
	if (ret == EXIT_ERROR)
		return ret;
	if (!shown && !o->json)
		fprintf(stderr, "sieve: no interface has the blocklist\n");
	return shown ? worst : EXIT_ABSENT;
}

static int cmd_status(const struct cli_command *cmd, int argc, char **argv)
{
	struct status_arg sa = { 0 };
	struct xdp_opts o;
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (need_root(cmd->name))
		return EXIT_ERROR;
	if (open_store(&o, &sa.s))
		return EXIT_ERROR;
	sa.json = o.json;
	/* Always the array, [] when there is nothing. */
	if (o.json)
		json_array(NULL);
	ret = status_all(&o, &sa);
	if (o.json)
		json_end_all();
	sxdp_store_close(sa.s);
	return ret;
}

/*
 * Each counter's names: the packets' key, which is also its label in the
 * text, and the bytes' key. JSON keeps the packet counts under the keys
 * they always had and adds the bytes beside them (see the README).
 */
static const struct {
	const char *packets, *bytes;
} counter_names[SIEVE_XDP_NR_COUNTERS] = {
	[SIEVE_XDP_PACKETS] = { "packets", "bytes" },
	[SIEVE_XDP_PASSED] = { "passed", "passed_bytes" },
	[SIEVE_XDP_DROP_SRC] = { "dropped_source", "dropped_source_bytes" },
	[SIEVE_XDP_DROP_PREFIX] = { "dropped_prefix", "dropped_prefix_bytes" },
	[SIEVE_XDP_DROP_SERVICE] = { "dropped_service", "dropped_service_bytes" },
	[SIEVE_XDP_DROP_FLOW] = { "dropped_flow", "dropped_flow_bytes" },
	[SIEVE_XDP_DROP_MALFORMED] = { "dropped_malformed", "dropped_malformed_bytes" },
	[SIEVE_XDP_BLOOM_HITS] = { "bloom_hits", "bloom_hits_bytes" },
	[SIEVE_XDP_FALSE_POSITIVES] = { "false_positives", "false_positives_bytes" },
	[SIEVE_XDP_MALFORMED] = { "malformed", "malformed_bytes" },
	[SIEVE_XDP_NON_IP] = { "non_ip", "non_ip_bytes" },
	[SIEVE_XDP_ALLOWED] = { "allowed", "allowed_bytes" },
	[SIEVE_XDP_DROP_UNPARSED] = { "dropped_unparsed", "dropped_unparsed_bytes" },
	[SIEVE_XDP_SAMPLED] = { "sampled", "sampled_bytes" },
	[SIEVE_XDP_SAMPLES_LOST] = { "samples_lost", "samples_lost_bytes" },
	/* Counted in a dropped_* too: what a dry run let through of those. */
	[SIEVE_XDP_DRY_RUN_PASSED] = { "dry_run_passed", "dry_run_passed_bytes" },
};

struct stats_arg {
	struct list_arg out;
	struct sieve_xdp_stats prev[MAX_IFACES];
	int index;
	bool quiet;		/* a baseline round: remember, print nothing */
	double seconds;		/* 0: totals, else rates over this long */
	bool all;		/* --all: the rates at zero too */
};

/* Counter i's packets and bytes per second since prev. */
static void counter_rates(const struct sieve_xdp_stats *s, const struct sieve_xdp_stats *prev,
			  double seconds, int i, double *packets, double *bytes)
{
	/* Unsigned differences: right across a wrap of the 64-bit counter. */
	*packets = (s->c[i].packets - prev->c[i].packets) / seconds;
	*bytes = (s->c[i].bytes - prev->c[i].bytes) / seconds;
}

/*
 * One line a counter: totals in packets and bytes, rates in pps and bit/s.
 * Rates leave out the counters that did not move (but packets, the
 * total), unless @all: a watch is read for what changes.
 */
static void print_stats_text(const char *ifname, const struct sieve_xdp_stats *s,
			     const struct sieve_xdp_stats *prev, double seconds, bool all)
{
	static const char *const si[] = { "", "k", "M", "G", "T" };
	double packets, bytes, bits;
	int i, p;

	printf("%s:%s\n", ifname, seconds > 0 ? " (per second)" : "");
	for (i = 0; i < SIEVE_XDP_NR_COUNTERS; i++) {
		if (seconds <= 0) {
			printf("  %-18s %12llu pkts %16llu B\n", counter_names[i].packets,
			       (unsigned long long)s->c[i].packets,
			       (unsigned long long)s->c[i].bytes);
			continue;
		}
		counter_rates(s, prev, seconds, i, &packets, &bytes);
		if (!all && i != SIEVE_XDP_PACKETS && s->c[i].packets == prev->c[i].packets &&
		    s->c[i].bytes == prev->c[i].bytes)
			continue;
		/* Links are rated in bits: 1000-based units, as ip and ethtool do. */
		for (bits = bytes * 8, p = 0; bits >= 1000 && p < 4; p++)
			bits /= 1000;
		printf("  %-18s %12.1f pps %10.1f %sbit/s\n", counter_names[i].packets, packets,
		       bits, si[p]);
	}
}

static void print_stats(const char *ifname, const struct sieve_xdp_stats *s,
			const struct sieve_xdp_stats *prev, double seconds, bool all,
			struct list_arg *la)
{
	double packets, bytes;
	char key[48];
	int i;

	if (!la->json) {
		print_stats_text(ifname, s, prev, seconds, all);
		return;
	}
	json_object(NULL);
	json_str("iface", ifname);
	for (i = 0; i < SIEVE_XDP_NR_COUNTERS; i++) {
		if (seconds <= 0) {
			json_u64(counter_names[i].packets, s->c[i].packets);
			json_u64(counter_names[i].bytes, s->c[i].bytes);
			continue;
		}
		counter_rates(s, prev, seconds, i, &packets, &bytes);
		snprintf(key, sizeof(key), "%s_per_s", counter_names[i].packets);
		json_double(key, "%.1f", packets);
		snprintf(key, sizeof(key), "%s_per_s", counter_names[i].bytes);
		json_double(key, "%.1f", bytes);
	}
	json_end();
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
				    sa->all, &sa->out);
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

static int cmd_stats(const struct cli_command *cmd, int argc, char **argv)
{
	static struct stats_arg sa;
	struct xdp_opts o;
	uint32_t round;
	int ret = parse_xdp_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	sa.out.json = o.json;
	sa.all = o.all;
	if (o.all && !o.watch)
		return cli_usage_error(cmd, "--all goes with --watch");
	if (!o.watch) {
		if (o.json)
			json_array(NULL);
		ret = for_each_iface(&o, cmd->name, do_stats, &sa);
		if (o.json)
			json_end_all();
		return ret;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* The first round only takes the baseline. */
	sa.quiet = true;
	ret = for_each_iface(&o, cmd->name, do_stats, &sa);
	sa.quiet = false;
	sa.seconds = o.interval;
	for (round = 0; !ret && !exiting && (!o.count || round < o.count); round++) {
		sleep(o.interval);
		if (exiting)
			break;
		sa.index = 0;
		/* With -j, one JSON array a line. */
		if (o.json)
			json_array(NULL);
		ret = for_each_iface(&o, cmd->name, do_stats, &sa);
		if (o.json)
			json_end_all();
		else
			printf("\n");
		fflush(stdout);
	}
	return ret;
}

static const struct cli_command xdp_attach_command = {
	"xdp attach", "attach the blocklist to interfaces",
	.args = "IFACE...", .min_args = 1, .max_args = -1,
	.details = "  Loads the XDP program with its maps built from the list it enforces\n"
		   "  (--list, default \"default\"), pinned under " SIEVE_XDP_PIN_ROOT "/netns-N/IFACE,\n"
		   "  and records the attachment in the store. Default: native mode where\n"
		   "  the driver has it, bloom-only, fail-open. Again on an attached\n"
		   "  interface: applies the settings given (--no-exact and --fail-open turn\n"
		   "  them off, --list switches lists), keeps the others and the mode, says\n"
		   "  what it changed (\"already attached; now exact (was bloom-only)\"), exit 0;\n"
		   "  an older sieve program running there is replaced by this one on the\n"
		   "  running link, no moment without a program (\"upgraded\").\n"
		   "  Another XDP program on the interface is replaced only with --force.\n"
		   "  --max-probes bounds the prefix lengths probed per packet; a list with\n"
		   "  more is stored expanded to the lengths that make the fewest entries.\n"
		   "  --backend blocked keeps the filter in an array of 64-byte blocks (one\n"
		   "  cache line a lookup) instead of the kernel's bloom-filter map; again\n"
		   "  with another backend rebuilds the maps.\n"
		   "  --sample-rate: samples of dropped packets (sieve xdp capture, top) a\n"
		   "  second per CPU; a new attachment samples " CLI_STR(SIEVE_XDP_SAMPLE_RATE_DEFAULT) ", one again keeps its rate.\n"
		   "  --dry-run (monitor mode): every packet is judged and counted as when\n"
		   "  enforcing, and passes. Again with --enforce (or --dry-run) it switches\n"
		   "  live, in the running maps, no rebuild: each packet is judged by one\n"
		   "  mode or the other. Kept in the store's record, so restores keep it.",
	.options = CLI_OPTIONS(&opt_attach_list, &opt_mode, &opt_exact, &opt_no_exact, &opt_fpr,
			       &opt_fpp, &opt_fail_closed, &opt_fail_open, &opt_dry_run,
			       &opt_enforce, &opt_capacity, &opt_max_probes, &opt_backend,
			       &opt_sample_rate, &opt_force, &xdp_opt_state_dir, CLI_JSON_OPTIONS),
	.run = cmd_attach,
};
static const struct cli_command xdp_detach_command = {
	"xdp detach", "detach the blocklist, remove its maps and its record",
	.args = "[IFACE...]", .max_args = -1,
	.details = "  Idempotent: an interface without the blocklist is left alone. The\n"
		   "  list stays in the store. --all instead of IFACE...: every interface\n"
		   "  of every namespace with pins under " SIEVE_XDP_PIN_ROOT ", and every\n"
		   "  attachment in the store, so that nothing is restored at boot; what\n"
		   "  package removal runs (a program attached through a pinned link\n"
		   "  cannot be taken off with `ip link set dev IFACE xdp off`). An\n"
		   "  interface that fails (a line on stderr, or an object with result\n"
		   "  \"failed\" and an error) does not stop the others; exit 2 at the end.\n"
		   "  Exit 2 too if the store cannot be opened: the pins are detached all\n"
		   "  the same.",
	.options = CLI_OPTIONS(&opt_detach_all, &xdp_opt_state_dir, CLI_JSON_OPTIONS),
	.run = cmd_detach,
};
static const struct cli_command xdp_block_command = {
	"xdp block", "add entries to a list, live",
	.args = "ENTRY...", .min_args = 1, .max_args = -1,
	.details = "  ENTRY: 198.51.100.7 (source), 203.0.113.0/24 or 2001:db8::/48 (source\n"
		   "  prefix), tcp:192.0.2.10:22 or udp:[2001:db8::1]:53 (service: destination,\n"
		   "  protocol, port), tcp:198.51.100.7:40000,192.0.2.10:22 (one flow).\n"
		   "  Protocols: tcp, udp, sctp. One store transaction, then added to the\n"
		   "  live maps of every interface enforcing the list; past the planned\n"
		   "  capacity a bigger generation is built and swapped in. An entry\n"
		   "  already there takes the new --comment and keeps the later expiry (a\n"
		   "  re-ban extends, never shortens): a longer --ttl extends it, a shorter\n"
		   "  one does not, no --ttl keeps it, --ttl never makes it permanent. To\n"
		   "  shorten one: unblock it, then block it with the shorter --ttl.\n"
		   "  --origin NAME (fail2ban's action gives fail2ban/JAIL): the entries\n"
		   "  become NAME's, but one another origin holds, or allowed, stays as it\n"
		   "  is (said on standard error, exit unchanged), so that `unblock\n"
		   "  --origin NAME` never lifts what another source decided; without it,\n"
		   "  entries become cli's.\n"
		   "  Exit 3 if a recorded interface of the list does not enforce it (each\n"
		   "  named, with why); the store keeps the change (so for every change).",
	.options = CLI_OPTIONS(&opt_change_iface, &opt_list, &opt_ttl, &opt_comment,
			       &opt_change_origin, &xdp_opt_state_dir, &opt_fleet, &opt_config,
			       CLI_JSON_OPTIONS),
	.run = cmd_block,
};
static const struct cli_command xdp_unblock_command = {
	"xdp unblock", "remove entries, from the live maps",
	.args = "ENTRY...", .min_args = 1, .max_args = -1,
	.details = "  Their keys that no remaining entry makes are noted as removed in the\n"
		   "  live generation (in exact mode, deleted from its exact map): no\n"
		   "  rebuild, until the removed keys pass a quarter of the capacity.\n"
		   "  Exit 1 if an entry was not on the list (the others are removed).\n"
		   "  An entry a feed holds returns at the feed's next load: unblock says\n"
		   "  so on standard error (exit unchanged); allow is a lasting exception.\n"
		   "  --origin NAME: only NAME's entries go; one another origin holds\n"
		   "  stays (said on standard error) and counts as not there (exit 1).",
	.options = CLI_OPTIONS(&opt_change_iface, &opt_list, &opt_change_origin, &xdp_opt_state_dir,
			       &opt_fleet, &opt_config, CLI_JSON_OPTIONS),
	.run = cmd_unblock,
};
static const struct cli_command xdp_allow_command = {
	"xdp allow", "exempt sources and prefixes from source and prefix entries",
	.args = "ENTRY...", .min_args = 1, .max_args = -1,
	.details = "  ENTRY: a source address or prefix, v4 or v6. A packet from it that\n"
		   "  a source or prefix entry would drop passes (and is counted as\n"
		   "  allowed); service and flow entries still apply. Checked only after a\n"
		   "  hit, so passing traffic pays nothing.",
	.options = CLI_OPTIONS(&opt_change_iface, &opt_list, &opt_ttl, &opt_comment, &xdp_opt_state_dir,
			       &opt_fleet, &opt_config, CLI_JSON_OPTIONS),
	.run = cmd_allow,
};
static const struct cli_command xdp_disallow_command = {
	"xdp disallow", "remove allowlist entries",
	.args = "ENTRY...", .min_args = 1, .max_args = -1,
	.details = "  Exit 1 if an entry was not on the allowlist (the others are removed).",
	.options = CLI_OPTIONS(&opt_change_iface, &opt_list, &xdp_opt_state_dir, &opt_fleet, &opt_config,
			       CLI_JSON_OPTIONS),
	.run = cmd_disallow,
};
static const struct cli_command xdp_load_command = {
	"xdp load", "replace a feed's entries in a list from a file, atomically",
	.args = "FILE|-", .min_args = 1, .max_args = 1,
	.details = "  The entries of origin --origin (default: FILE's base name, so any\n"
		   "  path to it is one feed; - needs --origin) become FILE's; other\n"
		   "  origins' entries (blocks, other feeds) stay. Feeds of the same base\n"
		   "  name need --origin apart. Entries an older sieve recorded under a\n"
		   "  path of that base name (its default) are taken over first. A FILE\n"
		   "  whose every entry another origin holds is warned of. plain: one entry per\n"
		   "  line (see block), '#' starts a comment. netset: FireHOL lists,\n"
		   "  addresses and prefixes only. drop: Spamhaus DROP, \"PREFIX ; SBLnnn\",\n"
		   "  ';' comments. ipset: `ipset save`, the adds of hash:ip and hash:net\n"
		   "  sets (others' adds are skipped and counted). auto reads up to the\n"
		   "  first line that is not blank or a '#' comment: ipset if a line starts\n"
		   "  with create or add, drop if one has ';', netset if a '#' line names\n"
		   "  FireHOL, else plain. A bad line is reported as FILE:LINE: reason and\n"
		   "  nothing changes. One new generation, sized for the list plus 25%.\n"
		   "  A FILE without entries (empty, only comments) that would remove\n"
		   "  every entry of its origin is refused, nothing changed, unless\n"
		   "  --allow-empty: a failed download is the usual cause. So is a last\n"
		   "  line without its line end (a cut file).",
	.options = CLI_OPTIONS(&opt_change_iface, &opt_list, &opt_format, &opt_origin, &opt_ttl,
			       &opt_comment, &opt_allow_empty, &xdp_opt_state_dir, CLI_JSON_OPTIONS),
	.run = cmd_load,
};
static const struct cli_command xdp_expire_command = {
	"xdp expire", "remove the entries whose TTL has run out",
	.details = "  Every list (or -i's, or --list), each in one transaction and one\n"
		   "  rebuild. Idempotent and cheap when nothing is due: meant to run\n"
		   "  periodically.",
	.options = CLI_OPTIONS(&opt_lists_iface, &opt_list, &xdp_opt_state_dir, CLI_JSON_OPTIONS),
	.run = cmd_expire,
};
static const struct cli_option opt_list_origin = {
	"origin", 0, "NAME", "only the entries of this origin (cli, a feed's, fleet)",
	.set = set_origin, .accepts = "1 to 256 characters",
};
static const struct cli_option opt_kind = {
	"kind", 0, "KIND", "only the entries of this KIND", .set = set_kind,
	.accepts = "source, prefix, service, flow, allow-source or allow-prefix",
	.choices = "source prefix service flow allow-source allow-prefix",
};
static const struct cli_command xdp_list_command = {
	"xdp list", "print the entries of the lists",
	.details = "  Every list in the store, or -i's, or --list: a header line, then one\n"
		   "  entry a line, tab-separated: LIST, KIND (allow-... for the allowlist),\n"
		   "  ENTRY, ORIGIN, EXPIRES (the time left, or never) and COMMENT (empty\n"
		   "  if none); nothing if no entry. The blocklist first, then the\n"
		   "  allowlist; sources and prefixes by address (IPv4 first, a prefix\n"
		   "  before the addresses in it), then services and flows, by address and\n"
		   "  port.",
	.options = CLI_OPTIONS(&opt_lists_iface, &opt_list, &opt_list_origin, &opt_kind, &xdp_opt_state_dir,
			       CLI_JSON_OPTIONS),
	.run = cmd_list,
};
static const struct cli_command xdp_plan_command = {
	"xdp plan", "filter size and false-positive rate of both backends for a list",
	.args = "[FILE]", .max_args = 1,
	.details = "  The bloom map's max_entries and hash count, its memory (the kernel\n"
		   "  rounds the bitmap up to a power of two) and the expected rate, for\n"
		   "  ENTRIES or the entries of FILE (in any --format, as load reads it);\n"
		   "  beside it the blocked backend's blocks (any number), bits a key, memory\n"
		   "  and rate (in JSON under \"blocked\"). For a FILE also the prefix\n"
		   "  lengths probed per family (at most --max-probes) and the keys the maps\n"
		   "  hold once the other prefixes are expanded to them.",
	.options = CLI_OPTIONS(&opt_entries, &opt_format, &opt_fpr, &opt_fpp, &opt_max_probes,
			       CLI_JSON_OPTIONS),
	.run = cmd_plan,
};
static const struct cli_command xdp_status_command = {
	"xdp status", "interfaces, lists, mode, entries, memory, expected rate",
	.details = "  The store version of the list each generation holds, and the running\n"
		   "  program's id and tag; maps found behind the store are rebuilt.\n"
		   "  Every attachment the store records, of every namespace, then this\n"
		   "  namespace's pinned interfaces without a record; each with its state:\n"
		   "  enforcing, behind, or NOT enforcing and why (pins gone, no BPF\n"
		   "  filesystem here, an older program, its link detached). -j: [] when\n"
		   "  there is none. Exit 0 every interface enforces its list, 1 there is\n"
		   "  none, 3 one does not enforce it.",
	.options = CLI_OPTIONS(&opt_iface, &xdp_opt_state_dir, CLI_JSON_OPTIONS),
	.run = cmd_status,
};
static const struct cli_command xdp_stats_command = {
	"xdp stats", "packet and byte counters (summed over CPUs)",
	.details = "  Bytes are whole frames as XDP sees them (Ethernet header included).\n"
		   "  --watch prints the rates every S seconds, N times or until interrupted:\n"
		   "  packets and bits per second (with -j: packets and bytes per second, one\n"
		   "  JSON array a line, every counter). The text leaves out the counters\n"
		   "  that did not move in the interval, but packets; --all shows them.",
	.options = CLI_OPTIONS(&opt_iface, &opt_watch, &opt_interval, &opt_count, &opt_watch_all,
			       CLI_JSON_OPTIONS),
	.run = cmd_stats,
};

const struct cli_command xdp_command = {
	"xdp", "XDP blocklist: attach, block, allow, load, expire, list, status, stats, why",
	.details = "  Drops packets by source, source prefix, service or flow, with a BPF\n"
		   "  bloom filter. A change (block, unblock, allow, disallow, load) goes to\n"
		   "  a list, --list or the one -i IFACE enforces, else \"default\", and\n"
		   "  reaches every interface enforcing that list. Without -i, status,\n"
		   "  stats and why report every interface that has the blocklist; list\n"
		   "  and expire act on every list.\n"
		   "  Exit status: 0 done, 1 not present, 2 an error, 3 a change kept in\n"
		   "  the store that a recorded attachment of the list does not enforce\n"
		   "  (each named, with why: pins gone after a reboot, `ip netns exec`\n"
		   "  hiding /sys/fs/bpf...), or status of such an attachment.",
	.subcommands = (const struct cli_command *const[]){
		&xdp_attach_command, &xdp_detach_command, &xdp_block_command,
		&xdp_unblock_command, &xdp_allow_command, &xdp_disallow_command,
		&xdp_load_command, &xdp_expire_command, &xdp_list_command, &xdp_plan_command,
		&xdp_status_command, &xdp_stats_command, &xdp_why_command, &xdp_prune_command,
		&xdp_set_command, &xdp_capture_command, &xdp_top_command, NULL,
	},
};
