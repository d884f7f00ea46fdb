// SPDX-License-Identifier: GPL-2.0
/*
 * libsieve's device client: one function per ioctl of /dev/sieve, each
 * filling the ioctl's struct (size first, reserved fields zero), plus the
 * helpers that cut batches, exports and imports into chunks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "io.h"
#include "libsieve.h"
#include "params.h"

struct sieve_dev {
	int fd;
};

/* Entries asked for per SIEVE_IOC_LIST call: the kernel's maximum. */
#define LIST_PAGE	4096U

/* Copies a checked name into a zero-filled SIEVE_NAME_MAX field. */
static int put_name(char *field, const char *name)
{
	int err = sieve_name_check(name);

	if (err)
		return err;
	memset(field, 0, SIEVE_NAME_MAX);
	memcpy(field, name, strlen(name));
	return 0;
}

static int dev_ioctl(struct sieve_dev *dev, unsigned long cmd, void *arg)
{
	return ioctl(dev->fd, cmd, arg) < 0 ? -errno : 0;
}

const char *sieve_dev_default_path(void)
{
	const char *env = getenv("SIEVE_DEVICE");

	return env && *env ? env : "/dev/sieve";
}

int sieve_dev_open(const char *path, bool writable, struct sieve_dev **out)
{
	struct sieve_dev *dev = malloc(sizeof(*dev));

	if (!dev)
		return -ENOMEM;
	dev->fd = open(path ? path : sieve_dev_default_path(),
		       (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (dev->fd < 0) {
		int err = -errno;

		free(dev);
		return err;
	}
	*out = dev;
	return 0;
}

void sieve_dev_close(struct sieve_dev *dev)
{
	if (!dev)
		return;
	close(dev->fd);
	free(dev);
}

int sieve_dev_fd(const struct sieve_dev *dev)
{
	return dev->fd;
}

int sieve_dev_create(struct sieve_dev *dev, const char *name, const struct sieve_params *p)
{
	struct sieve_create arg = { .size = sizeof(arg) };
	struct sieve_create_spec spec;
	int err = put_name(arg.name, name);

	/* The module judges the request: it may know flags this library does not. */
	if (!err)
		err = sieve_params_spec(p, &spec);
	if (err)
		return err;
	arg.flags = spec.flags;
	arg.type = spec.type;
	arg.capacity = spec.capacity;
	arg.fpp_ppb = spec.fpp_ppb;
	arg.seed = spec.seed;
	arg.growth = spec.growth;
	arg.max_layers = spec.max_layers;
	if (p->flags & SIEVE_CREATE_GEOMETRY)
		sieve_params_geometry(p, &arg.geo);
	err = dev_ioctl(dev, SIEVE_IOC_CREATE, &arg);
	return err ? err : (int)arg.id;
}

int sieve_dev_lookup(struct sieve_dev *dev, const char *name)
{
	struct sieve_open arg = { .size = sizeof(arg) };
	int err = put_name(arg.name, name);

	if (!err)
		err = dev_ioctl(dev, SIEVE_IOC_OPEN, &arg);
	return err ? err : (int)arg.id;
}

int sieve_dev_list(struct sieve_dev *dev, uint32_t start_id, struct sieve_list_entry *entries,
		   uint32_t room, uint32_t *next_id)
{
	struct sieve_list arg = {
		.size = sizeof(arg),
		.start_id = start_id,
		.count = room,
		.entries = (uintptr_t)entries,
	};
	int err = dev_ioctl(dev, SIEVE_IOC_LIST, &arg);

	if (err)
		return err;
	if (arg.count > room)
		return -EIO;
	*next_id = arg.next_id;
	return (int)arg.count;
}

int sieve_dev_list_all(struct sieve_dev *dev, struct sieve_list_entry **out)
{
	struct sieve_list_entry *all = NULL, *grown;
	uint32_t start = 0, next;
	size_t n = 0;
	int got;

	/* Pages come by increasing id, so filters made meanwhile are seen once. */
	do {
		grown = realloc(all, (n + LIST_PAGE) * sizeof(*all));
		if (!grown) {
			got = -ENOMEM;
			goto out_free_all;
		}
		all = grown;
		got = sieve_dev_list(dev, start, all + n, LIST_PAGE, &next);
		if (got < 0)
			goto out_free_all;
		n += (size_t)got;
		/* A next page that does not move forward would loop forever. */
		if (next && next <= start) {
			got = -EIO;
			goto out_free_all;
		}
		start = next;
	} while (next && n < INT32_MAX - LIST_PAGE);
	if (!n) {
		free(all);
		all = NULL;
	}
	*out = all;
	return (int)n;

out_free_all:
	free(all);
	return got;
}

static int id_ioctl(struct sieve_dev *dev, unsigned long cmd, uint32_t id)
{
	struct sieve_id arg = { .size = sizeof(arg), .id = id };

	return dev_ioctl(dev, cmd, &arg);
}

int sieve_dev_destroy(struct sieve_dev *dev, uint32_t id)
{
	return id_ioctl(dev, SIEVE_IOC_DESTROY, id);
}

int sieve_dev_clear(struct sieve_dev *dev, uint32_t id)
{
	return id_ioctl(dev, SIEVE_IOC_CLEAR, id);
}

int sieve_dev_info(struct sieve_dev *dev, uint32_t id, struct sieve_info *out)
{
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->id = id;
	return dev_ioctl(dev, SIEVE_IOC_INFO, out);
}

int sieve_dev_merge(struct sieve_dev *dev, uint32_t dst_id, uint32_t src_id)
{
	struct sieve_merge arg = { .size = sizeof(arg), .dst_id = dst_id, .src_id = src_id };

	return dev_ioctl(dev, SIEVE_IOC_MERGE, &arg);
}

int sieve_dev_exchange(struct sieve_dev *dev, uint32_t a_id, uint32_t b_id)
{
	struct sieve_exchange arg = { .size = sizeof(arg), .a_id = a_id, .b_id = b_id };

	return dev_ioctl(dev, SIEVE_IOC_EXCHANGE, &arg);
}

static int key_ioctl(struct sieve_dev *dev, unsigned long cmd, uint32_t id, const void *key,
		     uint32_t len, uint32_t flags)
{
	struct sieve_key_op arg = {
		.size = sizeof(arg),
		.flags = flags,
		.id = id,
		.key_len = len,
		.key = (uintptr_t)key,
	};
	int err = dev_ioctl(dev, cmd, &arg);

	return err ? err : (int)arg.result;
}

int sieve_dev_add(struct sieve_dev *dev, uint32_t id, const void *key, uint32_t len,
		  uint32_t flags)
{
	return key_ioctl(dev, SIEVE_IOC_ADD, id, key, len, flags);
}

int sieve_dev_query(struct sieve_dev *dev, uint32_t id, const void *key, uint32_t len)
{
	return key_ioctl(dev, SIEVE_IOC_QUERY, id, key, len, 0);
}

int sieve_dev_delete(struct sieve_dev *dev, uint32_t id, const void *key, uint32_t len)
{
	return key_ioctl(dev, SIEVE_IOC_DELETE, id, key, len, 0);
}

int sieve_dev_batch(struct sieve_dev *dev, uint32_t id, uint32_t op, uint32_t flags,
		    const void *keys, const uint32_t *lens, size_t count, uint8_t *results,
		    struct sieve_batch_stats *stats)
{
	const unsigned char *k = keys;
	struct sieve_batch_stats sum = { 0, 0 };
	int err = 0;

	while (sum.done < count) {
		uint32_t n = count - sum.done < SIEVE_MAX_BATCH ? (uint32_t)(count - sum.done)
								: SIEVE_MAX_BATCH;
		struct sieve_batch arg = {
			.size = sizeof(arg),
			.flags = flags,
			.id = id,
			.op = op,
			.count = n,
			.keys = (uintptr_t)k,
			.lens = (uintptr_t)(lens + sum.done),
			.results = results ? (uintptr_t)(results + sum.done) : 0,
		};
		uint32_t i;

		for (i = 0; i < n; i++)
			arg.keys_bytes += lens[sum.done + i];
		err = dev_ioctl(dev, SIEVE_IOC_BATCH, &arg);
		/* done and present are written on failure too. */
		sum.done += arg.done < n ? arg.done : n;
		sum.present += arg.present;
		if (err)
			break;
		if (arg.done != n) {
			err = -EIO;
			break;
		}
		k += arg.keys_bytes;
	}
	if (stats)
		*stats = sum;
	return err;
}

int sieve_dev_export(struct sieve_dev *dev, uint32_t id, int fd, uint64_t *bytes)
{
	struct sieve_export arg = { .size = sizeof(arg), .id = id, .buf_len = SIEVE_IO_CHUNK };
	uint64_t total = 0;
	void *buf = malloc(SIEVE_IO_CHUNK);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	arg.buf = (uintptr_t)buf;
	do {
		err = dev_ioctl(dev, SIEVE_IOC_EXPORT, &arg);
		if (err)
			break;
		if (!arg.offset)
			total = arg.total;
		/* A device that stops giving bytes before the end would loop forever. */
		if ((!arg.copied && arg.offset < total) || arg.copied > SIEVE_IO_CHUNK ||
		    arg.total != total) {
			err = -EIO;
			break;
		}
		err = sieve_io_write_all(fd, buf, arg.copied);
		if (err)
			break;
		arg.offset += arg.copied;
	} while (arg.offset < total);
	free(buf);
	if (!err && bytes)
		*bytes = total;
	return err;
}

struct export_ctx {
	struct sieve_dev *dev;
	uint32_t id;
	uint64_t *bytes;
};

static int export_fill(int fd, void *ctx)
{
	struct export_ctx *c = ctx;

	return sieve_dev_export(c->dev, c->id, fd, c->bytes);
}

int sieve_dev_export_path(struct sieve_dev *dev, uint32_t id, const char *path, uint64_t *bytes)
{
	struct export_ctx c = { dev, id, bytes };

	return sieve_io_write_path(path, export_fill, &c);
}

/*
 * The snapshot's full size from its header, to send exactly that many
 * bytes and notice trailing ones; -EINVAL for a header that is not one.
 */
static int snapshot_size(const void *buf, size_t len, uint64_t *size)
{
	struct sieve_snapshot_header h;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != SIEVE_SNAPSHOT_MAGIC || h.header_bytes != sizeof(h) ||
	    h.payload_bytes > UINT64_MAX - sizeof(h))
		return -EINVAL;
	*size = sizeof(h) + h.payload_bytes;
	return 0;
}

/* Sends @len bytes at @offset of the import; the new id once it is whole. */
static int import_chunk(struct sieve_dev *dev, struct sieve_import *arg, const void *buf,
			size_t len, uint64_t offset)
{
	int err;

	arg->offset = offset;
	arg->buf = (uintptr_t)buf;
	arg->buf_len = len;
	arg->id = 0;
	err = dev_ioctl(dev, SIEVE_IOC_IMPORT, arg);
	return err ? err : (int)arg->id;
}

int sieve_dev_import(struct sieve_dev *dev, const char *name, uint32_t flags, int fd)
{
	struct sieve_import arg = { .size = sizeof(arg), .flags = flags };
	uint64_t offset = 0, total;
	unsigned char *buf;
	ssize_t got;
	int ret = put_name(arg.name, name);

	if (ret)
		return ret;
	buf = malloc(SIEVE_IO_CHUNK + 1);
	if (!buf)
		return -ENOMEM;
	got = sieve_io_read_full(fd, buf, SIEVE_IO_CHUNK);
	if (got < 0) {
		ret = (int)got;
		goto out_free_buf;
	}
	ret = snapshot_size(buf, (size_t)got, &total);
	while (!ret) {
		/* The last piece: anything after it is not part of the snapshot. */
		if ((uint64_t)got >= total - offset) {
			ssize_t extra = (uint64_t)got > total - offset ? 1 :
					sieve_io_read_full(fd, buf + got, 1);

			if (extra) {
				ret = extra < 0 ? (int)extra : -EINVAL;
				break;
			}
		} else if (!got) {
			ret = -EINVAL;	/* truncated */
			break;
		}
		ret = import_chunk(dev, &arg, buf, (size_t)got, offset);
		if (ret)
			break;	/* an error, or the id of the complete filter */
		offset += (uint64_t)got;
		if (offset >= total) {
			ret = -EIO;	/* the kernel wants more than the header said */
			break;
		}
		got = sieve_io_read_full(fd, buf, SIEVE_IO_CHUNK);
		if (got < 0)
			ret = (int)got;
	}
out_free_buf:
	free(buf);
	return ret;
}

int sieve_dev_import_path(struct sieve_dev *dev, const char *name, uint32_t flags,
			  const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = sieve_dev_import(dev, name, flags, fd);
	close(fd);
	return ret;
}
