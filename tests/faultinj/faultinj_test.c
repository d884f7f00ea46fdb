// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures through /dev/sieve (debug kernel only).
 *
 * failslab and fail_page_alloc are set up in debugfs so that sleeping
 * allocations (GFP_KERNEL), vmalloc's pages and pages of any order may
 * fail, but only when a task asks through its own
 * /proc/thread-self/fail-nth: the probabilistic path stays shut
 * (task-filter Y, and no task has make-it-fail). Writing N there fails the
 * Nth injection point (a slab or page allocation) this task reaches; read
 * back, 0 says it was reached and failed, nonzero that the call ran to its
 * end without reaching it. (6.1 applies no stack filter to fail-nth, and
 * x86_64 has none: the restriction is the task.)
 *
 * Each operation is swept over N = 1, 2, ... on a fresh fixture until an N
 * is not reached: then every injection point of the operation's path has
 * failed once. For each N whose injection fired:
 *  - the call failed with -ENOMEM: nothing half-done is visible (no filter
 *    made, counters and keys as the call's documented partial progress
 *    says, the module's memory count moved by exactly what the filter
 *    holds), the known keys of a Bloom and a cuckoo filter made at the
 *    start are all present, and the same call (for a batch: the keys it
 *    did not apply) then succeeds without injection;
 *  - or the call succeeded: a fallback absorbed the failure (kvmalloc's
 *    vmalloc after its kmalloc, kmemleak's object pool, a slab's smaller
 *    page order), and the call must have done all its work. Such an N is
 *    tried again (the points move a little between calls, see sweep()),
 *    and then once more with a second failure right after it, so that a
 *    kvmalloc() fails whole: its kmalloc at N, its vmalloc next.
 * User buffers are locked in memory and touched before each call, so no
 * page fault takes an injection point. Everything is destroyed at the
 * end: the kmemleak scan after the suites looks for what a failure leaked.
 *
 * Usage: sieve_faultinj_test [-v VERBOSE] [-o FILTER]
 *   -v  the knobs' verbose (0 default; 1 logs a line per failure; 2 a
 *       stack trace too, which the VM runner counts as a bad log)
 *   -o  run only the operations whose name contains FILTER
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dev.h"

#define DEBUGFS		"/sys/kernel/debug"
#define NTH_PATH	"/proc/thread-self/fail-nth"
/* No operation here reaches this many points: the sweep must end sooner. */
#define MAX_N		3000
#define FPP_1PCT	10000000U
/* Scalable fixtures: first layer's capacity; growth 2. */
#define SCALE_CAP	200
#define NKEYS		1000

/* ---- fault-injection knobs ------------------------------------------- */

/*
 * Set in this order, restored in reverse: task-filter goes on before the
 * probability rises, so that no moment lets every task's allocations fail.
 */
static struct knob {
	const char *path;
	const char *value;
	char saved[32];
	bool set;
} knobs[] = {
	{ .path = "failslab/task-filter", .value = "Y" },
	{ .path = "failslab/ignore-gfp-wait", .value = "N" },
	{ .path = "failslab/cache-filter", .value = "N" },
	{ .path = "failslab/verbose", .value = "0" },
	{ .path = "failslab/space", .value = "0" },
	{ .path = "failslab/times", .value = "-1" },
	{ .path = "failslab/interval", .value = "1" },
	{ .path = "failslab/probability", .value = "100" },
	{ .path = "fail_page_alloc/task-filter", .value = "Y" },
	{ .path = "fail_page_alloc/ignore-gfp-wait", .value = "N" },
	{ .path = "fail_page_alloc/ignore-gfp-highmem", .value = "N" },
	{ .path = "fail_page_alloc/min-order", .value = "0" },
	{ .path = "fail_page_alloc/verbose", .value = "0" },
	{ .path = "fail_page_alloc/space", .value = "0" },
	{ .path = "fail_page_alloc/times", .value = "-1" },
	{ .path = "fail_page_alloc/interval", .value = "1" },
	{ .path = "fail_page_alloc/probability", .value = "100" },
};
#define NKNOBS	(sizeof(knobs) / sizeof(knobs[0]))

static int file_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int file_write(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : n < 0 ? -errno : -EIO;
}

static int knobs_set(const char *verbose)
{
	char path[128];
	size_t i;
	int err;

	for (i = 0; i < NKNOBS; i++) {
		struct knob *k = &knobs[i];

		snprintf(path, sizeof(path), "%s/%s", DEBUGFS, k->path);
		err = file_read(path, k->saved, sizeof(k->saved));
		if (!err)
			err = file_write(path, strstr(k->path, "verbose") ? verbose : k->value);
		if (err) {
			diag("%s: %s", path, errname(err));
			return err;
		}
		k->set = true;
	}
	return 0;
}

/* Back to what they were; false if one could not be written. */
static bool knobs_restore(void)
{
	char path[128];
	bool ok = true;
	size_t i;

	for (i = NKNOBS; i-- > 0;) {
		if (!knobs[i].set)
			continue;
		snprintf(path, sizeof(path), "%s/%s", DEBUGFS, knobs[i].path);
		if (file_write(path, knobs[i].saved)) {
			diag("could not restore %s to '%s'", path, knobs[i].saved);
			ok = false;
		}
		knobs[i].set = false;
	}
	return ok;
}

/* ---- fail-nth -------------------------------------------------------- */

static int nth_fd = -1;

/* Plain pread/pwrite on an open file: neither allocates in the kernel. */
static void nth_write(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(nth_fd, buf, len, 0) != len) {
		printf("Bail out! writing %s: %s\n", NTH_PATH, strerror(errno));
		exit(1);
	}
}

/* Injection points still to pass before the armed one: 0 once it fired. */
static unsigned int nth_read(void)
{
	char buf[16] = "";

	if (pread(nth_fd, buf, sizeof(buf) - 1, 0) <= 0) {
		printf("Bail out! reading %s: %s\n", NTH_PATH, strerror(errno));
		exit(1);
	}
	return strtoul(buf, NULL, 10);
}

/*
 * A second failure, for the fallbacks: with make-it-fail set, once the
 * fail-nth point has fired, the probabilistic path (probability 100,
 * task-filter) fails the next slab and the next page allocation of this
 * task, one each (times 1). So a kvmalloc() whose kmalloc() fails at N
 * also sees its vmalloc() fail, and kmemleak's object pool still gives
 * way to the allocation after it.
 */
static int mif_fd = -1;

static void mif_write(const char *v)
{
	if (pwrite(mif_fd, v, 1, 0) != 1) {
		printf("Bail out! writing make-it-fail: %s\n", strerror(errno));
		exit(1);
	}
}

static void times_set(const char *v)
{
	if (file_write(DEBUGFS "/failslab/times", v) ||
	    file_write(DEBUGFS "/fail_page_alloc/times", v)) {
		printf("Bail out! writing the knobs' times\n");
		exit(1);
	}
}

/* ---- memory that must not fault ---------------------------------------- */

/* Every buffer a call under injection reads or writes. */
static struct {
	void *p;
	size_t len;
} touched[64];
static unsigned int ntouched;

static void touch_register(void *p, size_t len)
{
	if (ntouched < sizeof(touched) / sizeof(touched[0]) && p && len) {
		touched[ntouched].p = p;
		touched[ntouched].len = len;
		ntouched++;
	}
}

/* Writes each page (its own value back): present and private before a call. */
static void touch_all(void)
{
	unsigned int i;
	size_t off;

	for (i = 0; i < ntouched; i++) {
		volatile uint8_t *b = touched[i].p;

		for (off = 0; off < touched[i].len; off += 4096)
			b[off] = b[off];
		b[touched[i].len - 1] = b[touched[i].len - 1];
	}
}

/* Grows the stack now, so that no call under injection faults it in. */
static void __attribute__((noinline)) stack_prefault(void)
{
	volatile char pad[256 * 1024];
	size_t i;

	for (i = 0; i < sizeof(pad); i += 4096)
		pad[i] = 0;
}

/* ---- the module's state ------------------------------------------------ */

static int fd = -1;
static struct known known;

struct mstate {
	long long mem, filters;
};

static void mstate_get(struct mstate *m)
{
	m->mem = module_memory_bytes(&m->filters);
}

static bool known_intact(void)
{
	return sv_count_absent(fd, known.bloom_id, known.keys) == 0 &&
	       sv_count_absent(fd, known.cuckoo_id, known.keys) == 0;
}

/* Keys [from, to) of @ks as a keyset of their own, sharing its memory. */
static struct keyset keyset_range(const struct keyset *ks, uint32_t from, uint32_t to)
{
	struct keyset v = *ks;
	uint32_t i;

	for (i = 0; i < from; i++)
		v.bytes += ks->lens[i];
	v.n = to - from;
	v.nbytes = 0;
	for (i = from; i < to; i++)
		v.nbytes += ks->lens[i];
	v.lens += from;
	v.results += from;
	return v;
}

static int destroy_name(const char *name)
{
	uint32_t id;

	return sv_open_name(fd, name, &id) ?: sv_destroy(fd, id);
}

static uint32_t count_results(const struct keyset *ks, uint32_t from, uint32_t to, uint8_t v)
{
	uint32_t i, n = 0;

	for (i = from; i < to; i++)
		n += ks->results[i] == v;
	return n;
}

/* ---- one operation, swept ---------------------------------------------- */

/* A filter a snapshot operation reads: made once, never changed after. */
struct source {
	const char *name;
	uint32_t type;
	uint32_t id;
	struct keyset *ks;
	uint8_t *snap;		/* its snapshot, exported before any sweep */
	uint64_t len;
	uint8_t *out;		/* where the swept EXPORT writes */
	struct sieve_info info;	/* INFO before any sweep */
};

struct sc;

/*
 * @setup makes a fresh fixture before each call (without injection);
 * @run is the call under injection, and again without it after a failure;
 * @failed checks, after a failed call, that nothing half-done is visible
 * (NULL, or what is wrong), and may set @mem_delta to what the fixture's
 * own memory moved by; @done checks, after a successful call, that all
 * its work was done.
 */
struct sc_ops {
	int (*setup)(struct sc *s);
	int (*run)(struct sc *s);
	const char *(*failed)(struct sc *s, int err);
	const char *(*done)(struct sc *s);
	void (*teardown)(struct sc *s);
};

struct sc {
	const char *name;
	const struct sc_ops *ops;
	/* what the fixture is: made by fixture_make() */
	uint32_t type;
	uint32_t cflags;
	uint64_t capacity;
	uint32_t prefill;	/* adds that stored a "fill-*" key, first */
	bool prefill_ks;	/* then every key of @ks (query, delete, clear) */
	/* what the call does */
	uint32_t op;		/* batch: enum sieve_batch_op */
	uint32_t key_len;	/* single add: its key's length */
	uint32_t nkeys;		/* batch: keys, if not NKEYS */
	uint32_t want_layers;	/* layers once the call succeeded (0: unchecked) */
	struct keyset *ks;
	struct source *src;
	/* one round */
	uint32_t id, id2;
	struct sieve_info info0;
	struct mstate m0;
	long long mem_delta;
	uint32_t filled;	/* "fill-*" keys added for @prefill */
	uint32_t first;		/* batch: keys applied by earlier calls */
	uint64_t queried;	/* queries the checks made of the fixture */
	struct sieve_batch b;
	uint32_t result;
	uint64_t fail_off, copied, total;
	struct sieve_info info;
	/* the sweep */
	unsigned int points, nfailed, absorbed;
	unsigned int bad_errno, bad_state, bad_retry, bad_end, bad_setup;
	bool ended;
	/*
	 * What each N did: F failed the call; A absorbed, even with a second
	 * failure after it; D absorbed, but failed with a second one; . not
	 * reached. @ndouble: the Ds.
	 */
	unsigned int ndouble;
	char trace[MAX_N + 2];
};

static char why_buf[200];

/* A reason, formatted (one at a time). */
static const char *why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	return why_buf;
}

static struct keyset *fill_keys;

/*
 * Adds "fill-*" keys until the filter reports @target adds that stored a
 * key (Bloom: false positives store nothing); *@used: keys added.
 */
static int fill_to(uint32_t id, uint32_t target, uint32_t *used)
{
	struct sieve_info info;
	int err, rounds;

	*used = 0;
	for (rounds = 0; rounds < 20; rounds++) {
		struct keyset v;

		err = sv_info(fd, id, &info);
		if (err || info.inserted >= target)
			return err ?: info.inserted == target ? 0 : -ERANGE;
		if (*used + target - info.inserted > fill_keys->n)
			return -ERANGE;
		v = keyset_range(fill_keys, *used, *used + target - info.inserted);
		err = sv_batch(fd, id, SIEVE_BATCH_ADD, 0, &v, NULL);
		if (err)
			return err;
		*used += v.n;
	}
	return -ERANGE;
}

/* "fi.fix": the filter the call works on, as @s describes it. */
static int fixture_make(struct sc *s)
{
	struct sieve_create c;
	int err;

	sv_create_arg(&c, "fi.fix", s->type, s->capacity, FPP_1PCT);
	c.flags = s->cflags | SIEVE_CREATE_SEED;
	c.seed = 0x5eed;
	err = sv_create(fd, &c);
	if (err)
		return err;
	s->id = c.id;
	s->first = 0;
	s->queried = 0;
	if (s->prefill)
		err = fill_to(s->id, s->prefill, &s->filled);
	if (!err && s->prefill_ks)
		err = sv_batch(fd, s->id, SIEVE_BATCH_ADD, 0, s->ks, NULL);
	return err ?: sv_info(fd, s->id, &s->info0);
}

static void fixture_destroy(struct sc *s)
{
	destroy_name("fi.fix");
}

/* Absent keys among [from, to) of @ks in the fixture (counted as queries). */
static long fixture_absent(struct sc *s, const struct keyset *ks, uint32_t from, uint32_t to)
{
	struct keyset v = keyset_range(ks, from, to);
	uint8_t saved[NKEYS * 4];
	long absent;

	if (!v.n || v.n > sizeof(saved))
		return v.n ? -ERANGE : 0;
	/* The results of the call under test stay as it wrote them. */
	memcpy(saved, v.results, v.n);
	absent = sv_count_absent(fd, s->id, &v);
	memcpy(v.results, saved, v.n);
	s->queried += v.n;
	return absent;
}

/* ---- the sweep ----------------------------------------------------------- */

/* After an injected failure: the module's counts, the known keys, the retry. */
static void after_failure(struct sc *s, unsigned int n, int err)
{
	const char *bad;
	struct mstate m;

	s->nfailed++;
	if (err != -ENOMEM) {
		s->bad_errno++;
		diag("%s: N=%u: %s, not -ENOMEM", s->name, n, errname(err));
	}
	s->mem_delta = 0;
	bad = s->ops->failed(s, err);
	mstate_get(&m);
	if (!bad && m.filters != s->m0.filters)
		bad = why("filters in use went from %lld to %lld", s->m0.filters, m.filters);
	if (!bad && m.mem - s->m0.mem != s->mem_delta)
		bad = why("the module's memory count moved by %lld bytes, the filter's by %lld",
			  m.mem - s->m0.mem, s->mem_delta);
	if (!bad && !known_intact())
		bad = "known keys are missing";
	if (bad) {
		s->bad_state++;
		diag("%s: N=%u: after %s: %s", s->name, n, errname(err), bad);
	}
	touch_all();
	err = s->ops->run(s);
	bad = err ? why("%s", errname(err)) : s->ops->done(s);
	if (bad) {
		s->bad_retry++;
		diag("%s: N=%u: the call again, without injection: %s", s->name, n, bad);
	}
}

/* The Nth point was not reached: the call ran whole, and must have done it all. */
static void at_end(struct sc *s, unsigned int n, int err)
{
	const char *bad = err ? why("failed with %s", errname(err)) : s->ops->done(s);

	s->ended = true;
	s->points = n - 1;
	if (bad) {
		s->bad_end++;
		diag("%s: without injection (N=%u not reached): %s", s->name, n, bad);
	}
}

/*
 * One call with its Nth injection point armed: 'F' it failed, 'A' it
 * succeeded all the same, '.' the point was not reached; 0 if the fixture
 * could not be made.
 */
static char sweep_one(struct sc *s, unsigned int n, bool second)
{
	unsigned int left;
	const char *bad;
	char what;
	int err;

	err = s->ops->setup ? s->ops->setup(s) : 0;
	if (err) {
		s->bad_setup++;
		diag("%s: N=%u: making the fixture: %s", s->name, n, errname(err));
		return 0;
	}
	mstate_get(&s->m0);
	if (second)
		times_set("1");
	touch_all();
	nth_write(n);
	if (second)
		mif_write("1");
	err = s->ops->run(s);
	left = nth_read();
	if (second)
		mif_write("0");
	nth_write(0);
	if (second)
		times_set("-1");
	what = left ? '.' : !err ? 'A' : second ? 'D' : 'F';
	if (left && second) {
		/* This time the path was shorter: nothing failed. */
		what = 'A';
		bad = err ? errname(err) : s->ops->done(s);
		if (bad) {
			s->bad_end++;
			diag("%s: N=%u not reached: %s", s->name, n, bad);
		}
	} else if (left) {
		at_end(s, n, err);
	} else if (err) {
		after_failure(s, n, err);
	} else {
		s->absorbed++;
		bad = s->ops->done(s);
		if (bad) {
			s->bad_state++;
			diag("%s: N=%u: the call succeeded despite the failure, but %s",
			     s->name, n, bad);
		}
	}
	if (s->ops->teardown)
		s->ops->teardown(s);
	return what;
}

/*
 * The points of a path are not quite the same from one call to the next:
 * a slab that needs a new page, kmemleak's own objects (one per
 * allocation) and the like move the module's allocations by one or two.
 * So an N whose failure was absorbed is tried again, up to TRIES times,
 * for the module's allocation that may sit there in most calls; then once
 * more with a second failure after it (mif_write()), for the fallback.
 */
#define TRIES	4

static void sweep(struct sc *s)
{
	unsigned int n, try;
	char what = 0;

	for (n = 1; n <= MAX_N && !s->ended; n++) {
		for (try = 0; try < TRIES; try++) {
			what = sweep_one(s, n, false);
			if (what != 'A')
				break;
		}
		if (what == 'A')
			what = sweep_one(s, n, true);
		if (!what)
			break;
		if (what == 'D')
			s->ndouble++;
		s->trace[n - 1] = what;
		s->trace[n] = 0;
	}
}

static unsigned int total_points, nops;

static unsigned int count_chars(const char *str, char c)
{
	unsigned int n = 0;

	for (; *str; str++)
		n += *str == c;
	return n;
}

static void report(struct sc *s)
{
	ktap_ok(s->ended && !s->bad_setup && !s->bad_end,
		"%s: sweep reached its end: %u injection points", s->name, s->points);
	/* A path with allocations must have had one fail the call. */
	ktap_ok(!s->bad_errno && (s->nfailed || !s->points),
		"%s: %u injected failures failed the call with -ENOMEM", s->name, s->nfailed);
	ktap_ok(!s->bad_state, "%s: nothing half-done after each failure, known keys intact",
		s->name);
	ktap_ok(!s->bad_retry, "%s: the call then succeeded without injection; "
		"%u failures absorbed by a fallback", s->name, s->absorbed);
	diag("%s: %u injection points, %u of them failing the call alone, %u with a "
	     "second failure in the fallback (%s)", s->name, s->points,
	     count_chars(s->trace, 'F'), s->ndouble, s->trace);
	total_points += s->points;
	nops++;
}

/* ---- CREATE ---------------------------------------------------------------- */

static int create_run(struct sc *s)
{
	struct sieve_create c;
	int err;

	sv_create_arg(&c, "fi.create", s->type, s->capacity, FPP_1PCT);
	c.flags = s->cflags | SIEVE_CREATE_SEED;
	c.seed = 0x5eed;
	err = sv_create(fd, &c);
	s->id = err ? 0 : c.id;
	return err;
}

static const char *create_failed(struct sc *s, int err)
{
	uint32_t id;

	return sv_open_name(fd, "fi.create", &id) == -ENOENT ? NULL : "the filter exists";
}

/* A new filter's memory is what the module's count grew by. */
static const char *new_filter_check(struct sc *s, const char *name, uint32_t type,
				    uint32_t nlayers, uint64_t inserted)
{
	struct sieve_info info;
	struct mstate m;
	uint32_t id;

	if (sv_open_name(fd, name, &id) || id != s->id)
		return "OPEN does not find it under its id";
	if (sv_info(fd, id, &info))
		return "INFO fails";
	if (info.geo.type != type || info.nlayers != nlayers || info.inserted != inserted)
		return why("INFO says type %u, %u layers, %llu inserted", info.geo.type,
			   info.nlayers, (unsigned long long)info.inserted);
	mstate_get(&m);
	if (m.filters != s->m0.filters + 1 || m.mem - s->m0.mem != (long long)info.memory_bytes)
		return why("the module counts %lld more filters and %lld more bytes, "
			   "the filter %llu bytes", m.filters - s->m0.filters, m.mem - s->m0.mem,
			   (unsigned long long)info.memory_bytes);
	return NULL;
}

static const char *create_done(struct sc *s)
{
	return new_filter_check(s, "fi.create", s->type, 1, 0);
}

static void create_teardown(struct sc *s)
{
	destroy_name("fi.create");
}

static const struct sc_ops create_ops = {
	.run = create_run,
	.failed = create_failed,
	.done = create_done,
	.teardown = create_teardown,
};

/* ---- ADD of one key (growth of a full scalable layer too) ------------------ */

static uint8_t add_key[300];

static int add_run(struct sc *s)
{
	s->result = 0xdead;
	return sv_add(fd, s->id, add_key, s->key_len, 0, &s->result);
}

static long add_key_absent(struct sc *s)
{
	uint32_t r;
	int err = sv_query(fd, s->id, add_key, s->key_len, &r);

	s->queried++;
	return err ?: !r;
}

static const char *add_failed(struct sc *s, int err)
{
	struct sieve_info info;

	if (sv_info(fd, s->id, &info))
		return "INFO fails";
	if (info.inserted != s->info0.inserted || info.nlayers != s->info0.nlayers ||
	    info.items != s->info0.items)
		return why("inserted %llu, layers %u, items %llu (before: %llu, %u, %llu)",
			   (unsigned long long)info.inserted, info.nlayers,
			   (unsigned long long)info.items,
			   (unsigned long long)s->info0.inserted, s->info0.nlayers,
			   (unsigned long long)s->info0.items);
	/* A cuckoo filter's answer is exact here; a Bloom one's may be a false positive. */
	if (s->type == SIEVE_CUCKOO && add_key_absent(s) != 1)
		return "the key is present";
	if (fixture_absent(s, fill_keys, 0, s->filled))
		return "keys stored before are absent";
	return NULL;
}

static const char *add_done(struct sc *s)
{
	struct sieve_info info;

	if (s->result != 0)
		return why("result %u for a new key", s->result);
	if (sv_info(fd, s->id, &info))
		return "INFO fails";
	if (info.inserted != s->info0.inserted + 1 ||
	    (s->want_layers && info.nlayers != s->want_layers))
		return why("inserted %llu, layers %u (before: %llu, %u)",
			   (unsigned long long)info.inserted, info.nlayers,
			   (unsigned long long)s->info0.inserted, s->info0.nlayers);
	if (add_key_absent(s) != 0)
		return "the key is absent";
	return NULL;
}

static const struct sc_ops add_ops = {
	.setup = fixture_make,
	.run = add_run,
	.failed = add_failed,
	.done = add_done,
	.teardown = fixture_destroy,
};

/* ---- BATCH: add, query, delete; growth of scalable filters mid-batch ------- */

static int batch_run(struct sc *s)
{
	struct keyset v = keyset_range(s->ks, s->first, s->ks->n);

	return sv_batch(fd, s->id, s->op, 0, &v, &s->b);
}

/*
 * The fixture against the results of keys [0, @s->first), the keys the
 * calls of this round applied: counters moved by exactly them, the keys
 * added are there, the keys not deleted are still there.
 */
static const char *batch_state(struct sc *s)
{
	uint32_t n = s->ks->n, ones = count_results(s->ks, 0, s->first, 1);
	uint64_t ins = 0, del = 0, qry = 0;
	struct sieve_info info;

	if (sv_info(fd, s->id, &info))
		return "INFO fails";
	if (s->op == SIEVE_BATCH_ADD)	/* cuckoo: every add stores a copy */
		ins = s->type == SIEVE_CUCKOO ? s->first : s->first - ones;
	else if (s->op == SIEVE_BATCH_DELETE)
		del = ones;
	else
		qry = s->first;
	if (info.inserted != s->info0.inserted + ins || info.deleted != s->info0.deleted + del ||
	    info.queries != s->info0.queries + qry + s->queried)
		return why("inserted %llu, deleted %llu, queries %llu: expected %llu, %llu, %llu",
			   (unsigned long long)info.inserted, (unsigned long long)info.deleted,
			   (unsigned long long)info.queries,
			   (unsigned long long)(s->info0.inserted + ins),
			   (unsigned long long)(s->info0.deleted + del),
			   (unsigned long long)(s->info0.queries + qry + s->queried));
	if (s->type == SIEVE_CUCKOO && info.items != s->info0.items + ins - del)
		return why("items %llu, expected %llu", (unsigned long long)info.items,
			   (unsigned long long)(s->info0.items + ins - del));
	if (s->op == SIEVE_BATCH_QUERY && ones != s->first)
		return why("%u of %u stored keys found", ones, s->first);
	if (s->op == SIEVE_BATCH_DELETE && ones != s->first)
		return why("%u of %u stored keys deleted", ones, s->first);
	s->mem_delta = (long long)info.memory_bytes - (long long)s->info0.memory_bytes;
	if (s->op == SIEVE_BATCH_ADD && fixture_absent(s, s->ks, 0, s->first))
		return "keys the batch added are absent";
	if (s->op == SIEVE_BATCH_DELETE && fixture_absent(s, s->ks, s->first, n))
		return "keys the batch did not delete are absent";
	return NULL;
}

static const char *batch_failed(struct sc *s, int err)
{
	uint32_t left = s->ks->n - s->first, done = s->b.done;

	if (done >= left)
		return why("done %u of %u keys", done, left);
	if (count_results(s->ks, s->first + done, s->ks->n, 0xee) != left - done)
		return "results past @done were written";
	if (s->b.present != count_results(s->ks, s->first, s->first + done, 1))
		return "@present disagrees with the results";
	if (count_results(s->ks, s->first, s->first + done, 0) +
	    count_results(s->ks, s->first, s->first + done, 1) != done)
		return "a result of an applied key is not 0 or 1";
	s->first += done;
	return batch_state(s);
}

static const char *batch_done(struct sc *s)
{
	uint32_t left = s->ks->n - s->first;
	struct sieve_info info;

	if (s->b.done != left)
		return why("done %u of %u keys", s->b.done, left);
	s->first = s->ks->n;
	if (s->want_layers && (sv_info(fd, s->id, &info) || info.nlayers != s->want_layers))
		return why("%u layers, expected %u", info.nlayers, s->want_layers);
	return batch_state(s);
}

static const struct sc_ops batch_ops = {
	.setup = fixture_make,
	.run = batch_run,
	.failed = batch_failed,
	.done = batch_done,
	.teardown = fixture_destroy,
};

/* ---- CLEAR ------------------------------------------------------------------ */

static int clear_run(struct sc *s)
{
	return sv_clear(fd, s->id);
}

static const char *clear_failed(struct sc *s, int err)
{
	struct sieve_info info;

	if (sv_info(fd, s->id, &info))
		return "INFO fails";
	if (info.nlayers != s->info0.nlayers || info.inserted != s->info0.inserted ||
	    info.items != s->info0.items || info.memory_bytes != s->info0.memory_bytes)
		return why("layers %u, inserted %llu, items %llu, memory %llu changed", info.nlayers,
			   (unsigned long long)info.inserted, (unsigned long long)info.items,
			   (unsigned long long)info.memory_bytes);
	if (fixture_absent(s, s->ks, 0, s->ks->n))
		return "keys are missing";
	return NULL;
}

static const char *clear_done(struct sc *s)
{
	struct sieve_info info;
	struct mstate m;

	if (sv_info(fd, s->id, &info))
		return "INFO fails";
	if (info.nlayers != 1 || info.inserted || info.items)
		return why("layers %u, inserted %llu, items %llu after a clear", info.nlayers,
			   (unsigned long long)info.inserted, (unsigned long long)info.items);
	if (fixture_absent(s, s->ks, 0, s->ks->n) != s->ks->n)
		return "keys are still present";
	mstate_get(&m);
	if (m.mem - s->m0.mem != (long long)info.memory_bytes - (long long)s->info0.memory_bytes)
		return why("the module's memory moved by %lld, the filter's by %lld",
			   m.mem - s->m0.mem,
			   (long long)info.memory_bytes - (long long)s->info0.memory_bytes);
	return NULL;
}

static const struct sc_ops clear_ops = {
	.setup = fixture_make,
	.run = clear_run,
	.failed = clear_failed,
	.done = clear_done,
	.teardown = fixture_destroy,
};

/* ---- MERGE ------------------------------------------------------------------ */

/* Two Bloom filters of one geometry and seed: half of @ks in each. */
static int merge_setup(struct sc *s)
{
	uint32_t half = s->ks->n / 2;
	struct keyset a = keyset_range(s->ks, 0, half), b = keyset_range(s->ks, half, s->ks->n);
	struct sieve_create c;
	int err;

	err = fixture_make(s);
	if (err)
		return err;
	sv_create_arg(&c, "fi.merge.src", s->type, s->capacity, FPP_1PCT);
	c.flags = SIEVE_CREATE_SEED;
	c.seed = 0x5eed;	/* fixture_make()'s */
	err = sv_create(fd, &c);
	s->id2 = c.id;
	return err ?: sv_batch(fd, s->id, SIEVE_BATCH_ADD, 0, &a, NULL) ?:
		sv_batch(fd, s->id2, SIEVE_BATCH_ADD, 0, &b, NULL);
}

static int merge_run(struct sc *s)
{
	return sv_merge(fd, s->id, s->id2);
}

static const char *merge_failed(struct sc *s, int err)
{
	return fixture_absent(s, s->ks, 0, s->ks->n / 2) ? "the destination lost keys" : NULL;
}

static const char *merge_done(struct sc *s)
{
	return fixture_absent(s, s->ks, 0, s->ks->n) ? "keys of the union are absent" : NULL;
}

static void merge_teardown(struct sc *s)
{
	destroy_name("fi.merge.src");
	fixture_destroy(s);
}

static const struct sc_ops merge_ops = {
	.setup = merge_setup,
	.run = merge_run,
	.failed = merge_failed,
	.done = merge_done,
	.teardown = merge_teardown,
};

/* ---- IMPORT, EXPORT, INFO of a multi-layer source ---------------------------- */

/* Small enough that tables arrive over several calls. */
#define IMPORT_CHUNK	1536

static int import_run(struct sc *s)
{
	const struct source *src = s->src;
	uint64_t off = 0;

	s->id = 0;
	while (off < src->len) {
		struct sieve_import im = { .size = sizeof(im) };
		int err;

		strcpy(im.name, "fi.import");
		im.offset = off;
		im.buf = (uintptr_t)(src->snap + off);
		im.buf_len = src->len - off < IMPORT_CHUNK ? src->len - off : IMPORT_CHUNK;
		err = sv_ioctl(fd, SIEVE_IOC_IMPORT, &im);
		if (err) {
			s->fail_off = off;
			return err;
		}
		off += im.buf_len;
		if (im.id && off != src->len)
			return -ERANGE;
		s->id = im.id;
	}
	return s->id ? 0 : -ERANGE;
}

static const char *import_failed(struct sc *s, int err)
{
	struct sieve_import im = { .size = sizeof(im) };
	uint32_t id;

	if (sv_open_name(fd, "fi.import", &id) != -ENOENT)
		return "the filter exists";
	/* The import was dropped: its next chunk finds none in progress. */
	strcpy(im.name, "fi.import");
	im.offset = s->fail_off + IMPORT_CHUNK;
	if (im.offset >= s->src->len)
		im.offset = sizeof(struct sieve_snapshot_header);
	im.buf = (uintptr_t)(s->src->snap + im.offset);
	im.buf_len = 1;
	err = sv_ioctl(fd, SIEVE_IOC_IMPORT, &im);
	if (err != -EALREADY)
		return why("the next chunk got %s, not -EALREADY", errname(err));
	return NULL;
}

static const char *import_done(struct sc *s)
{
	const struct source *src = s->src;
	struct sieve_info info;
	const char *bad;

	bad = new_filter_check(s, "fi.import", src->type, src->info.nlayers, src->info.inserted);
	if (bad)
		return bad;
	if (sv_info(fd, s->id, &info) || memcmp(&info.geo, &src->info.geo, sizeof(info.geo)))
		return "its geometry differs from the source's";
	if (sv_count_absent(fd, s->id, src->ks))
		return "keys of the source are absent";
	return NULL;
}

static void import_teardown(struct sc *s)
{
	destroy_name("fi.import");
}

static const struct sc_ops import_ops = {
	.run = import_run,
	.failed = import_failed,
	.done = import_done,
	.teardown = import_teardown,
};

/* The whole snapshot in one call: it is dropped once its last byte is read. */
static int export_setup(struct sc *s)
{
	memset(s->src->out, 0xa5, s->src->len);
	return 0;
}

static int export_run(struct sc *s)
{
	struct sieve_export e = {
		.size = sizeof(e), .id = s->src->id,
		.buf = (uintptr_t)s->src->out, .buf_len = s->src->len,
	};
	int err = sv_ioctl(fd, SIEVE_IOC_EXPORT, &e);

	s->copied = e.copied;
	s->total = e.total;
	return err;
}

static const char *export_failed(struct sc *s, int err)
{
	struct sieve_export e = {
		.size = sizeof(e), .id = s->src->id, .offset = sizeof(struct sieve_snapshot_header),
		.buf = (uintptr_t)s->src->out, .buf_len = 16,
	};

	err = sv_ioctl(fd, SIEVE_IOC_EXPORT, &e);
	return err == -EINVAL ? NULL : why("a read of the snapshot got %s: one is held",
					    errname(err));
}

static const char *export_done(struct sc *s)
{
	struct mstate m;

	if (s->copied != s->src->len || s->total != s->src->len)
		return why("copied %llu of %llu bytes, total %llu", (unsigned long long)s->copied,
			   (unsigned long long)s->src->len, (unsigned long long)s->total);
	if (memcmp(s->src->out, s->src->snap, s->src->len))
		return "the snapshot differs from the one taken before";
	mstate_get(&m);
	if (m.mem != s->m0.mem)
		return "the module still counts the snapshot";
	return NULL;
}

static const struct sc_ops export_ops = {
	.setup = export_setup,
	.run = export_run,
	.failed = export_failed,
	.done = export_done,
};

/* buf_len 0: only the size. */
static int export_size_run(struct sc *s)
{
	struct sieve_export e = { .size = sizeof(e), .id = s->src->id };
	int err = sv_ioctl(fd, SIEVE_IOC_EXPORT, &e);

	s->total = e.total;
	return err;
}

static const char *nothing_changed(struct sc *s, int err)
{
	return NULL;
}

static const char *export_size_done(struct sc *s)
{
	return s->total == s->src->len ? NULL :
		why("total %llu, the snapshot has %llu bytes", (unsigned long long)s->total,
		    (unsigned long long)s->src->len);
}

static const struct sc_ops export_size_ops = {
	.run = export_size_run,
	.failed = nothing_changed,
	.done = export_size_done,
};

static int info_run(struct sc *s)
{
	return sv_info(fd, s->src->id, &s->info);
}

static const char *info_done(struct sc *s)
{
	const struct sieve_info *a = &s->info, *b = &s->src->info;

	if (!memcmp(a, b, sizeof(*a)))
		return NULL;
	return why("INFO differs: layers %u/%u, items %llu/%llu, memory %llu/%llu, "
		   "snapshot_bytes %llu/%llu", a->nlayers, b->nlayers,
		   (unsigned long long)a->items, (unsigned long long)b->items,
		   (unsigned long long)a->memory_bytes, (unsigned long long)b->memory_bytes,
		   (unsigned long long)a->snapshot_bytes, (unsigned long long)b->snapshot_bytes);
}

static const struct sc_ops info_ops = {
	.run = info_run,
	.failed = nothing_changed,
	.done = info_done,
};

/* ---- the operations ---------------------------------------------------------- */

static struct source src_bloom = { .name = "fi.src.bloom", .type = SIEVE_BLOOM };
static struct source src_cuckoo = { .name = "fi.src.cuckoo", .type = SIEVE_CUCKOO };

#define SCALABLE	SIEVE_CREATE_SCALABLE

/* A fixture of @type, created with @cflags for @cap keys at 1%. */
#define FIXTURE(t, f, cap)	.type = (t), .cflags = (f), .capacity = (cap)

static struct sc ops[] = {
	{ .name = "CREATE bloom", .ops = &create_ops, FIXTURE(SIEVE_BLOOM, 0, 1000) },
	{ .name = "CREATE blocked bloom", .ops = &create_ops,
	  FIXTURE(SIEVE_BLOCKED_BLOOM, 0, 1000) },
	{ .name = "CREATE cuckoo", .ops = &create_ops, FIXTURE(SIEVE_CUCKOO, 0, 1000) },
	/* Tables past a page: kvmalloc's kmalloc, then its vmalloc. */
	{ .name = "CREATE bloom 100k keys", .ops = &create_ops,
	  FIXTURE(SIEVE_BLOOM, 0, 100000) },
	{ .name = "CREATE cuckoo 100k keys", .ops = &create_ops,
	  FIXTURE(SIEVE_CUCKOO, 0, 100000) },
	{ .name = "CREATE scalable bloom", .ops = &create_ops,
	  FIXTURE(SIEVE_BLOOM, SCALABLE, SCALE_CAP) },
	{ .name = "CREATE scalable cuckoo", .ops = &create_ops,
	  FIXTURE(SIEVE_CUCKOO, SCALABLE, SCALE_CAP) },
	{ .name = "ADD short key", .ops = &add_ops, FIXTURE(SIEVE_CUCKOO, 0, 1000),
	  .key_len = 16, .want_layers = 1 },
	/* Longer than the kernel's stack buffer: memdup_user(). */
	{ .name = "ADD long key", .ops = &add_ops, FIXTURE(SIEVE_BLOOM, 0, 1000),
	  .key_len = 300, .want_layers = 1 },
	/* The layer is full: the add stacks a second one first. */
	{ .name = "ADD growing scalable bloom", .ops = &add_ops,
	  FIXTURE(SIEVE_BLOOM, SCALABLE, SCALE_CAP), .prefill = SCALE_CAP, .key_len = 16,
	  .want_layers = 2 },
	{ .name = "ADD growing scalable cuckoo", .ops = &add_ops,
	  FIXTURE(SIEVE_CUCKOO, SCALABLE, SCALE_CAP), .prefill = SCALE_CAP, .key_len = 16,
	  .want_layers = 2 },
	/* A chunk under a page: kmalloc() alone, no vmalloc() to fall back on. */
	{ .name = "BATCH add bloom 40 keys", .ops = &batch_ops, FIXTURE(SIEVE_BLOOM, 0, 1000),
	  .op = SIEVE_BATCH_ADD, .nkeys = 40 },
	/* NKEYS keys: four chunks of 256. */
	{ .name = "BATCH add bloom", .ops = &batch_ops, FIXTURE(SIEVE_BLOOM, 0, 10000),
	  .op = SIEVE_BATCH_ADD },
	{ .name = "BATCH add cuckoo", .ops = &batch_ops, FIXTURE(SIEVE_CUCKOO, 0, 10000),
	  .op = SIEVE_BATCH_ADD },
	{ .name = "BATCH query blocked bloom", .ops = &batch_ops,
	  FIXTURE(SIEVE_BLOCKED_BLOOM, 0, 10000), .prefill_ks = true, .op = SIEVE_BATCH_QUERY },
	{ .name = "BATCH delete cuckoo", .ops = &batch_ops, FIXTURE(SIEVE_CUCKOO, 0, 10000),
	  .prefill_ks = true, .op = SIEVE_BATCH_DELETE },
	/* 100 keys stored, then NKEYS more: growth at 200 and at 600 keys. */
	{ .name = "BATCH add growing scalable bloom twice", .ops = &batch_ops,
	  FIXTURE(SIEVE_BLOOM, SCALABLE, SCALE_CAP), .prefill = 100, .op = SIEVE_BATCH_ADD,
	  .want_layers = 3 },
	{ .name = "BATCH add growing scalable cuckoo twice", .ops = &batch_ops,
	  FIXTURE(SIEVE_CUCKOO, SCALABLE, SCALE_CAP), .prefill = 100, .op = SIEVE_BATCH_ADD,
	  .want_layers = 3 },
	{ .name = "IMPORT scalable bloom of 3 layers", .ops = &import_ops, .src = &src_bloom },
	{ .name = "IMPORT scalable cuckoo of 3 layers", .ops = &import_ops, .src = &src_cuckoo },
	{ .name = "EXPORT scalable bloom of 3 layers", .ops = &export_ops, .src = &src_bloom },
	{ .name = "EXPORT scalable cuckoo of 3 layers", .ops = &export_ops, .src = &src_cuckoo },
	{ .name = "EXPORT size only", .ops = &export_size_ops, .src = &src_cuckoo },
	{ .name = "INFO", .ops = &info_ops, .src = &src_cuckoo },
	{ .name = "MERGE", .ops = &merge_ops, FIXTURE(SIEVE_BLOOM, 0, 1000) },
	{ .name = "CLEAR scalable bloom of 3 layers", .ops = &clear_ops,
	  FIXTURE(SIEVE_BLOOM, SCALABLE, SCALE_CAP), .prefill_ks = true },
	{ .name = "CLEAR cuckoo", .ops = &clear_ops, FIXTURE(SIEVE_CUCKOO, 0, 2000),
	  .prefill_ks = true },
};
#define NOPS	(sizeof(ops) / sizeof(ops[0]))

/* A scalable filter of NKEYS keys (3 layers), its snapshot and INFO. */
static int source_make(struct source *src)
{
	int err;

	src->ks = keyset_make(src->name, 0, NKEYS);
	err = sv_create_simple(fd, src->name, src->type, SCALE_CAP, FPP_1PCT, SCALABLE, &src->id);
	if (!err)
		err = sv_batch(fd, src->id, SIEVE_BATCH_ADD, 0, src->ks, NULL);
	if (!err)
		err = sv_export_all(fd, src->id, 4096, &src->snap, &src->len);
	if (!err)
		err = sv_info(fd, src->id, &src->info);
	if (!err && src->info.nlayers != 3)
		err = -ERANGE;
	if (err) {
		diag("making %s: %s", src->name, errname(err));
		return err;
	}
	src->out = malloc(src->len);
	touch_register(src->snap, src->len);
	touch_register(src->out, src->len);
	touch_register(src->ks->bytes, src->ks->nbytes);
	touch_register(src->ks->lens, src->ks->n * sizeof(uint32_t));
	touch_register(src->ks->results, src->ks->n);
	return 0;
}

static void source_destroy(struct source *src)
{
	sv_destroy(fd, src->id);
	keyset_free(src->ks);
	free(src->snap);
	free(src->out);
}

/* ---- main -------------------------------------------------------------------- */

static bool fault_injection_available(void)
{
	return access(NTH_PATH, W_OK) == 0 && access(DEBUGFS "/failslab/probability", W_OK) == 0 &&
	       access(DEBUGFS "/fail_page_alloc/probability", W_OK) == 0;
}

static int setup_all(struct keyset *batch_keys)
{
	size_t i;
	int err;

	err = known_setup(&known, fd, "fi");
	if (!err)
		err = source_make(&src_bloom) ?: source_make(&src_cuckoo);
	if (err)
		return err;
	memcpy(add_key, "fi-add-key-", 11);
	for (i = 11; i < sizeof(add_key); i++)
		add_key[i] = 'a' + i % 26;
	touch_register(add_key, sizeof(add_key));
	touch_register(batch_keys->bytes, batch_keys->nbytes);
	touch_register(batch_keys->lens, batch_keys->n * sizeof(uint32_t));
	touch_register(batch_keys->results, batch_keys->n);
	for (i = 0; i < NOPS; i++) {
		struct keyset *ks = batch_keys;

		if (ops[i].nkeys) {
			ks = keyset_make("fi", 0, ops[i].nkeys);
			touch_register(ks->bytes, ks->nbytes);
			touch_register(ks->lens, ks->n * sizeof(uint32_t));
			touch_register(ks->results, ks->n);
		}
		if (!ops[i].ks)
			ops[i].ks = ks;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *only = NULL, *verbose = "0";
	struct keyset *batch_keys;
	struct mstate start, end;
	cpu_set_t cpus;
	size_t i;
	int opt;

	while ((opt = getopt(argc, argv, "v:o:")) != -1) {
		if (opt == 'v')
			verbose = optarg;
		else if (opt == 'o')
			only = optarg;
		else
			return 2;
	}
	ktap_begin("faultinj");
	if (!fault_injection_available()) {
		ktap_skip("no fail-nth, failslab or fail_page_alloc in this kernel",
			  "allocation failures");
		return ktap_end();
	}
	/* One CPU: one set of per-CPU slabs, fewer moves of the points. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		diag("sched_setaffinity: %s", strerror(errno));
	/* Our pages stay present: no fault under injection allocates. */
	stack_prefault();
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		diag("mlockall: %s (buffers are still touched before each call)", strerror(errno));
	fd = dev_open(O_RDWR);
	nth_fd = open(NTH_PATH, O_RDWR | O_CLOEXEC);
	mif_fd = open("/proc/thread-self/make-it-fail", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0 || mif_fd < 0 || pwrite(mif_fd, "0", 1, 0) != 1) {
		printf("Bail out! %s: %s\n", NTH_PATH, strerror(errno));
		return 1;
	}
	mstate_get(&start);
	batch_keys = keyset_make("fi", 0, NKEYS);
	fill_keys = keyset_make("fill", 0, 4 * NKEYS);
	if (!ktap_ok(!setup_all(batch_keys), "known filters and sources made") ||
	    !ktap_ok(!knobs_set(verbose), "failslab and fail_page_alloc set up for fail-nth")) {
		knobs_restore();
		return ktap_end();
	}
	for (i = 0; i < NOPS; i++) {
		if (only && !strstr(ops[i].name, only))
			continue;
		sweep(&ops[i]);
		report(&ops[i]);
	}
	ktap_ok(knobs_restore(), "fault-injection settings restored");
	diag("%u injection points over %u operations", total_points, nops);
	known_check(&known, "after every sweep");
	known_teardown(&known);
	source_destroy(&src_bloom);
	source_destroy(&src_cuckoo);
	mstate_get(&end);
	ktap_ok(end.mem == start.mem && end.filters == start.filters,
		"everything destroyed: the module counts %lld filters, %lld bytes (before: %lld, %lld)",
		end.filters, end.mem, start.filters, start.mem);
	for (i = 0; i < NOPS; i++)
		if (ops[i].ks != batch_keys && !ops[i].src)
			keyset_free(ops[i].ks);
	keyset_free(batch_keys);
	keyset_free(fill_keys);
	close(mif_fd);
	close(nth_fd);
	close(fd);
	return ktap_end();
}
