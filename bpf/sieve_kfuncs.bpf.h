/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sieve.ko's kfuncs, for XDP and TC programs (include/linux/sieve_kapi.h
 * states their rules; kmod/kfunc.c defines them). libbpf resolves them in
 * sieve.ko's BTF at load time, so sieve.ko must be loaded and built with
 * BTF. Unstable, as every kfunc: build programs against the same tree as
 * the module.
 */
#ifndef SIEVE_KFUNCS_BPF_H
#define SIEVE_KFUNCS_BPF_H

#include <linux/types.h>

#ifndef __ksym
#define __ksym __attribute__((section(".ksyms")))
#endif

/*
 * Opaque to programs. A definition (not a declaration) so that libbpf's
 * check of the extern against the kernel's prototype sees two structs.
 */
struct sieve {
	int __opaque;
};

extern struct sieve *bpf_sieve_acquire(__u32 id) __ksym;
extern void bpf_sieve_release(struct sieve *s) __ksym;
extern int bpf_sieve_contains(struct sieve *s, const void *key, __u32 key__sz) __ksym;
extern int bpf_sieve_contains_id(__u32 id, const void *key, __u32 key__sz) __ksym;

#endif /* SIEVE_KFUNCS_BPF_H */
