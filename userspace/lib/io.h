/* SPDX-License-Identifier: GPL-2.0 */
/* libsieve's internal file helpers (not installed). */
#ifndef SIEVE_LIB_IO_H
#define SIEVE_LIB_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exports and imports, snapshot files: this much per read, write or ioctl. */
#define SIEVE_IO_CHUNK	(1U << 20)

/* Writes all @len bytes (retrying short writes and EINTR): 0 or -errno. */
int sieve_io_write_all(int fd, const void *buf, size_t len);
/*
 * Reads until @len bytes or the end of the file: the bytes read (fewer
 * than @len only at the end), or -errno.
 */
ssize_t sieve_io_read_full(int fd, void *buf, size_t len);
/*
 * Runs @fill on a new file beside @path, then renames it over @path; on
 * any failure removes it, leaving @path as it was. A @path that exists and
 * is not a regular file (a pipe, /dev/stdout) is written in place.
 */
int sieve_io_write_path(const char *path, int (*fill)(int fd, void *ctx), void *ctx);

#endif /* SIEVE_LIB_IO_H */
