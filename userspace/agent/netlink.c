// SPDX-License-Identifier: GPL-2.0
/*
 * Interfaces that come and go, from rtnetlink (RTMGRP_LINK) in the agent's
 * own network namespace. A link that goes away leaves its pins holding
 * maps no packet reaches; one that comes back (hotplug, a veth or a
 * namespace recreated) has a new ifindex the old link does not run on.
 * restore.c does the work; this file only reads the events.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "agent.h"

int sagent_netlink_open(char *err, size_t errlen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
	int fd, size = 1 << 20;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		snprintf(err, errlen, "opening an rtnetlink socket: %s", strerror(errno));
		return -errno;
	}
	/* Room for a burst (a namespace deleted with many links); overflow is handled anyway. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int ret = -errno;

		snprintf(err, errlen, "joining RTMGRP_LINK: %s", strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

/* The IFLA_IFNAME of a link message, or NULL. */
static const char *link_name(struct nlmsghdr *nh)
{
	struct ifinfomsg *ifi = NLMSG_DATA(nh);
	int len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi));
	struct rtattr *rta;

	if (len < 0)
		return NULL;
	for (rta = IFLA_RTA(ifi); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type != IFLA_IFNAME)
			continue;
		/* NUL-terminated by the kernel; checked all the same. */
		if (!memchr(RTA_DATA(rta), '\0', RTA_PAYLOAD(rta)) ||
		    strlen(RTA_DATA(rta)) >= IF_NAMESIZE)
			return NULL;
		return RTA_DATA(rta);
	}
	return NULL;
}

static void handle(struct sagent *ag, struct nlmsghdr *nh)
{
	const char *name;

	if (nh->nlmsg_type != RTM_NEWLINK && nh->nlmsg_type != RTM_DELLINK)
		return;
	name = link_name(nh);
	if (!name)
		return;
	if (nh->nlmsg_type == RTM_NEWLINK)
		sagent_link_up(ag, name);
	else
		sagent_link_gone(ag, name);
}

void sagent_netlink_read(struct sagent *ag, int fd)
{
	char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct sagent_restore_result r;
	struct nlmsghdr *nh;
	ssize_t n;
	int len;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			/* Events were lost: look at every attachment instead. */
			sagent_log(SAGENT_WARNING, "rtnetlink events were lost; checking every interface");
			sagent_restore_all(ag, false, &r);
			continue;
		}
		if (n <= 0)
			return;		/* EAGAIN: all read */
		len = n;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len))
			handle(ag, nh);
	}
}
