// SPDX-License-Identifier: GPL-2.0
/*
 * sieve.ko: probabilistic set-membership filters for the kernel.
 *
 * The filter cores, a registry of named filters, the /dev/sieve device
 * that userspace drives them through, /proc/sieve, and the in-kernel API
 * (<linux/sieve_kapi.h>), and its kfuncs for XDP and TC where the module
 * has BTF (kfunc.c).
 *
 * Parameters (/sys/module/sieve/parameters/):
 *   max_filters      (rw) filters the registry holds at most; CREATE and
 *                    IMPORT beyond it fail with -ENOSPC.
 *   max_memory_mb    (rw) MiB of tables, exports and imports the module
 *                    holds at most; beyond it -ENOMEM.
 *   max_reader_memory_mb (rw) MiB the snapshots of files opened read-only
 *                    hold at most, apart from max_memory_mb; beyond it
 *                    such an EXPORT fails with -ENOBUFS.
 *   memory_in_use    (ro) bytes counted against max_memory_mb now.
 *   reader_memory_in_use (ro) bytes counted against max_reader_memory_mb.
 *   filters_in_use   (ro) filters not yet freed.
 *   table_scans      (ro) test builds only (SIEVE_COUNT_SCANS): whole-table
 *                    reads for reports so far, for the tests that check a
 *                    report reads each table once.
 * Lowering a limit below what is in use refuses new work; nothing is freed.
 * The two memory counts, filters_in_use, and the last line of /proc/sieve, are 0 once every filter
 * is destroyed and every file closed: the leak tests read them.
 */
#include <linux/moduleparam.h>

#include "registry.h"

module_param_named(max_filters, sieve_max_filters, uint, 0644);
MODULE_PARM_DESC(max_filters, "filters the registry holds at most (default 1024)");
module_param_named(max_memory_mb, sieve_max_memory_mb, uint, 0644);
MODULE_PARM_DESC(max_memory_mb, "MiB of filter memory the module holds at most (default 1024)");

module_param_named(max_reader_memory_mb, sieve_max_reader_memory_mb, uint, 0644);
MODULE_PARM_DESC(max_reader_memory_mb,
		 "MiB of snapshots files opened read-only hold at most (default 256)");

static int sieve_get_memory(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", sieve_memory_in_use());
}

static int sieve_get_reader_memory(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", sieve_reader_memory_in_use());
}

static int sieve_get_filters(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", sieve_filters_in_use());
}

static const struct kernel_param_ops sieve_memory_ops = { .get = sieve_get_memory };
static const struct kernel_param_ops sieve_filters_ops = { .get = sieve_get_filters };
module_param_cb(memory_in_use, &sieve_memory_ops, NULL, 0444);
MODULE_PARM_DESC(memory_in_use, "bytes counted against max_memory_mb now (read-only)");
static const struct kernel_param_ops sieve_reader_memory_ops = {
	.get = sieve_get_reader_memory,
};
module_param_cb(reader_memory_in_use, &sieve_reader_memory_ops, NULL, 0444);
MODULE_PARM_DESC(reader_memory_in_use,
		 "bytes counted against max_reader_memory_mb now (read-only)");
module_param_cb(filters_in_use, &sieve_filters_ops, NULL, 0444);
MODULE_PARM_DESC(filters_in_use, "filters not yet freed (read-only)");

#ifdef SIEVE_COUNT_SCANS
static int sieve_get_scans(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lu\n", sieve_table_scans_read());
}

static const struct kernel_param_ops sieve_scans_ops = { .get = sieve_get_scans };
module_param_cb(table_scans, &sieve_scans_ops, NULL, 0444);
MODULE_PARM_DESC(table_scans, "whole-table reads for reports so far (test builds, read-only)");
#endif

static int __init sieve_init(void)
{
	int err;

	err = sieve_registry_init();
	if (err)
		return err;
	err = sieve_procfs_init();
	if (err)
		goto out_registry;
	/* Before the device: a filter may be made once it exists. */
	err = sieve_kfunc_init();
	if (err)
		goto out_procfs;
	err = sieve_device_init();
	if (err)
		goto out_procfs;
	return 0;

out_procfs:
	sieve_procfs_exit();
out_registry:
	sieve_registry_exit();
	return err;
}

static void __exit sieve_exit(void)
{
	/* No file is open (each holds the module), no new one can be. */
	sieve_device_exit();
	sieve_procfs_exit();
	sieve_destroy_all();
	/* No BPF program holds a filter: each holds the module while loaded. */
	sieve_registry_exit();
	WARN_ON(sieve_memory_in_use() || sieve_reader_memory_in_use() || sieve_filters_in_use());
}

module_init(sieve_init);
module_exit(sieve_exit);

MODULE_DESCRIPTION("sieve: Bloom, blocked Bloom and cuckoo filters");
MODULE_AUTHOR("sieve developers");
MODULE_LICENSE("GPL");
