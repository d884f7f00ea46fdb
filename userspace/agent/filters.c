// SPDX-License-Identifier: GPL-2.0
/*
 * sieve agent: the /dev/sieve filters named in [filters] persistent, kept
 * across module reloads and reboots as snapshots (the module's export
 * format, what `sieve filter export` writes) in STATE_DIR/filters/NAME.snap,
 * mode 0600, in a folder of mode 0700.
 *
 * Restore (at start) imports each listed filter that has a snapshot and is
 * not in the module; a filter already there is left as it is, and a name
 * without a snapshot is not an error (nothing was saved yet).
 *
 * Save (at stop and every save_interval) exports each listed filter into
 * NAME.snap.tmp, fsyncs it, renames it over NAME.snap and fsyncs the
 * folder: a crash at any point leaves the old snapshot or the new one,
 * whole. A temporary file left by a crash is truncated by the next save.
 * A listed filter that is not in the module keeps its old snapshot (its
 * restore may have failed, and the file is then all that is left of it):
 * to drop a filter for good, take it off the list and delete its file.
 *
 * One filter's failure is counted in stats->errors and reported in one line
 * on stderr, and the others go on. Both functions return 0 if every filter
 * went well, else the first failure's -errno.
 *
 * Only libsieve and libc: the VM's statically linked tests use this file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "escape.h"
#include "libsieve.h"

#define FILTERS_DIR	"filters"
#define SNAP_SUFFIX	".snap"
#define TMP_SUFFIX	".snap.tmp"

/* What one call shares between its filters. */
struct filters_run {
	const struct sconf_config *c;
	struct sagent_stats *stats;
	const char *what;		/* "restore" or "save", for messages */
	int dirfd;			/* STATE_DIR/filters, or -1 */
	struct sieve_dev *dev;		/* opened at the first filter that needs it */
	int first_err;
};

/*
 * Counts and reports one failure, in one line whatever the name holds (it
 * may be one name_check() refused); returns @err.
 */
static int run_fail(struct filters_run *r, const char *name, int err, const char *step)
{
	char shown[SCONF_NAME_MAX * 4];

	if (r->stats)
		atomic_fetch_add(&r->stats->errors, 1);
	if (!r->first_err)
		r->first_err = err;
	if (!name) {
		fprintf(stderr, "sieve agent: filters: %s: %s: %s\n", r->what, step, strerror(-err));
		return err;
	}
	/* Escaped by the rule of every log line (escape.h); at most its slot's bytes. */
	sieve_escape_buf(shown, sizeof(shown), name, strnlen(name, SCONF_NAME_MAX),
			 SIEVE_ESC_LOG);
	fprintf(stderr, "sieve agent: filter \"%s\": %s: %s: %s\n", shown, r->what, step,
		strerror(-err));
	return err;
}

/*
 * A listed name becomes a file name: it must be a filter name the module
 * accepts (1 to SIEVE_NAME_MAX - 1 bytes of [A-Za-z0-9._-], so no '/'),
 * terminated within its config slot, and neither "." nor contain "..".
 */
static int name_check(const char *name)
{
	if (strnlen(name, SCONF_NAME_MAX) == SCONF_NAME_MAX)
		return -ENAMETOOLONG;
	if (!strcmp(name, ".") || strstr(name, ".."))
		return -EINVAL;
	return sieve_name_check(name);
}

/* @name's file in the folder: NAME@suffix. */
static int file_name(char *buf, size_t len, const char *name, const char *suffix)
{
	int n = snprintf(buf, len, "%s%s", name, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* STATE_DIR/filters into @buf. */
static int dir_path(const struct sconf_config *c, char *buf, size_t len)
{
	int n;

	if (strnlen(c->state_dir, sizeof(c->state_dir)) == sizeof(c->state_dir) ||
	    !c->state_dir[0])
		return -EINVAL;
	n = snprintf(buf, len, "%s/%s", c->state_dir, FILTERS_DIR);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int dev_get(struct filters_run *r, bool writable)
{
	return r->dev ? 0 : sieve_dev_open(NULL, writable, &r->dev);
}

/* ---- restore ------------------------------------------------------------- */

static void restore_one(struct filters_run *r, const char *name)
{
	char file[SCONF_NAME_MAX + sizeof(SNAP_SUFFIX)], step[sizeof(file) + 40];
	struct stat st;
	int err, fd, id;

	err = name_check(name);
	if (!err)
		err = file_name(file, sizeof(file), name, SNAP_SUFFIX);
	if (err) {
		run_fail(r, name, err, "bad filter name");
		return;
	}
	/* No symlinks, no FIFOs (a read that never ends): a regular file only. */
	fd = openat(r->dirfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			run_fail(r, name, -errno, file);
		return;
	}
	if (fstat(fd, &st)) {
		run_fail(r, name, -errno, file);
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		run_fail(r, name, -EINVAL, "not a regular file");
		goto out_close;
	}
	err = dev_get(r, true);
	if (err) {
		run_fail(r, name, err, sieve_dev_default_path());
		goto out_close;
	}
	if (sieve_dev_lookup(r->dev, name) > 0)
		goto out_close;
	id = sieve_dev_import(r->dev, name, 0, fd);
	/* Created meanwhile by someone else: theirs is left as it is. */
	if (id < 0 && id != -EEXIST) {
		/* libsieve's -EINVAL: a corrupted, truncated or over-long snapshot */
		snprintf(step, sizeof(step), "import of %s%s", file,
			 id == -EINVAL ? " (corrupted snapshot?)" : "");
		run_fail(r, name, id, step);
	}
out_close:
	close(fd);
}

int sagent_filters_restore(const struct sconf_config *c, struct sagent_stats *stats)
{
	struct filters_run r = { .c = c, .stats = stats, .what = "restore", .dirfd = -1 };
	char dir[PATH_MAX];
	unsigned int i;
	int err;

	if (!c->nr_persistent)
		return 0;
	err = dir_path(c, dir, sizeof(dir));
	if (err)
		return run_fail(&r, NULL, err, "state_dir");
	r.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r.dirfd < 0) {
		/* Nothing was ever saved. */
		if (errno == ENOENT)
			return 0;
		return run_fail(&r, NULL, -errno, dir);
	}
	for (i = 0; i < c->nr_persistent && i < SCONF_MAX_FILTERS; i++)
		restore_one(&r, c->persistent[i]);
	if (r.dev)
		sieve_dev_close(r.dev);
	close(r.dirfd);
	return r.first_err;
}

/* ---- save ---------------------------------------------------------------- */

/* mkdir that is content with an existing directory. */
static int mkdir_once(const char *path, mode_t mode)
{
	struct stat st;

	if (!mkdir(path, mode))
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Exports filter @id into the open file @fd and makes it durable. */
static int save_write(struct filters_run *r, uint32_t id, int fd, const char **step)
{
	int err;

	*step = "chmod";
	/* A temporary file left by a crash may have been made otherwise. */
	if (fchmod(fd, 0600))
		return -errno;
	*step = "export";
	err = sieve_dev_export(r->dev, id, fd, NULL);
	if (err)
		return err;
	*step = "fsync";
	return fsync(fd) ? -errno : 0;
}

static void save_one(struct filters_run *r, const char *name)
{
	char file[SCONF_NAME_MAX + sizeof(SNAP_SUFFIX)];
	char tmp[SCONF_NAME_MAX + sizeof(TMP_SUFFIX)];
	const char *step = "bad filter name";
	int err, fd, id;

	err = name_check(name);
	if (!err)
		err = file_name(file, sizeof(file), name, SNAP_SUFFIX);
	if (!err)
		err = file_name(tmp, sizeof(tmp), name, TMP_SUFFIX);
	if (err)
		goto out_fail;
	step = sieve_dev_default_path();
	/*
	 * Writable, though it only exports: a read-only file's snapshot counts
	 * against the module's small readers' budget (max_reader_memory_mb)
	 * and gives up on a cuckoo filter under constant writes (EAGAIN),
	 * where a writer's export stops the writes for one copy.
	 */
	err = dev_get(r, true);
	if (err)
		goto out_fail;
	id = sieve_dev_lookup(r->dev, name);
	/* Not in the module: its old snapshot, if any, stays (see the top). */
	if (id == -ENOENT)
		return;
	step = "lookup";
	err = id;
	if (err < 0)
		goto out_fail;

	step = tmp;
	fd = openat(r->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out_fail;
	}
	err = save_write(r, (uint32_t)id, fd, &step);
	/* Errors of delayed writes (a full disk on NFS) surface at close. */
	if (close(fd) && !err) {
		step = "close";
		err = -errno;
	}
	if (!err && renameat(r->dirfd, tmp, r->dirfd, file)) {
		step = "rename";
		err = -errno;
	}
	if (err)
		goto out_unlink;
	/* The rename itself is durable once the folder is. */
	if (fsync(r->dirfd)) {
		step = "fsync of the folder";
		err = -errno;
		goto out_fail;
	}
	if (r->stats)
		atomic_fetch_add(&r->stats->snapshot_saves, 1);
	return;

out_unlink:
	unlinkat(r->dirfd, tmp, 0);
out_fail:
	run_fail(r, name, err, step);
}

int sagent_filters_save(const struct sconf_config *c, struct sagent_stats *stats)
{
	struct filters_run r = { .c = c, .stats = stats, .what = "save", .dirfd = -1 };
	char dir[PATH_MAX];
	unsigned int i;
	int err;

	if (!c->nr_persistent)
		return 0;
	err = dir_path(c, dir, sizeof(dir));
	if (!err)
		err = mkdir_once(c->state_dir, 0700);
	if (!err)
		err = mkdir_once(dir, 0700);
	if (err)
		return run_fail(&r, NULL, err, dir);
	r.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r.dirfd < 0)
		return run_fail(&r, NULL, -errno, dir);
	for (i = 0; i < c->nr_persistent && i < SCONF_MAX_FILTERS; i++)
		save_one(&r, c->persistent[i]);
	if (r.dev)
		sieve_dev_close(r.dev);
	close(r.dirfd);
	return r.first_err;
}
