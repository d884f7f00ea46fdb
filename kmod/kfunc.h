/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kfuncs (kfunc.c) are global, so that their definitions are in
 * sieve.ko's BTF, and called only by BPF programs, which declare them in
 * bpf/sieve_kfuncs.bpf.h. Declared here for kfunc.c alone, for W=1's
 * -Wmissing-prototypes and for sparse (which __diag_ignore() does not
 * reach).
 */
#ifndef SIEVE_KFUNC_H
#define SIEVE_KFUNC_H

#include <linux/types.h>

struct sieve;

struct sieve *bpf_sieve_acquire(u32 id);
void bpf_sieve_release(struct sieve *s);
int bpf_sieve_contains(struct sieve *s, const void *key, u32 key__sz);
int bpf_sieve_contains_id(u32 id, const void *key, u32 key__sz);

#endif /* SIEVE_KFUNC_H */
