// SPDX-License-Identifier: GPL-2.0
/*
 * SIEVE_IOC_EXCHANGE under readers: threads query filter A for keys that
 * both A's old and new tables hold, while another thread exchanges A and B
 * over and over; not one of those keys may answer absent. Prints KTAP.
 *
 *   swap      each type (cuckoo: tables of different capacities, with
 *             adds and deletes of other keys on both filters meanwhile),
 *             and a scalable pair of 1 and 4 layers: EXCHANGES exchanges
 *   rebuild   A's table replaced EXCHANGES / 4 times by a fresh filter B,
 *             filled, exchanged and destroyed at once while the readers
 *             go on (a use-after-free shows on the debug kernel's KASAN)
 *   memory    afterwards the module holds A's memory and nothing more
 *
 * The ABI's own cases (what moves, what stays, the errors) are in
 * abi_test.c and bad_test.c; XDP programs reading through an exchange are
 * in tests/kfunc.
 *
 * Usage: sieve_exchange_test [EXCHANGES]    (default 200)
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
#define READERS		3
/* Keys both tables hold, which the readers ask for. */
#define COMMON_KEYS	400

static int fd;
static unsigned int exchanges = 200;
static volatile bool stop;

struct reader {
	pthread_t t;
	int idx;
	uint32_t id;
	/* its own copy: a batch writes its results into the keyset */
	struct keyset *keys;
	unsigned long rounds, misses, errors;
};

/* Asks A for the common keys, by batch and one by one, until told to stop. */
static void *reader_loop(void *p)
{
	struct reader *r = p;
	uint32_t i = r->idx, len, res;

	while (!stop) {
		long absent = sv_count_absent(fd, r->id, r->keys);

		if (absent < 0)
			r->errors++;
		else
			r->misses += absent;
		/* a stride of single queries: the path the in-kernel API takes */
		for (int j = 0; j < 16; j++, i += 37) {
			const uint8_t *k = keyset_key(r->keys, i % r->keys->n, &len);

			if (sv_query(fd, r->id, k, len, &res))
				r->errors++;
			else
				r->misses += !res;
		}
		r->rounds++;
	}
	return NULL;
}

struct churner {
	pthread_t t;
	uint32_t id;
	char prefix[16];
	unsigned long writes, errors;
};

/*
 * A churner's add and delete land on one table: an exchange between them
 * would send the delete to a table without the key, where a cuckoo delete
 * takes any copy of a colliding fingerprint, another key's (a false
 * negative of the test's making, which one CI run met). The exchanges
 * wait for pairs in flight; readers do not take it.
 */
static pthread_rwlock_t pair_lock;

/* Cuckoo: adds a key of its own to one filter and deletes it again, moving fingerprints. */
static void *churn_loop(void *p)
{
	struct churner *c = p;
	uint64_t i = 0;
	char key[48];
	uint32_t len, res;

	while (!stop) {
		len = snprintf(key, sizeof(key), "%s-%llu", c->prefix, (unsigned long long)i++);
		pthread_rwlock_rdlock(&pair_lock);
		c->errors += sv_add(fd, c->id, key, len, 0, &res) != 0;
		c->errors += sv_delete(fd, c->id, key, len, &res) != 0;
		pthread_rwlock_unlock(&pair_lock);
		c->writes++;
	}
	return NULL;
}

/* Readers of filter @id, each asking for the common keys. */
static void readers_start(struct reader *r, uint32_t id)
{
	stop = false;
	for (int i = 0; i < READERS; i++) {
		r[i] = (struct reader){ .idx = i * 101, .id = id,
					.keys = keyset_make("xc", 0, COMMON_KEYS) };
		pthread_create(&r[i].t, NULL, reader_loop, &r[i]);
	}
}

/* Stops readers and churners; sums the readers' counts into @sum. */
static void threads_stop(struct reader *r, struct churner *c, int nc, struct reader *sum)
{
	stop = true;
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < READERS; i++) {
		pthread_join(r[i].t, NULL);
		keyset_free(r[i].keys);
		sum->rounds += r[i].rounds;
		sum->misses += r[i].misses;
		sum->errors += r[i].errors;
	}
	for (int i = 0; i < nc; i++)
		pthread_join(c[i].t, NULL);
}

/* A filter of @type holding the common keys and @extra ones of its own. */
static uint32_t make_filter(const char *name, uint32_t type, uint64_t capacity, uint32_t flags,
			    struct keyset *common, struct keyset *extra)
{
	uint32_t id = 0;
	int err = sv_create_simple(fd, name, type, capacity, FPP_1PCT, flags, &id);

	err = err ?: sv_batch(fd, id, SIEVE_BATCH_ADD, 0, common, NULL);
	if (extra->n)
		err = err ?: sv_batch(fd, id, SIEVE_BATCH_ADD, 0, extra, NULL);
	if (err)
		diag("filter %s: %s", name, errname(err));
	return err ? 0 : id;
}

/*
 * A and B hold the common keys and others of their own; readers ask A
 * while A and B are exchanged EXCHANGES times (cuckoo: while writers move
 * fingerprints in both).
 */
static void swap_case(const char *tn, uint32_t type, uint64_t cap_a, uint64_t cap_b,
		      uint32_t flags, uint32_t extra_a, uint32_t extra_b)
{
	struct keyset *common = keyset_make("xc", 0, COMMON_KEYS);
	struct keyset *ka = keyset_make("xa", 0, extra_a), *kb = keyset_make("xb", 0, extra_b);
	struct churner c[2] = { 0 };
	struct reader r[READERS], sum;
	struct sieve_info ia, ib;
	uint32_t a, b, done = 0, nc = 0;
	double t0;
	int err = 0;

	a = make_filter("xt.a", type, cap_a, flags, common, ka);
	b = make_filter("xt.b", type, cap_b, flags, common, kb);
	if (!ktap_ok(a && b, "%s: two filters holding %u common keys", tn, COMMON_KEYS))
		goto out;
	sv_info(fd, a, &ia);
	sv_info(fd, b, &ib);
	readers_start(r, a);
	if (type == SIEVE_CUCKOO && !(flags & SIEVE_CREATE_SCALABLE)) {
		c[0] = (struct churner){ .id = a, .prefix = "churn-a" };
		c[1] = (struct churner){ .id = b, .prefix = "churn-b" };
		for (nc = 0; nc < 2; nc++)
			pthread_create(&c[nc].t, NULL, churn_loop, &c[nc]);
	}
	t0 = mono_now();
	while (done < exchanges && !err) {
		pthread_rwlock_wrlock(&pair_lock);
		err = sv_exchange(fd, a, b);
		pthread_rwlock_unlock(&pair_lock);
		done += !err;
		/* The churners' turn: fingerprints move between exchanges too. */
		if (nc)
			usleep(2000);
	}
	diag("%s: %u exchanges in %.2f s", tn, done, mono_now() - t0);
	threads_stop(r, c, nc, &sum);
	ktap_ok(!err && done == exchanges, "%s: %u exchanges of %u layer(s) and %u -> %s", tn,
		done, ia.nlayers, ib.nlayers, errname(err));
	ktap_ok(sum.misses == 0 && sum.errors == 0 && sum.rounds > 0,
		"%s: no false negative in %lu rounds of %u queries of A meanwhile (%lu missed, "
		"%lu errors)", tn, sum.rounds, COMMON_KEYS + 16, sum.misses, sum.errors);
	if (nc)
		ktap_ok(c[0].errors == 0 && c[1].errors == 0 && c[0].writes && c[1].writes,
			"%s: %lu and %lu add and delete pairs on A and B meanwhile, no error", tn,
			c[0].writes, c[1].writes);
	/* an even count: each filter is back on its own table */
	ktap_ok(sv_count_absent(fd, a, ka) == 0 && sv_count_absent(fd, b, kb) == 0 &&
		sv_count_absent(fd, a, common) == 0 && sv_count_absent(fd, b, common) == 0,
		"%s: after %u exchanges each filter holds its own keys again", tn, done);
out:
	if (a)
		sv_destroy(fd, a);
	if (b)
		sv_destroy(fd, b);
	keyset_free(common);
	keyset_free(ka);
	keyset_free(kb);
}

/*
 * A's table replaced by fresh filters, each destroyed right after its
 * exchange (its table, A's old one, freed at once) while readers ask A.
 */
static void rebuild_case(const char *tn, uint32_t type)
{
	struct keyset *common = keyset_make("xc", 0, COMMON_KEYS), *none = keyset_make("xe", 0, 0);
	long long mem0 = module_memory_bytes(NULL), mem1 = -1;
	struct reader r[READERS], sum;
	uint32_t a, b, done = 0, rounds = exchanges / 4;
	struct sieve_info ia;
	int err = 0;

	a = make_filter("xt.list", type, 2000, 0, common, none);
	if (!ktap_ok(a != 0, "%s rebuild: the filter in use", tn))
		goto out;
	readers_start(r, a);
	while (done < rounds && !err) {
		/* capacities alternate, so the tables differ */
		b = make_filter("xt.fresh", type, done % 2 ? 2000 : 3000, 0, common, none);
		err = b ? sv_exchange(fd, a, b) : -ENOMEM;
		if (b)
			err = err ?: sv_destroy(fd, b);
		done += !err;
	}
	threads_stop(r, NULL, 0, &sum);
	ktap_ok(!err && done == rounds, "%s rebuild: %u fresh tables exchanged in, each old one "
		"destroyed at once -> %s", tn, done, errname(err));
	ktap_ok(sum.misses == 0 && sum.errors == 0 && sum.rounds > 0,
		"%s rebuild: no false negative in %lu rounds of queries meanwhile (%lu missed, "
		"%lu errors)", tn, sum.rounds, sum.misses, sum.errors);
	err = sv_info(fd, a, &ia);
	mem1 = module_memory_bytes(NULL);
	ktap_ok(!err && mem0 >= 0 && mem1 - mem0 == (long long)ia.memory_bytes &&
		ia.capacity == (done % 2 ? 3000 : 2000),
		"%s rebuild: the module holds the filter's memory and no more (%lld bytes beyond "
		"before, the filter %llu)", tn, mem1 - mem0, (unsigned long long)ia.memory_bytes);
	sv_destroy(fd, a);
out:
	keyset_free(common);
	keyset_free(none);
}

int main(int argc, char **argv)
{
	pthread_rwlockattr_t attr;

	/* The exchanges get their turn between the churners' pairs. */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&pair_lock, &attr);
	if (argc > 1)
		exchanges = strtoul(argv[1], NULL, 0) & ~1U;
	ktap_begin("exchange");
	fd = dev_open(O_RDWR);
	diag("%u exchanges a case, %d reader threads", exchanges, READERS);
	swap_case("bloom", SIEVE_BLOOM, 2000, 2000, 0, 300, 300);
	swap_case("blocked", SIEVE_BLOCKED_BLOOM, 2000, 6000, 0, 300, 300);
	swap_case("cuckoo", SIEVE_CUCKOO, 2000, 8000, 0, 300, 300);
	/* 1600 keys from a first layer of 200: 4 layers; 410 in one of 1000 */
	swap_case("scalable cuckoo", SIEVE_CUCKOO, 200, 1000, SIEVE_CREATE_SCALABLE, 1200, 10);
	swap_case("scalable bloom", SIEVE_BLOOM, 200, 1000, SIEVE_CREATE_SCALABLE, 1200, 10);
	rebuild_case("cuckoo", SIEVE_CUCKOO);
	rebuild_case("blocked", SIEVE_BLOCKED_BLOOM);
	close(fd);
	return ktap_end();
}
