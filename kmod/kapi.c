// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel API (<linux/sieve_kapi.h>): thin wrappers over the
 * registry, for other modules.
 */
#include <linux/sieve_kapi.h>

#include "registry.h"

struct sieve *sieve_get(const char *name)
{
	struct sieve *s = sieve_lookup_name(name);

	return s ?: ERR_PTR(-ENOENT);
}
EXPORT_SYMBOL_GPL(sieve_get);

struct sieve *sieve_get_id(u32 id)
{
	struct sieve *s = sieve_lookup(id);

	return s ?: ERR_PTR(-ENOENT);
}
EXPORT_SYMBOL_GPL(sieve_get_id);

void sieve_put(struct sieve *s)
{
	might_sleep();
	sieve_release(s);
}
EXPORT_SYMBOL_GPL(sieve_put);

static bool sieve_key_ok(const void *key, u32 len)
{
	return key && len && len <= SIEVE_MAX_KEY_LEN;
}

int sieve_add(struct sieve *s, const void *key, u32 len, u32 flags)
{
	if (!sieve_key_ok(key, len) || (flags & ~SIEVE_ADD_FLAGS_ALL))
		return -EINVAL;
	return sieve_key_apply(s, SIEVE_BATCH_ADD, flags, key, len);
}
EXPORT_SYMBOL_GPL(sieve_add);

int sieve_contains(struct sieve *s, const void *key, u32 len)
{
	if (!sieve_key_ok(key, len))
		return -EINVAL;
	return sieve_key_apply(s, SIEVE_BATCH_QUERY, 0, key, len);
}
EXPORT_SYMBOL_GPL(sieve_contains);

int sieve_delete(struct sieve *s, const void *key, u32 len)
{
	if (!sieve_key_ok(key, len))
		return -EINVAL;
	return sieve_key_apply(s, SIEVE_BATCH_DELETE, 0, key, len);
}
EXPORT_SYMBOL_GPL(sieve_delete);

/* As SIEVE_IOC_CREATE's (struct sieve_create). */
#define SIEVE_KAPI_MAX_GROWTH	16

/*
 * What sizing does not check: name, flags, seed, growth, and a rate of 1
 * or more that halving (scalable) would bring into range.
 */
static int sieve_kernel_create_check(const struct sieve_kernel_create *c,
				     char name[SIEVE_NAME_MAX])
{
	bool scalable = c->flags & SIEVE_CREATE_SCALABLE;

	if (!c->name || strscpy(name, c->name, SIEVE_NAME_MAX) < 0 ||
	    sieve_name_check(name) ||
	    (c->flags & ~(SIEVE_CREATE_SCALABLE | SIEVE_CREATE_SEED)) ||
	    c->fpp_ppb >= SIEVE_PPB ||
	    (!(c->flags & SIEVE_CREATE_SEED) && c->seed))
		return -EINVAL;
	if (!scalable)
		return c->growth || c->max_layers ? -EINVAL : 0;
	if (c->growth < 2 || c->growth > SIEVE_KAPI_MAX_GROWTH ||
	    c->max_layers < 2 || c->max_layers > SIEVE_MAX_LAYERS)
		return -EINVAL;
	return 0;
}

int sieve_create_kernel(const struct sieve_kernel_create *c, u32 *id)
{
	bool scalable = c->flags & SIEVE_CREATE_SCALABLE;
	char name[SIEVE_NAME_MAX] = {};
	struct sieve_geometry geo;
	struct sieve_params p;
	int err;

	might_sleep();
	err = sieve_kernel_create_check(c, name);
	if (err)
		return err;
	/*
	 * Sizing checks the type, capacity and rate. A scalable filter's
	 * layer i is sized for fpp / 2^(i + 1), as through /dev/sieve.
	 */
	err = sieve_size(c->type, c->capacity, scalable ? c->fpp_ppb / 2 : c->fpp_ppb, &geo);
	if (err)
		return err;
	geo.seed = c->flags & SIEVE_CREATE_SEED ? c->seed : get_random_u32();
	p = (struct sieve_params) {
		.name = name,
		.type = c->type,
		.create_flags = c->flags,
		.fpp_ppb = c->fpp_ppb,
		.capacity = c->capacity,
		.growth = scalable ? c->growth : 0,
		.max_layers = scalable ? c->max_layers : 1,
	};
	return sieve_create(&p, &geo, id);
}
EXPORT_SYMBOL_GPL(sieve_create_kernel);

int sieve_destroy_kernel(u32 id)
{
	might_sleep();
	return sieve_destroy(id);
}
EXPORT_SYMBOL_GPL(sieve_destroy_kernel);

/* Defined in registry.c with the counter it reads. */
EXPORT_SYMBOL_GPL(sieve_memory_in_use);
