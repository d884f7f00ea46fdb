// SPDX-License-Identifier: GPL-2.0
/*
 * The unit suite's runner: every case of every table becomes one cmocka
 * test. A case records its failed expectations (EXPECT_* from harness.h,
 * CHECKF from unit.h) and goes on; the cmocka test fails if it recorded
 * any, printing them.
 *
 * Usage: sieve-unit [-r RESULTS_FILE] [SUBSTRING]
 * Runs the cases whose name contains SUBSTRING (all by default), ends with
 * "N passed, N failed" and writes "N N" to RESULTS_FILE.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include "unit.h"

static void log_append(struct sieve_test *t, const char *fmt, va_list ap)
{
	int n;

	if (t->len >= sizeof(t->log) - 1)
		return;
	n = vsnprintf(t->log + t->len, sizeof(t->log) - t->len, fmt, ap);
	if (n > 0)
		t->len = t->len + n < sizeof(t->log) ? t->len + n : sizeof(t->log) - 1;
}

static void log_printf(struct sieve_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_append(t, fmt, ap);
	va_end(ap);
}

void sieve_test_fail(struct sieve_test *t, const char *file, int line,
		     const char *expr, long long a, long long b)
{
	t->nfail++;
	if (a != b)
		log_printf(t, "    %s:%d: failed: %s (a = %lld, b = %lld)\n", file, line, expr, a, b);
	else
		log_printf(t, "    %s:%d: failed: %s\n", file, line, expr);
}

void sieve_test_failf(struct sieve_test *t, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	t->nfail++;
	log_printf(t, "    %s:%d: failed: ", file, line);
	va_start(ap, fmt);
	log_append(t, fmt, ap);
	va_end(ap);
	log_printf(t, "\n");
}

void sieve_note(const char *fmt, ...)
{
	va_list ap;

	printf("    # ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void run_case(void **state)
{
	const struct sieve_test_case *c = *state;
	struct sieve_test *t = calloc(1, sizeof(*t));
	unsigned int nfail;

	assert_non_null(t);
	c->run(t);
	nfail = t->nfail;
	if (nfail) {
		fputs(t->log, stdout);
		if (t->len == sizeof(t->log) - 1)
			printf("    (more failures not shown)\n");
	}
	free(t);
	if (nfail)
		fail_msg("%u expectation(s) failed", nfail);
}

static const struct {
	const struct sieve_test_case *cases;
	const unsigned int *n;
} tables[] = {
	{ sieve_core_cases, &sieve_core_ncases },
	{ sieve_snapshot_cases, &sieve_snapshot_ncases },
	{ sieve_create_cases, &sieve_create_ncases },
	{ sieve_estimate_cases, &sieve_estimate_cases_n },
	{ sieve_sizing_cases, &sieve_sizing_cases_n },
	{ sieve_scale_cases, &sieve_scale_cases_n },
	{ sieve_fpr_cases, &sieve_fpr_cases_n },
	{ sieve_hash_cases, &sieve_hash_cases_n },
	{ sieve_libsieve_cases, &sieve_libsieve_cases_n },
	{ sieve_layers_cases, &sieve_layers_cases_n },
	{ sieve_feed_cases, &sieve_feed_cases_n },
	{ sieve_cpe_cases, &sieve_cpe_cases_n },
	{ sieve_build_cases, &sieve_build_cases_n },
	{ sieve_store_cases, &sieve_store_cases_n },
	{ sieve_blocked_cases, &sieve_blocked_cases_n },
	{ sieve_digest_cases, &sieve_digest_cases_n },
	{ sieve_metrics_cases, &sieve_metrics_cases_n },
	{ sieve_escape_cases, &sieve_escape_cases_n },
	{ sieve_fleet_cases, &sieve_fleet_cases_n },
	{ sieve_settings_cases, &sieve_settings_cases_n },
	{ sieve_http_cases, &sieve_http_cases_n },
	{ sieve_crowdsec_cases, &sieve_crowdsec_cases_n },
};

static int write_results(const char *path, unsigned int passed, unsigned int failed)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%u %u\n", passed, failed) < 0 || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

/*
 * Whether a case is one of those asked for: none of the !SUBSTRINGs, and
 * any SUBSTRING (all cases if there is none).
 */
static bool wanted(const char *name, char **filters, int nfilters)
{
	bool any = false, matched = false;
	int i;

	for (i = 0; i < nfilters; i++) {
		if (filters[i][0] == '!') {
			if (strstr(name, filters[i] + 1))
				return false;
			continue;
		}
		any = true;
		matched = matched || strstr(name, filters[i]);
	}
	return matched || !any;
}

int main(int argc, char **argv)
{
	const char *results = NULL;
	struct CMUnitTest *tests;
	unsigned int i, j, total = 0, n = 0;
	int failed, opt;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r') {
			fprintf(stderr, "usage: %s [-r RESULTS_FILE] [[!]SUBSTRING]...\n", argv[0]);
			return 2;
		}
		results = optarg;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (i = 0; i < ARRAY_SIZE(tables); i++)
		total += *tables[i].n;
	tests = calloc(total, sizeof(*tests));
	if (!tests)
		return 2;
	for (i = 0; i < ARRAY_SIZE(tables); i++) {
		for (j = 0; j < *tables[i].n; j++) {
			const struct sieve_test_case *c = &tables[i].cases[j];

			if (!wanted(c->name, argv + optind, argc - optind))
				continue;
			tests[n].name = c->name;
			tests[n].test_func = run_case;
			tests[n].initial_state = (void *)c;
			n++;
		}
	}
	if (!n) {
		fprintf(stderr, "no test matches '%s'\n", argv[optind]);
		free(tests);
		return 2;
	}
	failed = _cmocka_run_group_tests("sieve-unit", tests, n, NULL, NULL);
	free(tests);
	if (failed < 0 || (unsigned int)failed > n)
		failed = n;
	printf("%u passed, %d failed\n", n - failed, failed);
	if (results && write_results(results, n - failed, failed))
		return 2;
	return failed ? 1 : 0;
}
