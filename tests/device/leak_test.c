// SPDX-License-Identifier: GPL-2.0
/*
 * Work for the leak checks (tests/device/leak_end.sh measures around it).
 *
 *   sieve_leak_test churn ROUNDS   every kind of allocation the module
 *	makes, ROUNDS times, each freed again: filters of each type (a
 *	vmalloc-sized one among them, a scalable one grown to several layers),
 *	exports held by files (read-write and read-only) that close mid-way, imports left unfinished,
 *	ephemeral filters, merges, clears; then ROUNDS * 250 tiny filters made
 *	and destroyed, so that a leak of a few hundred bytes per filter adds
 *	up to megabytes. Prints KTAP: no call failed, and the module's own
 *	count of memory in use is back to 0.
 *   sieve_leak_test leave          makes filters and leaves them, for the
 *	module unload to destroy.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dev.h"

#define FPP_1PCT	10000000U

static unsigned long failures;
static char first_failure[160];

static int check(int err, const char *what)
{
	if (err && !failures++)
		snprintf(first_failure, sizeof(first_failure), "%s -> %s", what, errname(err));
	return err;
}

/* Bytes of the module's memory in use, once it settles (RCU frees late). */
static long long settled_memory(long long *filters)
{
	long long mem = module_memory_bytes(filters);
	int i;

	for (i = 0; i < 100 && mem > 0; i++) {
		usleep(50000);
		mem = module_memory_bytes(filters);
	}
	return mem;
}

static void one_round(int fd, unsigned int round)
{
	static const uint32_t types[] = { SIEVE_BLOOM, SIEVE_BLOCKED_BLOOM, SIEVE_CUCKOO };
	struct keyset *ks = keyset_make("leak", round * 1000, 3000);
	char name[SIEVE_NAME_MAX];
	uint32_t id, id2, big, t;
	uint8_t *snap = NULL;
	uint64_t len = 0;

	/* 5M keys at 1%: a 6 MB Bloom table, past kmalloc: vmalloc */
	check(sv_create_simple(fd, "leak.big", SIEVE_BLOOM, 5000000, FPP_1PCT, 0, &big),
	      "create of a 6 MB filter");
	for (t = 0; t < 3; t++) {
		int efd = dev_open(O_RDWR), xfd = dev_open(O_RDWR), rfd = dev_open(O_RDONLY);
		struct sieve_export e = { .size = sizeof(e) };
		struct sieve_import im = { .size = sizeof(im) };

		snprintf(name, sizeof(name), "leak.s%u", t);
		check(sv_create_simple(fd, name, types[t], 500, FPP_1PCT, SIEVE_CREATE_SCALABLE, &id),
		      "create of a scalable filter");
		check(sv_batch(fd, id, SIEVE_BATCH_ADD, 0, ks, NULL), "adds growing it");
		check(sv_export_all(fd, id, 4096, &snap, &len), "export");
		snprintf(name, sizeof(name), "leak.c%u", t);
		check(sv_import_all(fd, name, 0, snap, len, 1000, &id2), "import");
		check(sv_clear(fd, id2), "clear");
		check(sv_destroy(fd, id2), "destroy of the copy");
		/* an export held by a file that closes before reading it all */
		e.id = id;
		check(sv_ioctl(xfd, SIEVE_IOC_EXPORT, &e), "export held");
		/* and one held by a file opened read-only (the readers' budget) */
		check(sv_ioctl(rfd, SIEVE_IOC_EXPORT, &e), "read-only export held");
		close(rfd);
		/* an import left unfinished when its file closes */
		snprintf(im.name, sizeof(im.name), "leak.u%u", t);
		im.buf = (uintptr_t)snap;
		im.buf_len = len / 2;
		check(sv_ioctl(xfd, SIEVE_IOC_IMPORT, &im), "half an import");
		close(xfd);
		/* an ephemeral filter and an ephemeral import */
		snprintf(name, sizeof(name), "leak.e%u", t);
		check(sv_create_simple(efd, name, types[t], 10000, FPP_1PCT,
				       SIEVE_CREATE_EPHEMERAL, &id2), "ephemeral create");
		snprintf(name, sizeof(name), "leak.ei%u", t);
		check(sv_import_all(efd, name, SIEVE_CREATE_EPHEMERAL, snap, len, 1 << 20, &id2),
		      "ephemeral import");
		close(efd);
		check(sv_destroy(fd, id), "destroy");
		free(snap);
		snap = NULL;
	}
	check(sv_create_simple(fd, "leak.m", SIEVE_BLOOM, 5000000, FPP_1PCT, 0, &id), "create");
	check(sv_merge(fd, big, id), "merge");
	check(sv_destroy(fd, id), "destroy");
	check(sv_destroy(fd, big), "destroy of the 6 MB filter");
	keyset_free(ks);
}

static int churn(unsigned int rounds)
{
	long long mem, filters;
	unsigned int r, i;
	int fd = dev_open(O_RDWR);

	ktap_begin("leak-churn");
	for (r = 0; r < rounds; r++)
		one_round(fd, r);
	for (i = 0; i < rounds * 250; i++) {
		uint32_t id;

		if (!check(sv_create_simple(fd, "leak.tiny", i % 3 + 1, 10, FPP_1PCT, 0, &id),
			   "create of a tiny filter"))
			check(sv_destroy(fd, id), "destroy of a tiny filter");
	}
	close(fd);
	ktap_ok(failures == 0, "%u rounds of every allocation, %u tiny filters: %lu calls failed%s%s",
		rounds, rounds * 250, failures, failures ? ", first: " : "", first_failure);
	mem = settled_memory(&filters);
	ktap_ok(mem == 0 && filters <= 0, "module memory in use back to 0 (%lld bytes, %lld "
		"filters)", mem, filters);
	mem = param_read("reader_memory_in_use");
	ktap_ok(mem == 0, "readers' memory in use back to 0 (%lld bytes)", mem);
	return ktap_end();
}

static int leave(void)
{
	static const uint32_t types[] = { SIEVE_BLOOM, SIEVE_BLOCKED_BLOOM, SIEVE_CUCKOO };
	struct keyset *ks = keyset_make("left", 0, 2000);
	char name[SIEVE_NAME_MAX];
	int fd = dev_open(O_RDWR), t, err = 0;
	uint32_t id;

	for (t = 0; t < 3; t++) {
		snprintf(name, sizeof(name), "left.%d", t);
		err |= sv_create_simple(fd, name, types[t], 200, FPP_1PCT, SIEVE_CREATE_SCALABLE, &id);
		err |= sv_batch(fd, id, SIEVE_BATCH_ADD, 0, ks, NULL);
	}
	err |= sv_create_simple(fd, "left.big", SIEVE_BLOOM, 5000000, FPP_1PCT, 0, &id);
	close(fd);
	keyset_free(ks);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "churn"))
		return churn(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "leave"))
		return leave();
	fprintf(stderr, "usage: sieve_leak_test churn ROUNDS | leave\n");
	return 2;
}
