// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshot files of local filters, through the module's own snapshot code
 * (kmod/snapshot.c): written whole from one buffer, read as a stream
 * straight into the new tables, checked part by part.
 */
#include <fcntl.h>
#include <unistd.h>

#include "filter.h"
#include "snapshot.h"
#include "io.h"
#include "local.h"

/* The whole snapshot in one buffer (*@bytes long): the format's writer. */
static int build_snapshot(const struct sieve_local *f, void **out, u64 *bytes)
{
	struct sieve_snapshot_header *h;
	u64 size = sieve_snapshot_bytes(f->layers, f->nlayers), at;
	u8 *buf;
	u32 i;

	buf = calloc(1, size);
	if (!buf)
		return -ENOMEM;
	h = (struct sieve_snapshot_header *)buf;
	h->create_flags = f->flags & ~SIEVE_CREATE_EPHEMERAL;
	h->type = f->type;
	h->nlayers = f->nlayers;
	h->max_layers = f->max_layers;
	h->growth = f->growth;
	h->fpp_ppb = f->fpp_ppb;
	h->capacity = f->capacity;
	h->inserted = f->inserted;
	h->deleted = f->deleted;
	h->queries = f->queries;
	h->hits = f->hits;
	at = sizeof(*h);
	for (i = 0; i < f->nlayers; i++)
		at += sieve_snapshot_put_layer(&f->layers[i], buf + at);
	sieve_snapshot_seal(buf, size);
	*out = buf;
	*bytes = size;
	return 0;
}

int sieve_local_save(const struct sieve_local *f, int fd)
{
	void *buf = NULL;
	u64 bytes = 0, at;
	int err = build_snapshot(f, &buf, &bytes);

	for (at = 0; !err && at < bytes; at += SIEVE_IO_CHUNK)
		err = sieve_io_write_all(fd, (u8 *)buf + at, min_t(u64, bytes - at, SIEVE_IO_CHUNK));
	free(buf);
	return err;
}

static int save_fill(int fd, void *ctx)
{
	return sieve_local_save(ctx, fd);
}

int sieve_local_save_path(const struct sieve_local *f, const char *path)
{
	return sieve_io_write_path(path, save_fill, (void *)f);
}

/* Feeds @fd to the reader until it has a whole, checked snapshot. */
static int read_snapshot(int fd, struct sieve_snapshot_reader *r)
{
	void *win;
	u64 len;
	u8 extra;
	ssize_t n;
	int err;

	while ((win = sieve_snapshot_reader_window(r, &len))) {
		n = sieve_io_read_full(fd, win, min_t(u64, len, SIEVE_IO_CHUNK));
		if (n < 0)
			return (int)n;
		if (!n)
			return -EINVAL;	/* truncated */
		err = sieve_snapshot_reader_advance(r, (u64)n);
		if (err)
			return err;
	}
	if (!sieve_snapshot_reader_done(r))
		return -EINVAL;
	/* A snapshot followed by anything is not one. */
	n = sieve_io_read_full(fd, &extra, 1);
	return n < 0 ? (int)n : n ? -EINVAL : 0;
}

int sieve_local_load(int fd, struct sieve_local **out)
{
	struct sieve_snapshot_reader *r = malloc(sizeof(*r));
	struct sieve_local *f;
	u32 i;
	int err;

	if (!r)
		return -ENOMEM;
	sieve_snapshot_reader_init(r);
	err = read_snapshot(fd, r);
	if (err)
		goto out_release_reader;
	f = calloc(1, sizeof(*f));
	if (!f) {
		err = -ENOMEM;
		goto out_release_reader;
	}
	f->type = r->hdr.type;
	f->flags = r->hdr.create_flags;
	f->fpp_ppb = r->hdr.fpp_ppb;
	f->capacity = r->hdr.capacity;
	f->growth = r->hdr.growth;
	f->max_layers = r->hdr.max_layers;
	f->inserted = r->hdr.inserted;
	f->deleted = r->hdr.deleted;
	f->queries = r->hdr.queries;
	f->hits = r->hdr.hits;
	f->nlayers = r->nlayers;
	sieve_snapshot_reader_take(r, f->layers);
	for (i = 0; i < f->nlayers; i++)	/* libsieve.h: one thread at a time */
		f->layers[i].filter->single_writer = true;
	f->seed = f->layers[0].filter->geo.seed;
	*out = f;
out_release_reader:
	sieve_snapshot_reader_release(r);
	free(r);
	return err;
}

int sieve_local_load_path(const char *path, struct sieve_local **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	err = sieve_local_load(fd, out);
	close(fd);
	return err;
}
