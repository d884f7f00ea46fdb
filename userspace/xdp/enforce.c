// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a recorded attachment enforces its list. The store records the
 * attachments of every network namespace; their pins are reached through
 * the BPF filesystem, which is the host's whatever the network namespace,
 * so one command reaches them all, except from a mount namespace without
 * it: `ip netns exec` mounts a /sys of its own, with nothing at
 * /sys/fs/bpf. After a reboot the pins are gone and the store still
 * records the attachment, until the agent or attach restores it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>

#include "enforce.h"
#include "xdp.h"

bool sxdp_bpffs_here(void)
{
	struct statfs sf;

	return !statfs("/sys/fs/bpf", &sf) && sf.f_type == BPF_FS_MAGIC;
}

enum sxdp_enforce sxdp_pins_state(uint64_t netns, const char *ifname, int *err)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char dir[256];
	int fd, ok;

	*err = 0;
	if (!sxdp_bpffs_here())
		return SXDP_NO_BPFFS;
	if (!sxdp_ifname_ok(ifname)) {
		*err = -EINVAL;
		return SXDP_UNREADABLE;
	}
	sxdp_pin_dir_ns(dir, sizeof(dir), netns, ifname);
	if (access(dir, F_OK)) {
		*err = -errno;
		return errno == ENOENT ? SXDP_PINS_GONE : SXDP_UNREADABLE;
	}
	fd = sxdp_pin_get(dir, SIEVE_XDP_LINK_PIN);
	if (fd < 0)
		return SXDP_DETACHED;
	memset(&info, 0, sizeof(info));
	/* A link whose interface went away stays pinned with no ifindex. */
	ok = !bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_XDP &&
	     info.xdp.ifindex;
	close(fd);
	return ok ? SXDP_ENFORCING : SXDP_DETACHED;
}

const char *sxdp_enforce_word(enum sxdp_enforce st)
{
	return st == SXDP_ENFORCING ? "enforcing" : st == SXDP_BEHIND ? "behind" : "not-enforcing";
}

const char *sxdp_enforce_why(enum sxdp_enforce st, const char *ifname, int err, char *buf,
			     size_t len)
{
	switch (st) {
	case SXDP_ENFORCING:
		snprintf(buf, len, "enforcing");
		break;
	case SXDP_BEHIND:
		snprintf(buf, len, "its maps hold an older version of the list");
		break;
	case SXDP_NO_BPFFS:
		snprintf(buf, len, "no BPF filesystem at /sys/fs/bpf here (`ip netns exec` mounts "
			 "a /sys of its own: run sieve with nsenter --net=/run/netns/NAME)");
		break;
	case SXDP_PINS_GONE:
		snprintf(buf, len, "its pins are gone (a reboot, or removed outside sieve): the "
			 "agent, or sieve xdp attach %s in its namespace, restores it", ifname);
		break;
	case SXDP_OLDER_PROG:
		snprintf(buf, len, "an older sieve's program runs there, with maps of another "
			 "layout: sieve xdp attach %s replaces it", ifname);
		break;
	case SXDP_DETACHED:
		snprintf(buf, len, "its program is detached (no link, or its interface went "
			 "away): sieve xdp attach %s in its namespace", ifname);
		break;
	default:
		snprintf(buf, len, "its pins cannot be opened: %s", strerror(err < 0 ? -err : err));
	}
	return buf;
}
