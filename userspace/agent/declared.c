// SPDX-License-Identifier: GPL-2.0
/*
 * [attach IFACE]: a host described by one file. Each declared interface
 * that exists and whose recorded attachment differs from the declaration
 * (none, another list, another backend or mode where the section names
 * one) is attached as `sieve xdp attach IFACE --list ... --backend ...
 * --mode ...` would (sxdp_attach). From then on the store records it and
 * restore.c keeps it enforcing like any other. The file wins: an attach by
 * hand to another list is undone at the next check, and logged. A section
 * removed from the file detaches nothing (`sieve xdp detach` does).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_link.h>

#include "agent.h"
#include "backend.h"
#include "ops.h"

/* The last failure logged of each declaration (by its index): logged once. */
static char failed[SCONF_MAX_ATTACH][256];

static bool as_declared(const struct sconf_attach_config *d, const struct sxdp_attachment *rec)
{
	return !strcmp(rec->list, d->list) && (!d->backend[0] || !strcmp(rec->backend, d->backend)) &&
	       (!d->mode[0] || !strcmp(rec->mode, d->mode));
}

/* What `sieve xdp attach` takes from the section's keys; the rest its defaults. */
static struct sxdp_attach_opts opts_of(const struct sconf_attach_config *d)
{
	struct sxdp_attach_opts o = {
		.xdp_flags = !strcmp(d->mode, "generic") ? XDP_FLAGS_SKB_MODE :
			     !strcmp(d->mode, "native") ? XDP_FLAGS_DRV_MODE : 0,
		.list = d->list,
		/* The CLI's defaults (a re-attach keeps the recorded ones: not given). */
		.fpp_ppb = SXDP_DEFAULT_FPP_PPB, .capacity = SXDP_DEFAULT_CAPACITY,
	};
	uint32_t flag = 0;

	if (!d->backend[0])
		return o;
	/* The file's reader took only backends these two read. */
	if (sxdp_filter_parse(d->backend, &o.filter) > 0)
		sxdp_backend_parse(d->backend, &flag);
	else
		flag = sxdp_filter_ops.cfg_flag;
	o.cfg_flags = flag;
	o.cfg_given = sxdp_backend_flags();
	return o;
}

static void attach_one(struct sagent *ag, unsigned int i)
{
	const struct sconf_attach_config *d = &ag->cfg.attach[i];
	struct sxdp_attach_opts o = opts_of(d);
	struct sxdp_attachment rec;
	bool recorded;
	char err[512] = "";
	int64_t t0;
	int ret;

	if (!if_nametoindex(d->iface))
		return;		/* netlink calls again when it comes */
	ret = sxdp_store_attach_get(ag->store, sxdp_netns(), d->iface, &rec, err, sizeof(err));
	recorded = !ret;
	if (ret && ret != -ENOENT) {
		snprintf(err + strlen(err), sizeof(err) - strlen(err), " (reading its attachment)");
		goto out_fail;
	}
	if (recorded && as_declared(d, &rec)) {
		failed[i][0] = '\0';
		return;
	}
	t0 = sagent_now_ns();
	err[0] = '\0';
	ret = sxdp_attach(ag->store, d->iface, &o, err, sizeof(err));
	if (ret < 0)
		goto out_fail;
	atomic_fetch_add(&ag->stats.rebuilds, 1);
	atomic_fetch_add(&ag->stats.rebuild_ns, sagent_now_ns() - t0);
	if (recorded)
		sagent_log(SAGENT_INFO, "%s: attached as [attach %s] declares (list %s; it was "
			   "attached to list %s, %s, %s backend)", d->iface, d->iface, d->list,
			   rec.list, rec.mode, rec.backend);
	else
		sagent_log(SAGENT_INFO, "%s: attached as [attach %s] declares (list %s) in %" PRId64
			   " ms", d->iface, d->iface, d->list, (sagent_now_ns() - t0) / 1000000);
	failed[i][0] = '\0';
	return;
out_fail:
	if (!err[0])
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	if (strcmp(failed[i], err)) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "%s: attaching as [attach %s] declares: %s (logged once; "
			   "tried again every expire_interval)", d->iface, d->iface, err);
	}
	snprintf(failed[i], sizeof(failed[i]), "%s", err);
}

void sagent_attach_declared(struct sagent *ag, const char *only_iface)
{
	unsigned int i;

	for (i = 0; i < ag->cfg.nr_attach; i++)
		if (!only_iface || !strcmp(only_iface, ag->cfg.attach[i].iface))
			attach_one(ag, i);
}
