// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching and detaching the blocklist. The program hangs off a bpf_link
 * pinned as SIEVE_XDP_PIN_ROOT/NETNS/IFACE/link, so it outlives the CLI run that
 * attached it, and another XDP program on the interface is never replaced
 * behind the operator's back (the kernel refuses a link there; --force
 * detaches the other program first). Which list an interface enforces,
 * and how, is recorded in the store (an attachment), so that every
 * change to the list reaches it and the agent can restore it.
 *
 * Upgrades. An interface attached by an older sieve runs the older
 * program until something replaces it; attach (and the agent at start)
 * does, without a moment in which no program runs. The older program is
 * told by its tag (the kernel's hash of its instructions): the one
 * running against the one this sieve just loaded. Maps are never shared
 * across the change, as their layout may differ (config, counters, key
 * digest): the new program gets an instance of its own, built beside the
 * old one in a staging folder (SIEVE_XDP_PIN_ROOT/staging/NETNS/IFACE (bpffs takes no dots))
 * from the store, which is the list of record, with the old counters
 * carried over. Then, holding the interface's lock throughout:
 *
 *   1. the program and the link are pinned in the staging folder too;
 *   2. bpf_link_update() swaps the program the link runs (atomically: a
 *      packet runs one program or the other, each with its own maps);
 *   3. renameat2(RENAME_EXCHANGE) swaps the two folders, so the
 *      interface's path names the new instance;
 *   4. the old instance, now in the staging folder, is unpinned.
 *
 * The filter backend's /dev/sieve filter NAME is not an instance's map:
 * the older program reads it under its own digest until the swap. So the
 * staged instance reads a filter built beside NAME (devfilter.c,
 * sxdp_build_spec.beside), and after the swap, once every run of the
 * older program has ended, NAME is rebuilt by exchange and the program
 * pointed back at it (name_back). Killed in between, the program keeps
 * enforcing through the filter beside until the next rebuild.
 *
 * A command killed anywhere in between leaves a staging folder, which the
 * next one to take the interface's lock (sxdp_lock) resolves by one rule:
 * if the link runs the program pinned there, step 3 is still to be done,
 * so it is; in every other case the staging folder is not in use (built
 * but not swapped in, or the old instance after the exchange) and goes.
 * The e2e suite kills an upgrade at each step through
 * SIEVE_TEST_KILL_UPGRADE=STEP (test_kill_point) and checks just that.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libsieve.h"
#include "ops.h"
#include "xdp.h"
#include "sieve_xdp_v4table.h"
#include "backend.h"
#include "sieve_xdp.skel.h"
#include "sieve_xdp_filter.skel.h"

/*
 * The program of either build: the filter backend's names sieve.ko's
 * kfuncs, so it loads only where the module is (with BTF).
 */
struct instance {
	struct sieve_xdp *plain;
	struct sieve_xdp_filter *filter;
	struct bpf_object *obj;
	int prog_fd;
};

static int instance_open(struct instance *in, bool filter, const char *pin_dir)
{
	LIBBPF_OPTS(bpf_object_open_opts, oopts, .pin_root_path = pin_dir);

	memset(in, 0, sizeof(*in));
	if (filter) {
		in->filter = sieve_xdp_filter__open_opts(&oopts);
		in->obj = in->filter ? in->filter->obj : NULL;
	} else {
		in->plain = sieve_xdp__open_opts(&oopts);
		in->obj = in->plain ? in->plain->obj : NULL;
	}
	return in->obj ? 0 : -errno;
}

static int instance_load(struct instance *in)
{
	int ret = bpf_object__load(in->obj);

	if (!ret)
		in->prog_fd = bpf_program__fd(bpf_object__find_program_by_name(in->obj,
									       SIEVE_XDP_PROG));
	return ret;
}

static void instance_close(struct instance *in)
{
	sieve_xdp__destroy(in->plain);
	sieve_xdp_filter__destroy(in->filter);
	memset(in, 0, sizeof(*in));
}

static void iface_path(char *buf, size_t len, const char *ifname, const char *name)
{
	char dir[128];	/* root, netns-INODE and IFNAMSIZ: under 80 bytes */

	sxdp_pin_dir(dir, sizeof(dir), ifname);
	snprintf(buf, len, "%s/%s", dir, name);
}

/*
 * Removes every pin of an interface; 1 if there was none.
 * The folder goes too unless @keep_dir: it is the lock an attach holds.
 */
static int remove_pins(const char *ifname, bool keep_dir)
{
	static const char *const names[] = {
		SIEVE_XDP_LINK_PIN, SIEVE_XDP_MAP_ACTIVE, SIEVE_XDP_MAP_CFG,
		SIEVE_XDP_MAP_BLOOM, SIEVE_XDP_MAP_EXACT, SIEVE_XDP_MAP_STATS,
		SIEVE_XDP_MAP_ALLOW, SIEVE_XDP_MAP_ALLOW_NONE,
		SIEVE_XDP_MAP_BLOCKED, SIEVE_XDP_MAP_REMOVED, SIEVE_XDP_MAP_V4TOP,
		SIEVE_XDP_MAP_V4CHUNK, SIEVE_XDP_MAP_V4HOST, SIEVE_XDP_MAP_SAMPLES,
		SIEVE_XDP_MAP_SAMPLE_CFG, SIEVE_XDP_MAP_ORIGINS, SXDP_PROG_PIN, SXDP_NETNS_PIN,
	};
	char path[256];
	size_t i;
	int found = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		iface_path(path, sizeof(path), ifname, names[i]);
		found |= !unlink(path);
	}
	sxdp_pin_dir(path, sizeof(path), ifname);
	if (!keep_dir)
		found |= !rmdir(path);
	return found ? 0 : 1;
}

int sxdp_link_ifindex_in(const char *dir)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd = sxdp_pin_get(dir, SIEVE_XDP_LINK_PIN), ifindex = 0;

	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_XDP)
		ifindex = info.xdp.ifindex;
	close(fd);
	return ifindex;
}

int sxdp_linked_ifindex(const char *ifname)
{
	char dir[256];

	if (!sxdp_ifname_ok(ifname))
		return 0;
	sxdp_pin_dir(dir, sizeof(dir), ifname);
	return sxdp_link_ifindex_in(dir);
}

int sxdp_detach(struct sxdp_store *s, const char *ifname, char *err, size_t errlen)
{
	char path[256];
	int fd, lock_fd, ret;

	if (geteuid())
		return -EPERM;
	if (!sxdp_ifname_ok(ifname))
		return snprintf(err, errlen, "not an interface name (" SXDP_IFNAME_RULE ")"), -EINVAL;
	lock_fd = sxdp_lock(ifname, false);
	if (lock_fd == -ENOENT) {
		/* Not running; a record of it would bring it back at boot. */
		ret = sxdp_store_attach_del(s, sxdp_netns(), ifname, err, errlen);
		return ret ? ret : 1;
	}
	if (lock_fd < 0)
		return lock_fd;
	/* Detach now: dropping the last reference would do it later, in a work item. */
	iface_path(path, sizeof(path), ifname, SIEVE_XDP_LINK_PIN);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		bpf_link_detach(fd);
		close(fd);
	}
	/* The folder goes while locked: waiters see it gone and give up. */
	ret = remove_pins(ifname, false);
	/* After the pins: a command killed in between leaves a record, not an orphan program. */
	fd = sxdp_store_attach_del(s, sxdp_netns(), ifname, err, errlen);
	sxdp_unlock(lock_fd);
	sxdp_tidy_netns(sxdp_netns());
	return fd ? fd : ret;
}

int sxdp_unpin(const char *ifname)
{
	int lock_fd, linked, ret = 1;

	lock_fd = sxdp_lock(ifname, false);
	if (lock_fd == -ENOENT)
		return 1;
	if (lock_fd < 0)
		return lock_fd;
	/* Checked under the lock: an interface back (and re-attached) meanwhile keeps its pins. */
	linked = sxdp_linked_ifindex(ifname);
	if (!linked || linked != (int)if_nametoindex(ifname))
		ret = remove_pins(ifname, false);
	sxdp_unlock(lock_fd);
	sxdp_tidy_netns(sxdp_netns());
	return ret;
}

static const char *mode_name(uint32_t xdp_flags)
{
	return xdp_flags & XDP_FLAGS_SKB_MODE ? "generic" : "native";
}

/* Another program on the interface: refused, or detached with --force. */
static int clear_other(int ifindex, const struct sxdp_attach_opts *o, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	uint32_t flags;

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0;
	if (q.attach_mode == XDP_ATTACHED_NONE)
		return 0;
	if (!o->force) {
		snprintf(err, errlen, "another XDP program (id %u) is attached: --force replaces it",
			 q.prog_id ? q.prog_id : q.skb_prog_id ? q.skb_prog_id : q.drv_prog_id);
		return -EBUSY;
	}
	flags = q.attach_mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE :
		q.attach_mode == XDP_ATTACHED_DRV ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_HW_MODE;
	if (bpf_xdp_detach(ifindex, flags, NULL)) {
		snprintf(err, errlen, "detaching the other XDP program: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* The settings a new generation is built with. */
static struct sxdp_iface_params params_of(const struct sxdp_attach_opts *o)
{
	return (struct sxdp_iface_params){
		.flags = o->cfg_flags, .fpp_ppb = o->fpp_ppb, .capacity = o->capacity,
		.max_probes = o->max_probes, .filter = o->filter,
	};
}

/* Loads a fresh instance with its maps pinned, builds its first generation from the store. */
static int load_instance(struct sxdp_store *s, const char *ifname, const char *list,
			 const struct sxdp_attach_opts *o, struct instance *in, char *err,
			 size_t errlen)
{
	struct sxdp_iface_params p = params_of(o);
	bool filter = sxdp_backend_of(o->cfg_flags)->kfunc_prog;
	struct sxdp_handle h;
	char dir[256];
	int ret;

	sxdp_pin_dir(dir, sizeof(dir), ifname);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "creating %s: %s", dir, strerror(errno));
		return -errno;
	}
	ret = instance_open(in, filter, dir);
	if (ret) {
		snprintf(err, errlen, "opening the BPF object: %s", strerror(-ret));
		return ret;
	}
	ret = instance_load(in);
	if (ret) {
		snprintf(err, errlen, "loading the BPF program: %s%s", strerror(-ret),
			 filter ? " (the filter backend needs sieve.ko, built with BTF)" : "");
		return ret;
	}
	ret = sxdp_open(ifname, &h);
	if (ret) {
		snprintf(err, errlen, "opening the pinned maps: %s", strerror(-ret));
		return ret;
	}
	ret = sxdp_build_from_store(&h, s, list, &p, NULL, err, errlen);
	sxdp_close(&h);
	return ret;
}

static int link_prog(int prog_fd, const char *ifname, int ifindex, uint32_t xdp_flags,
		     char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .flags = xdp_flags);
	char path[256];
	int fd, ret = 0;

	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &lopts);
	if (fd < 0) {
		ret = -errno;
		if (ret == -EBUSY || ret == -EEXIST)
			snprintf(err, errlen, "another XDP program is attached to %s: --force replaces it",
				 ifname);
		else
			snprintf(err, errlen, "attaching in %s mode: %s", mode_name(xdp_flags),
				 strerror(-ret));
		return ret;
	}
	iface_path(path, sizeof(path), ifname, SIEVE_XDP_LINK_PIN);
	if (bpf_obj_pin(fd, path)) {
		ret = -errno;
		snprintf(err, errlen, "pinning the link at %s: %s", path, strerror(-ret));
		bpf_link_detach(fd);
	}
	close(fd);
	return ret;
}

/*
 * Dry run on or off, live: no rebuild for it (@cfg then says it is so).
 * Any other change still rebuilds, with the new flags, as ever. The
 * record follows (record()); going back to enforcing, the record goes
 * first, so that a kill in between never leaves a record that a restore
 * at boot would bring back as a dry run.
 */
static int switch_dry_run(struct sxdp_store *s, struct sxdp_handle *h,
			  struct sieve_xdp_config *cfg, uint32_t flags, char *err, size_t errlen)
{
	bool on = flags & SIEVE_XDP_F_DRY_RUN;
	struct sxdp_attachment rec;
	int ret;

	if (!((cfg->flags ^ flags) & SIEVE_XDP_F_DRY_RUN))
		return 0;
	if (!on && !sxdp_store_attach_get(s, h->netns, h->ifname, &rec, NULL, 0)) {
		rec.flags &= ~SIEVE_XDP_F_DRY_RUN;
		ret = sxdp_store_attach_set(s, &rec, err, errlen);
		if (ret)
			return ret;
	}
	ret = sxdp_set_dry_run(h, on);
	if (ret)
		return snprintf(err, errlen, "switching the dry run %s: %s", on ? "on" : "off",
				ret == -EOPNOTSUPP ? "an older sieve's program runs" :
				strerror(-ret)), ret;
	cfg->flags ^= SIEVE_XDP_F_DRY_RUN;
	return 0;
}

/*
 * Already attached: the mode must match; settings given are applied, and
 * a new list (or the maps behind the store) rebuilds.
 */
static int reattach(struct sxdp_store *s, const char *ifname, const char *list,
		    const struct sxdp_attach_opts *o, char *err, size_t errlen)
{
	struct sxdp_attachment rec;
	struct sieve_xdp_config cfg;
	struct sxdp_iface_params p;
	struct sxdp_handle h;
	bool rebuilt;
	const char *mode;
	int ret = sxdp_open(ifname, &h);

	if (ret) {
		snprintf(err, errlen, "opening the pinned maps: %s", strerror(-ret));
		return ret;
	}
	mode = sxdp_mode(&h);
	if (o->xdp_flags && strcmp(mode, mode_name(o->xdp_flags))) {
		snprintf(err, errlen, "%s is attached in %s mode: detach first", ifname, mode);
		ret = -EEXIST;
		goto out;
	}
	ret = sxdp_read_config(&h, &cfg, NULL);
	if (ret) {
		snprintf(err, errlen, "reading the config: %s", strerror(-ret));
		goto out;
	}
	p = (struct sxdp_iface_params){
		.flags = (cfg.flags & ~o->cfg_given) | (o->cfg_flags & o->cfg_given),
		.fpp_ppb = o->fpp_given ? o->fpp_ppb : cfg.fpp_ppb,
		.capacity = cfg.capacity,
		.max_probes = o->max_probes ? o->max_probes : sxdp_max_probes(&cfg),
		.filter = o->filter,
	};
	if (sxdp_backend_of(p.flags)->named && !p.filter &&
	    !sxdp_store_attach_get(s, h.netns, ifname, &rec, NULL, 0))
		p.filter = sxdp_backend_filter(rec.backend);
	/* The two builds of the program are two programs: no swap between them. */
	if (sxdp_backend_of(cfg.flags)->kfunc_prog != sxdp_backend_of(p.flags)->kfunc_prog) {
		snprintf(err, errlen, "%s runs the %s backend: detach first to change to or from the filter backend",
			 ifname, sxdp_backend_name(cfg.flags));
		ret = -EEXIST;
		goto out;
	}
	ret = switch_dry_run(s, &h, &cfg, p.flags, err, errlen);
	if (ret)
		goto out;
	/* No record (a store that was moved or lost): built anew from the list. */
	if (sxdp_store_attach_get(s, h.netns, ifname, &rec, NULL, 0) || strcmp(rec.list, list) ||
	    cfg.flags != p.flags || cfg.fpp_ppb != p.fpp_ppb || sxdp_max_probes(&cfg) != p.max_probes ||
	    (p.filter && strcmp(p.filter, sxdp_backend_filter(rec.backend) ?: "")))
		ret = sxdp_build_from_store(&h, s, list, &p, NULL, err, errlen);
	else
		ret = sxdp_iface_sync(&h, s, list, &rebuilt, err, errlen);
out:
	sxdp_close(&h);
	return ret;
}

/* A new instance, linked in the mode asked for (or the best there is). */
static int attach_new(struct sxdp_store *s, const char *ifname, int ifindex, const char *list,
		      const struct sxdp_attach_opts *o, char *err, size_t errlen)
{
	struct instance in = { 0 };
	int ret;

	remove_pins(ifname, true);	/* left by an interface that went away */
	ret = clear_other(ifindex, o, err, errlen);
	if (!ret)
		ret = load_instance(s, ifname, list, o, &in, err, errlen);
	if (!ret && o->xdp_flags)
		ret = link_prog(in.prog_fd, ifname, ifindex, o->xdp_flags, err, errlen);
	else if (!ret) {
		/* No mode asked: native where the driver has it, else generic. */
		ret = link_prog(in.prog_fd, ifname, ifindex, XDP_FLAGS_DRV_MODE, err, errlen);
		if (ret == -EOPNOTSUPP || ret == -EINVAL)
			ret = link_prog(in.prog_fd, ifname, ifindex, XDP_FLAGS_SKB_MODE, err,
					errlen);
	}
	instance_close(&in);
	return ret;
}

/*
 * Records the attachment, then catches up with changes to the list made
 * between the build and the record (they could not know this interface).
 */
static int record(struct sxdp_store *s, const char *ifname, const char *list,
		  const struct sxdp_attach_opts *o, char *err, size_t errlen)
{
	struct sxdp_attachment a = { .netns = sxdp_netns() };
	struct sieve_xdp_config cfg;
	struct sxdp_handle h;
	bool rebuilt;
	int ret = sxdp_open(ifname, &h);

	if (ret) {
		snprintf(err, errlen, "opening the pinned maps: %s", strerror(-ret));
		return ret;
	}
	ret = sxdp_read_config(&h, &cfg, NULL);
	snprintf(a.iface, sizeof(a.iface), "%s", ifname);
	snprintf(a.list, sizeof(a.list), "%s", list);
	/* The mode it runs in, so that a restore gets the same one. */
	snprintf(a.mode, sizeof(a.mode), "%s", sxdp_mode(&h));
	snprintf(a.backend, sizeof(a.backend), "%s", sxdp_backend_name(cfg.flags));
	if (!ret && sxdp_backend_of(cfg.flags)->named) {
		char name[SIEVE_NAME_MAX] = "";

		ret = sxdp_filter_name_of(cfg.filter.id, name, sizeof(name));
		snprintf(a.backend, sizeof(a.backend), SXDP_FILTER_PREFIX "%s", name);
		if (ret)
			snprintf(err, errlen, "the live filter (id %u): %s", cfg.filter.id,
				 strerror(-ret));
	}
	a.flags = cfg.flags;
	a.fpp_ppb = cfg.fpp_ppb;
	a.capacity = cfg.capacity;
	a.max_probes = cfg.max_probes;
	if (!ret)
		ret = sxdp_store_attach_set(s, &a, err, errlen);
	if (!ret)
		ret = sxdp_iface_sync(&h, s, list, &rebuilt, err, errlen);
	sxdp_close(&h);
	return ret;
}

/*
 * The filter backend takes a filter no other interface enforces: each
 * interface's filter holds its own copy of each entry's keys (live adds
 * and deletes per interface), and it has no exact map yet.
 */
static int filter_usable(struct sxdp_store *s, const char *ifname,
			 const struct sxdp_attach_opts *o, char *err, size_t errlen)
{
	struct sxdp_attachment *a;
	const char *name;
	size_t n, i;
	int ret;

	if (!sxdp_backend_of(o->cfg_flags)->named)
		return 0;
	if (o->cfg_flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY))
		return snprintf(err, errlen, "the filter backend has no exact confirmation: drop --exact"),
		       -EINVAL;
	if (!o->filter)
		return 0;	/* the one of record */
	ret = sxdp_store_attachments(s, NULL, &a, &n, err, errlen);
	for (i = 0; !ret && i < n; i++) {
		name = sxdp_backend_filter(a[i].backend);
		if (name && !strcmp(name, o->filter) &&
		    (a[i].netns != sxdp_netns() || strcmp(a[i].iface, ifname))) {
			snprintf(err, errlen, "filter %s is the blocklist of %s already: one interface a filter",
				 o->filter, a[i].iface);
			ret = -EBUSY;
		}
	}
	if (!ret || ret == -EBUSY)
		free(a);
	return ret;
}

/*
 * Attaches of the filter backend, one at a time on this host (an flock on
 * the pin root, taken after the interface's lock): two interfaces cannot
 * both find a filter free and take it.
 */
static int lock_filters(char *err, size_t errlen)
{
	int fd = open(SIEVE_XDP_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;

	while (fd >= 0 && (ret = flock(fd, LOCK_EX)) && errno == EINTR)
		;
	if (fd >= 0 && !ret)
		return fd;
	ret = -errno;
	snprintf(err, errlen, "locking %s: %s", SIEVE_XDP_PIN_ROOT, strerror(-ret));
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * Pins of another namespace that had this one's inode number (prune.c):
 * never adopted. They go, and so does the record they leave in the store.
 */
static int disown_foreign(struct sxdp_store *s, const char *ifname, char *err, size_t errlen)
{
	char dir[256];
	int fd;

	sxdp_pin_dir(dir, sizeof(dir), ifname);
	if (!sxdp_netns_foreign(dir))
		return 0;
	/* Off now: the last reference would take it off later, in a work item. */
	fd = sxdp_pin_get(dir, SIEVE_XDP_LINK_PIN);
	if (fd >= 0) {
		bpf_link_detach(fd);
		close(fd);
	}
	remove_pins(ifname, true);
	return sxdp_store_attach_del(s, sxdp_netns(), ifname, err, errlen);
}

/* The namespace's identity beside the pins; without it, prune goes by the link alone. */
static void mark_netns(const char *ifname)
{
	char dir[256];
	int ret;

	sxdp_pin_dir(dir, sizeof(dir), ifname);
	ret = sxdp_netns_mark(dir);
	if (ret)
		fprintf(stderr, "%s: recording its namespace's identity: %s\n", ifname,
			strerror(-ret));
}

/*
 * The sample settings given; a new instance samples at the default rate
 * unless told otherwise, one attached keeps its own (an upgrade carried
 * them over: carry_samples).
 */
static int attach_samples(const char *ifname, const struct sxdp_attach_opts *o, bool already,
			  char *err, size_t errlen)
{
	struct sxdp_sample_change ch = o->sample;
	char dir[256];
	int ret;

	if (!already && !ch.rate_given) {
		ch.rate_given = true;
		ch.rate = SIEVE_XDP_SAMPLE_RATE_DEFAULT;
	}
	sxdp_pin_dir(dir, sizeof(dir), ifname);
	ret = sxdp_sample_apply(dir, &ch);
	if (ret)
		snprintf(err, errlen, "the sample settings: %s", strerror(-ret));
	return ret;
}

static int attach_locked(struct sxdp_store *s, const char *ifname, int ifindex,
			 const struct sxdp_attach_opts *o, int *lock_fd, char *err, size_t errlen)
{
	struct sxdp_attachment rec;
	const char *list = o->list;
	bool already;
	int ret, filters_fd = -1, upgraded = 0;

	ret = disown_foreign(s, ifname, err, errlen);
	if (ret)
		return ret;
	already = sxdp_linked_ifindex(ifname) == ifindex;

	if (sxdp_backend_of(o->cfg_flags)->named) {
		filters_fd = lock_filters(err, errlen);
		if (filters_fd < 0)
			return filters_fd;
	}
	ret = filter_usable(s, ifname, o, err, errlen);
	if (ret)
		goto out;

	/* Again without --list: the list it enforces stays. */
	if (!list)
		list = already && !sxdp_store_attach_get(s, sxdp_netns(), ifname, &rec, NULL, 0) ?
		       rec.list : SXDP_DEFAULT_LIST;
	/* An older program first: the settings given then apply to the new one. */
	if (already) {
		upgraded = sxdp_upgrade_locked(s, ifname, list, o, lock_fd, err, errlen);
		ret = upgraded < 0 ? upgraded : 0;
	}
	if (already && !ret)
		ret = reattach(s, ifname, list, o, err, errlen);
	else if (!already)
		ret = attach_new(s, ifname, ifindex, list, o, err, errlen);
	if (!ret)
		ret = attach_samples(ifname, o, already, err, errlen);
	if (!ret)
		ret = record(s, ifname, list, o, err, errlen);
	if (!ret)
		mark_netns(ifname);
	if (ret && !already)
		remove_pins(ifname, false);
out:
	sxdp_unlock(filters_fd);
	return ret ? ret : upgraded ? SXDP_UPGRADED : already ? SXDP_ALREADY : SXDP_ATTACHED;
}

int sxdp_attach(struct sxdp_store *s, const char *ifname, const struct sxdp_attach_opts *o,
		char *err, size_t errlen)
{
	int ifindex, ret, lock_fd;

	if (geteuid())
		return snprintf(err, errlen, "attaching XDP programs needs root"), -EPERM;
	if (o->list && !sxdp_list_name_ok(o->list))
		return snprintf(err, errlen, "%s: not a list name (1-%d of A-Z a-z 0-9 _ . -)",
				o->list, SXDP_LIST_NAME_MAX), -EINVAL;
	if (!sxdp_ifname_ok(ifname))
		return snprintf(err, errlen, "not an interface name (" SXDP_IFNAME_RULE ")"), -EINVAL;
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return snprintf(err, errlen, "no such interface: %s", ifname), -ENODEV;
	ret = sxdp_ensure_bpffs();
	if (ret == -EXDEV)
		return snprintf(err, errlen, "no bpffs at /sys/fs/bpf in this mount namespace (ip netns exec hides it): use nsenter --net=/run/netns/NAME"), ret;
	if (ret)
		return snprintf(err, errlen, "mounting bpffs: %s", strerror(-ret)), ret;
	lock_fd = sxdp_lock(ifname, true);
	if (lock_fd < 0) {
		sxdp_tidy_netns(sxdp_netns());
		return snprintf(err, errlen, "taking the lock of %s: %s", ifname,
				strerror(-lock_fd)), lock_fd;
	}
	ret = attach_locked(s, ifname, ifindex, o, &lock_fd, err, errlen);
	sxdp_unlock(lock_fd);
	if (ret < 0)
		sxdp_tidy_netns(sxdp_netns());
	return ret;
}

int sxdp_list_ifaces(char names[][IF_NAMESIZE], int max)
{
	struct dirent *e;
	char root[256];
	int n = 0;
	DIR *d;

	sxdp_pin_dir(root, sizeof(root), NULL);
	d = opendir(root);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) && n < max) {
		if (strlen(e->d_name) >= IF_NAMESIZE || !sxdp_ifname_ok(e->d_name))
			continue;
		snprintf(names[n++], IF_NAMESIZE, "%s", e->d_name);
	}
	closedir(d);
	return n;
}

/* ---- upgrades: see the top of this file ---- */

/* A kill -9 at @step when the environment asks for one: the e2e suite's. */
static void test_kill_point(const char *step)
{
	sxdp_test_kill("SIEVE_TEST_KILL_UPGRADE", step);
}

static int prog_tag(int fd, char out[17])
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	sxdp_tag_hex(info.tag, out);
	return 0;
}

/*
 * The old instance's counters into the new one's, CPU by CPU (an older
 * map may hold fewer). Packets the old program counts between this copy
 * and the swap, a few milliseconds, are not carried.
 */
static int carry_counters(int old_fd, int new_fd)
{
	int ncpus = libbpf_num_possible_cpus(), ret;
	struct sieve_xdp_stats *per;
	uint32_t zero = 0;

	if (ncpus < 0)
		return ncpus;
	per = calloc(ncpus, sizeof(*per));
	if (!per)
		return -ENOMEM;
	ret = sxdp_read_stats_percpu(old_fd, per, ncpus);
	if (!ret && bpf_map_update_elem(new_fd, &zero, per, BPF_ANY))
		ret = -errno;
	free(per);
	return ret;
}

/* Who does what of an upgrade. */
struct upgrade {
	char dir[256], staged[256];
	int link_fd, old_prog_fd, stats_fd;
	int lock_fd;			/* the staging folder's */
	char old_tag[17], new_tag[17];
	struct instance in;
};

/*
 * The settings the new instance is built with: the record's, as the
 * store is the truth (the old maps' config may have another layout);
 * with no record, those attach was given.
 */
static struct sxdp_iface_params upgrade_params(struct sxdp_store *s, const char *ifname,
					       const struct sxdp_attach_opts *o,
					       struct sxdp_attachment *rec)
{
	if (sxdp_store_attach_get(s, sxdp_netns(), ifname, rec, NULL, 0))
		return params_of(o);
	return (struct sxdp_iface_params){
		.flags = rec->flags, .fpp_ppb = rec->fpp_ppb, .capacity = rec->capacity,
		.max_probes = rec->max_probes, .filter = sxdp_backend_filter(rec->backend),
	};
}

/* A fresh staging folder, locked, and the new program loaded with its maps pinned there. */
static int stage(struct upgrade *u, bool filter, char *err, size_t errlen)
{
	char parent[256];
	int ret;

	sxdp_staging_dir(parent, sizeof(parent), sxdp_netns(), NULL);
	ret = sxdp_mkdir_p(parent);
	if (ret) {
		snprintf(err, errlen, "creating %s: %s", parent, strerror(-ret));
		return ret;
	}
	sxdp_remove_staged(u->staged);	/* sxdp_lock resolved any; this is a leftover */
	if (mkdir(u->staged, 0700)) {
		snprintf(err, errlen, "creating %s: %s", u->staged, strerror(errno));
		return -errno;
	}
	u->lock_fd = open(u->staged, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (u->lock_fd < 0 || flock(u->lock_fd, LOCK_EX)) {
		snprintf(err, errlen, "locking %s: %s", u->staged, strerror(errno));
		return -errno;
	}
	/* The folder becomes the interface's: it carries the namespace's identity. */
	sxdp_netns_mark(u->staged);
	ret = instance_open(&u->in, filter, u->staged);
	if (ret) {
		snprintf(err, errlen, "opening the BPF object: %s", strerror(-ret));
		return ret;
	}
	ret = instance_load(&u->in);
	if (ret) {
		snprintf(err, errlen, "loading the BPF program: %s", strerror(-ret));
		return ret;
	}
	return prog_tag(u->in.prog_fd, u->new_tag);
}

/*
 * The old instance's sample settings into the new one's; an older
 * program had none: the default rate, as for a new attach.
 */
static void carry_samples(struct upgrade *u, const char *ifname)
{
	struct sieve_xdp_sample_cfg c = { .rate = SIEVE_XDP_SAMPLE_RATE_DEFAULT };
	int ret = sxdp_sample_cfg_get(u->dir, &c);

	if (ret && ret != -EOPNOTSUPP)
		c = (struct sieve_xdp_sample_cfg){ .rate = SIEVE_XDP_SAMPLE_RATE_DEFAULT };
	if (sxdp_sample_cfg_put(u->staged, &c))
		fprintf(stderr, "%s: the sample settings could not be carried over\n", ifname);
}

/* The new instance's first generation, from the store, and the old counters. */
static int fill_staged(struct upgrade *u, struct sxdp_store *s, const char *ifname,
		       const char *list, const struct sxdp_iface_params *p, char *err,
		       size_t errlen)
{
	struct sxdp_handle h;
	int ret = sxdp_open_dir(u->staged, sxdp_netns(), ifname, &h), origins_fd;

	if (ret) {
		snprintf(err, errlen, "opening the new instance's maps: %s", strerror(-ret));
		return ret;
	}
	ret = sxdp_build_from_store(&h, s, list, p, NULL, err, errlen);
	if (!ret && u->stats_fd >= 0 && carry_counters(u->stats_fd, h.stats_fd))
		fprintf(stderr, "%s: the old counters could not be carried over\n", ifname);
	if (!ret)
		carry_samples(u, ifname);
	/* An older program's instance has none: nothing to carry. */
	origins_fd = sxdp_pin_get(u->dir, SIEVE_XDP_MAP_ORIGINS);
	if (!ret && origins_fd >= 0 && h.origins_fd >= 0 &&
	    sxdp_carry_origin_drops(origins_fd, h.origins_fd))
		fprintf(stderr, "%s: the old drops per origin could not be carried over\n", ifname);
	if (origins_fd >= 0)
		close(origins_fd);
	sxdp_close(&h);
	return ret;
}

/* Steps 1-4 (the top of this file). */
static int swap_in(struct upgrade *u, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_link_update_opts, lopts, .flags = BPF_F_REPLACE,
		    .old_prog_fd = u->old_prog_fd);
	char path[320];

	test_kill_point("staged");
	snprintf(path, sizeof(path), "%s/%s", u->staged, SXDP_PROG_PIN);
	if (bpf_obj_pin(u->in.prog_fd, path))
		return snprintf(err, errlen, "pinning the new program: %s", strerror(errno)), -errno;
	snprintf(path, sizeof(path), "%s/%s", u->staged, SIEVE_XDP_LINK_PIN);
	if (bpf_obj_pin(u->link_fd, path))
		return snprintf(err, errlen, "pinning the link: %s", strerror(errno)), -errno;
	test_kill_point("pinned");
	if (bpf_link_update(u->link_fd, u->in.prog_fd, &lopts))
		return snprintf(err, errlen, "replacing the program: %s", strerror(errno)), -errno;
	test_kill_point("updated");
	if (renameat2(AT_FDCWD, u->staged, AT_FDCWD, u->dir, RENAME_EXCHANGE)) {
		int ret = -errno;
		LIBBPF_OPTS(bpf_link_update_opts, back, .flags = BPF_F_REPLACE,
			    .old_prog_fd = u->in.prog_fd);

		/* The new program cannot be found by its pins: the old one back. */
		bpf_link_update(u->link_fd, u->old_prog_fd, &back);
		snprintf(err, errlen, "moving the new instance into place: %s", strerror(-ret));
		return ret;
	}
	test_kill_point("exchanged");
	sxdp_remove_staged(u->staged);
	return 0;
}

/*
 * Waits for every run of the older program that began before the swap:
 * membarrier's global command is a synchronize_rcu(), and XDP runs in an
 * RCU read-side section. Where it is refused (nohz_full), a pause far
 * longer than one run of the program.
 */
static void older_runs_done(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(100 * 1000);
}

/*
 * The filter backend, after the swap: the new program reads the filter
 * built beside NAME (fill_staged). Once the older program is done, NAME
 * is rebuilt under the new digest by exchange and the program pointed
 * back at it, and the filter beside goes (devfilter.c). Should that fail,
 * the program keeps enforcing the whole list through the filter beside,
 * and the next rebuild moves it back: a warning, not a failed upgrade.
 */
static void name_back(struct sxdp_store *s, const char *ifname, const char *list,
		      const struct sxdp_iface_params *staged)
{
	struct sxdp_iface_params p = *staged;
	struct sxdp_handle h;
	char why[512] = "";
	int ret;

	older_runs_done();
	p.beside = false;
	ret = sxdp_open(ifname, &h);
	if (!ret) {
		ret = sxdp_build_from_store(&h, s, list, &p, NULL, why, sizeof(why));
		sxdp_close(&h);
	}
	if (ret)
		fprintf(stderr, "%s: upgraded, but its filter %s was not rebuilt yet (%s); "
			"the next change does it\n", ifname, p.filter ? p.filter : "",
			why[0] ? why : strerror(-ret));
}

static void upgrade_close(struct upgrade *u, bool keep_lock)
{
	instance_close(&u->in);
	if (u->link_fd >= 0)
		close(u->link_fd);
	if (u->old_prog_fd >= 0)
		close(u->old_prog_fd);
	if (u->stats_fd >= 0)
		close(u->stats_fd);
	if (!keep_lock && u->lock_fd >= 0)
		close(u->lock_fd);
}

int sxdp_upgrade_locked(struct sxdp_store *s, const char *ifname, const char *list,
			const struct sxdp_attach_opts *o, int *lock_fd, char *err, size_t errlen)
{
	struct upgrade u = { .link_fd = -1, .old_prog_fd = -1, .stats_fd = -1, .lock_fd = -1 };
	struct sxdp_attachment rec;
	struct sxdp_iface_params p = upgrade_params(s, ifname, o, &rec);
	int ret;

	sxdp_pin_dir(u.dir, sizeof(u.dir), ifname);
	sxdp_staging_dir(u.staged, sizeof(u.staged), sxdp_netns(), ifname);
	u.link_fd = sxdp_pin_get(u.dir, SIEVE_XDP_LINK_PIN);
	u.old_prog_fd = bpf_prog_get_fd_by_id(sxdp_link_prog_id(u.link_fd));
	if (u.link_fd < 0 || u.old_prog_fd < 0 || prog_tag(u.old_prog_fd, u.old_tag)) {
		ret = -errno;
		snprintf(err, errlen, "reading the running program: %s", strerror(-ret));
		goto out;
	}
	ret = stage(&u, sxdp_backend_of(p.flags)->kfunc_prog, err, errlen);
	if (ret || !strcmp(u.old_tag, u.new_tag))
		goto out;	/* 0: it runs this sieve's program */
	u.stats_fd = sxdp_pin_get(u.dir, SIEVE_XDP_MAP_STATS);
	/* The filter backend: NAME stays the older program's until it no longer runs. */
	p.beside = sxdp_backend_of(p.flags)->named;
	ret = fill_staged(&u, s, ifname, list, &p, err, errlen);
	if (!ret)
		ret = swap_in(&u, err, errlen);
	if (!ret && p.beside)
		name_back(s, ifname, list, &p);
	if (!ret) {
		/* The interface's folder is the staged one now, and so is the lock. */
		sxdp_unlock(*lock_fd);
		*lock_fd = u.lock_fd;
		upgrade_close(&u, true);
		return 1;
	}
out:
	/* Unless the link runs the staged program (a failed step 3): sxdp_lock finishes that. */
	if (!u.in.prog_fd || sxdp_link_prog_id(u.link_fd) != sxdp_prog_id(u.in.prog_fd))
		sxdp_remove_staged(u.staged);
	upgrade_close(&u, false);
	return ret;
}
