// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/sieve (0400): one line per filter, then the module's own totals,
 * which the leak tests compare with 0 once every filter is gone:
 *
 *   # id name type flags layers items capacity fill_ppm fpr_ppb memory_bytes inserted deleted queries hits
 *   1 blocklist bloom 0x0 1 1000 100000 14200 1 125024 1000 0 5 3
 *   # filters 1 memory_bytes 126000
 *
 * "filters" counts filters not yet freed (a destroyed filter still in use
 * counts until its last user is done); "memory_bytes" every byte counted
 * against max_memory_mb: tables, held exports, imports in progress.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "registry.h"

static const char *const sieve_type_names[] = {
	[SIEVE_BLOOM] = "bloom",
	[SIEVE_BLOCKED_BLOOM] = "blocked",
	[SIEVE_CUCKOO] = "cuckoo",
};

static void sieve_proc_filter(struct seq_file *m, struct sieve *s)
{
	struct sieve_report r;

	sieve_report(s, &r);
	seq_printf(m, "%u %s %s %#x %u %llu %llu %u %u %llu %llu %llu %llu %llu\n",
		   s->id, s->name, sieve_type_names[s->type], s->create_flags, r.nlayers,
		   r.items, r.capacity, r.fill_ppm, r.fpr_ppb, r.memory_bytes,
		   r.stats.inserted, r.stats.deleted, r.stats.queries, r.stats.hits);
}

static int sieve_proc_show(struct seq_file *m, void *v)
{
	unsigned long id;
	struct sieve *s;

	seq_puts(m, "# id name type flags layers items capacity fill_ppm fpr_ppb memory_bytes inserted deleted queries hits\n");
	for (id = 0; (s = sieve_next(&id)); id++) {
		sieve_proc_filter(m, s);
		sieve_release(s);
		cond_resched();
	}
	seq_printf(m, "# filters %u memory_bytes %llu\n", sieve_filters_in_use(),
		   sieve_memory_in_use());
	return 0;
}

int sieve_procfs_init(void)
{
	return proc_create_single("sieve", 0400, NULL, sieve_proc_show) ? 0 : -ENOMEM;
}

void sieve_procfs_exit(void)
{
	remove_proc_entry("sieve", NULL);
}
