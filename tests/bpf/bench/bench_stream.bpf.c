// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's stream: BPF_PROG_TEST_RUN repeats one packet, so this
 * program gives every repetition a new IPv4 source address (a full-period
 * LCG over 2^32, written back into the packet, which persists between
 * repetitions) and then tail-calls the program under test. Successive
 * packets thus carry different flows and the map lookups go cache-cold.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_next SEC(".maps");

#define IPV4_SADDR_OFF	26	/* Ethernet (14) + offset in the IPv4 header (12) */

SEC("xdp")
int sieve_bench_stream(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 *saddr = data + IPV4_SADDR_OFF;

	if ((void *)(saddr + 1) > end)
		return XDP_ABORTED;
	*saddr = *saddr * 1664525 + 1013904223;
	bpf_tail_call(ctx, &bench_next, 0);
	return XDP_ABORTED;
}

char LICENSE[] SEC("license") = "GPL";
