// SPDX-License-Identifier: GPL-2.0
/*
 * kfuncs: XDP and TC (BPF_PROG_TYPE_SCHED_CLS) programs ask sieve's
 * registered filters whether they hold a key, as other kernel code does
 * through <linux/sieve_kapi.h>, whose "BPF programs" section states the
 * rules the verifier and these functions enforce.
 *
 * This interface is unstable, as every kfunc is: it may change with
 * sieve's version; programs are built against this tree's
 * bpf/sieve_kfuncs.bpf.h.
 *
 * Built only where the module gets BTF (kmod/Kbuild): the kernel resolves a
 * program's calls through the module's BTF and its .BTF_ids.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/sieve_kapi.h>

#include "kfunc.h"
#include "registry.h"

/**
 * bpf_sieve_acquire - a reference to registered filter @id
 * @id: the filter's id (SIEVE_IOC_OPEN, `sieve filter info`).
 *
 * Returns the filter, or NULL if no filter has that id (now). The verifier
 * makes the program release it with bpf_sieve_release() before it ends.
 */
struct sieve *bpf_sieve_acquire(u32 id)
{
	return sieve_lookup(id);
}

/**
 * bpf_sieve_release - drops a reference bpf_sieve_acquire() took
 * @s: the filter.
 *
 * If the filter was destroyed meanwhile, this is its last reference: it
 * is freed from a work item, since a program may not sleep.
 */
void bpf_sieve_release(struct sieve *s)
{
	sieve_release_nosleep(s);
}

/**
 * bpf_sieve_contains - may filter @s hold the key?
 * @s: a filter from bpf_sieve_acquire().
 * @key: the key: on the program's stack, in a map value, or in the packet.
 * @key__sz: its length, 1 to %SIEVE_MAX_KEY_LEN bytes.
 *
 * Returns 1 if the key may be present, 0 if it certainly is not, -EINVAL
 * for a length out of range. Lockless and bounded (see sieve_kapi.h).
 */
int bpf_sieve_contains(struct sieve *s, const void *key, u32 key__sz)
{
	return sieve_contains(s, key, key__sz);
}

/**
 * bpf_sieve_contains_id - bpf_sieve_contains() on filter @id, found per call
 * @id: the filter's id.
 * @key: as for bpf_sieve_contains().
 * @key__sz: as for bpf_sieve_contains().
 *
 * Returns as bpf_sieve_contains() does, or -ENOENT if no filter has that
 * id. Costs a lookup and a reference per call: a program asking one filter
 * about several keys per packet does better with bpf_sieve_acquire().
 */
int bpf_sieve_contains_id(u32 id, const void *key, u32 key__sz)
{
	struct sieve *s = sieve_lookup(id);
	int ret;

	if (!s)
		return -ENOENT;
	ret = sieve_contains(s, key, key__sz);
	sieve_release_nosleep(s);
	return ret;
}

BTF_SET8_START(sieve_kfunc_ids)
BTF_ID_FLAGS(func, bpf_sieve_acquire, KF_ACQUIRE | KF_RET_NULL)
BTF_ID_FLAGS(func, bpf_sieve_release, KF_RELEASE)
BTF_ID_FLAGS(func, bpf_sieve_contains, KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, bpf_sieve_contains_id)
BTF_SET8_END(sieve_kfunc_ids)

static const struct btf_kfunc_id_set sieve_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &sieve_kfunc_ids,
};

/* No unregister: the kernel drops the sets with the module's BTF. */
int sieve_kfunc_init(void)
{
	int err;

	err = register_btf_kfunc_id_set(BPF_PROG_TYPE_XDP, &sieve_kfunc_set);
	return err ?: register_btf_kfunc_id_set(BPF_PROG_TYPE_SCHED_CLS, &sieve_kfunc_set);
}
