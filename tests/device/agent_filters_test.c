// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's persistent filters (userspace/agent/filters.c) across a
 * module reload, in two runs that play the agent's stop and its next start
 * (agent_filters.sh reloads sieve.ko between them). Each prints KTAP.
 *
 *   save:     a Bloom, a scalable blocked-Bloom and a cuckoo filter, listed
 *             persistent, and one that is not, each with 10^5 keys; their
 *             answers for those keys and 10^5 others go to ANSWERS; then
 *             sagent_filters_save() writes the snapshots.
 *   restore:  the module is empty; sagent_filters_restore() brings the
 *             three back (not the fourth) with the same answers for all
 *             2 x 10^5 keys and the same counters; a second restore leaves
 *             them alone; a save replaces every file by rename and leaves
 *             no temporary file; a corrupted snapshot is refused and
 *             counted, and the others are restored; bad names are refused.
 *
 * Usage: sieve_agent_filters_test save|restore STATE_DIR ANSWERS
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "dev.h"
#include "libsieve.h"

#define NKEYS		100000U
#define FPP_1PCT	10000000U
#define NFILTERS	3

static const struct {
	const char *name;
	uint32_t type;
	uint32_t flags;
	uint64_t capacity;
} filters[NFILTERS] = {
	{ "af.bloom", SIEVE_BLOOM, 0, NKEYS },
	/* several layers, so that a snapshot of more than one is restored */
	{ "af.blocked", SIEVE_BLOCKED_BLOOM, SIEVE_CREATE_SCALABLE, NKEYS / 5 },
	{ "af.cuckoo", SIEVE_CUCKOO, 0, NKEYS },
};
#define NOT_PERSISTENT	"af.temp"
#define NEVER_CREATED	"af.never"
#define MARKER		"af-marker-key"

/* What the save run saw, for the restore run: per filter, in order. */
struct answers {
	uint64_t inserted[NFILTERS];
	uint32_t nlayers[NFILTERS];
	uint8_t known[NFILTERS][NKEYS];
	uint8_t unknown[NFILTERS][NKEYS];
};

static struct sconf_config cfg;
static struct keyset *known, *unknown;
static char dir[4200];

static void config_fill(const char *state_dir)
{
	unsigned int i;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s", state_dir);
	cfg.save_interval_s = 300;
	for (i = 0; i < NFILTERS; i++)
		snprintf(cfg.persistent[i], SCONF_NAME_MAX, "%s", filters[i].name);
	snprintf(cfg.persistent[i++], SCONF_NAME_MAX, "%s", NEVER_CREATED);
	cfg.nr_persistent = i;
	snprintf(dir, sizeof(dir), "%s/filters", state_dir);
}

static void snap_path(char *buf, size_t len, const char *name, const char *suffix)
{
	snprintf(buf, len, "%s/%s%s", dir, name, suffix);
}

static bool exists(const char *name, const char *suffix)
{
	char path[4300];

	snap_path(path, sizeof(path), name, suffix);
	return !access(path, F_OK);
}

/* Files in the folder whose names end in ".tmp". */
static int tmp_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		n += l >= 4 && !strcmp(e->d_name + l - 4, ".tmp");
	}
	closedir(d);
	return n;
}

static struct sieve_params params(int i)
{
	return (struct sieve_params){ .type = filters[i].type,
				      .flags = filters[i].flags | SIEVE_CREATE_SEED,
				      .capacity = filters[i].capacity, .fpp_ppb = FPP_1PCT,
				      .seed = 0xaf000 + i };
}

static int query(struct sieve_dev *d, int id, struct keyset *ks)
{
	return sieve_dev_batch(d, id, SIEVE_BATCH_QUERY, 0, ks->bytes, ks->lens, ks->n,
			       ks->results, NULL);
}

/* Keys whose answer differs from @want; -errno if the query fails. */
static long differ(struct sieve_dev *d, int id, struct keyset *ks, const uint8_t *want)
{
	long n = 0;
	uint32_t i;
	int err = query(d, id, ks);

	if (err)
		return err;
	for (i = 0; i < ks->n; i++)
		n += ks->results[i] != want[i];
	return n;
}

static uint64_t stat_get(atomic_uint_fast64_t *v)
{
	return atomic_load(v);
}

/* ---- save ---------------------------------------------------------------- */

static bool answers_write(const char *path, const struct answers *a)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fwrite(a, sizeof(*a), 1, f) == 1;

	if (f && fclose(f))
		ok = false;
	return ok;
}

static void file_modes(void)
{
	struct stat st;
	char path[4300];
	mode_t mode;
	int i, good = 0;

	for (i = 0; i < NFILTERS; i++) {
		snap_path(path, sizeof(path), filters[i].name, ".snap");
		good += !stat(path, &st) && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600 &&
			st.st_size > (off_t)sizeof(struct sieve_snapshot_header);
	}
	ktap_ok(good == NFILTERS, "STATE_DIR/filters/NAME.snap of each: a regular file, mode 0600 (%d of %d)",
		good, NFILTERS);
	mode = stat(dir, &st) ? 0 : st.st_mode;
	ktap_ok(S_ISDIR(mode) && (mode & 07777) == 0700,
		"STATE_DIR/filters is a folder of mode 0700 (%o)", (unsigned int)(mode & 07777));
	ktap_ok(tmp_files() == 0, "no temporary file left (%d)", tmp_files());
}

static int run_save(struct sieve_dev *d, const char *answers)
{
	struct sieve_params tp = params(0);
	struct sagent_stats st = { 0 };
	struct answers *a = calloc(1, sizeof(*a));
	struct sieve_info info;
	long fp;
	int i, id, err;

	ktap_begin("agent_filters save");
	for (i = 0; i < NFILTERS; i++) {
		struct sieve_params p = params(i);

		id = sieve_dev_create(d, filters[i].name, &p);
		err = id > 0 ? sieve_dev_batch(d, id, SIEVE_BATCH_ADD, 0, known->bytes, known->lens,
					       known->n, NULL, NULL) : id;
		ktap_ok(!err, "%s: created (%d), %u keys added (%s)", filters[i].name, id, NKEYS,
			errname(err));
		err = err ? err : query(d, id, known);
		memcpy(a->known[i], known->results, NKEYS);
		ktap_ok(!err && !memchr(a->known[i], 0, NKEYS), "%s: every key added answers present",
			filters[i].name);
		err = err ? err : query(d, id, unknown);
		memcpy(a->unknown[i], unknown->results, NKEYS);
		fp = 0;
		for (uint32_t k = 0; k < NKEYS; k++)
			fp += a->unknown[i][k];
		err = err ? err : sieve_dev_info(d, id, &info);
		ktap_ok(!err && fp < (long)NKEYS / 20,
			"%s: %u other keys queried, %ld false positives, %u layers (%s)",
			filters[i].name, NKEYS, fp, err ? 0 : info.nlayers, errname(err));
		a->inserted[i] = err ? 0 : info.inserted;
		a->nlayers[i] = err ? 0 : info.nlayers;
	}
	ktap_ok(a->nlayers[1] >= 2, "af.blocked grew to %u layers", a->nlayers[1]);
	id = sieve_dev_create(d, NOT_PERSISTENT, &tp);
	err = id > 0 ? sieve_dev_batch(d, id, SIEVE_BATCH_ADD, 0, known->bytes, known->lens, 1000,
				       NULL, NULL) : id;
	ktap_ok(!err, "%s (not listed persistent): created (%d)", NOT_PERSISTENT, id);
	ktap_ok(answers_write(answers, a), "answers recorded in %s", answers);

	err = sagent_filters_save(&cfg, &st);
	ktap_ok(!err && stat_get(&st.errors) == 0 && stat_get(&st.snapshot_saves) == NFILTERS,
		"sagent_filters_save -> %s, %llu saved, %llu errors (want 3 and 0)", errname(err),
		(unsigned long long)stat_get(&st.snapshot_saves),
		(unsigned long long)stat_get(&st.errors));
	file_modes();
	ktap_ok(!exists(NOT_PERSISTENT, ".snap") && !exists(NEVER_CREATED, ".snap"),
		"no snapshot of %s (not listed) nor of %s (listed, not in the module)",
		NOT_PERSISTENT, NEVER_CREATED);
	free(a);
	return ktap_end();
}

/* ---- restore ------------------------------------------------------------- */

static bool answers_read(const char *path, struct answers *a)
{
	FILE *f = fopen(path, "r");
	bool ok = f && fread(a, sizeof(*a), 1, f) == 1;

	if (f)
		fclose(f);
	return ok;
}

/* Filter @i is in the module with the answers and counters of the save run. */
static void check_same(struct sieve_dev *d, const struct answers *a, int i, const char *when)
{
	struct sieve_info info;
	long dk = -1, du = -1;
	int id = sieve_dev_lookup(d, filters[i].name), err;

	ktap_ok(id > 0, "%s: %s: in the module (%d)", when, filters[i].name, id);
	if (id <= 0)
		return;
	dk = differ(d, id, known, a->known[i]);
	du = differ(d, id, unknown, a->unknown[i]);
	ktap_ok(dk == 0 && du == 0,
		"%s: %s: the same answers for %u known and %u unknown keys (%ld and %ld differ)",
		when, filters[i].name, NKEYS, NKEYS, dk, du);
	err = sieve_dev_info(d, id, &info);
	ktap_ok(!err && info.geo.type == filters[i].type && info.nlayers == a->nlayers[i] &&
		info.inserted == a->inserted[i],
		"%s: %s: type, %u layers and %llu inserted as saved (%s)", when, filters[i].name,
		err ? 0 : info.nlayers, err ? 0ULL : (unsigned long long)info.inserted,
		errname(err));
}

static void check_restored(struct sieve_dev *d, const struct answers *a)
{
	struct sieve_list_entry *list = NULL;
	struct sagent_stats st = { 0 };
	int n, i, err;

	n = sieve_dev_list_all(d, &list);
	free(list);
	ktap_ok(n == 0, "the reloaded module holds no filter (%d)", n);
	err = sagent_filters_restore(&cfg, &st);
	ktap_ok(!err && stat_get(&st.errors) == 0, "sagent_filters_restore -> %s, %llu errors",
		errname(err), (unsigned long long)stat_get(&st.errors));
	for (i = 0; i < NFILTERS; i++)
		check_same(d, a, i, "restored");
	err = sieve_dev_lookup(d, NOT_PERSISTENT);
	ktap_ok(err == -ENOENT, "%s (not persistent) is not restored (%s)", NOT_PERSISTENT,
		errname(err));
	err = sieve_dev_lookup(d, NEVER_CREATED);
	ktap_ok(err == -ENOENT, "%s (listed, never saved) is not created (%s)", NEVER_CREATED,
		errname(err));
	n = sieve_dev_list_all(d, &list);
	free(list);
	ktap_ok(n == NFILTERS, "the module holds the 3 restored filters, no other (%d)", n);
}

/* A filter already in the module is left as it is, not replaced. */
static void check_second_restore(struct sieve_dev *d)
{
	struct sagent_stats st = { 0 };
	int ids[NFILTERS], i, same = 0, err, r;

	for (i = 0; i < NFILTERS; i++)
		ids[i] = sieve_dev_lookup(d, filters[i].name);
	r = sieve_dev_add(d, ids[0], MARKER, strlen(MARKER), 0);
	err = sagent_filters_restore(&cfg, &st);
	ktap_ok(!err && stat_get(&st.errors) == 0, "a second restore -> %s, %llu errors",
		errname(err), (unsigned long long)stat_get(&st.errors));
	for (i = 0; i < NFILTERS; i++)
		same += sieve_dev_lookup(d, filters[i].name) == ids[i];
	ktap_ok(same == NFILTERS && r == 0 &&
		sieve_dev_query(d, ids[0], MARKER, strlen(MARKER)) == 1,
		"the second restore left the filters alone (ids kept %d of 3, a key added since kept)",
		same);
}

/* A save writes each snapshot anew and renames it over the old file. */
static void check_resave(void)
{
	struct sagent_stats st = { 0 };
	ino_t before[NFILTERS] = { 0 };
	struct stat sb;
	char path[4300];
	int i, replaced = 0, fd, err;

	for (i = 0; i < NFILTERS; i++) {
		snap_path(path, sizeof(path), filters[i].name, ".snap");
		if (!stat(path, &sb))
			before[i] = sb.st_ino;
	}
	/* a temporary file a crash left, with the wrong mode */
	snap_path(path, sizeof(path), filters[2].name, ".snap.tmp");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		ktap_ok(write(fd, "stale", 5) == 5, "a stale temporary file planted");
		close(fd);
	}
	err = sagent_filters_save(&cfg, &st);
	ktap_ok(!err && stat_get(&st.errors) == 0 && stat_get(&st.snapshot_saves) == NFILTERS,
		"sagent_filters_save again -> %s, %llu saved, %llu errors", errname(err),
		(unsigned long long)stat_get(&st.snapshot_saves),
		(unsigned long long)stat_get(&st.errors));
	for (i = 0; i < NFILTERS; i++) {
		snap_path(path, sizeof(path), filters[i].name, ".snap");
		replaced += !stat(path, &sb) && before[i] && sb.st_ino != before[i];
	}
	ktap_ok(replaced == NFILTERS, "each snapshot replaced by a new file (%d of 3 new inodes)",
		replaced);
	file_modes();
}

/* Flips one byte in the middle of @name's snapshot. */
static int corrupt(const char *name)
{
	char path[4300];
	struct stat sb;
	uint8_t b;
	int fd, err = 0;

	snap_path(path, sizeof(path), name, ".snap");
	fd = open(path, O_RDWR);
	if (fd < 0 || fstat(fd, &sb))
		err = -errno;
	else if (pread(fd, &b, 1, sb.st_size / 2) != 1)
		err = -EIO;
	b ^= 0x5a;
	if (!err && pwrite(fd, &b, 1, sb.st_size / 2) != 1)
		err = -EIO;
	if (fd >= 0)
		close(fd);
	return err;
}

static void check_corrupted(struct sieve_dev *d, const struct answers *a)
{
	struct sagent_stats st = { 0 };
	int i, err, gone = 0;

	for (i = 0; i < NFILTERS; i++) {
		int id = sieve_dev_lookup(d, filters[i].name);

		gone += id > 0 && !sieve_dev_destroy(d, id);
	}
	err = corrupt(filters[0].name);
	ktap_ok(gone == NFILTERS && !err, "filters destroyed (%d), %s.snap corrupted (%s)", gone,
		filters[0].name, errname(err));
	/* the first listed, so that the others come after the failure */
	err = sagent_filters_restore(&cfg, &st);
	ktap_ok(err < 0 && stat_get(&st.errors) == 1,
		"restore with a corrupted snapshot -> %s, %llu errors (want one)", errname(err),
		(unsigned long long)stat_get(&st.errors));
	err = sieve_dev_lookup(d, filters[0].name);
	ktap_ok(err == -ENOENT && exists(filters[0].name, ".snap"),
		"%s: refused (%s), its file left as it was", filters[0].name, errname(err));
	for (i = 1; i < NFILTERS; i++)
		check_same(d, a, i, "beside a corrupted one");
}

/* Names that would leave the folder, or that the module refuses. */
static void check_bad_names(void)
{
	static const char *const bad[] = { "../escape", "a/b", "..", "", "bad name",
					   "a-name-longer-than-the-module-takes" };
	struct sconf_config c = cfg;
	struct sagent_stats st = { 0 };
	unsigned int i;
	int r, s;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		snprintf(c.persistent[i], SCONF_NAME_MAX, "%s", bad[i]);
	c.nr_persistent = i;
	r = sagent_filters_restore(&c, &st);
	s = sagent_filters_save(&c, &st);
	ktap_ok(r < 0 && s < 0 && stat_get(&st.errors) == 2 * i &&
		stat_get(&st.snapshot_saves) == 0 && tmp_files() == 0,
		"bad names refused by restore (%s) and save (%s): %llu errors (want %u)",
		errname(r), errname(s), (unsigned long long)stat_get(&st.errors), 2 * i);
}

static void cleanup(struct sieve_dev *d)
{
	struct sieve_list_entry *list = NULL;
	char path[4300];
	int n, i;

	n = sieve_dev_list_all(d, &list);
	for (i = 0; i < n; i++)
		sieve_dev_destroy(d, list[i].id);
	free(list);
	for (i = 0; i < NFILTERS; i++) {
		snap_path(path, sizeof(path), filters[i].name, ".snap");
		unlink(path);
	}
	rmdir(dir);
	rmdir(cfg.state_dir);
}

static int run_restore(struct sieve_dev *d, const char *answers)
{
	struct answers *a = calloc(1, sizeof(*a));

	ktap_begin("agent_filters restore");
	if (!answers_read(answers, a)) {
		printf("Bail out! %s: the save run's answers cannot be read\n", answers);
		return 1;
	}
	check_restored(d, a);
	check_second_restore(d);
	check_resave();
	check_corrupted(d, a);
	check_bad_names();
	cleanup(d);
	free(a);
	return ktap_end();
}

int main(int argc, char **argv)
{
	struct sieve_dev *d = NULL;
	int err, ret;

	if (argc != 4 || (strcmp(argv[1], "save") && strcmp(argv[1], "restore"))) {
		fprintf(stderr, "usage: %s save|restore STATE_DIR ANSWERS\n", argv[0]);
		return 2;
	}
	config_fill(argv[2]);
	known = keyset_make("af-known", 0, NKEYS);
	unknown = keyset_make("af-unknown", 0, NKEYS);
	err = sieve_dev_open(NULL, true, &d);
	if (err) {
		printf("KTAP version 1\nBail out! sieve_dev_open: %s\n", errname(err));
		return 1;
	}
	ret = !strcmp(argv[1], "save") ? run_save(d, argv[3]) : run_restore(d, argv[3]);
	sieve_dev_close(d);
	keyset_free(known);
	keyset_free(unknown);
	return ret;
}
