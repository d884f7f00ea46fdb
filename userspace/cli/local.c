// SPDX-License-Identifier: GPL-2.0
/*
 * Subcommands on local, in-process filters: the same cores as the module,
 * compiled into libsieve. They need no device and no privileges.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "cli.h"

/* Options the local subcommands share. */
struct local_opts {
	uint32_t type;		/* 0: not given */
	uint64_t capacity;
	uint32_t rate_ppb;
	uint32_t seed;
	bool seed_given;
	bool json;
	bool verbose;
	uint64_t queries;
};

static const struct option local_long_opts[] = {
	{ "type", required_argument, NULL, 't' },
	{ "capacity", required_argument, NULL, 'n' },
	{ "fpp", required_argument, NULL, 'p' },
	{ "seed", required_argument, NULL, 's' },
	{ "queries", required_argument, NULL, 'q' },
	{ "json", no_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Returns -1 when parsing went through, else the exit code to end with. */
static int parse_local_opts(const struct cli_command *cmd, int argc, char **argv,
			    struct local_opts *o)
{
	int c;

	*o = (struct local_opts){ .capacity = 1000000, .rate_ppb = 10000000, .queries = 1000000 };
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:n:p:s:q:jvh", local_long_opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_filter_type(optarg, &o->type))
				return cli_usage_error(cmd, "unknown filter type '%s' (bloom, blocked, cuckoo)", optarg);
			break;
		case 'n':
			if (parse_u64(optarg, &o->capacity) || !o->capacity)
				return cli_usage_error(cmd, "bad capacity '%s': a positive integer, e.g. 1000000 or 64M", optarg);
			break;
		case 'p':
			if (parse_rate_ppb(optarg, &o->rate_ppb))
				return cli_usage_error(cmd, "bad false-positive rate '%s': between 1e-9 and 1, e.g. 0.01 or 1%%", optarg);
			break;
		case 's':
			if (parse_u32(optarg, &o->seed))
				return cli_usage_error(cmd, "bad seed '%s': an integer below 2^32", optarg);
			o->seed_given = true;
			break;
		case 'q':
			if (parse_u64(optarg, &o->queries) || !o->queries)
				return cli_usage_error(cmd, "bad query count '%s'", optarg);
			break;
		case 'j':
			o->json = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			printf("usage: %s\n", cmd->usage);
			return EXIT_OK;
		case ':':
			return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	return -1;
}

static int size_for(const struct local_opts *o, uint32_t type, struct sieve_geometry *geo)
{
	int err = sieve_size(type, o->capacity, o->rate_ppb, geo);

	if (err == -E2BIG)
		return cli_error("%s: %llu keys at that rate need more than the %llu MiB a filter may hold",
				 filter_type_name(type), (unsigned long long)o->capacity,
				 (unsigned long long)(SIEVE_MAX_TABLE_BYTES >> 20));
	if (err)
		return cli_error("%s cannot reach a false-positive rate of %.3g%s",
				 filter_type_name(type), o->rate_ppb / 1e9,
				 type == SIEVE_CUCKOO ? " (16-bit fingerprints reach 1.2e-4)" : "");
	geo->seed = o->seed_given ? o->seed : sieve_random_u32();
	return 0;
}

static void print_geometry(const struct local_opts *o, const struct sieve_geometry *geo,
			   uint64_t table_bytes, bool last)
{
	double bits_per_key = table_bytes * 8.0 / o->capacity;
	double expected = sieve_expected_fpr_ppb(geo, o->capacity) / 1e9;

	if (o->json) {
		printf("  {\"type\": \"%s\", \"capacity\": %llu, \"target_fpr\": %.9g, "
		       "\"nbits\": %llu, \"nhashes\": %u, \"nbuckets\": %llu, \"fp_bits\": %u, "
		       "\"table_bytes\": %llu, \"bits_per_key\": %.3f, \"expected_fpr\": %.9g}%s\n",
		       filter_type_name(geo->type), (unsigned long long)o->capacity, o->rate_ppb / 1e9,
		       (unsigned long long)geo->nbits, geo->nhashes, (unsigned long long)geo->nbuckets,
		       geo->fp_bits, (unsigned long long)table_bytes, bits_per_key, expected,
		       last ? "" : ",");
		return;
	}
	if (geo->type == SIEVE_CUCKOO)
		printf("%-8s buckets=%-10llu fp_bits=%-6u", filter_type_name(geo->type),
		       (unsigned long long)geo->nbuckets, geo->fp_bits);
	else
		printf("%-8s bits=%-13llu hashes=%-7u", filter_type_name(geo->type),
		       (unsigned long long)geo->nbits, geo->nhashes);
	printf(" memory=%9.3f MiB  bits/key=%6.2f  expected-fpr=%.4g\n",
	       table_bytes / 1048576.0, bits_per_key, expected);
}

static int cmd_size(int argc, char **argv)
{
	static const uint32_t all[] = { SIEVE_BLOOM, SIEVE_BLOCKED_BLOOM, SIEVE_CUCKOO };
	const struct cli_command *cmd = &local_commands[0];
	struct local_opts o;
	struct sieve_geometry geo;
	unsigned int i, n, last;
	int ret = parse_local_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (optind != argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	n = o.type ? 1 : 3;
	o.seed_given = true;	/* the seed plays no part in sizing */
	/* The last type that fits ends the JSON list; if none does, one error line. */
	for (i = 0, last = n; i < n; i++)
		if (!sieve_size(o.type ? o.type : all[i], o.capacity, o.rate_ppb, &geo))
			last = i;
	if (last == n)
		return size_for(&o, o.type ? o.type : all[0], &geo);
	if (o.json)
		printf("[\n");
	for (i = 0; i < n; i++) {
		uint64_t table_bytes;

		if (size_for(&o, o.type ? o.type : all[i], &geo))
			continue;
		sieve_geometry_check(&geo, &table_bytes);
		print_geometry(&o, &geo, table_bytes, i == last);
	}
	if (o.json)
		printf("]\n");
	return EXIT_OK;
}

static int create_local(const struct local_opts *o, struct sieve_filter **f)
{
	struct sieve_geometry geo;
	int err;

	if (size_for(o, o->type ? o->type : SIEVE_BLOCKED_BLOOM, &geo))
		return EXIT_ERROR;
	err = sieve_filter_create(&geo, f);
	if (err)
		return cli_error("cannot create the filter: %s", strerror(-err));
	return EXIT_OK;
}

/*
 * Prints each line of the input the first time it is seen. Probabilistic:
 * a line that is new is dropped with the filter's false-positive rate.
 */
static int cmd_dedup(int argc, char **argv)
{
	const struct cli_command *cmd = &local_commands[1];
	uint64_t lines = 0, unique = 0;
	struct sieve_filter *f = NULL;
	struct local_opts o;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *in = stdin;
	int ret = parse_local_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (argc - optind > 1)
		return cli_usage_error(cmd, "at most one input file");
	if (optind < argc && strcmp(argv[optind], "-")) {
		in = fopen(argv[optind], "r");
		if (!in)
			return cli_error("%s: %s", argv[optind], strerror(errno));
	}
	ret = create_local(&o, &f);
	while (ret == EXIT_OK && (len = getline(&line, &cap, in)) >= 0) {
		int added;

		if (len && line[len - 1] == '\n')
			len--;
		/* A cuckoo filter would otherwise spend a slot on each repeat. */
		added = sieve_filter_add_flags(f, line, (uint32_t)len, SIEVE_ADD_IF_ABSENT);
		if (added < 0) {
			ret = cli_error("filter full after %llu unique lines: raise --capacity",
					(unsigned long long)unique);
			break;
		}
		lines++;
		if (!added) {
			unique++;
			fwrite(line, 1, len, stdout);
			fputc('\n', stdout);
		}
	}
	if (ret == EXIT_OK && ferror(in))
		ret = cli_error("reading input: %s", strerror(errno));
	if (ret == EXIT_OK && o.verbose)
		fprintf(stderr, "sieve dedup: %llu lines, %llu unique, %s filter, fpr now %.3g\n",
			(unsigned long long)lines, (unsigned long long)unique,
			filter_type_name(f->geo.type), sieve_filter_fpr_ppb(f) / 1e9);
	if (ret == EXIT_OK && unique > o.capacity)
		fprintf(stderr, "sieve dedup: warning: %llu unique lines exceed the capacity %llu: "
			"lines were dropped at a rate above the target\n",
			(unsigned long long)unique, (unsigned long long)o.capacity);
	if (f)
		sieve_filter_destroy(f);
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

/*
 * Fills a local filter to its capacity with synthetic keys, checks that
 * every one is found, and measures the false-positive rate on keys never
 * added: what the sizing promised against what the filter does.
 */
static int cmd_measure(int argc, char **argv)
{
	const struct cli_command *cmd = &local_commands[2];
	uint64_t i, false_neg = 0, false_pos = 0, full_at = 0;
	struct sieve_filter *f = NULL;
	unsigned char key[8];
	struct local_opts o;
	int ret = parse_local_opts(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (optind != argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (o.queries > UINT64_MAX / 2 || o.capacity > UINT64_MAX / 2 - o.queries)
		return cli_usage_error(cmd, "capacity and query count too large");
	ret = create_local(&o, &f);
	if (ret)
		return ret;
	for (i = 0; i < o.capacity; i++)
		if (sieve_filter_add(f, key, synthetic_key(i, key)) < 0 && !full_at)
			full_at = i + 1;
	for (i = 0; i < o.capacity; i++)
		false_neg += !sieve_filter_contains(f, key, synthetic_key(i, key));
	for (i = 0; i < o.queries; i++)
		false_pos += sieve_filter_contains(f, key, synthetic_key(o.capacity + i, key));

	if (o.json)
		printf("{\"type\": \"%s\", \"keys\": %llu, \"queries\": %llu, "
		       "\"false_negatives\": %llu, \"measured_fpr\": %.9g, \"expected_fpr\": %.9g, "
		       "\"estimated_fpr\": %.9g, \"estimated_items\": %llu, \"bits_per_key\": %.3f, "
		       "\"full_at\": %llu}\n",
		       filter_type_name(f->geo.type), (unsigned long long)o.capacity,
		       (unsigned long long)o.queries, (unsigned long long)false_neg,
		       (double)false_pos / o.queries, sieve_expected_fpr_ppb(&f->geo, o.capacity) / 1e9,
		       sieve_filter_fpr_ppb(f) / 1e9,
		       (unsigned long long)sieve_filter_estimate_items(f),
		       f->table_bytes * 8.0 / o.capacity, (unsigned long long)full_at);
	else
		printf("%s: %llu keys, %.2f bits/key: false negatives %llu; false positives "
		       "%llu of %llu = %.4g (expected %.4g, estimated from the table %.4g); "
		       "items estimated %llu%s\n",
		       filter_type_name(f->geo.type), (unsigned long long)o.capacity,
		       f->table_bytes * 8.0 / o.capacity, (unsigned long long)false_neg,
		       (unsigned long long)false_pos, (unsigned long long)o.queries,
		       (double)false_pos / o.queries, sieve_expected_fpr_ppb(&f->geo, o.capacity) / 1e9,
		       sieve_filter_fpr_ppb(f) / 1e9,
		       (unsigned long long)sieve_filter_estimate_items(f),
		       full_at ? "; FULL before capacity" : "");
	ret = false_neg || full_at ? cli_error("the filter lost keys or filled early") : EXIT_OK;
	sieve_filter_destroy(f);
	return ret;
}

#define LOCAL_COMMON "[-t bloom|blocked|cuckoo] [-n CAPACITY] [-p FPR] [-s SEED]"

const struct cli_command local_commands[] = {
	{ "size", "geometry and memory of a filter for a capacity and a false-positive rate",
	  "sieve size [-j] [-t TYPE] [-n CAPACITY] [-p FPR]\n"
	  "  Without -t, shows all three types. CAPACITY: keys (e.g. 1000000, 64M);\n"
	  "  FPR: target false-positive rate (e.g. 0.01 or 1%). Defaults: 1M keys, 1%.",
	  cmd_size },
	{ "dedup", "print each input line the first time it is seen (local filter)",
	  "sieve dedup [-v] " LOCAL_COMMON " [FILE|-]\n"
	  "  Probabilistic: a new line is dropped with the filter's false-positive\n"
	  "  rate; a line seen before is never printed again. Default type: blocked.",
	  cmd_dedup },
	{ "measure", "fill a local filter with synthetic keys and measure its false-positive rate",
	  "sieve measure [-j] " LOCAL_COMMON " [-q QUERIES]\n"
	  "  Adds CAPACITY keys, checks every one is found (exit 2 if not), then\n"
	  "  queries QUERIES keys never added. Default type: blocked.",
	  cmd_measure },
};
const unsigned int local_ncommands = sizeof(local_commands) / sizeof(local_commands[0]);
