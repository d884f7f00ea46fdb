/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The blocked backend's rule (`--backend blocked`): from a key's 64-bit
 * digest (sieve_xdp_digest()) and the generation's seed to one 64-byte
 * block of the filter and k bits inside it. Written once, here, for the BPF program (the lookup)
 * and the loader (the build, live adds, the tests' predictions).
 *
 * Given the same 64-bit hash, it picks the block the module's blocked
 * Bloom core (kmod/blocked_bloom.c) picks, by multiply-shift of the whole
 * hash, and like the core a uniformly random k-subset of its 512 bits, here
 * by Floyd's sampling seeded by the whole hash (the core draws its subsets
 * its own way, so the bits differ). So the false-positive bound the module
 * sizes that core with (kmod/sizing.c) holds here too, and the loader
 * sizes with it (userspace/xdp/blocked_plan.c). A unit test checks that
 * both use the same blocks and set k bits per key.
 *
 * Only 64-bit arithmetic: BPF has no 128-bit multiply, so the high half
 * of a 64x32-bit product is put together from two 32x32 ones, exactly.
 * No modulo, no power-of-two rounding: any number of blocks works.
 */
#ifndef SIEVE_XDP_BLOCKED_H
#define SIEVE_XDP_BLOCKED_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define SIEVE_XDP_BLOCK_BITS	512	/* one cache line */
#define SIEVE_XDP_BLOCK_WORDS	(SIEVE_XDP_BLOCK_BITS / 64)
#define SIEVE_XDP_BLOCK_BYTES	(SIEVE_XDP_BLOCK_BITS / 8)
/*
 * Bits a key sets, at most: the module's SIEVE_MAX_HASHES, the range its
 * sizing chooses from (about 13 at 1e-6, 20 at 1e-9). It bounds the
 * program's loop; a key not on the list leaves it after about two bits.
 */
#define SIEVE_XDP_BLOCKED_MAX_HASHES	32

/* One element of the blocked array: a cache line. */
struct sieve_xdp_block {
	__u64 w[SIEVE_XDP_BLOCK_WORDS];
};

/* The module's PATTERN_MULTIPLIER: odd, so x -> x * M is a bijection of u64. */
#define SIEVE_XDP_BLOCKED_MULT	0x9e3779b97f4a7c15ULL

/*
 * The block and the bits of a digest in one generation: murmur3's 64-bit
 * finaliser of the digest XOR the generation's random @seed (the config's
 * blocked_seed). The digest is already pseudo-random (keyed, see
 * sieve_xdp_digest()); the seed makes each generation's filter another
 * draw, so a key that is a false positive in one generation is not one in
 * the next by necessity, as it was when the hash was a function of the
 * digest alone and a generation of the same size put every key in the
 * same place. The finaliser is a bijection (two multiplies, three shifts):
 * distinct digests stay distinct.
 */
static __always_inline __u64 sieve_xdp_blocked_hash(__u64 digest, __u64 seed)
{
	digest ^= seed;
	digest ^= digest >> 33;
	digest *= 0xff51afd7ed558ccdULL;
	digest ^= digest >> 33;
	digest *= 0xc4ceb9fe1a85ec53ULL;
	digest ^= digest >> 33;
	return digest;
}

/*
 * floor(x * n / 2^64) for n < 2^32, which the module computes with a
 * 128-bit product (mul_u64_u64_shr()): with x = hi * 2^32 + lo it is
 * floor((hi * n + floor(lo * n / 2^32)) / 2^32), and no term overflows.
 */
static __always_inline __u64 sieve_xdp_mulhi(__u64 x, __u32 n)
{
	return ((x >> 32) * n + (((x & 0xffffffffULL) * n) >> 32)) >> 32;
}

/* The block of hash @h among @nblocks: uniform, for any count. */
static __always_inline __u32 sieve_xdp_blocked_index(__u64 h, __u32 nblocks)
{
	return (__u32)sieve_xdp_mulhi(h, nblocks);
}

/*
 * Draw number @j (512 - k <= j < 512) of Floyd's sampling: a position in
 * [0, j] not drawn before (else j itself, never drawn before), marked in
 * @seen. The masks change no value (pick <= j < 512); they show the BPF
 * verifier the bounds of the array indexes.
 */
static __always_inline __u32 sieve_xdp_blocked_draw(__u64 *x, __u32 j,
						    __u64 seen[SIEVE_XDP_BLOCK_WORDS])
{
	__u32 pick;

	*x *= SIEVE_XDP_BLOCKED_MULT;
	pick = (__u32)sieve_xdp_mulhi(*x, j + 1) & (SIEVE_XDP_BLOCK_BITS - 1);
	if (seen[pick / 64] & (1ULL << (pick % 64)))
		pick = j & (SIEVE_XDP_BLOCK_BITS - 1);
	seen[pick / 64] |= 1ULL << (pick % 64);
	return pick;
}

/* The k bits of hash @h in its block: what an add ORs in. */
static __always_inline void sieve_xdp_blocked_pattern(__u64 h, __u32 k,
						      __u64 pattern[SIEVE_XDP_BLOCK_WORDS])
{
	__u64 x = h | 1;
	__u32 i;

	for (i = 0; i < SIEVE_XDP_BLOCK_WORDS; i++)
		pattern[i] = 0;
	for (i = 0; i < SIEVE_XDP_BLOCKED_MAX_HASHES && i < k; i++)
		sieve_xdp_blocked_draw(&x, SIEVE_XDP_BLOCK_BITS - k + i, pattern);
}

/*
 * Whether @block has every bit of @h's pattern: the lookup. Bit by bit as
 * they are drawn, so a key not on the list costs about two draws.
 */
static __always_inline int sieve_xdp_blocked_test(const __u64 *block, __u64 h, __u32 k)
{
	__u64 seen[SIEVE_XDP_BLOCK_WORDS] = { 0 };
	__u64 x = h | 1;
	__u32 i, pick;

	for (i = 0; i < SIEVE_XDP_BLOCKED_MAX_HASHES && i < k; i++) {
		pick = sieve_xdp_blocked_draw(&x, SIEVE_XDP_BLOCK_BITS - k + i, seen);
		if (!(block[pick / 64] & (1ULL << (pick % 64))))
			return 0;
	}
	return 1;
}

#endif /* SIEVE_XDP_BLOCKED_H */
