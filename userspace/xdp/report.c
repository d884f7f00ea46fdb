// SPDX-License-Identifier: GPL-2.0
/*
 * An interface's report (report.h): the live generation's config and
 * counters, the memory the kernel reports for its maps, the rate it is
 * expected to give now, its filter and the program that runs it.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "report.h"

int sxdp_iface_report(struct sxdp_handle *h, struct sxdp_iface_report *r)
{
	int ret;

	memset(r, 0, sizeof(*r));
	ret = sxdp_read_config(h, &r->cfg, NULL);
	if (!ret)
		ret = sxdp_read_stats(h, &r->stats);
	if (!ret)
		ret = sxdp_live_memory(h, &r->filter_bytes, &r->exact_bytes);
	if (!ret && (r->cfg.flags & SIEVE_XDP_F_V4TABLE))
		ret = sxdp_v4table_counts(h, &r->v4_covered, &r->v4_chunks, &r->v4table_bytes);
	if (!ret && h->origins_fd >= 0) {
		ret = sxdp_read_origin_drops(h, r->origin_drops);
		r->has_origins = !ret;
	}
	if (ret)
		return ret;
	snprintf(r->mode, sizeof(r->mode), "%s", sxdp_mode(h));
	r->fpr = sxdp_config_fpr(&r->cfg, r->cfg.keys + r->cfg.removed, &r->nbits);
	if (sxdp_backend_of(r->cfg.flags)->named) {
		if (sxdp_filter_name_of(r->cfg.filter.id, r->filter, sizeof(r->filter)))
			r->filter[0] = '\0';
		r->filter_gone = sxdp_filter_gone(&r->cfg);
	}
	/* -ENOENT: no link runs a program; prog.id stays 0. */
	sxdp_prog_running(h->netns, h->ifname, &r->prog);
	return 0;
}
