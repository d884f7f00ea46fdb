// SPDX-License-Identifier: GPL-2.0
/*
 * The snapshot commands of /dev/sieve. EXPORT takes a snapshot into a
 * buffer held by the open file and hands it out in pieces; IMPORT feeds a
 * snapshot reader (snapshot.h) a piece at a time, straight from userspace
 * into the reader's window, and registers the filter once the last byte
 * checked out. Both count their buffers against max_memory_mb, but for
 * the snapshots of files opened read-only: those count against
 * max_reader_memory_mb, so readers cannot spend the writers' memory.
 */
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "device.h"

/* Bytes copied between two checks for a pending signal. */
#define SIEVE_COPY_STEP		SZ_1M

void sieve_file_drop_export(struct sieve_file *sf)
{
	if (!sf->export_buf)
		return;
	kvfree(sf->export_buf);
	if (sf->writable)
		sieve_mem_release(sf->export_bytes);
	else
		sieve_reader_mem_release(sf->export_bytes);
	sf->export_buf = NULL;
	sf->export_bytes = 0;
	sf->export_id = 0;
}

/* Takes a new snapshot of filter @id for the file. */
static int sieve_export_start(struct sieve_file *sf, u32 id)
{
	struct sieve *s;
	void *buf;
	u64 bytes;
	int err;

	s = sieve_lookup(id);
	if (!s)
		return -ENOENT;
	sieve_file_drop_export(sf);
	err = sieve_export(s, !sf->writable, &buf, &bytes);
	sieve_release(s);
	if (err)
		return err;
	sf->export_buf = buf;
	sf->export_bytes = bytes;
	sf->export_id = id;
	return 0;
}

/* Copies the held snapshot from @e->offset: @e->copied bytes went out. */
static int sieve_export_copy(struct sieve_file *sf, struct sieve_export *e)
{
	u8 __user *ubuf = u64_to_user_ptr(e->buf);
	u64 n = min(e->buf_len, sf->export_bytes - e->offset);

	while (e->copied < n) {
		u64 step = min_t(u64, n - e->copied, SIEVE_COPY_STEP);

		if (copy_to_user(ubuf + e->copied, (u8 *)sf->export_buf + e->offset + e->copied,
				 step))
			return -EFAULT;
		e->copied += step;
		if (e->copied < n) {
			cond_resched();
			if (fatal_signal_pending(current))
				return -EINTR;
		}
	}
	return 0;
}

long sieve_ioctl_export(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_export e;
	struct sieve *s;
	int err;

	err = sieve_copy_in(&e, sizeof(e), SIEVE_EXPORT_SIZE_VER0, uarg);
	if (err)
		return err;
	if (e.flags || e.__reserved)
		return -EINVAL;
	e.copied = 0;
	if (e.offset == 0 && e.buf_len == 0) {
		/* Only the size: nothing is taken, a held snapshot stays. */
		s = sieve_lookup(e.id);
		if (!s)
			return -ENOENT;
		e.total = sieve_export_bytes(s);
		sieve_release(s);
		return sieve_copy_out(uarg, &e, sizeof(e));
	}
	/* Another thread may hold it through a long copy: let a kill through. */
	if (mutex_lock_killable(&sf->lock))
		return -EINTR;
	if (e.offset == 0)
		err = sieve_export_start(sf, e.id);
	else if (!sf->export_buf || sf->export_id != e.id || e.offset >= sf->export_bytes)
		err = -EINVAL;
	if (err)
		goto out_unlock;
	e.total = sf->export_bytes;
	err = sieve_export_copy(sf, &e);
	if (!err && e.offset + e.copied == sf->export_bytes)
		sieve_file_drop_export(sf);
	if (!err)
		err = sieve_copy_out(uarg, &e, sizeof(e));
out_unlock:
	mutex_unlock(&sf->lock);
	return err;
}

void sieve_file_drop_import(struct sieve_file *sf)
{
	if (!sf->import)
		return;
	sieve_snapshot_reader_release(sf->import);
	kfree(sf->import);
	sf->import = NULL;
	sieve_mem_release(sf->import_reserved);
	sf->import_reserved = 0;
}

/* Starts an import on the file (dropping an unfinished one). */
static int sieve_import_start(struct sieve_file *sf, const struct sieve_import *im)
{
	int err;

	sieve_file_drop_import(sf);
	err = sieve_name_field_check(im->name);
	if (err)
		return err;
	if (im->buf_len < sizeof(struct sieve_snapshot_header))
		return -EINVAL;
	err = sieve_room(im->name);
	if (err)
		return err;
	sf->import = kzalloc(sizeof(*sf->import), GFP_KERNEL_ACCOUNT);
	if (!sf->import)
		return -ENOMEM;
	sieve_snapshot_reader_init(sf->import);
	memcpy(sf->import_name, im->name, SIEVE_NAME_MAX);
	sf->import_flags = im->flags;
	return 0;
}

/*
 * Feeds @len bytes at @ubuf to the reader, at most SIEVE_COPY_STEP at a
 * time. Once the header is in, what it says follows is reserved against
 * the memory limit before any layer is allocated.
 */
static int sieve_import_feed(struct sieve_file *sf, const u8 __user *ubuf, u64 len)
{
	struct sieve_snapshot_reader *r = sf->import;
	u64 pos = 0, room, n;
	void *win;
	int err;

	while (pos < len) {
		win = sieve_snapshot_reader_window(r, &room);
		if (!win || !room)
			return -EINVAL;	/* bytes past the snapshot's end */
		n = min3(room, len - pos, (u64)SIEVE_COPY_STEP);
		if (copy_from_user(win, ubuf + pos, n))
			return -EFAULT;
		err = sieve_snapshot_reader_advance(r, n);
		if (err)
			return err;
		pos += n;
		if (!sf->import_reserved && sieve_snapshot_reader_has_header(r)) {
			u64 bytes;

			/* The header counts too, so the reservation is never 0. */
			if (check_add_overflow(r->hdr.payload_bytes,
					       (u64)sizeof(r->hdr), &bytes))
				return -EINVAL;
			err = sieve_mem_reserve(bytes);
			if (err)
				return err;
			sf->import_reserved = bytes;
		}
		cond_resched();
		if (pos < len && fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

/* The whole snapshot checked out: the filter is registered. */
static int sieve_import_finish(struct sieve_file *sf, u32 *id)
{
	struct sieve_snapshot_reader *r = sf->import;
	struct sieve_snapshot_layer_src *src;
	struct sieve_stats counters = {
		.inserted = r->hdr.inserted,
		.deleted = r->hdr.deleted,
		.queries = r->hdr.queries,
		.hits = r->hdr.hits,
	};
	struct sieve_reg_params p = {
		.name = sf->import_name,
		.type = r->hdr.type,
		.create_flags = r->hdr.create_flags | sf->import_flags,
		.fpp_ppb = r->hdr.fpp_ppb,
		.capacity = r->hdr.capacity,
		.growth = r->hdr.growth,
		.max_layers = r->hdr.max_layers,
		.owner = sf->import_flags & SIEVE_CREATE_EPHEMERAL ? sf : NULL,
	};
	u32 nlayers = r->nlayers;
	int err;

	src = kcalloc(nlayers, sizeof(*src), GFP_KERNEL);
	if (!src)
		return -ENOMEM;
	sieve_snapshot_reader_take(r, src);
	err = sieve_register_layers(&p, src, nlayers, &counters, id);
	kfree(src);
	return err;
}

long sieve_ioctl_import(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_import im;
	int err;

	if (!sf->writable)
		return -EBADF;
	err = sieve_copy_in(&im, sizeof(im), SIEVE_IMPORT_SIZE_VER0, uarg);
	if (err)
		return err;
	if ((im.flags & ~SIEVE_CREATE_EPHEMERAL) || im.__reserved || !im.buf_len)
		return -EINVAL;
	im.id = 0;
	if (mutex_lock_killable(&sf->lock))
		return -EINTR;
	if (im.offset == 0)
		err = sieve_import_start(sf, &im);
	else if (!sf->import)
		err = -EALREADY;
	else if (im.offset != sf->import->offset)
		err = -EINVAL;
	if (!err)
		err = sieve_import_feed(sf, u64_to_user_ptr(im.buf), im.buf_len);
	if (!err && sieve_snapshot_reader_done(sf->import)) {
		err = sieve_import_finish(sf, &im.id);
		/* The filter counts its own memory now (or is gone). */
		sieve_file_drop_import(sf);
	}
	if (err && err != -EALREADY)
		sieve_file_drop_import(sf);
	mutex_unlock(&sf->lock);
	if (err)
		return err;
	if (sieve_copy_out(uarg, &im, sizeof(im))) {
		/* On any error nothing is created: the caller never saw the id. */
		if (im.id)
			sieve_destroy(im.id);
		return -EFAULT;
	}
	return 0;
}
