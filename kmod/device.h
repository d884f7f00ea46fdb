/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/sieve: one struct sieve_file per open file, and the ioctl handlers
 * (device.c dispatches; ioctl_keys.c and ioctl_snapshot.c hold the key and
 * snapshot commands).
 */
#ifndef SIEVE_DEVICE_H
#define SIEVE_DEVICE_H

#include <linux/fs.h>

#include "registry.h"

/**
 * struct sieve_file - an open /dev/sieve
 * @lock: serialises this file's export and import state (the fields
 *	below), so two threads sharing the file cannot tear them.
 * @writable: opened for writing: may change filters.
 * @export_buf: the snapshot being read (EXPORT), or NULL.
 * @export_bytes: its size, counted against max_memory_mb (a file opened
 *	read-only: max_reader_memory_mb) until dropped. One snapshot per file
 *	at most: a new export drops the one held.
 * @export_id: the filter it is of.
 * @import: the snapshot being written (IMPORT), or NULL.
 * @import_reserved: bytes reserved against max_memory_mb for it (its
 *	header's payload_bytes, once the header has arrived).
 * @import_name: the name it will be registered under.
 * @import_flags: the import's flags (SIEVE_CREATE_EPHEMERAL or 0).
 *
 * The file also owns the filters it created with SIEVE_CREATE_EPHEMERAL
 * (struct sieve's @owner), destroyed when it is released.
 */
struct sieve_file {
	struct mutex lock;
	bool writable;
	void *export_buf;
	u64 export_bytes;
	u32 export_id;
	struct sieve_snapshot_reader *import;
	u64 import_reserved;
	char import_name[SIEVE_NAME_MAX];
	u32 import_flags;
};

int sieve_copy_in(void *arg, size_t size, size_t ver0, const void __user *uarg);
int sieve_copy_out(void __user *uarg, const void *arg, size_t size);

long sieve_ioctl_add(struct sieve_file *sf, void __user *uarg);
long sieve_ioctl_query(struct sieve_file *sf, void __user *uarg);
long sieve_ioctl_delete(struct sieve_file *sf, void __user *uarg);
long sieve_ioctl_batch(struct sieve_file *sf, void __user *uarg);
long sieve_ioctl_export(struct sieve_file *sf, void __user *uarg);
long sieve_ioctl_import(struct sieve_file *sf, void __user *uarg);
void sieve_file_drop_export(struct sieve_file *sf);
void sieve_file_drop_import(struct sieve_file *sf);

#endif /* SIEVE_DEVICE_H */
