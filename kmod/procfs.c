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
 *
 * A seq_file iterator, one record per filter, so a report (which reads a
 * Bloom filter's whole table) is made once per filter and read, not again
 * each time the output outgrows seq_file's buffer. The position is the
 * filter's id: 0 is the header, ids run from 1 to INT_MAX, then the totals.
 * Filters come by increasing id, so one that lives through the read is
 * listed exactly once; one created meanwhile may or may not be. Between
 * start and stop the iterator holds a reference to the current filter
 * only, and no lock: a report sleeps (the filter's resize_lock, the scan).
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "registry.h"

#define SIEVE_PROC_TOTALS	((loff_t)INT_MAX + 1)

/* The record after the filters; its address is the token. */
static const char sieve_proc_totals;

/*
 * The report seq_file made but could not fit in its buffer: the next read
 * shows it (it is made for the filter the next read starts at) instead of
 * reading the table again.
 * @id: whose report @r is, 0 for none.
 */
struct sieve_proc_iter {
	u32 id;
	struct sieve_report r;
};

static const char *const sieve_type_names[] = {
	[SIEVE_BLOOM] = "bloom",
	[SIEVE_BLOCKED_BLOOM] = "blocked",
	[SIEVE_CUCKOO] = "cuckoo",
};

/* The filter at position *@pos or after it (a reference), else the totals. */
static void *sieve_proc_find(loff_t *pos)
{
	unsigned long id = *pos;
	struct sieve *s;

	if (*pos <= INT_MAX) {
		s = sieve_next(&id);
		if (s) {
			*pos = id;
			return s;
		}
		*pos = SIEVE_PROC_TOTALS;
	}
	return *pos == SIEVE_PROC_TOTALS ? (void *)&sieve_proc_totals : NULL;
}

static bool sieve_proc_is_filter(const void *v)
{
	return v && v != SEQ_START_TOKEN && v != &sieve_proc_totals;
}

static void *sieve_proc_start(struct seq_file *m, loff_t *pos)
{
	struct sieve_proc_iter *it = m->private;

	if (*pos == 0) {
		/* A new pass (a rewind) shows nothing from the last one. */
		it->id = 0;
		return SEQ_START_TOKEN;
	}
	return sieve_proc_find(pos);
}

static void *sieve_proc_next(struct seq_file *m, void *v, loff_t *pos)
{
	if (v == &sieve_proc_totals) {
		*pos = SIEVE_PROC_TOTALS + 1;
		return NULL;
	}
	if (v == SEQ_START_TOKEN) {
		*pos = 1;
	} else {
		*pos = ((struct sieve *)v)->id + 1;
		sieve_release(v);
	}
	return sieve_proc_find(pos);
}

static void sieve_proc_stop(struct seq_file *m, void *v)
{
	if (sieve_proc_is_filter(v))
		sieve_release(v);
}

static int sieve_proc_show(struct seq_file *m, void *v)
{
	struct sieve_proc_iter *it = m->private;
	struct sieve *s = v;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "# id name type flags layers items capacity fill_ppm fpr_ppb memory_bytes inserted deleted queries hits\n");
		return 0;
	}
	if (v == &sieve_proc_totals) {
		seq_printf(m, "# filters %u memory_bytes %llu\n", sieve_filters_in_use(),
			   sieve_memory_in_use());
		return 0;
	}
	if (it->id != s->id) {
		sieve_report(s, &it->r);
		it->id = s->id;
	}
	seq_printf(m, "%u %s %s %#x %u %llu %llu %u %u %llu %llu %llu %llu %llu\n",
		   s->id, s->name, sieve_type_names[s->type], s->create_flags, it->r.nlayers,
		   it->r.items, it->r.capacity, it->r.fill_ppm, it->r.fpr_ppb, it->r.memory_bytes,
		   it->r.stats.inserted, it->r.stats.deleted, it->r.stats.queries,
		   it->r.stats.hits);
	/* Kept only for the retry of a record that did not fit. */
	if (!seq_has_overflowed(m))
		it->id = 0;
	return 0;
}

static const struct seq_operations sieve_proc_ops = {
	.start = sieve_proc_start,
	.next = sieve_proc_next,
	.stop = sieve_proc_stop,
	.show = sieve_proc_show,
};

int sieve_procfs_init(void)
{
	return proc_create_seq_private("sieve", 0400, NULL, &sieve_proc_ops,
				       sizeof(struct sieve_proc_iter), NULL) ? 0 : -ENOMEM;
}

void sieve_procfs_exit(void)
{
	remove_proc_entry("sieve", NULL);
}
