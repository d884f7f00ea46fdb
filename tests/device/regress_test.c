// SPDX-License-Identifier: GPL-2.0
/*
 * Regressions found by review of the /dev/sieve kernel code, one case
 * each: a key added again and again must not make a scalable cuckoo filter
 * grow; an import whose result cannot be written back leaves no filter; a
 * clear goes back to one layer and lets the filter grow again; a
 * multi-layer cuckoo export under constant writes stays consistent.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "dev.h"

static int fd;

static void t_cuckoo_copies(void)
{
	struct sieve_create c;
	struct sieve_info info;
	uint32_t res, id;
	int i, ok = 0, nospc = 0, err;

	sv_create_arg(&c, "rv.cuckoo", SIEVE_CUCKOO, 1000, 1000000);
	c.flags |= SIEVE_CREATE_SCALABLE;
	err = sv_create(fd, &c);
	ktap_ok(!err, "create scalable cuckoo (%s)", errname(err));
	id = c.id;
	for (i = 0; i < 100; i++) {
		err = sv_add(fd, id, "same", 4, 0, &res);
		if (!err)
			ok++;
		else if (err == -ENOSPC)
			nospc++;
	}
	sv_info(fd, id, &info);
	ktap_ok(info.nlayers == 1, "100 copies of one key: nlayers %u (want 1), %d stored, %d ENOSPC",
		info.nlayers, ok, nospc);
	ktap_ok(ok <= 8 && nospc == 100 - ok, "copies capped at 8 (%d)", ok);
	/* Filling it with distinct keys still grows it. */
	for (i = 0; i < 5000; i++) {
		char k[32];
		int n = snprintf(k, sizeof(k), "k%d", i);

		err = sv_add(fd, id, k, n, 0, &res);
		if (err)
			break;
	}
	sv_info(fd, id, &info);
	ktap_ok(!err && info.nlayers >= 2, "5000 distinct keys: %s, nlayers %u", errname(err),
		info.nlayers);
	sv_destroy(fd, id);
}

static void t_import_efault(void)
{
	struct sieve_import *im;
	uint8_t *snap;
	uint64_t len;
	uint32_t id, src;
	int err;

	err = sv_create_simple(fd, "rv.src", SIEVE_BLOOM, 1000, 1000000, 0, &src);
	ktap_ok(!err, "create rv.src (%s)", errname(err));
	err = sv_export_all(fd, src, 1 << 20, &snap, &len);
	ktap_ok(!err, "export rv.src (%s)", errname(err));
	im = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(im, 0, sizeof(*im));
	im->size = sizeof(*im);
	strcpy(im->name, "rv.imp");
	im->buf = (uintptr_t)snap;
	im->buf_len = len;
	mprotect(im, 4096, PROT_READ);
	err = ioctl(fd, SIEVE_IOC_IMPORT, im) ? -errno : 0;
	ktap_ok(err == -EFAULT, "import whose struct is read-only -> %s (want EFAULT)",
		errname(err));
	err = sv_open_name(fd, "rv.imp", &id);
	ktap_ok(err == -ENOENT, "nothing was created: open rv.imp -> %s (want ENOENT)",
		errname(err));
	if (!err)
		sv_destroy(fd, id);
	sv_destroy(fd, src);
	free(snap);
}

static void t_clear_grow_race(void)
{
	struct sieve_create c;
	struct sieve_info info;
	uint32_t id, res;
	int round, i, bad = 0, err;

	sv_create_arg(&c, "rv.sbloom", SIEVE_BLOOM, 64, 10000000);
	c.flags |= SIEVE_CREATE_SCALABLE;
	err = sv_create(fd, &c);
	ktap_ok(!err, "create scalable bloom (%s)", errname(err));
	id = c.id;
	for (round = 0; round < 20; round++) {
		for (i = 0; i < 64; i++) {
			char k[32];
			int n = snprintf(k, sizeof(k), "r%d-%d", round, i);

			sv_add(fd, id, k, n, 0, &res);
		}
		sv_clear(fd, id);
		sv_info(fd, id, &info);
		bad += info.nlayers != 1;
	}
	ktap_ok(!bad, "clear goes back to one layer (%d rounds off)", bad);
	sv_destroy(fd, id);
}

static volatile int stop;
static uint32_t busy_id;

static void *writer(void *p)
{
	int wfd = dev_open(O_RDWR);
	uint32_t res;
	unsigned i = 0;

	while (!stop) {
		char k[32];
		int n = snprintf(k, sizeof(k), "w%u", i % 3000);

		if (i / 3000 % 2)
			sv_delete(wfd, busy_id, k, n, &res);
		else
			sv_add(wfd, busy_id, k, n, SIEVE_ADD_IF_ABSENT, &res);
		i++;
	}
	close(wfd);
	return NULL;
}

static void t_frozen_multilayer(void)
{
	struct sieve_create c;
	struct sieve_info info;
	pthread_t t;
	uint32_t res, id;
	int i, err, bad = 0, good = 0;

	sv_create_arg(&c, "rv.busy", SIEVE_CUCKOO, 500, 1000000);
	c.flags |= SIEVE_CREATE_SCALABLE;
	err = sv_create(fd, &c);
	busy_id = c.id;
	for (i = 0; i < 4000; i++) {
		char k[32];
		int n = snprintf(k, sizeof(k), "base%d", i);

		sv_add(fd, busy_id, k, n, 0, &res);
	}
	sv_info(fd, busy_id, &info);
	ktap_ok(!err && info.nlayers >= 3, "busy scalable cuckoo has %u layers", info.nlayers);
	pthread_create(&t, NULL, writer, NULL);
	for (i = 0; i < 30; i++) {
		uint8_t *snap;
		uint64_t len;

		err = sv_export_all(fd, busy_id, 1 << 20, &snap, &len);
		if (err) {
			bad++;
			continue;
		}
		err = sv_import_all(fd, "rv.copy", 0, snap, len, 1 << 20, &id);
		free(snap);
		if (err) {
			diag("import of a busy export: %s", errname(err));
			bad++;
			continue;
		}
		good++;
		sv_destroy(fd, id);
	}
	stop = 1;
	pthread_join(t, NULL);
	ktap_ok(!bad, "exports of a busy multi-layer cuckoo import cleanly (%d ok, %d bad)",
		good, bad);
	sv_destroy(fd, busy_id);
}

/* A scalable cuckoo that hit its sizing limit grows again after a clear. */
static void t_clear_resets_growth(void)
{
	struct sieve_create c;
	struct sieve_info info;
	uint32_t res, id;
	int i, err = 0;

	sv_create_arg(&c, "rv.limit", SIEVE_CUCKOO, 200, 1000000);
	c.flags |= SIEVE_CREATE_SCALABLE;
	sv_create(fd, &c);
	id = c.id;
	for (i = 0; i < 100000 && !err; i++) {
		char k[32];
		int n = snprintf(k, sizeof(k), "a%d", i);

		err = sv_add(fd, id, k, n, 0, &res);
	}
	sv_info(fd, id, &info);
	ktap_ok(err == -ENOSPC, "fill to its sizing limit: %s after %d keys, %u layers",
		errname(err), i, info.nlayers);
	sv_clear(fd, id);
	err = 0;
	for (i = 0; i < 1000 && !err; i++) {
		char k[32];
		int n = snprintf(k, sizeof(k), "b%d", i);

		err = sv_add(fd, id, k, n, 0, &res);
	}
	sv_info(fd, id, &info);
	ktap_ok(!err && info.nlayers >= 2, "after a clear it grows again: %s, %u layers",
		errname(err), info.nlayers);
	sv_destroy(fd, id);
}

int main(void)
{
	ktap_begin("regress");
	fd = dev_open(O_RDWR);
	if (fd < 0)
		return 2;
	t_cuckoo_copies();
	t_import_efault();
	t_clear_grow_race();
	t_frozen_multilayer();
	t_clear_resets_growth();
	return ktap_end();
}
