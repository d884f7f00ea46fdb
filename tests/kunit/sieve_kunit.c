// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of sieve: two suites, run when sieve_kunit.ko loads (KUnit
 * must be built into the kernel: the debug kernel of tests/debug/).
 *
 *  sieve_filter    the filter cores (Bloom, blocked Bloom, cuckoo) through
 *                  the functions sieve.ko exports: add, contains, delete,
 *                  count, clear, merge, batches, sizing, estimates and
 *                  snapshots. Most cases are the shared cases of
 *                  tests/cases/ (also run under cmocka and by sieve_test.ko),
 *                  one behaviour per KUnit case, parameterised over the
 *                  types the behaviour applies to.
 *  sieve_registry  named filters through the in-kernel API
 *                  (<linux/sieve_kapi.h>): create, lookup, references,
 *                  destroy, keys, growth and memory accounting.
 *
 * Every case uses fixed seeds, so a false-positive bound either always
 * holds or always fails, and every case that stores keys checks that none
 * is missing afterwards. Results: /sys/kernel/debug/kunit/<suite>/results.
 */
#include <kunit/test.h>

#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/sieve_kapi.h>
#include <linux/timer.h>

#include "../cases/harness.h"
#include "../../kmod/registry.h"

/* A failing expectation in a loop must not flood the case's 512-byte log. */
#define SK_MAX_DIAGNOSTICS	4

/* The shared cases' environment: a failure is a KUnit failure of the case. */
struct sieve_test {
	struct kunit *test;
	unsigned int failures;
};

void sieve_test_fail(struct sieve_test *t, const char *file, int line,
		     const char *expr, long long a, long long b)
{
	t->failures++;
	if (t->failures <= SK_MAX_DIAGNOSTICS)
		KUNIT_FAIL(t->test, "%s:%d: %s (%lld vs %lld)", kbasename(file), line, expr, a, b);
	else if (t->failures == SK_MAX_DIAGNOSTICS + 1)
		KUNIT_FAIL(t->test, "more failures not shown");
}

/* The shared cases and their helpers (tc_*, sc_*), compiled in here. */
#include "../cases/core_cases.c"
#include "../cases/snapshot_cases.c"

/* ---- Parameters: the filter types --------------------------------------- */

struct sk_type {
	u32 type;
	const char *name;
};

static const struct sk_type sk_all_types[] = {
	{ SIEVE_BLOOM, "bloom" },
	{ SIEVE_BLOCKED_BLOOM, "blocked_bloom" },
	{ SIEVE_CUCKOO, "cuckoo" },
};

static const struct sk_type sk_bloom_types[] = {
	{ SIEVE_BLOOM, "bloom" },
	{ SIEVE_BLOCKED_BLOOM, "blocked_bloom" },
};

static void sk_type_desc(const struct sk_type *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(sk_all_types, sk_all_types, sk_type_desc);
KUNIT_ARRAY_PARAM(sk_bloom_types, sk_bloom_types, sk_type_desc);

static u32 sk_param_type(struct kunit *test)
{
	return ((const struct sk_type *)test->param_value)->type;
}

/* Runs a shared check for this case's type. */
static void sk_run(struct kunit *test, void (*check)(struct sieve_test *t, u32 type))
{
	struct sieve_test t = { .test = test };

	check(&t, sk_param_type(test));
}

/* Runs a shared case that takes no type. */
static void sk_run_case(struct kunit *test, void (*run)(struct sieve_test *t))
{
	struct sieve_test t = { .test = test };

	run(&t);
}

/* ---- sieve_filter: every type ------------------------------------------ */

static void sieve_kunit_test_add_reports_new_then_present(struct kunit *test)
{
	/* A new key is reported new (0), the same key again present (1). */
	sk_run(test, tc_check_add_new_then_present);
}

static void sieve_kunit_test_empty_contains_nothing(struct kunit *test)
{
	/* An empty filter answers no to everything and estimates 0 keys, 0 FPR. */
	sk_run(test, tc_check_empty_contains_nothing);
}

static void sieve_kunit_test_no_false_negatives(struct kunit *test)
{
	/* Every one of 20000 keys of 1 to 64 bytes is found, by contains and count. */
	sk_run(test, tc_check_no_false_negatives);
}

static void sieve_kunit_test_one_byte_keys(struct kunit *test)
{
	/* The 256 one-byte keys are 256 distinct keys, all found. */
	sk_run(test, tc_check_one_byte_keys);
}

static void sieve_kunit_test_long_key(struct kunit *test)
{
	/* Every byte of a 1000-byte key is hashed; a prefix is another key. */
	sk_run(test, tc_check_long_key);
}

static void sieve_kunit_test_empty_key(struct kunit *test)
{
	/* The empty key is a key like any other, distinct from "\0". */
	sk_run(test, tc_check_empty_key);
}

static void sieve_kunit_test_clear_forgets_keys(struct kunit *test)
{
	/* Clear forgets every key and keeps the geometry and seed. */
	sk_run(test, tc_check_clear);
}

static void sk_check_seeds(struct sieve_test *t, u32 type)
{
	switch (type) {
	case SIEVE_BLOOM:
		tc_check_seeds(t, tc_bloom(16384, 3, 0));
		break;
	case SIEVE_BLOCKED_BLOOM:
		tc_check_seeds(t, tc_blocked(16384, 3, 0));
		break;
	default:
		tc_check_seeds(t, tc_cuckoo(1024, 8, 0));
		break;
	}
}

static void sieve_kunit_test_seed_decides_false_positives(struct kunit *test)
{
	/* Same seed, same false positives; another seed, other ones. */
	sk_run(test, sk_check_seeds);
}

static void sieve_kunit_test_unknown_add_flag_is_einval(struct kunit *test)
{
	/* An unknown add flag is refused before anything is stored. */
	sk_run(test, tc_check_add_unknown_flag);
}

static void sieve_kunit_test_batch_matches_single(struct kunit *test)
{
	/* A batch gives the answers and the table of the same calls one by one. */
	sk_run(test, tc_check_batch_matches_single);
}

static void sk_check_estimate(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f;

	if (type != SIEVE_CUCKOO) {
		tc_check_bloomish_estimate(t, type);
		return;
	}
	f = tc_new_filter(t, tc_geo_of(type, TC_SEED_A));
	if (!f)
		return;
	EXPECT_TRUE(t, tc_add_range(f, TC_SET_IN, 0, 5000) >= 0);
	/* A cuckoo filter counts its fingerprints exactly. */
	EXPECT_EQ(t, sieve_filter_estimate_items(f), 5000);
	EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, 5000), 5000);
	sieve_filter_destroy(f);
}

static void sieve_kunit_test_estimate_follows_keys(struct kunit *test)
{
	/* Bloom types: within 3% of the keys added; cuckoo: exact. */
	sk_run(test, sk_check_estimate);
}

static void sk_check_fpr(struct sieve_test *t, u32 type)
{
	if (type == SIEVE_CUCKOO)
		sieve_test_cuckoo_fpr_grows_with_fill(t);
	else
		tc_check_bloomish_fpr(t, type);
}

static void sieve_kunit_test_fpr_grows_with_fill(struct kunit *test)
{
	/* The FPR estimate starts at 0, grows with each batch, follows the model. */
	sk_run(test, sk_check_fpr);
}

static void sk_check_smallest(struct sieve_test *t, u32 type)
{
	switch (type) {
	case SIEVE_BLOOM:
		sieve_test_bloom_smallest_geometry(t);
		break;
	case SIEVE_BLOCKED_BLOOM:
		sieve_test_blocked_smallest_geometry(t);
		break;
	default:
		sieve_test_cuckoo_smallest_geometry(t);
		break;
	}
}

static void sieve_kunit_test_smallest_geometry_keeps_keys(struct kunit *test)
{
	/* The smallest table of each type loses none of the keys it takes. */
	sk_run(test, sk_check_smallest);
}

/* The target of the sized cases: 2000 keys at 1%. */
#define SK_SIZED_KEYS		2000
#define SK_SIZED_PPB		10000000
#define SK_SIZED_QUERIES	20000

static void sk_check_sized_rate(struct sieve_test *t, u32 type)
{
	struct sieve_geometry g;
	struct sieve_filter *f;
	u32 fp;

	EXPECT_EQ(t, sieve_size(type, SK_SIZED_KEYS, SK_SIZED_PPB, &g), 0);
	g.seed = TC_SEED_B;
	f = tc_new_filter(t, g);
	if (!f)
		return;
	EXPECT_EQ(t, tc_add_range(f, TC_SET_IN, 0, SK_SIZED_KEYS) < 0, 0);
	/* No false negative at capacity. */
	EXPECT_EQ(t, tc_found(f, TC_SET_IN, 0, SK_SIZED_KEYS), SK_SIZED_KEYS);
	/* At most twice the 1% asked for: 400 of 20000 (expected: 200 or fewer). */
	fp = tc_found(f, TC_SET_OUT, 0, SK_SIZED_QUERIES);
	if (fp * 100 > SK_SIZED_QUERIES * 2)
		sieve_test_fail(t, __FILE__, __LINE__, "false positives a <= 2% of b",
				fp, SK_SIZED_QUERIES);
	sieve_filter_destroy(f);
}

static void sieve_kunit_test_sized_filter_meets_its_rate(struct kunit *test)
{
	/* A filter sized for n keys at 1% keeps them all and stays near 1%. */
	sk_run(test, sk_check_sized_rate);
}

static void sieve_kunit_test_snapshot_round_trip(struct kunit *test)
{
	/* A snapshot read back gives the same table, estimate and answers. */
	sk_run(test, sc_check_round_trip);
}

/*
 * Flips one bit of a good snapshot at header and layer-header bytes and at
 * every 97th table byte: each copy must be refused (an error, or never
 * complete), and the good one still accepted.
 */
static void sk_check_snapshot_bit_flips(struct sieve_test *t, u32 type)
{
	struct sieve_filter *f = sc_filled(t, type, 500);
	const u64 heads = sizeof(struct sieve_snapshot_header) +
			  sizeof(struct sieve_snapshot_layer);
	u32 tried = 0, accepted = 0;
	u64 bytes, at;
	u8 *buf;

	if (!f)
		return;
	buf = sc_write(f, 500, &bytes);
	EXPECT_TRUE(t, buf != NULL);
	if (!buf)
		goto out;
	for (at = 0; at < bytes; at += at < heads ? 1 : 97) {
		buf[at] ^= 1 << (at % 8);
		accepted += sc_read_check(t, buf, bytes, NULL) == 0;
		buf[at] ^= 1 << (at % 8);
		tried++;
		cond_resched();
	}
	/* Not one corrupted copy is accepted... */
	EXPECT_EQ(t, accepted, 0);
	EXPECT_TRUE(t, tried > heads);
	/* ...and the restored original still is, with every key. */
	EXPECT_EQ(t, sc_read_check(t, buf, bytes, f), 0);
	EXPECT_EQ(t, sc_found(f, 500), 500);
	sieve_free(buf);
out:
	sieve_filter_destroy(f);
}

static void sieve_kunit_test_snapshot_refuses_bit_flips(struct kunit *test)
{
	/* A snapshot with any one bit flipped is refused. */
	sk_run(test, sk_check_snapshot_bit_flips);
}

/* ---- sieve_filter: Bloom and blocked Bloom ------------------------------ */

static void sieve_kunit_test_bloom_count_is_0_or_1(struct kunit *test)
{
	/* A Bloom filter counts a key once, however often it was added. */
	sk_run(test, tc_check_bloomish_count);
}

static void sieve_kunit_test_bloom_delete_unsupported(struct kunit *test)
{
	/* Bloom filters refuse deletes with -EOPNOTSUPP and keep the key. */
	sk_run(test, tc_check_bloomish_delete);
}

static void sieve_kunit_test_bloom_merge_is_union(struct kunit *test)
{
	/* A merge gives the union: the table of a filter given every key. */
	sk_run(test, tc_check_bloomish_merge_union);
}

static void sieve_kunit_test_bloom_merge_empty_and_self(struct kunit *test)
{
	/* Merging an empty filter or itself changes nothing; into empty copies. */
	sk_run(test, tc_check_bloomish_merge_into_empty_and_self);
}

static void sieve_kunit_test_bloom_merge_mismatch_is_einval(struct kunit *test)
{
	/* Any geometry difference, seed included, refuses the merge untouched. */
	sk_run(test, tc_check_bloomish_merge_mismatch);
}

static void sk_check_odd_sizes(struct sieve_test *t, u32 type)
{
	if (type == SIEVE_BLOOM)
		sieve_test_bloom_odd_sizes(t);
	else
		sieve_test_blocked_one_block(t);
}

static void sieve_kunit_test_bloom_odd_sizes(struct kunit *test)
{
	/* Bit counts off word boundaries (Bloom), a single block (blocked) work. */
	sk_run(test, sk_check_odd_sizes);
}

/* ---- sieve_filter: cuckoo ----------------------------------------------- */

static void sieve_kunit_test_cuckoo_count_follows_copies(struct kunit *test)
{
	/* Each add stores a copy; count follows adds and deletes one by one. */
	sk_run_case(test, sieve_test_cuckoo_count_follows_copies);
}

static void sieve_kunit_test_cuckoo_delete_absent_is_enoent(struct kunit *test)
{
	/* Deleting a key never added, or already deleted, is -ENOENT. */
	sk_run_case(test, sieve_test_cuckoo_delete_absent_is_enoent);
}

static void sieve_kunit_test_cuckoo_eight_copies_at_most(struct kunit *test)
{
	/* A ninth copy of a key is refused and the filter is not full. */
	sk_run_case(test, sieve_test_cuckoo_eight_copies_at_most);
}

static void sieve_kunit_test_cuckoo_fills_to_95_percent(struct kunit *test)
{
	/* Distinct keys fill 95% of the slots before the first -ENOSPC. */
	sk_run_case(test, sieve_test_cuckoo_fills_to_95_percent);
}

static void sieve_kunit_test_cuckoo_full_keeps_keys(struct kunit *test)
{
	/* A full filter refuses new keys and loses none it took. */
	sk_run_case(test, sieve_test_cuckoo_full_refuses_and_keeps_keys);
}

static void sieve_kunit_test_cuckoo_delete_makes_room(struct kunit *test)
{
	/* Deleting from a full filter makes room for new keys. */
	sk_run_case(test, sieve_test_cuckoo_delete_makes_room);
}

static void sieve_kunit_test_cuckoo_clear_after_full(struct kunit *test)
{
	/* Clearing a full filter also empties its victim slot. */
	sk_run_case(test, sieve_test_cuckoo_clear_after_full);
}

static void sieve_kunit_test_cuckoo_every_fingerprint_width(struct kunit *test)
{
	/* Fingerprints of 4 to 16 bits pack, unpack and delete alike. */
	sk_run_case(test, sieve_test_cuckoo_every_fingerprint_width);
}

static void sieve_kunit_test_cuckoo_merge_unsupported(struct kunit *test)
{
	/* Cuckoo filters refuse merges with -EOPNOTSUPP. */
	sk_run_case(test, sieve_test_cuckoo_merge_not_supported);
}

static void sieve_kunit_test_cuckoo_add_if_absent(struct kunit *test)
{
	/* With SIEVE_ADD_IF_ABSENT a present key is not stored again. */
	sk_run_case(test, sieve_test_cuckoo_add_if_absent);
}

static void sieve_kunit_test_cuckoo_batch_fills_up(struct kunit *test)
{
	/* A batch larger than the table: refusals, and no stored key lost. */
	sk_run_case(test, sieve_test_cuckoo_batch_fills_up);
}

static void sieve_kunit_test_cuckoo_snapshot_keeps_victim(struct kunit *test)
{
	/* A full table's parked fingerprint survives a snapshot. */
	sk_run_case(test, sieve_test_snapshot_cuckoo_victim_survives);
}

/* ---- sieve_filter: geometry and sizing ---------------------------------- */

static void sieve_kunit_test_geometry_rejects_bad(struct kunit *test)
{
	/* Each invalid geometry is refused with its documented error. */
	sk_run_case(test, sieve_test_geometry_rejects_bad);
}

static void sieve_kunit_test_geometry_create_rejects_bad(struct kunit *test)
{
	/* Create refuses what check refuses, and sets no filter. */
	sk_run_case(test, sieve_test_geometry_create_rejects_bad);
}

static void sieve_kunit_test_geometry_accepts_valid(struct kunit *test)
{
	/* Valid geometries pass, with the table size they need. */
	sk_run_case(test, sieve_test_geometry_accepts_valid);
}

static void sieve_kunit_test_geometry_create_keeps_geometry(struct kunit *test)
{
	/* A created filter reports its geometry and sizes. */
	sk_run_case(test, sieve_test_geometry_create_keeps_geometry);
}

static void sieve_kunit_test_sizing_gives_valid_geometry(struct kunit *test)
{
	/* Sizing gives a valid geometry that keeps the rate it promises. */
	sk_run_case(test, sieve_test_sizing_gives_valid_geometry);
}

static void sieve_kunit_test_sizing_bloom_formula(struct kunit *test)
{
	/* Bloom sizing follows m = n log2(1/p) / ln 2, k = log2(1/p). */
	sk_run_case(test, sieve_test_sizing_bloom_formula);
}

static void sieve_kunit_test_sizing_cuckoo_fingerprint(struct kunit *test)
{
	/* Cuckoo fingerprints are the smallest f with 2^f p >= 8. */
	sk_run_case(test, sieve_test_sizing_cuckoo_fingerprint_exact);
}

static void sieve_kunit_test_sizing_cuckoo_buckets(struct kunit *test)
{
	/* Cuckoo buckets: a power of two for a 96% load. */
	sk_run_case(test, sieve_test_sizing_cuckoo_buckets);
}

static void sieve_kunit_test_sizing_rejects_bad_input(struct kunit *test)
{
	/* Zero or out-of-range capacity, rate or type is refused. */
	sk_run_case(test, sieve_test_sizing_rejects_bad_input);
}

static void sieve_kunit_test_expected_fpr_monotonic(struct kunit *test)
{
	/* The expected FPR starts at 0 and never falls as keys are added. */
	sk_run_case(test, sieve_test_sizing_expected_fpr_monotonic);
}

/* ---- sieve_filter: snapshots -------------------------------------------- */

static void sieve_kunit_test_snapshot_refuses_bad_header(struct kunit *test)
{
	/* A header with an impossible field is refused, resealed or not. */
	sk_run_case(test, sieve_test_snapshot_refuses_bad_header);
}

static void sieve_kunit_test_snapshot_refuses_bad_layer(struct kunit *test)
{
	/* A layer header with an impossible field is refused. */
	sk_run_case(test, sieve_test_snapshot_refuses_bad_layer);
}

static void sieve_kunit_test_snapshot_refuses_bad_checksum(struct kunit *test)
{
	/* A byte changed without a new checksum is caught at the end. */
	sk_run_case(test, sieve_test_snapshot_refuses_bad_checksum);
}

static void sieve_kunit_test_snapshot_refuses_bloom_tail(struct kunit *test)
{
	/* A Bloom table with a bit set past nbits is refused. */
	sk_run_case(test, sieve_test_snapshot_refuses_bloom_tail_bits);
}

static void sieve_kunit_test_snapshot_refuses_cuckoo_state(struct kunit *test)
{
	/* Cuckoo padding, item count and victim slot are checked. */
	sk_run_case(test, sieve_test_snapshot_refuses_bad_cuckoo_state);
}

static void sieve_kunit_test_snapshot_truncated_or_trailing(struct kunit *test)
{
	/* A short snapshot is never complete; trailing bytes are refused. */
	sk_run_case(test, sieve_test_snapshot_truncated_and_trailing);
}

static void sieve_kunit_test_snapshot_two_layers(struct kunit *test)
{
	/* Each layer of a two-layer snapshot comes back with its own table. */
	sk_run_case(test, sieve_test_snapshot_two_layers);
}

static struct kunit_case sieve_filter_test_cases[] = {
	KUNIT_CASE_PARAM(sieve_kunit_test_add_reports_new_then_present, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_empty_contains_nothing, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_no_false_negatives, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_one_byte_keys, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_long_key, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_empty_key, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_clear_forgets_keys, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_seed_decides_false_positives, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_unknown_add_flag_is_einval, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_batch_matches_single, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_estimate_follows_keys, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_fpr_grows_with_fill, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_smallest_geometry_keeps_keys, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_sized_filter_meets_its_rate, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_snapshot_round_trip, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_snapshot_refuses_bit_flips, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_bloom_count_is_0_or_1, sk_bloom_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_bloom_delete_unsupported, sk_bloom_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_bloom_merge_is_union, sk_bloom_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_bloom_merge_empty_and_self, sk_bloom_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_bloom_merge_mismatch_is_einval,
			 sk_bloom_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_bloom_odd_sizes, sk_bloom_types_gen_params),
	KUNIT_CASE(sieve_kunit_test_cuckoo_count_follows_copies),
	KUNIT_CASE(sieve_kunit_test_cuckoo_delete_absent_is_enoent),
	KUNIT_CASE(sieve_kunit_test_cuckoo_eight_copies_at_most),
	KUNIT_CASE(sieve_kunit_test_cuckoo_fills_to_95_percent),
	KUNIT_CASE(sieve_kunit_test_cuckoo_full_keeps_keys),
	KUNIT_CASE(sieve_kunit_test_cuckoo_delete_makes_room),
	KUNIT_CASE(sieve_kunit_test_cuckoo_clear_after_full),
	KUNIT_CASE(sieve_kunit_test_cuckoo_every_fingerprint_width),
	KUNIT_CASE(sieve_kunit_test_cuckoo_merge_unsupported),
	KUNIT_CASE(sieve_kunit_test_cuckoo_add_if_absent),
	KUNIT_CASE(sieve_kunit_test_cuckoo_batch_fills_up),
	KUNIT_CASE(sieve_kunit_test_cuckoo_snapshot_keeps_victim),
	KUNIT_CASE(sieve_kunit_test_geometry_rejects_bad),
	KUNIT_CASE(sieve_kunit_test_geometry_create_rejects_bad),
	KUNIT_CASE(sieve_kunit_test_geometry_accepts_valid),
	KUNIT_CASE(sieve_kunit_test_geometry_create_keeps_geometry),
	KUNIT_CASE(sieve_kunit_test_sizing_gives_valid_geometry),
	KUNIT_CASE(sieve_kunit_test_sizing_bloom_formula),
	KUNIT_CASE(sieve_kunit_test_sizing_cuckoo_fingerprint),
	KUNIT_CASE(sieve_kunit_test_sizing_cuckoo_buckets),
	KUNIT_CASE(sieve_kunit_test_sizing_rejects_bad_input),
	KUNIT_CASE(sieve_kunit_test_expected_fpr_monotonic),
	KUNIT_CASE(sieve_kunit_test_snapshot_refuses_bad_header),
	KUNIT_CASE(sieve_kunit_test_snapshot_refuses_bad_layer),
	KUNIT_CASE(sieve_kunit_test_snapshot_refuses_bad_checksum),
	KUNIT_CASE(sieve_kunit_test_snapshot_refuses_bloom_tail),
	KUNIT_CASE(sieve_kunit_test_snapshot_refuses_cuckoo_state),
	KUNIT_CASE(sieve_kunit_test_snapshot_truncated_or_trailing),
	KUNIT_CASE(sieve_kunit_test_snapshot_two_layers),
	{}
};

static struct kunit_suite sieve_filter_test_suite = {
	.name = "sieve_filter",
	.test_cases = sieve_filter_test_cases,
};

/* ---- sieve_registry: helpers -------------------------------------------- */

#define SK_REG_SEED	0x5eed0301U
#define SK_RATE_PPB	10000000	/* 1% */
#define SK_MAX_HELD	4

/*
 * What a registry case holds, so that the suite's exit releases it even
 * when an assertion ended the case early: filters it created (destroyed
 * again; -ENOENT if the case did it) and references it took.
 */
struct sk_ctx {
	u32 ids[SK_MAX_HELD];
	u32 nids;
	struct sieve *refs[SK_MAX_HELD];
	u32 nrefs;
};

static int sk_registry_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct sk_ctx), GFP_KERNEL);
	return test->priv ? 0 : -ENOMEM;
}

static void sk_registry_exit(struct kunit *test)
{
	struct sk_ctx *ctx = test->priv;
	u32 i;

	for (i = 0; i < ctx->nrefs; i++)
		if (ctx->refs[i])
			sieve_put(ctx->refs[i]);
	for (i = 0; i < ctx->nids; i++)
		sieve_destroy_kernel(ctx->ids[i]);
}

/* Creates filter @name (fixed seed, 1%); the case ends if it cannot. */
static u32 sk_create(struct kunit *test, const char *name, u32 type, u64 capacity,
		     bool scalable)
{
	struct sk_ctx *ctx = test->priv;
	struct sieve_kernel_create c = {
		.name = name,
		.type = type,
		.flags = SIEVE_CREATE_SEED | (scalable ? SIEVE_CREATE_SCALABLE : 0),
		.capacity = capacity,
		.fpp_ppb = SK_RATE_PPB,
		.seed = SK_REG_SEED,
		.growth = scalable ? 2 : 0,
		.max_layers = scalable ? 4 : 0,
	};
	u32 id = 0;

	KUNIT_ASSERT_LT(test, ctx->nids, SK_MAX_HELD);
	KUNIT_ASSERT_EQ(test, sieve_create_kernel(&c, &id), 0);
	ctx->ids[ctx->nids++] = id;
	return id;
}

/* A reference to filter @id, put by sk_put() or the suite's exit. */
static struct sieve *sk_get_id(struct kunit *test, u32 id)
{
	struct sk_ctx *ctx = test->priv;
	struct sieve *s;

	KUNIT_ASSERT_LT(test, ctx->nrefs, SK_MAX_HELD);
	s = sieve_get_id(id);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	ctx->refs[ctx->nrefs++] = s;
	return s;
}

static void sk_put(struct kunit *test, struct sieve *s)
{
	struct sk_ctx *ctx = test->priv;
	u32 i;

	for (i = 0; i < ctx->nrefs; i++) {
		if (ctx->refs[i] == s) {
			ctx->refs[i] = NULL;
			sieve_put(s);
			return;
		}
	}
	KUNIT_FAIL(test, "put of a reference the case does not hold");
}

/* Adds keys (@set, @from .. @to - 1): how many were new, or the first error. */
static long sk_add_range(struct sieve *s, u32 set, u32 from, u32 to)
{
	struct tc_key k;
	long fresh = 0;
	int ret;
	u32 i;

	for (i = from; i < to; i++) {
		tc_key_make(&k, set, i);
		ret = sieve_add(s, k.b, k.len, 0);
		if (ret < 0)
			return ret;
		fresh += !ret;
	}
	return fresh;
}

/* How many of keys (@set, @from .. @to - 1) the filter reports present. */
static u32 sk_found(struct sieve *s, u32 set, u32 from, u32 to)
{
	struct tc_key k;
	u32 i, found = 0;

	for (i = from; i < to; i++) {
		tc_key_make(&k, set, i);
		found += sieve_contains(s, k.b, k.len) == 1;
	}
	return found;
}

static u32 sk_nlayers(struct sieve *s)
{
	u32 n;

	rcu_read_lock();
	n = rcu_dereference(s->layers)->n;
	rcu_read_unlock();
	return n;
}

/* ---- sieve_registry: cases ---------------------------------------------- */

static void sieve_kunit_test_get_by_name(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.byname", SIEVE_BLOOM, 1000, false);
	struct sieve *s = sieve_get("kunit.byname");

	/* A created filter is found by its name, and it is the one with its id. */
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	KUNIT_EXPECT_EQ(test, s->id, id);
	sieve_put(s);
}

static void sieve_kunit_test_get_by_id(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.byid", SIEVE_CUCKOO, 1000, false);
	struct sieve *by_id = sk_get_id(test, id);
	struct sieve *by_name = sieve_get("kunit.byid");

	/* Lookups by id and by name give the same filter. */
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, by_name);
	KUNIT_EXPECT_PTR_EQ(test, by_id, by_name);
	sieve_put(by_name);
}

static void sieve_kunit_test_unknown_is_enoent(struct kunit *test)
{
	/* Names and ids nobody registered are -ENOENT. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(sieve_get("kunit.nobody")), -ENOENT);
	KUNIT_EXPECT_EQ(test, PTR_ERR(sieve_get("")), -ENOENT);
	KUNIT_EXPECT_EQ(test, PTR_ERR(sieve_get_id(0)), -ENOENT);
	KUNIT_EXPECT_EQ(test, PTR_ERR(sieve_get_id(U32_MAX)), -ENOENT);
}

static void sieve_kunit_test_enoent_after_destroy(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.gone", SIEVE_BLOOM, 1000, false);

	KUNIT_ASSERT_EQ(test, sieve_destroy_kernel(id), 0);
	/* A destroyed filter has neither name nor id, and cannot be destroyed twice. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(sieve_get("kunit.gone")), -ENOENT);
	KUNIT_EXPECT_EQ(test, PTR_ERR(sieve_get_id(id)), -ENOENT);
	KUNIT_EXPECT_EQ(test, sieve_destroy_kernel(id), -ENOENT);
}

static void sieve_kunit_test_name_free_after_destroy(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.reuse", SIEVE_BLOOM, 1000, false);
	u32 id2;

	KUNIT_ASSERT_EQ(test, sieve_destroy_kernel(id), 0);
	id2 = sk_create(test, "kunit.reuse", SIEVE_BLOOM, 1000, false);
	/* The name is free again at once; the new filter gets another id. */
	KUNIT_EXPECT_NE(test, id2, id);
}

static void sieve_kunit_test_destroyed_usable_until_put(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.held", SIEVE_CUCKOO, 1000, false);
	struct sieve *s = sk_get_id(test, id);

	KUNIT_ASSERT_GE(test, sk_add_range(s, TC_SET_IN, 0, 100), 0);
	KUNIT_ASSERT_EQ(test, sieve_destroy_kernel(id), 0);
	/* A reference keeps a destroyed filter working: its keys, new keys, deletes. */
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN, 0, 100), 100);
	KUNIT_EXPECT_GE(test, sk_add_range(s, TC_SET_IN, 100, 200), 0);
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN, 0, 200), 200);
	KUNIT_EXPECT_EQ(test, sieve_delete(s, "x", 1), 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(sieve_get_id(id)), -ENOENT);
	sk_put(test, s);
}

static void sieve_kunit_test_api_add_new_then_present(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.add", sk_param_type(test), 1000, false);
	struct sieve *s = sk_get_id(test, id);
	static const char key[] = "kunit-key";

	/* Through the API too, a new key is 0, then 1; contains follows. */
	KUNIT_EXPECT_EQ(test, sieve_contains(s, key, sizeof(key)), 0);
	KUNIT_EXPECT_EQ(test, sieve_add(s, key, sizeof(key), 0), 0);
	KUNIT_EXPECT_EQ(test, sieve_contains(s, key, sizeof(key)), 1);
	KUNIT_EXPECT_EQ(test, sieve_add(s, key, sizeof(key), SIEVE_ADD_IF_ABSENT), 1);
}

static void sieve_kunit_test_api_no_false_negatives(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.nofn", sk_param_type(test), 3000, false);
	struct sieve *s = sk_get_id(test, id);
	u32 fp;

	KUNIT_ASSERT_GE(test, sk_add_range(s, TC_SET_IN, 0, 3000), 0);
	/* Every key added is found. */
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN, 0, 3000), 3000);
	/* Keys never added: at most twice the 1% the filter was sized for. */
	fp = sk_found(s, TC_SET_OUT, 0, 10000);
	KUNIT_EXPECT_LE(test, fp, 200);
}

static void sieve_kunit_test_api_bad_key_is_einval(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.badkey", sk_param_type(test), 1000, false);
	struct sieve *s = sk_get_id(test, id);
	static const char key[] = "k";

	/* Empty, missing or too long keys and unknown flags are -EINVAL. */
	KUNIT_EXPECT_EQ(test, sieve_add(s, key, 0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sieve_add(s, NULL, 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sieve_add(s, key, SIEVE_MAX_KEY_LEN + 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sieve_add(s, key, 1, 1U << 31), -EINVAL);
	KUNIT_EXPECT_EQ(test, sieve_contains(s, key, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sieve_delete(s, key, 0), -EINVAL);
	/* Nothing was stored by them. */
	KUNIT_EXPECT_EQ(test, sieve_contains(s, key, 1), 0);
}

static void sieve_kunit_test_api_cuckoo_delete(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.delete", SIEVE_CUCKOO, 1000, false);
	struct sieve *s = sk_get_id(test, id);
	static const char key[] = "kunit-delete";

	KUNIT_ASSERT_GE(test, sk_add_range(s, TC_SET_IN, 0, 500), 0);
	KUNIT_ASSERT_EQ(test, sieve_add(s, key, sizeof(key), 0), 0);
	/* A delete removes the key: 1, then it is gone and a second delete is 0. */
	KUNIT_EXPECT_EQ(test, sieve_delete(s, key, sizeof(key)), 1);
	KUNIT_EXPECT_EQ(test, sieve_contains(s, key, sizeof(key)), 0);
	KUNIT_EXPECT_EQ(test, sieve_delete(s, key, sizeof(key)), 0);
	/* The other keys are untouched. */
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN, 0, 500), 500);
}

static void sieve_kunit_test_api_bloom_delete_unsupported(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.nodelete", sk_param_type(test), 1000, false);
	struct sieve *s = sk_get_id(test, id);
	static const char key[] = "kunit-keep";

	KUNIT_ASSERT_EQ(test, sieve_add(s, key, sizeof(key), 0), 0);
	/* Bloom types refuse deletes and keep the key. */
	KUNIT_EXPECT_EQ(test, sieve_delete(s, key, sizeof(key)), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, sieve_contains(s, key, sizeof(key)), 1);
}

static void sieve_kunit_test_api_cuckoo_full_is_enospc(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.full", SIEVE_CUCKOO, 100, false);
	struct sieve *s = sk_get_id(test, id);
	long stored = 0;
	struct tc_key k;
	int ret = 0;

	for (stored = 0; stored < 10000; stored++) {
		tc_key_make(&k, TC_SET_IN, stored);
		ret = sieve_add(s, k.b, k.len, 0);
		if (ret < 0)
			break;
	}
	/* A full cuckoo filter says -ENOSPC... */
	KUNIT_EXPECT_EQ(test, ret, -ENOSPC);
	KUNIT_EXPECT_GE(test, stored, 100);
	/* ...and keeps every key it took. */
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN, 0, stored), stored);
}

static void sieve_kunit_test_scalable_growth_keeps_keys(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.grow", sk_param_type(test), 500, true);
	struct sieve *s = sk_get_id(test, id);

	KUNIT_EXPECT_EQ(test, sk_nlayers(s), 1);
	KUNIT_ASSERT_GE(test, sk_add_range(s, TC_SET_IN, 0, 3000), 0);
	/* 3000 keys overflow layers of 500 and 1000: a third layer was stacked. */
	KUNIT_EXPECT_EQ(test, sk_nlayers(s), 3);
	/* Growing lost no key. */
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN, 0, 3000), 3000);
}

/* Keys added from a timer callback, in softirq context. */
struct sk_softirq_work {
	struct timer_list timer;
	struct completion done;
	struct sieve *s;
	u32 from, to;
	bool in_task;
	int first_error;
};

static void sk_softirq_add(struct timer_list *timer)
{
	struct sk_softirq_work *w = from_timer(w, timer, timer);
	struct tc_key k;
	int ret;
	u32 i;

	w->in_task = in_task();
	for (i = w->from; i < w->to && !w->first_error; i++) {
		tc_key_make(&k, TC_SET_IN, i);
		ret = sieve_add(w->s, k.b, k.len, 0);
		if (ret < 0)
			w->first_error = ret;
	}
	complete(&w->done);
}

static void sieve_kunit_test_softirq_add_does_not_grow(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.softirq", sk_param_type(test), 500, true);
	struct sieve *s = sk_get_id(test, id);
	struct sk_softirq_work w = { .s = s, .from = 500, .to = 700 };

	KUNIT_ASSERT_GE(test, sk_add_range(s, TC_SET_IN, 0, 500), 0);
	init_completion(&w.done);
	timer_setup_on_stack(&w.timer, sk_softirq_add, 0);
	mod_timer(&w.timer, jiffies);
	wait_for_completion(&w.done);
	del_timer_sync(&w.timer);
	destroy_timer_on_stack(&w.timer);
	/* From softirq, a full layer takes more keys instead of growing. */
	KUNIT_EXPECT_FALSE(test, w.in_task);
	KUNIT_EXPECT_EQ(test, w.first_error, 0);
	KUNIT_EXPECT_EQ(test, sk_nlayers(s), 1);
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN, 0, 700), 700);
	/* The next add from process context grows it, keeping every key. */
	KUNIT_EXPECT_GE(test, sk_add_range(s, TC_SET_IN, 700, 701), 0);
	KUNIT_EXPECT_EQ(test, sk_nlayers(s), 2);
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN, 0, 701), 701);
}

/* A writer thread adding keys while the case queries others. */
struct sk_writer {
	struct completion done;
	struct sieve *s;
	u32 n;
	long result;
};

static int sk_writer_fn(void *data)
{
	struct sk_writer *w = data;

	w->result = sk_add_range(w->s, TC_SET_IN2, 0, w->n);
	complete(&w->done);
	return 0;
}

/* Keys stored before the writer starts, and keys it adds (cuckoo: 85% full). */
#define SK_RACE_BEFORE	3000
#define SK_RACE_ADDED	4000

static void sieve_kunit_test_queries_during_adds_never_miss(struct kunit *test)
{
	u32 id = sk_create(test, "kunit.race", sk_param_type(test), 4000, false);
	struct sieve *s = sk_get_id(test, id);
	struct sk_writer w = { .s = s, .n = SK_RACE_ADDED };
	struct task_struct *task;
	u32 rounds = 0, missed = 0;
	unsigned int cpu;

	KUNIT_ASSERT_GE(test, sk_add_range(s, TC_SET_IN, 0, SK_RACE_BEFORE), 0);
	init_completion(&w.done);
	task = kthread_create(sk_writer_fn, &w, "sieve_kunit_writer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	/* On another CPU if there is one, so that adds and queries overlap. */
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (cpu < nr_cpu_ids)
		kthread_bind(task, cpu);
	wake_up_process(task);
	/* Cuckoo adds move fingerprints between buckets: readers must still see them. */
	do {
		missed += SK_RACE_BEFORE - sk_found(s, TC_SET_IN, 0, SK_RACE_BEFORE);
		rounds++;
		/* Without preemption, the writer may need this CPU. */
		cond_resched();
	} while (!completion_done(&w.done));
	wait_for_completion(&w.done);
	/* No stored key was ever missed by a query racing with the adds. */
	KUNIT_EXPECT_EQ(test, missed, 0);
	KUNIT_EXPECT_GE(test, w.result, 0);
	/* Afterwards, every key of both sets is there. */
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN, 0, SK_RACE_BEFORE), SK_RACE_BEFORE);
	KUNIT_EXPECT_EQ(test, sk_found(s, TC_SET_IN2, 0, SK_RACE_ADDED), SK_RACE_ADDED);
	kunit_info(test, "%u query rounds during the adds", rounds);
}

static void sieve_kunit_test_memory_returns_after_destroy(struct kunit *test)
{
	u64 before = sieve_memory_in_use();
	u32 id = sk_create(test, "kunit.memory", sk_param_type(test), 500, true);
	struct sieve *s = sk_get_id(test, id);
	u64 one_layer = sieve_memory_in_use();

	KUNIT_EXPECT_GT(test, one_layer, before);
	KUNIT_ASSERT_GE(test, sk_add_range(s, TC_SET_IN, 0, 1000), 0);
	/* Growth is counted... */
	KUNIT_EXPECT_GT(test, sieve_memory_in_use(), one_layer);
	sk_put(test, s);
	KUNIT_ASSERT_EQ(test, sieve_destroy_kernel(id), 0);
	/* ...and everything is given back by the destroy. */
	KUNIT_EXPECT_EQ(test, sieve_memory_in_use(), before);
}

static void sieve_kunit_test_memory_held_until_last_put(struct kunit *test)
{
	u64 before = sieve_memory_in_use();
	u32 id = sk_create(test, "kunit.lastput", SIEVE_BLOOM, 10000, false);
	struct sieve *a = sk_get_id(test, id), *b = sk_get_id(test, id);

	KUNIT_ASSERT_EQ(test, sieve_destroy_kernel(id), 0);
	sk_put(test, a);
	/* While a reference is held, the filter's memory stays counted... */
	KUNIT_EXPECT_GT(test, sieve_memory_in_use(), before);
	KUNIT_EXPECT_GE(test, sk_add_range(b, TC_SET_IN, 0, 10), 0);
	KUNIT_EXPECT_EQ(test, sk_found(b, TC_SET_IN, 0, 10), 10);
	sk_put(test, b);
	/* ...and the last put gives it all back. */
	KUNIT_EXPECT_EQ(test, sieve_memory_in_use(), before);
}

static void sieve_kunit_test_create_duplicate_is_eexist(struct kunit *test)
{
	struct sieve_kernel_create c = {
		.name = "kunit.twice", .type = SIEVE_CUCKOO, .capacity = 1000,
		.fpp_ppb = SK_RATE_PPB,
	};
	u32 id = 0;

	sk_create(test, "kunit.twice", SIEVE_BLOOM, 1000, false);
	/* A name is taken whatever the type; the refusal leaves the id alone. */
	KUNIT_EXPECT_EQ(test, sieve_create_kernel(&c, &id), -EEXIST);
	KUNIT_EXPECT_EQ(test, id, 0);
}

/* A valid request, and one field of it changed to something invalid. */
struct sk_bad_create {
	struct sieve_kernel_create c;
	int err;
};

#define SK_OK	.type = SIEVE_BLOOM, .capacity = 1000, .fpp_ppb = SK_RATE_PPB
#define SK_SCAL	.flags = SIEVE_CREATE_SCALABLE, .capacity = 1000, .fpp_ppb = SK_RATE_PPB

static const struct sk_bad_create sk_bad_creates[] = {
	{ { .name = NULL, SK_OK }, -EINVAL },
	{ { .name = "", SK_OK }, -EINVAL },
	{ { .name = "has space", SK_OK }, -EINVAL },
	{ { .name = "kunit.name-of-thirty-two-bytes.x", SK_OK }, -ENAMETOOLONG },
	{ { .name = "kunit.bad", SK_OK, .flags = SIEVE_CREATE_EPHEMERAL }, -EINVAL },
	{ { .name = "kunit.bad", SK_OK, .flags = SIEVE_CREATE_GEOMETRY }, -EINVAL },
	{ { .name = "kunit.bad", SK_OK, .flags = 1U << 30 }, -EINVAL },
	{ { .name = "kunit.bad", SK_OK, .seed = 1 }, -EINVAL },
	{ { .name = "kunit.bad", SK_OK, .growth = 2 }, -EINVAL },
	{ { .name = "kunit.bad", .type = 0, .capacity = 1000, .fpp_ppb = SK_RATE_PPB }, -EINVAL },
	{ { .name = "kunit.bad", .type = 4, .capacity = 1000, .fpp_ppb = SK_RATE_PPB }, -EINVAL },
	{ { .name = "kunit.bad", .type = SIEVE_BLOOM, .capacity = 0, .fpp_ppb = 1 }, -EINVAL },
	{ { .name = "kunit.bad", .type = SIEVE_BLOOM, .capacity = 10, .fpp_ppb = 0 }, -EINVAL },
	{ { .name = "kunit.bad", .type = SIEVE_BLOOM, .capacity = 10, .fpp_ppb = SIEVE_PPB },
	  -EINVAL },
	{ { .name = "kunit.bad", .type = SIEVE_BLOOM, .capacity = SIEVE_MAX_CAPACITY + 1,
	    .fpp_ppb = SK_RATE_PPB }, -E2BIG },
	{ { .name = "kunit.bad", .type = SIEVE_BLOOM, SK_SCAL, .growth = 1, .max_layers = 4 },
	  -EINVAL },
	{ { .name = "kunit.bad", .type = SIEVE_BLOOM, SK_SCAL, .growth = 17, .max_layers = 4 },
	  -EINVAL },
	{ { .name = "kunit.bad", .type = SIEVE_BLOOM, SK_SCAL, .growth = 2, .max_layers = 1 },
	  -EINVAL },
	{ { .name = "kunit.bad", .type = SIEVE_BLOOM, SK_SCAL, .growth = 2,
	    .max_layers = SIEVE_MAX_LAYERS + 1 }, -EINVAL },
	/* A rate of 100% or more stays invalid though halving would bring it in range. */
	{ { .name = "kunit.bad", .type = SIEVE_BLOOM, .flags = SIEVE_CREATE_SCALABLE,
	    .capacity = 1000, .fpp_ppb = SIEVE_PPB + 2, .growth = 2, .max_layers = 4 }, -EINVAL },
};

static void sieve_kunit_test_create_refuses_bad_params(struct kunit *test)
{
	u64 before = sieve_memory_in_use();
	u32 i, id;

	for (i = 0; i < ARRAY_SIZE(sk_bad_creates); i++) {
		id = 0;
		/* Each invalid request gets its error and registers nothing. */
		KUNIT_EXPECT_EQ_MSG(test, sieve_create_kernel(&sk_bad_creates[i].c, &id),
				    sk_bad_creates[i].err, "sk_bad_creates[%u]", i);
		KUNIT_EXPECT_EQ_MSG(test, id, 0, "sk_bad_creates[%u]", i);
	}
	KUNIT_EXPECT_EQ(test, PTR_ERR(sieve_get("kunit.bad")), -ENOENT);
	KUNIT_EXPECT_EQ(test, sieve_memory_in_use(), before);
}

/* Growth and layers left 0 mean the defaults, as through SIEVE_IOC_CREATE. */
static void sieve_kunit_test_create_scalable_defaults(struct kunit *test)
{
	const struct sieve_kernel_create c = {
		.name = "kunit.defaults", .type = SIEVE_BLOOM, .flags = SIEVE_CREATE_SCALABLE,
		.capacity = 1000, .fpp_ppb = SK_RATE_PPB,
	};
	struct sieve *s;
	u32 id = 0;

	KUNIT_ASSERT_EQ(test, sieve_create_kernel(&c, &id), 0);
	s = sieve_get_id(id);
	KUNIT_ASSERT_FALSE(test, IS_ERR(s));
	KUNIT_EXPECT_EQ(test, s->growth, SIEVE_DEFAULT_GROWTH);
	KUNIT_EXPECT_EQ(test, s->max_layers, SIEVE_DEFAULT_LAYERS);
	sieve_put(s);
	KUNIT_EXPECT_EQ(test, sieve_destroy_kernel(id), 0);
}

static struct kunit_case sieve_registry_test_cases[] = {
	KUNIT_CASE(sieve_kunit_test_get_by_name),
	KUNIT_CASE(sieve_kunit_test_create_scalable_defaults),
	KUNIT_CASE(sieve_kunit_test_get_by_id),
	KUNIT_CASE(sieve_kunit_test_unknown_is_enoent),
	KUNIT_CASE(sieve_kunit_test_enoent_after_destroy),
	KUNIT_CASE(sieve_kunit_test_name_free_after_destroy),
	KUNIT_CASE(sieve_kunit_test_destroyed_usable_until_put),
	KUNIT_CASE_PARAM(sieve_kunit_test_api_add_new_then_present, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_api_no_false_negatives, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_api_bad_key_is_einval, sk_all_types_gen_params),
	KUNIT_CASE(sieve_kunit_test_api_cuckoo_delete),
	KUNIT_CASE_PARAM(sieve_kunit_test_api_bloom_delete_unsupported, sk_bloom_types_gen_params),
	KUNIT_CASE(sieve_kunit_test_api_cuckoo_full_is_enospc),
	KUNIT_CASE_PARAM(sieve_kunit_test_scalable_growth_keeps_keys, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_softirq_add_does_not_grow, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_queries_during_adds_never_miss, sk_all_types_gen_params),
	KUNIT_CASE_PARAM(sieve_kunit_test_memory_returns_after_destroy, sk_all_types_gen_params),
	KUNIT_CASE(sieve_kunit_test_memory_held_until_last_put),
	KUNIT_CASE(sieve_kunit_test_create_duplicate_is_eexist),
	KUNIT_CASE(sieve_kunit_test_create_refuses_bad_params),
	{}
};

static struct kunit_suite sieve_registry_test_suite = {
	.name = "sieve_registry",
	.init = sk_registry_init,
	.exit = sk_registry_exit,
	.test_cases = sieve_registry_test_cases,
};

kunit_test_suites(&sieve_filter_test_suite, &sieve_registry_test_suite);

MODULE_DESCRIPTION("sieve: KUnit tests of the filter cores and the registry");
MODULE_AUTHOR("sieve developers");
MODULE_LICENSE("GPL");
/* The cores and the create contract, exported for test modules only. */
SIEVE_IMPORT_INTERNAL();
