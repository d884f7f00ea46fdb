// SPDX-License-Identifier: GPL-2.0
/*
 * sieve_bench_kmod.ko: the in-kernel half of `make bench-vm`. It times the
 * filter cores called directly (no device, no registry) on the same keys
 * and the same geometry the userspace half sends through /dev/sieve, so
 * the two can be divided: what the ioctl path costs on top of the core.
 *
 *   echo "TYPE NKEYS" > /sys/kernel/debug/sieve_bench/run
 *   cat /sys/kernel/debug/sieve_bench/result
 *
 * A run makes a filter of TYPE sized by sieve_size() for NKEYS keys at 1%,
 * adds the keys one call at a time, then in batches of 16, 256 and 4096
 * (clearing before each), then queries them the same four ways; each
 * figure is the fastest of five runs. If the registry holds a filter
 * called "bench.kapi", the keys also go through the in-kernel API
 * (sieve_add once, sieve_contains best of five) one at a time.
 * Each measurement appends a line "TYPE OP PATH NS_PER_KEY_X100" to the
 * result. Keys are 8 bytes: key i is i * 0x9E3779B97F4A7C15 + 1, little
 * endian, as the userspace half makes them.
 */
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sieve_kapi.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "filter.h"

#define BENCH_MAX_KEYS	(4U << 20)
#define BENCH_MAX_BATCH	4096
#define RESULT_BYTES	8192
#define BENCH_SEED	0x5eedbe9c
#define BENCH_FPP	10000000U	/* 1% */
#define BENCH_REPS	5

static const u32 batch_sizes[] = { 16, 256, 4096 };

/* One run at a time; result and its length under the same lock. */
static DEFINE_MUTEX(bench_lock);
static char result[RESULT_BYTES];
static size_t result_len;
static struct dentry *bench_dir;

/* Scratch of one run, freed at its end. */
struct bench {
	u32 type, n;
	u64 *keys;
	struct sieve_key *batch;
	int *add_results;
	bool *query_results;
	struct sieve_filter *f;
};

static const char *const type_names[] = { "?", "bloom", "blocked", "cuckoo" };

static void record(struct bench *b, const char *op, const char *path, u64 ns)
{
	/* hundredths of a ns per key: no floating point in the kernel */
	u64 per_key_x100 = div_u64(ns * 100, b->n);

	result_len += scnprintf(result + result_len, RESULT_BYTES - result_len,
				"%s %s %s %llu\n", type_names[b->type], op, path, per_key_x100);
}

static u64 add_single(struct bench *b)
{
	u64 t0 = ktime_get_ns();
	u32 i;

	for (i = 0; i < b->n; i++) {
		sieve_filter_add(b->f, &b->keys[i], sizeof(u64));
		if ((i & 4095) == 4095)
			cond_resched();
	}
	return ktime_get_ns() - t0;
}

static u64 query_single(struct bench *b)
{
	u64 t0 = ktime_get_ns();
	u32 i, hits = 0;

	for (i = 0; i < b->n; i++) {
		hits += sieve_filter_contains(b->f, &b->keys[i], sizeof(u64));
		if ((i & 4095) == 4095)
			cond_resched();
	}
	/* every key was added: a miss is a core bug, and keeps the loop alive */
	if (hits != b->n)
		pr_warn("sieve_bench: %u of %u keys missing\n", b->n - hits, b->n);
	return ktime_get_ns() - t0;
}

/* The keys in batches of @bs: add or query. */
static u64 run_batches(struct bench *b, u32 bs, bool add)
{
	u64 t0 = ktime_get_ns();
	u32 i, j;

	for (i = 0; i < b->n; i += bs) {
		u32 m = min(bs, b->n - i);

		for (j = 0; j < m; j++)
			b->batch[j] = (struct sieve_key){ .data = &b->keys[i + j], .len = 8 };
		if (add)
			sieve_filter_add_batch(b->f, b->batch, m, 0, b->add_results);
		else
			sieve_filter_contains_batch(b->f, b->batch, m, b->query_results);
		cond_resched();
	}
	return ktime_get_ns() - t0;
}

/* The same keys through the registry's in-kernel API, if bench.kapi exists. */
static void run_kapi(struct bench *b)
{
	struct sieve *s = sieve_get("bench.kapi");
	u64 t0, best = U64_MAX;
	u32 i, rep;

	if (IS_ERR(s))
		return;
	/* one add pass (the registry filter is the caller's: no clear here) */
	t0 = ktime_get_ns();
	for (i = 0; i < b->n; i++) {
		sieve_add(s, &b->keys[i], 8, 0);
		if ((i & 4095) == 4095)
			cond_resched();
	}
	record(b, "add", "kapi-single", ktime_get_ns() - t0);
	for (rep = 0; rep < BENCH_REPS; rep++) {
		t0 = ktime_get_ns();
		for (i = 0; i < b->n; i++) {
			sieve_contains(s, &b->keys[i], 8);
			if ((i & 4095) == 4095)
				cond_resched();
		}
		best = min(best, ktime_get_ns() - t0);
	}
	record(b, "query", "kapi-single", best);
	sieve_put(s);
}

/*
 * One figure: the fastest of BENCH_REPS runs (an add starts from an empty
 * filter each time), since what else the machine does only adds time.
 * @bs 0 is one call per key.
 */
static u64 best_of(struct bench *b, u32 bs, bool add)
{
	u64 best = U64_MAX, t;
	u32 rep;

	for (rep = 0; rep < BENCH_REPS; rep++) {
		if (add)
			sieve_filter_clear(b->f);
		if (bs)
			t = run_batches(b, bs, add);
		else
			t = add ? add_single(b) : query_single(b);
		best = min(best, t);
	}
	return best;
}

static void measure(struct bench *b)
{
	char path[16];
	u32 k;

	record(b, "add", "core-single", best_of(b, 0, true));
	for (k = 0; k < ARRAY_SIZE(batch_sizes); k++) {
		snprintf(path, sizeof(path), "core-batch%u", batch_sizes[k]);
		record(b, "add", path, best_of(b, batch_sizes[k], true));
	}
	/* the last add left every key in: queries are all positive */
	record(b, "query", "core-single", best_of(b, 0, false));
	for (k = 0; k < ARRAY_SIZE(batch_sizes); k++) {
		snprintf(path, sizeof(path), "core-batch%u", batch_sizes[k]);
		record(b, "query", path, best_of(b, batch_sizes[k], false));
	}
	run_kapi(b);
}

static int bench_run(u32 type, u32 n)
{
	struct sieve_geometry geo;
	struct bench b = { .type = type, .n = n };
	int err;
	u32 i;

	err = sieve_size(type, n, BENCH_FPP, &geo);
	if (err)
		return err;
	geo.seed = BENCH_SEED;
	err = sieve_filter_create(&geo, &b.f);
	if (err)
		return err;
	err = -ENOMEM;
	b.keys = vmalloc(array_size(n, sizeof(u64)));
	b.batch = kmalloc_array(BENCH_MAX_BATCH, sizeof(*b.batch), GFP_KERNEL);
	b.add_results = kmalloc_array(BENCH_MAX_BATCH, sizeof(int), GFP_KERNEL);
	b.query_results = kmalloc_array(BENCH_MAX_BATCH, sizeof(bool), GFP_KERNEL);
	if (!b.keys || !b.batch || !b.add_results || !b.query_results)
		goto out_free;
	for (i = 0; i < n; i++)
		b.keys[i] = cpu_to_le64((u64)i * 0x9E3779B97F4A7C15ULL + 1);
	measure(&b);
	err = 0;
out_free:
	kfree(b.query_results);
	kfree(b.add_results);
	kfree(b.batch);
	vfree(b.keys);
	sieve_filter_destroy(b.f);
	return err;
}

static ssize_t run_write(struct file *file, const char __user *ubuf, size_t len, loff_t *ppos)
{
	char buf[32];
	u32 type, n;
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%u %u", &type, &n) != 2 || type < SIEVE_BLOOM ||
	    type > SIEVE_CUCKOO || !n || n > BENCH_MAX_KEYS)
		return -EINVAL;
	mutex_lock(&bench_lock);
	err = bench_run(type, n);
	mutex_unlock(&bench_lock);
	return err ? err : len;
}

static ssize_t result_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&bench_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, result, result_len);
	mutex_unlock(&bench_lock);
	return ret;
}

static const struct file_operations run_fops = {
	.owner = THIS_MODULE,
	.write = run_write,
};

static const struct file_operations result_fops = {
	.owner = THIS_MODULE,
	.read = result_read,
};

static int __init bench_init(void)
{
	bench_dir = debugfs_create_dir("sieve_bench", NULL);
	debugfs_create_file("run", 0200, bench_dir, NULL, &run_fops);
	debugfs_create_file("result", 0400, bench_dir, NULL, &result_fops);
	return 0;
}

static void __exit bench_exit(void)
{
	debugfs_remove_recursive(bench_dir);
}

module_init(bench_init);
module_exit(bench_exit);

MODULE_DESCRIPTION("sieve: the cores timed in the kernel, for the device benchmark");
MODULE_LICENSE("GPL");
/* The cores and the create contract, exported for test modules only. */
SIEVE_IMPORT_INTERNAL();
