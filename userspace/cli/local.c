// SPDX-License-Identifier: GPL-2.0
/*
 * Commands on local, in-process filters (libsieve's sieve_local_*, the same
 * cores as the module): sizing, dedup and a false-positive measurement.
 * They need no device and no privileges.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_cli.h"
#include "json.h"

/* What the local commands take when not told: 1M keys at 1%, 1M queries. */
static void local_defaults(struct filter_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->params.capacity = 1000000;
	o->params.fpp_ppb = SIEVE_PPB / 100;
	o->queries = 1000000;
}

/* Why no filter of @type fits the options, in one line. */
static int plan_error(const struct sieve_params *p, int err)
{
	if (err == -E2BIG)
		return cli_error("%s: %llu keys at that rate need more than the %llu MiB a filter may hold",
				 filter_type_name(p->type), (unsigned long long)p->capacity,
				 (unsigned long long)(SIEVE_MAX_TABLE_BYTES >> 20));
	return cli_error("%s cannot reach a false-positive rate of %.3g%s",
			 filter_type_name(p->type), p->fpp_ppb / 1e9,
			 p->type == SIEVE_CUCKOO ? " (16-bit fingerprints reach 1.2e-4)" : "");
}

/* A local filter as the options ask (default type: blocked), and its plan. */
static int create_local(struct filter_opts *o, struct sieve_plan *plan, struct sieve_local **f)
{
	int err;

	if (!o->params.type)
		o->params.type = SIEVE_BLOCKED_BLOOM;
	err = sieve_local_plan(&o->params, plan);
	if (err)
		return plan_error(&o->params, err);
	err = sieve_local_create(&o->params, f);
	if (err)
		return cli_error("cannot create the filter: %s", strerror(-err));
	return EXIT_OK;
}

static void print_plan(const struct sieve_params *p, const struct sieve_plan *plan, bool json)
{
	const struct sieve_geometry *geo = &plan->geo;
	double bits_per_key = plan->table_bytes * 8.0 / p->capacity;

	if (json) {
		json_object(NULL);
		json_str("type", filter_type_name(geo->type));
		json_u64("capacity", p->capacity);
		json_double("target_fpr", "%.9g", p->fpp_ppb / 1e9);
		json_u64("nbits", geo->nbits);
		json_u64("nhashes", geo->nhashes);
		json_u64("nbuckets", geo->nbuckets);
		json_u64("fp_bits", geo->fp_bits);
		json_u64("table_bytes", plan->table_bytes);
		json_double("bits_per_key", "%.3f", bits_per_key);
		json_double("expected_fpr", "%.9g", plan->expected_fpr_ppb / 1e9);
		json_end();
		return;
	}
	if (geo->type == SIEVE_CUCKOO)
		printf("%-8s buckets=%-10llu fp_bits=%-6u", filter_type_name(geo->type),
		       (unsigned long long)geo->nbuckets, geo->fp_bits);
	else
		printf("%-8s bits=%-13llu hashes=%-7u", filter_type_name(geo->type),
		       (unsigned long long)geo->nbits, geo->nhashes);
	printf(" memory=%9.3f MiB  bits/key=%6.2f  expected-fpr=%.4g\n",
	       plan->table_bytes / 1048576.0, bits_per_key, plan->expected_fpr_ppb / 1e9);
}

static int cmd_size(const struct cli_command *cmd, int argc, char **argv)
{
	static const uint32_t all[] = { SIEVE_BLOOM, SIEVE_BLOCKED_BLOOM, SIEVE_CUCKOO };
	struct sieve_params p;
	struct sieve_plan plan;
	struct filter_opts o;
	struct cli_args a;
	unsigned int i, n, fit = 0;
	int ret, err = 0;

	local_defaults(&o);
	ret = cli_parse(cmd, argc, argv, &o, &a);
	if (ret >= 0)
		return ret;
	p = o.params;
	n = p.type ? 1 : 3;
	/* The types that fit are shown; if none does, one error line. */
	for (i = 0; i < n; i++) {
		p.type = o.params.type ? o.params.type : all[i];
		err = sieve_local_plan(&p, &plan);
		if (err)
			continue;
		if (a.json && !fit)
			json_array(NULL);
		print_plan(&p, &plan, a.json);
		fit++;
	}
	if (!fit) {
		p.type = o.params.type ? o.params.type : all[0];
		return plan_error(&p, sieve_local_plan(&p, &plan));
	}
	if (a.json)
		json_end();
	return EXIT_OK;
}

/* The next line of @in without its newline: its length, or -1 at the end. */
static ssize_t read_line(FILE *in, char **line, size_t *cap)
{
	ssize_t len = getline(line, cap, in);

	if (len > 0 && (*line)[len - 1] == '\n')
		(*line)[--len] = '\0';
	return len;
}

/*
 * Whether a line is new (1), seen (0) or could not be added (-1, reported).
 * The empty line is no key for libsieve: it is remembered aside.
 */
static int first_time(struct sieve_local *f, const char *line, size_t len, uint64_t lineno,
		      bool *empty_seen, uint64_t unique)
{
	int ret;

	if (!len) {
		ret = !*empty_seen;
		*empty_seen = true;
		return ret;
	}
	if (len > SIEVE_MAX_KEY_LEN) {
		cli_error("line %llu: longer than %u bytes", (unsigned long long)lineno,
			  SIEVE_MAX_KEY_LEN);
		return -1;
	}
	/* A cuckoo filter would otherwise spend a slot on each repeat. */
	ret = sieve_local_add(f, line, (uint32_t)len, SIEVE_ADD_IF_ABSENT);
	if (ret < 0) {
		cli_error("filter full after %llu unique lines: raise --capacity",
			  (unsigned long long)unique);
		return -1;
	}
	return !ret;
}

static void dedup_report(const struct sieve_local *f, const struct filter_opts *o,
			 uint64_t lines, uint64_t unique)
{
	struct sieve_info info;

	sieve_local_info(f, &info);
	if (o->verbose)
		fprintf(stderr, "sieve dedup: %llu lines, %llu unique, %s filter, fpr now %.3g\n",
			(unsigned long long)lines, (unsigned long long)unique,
			filter_type_name(info.geo.type), info.fpr_ppb / 1e9);
	if (unique > o->params.capacity)
		fprintf(stderr, "sieve dedup: warning: %llu unique lines exceed the capacity %llu: "
			"lines were dropped at a rate above the target\n",
			(unsigned long long)unique, (unsigned long long)o->params.capacity);
}

/*
 * Prints each line of the input the first time it is seen. Probabilistic:
 * a line that is new is dropped with the filter's false-positive rate.
 */
static int cmd_dedup(const struct cli_command *cmd, int argc, char **argv)
{
	uint64_t lines = 0, unique = 0;
	struct sieve_local *f = NULL;
	struct sieve_plan plan;
	struct filter_opts o;
	struct cli_args a;
	bool empty_seen = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *in = stdin;
	int ret;

	local_defaults(&o);
	ret = cli_parse(cmd, argc, argv, &o, &a);
	if (ret >= 0)
		return ret;
	if (a.nargs && strcmp(a.args[0], "-")) {
		in = fopen(a.args[0], "r");
		if (!in)
			return cli_error("%s: %s", a.args[0], strerror(errno));
	}
	ret = create_local(&o, &plan, &f);
	while (ret == EXIT_OK && (len = read_line(in, &line, &cap)) >= 0) {
		int fresh = first_time(f, line, (size_t)len, ++lines, &empty_seen, unique);

		if (fresh < 0) {
			ret = EXIT_ERROR;
		} else if (fresh) {
			unique++;
			fwrite(line, 1, len, stdout);
			fputc('\n', stdout);
		}
	}
	if (ret == EXIT_OK && ferror(in))
		ret = cli_error("reading input: %s", strerror(errno));
	if (ret == EXIT_OK)
		dedup_report(f, &o, lines, unique);
	sieve_local_destroy(f);
	free(line);
	if (in != stdin)
		fclose(in);
	return ret;
}

/* Key i of a synthetic set: 8 bytes, positives below n, negatives above. */
static uint32_t synthetic_key(uint64_t i, unsigned char *key)
{
	memcpy(key, &i, sizeof(i));
	return sizeof(i);
}

/* What a measurement found. */
struct measured {
	uint64_t false_neg, false_pos, full_at;
};

static void measure_keys(struct sieve_local *f, uint64_t capacity, uint64_t queries,
			 struct measured *m)
{
	unsigned char key[8];
	uint64_t i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < capacity; i++)
		if (sieve_local_add(f, key, synthetic_key(i, key), 0) < 0 && !m->full_at)
			m->full_at = i + 1;
	for (i = 0; i < capacity; i++)
		m->false_neg += sieve_local_query(f, key, synthetic_key(i, key)) != 1;
	for (i = 0; i < queries; i++)
		m->false_pos += sieve_local_query(f, key, synthetic_key(capacity + i, key)) == 1;
}

static void print_measured(const struct filter_opts *o, const struct sieve_plan *plan,
			   const struct sieve_info *info, const struct measured *m, bool json)
{
	uint64_t n = o->params.capacity;
	double measured = (double)m->false_pos / o->queries;
	double bits_per_key = plan->table_bytes * 8.0 / n;

	if (json) {
		json_object(NULL);
		json_str("type", filter_type_name(info->geo.type));
		json_u64("keys", n);
		json_u64("queries", o->queries);
		json_u64("false_negatives", m->false_neg);
		json_double("measured_fpr", "%.9g", measured);
		json_double("expected_fpr", "%.9g", plan->expected_fpr_ppb / 1e9);
		json_double("estimated_fpr", "%.9g", info->fpr_ppb / 1e9);
		json_u64("estimated_items", info->items);
		json_double("bits_per_key", "%.3f", bits_per_key);
		json_u64("full_at", m->full_at);
		json_end();
		return;
	}
	printf("%s: %llu keys, %.2f bits/key: false negatives %llu; false positives "
	       "%llu of %llu = %.4g (expected %.4g, estimated from the table %.4g); "
	       "items estimated %llu%s\n",
	       filter_type_name(info->geo.type), (unsigned long long)n, bits_per_key,
	       (unsigned long long)m->false_neg, (unsigned long long)m->false_pos,
	       (unsigned long long)o->queries, measured, plan->expected_fpr_ppb / 1e9,
	       info->fpr_ppb / 1e9, (unsigned long long)info->items,
	       m->full_at ? "; FULL before capacity" : "");
}

/*
 * Fills a local filter to its capacity with synthetic keys, checks that
 * every one is found, and measures the false-positive rate on keys never
 * added: what the sizing promised against what the filter does.
 */
static int cmd_measure(const struct cli_command *cmd, int argc, char **argv)
{
	struct sieve_local *f = NULL;
	struct sieve_plan plan;
	struct sieve_info info;
	struct filter_opts o;
	struct measured m;
	struct cli_args a;
	int ret;

	local_defaults(&o);
	ret = cli_parse(cmd, argc, argv, &o, &a);
	if (ret >= 0)
		return ret;
	if (o.queries > UINT64_MAX / 2 || o.params.capacity > UINT64_MAX / 2 - o.queries)
		return cli_usage_error(cmd, "capacity and query count too large");
	ret = create_local(&o, &plan, &f);
	if (ret)
		return ret;
	measure_keys(f, o.params.capacity, o.queries, &m);
	sieve_local_info(f, &info);
	print_measured(&o, &plan, &info, &m, a.json);
	ret = m.false_neg || m.full_at ? cli_error("the filter lost keys or filled early") : EXIT_OK;
	sieve_local_destroy(f);
	return ret;
}

static int set_queries(void *opts, const char *arg)
{
	struct filter_opts *o = opts;

	return parse_u64(arg, &o->queries) || !o->queries ? -EINVAL : 0;
}

static const struct cli_option opt_queries = {
	"queries", 'q', "QUERIES", "keys never added to query (default 1M)",
	.set = set_queries, .accepts = "a positive integer, e.g. 2M",
};
static const struct cli_option opt_verbose = {
	"verbose", 'v', NULL, "counts and the rate reached, on stderr",
	CLI_FLAG(struct filter_opts, verbose),
};

/* The sizing options of the local commands: the filter commands' own. */
#define LOCAL_SIZING	&opt_type, &opt_capacity, &opt_fpr, &opt_fpp

const struct cli_command size_command = {
	"size", "geometry and memory of a filter for a capacity and a false-positive rate",
	.details = "  Without --type, shows all three types. CAPACITY: keys (e.g. 1000000, 64M);\n"
		   "  FPR: target false-positive rate (e.g. 0.01 or 1%). Defaults: 1M keys, 1%.",
	.options = CLI_OPTIONS(LOCAL_SIZING, CLI_JSON_OPTIONS),
	.run = cmd_size,
};

const struct cli_command dedup_command = {
	"dedup", "print each input line the first time it is seen (local filter)",
	.args = "[FILE|-]", .max_args = 1,
	.details = "  Probabilistic: a new line is dropped with the filter's false-positive\n"
		   "  rate; a line seen before is never printed again. Default type: blocked.",
	.options = CLI_OPTIONS(LOCAL_SIZING, &opt_seed, &opt_verbose),
	.run = cmd_dedup,
};

const struct cli_command measure_command = {
	"measure", "fill a local filter with synthetic keys and measure its false-positive rate",
	.details = "  Adds CAPACITY keys, checks every one is found (exit 2 if not), then\n"
		   "  queries QUERIES keys never added. Default type: blocked.",
	.options = CLI_OPTIONS(LOCAL_SIZING, &opt_seed, &opt_queries, CLI_JSON_OPTIONS),
	.run = cmd_measure,
};
