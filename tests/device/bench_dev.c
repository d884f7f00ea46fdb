// SPDX-License-Identifier: GPL-2.0
/*
 * The userspace half of `make bench-vm`: per-key cost of add and query
 * through /dev/sieve, one SIEVE_IOC_ADD/QUERY per key and SIEVE_IOC_BATCH
 * in batches of 16, 256 and 4096 keys, for each filter type; then the same
 * keys and geometry timed in the kernel by sieve_bench_kmod.ko (the cores
 * called directly, and the in-kernel API), and a table of each device cost
 * divided by the direct core cost of the same shape (single call, or the
 * same batch size), each figure the fastest of five runs. Prints KTAP (the
 * runs happened and every figure came back) and writes the table to
 * $SIEVE_OUT/bench.txt.
 *
 * Usage: sieve_bench_dev [NKEYS]    (default 100000)
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
#define SEED		0x5eedbe9c
#define DBG		"/sys/kernel/debug/sieve_bench/"
#define REPS		5

static const uint32_t batch_sizes[] = { 16, 256, 4096 };
static const char *const type_names[] = { "?", "bloom", "blocked", "cuckoo" };
#define NPATHS 4	/* single, batch16, batch256, batch4096 */

/* ns per key: [type][op: 0 add, 1 query][path] */
static double dev_ns[4][2][NPATHS], core_ns[4][2][NPATHS], kapi_ns[4][2];

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

struct keys {
	uint32_t n;
	uint64_t *k;
	uint32_t *lens;
	uint8_t *results;
};

static double single(int fd, uint32_t id, struct keys *ks, unsigned long cmd)
{
	struct sieve_key_op op = { .size = sizeof(op), .id = id, .key_len = 8 };
	double t0 = now_ns();
	uint32_t i;

	for (i = 0; i < ks->n; i++) {
		op.key = (uintptr_t)&ks->k[i];
		if (sv_ioctl(fd, cmd, &op))
			return -1;
	}
	return (now_ns() - t0) / ks->n;
}

static double batched(int fd, uint32_t id, struct keys *ks, uint32_t op, uint32_t bs)
{
	struct sieve_batch b = { .size = sizeof(b), .id = id, .op = op };
	double t0 = now_ns();
	uint32_t i;

	for (i = 0; i < ks->n; i += bs) {
		b.count = ks->n - i < bs ? ks->n - i : bs;
		b.keys = (uintptr_t)&ks->k[i];
		b.keys_bytes = 8ULL * b.count;
		b.lens = (uintptr_t)ks->lens;
		b.results = (uintptr_t)ks->results;
		if (sv_ioctl(fd, SIEVE_IOC_BATCH, &b) || b.done != b.count)
			return -1;
	}
	return (now_ns() - t0) / ks->n;
}

/*
 * One figure: the fastest of REPS runs (an add starts from an empty filter
 * each time), as the kernel half does. @bs 0 is one call per key. -1 if a
 * call failed.
 */
static double best_of(int fd, uint32_t id, struct keys *ks, bool add, uint32_t bs)
{
	double best = -1, t;
	int rep;

	for (rep = 0; rep < REPS; rep++) {
		if (add && sv_clear(fd, id))
			return -1;
		if (bs)
			t = batched(fd, id, ks, add ? SIEVE_BATCH_ADD : SIEVE_BATCH_QUERY, bs);
		else
			t = single(fd, id, ks, add ? SIEVE_IOC_ADD : SIEVE_IOC_QUERY);
		if (t < 0)
			return -1;
		if (best < 0 || t < best)
			best = t;
	}
	return best;
}

/* The device half for one type; false if a call failed. */
static bool device_runs(int fd, uint32_t type, struct keys *ks)
{
	uint32_t id, k;
	bool ok = true;

	if (sv_create_simple(fd, "bench.dev", type, ks->n, FPP_1PCT, 0, &id))
		return false;
	dev_ns[type][0][0] = best_of(fd, id, ks, true, 0);
	for (k = 0; k < 3; k++)
		dev_ns[type][0][k + 1] = best_of(fd, id, ks, true, batch_sizes[k]);
	/* the last add left every key in: queries are all positive */
	dev_ns[type][1][0] = best_of(fd, id, ks, false, 0);
	for (k = 0; k < 3; k++)
		dev_ns[type][1][k + 1] = best_of(fd, id, ks, false, batch_sizes[k]);
	sv_destroy(fd, id);
	for (k = 0; k < NPATHS; k++)
		ok &= dev_ns[type][0][k] > 0 && dev_ns[type][1][k] > 0;
	return ok;
}

/* The kernel half: the module times the cores (and bench.kapi). */
static bool kernel_runs(int fd, uint32_t type, uint32_t n)
{
	char cmd[32];
	uint32_t id;
	int dfd, len;
	bool ok;

	if (sv_create_simple(fd, "bench.kapi", type, n, FPP_1PCT, 0, &id))
		return false;
	dfd = open(DBG "run", O_WRONLY);
	len = snprintf(cmd, sizeof(cmd), "%u %u\n", type, n);
	ok = dfd >= 0 && write(dfd, cmd, len) == len;
	if (dfd >= 0)
		close(dfd);
	sv_destroy(fd, id);
	return ok;
}

static void parse_kernel_results(void)
{
	char line[128], tname[16], op[16], path[32];
	unsigned long long x100;
	FILE *f = fopen(DBG "result", "r");
	uint32_t t, k;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s %15s %31s %llu", tname, op, path, &x100) != 4)
			continue;
		for (t = 1; t <= 3; t++)
			if (!strcmp(tname, type_names[t]))
				break;
		if (t > 3)
			continue;
		int o = !strcmp(op, "query");

		if (!strcmp(path, "core-single"))
			core_ns[t][o][0] = x100 / 100.0;
		else if (!strcmp(path, "kapi-single"))
			kapi_ns[t][o] = x100 / 100.0;
		for (k = 0; k < 3; k++) {
			char want[32];

			snprintf(want, sizeof(want), "core-batch%u", batch_sizes[k]);
			if (!strcmp(path, want))
				core_ns[t][o][k + 1] = x100 / 100.0;
		}
	}
	fclose(f);
}

static void print_table(FILE *out, uint32_t n)
{
	static const char *const paths[NPATHS] = { "single", "batch 16", "batch 256",
						    "batch 4096" };
	static const char *const ops[2] = { "add", "query" };
	uint32_t t, o, p;

	fprintf(out, "# /dev/sieve vs the cores called in the kernel: %u 8-byte keys, "
		"filters sized for them at 1%%, ns per key\n", n);
	fprintf(out, "# each the fastest of %d runs; ratio = device ns / core ns of the same "
		"shape (single call, or the same batch size); kapi = sieve_add/sieve_contains\n",
		REPS);
	fprintf(out, "# %-8s %-6s %-11s %10s %10s %7s\n", "type", "op", "path", "device",
		"core", "ratio");
	for (t = 1; t <= 3; t++)
		for (o = 0; o < 2; o++) {
			for (p = 0; p < NPATHS; p++)
				fprintf(out, "  %-8s %-6s %-11s %10.1f %10.1f %6.2fx\n",
					type_names[t], ops[o], paths[p], dev_ns[t][o][p],
					core_ns[t][o][p],
					core_ns[t][o][p] > 0 ? dev_ns[t][o][p] / core_ns[t][o][p] : 0);
			fprintf(out, "  %-8s %-6s %-11s %10.1f %10.1f %6.2fx\n", type_names[t],
				ops[o], "kapi single", kapi_ns[t][o], core_ns[t][o][0],
				core_ns[t][o][0] > 0 ? kapi_ns[t][o] / core_ns[t][o][0] : 0);
		}
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000, i, t, o, p;
	struct keys ks = { .n = n };
	char path[256];
	const char *outdir = getenv("SIEVE_OUT");
	bool complete = true;
	FILE *f;
	int fd;

	ktap_begin("bench");
	fd = dev_open(O_RDWR);
	ks.k = malloc(8ULL * n);
	ks.lens = malloc(4ULL * 4096);
	ks.results = malloc(4096);
	for (i = 0; i < n; i++)
		ks.k[i] = i * 0x9E3779B97F4A7C15ULL + 1;	/* little endian already */
	for (i = 0; i < 4096; i++)
		ks.lens[i] = 8;
	for (t = 1; t <= 3; t++) {
		ktap_ok(device_runs(fd, t, &ks), "%s: every device call succeeded", type_names[t]);
		ktap_ok(kernel_runs(fd, t, n), "%s: the kernel half ran", type_names[t]);
	}
	parse_kernel_results();
	for (t = 1; t <= 3; t++)
		for (o = 0; o < 2; o++) {
			for (p = 0; p < NPATHS; p++)
				complete &= core_ns[t][o][p] > 0;
			complete &= kapi_ns[t][o] > 0;
		}
	ktap_ok(complete, "every kernel figure came back");
	print_table(stdout, n);
	snprintf(path, sizeof(path), "%s/bench.txt", outdir ? outdir : "/tmp");
	f = fopen(path, "w");
	if (f) {
		print_table(f, n);
		fclose(f);
	}
	close(fd);
	return ktap_end();
}
