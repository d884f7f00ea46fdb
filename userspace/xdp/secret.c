// SPDX-License-Identifier: GPL-2.0
/*
 * The host's digest key: the 128-bit secret of sieve_xdp_digest(), kept
 * beside the store as STATE_DIR/digest.key (16 raw bytes, mode 0600).
 *
 * Every generation of every interface and backend of the host digests
 * with it, so it is made once, at first use, from getrandom(), and then
 * only read. It is never written anywhere else: not to a feed, the fleet's
 * Redis, `status` or a log (messages name the file, never its bytes).
 *
 * Never half written: the bytes go to a temporary file of mode 0600 in the
 * same folder, which is fsynced and then linked to its name. link(), unlike
 * rename(), never replaces: of two processes making it at once, one wins
 * and the other reads the winner's. A file that is not what this writes
 * (another mode, another size, not a regular file) is refused with a
 * message saying what to do, never used and never overwritten: a secret
 * others could read is no secret, and one that changed silently would
 * leave every interface rebuilt under a key no one chose.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "xdp.h"

#define SECRET_BYTES	(2 * sizeof(uint64_t))

/* Reads the 16 bytes of an open secret file, checked first. */
static int secret_read(int fd, const char *path, __u64 secret[2], char *err, size_t errlen)
{
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st))
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -errno;
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file: move it away (a new secret is made)",
			 path);
		return -EINVAL;
	}
	if ((st.st_mode & 07777) != 0600) {
		snprintf(err, errlen, "%s: mode %04o, not 0600: others may have read the digest "
			 "secret; remove it (a new one is made, and each interface is rebuilt "
			 "at its next change)", path, (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	if (st.st_size != (off_t)SECRET_BYTES) {
		snprintf(err, errlen, "%s: %lld bytes, not %zu: damaged; remove it (a new secret "
			 "is made, and each interface is rebuilt at its next change)", path,
			 (long long)st.st_size, SECRET_BYTES);
		return -EINVAL;
	}
	n = pread(fd, secret, SECRET_BYTES, 0);
	if (n != (ssize_t)SECRET_BYTES) {
		snprintf(err, errlen, "%s: %s", path, n < 0 ? strerror(errno) : "short read");
		return n < 0 ? -errno : -EIO;
	}
	return 0;
}

/* Writes a new secret to @tmp, durably; the caller links it into place. */
static int secret_write(const char *tmp, char *err, size_t errlen)
{
	uint8_t buf[SECRET_BYTES];
	ssize_t n;
	int fd, ret = 0;

	/* Blocks only until the kernel's pool is seeded, once after boot. */
	do
		n = getrandom(buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(buf))
		return snprintf(err, errlen, "getrandom: %s", n < 0 ? strerror(errno) : "short"),
		       n < 0 ? -errno : -EIO;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return snprintf(err, errlen, "%s: %s", tmp, strerror(errno)), -errno;
	/* The umask may have taken bits away, never added: 0600 exactly. */
	errno = 0;
	if (fchmod(fd, 0600) || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fsync(fd))
		ret = errno ? -errno : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	explicit_bzero(buf, sizeof(buf));
	if (ret) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(-ret));
		unlink(tmp);
	}
	return ret;
}

/* Makes @path from a fresh secret: 0, or -EEXIST if another process made it first. */
static int secret_create(const char *dir, const char *path, char *err, size_t errlen)
{
	char tmp[4096];
	int ret, dfd;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof(tmp))
		return snprintf(err, errlen, "%s: name too long", dir), -ENAMETOOLONG;
	unlink(tmp);	/* left by a killed run of this pid */
	ret = secret_write(tmp, err, errlen);
	if (ret)
		return ret;
	ret = link(tmp, path) ? -errno : 0;
	unlink(tmp);
	if (ret && ret != -EEXIST)
		return snprintf(err, errlen, "%s: %s", path, strerror(-ret)), ret;
	/* The name is durable too. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return ret;
}

int sxdp_secret_load(const char *state_dir, __u64 secret[2], char *err, size_t errlen)
{
	char path[4096];
	int fd, ret, tries;

	if (snprintf(path, sizeof(path), "%s/%s", state_dir, SXDP_SECRET_FILE) >=
	    (int)sizeof(path))
		return snprintf(err, errlen, "%s: state folder name too long", state_dir),
		       -ENAMETOOLONG;
	for (tries = 0; tries < 2; tries++) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0) {
			ret = secret_read(fd, path, secret, err, errlen);
			close(fd);
			return ret;
		}
		if (errno != ENOENT)
			return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -errno;
		ret = secret_create(state_dir, path, err, errlen);
		if (ret && ret != -EEXIST)
			return ret;
	}
	snprintf(err, errlen, "%s: made, and gone again", path);
	return -ENOENT;
}
