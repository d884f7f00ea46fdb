// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/sieve under concurrency: PROCS processes of WORKERS threads each mix
 * add, query and delete (single and batched) on one cuckoo and one Bloom
 * filter for SECONDS seconds. Each thread owns its keys, so it can assert
 * that every key it added and did not delete answers present at all
 * times. Meanwhile one thread creates an ephemeral filter, uses it and
 * closes its file (destroying it) in a loop, another looks that filter up
 * and uses it by id while it comes and goes, another exports the cuckoo
 * filter and imports the copy, and another merges a filter into the Bloom
 * one (adds running meanwhile must be kept). Afterwards the counters must agree
 * with what the threads did. Prints KTAP.
 *
 * Usage: sieve_conc_test [SECONDS]    (default 10)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dev.h"

#define PROCS		2
#define WORKERS		4
/* Live keys per thread in the cuckoo filter: 8 x 180 = 1440 of 2048 slots. */
#define WINDOW		180
#define KEYLEN		24
#define MIN_EPH_CYCLES	10
#define EXTRA_FACTOR	6

struct thread_stats {
	uint64_t ops;
	uint64_t errors;
	uint64_t false_negatives;
	uint64_t cuckoo_queries, bloom_queries;
	uint64_t cuckoo_adds, cuckoo_deletes;
	char first_error[160];
};

struct shared {
	struct thread_stats worker[PROCS][WORKERS];
	struct thread_stats eph, prober, exporter, merger;
	uint64_t eph_cycles, probe_hits, exports, merges;
};

static struct shared *sh;
static uint32_t cuckoo_id, bloom_id, bloom_src_id;
static double seconds = 10;
static struct timespec t_end, t_hard_end;

static bool before(const struct timespec *now, const struct timespec *t)
{
	return now->tv_sec < t->tv_sec || (now->tv_sec == t->tv_sec && now->tv_nsec < t->tv_nsec);
}

/*
 * Every thread runs for SECONDS, and on until the ephemeral filter has come
 * and gone MIN_EPH_CYCLES times (a debug kernel under emulation is slow),
 * but never past EXTRA_FACTOR times SECONDS.
 */
static bool time_left(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (before(&now, &t_end))
		return true;
	return __atomic_load_n(&sh->eph_cycles, __ATOMIC_RELAXED) < MIN_EPH_CYCLES &&
	       before(&now, &t_hard_end);
}

static void fail(struct thread_stats *st, const char *what, int err)
{
	if (!st->errors++)
		snprintf(st->first_error, sizeof(st->first_error), "%s -> %s", what, errname(err));
}

static uint32_t keyname(char *buf, int g, uint64_t i)
{
	return snprintf(buf, KEYLEN + 1, "c%d-%llu", g, (unsigned long long)i);
}

/* One batch of @n own keys (i0 .. i0+n-1 modulo nothing: consecutive). */
static struct keyset *own_keys(int g, uint64_t i0, uint32_t n)
{
	char prefix[16];

	snprintf(prefix, sizeof(prefix), "c%d", g);
	return keyset_make(prefix, i0, n);
}

/* Cuckoo: a sliding window of live keys [lo, hi). */
static void cuckoo_step(int fd, int g, struct thread_stats *st, uint64_t *lo, uint64_t *hi)
{
	char key[KEYLEN + 1];
	uint32_t len, r;
	int err;

	if (*hi - *lo >= WINDOW) {
		if (st->ops % 7 == 0) {
			/* batch delete of the 16 oldest */
			struct keyset *ks = own_keys(g, *lo, 16);
			struct sieve_batch b;

			err = sv_batch(fd, cuckoo_id, SIEVE_BATCH_DELETE, 0, ks, &b);
			if (err || b.present != 16) {
				fail(st, "cuckoo batch delete of own keys", err ? err : -ENOENT);
				st->false_negatives += err ? 0 : 16 - b.present;
			}
			st->cuckoo_deletes += b.present;
			*lo += b.done;
			keyset_free(ks);
		} else {
			len = keyname(key, g, *lo);
			err = sv_delete(fd, cuckoo_id, key, len, &r);
			if (err || r != 1) {
				fail(st, "cuckoo delete of an own key", err ? err : -ENOENT);
				st->false_negatives += !err;
			}
			st->cuckoo_deletes += !err && r;
			(*lo)++;
		}
	}
	if (st->ops % 5 == 0) {
		struct keyset *ks = own_keys(g, *hi, 8);
		struct sieve_batch b;

		err = sv_batch(fd, cuckoo_id, SIEVE_BATCH_ADD, 0, ks, &b);
		if (err)
			fail(st, "cuckoo batch add", err);
		st->cuckoo_adds += b.done;
		*hi += b.done;
		keyset_free(ks);
	} else {
		len = keyname(key, g, *hi);
		err = sv_add(fd, cuckoo_id, key, len, 0, &r);
		if (err)
			fail(st, "cuckoo add", err);
		else {
			st->cuckoo_adds++;
			(*hi)++;
		}
	}
	/* every live key, now */
	if (st->ops % 8 == 0 && *hi > *lo) {
		struct keyset *ks = own_keys(g, *lo, *hi - *lo);
		long absent = sv_count_absent(fd, cuckoo_id, ks);

		st->cuckoo_queries += ks->n;
		if (absent) {
			fail(st, "cuckoo query of live own keys", absent < 0 ? absent : -ENOENT);
			st->false_negatives += absent > 0 ? absent : 0;
		}
		keyset_free(ks);
	} else if (*hi > *lo) {
		len = keyname(key, g, *lo + st->ops % (*hi - *lo));
		err = sv_query(fd, cuckoo_id, key, len, &r);
		st->cuckoo_queries += !err;
		if (err || r != 1) {
			fail(st, "cuckoo single query of a live own key", err ? err : -ENOENT);
			st->false_negatives += !err;
		}
	}
}

/* Bloom: adds only; [0, n) are in. */
static void bloom_step(int fd, int g, struct thread_stats *st, uint64_t *n)
{
	struct keyset *ks = own_keys(g + 100, *n, 32);
	struct sieve_batch b;
	char key[KEYLEN + 1];
	uint32_t len, r;
	int err;

	err = sv_batch(fd, bloom_id, SIEVE_BATCH_ADD, 0, ks, &b);
	if (err)
		fail(st, "bloom batch add", err);
	*n += b.done;
	keyset_free(ks);
	if (*n) {
		len = keyname(key, g + 100, (st->ops * 7919) % *n);
		err = sv_query(fd, bloom_id, key, len, &r);
		st->bloom_queries += !err;
		if (err || r != 1) {
			fail(st, "bloom single query of an own key", err ? err : -ENOENT);
			st->false_negatives += !err;
		}
	}
	if (st->ops % 16 == 0 && *n) {
		uint64_t first = *n > 256 ? *n - 256 : 0;
		long absent;

		ks = own_keys(g + 100, first, *n - first);
		absent = sv_count_absent(fd, bloom_id, ks);
		st->bloom_queries += ks->n;
		if (absent) {
			fail(st, "bloom batch query of own keys", absent < 0 ? absent : -ENOENT);
			st->false_negatives += absent > 0 ? absent : 0;
		}
		keyset_free(ks);
	}
}

struct worker_arg {
	int fd, proc, idx;
};

static void *worker(void *p)
{
	struct worker_arg *a = p;
	int g = a->proc * WORKERS + a->idx;
	struct thread_stats *st = &sh->worker[a->proc][a->idx];
	uint64_t lo = 0, hi = 0, nbloom = 0;

	while (time_left()) {
		cuckoo_step(a->fd, g, st, &lo, &hi);
		bloom_step(a->fd, g, st, &nbloom);
		st->ops++;
	}
	/* the final word: every live key present, then delete them all */
	if (hi > lo) {
		struct keyset *ks = own_keys(g, lo, hi - lo);
		long absent = sv_count_absent(a->fd, cuckoo_id, ks);
		struct sieve_batch b;
		int err;

		st->cuckoo_queries += ks->n;
		if (absent) {
			fail(st, "final cuckoo query of live own keys", absent < 0 ? absent : -ENOENT);
			st->false_negatives += absent > 0 ? absent : 0;
		}
		err = sv_batch(a->fd, cuckoo_id, SIEVE_BATCH_DELETE, 0, ks, &b);
		st->cuckoo_deletes += b.present;
		if (err || b.present != ks->n)
			fail(st, "final cuckoo delete of own keys", err ? err : -ENOENT);
		keyset_free(ks);
	}
	return NULL;
}

/* Creates an ephemeral filter, uses it, closes its file: over and over. */
static void *ephemeral_loop(void *p)
{
	struct thread_stats *st = &sh->eph;
	struct keyset *ks = keyset_make("eph", 0, 64);

	while (time_left()) {
		int efd = dev_open(O_RDWR);
		uint32_t id = 0, type = sh->eph_cycles % 2 ? SIEVE_CUCKOO : SIEVE_BLOOM;
		int err = sv_create_simple(efd, "conc.eph", type, 1000, 10000000,
					   SIEVE_CREATE_EPHEMERAL, &id);
		long absent;

		if (err) {
			fail(st, "create of the ephemeral filter", err);
		} else {
			err = sv_batch(efd, id, SIEVE_BATCH_ADD, 0, ks, NULL);
			absent = sv_count_absent(efd, id, ks);
			if (err || absent)
				fail(st, "ephemeral add then query", err ? err : -ENOENT);
		}
		close(efd);
		sh->eph_cycles++;
		st->ops++;
	}
	keyset_free(ks);
	return NULL;
}

/* Finds the ephemeral filter by name and uses it while it comes and goes. */
static void *prober_loop(void *p)
{
	struct thread_stats *st = &sh->prober;
	/* its own file: its exports must not replace the exporter's */
	int fd = dev_open(O_RDWR);

	while (time_left()) {
		struct sieve_info info;
		uint32_t id, r;
		int err = sv_open_name(fd, "conc.eph", &id);

		st->ops++;
		/* Between two lives of the filter: let its creator run. */
		if (err == -ENOENT) {
			sched_yield();
			continue;
		}
		if (err) {
			fail(st, "open of the ephemeral filter", err);
			continue;
		}
		/* IF_ABSENT: a cuckoo filter takes at most 8 copies of a key */
		err = sv_add(fd, id, "probe", 5, SIEVE_ADD_IF_ABSENT, &r);
		if (err && err != -ENOENT)
			fail(st, "add to the ephemeral filter", err);
		err = sv_query(fd, id, "eph-1", 5, &r);
		if (err && err != -ENOENT)
			fail(st, "query of the ephemeral filter", err);
		sh->probe_hits += !err && r;
		err = sv_info(fd, id, &info);
		if (err && err != -ENOENT)
			fail(st, "info of the ephemeral filter", err);
		{
			struct sieve_export e = { .size = sizeof(e), .id = id };

			/* a snapshot held by this file while its filter goes away */
			err = sv_ioctl(fd, SIEVE_IOC_EXPORT, &e);
			if (err && err != -ENOENT)
				fail(st, "export of the ephemeral filter", err);
		}
	}
	close(fd);
	return NULL;
}

/* Exports the cuckoo filter while it changes; the copy must import. */
static void *exporter_loop(void *p)
{
	struct thread_stats *st = &sh->exporter;
	int fd = *(int *)p;

	while (time_left()) {
		uint8_t *snap = NULL;
		uint64_t len = 0;
		uint32_t id = 0;
		int err = sv_export_all(fd, cuckoo_id, 4096, &snap, &len);

		if (err) {
			fail(st, "export of the busy cuckoo filter", err);
		} else {
			err = sv_import_all(fd, "conc.copy", 0, snap, len, 65536, &id);
			if (err || !id)
				fail(st, "import of a snapshot taken under load", err);
			else
				sv_destroy(fd, id);
		}
		free(snap);
		sh->exports++;
		st->ops++;
		usleep(100000);
	}
	return NULL;
}

/* ORs another filter into the workers' Bloom filter while they add to it. */
static void *merger_loop(void *p)
{
	struct thread_stats *st = &sh->merger;
	int fd = *(int *)p;

	while (time_left()) {
		int err = sv_merge(fd, bloom_id, bloom_src_id);

		if (err)
			fail(st, "merge into the busy Bloom filter", err);
		sh->merges++;
		st->ops++;
		usleep(20000);
	}
	return NULL;
}

static void run_process(int proc)
{
	pthread_t t[WORKERS + 3];
	struct worker_arg a[WORKERS];
	int fd = dev_open(O_RDWR), i, n = 0;

	for (i = 0; i < WORKERS; i++) {
		a[i] = (struct worker_arg){ .fd = fd, .proc = proc, .idx = i };
		pthread_create(&t[n++], NULL, worker, &a[i]);
	}
	if (proc == 0) {
		pthread_create(&t[n++], NULL, ephemeral_loop, NULL);
	} else {
		pthread_create(&t[n++], NULL, prober_loop, &fd);
		pthread_create(&t[n++], NULL, exporter_loop, &fd);
		pthread_create(&t[n++], NULL, merger_loop, &fd);
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	close(fd);
}

static void report(const char *who, struct thread_stats *st)
{
	ktap_ok(st->errors == 0, "%s: %llu rounds, %llu errors%s%s", who,
		(unsigned long long)st->ops, (unsigned long long)st->errors,
		st->errors ? ", first: " : "", st->first_error);
}

int main(int argc, char **argv)
{
	struct sieve_create c;
	struct sieve_info ci, bi;
	uint64_t cq = 0, bq = 0, adds = 0, dels = 0, fneg = 0;
	pid_t pids[PROCS];
	int fd, p, w, err, st;

	if (argc > 1)
		seconds = atof(argv[1]);
	ktap_begin("concurrency");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(sh, 0, sizeof(*sh));
	fd = dev_open(O_RDWR);
	/* 512 buckets of 16-bit fingerprints: 2048 slots, kept ~70% full */
	sv_create_arg(&c, "conc.cuckoo", SIEVE_CUCKOO, 0, 0);
	c.flags = SIEVE_CREATE_GEOMETRY;
	c.geo = (struct sieve_geometry){ .type = SIEVE_CUCKOO, .nbuckets = 512, .fp_bits = 16 };
	err = sv_create(fd, &c);
	cuckoo_id = c.id;
	err = err ? err : sv_create_simple(fd, "conc.bloom", SIEVE_BLOOM, 1000000, 10000000, 0,
					   &bloom_id);
	/* the same size and seed: mergeable into conc.bloom */
	err = err ? err : sv_create_simple(fd, "conc.bloomsrc", SIEVE_BLOOM, 1000000, 10000000, 0,
					   &bloom_src_id);
	if (!err) {
		struct keyset *ks = keyset_make("src", 0, 5000);

		err = sv_batch(fd, bloom_src_id, SIEVE_BATCH_ADD, 0, ks, NULL);
		keyset_free(ks);
	}
	if (err) {
		printf("Bail out! cannot create the filters: %s\n", errname(err));
		return 1;
	}
	diag("%d processes x %d threads for %.0f s, plus ephemeral, prober, exporter and merger threads",
	     PROCS, WORKERS, seconds);
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	t_hard_end = t_end;
	t_end.tv_sec += (time_t)seconds;
	t_hard_end.tv_sec += (time_t)(seconds * EXTRA_FACTOR);
	for (p = 0; p < PROCS; p++) {
		pids[p] = fork();
		if (pids[p] == 0) {
			run_process(p);
			_exit(0);
		}
	}
	for (p = 0; p < PROCS; p++) {
		waitpid(pids[p], &st, 0);
		ktap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process %d exited cleanly (status %#x)",
			p, st);
	}
	for (p = 0; p < PROCS; p++)
		for (w = 0; w < WORKERS; w++) {
			struct thread_stats *t = &sh->worker[p][w];
			char who[32];

			snprintf(who, sizeof(who), "worker %d.%d", p, w);
			report(who, t);
			cq += t->cuckoo_queries;
			bq += t->bloom_queries;
			adds += t->cuckoo_adds;
			dels += t->cuckoo_deletes;
			fneg += t->false_negatives;
		}
	report("ephemeral create/close loop", &sh->eph);
	report("prober of the ephemeral filter", &sh->prober);
	report("exporter of the busy cuckoo filter", &sh->exporter);
	report("merger into the busy Bloom filter", &sh->merger);
	ktap_ok(fneg == 0, "no false negative: %llu keys a thread owned and had not deleted "
		"answered absent", (unsigned long long)fneg);
	ktap_ok(sh->eph_cycles >= MIN_EPH_CYCLES, "ephemeral filter created and destroyed %llu times",
		(unsigned long long)sh->eph_cycles);
	err = sv_info(fd, cuckoo_id, &ci);
	ktap_ok(!err && ci.inserted - ci.deleted == ci.items && ci.items == 0,
		"cuckoo counters consistent: inserted %llu - deleted %llu == items %llu (0: every "
		"thread deleted its keys)", (unsigned long long)ci.inserted,
		(unsigned long long)ci.deleted, (unsigned long long)ci.items);
	ktap_ok(ci.inserted == adds && ci.deleted == dels,
		"cuckoo counters match the threads: inserted %llu (threads %llu), deleted %llu "
		"(threads %llu)", (unsigned long long)ci.inserted, (unsigned long long)adds,
		(unsigned long long)ci.deleted, (unsigned long long)dels);
	ktap_ok(ci.queries == cq && ci.hits == cq - fneg,
		"cuckoo queries counted: %llu (threads %llu), hits %llu",
		(unsigned long long)ci.queries, (unsigned long long)cq, (unsigned long long)ci.hits);
	err = sv_info(fd, bloom_id, &bi);
	ktap_ok(!err && bi.queries == bq && bi.hits == bq - fneg,
		"bloom queries counted: %llu (threads %llu), hits %llu",
		(unsigned long long)bi.queries, (unsigned long long)bq, (unsigned long long)bi.hits);
	diag("cuckoo: %llu adds, %llu deletes, %llu queries; bloom: %llu queries, %llu items; "
	     "%llu exports, %llu merges", (unsigned long long)adds, (unsigned long long)dels,
	     (unsigned long long)cq, (unsigned long long)bq, (unsigned long long)bi.items,
	     (unsigned long long)sh->exports, (unsigned long long)sh->merges);
	sv_destroy(fd, cuckoo_id);
	sv_destroy(fd, bloom_id);
	sv_destroy(fd, bloom_src_id);
	err = sv_open_name(fd, "conc.eph", NULL);
	ktap_ok(err == -ENOENT, "no ephemeral filter left behind (OPEN -> %s)", errname(err));
	close(fd);
	return ktap_end();
}
