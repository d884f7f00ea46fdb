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
