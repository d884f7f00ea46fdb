/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The create contract, written once: which flags and fields of a new
 * filter go together, their ranges, and what a filter's name may be.
 * Compiled unchanged into sieve.ko (SIEVE_IOC_CREATE, sieve_create_kernel(),
 * snapshot import) and into libsieve (local filters, the device client),
 * so no way in accepts what another refuses. The limits are in
 * <linux/sieve.h>.
 */
#ifndef SIEVE_CREATE_H
#define SIEVE_CREATE_H

#include <sieve_env.h>	/* this folder's in the kernel; userspace builds bring theirs */
#include <linux/sieve.h>

/**
 * struct sieve_create_spec - a request for a new filter, as every way in
 *	gives it (the shared form of struct sieve_create's fields)
 * @type: enum sieve_filter_type.
 * @flags: enum sieve_create_flags.
 * @capacity: keys at @fpp_ppb, 1 to %SIEVE_MAX_CAPACITY; 0 with
 *	%SIEVE_CREATE_GEOMETRY. Scalable: of the first layer.
 * @fpp_ppb: target rate, 1 to %SIEVE_PPB - 1; 0 with %SIEVE_CREATE_GEOMETRY.
 * @seed: with %SIEVE_CREATE_SEED, the seed; else 0.
 * @growth: scalable: %SIEVE_MIN_GROWTH to %SIEVE_MAX_GROWTH, 0 for
 *	%SIEVE_DEFAULT_GROWTH; else 0.
 * @max_layers: scalable: %SIEVE_MIN_LAYERS to %SIEVE_MAX_LAYERS, 0 for
 *	%SIEVE_DEFAULT_LAYERS; else 0.
 *
 * The geometry itself (%SIEVE_CREATE_GEOMETRY) is checked by
 * sieve_geometry_check() when the filter is made.
 */
struct sieve_create_spec {
	u32 type;
	u32 flags;
	u64 capacity;
	u32 fpp_ppb;
	u32 seed;
	u32 growth;
	u32 max_layers;
};

/*
 * 0 if @s is a valid request; -E2BIG a capacity above %SIEVE_MAX_CAPACITY;
 * else -EINVAL. Whether sizing can reach the rate is sieve_size()'s to say.
 */
int sieve_create_check(const struct sieve_create_spec *s);
/*
 * What the filter of a checked request has: growth 0 and max_layers 1
 * unless scalable, else its values with 0 replaced by the defaults.
 */
void sieve_create_layering(const struct sieve_create_spec *s, u32 *growth, u32 *max_layers);
/*
 * The layering of a filter that exists (as a snapshot or SIEVE_IOC_INFO
 * gives it, defaults resolved): 0 or -EINVAL.
 */
int sieve_layering_check(u32 flags, u32 growth, u32 max_layers);

/*
 * A filter name: 1 to %SIEVE_NAME_MAX - 1 bytes of [A-Za-z0-9._-], then a
 * NUL; at most %SIEVE_NAME_MAX bytes are read. 0, -ENAMETOOLONG (no NUL in
 * %SIEVE_NAME_MAX bytes) or -EINVAL.
 */
int sieve_name_check(const char *name);
/*
 * The same for the name field of an ioctl struct, whose bytes after the
 * NUL must be zero (so that names can grow): 0, -ENAMETOOLONG or -EINVAL.
 */
int sieve_name_field_check(const char name[SIEVE_NAME_MAX]);

#endif /* SIEVE_CREATE_H */
