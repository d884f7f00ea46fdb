// SPDX-License-Identifier: GPL-2.0
/*
 * sieve_dedup: an example user of sieve's in-kernel API. Records written
 * to /sys/kernel/debug/sieve_dedup/feed, one per line, go through a
 * registered filter (module parameter filter=NAME, created beforehand
 * through /dev/sieve); a record the filter reports present is a duplicate.
 * /sys/kernel/debug/sieve_dedup/stats shows the counts:
 *
 *   filter NAME
 *   records N      lines seen
 *   unique N       added as new
 *   duplicates N   reported present (a Bloom filter's false positives too)
 *   errors N       refused by the filter (full) or longer than a key may be
 *
 * A line split across two writes is joined; a last line without a newline
 * counts when the file is closed. The filter is looked up at the first
 * write and held until the module is unloaded.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sieve_kapi.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

static char *filter_name = "dedup";
module_param_named(filter, filter_name, charp, 0444);
MODULE_PARM_DESC(filter, "name of the sieve filter records go through (default dedup)");

static struct dentry *dedup_dir;
/* Looked up at the first record, under dedup_lock; put at unload. */
static struct sieve *dedup_filter;
static DEFINE_MUTEX(dedup_lock);
static atomic64_t dedup_records, dedup_unique, dedup_duplicates, dedup_errors;

/**
 * struct dedup_feed - one open feed file
 * @lock: serialises writes: write() holds the file's f_pos_lock, but
 *	pwrite() and io_uring do not, and two of them would race on @len.
 * @line: the start of a line whose newline has not arrived yet.
 * @len: bytes in @line.
 * @too_long: the current line outgrew a key: it is an error, not a record.
 * @buf: the bytes of one write, a page at a time.
 */
struct dedup_feed {
	struct mutex lock;
	char line[SIEVE_MAX_KEY_LEN];
	u32 len;
	bool too_long;
	char buf[PAGE_SIZE];
};

static struct sieve *dedup_get_filter(void)
{
	struct sieve *s;

	mutex_lock(&dedup_lock);
	if (!dedup_filter) {
		s = sieve_get(filter_name);
		if (!IS_ERR(s))
			dedup_filter = s;
	}
	s = dedup_filter ?: ERR_PTR(-ENOENT);
	mutex_unlock(&dedup_lock);
	return s;
}

/* One whole line of @feed: a record, unless it is empty or too long. */
static void dedup_record(struct sieve *s, struct dedup_feed *feed)
{
	int ret;

	if (feed->too_long) {
		atomic64_inc(&dedup_errors);
	} else if (feed->len) {
		atomic64_inc(&dedup_records);
		ret = sieve_add(s, feed->line, feed->len, SIEVE_ADD_IF_ABSENT);
		if (ret < 0)
			atomic64_inc(&dedup_errors);
		else
			atomic64_inc(ret ? &dedup_duplicates : &dedup_unique);
	}
	feed->len = 0;
	feed->too_long = false;
}

static void dedup_bytes(struct sieve *s, struct dedup_feed *feed, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] == '\n')
			dedup_record(s, feed);
		else if (feed->len < sizeof(feed->line))
			feed->line[feed->len++] = p[i];
		else
			feed->too_long = true;
	}
}

static ssize_t dedup_feed_write(struct file *file, const char __user *ubuf, size_t count,
				loff_t *ppos)
{
	struct dedup_feed *feed = file->private_data;
	struct sieve *s = dedup_get_filter();
	size_t done = 0;
	bool fault = false;

	if (IS_ERR(s))
		return PTR_ERR(s);
	if (mutex_lock_killable(&feed->lock))
		return -EINTR;
	while (done < count) {
		size_t n = min(count - done, sizeof(feed->buf));

		fault = copy_from_user(feed->buf, ubuf + done, n);
		if (fault)
			break;
		dedup_bytes(s, feed, feed->buf, n);
		done += n;
		cond_resched();
	}
	mutex_unlock(&feed->lock);
	if (fault && !done)
		return -EFAULT;
	*ppos += done;
	return done;
}

static int dedup_feed_open(struct inode *inode, struct file *file)
{
	struct dedup_feed *feed = kzalloc(sizeof(*feed), GFP_KERNEL);

	if (!feed)
		return -ENOMEM;
	mutex_init(&feed->lock);
	file->private_data = feed;
	return 0;
}

static int dedup_feed_release(struct inode *inode, struct file *file)
{
	struct dedup_feed *feed = file->private_data;

	/* A last line without its newline. */
	if (feed->len || feed->too_long) {
		struct sieve *s = dedup_get_filter();

		if (!IS_ERR(s))
			dedup_record(s, feed);
	}
	mutex_destroy(&feed->lock);
	kfree(feed);
	return 0;
}

static const struct file_operations dedup_feed_fops = {
	.owner = THIS_MODULE,
	.open = dedup_feed_open,
	.write = dedup_feed_write,
	.release = dedup_feed_release,
	.llseek = noop_llseek,
};

static int dedup_stats_show(struct seq_file *m, void *v)
{
	seq_printf(m, "filter %s\nrecords %lld\nunique %lld\nduplicates %lld\nerrors %lld\n",
		   filter_name, atomic64_read(&dedup_records), atomic64_read(&dedup_unique),
		   atomic64_read(&dedup_duplicates), atomic64_read(&dedup_errors));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dedup_stats);

static int __init dedup_init(void)
{
	dedup_dir = debugfs_create_dir("sieve_dedup", NULL);
	if (IS_ERR(dedup_dir))
		return PTR_ERR(dedup_dir);
	debugfs_create_file("feed", 0200, dedup_dir, NULL, &dedup_feed_fops);
	debugfs_create_file("stats", 0400, dedup_dir, NULL, &dedup_stats_fops);
	return 0;
}

static void __exit dedup_exit(void)
{
	/* No feed file is open: an open one holds the module. */
	debugfs_remove_recursive(dedup_dir);
	if (dedup_filter)
		sieve_put(dedup_filter);
}

module_init(dedup_init);
module_exit(dedup_exit);

MODULE_DESCRIPTION("sieve example: deduplicate records through a sieve filter");
MODULE_AUTHOR("sieve developers");
MODULE_LICENSE("GPL");
