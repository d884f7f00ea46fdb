// SPDX-License-Identifier: GPL-2.0
/*
 * Enforcement from the store: every attachment recorded for this network
 * namespace runs again as recorded. Pins that run on the interface with
 * the recorded settings are adopted, with no gap: at most brought to the
 * store's version (no rebuild when in step). Otherwise (after a reboot the
 * pins are gone; an interface recreated has a defunct link) it is attached
 * anew with the recorded mode, backend, flags, rate, capacity and probe
 * budget, its maps built from the store. An interface that does not exist
 * is waited for: netlink.c calls sagent_link_up() when it comes.
 *
 * Pins that run an older program (a package upgrade, then the agent's
 * restart) get this sieve's program first, swapped in on the running link
 * with maps of its own built from the store (sxdp_upgrade_locked): no
 * moment without a program. An upgrade that fails leaves the old program
 * running, and adopted; it is logged.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>

#include "agent.h"
#include "ops.h"

enum outcome { ADOPTED, REATTACHED, WAITING, FAILED };

static struct sxdp_attach_opts opts_of(const struct sxdp_attachment *rec);

/* Replaces an older program of @rec's pins (their lock held in *@lock_fd). */
static void upgrade(struct sagent *ag, const struct sxdp_attachment *rec, int *lock_fd)
{
	struct sxdp_attach_opts o = opts_of(rec);
	struct sxdp_prog prog;
	char err[512] = "";
	int ret = sxdp_upgrade_locked(ag->store, rec->iface, rec->list, &o, lock_fd, err,
				      sizeof(err));

	if (ret < 0) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "%s: upgrading its program: %s; the old one keeps running",
			   rec->iface, err[0] ? err : strerror(-ret));
	} else if (ret == 1) {
		if (sxdp_prog_running(sxdp_netns(), rec->iface, &prog))
			snprintf(prog.tag, sizeof(prog.tag), "?");
		sagent_log(SAGENT_INFO, "%s: upgraded: it ran another build's program, now this "
			   "sieve's (tag %s), its maps built from the store (list %s)", rec->iface,
			   prog.tag, rec->list);
	}
}

/* The settings the record holds are the ones the live generation runs with. */
static bool same_settings(const struct sxdp_attachment *rec, const struct sieve_xdp_config *cfg)
{
	return cfg->flags == rec->flags && cfg->fpp_ppb == rec->fpp_ppb &&
	       cfg->max_probes == rec->max_probes;
}

/*
 * The removed keys (unblocks, expiry, refreshes that went live) rebuilt
 * away once past half their bound (sxdp_iface_compact), beside the live
 * generation and swapped in, under the interface's lock the caller holds:
 * the commands then seldom meet the bound and rebuild inline.
 */
static void compact(struct sagent *ag, struct sxdp_handle *h, const char *list, bool *rebuilt,
		    const char **why)
{
	char err[512] = "";
	uint64_t removed;
	int ret = sxdp_iface_compact(h, ag->store, list, &removed, err, sizeof(err));

	/* The live generation still enforces: a failure is no incident. */
	if (ret) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_WARNING, "%s: rebuilding away %" PRIu64 " removed keys: %s; "
			   "the live generation keeps enforcing", h->ifname, removed,
			   err[0] ? err : strerror(-ret));
		return;
	}
	*rebuilt = removed > 0;
	if (*rebuilt)
		*why = "their removed keys were past half the bound";
}

/*
 * Adopts @rec's pins if they run on @ifindex as recorded: 0, with the maps
 * at the store's version (*@rebuilt if that took a generation); 1 if they
 * cannot be adopted; -errno.
 */
static int adopt(struct sagent *ag, const struct sxdp_attachment *rec, int ifindex,
		 bool try_upgrade, bool *rebuilt, const char **why, char *err, size_t errlen)
{
	struct sieve_xdp_config cfg;
	struct sxdp_handle h;
	int lock_fd, ret = 1;

	*rebuilt = false;
	*why = "they were behind the store";
	lock_fd = sxdp_lock(rec->iface, false);
	if (lock_fd == -ENOENT)
		return 1;
	if (lock_fd < 0) {
		snprintf(err, errlen, "taking its lock: %s", strerror(-lock_fd));
		return lock_fd;
	}
	/* Not at the periodic check: an upgrade that fails would be logged every time. */
	if (try_upgrade && sxdp_linked_ifindex(rec->iface) == ifindex)
		upgrade(ag, rec, &lock_fd);
	if (sxdp_linked_ifindex(rec->iface) == ifindex && !sxdp_open(rec->iface, &h)) {
		if (!sxdp_read_config(&h, &cfg, NULL) && same_settings(rec, &cfg)) {
			if (sxdp_filter_gone(&cfg))
				*why = "their /dev/sieve filter was gone: made again";
			ret = sxdp_iface_sync(&h, ag->store, rec->list, rebuilt, err, errlen);
			/*
			 * In step, at the periodic check (not before READY=1): the
			 * background rebuild of removed keys, if due.
			 */
			if (!ret && !*rebuilt && !try_upgrade)
				compact(ag, &h, rec->list, rebuilt, why);
		}
		sxdp_close(&h);
	}
	sxdp_unlock(lock_fd);
	return ret;
}

/* What `sieve xdp attach` would be given to make @rec again. */
static struct sxdp_attach_opts opts_of(const struct sxdp_attachment *rec)
{
	return (struct sxdp_attach_opts){
		.xdp_flags = !strcmp(rec->mode, "generic") ? XDP_FLAGS_SKB_MODE :
			     !strcmp(rec->mode, "native") ? XDP_FLAGS_DRV_MODE : 0,
		/* Every flag as recorded, the backend's included. */
		.cfg_flags = rec->flags, .cfg_given = UINT32_MAX,
		.fpp_ppb = rec->fpp_ppb, .fpp_given = true,
		.capacity = rec->capacity,
		.max_probes = rec->max_probes,
		.list = rec->list,
		.filter = sxdp_backend_filter(rec->backend),
	};
}

static void count_build(struct sagent *ag, int64_t t0)
{
	atomic_fetch_add(&ag->stats.rebuilds, 1);
	atomic_fetch_add(&ag->stats.rebuild_ns, sagent_now_ns() - t0);
}

/*
 * One attachment: adopted, re-attached, waited for, or failed: logged, or
 * said in @fail if given (the periodic check logs once per incident).
 */
static enum outcome restore_one(struct sagent *ag, const struct sxdp_attachment *rec,
				bool verbose, char *fail, size_t faillen)
{
	struct sxdp_attach_opts o = opts_of(rec);
	int64_t t0 = sagent_now_ns();
	int ifindex = if_nametoindex(rec->iface), ret;
	const char *why;
	char err[512] = "";
	bool rebuilt;

	if (!ifindex) {
		/* Pins of the interface that went away are no use to the next one. */
		sxdp_unpin(rec->iface);
		if (verbose)
			sagent_log(SAGENT_INFO, "%s: not present; waiting for it (list %s)",
				   rec->iface, rec->list);
		return WAITING;
	}
	ret = adopt(ag, rec, ifindex, !fail, &rebuilt, &why, err, sizeof(err));
	if (!ret) {
		if (rebuilt) {
			count_build(ag, t0);
			sagent_log(SAGENT_INFO, "%s: adopted the running maps (list %s, rebuilt: %s)",
				   rec->iface, rec->list, why);
		} else if (verbose) {
			sagent_log(SAGENT_INFO, "%s: adopted the running maps (list %s, in step)",
				   rec->iface, rec->list);
		}
		/* The periodic check adopts what runs: not an adoption to count. */
		if (!fail || rebuilt)
			atomic_fetch_add(&ag->stats.adoptions, 1);
		return ADOPTED;
	}
	if (ret == 1) {
		err[0] = '\0';
		ret = sxdp_attach(ag->store, rec->iface, &o, err, sizeof(err));
	}
	if (ret < 0 && fail) {
		snprintf(fail, faillen, "restoring list %s: %s", rec->list,
			 err[0] ? err : strerror(-ret));
		return FAILED;
	}
	/* Running already (settings the check could not adopt): nothing to say each time. */
	if (fail && ret == SXDP_ALREADY)
		return ADOPTED;
	if (ret < 0) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "%s: restoring list %s: %s", rec->iface, rec->list,
			   err[0] ? err : strerror(-ret));
		return FAILED;
	}
	count_build(ag, t0);
	atomic_fetch_add(&ag->stats.restores, 1);
	sagent_log(SAGENT_INFO, "%s: attached from the store (list %s, %s, %s backend) in %" PRId64
		   " ms", rec->iface, rec->list, rec->mode, rec->backend,
		   (sagent_now_ns() - t0) / 1000000);
	return REATTACHED;
}

/* The attachments of this namespace (the store holds every namespace's). */
static int attachments_here(struct sagent *ag, struct sxdp_attachment **a, size_t *n)
{
	char err[512] = "";
	uint64_t netns = sxdp_netns();
	size_t i, m = 0;
	int ret;

	ret = sxdp_store_attachments(ag->store, NULL, a, n, err, sizeof(err));
	if (ret) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "reading the attachments: %s", err[0] ? err : strerror(-ret));
		return ret;
	}
	for (i = 0; i < *n; i++)
		if ((*a)[i].netns == netns)
			(*a)[m++] = (*a)[i];
	*n = m;
	return 0;
}

void sagent_restore_all(struct sagent *ag, bool verbose, struct sagent_restore_result *r)
{
	struct sxdp_attachment *a;
	size_t n, i;

	memset(r, 0, sizeof(*r));
	if (attachments_here(ag, &a, &n)) {
		r->failed = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		switch (restore_one(ag, &a[i], verbose, NULL, 0)) {
		case ADOPTED:
			r->adopted++;
			break;
		case REATTACHED:
			r->reattached++;
			break;
		case WAITING:
			r->waiting++;
			break;
		case FAILED:
			r->failed++;
			break;
		}
	}
	free(a);
}

/*
 * The periodic check's incidents: the interfaces whose last check failed,
 * and why. A failure is logged when it starts or changes, its end once.
 */
#define MAX_INCIDENTS	64
static struct {
	char iface[IF_NAMESIZE];
	char why[256];
} incidents[MAX_INCIDENTS];

static void incident(struct sagent *ag, const char *iface, const char *fail)
{
	int i, slot = -1;

	for (i = 0; i < MAX_INCIDENTS; i++) {
		if (!strcmp(incidents[i].iface, iface))
			break;
		if (slot < 0 && !incidents[i].iface[0])
			slot = i;
	}
	if (i < MAX_INCIDENTS && !fail[0]) {
		sagent_log(SAGENT_INFO, "%s: enforcing again", iface);
		incidents[i].iface[0] = '\0';
		return;
	}
	if (!fail[0] || (i < MAX_INCIDENTS && !strcmp(incidents[i].why, fail)))
		return;
	atomic_fetch_add(&ag->stats.errors, 1);
	sagent_log(SAGENT_ERR, "%s: not enforcing: %s (logged once; tried again every "
		   "expire_interval)", iface, fail);
	if (i == MAX_INCIDENTS)
		i = slot;
	if (i >= 0) {
		snprintf(incidents[i].iface, sizeof(incidents[i].iface), "%s", iface);
		snprintf(incidents[i].why, sizeof(incidents[i].why), "%s", fail);
	}
}

/*
 * Incidents of interfaces this pass does not check (detached, or gone) end
 * without a word: one that comes back and fails again is a new incident.
 */
static void forget_unchecked(const struct sxdp_attachment *a, size_t n)
{
	size_t i, j;

	for (i = 0; i < MAX_INCIDENTS; i++) {
		for (j = 0; incidents[i].iface[0] && j < n; j++)
			if (!strcmp(a[j].iface, incidents[i].iface) && if_nametoindex(a[j].iface))
				break;
		if (j == n)
			incidents[i].iface[0] = '\0';
	}
}

void sagent_check_all(struct sagent *ag)
{
	struct sxdp_attachment *a;
	char fail[256];
	size_t n, i;

	if (attachments_here(ag, &a, &n))
		return;
	forget_unchecked(a, n);
	for (i = 0; i < n; i++) {
		/* Not there: netlink brings it when it comes. */
		if (!if_nametoindex(a[i].iface))
			continue;
		fail[0] = '\0';
		restore_one(ag, &a[i], false, fail, sizeof(fail));
		incident(ag, a[i].iface, fail);
	}
	free(a);
}

/* @ifname's attachment in this namespace: 0, or 1 if none is recorded. */
static int recorded(struct sagent *ag, const char *ifname, struct sxdp_attachment *rec)
{
	char err[512] = "";
	int ret;

	ret = sxdp_store_attach_get(ag->store, sxdp_netns(), ifname, rec, err, sizeof(err));
	if (ret == -ENOENT)
		return 1;
	if (ret) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "%s: reading its attachment: %s", ifname,
			   err[0] ? err : strerror(-ret));
	}
	return ret;
}

void sagent_link_up(struct sagent *ag, const char *ifname)
{
	struct sxdp_attachment rec;
	int ifindex = if_nametoindex(ifname);

	/*
	 * Link events come for every change of state (up, down, MTU): an
	 * interface whose link already runs on it needs nothing.
	 */
	if (!ifindex)
		return;
	if (sxdp_linked_ifindex(ifname) != ifindex && !recorded(ag, ifname, &rec))
		restore_one(ag, &rec, false, NULL, 0);
	/* Declared in sieve.conf and not recorded so: attached now (declared.c). */
	sagent_attach_declared(ag, ifname);
}

void sagent_link_gone(struct sagent *ag, const char *ifname)
{
	struct sxdp_attachment rec;
	int ret;

	if (recorded(ag, ifname, &rec))
		return;
	ret = sxdp_unpin(ifname);
	if (ret < 0) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "%s: gone; removing its pins: %s", ifname, strerror(-ret));
	} else if (!ret) {
		sagent_log(SAGENT_INFO, "%s: gone; its pins are removed, its attachment (list %s) "
			   "stays for when it comes back", ifname, rec.list);
	}
}

struct pruned {
	struct sagent *ag;
	unsigned int n, failed;
};

/* Each failure is its own line: one does not stop the others (prune.c). */
static void log_pruned(const struct sxdp_removed *r, void *arg)
{
	struct pruned *p = arg;

	if (r->error) {
		p->failed++;
		atomic_fetch_add(&p->ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "pruning the pins of namespaces that are gone: %s",
			   r->error);
		return;
	}
	p->n++;
	sagent_log(SAGENT_INFO, "%s (netns %llu): pruned its pins, %s%s", r->iface,
		   (unsigned long long)r->netns, r->why,
		   r->record ? "; its attachment removed from the store" : "");
}

/*
 * Before the restore: pins and records of namespaces that are gone, or
 * whose inode another namespace has now, are not this namespace's to
 * adopt (userspace/xdp/prune.c).
 */
void sagent_prune(struct sagent *ag)
{
	struct pruned p = { .ag = ag };
	char err[512] = "";
	int ret = sxdp_prune(ag->store, log_pruned, &p, err, sizeof(err));

	if (ret == -EPERM)
		return;	/* not root: nothing it could attach either */
	if (ret && !p.failed) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "pruning the pins of namespaces that are gone: %s",
			   err[0] ? err : strerror(-ret));
	}
}
