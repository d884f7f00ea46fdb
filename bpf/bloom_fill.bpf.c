// SPDX-License-Identifier: GPL-2.0
/*
 * The bloom-map backend's fast fill. The kernel's bloom-filter map has no
 * batch update: from userspace each element is one bpf() call, and a
 * generation of 10^7 keys took 17.6 s of syscalls. This program pushes a
 * whole batch of digests per run instead: the loader (userspace/xdp/
 * bloom_fill.c) writes up to SIEVE_FILL_BATCH digests into digests[]
 * through the mmap of this object's .bss, sets count, and runs the program
 * once with BPF_PROG_TEST_RUN, which calls bpf_map_push_elem() per digest
 * in a bpf_loop(): the same insert as the syscall's, minus the syscall.
 *
 * A syscall program, as it runs from BPF_PROG_TEST_RUN with no packet and
 * may loop long (it is sleepable: preemptible between iterations). Before
 * 6.7 a sleepable program may name only arrays, hashes and a few more
 * (check_map_prog_compatibility), not a bloom map: so the target is the
 * inner map of fill_target, an array of maps, which every kernel with
 * syscall programs and bpf_loop (5.17 on) allows.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* Digests per run: a power of two, so an index is bounded by a mask. */
#define SIEVE_FILL_BATCH	65536

/* The target's template: a bloom map of 8-byte values, as the loader's. */
struct bloom_target {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__type(value, __u64);
	__uint(max_entries, 1);
	__uint(map_extra, 1);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct bloom_target);
} fill_target SEC(".maps");

/* In: the batch. Out: how many were pushed, and the first error. */
__u64 digests[SIEVE_FILL_BATCH];
__u32 count;
__u32 pushed;
__s32 fill_err;

static long push_one(__u64 i, void *unused)
{
	__u32 zero = 0;
	void *bloom = bpf_map_lookup_elem(&fill_target, &zero);
	long err;

	if (!bloom) {
		fill_err = -2;	/* -ENOENT: no target in the slot */
		return 1;
	}
	err = bpf_map_push_elem(bloom, &digests[i & (SIEVE_FILL_BATCH - 1)], BPF_ANY);
	if (err) {
		fill_err = err;
		return 1;
	}
	pushed++;
	return 0;
}

SEC("syscall")
int sieve_bloom_fill(void *ctx)
{
	__u32 n = count;

	pushed = 0;
	fill_err = 0;
	if (n > SIEVE_FILL_BATCH)
		n = SIEVE_FILL_BATCH;
	bpf_loop(n, push_one, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
