// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/sieve and the reports behind it, with enough filters that the file
 * is many pages long: every filter is listed once, in id order, and its
 * line says what INFO says; a whole read, INFO on every filter and
 * `sieve filter list` each read a Bloom-type table once per layer (the
 * test build's table_scans parameter counts those reads), however many
 * read() calls the file takes; a read racing destroys and creates never
 * lists a filter twice nor misses one that lives through it. Prints KTAP,
 * with the time a whole read and `sieve filter list` take as diagnostics.
 *
 * Usage: sieve_procfs_test [bench]
 * With "bench", only the timings, best of 9 (tests/device/procfs_bench.sh).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dev.h"

#define FPP_1PCT	10000000U
#define NFILTERS	200
/* 120 KB tables: reading them is most of what a report costs. */
#define CAPACITY	100000
#define NCHURN		40
#define RACE_READS	30

static int fd;
static uint32_t ids[NFILTERS];
static char names[NFILTERS][SIEVE_NAME_MAX];

/* One line of /proc/sieve. */
struct line {
	uint32_t id, flags, layers, fill_ppm, fpr_ppb;
	char name[SIEVE_NAME_MAX], type[16];
	unsigned long long items, capacity, memory, inserted, deleted, queries, hits;
};

/* A whole read of /proc/sieve, @chunk bytes per read(); malloc'd, NUL-ended. */
static char *read_proc(size_t chunk, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t got;
	int pfd = open("/proc/sieve", O_RDONLY);

	if (pfd < 0 || !buf) {
		free(buf);
		if (pfd >= 0)
			close(pfd);
		return NULL;
	}
	for (;;) {
		if (n + chunk > cap) {
			char *grown = realloc(buf, 2 * cap + 1);

			if (!grown)
				break;
			buf = grown;
			cap *= 2;
		}
		got = read(pfd, buf + n, chunk);
		if (got <= 0)
			break;
		n += got;
	}
	close(pfd);
	if (got < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/*
 * The filter lines of @text into @out (room @max), after checking the
 * header comes first, the totals last, and every line in between parses
 * with ids strictly increasing. -1 if any of that fails.
 */
static int parse_proc(char *text, struct line *out, int max)
{
	char *save = NULL, *l = strtok_r(text, "\n", &save);
	int n = 0;
	bool totals = false;

	if (!l || strncmp(l, "# id name type", 14))
		return -1;
	while ((l = strtok_r(NULL, "\n", &save))) {
		struct line *x = &out[n];

		if (totals)
			return -1;	/* something after the totals */
		if (!strncmp(l, "# filters ", 10)) {
			totals = true;
			continue;
		}
		if (n == max || sscanf(l, "%u %31s %15s %x %u %llu %llu %u %u %llu %llu %llu %llu %llu",
				       &x->id, x->name, x->type, &x->flags, &x->layers, &x->items,
				       &x->capacity, &x->fill_ppm, &x->fpr_ppb, &x->memory,
				       &x->inserted, &x->deleted, &x->queries, &x->hits) != 14)
			return -1;
		if (n && x->id <= out[n - 1].id)
			return -1;
		n++;
	}
	return totals ? n : -1;
}

/* Whole-table reads that reports of the filters in @lines make: one a layer. */
static long table_reads(const struct line *lines, int n)
{
	long sum = 0;
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(lines[i].type, "cuckoo"))
			sum += lines[i].layers;
	return sum;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int make_filters(void)
{
	int i, err = 0;

	for (i = 0; i < NFILTERS && !err; i++) {
		/* Mostly Bloom, some blocked, one cuckoo, one scalable of several layers. */
		uint32_t type = i % 5 == 4 ? SIEVE_BLOCKED_BLOOM : SIEVE_BLOOM;
		uint32_t flags = 0;
		uint64_t cap = CAPACITY;
		struct keyset *ks;

		if (i == 7)
			type = SIEVE_CUCKOO;
		if (i == 11) {
			flags = SIEVE_CREATE_SCALABLE;
			cap = 256;
		}
		snprintf(names[i], sizeof(names[i]), "pf.%03d", i);
		err = sv_create_simple(fd, names[i], type, cap, FPP_1PCT, flags, &ids[i]);
		if (err)
			break;
		/* Different contents, so a line mixed up with another shows. */
		ks = keyset_make(names[i], 0, i == 11 ? 2000 : 100 * (i % 7 + 1));
		err = ks ? sv_batch(fd, ids[i], SIEVE_BATCH_ADD, 0, ks, NULL) : -ENOMEM;
		keyset_free(ks);
	}
	ktap_ok(!err, "create %d filters of %d keys' capacity (%s)", NFILTERS, CAPACITY,
		errname(err));
	return err;
}

/* Each filter once, as INFO reports it. */
static void t_each_once(void)
{
	static struct line lines[NFILTERS + 64];
	int i, j, n, seen, dup = 0, missing = 0, differ = 0;
	size_t len = 0;
	char *text = read_proc(700, &len);

	n = text ? parse_proc(text, lines, NFILTERS + 64) : -1;
	ktap_ok(n >= NFILTERS, "/proc/sieve in 700-byte reads: %zu bytes, header, %d filter lines by increasing id, totals",
		len, n);
	for (i = 0; i < NFILTERS; i++) {
		struct sieve_info info;

		seen = 0;
		for (j = 0; j < n; j++) {
			if (strcmp(lines[j].name, names[i]))
				continue;
			seen++;
			if (sv_info(fd, ids[i], &info) || lines[j].id != ids[i] ||
			    lines[j].layers != info.nlayers || lines[j].items != info.items ||
			    lines[j].capacity != info.capacity || lines[j].fill_ppm != info.fill_ppm ||
			    lines[j].fpr_ppb != info.fpr_ppb || lines[j].memory != info.memory_bytes ||
			    lines[j].inserted != info.inserted) {
				if (differ++ < 3)
					diag("%s: /proc/sieve says layers %u items %llu fill %u fpr %u, INFO %u %llu %u %u",
					     names[i], lines[j].layers, lines[j].items, lines[j].fill_ppm,
					     lines[j].fpr_ppb, info.nlayers, (unsigned long long)info.items,
					     info.fill_ppm, info.fpr_ppb);
			}
		}
		dup += seen > 1;
		missing += seen == 0;
	}
	ktap_ok(!dup && !missing, "every filter listed once (%d twice, %d missing)", dup, missing);
	ktap_ok(!differ, "every line as INFO says (%d differ)", differ);
	free(text);
}

/* One read of each Bloom-type table per layer, for each way of listing. */
static void t_one_read_per_table(void)
{
	static struct line lines[NFILTERS + 64];
	long long before = param_read("table_scans"), after;
	long want = 0;
	size_t len;
	char *text;
	int i, n;

	if (before < 0) {
		ktap_skip("not a test build of sieve.ko (no table_scans)", "one table read per layer");
		return;
	}
	text = read_proc(700, &len);
	after = param_read("table_scans");
	n = text ? parse_proc(text, lines, NFILTERS + 64) : -1;
	want = n > 0 ? table_reads(lines, n) : -1;
	ktap_ok(n > 0 && after - before == want,
		"/proc/sieve in %zu bytes, 700 at a time: %lld table reads (want %ld, one a layer)",
		len, after - before, want);
	free(text);

	before = param_read("table_scans");
	text = read_proc(1 << 17, &len);
	after = param_read("table_scans");
	ktap_ok(text && after - before == want,
		"/proc/sieve, 128 KiB at a time: %lld table reads (want %ld)", after - before, want);
	free(text);

	before = param_read("table_scans");
	for (i = 0; i < n; i++) {
		struct sieve_info info;

		sv_info(fd, lines[i].id, &info);
	}
	after = param_read("table_scans");
	ktap_ok(after - before == want, "INFO on every filter: %lld table reads (want %ld)",
		after - before, want);

	if (access("/tests/bin/sieve", X_OK)) {
		ktap_skip("no CLI in this VM", "sieve filter list: one table read per layer");
		return;
	}
	before = param_read("table_scans");
	i = system("sieve filter list >/dev/null");
	after = param_read("table_scans");
	ktap_ok(i == 0 && after - before == want,
		"sieve filter list: %lld table reads (want %ld)", after - before, want);
}

/*
 * What listing costs, best of @reps (software emulation: compare runs of
 * one VM only): a whole read of /proc/sieve, INFO on every filter as
 * `sieve filter list` makes it, and the CLI itself (a fork and exec too).
 */
static void t_timing(int reps)
{
	double best_proc = 1e30, best_info = 1e30, best_list = 1e30, t0, t;
	bool cli = !access("/tests/bin/sieve", X_OK);
	size_t len = 0;
	int r, i;

	for (r = 0; r < reps; r++) {
		char *text;

		t0 = now_ms();
		text = read_proc(1 << 17, &len);
		t = now_ms() - t0;
		best_proc = t < best_proc ? t : best_proc;
		free(text);
		t0 = now_ms();
		for (i = 0; i < NFILTERS; i++) {
			struct sieve_info info;

			sv_info(fd, ids[i], &info);
		}
		t = now_ms() - t0;
		best_info = t < best_info ? t : best_info;
		if (cli) {
			t0 = now_ms();
			if (system("sieve filter list >/dev/null"))
				cli = false;
			t = now_ms() - t0;
			best_list = t < best_list ? t : best_list;
		}
	}
	diag("timing, %d filters (%d keys' capacity each, %zu bytes of /proc/sieve), best of %d:",
	     NFILTERS, CAPACITY, len, reps);
	diag("  cat /proc/sieve          %8.1f ms", best_proc);
	diag("  INFO on every filter     %8.1f ms", best_info);
	if (best_list < 1e30)
		diag("  sieve filter list        %8.1f ms", best_list);
}

/* ---- a read racing destroys and creates ---------------------------------- */

static volatile int race_stop;

/* Destroys and creates filters over and over: each new one gets a new id. */
static void *churn(void *arg)
{
	uint32_t cid[NCHURN] = { 0 };
	unsigned long rounds = 0;
	char name[SIEVE_NAME_MAX];
	int k;

	while (!race_stop) {
		for (k = 0; k < NCHURN && !race_stop; k++) {
			if (cid[k])
				sv_destroy(fd, cid[k]);
			cid[k] = 0;
			snprintf(name, sizeof(name), "pf.churn.%d", k);
			sv_create_simple(fd, name, k % 2 ? SIEVE_BLOCKED_BLOOM : SIEVE_BLOOM, 2000,
					 FPP_1PCT, 0, &cid[k]);
		}
		rounds++;
	}
	for (k = 0; k < NCHURN; k++)
		if (cid[k])
			sv_destroy(fd, cid[k]);
	*(unsigned long *)arg = rounds;
	return NULL;
}

static void t_race_destroy(void)
{
	static struct line lines[NFILTERS + NCHURN + 64];
	int r, i, j, bad_parse = 0, dup = 0, missing = 0;
	unsigned long rounds = 0;
	pthread_t th;

	race_stop = 0;
	if (pthread_create(&th, NULL, churn, &rounds)) {
		ktap_ok(false, "start the destroy/create thread");
		return;
	}
	for (r = 0; r < RACE_READS; r++) {
		size_t len;
		/* Small reads: many starts and stops, each a chance to race. */
		char *text = read_proc(300 + 97 * r, &len);
		int n = text ? parse_proc(text, lines, NFILTERS + NCHURN + 64) : -1;

		if (n < 0) {
			bad_parse++;
			free(text);
			continue;
		}
		for (i = 0; i < NFILTERS; i++) {
			int seen = 0;

			for (j = 0; j < n; j++)
				seen += !strcmp(lines[j].name, names[i]) && lines[j].id == ids[i];
			dup += seen > 1;
			missing += seen == 0;
		}
		/* A churned name may come twice (old id, new id); an id never. */
		free(text);
	}
	race_stop = 1;
	pthread_join(th, NULL);
	ktap_ok(!bad_parse, "%d reads racing %lu rounds of %d destroys and creates: every read whole, ids increasing (%d not)",
		RACE_READS, rounds, NCHURN, bad_parse);
	ktap_ok(!dup && !missing, "every surviving filter listed once in every read (%d twice, %d missing)",
		dup, missing);
}

int main(int argc, char **argv)
{
	bool bench = argc > 1 && !strcmp(argv[1], "bench");
	int i;

	ktap_begin("procfs");
	fd = dev_open(O_RDWR);
	if (fd < 0)
		return 2;
	if (bench) {
		if (!make_filters())
			t_timing(9);
	} else if (!make_filters()) {
		t_each_once();
		t_one_read_per_table();
		t_timing(3);
		t_race_destroy();
	}
	for (i = 0; i < NFILTERS; i++)
		if (ids[i])
			sv_destroy(fd, ids[i]);
	return ktap_end();
}
