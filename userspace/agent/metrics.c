// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's metrics: the Prometheus text format (version 0.0.4) on
 * GET /metrics, served by libmicrohttpd on a thread of its own, bound to
 * the configured address only (127.0.0.1:9477 by default).
 *
 * A scrape reads, in this order: the store (one read snapshot: each list's
 * version and its entries by kind and origin, the attachments of this
 * network namespace), the pinned maps of each of those attachments (the
 * per-CPU counters summed, the live config), the agent's own counters, and
 * every /dev/sieve filter when the module is loaded. It changes nothing:
 * no sync of maps found behind (status does that), no lock taken, so a
 * scrape never waits for a change and a change never waits for a scrape.
 *
 * Names follow the Prometheus conventions: a counter ends in _total,
 * units are base units in the name (_bytes, _seconds), rates in [0, 1] end
 * in _ratio. The families are listed in the README ("Metrics").
 */
#define _GNU_SOURCE	/* pthread_setname_np */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <microhttpd.h>

#include "escape.h"
#include "libsieve.h"
#include "metrics.h"
#include "report.h"
#include "xdp.h"

/* ---- the text ------------------------------------------------------------ */

/* One family being written: its header goes out before its first sample. */
struct mx_out {
	FILE *f;
	const char *name, *type, *help;
	bool head;
};

static void mx_family(struct mx_out *o, const char *name, const char *type, const char *help)
{
	o->name = name;
	o->type = type;
	o->help = help;
	o->head = false;
}

/*
 * Label values may hold anything (origins are free text, interface names
 * and lists come from outside): escaped, invalid UTF-8 replaced, so that
 * one value never makes Prometheus refuse the whole scrape.
 */
static void mx_escape(FILE *f, const char *v)
{
	sieve_escape(f, v, strlen(v), SIEVE_ESC_PROM);
}

/* The sample's name and labels: @labels is name, value, ..., NULL. */
static void mx_start(struct mx_out *o, const char *const *labels)
{
	int i;

	if (!o->head) {
		/* Help texts are ours: no backslash or newline to escape. */
		fprintf(o->f, "# HELP %s %s\n# TYPE %s %s\n", o->name, o->help, o->name, o->type);
		o->head = true;
	}
	fputs(o->name, o->f);
	for (i = 0; labels && labels[i]; i += 2) {
		fprintf(o->f, "%s%s=\"", i ? "," : "{", labels[i]);
		mx_escape(o->f, labels[i + 1]);
		fputc('"', o->f);
	}
	if (labels && labels[0])
		fputc('}', o->f);
}

static void mx_u64(struct mx_out *o, const char *const *labels, uint64_t v)
{
	mx_start(o, labels);
	fprintf(o->f, " %llu\n", (unsigned long long)v);
}

static void mx_f64(struct mx_out *o, const char *const *labels, double v)
{
	mx_start(o, labels);
	fprintf(o->f, " %.9g\n", v);
}

/* Milliseconds as seconds, every digit kept (%.9g would cut a timestamp's). */
static void mx_ms(struct mx_out *o, const char *const *labels, int64_t ms)
{
	mx_start(o, labels);
	fprintf(o->f, " %s%lld.%03lld\n", ms < 0 ? "-" : "", llabs(ms) / 1000LL,
		llabs(ms) % 1000LL);
}

#define LABELS(...)	((const char *const[]){ __VA_ARGS__, NULL })

/* Kinds as labels: the words of `sieve xdp status`. */
static const char *const kind_label[SIEVE_XDP_NR_KINDS] = {
	[SIEVE_XDP_SRC] = "source", [SIEVE_XDP_PREFIX] = "prefix",
	[SIEVE_XDP_SERVICE] = "service", [SIEVE_XDP_FLOW] = "flow",
};

static const char *kind_name(unsigned int kind)
{
	return kind < SIEVE_XDP_NR_KINDS ? kind_label[kind] : "unknown";
}

/*
 * The verdict counters, one sample each of sieve_xdp_packets_total and
 * _bytes_total: every packet ends in exactly one of them (sieve_xdp.h), so
 * their sum is all the packets the program saw. A pass has no entry kind;
 * a malformed packet dropped fail-closed has none either, nor one whose
 * ports could not be read (kind "unparsed").
 */
static const struct {
	unsigned int counter;
	const char *verdict, *kind;
} verdicts[] = {
	{ SIEVE_XDP_PASSED, "pass", "none" },
	{ SIEVE_XDP_DROP_SRC, "drop", "source" },
	{ SIEVE_XDP_DROP_PREFIX, "drop", "prefix" },
	{ SIEVE_XDP_DROP_SERVICE, "drop", "service" },
	{ SIEVE_XDP_DROP_FLOW, "drop", "flow" },
	{ SIEVE_XDP_DROP_MALFORMED, "drop", "malformed" },
	/* Ports unreadable while a service or flow entry is in use: see sieve_xdp.h. */
	{ SIEVE_XDP_DROP_UNPARSED, "drop", "unparsed" },
};

/* The other counters: packets only, one family each. */
static const struct {
	unsigned int counter;
	const char *name, *help;
} events[] = {
	{ SIEVE_XDP_ALLOWED, "sieve_xdp_allowed_packets_total",
	  "Packets that matched a source or prefix entry and were let through by the allowlist." },
	{ SIEVE_XDP_BLOOM_HITS, "sieve_xdp_filter_hits_total",
	  "Packets the filter (bloom map or blocked array) answered maybe-present for." },
	{ SIEVE_XDP_FALSE_POSITIVES, "sieve_xdp_false_positives_total",
	  "Filter hits the exact map (exact mode) or the keys removed since the "
	  "generation was built refuted." },
	{ SIEVE_XDP_MALFORMED, "sieve_xdp_malformed_packets_total",
	  "Packets with truncated or malformed headers, whatever their verdict." },
	{ SIEVE_XDP_NON_IP, "sieve_xdp_non_ip_packets_total",
	  "Packets neither IPv4 nor IPv6 (passed)." },
	{ SIEVE_XDP_SAMPLED, "sieve_xdp_samples_total",
	  "Samples of judged packets sent to the ring (sieve xdp capture, top)." },
	{ SIEVE_XDP_SAMPLES_LOST, "sieve_xdp_samples_lost_total",
	  "Samples the token bucket allowed that the full ring had no room for." },
	{ SIEVE_XDP_DRY_RUN_PASSED, "sieve_xdp_dry_run_passed_packets_total",
	  "Packets a verdict dropped (and counted as dropped) that passed: the interface "
	  "was in a dry run." },
};

static void format_lists(struct mx_out *o, const struct sagent_mx_scrape *s)
{
	const struct sagent_mx_list *l;
	size_t i, j;

	mx_family(o, "sieve_store_up", "gauge",
		  "Whether the store (STATE_DIR/sieve.db) could be read in this scrape.");
	mx_u64(o, NULL, s->store_up);

	mx_family(o, "sieve_list_entries", "gauge",
		  "Entries on a list, by action (block or allow), kind and origin.");
	for (i = 0; i < s->nlists; i++) {
		l = &s->lists[i];
		for (j = 0; j < l->ncounts; j++) {
			const struct sagent_mx_count *c = &l->counts[j];

			mx_u64(o, LABELS("list", l->name, "action", c->allow ? "allow" : "block",
					 "kind", kind_name(c->kind), "origin", c->origin),
			       c->count);
		}
	}
	mx_family(o, "sieve_list_version", "gauge",
		  "The store's version of a list: one more for every change committed to it.");
	for (i = 0; i < s->nlists; i++)
		mx_u64(o, LABELS("list", s->lists[i].name), s->lists[i].version);
}

static void format_counters(struct mx_out *o, const struct sagent_mx_scrape *s)
{
	const size_t nverdicts = sizeof(verdicts) / sizeof(verdicts[0]);
	const struct sagent_mx_iface *x;
	size_t i, v, e;

	mx_family(o, "sieve_xdp_packets_total", "counter",
		  "Packets the XDP program saw, by verdict and the kind of entry that decided it.");
	for (i = 0; i < s->nifaces; i++)
		for (x = &s->ifaces[i], v = 0; x->read && v < nverdicts; v++)
			mx_u64(o, LABELS("iface", x->a.iface, "verdict", verdicts[v].verdict,
					 "kind", verdicts[v].kind),
			       x->r.stats.c[verdicts[v].counter].packets);
	mx_family(o, "sieve_xdp_bytes_total", "counter",
		  "Bytes of those packets: frames from the Ethernet header on, without FCS.");
	for (i = 0; i < s->nifaces; i++)
		for (x = &s->ifaces[i], v = 0; x->read && v < nverdicts; v++)
			mx_u64(o, LABELS("iface", x->a.iface, "verdict", verdicts[v].verdict,
					 "kind", verdicts[v].kind),
			       x->r.stats.c[verdicts[v].counter].bytes);
	for (e = 0; e < sizeof(events) / sizeof(events[0]); e++) {
		mx_family(o, events[e].name, "counter", events[e].help);
		for (i = 0; i < s->nifaces; i++)
			if (s->ifaces[i].read)
				mx_u64(o, LABELS("iface", s->ifaces[i].a.iface),
				       s->ifaces[i].r.stats.c[events[e].counter].packets);
		if (events[e].counter != SIEVE_XDP_ALLOWED)
			continue;
		/* The allowlist's is the one whose bytes matter: traffic it lets in. */
		mx_family(o, "sieve_xdp_allowed_bytes_total", "counter",
			  "Bytes of the packets the allowlist let through after a source or "
			  "prefix hit.");
		for (i = 0; i < s->nifaces; i++)
			if (s->ifaces[i].read)
				mx_u64(o, LABELS("iface", s->ifaces[i].a.iface),
				       s->ifaces[i].r.stats.c[SIEVE_XDP_ALLOWED].bytes);
	}
}

/* A counter slot's origin label: its name, or what the slot stands for. */
static const char *origin_label(const struct sagent_mx_scrape *s, unsigned int slot, char *buf,
				size_t len)
{
	if (slot == SIEVE_XDP_ORIGIN_NONE)
		return "none";
	if (slot == SIEVE_XDP_ORIGIN_OTHER)
		return "other";
	if (s->origins && s->origins[slot])
		return s->origins[slot];
	snprintf(buf, len, "id-%u", slot);	/* named after this scrape read the names */
	return buf;
}

/*
 * Drops per origin (exact mode): a sample for each slot that counted any,
 * of each interface whose program has the counters.
 */
static void format_origins(struct mx_out *o, const struct sagent_mx_scrape *s)
{
	static const char *const help[2] = {
		"Packets dropped (or, in a dry run, judged to drop) by an entry, by the origin of "
		"the entry that matched: exact mode only (a bloom-only filter holds no origins); "
		"none: IPv4 prefixes (the prefix table holds no origins) and maps an older sieve "
		"built; other: origins past the counters' 254.",
		"Bytes of those packets.",
	};
	static const char *const names[2] = { "sieve_xdp_dropped_packets_total",
					       "sieve_xdp_dropped_bytes_total" };
	const struct sagent_mx_iface *x;
	char buf[32];
	size_t i, slot;
	int b;

	for (b = 0; b < 2; b++) {
		mx_family(o, names[b], "counter", help[b]);
		for (i = 0; i < s->nifaces; i++) {
			x = &s->ifaces[i];
			for (slot = 0; x->read && x->r.has_origins && slot < SIEVE_XDP_ORIGIN_SLOTS;
			     slot++) {
				const struct sieve_xdp_count *c = &x->r.origin_drops[slot];

				if (!c->packets)
					continue;
				mx_u64(o, LABELS("iface", x->a.iface, "origin",
						 origin_label(s, slot, buf, sizeof(buf))),
				       b ? c->bytes : c->packets);
			}
		}
	}
}

/* A gauge of the live config, one sample an interface whose maps were read. */
#define IFACE_GAUGE(o, s, name_, help_, expr) do {					\
	size_t i_;									\
											\
	mx_family(o, name_, "gauge", help_);						\
	for (i_ = 0; i_ < (s)->nifaces; i_++) {						\
		const struct sagent_mx_iface *x = &(s)->ifaces[i_];			\
											\
		if (x->read)								\
			mx_f64(o, LABELS("iface", x->a.iface), (double)(expr));		\
	}										\
} while (0)

static void format_ifaces(struct mx_out *o, const struct sagent_mx_scrape *s)
{
	size_t i;

	mx_family(o, "sieve_xdp_up", "gauge",
		  "Whether an attachment of the store enforces: its maps pinned, its program "
		  "attached and (filter backend) its /dev/sieve filter there.");
	for (i = 0; i < s->nifaces; i++) {
		const struct sagent_mx_iface *x = &s->ifaces[i];

		mx_u64(o, LABELS("iface", x->a.iface),
		       x->read && strcmp(x->r.mode, "none") && !x->r.filter_gone);
	}
	mx_family(o, "sieve_xdp_info", "gauge",
		  "An interface's list, mode, filter backend and flags (always 1).");
	for (i = 0; i < s->nifaces; i++) {
		const struct sagent_mx_iface *x = &s->ifaces[i];

		if (!x->read)
			continue;
		mx_u64(o, LABELS("iface", x->a.iface, "list", x->a.list, "mode", x->r.mode,
				 "backend", sxdp_backend_name(x->r.cfg.flags),
				 "exact", x->r.cfg.flags & SIEVE_XDP_F_EXACT ? "true" : "false",
				 "fail_closed",
				 x->r.cfg.flags & SIEVE_XDP_F_FAIL_CLOSED ? "true" : "false"), 1);
	}
	format_counters(o, s);
	format_origins(o, s);
	IFACE_GAUGE(o, s, "sieve_xdp_dry_run",
		    "1 in a dry run (monitor mode: judged and counted, nothing dropped), "
		    "0 enforcing.", !!(x->r.cfg.flags & SIEVE_XDP_F_DRY_RUN));
	IFACE_GAUGE(o, s, "sieve_xdp_generation",
		    "Generations of maps built since attach; the live one's number.",
		    x->r.cfg.gen_seq);
	IFACE_GAUGE(o, s, "sieve_xdp_maps_version",
		    "The store version of the list that the live maps hold "
		    "(behind sieve_list_version until they are synced).", x->r.cfg.store_version);
	IFACE_GAUGE(o, s, "sieve_xdp_entries", "Entries of the list in the live maps.",
		    x->r.cfg.entries);
	IFACE_GAUGE(o, s, "sieve_xdp_keys",
		    "Keys in the live maps: the entries after prefix expansion.", x->r.cfg.keys);
	IFACE_GAUGE(o, s, "sieve_xdp_removed_keys",
		    "Keys removed from the live generation without a rebuild, still in its "
		    "filter (rebuilt away past half of their bound).", x->r.cfg.removed);
	IFACE_GAUGE(o, s, "sieve_xdp_capacity",
		    "Keys the live filter was sized for at the target rate.", x->r.cfg.capacity);
	IFACE_GAUGE(o, s, "sieve_xdp_filter_memory_bytes",
		    "Kernel memory of the live filter (bloom map or blocked array).",
		    x->r.filter_bytes);
	IFACE_GAUGE(o, s, "sieve_xdp_exact_memory_bytes",
		    "Kernel memory of the live exact map (0 without exact mode).", x->r.exact_bytes);
	IFACE_GAUGE(o, s, "sieve_xdp_v4table_memory_bytes",
		    "Kernel memory of the IPv4 prefix table (0 where the live generation walks "
		    "IPv4 prefix lengths instead).", x->r.v4table_bytes);
	IFACE_GAUGE(o, s, "sieve_xdp_expected_false_positive_ratio",
		    "Expected false-positive rate of one probe of the live filter at its keys now.",
		    x->r.fpr);
	IFACE_GAUGE(o, s, "sieve_xdp_target_false_positive_ratio",
		    "The false-positive rate the filter was sized for, at its capacity.",
		    x->r.cfg.fpp_ppb / 1e9);
}

static void format_agent(struct mx_out *o, const struct sagent_mx_agent *a)
{
	static const struct {
		size_t off;
		const char *name, *help;
	} counters[] = {
		{ offsetof(struct sagent_mx_agent, expired), "sieve_agent_expired_entries_total",
		  "Entries the agent's expiry removed from lists." },
		{ offsetof(struct sagent_mx_agent, expire_runs), "sieve_agent_expire_runs_total",
		  "Expiry runs." },
		{ offsetof(struct sagent_mx_agent, restores), "sieve_agent_restores_total",
		  "Attachments the agent attached again from the store." },
		{ offsetof(struct sagent_mx_agent, adoptions), "sieve_agent_adoptions_total",
		  "Attachments the agent found running and adopted as they were." },
		{ offsetof(struct sagent_mx_agent, snapshot_saves),
		  "sieve_agent_snapshot_saves_total",
		  "Snapshots of persistent /dev/sieve filters saved." },
		{ offsetof(struct sagent_mx_agent, errors), "sieve_agent_errors_total",
		  "Errors the agent logged." },
	};
	size_t i;

	mx_family(o, "sieve_agent_rebuilds_total", "counter",
		  "Generations of maps the agent built (restores, expiry).");
	mx_u64(o, NULL, a->rebuilds);
	mx_family(o, "sieve_agent_rebuild_seconds_total", "counter",
		  "Time the agent spent building those generations.");
	mx_f64(o, NULL, a->rebuild_ns / 1e9);
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		mx_family(o, counters[i].name, "counter", counters[i].help);
		mx_u64(o, NULL, *(const uint64_t *)((const char *)a + counters[i].off));
	}
	mx_family(o, "sieve_agent_metrics_refreshes_total", "counter",
		  "Times the scrape snapshot was gathered (store, pins, /dev/sieve): at most "
		  "one a [metrics] refresh_interval, however many scrapes.");
	mx_u64(o, NULL, a->metrics_refreshes);
	mx_family(o, "sieve_agent_start_time_seconds", "gauge",
		  "When the agent started, in seconds since the Unix epoch.");
	mx_u64(o, NULL, (uint64_t)a->started_at);
}

static const char *const skip_reasons[SAGENT_NR_SKIPS] = {
	[SAGENT_SKIP_UNPARSEABLE] = "unparseable", [SAGENT_SKIP_WRONG_TYPE] = "wrong_type",
	[SAGENT_SKIP_TOO_LONG] = "too_long", [SAGENT_SKIP_REFUSED] = "refused",
};

/* The per-list families, each family's samples across the lists together. */
static void format_fleet_lists(struct mx_out *o, const struct sagent_mx_agent *a)
{
	const struct sagent_mx_fleet_list *l;
	unsigned int i, k;
	char id[48];

	mx_family(o, "sieve_fleet_resyncs_total", "counter",
		  "Full reads of a followed list's sets from Redis.");
	for (l = a->fleet.l, i = 0; i < a->fleet.nr_lists; i++, l++)
		mx_u64(o, LABELS("list", l->name), l->resyncs);
	mx_family(o, "sieve_fleet_applied_total", "counter",
		  "Changes from a followed list's stream applied to the store and the maps.");
	for (l = a->fleet.l, i = 0; i < a->fleet.nr_lists; i++, l++)
		for (k = 0; k < SXDP_NR_LIST_OPS; k++)
			mx_u64(o, LABELS("list", l->name, "op", sxdp_list_op_name(k)),
			       l->applied[k]);
	mx_family(o, "sieve_fleet_skipped_total", "counter",
		  "Members and records of a followed list skipped as bad.");
	for (l = a->fleet.l, i = 0; i < a->fleet.nr_lists; i++, l++)
		for (k = 0; k < SAGENT_NR_SKIPS; k++)
			mx_u64(o, LABELS("list", l->name, "reason", skip_reasons[k]), l->skipped[k]);
	/* The last change's families: only lists that applied one. */
	mx_family(o, "sieve_fleet_last_applied_timestamp_seconds", "gauge",
		  "The time of the last change applied (its stream id), since the Unix epoch.");
	for (l = a->fleet.l, i = 0; i < a->fleet.nr_lists; i++, l++)
		if (l->last_ms)
			mx_ms(o, LABELS("list", l->name), (int64_t)l->last_ms);
	mx_family(o, "sieve_fleet_lag_seconds", "gauge",
		  "When the last change was applied, minus its time in the stream.");
	for (l = a->fleet.l, i = 0; i < a->fleet.nr_lists; i++, l++)
		if (l->last_ms)
			mx_ms(o, LABELS("list", l->name), l->lag_ms);
	mx_family(o, "sieve_fleet_last_applied_info", "gauge",
		  "The stream id of the last change applied, as a label.");
	for (l = a->fleet.l, i = 0; i < a->fleet.nr_lists; i++, l++) {
		if (!l->last_ms)
			continue;
		snprintf(id, sizeof(id), "%llu-%llu", (unsigned long long)l->last_ms,
			 (unsigned long long)l->last_seq);
		mx_u64(o, LABELS("list", l->name, "id", id), 1);
	}
}

static void format_fleet(struct mx_out *o, const struct sagent_mx_agent *a)
{
	if (!a->fleet.on)
		return;
	mx_family(o, "sieve_fleet_connected", "gauge",
		  "Whether the agent is connected to Redis with its lists in step.");
	mx_u64(o, NULL, a->fleet.connected);
	mx_family(o, "sieve_fleet_reconnects_total", "counter",
		  "Sessions with Redis after the first (each begins with a full resync).");
	mx_u64(o, NULL, a->fleet.connects ? a->fleet.connects - 1 : 0);
	format_fleet_lists(o, a);
}

/* [feed NAME]: each family's samples across the feeds together. */
static void format_feeds(struct mx_out *o, const struct sagent_mx_agent *a)
{
	static const char *const outcomes[] = {
		[SSRC_FEED_LOADED] = "loaded", [SSRC_FEED_UNCHANGED] = "unchanged",
		[SSRC_FEED_REFUSED] = "refused",
	};
	const struct sagent_mx_feed *f;
	unsigned int i, k;

	if (!a->nr_feeds)
		return;
	mx_family(o, "sieve_feed_refreshes_total", "counter",
		  "Refreshes of a [feed NAME] by outcome: loaded, unchanged (a 304, or the "
		  "body of the last load), refused (nothing changed).");
	for (f = a->feeds, i = 0; i < a->nr_feeds; i++, f++)
		for (k = 0; k <= SSRC_FEED_REFUSED; k++)
			mx_u64(o, LABELS("feed", f->name, "list", f->list, "outcome", outcomes[k]),
			       f->refreshes[k]);
	mx_family(o, "sieve_feed_refusals_total", "counter",
		  "Refreshes refused, by reason: fetch, html, parse, min_entries, max_shrink, load.");
	for (f = a->feeds, i = 0; i < a->nr_feeds; i++, f++)
		for (k = 0; k < SSRC_FEED_NR_REFUSALS; k++)
			mx_u64(o, LABELS("feed", f->name, "list", f->list,
					 "reason", ssrc_feed_refusal_name(k)), f->refusals[k]);
	mx_family(o, "sieve_feed_entries", "gauge",
		  "Entries of the feed's origin in its list's store.");
	for (f = a->feeds, i = 0; i < a->nr_feeds; i++, f++)
		mx_u64(o, LABELS("feed", f->name, "list", f->list), f->entries);
	mx_family(o, "sieve_feed_last_http_status", "gauge",
		  "The HTTP status of the feed's last response (0: file://, or no response).");
	for (f = a->feeds, i = 0; i < a->nr_feeds; i++, f++)
		if (f->last_attempt)
			mx_u64(o, LABELS("feed", f->name, "list", f->list), (uint64_t)f->last_status);
	mx_family(o, "sieve_feed_last_attempt_timestamp_seconds", "gauge",
		  "When the feed was last fetched, since the Unix epoch.");
	for (f = a->feeds, i = 0; i < a->nr_feeds; i++, f++)
		if (f->last_attempt)
			mx_u64(o, LABELS("feed", f->name, "list", f->list), (uint64_t)f->last_attempt);
	mx_family(o, "sieve_feed_last_success_timestamp_seconds", "gauge",
		  "When a refresh of the feed last loaded it or found it unchanged.");
	for (f = a->feeds, i = 0; i < a->nr_feeds; i++, f++)
		if (f->last_success)
			mx_u64(o, LABELS("feed", f->name, "list", f->list), (uint64_t)f->last_success);
}

/* The CrowdSec follower (crowdsec.c): o[0] is the decisions of no origin. */
static void format_crowdsec(struct mx_out *o, const struct sagent_mx_agent *a)
{
	static const char *const actions[2] = { "new", "deleted" };
	unsigned int i, k;

	if (!a->crowdsec.on)
		return;
	mx_family(o, "sieve_crowdsec_up", "gauge",
		  "Whether the last request to the CrowdSec LAPI got a reply read whole.");
	mx_u64(o, NULL, a->crowdsec.up);
	mx_family(o, "sieve_crowdsec_last_poll_timestamp_seconds", "gauge",
		  "When the last LAPI reply was read and applied, since the Unix epoch.");
	if (a->crowdsec.last_poll_ms)
		mx_ms(o, NULL, a->crowdsec.last_poll_ms);
	mx_family(o, "sieve_crowdsec_polls_total", "counter",
		  "LAPI replies read and applied (resyncs included).");
	mx_u64(o, NULL, a->crowdsec.polls);
	mx_family(o, "sieve_crowdsec_resyncs_total", "counter",
		  "Full resyncs (startup=true) applied: at start and after each failure.");
	mx_u64(o, NULL, a->crowdsec.resyncs);
	mx_family(o, "sieve_crowdsec_failures_total", "counter",
		  "Requests that failed or replies refused whole; enforcement kept as it was.");
	mx_u64(o, NULL, a->crowdsec.failures);
	mx_family(o, "sieve_crowdsec_decisions_total", "counter",
		  "Decisions taken from the LAPI by origin: new (blocks) and deleted (unblocks).");
	for (i = 1; i <= a->crowdsec.nr_origins; i++)
		for (k = 0; k < 2; k++)
			mx_u64(o, LABELS("origin", a->crowdsec.o[i].name, "action", actions[k]),
			       a->crowdsec.o[i].applied[k]);
	mx_family(o, "sieve_crowdsec_skipped_total", "counter",
		  "Decisions not taken, by origin (\"\": none that could be named) and reason.");
	for (i = 0; i <= a->crowdsec.nr_origins; i++)
		for (k = 0; k < SCS_NR_SKIPS; k++)
			mx_u64(o, LABELS("origin", a->crowdsec.o[i].name, "reason",
					 scs_skip_name(k)), a->crowdsec.o[i].skipped[k]);
}

static const char *filter_type(uint32_t type)
{
	switch (type) {
	case SIEVE_BLOOM:
		return "bloom";
	case SIEVE_BLOCKED_BLOOM:
		return "blocked";
	case SIEVE_CUCKOO:
		return "cuckoo";
	default:
		return "unknown";
	}
}

/* A value of struct sieve_info, one sample a filter. */
#define FILTER_METRIC(o, s, name_, type_, help_, expr) do {				\
	size_t i_;									\
											\
	mx_family(o, name_, type_, help_);						\
	for (i_ = 0; i_ < (s)->nfilters; i_++) {					\
		const struct sieve_info *f = &(s)->filters[i_];				\
											\
		mx_f64(o, LABELS("filter", f->name), (double)(expr));			\
	}										\
} while (0)

static void format_filters(struct mx_out *o, const struct sagent_mx_scrape *s)
{
	size_t i;

	mx_family(o, "sieve_dev_up", "gauge",
		  "Whether /dev/sieve (the sieve module) could be opened and its filters listed.");
	mx_u64(o, NULL, s->dev_up);
	mx_family(o, "sieve_filter_info", "gauge",
		  "A /dev/sieve filter's type and creation flags (always 1).");
	for (i = 0; i < s->nfilters; i++) {
		const struct sieve_info *f = &s->filters[i];

		mx_u64(o, LABELS("filter", f->name, "type", filter_type(f->geo.type),
				 "scalable",
				 f->create_flags & SIEVE_CREATE_SCALABLE ? "true" : "false"), 1);
	}
	FILTER_METRIC(o, s, "sieve_filter_items", "gauge",
		      "Keys stored (cuckoo: exact; Bloom types: estimated from the bits set).",
		      f->items);
	FILTER_METRIC(o, s, "sieve_filter_capacity", "gauge",
		      "Keys the filter was sized for, all layers (0: an explicit geometry).",
		      f->capacity);
	FILTER_METRIC(o, s, "sieve_filter_layers", "gauge", "Layers in use.", f->nlayers);
	FILTER_METRIC(o, s, "sieve_filter_fill_ratio", "gauge",
		      "Of the newest layer: bits set (Bloom types) or slots used (cuckoo).",
		      f->fill_ppm / 1e6);
	FILTER_METRIC(o, s, "sieve_filter_expected_false_positive_ratio", "gauge",
		      "Expected false-positive rate of a query now, all layers.", f->fpr_ppb / 1e9);
	FILTER_METRIC(o, s, "sieve_filter_target_false_positive_ratio", "gauge",
		      "The rate the filter was sized for (0: an explicit geometry).",
		      f->fpp_ppb / 1e9);
	FILTER_METRIC(o, s, "sieve_filter_memory_bytes", "gauge",
		      "Memory the filter holds in the kernel, tables and headers.",
		      f->memory_bytes);
	FILTER_METRIC(o, s, "sieve_filter_snapshot_bytes", "gauge",
		      "Size of the filter's snapshot (export) now.", f->snapshot_bytes);
	FILTER_METRIC(o, s, "sieve_filter_inserts_total", "counter",
		      "Adds that stored a key (a clear resets it).", f->inserted);
	FILTER_METRIC(o, s, "sieve_filter_deletes_total", "counter",
		      "Deletes that removed a key (cuckoo).", f->deleted);
	FILTER_METRIC(o, s, "sieve_filter_queries_total", "counter",
		      "Queries, single and batched.", f->queries);
	FILTER_METRIC(o, s, "sieve_filter_hits_total", "counter",
		      "Queries that answered maybe-present.", f->hits);
}

int sagent_metrics_format(FILE *f, const struct sagent_mx_scrape *s)
{
	struct mx_out o = { .f = f };

	format_lists(&o, s);
	format_ifaces(&o, s);
	if (s->agent) {
		format_agent(&o, s->agent);
		format_fleet(&o, s->agent);
		format_feeds(&o, s->agent);

		format_crowdsec(&o, s->agent);
	}
	format_filters(&o, s);
	return ferror(f) ? -EIO : 0;
}

/* ---- a scrape ------------------------------------------------------------ */

/*
 * Entry counts by kind and origin are a GROUP BY over the whole list:
 * O(entries), about half a second a million (README, "Metrics"), and
 * Prometheus scrapes every 15 s or so. So they are kept from one scrape to
 * the next and counted again only when the list changed. A list's version
 * goes up with every change committed to it and lists are never deleted,
 * so (store file, list, version) names one content: the store file by
 * device and inode, since a store removed and made again starts its
 * versions over. A scrape reads the version and the counts in one read
 * snapshot of the store, so they always agree.
 */
struct count_cache {
	dev_t dev;
	ino_t ino;
	struct sagent_mx_list l;
	struct sagent_mx_count *counts;
};

/*
 * Scrapes run one at a time under this lock (the HTTP thread serves one
 * request at a time anyway; tests render from their own): it guards the
 * cache, and the cost of a scrape stays one scrape's.
 */
static pthread_mutex_t scrape_lock = PTHREAD_MUTEX_INITIALIZER;
static struct count_cache *cache;
static size_t ncache;

static void cache_free(struct count_cache *c, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < c[i].l.ncounts; j++)
			free(c[i].counts[j].origin);
		free(c[i].counts);
	}
	free(c);
}

void sagent_metrics_forget(void)
{
	pthread_mutex_lock(&scrape_lock);
	cache_free(cache, ncache);
	cache = NULL;
	ncache = 0;
	pthread_mutex_unlock(&scrape_lock);
}

static int count_one(const struct sxdp_store_count *sc, void *ctx)
{
	struct count_cache *c = ctx;
	struct sagent_mx_count *grown, *n;

	grown = realloc(c->counts, (c->l.ncounts + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	c->counts = grown;
	n = &grown[c->l.ncounts];
	n->origin = strdup(sc->origin);
	if (!n->origin)
		return -ENOMEM;
	n->allow = sc->allow;
	n->kind = sc->kind;
	n->count = sc->count;
	c->l.ncounts++;
	return 0;
}

/* Orders counts as the exposition lists them: block before allow, kind, origin. */
static int count_cmp(const void *a, const void *b)
{
	const struct sagent_mx_count *x = a, *y = b;

	if (x->allow != y->allow)
		return x->allow - y->allow;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->origin, y->origin);
}

/*
 * @name's counts into @out (a new cache entry): moved from @old if it has
 * them at this version, else counted. Inside the scrape's read snapshot.
 */
static int list_counts(struct sxdp_store *st, const struct stat *file, const char *name,
		       struct count_cache *old, size_t nold, struct count_cache *out)
{
	uint64_t version;
	size_t i;
	int ret = sxdp_store_version(st, name, &version);

	if (ret)
		return ret;
	for (i = 0; i < nold; i++) {
		struct count_cache *c = &old[i];

		if (c->dev == file->st_dev && c->ino == file->st_ino && c->l.version == version &&
		    !strcmp(c->l.name, name)) {
			*out = *c;
			memset(c, 0, sizeof(*c));	/* moved: cache_free skips it */
			return 0;
		}
	}
	memset(out, 0, sizeof(*out));
	out->dev = file->st_dev;
	out->ino = file->st_ino;
	snprintf(out->l.name, sizeof(out->l.name), "%s", name);
	out->l.version = version;
	ret = sxdp_store_origin_counts(st, name, count_one, out);
	if (!ret)
		qsort(out->counts, out->l.ncounts, sizeof(*out->counts), count_cmp);
	return ret;
}

/* What a scrape holds until its text is written. */
struct scrape {
	struct sagent_mx_scrape s;
	char *origins[SIEVE_XDP_ORIGIN_SLOTS];
	struct sagent_mx_list *lists;
	struct sagent_mx_iface *ifaces;
	struct sieve_info *filters;
	struct sagent_mx_agent agent;
};

/* An origin's name in its counter slot; the ids past the slots share "other". */
static int origin_name(uint32_t id, const char *name, void *ctx)
{
	struct scrape *sc = ctx;

	if (id >= SIEVE_XDP_ORIGIN_OTHER || sc->origins[id])
		return 0;
	sc->origins[id] = strdup(name);
	return sc->origins[id] ? 0 : -ENOMEM;
}

/* The lists (and the cache, replaced by theirs) and this namespace's attachments. */
static int read_store_tx(struct sxdp_store *st, struct scrape *sc)
{
	struct count_cache *fresh;
	struct sxdp_attachment *att = NULL;
	char **names = NULL;
	size_t nnames = 0, natt = 0, i, n;
	uint64_t netns = sxdp_netns();
	struct stat file;
	int ret;

	if (stat(sxdp_store_path(st), &file))
		return -errno;
	ret = sxdp_store_lists(st, &names, &nnames, NULL, 0);
	if (ret)
		return ret;
	fresh = calloc(nnames ? nnames : 1, sizeof(*fresh));
	sc->lists = calloc(nnames ? nnames : 1, sizeof(*sc->lists));
	if (!fresh || !sc->lists)
		ret = -ENOMEM;
	for (i = 0; !ret && i < nnames; i++) {
		ret = list_counts(st, &file, names[i], cache, ncache, &fresh[i]);
		fresh[i].l.counts = fresh[i].counts;
		sc->lists[i] = fresh[i].l;
	}
	sxdp_store_names_free(names, nnames);
	/*
	 * The new cache holds this scrape's lists only (a store replaced
	 * drops the old one's); after an error it is empty, never partial.
	 */
	cache_free(cache, ncache);
	cache = ret ? NULL : fresh;
	ncache = ret ? 0 : nnames;
	if (ret) {
		cache_free(fresh, fresh ? nnames : 0);
		return ret;
	}
	sc->s.lists = sc->lists;
	sc->s.nlists = nnames;

	ret = sxdp_store_attachments(st, NULL, &att, &natt, NULL, 0);
	if (ret)
		return ret;
	sc->ifaces = calloc(natt ? natt : 1, sizeof(*sc->ifaces));
	if (!sc->ifaces) {
		free(att);
		return -ENOMEM;
	}
	for (i = 0, n = 0; i < natt; i++)
		if (att[i].netns == netns)
			sc->ifaces[n++].a = att[i];
	free(att);
	sc->s.ifaces = sc->ifaces;
	sc->s.nifaces = n;
	/* Not fatal: without names, the counters go by slot alone. */
	if (!sxdp_store_origin_names(st, origin_name, sc, NULL, 0))
		sc->s.origins = sc->origins;
	return 0;
}

static int read_store(const struct sconf_config *c, struct scrape *sc)
{
	struct sxdp_store *st;
	int ret;

	ret = sxdp_store_open(c->state_dir[0] ? c->state_dir : NULL, &st, NULL, 0);
	if (ret)
		return ret;
	ret = sxdp_store_begin_read(st, NULL, 0);
	if (!ret) {
		ret = read_store_tx(st, sc);
		sxdp_store_rollback(st);	/* ends the read snapshot */
	}
	sxdp_store_close(st);
	return ret;
}

/* An attachment's pinned maps (report.h); x->read stays false if they cannot be read. */
static void read_iface(struct sagent_mx_iface *x)
{
	struct sxdp_handle h;

	if (sxdp_open_ns(x->a.netns, x->a.iface, &h))
		return;
	x->read = !sxdp_iface_report(&h, &x->r);
	sxdp_close(&h);
}

/* Every /dev/sieve filter; none, and dev_up false, without the module. */
static void read_filters(struct scrape *sc)
{
	struct sieve_list_entry *all = NULL;
	struct sieve_dev *dev;
	int n, i, ret;

	if (sieve_dev_open(NULL, false, &dev))
		return;
	n = sieve_dev_list_all(dev, &all);
	if (n >= 0)
		sc->filters = calloc(n ? n : 1, sizeof(*sc->filters));
	if (n >= 0 && sc->filters) {
		sc->s.dev_up = true;
		for (i = 0; i < n; i++) {
			ret = sieve_dev_info(dev, all[i].id, &sc->filters[sc->s.nfilters]);
			/* Destroyed since the list was taken: not there any more. */
			if (!ret)
				sc->s.nfilters++;
		}
		sc->s.filters = sc->filters;
	}
	free(all);
	sieve_dev_close(dev);
}

static void read_fleet(const struct sagent_fleet_stats *st, struct sagent_mx_agent *a)
{
	unsigned int i, k;

	a->fleet.on = st->on;
	a->fleet.connected = atomic_load(&st->connected);
	a->fleet.connects = atomic_load(&st->connects);
	a->fleet.nr_lists = st->on ? st->nr_lists : 0;
	for (i = 0; i < a->fleet.nr_lists; i++) {
		const struct sagent_fleet_list_stats *l = &st->l[i];
		struct sagent_mx_fleet_list *x = &a->fleet.l[i];

		x->name = st->lists[i];
		for (k = 0; k < SXDP_NR_LIST_OPS; k++)
			x->applied[k] = atomic_load(&l->applied[k]);
		for (k = 0; k < SAGENT_NR_SKIPS; k++)
			x->skipped[k] = atomic_load(&l->skipped[k]);
		x->resyncs = atomic_load(&l->resyncs);
		x->last_ms = atomic_load(&l->last_ms);
		x->last_seq = atomic_load(&l->last_seq);
		x->lag_ms = atomic_load(&l->lag_ms);
	}
}

static void read_feeds(const struct sagent_feeds_stats *st, struct sagent_mx_agent *a)
{
	/* The names change with a reload, under the lock (the counters are atomics). */
	pthread_mutex_t *lock = (pthread_mutex_t *)&st->lock;
	unsigned int i, k;

	pthread_mutex_lock(lock);
	a->nr_feeds = st->nr;
	for (i = 0; i < a->nr_feeds; i++) {
		const struct sagent_feed_stats *f = &st->f[i];
		struct sagent_mx_feed *x = &a->feeds[i];

		memcpy(x->name, f->name, sizeof(x->name));
		memcpy(x->list, f->list, sizeof(x->list));
		x->last_success = atomic_load(&f->last_success);
		x->last_attempt = atomic_load(&f->last_attempt);
		x->last_status = atomic_load(&f->last_status);
		x->entries = atomic_load(&f->entries);
		for (k = 0; k <= SSRC_FEED_REFUSED; k++)
			x->refreshes[k] = atomic_load(&f->refreshes[k]);
		for (k = 0; k < SSRC_FEED_NR_REFUSALS; k++)
			x->refusals[k] = atomic_load(&f->refusals[k]);
	}
	pthread_mutex_unlock(lock);
}

static void read_crowdsec(const struct sagent_crowdsec_stats *st, struct sagent_mx_agent *a)
{
	unsigned int i, k;

	a->crowdsec.on = st->on;
	a->crowdsec.up = atomic_load(&st->up);
	a->crowdsec.last_poll_ms = atomic_load(&st->last_poll_ms);
	a->crowdsec.polls = atomic_load(&st->polls);
	a->crowdsec.resyncs = atomic_load(&st->resyncs);
	a->crowdsec.failures = atomic_load(&st->failures);
	/* The names below it were written before it was. */
	a->crowdsec.nr_origins = atomic_load_explicit(&st->nr_origins, memory_order_acquire);
	for (i = 0; i <= a->crowdsec.nr_origins; i++) {
		a->crowdsec.o[i].name = st->o[i].name;
		for (k = 0; k < 2; k++)
			a->crowdsec.o[i].applied[k] = atomic_load(&st->o[i].applied[k]);
		for (k = 0; k < SCS_NR_SKIPS; k++)
			a->crowdsec.o[i].skipped[k] = atomic_load(&st->o[i].skipped[k]);
	}
}

static void read_agent(const struct sagent_stats *st, struct sagent_mx_agent *a)
{
	a->rebuilds = atomic_load(&st->rebuilds);
	a->rebuild_ns = atomic_load(&st->rebuild_ns);
	a->expired = atomic_load(&st->expired);
	a->expire_runs = atomic_load(&st->expire_runs);
	a->restores = atomic_load(&st->restores);
	a->adoptions = atomic_load(&st->adoptions);
	a->snapshot_saves = atomic_load(&st->snapshot_saves);
	a->errors = atomic_load(&st->errors);
	a->started_at = st->started_at;
	read_fleet(&st->fleet, a);
	read_feeds(&st->feeds, a);

	read_crowdsec(&st->crowdsec, a);
}

/* The exposition; @refreshes: the snapshot's own count (0 outside the server). */
static int render(const struct sconf_config *c, const struct sagent_stats *stats,
		  uint64_t refreshes, char **text, size_t *len)
{
	struct scrape sc = { 0 };
	size_t i;
	FILE *f;
	int ret;

	pthread_mutex_lock(&scrape_lock);
	/* A store that cannot be read says so (sieve_store_up 0); the rest still shows. */
	sc.s.store_up = !read_store(c, &sc);
	if (!sc.s.store_up) {
		sc.s.nlists = 0;
		sc.s.nifaces = 0;
	}
	for (i = 0; i < sc.s.nifaces; i++)
		read_iface(&sc.ifaces[i]);
	if (stats) {
		read_agent(stats, &sc.agent);
		sc.agent.metrics_refreshes = refreshes;
		sc.s.agent = &sc.agent;
	}
	read_filters(&sc);

	*text = NULL;
	*len = 0;
	f = open_memstream(text, len);
	ret = f ? sagent_metrics_format(f, &sc.s) : -ENOMEM;
	if (f && fclose(f) && !ret)
		ret = -ENOMEM;
	pthread_mutex_unlock(&scrape_lock);
	free(sc.lists);
	free(sc.ifaces);
	free(sc.filters);
	for (i = 0; i < SIEVE_XDP_ORIGIN_SLOTS; i++)
		free(sc.origins[i]);
	if (ret) {
		free(*text);
		*text = NULL;
		*len = 0;
	}
	return ret;
}

int sagent_metrics_render(const struct sconf_config *c, const struct sagent_stats *stats,
			  char **text, size_t *len)
{
	return render(c, stats, 0, text, len);
}

/* ---- HTTP ---------------------------------------------------------------- */

/* Bounds on what a scraper (or anything else that connects) may hold. */
#define MX_MAX_CONNECTIONS	16
#define MX_HARD_CONNECTIONS	64
#define MX_TIMEOUT_S		10

/*
 * The server: libmicrohttpd's one thread (internal polling) parses HTTP
 * and answers from a snapshot; a gatherer thread of ours renders the
 * snapshot when a scrape finds it older than [metrics] refresh_interval.
 * So a loop of GETs is not a loop of store reads and /dev/sieve INFO
 * table scans: at most one gathering an interval, whatever the scrapes
 * (sieve_agent_metrics_refreshes_total counts them).
 *
 * Connections: every 127/8 address is local, so per-address limits hold
 * nothing against a local user. The server keeps at most
 * MX_MAX_CONNECTIONS; a new one past that drops the oldest (shutdown(2) on
 * its socket: libmicrohttpd sees it end and closes it), so whoever holds
 * slow connections (one byte every few seconds keeps an idle timeout
 * away) loses them to the next scraper, who is served at once from the
 * snapshot. MX_HARD_CONNECTIONS bounds the sockets in between.
 *
 * Privileges: the server's thread drops every capability when it first
 * runs a callback, before it reads a byte of a request (capabilities are
 * per thread; it needs none to parse HTTP and copy the snapshot). The
 * gatherer keeps CAP_BPF and CAP_SYS_ADMIN only (GATHER_CAPS): it reads
 * pinned maps. Both still run as uid 0 in the agent's address space: this
 * takes the kernel's privileged operations (bpf(2), attaching, mounting)
 * from a parser that goes wrong, not the files uid 0 owns.
 */
struct mx_conn {
	struct MHD_Connection *conn;	/* NULL: a free slot */
	int fd;
	uint64_t seq;			/* order of arrival: the lowest is the oldest */
};

struct sagent_metrics {
	struct MHD_Daemon *d;
	struct sconf_config c;		/* a copy: a reload may change the agent's */
	const struct sagent_stats *stats;
	uint16_t port;
	/* libmicrohttpd's messages: kept while starting (for err), then logged. */
	pthread_mutex_t log_lock;
	bool starting;
	char log[256];
	/*
	 * The snapshot, under snap_lock: @text (NULL before the first) was
	 * gathered from @at_ns on; @gen counts gatherings, @gathering says one
	 * runs, @want asks for one, @stop ends the gatherer.
	 */
	pthread_t gatherer;
	pthread_mutex_t snap_lock;
	pthread_cond_t snap_cond;	/* signalled for want, stop and each new snapshot */
	bool want, gathering, stop;
	char *text;
	size_t len;
	int64_t at_ns;
	uint64_t gen;
	/* The connections: the server's thread only. */
	struct mx_conn conns[MX_MAX_CONNECTIONS];
	uint64_t conn_seq;
	bool dropped_caps;
};

/* How long a scrape waits for the gatherer before it gets the last snapshot. */
#define MX_GATHER_WAIT_S	10

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
	struct sagent_metrics *m = cls;
	char line[256];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	pthread_mutex_lock(&m->log_lock);
	if (m->starting) {
		snprintf(m->log, sizeof(m->log), "%s", line);
	} else {
		/* A message may quote a request: escaped like every log line. */
		flockfile(stderr);
		fputs("sieve agent: metrics: ", stderr);
		sieve_escape(stderr, line, n, SIEVE_ESC_LOG);
		fputc('\n', stderr);
		funlockfile(stderr);
	}
	pthread_mutex_unlock(&m->log_lock);
}

/* ---- the snapshot ---- */

/*
 * The calling thread keeps only the capabilities of @keep (CAP_* bits),
 * effective and permitted: capset(2) with pid 0 acts on the calling thread
 * only, and what leaves the permitted set cannot come back. 0 or -errno.
 */
static int thread_caps_keep(uint64_t keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	int i;

	if (syscall(SYS_capget, &hdr, d))
		return -errno;
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		d[i].effective &= (uint32_t)(keep >> (32 * i));
		d[i].permitted &= (uint32_t)(keep >> (32 * i));
		d[i].inheritable = 0;
	}
	return syscall(SYS_capset, &hdr, d) ? -errno : 0;
}

static int drop_thread_caps(void)
{
	return thread_caps_keep(0);
}


/*
 * What the gatherer keeps: CAP_BPF to open the pins (bpf(2) with
 * unprivileged BPF off), CAP_SYS_ADMIN for the generation's inner maps by
 * id (6.1). /dev/sieve (0600, root's) needs none: the agent's uid owns it.
 */
#define GATHER_CAPS	(1ULL << CAP_BPF | 1ULL << CAP_SYS_ADMIN)

static void *gather_loop(void *arg)
{
	struct sagent_metrics *m = arg;
	uint64_t refreshes = 0;
	char *text;
	size_t len;
	int64_t t0;
	int ret;

	ret = thread_caps_keep(GATHER_CAPS);
	if (ret)
		fprintf(stderr, "sieve agent: metrics: dropping the gatherer's capabilities: %s\n",
			strerror(-ret));

	pthread_mutex_lock(&m->snap_lock);
	for (;;) {
		while (!m->want && !m->stop)
			pthread_cond_wait(&m->snap_cond, &m->snap_lock);
		if (m->stop)
			break;
		m->want = false;
		m->gathering = true;
		pthread_mutex_unlock(&m->snap_lock);
		t0 = mono_ns();
		if (render(&m->c, m->stats, ++refreshes, &text, &len))
			text = NULL;
		pthread_mutex_lock(&m->snap_lock);
		if (text) {
			free(m->text);
			m->text = text;
			m->len = len;
		}
		/* Its start: the next may begin a whole interval after this one did. */
		m->at_ns = t0;
		m->gen++;
		m->gathering = false;
		pthread_cond_broadcast(&m->snap_cond);
	}
	pthread_mutex_unlock(&m->snap_lock);
	return NULL;
}

/*
 * A copy of the snapshot for one scrape (malloc'd), gathered anew first
 * if it is older than the interval; -EAGAIN if there is none yet after
 * MX_GATHER_WAIT_S, -ENOMEM.
 */
static int snapshot_copy(struct sagent_metrics *m, char **text, size_t *len)
{
	int64_t interval = (int64_t)m->c.metrics_refresh_ms * 1000000;
	struct timespec deadline;
	uint64_t gen;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &deadline);	/* the condvar's clock */
	deadline.tv_sec += MX_GATHER_WAIT_S;
	pthread_mutex_lock(&m->snap_lock);
	if (!m->text || m->gathering || mono_ns() - m->at_ns >= interval) {
		gen = m->gen;
		/* One running now is as fresh as one asked for: it is waited for. */
		if (!m->gathering) {
			m->want = true;
			pthread_cond_broadcast(&m->snap_cond);
		}
		while (m->gen == gen && !ret)
			ret = pthread_cond_timedwait(&m->snap_cond, &m->snap_lock, &deadline);
	}
	ret = 0;
	*text = m->text ? malloc(m->len ? m->len : 1) : NULL;
	if (*text) {
		memcpy(*text, m->text, m->len);
		*len = m->len;
	} else {
		ret = m->text ? -ENOMEM : -EAGAIN;
	}
	pthread_mutex_unlock(&m->snap_lock);
	return ret;
}

static void stop_gatherer(struct sagent_metrics *m)
{
	pthread_mutex_lock(&m->snap_lock);
	m->stop = true;
	pthread_cond_broadcast(&m->snap_cond);
	pthread_mutex_unlock(&m->snap_lock);
	pthread_join(m->gatherer, NULL);
}

/* ---- HTTP ---- */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, const char *type, bool must_free)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (must_free)
		r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	else
		r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

#define TEXT_PLAIN	"text/plain; charset=utf-8"

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **req)
{
	static char not_found[] = "not found: the metrics are at /metrics\n";
	static char not_allowed[] = "only GET and HEAD\n";
	static char failed[] = "the metrics could not be gathered\n";
	struct sagent_metrics *m = cls;
	char *text;
	size_t len;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed,
			     sizeof(not_allowed) - 1, TEXT_PLAIN, false);
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, not_found, sizeof(not_found) - 1,
			     TEXT_PLAIN, false);
	if (snapshot_copy(m, &text, &len))
		return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, failed, sizeof(failed) - 1,
			     TEXT_PLAIN, false);
	return reply(conn, MHD_HTTP_OK, text, len, "text/plain; version=0.0.4; charset=utf-8",
		     true);
}

/*
 * libmicrohttpd's word on a connection that starts or ends, on its thread.
 * The first drops the thread's capabilities; each new one past
 * MX_MAX_CONNECTIONS ends the oldest.
 */
static void on_connection(void *cls, struct MHD_Connection *conn, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct sagent_metrics *m = cls;
	const union MHD_ConnectionInfo *info;
	struct mx_conn *slot = NULL, *c;
	int ret;

	if (!m->dropped_caps) {
		m->dropped_caps = true;
		ret = drop_thread_caps();
		if (ret)
			fprintf(stderr, "sieve agent: metrics: dropping the server thread's "
				"capabilities: %s\n", strerror(-ret));
	}
	for (c = m->conns; c < m->conns + MX_MAX_CONNECTIONS; c++) {
		if (what == MHD_CONNECTION_NOTIFY_CLOSED && c->conn == conn) {
			c->conn = NULL;
			return;
		}
		/* A free slot, else the oldest. */
		if (!slot || (slot->conn && (!c->conn || c->seq < slot->seq)))
			slot = c;
	}
	if (what != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	if (slot->conn)
		shutdown(slot->fd, SHUT_RDWR);	/* its CLOSED comes later: no slot by then */
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	slot->conn = conn;
	slot->fd = info ? info->connect_fd : -1;
	slot->seq = ++m->conn_seq;
	if (slot->fd < 0)
		slot->conn = NULL;
}

/* @c's address and port as a socket address; -EINVAL if it is not numeric. */
static int listen_addr(const struct sconf_config *c, struct sockaddr_storage *ss,
		       socklen_t *sslen, bool *v6)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, c->metrics_addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(c->metrics_port);
		*sslen = sizeof(*s4);
		*v6 = false;
		return 0;
	}
	if (inet_pton(AF_INET6, c->metrics_addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(c->metrics_port);
		*sslen = sizeof(*s6);
		*v6 = true;
		return 0;
	}
	return -EINVAL;
}

/* The port the listening socket got (the kernel's choice for port 0). */
static uint16_t bound_port(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (!info || getsockname(info->listen_fd, (struct sockaddr *)&ss, &len))
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int sagent_metrics_start(const struct sconf_config *c, const struct sagent_stats *stats,
			 struct sagent_metrics **mp, char *err, size_t errlen)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	struct sockaddr_storage ss;
	struct sagent_metrics *m;
	sigset_t all, old;
	socklen_t sslen;
	bool v6;
	int ret;

	*mp = NULL;
	if (!c->metrics_on)
		return 0;
	if (listen_addr(c, &ss, &sslen, &v6)) {
		snprintf(err, errlen, "metrics: listen address '%s' is not a numeric IPv4 or IPv6 "
			 "address", c->metrics_addr);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "metrics: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	m->c = *c;
	m->stats = stats;
	m->starting = true;
	pthread_mutex_init(&m->log_lock, NULL);
	pthread_mutex_init(&m->snap_lock, NULL);
	pthread_cond_init(&m->snap_cond, NULL);
	/* A v6 address gets a v6 socket (dual stack: "::" takes v4 too); a v4 one, v4 only. */
	if (v6)
		flags |= MHD_USE_DUAL_STACK;
	/*
	 * The threads inherit this signal mask: with every signal blocked
	 * there, SIGHUP and SIGTERM reach the agent's main thread.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&m->gatherer, NULL, gather_loop, m);
	if (ret) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		snprintf(err, errlen, "metrics: starting a thread: %s", strerror(ret));
		goto out_free;
	}
	pthread_setname_np(m->gatherer, "sieve-metrics");
	m->d = MHD_start_daemon(flags, c->metrics_port, NULL, NULL, on_request, m,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MX_HARD_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)MX_TIMEOUT_S,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
				MHD_OPTION_EXTERNAL_LOGGER, on_log, m,
				MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_lock(&m->log_lock);
	m->starting = false;
	pthread_mutex_unlock(&m->log_lock);
	if (!m->d) {
		snprintf(err, errlen, "metrics: cannot listen on %s%s%s:%u: %s", v6 ? "[" : "",
			 c->metrics_addr, v6 ? "]" : "", c->metrics_port,
			 m->log[0] ? m->log : "libmicrohttpd failed to start");
		ret = EADDRNOTAVAIL;
		goto out_gatherer;
	}
	m->port = bound_port(m->d);
	*mp = m;
	return 0;

out_gatherer:
	stop_gatherer(m);
out_free:
	pthread_cond_destroy(&m->snap_cond);
	pthread_mutex_destroy(&m->snap_lock);
	pthread_mutex_destroy(&m->log_lock);
	free(m);
	return -ret;
}

void sagent_metrics_stop(struct sagent_metrics *m)
{
	if (!m)
		return;
	/* Joins the server's thread: no request runs after this (the gatherer still answers). */
	MHD_stop_daemon(m->d);
	stop_gatherer(m);
	free(m->text);
	pthread_cond_destroy(&m->snap_cond);
	pthread_mutex_destroy(&m->snap_lock);
	pthread_mutex_destroy(&m->log_lock);
	free(m);
}

uint16_t sagent_metrics_port(const struct sagent_metrics *m)
{
	return m ? m->port : 0;
}
