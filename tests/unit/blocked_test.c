// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP blocklist's blocked backend in userspace: its rule
 * (include/sieve_xdp_blocked.h) against the module's blocked Bloom core,
 * table for table, and its plan (userspace/xdp/blocked_plan.c) against the
 * module's sizing. The packets' side is tests/bpf (make test-bpf).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "filter.h"
#include "unit.h"
#include "xdp.h"
#include "backend.h"

static u64 rng_state;

static u64 rnd(void)
{
	return sieve_test_mix64(rng_state++);
}

/* The 64x32 high half BPF can compute, against a 128-bit product. */
static void sieve_unit_blocked_mulhi(struct sieve_test *t)
{
	static const u64 xs[] = { 0, 1, 0xffffffffULL, 1ULL << 32, U64_MAX, U64_MAX - 1 };
	static const u32 ns[] = { 0, 1, 2, 3, 511, 512, 65537, U32_MAX };
	unsigned int i, j, bad = 0;

	for (i = 0; i < ARRAY_SIZE(xs) + 10000; i++) {
		u64 x = i < ARRAY_SIZE(xs) ? xs[i] : rnd();

		for (j = 0; j < ARRAY_SIZE(ns) + 1; j++) {
			u32 n = j < ARRAY_SIZE(ns) ? ns[j] : (u32)rnd();

			bad += sieve_xdp_mulhi(x, n) != (u64)(((unsigned __int128)x * n) >> 64);
		}
	}
	CHECKF(t, !bad, "%u high halves differ from the 128-bit product", bad);
}

/* Builds @nkeys random hashes into a table of @nblocks with the rule. */
static void rule_table(__u64 *table, u32 nblocks, u32 k, u64 seed, u32 nkeys)
{
	__u64 pattern[SIEVE_XDP_BLOCK_WORDS];
	u32 i, w;

	rng_state = seed;
	for (i = 0; i < nkeys; i++) {
		u64 h = rnd();
		__u64 *b = table + (u64)sieve_xdp_blocked_index(h, nblocks) * SIEVE_XDP_BLOCK_WORDS;

		sieve_xdp_blocked_pattern(h, k, pattern);
		for (w = 0; w < SIEVE_XDP_BLOCK_WORDS; w++)
			b[w] |= pattern[w];
	}
}

/*
 * The rule and the module's blocked core agree on what the module's
 * false-positive bound, which sizes the backend, rests on: the same hash
 * picks the same block, and a key sets exactly k distinct bits, a
 * uniformly random k-subset of it. Since the core draws its subsets its
 * own faster way (kmod/blocked_bloom.c: independent draws, Floyd's
 * sampling only on a repeat) and the rule by Floyd's sampling always, the
 * bits themselves differ: the tables are not compared bit for bit.
 *  - the block: with half as many keys as blocks, the rule and the core
 *    fill the same blocks and leave the same blocks empty;
 *  - the k bits: one key at a time in a one-block table, each sets k bits
 *    in both.
 */
static void sieve_unit_blocked_rule_matches_the_core(struct sieve_test *t)
{
	static const u32 nblocks[] = { 1, 3, 97, 1000, 4099 };
	static const u32 ks[] = { 1, 6, 16, 21, 32 };
	__u64 pattern[SIEVE_XDP_BLOCK_WORDS];
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(nblocks); i++) {
		for (j = 0; j < ARRAY_SIZE(ks); j++) {
			struct sieve_geometry geo = { .type = SIEVE_BLOCKED_BLOOM,
				.nbits = (u64)nblocks[i] * SIEVE_BLOCK_BITS, .nhashes = ks[j] };
			u32 nkeys = nblocks[i] / 2 + 1, q, b, differ = 0, wrong_k = 0;
			const __u64 *core;
			struct sieve_filter *f;
			__u64 *table;
			int err = sieve_filter_create(&geo, &f);

			EXPECT_EQ(t, err, 0);
			if (err)
				return;
			table = calloc(nblocks[i], SIEVE_XDP_BLOCK_BYTES);
			rule_table(table, nblocks[i], ks[j], 100 + i, nkeys);
			rng_state = 100 + i;
			for (q = 0; q < nkeys; q++)
				f->ops->add(f, rnd(), 0);
			core = f->table;
			for (b = 0; b < nblocks[i]; b++) {
				bool rule_used = false, core_used = false;
				u32 w;

				for (w = 0; w < SIEVE_XDP_BLOCK_WORDS; w++) {
					rule_used |= table[b * SIEVE_XDP_BLOCK_WORDS + w] != 0;
					core_used |= core[b * SIEVE_XDP_BLOCK_WORDS + w] != 0;
				}
				differ += rule_used != core_used;
			}
			CHECKF(t, f->table_bytes == (u64)nblocks[i] * SIEVE_XDP_BLOCK_BYTES && !differ,
			       "%u blocks, k %u: %u blocks used by one and not the other",
			       nblocks[i], ks[j], differ);
			sieve_filter_destroy(f);
			free(table);

			geo.nbits = SIEVE_BLOCK_BITS;
			EXPECT_EQ(t, sieve_filter_create(&geo, &f), 0);
			if (!f)
				return;
			for (q = 0; q < 2000; q++) {
				u64 h = rnd();
				u32 core_bits, rule_bits;

				sieve_filter_clear(f);
				f->ops->add(f, h, 0);
				core_bits = sieve_words_weight(f->table, SIEVE_XDP_BLOCK_WORDS);
				sieve_xdp_blocked_pattern(h, ks[j], pattern);
				rule_bits = sieve_words_weight((const unsigned long *)pattern,
							       SIEVE_XDP_BLOCK_WORDS);
				wrong_k += core_bits != ks[j] || rule_bits != ks[j];
			}
			CHECKF(t, !wrong_k, "k %u: %u keys did not set k bits in both", ks[j], wrong_k);
			sieve_filter_destroy(f);
		}
	}
}

/* The mixer is a bijection (no two digests share a hash) and spreads one-bit changes. */
static void sieve_unit_blocked_hash_mixes(struct sieve_test *t)
{
	u64 flips = 0, seed = rnd();
	unsigned int i;

	for (i = 0; i < 64 * 1000; i++) {
		u64 d = rnd() + i / 64;

		flips += __builtin_popcountll(sieve_xdp_blocked_hash(d, seed) ^
					      sieve_xdp_blocked_hash(d ^ 1ULL << (i % 64), seed));
	}
	/* 32 bits on average; a poor mix shows far fewer. */
	CHECKF(t, flips > 31 * 64000ULL && flips < 33 * 64000ULL, "%llu bits flip in 64000 pairs",
	       (unsigned long long)flips);
	/* fmix64's fixed point moves with the seed: no digest is stuck at 0. */
	EXPECT_EQ(t, sieve_xdp_blocked_hash(seed, seed), 0);
}

/*
 * The generation's seed: a digest lands in another block and pattern in
 * each generation, so a key that is a false positive in one generation is
 * one in the next only by chance (before, the same digest gave the same
 * block and bits in every generation of a size).
 */
static void sieve_unit_blocked_seed_moves_keys(struct sieve_test *t)
{
	const u32 nblocks = 100000;
	unsigned int i, same_block = 0, same_hash = 0;

	for (i = 0; i < 10000; i++) {
		u64 d = rnd(), s1 = rnd(), s2 = rnd();
		u64 h1 = sieve_xdp_blocked_hash(d, s1), h2 = sieve_xdp_blocked_hash(d, s2);

		same_hash += h1 == h2;
		same_block += sieve_xdp_blocked_index(h1, nblocks) ==
			      sieve_xdp_blocked_index(h2, nblocks);
	}
	EXPECT_EQ(t, same_hash, 0);
	/* Chance alone: 10000 / 100000 blocks, about 0.1; a few at most. */
	CHECKF(t, same_block <= 3, "%u of 10000 digests kept their block across seeds",
	       same_block);
}

/*
 * The plan: the module's sizing, in whole blocks of any number, with the
 * rate at capacity under the target, and the module's expected rate.
 */
static void sieve_unit_blocked_plan(struct sieve_test *t)
{
	static const u64 ns[] = { 1, 100, 65536, 1000000, 10000000, 100000000 };
	static const u32 ppbs[] = { 100000000, 10000000, 1000, 1 };
	bool odd = false;
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		for (j = 0; j < ARRAY_SIZE(ppbs); j++) {
			struct sieve_geometry geo;
			struct sxdp_plan p;
			int err = sxdp_plan_blocked(ns[i], ppbs[j], &p);

			if (sieve_size(SIEVE_BLOCKED_BLOOM, ns[i], ppbs[j], &geo)) {
				EXPECT_EQ(t, err, -E2BIG);
				continue;
			}
			EXPECT_EQ(t, err, 0);
			if (err)
				continue;
			EXPECT_TRUE(t, p.blocked);
			EXPECT_EQ(t, p.nbits, geo.nbits);
			EXPECT_EQ(t, (u64)p.max_entries * SIEVE_XDP_BLOCK_BITS, p.nbits);
			EXPECT_EQ(t, p.nr_hashes, geo.nhashes);
			EXPECT_EQ(t, p.bytes, p.nbits / 8);
			CHECKF(t, p.fpr <= ppbs[j] / 1e9 && p.fpr == sxdp_blocked_fpr(p.max_entries,
			       p.nr_hashes, ns[i]), "n %llu, %u ppb: rate %g",
			       (unsigned long long)ns[i], ppbs[j], p.fpr);
			odd |= p.max_entries > 1 && (p.max_entries & (p.max_entries - 1));
		}
	}
	CHECKF(t, odd, "every block count a power of two: rounding?");
	/* 2 10^8 keys at 1e-9 need more than a GiB of blocks: the module's limit. */
	EXPECT_EQ(t, sxdp_plan_blocked(200000000, 1, &(struct sxdp_plan){ 0 }), -E2BIG);
	EXPECT_EQ(t, sxdp_plan_blocked(0, 1000, &(struct sxdp_plan){ 0 }), -EINVAL);
	EXPECT_EQ(t, sxdp_plan_blocked(1000, 0, &(struct sxdp_plan){ 0 }), -EINVAL);
	EXPECT_EQ(t, sxdp_plan_blocked(1000, SIEVE_PPB, &(struct sxdp_plan){ 0 }), -EINVAL);
}

/* Either backend by the config flag; the names the CLI takes and prints. */
static void sieve_unit_blocked_backend_names(struct sieve_test *t)
{
	struct sieve_xdp_config c = { .flags = SIEVE_XDP_F_BLOCKED,
				      .blocked = { .nblocks = 1000, .k = 7 } };
	struct sxdp_plan p;
	uint32_t flag = 1;
	uint64_t nbits;

	EXPECT_EQ(t, sxdp_backend_parse("blocked", &flag), 0);
	EXPECT_EQ(t, flag, SIEVE_XDP_F_BLOCKED);
	EXPECT_EQ(t, sxdp_backend_parse("bloom-map", &flag), 0);
	EXPECT_EQ(t, flag, 0);
	EXPECT_EQ(t, sxdp_backend_parse("bloom", &flag), -EINVAL);
	EXPECT_TRUE(t, !strcmp(sxdp_backend_name(SIEVE_XDP_F_BLOCKED), "blocked"));
	EXPECT_TRUE(t, !strcmp(sxdp_backend_name(SIEVE_XDP_F_EXACT), "bloom-map"));
	EXPECT_TRUE(t, sxdp_config_fpr(&c, 8000, &nbits) == sxdp_blocked_fpr(1000, 7, 8000));
	EXPECT_EQ(t, nbits, 1000 * 512);
	EXPECT_EQ(t, sxdp_plan_for(SIEVE_XDP_F_BLOCKED, 1000, 1000, &p), 0);
	EXPECT_TRUE(t, p.blocked);
	EXPECT_EQ(t, sxdp_plan_for(SIEVE_XDP_F_EXACT, 1000, 1000, &p), 0);
	EXPECT_TRUE(t, !p.blocked);
}

/*
 * Every backend's table of operations (userspace/xdp/backend*.c) is
 * complete but for remove_live, which only a backend that deletes has;
 * its name and its flag select it; it agrees with the flag-driven names,
 * plans and rates the agent and the CLI print.
 */
static void sieve_unit_blocked_backend_ops_tables(struct sieve_test *t)
{
	/* 1000 and 7: a bloom map's max_entries and k, or blocks and k. */
	struct sieve_xdp_config c = { .bloom = { .max_entries = 1000, .nr_hashes = 7 } };
	const struct sxdp_backend_ops *o;
	struct sxdp_plan a, b;
	uint64_t na, nb;
	uint32_t flag;
	int i;

	for (i = 0; (o = sxdp_backends[i]); i++) {
		EXPECT_TRUE(t, o->name && o->limit && o->plan && o->create && o->fill && o->build &&
			       o->add_live && o->fpr && o->memory && o->describe && o->outer_fd);
		EXPECT_TRUE(t, sxdp_backend_by_name(o->name) == o);
		EXPECT_TRUE(t, sxdp_backend_of(o->cfg_flag) == o);
		EXPECT_TRUE(t, sxdp_backend_of(o->cfg_flag | SIEVE_XDP_F_EXACT) == o);
		EXPECT_TRUE(t, !strcmp(sxdp_backend_name(o->cfg_flag), o->name));
		if (o != &sxdp_filter_ops) {
			EXPECT_EQ(t, sxdp_backend_parse(o->name, &flag), 0);
			EXPECT_EQ(t, flag, o->cfg_flag);
			EXPECT_EQ(t, o->plan(100000, 1000000, &a), 0);
			EXPECT_EQ(t, sxdp_plan_for(o->cfg_flag, 100000, 1000000, &b), 0);
			EXPECT_TRUE(t, a.capacity == b.capacity && a.nr_hashes == b.nr_hashes &&
				       a.max_entries == b.max_entries && a.nbits == b.nbits &&
				       a.blocked == b.blocked);
			c.flags = o->cfg_flag;
			EXPECT_TRUE(t, o->fpr(&c, 8000, &na) == sxdp_config_fpr(&c, 8000, &nb));
			EXPECT_EQ(t, na, nb);
			EXPECT_EQ(t, o->memory(&c) * 8, na);
		}
	}
	EXPECT_EQ(t, i, 3);
	EXPECT_TRUE(t, !sxdp_backend_by_name("bloom") && !sxdp_backend_by_name("filter:x"));
	/* Deletes: the cuckoo filter's; the Bloom filters rebuild instead. */
	EXPECT_TRUE(t, !sxdp_bloom_ops.remove_live && !sxdp_blocked_ops.remove_live &&
		       sxdp_filter_ops.remove_live);
	/* Only the filter backend needs the program's kfunc build. */
	EXPECT_TRUE(t, !sxdp_bloom_ops.kfunc_prog && !sxdp_blocked_ops.kfunc_prog &&
		       sxdp_filter_ops.kfunc_prog);
	/* Only the filter backend's filter is the one a record names. */
	EXPECT_TRUE(t, !sxdp_bloom_ops.named && !sxdp_blocked_ops.named && sxdp_filter_ops.named);
	EXPECT_EQ(t, sxdp_filter_ops.plan(1000, 1000, &a), -EOPNOTSUPP);
	EXPECT_EQ(t, sxdp_filter_ops.create(&a), -EOPNOTSUPP);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_blocked_cases[] = {
	CASE(sieve_unit_blocked_mulhi),
	CASE(sieve_unit_blocked_rule_matches_the_core),
	CASE(sieve_unit_blocked_hash_mixes),
	CASE(sieve_unit_blocked_seed_moves_keys),
	CASE(sieve_unit_blocked_plan),
	CASE(sieve_unit_blocked_backend_names),
	CASE(sieve_unit_blocked_backend_ops_tables),
};

const unsigned int sieve_blocked_cases_n = ARRAY_SIZE(sieve_blocked_cases);
