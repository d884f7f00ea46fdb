// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/sieve through libsieve (statically linked): every device call on
 * every filter type, scalable growth, ephemeral filters, export/import
 * files, merge, exchange, read-only handles, and snapshots crossing between local
 * filters and the kernel both ways. Prints KTAP.
 *
 * Usage: sieve_lib_test
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dev.h"
#include "libsieve.h"

#define FPP_1PCT	10000000U

static struct sieve_params params(uint32_t type, uint64_t capacity, uint32_t flags)
{
	return (struct sieve_params){ .type = type, .flags = flags | SIEVE_CREATE_SEED,
				      .capacity = capacity, .fpp_ppb = FPP_1PCT,
				      .seed = 0x11b0000 + type };
}

/* Keys of @ks absent according to the library's batch query. */
static long lib_absent(struct sieve_dev *d, uint32_t id, struct keyset *ks)
{
	struct sieve_batch_stats st = { 0 };
	int err = sieve_dev_batch(d, id, SIEVE_BATCH_QUERY, 0, ks->bytes, ks->lens, ks->n,
				  ks->results, &st);

	return err ? err : (long)(ks->n - st.present);
}

static void test_type(struct sieve_dev *d, uint32_t type, const char *tn)
{
	struct keyset *ks = keyset_make("lib", 0, 2000);
	struct sieve_params p = params(type, 5000, 0);
	struct sieve_batch_stats st = { 0 };
	struct sieve_list_entry *list = NULL;
	struct sieve_info info;
	char name[SIEVE_NAME_MAX], copy[SIEVE_NAME_MAX], path[64];
	int id, id2, r, n, i, found = 0;
	long absent;

	snprintf(name, sizeof(name), "lib.%s", tn);
	snprintf(copy, sizeof(copy), "lib.%s.copy", tn);
	snprintf(path, sizeof(path), "/tmp/lib.%s.snap", tn);
	id = sieve_dev_create(d, name, &p);
	ktap_ok(id > 0, "%s: sieve_dev_create -> %d", tn, id);
	r = sieve_dev_create(d, name, &p);
	ktap_ok(r == -EEXIST, "%s: sieve_dev_create of a taken name -> %s", tn, errname(r));
	r = sieve_dev_lookup(d, name);
	ktap_ok(r == id, "%s: sieve_dev_lookup -> %d", tn, r);
	n = sieve_dev_list_all(d, &list);
	for (i = 0; i < n; i++)
		found += (int)list[i].id == id && !strcmp(list[i].name, name) &&
			 list[i].type == type;
	free(list);
	ktap_ok(n > 0 && found == 1, "%s: sieve_dev_list_all finds it (%d filters)", tn, n);

	r = sieve_dev_add(d, id, "one", 3, 0);
	ktap_ok(r == 0, "%s: sieve_dev_add of a new key -> %d", tn, r);
	r = sieve_dev_add(d, id, "one", 3, SIEVE_ADD_IF_ABSENT);
	ktap_ok(r == 1, "%s: sieve_dev_add IF_ABSENT of it again -> %d", tn, r);
	r = sieve_dev_query(d, id, "one", 3);
	ktap_ok(r == 1, "%s: sieve_dev_query of it -> %d", tn, r);
	r = sieve_dev_query(d, id, "two", 3);
	ktap_ok(r == 0, "%s: sieve_dev_query of an absent key -> %d", tn, r);
	r = sieve_dev_delete(d, id, "one", 3);
	ktap_ok(type == SIEVE_CUCKOO ? r == 1 : r == -EOPNOTSUPP, "%s: sieve_dev_delete -> %s",
		tn, errname(r));
	r = sieve_dev_add(d, id, "", 0, 0);
	ktap_ok(r == -EINVAL, "%s: sieve_dev_add of an empty key -> %s", tn, errname(r));

	r = sieve_dev_batch(d, id, SIEVE_BATCH_ADD, 0, ks->bytes, ks->lens, ks->n, ks->results,
			    &st);
	ktap_ok(r == 0 && st.done == ks->n, "%s: sieve_dev_batch ADD of 2000 -> %s, done %llu", tn,
		errname(r), (unsigned long long)st.done);
	absent = lib_absent(d, id, ks);
	ktap_ok(absent == 0, "%s: sieve_dev_batch QUERY finds them (%ld absent)", tn, absent);
	r = sieve_dev_info(d, id, &info);
	ktap_ok(r == 0 && info.id == (uint32_t)id && info.geo.type == type &&
		info.geo.seed == p.seed && info.queries >= 2000,
		"%s: sieve_dev_info -> %s (seed %#x, queries %llu)", tn, errname(r), info.geo.seed,
		(unsigned long long)info.queries);

	r = sieve_dev_export_path(d, id, path, NULL);
	id2 = r ? r : sieve_dev_import_path(d, copy, 0, path);
	ktap_ok(id2 > 0 && lib_absent(d, id2, ks) == 0,
		"%s: sieve_dev_export_path then sieve_dev_import_path -> %d, keys present", tn, id2);
	if (id2 > 0) {
		struct sieve_info ci;

		sieve_dev_info(d, id2, &ci);
		ktap_ok(ci.inserted == info.inserted && ci.deleted == info.deleted,
			"%s: the copy carries the counters (inserted %llu/%llu)", tn,
			(unsigned long long)ci.inserted, (unsigned long long)info.inserted);
		sieve_dev_destroy(d, id2);
	}
	r = sieve_dev_clear(d, id);
	absent = lib_absent(d, id, ks);
	ktap_ok(r == 0 && absent == ks->n, "%s: sieve_dev_clear -> %s, %ld of 2000 absent", tn,
		errname(r), absent);
	r = sieve_dev_destroy(d, id);
	ktap_ok(r == 0 && sieve_dev_lookup(d, name) == -ENOENT, "%s: sieve_dev_destroy -> %s", tn,
		errname(r));
	r = sieve_dev_query(d, id, "one", 3);
	ktap_ok(r == -ENOENT, "%s: sieve_dev_query of a destroyed id -> %s", tn, errname(r));
	unlink(path);
	keyset_free(ks);
}

static void test_scalable(struct sieve_dev *d, uint32_t type, const char *tn)
{
	struct keyset *ks = keyset_make("libsc", 0, 3000);
	struct sieve_params p = params(type, 300, SIEVE_CREATE_SCALABLE);
	struct sieve_info info;
	int id = sieve_dev_create(d, "lib.scalable", &p), r;

	r = sieve_dev_batch(d, id, SIEVE_BATCH_ADD, 0, ks->bytes, ks->lens, ks->n, NULL, NULL);
	sieve_dev_info(d, id, &info);
	ktap_ok(id > 0 && r == 0 && info.nlayers >= 3 && lib_absent(d, id, ks) == 0,
		"%s: scalable through libsieve: 3000 keys, %u layers, none lost", tn, info.nlayers);
	sieve_dev_destroy(d, id);
	keyset_free(ks);
}

static void test_ephemeral(struct sieve_dev *d)
{
	struct sieve_params p = params(SIEVE_CUCKOO, 100, SIEVE_CREATE_EPHEMERAL);
	struct sieve_dev *e = NULL;
	int err = sieve_dev_open(NULL, true, &e), id;

	id = err ? err : sieve_dev_create(e, "lib.eph", &p);
	ktap_ok(id > 0 && sieve_dev_lookup(d, "lib.eph") == id,
		"ephemeral through libsieve: created (%d)", id);
	sieve_dev_close(e);
	err = sieve_dev_lookup(d, "lib.eph");
	ktap_ok(err == -ENOENT, "ephemeral through libsieve: gone with its handle (%s)",
		errname(err));
}

static void test_merge(struct sieve_dev *d)
{
	struct keyset *a = keyset_make("lma", 0, 200), *b = keyset_make("lmb", 0, 200);
	struct sieve_params p = params(SIEVE_BLOCKED_BLOOM, 1000, 0);
	int dst = sieve_dev_create(d, "lib.mdst", &p), src = sieve_dev_create(d, "lib.msrc", &p);
	int r;

	sieve_dev_batch(d, dst, SIEVE_BATCH_ADD, 0, a->bytes, a->lens, a->n, NULL, NULL);
	sieve_dev_batch(d, src, SIEVE_BATCH_ADD, 0, b->bytes, b->lens, b->n, NULL, NULL);
	r = sieve_dev_merge(d, dst, src);
	ktap_ok(r == 0 && lib_absent(d, dst, a) == 0 && lib_absent(d, dst, b) == 0,
		"sieve_dev_merge -> %s, dst holds both sets", errname(r));
	r = sieve_dev_merge(d, dst, dst);
	ktap_ok(r == -EINVAL, "sieve_dev_merge of a filter into itself -> %s", errname(r));
	sieve_dev_destroy(d, dst);
	sieve_dev_destroy(d, src);
	keyset_free(a);
	keyset_free(b);
}

/* A filter rebuilt in place: an ephemeral twin filled, exchanged, closed. */
static void test_exchange(struct sieve_dev *d)
{
	struct keyset *old = keyset_make("lxo", 0, 200), *fresh = keyset_make("lxf", 0, 2000);
	struct sieve_params p = params(SIEVE_CUCKOO, 1000, 0);
	struct sieve_params q = params(SIEVE_CUCKOO, 4000, SIEVE_CREATE_EPHEMERAL);
	struct sieve_dev *builder = NULL;
	struct sieve_info info;
	int id = sieve_dev_create(d, "lib.xlist", &p), tmp = -1, r;

	sieve_dev_batch(d, id, SIEVE_BATCH_ADD, 0, old->bytes, old->lens, old->n, NULL, NULL);
	r = sieve_dev_open(NULL, true, &builder);
	if (!r)
		tmp = sieve_dev_create(builder, "lib.xtmp", &q);
	if (tmp > 0)
		sieve_dev_batch(builder, tmp, SIEVE_BATCH_ADD, 0, fresh->bytes, fresh->lens,
				fresh->n, NULL, NULL);
	r = tmp > 0 ? sieve_dev_exchange(builder, id, tmp) : tmp;
	ktap_ok(r == 0 && lib_absent(d, id, fresh) == 0 && lib_absent(d, tmp, old) == 0,
		"sieve_dev_exchange with an ephemeral twin -> %s; the keys changed filters",
		errname(r));
	r = sieve_dev_exchange(d, id, id);
	ktap_ok(r == -EINVAL, "sieve_dev_exchange of a filter with itself -> %s (want -EINVAL)",
		errname(r));
	if (builder)
		sieve_dev_close(builder);
	r = sieve_dev_info(d, id, &info);
	ktap_ok(r == 0 && info.capacity == 4000 && !strcmp(info.name, "lib.xlist") &&
		sieve_dev_lookup(d, "lib.xtmp") == -ENOENT && lib_absent(d, id, fresh) == 0,
		"after the twin's handle closed: the filter keeps its name and the new table "
		"(capacity %llu)", (unsigned long long)info.capacity);
	sieve_dev_destroy(d, id);
	keyset_free(old);
	keyset_free(fresh);
}

static void test_read_only(struct sieve_dev *d)
{
	struct sieve_params p = params(SIEVE_BLOOM, 1000, 0);
	struct sieve_dev *ro = NULL;
	struct sieve_info info;
	int id = sieve_dev_create(d, "lib.ro", &p), err, r;

	sieve_dev_add(d, id, "k", 1, 0);
	err = sieve_dev_open(NULL, false, &ro);
	ktap_ok(!err, "sieve_dev_open read-only -> %s", errname(err));
	if (err)
		return;
	r = sieve_dev_query(ro, id, "k", 1);
	ktap_ok(r == 1 && sieve_dev_info(ro, id, &info) == 0 && sieve_dev_lookup(ro, "lib.ro") == id,
		"read-only handle: query, info and lookup work");
	r = sieve_dev_add(ro, id, "x", 1, 0);
	ktap_ok(r == -EBADF, "read-only handle: sieve_dev_add -> %s (want -EBADF)", errname(r));
	r = sieve_dev_clear(ro, id);
	ktap_ok(r == -EBADF, "read-only handle: sieve_dev_clear -> %s (want -EBADF)", errname(r));
	r = sieve_dev_destroy(ro, id);
	ktap_ok(r == -EBADF, "read-only handle: sieve_dev_destroy -> %s (want -EBADF)", errname(r));
	r = sieve_dev_create(ro, "lib.ro2", &p);
	ktap_ok(r == -EBADF, "read-only handle: sieve_dev_create -> %s (want -EBADF)", errname(r));
	{
		int other = sieve_dev_create(d, "lib.ro3", &p);

		r = sieve_dev_exchange(ro, id, other);
		ktap_ok(r == -EBADF, "read-only handle: sieve_dev_exchange -> %s (want -EBADF)",
			errname(r));
		sieve_dev_destroy(d, other);
	}
	r = sieve_dev_query(d, id, "x", 1);
	ktap_ok(r == 0, "read-only handle changed nothing (query of the refused key -> %d)", r);
	sieve_dev_close(ro);
	sieve_dev_destroy(d, id);
}

/* A local filter's snapshot goes into the kernel, and back. */
static void test_local_interop(struct sieve_dev *d, uint32_t type, const char *tn)
{
	struct keyset *ks = keyset_make("interop", 0, 1000);
	struct sieve_params p = params(type, 2000, 0);
	struct sieve_local *loc = NULL, *back = NULL;
	uint8_t *ksnap = NULL, *lsnap = NULL;
	uint64_t klen = 0, llen = 0;
	char path[64];
	int err, id = 0, kid, fd;

	snprintf(path, sizeof(path), "/tmp/interop.%s", tn);
	err = sieve_local_create(&p, &loc);
	err = err ? err : sieve_local_batch(loc, SIEVE_BATCH_ADD, 0, ks->bytes, ks->lens, ks->n,
					   NULL, NULL);
	err = err ? err : sieve_local_save_path(loc, path);
	id = err ? err : sieve_dev_import_path(d, "lib.interop", 0, path);
	ktap_ok(id > 0 && lib_absent(d, id, ks) == 0,
		"%s: a local filter's snapshot imports into the kernel (%d), keys present", tn, id);
	/* the kernel's own filter from the same keys and seed: the same table */
	kid = sieve_dev_create(d, "lib.interop.k", &p);
	sieve_dev_batch(d, kid, SIEVE_BATCH_ADD, 0, ks->bytes, ks->lens, ks->n, NULL, NULL);
	err = sv_export_all(sieve_dev_fd(d), kid, 1 << 20, &ksnap, &klen);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		lsnap = malloc(klen + 1);
		llen = read(fd, lsnap, klen + 1);
		close(fd);
	}
	ktap_ok(!err && lsnap && llen == klen &&
		!memcmp(ksnap + sizeof(struct sieve_snapshot_header),
			lsnap + sizeof(struct sieve_snapshot_header),
			klen - sizeof(struct sieve_snapshot_header)),
		"%s: kernel and libsieve build byte-identical tables from the same keys", tn);
	err = sieve_dev_export_path(d, kid, path, NULL);
	err = err ? err : sieve_local_load_path(path, &back);
	ktap_ok(!err && back && sieve_local_query(back, "interop-7", 9) == 1,
		"%s: a kernel export loads as a local filter (%s)", tn, errname(err));
	sieve_dev_destroy(d, id);
	sieve_dev_destroy(d, kid);
	if (loc)
		sieve_local_destroy(loc);
	if (back)
		sieve_local_destroy(back);
	free(ksnap);
	free(lsnap);
	unlink(path);
	keyset_free(ks);
}

static void test_open_errors(void)
{
	struct sieve_dev *d = NULL;
	int err = sieve_dev_open("/nonexistent/sieve", true, &d), st = 0, child = 0;
	int pipefd[2];
	pid_t pid;

	ktap_ok(err == -ENOENT, "sieve_dev_open of a missing path -> %s", errname(err));
	if (pipe(pipefd))
		return;
	pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(3);
		child = sieve_dev_open(NULL, false, &d);
		if (write(pipefd[1], &child, sizeof(child)) != sizeof(child))
			_exit(4);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &child, sizeof(child)) != sizeof(child))
		child = 1;
	close(pipefd[0]);
	waitpid(pid, &st, 0);
	ktap_ok(child == -EACCES, "sieve_dev_open as uid 65534 -> %s (want -EACCES)",
		errname(child));
}

int main(void)
{
	struct sieve_dev *d = NULL;
	int err, i;

	ktap_begin("libsieve");
	err = sieve_dev_open(NULL, true, &d);
	if (err) {
		printf("Bail out! sieve_dev_open: %s\n", errname(err));
		return 1;
	}
	for (i = 0; i < SV_NR_TYPES; i++) {
		test_type(d, sv_types[i].type, sv_types[i].name);
		test_scalable(d, sv_types[i].type, sv_types[i].name);
		test_local_interop(d, sv_types[i].type, sv_types[i].name);
	}
	test_ephemeral(d);
	test_merge(d);
	test_exchange(d);
	test_read_only(d);
	test_open_errors();
	sieve_dev_close(d);
	return ktap_end();
}
