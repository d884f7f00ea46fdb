// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's floor: an XDP program that drops every packet without
 * looking at it. What BPF_PROG_TEST_RUN costs with no work to do.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int sieve_xdp_floor(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
