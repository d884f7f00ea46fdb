// SPDX-License-Identifier: GPL-2.0
/* libsieve's file helpers: whole reads and writes, replace-by-rename. */
#define _GNU_SOURCE	/* asprintf */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

int sieve_io_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t sieve_io_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static int write_in_place(const char *path, int (*fill)(int fd, void *ctx), void *ctx)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	err = fill(fd, ctx);
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int sieve_io_write_path(const char *path, int (*fill)(int fd, void *ctx), void *ctx)
{
	struct stat st;
	char *tmp;
	int fd, err;

	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return write_in_place(path, fill, ctx);
	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		err = -errno;
		goto out_free_tmp;
	}
	err = fill(fd, ctx);
	/* Errors of delayed writes (a full disk on NFS) surface at close. */
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
out_free_tmp:
	free(tmp);
	return err;
}
