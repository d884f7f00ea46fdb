// SPDX-License-Identifier: GPL-2.0
/*
 * Recorded attachments that do not enforce their list: a change is kept
 * in the store (the list of record; the agent or attach brings the
 * interface back to it), and says which attachments it did not reach,
 * and why, with an exit status of its own (EXIT_NOT_ENFORCED), so that a
 * script never takes a stored change for an enforced one.
 */
#include <stdio.h>

#include "cli.h"
#include "json.h"
#include "xdp_enforce.h"

const char *xdp_iface_label(uint64_t netns, const char *ifname, char *buf, size_t len)
{
	if (netns == sxdp_netns())
		snprintf(buf, len, "%s", ifname);
	else
		snprintf(buf, len, "%s (netns %llu)", ifname, (unsigned long long)netns);
	return buf;
}

int xdp_report_unreached(const char *list, const struct sxdp_op_result *r)
{
	char label[64], why[SXDP_WHY_MAX];
	size_t i;

	if (!r->unreached)
		return EXIT_OK;
	for (i = 0; i < r->unreached && i < SXDP_UNREACHED_MAX; i++) {
		const struct sxdp_unreached *u = &r->unreached_ifs[i];

		fprintf(stderr, "sieve: %s: %s: recorded, NOT enforcing: %s\n", list,
			xdp_iface_label(u->netns, u->iface, label, sizeof(label)),
			sxdp_enforce_why(u->state, u->iface, u->err, why, sizeof(why)));
	}
	if (r->unreached > SXDP_UNREACHED_MAX)
		fprintf(stderr, "sieve: %s: and %zu more\n", list,
			r->unreached - SXDP_UNREACHED_MAX);
	fprintf(stderr, "sieve: %s: the change is in the store (version %llu), not enforced by "
		"%zu recorded interface%s (exit %d)\n", list, (unsigned long long)r->version,
		r->unreached, r->unreached == 1 ? "" : "s", EXIT_NOT_ENFORCED);
	return EXIT_NOT_ENFORCED;
}

void xdp_status_unenforced(bool json, uint64_t netns, const char *ifname, const char *list,
			   enum sxdp_enforce st, int err)
{
	char label[64], why[SXDP_WHY_MAX];

	sxdp_enforce_why(st, ifname, err, why, sizeof(why));
	if (!json) {
		printf("%s: list %s, recorded, NOT enforcing: %s\n",
		       xdp_iface_label(netns, ifname, label, sizeof(label)), list, why);
		return;
	}
	json_object(NULL);
	json_str("iface", ifname);
	json_u64("netns", netns);
	json_str("list", list);
	json_bool("recorded", true);
	json_str("state", sxdp_enforce_word(st));
	json_str("why", why);
	json_end();
}
