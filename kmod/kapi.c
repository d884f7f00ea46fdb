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

/* No file owns a kernel caller's filter, and it is always sized. */
#define SIEVE_KAPI_CREATE_FLAGS	(SIEVE_CREATE_SCALABLE | SIEVE_CREATE_SEED)

int sieve_create_kernel(const struct sieve_kernel_create *c, u32 *id)
{
	struct sieve_create_spec spec = {
		.type = c->type,
		.flags = c->flags,
		.capacity = c->capacity,
		.fpp_ppb = c->fpp_ppb,
		.seed = c->seed,
		.growth = c->growth,
		.max_layers = c->max_layers,
	};
	int err;

	might_sleep();
	err = sieve_name_check(c->name);
	if (err)
		return err;
	if (c->flags & ~SIEVE_KAPI_CREATE_FLAGS)
		return -EINVAL;
	err = sieve_create_check(&spec);
	return err ?: sieve_create(c->name, &spec, NULL, NULL, id);
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
