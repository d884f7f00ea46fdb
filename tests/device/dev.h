/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the /dev/sieve test programs share: KTAP output, one thin wrapper
 * per ioctl (each returns 0 or -errno, nothing else), keys, the "known"
 * filters whose keys must survive every bad call, and snapshot helpers.
 *
 * The programs run in the VM as root, statically linked, and are written
 * against include/uapi/linux/sieve.h alone: they do not use libsieve, so
 * that a mismatch between the kernel and the ABI shows here first.
 */
#ifndef SIEVE_DEV_TEST_H
#define SIEVE_DEV_TEST_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/sieve.h>

#define DEV_PATH_DEFAULT	"/dev/sieve"
/* A kernel address (the start of the kernel's text on x86-64). */
#define KERNEL_PTR		0xffffffff81000000ULL

/* ---- KTAP ---------------------------------------------------------- */

void ktap_begin(const char *suite);
/* Records one result; returns @ok. */
bool ktap_ok(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ktap_skip(const char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the plan; the exit status for main(). */
int ktap_end(void);
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "0" or "-EINVAL"-like name of a 0/-errno value, for messages. */
const char *errname(int err);
/* Seconds on the monotonic clock: for durations. */
double mono_now(void);

/* ---- the device ---------------------------------------------------- */

/* Every filter type, with its name for messages: each program runs them all. */
#define SV_NR_TYPES	3
struct sv_type {
	uint32_t type;
	const char *name;
};
extern const struct sv_type sv_types[SV_NR_TYPES];

const char *dev_path(void);
/* open(2) of the device; exits the program if it cannot. */
int dev_open(int oflags);
/* ioctl(2): 0, or -errno. */
int sv_ioctl(int fd, unsigned long cmd, void *arg);

/* A zeroed create argument for a sized filter (no flags). */
void sv_create_arg(struct sieve_create *c, const char *name, uint32_t type,
		   uint64_t capacity, uint32_t fpp_ppb);
int sv_create(int fd, struct sieve_create *c);
/* Sized filter with a fixed seed; @flags adds to SIEVE_CREATE_SEED. */
int sv_create_simple(int fd, const char *name, uint32_t type, uint64_t capacity,
		     uint32_t fpp_ppb, uint32_t flags, uint32_t *id);
int sv_open_name(int fd, const char *name, uint32_t *id);
int sv_destroy(int fd, uint32_t id);
int sv_clear(int fd, uint32_t id);
int sv_info(int fd, uint32_t id, struct sieve_info *info);
int sv_add(int fd, uint32_t id, const void *key, uint32_t len, uint32_t flags,
	   uint32_t *result);
int sv_query(int fd, uint32_t id, const void *key, uint32_t len, uint32_t *result);
int sv_delete(int fd, uint32_t id, const void *key, uint32_t len, uint32_t *result);
int sv_merge(int fd, uint32_t dst, uint32_t src);
int sv_exchange(int fd, uint32_t a, uint32_t b);
/* Every filter, all pages; *n entries into @out (room @max). */
int sv_list_all(int fd, struct sieve_list_entry *out, uint32_t max, uint32_t *n);

/* ---- keys ---------------------------------------------------------- */

/*
 * A set of keys in the layout a batch wants: @n keys back to back in
 * @bytes, their lengths in @lens, room for results in @results.
 */
struct keyset {
	uint32_t n;
	uint8_t *bytes;
	uint64_t nbytes;
	uint32_t *lens;
	uint8_t *results;
};

/* Keys "@prefix-<i>" for i in [first, first + n). */
struct keyset *keyset_make(const char *prefix, uint64_t first, uint32_t n);
void keyset_free(struct keyset *ks);
/* The i-th key's bytes (walks the lengths: for small sets and checks). */
const uint8_t *keyset_key(const struct keyset *ks, uint32_t i, uint32_t *len);

/* One SIEVE_IOC_BATCH over all of @ks; @b gets done/present back. */
int sv_batch(int fd, uint32_t id, uint32_t op, uint32_t flags, struct keyset *ks,
	     struct sieve_batch *b);
/* Keys of @ks a query says absent (-errno if the query fails). */
long sv_count_absent(int fd, uint32_t id, struct keyset *ks);
/*
 * Adds the keys of @ks one SIEVE_IOC_ADD at a time, in order, up to the
 * first error (0 or its -errno); *added (if not NULL) counts those stored.
 */
int sv_add_each(int fd, uint32_t id, const struct keyset *ks, uint32_t *added);

/* ---- known filters --------------------------------------------------- */

/*
 * A Bloom and a cuckoo filter holding KNOWN_KEYS keys, made at the start of
 * a program; after every bad call, known_intact() says they still hold
 * every key (and still exist).
 */
#define KNOWN_KEYS	200
struct known {
	int fd;
	uint32_t bloom_id, cuckoo_id;
	struct keyset *keys;
	char bloom_name[SIEVE_NAME_MAX], cuckoo_name[SIEVE_NAME_MAX];
};

int known_setup(struct known *k, int fd, const char *tag);
/* Adds a KTAP line "@what: known keys intact" and returns its verdict. */
bool known_check(struct known *k, const char *what);
void known_teardown(struct known *k);

/* ---- snapshots ------------------------------------------------------- */

/* The whole snapshot of @id, exported in chunks of @chunk bytes (malloc'd). */
int sv_export_all(int fd, uint32_t id, uint64_t chunk, uint8_t **buf, uint64_t *len);
/* Imports @len bytes in chunks of @chunk; *id the new filter's (or 0). */
int sv_import_all(int fd, const char *name, uint32_t flags, const uint8_t *buf,
		  uint64_t len, uint64_t chunk, uint32_t *id);
/* The checksum as the ABI defines it, recomputed over @buf (stored in it). */
void snapshot_reseal(uint8_t *buf, uint64_t len);
uint32_t snapshot_checksum(const uint8_t *buf, uint64_t len);
/* Offset of layer @i's header in @buf, or 0 if the snapshot has no layer @i. */
uint64_t snapshot_layer_offset(const uint8_t *buf, uint64_t len, uint32_t i);

/* ---- the module's memory ---------------------------------------------- */

/*
 * The module's own count of bytes in use and of filters (the last line of
 * /proc/sieve: "# filters N memory_bytes M", or the memory_in_use
 * parameter). -1 when neither exists.
 */
long long module_memory_bytes(long long *filters);
/* A module parameter: read (-1 if absent) and write (0 or -errno). */
long long param_read(const char *name);
int param_write(const char *name, long long value);

#endif /* SIEVE_DEV_TEST_H */
