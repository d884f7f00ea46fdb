// SPDX-License-Identifier: GPL-2.0
/*
 * XDP programs (and one TC program) for the kfunc suite (kfunc_test.c), run
 * in the VM through BPF_PROG_TEST_RUN. Each reads a key of KEY_LEN bytes at the start of
 * the packet and drops it if filter `filter_id` may hold it, passes it if
 * not, and aborts on an error, which it leaves in `last_err`.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "sieve_kfuncs.bpf.h"
#include "kfunc_test.h"

__u32 filter_id;
int last_err;
/* xdp_hold_long: runs in which the filter was destroyed while held. */
__u64 destroyed_while_held;

static __always_inline int key_from_packet(struct xdp_md *ctx, __u8 key[KEY_LEN])
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;

	if (data + KEY_LEN > end)
		return -1;
	__builtin_memcpy(key, data, KEY_LEN);
	return 0;
}

static __always_inline int verdict(int ret)
{
	if (ret < 0) {
		last_err = ret;
		return XDP_ABORTED;
	}
	return ret ? XDP_DROP : XDP_PASS;
}

/* A reference held around the query. */
SEC("xdp")
int xdp_hold(struct xdp_md *ctx)
{
	__u8 key[KEY_LEN];
	struct sieve *s;
	int ret;

	if (key_from_packet(ctx, key))
		return XDP_ABORTED;
	s = bpf_sieve_acquire(filter_id);
	if (!s) {
		last_err = -2;	/* -ENOENT */
		return XDP_PASS;
	}
	ret = bpf_sieve_contains(s, key, sizeof(key));
	bpf_sieve_release(s);
	return verdict(ret);
}

/* The same from TC: 2 (TC_ACT_SHOT) for a key the filter may hold, 0 (TC_ACT_OK) if not. */
SEC("tc")
int tc_hold(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	__u8 key[KEY_LEN];
	struct sieve *s;
	int ret;

	if (data + KEY_LEN > end)
		return -1;
	__builtin_memcpy(key, data, KEY_LEN);
	s = bpf_sieve_acquire(filter_id);
	if (!s)
		return 0;
	ret = bpf_sieve_contains(s, key, sizeof(key));
	bpf_sieve_release(s);
	if (ret < 0)
		last_err = ret;
	return ret > 0 ? 2 : 0;
}

/* The filter found per call. */
SEC("xdp")
int xdp_per_call(struct xdp_md *ctx)
{
	__u8 key[KEY_LEN];

	if (key_from_packet(ctx, key))
		return XDP_ABORTED;
	return verdict(bpf_sieve_contains_id(filter_id, key, sizeof(key)));
}

/*
 * Holds the filter over HOLD_QUERIES queries, then asks for it by id: if it
 * is gone, it was destroyed while this program held it, and the release
 * below is its last reference.
 */
SEC("xdp")
int xdp_hold_long(struct xdp_md *ctx)
{
	__u8 key[KEY_LEN];
	struct sieve *s;
	int i, hits = 0;

	if (key_from_packet(ctx, key))
		return XDP_ABORTED;
	s = bpf_sieve_acquire(filter_id);
	if (!s)
		return XDP_PASS;
	/* No branch on the answers: the verifier walks the loop once per i. */
	for (i = 0; i < HOLD_QUERIES; i++) {
		key[0] = i;
		hits |= bpf_sieve_contains(s, key, sizeof(key));
	}
	if (bpf_sieve_contains_id(filter_id, key, sizeof(key)) == -2)
		__sync_fetch_and_add(&destroyed_while_held, 1);
	bpf_sieve_release(s);
	return hits > 0 ? XDP_DROP : XDP_PASS;
}

/* ---- for the measurements (kfunc_test -b) ---------------------------- */

/* The floor: the key read, no lookup. */
SEC("xdp")
int xdp_floor(struct xdp_md *ctx)
{
	__u8 key[KEY_LEN];

	if (key_from_packet(ctx, key))
		return XDP_ABORTED;
	return key[0] == 0xff ? XDP_DROP : XDP_PASS;
}

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(max_entries, BENCH_MAP_ENTRIES);
	__uint(value_size, KEY_LEN);
	__uint(map_extra, 7);	/* hash functions, as sieve sizes 1e-2 */
} bench_bloom SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BENCH_MAP_ENTRIES);
	__uint(key_size, KEY_LEN);
	__uint(value_size, sizeof(__u32));
} bench_hash SEC(".maps");

/* The kernel's bloom-filter map, as the blocklist's default backend asks it. */
SEC("xdp")
int xdp_bloom_map(struct xdp_md *ctx)
{
	__u8 key[KEY_LEN];

	if (key_from_packet(ctx, key))
		return XDP_ABORTED;
	return bpf_map_peek_elem(&bench_bloom, key) == 0 ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int xdp_hash_map(struct xdp_md *ctx)
{
	__u8 key[KEY_LEN];

	if (key_from_packet(ctx, key))
		return XDP_ABORTED;
	return bpf_map_lookup_elem(&bench_hash, key) ? XDP_DROP : XDP_PASS;
}

/* The reference alone, no query: what finding the filter costs. */
SEC("xdp")
int xdp_acquire_only(struct xdp_md *ctx)
{
	__u8 key[KEY_LEN];
	struct sieve *s;

	if (key_from_packet(ctx, key))
		return XDP_ABORTED;
	s = bpf_sieve_acquire(filter_id);
	if (!s)
		return XDP_ABORTED;
	bpf_sieve_release(s);
	return key[0] == 0xff ? XDP_DROP : XDP_PASS;
}

/* One reference, BENCH_KEYS_PER_PACKET queries: what a packet with several flow keys costs. */
SEC("xdp")
int xdp_hold_many(struct xdp_md *ctx)
{
	__u8 key[KEY_LEN];
	struct sieve *s;
	int i, hits = 0;

	if (key_from_packet(ctx, key))
		return XDP_ABORTED;
	s = bpf_sieve_acquire(filter_id);
	if (!s)
		return XDP_ABORTED;
	for (i = 0; i < BENCH_KEYS_PER_PACKET; i++) {
		key[KEY_LEN - 1] = i;
		hits |= bpf_sieve_contains(s, key, sizeof(key));
	}
	bpf_sieve_release(s);
	return hits > 0 ? XDP_DROP : XDP_PASS;
}

/* The same queries, each finding the filter by id. */
SEC("xdp")
int xdp_per_call_many(struct xdp_md *ctx)
{
	__u8 key[KEY_LEN];
	int i, hits = 0;

	if (key_from_packet(ctx, key))
		return XDP_ABORTED;
	for (i = 0; i < BENCH_KEYS_PER_PACKET; i++) {
		key[KEY_LEN - 1] = i;
		hits |= bpf_sieve_contains_id(filter_id, key, sizeof(key));
	}
	return hits > 0 ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
