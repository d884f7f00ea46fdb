// SPDX-License-Identifier: GPL-2.0
/*
 * parity: compares the parity report that sieve_test.ko computed inside the
 * VM's kernel (real <linux/jhash.h>, the cores in sieve.ko) with the same
 * report computed here by the userspace jhash port and libsieve.
 *
 * Usage: parity DIR     (reads DIR/sieve_parity.txt, written by the VM)
 *
 * Prints KTAP: one test that the kernel's report is there and complete,
 * one per group of values (see parity.h), one that the kernel reported no
 * group this side does not know. A missing or empty kernel report fails:
 * it means the comparison was never made. Exits 1 if anything failed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity.h"

#define KERNEL_REPORT	"sieve_parity.txt"
#define MAX_SHOWN	5

struct lines {
	char **v;
	unsigned int n, cap;
};

static void lines_add(struct lines *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v) {
			perror("parity");
			exit(2);
		}
	}
	l->v[l->n] = strdup(s);
	if (!l->v[l->n]) {
		perror("parity");
		exit(2);
	}
	l->n++;
}

struct user_out {
	struct parity_out out;
	struct lines lines;
};

static void user_emit(struct parity_out *out, const char *line)
{
	lines_add(&((struct user_out *)out)->lines, line);
}

/* Reads the kernel's report; missing lines and all, the tests say why. */
static int read_kernel(const char *dir, struct lines *l)
{
	char path[4096], buf[PARITY_LINE_MAX + 2];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, KERNEL_REPORT);
	fp = fopen(path, "r");
	if (!fp)
		return -errno;
	while (fgets(buf, sizeof(buf), fp)) {
		buf[strcspn(buf, "\r\n")] = '\0';
		lines_add(l, buf);
	}
	fclose(fp);
	return 0;
}

/* A line's group: its first two words. */
static size_t group_len(const char *line)
{
	const char *sp = strchr(line, ' ');

	if (!sp)
		return strlen(line);
	sp = strchr(sp + 1, ' ');
	return sp ? (size_t)(sp - line) : strlen(line);
}

static bool same_group(const char *a, const char *b)
{
	size_t n = group_len(a);

	return n == group_len(b) && !strncmp(a, b, n);
}

static bool is_value_line(const char *line)
{
	return strcmp(line, PARITY_HEADER) && strncmp(line, "end ", 4);
}

static unsigned int ntests;
static unsigned int nfailed;

static void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %u ", ok ? "ok" : "not ok", ++ntests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		nfailed++;
}

/* The kernel's report is complete if its header and end line are right. */
static void check_complete(const struct lines *k, int err, const char *dir)
{
	char end[64];

	if (err) {
		printf("# %s/%s: %s (did sieve_test.ko run in the VM?)\n",
		       dir, KERNEL_REPORT, strerror(-err));
		result(false, "parity: kernel report present");
		return;
	}
	if (!k->n) {
		printf("# %s/%s is empty\n", dir, KERNEL_REPORT);
		result(false, "parity: kernel report present");
		return;
	}
	snprintf(end, sizeof(end), "end lines=%u", k->n - 1);
	if (strcmp(k->v[0], PARITY_HEADER) || strcmp(k->v[k->n - 1], end)) {
		printf("# kernel report: first line '%s', last line '%s'; want '%s' ... '%s'\n",
		       k->v[0], k->v[k->n - 1], PARITY_HEADER, end);
		result(false, "parity: kernel report complete");
		return;
	}
	result(true, "parity: kernel report complete (%u lines)", k->n);
}

/* The index of the first line of @group at or after @i, or l->n. */
static unsigned int next_in_group(const struct lines *l, unsigned int i, const char *group)
{
	while (i < l->n && !same_group(l->v[i], group))
		i++;
	return i;
}

/* Compares one group, line by line, in order. */
static void check_group(const struct lines *k, const struct lines *u, const char *group)
{
	bool kernel_has = next_in_group(k, 0, group) < k->n;
	unsigned int ki = 0, ui = 0, nu = 0, shown = 0, diffs = 0;
	int glen = (int)group_len(group);

	if (!kernel_has)
		printf("# kernel: no values of this group\n");
	for (;;) {
		ki = next_in_group(k, ki, group);
		ui = next_in_group(u, ui, group);
		if (ki == k->n && ui == u->n)
			break;
		nu += ui < u->n;
		if (ki == k->n || ui == u->n || strcmp(k->v[ki], u->v[ui])) {
			diffs++;
			if (kernel_has && shown++ < MAX_SHOWN)
				printf("# kernel: %s\n#   user: %s\n",
				       ki < k->n ? k->v[ki] : "(missing)",
				       ui < u->n ? u->v[ui] : "(missing)");
		}
		ki += ki < k->n;
		ui += ui < u->n;
	}
	if (diffs)
		result(false, "parity: %.*s (%u of %u values differ)", glen, group, diffs, nu);
	else
		result(true, "parity: %.*s (%u values)", glen, group, nu);
}

/* Groups the kernel reported that this side does not compute. */
static void check_unknown(const struct lines *k, const struct lines *u)
{
	unsigned int i, j, unknown = 0;

	for (i = 0; i < k->n; i++) {
		if (!is_value_line(k->v[i]))
			continue;
		for (j = 0; j < u->n && !same_group(k->v[i], u->v[j]); j++)
			;
		if (j == u->n && unknown++ < MAX_SHOWN)
			printf("# kernel only: %s\n", k->v[i]);
	}
	result(!unknown && k->n, "parity: no kernel values without a userspace counterpart");
}

int main(int argc, char **argv)
{
	struct user_out user = { .out.emit = user_emit };
	struct lines kernel = { 0 };
	unsigned int i;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: parity DIR (holding %s from the VM)\n", KERNEL_REPORT);
		return 2;
	}
	err = parity_report(&user.out);
	if (err) {
		fprintf(stderr, "parity: %s\n", strerror(-err));
		return 2;
	}
	err = read_kernel(argv[1], &kernel);

	printf("KTAP version 1\n");
	check_complete(&kernel, err, argv[1]);
	for (i = 0; i < user.lines.n; i++) {
		const char *line = user.lines.v[i];
		unsigned int j;

		if (!is_value_line(line))
			continue;
		/* Only at the group's first line. */
		for (j = 0; j < i && !same_group(user.lines.v[j], line); j++)
			;
		if (j == i)
			check_group(&kernel, &user.lines, line);
	}
	check_unknown(&kernel, &user.lines);
	printf("1..%u\n", ntests);
	printf("# parity: %u passed, %u failed\n", ntests - nfailed, nfailed);
	return nfailed ? 1 : 0;
}
