// SPDX-License-Identifier: GPL-2.0
/*
 * Test cases of the create contract (kmod/create.c), shared like
 * core_cases.c: run under cmocka in userspace and inside the kernel in the
 * VM, so the module and libsieve are shown to judge a request alike.
 */
#include "harness.h"
#include "../../kmod/create.h"

#define CC_RATE		10000000U	/* 1% */

static struct sieve_create_spec cc_sized(u32 flags)
{
	return (struct sieve_create_spec) {
		.type = SIEVE_BLOOM, .flags = flags, .capacity = 1000, .fpp_ppb = CC_RATE,
	};
}

static void sieve_test_create_accepts_valid(struct sieve_test *t)
{
	struct sieve_create_spec s = cc_sized(0);

	EXPECT_EQ(t, sieve_create_check(&s), 0);
	s = cc_sized(SIEVE_CREATE_SCALABLE | SIEVE_CREATE_EPHEMERAL | SIEVE_CREATE_SEED);
	s.seed = 7;
	EXPECT_EQ(t, sieve_create_check(&s), 0);
	s = (struct sieve_create_spec){ .type = SIEVE_CUCKOO, .flags = SIEVE_CREATE_GEOMETRY };
	EXPECT_EQ(t, sieve_create_check(&s), 0);
	s = cc_sized(0);
	s.capacity = SIEVE_MAX_CAPACITY;
	s.fpp_ppb = SIEVE_PPB - 1;
	EXPECT_EQ(t, sieve_create_check(&s), 0);
}

/* Each field out of its range, or given where it does not apply. */
static void sieve_test_create_refuses_bad_fields(struct sieve_test *t)
{
	struct sieve_create_spec s;

	s = cc_sized(1U << 31);
	EXPECT_EQ(t, sieve_create_check(&s), -EINVAL);
	s = cc_sized(SIEVE_CREATE_SCALABLE | SIEVE_CREATE_GEOMETRY);
	s.capacity = s.fpp_ppb = 0;
	EXPECT_EQ(t, sieve_create_check(&s), -EINVAL);
	s = cc_sized(0);
	s.type = 0;
	EXPECT_EQ(t, sieve_create_check(&s), -EINVAL);
	s.type = SIEVE_CUCKOO + 1;
	EXPECT_EQ(t, sieve_create_check(&s), -EINVAL);
	s = cc_sized(0);
	s.seed = 1;	/* without SIEVE_CREATE_SEED */
	EXPECT_EQ(t, sieve_create_check(&s), -EINVAL);
	s = cc_sized(SIEVE_CREATE_GEOMETRY);	/* with a capacity and rate */
	EXPECT_EQ(t, sieve_create_check(&s), -EINVAL);
	s = cc_sized(0);
	s.capacity = 0;
	EXPECT_EQ(t, sieve_create_check(&s), -EINVAL);
	s = cc_sized(0);
	s.fpp_ppb = 0;
	EXPECT_EQ(t, sieve_create_check(&s), -EINVAL);
	s.fpp_ppb = SIEVE_PPB;
	EXPECT_EQ(t, sieve_create_check(&s), -EINVAL);
	/* Well-formed but too large: the one -E2BIG of the contract. */
	s = cc_sized(0);
	s.capacity = SIEVE_MAX_CAPACITY + 1;
	EXPECT_EQ(t, sieve_create_check(&s), -E2BIG);
}

static int cc_layering(u32 flags, u32 growth, u32 max_layers)
{
	struct sieve_create_spec s = cc_sized(flags);

	s.growth = growth;
	s.max_layers = max_layers;
	return sieve_create_check(&s);
}

/* Growth and layers: their limits, 0 for the default, nothing unless scalable. */
static void sieve_test_create_layering_ranges(struct sieve_test *t)
{
	const u32 sc = SIEVE_CREATE_SCALABLE;

	EXPECT_EQ(t, cc_layering(sc, 0, 0), 0);
	EXPECT_EQ(t, cc_layering(sc, SIEVE_MIN_GROWTH, SIEVE_MIN_LAYERS), 0);
	EXPECT_EQ(t, cc_layering(sc, SIEVE_MAX_GROWTH, SIEVE_MAX_LAYERS), 0);
	EXPECT_EQ(t, cc_layering(sc, SIEVE_MIN_GROWTH - 1, 0), -EINVAL);
	EXPECT_EQ(t, cc_layering(sc, SIEVE_MAX_GROWTH + 1, 0), -EINVAL);
	EXPECT_EQ(t, cc_layering(sc, 0, SIEVE_MIN_LAYERS - 1), -EINVAL);
	EXPECT_EQ(t, cc_layering(sc, 0, SIEVE_MAX_LAYERS + 1), -EINVAL);
	EXPECT_EQ(t, cc_layering(0, SIEVE_MIN_GROWTH, 0), -EINVAL);
	EXPECT_EQ(t, cc_layering(0, 0, 1), -EINVAL);
	EXPECT_EQ(t, cc_layering(0, 0, SIEVE_MIN_LAYERS), -EINVAL);
}

static void sieve_test_create_layering_defaults(struct sieve_test *t)
{
	struct sieve_create_spec s = cc_sized(SIEVE_CREATE_SCALABLE);
	u32 growth = 99, layers = 99;

	sieve_create_layering(&s, &growth, &layers);
	EXPECT_EQ(t, growth, SIEVE_DEFAULT_GROWTH);
	EXPECT_EQ(t, layers, SIEVE_DEFAULT_LAYERS);
	s.growth = 5;
	s.max_layers = 3;
	sieve_create_layering(&s, &growth, &layers);
	EXPECT_EQ(t, growth, 5);
	EXPECT_EQ(t, layers, 3);
	s = cc_sized(0);
	sieve_create_layering(&s, &growth, &layers);
	EXPECT_EQ(t, growth, 0);
	EXPECT_EQ(t, layers, 1);
	/* A made filter's layering (a snapshot's): defaults already resolved. */
	EXPECT_EQ(t, sieve_layering_check(0, 0, 1), 0);
	EXPECT_EQ(t, sieve_layering_check(0, 0, 0), -EINVAL);
	EXPECT_EQ(t, sieve_layering_check(SIEVE_CREATE_SCALABLE, 0, 8), -EINVAL);
	EXPECT_EQ(t, sieve_layering_check(SIEVE_CREATE_SCALABLE, 2, 0), -EINVAL);
	EXPECT_EQ(t, sieve_layering_check(SIEVE_CREATE_SCALABLE, SIEVE_MAX_GROWTH,
					  SIEVE_MAX_LAYERS), 0);
}

static void sieve_test_create_names(struct sieve_test *t)
{
	static const char n32[] = "abcdefghijabcdefghijabcdefghij12";
	char field[SIEVE_NAME_MAX];

	EXPECT_EQ(t, sieve_name_check("good.name-1_X"), 0);
	EXPECT_EQ(t, sieve_name_check(""), -EINVAL);
	EXPECT_EQ(t, sieve_name_check(NULL), -EINVAL);
	EXPECT_EQ(t, sieve_name_check("a b"), -EINVAL);
	EXPECT_EQ(t, sieve_name_check("a/b"), -EINVAL);
	EXPECT_EQ(t, sieve_name_check("caf\xc3\xa9"), -EINVAL);
	/* 31 bytes is the longest; 32 has no room for the NUL. */
	memcpy(field, n32, SIEVE_NAME_MAX);
	EXPECT_EQ(t, sieve_name_check(field), -ENAMETOOLONG);
	EXPECT_EQ(t, sieve_name_field_check(field), -ENAMETOOLONG);
	field[31] = '\0';
	EXPECT_EQ(t, sieve_name_check(field), 0);
	EXPECT_EQ(t, sieve_name_field_check(field), 0);
	/* In an ioctl field the bytes after the NUL are reserved. */
	memset(field, 0, sizeof(field));
	memcpy(field, "ab\0cd", 5);
	EXPECT_EQ(t, sieve_name_check(field), 0);
	EXPECT_EQ(t, sieve_name_field_check(field), -EINVAL);
}

#define CC_CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_create_cases[] = {
	CC_CASE(sieve_test_create_accepts_valid),
	CC_CASE(sieve_test_create_refuses_bad_fields),
	CC_CASE(sieve_test_create_layering_ranges),
	CC_CASE(sieve_test_create_layering_defaults),
	CC_CASE(sieve_test_create_names),
};
const unsigned int sieve_create_ncases = ARRAY_SIZE(sieve_create_cases);
