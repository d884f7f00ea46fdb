// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP blocklist's loader: attaches the program through a pinned
 * bpf_link, and keeps its maps, pinned under SIEVE_XDP_PIN_ROOT/NETNS/IFACE/,
 * in step with the entry list in SXDP_STATE_DIR/NETNS/IFACE.list (the bloom
 * filter cannot list or delete what it holds).
 *
 * Every change the program sees is a generation swap: the maps and the
 * config go into the idle slot, sieve_active flips, and after an RCU grace
 * period (membarrier) the old slot is emptied. A packet reads sieve_active
 * once, so it sees one whole generation; the grace period makes sure no
 * packet still uses a slot when it is emptied or rewritten.
 *
 * Two changes must never interleave: each reads the live slot and writes
 * the other, and one would free the generation the other just made live,
 * or write the list the other's maps do not hold. So every change holds
 * the interface's lock (sxdp_lock) from its first read to its last write.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <linux/if_link.h>
#include <linux/membarrier.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"
#include "sieve_xdp.skel.h"

#define BPF_FS_MAGIC_	0xcafe4a11

/*
 * Interface names belong to a network namespace; bpffs and /run do not. So
 * the pins and lists of a namespace live in a folder of their own, named
 * after it (its inode), and one name in two namespaces never collides.
 */
static const char *netns_folder(void)
{
	static char name[32];
	struct stat st;

	if (!name[0]) {
		if (stat("/proc/self/ns/net", &st))
			snprintf(name, sizeof(name), "netns-unknown");
		else
			snprintf(name, sizeof(name), "netns-%llu", (unsigned long long)st.st_ino);
	}
	return name;
}

void sxdp_pin_dir(char *buf, size_t len, const char *ifname)
{
	snprintf(buf, len, "%s/%s%s%s", SIEVE_XDP_PIN_ROOT, netns_folder(),
		 ifname ? "/" : "", ifname ? ifname : "");
}

void sxdp_state_path(char *buf, size_t len, const char *ifname)
{
	snprintf(buf, len, "%s/%s%s%s%s", SXDP_STATE_DIR, netns_folder(),
		 ifname ? "/" : "", ifname ? ifname : "", ifname ? ".list" : "");
}

static void pin_path(char *buf, size_t len, const char *ifname, const char *name)
{
	char dir[128];	/* root, netns-INODE and IFNAMSIZ: under 80 bytes */

	sxdp_pin_dir(dir, sizeof(dir), ifname);
	snprintf(buf, len, "%s%s%s", dir, name ? "/" : "", name ? name : "");
}

static int mkdir_p(const char *path)
{
	char buf[256], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0700) && errno != EEXIST ? -errno : 0;
}

/* Whether process pid is known to be in another mount namespace than us. */
static bool other_mount_ns(pid_t pid)
{
	struct stat self, other;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return !stat("/proc/self/ns/mnt", &self) && !stat(path, &other) &&
	       self.st_ino != other.st_ino;
}

/*
 * A mount namespace of our own: init's differs, or, where init's cannot be
 * read, our parent's (`ip netns exec` unshares one and execs us in it).
 */
static bool private_mount_ns(void)
{
	return other_mount_ns(1) || other_mount_ns(getppid());
}

/*
 * Pins need a bpffs at /sys/fs/bpf; minimal systems may not mount one, and
 * then it is mounted here. Not in a private mount namespace, though
 * (`ip netns exec` remounts /sys): pins in a bpffs mounted there would
 * vanish with this process and the program would detach.
 */
int sxdp_ensure_bpffs(void)
{
	struct statfs st;
	char dir[256];

	if (statfs("/sys/fs/bpf", &st))
		return -errno;
	if ((unsigned long)st.f_type != BPF_FS_MAGIC_) {
		if (private_mount_ns())
			return -EXDEV;
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
			return -errno;
	}
	sxdp_pin_dir(dir, sizeof(dir), NULL);
	return mkdir_p(dir);
}

/*
 * Per interface, not per namespace folder: interfaces share nothing, and
 * a long load on one should not hold up blocks on another. bpffs holds no
 * regular files, so the lock is on the pin folder itself (as libxdp's is
 * on its bpffs folder). Detach removes that folder while holding it, so a
 * waiter may wake holding a folder that is gone or was made anew by an
 * attach: it checks that the path still names what it locked, and
 * otherwise tries again.
 */
int sxdp_lock(const char *ifname, bool create)
{
	struct stat held, now;
	char dir[256];
	int fd, tries, err;

	sxdp_pin_dir(dir, sizeof(dir), ifname);
	/* Each retry means a detach came in between: a few are plenty. */
	for (tries = 0; tries < 16; tries++) {
		if (create && mkdir(dir, 0700) && errno != EEXIST)
			return -errno;
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		while ((err = flock(fd, LOCK_EX)) && errno == EINTR)
			;
		if (err) {
			err = -errno;
			close(fd);
			return err;
		}
		if (!fstat(fd, &held) && !stat(dir, &now) && held.st_dev == now.st_dev &&
		    held.st_ino == now.st_ino)
			return fd;
		close(fd);
	}
	return -EAGAIN;
}

void sxdp_unlock(int lock_fd)
{
	if (lock_fd >= 0)
		close(lock_fd);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return getenv("SIEVE_LIBBPF_DEBUG") ? vfprintf(stderr, fmt, ap) : 0;
}

int sxdp_open(const char *ifname, struct sxdp_handle *h)
{
	static const char *const names[] = {
		SIEVE_XDP_MAP_ACTIVE, SIEVE_XDP_MAP_CFG, SIEVE_XDP_MAP_BLOOM,
		SIEVE_XDP_MAP_EXACT, SIEVE_XDP_MAP_STATS,
	};
	int *fds[] = { &h->active_fd, &h->cfg_fd, &h->bloom_fd, &h->exact_fd, &h->stats_fd };
	char path[256];
	size_t i;

	libbpf_set_print(libbpf_quiet);
	memset(h, 0, sizeof(*h));
	snprintf(h->ifname, sizeof(h->ifname), "%s", ifname);
	h->ifindex = if_nametoindex(ifname);
	for (i = 0; i < 5; i++)
		*fds[i] = -1;
	h->blocked_fd = -1;
	for (i = 0; i < 5; i++) {
		pin_path(path, sizeof(path), ifname, names[i]);
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			int err = errno == ENOENT ? -ENOENT : -errno;

			sxdp_close(h);
			return err;
		}
	}
	/* Not there when an older sieve attached: only the blocked backend needs it. */
	pin_path(path, sizeof(path), ifname, SIEVE_XDP_MAP_BLOCKED);
	h->blocked_fd = bpf_obj_get(path);
	h->pinned = true;
	return 0;
}

void sxdp_close(struct sxdp_handle *h)
{
	int *fds[] = { &h->active_fd, &h->cfg_fd, &h->bloom_fd, &h->exact_fd, &h->stats_fd };
	size_t i;

	for (i = 0; i < 5; i++) {
		if (*fds[i] > 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	if (h->blocked_fd > 0)
		close(h->blocked_fd);
	h->blocked_fd = -1;
}

static int read_active(struct sxdp_handle *h, uint32_t *gen)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(h->active_fd, &zero, gen))
		return -errno;
	*gen &= SIEVE_XDP_NR_GENS - 1;
	return 0;
}

int sxdp_read_config(struct sxdp_handle *h, struct sieve_xdp_config *cfg, uint32_t *gen)
{
	uint32_t g;
	int err = read_active(h, &g);

	if (err)
		return err;
	if (gen)
		*gen = g;
	return bpf_map_lookup_elem(h->cfg_fd, &g, cfg) ? -errno : 0;
}

int sxdp_read_stats(struct sxdp_handle *h, struct sieve_xdp_stats *sum)
{
	int ncpus = libbpf_num_possible_cpus(), cpu, i;
	struct sieve_xdp_stats *per;
	uint32_t zero = 0;

	if (ncpus < 0)
		return ncpus;
	per = calloc(ncpus, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(h->stats_fd, &zero, per)) {
		free(per);
		return -errno;
	}
	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < ncpus; cpu++) {
		for (i = 0; i < SIEVE_XDP_NR_COUNTERS; i++) {
			sum->c[i].packets += per[cpu].c[i].packets;
			sum->c[i].bytes += per[cpu].c[i].bytes;
		}
	}
	free(per);
	/* The program saves itself one increment a packet: see sieve_xdp.h. */
	sum->c[SIEVE_XDP_PACKETS] = sum->c[SIEVE_XDP_PASSED];
	for (i = SIEVE_XDP_DROP_SRC; i <= SIEVE_XDP_DROP_MALFORMED; i++) {
		sum->c[SIEVE_XDP_PACKETS].packets += sum->c[i].packets;
		sum->c[SIEVE_XDP_PACKETS].bytes += sum->c[i].bytes;
	}
	return 0;
}

const char *sxdp_mode(struct sxdp_handle *h)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (!h->ifindex || bpf_xdp_query(h->ifindex, 0, &q))
		return "none";
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

/* The inner map in a slot, as a new fd; -ENOENT when the slot is empty. */
static int slot_map_fd(int outer_fd, uint32_t slot)
{
	uint32_t id;
	int fd;

	if (bpf_map_lookup_elem(outer_fd, &slot, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

/* What the kernel charges a map: "memlock:" in its fdinfo. */
static uint64_t map_memlock(int fd)
{
	unsigned long long val = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &val) == 1)
			break;
	fclose(f);
	return val;
}

int sxdp_live_memory(struct sxdp_handle *h, uint64_t *bloom_bytes, uint64_t *exact_bytes)
{
	uint32_t gen;
	int err = read_active(h, &gen), fd;

	if (err)
		return err;
	*bloom_bytes = *exact_bytes = 0;
	fd = slot_map_fd(h->bloom_fd, gen);
	if (fd < 0 && h->blocked_fd >= 0)
		fd = slot_map_fd(h->blocked_fd, gen);
	if (fd >= 0) {
		*bloom_bytes = map_memlock(fd);
		close(fd);
	}
	fd = slot_map_fd(h->exact_fd, gen);
	if (fd >= 0) {
		*exact_bytes = map_memlock(fd);
		close(fd);
	}
	return 0;
}

int sxdp_gen_insert(int bloom_fd, int exact_fd, const struct sieve_xdp_key *keys, size_t n)
{
	enum { CHUNK = 8192 };
	static const uint32_t values[CHUNK];
	size_t i;

	/* Exact first: a bloom hit never waits on a missing confirmation. */
	for (i = 0; exact_fd >= 0 && i < n; i += CHUNK) {
		uint32_t count = n - i < CHUNK ? n - i : CHUNK;

		if (bpf_map_update_batch(exact_fd, keys + i, values, &count, NULL))
			return -errno;
	}
	for (i = 0; bloom_fd >= 0 && i < n; i++) {
		uint64_t digest = sieve_xdp_digest(&keys[i]);

		if (bpf_map_update_elem(bloom_fd, NULL, &digest, BPF_ANY))
			return -errno;
	}
	return 0;
}

int sxdp_gen_create(const struct sxdp_plan *plan, bool exact, const struct sxdp_list *l,
		    int *bloom_fd, int *exact_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, bopts, .map_extra = plan->nr_hashes);
	uint64_t cap = plan->capacity > l->n ? plan->capacity : l->n;
	int err;

	*exact_fd = -1;
	if (plan->blocked)
		*bloom_fd = sxdp_blocked_create(plan);
	else
		*bloom_fd = bpf_map_create(BPF_MAP_TYPE_BLOOM_FILTER, "sieve_bloom_g", 0,
					   sizeof(uint64_t), plan->max_entries, &bopts);
	if (*bloom_fd < 0)
		return plan->blocked ? *bloom_fd : -errno;
	if (exact) {
		if (cap > UINT32_MAX) {
			err = -E2BIG;
			goto out_close_bloom;
		}
		*exact_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "sieve_exact_g",
					   sizeof(struct sieve_xdp_key), sizeof(uint32_t),
					   (uint32_t)cap, NULL);
		if (*exact_fd < 0) {
			err = -errno;
			goto out_close_bloom;
		}
	}
	err = sxdp_filter_insert(plan->blocked ? SIEVE_XDP_F_BLOCKED : 0, plan->nr_hashes, *bloom_fd,
				 *exact_fd, l->keys, l->n, false);
	if (!err)
		return 0;
	if (*exact_fd >= 0)
		close(*exact_fd);
out_close_bloom:
	close(*bloom_fd);
	*bloom_fd = *exact_fd = -1;
	return err;
}

/*
 * Waits until every packet that may have read the old sieve_active is
 * done: XDP runs inside an RCU read-side section, and MEMBARRIER_CMD_GLOBAL
 * is a synchronize_rcu(). Where it is refused (nohz_full), a pause far
 * longer than any program run stands in.
 */
static void wait_for_packets(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(50000);
}

/* Puts a map in an outer slot, or empties the slot for fd -1. */
static int set_slot(int outer_fd, uint32_t slot, int fd)
{
	if (fd >= 0)
		return bpf_map_update_elem(outer_fd, &slot, &fd, BPF_ANY);
	return bpf_map_delete_elem(outer_fd, &slot) && errno != ENOENT ? -1 : 0;
}

static bool slot_in_use(int outer_fd, uint32_t slot)
{
	uint32_t id;

	return !bpf_map_lookup_elem(outer_fd, &slot, &id);
}

/* Empties a slot of sieve_blocked, which a handle may lack (see sxdp_open). */
static int clear_blocked_slot(struct sxdp_handle *h, uint32_t slot)
{
	return h->blocked_fd >= 0 ? set_slot(h->blocked_fd, slot, -1) : 0;
}

int sxdp_swap(struct sxdp_handle *h, const struct sieve_xdp_config *cfg, int bloom_fd,
	      int exact_fd)
{
	struct sieve_xdp_config next = *cfg, cur;
	bool blocked = cfg->flags & SIEVE_XDP_F_BLOCKED;
	uint32_t live, idle, zero = 0;
	int err = sxdp_read_config(h, &cur, &live);

	if (err)
		return err;
	if (blocked && h->blocked_fd < 0)
		return -EOPNOTSUPP;
	idle = !live;
	/*
	 * Maps left in the idle slot mean a swap was cut short (killed) after
	 * its flip, maybe before its grace period: packets may still be in
	 * that slot, so wait before rewriting it.
	 */
	if (slot_in_use(h->bloom_fd, idle) || slot_in_use(h->exact_fd, idle) ||
	    (h->blocked_fd >= 0 && slot_in_use(h->blocked_fd, idle)))
		wait_for_packets();
	next.gen_seq = cur.gen_seq + 1;
	/* The filter goes to its backend's outer map; the other's slot is emptied. */
	if (bpf_map_update_elem(h->cfg_fd, &idle, &next, BPF_ANY) ||
	    set_slot(h->bloom_fd, idle, blocked ? -1 : bloom_fd) ||
	    (blocked ? set_slot(h->blocked_fd, idle, bloom_fd) : clear_blocked_slot(h, idle)) ||
	    set_slot(h->exact_fd, idle, exact_fd))
		return -errno;
	/* The flip: one aligned word, and only its lowest bit changes. */
	if (bpf_map_update_elem(h->active_fd, &zero, &idle, BPF_ANY))
		return -errno;
	wait_for_packets();
	/* Nothing reads the old slot any more: free its maps. */
	bpf_map_delete_elem(h->bloom_fd, &live);
	clear_blocked_slot(h, live);
	bpf_map_delete_elem(h->exact_fd, &live);
	return 0;
}

int sxdp_state_read(const char *ifname, struct sxdp_list *l)
{
	char path[256], err[256];
	int ret;

	sxdp_state_path(path, sizeof(path), ifname);
	ret = sxdp_list_read(path, l, err, sizeof(err));
	return ret == -ENOENT ? 0 : ret;
}

/*
 * The list names the generation that holds it ("# generation N", the
 * live config's gen_seq), and is written before that generation goes
 * live: a change cut short leaves a list ahead of the maps, and the next
 * change (sxdp_sync) sees the numbers differ and rebuilds from the list.
 */
#define STATE_GEN_FMT	"# generation %u"

/*
 * Removes the temporary files of list writers that were killed: the name
 * of the list, a dot and mkstemp's six characters. Only under the lock,
 * where no writer of that list is alive.
 */
static void sweep_temp(const char *ifname)
{
	char dir[256], path[512], prefix[IF_NAMESIZE + 8];
	size_t plen;
	struct dirent *e;
	DIR *d;

	sxdp_state_path(dir, sizeof(dir), NULL);
	plen = snprintf(prefix, sizeof(prefix), "%s.list.", ifname);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strlen(e->d_name) != plen + 6 || strncmp(e->d_name, prefix, plen))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

void sxdp_state_remove(const char *ifname)
{
	char path[256];

	sxdp_state_path(path, sizeof(path), ifname);
	unlink(path);
	sweep_temp(ifname);
}

static int state_write(const char *ifname, const struct sxdp_list *l, uint32_t gen)
{
	char path[256], header[32];
	int err;

	sxdp_state_path(path, sizeof(path), NULL);
	err = mkdir_p(path);
	if (err)
		return err;
	sweep_temp(ifname);
	sxdp_state_path(path, sizeof(path), ifname);
	snprintf(header, sizeof(header), STATE_GEN_FMT, gen);
	return sxdp_list_write(path, l, header);
}

/* The generation a list was written for; -ENODATA if it names none. */
static int state_gen(const char *ifname, uint32_t *gen)
{
	char path[256], line[64];
	int ret = -ENODATA;
	FILE *f;

	sxdp_state_path(path, sizeof(path), ifname);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fgets(line, sizeof(line), f) && sscanf(line, STATE_GEN_FMT, gen) == 1)
		ret = 0;
	fclose(f);
	return ret;
}

/* The list first, for the generation the next swap makes live. */
static int state_write_next(struct sxdp_handle *h, const struct sxdp_list *l, char *err,
			    size_t errlen)
{
	struct sieve_xdp_config cur;
	int ret;

	/* A handle without an interface (tests, benchmarks) keeps no list. */
	if (!h->ifname[0])
		return 0;
	ret = sxdp_read_config(h, &cur, NULL);
	if (!ret)
		ret = state_write(h->ifname, l, cur.gen_seq + 1);
	if (ret) {
		char path[256];

		sxdp_state_path(path, sizeof(path), h->ifname);
		snprintf(err, errlen, "writing %s: %s", path, strerror(-ret));
	}
	return ret;
}

/* Headroom so that a few live adds do not rebuild at once. */
static uint64_t capacity_for(uint64_t n)
{
	uint64_t cap = n + n / 4;

	return cap > SXDP_DEFAULT_CAPACITY ? cap : SXDP_DEFAULT_CAPACITY;
}

int sxdp_rebuild_probes(struct sxdp_handle *h, const struct sxdp_list *l, uint32_t flags,
			uint32_t fpp_ppb, uint64_t capacity, unsigned int max_probes, char *err,
			size_t errlen)
{
	struct sieve_xdp_config cfg = { .flags = flags, .max_probes = max_probes };
	struct sxdp_list keys = { 0 };
	struct sxdp_plan plan;
	int bloom_fd, exact_fd, ret;

	cfg.max_probes = sxdp_max_probes(&cfg);
	ret = sxdp_plan_keys(l, &cfg, &keys, err, errlen);
	if (ret)
		goto out;
	/* Capacity counts keys: an expanded list gets headroom of its own. */
	if (capacity < keys.n)
		capacity = capacity_for(keys.n);
	ret = sxdp_plan_for(flags, capacity, fpp_ppb, &plan);
	if (ret) {
		snprintf(err, errlen, "no %s filter of at most %s holds %llu entries at that rate",
			 sxdp_backend_name(flags),
			 flags & SIEVE_XDP_F_BLOCKED ? "1 GiB" : "2^32 bits",
			 (unsigned long long)capacity);
		goto out;
	}
	cfg.capacity = plan.capacity;
	cfg.max_entries = plan.max_entries;
	cfg.nr_hashes = plan.nr_hashes;
	cfg.fpp_ppb = fpp_ppb;
	ret = sxdp_gen_create(&plan, flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY), &keys,
			      &bloom_fd, &exact_fd);
	if (ret) {
		snprintf(err, errlen, "creating the maps: %s", strerror(-ret));
		goto out;
	}
	ret = state_write_next(h, l, err, errlen);
	if (!ret) {
		ret = sxdp_swap(h, &cfg, bloom_fd, exact_fd);
		if (ret)
			snprintf(err, errlen, "swapping in the new maps: %s", strerror(-ret));
	}
	close(bloom_fd);
	if (exact_fd >= 0)
		close(exact_fd);
out:
	sxdp_list_free(&keys);
	return ret;
}

int sxdp_rebuild(struct sxdp_handle *h, const struct sxdp_list *l, uint32_t flags,
		 uint32_t fpp_ppb, uint64_t capacity, char *err, size_t errlen)
{
	struct sieve_xdp_config cur = { 0 };

	/* The live generation's probe budget (none yet: the default). */
	if (sxdp_read_config(h, &cur, NULL))
		cur.max_probes = 0;
	return sxdp_rebuild_probes(h, l, flags, fpp_ppb, capacity, cur.max_probes, err, errlen);
}

int sxdp_sync(struct sxdp_handle *h, char *err, size_t errlen)
{
	struct sieve_xdp_config cfg;
	struct sxdp_list l = { 0 };
	uint32_t gen;
	int ret;

	/* No list, or one that names no generation (written by hand): as it is. */
	if (!h->ifname[0] || state_gen(h->ifname, &gen))
		return 0;
	ret = sxdp_read_config(h, &cfg, NULL);
	if (ret || cfg.gen_seq == gen)
		return ret;
	ret = sxdp_state_read(h->ifname, &l);
	if (!ret)
		ret = sxdp_rebuild(h, &l, cfg.flags, cfg.fpp_ppb,
				   l.n > cfg.capacity ? capacity_for(l.n) : cfg.capacity, err, errlen);
	else
		snprintf(err, errlen, "reading the list: %s", strerror(-ret));
	sxdp_list_free(&l);
	return ret;
}

/*
 * Takes the lock of a pinned handle's interface and re-opens the handle
 * under it: between sxdp_open and here the interface may have been
 * detached, or re-attached with maps of its own. Then brings the maps in
 * step with the list if a change was cut short. *lock_fd is -1 for a
 * handle no one else has.
 */
static int lock_handle(struct sxdp_handle *h, int *lock_fd, char *err, size_t errlen)
{
	char ifname[IF_NAMESIZE];
	int ret;

	*lock_fd = -1;
	if (!h->pinned)
		return 0;
	ret = sxdp_lock(h->ifname, false);
	if (ret < 0)
		goto out_err;
	*lock_fd = ret;
	snprintf(ifname, sizeof(ifname), "%s", h->ifname);
	sxdp_close(h);
	ret = sxdp_open(ifname, h);
	if (ret)
		goto out_unlock;
	ret = sxdp_sync(h, err, errlen);
	if (!ret)
		return 0;
	sxdp_unlock(*lock_fd);
	*lock_fd = -1;
	return ret;

out_unlock:
	sxdp_unlock(*lock_fd);
	*lock_fd = -1;
out_err:
	if (ret == -ENOENT)
		snprintf(err, errlen, "the blocklist is no longer attached");
	else
		snprintf(err, errlen, "taking the interface's lock: %s", strerror(-ret));
	return ret;
}

static int replace_locked(struct sxdp_handle *h, const struct sxdp_list *l, char *err,
			  size_t errlen)
{
	struct sieve_xdp_config cfg;
	int ret = sxdp_read_config(h, &cfg, NULL);

	if (ret) {
		snprintf(err, errlen, "reading the config: %s", strerror(-ret));
		return ret;
	}
	return sxdp_rebuild(h, l, cfg.flags, cfg.fpp_ppb, capacity_for(l->n), err, errlen);
}

/*
 * Adds into the live maps; only the config goes through a swap. @cfg has
 * the live probe lengths, extended for @fresh (sxdp_config_extend).
 */
static int add_live(struct sxdp_handle *h, const struct sieve_xdp_config *cfg,
		    const struct sxdp_list *fresh)
{
	struct sxdp_list keys = { 0 };
	int bloom_fd, exact_fd = -1, ret;
	uint32_t gen;

	ret = read_active(h, &gen);
	if (!ret)
		ret = sxdp_expand(fresh, cfg, &keys);
	if (ret)
		goto out;
	bloom_fd = slot_map_fd(cfg->flags & SIEVE_XDP_F_BLOCKED ? h->blocked_fd : h->bloom_fd, gen);
	if (bloom_fd < 0) {
		ret = bloom_fd;
		goto out;
	}
	if (cfg->flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY)) {
		exact_fd = slot_map_fd(h->exact_fd, gen);
		if (exact_fd < 0) {
			close(bloom_fd);
			ret = exact_fd;
			goto out;
		}
	}
	ret = sxdp_filter_insert(cfg->flags, cfg->nr_hashes, bloom_fd, exact_fd, keys.keys, keys.n,
				 true);
	if (!ret)
		ret = sxdp_swap(h, cfg, bloom_fd, exact_fd);
	close(bloom_fd);
	if (exact_fd >= 0)
		close(exact_fd);
out:
	sxdp_list_free(&keys);
	return ret;
}

int sxdp_replace(struct sxdp_handle *h, const struct sxdp_list *l, char *err, size_t errlen)
{
	int lock_fd, ret = lock_handle(h, &lock_fd, err, errlen);

	if (ret)
		return ret;
	ret = replace_locked(h, l, err, errlen);
	sxdp_unlock(lock_fd);
	return ret;
}

/*
 * The config a live add of @fresh makes, in @next: the live probe
 * lengths extended, the keys of the whole list @all counted. 1 if it
 * needs a rebuild instead (a new plan, or past the capacity).
 */
static int add_config(const struct sieve_xdp_config *cur, const struct sxdp_list *all,
		      const struct sxdp_list *fresh, struct sieve_xdp_config *next)
{
	struct sxdp_list keys = { 0 };
	int ret;

	*next = *cur;
	if (sxdp_config_extend(next, fresh))
		return 1;
	ret = sxdp_expand(all, next, &keys);
	if (ret == -E2BIG)
		return 1;
	if (ret)
		return ret;
	next->entries = all->n;
	next->keys = keys.n;
	sxdp_list_free(&keys);
	/* Past capacity the rate would climb: a bigger generation. */
	return next->keys > cur->capacity;
}

static int add_locked(struct sxdp_handle *h, const struct sxdp_list *add, char *err,
		      size_t errlen)
{
	struct sxdp_list all = { 0 }, fresh = { 0 };
	struct sieve_xdp_config cfg, next;
	size_t i;
	int ret;

	ret = sxdp_read_config(h, &cfg, NULL);
	if (!ret)
		ret = sxdp_state_read(h->ifname, &all);
	for (i = 0; !ret && i < add->n; i++)
		if (!sxdp_list_find(&all, &add->keys[i]))
			ret = sxdp_list_add(&fresh, &add->keys[i]);
	for (i = 0; !ret && i < fresh.n; i++)
		ret = sxdp_list_add(&all, &fresh.keys[i]);
	if (ret) {
		snprintf(err, errlen, "reading the current list: %s", strerror(-ret));
		goto out;
	}
	sxdp_list_sort(&all);
	if (!fresh.n)
		goto out;
	ret = add_config(&cfg, &all, &fresh, &next);
	if (ret == 1) {
		/* A new plan alone keeps the capacity (the rebuild grows it to fit). */
		uint64_t cap = next.keys <= cfg.capacity ? cfg.capacity :
			       capacity_for(next.keys > 2 * cfg.capacity ? next.keys : 2 * cfg.capacity);

		ret = sxdp_rebuild(h, &all, cfg.flags, cfg.fpp_ppb, cap, err, errlen);
	} else if (ret) {
		snprintf(err, errlen, "expanding the prefixes: %s", strerror(-ret));
	} else {
		ret = state_write_next(h, &all, err, errlen);
		if (!ret && (ret = add_live(h, &next, &fresh)))
			snprintf(err, errlen, "adding to the live maps: %s", strerror(-ret));
	}
out:
	sxdp_list_free(&all);
	sxdp_list_free(&fresh);
	return ret;
}

int sxdp_add(struct sxdp_handle *h, const struct sxdp_list *add, char *err, size_t errlen)
{
	int lock_fd, ret = lock_handle(h, &lock_fd, err, errlen);

	if (ret)
		return ret;
	ret = add_locked(h, add, err, errlen);
	sxdp_unlock(lock_fd);
	return ret;
}

static int remove_locked(struct sxdp_handle *h, const struct sxdp_list *del, size_t *missing)
{
	struct sxdp_list all = { 0 };
	struct sieve_xdp_config cfg;
	char err[256];
	size_t i, removed = 0;
	int ret;

	*missing = 0;
	ret = sxdp_read_config(h, &cfg, NULL);
	if (!ret)
		ret = sxdp_state_read(h->ifname, &all);
	for (i = 0; !ret && i < del->n; i++) {
		if (sxdp_list_remove(&all, &del->keys[i]))
			removed++;
		else
			(*missing)++;
	}
	/* The bloom filter cannot forget: a generation without them. */
	if (!ret && removed)
		ret = sxdp_rebuild(h, &all, cfg.flags, cfg.fpp_ppb, cfg.capacity, err, sizeof(err));
	sxdp_list_free(&all);
	return ret;
}

int sxdp_remove(struct sxdp_handle *h, const struct sxdp_list *del, size_t *missing)
{
	char err[256];
	int lock_fd, ret = lock_handle(h, &lock_fd, err, sizeof(err));

	*missing = 0;
	if (ret)
		return ret;
	ret = remove_locked(h, del, missing);
	sxdp_unlock(lock_fd);
	return ret;
}
