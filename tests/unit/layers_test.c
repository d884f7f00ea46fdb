// SPDX-License-Identifier: GPL-2.0
/*
 * The layer policy (kmod/layers.c) through libsieve's local filters: the
 * growth sequences of tests/cases/layer_seqs.h, each checked against the
 * policy as that header writes it out. The VM runs the same sequences on
 * /dev/sieve beside libsieve and compares them layer by layer.
 */
#include "unit.h"
#include "../cases/layer_seqs.h"
#include "../../kmod/layers.h"

/* Runs layer_seqs[from, to) locally; each must agree with the policy. */
static void run_seqs(struct sieve_test *t, u32 from, u32 to)
{
	struct layer_trace tr;
	u32 i;

	for (i = from; i < to; i++) {
		struct ls_local side = ls_local_side();
		const char *why;
		int err = layer_run(&layer_seqs[i], &side.side, &tr);

		CHECKF(t, !err, "%s: run failed: %d", layer_seqs[i].name, err);
		why = err ? NULL : layer_trace_check(&layer_seqs[i], &tr);
		CHECKF(t, !why, "%s: %s", layer_seqs[i].name, why);
		sieve_note("%s: %u layers, %u new, %u present, %u refused (first at add %d)",
			   layer_seqs[i].name, tr.nlayers, tr.added, tr.present, tr.enospc,
			   tr.first_enospc);
	}
}

/* New filters grow layer by layer, and stop at max_layers. */
static void sieve_unit_layers_growth(struct sieve_test *t)
{
	run_seqs(t, 0, 4);
}

/* Copies of one key in a scalable cuckoo filter are refused, not a new layer. */
static void sieve_unit_layers_repeated_key(struct sieve_test *t)
{
	run_seqs(t, 4, 6);
}

/* Imported filters of 20 and 31 layers: growth stops where the rate reaches 0. */
static void sieve_unit_layers_many(struct sieve_test *t)
{
	run_seqs(t, 6, ARRAY_SIZE(layer_seqs));
}

/* The policy's edges: the rate past layer 30, a capacity that overflows. */
static void sieve_unit_layers_edges(struct sieve_test *t)
{
	struct sieve_geometry g;
	u64 cap;

	EXPECT_EQ(t, sieve_layer_fpp(SIEVE_PPB - 1, 0), (SIEVE_PPB - 1) / 2);
	EXPECT_EQ(t, sieve_layer_fpp(SIEVE_PPB - 1, 28), (SIEVE_PPB - 1) >> 29);
	EXPECT_EQ(t, sieve_layer_fpp(SIEVE_PPB - 1, 30), 0);
	EXPECT_EQ(t, sieve_layer_fpp(SIEVE_PPB - 1, 31), 0);
	EXPECT_EQ(t, sieve_layer_fpp(SIEVE_PPB - 1, 40), 0);
	EXPECT_EQ(t, sieve_layer_next(SIEVE_BLOOM, LS_PCT, 16, 1, 1ULL << 61, &cap, &g), -E2BIG);
	EXPECT_EQ(t, sieve_layer_next(SIEVE_BLOOM, LS_PCT, 2, 31, 1, &cap, &g), -EINVAL);
	EXPECT_EQ(t, sieve_layer_next(SIEVE_BLOOM, LS_PCT, 2, 3, 1000, &cap, &g), 0);
	EXPECT_EQ(t, cap, 2000);
	EXPECT_TRUE(t, sieve_layers_may_grow(SIEVE_CREATE_SCALABLE, 31, 32));
	EXPECT_TRUE(t, !sieve_layers_may_grow(SIEVE_CREATE_SCALABLE, 32, 32));
	EXPECT_TRUE(t, !sieve_layers_may_grow(0, 1, 1));
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_layers_cases[] = {
	CASE(sieve_unit_layers_growth),
	CASE(sieve_unit_layers_repeated_key),
	CASE(sieve_unit_layers_many),
	CASE(sieve_unit_layers_edges),
};

const unsigned int sieve_layers_cases_n = ARRAY_SIZE(sieve_layers_cases);
