// SPDX-License-Identifier: GPL-2.0
/*
 * The key commands of /dev/sieve: ADD, QUERY and DELETE of one key, and
 * BATCH. A batch never allocates by the caller's count: keys are read a
 * chunk at a time into a bounce buffer of fixed size, run through the
 * filter, and their results written back before the next chunk.
 */
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "device.h"

/* A chunk: at most this many keys, of at most this many bytes together. */
#define SIEVE_CHUNK_KEYS	256
#define SIEVE_CHUNK_BYTES	(16 * 1024)
static_assert(SIEVE_CHUNK_BYTES >= SIEVE_MAX_KEY_LEN);

/* Keys up to this long are read onto the stack, longer ones into the heap. */
#define SIEVE_STACK_KEY		64

/* One key, @op an enum sieve_batch_op. */
static long sieve_ioctl_key(struct sieve_file *sf, void __user *uarg, u32 op)
{
	u8 stack_key[SIEVE_STACK_KEY];
	struct sieve_key_op arg;
	struct sieve_key k;
	struct sieve *s;
	void *key = stack_key;
	u32 done;
	u8 res = 0;
	int err;

	if (op != SIEVE_BATCH_QUERY && !sf->writable)
		return -EBADF;
	err = sieve_copy_in(&arg, sizeof(arg), SIEVE_KEY_OP_SIZE_VER0, uarg);
	if (err)
		return err;
	if ((arg.flags & ~(op == SIEVE_BATCH_ADD ? SIEVE_ADD_FLAGS_ALL : 0)) ||
	    arg.__reserved || !arg.key_len || arg.key_len > SIEVE_MAX_KEY_LEN)
		return -EINVAL;
	if (arg.key_len > SIEVE_STACK_KEY)
		key = memdup_user(u64_to_user_ptr(arg.key), arg.key_len);
	else if (copy_from_user(stack_key, u64_to_user_ptr(arg.key), arg.key_len))
		key = ERR_PTR(-EFAULT);
	if (IS_ERR(key))
		return PTR_ERR(key);
	s = sieve_lookup(arg.id);
	err = -ENOENT;
	if (!s)
		goto out_free_key;
	k.data = key;
	k.len = arg.key_len;
	err = sieve_keys_apply(s, op, arg.flags, &k, 1, &res, &done);
	sieve_release(s);
	if (err)
		goto out_free_key;
	arg.result = res;
	err = sieve_copy_out(uarg, &arg, sizeof(arg));
out_free_key:
	if (key != stack_key)
		kfree(key);
	return err;
}

long sieve_ioctl_add(struct sieve_file *sf, void __user *uarg)
{
	return sieve_ioctl_key(sf, uarg, SIEVE_BATCH_ADD);
}

long sieve_ioctl_query(struct sieve_file *sf, void __user *uarg)
{
	return sieve_ioctl_key(sf, uarg, SIEVE_BATCH_QUERY);
}

long sieve_ioctl_delete(struct sieve_file *sf, void __user *uarg)
{
	return sieve_ioctl_key(sf, uarg, SIEVE_BATCH_DELETE);
}

/**
 * struct sieve_chunk - the bounce buffer of one batch call
 * @nkeys: room for keys in @lens, @k and @res: at most SIEVE_CHUNK_KEYS.
 * @nbytes: room at @keys: at most SIEVE_CHUNK_BYTES, and at least the
 *	longest key of the batch.
 * @lens: the chunk's key lengths.
 * @k: the keys, pointing into @keys.
 * @res: their results.
 * @keys: the chunk's key bytes.
 *
 * A small batch gets a small buffer; a large one never more than the
 * fixed maximum, whatever its count.
 */
struct sieve_chunk {
	u32 nkeys;
	u32 nbytes;
	u32 *lens;
	struct sieve_key *k;
	u8 *res;
	u8 keys[];
};

static struct sieve_chunk *sieve_chunk_alloc(const struct sieve_batch *b)
{
	u32 nkeys = min_t(u32, b->count, SIEVE_CHUNK_KEYS);
	/* Every key is at most keys_bytes long, and at most a chunk. */
	u32 nbytes = min_t(u64, b->keys_bytes, SIEVE_CHUNK_BYTES);
	struct sieve_chunk *c;
	size_t tail = nbytes;

	/* Arrays after the key bytes, each aligned for its type. */
	tail = ALIGN(tail, sizeof(void *)) + nkeys * sizeof(struct sieve_key);
	tail += nkeys * sizeof(u32) + nkeys;
	/* Past a page a failed vmalloc() also dumps a stack: -ENOMEM says enough. */
	c = kvmalloc(sizeof(*c) + tail, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!c)
		return NULL;
	c->nkeys = nkeys;
	c->nbytes = nbytes;
	c->k = (struct sieve_key *)(c->keys + ALIGN(nbytes, sizeof(void *)));
	c->lens = (u32 *)(c->k + nkeys);
	c->res = (u8 *)(c->lens + nkeys);
	return c;
}

/*
 * Before anything is applied: every length in range and their sum equal
 * to @keys_bytes, so a malformed batch changes nothing.
 */
static int sieve_batch_check_lens(const struct sieve_batch *b, struct sieve_chunk *c)
{
	const u32 __user *ulens = u64_to_user_ptr(b->lens);
	u64 sum = 0;
	u32 i, j, m;

	for (i = 0; i < b->count; i += m) {
		m = min_t(u32, b->count - i, c->nkeys);
		if (copy_from_user(c->lens, ulens + i, m * sizeof(u32)))
			return -EFAULT;
		for (j = 0; j < m; j++) {
			if (!c->lens[j] || c->lens[j] > SIEVE_MAX_KEY_LEN)
				return -EINVAL;
			sum += c->lens[j];
		}
		cond_resched();
	}
	return sum == b->keys_bytes ? 0 : -EINVAL;
}

/*
 * Reads the next chunk of keys, from key @b->done at byte *@off: returns
 * how many. The lengths are checked again: the caller may have changed
 * them since they were checked.
 */
static int sieve_batch_read_chunk(const struct sieve_batch *b, struct sieve_chunk *c, u64 off)
{
	const u32 __user *ulens = u64_to_user_ptr(b->lens);
	const u8 __user *ukeys = u64_to_user_ptr(b->keys);
	u32 m = min_t(u32, b->count - b->done, c->nkeys), n;
	u32 bytes = 0;

	if (copy_from_user(c->lens, ulens + b->done, m * sizeof(u32)))
		return -EFAULT;
	for (n = 0; n < m; n++) {
		u32 len = c->lens[n];

		if (!len || len > SIEVE_MAX_KEY_LEN || off + bytes + len > b->keys_bytes)
			return -EINVAL;
		if (bytes + len > c->nbytes)
			break;
		c->k[n].data = c->keys + bytes;
		c->k[n].len = len;
		bytes += len;
	}
	/* The keys of the last chunk must use up keys_bytes exactly. */
	if (b->done + n == b->count && off + bytes != b->keys_bytes)
		return -EINVAL;
	if (copy_from_user(c->keys, ukeys + off, bytes))
		return -EFAULT;
	return n;
}

static int sieve_batch_run(struct sieve *s, struct sieve_batch *b, struct sieve_chunk *c)
{
	u8 __user *ures = u64_to_user_ptr(b->results);
	u64 off = 0;
	int err;

	/*
	 * A batch of one chunk is checked whole as it is read, before anything
	 * is applied; a longer one is checked first, so a bad length in a late
	 * chunk cannot leave the early ones applied.
	 */
	if (b->count > c->nkeys || b->keys_bytes > c->nbytes)
		err = sieve_batch_check_lens(b, c);
	else
		err = 0;
	while (!err && b->done < b->count) {
		int n = sieve_batch_read_chunk(b, c, off);
		u32 did, i;

		/* Never 0: each length is at most keys_bytes and a chunk. */
		if (n <= 0)
			return n ?: -EINVAL;
		err = sieve_keys_apply(s, b->op, b->flags, c->k, n, c->res, &did);
		/* Results of the keys applied, whatever happened after them. */
		if (ures && copy_to_user(ures + b->done, c->res, did))
			err = -EFAULT;
		for (i = 0; i < did; i++) {
			b->present += c->res[i];
			off += c->k[i].len;
		}
		b->done += did;
		if (err || b->done == b->count)
			break;
		cond_resched();
		if (fatal_signal_pending(current))
			err = -EINTR;
	}
	return err;
}

long sieve_ioctl_batch(struct sieve_file *sf, void __user *uarg)
{
	struct sieve_chunk *c;
	struct sieve_batch b;
	struct sieve *s;
	int err;

	err = sieve_copy_in(&b, sizeof(b), SIEVE_BATCH_SIZE_VER0, uarg);
	if (err)
		return err;
	if (b.op < SIEVE_BATCH_ADD || b.op > SIEVE_BATCH_DELETE)
		return -EINVAL;
	if (b.op != SIEVE_BATCH_QUERY && !sf->writable)
		return -EBADF;
	if ((b.flags & ~(b.op == SIEVE_BATCH_ADD ? SIEVE_ADD_FLAGS_ALL : 0)) ||
	    !b.count || b.count > SIEVE_MAX_BATCH || b.__reserved)
		return -EINVAL;
	b.done = 0;
	b.present = 0;
	s = sieve_lookup(b.id);
	if (!s)
		return -ENOENT;
	err = -EOPNOTSUPP;
	if (b.op == SIEVE_BATCH_DELETE && s->type != SIEVE_CUCKOO)
		goto out_release;
	err = -ENOMEM;
	c = sieve_chunk_alloc(&b);
	if (!c)
		goto out_release;
	err = sieve_batch_run(s, &b, c);
	kvfree(c);
out_release:
	sieve_release(s);
	/* done and present are written on failure too. */
	if (sieve_copy_out(uarg, &b, sizeof(b)))
		err = -EFAULT;
	return err;
}
