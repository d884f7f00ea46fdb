// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP blocklist's loader: the maps of an instance, pinned under
 * SIEVE_XDP_PIN_ROOT/NETNS/IFACE/, and their generations. What they hold
 * comes from the store (ops.c); the bloom filter cannot list or delete
 * what it holds, so removals build a new generation from the store.
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
#define _GNU_SOURCE		/* renameat2 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <signal.h>
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
#include <sys/random.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"
#include "sieve_xdp_v4table.h"
#include "backend.h"
#include "sieve_xdp.skel.h"

#define BPF_FS_MAGIC_	0xcafe4a11

/*
 * Interface names belong to a network namespace; bpffs does not. So the
 * pins of a namespace live in a folder of their own, named after it (its
 * inode), and one name in two namespaces never collides. The store names
 * an attachment's namespace the same way.
 */
uint64_t sxdp_netns(void)
{
	static uint64_t ino;
	struct stat st;

	if (!ino && !stat("/proc/self/ns/net", &st))
		ino = st.st_ino;
	return ino;
}

void sxdp_pin_dir_ns(char *buf, size_t len, uint64_t netns, const char *ifname)
{
	snprintf(buf, len, "%s/netns-%llu%s%s", SIEVE_XDP_PIN_ROOT, (unsigned long long)netns,
		 ifname ? "/" : "", ifname ? ifname : "");
}

bool sxdp_ifname_ok(const char *name)
{
	size_t len = strnlen(name, IF_NAMESIZE), i;

	if (!len || len >= IF_NAMESIZE || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (i = 0; i < len; i++)
		if (name[i] == '/' || name[i] == ':' || isspace((unsigned char)name[i]))
			return false;
	return true;
}

void sxdp_pin_dir(char *buf, size_t len, const char *ifname)
{
	sxdp_pin_dir_ns(buf, len, sxdp_netns(), ifname);
}

int sxdp_mkdir_p(const char *path)
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
	return sxdp_mkdir_p(dir);
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
	return sxdp_lock_ns(sxdp_netns(), ifname, create);
}

int sxdp_lock_ns(uint64_t netns, const char *ifname, bool create)
{
	struct stat held, now;
	char dir[256];
	int fd, tries, err;

	if (!sxdp_ifname_ok(ifname))
		return -EINVAL;
	sxdp_pin_dir_ns(dir, sizeof(dir), netns, ifname);
	/* Each retry means a detach or an upgrade came in between: a few are plenty. */
	for (tries = 0; tries < 16; tries++) {
		/* Its namespace's folder may go under us, emptied by a detach: made again. */
		err = create ? sxdp_mkdir_p(dir) : 0;
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && create)
			continue;	/* removed by a detach in between */
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
		    held.st_ino == now.st_ino) {
			/*
			 * An upgrade cut short is finished or undone first
			 * (attach.c). Finishing it moves another folder to
			 * this path: lock that one.
			 */
			err = sxdp_upgrade_recover(netns, ifname);
			if (err <= 0) {
				if (!err)
					return fd;
				close(fd);
				return err;
			}
		}
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

/* ---- upgrades cut short: the pins of one (attach.c does the rest) ---- */

void sxdp_staging_dir(char *buf, size_t len, uint64_t netns, const char *ifname)
{
	snprintf(buf, len, "%s/staging/netns-%llu%s%s", SIEVE_XDP_PIN_ROOT,
		 (unsigned long long)netns, ifname ? "/" : "", ifname ? ifname : "");
}

/* Unpins whatever @dir holds (it is a staging folder), then removes it. */
void sxdp_remove_staged(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

/* The id of the program @fd is, or the program the link @fd runs; 0 if none. */
uint32_t sxdp_prog_id(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.id : 0;
}

uint32_t sxdp_link_prog_id(int fd)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.prog_id : 0;
}

/* The pin @name in @dir, as a new fd, or -1. */
int sxdp_pin_get(const char *dir, const char *name)
{
	char path[320];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

/*
 * Called with the interface's lock held, so no upgrade is under way: the
 * staging folder is one cut short. The rule (attach.c's top): finish the
 * exchange if the link runs the staged program, else the folder goes.
 */
int sxdp_upgrade_recover(uint64_t netns, const char *ifname)
{
	char staged[256], dir[256];
	__u32 running, ours;
	struct stat st;
	int fd, ret = 0;

	sxdp_staging_dir(staged, sizeof(staged), netns, ifname);
	if (stat(staged, &st))
		return 0;
	sxdp_pin_dir_ns(dir, sizeof(dir), netns, ifname);
	fd = sxdp_pin_get(dir, SIEVE_XDP_LINK_PIN);
	running = sxdp_link_prog_id(fd);
	if (fd >= 0)
		close(fd);
	fd = sxdp_pin_get(staged, SXDP_PROG_PIN);
	ours = sxdp_prog_id(fd);
	if (fd >= 0)
		close(fd);
	/* Swapped in, not yet moved into place: finish. */
	if (running && running == ours) {
		if (renameat2(AT_FDCWD, staged, AT_FDCWD, dir, RENAME_EXCHANGE))
			return -errno;
		ret = 1;
	}
	sxdp_remove_staged(staged);
	return ret;
}

int sxdp_prog_running(uint64_t netns, const char *ifname, struct sxdp_prog *p)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	char dir[256];
	int fd;

	memset(p, 0, sizeof(*p));
	sxdp_pin_dir_ns(dir, sizeof(dir), netns, ifname);
	fd = sxdp_pin_get(dir, SIEVE_XDP_LINK_PIN);
	p->id = sxdp_link_prog_id(fd);
	if (fd >= 0)
		close(fd);
	if (!p->id)
		return -ENOENT;
	fd = bpf_prog_get_fd_by_id(p->id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		close(fd);
		return -errno;
	}
	close(fd);
	sxdp_tag_hex(info.tag, p->tag);
	p->load_time_ns = info.load_time;
	return 0;
}

void sxdp_tag_hex(const __u8 tag[8], char out[17])
{
	int i;

	for (i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", tag[i]);
}

int sxdp_open(const char *ifname, struct sxdp_handle *h)
{
	return sxdp_open_ns(sxdp_netns(), ifname, h);
}

int sxdp_open_ns(uint64_t netns, const char *ifname, struct sxdp_handle *h)
{
	char dir[192];

	sxdp_pin_dir_ns(dir, sizeof(dir), netns, ifname);
	return sxdp_open_dir(dir, netns, ifname, h);
}

static int open_dir(const char *dir, uint64_t netns, const char *ifname, bool any_layout,
		    struct sxdp_handle *h)
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
	h->netns = netns;
	/* An interface of another namespace has no index here. */
	h->ifindex = netns == sxdp_netns() ? if_nametoindex(ifname) : 0;
	for (i = 0; i < 5; i++)
		*fds[i] = -1;
	h->allow_fd = h->allow_none_fd = -1;
	h->blocked_fd = -1;
	h->removed_fd = -1;
	h->v4top_fd = h->v4chunk_fd = h->v4host_fd = -1;
	h->origins_fd = -1;
	if (!sxdp_ifname_ok(ifname))
		return -EINVAL;
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			int err = errno == ENOENT ? -ENOENT : -errno;

			sxdp_close(h);
			return err;
		}
	}
	/*
	 * Maps of another layout (an older sieve's program, before `attach`
	 * replaced it): written with this sieve's layout, its program would
	 * misread them. -ESTALE, until an upgrade (attach.c) replaces both.
	 */
	if (!sxdp_layout_current(h->cfg_fd, sizeof(struct sieve_xdp_config))) {
		h->stale = true;
		if (!any_layout) {
			sxdp_close(h);
			return -ESTALE;
		}
	}
	/* Optional: an instance attached before the allowlist has none, and
	 * everything else still works on it. */
	snprintf(path, sizeof(path), "%s/%s", dir, SIEVE_XDP_MAP_ALLOW);
	h->allow_fd = bpf_obj_get(path);
	if (h->allow_fd < 0 && errno != ENOENT) {
		int err = -errno;

		sxdp_close(h);
		return err;
	}
	/* Nor this one: its program asks the allowlist, empty or not. */
	snprintf(path, sizeof(path), "%s/%s", dir, SIEVE_XDP_MAP_ALLOW_NONE);
	h->allow_none_fd = bpf_obj_get(path);
	/* Not there when an older sieve attached: only the blocked backend needs it. */
	snprintf(path, sizeof(path), "%s/%s", dir, SIEVE_XDP_MAP_BLOCKED);
	h->blocked_fd = bpf_obj_get(path);
	/* Not there either: removals then rebuild, as they did (removed.c). */
	snprintf(path, sizeof(path), "%s/%s", dir, SIEVE_XDP_MAP_REMOVED);
	h->removed_fd = bpf_obj_get(path);
	/* Nor these: builds then keep IPv4 prefixes in the filter, as they did. */
	snprintf(path, sizeof(path), "%s/%s", dir, SIEVE_XDP_MAP_V4TOP);
	h->v4top_fd = bpf_obj_get(path);
	snprintf(path, sizeof(path), "%s/%s", dir, SIEVE_XDP_MAP_V4CHUNK);
	h->v4chunk_fd = bpf_obj_get(path);
	/* Nor this: builds then leave the source probe on every IPv4 packet. */
	snprintf(path, sizeof(path), "%s/%s", dir, SIEVE_XDP_MAP_V4HOST);
	h->v4host_fd = bpf_obj_get(path);
	/* Nor this: no per-origin drops, and no dry run (monitor.c). */
	snprintf(path, sizeof(path), "%s/%s", dir, SIEVE_XDP_MAP_ORIGINS);
	h->origins_fd = bpf_obj_get(path);
	h->pinned = true;
	return 0;
}

int sxdp_open_dir(const char *dir, uint64_t netns, const char *ifname, struct sxdp_handle *h)
{
	return open_dir(dir, netns, ifname, false, h);
}

int sxdp_open_reader(const char *ifname, struct sxdp_handle *h)
{
	char dir[192];

	sxdp_pin_dir_ns(dir, sizeof(dir), sxdp_netns(), ifname);
	return open_dir(dir, sxdp_netns(), ifname, true, h);
}

int sxdp_open_reader_ns(uint64_t netns, const char *ifname, struct sxdp_handle *h)
{
	char dir[192];

	sxdp_pin_dir_ns(dir, sizeof(dir), netns, ifname);
	return open_dir(dir, netns, ifname, true, h);
}

bool sxdp_layout_current(int map_fd, size_t value_size)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	return !bpf_obj_get_info_by_fd(map_fd, &info, &len) && info.value_size == value_size;
}

void sxdp_close(struct sxdp_handle *h)
{
	int *fds[] = { &h->active_fd, &h->cfg_fd, &h->bloom_fd, &h->exact_fd, &h->stats_fd,
		       &h->allow_fd };
	size_t i;

	for (i = 0; i < 6; i++) {
		if (*fds[i] > 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	if (h->blocked_fd > 0)
		close(h->blocked_fd);
	h->blocked_fd = -1;
	if (h->removed_fd >= 0)
		close(h->removed_fd);
	h->removed_fd = -1;
	if (h->v4top_fd >= 0)
		close(h->v4top_fd);
	if (h->v4chunk_fd >= 0)
		close(h->v4chunk_fd);
	if (h->v4host_fd >= 0)
		close(h->v4host_fd);
	if (h->allow_none_fd >= 0)
		close(h->allow_none_fd);
	h->allow_none_fd = -1;
	h->v4top_fd = h->v4chunk_fd = h->v4host_fd = -1;
	if (h->origins_fd >= 0)
		close(h->origins_fd);
	h->origins_fd = -1;
}

static int read_active(struct sxdp_handle *h, uint32_t *gen)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(h->active_fd, &zero, gen))
		return -errno;
	*gen &= SIEVE_XDP_NR_GENS - 1;
	return 0;
}

/*
 * Layout 1 named the backends' fields where max_entries and nr_hashes
 * were and put @layout in what was padding: the same offsets, so an older
 * sieve's config (440 bytes, layout 0) is read as far as it goes. It also
 * appended the removals' bookkeeping (removed, live_*_lens), which changes
 * the value's size: an older instance is upgraded in place (attach.c).
 */
_Static_assert(offsetof(struct sieve_xdp_config, layout) == 364, "layout sits in the old padding");
_Static_assert(offsetof(struct sieve_xdp_config, bloom.max_entries) == 384 &&
	      offsetof(struct sieve_xdp_config, blocked.nblocks) == 384 &&
	      offsetof(struct sieve_xdp_config, filter.id) == 384 &&
	      offsetof(struct sieve_xdp_config, blocked.k) == 388, "where max_entries was");
_Static_assert(offsetof(struct sieve_xdp_config, fpp_ppb) == 392 &&
	      offsetof(struct sieve_xdp_config, removed) == 440 &&
	      sizeof(struct sieve_xdp_config) == 464, "the rest unmoved, removals appended");

int sxdp_read_config(struct sxdp_handle *h, struct sieve_xdp_config *cfg, uint32_t *gen)
{
	size_t value_size = sizeof(*cfg);
	uint32_t g;
	int err = read_active(h, &g);

	if (err)
		return err;
	if (gen)
		*gen = g;
	/*
	 * The config map of an older sieve has a shorter value: the fields it
	 * lacks read as 0 (digest 0 among them, which rebuilds, see ops.c).
	 */
	memset(cfg, 0, sizeof(*cfg));
	/*
	 * Only a read-only handle opens maps of another layout: a newer one's
	 * longer value would overrun @cfg, so it is refused before the copy.
	 */
	if (h->stale) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(h->cfg_fd, &info, &len))
			return -errno;
		if (info.value_size > sizeof(*cfg))
			return -ESTALE;
		value_size = info.value_size;
	}
	if (bpf_map_lookup_elem(h->cfg_fd, &g, cfg))
		return -errno;
	/*
	 * A value of layout 0's size (0.4.0's, before the removals were
	 * appended): @layout was padding there, which its loader never
	 * promised to zero. Layout 0, whatever those bytes hold.
	 */
	if (value_size <= offsetof(struct sieve_xdp_config, removed))
		cfg->layout = 0;
	/* Layout 0 is 1's bytes (sieve_xdp.h); a newer one is not ours to read. */
	if (cfg->layout > SIEVE_XDP_LAYOUT)
		return -ESTALE;
	cfg->layout = SIEVE_XDP_LAYOUT;
	return 0;
}

/*
 * The per-CPU values of a stats map as this sieve's struct, into @per
 * (ncpus of them, zeroed first). A map an older program made may hold
 * fewer counters (they are only appended: sieve_xdp.h): read with its own
 * value size, the ones it lacks stay 0.
 */
int sxdp_read_stats_percpu(int stats_fd, struct sieve_xdp_stats *per, int ncpus)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	size_t stride, n;
	uint32_t zero = 0;
	char *raw;
	int cpu;

	if (bpf_obj_get_info_by_fd(stats_fd, &info, &len))
		return -errno;
	if (!info.value_size)
		return -EINVAL;
	stride = (info.value_size + 7) & ~7U;
	n = info.value_size < sizeof(*per) ? info.value_size : sizeof(*per);
	raw = calloc(ncpus, stride);
	if (!raw)
		return -ENOMEM;
	if (bpf_map_lookup_elem(stats_fd, &zero, raw)) {
		free(raw);
		return -errno;
	}
	memset(per, 0, ncpus * sizeof(*per));
	for (cpu = 0; cpu < ncpus; cpu++)
		memcpy(&per[cpu], raw + cpu * stride, n);
	free(raw);
	return 0;
}

int sxdp_read_stats(struct sxdp_handle *h, struct sieve_xdp_stats *sum)
{
	return sxdp_read_stats_fd(h->stats_fd, sum);
}

int sxdp_read_stats_fd(int stats_fd, struct sieve_xdp_stats *sum)
{
	int ncpus = libbpf_num_possible_cpus(), cpu, i, err;
	struct sieve_xdp_stats *per;

	if (ncpus < 0)
		return ncpus;
	per = calloc(ncpus, sizeof(*per));
	if (!per)
		return -ENOMEM;
	err = sxdp_read_stats_percpu(stats_fd, per, ncpus);
	if (err) {
		free(per);
		return err;
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
	for (i = SIEVE_XDP_DROP_SRC; i < SIEVE_XDP_NR_COUNTERS; i++) {
		if (i > SIEVE_XDP_DROP_MALFORMED && i != SIEVE_XDP_DROP_UNPARSED)
			continue;
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

int sxdp_slot_map_fd(int outer_fd, uint32_t slot)
{
	uint32_t id;
	int fd;

	if (bpf_map_lookup_elem(outer_fd, &slot, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

/* What the kernel charges a map: "memlock:" in its fdinfo. */
uint64_t sxdp_map_memlock(int fd)
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

/* The filter map in slot @gen of whichever backend's outer map holds one; -errno if none. */
static int live_filter_fd(struct sxdp_handle *h, uint32_t gen)
{
	int i, outer, fd = -ENOENT;

	for (i = 0; fd < 0 && sxdp_backends[i]; i++) {
		outer = sxdp_backends[i]->outer_fd(h);
		if (outer >= 0)
			fd = sxdp_slot_map_fd(outer, gen);
	}
	return fd;
}

int sxdp_live_memory(struct sxdp_handle *h, uint64_t *bloom_bytes, uint64_t *exact_bytes)
{
	uint32_t gen;
	int err = read_active(h, &gen), fd;

	if (err)
		return err;
	*bloom_bytes = *exact_bytes = 0;
	/* The filter: in the live slot of one backend's outer map, if any. */
	fd = live_filter_fd(h, gen);
	if (fd >= 0) {
		*bloom_bytes = sxdp_map_memlock(fd);
		close(fd);
	}
	fd = sxdp_slot_map_fd(h->exact_fd, gen);
	if (fd >= 0) {
		*exact_bytes = sxdp_map_memlock(fd);
		close(fd);
	}
	/* The removed map refutes the filter's hits: the filter's cost too. */
	fd = h->removed_fd >= 0 ? sxdp_slot_map_fd(h->removed_fd, gen) : -ENOENT;
	if (fd >= 0) {
		*bloom_bytes += sxdp_map_memlock(fd);
		close(fd);
	}
	return 0;
}

int sxdp_gen_insert(int bloom_fd, int exact_fd, const __u64 secret[2],
		    const struct sieve_xdp_key *keys, size_t n, const struct sxdp_origins *origins)
{
	enum { CHUNK = 8192 };
	uint32_t *values = NULL;
	int ret = 0;
	size_t i, j;

	if (exact_fd >= 0 && n) {
		values = malloc(CHUNK * sizeof(*values));
		if (!values)
			return -ENOMEM;
	}
	/* Exact first: a bloom hit never waits on a missing confirmation. */
	for (i = 0; exact_fd >= 0 && !ret && i < n; i += CHUNK) {
		uint32_t count = n - i < CHUNK ? n - i : CHUNK;

		/* Each key's origin: what a drop by it is counted under. */
		for (j = 0; j < count; j++)
			values[j] = sxdp_origin_of(origins, &keys[i + j]);
		if (bpf_map_update_batch(exact_fd, keys + i, values, &count, NULL))
			ret = -errno;
	}
	free(values);
	if (ret)
		return ret;
	return bloom_fd >= 0 ? sxdp_bloom_fill(bloom_fd, secret, keys, n, NULL) : 0;
}

int sxdp_filter_insert(const struct sieve_xdp_config *cfg, int filter_fd, int exact_fd,
		       const struct sieve_xdp_key *keys, size_t n, bool live,
		       const struct sxdp_origins *origins)
{
	/* Exact first: a filter hit never waits on a missing confirmation. */
	int err = sxdp_gen_insert(-1, exact_fd, cfg->digest_key, keys, n, origins);

	if (!err && filter_fd >= 0)
		err = sxdp_backend_of(cfg->flags)->fill(cfg, filter_fd, keys, n, live);
	return err;
}

int sxdp_gen_create(const struct sxdp_plan *plan, const struct sieve_xdp_config *cfg, bool exact,
		    const struct sxdp_keys *l, const struct sxdp_origins *origins, int *bloom_fd,
		    int *exact_fd)
{
	const struct sxdp_backend_ops *ops = plan->blocked ? &sxdp_blocked_ops : &sxdp_bloom_ops;
	uint64_t cap = plan->capacity > l->n ? plan->capacity : l->n;
	struct sieve_xdp_config c = *cfg;
	int err;

	*exact_fd = -1;
	*bloom_fd = ops->create(plan);
	if (*bloom_fd < 0)
		return *bloom_fd;
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
	/* The plan's backend and k; the config's digest key and seed. */
	c.flags = ops->cfg_flag;
	ops->config(&c, plan);
	err = sxdp_filter_insert(&c, *bloom_fd, *exact_fd, l->keys, l->n, false, origins);
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
void sxdp_wait_for_packets(void)
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

/* Whether any backend's outer map has a map in @slot. */
static bool filter_slot_in_use(struct sxdp_handle *h, uint32_t slot)
{
	int i, outer;

	for (i = 0; sxdp_backends[i]; i++) {
		outer = sxdp_backends[i]->outer_fd(h);
		if (outer >= 0 && slot_in_use(outer, slot))
			return true;
	}
	return false;
}

/*
 * Puts @fd in @slot of @ops' outer map and empties the slot in every other
 * backend's (a handle may lack one: sieve_blocked, see sxdp_open). Each
 * outer map is set even when another failed; -1 (errno) if any did.
 */
static int set_filter_slot(struct sxdp_handle *h, const struct sxdp_backend_ops *ops,
			   uint32_t slot, int fd)
{
	int i, outer, err = 0;

	for (i = 0; sxdp_backends[i]; i++) {
		outer = sxdp_backends[i]->outer_fd(h);
		if (outer >= 0 && set_slot(outer, slot, sxdp_backends[i] == ops ? fd : -1) && !err)
			err = errno;
	}
	if (err)
		errno = err;
	return err ? -1 : 0;
}

/* Sets a slot of sieve_removed, which a handle may lack too. */
static int set_removed_slot(struct sxdp_handle *h, uint32_t slot, int fd)
{
	return h->removed_fd >= 0 ? set_slot(h->removed_fd, slot, fd) : 0;
}

void sxdp_test_kill(const char *var, const char *step)
{
	const char *at = getenv(var);

	if (at && !strcmp(at, step))
		raise(SIGKILL);
}

/*
 * The e2e suite kills a swap (a command's rebuild, the agent's background
 * one) with SIEVE_TEST_KILL_SWAP=staged (the idle slot written, not
 * flipped) or =flipped (before the old slot is freed).
 */
int sxdp_swap(struct sxdp_handle *h, const struct sieve_xdp_config *cfg, int bloom_fd,
	      int exact_fd)
{
	const struct sxdp_backend_ops *ops = sxdp_backend_of(cfg->flags);
	struct sieve_xdp_config next = *cfg, cur;
	uint32_t live, idle, zero = 0;
	int err = sxdp_read_config(h, &cur, &live), removed_fd;

	if (err)
		return err;
	if (bloom_fd >= 0 && ops->outer_fd(h) < 0)
		return -EOPNOTSUPP;
	idle = !live;
	/* The same filter keeps its removals; a new one starts without. */
	removed_fd = sxdp_removed_carry(h, &next, live);
	if (removed_fd < -1)
		return removed_fd;
	/*
	 * Maps left in the idle slot mean a swap was cut short (killed) after
	 * its flip, maybe before its grace period: packets may still be in
	 * that slot, so wait before rewriting it.
	 */
	if (filter_slot_in_use(h, idle) || slot_in_use(h->exact_fd, idle) ||
	    (h->removed_fd >= 0 && slot_in_use(h->removed_fd, idle)))
		sxdp_wait_for_packets();
	next.gen_seq = cur.gen_seq + 1;
	next.layout = SIEVE_XDP_LAYOUT;
	/* The filter goes to its backend's outer map; the other's slot is emptied. */
	if (bpf_map_update_elem(h->cfg_fd, &idle, &next, BPF_ANY) ||
	    set_filter_slot(h, ops, idle, bloom_fd) || set_slot(h->exact_fd, idle, exact_fd) ||
	    set_removed_slot(h, idle, removed_fd)) {
		err = -errno;
		goto out;
	}
	sxdp_test_kill("SIEVE_TEST_KILL_SWAP", "staged");
	/* The flip: one aligned word, and only its lowest bit changes. */
	if (bpf_map_update_elem(h->active_fd, &zero, &idle, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	sxdp_test_kill("SIEVE_TEST_KILL_SWAP", "flipped");
	sxdp_wait_for_packets();
	/* Nothing reads the old slot any more: free its maps. */
	set_filter_slot(h, NULL, live, -1);
	bpf_map_delete_elem(h->exact_fd, &live);
	set_removed_slot(h, live, -1);
out:
	if (removed_fd >= 0)
		close(removed_fd);
	return err;
}


/* Headroom so that a few live adds do not rebuild at once. */
uint64_t sxdp_capacity_for(uint64_t n)
{
	uint64_t cap = n + n / 4;

	return cap > SXDP_DEFAULT_CAPACITY ? cap : SXDP_DEFAULT_CAPACITY;
}

bool sxdp_digest_current(const struct sieve_xdp_config *cfg, const __u64 secret[2])
{
	return cfg->digest == SIEVE_XDP_DIGEST &&
	       !memcmp(cfg->digest_key, secret, sizeof(cfg->digest_key));
}

int sxdp_config_keyed(struct sieve_xdp_config *cfg, struct sxdp_handle *h,
		      const struct sxdp_build_spec *b, char *err, size_t errlen)
{
	struct sieve_xdp_config cur;
	uint64_t seed;

	if (b->secret) {
		memcpy(cfg->digest_key, b->secret, sizeof(cfg->digest_key));
	} else if (!sxdp_read_config(h, &cur, NULL) &&
		   cur.digest == SIEVE_XDP_DIGEST) {
		memcpy(cfg->digest_key, cur.digest_key, sizeof(cfg->digest_key));
	} else {
		snprintf(err, errlen, "no digest key: the host's secret comes with the store");
		return -ENOKEY;
	}
	cfg->digest = SIEVE_XDP_DIGEST;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
		snprintf(err, errlen, "a seed for the generation: %s", strerror(errno));
		return -errno;
	}
	cfg->blocked_seed = seed;
	return 0;
}

/* The table's failure, in words. */
static void v4table_err(int ret, char *err, size_t errlen)
{
	snprintf(err, errlen, "the IPv4 prefix table: %s", ret == -ENOSPC ?
		 "more /24s hold prefixes longer than /24 than it takes" : strerror(-ret));
}

/*
 * Where the program has the IPv4 prefix table, the generation is built
 * without IPv4 prefixes, flagged to read the table instead; elsewhere (an
 * older sieve's pins) they are expanded into the filter as before. The
 * live generation may read the table already, and may hold in its filter
 * what the new one keeps in the table (a source there, a prefix here): so
 * the table only gains before the swap (every prefix of the list set),
 * and loses what the list no longer holds only after it. A build that
 * fails, or is killed, leaves it blocking more, never less, until the
 * next one.
 */
int sxdp_build(struct sxdp_handle *h, const struct sxdp_build_spec *b, char *err, size_t errlen)
{
	struct sxdp_build_spec spec = *b;
	bool table = sxdp_v4table_on(h);
	int ret;

	spec.flags &= ~(SIEVE_XDP_F_V4TABLE | SIEVE_XDP_F_V4HOSTS);
	if (table) {
		/* The host bitmap's bits too: flagged only once they are set. */
		ret = sxdp_v4table_fits(b->list) ?: sxdp_v4table_build_add(h, b->list);
		if (ret) {
			v4table_err(ret, err, errlen);
			return ret;
		}
		spec.flags |= SIEVE_XDP_F_V4TABLE;
		if (sxdp_v4host_on(h))
			spec.flags |= SIEVE_XDP_F_V4HOSTS;
		/*
		 * Not in step with the store until the table has lost what
		 * the list lost: swapped in at a version no store has, so a
		 * build killed (or failing) between its swap and the sync
		 * leaves maps every later command finds behind and rebuilds.
		 */
		spec.store_version = SXDP_VERSION_TABLE_PENDING;
	}
	ret = sxdp_backend_of(spec.flags)->build(h, &spec, err, errlen);
	sxdp_test_kill("SIEVE_TEST_KILL_BUILD", "swapped");
	if (!ret && table) {
		ret = sxdp_v4table_sync(h, b->list);
		if (ret)
			v4table_err(ret, err, errlen);
		else if ((ret = sxdp_set_version(h, b->store_version)))
			snprintf(err, errlen, "recording the version: %s", strerror(-ret));
	}
	return ret;
}

int sxdp_gen_build(struct sxdp_handle *h, const struct sxdp_build_spec *b, char *err,
		   size_t errlen)
{
	const struct sxdp_backend_ops *ops = sxdp_backend_of(b->flags);
	struct sieve_xdp_config cfg = { .flags = b->flags, .max_probes = b->max_probes };
	struct sxdp_keys keys = { 0 };
	uint64_t capacity = b->capacity;
	struct sxdp_plan plan;
	int bloom_fd, exact_fd, ret;

	cfg.max_probes = sxdp_max_probes(&cfg);
	ret = sxdp_config_keyed(&cfg, h, b, err, errlen);
	if (!ret)
		ret = sxdp_plan_keys(b->list, &cfg, &keys, err, errlen);
	if (ret)
		goto out;
	/* Capacity counts keys: an expanded list gets headroom of its own. */
	if (capacity < keys.n)
		capacity = sxdp_capacity_for(keys.n);
	ret = ops->plan(capacity, b->fpp_ppb, &plan);
	if (ret) {
		snprintf(err, errlen, "no %s filter of at most %s holds %llu entries at that rate",
			 ops->name, ops->limit, (unsigned long long)capacity);
		goto out;
	}
	cfg.capacity = plan.capacity;
	ops->config(&cfg, &plan);
	cfg.fpp_ppb = b->fpp_ppb;
	cfg.store_version = b->store_version;
	ret = sxdp_gen_create(&plan, &cfg, b->flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY),
			      &keys, h->origins, &bloom_fd, &exact_fd);
	if (ret) {
		snprintf(err, errlen, "creating the maps: %s", strerror(-ret));
		goto out;
	}
	ret = sxdp_swap(h, &cfg, bloom_fd, exact_fd);
	if (ret)
		snprintf(err, errlen, "swapping in the new maps: %s", strerror(-ret));
	close(bloom_fd);
	if (exact_fd >= 0)
		close(exact_fd);
out:
	sxdp_keys_free(&keys);
	return ret;
}

int sxdp_rebuild_probes(struct sxdp_handle *h, const struct sxdp_keys *l, uint32_t flags,
			uint32_t fpp_ppb, uint64_t capacity, unsigned int max_probes, char *err,
			size_t errlen)
{
	struct sxdp_build_spec b = {
		.list = l, .flags = flags, .fpp_ppb = fpp_ppb, .capacity = capacity,
		.max_probes = max_probes,
	};
	struct sieve_xdp_config cur;

	/* The maps still hold what the store's version says they hold. */
	if (!sxdp_read_config(h, &cur, NULL))
		b.store_version = cur.store_version;
	return sxdp_build(h, &b, err, errlen);
}

int sxdp_rebuild(struct sxdp_handle *h, const struct sxdp_keys *l, uint32_t flags,
		 uint32_t fpp_ppb, uint64_t capacity, char *err, size_t errlen)
{
	struct sieve_xdp_config cur = { 0 };

	/* The live generation's probe budget (none yet: the default). */
	if (sxdp_read_config(h, &cur, NULL))
		cur.max_probes = 0;
	return sxdp_rebuild_probes(h, l, flags, fpp_ppb, capacity, cur.max_probes, err, errlen);
}

/* The fields the program reads: equal in both, a config can change in place. */
static bool same_for_packets(const struct sieve_xdp_config *a, const struct sieve_xdp_config *b)
{
	struct sieve_xdp_config x = *a;

	x.entries = b->entries;
	x.keys = b->keys;
	x.store_version = b->store_version;
	x.removed = b->removed;
	x.live_v4_lens = b->live_v4_lens;
	memcpy(x.live_v6_lens, b->live_v6_lens, sizeof(x.live_v6_lens));
	return !memcmp(&x, b, sizeof(x));
}

/*
 * The live config becomes @next. When the program would see no change
 * (only the bookkeeping moved: entries, keys, the store's version), it is
 * rewritten in place: the kernel copies the value over itself, and every
 * field a packet reads keeps its bytes, so no packet can see a mix. Else
 * a swap to the same maps with the new config.
 */
int sxdp_publish_config(struct sxdp_handle *h, const struct sieve_xdp_config *next,
			int bloom_fd, int exact_fd)
{
	struct sieve_xdp_config cur, n = *next;
	uint32_t live;
	int ret = sxdp_read_config(h, &cur, &live);

	if (ret)
		return ret;
	/* Written in this sieve's layout, whatever @next was built with. */
	n.layout = SIEVE_XDP_LAYOUT;
	if (same_for_packets(&cur, &n))
		return bpf_map_update_elem(h->cfg_fd, &live, &n, BPF_EXIST) ? -errno : 0;
	return sxdp_swap(h, &n, bloom_fd, exact_fd);
}

/* The live maps, as new fds; exact_fd -1 when the generation has none. */
static int live_maps(struct sxdp_handle *h, const struct sieve_xdp_config *cfg, int *bloom_fd,
		     int *exact_fd)
{
	uint32_t gen;
	int ret = read_active(h, &gen);

	*bloom_fd = *exact_fd = -1;
	if (ret)
		return ret;
	/* The filter: a map in the outer map of the generation's backend. */
	*bloom_fd = sxdp_slot_map_fd(sxdp_backend_of(cfg->flags)->outer_fd(h), gen);
	if (*bloom_fd < 0)
		return *bloom_fd;
	if (!(cfg->flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY)))
		return 0;
	*exact_fd = sxdp_slot_map_fd(h->exact_fd, gen);
	if (*exact_fd >= 0)
		return 0;
	ret = *exact_fd;
	close(*bloom_fd);
	*bloom_fd = -1;
	return ret;
}

int sxdp_exact_reorigin(struct sxdp_handle *h, const struct sxdp_keys *entries)
{
	struct sxdp_keys keys = { 0 };
	struct sieve_xdp_config cfg;
	int bloom_fd, exact_fd, ret;
	uint32_t id;
	size_t i;

	ret = sxdp_read_config(h, &cfg, NULL);
	if (ret || !(cfg.flags & (SIEVE_XDP_F_EXACT | SIEVE_XDP_F_HASH_ONLY)))
		return ret;
	ret = sxdp_expand(entries, &cfg, &keys);
	if (!ret)
		ret = live_maps(h, &cfg, &bloom_fd, &exact_fd);
	if (ret) {
		sxdp_keys_free(&keys);
		return ret == -E2BIG ? 1 : ret;
	}
	/* One word a key, which a packet reads whole: the old id or the new. */
	for (i = 0; !ret && i < keys.n; i++) {
		id = sxdp_origin_of(h->origins, &keys.keys[i]);
		if (bpf_map_update_elem(exact_fd, &keys.keys[i], &id, BPF_EXIST) && errno != ENOENT)
			ret = -errno;
	}
	close(bloom_fd);
	if (exact_fd >= 0)
		close(exact_fd);
	sxdp_keys_free(&keys);
	return ret;
}

/*
 * The config a live add of @fresh makes: the live probe lengths
 * extended, the keys of @fresh counted on top. 1 if it needs a rebuild
 * instead (a new plan, or past the capacity). O(fresh): the rest of the
 * list is never read.
 */
static int add_config(const struct sieve_xdp_config *cur, const struct sxdp_keys *fresh,
		      struct sxdp_keys *keys, struct sieve_xdp_config *next)
{
	int ret;

	*next = *cur;
	/* Maps of another digest (an older sieve's): rebuilt, never mixed. */
	if (cur->digest != SIEVE_XDP_DIGEST || sxdp_config_extend(next, fresh))
		return 1;
	/* A prefix stored before then may sit longer than these lengths say. */
	sxdp_note_live_lens(cur, next);
	ret = sxdp_expand(fresh, next, keys);
	if (ret == -E2BIG)
		return 1;
	if (ret)
		return ret;
	next->entries = cur->entries + fresh->n;
	next->keys = cur->keys + keys->n;
	/*
	 * Past capacity the rate would climb: a bigger generation. Past the
	 * extra keys a plan may make, a rebuild would refuse the list: it is
	 * refused now instead (ops.c enforces adds before their commit).
	 */
	/* Removed keys keep their bits in the filter: they count too. */
	return next->keys + cur->removed > cur->capacity ||
	       next->keys > next->entries + SXDP_MAX_EXTRA_KEYS;
}

int sxdp_add_live(struct sxdp_handle *h, const struct sxdp_keys *fresh, uint64_t store_version)
{
	struct sxdp_keys keys = { 0 };
	struct sieve_xdp_config cur, next;
	int bloom_fd, exact_fd, ret;

	ret = sxdp_read_config(h, &cur, NULL);
	if (!ret)
		ret = add_config(&cur, fresh, &keys, &next);
	if (ret)
		goto out;
	next.store_version = store_version;
	/* Another backend's live adds (the filter's need the list). */
	if (sxdp_backend_of(next.flags)->add_live != sxdp_gen_add_live) {
		ret = 1;
		goto out;
	}
	ret = live_maps(h, &next, &bloom_fd, &exact_fd);
	if (ret)
		goto out;
	/* Into the maps packets use now: a new entry drops from here on. */
	ret = sxdp_filter_insert(&next, bloom_fd, exact_fd, keys.keys, keys.n, true, h->origins);
	/* Then out of the removed digests, if one was removed before. */
	if (!ret)
		ret = sxdp_removed_forget(h, &next, &keys);
	if (!ret)
		ret = sxdp_publish_config(h, &next, bloom_fd, exact_fd);
	close(bloom_fd);
	if (exact_fd >= 0)
		close(exact_fd);
out:
	sxdp_keys_free(&keys);
	return ret;
}

int sxdp_gen_add_live(struct sxdp_handle *h, const struct sxdp_keys *fresh,
		      const struct sxdp_keys *list, uint64_t store_version)
{
	return sxdp_add_live(h, fresh, store_version);
}

int sxdp_set_version(struct sxdp_handle *h, uint64_t store_version)
{
	struct sieve_xdp_config cfg;
	uint32_t live;
	int ret = sxdp_read_config(h, &cfg, &live);

	if (ret)
		return ret;
	cfg.store_version = store_version;
	return bpf_map_update_elem(h->cfg_fd, &live, &cfg, BPF_EXIST) ? -errno : 0;
}
