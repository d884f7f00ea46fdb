// SPDX-License-Identifier: GPL-2.0
/*
 * Placeholder XDP program: passes every packet. It proves the BPF build
 * (clang -target bpf, libbpf headers) until the blocklist program replaces
 * it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int sieve_xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
