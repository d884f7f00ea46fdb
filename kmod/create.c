// SPDX-License-Identifier: GPL-2.0
/*
 * The create contract (create.h): the one check of a new filter's flags,
 * fields and name, for the module and libsieve alike.
 */
#include "create.h"

void sieve_create_layering(const struct sieve_create_spec *s, u32 *growth, u32 *max_layers)
{
	if (!(s->flags & SIEVE_CREATE_SCALABLE)) {
		*growth = 0;
		*max_layers = 1;
		return;
	}
	*growth = s->growth ? s->growth : SIEVE_DEFAULT_GROWTH;
	*max_layers = s->max_layers ? s->max_layers : SIEVE_DEFAULT_LAYERS;
}
EXPORT_SYMBOL_NS_GPL(sieve_create_layering, SIEVE_INTERNAL_NS);

int sieve_layering_check(u32 flags, u32 growth, u32 max_layers)
{
	if (!(flags & SIEVE_CREATE_SCALABLE))
		return growth || max_layers != 1 ? -EINVAL : 0;
	if (growth < SIEVE_MIN_GROWTH || growth > SIEVE_MAX_GROWTH ||
	    max_layers < SIEVE_MIN_LAYERS || max_layers > SIEVE_MAX_LAYERS)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_layering_check, SIEVE_INTERNAL_NS);

/* Either a target (capacity and rate) or an explicit geometry, not both. */
static int sieve_sizing_check(const struct sieve_create_spec *s)
{
	if (s->flags & SIEVE_CREATE_GEOMETRY)
		return s->capacity || s->fpp_ppb ? -EINVAL : 0;
	if (!s->capacity || !s->fpp_ppb || s->fpp_ppb >= SIEVE_PPB)
		return -EINVAL;
	return 0;
}

int sieve_create_check(const struct sieve_create_spec *s)
{
	bool scalable = s->flags & SIEVE_CREATE_SCALABLE;
	u32 growth, max_layers;

	if ((s->flags & ~SIEVE_CREATE_FLAGS_ALL) ||
	    (scalable && (s->flags & SIEVE_CREATE_GEOMETRY)) ||
	    s->type < SIEVE_BLOOM || s->type > SIEVE_CUCKOO ||
	    (!(s->flags & SIEVE_CREATE_SEED) && s->seed) || sieve_sizing_check(s))
		return -EINVAL;
	/* Only a scalable filter has layering to ask for. */
	if (!scalable && (s->growth || s->max_layers))
		return -EINVAL;
	sieve_create_layering(s, &growth, &max_layers);
	if (sieve_layering_check(s->flags, growth, max_layers))
		return -EINVAL;
	/* Well-formed, but more than any filter may be sized for. */
	return s->capacity > SIEVE_MAX_CAPACITY ? -E2BIG : 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_create_check, SIEVE_INTERNAL_NS);

/* ASCII only: the kernel's isalnum() also takes Latin-1 letters. */
static bool sieve_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

int sieve_name_check(const char *name)
{
	size_t len, i;

	if (!name)
		return -EINVAL;
	len = strnlen(name, SIEVE_NAME_MAX);
	if (len == SIEVE_NAME_MAX)
		return -ENAMETOOLONG;
	if (!len)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!sieve_name_char(name[i]))
			return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_name_check, SIEVE_INTERNAL_NS);

int sieve_name_field_check(const char name[SIEVE_NAME_MAX])
{
	int err = sieve_name_check(name);
	size_t i;

	if (err)
		return err;
	for (i = strlen(name); i < SIEVE_NAME_MAX; i++)
		if (name[i])
			return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_name_field_check, SIEVE_INTERNAL_NS);
