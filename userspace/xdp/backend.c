// SPDX-License-Identifier: GPL-2.0
/*
 * Picking a backend's table (backend.h): once, from a config's flags or a
 * name. The flags hold at most one backend bit; the default backend's is
 * 0, so it is the one left when no other bit is set.
 */
#include <string.h>

#include "backend.h"

const struct sxdp_backend_ops *const sxdp_backends[] = {
	&sxdp_bloom_ops,
	&sxdp_blocked_ops,
	&sxdp_filter_ops,
	NULL,
};

const struct sxdp_backend_ops *sxdp_backend_of(uint32_t cfg_flags)
{
	int i;

	for (i = 1; sxdp_backends[i]; i++)
		if (cfg_flags & sxdp_backends[i]->cfg_flag)
			return sxdp_backends[i];
	return sxdp_backends[0];
}

uint32_t sxdp_backend_flags(void)
{
	uint32_t flags = 0;
	int i;

	for (i = 0; sxdp_backends[i]; i++)
		flags |= sxdp_backends[i]->cfg_flag;
	return flags;
}

const struct sxdp_backend_ops *sxdp_backend_by_name(const char *name)
{
	int i;

	for (i = 0; sxdp_backends[i]; i++)
		if (!strcmp(name, sxdp_backends[i]->name))
			return sxdp_backends[i];
	return NULL;
}
