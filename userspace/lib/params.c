// SPDX-License-Identifier: GPL-2.0
/*
 * libsieve's struct sieve_params (installed API, kept as it is) turned
 * into the create contract's shared form (kmod/create.h), so that local
 * filters, the device client and sieve_params_check() judge a request by
 * the very rules the module applies.
 */
#include "params.h"

int sieve_params_spec(const struct sieve_params *p, struct sieve_create_spec *out)
{
	/* libsieve.h lets geo.type be 0 for "the filter's type". */
	if ((p->flags & SIEVE_CREATE_GEOMETRY) && p->geo.type && p->geo.type != p->type)
		return -EINVAL;
	*out = (struct sieve_create_spec) {
		.type = p->type,
		.flags = p->flags,
		.capacity = p->capacity,
		.fpp_ppb = p->fpp_ppb,
		/* Ignored without its flag here; the contract wants it 0. */
		.seed = p->flags & SIEVE_CREATE_SEED ? p->seed : 0,
		.growth = p->growth,
		.max_layers = p->max_layers,
	};
	return 0;
}

void sieve_params_geometry(const struct sieve_params *p, struct sieve_geometry *out)
{
	*out = p->geo;
	out->type = p->type;
	out->seed = 0;
}

int sieve_params_check(const struct sieve_params *p)
{
	struct sieve_create_spec spec;
	int err = sieve_params_spec(p, &spec);

	return err ? err : sieve_create_check(&spec);
}
