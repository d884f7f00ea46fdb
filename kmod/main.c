// SPDX-License-Identifier: GPL-2.0
/*
 * sieve.ko: probabilistic set-membership filters for the kernel.
 *
 * For now the module carries the filter cores and offers them to other
 * kernel code (kernel-side dedup experiments, the in-kernel tests); the
 * /dev/sieve device and its registry of named filters build on them.
 */
#include <linux/module.h>

#include "filter.h"

EXPORT_SYMBOL_GPL(sieve_geometry_check);
EXPORT_SYMBOL_GPL(sieve_filter_create);
EXPORT_SYMBOL_GPL(sieve_filter_destroy);
EXPORT_SYMBOL_GPL(sieve_filter_merge);
EXPORT_SYMBOL_GPL(sieve_filter_add_batch);
EXPORT_SYMBOL_GPL(sieve_filter_contains_batch);
EXPORT_SYMBOL_GPL(sieve_size);
EXPORT_SYMBOL_GPL(sieve_expected_fpr_ppb);
EXPORT_SYMBOL_GPL(sieve_words_or);
EXPORT_SYMBOL_GPL(sieve_words_weight);

static int __init sieve_init(void)
{
	return 0;
}

static void __exit sieve_exit(void)
{
}

module_init(sieve_init);
module_exit(sieve_exit);

MODULE_DESCRIPTION("sieve: Bloom, blocked Bloom and cuckoo filters");
MODULE_AUTHOR("sieve developers");
MODULE_LICENSE("GPL");
