// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/sieve: the misc device, its open files, the ioctl dispatcher and
 * the commands on whole filters (create, open, list, destroy, clear, info,
 * merge, exchange). Every handler reads the same way: copy in, validate, act, copy
 * out; the ABI and its errno meanings are in <linux/sieve.h>.
 */
#include <linux/miscdevice.h>
#include <linux/uaccess.h>

#include "device.h"

/*
 * Largest @size accepted: a struct may grow, but its zero tail is checked
 * byte by byte, so not without bound (as clone3() and openat2() do).
 */
#define SIEVE_MAX_ARG_SIZE	4096
/* Entries one LIST call may ask for. */
#define SIEVE_MAX_LIST		4096

/*
 * Reads a command's struct (clone3() style): its first __u32 is the
 * caller's size of it, at least @ver0 (the struct's first version); fields
 * past that size read as zero, bytes past the fields this kernel knows
 * must be zero.
 */
int sieve_copy_in(void *arg, size_t size, size_t ver0, const void __user *uarg)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize > SIEVE_MAX_ARG_SIZE)
		return -E2BIG;
	if (usize < ver0)
		return -EINVAL;
	return copy_struct_from_user(arg, size, uarg, usize);
}
EXPORT_SYMBOL_NS_GPL(sieve_copy_in, SIEVE_INTERNAL_NS);

/* Writes a struct back: no further than the caller's size of it (its @size). */
int sieve_copy_out(void __user *uarg, const void *arg, size_t size)
{
	size_t usize = *(const u32 *)arg;

	return copy_to_user(uarg, arg, min(usize, size)) ? -EFAULT : 0;
}
EXPORT_SYMBOL_NS_GPL(sieve_copy_out, SIEVE_INTERNAL_NS);

/* What only the ioctl's encoding adds to the create contract. */
static int sieve_create_arg_check(const struct sieve_create *c)
{
	int err = sieve_name_field_check(c->name);

	if (err)
		return err;
	if (c->__reserved[0] || c->__reserved[1])
		return -EINVAL;
	if (c->flags & SIEVE_CREATE_GEOMETRY)
		return c->geo.type != c->type || c->geo.seed ? -EINVAL : 0;
	return memchr_inv(&c->geo, 0, sizeof(c->geo)) ? -EINVAL : 0;
}

static long sieve_ioctl_create(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_create arg;
	struct sieve_create_spec spec;
	int err;

	if (!sf->writable)
		return -EBADF;
	err = sieve_copy_in(&arg, sizeof(arg), SIEVE_CREATE_SIZE_VER0, uarg);
	if (!err)
		err = sieve_create_arg_check(&arg);
	if (err)
		return err;
	spec = (struct sieve_create_spec) {
		.type = arg.type,
		.flags = arg.flags,
		.capacity = arg.capacity,
		.fpp_ppb = arg.fpp_ppb,
		.seed = arg.seed,
		.growth = arg.growth,
		.max_layers = arg.max_layers,
	};
	err = sieve_create_check(&spec);
	if (err)
		return err;
	err = sieve_create(arg.name, &spec, arg.flags & SIEVE_CREATE_GEOMETRY ? &arg.geo : NULL,
			   arg.flags & SIEVE_CREATE_EPHEMERAL ? sf : NULL, &arg.id);
	if (err)
		return err;
	/* A caller that cannot learn the id would leak the filter. */
	err = sieve_copy_out(uarg, &arg, sizeof(arg));
	if (err)
		sieve_destroy(arg.id);
	return err;
}

static long sieve_ioctl_open(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_open arg;
	struct sieve *s;
	int err;

	err = sieve_copy_in(&arg, sizeof(arg), SIEVE_OPEN_SIZE_VER0, uarg);
	if (err)
		return err;
	if (arg.flags || arg.__reserved)
		return -EINVAL;
	err = sieve_name_field_check(arg.name);
	if (err)
		return err;
	s = sieve_lookup_name(arg.name);
	if (!s)
		return -ENOENT;
	arg.id = s->id;
	sieve_release(s);
	return sieve_copy_out(uarg, &arg, sizeof(arg));
}

static long sieve_ioctl_list(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_list_entry __user *out;
	struct sieve_list arg;
	unsigned long id;
	struct sieve *s;
	u32 n = 0;
	int err;

	err = sieve_copy_in(&arg, sizeof(arg), SIEVE_LIST_SIZE_VER0, uarg);
	if (err)
		return err;
	if (arg.flags || arg.__reserved || arg.count > SIEVE_MAX_LIST)
		return -EINVAL;
	out = u64_to_user_ptr(arg.entries);
	for (id = arg.start_id; (s = sieve_next(&id)); id++) {
		struct sieve_list_entry e = {
			.id = s->id,
			.type = s->type,
			.flags = s->create_flags,
		};

		if (n == arg.count) {
			sieve_release(s);
			break;
		}
		memcpy(e.name, s->name, sizeof(e.name));
		sieve_release(s);
		if (copy_to_user(&out[n], &e, sizeof(e)))
			return -EFAULT;
		n++;
	}
	/* Stopped at a filter that did not fit (its id is next) or at the end. */
	arg.next_id = s ? id : 0;
	arg.count = n;
	return sieve_copy_out(uarg, &arg, sizeof(arg));
}

/* Reads a struct sieve_id and checks it. */
static int sieve_id_in(struct sieve_id *arg, void __user *uarg)
{
	int err = sieve_copy_in(arg, sizeof(*arg), SIEVE_ID_SIZE_VER0, uarg);

	if (err)
		return err;
	return arg->flags || arg->__reserved ? -EINVAL : 0;
}

static long sieve_ioctl_destroy(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_id arg;
	int err;

	if (!sf->writable)
		return -EBADF;
	err = sieve_id_in(&arg, uarg);
	return err ?: sieve_destroy(arg.id);
}

static long sieve_ioctl_clear(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_id arg;
	struct sieve *s;
	int err;

	if (!sf->writable)
		return -EBADF;
	err = sieve_id_in(&arg, uarg);
	if (err)
		return err;
	s = sieve_lookup(arg.id);
	if (!s)
		return -ENOENT;
	err = sieve_clear(s);
	sieve_release(s);
	return err;
}

static long sieve_ioctl_info(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_report r;
	struct sieve_info arg;
	struct sieve *s;
	int err;

	err = sieve_copy_in(&arg, sizeof(arg), SIEVE_INFO_SIZE_VER0, uarg);
	if (err)
		return err;
	if (arg.flags)
		return -EINVAL;
	s = sieve_lookup(arg.id);
	if (!s)
		return -ENOENT;
	sieve_report(s, &r);
	arg.create_flags = s->create_flags;
	memcpy(arg.name, s->name, sizeof(arg.name));
	arg.geo = r.geo;
	arg.capacity = r.capacity;
	arg.fpp_ppb = r.fpp_ppb;
	arg.nlayers = r.nlayers;
	arg.max_layers = s->max_layers;
	arg.growth = s->growth;
	arg.fill_ppm = r.fill_ppm;
	arg.fpr_ppb = r.fpr_ppb;
	arg.items = r.items;
	arg.inserted = r.stats.inserted;
	arg.deleted = r.stats.deleted;
	arg.queries = r.stats.queries;
	arg.hits = r.stats.hits;
	arg.memory_bytes = r.memory_bytes;
	arg.snapshot_bytes = r.snapshot_bytes;
	sieve_release(s);
	return sieve_copy_out(uarg, &arg, sizeof(arg));
}

static long sieve_ioctl_merge(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_merge arg;
	struct sieve *dst, *src;
	int err;

	if (!sf->writable)
		return -EBADF;
	err = sieve_copy_in(&arg, sizeof(arg), SIEVE_MERGE_SIZE_VER0, uarg);
	if (err)
		return err;
	if (arg.flags)
		return -EINVAL;
	dst = sieve_lookup(arg.dst_id);
	if (!dst)
		return -ENOENT;
	src = sieve_lookup(arg.src_id);
	if (!src) {
		sieve_release(dst);
		return -ENOENT;
	}
	err = sieve_merge(dst, src);
	sieve_release(src);
	sieve_release(dst);
	return err;
}

static long sieve_ioctl_exchange(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_exchange arg;
	struct sieve *a, *b;
	int err;

	if (!sf->writable)
		return -EBADF;
	err = sieve_copy_in(&arg, sizeof(arg), SIEVE_EXCHANGE_SIZE_VER0, uarg);
	if (err)
		return err;
	if (arg.flags || arg.a_id == arg.b_id)
		return -EINVAL;
	a = sieve_lookup(arg.a_id);
	if (!a)
		return -ENOENT;
	b = sieve_lookup(arg.b_id);
	if (!b) {
		err = -ENOENT;
		goto out_release_a;
	}
	err = sieve_exchange(a, b);
	/* May be the last reference to b (destroyed meanwhile): after the wait. */
	sieve_release(b);
out_release_a:
	sieve_release(a);
	return err;
}

static long sieve_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sieve_file *sf = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case SIEVE_IOC_CREATE:
		return sieve_ioctl_create(sf, uarg);
	case SIEVE_IOC_OPEN:
		return sieve_ioctl_open(sf, uarg);
	case SIEVE_IOC_LIST:
		return sieve_ioctl_list(sf, uarg);
	case SIEVE_IOC_DESTROY:
		return sieve_ioctl_destroy(sf, uarg);
	case SIEVE_IOC_ADD:
		return sieve_ioctl_add(sf, uarg);
	case SIEVE_IOC_QUERY:
		return sieve_ioctl_query(sf, uarg);
	case SIEVE_IOC_DELETE:
		return sieve_ioctl_delete(sf, uarg);
	case SIEVE_IOC_BATCH:
		return sieve_ioctl_batch(sf, uarg);
	case SIEVE_IOC_CLEAR:
		return sieve_ioctl_clear(sf, uarg);
	case SIEVE_IOC_INFO:
		return sieve_ioctl_info(sf, uarg);
	case SIEVE_IOC_EXPORT:
		return sieve_ioctl_export(sf, uarg);
	case SIEVE_IOC_IMPORT:
		return sieve_ioctl_import(sf, uarg);
	case SIEVE_IOC_MERGE:
		return sieve_ioctl_merge(sf, uarg);
	case SIEVE_IOC_EXCHANGE:
		return sieve_ioctl_exchange(sf, uarg);
	default:
		return -ENOTTY;
	}
}

static int sieve_open(struct inode *inode, struct file *file)
{
	struct sieve_file *sf = kzalloc(sizeof(*sf), GFP_KERNEL_ACCOUNT);

	if (!sf)
		return -ENOMEM;
	mutex_init(&sf->lock);
	sf->writable = file->f_mode & FMODE_WRITE;
	file->private_data = sf;
	return 0;
}

/* The last reference to the open file: its ephemeral filters go with it. */
static int sieve_release_file(struct inode *inode, struct file *file)
{
	struct sieve_file *sf = file->private_data;

	sieve_destroy_owned(sf);
	sieve_file_drop_export(sf);
	sieve_file_drop_import(sf);
	mutex_destroy(&sf->lock);
	kfree(sf);
	return 0;
}

static const struct file_operations sieve_fops = {
	.owner = THIS_MODULE,
	.open = sieve_open,
	.release = sieve_release_file,
	.unlocked_ioctl = sieve_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice sieve_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "sieve",
	.fops = &sieve_fops,
	.mode = 0600,
};

/*
 * Each struct's first version ends where its last field ends today; once
 * a field is added, its VER0 stays and a VER1 names the new end.
 */
static void sieve_abi_sizes_check(void)
{
	BUILD_BUG_ON(offsetofend(struct sieve_create, __reserved) != SIEVE_CREATE_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_open, __reserved) != SIEVE_OPEN_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_id, __reserved) != SIEVE_ID_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_list, __reserved) != SIEVE_LIST_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_key_op, __reserved) != SIEVE_KEY_OP_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_batch, __reserved) != SIEVE_BATCH_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_info, snapshot_bytes) != SIEVE_INFO_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_export, total) != SIEVE_EXPORT_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_import, __reserved) != SIEVE_IMPORT_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_merge, src_id) != SIEVE_MERGE_SIZE_VER0);
	BUILD_BUG_ON(offsetofend(struct sieve_exchange, b_id) != SIEVE_EXCHANGE_SIZE_VER0);
}

int sieve_device_init(void)
{
	sieve_abi_sizes_check();
	return misc_register(&sieve_misc);
}

void sieve_device_exit(void)
{
	misc_deregister(&sieve_misc);
}
