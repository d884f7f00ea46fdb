/* SPDX-License-Identifier: GPL-2.0 */
/* libsieve's struct sieve_params in the create contract's form (not installed). */
#ifndef SIEVE_LIB_PARAMS_H
#define SIEVE_LIB_PARAMS_H

#include "create.h"
#include "libsieve.h"

/*
 * @p in the shared form, fields libsieve.h says are ignored dropped:
 * 0, or -EINVAL for a geometry of another type. Not checked otherwise:
 * sieve_create_check() (or the module) does that.
 */
int sieve_params_spec(const struct sieve_params *p, struct sieve_create_spec *out);
/* The geometry @p gives (%SIEVE_CREATE_GEOMETRY), its type filled in, its seed 0. */
void sieve_params_geometry(const struct sieve_params *p, struct sieve_geometry *out);

#endif /* SIEVE_LIB_PARAMS_H */
