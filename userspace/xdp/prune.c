// SPDX-License-Identifier: GPL-2.0
/*
 * Pins that outlive their namespace, and taking every attachment down.
 *
 * Pin folders are named after the namespace's inode (netns-N), and the
 * store names an attachment's namespace the same way. An inode number is
 * reused once its namespace is gone, so it alone cannot tell a deleted
 * namespace's leftovers from a new namespace's state. Each interface
 * folder therefore holds the identity of the namespace that made it: a
 * one-entry array map pinned as SXDP_NETNS_PIN, holding the namespace's
 * cookie (SO_NETNS_COOKIE, Linux 5.14: unique for the boot, never
 * reused) and its inode. A folder is that namespace's only while a
 * namespace with inode N is found (a process in it, or a bind mount such
 * as /run/netns/NAME) whose cookie is the one recorded.
 *
 * Prune, for each folder of a namespace that is gone or another's: the
 * pins go (its link, detached when the interface went with its
 * namespace, enforces nothing), and so do the store's attachments of that
 * namespace, which would otherwise be restored, or reached by changes, in
 * whatever namespace gets the number next. A folder whose link still runs
 * on an interface is never pruned on absence alone (a namespace held only
 * by an open fd is not found): only a recorded cookie that differs proves
 * it another's. Pins whose link is defunct in a live namespace (its
 * interface went) go too; their attachment stays, for the agent to
 * attach again when the interface comes back.
 *
 * Empty netns-N folders are removed by whoever empties them (detach, a
 * failed attach, prune); sxdp_lock_ns makes a folder again when one is
 * removed under it.
 */
#define _GNU_SOURCE		/* setns */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "xdp.h"
#include "store.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE	71
#endif

struct netns_id {
	__u64 cookie;	/* 0: the kernel has no SO_NETNS_COOKIE */
	__u64 ino;
};

/* The cookie of the namespace the caller runs in; 0 where the kernel has none. */
static uint64_t cookie_here(void)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		cookie = 0;
	close(fd);
	return cookie;
}

uint64_t sxdp_netns_cookie(void)
{
	static uint64_t cookie;

	if (!cookie)
		cookie = cookie_here();
	return cookie;
}

/*
 * The cookie of the namespace @path names, read by a child that enters it
 * (so the caller, maybe threaded, stays where it is); 0 if unknown.
 */
static uint64_t cookie_of(const char *path)
{
	uint64_t cookie = 0;
	int pfd[2], status;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return 0;
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0 && !setns(fd, CLONE_NEWNET))
			cookie = cookie_here();
		if (write(pfd[1], &cookie, sizeof(cookie)) != sizeof(cookie))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], &cookie, sizeof(cookie)) != sizeof(cookie))
		cookie = 0;
	close(pfd[0]);
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	return cookie;
}

static bool names_ns(const char *path, uint64_t ino)
{
	struct stat st;

	return !stat(path, &st) && st.st_ino == ino;
}

/* A path to the namespace of inode @ino: a process's, or an nsfs bind mount. */
static bool find_ns(uint64_t ino, char *path, size_t len)
{
	char line[4096], mnt[1024], fstype[64];
	struct dirent *e;
	bool found = false;
	FILE *f;
	DIR *d;

	snprintf(path, len, "/proc/self/ns/net");
	if (names_ns(path, ino))
		return true;
	f = fopen("/proc/self/mountinfo", "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE ... */
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "nsfs") ||
		    sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1)
			continue;
		snprintf(path, len, "%s", mnt);	/* octal escapes: a name with spaces is missed */
		found = names_ns(path, ino);
	}
	if (f)
		fclose(f);
	d = found ? NULL : opendir("/proc");
	while (d && !found && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, len, "/proc/%s/ns/net", e->d_name);
		found = names_ns(path, ino);
	}
	if (d)
		closedir(d);
	return found;
}

static int read_id(const char *dir, struct netns_id *id)
{
	__u32 zero = 0;
	int fd = sxdp_pin_get(dir, SXDP_NETNS_PIN), ret = 0;

	if (fd < 0)
		return -ENOENT;
	if (bpf_map_lookup_elem(fd, &zero, id))
		ret = -errno;
	close(fd);
	return ret;
}

static int mark_id(const char *dir, const struct netns_id *id)
{
	char path[320];
	__u32 zero = 0;
	int fd, ret = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sieve_netns", sizeof(zero), sizeof(*id), 1, NULL);
	if (fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", dir, SXDP_NETNS_PIN);
	unlink(path);	/* an identity copied from elsewhere is replaced */
	if (bpf_map_update_elem(fd, &zero, id, BPF_ANY) || bpf_obj_pin(fd, path))
		ret = -errno;
	close(fd);
	return ret;
}

int sxdp_netns_mark(const char *dir)
{
	struct netns_id id = { .cookie = sxdp_netns_cookie(), .ino = sxdp_netns() };

	return mark_id(dir, &id);
}

bool sxdp_netns_foreign(const char *dir)
{
	struct netns_id id;

	return !read_id(dir, &id) && id.cookie && sxdp_netns_cookie() &&
	       (id.cookie != sxdp_netns_cookie() || id.ino != sxdp_netns());
}

void sxdp_tidy_netns(uint64_t netns)
{
	char dir[256];

	sxdp_pin_dir_ns(dir, sizeof(dir), netns, NULL);
	rmdir(dir);	/* ENOTEMPTY: another interface's folder is in it */
}

/*
 * Takes the link off (now, not when the last reference goes) and every pin
 * of @dir. A link pin that cannot be detached (it is no link) leaves the
 * folder as it is, for someone to look at: 0, or -errno with @what.
 */
static int take_down(const char *dir, const char **what)
{
	int fd = sxdp_pin_get(dir, SIEVE_XDP_LINK_PIN), ret = 0;
	struct stat st;

	if (fd < 0 && errno != ENOENT) {
		*what = "opening its link pin";
		return -errno;
	}
	if (fd >= 0) {
		if (bpf_link_detach(fd))
			ret = -errno;
		close(fd);
		if (ret) {
			*what = "detaching its link pin";
			return ret;
		}
	}
	sxdp_remove_staged(dir);
	if (!stat(dir, &st)) {
		*what = "removing its pins";
		return -ENOTEMPTY;	/* a folder, or a file, bpffs would not unlink */
	}
	return 0;
}

/* What a namespace folder's inode names now. */
struct ns_state {
	uint64_t ino;
	bool found;
	uint64_t cookie;	/* the found one's; 0 unknown */
};

static void ns_state(uint64_t ino, struct ns_state *ns)
{
	char path[1100];

	ns->ino = ino;
	ns->found = find_ns(ino, path, sizeof(path));
	ns->cookie = 0;
	if (ns->found)
		ns->cookie = ino == sxdp_netns() ? sxdp_netns_cookie() : cookie_of(path);
}

/* Why the folder @dir of @ns is to go, or NULL if it stays. */
static const char *prune_why(const struct ns_state *ns, const char *dir, bool *record)
{
	struct netns_id id;
	bool has_id = !read_id(dir, &id) && id.cookie;
	bool linked = sxdp_link_ifindex_in(dir) != 0;

	*record = false;
	if (has_id && ns->cookie && id.cookie != ns->cookie) {
		*record = true;
		return ns->found ? "another namespace has its number" : "its namespace is gone";
	}
	if (!ns->found && !linked) {
		*record = true;
		return "its namespace is gone";
	}
	if (!linked)
		return "its interface is gone";
	return NULL;
}

/*
 * Each namespace folder, read whole first (taking one down may remove
 * the folder being read): one that fails does not stop the others.
 */
static int for_each_netns(void (*fn)(uint64_t ino, void *arg), void *arg)
{
	unsigned long long ino, *v = NULL, *grown;
	size_t n = 0, i;
	struct dirent *e;
	char end;
	int ret = 0;
	DIR *d = opendir(SIEVE_XDP_PIN_ROOT);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "netns-%llu%c", &ino, &end) == 1) {
			grown = realloc(v, (n + 1) * sizeof(*v));
			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			v = grown;
			v[n++] = ino;
		}
	closedir(d);
	for (i = 0; !ret && i < n; i++)
		fn(v[i], arg);
	free(v);
	return ret;
}

struct walk {
	struct sxdp_store *s;
	bool all;		/* detach --all; else prune */
	sxdp_removed_fn fn;
	void *arg;
	char *err;		/* the first failure's */
	size_t errlen;
	int ret;		/* the first failure's -errno */
};

/*
 * One interface (@r->iface "" if a whole namespace, or the store) that
 * could not be done: reported, and the walk goes on to the next.
 */
static void walk_failed(struct walk *w, struct sxdp_removed *r, int err, const char *what)
{
	char msg[512];

	if (r->iface[0])
		snprintf(msg, sizeof(msg), "netns-%llu/%s: %s: %s", (unsigned long long)r->netns,
			 r->iface, what, strerror(-err));
	else
		snprintf(msg, sizeof(msg), "%s: %s", what, strerror(-err));
	if (!w->ret) {
		snprintf(w->err, w->errlen, "%s", msg);
		w->ret = err;
	}
	r->error = msg;
	if (w->fn)
		w->fn(r, w->arg);
	r->error = NULL;	/* @msg is this call's */
}

/* @msg: why it failed, in the store's words ("" if none). */
static int drop_record(struct walk *w, uint64_t ino, const char *ifname, char *msg, size_t len)
{
	msg[0] = '\0';
	if (!w->s)
		return 0;
	return sxdp_store_attach_del(w->s, ino, ifname, msg, len);
}

/*
 * A folder that stays, of an older sieve (no identity), whose link runs:
 * its namespace is alive, so it is the one found with its inode, and its
 * identity is written now. Else, once that namespace is deleted, the next
 * namespace with its number would pass for it and inherit its record.
 */
static void mark_legacy(const struct ns_state *ns, const char *dir)
{
	struct netns_id id = { .cookie = ns->cookie, .ino = ns->ino };
	struct netns_id had;

	if (ns->cookie && (read_id(dir, &had) || !had.cookie) && sxdp_link_ifindex_in(dir))
		mark_id(dir, &id);
}

/*
 * One interface folder of namespace @ns: taken down if detach --all, or if
 * prune finds it stale. Its record goes only once its link is off.
 */
static void walk_iface(struct walk *w, const struct ns_state *ns, const char *ifname)
{
	struct sxdp_removed r = { .netns = ns->ino };
	const char *what = NULL;
	char dir[256], msg[512];
	int lock_fd, ret;

	snprintf(r.iface, sizeof(r.iface), "%s", ifname);
	lock_fd = sxdp_lock_ns(ns->ino, ifname, false);
	if (lock_fd == -ENOENT)
		return;	/* detached meanwhile */
	if (lock_fd < 0)
		return walk_failed(w, &r, lock_fd, "taking its lock");
	sxdp_pin_dir_ns(dir, sizeof(dir), ns->ino, ifname);
	r.why = w->all ? "detached" : prune_why(ns, dir, &r.record);
	r.record |= w->all;
	if (!r.why)
		mark_legacy(ns, dir);
	if (r.why) {
		r.linked = sxdp_link_ifindex_in(dir) != 0;
		ret = take_down(dir, &what);
		if (ret == -ENOTEMPTY || !ret) {	/* its link is off */
			int dropped = r.record ? drop_record(w, ns->ino, ifname, msg,
							     sizeof(msg)) : 0;

			if (dropped) {
				r.record = false;
				ret = dropped;
				what = msg[0] ? msg : "removing its record";
			}
		} else {
			r.record = false;
		}
		if (ret)
			walk_failed(w, &r, ret, what);
		else if (w->fn)
			w->fn(&r, w->arg);
	}
	sxdp_unlock(lock_fd);
}

/*
 * The interface folders in @dir, read whole first (taking one down changes
 * the folder being read): *@names, to free; their count, or -errno.
 */
static int read_names(const char *dir, char (**names)[IF_NAMESIZE])
{
	char (*v)[IF_NAMESIZE] = NULL, (*grown)[IF_NAMESIZE];
	struct dirent *e;
	int n = 0, cap = 0;
	DIR *d = opendir(dir);

	*names = NULL;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		if (!sxdp_ifname_ok(e->d_name))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = grown;
		}
		snprintf(v[n++], IF_NAMESIZE, "%.*s", IF_NAMESIZE - 1, e->d_name);
	}
	closedir(d);
	*names = v;
	return n;
}

/* Upgrades cut short in a namespace that is gone (or detach --all): none will finish them. */
static int take_down_staged(uint64_t ino)
{
	char (*names)[IF_NAMESIZE], dir[256];
	int n, i;

	sxdp_staging_dir(dir, sizeof(dir), ino, NULL);
	n = read_names(dir, &names);
	for (i = 0; i < n; i++) {
		const char *what;

		sxdp_staging_dir(dir, sizeof(dir), ino, names[i]);
		take_down(dir, &what);	/* what stays, the next command's recovery meets */
	}
	free(names);
	sxdp_staging_dir(dir, sizeof(dir), ino, NULL);
	rmdir(dir);
	return n < 0 ? n : 0;
}

static void walk_netns(uint64_t ino, void *arg)
{
	char (*names)[IF_NAMESIZE], dir[256], what[300];
	struct sxdp_removed r = { .netns = ino };
	struct walk *w = arg;
	struct ns_state ns;
	int n, i, ret;

	ns_state(ino, &ns);
	sxdp_pin_dir_ns(dir, sizeof(dir), ino, NULL);
	n = read_names(dir, &names);
	if (n < 0) {
		snprintf(what, sizeof(what), "reading %s", dir);
		return walk_failed(w, &r, n, what);
	}
	for (i = 0; i < n; i++)
		walk_iface(w, &ns, names[i]);
	free(names);
	ret = !ns.found || w->all ? take_down_staged(ino) : 0;
	if (ret) {
		sxdp_staging_dir(dir, sizeof(dir), ino, NULL);
		snprintf(what, sizeof(what), "reading %s", dir);
		walk_failed(w, &r, ret, what);
	}
	sxdp_tidy_netns(ino);
}

/*
 * The records left once the folders are done, of interfaces without pins
 * (a folder that failed keeps its record): detach --all drops them all;
 * prune those of a namespace that is not found (its pins went by hand,
 * or with a reboot).
 */
static void walk_left_records(struct walk *w)
{
	struct sxdp_attachment *a = NULL;
	char dir[256], path[1100], msg[512] = "";
	struct stat st;
	size_t n = 0, i;
	int ret = sxdp_store_attachments(w->s, NULL, &a, &n, msg, sizeof(msg));

	if (ret) {
		struct sxdp_removed r = { 0 };

		return walk_failed(w, &r, ret, msg[0] ? msg : "reading the store's attachments");
	}
	for (i = 0; i < n; i++) {
		struct sxdp_removed r = { .netns = a[i].netns, .record = true,
					  .why = w->all ? "detached" : "its namespace is gone" };

		sxdp_pin_dir_ns(dir, sizeof(dir), a[i].netns, a[i].iface);
		/* A folder left is one that failed (reported): its record stays with it. */
		if (!stat(dir, &st) || (!w->all && find_ns(a[i].netns, path, sizeof(path))))
			continue;
		snprintf(r.iface, sizeof(r.iface), "%s", a[i].iface);
		ret = drop_record(w, a[i].netns, a[i].iface, msg, sizeof(msg));
		if (ret) {
			r.record = false;
			walk_failed(w, &r, ret, msg[0] ? msg : "removing its record");
		} else if (w->fn) {
			w->fn(&r, w->arg);
		}
	}
	free(a);
}

static int walk(struct walk *w)
{
	char dir[256];
	int ret;

	w->err[0] = '\0';
	ret = for_each_netns(walk_netns, w);
	if (ret) {
		struct sxdp_removed r = { 0 };

		snprintf(dir, sizeof(dir), "reading %s", SIEVE_XDP_PIN_ROOT);
		walk_failed(w, &r, ret, dir);
	}
	if (w->s)
		walk_left_records(w);
	snprintf(dir, sizeof(dir), "%s/staging", SIEVE_XDP_PIN_ROOT);
	rmdir(dir);
	return w->ret;
}

int sxdp_prune(struct sxdp_store *s, sxdp_removed_fn fn, void *arg, char *err, size_t errlen)
{
	struct walk w = { .s = s, .fn = fn, .arg = arg, .err = err, .errlen = errlen };

	if (geteuid())
		return -EPERM;
	return walk(&w);
}

int sxdp_detach_all(struct sxdp_store *s, sxdp_removed_fn fn, void *arg, char *err,
		    size_t errlen)
{
	struct walk w = { .s = s, .all = true, .fn = fn, .arg = arg, .err = err,
			  .errlen = errlen };

	if (geteuid())
		return -EPERM;
	return walk(&w);
}
