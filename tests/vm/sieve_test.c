// SPDX-License-Identifier: GPL-2.0
/*
 * sieve_test.ko: the filter-core test cases of tests/cases/, run inside the
 * kernel against the cores exported by sieve.ko, plus the kernel's side of
 * the kernel/userspace parity report (parity.h).
 *
 * Everything runs once, while the module loads (as KUnit suites do). The
 * results stay readable until it is unloaded:
 *   /sys/kernel/debug/sieve_test/ktap    the cases' KTAP report
 *   /sys/kernel/debug/sieve_test/parity  the parity report
 * The KTAP lines also go to the kernel log. A failing case still lets the
 * module load: the report says what failed; only running out of memory for
 * the reports fails the load.
 */
#include <linux/debugfs.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../cases/harness.h"
#include "../../kmod/device.h"
#include "parity.h"

/* A failing expectation in a loop must not flood the report. */
#define MAX_DIAGNOSTICS_PER_CASE	8
#define KTAP_BYTES	(64 * 1024)
#define PARITY_BYTES	(128 * 1024)

/* A text buffer that debugfs hands out as a file. */
struct report {
	struct debugfs_blob_wrapper blob;
	size_t cap;
	bool overflowed;
};

struct sieve_test {
	const struct sieve_test_case *tc;
	unsigned int failures;
	struct report *ktap;
};

static struct report ktap_report, parity_report_buf;
static struct dentry *debug_dir;

static __printf(2, 3) void report_printf(struct report *r, const char *fmt, ...)
{
	char *data = r->blob.data;
	va_list ap;
	int n;

	if (r->overflowed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(data + r->blob.size, r->cap - r->blob.size, fmt, ap);
	va_end(ap);
	if ((size_t)n >= r->cap - r->blob.size) {
		/* Cut at the last whole line: the reader sees a short report. */
		r->overflowed = true;
		data[r->blob.size] = '\0';
		return;
	}
	r->blob.size += n;
}

/* A KTAP line: into the report and the kernel log. */
#define ktap_line(r, fmt, ...)	do {				\
	report_printf(r, fmt "\n", ##__VA_ARGS__);		\
	pr_info(fmt "\n", ##__VA_ARGS__);			\
} while (0)

void sieve_test_fail(struct sieve_test *t, const char *file, int line,
		     const char *expr, long long a, long long b)
{
	t->failures++;
	if (t->failures <= MAX_DIAGNOSTICS_PER_CASE)
		ktap_line(t->ktap, "# %s:%d: %s (%lld vs %lld)",
			  kbasename(file), line, expr, a, b);
	else if (t->failures == MAX_DIAGNOSTICS_PER_CASE + 1)
		ktap_line(t->ktap, "# %s: more failures not shown", t->tc->name);
}

/*
 * The copy-in rule of /dev/sieve's structs (clone3() style), proven on a
 * struct grown by one field, as a later struct sieve_id might be: callers
 * of either version are served, a newer one's unknown request is not.
 * The struct sits in a user page mapped into insmod's process.
 */
struct abi_grown_id {
	struct sieve_id v0;
	__u64 added;
};

static void abi_check_grown(struct sieve_test *t, u8 __user *u)
{
	struct sieve_id old = { .size = SIEVE_ID_SIZE_VER0, .id = 7 };
	struct abi_grown_id g;
	u8 tail[8], nonzero = 1;

	memset(&g, 0xff, sizeof(g));
	EXPECT_EQ(t, copy_to_user(u, &old, sizeof(old)), 0);
	EXPECT_EQ(t, clear_user(u + sizeof(old), PAGE_SIZE - sizeof(old)), 0);
	/* A caller of the first version: served, the new field reads as zero. */
	EXPECT_EQ(t, sieve_copy_in(&g, sizeof(g), SIEVE_ID_SIZE_VER0, u), 0);
	EXPECT_EQ(t, g.v0.id, 7);
	EXPECT_EQ(t, g.added, 0);
	/* The answer goes no further than its size: the bytes after it stay. */
	EXPECT_EQ(t, copy_to_user(u + sizeof(old), &nonzero, 1), 0);
	g.added = 0;
	EXPECT_EQ(t, sieve_copy_out(u, &g, sizeof(g)), 0);
	EXPECT_EQ(t, copy_from_user(tail, u + sizeof(old), sizeof(tail)), 0);
	EXPECT_EQ(t, tail[0], 1);
	/* A newer caller whose extra bytes are zero: served. */
	EXPECT_EQ(t, clear_user(u + sizeof(old), 1), 0);
	EXPECT_EQ(t, put_user((u32)sizeof(g) + 8, (u32 __user *)u), 0);
	EXPECT_EQ(t, sieve_copy_in(&g, sizeof(g), SIEVE_ID_SIZE_VER0, u), 0);
	/* ... and one asking for something this kernel lacks: -E2BIG. */
	EXPECT_EQ(t, copy_to_user(u + sizeof(g) + 7, &nonzero, 1), 0);
	EXPECT_EQ(t, sieve_copy_in(&g, sizeof(g), SIEVE_ID_SIZE_VER0, u), -E2BIG);
	EXPECT_EQ(t, put_user((u32)SIEVE_ID_SIZE_VER0 - 4, (u32 __user *)u), 0);
	EXPECT_EQ(t, sieve_copy_in(&g, sizeof(g), SIEVE_ID_SIZE_VER0, u), -EINVAL);
	EXPECT_EQ(t, put_user((u32)PAGE_SIZE + 1, (u32 __user *)u), 0);
	EXPECT_EQ(t, sieve_copy_in(&g, sizeof(g), SIEVE_ID_SIZE_VER0, u), -E2BIG);
}

static void sieve_test_abi_struct_growth(struct sieve_test *t)
{
	unsigned long addr = vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
				     MAP_ANONYMOUS | MAP_PRIVATE, 0);

	EXPECT_TRUE(t, !IS_ERR_VALUE(addr));
	if (IS_ERR_VALUE(addr))
		return;
	abi_check_grown(t, (u8 __user *)addr);
	vm_munmap(addr, PAGE_SIZE);
}

static const struct sieve_test_case sieve_abi_cases[] = {
	{ "sieve_test_abi_struct_growth", sieve_test_abi_struct_growth },
};
static const unsigned int sieve_abi_ncases = ARRAY_SIZE(sieve_abi_cases);

static const struct {
	const struct sieve_test_case *cases;
	const unsigned int *n;
} case_tables[] = {
	{ sieve_core_cases, &sieve_core_ncases },
	{ sieve_snapshot_cases, &sieve_snapshot_ncases },
	{ sieve_create_cases, &sieve_create_ncases },
	{ sieve_abi_cases, &sieve_abi_ncases },
};

static void run_cases(struct report *r)
{
	struct sieve_test t = { .ktap = r };
	unsigned int i, n = 0, total = 0, failed = 0, tab;

	for (tab = 0; tab < ARRAY_SIZE(case_tables); tab++)
		total += *case_tables[tab].n;
	ktap_line(r, "KTAP version 1");
	ktap_line(r, "1..%u", total);
	for (tab = 0; tab < ARRAY_SIZE(case_tables); tab++) {
		for (i = 0; i < *case_tables[tab].n; i++) {
			t.tc = &case_tables[tab].cases[i];
			t.failures = 0;
			t.tc->run(&t);
			if (t.failures)
				failed++;
			ktap_line(r, "%s %u %s", t.failures ? "not ok" : "ok", ++n, t.tc->name);
			cond_resched();
		}
	}
	ktap_line(r, "# sieve_core: %u passed, %u failed", total - failed, failed);
}

static void parity_emit(struct parity_out *out, const char *line)
{
	report_printf(&parity_report_buf, "%s\n", line);
}

static int report_alloc(struct report *r, size_t cap)
{
	r->blob.data = kvzalloc(cap, GFP_KERNEL);
	if (!r->blob.data)
		return -ENOMEM;
	r->blob.size = 0;
	r->cap = cap;
	r->overflowed = false;
	return 0;
}

static void report_free(struct report *r)
{
	kvfree(r->blob.data);
	r->blob.data = NULL;
}

static int __init sieve_test_init(void)
{
	struct parity_out out = { .emit = parity_emit };
	int err;

	err = report_alloc(&ktap_report, KTAP_BYTES);
	if (err)
		return err;
	err = report_alloc(&parity_report_buf, PARITY_BYTES);
	if (err)
		goto out_free_ktap;

	run_cases(&ktap_report);
	/* Without its buffer the parity report stops short; the host sees that. */
	parity_report(&out);

	/* No debugfs is not fatal: the KTAP report is in the kernel log too. */
	debug_dir = debugfs_create_dir("sieve_test", NULL);
	debugfs_create_blob("ktap", 0444, debug_dir, &ktap_report.blob);
	debugfs_create_blob("parity", 0444, debug_dir, &parity_report_buf.blob);
	return 0;

out_free_ktap:
	report_free(&ktap_report);
	return err;
}

static void __exit sieve_test_exit(void)
{
	debugfs_remove_recursive(debug_dir);
	report_free(&parity_report_buf);
	report_free(&ktap_report);
}

module_init(sieve_test_init);
module_exit(sieve_test_exit);

/* The shared cases, compiled against the kernel's environment. */
#include "../cases/core_cases.c"
#include "../cases/snapshot_cases.c"
#include "../cases/create_cases.c"

MODULE_DESCRIPTION("sieve: in-kernel tests of the filter cores");
MODULE_AUTHOR("sieve developers");
MODULE_LICENSE("GPL");
/* The cores and the create contract, exported for test modules only. */
SIEVE_IMPORT_INTERNAL();
